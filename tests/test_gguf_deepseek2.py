"""DeepSeek ``deepseek2`` GGUF files and split GGUF files (newuser29 item 8), written with the gguf package's writer.

Metadata keys as llama.cpp's converter writes a deepseek2 model (convert_hf_to_gguf.py ``DeepseekV2Model.
set_gguf_parameters``, https://github.com/ggml-org/llama.cpp/blob/master/convert_hf_to_gguf.py; names from gguf-py
gguf/constants.py ``Keys``); tensor names and shapes as its ``modify_tensors`` writes them (``kv_b_proj`` split into
``attn_k_b`` [heads, kv_lora_rank, nope] and ``attn_v_b`` [heads, v_head_dim, kv_lora_rank] since the MLA KV cache).
Split files as gguf-py's ``GGUFWriter(split_max_tensors=...)`` writes them (``name-00001-of-00003.gguf``, ``split.no``,
``split.count``, ``split.tensors.count``), the layout of llama-gguf-split.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from generator.calculator.model_source import parse_config, resolve_model
from generator.errors import InputError
from generator.sizing.architecture import FULL, MLA
from generator.sizing.kv_cache import size_kv_cache
from tests.conftest import REPO
from tests.helpers import run_specgen, write_sparse_gguf

gguf = pytest.importorskip("gguf")

#: DeepSeek-V3's config.json (https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json).
DEEPSEEK_V3 = json.loads((REPO / "tests/reference/configs/deepseek-v3/config.json").read_text())

#: A tiny DeepSeek-V3-shaped model: low-rank queries, a sigmoid router, one shared expert, the first layer dense.
TINY_V3: dict[str, Any] = {
    "model_type": "deepseek_v3",
    "hidden_size": 64,
    "intermediate_size": 96,
    "moe_intermediate_size": 32,
    "num_attention_heads": 4,
    "num_key_value_heads": 4,
    "num_hidden_layers": 3,
    "first_k_dense_replace": 1,
    "n_routed_experts": 4,
    "num_experts_per_tok": 2,
    "n_shared_experts": 1,
    "q_lora_rank": 48,
    "kv_lora_rank": 32,
    "qk_nope_head_dim": 16,
    "qk_rope_head_dim": 8,
    "v_head_dim": 16,
    "vocab_size": 128,
    "max_position_embeddings": 4096,
    "scoring_func": "sigmoid",
    "tie_word_embeddings": False,
}
#: A tiny DeepSeek-V2-Lite-shaped model: queries projected directly (config.json ``q_lora_rank: null``), softmax router.
TINY_V2_LITE = {**TINY_V3, "model_type": "deepseek_v2", "q_lora_rank": None, "scoring_func": "softmax"}


def add_deepseek2_metadata(writer: Any, cfg: dict[str, Any], mla: bool = True) -> None:
    """The header ``DeepseekV2Model.set_gguf_parameters`` writes for ``cfg`` (``mla=False``: a file converted before
    the MLA KV cache, with the per-head widths in key_length / value_length and the config's KV heads)."""
    writer.add_block_count(cfg["num_hidden_layers"])
    writer.add_context_length(cfg["max_position_embeddings"])
    writer.add_embedding_length(cfg["hidden_size"])
    writer.add_feed_forward_length(cfg["intermediate_size"])
    writer.add_head_count(cfg["num_attention_heads"])
    writer.add_head_count_kv(1 if mla else cfg["num_key_value_heads"])
    writer.add_expert_used_count(cfg["num_experts_per_tok"])
    if cfg["scoring_func"] == "sigmoid":
        writer.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID)
    writer.add_leading_dense_block_count(cfg["first_k_dense_replace"])
    writer.add_vocab_size(cfg["vocab_size"])
    if cfg["q_lora_rank"] is not None:
        writer.add_q_lora_rank(cfg["q_lora_rank"])
    writer.add_kv_lora_rank(cfg["kv_lora_rank"])
    if mla:
        writer.add_key_length(cfg["kv_lora_rank"] + cfg["qk_rope_head_dim"])
        writer.add_value_length(cfg["kv_lora_rank"])
        writer.add_key_length_mla(cfg["qk_nope_head_dim"] + cfg["qk_rope_head_dim"])
        writer.add_value_length_mla(cfg["v_head_dim"])
    else:
        writer.add_key_length(cfg["qk_nope_head_dim"] + cfg["qk_rope_head_dim"])
        writer.add_value_length(cfg["v_head_dim"])
    writer.add_expert_feed_forward_length(cfg["moe_intermediate_size"])
    writer.add_expert_count(cfg["n_routed_experts"])
    writer.add_expert_shared_count(cfg["n_shared_experts"])
    writer.add_expert_weights_scale(2.5)
    writer.add_rope_dimension_count(cfg["qk_rope_head_dim"])
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)


