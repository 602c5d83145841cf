"""review81 item 1: a serving-only plan does not import the training stack.

fix137 imported ``training_candidates`` (and with it ``planner.training``, ``training_comm``, ``sizing.training_step``,
...) for every deployment to settle a near tie on cost that only a training or batch job has: +40% on
examples/rack-density.yaml's cold plan (0.14 s -> 0.20 s). The import is now taken only where
:func:`~generator.planner.batch_job.waits_for_runs` says the deployment runs to a finish.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

_PROBE = """
import sys
from generator.planner import plan_workload
from generator.workload import load_workload
plan_workload(load_workload(sys.argv[1]))
print(" ".join(sorted(m for m in sys.modules if m.startswith("generator.") and m.split(".")[-1] in sys.argv[2:])))
"""
_STACK = ("training_candidates", "training", "training_comm", "training_step")


def _loaded(example: str) -> set[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, str(REPO / "examples" / example), *_STACK],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=REPO,
    )
    return set(out.stdout.split())


def test_a_serving_only_plan_leaves_the_training_stack_unimported() -> None:
    assert _loaded("rack-density.yaml") == set()


@pytest.mark.parametrize("example", ["batch-jobs-gke.yaml"])
def test_a_batch_job_s_plan_imports_it_to_settle_its_near_tie(example: str) -> None:
    # the probe is live: where a run is waited for, the near-tie rule's module loads
    assert "generator.planner.training_candidates" in _loaded(example)
