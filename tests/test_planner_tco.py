"""Planner judgment when buying servers: total cost of ownership, whole servers, budgets, SLO defaults, racks."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from generator import catalog
from generator.calculator.report import plan_text
from generator.errors import InfeasibleError, InputError
from generator.planner import plan_workload
from generator.planner.bom import fill_channels
from generator.planner.nodes import NodeNeeds, assemble_node, has_nvswitch, node_link
from generator.planner.plan import Finding
from generator.planner.rack_findings import rack_findings
from generator.planner.racks import AIR_COOLED_RACK_LIMIT_KW, pack_racks
from generator.planner.slo import INTERACTIVE_TPOT_MS, INTERACTIVE_TTFT_P95_MS
from generator.planner.tco import node_cost, purchase_price
from generator.planner.training_comm import dp_bytes_per_gpu
from generator.sizing.constants import Constants
from generator.units import HOURS_PER_MONTH
from generator.workload import LoadedWorkload, load_workload
from generator.workload.models import Workload
from tests.conftest import REPO


def _load(tmp_path: Path, text: str) -> LoadedWorkload:
    path = tmp_path / "w.yaml"
    path.write_text(text)
    return load_workload(str(path))


def _chat(model: str, rps: float, gpus: list[str], extra: str = "", provider: str = "baremetal", slo: str = "") -> str:
    return f"""\
version: 1
name: t
deployments:
  - name: chat
    model: {model}
    inference:
      precision: bf16
      max_context_tokens: 8192
      avg_input_tokens: 1000
      avg_output_tokens: 200
      requests_per_second: {rps}
{slo}hardware:
  gpus: [{", ".join(gpus)}]
  provider: {provider}
{extra}"""


# --- total cost of ownership -------------------------------------------------------------------


def test_owned_node_monthly_cost_is_capex_over_amortization_plus_energy_and_colocation() -> None:
    platform, gpu, consts = catalog.platforms()["dgx-h100"], catalog.gpus()["h100-sxm5-80gb"], Constants()
    cost = node_cost(Workload(version=1, name="x", deployments=()), platform, gpu, 8, 10200, consts)
    energy = 10.2 * consts.power_utilization * consts.pue * consts.energy_usd_per_kwh * HOURS_PER_MONTH
    colocation = 10.2 * consts.colocation_usd_per_kw_month
    assert cost.capex_usd == 270000
    assert cost.opex_usd_per_month == pytest.approx(energy + colocation)
    assert cost.usd_per_month == pytest.approx(270000 / 36 + energy + colocation)
    assert "semianalysis" in (cost.basis or "") or "dgx-h100-system" in (cost.basis or "")


@pytest.mark.parametrize(
    ("platform_id", "gpu_id", "gpus", "usd", "estimated"),
    [
        pytest.param("dgx-h100", "h100-sxm5-80gb", 8, 270000, False, id="system-record"),
        pytest.param("dgx-b200", "b200-sxm-180gb", 8, 515000, False, id="system-record-b200"),
        # the 2020 launch price is of the DGX A100 320GB (40 GB GPUs) alone (newuser39 item 4)
        pytest.param("dgx-a100", "a100-sxm4-40gb", 8, 199000, False, id="legacy-purchase-price"),
        pytest.param("dell-xe8640", "h100-sxm5-80gb", 4, 77000 + 4 * 30000, True, id="host-plus-gpus"),
        pytest.param("am5-desktop-tower", "rtx-5090-32gb", 2, 2400 + 2 * 1999, True, id="workstation-components"),
    ],
)
def test_purchase_price_from_system_record_or_components(
    platform_id: str, gpu_id: str, gpus: int, usd: float, estimated: bool
) -> None:
    got = purchase_price(catalog.platforms()[platform_id], catalog.gpus()[gpu_id], gpus)
    assert not isinstance(got, str)
    assert got[0] == usd
    assert got[2] is estimated


def test_every_baremetal_configuration_is_priced_or_says_what_is_missing() -> None:
    wl = Workload(version=1, name="x", deployments=())
    for platform in catalog.platforms().values():
        if platform.provider != "baremetal":
            continue
        for gpu_id in platform.gpu_ids:
            for count in platform.gpu_counts:
                cost = node_cost(wl, platform, catalog.gpus()[gpu_id], count, 1000, Constants())
                if cost.usd_per_hour is None:
                    assert cost.why and platform.id in cost.why and "no purchase price" in cost.why
                else:
                    assert cost.opex_usd_per_month and cost.basis  # purchase + running costs, or a published rent


def test_workload_price_overrides_the_catalog(tmp_path: Path) -> None:
    text = _chat("meta-llama/Llama-3.1-8B-Instruct", 1, ["h100-sxm5-80gb"], "prices:\n  dgx-h100: 3.5\n")
    wl = _load(tmp_path, text).workload
    cost = node_cost(wl, catalog.platforms()["dgx-h100"], catalog.gpus()["h100-sxm5-80gb"], 8, 10200, Constants())
    assert cost.usd_per_hour == 3.5
    assert cost.basis and "workload prices" in cost.basis


# --- whole servers ---------------------------------------------------------------------------------

PCIE_PRICES = "prices:\n  dell-r760: 2.0\n  dell-r760xa: 2.5\n  dell-xe7740: 4.0\n  wrx90-workstation: 1.5\n"


@pytest.mark.parametrize(
    ("extra", "objective_used"),
    [
        pytest.param(PCIE_PRICES, "cost", id="cost-with-pcie-servers-priced"),
        # the PCIe servers' catalog prices (comparable-system estimates for the Dell hosts) rank them by cost
        pytest.param("", "cost", id="catalog-prices-only-stays-small"),
        # the gpus objective (what cost falls back to when a price cannot be formed) buys a small server too
        pytest.param("  platforms: [dell-r760, dgx-h100, dgx-a100]\nobjective: gpus\n", "gpus", id="gpus-objective-stays-small"),
    ],
)
def test_small_model_never_gets_an_eight_gpu_baseboard(tmp_path: Path, extra: str, objective_used: str) -> None:
    gpus = ["l40s-48gb", "h100-sxm5-80gb", "a100-sxm4-80gb"]
    plan = plan_workload(_load(tmp_path, _chat("meta-llama/Llama-3.1-8B-Instruct", 2, gpus, extra)))
    dep, pool = plan.deployments[0], plan.pools[0]
    assert pool.node.gpus <= 2, dep.reasons
    assert dep.details["objective_used"] == objective_used
    assert not any(f.code == "objective-fallback" for f in plan.findings)  # every server here has a price


@pytest.mark.parametrize(
    ("rps", "gpus_per_server"),
    [
        # 3 TP4 replicas: three 4-GPU HGX servers ($591k) beat two DGX H100 with 4 GPUs idle ($540k + more power)
        pytest.param(20, 4, id="20rps-4gpu-boards-cheaper"),
        # 4 TP4 replicas fill two DGX H100 exactly ($540k) against four 4-GPU servers ($788k)
        pytest.param(34, 8, id="34rps-8gpu-boards-cheaper"),
    ],
)
def test_70b_chat_uses_the_nvlink_board_that_costs_less_per_replica(tmp_path: Path, rps: float, gpus_per_server: int) -> None:
    plan = plan_workload(_load(tmp_path, _chat("meta-llama/Llama-3.1-70B-Instruct", rps, ["h100-sxm5-80gb"])))
    dep, pool = plan.deployments[0], plan.pools[0]
    assert dep.details["objective_used"] == "cost"
    assert pool.node.gpus == gpus_per_server
    assert pool.node.nvswitch is (gpus_per_server == 8)
    assert pool.capex_usd is not None and pool.opex_usd_per_month is not None
    chosen = pool.usd_per_hour
    assert chosen is not None
    assert all(r.usd_per_hour is not None and r.usd_per_hour >= chosen for r in dep.runners_up)


@pytest.mark.parametrize(
    ("pin", "replicas", "past_rate", "idle_gpus"),
    [
        # one GPU a replica: the rate needs one, and the instance paid for runs 7 more on GPUs that would idle
        ("{tp: 1, pp: 1}", 8, 7, 0),
        # three GPUs a replica: two fit the 8 GPUs, and the other two idle (no replica fits them)
        ("{tp: 1, pp: 3}", 2, 1, 2),
    ],
)
def test_idle_gpus_are_counted_and_reported(tmp_path: Path, pin: str, replicas: int, past_rate: int, idle_gpus: int) -> None:
    text = _chat("meta-llama/Llama-3.1-8B-Instruct", 0.5, ["h100-sxm5-80gb"], provider="aws")
    # on the 8-GPU p5.48xlarge alone (AWS at large rents the 1-GPU p5.4xlarge for it, with no idle GPU)
    text = text.replace("  provider: aws\n", "  provider: aws\n  platforms: [aws-p5-48xlarge]\n")
    text = text.replace("    inference:\n", f"    parallelism: {pin}\n    inference:\n")
    plan = plan_workload(_load(tmp_path, text))
    dep, pool = plan.deployments[0], plan.pools[0]
    # us-east-1: AWS's region where the workload names none (eu-north-1 has its own p5 price since newuser114)
    p5 = next(p for p in catalog.prices().values() if p.platform_id == pool.node.platform_id and p.region == "us-east-1")
    assert pool.usd_per_hour == pytest.approx(p5.usd * pool.nodes)  # the whole instance is paid for
    assert dep.details["gpus_bought"] == 8
    assert (dep.replicas, dep.details["replicas_past_rate"]) == (replicas, past_rate)  # newuser46 item 2
    assert dep.details["idle_gpus"] == plan.totals["idle_gpus"] == 8 - dep.gpus == idle_gpus
    said = next(r for r in dep.reasons if r.startswith("one replica sustains "))
    assert said.endswith(
        f"0.5 req/s need 1 independent replica(s); {past_rate} more run on GPUs of its servers that would otherwise "
        f"idle, at no added cost ({replicas} in all)"
    ), said
    idle = [f.message for f in plan.findings if f.code == "idle-gpus"]
    said = f"pool {pool.name}: 2 of 8 GPUs rented are idle (1 x 8-GPU aws-p5-48xlarge); their cost is counted"
    assert idle == ([said] if idle_gpus else [])


# --- budgets ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gpus", "provider", "platforms", "budget"),
    [
        # every bare-metal server has a purchase price; GCP publishes no price for the A4 (8 x B200)
        pytest.param(["b200-sxm-180gb"], "gcp", "  platforms: [gcp-a4-highgpu-8g]\n", 1_000_000, id="only-unpriced-hardware"),
        pytest.param(["h100-sxm5-80gb"], "baremetal", "", 100, id="every-candidate-above-the-cap"),
    ],
)
def test_budget_excludes_candidates_above_it_or_without_a_cost(
    tmp_path: Path, gpus: list[str], provider: str, platforms: str, budget: int
) -> None:
    text = _chat("meta-llama/Llama-3.1-8B-Instruct", 1, gpus, provider=provider).replace(
        f"  provider: {provider}\n", f"  provider: {provider}\n{platforms}  max_budget_usd_per_month: {budget}\n"
    )
    if provider == "gcp":  # planned only: GKE's node pools would need the cluster (fuzz35 item 6)
        text += "outputs: [terraform, ansible]\n"
    loaded = _load(tmp_path, text)
    with pytest.raises(InfeasibleError, match="budget"):
        plan_workload(loaded)


def test_budget_holds_for_the_chosen_plan(tmp_path: Path) -> None:
    text = _chat("meta-llama/Llama-3.1-8B-Instruct", 1, ["h100-sxm5-80gb"]).replace(
        "  provider: baremetal\n", "  provider: baremetal\n  max_budget_usd_per_month: 20000\n"
    )
    plan = plan_workload(_load(tmp_path, text))
    assert plan.totals["usd_per_month"] <= 20000


# --- SLO defaults ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("slo", "ttft_ms", "tpot_ms"),
    [
        pytest.param("", INTERACTIVE_TTFT_P95_MS, INTERACTIVE_TPOT_MS, id="no-targets-interactive-defaults"),
        pytest.param("      slo: {ttft_p95_ms: 800}\n", 800, INTERACTIVE_TPOT_MS, id="only-ttft-gets-default-tpot"),
        pytest.param("      service_class: batch\n", None, None, id="batch-has-no-defaults"),
    ],
)
def test_latency_targets_default_to_interactive(tmp_path: Path, slo: str, ttft_ms: float | None, tpot_ms: float | None) -> None:
    plan = plan_workload(_load(tmp_path, _chat("meta-llama/Llama-3.1-8B-Instruct", 4, ["l40s-48gb"], slo=slo)))
    details = plan.deployments[0].details
    assert details["slo_ttft_p95_ms"] == ttft_ms
    assert details["slo_tpot_ms"] == tpot_ms
    if tpot_ms is not None:
        assert details["tpot_s"] * 1000 <= tpot_ms


# --- racks and cooling -----------------------------------------------------------------------------


def test_fleet_racks_are_shared_by_all_pools(tmp_path: Path) -> None:
    text = """\
