"""llama.cpp's GGUF file types as llama-quantize writes them: i-quants, K-quants and MXFP4_MOE against published files.

newuser38 items 4 and 5: ``--precision iq1_s`` was an unknown precision, and gpt-oss-120b on a machine of the user's
(llama.cpp's offload plan) was sized at its 60.77 GiB safetensors checkpoint where llama.cpp's GGUF holds 59.02 GiB.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.calculator.model_source import parse_config, resolve_model
from generator.calculator.offload_report import offload_unblock
from generator.sizing.architecture import EXPERT, Linear
from generator.sizing.gguf_mixture import GGUF_BLOCKS, GGUF_TYPE_BITS, gguf_model
from generator.sizing.precision import WEIGHT_FORMATS, weight_format
from generator.sizing.weights import size_weights
from tests.helpers import estimate_json
from tests.test_gguf import BLOCK, CONFIG, LAYER, nbytes, write_gguf

gguf = pytest.importorskip("gguf")

GB = 10**9
GIB = 2**30

#: Published GGUF files: (catalog model, precision, bytes of the file, where a user sees it). Every file holds its
#: metadata (tokenizer, about 8 MB for Llama 3's 128k vocabulary) besides the tensors sized here. Exact byte counts are
#: the Hub's file sizes at the revision named; bartowski's Llama 3.1 70B table gives GB to two places. All of
#: bartowski's files are made with an importance matrix ("All quants made using imatrix option").
L8_REV = "https://huggingface.co/bartowski/Meta-Llama-3.1-8B-Instruct-GGUF/blob/bf5b95e96dac0462e2a09145ec66cae9a3f12067/"
L3_REV = "https://huggingface.co/unsloth/Llama-3.2-3B-Instruct-GGUF/blob/e7d0997e49c9cb00d88b4c1a6a16aa894b0bbc31/"
L1_REV = "https://huggingface.co/bartowski/Llama-3.2-1B-Instruct-GGUF/blob/067b946cf014b7c697f3654f621d577a3e3afd1c/"
L70_TABLE = "https://huggingface.co/bartowski/Meta-Llama-3.1-70B-Instruct-GGUF (README table, llama.cpp b3472)"
PUBLISHED = [
    ("meta-llama/Llama-3.1-8B-Instruct", "iq4_xs", 4_447_667_616, L8_REV + "Meta-Llama-3.1-8B-Instruct-IQ4_XS.gguf"),
    ("meta-llama/Llama-3.1-8B-Instruct", "iq4_nl", 4_677_993_888, L8_REV + "Meta-Llama-3.1-8B-Instruct-IQ4_NL.gguf"),
    ("meta-llama/Llama-3.1-8B-Instruct", "iq3_m", 3_784_828_320, L8_REV + "Meta-Llama-3.1-8B-Instruct-IQ3_M.gguf"),
    ("meta-llama/Llama-3.1-8B-Instruct", "iq3_xs", 3_518_752_160, L8_REV + "Meta-Llama-3.1-8B-Instruct-IQ3_XS.gguf"),
    ("meta-llama/Llama-3.1-8B-Instruct", "iq2_m", 2_948_285_856, L8_REV + "Meta-Llama-3.1-8B-Instruct-IQ2_M.gguf"),
    ("meta-llama/Llama-3.1-8B-Instruct", "q2_k", 3_179_136_416, L8_REV + "Meta-Llama-3.1-8B-Instruct-Q2_K.gguf"),
    ("meta-llama/Llama-3.1-8B-Instruct", "q3_k_m", 4_018_922_912, L8_REV + "Meta-Llama-3.1-8B-Instruct-Q3_K_M.gguf"),
    ("meta-llama/Llama-3.1-8B-Instruct", "q4_k_m", 4_920_739_232, L8_REV + "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf"),
    ("meta-llama/Llama-3.1-8B-Instruct", "q5_k_m", 5_732_992_416, L8_REV + "Meta-Llama-3.1-8B-Instruct-Q5_K_M.gguf"),
    ("meta-llama/Llama-3.1-8B-Instruct", "q6_k", 6_596_011_424, L8_REV + "Meta-Llama-3.1-8B-Instruct-Q6_K.gguf"),
    ("meta-llama/Llama-3.1-8B-Instruct", "q8_0", 8_540_775_840, L8_REV + "Meta-Llama-3.1-8B-Instruct-Q8_0.gguf"),
    ("meta-llama/Llama-3.2-3B-Instruct", "iq4_nl", 1_917_190_592, L3_REV + "Llama-3.2-3B-Instruct-IQ4_NL.gguf"),
    ("meta-llama/Llama-3.2-3B-Instruct", "iq4_xs", 1_829_110_208, L3_REV + "Llama-3.2-3B-Instruct-IQ4_XS.gguf"),
    ("meta-llama/Llama-3.2-3B-Instruct", "q2_k", 1_363_935_680, L3_REV + "Llama-3.2-3B-Instruct-Q2_K.gguf"),
    ("meta-llama/Llama-3.2-3B-Instruct", "q3_k_m", 1_687_159_232, L3_REV + "Llama-3.2-3B-Instruct-Q3_K_M.gguf"),
    ("meta-llama/Llama-3.2-3B-Instruct", "q4_k_m", 2_019_377_600, L3_REV + "Llama-3.2-3B-Instruct-Q4_K_M.gguf"),
    ("meta-llama/Llama-3.2-1B-Instruct", "iq4_xs", 743_141_504, L1_REV + "Llama-3.2-1B-Instruct-IQ4_XS.gguf"),
    ("meta-llama/Llama-3.2-1B-Instruct", "iq3_m", 657_289_344, L1_REV + "Llama-3.2-1B-Instruct-IQ3_M.gguf"),
    ("meta-llama/Llama-3.2-1B-Instruct", "q4_k_m", 807_694_464, L1_REV + "Llama-3.2-1B-Instruct-Q4_K_M.gguf"),
    ("meta-llama/Llama-3.1-70B-Instruct", "q8_0", 74.98 * GB, L70_TABLE),
    ("meta-llama/Llama-3.1-70B-Instruct", "q6_k", 57.89 * GB, L70_TABLE),
    ("meta-llama/Llama-3.1-70B-Instruct", "q5_k_m", 49.95 * GB, L70_TABLE),
    ("meta-llama/Llama-3.1-70B-Instruct", "q4_k_m", 42.52 * GB, L70_TABLE),
    ("meta-llama/Llama-3.1-70B-Instruct", "iq4_xs", 37.90 * GB, L70_TABLE),
    ("meta-llama/Llama-3.1-70B-Instruct", "q3_k_m", 34.27 * GB, L70_TABLE),
    ("meta-llama/Llama-3.1-70B-Instruct", "iq3_m", 31.94 * GB, L70_TABLE),
    ("meta-llama/Llama-3.1-70B-Instruct", "iq3_xs", 29.31 * GB, L70_TABLE),
    ("meta-llama/Llama-3.1-70B-Instruct", "q2_k", 26.38 * GB, L70_TABLE),
    ("meta-llama/Llama-3.1-70B-Instruct", "iq2_m", 24.12 * GB, L70_TABLE),
    ("meta-llama/Llama-3.1-70B-Instruct", "iq2_s", 22.24 * GB, L70_TABLE),
    ("meta-llama/Llama-3.1-70B-Instruct", "iq2_xs", 21.14 * GB, L70_TABLE),
    ("meta-llama/Llama-3.1-70B-Instruct", "iq2_xxs", 19.10 * GB, L70_TABLE),
    ("meta-llama/Llama-3.1-70B-Instruct", "iq1_m", 16.75 * GB, L70_TABLE),
    (
        "meta-llama/Llama-3.3-70B-Instruct",
        "iq2_xxs",
        19_097_390_048,
        "https://huggingface.co/bartowski/Llama-3.3-70B-Instruct-GGUF/blob/main/Llama-3.3-70B-Instruct-IQ2_XXS.gguf",
    ),
    # llama-bench's size column: the tensors alone, GiB to two places
    ("deepseek-ai/DeepSeek-V3", "q4_k_m", 376.65 * GIB, "https://github.com/ggml-org/llama.cpp/issues/10981"),
]  # fmt: skip


@pytest.mark.parametrize(("model", "precision", "published", "source"), PUBLISHED)
def test_sizes_are_within_2_percent_of_published_files(model: str, precision: str, published: float, source: str) -> None:
    sizes = size_weights(resolve_model(model).architecture, weight_format(precision))
    assert abs(sizes.total_bytes / published - 1) < 0.02, source
    assert sizes.total_bytes < published, source  # a file holds its metadata too


@pytest.mark.parametrize("repo", [L8_REV, L3_REV, L1_REV])
def test_one_repos_files_differ_by_exactly_the_bytes_sized(repo: str) -> None:
    """The types of one repository's files share their metadata, so the tensors sized must differ as the files do, to the
    byte: each file exceeds its sizing by the same metadata bytes (7,841,184 for bartowski's Llama 3.1 8B)."""
    rows = [(m, p, b) for m, p, b, s in PUBLISHED if s.startswith(repo)]
    assert len(rows) >= 3
    metadata = {b - size_weights(resolve_model(m).architecture, weight_format(p)).total_bytes for m, p, b in rows}
    assert len(metadata) == 1 and 0 < metadata.pop() < 10_000_000, rows


def test_block_sizes_are_ggmls() -> None:
    """ggml-common.h's block structs (the test table), and the gguf package's GGML_QUANT_SIZES."""
    for name, (weights, size) in GGUF_BLOCKS.items():
        assert tuple(gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType[name]]) == (weights, size), name
        if name in BLOCK:
            assert BLOCK[name] == (weights, size), name
    assert GGUF_TYPE_BITS["IQ1_S"] == 1.5625 and GGUF_TYPE_BITS["IQ1_M"] == 1.75 and GGUF_TYPE_BITS["IQ2_XXS"] == 2.0625
    assert GGUF_TYPE_BITS["IQ2_XS"] == 2.3125 and GGUF_TYPE_BITS["IQ2_S"] == 2.5625 and GGUF_TYPE_BITS["IQ3_XXS"] == 3.0625
    assert GGUF_TYPE_BITS["IQ3_S"] == 3.4375 and GGUF_TYPE_BITS["IQ4_XS"] == 4.25 and GGUF_TYPE_BITS["IQ4_NL"] == 4.5


