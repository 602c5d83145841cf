"""The LM head of a checkpoint's files wherever a multimodal checkpoint nests it (newuser71 item 1).

Llama 4's and Mistral 3's checkpoints name it ``language_model.lm_head.weight``: read as an unsplit top-level tensor, the
whole 202,048 x 5,120 matrix was charged to every TP rank (Scout TP8: 26.99 GiB a GPU, not 25.29).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.sizing.file_weights import group_tensor_bytes
from tests.helpers import estimate_json
from tests.hub_server import safetensors_bytes

#: A small Llama decoder (the shapes matter, not the model).
H, INTER, VOCAB, LAYERS, KV = 1024, 2816, 64000, 4, 8 * 64
CONFIG: dict[str, object] = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": H,
    "intermediate_size": INTER,
    "num_hidden_layers": LAYERS,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "vocab_size": VOCAB,
    "max_position_embeddings": 8192,
    "torch_dtype": "bfloat16",
    "tie_word_embeddings": False,
}


def _tensors(prefix: str, head: str) -> dict[str, tuple[str, list[int], int]]:
    """Every tensor of :data:`CONFIG` in bf16, the decoder under ``prefix`` and the LM head named ``head``."""
    h, inter, vocab, kv = H, INTER, VOCAB, KV
    shapes: dict[str, list[int]] = {
        f"{prefix}embed_tokens.weight": [vocab, h],
        f"{prefix}norm.weight": [h],
        head: [vocab, h],
    }
    for i in range(LAYERS):
        p = f"{prefix}layers.{i}."
        shapes |= {
            p + "self_attn.q_proj.weight": [h, h],
            p + "self_attn.k_proj.weight": [kv, h],
            p + "self_attn.v_proj.weight": [kv, h],
            p + "self_attn.o_proj.weight": [h, h],
            p + "mlp.gate_proj.weight": [inter, h],
            p + "mlp.up_proj.weight": [inter, h],
            p + "mlp.down_proj.weight": [h, inter],
            p + "input_layernorm.weight": [h],
            p + "post_attention_layernorm.weight": [h],
        }
    out = {}
    for name, shape in shapes.items():
        n = 1
        for d in shape:
            n *= d
        out[name] = ("BF16", shape, 2 * n)
    return out


#: (decoder prefix, LM head name) as each checkpoint layout stores them
LAYOUTS = [
    pytest.param("model.", "lm_head.weight", id="causal-lm"),
    # LLaVA / Mistral 3 / Llama 4 / PaliGemma before Transformers 4.52 (their _checkpoint_conversion_mapping)
    pytest.param("language_model.model.", "language_model.lm_head.weight", id="language_model"),
    pytest.param("thinker.model.", "thinker.lm_head.weight", id="qwen-omni-thinker"),
    pytest.param("language.model.", "language.lm_head.weight", id="deepseek-vl2"),
    pytest.param("llm.model.", "llm.lm_head.weight", id="minicpm-v"),
]


@pytest.mark.parametrize(("prefix", "head"), LAYOUTS)
def test_the_lm_head_is_found_under_any_module_it_is_nested_in(prefix: str, head: str) -> None:
    vocab, h = VOCAB, H
    pairs = [(name, size) for name, (_, _, size) in _tensors(prefix, head).items()]
    files = group_tensor_bytes(pairs, LAYERS, "bf16", "test", tied_embeddings=False)
    assert files.lm_head_bytes == vocab * h * 2
    assert files.embedding_bytes == vocab * h * 2
    assert files.other_bytes == h * 2  # the final norm alone
    # tied: the stored copy is not counted
    tied = group_tensor_bytes(pairs, LAYERS, "bf16", "test", tied_embeddings=True)
    assert tied.lm_head_bytes == 0 and tied.other_bytes == h * 2


@pytest.mark.parametrize(
    "name",
    [
        "model.norm.weight",
        "model.lm_head_norm.weight",  # a name that only begins like the head's
        "score.weight",
        "output_norm.weight",
    ],
)
def test_other_top_level_tensors_are_not_the_head(name: str) -> None:
    files = group_tensor_bytes([(name, 8)], 2, "bf16", "test", tied_embeddings=False)
    assert files.lm_head_bytes == 0 and files.other_bytes == 8


def _model_dir(tmp_path: Path, prefix: str, head: str) -> Path:
    folder = tmp_path / prefix.strip(".").replace(".", "_")
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(CONFIG))
    header, size = safetensors_bytes(_tensors(prefix, head))
    with (folder / "model.safetensors").open("wb") as out:
        out.write(header)
        out.truncate(size)  # header only: the sizes come from the header
    return folder


@pytest.mark.parametrize(("prefix", "head"), LAYOUTS[1:])
def test_a_nested_head_is_split_over_tp_as_a_top_level_one(tmp_path: Path, prefix: str, head: str) -> None:
    """The same weights in the two layouts give the same bytes a GPU at TP 2: the head split over the ranks."""
    args = ("--tp", "2", "--gpu", "h100-sxm5-80gb", "--context", "8192")
    plain = estimate_json(str(_model_dir(tmp_path, "model.", "lm_head.weight")), *args)["memory"]["per_gpu"]
    nested = estimate_json(str(_model_dir(tmp_path, prefix, head)), *args)["memory"]["per_gpu"]
    assert nested["weights"] == plain["weights"]
    assert nested["total"] == plain["total"]