version: 1
name: fleet
deployments:
  - name: small
    model: meta-llama/Llama-3.1-8B-Instruct
    platform: dell-r760xa  # each on its own platform: both services would share one server otherwise
    inference: {precision: bf16, max_context_tokens: 4096, requests_per_second: 1}
  - name: large
    model: Qwen/Qwen2.5-32B-Instruct
    platform: dell-xe7740
    inference: {precision: bf16, max_context_tokens: 4096, requests_per_second: 1}
hardware:
  gpus: [l40s-48gb]
  provider: baremetal
  rack_power_kw: 17.3
"""
    plan = plan_workload(_load(tmp_path, text))
    assert len(plan.pools) == 2
    assert sum(p.power_w for p in plan.pools) <= 17300
    assert plan.totals["racks"] == 1
    assert all(p.racks == 1 for p in plan.pools)


def test_air_cooled_rack_above_the_limit_is_warned(tmp_path: Path) -> None:
    plan = plan_workload(_load(tmp_path, _chat("meta-llama/Llama-3.1-70B-Instruct", 34, ["h100-sxm5-80gb"])))
    assert plan.pools[0].node.power_w == 10200
    four = plan.pools[0]._replace(nodes=4)
    racks = pack_racks([four], 45)
    assert len(racks) == 1 and racks[0].power_w > AIR_COOLED_RACK_LIMIT_KW * 1000
    assert [f.code for f in rack_findings(racks)] == ["rack-exceeds-air-cooling"]
    assert rack_findings(pack_racks([four], 17.3)) == []


def test_max_racks_is_honoured(tmp_path: Path) -> None:
    text = _chat("meta-llama/Llama-3.1-70B-Instruct", 60, ["h100-sxm5-80gb"]).replace(
        "  provider: baremetal\n", "  provider: baremetal\n  max_racks: 1\n  rack_power_kw: 12\n"
    )
    with pytest.raises(InfeasibleError, match="max_racks"):
        plan_workload(_load(tmp_path, text))


def test_cloud_plans_have_no_racks(tmp_path: Path) -> None:
    plan = plan_workload(_load(tmp_path, _chat("meta-llama/Llama-3.1-8B-Instruct", 1, ["h100-sxm5-80gb"], provider="aws")))
    assert plan.totals["racks"] == 0


# --- Fabric Manager --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "platform_id",
    [
        "aws-p4d-24xlarge",
        "aws-p5-48xlarge",
        "aws-p5e-48xlarge",
        "aws-p5en-48xlarge",
        "aws-p6-b200-48xlarge",
        "azure-standard-nd96isr-h100-v5",
        "azure-standard-nd96isr-h200-v5",
        "gcp-a3-highgpu-8g",
        "dgx-h100",
    ],
)
def test_nvswitch_systems_get_fabric_manager(platform_id: str) -> None:
    platform = catalog.platforms()[platform_id]
    gpu = catalog.gpus()[platform.gpu_ids[0]]
    assert has_nvswitch(platform, gpu, 8)


@pytest.mark.parametrize("platform_id", ["aws-g6e-48xlarge", "dell-r760xa", "azure-standard-nd96isr-mi300x-v5"])
def test_pcie_and_non_nvidia_boards_have_no_fabric_manager(platform_id: str) -> None:
    platform = catalog.platforms()[platform_id]
    gpu = catalog.gpus()[platform.gpu_ids[0]]
    assert not has_nvswitch(platform, gpu, max(platform.gpu_counts))


# --- training jobs and co-location -----------------------------------------------------------------

MIXED = """\
version: 1
name: mixed
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {precision: bf16, max_context_tokens: 4096, requests_per_second: 0.5}
  - name: other
    model: Qwen/Qwen2.5-7B-Instruct
    inference: {precision: bf16, max_context_tokens: 4096, requests_per_second: 0.5}
  - name: tune
    model: meta-llama/Llama-3.1-8B
    training: {method: lora, sequence_length: 2048, dataset_tokens: 20000000, deadline_hours: 24, gradient_checkpointing: full}
