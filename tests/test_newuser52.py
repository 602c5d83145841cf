"""newuser52 (AMD Instinct against NVIDIA): items 2, 4, 6 and 7 (item 1, validate's rack power advice, is in
tests/test_rack_circuit_checks.py and tests/test_rack_scale.py).

Item 2: a precision AMD GPUs do not serve was told to allow more memory or int4, which they refuse too. Item 4: ND
MI300X v5's vCPUs, physical cores, were counted two a core. Item 6: an
MI325X service was told both that MI300-series runs measured its setup and that no run checked its GPU. Item 7: the
estimate's wide-TP warning named an NVLink domain on an MI300X.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.errors import InfeasibleError
from generator.planner import plan_workload
from generator.workload import load_workload
from tests.helpers import estimate_json

SERVICE = """\
version: 1
name: amd
deployments:
  - name: chat
    model: MODEL
    inference: {precision: PRECISION, max_context_tokens: 8192, avg_input_tokens: 1000, avg_output_tokens: 300,
                requests_per_second: 2, slo: {ttft_p95_ms: 3000, tpot_ms: 60}}
hardware:
  provider: baremetal
  gpus: [mi325x-256gb]
"""


def _write(tmp_path: Path, model: str, precision: str) -> str:
    path = tmp_path / "w.yaml"
    path.write_text(SERVICE.replace("MODEL", model).replace("PRECISION", precision), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("precision", ["int8", "int4"])
def test_a_precision_amd_gpus_do_not_serve_is_told_to_change_it(tmp_path: Path, precision: str) -> None:
    with pytest.raises(InfeasibleError) as err:
        plan_workload(load_workload(_write(tmp_path, "meta-llama/Llama-3.3-70B-Instruct", precision)))
    assert str(err.value).endswith(
        "to unblock: a precision these GPUs serve (inference.precision; each reason above names what the engine "
        f"lacks), or allow a GPU that serves {precision}"
    )


def test_an_mi325x_service_is_said_measured_by_its_architectures_runs_only(tmp_path: Path) -> None:
    plan = plan_workload(load_workload(_write(tmp_path, "meta-llama/Llama-3.1-405B-Instruct", "fp8")))
    codes = {f.code for f in plan.findings}
    assert "throughput-gap" in codes and "throughput-unchecked" not in codes


def test_the_wide_tp_warning_names_no_nvlink_on_amd() -> None:
    notes = estimate_json(
        "deepseek-ai/DeepSeek-R1", "--gpu", "mi300x-192gb", "--tp", "16", "--precision", "fp8", "--context", "8192"
    )["notes"]
    (wide,) = [n for n in notes if "spans" in n]
    assert "NVLink" not in wide and "at most 8 GPUs a server or scale-up domain" in wide


def test_an_azure_vm_whose_vcpus_are_physical_cores_counts_them(tmp_path: Path) -> None:
    """Item 4: ND MI300X v5's 96 vCPUs are 96 physical cores (Microsoft's series summary); they were counted as 48,
    with a false few-cpu-cores note."""
    text = SERVICE.replace("MODEL", "meta-llama/Llama-3.1-405B-Instruct").replace("PRECISION", "fp8")
    text = text.replace("  provider: baremetal\n  gpus: [mi325x-256gb]\n", "  provider: azure\n  gpus: [mi300x-192gb]\n")
    path = tmp_path / "w.yaml"
    path.write_text(text, encoding="utf-8")
    plan = plan_workload(load_workload(str(path)))
    assert (plan.pools[0].node.platform_id, plan.pools[0].node.cpu_cores) == ("azure-standard-nd96isr-mi300x-v5", 96)
    assert "few-cpu-cores" not in {f.code for f in plan.findings}
