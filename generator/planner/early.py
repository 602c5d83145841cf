"""Checks decidable before the planner's search: ``specgen validate`` runs them, and so does planning.

They need the catalog and the sizing core but no search over layouts, so they are cheap, and since
:func:`generator.planner.plan_workload` runs the same functions first, ``validate`` and ``plan`` give
the same error, at the same place, for every problem found here:

- ``hardware.fixed``: the machine can be built from the catalog, no deployment is a training job, and each
  deployment's offload placement (a direct computation, not a search) fits the machine's GPUs, RAM and NVMe;
- otherwise: the provider, GPU and platform lists and the site's cooling leave some (platform, GPU)
  pair, every inference deployment's weights fit the usable memory of some allowed GPU when split
  as far as the planner ever splits them (a necessary condition of every layout the search tries), and on bare
  metal some allowed server's smallest node fits a rack's power and circuits (every node the search forms is at
  least as large: fuzz30 item 11); a server rented from a provider stands in its racks, not the workload's, and is
  not measured against them (review 27 item 1).
"""

from __future__ import annotations

from generator import catalog
from generator.calculator.model_source import serving_format
from generator.errors import InfeasibleError, InputError, SpecgenError
from generator.planner.at_once import raise_in_file_order
from generator.planner.nodes import NodeNeeds, assemble_node
from generator.planner.options import Hardware, allowed_hardware, tensor_parallel_sizes, unsold_everywhere_why
from generator.planner.plan import NodeSpec
from generator.planner.precision_refusals import unserved_precisions
from generator.planner.rack_supply import node_rack_problem
from generator.planner.racks import RACK_UNITS, taller_than_space
from generator.planner.tco import in_workload_racks
from generator.sizing.constants import Constants, with_overrides
from generator.sizing.linear_attention import has_state, unsized_use_message
from generator.sizing.step_down import serving_precision_advice
from generator.sizing.weights import Parallelism, engine_stages, size_weights
from generator.units import GIB
from generator.workload import LoadedWorkload
from generator.workload.models import InferenceDeployment, Workload

#: Pipeline depths the planner tries: within one node at every TP degree, across nodes at the largest
#: (planner.inference.pipeline_depths).
PIPELINE_STAGES = (1, 2, 3, 4, 6, 8)


def _held_by(gpu_id: str, provider: str | None = None) -> list[str]:
    """The catalog platforms that hold ``gpu_id`` (of ``provider`` alone where given), by id."""
    return sorted(p.id for p in catalog.platforms().values() if gpu_id in p.gpu_ids and provider in (None, p.provider))


def _allowed_gpu_ids(wl: Workload) -> list[str]:
    """The allowed GPU list's catalog GPUs, sorted."""
    return sorted({g.lower() for g in wl.hardware.gpus or ()} & set(catalog.gpus()))


def _liquid_holders(wl: Workload, gpu_id: str) -> list[str]:
    """The provider's platforms holding ``gpu_id`` that liquid cooling would allow (none where it is already set)."""
    if wl.hardware.cooling == "liquid":
        return []
    gpu = catalog.gpus()[gpu_id]
    platforms = catalog.platforms()
    return [p for p in _held_by(gpu_id, wl.hardware.provider) if "liquid" in (platforms[p].cooling, gpu.cooling)]


def _unheld(wl: Workload) -> list[str]:
    """Allowed GPUs no catalog platform of any provider holds: specgen neither buys nor rents one (fix183 item 1)."""
    return [g for g in _allowed_gpu_ids(wl) if not _held_by(g)]


def _why_none(wl: Workload) -> str:
    """Per allowed GPU, why no server of the provider is offered: none holds it, or those that do are liquid-cooled."""
    reasons = []
    for gpu_id in _allowed_gpu_ids(wl):
        holders = _held_by(gpu_id, wl.hardware.provider)
        liquid = _liquid_holders(wl, gpu_id)
        unsold = unsold_everywhere_why(wl, gpu_id)
        if not _held_by(gpu_id):  # the AMD desktop cards, the MI210, ...: the catalog sizes them, sells none
            why = catalog.unpriced().get(gpu_id)
            reasons.append(
                f"no platform of any provider in the catalog holds {gpu_id}, nor is it priced there{f': {why}' if why else ''}"
            )
        elif not holders:
            reasons.append(f"no {wl.hardware.provider} platform holds {gpu_id}")
        elif liquid:
            reasons.append(f"{gpu_id} is in {', '.join(liquid)}, liquid-cooled")
        elif unsold:  # a product not sold new is not bought (newuser30 item 11)
            reasons.append(f"{unsold}, so it is not bought (one you own is: list it under hardware.inventory)")
    if wl.hardware.gpus and wl.hardware.platforms:  # both lists given: they may not meet at all
        listed = {g.lower() for g in wl.hardware.gpus}
        for platform_id in sorted(wl.hardware.platforms):
            platform = catalog.platforms().get(platform_id)
            if platform is not None and not listed & set(platform.gpu_ids):
                holds = ", ".join(sorted(platform.gpu_ids))
                reasons.append(f"hardware.platforms lists {platform_id}, which holds {holds}, none of them in hardware.gpus")
    return f": {'; '.join(reasons)}" if reasons else ""


