"""Shared pieces of option evaluation: allowed hardware, interconnect, prices and the objective."""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, cast

from generator import catalog
from generator.catalog.gke_gpu_nics import pools_rendered
from generator.catalog.records import GpuSpec, PlatformSpec
from generator.named_tuple import NamedTuple
from generator.planner.custom import inventory_server, stated_platforms
from generator.planner.gpu_power_limit import limited_gpu
from generator.planner.plan import Finding, layout_name
from generator.planner.residency_region import residency_findings
from generator.planner.tco import rented_at_given_rates
from generator.planner.zone_offer import zone_findings, zone_left_out, zone_reason
from generator.sizing.constants import Constants
from generator.units import HOURS_PER_MONTH
from generator.workload.capacity_type import SPOT, sold_as_spot
from generator.workload.gke_zone import place_lacks, planned_place
from generator.workload.models import Deployment, Workload
from generator.workload.models import Hardware as HardwareLimits
from generator.workload.residency_offer import residency_left_out

if TYPE_CHECKING:
    from collections.abc import Callable

    from generator.planner.plan import Candidate


class Hardware(NamedTuple):
    """One (platform, GPU) pair the workload allows, the GPU as that platform holds it (bridged or not)."""

    platform: PlatformSpec
    gpu: GpuSpec
    #: Why no more of these servers are bought (owned ones are still used); None: the workload allows buying them.
    not_bought: str | None = None
    #: Rented as spot capacity (a deployment's ``capacity_type: spot``): priced at a ``@spot`` rate where given,
    #: planned in pools of its own (:func:`for_deployment`).
    spot: bool = False

    def bridge_note(self) -> str:
        """Why a card that takes an NVLink bridge talks over PCIe here; "" where it is bridged or takes none."""
        card = catalog.gpus().get(self.gpu.id)
        if card is None or not card.bridged or self.gpu.bridged:
            return ""
        platform = self.platform
        if platform.custom:
            return f"no NVLink bridge counted between the {card.name} cards (gpu_bridge: true on the custom server fits one)"
        if platform.gpu_bridge is False:
            return f"{platform.id} has no NVLink bridge between its {card.name} cards"
        return f"no NVLink bridge counted: an option for {platform.id} that the parts list leaves out"


def allowed_hardware(wl: Workload) -> list[Hardware]:
    """Every (platform, GPU) pair allowed by provider, GPU and platform lists and site cooling, sorted by id.

    Owned servers are always usable: an owned kind the lists leave out comes last, with why no more are bought.
    Each GPU is the one its platform holds (:meth:`PlatformSpec.fitted_gpu`): a PCIe card's NVLink bridge counts
    only where the platform says one is fitted, so every later use (sizing, link text, training traffic) sees it.
    """
    left_out = karpenter_unlaunchable(wl) | zone_left_out(wl)  # fix164: a type the GKE pools' zone lacks
    left_out |= residency_left_out(wl)  # fix200: a type an EU-resident cluster's region lacks
    return [hw for hw in _allowed_by_the_lists(wl) if hw.platform.id not in left_out]


def _allowed_by_the_lists(wl: Workload) -> tuple[Hardware, ...]:
    """:func:`allowed_hardware` before the types Karpenter cannot launch are left out."""
    # the catalog's records by identity: a record replaced in the catalog's tables forms the list anew
    records = (tuple(map(id, catalog.platforms().values())), tuple(map(id, catalog.gpus().values())))
    # GPU NICs a rendered node pool attaches (review32 item 3: none where no pool is rendered)
    rendered = wl.hardware.provider == "gcp" and pools_rendered(wl.outputs)
    attached = frozenset(wl.kubernetes.gpu_networks or ()) if rendered else frozenset()
    # servers the workload gives a purchase price for are bought at it, sold new or not (review39 item 6)
    quoted = frozenset(key.partition("/")[0] for key in wl.purchase_prices)
    return _allowed_hardware(wl.hardware, rented_at_given_rates(wl), records, colocation_charged(wl), attached, quoted)


def karpenter_only(wl: Workload) -> bool:
    """Whether Karpenter NodePools are the only provisioner of the workload's AWS pools (no EKS node groups rendered)."""
    return wl.hardware.provider == "aws" and "kubernetes" in wl.outputs and "terraform" not in wl.outputs


