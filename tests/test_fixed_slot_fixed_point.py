"""The slots a rate takes on ``hardware.fixed`` and the KV cache rendered for them agree (review73 item 1).

Qwen3-235B q4_k_m on 2 x RTX 5090 at 0.05 req/s: each placement sized for the slots' KV cache moved weights off the
GPUs, which slowed the prompt passes and took more slots (93 -> 161 -> 194 -> 197); the loop stopped after three
re-placements and rendered ``-c 446200 -np 197`` (194 requests of 2,300 tokens) while the plan said 197 slots share
453,100 tokens. Now the placement is re-made until the slots' cache is the one placed, and where it does not settle
within the bound the slots the last placement holds are taken and their rate checked.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from generator.api import plan_file
from generator.errors import InfeasibleError
from generator.planner import fixed_place
from generator.sizing.offload import Machine, OffloadPlan, StreamCapacity
from tests.conftest import REPO

WORKLOAD = (REPO / "tests" / "data" / "review73" / "q235_5090x2.yaml").read_text()
REQUEST = 2_000 + 300


def _at(tmp_path: Path, rps: float, batch: bool = True) -> Path:
    """The workload at ``rps``; a batch service: its slots are the rate's tokens' alone (no wait for one to fit)."""
    path = tmp_path / "q235.yaml"
    text = re.sub(r"requests_per_second: [0-9.]+", f"requests_per_second: {rps:g}", WORKLOAD)
    path.write_text(text.replace("    inference:\n", "    inference:\n      service_class: batch\n") if batch else text)
    return path


def _slots_and_cache(path: Path) -> tuple[int, int, int]:
    plan = plan_file(str(path))[1].to_dict()
    (dep,) = plan["deployments"]
    options = dep["details"]["runtime_settings"]["llama.cpp_options"]
    (said,) = [f["message"] for f in plan["findings"] if f["code"] == "parallel-slots"]
    shared = re.search(r"-np (\d+) -kvu, sharing a KV cache of ([0-9,]+) tokens", said)
    assert shared is not None
    assert int(shared[1]) == options["parallel"]
    assert f"-c {options['ctx_size']} " in dep["details"]["runtime_settings"]["llama.cpp"]
    return options["parallel"], options["ctx_size"], int(shared[2].replace(",", ""))


# a request holds its slot for its TTFT too: the fewest slots whose queue drains (review76 item 10). 89, 137 and 198
# until review80 items 1-2 (the 5% margin, 1.6 GiB of a 5090, no longer kept beside the offloaded layers, and a logit
# row a token of the -ub pass): each slot's step is faster, so fewer slots make the rate
@pytest.mark.parametrize(("rps", "slots"), [(0.04, 83), (0.045, 128), (0.05, 190)])
def test_the_rendered_cache_holds_the_slots_the_plan_counts(tmp_path: Path, rps: float, slots: int) -> None:
    parallel, ctx, said = _slots_and_cache(_at(tmp_path, rps))
    assert parallel == slots
    assert ctx == said == parallel * REQUEST  # was -c 446200 -np 197 at 0.05, 292100 -np 134 at 0.045


def _held(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, float]]:
    """Spy on ``_held_slots``: each call's (slots wanted, slots the placement taken holds, the tokens/s they make)."""
    seen: list[tuple[int, int, float]] = []
    real = fixed_place._held_slots

    def spy(*args: Any) -> tuple[OffloadPlan, Machine, bool, StreamCapacity]:
        wanted: StreamCapacity = args[-1]
        try:
            taken = real(*args)
        except InfeasibleError:
            seen.append((wanted.streams, -1, -1.0))
            raise
        held = taken[-1]
        seen.append((wanted.streams, held.streams, held.served_tokens_per_s))
        return taken

    monkeypatch.setattr(fixed_place, "_held_slots", spy)
    return seen


