"""Turn the chosen option of every deployment into pools, per-deployment plans, totals and findings."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from generator import catalog
from generator.calculator.model_source import ResolvedModel
from generator.catalog.host_cpu import platform_host_time_scale
from generator.catalog.records import GpuSpec, PlatformSpec, acquired
from generator.errors import FleetLimitError, InfeasibleError, InputError
from generator.planner.batch_job import (
    hourly_job_parts,
    idle_service_findings,
    job_details,
    job_findings,
    job_pools,
    node_down_rps,
    pool_month_usd,
    request_seconds,
    runs_a_month,
    waits_for_runs,
    zero_pools,
)
from generator.planner.blocked import (
    NOT_SHARED_HERE,
    OVER_LIMIT,
    PINNED_OUT,
    RACK_HEIGHT,
    RACK_POWER,
    SHARE_TOO_SMALL,
    Blocked,
)
from generator.planner.candidates import (
    SizedOptions,
    capex_cap_usd,
    limits_text,
    ranking_candidate,
    replica_host_count,
    replicas_held,
    shared_gpus_held,
)
from generator.planner.capex_scope import capex_excludes_finding
from generator.planner.chain_runs import common_runs_per_month, sequence_month_per_run
from generator.planner.chain_share import chain_share, with_undrawn
from generator.planner.cold_start import cold_start_findings, model_download, model_load_seconds
from generator.planner.colocated_ram import colocated_host_ram_bytes
from generator.planner.colocation import billed_per_rack, colocation_findings, rack_bill
from generator.planner.custom import custom_drives_said, custom_power_findings
from generator.planner.derived_margin import derived_price_margin
from generator.planner.driver_series import (
    DRIVER_SERIES,
    ROCM_INSTALL_GUIDE,
    ROCM_UBUNTU_RELEASES,
    driver_series_findings,
)
from generator.planner.engine_limits import engine_setting_findings
from generator.planner.engine_support import engine_support_findings
from generator.planner.host_gpus import with_host_gpus
from generator.planner.host_ram_reason import host_ram_reason
from generator.planner.idle_training import idle_gpus, idle_training_findings
from generator.planner.inference import (
    OperatingPoint,
    ReplicaShape,
    cached_prompt_text,
    engine_constants,
    expert_network,
    looser_slot_queue,
    max_running,
    point_for_rate,
    request_seconds_at,
    step_token_budget,
    ttft_basis_text,
)
from generator.planner.inventory import ServerKey, free_cost_clause, free_servers, owned_groups, owned_idle_usd, take_owned
from generator.planner.lora_plan import lora_details, lora_findings, lora_reason
from generator.planner.lora_replica import with_lora_adapters
from generator.planner.memory_edge import spread_finding
from generator.planner.multi_host import (
    data_parallel_host_args,
    every_hop_leaves_host,
    expert_exchange_text,
    job_hosts_text,
    multi_host_note,
    replica_hosts,
    stage_hop_text,
    unsloth_one_host_text,
)
from generator.planner.naming import MAX_NODES_PER_POOL, max_pool_name, unique_pool_names
from generator.planner.narrower import narrower_reason
from generator.planner.node_storage import files_on_instance_store
from generator.planner.nodes import NO_GPU_FABRIC, NodeNeeds, assemble_node, node_cpu, node_link
from generator.planner.online_quantization import (
    gaudi_fp8_findings,
    online_peak_findings,
    quantized_online_from,
    served_file_bytes,
    unserved_precision_findings,
)
from generator.planner.option import Option, pool_labels, replicas_rps, sustained_rps
from generator.planner.options import (
    allowed_hardware,
    geforce_left_out,
    karpenter_left_out_findings,
    ties_before_headroom,
    unsold_everywhere_why,
    zone_left_out_findings,
    zone_left_out_reason,
)
from generator.planner.owned_build import (
    build_assumed,
    owned_build_findings,
    owned_fabric_findings,
    owned_ram_finding,
    slow_fabric_findings,
    stated_kind,
)
from generator.planner.peak import (
    CLOUD_PROVIDERS,
    PoolAtAverage,
    average_findings,
    average_replicas,
    floor_share_usd_per_month,
    floor_usd_per_hour,
    held_text,
    other_tokens_text,
    per_million_tokens,
    pool_at_average,
    scaled_pools,
    token_cost_at_average,
    token_cost_figures,
    token_kinds,
)
from generator.planner.plan import (
    Candidate,
    DeploymentPart,
    DeploymentPlan,
    Finding,
    Level,
    NodeSpec,
    Plan,
    Pool,
    RackSupply,
    layout_name,
    runs_only_totals,
    sorted_findings,
)
from generator.planner.pool_names import (
    check_named_pools,
    derived_findings,
    kept_apart,
    kept_apart_findings,
    naming_labels,
    unit_pool,
)
from generator.planner.pooling import (
    encoder_batch_findings,
    encoder_pass_text,
    pooling_details,
    pooling_engine_text,
    pooling_kv_text,
    pooling_load_text,
    pooling_pass_text,
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
    racked_nodes,
    too_tall,
)
from generator.planner.rented_fabric import rented_fabric_finding
from generator.planner.request_lengths import request_length_findings
from generator.planner.ruled_out import left_free_message, owned_build, psu_ruled_out, why_left_free
from generator.planner.run_reasons import ContractReason, with_contract_reasons
from generator.planner.setting_findings import (
    implausible_setting_findings,
    model_findings,
    unused_setting_findings,
)
from generator.planner.sglang_fraction import sglang_fraction_findings
from generator.planner.slo import effective_slo, held_to, latency_bound, rate_replicas, replicas_needed, replicas_text
from generator.planner.split import TRAINING_NOT_SPLIT, part_rates, split_rest
from generator.planner.spot import AKS_SPOT_TAINT, AKS_SPOT_TAINT_TEXT, on_demand_text, priced_on_demand, spot_findings
from generator.planner.spread import (
    POD_GRACE_DEFAULT_S,
    option_tolerant,
    packing_findings,
    spread_findings,
    spread_floor,
    spread_services,
    spreads,
)
from generator.planner.tco import (
    BuiltHost,
    acquired_as,
    billed_per_run,
    cost_text,
    fleet_cost,
    gpus_acquired,
    run_usd,
)
from generator.planner.throughput_gaps import gap_elsewhere_finding, throughput_gap_finding, unchecked_throughput_finding
from generator.planner.training_energy import charge_runs_energy, owned_pool_runs, training_energy_findings
from generator.planner.vcpu_quota import vcpu_quota_findings
from generator.planner.wall_circuit import bought_on_outlet, wall_circuit_advice
from generator.sizing.architecture import Architecture
from generator.sizing.constants import Constants
from generator.sizing.engine_runtime import ENGINE_NAMES, MAX_SEQUENCES_FLAG
from generator.sizing.gpu_share import shared_gpu
from generator.sizing.loadability import FP16_REFUSED_MODEL_TYPES, computes_bf16
from generator.sizing.memory import InferenceMemory
from generator.sizing.performance import (
    accelerator_for,
    dequantized_rates,
    host_staged_text,
    peer_link_share,
    saturated_throughput,
    step_budget_batch,
)
from generator.sizing.precision import WeightFormat
from generator.sizing.psu_feeds import Feeds
from generator.sizing.serving_queue import (
    SlotParts,
    least_spread_mix,
    pooled_slack,
    pooled_slot_wait,
    resolved,
    routed,
    slot_replicas,
    tail_miss,
)
from generator.sizing.sglang_kv import sglang_mem_fraction
from generator.sizing.training_hardware import flash_attention_note, fp16_note, launches_flash_attention, stack_note
from generator.units import (
    GIB,
    HOURS_PER_MONTH,
    HOURS_PER_YEAR,
    figure_text,
    hours_text,
    long_seconds_text,
    seconds_text,
    usd_text,
)
from generator.words import counted, listed
from generator.workload import LoadedWorkload
from generator.workload.capacity_type import given_rate, spot_key
from generator.workload.models import InferenceDeployment, InferenceSpec, TrainingDeployment, Workload, given_fields
from generator.workload.sharing import planned_sharing, sharing_field, sharing_text
from generator.workload.value_checks import given_in

if TYPE_CHECKING:
    from generator.planner.training import TrainingShape
    from generator.planner.training_chain import Sequenced
    from generator.sizing.training import TrainingSetup

#: A vendor's name for its Kubernetes device plugin, as the single-host advice names it.
DEVICE_PLUGIN = {
    "nvidia": "the NVIDIA device plugin",
    "amd": "the AMD GPU device plugin",
    "intel": "the Intel Gaudi device plugin",
}

#: The co-location group of inference replicas in shares of GPUs, followed by how they share them.
SHARED_GROUP = "inference-shared"
#: What a pool group's kind ends in for spot capacity (``capacity_type: spot``): a node group of its own.
SPOT_GROUP = " spot"


def gpu_taint(gpu: GpuSpec) -> tuple[str, str, str]:
    """The taint that keeps pods without a GPU request off a GPU node: its device plugin's resource."""
    return (gpu.device_resource, "present", "NoSchedule")


def own_cluster(wl: Workload, pools: Sequence[Pool]) -> bool:
    """A fleet of one bare-metal host that joins no cluster: its own cluster, for which no Kubernetes output is rendered.

    One host whose workload names the cluster it joins, or joins it by Cluster API, is a node of that cluster
    (:attr:`Workload.joins_cluster`), whether it is rendered alone or with other workloads.
    """
    return wl.hardware.provider == "baremetal" and sum(p.hosts for p in pools) == 1 and not wl.joins_cluster


def single_host_findings(wl: Workload, pools: list[Pool] | tuple[Pool, ...]) -> list[Finding]:
    """Why a single bare-metal host gets no Kubernetes output although the workload asks for it."""
    if "kubernetes" not in wl.outputs or not own_cluster(wl, pools):
        return []
    plugins = sorted({DEVICE_PLUGIN[catalog.gpus()[p.node.gpu_id].vendor] for p in pools})
    message = (
        "One host is its own cluster: no kubeadm join file and no GPU Operator are rendered for it "
        f"(Ansible installs the driver; a single-node Kubernetes such as k3s needs only {' and '.join(plugins)})"
    )
    return [Finding("info", "kubernetes-single-host", message, "outputs")]


def unrated_findings(wl: Workload) -> list[Finding]:
    """Allowed GPUs the search skipped because no tensor rate of theirs is published (their speed cannot be estimated)."""
    out = []
    for j, gpu_id in enumerate(wl.hardware.gpus or ()):
        gpu = catalog.gpus().get(gpu_id.lower())
        if gpu is not None and (why := gpu.unrated("bf16")) is not None:
            out.append(Finding("warning", "gpu-not-rated", f"skipped: {why}", f"hardware.gpus[{j}]"))
    return out


#: AMD's GPU Operator: its Kernel Module Management operator builds and loads the amdgpu driver on each node, and it runs
#: the device plugin and the node labeller. A cloud's GPU node runs the provider's node image, which no ROCm install guide
#: applies to; the AKSNodeClass's ``gpu.mode: None`` is, in its CRD's words, for "managing GPU drivers via a GPU Operator
#: or other external mechanism" (shared/crds/karpenter-azure/karpenter.azure.com_aksnodeclasses.yaml; newuser77 item 1).
AMD_GPU_OPERATOR = "https://github.com/ROCm/gpu-operator/blob/21575c33014500c81d56c7b4379e60d006cd473d/docs/overview.md"

#: The AMD device plugin as shipped (its DaemonSet, and its Helm chart's default ``tolerations`` value) tolerates only
#: ``CriticalAddonsOnly``: a pool tainted for its GPUs must add a toleration or the plugin never runs there.
AMD_DEVICE_PLUGIN_TOLERATIONS_SOURCES = (
    "https://github.com/ROCm/k8s-device-plugin/blob/037495778be99438cf9e4e99353cb85172a91ee9/k8s-ds-amdgpu-dp.yaml",
    "https://github.com/ROCm/k8s-device-plugin/blob/0747facd8fc170e8f73f199fe55c28c817d3ea92/helm/amd-gpu/values.yaml",
)


def device_plugin_findings(wl: Workload, pools: list[Pool] | tuple[Pool, ...]) -> list[Finding]:
    """Pools whose GPUs the rendered GPU stack (NVIDIA's GPU Operator and device plugin) does not serve.

    An info for one bare-metal host: no Kubernetes is rendered for it (``kubernetes-single-host``), so no pod waits.
    """
    if "kubernetes" not in wl.outputs:
        return []
    level: Level = "info" if own_cluster(wl, pools) else "warning"
    out = []
    for pool in pools:
        gpu = catalog.gpus()[pool.node.gpu_id]
        if gpu.vendor != "nvidia":
            other = "install it in the cluster, or the pool's pods stay pending"
            advice = _amd_stack_advice(wl, gpu, spot=pool.spot) if gpu.vendor == "amd" else other
            out.append(
                Finding(
                    level,
                    "device-plugin-not-rendered",
                    f"pool {pool.name}: its GPUs are advertised as {gpu.device_resource} by {DEVICE_PLUGIN[gpu.vendor]}, "
                    f"which specgen does not render (it renders NVIDIA's GPU stack only): {advice}",
                    "outputs",
                )
            )
    return out


def _amd_stack_advice(wl: Workload, gpu: GpuSpec, *, spot: bool = False) -> str:
    """What an AMD pool needs besides the rendered output: the device plugin tolerating the pool's taint(s), and ROCm."""
    key, value, effect = gpu_taint(gpu)
    provider = wl.hardware.provider
    series = wl.provisioning.distro_series
    if provider == "baremetal" and "ansible" in wl.outputs and series in ROCM_UBUNTU_RELEASES:
        driver = "Ansible installs the amdgpu driver and ROCm (group_vars specgen_amdgpu_driver)"
    elif provider == "baremetal" and "ansible" in wl.outputs:  # review 17 item L4; newuser57 item 6: its own warning
        driver = (
            f"the hosts' Ubuntu {series} is not a release ROCm's guide covers ({', '.join(ROCM_UBUNTU_RELEASES)}), so "
            f"nothing rendered installs the amdgpu driver and ROCm (warning {DRIVER_SERIES}): install them yourself "
            f"({ROCM_INSTALL_GUIDE})"
        )
    elif provider == "baremetal":
        driver = (
            "the nodes also need the amdgpu driver and ROCm, which nothing rendered installs: install them as AMD's "
            f"guide says ({ROCM_INSTALL_GUIDE})"
        )
    else:  # a cloud's node image: no host install guide applies to it (newuser77 item 1)
        pool = "the AKS node pool's gpu_driver and " if "terraform" in wl.outputs else ""
        where = f" ({pool}the AKSNodeClass's gpu.mode {'are' if pool else 'is'} None)" if provider == "azure" else ""
        driver = (
            f"the nodes also need the amdgpu driver, which nothing rendered installs{where}: install AMD's GPU Operator, "
            "whose Kernel Module Management operator builds and loads the amdgpu driver on each node and which runs "
            f"the device plugin and the node labeller ({AMD_GPU_OPERATOR})"
        )
    taint = f"a toleration for the pool's taint {key}={value}:{effect} ({{key: {key}, operator: Exists, effect: {effect}}}"
    if spot and wl.hardware.provider == "azure":  # AKS taints Spot nodes too (review30 item 1)
        taint = (
            f"tolerations for the pool's taint {key}={value}:{effect} and AKS's Spot taint {AKS_SPOT_TAINT_TEXT} "
            f"({{key: {key}, operator: Exists, effect: {effect}}} and {{key: {AKS_SPOT_TAINT[0]}, "
            f"operator: Equal, value: {AKS_SPOT_TAINT[1]}, effect: {AKS_SPOT_TAINT[2]}}}"
        )
    return (
        f"install it with {taint}; its stock DaemonSet and its Helm chart's tolerations "
        f"value tolerate only CriticalAddonsOnly: {AMD_DEVICE_PLUGIN_TOLERATIONS_SOURCES[0]}, "
        f"{AMD_DEVICE_PLUGIN_TOLERATIONS_SOURCES[1]}), or it never runs on these nodes and the pool's pods stay "
        f"pending; {driver}"
    )


def _gib(n: float) -> str:
    return f"{n / GIB:.1f} GiB"


#: Details of a split deployment that hold for the whole of it (the per-replica sizing is each part's).
_WHOLE_DEPLOYMENT_DETAILS = (
    "requests_per_s",
    "context_tokens",
    "service_class",
    "slo_ttft_p95_ms",
    "slo_tpot_ms",
    "serving_engine",
    "task",
    "slo_latency_p95_ms",
    "lora",
)


def replica_note(opt: Option, engine: str) -> str | None:
    """:func:`multi_host_note` for an inference option's (part's) replicas, served by ``engine``."""
    candidate = opt.candidate
    platform, par = opt.hardware.platform, opt.shape.par
    per_host = candidate.gpus_per_node // platform.hosts
    host_args = data_parallel_host_args(engine, par.tp, par.ep, par.pp, per_host) if platform.hosts == 1 else ()
    return multi_host_note(platform, candidate.gpus_per_node, par.gpus, host_args, engine)


def _serving_details(
    loaded: LoadedWorkload, dep: InferenceDeployment, opt: Option, pools: list[str], consts: Constants
) -> tuple[dict[str, Any], list[str], tuple[DeploymentPart, ...]]:
    """Details, reasons and (split over two server kinds) the parts of an inference deployment.

    A split one's details hold only what is true of the whole deployment (each part carries its own
    sizing); its reasons say how the replicas and the rate are divided, then each part's sizing.
    """
    if not opt.parts:
        details, reasons = _inference_details(loaded, dep, opt, consts)
        return details | _sustained_detail(opt), reasons, ()
    spec, slo_defaults = effective_slo(dep.inference)
    total = spec.requests_per_second
    rates = part_rates(opt, total)
    sized = [_inference_details(loaded, dep, part, consts, rate) for part, rate in zip(opt.parts, rates, strict=True)]
    parts = tuple(
        DeploymentPart(
            pool=pool,
            platform_id=part.hardware.platform.id,
            gpu_id=part.hardware.gpu.id,
            tp=part.candidate.tp,
            pp=part.candidate.pp,
            replicas=part.candidate.replicas,
            gpus=part.candidate.gpus,
            servers=part.candidate.nodes,
            owned_servers=part.candidate.owned_nodes,
            requests_per_s=round(rate, 3),
            requests_per_s_per_replica=details["requests_per_s_per_replica"],
            requests_per_s_per_replica_max=details["requests_per_s_per_replica_max"],
            batch_per_replica=details["batch_per_replica"],
            max_num_seqs=details["max_num_seqs"],
            max_num_batched_tokens=details.get("max_num_batched_tokens"),
            ttft_p95_s=details.get("ttft_p95_s", details.get("latency_p95_s", 0.0)),  # pooling: its request's latency
            tpot_s=details.get("tpot_s", 0.0),
            memory_per_gpu=serving_memory(part.replica_shape.memory),
            weights_bytes=details["weights_bytes"],
            kv_cache_tokens_per_replica=details["kv_cache_tokens_per_replica"],
            mem_fraction_static=details.get("mem_fraction_static"),
            expert_parallel=details.get("expert_parallel"),
        )
        for part, rate, pool, (details, _) in zip(opt.parts, rates, pools, sized, strict=True)
    )
    provider = opt.hardware.platform.provider
    where = [
        f"{p.replicas} replica(s) ({counted(p.gpus, 'GPU')}, TP{p.tp}"
        + (f" x PP{p.pp}" if p.pp > 1 else "")
        + ") on "
        + (f"{p.owned_servers} owned" if p.owned_servers else "")
        + (" and " if p.owned_servers and p.servers > p.owned_servers else "")
        + (f"{p.servers - p.owned_servers} {acquired_as(provider, o.candidate)}" if p.servers > p.owned_servers else "")
        + f" {p.platform_id} ({p.gpu_id}) in pool {p.pool}"
        for p, o in zip(parts, opt.parts, strict=True)
    ]
    slowest = min(p.requests_per_s_per_replica_max for p in parts)
    replicas = sum(p.replicas for p in parts)
    owned, rest = opt.parts
    pool = tuple((p.candidate.replicas, p.replica_shape.slot_queue) for p in opt.parts)
    beside = split_rest(owned)
    # the rate's rule alone (N+k included), and what the wait for a place in the batch adds to it (fix85)
    by_rate = owned.candidate.replicas + beside._replace(owned_queue=None).replicas(spec, rest.replica_shape)
    rate_only, needed = beside.counts(spec, rest.replica_shape)
    more = (
        f", and {needed - rate_only:,} more for the wait for a place in the batch (below): {replicas} in all"
        if needed > rate_only
        else ""
    )
    headline = (
        f"split over two server kinds: {where[0]}, {where[1]}; {_split_routing_text(spec)}, so the service needs "
        f"{_replicas_rule(spec, slowest)} = {by_rate} replicas at the slower part's {slowest:.3f} req/s per replica{more}, "
        f"{parts[0].replicas} of them on the free owned {parts[0].platform_id} servers; each replica serves "
        f"{total / replicas:.3f} req/s ({parts[0].requests_per_s:.2f} and {parts[1].requests_per_s:.2f} req/s per part), "
        "within the SLOs on both parts"
    )
    reasons = [headline]
    whole = {k: sized[0][0][k] for k in _WHOLE_DEPLOYMENT_DETAILS if k in sized[0][0]}
    queues = tuple((n, q) for n, q in pool if q is not None)
    if len(queues) == len(pool):  # the wait for a place over both parts' places, as one layout's (fix85, m74b item 7)
        bounds = [p.replica_shape.max_point for p in opt.parts]
        ttft_most = max(b.ttft_s if b.idle_bound is None else b.idle_bound.ttft_s for b in bounds)
        idle = any(b.idle_bound is not None for b in bounds)
        names = tuple(p.platform_id for p in parts)
        reasons.append(_slot_text(spec, queues, needed, rate_only, ttft_most, names, idle))
        whole.update(_slot_wait_details(spec, queues))
    reasons += [f"{p.platform_id} part: {r}" for p, (_, rs) in zip(parts, sized, strict=True) for r in rs]
    if slo_defaults:
        reasons.append(slo_default_reason(slo_defaults))
    return whole | _sustained_detail(opt), reasons, parts


