"""A weight format the serving engine has no kernel for on a GPU is refused there, with vLLM's reason.

Source: vLLM's quantization "Supported Hardware" table (docs.vllm.ai/en/v0.14.0/features/quantization/) and
its NVIDIA Model Optimizer page (NVFP4: native FP4 GEMM, else weight-only Marlin, a kernel the table lists for
Ampere, Ada and Hopper only). Formats the table does not state (bf16, fp8, mxfp4) are not refused anywhere.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.calculator.estimate import EstimateRequest, estimate
from generator.catalog import find_gpu
from generator.errors import InputError
from generator.sizing.loadability import format_problems
from generator.sizing.precision import weight_format
from tests.helpers import call_cli

NVFP4_REASON = "NVFP4 (ModelOpt) has NVIDIA kernels only"


@pytest.mark.parametrize(
    ("precision", "gpu", "refused_on"),
    [
        # NVFP4 and its aliases: native on Blackwell, Marlin weight-only on Ampere/Ada/Hopper, nothing elsewhere
        pytest.param("nvfp4", "b200-sxm-180gb", None, id="nvfp4-blackwell"),
        pytest.param("nvfp4", "h100-sxm5-80gb", None, id="nvfp4-hopper-marlin"),
        pytest.param("nvfp4", "l40s-48gb", None, id="nvfp4-ada-marlin"),
        pytest.param("nvfp4", "a100-sxm4-80gb", None, id="nvfp4-ampere-marlin"),
        pytest.param("nvfp4", "mi300x-192gb", "AMD GPUs", id="nvfp4-mi300x"),
        pytest.param("fp4", "mi325x-256gb", "AMD GPUs", id="fp4-alias-mi325x"),
        pytest.param("modelopt-fp4", "mi250x-128gb", "AMD GPUs", id="modelopt-fp4-alias-mi250x"),
        pytest.param("nvfp4", "gaudi3-128gb", "Intel Gaudi", id="nvfp4-gaudi3"),
        pytest.param("nvfp4", "t4-16gb", "Turing GPUs", id="nvfp4-turing"),
        pytest.param("nvfp4", "v100-sxm2-32gb", "Volta GPUs", id="nvfp4-volta"),
        # GGUF: the table marks it supported on AMD GPUs, not on Intel Gaudi
        pytest.param("q4_k_m", "mi300x-192gb", None, id="gguf-mi300x"),
        pytest.param("q4_k_m", "gaudi3-128gb", "Intel Gaudi", id="gguf-gaudi3"),
        # AWQ / GPTQ and bitsandbytes: not on AMD GPUs or Intel Gaudi; GPTQ on Volta is
        pytest.param("int4", "mi300x-192gb", "AMD GPUs", id="int4-mi300x"),
        pytest.param("int8-gptq", "gaudi3-128gb", "Intel Gaudi", id="gptq8-gaudi3"),
        pytest.param("int4", "v100-sxm2-32gb", None, id="int4-volta-gptq"),
        pytest.param("nf4", "mi300x-192gb", "AMD GPUs", id="nf4-mi300x"),
        # FP8 per channel or per block is FP8 too: no FP8 kernel on Volta or Turing
        pytest.param("fp8-block", "v100-sxm2-32gb", "Volta GPUs", id="fp8-block-volta"),
        pytest.param("fbgemm-fp8", "t4-16gb", "Turing GPUs", id="fbgemm-fp8-turing"),
        pytest.param("fp8-channel", "a100-sxm4-80gb", None, id="fp8-channel-ampere-marlin"),
        # not stated by the table: never refused
        pytest.param("fp8", "mi300x-192gb", None, id="fp8-mi300x"),
        pytest.param("mxfp4", "mi300x-192gb", None, id="mxfp4-mi300x"),
        pytest.param("bf16", "gaudi3-128gb", None, id="bf16-gaudi3"),
    ],
)
def test_format_by_architecture(precision: str, gpu: str, refused_on: str | None) -> None:
    fmt = weight_format(precision)
    problems = format_problems(fmt, find_gpu(gpu).architecture)
    if refused_on is None:
        assert problems == ()
    else:
        (problem,) = problems
        assert problem.startswith(f"{fmt.name} weights cannot be served on {refused_on}: ")
        assert "https://docs.vllm.ai/en/v0.14.0/features/quantization/" in problem


def test_nvfp4_reason_names_both_sources() -> None:
    (problem,) = format_problems(weight_format("nvfp4"), "cdna3")
    assert NVFP4_REASON in problem
    assert "https://docs.vllm.ai/en/v0.29.0/features/quantization/modelopt/" in problem
    assert "not on AMD GPUs" in problem


@pytest.mark.parametrize(("gpu", "refused"), [("mi300x-192gb", True), ("gaudi3-128gb", True), ("h200-sxm-141gb", False)])
def test_estimate_refuses_nvfp4_where_no_kernel_runs_it(gpu: str, refused: bool) -> None:
    req = EstimateRequest(model="meta-llama/Llama-3.1-70B-Instruct", precision="nvfp4", gpu=gpu)
    if refused:
        expected = rf"in nvfp4 on .* will not load: nvfp4 weights cannot be served on .*{re.escape(NVFP4_REASON)}"
        with pytest.raises(InputError, match=expected):
            estimate(req)
    else:
        assert estimate(req)["capacity"]["fits"] is True


WORKLOAD = """\
version: 1
name: nv
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-70B-Instruct
    inference:
      precision: nvfp4
      max_context_tokens: 8192
      requests_per_second: 1
hardware:
  gpus: [GPUS]
"""


def test_plan_skips_a_gpu_without_a_kernel_and_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "workload.yaml").write_text(WORKLOAD.replace("GPUS", "mi300x-192gb, gaudi3-128gb"))
    code = call_cli(tmp_path, ("plan", "workload.yaml"))
    err = capsys.readouterr().err
    assert code == 3, err
    assert "has no feasible plan" in err
    assert "mi300x-192gb on dell-xe9680-mi300x: nvfp4 weights cannot be served on AMD GPUs: " + NVFP4_REASON in err
    assert "nvfp4 weights cannot be served on Intel Gaudi: " + NVFP4_REASON in err


def test_plan_places_nvfp4_on_the_nvidia_gpu_of_a_mixed_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "workload.yaml").write_text(WORKLOAD.replace("GPUS", "mi300x-192gb, h100-sxm5-80gb"))
    code = call_cli(tmp_path, ("plan", "workload.yaml"))
    out = capsys.readouterr().out
    assert code == 0
    assert "h100-sxm5-80gb" in out
    assert "mi300x" not in out.split("runner-up")[0]
