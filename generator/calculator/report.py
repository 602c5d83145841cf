"""Plain-text views for the terminal: a plan summary and catalog listings."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from generator import catalog
from generator.units import GIB, money_text
from generator.words import counted

if TYPE_CHECKING:
    from generator.planner.plan import Plan, RackSpec


#: What the fleet's month between two figures means: the serving pools that scale at their fewest nodes, and at the peak's.
FLOOR_WHY = "the pools that autoscale at the nodes their services' average rates need all month, and at the peak's"


def _add_prices(baremetal: bool) -> str:
    """What prices an unpriced pool: on bare metal a purchase_prices: quote buys it, a prices: rate rents it.

    newuser102: "add prices:" alone turned a buyer's server into a rental from a provider.
    """
    return "add purchase_prices: to buy, prices: to rent" if baremetal else "add prices:"


def unpriced_text(totals: dict[str, Any], baremetal: bool = False) -> str:
    """The fleet's cost where some pools have no price: the priced pools' sum and which are left out."""
    if "unpriced_pools" not in totals:
        return "unpriced"
    unpriced = totals["unpriced_pools"]
    pools = totals["priced_pools"] + len(unpriced)
    return (
        f"${totals['priced_usd_per_month']:,.0f}/month for {totals['priced_pools']} of {pools} pools "
        f"({', '.join(unpriced)} unpriced: {_add_prices(baremetal)})"
    )


def without_runs_text(totals: dict[str, Any]) -> str:
    """The rented training pools a month of runs leaves out, and their cost a run (newuser35 item 7)."""
    names = ", ".join(totals["training_pools_without_runs"])
    run = totals.get("training_usd_per_job_without_runs")
    each = f"+ ${run:,.0f} per run of {names}" if run is not None else f"+ the runs of {names}"
    return f"{each}: runs_per_month not given"


def plan_text(plan: Plan) -> str:
    """The choice, the runners-up and the reasons, for a terminal."""
    from generator.planner.plan import (  # the planner loads only where a plan is shown
        capacity_lines,
        nvme_text,
        ram_text,
        runs_only_nodes_text,
        runs_only_power_text,
    )
    from generator.planner.price_region import priced_at
    from generator.planner.spot import on_demand_text, priced_on_demand
    from generator.planner.tco import cost_text, gpus_acquired, job_runs_per_month

    t = plan.totals
    baremetal = plan.provider == "baremetal"
    cost = f"${t['usd_per_month']:,.0f}/month" if t["usd_per_month"] is not None else unpriced_text(t, baremetal)
    if t.get("usd_per_month_floor") is not None:  # serving pools that scale to their services' average rates
        cost = f"between ${t['usd_per_month_floor']:,.0f} and {cost} ({FLOOR_WHY})"
    if t.get("capex_usd") is not None:
        cost += f" (capex ${t['capex_usd']:,.0f}, opex ${t['opex_usd_per_month']:,.0f}/month)"
    if t.get("training_usd_per_job") is not None:
        cost += f" + ${t['training_usd_per_job']:,.0f} {_per_run_words(plan)} (rented per job)"
        if t.get("training_usd_per_month") is not None:
            cost += f", ${t['training_usd_per_month']:,.0f}/month at the runs_per_month given"
            # with no month of its own (every pool rented per run) the fleet's month is the runs' (newuser45 item 11)
            if t.get("usd_per_month_with_runs") is not None and t.get("usd_per_month"):
                cost += f": ${t['usd_per_month_with_runs']:,.0f}/month with the runs"
            if t.get("training_pools_without_runs"):
                cost += f" ({without_runs_text(t)})"
    elif t.get("unpriced_training_pools"):
        cost += (
            f" + ${t['priced_training_usd_per_job']:,.0f} per run of the priced training pools "
            f"({', '.join(t['unpriced_training_pools'])} unpriced: {_add_prices(baremetal)})"
        )
    if elsewhere := priced_at(plan.findings):  # newuser74 item 9: another region's dollars, said in the headline
        cost += f" at {', '.join(elsewhere)} rates (the cluster is in {plan.region}: warning price-region)"
    cost += on_demand_text(priced_on_demand(plan.findings))  # newuser79 item 12: spot pools at on-demand rates
    idle = f" ({t['idle_gpus']:,} idle)" if t.get("idle_gpus") else ""
    lines = [
        f"{plan.workload}: {counted(t['gpus'], 'GPU')}{idle} on {t['nodes']:,} node(s)"
        + (f" in {t['racks']:,} rack(s)" if plan.provider == "baremetal" else "")  # a cloud's instances: no rack of yours
        + _rented_text(plan)
        + runs_only_nodes_text(t, plan.pools)
        + ", "
        f"{t['power_w'] / 1000:,.1f} kW{runs_only_power_text(t)}, {cost}",
        *_sites_lines(plan),
        "",
    ]
    if plan.capacity is not None:  # objective: capacity: what the capex cap buys
        lines += [*capacity_lines(plan.capacity, any(d.kind == "training" for d in plan.deployments)), ""]
    for pool in plan.pools:
        n = pool.node
        nodes = f"{pool.nodes:,}" if pool.min_nodes is None else f"{pool.min_nodes:,} to {pool.nodes:,} (autoscaled)"
        spot = ", spot capacity" if pool.spot else ""  # capacity_type: spot (on demand is said by nothing, as before)
        lines.append(f"pool {pool.name}: {nodes} x {n.platform_name} with {n.gpus} x {n.gpu_name}{spot}")
        lines.append(
            f"  {n.cpu}, {ram_text(n.ram_gib)}, {nvme_text(n.nvme_tb, n.nvme_drives)}, {n.power_w:,} W per node ({n.power_basis}"
            + (
                f"; {n.power_components_w:,} W summed from components"
                if n.power_components_w is not None and n.power_components_w != n.power_w
                else ""
            )
            + f"), {n.cooling} cooled"
        )
        if n.memory or n.boot_drives:
            lines.append("  " + "; ".join(x for x in (f"memory {n.memory}" if n.memory else "", n.boot_drives or "") if x))
        if n.host_minimum:
            lines.append(f"  host minimum: {n.host_minimum}")
        if pool.price_basis:
            lines.append(f"  cost: {pool.price_basis}")
        if pool.host_gpus:  # services sharing owned hosts: each one's GPUs of a host (fix167)
            from generator.shared_host_text import shared_host_lines

            per_host = n.gpus // n.hosts
            lines += [
                f"  {line}" for line in shared_host_lines(((h.host, h.deployment, h.gpus) for h in pool.host_gpus), per_host)
            ]
    if plan.racks:  # bare metal: what each rack holds and draws (newuser30 item 5)
        field = "rack_power_kw" if plan.rack_supply is None else "rack_circuits"
        lines += ["", f"racks of {plan.racks[0].rack_power_kw:g} kW (hardware.{field}):"]
        for rack in plan.racks:
            held = ", ".join(f"{s.nodes} x {s.pool}" + (f" ({', '.join(s.hosts)})" if s.hosts else "") for s in rack.pools)
            lines.append(
                f"  {rack.id}: {held}; {rack.units}U of {rack.usable_units}U, {rack.power_w / 1000:,.1f} kW, "
                f"{rack.heat_btu_per_h:,} BTU/h, {rack.cooling} cooled" + _circuit_text(plan, rack)
            )
    for d in plan.deployments:
        parts = d.split or (d,)
        # a training job's copies are the data-parallel ranks of one job, not replicas (newuser43 item 10)
        training = d.kind == "training"
        # attention data-parallel replicas name their EP (newuser72 item 1: "TP1 x PP2" read as 2 GPUs a replica)
        rows = [(p.tp, p.pp, p.replicas, p.pool, d.expert_parallel_in(p.pool)) for p in parts]
        layout = " + ".join(
            f"TP{tp}{f' x EP{ep} (attention DP {ep // tp})' if ep > tp else ''} x PP{pp} x "
            f"{f'DP{replicas}' if training else f'{replicas} replica(s)'} in {pool}"
            for tp, pp, replicas, pool, ep in rows
        )
        task = d.details.get("task")  # a pooling service: its task, and its KV for one pass (not one sequence)
        # FP8 training keeps bf16 weights and runs its linear layers' GEMMs in FP8 (compute_precision)
        compute = f" ({str(d.details['compute_precision']).upper()} GEMMs)" if d.details.get("compute_precision") else ""
        lines += [
            "",
            f"deployment {d.name} ({d.kind}{f', {task}' if task else ''}): {d.model_id}, {d.precision}{compute}, {layout}",
        ]
        for p in parts:
            label = f" in {p.pool}" if d.split else ""
            lines.append(f"  per GPU{label}: " + _memory_text(p.memory_per_gpu, pooling=task is not None))
        lines += [f"  - {r}" for r in d.listed_reasons]
        runs = job_runs_per_month(d.details)
        for c in d.runners_up:
            price = cost_text(c, runs_per_month=runs)
            over = f"; over {c.over_limit}" if c.over_limit else ""  # a fleet limit it alone breaks (fuzz34 item 3)
            had = gpus_acquired(plan.provider, c)  # rented on a cloud or from a provider, else bought
            over += f"; {c.no_better}" if c.no_better else ""  # newuser79 item 8
            lines.append(f"  runner-up: {c.summary} ({had}, {c.gpus} used, {c.power_w / 1000:,.1f} kW, {price}{over})")
    if plan.findings:
        lines.append("")
        lines += [f"{f.level}: {f.code}: {f.message}" + (f" ({f.path})" if f.path else "") for f in plan.findings]
    return "\n".join(lines) + "\n"


def _per_run_words(plan: Plan) -> str:
    """What the headline's sum a run is: one job's run, or one run of each of several jobs, named with theirs.

    newuser83 item 6: a nightly LoRA job ($41 a run, 30 a month) and a monthly full fine-tune ($2,666, once) read
    "$2,707 per training run", a run that never happens: the sum of one run of each.
    """
    jobs = [
        (d.name, float(d.details["usd_per_job"]))
        for d in plan.deployments
        if d.kind == "training" and isinstance(d.details.get("usd_per_job"), int | float)
    ]
    # only the jobs the sum counts (rented per run): a job on servers paid by the month is not among them
    if len(jobs) < 2 or abs(sum(usd for _, usd in jobs) - float(plan.totals["training_usd_per_job"])) > 0.01 * len(jobs):
        return "per training run"
    return "for one run of each training job (" + ", ".join(f"{name} ${usd:,.0f}" for name, usd in jobs) + ")"


def _rented_text(plan: Plan) -> str:
    """The bare-metal nodes rented from a provider, which stand in its datacentre, not in the racks counted ('' if none)."""
    rented = sum(p.nodes for p in plan.pools if p.rented)
    return f" ({rented:,} of them rented, in the provider's datacentre)" if rented else ""


def _circuit_text(plan: Plan, rack: RackSpec) -> str:
    """A rack's load on its circuits (``hardware.rack_circuits``), or "" where the workload gives rack_power_kw."""
    load, supply = rack.circuit_load, plan.rack_supply
    if load is None or supply is None:
        return ""
    failover = f", {load.failover_phase_current_a:,.1f} A with one side lost" if load.failover_phase_current_a is not None else ""
    # the most loaded line with each PSU on its outlet, not an even share of every circuit (fuzz30 item 1)
    return (
        f"; {load.apparent_power_kva:,.1f} kVA, {load.phase_current_a:,.1f} A on its most loaded line{failover}, "
        f"of {supply.breaker_a:g} A breakers ({supply.continuous_limit_a:g} A continuous)"
    )


