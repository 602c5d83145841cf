"""How fast a training estimate runs on the GPU it names: the planner's step, tokens per second, MFU, a run's hours.

The step is the planner's own (:func:`generator.planner.training.gpu_step`) for the estimate's layout: TP x PP x DP,
micro-batch x accumulation steps, sequence length. The estimate names a GPU, not a server, so a job that one catalog
server of the GPU holds is placed in one server and talks over the GPU's own link (NVLink where the card has it, else
PCIe); more GPUs than the largest holds are placed, as the plan places them, on as many of that server as they take
and timed over its links between nodes (:func:`generator.planner.training_comm.step_links`, newuser43 item 8: 16 H100
were timed "in one server, over PCIe"). The data-parallel traffic is the planner's
(:func:`generator.planner.training_comm.job_dp_traffic`), a full EP job's routed experts apart over their
expert-data-parallel group (:func:`~generator.planner.training_comm.job_dp_traffic_split`). A run's hours are the planner's too
(:func:`generator.planner.training.run_hours`): ``dataset_tokens x epochs`` over the tokens of a step, at the step's
time, over ``training_goodput``; as a workload's ``training.dataset_tokens`` and ``training.epochs`` mean them.

Loaded only for ``--train`` with ``--gpu``: the planner modules are not on the inference estimate's cold start.
"""

from __future__ import annotations

import math

from generator import catalog
from generator.named_tuple import NamedTuple
from generator.planner.nodes import fabric_fits, memory_chosen
from generator.planner.training import gpu_step, job_host_dram, run_hours
from generator.planner.training_comm import (
    StepComm,
    ep_link_name,
    gpu_link,
    job_dp_traffic_split,
    links_between,
    shared_dp_gbps,
    step_links,
)
from generator.planner.training_report import pipeline_schedule_details, pipeline_schedule_text, step_split_text
from generator.sizing.frameworks import TORCHTUNE_ADAPTER_NOTE, TRAINER_SPEED_NOTE, framework_profile
from generator.sizing.performance import training_flops_per_token
from generator.sizing.training_mfu import MFU_BASIS, MFU_BASIS_FP8
from generator.sizing.training_moe import EXPERT_LOOP_NOT_COUNTED, moe_step, moe_step_assumptions
from generator.sizing.training_offload import (
    UNKNOWN_HOST_DRAM_GB_PER_S,
    assumed_host,
    host_link_name,
    host_offload,
    offload_bytes,
    paged_migration_bytes,
)
from generator.sizing.training_optimizer import gpu_optimizer_step_bytes
from generator.sizing.training_step import StepLayout, model_flops_utilisation
from generator.units import HOURS_PER_YEAR, hours_text
from generator.workload.models import TrainingSpec

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from typing import Any

    from generator.calculator.model_source import ResolvedModel
    from generator.catalog.records import CpuSpec, GpuSpec, PlatformSpec
    from generator.sizing.constants import Constants
    from generator.sizing.training import TrainingMemory, TrainingSetup
    from generator.sizing.weights import Parallelism


def largest_server_gpus(gpu: GpuSpec) -> int:
    """Most GPUs of ``gpu``'s kind one catalog server holds and its PSUs power (0: no catalog server holds it).

    A configuration whose own draw is over its PSUs' non-redundant capacity is one the plan never buys
    (``psu-over-capacity``): newuser54 item 8, 8 x RTX PRO 6000 were timed on 2 x WRX90 of 4 GPUs (3,382 W on one
    2,200 W PSU), where the plan buys workstations of 2.
    """
    return max((n for p in catalog.platforms().values() if gpu.id in p.gpu_ids for n in _powered_counts(p, gpu)), default=0)


def _powered_counts(platform: PlatformSpec, gpu: GpuSpec) -> list[int]:
    """The GPU counts of ``platform`` the plan would buy for their PSUs (:func:`~generator.planner.nodes.psu_overload`).

    A count is left out only where its own draw is over its PSUs (the plan's ``psu-over-capacity``); one over them on
    another system's published figure, or on fault-tolerant PSUs, is kept with a warning there, and here (review39
    item 2: MI325X and Gaudi 3 XE9680s, which the plan buys, had been left out).
    """
    from generator.planner.nodes import node_power_w, psu_overload
    from generator.sizing.constants import Constants

    ram = int(platform.ram_gib or 0)

    def powered(n: int) -> bool:
        power = node_power_w(platform, gpu, n, ram, platform.nvme_count, (), Constants())
        overload = psu_overload(platform, gpu, n, power)
        return overload is None or overload.level != "error"

    return [n for n in platform.gpu_counts if powered(n)]


