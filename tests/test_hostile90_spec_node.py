"""hostile90: a hand-edited spec.json whose pool's node names its server with no text.

``plan.pools[i].node.platform_id`` and ``.provider`` are what the diff tells a replaced pool's hardware by; specgen
writes each as a text (``NodeSpec``). A number, a boolean or an empty text there was read as other hardware: ``diff``
said the pool "keeps its name on other hardware, h200-sxm-141gb on True" (or "on 1.50", or "on " and nothing), with
its servers drained and bought again; a node provider of 5 was read as no change. Each is now refused at its field.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.helpers import specgen_in_process as specgen
from tests.test_hostile84 import Step, _put, _where

GOOD = json.loads((REPO / "tests" / "golden" / "chat-70b" / "spec.json").read_text())
NODE = ("plan", "pools", 0, "node")

CASES = [
    ("platform-true", _put(True, *NODE, "platform_id"), (*NODE, "platform_id"), "got True"),
    ("platform-number", _put(1.5, *NODE, "platform_id"), (*NODE, "platform_id"), "got 1.5"),
    ("platform-empty", _put("", *NODE, "platform_id"), (*NODE, "platform_id"), "got ''"),
    ("platform-null", _put(None, *NODE, "platform_id"), (*NODE, "platform_id"), "got null"),
    ("platform-long", _put("p" * 201, *NODE, "platform_id"), (*NODE, "platform_id"), "got 'ppp"),
    ("provider-number", _put(5, *NODE, "provider"), (*NODE, "provider"), "got 5"),
    ("provider-mars", _put("mars", *NODE, "provider"), (*NODE, "provider"), "got 'mars'"),
    ("provider-false", _put(False, *NODE, "provider"), (*NODE, "provider"), "got False"),
]  # fmt: skip


@pytest.mark.parametrize(("edit", "steps", "said"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_pool_node_named_by_no_text_is_refused_at_its_field(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    edit: Callable[[dict[str, Any]], None],
    steps: tuple[Step, ...],
    said: str,
) -> None:
    spec = copy.deepcopy(GOOD)
    edit(spec)
    (tmp_path / "old.json").write_text(json.dumps(GOOD, indent=2))
    (tmp_path / "new.json").write_text(json.dumps(spec, indent=2))
    line, column = _where(spec, steps)
    code, out, err = specgen(capsys, "diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"))
    assert (code, out) == (1, ""), out
    field = ".".join(str(s) for s in steps).replace(".0.", "[0].")
    head = f"specgen: error: {tmp_path / 'new.json'}:{line}:{column}: not a specgen spec.json: '{field}' must be "
    assert err.startswith(head) and said in err, err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_node_without_those_keys_is_still_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A spec.json that leaves them out (as the diff's own tests write) is read as before: the same hardware."""
    spec = copy.deepcopy(GOOD)
    for pool in spec["plan"]["pools"]:
        del pool["node"]["platform_id"], pool["node"]["provider"]
    (tmp_path / "old.json").write_text(json.dumps(spec, indent=2))
    (tmp_path / "new.json").write_text(json.dumps(spec, indent=2))
    code, out, err = specgen(capsys, "diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"))
    assert code == 0 and "No change to the fleet." in out, err


GCP = json.loads((REPO / "tests" / "golden" / "chat-70b-fp8-gcp" / "spec.json").read_text())


@pytest.mark.parametrize(
    ("key", "value", "shown"),
    [("region", True, "True"), ("region", 5, "5"), ("region", "", "''"), ("zone", False, "False"), ("zone", "", "''")],
)
def test_a_region_or_zone_that_is_no_text_is_refused_at_its_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, value: Any, shown: str
) -> None:
    """hostile90: a region of true or 5 read as "No change to the fleet", '' as "us-central1 → ."."""
    spec = copy.deepcopy(GCP)
    spec["plan"][key] = value
    (tmp_path / "old.json").write_text(json.dumps(GCP, indent=2))
    (tmp_path / "new.json").write_text(json.dumps(spec, indent=2))
    line, column = _where(spec, ("plan", key))
    code, out, err = specgen(capsys, "diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"))
    assert (code, out) == (1, ""), out
    head = f"specgen: error: {tmp_path / 'new.json'}:{line}:{column}: not a specgen spec.json: 'plan.{key}' must be a text"
    assert err.startswith(head) and err.rstrip().endswith(f"or null, got {shown}"), err


@pytest.mark.parametrize(
    ("key", "value", "shown"),
    [("model_id", True, "True"), ("model_id", "", "''"), ("precision", 5, "5"), ("kv_cache_precision", False, "False")],
)
def test_a_deployment_model_or_precision_that_is_no_text_is_refused_at_its_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, value: Any, shown: str
) -> None:
    """hostile90: they were said as a change ("changed: model meta-llama/Llama-3.1-70B-Instruct → True")."""
    spec = copy.deepcopy(GOOD)
    spec["plan"]["deployments"][0][key] = value
    (tmp_path / "old.json").write_text(json.dumps(GOOD, indent=2))
    (tmp_path / "new.json").write_text(json.dumps(spec, indent=2))
    line, column = _where(spec, ("plan", "deployments", 0, key))
    code, out, err = specgen(capsys, "diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"))
    assert (code, out) == (1, ""), out
    field = f"plan.deployments[0].{key}"
    head = f"specgen: error: {tmp_path / 'new.json'}:{line}:{column}: not a specgen spec.json: '{field}' must be a text"
    assert err.startswith(head) and err.rstrip().endswith(f"or null, got {shown}"), err


@pytest.mark.parametrize(("key", "value", "shown"), [("serving_engine", True, "True"), ("task", 7, "7"), ("task", "", "''")])
def test_a_detail_written_as_text_that_is_no_text_is_refused_at_its_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, value: Any, shown: str
) -> None:
    """hostile90: an engine of true or a task of 7 was read and shown as a change of engine or task."""
    spec = copy.deepcopy(GOOD)
    spec["plan"]["deployments"][0]["details"][key] = value
    (tmp_path / "old.json").write_text(json.dumps(GOOD, indent=2))
    (tmp_path / "new.json").write_text(json.dumps(spec, indent=2))
    line, column = _where(spec, ("plan", "deployments", 0, "details", key))
    code, out, err = specgen(capsys, "diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"))
    assert (code, out) == (1, ""), out
    field = f"plan.deployments[0].details.{key}"
    head = f"specgen: error: {tmp_path / 'new.json'}:{line}:{column}: not a specgen spec.json: '{field}' must be a text"
    assert err.startswith(head) and err.rstrip().endswith(f"or null, got {shown}"), err
