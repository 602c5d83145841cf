"""newuser107: a home lab of 2 x RTX 3090 (PCIe 4.0 x8/x8) on an AM4 Ryzen 9 5950X with 128 GiB of DDR4-3200.

1. The catalog had no DDR4 desktop CPU: the machine's cores were "unknown" (its 16 Zen 3 cores without VNNI bound
   the decode of Qwen3-235B at q2_k, 9.78 tokens/s, not the 12.33 of its memory alone).
2. 256 GiB on the desktop's two DDR4 channels was taken (the DDR5 slot check only): unbuffered DDR4 DIMMs stop at
   32 GB, so four slots hold 128 GiB.
3. The estimate said nothing of what a third GPU or more RAM would give: ``upgrades`` (JSON) and ``upgrade`` lines.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator import catalog
from generator.api import plan_file
from generator.calculator.machine import FixedSpec
from generator.calculator.upgrade_options import MOST_GPUS, changed_machines, upgrade_text
from generator.catalog.dimms import dimm_sizes_gib
from generator.errors import InputError
from generator.planner.plan import Plan
from generator.workload import load_workload
from tests.conftest import REPO
from tests.helpers import estimate_json, run_estimate

BOX = ("--gpu", "rtx-3090-24gb", "--gpus", "2", "--context", "16384", "--input-tokens", "1000", "--output-tokens", "300")
QWEN = ("Qwen/Qwen3-235B-A22B", "--precision", "q4_k_m")


def test_ddr4_desktop_cpu_is_catalogued_with_its_slots() -> None:
    cpu = catalog.cpus()["ryzen-9-5950x"]
    assert (cpu.cores, cpu.memory_channels, cpu.ddr_mt_per_s, cpu.ddr_generation) == (16, 2, 3200, "ddr4")
    assert cpu.int8_vnni is False  # Zen 3: llama.cpp's cores at the rate without VNNI
    assert max(dimm_sizes_gib(cpu)) == 32  # unbuffered DDR4
    assert max(dimm_sizes_gib(catalog.cpus()["ryzen-9-7950x"])) == 64  # DDR5 desktops unchanged


def test_256_gib_on_two_ddr4_channels_is_refused() -> None:
    code, _ = run_estimate(*QWEN, *BOX, "--cpu", "ryzen-9-5950x", "--ram-gib", "256")
    assert code == 1
    ok = estimate_json(*QWEN, *BOX, "--cpu", "ryzen-9-5950x", "--ram-gib", "128")
    assert ok["offload"]["fits"]
    # its 16 Zen 3 cores are counted, and its x16 split x8/x8 for the two cards
    assert "16 cores" in ok["machine"]["bandwidths"] and "PCIe Gen4 x8" in ok["machine"]["bandwidths"]


def test_upgrades_on_the_am4_box() -> None:
    data = estimate_json(*QWEN, *BOX, "--cpu", "ryzen-9-5950x", "--ram-gib", "128")
    gpu, ram = data["upgrades"]
    now = data["throughput"]["decode_tokens_per_s"]
    # a third card holds more expert layers: fewer bytes read from DDR4 a token, so faster
    assert gpu["change"].startswith("one more GPU (3 x rtx-3090-24gb)") and gpu["fits"]
    assert gpu["decode_tokens_per_s"] > now * 1.1
    assert gpu["ram_weights_bytes"] < data["offload"]["bytes"]["cpu"]
    assert "at most 2 from its own PCIe lanes" in gpu["note"]  # the third slot is the chipset's: said
    # 256 GiB cannot go into an AM4 board
    assert ram["possible"] is False and "128 GiB" in ram["why"]


def test_most_gpus_is_the_schemas_gpu_count_maximum() -> None:
    """One more GPU is offered up to ``hardware.fixed.gpu_count``'s maximum, the most a machine is given."""
    schema = json.loads((REPO / "schemas" / "workload.schema.json").read_text(encoding="utf-8"))
    fixed = schema["properties"]["hardware"]["properties"]["fixed"]["properties"]
    assert fixed["gpu_count"]["maximum"] == MOST_GPUS
    spec = FixedSpec(gpu="rtx-3090-24gb", gpu_count=MOST_GPUS, ram_gib=128)
    assert [change for change, _ in changed_machines(spec)] == ["twice the RAM (256 GiB)"]
    fewer = [change for change, _ in changed_machines(spec._replace(gpu_count=MOST_GPUS - 1))]
    assert fewer == [f"one more GPU ({MOST_GPUS} x rtx-3090-24gb)", "twice the RAM (256 GiB)"]


