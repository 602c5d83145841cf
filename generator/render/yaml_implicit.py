"""Implicit typing of plain YAML scalars under YAML 1.1 and 1.2, as ruamel.yaml's resolvers decide it.

The emitter asks, for every string it writes, whether a parser would read it back as something else (a
bool, a number, null, a date...) and then quotes it. ruamel.yaml's ``VersionedResolver`` answers that, but
importing ruamel costs about 10 ms of every ``render``; these rules answer the same without it (the tests
compare the two on generated text). The rules are the implicit types of YAML 1.1
(https://yaml.org/type/) and of YAML 1.2's core schema (https://yaml.org/spec/1.2.2/#1023-core-schema) in
the forms ruamel.yaml 0.18/0.19 accepts: a rule applies only to text starting with one of its characters,
rules are tried in order, and a rule's pattern must match from the start to the end of the text (``$``
also matches before a final line break, as in ruamel).
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