def karpenter_unlaunchable(wl: Workload) -> frozenset[str]:
    """AWS types Karpenter cannot launch for GPU pods, left out where its NodePools are the only provisioner rendered.

    EC2 DescribeInstanceTypes reports a GPU count other than the instance's for them (p5.4xlarge: 0; the catalog's
    ``ec2_api_gpus``), and Karpenter takes the count from that API, so their pods stay Pending
    (aws/karpenter-provider-aws#8368). newuser81 item 1: with ``outputs: [kubernetes]`` the planner chose 22 of them,
    warning ``karpenter-api-gpu-count`` about its own choice. A type ``hardware.platforms`` names is kept (the warning
    stays), as is an owned one.
    """
    if not karpenter_only(wl):
        return frozenset()
    named = {p.lower() for p in wl.hardware.platforms or ()} | {g.platform_id for g in wl.hardware.inventory}
    return frozenset(
        p.id
        for p in catalog.platforms().values()
        if p.provider == "aws" and p.ec2_api_gpus is not None and p.ec2_api_gpus not in p.gpu_counts and p.id not in named
    )


def for_deployment(dep: Deployment, hardware: list[Hardware]) -> list[Hardware]:
    """``hardware`` as ``dep`` rents it: as spot capacity where it asks for spot, types not sold so left out.

    Each spot pair is one object a process (:func:`_as_spot`): the option builders key their caches by identity.
    """
    if dep.capacity_type != SPOT:
        return hardware
    return [_as_spot(hw) for hw in hardware if sold_as_spot(hw.platform)]


#: The spot pair of each pair, by the pair's identity (kept alive beside it, so that no other object takes its id).
_SPOT_PAIRS: dict[int, tuple[Hardware, Hardware]] = {}


def _as_spot(hw: Hardware) -> Hardware:
    if hw.spot:
        return hw
    kept = _SPOT_PAIRS.get(id(hw))
    if kept is None or kept[0] is not hw:
        kept = _SPOT_PAIRS[id(hw)] = (hw, hw._replace(spot=True))
    return kept[1]


def colocation_charged(wl: Workload) -> bool:
    """Whether the servers bought pay colocation (``constants.colocation_usd_per_kw_month`` above 0): a datacenter."""
    default = Constants._field_defaults["colocation_usd_per_kw_month"]
    return float(wl.constants.get("colocation_usd_per_kw_month", default)) > 0


def geforce_in_colocation(hw: HardwareLimits, gpu: GpuSpec, colocation: bool) -> bool:
    """Whether a GeForce ``gpu`` would be bought into colocation the workload did not ask for by name.

    NVIDIA's GeForce driver licence excludes datacenter deployment (section 2.1.3), and a plan that charges colocation
    racks what it buys in one: such a card is not bought unless ``hardware.gpus`` names it (newuser39 item 8: the
    cheapest fleet bought an RTX 5090 while warning ``consumer-gpu-licence``). Owned servers and ``hardware.fixed``
    keep theirs; an office or home plan sets colocation_usd_per_kw_month: 0.
    """
    named = {g.lower() for g in hw.gpus or ()}
    return hw.provider == "baremetal" and colocation and gpu.consumer and gpu.vendor == "nvidia" and gpu.id not in named


def geforce_left_out(wl: Workload) -> list[str]:
    """The GeForce cards no server is bought with only because colocation is charged (:func:`geforce_in_colocation`)."""
    hw, priced = wl.hardware, rented_at_given_rates(wl)
    gpus = catalog.gpus()
    colocation = colocation_charged(wl)  # of the workload alone: read once (perf13)
    return sorted(
        {
            gpu_id
            for platform in catalog.platforms().values()
            if platform.provider == hw.provider and platform.id not in priced
            for gpu_id in platform.gpu_ids
            if gpu_id in gpus
            and geforce_in_colocation(hw, gpus[gpu_id], colocation)
            and not _refusals(hw, platform, gpus[gpu_id], priced)
        }
    )


