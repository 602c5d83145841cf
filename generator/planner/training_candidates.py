"""Enumerate the feasible options of a training deployment (loaded only when a workload has one)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

from generator.calculator.model_source import ResolvedModel
from generator.planner.batch_job import holds_node_down, option_run_hours, waits_for_runs
from generator.planner.blocked import (
    COMMUNICATION_DOMINATES,
    NO_LAYOUT,
    PAST_DEADLINE,
    PINNED_DEGREE,
    RUNS_PAST_MONTH,
    Blocked,
)
from generator.planner.candidates import (
    SizedOptions,
    blocked_on,
    formed_on,
    layout_option,
    owned_of_kind,
    ranking_candidate,
)
from generator.planner.idle_degrees import IdleGpus
from generator.planner.inventory import ServerKey
from generator.planner.near_tie import near_tie_band, ranked_usd, within_near_tie
from generator.planner.nodes import NodeNeeds, fabric_fits, node_fabric
from generator.planner.option import Option
from generator.planner.options import Hardware, allowed_hardware, for_deployment, node_counts, rank
from generator.planner.step_cache import kept
from generator.planner.tco import charged_runs
from generator.planner.training import (
    OWNED_LAYOUT,
    NearTie,
    TrainingShape,
    job_host_offload,
    layout_step,
    run_hours,
    run_window,
    sized_spec,
    training_shapes,
    training_tp_sizes,
)
from generator.planner.training_comm import StepComm, job_dp_traffic, shared_dp_gbps, step_links
from generator.sizing.checkpoint_load import size_checkpoint_load, training_host_ram
from generator.sizing.constants import Constants
from generator.sizing.frameworks import reserve_short
from generator.sizing.training import OPTIMIZERS, TrainingSetup
from generator.sizing.training_optimizer import gpu_optimizer_step_bytes
from generator.workload.models import Deployment, InferenceDeployment, TrainingDeployment, TrainingSpec, Workload


def _training_needs(
    model: ResolvedModel, shape: TrainingShape, dataset_tokens: int | None, layout: tuple[int, int], consts: Constants
) -> NodeNeeds:
    """Host RAM, dataset and checkpoint space of a training job, per node.

    Host RAM that must be there: what the job holds as it loads the checkpoint
    (:func:`~generator.sizing.checkpoint_load.size_checkpoint_load`: about one shard a GPU's process for LoRA / QLoRA,
    the memory-mapped files being page cache; the whole bf16 model once for full fine-tuning or ZeRO-3 / FSDP), or,
    where more, what the setup offloads to the CPU: optimizer states and fp32 gradients (``offload_optimizer``),
    parameters (``offload_params``), saved activations (``activation_offload``), summed over the node's GPUs. Without
    offload a training job keeps its model states in GPU memory; the trainer processes, data loaders and pinned
    transfer buffers are covered by the OS reserve (``host_os_ram_bytes``) and the model files' page cache is the
    soft ``model_file_bytes``. No multiple of the GPU memory is asked for: a fixed instance is ruled out only when
    what is loaded or offloaded does not fit it.
    """
    gpus_per_node, nodes = layout
    used_per_node = min(gpus_per_node, shape.world)
    load = size_checkpoint_load(model.architecture, shape.setup, consts)
    files = load.checkpoint_bytes
    optimizer = OPTIMIZERS[shape.setup.optimizer]
    if shape.setup.method == "full":
        # a checkpoint holds the weights and the optimizer states (master copy and moments), sharded over the nodes
        per_param = optimizer.weight_bytes + optimizer.state_bytes
        checkpoint = shape.memory.trainable_params * per_param * consts.checkpoints_kept // max(nodes, 1)
    else:
        checkpoint = shape.memory.trainable_params * (4 + optimizer.moment_bytes) * consts.checkpoints_kept  # fp32 adapters
    host, text = training_host_ram(load, shape.memory.host_ram_bytes_per_gpu, used_per_node)
    dataset = (dataset_tokens or 0) * consts.dataset_bytes_per_token
    fabric = nodes > 1 and shape.setup.method == "full"
    # a CPU optimizer step streams the host's memory every step: its DIMMs are kept at their one-a-channel speed where
    # that holds what the job keeps there (newuser76 item 13)
    streamed = shape.setup.offloads_optimizer()
    return NodeNeeds(files, host, dataset, checkpoint, needs_fabric=fabric, host_ram_text=text, host_dram_streamed=streamed)


def training_options(
    wl: Workload,
    dep: TrainingDeployment,
    model: ResolvedModel,
    consts: Constants,
    blocked: list[Blocked],
    free: dict[ServerKey, int] | None = None,
    sizes: SizedOptions | None = None,
    hardware: list[Hardware] | None = None,
    placed: TrainingDeployment | None = None,
    idle: IdleGpus | None = None,
) -> list[Option]:
    """Every feasible (hardware, TP, ZeRO, data parallel, node size) of a training deployment.

    ``sizes`` keeps each hardware's options for the other passes of one plan (the same workload and constants); the
    options and the reasons in ``blocked`` are the same with or without it. ``hardware`` limits the search to some
    servers (by default, those the workload allows). ``placed``: the workload's deployment ``dep`` is a copy of but for
    its training spec (a chain's paced deadline), whose place in the workload keys the options kept for the process.
    ``idle``: a serving pool's idle GPUs (``training-fits-idle-gpus``): every degree they hold is timed too, kept apart
    from the plan's own options.
    """
    spec = dep.training
    options: list[Option] = []
    seen_nodes: dict[tuple[object, ...], object] = {}
    pin_tp = dep.parallelism.tp if dep.parallelism else None
    # kept for the process too (:func:`~generator.planner.candidates.formed_on`): all :func:`_options_on` reads of the
    # job is its training spec and pins, and of the owned servers free those of the hardware's kind;
    # its capacity type is the hardware's own (the spot pair, another object: :func:`~generator.planner.options.for_deployment`)
    at = placed if placed is not None and placed._replace(training=spec) == dep else dep
    formed = formed_on(wl, at, ("training", model, spec, dep.parallelism, consts)) if sizes is not None and idle is None else None
    for hw in for_deployment(dep, allowed_hardware(wl) if hardware is None else hardware):
        tps = training_tp_sizes(model.architecture, spec, hw)
        if pin_tp is not None and pin_tp not in tps:
            why = f"the pinned TP{pin_tp} is not a tensor-parallel size of {hw.platform.id} ({', '.join(map(str, tps))})"
            blocked.append(blocked_on(hw, PINNED_DEGREE, why))
            continue
        owned = owned_of_kind(hw, free)
        key = ("training", dep.name, model, spec, dep.parallelism, hw.platform.id, hw.gpu.id, owned, *([idle] if idle else []))
        found = sizes.get(key) if sizes is not None else None
        if found is None:
            hit = formed.get((id(hw), owned)) if formed is not None else None
            if hit is not None and hit[0] is hw:
                found = hit[1]
            else:
                found = _options_on(wl, dep, model, hw, consts, free, seen_nodes, idle)
                if formed is not None:
                    formed[(id(hw), owned)] = (hw, found)
            if sizes is not None:
                sizes[key] = found
        blocked += found[0]
        options += found[1]
    return options


def _options_on(
    wl: Workload,
    dep: TrainingDeployment,
    model: ResolvedModel,
    hw: Hardware,
    consts: Constants,
    free: dict[ServerKey, int] | None,
    seen_nodes: dict[tuple[object, ...], object],
    idle: IdleGpus | None = None,
) -> tuple[tuple[Blocked, ...], tuple[Option, ...]]:
    """The job's options on ``hw`` with the owned servers ``free``, and why its other layouts there were ruled out."""
    spec = dep.training
    blocked: list[Blocked] = []
    options: list[Option] = []
    # GPUs of this kind owned and free: parameter offload is tried where it lets the job fit them (newuser22 item 4)
    owned_gpus = sum(per * n for (p, g, per), n in (free or {}).items() if (p, g) == (hw.platform.id, hw.gpu.id))
    shapes, reasons = training_shapes(model, spec, hw, consts, dep.parallelism, owned_gpus, idle)
    if not shapes:
        blocked += [blocked_on(hw, NO_LAYOUT, w) for w in reasons[-1:]]
    else:  # the layout the owned GPUs hold and why it broke, ahead of the wider ones (newuser76 item 4)
        blocked += [blocked_on(hw, NO_LAYOUT, w) for w in reasons if OWNED_LAYOUT in w]
    owned = dict(owned_of_kind(hw, free))
    for shape in shapes:
        replicas = shape.world // shape.par.gpus
        for layout in node_counts(hw.platform, shape.par.tp, shape.par.pp, replicas):
            needs = _training_needs(model, shape, spec.dataset_tokens, layout, consts)
            beyond = hw.not_bought is not None and layout[1] > owned.get(layout[0], 0)
            # more servers than are owned, and none bought: a layout its own network or deadline rules out is no reason
            # to list more owned servers (newuser76 item 4: 2- and 4-node layouts of a one-tower inventory were said,
            # network-bound, before the one tower's own reason)
            planned = _with_communication(model, spec, shape, hw, layout, needs, consts, [] if beyond else blocked)
            if planned is None:
                continue
            timed, needs, comm = planned
            hours = f", {timed.hours:.1f} h" if timed.hours else ""
            summary = f"{timed.reason} on {layout[1]} x {hw.platform.id} ({layout[0]} x {hw.gpu.id}){hours}"
            opt = layout_option(wl, hw, layout, needs, timed, replicas, summary, consts, blocked, free, seen_nodes)
            if opt is not None:
                # on servers all owned: charged its runs' energy, not a month of it (fix89)
                c = charged_runs(opt.candidate, hw.platform, spec.runs_per_month, consts)
                options.append(opt._replace(candidate=c, comm=comm, runs_per_month=spec.runs_per_month))
    return tuple(blocked), tuple(_near_ties_settled(options))


def on_pool_host_ram(
    wl: Workload,
    dep: TrainingDeployment,
    model: ResolvedModel,
    opt: Option,
    host_ram_bytes: int,
    consts: Constants,
    free: dict[ServerKey, int] | None = None,
) -> Option | None:
    """``opt`` timed on a node built to hold ``host_ram_bytes`` of host RAM (a ``run_after`` chain's pool, fix121).

    A chain's pool is built for the largest host RAM of its jobs (``assemble``'s ``NodeNeeds``); a job whose CPU
    optimizer step streams host memory runs at the DIMMs that node is built with, which may be two a channel where its
    own RAM would have kept one (review78 item 9: timed at the faster rate the bought node does not run at). ``opt``
    itself where its node is built as it is (no CPU step, or its own RAM the pool's); None where, so timed, it misses
    its deadline.
    """
    shape, needs = opt.shape, opt.needs
    assert isinstance(shape, TrainingShape)
    if not needs.host_dram_streamed or host_ram_bytes <= needs.host_ram_bytes:
        return opt
    hw, layout = opt.hardware, (opt.candidate.gpus_per_node, opt.candidate.nodes)
    spec = dep.training
    planned = _with_communication(model, spec, shape, hw, layout, needs, consts, [], host_ram_bytes)
    if planned is None:
        return None
    timed, needs, comm = planned
    if timed.step == shape.step:
        return opt  # the same DIMMs: the pool's RAM kept one a channel
    hours = f", {timed.hours:.1f} h" if timed.hours else ""
    summary = f"{timed.reason} on {layout[1]} x {hw.platform.id} ({layout[0]} x {hw.gpu.id}){hours}"
    replicas = shape.world // shape.par.gpus
    found = layout_option(wl, hw, layout, needs, timed, replicas, summary, consts, [], free, {})
    if found is None:
        return None
    c = charged_runs(found.candidate, hw.platform, spec.runs_per_month, consts)
    return _told(found._replace(candidate=c, comm=comm, runs_per_month=spec.runs_per_month), shape.near_tie)


def _simplicity(opt: Option) -> tuple[bool, int, int, int, int]:
    """How much a layout asks of the job's set-up and of the GPU's memory (less first).

    First whether a full fine-tune's reserved peak, as measured over the estimate, could pass the 95% line
    (:func:`~generator.sizing.frameworks.reserve_short`; review32 item 1: ZeRO-1 at 70.5 GiB was kept over ZeRO-2 at
    59.3, then warned); then its ZeRO stage (sharded states and parameters a plain data-parallel run does not
    configure), its CPU offloads, its model-parallel GPUs, and the bytes it holds per GPU.
    """
    assert isinstance(opt.shape, TrainingShape)
    setup, total = opt.shape.setup, opt.shape.memory.per_gpu.total
    short = reserve_short(setup.method, total, opt.hardware.gpu.memory_bytes)
    return (short, setup.zero_stage, cpu_offloads(setup), opt.shape.par.tp * opt.shape.par.pp, total)


def cpu_offloads(setup: TrainingSetup) -> int:
    """How many of its model states and activations a setup offloads to the CPU."""
    return int(setup.offload_optimizer) + int(setup.offload_params) + int(bool(setup.activation_offload))


def _near_tie(opt: Option, fastest: Option) -> bool:
    """Whether ``opt``'s hours, price an hour, capex and power are within :data:`NEAR_TIE_FRACTION` of ``fastest``'s."""
    a, b = opt.candidate, fastest.candidate
    return (
        within_near_tie(a.run_hours, b.run_hours)
        and within_near_tie(a.usd_per_hour, b.usd_per_hour)
        and within_near_tie(a.capex_usd, b.capex_usd)
        and within_near_tie(a.power_compared_w or a.power_w, b.power_compared_w or b.power_w)
    )


def _near_ties_settled(options: list[Option]) -> list[Option]:
    """``options`` without the layouts a simpler one on the same servers nearly ties (:data:`NEAR_TIE_FRACTION`).

    On each server count, the layouts near the fastest one (:func:`_near_tie`) are a near tie; the simplest of them
    (:func:`_simplicity`) is kept, told which layout it was kept over, and the near-tied layouts less simple than it
    that are faster, or short of headroom where it is not, are left out.
    """
    by_servers: dict[tuple[int, int], list[Option]] = {}
    for opt in options:
        if opt.candidate.run_hours:
            by_servers.setdefault((opt.candidate.gpus_per_node, opt.candidate.nodes), []).append(opt)
    dropped: set[int] = set()
    kept_over: dict[int, NearTie] = {}
    for group in by_servers.values():
        fastest = min(group, key=lambda o: o.candidate.run_hours or 0.0)
        near = [o for o in group if _near_tie(o, fastest)]
        simplest = min(near, key=_simplicity)
        # the faster ones, which the ranking would take, and those short of headroom where the kept one is not; one
        # as fast and as safe is a tie the ranking already settles (the layout searched first)
        kept_hours = (simplest.candidate.run_hours or 0.0) * (1 - 1e-9)
        passed = [
            o
            for o in near
            if _simplicity(o) > _simplicity(simplest) and ((o.candidate.run_hours or 0.0) < kept_hours or _simplicity(o)[0])
        ]
        if passed:
            dropped.update(id(o) for o in passed)
            over = min(passed, key=lambda o: o.candidate.run_hours or 0.0)
            assert isinstance(over.shape, TrainingShape)
            kept_over[id(simplest)] = NearTie(over.shape, over.candidate.run_hours or 0.0)
    return [_told(opt, kept_over.get(id(opt))) for opt in options if id(opt) not in dropped]


#: An option's hours a run: a training job's :attr:`~generator.planner.plan.Candidate.run_hours`, a batch job's
#: (:func:`~generator.planner.batch_job.option_run_hours`); None where it states none.
RunHours = Callable[[Option], float | None]


def own_run_hours(opt: Option) -> float | None:
    """A training job's (or chain's) hours a run, as its candidate states them."""
    return opt.candidate.run_hours


def near_tie_rule(dep: Deployment) -> tuple[RunHours, Callable[[Option], bool] | None] | None:
    """How a deployment's near tie on cost is settled: its options' hours a run, and (a spot batch job's) ``holds``.

    A training job's (or chain's) by its layouts' run hours (acc104 item 4, fix121); a batch job's by its runs' hours
    (fix137: its spot layouts cost about the same GPU-hours whatever the GPU count, as a rented training job's do), on
    spot capacity its deadline with the node holding the most of its replicas reclaimed first
    (:func:`~generator.planner.batch_job.holds_node_down`). None for a service, which has no run to wait for.
    """
    if isinstance(dep, TrainingDeployment):
        return own_run_hours, None
    if not waits_for_runs(dep) or not isinstance(dep, InferenceDeployment):
        return None
    spec = dep.inference
    holds = functools.partial(holds_node_down, spec) if dep.capacity_type == "spot" else None
    return functools.partial(option_run_hours, spec), holds


def cost_near_ties_settled(
    ranked: list[Option],
    key: Callable[[Option], tuple[object, ...]],
    hours: RunHours = own_run_hours,
    holds: Callable[[Option], bool] | None = None,
) -> list[Option]:
    """A training job's (or chain's, or batch job's) options in the cost objective's order with its near tie on cost settled.

    ``ranked``: sorted by ``key`` (:func:`~generator.planner.candidates.ranking_key` under ``cost``). The options at its
    head whose cost is within :data:`NEAR_TIE_FRACTION` of the cheapest one's (and that take owned servers as it does)
    are a near tie, closer than the step model tells them apart: the fewest servers come first (one NVLink server over
    GPUs on several joined by a front-end network: the simpler launch, as :func:`_near_ties_settled` keeps the simpler
    layout), then on as many servers the shorter run (the wall-clock hours a user waits for each run, where the price
    does not tell the options apart), then the cheaper. Hours within :data:`NEAR_TIE_FRACTION` of the fastest on as
    many servers are themselves a near tie, settled by cost (the order as ranked). The rest keep their order.
    acc104 item 4: rented per run, every data-parallel width costs about the same GPU-hours, and the adapters' AdamW
    replicated on each GPU made two single-GPU instances 0.02% cheaper than one 8-GPU one, so a LoRA run of 8.5 h was
    chosen over one of 2.1 h at $117 a run either way; fix121: one 1-GPU instance was kept over one 8-GPU instance of
    the same family at the same cost a run, the 8-GPU one 2-8x faster.

    A near tie is not transitive: it is defined against the cheapest option (and the hours against the fastest on as
    many servers), as :func:`_near_ties_settled` defines a layout's against the fastest on its servers, so the order is
    total and deterministic. An option without run hours (no ``dataset_tokens``) in the tie leaves the order as ranked.

    ``hours``: an option's hours a run (a batch job's: fix137, its runs' hours, as its reason states them). ``holds``:
    where given (a batch job on spot capacity), whether the option keeps its deadline with the node holding the most
    of its replicas reclaimed (:func:`~generator.planner.batch_job.holds_node_down`): those that do come first, before
    the fewer servers. examples/batch-jobs-gke.yaml's spot job: 4 x g2-standard-96 of L4 at $2,283 a month (41.67 h of
    a 48 h deadline, 55.51 h with one node reclaimed) was chosen over one a3-highgpu-8g (14.84 h at $2,285) until
    fix137; neither holds (the a3's one node takes both replicas), so the fewer servers decide: the a3-highgpu-8g.
    """
    if len(ranked) < 2:
        return ranked
    band = near_tie_band(ranked, key)  # 1 where capex ranks first (a tuple), or no price
    near = ranked[:band]
    ran_hours = [hours(o) for o in near]
    if band < 2 or not all(ran_hours):
        return ranked

    fastest: dict[int, float] = {}
    for o, h in zip(near, ran_hours, strict=True):
        nodes, ran = o.candidate.nodes, h or 0.0
        fastest[nodes] = min(ran, fastest.get(nodes, ran))

    def settled(k: int) -> tuple[bool, int, bool, float, int]:
        nodes, ran = near[k].candidate.nodes, ran_hours[k] or 0.0
        close = within_near_tie(ran, fastest[nodes])
        return (holds is not None and not holds(near[k]), nodes, not close, 0.0 if close else ran, k)

    return [near[k] for k in sorted(range(band), key=settled)] + ranked[band:]


def cost_near_tie(
    objective: str,
    chosen: Option,
    rest: list[Option],
    hours: RunHours = own_run_hours,
    holds: Callable[[Option], bool] | None = None,
) -> tuple[Option, float, float] | None:
    """The cheaper option ``chosen`` was kept over as a near tie on cost (:func:`cost_near_ties_settled`), if any.

    With its cost and the chosen one's as they were ranked (a price an hour: a month of a rented job's runs, or of the
    servers, or of a batch job's runs' hours, over its hours). None where ``chosen`` was the cheapest, or the objective
    is not cost. An option at the very same cost counts where the near tie's rule put ``chosen`` before it (holding its
    deadline with a node reclaimed where it did not, on fewer servers, or a shorter run on as many) and the objective's
    own tie-breaks (idle GPUs, servers, power) would not have (fix121: one 1-GPU p5.4xlarge and one 8-GPU p5.48xlarge at
    $2.47 a run each, the first at less power). ``hours``, ``holds``: as :func:`cost_near_ties_settled` ranked them.
    """
    if objective != "cost" or not hours(chosen):
        return None
    mine = ranked_usd(chosen)

    def owned(o: Option) -> tuple[bool, bool]:
        return (o.candidate.nodes > o.candidate.owned_nodes, o.candidate.owned_nodes > 0)

    priced = [(usd, k, o) for k, o in enumerate(rest) if owned(o) == owned(chosen) and (usd := ranked_usd(o)) is not None]
    if mine is None or not priced:
        return None
    theirs, _, over = min(priced, key=lambda t: t[:2])
    if theirs > mine or not within_near_tie(mine, theirs):
        return None
    if theirs == mine:  # the same cost: kept over the first of those the objective's tie-breaks put before it
        same = [
            o
            for usd, _, o in priced
            if usd == mine and _settled_before(chosen, o, hours, holds) and _tie_breaks(o) < _tie_breaks(chosen)
        ]
        if not same:
            return None
        over = min(same, key=_tie_breaks)  # the one the objective's tie-breaks alone would have taken (stable: as ranked)
    return over, theirs, mine


def _settled_before(a: Option, b: Option, hours: RunHours = own_run_hours, holds: Callable[[Option], bool] | None = None) -> bool:
    """Whether the near tie's rule (:func:`cost_near_ties_settled`'s order) puts ``a`` before ``b``.

    Its deadline held with a node reclaimed where ``b``'s is not (``holds`` given: a spot batch job), else fewer
    servers, else a shorter run (past the fraction) on as many.
    """
    if holds is not None and holds(a) != holds(b):
        return holds(a)
    if a.candidate.nodes != b.candidate.nodes:
        return a.candidate.nodes < b.candidate.nodes
    return not within_near_tie(hours(b), hours(a))


def _tie_breaks(opt: Option) -> tuple[float, ...]:
    """The cost objective's first tie-breaks of a training job's option: idle GPUs, servers, power (:func:`rank`)."""
    return rank("cost", ranking_candidate(opt), alone=True)[1:4]


def _told(opt: Option, tie: NearTie | None) -> Option:
    """``opt`` with the near tie it was kept over, where it was."""
    if tie is None:
        return opt
    assert isinstance(opt.shape, TrainingShape)
    return opt._replace(shape=dataclasses.replace(opt.shape, near_tie=tie))


def _with_communication(
    model: ResolvedModel,
    spec: TrainingSpec,
    shape: TrainingShape,
    hw: Hardware,
    layout: tuple[int, int],
    needs: NodeNeeds,
    consts: Constants,
    blocked: list[Blocked],
    node_host_ram: int = 0,
) -> tuple[TrainingShape, NodeNeeds, StepComm] | None:
    """The layout with its inter-node communication counted in the step time.

    A multi-node job whose communication would take longer than its compute over the front-end
    network gets a GPU fabric (bare metal) or is ruled out (a cloud instance without one); a job
    that then misses its deadline is ruled out. ``node_host_ram``: what the node is built to hold where more than the
    job's own need (:func:`on_pool_host_ram`).

    Kept for the process with the reasons it gives (:mod:`~generator.planner.step_cache`): a ``run_after`` chain's jobs
    alike but for the job they run after time the same layouts of the same shapes (:func:`training_shapes` keeps them).
    """
    arch = model.architecture
    key = (id(arch), id(shape), id(hw), id(consts), spec._replace(run_after=None), layout, needs, node_host_ram)
    said: list[Blocked] = []
    planned, told = kept(
        _PLACED,
        key,
        (arch, shape, hw, consts),
        lambda: (_communicated(model, spec, shape, hw, layout, needs, consts, said, node_host_ram), tuple(said)),
    )
    blocked += told
    return planned


#: :func:`_with_communication`'s layouts and the reasons they were ruled out for (:func:`~generator.planner.step_cache.kept`).
_PLACED: dict[
    object, tuple[tuple[object, ...], tuple[tuple[TrainingShape, NodeNeeds, StepComm] | None, tuple[Blocked, ...]]]
] = {}


def _communicated(
    model: ResolvedModel,
    spec: TrainingSpec,
    shape: TrainingShape,
    hw: Hardware,
    layout: tuple[int, int],
    needs: NodeNeeds,
    consts: Constants,
    blocked: list[Blocked],
    node_host_ram: int,
) -> tuple[TrainingShape, NodeNeeds, StepComm] | None:
    """:func:`_with_communication`, formed."""
    gpus_per_node, nodes = layout
    setup, mem = shape.setup, shape.memory
    spec = sized_spec(spec, setup)  # at the checkpointing level the shape is sized at (searched or given)
    sent = job_dp_traffic(model.architecture, setup, mem.trainable_params, shape.par.gpus, shape.accumulation)
    if hw.platform.provider == "baremetal" and not fabric_fits(hw.platform, hw.gpu):
        needs = needs._replace(needs_fabric=False)  # a tower: over its front-end network, or ruled out below
    # a platform built with its fabric whatever the job asks (a DGX, a cloud instance) needs no asking for one
    builtin = hw.platform.provider != "baremetal" or node_fabric(hw.platform, hw.gpu, gpus_per_node, False) is not None

    def placed(fabric: bool) -> StepComm:
        # timed over the links the node is built with for this ask (node_fabric decides both)
        links, dp_link, tp_link, stage_link, _ = step_links(
            hw.platform,
            hw.gpu,
            gpus_per_node,
            nodes,
            fabric,
            shape.par.tp,
            shape.par.pp,
            setup.data_parallel,
            consts,
            setup.zero_stage,
        )
        host = job_host_offload(
            model.architecture, setup, shape.par, shape.accumulation, hw, gpus_per_node, consts, shape.memory, node_host_ram
        )
        optimizer = gpu_optimizer_step_bytes(model.architecture, setup, shape.par)
        step = layout_step(model, spec, hw, shape.layout, links, sent, consts, host, optimizer)
        shared = shared_dp_gbps(links, shape.par.tp, shape.par.pp, gpus_per_node)
        return StepComm(step, dp_link, tp_link, stage_link, dp_share=shared)

    comm = placed(needs.needs_fabric)
    if comm.dominates and not builtin and not needs.needs_fabric and fabric_fits(hw.platform, hw.gpu):
        # the node is then built with the fabric (or, an owned server without one, ruled out by MIN_FABRIC_GBPS)
        needs = needs._replace(needs_fabric=True)
        comm = placed(True)
    if comm.dominates and not fabric_fits(hw.platform, hw.gpu):  # a cloud instance, or a tower: no fabric to add
        why = (
            f"{setup.method} over {nodes} nodes sends {sent.bytes_per_gpu / 1e9:.1f} GB per GPU per step; over "
            f"{comm.dp_link_text} that takes {comm.comm_s:.2f} s against {comm.compute_s:.2f} s of compute: "
            "communication dominates"
        )
        blocked.append(blocked_on(hw, COMMUNICATION_DOMINATES, why))
        return None
    hours = None
    if shape.total_flops is not None:
        hours = run_hours(spec.dataset_tokens or 0, spec.epochs, shape.layout, comm.step, consts)
    window, within = run_window(spec, hw.platform.provider)
    if hours is not None and window and hours > window * (1 + 1e-9):
        why = f"{shape.reason} takes {hours:.3g} h with its communication, past {within}"
        # with its servers: a layout within one past the deadline is one a later deadline plans (newuser76 item 11)
        late = blocked_on(hw, PAST_DEADLINE if window == spec.deadline_hours else RUNS_PAST_MONTH, why)
        blocked.append(late._replace(gpus_per_node=gpus_per_node, nodes=nodes))
        return None
    return dataclasses.replace(shape, hours=hours, step=comm.step), needs, comm
