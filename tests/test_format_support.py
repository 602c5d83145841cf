"""A weight format the serving engine has no kernel for on a GPU is refused there, with vLLM's reason.

Source: vLLM's quantization "Supported Hardware" table (docs.vllm.ai/en/v0.14.0/features/quantization/) and
its NVIDIA Model Optimizer page (NVFP4: native FP4 GEMM, else weight-only Marlin, a kernel the table lists for
Ampere, Ada and Hopper only); FP8 on CDNA2 (gfx90a has no FP8 type; vLLM issues 16394 and 10663), since the table's
one AMD column is the MI300 era. Formats the table does not state (bf16, mxfp4) are not refused anywhere.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.calculator.estimate import EstimateRequest, estimate
from generator.catalog import find_gpu
from generator.errors import InputError
from generator.sizing.loadability import FP8_MARLIN_SOURCE, format_problems
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
        # FP8 per channel or per block is FP8 too: no FP8 kernel on Volta; Turing runs it through FP8 Marlin (review 17 M4)
        pytest.param("fp8-block", "v100-sxm2-32gb", "Volta GPUs", id="fp8-block-volta"),
        pytest.param("fbgemm-fp8", "t4-16gb", None, id="fbgemm-fp8-turing-marlin"),
        pytest.param("fp8", "t4-16gb", None, id="fp8-turing-marlin"),
        pytest.param("fbgemm-fp8", "v100-sxm2-32gb", "Volta GPUs", id="fbgemm-fp8-volta"),
        pytest.param("fp8-channel", "a100-sxm4-80gb", None, id="fp8-channel-ampere-marlin"),
        # FP8 (W8A8) on AMD GPUs is CDNA3's; CDNA2 has no FP8 type (newuser21 item 6), whatever the scaling
        pytest.param("fp8", "mi300x-192gb", None, id="fp8-mi300x"),
        pytest.param("fp8-block", "mi325x-256gb", None, id="fp8-block-mi325x"),
        pytest.param("fp8", "mi250x-128gb", "CDNA2 GPUs (MI250X, MI210)", id="fp8-mi250x"),
        pytest.param("fp8-channel", "mi250x-128gb", "CDNA2 GPUs (MI250X, MI210)", id="fp8-channel-mi250x"),
        pytest.param("fbgemm-fp8", "mi250x-128gb", "CDNA2 GPUs (MI250X, MI210)", id="fbgemm-fp8-mi250x"),
        pytest.param("fp8-block", "mi250x-128gb", "CDNA2 GPUs (MI250X, MI210)", id="fp8-block-mi250x"),
        # INT8 (W8A8): Turing, Ampere, Ada, Hopper only (newuser21 item 7)
        pytest.param("int8", "mi300x-192gb", "AMD GPUs", id="int8-mi300x"),
        pytest.param("int8", "mi250x-128gb", "AMD GPUs", id="int8-mi250x"),
        pytest.param("int8", "v100-sxm2-32gb", "Volta GPUs", id="int8-volta"),
        pytest.param("int8", "gaudi3-128gb", "Intel Gaudi", id="int8-gaudi3"),
        pytest.param("int8", "t4-16gb", None, id="int8-turing"),
        pytest.param("int8", "a100-sxm4-80gb", None, id="int8-ampere"),
        pytest.param("int8", "h100-sxm5-80gb", None, id="int8-hopper"),
        # not stated by the table: never refused
        pytest.param("int8-gptq", "v100-sxm2-32gb", None, id="gptq8-volta"),
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
        assert "https://docs.vllm.ai/en/v0.14.0/features/quantization/" in problem or FP8_MARLIN_SOURCE in problem


def test_fp8_on_cdna2_names_the_failures() -> None:
    (problem,) = format_problems(weight_format("fp8"), "cdna2")
    assert problem == (
        "fp8 weights cannot be served on CDNA2 GPUs (MI250X, MI210): CDNA2 (gfx90a) has no FP8 matrix type: vLLM's "
        'FP8 kernels fail there ("type fp8e4b8 not supported in this architecture" on an MI210, '
        "https://github.com/vllm-project/vllm/issues/16394; an FP8 checkpoint on MI250, "
        "https://github.com/vllm-project/vllm/issues/10663); the AMD GPU column of vLLM's quantization hardware "
        "table, where FP8 (W8A8) is supported, is the MI300 series (CDNA3) "
        "(https://docs.vllm.ai/en/v0.14.0/features/quantization/)"
    )


def test_int8_on_amd_names_the_table_row() -> None:
    (problem,) = format_problems(weight_format("int8"), "cdna3")
    assert problem == (
        "int8 weights cannot be served on AMD GPUs: vLLM's quantization hardware table marks INT8 (W8A8) "
        "unsupported on AMD GPUs (https://docs.vllm.ai/en/v0.14.0/features/quantization/)"
    )


@pytest.mark.parametrize(
    ("model", "precision", "gpu"),
    [
        pytest.param("meta-llama/Llama-3.1-8B-Instruct", "fp8", "mi250x-128gb", id="fp8-mi250x"),
        pytest.param("mistralai/Mistral-7B-v0.1", "fp8", "mi250x-128gb", id="fp8-mistral-mi250x"),
        pytest.param("meta-llama/Llama-3.1-8B-Instruct", "int8", "mi300x-192gb", id="int8-mi300x"),
        pytest.param("meta-llama/Llama-3.1-8B-Instruct", "int8", "v100-sxm2-32gb", id="int8-v100"),
        pytest.param("meta-llama/Llama-3.1-8B-Instruct", "int8", "gaudi3-128gb", id="int8-gaudi3"),
    ],
)
def test_estimate_refuses_a_format_without_a_kernel(model: str, precision: str, gpu: str) -> None:
    with pytest.raises(InputError, match=rf"in {precision} on .* will not load: {precision} weights cannot be served on "):
        estimate(EstimateRequest(model=model, precision=precision, gpu=gpu))


def test_an_fp8_kv_cache_on_cdna2_is_not_refused() -> None:
    """The refusal is of FP8 weights; a KV cache's precision is not a weight format (vLLM issue 6576: FP8 KV on MI250)."""
    req = EstimateRequest(model="mistralai/Mistral-7B-v0.1", gpu="mi250x-128gb", kv_precision="fp8")
    assert estimate(req)["capacity"]["fits"] is True


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


def test_plan_refuses_int8_on_mi300x(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "workload.yaml").write_text(WORKLOAD.replace("nvfp4", "int8").replace("GPUS", "mi300x-192gb"))
    code = call_cli(tmp_path, ("plan", "workload.yaml"))
    err = capsys.readouterr().err
    assert code == 3, err
    assert "mi300x-192gb on dell-xe9680-mi300x: int8 weights cannot be served on AMD GPUs: vLLM's quantization" in err