@functools.lru_cache(maxsize=256)
def _allowed_hardware(
    hw: HardwareLimits,
    priced: frozenset[str],
    _records: object,
    colocation: bool = False,
    attached: frozenset[str] = frozenset(),
    quoted: frozenset[str] = frozenset(),
) -> tuple[Hardware, ...]:
    """:func:`allowed_hardware` of a workload's hardware section and the platforms it prices (``prices:``).

    Formed once per process for the catalog's records (``_records``: their identities): the planner asks often.
    ``colocation``: whether the servers bought pay colocation (:func:`geforce_in_colocation`); ``attached``: the
    machine types whose GPU NICs the rendered node pools attach (``kubernetes.gpu_networks``).
    """
    gpus = catalog.gpus()
    # a kind whose owned servers state their NICs is built so, bought ones too (they share the owned ones' pool)
    stated = stated_platforms(hw.inventory) if hw.provider == "baremetal" else {}
    stated |= {(p.id, g): p._replace(gpu_nics_attached=True) for p in catalog.platforms().values() if p.id in attached
               for g in p.gpu_ids}  # fmt: skip
    out = [
        Hardware(
            built := stated.get((platform.id, gpu_id), platform),
            limited_gpu(built.fitted_gpu(gpus[gpu_id]), hw.gpu_power_limit_w(gpu_id) if hw.provider == "baremetal" else None),
        )
        for platform in sorted(catalog.platforms().values(), key=lambda p: p.id)
        if platform.provider == hw.provider
        for gpu_id in platform.gpu_ids
        if gpu_id in gpus and not _refusals(hw, platform, gpus[gpu_id], priced, colocation, quoted)
    ]
    for group in hw.inventory if hw.provider == "baremetal" else ():
        platform, gpu = inventory_server(group)
        gpu = limited_gpu(gpu, hw.gpu_power_limit_w(gpu.id))
        if all((h.platform.id, h.gpu.id) != (platform.id, gpu.id) for h in out):
            if platform.custom:
                why = "a custom server is not bought"
            else:
                refusals = _refusals(hw, platform, gpu, priced, colocation, quoted)
                refusals = refusals or [f"{platform.id} with {gpu.id} is not offered"]
                why = " and ".join(refusals) + ", so no more are bought"
            out.append(Hardware(platform, gpu, why))
    return tuple(out)


def _refusals(
    hw: HardwareLimits,
    platform: PlatformSpec,
    gpu: GpuSpec,
    priced: frozenset[str],
    colocation: bool = False,
    quoted: frozenset[str] = frozenset(),
) -> list[str]:
    """Why the workload's hardware section does not allow buying this server kind; empty when it does.

    ``priced``: the platforms the workload rents at its ``prices:`` rate (:func:`~generator.planner.tco.rented_at_given_rates`).
    ``colocation``: whether what is bought pays colocation (a GeForce card is then bought only where named).
    ``quoted``: the platforms the workload gives a purchase price for (``purchase_prices``), bought whether sold new or not.
    """
    if not hw.buy:
        return ["hardware.buy is false"]
    why = []
    if hw.gpus and gpu.id not in {g.lower() for g in hw.gpus}:
        why.append(f"{gpu.id} is not in hardware.gpus")
    if hw.platforms and platform.id not in {p.lower() for p in hw.platforms}:
        why.append(f"{platform.id} is not in hardware.platforms")
    if "liquid" in (platform.cooling, gpu.cooling) and hw.cooling != "liquid":
        why.append(f"it is liquid-cooled and hardware.cooling is {hw.cooling}")
    if gpu.unrated("bf16") is not None:
        why.append(f"{gpu.id} has no published dense bf16 tensor rate, so its speed cannot be estimated")
    unsold = not_sold_new_why(platform, gpu, priced | quoted) if hw.provider == "baremetal" else None
    if unsold:
        why.append(unsold)
    if platform.id not in priced and geforce_in_colocation(hw, gpu, colocation):
        why.append(f"{gpu.id} is a GeForce card, whose driver licence excludes datacenter deployment (colocation is charged)")
    return why


def not_sold_new_why(platform: PlatformSpec, gpu: GpuSpec, priced: frozenset[str]) -> str | None:
    """Why a bare-metal server of ``gpu`` on ``platform`` is not bought: its catalog price is of a product not sold new.

    Such a price (a launch list price) cannot be paid (newuser30 item 11): the server is not bought, an owned one is
    used (``hardware.inventory``, ``hardware.fixed``). None where the node's records say nothing of it, or where the
    workload prices the platform per hour (``priced``: it is rented or leased, not bought; fuzz26 M2).
    """
    if platform.id in priced:
        return None
    rec = catalog.not_sold_new(platform.id, gpu.id)
    if rec is None or rec.availability is None:
        return None
    what = gpu.id if rec.kind == "gpu" else platform.id
    return f"{what} is not sold new ({rec.availability.text()})"


