"""Enumerate the feasible options of one deployment over every allowed (platform, GPU) pair."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, cast

from generator import catalog
from generator.calculator.model_source import ResolvedModel, serving_format
from generator.catalog.records import PlatformSpec
from generator.named_tuple import NamedTuple
from generator.planner.batch_job import job_options
from generator.planner.blocked import (
    NO_PACKING,
    NOT_SHARED_HERE,
    OVER_LIMIT,
    OWNED_SHORT,
    POOL_TOO_LARGE,
    RACK_HEIGHT,
    RACK_POWER,
    SHARE_TOO_SMALL,
    Blocked,
)
from generator.planner.colocated_ram import workers_counted
from generator.planner.custom import stated_ram_at
from generator.planner.gpu_power_limit import limited_gpu
from generator.planner.held_text import owned_short_why
from generator.planner.inference import LayoutBlocked, ReplicaShape, _GpuShapes, replica_shapes
from generator.planner.inventory import ServerKey
from generator.planner.lora_ram import RAM_CODES, caches_room
from generator.planner.multi_host import replica_hosts
from generator.planner.naming import MAX_NODES_PER_POOL
from generator.planner.nodes import NO_GPU_FABRIC, OWNED_RAM, PSU_OVER_CAPACITY, NodeNeeds, assemble_node
from generator.planner.option import Option, replicas_rps, sustained_rps, sustained_rps_bounds
from generator.planner.options import Hardware, allowed_hardware, does_not_pack, for_deployment, node_counts, rank
from generator.planner.plan import Candidate, Finding, NodeSpec, layout_name
from generator.planner.price_region import pricing_region
from generator.planner.rack_supply import node_rack_problem
from generator.planner.racks import height_blocked
from generator.planner.slo import effective_slo, rate_replicas, replicas_needed
from generator.planner.spread import spread_field, spread_floor, spread_layouts, spread_note, tolerant_layouts
from generator.planner.tco import NodeCost, billed_per_run, fleet_cost, in_workload_racks, run_usd
from generator.sizing.constants import Constants
from generator.sizing.gpu_share import gpu_share
from generator.sizing.serving_queue import SlotQueue, slot_replicas
from generator.units import HOURS_PER_MONTH
from generator.words import listed
from generator.workload.loader import format_path
from generator.workload.models import GpuSharing, InferenceDeployment, TrainingDeployment, Workload
from generator.workload.sharing import aks_native_mig, planned_sharing, share_problem, sharing_field

if TYPE_CHECKING:
    from generator.planner.training import TrainingShape  # training modules load only for a training deployment
    from generator.sizing.precision import WeightFormat
    from generator.workload.models import InferenceSpec

#: Findings of node assembly that rule a layout out (the node cannot be configured that way).
_BLOCKING = {"ram-short", "ram-exceeds-platform", NO_GPU_FABRIC, PSU_OVER_CAPACITY}


#: What a serving node's host RAM holds beyond the OS, as a refusal or reason says it (newuser92).
LORA_HOST_RAM_TEXT = "the LoRA adapters' CPU caches (inference.lora.max_cpu_loras, one in each engine worker)"


@functools.lru_cache(maxsize=4096)
def _inference_needs(files: int, host: int = 0) -> tuple[NodeNeeds, NodeNeeds]:
    """What a node needs of its host for replicas of ``files`` weight bytes: within one node, and spanning nodes.

    ``host``: bytes of host RAM the node's replicas keep beside the OS (their LoRA adapters' CPU caches).
    """
    text = LORA_HOST_RAM_TEXT if host else ""
    return (
        NodeNeeds(files, host, 0, 0, needs_fabric=False, host_ram_text=text),
        NodeNeeds(files, host, 0, 0, needs_fabric=True, host_ram_text=text),
    )


@functools.lru_cache(maxsize=65_536)
def _assembled(
    platform: PlatformSpec,
    gpu_id: str,
    gpus_per_node: int,
    needs: NodeNeeds,
    consts: Constants,
    limit_w: float | None = None,
) -> tuple[NodeSpec, tuple[Finding, ...]]:
    """A node and its assembly findings, built once per distinct (platform, GPU, GPUs, needs, constants, power limit).

    ``limit_w``: the board power limit its GPUs run under (``hardware.gpu_power_limits``), or None: their TDP.
    """
    scratch: list[Finding] = []
    gpu = limited_gpu(platform.fitted_gpu(catalog.gpus()[gpu_id]), limit_w)
    node = assemble_node(platform, gpu, gpus_per_node, needs, consts, scratch)
    return node, tuple(scratch)


class _NodeChecks(NamedTuple):
    """A node of one layout and what rules it out, whatever its count (:func:`layout_option`)."""

    node: NodeSpec
    #: Why a bare-metal rack cannot power it, or None.
    rack_power: str | None
    #: Why a bare-metal rack cannot hold it, or None.
    tall: str | None
    #: The first assembly finding that rules out servers bought, and servers all owned (their PSUs warn), or None.
    stops: tuple[Finding | None, Finding | None]


def _node_checks(wl: Workload, hw: Hardware, gpus_per_node: int, needs: NodeNeeds, consts: Constants) -> _NodeChecks:
    """The node of ``gpus_per_node`` GPUs of ``hw`` for ``needs``, and what rules it out in ``wl``'s racks."""
    node, scratch = _assembled(hw.platform, hw.gpu.id, gpus_per_node, needs, consts, hw.gpu.tdp_w if hw.gpu.rated_tdp_w else None)
    rack_power = tall = None
    if in_workload_racks(wl, hw.platform, hw.gpu.id, gpus_per_node):
        # fuzz25 L3: the limit is the workload's rack (its default 17.3 kW where unset): the message says which field
        # it is; in whole watts (fuzz30 item 3) and, with circuits, on the line its PSUs load most (fuzz30 item 1)
        rack_power = node_rack_problem(wl.hardware, node)
        if rack_power is None:
            tall = height_blocked(node, wl.hardware.rack_units_reserved) or None
    owned_blocking = _BLOCKING - {PSU_OVER_CAPACITY}
    bought = next((f for f in scratch if f.code in _BLOCKING), None)
    owned = next((f for f in scratch if f.code in owned_blocking), None)
    return _NodeChecks(node, rack_power, tall, (bought, owned))


def blocked_on(
    hw: Hardware,
    code: str,
    why: str,
    excess: float | None = None,
    missed: tuple[str, ...] = (),
    lora_fit: tuple[tuple[int, int], ...] | None = None,
    fp8_kv_fit: tuple[int, str] | None = None,
) -> Blocked:
    """``hw``'s layouts dropped with ``code`` for ``why``.

    ``excess``: how far past the latency ``missed``; ``lora_fit``: the LoRA slots that would fit a layout memory rules out.
    """
    return Blocked(hw.gpu.id, hw.platform.id, code, why, excess=excess, missed=missed, lora_fit=lora_fit, fp8_kv_fit=fp8_kv_fit)


