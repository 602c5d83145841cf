"""Which modules an NVFP4 checkpoint leaves unquantized, and the FP8 KV cache it states (fix196).

NVIDIA's ModelOpt NVFP4 checkpoints list what they keep in BF16 (``exclude_modules``): DeepSeek-R1-FP4-v2 the four
MLA projections other than ``o_proj``, ``lm_head`` and the MTP layer (its recipe, ModelOpt's examples/deepseek/ptq.py,
disables ``*attn*`` and ``*head*``, the v2 re-enables ``wo``). ``precision: nvfp4`` of deepseek-ai/DeepSeek-R1 sized
every linear layer at 4.5 bits: 6.10 GB a replica light. Their ``kv_cache_quant_algo: FP8`` makes vLLM's default
(``--kv-cache-dtype auto``) KV cache FP8 (``resolve_kv_cache_dtype_string``, vllm PR 29980): the estimate said bf16.
"""

from __future__ import annotations

import json
from pathlib import Path

from generator.calculator.model_source import resolve_model
from generator.catalog.nvfp4_layout import nvfp4_layout_note
from generator.sizing.precision import weight_format
from generator.sizing.quantization import checkpoint_kv_cache_precision, parse_quantization_config
from generator.sizing.weights import size_weights
from generator.workload import load_workload
from generator.workload.models import InferenceDeployment
from tests.helpers import run_specgen

R1 = "deepseek-ai/DeepSeek-R1"
ALL_LINEAR_NVFP4 = 380_271_175_584  # every linear layer at 4.5 bits: what nvfp4 of R1 was sized at before


def _arch(model: str):  # type: ignore[no-untyped-def]
    return resolve_model(model).architecture


def test_nvfp4_of_r1_keeps_the_v2_checkpoints_bf16_attention_projections() -> None:
    arch = _arch(R1)
    fmt = weight_format("nvfp4")
    kept = [lin for lin in arch.layers[5].linears if lin.name in ("q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj")]
    assert len(kept) == 4
    # each kept matrix moves from NVFP4 (4 bits + an E4M3 scale per 16 + one FP32 global scale) to 16 bits
    moved = sum(lin.weight_params * (16 - fmt.linear_bits(lin, 5, arch.num_layers)) for lin in kept) * arch.num_layers
    assert moved.denominator == 1 and moved % 8 == 0
    sized = size_weights(arch, fmt).total_bytes
    assert sized == 386_379_903_952 == ALL_LINEAR_NVFP4 + int(moved) // 8  # 6,108,728,368 bytes more
    assert sized == size_weights(_arch("nvidia/DeepSeek-R1-FP4-v2"), fmt).total_bytes  # the checkpoint itself
    # the v1 checkpoint keeps o_proj too
    assert size_weights(_arch("nvidia/DeepSeek-R1-FP4"), fmt).total_bytes == 396_677_968_604


def test_a_model_without_a_known_checkpoint_is_sized_as_before_and_says_so() -> None:
    arch = _arch("meta-llama/Llama-3.3-70B-Instruct")  # its checkpoint's list (lm_head) changes nothing
    assert size_weights(arch, weight_format("nvfp4")).total_bytes == 42_709_043_392
    code, text = nvfp4_layout_note("Qwen/Qwen3-8B", _arch("Qwen/Qwen3-8B"), "nvfp4") or ("", "")
    assert code == "nvfp4-layout-assumed" and "every decoder linear layer" in text
    code, text = nvfp4_layout_note(R1, _arch(R1), "modelopt-fp4") or ("", "")  # an alias of nvfp4
    assert code == "nvfp4-checkpoint-layout" and "nvidia/DeepSeek-R1-FP4-v2" in text
    assert nvfp4_layout_note(R1, _arch(R1), "fp8") is None
    ckpt = "nvidia/Llama-3.3-70B-Instruct-FP4"
    assert nvfp4_layout_note(ckpt, _arch(ckpt), "nvfp4") is None  # its own quantization_config sizes it


def test_the_estimate_names_the_checkpoint_whose_list_it_sized() -> None:
    said = run_specgen("estimate", R1, "--precision", "nvfp4", "--json")
    assert said.returncode == 0, said.stderr
    out = json.loads(said.stdout)
    assert out["weights"]["bytes"] == 386_379_903_952
    assert any("nvidia/DeepSeek-R1-FP4-v2" in note for note in out["notes"]), out["notes"]


def test_a_modelopt_checkpoints_fp8_kv_cache_is_vllms_default() -> None:
    quant = parse_quantization_config(
        {"quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8", "exclude_modules": ["lm_head"]}}
    )
    assert quant is not None and quant.kv_cache_fp8
    assert checkpoint_kv_cache_precision(quant, None, "vllm") == "fp8"
    assert checkpoint_kv_cache_precision(quant, "nvfp4", "vllm") == "fp8"
    assert checkpoint_kv_cache_precision(quant, "bf16", "vllm") is None  # not the checkpoint's weights that run
    assert checkpoint_kv_cache_precision(quant, "nvfp4", "sglang") is None  # not read in SGLang's source
    none = parse_quantization_config({"quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": None}})
    assert none is not None and not none.kv_cache_fp8
    for engine, kv in (("vllm", "fp8"), ("sglang", "bf16")):
        said = run_specgen("estimate", "nvidia/Llama-3.3-70B-Instruct-FP4", "--engine", engine, "--json")
        assert said.returncode == 0, said.stderr
        out = json.loads(said.stdout)
        assert out["precision"]["kv_cache"] == kv
        assert out["kv_cache"]["bytes_per_token"] == 80 * 8 * 128 * 2 * (1 if kv == "fp8" else 2)
    said = run_specgen("estimate", "nvidia/Llama-3.3-70B-Instruct-FP4", "--kv-precision", "bf16", "--json")
    assert json.loads(said.stdout)["precision"]["kv_cache"] == "bf16"  # asked: kept


WORKLOAD = """\
version: 1
name: q
deployments:
  - name: chat
    model: nvidia/Llama-3.3-70B-Instruct-FP4
    inference: {{precision: nvfp4, max_context_tokens: 8192, requests_per_second: 1{extra}}}
hardware:
  gpus: [b200-sxm-180gb]
"""


def test_a_workloads_unset_kv_cache_follows_the_checkpoint(tmp_path: Path) -> None:
    for extra, kv in (("", "fp8"), (", kv_cache_precision: bf16", "bf16"), (", engine: sglang", "bf16")):
        (tmp_path / "w.yaml").write_text(WORKLOAD.format(extra=extra))
        dep = load_workload(tmp_path / "w.yaml").workload.deployments[0]
        assert isinstance(dep, InferenceDeployment)
        assert dep.inference.kv_cache_precision == kv, extra


def test_every_named_nvfp4_checkpoint_is_a_catalog_nvfp4_model() -> None:
    from generator import catalog

    named = {m.id: m.nvfp4_checkpoint for m in catalog.models().values() if m.nvfp4_checkpoint}
    assert named == {R1: "nvidia/DeepSeek-R1-FP4-v2", "meta-llama/Llama-3.3-70B-Instruct": "nvidia/Llama-3.3-70B-Instruct-FP4"}
    for checkpoint in named.values():
        quant = _arch(checkpoint).quantization
        assert quant is not None and quant.precision == "nvfp4" and quant.kv_cache_fp8