def _fixed_hint(wl: Workload) -> str:
    """How a machine you own with an allowed GPU no platform holds is planned: ``hardware.fixed``, with its block."""
    unheld = _unheld(wl)
    if not unheld:
        return ""
    provider = "" if wl.hardware.provider == "baremetal" else "provider: baremetal, "
    return (
        f"; a machine you already own with {unheld[0]} is planned under hardware.fixed (llama.cpp serves it there; "
        f"`specgen detect` writes the block), e.g. hardware: {{{provider}fixed: {{gpu: {unheld[0]}, gpu_count: 1, "
        "ram_gib: 64}}"
    )


def _unblock(wl: Workload) -> str:
    """How a workload no allowed server holds a GPU of is unblocked: only fixes its provider takes, that can help.

    fix183 item 1: an AMD card no platform holds was told to try liquid cooling and another provider.

    A server described under ``hardware.inventory[].custom`` is bare metal's (owned servers are not rented: a cloud
    refuses the inventory): newuser79 item 11 saw it offered to a GKE workload; a cloud is told the GPUs its
    instance types hold instead.
    """
    provider = wl.hardware.provider
    allowed = _allowed_gpu_ids(wl)
    other = any(p != provider for g in allowed for p in {catalog.platforms()[h].provider for h in _held_by(g)})
    another = ", another provider" if other or not allowed else ""
    # more platforms help where the provider holds an allowed GPU (or no GPU list narrows the choice)
    more_platforms = any(_held_by(g, provider) for g in allowed) or not allowed
    if provider == "baremetal":
        platforms = " or platforms" if more_platforms else ""
        site = any(_liquid_holders(wl, g) for g in allowed)
        liquid = ", hardware.cooling: liquid where the site has it" if site else ""
        return (
            f"allow more GPUs{platforms}{another}{liquid}, or describe a server you own or buy under "
            f"hardware.inventory[].custom{_fixed_hint(wl)}"
        )
    held = sorted({g for p in catalog.platforms().values() if p.provider == provider for g in p.gpu_ids})
    ways = [f"allow a GPU the catalog's {provider} platforms hold ({', '.join(held)})"]
    ways += ["more platforms"] if more_platforms else []
    ways += ["another provider"] if another else []
    said = ways[0] if len(ways) == 1 else f"{', '.join(ways[:-1])}, or {ways[-1]}"
    return f"{said}{_fixed_hint(wl)}"


def early_checks(loaded: LoadedWorkload, consts: Constants | None = None) -> None:
    """Raise the problems decidable without the planner's search (InputError or InfeasibleError).

    Each check raises every refusal it finds at once, in file order (:mod:`generator.planner.at_once`); the first check
    that finds one stops the rest.
    """
    wl = loaded.workload
    consts = consts or with_overrides(dict(wl.constants))
    _recurrent_state_checks(loaded)
    if wl.hardware.fixed is not None:
        _fixed_checks(loaded, consts)
        return
    hardware = allowed_hardware(wl)
    if not hardware:
        where = loaded.document.locate(("hardware",))
        # a site's cooling is bare metal's: a cloud's VM is cooled by the provider (newuser77 item 5)
        site = wl.hardware.provider == "baremetal"
        cooling = f" (with cooling '{wl.hardware.cooling}')" if site else ""
        raise InfeasibleError(
            f"no {wl.hardware.provider} platform in the catalog offers an allowed GPU"
            f"{cooling}{_why_none(wl)}; to unblock: {_unblock(wl)}",
            where,
        )
    _height_checks(loaded, hardware)
    # every deployment whose precision no allowed GPU serves (fix183 item 2), and every other whose weights alone fit no
    # allowed GPU, at once, in file order (fix186 item 1)
    unserved = unserved_precisions(loaded, hardware)
    raise_in_file_order([*unserved.values(), *_weights_refusals(loaded, hardware, consts, set(unserved))])
    _rack_power_checks(loaded, hardware, consts)


