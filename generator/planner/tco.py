"""What one node costs: rent for cloud instances, total cost of ownership for owned servers.

An owned server's monthly cost is its purchase price spread over ``amortization_months`` (capex)
plus energy (planned power x ``power_utilization`` x ``pue`` x ``energy_usd_per_kwh``) and
colocation (planned kW x ``colocation_usd_per_kw_month``) (opex). Every server the plan buys goes into
the colocation racks it packs, towers on a rack shelf, and pays their rent and PUE; a workstation the team
already owns (a home or office server) pays its energy alone, at PUE 1 (:func:`in_colocation`). The purchase
price is a whole-system record where one matches the platform, GPU and GPU count, else a component estimate:
host + GPUs x GPU price.

A bare-metal server the catalog prices only by a rental record (``prices.json``, e.g. Lambda's on-demand GH200) is
rented, not bought (newuser39 item 3): it stands in the provider's datacentre, so it has no capex, is packed into no
rack of the plan (no rack, circuit, ``max_racks`` or colocation of the user's) and pays no energy of the user's: its
rent is all its cost (:attr:`NodeCost.rented`). A rental record prices the GPU it names alone (``gpu_id``): an
unmatched GPU is unpriced. Billed by the hour (``unit: hour``), a training job on it costs its runs' hours, like a
job on a cloud (:func:`billed_per_run`); a record billed by the month (``unit: month``) holds the server for the
month whatever runs, as a reservation does (:func:`paid_by_the_month`): a job's run is then that month over its runs a
month, and its line says the servers are rented by the month (review 27 item 5). A bare-metal platform priced per
hour under the workload's ``prices:`` is rented the same way, by the hour (fuzz32 item 2), unless the workload owns
servers of it: then the rate is its owned servers' all-in cost, and servers beyond them are bought at the catalog's
purchase price (fuzz33 item 1, :func:`fleet_cost`). :func:`rented_on_bare_metal` is the one rule of what is rented.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

from generator import catalog
from generator.catalog.records import GpuSpec, PlatformSpec, PricedWith, PriceRecord, PurchaseRecord, acquired
from generator.named_tuple import NamedTuple
from generator.planner.plan import OwnedRuns, ram_text
from generator.planner.price_region import pricing_region, unpriced_in_region_why
from generator.sizing.constants import Constants
from generator.units import HOURS_PER_MONTH, usd_text
from generator.words import counted
from generator.workload.capacity_type import given_rate
from generator.workload.models import Workload

if TYPE_CHECKING:
    from generator.planner.plan import Candidate, Pool


def idle_owned_usd(wl: Workload, platform_id: str, free: int, colocation_usd: float = 0.0) -> float | None:
    """What ``free`` owned servers of ``platform_id`` left free cost a month whether they run or not: the one rule of it.

    - Priced under the workload's ``prices:``, their rate: README, an owned platform priced under ``prices:`` is costed
      at that rate "as your own all-in cost for the servers you own", paid whether they run or not.
    - Else their colocation, ``colocation_usd`` a server (:func:`owned_colocation_usd`: 0 where not racked). The rack
      is rented whether the server runs or not (fix89); their energy left free is not counted (off or idle: the catalog
      has no sourced idle power, and every fleet owning them pays the same).

    None where servers are not owned (a cloud), or where a free one costs nothing (an owned workstation, not racked).
    """
    if wl.hardware.provider != "baremetal":
        return None
    if platform_id in wl.prices:
        return free * wl.prices[platform_id] * HOURS_PER_MONTH
    return free * colocation_usd if colocation_usd else None


def owned_colocation_usd(power_w: float, racked: bool, consts: Constants) -> float:
    """Colocation of owned servers a month (planned kW x ``colocation_usd_per_kw_month``); 0 where not ``racked``."""
    return power_w / 1000 * consts.colocation_usd_per_kw_month if racked else 0.0


def owned_runs(
    power_w: float,
    racked: bool,
    runs: float | None,
    hours: float,
    consts: Constants,
    given: bool | None = None,
    cadences: tuple[tuple[str, float, float, bool], ...] = (),
) -> OwnedRuns:
    """Owned servers of ``power_w`` in all that run ``runs`` a month of ``hours`` each: what they are charged (fix89).

    ``runs`` None: not given, one run charged; ``given`` says so where ``runs`` is a chain's, already settled;
    ``cadences``: a pool's jobs' runs, said in its charge (:attr:`OwnedRuns.cadences`).
    """
    return OwnedRuns(
        runs=runs or 1.0,
        hours=hours,
        kw=power_w / 1000,
        pue=consts.pue if racked else 1.0,
        usd_per_kwh=consts.energy_usd_per_kwh,
        colocation_usd_per_month=owned_colocation_usd(power_w, racked, consts),
        runs_given=runs is not None if given is None else given,
        cadences=cadences,
    )


def charged_runs(candidate: Candidate, platform: PlatformSpec, runs_per_month: float | None, consts: Constants) -> Candidate:
    """A training layout all on owned servers (no ``prices:`` rate) charged its runs' energy, not a month of it.

    Busy hours (``runs_per_month`` x hours a run, one run where not given) x full power x PUE (1 for an owned workstation
    not racked) x ``energy_usd_per_kwh``, and the servers' colocation where racked (:class:`OwnedRuns`). fix87 item 2:
    a job on the owned servers was charged ``power_utilization`` x the whole month of energy, and a job's one $1 run on
    a rented GH200 beat the team's own workstation "at $66/month". Other candidates are returned as they are.
    """
    c = candidate
    if not c.run_hours or c.capex_usd != 0 or c.owned_nodes != c.nodes or c.rented is not None:
        return c
    runs = owned_runs(c.power_w, in_colocation(platform, owned=True), runs_per_month, c.run_hours, consts)
    return c._replace(usd_per_hour=runs.usd_per_month / HOURS_PER_MONTH, opex_usd_per_month=runs.usd_per_month, owned_runs=runs)


def billed_by_the_hour(provider: str, candidate: Candidate) -> bool:
    """Whether a candidate's servers are paid for the hours they run: a cloud's (not reserved), or rented by the hour.

    A reservation bills its whole term whether anything runs or not (newuser28 item 6). On bare metal, a server rented
    by the hour from a provider (:attr:`NodeCost.rented`) is billed as on a cloud; one bought or owned is paid by the
    month.
    """
    return (provider != "baremetal" or candidate.rented == "hour") and not candidate.reserved


def billed_per_run(provider: str, candidate: Candidate) -> bool:
    """Whether a candidate is a training job on servers billed by the hour: paid for its hours, not by the month."""
    return bool(candidate.run_hours) and billed_by_the_hour(provider, candidate)


def acquired_as(provider: str, candidate: Candidate) -> str:
    """How a layout's servers are had: ``rented`` on a cloud or from a provider on bare metal, else ``bought``."""
    return "rented" if candidate.rented else acquired(provider)