def _mixture(ftype_types: dict[str, str], first_down: str, token_embd: str, output: str) -> dict[str, str]:
    """Tensor types of test_gguf's small Llama (4 heads, 2 KV heads: n_gqa 2; 8 layers) under one llama.cpp file type."""
    types = {"token_embd.weight": token_embd, "output.weight": output}
    for i in range(CONFIG["num_hidden_layers"]):
        for name in LAYER:
            kind = first_down if name == "ffn_down" and i < 1 else ftype_types.get(name, ftype_types["*"])
            types[f"blk.{i}.{name}.weight"] = kind
    return types


#: llama_tensor_get_type (src/llama-quant.cpp) for a dense model with n_gqa < 4, 8 layers (the first eighth: layer 0):
MIXTURES = [
    # IQ1_S: attn_v Q2_K, attn_output IQ2_XXS, the first eighth's ffn_down Q2_K, token_embd Q2_K, output Q5_K
    ("iq1_s", gguf.LlamaFileType.MOSTLY_IQ1_S, {"*": "IQ1_S", "attn_v": "Q2_K", "attn_output": "IQ2_XXS"},
     "Q2_K", "Q2_K", "Q5_K"),
    # IQ2_M (default IQ2_S): attn_v, attn_output and the first eighth's ffn_down IQ3_S, token_embd IQ3_S, output Q5_K
    ("iq2_m", gguf.LlamaFileType.MOSTLY_IQ2_M, {"*": "IQ2_S", "attn_v": "IQ3_S", "attn_output": "IQ3_S"},
     "IQ3_S", "IQ3_S", "Q5_K"),
    # IQ3_XXS with an importance matrix: attn_q / attn_k IQ2_S, attn_output IQ3_S, token_embd IQ3_S, output Q5_K
    ("iq3_xxs", gguf.LlamaFileType.MOSTLY_IQ3_XXS, {"*": "IQ3_XXS", "attn_q": "IQ2_S", "attn_k": "IQ2_S", "attn_output": "IQ3_S"},
     "IQ3_XXS", "IQ3_S", "Q5_K"),
    # IQ3_M (default IQ3_S): attn_v and attn_output Q4_K, the first eighth's ffn_down Q4_K, output Q6_K
    ("iq3_m", gguf.LlamaFileType.MOSTLY_IQ3_M, {"*": "IQ3_S", "attn_v": "Q4_K", "attn_output": "Q4_K"}, "Q4_K", "IQ3_S", "Q6_K"),
]  # fmt: skip


