"""fix162 item 2: a spec.json deployment whose GPUs are not its layout's is refused at the field, naming the figures.

``diff`` of chat-70b's spec.json with the deployment's ``gpus`` 8 -> 16 (TP2 x PP1 x 4 replicas unchanged) said
``changed: GPUs 8 -> 16`` beside ``TP2xPP1 x4 (16 GPUs)``, exit 0. The planner writes a replica's GPUs as
``max(tp, expert_parallel) x pp`` and a deployment's as its replicas' (a split's as its parts'); README: ``diff`` reads a
spec.json only where its parts agree as the planner writes them, exit 1 otherwise at the value's file:line:col.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.cli import main
from generator.json_positions import line_column, value_offsets
from tests.conftest import REPO

GOLDEN = REPO / "tests" / "golden"


def _diff(tmp_path: Path, spec: dict[str, Any], capsys: pytest.CaptureFixture[str], golden: str) -> tuple[int, str, str]:
    new = tmp_path / "new.json"
    new.write_text(json.dumps(spec, indent=2))
    with pytest.raises(SystemExit) as done:
        main(["diff", str(GOLDEN / golden / "spec.json"), str(new)])
    return int(done.value.code or 0), capsys.readouterr().err, new.read_text()


def _place(text: str, field: str) -> str:
    line, column = line_column(text, value_offsets(text)[field])
    return f"{line}:{column}"


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("gpus", 16, "is 16, not TP 2 x PP 1 x 4 replicas = 8"),
        ("gpus", 4, "is 4, not TP 2 x PP 1 x 4 replicas = 8"),
        ("replicas", 3, "is 8, not TP 2 x PP 1 x 3 replicas = 6"),
        ("tp", 4, "is 8, not TP 4 x PP 1 x 4 replicas = 16"),
        ("pp", 2, "is 8, not TP 2 x PP 2 x 4 replicas = 16"),
    ],
)
def test_gpus_other_than_the_layout_holds_are_refused_at_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, value: int, said: str
) -> None:
    spec = json.loads((GOLDEN / "chat-70b" / "spec.json").read_text())
    dep = spec["plan"]["deployments"][0]
    assert (dep["tp"], dep["pp"], dep["replicas"], dep["gpus"]) == (2, 1, 4, 8)
    dep[key] = value
    code, err, text = _diff(tmp_path, spec, capsys, "chat-70b")
    at = _place(text, "plan.deployments[0].gpus")
    assert code == 1 and "Traceback" not in err, err
    assert f"new.json:{at}: not a specgen spec.json: 'plan.deployments[0].gpus' {said}: " in err, err


def test_expert_parallel_wider_than_tp_counts_its_gpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """test_attention_dp_plans' R1 plan: TP1 EP8 x 5 replicas on 40 GPUs, as ``Parallelism.gpus`` (max(tp, ep) x pp)."""
    spec = json.loads((GOLDEN / "chat-70b" / "spec.json").read_text())
    dep = spec["plan"]["deployments"][0]
    dep |= {"tp": 1, "replicas": 1, "gpus": 8}
    dep["details"]["expert_parallel"] = 8
    code, err, _ = _diff(tmp_path, spec, capsys, "chat-70b")
    assert code == 0, err  # 8 GPUs: EP 8 x PP 1 x 1 replica, as the planner writes it
    dep["gpus"] = 1
    code, err, _ = _diff(tmp_path, spec, capsys, "chat-70b")
    assert code == 1 and "'plan.deployments[0].gpus' is 1, not EP 8 (wider than TP 1) x PP 1 x 1 replica = 8" in err, err


def test_a_split_deployment_is_its_parts_gpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = json.loads((GOLDEN / "fleet-split" / "spec.json").read_text())
    dep = spec["plan"]["deployments"][0]
    assert (dep["gpus"], [(p["tp"], p["replicas"], p["gpus"]) for p in dep["split"]]) == (24, [(4, 4, 16), (4, 2, 8)])
    dep["split"][1]["replicas"] = 3
    code, err, _ = _diff(tmp_path, spec, capsys, "fleet-split")
    assert code == 1 and "'plan.deployments[0].split[1].gpus' is 8, not TP 4 x PP 1 x 3 replicas = 12" in err, err
    dep["split"][1]["gpus"] = 12
    code, err, _ = _diff(tmp_path, spec, capsys, "fleet-split")
    said = "'plan.deployments[0].gpus' is 24, not its parts' 16 (TP 4 x PP 1 x 4 replicas) + 12 (TP 4 x PP 1 x 3 replicas) = 28"
    assert code == 1 and said in err, err


@pytest.mark.parametrize("golden", ["home-70b-offload", "small-models-gke-sharing"])
def test_a_fixed_server_or_shared_gpus_are_not_held_to_the_layout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], golden: str
) -> None:
    """A hardware.fixed server's GPUs past the model's layers hold none (a 1-layer model on 16 GPUs is PP1), and shared
    GPUs hold several replicas each: the planner writes their GPUs otherwise, so the check leaves them be."""
    spec = json.loads((GOLDEN / golden / "spec.json").read_text())
    dep = spec["plan"]["deployments"][0]
    dep["replicas"] += 1  # GPUs the same: a layout the check would refuse on a pool of whole GPUs it sized
    code, err, _ = _diff(tmp_path, spec, capsys, golden)
    assert code == 0 and "not a specgen spec.json" not in err, err


def test_every_golden_spec_json_reads_against_itself(capsys: pytest.CaptureFixture[str]) -> None:
    for spec in sorted(GOLDEN.glob("*/spec.json")):
        with pytest.raises(SystemExit) as done:
            main(["diff", str(spec), str(spec)])
        err = capsys.readouterr().err
        assert done.value.code == 0 and "not a specgen spec.json" not in err, (spec, err)
