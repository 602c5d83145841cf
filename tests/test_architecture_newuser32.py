"""Architectures read from config.json that were sized wrong or silently (newuser32 items 1, 2, 4, 5, 6, 7, 11, 12).

Each config below is a published config.json's fields (abbreviated to what sizing reads), with its source.
"""

from __future__ import annotations

from typing import Any

import pytest

from generator.errors import ArchitectureError
from generator.sizing.architecture import FULL, SLIDING, parse_architecture
from generator.sizing.vllm_kv import request_kv_bytes, vllm_kv_cache
from generator.units import GIB

#: CohereLabs/c4ai-command-a-03-2025 config.json (https://huggingface.co/CohereLabs/c4ai-command-a-03-2025), no
#: ``layer_types``, as published.
COMMAND_A: dict[str, Any] = {
    "model_type": "cohere2",
    "hidden_size": 12288,
    "num_attention_heads": 96,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "num_hidden_layers": 64,
    "sliding_window": 4096,
    "sliding_window_pattern": 4,
    "intermediate_size": 36864,
    "vocab_size": 256000,
    "use_embedding_sharing": True,
    "max_position_embeddings": 262144,
}

#: LGAI-EXAONE/EXAONE-4.0-32B's fields (https://huggingface.co/LGAI-EXAONE/EXAONE-4.0-32B), written without
#: ``layer_types``.
EXAONE4: dict[str, Any] = {
    "model_type": "exaone4",
    "hidden_size": 5120,
    "num_attention_heads": 40,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "num_hidden_layers": 64,
    "sliding_window": 4096,
    "sliding_window_pattern": "LLLG",
    "intermediate_size": 27392,
    "vocab_size": 102400,
    "tie_word_embeddings": False,
    "max_position_embeddings": 131072,
}


def _global_layers(config: dict[str, Any]) -> list[int]:
    return [layer.number for layer in parse_architecture(config).layers if layer.attention == FULL]


# --- item 1: sliding_window_pattern read for every model type ---------------------------------------------------


def test_command_a_every_fourth_layer_is_global() -> None:
    """vLLM models/commandr.py: ``layer_has_sliding_window = getattr(config, "sliding_window_pattern", False) and
    (layer_idx + 1) % self.config.sliding_window_pattern != 0``; Command A report (arXiv 2504.00698 §2): "interleaved
    layers of sliding window attention and full attention in 3:1 ratio". Before: all 64 layers 4,096-token windows."""
    assert _global_layers(COMMAND_A) == list(range(3, 64, 4))
    arch = parse_architecture(COMMAND_A)
    assert sum(layer.attention == SLIDING and layer.window_tokens == 4096 for layer in arch.layers) == 48


