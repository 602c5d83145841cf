"""Fuzzing the workload schema's fields (issue 13), with a fixed, small, derandomized budget for CI.

Every numeric field of ``schemas/workload.schema.json`` gets values at and just past its bounds and
hostile ones (NaN, infinities, huge integers, wrong types); every string field hostile strings;
and whole documents are mutated (keys dropped, sections retyped). Whatever comes in, ``specgen
plan`` ends with exit 0, 1 or 3 (an uncaught exception fails the test), within a time bound.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from generator.render.env import to_yaml
from generator.workload.schema import workload_schema
from tests.helpers import VALID, call_cli
from tests.test_hostile import FIXED, TRAINING

BUDGET = settings(
    max_examples=40,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
#: CPU seconds one case may take. Hostile values are refused in milliseconds (test_hostile holds them to 0.5 s);
#: a mutation can also yield a valid workload, and planning a training job over the whole catalog takes seconds.
MAX_CPU_S = 5.0
Path_ = tuple[str | int, ...]


def _load(text: str) -> dict[str, Any]:
    data: dict[str, Any] = YAML(typ="safe", pure=True).load(text)
    return data


BASES = {"inference": _load(VALID), "training": _load(TRAINING), "fixed": _load(FIXED)}


def _leaves(schema: dict[str, Any], path: Path_) -> Iterator[tuple[Path_, dict[str, Any]]]:
    if schema.get("type") in ("number", "integer", "string") and "properties" not in schema:
        yield path, schema
    for key, sub in schema.get("properties", {}).items():
        yield from _leaves(sub, (*path, key))
    items = schema.get("items")
    if isinstance(items, dict):
        yield from _leaves(items, (*path, 0))


FIELDS = sorted(_leaves(workload_schema(), ()), key=lambda pair: [str(p) for p in pair[0]])


def _base_for(path: Path_) -> dict[str, Any]:
    if "training" in path:
        return copy.deepcopy(BASES["training"])
    if "fixed" in path:
        return copy.deepcopy(BASES["fixed"])
    return copy.deepcopy(BASES["inference"])


def _put(doc: dict[str, Any], path: Path_, value: Any) -> None:
    node: Any = doc
    for i, key in enumerate(path[:-1]):
        nxt = path[i + 1]
        if isinstance(node, list):
            node = node[key]  # type: ignore[index]
            continue
        if key not in node or not isinstance(node[key], (dict, list)):
            node[key] = [{}] if isinstance(nxt, int) else {}
        node = node[key]
    if isinstance(node, list):
        node[path[-1]] = value  # type: ignore[index]
    else:
        node[path[-1]] = value


def _edge_numbers(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    bounds = [schema[k] for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum") if k in schema]
    near = [v for b in bounds for v in (b, b - 1, b + 1, b * 10, b / 2 if b else -1)]
    hostile = [math.nan, math.inf, -math.inf, 1e308, -1e308, 1e-300, 2**31, 2**63, 10**30, 0, -1, True, "1", None, [], {}]
    return st.sampled_from(near + hostile) | st.floats(allow_nan=True, allow_infinity=True) | st.integers()


HOSTILE_STRINGS = st.sampled_from(
    [
        "",
        "a\n",
        "{{ lookup('pipe','id') }}",
        "x" * 5000,
        "../../etc/passwd",
        "/dev/zero",
        "`\n## Approved",
        "<details open>",
        "\x00",
        "H100-SXM5-80GB",
        "ünïcödé",
    ]
) | st.text(max_size=80)


@st.composite
def field_case(draw: st.DrawFn) -> dict[str, Any]:
    path, schema = draw(st.sampled_from(FIELDS))
    doc = _base_for(path)
    if schema.get("type") == "string":
        value = draw(HOSTILE_STRINGS | st.sampled_from(schema.get("enum", ["x"])))
    else:
        value = draw(_edge_numbers(schema))
    _put(doc, path, value)
    return doc


def _run(tmp_path: Path, doc: Any) -> None:
    (tmp_path / "workload.yaml").write_text(to_yaml(doc) if isinstance(doc, (dict, list)) else str(doc))
    start = time.process_time()
    code = call_cli(tmp_path, ("plan", "workload.yaml", "--format", "json"))
    assert code in (0, 1, 3)
    assert time.process_time() - start < MAX_CPU_S


@BUDGET
@given(doc=field_case())
def test_any_field_value_is_decided_cleanly(tmp_path: Path, capsys: pytest.CaptureFixture[str], doc: dict[str, Any]) -> None:
    _run(tmp_path, doc)
    capsys.readouterr()


def _mutations(doc: Any) -> st.SearchStrategy[Any]:
    junk = st.sampled_from([None, 0, "x", [], {}, [1, "a"], {"a": 1}, math.nan])
    if isinstance(doc, dict) and doc:
        return st.one_of(
            junk,
            st.sampled_from(sorted(doc)).map(lambda k: {key: v for key, v in doc.items() if key != k}),
            st.tuples(st.sampled_from(sorted(doc)), junk).map(lambda kv: {**doc, kv[0]: kv[1]}),
        )
    if isinstance(doc, list) and doc:
        return st.one_of(junk, st.just(doc * 3), st.just(doc[:0]))
    return junk


@st.composite
def structure_case(draw: st.DrawFn) -> Any:
    doc = copy.deepcopy(BASES[draw(st.sampled_from(sorted(BASES)))])
    node: Any = doc
    parents: list[tuple[Any, Any]] = []
    for _ in range(draw(st.integers(0, 3))):
        if isinstance(node, dict) and node:
            key = draw(st.sampled_from(sorted(node)))
        elif isinstance(node, list) and node:
            key = draw(st.integers(0, len(node) - 1))
        else:
            break
        parents.append((node, key))
        node = node[key]
    mutated = draw(_mutations(node))
    if not parents:
        return mutated
    holder, key = parents[-1]
    holder[key] = mutated
    return doc


@BUDGET
@given(doc=structure_case())
def test_any_structure_mutation_is_decided_cleanly(tmp_path: Path, capsys: pytest.CaptureFixture[str], doc: Any) -> None:
    _run(tmp_path, doc)
    capsys.readouterr()
