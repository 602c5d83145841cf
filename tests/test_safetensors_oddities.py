"""review70 item 15: safetensors headers the format does not allow, once accepted silently."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from generator.calculator.model_source import resolve_model
from generator.errors import InputError
from tests.test_gguf import CONFIG, bf16_tensors, write_safetensors


def _raw_header_file(path: Path, header_json: str, data_bytes: int) -> None:
    """A safetensors file whose header is ``header_json`` as written (a duplicate key survives no dict)."""
    raw = header_json.encode()
    with path.open("wb") as fh:
        fh.write(struct.pack("<Q", len(raw)) + raw)
        fh.truncate(8 + len(raw) + data_bytes)


def test_a_tensor_named_twice_in_a_header_is_refused(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    one = '"model.norm.weight": {"dtype": "BF16", "shape": [64], "data_offsets": [%d, %d]}'
    _raw_header_file(tmp_path / "model.safetensors", "{" + one % (0, 128) + ", " + one % (128, 256) + "}", 256)
    with pytest.raises(InputError, match=r"'model\.norm\.weight' appears twice in the safetensors header"):
        resolve_model(str(tmp_path))


def test_metadata_that_is_no_string_map_is_refused(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    _raw_header_file(tmp_path / "model.safetensors", '{"__metadata__": [1, 2]}', 0)
    with pytest.raises(InputError, match=r"__metadata__ must be a map of strings to strings, got \[1, 2\]"):
        resolve_model(str(tmp_path))


def test_an_index_naming_no_shard_is_refused(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": {}}))
    with pytest.raises(InputError, match=r"model\.safetensors\.index\.json: its weight_map names no shard"):
        resolve_model(str(tmp_path))


def test_a_well_formed_checkpoint_with_string_metadata_is_read(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    write_safetensors(tmp_path / "model.safetensors", bf16_tensors())
    assert resolve_model(str(tmp_path)).architecture.file_weights is not None