def deepseek2_tensors(cfg: dict[str, Any], mla: bool = True) -> dict[str, tuple[int, ...]]:
    """Every tensor of ``cfg`` as the converter names it, numpy shapes (outer first)."""
    h, heads, kv, rope = cfg["hidden_size"], cfg["num_attention_heads"], cfg["kv_lora_rank"], cfg["qk_rope_head_dim"]
    nope, v, q, experts = cfg["qk_nope_head_dim"], cfg["v_head_dim"], cfg["q_lora_rank"], cfg["n_routed_experts"]
    inter, moe, shared = cfg["intermediate_size"], cfg["moe_intermediate_size"], cfg["moe_intermediate_size"]
    shapes: dict[str, tuple[int, ...]] = {"token_embd.weight": (cfg["vocab_size"], h), "output_norm.weight": (h,)}
    for i in range(cfg["num_hidden_layers"]):
        blk: dict[str, tuple[int, ...]] = {"attn_norm.weight": (h,), "ffn_norm.weight": (h,), "attn_kv_a_norm.weight": (kv,)}
        if q:
            blk |= {"attn_q_a.weight": (q, h), "attn_q_a_norm.weight": (q,), "attn_q_b.weight": (heads * (nope + rope), q)}
        else:
            blk["attn_q.weight"] = (heads * (nope + rope), h)
        blk["attn_kv_a_mqa.weight"] = (kv + rope, h)
        if mla:
            blk |= {"attn_k_b.weight": (heads, kv, nope), "attn_v_b.weight": (heads, v, kv)}
        else:
            blk["attn_kv_b.weight"] = (heads * (nope + v), kv)
        blk["attn_output.weight"] = (h, heads * v)
        if i < cfg["first_k_dense_replace"]:
            blk |= {"ffn_gate.weight": (inter, h), "ffn_up.weight": (inter, h), "ffn_down.weight": (h, inter)}
        else:
            blk |= {
                "ffn_gate_inp.weight": (experts, h),
                "ffn_gate_exps.weight": (experts, moe, h),
                "ffn_up_exps.weight": (experts, moe, h),
                "ffn_down_exps.weight": (experts, h, moe),
                "ffn_gate_shexp.weight": (shared, h),
                "ffn_up_shexp.weight": (shared, h),
                "ffn_down_shexp.weight": (h, shared),
            }
        shapes |= {f"blk.{i}.{name}": shape for name, shape in blk.items()}
    shapes["output.weight"] = (cfg["vocab_size"], h)
    return shapes


