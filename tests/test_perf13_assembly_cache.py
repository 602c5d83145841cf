"""perf13: the per-plan caches of a fleet's assembly change no plan, and hand each caller its own mutable copies."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from generator.api import plan_file
from generator.planner import assembly_cache, candidates
from generator.planner.inference_details import _serving_details

CACHE: Any = assembly_cache  # its private tables, read as a test reads them


def _formed_afresh(cache: object, key: object, held: object, form: Callable[[], object], most: int = 0) -> object:
    return form()


@pytest.mark.parametrize("example", ["examples/saas-lora-adapters-aws.yaml", "examples/colo-mi300x-rocm.yaml"])
def test_plans_are_the_same_without_the_caches(example: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A plan with the caches is the plan formed with every call made afresh (LoRA details; racks under max_racks)."""
    _, cached = plan_file(example)
    monkeypatch.setattr(assembly_cache, "kept", _formed_afresh)
    _, fresh = plan_file(example)
    assert cached == fresh


def test_each_caller_gets_its_own_details_and_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutating what one call returned changes no later call's; a node's findings are appended on every call."""
    calls = {"details": 0}

    def counted(*args: Any) -> Any:
        calls["details"] += 1
        return _serving_details(*args)

    monkeypatch.setattr(assembly_cache, "_serving_details", counted)
    plan_file("examples/saas-lora-adapters-aws.yaml")
    key, (held, (details, reasons, parts)) = next(iter(CACHE._DETAILS.items()))
    args = (held[0], held[1], held[2], list(key[3]), held[3])
    before = calls["details"]
    first = CACHE.serving_details(*args)
    first[0]["co_located"] = "changed"
    first[1].append("changed")
    for value in first[0].values():
        if isinstance(value, dict):
            value["changed"] = True
    second = CACHE.serving_details(*args)
    assert calls["details"] == before  # kept: formed once
    assert second[0] == details and second[1] == reasons and second[2] is parts
    assert "changed" not in second[1] and second[0].get("co_located") != "changed"
    assert not any(isinstance(v, dict) and "changed" in v for v in second[0].values())
    assert any(isinstance(v, dict) for v in details.values())  # the LoRA detail, a dict of its own, was copied too

    node_key, (node_held, (node, said)) = next(iter(CACHE._NODES.items()))
    platform, gpu, consts = node_held
    _, _, gpus, needs, _, owned = node_key
    findings: list[Any] = ["before"]
    assert CACHE.node(platform, gpu, gpus, needs, consts, findings, owned) is node
    assert findings == ["before", *said]


def test_a_plan_starts_with_the_caches_empty() -> None:
    """Each plan forgets the last plan's entries (a catalog table replaced between plans is read afresh)."""
    plan_file("examples/chat-70b.yaml")
    CACHE._DETAILS["stale"] = ((), ({}, [], ()))
    read: Any = candidates._READ
    read[0] = (None, ())
    plan_file("examples/chat-70b.yaml")
    assert "stale" not in CACHE._DETAILS and 0 not in read
