"""Implicit typing of plain scalars without ruamel: the same tags as ruamel.yaml's resolvers, for YAML 1.1 and 1.2."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import VersionedResolver

from generator.render.yaml_implicit import implicit_tags

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
