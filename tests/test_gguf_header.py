"""The GGUF header reader against gguf-py's own reader (the oracle), on files gguf-py's writer makes.

fuzz26 H2: gguf-py's ``GGUFReader`` forms a numpy view of every array element, so a real Llama 3 header (128,256
tokens, their types, 280,147 merges) took 18 s to read; a 5-million-string array ran past 120 s at 3.3 GB.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from generator.calculator.gguf_header import (
    MAX_KEPT_ARRAY,
    EndsEarlyError,
    GgufFormatError,
    SkippedArray,
    read_gguf_header,
)

gguf = pytest.importorskip("gguf")
np = pytest.importorskip("numpy")

SIZES = {int(kind): size for kind, size in gguf.GGML_QUANT_SIZES.items()}


def write(path: Path, tokens: int = 8, extra: dict[str, object] | None = None) -> Path:
    """A two-layer llama GGUF with ``tokens`` tokenizer tokens and merges, F16, Q8_0 and F32 tensors."""
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_block_count(2)
    writer.add_embedding_length(64)
    writer.add_head_count(4)
    writer.add_head_count_kv([2, 2])  # a per-layer array, kept
    writer.add_token_list([f"t{i}" for i in range(tokens)])
    writer.add_token_types([1] * tokens)
    writer.add_token_merges([f"a{i} b{i}" for i in range(tokens)])
    for key, value in (extra or {}).items():
        writer.add_string(key, str(value))
    for i in range(2):
        writer.add_tensor(f"blk.{i}.attn_q.weight", np.zeros((64, 64), np.float16))
        writer.add_tensor(f"blk.{i}.ffn_up.weight", np.zeros((128, 64), np.float32))
    q8 = np.zeros((64, 64 // 32 * 34), np.uint8)  # Q8_0: blocks of 32 elements in 34 bytes
    writer.add_tensor("output.weight", q8, raw_shape=q8.shape, raw_dtype=gguf.GGMLQuantizationType.Q8_0)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_the_header_is_gguf_pys_header(tmp_path: Path) -> None:
    path = write(tmp_path / "m.gguf")
    header = read_gguf_header(str(path), SIZES)
    oracle = gguf.GGUFReader(str(path))
    # gguf-py adds the header's counts as fields of its own (GGUF.version, GGUF.kv_count, GGUF.tensor_count)
    assert header.fields == {name: f.contents() for name, f in oracle.fields.items() if not name.startswith("GGUF.")}
    assert [(t.name, t.shape, t.tensor_type, t.n_bytes) for t in header.tensors] == [
        (t.name, tuple(int(d) for d in t.shape), int(t.tensor_type), int(t.n_bytes)) for t in oracle.tensors
    ]
    assert header.fields["llama.attention.head_count_kv"] == [2, 2]
    assert {t.name: t.n_bytes for t in header.tensors}["output.weight"] == 64 * 64 // 32 * 34


def test_a_real_vocabulary_is_walked_over_not_decoded(tmp_path: Path) -> None:
    """Llama 3's 128,256 tokens and 280,147 merges: kept as their lengths, in well under the 18 s gguf-py took."""
    path = write(tmp_path / "m.gguf", tokens=280_147)
    start = time.process_time()
    header = read_gguf_header(str(path), SIZES)
    assert time.process_time() - start < 5  # a bound far from the old 18 s, not a speed target (benchmarks measure)
    assert header.fields["tokenizer.ggml.tokens"] == SkippedArray(8, 280_147)
    assert header.fields["tokenizer.ggml.token_type"] == SkippedArray(5, 280_147)
    assert len(header.tensors) == 5
    short = read_gguf_header(str(write(tmp_path / "s.gguf", tokens=MAX_KEPT_ARRAY)), SIZES)
    assert len(short.fields["tokenizer.ggml.tokens"]) == MAX_KEPT_ARRAY


