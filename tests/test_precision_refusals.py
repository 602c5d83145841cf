"""Every deployment whose precision no allowed GPU serves is refused at once, each at its field (fix183 item 2).

Before, the search refused the first (``chat``) and stopped: ``chat2``, in the same int8 on the same MI300X, was told
of only after the first was fixed, and ``validate`` passed the workload.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.errors import InfeasibleError, MultipleInputError
from generator.planner import plan_workload
from generator.planner.early import early_checks
from generator.workload import load_workload

SERVICE = """\
  - name: {name}
    model: meta-llama/Llama-3.1-8B-Instruct
    inference:
      precision: {precision}
      max_context_tokens: 8192
      requests_per_second: 1
"""
INT8_ON_AMD = "int8 weights cannot be served on AMD GPUs: vLLM's quantization hardware table marks INT8 (W8A8)"


def _workload(tmp_path: Path, services: list[tuple[str, str]], gpus: str = "mi300x-192gb") -> Path:
    path = tmp_path / "w.yaml"
    body = "".join(SERVICE.format(name=n, precision=p) for n, p in services)
    path.write_text(f"version: 1\nname: prec\ndeployments:\n{body}hardware:\n  provider: baremetal\n  gpus: [{gpus}]\n")
    return path


def test_two_unserved_precisions_are_both_refused_in_file_order(tmp_path: Path) -> None:
    path = _workload(tmp_path, [("chat", "int8"), ("other", "bf16"), ("chat2", "int8")])
    with pytest.raises(MultipleInputError) as caught:
        plan_workload(load_workload(str(path)))
    first, second = caught.value.errors
    assert caught.value.exit_code == InfeasibleError.exit_code
    assert str(first).startswith(f"{path}:7:18: deployments[0].inference.precision: deployment 'chat' ")
    assert str(second).startswith(f"{path}:19:18: deployments[2].inference.precision: deployment 'chat2' ")
    for error in (first, second):
        assert f"mi300x-192gb on dell-xe9680-mi300x: {INT8_ON_AMD}" in str(error)
        assert str(error).endswith("to unblock: a precision these GPUs serve (inference.precision; each reason above "
                                   "names what the engine lacks), or allow a GPU that serves int8")  # fmt: skip


def test_validate_says_them_too(tmp_path: Path) -> None:
    path = _workload(tmp_path, [("chat", "int8"), ("chat2", "nvfp4")])
    loaded = load_workload(str(path))
    with pytest.raises(MultipleInputError) as caught:
        early_checks(loaded)
    assert [e.location.path for e in caught.value.errors if e.location] == [
        "deployments[0].inference.precision",
        "deployments[1].inference.precision",
    ]
    assert "nvfp4 weights cannot be served on AMD GPUs" in str(caught.value.errors[1])


def test_one_is_raised_alone(tmp_path: Path) -> None:
    path = _workload(tmp_path, [("chat", "int8"), ("chat2", "bf16")])
    with pytest.raises(InfeasibleError, match=r"deployments\[0\]\.inference\.precision: deployment 'chat' "):
        plan_workload(load_workload(str(path)))


def test_a_gpu_that_serves_it_keeps_it_to_the_search(tmp_path: Path) -> None:
    path = _workload(tmp_path, [("chat", "int8"), ("chat2", "int8")], gpus="mi300x-192gb, h100-sxm5-80gb")
    early_checks(load_workload(str(path)))  # no refusal: the H100 serves int8
