"""Workloads on hardware you already have (``hardware.fixed``): a placement plan instead of a purchase."""

from __future__ import annotations

import math
from typing import Any

from generator import catalog
from generator.calculator.llama_cpp_threads import llama_cpp_threads
from generator.calculator.llama_cpp_vendor import prompt_unchecked_note
from generator.calculator.machine import (
    ASSUMED_CPU,
    NUMACTL_ONE_NODE,
    FixedSpec,
    build_machine,
    machine_findings,
    machine_kind,
    numa_note,
    wider_machine,
)
from generator.calculator.offload_report import (
    checklist,
    findings,
    fixed_file,
    offload_summary,
    runtime_settings,
    tokens_per_s_text,
)
from generator.calculator.prefill_bound import prefill_summary, prompt_prefill_text
from generator.catalog.records import CpuSpec
from generator.errors import FleetLimitError
from generator.named_tuple import NamedTuple
from generator.planner.assemble import (
    device_plugin_findings,
    gpu_taint,
    single_host_findings,
    totals,
)
from generator.planner.driver_series import driver_series_findings
from generator.planner.fixed_energy import fixed_energy_findings
from generator.planner.fixed_engines import AS_OWNED, serving_engines
from generator.planner.fixed_place import (
    fixed_machine,
    gpus_hold_model,
    place_for_rate,
    slot_request_s,
    slot_slack_s,
    slot_wait_at,
)
from generator.planner.heat import heat_btu_per_h
from generator.planner.naming import pool_name
from generator.planner.nodes import parts_dc_load_w
from generator.planner.option import pool_labels
from generator.planner.plan import DeploymentPlan, Finding, NodeSpec, Plan, Pool, sorted_findings
from generator.planner.setting_findings import model_findings, unused_setting_findings
from generator.planner.site_power import site_power_findings, site_power_refusal
from generator.planner.slo import effective_slo
from generator.planner.wall_circuit import wall_circuit_advice
from generator.sizing.architecture import Architecture
from generator.sizing.constants import Constants
from generator.sizing.context_limit import llama_cpp_rope_planned
from generator.sizing.offload import (
    Machine,
    OffloadCost,
    OffloadPlan,
    StreamCapacity,
    layer_split_degree,
    splits_context_over_slots,
)
from generator.sizing.serving_queue import TAIL_SHARE, SlotWait
from generator.sizing.slot_step import slot_step_text
from generator.units import GIB, TB, figure_text, long_seconds_text, seconds_text
from generator.workload import LoadedWorkload
from generator.workload.models import InferenceDeployment, InferenceSpec, WallCircuit, Workload


def _power_basis(module_tdp: bool, cpu_known: bool) -> str:
    """What the existing machine's power figure sums."""
    if module_tdp:
        return "GPU module TDP, its CPU included (existing machine)"
    if cpu_known:
        return "GPU TDP, the CPU's most rated draw, DIMMs and drive (existing machine)"
    return "GPU TDP, DIMMs and drive (existing machine, CPU unknown)"


def dc_load_w(fixed: FixedSpec, consts: Constants) -> float:
    """DC load the machine's power supply carries at full load: its parts, as a catalog server's are summed.

    :func:`~generator.planner.nodes.parts_dc_load_w`, every socket drawing (fuzz17 item 6), its one drive among them.
    """
    host = (catalog.cpus().get(fixed.cpu or ""), fixed.cpu_sockets, fixed.ram_gib)
    drive_w = consts.nvme_power_w if fixed.nvme_gib else 0.0
    return parts_dc_load_w(catalog.find_gpu(fixed.gpu), fixed.gpu_count, host, drive_w, consts)


def _outlet_advice(
    fixed: FixedSpec, cpu: CpuSpec | None, wall_w: int, circuit: WallCircuit | None, consts: Constants
) -> str | None:
    """The wall circuit's advice for the machine drawing ``wall_w`` (:func:`wall_circuit_advice`), None where it carries it.

    fix185 item 4: with no CPU given its draw was counted as none, so three RTX 3090s read 1,252 W and passed a 120 V /
    15 A circuit (1,368 W continuous), while the plan assumed a Core i9-14900K's memory and cores: 1,548 W with it.
    The check then counts the CPU assumed (a superchip's is in its GPU's TDP), and says so. Whether the machine
    stands on an outlet is the caller's (a machine whose CPU is not named may be a server in a rack).
    """
    if cpu is not None or not fixed.gpu:
        return wall_circuit_advice("the machine", wall_w, circuit)
    kind = machine_kind(fixed, catalog.find_gpu(fixed.gpu))
    assumed = catalog.cpus()[ASSUMED_CPU[kind]]
    with_cpu = wall_w if kind == "superchip" else round(dc_load_w(fixed._replace(cpu=assumed.id), consts) / consts.psu_efficiency)
    machine = "the machine" if with_cpu == wall_w else (
        f"the machine, with a CPU like {assumed.name} as its memory and cores are assumed (no CPU given; "
        f"{wall_w:,} W without one),"
    )  # fmt: skip
    return wall_circuit_advice(machine, with_cpu, circuit)


