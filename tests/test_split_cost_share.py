"""A split service with a part on a pool it shares: each part's share, so the deployments add up to the fleet.

newuser27 item 4: the assistant (4 x TP2 on an owned A100 box, 1 x TP2 on a bought one it shares with the classifier's
2 x TP1) was charged the whole bought box as well as the owned one, and the classifier half of the bought box: the
deployments summed to $12,755 a month and $295,500 of capex against the fleet's $9,132 and $197,000.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.api import plan_file

# fix85: the assistant at 5 req/s (newuser27's was 6). A split is now sized for the wait for a place in the batch too
# (m74b item 7): at 6 req/s its 2 owned + 1 bought TP4 replicas' 3 x 51 places run 98% busy (6 x 25.02 s = 150 of 153),
# p95 wait 23.4 s past the 0.475 s the 2 s target leaves, so it takes a fourth replica, fills the bought server and the
# classifier no longer shares it. At 5 req/s the same 3 replicas (ceil(5 / 2.039)) run 82% busy, 1.0% wait, p95 0: the
# split beside a co-located service this file is about.
WORKLOAD = """\
version: 1
name: acme-ai
deployments:
  - name: assistant
    model: Qwen/Qwen3-32B
    inference: {precision: fp8, max_context_tokens: 16384, avg_input_tokens: 2000, avg_output_tokens: 500,
                requests_per_second: 5, slo: {ttft_p95_ms: 2000, tpot_ms: 50}}
  - name: classifier
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {precision: bf16, max_context_tokens: 4096, avg_input_tokens: 800, avg_output_tokens: 10,
                requests_per_second: 15, slo: {ttft_p95_ms: 500, tpot_ms: 40}}
hardware:
  gpus: [a100-sxm4-80gb]
  inventory:
    - {platform: hgx-a100-8gpu-oem, gpu: a100-sxm4-80gb, count: 1}
"""


def test_the_deployments_of_a_split_and_co_located_fleet_add_up_to_it(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD)
    plan = plan_file(str(path))[1].to_dict()
    deployments = {d["name"]: d for d in plan["deployments"]}
    split = [d for d in deployments.values() if len(d["split"]) > 1]
    shared = [p for p in plan["pools"] if len(p["deployments"]) > 1]
    if not (split and shared and any(p["name"] in {s["pool"] for s in split[0]["split"]} for p in shared)):
        pytest.fail(f"the workload no longer plans a split service beside a co-located one: {plan['pools']}")
    details = [d["details"] for d in deployments.values()]
    assert sum(d["usd_per_month"] for d in details) == pytest.approx(plan["totals"]["usd_per_month"], abs=0.05)
    assert sum(d["capex_usd"] for d in details) == pytest.approx(plan["totals"]["capex_usd"], abs=2)
    (service,) = split
    assert "the whole of pool" in service["details"]["cost_share"] and "GPUs in use in pool" in service["details"]["cost_share"]


def test_an_owned_kind_is_unpriced_only_beyond_the_owned_servers(tmp_path: Path) -> None:
    """newuser27 item 3: the owned kinds chosen read as "no price ... ranked after" priced ones; only more of them is."""
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD)
    plan = plan_file(str(path))[1].to_dict()
    # the DGX A100 launch price is of the 40 GB system alone (newuser39 item 4): its 80 GB layouts are unpriced too
    said = [f["message"] for f in plan["findings"] if f["code"] == "unpriced-dominated"]
    assert any(
        m.startswith("no price for dgx-a100 with a100-sxm4-80gb, hgx-a100-8gpu-oem with a100-sxm4-80gb (more than those owned);")
        for m in said
    )


def test_an_owned_catalog_servers_build_is_said_to_be_assumed(tmp_path: Path) -> None:
    """newuser27 item 7: the owned A100 box's CPU, RAM, drives and NICs were the planner's purchase build, stated as fact."""
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD)
    plan = plan_file(str(path))[1].to_dict()
    said = [f for f in plan["findings"] if f["code"] == "owned-build-assumed"]
    owned = [p for p in plan["pools"] if p["owned_nodes"]]
    assert [f["message"].split(":")[0] for f in said] == [f"pool {p['name']}" for p in owned]
    (finding,) = said
    assert finding["path"] == "hardware.inventory" and "the owned hgx-a100-8gpu-oem's CPU (" in finding["message"]
    bought = WORKLOAD.split("  inventory:", maxsplit=1)[0]  # nothing owned: nothing assumed
    path.write_text(bought)
    assert not [f for f in plan_file(str(path))[1].to_dict()["findings"] if f["code"] == "owned-build-assumed"]


OWNED_TWO_KINDS = """\
version: 1
name: acme-ai
deployments:
  - name: assistant
    model: Qwen/Qwen3-32B
    inference: {{precision: fp8, max_context_tokens: 16384, avg_input_tokens: 2000, avg_output_tokens: 500,
                requests_per_second: 6, slo: {{ttft_p95_ms: 2000, tpot_ms: 50}}}}
  - name: classifier
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: bf16, max_context_tokens: 4096, avg_input_tokens: 800, avg_output_tokens: 10,
                requests_per_second: 15, slo: {{ttft_p95_ms: 500, tpot_ms: 40}}}}