def step_layout(setup: TrainingSetup, par: Parallelism) -> StepLayout:
    """The estimate's layout as the planner's step takes it."""
    return StepLayout(
        par.tp,
        par.pp,
        setup.data_parallel,
        setup.micro_batch_size,
        setup.accumulation_steps,
        setup.sequence_length,
        setup.checkpointing == "full",
    )


def _spec(setup: TrainingSetup) -> TrainingSpec:
    """The estimate's job as a workload's ``training`` section (the fields the step reads).

    Its framework (attention kernels, masked sliding windows, PEFT's LoRA layers), and the adapters' targets, dropout
    and optimizer regime, which set PEFT's passes over the activations (newuser45 item 6: they were left out, and every
    target list was timed as all-linear).
    """
    return TrainingSpec(
        method=setup.method,  # type: ignore[arg-type]  # --train's choices are the Literal's
        optimizer=setup.optimizer,
        lora_rank=setup.lora_rank,
        lora_dropout=setup.lora_dropout,
        lora_target_modules=setup.lora_targets,
        sequence_length=setup.sequence_length,
        micro_batch_size=setup.micro_batch_size,
        gradient_checkpointing=setup.checkpointing,  # type: ignore[arg-type]  # as --gradient-checkpointing's choices
        flash_attention=setup.flash_attention,
        framework=setup.framework,
        compute_precision=setup.compute_precision,  # type: ignore[arg-type]  # as --compute-precision's choices
    )


class Servers(NamedTuple):
    """Where an estimate with more GPUs than one catalog server holds is placed: ``nodes`` x ``platform``."""

    platform: PlatformSpec
    gpus_per_node: int
    nodes: int


def multi_server(gpu: GpuSpec, world: int) -> Servers | None:
    """The servers ``world`` GPUs of ``gpu`` take where the largest catalog server of it holds fewer; None otherwise.

    The server the CPU offload is timed on (:func:`assumed_host`) where it is among the largest, else the first of them
    by id; as many of it as the GPUs fill (the last one partly).
    """
    largest = largest_server_gpus(gpu)
    if not largest or world <= largest:
        return None
    held = [p for p in catalog.platforms().values() if gpu.id in p.gpu_ids and largest in _powered_counts(p, gpu)]
    assumed = assumed_host(gpu)
    platform = assumed if assumed in held else min(held, key=lambda p: p.id)
    return Servers(platform, largest, math.ceil(world / largest))


def host_gpus(servers: Servers | None, world: int) -> int:
    """The GPUs of ``world`` that share one server's host: all of them in one server, else a server's (``servers``)."""
    return min(world, servers.gpus_per_node) if servers else world


