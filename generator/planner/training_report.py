"""What a training plan says about its step: the split by term, and why the next layout lost."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from generator.planner.near_tie import NEAR_TIE_FRACTION
from generator.planner.option import Option
from generator.planner.plan import Finding
from generator.planner.tco import acquired_as, billed_per_run, month_run_usd, run_usd
from generator.planner.training import TrainingShape
from generator.planner.training_candidates import (
    RunHours,
    cost_near_tie,
    cpu_offloads,
    own_run_hours,
)
from generator.planner.training_comm import StepComm
from generator.sizing.context_limit import CONTEXT_EXTENSION, served_limit_phrase
from generator.sizing.frameworks import reserve_short
from generator.sizing.training_step import StepTime
from generator.units import HOURS_PER_MONTH, hours_text, usd_text

#: The step's terms as the plan names them (StepTime attribute, words).
STEP_TERMS: tuple[tuple[str, str], ...] = (
    ("compute_s", "compute"),
    ("dequant_s", "NF4 dequantization"),
    ("adapter_s", "PEFT's passes over the activations"),
    ("elementwise_s", "the layers' eager norm, rotary, gating and residual operators"),
    ("host_exposed_s", "the CPU launching eager PyTorch's kernels one at a time"),
    ("tp_allreduce_s", "TP all-reduce"),
    ("pp_transfer_s", "PP activation transfers"),
    ("pp_bubble_s", "PP bubble"),
    ("dp_exposed_s", "exposed DP/ZeRO communication"),
    ("offload_s", "CPU offload (host-link copies and the CPU optimizer step)"),
    ("paged_s", "paged optimizer states' migration over the host link"),
    ("activation_offload_exposed_s", "activation offload's copies to host RAM and back"),
    ("optimizer_s", "the GPU's optimizer step"),
)

NEAR_TIE_PERCENT = f"{NEAR_TIE_FRACTION:.0%}"


def pipeline_schedule_details(step: StepTime) -> dict[str, Any]:
    """The interleaved 1F1B schedule a pipeline layout's step is timed with, and the Megatron-LM argument that runs it."""
    return {
        "schedule": "interleaved-1f1b",
        "virtual_stages": step.pipeline_virtual_stages,
        "layers_per_virtual_stage": step.layers_per_virtual_stage,
        "megatron_args": f"--num-layers-per-virtual-pipeline-stage {step.layers_per_virtual_stage}",
        "pp_bubble_s": round(step.pp_bubble_s, 4),
        "plain_1f1b_pp_bubble_s": round(step.plain_pp_bubble_s, 4),
    }


def pipeline_schedule_text(step: StepTime) -> str:
    """The reason line of :func:`pipeline_schedule_details`: the schedule timed, the flag, and the bubble without it.

    Megatron-LM runs plain 1F1B unless ``--num-layers-per-virtual-pipeline-stage`` is given (Narayanan et al.,
    https://arxiv.org/abs/2104.04473 section 2.2.2; megatron/training/arguments.py).
    """
    v, layers = step.pipeline_virtual_stages, step.layers_per_virtual_stage
    plain_total = step.total_s - step.pp_bubble_s + step.plain_pp_bubble_s
    return (
        f"pipeline schedule: interleaved 1F1B, {v} model chunks a GPU of {layers} layer(s) each (PP bubble "
        f"{step.pp_bubble_s:.3f} s a step), which Megatron-LM runs only when launched with "
        f"--num-layers-per-virtual-pipeline-stage {layers}; its default, plain 1F1B, idles {step.plain_pp_bubble_s:.3f} s "
        f"a step (about {plain_total:.3f} s against {step.total_s:.3f} s): set it, the hours and cost here are timed with it"
    )