hardware:
  inventory:
    - {{platform: wrx90-workstation, gpu: rtx-6000-ada-48gb, count: 1}}
    - {{platform: hgx-a100-8gpu-oem, gpu: a100-sxm4-80gb, count: {a100}}}
"""


def test_owning_one_more_server_never_makes_the_plan_dearer(tmp_path: Path) -> None:
    """newuser27 item 5: a second owned A100 box took the services ($3,659 a month) where leaving it off and buying
    cheaper servers cost $3,145: owned servers first is each pass's preference, and a fleet without it is compared."""
    costs = []
    for a100 in (1, 2, 3):
        path = tmp_path / f"w{a100}.yaml"
        path.write_text(OWNED_TWO_KINDS.format(a100=a100))
        costs.append(plan_file(str(path))[1].totals["usd_per_month"])
    assert costs == sorted(costs, reverse=True), costs
    # m74f: with the slot wait assistant's 2 x TP1 on a bought XE7740 (2 x H200 NVL, $2,870 with the classifier) take a
    # third replica. With 2 or 3 boxes the passes used all the assistant needed or none ($3,659): each owned kind is now
    # also tried at each count of its servers below the most a pass took. fix85 sizes the split by the wait too: the
    # fleet is the assistant on one owned A100 box (2 x TP4, 51 places each) and one rented GH200 (1 x TP1, 74 places),
    # 176 places 85% busy at 6 req/s (a request 25 s: 2.4% wait, p95 0), the classifier on the owned workstation: $3,558
    # at every count of boxes. fix90 (P(TTFT + wait > 2 s) <= 5%, the places at the replicas' share): the bought XE7740's
    # 2 x TP1 (H200 NVL) at 3 req/s each run 86 places at that share: 172 at 150 Erlangs (87%), 5.5% wait, p95 0.12 s,
    # 1.4% past the target: no third replica, and $2,870 (with the classifier on the owned workstation) at every count
    assert [round(c) for c in costs] == [2870, 2870, 2870]


@pytest.mark.parametrize(
    ("platform", "gpu", "watts"),
    [
        ("wrx90-workstation", "rtx-6000-ada-48gb", 1978),
        ("wrx90-workstation", "rtx-4090-24gb", 2680),
        ("am5-desktop-tower", "rtx-4090-24gb", None),
    ],
)
def test_an_owned_workstation_beyond_a_wall_circuit_is_said(tmp_path: Path, platform: str, gpu: str, watts: int | None) -> None:
    """newuser27 item 8: an office workstation planned at 1,978 W with no word that a 120 V / 15 A outlet carries
    1,440 W continuously (1,368 W: 12 A x 120 V at the PSUs' power factor 0.95, as a rack's circuits are counted)."""
    path = tmp_path / "w.yaml"
    path.write_text(
        "version: 1\nname: t\ndeployments:\n  - name: chat\n    model: Qwen/Qwen3-32B\n"
        "    inference: {precision: fp8, max_context_tokens: 8192, requests_per_second: 0.5}\n"
        f"hardware:\n  buy: false\n  inventory:\n    - {{platform: {platform}, gpu: {gpu}, count: 1}}\n"
    )
    plan = plan_file(str(path))[1]
    (pool,) = plan.pools
    found = [f.message for f in plan.findings if f.code == "wall-circuit"]
    assert bool(found) == (pool.node.power_w > 1368) == (watts is not None)
    if found:
        assert pool.node.power_w == watts
        assert f"draws up to {pool.node.power_w:,} W at the wall" in found[0] and "(1,368 W:" in found[0]
        assert "120 V / 20 A" in found[0] if pool.node.power_w <= 1824 else "120 V / 20 A" not in found[0]


@pytest.mark.parametrize(("cpu", "said"), [("ryzen-9-7950x", True), (None, False)])
def test_a_home_machine_beyond_a_wall_circuit_is_said(tmp_path: Path, cpu: str | None, said: bool) -> None:
    """newuser29 item 6: 2 x RTX 5090 and a Ryzen 9 7950X given as hardware.fixed drew 1,545 W without a word; a machine
    whose CPU is not named (a server in a rack, for all specgen knows) is not said to need an outlet."""
    path = tmp_path / "w.yaml"
    path.write_text(
        "version: 1\nname: t\ndeployments:\n  - name: chat\n    model: meta-llama/Llama-3.1-8B-Instruct\n"
        "    inference: {max_context_tokens: 8192}\nhardware:\n  provider: baremetal\n"
        "  fixed: {gpu: rtx-5090-32gb, gpu_count: 2, ram_gib: 192" + (f", cpu: {cpu}" if cpu else "") + "}\n"
    )
    plan = plan_file(str(path))[1]
    found = [f for f in plan.findings if f.code == "wall-circuit"]
    assert bool(found) is said
    if said:
        (pool,) = plan.pools
        assert found[0].path == "hardware.fixed" and pool.node.power_w > 1368
        assert found[0].message.startswith(f"the machine draws up to {pool.node.power_w:,} W at the wall")