def estimate_step(
    model: ResolvedModel,
    setup: TrainingSetup,
    mem: TrainingMemory,
    par: Parallelism,
    gpu: GpuSpec,
    consts: Constants,
    expert_parallel: int = 1,
) -> StepComm:
    """The planner's step of the estimate's layout, and the link of each term.

    In one server (:func:`multi_server` None), else over the nodes it takes: a full fine-tune over the server's GPU
    fabric, a lighter job over its front end unless the communication then dominates the step and a fabric fits, as
    the plan builds the nodes (``training_candidates``). ``expert_parallel``: an MoE model's EP degree; its all-to-alls
    cross the GPU link of a server, or the nodes' network where an EP group spans servers.
    """
    layout = step_layout(setup, par)
    world = layout.world
    servers = multi_server(gpu, world)
    sent, expert_sent = job_dp_traffic_split(model.architecture, setup, mem.trainable_params, par.gpus, layout.accumulation)
    # the job's CPU offload over the GPU's host link and the DRAM of the server assumed for it, built as the planner
    # builds it for the job's host RAM (offload_host_dram)
    platform, cpu, sockets, mt_per_s = offload_host_dram(model, setup, mem, gpu, world, consts)
    # the paged states, every one where they do not all fit beside the step's memory, as the planner times them
    # (newuser76 item 3, acc125); the saved activations activation offload copies out and back, as the planner (acc127)
    paged = paged_migration_bytes(mem, gpu)
    moved = offload_bytes(model.architecture, setup, par, layout.accumulation, paged, mem.offloaded_activation_bytes)
    host = host_offload(moved, in_host_slots(gpu, platform), host_gpus(servers, world), cpu, sockets, consts, mt_per_s)
    spec = _spec(setup)
    optimizer = gpu_optimizer_step_bytes(model.architecture, setup, par)
    if servers is None:
        links = links_between(gpu, world, 1, 0.0, par.tp, par.pp, setup.data_parallel, consts, ep=expert_parallel)
        step = gpu_step(
            model, spec, gpu, layout, links, sent, consts, setup.base_precision, host, expert_parallel, expert_sent, optimizer
        )
        dp_link = f"{gpu_link(gpu, world)[1]} inside one server" if links.dp_intra_gbps else "none (one replica)"
        ep_link = ep_link_name(gpu, links, min(expert_parallel * par.tp, world), "")
        return StepComm(step, dp_link, gpu_link(gpu, par.tp)[1], gpu_link(gpu, par.tp * par.pp)[1], ep_link)

    def placed(fabric: bool) -> StepComm:
        links, dp_link, tp_link, stage_link, ep_link = step_links(
            servers.platform, gpu, servers.gpus_per_node, servers.nodes, fabric, par.tp, par.pp, setup.data_parallel,
            consts, setup.zero_stage, expert_parallel,
        )  # fmt: skip
        step = gpu_step(
            model, spec, gpu, layout, links, sent, consts, setup.base_precision, host, expert_parallel, expert_sent, optimizer
        )
        shared = shared_dp_gbps(links, par.tp, par.pp, servers.gpus_per_node)
        return StepComm(step, dp_link, tp_link, stage_link, ep_link, shared)

    fabric = setup.method == "full"
    comm = placed(fabric)
    if comm.dominates and not fabric and fabric_fits(servers.platform, gpu):
        comm = placed(True)
    return comm


def _not_counted(model: ResolvedModel, setup: TrainingSetup, world: int, gpu: GpuSpec) -> list[str]:
    """What the step leaves out for this job (the plan says the same of parameter offload)."""
    out = []
    if model.architecture.is_moe and setup.framework and framework_profile(setup.framework).expert_loop:
        out.append(EXPERT_LOOP_NOT_COUNTED)
    if world > 1 and not largest_server_gpus(gpu):
        out.append(
            f"traffic between servers: the {world:,} GPUs are timed as if in one server (no catalog server holds "
            f"{gpu.id}); plan a workload (specgen plan) for a multi-server job"
        )
    return out


#: What the step takes from the framework (newuser43 item 3): the rest of a framework's speed is not modelled.
FRAMEWORK_SPEED_NOTE = (
    "step time depends on --framework only through what is modelled: its attention kernels (FlashAttention-2 or not, "
    "Transformers' masked sliding-window attention), its default activation checkpointing, CPU offload and optimizer, "
    "a QLoRA base's dequantization, PEFT's passes over the activations where its LoRA layers are PEFT's, and the HBM "
    "passes of the layers' norms, rotary embedding, gating and residual adds where it runs them as eager PyTorch "
    "operators (the Hugging Face Trainer family and DeepSpeed, unless kernels are fused), and the CPU's launches of "
    "those operators' kernels one at a time where they outlast the GPU's work; its own kernels' speed beyond that "
    "(Unsloth's Triton kernels, Liger's fused ones) is not, "
    "so frameworks are not compared on this line"
)


def speed_notes(model: ResolvedModel, setup: TrainingSetup, expert_parallel: int) -> list[str]:
    """What the speed block says it assumes: an MoE step's model and what it leaves out, and the framework's part."""
    moe = moe_step(model.architecture, expert_parallel=expert_parallel)
    trainer = setup.framework is not None and framework_profile(setup.framework).peft_lora  # the Trainer's family
    measured = [TRAINER_SPEED_NOTE] if trainer else [TORCHTUNE_ADAPTER_NOTE] if torchtune_adapters(setup) else []
    return [*moe_step_assumptions(moe), FRAMEWORK_SPEED_NOTE, *measured]