def layout_option(
    wl: Workload,
    hw: Hardware,
    layout: tuple[int, int],
    needs: NodeNeeds,
    shape: ReplicaShape | TrainingShape,
    replicas: int,
    summary: str,
    consts: Constants,
    blocked: list[Blocked],
    free: dict[ServerKey, int] | None = None,
    seen: dict[tuple[object, ...], object] | None = None,
) -> Option | None:
    """The option of one layout, or None (why goes to ``blocked``).

    ``seen`` keeps the nodes and fleet costs formed during one enumeration (one workload and constants),
    keyed by the hardware's identity: cheaper keys than the catalog-wide caches hash.
    """
    gpus_per_node, nodes = layout
    seen = {} if seen is None else seen
    if nodes > MAX_NODES_PER_POOL:
        why = f"{summary} needs {nodes:,} nodes, more than the {MAX_NODES_PER_POOL:,} one pool may have"
        blocked.append(blocked_on(hw, POOL_TOO_LARGE, why))
        return None
    owned = min(nodes, (free or {}).get((hw.platform.id, hw.gpu.id, gpus_per_node), 0))
    if hw.not_bought and owned < nodes:
        # more owned servers are servers of the owned kind, with its network: where that rules out work across them
        # (a front end under MIN_FABRIC_GBPS, no fabric as the inventory states), listing more of them is no way out
        # (newuser76 item 11: "DP32 ... 103.8 h needs 4 servers; 2 owned are free" over 25 Gb/s, and listing the four
        # got "multi-node work needs at least 100 Gb/s")
        if nodes > 1 and needs.needs_fabric:
            network = next((f for f in _assembled(hw.platform, hw.gpu.id, gpus_per_node, needs, consts)[1]
                            if f.code == NO_GPU_FABRIC), None)  # fmt: skip
            if network is not None:
                blocked.append(Blocked(hw.gpu.id, hw.platform.id, NO_GPU_FABRIC, network.message, gpus_per_node, nodes, owned))
                return None
        builds = owned_of_kind(hw, free)
        if builds and all(per != gpus_per_node for per, _ in builds):
            # newuser42 item 3: "32 x dell-xe7740 (1 x h100-pcie-80gb) needs 32 servers; 0 owned are free" of two free
            # 8-GPU servers: an owned server has its own GPU count, so a layout of another count never runs on it
            held = listed([f"{n} x {per}-GPU" for per, n in builds], "and")
            why = f"{summary} is a layout of {gpus_per_node}-GPU servers; the owned {hw.platform.id} free are {held}"
            why += f", and {hw.not_bought}"
        else:
            why = owned_short_why(summary, nodes, owned, hw.not_bought)
        short = blocked_on(hw, OWNED_SHORT, why)
        blocked.append(short._replace(gpus_per_node=gpus_per_node, nodes=nodes, owned=owned, pp=shape.par.pp, layout=summary))
        return None
    node_key = (id(hw), gpus_per_node, needs)
    assembled = seen.get(node_key)
    if assembled is None:
        assembled = seen[node_key] = _node_checks(wl, hw, gpus_per_node, needs, consts)
    node, rack_power, tall, stops = cast("_NodeChecks", assembled)
    if rack_power is not None:
        blocked.append(blocked_on(hw, RACK_POWER, rack_power))
        return None
    if tall is not None:
        blocked.append(blocked_on(hw, RACK_HEIGHT, tall))
        return None
    # servers the team owns exist and run: their PSU figures warn (psu_overload), they never rule them out
    first = stops[owned == nodes]
    if first is not None:
        field: tuple[str | int, ...] = ()
        why = first.message
        if first.code == "ram-short" and hw.platform.ram_as_owned and (at := stated_ram_at(wl, hw.platform.id, hw.gpu.id)):
            # the group whose ram_gib rules it out, by its index (newuser43: "hardware.inventory[].ram_gib")
            why, field = why.replace(OWNED_RAM, f"as owned: {format_path(at)}"), at
        # the adapters' caches are what the node holds beyond the OS: what it holds for them (generator.planner.lora_ram)
        room = caches_room(node.ram_gib or 0, consts.host_os_ram_bytes, needs.host_ram_bytes) if (
            first.code in RAM_CODES and needs.host_ram_text == LORA_HOST_RAM_TEXT
        ) else None  # fmt: skip
        blocked.append(
            Blocked(hw.gpu.id, hw.platform.id, first.code, why, gpus_per_node, nodes, owned, field=field, host_ram_room=room)
        )
        return None
    cost_key = (id(hw), gpus_per_node, node.power_w, nodes, owned)
    cost = seen.get(cost_key)
    if cost is None:
        cost = seen[cost_key] = fleet_cost(
            wl, hw.platform, hw.gpu, gpus_per_node, node.power_w, consts, nodes, owned, spot=hw.spot
        )
    cost = cast("NodeCost", cost)
    total_usd = cost.usd_per_hour
    share = shape.share if isinstance(shape, ReplicaShape) else None
    gpus = replicas * shape.par.gpus if share is None else shared_gpus_held(replicas, share.per_gpu, layout)
    power = node.power_w * nodes
    run_hours = None if isinstance(shape, ReplicaShape) else shape.hours
    # tie-break latency: TTFT p95 at the replica's sized load; a training job's wall-clock
    latency = shape.max_point.ttft_s if isinstance(shape, ReplicaShape) else (run_hours or 0.0) * 3600
    candidate = Candidate(
        gpu_id=hw.gpu.id,
        platform_id=hw.platform.id,
        gpus_per_node=gpus_per_node,
        tp=shape.par.tp,
        pp=shape.par.pp,
        replicas=replicas,
        gpus=gpus,
        nodes=nodes,
        usd_per_hour=total_usd,
        power_w=power,
        summary=summary,
        gpus_bought=gpus_per_node * (nodes - owned),  # GPUs on owned servers are not bought
        idle_gpus=gpus_per_node * nodes - gpus,
        capex_usd=cost.capex_usd,
        opex_usd_per_month=cost.opex_usd_per_month,
        latency_s=round(latency, 6),
        owned_nodes=owned,
        power_compared_w=(node.power_components_w or node.power_w) * nodes,
        run_hours=run_hours,
        # Spot VMs consume no reservation: a spot pool takes the zone's spot capacity
        reserved=hw.platform.id in (wl.kubernetes.reservations or ()) and wl.hardware.provider == "gcp" and not hw.spot,
        rented=cost.rented,
        shares_per_gpu=None if share is None else share.per_gpu,
    )
    return Option(candidate, hw, node, needs, shape)