MIX = """\
version: 1
name: mix
deployments:
  - {name: chat, model: meta-llama/Llama-3.1-70B-Instruct, inference: {precision: fp8, max_context_tokens: 8192,
     requests_per_second: 12, slo: {ttft_p95_ms: 2000, tpot_ms: 60}}}
  - {name: small, model: meta-llama/Llama-3.1-8B-Instruct, inference: {precision: bf16, max_context_tokens: 8192,
     requests_per_second: 30, slo: {ttft_p95_ms: 1000, tpot_ms: 40}}}
  - {name: emb, model: BAAI/bge-m3, inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 50,
     task: embed}}
hardware:
  gpus: [h100-sxm5-80gb, l40s-48gb]
  inventory:
    - {platform: dgx-a100, gpu: a100-sxm4-80gb, count: 1}
"""


@pytest.mark.parametrize("r760", [0, 1, 2])
def test_an_owned_kind_the_fleet_need_not_use_is_left_off(tmp_path: Path, r760: int) -> None:
    """fuzz24 item H2: an owned R760 beside a DGX A100 took the embedder ($484 a month of upkeep) where the DGX's idle
    GPUs held it: $8,883 against $8,400 without the R760. Each owned kind is also left off in turn."""
    path = tmp_path / "w.yaml"
    extra = f"    - {{platform: dell-r760, gpu: l40s-48gb, count: {r760}}}\n" if r760 else ""
    # fix74 (m74f): chat at 11 req/s, not 12. At 12 its one TP4 on the bought XE8640 (12.52 req/s, 151 places, a
    # request holds one 12.06 s) runs them 96% busy: 50% of requests wait, p95 wait 4.4 s past the 1.7 s the 2 s TTFT
    # target leaves (TTFT p95 296 ms at the most load), so it takes a second TP4 and a second XE8640 ($13,253), and the
    # fleet is then 2 x TP2 chat beside small and emb on one bought DGX H100 ($10,283), both owned kinds left off: no
    # longer the regime this test is for. At 11 (88% busy, 7.8% wait, p95 0.29 s) chat fits one XE8640 again, small and
    # emb share the owned DGX A100, and the R760 fleet is $8,883 against $8,400, the figures of fuzz24 item H2.
    path.write_text(MIX.replace("requests_per_second: 12,", "requests_per_second: 11,", 1) + extra)
    plan = plan_file(str(path))[1]
    assert plan.totals["usd_per_month"] == pytest.approx(8400.0, abs=1.0)
    if r760:
        assert any(f.code == "inventory-free" and "dell-r760" in f.message for f in plan.findings)


def test_a_kind_left_off_is_planned_with_every_sharing_pass(tmp_path: Path) -> None:
    """fuzz24's grid: with an owned R760 beside an owned DGX H100 the embedder took the R760 ($484 of upkeep) where the
    services shared two DGX H100 ($13,066): the passes that hold services to one kind run with kinds left off too."""
    text = (
        MIX.replace("requests_per_second: 12,", "requests_per_second: 30,")
        .replace("requests_per_second: 30, slo: {ttft_p95_ms: 1000", "requests_per_second: 60, slo: {ttft_p95_ms: 1000")
        .replace("dgx-a100, gpu: a100-sxm4-80gb", "dgx-h100, gpu: h100-sxm5-80gb")
    )
    costs = []
    for extra in ("", "    - {platform: dell-r760, gpu: l40s-48gb, count: 1}\n"):
        path = tmp_path / "w.yaml"
        path.write_text(text + extra)
        costs.append(round(plan_file(str(path))[1].totals["usd_per_month"], 2))
    assert costs == [13_065.66, 13_065.66]


def test_one_owned_kind_is_also_left_off_whole(tmp_path: Path) -> None:
    """fuzz25 H2: with one owned R760 the embedder took it ($484 of upkeep) beside a bought DGX H100 that holds all
    three services alone: $10,767 against $10,283 owning nothing. With servers bought, the passes also leave every
    owned kind off, in every order the sharing passes take."""
    text = (
        MIX.replace("requests_per_second: 12,", "requests_per_second: 4,")
        .replace("requests_per_second: 30, slo: {ttft_p95_ms: 1000", "requests_per_second: 60, slo: {ttft_p95_ms: 1000")
        .replace("requests_per_second: 50,", "requests_per_second: 200,")
        .replace("    - {platform: dgx-a100, gpu: a100-sxm4-80gb, count: 1}\n", "")
        .replace("  inventory:\n", "")
    )
    costs = []
    for extra in ("", "  inventory:\n    - {platform: dell-r760, gpu: l40s-48gb, count: 1}\n"):
        path = tmp_path / "w.yaml"
        path.write_text(text + extra)
        costs.append(round(plan_file(str(path))[1].totals["usd_per_month"], 2))
    assert costs[1] <= costs[0] and costs[0] == pytest.approx(10_283, abs=1)
