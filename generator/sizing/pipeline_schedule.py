"""The pipeline schedule: 1F1B and interleaved 1F1B, as the training memory and step models see it.

Kept apart from :mod:`generator.sizing.training_step` so the memory model (and ``specgen estimate``)
does not load the step model.
"""

from __future__ import annotations


def pipeline_bubble_fraction(pp: int, microbatches: int, virtual_stages: int = 1) -> float:
    """Idle fraction of a 1F1B pipeline step, interleaved over ``virtual_stages`` chunks per GPU.

    Narayanan et al. (arXiv:2104.04473 sections 2.2.1-2.2.2): the bubble is ``(p - 1)`` micro-batch
    slots against ``m`` of work, divided by ``v`` when each GPU holds ``v`` interleaved chunks.
    """
    if pp <= 1:
        return 0.0
    return (pp - 1) / (max(1, virtual_stages) * max(1, microbatches) + pp - 1)


def interleaved_activation_factor(pp: int, virtual_stages: int) -> float:
    """Activation memory of an interleaved pipeline's first stage against plain 1F1B (``pp`` micro-batches in flight).

    Megatron-LM's interleaved schedule warms up ``2 (p - 1) + (v - 1) p`` chunk micro-batches on the
    first stage before its first backward, so it holds ``v p + p - 1`` chunks of ``L / (v p)`` layers:
    ``1 + (p - 1) / (p v)`` times the activations of plain 1F1B (Korthikanti et al., arXiv:2205.05198
    section 4.2.3; ``get_forward_backward_func`` interleaved warm-up in
    megatron/core/pipeline_parallel/schedules.py).
    """
    if pp <= 1 or virtual_stages <= 1:
        return 1.0
    return 1 + (pp - 1) / (pp * virtual_stages)


def virtual_stages_for(num_layers: int, pp: int, wanted: int, microbatches: int | None = None) -> int:
    """Interleaving depth a pipeline can use: the largest count <= ``wanted`` that splits a stage's layers evenly.

    The interleaved schedule needs a whole multiple of ``pp`` micro-batches a step (Narayanan et al.,
    arXiv:2104.04473 section 2.2.2; Megatron-LM refuses the rest): with ``microbatches`` given and not such a
    multiple, plain 1F1B (depth 1). Without it (the memory a layout needs) the deeper schedule is assumed.
    """
    if pp > 1 and microbatches is not None and microbatches % pp:
        return 1
    per_stage = max(1, num_layers // max(1, pp))
    return max(d for d in range(1, max(1, min(wanted, per_stage)) + 1) if per_stage % d == 0)