hardware:
  gpus: [h100-sxm5-80gb]
  provider: aws
  platforms: [aws-p5-48xlarge]
"""


def test_rented_training_job_is_costed_per_job_not_per_month(tmp_path: Path) -> None:
    plan = plan_workload(_load(tmp_path, MIXED))
    tune = next(d for d in plan.deployments if d.name == "tune")
    pool = next(p for p in plan.pools if p.name == tune.pool)
    # the job costs its unrounded hours (0.0796 h: $4.38, not 0.08 h x the rate = $4.40); spec.json shows 0.08 h
    assert round(tune.details["usd_per_job"] / pool.usd_per_hour, 2) == tune.details["hours"] == 0.08
    assert plan.totals["training_usd_per_job"] == pytest.approx(tune.details["usd_per_job"])
    serving = sum(p.usd_per_hour or 0.0 for p in plan.pools if p.name != tune.pool) * HOURS_PER_MONTH
    assert plan.totals["usd_per_month"] == pytest.approx(serving, rel=1e-6)


def test_every_deployment_says_whether_it_is_co_located_and_why(tmp_path: Path) -> None:
    plan = plan_workload(_load(tmp_path, MIXED))
    by_name = {d.name: d for d in plan.deployments}
    assert by_name["chat"].details["co_located"] and by_name["other"].details["co_located"]
    assert any(r.startswith("co-located with other") for r in by_name["chat"].reasons)
    assert not by_name["tune"].details["co_located"]
    assert any(r.startswith("not co-located") and "training job" in r for r in by_name["tune"].reasons)


BIG_AND_SMALL = """\
version: 1
name: idle
deployments:
  - name: big
    model: meta-llama/Llama-3.1-405B-Instruct
    inference: {precision: bf16, max_context_tokens: 32768, avg_input_tokens: 3000, avg_output_tokens: 500,
                requests_per_second: 20}
  - name: small
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 30}
hardware:
  gpus: [gb200-186gb, h200-sxm-141gb]
  provider: baremetal
  cooling: liquid
  rack_power_kw: 130
"""


def test_a_deployment_that_fits_the_idle_gpus_of_bought_servers_buys_nothing(tmp_path: Path) -> None:
    """The 405B service's rate leaves tens of GPUs of its second 72-GPU rack unneeded (alone, it runs replicas past its
    rate on them); the 8B service runs on them, not on a server of its own (newuser7 item 4: the planner bought an
    8-GPU H200 server for it)."""
    big, small_and_hardware = BIG_AND_SMALL.split("  - name: small\n")
    alone = plan_workload(_load(tmp_path, big + small_and_hardware[small_and_hardware.index("hardware:") :]))
    both = plan_workload(_load(tmp_path, BIG_AND_SMALL))
    (service,) = alone.deployments
    assert service.details["replicas_past_rate"] * service.tp * service.pp >= 8
    (pool,) = both.pools
    assert pool.deployments == ("big", "small")
    assert both.totals["usd_per_month"] == pytest.approx(alone.totals["usd_per_month"])
    assert both.totals["nodes"] == alone.totals["nodes"]
    small = next(d for d in both.deployments if d.name == "small")
    assert any(r.startswith("co-located with big") for r in small.reasons)
    # dearer as a pool of its own than its runner-up: the fleet chose it (newuser14 item 6)
    chosen = "chosen for the fleet, not as a pool of its own:"
    assert any(r.startswith(chosen) and "(figures as a pool of its own)" in r for r in small.reasons)


def test_under_the_gpus_objective_a_layout_on_idle_gpus_buys_none() -> None:
    """On shared servers a layout that fits idle GPUs adds no server: it must rank before one that buys two GPUs,
    though it uses four (review 5 item 5: ``rank`` read its 0 GPUs bought as unset)."""
    from generator.planner.options import rank
    from generator.planner.plan import Candidate

    on_idle = Candidate("l40s-48gb", "dell-r760xa", 4, 4, 1, 1, 4, 0, 0.0, 0, "on idle GPUs", gpus_bought=0)
    new = Candidate("rtx-pro-6000-ws-96gb", "wrx90-workstation", 2, 2, 1, 1, 2, 1, 1.0, 1200, "new", gpus_bought=2)
    assert min([new, on_idle], key=lambda c: rank("gpus", c, share=True)) is on_idle


TWO_SERVICES = """\
version: 1
name: two
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-70B-Instruct
    inference: {precision: fp8, kv_cache_precision: fp8, max_context_tokens: 16384, avg_input_tokens: 1500,
                avg_output_tokens: 300, requests_per_second: 5, slo: {ttft_p95_ms: 1500, tpot_ms: 50}}
  - name: small
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 30}
hardware:
  gpus: [GPUS]
  provider: baremetal
"""
MIXED_GPUS = ["h100-sxm5-80gb", "mi300x-192gb", "rtx-pro-6000-ws-96gb", "l40s-48gb"]


def test_a_list_of_gpus_never_plans_a_dearer_fleet_than_one_of_its_gpus_alone(tmp_path: Path) -> None:
    """Each service's own cheapest servers are workstations (3 + 3), but one MI300X server holds both for less: the
    mixed list must find it, and say why the services do not run on their own cheapest servers."""
    alone = {}
    for gpu in MIXED_GPUS:
        try:
            alone[gpu] = plan_workload(_load(tmp_path, TWO_SERVICES.replace("GPUS", gpu))).totals["usd_per_month"]
        except InfeasibleError:
            continue
    mixed = plan_workload(_load(tmp_path, TWO_SERVICES.replace("GPUS", ", ".join(MIXED_GPUS))))
    assert mixed.totals["usd_per_month"] <= min(alone.values()) + 0.01
    assert {p.node.gpu_id for p in mixed.pools} == {"mi300x-192gb"}
    (note,) = [f for f in mixed.findings if f.code == "fleet-one-gpu-kind"]
    assert note.message.startswith("the services are planned on mi300x-192gb: $")
    assert "with each deployment on its own best servers" in note.message
    for deployment in mixed.deployments:  # each service says why its own cheaper runner-up lost
        assert deployment.reasons[-1].startswith("chosen for the fleet: the services together on mi300x-192gb")


TUNE = """\
  - name: tune
    model: meta-llama/Llama-3.1-8B-Instruct
    training: {method: lora, sequence_length: 2048, dataset_tokens: 20000000, deadline_hours: 24}
"""


def _with_deployments(text: str, keep: tuple[str, ...], add: str = "") -> str:
    """``text`` with only the deployments named in ``keep``, in that order, then ``add``'s."""
    head, rest = text.split("deployments:\n")
    body, hardware = rest.split("hardware:\n")
    blocks = {b.split("\n")[0]: "  - name: " + b for b in body.split("  - name: ")[1:]}
    return head + "deployments:\n" + "".join(blocks[name] for name in keep) + add + "hardware:\n" + hardware


def test_a_training_job_keeps_its_own_best_servers_when_the_services_share_one_gpu_kind(tmp_path: Path) -> None:
    """Review 5 item 2: the one-kind pass put the LoRA job on an 8-GPU MI300X server too ($9,303 in all, not the
    $7,840 + $1,034 of the services together and the job on its own best server)."""
    text = TWO_SERVICES.replace("GPUS", ", ".join(MIXED_GPUS))
    services = plan_workload(_load(tmp_path, text))
    job = plan_workload(_load(tmp_path, _with_deployments(text, (), TUNE)))
    both = plan_workload(_load(tmp_path, _with_deployments(text, ("chat", "small"), TUNE)))
    assert both.totals["usd_per_month"] == pytest.approx(services.totals["usd_per_month"] + job.totals["usd_per_month"], abs=0.02)
    assert {p.node.gpu_id for p in both.pools if "tune" not in p.deployments} == {"mi300x-192gb"}