def gpus_acquired(provider: str, candidate: Candidate) -> str:
    """The GPUs a layout buys or rents: ``24 GPUs rented``, ``8 GPUs bought, 16 rented`` (a split had both ways).

    review67 item 6: a split of owned servers and servers rented by the hour said its rented part's 24 GPUs were bought.
    """
    if candidate.gpus_rented is None:
        return f"{counted(candidate.gpus_bought, 'GPU')} {acquired_as(provider, candidate)}"
    bought = candidate.gpus_bought - candidate.gpus_rented
    had = [(n, how) for n, how in ((bought, acquired(provider)), (candidate.gpus_rented, "rented")) if n] or [(0, "rented")]
    return ", ".join(f"{counted(n, 'GPU')} {how}" if i == 0 else f"{n} {how}" for i, (n, how) in enumerate(had))


def run_usd(candidate: Candidate) -> float | None:
    """What one run of a training job costs: its hours at its servers' hourly price; None for a service or unpriced."""
    if candidate.usd_per_hour is None or not candidate.run_hours:
        return None
    if candidate.owned_runs is not None:  # on owned servers: the energy a run adds (their colocation is paid anyway)
        return candidate.owned_runs.run_usd
    return candidate.usd_per_hour * candidate.run_hours


def paid_by_the_month(candidate: Candidate) -> bool:
    """Whether a candidate's servers are paid by the month whatever runs: bought, owned, reserved or rented monthly.

    A bare-metal server rented by the month (``unit: month``) is held for the month as a reservation is: one rule for
    all of them (review 27 item 5).
    """
    return candidate.capex_usd is not None or candidate.reserved or candidate.rented == "month"


def month_run_usd(candidate: Candidate, runs_per_month: float | None) -> float | None:
    """A training job's run on servers paid by the month that it alone uses: their month over its runs a month.

    newuser39 item 7: one run a month on a $372.92/month server read "$12 per run" (its 23.6 h's share of the month,
    as if the server ran jobs all 730 h), while the month is paid whatever runs. None for a service, a job rented per
    run, an unpriced one, or one whose runs a month are not given.
    """
    if not runs_per_month or runs_per_month <= 0 or candidate.usd_per_hour is None or not candidate.run_hours:
        return None
    if not paid_by_the_month(candidate):
        return None
    if candidate.owned_runs is not None:  # on owned servers: the energy a run adds (fix89)
        return candidate.owned_runs.run_usd
    return candidate.usd_per_hour * HOURS_PER_MONTH / runs_per_month


def job_runs_per_month(details: Mapping[str, Any]) -> float | None:
    """A planned training job's runs a month where its servers are its own (a deployment's ``details``); else None.

    A job of a ``run_after`` sequence shares its servers (``cost_share``): its runs divide their month only where the
    sequence's jobs all run as often (:mod:`~generator.planner.chain_runs`, which keeps ``usd_per_job_hours_share``).
    """
    runs = details.get("runs_per_month")
    alone = "cost_share" not in details or "usd_per_job_hours_share" in details
    if not alone or details.get("co_located") or not isinstance(runs, int | float):
        return None
    return float(runs)