def _sustained_detail(opt: Option) -> dict[str, float]:
    """``requests_per_s_sustained``: what a service's replicas sustain together within the SLOs, the wait included.

    The capacity the plan's reasons name ('18.71 req/s (4 x 4.92, less the wait for a place in the batch)'), which
    ``diff`` takes a rate's share of: one definition in both (newuser79 item 9: the plan said 64% of it used at
    12 req/s and ``diff`` 61% of capacity, replicas x the most a replica sustains).
    """
    return {"requests_per_s_sustained": round(sustained_rps(opt, served=True), 3)}


def _slot_wait_details(spec: InferenceSpec, pool: SlotParts) -> dict[str, Any]:
    """``slot_wait_share`` and ``slot_wait_p95_s`` (None where the queue grows without bound) over ``pool``'s places.

    The wait the slot line states (:func:`_slot_text`), for a service of one layout and a split's parts alike.
    """
    wait = pooled_slot_wait(spec.requests_per_second, pool)
    placed = resolved(spec.requests_per_second, pool)  # the places at the planned count, as the slot line says them
    caps = [q.per_replica for _, q in placed]
    return {
        **wait.details(),
        # the router the replicas are sized behind (newuser73 item 14): its routing and the requests each replica may
        # have in flight, which a HAProxy maxconn or a gateway's limit must be set to (under even routing no router
        # holds them: the places each replica's own queue is sized at). Always a list, one a part in the layout's
        # order, one item for a service of one layout (review76 item 14: an int or a list, by the split)
        "router": {"routing": spec.routing, "max_in_flight_per_replica": caps, "places": wait.servers},
    }


def _split_routing_text(spec: InferenceSpec) -> str:
    """How a split's headline says its requests are shared (fix85), as ``inference.routing`` has it (review74 1, review75)."""
    if spec.routing == "even":
        return (
            "requests are routed evenly across the replicas (each replica's mean share, as a Kubernetes Service or "
            "round-robin balancer sends it, each replica its own queue for a place in the batch, below: "
            "inference.routing even)"
        )
    return (
        "the replicas are counted at an even share of the requests each, the slower part's rate bounding it ("
        "a router that holds each request until any replica has a place free, inference.routing free_place, sends "
        "each part about the share of the places it frees, which the wait for a place in the batch, below, counts)"
    )


def _load_text(point: OperatingPoint) -> str:
    """A replica's most load as the reasons say it: its batch, or its share of time in prefill below one in flight."""
    if point.idle_bound is None:
        return f"batch {point.batch}" + (f"; {point.binds}" if point.binds else "")
    return f"below one sequence in flight: busy in prefill {_percent(point.prefill_busy)} of the time"


def _margin_text(shape: ReplicaShape) -> str:
    """How the plan counts a replica whose setup public runs measured slower than the model (newuser30 item 3)."""
    if shape.margin == 1.0:
        return ""
    return (
        f"planned at {round(shape.planned_requests_per_s, 3):.2f} req/s, that over {shape.margin:g}: every public run "
        "of this setup measured at least that much below the model (throughput-gap); "
    )


def _margin_load_text(shape: ReplicaShape) -> str:
    """What the planned load's latencies are where the plan counts a replica below the model (newuser50 item 7)."""
    if shape.margin == 1.0:
        return ""
    return (
        f" (the model's at that load; replicas {shape.margin:g}x slower than it, as the runs measured, run larger batches "
        "at a longer TPOT)"
    )


def _percent(share: float) -> str:
    """A share as the reasons say it: one decimal under 10%; whole, but never 100% for a share under 1 (review74)."""
    if share < 0.1:
        return f"{share:.1%}"
    if share < 1 and round(share * 100) >= 100:  # 99.71% busy is a stable queue, not a saturated one
        return f"{math.floor(share * 1000) / 10:.1f}%"
    return f"{share:.0%}"


def _replicas_rule(spec: InferenceSpec, slowest: float) -> str:
    """How a split's replicas follow from its rate (:func:`~generator.planner.slo.replicas_needed`), as arithmetic."""
    per_replica = f"({slowest:.3f} x {spec.max_utilization:g})" if spec.max_utilization < 1 else f"{slowest:.3f}"
    rule = f"ceil({figure_text(spec.requests_per_second)} / {per_replica})"
    if spec.nodes_down_tolerated:  # review42 item 2: "ceil(24 / 4.471) = 8" where N+1 added two
        k = spec.nodes_down_tolerated
        rule += f" + the replicas its {k} busiest host(s) hold (nodes_down_tolerated: N+{k})"
    return f"max({spec.min_replicas} (min_replicas), {rule})" if spec.min_replicas > 1 else rule


def idle_bound_note(dep: InferenceDeployment, opt: Option, replicas: int) -> str | None:
    """Why a deployment's replicas are kept almost idle, what a looser TTFT target gives, and the queue assumed.

    ``opt``: the replicas of one layout (a split's part); ``replicas``: the whole service's.

    None where a replica runs at least one sequence in flight (review 12 item 2: 411 GPUs were bought at 5% busy
    for a TTFT target 0.3% above a lone prompt's p95, and nothing said so).
    """
    shape = opt.replica_shape
    point, bound = shape.max_point, shape.max_point.idle_bound
    target = effective_slo(dep.inference)[0].slo.ttft_p95_ms
    if bound is None or target is None:
        return None
    lone_ms = bound.lone_ttft_p95_s * 1000
    text = (
        f"deployment {dep.name}: each replica is kept busy in prefill {_percent(point.prefill_busy)} of the time, "
        f"below one sequence in flight, so that 95% of prompts find no queue: the TTFT p95 target ({target:,.0f} ms) "
        f"leaves {target - lone_ms:,.0f} ms over a lone prompt's p95 ({lone_ms:,.0f} ms)"
    )
    if bound.looser_requests_per_s > 1.01 * point.requests_per_s:
        # the rate asked, not the replicas' capacity (which rounds up past it): what planning at that target gives
        queue = looser_slot_queue(dep.inference, point, shape.margin)  # and their wait for a place (review74 item 3)
        fewer = replicas_needed(dep.inference, bound.looser_requests_per_s / shape.margin, slots=queue)
        text += (
            f"; at {bound.looser_ttft_p95_ms:,.0f} ms a replica would take {bound.looser_requests_per_s:.3g} req/s "
            f"instead of {point.requests_per_s:.3g} (about {fewer:,} replicas instead of {replicas:,})"
            if fewer < replicas
            else f"; at {bound.looser_ttft_p95_ms:,.0f} ms a replica would take {bound.looser_requests_per_s:.3g} req/s "
            f"instead of {point.requests_per_s:.3g}, but no fewer replicas (about {fewer:,}: the wait for a place in "
            "the batch holds them)"
        )
    else:
        text += "; a looser TTFT target would not help: the TPOT target holds the rate too"
    return text + (
        ". The prompts' queue in that TTFT p95 is each replica's own, as when a Kubernetes Service routes prompts at "
        "random (a least-loaded router queues far less over many replicas); the wait for a place in a replica's batch "
        f"is stated apart, for inference.routing {dep.inference.routing}"
    )


def _slot_text(
    spec: InferenceSpec,
    pool: SlotParts,
    needed: int,
    rate_only: int,
    ttft_most_s: float,
    names: tuple[str, ...] = (),
    idle: bool = False,
) -> str:
    """The wait for a place in the batch over the replicas' places (newuser72 item 6): Erlang C, and what it sized.

    The replicas are planned at up to the batch each may run; a request arriving while every place is taken waits for
    one, for minutes where requests last minutes, which the TTFT p95 of a request placed does not count. ``pool``: the
    replicas and places of each layout (a split's two parts, named ``names``: one queue over both, fix85);
    ``needed``: the replicas the rate and that wait need, ``rate_only`` the rate alone; ``ttft_most_s``: the TTFT p95
    at the most load (a split's slower part's); ``idle``: the replicas run below one sequence in flight (a request's
    time its mean, not the batch over the rate: review74 item 3). The parenthesis says the routing the wait is sized
    for (``inference.routing``, review74 item 1).
    """
    most = pool
    # below one in flight, or past the rule at the most load: at the replicas' share (review74 items 3 and 5)
    pool = resolved(spec.requests_per_second, pool)
    laddered = not idle and any(q != m._replace(rungs=None) for (_, q), (_, m) in zip(pool, most, strict=True))
    wait = pooled_slot_wait(spec.requests_per_second, pool)
    load = "the most load"
    if (idle or laddered) and (target_ms := spec.slo.ttft_p95_ms) is not None and (slack := pooled_slack(pool)) is not None:
        ttft_most_s, load = target_ms / 1000 - slack, "that load"
    if not math.isfinite(wait.p95_s):
        waited = "every place is taken: the queue for one grows without bound"
    elif wait.waits <= 0.05:
        waited = f"{_percent(wait.waits)} of requests wait for one (p95 wait 0)"
    else:
        waited = f"{_percent(wait.waits)} of requests wait for one, p95 wait {long_seconds_text(wait.p95_s)}"
    if len(pool) == 1 or len({q for _, q in pool}) == 1:  # one layout's places (or a split's two alike)
        replicas, queue = sum(n for n, _ in pool), pool[0][1]
        held = f"{long_seconds_text(queue.request_s)}: {_held_text(idle, laddered)}"
        places = f"{replicas:,} replica(s) x {queue.per_replica:,} places"
    else:
        times = " and ".join(f"{long_seconds_text(q.request_s)} on {name}" for name, (_, q) in zip(names, pool, strict=True))
        freed = " and ".join(f"{n * q.per_replica / q.request_s:.3g}" for n, q in pool)
        held = (
            f"{long_seconds_text(wait.offered / spec.requests_per_second)}: its TTFT and its output at the TPOT, each replica at "
            f"its most load ({times}, weighted by the requests each part's places take with all of them busy: they free "
            f"{freed} places a second)"
            if spec.routing == "free_place"
            else f"{long_seconds_text(wait.offered / spec.requests_per_second)} on average: its TTFT and its output at the TPOT, "
            f"each replica at its most load ({times}, each replica sent an even share)"
        )
        places = " + ".join(f"{n:,} replica(s) x {q.per_replica:,} places" for n, q in pool)
    if spec.routing == "even" and (len(pool) == 1 or len({q for _, q in pool}) == 1):
        # newuser73 item 4: each replica's own queue of b places, not one pooled c the routing does not have
        replicas = sum(n for n, _ in pool)
        share = figure_text(spec.requests_per_second / replicas)
        text = (
            f"a request holds a place in the batch for {held}; {replicas:,} queue(s) of {pool[0][1].per_replica:,} places "
            f"(b), each {_percent(wait.utilisation)} busy at {share} req/s of the "
            f"{figure_text(spec.requests_per_second)}: {waited} {_routing_text(spec)}"
        )
    else:
        text = (
            f"a request holds a place in the batch for {held}; {places} = {wait.servers:,} "
            f"(c), {_percent(wait.utilisation)} busy at {figure_text(spec.requests_per_second)} req/s: {waited} "
            f"{_routing_text(spec)}"
        )
    target = spec.slo.ttft_p95_ms or 0.0
    if pooled_slack(pool) is not None:  # the rule in figures (fix90, review74 item 4): the two tails convolved
        miss = tail_miss(spec.requests_per_second, pool)
        text += (
            f"; with the TTFT once placed (p95 {ttft_most_s * 1000:,.1f} ms at {load}), P(TTFT + wait > {target:,.0f} ms) "
            f"= {_miss_text(miss)}, {'within' if miss <= 0.05 else 'past'} the 5% the p95 target allows (the TTFT's "
            "tail and the wait's convolved: the p95s do not add)"
        )
    if needed > max(rate_only, spec.min_replicas):  # the wait sized it past the rate and min_replicas (review74)
        text += (
            f"; {needed - rate_only:,} replica(s) more than the rate alone needs ({rate_only:,}) keep P(TTFT + wait > "
            f"{target:,.0f} ms) within 5%"
        )
    elif pooled_slack(pool) is None:
        text += "; no TTFT target holds it (service_class batch)"
    return text


def _miss_text(share: float) -> str:
    """A share of requests past the TTFT target, to a tenth of a percent (a hundredth below 1%)."""
    return f"{share:.2%}" if share < 0.01 else f"{share:.1%}"


def _held_text(idle: bool, laddered: bool = False) -> str:
    """What a request's time in a place is (:func:`_slot_text`): the batch over the rate, or below one in flight its mean.

    ``laddered``: the replicas at their share of the rate, below their most load (fix90, review74 item 5).
    """
    if laddered:
        return (
            "its mean TTFT and its output at the TPOT, the replica at its share of the rate (taken up to the next "
            "twentieth of its most), its places a batch meeting the SLOs there: a replica less loaded than its most "
            "runs more places at a shorter TTFT"
        )
    if idle:
        return (
            "its mean TTFT and its output at the TPOT, the replica below one sequence in flight at its share of the "
            "rate (taken up to the next twentieth of its most; a request's own time there, not the batch over the "
            "rate), its places the largest batch meeting the SLOs there"
        )
    return "its TTFT and its output at the TPOT, the replica at its most load"


def _routing_text(spec: InferenceSpec) -> str:
    """The queue the wait for a place is taken over, as ``inference.routing`` states it (review74 item 1)."""
    if spec.routing == "even":
        return (
            "(Erlang C of each replica, an M/M/b queue of its own: inference.routing even, each replica sent an even "
            "share of the requests whatever its load, as a Kubernetes Service or a round-robin balancer sends them, "
            "request times spread exponentially)"
        )
    return (
        "(Erlang C, an M/M/c queue: inference.routing free_place, a router that holds each request until a replica has "
        "a place free, request times spread exponentially; each replica's own queue, as a Kubernetes Service or a "
        "round-robin balancer makes, waits far longer: inference.routing even)"
    )


#: A router that holds each request until a server has a slot free (HAProxy's per-server maxconn and its backend queue).
HAPROXY_MAXCONN_DOCS = "https://www.haproxy.com/documentation/haproxy-runtime-api/reference/set-maxconn-server/"


def routing_note(dep: InferenceDeployment, opt: Option) -> str | None:
    """What the default routing assumes of the router, where an even share a replica would need more (review74 item 1).

    Under ``inference.routing: free_place`` the replicas are sized for one queue in front of every place; a Kubernetes
    Service (a random pick) or a round-robin balancer gives each replica its own queue (``even``), which waits far
    longer at the same count. None where the routing is ``even``, the wait is not sized, or even routing needs no more.
    """
    spec = effective_slo(dep.inference)[0]
    pieces = opt.parts or (opt,)
    pool = tuple((p.candidate.replicas, p.replica_shape.slot_queue) for p in pieces)
    queues = tuple((n, q) for n, q in pool if q is not None)
    if spec.routing != "free_place" or len(queues) != len(pool) or pooled_slack(queues) is None:
        return None
    rate, even = spec.requests_per_second, routed(queues, "even")
    (last, queue), beside = even[-1], even[:-1]  # a split's owned part held, its bought part grown (fix85)
    needed = slot_replicas(rate, queue, last, beside) - last
    if needed <= 0:
        return None
    replicas = sum(n for n, _ in queues)
    at_plan = pooled_slot_wait(rate, even)
    # places and slack at the planned count, as the slot line says them (below one in flight: the ladder's rung at the
    # replicas' share of the rate, review74 item 3; its most load's slack may be nil)
    placed = resolved(rate, queues)
    slack = pooled_slack(placed) or 0.0
    caps = " and ".join(sorted({f"{q.per_replica:,}" for _, q in placed}))
    requests = "request" if caps == "1" else "requests"
    waited = (
        "every replica's queue grows without bound"
        if not math.isfinite(at_plan.p95_s)
        else f"{_percent(at_plan.waits)} of requests would wait for a place, p95 {long_seconds_text(at_plan.p95_s)}"
    )
    return (
        f"deployment {dep.name}: its {replicas:,} replica(s) are sized for a router that holds each request until a "
        f"replica has a place in its batch free (inference.routing: free_place, the default): one queue in front of all "
        f"{sum(n * q.per_replica for n, q in placed):,} places, each replica sent at most {caps} {requests} in flight, as "
        f"HAProxy's per-server maxconn does, its requests past that queueing in the backend until a server slot frees "
        f"({HAPROXY_MAXCONN_DOCS}). A Kubernetes Service (kube-proxy picks a pod at random) or a round-robin balancer "
        f"gives each replica a queue of its own instead: at {replicas:,} replicas {waited}, against the "
        f"{long_seconds_text(slack)} the TTFT p95 target leaves, and {replicas + needed:,} replicas would keep it there; put "
        "such a router in front of the replicas, or set inference.routing: even to plan for a queue each"
    )


def _request_time_text(spec: InferenceSpec, point: OperatingPoint, request_s: float) -> str:
    """A request's time where a drain's default grace cuts it (newuser72 item 5): what the engine pods then need."""
    return (
        f"a request takes {long_seconds_text(request_s)} at the planned load (TTFT p95 {seconds_text(point.ttft_s)} + "
        f"{spec.avg_output_tokens:,} tokens x TPOT {point.tpot_s * 1000:.1f} ms), and a replica holds {point.batch:,} of "
        "them: a drain (a node upgrade, a Karpenter disruption, a scale-in) cuts those in flight past the pod's "
        f"terminationGracePeriodSeconds ({POD_GRACE_DEFAULT_S} s unless set); give the engine pods at least "
        f"{math.ceil(request_s):,} s and a preStop hook that stops admission and waits for the running requests "
        "(a Karpenter NodePool's terminationGracePeriod, where set, must be longer still)"
    )


def _kv_bound_text(spec: InferenceSpec, shape: ReplicaShape, admitted: int, whole: bool) -> str:
    """The engine admitting past the batch a replica's KV cache holds (newuser72 item 4), and the cap that stops it.

    ``whole``: the service is one layout's (a split's parts share one max_num_seqs field, so only the router's cap).
    """
    engine = ENGINE_NAMES[spec.engine]
    batch, ranks = shape.max_point.batch, shape.par.attention_dp
    request = spec.avg_input_tokens + spec.avg_output_tokens
    seqs = f"inference.max_num_seqs: {batch // ranks}" + (f" ({batch // ranks} a rank)" if ranks > 1 else "")
    held_by = f", or give {seqs} (requests then wait to start)" if whole else ""
    if spec.engine == "vllm":
        then = (
            "vLLM admits a request once its prompt's blocks are free, so under a burst the running sequences outgrow "
            "the pool and it preempts the latest, recomputing its whole prefix (prompt and every token so far) when it "
            "resumes, while the rest's steps wait"
        )
    else:
        then = (
            f"{engine} admits on an estimate of the tokens its running requests will still take (its new_token_ratio), "
            "and where they outgrow the pool it retracts some back to the queue, to be prefilled again"
        )
    return (
        f"the KV cache holds {batch:,} requests of {request:,} tokens a replica, not a latency target, and {engine} "
        f"admits up to {admitted:,} ({MAX_SEQUENCES_FLAG[spec.engine]}): {then}; cap the router's concurrency at "
        f"{batch:,} a replica{held_by}"
    )


def _bound_by(spec: InferenceSpec) -> str:
    """What a replica's most load is held to: the SLOs, or none (newuser65 item 8: a batch job read "within the SLOs")."""
    if not latency_bound(spec):
        return "at its largest batch, service_class batch setting no latency target"
    return "within the SLOs"


def _tolerant_replicas(spec: InferenceSpec, opt: Option) -> int | None:
    """The replicas ``nodes_down_tolerated`` runs at ``opt``'s layout; None where not asked (or a split)."""
    if not spec.nodes_down_tolerated or opt.parts:
        return None
    shape = opt.replica_shape
    return option_tolerant(opt, spec, rate_replicas(spec, shape.planned_requests_per_s, slots=shape.slot_queue))[0]