def _weights_refusals(
    loaded: LoadedWorkload, hardware: list[Hardware], consts: Constants, refused: set[int]
) -> list[SpecgenError]:
    """Each inference deployment (not in ``refused``) whose weights alone fit no allowed GPU: its refusal, at its model.

    Split as far as the planner ever splits them, they need more than any allowed GPU can use.
    """
    wl = loaded.workload
    refusals: list[SpecgenError] = []
    for i, dep in enumerate(wl.deployments):
        if not isinstance(dep, InferenceDeployment) or i in refused:
            continue
        model = loaded.models[dep.name]
        arch = model.architecture
        fmt = serving_format(model, dep.inference.precision)
        best: tuple[float, int, int, int] | None = None  # (usable bytes - weights per GPU, weights, tp, pp)
        for hw in hardware:
            tp = tensor_parallel_sizes(hw, arch.num_attention_heads)[-1]
            usable = hw.gpu.memory_bytes * consts.gpu_memory_utilization
            for pp in PIPELINE_STAGES:
                if pp > arch.num_layers:
                    continue
                engine = dep.inference.engine
                per_gpu = size_weights(
                    arch,
                    fmt,
                    Parallelism(tp, pp, stages=engine_stages(engine), vision_tp=engine == "vllm"),
                ).per_gpu_bytes
                if per_gpu <= usable:
                    break
                if best is None or usable - per_gpu > best[0]:
                    best = (usable - per_gpu, per_gpu, tp, pp)
            else:
                continue
            break
        else:
            assert best is not None
            where = loaded.document.locate(("deployments", i, "model"))
            _, per_gpu, tp, pp = best
            precision = serving_precision_advice(arch, [fmt])
            refusals.append(
                InfeasibleError(
                    f"deployment '{dep.name}' ({model.id}) has no feasible plan: its {fmt.name} weights alone need "
                    f"{per_gpu / GIB:.1f} GiB per GPU even split TP{tp} x PP{pp}, more than any allowed GPU can use; to "
                    f"unblock: allow a GPU with more memory{' or ' + precision if precision else ''}",
                    where,
                )
            )
    return refusals


def _recurrent_state_checks(loaded: LoadedWorkload) -> None:
    """Refuse, each at its field, every use of a linear-attention model that only vLLM serving sizes (Qwen3-Next)."""
    wl = loaded.workload
    refusals: list[SpecgenError] = []
    for i, dep in enumerate(wl.deployments):
        arch = loaded.models[dep.name].architecture
        if not has_state(arch):
            continue
        if not isinstance(dep, InferenceDeployment):
            path: tuple[str | int, ...] = ("deployments", i, "training")
            use = "training"
        elif wl.hardware.fixed is not None:
            path, use = ("hardware", "fixed"), "offload"
        elif dep.inference.engine == "sglang":
            path, use = ("deployments", i, "inference", "engine"), "sglang"
        else:
            continue
        refusals.append(InputError(f"deployment '{dep.name}': {unsized_use_message(arch, use)}", loaded.document.locate(path)))
    raise_in_file_order(refusals)  # every one at once (fix186 item 1)


def _fixed_checks(loaded: LoadedWorkload, consts: Constants) -> None:
    from generator.planner.fixed_place import fixed_machine, place_for_rate

    machine = fixed_machine(loaded)[0]
    refusals: list[SpecgenError] = []
    for i in range(len(loaded.workload.deployments)):  # each deployment's refusal, all at once (fix186 item 1)
        try:
            place_for_rate(loaded, i, machine, consts)
        except SpecgenError as exc:
            refusals.append(exc)
    raise_in_file_order(refusals)


