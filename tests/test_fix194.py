"""fix194: follow-ups of fix192 / fix193 (newuser107, newuser108).

1. A ``hardware.fixed`` plan's reasons gave the prefill rate without what bounds it, while ``specgen estimate`` named
   it: both now say the prompt with :func:`generator.calculator.prefill_bound.prompt_prefill_text` (one text), and the
   plan's details carry the estimate's ``prefill_bound`` / ``prefill_seconds``.
2. ``specgen detect`` wrote no ``host_name`` (since fix192 the Ansible inventory's host): it writes the machine's host
   name (``Sources.host_name``, injected here) where the schema takes it, and says how to set ``address``.
3. ``estimate --train`` without ``--gradient-checkpointing`` took full where a plan sizes the job at the fastest level
   that fits (fix193 said it beside): the estimate now takes the plan's rule
   (:func:`generator.calculator.lighter_checkpointing.planned_checkpointing`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from generator.api import render_file
from generator.calculator.detect import Sources, detect_machine, fixed_block, host_name_facts, recorded
from generator.calculator.prefill_bound import prompt_prefill_text
from tests.conftest import REPO
from tests.helpers import ansible_reader, estimate_json, load_errors, run_estimate

EXAMPLE = REPO / "examples" / "home-2x3090-moe.yaml"


def _plan_deployment() -> dict[str, object]:
    plan = json.loads(render_file(str(EXAMPLE))["spec.json"])["plan"]
    return plan["deployments"][0]  # type: ignore[no-any-return]


def _prompt_said(text: str) -> str:
    """``1,500 prompt tokens (prefill ... )`` from a line that says a TTFT."""
    found = re.search(r"TTFT [0-9.]+ m?s for (\S+ prompt tokens \(prefill .*?\)); cold start", text)
    assert found, text
    return found.group(1)


def test_the_fixed_plan_says_what_bounds_the_prefill() -> None:
    dep = _plan_deployment()
    details = dep["details"]
    assert isinstance(details, dict)
    assert details["prefill_bound"] == "pcie"
    assert details["prefill_seconds"] == {"gpu-compute": 1.304, "pcie": 3.331}
    reason = next(r for r in dep["reasons"] if r.startswith("decode "))  # type: ignore[attr-defined]
    assert _prompt_said(reason) == (
        "1,500 prompt tokens (prefill 323.57 tokens/s at -ub 2048; pcie-bound: 3.33 s copying the weights held in RAM "
        "to the GPUs over PCIe, 1.30 s GPU compute)"
    )
    assert _prompt_said(reason) == prompt_prefill_text(details)


def test_the_plan_and_the_estimate_say_the_prompt_alike() -> None:
    """The same machine, model and precision: the plan's reason and the estimate's speed line, word for word."""
    reason = next(r for r in _plan_deployment()["reasons"] if r.startswith("decode "))  # type: ignore[attr-defined]
    code, text = run_estimate(
        "Qwen/Qwen3-235B-A22B", "--precision", "q2_k", "--gpu", "rtx-3090-24gb", "--gpus", "2", "--cpu", "ryzen-9-5950x",
        "--ram-gib", "128", "--ddr-mt-per-s", "3200", "--context", "16384", "--input-tokens", "1500",
        "--output-tokens", "500",
    )  # fmt: skip
    assert code == 0, text
    assert _prompt_said(text) == _prompt_said(reason)


def test_no_prompt_parts_no_bound() -> None:
    figures = {"ttft_prompt_tokens": 800, "prefill_tokens_per_s": 468.0234, "ubatch_tokens": 1024}
    assert prompt_prefill_text(figures) == "800 prompt tokens (prefill 468.02 tokens/s at -ub 1024)"


DETECT = REPO / "tests" / "data" / "detect" / "desktop-4090"


def _detected(host_name: str | None) -> str:
    """The block detect writes for the recorded RTX 4090 desktop, its host name ``host_name``."""
    commands = {p.stem: p.read_text() for p in (DETECT / "commands").glob("*.txt")}
    return fixed_block(detect_machine(Sources(str(DETECT / "root"), recorded(commands), host_name=host_name)))


@pytest.mark.parametrize(
    ("given", "written"),
    [("gpubox", "gpubox"), ("GPUBox.lan", "gpubox"), ("ws-01.corp.example.com", "ws-01"), ("my_box", None), ("", None)],
)
def test_detect_writes_the_host_name_the_schema_takes(given: str, written: str | None) -> None:
    facts = host_name_facts(given)
    assert (facts["host_name"].value if "host_name" in facts else None) == written
    block = YAML(typ="safe").load(_detected(given))["hardware"]["fixed"]
    assert block.get("host_name") == written
    if given == "my_box":  # said, not written: a pasted block never fails
        assert "# host_name not written: my_box (measured: this machine's host name; not a DNS label" in _detected(given)


def test_detect_says_how_to_set_the_address() -> None:
    text = _detected("GPUBox.lan")
    assert (
        "# address: Ansible connects to gpubox by that name; where it does not resolve from the machine that runs "
        "Ansible, add address: beside host_name: this machine's IP address (hostname -I lists them) or DNS name "
        "('GPUBox.lan' where it resolves)"
    ) in text
    assert "address:" not in YAML(typ="safe").load(text)["hardware"]["fixed"]  # no address is guessed
    assert "# host_name / address: add host_name: (a DNS label)" in _detected(None)


def test_a_detected_block_with_its_host_name_is_a_workload_host(tmp_path: Path) -> None:
    """Round trip: the block pasted under a workload's hardware (provider added) loads, and names the Ansible host."""
    block = _detected("GPUBox.lan").replace("\nhardware:\n", "\nhardware:\n  provider: baremetal\n", 1)
    block = block.replace("    host_name: gpubox", "    address: 192.168.1.20\n    host_name: gpubox")  # as advised
    source = (REPO / "examples" / "home-70b-offload.yaml").read_text()
    workload = tmp_path / "w.yaml"
    workload.write_text(source[: source.index("\nhardware:") + 1] + block[block.index("\nhardware:") + 1 :])
    assert load_errors(workload) == []
    files = render_file(str(workload))
    inventory = ansible_reader().load(files["ansible/inventory.yml"])
    hosts = next(group["hosts"] for group in inventory["all"]["children"].values() if "hosts" in group)
    assert list(hosts) == ["gpubox"] and hosts["gpubox"]["ansible_host"] == "192.168.1.20"
    assert "ansible/hosts.yml.example" not in files


