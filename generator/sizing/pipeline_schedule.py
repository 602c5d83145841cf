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


def slowest_stage_factor(num_layers: int, pp: int, head_flops_per_token: float, flops_per_token: float) -> float:
    """The pipeline's slowest stage's FLOPs over the mean stage's (1 without a pipeline or an output layer).

    A 1F1B pipeline runs at the pace of its slowest stage, and the last stage also runs the output layer (the LM head's
    ``vocab x hidden`` GEMMs and the loss) on top of its decoder layers; the rest of ``flops_per_token`` is spread evenly
    over the ``num_layers`` decoder layers. Where the layers divide over the stages, Megatron-Core's default split gives
    every stage ``num_layers / pp`` of them and the last stage the head besides (``get_num_layers_to_build`` in
    megatron/core/transformer/transformer_block.py; ``account_for_loss_in_pipeline_split`` is off by default). Where they
    do not, Megatron-Core refuses the default split and the layers per stage must be given (``--decoder-last-pipeline-
    num-layers``, ``account_for_embedding_in_pipeline_split`` / ``account_for_loss_in_pipeline_split``, a pipeline
    layout): they are placed at their best here, the last stage holding the whole layers that make the slowest stage
    fastest. The first stage's embedding is a lookup, no GEMM: not counted.
    """
    if pp <= 1 or num_layers <= 0 or head_flops_per_token <= 0 or flops_per_token <= head_flops_per_token:
        return 1.0
    layer = (flops_per_token - head_flops_per_token) / num_layers
    mean = flops_per_token / pp
    if num_layers % pp == 0:
        return (num_layers // pp * layer + head_flops_per_token) / mean
    slowest = min(
        max(-(-(num_layers - last) // (pp - 1)) * layer, last * layer + head_flops_per_token) for last in range(0, num_layers + 1)
    )
    return slowest / mean


def bubble_compute_factor(pp: int, slowest: float) -> float:
    """What a 1F1B bubble slot lasts, over the slowest stage's time a micro-batch (its compute part).

    A stage idles while the micro-batches fill and drain the stages other than the slowest one: a step of ``m``
    micro-batches takes ``m`` of the slowest stage's slots plus one of each other stage's, so the bubble is the other
    ``pp - 1`` stages' time a micro-batch, ``pp - slowest`` mean stages (``slowest``: :func:`slowest_stage_factor`),
    not ``pp - 1`` of the slowest's (review79 item 5; a 1F1B simulation in tests/test_training_pipeline_details.py).
    Timed as ``(pp - 1)`` slots of ``(pp - slowest) / (pp - 1)`` mean stages, over the slowest's ``slowest``: 1 with
    equal stages. Exact where the last stage alone is the slowest (the head's, every even split); where the best
    placement of uneven layers makes several earlier stages the slowest, a little long (simulated forwards 1.1, 1.1,
    1.1, 0.7 at 8 micro-batches: 34.0 against 35.1).
    """
    if pp <= 1 or slowest <= 1.0:
        return 1.0
    return (pp - slowest) / ((pp - 1) * slowest)