def torchtune_adapters(setup: TrainingSetup) -> bool:
    """Whether the job is one of torchtune's LoRA / QLoRA recipes, whose published rows specgen's figures miss."""
    return setup.framework is not None and framework_profile(setup.framework).name == "torchtune" and setup.method != "full"


def offload_host_dram(
    model: ResolvedModel, setup: TrainingSetup, mem: TrainingMemory, gpu: GpuSpec, world: int, consts: Constants
) -> tuple[PlatformSpec | None, CpuSpec | None, int, int | None]:
    """The server the estimate's CPU offload is timed on (:func:`assumed_host`), its CPU, sockets and DIMMs' rate.

    The server built as the planner builds it for the job's host RAM (:func:`~generator.planner.training.job_host_dram`):
    a desktop whose RAM takes two DIMMs a channel runs them at its CPU's two-DIMM rating (newuser76 item 13). ``world``
    GPUs share one server's host unless they take several (:func:`multi_server`): a server's GPUs then.
    """
    platform = assumed_host(gpu)
    if platform is None:
        return None, None, 1, None
    gpus = host_gpus(multi_server(gpu, world), world)
    cpu, sockets, mt_per_s = job_host_dram(model.architecture, setup, mem, platform, gpu, gpus, consts)
    return platform, cpu, sockets, mt_per_s


def in_host_slots(gpu: GpuSpec, platform: PlatformSpec | None) -> GpuSpec:
    """``gpu`` in the slots of the server its CPU offload is timed on: as wide as that server's CPU gives them.

    A desktop CPU's GPU lanes are split between its cards (AM5: x16 for one, x8 each for two; ``cpus.json``
    ``gpu_slot_lanes``, sourced there), as the plan fits them (:meth:`~generator.catalog.records.PlatformSpec.fitted_gpu`):
    the estimate's 2 x RTX 3090 tower said PCIe Gen4 x16 a GPU where the plan of the same tower times x8 (fix114).
    """
    return gpu.in_slots(platform.gpu_slot_lanes) if platform is not None else gpu


def offload_host_text(gpu: GpuSpec, world: int, dram: tuple[PlatformSpec | None, CpuSpec | None, int, int | None]) -> str:
    """Where the estimate's CPU offload is timed: the GPU's host link and the DRAM of the server assumed for it.

    ``world`` GPUs share one server's host unless they take several (:func:`multi_server`): a server's GPUs then;
    ``dram``: :func:`offload_host_dram`'s server, CPU, sockets and DIMMs' rate.
    """
    world = host_gpus(multi_server(gpu, world), world)
    platform, cpu, sockets, mt_per_s = dram
    if platform is None:
        text = f"{UNKNOWN_HOST_DRAM_GB_PER_S:g} GB/s of DRAM a socket assumed (no catalog server of {gpu.id} names its CPU)"
    else:
        name = cpu.name if cpu is not None else platform.cpu_id
        rate = ""
        if cpu is not None and mt_per_s:
            generation = (cpu.ddr_generation or "DDR").upper()
            # the DIMMs the plan would choose for the job's host RAM, or the server's own RAM as it is built (review78
            # item 8: the job was named where the platform's fixed RAM set two a channel)
            held = (
                "the job's host RAM" if memory_chosen(platform, cpu) else f"the server's {platform.ram_gib or 0:g} GiB as built"
            )
            two = f", two DIMMs a channel to hold {held} ({generation}-{cpu.ddr_mt_per_s} at one)"
            rate = f" at {generation}-{mt_per_s}{two if mt_per_s < cpu.ddr_mt_per_s else ''}"
        text = f"{platform.id}'s {sockets} x {name} DRAM{rate} (assumed: the catalog's largest server of {gpu.id})"
    return f"over {host_link_name(in_host_slots(gpu, platform), world)} a GPU and {text}, {world} GPU(s) sharing it"


def _figure(value: float) -> float:
    """``value`` to 6 significant digits: a run of seconds keeps its figure in hours."""
    return float(f"{value:.6g}")