def step_split_text(comm: StepComm, tp: int, pp: int, dp: int) -> str:
    """One line: the step's seconds by term and the link each communication term crosses."""
    step = comm.step
    parts = [f"compute {step.compute_s:.3f} s"]
    if step.slowest_stage_factor > 1.0005:  # acc110: the stages run at the pace of the last, which holds the LM head
        parts[0] += (
            f" (the pipeline's last stage, its layers and the LM head: {step.slowest_stage_factor:.2f}x the mean stage's "
            "compute, which every stage waits for)"
        )
    if step.dequant_s:
        parts.append(f"NF4 dequantization {step.dequant_s:.3f} s ({step.dequant_bytes / 1e9:.1f} GB per GPU read and written)")
    if step.adapter_s:
        moved = f"{step.adapter_bytes / 1e9:.1f} GB per GPU read and written beside the adapters' matmuls"
        parts.append(f"PEFT's passes over the activations {step.adapter_s:.3f} s ({moved})")
    if step.elementwise_s:
        moved = f"{step.elementwise_bytes / 1e9:.1f} GB per GPU read and written by eager PyTorch, unfused and uncompiled"
        parts.append(f"eager norm, rotary, gating and residual operators {step.elementwise_s:.3f} s ({moved})")
    if step.host_exposed_s:  # the GPU waits on the CPU's launches for that long
        parts.append(
            f"kernel launches {step.host_exposed_s:.3f} s beyond the GPU's work ({step.host_kernels:,} kernels launched one "
            f"at a time by eager PyTorch, {step.host_dispatch_s:.3f} s of CPU)"
        )
    if tp > 1:
        parts.append(
            f"TP all-reduce {step.tp_allreduce_s:.3f} s exposed ({step.tp_bytes / 1e9:.2f} GB per GPU over {comm.tp_link})"
        )
    if pp > 1:
        parts.append(f"PP activations {step.pp_transfer_s:.3f} s ({step.pp_bytes / 1e9:.3f} GB per GPU over {comm.stage_link})")
        parts.append(f"PP bubble {step.pp_bubble_s:.3f} s")
    if step.expert_alltoall_s:
        moved = f"{step.expert_alltoall_bytes / 1e9:.2f} GB per GPU over {comm.ep_link}"
        parts.append(f"EP all-to-all {step.expert_alltoall_s:.3f} s ({moved})")
    if dp > 1:
        # replicas side by side in a node reduce over its GPU link too: the slower leg bounds the step's DP time
        over = f" over {comm.dp_link_text}"
        if step.dp_inter_node_s and step.dp_comm_s > step.dp_inter_node_s:
            over = (
                f": {step.dp_comm_s:.3f} s inside a node over its GPU link, which bounds it, and "
                f"{step.dp_inter_node_s:.3f} s between nodes over {comm.dp_link_text}"
            )
        experts = ""
        if step.expert_dp_s:
            # the routed experts' gradients over their own group (one rank an EP group), after the dense ones
            where = "a GPU's own share of the nodes' network" if step.expert_dp_crosses_nodes else "the GPU link inside a node"
            experts = (
                f", then the routed experts' {step.expert_dp_bytes / 1e9:.2f} GB per GPU over their expert-data-parallel "
                f"group, one rank an EP group, over {where}: {step.expert_dp_s:.3f} s of it"
            )
        serial = (
            "; DeepSpeed ZeRO-1/2 without overlap_comm (its default, as ds_config.json leaves it) reduces on the compute "
            "stream, in series with it"
            if step.dp_in_series
            else ""
        )
        parts.append(
            f"DP/ZeRO {step.dp_exposed_s:.3f} s exposed of {step.dp_comm_s:.3f} s ({step.dp_bytes / 1e9:.2f} GB per GPU{over}"
            f"{experts}{serial})"
        )
    if step.offload_s or step.offload_link_s:
        after = f" + {step.offload_after_step_s:.3f} s after it" if step.offload_after_step_s else ""
        # the host's DIMMs as the node is built (newuser76 item 13: two a channel run slower)
        dram = f" at {step.cpu_dram_gb_per_s:.1f} GB/s of host DRAM" if step.cpu_optimizer_s else ""
        stepped = (
            f"CPU optimizer step {step.cpu_optimizer_s:.3f} s{dram}{after}"
            if step.cpu_optimizer_s or not step.offload_after_step_s
            # ZeRO-3 offload_param alone: the GPU steps, then writes its updated partition back (review 27 item 6)
            else f"the updated parameters copied to host memory after the GPU's optimizer step {step.offload_after_step_s:.3f} s"
        )
        parts.append(
            f"CPU offload {step.offload_s:.3f} s ({step.offload_s / step.total_s:.0%} of the step: {stepped}, host-link "
            f"copies {step.offload_exposed_s:.3f} s exposed of {step.offload_link_s:.3f} s, "
            f"{step.offload_bytes / 1e9:.1f} GB per GPU)"
        )
    if step.paged_s:  # newuser76 item 3, acc125: the paged states cycle through the GPU each step when they do not fit
        parts.append(
            f"paged optimizer states {step.paged_s:.3f} s ({step.paged_bytes / 1e9:.1f} GB per GPU: the states do not all "
            "fit beside the step's memory, so the driver, evicting the chunk populated longest ago, cycles every one of "
            f"them in and out each step over the host link at {step.paged_link_gb_per_s:.1f} GB/s, each block's copy in "
            "beside the next one's eviction, in series with the backward pass that waits on them)"
        )
    if step.activation_offload_s:  # acc127: the saved activations out in forward, back in backward, over the host link
        how = (
            "DeepSpeed's cpu_checkpointing copies on the compute stream, in series"
            if step.activation_offload_in_series
            else "on a side stream behind the forward and backward passes"
        )
        parts.append(
            f"activation offload {step.activation_offload_exposed_s:.3f} s exposed of {2 * step.activation_offload_s:.3f} s "
            f"({step.activation_offload_bytes / 1e9:.1f} GB per GPU to host RAM and back over the host link, {how})"
        )
    if step.optimizer_s:  # the GPU's optimizer update, memory-bound, after the last backward pass
        parts.append(
            f"optimizer step {step.optimizer_s:.3f} s ({step.optimizer_bytes / 1e9:.1f} GB per GPU of gradients, weights "
            "and optimizer states read and written)"
        )
    latency = f"; per-collective latency {step.latency_s:.3f} s of the communication" if step.latency_s >= 0.0005 else ""
    return f"one step takes {step.total_s:.3f} s: " + " + ".join(parts) + latency


