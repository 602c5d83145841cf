"""The plan's warning for a service in a setup whose measured throughput the model over-predicts.

The gaps and their text are :mod:`generator.sizing.throughput_gaps`'; the plan adds whether its replicas cover the
rate even at the measured margin.
"""

from __future__ import annotations

from generator import catalog
from generator.catalog.records import GpuSpec, ThroughputGap
from generator.planner.plan import Finding
from generator.sizing.architecture import Architecture
from generator.sizing.throughput_gaps import counted_text, gap_text, matching_gap, precision_family
from generator.workload.models import InferenceSpec


def planning_margin(
    spec: InferenceSpec, gpu: GpuSpec, arch: Architecture, precision: str, batch: int, tp: int = 1, attention_dp: int = 1
) -> float:
    """The lowest ratio of predicted to measured throughput of the gap ``spec`` on ``gpu`` falls into; 1.0 if none.

    ``precision``: the weight format the replica serves; ``batch``: the sequences it runs at once (a gap of a batch
    range takes only replicas in it, review25 C); ``tp`` / ``attention_dp``: its TP group and data-parallel attention
    groups a stage (a gap of TP over PCIe, of attention DP: acc106). A gap some of whose runs measured the model's rate or more
    takes none: the least all of them agree on is the model's own (newuser34 item 3). The gaps were measured decoding:
    a pooling service (embed, score) runs none and takes no margin (review22).
    """
    gap = _service_gap(spec, (gpu, arch, precision), batch, (tp, attention_dp))
    return gap.margin if gap else 1.0


def _service_gap(
    spec: InferenceSpec, setup: tuple[GpuSpec, Architecture, str], batch: int, layout: tuple[int, int]
) -> ThroughputGap | None:
    """The gap a generating service falls into on ``setup`` (GPU, model, weight format) at ``batch`` and ``layout``.

    ``layout``: the replica's TP group and its data-parallel attention groups a stage. A pooling service falls into
    none.
    """
    gpu, arch, precision = setup
    tokens = (spec.avg_input_tokens, spec.avg_output_tokens)
    tp, attention_dp = layout
    if spec.pooling:
        return None
    return matching_gap(spec.engine, gpu, arch, precision, tokens, batch, tp, attention_dp=attention_dp)


def throughput_gap_finding(
    index: int,
    spec: InferenceSpec,
    name: str,
    setup: tuple[GpuSpec, Architecture, str],
    replica_rate: float,
    replicas: int,
    rate: float,
    *,
    batch: int,
    tp: int = 1,
    attention_dp: int = 1,
) -> Finding | None:
    """A warning when deployment ``index`` runs where measured throughput fell short of the model's, with the margin.

    ``spec``: the deployment's service; ``setup``: the GPU, model and weight format a replica serves. ``replica_rate``:
    the model's most a replica sustains (the plan counts on it over the gap's lowest ratio, where above 1); ``replicas``
    of it serve ``rate`` (a split part's share of the deployment's rate, review 20): where they cover it even at the
    highest measured ratio, the warning says so instead of advising more (fuzz15 item 5). ``batch``: the sequences a
    replica runs at once, which picks a gap of a batch range (review25 C); ``tp``: its TP group (a gap of TP over PCIe);
    ``attention_dp``: its data-parallel attention groups a stage (a gap of attention DP, acc106).
    """
    gap = _service_gap(spec, setup, batch, (tp, attention_dp))
    if gap is None:
        return None
    gpu, arch, precision = setup
    high = gap.predicted_over_measured[1]
    counted = counted_text(gap, replica_rate, " a replica")
    worst = replica_rate / high * replicas
    # the largest ratio the record's runs measured, named as such (newuser90: "at the highest its 3 replica(s) make
    # 2.26 req/s" read as the top of a range of rates)
    largest = f"the largest ratio those runs measured ({high:.2f}x)"
    advice = (
        f"its {replicas} replica(s) serve the {round(rate, 2):g} req/s even at {largest}"
        if worst >= rate
        # of the rate the plan counts on: the model's over the lowest ratio where above 1 (review25 J: low / high
        # advised 0.13 where 0.26 plans at the highest)
        else (
            f"at {largest} its {replicas} replica(s) make {worst:,.2f} req/s: inference.max_utilization "
            f"{gap.margin / high:.2f} plans at that ratio, or measure this setup"
        )
    )
    said = gap_text(gap, spec.engine, gpu.id, replica_rate, "req/s", arch=arch, precision=precision)
    return Finding(
        "warning",
        "throughput-gap",
        f"deployment {name}: {said}; {counted}: {advice}",
        f"deployments[{index}]",
    )