def _node(fixed: FixedSpec, machine: Machine, basis: str, consts: Constants) -> NodeSpec:
    gpu = catalog.find_gpu(fixed.gpu)
    cpu = catalog.cpus().get(fixed.cpu or "")
    sockets = fixed.cpu_sockets
    power = round(dc_load_w(fixed, consts) / consts.psu_efficiency)
    return NodeSpec(
        platform_id="fixed",
        platform_name="existing server (hardware.fixed)",
        kind="fixed",
        provider="baremetal",
        instance_type=None,
        gpu_id=gpu.id,
        gpu_name=gpu.name,
        gpus=fixed.gpu_count,
        gpu_memory_gib=round(gpu.memory_bytes / GIB, 2),
        cpu=(f"{sockets}x " if sockets > 1 else "") + cpu.name if cpu else f"CPU with {basis.split(';', maxsplit=1)[0]}",
        cpu_cores=(cpu.cores if cpu else fixed.cpu_cores or 0) * sockets,  # newuser107: the cores given, uncatalogued
        ram_gib=int(fixed.ram_gib),
        nvme_tb=round(fixed.nvme_gib * GIB / TB, 2),
        nvme_drives=1 if fixed.nvme_gib else 0,
        nvme_read_gb_per_s=fixed.nvme_read_gb_per_s,
        nvme_write_gb_per_s=0.0,
        nics=(),
        power_w=power,
        power_basis=_power_basis(gpu.tdp_includes_host_cpu, cpu is not None),
        heat_btu_per_h=heat_btu_per_h(power),
        cooling="air",
        rack_units=None,
        psu=f"{fixed.psu_w:,.0f} W (as given)" if fixed.psu_w is not None else None,
        nvswitch=False,
    )


def threads_past_node(fixed: FixedSpec) -> str | None:
    """Why ``hardware.fixed.threads`` oversubscribe the one node the plan binds llama.cpp to, else None (fix159).

    The schema's check bounds them by every socket's threads, but bound to one node (``numactl -N 0 -m 0``) they share
    its socket's: ggml's threads meet at a barrier after each operation of the graph, so one waiting for a core holds
    up the others; the CPU's share is timed on that socket's cores (:func:`~generator.calculator.machine.thread_cores`).
    """
    cpu = catalog.cpus().get(fixed.cpu or "")
    node = cpu.socket_threads if cpu is not None else 0
    if cpu is None or not fixed.threads or fixed.threads <= node:
        return None
    return (
        f"threads {fixed.threads} is more than the {node} threads of the one {cpu.name} socket llama.cpp is bound to "
        f"(numactl {NUMACTL_ONE_NODE}, its weights in that node's RAM): the threads past them would wait for its cores, "
        f"and ggml's threads meet at a barrier after each operation, so they would slow the others, which the figures "
        f"(the CPU's share timed on its {cpu.llama_cpp_cores} cores) do not count: the line runs --threads {node}, "
        f"the socket's; give at most {node}"
    )


def _rope_finding(arch: Architecture, request_tokens: int, options: dict[str, Any], engine: str, index: int) -> Finding | None:
    """What the line carries for requests past the GGUF's context_length of a RoPE-scaled model (fix159), else None.

    The flags are the line's own (``options``: :func:`~generator.sizing.context_limit.rope_options`, which the
    estimate's lines take too), so the finding says what was rendered.
    """
    rope = arch.llama_cpp_rope
    if rope is None or "rope_scaling" not in options:
        return None
    message = llama_cpp_rope_planned(rope, request_tokens, engine)
    return Finding("info", "llama-cpp-rope-scaling", message, f"deployments[{index}].inference.max_context_tokens")


def _given_tokens(wl: Workload) -> int | None:
    """The tokens of vLLM's forward pass where the workload sets them (``constants: prefill_chunk_tokens``)."""
    chunk = wl.constants.get("prefill_chunk_tokens")
    return int(chunk) if isinstance(chunk, int | float) else None


def _fixed_gpu_name(wl: Workload) -> str:
    assert wl.hardware.fixed is not None
    return catalog.find_gpu(wl.hardware.fixed.gpu).name