def unsold_everywhere_why(wl: Workload, gpu_id: str) -> str | None:
    """Why no server of ``gpu_id`` is bought on bare metal where every platform holding it is not sold new; else None."""
    gpu = catalog.gpus().get(gpu_id)
    holders = [p for p in catalog.platforms().values() if p.provider == wl.hardware.provider and gpu_id in p.gpu_ids]
    if gpu is None or wl.hardware.provider != "baremetal" or not holders:
        return None
    unsold = [why for p in holders if (why := not_sold_new_why(p, gpu, rented_at_given_rates(wl)))]
    return unsold[0] if len(unsold) == len(holders) else None


@functools.total_ordering
class HeldRate:
    """The sustained-rate tie-break of :func:`rank` (``-round(rate, 2)``), its rate worked out only where it must be.

    A ranking compares it only where every key before it ties, and the rate held to the wait for a place in the batch
    (:func:`~generator.planner.option.sustained_rps`) is a search over the Erlang C sum: most options never need it.
    ``bounds``: a rate it surely holds and the most it may (:func:`~generator.sizing.serving_queue.slot_rate_bounds`);
    two whose rounded bounds do not overlap compare on them, the rate worked out (once) where they do.
    """

    __slots__ = ("_bounds", "_key", "_rate", "_rates")

    def __init__(self, rate: Callable[[], float], bounds: Callable[[], tuple[float, float]] | None = None) -> None:
        self._rate: Callable[[], float] | None = rate
        self._rates = bounds
        self._key = 0.0
        self._bounds: tuple[float, float] | None = None

    @property
    def key(self) -> float:
        """``-round(rate, 2)``: more requests a second first."""
        if self._rate is not None:
            self._key, self._rate = -round(self._rate(), 2), None
            self._bounds = (self._key, self._key)
        return self._key

    def _keys(self) -> tuple[float, float]:
        """The least and the most the key may be: from the bounds (worked out once), else the key itself."""
        if self._bounds is None:
            if self._rates is None:
                self._bounds = (self.key, self.key)
            else:
                low, high = self._rates()
                self._bounds = (-round(high, 2), -round(low, 2))
        return self._bounds

    def _apart(self, other: object) -> int | None:
        """-1 / 1 where the keys' bounds alone order ``self`` before / after ``other``; None where they overlap."""
        low, high = self._keys()
        other_low, other_high = other._keys() if isinstance(other, HeldRate) else (other, other)
        if high < other_low:  # type: ignore[operator]
            return -1
        if low > other_high:  # type: ignore[operator]
            return 1
        return None

    def __eq__(self, other: object) -> bool:
        if self._apart(other) is not None:
            return False
        return self.key == (other.key if isinstance(other, HeldRate) else other)

    def __lt__(self, other: object) -> bool:
        if (apart := self._apart(other)) is not None:
            return apart < 0
        return self.key < (other.key if isinstance(other, HeldRate) else other)  # type: ignore[operator]

    def __hash__(self) -> int:
        return hash(self.key)


