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

import pytest

from generator.api import plan_file
from generator.errors import InfeasibleError
from generator.planner import fixed_place
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


# the rate's tokens take 87, 136 and 197 slots; a request holds its slot for its TTFT too, and with those the queue would
# not drain: the fewest more that drain (review76 item 10)
@pytest.mark.parametrize(("rps", "slots"), [(0.04, 89), (0.045, 137), (0.05, 198)])
def test_the_rendered_cache_holds_the_slots_the_plan_counts(tmp_path: Path, rps: float, slots: int) -> None:
    parallel, ctx, said = _slots_and_cache(_at(tmp_path, rps))
    assert parallel == slots
    assert ctx == said == parallel * REQUEST  # was -c 446200 -np 197 at 0.05, 292100 -np 134 at 0.045


def test_a_loop_that_does_not_settle_takes_the_slots_the_last_placement_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fixed_place, "MAX_REPLACEMENTS", 3)  # the old bound: 197 slots on 194's placement
    with pytest.raises(InfeasibleError) as refused:  # 194 slots make 14.99 of the 15.0 tokens/s: refused, not -np 197
        plan_file(str(_at(tmp_path, 0.05)))
    assert "requests_per_second" in str(refused.value)
    assert "the last one's cache of 446,200 tokens holds 194 slot(s) of 2,300-token requests" in str(refused.value)


def test_the_plan_says_what_the_slots_cache_took_from_the_weights(tmp_path: Path) -> None:
    """review73 item 1b: 197 slots took 26 GiB a GPU from the weights, said only by slo-missed's TPOT."""
    plan = plan_file(str(_at(tmp_path, 0.05, batch=False)))[1].to_dict()
    (dep,) = plan["deployments"]
    (said,) = [r for r in dep["reasons"] if r.startswith("the rate is held only by")]
    # 197 slots make the rate's tokens, and one more drains the queue (a request holds its slot for its TTFT too)
    assert said.startswith("the rate is held only by 198 server slots whose KV cache of 455,400 tokens takes the GPUs'")
    assert "27.3 GiB of weights on the fullest GPU for a lone request, 1.3 with the slots" in said
    assert said.endswith("a request's 300 output tokens take about 3,939 s (66 min)")
    (missed,) = [f["message"] for f in plan["findings"] if f["code"] == "slo-missed"]
    # 197.33 of the 198 slots in use on average: a request's TPOT at the rate is nearly the all-busy one
    assert "TPOT 13,121.7 ms on average at the rate (13,128.5 ms with all decoding) against the interactive default" in missed


def test_slots_that_leave_the_weights_where_they_were_say_no_trade(tmp_path: Path) -> None:
    plan = plan_file(str(_at(tmp_path, 0.035)))[1].to_dict()
    assert not [r for r in plan["deployments"][0]["reasons"] if r.startswith("the rate is held only by")]
