"""The yes/no schema check (:mod:`generator.workload.schema_subset`) gives jsonschema's verdict.

``validate_document`` skips jsonschema when the subset check says a document is valid, so the two must
agree: on the shipped examples, on every keyword's edge cases (table), on generated values (hypothesis)
and on mutated workloads (hypothesis). jsonschema is the oracle throughout.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from generator.workload import load_workload
from generator.workload.loader import read_yaml
from generator.workload.schema import _validator, workload_schema
from generator.workload.schema_subset import KEYWORDS, conforms, supported
from tests.conftest import REPO
from tests.helpers import VALID
from tests.test_hostile import FIXED, TRAINING

EXAMPLES = sorted((REPO / "examples").rglob("*.yaml"))
SETTINGS = settings(max_examples=300, derandomize=True, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])  # fmt: skip


def _oracle(schema: Any, value: Any) -> bool:
    return Draft202012Validator(schema).is_valid(value)


def _full(value: Any) -> bool:
    """The project's full validator (jsonschema with the linear ``uniqueItems``) finds no error."""
    return next(iter(_validator().iter_errors(value)), None) is None


def test_the_shipped_schema_is_decided_by_the_subset_check() -> None:
    # otherwise every file silently takes the slow path
    assert supported(workload_schema())


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_shipped_examples_agree(path: Path) -> None:
    data = read_yaml(str(path)).data
    assert conforms(workload_schema(), data) == _full(data) == _oracle(workload_schema(), data)


#: (schema, values): each value is judged by both checks.
VALUES: list[Any] = [None, True, False, 0, 1, -1, 1.0, 1.5, -0.0, 2**63, 1e300, "", "a", "ab", "1", [], [1], [1, 1.0],
                     [True, 1], [1, 2], ["a", "a"], [{"a": 1}, {"a": 1.0}], {}, {"a": 1}, {"b": "x"},
                     {"a": 1, "b": 2}, {"ab": "x", "c": 1}]  # fmt: skip
TABLE: list[Any] = [
    {"type": "integer"},
    {"type": "number"},
    {"type": "string"},
    {"type": "boolean"},
    {"type": "null"},
    {"type": "object"},
    {"type": "array"},
    {"type": ["string", "null"]},
    {"properties": {"a": {"type": "integer"}}},
    {"properties": {"a": {"type": "string"}}, "additionalProperties": False},
    {"additionalProperties": {"type": "integer"}},
    {"patternProperties": {"^a": {"type": "integer"}}},
    {"properties": {"b": {}}, "patternProperties": {"^a": {}}, "additionalProperties": False},
    {"required": ["a"]},
    {"enum": [1, "a", None]},
    {"enum": [True]},
    {"enum": [[1, 2]]},
    {"const": 1},
    {"const": False},
    {"const": {"a": 1}},
    {"minimum": 1},
    {"maximum": 1},
    {"exclusiveMinimum": 0},
    {"exclusiveMaximum": 1},
    {"minimum": 0.5, "maximum": 1.5},
    {"minLength": 1},
    {"maxLength": 1},
    {"pattern": "^[a-z]+$"},
    {"pattern": "b"},
    {"items": {"type": "integer"}},
    {"items": False},
    {"minItems": 1},
    {"maxItems": 1},
    {"uniqueItems": True},
    {"uniqueItems": False},
    {"oneOf": [{"type": "integer"}, {"type": "number"}]},
    {"oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
    {"not": {"type": "string"}},
    {"propertyNames": {"pattern": "^a"}},
    {"propertyNames": {"maxLength": 0}},
    {"type": "object", "title": "t", "description": "d", "default": {}},
    True,
    False,
]


@pytest.mark.parametrize("schema", TABLE, ids=[str(s) for s in TABLE])
def test_each_keyword_agrees_with_jsonschema(schema: Any) -> None:
    assert supported(schema)
    for value in VALUES:
        assert conforms(schema, value) == _oracle(schema, value), (schema, value)


def test_every_keyword_is_in_the_table() -> None:
    tabled = {key for schema in TABLE if isinstance(schema, dict) for key in schema}
    assert set(KEYWORDS) <= tabled


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#/$defs/a"},
        {"dependentSchemas": {"a": {}}},
        {"patternProperties": {"^a": {"format": "ipv4"}}},
        {"if": {"type": "string"}, "then": {"minLength": 1}},
        {"format": "ipv4"},
        {"anyOf": [{}]},
        {"properties": {"a": {"unevaluatedProperties": False}}},
        {"oneOf": [{"dependentRequired": {}}]},
        {"not": {"contains": {}}},
        {"items": [{"type": "string"}]},
        {"type": "integer-ish"},
        {"minimum": "1"},
        {"minLength": -1},
        {"required": "a"},
        {"uniqueItems": 1},
        "not a schema",
    ],
)
def test_other_keywords_and_forms_are_left_to_jsonschema(schema: Any) -> None:
    assert not supported(schema)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
    max_leaves=12,
)  # fmt: skip


@SETTINGS
@given(schema=st.sampled_from(TABLE), value=JSON)
def test_generated_values_agree(schema: Any, value: Any) -> None:
    assert conforms(schema, value) == _oracle(schema, value)


def _bases() -> list[Any]:
    from ruamel.yaml import YAML

    out = [read_yaml(str(p)).data for p in EXAMPLES]
    out += [YAML(typ="safe", pure=True).load(text) for text in (VALID, TRAINING, FIXED)]
    return out


DOCUMENTS = _bases()
LEAF = st.none() | st.booleans() | st.integers(-5, 10**6) | st.sampled_from([0.0, 0.5, 1.0, -1.0, 1e9, 2.5, math.pi]) | (
    st.sampled_from(["", "x", "bf16", "fp8", "int4", "h100-sxm5-80gb", "baremetal", "aws", "lora", "full", "A", "a" * 300])
)  # fmt: skip


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += _paths(value, (*path, i))
    return found


@st.composite
def mutated(draw: st.DrawFn) -> Any:
    """A shipped or test workload with one to three edits: a value replaced, a key dropped, a key added."""
    doc = copy.deepcopy(draw(st.sampled_from(DOCUMENTS)))
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent: Any = doc
        for key in path[:-1]:
            parent = parent[key]
        action = draw(st.sampled_from(["replace", "drop", "add", "duplicate"]))
        if action == "replace":
            parent[path[-1]] = draw(LEAF | JSON)
        elif action == "drop":
            del parent[path[-1]]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "gpu", "count", "name", "precision", "slo"]))] = draw(LEAF)
        elif action == "duplicate" and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[path[-1]]))
    return doc


@SETTINGS
@given(doc=mutated())
def test_mutated_workloads_agree(doc: Any) -> None:
    assert conforms(workload_schema(), doc) == _full(doc)


def test_a_valid_file_is_loaded_without_jsonschema(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import sys\nfrom generator.workload import load_workload\n"
        f"load_workload({str(REPO / 'examples' / 'chat-70b.yaml')!r})\n"
        "print('jsonschema' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO).stdout
    assert out.strip() == "False"
    assert load_workload(str(REPO / "examples" / "chat-70b.yaml")).workload.name
