"""Implicit typing of plain YAML scalars under YAML 1.1 and 1.2, as ruamel.yaml's resolvers decide it.

The emitter asks, for every string it writes, whether a parser would read it back as something else (a
bool, a number, null, a date...) and then quotes it. ruamel.yaml's ``VersionedResolver`` answers that, but
importing ruamel costs about 10 ms of every ``render``; these rules answer the same without it (the tests
compare the two on generated text). The rules are the implicit types of YAML 1.1
(https://yaml.org/type/) and of YAML 1.2's core schema (https://yaml.org/spec/1.2.2/#1023-core-schema) in
the forms ruamel.yaml 0.18/0.19 accepts: a rule applies only to text starting with one of its characters,
rules are tried in order, and a rule's pattern must match from the start to the end of the text (``$``
also matches before a final line break, as in ruamel).

Kubernetes manifests are read by Go (kubectl, Helm, kustomize: go-yaml v2 and v3), whose resolver differs:
it drops every ``_`` from a scalar starting with a digit or sign and hands it to ``strconv``, which takes
upper-case radix prefixes (``0X1F``) and exponents ruamel does not (``1e3_``, ``.5e3``).
:func:`go_reads_as_string` answers for those readers, and :func:`needs_quotes` for all of them.
"""

from __future__ import annotations

import functools
import re

STR_TAG = "tag:yaml.org,2002:str"
_DIGITS = "0123456789"
_NUMBER_START = "-+" + _DIGITS

#: (tag suffix, pattern, first characters); ``""`` among the first characters: the empty text.
_Rule = tuple[str, str, str]

_BOOL_12: _Rule = ("bool", r"(?:true|True|TRUE|false|False|FALSE)$", "tTfF")
_BOOL_11: _Rule = (
    "bool",
    r"(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$",
    "yYnNtTfFoO",
)
_FLOAT_12: _Rule = (
    "float",
    r"(?:[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+"
    r"|[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)"
    r"|\.(?:nan|NaN|NAN))$",
    _NUMBER_START + ".",
)
_FLOAT_11: _Rule = (
    "float",
    r"(?:[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+"
    r"|\.[0-9_]+(?:[eE][-+][0-9]+)?"
    r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*"  # base 60
    r"|[-+]?\.(?:inf|Inf|INF)"
    r"|\.(?:nan|NaN|NAN))$",
    _NUMBER_START + ".",
)
_INT_12: _Rule = ("int", r"(?:[-+]?0b[0-1_]+|[-+]?0o?[0-7_]+|[-+]?[0-9_]+|[-+]?0x[0-9a-fA-F_]+)$", _NUMBER_START)
_INT_11: _Rule = (
    "int",
    r"(?:[-+]?0b[0-1_]+|[-+]?0?[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+"
    r"|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$",  # base 60
    _NUMBER_START,
)
#: Rules both versions share, after their own.
_COMMON: tuple[_Rule, ...] = (
    ("merge", r"<<$", "<"),
    ("null", r"(?:~|null|Null|NULL|)$", "~nN"),
    (
        "timestamp",
        r"(?:[0-9]{4}-[0-9]{2}-[0-9]{2}"
        r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?"
        r"(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)$",
        _DIGITS,
    ),
    ("value", r"=$", "="),
    ("yaml", r"[!&*]$", "!&*"),  # never a plain scalar, but a rule all the same
)
_RULES_11 = (_BOOL_11, _FLOAT_11, _INT_11, *_COMMON)
_RULES_12 = (_BOOL_12, _FLOAT_12, _INT_12, *_COMMON)


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _resolve(text: str, rules: tuple[_Rule, ...]) -> str:
    if not text:
        return "tag:yaml.org,2002:null"  # the empty text: null in both versions
    first = text[0]
    for tag, pattern, starts in rules:
        if first in starts and _compiled(pattern).match(text):
            return "tag:yaml.org,2002:" + tag
    return STR_TAG


@functools.lru_cache(maxsize=65_536)
def implicit_tags(text: str) -> tuple[str, str]:
    """The tags a plain scalar ``text`` resolves to under YAML 1.1 and under YAML 1.2."""
    return _resolve(text, _RULES_11), _resolve(text, _RULES_12)