def test_a_fleet_tried_on_one_gpu_kind_that_breaks_max_racks_does_not_stop_the_plan(tmp_path: Path) -> None:
    """Review 5 item 1: the H200-only fleet needs two racks; the shared fleet needs one and is the plan."""
    text = _with_deployments(BIG_AND_SMALL, ("big", "small"), TUNE)
    text = text.replace("requests_per_second: 20}", "requests_per_second: 1}").replace(
        "precision: bf16, max_context_tokens: 32768", "precision: fp8, max_context_tokens: 8192"
    )
    text = text.split("hardware:\n")[0] + "hardware:\n  gpus: [h200-sxm-141gb, rtx-pro-6000-ws-96gb]\n  provider: baremetal\n"
    unlimited = plan_workload(_load(tmp_path, text))
    assert unlimited.totals["racks"] == 1
    plan = plan_workload(_load(tmp_path, text + "  max_racks: 1\n"))
    assert plan.totals["usd_per_month"] == pytest.approx(unlimited.totals["usd_per_month"])


THREE_ON_H100 = """\
version: 1
name: three
deployments:
  - name: small
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 20, slo: {ttft_p95_ms: 1000, tpot_ms: 40}}
  - name: big
    model: meta-llama/Llama-3.1-70B-Instruct
    inference: {precision: fp8, kv_cache_precision: fp8, max_context_tokens: 16384, avg_input_tokens: 1500,
                avg_output_tokens: 300, requests_per_second: 6, slo: {ttft_p95_ms: 1500, tpot_ms: 50}}
  - name: coder
    model: Qwen/Qwen3-30B-A3B
    inference: {precision: fp8, max_context_tokens: 32768, avg_input_tokens: 4000, avg_output_tokens: 500,
                requests_per_second: 3}
hardware:
  gpus: [h100-sxm5-80gb]
  provider: baremetal
"""


@pytest.mark.parametrize("order", list(itertools.permutations(["small", "big", "coder"])), ids="-".join)
def test_services_that_fit_one_bigger_server_share_it_in_any_order(tmp_path: Path, order: tuple[str, ...]) -> None:
    """newuser8 items 1 and 2: each service alone is cheapest on a 4-GPU server, so sharing as they were chosen packed
    them into two of those ($13,253); their 7 GPUs fit one 8-GPU server for less, whichever is listed first."""
    plan = plan_workload(_load(tmp_path, _with_deployments(THREE_ON_H100, order)))
    (pool,) = plan.pools
    assert (pool.node.gpus, pool.nodes) == (8, 1)
    assert sorted(pool.deployments) == ["big", "coder", "small"]
    assert plan.totals["usd_per_month"] < 11_000
    assert [d.name for d in plan.deployments] == list(order)  # the plan keeps the workload's order


def test_co_located_deployments_carry_their_share_of_the_pool(tmp_path: Path) -> None:
    """newuser8 item 8: each of three co-located services listed the whole server's cost; summed, 3x the fleet."""
    plan = plan_workload(_load(tmp_path, THREE_ON_H100))
    (pool,) = plan.pools
    shares = [d.details for d in plan.deployments]
    assert sum(d["usd_per_month"] for d in shares) == pytest.approx(plan.totals["usd_per_month"], abs=0.05)
    assert sum(d["capex_usd"] for d in shares) == pytest.approx(pool.capex_usd, abs=2)
    assert {d["cost_share"].split(" of the ")[1] for d in shares} == {f"7 GPUs in use in pool {pool.name}"}


def test_max_nodes_holds_for_the_whole_fleet(tmp_path: Path) -> None:
    """newuser8 item 3: max_nodes was held per deployment only; a fleet of more nodes was planned without a word."""
    one = plan_workload(_load(tmp_path, THREE_ON_H100 + "  max_nodes: 1\n"))
    assert one.totals["nodes"] == 1
    busier = THREE_ON_H100.replace("requests_per_second: 20,", "requests_per_second: 60,")
    # the cheapest fleet: big and small on one DGX H100, coder on a 4-GPU XE8640, $16,909/month (three XE8640 cost
    # $19,879: the fleet of big alone on each server kind, the others sharing its idle GPUs, found the first)
    cheapest = plan_workload(_load(tmp_path, busier))
    assert (cheapest.totals["nodes"], round(cheapest.totals["usd_per_month"])) == (2, 16_909)
    assert plan_workload(_load(tmp_path, busier + "  max_nodes: 2\n")).totals["nodes"] == 2
    fewest = r"w\.yaml:\d+:\d+: hardware\.max_nodes: the fleet needs 2 nodes but hardware.max_nodes is 1; to unblock"
    with pytest.raises(InfeasibleError, match=fewest):
        plan_workload(_load(tmp_path, busier + "  max_nodes: 1\n"))  # the fewest nodes any fleet tried needs


@pytest.mark.parametrize("order", list(itertools.permutations(["small", "big", "coder"])), ids="-".join)
def test_owned_servers_go_to_the_deployments_whatever_their_order(tmp_path: Path, order: tuple[str, ...]) -> None:
    """newuser8 item 2: with one owned DGX H100, one order put small and big on it ($4,882) and another bought a
    second DGX with 7 idle GPUs ($13,066). Since the wait for a place in the batch counts (newuser72 item 6), big's 3 TP2
    replicas at 98.7% of their places take a fourth, which with small's 2 TP1 no longer fits the owned DGX: every order
    plans big (2 x TP4) on it and small and coder on an L40S server each, $8,373."""
    text = THREE_ON_H100.replace("requests_per_second: 6,", "requests_per_second: 12,").replace(
        "  gpus: [h100-sxm5-80gb]\n", "  gpus: [h100-sxm5-80gb, h200-sxm-141gb, l40s-48gb]\n"
    )
    text += "  inventory:\n    - platform: dgx-h100\n      count: 1\n"
    plan = plan_workload(_load(tmp_path, _with_deployments(text, order)))
    assert plan.totals["usd_per_month"] == pytest.approx(8373.04, abs=1.0)
    assert plan.totals["idle_gpus"] == 0


FIVE_SERVICES_ONE_DGX = """\
version: 1
name: ord
deployments:
{services}hardware:
  gpus: [h100-sxm5-80gb, l40s-48gb]
  provider: baremetal
  rack_power_kw: 40
  inventory:
    - platform: dgx-h100
      count: 1
"""
SMALL_SERVICE = """\
  - name: s{i}
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: bf16, max_context_tokens: 8192, requests_per_second: 2}}
"""
BIG_SERVICE = """\
  - name: big
    model: meta-llama/Llama-3.1-70B-Instruct
    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 10}
"""


@pytest.mark.parametrize("big_at", [0, 1, 2, 4])
def test_owned_servers_go_to_the_largest_deployment_among_more_than_four(tmp_path: Path, big_at: int) -> None:
    """Beyond MAX_DEPLOYMENTS_REORDERED not every order is tried: with 70B listed last, the first 8B took the owned DGX
    H100 alone and the 70B bought another ($13,066 a month, capex $270,000). The 70B on the owned DGX and the four 8Bs
    sharing one 4 x L40S XE7740 come to $4,882 (capex $51,271), whatever the order: the passes that hold the services
    to one server kind take them largest first, and the 70B keeps the owned DGX it can run on (was $6,731 with
    the 8Bs on four 1-GPU R760s where the 70B was listed first, $6,092 elsewhere)."""
    smalls = [SMALL_SERVICE.format(i=i) for i in range(4)]
    services = "".join([*smalls[:big_at], BIG_SERVICE, *smalls[big_at:]])
    plan = plan_workload(_load(tmp_path, FIVE_SERVICES_ONE_DGX.format(services=services)))
    assert plan.totals["usd_per_month"] == pytest.approx(4882.0, abs=1.0)
    (owned,) = [p for p in plan.pools if p.owned_nodes]
    assert owned.deployments == ("big",)