def _per_token(step: StepTime, shape: TrainingShape) -> dict[str, float]:
    """GPU-seconds per token by term (what a layout costs, whatever its size)."""
    layout = shape.layout
    return {attr: getattr(step, attr) * layout.world / layout.tokens_per_step for attr, _ in STEP_TERMS}


def _layout_key(shape: TrainingShape) -> tuple[int, ...]:
    s = shape.setup
    return (shape.par.tp, shape.par.pp, s.data_parallel, s.zero_stage, s.micro_batch_size, shape.accumulation)


def training_runner_up(opt: Option, rest: list[Option], runs: float | None = None) -> str | None:
    """Why the best other layout (on the same servers where one exists) lost to the chosen one.

    ``runs``: the job's runs a month, where it gives them: a run on servers paid by the month is then the month over them.
    """
    shape, comm = opt.shape, opt.comm
    if not isinstance(shape, TrainingShape) or comm is None:
        return None
    others = [o for o in rest if isinstance(o.shape, TrainingShape) and o.comm is not None]
    others = [o for o in others if _layout_key(o.shape) != _layout_key(shape)]  # type: ignore[arg-type]
    same = [o for o in others if o.hardware == opt.hardware]
    # on the servers the job runs on, owned ones as owned (newuser66 item 5: a layout on the same owned R760 was priced
    # as one bought, $307 against $111 a run)
    same = [o for o in same if o.candidate.owned_nodes == opt.candidate.owned_nodes] or same
    if not (same or others):
        return None
    other = (same or others)[0]
    assert isinstance(other.shape, TrainingShape)
    assert other.comm is not None
    mine, theirs = _per_token(comm.step, shape), _per_token(other.comm.step, other.shape)
    worse = sorted(((theirs[a] - mine[a], words) for a, words in STEP_TERMS), reverse=True)
    a, b = opt.candidate, other.candidate
    if same and (b.nodes, b.gpus_per_node, b.owned_nodes) == (a.nodes, a.gpus_per_node, a.owned_nodes):
        where = "on the same servers"
    else:  # another count of the same kind, or another kind: named, so a layout the servers cannot hold is not implied
        where = f"on {b.nodes} x {other.hardware.platform.id} ({b.gpus_per_node} x {other.hardware.gpu.id})"
        if b.owned_nodes != a.owned_nodes:  # a layout the owned servers did not take: priced as what it buys
            # a layout rented per run beside an owned one (fix89: owned servers win again) is rented, not bought
            where += (
                f", {b.owned_nodes} of them owned" if b.owned_nodes else f", {acquired_as(other.hardware.platform.provider, b)}"
            )
    text = f"runner-up layout {where}: {other.shape.reason}"
    slower = sum(theirs.values()) > sum(mine.values()) * (1 + 1e-9)
    if slower and worse[0][0] > 0:
        more = sum(theirs.values()) / sum(mine.values()) - 1
        text += f", {more:.1%} more GPU time per token, mostly {worse[0][1]}"
    elif sum(theirs.values()) >= sum(mine.values()) * (1 - 1e-9):
        more = other.comm.step.dp_bytes - comm.step.dp_bytes
        text += ", the same GPU time per token"
        if more > 0:
            text += f" (its {more / 1e9:.2f} GB more DP/ZeRO traffic per GPU hides behind compute)"
        # a tie only where the job's hours are equal too: on the same servers, more GPUs in use finish sooner
        # (fuzz15 item 6: a ZeRO-3 x DP2 layout at half the hours was called tied with a ZeRO-0 x DP1 one)
        if (a.usd_per_hour, a.gpus_bought, a.run_hours) == (b.usd_per_hour, b.gpus_bought, b.run_hours):
            text += "; tied, the layout searched first (smaller TP, PP, ZeRO stage) is kept"
    else:
        text += ", less GPU time per token but ranked lower by the objective"
    monthly = month_run_usd(a, runs), month_run_usd(b, runs)
    mine_usd, theirs_usd = monthly[0] or run_usd(a), monthly[1] or run_usd(b)
    if mine_usd is not None and theirs_usd is not None and (a.owned_runs is not None or b.owned_runs is not None):
        # fix89: on owned servers, the energy a run adds (OwnedRuns), to the cent
        text += f"; {usd_text(theirs_usd)} against {usd_text(mine_usd)} per run"
    elif mine_usd is not None and theirs_usd is not None:
        text += f"; ${theirs_usd:,.0f} against ${mine_usd:,.0f} per run"
        if None not in monthly and runs:
            # a month paid whatever runs, over the job's runs a month (newuser39 item 7)
            text += f" (a month of the servers over its {runs:g} run{'' if runs == 1 else 's'} a month, what they are ranked by)"
        elif (
            a.capex_usd is not None
            and b.capex_usd is not None
            and a.usd_per_hour
            and b.usd_per_hour
            and b.usd_per_hour != a.usd_per_hour
        ):
            # bought servers are ranked by their month (they stay after the run): the figure that decided
            text += (
                f" (${b.usd_per_hour * HOURS_PER_MONTH:,.0f} against ${a.usd_per_hour * HOURS_PER_MONTH:,.0f} a month of "
                "the servers bought, what they are ranked by)"
            )
    elif b.gpus_bought != a.gpus_bought:
        # rented on a cloud, bought on bare metal (newuser28 item 14: a GKE pool's layouts read "88 GPUs bought")
        text += f"; {b.gpus_bought} GPUs {acquired_as(other.hardware.platform.provider, b)} against {a.gpus_bought}"
    if shape.hours and other.shape.hours:
        text += f", {other.shape.hours:.1f} h against {shape.hours:.1f} h"
    return text


