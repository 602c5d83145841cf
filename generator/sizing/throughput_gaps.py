"""Serving setups whose measured throughput the model is known to over-predict (``throughput_gaps.json``).

A plan (a warning) and the estimate (a note) say so with the margin the public runs measured (newuser18 item 1: a
DeepSeek-R1 service on H200 was planned on a rate those runs measured 2.4-3.9x lower; review 14 item 6: the estimate
gave that rate without a word). No factor per group of measurements enters the model; the planner counts a replica at
the gap's lowest ratio (:func:`generator.planner.throughput_gaps.planning_margin`, newuser30 item 3).
"""

from __future__ import annotations

from functools import cache

from generator import catalog
from generator.catalog.records import GpuSpec, ThroughputGap
from generator.sizing.architecture import Architecture, parse_architecture
from generator.sizing.memo import memoized
from generator.sizing.performance import fast_link
from generator.words import listed


def precision_family(precision: str) -> str:
    """The weight format a gap's runs are compared by: fp8-block, fp8-channel are FP8, as the runs were."""
    return precision.split("-", maxsplit=1)[0]


def matching_gap(
    engine: str,
    gpu: GpuSpec,
    arch: Architecture,
    precision: str | None,
    tokens: tuple[float, float],
    batch: float,
    tp: int = 1,
    *,
    attention_dp: int = 1,
    any_architecture: bool = False,
) -> ThroughputGap | None:
    """The known gap a service of ``arch`` in weight format ``precision`` on ``engine`` and ``gpu`` falls into, if any.

    ``tokens``: the service's prompt and output tokens a request; a gap of a shape (prompt tokens per output token)
    takes only services of it (newuser34 item 3: DeepSeek-R1 runs on H200 measured 1.6-2.5x below the model with
    prompts 20-320x their outputs, while 1k/1k runs of a newer engine measured up to 1.3x above it). A gap of some
    formats is matched before one of any (newuser34 item 1: gpt-oss's MXFP4 on MI300X fell into the gap of Llama 405B
    FP8 runs, 1.07x, where its own runs measured 1.37-2.09x).

    ``batch``: the sequences a replica runs at once (the plan's batch of the replica, the estimate's saturation batch);
    a gap of a batch range takes only replicas in it (review25 C: MI300X runs at batch 1-32 measured the model's rate,
    every run at 128 and more 1.22-1.60x below it, so a batch-1 run had dropped the margin of a service planned at 260).

    ``tp``: the replica's TP group; a gap of TP over PCIe takes only a group of 2 or more GPUs no fast link joins
    (review29 item 3: TensorRT-LLM's L40S runs at TP4 / TP8 measured 1.28-1.79x below the model, at TP1 near it).
    ``attention_dp``: the replica's data-parallel attention groups a stage (``Parallelism.attention_dp``, 1: none);
    a gap of attention DP takes only a replica of 2 or more (acc106: TensorRT-LLM's DEP8 runs of Qwen3-235B-A22B on
    H100 measured 1.33-1.45x below the model, and no gap could say so of the layout).
    ``any_architecture``: a gap measured on any GPU architecture (what the setup fell short on elsewhere).
    """
    kinds = _attention_kinds(arch)
    for gap in _gaps_by_precision_first():
        if (
            engine in gap.engines
            and (any_architecture or gpu.architecture in gap.gpu_architectures)
            and gap.attention in (None, *kinds)
            and (arch.is_moe or not gap.routed_experts)
            and (not gap.precisions or precision in gap.precisions)
            and precision not in gap.except_precisions
            and gap.covers_shape(*tokens)
            and gap.covers_batch(batch)
            and gap.covers_layout(attention_dp)
            and (not gap.tp_over_pcie or (tp > 1 and not fast_link(gpu, tp)))
        ):
            return gap
    return None


@memoized
def _attention_kinds(arch: Architecture) -> frozenset[str]:
    """The kinds of attention ``arch``'s layers use."""
    return frozenset(layer.attention for layer in arch.layers)


