"""Why a deployment's layout was chosen: the purchase it makes, tie breaks, runners-up, the GPUs left out and why."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from generator.planner.blocked import NOT_SHARED_HERE, OVER_LIMIT, PINNED_OUT, Blocked
from generator.planner.candidates import limits_text, ranking_candidate, replica_host_count
from generator.planner.inference import ReplicaShape
from generator.planner.nodes import NO_GPU_FABRIC
from generator.planner.option import Option, replicas_rps, sustained_rps
from generator.planner.options import allowed_hardware, ties_before_headroom, unsold_everywhere_why, zone_lacks_gpu_why
from generator.planner.plan import Candidate, Finding
from generator.planner.reason_text import _percent
from generator.planner.tco import billed_per_run, cost_text, gpus_acquired
from generator.words import listed
from generator.workload.models import Workload


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
        for gpu_id in given:
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
                # the GPU named by value (fix191): a reordered hardware.gpus keeps the finding's field
                Finding("info", "gpu-no-layout", f"deployment {name}: no layout on {gpu_id}: {why}", f"hardware.gpus[={gpu_id}]")
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
    if unsold:
        return f"{unsold}, so it is not bought"
    return zone_lacks_gpu_why(wl, gpu_id) or "no allowed platform of this provider offers it"


def slo_default_reason(slo_defaults: list[str]) -> str:
    """The reason saying which default latency targets a service was planned against."""
    return "latency targets not given, planned against " + " and ".join(slo_defaults)


#: The lead of a co-located choice's line where it is dearer alone than its runner-up (the fleet's reason follows).
FLEET_NOT_ALONE = "chosen for the fleet, not as a pool of its own"


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
    chosen = FLEET_NOT_ALONE if cheaper_alone else f"chosen by {objective}"
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