def _deployment(
    loaded: LoadedWorkload, index: int, machine: Machine, pool: str, consts: Constants, basis: str
) -> tuple[DeploymentPlan, list[Finding]]:
    """One deployment placed on the machine; ``basis``: the machine's bandwidths as sized (memory, cores, host link)."""
    wl = loaded.workload
    assert wl.hardware.fixed is not None
    wider = wider_machine(machine, wl.hardware.fixed)
    plan, machine, spans, slots, lone = place_for_rate(loaded, index, machine, consts)
    if spans:  # the threads counted over the sockets (wider_machine), as the basis now says (fix163)
        basis = build_machine(wl.hardware.fixed, bound=True, spans_nodes=True)[2]
    dep = wl.deployments[index]
    assert isinstance(dep, InferenceDeployment)
    spec = dep.inference
    model = loaded.models[dep.name]
    arch = model.architecture
    cost = plan.cost
    notes = [
        Finding(level, code, message, f"deployments[{index}]")  # type: ignore[arg-type]
        for level, code, message in findings(plan, machine, consts, fixed_file(arch))
    ]
    if slots is not None:
        notes.append(_slots_finding(spec, slots, cost.decode_tokens_per_s, index, plan.engine))
    # a lone stream below the interactive rate is said by slow-decode: the defaulted TPOT would say it again
    slow = cost.decode_tokens_per_s < consts.interactive_tokens_per_s
    queue = _slot_queue(spec, cost, slots)
    # with slots, the TPOT of a request at the rate: the slots in use on average decode together (review76 item 5)
    mean_tpot_s = (queue.request_s - cost.ttft_s) / spec.avg_output_tokens if queue and slots and slots.speeds else None
    missed = _slo_findings(spec, cost.ttft_s, slots or cost.decode_tokens_per_s, index, slow, mean_tpot_s)
    waiting = queue is not None and _slot_wait_past_slack(spec, cost, queue)
    twin = _serving_engines_finding(loaded, index, plan) if missed or waiting else None
    # the owned server serves it under vLLM / SGLang: no advice to buy servers (newuser77 item 11)
    advice = f"or {TWIN_ADVICE}" if twin is not None else BUY_ADVICE
    waits = [_slot_wait_finding(queue, index, advice)] if waiting and queue is not None else []
    if queue is not None and (long_wait := _batch_wait_finding(spec, cost, queue, index)) is not None:
        waits.append(long_wait)  # fix192: a batch service's wait outlasting its requests, said as a finding too
    notes += [*missed, *waits, *([twin] if twin is not None else [])]
    fullest = max(plan.placement.per_gpu, key=lambda b: b.total)
    settings = runtime_settings(
        arch,
        plan,
        machine,
        consts,
        _fixed_gpu_name(wl),
        _given_tokens(wl),
        spec.kv_cache_precision,
        spans,
        wider,
        slots.streams if slots else 1,
        lone.placement.context_tokens,  # a request's, where the slots' cache holds several
        jinja=spec.tool_calling,  # fix184: llama-server's tool calls take --jinja
    )
    options = settings[f"{plan.engine}_options"]
    if rope := _rope_finding(arch, lone.placement.context_tokens, options, plan.engine, index):
        notes.append(rope)
    details: dict[str, Any] = {
        "context_tokens": plan.placement.context_tokens,
        # the rate the machine serves, in the Terraform and Ansible outputs as a bought pool's (newuser19 item 6)
        "requests_per_s": spec.requests_per_second,
        "decode_tokens_per_s": round(cost.decode_tokens_per_s, 3),
        "ttft_s": round(cost.ttft_s, 3),
        "ttft_prompt_tokens": cost.prompt_tokens,
        "prefill_tokens_per_s": round(cost.prefill_tokens_per_s, 3),
        "ubatch_tokens": plan.ubatch_tokens,
        **prefill_summary(cost),  # fix194: what bounds the prefill, the estimate's prefill_bound / prefill_seconds
        "cold_start_s": round(cost.cold_start_s, 2),
        "offload": offload_summary(plan, machine),
        "runtime_settings": settings,
        # llama.cpp's threads the CPU's share is timed at, for the rendered --threads: hardware.fixed.threads where
        # given, else the given CPU's cores its default runs on (one socket's, a hybrid's P-cores); none where no CPU is
        # given (its cores unknown or assumed)
        **({"llama_cpp_threads": threads} if (threads := llama_cpp_threads(wl.hardware.fixed, machine, options)) else {}),
        "checklist": checklist(plan, machine, wider, consts, settings),
        **(_slot_wait_details(queue) if queue is not None else {}),
    }
    reasons = [
        # newuser68 item 7: the host link a desktop's two GPUs split (x8/x8) sets the prompt's copies, and went unsaid
        f"machine as sized: {basis}",
        *plan.decisions,
        *_slots_trade(slots, plan, lone, spec.avg_output_tokens),
        *([_slot_wait_text(spec, cost, queue)] if queue is not None else []),
        f"decode {tokens_per_s_text(cost.decode_tokens_per_s)} tokens/s ({cost.bound}-bound, {cost.mode}); "
        f"TTFT {seconds_text(cost.ttft_s)} for {prompt_prefill_text(details)}; cold start {seconds_text(cost.cold_start_s)}",
        # newuser99 item 1, acc171: what of an AMD GPU's llama.cpp prompt is checked (HIP kernels), another maker's is not
        *([unchecked] if (unchecked := prompt_unchecked_note(machine.gpu_vendor)) else []),
    ]
    return (
        DeploymentPlan(
            name=dep.name,
            kind="inference",
            model_id=model.id,
            model_source=model.source,
            params_total=arch.params_total,
            params_active=arch.params_active,
            precision=plan.placement.precision,
            kv_cache_precision=spec.kv_cache_precision,
            tp=1,
            pp=layer_split_degree(machine.gpus, arch),
            replicas=1,
            gpus=machine.gpus,
            pool=pool,
            memory_per_gpu=fullest.as_dict(),
            details=details,
            reasons=tuple(reasons),
        ),
        notes,
    )