@cache
def _gaps_by_precision_first() -> tuple[ThroughputGap, ...]:
    """The catalog's gaps, those of some formats before those of any (stable: by id within each)."""
    return tuple(sorted(catalog.throughput_gaps().values(), key=lambda gap: not gap.precisions))


def _fingerprint(arch: Architecture) -> tuple[object, ...]:
    """What tells one model from another: its kind, shape and parameter count (a config read twice parses the same)."""
    return (arch.model_type, arch.hidden_size, arch.num_layers, arch.num_attention_heads, arch.vocab_size, arch.params_total)


@cache
def _measured_fingerprints(models: tuple[str, ...]) -> frozenset[tuple[object, ...]]:
    """:func:`_fingerprint` of each catalog model a gap's runs measured."""
    return frozenset(_fingerprint(parse_architecture(catalog.find_model(m).config)) for m in models)


def extrapolated_to(
    gap: ThroughputGap, arch: Architecture | None, precision: str | None, engine: str | None = None
) -> str | None:
    """What of a service the runs did not measure (``this engine``, ``this model``, ``this precision``); None: all of it was.

    ``arch`` / ``precision`` (the weights' format name, e.g. ``fp8-block``) / ``engine``: None where the caller does not
    know it. A record without ``measured_models`` / ``measured_precisions`` / ``measured_engines`` compares nothing
    (review25 D: a vLLM service was told SGLang runs' ratios without a word).
    """
    measured = _measured_fingerprints(gap.measured_models) if gap.measured_models else None
    other_model = arch is not None and measured is not None and _fingerprint(arch) not in measured
    family = precision_family(precision) if precision else None
    other_precision = bool(family and gap.measured_precisions) and family not in gap.measured_precisions
    other_engine = engine is not None and bool(gap.measured_engines) and engine not in gap.measured_engines
    named = (("this engine", other_engine), ("this model", other_model), ("this precision", other_precision))
    what = [w for w, other in named if other]
    return listed(what) or None


def gap_text(
    gap: ThroughputGap,
    engine: str,
    gpu_id: str,
    figure: float,
    unit: str,
    *,
    arch: Architecture | None = None,
    precision: str | None = None,
) -> str:
    """What the runs measured against the model, and where their ratios put a replica's predicted ``figure``.

    A service of another model or precision than the runs' (``arch``, ``precision``: :func:`extrapolated_to`) is told
    the ratios are extrapolated from them (newuser24 item 12: an 8B BF16 router took a 405B FP8 run's ratios verbatim).
    """
    low, high = gap.predicted_over_measured
    other = extrapolated_to(gap, arch, precision, engine)
    reach = f"; the runs did not measure {other}: their ratios are extrapolated to it" if other else ""
    return (
        f"for {gap.description} with {engine} on {gpu_id}, specgen's throughput model predicted {low:.2f}-{high:.2f}x "
        f"what {gap.runs} public runs of {gap.measured_on} measured ({', '.join(gap.source)}){reach}; a replica rated "
        f"{figure:,.2f} {unit}, which those ratios put at {figure / high:,.2f}-{figure / low:,.2f}"
    )


def counted_text(gap: ThroughputGap, figure: float, unit: str, subject: str = "the plan") -> str:
    """Which figure ``subject`` counts on for a replica the model rates ``figure`` (``unit`` after it), and why.

    The model's figure over the gap's lowest ratio where every run measured less; the model's own where some run
    measured it or more, or where the record says why the runs' shortfall is not taken (``model_rate_because``). The
    plan's warning and the estimate's note end with it alike (newuser73 item 6: the estimate stopped at the range,
    "57.10 ... which those ratios put at 31.97-44.47", with no word of which figure to believe).
    """
    if gap.margin > 1:
        return f"{subject} counts on {figure / gap.margin:,.2f}{unit} (the lowest ratio)"
    if gap.model_rate_because:  # review29 item 3: every run measured less, on a host that is not named
        return f"{subject} counts on the model's {figure:,.2f}{unit}: {gap.model_rate_because}"
    return f"some runs measured the model's rate or more, so {subject} counts on its {figure:,.2f}{unit}"
