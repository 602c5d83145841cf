"""The fast block-YAML emitter writes ruamel.yaml's bytes, or declines (then ruamel writes the document)."""

from __future__ import annotations

import math
from typing import Any

import pytest
import yaml as pyyaml  # type: ignore[import-untyped]
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.render.env import ruamel_yaml, to_yaml, unsafe_strings
from generator.render.yaml_emit import Block, NotEmittedError, Unsafe, emit
from generator.render.yaml_implicit import STR_TAG, go_reads_as_string, implicit_tags

#: Characters that steer ruamel's choices: blanks (folding), indicators, quotes, digits and dots (implicit
#: numbers), a non-ASCII letter and a tab (escaped, so declined).
_ALPHABET = "ab yz:#-'\"./0123456789,[]{}&*!|>%@`?~=<eé\t"
_WORDS = st.sampled_from(
    ["yes", "no", "on", "Off", "null", "~", "true", "12.8", "1e3", "0o17", "1_000", "2025-01-01", "=", "<<", "-", "--- x", ""]
)
_TEXT = st.one_of(
    _WORDS,
    st.text(alphabet=_ALPHABET, max_size=12),
    st.lists(st.text(alphabet="abc xyz", min_size=1, max_size=9), max_size=20).map(" ".join),
)
#: Literal blocks as the renderers make them: a visible first character, no blanks ending a line, one final line break.
_BLOCK = st.tuples(
    st.text(alphabet="abc:#'-", min_size=1, max_size=9),
    st.lists(st.text(alphabet="abc :#'-", max_size=20).filter(lambda line: not line.endswith(" ")), max_size=4),
).map(lambda parts: Block("\n".join([parts[0], *parts[1]]) + "\n"))
_SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**25), max_value=10**25),
    st.floats(allow_nan=True, allow_infinity=True),
    _TEXT,
    _TEXT.map(Unsafe),
    _BLOCK,
)
_KEY = st.one_of(_WORDS, st.text(alphabet="abcxyz_-./ :'0123", min_size=1, max_size=20))
_DATA = st.recursive(
    _SCALAR,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_KEY, inner, max_size=4)),
    max_leaves=25,
)


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.dictionaries(_KEY, _DATA, min_size=1, max_size=5), st.lists(_DATA, min_size=1, max_size=4)))
def test_emit_writes_ruamels_bytes_or_declines(value: Any) -> None:
    data = _sorted(value)
    try:
        mine = emit(data)
    except NotEmittedError:
        return
    assert mine == ruamel_yaml(data)


def _single_blanks(text: str) -> bool:
    """No blank runs: ruamel folds a long line after a run of blanks, and the reader keeps only one of them."""
    return "  " not in text


#: Data whose floats print without an exponent (``1e-05`` is a string to a YAML 1.1 reader, with either emitter).
_DATA_11 = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False).filter(lambda f: "e" not in repr(f)),
        _TEXT.filter(_single_blanks),
        _TEXT.filter(_single_blanks).map(Unsafe),
        _BLOCK,
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_KEY, inner, max_size=4)),
    max_leaves=25,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(alphabet="abcdefgh_", min_size=1, max_size=12), _DATA_11, min_size=1, max_size=5))
def test_to_yaml_reads_back_with_a_real_parser(value: Any) -> None:
    """What ``to_yaml`` writes (fast path or not) reads back as the same data with PyYAML (YAML 1.1)."""
    data = _sorted(value)
    back = pyyaml.load(to_yaml(data), Loader=_AnsibleLikeLoader)
    assert _plain(back) == _plain(_for_yaml11(data))


class _AnsibleLikeLoader(pyyaml.SafeLoader):  # type: ignore[misc]
    """PyYAML's safe loader that reads ``!unsafe`` scalars as strings, as Ansible does."""


_AnsibleLikeLoader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))


def _for_yaml11(value: Any) -> Any:
    """What a reader gets back: blocks and unsafe strings are strings, trailing line blanks dropped."""
    if isinstance(value, dict):
        return {k: _for_yaml11(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_for_yaml11(v) for v in value]
    if isinstance(value, Block):
        return "\n".join(line.rstrip(" ") for line in str(value).split("\n"))
    if isinstance(value, str):
        return str(value)
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param({"a": [[1, 2], [3]]}, "a:\n  -   - 1\n      - 2\n  -   - 3\n", id="list-in-list"),
        pytest.param([1, {"a": 1}, "b"], "  - 1\n  - a: 1\n  - b\n", id="root-list"),
        pytest.param({"k": "yes", "y": 1}, "k: 'yes'\n'y': 1\n", id="yaml11-bools-quoted"),
        pytest.param({"v": "580.105.08", "w": "12.8"}, "v: 580.105.08\nw: '12.8'\n", id="versions"),
        pytest.param({"c": Block("a\n b\n")}, "c: |\n  a\n   b\n", id="literal"),
        pytest.param({"u": Unsafe("it's")}, "u: !unsafe 'it''s'\n", id="unsafe"),
        pytest.param({"k": "0X1F", "o": "0O17", "b": "0B11"}, "b: '0B11'\nk: '0X1F'\no: '0O17'\n", id="go-radix-quoted"),
        pytest.param({"u": "0_x1F", "e": "1e3_", "d": ".5e3"}, "d: '.5e3'\ne: '1e3_'\nu: '0_x1F'\n", id="go-numbers-quoted"),
        pytest.param({"0X1F": "2001-1-1"}, "'0X1F': '2001-1-1'\n", id="go-key-and-date-quoted"),
        pytest.param(["0x", "1.2.3", "v1e3"], "  - 0x\n  - 1.2.3\n  - v1e3\n", id="go-strings-plain"),
        pytest.param({"t": "a\tb"}, None, id="escaped-declined"),
        pytest.param({"n": "two\nlines"}, None, id="line-break-declined"),
    ],
)
def test_emit_table(value: Any, expected: str | None) -> None:
    if expected is None:
        with pytest.raises(NotEmittedError):
            emit(value)
        return
    assert emit(value) == expected == ruamel_yaml(value)


def test_long_values_fold_like_ruamel() -> None:
    value: dict[str, Any] = {
        "cpu": unsafe_strings({"description": "2x Intel Xeon Platinum 8480C (Sapphire Rapids, NVIDIA DGX custom SKU)"})
    }
    value["plain"] = "word " * 20 + "end"
    value["long"] = "x" * 90
    value["list"] = ["q " * 40 + "r"]
    data = _sorted(value)
    assert emit(data) == ruamel_yaml(data)
    assert "\n    DGX custom SKU)'" in emit(data)


#: Characters of numbers, dates and words in every reader's eyes (Go's radix prefixes and exponents included).
_NUMBERISH = "0123456789_.+-:eExXoObBpPiInNfFtTyY Z"


@settings(max_examples=3000, deadline=None, database=None, derandomize=True)
@given(st.text(alphabet=_NUMBERISH, max_size=10))
def test_a_string_written_plain_is_a_string_to_every_reader(text: str) -> None:
    """YAML 1.1 (PyYAML, Ansible), YAML 1.2 (ruamel) and Go (kubectl, Helm) all read a plain string back as a string."""
    value = {"k": text, text or "e": "v"}
    try:
        written = emit(value)
    except NotEmittedError:
        return
    assert written == ruamel_yaml(value)
    for line in written.splitlines():
        key, _, scalar = line.partition(": ")
        for plain in (key, scalar):
            if plain and plain[0] != "'":
                assert implicit_tags(plain) == (STR_TAG, STR_TAG), plain
                assert go_reads_as_string(plain), plain