def test_more_ram_that_changes_nothing_says_so() -> None:
    data = estimate_json(*QWEN, *BOX, "--cpu", "threadripper-pro-5975wx", "--ram-gib", "256")
    ram = data["upgrades"][1]
    assert ram["fits"] and ram["decode_tokens_per_s"] == data["throughput"]["decode_tokens_per_s"]
    _, text = run_estimate(*QWEN, *BOX, "--cpu", "threadripper-pro-5975wx", "--ram-gib", "256")
    assert "  upgrade      twice the RAM (512 GiB): decode " in text
    assert "no faster: nothing the change adds is what bounds the decode" in text


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        (
            {"change": "one more GPU (3 x g)", "possible": True, "fits": True, "decode_tokens_per_s": 7.5,
             "ttft_s": 10.6, "bound": "ddr", "precision": "q4_k_m"},
            "one more GPU (3 x g): decode 5.00 -> 7.50 tokens/s (1.50x; ddr-bound), TTFT 12.00 -> 10.60 s, at q4_k_m",
        ),
        (  # within 0.5% of the decode now: no gain, whatever the TTFT does; the note (a slot the CPU lacks) last
            {"change": "one more GPU (3 x g)", "possible": True, "fits": True, "decode_tokens_per_s": 5.02,
             "ttft_s": 9.0, "bound": "ddr", "precision": "q4_k_m", "note": "no slot"},
            "one more GPU (3 x g): decode 5.00 -> 5.02 tokens/s (no faster: nothing the change adds is what bounds the "
            "decode; ddr-bound), TTFT 12.00 -> 9.00 s, at q4_k_m (no slot)",
        ),
        (  # just past 0.5%: a gain, said as a ratio
            {"change": "twice the RAM (256 GiB)", "possible": True, "fits": True, "decode_tokens_per_s": 5.03,
             "ttft_s": 12.0, "bound": "gpu", "precision": "q2_k"},
            "twice the RAM (256 GiB): decode 5.00 -> 5.03 tokens/s (1.01x; gpu-bound), TTFT 12.00 -> 12.00 s, at q2_k",
        ),
        (
            {"change": "twice the RAM (256 GiB)", "possible": False, "fits": False, "why": "slots"},
            "twice the RAM (256 GiB): not possible: slots",
        ),
        (
            {"change": "twice the RAM (64 GiB)", "possible": True, "fits": False, "why": "too big"},
            "twice the RAM (64 GiB): the model still does not run: too big",
        ),
    ],
)  # fmt: skip
def test_upgrade_text(row: dict[str, object], expected: str) -> None:
    assert upgrade_text(row, 5.0, 12.0) == expected


VLLM_70B = ("meta-llama/Llama-3.3-70B-Instruct", "--precision", "int4", "--gpu", "rtx-3090-24gb", "--tp", "2",
            "--context", "8192")  # fmt: skip