def cost_text(candidate: Candidate, what: str = "job", runs_per_month: float | None = None) -> str:
    """What a candidate costs: per run for a training job (it ends), per month for a service.

    ``what`` runs: a ``"job"``, or a ``"sequence"`` of jobs in turn (``run_after``), whose run is all of theirs.
    ``runs_per_month``: the job's, where it gives them and uses its servers alone: a run on servers paid by the month
    is then the month over its runs (:func:`month_run_usd`), its hours' share beside.
    """
    if candidate.usd_per_hour is None:
        return "unpriced"
    run = run_usd(candidate)
    if candidate.owned_runs is not None and run is not None:  # fix89: what a run adds on servers owned
        per_run = "a run" if what == "job" else f"a run of the {what}"
        return f"{usd_text(run)} {per_run}: {candidate.owned_runs.text()}"
    month = f"${candidate.usd_per_month or 0.0:,.0f}/month"
    per_run = "per run" if what == "job" else f"per run of the {what}"
    monthly = month_run_usd(candidate, runs_per_month)
    if run is not None and monthly is not None and runs_per_month:
        paid = (
            "the servers rented by the month"
            if candidate.rented == "month"
            else "the servers reserved"
            if candidate.capex_usd is None
            else "the owned servers' running cost"
            if not candidate.capex_usd
            else "the servers bought"
        )
        times = f"{runs_per_month:g} run{'' if runs_per_month == 1 else 's'}"
        return (
            f"${monthly:,.0f} {per_run}: {month} of {paid}, paid whatever runs, over its {times} a month, "
            f"${run:,.0f} as its {candidate.run_hours:,.1f} h's share"
        )
    if run is not None and candidate.capex_usd is not None:
        # bought servers stay after the run, and are ranked by their month (review 10 item 8a); a run's share of the
        # month assumes they keep running jobs over their amortization, which a one-off job does not (newuser17 L2):
        # alone it pays their price and its hours of energy and colocation (review 14 item 1)
        if not candidate.capex_usd:
            return f"${run:,.0f} {per_run} as its hours' share of {month} of the owned servers' running cost"
        running = (candidate.opex_usd_per_month or 0.0) * (candidate.run_hours or 0.0) / HOURS_PER_MONTH
        return (
            f"${run:,.0f} {per_run} as its hours' share of {month} of the servers bought "
            f"(${candidate.capex_usd + running:,.0f} to buy them and run this {what} alone)"
        )
    return f"${run:,.0f} {per_run}" if run is not None else month


class BuiltHost(NamedTuple):
    """The host a plan builds (CPUs and RAM), compared with the configuration a comparable-system estimate is priced with."""

    cpu: str
    cpu_cores: int
    ram_gib: int | None  # None: no sourced figure


class NodeCost(NamedTuple):
    """Cost of one node; ``usd_per_hour`` is None when no price could be formed (``why`` says why)."""

    usd_per_hour: float | None
    capex_usd: float | None
    opex_usd_per_month: float | None
    basis: str | None
    estimated: bool = False
    why: str | None = None
    #: On bare metal, how a server rented from a provider (a catalog rental record) is billed: ``"hour"`` or
    #: ``"month"``; None for a server bought or owned (and on a cloud, where every server is rented).
    rented: str | None = None

    @property
    def usd_per_month(self) -> float | None:
        """All-in monthly cost (capex spread over the amortization period plus opex)."""
        return self.usd_per_hour * HOURS_PER_MONTH if self.usd_per_hour is not None else None


def _purchase_node_cost(platform: PlatformSpec, quote: tuple[float, str], power_w: int, consts: Constants) -> NodeCost:
    """One server bought at the workload's quote (:func:`given_purchase`), run at the catalog's running costs."""
    capex, key = quote
    return _bought_node_cost(platform, capex, f"price given (purchase_prices.{key})", power_w, consts)


def _bought_node_cost(
    platform: PlatformSpec, capex: float, capex_basis: str, power_w: int, consts: Constants, estimated: bool = False
) -> NodeCost:
    """One server bought for ``capex`` spread over the amortisation, and its running costs (energy, colocation).

    ``capex_basis``: where the figure comes from (a catalog record, or the workload's quote).
    """
    opex, opex_basis = owned_opex_usd_per_month(platform, power_w, consts)
    per_month = capex / consts.amortization_months + opex
    basis = f"purchase {capex_basis} over {consts.amortization_months} months; {opex_basis}"
    return NodeCost(per_month / HOURS_PER_MONTH, capex, opex, basis, estimated)


def given_purchase(wl: Workload, platform_id: str, gpu_id: str, gpus: int) -> tuple[float, str] | None:
    """(USD, key) of the workload's ``purchase_prices`` for one server of ``gpus`` x ``gpu_id`` on ``platform_id``, or None.

    The configuration's own key (``<platform>/<gpu>x<count>``) first, then the platform's.
    """
    for key in (f"{platform_id}/{gpu_id}x{gpus}", platform_id):
        if key in wl.purchase_prices:
            return float(wl.purchase_prices[key]), key
    return None


def purchase_price(
    platform: PlatformSpec, gpu: GpuSpec, gpus: int, built: BuiltHost | None = None
) -> tuple[float, str, bool] | str:
    """(USD, basis, estimated) to buy one ``platform`` node with ``gpus`` x ``gpu``, or why it cannot be priced.

    With ``built``, a comparable-system estimate's basis says how the node built differs from the configuration priced.
    """
    return _purchase_price(platform.id, max(platform.gpu_counts), gpu.id, gpus, built)