def _inference_details(
    loaded: LoadedWorkload, dep: InferenceDeployment, opt: Option, consts: Constants, part_rate: float | None = None
) -> tuple[dict[str, Any], list[str]]:
    """Details and reasons of the replicas of one option; ``part_rate``: they serve that share of a split deployment."""
    shape = opt.replica_shape
    spec, slo_defaults = effective_slo(dep.inference)
    model = loaded.models[dep.name]
    replicas = opt.candidate.replicas
    needed = replicas_needed(spec, shape.planned_requests_per_s, slots=shape.slot_queue) if part_rate is None else replicas
    host_scale = platform_host_time_scale(opt.hardware.platform)
    # a replica in a share of a GPU runs at the share's rates, with the engine defaults of the memory it sees, as it
    # was sized (the TTFT, TPOT and rates said were the whole GPU's, and vLLM's default max_num_seqs compared with it)
    gpu = opt.hardware.gpu if shape.share is None else shared_gpu(opt.hardware.gpu, shape.share)
    acc = with_lora_adapters(
        accelerator_for(gpu, shape.fmt.compute, shape.par.tp, host_scale, shape.fmt), model.architecture, spec, shape.par
    )
    network = expert_network(opt.hardware, shape.par.ep) if shape.par.attention_dp > 1 else None
    if network is not None and network.host_gpus < shape.par.ep:  # as sized: the exchange leaving the server (review72 1)
        acc = acc._replace(expert_network=network)
    rate = (spec.requests_per_second if part_rate is None else part_rate) / replicas
    whole = model.architecture.encoder_only  # an encoder's request runs in one pass (no chunked prefill)
    engine_consts = engine_constants(spec, gpu, consts, whole)  # a prompt prefilled in passes of the engine's tokens
    point = point_for_rate(model, (shape.par, shape.memory, shape.kv_bits, acc), spec, rate, shape.max_point.batch, engine_consts)
    cap = shape.memory.capacity
    assert cap is not None
    running = shape.max_num_seqs
    budget = step_token_budget(spec, gpu, consts, whole)
    new_tokens, cached_tokens = spec.prompt_tail(spec.avg_input_tokens)  # a prompt's tail its prefix cache misses
    sat = (
        None
        if spec.pooling
        else saturated_throughput(
            model.architecture,
            shape.memory.weights,
            shape.kv_bits,
            shape.par,
            acc,
            cap.sequences_held(spec.avg_input_tokens + spec.avg_output_tokens) * (spec.avg_input_tokens + spec.avg_output_tokens),
            spec.avg_input_tokens,
            spec.avg_output_tokens,
            engine_consts._replace(max_batch_size=running),
            budget,
            cached_tokens,
            prefill_apart=spec.engine == "sglang",  # SGLang runs a waiting prompt as a forward of its own
        )
    )
    # the node reads the checkpoint's files: the 16-bit ones where the engine quantizes them as it loads them
    files_bytes = served_file_bytes(model, shape.fmt.name, shape.memory.weights.total_bytes)
    load_s = model_load_seconds(files_bytes, opt.node, consts)
    download = model_download(files_bytes, opt.hardware.platform, consts)  # a cloud node's, from object storage
    details: dict[str, object] = {
        "requests_per_s": spec.requests_per_second,
        "context_tokens": spec.max_context_tokens,
        "weights_bytes": shape.memory.weights.total_bytes,
        "model_files_bytes": files_bytes,  # what a new node reads (and downloads): the checkpoint's files
        "kv_cache_bytes_per_token": shape.memory.kv.bytes_per_token,
        # an encoder keeps no KV cache: its capacity's tokens are max_num_seqs x the context (newuser62 item 5)
        "kv_cache_tokens_per_replica": 0 if model.architecture.encoder_only else cap.kv_cache_tokens,
        "max_concurrency_per_replica": round(cap.max_concurrency, 2),
        "requests_per_s_per_replica_max": round(shape.served_requests_per_s, 3),  # a job's not its deadline's share
        "requests_per_s_per_replica": round(rate, 3),
        "batch_per_replica": point.batch,
        "max_num_seqs": running,
        "ttft_p95_s": round(point.ttft_s, 4),
        "tpot_s": round(point.tpot_s, 5),
        "max_output_tokens_per_s_per_replica": round(sat.output_tokens_per_s, 1) if sat else None,
        "model_load_s": round(load_s, 1) if load_s is not None else None,
        "service_class": spec.service_class,
        "slo_ttft_p95_ms": spec.slo.ttft_p95_ms,
        "slo_tpot_ms": spec.slo.tpot_ms,
    }
    if download is not None:  # newuser63 item 5: a new cloud node's time to have the model, a floor
        details["model_download_s"] = round(download.seconds, 1)
        details["model_download_gbps"] = download.gbps
        details["model_download_link"] = download.link
    if replicas > needed:  # more than the rate needs run on GPUs of its servers that would otherwise idle
        details["replicas_past_rate"] = replicas - needed
    queue = shape.slot_queue if part_rate is None else None
    if queue is not None:  # the wait for a place in the batch over every replica's (newuser72 item 6)
        details.update(_slot_wait_details(spec, ((replicas, queue),)))
    request_s = None if spec.pooling else request_seconds_at(spec, point)
    if request_s is not None and request_s > POD_GRACE_DEFAULT_S:  # what a drain must wait for (newuser72 item 5)
        details["request_s"] = round(request_s, 1)
    if spec.nodes_down_tolerated:  # N+k asked: diff names a change of it (the replicas alone read as growth)
        details["nodes_down_tolerated"] = spec.nodes_down_tolerated
    if spec.cached_prompt_share:  # the share of each prompt its prefix cache holds: the rest is prefilled
        details["cached_prompt_share"] = spec.cached_prompt_share
        details["prefill_new_tokens"] = new_tokens
    if spec.p95_input_tokens is not None:  # the TTFT p95 is over a prompt mix (newuser34 item 4)
        mix = least_spread_mix(spec.avg_input_tokens, spec.p95_input_tokens)
        details["p95_input_tokens"] = spec.p95_input_tokens
        details["ttft_p95_prompt_mix"] = {
            "short_tokens": mix.short_tokens,
            "long_tokens": mix.long_tokens,
            "long_share": mix.long_share,
        }
    if spec.pooling:  # one forward pass a request: its latency, its compute, no decode figures
        details.update(pooling_details(model, spec, point, shape.max_point))
        for key in ("ttft_p95_s", "tpot_s", "max_output_tokens_per_s_per_replica", "slo_ttft_p95_ms", "slo_tpot_ms"):
            del details[key]
    if (own := quantized_online_from(model, shape.fmt.name)) is not None:  # the engine quantizes it as it loads it
        details["quantized_online_from"] = own
    if spec.engine != "vllm":
        details["serving_engine"] = spec.engine
        if spec.engine == "sglang":  # the fraction its pool is sized with, rendered as --mem-fraction-static (fuzz33 item 3)
            details["mem_fraction_static"] = sglang_mem_fraction(gpu.memory_bytes, shape.par, spec.mem_fraction_static)
    else:  # vLLM --max-num-batched-tokens: its profiling run reserves memory for that many tokens
        details["max_num_batched_tokens"] = budget
    if shape.par.ep > 1:
        details["expert_parallel"] = shape.par.ep
    if shape.par.attention_dp > 1:  # data-parallel attention groups of TP GPUs a stage, each its own sequences
        details["attention_dp"] = shape.par.attention_dp
    if shape.memory.kv.state_bytes_per_sequence:  # linear-attention layers: paged as vLLM does without prefix caching
        details["recurrent_state_bytes_per_sequence"] = shape.memory.kv.state_bytes_per_sequence
    # the attention kernels an engine picks by them (an AMD pool's vLLM settings, generator.render.rocm_tuning)
    if model.architecture.uses_mla:  # MLA (DeepSeek-V2/V3, Kimi-K2)
        details["latent_attention"] = True
    if model.architecture.model_type == "gpt_oss":  # attention sinks
        details["attention_sinks"] = True
    mem = shape.memory.per_gpu
    par = shape.par
    if shape.share is not None:  # sized against its share: memory, KV, rates and cost are the share's
        details["gpu_share"] = shape.share.text(opt.hardware.gpu.id)
        case = f"fits one pod's share of a GPU ({details['gpu_share']}); its memory, KV cache, rates and cost are the share's" + (
            "" if shape.share.strategy == "mig" else ", each replica on the GPU assumed at full load"
        )
    elif par.gpus == 1:
        case = "fits one GPU: no model split needed"
    else:
        gpu = opt.hardware.gpu
        platform = opt.hardware.platform
        per_node = opt.candidate.gpus_per_node
        across = platform.hosts == 1 and replica_hosts(platform, per_node, par.gpus) > 1  # a hop leaves its server
        width = par.gpus // par.pp  # a stage's GPUs: its TP, or its EP where attention runs data-parallel
        node_net = node_link(platform, gpu, per_node, opt.needs.needs_fabric) if across else (0.0, "")
        # one stage has no hops between stages; an EP stage wider than a server exchanges its tokens over the network
        hops = (
            stage_hop_text(platform, per_node, width, par.pp, model.architecture.hidden_size, node_net, spec.engine)
            if across and par.pp > 1
            else None
        )
        exchange = expert_exchange_text(platform, per_node, par.ep, node_net) if across and par.attention_dp > 1 else None
        link = f"{acc.link_gb_per_s:g} GB/s per direction over {gpu.link_name(acc.fast_link, par.tp)}"
        share = peer_link_share(par.tp, gpu.mesh_gpus)
        if acc.fast_link and gpu.collective_gb_per_s:
            link += f" (what NCCL/RCCL count on; {gpu.interconnect_gb_per_s_bidir / 2 * share:g} GB/s peak)"
        if acc.host_staged and par.tp > 1:  # acc102: no peer access over PCIe, so the collective goes through host memory
            link += f" ({host_staged_text(acc, gpu.name)})"
        if acc.fast_link and share < 1 and gpu.mesh_gpus:  # newuser30 item 1
            link += (
                f"; the {gpu.mesh_gpus} GPUs of its board are linked pairwise, no switch between them, so a group of "
                f"{par.tp} reaches {par.tp - 1}/{gpu.mesh_gpus - 1} of each GPU's links"
            )
        if par.tp > 1 and (note := opt.hardware.bridge_note()):
            link += f"; {note}"
        if width == 1 and every_hop_leaves_host(platform, opt.candidate.gpus_per_node, width, par.pp):
            link = ""  # no TP group and no hop inside a host: no GPU link carries anything (newuser61 item 14)
        if exchange is not None and par.tp == 1 and per_node // platform.hosts == 1:
            link = ""  # one GPU a host and no TP group: the whole exchange leaves the host (review72 item 1)
        split = f"split over {par.gpus} GPUs (TP{par.tp}" + (f" x PP{par.pp}" if par.pp > 1 else "") + ")"
        if par.attention_dp > 1:
            split = f"split over {par.gpus} GPUs ({layout_name(par.tp, par.pp, par.ep)})"
        # a rack-scale system's trays share NVLink; servers do not (newuser16 L2)
        case = "; ".join(part for part in (f"{split}, {link}" if link else split, hops, exchange) if part)
        if par.attention_dp > 1:
            pinned = dep.parallelism is not None and (dep.parallelism.ep or 1) > 1
            pinned_tp = not pinned and dep.parallelism is not None and dep.parallelism.tp is not None
            case += (
                f"; attention data-parallel over {par.attention_dp} groups of {par.tp} GPU(s) a stage, each holding its "
                f"own sequences' KV cache ({_tp_kv_copies(model.architecture, par.ep)}), the routed experts spread whole "
                f"over the stage's {par.ep} GPUs and their tokens exchanged all-to-all in every MoE layer "
                f"({'as pinned' if pinned else 'searched beside the TP layouts'}; vLLM "
                f"--data-parallel-size {par.attention_dp} --enable-expert-parallel, SGLang --enable-dp-attention)"
                + (
                    f"; a pinned tp leaves ep searched: parallelism.ep: 1 keeps each replica to its TP{par.tp} GPUs"
                    if pinned_tp
                    else ""
                )
            )
        elif par.ep > 1:
            pinned = dep.parallelism is not None and (dep.parallelism.ep or 1) > 1
            why = "as pinned" if pinned else f"TP{par.tp} alone splits the experts into shards that do not load"
            case += (
                f"; the routed experts spread whole over each stage's {par.ep} GPUs (expert parallelism, {why}), "
                "their tokens exchanged all-to-all in every MoE layer"
            )
    kv_for = pooling_kv_text(spec, shape.max_point.batch) if spec.pooling else f"one {spec.max_context_tokens:,}-token sequence"
    most_load = pooling_pass_text(shape.max_point) if spec.pooling else _load_text(shape.max_point)
    # from the figures spec.json keeps (ttft_p95_s, tpot_s), so that a diff prints the same (newuser27 item 11)
    planned = f"batch {point.batch}, TTFT p95 {round(point.ttft_s, 4) * 1000:.0f} ms, TPOT {round(point.tpot_s, 5) * 1000:.1f} ms"
    fit = (
        f"{cap.kv_cache_tokens:,} KV tokens fit ({cap.max_concurrency:.1f} such {'requests' if spec.pooling else 'sequences'})"
        + (" by SGLang's mem_fraction_static accounting" if spec.engine == "sglang" else "")
    )
    if model.architecture.encoder_only:
        kv_for, fit = encoder_pass_text(spec, shape.max_point.batch, model.architecture.max_model_len)
    reasons = [
        case,
        f"per GPU: weights {_gib(mem.weights)} + KV {_gib(mem.kv_cache)} + activations {_gib(mem.activations)} + overhead "
        f"{_gib(mem.overhead)} for {kv_for}; {fit}",
        # from the figure the details keep (3 decimals), so that SPEC.md and the diff print the same digits (newuser26 item 11)
        f"one replica sustains {round(shape.max_point.requests_per_s, 3):,.2f} req/s {_bound_by(spec)} ({most_load}); "
        + _margin_text(shape)
        + (
            replicas_text(spec, needed, replicas, _tolerant_replicas(spec, opt))
            if part_rate is None
            else f"{replicas} replica(s) here serve {part_rate:.2f} req/s, this part's share"
        ),
        pooling_load_text(point)
        if spec.pooling
        else f"at the planned load: {planned}{_margin_load_text(shape)}; {ttft_basis_text(spec, consts.ttft_p95_factor)}",
    ]
    if spec.cached_prompt_share:
        shaped = (shape.par, shape.memory, shape.kv_bits, acc)
        room = (cap.sequences_held(spec.avg_input_tokens + spec.avg_output_tokens), shape.max_point.batch)
        reasons.append(cached_prompt_text(model, shaped, spec, point, engine_consts, room))
    if queue is not None:
        rate_only = rate_replicas(spec, shape.planned_requests_per_s)  # review74: not min_replicas, said as "the rate"
        idle = shape.max_point.idle_bound
        ttft_most = shape.max_point.ttft_s if idle is None else idle.ttft_s
        reasons.append(_slot_text(spec, ((replicas, queue),), needed, rate_only, ttft_most, idle=idle is not None))
    if request_s is not None and request_s > POD_GRACE_DEFAULT_S:
        reasons.append(_request_time_text(spec, point, request_s))
    if wide := replica_note(opt, spec.engine):
        reasons.insert(1, wide)
    engine = ENGINE_NAMES[spec.engine]
    if spec.pooling:  # a pooling replica's batch is its passes' requests (said above), not decodes a step holds
        reasons.append(pooling_engine_text(spec, "ansible" in loaded.workload.outputs, model.id))
    elif running < (default := max_running(spec, gpu, consts)):
        reasons.append(
            f"max_num_seqs {running}: at {engine}'s default of {default} on {opt.hardware.gpu.id} its profiling run samples "
            f"{default} sequences' logits and leaves no room for one {spec.max_context_tokens:,}-token sequence; the "
            "group vars carry the lower limit"
        )
    elif budget and shape.max_point.batch == (
        stepped := step_budget_batch(budget * shape.par.attention_dp, new_tokens, spec.avg_output_tokens)
    ) < min(running * shape.par.attention_dp, cap.sequences_held(spec.avg_input_tokens + spec.avg_output_tokens)):
        reasons.append(
            f"the batch stops at {stepped} sequences: a step runs at most {budget:,} tokens (max_num_batched_tokens), "
            f"the decodes and the {new_tokens / max(1, spec.avg_output_tokens):.1f} prompt tokens each "
            "brings to prefill; set inference.max_num_batched_tokens higher where the latency SLOs allow a larger batch"
        )
    elif (
        shape.max_point.batch
        == running * shape.par.attention_dp
        < (held := cap.sequences_held(spec.avg_input_tokens + spec.avg_output_tokens))
    ):
        if spec.max_num_seqs:
            whose = "the workload's max_num_seqs"
        elif budget is not None and running == budget:
            whose = f"max_num_batched_tokens {budget:,}: vLLM runs no more sequences than tokens a step"
        else:
            whose = f"{engine}'s default on {gpu.id}"
        if (beyond := shape.max_point.capped_binds_text) is not None:
            # newuser73 item 3: the batch the SLOs allow, which the plan had advised giving as max_num_seqs, was then
            # told to be raised: the next batch misses a target, so the cap is the SLOs' batch and stays
            reasons.append(
                f"the batch stops at {running} sequences ({whose}), the batch the latency SLOs allow ({beyond}): "
                f"keep it; the KV cache holds {held:,} average requests, room a larger batch would not use within "
                "the SLOs"
            )
        else:
            reasons.append(
                f"the batch stops at {running} sequences ({whose}) although the KV cache holds {held:,} average requests: "
                f"set inference.max_num_seqs higher ({engine}'s {MAX_SEQUENCES_FLAG[spec.engine]}) where the latency "
                "SLOs allow a larger batch"
            )
    admitted = running * shape.par.attention_dp  # max_num_seqs is each attention-DP rank's (review32 item 5)
    if not spec.pooling and shape.max_point.binds and shape.max_point.batch < admitted:
        # newuser46 item 7: the engine admits up to max_num_seqs, past the batch the latency targets hold at
        batch, ranks = shape.max_point.batch, shape.par.attention_dp
        if queue is not None:  # the places the wait is counted over at the planned load (fix90, review74 item 5)
            batch = max(batch, resolved(spec.requests_per_second, ((replicas, queue),))[0][1].per_replica)
        slower = " and ".join(t for t in ("TTFT", "TPOT") if t in shape.max_point.binds)
        # the engine's own flag, as the KV-bound line names it (newuser74 item 18: "SGLang admits up to 2,048
        # (max_num_seqs)" here, "(--max-running-requests)" there)
        flag = MAX_SEQUENCES_FLAG[spec.engine]
        per_rank = f" ({ranks} attention-DP ranks of {running:,}, {flag})" if ranks > 1 else f" ({flag})"
        seqs = f"inference.max_num_seqs: {batch // ranks}" + (f" ({batch // ranks} a rank)" if ranks > 1 else "")
        # one field for every part of a split service: the router's cap is the part's own (review32 item 5)
        held_by = f", or give {seqs} (requests then wait to start)" if part_rate is None else ""
        reasons.append(
            f"the SLOs hold at {batch} sequence{'s' if batch != 1 else ''} a replica, and {engine} admits up to "
            f"{admitted:,}{per_rank}: a burst "
            f"past the planned rate runs a larger batch at a slower {slower}, so cap the router's concurrency at "
            f"{batch} a replica{held_by}"
        )
    elif (
        not spec.pooling
        and shape.max_point.idle_bound is None
        and shape.max_point.batch == cap.sequences_held(spec.avg_input_tokens + spec.avg_output_tokens)
        and shape.max_point.batch < admitted
    ):
        # newuser72 item 4: the KV cache, not a latency target, stops the batch, and the engine admits past it
        reasons.append(_kv_bound_text(spec, shape, admitted, part_rate is None))
    if (rates := dequantized_rates(model.architecture, shape.par, acc, consts)) is not None:  # review 27 item 3
        reasons.append(f"the replica's rates count on its GEMMs' dequantization: {rates.text()}")
    if slo_defaults and part_rate is None:
        reasons.append(slo_default_reason(slo_defaults))
    if spec.lora is not None:  # the adapters' slots and host copies (newuser92)
        buffer = shape.memory.overhead_parts.get("lora_shrink_buffer", 0)
        details["lora"] = lora_details(model.architecture, spec, shape.par, buffer)
        reasons.append(lora_reason(details, spec.engine))
    return details, reasons


def purchase(option: Option) -> object:
    """What an option rents or buys: a service's servers and GPUs (every part) and GPUs bought; a training job's GPU."""
    c = option.candidate
    if c.run_hours is not None:
        return c.gpu_id
    return tuple(sorted({(p.candidate.platform_id, p.candidate.gpu_id) for p in option.pieces})), c.gpus_bought


def _buys(option: Option, bought: object, gpus_bought: int) -> bool:
    """Whether ``option`` is the purchase ``bought`` (a service's, of ``gpus_bought`` GPUs bought).

    The GPUs bought first: most options differ there, and the servers' kinds are not formed for them.
    """
    return option.candidate.gpus_bought == gpus_bought and purchase(option) == bought


def same_purchase_reason(chosen: Option, rest: list[Option]) -> str | None:
    """A service's best other layout on the same purchase, which the runners-up (other purchases) do not show."""
    if chosen.candidate.run_hours is not None:
        return None
    bought, gpus_bought = purchase(chosen), chosen.candidate.gpus_bought
    other = next((o for o in rest if _buys(o, bought, gpus_bought) and not _same_layout(o, chosen)), None)
    if other is None:
        return None
    c = other.candidate
    return f"the best other layout on the same purchase: {c.summary} ({cost_text(c)}, {c.idle_gpus} idle GPU(s))"


def _same_layout(a: Option, b: Option) -> bool:
    """Whether two options run one replica layout on one server kind: the same, but for the replicas the servers hold.

    review33 item 1: a service sharing its servers was offered its own layout filled (Option.filled) as the best
    other layout on the purchase.
    """

    def layout(c: Candidate) -> tuple[object, ...]:
        return (c.gpu_id, c.platform_id, c.gpus_per_node, c.tp, c.pp, c.shares_per_gpu)

    return not a.parts and not b.parts and layout(a.candidate) == layout(b.candidate)