def _slots_trade(slots: StreamCapacity | None, plan: OffloadPlan, lone: OffloadPlan, output_tokens: int) -> list[str]:
    """What the slots' KV cache took from the weights on the GPUs, and a request's time then ([] where it took none).

    review73 item 1b: 197 slots at 0.05 req/s took 26 GiB a GPU from the weights a lone request's placement held
    there (27.3 -> 1.3 GiB), each slot decoding 0.15 tokens/s, and only the slo-missed warning's TPOT said it. The
    speed is with all the slots decoding (acc146: fix166 read "0.64 tokens/s ... about 508 s" against the slot queue's
    1,568 s a request, whose slots decode fewer at a time, on one thread slower each than 34 whose step the GPU runs).
    """
    if slots is None:
        return []
    now = max(b.weights for b in plan.placement.per_gpu)
    before = max(b.weights for b in lone.placement.per_gpu)
    if now >= before:
        return []

    def off(placed: OffloadPlan) -> int:  # decoder layers held whole in RAM or on disk
        return sum(device in ("cpu", "disk") for device in placed.placement.layer_devices)

    moved = off(plan) - off(lone)
    each = slots.slot_tokens_per_s
    request = f"{output_tokens / each:,.0f} s" if each > 0 else "no end"
    if each > 0 and output_tokens / each >= 120:
        request += f" ({output_tokens / each / 60:,.0f} min)"
    return [
        f"the rate is held only by {slots.streams} server slots whose KV cache of {slots.context_tokens:,} tokens takes "
        f"the GPUs' memory from the weights: {before / GIB:.1f} GiB of weights on the fullest GPU for a lone request, "
        f"{now / GIB:.1f} with the slots ({moved} more layer(s) whole in system RAM); each slot decodes "
        f"{tokens_per_s_text(slots.stream_tokens_per_s)} tokens/s with all {slots.streams} decoding"
        f"{_prompt_share_text(slots.prompt_share)}, so a request's {output_tokens:,} output tokens take about {request}"
    ]


class _SlotQueue(NamedTuple):
    """The machine's server slots as a queue at the rate (:func:`_slot_queue`)."""

    #: A request's mean seconds in a slot (Little: the slots in use over the rate).
    request_s: float
    slots: StreamCapacity
    wait: SlotWait


def _slot_queue(spec: InferenceSpec, cost: OffloadCost, slots: StreamCapacity | None) -> _SlotQueue | None:
    """The wait for one of the machine's server slots at the rate (review74 item 6); None where a slot makes no tokens.

    A request holds a slot (llama.cpp's ``-np``; one where a lone stream makes the rate and its wait) for its TTFT and
    its output at a slot's speed (:func:`~generator.planner.fixed_place.slot_wait_at`), as a bought service's places
    are held. home-70b-offload: 2 slots at 0.01 req/s, about 119 s a request, waited 318 s at p95 unsaid.
    """
    if slots is None:  # one stream: its decode paused by the prompts' passes as a slot's is
        alone = cost.decode_tokens_per_s
        slots = StreamCapacity(1, alone, alone, 0, prompt_share=spec.requests_per_second * cost.prefill_s)
    if slots.slot_tokens_per_s <= 0 or spec.requests_per_second <= 0:
        return None
    wait = slot_wait_at(spec, cost.ttft_s, slots)
    # Little's law where the queue drains; without bound, a request's time with every slot busy (review76)
    all_busy_s = slot_request_s(spec, cost.ttft_s, slots)[-1]
    held_s = wait.offered / spec.requests_per_second if math.isfinite(wait.p95_s) else all_busy_s
    return _SlotQueue(held_s, slots, wait)