class PricedFrom(NamedTuple):
    """The catalog records one node's purchase price is formed from.

    A system record, else a legacy purchase price (``prices.json``), else its host's and its GPU's (each None where
    the catalog has none).
    """

    system: PurchaseRecord | None
    legacy: PriceRecord | None
    host: PurchaseRecord | None
    card: PurchaseRecord | None

    @property
    def used(self) -> tuple[PurchaseRecord | PriceRecord, ...]:
        """The records the price is formed from, in the order they are cited; () where it cannot be formed."""
        if self.system is not None:
            return (self.system,)
        if self.legacy is not None:
            return (self.legacy,)
        return (self.host, self.card) if self.host is not None and self.card is not None else ()


#: :func:`_by_id`'s tables: (the records as the table held them, the same by id).
_SORTED: dict[str, tuple[tuple[Any, ...], tuple[Any, ...]]] = {}


def _by_id(name: str, table: Mapping[str, Any]) -> tuple[Any, ...]:
    """``table``'s records (catalog ``name``) sorted by id, sorted again only where it holds other records.

    The price lookups below each walked a table sorted anew (once per server kind, GPU and count); a test may still
    replace a record in place, and then the table is sorted again (its records compared by identity first).
    """
    records = tuple(table.values())
    known = _SORTED.get(name)
    if known is not None and known[0] == records:
        return known[1]
    ordered = tuple(sorted(records, key=lambda r: r.id))
    _SORTED[name] = (records, ordered)
    return ordered


@cache
def priced_from(platform_id: str, max_gpus: int, gpu_id: str, gpus: int) -> PricedFrom:
    """The records :func:`purchase_price` forms one node's price from (the one rule of which record prices it)."""
    records = _by_id("purchases", catalog.purchases())
    for rec in records:
        if rec.kind == "system" and rec.platform_id == platform_id and rec.gpu_id == gpu_id and rec.gpu_count == gpus:
            return PricedFrom(rec, None, None, None)
    legacy = [
        p
        for p in _by_id("prices", catalog.prices())
        if p.platform_id == platform_id and p.unit == "purchase" and gpus == max_gpus and p.prices(gpu_id, gpus)
    ]
    if legacy:
        return PricedFrom(None, legacy[0], None, None)
    host = next((r for r in records if r.kind == "host" and r.platform_id == platform_id), None)
    card = next((r for r in records if r.kind == "gpu" and r.gpu_id == gpu_id), None)
    return PricedFrom(None, None, host, card)


@cache
def _purchase_price(
    platform_id: str, max_gpus: int, gpu_id: str, gpus: int, built: BuiltHost | None = None
) -> tuple[float, str, bool] | str:
    """:func:`purchase_price` by ids (the catalog is loaded once per process, so the answer is too)."""
    system, legacy, host, card = priced_from(platform_id, max_gpus, gpu_id, gpus)
    if system is not None:
        return system.usd, _cite(system), system.estimated
    if legacy is not None:
        return legacy.usd, f"catalog {legacy.id} (purchase)", False
    if host is None or card is None:
        why = catalog.unpriced()
        missing = [
            what + (f": {why[key]}" if key in why else "")
            for what, key, rec in (("host", platform_id, host), (f"GPU {gpu_id}", gpu_id, card))
            if rec is None
        ]
        return f"no purchase price for {platform_id} ({'; '.join(missing)})"
    usd = host.usd + gpus * card.usd
    basis = f"estimated: host {_cite(host, built)} + {gpus} x {_cite(card)}"
    return usd, basis, True


def _cite(rec: PurchaseRecord, built: BuiltHost | None = None) -> str:
    end = f", {rec.range_end} end" if rec.range_end != "single" else ""
    stands_in = f"; {rec.stands_in}" if rec.stands_in else ""
    if rec.priced_with and built:
        stands_in += f"; {versus_built(rec.priced_with, built)}"
    # newuser61 item 6: a derived host price the catalog marks unsourced read as "derived, 2024-08-22" alone
    believed = ", the price believed, not sourced (specgen catalog purchases)" if rec.usd_unsourced else ""
    if rec.derived_from:  # newuser80 item 4: a derivation from a cited quote is said as one, not as "not sourced"
        believed = f"; {rec.derived_from}"
    return f"{rec.id} ${rec.usd:,.0f} ({rec.basis}{end}, {rec.as_of}{stands_in}{believed})"


