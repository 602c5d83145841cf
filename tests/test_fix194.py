"""fix194: follow-ups of fix192 / fix193 (newuser107, newuser108).

1. A ``hardware.fixed`` plan's reasons gave the prefill rate without what bounds it, while ``specgen estimate`` named
   it: both now say the prompt with :func:`generator.calculator.prefill_bound.prompt_prefill_text` (one text), and the
   plan's details carry the estimate's ``prefill_bound`` / ``prefill_seconds``.
2. ``specgen detect`` wrote no ``host_name`` (since fix192 the Ansible inventory's host): it writes the machine's host
   name (``Sources.host_name``, injected here) where the schema takes it, and says how to set ``address``.
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
from tests.helpers import ansible_reader, load_errors, run_estimate

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