def _slot_wait_text(spec: InferenceSpec, cost: OffloadCost, queue: _SlotQueue) -> str:
    """The slot wait as the reasons say it: what a request holds, the load, and the share that waits with its p95."""
    wait, slots = queue.wait, queue.slots
    # the speeds as the parallel-slots warning and the decode line say them: decoding, beside the share of the time
    # the prompt passes leave, not the two multiplied (review76 item 6: 1.45 here against 1.47 there for one slot)
    speeds = f"{tokens_per_s_text(slots.stream_tokens_per_s)} tokens/s"
    if slots.streams > 1 and slots.speeds:
        alone, every = tokens_per_s_text(slots.speeds[0]), tokens_per_s_text(slots.stream_tokens_per_s)
        speeds = f"{alone} tokens/s alone, {every} with {slots.streams} decoding"
    speeds += _prompt_share_text(slots.prompt_share)
    text = (
        f"a request holds {_slot_text(wait.servers)} for {long_seconds_text(queue.request_s)} on average (its TTFT "
        f"{seconds_text(cost.ttft_s)} and {spec.avg_output_tokens:,} output tokens at {speeds}): {_waited_text(wait)} at "
        f"{figure_text(spec.requests_per_second)} req/s (request times taken as exponential)"
    )
    return text + (f"; {_more_slots_text(spec, cost, queue)}" if slots.rate_streams else "")


def _more_slots_text(spec: InferenceSpec, cost: OffloadCost, queue: _SlotQueue) -> str:
    """Why the slots are more than the rate's tokens take: the wait for one, held to what the TTFT target leaves."""
    target = effective_slo(spec)[0].slo.ttft_p95_ms
    slots = queue.slots
    more = f"{slots.streams} slots where the rate's tokens take {slots.rate_streams}"
    if slots.wait_basis == "cache":
        return (
            f"{more}, the most its KV cache of {slots.context_tokens:,} tokens holds (a larger cache would move weights "
            "off the GPUs or leave the prompt passes less room, slowing every request)"
        )
    if slots.wait_basis == "drain":
        return f"{more}, whose queue would not drain (a request holds its slot for its TTFT too): the fewest more that drain"
    if target is None:
        return f"{more}, so that the queue for one drains (a request holds its slot for its TTFT too)"
    slack_ms = target - cost.ttft_s * 1000
    held = (
        f"the p95 wait for one fits the {slack_ms:,.0f} ms the TTFT leaves of the {target:,.0f} ms target"
        if slack_ms > 0
        else f"at most one request in twenty waits for one (the TTFT alone misses the {target:,.0f} ms target)"
    )
    return f"{more}, so that {held}"


def _slot_text(slots: int) -> str:
    """The slot a request holds: one of several, or the server's one."""
    return f"one of the {slots} server slots" if slots > 1 else "the server's one slot (-np 1)"


def _waited_text(wait: SlotWait) -> str:
    """The slots in use, the share of requests that wait for one, and the p95 of that wait."""
    if not math.isfinite(wait.p95_s):
        return "every slot taken: the queue for one grows without bound"
    busy = f"{wait.offered:,.2f} of {wait.servers} slot(s) in use on average ({wait.utilisation:.0%})"
    if wait.waits <= TAIL_SHARE:
        return f"{busy}, {wait.waits:.1%} of requests wait for one (p95 wait 0)"
    return f"{busy}, {wait.waits:.0%} of requests wait for one, p95 wait {long_seconds_text(wait.p95_s)}"


#: The slot-wait warning's last advice where the server under the serving engines does no better.
BUY_ADVICE = "or plan servers to buy (drop hardware.fixed)"
#: ... and where it does (:func:`_serving_engines_finding` gives the figures).
TWIN_ADVICE = f"describe this server under {AS_OWNED} (fixed-serving-engines gives what it serves there)"