#: What an objective's tie holds equal, as the tie-break reason says it.
_TIED_ON = {
    "cost": "cost, idle GPUs, servers and power",
    "gpus": "GPUs, idle GPUs, servers and power",
    "power": "power, idle GPUs and servers",
    "power-bought": "power bought, idle GPUs and servers",
}


def _replicas_rate(opt: Option) -> str:
    """An option's sustained rate as its replicas make it: '23.44 req/s (2 x 11.72)'; a split's parts each.

    Where the wait for a place in the batch holds the replicas below their rates' sum (:func:`sustained_rps`), the
    figures say so: '12.64 req/s (2 x 6.78, less the wait for a place in the batch)' (m74a item 4).
    """
    each = " + ".join(f"{p.candidate.replicas} x {p.replica_shape.planned_requests_per_s:,.2f}" for p in opt.pieces)
    sustained = sustained_rps(opt)
    routed = ", routed evenly" if opt.parts else ""
    if round(sustained, 2) < round(replicas_rps(opt), 2):
        routed += ", less the wait for a place in the batch"
    return f"{sustained:,.2f} req/s ({each}{routed})"


def tie_break_reason(objective: str, chosen: Option, rest: list[Option], rate_rps: float) -> str | None:
    """Why a service's layout beat another layout on the same purchase that ties on the objective (newuser24 item 4).

    Every layout ranked meets the SLOs: at one price the one sustaining more requests per second wins (headroom
    over the rate asked, and replicas that keep serving while one restarts); at equal capacity, the lower TTFT p95.
    None where no other layout on the same purchase ties.
    """
    if chosen.candidate.run_hours is not None or not isinstance(chosen.shape, ReplicaShape):
        return None
    mine, bought = ranking_candidate(chosen), purchase(chosen)
    other = next(
        (
            o
            for o in rest
            if _buys(o, bought, chosen.candidate.gpus_bought)
            and (o.candidate.tp, o.candidate.pp, o.candidate.replicas) != (mine.tp, mine.pp, mine.replicas)
            and not _same_layout(o, chosen)
            and ties_before_headroom(objective, mine, ranking_candidate(o))
        ),
        None,
    )
    if other is None:
        return None
    tied = _TIED_ON.get(objective, _TIED_ON["cost"])
    ours, theirs = round(sustained_rps(chosen), 2), round(sustained_rps(other), 2)
    rates = (
        f"{_replicas_rate(chosen)} within the SLOs against {_replicas_rate(other)}, {_percent(rate_rps / ours)} of it "
        f"used at {rate_rps:g} req/s against {_percent(rate_rps / theirs)}"
    )
    several, lone = chosen.candidate.replicas > 1, other.candidate.replicas < 2
    if several and lone:
        return f"won the tie on {tied} with {other.candidate.summary}: its replicas keep serving while one restarts; {rates}"
    if ours > theirs:
        spare = "; a replica can restart while the others serve" if several else ""
        return f"won the tie on {tied} with {other.candidate.summary} by capacity: {rates}{spare}"
    mine_hosts, their_hosts = replica_host_count(chosen), replica_host_count(other)
    if ours < theirs and mine_hosts < their_hosts:  # newuser50 item 1: the trade said, not left to the runner-up line
        return (
            f"won the tie on {tied} with {other.candidate.summary} by its replicas' hosts: {mine_hosts} a replica against "
            f"{their_hosts} (a replica over several hosts is a multi-host serving group: a leader and workers started "
            f"together, and one host's failure stops the replica), though that layout sustains more: {rates}"
        )
    if ours == theirs and chosen.candidate.latency_s < other.candidate.latency_s:
        return (
            f"tied on {tied} and capacity ({ours:,.2f} req/s) with {other.candidate.summary}; the lower TTFT p95 at "
            f"the sized load chose it ({chosen.candidate.latency_s * 1000:,.0f} ms against "
            f"{other.candidate.latency_s * 1000:,.0f} ms)"
        )
    return None


def _offer_key(option: Option) -> tuple[object, ...]:
    """What an option buys, its chassis aside: the GPUs, servers, price and power.

    Options equal on it are one offer on several chassis (three H200 servers at one derived price and one published
    power figure): a buyer choosing between them chooses a vendor, not a plan.
    """
    c = option.candidate
    servers = tuple((p.candidate.gpu_id, p.candidate.gpus_per_node, p.candidate.nodes) for p in option.pieces)
    usd = None if c.usd_per_hour is None else round(c.usd_per_hour, 6)
    return (servers, c.gpus_bought, c.owned_nodes, c.run_hours, usd, c.power_w)


def _gpu_kind(option: Option) -> tuple[str, ...]:
    """The GPUs an option runs on (two where it is split over two kinds)."""
    if not option.parts:  # one part: its GPU
        return (option.hardware.gpu.id,)
    return tuple(sorted({p.gpu_id for p in option.parts}))


#: A service's runner-up using more than this many times the GPUs of the choice or of a better-ranked option on its
#: GPU, and no cheaper nor lower in power, says nothing a reader would act on (fuzz34 item 9a: an 8B service in one
#: MIG share, runner-up TP8 x PP2 on 16 GPUs at twice the month).
OUTCLASSED_GPUS = 4


def _outclassed(best: Option, other: Option) -> bool:
    """Whether ``other`` is worse than ``best`` (the best-ranked option of its GPU kind) on every figure, on > 4x the GPUs.

    The figures are its month (price per hour), its power and the GPUs its replicas use; an unpriced runner-up is
    compared on what is known, its GPUs and power (newuser79 item 8: with the priced 8-GPU a3-highgpu-8g outclassed by
    a 1-GPU choice, the unpriced 8-GPU a3-megagpu-8g was listed in its place); an unpriced best is not compared (kept).
    The best option of each GPU kind is kept (it is its own best): it is what a reader compares.
    """
    c, o = best.candidate, other.candidate
    if best is other or c.usd_per_hour is None:
        return False
    dearer = o.usd_per_hour is None or o.usd_per_hour >= c.usd_per_hour
    return o.gpus > OUTCLASSED_GPUS * max(c.gpus, 1) and dearer and o.power_w >= c.power_w


def no_better_text(chosen: Option, other: Option) -> str | None:
    """Why a service's runner-up is no better than the choice on any figure a buyer weighs; None where it is on one.

    More GPUs bought, a month at least the choice's, power at least its, and no more requests a second within the
    SLOs (each as many replicas as its servers hold, the wait for a place in the batch included): newuser79 item 8 saw
    an 8B service's runners-up at TP8 PP2..PP4 on 16 to 32 H100, dearer and slower than the 8 x TP1 chosen on 8,
    listed with no word of it. Said, not left out: leaving them out lists others in their place, no more telling.
    Unpriced sides and training jobs are not compared.
    """
    c, o = chosen.candidate, other.candidate
    if c.run_hours is not None or c.usd_per_hour is None or o.usd_per_hour is None:
        return None
    if o.gpus_bought <= c.gpus_bought or o.usd_per_hour < c.usd_per_hour or o.power_compared_w < c.power_compared_w:
        return None
    theirs, ours = sustained_rps(other.filled or other), sustained_rps(chosen.filled or chosen)
    if round(theirs, 2) > round(ours, 2):
        return None
    return (
        f"no better than the choice: more GPUs, a month and power at least its, for {theirs:,.2f} req/s within the SLOs "
        f"against its {ours:,.2f}"
    )


def distinct_runners_up(chosen: Option, rest: list[Option], count: int = 3) -> list[Option]:
    """The first ``count`` of ``rest`` that read differently from the choice and from each other.

    Options differing only in what no output shows (a node's RAM variant, say) form equal candidates, and a training
    job's ZeRO stages on the same servers cost the same; listed as they are they crowd out the other GPUs and servers
    (newuser14 item 4: three copies of the choice, and no word of the other GPUs allowed). A training job's
    runners-up are the best of each other GPU (its layouts on the chosen servers are the runner-up layout's reason).
    A service's are the best other purchase (servers, GPUs and how many GPUs are bought: what a buyer would rent
    or buy instead; newuser18 item 2: three other TP degrees on the same instances at the same price hid an instance
    1.8% dearer), then the best of each other GPU kind, then other purchases and layouts where room is left. An offer
    already listed (the same GPUs, servers, price and power on another chassis) is not listed again: :func:`twin_reasons`
    names those chassis (newuser24 item 7: three H200 chassis at one price hid the B200 allowed).
    """
    if chosen.candidate.run_hours is not None:
        return _distinct(chosen, rest, [(purchase, count)], count)
    best: dict[tuple[str, ...], Option] = {_gpu_kind(chosen): chosen}  # the best-ranked option of each GPU kind
    rest = [o for o in rest if not _outclassed(best.setdefault(_gpu_kind(o), o), o)]
    passes: list[tuple[Callable[[Option], object], int]] = [
        (purchase, 1), (_gpu_kind, count), (purchase, count), (lambda o: o.candidate, count),
    ]  # fmt: skip
    return _distinct(chosen, rest, passes, count)


def _distinct(
    chosen: Option, rest: list[Option], passes: list[tuple[Callable[[Option], object], int]], count: int
) -> list[Option]:
    """Up to ``count`` of ``rest`` (ranked), in its order.

    Each pass adds up to its number of options new by its key and by their offer.
    """
    shown: list[Option] = []
    service = chosen.candidate.run_hours is None
    offers = {_offer_key(chosen)} if service else set()
    offer_of: dict[int, tuple[object, ...]] = {}  # each option's offer, formed once over the passes

    def offer(option: Option) -> tuple[object, ...]:
        if (found := offer_of.get(id(option))) is None:
            found = offer_of[id(option)] = _offer_key(option)
        return found

    for key, most in passes:
        seen = {key(chosen), *(key(o) for o in shown)}
        added = 0
        for option in rest:
            if len(shown) == count or added == most:
                break
            if (k := key(option)) in seen or offer(option) in offers:
                continue
            seen.add(k)
            offers |= {offer(option)} if service else set()
            shown.append(option)
            added += 1
    # listed in the ranking's order, as a reader takes a list (newuser46 item 6: a $25,399 runner-up read before one
    # of $20,566); the passes choose which, not their order
    rank = {id(option): i for i, option in enumerate(rest)}
    return sorted(shown, key=lambda option: rank[id(option)])


def twin_reasons(chosen: Option, shown: list[Option], rest: list[Option]) -> list[str]:
    """The other chassis of the choice's and the runners-up's offers (same GPUs, servers, price and power), in one line.

    'the same GPUs, servers, price and power on other chassis: the choice also on dgx-h200; runners-up 1 and 2 also
    on ...' (newuser24 item 7), where runners-up count from 1 in the order listed.
    """
    if chosen.candidate.run_hours is not None:
        return []
    offered = [(option, _offer_key(option)) for option in (chosen, *shown)]
    # an offer's power is its key's last field: the options of another power (most of ``rest``) are not keyed
    powers = {option.candidate.power_w for option in (chosen, *shown)}
    chassis: dict[tuple[object, ...], set[str]] = {}  # each listed offer's chassis, over ``rest`` once
    for o in rest:
        if o.candidate.power_w in powers:
            chassis.setdefault(_offer_key(o), set()).add(o.candidate.platform_id)
    groups: dict[tuple[str, ...], list[str]] = {}
    for n, (option, offer) in enumerate(offered):
        others = tuple(sorted(chassis.get(offer, set()) - {option.candidate.platform_id}))
        if others:
            groups.setdefault(others, []).append("the choice" if n == 0 else str(n))
    if not groups:
        return []
    parts = []
    for others, whose in groups.items():
        numbers = [w for w in whose if w != "the choice"]
        named = ["the choice"] if "the choice" in whose else []
        if numbers:
            named.append(("runner-up " if len(numbers) == 1 else "runners-up ") + listed(numbers))
        parts.append(f"{' and '.join(named)} also on {', '.join(others)}")
    return ["the same GPUs, servers, price and power on other chassis: " + "; ".join(parts)]


#: Reasons that rule out only layouts spanning servers: named after those that rule out a single server's layout.
MULTI_NODE_CODES = frozenset({NO_GPU_FABRIC})


def ranked_reasons(blocked: list[Blocked]) -> list[str]:
    """Every distinct reason a GPU's layouts were dropped, the most telling first.

    The layout nearest its latency targets first, then what rules out a layout on one server (its PSUs, its RAM),
    and last what only stops layouts spanning servers (no GPU fabric): newuser25 item 13 saw the 4 x RTX 5090 WRX90's
    PSU limit hidden behind "(+3 more reasons)" after a tower's missing fabric.
    """
    keyed = sorted((b.excess is None, b.excess or 0.0, b.code in MULTI_NODE_CODES, b.text) for b in blocked)
    return list(dict.fromkeys(text for *_, text in keyed))


def missing_gpu_findings(
    wl: Workload, chosen: list[tuple[int, Option, list[Option]]], ruled_out: dict[str, list[Blocked]]
) -> list[Finding]:
    """Each GPU the workload lists (``hardware.gpus``) on which a deployment has no layout at all, and why.

    Otherwise a GPU asked about vanishes from the plan without a word: no choice, no runner-up (newuser24 item 1:
    MI325X, its only chassis ruled out by its PSUs, absent from a buy plan over four GPUs). The reason is the one the
    infeasible message would give first for that GPU (its layout nearest the latency targets where they are why).
    """
    given = wl.hardware.gpus or ()
    if len(given) < 2:
        return []
    offered = {hw.gpu.id for hw in allowed_hardware(wl)}
    findings = []
    for index, best, rest in chosen:
        name = wl.deployments[index].name
        planned = {part.gpu_id for option in (best, *rest) for part in option.pieces}
        blocked = ruled_out.get(name, [])
        for j, gpu_id in enumerate(given):
            if gpu_id in planned:
                continue
            on_gpu = [b for b in blocked if b.gpu_id == gpu_id]
            mine = ranked_reasons([b for b in on_gpu if b.code not in (PINNED_OUT, OVER_LIMIT)])
            unshared = [b.why for b in on_gpu if b.code == NOT_SHARED_HERE]  # one reason for every platform of it
            if gpu_id not in offered:
                why = _not_offered_why(wl, gpu_id)
            elif unshared:
                why = unshared[0]
            elif mine and any(b.code == OVER_LIMIT for b in on_gpu):
                # the fleet limits first (newuser79 item 3: the budget dropped the 8-GPU A3's layouts and the slices'
                # unpriced ones, and the slices' multi-node network was named alone)
                why = "; ".join([_dropped_why(wl, on_gpu), *mine])
            elif mine:
                why = "; ".join(mine)
            else:
                why = _dropped_why(wl, on_gpu)
            findings.append(
                Finding("info", "gpu-no-layout", f"deployment {name}: no layout on {gpu_id}: {why}", f"hardware.gpus[{j}]")
            )
    return findings


def _dropped_why(wl: Workload, blocked: list[Blocked]) -> str:
    """Why a GPU's layouts, none ruled out by what they are, were left out: the pins, else the fleet limits.

    An unpriced one says so, with the platforms it has no price on (newuser42 item 4: an RTX PRO 6000 server with no
    purchase price "exceeds hardware.max_capex_usd" of $400,000).
    """
    pinned = [b.why for b in blocked if b.code == PINNED_OUT]
    if pinned:
        return pinned[0]
    over = list(dict.fromkeys(b for b in blocked if b.code == OVER_LIMIT))
    if not over:
        return f"every layout on it exceeds hardware.{limits_text(wl)}"
    # one line for each reason, naming the platforms it holds on where several do
    by_why: dict[str, list[str]] = {}
    for b in over:
        by_why.setdefault(b.why, []).append(b.platform_id)
    said = []
    for why, platforms in by_why.items():
        named = len(by_why) > 1 or why.startswith("no ")
        said.append(
            (f"on {listed(sorted(set(platforms)))}: {why}" if named else f"every layout on it {why}")
            + _cheapest_over(wl, [b for b in over if b.why == why])
        )
    return "; ".join(said)


def _cheapest_over(wl: Workload, over: list[Blocked]) -> str:
    """The cheapest layout the budget dropped of ``over`` and its month against the budget; "" where none is priced.

    newuser79 item 3: "exceeds hardware.max_budget_usd_per_month" said no figure, and the budget was not named at all.
    """
    priced = [b for b in over if b.usd_per_month is not None]
    cap = wl.hardware.max_budget_usd_per_month
    if not priced or cap is None:
        return ""
    least = min(priced, key=lambda b: (b.usd_per_month or 0.0, b.pp, b.layout))  # of a tie, the fewest stages
    return f" (${cap:,.0f}: the cheapest, {least.layout}, costs ${least.usd_per_month:,.0f}/month alone)"


def _not_offered_why(wl: Workload, gpu_id: str) -> str:
    """Why no allowed server holds a GPU the workload lists: none of the provider's platforms, or it is not sold new."""
    unsold = unsold_everywhere_why(wl, gpu_id)
    return f"{unsold}, so it is not bought" if unsold else "no allowed platform of this provider offers it"


def slo_default_reason(slo_defaults: list[str]) -> str:
    """The reason saying which default latency targets a service was planned against."""
    return "latency targets not given, planned against " + " and ".join(slo_defaults)


def _technique_details(setup: TrainingSetup) -> dict[str, Any]:
    """What a training job's launcher must be configured with beside its layout (newuser23 item 10).

    The framework, the memory techniques the job is sized with (its own, else its framework's) and a LoRA job's adapters.
    """
    loss, activation_offload, in_backward = setup.techniques()
    details: dict[str, Any] = {
        "framework": setup.framework,
        "loss": loss,
        "activation_offload": activation_offload,
        "optimizer_in_backward": in_backward,
        "fused_kernels": setup.kernels_fused(),
        "flash_attention": setup.flash_attention,
    }
    if setup.compute_precision != "bf16":
        # FP8 training: the launcher's --fp8-format hybrid (Megatron-LM) or float8 converter (torchtitan / torchao)
        details["compute_precision"] = setup.compute_precision
    if setup.paged_optimizer:
        # the recipe's paged optimizer, which the launcher must name (newuser25 item 3)
        details["paged_optimizer"] = True
    if setup.method != "full":
        details.update(lora_rank=setup.lora_rank, lora_dropout=setup.lora_dropout, lora_target_modules=list(setup.lora_targets))
    return details


def paged_reason(setup: TrainingSetup, paged_bytes: int) -> str:
    """What a job's paged optimizer is and where its states are sized (newuser25 item 3): ``paged_bytes`` of them."""
    from generator.sizing.frameworks import job_recipe

    recipe = job_recipe(setup.framework, setup.method, 1, setup.zero_stage, setup.offload_params)
    source = "bitsandbytes' paged AdamW, as the job asks"
    if recipe is not None and recipe.paged_optimizer and setup.optimizer == recipe.optimizer:
        source = f"{setup.framework}'s {recipe.name} recipe: {recipe.optimizer_class}"
    return (
        f"optimizer states paged to host RAM ({source}, bitsandbytes pages them out of GPU memory under pressure): "
        f"{_gib(paged_bytes)} of host RAM per GPU holds them; where they do not all fit beside the step's memory, every one "
        "migrates in and out over the host link each step, timed in the step"
    )


def _split_frameworks_reason(method: str, tp: int, pp: int) -> str:
    """Which frameworks run a layout that splits layers, where the job names none."""
    from generator.sizing.frameworks import frameworks_running

    running = " or ".join(frameworks_running(tp, pp, method))
    what = "split no layers" + (" or run no pipeline" if pp > 1 else "")
    return (
        f"no framework given: TP{tp} x PP{pp} runs under {running} only (the other frameworks {what}); set "
        "training.framework to plan for the one you launch"
    )