def unchecked_throughput_finding(index: int, name: str, gpu: GpuSpec, replicas: int) -> Finding:
    """An info finding: deployment ``index``'s replicas on ``gpu`` rest on a throughput no public run was compared with.

    newuser30 item 3: a lab was told to buy four Gaudi 3 servers ranked on throughput that no measurement on the card
    checks (its matrix rate assumed, no serving run compared), and nothing in the plan said so.
    """
    checked = sorted(g.id for g in catalog.gpus().values() if g.throughput_runs)
    return Finding(
        "info",
        "throughput-unchecked",
        f"deployment {name}: no public serving run on {gpu.id} was compared with specgen's throughput model (its "
        f"matrix rate: {gpu.tensor_rate_basis()}), so its {replicas} replica(s) rest on the model alone; runs were "
        f"compared on {', '.join(checked)} (benchmarks/CALIBRATION.md): measure one replica with a serving benchmark "
        "at the planned prompt and output lengths before relying on the count",
        f"deployments[{index}]",
    )


def gap_elsewhere_finding(
    index: int,
    spec: InferenceSpec,
    name: str,
    setup: tuple[GpuSpec, Architecture, str],
    replicas: int,
    *,
    batch: int,
    attention_dp: int = 1,
) -> Finding | None:
    """An info where deployment ``index``'s setup fell short of the model on other GPU architectures, none on its own.

    newuser50 item 3: DeepSeek-R1 on B200 took no margin where its runs on H200 measured 1.63-2.42x below the model,
    and nothing said no run on Blackwell checked it: a comparison with Hopper read as the model's 3.4x.
    """
    gpu, arch, precision = setup
    if spec.pooling or _service_gap(spec, setup, batch, (1, attention_dp)) is not None:
        return None
    tokens = (spec.avg_input_tokens, spec.avg_output_tokens)
    gap = matching_gap(spec.engine, gpu, arch, precision, tokens, batch, attention_dp=attention_dp, any_architecture=True)
    # a gap of a model class (its attention, its routed experts) may follow the model; one of a GPU's own (its batch,
    # its PCIe) is the GPU's; and it is said of the precisions its runs measured, every run below the model (review34
    # item 8: DeepSeek-R1 in NVFP4 on B200, whose own runs are in the calibration, and ratios from 0.51 read "below")
    if gap is None or gap.tp_over_pcie or (gap.attention is None and not gap.routed_experts):
        return None
    low, high = gap.predicted_over_measured
    if low <= 1 or (gap.measured_precisions and precision_family(precision) not in gap.measured_precisions):
        return None
    return Finding(
        "info",
        "throughput-gap-elsewhere",
        f"deployment {name}: runs of its setup ({gap.description}) measured {low:.2f}-{high:.2f}x below specgen's "
        f"throughput model on {', '.join(gap.gpu_architectures)} GPUs ({gap.measured_on}); none on {gpu.architecture} "
        f"({gpu.id}) was compared, so its {replicas} replica(s) count on the model's rate there: measure one replica "
        "with a serving benchmark at the planned prompt and output lengths before relying on the count",
        f"deployments[{index}]",
    )