def _memory_text(mem: Mapping[str, int], *, pooling: bool = False) -> str:
    """One GPU's memory by kind, the kinds it holds; a serving GPU's one-sequence (pooling: one-request) figures labelled."""
    kinds = ("weights", "kv_cache", "activations", "gradients", "optimizer", "overhead", "total")
    pool = mem.get("kv_cache_pool")
    held = "kv_cache (one request)" if pooling else "kv_cache (one sequence)"
    label = {"kv_cache": held, "total": "total to start"} if pool is not None else {}
    text = ", ".join(f"{label.get(k, k)} {mem[k] / GIB:.1f} GiB" for k in kinds if mem[k])
    return text + (f"; KV cache pool {pool / GIB:.1f} GiB" if pool is not None else "")


def rows_by_id(
    records: Mapping[str, Any], row: Callable[[Any], dict[str, Any]], *, sourced: bool = False
) -> list[dict[str, Any]]:
    """One row per record, sorted by id; ``sourced`` ends each row with the record's first ``source``."""
    rows = []
    for record in sorted(records.values(), key=lambda r: r.id):
        fields = row(record)
        if sourced:
            fields["source"] = record.source[0] if record.source else "unsourced"
        rows.append(fields)
    return rows


def catalog_rows(kind: str) -> list[dict[str, Any]]:
    """Catalog entries with their id, name and key figures."""
    if kind == "gpus":
        return rows_by_id(
            catalog.gpus(),
            lambda g: {
                "id": g.id,
                "name": g.name,
                "memory_gb": g.memory_gb,
                "memory_gib_usable": round(g.memory_bytes / GIB, 2),
                "memory_bandwidth_gb_per_s": g.memory_bandwidth_gb_per_s,
                "bf16_dense_tflops": g.tflops("bf16"),
                "fp8_dense_tflops": g.tflops("fp8"),
                "tdp_w": g.tdp_w,
                "form_factor": g.form_factor,
                "interconnect": g.interconnect_kind,
            },
        )
    if kind == "platforms":
        return rows_by_id(
            catalog.platforms(),
            lambda p: {
                "id": p.id,
                "name": p.name,
                "kind": p.kind,
                "provider": p.provider,
                "instance_type": p.instance_type,
                "gpus": list(p.gpu_ids),
                "gpu_counts": list(p.gpu_counts),
                "max_power_w": p.max_power_w,
            },
        )
    from generator.sizing.architecture import parse_architecture

    def model_row(m: Any) -> dict[str, Any]:
        arch = parse_architecture(m.config)
        return {
            "id": m.id,
            "name": m.name,
            "aliases": list(m.aliases),
            "model_type": arch.model_type,
            "params_total": arch.params_total,
            "params_active": arch.params_active,
            "layers": arch.num_layers,
            "max_context_tokens": arch.max_model_len,
        }

    return rows_by_id(catalog.models(), model_row)


