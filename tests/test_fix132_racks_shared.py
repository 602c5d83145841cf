"""fix132 (review80 item 7): the search held to ``max_racks`` tries services sharing servers, and counts racks so.

Where every fleet of the first passes broke ``hardware.max_racks``, the passes ran again with each deployment held to
its layouts that pack into the racks beside those chosen before it, but only with each service on servers of its own
(``share=False``), and ``racks_needed`` counted the racks so. A fleet whose services share a server, and which fits the
racks only so, was never tried under the limit: the plan refused it (``refused.yaml``) or bought more servers than
sharing needs (``overbuy.yaml``). The racked passes now run sharing servers too, ``racks_needed`` pools the options as
:func:`~generator.planner.assemble.build_plan` does, and the cheapest fleet within the racks wins.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest

from generator.api import plan_file
from generator.errors import FleetLimitError
from generator.planner import assemble

DATA = Path(__file__).parent / "data" / "fix132"


def test_two_services_sharing_one_dgx_fit_the_one_rack() -> None:
    """A 70B fp8 service and an 8B one under one rack of 11 kW, DGX H100 (8 GPUs, 10,200 W) only.

    By hand: a rack of 11 kW holds one DGX H100 (2 draw 20.4 kW). The 70B's cheapest layouts run TP3 replicas (or
    fill the server), which no other service can share (8 GPUs are not a whole number of 3-GPU replicas), so every
    fleet of the first passes took 2 DGX and the plan refused. 2 x TP2 replicas (4 GPUs) and the 8B's one GPU share one
    DGX: 5 of 8 GPUs, 10.2 kW, one rack; $270,000 / 36 = $7,500 + $906 energy + $1,877 colocation = $10,283 a month.
    """
    _, plan = plan_file(str(DATA / "refused.yaml"))
    (pool,) = plan.pools
    assert (pool.node.platform_id, pool.nodes) == ("dgx-h100", 1)
    assert sorted(d.name for d in plan.deployments) == ["chat", "helper"]
    assert {d.pool for d in plan.deployments} == {pool.name}
    assert len(plan.racks) == 1
    assert round(plan.totals["usd_per_month"]) == 10283
    chat = next(d for d in plan.deployments if d.name == "chat")
    assert (chat.tp, chat.replicas) == (2, 2)
    (said,) = [f for f in plan.findings if f.code == "max-racks-binds"]
    assert "this fleet takes 1 node(s) in 1 rack(s)" in said.message


def test_services_share_servers_rather_than_buy_one_more() -> None:
    """review80 item 7's over-buy: within 2 racks of 30 kW, s1 and s2 share 2 XE8640 instead of s1 buying an R760xa.

    Before, the racks held each service to servers of its own: 4 DGX H100 (s0), 2 XE8640 (s2) and 1 R760xa with one
    L40S (s1), 7 nodes, $55,472 a month. s1's one TP1 replica fits beside s2's 3 TP2 replicas on the 2 XE8640 (7 of 8
    GPUs; s2 alone filled them with 4): 6 nodes, 49.3 kW in 2 racks, $1,088 a month less (the R760xa's month).
    """
    _, plan = plan_file(str(DATA / "overbuy.yaml"))
    pools = {(p.node.platform_id, p.nodes) for p in plan.pools}
    assert pools == {("dgx-h100", 4), ("dell-xe8640", 2)}
    shared = next(p for p in plan.pools if p.node.platform_id == "dell-xe8640")
    assert shared.name == "s1_s2_h100_sxm5_80gb"
    assert plan.totals["nodes"] == 6
    assert len(plan.racks) == 2
    assert round(plan.totals["usd_per_month"]) == 55472 - 1088


def test_refusal_stands_where_sharing_does_not_fit_either() -> None:
    """At 12 req/s the 70B service alone needs more than one DGX: sharing or not, 2 racks of 11 kW; refused as before."""
    with pytest.raises(FleetLimitError) as caught:
        plan_file(str(DATA / "nofit.yaml"))
    text = str(caught.value)
    assert caught.value.limit == "max_racks"
    assert "the fleet needs 2 racks of 11 kW but hardware.max_racks is 1" in text
    assert "the search found no fleet of the GPUs and servers allowed that packs into 1 rack(s)" in text


@pytest.mark.parametrize("name", ["refused.yaml", "overbuy.yaml", "nofit.yaml"])
def test_racks_needed_counts_every_fleet_as_the_plan_racks_it(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The oracle is :func:`build_plan` itself: for every fleet the search assembles, ``racks_needed`` of its options
    is the racks the plan packs (or the racks its ``max_racks`` refusal says it needs), sharing servers or not.

    Before, ``racks_needed`` counted each option on servers of its own: the shared DGX of ``refused.yaml`` was 2 racks.
    """
    original = assemble.build_plan
    seen: list[tuple[float, int]] = []

    def checked(loaded: Any, consts: Any, chosen: Any, *args: Any, **kwargs: Any) -> Any:
        needed = assemble.racks_needed(loaded.workload, [(i, opt) for i, opt, _ in chosen])
        try:
            plan = original(loaded, consts, chosen, *args, **kwargs)
        except FleetLimitError as exc:
            if exc.limit == "max_racks":
                seen.append((exc.needed, needed))
            raise
        seen.append((len(plan.racks), needed))
        return plan

    monkeypatch.setattr(assemble, "build_plan", checked)
    with contextlib.suppress(FleetLimitError):
        plan_file(str(DATA / name))
    assert seen
    assert all(packed == needed for packed, needed in seen), seen