# Go (go-yaml v2 and v3, resolve.go; https://github.com/go-yaml/yaml/blob/v3/resolve.go and its v2 branch) --------
# A plain scalar is looked up by its first byte: ``yYnNtTfFoO~`` (and the empty text) only in a table of words,
# ``.`` as a float by ``strconv.ParseFloat``, a digit or sign as a timestamp, then (``_`` removed) as an int by
# ``strconv.ParseInt(s, 0, 64)``, as a float, and by v2's ``0b``/``-0b`` and v3's ``0o``/``-0o`` branches. Each rule
# below is the union over the versions: older v2 releases call ``ParseFloat`` on any such text (hex floats,
# signed ``inf``), newer ones only on text matching ``yamlStyleFloat``. The patterns are ``strconv``'s syntax;
# values out of range, or dates Go's ``time.Parse`` rejects, count as read (more quoting, never less).

#: resolveMap: bools (v2 also y/n/on/off), nulls, infinities, NaN, merge, v3's ``-0``.
_GO_WORDS = frozenset(
    {
        *("y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE"),
        *("n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE"),
        *("", "~", "null", "Null", "NULL"),
        *(".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF"),
        *("<<", "-0", "-0.0"),
    }
)
#: ``strconv.ParseInt(s, 0, 64)``: one sign, then a ``0x``/``0b``/``0o`` prefix (either case), a leading-0 octal,
#: or decimal digits.
_GO_INT = r"[-+]?(?:0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|0[0-7]*|[1-9][0-9]*)"
#: ``strconv.ParseFloat(s, 64)``: decimal with optional exponent, hexadecimal with a required ``p`` exponent,
#: or a signed infinity (unsigned ``inf``/``nan`` never reach it: ``i`` is not a number's first byte).
_GO_FLOAT = (
    r"[-+]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
    r"|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][-+]?[0-9]+"
    r"|(?i:inf|infinity))"
)
#: v2's ``0b``/``-0b`` and v3's ``0o``/``-0o`` branches, which parse what follows the prefix (a sign included).
_GO_PREFIXED = r"-?0b[-+]?[01]+|-?0o[-+]?[0-7]+"
#: ``parseTimestamp``: four digits and ``-``, then one of the layouts ``2006-1-2``, ``2006-1-2 15:4:5.999999999``
#: and ``2006-1-2T15:4:5.999999999Z07:00`` (``T`` or ``t``; ``time.Parse`` takes a comma before the fraction too).
_GO_DATE = re.compile(
    r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}"
    r"(?:[Tt ][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:[.,][0-9]*)?(?:Z|[-+][0-9]{2}:[0-9]{2})?)?",
    re.ASCII,
)
_GO_NUMBER = re.compile(f"(?:{_GO_INT}|{_GO_FLOAT}|{_GO_PREFIXED})", re.ASCII)
#: A text starting with ``.``: ``ParseFloat`` on the text itself, ``_`` kept (allowed only between digits).
_GO_DOT_FLOAT = re.compile(r"\.[0-9](?:_?[0-9])*(?:[eE][-+]?[0-9](?:_?[0-9])*)?", re.ASCII)


@functools.lru_cache(maxsize=65_536)
def go_reads_as_string(text: str) -> bool:
    """Whether go-yaml (v2 or v3) reads the plain scalar ``text`` as a string, not a bool, number, null or date."""
    if text in _GO_WORDS:
        return False
    first = text[0]
    if first == ".":
        return _GO_DOT_FLOAT.fullmatch(text) is None
    if first not in _NUMBER_START:
        return True
    if _GO_DATE.fullmatch(text):
        return False
    return _GO_NUMBER.fullmatch(text.replace("_", "")) is None


def needs_quotes(text: str) -> bool:
    """Whether a string must be quoted: a YAML 1.1 reader (PyYAML, Ansible) or Go's reads it plain as a non-string.

    A string YAML 1.2 alone reads as a non-string is quoted by the emitters themselves, as ruamel does.
    """
    return implicit_tags(text)[0] != STR_TAG or not go_reads_as_string(text)
