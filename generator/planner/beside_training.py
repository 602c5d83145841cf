"""A training job planned on the whole GPUs an owned server's service leaves over, where the job would buy or be refused.

fix182 (newuser94, newuser98): a lab owning a server whose service's rate needs 2 of its 8 H100 asked for a LoRA of an
8B model (about 1.6 GPU-hours a month); the planner kept every job on servers of its own, so with buying allowed it
bought a server for it ($197,000 for newuser98's DGX) and with ``buy: false`` it refused it. Where the job's best
layout buys servers or it has none, and one service alone holds owned servers of a kind whose GPUs its rate does not
need (the replicas the search filled them with past the rate, or idle), the job is planned there: its layout re-timed
by the training search on those GPUs (:class:`~generator.planner.idle_degrees.IdleGpus`), within its deadline and its
runs a month, whose host RAM and drives the server holds beside the service's. The service keeps the replicas its
rate needs (:func:`~generator.planner.slo.replicas_needed`); those past it are what the job displaces. A free owned
server, a service in shares of GPUs, split, spread or on spot capacity, a server two services share, a job of a
``run_after`` chain or one naming a ``pool`` keep the rules they had.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

from generator.named_tuple import NamedTuple
from generator.planner.idle_degrees import IdleGpus
from generator.planner.inference import ReplicaShape
from generator.planner.inventory import ServerKey
from generator.planner.option import Option, sustained_rps
from generator.planner.plan import Finding, Pool
from generator.planner.slo import rate_replicas, replicas_needed
from generator.planner.spread import option_tolerant, spread_floor
from generator.sizing.constants import Constants
from generator.units import GIB, HOURS_PER_MONTH, hours_text
from generator.words import counted, listed
from generator.workload import LoadedWorkload
from generator.workload.capacity_type import SPOT
from generator.workload.models import InferenceDeployment, TrainingDeployment, Workload

#: The chosen entries of a search pass: (deployment index, option, its runners-up).
Chosen = list[tuple[int, Option, list[Option]]]


class Beside(NamedTuple):
    """A training job's layout on the GPUs an owned server's service leaves, and the service as it then runs."""

    #: The job's option (``beside``: the service's index).
    job: Option
    #: Where in the pass's chosen list the service stands, and its option with the replicas its rate needs.
    at: int
    service: Option


def free_by_node(opt: Option, replicas: int) -> list[int] | None:
    """Each server's GPUs ``replicas`` of ``opt``'s layout leave, packed server by server; None: not whole replicas a server."""
    c = opt.candidate
    per_node, gpus = c.gpus_per_node, opt.replica_shape.par.gpus
    if gpus > per_node or per_node % gpus:
        return None
    slots = per_node // gpus
    free = []
    for node in range(c.nodes):
        held = min(slots, max(0, replicas - node * slots))
        free.append(per_node - held * gpus)
    return free


def _eligible(wl: Workload, index: int, opt: Option) -> bool:
    """Whether a chosen deployment is a service whose GPUs a job may share: whole GPUs of owned servers alone, one kind."""
    dep, c = wl.deployments[index], opt.candidate
    if not isinstance(dep, InferenceDeployment) or not isinstance(opt.shape, ReplicaShape) or dep.pool is not None:
        return False
    if opt.parts or c.shares_per_gpu or not c.owned_nodes or c.nodes != c.owned_nodes or opt.hardware.spot:
        return False
    return spread_floor(opt) <= 1  # a service spread over servers (min_replicas) keeps them as planned


def _packed(widths: Sequence[int], servers: int, per_node: int) -> list[int] | None:
    """Each server's GPUs left once replicas of ``widths`` GPUs are packed widest first; None: they do not fit."""
    free = [per_node] * servers
    for width in sorted(widths, reverse=True):
        at = next((n for n, left in enumerate(free) if left >= width), None)
        if at is None:
            return None
        free[at] -= width
    return free


