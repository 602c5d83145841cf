"""The passes over owned servers search each service once per owned-server state it can tell apart (fuzz21 item 4).

``inference_options`` and ``split_options`` keep their searches per plan (:class:`~generator.planner.candidates.
InferenceMemo`): a layout reads the owned servers of its kind free only as ``min(its nodes, free)``, so a hardware's
options are kept by those clamped counts. Each call must give what an uncached call gives (options, their order,
the reasons), as fresh objects, and a plan must be the uncached plan byte for byte.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.planner import candidates, plan_workload, split
from generator.planner.candidates import inference_memo, inference_options
from generator.planner.inventory import free_servers
from generator.planner.split import SplitMemo, split_options
from generator.render import deployed
from generator.render.env import to_json
from generator.sizing.constants import with_overrides
from generator.workload import load_workload

#: A 70B service beside owned H100 servers too few for its rate (a split), five services in all so the owned
#: servers also go to the largest and the smallest first.
OWNED_SERVICES = """\
version: 1
name: owned-services
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-70B-Instruct
    inference:
      precision: bf16
      max_context_tokens: 8192
      requests_per_second: 24
      slo: {ttft_p95_ms: 2000, tpot_ms: 60}
  - name: small
    model: meta-llama/Llama-3.1-8B-Instruct
    inference:
      precision: bf16
      max_context_tokens: 8192
      requests_per_second: 5
  - name: code
    model: Qwen/Qwen2.5-7B-Instruct
    inference:
      precision: bf16
      max_context_tokens: 8192
      requests_per_second: 10
  - name: moe
    model: Qwen/Qwen3-30B-A3B
    inference:
      precision: fp8
      max_context_tokens: 8192
      requests_per_second: 3
  - name: tiny
    model: meta-llama/Llama-3.1-8B-Instruct
    inference:
      precision: fp8
      max_context_tokens: 4096
      requests_per_second: 1
hardware:
  gpus: [h100-sxm5-80gb, h200-sxm-141gb, l40s-48gb]
  provider: baremetal
  inventory:
    - platform: dgx-h100
      gpu: h100-sxm5-80gb
      count: 2
"""


def _loaded(tmp_path: Path) -> Any:
    path = tmp_path / "owned-services.yaml"
    path.write_text(OWNED_SERVICES, encoding="utf-8")
    return load_workload(str(path))


def _states(free: dict[Any, int]) -> list[dict[Any, int]]:
    """Owned-server states a plan's passes meet: all free, some taken, none, and all again."""
    return [free, {k: n // 2 for k, n in free.items()}, dict.fromkeys(free, 0), {k: n - 1 for k, n in free.items()}, free]


def test_inference_options_match_an_uncached_call_in_every_state(tmp_path: Path) -> None:
    loaded = _loaded(tmp_path)
    wl = loaded.workload
    consts = with_overrides(dict(wl.constants))
    memo = inference_memo()
    for dep in wl.deployments:
        model = loaded.models[dep.name]
        before: list[Any] = []
        for free in _states(free_servers(wl)):
            fresh_blocked: list[Any] = []
            fresh = inference_options(wl, dep, model, consts, fresh_blocked, free)
            kept_blocked: list[Any] = []
            kept = inference_options(wl, dep, model, consts, kept_blocked, free, memo=memo)
            assert kept == fresh
            assert kept_blocked == fresh_blocked
            # fresh objects each call, as uncached calls form: the passes tell their choices apart by identity
            assert not {id(o) for o in kept} & {id(o) for o in before}
            before = kept
    assert memo.options and memo.layouts


def test_the_owned_count_changes_the_options(tmp_path: Path) -> None:
    """The premise: a service's options differ with the owned servers free (the key must hold them)."""
    loaded = _loaded(tmp_path)
    wl = loaded.workload
    dep = wl.deployments[0]
    consts = with_overrides(dict(wl.constants))
    free = free_servers(wl)
    all_free = inference_options(wl, dep, loaded.models[dep.name], consts, [], free, memo=inference_memo())
    none_free = inference_options(wl, dep, loaded.models[dep.name], consts, [], dict.fromkeys(free, 0))
    assert [o.candidate.owned_nodes for o in all_free] != [o.candidate.owned_nodes for o in none_free]


def test_split_options_match_an_uncached_call_in_every_state(tmp_path: Path) -> None:
    loaded = _loaded(tmp_path)
    wl = loaded.workload
    dep = wl.deployments[0]
    model = loaded.models[dep.name]
    consts = with_overrides(dict(wl.constants))
    splits: SplitMemo = {}
    memo = (splits, inference_memo())
    for free in _states(free_servers(wl)):
        fresh = split_options(wl, dep, model, consts, free)
        kept = split_options(wl, dep, model, consts, free, memo)
        assert kept == fresh
        assert [o.candidate.summary for o in kept] == [o.candidate.summary for o in fresh]
    assert any(splits.values())  # the 70B at 24 req/s does not fit two owned servers: it is split


def test_plan_is_the_uncached_plan_byte_for_byte(tmp_path: Path) -> None:
    loaded = _loaded(tmp_path)
    cached = to_json(deployed(plan_workload(loaded), loaded.workload).to_dict())
    plain_inference, plain_split = candidates.inference_options, split.split_options

    def uncached_inference(*args: Any, **kwargs: Any) -> Any:
        return plain_inference(*args, **{k: v for k, v in kwargs.items() if k not in ("memo", "search")})

    def uncached_split(*args: Any) -> Any:
        return plain_split(*args[:5])

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(candidates, "inference_options", uncached_inference)
        patch.setattr(split, "inference_options", uncached_inference)
        patch.setattr(split, "split_options", uncached_split)
        uncached = to_json(deployed(plan_workload(loaded), loaded.workload).to_dict())
    assert cached == uncached
    assert '"chat"' in cached
