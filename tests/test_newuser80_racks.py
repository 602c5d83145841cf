"""newuser80 (an infra lead buying colocation servers): ``max_racks`` in the fleet search and in its refusal.

Item 1: Qwen3-235B-A22B (block FP8) at 128k under ``rack_power_kw: 17`` and ``max_racks: 2`` was refused ("the fleet
needs 3 racks"): the cheapest layout, 3 x 8-GPU H200 servers of 10.2 kW, fits one a rack, and only that fleet was
packed; 8 x Dell XE8640 (4 x H100, 4,230 W) fit 4 a rack, 16.92 kW each, and planned at $53,010/month once the user
allowed that platform alone. The search now holds each deployment, where a fleet broke ``max_racks``, to its layouts
that pack into the racks beside those chosen before it; the refusal's advice no longer says "allow denser or fewer
GPUs" (the fleet that fits was of fewer GPUs a server, on a platform already allowed).

Item 6: a ``max_racks`` refusal said nothing of why a fleet whose kW fit the racks did not pack: whole servers do
(4 x 4,230 W = 16.92 kW over a 208 V 60 A 2N rack's 16.428 kW). It now names each server kind that splits the fleet,
its draw, how many of it a rack holds and what one more draws, what sets the rack's kW (the circuits' derating), and
the rack power that packs the fleet into ``max_racks``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from generator.api import plan_file
from generator.errors import FleetLimitError

DATA = Path(__file__).parent / "data" / "newuser80"


def _copied(tmp_path: Path, name: str) -> str:
    """The workload ``name`` of the trial and the config.json files it reads, copied to ``tmp_path``."""
    for path in DATA.iterdir():
        shutil.copy(path, tmp_path / path.name)
    return str(tmp_path / name)


def test_fleet_held_to_the_racks_plans_the_xe8640_fleet(tmp_path: Path) -> None:
    """Item 1: the fleet within 2 racks of 17 kW is planned, not refused, and says the limit bound it.

    By hand: 4 x 4,230 W = 16.92 kW <= 17 kW, so 8 XE8640 take 2 racks; 2 x 10,200 W = 20.4 kW > 17 kW, so the 3
    cheaper 8-GPU H200 servers take 3 (the runner-up says so). The month is the w2g trial's (platforms: [dell-xe8640]):
    $53,010.

    At 0.8 req/s, not the trial's 1, since acc181's 70 us per MoE layer a vLLM step landed (acc183): Qwen3-235B's 94
    MoE layers add 6.6 ms to each step, and at 1 req/s the fleet grew past what 2 racks hold (4 H200 servers, 40.8 kW,
    refused); at 0.8 the same fleets as the trial's 1 before: 8 XE8640 in 2 racks, the 3 H200 servers the runner-up.
    """
    path = Path(_copied(tmp_path, "w2e-agents-fp8ckpt-2racks.yaml"))
    path.write_text(path.read_text().replace("requests_per_second: 1\n", "requests_per_second: 0.8\n"))
    _, plan = plan_file(str(path))
    (pool,) = plan.pools
    assert (pool.node.platform_id, pool.node.gpus, pool.nodes, pool.node.power_w) == ("dell-xe8640", 4, 8, 4230)
    assert [r.power_w for r in plan.racks] == [16920, 16920]
    assert round(plan.totals["usd_per_month"]) == 53010
    (said,) = [f for f in plan.findings if f.code == "max-racks-binds"]
    assert said.path == "hardware.max_racks"
    assert "the fleets of the deployments' best layouts need 3 or more racks of 17 kW" in said.message
    assert "this fleet takes 8 node(s) in 2 rack(s)" in said.message
    over = [c for c in plan.deployments[0].runners_up if c.over_limit]
    assert over and over[0].platform_id == "supermicro-as-8125gs-tnhr"
    assert over[0].over_limit == "hardware.max_racks: its 3 servers alone need 3 racks of 17 kW, 2 allowed"


def test_refusal_says_why_whole_servers_do_not_pack(tmp_path: Path) -> None:
    """Item 6, w2c: 7 XE8640 of 4,277 W (512 GiB) drew 29.94 kW, under 2 x 17 kW, but a rack holds 3 (4 draw 17.11 kW).

    By hand: 7 x 4,277 = 29,939 W; 4 x 4,277 = 17,108 W > 17,000 W; at 17.11 kW a rack holds 4: 4 + 3, 2 racks.

    acc181's 70 us per MoE layer a vLLM step (landed by acc183; Qwen3-235B's 94 MoE layers, 6.6 ms more a step) makes
    the fleet 8 XE8640 (34.22 kW, more than 2 x 17 kW): the refusal now says so, and at 17.11 kW a rack holds 4: 4 + 4.
    No rate of this trial gives 7 again (0.85 req/s plans 6, 0.87-1 need 8), so the whole-servers case is guarded by
    w10 below alone.
    """
    with pytest.raises(FleetLimitError) as caught:
        plan_file(_copied(tmp_path, "w2c-agents-xe8640-2racks.yaml"))
    text = str(caught.value)
    assert (
        "the fleet needs 3 racks of 17 kW but hardware.max_racks is 2; its 8 servers draw 34.22 kW, more than 2 x 17 kW: "
        "a rack holds 3 x dell-xe8640 at 4,277 W (4 draw 17.11 kW)"
    ) in text
    assert "raise max_racks or rack_power_kw (to 17.11 kW: the fleet then packs into 2 racks)" in text
    assert "denser or fewer GPUs" not in text


def test_refusal_names_the_circuits_derating(tmp_path: Path) -> None:
    """Item 6, w10: 1 DGX H100 (10.2 kW) and 5 XE8640 (4.23 kW) on 208 V 60 A 3-phase circuits, 2N.

    By hand: sqrt(3) x 208 V x 60 A = 21.616 kVA, x 0.8 (continuous) x 0.95 (power factor) = 16.428 kW a rack; the
    servers draw 10.2 + 5 x 4.23 = 31.35 kW, under 2 x 16.428 kW, but a rack holds 3 XE8640 (4 draw 16.92 kW) and one
    DGX (2 draw 20.4 kW): 3 racks. At 16.92 kW the DGX and one XE8640 (14.43 kW) share a rack, the other 4 XE8640 fill
    the second.

    acc181's 70 us per MoE layer a vLLM step (landed by acc183): agents (Qwen3-235B, 94 MoE layers, 6.6 ms more a
    step) needs 3 x TP4 on H100 where 2 sufficed, so its fleet's 8-GPU server of 10.2 kW is a supermicro-as-8125gs-tnhr
    (2 x TP4 on H200) where it was a DGX H100 (2 x TP4 on H100); the same draw, the same packing.
    """
    with pytest.raises(FleetLimitError) as caught:
        plan_file(_copied(tmp_path, "w10-combined-208v60a.yaml"))
    text = str(caught.value)
    assert (
        "the fleet needs 3 racks of 16.428 kW but hardware.max_racks is 2 (a rack's 2 circuit(s) 2N, 1 serving, of "
        "208 V 60 A 3-phase: 21.616 kVA each x 0.8 continuous load x 0.95 power factor = 16.428 kW); its 6 servers draw "
        "31.35 kW, within 2 x 16.428 kW, but whole servers do not pack into 2: a rack holds "
        "1 x supermicro-as-8125gs-tnhr at 10,200 W (2 draw 20.40 kW) and 3 x dell-xe8640 at 4,230 W (4 draw 16.92 kW)"
    ) in text
    assert "(rack_circuits: 16.92 kW usable a rack packs the fleet into 2 racks by power and height)" in text
