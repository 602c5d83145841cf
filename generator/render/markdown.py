"""``SPEC.md``: the human summary of a plan."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generator import __version__
from generator.catalog.records import acquired
from generator.planner.plan import (
    Candidate,
    Capacity,
    DeploymentPlan,
    Plan,
    capacity_headline,
    runs_only_nodes_text,
    runs_only_power_text,
)
from generator.planner.price_region import priced_at
from generator.planner.spot import on_demand_text, priced_on_demand
from generator.planner.tco import job_runs_per_month, month_run_usd, run_usd
from generator.render.deepspeed_config import ds_config_path, runs_deepspeed
from generator.render.env import render_template
from generator.render.md_escape import MarkdownSafe, md_code
from generator.render.node_disk import root_disk_text
from generator.render.outlet_text import outlet_text
from generator.shared_host_text import shared_host_lines
from generator.units import figure_text


def detail_label(key: str, provider: str, rented: bool = False) -> str:
    """A deployment detail's name as SPEC.md lists it: GPUs on a cloud are rented, not bought (newuser24 item 12).

    ``rented``: the deployment's servers on bare metal are rented from a provider (``Pool.rented``), as the plan's
    text says (:func:`~generator.planner.tco.acquired_as`): ``gpus_rented``, not ``gpus_bought``.
    """
    return key.replace("_bought", f"_{'rented' if rented else acquired(provider)}")


def rents(plan: Plan, deployment: DeploymentPlan) -> bool:
    """Whether the servers a deployment's GPUs are paid for on are rented from a provider (on bare metal).

    Those of every pool it runs in that has servers not owned (a split one's owned part buys nothing).
    """
    pools = {pool.name: pool for pool in plan.pools}
    paid = [pools[name] for name in deployment.pools if name in pools and pools[name].owned_nodes < pools[name].nodes]
    return bool(paid) and all(pool.rented for pool in paid)


def candidate_cost(candidate: Candidate, details: Mapping[str, Any] | None = None) -> str:
    """A runner-up's cost in the unit of the chosen layout's (a month, or a training job's run), its hourly rate beside.

    newuser24 item 12: the chosen layout read $/month and the runners-up below it $/h. A run on servers bought is
    the month over the job's runs a month where ``details`` (the deployment's) gives them and the servers are its own
    (newuser39 item 7), else its hours' share of their month; the reasons above say what buying them for one job
    alone costs.
    """
    if candidate.usd_per_hour is None:
        return "unpriced"
    run = month_run_usd(candidate, job_runs_per_month(details or {})) or run_usd(candidate)
    cost = f"${run:,.0f} per run" if run is not None else f"${candidate.usd_per_month or 0.0:,.0f}/month"
    return f"{cost} (${candidate.usd_per_hour:,.2f}/h)"


def spec_capacity_headline(c: Capacity) -> MarkdownSafe:
    """The plan text's capacity sentence, its fields as code spans and its factor bold (numbers and fixed words else)."""
    return MarkdownSafe(capacity_headline(c, md_code, lambda text: f"**{text}**"))


def render_markdown(plan: Plan) -> dict[str, str]:
    """``SPEC.md``."""
    text = render_template(
        "markdown/SPEC.md.j2",
        plan=plan,
        version=__version__,
        detail_label=detail_label,
        candidate_cost=candidate_cost,
        rents=rents,
        capacity_headline=spec_capacity_headline,
        figure_text=figure_text,
        runs_only_nodes=runs_only_nodes_text,
        runs_only_power=runs_only_power_text,
        priced_at=priced_at(plan.findings),  # newuser74 item 9: another region's dollars, said beside them
        spot_on_demand=on_demand_text(priced_on_demand(plan.findings)),  # newuser79 item 12
        shared_host_lines=lambda entries, per_host: shared_host_lines(((h, d, g) for h, d, _, g in entries), per_host),
        root_disk=root_disk_text,  # newuser74 item 15: what a cloud node's root / OS disk is sized from
        ds_config_path=lambda d: ds_config_path(d) if runs_deepspeed(d) else None,  # newuser76 item 14
        outlet_text=outlet_text,  # newuser112: a workstation's draw of its outlet and its heat, each machine
    )
    return {"SPEC.md": text}