def rank(
    objective: str,
    candidate: Candidate,
    *,
    share: bool = False,
    sustained_rps: float = 0.0,
    alone: bool = False,
    held: Callable[[], float] | None = None,
    held_bounds: Callable[[], tuple[float, float]] | None = None,
) -> tuple[float, ...]:
    """Sort key of a candidate under the objective, counting what is bought or rented.

    Every objective counts whole servers (GPUs per server x servers). A plan that leaves bought
    GPUs idle must win on the objective to be chosen: on a tie (after replicas on fewer Linux hosts, which
    :func:`~generator.planner.candidates.ranking_key` puts first), fewer idle GPUs come first (none before any).
    Remaining ties break toward fewer servers, then less power, then fewer pipeline stages, then a service of
    several replicas, then more requests per second sustained within the SLOs (``sustained_rps``: every replica at
    its SLO-bound rate), then lower latency.
    ``cost`` needs every candidate priced: the planner falls back to ``power-bought`` (and says so) when
    one is not: the power of the servers bought or rented (what owned ones draw is not bought), then of all used.
    ``share``: on a tie, fewer GPUs in use instead of fewer idle, so that the idle ones can take another deployment
    (the planner keeps such a fleet only when it wins on the objective).
    ``alone``: the layout's servers are its own whatever it leaves idle (a training job's pool): on owned servers it
    buys nothing, and fewer idle GPUs come first (newuser30 item 6: DP2 on an owned 4-GPU server, 13.4 h a run, won
    over DP4's 6.7 h by using fewer of GPUs no one else could).
    ``held``: what the replicas sustain held to the wait for a place in their batch, worked out only where the ranking
    reaches the tie-break (:class:`HeldRate`); ``sustained_rps`` then is their rate with every place taken (> 0 alike).
    """
    c = candidate
    idle = c.gpus if share and not alone else c.idle_gpus
    usd = c.usd_per_hour if c.usd_per_hour is not None else math.inf
    if c.busy_hours_per_month is not None and c.usd_per_month is not None:  # a batch job: the hours its runs take
        usd = c.usd_per_month / HOURS_PER_MONTH
    # a layout on no new server (the idle GPUs of servers already chosen) buys none; on owned servers a service's GPUs
    # in use count, so that the rest can take another service
    bought = c.gpus_bought if alone else c.gpus_bought or (0 if c.nodes == 0 else c.gpus)
    power = c.power_compared_w or c.power_w  # every layout on one basis: its components summed
    # on a tie, fewer pipeline stages before lower latency: replicas that each fit a server launch alone, and several
    # keep serving when one fails (review 12 item 6: one TP8 x PP2 replica chose over two TP8 at one cost); then more
    # capacity before lower latency: every layout here meets the SLOs, and at one price 2 x TP4 sustaining 23.4 req/s
    # beats 1 x TP8 sustaining 17.75 (newuser24 item 4: TTFT 177 ms against an SLO of 1,500 ms chose the TP8); a
    # service of one replica after those of several, which keep serving while one restarts (every layout ranked
    # serves the rate: a 1 x TP4 rated 0.2% above 2 x TP2 is within the model's error, its outage is not)
    lone = float(c.replicas < 2 and sustained_rps > 0)
    # a HeldRate compares as the float it stands for
    headroom = cast(float, HeldRate(held, held_bounds)) if held is not None else -round(sustained_rps, 2)
    if objective == "gpus":
        return (bought, idle, c.nodes, power, c.pp, lone, headroom, c.latency_s, usd)
    if objective == "power":
        return (power, idle, c.nodes, c.pp, lone, headroom, c.latency_s, usd, bought)
    if objective == "power-bought":
        # the share of the layout's power on servers not owned (a split layout's parts pro rata by servers)
        power_bought = power * (c.nodes - c.owned_nodes) / c.nodes if c.nodes else 0
        return (power_bought, power, idle, c.nodes, c.pp, lone, headroom, c.latency_s, usd)
    return (usd, idle, c.nodes, power, c.pp, lone, headroom, c.latency_s, bought)


#: Where each objective's rank (:func:`rank`) holds the sustained-rate tie-break (cost's: 5).
_HEADROOM_AT = {"gpus": 5, "power": 4, "power-bought": 5}


def ties_before_headroom(objective: str, a: Candidate, b: Candidate) -> bool:
    """Whether ``a`` and ``b`` tie on the objective and every tie-break before the sustained rate."""
    at = _HEADROOM_AT.get(objective, 5)
    return rank(objective, a)[:at] == rank(objective, b)[:at]


def tensor_parallel_sizes(hw: Hardware, heads: int) -> list[int]:
    """TP degrees allowed on ``hw``.

    Powers of two that divide the attention heads, inside one node, and inside the NVLink /
    Infinity Fabric domain where the GPU has one (over PCIe only for GPUs without).
    """
    gpu = hw.gpu
    limit = max(hw.platform.gpu_counts)
    if gpu.interconnect_kind != "none":
        limit = min(limit, gpu.nvlink_domain_gpus)
    sizes, tp = [], 1
    while tp <= limit:
        if heads % tp == 0:
            sizes.append(tp)
        tp *= 2
    return sizes