def versus_built(priced: PricedWith, built: BuiltHost) -> str:
    """The node built beside a comparable system's priced configuration, and which way that moves the capex.

    Fewer CPU cores or less RAM priced means the estimate likely understates the node's parts; more, that it
    likely overstates them. Memory modules are sold in binary units (a "16 GB" DIMM holds 16 GiB), so the
    listing's RAM in GB is compared as GiB. Extras bundled into the price (support, licences) raise it.
    Unpublished figures leave the comparison unknown.
    """
    here = f"the node here has {built.cpu}, {built.cpu_cores} cores, and {ram_text(built.ram_gib)}"
    if priced.cpu_cores is None or priced.ram_gb is None or built.ram_gib is None:
        return f"{here}: how capex compares is not known"
    parts = (("CPU cores", priced.cpu_cores, built.cpu_cores), ("RAM", priced.ram_gb, built.ram_gib))
    fewer = " and ".join(name for name, listed, node in parts if listed < node)
    more = " and ".join(name for name, listed, node in parts if listed > node)
    extras = "; bundled extras raise the price" if priced.includes else ""
    if fewer and more:
        return f"{here}: capex may err either way on CPU cores and RAM{extras}"
    if fewer:
        return f"{here}: capex likely understates its {fewer}" + (f"{extras}, the other way" if extras else "")
    if more:
        return f"{here}: capex likely overstates its {more}" + (f"{extras} further" if extras else "")
    return f"{here}: the same CPU cores and RAM{extras}"


def in_colocation(platform: PlatformSpec, owned: bool) -> bool:
    """Whether a bare-metal node pays colocation rent and the facility's PUE.

    The plan packs every bare-metal node into colocation racks, a tower on a rack shelf, and its costs assume
    colocation for what it buys, so a bought workstation pays the rack's rent and cooling like any other server
    (newuser23 item 2: bought towers paid neither and beat a rack server that cost less). A workstation the team
    already owns (``hardware.inventory``: "a home or office server", or a custom server of ``kind: workstation``)
    stays where it is: nothing in the workload says it is racked, so it pays its energy alone, at PUE 1.
    """
    return platform.kind != "workstation" or not owned


#: What the default colocation rent is (:data:`generator.sizing.constants.CONSTANT_DOCS`): CBRE's average asking rent
#: for 250-500 kW requirements, a wholesale figure a one-rack retail contract may not get (newuser39 item 5).
COLOCATION_SCOPE = "CBRE's average asking rent for 250-500 kW"


def colocation_scope(consts: Constants) -> str:
    """`` (<scope>)`` where the colocation rent is the default, whose source is a wholesale asking rent; else ``''``."""
    default = Constants._field_defaults["colocation_usd_per_kw_month"]
    return f" ({COLOCATION_SCOPE})" if consts.colocation_usd_per_kw_month == default else ""


def energy_usd_per_month(kw: float, consts: Constants, pue: float = 1.0) -> float:
    """A month's energy of ``kw`` drawn at ``power_utilization`` of it, ``pue`` and ``energy_usd_per_kwh``."""
    return kw * consts.power_utilization * pue * consts.energy_usd_per_kwh * HOURS_PER_MONTH


def owned_opex_usd_per_month(platform: PlatformSpec, power_w: int, consts: Constants, owned: bool = False) -> tuple[float, str]:
    """Energy and colocation of one bare-metal node per month, and how they were formed (``owned``: already owned)."""
    kw = power_w / 1000
    racked = in_colocation(platform, owned)
    pue = consts.pue if racked else 1.0
    energy = energy_usd_per_month(kw, consts, pue)
    colo = kw * consts.colocation_usd_per_kw_month if racked else 0.0
    text = (
        f"energy {kw:.2f} kW x {consts.power_utilization:g} utilisation (assumed) x PUE {pue:g}"
        f" x ${consts.energy_usd_per_kwh:g}/kWh = ${energy:,.0f}/month"
    )
    if racked:
        text += (
            f"; colocation {kw:.2f} kW drawn x ${consts.colocation_usd_per_kw_month:g}/kW-month"
            f"{colocation_scope(consts)} = ${colo:,.0f}/month"
        )
        if platform.kind == "workstation" and colo:
            # newuser54 item 9: a home buyer read $184/month of rent a desk does not charge, with no word of the way out
            text += (
                " (a workstation bought is costed racked in colocation like every server bought; for one at home or in "
                "an office set constants colocation_usd_per_kw_month: 0 and pue: 1)"
            )
    else:
        text += " (an owned workstation: at home or in an office, no colocation)"
    return energy + colo, text


#: The price basis of a node priced by the workload's ``prices:`` map.
GIVEN_RATE = "workload prices (USD per node-hour, all-in)"
#: What a bare-metal server rented from a provider is said to be (a catalog rental record, or a ``prices:`` rate).
RENTED_BY_THE_HOUR = (
    ": rented by the hour, not bought: the provider's server in its datacentre, in no rack of this plan "
    "(no capex, colocation or energy of yours)"
)