def cost_near_tie_text(
    objective: str,
    chosen: Option,
    rest: list[Option],
    hours: RunHours = own_run_hours,
    holds: Callable[[Option], bool] | None = None,
    model: str = "the step model",
) -> str | None:
    """Which cheaper layout on other servers a training job (or chain, or batch job) was kept over as a near tie on cost.

    :func:`~generator.planner.training_candidates.cost_near_ties_settled`: within :data:`NEAR_TIE_FRACTION` of the
    cheapest's cost, fewer servers, then the shorter run (a spot batch job's deadline held with a node reclaimed
    first: ``holds``). None where the chosen layout is the cheapest. ``hours``: an option's hours a run; ``model``: what
    does not tell their figures apart (a batch job's: the serving model).
    """
    tie = cost_near_tie(objective, chosen, rest, hours, holds)
    if tie is None:
        return None
    over, theirs, mine = tie
    a, b = chosen.candidate, over.candidate
    provider = chosen.hardware.platform.provider
    runs = (run_usd(a), run_usd(b))
    if billed_per_run(provider, a) and billed_per_run(over.hardware.platform.provider, b) and None not in runs:
        figures = f"${runs[1]:,.2f} against ${runs[0]:,.2f} a run"
    else:  # ranked by their month (servers paid by the month, owned ones at a month of runs' energy, a batch job's runs)
        figures = f"${theirs * HOURS_PER_MONTH:,.2f} against ${mine * HOURS_PER_MONTH:,.2f} a month, what they are ranked by"
    cheaper = 1 - theirs / mine
    share = f"{cheaper:.2%}" if cheaper >= 0.00005 else "less than 0.01%"
    ours, theirs_h = hours(chosen), hours(over)
    ran = f"{hours_text(ours, 1)} against {hours_text(theirs_h, 1)} a run" if ours and theirs_h else ""
    if holds is not None and holds(chosen) and not holds(over):  # a spot batch job's deadline with a node reclaimed
        settled = (
            "its deadline kept with the node holding the most of its replicas reclaimed, which the other's is not "
            f"({ran}; batch-job-on-spot)"
        )
    elif a.nodes == b.nodes:  # on as many servers: the run a user waits for (fix121)
        settled = f"the shorter run on as many servers ({a.nodes} each; {ran})" if ran else "the layout ranked first"
    else:
        settled = f"fewer servers ({a.nodes} against {b.nodes}" + (f"; {ran})" if ran else ")")
    if theirs == mine:  # the very same cost: the tie the objective's own tie-breaks settled the other way before
        if b.idle_gpus < a.idle_gpus:
            before = f"fewer idle GPUs ({b.idle_gpus} against {a.idle_gpus})"
        else:
            before = f"less power ({b.power_w / 1000:.1f} kW against {a.power_w / 1000:.1f} kW)"
        return f"kept over {b.summary}: {figures}, the same cost, settled by {settled} before {before}"
    return (
        f"kept over {b.summary}: {figures}, {share} cheaper, within {NEAR_TIE_PERCENT} of its cost (a near tie, closer "
        f"than {model} tells them apart), settled by {settled}"
    )


