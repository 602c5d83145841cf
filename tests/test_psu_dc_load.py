"""The PSU check compares the DC load with the PSUs' rating, and the purchase messages around it (newuser25 items 1, 5, 13).

A PSU's rating is its DC output. The node's wall draw (energy, rack kW, PUE) holds the PSU's own conversion loss,
which the PSU dissipates rather than delivers, so the check uses wall x psu_efficiency. By hand: 2 x RTX 5090 on AM5
is 1,644 W at the wall = 1,546 W DC (GPUs 1,150 W + CPU 170 W + DIMMs, drives, NIC, + 10% fans), inside 1,600 W; the
two AM5 towers cost 2 x ($2,400 host + 2 x $1,999 GPUs) = $12,796, where the 2 x Threadripper towers the wall
comparison forced cost $40,054.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator import catalog
from generator.api import plan_file
from generator.planner.assemble import ranked_reasons
from generator.planner.blocked import Blocked
from generator.planner.nodes import SUMMED, node_power_w, psu_unknown, wall_to_dc_w
from generator.sizing.constants import Constants

AM5_WORKLOAD = """\
version: 1
name: office-ai
deployments:
  - name: chat70
    model: meta-llama/Llama-3.3-70B-Instruct
    inference:
      precision: int4
      max_context_tokens: 16384
      avg_input_tokens: 2000
      avg_output_tokens: 400
      # fix74: 0.1, not 0.3: the one TP2 replica (0.32 req/s, batch 6, a request 18.8 s) ran its 6 places at 94% busy
      # at 0.3: 84% of requests wait, p95 147 s against the 67 ms the 6 s target leaves (TTFT p95 5,933 ms at the most
      # load), so two towers were bought; at 0.1 the places are 31% busy, 1.4% wait (p95 0): one tower again
      requests_per_second: 0.1
      # 6 s since the w4a16 entry (CALIBRATION.md): int4 prefill dequantizes in the GEMMs' main loop, TTFT p95 3,567 ms
      # at batch 1, so 4 s held a replica to batch 1 and bought 4 towers; the PSU figures are what this test is about
      slo: {{ttft_p95_ms: 6000, tpot_ms: 80}}
hardware:
  provider: baremetal
  gpus: [rtx-4090-24gb, rtx-5090-32gb]