def rented_on_bare_metal(wl: Workload, platform: PlatformSpec, gpu_id: str, gpus: int) -> bool:
    """Whether ``wl``'s bare-metal servers of ``gpus`` x ``gpu_id`` on ``platform`` are rented from a provider.

    The one rule of what is rented rather than bought or owned: such a server is the provider's, in its datacentre
    (no capex, no rack, circuit, ``max_racks``, colocation or energy of the user's; newuser39 item 3). On a cloud
    nothing is rented in this sense (its racks are the cloud's; its price is rent anyway): False.

    - Priced under the workload's ``prices:``: rented by the hour (fuzz32 item 2: the README says a platform priced per
      hour is rented, not bought, Budgets), unless the workload owns servers of the platform (``hardware.inventory``):
      its rate is then their own all-in cost of a server in their rack.
    - Bought where the workload gives its purchase price (``purchase_prices``).
    - Else rented where the catalog has only the server's rent (a rental record, e.g. Lambda's on-demand GH200).
    """
    if wl.hardware.provider != "baremetal":
        return False
    if platform.id in wl.prices:
        return _rented_at_given_rate(wl, platform.id)
    if given_purchase(wl, platform.id, gpu_id, gpus) is not None:  # quoted: bought and racked (review39 item 1)
        return False
    return _rented_in_catalog(platform, gpu_id, gpus)


def _rented_in_catalog(platform: PlatformSpec, gpu_id: str, gpus: int) -> bool:
    """Whether :func:`_catalog_node_cost` (in no region) rents the node: ``.rented is not None``, its node not costed.

    Its rule: a bare-metal node with a rental record (in no region, every record) is rented where it has no purchase
    price or only why it has none (a text); with a price it is bought (``.rented`` None), and without a rental record
    or on a cloud nothing is rented. Every node's check asked it, and a whole node cost (its capex and running costs'
    texts at the default constants) was formed for the answer (speed100).
    """
    if platform.provider != "baremetal":
        return False
    rent = _rent_records(platform.id, gpu_id, gpus, None)
    return _rents_on_bare_metal(rent, _purchase_price(platform.id, max(platform.gpu_counts), gpu_id, gpus, None))


def _rents_on_bare_metal(rent: tuple[PriceRecord, ...], bought: tuple[float, str, bool] | str) -> bool:
    """The rent-or-buy rule of a bare-metal node, :func:`_catalog_node_cost`'s and :func:`_rented_in_catalog`'s.

    ``rent``: its rental records; ``bought``: its purchase price (:func:`_purchase_price`: a price, or why it has none).
    Rented where the catalog rents it and has no purchase price; bought where it has one; else unpriced (review77 item 9).
    """
    return bool(rent) and isinstance(bought, str)


def _rented_at_given_rate(wl: Workload, platform_id: str) -> bool:
    """A bare-metal platform priced under ``prices:`` that the workload owns no server of (:func:`rented_on_bare_metal`)."""
    return (
        wl.hardware.provider == "baremetal"
        and platform_id in wl.prices
        and not any(g.platform_id == platform_id for g in wl.hardware.inventory)
    )


def rented_at_given_rates(wl: Workload) -> frozenset[str]:
    """The platforms rented at the workload's ``prices:`` rate: those a server beyond the owned ones is not bought of.

    fuzz33 item 1: an owned platform priced under ``prices:`` buys the servers beyond the owned ones (at the catalog's
    purchase price), so what forbids buying a server (not sold new, a GeForce card in colocation) holds for it.
    """
    return frozenset(p for p in wl.prices if _rented_at_given_rate(wl, p))


def node_cost(
    wl: Workload,
    platform: PlatformSpec,
    gpu: GpuSpec,
    gpus: int,
    power_w: int,
    consts: Constants,
    built: BuiltHost | None = None,
    spot: bool = False,
) -> NodeCost:
    """Cost of one node: the workload's ``prices:`` override, else the catalog (rent or purchase + running costs).

    ``built`` (the node's CPUs and RAM) lets a comparable-system estimate say how it differs from the node. A ``spot``
    node takes the workload's ``<platform>@spot`` rate where given (:func:`given_rate`), else the catalog's spot rate
    in the pricing region where it holds one (:func:`catalog_spot_rate`), before any on-demand rate.
    """
    given = given_rate(wl.prices, platform.id, spot)  # first: an owned platform's own all-in rate (its quote buys more)
    if spot and (rated := _catalog_spot_cost(wl, platform.id, given)) is not None:
        return rated
    if given is None and platform.provider == "baremetal" and (quote := given_purchase(wl, platform.id, gpu.id, gpus)):
        return _purchase_node_cost(platform, quote, power_w, consts)  # newuser61 item 1: no field took a quote
    if given is not None:
        usd, key = given
        if key != platform.id:
            return NodeCost(usd, None, usd * HOURS_PER_MONTH, f"{GIVEN_RATE}, spot rate prices.{key}")
        if not rented_on_bare_metal(wl, platform, gpu.id, gpus):
            return NodeCost(usd, None, usd * HOURS_PER_MONTH, GIVEN_RATE)
        # fuzz32 item 2: on bare metal an hourly rate is a rental, as a catalog rental record billed by the hour is
        return NodeCost(usd, None, usd * HOURS_PER_MONTH, f"{GIVEN_RATE}{RENTED_BY_THE_HOUR}", rented="hour")
    return _catalog_node_cost(platform, gpu.id, gpus, power_w, consts, built, pricing_region(wl))