def test_a_larger_memory_fraction_is_offered_where_it_starts_vllm() -> None:
    """Item 4: 70B int4 on 2 x 3090 at vLLM's 0.9 is refused; 0.95 starts it, and the remedy says so first."""
    log = estimate_json(*VLLM_70B)["capacity"]["vllm_log"]
    assert not log["starts"]
    assert log["utilization_starts"]["gpu_memory_utilization"] == 0.95
    # the smallest fraction tried that starts it: 0.92 is refused too
    assert not estimate_json(*VLLM_70B, "--gpu-memory-utilization", "0.92")["capacity"]["vllm_log"]["starts"]
    at = estimate_json(*VLLM_70B, "--gpu-memory-utilization", "0.95")["capacity"]
    assert at["vllm_log"]["starts"] and at["kv_cache_tokens"] == log["utilization_starts"]["kv_cache_tokens"]
    _, text = run_estimate(*VLLM_70B)
    assert "0.40 GiB is available; --gpu-memory-utilization 0.95 (it starts, " in text
    # asked at 0.95 already, nothing above it is offered
    refused = estimate_json(*VLLM_70B, "--context", "32768", "--gpu-memory-utilization", "0.95")
    assert "utilization_starts" not in refused["capacity"]["vllm_log"]


CORES_WORKLOAD = """\
version: 1
name: homelab-cores
deployments:
  - name: qwen235
    model: Qwen/Qwen3-235B-A22B
    inference:
      precision: q2_k
      max_context_tokens: 16384
      avg_input_tokens: 1500
      avg_output_tokens: 500
      requests_per_second: 0.005
hardware:
  provider: baremetal
  fixed:
    gpu: rtx-3090-24gb
    gpu_count: 2
    ram_gib: 128
    memory_channels: 2
    ddr_mt_per_s: 3200
{extra}"""


def _plan(tmp_path: Path, extra: str) -> Plan:
    path = tmp_path / "w.yaml"
    path.write_text(CORES_WORKLOAD.format(extra=extra))
    return plan_file(str(path))[1]


def test_fixed_cpu_cores_counts_an_uncatalogued_cpu(tmp_path: Path) -> None:
    """Item 5: a workload had no way to give the cores of a CPU the catalog lacks (the estimate's --cpu-cores)."""
    without, given = _plan(tmp_path, ""), _plan(tmp_path, "    cpu_cores: 4\n")
    assert any(f.code == "cpu-cores-unknown" for f in without.findings)
    assert not any(f.code == "cpu-cores-unknown" for f in given.findings)
    assert given.pools[0].node.cpu_cores == 4
    reasons = " ".join(given.deployments[0].reasons)
    assert "4 cores for llama.cpp's threads" in reasons and "cpu-cores-bound" in reasons
    # the same machine's estimate agrees
    est = estimate_json("Qwen/Qwen3-235B-A22B", "--precision", "q2_k", "--gpu", "rtx-3090-24gb", "--gpus", "2",
                        "--ram-gib", "128", "--memory-channels", "2", "--ddr-mt-per-s", "3200", "--cpu-cores", "4",
                        "--reserved-ram-gib", "8", "--context", "16384", "--input-tokens", "1500",
                        "--output-tokens", "500")  # fmt: skip
    assert est["throughput"]["bound"] == "cpu-cores"


def test_fixed_cpu_cores_with_a_catalog_cpu_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(CORES_WORKLOAD.format(extra="    cpu: ryzen-9-5950x\n    cpu_cores: 12\n"))
    with pytest.raises(InputError, match=r"cpu_cores is for a CPU the catalog lacks: cpu ryzen-9-5950x") as caught:
        load_workload(str(path))
    assert "w.yaml:21:16" in str(caught.value)


def test_detect_writes_the_cores_of_a_cpu_the_catalog_lacks() -> None:
    """Item 5: `specgen detect` gives a CPU the catalog lacks as cpu_cores (one socket's), a catalog one as cpu."""
    from generator.calculator.detect import detect_machine, fixed_block
    from tests.test_detect import fixture

    gold = detect_machine(fixture("xeon-gold-6248-4xv100"))  # 2 x Xeon Gold 6248, not catalogued: 8 cores seen
    assert gold["cpu_cores"].value == 4 and "cpu" not in gold
    assert "    cpu_cores: 4              # measured: /proc/cpuinfo core ids, one socket's" in fixed_block(gold)
    desktop = detect_machine(fixture("desktop-4090"))  # an i9-14900K: its record counts the cores
    assert "cpu_cores" not in desktop and desktop["cpu"].value == "core-i9-14900k"