def _serving_engines_finding(loaded: LoadedWorkload, index: int, plan: OffloadPlan) -> Finding | None:
    """Where the machine's GPUs hold the model and llama.cpp misses the targets: what vLLM / SGLang replicas serve on it.

    newuser77 item 11: 8 x MI300X holding Llama 3.3 70B in FP8 was placed as llama.cpp's layer split, TP1 x PP8, 27
    slots at a TPOT of 65.8 ms against 50 and a p95 wait of 18 minutes at 1 req/s, advised to buy servers, where the
    same server as owned inventory runs 8 x TP1 vLLM replicas within the targets. None where weights are offloaded
    (vLLM and SGLang keep every weight on the GPUs) or the serving engines do no better (they miss the rate too).
    """
    if not gpus_hold_model(plan):
        return None
    served = serving_engines(loaded, index)
    if served is None or not served.meets_rate:
        return None
    dep = loaded.workload.deployments[index]
    assert isinstance(dep, InferenceDeployment)
    return Finding(
        "warning",
        "fixed-serving-engines",
        f"this machine's GPUs hold the model, and llama.cpp's layer split (one GPU at a time) misses the latency "
        f"targets here; described under {AS_OWNED} (one custom server of its GPUs and RAM), as specgen plans servers "
        f"for vLLM and SGLang, {served.text(dep.inference.requests_per_second)}",
        f"deployments[{index}]",
    )


def _slot_wait_past_slack(spec: InferenceSpec, cost: OffloadCost, queue: _SlotQueue) -> bool:
    """Whether the p95 wait for a slot is past what the TTFT leaves of the target.

    A batch service, whose slack has no bound, only where the queue has none (a long wait that drains is
    :func:`_batch_wait_finding`'s).
    """
    wait = queue.wait
    return not (math.isfinite(wait.p95_s) and wait.p95_s <= slot_slack_s(spec, cost.ttft_s))


def _slot_wait_finding(queue: _SlotQueue, index: int, advice: str) -> Finding:
    """The warning of a slot wait past the slack (:func:`_slot_wait_past_slack`), its last ``advice`` the way out."""
    return Finding(
        "warning",
        "slot-wait",
        f"requests queue for this machine's server slots: {_waited_text(queue.wait)}, before their TTFT; each holds a "
        f"slot {long_seconds_text(queue.request_s)} on average, and no more slots that the machine's memory holds wait "
        f"less. Lower the rate or the output length, {advice}",
        f"deployments[{index}].inference.requests_per_second",
    )


def _batch_wait_finding(spec: InferenceSpec, cost: OffloadCost, queue: _SlotQueue, index: int) -> Finding | None:
    """An info where no TTFT target holds the wait for a slot and its p95 outlasts a request's own time in one.

    fix192 (newuser107): a batch service of Qwen3-235B at q4_k_m on 2 x RTX 3090, 0.01 req/s on 3 slots busy 92% of the
    time, waited 101 min at p95 for a slot it then held 4.6 min, said in the reasons alone. Not a warning: a batch
    service has no target to miss (review74: said, not warned of); a queue that would not drain is ``slot-wait``'s.
    A TTFT target is the way out: the plan then takes the slots, or an allowed lower precision, that hold the wait.
    """
    wait = queue.wait
    if not math.isinf(slot_slack_s(spec, cost.ttft_s)) or not math.isfinite(wait.p95_s) or wait.p95_s <= queue.request_s:
        return None
    return Finding(
        "info",
        "batch-slot-wait",
        f"requests queue for this machine's server slots: {_waited_text(wait)}, {wait.p95_s / queue.request_s:,.1f}x the "
        f"{long_seconds_text(queue.request_s)} each then holds one on average; no TTFT target holds the wait (a batch "
        "service: the slots are the fewest whose queue drains). Give inference.slo.ttft_p95_ms to hold it (the plan "
        "then takes more slots or an allowed lower precision), or lower the rate or the output length",
        f"deployments[{index}].inference.requests_per_second",
    )


def _slot_wait_details(queue: _SlotQueue) -> dict[str, Any]:
    """``request_s``, ``slot_wait_share`` and ``slot_wait_p95_s`` (None without bound), as a bought service's details."""
    return {"request_s": round(queue.request_s, 3), **queue.wait.details()}


def _demand_text(demand: float, single_tokens_per_s: float, slots: StreamCapacity) -> str:
    """What takes the slots: the rate's output tokens beyond one stream, or the wait for one (``rate_streams``)."""
    one = tokens_per_s_text(single_tokens_per_s)
    needs = f"the request rate needs {demand:,.1f} output tokens/s and one stream makes {one}"
    if not slots.rate_streams:
        return needs
    if slots.rate_streams == 1:
        return f"{needs}, but requests would wait for it past the TTFT target (the deployment's reasons give the wait)"
    return (
        f"{needs}, {slots.rate_streams} slots make that, and the wait for one takes more (the deployment's reasons give the wait)"
    )


