"""The library-free reader reads a plain document exactly as ruamel's round-trip path does, or declines it.

Each fast reader is held to ruamel on its own (the front door, ``read_plain_document``, tries the
library-free one first, then libyaml): the shipped files, generated workloads and random documents.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.workload import loader
from generator.workload.fast_yaml import read_libyaml_document
from generator.workload.simple_yaml import read_simple_document
from tests.test_fast_yaml import _FRIENDLY, _corpus, _documents, _ruamel, _typed

ROOT = Path(__file__).resolve().parents[1]
workload_text = sys.modules["scale"].workload_text  # benchmarks/scale.py, loaded by test_fast_yaml
Reader = Callable[[str, int], Any]
READERS = [pytest.param(read_simple_document, id="simple"), pytest.param(read_libyaml_document, id="libyaml")]
#: Shipped examples the library-free reader leaves to libyaml (a form it does not read).
LEFT_TO_LIBYAML = {"small-models-gke-sharing.yaml"}


def _read(reader: Reader, text: str) -> Any:
    got = reader(text, loader.MAX_NODES)
    if got is None:
        return None
    data, positions, keys = got
    return _typed(data), positions, keys


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("path", _corpus(), ids=lambda p: str(p.relative_to(ROOT)))
def test_each_reader_reads_shipped_files_as_ruamel(reader: Reader, path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    got = _read(reader, text)
    assert got is None or got == _ruamel(text)


def test_shipped_examples_are_read_without_a_yaml_library() -> None:
    examples = sorted((ROOT / "examples").rglob("*.yaml"))
    declined = {p.name for p in examples if read_simple_document(p.read_text(encoding="utf-8"), loader.MAX_NODES) is None}
    assert declined == LEFT_TO_LIBYAML


@pytest.mark.parametrize("reader", READERS)
def test_generated_workloads_are_read_as_ruamel(reader: Reader) -> None:
    for i in range(60):
        text = workload_text(i)
        got = _read(reader, text)
        assert got is not None, text
        assert got == _ruamel(text)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_documents())
def test_random_documents_read_as_ruamel_or_declined(text: str) -> None:
    got = _read(read_simple_document, text + "\n")
    assert got is None or got == _ruamel(text + "\n")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _documents(
        scalars=_FRIENDLY,
        keys=st.text(alphabet="abcxyz_-", min_size=1, max_size=6),
        kinds=("scalar", "scalar", "map", "seq", "flow"),
    ).filter(lambda text: read_simple_document(text + "\n", loader.MAX_NODES) is not None)
)
def test_ordinary_random_documents_read_as_ruamel(text: str) -> None:
    assert _read(read_simple_document, text + "\n") == _ruamel(text + "\n")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "# c\nv: 1\nn:\n  a: 'x''y'  # c\n  b: [p, \"q r\", 2.5]\nl:\n  - k: ~\n    m: {x: true, y: -3}\n  - z\n",
            (
                {"v": 1, "n": {"a": "x'y", "b": ["p", "q r", 2.5]}, "l": [{"k": None, "m": {"x": True, "y": -3}}, "z"]},
                {(): (1, 1), ("v",): (2, 4), ("n",): (4, 3), ("n", "a"): (4, 6), ("n", "b"): (5, 6),
                 ("n", "b", 0): (5, 7), ("n", "b", 1): (5, 10), ("n", "b", 2): (5, 17), ("l",): (7, 3),
                 ("l", 0): (7, 5), ("l", 0, "k"): (7, 8), ("l", 0, "m"): (8, 8), ("l", 0, "m", "x"): (8, 12),
                 ("l", 0, "m", "y"): (8, 21), ("l", 1): (9, 5)},
                {("v",): (2, 1), ("n",): (3, 1), ("n", "a"): (4, 3), ("n", "b"): (5, 3), ("l",): (6, 1),
                 ("l", 0, "k"): (7, 5), ("l", 0, "m"): (8, 5), ("l", 0, "m", "x"): (8, 9), ("l", 0, "m", "y"): (8, 18)},
            ),
            id="every-form",
        ),
    ],
)  # fmt: skip
def test_positions_by_hand(text: str, expected: tuple[Any, Any, Any]) -> None:
    assert read_simple_document(text, loader.MAX_NODES) == expected
    assert _read(read_simple_document, text) == _ruamel(text)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("a: b\n  c\n", id="multi-line-plain"),
        pytest.param("a:\n  - b\n    c\n", id="multi-line-item"),
        pytest.param("a:\nb: 1\n", id="empty-value"),
        pytest.param("a:\n- 1\n", id="indentless-sequence"),
        pytest.param("a:\n  - - 1\n", id="sequence-in-sequence"),
        pytest.param("a:\n    b: 1\n  c: 2\n", id="uneven-dedent"),
        pytest.param("a: 'x'#c\n", id="comment-without-blank"),
        pytest.param("a: b: c\n", id="mapping-in-plain"),
        pytest.param("a:b\n", id="no-blank-after-colon"),
        pytest.param("a: [b, [c]]\n", id="nested-flow"),
        pytest.param("a: [b,]\n", id="trailing-comma"),
        pytest.param("a: [b\n", id="open-flow"),
        pytest.param('a: "x\\ty"\n', id="escape"),
        pytest.param("a: &x 1\nb: *x\n", id="alias"),
        pytest.param("a: !foo 1\n", id="tag"),
        pytest.param("a: 1\na: 2\n", id="duplicate-key"),
        pytest.param("true: 1\n", id="bool-key"),
        pytest.param("'a': 1\n", id="quoted-key"),
        pytest.param("a: |\n  x\n", id="block-scalar"),
        pytest.param("---\na: 1\n", id="document-start"),
        pytest.param("  a: 1\n", id="indented-root"),
        pytest.param("- 1\n", id="root-list"),
        pytest.param("a: 1e3\n", id="exponent"),
        pytest.param("a:\tb\n", id="tab"),
        pytest.param("a: é\n", id="non-ascii"),
        pytest.param("a: 'b\n  c'\n", id="multi-line-quoted"),
    ],
)
def test_unusual_documents_are_declined(text: str) -> None:
    assert read_simple_document(text, loader.MAX_NODES) is None


def test_a_document_past_the_value_budget_is_declined() -> None:
    text = "a: [" + ", ".join(["1"] * 9) + "]\n"
    for reader in (read_simple_document, read_libyaml_document):
        assert reader(text, 11) is not None  # the root, the list and nine items
        assert reader(text, 10) is None


@pytest.mark.parametrize("value", ["10.20.0.21", "255.255.255.0", "0.0.0.0", "01.2.3", "1.2.3.4.5.6", "1.2", "1.2.x"])
@pytest.mark.parametrize("reader", READERS)
def test_dotted_numbers_read_as_ruamel(reader: Reader, value: str) -> None:
    """An address or netmask (fuzz30's Tinkerbell hosts) read on the fast path as ruamel reads it, a string."""
    text = f"version: 1\nhosts:\n  - ip_address: {value}\n    flow: {{netmask: {value}}}\n"
    got = _read(reader, text)
    assert got is None or got == _ruamel(text)
    if value.count(".") >= 2 and value.replace(".", "").isdigit():
        assert got is not None  # read here, not left to libyaml
