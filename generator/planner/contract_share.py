"""A deployment's share of its racks' undrawn contracted kW, and a chain job's turn into its details."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from generator.planner.chain_share import chain_share, with_undrawn
from generator.planner.cost_details import _cost_details
from generator.planner.plan import Pool
from generator.planner.run_reasons import ContractReason
from generator.planner.tco import billed_per_run
from generator.units import HOURS_PER_MONTH
from generator.workload.models import Workload

if TYPE_CHECKING:
    from generator.planner.training_chain import Sequenced


def _add_undrawn_contract(
    details: dict[str, Any], undrawn: Mapping[str, float], pools: Sequence[str], owned: bool = False
) -> ContractReason | None:
    """A deployment's own pools' share of their racks' undrawn contracted kW (:mod:`generator.planner.colocation`).

    Added to its month and, for a training job, to its run (its hours' share of that month, as ``usd_per_job`` is
    otherwise); returns the figures of the reason saying so (newuser74 item 7: the fleet total charged it, the choice's
    figures did not), or None where it carries no share. ``owned``: a training job on owned servers, whose run is the
    energy it adds (fix89): the contract is in its month, not its run (fix150).
    """
    usd = sum(undrawn.get(name, 0.0) for name in pools)
    if not usd:
        return None
    for key in ("opex_usd_per_month", "usd_per_month"):
        if details.get(key) is not None:
            details[key] = round(details[key] + usd, 2)
    run = details.get("usd_per_job")
    hours = details.get("hours")
    if run is not None and isinstance(hours, int | float) and hours > 0 and not owned:
        details["usd_per_job"] = round(run + usd * hours / HOURS_PER_MONTH, 2)
    return _contract_figures(usd, details, run, "its pools' share", owned)


def _contract_figures(
    usd: float, details: Mapping[str, Any], run_without: float | None, whose: str, owned: bool
) -> ContractReason:
    """The figures of the reason for a share of the racks' undrawn contracted kW (``usd`` a month), ``details`` with it."""
    hours = details.get("hours")
    hours = float(hours) if isinstance(hours, int | float) else None
    return ContractReason(usd, details.get("usd_per_month"), details.get("usd_per_job"), run_without, hours, whose, owned)


def _sequence_turn(
    wl: Workload, job: Sequenced, pool: Pool, details: dict[str, Any], undrawn_usd: float = 0.0
) -> tuple[str, ContractReason | None]:
    """A chain job's turn into its details, and its reason; on servers paid by the month, the chain's cost once.

    ``undrawn_usd``: the chain's pool's share of its racks' undrawn contracted kW a month, which the jobs split by their
    hours as they split the servers' cost (newuser84 item 1); the figures of the job's contract reason where it has one.
    """
    from generator.planner.training_chain import turn

    said = turn(wl, job, pool.name)
    details.update(said.details())
    if billed_per_run(wl.hardware.provider, job.own.candidate):
        return said.reason(pool.nodes), None
    chain = _cost_details(job.chain, details["objective_used"], wl.hardware.provider)
    details.update(chain_share(job, pool, said, with_undrawn(chain, undrawn_usd), undrawn_usd))
    if not undrawn_usd:
        return said.reason(pool.nodes), None
    without = chain_share(job, pool, said, chain)  # its share without the undrawn kW: the reason's figures
    month, before = details.get("usd_per_month"), without.get("usd_per_month")
    if month is None or before is None:
        return said.reason(pool.nodes), None
    whose = "its hours' share of its pool's share"
    owned = job.chain.candidate.owned_runs is not None
    return said.reason(pool.nodes), _contract_figures(month - before, details, without.get("usd_per_job"), whose, owned)