@lru_cache(maxsize=65_536)
def _catalog_node_cost(
    platform: PlatformSpec,
    gpu_id: str,
    gpus: int,
    power_w: int,
    consts: Constants,
    built: BuiltHost | None = None,
    region: str | None = None,
) -> NodeCost:
    """:func:`node_cost` from the catalog, formed once per distinct node (planning prices the same node many times).

    A cloud instance is rented at its price in ``region`` alone (:func:`~generator.planner.price_region.pricing_region`),
    so that every option of a plan is priced in one region; one the catalog prices only elsewhere is unpriced.
    """
    rent = _rent_records(platform.id, gpu_id, gpus, region)
    if platform.provider != "baremetal":  # a cloud instance: rented, at the region's price or none
        if not rent:
            elsewhere = unpriced_in_region_why(platform.provider, platform.id, region) if region else None
            return NodeCost(None, None, None, None, why=elsewhere or f"no published price for {platform.id}")
        per_hour, basis = _rent_rate(rent[0])
        return NodeCost(per_hour, None, per_hour * HOURS_PER_MONTH, basis)
    bought = _purchase_price(platform.id, max(platform.gpu_counts), gpu_id, gpus, built)
    if _rents_on_bare_metal(rent, bought):
        rec = rent[0]
        per_hour, basis = _rent_rate(rec)
        basis += RENTED_BY_THE_HOUR if rec.unit == "hour" else RENTED_BY_THE_HOUR.replace("by the hour", "by the month")
        return NodeCost(per_hour, None, per_hour * HOURS_PER_MONTH, basis, rented=rec.unit)
    if isinstance(bought, str):
        return NodeCost(None, None, None, None, why=bought)
    capex, capex_basis, estimated = bought
    return _bought_node_cost(platform, capex, capex_basis, power_w, consts, estimated)


def catalog_spot_rate(platform_id: str, region: str | None) -> PriceRecord | None:
    """The catalog's spot rate of ``platform_id`` in ``region`` (None: any, the first by id), or None where it holds none.

    review80 item 14: the GCP price file the on-demand prices cite gives each type's spot rate beside them.
    """
    return next(
        (
            p
            for p in _by_id("spot_prices", catalog.spot_prices())
            if p.platform_id == platform_id and (region is None or p.region == region)
        ),
        None,
    )


def _catalog_spot_cost(wl: Workload, platform_id: str, given: tuple[float, str] | None) -> NodeCost | None:
    """A spot node's cost at the catalog's spot rate, where the workload gives no ``@spot`` rate and the catalog one.

    The workload's plain key is an on-demand (or committed) rate (``capacity_type``), which spot bills less than: the
    catalog's spot rate is the nearer figure for a spot node, and the plain key prices it only where the catalog holds
    no spot rate for the type in the region.
    """
    if given is not None and given[1] != platform_id:
        return None  # the workload's own <platform>@spot rate
    rec = catalog_spot_rate(platform_id, pricing_region(wl))
    if rec is None:
        return None
    return NodeCost(rec.usd, None, rec.usd * HOURS_PER_MONTH, f"catalog {rec.id} ({rec.unit}), its spot rate")


def _rent_rate(rec: PriceRecord) -> tuple[float, str]:
    """A rental record's price an hour and its basis."""
    return (rec.usd if rec.unit == "hour" else rec.usd / HOURS_PER_MONTH), f"catalog {rec.id} ({rec.unit})"


#: How a pool's ``price_basis`` starts where a catalog price (or spot rate) costs it: ``catalog <price id> (<unit>)``.
CATALOG_BASIS = "catalog "


def costed_catalog_price(pool: Pool) -> PriceRecord | None:
    """The catalog price record (on-demand or spot) ``pool`` is costed at, read off its basis; None: none is."""
    basis = pool.price_basis or ""
    if not basis.startswith(CATALOG_BASIS):
        return None
    key = basis.removeprefix(CATALOG_BASIS).split(" ", 1)[0]
    return catalog.prices().get(key) or catalog.spot_prices().get(key)


@cache
def _rent_records(platform_id: str, gpu_id: str, gpus: int, region: str | None = None) -> tuple[PriceRecord, ...]:
    """The catalog's rental prices of ``platform_id`` with ``gpus`` x ``gpu_id`` in ``region`` (None: any), by record id.

    The catalog is loaded once per process. A record without a region (a dedicated server's monthly rent) is kept
    only where no region is asked. A record that names its GPU prices that GPU alone (newuser39 item 4).
    """
    return tuple(
        p
        for p in _by_id("prices", catalog.prices())
        if p.platform_id == platform_id
        and p.unit != "purchase"
        and p.prices(gpu_id, gpus)
        and (region is None or p.region == region)
    )


def server_rent(platform_id: str, gpu_id: str, gpus: int) -> PriceRecord | None:
    """The catalog rental record a bare-metal server of ``gpus`` x ``gpu_id`` is rented at (:attr:`Pool.rented`), or None.

    The one :func:`node_cost` prices it by (the first by record id): its provider (``rented_from``) and source say
    where the user launches the server.
    """
    rent = _rent_records(platform_id, gpu_id, gpus)
    return rent[0] if rent else None


