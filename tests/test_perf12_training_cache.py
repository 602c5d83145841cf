"""perf12: the training search's layouts, splits and steps are formed once a process, alike jobs of a chain sharing them.

A 16-job ``run_after`` chain of one LoRA took 27 s of CPU: each job was sized anew over every server kind and layout
(57,118 steps timed for 4 jobs, 18,844 of them distinct). Now each distinct step, split, layout search and placed
layout is formed once (:mod:`generator.planner.step_cache`), the plan the same to the byte.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.planner.step_cache import STEP_UNREAD, kept, step_spec
from generator.workload.models import TrainingSpec


def _chain(tmp_path: Path, jobs: int) -> Path:
    body = "".join(
        f"  - name: job{i}\n    model: meta-llama/Llama-3.1-8B\n    training:\n      method: lora\n"
        f"      sequence_length: 4096\n      global_batch_size: 16\n      dataset_tokens: 100000000\n"
        + (f"      run_after: job{i - 1}\n" if i else "")
        for i in range(jobs)
    )
    path = tmp_path / f"chain{jobs}.yaml"
    path.write_text(f"version: 1\nname: chain\ndeployments:\n{body}hardware:\n  provider: baremetal\n", encoding="utf-8")
    return path


def test_a_step_key_leaves_out_only_what_no_step_reads() -> None:
    spec = TrainingSpec(method="lora", dataset_tokens=10**9, epochs=2.0, deadline_hours=5.0, runs_per_month=4.0, run_after="a")
    assert step_spec(spec) == TrainingSpec(method="lora")
    assert set(STEP_UNREAD) == {"dataset_tokens", "epochs", "deadline_hours", "runs_per_month", "run_after"}
    assert step_spec(spec._replace(sequence_length=8192)) != step_spec(spec)


def test_an_entry_is_kept_for_the_objects_it_was_formed_with() -> None:
    cache: dict[object, Any] = {}
    a, b = object(), object()
    assert kept(cache, ("k", id(a)), (a,), lambda: 1) == 1
    assert kept(cache, ("k", id(a)), (a,), lambda: 2) == 1  # kept
    assert kept(cache, ("k", id(a)), (b,), lambda: 3) == 3  # another object under the same id: formed afresh
    assert kept(cache, ("k", [1]), (a,), lambda: 4) == 4  # unhashable: formed, not kept


def test_alike_jobs_of_a_chain_form_each_step_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import generator.planner.training_candidates as candidates
    from generator.api import plan_file
    from generator.planner import training

    formed: list[object] = []
    own = training._gpu_step

    def counted(*args: Any) -> Any:
        formed.append(args)
        return own(*args)

    monkeypatch.setattr(training, "_gpu_step", counted)

    def steps(jobs: int) -> int:
        for name in ("_SHAPES", "_SPLITS", "_STEPS", "_EFFICIENCIES"):
            monkeypatch.setattr(training, name, {})
        monkeypatch.setattr(candidates, "_PLACED", {})
        formed.clear()
        assert plan_file(str(_chain(tmp_path, jobs)))[1].pools
        return len(formed)

    one = steps(1)
    assert one > 0
    assert steps(3) == one  # before perf12: three times as many, each job timed anew
