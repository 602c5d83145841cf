"""A deployment's cost details: its share of its pools' cost, the cost per token and the average-load figures."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from generator.planner.batch_job import runs_a_month
from generator.planner.option import Option, replicas_rps, sustained_rps
from generator.planner.peak import (
    PoolAtAverage,
    average_replicas,
    floor_share_usd_per_month,
    held_text,
    other_tokens_text,
    per_million_tokens,
    token_cost_at_average,
    token_cost_figures,
    token_kinds,
)
from generator.planner.plan import Pool
from generator.planner.slo import held_to
from generator.planner.tco import billed_per_run, run_usd
from generator.units import HOURS_PER_MONTH, figure_text, usd_text
from generator.workload.models import InferenceSpec, Workload


def _cost_details(opt: Option, objective: str, provider: str) -> dict[str, Any]:
    """Capex, opex, whole servers and idle GPUs of the chosen option; a training job's cost per job.

    A training job on rented servers is paid while it runs: it has no monthly figure (the fleet's
    ``usd_per_month`` leaves it out too), only its rate (``usd_per_hour``), hours and cost per job.
    """
    c = opt.candidate
    out: dict[str, Any] = {
        "objective_used": objective,
        "gpus_bought": c.gpus_bought,
        "idle_gpus": c.idle_gpus,
        "servers": c.nodes,
        "capex_usd": round(c.capex_usd) if c.capex_usd is not None else None,
    }
    if billed_per_run(provider, c):
        out["usd_per_hour"] = round(c.usd_per_hour, 2) if c.usd_per_hour is not None else None
    else:
        out["opex_usd_per_month"] = round(c.opex_usd_per_month, 2) if c.opex_usd_per_month is not None else None
        out["usd_per_month"] = round(c.usd_per_month, 2) if c.usd_per_month is not None else None
    run = run_usd(c)
    if run is not None and c.run_hours:
        out["usd_per_job"] = round(run, 2)
        # every GPU of its servers, owned or not; beside a service, the GPUs it takes (the others are the service's: fix190)
        held = c.gpus if opt.beside is not None else c.gpus + c.idle_gpus
        out["gpu_hours_per_job"] = round(held * c.run_hours, 1)
    return out


def _token_cost(
    name: str, spec: InferenceSpec, opt: Option, details: dict[str, Any], *, cloud: bool = False, pools: Sequence[Pool] = ()
) -> tuple[dict[str, float], str] | None:
    """What a million tokens cost a service: at its rate, and at what its replicas sustain.

    Per million output tokens, input tokens and both together for a generating service, per million input tokens for
    a pooling one (:func:`generator.planner.peak.token_kinds`; newuser65 item 5). Where its rate varies
    (``average_requests_per_second``) at its average first, beside the peak's
    (:func:`generator.planner.peak.token_cost_at_average`; ``cloud``: its servers are rented by the hour, in ``pools``).

    Its month's cost (its share of a co-located pool) over the tokens it serves in a month, and over those its
    replicas serve at their planned rate (newuser34 item 8: a capacity planner compares GPUs by it).
    None for a service with no price.
    """
    usd = details.get("usd_per_month")
    if usd is None:
        return None
    _, words, tokens = token_kinds(spec)[0]
    if spec.job:  # a batch job: its month over the tokens its runs serve (its servers' hours are its runs')
        made = (spec.requests_per_run or 0) * runs_a_month(spec)
        month_rps = made / (HOURS_PER_MONTH * 3600)  # the runs' requests spread over the month
        figures = token_cost_figures(spec, usd, month_rps)
        text = (
            f"costs {usd_text(per_million_tokens(usd, month_rps, tokens))} per million {words}: its month over the "
            f"{figure_text(made)} requests of {tokens:,} tokens its runs serve"
        )
        if others := other_tokens_text(spec, figures, ""):
            text += f"; {others}"
        return figures, text
    capacity = sustained_rps(opt)
    figures = token_cost_figures(spec, usd, spec.requests_per_second)
    figures.update(token_cost_figures(spec, usd, capacity, "_at_capacity"))
    at_rate, at_capacity = per_million_tokens(usd, spec.requests_per_second, tokens), per_million_tokens(usd, capacity, tokens)
    # two places, three figures below 1 req/s (newuser73 item 10: 0.035 req/s read "0.00")
    held = f"{capacity:,.2f}" if capacity >= 1 else f"{capacity:.3g}"
    # the wait for a place said where it holds the replicas below their rates' sum, as the chosen-by line says it
    # (newuser79 item 9: "one replica sustains 3.11 req/s" and "$28.83 at the 2.84 req/s its replicas sustain")
    less = ", less the wait for a place in the batch" if round(capacity, 2) < round(replicas_rps(opt), 2) else ""
    sustained = f"({usd_text(at_capacity)} at the {held} req/s its replicas sustain {held_to(spec, 'their')}{less})"
    if spec.average_requests_per_second is not None:  # the rate varies: the average's figure first, the peak's beside it
        peak = f"{usd_text(at_rate)} at the {figure_text(spec.requests_per_second)} req/s peak it is sized for {sustained}"
        floor = details.get("usd_per_month_floor")
        held = held_text(name, spec, opt, details.get("replicas_at_average"), pools)
        average, text = token_cost_at_average(spec, usd, floor, peak, cloud=cloud, held=held)
        return {**figures, **average}, text
    text = (
        f"costs {usd_text(at_rate)} per million {words} at {figure_text(spec.requests_per_second)} req/s of "
        f"{tokens:,} tokens {sustained}"
    )
    if others := other_tokens_text(spec, figures, ""):  # at the asked rate, not the sustained one just named (newuser72 item 8)
        text += f"; at {figure_text(spec.requests_per_second)} req/s, {others}"
    return figures, text


def _average_details(
    spec: InferenceSpec, index: int, opt: Option, pools: list[Pool], at_average: Mapping[str, PoolAtAverage]
) -> dict[str, Any]:
    """A service's figures at its average rate: the rate, the replicas it needs, and on a cloud its month's floor."""
    out: dict[str, Any] = {"average_requests_per_s": spec.average_requests_per_second}
    if (replicas := average_replicas(spec, opt)) is not None:
        out["replicas_at_average"] = replicas
    if (floor := floor_share_usd_per_month(pools, index, at_average)) is not None:
        out["usd_per_month_floor"] = floor
    return out


def _pool_share(pool: Pool, gpus: Fraction, in_use: Mapping[str, Fraction]) -> dict[str, Any]:
    """A co-located deployment's cost: its share of the pool by the GPUs it uses (the shares add up to the pool).

    The servers, GPUs bought and idle GPUs are the pool's, which the deployments share. ``gpus``: the deployment's
    GPUs there, a share of one a replica where the pool's GPUs are shared; ``in_use``: every deployment's, by pool.
    """
    used = in_use.get(pool.name) or Fraction(pool.nodes * pool.node.gpus - pool.idle_gpus)
    share = float(gpus / used) if used else 0.0
    usd = None if pool.usd_per_hour is None else pool.usd_per_hour * HOURS_PER_MONTH
    return {
        "cost_share": f"{gpus} of the {used} GPUs in use in pool {pool.name}",
        "capex_usd": None if pool.capex_usd is None else round(pool.capex_usd * share),
        "opex_usd_per_month": None if pool.opex_usd_per_month is None else round(pool.opex_usd_per_month * share, 2),
        "usd_per_month": None if usd is None else round(usd * share, 2),
        "servers": pool.nodes,
        "gpus_bought": (pool.nodes - pool.owned_nodes) * pool.node.gpus,
        "idle_gpus": pool.idle_gpus,
    }


#: The cost figures a split service's parts add up to.
_SUMMED = ("capex_usd", "opex_usd_per_month", "usd_per_month", "servers", "gpus_bought", "idle_gpus")


def _split_share(opt: Option, pools: list[Pool], objective: str, wl: Workload) -> dict[str, Any]:
    """A split service's cost where a part of it shares a pool: each shared part's share of its pool, the rest whole.

    The deployments' figures then add up to the fleet's, as a co-located service's do.
    """
    parts = [
        _pool_share(pool, part.gpus_used, {})
        if len(pool.deployments) > 1
        else {**_cost_details(part, objective, wl.hardware.provider), "cost_share": f"the whole of pool {pool.name}"}
        for part, pool in zip(opt.pieces, pools, strict=True)
    ]
    out: dict[str, Any] = {"cost_share": "; ".join(part["cost_share"] for part in parts)}
    for key in _SUMMED:
        figures: list[float] = [part[key] for part in parts if part.get(key) is not None]
        out[key] = round(math.fsum(figures), 2 if key.endswith("month") else None) if len(figures) == len(parts) else None
    return out