def _slots_finding(spec: Any, slots: StreamCapacity, single_tokens_per_s: float, index: int, engine: str) -> Finding:
    """How many server slots of ``engine`` the rate takes, and each one's speed then."""
    demand = spec.requests_per_second * spec.avg_output_tokens
    cache = (
        f"-np {slots.streams}, each holding {slots.context_tokens // slots.streams:,} of a KV cache of "
        f"{slots.context_tokens:,} tokens"
        if splits_context_over_slots(engine)
        else f"-np {slots.streams} -kvu, sharing a KV cache of {slots.context_tokens:,} tokens"
    )
    return Finding(
        "warning",
        "parallel-slots",
        f"{_demand_text(demand, single_tokens_per_s, slots)}: {slots.streams} {engine} server slots ({cache}) decode "
        f"together at about {tokens_per_s_text(slots.tokens_per_s)} tokens/s, "
        f"{tokens_per_s_text(slots.stream_tokens_per_s)} each "
        f"({slot_step_text(slots.mode, engine, slots.stream_tokens_per_s, single_tokens_per_s)})"
        + _prompt_share_text(slots.prompt_share),
        f"deployments[{index}].inference.requests_per_second",
    )


def _prompt_share_text(prompt_share: float) -> str:
    """``, in the 98% of its time the requests' prompt passes leave`` beside a slot's decode speed ('' under 1%)."""
    if prompt_share < 0.01:
        return ""
    return f", in the {1 - prompt_share:.0%} of its time the requests' prompt passes leave"


def _slo_findings(
    spec: InferenceSpec,
    ttft_s: float,
    speed: float | StreamCapacity,
    index: int,
    slow: bool = False,
    mean_tpot_s: float | None = None,
) -> list[Finding]:
    """The latency targets a machine of yours misses: it is placed as it is, so a miss is said, not planned away.

    The targets are the service's, an interactive service's defaults where it gives none, as a plan of bought servers
    holds them (newuser68 item 1: 25 slots at 1.21 tokens/s each, a TPOT of 828 ms, went unsaid). ``speed``: a lone
    stream's tokens/s, or the server slots the rate takes (each one's); ``slow``: a lone stream is below the interactive
    rate, which slow-decode says, so a lone stream's defaulted TPOT is not said again. ``mean_tpot_s``: a request's
    TPOT at the rate, its slot decoding beside as many as are in use (the TPOT checked, with the slowest beside it).
    """
    slo = effective_slo(spec)[0].slo
    defaulted = spec.slo.ttft_p95_ms is None, spec.slo.tpot_ms is None
    # a slot's TPOT counts the prompt passes that pause its decode (review69 item 6)
    tokens_per_s = speed.slot_tokens_per_s if isinstance(speed, StreamCapacity) else speed
    missed = []
    if slo.ttft_p95_ms is not None and ttft_s * 1000 > slo.ttft_p95_ms:
        target = "the interactive default" if defaulted[0] else "ttft_p95_ms"
        missed.append(f"TTFT {seconds_text(ttft_s)} against {target} {slo.ttft_p95_ms:g} ms")
    slowest_ms = 1000 / tokens_per_s if tokens_per_s > 0 else float("inf")
    tpot_ms = mean_tpot_s * 1000 if mean_tpot_s is not None else slowest_ms
    said = slow and defaulted[1] and not isinstance(speed, StreamCapacity)  # a lone stream's, as slow-decode says it
    if slo.tpot_ms is not None and tpot_ms > slo.tpot_ms and not said:
        target = "the interactive default" if defaulted[1] else "tpot_ms"
        mean = f" on average at the rate ({slowest_ms:,.1f} ms with all decoding)" if mean_tpot_s is not None else ""
        missed.append(f"TPOT {tpot_ms:,.1f} ms{mean} against {target} {slo.tpot_ms:g} ms")
    if not missed:
        return []
    each = f"each of {speed.streams} server slots" if isinstance(speed, StreamCapacity) else "a single stream"
    message = f"this machine misses the latency targets: {'; '.join(missed)} ({each}, at best)"
    if any(defaulted):
        message += "; give inference.slo for targets of your own, or service_class: batch for none"
    return [Finding("warning", "slo-missed", message, f"deployments[{index}]")]


#: What unblocks an owned machine over the site's power (its GPUs' limits are refused beside hardware.fixed).
FIXED_UNBLOCK = "contract more power (site_power.kw), or give a machine that draws less (hardware.fixed)"


