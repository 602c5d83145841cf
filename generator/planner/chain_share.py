"""A chain job's share of the servers its sequence holds in turn, paid by the month (assemble's chain share).

The jobs of a ``run_after`` sequence on one pool split its cost by their hours (equally where their hours are not
known), to the cent, so that their shares add up to the pool's, as a co-located service's do (review22 item 5); each
job's run costs its own hours at the servers' rate. The pool's share of its racks' undrawn contracted kW is split the
same way (newuser84 item 1). Moved out of assemble (review87) unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from generator.planner.chain_runs import steps_between
from generator.planner.plan import Pool
from generator.units import HOURS_PER_MONTH

if TYPE_CHECKING:
    from generator.planner.training_chain import Sequenced, Turn


def share_part(whole: float, shares: Sequence[float], position: int, digits: int | None = 2) -> float:
    """A chain job's part of its chain's ``whole`` (:func:`chain_share`): the rounded step of the cumulative shares.

    ``shares``: each job's fraction of the chain, in order; the jobs' parts add up to the whole (fuzz23 item 16).
    """
    before, upto = math.fsum(shares[:position]), math.fsum(shares[: position + 1])
    return steps_between([whole * before, whole * upto], digits)[0]


def with_undrawn(chain: dict[str, Any], undrawn_usd: float) -> dict[str, Any]:
    """A chain's cost details with its pool's undrawn contracted kW a month added to its month and running cost."""
    out = dict(chain)
    for key in ("opex_usd_per_month", "usd_per_month"):
        if undrawn_usd and out.get(key) is not None:
            out[key] = out[key] + undrawn_usd
    return out


def chain_share(job: Sequenced, pool: Pool, said: Turn, chain: dict[str, Any], undrawn_usd: float = 0.0) -> dict[str, Any]:
    """A chain job's share of the servers it holds in turn, paid by the month: the chain's cost split by the jobs' hours.

    The shares add up to the pool, as a co-located service's do (review22 item 5); where the jobs' hours are not known
    (no ``dataset_tokens``), each job takes an equal share. Its run costs its own hours at the servers' rate.
    """
    hours = job.job_hours
    own = hours[job.position]
    timed = None not in hours and 0.0 not in hours
    total = math.fsum(h or 0.0 for h in hours)
    shares = [(h or 0.0) / total for h in hours] if timed else [1 / len(hours)] * len(hours)

    def part(whole: float | None, digits: int | None) -> float | None:
        return None if whole is None else share_part(whole, shares, job.position, digits)

    basis = (
        f"{own:.1f} of the {total:.1f} h the sequence {said.sequence} holds pool {pool.name} (its servers' cost split "
        "between its jobs by their hours)"
        if timed
        else f"1 of the {len(hours)} jobs of the sequence {said.sequence} on pool {pool.name} (its servers' cost split "
        "equally: the jobs' hours are not known)"
    )
    out = {
        **chain,
        "cost_share": basis,
        "capex_usd": part(chain["capex_usd"], None),
        "opex_usd_per_month": part(chain["opex_usd_per_month"], 2),
        "usd_per_month": part(chain["usd_per_month"], 2),
    }
    out.pop("usd_per_job", None)
    out.pop("gpu_hours_per_job", None)
    c = job.chain.candidate
    if timed and own and c.usd_per_hour is not None:
        # on owned servers, the energy its own hours add (fix89: the chain is charged its runs' energy, OwnedRuns)
        rate = c.owned_runs.kw * c.owned_runs.pue * c.owned_runs.usd_per_kwh if c.owned_runs else c.usd_per_hour
        # its hours' share of the racks' undrawn contract, as a job alone's run; not on owned servers, whose run is the
        # energy it adds (fix150: the contract is paid whether they run or not, as their colocation is)
        rate += 0.0 if c.owned_runs else undrawn_usd / HOURS_PER_MONTH
        # a whole run of the job, as its hours are: a sliced job's slice is its share of it (review80 item 4)
        run = own / job.shares[job.position] if job.shares and job.shares[job.position] < 1 else own
        out["usd_per_job"] = round(rate * run, 2)
        out["gpu_hours_per_job"] = round((c.gpus + c.idle_gpus) * run, 1)
    return out