objective: cost
constants: {{colocation_usd_per_kw_month: 0, pue: 1{extra}}}
"""


@pytest.mark.parametrize(
    ("extra", "power_w"),
    [
        # the default 94% efficiency: 1,644 W at the wall, 1,546 W DC (ruled out before, at 1,644 W > 1,600 W)
        pytest.param("", 1_644, id="psu-efficiency-0.94"),
        # a lossless PSU: wall and DC are one figure, and the same towers are bought
        pytest.param(", psu_efficiency: 1.0", 1_546, id="psu-efficiency-1.0"),
    ],
)
def test_two_rtx_5090_am5_towers_are_bought_not_threadripper_workstations(tmp_path: Path, extra: str, power_w: int) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(AM5_WORKLOAD.format(extra=extra))
    plan = plan_file(str(path))[1]
    assert [(p.node.platform_id, p.nodes, p.node.gpu_id, p.node.gpus, p.node.power_w) for p in plan.pools] == [
        ("am5-desktop-tower", 1, "rtx-5090-32gb", 2, power_w)
    ]
    (pool,) = plan.pools
    # one tower since the 5090's measured GEMM rate (geforce merge): $6,398, not two Threadripper workstations' $40,054
    assert pool.capex_usd == pytest.approx(2_400 + 2 * 1_999)
    # 1,546 W DC within a believed 1,600 W PSU by 54 W (3.4%): a note that the margin rests on it (newuser64 item 6)
    assert [f.code for f in plan.findings if f.code.startswith("psu")] == ["psu-margin-believed"]
    assert not [r for r in plan.deployments[0].reasons if "ruled out" in r]


@pytest.mark.parametrize(
    ("platform", "gpu", "gpus", "wall_w", "dc_w", "basis"),
    [
        # a published system maximum is a wall figure too: 10,200 W x 0.94 = 9,588 W DC
        pytest.param("dgx-h100", "h100-sxm5-80gb", 8, 10_200, 9_588, "published system maximum", id="own-maximum"),
        # the XE9680 borrows the DGX H100's maximum on the same baseboard: 9,588 W DC inside its 3 x 3,200 W
        pytest.param(
            "dell-xe9680-hgx-h100-h200",
            "h100-sxm5-80gb",
            8,
            10_200,
            9_588,
            "published maximum of dgx-h100 (same baseboard)",
            id="borrowed-maximum",
        ),
        # summed: GPUs 1,150 W + CPU 170 W + 1 DIMM 5 W + 1 drive 8.5 W + the NIC..., x 1.1 fans = DC; / 0.94 = wall
        pytest.param("am5-desktop-tower", "rtx-5090-32gb", 2, 1_644, 1_546, SUMMED, id="summed"),
    ],
)
def test_node_power_carries_wall_and_dc(platform: str, gpu: str, gpus: int, wall_w: int, dc_w: int, basis: str) -> None:
    from generator.planner.nodes import DEFAULT_FRONTEND_NIC
    from generator.planner.plan import Nic

    spec = catalog.platforms()[platform]
    nic = catalog.nics()[DEFAULT_FRONTEND_NIC]
    nics = (Nic("frontend", nic.id, nic.name, 1, nic.port_gbps, nic.protocol, nic.gpudirect_rdma),)
    power = node_power_w(spec, catalog.gpus()[gpu], gpus, 64, 1, nics, Constants())
    assert (power.watts, power.dc_load_w, power.basis) == (wall_w, dc_w, basis)


@pytest.mark.parametrize(("wall_w", "efficiency", "dc_w"), [(1_644, 0.94, 1_545), (10_200, 0.94, 9_588), (2_000, 1.0, 2_000)])
def test_wall_to_dc(wall_w: int, efficiency: float, dc_w: int) -> None:
    assert wall_to_dc_w(wall_w, Constants(psu_efficiency=efficiency)) == dc_w


def _blocked(platform: str, code: str, why: str, excess: float | None = None) -> Blocked:
    return Blocked("rtx-5090-32gb", platform, code, why, excess=excess)


FABRIC = "takes no GPU fabric"
PSU = "draws 3,265 W at the wall"


@pytest.mark.parametrize(
    ("blocked", "first"),
    [
        # newuser25 item 13: the 4 x 5090 WRX90's PSU limit came after the towers' missing fabric, hidden
        pytest.param(
            [_blocked("am5-desktop-tower", "no-gpu-fabric", FABRIC), _blocked("wrx90-workstation", "psu-over-capacity", PSU)],
            f"rtx-5090-32gb on wrx90-workstation: {PSU}",
            id="one-server-before-multi-node",
        ),
        pytest.param(
            [_blocked("wrx90-workstation", "psu-over-capacity", PSU), _blocked("x", "no-layout", "misses", 0.2)],
            "rtx-5090-32gb on x: misses",
            id="nearest-latency-first",
        ),
    ],
)
def test_no_layout_reasons_rank_single_server_first_and_list_all(blocked: list[Blocked], first: str) -> None:
    reasons = ranked_reasons([*blocked, *blocked])  # duplicates said once
    assert reasons[0] == first
    assert sorted(reasons) == sorted({b.text for b in blocked})


def test_psu_unknown_names_the_draw_and_the_believed_pairing() -> None:
    from generator.planner.nodes import NodePower

    found = psu_unknown(
        catalog.platforms()["dell-r760xa"],
        catalog.gpus()["rtx-pro-6000-blackwell-96gb"],
        4,
        NodePower(3_762, 3_537, SUMMED),
    )
    assert (found.level, found.code) == ("info", "psu-unknown")
    assert found.message == (
        "dell-r760xa with 4 x rtx-pro-6000-blackwell-96gb draws 3,762 W at the wall (sum of components), a DC load of "
        "3,537 W; the catalog has no PSU figure for this chassis, so nothing checks that its power supplies deliver "
        "that: check the chassis' PSU configuration for these GPUs before buying; rtx-pro-6000-blackwell-96gb in this "
        "chassis is also a belief (the catalog's GPU list for it is not all sourced): check the vendor's GPU support for it"
    )


def test_a_2u_server_without_a_psu_figure_is_chosen_with_a_note(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(
        AM5_WORKLOAD.format(extra="")
        .replace("gpus: [rtx-4090-24gb, rtx-5090-32gb]", "gpus: [rtx-pro-6000-blackwell-96gb]\n  platforms: [dell-r760xa]")
        .replace("precision: int4", "precision: fp8")
        .replace("requests_per_second: 0.1", "requests_per_second: 1")
        .replace("ttft_p95_ms: 6000, tpot_ms: 80", "ttft_p95_ms: 3000, tpot_ms: 60")
    )
    plan = plan_file(str(path))[1]
    assert [(p.node.platform_id, p.node.gpus) for p in plan.pools] == [("dell-r760xa", 4)]
    (note,) = [f for f in plan.findings if f.code == "psu-unknown"]
    assert note.message.startswith("dell-r760xa with 4 x rtx-pro-6000-blackwell-96gb draws 3,762 W at the wall")


def test_the_xe8640_host_price_says_it_is_an_8_gpu_figure() -> None:
    records = json.loads((Path(catalog.__file__).parent / "purchases.json").read_text())["purchases"]
    (host,) = [r for r in records if r["id"] == "dell-xe8640-host"]
    assert "4-GPU chassis" in host["notes"] and "overstates" in host["notes"] and "usd" in host["unsourced_fields"]
    assert catalog.platforms()["dell-xe8640"].gpu_counts == (4,)
