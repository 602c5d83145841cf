"""Implicit typing of plain scalars without ruamel: the same tags as ruamel.yaml's resolvers, for YAML 1.1 and 1.2."""

from __future__ import annotations

import re

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
    ".5e1_0",  # ParseFloat takes "_" between digits: 5e9
    "+inf",  # older v2: ParseFloat on any digit-or-sign text: +Inf
    "-Infinity",  # -Inf
    "0x1p3",  # older v2: a hexadecimal float, 8.0
    "-0x1.8p1",  # -3.0
    "0b-1",  # v2's 0b branch: ParseInt("-1", 2) = -1
    "0o-7",  # v3's 0o branch: ParseInt("-7", 8) = -7
    "2001-1-1",  # time.Parse("2006-1-2"): a timestamp
    "2001-12-14T1:2:3Z",  # time.Parse("2006-1-2T15:4:5.999999999Z07:00")
    "2001-12-14 1:2:3",  # time.Parse("2006-1-2 15:4:5.999999999"): minutes and seconds of one digit
    "2001-12-14 1:2:3,5",  # a comma before the fraction
]
#: Strings Go reads as something else that a YAML 1.1 or 1.2 reader does too (quoted before Go was asked).
_GO_AND_RUAMEL_NON_STRINGS = [
    ".5_0",  # ParseFloat takes "_" between digits: 0.5
    "0x_1F",  # 31
    "1_e3",  # 1000.0
    "019",  # not octal, but ParseFloat takes it: 19.0
    "2001-12-14 21:59:43",
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
    "._5",  # a leading dot: ParseFloat on the text itself, "_" only between digits
    ".5_",
    ".5__0",
    ".5_e1",
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


@pytest.mark.parametrize("text", _GO_AND_RUAMEL_NON_STRINGS)
def test_go_reads_these_as_non_strings_too(text: str) -> None:
    assert not go_reads_as_string(text)


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


# A second reading of Go's rules, written step by step after resolve.go and strconv (ParseUint, readFloat,
# underscoreOK, special) as go_reads_as_string's patterns are not: what it calls a non-string must be quoted.


def _go_uint(s: str) -> bool:
    """``strconv.ParseUint(s, 0, 64)`` takes ``s`` (values out of range count)."""
    if not s:
        return False
    base, digits = 10, s
    if s[0] == "0":
        prefixes = {"b": 2, "B": 2, "o": 8, "O": 8, "x": 16, "X": 16}
        base, digits = (prefixes[s[1]], s[2:]) if len(s) >= 3 and s[1] in prefixes else (8, s[1:])
    return all(c in "0123456789abcdefABCDEF" and int(c, 16) < base for c in digits)


def _go_int(s: str) -> bool:
    """``strconv.ParseInt(s, 0, 64)``: one sign, then ParseUint."""
    return _go_uint(s[1:] if s[:1] in ("+", "-") else s)


def _go_underscores_ok(s: str) -> bool:
    """strconv's underscoreOK: ``_`` only between digits, or between a base prefix and a digit."""
    saw, i = "^", 0
    s = s[1:] if s[:1] in ("+", "-") else s
    hexadecimal = False
    if len(s) >= 2 and s[0] == "0" and s[1] in "bBoOxX":
        i, saw, hexadecimal = 2, "0", s[1] in "xX"
    for c in s[i:]:
        if c in "0123456789" or (hexadecimal and c in "abcdefABCDEF"):
            saw = "0"
        elif c == "_":
            if saw != "0":
                return False
            saw = "_"
        elif saw == "_":
            return False
        else:
            saw = "!"
    return saw != "_"


def _go_float(s: str) -> bool:
    """``strconv.ParseFloat(s, 64)`` takes ``s``: special() first, else readFloat over the whole text."""
    i = 1 if s[:1] in ("+", "-") else 0
    if s[i:].lower() in ("inf", "infinity") or s.lower() == "nan":
        return True
    hexadecimal = len(s) > i + 2 and s[i] == "0" and s[i + 1] in "xX"
    i += 2 if hexadecimal else 0
    digits = "0123456789abcdefABCDEF" if hexadecimal else "0123456789"
    saw_dot = saw_digits = False
    while i < len(s):
        if s[i] == "." and not saw_dot:
            saw_dot = True
        elif s[i] in digits:
            saw_digits = True
        elif s[i] != "_":
            break
        i += 1
    if not saw_digits:
        return False
    if i < len(s) and s[i] in ("pP" if hexadecimal else "eE"):
        i += 1
        i += 1 if s[i : i + 1] in ("+", "-") else 0
        if s[i : i + 1] not in tuple("0123456789"):
            return False
        while i < len(s) and s[i] in "0123456789_":
            i += 1
    elif hexadecimal:
        return False
    return i == len(s) and ("_" not in s or _go_underscores_ok(s))


#: parseTimestamp's layouts, exactly: 2006-1-2, 2006-1-2 15:4:5.999999999, 2006-1-2T15:4:5.999999999Z07:00.
_GO_TIME = re.compile(
    r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:"
    r" [0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:[.,][0-9]+)?"
    r"|[Tt][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:[.,][0-9]+)?(?:Z|[-+][0-9]{2}:[0-9]{2}))?",
    re.ASCII,
)
_GO_MAP = {
    *("y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "n", "N", "no", "No", "NO", "off", "Off", "OFF"),
    *("true", "True", "TRUE", "false", "False", "FALSE", "", "~", "null", "Null", "NULL", "<<", "-0", "-0.0"),
    *(sign + dot_word for sign in ("", "+", "-") for dot_word in (".inf", ".Inf", ".INF")),
    *(".nan", ".NaN", ".NAN"),
}


def _go_resolves_to_string(text: str) -> bool:
    """go-yaml's resolve("", text) returns !!str in v2 (old and new) and in v3."""
    if text in _GO_MAP:
        return False
    if text[0] == ".":
        return not _go_float(text)
    if text[0] not in "+-0123456789":
        return True
    if _GO_TIME.fullmatch(text):
        return False
    plain = text.replace("_", "")
    if _go_int(plain) or _go_uint(plain) or _go_float(plain):
        return False
    for prefix, base in (("0b", 2), ("0o", 8)):  # v2's and v3's branches: ParseInt(rest, base) after the prefix
        for lead, rest in ((prefix, plain[2:]), ("-" + prefix, plain[3:])):
            body = rest[1:] if rest[:1] in ("+", "-") and lead == prefix else rest
            if plain.startswith(lead) and body and all(c in "01234567"[:base] for c in body):
                return False
    return True


@pytest.mark.parametrize("text", _GO_ONLY_NON_STRINGS + _GO_AND_RUAMEL_NON_STRINGS + _GO_STRINGS)
def test_the_step_by_step_reading_agrees_on_the_tables(text: str) -> None:
    assert _go_resolves_to_string(text) == (text in _GO_STRINGS)


@settings(max_examples=4000, deadline=None, database=None, derandomize=True)
@given(st.text(alphabet="0123456789_.+-:eExXoObBpPaAfFiInNtTyYZ ,", max_size=12))
def test_what_go_reads_as_a_non_string_is_never_left_plain(text: str) -> None:
    if not _go_resolves_to_string(text):
        assert not go_reads_as_string(text)
        assert needs_quotes(text)