def _training_details(
    opt: Option, rest: list[Option], consts: Constants, runs: float | None = None, arch: Architecture | None = None
) -> tuple[dict[str, Any], list[str]]:
    from generator.planner.sharding_settings import sharding_settings
    from generator.planner.training import TrainingShape  # the training modules load only for a training deployment
    from generator.planner.training_report import (
        near_tie_text,
        pipeline_schedule_details,
        pipeline_schedule_text,
        step_split_text,
        training_runner_up,
    )
    from generator.sizing.training_mfu import MFU_BASIS, MFU_BASIS_FP8, fp8_casts_text

    shape = opt.shape
    assert isinstance(shape, TrainingShape)
    setup, mem = shape.setup, shape.memory
    hosts = replica_hosts(opt.hardware.platform, opt.candidate.gpus_per_node, shape.world)
    details = {
        "method": setup.method,
        "optimizer": setup.optimizer,
        "zero_stage": setup.zero_stage,
        "data_parallel": setup.data_parallel,
        "world_size": shape.world,
        "micro_batch_size": setup.micro_batch_size,
        "sequence_length": setup.sequence_length,
        "gradient_checkpointing": setup.checkpointing,
        "offload_optimizer": setup.offload_optimizer,
        "offload_params": setup.offload_params,
        "trainable_params": mem.trainable_params,
        "total_flops": shape.total_flops,
        "hours": round(shape.hours, 2) if shape.hours is not None else None,
        "host_ram_bytes_per_gpu": mem.host_ram_bytes_per_gpu,
        # the hard host RAM of a node beyond the OS reserve (host_os_ram_bytes, said in the host RAM reason, fix154): the
        # checkpoint as it loads, or what is offloaded
        "host_ram_bytes_per_node": opt.needs.host_ram_bytes,
        "checkpoint_bytes_per_node": opt.needs.checkpoint_bytes,
        "checkpoints_kept": consts.checkpoints_kept,
        "checkpoint_write_s": round(
            opt.needs.checkpoint_bytes / consts.checkpoints_kept / (opt.node.nvme_write_gb_per_s * 1e9), 1
        )
        if opt.node.nvme_write_gb_per_s
        else None,
    }
    per = mem.per_gpu
    reasons = [
        f"{setup.method} training with {setup.optimizer}, ZeRO-{setup.zero_stage} over {setup.data_parallel} "
        f"data-parallel GPU(s) x TP{shape.par.tp}",
        f"per GPU: weights {_gib(per.weights)} + gradients {_gib(per.gradients)} + optimizer {_gib(per.optimizer)} + activations "
        f"{_gib(per.activations)} + overhead {_gib(per.overhead)} = {_gib(per.total)} of {_gib(shape.hardware.gpu.memory_bytes)}",
    ]
    if setup.compute_precision == "fp8":
        cache = dict(mem.weight_parts).get("fp8_weight_cache", 0)
        held = f"; the weights hold Transformer Engine's FP8 copies of the linear weights, {_gib(cache)}" if cache else ""
        reasons.append(
            "FP8 training: the linear layers' GEMMs (forward and both backward) timed at the GPU's dense FP8 rate, the LM "
            f"head's at bf16's (neither framework runs it in FP8){fp8_casts_text(setup.framework)}; attention, norms, the "
            f"optimizer and the gradient all-reduce as in bf16{held}"
        )
    if opt.needs.host_ram_text:
        reasons.append(host_ram_reason(consts.host_os_ram_bytes, opt.needs.host_ram_bytes, opt.needs.host_ram_text))
    if setup.offload_params:
        reasons.append(
            f"parameters offloaded: {_gib(mem.host_ram_bytes_per_gpu)} of host RAM per GPU holds what is offloaded (FSDP CPU "
            "offload / ZeRO-3 offload_param); each GPU copies its shard from host RAM before each layer's forward and backward "
            "gathers, counted in the step time where they outlast the compute (the step's CPU offload term)"
        )
    if setup.paged_optimizer:
        reasons.append(paged_reason(setup, mem.paged_state_bytes))
    gpu = shape.hardware.gpu
    if half := fp16_note(gpu.id, gpu.architecture):
        reasons.append(half)
    if stack := stack_note(gpu.id, gpu.vendor, setup.method, setup.framework):
        reasons.append(stack)
    details["tensor_parallel"] = shape.par.tp
    details["pipeline_parallel"] = shape.par.pp
    if hosts > 1:  # launched multi-node (job-spans-hosts); absent means one host
        details["hosts"] = hosts
    details["gradient_accumulation_steps"] = shape.accumulation
    details["global_batch_size"] = shape.global_batch_size
    details.update(_technique_details(setup))
    # the settings a sharded job's sizing relies on that the frameworks leave off (newuser76 item 7)
    if arch is not None:
        sharded_reasons, sharded_details = sharding_settings(arch, setup)
        reasons += sharded_reasons
        details.update(sharded_details)
    if no_flash := flash_attention_note(gpu.id, gpu.architecture, setup.flash_attention):
        # what the launcher runs (its memory sized as FlashAttention's)
        details["flash_attention"] = launches_flash_attention(gpu.architecture, setup.flash_attention)
        reasons.append(no_flash)
    if setup.framework is None and (shape.par.tp > 1 or shape.par.pp > 1):  # newuser23 item 10
        reasons.append(_split_frameworks_reason(setup.method, shape.par.tp, shape.par.pp))
    comm = opt.comm
    if comm is not None:
        step = comm.step
        details["inter_node_link"] = comm.link
        details["comm_between_nodes_s_per_step"] = round(comm.comm_s, 4)
        details["compute_s_per_step"] = round(comm.compute_s, 4)
        details["step_time"] = step.as_dict()
        details["dp_zero_bytes_per_gpu"] = round(step.dp_bytes)
        details["step_links"] = {"data_parallel": comm.link, "pipeline_stages": comm.stage_link, "tensor_parallel": comm.tp_link}
        reasons.append(
            f"layout TP{shape.par.tp} x PP{shape.par.pp} x DP{setup.data_parallel}, ZeRO-{setup.zero_stage}, micro-batch "
            f"{setup.micro_batch_size:,} x {shape.accumulation:,} accumulation step(s) = {shape.global_batch_size:,} "
            f"{'sequence' if shape.global_batch_size == 1 else 'sequences'} per step"
        )
        reasons.append(step_split_text(comm, shape.par.tp, shape.par.pp, setup.data_parallel))
        if step.pipeline_virtual_stages > 1:  # newuser70 item 4: the schedule timed, which Megatron-LM leaves off
            details["pipeline_schedule"] = pipeline_schedule_details(step)
            reasons.append(pipeline_schedule_text(step))
        if opt.candidate.nodes > 1:
            reasons.append(
                f"data parallel across {opt.candidate.nodes} nodes sends {comm.bytes_per_gpu / 1e9:.2f} GB per GPU per step over "
                f"{comm.dp_link_text}: {comm.comm_s:.2f} s between nodes against {comm.compute_s:.2f} s of compute"
                + (" (communication bounds the step)" if comm.dominates else "")
            )
    if shape.hours is not None:
        # the steps run training_goodput of the wall clock (restarts after failures, checkpoints, evaluation)
        goodput = f" ({hours_text(shape.hours * consts.training_goodput, 1)} of steps / {consts.training_goodput:g} goodput)"
        flops = f"{shape.total_flops:.3g} FLOPs"
        if shape.model_flops is not None and shape.total_flops is not None and shape.model_flops < shape.total_flops:
            flops += f" ({shape.model_flops:.3g} model FLOPs, the rest the forward passes activation checkpointing recomputes)"
        reasons.append(
            f"{flops} take {hours_text(shape.hours, 1)}{goodput} on {shape.world} GPU(s) at {shape.step_mfu:.1%} MFU "
            "(model FLOPs: the weights' 6N a token, 4N for LoRA, without attention's, over "
            f"{MFU_BASIS_FP8 if setup.compute_precision == 'fp8' else MFU_BASIS}), communication and pipeline bubble included"
            if shape.step is not None
            else f"{flops} take {hours_text(shape.hours, 1)}{goodput} on {shape.world} GPU(s) at the planned MFU"
        )
    if kept := near_tie_text(shape, opt.candidate.run_hours):
        reasons.append(kept)
    runner = training_runner_up(opt, rest, runs)
    if runner:
        reasons.append(runner)
    return details, reasons


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
            details, reasons, split = _serving_details(loaded, dep, opt, dep_pools, consts)
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
            weights = opt.pieces[0].replica_shape.memory.per_gpu.weights  # what a decode step reads besides the slots
            findings += lora_findings(index, dep.name, details, weights)
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
    findings += model_findings(loaded)
    findings += _unpriced_fabric_findings(wl, pools, deployments) + owned_fabric_findings(wl, pools, deployments)
    findings += slow_fabric_findings(wl, pools, deployments)
    findings += sglang_fraction_findings(loaded, consts, pools, deployments, formats)
    findings += encoder_batch_findings(wl, loaded.models) + engine_setting_findings(loaded, consts, chosen)
    findings += _consumer_gpu_findings(pools, consts, frozenset(wl.prices)) + spread_findings(wl, deployments, pools)
    findings += _geforce_left_out_findings(wl, consts) + karpenter_left_out_findings(wl)  # newuser81 item 1
    findings += zone_left_out_findings(wl)  # fix164
    findings += packing_findings(deployments, pools)
    findings += missing_gpu_findings(wl, chosen, ruled_out)
    findings += price_region_findings(wl, [h.platform.id for h in allowed_hardware(wl)]) + pool_region_findings(wl, pools)
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


def _inputs(dep: InferenceDeployment | TrainingDeployment, given: Any) -> dict[str, Any]:
    """The ``inference`` or ``training`` fields the workload gives ``dep`` off their defaults (``slo.tpot_ms``: 50).

    ``given``: the deployment's mapping as the file has it; a field the loader derived (a batch job's rate from its
    requests and deadline) is not one the workload gave (review76 item 7).
    """
    kind = "inference" if isinstance(dep, InferenceDeployment) else "training"
    written = given.get(kind) if isinstance(given, dict) else None
    fields = given_fields(dep.inference if isinstance(dep, InferenceDeployment) else dep.training)
    return {k: v for k, v in fields.items() if _written(written, k.split("."))}


def _given(loaded: LoadedWorkload, index: int) -> Any:
    """Deployment ``index``'s mapping as the workload file has it (None where the document holds none)."""
    deployments = loaded.document.data.get("deployments") if isinstance(loaded.document.data, dict) else None
    return deployments[index] if isinstance(deployments, list) and index < len(deployments) else None


def _written(data: Any, path: list[str]) -> bool:
    """Whether the file's mapping ``data`` holds the dotted field ``path`` (``slo.tpot_ms``)."""
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return False
        data = data[key]
    return True


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


def _shares_left_empty(
    wl: Workload, index: int, objective: str, chosen: Option, rest: list[Option], pools: list[Pool]
) -> tuple[str, Finding] | None:
    """Why a service stays in shares that leave some empty, where whole GPUs on the same purchase tie and sustain more.

    newuser69 item 4: one time-sliced replica in half an A100 (3.64 req/s, gpu_memory_utilization 0.45) on a GPU no
    other service uses, at the $2,681/month of the whole A100 (12.92 req/s), and nothing said why. The planner keeps the
    sharing asked on the objective's tie (:func:`~generator.planner.candidates.ranking_key`, fuzz14 item 6): said, with
    both figures and how to take whole GPUs. None where the shares are filled, the pool holds other services (they may
    fill them), or no layout on whole GPUs ties it.
    """
    c = ranking_candidate(chosen)
    sharing = planned_sharing(wl, wl.deployments[index])
    if sharing is None or chosen.parts or not c.shares_per_gpu or c.run_hours is not None or len(pools) != 1:
        return None
    pool = pools[0]
    shares = pool.nodes * pool.node.gpus * c.shares_per_gpu
    empty = shares - c.replicas
    if pool.deployments != (wl.deployments[index].name,) or empty <= 0:
        return None
    bought = purchase(chosen)
    whole = next(
        (
            o
            for o in rest
            if not o.candidate.shares_per_gpu
            and not o.parts
            and _buys(o, bought, chosen.candidate.gpus_bought)
            and ties_before_headroom(objective, c, ranking_candidate(o))
            and round(sustained_rps(o), 2) > round(sustained_rps(chosen), 2)
        ),
        None,
    )
    if whole is None:
        return None
    name, field = wl.deployments[index].name, sharing_field(wl, index)
    figures = (
        f"{_replicas_rate(chosen)} within the SLOs in its {shares} shares, {empty} of them empty, against "
        f"{_replicas_rate(whole)} on whole GPUs ({whole.candidate.summary}) at the same {cost_text(whole.candidate)}"
    )
    why = (
        f"kept in the {sharing_text(sharing)} shares asked on the tie on {objective} with whole GPUs (the sharing asked "
        f"comes first on a tie): {figures}"
    )
    finding = Finding(
        "info",
        "gpu-sharing-shares-empty",
        f"deployment {name} runs in {sharing_text(sharing)} shares that no other service fills: {figures}. Its "
        "replicas are sized and started against their shares (memory, and the compute and bandwidth of each), so the "
        f"GPU's rest stays idle: give it gpu_sharing: {{strategy: none}} for "
        "whole GPUs at this price, or put another service of one GPU under the same sharing to fill them",
        field,
    )
    return why, finding


def _kept_off_shares(wl: Workload, index: int, opt: Option, pools: list[str], blocked: Sequence[Blocked]) -> list[Finding]:
    """Where a service's replicas of one GPU keep whole GPUs though the workload shares them: why a share cannot hold them.

    newuser40 item 3: a model too big for its MIG instance was rendered into one, where it could not start.
    """
    sharing = planned_sharing(wl, wl.deployments[index])
    out = []
    for part, pool in zip(opt.pieces, pools, strict=True):
        if sharing is None or part.candidate.shares_per_gpu or part.replica_shape.par.gpus > 1:
            continue
        # the share is the GPU's, whichever server holds it: the reason recorded on the chosen server, with the GPU
        # alone named (fuzz32 item 6: the first server recorded was named, one the plan did not choose)
        small = [b for b in blocked if b.code == SHARE_TOO_SMALL and b.gpu_id == part.gpu_id]
        if not small:
            continue
        chosen = next((b for b in small if b.platform_id == part.hardware.platform.id), small[0])
        why = chosen.why
        fix = "a larger MIG profile" if sharing.strategy == "mig" else "fewer replicas_per_gpu"
        out.append(
            Finding(
                "warning",
                "gpu-share-too-small",
                f"deployment {wl.deployments[index].name} keeps whole GPUs in pool {pool}, without {sharing.strategy}: "
                f"no layout of it is feasible in its share ({why}); for it to share GPUs, choose {fix}, a shorter "
                "max_context_tokens, a lower precision or looser SLOs",
                f"deployments[{index}]",
            )
        )
    return out


def _chain_runs_per_month(wl: Workload, sequenced: Mapping[int, Sequenced], job: Sequenced) -> float | None:
    """The runs a month every job of ``job``'s sequence gives, where all give the same (:mod:`chain_runs`); else None."""
    runs = [
        d.training.runs_per_month if isinstance(d := wl.deployments[i], TrainingDeployment) else None
        for i, s in sequenced.items()
        if s.first == job.first
    ]
    return common_runs_per_month(runs)


def _sequenced(wl: Workload, chosen: list[tuple[int, Option, list[Option]]]) -> dict[int, Sequenced]:
    """The jobs of chains chosen (``run_after``), by deployment index; empty where the workload has none."""
    if not any(opt.sequence for _, opt, _ in chosen):
        return {}
    from generator.planner.training_chain import sequenced_jobs

    return sequenced_jobs(wl, chosen)


def _add_undrawn_contract(
    details: dict[str, Any], undrawn: Mapping[str, float], pools: Sequence[str], owned: bool = False
) -> ContractReason | None:
    """A deployment's own pools' share of their racks' undrawn contracted kW (:mod:`generator.planner.colocation`).

    Added to its month and, for a training job, to its run (its hours' share of that month, as ``usd_per_job`` is
    otherwise); returns the figures of the reason saying so (newuser74 item 7: the fleet total charged it, the choice's
    figures did not), or None where it carries no share. ``owned``: a training job on owned servers, whose run is the
    energy it adds (fix89): the contract is in its month, not its run (fix150).
    """
    usd = sum(undrawn.get(name, 0.0) for name in pools)
    if not usd:
        return None
    for key in ("opex_usd_per_month", "usd_per_month"):
        if details.get(key) is not None:
            details[key] = round(details[key] + usd, 2)
    run = details.get("usd_per_job")
    hours = details.get("hours")
    if run is not None and isinstance(hours, int | float) and hours > 0 and not owned:
        details["usd_per_job"] = round(run + usd * hours / HOURS_PER_MONTH, 2)
    return _contract_figures(usd, details, run, "its pools' share", owned)


def _contract_figures(
    usd: float, details: Mapping[str, Any], run_without: float | None, whose: str, owned: bool
) -> ContractReason:
    """The figures of the reason for a share of the racks' undrawn contracted kW (``usd`` a month), ``details`` with it."""
    hours = details.get("hours")
    hours = float(hours) if isinstance(hours, int | float) else None
    return ContractReason(usd, details.get("usd_per_month"), details.get("usd_per_job"), run_without, hours, whose, owned)


def _sequence_turn(
    wl: Workload, job: Sequenced, pool: Pool, details: dict[str, Any], undrawn_usd: float = 0.0
) -> tuple[str, ContractReason | None]:
    """A chain job's turn into its details, and its reason; on servers paid by the month, the chain's cost once.

    ``undrawn_usd``: the chain's pool's share of its racks' undrawn contracted kW a month, which the jobs split by their
    hours as they split the servers' cost (newuser84 item 1); the figures of the job's contract reason where it has one.
    """
    from generator.planner.training_chain import turn

    said = turn(wl, job, pool.name)
    details.update(said.details())
    if billed_per_run(wl.hardware.provider, job.own.candidate):
        return said.reason(pool.nodes), None
    chain = _cost_details(job.chain, details["objective_used"], wl.hardware.provider)
    details.update(chain_share(job, pool, said, with_undrawn(chain, undrawn_usd), undrawn_usd))
    if not undrawn_usd:
        return said.reason(pool.nodes), None
    without = chain_share(job, pool, said, chain)  # its share without the undrawn kW: the reason's figures
    month, before = details.get("usd_per_month"), without.get("usd_per_month")
    if month is None or before is None:
        return said.reason(pool.nodes), None
    whose = "its hours' share of its pool's share"
    owned = job.chain.candidate.owned_runs is not None
    return said.reason(pool.nodes), _contract_figures(month - before, details, without.get("usd_per_job"), whose, owned)


def _choice_reason(
    objective: str,
    opt: Option,
    rest: list[Option],
    co_located: bool,
    tie: str | None = None,
    runs: float | None = None,
    over: Mapping[int, str] | None = None,
) -> str:
    """Why this option won (``tie``: how it beat an equal layout), with its runner-up.

    A co-located option's figures are those of a pool of its own; ``runs``: a training job's runs a month, where its
    servers are its own (:func:`~generator.planner.tco.cost_text`); ``over``: the fleet limit each of ``rest`` alone
    breaks, by its identity (:func:`alone_over_limit`).
    """
    c = opt.candidate
    alone, runner = c.usd_per_hour, (rest[0].candidate.usd_per_hour if rest else None)
    # an unpriced layout is never the cheapest alone: it was taken for the fleet (review22 item 11)
    cheaper_alone = objective == "cost" and co_located and runner is not None and (alone is None or runner < alone)
    # a co-located choice dearer alone than its runner-up is the fleet's choice, whose reason follows (newuser14 item 6)
    chosen = "chosen for the fleet, not as a pool of its own" if cheaper_alone else f"chosen by {objective}"
    text = f"{chosen}: {c.summary}" + (" (figures as a pool of its own)" if co_located else "")
    if c.usd_per_hour is not None:
        text += f", {cost_text(c, 'sequence' if opt.sequence else 'job', runs)}"
    had = gpus_acquired(opt.hardware.platform.provider, c)
    text += (
        f", {had} ({c.idle_gpus} idle), {c.nodes} server(s), {c.power_w / 1000:.1f} kW "
        f"({c.power_compared_w / 1000:.1f} kW summed from components, the basis compared)"
    )
    text += f"; {tie}" if tie else ""
    text += _one_run_basis(objective, opt, rest)
    if rest:
        r = rest[0].candidate
        cost = cost_text(r, "sequence" if rest[0].sequence else "job", runs)
        had = gpus_acquired(rest[0].hardware.platform.provider, r)
        broken = (over or {}).get(id(rest[0]))
        text += f"; runner-up {r.summary} ({cost}, {had}, {r.idle_gpus} idle, {r.power_w / 1000:.1f} kW"
        text += f"; over {broken})" if broken else ")"
    return text


def _one_run_basis(objective: str, opt: Option, rest: list[Option]) -> str:
    """The basis a job's layouts rented per run were ranked on beside layouts paid by the month, where it gives no runs.

    One run a month (:func:`~generator.planner.candidates.ranking_candidate`); "" where the job gives its
    ``runs_per_month``, or its layouts are all rented per run or all paid by the month. m74c item 1: every layout of a
    job is ranked by its month; without the job's runs a month a rented run counts as one, the month a budget holds it
    to, so a "$28 per run" layout ranked before one at "$24 per run as its hours' share of $630/month" says why.
    """
    if objective != "cost" or opt.runs_per_month is not None or not opt.candidate.run_hours:
        return ""
    ranked = [o for o in (opt, *rest) if o.candidate.usd_per_hour is not None]
    # fix89: a layout on owned servers is charged its runs' energy, one run where the job gives no runs a month
    per_run = [billed_per_run(o.hardware.platform.provider, o.candidate) or o.candidate.owned_runs is not None for o in ranked]
    if not any(per_run) or all(per_run):
        return ""
    owned = ", on owned servers at one run's energy" if any(o.candidate.owned_runs is not None for o in ranked) else ""
    return (
        f"; ranked by the month: a layout rented per run at one run a month (the job gives no runs_per_month){owned}, a "
        "layout on servers paid by the month at their month"
    )


def _option_pools(opts: Sequence[Option]) -> list[Pool]:
    """One pool of each part of ``opts`` (each on servers of its own), as the racks count them (:func:`alone_over_limit`)."""
    pools: list[Pool] = []
    for part in (part for opt in opts for part in opt.pieces):
        c = part.candidate
        name = str(len(pools))
        pools.append(Pool(name, part.node, c.nodes, (), 0, 0, None, None, (), (), owned_nodes=c.owned_nodes, rented=c.rented))
    return pools


