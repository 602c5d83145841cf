"""The search's shortcuts rank and explain options as the full computation does (a 200-workload render 24.5 -> ~21 s).

A pass ranks an option as the pass before did where it finds as many GPUs in use on the option's kind
(:data:`~generator.planner.candidates.RankingMemo`); an option of one part has its sustained rate without the split's
general formula; the runner-up reasons key only the options that can be the offer or purchase asked about.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.planner import candidates, clear_search_caches, plan_workload
from generator.planner.assemble import _buys, _offer_key, distinct_runners_up, purchase, twin_reasons
from generator.planner.candidates import (
    RankingMemo,
    inference_options,
    on_shared_servers,
    ranking_candidate,
    ranking_key,
)
from generator.planner.option import Option, sustained_rps
from generator.render import deployed
from generator.render.env import to_json
from generator.sizing.constants import with_overrides
from generator.workload import load_workload

#: Two services over three GPU kinds: passes that share servers, and passes on each kind, rank the options again.
TWO = """\
version: 1
name: two
deployments:
  - name: chat
    model: meta-llama/Llama-3.3-70B-Instruct
    inference:
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 8192
      avg_input_tokens: 1000
      avg_output_tokens: 300
      requests_per_second: 15
      slo: {ttft_p95_ms: 1500, tpot_ms: 50}
  - name: small
    model: meta-llama/Llama-3.1-8B-Instruct
    inference:
      precision: bf16
      max_context_tokens: 8192
      requests_per_second: 2
hardware:
  provider: baremetal
  gpus: [h200-sxm-141gb, h100-sxm5-80gb, l40s-48gb]
constants: {amortization_months: 36}
"""


def _loaded(tmp_path: Path) -> Any:
    path = tmp_path / "two.yaml"
    path.write_text(TWO, encoding="utf-8")
    return load_workload(str(path))


@pytest.fixture(scope="module")
def chat_options(tmp_path_factory: pytest.TempPathFactory) -> list[Option]:
    """The chat service's options, as the search ranks them by cost."""
    loaded = _loaded(tmp_path_factory.mktemp("two"))
    wl = loaded.workload
    dep = wl.deployments[0]
    consts = with_overrides(dict(wl.constants))
    options = inference_options(wl, dep, loaded.models[dep.name], consts, [], {})
    assert len(options) > 20  # a test of the test: many layouts, on several kinds and chassis
    return sorted(options, key=lambda o: ranking_key(o, "cost", None, False))


def _busy_states(options: list[Option]) -> list[dict[Any, int] | None]:
    """No sharing; sharing before any service is chosen; a service's GPUs on one kind, and on every kind three ways."""
    kinds = sorted({o.server_kind for o in options})
    every = [{k: max(1, k[2] + more) for k in kinds} for more in (-6, -2, 3)]  # (GPUs per server is the kind's third field)
    return [None, {}, {kinds[0]: 1}, *every]


def test_memoized_keys_are_the_keys_formed_afresh(chat_options: list[Option]) -> None:
    memo: RankingMemo = {}
    for _ in range(2):  # the second round reads the keys kept
        for busy in _busy_states(chat_options):
            for owned_free in (False, True):
                for opt in chat_options:
                    fresh = ranking_key(opt, "cost", busy, owned_free)
                    assert ranking_key(opt, "cost", busy, owned_free, memo=memo) == fresh
    assert memo


def test_a_key_is_kept_under_the_gpus_in_use_on_its_kind(chat_options: list[Option]) -> None:
    """Sharing changes an option's candidate by the GPUs in use on its own kind alone: its key is kept under them.

    The key kept is the key formed afresh with only those GPUs in use (the other kinds' servers shared or not).
    """
    changed = 0
    for busy in _busy_states(chat_options)[2:]:
        assert busy is not None
        memo: RankingMemo = {}
        for opt in chat_options:
            key = ranking_key(opt, "cost", busy, False, memo=memo)
            held = busy.get(opt.busy_kind) or None
            assert memo[(id(opt), "cost", True, False, False, None, held)] == key
            assert ranking_key(opt, "cost", {opt.busy_kind: held} if held else {}, False) == key
            changed += on_shared_servers(opt, busy) is not ranking_candidate(opt)
    assert changed  # a test of the test: some candidates change under sharing


def test_one_part_rate_is_the_split_formula_of_itself(chat_options: list[Option]) -> None:
    for opt in chat_options:
        assert sustained_rps(opt) == sustained_rps(opt._replace(parts=(opt,))) > 0


def test_the_purchase_test_is_the_purchase_compared(chat_options: list[Option]) -> None:
    for a in chat_options[:40]:
        bought = purchase(a)
        for b in chat_options:
            assert _buys(b, bought, a.candidate.gpus_bought) == (purchase(b) == bought)


def _twin_chassis_every_offer(chosen: Option, shown: list[Option], rest: list[Option]) -> dict[int, list[str]]:
    """Each listed option's other chassis, keying every option of ``rest`` (as the reasons did before)."""
    chassis: dict[tuple[object, ...], set[str]] = {}
    for o in rest:
        chassis.setdefault(_offer_key(o), set()).add(o.candidate.platform_id)
    return {n: sorted(chassis.get(_offer_key(o), set()) - {o.candidate.platform_id}) for n, o in enumerate((chosen, *shown))}


def test_twin_chassis_are_those_of_every_offer(chat_options: list[Option]) -> None:
    for start in range(0, 30, 3):  # several choices, runners-up and the rest after them
        chosen, rest = chat_options[start], chat_options[start + 1 :]
        shown = distinct_runners_up(chosen, rest, 4)
        expected = _twin_chassis_every_offer(chosen, shown, rest)
        line = twin_reasons(chosen, shown, rest)
        assert bool(line) == any(expected.values())
        for n, others in expected.items():
            who = "the choice" if n == 0 else str(n)
            assert not others or (line and ", ".join(others) in line[0] and who in line[0])


def test_plan_with_the_memo_is_the_plan_without(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = _loaded(tmp_path)
    with_memo = to_json(deployed(plan_workload(loaded), loaded.workload).to_dict())
    plain = candidates.ranking_key

    def without_memo(opt: Any, *args: Any, **kwargs: Any) -> Any:
        kwargs.pop("memo", None)
        return plain(opt, *args, **kwargs)

    monkeypatch.setattr(candidates, "ranking_key", without_memo)
    clear_search_caches()  # ranked anew, not as the plan above ranked the same options
    assert to_json(deployed(plan_workload(_loaded(tmp_path)), loaded.workload).to_dict()) == with_memo
    assert '"chat"' in with_memo and '"small"' in with_memo
