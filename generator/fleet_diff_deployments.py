"""A diff's row for one deployment (its layout, serving, load and month) read from a plan's deployment and details."""

from __future__ import annotations

import math
from typing import Any

from generator.fleet_diff_cells import _number, _plan_figure, fmt_cell, two_places
from generator.fleet_diff_shape import CONTEXT, FULL_CONTEXT_SEQUENCES, KV_BYTES_PER_TOKEN, TRAINING_SETTINGS
from generator.planner.plan import BATCH_RUN_KEYS, PAID_WHETHER_RUN, RUNS_ENERGY_BASIS
from generator.spec_figures import MAX_FIGURE


def _runs_energy_pools(plan: dict[str, Any]) -> frozenset[str]:
    """The names of ``plan``'s owned pools charged their training runs' energy (:data:`RUNS_ENERGY_BASIS`) alone.

    fix170: not those whose month holds colocation too (racked: :data:`PAID_WHETHER_RUN`), which is paid whatever runs
    (the lab's DGX H100 read "$1,877.46/month of its runs' energy on owned servers, paid only as it runs", $1,876.80 of
    it colocation).
    """
    return frozenset(
        str(pool.get("name"))
        for pool in plan.get("pools") or []
        if RUNS_ENERGY_BASIS in (basis := str(pool.get("price_basis") or "")) and PAID_WHETHER_RUN not in basis
    )


def _deployment_row(dep: dict[str, Any], runs_energy: frozenset[str] = frozenset()) -> dict[str, Any]:
    """What a diff compares of a deployment; ``parts`` (TP, PP, replicas, pool of each) when it is split.

    ``runs_energy``: the plan's pools charged their training runs' energy, whose month a job's row says is its runs'.
    """
    row = {k: dep[k] for k in ("model_id", "precision", "tp", "pp", "replicas", "gpus", "pool")}
    details = dep.get("details")
    details = details if isinstance(details, dict) else {}
    if isinstance(dp := details.get("attention_dp"), int) and dp > 1:  # EP x attention DP (newuser72 item 1)
        row["ep"], row["attention_dp"] = details.get("expert_parallel"), dp
    if details.get(CONTEXT) is not None:  # what a request may hold (newuser31 item 6: 32k -> 128k read "No change")
        row["max_model_len"] = details[CONTEXT]
    sized = dep.get("split") or ([details] if "max_num_seqs" in details else [])
    if sized:  # a service: the engine settings it is sized with, each part's where it is split (fuzz34 item 2)
        row["serving"] = _agreed([_serving(dep, details, part) for part in sized])
    offload = details.get("offload")
    if isinstance(offload, dict):  # a machine the team has: its speed and where the weights live are what change
        where = offload["bytes"] if isinstance(offload.get("bytes"), dict) else {}
        row["machine"] = {
            "decode_tokens_per_s": details.get("decode_tokens_per_s"),
            "ttft_s": details.get("ttft_s"),
            "weights_gib": {tier: _gib(where.get(key)) for tier, key in (("gpu", "gpu"), ("ram", "cpu"), ("nvme", "disk"))},
        }
        # fuzz32 item 8: llama.cpp -> ik_llama.cpp moved the decode 43% (and changed DeepSeek-R1's -mla 3 -fa on line
        # under "No change to the fleet") without a word: the engine and its planned command line are its settings
        engine = offload.get("engine")
        settings = details.get("runtime_settings")
        if isinstance(engine, str):
            row["machine"]["engine"] = engine
            command = settings.get(engine) if isinstance(settings, dict) else None
            if isinstance(command, str):
                row["machine"]["command"] = command
    load = _load(dep, details)
    if load is not None:
        row["load"] = load
    if details.get("task") not in (None, "generate"):  # a pooling service (review22 item 6: generate -> embed unsaid)
        row["task"] = details["task"]
    if "requests_per_run" in details:  # a batch job: its work, deadline and runs (review66 item 7: a change read no row)
        row["batch_job"] = {k: details.get(k) for k in BATCH_RUN_KEYS}
    if "usd_per_job" in details or "hours" in details:  # a training job: its run's time and, rented, its price
        row["training"] = {"hours": details.get("hours"), "usd_per_job": details.get("usd_per_job")}
        row["training"].update(_servers_by_month(details, dep.get("pool") in runs_energy))
        # its runs a month and the optimizer step's batch (newuser28 items 1-2: 30 -> 60 runs read "unchanged")
        row["training"].update({k: details[k] for k in ("runs_per_month", "global_batch_size") if k in details})
        # its turn in a chain (run_after): a job that now waits for another is a change (review22 item 6)
        row["training"].update({k: details[k] for k in ("runs_after", "starts_at_hours") if k in details})
        # how it trains: method, framework, optimizer, sequence, micro-batch x accumulation x DP, ZeRO (newuser31
        # item 7: a change of framework or method read as hours moving for no reason)
        row["training"].update({k: details[k] for k in TRAINING_SETTINGS if k in details})
        # states paged to host RAM, which a plan's details name only where on (review40 item 12)
        if "method" in details:
            row["training"]["paged_optimizer"] = bool(details.get("paged_optimizer"))
    if dep.get("split"):
        row["parts"] = [{k: part[k] for k in ("tp", "pp", "replicas", "pool")} for part in dep["split"]]
    if isinstance(router := details.get("router"), dict):  # the router the replicas are sized behind (newuser73 14)
        row["router"] = {k: router.get(k) for k in ("routing", "max_in_flight_per_replica")}
        # one figure where every part's is the same (a spec.json of one layout: one item; before review76 item 14 an int)
        caps = row["router"]["max_in_flight_per_replica"]
        if isinstance(caps, list) and len(set(map(str, caps))) == 1:
            row["router"]["max_in_flight_per_replica"] = caps[0]
    if isinstance(details.get("inputs"), dict):  # the workload's fields the plan was given (newuser73 item 5)
        row["inputs"] = details["inputs"]
    return row