def _colocation_groups(
    chosen: Sequence[tuple[int, Option]], sequenced: Mapping[int, Sequenced] | None = None
) -> dict[tuple[str, str, int, str], list[tuple[int, Option]]]:
    """The deployments' parts by the servers they may share: (platform, GPU, GPUs a server, group) -> (index, part).

    Inference replicas that divide a server's GPUs (:attr:`~generator.planner.option.Option.shares_servers`) of one
    kind group together; anything else is a group of its own deployment (``solo-<index>``: a chain's jobs, in
    ``sequenced``, one group of its first job's).
    """
    groups: dict[tuple[str, str, int, str], list[tuple[int, Option]]] = {}
    for index, opt in chosen:
        for part in opt.pieces:  # a split deployment's parts go to pools of their own server kinds
            first = sequenced[index].first if sequenced and index in sequenced else index
            # replicas in shares of GPUs (gpu_sharing) fill nodes of their own: a node's GPUs are all whole or all
            # shared one way (a pool has one device-plugin config or MIG partition)
            kind = f"{SHARED_GROUP} {part.sharing_key}" if part.candidate.shares_per_gpu else "inference"
            kind = kind if part.shares_servers else f"solo-{first}"
            # spot capacity is a node group of its own: a spot and an on-demand deployment never share a pool
            kind += SPOT_GROUP if part.hardware.spot else ""
            groups.setdefault((*part.server_kind, kind), []).append((index, part))
    return groups


def _pool_units(
    wl: Workload, groups: Mapping[tuple[str, str, int, str], list[tuple[int, Option]]]
) -> list[tuple[list[tuple[int, Option]], int]]:
    """The pools (members, nodes) the groups of :func:`_colocation_groups` make, in the order :func:`build_plan` names them."""
    units: list[tuple[list[tuple[int, Option]], int]] = []
    for (_, _, per_node, kind), members in sorted(groups.items()):
        if kind.startswith("solo-") and len(members) > 1:  # a chain: its jobs in turn on the servers the widest needs
            units.append((members, max(o.candidate.nodes for _, o in members)))
            continue
        units += _group_units(wl, members, per_node)
    return units


def _unit_pools(units: Sequence[tuple[Sequence[tuple[int, Option]], int]]) -> list[Pool]:
    """A pool of each unit of :func:`_pool_units`, as the racks count them (:func:`racks_needed`).

    A pool of one part is that part's servers; a pool its members share has the unit's nodes, each drawing the most
    of its members' servers (the node :func:`build_plan` configures holds all of their needs), the owned servers among
    them up to its nodes, and stands in no rack of the plan only where every member's servers are rented.
    """
    pools: list[Pool] = []
    for members, nodes in units:
        parts = [part for _, part in members]
        node = max((part.node for part in parts), key=lambda n: n.power_w)
        owned = min(nodes, sum(part.candidate.owned_nodes for part in parts))
        rented = parts[0].candidate.rented if all(part.candidate.rented for part in parts) else None
        name = str(len(pools))
        pools.append(Pool(name, node, nodes, (), 0, 0, None, None, (), (), owned_nodes=owned, rented=rented))
    return pools


def _racks_of(wl: Workload, pools: list[Pool]) -> int:
    """The racks ``pools``' servers pack into, as the fleet's are (:func:`~generator.planner.racks.pack_racks`)."""
    hw = wl.hardware
    feeds = rack_feeds(hw.rack_circuits) if hw.rack_circuits is not None else None
    return len(pack_racks(pools, hw.rack_power_kw, hw.rack_units_reserved, feeds, hw))


def racks_needed(wl: Workload, chosen: Sequence[tuple[int, Option]]) -> int:
    """The racks the servers of the options ``chosen`` (deployment index, option) need together, pooled as the plan pools them.

    What a search under ``hardware.max_racks`` holds each choice to beside those made before it (newuser80 item 1).
    Services whose replicas may share servers share them where that saves servers, as :func:`build_plan` pools them
    (:func:`_colocation_groups`, :func:`_pool_units`): counted each on servers of its own, a fleet of two 1-GPU
    services that one 8-GPU server holds needed two servers' racks (fix132), and the search under the limit never
    planned it.
    """
    seen: set[int] = set()
    unique: list[tuple[int, Option]] = []
    for index, opt in chosen:  # a chain's jobs hold one option: its servers once
        if id(opt) not in seen:
            seen.add(id(opt))
            unique.append((index, opt))
    return _racks_of(wl, _unit_pools(_pool_units(wl, _colocation_groups(unique))))


def alone_over_limit(wl: Workload, opt: Option) -> str | None:
    """The limit of the whole fleet ``opt`` alone breaks, as its runner-up line says it (fuzz34 item 3); None: none.

    max_nodes, the monthly budget and the capex cap rule such an option out before it is ranked
    (:func:`~generator.planner.candidates.broken_limits`); racks are packed once the fleet is assembled, so a runner-up
    on more racks than ``max_racks`` was listed beside the choice, cheaper and with no word why (2 owned DGX H100 of
    10.2 kW each under max_racks 1 of 20 kW; the inventory-free finding said it, the runner-up did not). Its servers are
    packed as the fleet's are (:func:`~generator.planner.racks.pack_racks`: power, height, circuits).
    """
    hw = wl.hardware
    if hw.provider != "baremetal" or hw.max_racks is None:
        return None
    pools = _option_pools([opt])
    racks = _racks_of(wl, pools)
    if racks <= hw.max_racks:
        return None
    servers = sum(racked_nodes(pool) for pool in pools)
    return (
        f"hardware.max_racks: its {servers} server{'' if servers == 1 else 's'} alone need {racks} racks of "
        f"{hw.rack_power_kw:g} kW, {hw.max_racks} allowed"
    )


def _owned_idle_while_bought(
    wl: Workload, key: tuple[str, str, int], entry: dict[str, Any], pools: list[Pool], consts: Constants
) -> list[Finding]:
    """A warning where owned servers of a kind are left free while the fleet buys more of that kind (fuzz34 item 4).

    What the free ones cost whether they run or not (their ``prices:`` rate, else their colocation where racked), which
    the fleets were compared with (:func:`~generator.planner.idle_owned_usd_per_month`) but the plan's monthly figure
    leaves out, is said too.
    """
    bought = [p for p in pools if (p.node.platform_id, p.node.gpu_id, p.node.gpus) == key and p.nodes > p.owned_nodes]
    if not bought:
        return []
    count = sum(p.nodes - p.owned_nodes for p in bought)
    up_front = [p.capex_usd for p in bought if p.capex_usd is not None]  # a pool's capex is its bought servers'
    capex = f" (${sum(up_front):,.0f} capex)" if len(up_front) == len(bought) else ""
    hosts = f" ({', '.join(entry['free_hosts'])})" if entry["free_hosts"] else ""
    text = (
        f"{entry['free']} of {entry['owned']} owned {key[0]} server(s) ({key[2]} x {key[1]}){hosts} are left free "
        f"while the plan buys {count} more {key[0]}{capex} in pool(s) {', '.join(p.name for p in bought)}"
    )
    text += free_cost_clause(wl, key, owned_idle_usd(wl, key, entry["free"], lambda: consts))
    text += "; check why the inventory-free finding says they are not used, or set hardware.buy: false"
    return [Finding("warning", "owned-idle-while-bought", text, "hardware.inventory")]


def _place_on_inventory(
    wl: Workload,
    pools: list[Pool],
    findings: list[Finding],
    ruled_out: dict[str, list[Blocked]],
    feasible_on: dict[ServerKey, set[str]],
    consts: Constants,
) -> tuple[list[Pool], list[dict[str, Any]]]:
    """Owned host names onto the pools that use owned servers; what each owned group holds, what stays free and why.

    ``feasible_on``: by server kind, the deployments that had a feasible layout on it (the fleet chose another).
    """
    out = list(pools)
    report = []
    not_bought = {(h.platform.id, h.gpu.id): h.not_bought for h in allowed_hardware(wl)}
    order = {d.name: i for i, d in enumerate(wl.deployments)}
    for group in owned_groups(wl):
        hosts = list(group.hosts)  # Linux host names: a rack-scale system's are its compute trays, in system order
        per_system = group.platform.hosts
        used = 0
        users: set[str] = set()  # deployments on this group's servers
        # hosts go to the pools in the order of their deployments in the workload, which a deployment added after them
        # does not move (newuser66 item 7: a re-index job added at the end took r760-01 from the LoRA job's pool)
        for k in sorted(range(len(out)), key=lambda k: min(order.get(d, len(order)) for d in out[k].deployments or ("",))):
            pool = out[k]
            if (pool.node.platform_id, pool.node.gpu_id, pool.node.gpus) != group.key or not pool.owned_nodes:
                continue
            take = min(pool.owned_nodes, group.count - used)
            owned_hosts = tuple(hosts[used * per_system : (used + take) * per_system])
            out[k] = pool._replace(owned_nodes=take, owned_hosts=owned_hosts)
            used += take
            if take:
                users.update(pool.deployments)
        free = group.count - used
        free_hosts = hosts[used * per_system :]
        report.append(
            {
                "platform": group.platform.id,
                "gpu": group.gpu.id,
                "gpus_per_server": group.gpus_per_node,
                "owned": group.count,
                "used": used,
                "free": free,
                "free_hosts": free_hosts,
                "not_bought": not_bought.get(group.key[:2]),
            }
        )
        reason = not_bought.get(group.key[:2])
        if reason and not group.platform.custom and wl.hardware.buy:  # buy: false says it of every owned kind
            findings.append(
                Finding(
                    "info",
                    "inventory-not-bought",
                    f"owned {group.platform.id} ({group.gpus_per_node} x {group.gpu.id}): {used} of {group.count} used; "
                    f"owned servers are always usable, but {reason}",
                    "hardware.inventory",
                )
            )
        if free:
            feasible = feasible_on.get(group.key, set())
            why = why_left_free(group.gpu.id, group.platform.id, ruled_out, users, feasible, build=owned_build(report[-1]))
            # newuser64 item 10: owned servers the site's racks cannot power or hold are a facilities problem, not a note
            unracked = any(
                b.code in (RACK_POWER, RACK_HEIGHT) and (b.gpu_id, b.platform_id) == (group.gpu.id, group.platform.id)
                for found in ruled_out.values()
                for b in found
            )
            said = left_free_message(report[-1], why)
            findings.append(Finding("warning" if unracked else "info", "inventory-free", said, "hardware.inventory"))
            findings += _owned_idle_while_bought(wl, group.key, report[-1], out, consts)
    out = [pool._replace(build_assumed=build_assumed(wl, pool)) for pool in out]
    findings += owned_build_findings(wl, out)
    for pool in out:
        bought = pool.nodes - pool.owned_nodes
        circuit = wl.hardware.wall_circuit
        outlet = wall_circuit_advice(f"pool {pool.name}: the owned {pool.node.platform_id}", pool.node.power_w, circuit)
        if pool.owned_nodes and pool.node.kind == "workstation" and outlet is not None:
            # an owned workstation stays in its office or home (tco.in_colocation): a wall outlet feeds it (newuser27 item 8)
            findings.append(Finding("warning", "wall-circuit", outlet, "hardware.inventory"))
        home = bought_on_outlet(circuit is not None, consts.colocation_usd_per_kw_month)
        if bought and not pool.owned_nodes and pool.rented is None and pool.node.kind == "workstation" and home:
            on_outlet = wall_circuit_advice(f"pool {pool.name}: the {pool.node.platform_id} {home},", pool.node.power_w, circuit)
            if on_outlet is not None:
                where = "hardware.wall_circuit" if circuit is not None else "constants.colocation_usd_per_kw_month"
                findings.append(Finding("warning", "wall-circuit", on_outlet, where))
        if pool.owned_nodes and bought:
            findings.append(
                Finding(
                    "info",
                    "inventory-shortfall",
                    f"pool {pool.name}: {pool.owned_nodes} owned server(s) used, {bought} more to buy",
                    "hardware.inventory",
                )
            )
    return out, report


def _group_units(wl: Workload, members: list[tuple[int, Option]], per_node: int) -> list[tuple[list[tuple[int, Option]], int]]:
    """The pools (members, nodes) one co-location group makes.

    Members naming a pool (a deployment's ``pool`` field) form that pool, however few servers sharing saves; members
    naming none join the group's one named pool, or else share servers where that saves one, as before the field.
    """
    named: dict[str, list[tuple[int, Option]]] = {}
    for member in members:
        if (pool := wl.deployments[member[0]].pool) is not None:
            named.setdefault(pool, []).append(member)
    rest = [m for m in members if wl.deployments[m[0]].pool is None]
    if len(named) == 1 and rest:  # a service added to the servers of a named pool joins it (newuser23 item 3)
        named = {pool: list(members) for pool in named}
        rest = []
    units = [(group, _servers_apart_and_together(group, per_node)[1]) for group in named.values() if len(group) > 1]
    units += [(group, group[0][1].candidate.nodes) for group in named.values() if len(group) == 1]
    if rest:
        separate, merged = _servers_apart_and_together(rest, per_node)
        together = len(rest) > 1 and merged < separate
        units += [(rest, merged)] if together else [([m], m[1].candidate.nodes) for m in rest]
    return units


def _named_pool_reasons(
    wl: Workload, groups: dict[tuple[str, str, int, str], list[tuple[int, Option]]]
) -> dict[tuple[int, ServerKey], str]:
    """Where a deployment's servers are chosen by its pool's name (``pool``), whom it shares them with, and why."""
    out: dict[tuple[int, ServerKey], str] = {}
    for (platform, gpu, per_node, kind), members in groups.items():
        if not kind.startswith("inference") or all(wl.deployments[i].pool is None for i, _ in members):
            continue  # a pool of its own (a training job, whole servers a replica) keeps the reason it has one
        for unit, nodes in _group_units(wl, members, per_node):
            pool = unit_pool(wl, unit)
            for index, _ in unit if pool is not None else ():
                others = [wl.deployments[i].name for i, _ in unit if i != index]
                out[(index, (platform, gpu, per_node))] = (
                    f"in pool {pool} with {', '.join(others)} on {nodes} {per_node}-GPU server(s): deployments naming a "
                    "pool, and those naming none on its servers, share them"
                    if others
                    else f"alone in pool {pool}: no other deployment that may share servers runs on its {per_node}-GPU "
                    f"{platform} ones"
                )
    return out


def _servers_apart_and_together(members: list[tuple[int, Option]], per_node: int) -> tuple[int, int]:
    """Servers the members of one co-location group take each in its own pool, and all in one."""
    separate = sum(o.candidate.nodes for _, o in members)
    merged = math.ceil(sum(o.gpus_used for _, o in members) / per_node)
    return separate, max([merged, *(spread_floor(o) for _, o in members)])  # a spread service keeps its nodes


def _colocation_reasons(
    wl: Workload, groups: dict[tuple[str, str, int, str], list[tuple[int, Option]]]
) -> dict[tuple[int, ServerKey], str]:
    """Whether each deployment (each part of a split one, by its server kind) shares its servers with others, and why."""
    out: dict[tuple[int, ServerKey], str] = {}
    names = {i: wl.deployments[i].name for members in groups.values() for i, _ in members}
    for (platform, gpu, per_node, kind), members in groups.items():
        at = (platform, gpu, per_node)
        separate, merged = _servers_apart_and_together(members, per_node)
        for index, opt in members:
            others = [names[i] for i, _ in members if i != index]
            same_servers = sorted(
                names[i]
                for (p, g, n, _), group in groups.items()
                if (p, g, n) == (platform, gpu, per_node)
                for i, _ in group
                if i != index and not others
            )
            if others and merged < separate:
                out[(index, at)] = (
                    f"co-located with {', '.join(others)}: together they fit {merged} {per_node}-GPU server(s) "
                    f"instead of {separate} apart"
                )
            elif others:
                out[(index, at)] = (
                    f"not co-located with {', '.join(others)}: sharing servers would not save one ({merged} either way)"
                )
            elif not isinstance(opt.shape, ReplicaShape):  # a training job
                considered = f" (considered sharing with {', '.join(same_servers)} on the same servers)" if same_servers else ""
                out[(index, at)] = (
                    f"not co-located{considered}: a training job gets its own pool so its memory, interconnect and power "
                    "peaks cannot break an inference service's latency targets"
                )
            elif not kind.startswith("inference"):
                gpus = opt.replica_shape.par.gpus
                held = (
                    f"spans {gpus // per_node} of the {per_node}-GPU {platform} servers"
                    if gpus > per_node
                    else f"leaves {per_node % gpus} GPU(s) of a {per_node}-GPU {platform} server over"
                )
                out[(index, at)] = f"not co-located: each replica ({gpus} GPUs) {held}, so it takes whole servers"
            elif apart := sorted(
                names[i]
                for (p, g, n, k), group in groups.items()
                if (p, g, n) == at and k.startswith("inference") and k.endswith(SPOT_GROUP) != kind.endswith(SPOT_GROUP)
                for i, _ in group
                if not others
            ):
                how = "runs on spot capacity, they on demand" if kind.endswith(SPOT_GROUP) else "runs on demand, they on spot"
                out[(index, at)] = (
                    f"not co-located with {', '.join(apart)}: it {how} (capacity_type), and a pool is one node group of "
                    "one capacity type"
                )
            elif same_servers and kind.startswith(SHARED_GROUP):
                out[(index, at)] = (
                    f"not co-located with {', '.join(same_servers)}: its GPUs are shared between pods (gpu_sharing), "
                    "theirs are whole or shared otherwise, and a node's GPUs have one sharing config"
                )
            elif same_servers:
                out[(index, at)] = f"not co-located with {', '.join(same_servers)}: they run a different kind of work"
            else:
                out[(index, at)] = f"not co-located: no other deployment runs on {per_node}-GPU {platform} servers with {gpu}"
    return out


def _cost_details(opt: Option, objective: str, provider: str) -> dict[str, Any]:
    """Capex, opex, whole servers and idle GPUs of the chosen option; a training job's cost per job.

    A training job on rented servers is paid while it runs: it has no monthly figure (the fleet's
    ``usd_per_month`` leaves it out too), only its rate (``usd_per_hour``), hours and cost per job.
    """
    c = opt.candidate
    out: dict[str, Any] = {
        "objective_used": objective,
        "gpus_bought": c.gpus_bought,
        "idle_gpus": c.idle_gpus,
        "servers": c.nodes,
        "capex_usd": round(c.capex_usd) if c.capex_usd is not None else None,
    }
    if billed_per_run(provider, c):
        out["usd_per_hour"] = round(c.usd_per_hour, 2) if c.usd_per_hour is not None else None
    else:
        out["opex_usd_per_month"] = round(c.opex_usd_per_month, 2) if c.opex_usd_per_month is not None else None
        out["usd_per_month"] = round(c.usd_per_month, 2) if c.usd_per_month is not None else None
    run = run_usd(c)
    if run is not None and c.run_hours:
        out["usd_per_job"] = round(run, 2)
        out["gpu_hours_per_job"] = round((c.gpus + c.idle_gpus) * c.run_hours, 1)  # every GPU of its servers, owned or not
    return out


def _token_cost(
    name: str, spec: InferenceSpec, opt: Option, details: dict[str, Any], *, cloud: bool = False, pools: Sequence[Pool] = ()
) -> tuple[dict[str, float], str] | None:
    """What a million tokens cost a service: at its rate, and at what its replicas sustain.

    Per million output tokens, input tokens and both together for a generating service, per million input tokens for
    a pooling one (:func:`generator.planner.peak.token_kinds`; newuser65 item 5). Where its rate varies
    (``average_requests_per_second``) at its average first, beside the peak's
    (:func:`generator.planner.peak.token_cost_at_average`; ``cloud``: its servers are rented by the hour, in ``pools``).

    Its month's cost (its share of a co-located pool) over the tokens it serves in a month, and over those its
    replicas serve at their planned rate (newuser34 item 8: a capacity planner compares GPUs by it).
    None for a service with no price.
    """
    usd = details.get("usd_per_month")
    if usd is None:
        return None
    _, words, tokens = token_kinds(spec)[0]
    if spec.job:  # a batch job: its month over the tokens its runs serve (its servers' hours are its runs')
        made = (spec.requests_per_run or 0) * runs_a_month(spec)
        month_rps = made / (HOURS_PER_MONTH * 3600)  # the runs' requests spread over the month
        figures = token_cost_figures(spec, usd, month_rps)
        text = (
            f"costs {usd_text(per_million_tokens(usd, month_rps, tokens))} per million {words}: its month over the "
            f"{figure_text(made)} requests of {tokens:,} tokens its runs serve"
        )
        if others := other_tokens_text(spec, figures, ""):
            text += f"; {others}"
        return figures, text
    capacity = sustained_rps(opt)
    figures = token_cost_figures(spec, usd, spec.requests_per_second)
    figures.update(token_cost_figures(spec, usd, capacity, "_at_capacity"))
    at_rate, at_capacity = per_million_tokens(usd, spec.requests_per_second, tokens), per_million_tokens(usd, capacity, tokens)
    # two places, three figures below 1 req/s (newuser73 item 10: 0.035 req/s read "0.00")
    held = f"{capacity:,.2f}" if capacity >= 1 else f"{capacity:.3g}"
    # the wait for a place said where it holds the replicas below their rates' sum, as the chosen-by line says it
    # (newuser79 item 9: "one replica sustains 3.11 req/s" and "$28.83 at the 2.84 req/s its replicas sustain")
    less = ", less the wait for a place in the batch" if round(capacity, 2) < round(replicas_rps(opt), 2) else ""
    sustained = f"({usd_text(at_capacity)} at the {held} req/s its replicas sustain {held_to(spec, 'their')}{less})"
    if spec.average_requests_per_second is not None:  # the rate varies: the average's figure first, the peak's beside it
        peak = f"{usd_text(at_rate)} at the {figure_text(spec.requests_per_second)} req/s peak it is sized for {sustained}"
        floor = details.get("usd_per_month_floor")
        held = held_text(name, spec, opt, details.get("replicas_at_average"), pools)
        average, text = token_cost_at_average(spec, usd, floor, peak, cloud=cloud, held=held)
        return {**figures, **average}, text
    text = (
        f"costs {usd_text(at_rate)} per million {words} at {figure_text(spec.requests_per_second)} req/s of "
        f"{tokens:,} tokens {sustained}"
    )
    if others := other_tokens_text(spec, figures, ""):  # at the asked rate, not the sustained one just named (newuser72 item 8)
        text += f"; at {figure_text(spec.requests_per_second)} req/s, {others}"
    return figures, text


