"""Small shared pieces: the list words of messages (review26 item 10) and the gguf-py release the GGUF reader needs
(review26 item 9)."""

from __future__ import annotations

import importlib.metadata
import tomllib

import gguf
import pytest

from generator.calculator.gguf_file import gguf_precision
from generator.words import listed
from tests.conftest import REPO


@pytest.mark.parametrize(
    ("words", "conjunction", "text"),
    [
        ([], "and", ""),  # review26 item 10: it raised IndexError
        (["a"], "and", "a"),
        (["a", "b"], "and", "a and b"),
        (["a", "b", "c"], "and", "a, b and c"),
        (["a", "b", "c"], "or", "a, b or c"),
        (("1", "2"), "and", "1 and 2"),  # the runners-up of assemble.twin_reasons, once its own _and
    ],
)
def test_listed_writes_a_list_as_a_sentence_does(words: list[str], conjunction: str, text: str) -> None:
    assert listed(words, conjunction) == text


def _floor() -> tuple[int, ...]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    (spec,) = [d for d in project["dependencies"] if d.startswith("gguf")]
    return tuple(int(part) for part in spec.removeprefix("gguf>=").split("."))


def test_the_gguf_floor_has_the_types_the_reader_maps() -> None:
    """gpt-oss's file type (MOSTLY_MXFP4_MOE, 38) and its experts' tensor type (MXFP4, 39) are in gguf-py from 0.19.0
    (0.18.0 has the tensor type only): with an older release a gpt-oss .gguf read as 'gguf-type38'."""
    assert _floor() >= (0, 19)
    installed = tuple(int(part) for part in importlib.metadata.version("gguf").split(".")[:2])
    assert installed >= _floor()
    assert gguf.LlamaFileType.MOSTLY_MXFP4_MOE.value == 38
    assert gguf.GGMLQuantizationType.MXFP4.value == 39
    assert gguf_precision(38) == "mxfp4_moe"