def _serving(dep: dict[str, Any], details: dict[str, Any], sized: dict[str, Any]) -> dict[str, Any]:
    """A service's engine and the settings it is sized with, from ``sized``: its details, or one part of a split one.

    fuzz34 item 5: sglang -> vllm (and SGLang's ``mem_fraction_static``) changed the rendered engine and showed only
    through the concurrency figures.
    """
    # newuser44 item 9: a bidirectional encoder keeps no KV cache (vLLM's EncoderOnlyAttentionSpec): its row read
    # "KV bf16" and max_num_seqs as "1,024.00 such sequences a replica"
    encoder = details.get("task") not in (None, "generate") and _number(details.get(KV_BYTES_PER_TOKEN)) == 0
    serving = {
        "engine": details.get("serving_engine", "vllm"),  # the planner names an engine other than vLLM
        "kv_cache_precision": None if encoder else dep.get("kv_cache_precision"),
        # how many requests of the whole context fit a replica's KV cache (newuser31 item 6); a part holds none
        "max_concurrency_at_max_model_len": None if encoder else sized.get(FULL_CONTEXT_SEQUENCES),
        "max_num_seqs": sized.get("max_num_seqs"),
        "max_num_batched_tokens": sized.get("max_num_batched_tokens"),  # vLLM's; absent for SGLang
        "requests_per_s_per_replica_max": sized.get("requests_per_s_per_replica_max"),
        "nodes_down_tolerated": details.get("nodes_down_tolerated", 0),  # N+k asked (newuser63 item 3)
    }
    if sized.get("mem_fraction_static") is not None:  # SGLang's, rendered as --mem-fraction-static
        serving["mem_fraction_static"] = sized["mem_fraction_static"]
    if details.get("cached_prompt_share"):  # the share of each prompt its prefix cache holds (newuser72 item 9)
        serving["cached_prompt_share"] = details["cached_prompt_share"]
    if encoder:
        serving["no_kv_cache"] = "encoder"
    return serving