def _height_checks(loaded: LoadedWorkload, hardware: list[Hardware]) -> None:
    """Refuse ``hardware.rack_units_reserved`` where no server a deployment may run on fits the space it leaves.

    Decidable without the search where every allowed platform is too tall, or a deployment pins one that is.
    """
    wl = loaded.workload
    reserved = wl.hardware.rack_units_reserved
    if wl.hardware.provider != "baremetal" or reserved is None:
        return
    # a platform is too tall where each allowed server of it would stand in the workload's racks and is too tall for
    # them: one rented from a provider stands in the provider's (review 27 item 1)
    tall: dict[str, int | None] = {}
    for h in hardware:
        units = taller_than_space(h.platform.kind, h.platform.rack_units, reserved) if racked_counts(wl, h) else None
        tall[h.platform.id] = units if tall.get(h.platform.id, units) is not None else None
    pinned = sorted({p for dep in wl.deployments if (p := dep.platform) is not None and tall.get(p)})
    if pinned or all(tall.values()):
        heights = {tall[p] or 0 for p in pinned} if pinned else {u or 0 for u in tall.values()}
        needed = min(heights) if not pinned else max(heights)
        which = f"the pinned platform {', '.join(pinned)}" if pinned else "no allowed platform"
        verb = " needs" if pinned else " is shorter than"
        raise InputError(
            f"{reserved}U reserved leaves {RACK_UNITS - reserved}U per {RACK_UNITS}U rack, but {which}{verb} "
            f"{needed}U: reserve at most {RACK_UNITS - needed}U",
            loaded.document.locate(("hardware", "rack_units_reserved")),
        )


#: What a node needs of its host at the least: no model files, host memory, data or fabric (every need adds parts).
_NO_NEEDS = NodeNeeds(0, 0, 0, 0, needs_fabric=False)
#: The allowed server kinds a rack refusal names, smallest first; the rest are counted.
_NAMED_KINDS = 4


def racked_counts(wl: Workload, hw: Hardware) -> tuple[int, ...]:
    """The GPU counts of ``hw`` whose nodes would stand in ``wl``'s racks (:func:`~generator.planner.tco.in_workload_racks`).

    The candidates' node checks apply the racks' limits to these alone, so the early checks do too (review 27 item 1).
    """
    return tuple(n for n in hw.platform.gpu_counts if in_workload_racks(wl, hw.platform, hw.gpu.id, n))


def smallest_node(hw: Hardware, consts: Constants, counts: tuple[int, ...] | None = None) -> NodeSpec:
    """The node of ``hw`` that draws least of one of each GPU count it takes (or of ``counts``), built for no needs.

    Every node the search forms of ``hw`` holds one of those GPU counts and needs at least nothing, so draws at least
    as much: a rack that does not take this node takes none of ``hw``.
    """
    nodes = [assemble_node(hw.platform, hw.gpu, gpus, _NO_NEEDS, consts, []) for gpus in counts or hw.platform.gpu_counts]
    return min(nodes, key=lambda node: (node.power_w, node.gpus))


def _rack_power_checks(loaded: LoadedWorkload, hardware: list[Hardware], consts: Constants) -> None:
    """Refuse, at the rack's field, a rack power or circuits that no allowed server's smallest node fits.

    fuzz30 item 11: ``validate`` passed circuits worth 0 W and a 1 kW rack under 4 kW servers, which ``plan`` then
    refused after its search.
    """
    wl = loaded.workload
    if wl.hardware.provider != "baremetal" or not hardware:
        return
    refused = []
    for hw in hardware:
        counts = racked_counts(wl, hw)
        if not counts:  # rented from a provider at every count: in its racks, not the workload's
            return
        node = smallest_node(hw, consts, counts)
        why = node_rack_problem(wl.hardware, node)
        if why is None:
            return
        refused.append((node.power_w, f"{hw.gpu.id} on {hw.platform.id}: {why}"))
    refused.sort()
    named = "; ".join(text for _, text in refused[:_NAMED_KINDS])
    more = f"; and {len(refused) - _NAMED_KINDS} more server kind(s)" if len(refused) > _NAMED_KINDS else ""
    field = wl.hardware.rack_power_field
    raise_it = (
        # the bare server: what its deployments add (RAM, drives, NICs) plan sizes (newuser52 item 1)
        f"set hardware.rack_power_kw above the smallest node's power said above ({refused[0][0] / 1000:g} kW, the server "
        "before the RAM, drives and NICs its deployments add, which plan sizes)"
        if field == "rack_power_kw"
        else "give hardware.rack_circuits more or larger circuits, so a rack carries the smallest node said above"
    )
    raise InfeasibleError(
        f"no allowed server fits a rack, even with its fewest GPUs: {named}{more}; to unblock: {raise_it}, or allow a "
        "GPU whose servers fit the rack",
        loaded.document.locate(("hardware", field)),
    )