@pytest.mark.parametrize(("precision", "file_type", "kinds", "first_down", "embd", "output"), MIXTURES)
def test_a_gguf_files_header_agrees_with_the_formula(
    tmp_path: Path, precision: str, file_type: int, kinds: dict[str, str], first_down: str, embd: str, output: str
) -> None:
    """A file of llama.cpp's mixture, read through its header, is the formula's bytes layer by layer."""
    path = tmp_path / f"m-{precision}.gguf"
    total = write_gguf(path, _mixture(kinds, first_down, embd, output), file_type)
    from_file = resolve_model(str(path)).architecture
    assert from_file.file_weights is not None and from_file.file_weights.precision == precision
    fmt = weight_format(precision)
    from_config = parse_config(CONFIG, "config", None)
    assert size_weights(from_file, fmt) == size_weights(from_config, fmt)
    assert size_weights(from_config, fmt).total_bytes == total
    assert size_weights(from_config, fmt).embedding_bytes == nbytes(embd, 512 * 256)


def test_deepseeks_first_eighth_of_ffn_down_counts_its_shared_experts() -> None:
    """The 1- and 2-bit i-quants raise the first n_layer/8 ffn_down tensors (``qs.i_ffn_down < qs.n_ffn_down/8``), counted
    in llama.cpp's tensor order (layer, then name): DeepSeek's 3 dense layers and then ffn_down_exps and ffn_down_shexp
    of each MoE layer, so 61 // 8 = 7 tensors are layers 0 to 4's, not layers 0 to 6's."""
    arch = resolve_model("deepseek-ai/DeepSeek-R1").architecture
    fmt = weight_format("iq1_s")
    model = gguf_model(arch)
    assert model.experts == 256 and model.downs_before[:6] == (0, 1, 2, 3, 5, 7)

    def down(layer: int, prefix: str) -> Linear:
        return next(lin for lin in arch.layers[layer].linears if lin.name == f"{prefix}down_proj")

    assert fmt.linear_bits(down(4, "shared_experts."), 4, 61, model) == GGUF_TYPE_BITS["Q2_K"]
    assert fmt.linear_bits(down(5, "experts."), 5, 61, model) == GGUF_TYPE_BITS["IQ1_S"]
    router = next(lin for lin in arch.layers[5].linears if lin.group == "router")
    assert fmt.linear_bits(router, 5, 61, model) == 32  # ffn_gate_inp is never quantized