def _agreed(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """One record of ``parts``' settings: a value where they agree, the list of each part's (in order) where not."""
    return {k: parts[0][k] if all(p.get(k) == parts[0][k] for p in parts) else [p.get(k) for p in parts] for k in parts[0]}


def _servers_by_month(details: dict[str, Any], runs_energy: bool = False) -> dict[str, Any]:
    """A training job on servers paid by the month (bought, owned or reserved): their month and how they are had.

    Its ``usd_per_job`` is then its hours' share of that month, paid whether it runs or not, not what a run adds
    (newuser30 item 12: beside a rented job's real cost a run, $5.51 against $60.76 read as renting costing 11x).
    ``paid_by``: ``bought``, ``owned`` (their running cost alone) or ``month`` (rented by the month); ``share`` where
    the month is the job's share of a sequence's servers (``run_after``). Nothing for a job rented per run, nor where
    the spec.json holds no month a plan can hold. ``owned-runs`` where the owned pool is charged the energy of its runs
    alone (``runs_energy``: newuser96 item 2, a QLoRA job on a 2 x RTX 4090 tower read "$0.21/month of owned servers'
    running cost, paid whatever runs", a month its runs make, none paid while it does not run).
    """
    month = _plan_figure(details.get("usd_per_month"))
    if month is None or "usd_per_hour" in details:  # a job billed per run has its rate, no month
        return {}
    capex = _plan_figure(details.get("capex_usd"))
    paid_by = "month" if capex is None else "bought" if capex > 0 else "owned-runs" if runs_energy else "owned"
    return {"usd_per_month": two_places(month), "paid_by": paid_by, **({"share": True} if "cost_share" in details else {})}


def _rate_places(rate: float) -> int:
    """Decimal places that show a rate: two, or below 0.1 req/s as many as give three significant figures.

    fuzz32 item 8: 0.001 req/s read "0.00 req/s asked" (and 0.0 in the JSON).
    """
    if rate == 0 or not math.isfinite(rate) or abs(rate) >= 0.1:
        return 2
    return min(15, 2 - math.floor(math.log10(abs(rate))))


def rate_text(rate: Any) -> str:
    """A rate as a cell: ``12.35``, ``0.001`` (three significant figures below 0.1), ``-`` where there is none."""
    if not isinstance(rate, float) or isinstance(rate, bool) or (places := _rate_places(rate)) == 2:
        return fmt_cell(rate)
    return f"{rate:.{places}f}".rstrip("0")


def _slowest(dep: dict[str, Any], details: dict[str, Any], key: str) -> Any:
    """``details[key]``, or the largest of a split deployment's parts' (fuzz34 item 2: a split service showed none)."""
    parts = dep.get("split") or []
    figures = [f for part in parts if (f := _plan_figure(part.get(key))) is not None]
    if not parts or len(figures) < len(parts):
        return details.get(key)  # a part without the figure: the deployment's own
    return max(figures)


def _load(dep: dict[str, Any], details: dict[str, Any]) -> dict[str, Any] | None:
    """A service's requested rate, the share of its replicas' capacity that takes, and its latency at that load.

    Capacity is what the replicas sustain together within the SLOs, less the wait for a place in the batch
    (``requests_per_s_sustained``, the plan's figure); a ``spec.json`` written before it holds none, and there it is
    replicas x the most a replica sustains, a split service's slowest part's figure binding. None for
    a deployment without a rate (a training job, a fixed machine). newuser24 item 3: a rate change that kept the
    layout read "No change to the fleet." while every rendered output changed.
    """
    rate = _plan_figure(details.get("requests_per_s"))
    if rate is None:
        return None
    parts = dep.get("split") or [{"replicas": dep["replicas"], **details}]
    replicas = [_plan_figure(p.get("replicas")) for p in parts]
    rates = [_plan_figure(p.get("requests_per_s_per_replica_max")) for p in parts]
    capacity = 0.0  # a figure missing, or none a plan holds: no share is told
    if (sustained := _plan_figure(details.get("requests_per_s_sustained"))) is not None:
        capacity = sustained  # the wait for a place included, as the plan says it (newuser79 item 9)
    elif all(replicas) and all(rates):  # requests go evenly to every replica: the slowest part's binds
        capacity = sum(n for n in replicas if n) * min(r for r in rates if r)
    share = rate / capacity if capacity else None
    return {
        "requests_per_s": round(rate, _rate_places(rate)) + 0.0,
        # review22 item 7: a hostile spec.json's 1e-320 capacity made an infinite share (a JSON traceback)
        "capacity_share": round(share, 4) + 0.0 if share is not None and share <= MAX_FIGURE else None,
        # a split service's requests meet either part's replicas: the slower part's latency is the service's
        "ttft_p95_s": _slowest(dep, details, "ttft_p95_s"),
        "tpot_s": _slowest(dep, details, "tpot_s"),
        # a pooling service's whole request (review22 item 6: its latency was not shown)
        "latency_p95_s": details.get("latency_p95_s"),
        # the targets it is sized for: a tighter SLO that keeps the layout is still a change to review
        "slo": {k: details.get(f"slo_{k}") for k in ("ttft_p95_ms", "tpot_ms", "latency_p95_ms") if f"slo_{k}" in details},
    } | _average(details)


def _average(details: dict[str, Any]) -> dict[str, Any]:
    """A service's average rate (``average_requests_per_second``) and the replicas its pool scales down to for it.

    newuser69 item 3: chat's average 5 -> 9 req/s moved the floor month by +$20,381.60 and listed no deployment row,
    where the README promises none is left unsaid. Nothing for a service without an average (a pool of a fixed size).
    """
    rate = _plan_figure(details.get("average_requests_per_s"))
    if rate is None:
        return {}
    out: dict[str, Any] = {"average_requests_per_s": round(rate, _rate_places(rate)) + 0.0}
    replicas = details.get("replicas_at_average")
    if _plan_figure(replicas) is not None:  # a plan records them where a pool is sized for the average
        out["replicas_at_average"] = replicas
    return out


def _gib(value: Any) -> Any:
    """Bytes as GiB to two places; anything that is not a number as it is (a spec.json given to ``diff`` may hold it)."""
    return round(value / 2**30, 2) if isinstance(value, (int, float)) and not isinstance(value, bool) else value