def _basis(gpu: GpuSpec, world: int, comm: StepComm) -> str:
    """Where the step places the job's GPUs."""
    if world == 1:
        return "one GPU, no communication"
    servers = multi_server(gpu, world)
    if servers is None:
        return f"all {world} GPUs in one server, over {gpu_link(gpu, world)[1]}"
    last = world - (servers.nodes - 1) * servers.gpus_per_node
    filled = "" if last == servers.gpus_per_node else f", the last with {last}"
    return (
        f"{world} GPUs on {servers.nodes} x {servers.platform.id} ({servers.gpus_per_node} GPUs each{filled}: the most "
        f"of {gpu.id} a catalog server holds and powers, assumed), over {gpu_link(gpu, servers.gpus_per_node)[1]} inside "
        "a server and "
        f"{comm.dp_link_text if comm.step.dp_inter_node_s else 'no data-parallel traffic'} between them"
    )


def training_speed(
    model: ResolvedModel,
    setup: TrainingSetup,
    mem: TrainingMemory,
    par: Parallelism,
    gpu: GpuSpec,
    consts: Constants,
    expert_parallel: int = 1,
    dataset_tokens: int | None = None,
    epochs: float = 1.0,
) -> dict[str, Any]:
    """The step, tokens per second and MFU of the estimate's job on ``gpu``; a run's hours where ``dataset_tokens`` given.

    ``epochs`` passes over ``dataset_tokens`` tokens, as a workload's ``training.epochs`` and ``dataset_tokens``.
    """
    comm = estimate_step(model, setup, mem, par, gpu, consts, expert_parallel)
    step, layout = comm.step, step_layout(setup, par)
    tokens_per_s = layout.tokens_per_step / step.total_s
    model_flops = training_flops_per_token(model.architecture, setup.method, "none")  # 6N (4N adapters), what MFU counts
    out: dict[str, Any] = {
        "basis": _basis(gpu, layout.world, comm),
        "links": {"data_parallel": comm.link, "pipeline_stages": comm.stage_link, "tensor_parallel": comm.tp_link},
        "micro_batch_size": layout.micro_batch_size,
        "accumulation_steps": layout.accumulation,
        "data_parallel": layout.dp,
        "sequences_per_step": layout.micro_batch_size * layout.accumulation * layout.dp,
        "tokens_per_step": layout.tokens_per_step,
        "step_seconds": round(step.total_s, 4),
        "step_time": step.as_dict(),
        "step_summary": step_split_text(comm, par.tp, par.pp, layout.dp),
        "tokens_per_second": round(tokens_per_s, 1),
        "tokens_per_second_per_gpu": round(tokens_per_s / layout.world, 1),
        # model FLOPs per second over the GPUs' dense bf16 peak, as the plan's step MFU
        "model_flops_utilization": round(model_flops_utilisation(step, layout, model_flops, gpu.tflops("bf16") or 0.0), 4),
        "not_counted": _not_counted(model, setup, layout.world, gpu),
        "notes": speed_notes(model, setup, expert_parallel),
    }
    if setup.compute_precision == "fp8":  # review71 item 13: an FP8 job's MFU is over the bf16 peak, as the rows define it
        out["mfu_basis"] = MFU_BASIS_FP8
    if step.pipeline_virtual_stages > 1:  # the interleaved schedule timed, which Megatron-LM leaves off (newuser70 item 4)
        out["pipeline_schedule"] = pipeline_schedule_details(step)
        out["notes"] = [*out["notes"], pipeline_schedule_text(step)]
    if step.offload_s or step.offload_link_s:
        out["cpu_offload"] = {
            "host": offload_host_text(gpu, layout.world, offload_host_dram(model, setup, mem, gpu, layout.world, consts)),
            "host_link_gb_per_step": round(step.offload_bytes / 1e9, 3),
            "seconds": round(step.offload_s, 4),
            "share_of_step": round(step.offload_s / step.total_s, 4),
        }
    if dataset_tokens is not None:
        hours = run_hours(dataset_tokens, epochs, layout, step, consts)
        out["run"] = {
            "dataset_tokens": dataset_tokens,
            "epochs": epochs,
            "tokens": round(dataset_tokens * epochs),
            "optimizer_steps": math.ceil(dataset_tokens * epochs / layout.tokens_per_step),
            "goodput": consts.training_goodput,
            "step_hours": _figure(hours * consts.training_goodput),
            "run_hours": _figure(hours),
            "hours_per_epoch": _figure(hours / epochs),
            "gpus": layout.world,
            "gpu_hours": _figure(hours * layout.world),
            "notes": _run_notes(dataset_tokens * epochs, layout.tokens_per_step, hours, layout.sequence_length),
        }
    return out