def test_an_eight_expert_model_keeps_attention_higher() -> None:
    """Mixtral (n_expert 8): IQ2_XXS's attn_v and attn_k Q4_K and attn_output Q5_K; Q4_K_M's attn_v and attn_k Q8_0."""
    arch = resolve_model("mistralai/Mixtral-8x7B-Instruct-v0.1").architecture
    model = gguf_model(arch)
    attention = {lin.name: lin for lin in arch.layers[10].linears}
    expected = {
        "iq2_xxs": {"v_proj": "Q4_K", "k_proj": "Q4_K", "o_proj": "Q5_K", "q_proj": "IQ2_XXS"},
        "q4_k_m": {"v_proj": "Q8_0", "k_proj": "Q8_0", "o_proj": "Q5_K", "q_proj": "Q4_K"},
    }
    for precision, kinds in expected.items():
        for name, kind in kinds.items():
            assert weight_format(precision).linear_bits(attention[name], 10, 32, model) == GGUF_TYPE_BITS[kind], name
    assert any(lin.group == EXPERT for lin in arch.layers[10].linears)


def test_iq1_s_is_a_precision() -> None:
    """newuser38 item 4: ``--precision iq1_s`` was refused ("unknown precision")."""
    data = estimate_json("deepseek-ai/DeepSeek-R1", "--precision", "iq1_s", "--gpu", "h200-sxm-141gb", "--tp", "8")
    assert data["precision"]["weights"] == "iq1_s"
    assert data["weights"]["bytes"] == 133_550_310_912  # 124.38 GiB; Unsloth's UD-IQ1_S (131 GB) is a mixture of its own