def _average_details(
    spec: InferenceSpec, index: int, opt: Option, pools: list[Pool], at_average: Mapping[str, PoolAtAverage]
) -> dict[str, Any]:
    """A service's figures at its average rate: the rate, the replicas it needs, and on a cloud its month's floor."""
    out: dict[str, Any] = {"average_requests_per_s": spec.average_requests_per_second}
    if (replicas := average_replicas(spec, opt)) is not None:
        out["replicas_at_average"] = replicas
    if (floor := floor_share_usd_per_month(pools, index, at_average)) is not None:
        out["usd_per_month_floor"] = floor
    return out


def _pool_share(pool: Pool, gpus: Fraction, in_use: Mapping[str, Fraction]) -> dict[str, Any]:
    """A co-located deployment's cost: its share of the pool by the GPUs it uses (the shares add up to the pool).

    The servers, GPUs bought and idle GPUs are the pool's, which the deployments share. ``gpus``: the deployment's
    GPUs there, a share of one a replica where the pool's GPUs are shared; ``in_use``: every deployment's, by pool.
    """
    used = in_use.get(pool.name) or Fraction(pool.nodes * pool.node.gpus - pool.idle_gpus)
    share = float(gpus / used) if used else 0.0
    usd = None if pool.usd_per_hour is None else pool.usd_per_hour * HOURS_PER_MONTH
    return {
        "cost_share": f"{gpus} of the {used} GPUs in use in pool {pool.name}",
        "capex_usd": None if pool.capex_usd is None else round(pool.capex_usd * share),
        "opex_usd_per_month": None if pool.opex_usd_per_month is None else round(pool.opex_usd_per_month * share, 2),
        "usd_per_month": None if usd is None else round(usd * share, 2),
        "servers": pool.nodes,
        "gpus_bought": (pool.nodes - pool.owned_nodes) * pool.node.gpus,
        "idle_gpus": pool.idle_gpus,
    }


#: The cost figures a split service's parts add up to.
_SUMMED = ("capex_usd", "opex_usd_per_month", "usd_per_month", "servers", "gpus_bought", "idle_gpus")


def _split_share(opt: Option, pools: list[Pool], objective: str, wl: Workload) -> dict[str, Any]:
    """A split service's cost where a part of it shares a pool: each shared part's share of its pool, the rest whole.

    The deployments' figures then add up to the fleet's, as a co-located service's do.
    """
    parts = [
        _pool_share(pool, part.gpus_used, {})
        if len(pool.deployments) > 1
        else {**_cost_details(part, objective, wl.hardware.provider), "cost_share": f"the whole of pool {pool.name}"}
        for part, pool in zip(opt.pieces, pools, strict=True)
    ]
    out: dict[str, Any] = {"cost_share": "; ".join(part["cost_share"] for part in parts)}
    for key in _SUMMED:
        figures: list[float] = [part[key] for part in parts if part.get(key) is not None]
        out[key] = round(math.fsum(figures), 2 if key.endswith("month") else None) if len(figures) == len(parts) else None
    return out


def _idle_findings(pools: list[Pool], deployments: list[DeploymentPlan], provider: str) -> list[Finding]:
    out = []
    for pool in pools:
        idle = idle_gpus(pool, deployments)
        if idle > 0:
            # owned servers were not bought: their GPUs are idle, not idle purchases
            how = "owned" if pool.owned_nodes == pool.nodes else "rented" if pool.rented else acquired(provider)
            out.append(
                Finding(
                    "info",
                    "idle-gpus",
                    f"pool {pool.name}: {idle} of {pool.node.gpus * pool.nodes} GPUs {how} are idle "
                    f"({pool.nodes} x {pool.node.gpus}-GPU {pool.node.platform_id}); their cost is counted"
                    + (
                        _unused_shares_text(pool, sum(s[2] for d in deployments if (s := d.in_pool(pool.name))))
                        if pool.shares_per_gpu
                        else _spare_replicas_text(pool, deployments)
                    ),
                )
            )
    return out


def _unused_shares_text(pool: Pool, shares: int) -> str:
    """The shares the GPUs in use of a shared pool leave unused, apart from its idle GPUs ('' where none)."""
    per_gpu = pool.shares_per_gpu or 1
    in_use = pool.node.gpus * pool.nodes - pool.idle_gpus
    unused = in_use * per_gpu - shares
    if unused <= 0:
        return ""
    return f"; the {in_use} GPU(s) in use hold {shares} of their {in_use * per_gpu} shares ({per_gpu} a GPU), {unused} unused"


def _spare_replicas_text(pool: Pool, deployments: list[DeploymentPlan]) -> str:
    """How many more replicas of a pool's one service its idle GPUs hold ('' where none, or not one unsplit service).

    Replicas are packed node by node (:func:`~generator.planner.candidates.replicas_held`). min_replicas is named
    only with two or more nodes: asked of one node, 2 or more would plan a second one for the spread.
    """
    services = [d for d in deployments if d.in_pool(pool.name)]
    if len(services) != 1 or services[0].kind != "inference" or services[0].split:
        return ""
    only = services[0]
    slots = replicas_held((pool.node.gpus, pool.nodes), only.stage_gpus * only.pp)
    spare = slots - only.replicas
    if spare <= 0:
        return ""
    ask = f" (min_replicas: {slots} asks for them)" if pool.nodes > 1 else ""
    return f"; {spare} more replica(s) of {only.name} (TP{only.tp} x PP{only.pp}) fit on them{ask}"


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
    node = assemble_node(hw.platform, hw.gpu, first.candidate.gpus_per_node, needs, consts, findings, owned == nodes)
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


def _given_rate_run_findings(
    wl: Workload, pools: list[Pool], deployments: list[DeploymentPlan], rented: Mapping[str, float | None]
) -> list[Finding]:
    """Training jobs paid per run at a rate the workload gives (``prices:``), which may be a commitment's.

    newuser31 item 9: a savings-plan rate given for the serving pool's instance type costed a weekly job's runs too, and
    moved the job onto that type "$27 a run" cheaper, while a commitment is paid whether the job runs or not and hours
    beyond it bill on demand.
    """
    out = []
    for pool in pools:
        given = given_rate(wl.prices, pool.node.platform_id, pool.spot)
        if pool.name not in rented or given is None or given[1] != pool.node.platform_id:
            continue  # a spot rate (prices.<platform>@spot) is no commitment's
        rate = given[0]
        for dep in (d for d in deployments if pool.name in d.pools and d.kind == "training"):
            hours, job = dep.details.get("hours"), dep.details.get("usd_per_job")
            timed = isinstance(hours, int | float) and isinstance(job, int | float)
            run = f", {hours:,.2f} h a run (${job:,.2f})" if timed else ""
            out.append(
                Finding(
                    "info",
                    "run-at-given-rate",
                    f"deployment {dep.name}: its runs are costed at prices.{pool.node.platform_id}, ${rate:,.2f} a "
                    f"node-hour{run}, paid only while it runs; a commitment's rate (a savings plan, reserved instances) "
                    "is paid whether the job runs or not, and hours beyond the committed ones bill on demand: where "
                    f"this rate is one, its pool costs ${rate * pool.nodes * HOURS_PER_MONTH:,.0f} a month, or give the "
                    "rate the job's hours are billed at",
                    f"prices.{pool.node.platform_id}",
                )
            )
    return out


def _rented_jobs(pools: list[Pool], deployments: list[DeploymentPlan], per_run: set[str]) -> dict[str, float | None]:
    """Pools whose deployments are all billed per run (:func:`billed_per_run`): paid per job, not per month.

    Pool name -> USD per job (None where a job is unpriced).
    """
    out: dict[str, float | None] = {}
    for pool in pools:
        members = [d for d in deployments if pool.name in d.pools]
        if members and all(d.name in per_run for d in members):
            jobs = [d.details.get("usd_per_job") for d in members]
            out[pool.name] = None if None in jobs else float(sum(j for j in jobs if j is not None))
    return out


def _with_runs(wl: Workload, deployments: list[DeploymentPlan], per_run: set[str]) -> list[DeploymentPlan]:
    """Training jobs whose workload says how often they run: their runs a month, and rented per run what those cost.

    newuser26 item 12: a nightly fine-tune was "$41 per training run" beside a monthly headline that left its 30 runs
    out. On servers paid by the month the runs add no cost: their runs a month alone (newuser30 item 12: ``diff``'s
    bought side read its hours a run with no runs a month beside the rented side's).
    """
    runs = {d.name: d.training.runs_per_month for d in wl.deployments if isinstance(d, TrainingDeployment)}
    out = []
    for d in deployments:
        times, job = runs.get(d.name), d.details.get("usd_per_job")
        if times is None:
            out.append(d)
            continue
        if d.name not in per_run:
            out.append(d._replace(details={**d.details, "runs_per_month": times, **_month_per_run(d.details, times)}))
            continue
        month = None if job is None else round(job * times, 2)
        out.append(d._replace(details={**d.details, "runs_per_month": times, "usd_per_month_of_runs": month}))
    return out


def _month_per_run(details: dict[str, Any], times: float) -> dict[str, Any]:
    """A job's run on servers paid by the month that it alone holds: the month over its runs a month.

    newuser39 item 7: one LoRA run a month on a $372.92/month tower read ``usd_per_job: 12.05`` (its 23.6 h's share of
    the month, as if the tower ran jobs all 730 h) while the month is paid whatever runs: $372.92 a run. The hours'
    share stays beside it (``usd_per_job_hours_share``). A job sharing its servers (a ``run_after`` sequence's, whose
    ``cost_share`` splits them) keeps its hours' share.
    """
    month, job = details.get("usd_per_month"), details.get("usd_per_job")
    if "cost_share" in details or details.get("co_located") or month is None or job is None or times <= 0:
        return {}
    return {"usd_per_job": round(month / times, 2), "usd_per_job_hours_share": job}


def _overlapping_runs(deployments: list[DeploymentPlan]) -> list[Finding]:
    """Rented jobs whose runs a month take longer than the month: runs overlap, each on servers of its own."""
    out = []
    for i, d in enumerate(deployments):
        times, hours = d.details.get("runs_per_month"), d.details.get("hours")
        rented = "usd_per_month_of_runs" in d.details  # servers paid by the month run one job at a time
        if rented and times and hours and times * hours > HOURS_PER_MONTH:
            at_once = math.ceil(times * hours / HOURS_PER_MONTH)
            out.append(
                Finding(
                    "warning",
                    "runs-overlap",
                    f"'{d.name}': {times:g} runs a month of {hours:,.1f} h take {times * hours:,.0f} h, more than a month "
                    f"({HOURS_PER_MONTH} h): up to {at_once} runs at once, each renting pool {d.pools[0]}'s servers, "
                    "beyond the node limits rendered for one run; fewer runs_per_month, or a deadline_hours of "
                    f"{HOURS_PER_MONTH / times:.4g} h, runs them one after another",
                    f"deployments[{i}].training.runs_per_month",
                )
            )
    return out


def _monthly_runs(
    pools: list[Pool], deployments: list[DeploymentPlan], rented_jobs: dict[str, float | None], capped: bool = False
) -> dict[str, float | None]:
    """Per pool rented per job: what its jobs' runs cost in a month, where every job of it says how often it runs.

    None where a job is unpriced; a pool left out where a job says nothing. ``capped``: at most the pool's month (runs
    that would take longer run back to back), the figure the budget holds.
    """
    hourly = {p.name: (p.usd_per_hour or 0.0) * HOURS_PER_MONTH for p in pools}
    out: dict[str, float | None] = {}
    for name in rented_jobs:
        members = [d.details for d in deployments if name in d.pools]
        if not members or any("runs_per_month" not in m for m in members):
            continue
        months = [m["usd_per_month_of_runs"] for m in members]
        total = None if None in months else math.fsum(months)
        out[name] = min(total, hourly[name]) if capped and total is not None else total
    return out


def budget_spend_usd(
    fleet: dict[str, Any], pools: list[Pool], rented_jobs: dict[str, float | None], runs: dict[str, float | None]
) -> float | None:
    """What the fleet costs in a month: the figure max_budget_usd_per_month holds.

    Its monthly pools, plus the runs of each rented training job: as many as the workload says it runs a month
    (``runs``, at most a month of its servers), else one (a job longer than a month counts a month); None when any of
    it is unpriced.
    """
    if fleet["usd_per_month"] is None or None in rented_jobs.values() or None in runs.values():
        return None
    hourly = {p.name: p.usd_per_hour or 0.0 for p in pools}
    jobs = sum(
        runs[name] or 0.0 if name in runs else min(usd or 0.0, hourly[name] * HOURS_PER_MONTH)
        for name, usd in rented_jobs.items()
    )
    return float(fleet["usd_per_month"]) + jobs


def fleet_up_front_usd(fleet: dict[str, Any]) -> float | None:
    """What a fleet pays up front for the servers it buys (its totals' capex): the figure max_capex_usd holds.

    Owned servers and servers rented cost nothing up front; None for a fleet with an unpriced pool (its capex is not
    known).
    """
    if fleet["usd_per_month"] is None:
        return None
    return float(fleet["capex_usd"] or 0.0)


def _month_usd(priced: list[Pool]) -> float:
    """What priced pools cost a month: those that run all month at their hourly rates, those of batch jobs their runs."""
    whole = sum(p.usd_per_hour or 0.0 for p in priced if p.busy_hours_per_month is None) * HOURS_PER_MONTH
    return whole + math.fsum(pool_month_usd(p) or 0.0 for p in priced if p.busy_hours_per_month is not None)


def _floor_month_usd(pool: Pool) -> float:
    """A pool's month at its fewest nodes all month; a pool of batch jobs its runs' month (0 where unpriced)."""
    if pool.busy_hours_per_month is not None:
        return pool_month_usd(pool) or 0.0
    return (floor_usd_per_hour(pool) or 0.0) * HOURS_PER_MONTH


def totals(
    pools: list[Pool],
    racks: int | None = None,
    rented_jobs: dict[str, float | None] | None = None,
    monthly_runs: dict[str, float | None] | None = None,
) -> dict[str, Any]:
    """Fleet totals: GPUs (bought and idle), nodes, racks, power, heat and cost (else the priced pools' and the others).

    Rented pools that only run finite training jobs are costed per job (``training_usd_per_job``), not per month;
    the runs a month of the pools whose jobs say how often they run (``monthly_runs``) too (``training_usd_per_month``),
    and the month with them (``usd_per_month_with_runs``). A pool whose jobs do not say is named with its cost a run
    (``training_pools_without_runs``, ``training_usd_per_job_without_runs``): newuser35 item 7, one one-off job
    without ``runs_per_month`` dropped a nightly job's $12,138 a month from the fleet's month.
    """
    rented_jobs = rented_jobs or {}
    runs = monthly_runs or {}
    run_months = [runs[name] for name in rented_jobs if name in runs]
    without_runs = sorted(name for name in rented_jobs if name not in runs)
    counted = bool(run_months) and None not in run_months
    left_out = [rented_jobs[name] for name in without_runs]
    monthly = [p for p in pools if p.name not in rented_jobs]
    priced = [p.usd_per_hour for p in monthly if p.usd_per_hour is not None]
    usd = sum(priced) if len(priced) == len(monthly) else None
    if not pools:
        usd = None
    # the month of each pool's hours: a month, or its batch jobs' runs where it scales to zero between them
    month = None if usd is None else _month_usd([p for p in monthly if p.usd_per_hour is not None])
    jobs = list(rented_jobs.values())
    power = sum(p.power_w for p in pools)
    capex = [p.capex_usd for p in pools if p.capex_usd is not None]
    opex = [p.opex_usd_per_month for p in monthly if p.opex_usd_per_month is not None]
    return {
        "gpus": sum(p.node.gpus * p.nodes for p in pools),
        "idle_gpus": sum(p.idle_gpus for p in pools),
        "nodes": sum(p.nodes for p in pools),
        "racks": racks if racks is not None else sum(p.racks for p in pools),
        "capex_usd": round(sum(capex), 2) if capex and usd is not None else None,
        "opex_usd_per_month": round(sum(opex), 2) if len(opex) == len(monthly) and usd is not None else None,
        "power_w": power,
        # of those, the pools that rest at 0 nodes between their jobs' runs (newuser69 item 9)
        **runs_only_totals(pools),
        "heat_btu_per_h": sum(p.node.heat_btu_per_h * p.nodes for p in pools),
        "usd_per_hour": round(usd, 2) if usd is not None else None,
        "usd_per_month": round(month, 2) if month is not None else None,
        # the month with a cloud's serving pools at the nodes their services' average rates need all month: the floor
        # of a month that depends on the day's profile (newuser39 item 9); a pool of batch jobs at its runs' month
        **(
            {"usd_per_month_floor": round(math.fsum(_floor_month_usd(p) for p in monthly), 2)}
            if usd is not None and any(p.min_nodes is not None and p.busy_hours_per_month is None for p in monthly)
            else {}
        ),
        "training_usd_per_job": round(sum(j for j in jobs if j is not None), 2) if jobs and None not in jobs else None,
        **({"training_usd_per_month": round(math.fsum(m for m in run_months if m is not None), 2)} if counted else {}),
        # the month with the rented jobs' runs, what the budget holds (newuser28 item 10: "opex" and the headline
        # left $34,626 of runs out of a $99,224 month)
        **(
            {"usd_per_month_with_runs": round((month or 0.0) + math.fsum(m for m in run_months if m is not None), 2)}
            if month is not None and counted
            else {}
        ),
        # the rented jobs whose runs a month are not given, beside those counted
        **(
            {
                "training_pools_without_runs": without_runs,
                "training_usd_per_job_without_runs": round(math.fsum(j for j in left_out if j is not None), 2)
                if None not in left_out
                else None,
            }
            if counted and without_runs
            else {}
        ),
        # what the priced pools cost where others are not: a reviewer keeps the rest of the bill (fuzz21 item 14)
        **(
            {
                "priced_usd_per_month": round(_month_usd([p for p in monthly if p.usd_per_hour is not None]), 2),
                "priced_pools": len(priced),
                "unpriced_pools": sorted(p.name for p in monthly if p.usd_per_hour is None),
            }
            if usd is None and priced
            else {}
        ),
        # the priced jobs' runs where another job has no price (newuser28 item 3: one unpriced job hid them all)
        **(
            {
                "priced_training_usd_per_job": round(sum(j for j in jobs if j is not None), 2),
                "unpriced_training_pools": sorted(name for name, job in rented_jobs.items() if job is None),
            }
            if None in jobs
            else {}
        ),
    }


def serving_memory(memory: InferenceMemory) -> dict[str, int]:
    """One serving GPU's memory by kind, bytes.

    ``kv_cache`` is one sequence's at the context (what ``total`` needs to start); ``kv_cache_pool`` the KV cache the
    engine allocates from what its budget leaves, which the replica's concurrency comes from.
    """
    out = memory.per_gpu.as_dict()
    if memory.capacity is not None:
        out["kv_cache_pool"] = memory.capacity.kv_available_bytes
    return out


#: NVIDIA's GeForce driver licence, whose section 2.1.3 ("No Datacenter Deployment") covers colocated servers.
GEFORCE_LICENCE = "https://www.nvidia.com/en-us/drivers/geforce-license/"


def _geforce_left_out_findings(wl: Workload, consts: Constants) -> list[Finding]:
    """What GeForce cards the servers bought leave out where colocation is charged, and how to allow them (newuser39 item 8)."""
    left_out = geforce_left_out(wl)
    if not left_out:
        return []
    return [
        Finding(
            "info",
            "geforce-left-out",
            f"no server is bought with a GeForce card ({listed(left_out)}): NVIDIA's GeForce driver licence "
            f"excludes datacenter deployment (section 2.1.3, {GEFORCE_LICENCE}) and the plan charges colocation "
            f"(${consts.colocation_usd_per_kw_month:g}/kW-month, a datacenter); in an office or home set constants "
            "colocation_usd_per_kw_month: 0 and pue: 1, or name the card in hardware.gpus to plan it anyway",
            "hardware.gpus",
        )
    ]


