"""review70 item 20: a GGUF whose header keys disagree with its tensors' shapes is refused, as llama.cpp refuses it.

The keys size the KV cache, activations and parameters, the tensor table the weight bytes: a header of 4,096-wide
embeddings over 64-wide tensors, or of 128 experts over tensors of 8, was sized silently 10x apart.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from generator.calculator.model_source import resolve_model
from generator.errors import InputError
from tests.helpers import write_sparse_gguf
from tests.test_gguf import write_gguf

gguf = pytest.importorskip("gguf")

WRONG = "a damaged or mislabelled file, whose memory and speed specgen would size from the keys and its weights from the tensors"


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        pytest.param(
            {"hidden_size": 4096},
            "GGUF key 'llama.embedding_length' gives 4,096 but tensor token_embd.weight is [256, 512]: its dimension 0 holds 256",
            id="embedding",
        ),
        pytest.param(
            {"intermediate_size": 8192},
            "GGUF key 'llama.feed_forward_length' gives 8,192 but tensor blk.0.ffn_down.weight is [512, 256]: its "
            "dimension 0 holds 512",
            id="ffn",
        ),
        pytest.param(
            {"num_key_value_heads": 4},
            "GGUF key 'llama.attention.head_count_kv' gives 4 heads x 64 = 256 but tensor blk.0.attn_k.weight is [256, 128]: its "
            "dimension 1 holds 128",
            id="kv-heads",
        ),
        pytest.param(
            {"num_attention_heads": 8},
            "GGUF key 'llama.attention.head_count' gives 8 heads x 64 = 512 but tensor blk.0.attn_q.weight is [256, 256]: its "
            "dimension 1 holds 256",
            id="heads",
        ),
    ],
)
def test_a_dense_gguf_whose_keys_lie_about_its_tensors_is_refused(tmp_path: Path, keys: dict[str, int], message: str) -> None:
    path = tmp_path / "lies.gguf"
    write_gguf(path, {}, 0, keys=keys)
    with pytest.raises(InputError) as info:
        resolve_model(str(path))
    assert info.value.message.startswith(f"{path}: {message}")
    assert f"{WRONG} (llama.cpp refuses it: tensor 'blk.0." in info.value.message or "token_embd" in info.value.message


def test_the_same_file_with_true_keys_is_read(tmp_path: Path) -> None:
    path = tmp_path / "true.gguf"
    write_gguf(path, {}, 0)
    assert resolve_model(str(path)).architecture.hidden_size == 256


def write_qwen3moe(path: Path, experts_said: int = 8, expert_tensors: bool = True, layers_said: int = 2) -> None:
    """A tiny qwen3moe GGUF (review70's make_moe.py): 8 experts of 32 wide over a 64-wide model, 2 layers."""
    h, heads, kv, hd, experts, eff, vocab = 64, 4, 2, 16, 8, 32, 256
    writer = gguf.GGUFWriter(str(path), "qwen3moe")
    writer.add_block_count(layers_said)
    writer.add_embedding_length(h)
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv)
    writer.add_key_length(hd)
    writer.add_value_length(hd)
    writer.add_context_length(4096)
    writer.add_feed_forward_length(128)
    writer.add_expert_count(experts_said)
    writer.add_expert_used_count(2)
    writer.add_expert_feed_forward_length(eff)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    shapes: dict[str, tuple[int, ...]] = {"token_embd.weight": (vocab, h), "output.weight": (vocab, h)}
    for i in range(2):
        blk = f"blk.{i}."
        shapes |= {
            f"{blk}attn_norm.weight": (h,),
            f"{blk}attn_q.weight": (heads * hd, h),
            f"{blk}attn_k.weight": (kv * hd, h),
            f"{blk}attn_v.weight": (kv * hd, h),
            f"{blk}attn_output.weight": (h, heads * hd),
            f"{blk}ffn_gate_inp.weight": (experts, h),
        }
        if expert_tensors:
            shapes |= {
                f"{blk}ffn_gate_exps.weight": (experts, eff, h),
                f"{blk}ffn_up_exps.weight": (experts, eff, h),
                f"{blk}ffn_down_exps.weight": (experts, h, eff),
            }
    write_sparse_gguf(writer, shapes)


