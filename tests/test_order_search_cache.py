"""The order search over owned servers reads each training job's timed layouts once (fuzz20 item 14).

With owned servers and a few deployments every order of them is planned; the order changes only which owned
servers are free, not a job's shapes or step times. ``training_options`` keeps those per plan
(:data:`~generator.planner.training_candidates.TrainingSizes`): the plan must be the one the uncached search
makes, byte for byte, and each (job, hardware, owned GPUs free) be sized once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.planner import MAX_DEPLOYMENTS_REORDERED, plan_workload, training_candidates
from generator.planner.inventory import free_servers
from generator.planner.options import allowed_hardware
from generator.planner.training import training_shapes
from generator.render import deployed
from generator.render.env import to_json
from generator.sizing.constants import with_overrides
from generator.workload import load_workload

#: Two training jobs and a service beside two kinds of owned servers: every one of the 3! orders is planned.
OWNED_JOBS = """\
version: 1
name: owned-jobs
deployments:
- name: tune
  model: meta-llama/Llama-3.1-8B
  training:
    method: lora
    sequence_length: 4096
    global_batch_size: 32
    dataset_tokens: 200000000
    deadline_hours: 10
- name: moe
  model: Qwen/Qwen3-30B-A3B
  training:
    method: qlora
    sequence_length: 4096
    global_batch_size: 32
    dataset_tokens: 200000000
    deadline_hours: 40
- name: chat
  model: meta-llama/Llama-3.1-8B-Instruct
  inference:
    precision: fp8
    max_context_tokens: 8192
    requests_per_second: 4
hardware:
  provider: baremetal
  gpus: [h100-sxm5-80gb, l40s-48gb]
  inventory:
  - custom:
      gpu: h100-sxm5-80gb
      gpus_per_server: 8
      cpu_cores: 64
      ram_gib: 1024
      nvme_tb: 30
    count: 1
  - custom:
      gpu: l40s-48gb
      gpus_per_server: 4
      cpu_cores: 64
      ram_gib: 1024
      nvme_tb: 30
    count: 2
"""

#: A 70B QLoRA beside one owned 4 x RTX 3090 workstation: ZeRO-3 needs more than its 4 GPUs unless the parameters
#: are offloaded, which is tried only while it is free (newuser22 item 4; tests/test_training_inputs.py), so the job's
#: layouts depend on the owned GPUs free.
OWNED_QUAD = """\
version: 1
name: quad3090
deployments:
  - name: tune70
    model: meta-llama/Llama-3.3-70B-Instruct
    training:
      method: qlora
      sequence_length: 4096
      dataset_tokens: 20000000
hardware:
  provider: baremetal
  gpus: [rtx-3090-24gb]
  inventory:
    - custom:
        name: quad
        kind: workstation
        gpu: rtx-3090-24gb
        gpus_per_server: 4
        cpu: threadripper-pro-7975wx
        ram_gib: 256
        nvme_tb: 4
        nvme_drives: 2
        max_power_w: 2000
        rack_units: 4
      count: 1
"""


def _loaded(tmp_path: Path, text: str, name: str) -> Any:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return load_workload(str(path))


def _plan_json(loaded: Any) -> str:
    """The plan as ``specgen plan --format json`` prints it."""
    return to_json(deployed(plan_workload(loaded), loaded.workload).to_dict())


def _uncached(monkeypatch: pytest.MonkeyPatch) -> None:
    """``training_options`` as it was before the cache: every call sizes every layout again."""
    original = training_candidates.training_options

    def without_sizes(*args: Any, **kwargs: Any) -> Any:
        kwargs.pop("sizes", None)
        return original(*args[:6], **kwargs)

    monkeypatch.setattr(training_candidates, "training_options", without_sizes)


def _count_shapes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[object, ...]]:
    """Record the (model, platform, GPU, owned GPUs) of every ``training_shapes`` call."""
    calls: list[tuple[object, ...]] = []
    original = training_shapes

    def counted(model: Any, spec: Any, hw: Any, consts: Any, pin: Any = None, owned_gpus: int = 0) -> Any:
        calls.append((model.id, spec, hw.platform.id, hw.gpu.id, owned_gpus))
        return original(model, spec, hw, consts, pin, owned_gpus)

    monkeypatch.setattr(training_candidates, "training_shapes", counted)
    return calls


def test_plan_is_the_uncached_plan_byte_for_byte(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = _loaded(tmp_path, OWNED_JOBS, "owned-jobs")
    assert len(loaded.workload.deployments) <= MAX_DEPLOYMENTS_REORDERED  # planned in every order: the cache's use
    cached = _plan_json(loaded)
    with monkeypatch.context() as patch:
        _uncached(patch)
        slow = _plan_json(loaded)
    assert cached == slow
    assert '"tune"' in cached and '"moe"' in cached  # both jobs planned


def test_each_job_hardware_and_owned_gpus_is_sized_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = _loaded(tmp_path, OWNED_JOBS, "owned-jobs")
    calls = _count_shapes(monkeypatch)
    plan_workload(loaded)
    assert len(calls) == len(set(calls))
    cached_calls = len(calls)
    calls.clear()
    _uncached(monkeypatch)
    plan_workload(loaded)
    assert len(calls) > cached_calls  # the orders re-sized them before (a test of the test)


def test_options_and_reasons_match_across_free_states(tmp_path: Path) -> None:
    """One cache over several states of the owned servers gives each state's options and reasons as a fresh call."""
    loaded = _loaded(tmp_path, OWNED_QUAD, "quad")
    wl = loaded.workload
    dep = wl.deployments[0]
    model = loaded.models[dep.name]
    consts = with_overrides(dict(wl.constants))
    owned = free_servers(wl)
    states = [owned, dict.fromkeys(owned, 0), owned]
    sizes: training_candidates.TrainingSizes = {}
    for free in states:
        fresh_blocked: list[Any] = []
        fresh = training_candidates.training_options(wl, dep, model, consts, fresh_blocked, free)
        cached_blocked: list[Any] = []
        cached = training_candidates.training_options(wl, dep, model, consts, cached_blocked, free, sizes)
        assert [o.candidate.summary for o in cached] == [o.candidate.summary for o in fresh]
        assert cached == fresh
        assert cached_blocked == fresh_blocked
    # the premise: the owned server free or taken changes the job's shapes (so the key must hold the owned GPUs)
    hw = next(h for h in allowed_hardware(wl) if h.platform.custom)
    with_owned = training_shapes(model, dep.training, hw, consts, dep.parallelism, owned_gpus=4)[0]
    without = training_shapes(model, dep.training, hw, consts, dep.parallelism, owned_gpus=0)[0]
    assert [s.reason for s in with_owned] != [s.reason for s in without]
