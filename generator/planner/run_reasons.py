"""A training job's run in its racks'-contract reason: the figure ``usd_per_job`` holds, and what it includes.

The racks' contract reason (``assemble._undrawn_reason``, newuser74 item 7 / newuser84 item 1) says a job's run "as
its hours' share of that month", with and without the contract's undrawn kW. Where the job gives its runs a month on
servers paid by the month, its run is the month over its runs instead (a job alone: ``assemble._month_per_run``,
newuser39 item 7; a ``run_after`` sequence at one cadence: :mod:`generator.planner.chain_runs`), and ``usd_per_job``
holds that. fix150: nightly-tune read "a run $82 as its 4.9 h's share of that month ($73 without it)" beside a
``usd_per_job`` of $372.59, and "$360 per run of the sequence" in its choice beside a sequence's $405.01 a run: the
clause now gives the run ``usd_per_job`` holds, the month over the runs, what it includes (the contract) and, for a
sequence's job, the sequence's run (its jobs' runs summed); the hours' share stays beside it. The choice below it was
compared without the contract, as the reason already says.
"""

from __future__ import annotations

import math
import re
from typing import Any

from generator.planner.plan import DeploymentPlan

#: The hours'-share clause, as :func:`hours_share_clause` writes it.
_HOURS_SHARE = re.compile(r", and a run \$[\d,]+ as its ([\d,.]+) h's share of that month \((\$[\d,]+) without it\)")


def hours_share_clause(run: float, hours: float, run_without: float) -> str:
    """A run as its hours' share of its month with its racks' contract, and without it."""
    return f", and a run ${run:,.0f} as its {hours:,.1f} h's share of that month (${run_without:,.0f} without it)"


def _month_clause(details: dict[str, Any], hours: str, without: str, sequence_usd: float | None) -> str:
    """The run ``usd_per_job`` holds: the month with the contract over the runs a month, the hours' share beside."""
    runs, run, share = details["runs_per_month"], details["usd_per_job"], details["usd_per_job_hours_share"]
    whose = "the sequence's" if sequence_usd is not None else "its"
    text = f", and a run ${run:,.0f} with it, that month over {whose} {runs:g} runs a month"
    if sequence_usd is not None:
        text += f" (a run of the sequence ${sequence_usd:,.0f} with it, its jobs' runs summed)"
    return text + f"; as its {hours} h's share of that month a run is ${share:,.0f} (${without[1:]} without it)"


def month_run_reasons(deployments: list[DeploymentPlan]) -> list[DeploymentPlan]:
    """Jobs whose run is the month over their runs (``usd_per_job_hours_share`` beside it): their contract reason says so."""
    sequences: dict[str, list[float]] = {}
    for d in deployments:
        sequence = d.details.get("sequence")
        if isinstance(sequence, str) and "usd_per_job_hours_share" in d.details:
            sequences.setdefault(sequence, []).append(float(d.details["usd_per_job"]))
    out = []
    for d in deployments:
        details = d.details
        runs = details.get("runs_per_month")
        if "usd_per_job_hours_share" not in details or not isinstance(runs, int | float) or runs <= 0:
            out.append(d)
            continue
        sequence = details.get("sequence")
        summed = math.fsum(sequences[sequence]) if isinstance(sequence, str) and sequence in sequences else None
        out.append(d._replace(reasons=tuple(_rewritten(reason, details, summed) for reason in d.reasons)))
    return out


def _rewritten(reason: str, details: dict[str, Any], sequence_usd: float | None) -> str:
    """A contract reason's hours'-share clause as the month over the runs (:func:`_month_clause`); another as it is."""
    if not reason.startswith("its racks' contract"):
        return reason
    return _HOURS_SHARE.sub(lambda m: _month_clause(details, m.group(1), m.group(2), sequence_usd), reason)
