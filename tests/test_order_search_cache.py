"""The order search over owned servers sizes each deployment's options on a server kind once (fuzz20 item 14, fuzz26 H4).

With owned servers and a few deployments every order of them is planned, and with several owned kinds each set of
them left off; these change only which owned servers are free, not a job's shapes or step times nor a service's
options on a kind of which none are owned. ``training_options``, ``inference_options`` and ``split_options`` keep
those per plan (:data:`~generator.planner.candidates.SizedOptions`): the plan must be the one the uncached search
makes, byte for byte, and each (deployment, hardware, owned servers of its kind free) be sized once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import pytest

from generator import planner
from generator.planner import MAX_DEPLOYMENTS_REORDERED, candidates, plan_workload, split, training_candidates
from generator.planner.inventory import free_servers
from generator.planner.options import allowed_hardware
from generator.planner.training import training_shapes
from generator.render import deployed
from generator.render.env import to_json
from generator.sizing.constants import with_overrides
from generator.workload import load_workload

#: Two training jobs and two services beside two kinds of owned servers: every one of the 4! orders is planned, and
#: the services share servers in passes of their own.
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
- name: code
  model: Qwen/Qwen2.5-7B-Instruct
  inference:
    precision: bf16
    max_context_tokens: 8192
    requests_per_second: 2
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


class _Forgetful(dict[tuple[object, ...], Any]):
    """A cache that never holds anything: each pass ranks its options again."""

    def __contains__(self, key: object) -> bool:
        return False


def _without_sizes(function: Any, positional: int) -> Any:
    """``function`` called without its plan's cache (its ``sizes``, keyword or the argument at index ``positional``)."""

    def uncached(*args: Any, **kwargs: Any) -> Any:
        kwargs.pop("sizes", None)
        # the arguments after it stay (idle_training passes the hardware after the sizes: all of it searched else)
        return function(*args[:positional], *((None, *args[positional + 1 :]) if len(args) > positional else ()), **kwargs)

    return uncached


class _Never(dict[Any, Any]):
    """A process cache that never holds anything (:data:`planner._RANKED`): each pass ranks its options again."""

    def get(self, key: Any, default: Any = None) -> Any:
        return default


def _uncached(monkeypatch: pytest.MonkeyPatch) -> None:
    """The search as it was before the caches: every call sizes every layout again, every pass sorts again."""
    monkeypatch.setattr(planner, "_RANKED", _Never())  # the options formed per process go with ``sizes``
    monkeypatch.setattr(training_candidates, "training_options", _without_sizes(training_candidates.training_options, 6))
    uncached_inference = _without_sizes(candidates.inference_options, 8)
    monkeypatch.setattr(candidates, "inference_options", uncached_inference)
    monkeypatch.setattr(split, "inference_options", uncached_inference)
    monkeypatch.setattr(split, "split_options", _without_sizes(split.split_options, 5))
    options: Any = planner._Options

    def unranked(*fields: Any) -> Any:
        return options(*fields[:-1], _Forgetful())

    monkeypatch.setattr(planner, "_Options", unranked)
    choose: Any = planner._choose

    def forgetting_keys(*args: Any, **kwargs: Any) -> Any:
        return choose(*args, **{**kwargs, "ranking_keys": None})

    monkeypatch.setattr(planner, "_choose", forgetting_keys)


class _Run(NamedTuple):
    """One plan of :data:`OWNED_JOBS`: its JSON, the ``training_shapes`` calls and the ranking keys it formed."""

    plan_json: str
    shapes: list[tuple[object, ...]]
    ranking_keys: int
    #: A service's options sized on one hardware: (service, platform, GPU, owned servers free there, split rest).
    service_sizings: list[tuple[object, ...]]