def _consumer_gpu_findings(pools: list[Pool], consts: Constants, priced: frozenset[str] = frozenset()) -> list[Finding]:
    """Racked pools of consumer (GeForce) cards: their driver licence excludes datacenter deployment (newuser15 item 8).

    An office or home server is not one; colocation, which the plan's costs assume for what it buys, is. The warning
    follows the cost the plan used (newuser25 item 10): none for owned workstations (they stay in the office, no rack,
    no colocation); the colocation share of the pool's cost where it is charged; and where colocation is charged at $0,
    or the workload's own ``prices:`` (``priced``: platform ids) set the cost, only where the card must stand.
    """
    out = []
    for pool in pools:
        gpu = catalog.gpus().get(pool.node.gpu_id)
        racked = racked_nodes(pool)
        # NVIDIA's GeForce licence: an AMD Radeon's amdgpu driver has no such clause (newuser99 item 3)
        if gpu is None or not gpu.consumer or gpu.vendor != "nvidia" or pool.node.provider != "baremetal" or not racked:
            continue
        kw = racked * pool.node.power_w / 1000
        colocation_usd = kw * consts.colocation_usd_per_kw_month
        where = (
            "the plan's cost for it is the workload's own price (prices:): run it in an office or home, not a "
            "datacenter, or choose a data-center GPU"
            if pool.node.platform_id in priced
            else f"${colocation_usd:,.0f}/month of this pool's cost is colocation ({kw:.2f} kW x "
            f"${consts.colocation_usd_per_kw_month:g}/kW-month, a datacenter): in an office or home set constants "
            "colocation_usd_per_kw_month: 0 and pue: 1, or choose a data-center GPU"
            if colocation_usd > 0
            else "the plan charges no colocation (colocation_usd_per_kw_month 0): keep it in an office or home, not a "
            "datacenter, or choose a data-center GPU"
        )
        out.append(
            Finding(
                "warning",
                "consumer-gpu-licence",
                f"pool {pool.name}: {gpu.name} is a GeForce card, whose driver licence excludes datacenter deployment "
                f"(section 2.1.3, {GEFORCE_LICENCE}); {where}",
            )
        )
    return out


def moe_training_findings(index: int, dep: TrainingDeployment, model: ResolvedModel) -> list[Finding]:
    """What the step of a mixture-of-experts training job assumes and leaves out (newuser43 item 5).

    A warning where the framework's per-expert loop is left out of the step (the step can take several times the time
    given: a framework choice to act on); an info where it only says how the experts are timed (newuser89 item 7: a
    warning on every MoE job was noise).
    """
    from generator.sizing.frameworks import framework_profile
    from generator.sizing.training_moe import EXPERT_LOOP_NOT_COUNTED, moe_step, moe_step_assumptions

    said = moe_step_assumptions(moe_step(model.architecture))
    if not said:
        return []
    framework = dep.training.framework
    loop = bool(framework and framework_profile(framework).expert_loop)
    if loop:
        said.append(f"not counted under {framework}: {EXPERT_LOOP_NOT_COUNTED}")
    text = f"deployment {dep.name}: " + "; ".join(said)
    return [Finding("warning" if loop else "info", "moe-training-step", text, f"deployments[{index}].training")]


def trainer_speed_findings(index: int, dep: TrainingDeployment, details: dict[str, Any]) -> list[Finding]:
    """What specgen's own runs of the Hugging Face Trainer measured against the step a job of its family is timed at.

    And of torchtune's LoRA / QLoRA recipes, what its own published rows measured against specgen's figures.

    newuser45 item 3: a plan met a 2.2 h deadline at 2.1 h with no word that the Trainer ran 15-34% slower at the
    median on the one GPU specgen measured it on. The plan's hours stay the model's; the finding says the measured
    range and the deadline's slack, so a tight plan is seen as one.
    """
    from generator.sizing.frameworks import TORCHTUNE_ADAPTER_NOTE, TRAINER_SPEED_NOTE, framework_profile

    framework, hours = dep.training.framework, details.get("hours")
    if framework and framework_profile(framework).name == "torchtune" and dep.training.method != "full":
        # newuser54 item 5: its recipes' own published rows, which specgen's figures miss
        text = f"deployment {dep.name} ({framework} {dep.training.method}): {TORCHTUNE_ADAPTER_NOTE}"
        return [Finding("info", "framework-rows-missed", text, f"deployments[{index}].training")]
    if not framework or not framework_profile(framework).peft_lora or hours is None:
        return []
    deadline = dep.training.deadline_hours
    slack = f"; it plans {hours:,.2f} h a run against the {deadline:g} h deadline" if deadline else ""
    text = f"deployment {dep.name} ({framework}): {TRAINER_SPEED_NOTE}{slack}"
    return [Finding("warning" if deadline else "info", "trainer-speed-measured", text, f"deployments[{index}].training")]


def full_finetune_headroom_findings(index: int, dep: TrainingDeployment, shape: TrainingShape) -> list[Finding]:
    """A full fine-tune planned closer to the 95% line than its reserved peak was measured to exceed the estimate.

    newuser45 item 1: a full fine-tune was planned 0.17 GiB under the usable line while specgen's own full runs
    reserved up to 9.2% more than estimated (the caching allocator's reserve, no mechanism found for its size). Held
    against the default margin's line whatever margin the workload plans at: a larger margin is one of the levers.
    """
    from generator.sizing.frameworks import (
        FULL_FINETUNE_RESERVED_NOTE,
        FULL_FINETUNE_RESERVED_OVER,
        RESERVE_LINE_FRACTION,
        reserve_short,
    )

    total, memory = shape.memory.per_gpu.total, shape.hardware.gpu.memory_bytes
    if not reserve_short(shape.setup.method, total, memory):
        return []
    line = memory * RESERVE_LINE_FRACTION
    # the margin under which a layout's reserved peak, up to the measured excess over it, stays within that line
    margin = math.ceil((1 - RESERVE_LINE_FRACTION / (1 + FULL_FINETUNE_RESERVED_OVER)) * 100) / 100
    levers = [f"micro_batch_size below {shape.setup.micro_batch_size}"] * (shape.setup.micro_batch_size > 1)
    levers += ["gradient_checkpointing: full"] * (shape.setup.checkpointing != "full")
    levers.append(f"constants: {{safety_margin_fraction: {margin:g}}}, which plans every layout with that headroom")
    gap = f"{(line - total) / 2**30:.1f} GiB under" if total <= line else f"{(total - line) / 2**30:.1f} GiB over"
    text = (
        f"deployment {dep.name} (full fine-tune) holds {total / 2**30:.1f} GiB a GPU, {gap} the {line / 2**30:.1f} GiB of "
        f"{RESERVE_LINE_FRACTION:.0%} of its memory: {FULL_FINETUNE_RESERVED_NOTE}, more than that headroom; run it "
        "with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, which lets the allocator grow its segments instead of "
        f"fragmenting them (https://docs.pytorch.org/docs/stable/notes/cuda.html), or give {listed(levers, 'or')}"
    )
    return [Finding("warning", "full-finetune-headroom", text, f"deployments[{index}].training")]


def _training_findings(
    index: int,
    dep: TrainingDeployment,
    model: ResolvedModel,
    details: dict[str, Any],
    job: Candidate,
    provider: str,
    disk: str | None = None,
) -> list[Finding]:
    """What a planned training job's own figures say about it.

    A sequence past the model's context, a dataset below one optimizer step, a run longer than a year without a
    deadline, checkpoints a cloud deletes with its nodes (on ``disk``: :func:`checkpoint_disk`).
    """
    from generator.planner.training_report import context_extension_finding

    spec, where = dep.training, f"deployments[{index}].training"
    extension = context_extension_finding(index, spec.sequence_length, model.name, model.architecture.max_model_len)
    out = [extension] if extension else []
    gpu = catalog.gpus().get(job.gpu_id)
    model_type = model.architecture.model_type
    if gpu is not None and model_type in FP16_REFUSED_MODEL_TYPES and not computes_bf16(gpu.architecture):
        # newuser67 item 5: Gemma 2 was refused for serving on a V100 in fp16 but planned for fp16 training unsaid
        out.append(
            Finding(
                "warning",
                "fp16-training-unstable",
                f"deployment {dep.name}: {model.name} ({model_type}) trains in fp16 mixed precision on {gpu.id}, which has "
                f"no bf16, while vLLM refuses {model_type} in float16 for numerical instability, which lies in the "
                "forward pass's activations that a mixed-precision step runs in fp16 too (loss scaling guards the "
                "gradients, not them): train it on a GPU with bf16, or in fp32 at twice the memory",
                where,
            )
        )
    # fuzz15 item 11: a dataset smaller than one global batch runs a fraction of one optimizer step
    batch, sequence = details["global_batch_size"], details["sequence_length"]
    if spec.dataset_tokens is not None and (tokens := spec.dataset_tokens * spec.epochs) < batch * sequence:
        out.append(
            Finding(
                "warning",
                "dataset-below-one-step",
                f"deployment {dep.name}: {tokens:,.0f} tokens to train (dataset_tokens x epochs) are less than one "
                f"optimizer step's {batch * sequence:,} ({batch:,} sequences of {sequence:,} tokens): no full step runs; "
                "lower global_batch_size or sequence_length, or add data",
                where,
            )
        )
    out += moe_training_findings(index, dep, model)
    out += trainer_speed_findings(index, dep, details)
    if (hosts := details.get("hosts", 1)) > 1:
        text = job_hosts_text(details["world_size"], hosts, dep.training.framework)
        out.append(Finding("warning", "job-spans-hosts", f"deployment {dep.name}: {text}", f"deployments[{index}]"))
    elif dep.training.framework == "unsloth" and details["world_size"] > 1:
        text = unsloth_one_host_text(details["world_size"], int(details.get("zero_stage") or 0))
        out.append(Finding("warning", "unsloth-multi-gpu", f"deployment {dep.name}: {text}", f"deployments[{index}]"))
    hours = details.get("hours")
    dp, micro = details["data_parallel"], details["micro_batch_size"]
    if spec.global_batch_size is None and dp > 1:  # newuser28 item 1: a deadline took DP24 to DP752, the batch with it
        out.append(
            Finding(
                "info",
                "global-batch-from-layout",
                f"deployment {dep.name}: without global_batch_size the optimizer step holds what the layout runs, "
                f"{batch:,} sequences ({batch * sequence:,} tokens: DP{dp} x micro-batch {micro} x "
                f"{details['gradient_accumulation_steps']} accumulation step(s)), and moves with the GPUs a deadline "
                "takes; a recipe tuned at another batch (learning rate, warm-up) wants global_batch_size set to it",
                where,
            )
        )
    if spec.optimizer_in_backward and spec.global_batch_size and dp > 1 and dp * micro == spec.global_batch_size:
        # no accumulation: the batch alone sets the data-parallel width (fuzz21 item 7: 256 GPUs for a minute's run)
        out.append(
            Finding(
                "warning",
                "batch-sets-the-gpus",
                f"deployment {dep.name}: optimizer_in_backward runs no gradient accumulation, so global_batch_size "
                f"{spec.global_batch_size:,} at micro-batch {micro} takes {dp:,} data-parallel ranks ({job.gpus:,} GPUs); "
                "with optimizer_in_backward: false the batch accumulates over fewer GPUs, or lower global_batch_size",
                f"{where}.optimizer_in_backward",
            )
        )
    if provider in DURABLE_STORAGE and (kept := details.get("checkpoint_bytes_per_node")):
        count = int(details.get("checkpoints_kept") or 1)
        whole = (kept, count, job.nodes, spec.method == "full")
        out.append(_checkpoints_deleted(index, dep.name, whole, DURABLE_STORAGE[provider], disk))
    if hours and hours > HOURS_PER_YEAR and spec.deadline_hours is None:  # fuzz14 item 7
        out.append(
            Finding(
                "warning",
                "training-longer-than-a-year",
                f"deployment {dep.name} runs {hours:,.0f} h ({hours / HOURS_PER_YEAR:,.1f} years) on the planned "
                f"{job.gpus} GPU(s): set training.deadline_hours to plan the GPUs that finish it in time",
                where,
            )
        )
    return out


#: Storage of each cloud that outlives a node, for checkpoints and the final model.
DURABLE_STORAGE = {
    "aws": "S3, or FSx for Lustre beside it",
    "gcp": "Cloud Storage, or Managed Lustre",
    "azure": "Blob Storage, or Azure Managed Lustre",
}


#: Where the checkpoints-on-instance-store finding says a cloud job's checkpoints are, unless its provider's is below.
LOCAL_NVME = "its nodes' local NVMe"
#: Where a cloud node keeps a job's files where it is not its local NVMe: an AKS node pool or AKSNodeClass has no field
#: that puts kubelet's files on the VM's local NVMe, so they are on the OS disk, which is sized for them
#: (``generator.render.node_disk``) and deleted with the node (newuser87 item 7: the finding said "local NVMe").
NODE_FILES_DISK = {"azure": "its nodes' OS disk (AKS keeps a pod's files there, not on the VM's local NVMe)"}
#: Where an EKS or GKE node keeps them where its local NVMe does not (newuser89 item 1: a job on GCP a2-megagpu-16g, which
#: has no local SSD, was said to checkpoint to "its nodes' local NVMe" beside cloud-block-storage's "no local NVMe"): the
#: root volume / boot disk the rendered node pools size for them (``generator.render.node_disk``), deleted with the node.
ROOT_DISK = {"aws": "its nodes' root volume (EBS)", "gcp": "its nodes' boot disk"}


def checkpoint_disk(provider: str, node: NodeSpec, needs: NodeNeeds) -> str | None:
    """Where a cloud training job's checkpoints lie on its nodes, as its rendered node pool puts them; None: local NVMe."""
    if provider in NODE_FILES_DISK:
        return NODE_FILES_DISK[provider]
    return None if files_on_instance_store(provider, node, needs.files_bytes) else ROOT_DISK.get(provider)


def _checkpoints_deleted(
    index: int, name: str, kept: tuple[float, int, int, bool], storage: str, disk: str | None = None
) -> Finding:
    """Where a cloud job's checkpoints on its nodes' local NVMe (or ``disk``) go with the nodes (newuser51 item 5).

    ``kept``: the bytes a node keeps, the checkpoints they are, the job's nodes and whether a checkpoint is sharded
    over them (a full fine-tune's weights and optimizer states; a LoRA job's adapters are written whole by one rank:
    review35 item 5). A warning for a full fine-tune, whose run is lost with it; an info for the adapters.
    """
    kept_bytes, count, nodes, sharded = kept
    one = kept_bytes / count
    size, taken = (
        (
            f"{one / 1e9:,.1f} GB a node each, {one * nodes / 1e9:,.1f} GB a checkpoint over {nodes} node(s)",
            "its shard and the final model",
        )
        if sharded
        else (f"{one / 1e9:,.2f} GB a checkpoint of the adapters", "them and the final adapters")
    )
    return Finding(
        "warning" if sharded else "info",
        "checkpoints-on-instance-store",
        f"deployment {name}: its checkpoints are sized on {disk or LOCAL_NVME} ({count} kept, {size}), which the cloud "
        f"deletes with a node: a reclaimed node, or the job's pool scaled down after the run, takes {taken} with it; "
        f"write checkpoints and the final model to storage that outlives the nodes ({storage}), which specgen does not "
        "size or render",
        f"deployments[{index}]",
    )


def _no_price(wl: Workload, platform: PlatformSpec, candidate: Candidate, index: int, spot: bool = False) -> Finding:
    """The finding of a chosen layout without an on-demand price: a warning where the instance is not rented on demand.

    Priced by the workload (a reservation's price), such an instance still launches only on reserved capacity, which
    the rendered node pools do not request (fuzz16 item 1) unless ``kubernetes.reservations`` names the reservation
    (GKE; newuser28 item 5); a training job there costed per run assumes capacity billed by the hour (item 6).
    """
    priced = candidate.usd_per_hour is not None
    price = "its price is the workload's" if priced else "no price is known; add yours under 'prices:' (USD per node-hour)"
    if candidate.reserved:
        reservation = (wl.kubernetes.reservations or {})[platform.id]
        return Finding(
            "info",
            "reserved-capacity",
            f"{platform.id} is sold through {platform.not_on_demand}, not on demand: its GKE node pools take their "
            f"nodes from reservation {reservation} alone (reservationAffinity SPECIFIC_RESERVATION), billed by the "
            f"month whether a job runs or not (kubernetes.reservations); {price}",
            f"deployments[{index}]",
        )
    if platform.not_on_demand and not spot:  # spot: the type is sold so, and its pool asks for spot capacity
        hourly = (
            "; a training job's cost per run assumes capacity billed by the hour (Flex-start or Spot): a reservation "
            "bills its whole term, so name it under kubernetes.reservations to cost the pool by the month"
            if platform.provider == "gcp" and billed_per_run(wl.hardware.provider, candidate)
            else ""
        )
        return Finding(
            "warning",
            "not-on-demand",
            f"{platform.id} is sold through {platform.not_on_demand}, not on demand: its nodes launch only on such "
            "capacity (a reservation you hold), which the rendered EKS node groups and GKE node pools do not request"
            + (
                " (an AWS Karpenter NodePool asks for the reservation tagged for it: the karpenter-reserved-capacity finding)"
                if platform.provider == "aws"
                else ""
            )
            + ": point them at it (EKS capacity_type and the launch template's capacity reservation; on GKE name it "
            f"under kubernetes.reservations) before applying; {price}{hourly}",
            f"deployments[{index}]",
        )
    # a spot pool's rate is the @spot key's (newuser79 item 1: the plain key prices an on-demand rate, and a type sold
    # through Spot alone has none)
    key = f" (key '{spot_key(platform.id)}', its spot rate)" if spot else ""
    return Finding(
        "info",
        "no-price",
        f"no price for {platform.id} with {candidate.gpu_id} in the catalog; add one under 'prices:' (USD per node-hour)" + key,
        f"deployments[{index}]",
    )


def _unpriced_fabric_findings(wl: Workload, pools: list[Pool], deployments: list[DeploymentPlan]) -> list[Finding]:
    """Pools whose GPU fabric has parts the plan does not count: NICs their platform does not list, and switches.

    The NICs a server gets fitted and the fabric's switches are in no price the catalog has, so capex leaves them out.
    A system whose fabric NICs come with it (a DGX) needs the switches too where a replica or a training job spans its
    servers (newuser35 item 4: four DGX B200 of one job, 32 x 400G ports, and no switch, optic, power or rack unit in
    the plan, with nothing said).
    """
    out = []
    for pool in pools:
        platform = catalog.platforms().get(pool.node.platform_id)
        fabric = [n for n in pool.node.nics if n.role == "fabric"]
        if platform is None or platform.provider != "baremetal" or not fabric:
            continue
        nics = ", ".join(f"{n.count} x {n.name}" for n in fabric)
        spanning = sorted(
            d.name
            for d in deployments
            if (share := d.in_pool(pool.name)) is not None
            and (share[0] * share[1] if d.kind == "inference" else share[3]) > pool.node.gpus
        )
        if pool.rented and not pool.owned_nodes:
            # newuser91 item 1: a rented server's network is the provider's; nothing is fitted or bought, and a pool
            # whose replicas each keep to one server counts on no fabric at all
            at = [i for i, d in enumerate(wl.deployments) if d.name in spanning]
            if spanning and pool.nodes > 1:
                out.append(rented_fabric_finding(wl, pool, nics, f"deployments[{at[0]}]" if at else ""))
            continue
        # owned servers whose fabric the inventory states have their NICs; those of a stated kind bought do not
        owned_nics = pool.owned_nodes == pool.nodes and stated_kind(wl, platform.id, pool.node.gpu_id)
        if not platform.fabric_nic_id and not owned_nics:
            out.append(
                Finding(
                    "info",
                    "fabric-unpriced",
                    f"pool {pool.name}: the GPU fabric fitted to its {pool.nodes} server(s) ({nics} each) and the "
                    "fabric's switches are not in capex: the catalog has no sourced price for them",
                )
            )
            continue
        if spanning and pool.nodes > 1:
            links = pool.nodes * sum(n.count for n in fabric)
            # fuzz34 item 7: servers all owned buy nothing; the plan still holds only where the site's fabric joins them
            advice = (
                "the plan assumes your site's fabric connects them: check that its switches join these servers on "
                "those links, non-blocking (their power and rack units are not in the plan either)"
                if pool.owned_nodes == pool.nodes
                else "the fabric's switches, optics and cables are not in the plan's capex, power or rack units (the "
                "catalog has no sourced figures for them); size them for those links, non-blocking, before buying"
            )
            out.append(
                Finding(
                    "info",
                    "fabric-switches-unpriced",
                    f"pool {pool.name}: {', '.join(spanning)} spans its {pool.nodes} servers over their GPU fabric "
                    f"({nics} each, {links} in all): {advice}",
                )
            )
    return out


def _tp_kv_copies(arch: Architecture, gpus: int) -> str:
    """What TP over a stage's ``gpus`` would do to the model's KV cache, which attention DP avoids (review72 item 10).

    MLA keeps one latent a token that TP does not split; grouped-query attention splits its KV heads over the GPUs,
    each held ``gpus / heads`` times where there are fewer heads than GPUs.
    """
    if arch.num_kv_heads == 0:
        return f"under TP{gpus} each of the {gpus} GPUs keeps the whole MLA latent of every sequence"
    heads = arch.num_kv_heads
    if heads < gpus:
        return (
            f"under TP{gpus} each GPU keeps the KV heads it serves of every sequence: the model's {heads} KV heads over "
            f"{gpus} GPUs, each held {gpus // heads} times"
        )
    return f"under TP{gpus} each GPU keeps {heads // gpus} of the model's {heads} KV heads of every sequence"
