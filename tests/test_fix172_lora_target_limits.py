"""fix172 item 4: a training job's ``--lora-targets`` within the workload schema's limits, read from the schema.

The estimate took 70 names, or a name of 200 characters, where a workload's ``training.lora_target_modules`` takes 1 to
64 names of at most 128 characters: the same job was sized by one and refused by the other. Both the training option
and the served adapters' ``--lora-target-modules`` now read their limits from the schema itself.
"""

from __future__ import annotations

import json

import pytest

from generator.calculator.target_limits import SCHEMA_FIELDS, target_limits
from tests.conftest import REPO
from tests.helpers import run_estimate

TRAIN = ("Qwen/Qwen3-8B", "--gpu", "h100-sxm5-80gb", "--train", "lora")


def _schema_limits(path: tuple[str, ...]) -> tuple[int, int, int]:
    node = json.loads((REPO / "schemas" / "workload.schema.json").read_text())["properties"]["deployments"]["items"]
    for key in path:
        node = node["properties"][key]
    return node["minItems"], node["maxItems"], node["items"]["maxLength"]


@pytest.mark.parametrize("option", sorted(SCHEMA_FIELDS))
def test_the_limits_are_the_schemas(option: str) -> None:
    assert target_limits(option) == _schema_limits(SCHEMA_FIELDS[option]) == (1, 64, 128)


def _names(count: int, width: int = 6) -> str:
    return ",".join(["q_proj"] * (count - 1) + ["q_proj".rjust(width, "x")])


#: (names, the last name's characters, refused): at and just past each of the schema's limits.
ROWS = [
    (64, 6, False),
    (65, 6, True),
    (70, 6, True),
    (1, 129, True),
    (2, 200, True),
]


@pytest.mark.parametrize(("count", "width", "refused"), ROWS)
def test_training_targets_past_the_schema_are_refused(
    count: int, width: int, refused: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = run_estimate(*TRAIN, "--lora-targets", _names(count, width))
    text = capsys.readouterr().err
    assert (code == 2) is refused, text
    assert "Traceback" not in text
    fewest, most, chars = target_limits("--lora-targets")
    if count > most:
        assert f"--lora-targets takes {fewest} to {most} module names, got {count}" in text
    elif width > chars:
        assert f"--lora-targets: a name is at most {chars} characters, got {width}" in text


def test_an_empty_list_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run_estimate(*TRAIN, "--lora-targets", ",")
    text = capsys.readouterr().err
    assert code == 2 and "--lora-targets takes 1 to 64 module names, got 0" in text
