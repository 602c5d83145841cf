"""GGUF precisions vLLM and SGLang cannot load: a tensor type their GGUF loaders have no kernel for (review26 item 3).

vLLM's ``vllm/model_executor/layers/quantization/gguf.py`` (and SGLang's port) run F32 / F16 / BF16, Q4_0 / Q4_1 /
Q5_0 / Q5_1 / Q8_0, Q2_K-Q6_K and nine i-quants; a tensor of another type fails as the model loads ("Unsupported GGUF
quantization type MXFP4 in layer ..."). llama.cpp's MXFP4_MOE file type (``mxfp4_moe``) and every GGUF of an MXFP4
checkpoint (gpt-oss keeps its routed experts MXFP4 at every type) hold MXFP4 (ggml type 39) tensors: refused for a
service those engines run, at the field; planned on a machine of yours, which llama.cpp runs.
"""

from __future__ import annotations

from pathlib import Path

import gguf
import pytest

from generator.catalog import find_model
from generator.sizing.architecture import parse_architecture
from generator.sizing.loadability import ENGINE_GGUF_TYPES, engine_gguf_problem, gguf_tensor_types
from generator.sizing.precision import WEIGHT_FORMATS, weight_format
from tests.helpers import run_estimate, specgen_in_process

GGUF_FORMATS = sorted(name for name, fmt in WEIGHT_FORMATS.items() if fmt.gguf)


def _arch(model: str):  # type: ignore[no-untyped-def]
    return parse_architecture(find_model(model).config)


def test_the_engines_types_are_ggml_types() -> None:
    # the gguf package (llama.cpp's gguf-py) as the oracle of the names; MXFP4 is 39 there, and not among them
    assert all(name in gguf.GGMLQuantizationType.__members__ for name in ENGINE_GGUF_TYPES)
    assert gguf.GGMLQuantizationType["MXFP4"].value == 39 and "MXFP4" not in ENGINE_GGUF_TYPES


@pytest.mark.parametrize(
    ("model", "refused"),
    [
        # every GGUF of gpt-oss keeps its MXFP4 experts
        ("openai/gpt-oss-120b", GGUF_FORMATS),
        # another MoE: MXFP4_MOE alone puts MXFP4 in it
        ("Qwen/Qwen3-30B-A3B", ["mxfp4_moe"]),
        # a dense model: every k- and i-quant mixture is of types vLLM runs (MXFP4_MOE has no experts to hold MXFP4 there,
        # and is refused as a dense model's format: dense_format_problem)
        ("meta-llama/Llama-3.1-8B-Instruct", []),
    ],
)
def test_the_gguf_types_the_engines_cannot_load(model: str, refused: list[str]) -> None:
    arch = _arch(model)
    got = [name for name in GGUF_FORMATS if engine_gguf_problem(weight_format(name), arch)]
    assert got == refused
    for name in GGUF_FORMATS:
        assert ("MXFP4" in gguf_tensor_types(weight_format(name), arch)) is (name in refused)
    # checkpoint formats are none of this rule's business
    assert gguf_tensor_types(weight_format("mxfp4"), arch) == frozenset()


WORKLOAD = """version: 1
name: gg
deployments:
  - name: chat
    model: openai/gpt-oss-120b
    inference:
      engine: {engine}
      precision: {precision}{allowed}
      max_context_tokens: 8192
      requests_per_second: 2
hardware:
  gpus: [h100-sxm5-80gb]
  provider: baremetal
"""


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_a_served_mxfp4_moe_is_refused_at_its_field(tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(engine=engine, precision="mxfp4_moe", allowed=""), encoding="utf-8")
    code, out, err = specgen_in_process(capsys, "plan", str(path))
    assert (code, out) == (1, "")
    assert err.startswith(
        f"specgen: error: {path}:8:18: deployments[0].inference.precision: a GGUF of this model at mxfp4_moe holds MXFP4 "
        "tensors, which vLLM's and SGLang's GGUF loaders have no kernel for ("
    )
    assert err.rstrip().endswith(
        "llama.cpp runs it, on a machine of yours (hardware.fixed); they serve the checkpoint itself, precision mxfp4 "
        "(their MXFP4 method)"
    )
    # a GGUF type as the fallback: every one of gpt-oss keeps the MXFP4 experts
    path.write_text(
        WORKLOAD.format(engine=engine, precision="mxfp4", allowed="\n      allowed_precisions: [q4_k_m]"), encoding="utf-8"
    )
    code, _, err = specgen_in_process(capsys, "validate", str(path))
    assert code == 1
    assert err.startswith(
        f"specgen: error: {path}:9:28: deployments[0].inference.allowed_precisions[0]: a GGUF of this model at q4_k_m"
    )
    # the checkpoint itself plans
    path.write_text(WORKLOAD.format(engine=engine, precision="mxfp4", allowed=""), encoding="utf-8")
    code, _, _ = specgen_in_process(capsys, "validate", str(path))
    assert code == 0


def test_a_machine_of_yours_runs_it_under_llama_cpp(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "home.yaml"
    text = WORKLOAD.format(engine="vllm", precision="mxfp4_moe", allowed="").replace("      engine: vllm\n", "")
    text = text.replace(
        "  gpus: [h100-sxm5-80gb]\n", "  fixed: {gpu: rtx-4090-24gb, gpu_count: 1, ram_gib: 128, cpu: ryzen-9-7950x}\n"
    )
    path.write_text(text.replace("requests_per_second: 2", "requests_per_second: 0.02"), encoding="utf-8")
    code, out, err = specgen_in_process(capsys, "plan", str(path))
    assert code == 0, err
    assert "mxfp4_moe" in out


def test_the_estimate_refuses_it_without_a_machine_of_yours() -> None:
    code, _ = run_estimate("openai/gpt-oss-120b", "--precision", "mxfp4_moe", "--gpu", "h100-sxm5-80gb", "--engine", "vllm")
    assert code == 1
    # newuser86 item 1: without --engine a GGUF precision is llama.cpp's file on the GPU, which runs MXFP4
    code, out = run_estimate("openai/gpt-oss-120b", "--precision", "mxfp4_moe", "--gpu", "h100-sxm5-80gb")
    assert code == 0 and "llama.cpp" in out
    code, _ = run_estimate("openai/gpt-oss-120b", "--precision", "mxfp4_moe", "--gpu", "rtx-4090-24gb", "--ram-gib", "128")
    assert code == 0