def test_a_moe_gguf_whose_expert_count_lies_is_refused(tmp_path: Path) -> None:
    good = tmp_path / "good.gguf"
    write_qwen3moe(good)
    assert resolve_model(str(good)).architecture.params_total == 157_056  # review70: m_good.gguf's
    path = tmp_path / "m_count_lies.gguf"
    write_qwen3moe(path, experts_said=128)
    message = (
        f"{path}: GGUF key 'qwen3moe.expert_count' gives 128 but tensor blk.0.ffn_gate_inp.weight is [64, 8]: its "
        f"dimension 1 holds 8: {WRONG} (llama.cpp refuses it: tensor 'blk.0.ffn_gate_inp.weight' has wrong shape)"
    )
    with pytest.raises(InputError, match=re.escape(message)):
        resolve_model(str(path))


def test_a_moe_gguf_without_expert_tensors_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "m_no_exp_tensors.gguf"
    write_qwen3moe(path, expert_tensors=False)
    message = (
        f"{path}: its qwen3moe.expert_count names routed experts, but layer 0 holds no expert tensor "
        f"(blk.0.ffn_gate_exps.weight, ...): {WRONG} (llama.cpp refuses it: missing tensor 'blk.0.ffn_gate_exps.weight')"
    )
    with pytest.raises(InputError, match=re.escape(message)):
        resolve_model(str(path))


def test_a_header_whose_tensors_hold_a_fraction_of_its_parameters_is_refused(tmp_path: Path) -> None:
    """What no shape says: a llama header of a 8-layer model over one norm vector a layer (a header-only file)."""
    path = tmp_path / "norms.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    for add, value in (("block_count", 8), ("embedding_length", 256), ("feed_forward_length", 512),
                       ("head_count", 4), ("head_count_kv", 2), ("context_length", 4096)):  # fmt: skip
        getattr(writer, f"add_{add}")(value)
    write_sparse_gguf(writer, {"token_embd.weight": (512, 256), **{f"blk.{i}.attn_norm.weight": (256,) for i in range(8)}})
    with pytest.raises(InputError, match=r"its tensors hold 133,120 parameters, 0\.03x the 4,854,016 its llama\.\* keys give"):
        resolve_model(str(path))


@pytest.mark.parametrize(
    ("values", "message"),
    [
        pytest.param(
            [2], "GGUF key llama.attention.head_count_kv holds 1 value(s) for the 2 layers its llama.block_count", id="short"
        ),
        pytest.param([2, 2, 2], "holds 3 value(s) for the 2 layers", id="long"),
    ],
)
def test_a_per_layer_array_of_another_length_than_the_layers_is_refused(tmp_path: Path, values: list[int], message: str) -> None:
    """review70 item 8: a 1-value array for 2 layers was read; an empty one was said to "differ per layer". llama.cpp's
    get_key_or_arr refuses both ("key ... has wrong array length; expected 2, got 1")."""
    from tests.test_gguf import write_crafted_gguf

    path = tmp_path / "array.gguf"
    write_crafted_gguf(path, {"attention.head_count_kv": values})
    with pytest.raises(InputError, match=re.escape(message)):
        resolve_model(str(path))


def test_a_tensor_of_layer_minus_one_is_refused_as_one_past_the_layers(tmp_path: Path) -> None:
    """review70 item 9: blk.-1.* was counted silently (as a top-level tensor) where blk.99.* was refused."""
    from tests.test_gguf import write_gguf

    path = tmp_path / "neg.gguf"
    write_gguf(path, {}, 0)
    data = path.read_bytes()
    assert data.count(b"blk.7.ffn_norm.weight") == 1
    path.write_bytes(data.replace(b"blk.7.ffn_norm.weight", b"blk.-.ffn_norm.weight"))  # same length: offsets hold
    with pytest.raises(InputError, match=r"of layers past the 8 its llama\.block_count names \(or numbered as no layer"):
        resolve_model(str(path))


def test_a_gguf_without_a_vocabulary_says_so_in_gguf_terms(tmp_path: Path) -> None:
    """review70 item 11: "config lacks vocab_size (a decoder-only Hugging Face config.json is expected)" of a GGUF."""
    from tests.test_gguf import write_crafted_gguf

    path = tmp_path / "novocab.gguf"
    write_crafted_gguf(path, {}, {"blk.0.attn_norm.weight": np.zeros((64,), np.float32)})
    with pytest.raises(InputError, match=r"GGUF has no llama\.vocab_size key and no token_embd\.weight tensor"):
        resolve_model(str(path))
