"""Headroom and a floor on a service's replicas (newuser23 item 4): ``inference.max_utilization`` and ``min_replicas``.

A service sized to its rate alone runs its replicas at up to 100% of what they sustain within the SLOs: a burst, a
replica drained for a node upgrade, or error in the throughput estimate leaves the rate unserved. ``max_utilization``
plans capacity for rate / utilization; ``min_replicas`` keeps a floor whatever the rate needs.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from generator.errors import InputError
from generator.planner import plan_workload
from generator.planner.slo import replicas_needed
from generator.workload import load_workload
from generator.workload.models import InferenceSpec

# (rate, what each replica sustains, max_utilization, min_replicas, replicas)
NEEDED = [
    pytest.param(30, (6.12,), 1.0, 1, 5, id="rate-alone"),
    pytest.param(30, (6.12,), 0.8, 1, 7, id="headroom-30-over-4.9"),
    pytest.param(30, (6.12,), 1.0, 8, 8, id="floor-above-the-rate"),
    pytest.param(30, (6.12,), 0.8, 6, 7, id="headroom-above-the-floor"),
    pytest.param(0.1, (6.12,), 1.0, 1, 1, id="one-at-least"),
    pytest.param(30, (6.12, 5.0), 1.0, 1, 6, id="split-slowest-sets-it"),
    pytest.param(24.48, (6.12,), 1.0, 1, 4, id="exactly-full"),
]


@pytest.mark.parametrize(("rate", "caps", "utilization", "floor", "replicas"), NEEDED)
def test_replicas_needed(rate: float, caps: tuple[float, ...], utilization: float, floor: int, replicas: int) -> None:
    spec = InferenceSpec(max_context_tokens=8192, requests_per_second=rate, max_utilization=utilization, min_replicas=floor)
    assert replicas_needed(spec, *caps) == replicas


SERVICE = """\
version: 1
name: ha
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference:
      max_context_tokens: 8192
      avg_input_tokens: 1000
      avg_output_tokens: 200
      requests_per_second: {rate}
      slo: {{ttft_p95_ms: 1000, tpot_ms: 40}}{extra}
hardware:
  gpus: [l40s-48gb]
  provider: aws