def write_deepseek2(path: Path, cfg: dict[str, Any], mla: bool = True, split_max_tensors: int = 0) -> list[Path]:
    """An F32 GGUF of ``cfg``, every tensor at its real shape (split every ``split_max_tensors`` tensors); its files."""
    writer = gguf.GGUFWriter(str(path), "deepseek2", split_max_tensors=split_max_tensors)
    add_deepseek2_metadata(writer, cfg, mla)
    for name, shape in deepseek2_tensors(cfg, mla).items():
        writer.add_tensor(name, np.zeros(shape, np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    parts = sorted(path.parent.glob(f"{path.stem}-*-of-*.gguf"))
    return parts or [path]


def write_deepseek2_header(path: Path, cfg: dict[str, Any], mla: bool = True, extra: dict[str, int] | None = None) -> None:
    """A deepseek2 GGUF of ``cfg``'s metadata and its tensors' shapes, without their data;
    ``extra``: uint32 keys beside those the converter writes."""
    writer = gguf.GGUFWriter(str(path), "deepseek2")
    add_deepseek2_metadata(writer, cfg, mla)
    for key, value in (extra or {}).items():
        writer.add_uint32(key, value)
    write_sparse_gguf(writer, deepseek2_tensors(cfg, mla))  # every tensor at its shape, the data a hole (review70 20)


@pytest.mark.parametrize("cfg", [pytest.param(TINY_V3, id="v3-shaped"), pytest.param(TINY_V2_LITE, id="v2-lite-shaped")])
def test_a_deepseek2_gguf_is_the_architecture_of_its_config(tmp_path: Path, cfg: dict[str, Any]) -> None:
    """newuser29 item 8: a deepseek2 file was refused. Read back, its metadata is the config.json's architecture (MLA
    latent, dense first layer, shared expert), and its F32 tensors are 4 bytes a parameter of it, layer by layer."""
    path = tmp_path / "tiny.gguf"
    write_deepseek2(path, cfg)
    from_file = resolve_model(str(path)).architecture
    from_config = parse_config(cfg, "config", None)
    # a GGUF header names no Transformers class (its general.architecture is llama.cpp's)
    assert from_file._replace(file_weights=None, notes=()) == from_config._replace(notes=(), architectures=())
    assert [layer.attention for layer in from_file.layers] == [MLA] * 3
    assert [layer.is_moe for layer in from_file.layers] == [False, True, True]
    files = from_file.file_weights
    assert files is not None
    assert files.layer_bytes == tuple(4 * layer.params for layer in from_config.layers)
    assert files.total_bytes == 4 * from_config.params_total
    assert size_kv_cache(from_file, 16, 1).bytes_per_token == (32 + 8) * 3 * 2  # (kv_lora_rank + rope) x layers x 2 B


#: KV bytes a token at 16 bits, all 61 layers of DeepSeek-V3: the latent (kv_lora_rank 512 + qk_rope_head_dim 64) in a
#: file with the *_mla keys; in an older file llama.cpp caches 128 heads x (192 key + 128 value) elements.
MLA_BYTES_PER_TOKEN = (512 + 64) * 61 * 2
LEGACY_BYTES_PER_TOKEN = 128 * (192 + 128) * 61 * 2


def test_deepseek_v3_gguf_metadata_sizes_as_its_config_json(tmp_path: Path) -> None:
    """DeepSeek-V3's config turned into the header the converter writes sizes exactly as config.json: 70,272 B of KV a
    token ((512 + 64) x 61 layers x 2 B), 671,026,404,352 parameters (tests/reference/configs/param_counts.json: the
    671B without the multi-token-prediction layer, which the converter leaves out of a deepseek2 file too)."""
    path = tmp_path / "DeepSeek-V3-UD-Q2_K_XL.gguf"
    cfg = {**DEEPSEEK_V3, "scoring_func": "sigmoid"}
    write_deepseek2_header(path, cfg)
    from_file = resolve_model(str(path)).architecture
    from_config = parse_config(DEEPSEEK_V3, "config", None)
    # a GGUF header names no Transformers class (its general.architecture is llama.cpp's)
    assert from_file._replace(file_weights=None, notes=()) == from_config._replace(notes=(), architectures=())
    assert from_file.model_type == "deepseek_v3"
    kv = [size_kv_cache(a, 16, 1).bytes_per_token for a in (from_file, from_config)]
    assert kv == [MLA_BYTES_PER_TOKEN] * 2 == [70_272] * 2
    assert from_file.params_total == from_config.params_total == 671_026_404_352
    assert [layer.is_moe for layer in from_file.layers] == [False] * 3 + [True] * 58


def test_a_deepseek2_gguf_converted_before_mla_caching_is_sized_as_llama_cpp_runs_it(tmp_path: Path) -> None:
    """A file without key_length_mla / value_length_mla runs as multi-head attention in llama.cpp (is_mla false in
    src/models/deepseek2.cpp): 128 KV heads x (192 + 128) x 61 layers x 2 B = 4,997,120 B a token, 71x the latent."""
    path = tmp_path / "old.gguf"
    write_deepseek2_header(path, {**DEEPSEEK_V3, "scoring_func": "sigmoid"}, mla=False)
    arch = resolve_model(str(path)).architecture
    assert size_kv_cache(arch, 16, 1).bytes_per_token == LEGACY_BYTES_PER_TOKEN == 4_997_120
    assert {layer.attention for layer in arch.layers} == {FULL}
    assert arch.params_total == parse_config(DEEPSEEK_V3, "config", None).params_total
    assert any("multi-head attention, 128 KV heads x (192 + 128)" in note for note in arch.notes)
    tiny = tmp_path / "tiny-old.gguf"
    write_deepseek2(tiny, TINY_V3, mla=False)  # attn_kv_b whole, as such files hold it
    tiny_arch = resolve_model(str(tiny)).architecture
    assert tiny_arch.file_weights is not None
    assert tiny_arch.file_weights.total_bytes == 4 * parse_config(TINY_V3, "config", None).params_total
    assert size_kv_cache(tiny_arch, 16, 1).bytes_per_token == 4 * (24 + 16) * 3 * 2  # heads x (key + value) x layers


@pytest.mark.parametrize(
    ("drop", "message"),
    [
        pytest.param("attention.kv_lora_rank", "lacks deepseek2.attention.kv_lora_rank", id="no-kv-rank"),
        pytest.param("rope.dimension_count", "lacks deepseek2.rope.dimension_count", id="no-rope"),
    ],
)
def test_a_deepseek2_gguf_lacking_an_mla_key_names_it(tmp_path: Path, drop: str, message: str) -> None:
    path = tmp_path / "m.gguf"
    write_deepseek2_header(path, TINY_V3)
    reader = gguf.GGUFReader(str(path))
    writer = gguf.GGUFWriter(str(tmp_path / "cut.gguf"), "deepseek2")
    add_deepseek2_metadata(writer, TINY_V3)
    writer.kv_data[0].pop(f"deepseek2.{drop}")
    for tensor in reader.tensors:
        writer.add_tensor(tensor.name, np.zeros((8,), np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(InputError, match=re.escape(message)):
        resolve_model(str(tmp_path / "cut.gguf"))


def test_a_split_gguf_sizes_as_the_merged_file(tmp_path: Path) -> None:
    """newuser29 item 8: a first part was refused as damaged; llama.cpp loads the model from it, reading every part."""
    (tmp_path / "whole").mkdir()
    merged = write_deepseek2(tmp_path / "whole" / "m.gguf", TINY_V3)
    parts = write_deepseek2(tmp_path / "DeepSeek-tiny.gguf", TINY_V3, split_max_tensors=13)
    assert [p.name for p in parts] == [f"DeepSeek-tiny-0000{i}-of-00004.gguf" for i in range(1, 5)]
    whole = resolve_model(str(merged[0])).architecture
    split = resolve_model(str(parts[0])).architecture
    assert whole.file_weights is not None and split.file_weights is not None
    assert split._replace(file_weights=None, notes=()) == whole._replace(file_weights=None, notes=())
    assert split.file_weights._replace(source="", split_parts=1) == whole.file_weights._replace(source="")
    assert split.file_weights.split_parts == 4
    assert split.file_weights.total_bytes == 4 * whole.params_total
    assert "DeepSeek-tiny-00001-of-00004.gguf and its 3 other part(s):" in split.file_weights.source + split.notes[-1]


def test_a_split_gguf_estimate_names_its_first_part(tmp_path: Path) -> None:
    """The command of the report: the estimate runs on the first part, and llama.cpp is given that part (``-m``)."""
    parts = write_deepseek2(tmp_path / "m.gguf", TINY_V3, split_max_tensors=13)
    args = ("estimate", str(parts[0]), "--gpu", "rtx-4090-24gb", "--ram-gib", "128", "--cpu", "ryzen-9-7950x")
    done = run_specgen(*args)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "m-00002-of-00004" not in done.stdout


def split_set(tmp_path: Path, name: str, every: int) -> list[Path]:
    folder = tmp_path / name
    folder.mkdir()
    return write_deepseek2(folder / "m.gguf", TINY_V3, split_max_tensors=every)


def test_a_split_gguf_missing_a_part_names_it(tmp_path: Path) -> None:
    parts = split_set(tmp_path, "a", 13)
    parts[2].unlink()
    with pytest.raises(InputError, match=r"m-00001-of-00004\.gguf: part 3 of its 4, .*m-00003-of-00004\.gguf, not found"):
        resolve_model(str(parts[0]))


def test_a_later_part_given_names_the_first(tmp_path: Path) -> None:
    parts = split_set(tmp_path, "a", 13)
    with pytest.raises(InputError, match=r"m-00002-of-00004\.gguf: part 2 of 4 of a split GGUF: give its first part, .*m-00001"):
        resolve_model(str(parts[1]))


def test_a_part_of_another_split_is_named(tmp_path: Path) -> None:
    """A part whose split.count disagrees with the set its name puts it in (a part of another download)."""
    four, three = split_set(tmp_path, "four", 13), split_set(tmp_path, "three", 20)
    assert len(three) == 3
    shutil.copy(four[1], three[1])  # metadata: part 2 of 4, named part 2 of 3
    with pytest.raises(InputError, match=r"m-00002-of-00003\.gguf: its metadata says part 2 of 4, but .* part 2 of 3"):
        resolve_model(str(three[0]))


def test_parts_holding_other_than_the_counted_tensors_are_refused(tmp_path: Path) -> None:
    """split.tensors.count is the tensors of all parts (llama.cpp: tensors counted across parts must be the model's)."""
    a, b = split_set(tmp_path, "a", 20), split_set(tmp_path, "b", 24)
    assert len(a) == len(b) == 3
    shutil.copy(b[1], a[1])  # part 2 of 3 of another cut: other tensors
    with pytest.raises(
        InputError, match=r"m-00001-of-00003\.gguf: (its 3 parts hold \d+ tensors, but its split\.tensors\.count|tensor)"
    ):
        resolve_model(str(a[0]))


@pytest.mark.parametrize(
    ("name", "message"),
    [
        pytest.param("renamed.gguf", r"part 1 of a GGUF split into 4 files, but its name does not end in", id="renamed"),
        pytest.param("m-00002-of-00004.gguf", r"name does not end in '-00001-of-00004\.gguf'", id="misnumbered"),
    ],
)
def test_a_split_part_without_gguf_split_name_is_refused(tmp_path: Path, name: str, message: str) -> None:
    parts = split_set(tmp_path, "a", 13)
    target = tmp_path / name
    shutil.copy(parts[0], target)
    with pytest.raises(InputError, match=message):
        resolve_model(str(target))


@pytest.mark.parametrize("which", ["missing", "second"])
def test_split_errors_exit_1_without_a_traceback(tmp_path: Path, which: str) -> None:
    parts = write_deepseek2(tmp_path / "m.gguf", TINY_V3, split_max_tensors=13)
    given = parts[1] if which == "second" else parts[0]
    if which == "missing":
        parts[3].unlink()
    done = run_specgen("estimate", str(given), "--gpu", "rtx-4090-24gb", "--ram-gib", "128", "--cpu", "ryzen-9-7950x")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    expected = {"missing": "m-00004-of-00004.gguf, not found", "second": "give its first part, "}[which]
    assert expected in done.stderr, done.stderr


@pytest.mark.parametrize("count", [2**16, 10**9, 2**64 - 1])
def test_a_split_count_no_gguf_split_writes_is_refused_at_once(tmp_path: Path, count: int) -> None:
    """fuzz26 H1: a 700-byte first part whose split.count was 10^9 formed every part's name before looking for part 2
    (>120 s, 5 GB). llama-gguf-split writes split.count as uint16: a larger count is refused, naming the key."""
    path = tmp_path / f"m-00001-of-{count:05d}.gguf"
    writer = gguf.GGUFWriter(str(path), "deepseek2")
    add_deepseek2_metadata(writer, TINY_V3, True)
    writer.add_uint64("split.count", count)
    writer.add_uint16("split.no", 0)
    writer.add_int32("split.tensors.count", 4)
    writer.add_tensor("output.weight", np.zeros((8,), np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(InputError, match=rf"GGUF split.count {count:,} is more parts than llama-gguf-split writes"):
        resolve_model(str(path))


@pytest.mark.parametrize("part", [1, 3])
def test_every_part_of_a_split_gguf_stays_inside_the_repository(tmp_path: Path, part: int) -> None:
    """fuzz26 M1: only the first part was held inside the repository; a later part linked outside it was read."""
    repo = tmp_path / "repo"
    repo.mkdir()
    parts = split_set(repo, "a", 13)
    outside = tmp_path / parts[part].name
    parts[part].rename(outside)
    parts[part].symlink_to(outside)
    with pytest.raises(InputError, match=rf"model path .*{parts[part].name}' resolves outside the repository"):
        resolve_model(str(parts[0]), root=str(repo))
    resolve_model(str(parts[0]))  # read as given where no repository holds it


def test_a_split_gguf_is_refused_where_vllm_would_serve_it(tmp_path: Path) -> None:
    """fuzz26 H2: a split GGUF on bought servers was rendered for vLLM, which loads a GGUF from one file only; on
    hardware.fixed (llama.cpp, which loads every part) it is planned."""
    (tmp_path / ".git").mkdir()
    parts = split_set(tmp_path, "sp", 13)
    rel = parts[0].relative_to(tmp_path)
    served = (
        f"version: 1\nname: wd\ndeployments:\n  - name: chat\n    model: ./{rel}\n"
        "    inference: {max_context_tokens: 2048, requests_per_second: 1}\n"
    )
    (tmp_path / "w.yaml").write_text(served + "hardware: {provider: baremetal, gpus: [l40s-48gb]}\n")
    done = run_specgen("validate", "w.yaml", cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"w.yaml:5:12: deployments[0].model: ./{rel} is the first of a GGUF split into 4 files, and vLLM loads" in (
        done.stderr
    )
    fixed = "hardware: {provider: baremetal, fixed: {gpu: rtx-4090-24gb, gpu_count: 1, ram_gib: 64}}\n"
    (tmp_path / "w.yaml").write_text(served + fixed)
    assert run_specgen("validate", "w.yaml", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize(
    ("changes", "mla", "extra", "message"),
    [
        pytest.param(
            {"kv_lora_rank": 0}, True, {},
            "GGUF key 'deepseek2.attention.kv_lora_rank' (config field 'kv_lora_rank') = 0 is out of range", id="kv-rank",
        ),
        pytest.param(
            {"qk_nope_head_dim": 2**20}, True, {},
            "GGUF keys 'deepseek2.attention.key_length_mla' minus 'deepseek2.rope.dimension_count' (config field "
            "'qk_nope_head_dim') = 1048576 is out of range", id="key-width",
        ),
        pytest.param(
            {"n_shared_experts": 2**20}, True, {},
            "GGUF key 'deepseek2.expert_shared_count' (config field 'n_shared_experts') = 1048576", id="shared-experts",
        ),
        pytest.param(
            {"num_key_value_heads": 2**31}, False, {},
            "GGUF key deepseek2.attention.head_count_kv is 2,147,483,648: a file converted before MLA caching holds the "
            "model's KV heads, from 1 to its 4 attention heads", id="legacy-kv-heads",
        ),
        pytest.param(
            {"num_key_value_heads": 0}, False, {}, "GGUF key deepseek2.attention.head_count_kv is 0:", id="legacy-no-kv-heads"
        ),
        pytest.param(
            {"scoring_func": "softmax"}, True, {"deepseek2.expert_gating_func": 99},
            "GGUF key deepseek2.expert_gating_func is 99, not a router llama.cpp knows (1 softmax, 2 sigmoid)", id="gating",
        ),
        pytest.param(
            {"first_k_dense_replace": 10}, True, {},
            "GGUF key deepseek2.leading_dense_block_count is 10, not from 0 to the file's 3 layers", id="dense-layers",
        ),
    ],
)  # fmt: skip
def test_a_deepseek2_value_out_of_range_is_named_by_its_gguf_key(
    tmp_path: Path, changes: dict[str, Any], mla: bool, extra: dict[str, int], message: str
) -> None:
    """fuzz26 L1, L2, L4: the MLA keys and widths made of them were named as config.json fields the file does not have;
    a pre-MLA file's KV heads were unchecked; an unknown router was read as softmax; dense layers beyond the file's."""
    path = tmp_path / "m.gguf"
    write_deepseek2_header(path, TINY_V3 | changes, mla, extra)
    with pytest.raises(InputError, match=re.escape(message)):
        resolve_model(str(path))
