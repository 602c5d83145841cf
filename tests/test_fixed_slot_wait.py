"""The wait for a server slot on a machine of yours (review74 item 6).

`hardware.fixed` at 0.01 req/s of a 70B offloaded to RAM takes 2 llama.cpp server slots, and a request holds one for
about two minutes (its TTFT and 300 output tokens at 2.57 tokens/s): 1.19 Erlangs on 2 slots, so over 40% of requests
wait for one, about five minutes at p95. The plan said the TTFT missed by 0.1 s and never that requests queue. The
machine is fixed, so nothing is added for the wait: it is stated (a reason line, ``slot_wait_*`` details) and warned
of (``slot-wait``) where more than one request in twenty waits.

The oracle is the M/M/c textbook, written here: Erlang B by its recursion ``B(k) = A B(k-1) / (k + A B(k-1))``, then
``C = B / (1 - rho (1 - B))`` and ``P(W > t) = C exp(-(c - A) t / S)``.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest

from generator.api import plan_file
from tests.conftest import REPO

HOME = (REPO / "examples" / "home-70b-offload.yaml").read_text()


def _erlang_c(servers: int, offered: float) -> float:
    blocking = 1.0
    for k in range(1, servers + 1):
        blocking = offered * blocking / (k + offered * blocking)
    rho = offered / servers
    return blocking / (1 - rho * (1 - blocking))


def _plan(tmp_path: Path, rps: float, output_tokens: int = 300) -> dict[str, Any]:
    text = re.sub(r"requests_per_second: [0-9.]+", f"requests_per_second: {rps:g}", HOME)
    text = re.sub(r"avg_output_tokens: [0-9]+", f"avg_output_tokens: {output_tokens}", text)
    path = tmp_path / "home.yaml"
    path.write_text(text)
    return plan_file(str(path))[1].to_dict()


@pytest.mark.parametrize(
    ("rps", "slots"),
    [
        (0.01, 2),  # the example: two slots
        (0.005, 1),  # one stream makes the rate: one slot, an M/M/1
        (0.02, None),  # more slots; whatever the search takes
    ],
)
def test_the_wait_is_erlang_c_over_the_slots(tmp_path: Path, rps: float, slots: int | None) -> None:
    plan = _plan(tmp_path, rps)
    details = plan["deployments"][0]["details"]
    parallel = details["runtime_settings"]["llama.cpp_options"].get("parallel", 1)
    assert slots is None or parallel == slots
    request_s = details["request_s"]
    # a request holds its slot for its TTFT and its output at a slot's speed: longer than the TTFT and a lone stream's
    assert request_s > details["ttft_s"] + 300 / details["decode_tokens_per_s"] * 0.99
    offered = rps * request_s
    waits = _erlang_c(parallel, offered)
    assert details["slot_wait_share"] == pytest.approx(waits, abs=1e-3)
    p95 = request_s * math.log(waits / 0.05) / (parallel - offered) if waits > 0.05 else 0.0
    assert details["slot_wait_p95_s"] == pytest.approx(p95, rel=2e-3, abs=0.01)
    (line,) = [r for r in plan["deployments"][0]["reasons"] if "a request holds " in r and "for about" in r]
    assert (f"one of the {parallel} server slots" if parallel > 1 else "the server's one slot (no -np)") in line
    assert f"{offered:,.2f} Erlangs at {rps:g} req/s" in line
    warned = [f for f in plan["findings"] if f["code"] == "slot-wait"]
    assert bool(warned) == (waits > 0.05)
    if warned:
        assert warned[0]["path"] == "deployments[0].inference.requests_per_second"
        assert f"{waits:.0%} of requests wait for one" in warned[0]["message"]


def test_the_example_waits_minutes_and_says_so(tmp_path: Path) -> None:
    plan = _plan(tmp_path, 0.01)
    details = plan["deployments"][0]["details"]
    # by hand: 2 slots at 1.19 Erlangs (59%): C = 2 rho^2 / (1 + rho) = 0.44, p95 = 118.7 ln(0.44 / 0.05) / 0.81 = 318 s
    assert details["slot_wait_share"] == pytest.approx(0.444, abs=0.005)
    assert 300 < details["slot_wait_p95_s"] < 340
    (warned,) = [f for f in plan["findings"] if f["code"] == "slot-wait"]
    assert "p95 wait 318 s (5.3 min)" in warned["message"]


def test_a_quiet_machine_is_not_warned(tmp_path: Path) -> None:
    plan = _plan(tmp_path, 0.0002, output_tokens=100)
    details = plan["deployments"][0]["details"]
    assert details["slot_wait_share"] < 0.05 and details["slot_wait_p95_s"] == 0
    assert not [f for f in plan["findings"] if f["code"] == "slot-wait"]