def test_the_sharing_pass_still_orders_services_by_their_first_choice(tmp_path: Path) -> None:
    """Review 7 H1: ordering the sharing passes only by the fewest GPUs a service can take lost this fleet (s1 and s3
    on one L40S pool, $9,128): s3 went alone to TP4 on L4 ($11,753, a GPU idle). Since the 1-GPU G6 sizes the small s0
    and s2 rent a g6.xlarge each ($0.8048/h) instead of a g5.xlarge ($1.006/h): $9,128 - 2 x $0.2012 x 730 = $8,835.
    Since the G4dn sizes the 3B s0 rents a g4dn.xlarge (one T4 16GB, $0.526/h) instead: $8,835 - $0.2788 x 730 = $8,631
    (g6e.12xlarge $7,659.63 + g6.xlarge $587.50 + g4dn.xlarge $383.98).

    fix74: s1 asks 0.4 req/s, not 0.5: at 0.5 its one TP2 replica's 15 places (a request holds one 18.9 s) are 63% busy,
    6.9% of requests wait for one and the p95 wait (1.09 s, Erlang C) passes the 1.02 s the 2 s TTFT target leaves
    beside the 980 ms TTFT p95 at the most load, so s1 takes a second TP2 replica, fills the g6e.12xlarge and s3 goes
    alone to a g6.12xlarge (4 x L4): $11,990, no sharing left to order. At 0.4 (50% busy, 1.2% wait, p95 0) s1 keeps
    one replica and the fleet this test guards (s1 and s3 on one L40S pool, $8,631) is planned again.

    src98: at the L40S's CUDA total (45,589 MiB, not nvidia-smi's 46,068) s1's 16,384-token TP2 replica holds too few
    places, takes a second one and the fleet is $11,990 again; at 12,288 tokens s1 keeps one and the fleet guarded is back."""
    text = """\
version: 1
name: f107
deployments:
  - {name: s0, model: meta-llama/Llama-3.2-3B-Instruct, inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 0.5}}
  - {name: s1, model: Qwen/Qwen2.5-72B-Instruct, inference: {precision: fp8, max_context_tokens: 12288, requests_per_second: 0.4}}
  - {name: s2, model: Qwen/Qwen2.5-7B-Instruct, inference: {precision: bf16, max_context_tokens: 4096, requests_per_second: 0.5}}
  - {name: s3, model: Qwen/Qwen3-30B-A3B, inference: {precision: bf16, max_context_tokens: 4096, requests_per_second: 0.5}}
hardware: {provider: aws}
"""  # noqa: E501
    plan = plan_workload(_load(tmp_path, text))
    assert plan.totals["usd_per_month"] == pytest.approx(8631.0, abs=1.0)
    assert plan.totals["idle_gpus"] == 0
    pools = {p.deployments: p.node.platform_id for p in plan.pools}
    assert (pools[("s1", "s3")], pools[("s0",)], pools[("s2",)]) == ("aws-g6e-12xlarge", "aws-g4dn-xlarge", "aws-g6-xlarge")


ONE_DGX_NOT_BOUGHT = "  platforms: [dell-xe8640]\n  inventory:\n    - platform: dgx-h100\n      count: 1\n"


@pytest.mark.parametrize("order", list(itertools.permutations(["small", "big", "coder"])), ids="-".join)
def test_services_take_the_idle_gpus_of_an_owned_server_no_more_of_are_bought(tmp_path: Path, order: tuple[str, ...]) -> None:
    """newuser8 item 4: the first service took the owned DGX H100 (2 of its 8 GPUs) and, DGX not being bought, the
    others bought a 4-GPU server ($9,409, capex $197,000) although all three fit the DGX's idle GPUs ($2,783)."""
    plan = plan_workload(_load(tmp_path, _with_deployments(THREE_ON_H100 + ONE_DGX_NOT_BOUGHT, order)))
    (pool,) = plan.pools
    assert (pool.node.platform_id, pool.nodes, pool.owned_nodes) == ("dgx-h100", 1, 1)
    assert sorted(pool.deployments) == ["big", "coder", "small"]
    assert plan.totals["capex_usd"] == 0
    assert plan.totals["usd_per_month"] == pytest.approx(2783.0, abs=1.0)


def test_replicas_beyond_the_idle_gpus_of_an_owned_kind_not_bought_go_elsewhere(tmp_path: Path) -> None:
    """The idle GPUs of an owned server no more of are bought hold what fits, no more: big at 24 req/s needs more
    than the 6 GPUs small leaves free, so it buys 4-GPU servers (a pool beyond the owned servers is never planned)."""
    text = THREE_ON_H100.replace("requests_per_second: 6,", "requests_per_second: 24,")
    text = _with_deployments(text, ("small", "big")) + ONE_DGX_NOT_BOUGHT
    plan = plan_workload(_load(tmp_path, text))
    dgx = [p for p in plan.pools if p.node.platform_id == "dgx-h100"]
    assert all(p.nodes == p.owned_nodes == 1 for p in dgx)
    assert sum(p.node.gpus * p.nodes - p.idle_gpus for p in dgx) <= 8
    assert any(p.node.platform_id == "dell-xe8640" and p.nodes > p.owned_nodes for p in plan.pools)


def test_a_pipeline_replica_takes_only_owned_servers_no_service_holds(tmp_path: Path) -> None:
    """Review 6 H1: small on part of one owned DGX left the other DGX and that one "free" to a 2-server 405B replica,
    which then booked 3 of the 2 owned servers (capex $0, "1 more to buy" of a kind never bought)."""
    text = """\
version: 1
name: s2
deployments:
  - name: small
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 5, slo: {ttft_p95_ms: 1000, tpot_ms: 40}}
  - name: huge
    model: meta-llama/Llama-3.1-405B-Instruct
    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 0.5}
hardware:
  gpus: [h100-sxm5-80gb]
  provider: baremetal
  platforms: [dell-xe8640]
  inventory:
    - platform: dgx-h100
      count: 2
"""
    plan = plan_workload(_load(tmp_path, text))
    dgx = [p for p in plan.pools if p.node.platform_id == "dgx-h100"]
    assert sum(p.nodes for p in dgx) <= 2 and all(p.nodes == p.owned_nodes for p in dgx)
    assert not any(f.code == "inventory-shortfall" for f in plan.findings)
    assert plan.totals["usd_per_month"] == pytest.approx(12192.0, abs=1.0)


def test_a_service_runs_on_two_owned_server_kinds_that_are_not_bought(tmp_path: Path) -> None:
    """newuser8 item 5: with only L40S allowed to buy, the 70B service bought 14 L40S servers ($54,436) although the
    owned DGX H100 and HGX H100 servers together hold it (nothing bought, as with H100 allowed)."""
    example = (REPO / "examples" / "fleet-existing.yaml").read_text()
    text = _with_deployments(example, ("chat",)).replace("gpus: [h100-sxm5-80gb]", "gpus: [l40s-48gb]")
    plan = plan_workload(_load(tmp_path, text))
    assert {(p.node.platform_id, p.nodes, p.owned_nodes) for p in plan.pools} == {("dgx-h100", 2, 2), ("dell-xe8640", 1, 1)}
    assert plan.totals["capex_usd"] == 0


# --- training communication ------------------------------------------------------------------------

LORA_70B = """\
version: 1
name: lora
deployments:
  - name: tune
    model: meta-llama/Llama-3.1-70B-Instruct
    training: {{method: lora, zero_stage: 3, sequence_length: 2048, dataset_tokens: 200000000, deadline_hours: 10}}
hardware:
  gpus: [l40s-48gb]
  platforms: [{platform}]
  provider: {provider}
"""


@pytest.mark.parametrize(
    ("zero", "dp", "accumulation", "trainable", "weights", "expected"),
    [
        pytest.param(2, 1, 1, 10**9, 10**11, 0.0, id="one-rank-sends-nothing"),
        pytest.param(2, 4, 1, 10**9, 10**11, 2 * 0.75 * 2e9, id="zero2-gradient-all-reduce"),
        pytest.param(1, 4, 8, 10**9, 10**11, 2 * 0.75 * 2e9, id="zero1-accumulates-locally-one-all-reduce"),
        pytest.param(2, 4, 8, 10**9, 10**11, 8 * 0.75 * 2e9 + 0.75 * 2e9, id="zero2-reduce-scatters-every-micro-batch"),
        pytest.param(3, 4, 1, 10**9, 10**11, 0.75 * 2e9 + 2 * 0.75 * 1e11, id="zero3-adds-two-weight-all-gathers"),
        pytest.param(3, 4, 8, 10**9, 10**11, 8 * (0.75 * 2e9 + 2 * 0.75 * 1e11), id="zero3-gathers-every-micro-batch"),
    ],
)
def test_data_parallel_bytes_per_gpu(
    zero: int, dp: int, accumulation: int, trainable: int, weights: int, expected: float
) -> None:
    assert dp_bytes_per_gpu(trainable, weights, zero, dp, accumulation) == pytest.approx(expected)


