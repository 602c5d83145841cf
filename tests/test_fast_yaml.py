"""The libyaml fast path reads a document exactly as ruamel's round-trip path does, or leaves it to ruamel."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.errors import InputError
from generator.workload import fast_yaml, loader
from generator.workload.fast_yaml import read_plain_document

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import scale  # noqa: E402


def _typed(value: Any) -> Any:
    """The value with each scalar's type kept (1 and 1.0 and True differ)."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)


def _ruamel(text: str) -> Any:
    """What the ruamel path makes of ``text``: (data, positions, key positions), or the error it raises."""
    try:
        with mock.patch.object(loader, "read_plain_document", return_value=None):
            doc = loader.parse_yaml(text, "w.yaml")
    except InputError as exc:
        return ("error", str(exc))
    return _typed(doc.data), doc._positions, doc._key_positions


def _both(text: str) -> tuple[Any, Any]:
    fast = read_plain_document(text, loader.MAX_NODES)
    if fast is None:
        return None, None
    data, positions, keys = fast
    return (_typed(data), positions, keys), _ruamel(text)


def _corpus() -> list[Path]:
    files = sorted((ROOT / "examples").rglob("*.yaml")) + sorted((ROOT / "tests").rglob("*.yaml"))
    return [f for f in files if "golden" not in f.parts]


@pytest.mark.parametrize("path", _corpus(), ids=lambda p: str(p.relative_to(ROOT)))
def test_shipped_files_read_alike(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    fast, slow = _both(text)
    assert fast == slow


def test_generated_workloads_take_the_fast_path_and_read_alike() -> None:
    for i in range(60):
        text = scale.workload_text(i)
        fast, slow = _both(text)
        assert fast is not None, text
        assert fast == slow


_PLAIN = st.sampled_from(
    ["yes", "on", "True", "FALSE", "null", "~", "Null", "0", "-0", "+5", "007", "1.50", ".5", "1.", "1e3", "0o17", "0x1f",
     "1_000", "2025-01-01", "12:30", ".inf", "-.nan", "<<", "=", "a b", "ab:c", "_x", "/p", "e5", "1.2.3", "x #y", "",
     # fuzz31 items 4 and 10: floats YAML 1.1 and 1.2 read differently, out of range, or numbers to ruamel alone
     "1_0.0", "1E1", "1.0e3", "1.0e+3", ".5e1", ".5e+1", "-.5", "1e400", "1e-400", "1" + "0" * 400 + ".0", "2_", "+_", "._"]
)  # fmt: skip
_QUOTED = st.text(alphabet="ab '\"\\:#-", max_size=8).map(lambda s: "'" + s.replace("'", "''") + "'") | st.text(
    alphabet="ab :#-", max_size=8
).map(lambda s: '"' + s + '"')
_SCALAR_TEXT = _PLAIN | _QUOTED
_KEY_TEXT = st.sampled_from(["a", "b", "name", "true", "1", "'q'", '"d"', "a b", "<<", "x-y"])


@st.composite
def _documents(
    draw: st.DrawFn,
    depth: int = 0,
    indent: int = 0,
    scalars: st.SearchStrategy[str] = _SCALAR_TEXT,
    keys: st.SearchStrategy[str] = _KEY_TEXT,
    kinds: tuple[str, ...] = ("scalar", "scalar", "map", "seq", "flow", "empty"),
) -> str:
    """A block mapping of random keys and scalars, nested mappings, block and flow sequences, with comments."""
    pad = " " * indent
    lines = []
    names = draw(st.lists(keys, min_size=1, max_size=4))
    for key in names:
        kind = draw(st.sampled_from(kinds if depth < 3 else ("scalar",)))
        comment = draw(st.sampled_from(["", "", "  # note"]))
        if kind == "scalar":
            lines.append(f"{pad}{key}: {draw(scalars)}{comment}")
        elif kind == "empty":
            lines.append(f"{pad}{key}:{comment}")
        elif kind == "map":
            lines.append(f"{pad}{key}:{comment}")
            lines.append(draw(_documents(depth + 1, indent + draw(st.sampled_from([2, 4])), scalars, keys, kinds)))
        elif kind == "seq":
            lines.append(f"{pad}{key}:")
            dash = pad + draw(st.sampled_from(["", "  "]))
            for _ in range(draw(st.integers(min_value=1, max_value=3))):
                lines.append(f"{dash}- {draw(scalars)}")
        else:
            items = draw(st.lists(scalars, max_size=3))
            lines.append(f"{pad}{key}: [{', '.join(items)}]{comment}")
    return "\n".join(lines)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_documents())
def test_random_documents_read_alike_or_go_to_ruamel(text: str) -> None:
    fast, slow = _both(text + "\n")
    assert fast == slow