"""


def _chat(tmp_path: Path, rate: float, extra: str = "") -> tuple[int, float, tuple[str, ...]]:
    """The planned replicas, what each sustains within the SLOs (req/s) and the reasons."""
    path = tmp_path / "w.yaml"
    path.write_text(SERVICE.format(rate=rate, extra=extra))
    (dep,) = plan_workload(load_workload(str(path))).deployments
    return dep.replicas, float(dep.details["requests_per_s_per_replica_max"]), tuple(dep.reasons)


def test_headroom_plans_capacity_for_the_rate_over_the_utilization(tmp_path: Path) -> None:
    # acc120: the L40S replica 2.751 req/s (the L40's GDDR6 stream share); at 100% the rate alone needs ceil(14.54) = 15,
    # but 15 x 22 places at 97% wait past the TTFT target (fix74 / fix90's wait for a place), so the plan runs 16 (its
    # reason: "16 replica(s) x 22 places = 352 (c), 91% busy"); at 70% the rate's 21 replicas hold the wait too
    for utilization, for_the_wait in ((1.0, 1), (0.7, 0)):
        replicas, per_replica, reasons = _chat(tmp_path, 40, f"\n      max_utilization: {utilization}")
        # as many replicas as hold the rate at that share of what each sustains, and each runs below it
        assert replicas == math.ceil(40 / (per_replica * utilization)) + for_the_wait
        assert 40 / replicas <= utilization * per_replica
    assert any("at 70% of what each sustains (max_utilization)" in r for r in reasons)
    assert _chat(tmp_path, 40)[0] < replicas


def test_a_floor_of_replicas_holds_whatever_the_rate(tmp_path: Path) -> None:
    assert _chat(tmp_path, 0.5)[0] == 1
    replicas, _, reasons = _chat(tmp_path, 0.5, "\n      min_replicas: 3")
    assert replicas == 3
    assert any("at least 3 (min_replicas)" in r for r in reasons)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("\n      max_utilization: 0", "max_utilization"),
        ("\n      max_utilization: 1.2", "max_utilization"),
        # fuzz21 item 6: 1e-300 planned 10^300 replicas, refused at the model with a 7 kB message
        ("\n      max_utilization: 1.0e-300", r"max_utilization: 1e-300 is out of range: must be >= 0\.05"),
        ("\n      max_utilization: 0.049", "max_utilization"),
        ("\n      min_replicas: 0", "min_replicas"),
        ("\n      nodes_down_tolerated: 9", "nodes_down_tolerated"),
        ("\n      nodes_down_tolerated: -1", "nodes_down_tolerated"),
    ],
)
def test_out_of_range_is_refused_at_the_field(tmp_path: Path, extra: str, message: str) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(SERVICE.format(rate=1, extra=extra))
    with pytest.raises(InputError, match=f"w.yaml:12:.*{message}"):
        load_workload(str(path))


@pytest.mark.parametrize("field", ["min_replicas: 2", "nodes_down_tolerated: 1"])
def test_an_existing_machine_runs_one_stream_and_refuses_them(tmp_path: Path, field: str) -> None:
    path = tmp_path / "w.yaml"
    text = SERVICE.format(rate=1, extra=f"\n      {field}").split("hardware:")[0]
    path.write_text(
        text.replace("      slo: {ttft_p95_ms: 1000, tpot_ms: 40}\n", "")
        + "hardware:\n  fixed: {gpu: rtx-4090-24gb, gpu_count: 1, ram_gib: 64}\n"
    )
    name = field.split(":", maxsplit=1)[0]
    with pytest.raises(InputError, match=rf"{name} sizes a fleet of replicas; hardware\.fixed is planned as one"):
        load_workload(str(path))


@pytest.mark.parametrize(
    ("rate", "extra", "hardware", "hint"),
    [
        pytest.param(
            1, "\n      min_replicas: 40", "  max_nodes: 2\n",
            "to unblock: raise max_nodes, or a lower min_replicas (now 40)",
            id="floor-over-max-nodes",
        ),
        pytest.param(
            1, "\n      min_replicas: 40\n      max_utilization: 0.5", "  max_nodes: 2\n",
            "to unblock: raise max_nodes, or a lower min_replicas (now 40), or a higher "
            "max_utilization (now 0.5)",
            id="floor-and-headroom-over-max-nodes",
        ),
        pytest.param(
            1_000_000, "\n      max_utilization: 0.05", "",
            "to unblock: a lower requests_per_second (or the rate split over several deployments), a higher "
            "max_utilization (now 0.05), allow a GPU with more memory",
            id="replicas-beyond-one-pool",
        ),
    ],
)  # fmt: skip
def test_a_refusal_names_the_fields_that_set_the_replica_count(
    tmp_path: Path, rate: float, extra: str, hardware: str, hint: str
) -> None:
    """fuzz21 item 6: 40 replicas from min_replicas over max_nodes 2 were told to raise max_nodes alone, and replicas
    beyond one pool's 10,000 nodes to allow a GPU with more memory; the counts are written with separators."""
    from generator.errors import InfeasibleError

    path = tmp_path / "w.yaml"
    path.write_text(SERVICE.format(rate=rate, extra=extra).replace("  provider: aws\n", "  provider: aws\n" + hardware))
    with pytest.raises(InfeasibleError) as caught:
        plan_workload(load_workload(str(path)))
    assert hint in str(caught.value)
    if rate > 1000:
        assert re.search(r"\d,\d{3} x TP", str(caught.value)) and not re.search(r"\d{4} x TP", str(caught.value))
