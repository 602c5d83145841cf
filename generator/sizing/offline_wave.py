"""One wave of an offline benchmark: every prompt queued at once, none arriving later (vLLM V1's scheduler).

vLLM's throughput benchmark (``vllm bench throughput``) hands the engine all ``num_prompts`` requests at once. When
they are no more than ``max_num_seqs`` the engine runs them as one wave: it admits them all, prefills their prompts in
steps of ``max_num_batched_tokens``, decodes them in lockstep (equal lengths, ``--ignore-eos``) and finishes them
together. That wave's work equals the steady state's (:func:`generator.sizing.performance.saturated_throughput`) as
long as the KV cache holds every sequence at its full length. When it does not, the scheduler still admits a request
as soon as the blocks its prompt needs are free, not the blocks its final length will need
(``Scheduler.schedule``, vllm/v1/core/sched/scheduler.py: the waiting requests' ``allocate_slots`` asks for the tokens
scheduled now). The wave decodes at its full size until the cache is full; from then on each running request that
needs a new block and finds none preempts the newest running request (FCFS: ``self.running.pop()``), whose blocks are
freed and whose ``num_computed_tokens`` is reset to 0 (recompute). A preempted request goes back to the head of the
waiting queue, and waiting requests are admitted only in a step without preemptions; with the wave in lockstep, the
blocks a victim frees feed the others' growth, so the victims wait until the survivors finish. They then prefill
their prompt and the tokens they had generated again and decode what is left, a tail at a smaller batch.

The step's time comes from the caller (the replica's decode step at the run's mean context, with prompt tokens
riding along), so this module only counts the steps and the batch each runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from generator.named_tuple import NamedTuple

#: ``step_seconds(batch, prefill_tokens)``: the wall time of one engine step decoding ``batch`` sequences with
#: ``prefill_tokens`` prompt tokens in the same step.
StepSeconds = Callable[[int, float], float]


class WaveTime(NamedTuple):
    """The wall time of one offline wave and what the scheduler did in it."""

    seconds: float
    #: Requests preempted (recompute) once the cache filled, and the tokens they prefilled again on resumption.
    preempted: int
    recomputed_tokens: int
    #: Decode steps run at the whole wave before the first preemption (the output length when none happens).
    full_wave_steps: int
    #: The survivors: the requests that ran from admission to their last token without preemption.
    survivors: int


def blocks_for(tokens: int, block_tokens: int) -> int:
    """KV blocks a request of ``tokens`` tokens holds (vLLM allocates whole blocks)."""
    return -(-tokens // block_tokens)


def prefill_seconds_in_steps(step_seconds: StepSeconds, tokens: int, step_token_budget: int) -> float:
    """``tokens`` prompt tokens prefilled in steps of at most ``step_token_budget`` tokens (nothing decoding beside)."""
    full, rest = divmod(tokens, step_token_budget)
    seconds = full * step_seconds(1, float(step_token_budget)) if full else 0.0
    return seconds + (step_seconds(1, float(rest)) if rest else 0.0)


def one_wave(
    step_seconds: StepSeconds,
    prompts: int,
    input_tokens: int,
    output_tokens: int,
    kv_cache_blocks: int,
    block_tokens: int,
    step_token_budget: int,
) -> WaveTime:
    """Wall time of ``prompts`` equal requests queued at once and run to their last token as one wave.

    The prompts are prefilled first (in steps of ``step_token_budget`` tokens), which gives each its first token; decode
    step ``k`` (1 to ``output - 1``) then holds ``input + k`` tokens of each running request. Where the
    ``kv_cache_blocks`` cannot hold the running requests at that length, the newest are preempted until the rest fit
    (each victim frees its blocks and keeps the ``k`` tokens it had). The survivors finish at step ``output - 1``; the
    victims then prefill their prompt and those ``k`` tokens again (which gives each its next token) and decode the
    rest, each finishing when its remaining tokens are out. Raises ``ValueError`` where the model does not hold: the
    prompts do not fit the cache at admission, or the victims are too many to finish in a second wave without
    preempting each other.
    """
    if min(prompts, input_tokens, output_tokens, block_tokens, step_token_budget) < 1:
        raise ValueError("a wave needs at least one prompt, input and output token, block token and step token")
    if prompts * blocks_for(input_tokens, block_tokens) > kv_cache_blocks:
        raise ValueError(f"{prompts} prompts of {input_tokens} tokens do not fit {kv_cache_blocks} KV blocks at admission")
    seconds = prefill_seconds_in_steps(step_seconds, prompts * input_tokens, step_token_budget)
    cache: dict[int, float] = {}

    def decode(batch: int) -> float:
        if batch not in cache:
            cache[batch] = step_seconds(batch, 0.0)
        return cache[batch]

    running = prompts
    preempted_after: list[tuple[int, int]] = []  # (victims, output tokens each had when preempted), in step order
    full_wave_steps = output_tokens - 1
    # the prefill gave each request its first token; decode step k feeds token k and holds input + k tokens of KV
    for step in range(1, output_tokens):
        fits = kv_cache_blocks // blocks_for(input_tokens + step, block_tokens)
        if fits < running:  # the newest running requests are preempted until the rest fit
            full_wave_steps = min(full_wave_steps, step - 1)
            preempted_after.append((running - fits, step))
            running = fits
        seconds += decode(running)
    survivors = running
    preempted = sum(victims for victims, _ in preempted_after)
    if not preempted:
        return WaveTime(seconds, 0, 0, full_wave_steps, survivors)
    if preempted * blocks_for(input_tokens + output_tokens, block_tokens) > kv_cache_blocks:
        raise ValueError(f"{preempted} preempted requests do not finish in a second wave without preempting again")
    # on resumption a victim prefills its prompt and every output token it had (num_tokens - 0 computed), which
    # gives it its next token; it then decodes the rest
    recomputed = sum(victims * (input_tokens + had) for victims, had in preempted_after)
    seconds += prefill_seconds_in_steps(step_seconds, recomputed, step_token_budget)
    # all victims decode at first; the latest ones (the fewest tokens left) finish first and the batch falls
    left = preempted
    done_steps = 0
    for victims, had in reversed(preempted_after):
        steps = output_tokens - had - 1
        seconds += (steps - done_steps) * decode(left)
        done_steps = steps
        left -= victims
    return WaveTime(seconds, preempted, recomputed, full_wave_steps, survivors)


def one_wave_output_tokens_per_s(wave: WaveTime, prompts: int, output_tokens: int) -> float:
    """Output tokens per second of the wave: every prompt's output over the wave's wall time."""
    if wave.seconds <= 0 or math.isnan(wave.seconds):
        raise ValueError("a wave takes a positive time")
    return prompts * output_tokens / wave.seconds