def _run(tmp_path: Path, *, cached: bool) -> _Run:
    planner.clear_search_caches()  # nothing formed or ranked by a plan before: each sizing and ranking is counted
    loaded = _loaded(tmp_path, OWNED_JOBS, "owned-jobs")
    shapes: list[tuple[object, ...]] = []
    keys: list[int] = []
    ranking_key = candidates.ranking_key

    def counted_shapes(
        model: Any, spec: Any, hw: Any, consts: Any, pin: Any = None, owned_gpus: int = 0, idle: Any = None
    ) -> Any:
        # idle: a serving pool's idle GPUs (training-fits-idle-gpus, fix178), sized apart from the plan's own search
        shapes.append((model.id, spec, hw.platform.id, hw.gpu.id, owned_gpus, idle))
        return training_shapes(model, spec, hw, consts, pin, owned_gpus, idle)

    def counted_key(opt: Any, *args: Any, **kwargs: Any) -> Any:
        keys.append(1)
        return ranking_key(opt, *args, **kwargs)

    sizings: list[tuple[object, ...]] = []
    options_on = candidates._options_on

    def counted_options(wl: Any, serving: Any, model: Any, hw: Any, consts: Any, free: Any, rest: Any, seen: Any) -> Any:
        sizings.append((model.id, serving.spec, hw.platform.id, hw.gpu.id, free[1], rest))
        return options_on(wl, serving, model, hw, consts, free, rest, seen)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(training_candidates, "training_shapes", counted_shapes)
        patch.setattr(candidates, "ranking_key", counted_key)
        patch.setattr(candidates, "_options_on", counted_options)
        if not cached:
            _uncached(patch)
        plan_json = _plan_json(loaded)
    return _Run(plan_json, shapes, len(keys), sizings)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[_Run, _Run]:
    """The plan with the caches, and without them (the search as it was)."""
    tmp_path = tmp_path_factory.mktemp("orders")
    return _run(tmp_path, cached=True), _run(tmp_path, cached=False)


def test_planned_in_every_order(tmp_path: Path) -> None:
    """The workload is planned in every order of its deployments: the caches' reason to be."""
    loaded = _loaded(tmp_path, OWNED_JOBS, "owned-jobs")
    assert 1 < len(loaded.workload.deployments) <= MAX_DEPLOYMENTS_REORDERED
    assert loaded.workload.hardware.inventory


def test_plan_is_the_uncached_plan_byte_for_byte(runs: tuple[_Run, _Run]) -> None:
    cached, slow = runs
    assert cached.plan_json == slow.plan_json
    assert '"tune"' in cached.plan_json and '"moe"' in cached.plan_json  # both jobs planned


def test_each_job_hardware_and_owned_gpus_is_sized_once(runs: tuple[_Run, _Run]) -> None:
    cached, slow = runs
    assert len(cached.shapes) == len(set(cached.shapes))
    assert set(cached.shapes) == set(slow.shapes)
    assert len(slow.shapes) > len(cached.shapes)  # the orders sized them again before (a test of the test)


def test_each_service_hardware_and_owned_servers_is_sized_once(runs: tuple[_Run, _Run]) -> None:
    """A service's options on a kind are sized once per owned servers of that kind free, split rests included."""
    cached, slow = runs
    assert len(cached.service_sizings) == len(set(cached.service_sizings))
    assert set(cached.service_sizings) == set(slow.service_sizings)
    assert len(slow.service_sizings) > 2 * len(cached.service_sizings)  # every pass sized every kind before


def test_a_pass_that_ranks_alike_reads_the_ranking(runs: tuple[_Run, _Run]) -> None:
    """Passes over the same owned servers free, with the services' servers alike, sort the options once."""
    cached, slow = runs
    assert 0 < cached.ranking_keys * 2 < slow.ranking_keys


def test_options_and_reasons_match_across_free_states(tmp_path: Path) -> None:
    """One cache over several states of the owned servers gives each state's options and reasons as a fresh call."""
    loaded = _loaded(tmp_path, OWNED_QUAD, "quad")
    wl = loaded.workload
    dep = wl.deployments[0]
    model = loaded.models[dep.name]
    consts = with_overrides(dict(wl.constants))
    owned = free_servers(wl)
    states = [owned, dict.fromkeys(owned, 0), owned]
    sizes: candidates.SizedOptions = {}
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
