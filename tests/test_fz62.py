"""fz62: hostile input (a traceback on a valid workload, an unlocated error, a quoted message); item 3, a quadratic
placement, is in ``test_replica_alignment``."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.cli import main
from generator.errors import SpecgenError
from generator.planner import plan_workload
from generator.workload import load_workload

#: The report's m1.yaml: GKE MIG sharing beside an allowed precision the plan does not choose.
SHARED = """\
version: 1
name: m1
deployments:
  - name: assistant
    model: meta-llama/Llama-3.1-8B-Instruct
    inference:
      precision: bf16
      allowed_precisions: [bf16, fp8]
      max_context_tokens: 8192
      avg_input_tokens: 800
      avg_output_tokens: 200
      requests_per_second: 2
hardware:
  provider: gcp
  gpus: [a100-sxm4-80gb]
kubernetes:
  gcp_project: acme-inference
  location: us-central1-a
  gpu_sharing: {strategy: mig, mig_profile: 3g.40gb}
"""


def test_gpu_sharing_beside_another_allowed_precision_plans(tmp_path: Path) -> None:
    """Item 1 (HIGH): ValueError tuple.index(x) from plan, render and diff: the cheaper-precision check sized a copy of
    the deployment, which the sharing code looked up in the workload's list."""
    path = tmp_path / "m1.yaml"
    path.write_text(SHARED)
    (dep,) = plan_workload(load_workload(str(path))).deployments
    assert dep.name == "assistant"


def _chat(tmp_path: Path, inference: str, hardware: str) -> Path:
    """A one-service workload of the 8B chat model with the inference fields and hardware section given."""
    path = tmp_path / "w.yaml"
    path.write_text(
        "version: 1\nname: w\ndeployments:\n  - name: chat\n    model: meta-llama/Llama-3.1-8B-Instruct\n"
        f"    inference: {{{inference}}}\nhardware:\n{hardware}"
    )
    return path


def test_an_unknown_machine_gpu_is_located_without_a_cpu(tmp_path: Path) -> None:
    """Item 2 (MED): the machine's RAM check read the unknown GPU and its unlocated error replaced the located one."""
    inference = "precision: bf16, max_context_tokens: 8192, avg_input_tokens: 100, avg_output_tokens: 100, requests_per_second: 1"
    path = _chat(tmp_path, inference, "  provider: baremetal\n  fixed: {gpu: h100-sxm5-80gbx, gpu_count: 1, ram_gib: 64}\n")
    with pytest.raises(SpecgenError) as raised:
        load_workload(str(path))
    assert str(raised.value).startswith(f"{path}:9:16: hardware.fixed.gpu: unknown GPU 'h100-sxm5-80gbx'")


def test_a_schema_message_is_not_quoted_as_a_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Item 4 (LOW): the duplicate-GPU error read hardware.gpus: "has non-unique elements (...)"."""
    inference = "max_context_tokens: 8192, requests_per_second: 1"
    path = _chat(tmp_path, inference, "  provider: aws\n  gpus: [h100-sxm5-80gb, h100-sxm5-80gb]\n")
    with pytest.raises(SystemExit) as exited:
        main(["validate", str(path)])
    assert exited.value.code == 1
    assert capsys.readouterr().err.endswith("hardware.gpus: has non-unique elements ('h100-sxm5-80gb' is repeated)\n")
