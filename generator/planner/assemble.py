"""Turn the chosen option of every deployment into pools, per-deployment plans, totals and findings."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

from generator.errors import FleetLimitError, InfeasibleError, InputError
from generator.planner.assembly_cache import geforce_left_out_findings, serving_details
from generator.planner.assembly_cache import node as assembled_node
from generator.planner.batch_job import (
    hourly_job_parts,
    idle_service_findings,
    job_details,
    job_findings,
    job_pools,
    node_down_rps,
    request_seconds,
    waits_for_runs,
    zero_pools,
)
from generator.planner.beside_training import beside_findings
from generator.planner.blocked import (
    Blocked,
)
from generator.planner.candidates import (
    SizedOptions,
    capex_cap_usd,
    shared_gpus_held,
)
from generator.planner.capex_scope import capex_excludes_finding
from generator.planner.chain_runs import sequence_month_per_run
from generator.planner.checkpoint_storage import checkpoint_disk
from generator.planner.choice_reasons import (
    _buys,
    _choice_reason,
    _offer_key,
    distinct_runners_up,
    missing_gpu_findings,
    no_better_text,
    purchase,
    ranked_reasons,
    same_purchase_reason,
    tie_break_reason,
    twin_reasons,
)
from generator.planner.cluster_findings import (
    device_plugin_findings,
    gpu_taint,
    own_cluster,
    single_host_findings,
    unrated_findings,
)
from generator.planner.cold_start import cold_start_findings
from generator.planner.colocated_ram import colocated_host_ram_bytes
from generator.planner.colocation import billed_per_rack, colocation_findings, rack_bill
from generator.planner.contract_share import _add_undrawn_contract, _sequence_turn
from generator.planner.cost_details import _average_details, _cost_details, _pool_share, _split_share, _token_cost
from generator.planner.custom import custom_drives_said, custom_power_findings
from generator.planner.derived_margin import derived_price_margin
from generator.planner.driver_series import (
    driver_series_findings,
)
from generator.planner.engine_limits import engine_setting_findings
from generator.planner.engine_support import engine_support_findings
from generator.planner.geforce_findings import _consumer_gpu_findings
from generator.planner.given_inputs import _given, _inputs
from generator.planner.gpu_power_limit import gpu_power_limit_findings
from generator.planner.host_address import missing_address_findings
from generator.planner.host_gpus import with_host_gpus
from generator.planner.idle_pool_findings import _idle_findings
from generator.planner.idle_training import idle_training_findings
from generator.planner.inference import (
    ReplicaShape,
)
from generator.planner.inference_details import idle_bound_note, replica_note, routing_note, serving_memory
from generator.planner.inventory import ServerKey, free_servers, take_owned
from generator.planner.inventory_place import _owned_idle_while_bought, _place_on_inventory
from generator.planner.lora_plan import lora_findings
from generator.planner.lora_slot_wait import lora_slot_findings
from generator.planner.memory_edge import spread_finding
from generator.planner.naming import MAX_NODES_PER_POOL, max_pool_name, unique_pool_names
from generator.planner.narrower import narrower_reason
from generator.planner.nodes import NodeNeeds, node_cpu
from generator.planner.online_quantization import (
    gaudi_fp8_findings,
    online_peak_findings,
    served_file_bytes,
    unserved_precision_findings,
)
from generator.planner.option import Option, pool_labels, sustained_rps
from generator.planner.options import (
    allowed_hardware,
    karpenter_left_out_findings,
    residency_left_out_findings,
    zone_left_out_findings,
    zone_left_out_reason,
)
from generator.planner.owned_build import (
    owned_fabric_findings,
    owned_ram_finding,
    slow_fabric_findings,
)
from generator.planner.peak import (
    CLOUD_PROVIDERS,
    average_findings,
    pool_at_average,
    scaled_pools,
)
from generator.planner.plan import (
    DeploymentPart,
    DeploymentPlan,
    Finding,
    Plan,
    Pool,
    RackSupply,
    sorted_findings,
)
from generator.planner.plan_runs import (
    _chain_runs_per_month,
    _given_rate_run_findings,
    _monthly_runs,
    _overlapping_runs,
    _rented_jobs,
    _sequenced,
    _with_runs,
)
from generator.planner.plan_totals import budget_spend_usd, fleet_up_front_usd, totals
from generator.planner.pool_groups import (
    _colocation_groups,
    _colocation_reasons,
    _named_pool_reasons,
    _pool_units,
    alone_over_limit,
    racks_needed,
)
from generator.planner.pool_names import (
    check_named_pools,
    derived_findings,
    kept_apart,
    kept_apart_findings,
    naming_labels,
)
from generator.planner.pooling import (
    encoder_batch_findings,
)
from generator.planner.price_dates import price_dated_finding, price_third_party_finding
from generator.planner.price_region import asked_region, budget_basis, pool_region_findings, price_region_findings
from generator.planner.rack_findings import (
    default_rack_power_findings,
    max_racks_refusal,
    rack_findings,
    rack_headroom_findings,
    racks_under_air_limit,
    spread_under_air_limit,
)
from generator.planner.rack_supply import feed_loss_findings, rack_feeds, rack_supply, voltage_findings, with_circuit_loads
from generator.planner.racks import (
    Rack,
    assumed_height_findings,
    pack_racks,
    rack_specs,
    too_tall,
)
from generator.planner.rdna3_finding import rdna3_engine_findings
from generator.planner.reason_text import _percent
from generator.planner.region_offer import region_pool_findings
from generator.planner.region_unchecked import region_unchecked_findings
from generator.planner.request_lengths import request_length_findings
from generator.planner.residency_costs import rented_residency_findings
from generator.planner.ruled_out import psu_ruled_out
from generator.planner.run_reasons import ContractReason, with_contract_reasons
from generator.planner.setting_findings import (
    implausible_setting_findings,
    model_findings,
    unused_setting_findings,
)
from generator.planner.sglang_fraction import sglang_fraction_findings
from generator.planner.share_findings import _kept_off_shares, _shares_left_empty
from generator.planner.site_power import fleet_power_w, site_power_findings, site_power_refusal
from generator.planner.split import TRAINING_NOT_SPLIT, part_rates
from generator.planner.spot import AKS_SPOT_TAINT, on_demand_text, priced_on_demand, spot_findings
from generator.planner.spread import (
    packing_findings,
    spread_findings,
    spread_services,
    spreads,
)
from generator.planner.tco import (
    BuiltHost,
    billed_per_run,
    fleet_cost,
)
from generator.planner.throughput_gaps import gap_elsewhere_finding, throughput_gap_finding, unchecked_throughput_finding
from generator.planner.training_details import _training_details
from generator.planner.training_energy import charge_runs_energy, owned_pool_runs, training_energy_findings
from generator.planner.training_findings import _training_findings, full_finetune_headroom_findings
from generator.planner.unpriced_findings import _no_price, _unpriced_fabric_findings
from generator.planner.vcpu_quota import vcpu_quota_findings
from generator.sizing.constants import Constants
from generator.sizing.loadability import computes_bf16
from generator.sizing.precision import WeightFormat
from generator.sizing.psu_feeds import Feeds
from generator.workload import LoadedWorkload
from generator.workload.models import InferenceDeployment, TrainingDeployment
from generator.workload.value_checks import given_in

if TYPE_CHECKING:
    pass

#: The names other modules and tests import from here, some of them defined in the modules split off this one.
__all__ = [
    "_buys",
    "_offer_key",
    "_owned_idle_while_bought",
    "_percent",
    "build_plan",
    "device_plugin_findings",
    "distinct_runners_up",
    "fleet_up_front_usd",
    "gpu_taint",
    "own_cluster",
    "purchase",
    "racks_needed",
    "ranked_reasons",
    "single_host_findings",
    "totals",
    "twin_reasons",
]


def build_plan(
    loaded: LoadedWorkload,
    consts: Constants,
    chosen: list[tuple[int, Option, list[Option]]],
    findings: list[Finding],
    objectives: dict[int, str] | None = None,
    ruled_out: dict[str, list[Blocked]] | None = None,
    sizes: SizedOptions | None = None,
) -> Plan:
    """Assemble pools (co-locating inference deployments where it saves nodes) and the plan.

    ``ruled_out`` holds, by deployment name, the layouts the search dropped and why; ``sizes``, the search's options by
    server kind (a training job's on a serving pool's servers are looked up there, not sized again).
    """
    ruled_out = ruled_out or {}
    # the search pass's findings, copied: appended to in place, they were the pass's too, and a fleet made from that pass
    # (a training job moved beside a service) kept this fleet's findings of its pools and layouts (fix190)
    findings = list(findings)
    wl = loaded.workload
    # the jobs of a chain (run_after) each take their own layout on the chain's one pool, in turn
    sequenced = _sequenced(wl, chosen)
    chosen = [(i, sequenced[i].own if i in sequenced else opt, rest) for i, opt, rest in chosen]
    groups = _colocation_groups([(index, opt) for index, opt, _ in chosen], sequenced)
    colocation = {**_colocation_reasons(wl, groups), **_named_pool_reasons(wl, groups)}
    units = _pool_units(wl, groups)
    for unit, nodes in units:
        if nodes > MAX_NODES_PER_POOL:
            who = ", ".join(wl.deployments[i].name for i, _ in unit)
            raise InfeasibleError(
                f"deployments {who} together need {nodes:,} nodes, more than the {MAX_NODES_PER_POOL:,} one pool may have"
            )
    pool_units = [unit for unit, _ in units]
    alone = kept_apart(wl, pool_units)  # a deployment that cannot share its named pool's servers (fuzz21 item 1)
    labels = naming_labels(wl, pool_units, alone)
    check_named_pools(loaded, pool_units, labels, alone)
    names = unique_pool_names(labels, max_pool_name(wl.hardware.provider))
    findings += kept_apart_findings(wl, pool_units, names, alone)
    findings += derived_findings(wl, pool_units, names, labels, alone)
    findings += request_length_findings(loaded)  # newuser97 item 3: sized at the default lengths, said
    pools: list[Pool] = []
    pool_of: dict[tuple[int, ServerKey], str] = {}
    owned_left = free_servers(wl)  # the owned servers of each kind no pool formed so far counts
    for (unit, nodes), name in zip(units, names, strict=True):
        pools.append(_pool(loaded, unit, name, nodes, consts, findings, owned_left))
        for index, part in unit:
            pool_of[(index, part.server_kind)] = name
    feasible_on: dict[ServerKey, set[str]] = {}  # the deployments with a feasible layout on each server kind
    for index, best, rest in chosen:
        for part in (part for o in (best, *rest) for part in o.pieces):
            feasible_on.setdefault(part.server_kind, set()).add(wl.deployments[index].name)
    pools, inventory = _place_on_inventory(wl, pools, findings, ruled_out, feasible_on, consts)
    # services whose rate varies (average_requests_per_second): their pools at the average, which a cloud scales down to
    at_average = {name: at for (unit, n), name in zip(units, names, strict=True) if (at := pool_at_average(wl, unit, n))}
    pools = scaled_pools(wl, pools, at_average)
    in_use = {name: sum((part.gpus_used for _, part in unit), Fraction(0)) for (unit, _), name in zip(units, names, strict=True)}
    racks: list[Rack] = []
    undrawn: dict[str, float] = {}  # pool -> USD a month of its racks' contracted kW left undrawn (rack_circuits)
    supply: RackSupply | None = None
    feeds: Feeds | None = None
    if wl.hardware.provider == "baremetal":
        if (why := too_tall(pools, wl.hardware.rack_units_reserved)) is not None:
            raise InputError(why, loaded.document.locate(("hardware", "rack_units_reserved")))
        if wl.hardware.rack_circuits is not None:
            feeds = rack_feeds(wl.hardware.rack_circuits)
        racks = pack_racks(pools, wl.hardware.rack_power_kw, wl.hardware.rack_units_reserved, feeds, wl.hardware)
        racks = spread_under_air_limit(
            racks, pools, wl.hardware.rack_power_kw, wl.hardware.rack_units_reserved, feeds, wl.hardware
        )
        spread = racks_under_air_limit(pools, wl.hardware.rack_power_kw, wl.hardware.rack_units_reserved, feeds, wl.hardware)
        findings.extend(rack_findings(racks, wl.hardware.rack_power_field, spread, wl.hardware.max_racks))
        findings.extend(
            rack_headroom_findings(
                racks, pools, wl.hardware.rack_power_kw, wl.hardware.rack_units_reserved, wl.hardware.rack_power_field
            )
        )
        given = any(given_in(loaded.document, ("hardware", f)) for f in ("rack_power_kw", "rack_circuits"))
        findings.extend(default_rack_power_findings(racks, wl.hardware.rack_power_kw, given))
        findings.extend(assumed_height_findings(pools))
        if (circuits := wl.hardware.rack_circuits) is not None:
            supply = rack_supply(
                circuits,
                given_in(loaded.document, ("hardware", "rack_circuits", "continuous_load_fraction")),
                given_in(loaded.document, ("hardware", "rack_circuits", "power_factor")),
            )
            findings.extend(feed_loss_findings(pools, supply, consts, wl.hardware) + voltage_findings(supply))
        if wl.hardware.max_racks is not None and len(racks) > wl.hardware.max_racks:
            why = max_racks_refusal(racks, pools, wl.hardware, feeds, supply)
            raise FleetLimitError(why, "max_racks", len(racks))
        if (over_site := site_power_refusal(pools, wl.hardware.site_power)) is not None:  # newuser115
            raise FleetLimitError(over_site, "site_power", fleet_power_w(pools))
        findings.extend(site_power_findings(pools, wl.hardware.site_power))
        findings.extend(gpu_power_limit_findings(pools, wl.hardware))
        pools = [p._replace(racks=sum(1 for r in racks if p.name in r.pools)) for p in pools]  # the racks it spans
        by_circuits = wl.hardware.rack_circuits is not None
        # the contract bills each rack's circuits, drawn or not (newuser39 item 5): what the pools carry and what the
        # finding says are one computation (review 27 item 2)
        bill = rack_bill(pools, racks, wl.hardware.rack_power_kw, consts, frozenset(wl.prices), by_circuits)
        undrawn = bill.undrawn_usd
        pools = billed_per_rack(pools, undrawn)
        findings.extend(colocation_findings(bill, wl.hardware.rack_power_kw, by_circuits, consts))
    nodes = sum(p.nodes for p in pools)
    if wl.hardware.max_nodes is not None and nodes > wl.hardware.max_nodes:
        trained = sorted(d.name for d in wl.deployments if isinstance(d, TrainingDeployment))
        apart = (
            f"; a training job ({', '.join(trained)}) shares its servers with no service, only with the jobs of its run_after "
            "sequence, in turn, so its pool is counted apart"
            if trained and len(pools) > 1
            else ""
        )
        instead = (
            "plan the training job in a workload of its own, which may take the same servers"
            if apart
            else "allow GPUs with more memory or servers with more GPUs"
        )
        raise FleetLimitError(
            f"the fleet needs {nodes} nodes but hardware.max_nodes is {wl.hardware.max_nodes}{apart}; to unblock: raise "
            f"max_nodes, or {instead}",
            "max_nodes",
            nodes,
        )
    objectives = objectives or {}
    deployments = []
    contracts: dict[str, tuple[int, ContractReason]] = {}  # racks'-contract reasons, by name: their index and figures
    per_run: set[str] = set()  # deployments billed per run (training jobs on rented servers)
    free = free_servers(wl)  # owned servers still free as each deployment is placed (in the order they were chosen)
    not_on_demand: set[str] = set()  # pools already warned of as not sold on demand: once a pool (newuser26 item 8)
    formats: dict[str, WeightFormat] = {}  # the weight format each service's replicas hold
    # the pools holding only batch jobs billed by the hour: they scale to zero between runs (newuser65 items 1-3)
    scaled_to_zero = zero_pools(pools, hourly_job_parts(wl, ((i, o) for i, o, _ in chosen)))
    for index, opt, rest in chosen:
        dep = wl.deployments[index]
        model = loaded.models[dep.name]
        dep_pools = [pool_of[(index, part.server_kind)] for part in opt.pieces]
        split: tuple[DeploymentPart, ...] = ()
        if isinstance(dep, InferenceDeployment):
            details, reasons, split = serving_details(loaded, dep, opt, dep_pools, consts)
            if split:
                note = f"deployment {dep.name}: {reasons[0]}"
                findings.append(Finding("info", "deployment-split", note, f"deployments[{index}]"))
            if routing := routing_note(dep, opt):  # the router the wait for a place assumes (review74 item 1)
                findings.append(Finding("warning", "slot-routing", routing, f"deployments[{index}].inference"))
            idle_notes = {idle_bound_note(dep, part, opt.candidate.replicas) for part in opt.pieces} - {None}
            findings += [
                Finding("warning", "ttft-bound-idle", note, f"deployments[{index}].inference.slo.ttft_p95_ms")
                for note in sorted(n for n in idle_notes if n)
            ]
            # a known shortfall of the model where the deployment runs (newuser18 item 1): once, of its first part there,
            # whose replicas are checked against the share of the rate routed to them (review20)
            gaps = (
                throughput_gap_finding(
                    index, dep.inference, dep.name,
                    (part.hardware.gpu, model.architecture, part.replica_shape.fmt.name),
                    part.replica_shape.max_point.requests_per_s, part.candidate.replicas, part_rate,
                    batch=part.replica_shape.max_point.batch, tp=part.replica_shape.par.tp,
                    attention_dp=part.replica_shape.par.attention_dp,
                )
                for part, part_rate in zip(opt.pieces, part_rates(opt, dep.inference.requests_per_second), strict=True)
                if not dep.inference.pooling  # the gaps were measured decoding; a pooling service runs none (review22)
            )  # fmt: skip
            findings += [gap] if (gap := next((g for g in gaps if g), None)) else []
            # none here, but one on another architecture (newuser50 item 3): once, of its first part
            lead = opt.pieces[0]
            elsewhere = (
                None
                if gap
                else gap_elsewhere_finding(
                    index, dep.inference, dep.name,
                    (lead.hardware.gpu, model.architecture, lead.replica_shape.fmt.name),
                    opt.candidate.replicas, batch=lead.replica_shape.max_point.batch,
                    attention_dp=lead.replica_shape.par.attention_dp,
                )
            )  # fmt: skip
            findings += [elsewhere] if elsewhere else []
            findings += _fp16_cast_findings(index, dep.name, opt, dep.inference.engine)
            # no vLLM / SGLang run on RDNA 3 checks the rate, as the estimate says (fix186 item 2)
            findings += rdna3_engine_findings(index, dep.name, dep.inference.engine, (p.hardware.gpu for p in opt.pieces))
            weights = opt.pieces[0].replica_shape.memory.per_gpu.weights  # what a decode step reads besides the slots
            findings += lora_findings(index, dep.name, details, weights)
            findings += lora_slot_findings(index, dep.name, details, dep.inference.engine)
            # the rate sets the replicas on a GPU no public run checks the model on (newuser30 item 3): once, of its first
            # (not where a gap of its architecture's runs was said of it: newuser52 item 6, MI325X told both)
            unchecked = [part for part in opt.pieces if not part.hardware.gpu.throughput_runs]
            if unchecked and not gap and not dep.inference.pooling and opt.candidate.replicas > dep.inference.min_replicas:
                gpu = unchecked[0].hardware.gpu
                findings.append(unchecked_throughput_finding(index, dep.name, gpu, unchecked[0].candidate.replicas))
            findings += _kept_off_shares(wl, index, opt, dep_pools, ruled_out.get(dep.name, ()))
            wide_notes = [wide for part in opt.pieces if (wide := replica_note(part, dep.inference.engine))]
            if wide_notes:  # fix141: what the layout whose replicas each fit one node costs
                from generator.planner.span_tie import one_node_text

                wide_notes[0] += one_node_text(opt, rest)
            findings += [
                Finding("warning", "replica-spans-hosts", f"deployment {dep.name}: {wide}", f"deployments[{index}]")
                for wide in wide_notes
            ]
            shape_inf = opt.replica_shape
            formats[dep.name] = shape_inf.fmt
            mem = serving_memory(shape_inf.memory)
            precision, kv = shape_inf.fmt.name, dep.inference.kv_cache_precision
            if kv == "bf16" and not any(computes_bf16(part.hardware.gpu.architecture) for part in opt.pieces):
                kv = "fp16"  # fix188: a T4 / V100 caches (and runs an AWQ / GPTQ model's activations) in float16, same bytes
        else:
            chained = index in sequenced
            runs = None if chained else dep.training.runs_per_month
            # a chain's: its own
            details, reasons = _training_details(opt, [] if chained else rest, consts, runs, model.architecture)
            disk = checkpoint_disk(wl.hardware.provider, opt.node, opt.needs)
            findings += _training_findings(index, dep, model, details, opt.candidate, wl.hardware.provider, disk)
            if opt.candidate.nodes > opt.candidate.owned_nodes and any(n and k != opt.server_kind for k, n in free.items()):
                reasons.append(TRAINING_NOT_SPLIT)  # servers are bought although owned ones of another kind are free
            shape_tr = opt.shape
            assert not isinstance(shape_tr, ReplicaShape)
            findings += full_finetune_headroom_findings(index, dep, shape_tr)
            if shape_tr.spread is not None:  # memory, not the throughput, set its data-parallel degree (fix145)
                dp_tr, gpu_tr = shape_tr.setup.data_parallel, shape_tr.hardware.gpu.id
                findings.append(spread_finding(index, dep, shape_tr.spread, dp_tr, gpu_tr))
            mem = shape_tr.memory.per_gpu.as_dict()
            precision, kv = shape_tr.setup.base_precision_name, None
            if precision == "bf16" and not computes_bf16(shape_tr.hardware.gpu.architecture):
                precision = "fp16"  # the same bytes, in the half precision the GPU computes (newuser22 item 8)
        job = sequenced.get(index)
        if job is None or job.first == index:  # a chain's servers are taken once, as the chain's
            take_owned(free, (part.candidate for part in (job.chain if job else opt).pieces))
        objective = objectives.get(index, wl.objective)
        details.update(_cost_details(opt, objective, wl.hardware.provider))
        if billed_per_run(wl.hardware.provider, opt.candidate):
            per_run.add(dep.name)
        details["co_located"] = job is None and any(len(p.deployments) > 1 for p in pools if p.name in dep_pools)
        # its own pools: theirs is its share of the racks' contract, its reason written once its run is known
        owned_runs = opt.candidate.owned_runs is not None
        if (
            job is None
            and not details["co_located"]
            and (contract := _add_undrawn_contract(details, undrawn, dep_pools, owned_runs))
        ):
            contracts[dep.name] = (len(reasons), contract)
        if details["co_located"] and len(dep_pools) == 1:
            details.update(_pool_share(next(p for p in pools if p.name == dep_pools[0]), opt.gpus_used, in_use))
        elif details["co_located"]:  # a split service, a part of it co-located: each part's share (newuser27 item 4)
            details.update(_split_share(opt, [next(p for p in pools if p.name == name) for name in dep_pools], objective, wl))
        if job is not None:
            turn_pool = next(p for p in pools if p.name == dep_pools[0])
            turn_reason, contract = _sequence_turn(wl, job, turn_pool, details, undrawn.get(dep_pools[0], 0.0))
            reasons.append(turn_reason)
            if contract is not None:
                contracts[dep.name] = (len(reasons), contract)
        else:
            reasons += [colocation[(index, part.server_kind)] for part in opt.pieces]
        cloud = wl.hardware.provider in CLOUD_PROVIDERS
        dep_pool_list = [p for p in pools if p.name in dep_pools]
        if isinstance(dep, InferenceDeployment) and dep.inference.average_requests_per_second is not None:
            details.update(_average_details(dep.inference, index, opt, dep_pool_list, at_average))
        if isinstance(dep, InferenceDeployment) and dep.inference.job:
            gpus_in = {name: part.candidate.gpus for name, part in zip(dep_pools, opt.pieces, strict=True)}
            ran = (sustained_rps(opt, served=True), request_seconds(dep.inference, opt), gpus_in)
            run, said = job_details(dep.inference, ran, dep_pool_list, scaled_to_zero, details)
            details.update(run)
            reasons.append(said)
        if isinstance(dep, InferenceDeployment) and (
            token_cost := _token_cost(dep.name, dep.inference, opt, details, cloud=cloud, pools=dep_pool_list)
        ):
            details.update(token_cost[0])
            reasons.append(token_cost[1])
        ranked_as = job.chain if job is not None else opt  # a chain's job is ranked, and its runners-up said, as the chain
        for part in ranked_as.pieces:
            if part.hardware.not_bought and not part.hardware.platform.custom and wl.hardware.buy:
                reasons.append(
                    f"runs on {part.candidate.owned_nodes} owned {part.hardware.platform.id} server(s): owned servers are "
                    f"always usable, but {part.hardware.not_bought}"
                )
        for part in ranked_as.pieces:
            on_owned = part.candidate.owned_nodes > 0
            reasons += psu_ruled_out(part.hardware.gpu.id, part.hardware.platform.id, ruled_out.get(dep.name, ()), on_owned)
            if isinstance(part.shape, ReplicaShape) and (slow := part.shape.narrower_missed) is not None:
                layout = (part.shape.par.tp, part.shape.par.pp)  # fix168: why more GPUs a replica (newuser95 item 4)
                reasons.append(narrower_reason(slow, part.hardware.gpu.id, part.shape.fmt.name, layout))
        shown = distinct_runners_up(ranked_as, rest, max(3, len(wl.hardware.gpus or ())))
        same = same_purchase_reason(ranked_as, rest) if isinstance(dep, InferenceDeployment) else None
        reasons += [same] if same else []
        reasons += twin_reasons(ranked_as, shown, rest)
        rate = dep.inference.requests_per_second if isinstance(dep, InferenceDeployment) else None
        tie = tie_break_reason(objective, ranked_as, rest, rate) if rate is not None else None
        # a near tie on cost with a layout on other servers: a training job's (acc104 item 4), a batch job's (fix137)
        tie_rule = None
        if waits_for_runs(dep):  # the training modules only where a run is waited for (review81 item 1)
            from generator.planner.training_candidates import near_tie_rule

            tie_rule = near_tie_rule(dep)
        if tie_rule is not None:
            from generator.planner.training_report import cost_near_tie_text

            told = "the step model" if isinstance(dep, TrainingDeployment) else "the serving model"
            tie = cost_near_tie_text(objective, ranked_as, rest, *tie_rule, model=told) or tie
        elif isinstance(dep, InferenceDeployment):  # a service's, by the nodes a replica spans (fix141)
            from generator.planner.span_tie import span_near_tie_text

            tie = span_near_tie_text(objective, ranked_as, rest) or tie
        if rate is not None and (empty := _shares_left_empty(wl, index, objective, ranked_as, rest, dep_pool_list)):
            reasons.append(empty[0])
            findings.append(empty[1])
        # a job on servers of its own paid by the month: a run is the month over its runs a month (newuser39 item 7)
        runs = dep.training.runs_per_month if isinstance(dep, TrainingDeployment) and job is None else None
        runs = _chain_runs_per_month(wl, sequenced, job) if job is not None else runs  # newuser84 item 3
        over = {id(o): text for o in shown if (text := alone_over_limit(wl, o)) is not None}
        reasons.append(_choice_reason(objective, ranked_as, shown, details["co_located"], tie, runs, over))
        if (
            objective == "cost"
            and isinstance(dep, InferenceDeployment)
            # the runners-up listed, less those over a limit of the fleet's (a price move lets none of those win)
            and (margin := derived_price_margin(wl, consts, ranked_as, [o for o in shown if id(o) not in over]))
        ):
            reasons.append(margin)  # newuser80 item 4: a choice resting on a derived host price said as such
        if objective != wl.objective:
            reasons.append(f"ranked by {objective}, not {wl.objective}: a candidate had no price (see findings)")
        if dep.platform is None and (lacked := zone_left_out_reason(wl)):
            reasons.append(lacked)  # fix169: the types the GKE pools' zone lacks, said where the choice is
        for part in ranked_as.pieces:
            priced = part.candidate.usd_per_hour is not None
            pool_name = pool_of.get((index, part.server_kind), part.hardware.platform.id)  # a chain's: its platform's
            # a spot part's type is sold as spot capacity (GKE's H200 and B200 through Spot VMs), which its pool asks for
            reserved_only = part.hardware.platform.not_on_demand is not None and not part.hardware.spot
            if reserved_only and pool_name in not_on_demand:
                continue
            if not priced or reserved_only:
                findings.append(_no_price(wl, part.hardware.platform, part.candidate, index, part.hardware.spot))
            if reserved_only:
                not_on_demand.add(pool_name)
        deployments.append(
            DeploymentPlan(
                name=dep.name,
                kind="inference" if isinstance(dep, InferenceDeployment) else "training",
                model_id=model.id,
                model_source=model.source,
                params_total=model.architecture.params_total,
                params_active=model.architecture.params_active,
                precision=precision,
                kv_cache_precision=kv,
                tp=opt.candidate.tp,
                pp=opt.candidate.pp,
                replicas=opt.candidate.replicas,
                gpus=opt.candidate.gpus,
                pool=dep_pools[0],
                memory_per_gpu=mem,
                # the pool the workload names, for a diff's advice to set one (fuzz22 item 4); the inputs the workload
                # gives the deployment, for a diff to name the one that moved a row (newuser73 item 5)
                details={
                    **details,
                    **({} if dep.pool is None else {"named_pool": dep.pool}),
                    "inputs": _inputs(dep, _given(loaded, index)),
                },
                reasons=tuple(reasons),
                runners_up=tuple(
                    o.candidate._replace(over_limit=over.get(id(o)), no_better=no_better_text(ranked_as, o)) for o in shown
                ),
                split=split,
                slot_queue=opt.shape.slot_queue if not opt.parts and isinstance(opt.shape, ReplicaShape) else None,
                # the node a reclaim takes, as the spot near tie counts it (review81 item 6)
                node_down=node_down_rps(opt, spreads(dep.inference))[1:]
                if isinstance(dep, InferenceDeployment) and dep.inference.job
                else None,
            )
        )
    findings += single_host_findings(wl, pools) + device_plugin_findings(wl, pools) + custom_power_findings(wl, consts)
    findings += driver_series_findings(wl, pools)
    findings += unrated_findings(wl) + unused_setting_findings(wl) + implausible_setting_findings(wl)
    findings += missing_address_findings(wl)
    findings += model_findings(loaded)
    findings += _unpriced_fabric_findings(wl, pools, deployments) + owned_fabric_findings(wl, pools, deployments)
    findings += slow_fabric_findings(wl, pools, deployments)
    findings += sglang_fraction_findings(loaded, consts, pools, deployments, formats)
    findings += encoder_batch_findings(wl, loaded.models) + engine_setting_findings(loaded, consts, chosen)
    findings += _consumer_gpu_findings(pools, consts, frozenset(wl.prices)) + spread_findings(wl, deployments, pools)
    findings += geforce_left_out_findings(wl, consts) + karpenter_left_out_findings(wl)  # newuser81 item 1
    findings += zone_left_out_findings(wl) + residency_left_out_findings(wl)  # fix164, fix200
    findings += packing_findings(deployments, pools)
    findings += missing_gpu_findings(wl, chosen, ruled_out)
    findings += price_region_findings(wl, [h.platform.id for h in allowed_hardware(wl)]) + pool_region_findings(wl, pools)
    findings += region_pool_findings(wl, pools)  # fix179: a type the region list leaves out, warned
    findings += rented_residency_findings(wl, pools)  # fix200: a rented server's country, unchecked under eu
    findings += region_unchecked_findings(wl, pools)  # newuser109: a region or type no list covers, said
    pools = job_pools(wl.hardware.provider, pools, deployments, scaled_to_zero)
    findings += job_findings(wl, pools, deployments) + idle_service_findings(wl, deployments)
    findings += engine_support_findings(wl, pools, deployments)
    rented = _rented_jobs(pools, deployments, per_run)
    deployments = _with_runs(wl, deployments, per_run)
    pools, deployments = charge_runs_energy(wl, pools, deployments, consts, undrawn)  # newuser64 item 1
    own_energy = {p.name for p in pools if owned_pool_runs(wl, p, deployments, consts) is not None}
    deployments = sequence_month_per_run(deployments, per_run, own_energy)  # newuser84 item 3
    deployments = with_contract_reasons(deployments, contracts)  # fix150: the run usd_per_job holds, in the reason
    findings += _overlapping_runs(deployments) + unserved_precision_findings(deployments, loaded.models)
    findings += idle_training_findings(
        wl, loaded.models, consts, {i: opt for i, opt, _ in chosen}, pools, deployments, frozenset(sequenced), sizes
    )
    findings += beside_findings(wl, chosen, pools, consts)  # fix182
    findings += online_peak_findings(deployments, loaded.models, pools) + _given_rate_run_findings(wl, pools, deployments, rented)
    findings += spot_findings(wl, pools, deployments) + cold_start_findings(wl, pools, deployments, consts)
    findings += vcpu_quota_findings(wl.hardware.provider, asked_region(wl), pools)  # newuser87 item 3
    findings += gaudi_fp8_findings(deployments, pools) + training_energy_findings(wl, pools, deployments, consts)
    findings += [found] if (found := capex_excludes_finding(pools)) else []
    findings += [found] if (found := price_dated_finding(wl, pools)) else []
    findings += [found] if (found := price_third_party_finding(pools)) else []
    # a pool rented per job has no monthly running cost (its rate and cost per job are on the deployment)
    pools = [p._replace(opex_usd_per_month=None, per_job=True) if p.name in rented else p for p in pools]
    fleet = totals(pools, len(racks), rented, _monthly_runs(pools, deployments, rented))
    findings += average_findings(wl, pools, fleet, deployments)
    cap = wl.hardware.max_budget_usd_per_month
    spend = budget_spend_usd(fleet, pools, rented, _monthly_runs(pools, deployments, rented, capped=True))
    jobs = " (serving for a month plus the runs of each rented training job)" if rented and spend is not None else ""
    # newuser81 item 8: a spot pool held at its on-demand rate counts above what spot bills, and the refusal said not so
    on_demand_spot = priced_on_demand(findings)
    jobs += on_demand_text(on_demand_spot).replace(": info spot-priced-on-demand", "")
    spot_keys = sorted({f"{p.node.platform_id}@spot" for p in pools if p.name in on_demand_spot})
    unblock = "raise the budget, lower the request rates or allow cheaper hardware"
    if spot_keys:
        unblock = unblock.replace(" or ", ", ") + f" or give the spot rate under prices ({', '.join(spot_keys)})"
    if cap is not None and (spend is None or spend > cap):
        spent = f"${spend:,.0f} in a month" if spend is not None else "an unpriced fleet"
        raise FleetLimitError(
            f"the deployments together cost {spent}{jobs}{budget_basis(wl, pools)}, above max_budget_usd_per_month "
            f"${cap:,.0f}; to unblock: {unblock}",
            "max_budget_usd_per_month",
            spend if spend is not None else math.inf,
        )
    if cap is not None and spend is not None:
        # a budget met is said, with the rates it was held at (newuser79 item 2: nothing said it passed, nor that it
        # was held at us-central1 list prices for a europe-west4 cluster)
        findings.append(
            Finding(
                "info",
                "budget-checked",
                f"the deployments together cost ${spend:,.0f} a month{jobs}{budget_basis(wl, pools)}, within "
                f"max_budget_usd_per_month ${cap:,.0f} (${cap - spend:,.0f} to spare, {(cap - spend) / cap:.1%} of it)",
                "hardware.max_budget_usd_per_month",
            )
        )
    pools = with_host_gpus(wl, pools, deployments, spread_services(wl))  # fix167, fix171
    plan = Plan(
        workload=wl.name,
        objective=wl.objective,
        provider=wl.hardware.provider,
        region=asked_region(wl),
        deployments=tuple(deployments),
        pools=tuple(pools),
        totals=fleet | ({"inventory": inventory} if inventory else {}),
        findings=sorted_findings(findings + _idle_findings(pools, deployments, wl.hardware.provider)),
        constants=dict(sorted(wl.constants.items())),
        racks=with_circuit_loads(
            rack_specs(racks, pools, wl.hardware.rack_power_kw, wl.hardware.rack_units_reserved), racks, supply, feeds
        ),
        rack_supply=supply,
        data_residency=wl.kubernetes.data_residency,
    )
    capex_cap, up_front = capex_cap_usd(wl), fleet_up_front_usd(fleet)
    if capex_cap is not None and (up_front is None or up_front > capex_cap):
        paid = f"${up_front:,.0f} up front" if up_front is not None else "an unpriced fleet"
        raise FleetLimitError(
            f"the servers the deployments buy cost {paid}, above max_capex_usd ${capex_cap:,.0f}; to unblock: raise "
            "max_capex_usd, lower the request rates, list servers you own under hardware.inventory, or allow hardware "
            "that costs less to buy",
            "max_capex_usd",
            up_front if up_front is not None else math.inf,
            plan,
        )
    return plan


def _fp16_cast_findings(index: int, name: str, opt: Option, engine: str) -> list[Finding]:
    """Where a vLLM service's bf16 weights run on a GPU with no bf16 (a T4, a V100): vLLM serves them in float16.

    vLLM's ``dtype: auto`` (``_resolve_auto_dtype``) takes the planned bf16 where the platform supports it, else the
    first dtype it does, float16, logging the fall-back: two bytes a value, as sized. A model type vLLM refuses in
    float16 is ruled out of such GPUs (:func:`~generator.sizing.loadability.float16_problem`).
    """
    if engine != "vllm":
        return []
    gpus = sorted(
        {
            part.hardware.gpu.id
            for part in opt.pieces
            if not computes_bf16(part.hardware.gpu.architecture) and part.replica_shape.fmt.name == "bf16"
        }
    )
    said = (
        "vLLM (dtype auto) serves the planned bf16 in float16 there, two bytes a value as sized, at the GPU's fp16 rate; "
        "a checkpoint whose activations overflow float16 (above 65,504) needs a GPU with bf16"
    )
    return [
        Finding("info", "bf16-cast-to-fp16", f"deployment {name}: {gpu} has no bf16 tensor rate: {said}", f"deployments[{index}]")
        for gpu in gpus
    ]


def _pool(
    loaded: LoadedWorkload,
    unit: list[tuple[int, Option]],
    name: str,
    nodes: int,
    consts: Constants,
    findings: list[Finding],
    owned_left: dict[ServerKey, int],
) -> Pool:
    """The pool of ``unit``'s deployments on ``nodes`` servers.

    ``owned_left``: the owned servers of each kind the pools formed before it left, which it takes its own from.
    """
    wl = loaded.workload
    first = unit[0][1]
    names = [wl.deployments[i].name for i, _ in unit]
    # a service quantized online keeps its checkpoint's files, not the served bytes (newuser26 item 2)
    files = [
        served_file_bytes(loaded.models[wl.deployments[i].name], o.shape.fmt.name, o.needs.model_file_bytes)
        if isinstance(o.shape, ReplicaShape)
        else o.needs.model_file_bytes
        for i, o in unit
    ]
    # jobs of a chain run in turn: the widest; services side by side: each one's on the GPUs it takes (fix167)
    members = [o for _, o in unit]
    services = sum(isinstance(o.shape, ReplicaShape) for o in members)
    chain = len(unit) > 1 and not services
    if len(unit) == 1 or chain:
        host_ram = max(o.needs.host_ram_bytes for o in members)
    elif services == len(unit):
        host_ram = colocated_host_ram_bytes(members, first.candidate.gpus_per_node)
    else:  # a job beside a service is not planned (beside_service.py); each one's own, were it
        host_ram = sum(o.needs.host_ram_bytes for o in members)
    needs = NodeNeeds(
        model_file_bytes=sum(files),
        host_ram_bytes=host_ram,
        dataset_bytes=sum(o.needs.dataset_bytes for _, o in unit),
        checkpoint_bytes=sum(o.needs.checkpoint_bytes for _, o in unit),
        needs_fabric=any(o.needs.needs_fabric for _, o in unit),
        host_dram_streamed=any(o.needs.host_dram_streamed for _, o in unit),
    )
    hw = first.hardware
    before = len(findings)
    # training jobs share a pool only as a chain (run_after): in turn, so the pool holds the widest of them
    add = max if chain else sum
    # services sharing owned servers each count those their layout runs on: never more than the workload owns of the
    # kind and no other pool counts (newuser66 item 1: 2 owned DGX counted as 3, capex $540,000 for the 3 bought of 5,
    # not $810,000; review67 item 2: 3 owned counted 4 over two pools)
    owned = min(nodes, add(o.candidate.owned_nodes for _, o in unit), owned_left.get(first.server_kind, 0))
    if owned:
        owned_left[first.server_kind] -= owned
    node = assembled_node(hw.platform, hw.gpu, first.candidate.gpus_per_node, needs, consts, findings, owned == nodes)
    if owned and (short := owned_ram_finding(wl, hw.platform, hw.gpu, node, needs.host_ram_bytes, consts, name)):
        findings.append(short)
    # a node's findings point at the pool's first deployment (where a reviewer can act on them)
    findings[before:] = [
        custom_drives_said(wl, hw.platform.id, f) if f.code == "nvme-short" and hw.platform.custom else f
        for f in (f if f.path else f._replace(path=f"deployments[{unit[0][0]}]") for f in findings[before:])
    ]
    cpu = node_cpu(hw.platform, hw.gpu, node.gpus, consts)
    cpu_text = f"{hw.platform.cpu_sockets} x {cpu.name}" if cpu else node.cpu
    built = BuiltHost(cpu_text, node.cpu_cores, node.ram_gib)  # what a comparable-system estimate is compared with
    cost = fleet_cost(wl, hw.platform, hw.gpu, node.gpus, node.power_w, consts, nodes, owned, built, hw.spot)
    labels = pool_labels(name, hw.gpu, hw.platform.id, hw.platform.provider)
    per_gpu = first.candidate.shares_per_gpu
    if per_gpu:  # replicas in shares of GPUs: the GPUs holding one or more (packed, or spread over the nodes)
        used = shared_gpus_held(sum(o.candidate.replicas for _, o in unit), per_gpu, (node.gpus, nodes))
    else:
        used = math.ceil(add(o.gpus_used for _, o in unit))
    return Pool(
        name=name,
        node=node,
        nodes=nodes,
        deployments=tuple(names),
        racks=0,
        power_w=node.power_w * nodes,
        usd_per_hour=cost.usd_per_hour,
        price_basis=cost.basis or cost.why,
        labels=labels,
        taints=(gpu_taint(hw.gpu),) + ((AKS_SPOT_TAINT,) if hw.spot and node.provider == "azure" else ()),
        capex_usd=round(cost.capex_usd, 2) if cost.capex_usd is not None else None,
        opex_usd_per_month=round(cost.opex_usd_per_month, 2) if cost.opex_usd_per_month is not None else None,
        price_estimated=cost.estimated,
        idle_gpus=node.gpus * nodes - used,
        owned_nodes=owned,
        files_bytes=needs.files_bytes,
        rented=cost.rented,
        shares_per_gpu=per_gpu,
        capacity_type="spot" if hw.spot else None,
    )
