"""What bounds an offloaded model's prefill, as the estimate says it (fix192, newuser107).

A prompt's passes spend their time in parts (:attr:`generator.sizing.offload.OffloadCost.prefill_parts_s`, summed in
sequence as llama.cpp runs them): the GPUs' compute, copying the weights held in RAM to the GPUs over the host link
(a pass of at least ``offload_min_batch_tokens``), paging layers on NVMe in, or the CPU multiplying them (a shorter
pass). The one that takes longest is the prefill's bound, as a decode step's ``bound`` is; each part is said, so a
user reads what a faster link, GPU or CPU would change. The estimate's speed line and a ``hardware.fixed`` plan's
reasons both say the prompt with :func:`prompt_prefill_text` (fix194: one text, from the same parts).
"""

from __future__ import annotations

from collections.abc import Mapping

from generator.sizing.offload import OffloadCost

#: What each part of a prefill is, in the estimate's words.
PREFILL_PART_WORDS = {
    "gpu-compute": "GPU compute",
    "pcie": "copying the weights held in RAM to the GPUs over PCIe",
    "nvme": "paging the layers on NVMe in",
    "cpu-cores": "the CPU's cores multiplying the weights held in RAM (passes too short to copy them)",
    "ddr": "the CPU reading the weights held in RAM (passes too short to copy them)",
    "cpu-lm-head": "the LM head on the CPU",
}


def prefill_summary(cost: OffloadCost) -> dict[str, object]:
    """The estimate's JSON of the prefill's parts: ``prefill_bound`` and ``prefill_seconds`` (none without a prompt)."""
    if cost.prefill_bound is None:
        return {}
    return {
        "prefill_bound": cost.prefill_bound,
        "prefill_seconds": {part: round(seconds, 3) for part, seconds in cost.prefill_parts_s},
    }


def prompt_figures(cost: OffloadCost) -> dict[str, object]:
    """The keys :func:`prompt_prefill_text` reads, from a placement's cost.

    The checklist's TTFT row and the estimate's ``upgrade`` rows say the prompt with it (fix195), as the plan's reasons
    and the estimate's speed line do.
    """
    return {
        "ttft_prompt_tokens": cost.prompt_tokens,
        "prefill_tokens_per_s": round(cost.prefill_tokens_per_s, 3),
        "ubatch_tokens": cost.ubatch_tokens,
        **prefill_summary(cost),
    }


def prefill_bound_text(summary: Mapping[str, object]) -> str:
    """``pcie-bound: 3.05 s copying ..., 1.59 s GPU compute``: the bound, then each part, longest first."""
    bound = summary.get("prefill_bound")
    parts = summary.get("prefill_seconds")
    if not isinstance(bound, str) or not isinstance(parts, dict):
        return ""
    ordered = sorted(parts.items(), key=lambda part: (-part[1], part[0]))
    said = ", ".join(f"{seconds:,.2f} s {PREFILL_PART_WORDS.get(part, part)}" for part, seconds in ordered)
    return f"{bound}-bound: {said}"


def prompt_prefill_text(figures: Mapping[str, object]) -> str:
    """``1,500 prompt tokens (prefill 323.57 tokens/s at -ub 2048; pcie-bound: ...)``: the prompt a TTFT is of.

    ``figures`` is the estimate's ``throughput`` or a fixed machine's plan details (fix194: both say it from the same
    keys, ``ttft_prompt_tokens``, ``prefill_tokens_per_s``, ``ubatch_tokens`` and :func:`prefill_summary`'s); the bound is
    left out where there are no prompt parts.
    """
    from generator.calculator.offload_report import tokens_per_s_text

    rate = figures["prefill_tokens_per_s"]
    assert isinstance(rate, (float, int))
    bound = prefill_bound_text(figures)
    return (
        f"{figures['ttft_prompt_tokens']:,} prompt tokens (prefill {tokens_per_s_text(rate)} tokens/s at -ub "
        f"{figures['ubatch_tokens']}{'; ' + bound if bound else ''})"
    )