GPT_OSS_MACHINE = ("--gpu", "rtx-4090-24gb", "--ram-gib", "64", "--memory-channels", "2", "--ddr-mt-per-s", "6000")


def test_llama_cpp_runs_gpt_oss_as_its_gguf_and_vllm_as_its_checkpoint() -> None:
    """newuser38 item 5: on a machine of the user's (llama.cpp's plan) gpt-oss-120b is ggml-org's MXFP4_MOE file, 59.02
    GiB of tensors (63,387,346,208 bytes with its metadata); served by vLLM it stays the 60.77 GiB checkpoint."""
    fixed = estimate_json("openai/gpt-oss-120b", *GPT_OSS_MACHINE, "--context", "24576")
    assert fixed["precision"]["weights"] == "mxfp4_moe"
    assert fixed["weights"]["bytes"] == 63_374_323_968 and round(63_374_323_968 / GIB, 2) == 59.02
    assert any("llama.cpp runs the mxfp4 checkpoint as its GGUF" in note for note in fixed["notes"])
    served = estimate_json("openai/gpt-oss-120b", "--gpu", "h100-sxm5-80gb")
    assert served["precision"]["weights"] == "mxfp4" and round(served["weights"]["bytes"] / GIB, 2) == 60.77
    # vLLM's offload of the same machine loads the checkpoint: its --cpu-offload-gb is sized on the 60.77 GiB
    assert fixed["runtime_settings"]["vllm"]["--cpu-offload-gb"] == 43


def test_no_lower_gguf_type_is_offered_as_a_lever_for_gpt_oss() -> None:
    """newuser38 item 5: "q3_k_m stores the mxfp4 weights in 0.96x the bytes" was offered for a 2 GiB shortfall; every
    GGUF of gpt-oss keeps its MXFP4 experts (96% of its bytes), and q2_k, the smallest, is 0.76 GiB less."""
    arch = resolve_model("openai/gpt-oss-120b").architecture
    said = offload_unblock(arch, [WEIGHT_FORMATS["mxfp4_moe"]])
    assert "no lever here" in said and "96% of the mxfp4_moe weights" in said and "q2_k" in said and "0.76 GiB less" in said
    assert "stores the" not in said
    dense = offload_unblock(resolve_model("meta-llama/Llama-3.1-8B-Instruct").architecture, [WEIGHT_FORMATS["bf16"]])
    assert "allow a lower precision (e.g. q4_k_m stores the bf16 weights in" in dense