def context_extension_finding(index: int, sequence_tokens: int, model_name: str, limit_tokens: int) -> Finding | None:
    """A warning when deployment ``index`` trains on longer sequences than its model serves (``limit_tokens``, 0: unknown).

    Not an error: training past the served limit is how a context is extended, but only with RoPE scaling configured.
    """
    if not limit_tokens or sequence_tokens <= limit_tokens:
        return None
    return Finding(
        "warning",
        "sequence-beyond-model-context",
        f"sequence_length {sequence_tokens:,} is more than {served_limit_phrase(model_name, limit_tokens)}; {CONTEXT_EXTENSION}",
        f"deployments[{index}].training.sequence_length",
    )


def near_tie_text(shape: TrainingShape, run_hours: float | None) -> str | None:
    """Which layout on the same servers this one was kept over (faster, or short of headroom), and what it asks more.

    None where it was kept over none.
    """
    tie = shape.near_tie
    if tie is None or not run_hours:
        return None
    over, mine = tie.shape, shape.setup
    asks = []
    if over.setup.zero_stage > mine.zero_stage:
        why = "a DeepSpeed or FSDP configuration plain data parallelism does not need" if not mine.zero_stage else (
            "more of the model states sharded, more collectives a step to hide")  # fmt: skip
        asks.append(f"ZeRO-{over.setup.zero_stage} against ZeRO-{mine.zero_stage} ({why})")
    if cpu_offloads(over.setup) > cpu_offloads(mine):
        asks.append("more CPU offload")
    if over.par.tp * over.par.pp > shape.par.tp * shape.par.pp:
        asks.append(f"TP{over.par.tp} x PP{over.par.pp} against TP{shape.par.tp} x PP{shape.par.pp}")
    memory = shape.hardware.gpu.memory_bytes
    theirs, ours = over.memory.per_gpu.total, shape.memory.per_gpu.total
    if theirs > ours:
        asks.append(f"{theirs / 2**30:.1f} GiB a GPU against {ours / 2**30:.1f} ({theirs / memory:.0%} of the GPU's memory "
                    f"against {ours / memory:.0%}), less headroom for the model's error")  # fmt: skip
    if reserve_short(over.setup.method, theirs, memory):
        asks.append("less headroom than full fine-tunes' reserved memory was measured to need (full-finetune-headroom)")
    faster = 1 - tie.run_hours / run_hours
    digits = next((d for d in (2, 3, 4) if f"{tie.run_hours:.{d}f}" != f"{run_hours:.{d}f}"), 4)
    pace = (
        f"{faster:.1%} faster" if faster >= 0.0005 else "less than 0.1% faster" if faster > 0 else "as fast"
    ) + f" ({tie.run_hours:.{digits}f} h against {run_hours:.{digits}f} h a run)"
    near = f"within {NEAR_TIE_PERCENT} of its hours, price and power"
    return f"kept over {over.reason}, {pace}: {near}, and it needs " + "; ".join(asks)
