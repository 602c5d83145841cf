"""What would unblock a service every layout of which is ruled out (:func:`generator.planner.unblock.unblock_hint`).

Latency alone (the targets, the GPU's memory or tensor rate), vLLM's start-up check (the batch limits and the context),
a precision no allowed GPU serves, else memory's ways, led by the network's fix where the link rules layouts out, by
the LoRA slots' or the adapters' CPU caches' where those fill a GPU or a node.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator.calculator.model_source import serving_format
from generator.planner.blocked import NO_LAYOUT, POOL_TOO_LARGE, RACK_POWER, START_REFUSED, UNSERVED_FORMAT
from generator.planner.lora_ram import caches_rule_out_all, lora_ram_hint
from generator.planner.naming import MAX_NODES_PER_POOL
from generator.planner.unblock_ways import MORE_SERVERS, OWNED_MORE_MEMORY, count_fields, led_by, network_lead
from generator.sizing.step_down import serving_precision_advice

if TYPE_CHECKING:
    from generator.calculator.model_source import ResolvedModel
    from generator.planner.blocked import Blocked
    from generator.workload.models import InferenceDeployment


def unserved_precision_hint(dep: InferenceDeployment) -> str:
    """What unblocks a service no allowed GPU serves the precision of (early checks and the search say it alike)."""
    return (
        f"to unblock: a precision these GPUs serve (inference.precision; each reason above names what the engine "
        f"lacks), or allow a GPU that serves {dep.inference.precision or 'it'}"
    )


def fp8_kv_way(blocked: list[Blocked]) -> str:
    """The FP8 KV cache that fits a layout memory rules out, with the KV tokens it holds; "" where none does.

    fix183 item 3: the layout of fewest GPUs it fits, most tokens among them (the figure :func:`generator.planner.
    inference._fp8_kv_fit` sized), and how many more layouts it fits.
    """
    fits = sorted({(b.gpu_id, *b.fp8_kv_fit) for b in blocked if b.fp8_kv_fit is not None})
    if not fits:
        return ""
    gpu_id, tokens, layout = min(fits, key=lambda f: (_gpus(f[2]), -f[1], f[0], f[2]))
    more = f", and {len(fits) - 1} more layout(s) ruled out" if len(fits) > 1 else ""
    return (
        f"kv_cache_precision: fp8 (the engine's --kv-cache-dtype; a token's KV in half the bytes) fits {layout} on "
        f"{gpu_id}{more}: {tokens:,} KV tokens a replica (check the model's output quality with an FP8 cache)"
    )


def _gpus(layout: str) -> int:
    """The GPUs a layout named "TP<t> PP<p>" (or "TP<t> EP<e> PP<p> ...") takes: TP x PP."""
    words = layout.split()
    return int(words[0][2:]) * next((int(w[2:]) for w in words if w.startswith("PP")), 1)


def inference_hint(
    dep: InferenceDeployment,
    model: ResolvedModel,
    blocked: list[Blocked],
    power_field: str,
    *,
    racks: bool,
    ttft_p95_factor: float,
    bought: bool,
) -> str:
    """What would unblock the service ``dep`` ``blocked`` so (the arguments: :func:`~generator.planner.unblock.unblock_hint`)."""
    servers = MORE_SERVERS if racks else ""
    if blocked and all(b.code == UNSERVED_FORMAT for b in blocked):
        # no GPU allowed serves the precision: memory, context and SLOs are not the issue (newuser52 item 2: AMD
        # refused int8 and was told to try int4, which it refuses too)
        return unserved_precision_hint(dep)
    # the search serves the deployment's one precision; a lower one is advised only where vLLM / SGLang know one
    fmt = serving_format(model, dep.inference.precision)
    precision = serving_precision_advice(model.architecture, [fmt])
    slow = [b for b in blocked if b.excess is not None]
    # latency alone rules the layouts out; a platform's own limits (network, rack, PSU) are no memory problem (review 11)
    if slow and all(b in slow for b in blocked if b.code == NO_LAYOUT):
        # latency alone: memory and a shorter context do not make a batch of one faster (newuser14 item 7)
        racked = sorted({b.gpu_id for b in blocked if b.code == RACK_POWER})
        nearest = {b.gpu_id: b for b in sorted(slow, key=lambda b: -(b.excess or 0.0))}  # each GPU's nearest, last
        widest = all(b.why.startswith("TP8 ") for b in nearest.values())  # eight GPUs: the widest TP a server gives
        missed = {name for b in nearest.values() for name in b.missed}
        # a decode step reads the weights (memory bandwidth); a prompt's prefill is compute (newuser15 item 4)
        # the factor stands for a spread the workload does not state (acc122): none where p95_input_tokens does
        stated = dep.inference.p95_input_tokens is not None
        allowance = (
            ""
            if stated
            else (
                f" (the TTFT p95 is constants.ttft_p95_factor, {ttft_p95_factor:g}, times a prompt's own time, for a "
                "prompt-length spread not stated: give inference.p95_input_tokens, equal to avg_input_tokens where "
                "prompts are of one length, and it no longer applies)"
            )
        )
        faster = [
            *(["a GPU with faster memory (a decode step reads the weights)"] if "tpot" in missed else []),
            # FP8 only where the weights compute above it (newuser72 item 7: told an FP8 deployment to use FP8);
            # the TTFT p95 is constants.ttft_p95_factor times a prompt's own time where the spread is not stated
            *([f"a GPU with a faster tensor rate{'' if fmt.bits <= 8 else ', or FP8 where it has one'} (a prefill "
               f"is compute), shorter prompts{allowance}"]
              if "ttft" in missed else []),
        ]  # fmt: skip
        slo = dep.inference.slo
        # a target below what any GPU does at batch 1 may be seconds written as milliseconds (newuser27 item 11)
        seconds = [
            f"slo.{name} is in milliseconds: {value:g} ms (did you mean {value * 1000:g}, {value:g} s?)"
            for name, value, floor in (("ttft_p95_ms", slo.ttft_p95_ms, 10), ("tpot_ms", slo.tpot_ms, 1))
            if value is not None and value < floor
        ]
        return (
            "".join(f"{said}; " for said in seconds)
            + f"to unblock: looser SLOs, {', '.join(faster)}"
            + (f", {precision}" if precision and "tpot" in missed else "")
            + ("" if widest else ", or more GPUs a replica (TP) where the link is fast")
            + (f"; {', '.join(racked)} ruled out by {power_field}" if racked else "")
            + (
                f"; the layouts that meet the targets need more than the {MAX_NODES_PER_POOL:,} nodes one pool may "
                f"have: {', '.join([*count_fields(dep), 'split the rate over several deployments'])}"
                if any(b.code == POOL_TOO_LARGE for b in blocked)
                else ""
            )
        )
    if blocked and all(b.code in (START_REFUSED, NO_LAYOUT) for b in blocked) and any(b.code == START_REFUSED for b in blocked):
        # vLLM's start-up check: the batch limits and the context, not the SLOs (review36 item 6)
        spec = dep.inference
        limits = [
            *(["a lower inference.max_num_seqs (vLLM profiles that many sequences before it sizes the KV cache; "
               "left out, its smaller default is tried too)"] if spec.max_num_seqs is not None else []),
            *(["a lower inference.max_num_batched_tokens (the check charges each sliding-window layer a forward "
               "pass's tokens)"] if any(layer.window_tokens for layer in model.architecture.layers) else []),
        ]  # fmt: skip
        last = [*([precision] if precision else []), *(["allow a GPU with more memory"] if bought else [])]
        said = f"a shorter max_context_tokens, {', '.join(['more GPUs a replica', *last[:-1]])}, or {last[-1]}"
        said = said if last else "a shorter max_context_tokens, or more GPUs a replica"
        fp8 = [way] if (way := fp8_kv_way(blocked)) else []  # after the limits set: no fewer tokens, no more GPUs (fix183)
        return f"to unblock: {''.join(f'{way}, ' for way in [*limits, *fp8])}{said}" + (
            "" if bought else f"; {OWNED_MORE_MEMORY}"
        )
    # replicas beyond what one pool may have: the count is the first thing to lower
    fewer = (
        ["a lower requests_per_second (or the rate split over several deployments)", *count_fields(dep)]
        if any(b.code == POOL_TOO_LARGE for b in blocked)
        else []
    )
    fewer += [way] if (way := fp8_kv_way(blocked)) else []  # no fewer tokens, no more GPUs (fix183 item 3)
    general = (
        f"to unblock: {''.join(f'{way}, ' for way in fewer)}{'allow a GPU with more memory, ' if bought else ''}"
        f"{precision + ', ' if precision else ''}a shorter max_context_tokens, "
        + ("looser SLOs" + servers if racks else "or looser SLOs")
        + ("" if bought else f"; {OWNED_MORE_MEMORY}")
    )
    # a replica across servers whose link rules it out (fix113: owned servers without a fabric): the network first
    lead = network_lead(dep, blocked)
    general = led_by(lead, general) if lead else general
    # GPUs whose LoRA slots leave no room for a sequence's KV cache: the max_loras or max_rank that fits (fix165)
    slotted = {b.gpu_id: b.lora_fit for b in blocked if b.lora_fit is not None}
    if slotted:
        from generator.planner.lora_slots_fit import lora_slots_hint
        from generator.sizing.lora_serving import served_max_loras

        lora = dep.inference.lora
        assert lora is not None
        lead = lora_slots_hint(slotted, served_max_loras(lora.max_loras, dep.inference.engine, lora.adapters), lora.max_rank)
        general = (
            led_by(lead, general)
            if all(b.lora_fit is not None for b in blocked)
            else f"{general}; where the LoRA slots fill a GPU: {lead}"
        )
    # nodes whose RAM the LoRA adapters' CPU caches fill: the max_cpu_loras that fits (fix161)
    if (cached := lora_ram_hint(dep, blocked)) is None:
        return general
    return f"to unblock: {cached}" if caches_rule_out_all(blocked) else f"{general}; where a node's RAM is short: {cached}"