def in_workload_racks(wl: Workload, platform: PlatformSpec, gpu_id: str, gpus: int) -> bool:
    """Whether a node of ``gpus`` x ``gpu_id`` on ``platform`` stands in ``wl``'s racks, so that their limits apply.

    A cloud's racks are its own, as are those of a provider a bare-metal server is rented from
    (:func:`rented_on_bare_metal`). The candidates' node checks and the early rack checks both ask this (review 27
    item 1), as packing does through ``Pool.rented``.
    """
    return wl.hardware.provider == "baremetal" and not rented_on_bare_metal(wl, platform, gpu_id, gpus)


def fleet_cost(
    wl: Workload,
    platform: PlatformSpec,
    gpu: GpuSpec,
    gpus: int,
    power_w: int,
    consts: Constants,
    nodes: int,
    owned: int,
    built: BuiltHost | None = None,
    spot: bool = False,
) -> NodeCost:
    """Cost of ``nodes`` servers of which ``owned`` are already owned (they cost their running costs only).

    ``built`` (the node's CPUs and RAM) lets a comparable-system estimate say how it differs from the node.
    On a platform the workload owns and prices under ``prices:`` (its own all-in rate, not in
    :func:`rented_at_given_rates`), the owned servers cost that rate and the servers beyond them are bought at the
    catalog's purchase price, as on an owned platform it does not price (fuzz33 item 1: they cost nothing up front and passed
    ``max_capex_usd: 1``).
    """
    bought = nodes - owned
    given = given_rate(wl.prices, platform.id, spot)  # spot: never owned, never on bare metal (refused at load)
    if spot and (rated := _catalog_spot_cost(wl, platform.id, given)) is not None:
        return _times(rated, nodes)
    rate = None if given is None else given[0]
    # fuzz33 item 1: a bare-metal platform the workload owns and prices buys its servers beyond the owned ones
    owned_at_rate = rate is not None and wl.hardware.provider == "baremetal" and not _rented_at_given_rate(wl, platform.id)
    quoted = platform.provider == "baremetal" and given_purchase(wl, platform.id, gpu.id, gpus) is not None
    if owned == 0 and (rate is None or owned_at_rate):
        if quoted:  # the workload's own purchase price (node_cost reads it)
            return _times(node_cost(wl, platform, gpu, gpus, power_w, consts, built), nodes)
        return _catalog_fleet_cost(platform, gpu.id, gpus, power_w, consts, nodes, built, pricing_region(wl))
    if rate is not None and not (owned_at_rate and bought):
        return _times(node_cost(wl, platform, gpu, gpus, power_w, consts, built, spot), nodes)
    if rate is not None:  # fuzz33 item 1: the owned ones at the workload's all-in rate, the rest bought
        owned_month, owned_basis = rate * HOURS_PER_MONTH * owned, f"{owned} owned server(s) at {GIVEN_RATE}"
        # the servers bought beyond the owned ones: at the workload's quote where it gives one (review39 item 7)
        quote = given_purchase(wl, platform.id, gpu.id, gpus)
        per_node = (
            _purchase_node_cost(platform, quote, power_w, consts)
            if quote is not None
            else _catalog_node_cost(platform, gpu.id, gpus, power_w, consts, built, pricing_region(wl))
        )
    else:
        opex, opex_basis = owned_opex_usd_per_month(platform, power_w, consts, owned=True)
        owned_month, owned_basis = opex * owned, f"{owned} owned server(s): running costs only, per server ({opex_basis})"
        if bought == 0:
            return NodeCost(opex * nodes / HOURS_PER_MONTH, 0.0, opex * nodes, owned_basis)
        per_node = node_cost(wl, platform, gpu, gpus, power_w, consts, built)
    if per_node.usd_per_hour is None or per_node.capex_usd is None or per_node.opex_usd_per_month is None:
        return NodeCost(None, None, None, None, why=f"{bought} server(s) to buy: {per_node.why or 'no purchase price'}")
    capex = per_node.capex_usd * bought
    # the servers bought run at their own opex: a bought tower is racked, an owned one is not (in_colocation)
    running = owned_month + per_node.opex_usd_per_month * bought
    per_month = capex / consts.amortization_months + running
    basis = f"{owned_basis}; {bought} bought: {per_node.basis}"
    return NodeCost(per_month / HOURS_PER_MONTH, capex, running, basis, per_node.estimated)


@lru_cache(maxsize=65_536)
def _catalog_fleet_cost(
    platform: PlatformSpec,
    gpu_id: str,
    gpus: int,
    power_w: int,
    consts: Constants,
    nodes: int,
    built: BuiltHost | None = None,
    region: str | None = None,
) -> NodeCost:
    """:func:`fleet_cost` of ``nodes`` servers priced by the catalog (rented in ``region``), once per distinct fleet."""
    return _times(_catalog_node_cost(platform, gpu_id, gpus, power_w, consts, built, region), nodes)


def _times(cost: NodeCost, nodes: int) -> NodeCost:
    def scaled(value: float | None) -> float | None:
        return value * nodes if value is not None else None

    return NodeCost(
        scaled(cost.usd_per_hour),
        scaled(cost.capex_usd),
        scaled(cost.opex_usd_per_month),
        cost.basis,
        cost.estimated,
        cost.why,
        cost.rented,
    )
