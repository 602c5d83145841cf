"""What a change to an existing machine would buy: one more GPU of its kind, or twice its RAM (newuser107).

A home lab of 2 x RTX 3090 and 128 GiB of DDR4 asks what a third card, or 256 GiB, would give in tokens/s. The
estimate places the model again on the machine so changed, with the same placement (precision, context, prompt) as
the machine's own, and says its decode, TTFT and bound, or why the change cannot be made: a desktop's DIMM slots that
hold no more RAM, a GPU slot the CPU has no lanes for (timed at the lanes given or assumed, and said). Only the machine
changes; the figures are the offload model's, as the machine's own line is.
"""

from __future__ import annotations

from generator.calculator.machine import (
    FixedSpec,
    build_machine,
    gpus_beyond_cpu_slots,
    place_over_nodes,
    ram_beyond_slots,
    wider_machine,
)
from generator.calculator.prefill_bound import prompt_figures, prompt_prefill_text
from generator.errors import InfeasibleError

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from generator.sizing.offload import Machine, OffloadPlan

#: The most GPUs a machine is given (``hardware.fixed.gpu_count``'s schema maximum).
MOST_GPUS = 16


def changed_machines(spec: FixedSpec) -> list[tuple[str, FixedSpec]]:
    """The changes to ``spec`` timed, each with its words: one more GPU of its kind (where it has GPUs), twice its RAM."""
    changes: list[tuple[str, FixedSpec]] = []
    if spec.gpu and spec.gpu_count < MOST_GPUS:
        more = spec.gpu_count + 1
        changes.append((f"one more GPU ({more} x {spec.gpu})", spec._replace(gpu_count=more)))
    ram = spec.ram_gib * 2
    changes.append((f"twice the RAM ({ram:g} GiB)", spec._replace(ram_gib=ram)))
    return changes


def upgrade_options(
    spec: FixedSpec, place: Callable[[Machine], OffloadPlan], on_disk: Callable[[OffloadPlan], int]
) -> list[dict[str, Any]]:
    """Each change of :func:`changed_machines` with what the model does on it (``place``: the estimate's placement).

    A row has ``change``, ``possible`` (False where the machine cannot take it, ``why`` saying so), ``fits`` and, where
    it fits, ``precision``, ``decode_tokens_per_s``, ``ttft_s``, ``bound`` and ``ram_weights_bytes``; ``note`` where the
    figure rests on something the plan does not model (a GPU slot beyond the CPU's lanes).
    """
    rows: list[dict[str, Any]] = []
    for change, changed in changed_machines(spec):
        row: dict[str, Any] = {"change": change}
        if (why := ram_beyond_slots(changed, "--ram-gib")) is not None:
            rows.append({**row, "possible": False, "fits": False, "why": why})
            continue
        row["possible"] = True
        if changed.gpu_count != spec.gpu_count and (note := gpus_beyond_cpu_slots(changed, "--pcie-lanes")) is not None:
            row["note"] = note
        machine, _gpu, _basis = build_machine(changed)
        try:
            plan, _on, _spans = place_over_nodes(place, machine, wider_machine(machine, changed), on_disk)
        except InfeasibleError as exc:
            rows.append({**row, "fits": False, "why": str(exc)})
            continue
        rows.append(
            {
                **row,
                "fits": True,
                "precision": plan.weight_format.name,
                "decode_tokens_per_s": round(plan.cost.decode_tokens_per_s, 3),
                "ttft_s": round(plan.cost.ttft_s, 3),
                "bound": plan.cost.bound,
                "ram_weights_bytes": plan.placement.cpu_bytes,
                # fix195: the prompt's prefill rate and what bounds it on the changed machine (said as the estimate's)
                **prompt_figures(plan.cost),
            }
        )
    return rows


def upgrade_text(row: dict[str, Any], decode_now: float, ttft_now: float) -> str:
    """One ``upgrade`` line of the estimate's text: the change and what it gives against the machine as it is."""
    if not row["possible"]:
        return f"{row['change']}: not possible: {row['why']}"
    if not row["fits"]:
        return f"{row['change']}: the model still does not run: {row['why']}"
    same = abs(row["decode_tokens_per_s"] - decode_now) < 0.005 * max(decode_now, 1e-9)
    gain = (
        "no faster: nothing the change adds is what bounds the decode"
        if same
        else f"{row['decode_tokens_per_s'] / decode_now:.2f}x"
    )
    prompt = f" for {prompt_prefill_text(row)}" if "prefill_tokens_per_s" in row else ""
    text = (
        f"{row['change']}: decode {decode_now:.2f} -> {row['decode_tokens_per_s']:.2f} tokens/s ({gain}; "
        f"{row['bound']}-bound), TTFT {ttft_now:.2f} -> {row['ttft_s']:.2f} s{prompt}, at {row['precision']}"
    )
    return text + (f" ({row['note']})" if "note" in row else "")