def money_cell(usd: float) -> str:
    """A catalog price for a table: to the cent, with the tenths and hundredths of a cent a list price gives.

    newuser79 item 13: ``catalog prices`` printed the JSON's float as it is stored (88.4899999025753, 5.06879789041096).
    Providers quote hourly prices finer than the cent (AWS g4dn.12xlarge $3.912 an hour; a cent an hour is $7.30 a
    month), so up to four decimals are kept and never fewer than two; ``--json`` keeps the exact value.
    """
    text = money_text(usd, 4).rstrip("0")
    return text + "0" * (2 - len(text.split(".")[1]))


def _catalog_cell(key: str, value: Any) -> str:
    if value is None:
        return ""
    if key == "usd" and isinstance(value, int | float) and not isinstance(value, bool):
        return money_cell(value)
    return f"{value:,}" if isinstance(value, int) else str(value)


def catalog_text(rows: list[dict[str, Any]], columns: int = 6) -> str:
    """Rows as an aligned table: id, name and the first few figures (``columns`` in all)."""
    if not rows:
        return "(empty)\n"
    keys = [k for k in rows[0] if k not in ("aliases", "gpus", "gpu_counts")][:columns]
    table = [[str(k) for k in keys]] + [[_catalog_cell(k, r[k]) for k in keys] for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(keys))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in table) + "\n"


def _sites_lines(plan: Plan) -> list[str]:
    """A per-site plan's second headline line (``sites:``, newuser113): the line above is one site's; the chain's."""
    if plan.sites is None:
        return []
    s = plan.sites.totals
    money = f"${s['usd_per_month']:,.0f}/month" if s["usd_per_month"] is not None else "unpriced"
    capex = f"${s['capex_usd']:,.0f}" if s["capex_usd"] is not None else "not known"  # fix204: not $0 (SPEC.md: -)
    return [
        f"per site (sites): the line above is one site's ({plan.sites.names[0]}); {s['sites']:,} sites, each on its own "
        f"hosts: {counted(s['gpus'], 'GPU')} on {s['nodes']:,} node(s), {s['power_w'] / 1000:,.1f} kW, {money} "
        f"(capex {capex})"
    ]