def _run_notes(tokens: float, tokens_per_step: int, hours: float, sequence_tokens: int) -> list[str]:
    """What a run's figures leave unsaid at the ends (fuzz21 item 10), as the plan's training findings say it.

    Always the packing the steps are counted with (newuser76 item 5): the frameworks' SFT defaults pad each example
    instead, which takes more steps over the same text.
    """
    notes = [
        f"every sequence packed full to {sequence_tokens:,} tokens (TRL packing=True, axolotl sample_packing, "
        "torchtune's packed datasets); unpacked, each example pads to the longest in its micro-batch: give the "
        f"tokens the steps hold (examples x the padded length, examples x {sequence_tokens:,} at most)"
    ]
    if tokens < tokens_per_step:
        notes.append(
            f"{tokens:,.0f} tokens are less than one optimizer step's {tokens_per_step:,}: the one step runs partly "
            "filled, timed at its share of the tokens"
        )
    if hours > HOURS_PER_YEAR:
        notes.append(f"{hours / HOURS_PER_YEAR:,.1f} years: more GPUs (--gpus), fewer tokens or a smaller model")
    return notes


def training_speed_lines(speed: dict[str, Any]) -> list[str]:
    """The estimate's text of :func:`training_speed`: the plan's step line, the batch, the rates, a run's hours."""
    seqs = "sequence" if speed["sequences_per_step"] == 1 else "sequences"
    accumulation = "accumulation step" if speed["accumulation_steps"] == 1 else "accumulation steps"
    longest = speed.get("timed_at_longest_sequence")
    at = f"at the longest sequence that fits, {longest:,} tokens: " if longest is not None else ""
    lines = [
        f"  speed        {at}{speed['step_summary']}",
        f"               micro-batch {speed['micro_batch_size']} x {speed['accumulation_steps']} {accumulation} x DP "
        f"{speed['data_parallel']} = {speed['sequences_per_step']:,} {seqs} ({speed['tokens_per_step']:,} tokens) per "
        "optimizer step",
        f"               {speed['tokens_per_second']:,.0f} tokens/s ({speed['tokens_per_second_per_gpu']:,.0f} per GPU), "
        f"{speed['model_flops_utilization']:.1%} MFU (model FLOPs: the weights' 6N a token, 4N for LoRA, without "
        f"attention's, over {speed.get('mfu_basis', MFU_BASIS)}); {speed['basis']}",
    ]
    offload = speed.get("cpu_offload")
    if offload:
        lines.append(
            f"               CPU offload {offload['seconds']:.3f} s of the step ({offload['share_of_step']:.0%}): "
            f"{offload['host_link_gb_per_step']:,.1f} GB per GPU over the host link, {offload['host']}"
        )
    lines += [f"               not counted: {n}" for n in speed["not_counted"]]
    lines += [f"               note: {n}" for n in speed["notes"]]
    run = speed.get("run")
    if run:
        epochs = f"{run['epochs']:g} epoch{'' if run['epochs'] == 1 else 's'}"
        steps = f"{run['optimizer_steps']:,} optimizer step{'' if run['optimizer_steps'] == 1 else 's'}"
        gpu_hours = f"{run['gpu_hours']:,.2f}" if run["gpu_hours"] >= 0.1 else f"{run['gpu_hours']:.2g}"
        per_epoch = f"; {hours_text(run['hours_per_epoch'])} per epoch" if run["epochs"] != 1 else ""
        lines.append(
            f"  run          {run['dataset_tokens']:,} tokens x {epochs} = {steps}: {hours_text(run['run_hours'])} "
            f"({hours_text(run['step_hours'])} of steps / {run['goodput']:g} goodput), {gpu_hours} GPU-hours on "
            f"{run['gpus']} GPU(s){per_epoch}"
        )
        lines += [f"               {note}" for note in run["notes"]]
    return lines