# A loop cut off before it settles: the slots the last placement's cache holds, refused or taken on their rate, each a
# clear margin from the rate (review73 item 1's -np 197 on 194's cache is neither). The bound of 3 at 0.05 req/s that
# this test first used sat on the edge: 194 slots on the cache of 446,200 tokens made 14.993 of the 15.0 tokens/s
# (refused); with the routed experts' kernels timed in the streaming mode too (review77 item 2: 13,860,864 B a token
# for Qwen3-235B, 2.19 ms of a 198-slot step of 6.74 s, 0.03%) 161 slots on the second placement made 14.9998 (were
# 15.004), the rate took 162, the third placement was 195 slots' and held 195 making 15.045: taken. Either way a
# coin toss within 0.3% of the rate, so the cases below sit well away from it, before that change and after alike.
def test_a_loop_that_does_not_settle_refuses_slots_the_last_placement_holds_short_of_the_rate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """0.05 req/s x 300 tokens = 15.0 tokens/s; 2 placements after the lone request's, the rate then taking 189 slots
    on a cache that holds 340,400 // 2,300 = 148 of them, making 13.30 tokens/s (11% short): refused, not rendered
    -np 189 on 148's cache. (162 slots on 372,600 tokens, 13.64 tokens/s, until review80 items 1-2.) Since fix131 each
    placement made is offered its slots (32,768 tokens: 14 slots, 204,700: 89, 340,400: 148); none makes the rate, and
    the refusal names the one whose slots make the most ("the last one's" before: the same placement here)."""
    monkeypatch.setattr(fixed_place, "MAX_REPLACEMENTS", 2)
    seen = _held(monkeypatch)
    with pytest.raises(InfeasibleError) as refused:
        plan_file(str(_at(tmp_path, 0.05)))
    said = str(refused.value)
    assert "requests_per_second" in said
    assert "the best one's cache of 340,400 tokens holds 148 slot(s) of 2,300-token requests" in said
    made = re.search(r"which make ([0-9.]+) tokens/s beside the prompt passes", said)
    assert made is not None and float(made[1]) < 0.95 * 15.0
    ((wanted, _, _),) = seen
    assert wanted > 148


def test_a_loop_that_does_not_settle_takes_the_slots_the_last_placement_holds_where_they_make_the_rate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """0.036 req/s x 300 tokens = 10.8 tokens/s for an interactive service, whose slots are also those a request's wait
    for one fits the TTFT target in: the second placement's cache of 335,800 tokens holds 146 slots while the wait
    takes 150; 146 make 16.57 tokens/s (53% over): taken, and the rendered cache is theirs. (0.04 req/s under a bound of
    3 until review80 items 1-2 (the 5% margin gone, a logit row a token of the -ub pass): 172 slots on 395,600 tokens,
    16.76 tokens/s; that loop now settles at its third placement, and a bound of 1 or 2 there is refused.)

    fix131: every placement the loop made is offered its slots, not only the last, and the smallest cache whose slots
    make the rate and fit the wait is taken (the most weights on the GPUs): the first re-placement's cache of 294,400
    tokens (made for 128 slots, where the rate then asked 146) holds 128 making 15.59 tokens/s (44% over), p95 wait 0,
    at 4.91 tokens/s alone against 4.37 on the 335,800-token placement (146 slots, 16.57 tokens/s, taken before)."""
    monkeypatch.setattr(fixed_place, "MAX_REPLACEMENTS", 2)
    seen = _held(monkeypatch)
    parallel, ctx, said = _slots_and_cache(_at(tmp_path, 0.036, batch=False))
    ((wanted, held, made),) = seen
    assert wanted > held == parallel == 128  # 146 before fix131
    assert ctx == said == 294_400 == parallel * REQUEST  # 335,800 before fix131
    assert made > 1.2 * 0.036 * 300