def shared_gpus(replicas: int, per_gpu: int) -> int:
    """GPUs ``replicas`` pods fill, ``per_gpu`` to a shared GPU."""
    return -(-replicas // per_gpu)


def shared_gpus_held(shares: int, per_gpu: int, layout: tuple[int, int]) -> int:
    """GPUs that hold one of ``shares`` pods or more, ``per_gpu`` to a GPU, on ``layout`` (GPUs per node, nodes).

    The pods pack onto as few GPUs as they fill; where the nodes are more than those GPUs fill (``min_replicas``
    spreads them over nodes), they stand evenly over the nodes, on as few of each node's GPUs as they fill there.
    fuzz32 item 5: two 3g.40gb replicas on two 1-GPU nodes, one a GPU, were counted "2 GPUs (1 idle)", and an
    operator reading it would remove a node in use.
    """
    gpus_per_node, nodes = layout
    packed = shared_gpus(shares, per_gpu)
    if nodes <= -(-packed // gpus_per_node):
        return packed
    each, more = divmod(shares, nodes)
    return sum(min(gpus_per_node, shared_gpus(each + (node < more), per_gpu)) for node in range(nodes))


# MIG instances have no GPU-to-GPU P2P (PCIe or NVLink) and each pod gets one instance, so a replica of several GPUs
# cannot run in shares (https://docs.nvidia.com/datacenter/tesla/mig-user-guide/deployment-considerations.html): it
# keeps whole GPUs in a pool of its own, as under time-slicing and MPS (the render's gpu-sharing-whole-gpus)


#: A plan's options of one deployment on one hardware and the reasons layouts there were ruled out, in the order found,
#: keyed by what they are sized from: the deployment (the search tells deployments' options apart by identity, so two
#: alike share none: sharing them, 16 alike services took 9.0 s where 2.1 s had done), the model, how it is served or
#: trained, the platform and GPU, and how many servers of that kind are owned and free (by GPUs per server). The order
#: the deployments are chosen in, and the owned kinds a pass leaves off, change only which owned servers are free: every
#: pass over the servers of the other kinds reads them here.
SizedOptions = dict[tuple[object, ...], tuple[tuple[Blocked, ...], tuple[Option, ...]]]


def owned_of_kind(hw: Hardware, free: dict[ServerKey, int] | None) -> tuple[tuple[int, int], ...]:
    """The servers of ``hw``'s kind owned and free, as (GPUs per server, servers), where any are."""
    kind = (hw.platform.id, hw.gpu.id)
    return tuple(sorted((per, n) for (p, g, per), n in (free or {}).items() if (p, g) == kind and n))


class SplitRest(NamedTuple):
    """The owned part of a split beside which a layout serves the rest (:mod:`generator.planner.split`).

    Each replica is planned at an even share of the rate, so the rest's replicas at a layout are those the rate needs
    at the slower replica of the two parts, less the ``held_replicas`` owned ones; and, as for a service of one layout,
    enough that the wait for a place in the batch over both parts' places keeps within the TTFT p95 target's slack
    (:func:`~generator.sizing.serving_queue.slot_replicas` with the owned part beside: fix85, m74b item 7).
    """

    #: Requests/s one replica of the owned part is planned at.
    owned_requests_per_s: float
    #: Replicas the owned part holds.
    held_replicas: int
    #: The most of them one owned host holds: what a node down there takes (``nodes_down_tolerated``).
    owned_most: int = 0
    #: The owned part's places in the batch and a request's time in one (its replica shape's); None: not slot-sized.
    owned_queue: SlotQueue | None = None

    def replicas(self, spec: InferenceSpec, shape: ReplicaShape) -> int:
        """The rest's replicas at ``shape``: one at least; under ``nodes_down_tolerated``, those that keep the rate.

        With k owned hosts down (review41 item 1: an owned + bought split was taken for N+1 and was N+0).
        """
        needed = self.counts(spec, shape)[1]
        if spec.nodes_down_tolerated:
            needed = max(needed, self.rate_replicas(spec, shape) + spec.nodes_down_tolerated * self.owned_most)
        return max(1, needed - self.held_replicas)

    def rate_replicas(self, spec: InferenceSpec, shape: ReplicaShape) -> int:
        """Replicas of both parts the rate and the wait for a place need (``max_utilization``, not ``min_replicas``)."""
        return self.counts(spec._replace(min_replicas=1), shape)[1]

    def counts(self, spec: InferenceSpec, shape: ReplicaShape) -> tuple[int, int]:
        """Replicas of both parts the rate alone needs (the slower part's, routed evenly), and with the wait for a place.

        The owned part's are held; the rest's, one at least, are added until the p95 wait over both parts' places
        fits the smaller slack. Not slot-sized where either part has no queue (:func:`~generator.planner.inference.slot_queue`).
        """
        rest = max(1, replicas_needed(spec, self.owned_requests_per_s, shape.planned_requests_per_s) - self.held_replicas)
        if self.owned_queue is None or shape.slot_queue is None:
            return self.held_replicas + rest, self.held_replicas + rest
        beside = ((self.held_replicas, self.owned_queue),)
        slotted = slot_replicas(spec.requests_per_second, shape.slot_queue, rest, beside)
        return self.held_replicas + rest, self.held_replicas + slotted


def inference_options(
    wl: Workload,
    dep: InferenceDeployment,
    model: ResolvedModel,
    consts: Constants,
    blocked: list[Blocked],
    free: dict[ServerKey, int] | None = None,
    rest: SplitRest | None = None,
    hardware: list[Hardware] | None = None,
    sizes: SizedOptions | None = None,
) -> list[Option]:
    """Every feasible (hardware, TP x PP, replicas, node size) of an inference deployment.

    ``rest``: the layouts serve the rest of a split beside its owned part (by default, the whole rate); ``hardware``
    limits the search to some of the allowed servers. ``sizes`` keeps each hardware's options for the other passes of
    one plan (the same workload and constants); the options and the reasons in ``blocked`` are the same with or
    without it (fuzz26 H4: with four owned kinds, every pass sized the 45 kinds bought anew, 445,117 options in 79 s).
    """
    serving = _serving(wl, dep, model)
    options: list[Option] = []
    seen: dict[tuple[object, ...], _GpuShapes] = {}
    seen_nodes: dict[tuple[object, ...], object] = {}
    # kept for the process too (:func:`formed_on`): all :func:`_options_on` reads of the service is ``serving``, with the
    # sharing it is planned in (its own gpu_sharing or the workload's, where the outputs render Kubernetes), the field
    # asked at and whether AKS partitions its MIG GPUs (the GPUs that take it); capacity's scaled rates are its spec's;
    # spot capacity is the hardware's own (its spot pair, another object: :func:`~generator.planner.options.for_deployment`)
    formed = formed_on(wl, dep, ("inference", serving, model, consts, free is None, rest)) if sizes is not None else None
    for hw in for_deployment(dep, allowed_hardware(wl) if hardware is None else hardware):
        owned = owned_of_kind(hw, free)
        key = ("inference", dep.name, model, serving, hw.platform.id, hw.gpu.id, owned, free is None, rest)
        found = sizes.get(key) if sizes is not None else None
        if found is None:
            hit = formed.get((id(hw), owned)) if formed is not None else None
            if hit is not None and hit[0] is hw:
                found = hit[1]
            else:
                found = _options_on(wl, serving, model, hw, consts, (free, owned), rest, (seen, seen_nodes))
                if rest is None:  # a batch job's layouts at its runs' hours, formed once with them (batch_job)
                    found = (found[0], job_options(wl.hardware.provider, serving.spec, found[1]))
                if formed is not None:
                    formed[(id(hw), owned)] = (hw, found)
            if sizes is not None:
                sizes[key] = found
        blocked += found[0]
        options += found[1]
    return options


#: A deployment's options on each hardware (and owned servers of its kind free), formed once per process
#: (:func:`formed_on`): ``render`` of many files meets the same deployments again and again (the 399 deployments of
#: ``benchmarks/scale.py``'s 200 files are 99 alike), and each plan may search several fleets with the same ones.
FormedOn = dict[tuple[int, tuple[tuple[int, int], ...]], tuple[Hardware, tuple[tuple[Blocked, ...], tuple[Option, ...]]]]
_FORMED: dict[tuple[object, ...], FormedOn] = {}

#: Deployments kept in :data:`_FORMED` before it starts over (bounds memory on very long runs).
MAX_FORMED = 4096

#: The fields of a workload that forming a deployment's options never reads: its name and the deployments (the
#: deployment's own inputs are keyed as the forming reads them), but for the pricing region (:func:`formed_on` keys
#: it). tests/test_formed_options.py holds that nothing else reads them.
UNREAD_WORKLOAD_FIELDS = frozenset({"name", "deployments", "schema_"})


def formed_on(wl: Workload, dep: InferenceDeployment | TrainingDeployment, inputs: tuple[object, ...]) -> FormedOn | None:
    """The options formed so far of a deployment, by (hardware identity, owned servers of its kind free).

    ``inputs``: everything the forming reads of the deployment, the model and the constants (for a service, as
    :func:`_options_on` reads them: how it is served, the model, the constants, whether owned servers are counted, the
    split's owned part). The key adds the workload but for :data:`UNREAD_WORKLOAD_FIELDS`, the region a cloud's
    rented options are priced in (:func:`~generator.planner.price_region.pricing_region`, which reads the platforms the
    deployments pin), and each entry's the
    hardware (by identity, held by the entry) and the owned servers of its kind free, all the forming reads of them.
    Also the deployment's place in the workload: the search tells deployments' options apart by identity, so two
    alike deployments of one workload must not share them (see :data:`SizedOptions`). None (nothing kept) where the
    deployment is not one of the workload's or an input cannot be hashed.
    """
    at = next((k for k, d in enumerate(wl.deployments) if d is dep), None)
    if at is None:
        return None
    read = _read_fields(wl)
    # of the deployments, the region a cloud's rented options are priced in reads the platforms they pin
    key = (read, pricing_region(wl), at, *inputs)
    try:
        formed = _FORMED.get(key)
    except TypeError:  # an unhashable input: formed afresh
        return None
    if formed is None:
        if len(_FORMED) >= MAX_FORMED:
            _FORMED.clear()
        formed = _FORMED[key] = {}
    return formed


#: Each workload's fields as :func:`formed_on` keys them, by the workload's identity (held by the entry): a plan's fleet
#: search asks again and again of one workload (perf13: 1,479 times in a capacity search). Emptied as a plan starts
#: (:func:`generator.planner.assembly_cache.forget`); no code changes a workload's mappings in place.
_READ: dict[int, tuple[Workload, tuple[object, ...]]] = {}


def _read_fields(wl: Workload) -> tuple[object, ...]:
    """The fields of ``wl`` but :data:`UNREAD_WORKLOAD_FIELDS`, each :func:`_frozen`."""
    hit = _READ.get(id(wl))
    if hit is not None and hit[0] is wl:
        return hit[1]
    read = tuple(_frozen(v) for f, v in zip(wl._fields, wl, strict=True) if f not in UNREAD_WORKLOAD_FIELDS)
    if len(_READ) >= MAX_FORMED:
        _READ.clear()
    _READ[id(wl)] = (wl, read)
    return read


def clear_formed_options() -> None:
    """Forget the options formed (:data:`_FORMED`): for tests that change a catalog table the options read in place."""
    _FORMED.clear()


def _frozen(value: object) -> object:
    """``value`` as a hashable key: mappings as their sorted items, records and tuples item by item, each with its type.

    With its type, a number is not taken for one equal to it that reads otherwise (``1`` and ``1.0``, ``True``).
    """
    if isinstance(value, Mapping):
        return (Mapping, tuple(sorted((k, _frozen(v)) for k, v in value.items())))
    if isinstance(value, tuple):
        return (type(value), tuple(_frozen(v) for v in value))
    return value if value is None or type(value) is str else (type(value), value)


def _options_on(
    wl: Workload,
    serving: _Serving,
    model: ResolvedModel,
    hw: Hardware,
    consts: Constants,
    free: tuple[dict[ServerKey, int] | None, tuple[tuple[int, int], ...]],
    rest: SplitRest | None,
    seen: tuple[dict[tuple[object, ...], _GpuShapes], dict[tuple[object, ...], object]],
) -> tuple[tuple[Blocked, ...], tuple[Option, ...]]:
    """The service's options on ``hw`` and why its other layouts there were ruled out.

    ``free``: the owned servers free, and those of ``hw``'s kind (:func:`owned_of_kind`); ``seen``: the GPU shapes and
    nodes sized during one enumeration.
    """
    free_servers, owned_here = free
    blocked: list[Blocked] = []
    options: list[Option] = []
    # of a kind no more of are bought, the owned servers free are all a layout may take (newuser30 item 9)
    owned = sum(per * n for per, n in owned_here) if hw.not_bought and free_servers is not None else None
    spread_by = spread_field(serving.spec)
    for shape in _inference_shapes(serving, model, hw, consts, blocked, seen[0], owned):
        replicas = (
            rest.replicas(serving.spec, shape)
            if rest
            else replicas_needed(serving.spec, shape.planned_requests_per_s, slots=shape.slot_queue)
        )
        if shape.share is not None:  # replicas in shares of GPUs: the GPUs they fill, packed
            layouts = node_counts(hw.platform, 1, 1, shared_gpus(replicas, shape.share.per_gpu))
        else:
            layouts = node_counts(hw.platform, shape.par.gpus // shape.par.pp, shape.par.pp, replicas)
        if rest is None:  # a split's parts run on servers of two kinds, so on two nodes at least
            layouts = spread_layouts(layouts, replicas, serving.spec.min_replicas, hw.platform.hosts)
        if not layouts:
            blocked.append(blocked_on(hw, NO_PACKING, does_not_pack(hw, shape.par.tp, shape.par.pp, shape.par.ep)))
        sized = [(layout, replicas) for layout in layouts]
        if down := serving.spec.nodes_down_tolerated:  # N+down: more replicas, spread
            per_gpu = shape.share.per_gpu if shape.share is not None else 1
            if rest is None:
                rate = rate_replicas(serving.spec, shape.planned_requests_per_s, slots=shape.slot_queue)
                floor = serving.spec.min_replicas
            else:  # a split's rest: its own hosts down keep what it serves, and it covers the owned ones'
                rate, floor = max(1, rest.rate_replicas(serving.spec, shape) - rest.held_replicas), replicas
            sized = tolerant_layouts(layouts, rate, shape.par.gpus, per_gpu, hw.platform.hosts, down, floor)
        for layout, count in sized:
            opt = _replica_option(wl, hw, layout, shape, count, consts, blocked, free_servers, seen[1], spread_by)
            if opt is None:
                continue
            held = replicas_held(layout, shape.par.gpus)
            if rest is None and shape.share is None and held > count:
                full = _replica_option(wl, hw, layout, shape, held, consts, [], free_servers, seen[1], spread_by)
                opt = opt._replace(filled=full)
            options.append(opt)
    return tuple(blocked), tuple(options)


def replicas_held(layout: tuple[int, int], replica_gpus: int) -> int:
    """Whole replicas of ``replica_gpus`` GPUs that ``layout`` = (GPUs per node, nodes) holds, packed node by node.

    A replica within one node fits ``node GPUs // its GPUs`` times a node; one spanning nodes takes whole nodes.
    """
    gpus_per_node, nodes = layout
    if replica_gpus <= gpus_per_node:
        return nodes * (gpus_per_node // replica_gpus)
    return nodes * gpus_per_node // replica_gpus


def _replica_option(
    wl: Workload,
    hw: Hardware,
    layout: tuple[int, int],
    shape: ReplicaShape,
    replicas: int,
    consts: Constants,
    blocked: list[Blocked],
    free: dict[ServerKey, int] | None,
    seen: dict[tuple[object, ...], object] | None = None,
    spread_by: str = "min_replicas",
) -> Option | None:
    """The option of ``replicas`` of an inference layout on ``layout`` = (GPUs per node, nodes) of ``hw``.

    ``spread_by``: the field that spreads the replicas over more nodes than they fill, where they are.
    """
    gpus_per_node, nodes = layout
    # each engine worker (a GPU, or a pod in a share of one) keeps its own adapter caches (newuser92, fix171)
    per_gpu = shape.share.per_gpu if shape.share is not None else None
    workers = workers_counted(gpus_per_node, nodes, replicas, per_gpu)
    host = shape.host_ram_bytes // shape.par.gpus * workers if shape.host_ram_bytes else 0
    within, spanning = _inference_needs(shape.memory.weights.total_bytes, host)
    needs = spanning if shape.par.gpus > gpus_per_node else within
    par = shape.par  # expert parallelism named where it runs, pinned or needed to load (fuzz16 item 5)
    layout_text = layout_name(par.tp, par.pp, par.ep)
    if shape.share is not None:
        layout_text += f" in {shape.share.label} shares ({shape.share.per_gpu} a GPU)"
    spread = spread_note(replicas, par.gpus, gpus_per_node, nodes, spread_by)
    summary = f"{replicas:,} x {layout_text} on {nodes:,} x {hw.platform.id} ({gpus_per_node} x {hw.gpu.id}){spread}"
    return layout_option(wl, hw, layout, needs, shape, replicas, summary, consts, blocked, free, seen)


class _Serving(NamedTuple):
    """How an inference deployment is served, as its replica layouts are sized."""

    spec: InferenceSpec  # SLO defaults filled in
    fmt: WeightFormat
    #: How the deployment's GPUs are shared between pods (its ``gpu_sharing``, else ``kubernetes.gpu_sharing``, where
    #: Kubernetes is rendered); None: not.
    sharing: GpuSharing | None
    #: The EP degree the deployment pins (``parallelism.ep``: above 1 on, 1 off); None: not pinned.
    expert_parallel: int | None
    #: The TP and PP degrees the deployment pins (None: searched).
    pin: tuple[int | None, int | None] = (None, None)
    #: The field ``sharing`` is asked at (``deployments[3].gpu_sharing``, ``kubernetes.gpu_sharing``), and whether AKS
    #: partitions its MIG GPUs itself (:func:`~generator.workload.sharing.aks_native_mig`): which GPUs take it.
    asked: str = ""
    aks_mig: bool = False


def _serving(wl: Workload, dep: InferenceDeployment, model: ResolvedModel) -> _Serving:
    """An inference deployment's spec, weight format, the GPU sharing its replicas of one GPU run in, and its pins."""
    spec, _ = effective_slo(dep.inference)
    fmt = serving_format(model, spec.precision)
    sharing = planned_sharing(wl, dep)
    pin = dep.parallelism
    ep = None if pin is None else pin.ep
    pinned = (pin.tp, pin.pp) if pin is not None else (None, None)
    # by name: the cheaper-precision check sizes a copy of the deployment, which the workload does not hold (fz62 item 1)
    index = next(i for i, d in enumerate(wl.deployments) if d.name == dep.name)
    asked = sharing_field(wl, index) if sharing is not None else ""
    return _Serving(spec, fmt, sharing, ep, pinned, asked, aks_native_mig(wl, sharing))


def _inference_shapes(
    serving: _Serving,
    model: ResolvedModel,
    hw: Hardware,
    consts: Constants,
    blocked: list[Blocked],
    seen: dict[tuple[object, ...], _GpuShapes] | None = None,
    owned_gpus: int | None = None,
) -> list[ReplicaShape]:
    """The replica layouts of an inference deployment on ``hw`` that the workload allows (why others not, to ``blocked``).

    Where none is feasible, the reason recorded is the nearest layout's; ``owned_gpus``: the GPUs of the owned servers
    free where no more of ``hw`` are bought, which a layout must fit for its reason to be one they can act on.
    """
    spec, fmt, sharing, expert_parallel, pin = serving[:5]
    # a pinned ep above 1 is a replica of ep GPUs (attention DP ep / tp with the experts spread), never one share of one
    # (review72 item 2: a pinned {tp: 1, ep: 2} was planned in one MIG 3g.40gb instance and rendered with
    # --data-parallel-size 2); it keeps whole GPUs as a pinned tp above 1 does (gpu-sharing-whole-gpus)
    one_gpu = pin[0] in (None, 1) and pin[1] in (None, 1) and expert_parallel in (None, 1)
    problem = share_problem(hw.gpu.id, sharing, serving.asked, aks=serving.aks_mig) if sharing and one_gpu else None
    if problem is not None:
        # a service asking to share GPUs is planned only on GPUs that take the sharing asked (newuser44 items 5 and
        # 12: a time-sliced service was planned on a whole MI300X, and a deployment's MIG profile had to be on every GPU)
        blocked.append(blocked_on(hw, NOT_SHARED_HERE, f"{problem}, so the service is not planned on it"))
        return []
    shapes, why = replica_shapes(model, spec, fmt, hw, consts, seen, expert_parallel=expert_parallel, pin=pin)
    share = gpu_share(hw.gpu, sharing) if sharing is not None and hw.gpu.vendor == "nvidia" else None
    if share is not None and one_gpu:
        # a replica of one GPU runs in one pod's share of it, sized against the share; where none is feasible there,
        # it keeps whole GPUs in a pool without sharing (newuser40 item 3: a model too big for its MIG instance was
        # rendered into it, and could not start), and why is said (the finding gpu-share-too-small)
        shared, why_shared = replica_shapes(model, spec, fmt, hw, consts, seen, expert_parallel=expert_parallel, share=share)
        if shared:  # whole GPUs stay options too: beside a pool that must keep them, its idle GPUs cost nothing
            shapes = [*shared, *shapes]
        elif why_shared:
            blocked.append(blocked_on(hw, SHARE_TOO_SMALL, f"in {share.text(hw.gpu.id)}: {why_shared[-1].text}"))
    if not shapes:
        blocked += [
            blocked_on(hw, w.code, w.text, w.excess, w.missed, w.lora_fit, w.fp8_kv_fit)
            for w in _nearest_owned(hw, why, owned_gpus)
        ]
    return shapes


def _nearest_owned(hw: Hardware, why: list[LayoutBlocked], owned_gpus: int | None) -> list[LayoutBlocked]:
    """The reason to record of no layout on ``hw`` being feasible: the last (the nearest the latency targets).

    Where ``owned_gpus`` (no more of ``hw`` are bought): of the layouts those GPUs hold, the nearest the latency targets,
    else the widest (the last of equals); where they hold none, the nearest with the servers it takes said (newuser30
    item 9: a 4-GPU owned server was explained by a 16-GPU TP2 PP8 layout).
    """
    if owned_gpus is None or not why or why[-1].gpus <= owned_gpus:
        return why[-1:]
    fits = [w for w in why if 0 < w.gpus <= owned_gpus]
    if fits:
        slow = [w for w in fits if w.excess is not None]
        return [min(slow, key=lambda w: w.excess or 0.0) if slow else max(reversed(fits), key=lambda w: w.gpus)]
    last = why[-1]
    per_node = max(hw.platform.gpu_counts)
    servers = math.ceil(last.gpus / per_node)
    held = f"{owned_gpus // per_node} owned free" if owned_gpus else "none owned free"
    return [last._replace(text=f"{last.text} (a replica of {last.gpus} GPUs takes {servers} servers of {per_node}; {held})")]


def owned_fill_options(
    wl: Workload,
    dep: InferenceDeployment,
    model: ResolvedModel,
    consts: Constants,
    hw: Hardware,
    gpus_per_node: int,
    servers: int,
) -> list[Option]:
    """Per replica layout on ``servers`` owned servers of one kind: as many replicas as they hold, nothing bought."""
    options: list[Option] = []
    scratch: list[Blocked] = []
    free = {(hw.platform.id, hw.gpu.id, gpus_per_node): servers}
    for shape in _inference_shapes(_serving(wl, dep, model), model, hw, consts, scratch):
        size = shape.par.gpus
        if shape.share is not None:  # as many shares as the servers' GPUs hold
            replicas, nodes = servers * gpus_per_node * shape.share.per_gpu, servers
        elif size <= gpus_per_node:  # as many whole replicas as a server holds (review 12 item 3)
            replicas, nodes = servers * (gpus_per_node // size), servers
        elif size % gpus_per_node == 0:
            replicas = servers // (size // gpus_per_node)
            nodes = replicas * (size // gpus_per_node)
        else:
            continue
        if not replicas:
            continue
        opt = _replica_option(wl, hw, (gpus_per_node, nodes), shape, replicas, consts, scratch, free)
        if opt is not None:
            options.append(opt)
    return options


def ranking_candidate(opt: Option) -> Candidate:
    """The candidate as the objective ranks it: a training job on rented servers costs its runs, not a month of them.

    Every layout of a job is ranked on one basis, a month: servers bought, owned, reserved or rented by the month cost
    their month (amortisation, power, colocation) however briefly it runs, as the plan's monthly figure counts them;
    servers rented per run cost the job's runs a month x a run (:func:`runs_month_usd`), as the fleet's month counts
    them (``training_usd_per_month``). Both as a price an hour (the month over its 730 h), the figure
    :func:`~generator.planner.options.rank` compares. m74c item 1: a rented run's $28 was compared with a bought
    tower's $0.86 an hour, so a $630/month tower was kept over 4 runs a month of 16 rented GH200 at $112.

    Servers all owned (no ``prices:`` rate) cost the energy of the job's runs a month (:func:`~generator.planner.tco.
    charged_runs`): their price is sunk, and their colocation is paid whether they run or not, so every fleet counts it
    (:func:`~generator.planner.idle_owned_usd_per_month`) and a layout on them is ranked by what it adds (fix89).
    """
    c = opt.candidate
    if c.owned_runs is not None:
        return c._replace(usd_per_hour=c.owned_runs.energy_usd_per_month / HOURS_PER_MONTH)
    month = runs_month_usd(c, opt.runs_per_month) if billed_per_run(opt.hardware.platform.provider, c) else None
    return c if month is None else c._replace(usd_per_hour=month / HOURS_PER_MONTH)


def runs_month_usd(candidate: Candidate, runs_per_month: float | None) -> float | None:
    """A training job's runs a month on servers rented per run: a run's cost x its ``runs_per_month``.

    Where the job gives no runs a month, one run: the month a budget holds it to (:func:`monthly_spend_usd`). None for
    a service or an unpriced layout.
    """
    run = run_usd(candidate)
    return None if run is None else run * (runs_per_month or 1.0)


def on_shared_servers(opt: Option, busy_gpus: Mapping[ServerKey, Fraction | int]) -> Candidate:
    """The candidate as the fleet pays for it where its replicas may take idle GPUs of servers chosen before.

    ``busy_gpus``: GPUs in use, by server kind, by the inference deployments already chosen. Sharing their
    servers, the fleet buys only the servers the pool needs beyond theirs: price, power and servers scale to that
    count (none when the replicas fit the idle GPUs). A split option, one whose replicas span servers and one on
    owned servers are ranked as they stand.
    """
    return _on_shared(opt, ranking_candidate(opt), busy_gpus)


def _on_shared(opt: Option, c: Candidate, busy_gpus: Mapping[ServerKey, Fraction | int]) -> Candidate:
    """:func:`on_shared_servers` of the option's ranking candidate ``c``: ``c`` itself where sharing changes nothing."""
    return _shared_candidate(opt, c, busy_gpus.get(opt.busy_kind, Fraction(0)))


def _shared_candidate(opt: Option, c: Candidate, busy: Fraction | int) -> Candidate:
    """:func:`_on_shared` given ``busy``, the GPUs in use on the option's kind (``busy_kind``): all it reads of them."""
    if not busy or opt.parts or not opt.shares_servers or c.owned_nodes:
        return c
    per_node = c.gpus_per_node
    # servers the GPUs in use fill, before and with this option's: ceil((busy + used) / per_node) - ceil(busy / per_node)
    # in integers over the fractions' numerators and denominators (exact: the same whole numbers), not in Fraction,
    # whose arithmetic was 1.7 s of a profiled render of 200 workloads (the ranking asks this some 120,000 times)
    busy_n, busy_d = busy.numerator, busy.denominator
    own = opt.candidate  # :attr:`Option.gpus_used`: whole GPUs, or shares of GPUs
    used_n, used_d = (own.replicas, own.shares_per_gpu) if own.shares_per_gpu else (own.gpus, 1)
    with_used = -(-(busy_n * used_d + used_n * busy_d) // (busy_d * used_d * per_node))
    extra = max(with_used, spread_floor(opt)) - -(-busy_n // (busy_d * per_node))
    if extra >= c.nodes:
        return c
    share = extra / c.nodes
    return c._replace(
        nodes=extra,
        gpus_bought=extra * per_node if c.gpus_bought else 0,
        usd_per_hour=None if c.usd_per_hour is None else c.usd_per_hour * share,
        capex_usd=None if c.capex_usd is None else c.capex_usd * share,
        opex_usd_per_month=None if c.opex_usd_per_month is None else c.opex_usd_per_month * share,
        power_w=round(c.power_w * share),
        power_compared_w=round(c.power_compared_w * share),
    )


def replica_host_count(opt: Option) -> int:
    """Linux hosts one replica of an option spans (a split option: its widest part's)."""
    if not opt.parts:  # one part: its own
        return _hosts(opt)
    return max(_hosts(part) for part in opt.parts)


def _hosts(opt: Option) -> int:
    """Linux hosts one replica of a homogeneous option spans."""
    return replica_hosts(opt.hardware.platform, opt.candidate.gpus_per_node, opt.shape.par.gpus)


#: Ranking keys already formed, by (id of the option, objective, ranked sharing servers, owned servers free, one-GPU
#: pods, capex months, the GPUs in use on the option's kind or None): the servers shared change an option's candidate
#: only by the GPUs in use on its own kind (:func:`_shared_candidate`), so a key formed under them holds wherever they
#: are the same. Ids key it, so whoever holds the memo holds the options it ranks (an id is not reused while its option
#: lives): one deployment's options, in one plan.
RankingMemo = dict[tuple[int, str, bool, bool, bool, float | None, Fraction | int | None], tuple[object, ...]]


def ranking_key(
    opt: Option,
    objective: str,
    busy: Mapping[ServerKey, Fraction | int] | None,
    owned_free: bool,
    one_gpu_pods: bool = False,
    memo: RankingMemo | None = None,
    capex_months: float | None = None,
) -> tuple[object, ...]:
    """Sort key of an option: with owned servers free, those that buy nothing new first; then the objective.

    Of those that buy nothing new, layouts on owned servers come before layouts on the idle GPUs of bought ones.

    ``busy``: where inference deployments share servers, the GPUs the ones chosen before use (see
    :func:`on_shared_servers`); None when each deployment is ranked on its own. ``one_gpu_pods``: the GPUs are
    shared between pods (time-slicing or MPS), which only a pod of one GPU can use: on the objective's tie, such a
    layout comes first (fuzz14 item 6: a TP4 replica beat two TP1 at one cost, and the sharing was not rendered).
    ``memo``: the keys formed before (:data:`RankingMemo`); a pass that finds as many GPUs in use on an option's kind
    as a pass before (most options: another kind's servers are shared, or none yet) ranks it as that pass did.
    ``capex_months``: a price on capex, where the best fleet breaks the capex cap (newuser30 item 8): under ``cost``
    the capex (of the servers the option adds) spread over so many months is added to its cost an hour; 0, or another
    objective, ranks the least capex first, then the objective.
    """
    held = (busy.get(opt.busy_kind) or None) if busy else None  # all sharing reads: the GPUs in use on its kind
    if memo is not None:
        at = (id(opt), objective, busy is not None, owned_free, one_gpu_pods, capex_months, held)
        known = memo.get(at)
        if known is not None:
            return known
    own = ranking_candidate(opt)
    c = own if held is None else _shared_candidate(opt, own, held)
    key = _ranking_key(opt, c, objective, busy is not None, owned_free, one_gpu_pods, capex_months)
    if memo is not None:
        memo[at] = key
    return key


def _ranking_key(
    opt: Option,
    c: Candidate,
    objective: str,
    share: bool,
    owned_free: bool,
    one_gpu_pods: bool,
    capex_months: float | None = None,
) -> tuple[object, ...]:
    """:func:`ranking_key` of the option's candidate ``c`` as the pass ranks it (``share``: sharing servers)."""
    buys = c.nodes > c.owned_nodes
    # a training job takes a pool of its own, so the GPUs it leaves idle are no one's (newuser30 item 6)
    alone = not isinstance(opt.shape, ReplicaShape)
    # the rate held to the wait for a place is worked out only where the keys before it tie (HeldRate)
    held = functools.partial(sustained_rps, opt)
    bounds = functools.partial(sustained_rps_bounds, opt)
    by_objective, *ties = rank(
        objective, c, share=share, sustained_rps=replicas_rps(opt), alone=alone, held=held, held_bounds=bounds
    )
    lead: object = by_objective
    if capex_months is not None:
        up_front = c.capex_usd or 0.0
        if capex_months > 0 and objective == "cost":
            lead = by_objective + up_front / (capex_months * HOURS_PER_MONTH)
        else:
            lead = (up_front, by_objective)
    # on the objective's tie, replicas on fewer Linux hosts first: a rack of 72 GPUs cost the same whether a 70B
    # service ran as TP4 on one compute tray or TP32 over eight, and fewer idle GPUs chose the second
    hosts = replica_host_count(opt)
    return (
        owned_free and buys,
        owned_free and not buys and not c.owned_nodes,
        lead,
        one_gpu_pods and any(p.shape.par.gpus > 1 for p in opt.pieces),
        one_gpu_pods and not all(p.candidate.shares_per_gpu for p in opt.pieces),  # the sharing asked for, on a tie
        hosts,
        *ties,
        opt.candidate.summary,
    )


def ranking_lead(key: tuple[object, ...]) -> tuple[tuple[object, ...], object]:
    """A :func:`ranking_key`'s owned-servers flags and the objective's figure it ranks by after them (with capex's)."""
    return key[:2], key[2]


def monthly_spend_usd(wl: Workload, opt: Option, runs: float | None = None) -> float | None:
    """What an option costs in a month: the figure a monthly budget holds.

    A month of its servers, or, for a rented training job (paid per run), its ``runs`` a month (one where the
    workload gives none; newuser28 item 14: a nightly job's $830 run was "a month" beside a fleet budget counting 30):
    each its hours at the hourly price, at most a month.
    """
    c = opt.candidate
    if c.usd_per_hour is None:
        return None
    if billed_per_run(wl.hardware.provider, c) and c.run_hours:  # (run_hours again: narrows the type)
        return c.usd_per_hour * min(c.run_hours, HOURS_PER_MONTH) * (runs or 1.0)
    return c.usd_per_month  # a batch job's runs' hours where its pool scales to zero (newuser65 item 2)


def capex_cap_usd(wl: Workload) -> float | None:
    """``hardware.max_capex_usd`` where it holds: on bare metal (a cloud buys nothing: the setting is unused there)."""
    return wl.hardware.max_capex_usd if wl.hardware.provider == "baremetal" else None


def limits_text(wl: Workload) -> str:
    """The fleet limits a layout may exceed that the workload sets, as an error names them (all where it sets none)."""
    hw = wl.hardware
    named = [f for f in ("max_nodes", "max_budget_usd_per_month") if getattr(hw, f) is not None]
    named += ["max_capex_usd"] if capex_cap_usd(wl) is not None else []
    named = named or ["max_nodes", "max_budget_usd_per_month"]
    return listed(named, "or")


def up_front_usd(opt: Option) -> float | None:
    """What an option pays up front: the purchase price of the servers it buys, the figure max_capex_usd holds.

    Owned servers cost nothing up front, nor do servers rented or priced per hour under ``prices:``; None where the
    option is unpriced (nothing to hold against the cap).
    """
    c = opt.candidate
    if c.usd_per_hour is None:
        return None
    return c.capex_usd or 0.0


def broken_limits(wl: Workload, opt: Option, runs: float | None = None) -> list[str]:
    """The hardware limits an option alone breaks: max_nodes, the monthly budget, the capex cap.

    ``runs``: a rented job's runs a month. An unpriced option breaks a budget given: it has no price to hold against it.
    """
    hw = wl.hardware
    broken = []
    if hw.max_nodes is not None and opt.candidate.nodes > hw.max_nodes:
        broken.append("max_nodes")
    if hw.max_budget_usd_per_month is not None:
        spend = monthly_spend_usd(wl, opt, runs)
        if spend is None or spend > hw.max_budget_usd_per_month:
            broken.append("max_budget_usd_per_month")
    if (cap := capex_cap_usd(wl)) is not None:
        up_front = up_front_usd(opt)
        if up_front is None or up_front > cap:
            broken.append("max_capex_usd")
    return broken


def over_limit(wl: Workload, opt: Option, broken: list[str], runs: float | None = None) -> Blocked:
    """The record of an option dropped for the fleet limits it alone breaks (:func:`broken_limits`).

    An unpriced option breaks a budget or capex cap because it has no price to hold against it, not because it costs
    more (newuser42 item 4: an unpriced RTX PRO 6000 server "exceeds hardware.max_capex_usd" of $400,000).
    """
    c = opt.candidate
    money = [limit for limit in broken if limit in ("max_capex_usd", "max_budget_usd_per_month")]
    if c.usd_per_hour is None and money:
        what = "purchase price" if wl.hardware.provider == "baremetal" else "price"
        why = (
            f"no {what} in the catalog (unpriced: specgen catalog {'purchases' if what != 'price' else 'prices'}), so it "
            "cannot be checked against "
            f"hardware.{listed(money, 'or')}; "
            "give your rate under prices: (USD per node-hour, keyed by platform"
            + (
                "; a server priced so is rented by the hour, not bought), or the price you were quoted under "
                "purchase_prices: (USD a server bought"
                if wl.hardware.provider == "baremetal"
                else ""
            )
            + ")"
        )
    else:
        why = f"exceeds hardware.{listed(broken, 'and')}"
    # what it costs against the budget, and which layout, for the reason that names the budget (newuser79 item 3)
    spend = monthly_spend_usd(wl, opt, runs) if "max_budget_usd_per_month" in broken else None
    if spend is not None:
        return Blocked(c.gpu_id, c.platform_id, OVER_LIMIT, why, pp=c.pp, layout=c.summary, usd_per_month=spend)
    return Blocked(c.gpu_id, c.platform_id, OVER_LIMIT, why)


def within_limits(wl: Workload, opt: Option, runs: float | None = None) -> bool:
    """Whether an option alone respects max_nodes, the monthly budget and the capex cap (``runs``: a rented job's a month)."""
    return not broken_limits(wl, opt, runs)