def test_command_a_request_kv_at_131k() -> None:
    """One 131,072-token request: 16 full layers x 65,536 B x 131,072 (8.0 GiB) + 48 windowed layers of ~4,096 +
    8,192 batched tokens; before the fix the whole request needed 1.5 GiB (all 64 layers windowed)."""
    arch = parse_architecture(COMMAND_A)
    need = request_kv_bytes(arch, 16, 131072)
    full = 16 * 8 * 128 * 2 * 2 * 131072
    windowed = 48 * 8 * 128 * 2 * 2 * ((4096 - 1 + 8192 + 15) // 16 + 1) * 16
    assert need == full + windowed
    assert need / GIB == pytest.approx(10.25, abs=0.01)
    assert vllm_kv_cache(arch, 16, 40 * GIB, 131072).groups > 1  # a hybrid pool, not one sliding group


def test_command_a_parameters_one_norm_a_layer() -> None:
    """Cohere's layer runs attention and MLP side by side after one input_layernorm (vLLM models/commandr.py
    ``CohereDecoderLayer``): 64 x (q, o 12,288^2 + k, v 12,288 x 1,024 + 3 x 12,288 x 36,864 + one 12,288 norm) + the
    tied 256,000 x 12,288 embedding + the final norm = 111,057,580,032 (the card's "111B"). Before: 111,058,366,464
    (two norms a layer)."""
    h = 12288
    assert parse_architecture(COMMAND_A).params_total == 64 * (2 * h * h + 2 * h * 1024 + 3 * h * 36864 + h) + 256000 * h + h
    assert parse_architecture(COMMAND_A).params_total == 111_057_580_032


def test_cohere2_pattern_defaults_to_four() -> None:
    """Transformers ``Cohere2Config`` defaults ``sliding_window_pattern`` to 4: left out, every 4th layer is global."""
    config = {k: v for k, v in COMMAND_A.items() if k != "sliding_window_pattern"}
    assert _global_layers(config) == list(range(3, 64, 4))


def test_exaone4_string_pattern() -> None:
    """EXAONE 4.0's ``"LLLG"``: L local (sliding), G global, repeated; the last layer always global (TensorRT-LLM
    ``_torch/models/modeling_exaone4.py::check_is_sliding``). 16 global layers of 64; before: none."""
    assert _global_layers(EXAONE4) == list(range(3, 64, 4))
    assert _global_layers({**EXAONE4, "num_hidden_layers": 5}) == [3, 4]


def test_exaone4_counts_its_qk_norms() -> None:
    """EXAONE 4 normalises Q and K after their projections (QK-Reorder-Norm, Transformers docs model_doc/exaone4):
    q_norm and k_norm of head_dim in every layer."""
    with_norms = parse_architecture(EXAONE4).params_total
    as_llama = parse_architecture({**EXAONE4, "model_type": "llama"}).params_total
    assert with_norms - as_llama == 64 * 2 * 128


@pytest.mark.parametrize("pattern", ["LLXG", "", [1, 0, 0, 1], 0, True, 2.5])
def test_unreadable_pattern_is_refused(pattern: object) -> None:
    with pytest.raises(ArchitectureError, match=r"sliding_window_pattern .* is not read here"):
        parse_architecture({**COMMAND_A, "sliding_window_pattern": pattern})


def test_gemma3_pattern_unchanged() -> None:
    """Gemma 3 (every 6th layer global by default) is read as before."""
    config = {**COMMAND_A, "model_type": "gemma3_text", "num_hidden_layers": 12}
    del config["sliding_window_pattern"]
    assert _global_layers(config) == [5, 11]


# --- item 2: MiniMax lightning-attention hybrids refused -------------------------------------------------------

#: MiniMaxAI/MiniMax-Text-01 config.json's fields (https://huggingface.co/MiniMaxAI/MiniMax-Text-01): every 8th layer
#: softmax attention (1), the other 70 lightning attention (0). The model card: "456B total, 45.9B activated".
MINIMAX_TEXT_01: dict[str, Any] = {
    "model_type": "minimax_text_01",
    "hidden_size": 6144,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "num_hidden_layers": 80,
    "num_local_experts": 32,
    "num_experts_per_tok": 2,
    "intermediate_size": 9216,
    "vocab_size": 200064,
    "attn_type_list": [0, 0, 0, 0, 0, 0, 0, 1] * 10,
}


@pytest.mark.parametrize("model_type", ["minimax_text_01", "MiniMaxText01", "minimax_m1", "minimax"])
def test_minimax_lightning_hybrid_is_refused(model_type: str) -> None:
    """vLLM models/minimax_text_01.py builds a linear (lightning) attention layer, a fixed state and no KV, for each 0
    of ``attn_type_list``. Before: sized as 80 softmax layers, 327,680 B/token of KV (8x the 10 softmax layers')."""
    with pytest.raises(ArchitectureError, match=r"lightning attention.*fixed recurrent state per sequence"):
        parse_architecture({**MINIMAX_TEXT_01, "model_type": model_type})


def test_minimax_m2_all_softmax_is_sized() -> None:
    """MiniMax-M2 (https://huggingface.co/MiniMaxAI/MiniMax-M2) carries ``attn_type_list`` of all 1s: every layer
    softmax attention, sized as today (62 full layers)."""
    arch = parse_architecture(
        {**MINIMAX_TEXT_01, "model_type": "minimax_m2", "num_hidden_layers": 62, "attn_type_list": [1] * 62}
    )
    assert [layer.attention for layer in arch.layers] == [FULL] * 62


@pytest.mark.parametrize("types", [[0, 2], "01", [True, 1]])
def test_malformed_attn_type_list_is_refused(types: object) -> None:
    with pytest.raises(ArchitectureError, match="attn_type_list must list 0"):
        parse_architecture({**MINIMAX_TEXT_01, "attn_type_list": types})


# --- item 4: ERNIE 4.5 MoE ------------------------------------------------------------------------------------

#: baidu/ERNIE-4.5-21B-A3B-PT config.json's fields (https://huggingface.co/baidu/ERNIE-4.5-21B-A3B-PT): model card
#: "Total Parameters 21B / Activated Parameters 3B"; the checkpoint's safetensors header: 21,825,436,160 parameters.
ERNIE_21B: dict[str, Any] = {
    "model_type": "ernie4_5_moe",
    "hidden_size": 2560,
    "intermediate_size": 12288,
    "num_hidden_layers": 28,
    "num_attention_heads": 20,
    "num_key_value_heads": 4,
    "head_dim": 128,
    "vocab_size": 103424,
    "tie_word_embeddings": True,
    "use_bias": False,
    "moe_num_experts": 64,
    "moe_k": 6,
    "moe_intermediate_size": 1536,
    "moe_num_shared_experts": 2,
    "moe_layer_start_index": 1,
    "moe_layer_interval": 1,
}


def test_ernie_45_moe_counts_its_experts() -> None:
    """vLLM models/ernie45_moe.py: layer i is MoE when ``(i + 1) % moe_layer_interval == 0`` and
    ``moe_layer_start_index <= i <= moe_layer_end_index`` (default the last layer); ``moe_k`` experts a token; the
    shared experts one MLP of ``moe_intermediate_size x moe_num_shared_experts``; the router hidden -> experts, no
    bias. Layer 0 dense (12,288 wide), 27 MoE layers; ``e_score_correction_bias`` (a buffer, 64 a layer) aside, the
    count equals the safetensors header's 21,825,436,160. Before: 3,347,724,800 total and active (dense)."""
    arch = parse_architecture(ERNIE_21B)
    assert [layer.is_moe for layer in arch.layers] == [False] + [True] * 27
    assert arch.routed_experts == (64, 6)
    assert arch.params_total == 21_825_436_160
    assert arch.params_active == 21_825_436_160 - 27 * 58 * 3 * 2560 * 1536  # 3.35 B: the card's "3B activated"
    assert arch.params_active == 3_352_148_480


def test_ernie_moe_layer_end_index() -> None:
    """``moe_layer_end_index`` bounds the MoE layers (the last layer when left out)."""
    arch = parse_architecture({**ERNIE_21B, "moe_layer_end_index": 20, "moe_layer_interval": 2})
    assert [layer.number for layer in arch.layers if layer.is_moe] == [1, 3, 5, 7, 9, 11, 13, 15, 17, 19]


@pytest.mark.parametrize(
    "extra",
    [
        {"moe_expert_count": 64},
        {"num_experts_in_each_layer": 8, "experts_top_k": 2},
        {"moe_intermediate_size": 1536},
    ],
)
def test_unread_expert_fields_are_refused_not_sized_dense(extra: dict[str, Any]) -> None:
    """A config whose experts are named in fields this parser does not read is refused, not sized as a dense model
    (before: ERNIE's names were such fields, and ERNIE-4.5-21B-A3B was sized as 3.35 B dense)."""
    dense = {k: v for k, v in ERNIE_21B.items() if not k.startswith("moe_")}
    assert not parse_architecture(dense).is_moe
    with pytest.raises(ArchitectureError, match=r"names experts .* but no routed experts are read"):
        parse_architecture({**dense, **extra})


def test_zero_or_false_expert_fields_stay_dense() -> None:
    """Fields that name no expert (0, false, null) leave a dense model dense."""
    config = {**ERNIE_21B, "model_type": "llama", "moe_num_experts": 0, "moe_k": 0, "output_router_logits": False}
    config.update(moe_num_shared_experts=0, moe_intermediate_size=None, moe_layer_start_index=0, moe_layer_interval=0)
    assert not parse_architecture(config).is_moe


@pytest.mark.parametrize(("key", "value"), [("moe_layer_interval", 0), ("moe_num_experts", 9000), ("moe_k", -1)])
def test_ernie_fields_are_bounded(key: str, value: int) -> None:
    """ERNIE's expert fields get the bounds the other names have (a 0 interval would place no MoE layer)."""
    from generator.calculator.model_limits import check_config_dimensions

    with pytest.raises(ArchitectureError, match=f"'{key}' = {value} is out of range"):
        check_config_dimensions({**ERNIE_21B, key: value})


# --- item 6: Qwen2-VL / Qwen2.5-VL vision towers and q/k/v biases ---------------------------------------------


def _qwen25_text() -> dict[str, Any]:
    from tests.conftest import reference_config

    return dict(reference_config("qwen2.5-7b"))


#: Qwen/Qwen2.5-VL-7B-Instruct's vision_config (https://huggingface.co/Qwen/Qwen2.5-VL-7B-Instruct/blob/main/config.json).
QWEN25_VL_VISION = {
    "depth": 32,
    "hidden_size": 1280,
    "intermediate_size": 3420,
    "out_hidden_size": 3584,
    "num_heads": 16,
    "in_chans": 3,
    "patch_size": 14,
    "spatial_merge_size": 2,
    "temporal_patch_size": 2,
}
#: Qwen/Qwen2-VL-7B-Instruct's vision_config (https://huggingface.co/Qwen/Qwen2-VL-7B-Instruct/blob/main/config.json).
QWEN2_VL_VISION = {
    "depth": 32,
    "embed_dim": 1280,
    "mlp_ratio": 4,
    "num_heads": 16,
    "in_chans": 3,
    "hidden_size": 3584,
    "patch_size": 14,
    "spatial_merge_size": 2,
    "temporal_patch_size": 2,
}


def test_qwen25_vl_7b_counts_its_tower_and_biases() -> None:
    """Qwen2.5-VL-7B-Instruct: the Hub's safetensors metadata 8,292,166,656 BF16 parameters (index total_size
    16,584,333,312 B) = Qwen2.5-7B's 7,615,616,512 + a 676,550,144 tower (patch Conv3d 1,505,280 + 32 blocks x
    19,702,200 + merger 44,574,464; Transformers modeling_qwen2_5_vl.py). Before: 7,615,487,488 (tower dropped from
    the flat config, and the 28 x 4,608 q/k/v biases lost as qwen2_5_vl was not in the bias list)."""
    arch = parse_architecture({**_qwen25_text(), "model_type": "qwen2_5_vl", "vision_config": QWEN25_VL_VISION})
    assert arch.vision_params == 676_550_144
    assert arch.params_total == 8_292_166_656


def test_qwen25_vl_wrapped_in_text_config() -> None:
    """A Transformers re-save nests the text fields in ``text_config`` (model_type qwen2_5_vl_text): same count."""
    text = {**_qwen25_text(), "model_type": "qwen2_5_vl_text"}
    arch = parse_architecture({"model_type": "qwen2_5_vl", "text_config": text, "vision_config": QWEN25_VL_VISION})
    assert arch.params_total == 8_292_166_656


@pytest.mark.parametrize(
    ("text_overrides", "total"),
    [
        # Qwen/Qwen2-VL-7B-Instruct: index total_size 16,582,751,232 B = 8,291,375,616 BF16 parameters
        pytest.param({}, 8_291_375_616, id="qwen2-vl-7b"),
        # Qwen/Qwen2-VL-2B-Instruct: 2,208,985,600 (Qwen2-1.5B's text model, tied, + the tower into 1,536)
        pytest.param(
            {
                "hidden_size": 1536,
                "intermediate_size": 8960,
                "num_hidden_layers": 28,
                "num_attention_heads": 12,
                "num_key_value_heads": 2,
                "vocab_size": 151936,
                "tie_word_embeddings": True,
            },
            2_208_985_600,
            id="qwen2-vl-2b",
        ),
    ],
)
def test_qwen2_vl_tower(text_overrides: dict[str, Any], total: int) -> None:
    """Qwen2-VL's tower: LayerNorms with biases, an fc1/fc2 MLP of embed_dim x mlp_ratio, a LayerNorm merger into
    vision_config.hidden_size (Transformers modeling_qwen2_vl.py)."""
    config = {**_qwen25_text(), **text_overrides, "model_type": "qwen2_vl"}
    vision = {**QWEN2_VL_VISION, "hidden_size": config["hidden_size"]}
    assert parse_architecture({**config, "vision_config": vision}).params_total == total


def test_qwen3_vl_refusal_says_its_tower_is_not_counted() -> None:
    """Qwen3-VL (``text_config`` + a vision_config with ``depth``): refused, saying why (before: "vision_config lacks
    or has a malformed field: 'num_hidden_layers'")."""
    config = {
        "model_type": "qwen3_vl",
        "text_config": {**_qwen25_text(), "model_type": "qwen3_vl_text"},
        "vision_config": {**QWEN25_VL_VISION, "deepstack_visual_indexes": [8, 16, 24]},
    }
    with pytest.raises(ArchitectureError, match=r"'qwen3_vl': its vision tower .* is not counted"):
        parse_architecture(config)


def test_other_flat_vision_config_is_noted() -> None:
    """A flat config with another vision_config keeps its text count but says the tower is not counted."""
    vision = {"hidden_size": 1152, "intermediate_size": 4304, "num_hidden_layers": 27, "patch_size": 14, "image_size": 980}
    arch = parse_architecture({**_qwen25_text(), "vision_config": vision})
    assert arch.params_total == 7_615_616_512
    assert any("vision_config" in note and "not counted" in note for note in arch.notes)


# --- items 5, 7, 12: layers not counted here are refused with the real reason ----------------------------------

#: meta-llama/Llama-3.2-11B-Vision-Instruct config.json's fields (https://huggingface.co/meta-llama/Llama-3.2-11B-Vision-Instruct).
MLLAMA_11B: dict[str, Any] = {
    "model_type": "mllama",
    "text_config": {
        "model_type": "mllama_text_model",
        "hidden_size": 4096,
        "num_hidden_layers": 40,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "intermediate_size": 14336,
        "vocab_size": 128256,
        "cross_attention_layers": [3, 8, 13, 18, 23, 28, 33, 38],
    },
    "vision_config": {
        "hidden_size": 1280,
        "intermediate_size": 5120,
        "num_hidden_layers": 32,
        "patch_size": 14,
        "image_size": 560,
    },
}


def test_mllama_is_refused_with_its_reason() -> None:
    """Llama 3.2 Vision: 8 cross-attention layers (attending to image tokens only) were sized as self-attention
    layers keeping KV for every text token (163,840 B/token instead of 131,072); vLLM removed encoder-decoder support
    with V0 (vllm-project/vllm#24907) and Llama-3.2-11B-Vision fails to start on vLLM 0.11.0 (vllm#27198)."""
    with pytest.raises(ArchitectureError, match=r"'mllama' \(Llama 3.2 Vision\): its cross-attention layers.*vllm/pull/24907"):
        parse_architecture(MLLAMA_11B)


def test_deepseek_v32_is_refused_not_sized_as_v3() -> None:
    """deepseek-ai/DeepSeek-V3.2-Exp: a lightning indexer beside MLA (vLLM models/deepseek_v2.py
    ``DeepseekV32IndexerCache(head_dim=self.head_dim + self.head_dim // self.quant_block_size * 4, dtype=torch.uint8)``:
    128 + 4 = 132 B a token a layer) and ~0.85 B indexer parameters. Before: sized exactly as DeepSeek-V3
    (671,026,404,352 parameters, 70,272 B/token)."""
    from tests.conftest import reference_config

    v3 = dict(reference_config("deepseek-v3"))
    assert parse_architecture(v3).params_total == 671_026_404_352  # V3 itself is still sized
    config = {**v3, "model_type": "deepseek_v32", "index_head_dim": 128, "index_n_heads": 64, "index_topk": 2048}
    with pytest.raises(ArchitectureError, match=r"'deepseek_v32'.*lightning indexer.*132 B a token a layer"):
        parse_architecture(config)


def test_recurrent_gemma_is_refused() -> None:
    """google/recurrentgemma-9b: ``block_types`` ["recurrent", "recurrent", "attention"] repeated, two thirds RG-LRU
    recurrences with a fixed state. Before: 38 full-attention layers, 13,879,267,328 parameters, 38,912 B/token."""
    config = {
        "model_type": "recurrent_gemma",
        "hidden_size": 4096,
        "num_hidden_layers": 38,
        "num_attention_heads": 16,
        "num_key_value_heads": 1,
        "intermediate_size": 24576,
        "vocab_size": 256000,
        "attention_window_size": 2048,
        "block_types": ["recurrent", "recurrent", "attention"],
    }
    with pytest.raises(ArchitectureError, match=r"'recurrent_gemma': its layers are listed in block_types"):
        parse_architecture(config)


@pytest.mark.parametrize("intermediate", [None, "absent"])
def test_nemotron_nas_block_configs_named(intermediate: object) -> None:
    """nvidia/Llama-3_3-Nemotron-Super-49B-v1 (``nemotron-nas``, per-layer ``block_configs``, intermediate_size and
    num_key_value_heads null as published; 49.9 B). Before: null -> "config field 'intermediate_size' is null";
    absent -> accepted as an 88.0 B MHA model."""
    config: dict[str, Any] = {
        "model_type": "nemotron-nas",
        "hidden_size": 8192,
        "num_hidden_layers": 80,
        "num_attention_heads": 64,
        "num_key_value_heads": None,
        "vocab_size": 128256,
        "block_configs": [{"attention": {"n_heads_in_group": 8, "no_op": False}, "ffn": {"ffn_mult": 2.625}}] * 80,
    }
    if intermediate is None:
        config["intermediate_size"] = None
    with pytest.raises(ArchitectureError, match=r"block_configs: per-layer"):
        parse_architecture(config)


def test_per_layer_moe_topk_named() -> None:
    """tencent/Hunyuan-A13B-Instruct lists ``moe_topk`` per layer ([8, 8, ...]). Before: "'moe_topk' must be a
    non-negative integer, got [8, 8, ...]"; now the per-layer list is named as the reason."""
    config = {**ERNIE_21B, "model_type": "hunyuan_v1_moe", "moe_topk": [8] * 28}
    with pytest.raises(ArchitectureError, match=r"'moe_topk' is a per-layer list"):
        parse_architecture(config)


# --- item 11: Llama 4's derived layer_types ---------------------------------------------------------------------


def test_chunked_attention_layer_type_is_sized_as_full() -> None:
    """Transformers ``Llama4TextConfig`` derives ``layer_types`` = "chunked_attention" where ``no_rope_layers`` is
    1 (configuration_llama4.py); vLLM allocates those layers as full attention by default (the hybrid KV manager is
    off for chunked local attention), as the original config without layer_types is sized. Before: refused."""
    base = {k: v for k, v in COMMAND_A.items() if not k.startswith("sliding")}
    types = ["chunked_attention", "chunked_attention", "chunked_attention", "full_attention"] * 16
    arch = parse_architecture({**base, "model_type": "llama4_text", "layer_types": types, "attention_chunk_size": 8192})
    assert [layer.attention for layer in arch.layers] == [FULL] * 64
    assert arch == parse_architecture({**base, "model_type": "llama4_text", "attention_chunk_size": 8192})


# --- item 12: the vision tower is not "active per token" -------------------------------------------------------


def test_active_per_token_leaves_the_vision_tower_out() -> None:
    """A vision tower runs once per image, not per token: Qwen2.5-VL-7B's active parameters are its language model's
    7,615,616,512 (LLaMA-Factory logs 7,615,616,512 trainable of 8,292,166,656 with the tower frozen), and Llama 4
    Scout's "17B active" (Meta's model card) is its text path. Before: the tower counted as active, 8,292,166,656."""
    arch = parse_architecture({**_qwen25_text(), "model_type": "qwen2_5_vl", "vision_config": QWEN25_VL_VISION})
    assert arch.params_active == 7_615_616_512 == arch.params_total - arch.vision_params


def test_ernie_moe_layer_end_index_minus_one_is_the_last_layer() -> None:
    """review24 L11: Transformers' Ernie4_5_MoeConfig reads moe_layer_end_index -1 as the last layer; it was refused."""
    config = {**ERNIE_21B, "moe_layer_end_index": -1}
    assert parse_architecture(config).params_total == parse_architecture(ERNIE_21B).params_total