#: Scalars the fast path reads itself (so most documents built from them take it).
_FRIENDLY = (
    st.sampled_from(["yes", "on", "True", "FALSE", "null", "~", "0", "-0", "+5", "007", "1.50", "a b", "ab:c", "_x", "/p"])
    | _QUOTED
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _documents(
        scalars=_FRIENDLY,
        keys=st.text(alphabet="abcxyz_-", min_size=1, max_size=6),
        kinds=("scalar", "scalar", "map", "seq", "flow"),
    ).filter(lambda text: read_plain_document(text + "\n", loader.MAX_NODES) is not None)
)
def test_ordinary_random_documents_read_alike(text: str) -> None:
    fast, slow = _both(text + "\n")
    assert fast == slow


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("a: &x 1\nb: *x\n", id="alias"),
        pytest.param("a: !foo 1\n", id="custom-tag"),
        pytest.param("a: 1\na: 2\n", id="duplicate-key"),
        pytest.param("%YAML 1.1\n---\na: yes\n", id="directive"),
        pytest.param("a: [\n", id="syntax-error"),
        pytest.param("a: 1\n---\nb: 2\n", id="two-documents"),
        pytest.param("- 1\n", id="root-list"),
        pytest.param("a: 1e3\n", id="exponent-float"),
        pytest.param("a:\n  <<: {b: 1}\n", id="merge-key"),
        pytest.param("a: .inf\n", id="non-finite"),
        pytest.param("1: a\n", id="int-key"),
        pytest.param("a: 'two\n  lines'\n", id="multi-line-quoted"),
    ],
)
def test_unusual_documents_are_left_to_ruamel(text: str) -> None:
    assert read_plain_document(text, loader.MAX_NODES) is None


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x2FF) | st.sampled_from("\t\n\r!%\ufeff\ud7ff\ue000\ufffe"), max_size=40))
def test_ascii_screen_agrees_with_the_full_character_test(text: str) -> None:
    """The ASCII-only pattern refuses exactly what the full pattern refuses, on ASCII and non-ASCII text."""
    assert fast_yaml._outside(text) == (re.search(fast_yaml._OUTSIDE, text, re.MULTILINE) is not None)


def _nested_keys(levels: int, last: str = "v: 1") -> str:
    """``levels`` block mappings, one in another (``k0:`` at column 1, ``k1:`` at column 3...), ``last`` innermost."""
    return "".join("  " * i + f"k{i}:\n" for i in range(levels - 1)) + "  " * (levels - 1) + last + "\n"


_TOO_DEEP = "YAML error: the document is nested too deeply (more than 100 levels of mappings and lists)"


_FLOW_TOO_DEEP = "YAML error: the document is nested too deeply (flow brackets [ and { more than 20 deep)"


@pytest.mark.parametrize(
    ("text", "place", "flow_place"),
    [
        # the 101st mapping starts at its key "v", line 101 after 200 blanks; ruamel's composer builds it
        pytest.param(_nested_keys(101), "101:201", None, id="block-101"),
        # too deep for ruamel's composer (it recurses): the same node is found in its event stream
        pytest.param(_nested_keys(300), "101:201", None, id="block-300"),
        # "a: " then brackets: the root is level 1, the bracket at column 4 level 2, the one at column 103 level 101;
        # a file is refused before any parser at its 21st flow bracket, column 24 (fuzz25 H1)
        pytest.param("a: " + "[" * 100 + "]" * 100 + "\n", "1:103", "1:24", id="flow-101"),
        # libyaml composes it (the fast path declines), ruamel's composer runs out of stack
        pytest.param("a: " + "[" * 300 + "]" * 300 + "\n", "1:103", "1:24", id="flow-300"),
        # 50 block mappings, "v: " at line 50 column 99, brackets from column 102 (level 51): level 101 at 152
        pytest.param(_nested_keys(50, "v: " + "[" * 60 + "]" * 60), "50:152", "50:122", id="block-then-flow"),
    ],
)
def test_too_deep_a_document_is_refused_at_the_node_past_the_limit(text: str, place: str, flow_place: str | None) -> None:
    expected = f"w.yaml:{place}: {_TOO_DEEP}"
    assert read_plain_document(text, loader.MAX_NODES) is None  # the fast paths leave it to ruamel's
    with pytest.raises(InputError) as caught:
        loader.parse_yaml(text, "w.yaml")
    said = expected if flow_place is None else f"w.yaml:{flow_place}: {_FLOW_TOO_DEEP}"
    assert str(caught.value) == said
    assert _ruamel(text) == ("error", said)
    assert str(loader._first_too_deep(text, "w.yaml")) == expected  # the event scan finds the node _plain refuses


@pytest.mark.parametrize(
    "text", [_nested_keys(100), _nested_keys(80, "v: " + "[" * 20 + "]" * 20)], ids=["block-100", "flow-100"]
)
def test_a_document_100_levels_deep_is_read_alike_by_every_path(text: str) -> None:
    fast, slow = _both(text)
    assert fast is not None
    assert fast == slow