# 3. The estimate's default checkpointing is the plan's: of the levels that fit the GPU, the fastest.
CPT_8B = ("meta-llama/Llama-3.1-8B", "--train", "full", "--framework", "megatron", "--gpu", "h100-sxm5-80gb", "--gpus",
          "64", "--tp", "2", "--zero", "1", "--seq-len", "8192", "--dataset-tokens", "200000000000")  # fmt: skip
OFFLOADED = ("meta-llama/Llama-3.1-8B-Instruct", "--train", "full", "--zero", "3", "--gpu", "h100-sxm5-80gb", "--gpus",
             "8", "--seq-len", "8192", "--micro-batch", "1", "--activation-offload")  # fmt: skip


def test_the_estimate_sizes_the_plans_level_where_none_is_given() -> None:
    """newuser108: 9,118 GPU-hours at full where the job fits without recomputation: now 6,929 at none."""
    data = estimate_json(*CPT_8B)
    assert data["training"]["checkpointing"] == "none"
    assert data["training_speed"]["run"]["gpu_hours"] == pytest.approx(6929.05)
    assert "lighter_checkpointing" not in data["training_speed"]  # said beside full before: now the answer itself


def test_the_fastest_fitting_level_is_taken_not_the_least_recompute() -> None:
    """With activation offload, none's 2.09 s of copies (0.98 s exposed) outlast full's recomputation: full stays."""
    data = estimate_json(*OFFLOADED)
    assert data["training"]["checkpointing"] == "full" and "checkpointing_chosen" not in data["training"]
    none = estimate_json(*OFFLOADED, "--gradient-checkpointing", "none")
    assert none["capacity"]["fits"]
    assert none["training_speed"]["tokens_per_second_per_gpu"] < data["training_speed"]["tokens_per_second_per_gpu"]
    # fix195: the default's answer also says why none was passed over (slower); the rest is the answer at full
    passed = data["training"].pop("checkpointing_passed_over")
    assert [entry["level"] for entry in passed] == ["none", "selective"] and all(entry["fits"] for entry in passed)
    assert data == estimate_json(*OFFLOADED, "--gradient-checkpointing", "full")


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("meta-llama/Llama-3.1-8B", "--train", "full"), id="no-gpu"),  # nothing sets what fits
        pytest.param(
            ("meta-llama/Llama-3.1-8B", "--train", "lora", "--framework", "torchtune", "--gpu", "rtx-4090-24gb"),
            id="framework-own-full",
        ),
    ],
)
def test_full_stays_where_nothing_chooses_another(args: tuple[str, ...]) -> None:
    data = estimate_json(*args)
    assert data["training"]["checkpointing"] == "full" and "checkpointing_chosen" not in data["training"]


def test_each_fitting_change_is_sized_at_its_own_level() -> None:
    """A job that fits at no level lists the changes that make it fit, each as its own estimate would size it."""
    over = ("meta-llama/Llama-3.1-8B-Instruct", "--train", "full", "--gpu", "gaudi3-128gb", "--gpus", "8")
    result = estimate_json(*over, "--framework", "megatron")
    assert result["training"]["checkpointing"] == "full" and not result["capacity"]["fits"]
    (zero1,) = [c for c in result["capacity"]["fits_with"] if c["flags"] == "--zero 1"]
    again = estimate_json(*over, "--framework", "megatron", "--zero", "1")
    assert again["training"]["checkpointing"] == "none"  # 61.57 GiB at full: 72.93 GiB, 14,644 tokens/s at none
    assert zero1["per_gpu_bytes"] == again["memory"]["per_gpu"]["total"]
