"""A spec.json shape error carries the field it names (``SpecShapeError.field``), placed without reading the message.

review86: the diff's reader placed a shape error by reading the quoted field back out of its message with a regex
(``'([^']*)'``), so a field whose key holds a quote (``details.offload.bytes`` keys are the file's own) was cut at the
quote and placed at the enclosing object. The checks now raise the field with the error; these pin its place.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.errors import InputError, SpecShapeError
from generator.fleet_diff import plan_from_spec
from tests.conftest import REPO

GOLDEN = Path(REPO) / "tests" / "golden" / "chat-70b" / "spec.json"


def _placed(text: str) -> tuple[InputError, str]:
    with pytest.raises(InputError) as caught:
        plan_from_spec(text, "x/spec.json")
    err = caught.value
    assert err.location is not None and err.location.line is not None and err.location.column is not None
    return err, text.splitlines()[err.location.line - 1][err.location.column - 1 :]


@pytest.mark.parametrize("key", ["it's", "plain", "a'b'c"])
def test_a_field_whose_key_holds_a_quote_is_placed_at_its_value(key: str) -> None:
    spec = json.loads(GOLDEN.read_text())
    spec["plan"]["deployments"][0]["details"]["offload"] = {"bytes": {"gpu": 1, key: [1, 2]}}
    err, rest = _placed(json.dumps(spec, indent=2))
    assert rest.startswith("["), rest  # the bad value, not the "bytes" object around it (before review86 for a quote)
    assert f"'plan.deployments[0].details.offload.bytes.{key}' must be a number or a short text, got [1, 2]" in str(err)


def test_a_missing_key_is_placed_at_its_object() -> None:
    spec = json.loads(GOLDEN.read_text())
    del spec["plan"]["pools"][0]["nodes"]
    err, rest = _placed(json.dumps(spec, indent=2))
    assert rest.startswith("{") and str(err).endswith("not a specgen spec.json: 'plan.pools[0]' has no 'nodes'")


def test_the_error_keeps_its_field_and_its_message_without_the_file() -> None:
    err = SpecShapeError("x/spec.json", "plan.pools[0].nodes", "must be a number, got 'x'")
    assert err.field == "plan.pools[0].nodes"
    assert err.problem == "not a specgen spec.json: 'plan.pools[0].nodes' must be a number, got 'x'"
    assert str(err) == f"x/spec.json: {err.problem}" and isinstance(err, InputError)
