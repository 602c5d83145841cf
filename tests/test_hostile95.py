"""Hostile local input (hostile95): safetensors files whose tensors leave holes, Markdown with ~~~ or ```` fences.

- A local safetensors header whose tensors leave a hole, or whose data section runs past its last tensor, was
  accepted (review99 item 1); the safetensors readers refuse both (``InvalidOffset``, ``MetadataIncompleteBuffer``).
- ``cut_markdown`` knew ```` ``` ```` fences only: a ``~~~`` fence, or a ```` ```` ```` one holding a ```` ``` ````,
  was cut open (review99 item 2).
"""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path
from typing import Any

import pytest

from generator.calculator.safetensors_header import read_header
from generator.errors import InputError
from generator.markdown_cut import cut_markdown


def _file(path: Path, tensors: dict[str, list[int]], data_bytes: int) -> str:
    """A safetensors file of F32 tensors at ``name -> [begin, end]`` with a data section of ``data_bytes``."""
    header = {
        name: {"dtype": "F32", "shape": [(end - begin) // 4], "data_offsets": [begin, end]}
        for name, (begin, end) in tensors.items()
    }
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"\0" * data_bytes)
    return str(path)


@pytest.mark.parametrize(
    ("tensors", "data_bytes", "message"),
    [
        # a hole before the first tensor
        ({"a": [4, 8]}, 8, "tensor 'a' begins at byte 4 and leaves bytes 0 to 4 unclaimed: the safetensors readers refuse"),
        # a hole between two tensors
        ({"a": [0, 4], "b": [8, 12]}, 12, "tensor 'b' begins at byte 8 and leaves bytes 4 to 8 unclaimed"),
        # a data section longer than the last tensor
        ({"a": [0, 4], "b": [4, 8]}, 24, "its data section is 24 bytes but its tensors end at byte 8, leaving 16 bytes"),
        # no tensor, yet data
        ({}, 8, "its data section is 8 bytes but its tensors end at byte 0, leaving 8 bytes that belong to no tensor"),
        # an overlap is said as before
        ({"a": [0, 8], "b": [4, 12]}, 12, "tensors 'a' and 'b' claim the same bytes"),
    ],
)
def test_a_local_header_whose_tensors_do_not_tile_the_data_is_refused(
    tmp_path: Path, tensors: dict[str, list[int]], data_bytes: int, message: str
) -> None:
    path = _file(tmp_path / "model.safetensors", tensors, data_bytes)
    with pytest.raises(InputError, match=re.escape(f"{path}: {message}")):
        read_header(path)


def test_a_local_header_whose_tensors_tile_the_data_is_read(tmp_path: Path) -> None:
    path = _file(tmp_path / "model.safetensors", {"b": [4, 12], "a": [0, 4]}, 12)
    assert [(t.name, t.nbytes) for t in read_header(path)] == [("b", 8), ("a", 4)]


def _fenced(fence: str, body: str, close: str | None = None) -> str:
    """A document: a line, a fence of ``fence`` holding ``body`` (ten lines), its close, and a line after."""
    return "before\n" + f"{fence}\n" + (body + "\n") * 10 + f"{close or fence.split(maxsplit=1)[0]}\n" + "after\n"


@pytest.mark.parametrize(
    ("text", "room"),
    [
        (_fenced("~~~", "xx"), 20),  # a tilde fence
        (_fenced("~~~~", "~~~"), 30),  # a shorter tilde run inside does not close it
        (_fenced("````md", "```"), 30),  # a four-backtick fence holding a three-backtick line
        (_fenced("```", "~~~"), 30),  # a tilde line inside a backtick fence is text
        (_fenced("```", "xx", "`````"), 30),  # closed by a longer run
        (_fenced("   ~~~ python", "``` x"), 30),  # indented, with an info string
    ],
)
def test_a_cut_never_ends_inside_a_fence(text: str, room: int) -> None:
    head, dropped = cut_markdown(text, room)
    assert head == "before\n"
    assert dropped == 13


@pytest.mark.parametrize(
    ("text", "room", "head"),
    [
        ("a\n``` x`y\nb\nc\nd\n", 12, "a\n``` x`y\nb\n"),  # an info string with a backtick: no fence opens
        ("a\n```\nx\n```  \nb\nc\nd\n", 16, "a\n```\nx\n```  \nb\n"),  # a close with trailing blanks closes
        ("a\n~~~\nx\n~~~\nb\nc\nd\n", 14, "a\n~~~\nx\n~~~\nb\n"),  # a closed tilde fence is kept whole
        ("a\n``\nb\nc\nd\n", 8, "a\n``\nb\n"),  # two backticks open no fence
    ],
)
def test_what_is_no_fence_or_a_closed_one_is_cut_as_text(text: str, room: int, head: Any) -> None:
    assert cut_markdown(text, room)[0] == head
