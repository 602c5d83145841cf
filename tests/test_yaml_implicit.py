"""Implicit typing of plain scalars without ruamel: the same tags as ruamel.yaml's resolvers, for YAML 1.1 and 1.2."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import VersionedResolver

from generator.render.yaml_implicit import go_reads_as_string, implicit_tags, needs_quotes

_RUAMEL = {version: VersionedResolver(version=version) for version in ((1, 1), (1, 2))}


def _ruamel_tags(text: str) -> tuple[str, str]:
    return tuple(str(_RUAMEL[v].resolve(ScalarNode, text, (True, False))) for v in ((1, 1), (1, 2)))  # type: ignore[return-value]


#: Characters every implicit type is made of, and some that none is.
_ALPHABET = "0123456789_.:-+ eExXoObBTtZz\tnNuUlLyYsSfFaAiI~<=!&*#"
#: Forms of every implicit type (and near misses) as ruamel 0.19 reads them.
_FORMS = [
    "", "~", "null", "Null", "NULL", "nULL", "y", "Y", "yes", "YES", "yEs", "n", "NO", "on", "On", "OFF", "oFf",
    "true", "True", "TRUE", "tRUE", "false", "1", "-1", "+1", "0", "00", "012", "019", "0o17", "0o", "0b101", "0b",
    "0x1F", "0xg", "1_000", "_1", "1_", "1:30", "1:30:59", "1:60", "0:30", "190:20:30.15", "1.5", "1.", ".5", "-.5",
    "+.5", "1e3", "1E+3", "1.5e-3", ".5e3", ".5e+3", "-.5e+3", "1_0.5", ".inf", "-.inf", "+.INF", ".Inf", ".nan",
    "-.nan", ".NaN", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "2001-1-1 1:02:03Z",
    "2001-12-14 21:59:43.10 +05:30", "2001-12-1", "<<", "<", "=", "==", "!", "&", "*", "**", "yes\n", "1\n", "a",
    "580.105.08", "12.8", "1.2.3", "v1", "0.0.0.0", "--1", "+-1", "1e", "e1",
]  # fmt: skip


@pytest.mark.parametrize("text", _FORMS)
def test_each_implicit_form_resolves_as_ruamel_resolves_it(text: str) -> None:
    assert implicit_tags(text) == _ruamel_tags(text)


@pytest.mark.parametrize(
    ("text", "yaml11", "yaml12"),
    [
        ("yes", "bool", "str"),
        ("012", "int", "int"),
        ("019", "str", "int"),
        ("1:30", "int", "str"),
        ("1.5", "float", "float"),
        (".5", "float", "float"),
        ("-.5", "str", "float"),
        ("2001-12-14", "timestamp", "timestamp"),
        ("", "null", "null"),
        ("<<", "merge", "merge"),
        ("580.105.08", "str", "str"),
    ],
)
def test_tags_by_hand(text: str, yaml11: str, yaml12: str) -> None:
    assert implicit_tags(text) == (f"tag:yaml.org,2002:{yaml11}", f"tag:yaml.org,2002:{yaml12}")


@settings(max_examples=3000, deadline=None, database=None, derandomize=True)
@given(st.one_of(st.text(alphabet=_ALPHABET, max_size=12), st.text(max_size=6)))
def test_implicit_tags_are_ruamels(text: str) -> None:
    assert implicit_tags(text) == _ruamel_tags(text)


# Go's readers (go-yaml v2/v3: kubectl, Helm, kustomize) ------------------------------------------------------------

#: Strings both ruamel resolvers call strings, which Go reads as something else (its value in the comment).
_GO_ONLY_NON_STRINGS = [
    "0X1F",  # ParseInt(s, 0, 64) takes an upper-case radix prefix: 31
    "0O17",  # 15
    "0B11",  # 3
    "0_x1F",  # "_" dropped first: 0x1F = 31
    "1e3_",  # 1e3 = 1000.0
    "1e3__",  # 1000.0
    ".5e3",  # ParseFloat: 500.0 (ruamel wants a signed exponent)
    "+.5e3",  # 500.0
    "+inf",  # older v2: ParseFloat on any digit-or-sign text: +Inf
    "-Infinity",  # -Inf
    "0x1p3",  # older v2: a hexadecimal float, 8.0
    "-0x1.8p1",  # -3.0
    "0b-1",  # v2's 0b branch: ParseInt("-1", 2) = -1
    "0o-7",  # v3's 0o branch: ParseInt("-7", 8) = -7
    "2001-1-1",  # time.Parse("2006-1-2"): a timestamp
    "2001-12-14T1:2:3Z",  # time.Parse("2006-1-2T15:4:5.999999999Z07:00")
    "2001-12-14 1:2:3",  # time.Parse("2006-1-2 15:4:5.999999999"): minutes and seconds of one digit
]
#: Strings Go reads as strings (what each near miss lacks in the comment).
_GO_STRINGS = [
    "0x",  # no digits after the prefix
    "0xg",
    "0x1.8",  # a hexadecimal float needs a p exponent
    "0b2",
    "0o8",
    "1e",  # an exponent needs digits
    "e1",  # e is not a number's first byte
    ".5_0",  # a leading dot: ParseFloat on the text itself, "_" kept
    "._5",
    "_1",  # _ is not a number's first byte
    "1.2.3",
    "580.105.08",
    "v1",
    "infinity",  # i is not a number's first byte
    "+nan",  # ParseFloat takes no sign before nan
    "-",
    "+",
    ".",
    "1:30",  # Go has no base 60 (YAML 1.1 readers do: quoted for them)
    "2001-1",
    "201-01-01",  # a timestamp's year has four digits
    "0\u0661",  # a non-ASCII digit is no digit to strconv
]


@pytest.mark.parametrize("text", _GO_ONLY_NON_STRINGS)
def test_go_reads_these_as_non_strings_so_they_are_quoted(text: str) -> None:
    assert _ruamel_tags(text) == ("tag:yaml.org,2002:str",) * 2  # ruamel alone would leave them plain
    assert not go_reads_as_string(text)
    assert needs_quotes(text)


@pytest.mark.parametrize("text", _GO_STRINGS)
def test_go_reads_these_as_strings(text: str) -> None:
    assert go_reads_as_string(text)


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ("0X1F", True),  # Go
        ("1:30", True),  # YAML 1.1
        ("yes", True),  # both
        ("019", True),  # a string to YAML 1.1; an int to 1.2; Go: not octal, but ParseFloat takes it: 19.0
        ("580.105.08", False),
        ("v1.2", False),
    ],
)
def test_needs_quotes_by_hand(text: str, quoted: bool) -> None:
    assert needs_quotes(text) is quoted
