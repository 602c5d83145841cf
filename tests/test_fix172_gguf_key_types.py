"""fix172 item 3: a GGUF key the estimate reads, of another value type than llama.cpp reads it as, is refused.

The estimate read some keys leniently: a ``block_count`` stored as float32 32.0 was 32 layers, a one-value array of a
scalar key its value, a ``rope.scaling.factor`` stored as text no scaling, a ``general.file_type`` as text a mixed file.
llama.cpp's loader refuses each ("key ... has wrong type ... but expected type ...", ``GGUFMeta::GKV::validated_get``;
an array only for the three keys ``get_key_or_arr`` reads). Table: every key the estimate reads x every wrong type,
written by gguf-py's writer; each must be an InputError naming the file, the key, the type found and the type
expected, and the CLI's exit code that of any other bad input file, with no traceback.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from generator.calculator.gguf_file import _KEYS
from generator.calculator.gguf_key_types import GENERAL_KEYS, PER_LAYER, ROPE_KEYS
from generator.calculator.model_source import resolve_model
from generator.errors import InputError
from tests.helpers import run_estimate

gguf = pytest.importorskip("gguf")
np = pytest.importorskip("numpy")
T = gguf.GGUFValueType

#: A valid two-layer llama header (uint32 counts, as convert_hf_to_gguf.py writes them).
BASE = {
    "llama.block_count": 2,
    "llama.embedding_length": 64,
    "llama.feed_forward_length": 128,
    "llama.attention.head_count": 4,
    "llama.attention.head_count_kv": 4,
    "llama.context_length": 2048,
}
#: Wrong values of each kind a key is read as: (value, its GGUF value type, the type's name in the refusal).
WRONG = {
    "integer": [
        ("32", T.STRING, "string"),
        (32.0, T.FLOAT32, "float32"),
        (32.0, T.FLOAT64, "float64"),
        (True, T.BOOL, "bool"),
        ([32], T.ARRAY, "array of uint32"),
        (["32", "32"], T.ARRAY, "array of string"),
    ],
    "string": [(5, T.UINT32, "uint32"), (["llama"], T.ARRAY, "array of string"), (True, T.BOOL, "bool")],
    "float": [("4.0", T.STRING, "string"), (4, T.UINT32, "uint32"), ([4.0], T.ARRAY, "array of float32")],
}
#: Every key the estimate reads of a llama file, and the kind it is read as.
READ = (
    dict(GENERAL_KEYS)
    | {f"llama.{suffix}": "integer" for suffix in (*_KEYS, "attention.value_length")}
    | {f"llama.{suffix}": kind for suffix, kind in ROPE_KEYS.items()}
)
#: The rope keys are read where the file names a scaling type (a yarn one, valid, beside the wrong key).
ROPE: dict[str, tuple[Any, Any]] = {"llama.rope.scaling.type": ("yarn", T.STRING), "llama.rope.scaling.factor": (4.0, T.FLOAT32)}


def _rows() -> list[Any]:
    rows = []
    for key, kind in READ.items():
        per_layer = key.removeprefix("llama.") in PER_LAYER
        for value, vtype, found in WRONG[kind]:
            if per_layer and found == "array of uint32":
                continue  # an array of integers, one a layer: what llama.cpp's get_key_or_arr reads
            # one a layer: the type alone is wrong
            given = value * 2 if per_layer and isinstance(value, list) and len(value) == 1 else value
            rows.append(pytest.param(key, kind, given, vtype, found, id=f"{key}-{found}"))
    return rows


def _write(path: Path, key: str, value: Any, vtype: Any) -> Path:
    writer = gguf.GGUFWriter(str(path), "llama")
    values: dict[str, tuple[Any, Any]] = {k: (v, T.UINT32) for k, v in BASE.items()}
    if key.startswith("llama.rope."):
        values |= ROPE
    values[key] = (value, vtype)
    for name, (val, kind) in values.items():
        sub = None
        if kind == T.ARRAY:
            sub = {str: T.STRING, float: T.FLOAT32, int: T.UINT32, bool: T.BOOL}[type(val[0])]
        writer.add_key_value(name, val, kind, sub)
    writer.add_tensor("token_embd.weight", np.zeros((100, 64), np.float16))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


@pytest.mark.parametrize(("key", "kind", "value", "vtype", "found"), _rows())
def test_a_key_of_the_wrong_type_is_refused_naming_file_key_and_types(
    tmp_path: Path, key: str, kind: str, value: Any, vtype: Any, found: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path / "m.gguf", key, value, vtype)
    expected = {"integer": "an integer type", "string": "string", "float": "float32"}[kind]
    with pytest.raises(InputError) as caught:
        resolve_model(str(path))
    message = caught.value.message
    assert str(path) in message and f"GGUF key {key} must be" in message
    assert f"its type is {found}, where {expected}" in message
    # the CLI: the exit code of any other bad input file, the same words, no traceback
    code, _ = run_estimate(str(path), "--gpu", "h100-sxm5-80gb")
    err = capsys.readouterr().err
    assert code == _bad_file_code(tmp_path, capsys)
    assert f"its type is {found}" in err and "Traceback" not in err


def _bad_file_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> int:
    garbage = tmp_path / "garbage.gguf"
    garbage.write_bytes(b"GGUF" + b"\xff" * 20)
    code, _ = run_estimate(str(garbage), "--gpu", "h100-sxm5-80gb")
    assert "not a readable GGUF file" in capsys.readouterr().err
    return code


#: Values of the right kind in another width, or one a layer: taken (the file then fails only for its missing layers).
TAKEN = [
    ("llama.block_count", 2, T.UINT64),
    ("llama.block_count", 2, T.INT32),
    ("llama.context_length", 2048, T.UINT16),
    ("llama.attention.head_count_kv", [4, 4], T.ARRAY),
    ("llama.feed_forward_length", [128, 128], T.ARRAY),
    ("llama.rope.scaling.factor", 4.0, T.FLOAT64),
    ("general.file_type", 1, T.INT32),
]


@pytest.mark.parametrize(("key", "value", "vtype"), TAKEN)
def test_a_key_of_the_right_kind_is_read(tmp_path: Path, key: str, value: Any, vtype: Any) -> None:
    path = _write(tmp_path / "m.gguf", key, value, vtype)
    with pytest.raises(InputError, match=re.escape("holds no tensor of layer(s) 0, 1")):  # past every key read
        resolve_model(str(path))


def test_a_float32_block_count_was_read_as_layers_before(tmp_path: Path) -> None:
    """The case the item names: 32.0 as float32 was 32 layers; llama.cpp refuses it."""
    path = _write(tmp_path / "m.gguf", "llama.block_count", 2.0, T.FLOAT32)
    with pytest.raises(InputError, match=r"llama\.block_count must be a whole number, got 2\.0: its type is float32"):
        resolve_model(str(path))


def test_an_alignment_of_another_type_is_said_by_type(tmp_path: Path) -> None:
    path = _write(tmp_path / "m.gguf", "general.alignment", "32", T.STRING)
    with pytest.raises(InputError, match=r"general\.alignment is a string \('32'\), where gguf\.md has a uint32"):
        resolve_model(str(path))
