"""A deployment's racks'-contract reason, written once its run is known (newuser74 item 7, newuser84 item 1, fix150).

Assembly keeps the figures the reason gives (:class:`ContractReason`) and where it goes among the reasons; the text is
written after ``usd_per_job`` is final. Where a job gives its runs a month on servers paid by the month, its run is the
month over its runs (a job alone: ``plan_runs._month_per_run``; a ``run_after`` sequence at one cadence:
:mod:`generator.planner.chain_runs`), said with what it includes and, for a sequence's job, the sequence's run; the
hours' share stays beside it. Otherwise the run is its hours' share of the month.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

from generator.planner.plan import DeploymentPlan


class ContractReason(NamedTuple):
    """The figures of a racks'-contract reason, as assembly had them when it added the contract's share."""

    usd_per_month: float  # the share of the contracted kW left undrawn
    month_usd: float | None  # the deployment's month with it
    run_usd: float | None  # a run with it (for ``owned``: the energy it adds)
    run_without_usd: float | None  # a run without it
    run_hours: float | None  # a run's hours
    whose: str
    owned: bool  # on owned servers: the run is the energy it adds, the contract paid whether it runs or not (fix89)


def _hours_share_clause(run: float, hours: float, run_without: float) -> str:
    """A run as its hours' share of its month with its racks' contract, and without it."""
    return f", and a run ${run:,.0f} as its {hours:,.1f} h's share of that month (${run_without:,.0f} without it)"


def _month_clause(contract: ContractReason, details: Mapping[str, Any], sequence_usd: float | None) -> str:
    """The run ``usd_per_job`` holds: the month with the contract over the runs a month, the hours' share beside."""
    runs, run, share = details["runs_per_month"], details["usd_per_job"], details["usd_per_job_hours_share"]
    whose = "the sequence's" if sequence_usd is not None else "its"
    text = f", and a run ${run:,.0f} with it, that month over {whose} {runs:g} runs a month"
    if sequence_usd is not None:
        text += f" (a run of the sequence ${sequence_usd:,.0f} with it, its jobs' runs summed)"
    return (
        text + f"; as its {contract.run_hours:,.1f} h's share of that month a run is ${share:,.0f} "
        f"(${contract.run_without_usd:,.0f} without it)"
    )


def _per_run_clause(contract: ContractReason, details: Mapping[str, Any], sequence_usd: float | None) -> str:
    """What the reason says of a run: the energy it adds on owned servers, the month over its runs, or its hours' share."""
    run, without, hours = contract.run_usd, contract.run_without_usd, contract.run_hours
    if contract.owned and run is not None:  # fix150: "a run $21 as its 5.3 h's share" was the energy plus the contract
        return (
            f", and a run ${run:,.2f} with it or without, the energy it adds: the servers are owned, and the contract, "
            "as their colocation, is paid whether they run or not"
        )
    if run is None or without is None or not isinstance(hours, int | float) or hours <= 0:
        return ""
    runs = details.get("runs_per_month")
    if "usd_per_job_hours_share" in details and isinstance(runs, int | float) and runs > 0:
        return _month_clause(contract, details, sequence_usd)
    return _hours_share_clause(run, hours, without)


def contract_reason(contract: ContractReason, details: Mapping[str, Any], sequence_usd: float | None = None) -> str:
    """The reason: what the share of the racks' undrawn contracted kW adds, with the deployment's final ``details``."""
    month = contract.month_usd
    with_it = f": ${month:,.0f}/month with it" if month is not None else ""
    return (
        f"its racks' contract (hardware.rack_circuits) adds ${contract.usd_per_month:,.0f}/month, {contract.whose} of "
        f"the contracted kW their racks leave undrawn{with_it}{_per_run_clause(contract, details, sequence_usd)}; the "
        "choice and runners-up below were compared before the racks were packed, at the kW their servers draw, without it"
    )


def with_contract_reasons(
    deployments: list[DeploymentPlan], contracts: Mapping[str, tuple[int, ContractReason]]
) -> list[DeploymentPlan]:
    """Deployments with their contract reason put in at its place (``contracts``: by name, its index and figures)."""
    sequences: dict[str, list[float]] = {}
    for d in deployments:
        sequence = d.details.get("sequence")
        if isinstance(sequence, str) and "usd_per_job_hours_share" in d.details:
            sequences.setdefault(sequence, []).append(float(d.details["usd_per_job"]))
    out = []
    for d in deployments:
        if d.name not in contracts:
            out.append(d)
            continue
        at, contract = contracts[d.name]
        sequence = d.details.get("sequence")
        summed = math.fsum(sequences[sequence]) if isinstance(sequence, str) and sequence in sequences else None
        text = contract_reason(contract, d.details, summed)
        out.append(d._replace(reasons=(*d.reasons[:at], text, *d.reasons[at:])))
    return out