def test_the_plan_says_what_the_slots_cache_took_from_the_weights(tmp_path: Path) -> None:
    """review73 item 1b: 197 slots took 26 GiB a GPU from the weights, said only by slo-missed's TPOT.

    The figures by hand (review77 item 2: the routed experts' activation and top-k sum kernels now timed for every MoE
    layer the GPUs multiply, here all 94 in the streaming mode the 198 slots run in): a token moves 94 x 4,096 x 2 =
    770,048 B of top-k sums written and 94 x 8 x (1,536 x 6 + 4,096 x 2) = 13,090,816 B over its 8 routed pairs,
    13,860,864 B; 198 slots' step 198 x 13,860,864 / (1,792 GB/s x 0.7) = 2.19 ms more, on 6.7395 s (6.557 s of it
    the weights streamed over PCIe): 6.7416 s, 0.1483 tokens/s a slot. In the 51.3% of the time the prompt passes
    leave, 300 tokens take 300 / (0.14833 x 0.51334) = 3,939.8 s (3,938.6 before: said 3,939), and all decoding
    6.7416 / 0.51334 = 13,132.8 ms a token (13,128.5). The mean TPOT at the rate (the slots' queue at 197.33 in use)
    moves alike, 13,121.7 -> 13,126.7 ms. Since review80 items 1-2 (no 5% margin beside the offloaded layers, a logit
    row a token of the -ub pass in the compute buffer) each slot's step is faster and 190 slots make the rate: the
    figures below are the engine's at that change (198 slots, 455,400 tokens, about 3,940 s, TPOT 13,126.7 / 13,132.8 ms
    before it), the derivation above the method.
    """
    plan = plan_file(str(_at(tmp_path, 0.05, batch=False)))[1].to_dict()
    (dep,) = plan["deployments"]
    (said,) = [r for r in dep["reasons"] if r.startswith("the rate is held only by")]
    # the slots that make the rate's tokens and drain the queue (a request holds its slot for its TTFT too)
    assert said.startswith("the rate is held only by 190 server slots whose KV cache of 437,000 tokens takes the GPUs'")
    assert "27.3 GiB of weights on the fullest GPU for a lone request, 1.3 with the slots" in said
    assert said.endswith("a request's 300 output tokens take about 3,787 s (63 min)")
    (missed,) = [f["message"] for f in plan["findings"] if f["code"] == "slo-missed"]
    # nearly every slot in use on average: a request's TPOT at the rate is nearly the all-busy one
    assert "TPOT 12,622.8 ms on average at the rate (12,624.1 ms with all decoding) against the interactive default" in missed


def test_slots_that_leave_the_weights_where_they_were_say_no_trade(tmp_path: Path) -> None:
    plan = plan_file(str(_at(tmp_path, 0.035)))[1].to_dict()
    assert not [r for r in plan["deployments"][0]["reasons"] if r.startswith("the rate is held only by")]


#: Qwen3-235B-A22B's KV cache a token at f16, by hand from its config.json (94 layers, 4 KV heads of 128):
#: 94 x 2 (K and V) x 4 x 128 x 2 B = 192,512 B.
KV_BYTES_A_TOKEN = 94 * 2 * 4 * 128 * 2


# fix131: an interactive service's loop settled on fewer slots than its last placement was made for, and the plan kept
# that placement: 0.04 req/s rendered -np 96 -c 372,600 (162 slots' cache, 78 of 94 layers' attention on the GPUs,
# 4.07 tokens/s) while parallel-slots said 96 slots share 220,800 tokens; 0.046 rendered -np 190 -c 634,800 (the
# parallel-slots finding: 437,000). One figure now rules the placement's KV bytes, -c and the finding.
@pytest.mark.parametrize("rps", [0.04, 0.046, 0.05])
def test_an_interactive_services_cache_is_its_slots_in_the_placement_the_render_and_the_finding(
    tmp_path: Path, rps: float
) -> None:
    path = _at(tmp_path, rps, batch=False)
    parallel, ctx, said = _slots_and_cache(path)
    assert ctx == said == parallel * REQUEST
    (dep,) = plan_file(str(path))[1].to_dict()["deployments"]
    kv = dep["details"]["offload"]["bytes"]
    assert dep["details"]["context_tokens"] == ctx
    assert kv["kv_gpu"] + kv["kv_cpu"] == ctx * KV_BYTES_A_TOKEN
