"""Durations and money print the same figure in text and JSON (report 2, bug 12)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from generator.fleet_diff import diff_plans
from generator.units import seconds_text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (8.5, "8.5 s"),  # a cold start: not "8 s"
        (13.04, "13.04 s"),
        (3.254, "3.25 s"),
        (120.0, "120 s"),
        (0.2, "0.2 s"),
        (0.05, "0.05 s"),  # from 0.05 s on, seconds
        (0.046, "46 ms"),  # a TTFT: not "0.0 s"
        (0.008, "8 ms"),
        (0.0004, "0 ms"),
    ],
)
def test_seconds_text(seconds: float, text: str) -> None:
    assert seconds_text(seconds) == text


def _plan(usd: float, power_w: int) -> dict[str, Any]:
    pool = {"name": "p", "node": {"gpu_id": "h100-sxm5-80gb", "gpus": 8}, "nodes": 1, "power_w": power_w, "usd_per_hour": usd}
    totals = {"gpus": 8, "nodes": 1, "racks": 1, "power_w": power_w, "usd_per_month": usd * 730}
    return {"totals": totals, "pools": [pool], "deployments": []}


def test_diff_json_floats_are_rounded_to_two_places() -> None:
    old, new = _plan(98.32, 10200), _plan(126.49, 10300)
    result = diff_plans(old, new)
    usd = result["totals"]["usd_per_month"]
    # 126.49 * 730 - 98.32 * 730 = 20564.1 exactly in decimal; binary floats give 20564.100000000006
    assert 126.49 * 730 - 98.32 * 730 != 20564.1
    assert (usd["old"], usd["new"], usd["delta"]) == (71773.6, 92337.7, 20564.1)
    assert result["totals"]["power_w"]["delta"] == 100  # integers stay integers
    assert result["pools"][0]["new"]["usd_per_hour"] == 126.49
    assert '"delta": 20564.1' in json.dumps(result)


def test_no_negative_zero() -> None:
    result = diff_plans(_plan(-0.000001, 100), _plan(0.0, 100))
    assert json.dumps(result["totals"]["usd_per_month"]) == '{"old": 0.0, "new": 0.0, "delta": 0.0}'
    assert not result["pools"]  # equal once rounded


def test_every_example_says_its_planned_tpot_as_spec_json_keeps_it() -> None:
    """newuser27 item 11: TPOT 25.3 ms in the plan's reasons, 25.2 ms in the diff, which reads spec.json's tpot_s
    (rounded to 5 places): the reasons print from the rounded figure too."""
    from pathlib import Path

    for spec in sorted(Path(__file__).parent.joinpath("golden").glob("*/spec.json")):
        for dep in json.loads(spec.read_text())["plan"]["deployments"]:
            tpot = dep["details"].get("tpot_s")
            planned = [r for r in dep["reasons"] if r.startswith("at the planned load: batch")]
            if tpot is None or not planned:
                continue
            assert f"TPOT {tpot * 1000:.1f} ms" in planned[0], (spec.parent.name, dep["name"], planned[0])