def test_multi_node_lora_whose_communication_dominates_gets_a_fabric(tmp_path: Path) -> None:
    plan = plan_workload(_load(tmp_path, LORA_70B.format(platform="dell-r760xa", provider="baremetal")))
    dep, pool = plan.deployments[0], plan.pools[0]
    assert pool.nodes > 1
    assert any(n.role == "fabric" for n in pool.node.nics)
    assert "GPU fabric" in dep.details["inter_node_link"]
    # the NICs the plan fits and the fabric's switches have no price: capex says it leaves them out
    (unpriced,) = [f for f in plan.findings if f.code == "fabric-unpriced"]
    assert f"pool {pool.name}: the GPU fabric fitted to its {pool.nodes} server(s)" in unpriced.message
    # over the node's 25 GbE front end the same step would spend longer communicating than computing
    gbps, link = node_link(catalog.platforms()["dell-r760xa"], catalog.gpus()["l40s-48gb"], pool.node.gpus, fabric=False)
    front_s = dep.details["dp_zero_bytes_per_gpu"] * 8 / (gbps * 1e9)
    assert "front-end Ethernet" in link
    assert front_s > dep.details["step_time"]["compute_s"]


def test_training_over_a_cloud_network_is_rejected_when_communication_dominates(tmp_path: Path) -> None:
    with pytest.raises(InfeasibleError, match="communication dominates"):
        plan_workload(_load(tmp_path, LORA_70B.format(platform="aws-g6e-12xlarge", provider="aws")))


def test_a_desktop_or_workstation_tower_never_gets_a_gpu_fabric(tmp_path: Path) -> None:
    """newuser12 item 1: 16 AM5 towers of two RTX 4090 each got 2 x 400 Gb/s InfiniBand with GPUDirect RDMA, unpriced;
    their lanes go to the GPUs and GeForce cards have no GPUDirect RDMA. Over their front end, the job's
    communication dominates: refused, as over a cloud network."""
    text = LORA_70B.format(platform="am5-desktop-tower", provider="baremetal").replace("[l40s-48gb]", "[rtx-4090-24gb]")
    text = text.replace("method: lora, zero_stage: 3", "method: qlora, framework: hf, zero_stage: 3")
    with pytest.raises(InfeasibleError, match=r"am5-desktop-tower: qlora over \d+ nodes .* front-end Ethernet .* dominates"):
        plan_workload(_load(tmp_path, text))
    platform = catalog.platforms()["wrx90-workstation"]
    gpu = catalog.gpus()["rtx-4090-24gb"]
    findings: list[Finding] = []
    node = assemble_node(platform, gpu, 4, NodeNeeds(0, 0, 0, 0, needs_fabric=True), Constants(), findings)
    assert not [n for n in node.nics if n.role == "fabric"]
    (refused,) = [f for f in findings if f.code == "no-gpu-fabric"]  # a replica spanning towers is ruled out, and why
    assert "wrx90-workstation with rtx-4090-24gb takes no GPU fabric (a tower's PCIe lanes go to its GPUs" in refused.message


def test_a_workstation_with_lanes_to_spare_and_rdma_cards_takes_a_gpu_fabric(tmp_path: Path) -> None:
    """Review 9 M5: a WRX90 Threadripper PRO (128 lanes: four GPUs and a NIC at x16) with RTX PRO cards, which do
    GPUDirect RDMA, was refused its fabric with the desktop towers: a 70B LoRA the tree had planned over 400 Gb/s
    was refused (exit 3)."""
    text = LORA_70B.format(platform="wrx90-workstation", provider="baremetal").replace("[l40s-48gb]", "[rtx-pro-6000-ws-96gb]")
    text = text.replace("deadline_hours: 10", "deadline_hours: 20")
    plan = plan_workload(_load(tmp_path, text))
    (pool,) = plan.pools
    assert pool.nodes > 1 and [n for n in pool.node.nics if n.role == "fabric"]


# --- servers the team already owns -----------------------------------------------------------------

OWNED = """\
version: 1
name: owned
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-70B-Instruct
    inference: {{precision: bf16, max_context_tokens: 8192, requests_per_second: {rps}}}
hardware:
  gpus: [l40s-48gb]
  provider: baremetal
  inventory:
    - platform: dgx-h100
      count: 2
      hosts: [{{name: dgx-01}}, {{name: dgx-02}}]
"""


def test_owned_servers_are_used_first_and_cost_only_their_upkeep(tmp_path: Path) -> None:
    plan = plan_workload(_load(tmp_path, OWNED.format(rps=5)))
    pool = plan.pools[0]
    assert pool.node.platform_id == "dgx-h100"  # owned, although the allowed GPUs list only the L40S
    assert pool.owned_nodes == pool.nodes == 1 and pool.owned_hosts == ("dgx-01",)
    assert pool.capex_usd == 0
    opex = pool.opex_usd_per_month
    assert opex is not None and pool.usd_per_hour == pytest.approx(opex / HOURS_PER_MONTH)
    (group,) = plan.totals["inventory"]
    assert (group["owned"], group["used"], group["free"], group["free_hosts"]) == (2, 1, 1, ["dgx-02"])
    assert any(f.code == "inventory-free" and "dgx-02" in f.message for f in plan.findings)


def test_only_the_shortfall_beyond_owned_servers_is_bought(tmp_path: Path) -> None:
    # the owned kind is the only one that may be bought, so the shortfall is more of it (tests/test_inventory_buying.py
    # has the table; where another allowed kind is cheaper, the shortfall goes there: tests/test_planner_split.py)
    text = OWNED.format(rps=60).replace("gpus: [l40s-48gb]", "gpus: [h100-sxm5-80gb]\n  platforms: [dgx-h100]")
    plan = plan_workload(_load(tmp_path, text))
    pool = next(p for p in plan.pools if p.node.platform_id == "dgx-h100")
    assert pool.nodes > 2 and pool.owned_nodes == 2
    assert pool.capex_usd == pytest.approx(270000 * (pool.nodes - 2))
    assert any(f.code == "inventory-shortfall" for f in plan.findings)


@pytest.mark.parametrize(
    ("group", "message"),
    [
        pytest.param("{platform: dell-xe9680-hgx-h100-h200, count: 1}", "say which under 'gpu'", id="ambiguous-gpu"),
        pytest.param("{platform: dgx-h100, count: 1, gpu: l40s-48gb}", "does not take GPU", id="wrong-gpu"),
    ],
)
def test_inventory_gpu_must_fit_the_platform(tmp_path: Path, group: str, message: str) -> None:
    text = OWNED.format(rps=1).split("  inventory:")[0] + f"  inventory:\n    - {group}\n"
    with pytest.raises(InputError, match=message):
        _load(tmp_path, text)


# --- servers a vendor would quote ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cpu_id", "sockets", "wanted", "max_gib", "dimms", "dimm_gib"),
    [
        pytest.param("xeon-platinum-8480c", 2, 2048, 4096, 16, 128, id="dgx-2tb-one-per-channel"),
        pytest.param("xeon-platinum-8470", 2, 80, None, 16, 16, id="small-need-still-fills-16-channels"),
        pytest.param("epyc-9654", 2, 3000, None, 24, 128, id="epyc-12-channels-per-socket"),
        # a desktop takes unbuffered DIMMs of at most 64 GiB: 192 GiB is 4 x 48, not 2 x 96 (newuser25 item 4)
        pytest.param("ryzen-9-7950x", 1, 200, 192, 4, 48, id="desktop-capped-at-the-platform-maximum"),
    ],
)
def test_memory_fills_every_channel_with_one_dimm_size(
    cpu_id: str, sockets: int, wanted: int, max_gib: int | None, dimms: int, dimm_gib: int
) -> None:
    cpu = catalog.cpus()[cpu_id]
    layout = fill_channels(cpu, sockets, wanted, max_gib)
    assert (layout.dimms, layout.dimm_gib) == (dimms, dimm_gib)
    assert layout.dimms % (cpu.memory_channels * sockets) == 0
    assert layout.total_gib == layout.dimms * layout.dimm_gib