def _patched(path: Path, old: bytes, new: bytes) -> None:
    data = path.read_bytes()
    assert data.count(old) == 1 and len(old) == len(new)
    path.write_bytes(data.replace(old, new))


def _big_endian(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:4] + struct.pack(">I", 3) + data[8:])


def _absurd_tensor_count(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:8] + struct.pack("<Q", 10**12) + data[16:])


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (_big_endian, r"it is a big-endian GGUF file \(version 3\), which specgen does not read"),
        (_absurd_tensor_count, r"its header counts \d+ metadata keys and 1,000,000,000,000 tensors, more than its"),
        (lambda p: _patched(p, b"general.bbbb", b"general.aaaa"), "metadata key general.aaaa appears twice"),
        (
            lambda p: _patched(p, b"blk.1.attn_q.weight", b"blk.0.attn_q.weight"),
            "tensor blk.0.attn_q.weight appears twice in the tensor table",
        ),
        (
            lambda p: _patched(p, b"\x01" + bytes(7) + b"x", b"\x01" + bytes(7) + b"\xff"),
            "the value of general.aaaa is not UTF-8",
        ),
    ],
    ids=["big-endian", "absurd-tensor-count", "duplicate-key", "duplicate-tensor", "not-utf8"],
)
def test_a_damaged_header_is_refused_in_words(tmp_path: Path, edit: Callable[[Path], None], message: str) -> None:
    path = write(tmp_path / "m.gguf", extra={"general.aaaa": "x", "general.bbbb": "y"})
    edit(path)
    with pytest.raises(GgufFormatError, match=message):
        read_gguf_header(str(path), SIZES)


def test_a_cut_file_says_how_many_bytes_it_needs(tmp_path: Path) -> None:
    path = write(tmp_path / "m.gguf")
    whole = path.read_bytes()
    path.write_bytes(whole[:-1])
    with pytest.raises(EndsEarlyError) as caught:
        read_gguf_header(str(path), SIZES)
    assert caught.value.needed == len(whole)


def test_a_large_file_s_header_is_read_without_mapping_the_file(tmp_path: Path) -> None:
    """review70 item 12: the whole file was memory-mapped to read its header: a 16 GB GGUF failed under ``ulimit -v 4000000``
    ("Cannot allocate memory"). Read now a window at a time: 16 GiB of (sparse) tensor data under a 3 GiB limit."""
    import subprocess
    import sys

    import gguf

    from tests.conftest import REPO
    from tests.helpers import write_sparse_gguf

    path = tmp_path / "big.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    write_sparse_gguf(writer, {f"blk.{i}.ffn_up.weight": (16384, 16384) for i in range(16)})  # 16 x 1 GiB of F32
    assert path.stat().st_size > 16 * 2**30
    script = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30)); "
        "from generator.calculator.gguf_file import _block_sizes; "
        "from generator.calculator.gguf_header import read_gguf_header; "
        "print(len(read_gguf_header(sys.argv[1], _block_sizes()).tensors))"
    )
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, cwd=REPO, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, "16"), done.stderr


def test_each_keys_type_is_gguf_pys(tmp_path: Path) -> None:
    """fix172 item 3: the value type of each key, as gguf-py's reader names it (an array's with its element type)."""
    path = write(tmp_path / "m.gguf", tokens=MAX_KEPT_ARRAY + 1)  # a skipped array's type is read too
    header = read_gguf_header(str(path), SIZES)
    oracle = gguf.GGUFReader(str(path))

    def name(field: object) -> str:
        kinds = [t.name.lower() for t in field.types]  # type: ignore[attr-defined]
        return kinds[0] if len(kinds) == 1 else f"array of {kinds[1]}"

    assert header.types == {n: name(f) for n, f in oracle.fields.items() if not n.startswith("GGUF.")}
    assert header.types["llama.block_count"] == "uint32" and header.types["llama.attention.head_count_kv"] == "array of int32"