def node_counts(platform: PlatformSpec, tp: int, pp: int, replicas: int) -> list[tuple[int, int]]:
    """(GPUs per node, nodes) layouts of ``replicas`` TP x PP replicas on ``platform``.

    A node holds as many replicas as fit in it whole (a 3-GPU replica twice in 8 GPUs, two left idle); a larger
    replica spans whole nodes of the biggest size when it fills them (its pipeline stages then talk over the node
    fabric). None where the replica does neither (review 12 item 3).
    """
    layouts = []
    size = tp * pp
    counts = _sorted_counts(platform.gpu_counts)
    biggest = counts[-1]
    for count in counts:
        if size <= count:
            layouts.append((count, math.ceil(replicas / (count // size))))
        elif size > count == biggest and size % count == 0:
            layouts.append((count, replicas * (size // count)))
    return layouts


def does_not_pack(hw: Hardware, tp: int, pp: int, ep: int = 1) -> str:
    """Why a replica of ``max(tp, ep) x pp`` GPUs has no node layout on ``hw``'s platform (:func:`node_counts` gave none).

    Named as plans name a layout (``TP1 EP8 (attention DP 8)``: review72 item 6), other layouts ``TP{tp} PP{pp}`` as before.
    """
    counts = _sorted_counts(hw.platform.gpu_counts)
    sizes = " or ".join(str(c) for c in counts)
    name = layout_name(tp, pp, ep) if ep > tp else f"TP{tp} PP{pp}"
    return (
        f"{name} ({max(tp, ep) * pp} GPUs a replica) neither fits one {hw.platform.id} server ({sizes} GPUs) nor fills "
        f"whole servers of {counts[-1]}"
    )


@functools.lru_cache(maxsize=1024)
def _sorted_counts(gpu_counts: tuple[int, ...]) -> tuple[int, ...]:
    """A platform's GPU counts per node, smallest first (formed once per distinct list)."""
    return tuple(sorted(gpu_counts))


def zone_left_out_findings(wl: Workload) -> list[Finding]:
    """The GCP types the GKE pools' zone lacks that the workload's lists would have planned (info, fix164)."""
    return zone_findings(wl, {hw.platform.id for hw in _allowed_by_the_lists(wl)})


def zone_lacks_gpu_why(wl: Workload, gpu_id: str) -> str | None:
    """Why ``gpu_id`` has no layout where the lists allow machine types of it that the GKE pools' zone all lacks.

    newuser100: an H100 the provider offers, left out by zone europe-west4-a, read "no allowed platform of this
    provider offers it" in ``gpu-no-layout``. None: the lists allow no type of it, or the zone offers one.
    """
    listed_types = {hw.platform.id for hw in _allowed_by_the_lists(wl) if hw.gpu.id == gpu_id}
    if listed_types and listed_types <= residency_left_out(wl):  # fix200: an EU-resident AWS cluster's region
        return (
            f"region {wl.kubernetes.location}'s list names none of its instance types and kubernetes.data_residency "
            "is eu (info gpu-not-in-eu-region)"
        )
    place = planned_place(wl)
    if place is None or not listed_types or not listed_types <= zone_left_out(wl):
        return None
    return f"{place_lacks(place, 'its machine types')} (info gpu-not-in-zone)"


def residency_left_out_findings(wl: Workload) -> list[Finding]:
    """The types an EU-resident cluster's region lacks that the workload's lists would have planned (info, fix200)."""
    return residency_findings(wl, {hw.platform.id for hw in _allowed_by_the_lists(wl)})


def zone_left_out_reason(wl: Workload) -> str | None:
    """The reason each deployment not pinned to a type carries for the GCP types its zone lacks (fix169)."""
    return zone_reason(wl, {hw.platform.id for hw in _allowed_by_the_lists(wl)})


def karpenter_left_out_findings(wl: Workload) -> list[Finding]:
    """The types :func:`karpenter_unlaunchable` left out that the workload's lists would have planned, said (info).

    Only those :func:`allowed_hardware` keeps without the Karpenter filter (review81 item 4: with ``hardware.platforms:
    [aws-p5-48xlarge]`` it named p5.4xlarge, which that list had left out already, and adding terraform would not have
    planned it): its provider, GPU and platform lists, its cooling and its prices decide as they do for the plan.
    """
    unlaunchable = karpenter_unlaunchable(wl)
    left = sorted({hw.platform.id for hw in _allowed_by_the_lists(wl) if hw.platform.id in unlaunchable})
    if not left:
        return []
    return [
        Finding(
            "info",
            "karpenter-unlaunchable-left-out",
            f"{', '.join(left)} left out of the plan: the Karpenter NodePools are the only provisioner rendered (outputs "
            "has kubernetes, not terraform), and Karpenter launches none of these types for GPU pods, since EC2 "
            "DescribeInstanceTypes reports another GPU count for them (https://github.com/aws/karpenter-provider-aws/"
            "issues/8368); add terraform to outputs to plan them as EKS managed node groups, or name them in "
            "hardware.platforms to plan them anyway",
            "outputs",
        )
    ]