def test_bare_metal_servers_get_a_named_cpu_full_channels_and_mirrored_boot(tmp_path: Path) -> None:
    plan = plan_workload(_load(tmp_path, _chat("meta-llama/Llama-3.1-8B-Instruct", 2, ["l40s-48gb"], PCIE_PRICES)))
    node = plan.pools[0].node
    assert "Xeon" in node.cpu  # Dell PowerEdge 16th generation: Intel
    assert node.memory and "per channel" in node.memory
    assert node.boot_drives and "RAID 1" in node.boot_drives


# --- pinned platform and parallelism ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("pins", "platform", "tp"),
    [
        pytest.param("    platform: dell-xe9680-hgx-h100-h200\n", "dell-xe9680-hgx-h100-h200", None, id="platform"),
        pytest.param("    parallelism: {tp: 8}\n", None, 8, id="tp8"),
        pytest.param("    platform: dgx-h100\n    parallelism: {tp: 2, pp: 1}\n", "dgx-h100", 2, id="platform-and-tp2"),
    ],
)
def test_deployment_pins_platform_and_parallelism(tmp_path: Path, pins: str, platform: str | None, tp: int | None) -> None:
    text = _chat("meta-llama/Llama-3.1-70B-Instruct", 20, ["h100-sxm5-80gb"]).replace(
        "    inference:\n", pins + "    inference:\n"
    )
    plan = plan_workload(_load(tmp_path, text))
    dep, pool = plan.deployments[0], plan.pools[0]
    if platform:
        assert pool.node.platform_id == platform
    if tp:
        assert dep.tp == tp


def test_an_impossible_pin_is_infeasible_and_says_so(tmp_path: Path) -> None:
    text = _chat("meta-llama/Llama-3.1-70B-Instruct", 20, ["h100-sxm5-80gb"]).replace(
        "    inference:\n", "    parallelism: {tp: 8}\n    platform: dell-xe8640\n    inference:\n"
    )
    with pytest.raises(InfeasibleError, match="pinned platform=dell-xe8640, tp=8"):
        plan_workload(_load(tmp_path, text))


def test_budget_holds_for_the_whole_fleet(tmp_path: Path) -> None:
    one = _chat("meta-llama/Llama-3.1-70B-Instruct", 20, ["h100-sxm5-80gb"]).replace(
        "  provider: baremetal\n", "  platforms: [dgx-h100]\n  provider: baremetal\n"
    )
    alone = plan_workload(_load(tmp_path, one)).totals["usd_per_month"]
    two = one.replace(
        "deployments:\n",
        "deployments:\n  - name: second\n    model: meta-llama/Llama-3.1-70B-Instruct\n"
        "    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 20}\n",
    )
    capped = two.replace("  provider: baremetal\n", f"  provider: baremetal\n  max_budget_usd_per_month: {alone * 1.5:.0f}\n")
    assert plan_workload(_load(tmp_path, two)).totals["usd_per_month"] > alone * 1.5  # each fits the cap alone
    with pytest.raises(InfeasibleError, match="together cost"):
        plan_workload(_load(tmp_path, capped))


def test_layouts_are_compared_on_one_power_basis(tmp_path: Path) -> None:
    plan = plan_workload(_load(tmp_path, _chat("meta-llama/Llama-3.1-70B-Instruct", 20, ["h100-sxm5-80gb"])))
    dep, pool = plan.deployments[0], plan.pools[0]
    node = pool.node
    assert node.power_components_w is not None
    # the published maximum is kept for racks and shown beside the component sum used for comparing layouts
    assert node.power_basis in ("sum of components", "published system maximum") or "published maximum" in node.power_basis
    candidates = [c for c in dep.runners_up if c.platform_id != node.platform_id]
    assert all(c.power_compared_w > 0 for c in candidates)
    assert any("summed from components" in r for r in dep.reasons)


@pytest.mark.parametrize("example", sorted(p.name for p in (Path(__file__).parents[1] / "examples").glob("*.yaml")))
def test_every_example_prints_as_text(example: str) -> None:
    loaded = load_workload(str(Path(__file__).parents[1] / "examples" / example))
    text = plan_text(plan_workload(loaded))
    assert text.startswith(loaded.workload.name + ":")


EKS_THREE = """\
version: 1
name: eks-assist
deployments:
  - name: gemma
    model: google/gemma-2-9b-it
    inference: {precision: bf16, max_context_tokens: 8192, avg_input_tokens: 2000, avg_output_tokens: 300,
                requests_per_second: 8, slo: {ttft_p95_ms: 800, tpot_ms: 30}}
  - name: moe
    model: Qwen/Qwen3-30B-A3B
    inference: {precision: fp8, kv_cache_precision: fp8, max_context_tokens: 32768, avg_input_tokens: 3000,
                avg_output_tokens: 600, requests_per_second: 4, slo: {ttft_p95_ms: 1500, tpot_ms: 25}}
  - name: llama8
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {max_context_tokens: 16384, avg_input_tokens: 1000, avg_output_tokens: 200, requests_per_second: 15,
                slo: {ttft_p95_ms: 500, tpot_ms: 20}}
hardware:
  provider: aws
  # every AWS GPU but the H100, whose 1-GPU p5.4xlarge now serves each service alone for less ($25,112/month)
  gpus: [a10g-24gb, a100-sxm4-40gb, a100-sxm4-80gb, b200-sxm-180gb, b300-sxm-270gb, h200-sxm-141gb, l4-24gb, l40s-48gb]
"""


def test_a_co_located_choice_dearer_alone_than_its_runner_up_says_the_fleet_chose_it(tmp_path: Path) -> None:
    """newuser14 item 6: "chosen by cost: ... $16,029/month" beside a runner-up at $12,227 read as a planner error;
    the fleet chose it (the idle half of a p4d another service needs).

    fix74: the fleet is now two p4de (A100 80GB, $40,073), not two p4d (40GB, $32,058): on the 40GB, moe's one TP4
    replica holds 69 places (a request 14.99 s) at 4 req/s, 87% busy, 18% of requests wait, p95 wait 2.13 s past the
    1.13 s the 1.5 s TTFT target leaves (TTFT p95 370 ms at the most load), so it takes a second (and gemma's three
    TP2 of 25 places run at 96%, p95 wait 7.6 s): 18 GPUs, three p4d ($48,087). On the 80GB moe's one TP4 holds 78
    places (77% busy, 1.8% wait, p95 0). moe is still the fleet's choice dearer alone ($20,036 for the p4de) than its
    runner-up (11 x TP1 on g6e.xlarge, $14,944: 9 such replicas of 7 places at 95% wait past the slack, 11 run at 78%,
    p95 wait 0), the case guarded.

    fix90 (P(TTFT + wait > target) <= 5%, the places at the replicas' share): back on two p4d ($32,058): moe's one TP4
    at 4 req/s (below its most) runs 90 places, 67% busy, no wait; gemma's two TP4 112 places at 64%; llama8's two TP2
    74 at 82% (6.3% wait, p95 0). moe is again the fleet's choice dearer alone ($16,029 for the p4d) than its runner-up
    ($14,944), the case guarded.

    acc120 (the L40S at its sibling L40's measured GDDR6 stream share): the runner-up needs 10 g6e.xlarge replicas, not
    11 ($13,585 = 10 x $1,358.5, was $14,944); moe is still the fleet's choice dearer alone ($16,029), the case guarded.

    acc181 (landed by acc183): vLLM's fused-MoE layers take a fixed 70 us a step each; moe (Qwen3-30B-A3B, 48 MoE
    layers) pays 3.4 ms of its 25 ms TPOT, a TP2 replica holds batch 25 (1.67 req/s) and 4 req/s take 3: the fleet is
    two p4de again ($40,073, not $32,058), moe 3 x TP2 on a p4de ($20,036 alone), its own choice 2 x TP4 on a p4d
    ($16,029; the g6e.xlarge TP1 replicas no longer the cheapest alone): the fleet's choice dearer alone, the case
    guarded."""
    plan = plan_workload(_load(tmp_path, EKS_THREE))
    assert round(plan.totals["usd_per_month"]) == 40073
    moe = next(d for d in plan.deployments if d.name == "moe")
    # fix185 item 3: its own choice said beside, where the fleet moved it
    own = "(on its own: 2 x TP4 on 1 x aws-p4d-24xlarge (8 x a100-sxm4-40gb), $16,029/month): "
    (reason,) = [r for r in moe.reasons if r.startswith(f"chosen for the fleet, not as a pool of its own {own}")]
    assert "(figures as a pool of its own), $20,036/month" in reason and "runner-up 2 x TP4" in reason
    assert "($16,029/month, 8 GPUs rented" in reason
    assert not any(r.startswith("chosen by cost") for r in moe.reasons)