def plan_fixed(loaded: LoadedWorkload, consts: Constants) -> Plan:
    """Place every deployment on the existing machine (each as if it were the resident model)."""
    wl = loaded.workload
    fixed = wl.hardware.fixed
    assert fixed is not None
    machine, _gpu, basis = fixed_machine(loaded)
    node = _node(fixed, machine, basis, consts)
    name = pool_name([wl.name], node.gpu_id)
    deployments: list[DeploymentPlan] = []
    notes: list[Finding] = []
    # what the machine as given assumes, and what cannot be as given, at its field (fuzz18 item 7)
    for level, code, field, message in machine_findings(fixed, consts):
        notes.append(Finding(level, code, message, "hardware.fixed" + (f".{field}" if field else "")))
    # newuser19 item 5: an owned machine's supply unchecked; newuser49 item 1: a supply is rated by the DC power it
    # delivers, which the wall draw overstates by the supply's losses
    load_w = round(dc_load_w(fixed, consts))
    if fixed.psu_w is not None and load_w > fixed.psu_w:
        notes.append(
            Finding(
                "warning",
                "psu-headroom",
                f"the machine's parts draw about {load_w:,} W DC at full load, {node.power_w:,} W at the wall "
                f"({node.power_basis}), more than the {fixed.psu_w:,.0f} W its power supply delivers, and GPUs' transient "
                "peaks go above their TDP: cap the GPUs' power (nvidia-smi -pl) or fit a larger supply",
                "hardware.fixed.psu_w",
            )
        )
    cpu = catalog.cpus().get(fixed.cpu or "")
    outlet = _outlet_advice(fixed, cpu, node.power_w, wl.hardware.wall_circuit, consts)
    on_outlet = wl.hardware.wall_circuit is not None or (cpu is not None and cpu.dimm_type == "udimm")  # fix166
    if on_outlet and outlet is not None:  # a desktop, or a circuit given: a home's or office's outlet
        notes.append(Finding("warning", "wall-circuit", outlet, "hardware.fixed"))  # newuser29 item 6
    for i in range(len(wl.deployments)):
        plan, found = _deployment(loaded, i, machine, name, consts, basis)
        deployments.append(plan)
        notes += found
    # offloaded as Placement.offloaded counts it (weights or KV cache off the GPUs), as the estimate asks it
    offloaded = any(
        b["cpu"] - b["embedding_cpu"] + b["disk"] + b["kv_cpu"] for b in (d.details["offload"]["bytes"] for d in deployments)
    )
    spans = any(
        d.details["runtime_settings"][f"{d.details['offload']['engine']}_options"].get("numa") == "distribute"
        for d in deployments
    )
    bound = any("numactl" in d.details["runtime_settings"][f"{d.details['offload']['engine']}_options"] for d in deployments)
    if bound and (past := threads_past_node(fixed)):
        notes.append(Finding("warning", "threads-past-node", past, "hardware.fixed.threads"))
    numa = numa_note(fixed, spans) if offloaded else None  # only what lives off the GPUs reads the sockets' memory
    if numa is not None:
        where = "hardware.fixed.cpu_sockets"
        spread = Finding("warning", "numa-spans-nodes", numa, where) if spans else None
        notes.append(spread or Finding("info", "one-socket-bandwidth", numa, where))
    if len(deployments) > 1:
        notes.append(
            Finding(
                "info",
                "models-share-machine",
                f"{len(deployments)} deployments share one machine: each placement assumes it is the resident model; "
                "switching evicts one and reloads the other (see cold_start_s)",
            )
        )
    labels = pool_labels(name, catalog.find_gpu(fixed.gpu), "fixed", "baremetal")
    pool = Pool(
        name=name,
        node=node,
        nodes=1,
        deployments=tuple(d.name for d in deployments),
        racks=0,
        power_w=node.power_w,
        usd_per_hour=None,
        price_basis=None,
        labels=labels,
        taints=(gpu_taint(catalog.find_gpu(fixed.gpu)),),
        # its host name, where given: the render names the host as an owned server's (fix192), else a placeholder
        owned_hosts=(fixed.host_name,) if fixed.host_name else (),
    )
    # fix204: a home or lab user who gives site_power means "does my machine fit the power I have": check it, as a fleet
    if (over_site := site_power_refusal((pool,), wl.hardware.site_power, FIXED_UNBLOCK)) is not None:
        raise FleetLimitError(over_site, "site_power", node.power_w)
    return Plan(
        workload=wl.name,
        objective="placement on existing hardware",
        provider="baremetal",
        region=None,
        data_residency=wl.kubernetes.data_residency,
        deployments=tuple(deployments),
        pools=(pool,),
        totals=totals([pool]),
        findings=sorted_findings(
            [
                *notes,
                *single_host_findings(wl, (pool,)),
                *device_plugin_findings(wl, (pool,)),
                *driver_series_findings(wl, (pool,)),
                *unused_setting_findings(wl),
                *fixed_energy_findings(wl, node.power_w, consts),
                *site_power_findings((pool,), wl.hardware.site_power),
                *model_findings(loaded),
            ]
        ),
        constants=dict(sorted(wl.constants.items())),
    )
