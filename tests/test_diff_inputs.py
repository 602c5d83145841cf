"""``specgen diff`` names the workload inputs that moved a deployment's row (newuser73 item 5).

agent-gke (Llama 3.3 70B FP8 on GKE H100, 4 req/s): ``routing: free_place → even`` bought a fifth replica, +$64,598 a
month, and the row said ``changed: replicas 4 → 5`` alone; ``max_utilization: 0.7`` the same; ``p95_input_tokens``
moved the TTFT without being named. Each deployment's ``spec.json`` details now carry the ``inference`` / ``training``
fields the workload gives it off their defaults (``inputs``), and a changed row names every one that differs
(generic over the fields), those a setting of the row already says (rate asked, SLOs, engine settings) said once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.api import plan_file
from generator.fleet_diff import _inputs_moved, row_changes
from tests.helpers import specgen_in_process

REPO = Path(__file__).parents[1]

AGENT = """\
version: 1
name: agent-gke
deployments:
  - name: agent
    model: meta-llama/Llama-3.3-70B-Instruct
    inference:
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 65536
      avg_input_tokens: 40000
      avg_output_tokens: 600
      cached_prompt_share: 0.8
      requests_per_second: {rate}
{extra}      slo:
        ttft_p95_ms: 3000
        tpot_ms: 50
hardware:
  provider: gcp
objective: cost
outputs: [terraform, ansible, kubernetes]
kubernetes:
  gcp_project: acme-agent
  location: us-central1
  zone: us-central1-b
"""


def _changed(capsys: pytest.CaptureFixture[str], tmp_path: Path, new: str, rate: float = 4) -> str:
    (tmp_path / "old.yaml").write_text(AGENT.format(rate=4, extra=""))
    (tmp_path / "new.yaml").write_text(AGENT.format(rate=rate, extra=new))
    code, out, err = specgen_in_process(capsys, "diff", str(tmp_path / "old.yaml"), str(tmp_path / "new.yaml"))
    assert code == 0, err
    cells = [line for line in out.splitlines() if "**changed" in line]
    assert len(cells) == 1, out
    return cells[0]


@pytest.mark.parametrize(
    ("extra", "rate", "said", "unsaid"),
    [
        # merge90 (fix90's places at the share): even routing keeps 4 replicas, each running 47 places at 1 req/s (37
        # at the most load, which free_place keeps); max_utilization 0.7 takes 10 x TP4 (40 GPUs, as 5 x TP8 did)
        ("      routing: even\n", 4, "changed: routing free_place → even, places a replica 37 → 47", ()),
        ("      max_utilization: 0.7\n", 4, "changed: max_utilization 1 → 0.7, TP 8 → 4, replicas 4 → 10", ()),
        # acc122: a stated prompt spread takes no ttft_p95_factor, so 8 x TP4 (the same 32 GPUs) now meets the TTFT p95
        # (1,855 ms of 3,000); was "changed: p95_input_tokens unset → 64,000; at the same engine settings: " (4 x TP8)
        (
            "      p95_input_tokens: 64000\n",
            4,
            "changed: p95_input_tokens unset → 64,000, TP 8 → 4, replicas 4 → 8, places a replica 37 → 19",
            ("changed at the same settings",),
        ),
        # a rate bump with the routing: both named, the rate once (as "rate asked", not as requests_per_second too)
        ("      routing: even\n", 5, "changed: routing free_place → even, replicas 4 → 5, rate asked", ("requests_per_second",)),
    ],
)
def test_a_changed_row_names_the_inputs_that_moved(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, extra: str, rate: float, said: str, unsaid: tuple[str, ...]
) -> None:
    cell = _changed(capsys, tmp_path, extra, rate)
    assert said in cell
    assert not any(text in cell for text in unsaid)


@pytest.mark.parametrize(
    ("old", "new", "kind", "moved"),
    [
        ({"max_utilization": 0.7}, {}, "service", ["max_utilization 0.7 → 1"]),  # one side leaves it out: the default
        ({"routing": "even"}, {}, "service", []),  # said by the row's router (routing, places a replica)
        ({}, {"slo.ttft_p95_ms": 3000.0}, "service", []),  # said by the row as "SLO TTFT p95"
        ({"requests_per_second": 4.0}, {"requests_per_second": 4}, "service", []),  # 4 and 4.0 alike
        ({"lora_target_modules": ["q_proj"]}, {}, "training job", ["lora_target_modules [q_proj] → [all-linear]"]),
        ({"lora_dropout": 0.05}, {"lora_dropout": 0.1}, "training job", ["lora_dropout 0.05 → 0.1"]),
        ({"method": "lora"}, {"method": "qlora"}, "training job", []),  # said by the row as "method"
    ],
)
def test_inputs_moved_is_generic_over_the_fields(
    old: dict[str, object], new: dict[str, object], kind: str, moved: list[str]
) -> None:
    assert _inputs_moved({"inputs": old}, {"inputs": new}, kind) == moved


def test_a_spec_json_without_inputs_names_none(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A spec.json written before the inputs were recorded: nothing named, no row listed for that alone."""
    row = {"model_id": "m", "replicas": 4}
    assert _inputs_moved(row, {**row, "inputs": {"routing": "even"}}, "service") == []
    (tmp_path / "a.yaml").write_text(AGENT.format(rate=4, extra=""))
    code, out, err = specgen_in_process(capsys, "plan", str(tmp_path / "a.yaml"), "--format", "json")
    assert code == 0, err
    spec = json.loads(out)
    (tmp_path / "new.json").write_text(json.dumps({"plan": spec}))
    del spec["deployments"][0]["details"]["inputs"]
    (tmp_path / "old.json").write_text(json.dumps({"plan": spec}))
    code, out, err = specgen_in_process(capsys, "diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"))
    assert code == 0, err
    assert "changed" not in out and "inputs" not in out
    assert row_changes({**row, "inputs": {}}, {**row, "replicas": 5, "inputs": {"max_utilization": 0.7}}) == (
        "changed: max_utilization 1 → 0.7, replicas 4 → 5"
    )


def test_spec_json_records_the_inputs_and_diff_json_carries_them(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(AGENT.format(rate=4, extra="      routing: even\n"))
    code, out, err = specgen_in_process(capsys, "plan", str(tmp_path / "a.yaml"), "--format", "json")
    assert code == 0, err
    inputs = json.loads(out)["deployments"][0]["details"]["inputs"]
    assert inputs["routing"] == "even" and inputs["cached_prompt_share"] == 0.8 and "min_replicas" not in inputs


def test_a_field_the_loader_derived_is_not_an_input() -> None:
    """review76 item 7: a batch job's rate, worked out from its requests a run and deadline, read as a given input."""
    plan = plan_file(str(REPO / "examples" / "batch-jobs-gke.yaml"))[1]
    jobs = [d for d in plan.deployments if "requests_per_run" in d.details["inputs"]]
    assert jobs
    for job in jobs:
        assert "requests_per_second" not in job.details["inputs"]  # derived: requests_per_run over the deadline
        assert job.details["requests_per_s"] > 0