GKE_PINNED_UNPRICED = """
version: 1
name: gcp-partial
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    platform: gcp-a3-megagpu-8g
    inference: {max_context_tokens: 8192, avg_input_tokens: 1000, avg_output_tokens: 200, requests_per_second: 5,
                slo: {ttft_p95_ms: 1000, tpot_ms: 50}}
  - name: embed
    model: Qwen/Qwen3-8B
    inference: {task: embed, max_context_tokens: 8192, avg_input_tokens: 500, requests_per_second: 100,
                slo: {ttft_p95_ms: 500}}
hardware:
  provider: gcp
outputs: [kubernetes]
kubernetes: {gcp_project: acme-serve, location: us-central1, zone: us-central1-b}
"""


def test_a_fleet_compared_by_power_says_so_and_an_unpriced_co_located_layout_is_the_fleets_choice(tmp_path: Path) -> None:
    """Review22 item 11: the A3 Mega chat is unpriced in us-central1, so the fleet is compared by power; the embed
    service put on its idle GPUs read "chosen by cost" (unpriced) and "come to less"."""
    plan = plan_workload(_load(tmp_path, GKE_PINNED_UNPRICED))
    embed = next(d for d in plan.deployments if d.name == "embed")
    assert not any(r.startswith("chosen by cost") for r in embed.reasons)
    assert any(r.startswith("chosen for the fleet, not as a pool of its own: ") for r in embed.reasons)
    fleet = [r for r in embed.reasons if r.endswith("(fleet-one-gpu-kind)")]
    assert fleet and all("draw less power (compared by power: a deployment had no price)" in r for r in fleet)
    assert not any("come to less" in r for d in plan.deployments for r in d.reasons)


def test_a_workstations_one_fabric_nic_is_the_bandwidth_training_is_timed_with(tmp_path: Path) -> None:
    """Review 10 item 2: a WRX90 got one 400 Gb/s NIC, and training was timed over "2 x 400 Gb/s GPU fabric"."""
    text = LORA_70B.format(platform="wrx90-workstation", provider="baremetal").replace("[l40s-48gb]", "[rtx-6000-ada-48gb]")
    plan = plan_workload(_load(tmp_path, text.replace("deadline_hours: 10", "deadline_hours: 20")))
    (pool,) = plan.pools
    (fabric,) = [n for n in pool.node.nics if n.role == "fabric"]
    assert fabric.count == 1
    (dep,) = plan.deployments
    assert any("over 1 x 400 Gb/s GPU fabric" in r for r in dep.reasons)
    assert not any("2 x 400 Gb/s GPU fabric" in r for r in dep.reasons)


def test_geforce_cards_bought_for_colocation_carry_their_licence_warning(tmp_path: Path) -> None:
    """newuser15 item 8: two RTX 4090 towers were planned and costed in colocation with no word of the GeForce driver
    licence's "No Datacenter Deployment" clause."""
    text = LORA_70B.format(platform="am5-desktop-tower", provider="baremetal")
    text = text.replace("[l40s-48gb]", "[rtx-4090-24gb]").replace(
        "training: {method: lora, zero_stage: 3, sequence_length: 2048, dataset_tokens: 200000000, deadline_hours: 10}",
        "inference: {precision: fp8, max_context_tokens: 8192, requests_per_second: 1}",
    )
    text = text.replace("meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-8B-Instruct")
    plan = plan_workload(_load(tmp_path, text))
    (warning,) = [f for f in plan.findings if f.code == "consumer-gpu-licence"]
    assert warning.level == "warning" and "section 2.1.3" in warning.message
    data_center = plan_workload(
        _load(tmp_path, text.replace("[rtx-4090-24gb]", "[l40s-48gb]").replace("am5-desktop-tower", "dell-r760"))
    )
    assert not [f for f in data_center.findings if f.code == "consumer-gpu-licence"]


PARTLY_PRICED = """\
version: 1
name: u
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    platform: dgx-b300
    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 5, slo: {ttft_p95_ms: 1500, tpot_ms: 60}}
  - name: asst
    model: Qwen/Qwen2.5-7B-Instruct
    platform: dgx-h100
    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 5, slo: {ttft_p95_ms: 1500, tpot_ms: 60}}
hardware:
  provider: baremetal
"""


def test_a_fleet_with_one_unpriced_pool_keeps_the_cost_of_the_others(tmp_path: Path) -> None:
    """fuzz21 item 14: one DGX B300 pool without a price turned the whole headline into "unpriced"."""
    from generator.render import render_plan

    path = tmp_path / "w.yaml"
    path.write_text(PARTLY_PRICED)
    plan = plan_workload(load_workload(str(path)))
    priced = [p.usd_per_hour for p in plan.pools if p.usd_per_hour is not None]
    t = plan.totals
    assert t["usd_per_month"] is None and [p.name for p in plan.pools if p.usd_per_hour is None] == t["unpriced_pools"]
    assert t["priced_usd_per_month"] == pytest.approx(sum(priced) * 730, abs=0.01)
    # newuser102: on bare metal the server is bought at a quote (purchase_prices:); a prices: rate would rent it
    unpriced = "chat_b300_sxm_270gb unpriced: add purchase_prices: to buy, prices: to rent"
    headline = f"${t['priced_usd_per_month']:,.0f}/month for 1 of 2 pools ({unpriced})"
    assert headline in plan_text(plan).splitlines()[0]
    spec = render_plan(plan, load_workload(str(path)).workload)["SPEC.md"]
    assert f"${t['priced_usd_per_month']:,.0f}/month for 1 of 2 pools (`chat_b300_sxm_270gb` unpriced)" in spec


PARTLY_PRICED_JOBS = """\
version: 1
name: j
deployments:
  - name: tune
    model: meta-llama/Llama-3.1-8B-Instruct
    platform: gcp-a3-highgpu-8g
    training: {method: lora, sequence_length: 4096, dataset_tokens: 100000000}
  - name: big
    model: meta-llama/Llama-3.1-8B-Instruct
    platform: gcp-a3-ultragpu-8g
    training: {method: lora, sequence_length: 4096, dataset_tokens: 100000000}
hardware:
  provider: gcp
kubernetes: {gcp_project: acme-ml, location: us-central1-b}
"""


def test_one_unpriced_training_job_keeps_the_cost_of_the_priced_runs(tmp_path: Path) -> None:
    """newuser28 item 3: a job on an unpriced machine type dropped every priced job's runs from the headline and SPEC.md
    without a word; the priced runs stay, and the pools without a price are named."""
    from generator.render import render_plan

    path = tmp_path / "w.yaml"
    path.write_text(PARTLY_PRICED_JOBS)
    loaded = load_workload(str(path))
    plan = plan_workload(loaded)
    t = plan.totals
    jobs = {d.name: d.details.get("usd_per_job") for d in plan.deployments}
    tune = jobs["tune"]
    assert t["training_usd_per_job"] is None and jobs["big"] is None and tune is not None and tune > 0
    assert t["priced_training_usd_per_job"] == pytest.approx(tune, abs=0.01)
    assert t["unpriced_training_pools"] == ["big_h200_sxm_141gb"]
    said = f"+ ${tune:,.0f} per run of the priced training pools (big_h200_sxm_141gb unpriced: add prices:)"
    assert said in plan_text(plan).splitlines()[0]
    spec = render_plan(plan, loaded.workload)["SPEC.md"]
    assert f"+ ${tune:,.0f} per run of the priced training pools (`big_h200_sxm_141gb` unpriced)" in spec
