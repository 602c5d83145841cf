"""What a service's allowed lower precisions would save where the planner buys its hardware.

``allowed_precisions`` are the formats a model may be quantized to when it does not fit: on a fixed machine
they come before offload. Where servers are bought or rented the model always fits on more of them, so the
plan keeps the precision asked for, and a user who allowed a cheaper one is told what it would save
(newuser18 item 3: fp8 was allowed, bf16 was planned at $40,073 a month, and fp8 costs $32,058).
"""

from __future__ import annotations

from collections.abc import Callable

from generator.calculator.model_source import serving_format
from generator.planner.candidates import inference_options, ranking_candidate, ranking_key, within_limits
from generator.planner.inventory import free_servers
from generator.planner.option import Option
from generator.planner.options import rank
from generator.planner.plan import Candidate, Finding
from generator.planner.tco import cost_text
from generator.sizing.constants import Constants
from generator.workload import LoadedWorkload
from generator.workload.models import InferenceDeployment


def _options(loaded: LoadedWorkload, dep: InferenceDeployment, consts: Constants) -> list[Option]:
    """The deployment's layouts on its own at its precision, its pins held."""
    from generator.planner import honour_pins

    wl = loaded.workload
    return honour_pins(dep, inference_options(wl, dep, loaded.models[dep.name], consts, [], free_servers(wl)))[0]


def _best(loaded: LoadedWorkload, dep: InferenceDeployment, consts: Constants, objective: str) -> Option | None:
    """The deployment's best layout on its own at its precision, pins and fleet limits held."""
    wl = loaded.workload
    within = [o for o in _options(loaded, dep, consts) if within_limits(wl, o)]
    return min(within, key=lambda o: ranking_key(o, objective, None, bool(free_servers(wl))), default=None)


def cheaper_allowed_text(
    loaded: LoadedWorkload,
    dep: InferenceDeployment,
    consts: Constants,
    usd_per_month: float,
    spend: Callable[[Option], float | None],
) -> str:
    """Where every layout at the precision planned breaks a limit: an allowed precision's cheapest, where it costs less.

    newuser65 item 6: the budget error called $44,403 "the cheapest priced layout" while fp8, in allowed_precisions,
    took $23,370 (the plan's ``cheaper-allowed-precision`` said so, the error did not). ``usd_per_month``: the cheapest
    at the precision planned; ``spend``: a layout's month as the limit counts it (None: unpriced). "" where no allowed
    precision is cheaper.
    """
    spec = dep.inference
    model = loaded.models[dep.name]
    planned = serving_format(model, spec.precision).name
    found: list[tuple[float, str, str, bool]] = []
    for name in dict.fromkeys(serving_format(model, p).name for p in spec.allowed_precisions):
        if name == planned:
            continue
        options = _options(loaded, dep._replace(inference=spec._replace(precision=name)), consts)
        priced = [(usd, o.candidate.summary, o) for o in options if (usd := spend(o)) is not None]
        if priced:
            usd, summary, best = min(priced, key=lambda t: t[:2])
            if usd < usd_per_month:
                found.append((usd, summary, name, within_limits(loaded.workload, best)))
    if not found:
        return ""
    usd, summary, name, within = min(found)
    held = ", within the limits" if within else ""
    return (
        f"; the cheapest at {name}, in allowed_precisions, is {summary} at ${usd:,.0f} a month{held} (the layouts above "
        f"are {planned}'s: allowed_precisions are taken only where the model does not fit; set precision: {name} to "
        "plan it)"
    )


def _figure(objective: str, c: Candidate) -> str:
    if objective == "cost":
        return cost_text(c)
    if objective == "power":
        return f"{c.power_compared_w / 1000:.1f} kW"
    return f"{c.gpus_bought or c.gpus} GPUs"


def cheaper_precision_findings(loaded: LoadedWorkload, consts: Constants) -> list[Finding]:
    """An info finding per service whose allowed precisions would plan better on the objective than the one planned.

    Each deployment is compared on servers of its own (its best layout at each precision), as the finding says: a
    fleet's shared servers do not enter it, and a workload with owned servers gets none (they are shared out in order);
    under ``cost`` an unpriced layout is compared by nothing.
    """
    wl = loaded.workload
    objective = wl.objective
    if wl.hardware.inventory:
        # owned servers are shared out in the fleet's order: a deployment alone would take them whole, so its figures
        # would be none the plan has (review 15 item 2)
        return []
    findings = []
    for index, dep in enumerate(wl.deployments):
        if not isinstance(dep, InferenceDeployment) or not dep.inference.allowed_precisions:
            continue
        spec = dep.inference
        model = loaded.models[dep.name]
        planned_format = serving_format(model, spec.precision).name
        planned = _best(loaded, dep, consts, objective)
        if planned is None:
            continue
        planned_c = ranking_candidate(planned)
        if objective == "cost" and planned_c.usd_per_hour is None:
            continue
        better = []
        for name in dict.fromkeys(serving_format(model, p).name for p in spec.allowed_precisions):
            if name == planned_format:
                continue
            alt = _best(loaded, dep._replace(inference=spec._replace(precision=name)), consts, objective)
            if alt is None:
                continue
            alt_c = ranking_candidate(alt)
            if objective == "cost" and alt_c.usd_per_hour is None:
                continue
            if rank(objective, alt_c)[0] < rank(objective, planned_c)[0]:
                better.append(f"{name} (allowed) would take {alt_c.summary} at {_figure(objective, alt_c)}")
        if better:
            findings.append(
                Finding(
                    "info",
                    "cheaper-allowed-precision",
                    f"deployment {dep.name}, on servers of its own: {'; '.join(better)}, against "
                    f"{_figure(objective, planned_c)} for {planned_c.summary} at {planned_format}, the precision planned; "
                    "allowed_precisions are taken only where the model does not fit (hardware.fixed): set precision to "
                    "plan one",
                    f"deployments[{index}].inference.allowed_precisions",
                )
            )
    return findings