def _holders(
    wl: Workload, chosen: Chosen, owned: Mapping[ServerKey, int], share: bool, options_of: Mapping[int, Sequence[Option]]
) -> list[tuple[list[tuple[int, int, Option]], list[int]]]:
    """The owned server kinds services alone hold in ``chosen``: their services, and each server's GPUs left.

    Each kind's services as (place in ``chosen``, index, option kept).

    Where each service has servers of its own (``share`` False), a kind one service holds: it keeps the replicas its
    rate needs (its layout before the search filled the servers). Where services share servers, every service on the
    kind as chosen, packed widest first on the owned servers their GPUs fill.
    """
    by_kind: dict[ServerKey, list[tuple[int, int, Option]]] = {}
    ruled: set[ServerKey] = set()
    seen: set[int] = set()
    for at, (index, opt, _) in enumerate(chosen):
        if id(opt) in seen:  # a chain's jobs hold one option
            continue
        seen.add(id(opt))
        if not _eligible(wl, index, opt):
            ruled |= {part.server_kind for part in opt.pieces}
            continue
        by_kind.setdefault(opt.server_kind, []).append((at, index, opt))
    out = []
    for kind, members in sorted(by_kind.items()):
        per_node = kind[2]
        if kind in ruled:
            continue
        if not share:
            if len(members) > 1:
                continue
            at, index, opt = members[0]
            dep = wl.deployments[index]
            assert isinstance(dep, InferenceDeployment)
            assert isinstance(opt.shape, ReplicaShape)
            needed = replicas_needed(dep.inference, opt.shape.planned_requests_per_s, slots=opt.shape.slot_queue)
            # fix187 (newuser100): the replicas nodes_down_tolerated runs (N+k) are kept, never counted free
            if dep.inference.nodes_down_tolerated:
                rate = rate_replicas(dep.inference, opt.shape.planned_requests_per_s, slots=opt.shape.slot_queue)
                needed = max(needed, option_tolerant(opt, dep.inference, rate)[0])
            keep = _unfilled(opt, options_of.get(index, ()))
            free = free_by_node(opt, needed)
            if keep.candidate.replicas != needed or free is None:
                continue  # no layout of the rate's replicas alone to keep
            out.append(([(at, index, keep)], free))
            continue
        widths = [o.replica_shape.par.gpus for _, _, o in members for _ in range(o.candidate.replicas)]
        servers = max(-(-sum(widths) // per_node), *(o.candidate.nodes for _, _, o in members))
        if servers > owned.get(kind, 0):
            continue  # the pool would buy servers: not the owned GPUs left
        packed = _packed(widths, servers, per_node)
        if packed is not None:
            out.append((members, packed))
    return out


def _unfilled(opt: Option, enumerated_options: Sequence[Option]) -> Option:
    """The option whose ``filled`` is ``opt`` (the layout with the replicas the rate needs), or ``opt`` itself."""
    return next((o for o in enumerated_options if o.filled is opt), opt)


def owned_left(chosen: Sequence[tuple[int, Option, object]], owned: Mapping[ServerKey, int]) -> dict[ServerKey, int]:
    """The owned servers of each kind no deployment in ``chosen`` holds (a chain's one option once).

    Services sharing a kind's servers hold the servers their GPUs fill together (at least the most one spans).
    """
    solo: dict[ServerKey, int] = {}
    shared_gpus: dict[ServerKey, Fraction] = {}
    shared_nodes: dict[ServerKey, int] = {}
    for opt in {id(o): o for _, o, _ in chosen}.values():
        if opt.beside is not None:
            continue
        for part in opt.pieces:
            kind, c = part.server_kind, part.candidate
            if not part.shares_servers:
                solo[kind] = solo.get(kind, 0) + c.owned_nodes
                continue
            shared_gpus[kind] = shared_gpus.get(kind, Fraction(0)) + part.gpus_used
            shared_nodes[kind] = max(shared_nodes.get(kind, 0), c.nodes)
    left = {}
    for kind, count in owned.items():
        filled = max(math.ceil(shared_gpus.get(kind, 0) / kind[2]), shared_nodes.get(kind, 0)) if kind[2] else 0
        left[kind] = max(0, count - solo.get(kind, 0) - filled)
    return left


def owned_holds(job_options: Sequence[Option], left: Mapping[ServerKey, int]) -> bool:
    """Whether a layout of the job runs on owned servers alone that are left free: then it is not planned beside.

    fix187 (fix182b's failure): offered beside a service in every pass, a job whose pass left a second owned server
    free (a pass withholding that kind) ranked beside the service, sharing a server the plan does not size together.
    """
    for opt in job_options:
        parts = opt.pieces
        if all(p.candidate.owned_nodes == p.candidate.nodes and p.candidate.nodes <= left.get(p.server_kind, 0) for p in parts):
            return True
    return False


def free_owned_hold(
    loaded: LoadedWorkload,
    consts: Constants,
    index: int,
    chosen: Sequence[tuple[int, Option, object]],
    owned: Mapping[ServerKey, int],
    listed: Sequence[Option],
    sizes: object = None,
) -> bool:
    """Whether the owned servers ``chosen`` (the job's own choice left out) leaves free hold a layout of job ``index``.

    Its ``platform:`` pin set aside: a pin moves the job, never puts it beside a service while a free owned server of
    another platform would hold it (fix187: otherwise a pinned fleet, the job beside a service, beat the search's, the
    job on the free server, by the job's energy: tests/test_owned_moves.py's pin property). ``listed``: the job's
    layouts the search enumerated (within its pins); another platform's free servers are searched only for a pinned job.
    """
    from generator.planner.training_candidates import training_options

    left = {kind: n for kind, n in owned_left(chosen, owned).items() if n > 0}
    if not left:
        return False
    dep = loaded.workload.deployments[index]
    assert isinstance(dep, TrainingDeployment)
    if owned_holds(listed, left):  # the layouts the pass enumerated (within its pins)
        return True
    others = {kind: n for kind, n in left.items() if dep.platform is not None and kind[0] != dep.platform}
    if not others:  # no pin, or only its own platform's servers free: what the pass enumerated said it
        return False
    found = training_options(loaded.workload, dep, loaded.models[dep.name], consts, [], others, sizes=sizes)  # type: ignore[arg-type]
    return owned_holds(found, others)


def buys(opt: Option) -> bool:
    """Whether a layout buys (or rents) servers: any part on more servers than the owned ones it holds."""
    return any(p.candidate.nodes > p.candidate.owned_nodes for p in opt.pieces)


def _host_fits(job: Option, services: Sequence[Option], consts: Constants) -> bool:
    """Whether one server holds the job's host RAM and files beside the services' (the OS's reserve once).

    Each service counted whole on the server (the most it holds on one: exact on one server, more than its share on
    several).
    """
    node = services[0].node
    ram = consts.host_os_ram_bytes + job.needs.host_ram_bytes + sum(o.needs.host_ram_bytes for o in services)
    if node.ram_gib is not None and ram > node.ram_gib * GIB:
        return False
    files = job.needs.files_bytes + sum(o.needs.files_bytes for o in services)
    return node.nvme_tb is None or files <= node.nvme_tb * 1e12


def _fits(opt: Option, free: list[int], node_gpus: int) -> bool:
    """Whether ``opt`` runs on the ``free`` GPUs: within one server's, or on whole free servers (a fabric where asked)."""
    c = opt.candidate
    if c.gpus_per_node != node_gpus:
        return False
    if c.nodes == 1:
        return max(free, default=0) >= c.gpus
    if opt.needs.needs_fabric and not any(nic.role == "fabric" for nic in opt.node.nics):
        return False
    return sum(n == node_gpus for n in free) >= c.nodes


def beside_choice(
    loaded: LoadedWorkload,
    consts: Constants,
    index: int,
    chosen: Chosen,
    options_of: Mapping[int, Sequence[Option]],
    sizes: object = None,
    *,
    share: bool = False,
    owned: Mapping[ServerKey, int] | None = None,
) -> Beside | None:
    """The job ``index``'s fastest layout on the GPUs a service in ``chosen`` leaves of owned servers; None: none fits.

    ``options_of``: each service's options the pass ranked (to find its layout with the replicas its rate needs);
    ``share``: the pass's services share servers; ``owned``: the owned servers of each kind the pass may use.
    """
    owned = owned or {}
    from generator.planner.idle_training import _fastest  # the finding's choice among layouts that tie
    from generator.planner.options import allowed_hardware
    from generator.planner.training_candidates import training_options

    wl = loaded.workload
    dep = wl.deployments[index]
    if not isinstance(dep, TrainingDeployment) or dep.pool is not None or dep.capacity_type == SPOT:
        return None
    if not dep.training.dataset_tokens:
        return None
    # a job pinned to a platform runs only there (fix182b: a pin to one platform planned it beside a service on another)
    pin = dep.platform
    hardware = {(hw.platform.id, hw.gpu.id): hw for hw in allowed_hardware(wl) if pin is None or hw.platform.id == pin}
    runs = dep.training.runs_per_month
    fitting = []
    holders = _holders(wl, chosen, owned, share, options_of)
    for order, (members, free) in enumerate(holders):
        opt = members[0][2]
        hw = hardware.get((opt.hardware.platform.id, opt.hardware.gpu.id))
        if hw is None or not any(free):
            continue
        per_node = opt.candidate.gpus_per_node
        idle = IdleGpus(max(free), sum(n == per_node for n in free), per_node)
        held = {opt.server_kind: len(free)}
        found = training_options(wl, dep, loaded.models[dep.name], consts, [], held, sizes=sizes, hardware=[hw], idle=idle)  # type: ignore[arg-type]
        for job in found:
            hours = job.candidate.run_hours
            if not hours or not _fits(job, free, per_node) or not job.candidate.owned_nodes:
                continue
            if runs is not None and runs * hours > HOURS_PER_MONTH:
                continue
            if not _host_fits(job, [o for _, _, o in members], consts):
                continue
            fitting.append((hours, job.candidate.gpus, order, job, members, free))  # members: one object a kind
    if not fitting:
        return None
    fastest = _fastest(fitting)  # type: ignore[arg-type]  # the kind's members stand where the finding has a pool
    job = fastest[3]
    at, service_index, service = holders[fastest[2]][0][0]
    return Beside(job._replace(beside=service_index), at, service)


CODE = "training-beside-service"


def _gpu_range(first: int, count: int) -> str:
    return f"GPU {first}" if count == 1 else f"GPUs {first}-{first + count - 1}"


def beside_findings(
    wl: Workload, chosen: Sequence[tuple[int, Option, Sequence[Option]]], pools: Sequence[Pool], consts: Constants
) -> list[Finding]:
    """What each job planned beside services takes of their servers, shares with them, and what they give up.

    With one service in the pool, the GPUs are those its replicas leave as they are packed (its replicas first, from
    GPU 0), and its rate within the SLOs with the replicas past its rate (those filling the server when it has it
    alone) and with those its rate needs; with several, the GPUs are counted, not numbered (the render's device plugin
    places the pods). ``chosen``: (index, option, its runners-up), the first of a job's its best layout on servers of
    its own, where it has one.
    """
    out = []
    options = {i: opt for i, opt, _ in chosen}
    for index, job, rest in chosen:
        if job.beside is None or job.beside not in options:
            continue
        dep = wl.deployments[index]
        pool = next((p for p in pools if dep.name in p.deployments), None)
        if pool is None or not isinstance(dep, TrainingDeployment):
            continue
        services = [d for d in wl.deployments if isinstance(d, InferenceDeployment) and d.name in pool.deployments]
        service = options[job.beside]
        c, per_node = job.candidate, service.candidate.gpus_per_node
        hosts = list(pool.owned_hosts) + [f"node {n + 1}" for n in range(len(pool.owned_hosts), pool.nodes)]
        free = free_by_node(service, service.candidate.replicas) or []
        if len(services) == 1 and c.nodes == 1:
            at = next((n for n, left in enumerate(free) if left >= c.gpus), 0)
            where = f"{_gpu_range(per_node - free[at] if free else 0, c.gpus)} of {hosts[at]}"
        elif len(services) == 1:
            whole = [hosts[n] for n, left in enumerate(free) if left == per_node]
            where = f"all GPUs of {', '.join(whole[: c.nodes])}"
        else:
            of = hosts[0] if pool.nodes == 1 else f"one of its servers ({', '.join(hosts)})"
            where = f"{counted(c.gpus, 'GPU')} of {of}" if c.nodes == 1 else f"{c.nodes} whole servers of {', '.join(hosts)}"
        names = [d.name for d in services]
        theirs = "its" if len(names) == 1 else "their"
        os_ram = consts.host_os_ram_bytes / GIB  # what the plan counts on a server (assemble_node): no engine's apart
        job_ram = job.needs.host_ram_bytes / GIB + os_ram
        service_ram = sum(o.needs.host_ram_bytes for i, o in options.items() if wl.deployments[i].name in names) / GIB
        ram = f" of its {pool.node.ram_gib:,} GiB" if pool.node.ram_gib is not None else ""
        own = rest[0].candidate if rest else None
        bought = own.nodes - own.owned_nodes if own is not None else 0
        instead = (
            f" (its best layout on servers of its own buys {bought} x {own.platform_id}"
            + (f", ${own.capex_usd:,.0f} capex" if own.capex_usd else "")
            + (f", ${own.usd_per_month:,.0f} a month" if own.usd_per_month else "")
            + ")"
            if own is not None and bought
            else " (no owned server is free for it, and none is bought)"
        )
        hours = c.run_hours or 0.0
        runs = dep.training.runs_per_month
        month = f", {runs:g} run(s) a month: {hours_text(runs * hours)} of the {HOURS_PER_MONTH} h" if runs else ""
        quoted = listed([f"'{n}'" for n in names])
        links = "PCIe and NVLink," if pool.node.nvswitch else "PCIe"
        text = (
            f"deployment {dep.name}: planned on {where} in pool {pool.name}, the owned {pool.node.platform_id} "
            f"{quoted} {'serves' if len(names) == 1 else 'serve'} from, on GPUs {theirs} "
            f"{'rate does' if len(names) == 1 else 'rates do'} not need; nothing is bought for it{instead}. "
            f"{hours_text(hours)} a run{month}. It shares the server's host RAM ({job_ram:.2f} GiB: its "
            f"{job_ram - os_ram:.2f} GiB and the OS's {os_ram:.2f} GiB reserve, beside {service_ram:.2f} GiB counted for "
            f"{quoted} ({theirs} LoRA adapters' CPU caches; no more for {theirs} engines' processes than the OS's "
            f"reserve, as on every serving node){ram}), CPUs, {links} and its {pool.node.power_w:,} W: "
            "while it runs, its steps' memory, interconnect and power peaks may slow the replicas beside it (not sized: "
            f"the plan times each alone). {_headroom(wl, service, job.beside, names)}. Kubernetes places its pods by "
            "the pool's labels and the GPUs the device plugin has free; give the job a pool of its own (pool:) to keep "
            "it apart"
        )
        out.append(Finding("info", CODE, text, f"deployments[{index}]"))
    return out


def _headroom(wl: Workload, service: Option, index: int, names: Sequence[str]) -> str:
    """What the services give up to the job: one service its replicas past its rate, several none (GPUs idle)."""
    dep = wl.deployments[index]
    assert isinstance(dep, InferenceDeployment)
    held, filled = service.candidate.replicas, service.filled
    rate = f"{sustained_rps(service):,.2f} req/s within the SLOs for its {dep.inference.requests_per_second:g}"
    if len(names) > 1:
        return f"{listed([f'{n!r}' for n in names])} keep the replicas planned for them; the job takes GPUs they leave idle"
    if filled is None:
        return f"'{dep.name}' keeps its {held} replica(s) ({rate}); the job takes GPUs that were idle"
    return (
        f"'{dep.name}' keeps the {held} replica(s) its rate needs ({rate}), where on the server alone it ran "
        f"{filled.candidate.replicas} ({sustained_rps(filled):,.2f} req/s): the job displaces its "
        f"{filled.candidate.replicas - held} replica(s) past the rate, that headroom for a burst"
    )
