"""A deployment's row as Markdown in a diff: its cells, and the line that says what changed in it (layout, settings, inputs)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from generator.capacity_diff import rate_said
from generator.errors import one_line
from generator.fleet_diff_cells import _number, fmt_cell
from generator.fleet_diff_deployments import rate_text
from generator.fleet_diff_shape import TRAINING_SETTINGS
from generator.planner.plan import PAID_AS_RUNS, RUNS_ENERGY_PAID
from generator.render.md_escape import md_text
from generator.workload.models import InferenceSpec, TrainingSpec, default_fields

if TYPE_CHECKING:
    from collections.abc import Callable


def deployment_layout(x: dict[str, Any]) -> str:
    """A deployment's replicas as text: ``TP8xPP1 x6`` or, split, ``TP8xPP1 x2 in pool_a + TP4xPP1 x4 in pool_b``.

    A training job's are the data-parallel ranks of one job: ``TP1xPP1xDP16`` (newuser43 item 10: "x16" read as 16
    replicas of a ZeRO-3 job, which replicates nothing).
    """
    if x.get("parts"):
        return " + ".join(f"TP{p['tp']}xPP{p['pp']} x{p['replicas']} in {p['pool']}" for p in x["parts"])
    if x.get("training"):
        return f"TP{x['tp']}xPP{x['pp']}xDP{x['replicas']}"
    if x.get("attention_dp"):  # attention data-parallel: ``TP1xEP8(DP8)xPP2 x2`` (newuser72 item 1)
        return f"TP{x['tp']}xEP{x['ep']}(DP{x['attention_dp']})xPP{x['pp']} x{x['replicas']}"
    return f"TP{x['tp']}xPP{x['pp']} x{x['replicas']}"


def _load_text(load: dict[str, Any]) -> str:
    """A service's rate and how much of its capacity that is: ``15 req/s asked, 85% of capacity; TTFT p95 177 ms ...``."""
    share = load["capacity_share"]
    text = rate_said(load, rate_text(load["requests_per_s"])) + (
        "" if _number(share) is None else f", {float(share):.0%} of capacity"
    )
    ttft, tpot, latency = (_number(load.get(k)) for k in ("ttft_p95_s", "tpot_s", "latency_p95_s"))
    if latency is not None:
        text += f" (request latency p95 {latency * 1000:,.0f} ms at that load)"
    elif ttft is not None and tpot is not None:
        text += f" (TTFT p95 {ttft * 1000:,.0f} ms, TPOT {tpot * 1000:,.1f} ms at that load)"
    if load.get("average_requests_per_s") is not None:  # its pool scales down to the average's replicas (newuser69 item 3)
        at = load.get("replicas_at_average")
        served = " served" if isinstance(load.get("served_at"), dict) else ""  # a capacity plan's, at its factor
        text += f"; {rate_text(load['average_requests_per_s'])} req/s{served} on average" + (
            "" if at is None else f", {_plain(at)} replicas at it"
        )
    slo = load.get("slo")
    slo = slo if isinstance(slo, dict) else {}
    names = {"ttft_p95_ms": "TTFT p95", "tpot_ms": "TPOT", "latency_p95_ms": "request latency p95"}
    targets = [f"{name} {value:,g} ms" for k, name in names.items() if (value := _number(slo.get(k))) is not None]
    return text + (f"; SLO {', '.join(targets)}" if targets else "")


def _deployment_text(x: dict[str, Any] | None) -> str:
    """One side of a deployment row: model, layout, load, engine settings, run or machine figures."""
    if x is None:
        return "-"
    task = f" {x['task']}" if x.get("task") else ""
    gpus = f"{x['gpus']} GPU" + ("" if x["gpus"] == 1 else "s")  # newuser100: "x1 (1 GPUs)"
    text = f"{x['model_id']} {x['precision']}{task} {deployment_layout(x)} ({gpus})"
    load = x.get("load")
    if load:
        text += f"; {_load_text(load)}"
    serving = x.get("serving")
    if serving:
        tokens, fraction, context = serving.get("max_num_batched_tokens"), serving.get("mem_fraction_static"), _context_text(x)
        text += (
            f"; {_each(serving.get('engine'), _plain)}, {_kv_text(serving)}, "
            + (f"{context}, " if context else "")
            + ("" if fraction is None else f"mem_fraction_static {_each(fraction, _fraction)}, ")
            + f"max_num_seqs {_each(serving['max_num_seqs'])}, "
            + ("" if tokens is None else f"max_num_batched_tokens {_each(tokens)}, ")
            + f"at most {_each(serving['requests_per_s_per_replica_max'])} req/s a replica"
        )
    elif x.get("max_model_len") is not None:  # a machine: the context alone
        text += f"; {_context_text(x)}"
    training = x.get("training")
    if training:
        settings = ", ".join(_training_settings(training))
        text += f"; {settings}" if settings else ""
        text += f"; {fmt_cell(training['hours'])} h a run"
        if training.get("usd_per_month") is not None:  # servers paid by the month: a run adds none of it
            text += f", on {_month_text(training)}"
        elif training["usd_per_job"] is not None:
            text += f", ${fmt_cell(training['usd_per_job'])} a run"
        if training.get("runs_per_month") is not None:
            text += f", {fmt_cell(training['runs_per_month'])} runs a month"
        if training.get("global_batch_size") is not None:
            text += f", a step of {fmt_cell(training['global_batch_size'])} sequences"
        if training.get("runs_after"):
            # the hour counts from the sequence's start, when the first job starts (fuzz22 item 8)
            start = fmt_cell(training.get("starts_at_hours"))
            text += f", after {fmt_cell(training['runs_after'])}, from {start} h of the sequence"
    machine = x.get("machine")
    if machine:
        gib = machine["weights_gib"]
        text += (
            f"; {fmt_cell(machine['decode_tokens_per_s'])} tokens/s, TTFT {fmt_cell(machine['ttft_s'])} s; "
            f"weights GPU {fmt_cell(gib['gpu'])} / RAM {fmt_cell(gib['ram'])} / NVMe {fmt_cell(gib['nvme'])} GiB"
        )
        if machine.get("engine") is not None:
            # plain: the row is made inert Markdown as a whole (a cell's own escape would be escaped again)
            text += f"; {machine['engine']}" + (f" {machine['command']}" if machine.get("command") else "")
    return md_text(text)


def _each(value: Any, text: Callable[[Any], str] = fmt_cell) -> str:
    """A setting as a cell; a split deployment's parts that differ as ``1,024 / 512`` (in the layout's order)."""
    return " / ".join(text(v) for v in value) if isinstance(value, list) else text(value)


def _kv_text(serving: dict[str, Any]) -> str:
    """``KV fp8``, or ``no KV cache (encoder)`` for a service that keeps none (newuser44 item 9)."""
    if serving.get("no_kv_cache"):
        return f"no KV cache ({_plain(serving['no_kv_cache'])})"
    return f"KV {_each(serving['kv_cache_precision'])}"


def _fraction(value: Any) -> str:
    """A memory fraction as rendered (three places: 0.817, not 0.82), anything else as :func:`fmt_cell`."""
    return f"{value:.3f}" if isinstance(value, float) else fmt_cell(value)


def _context_text(x: dict[str, Any]) -> str:
    """``max_model_len 32,768 (38.27 such sequences a replica)``: a deployment's context and what a replica holds of it."""
    context = x.get("max_model_len")
    fit = (x.get("serving") or {}).get("max_concurrency_at_max_model_len")
    if context is None:  # a spec.json from before newuser31 item 6
        return ""
    command = (x.get("machine") or {}).get("command")
    if isinstance(command, str) and " -kvu" in f" {command}":  # newuser95 item 3: -c of -np N slots, not a request's
        return f"llama.cpp -c {_plain(context)} (the KV cache its server slots share)"
    return f"max_model_len {_plain(context)}" + ("" if fit is None else f" ({_plain(fit)} such sequences a replica)")


def _training_settings(training: dict[str, Any]) -> list[str]:
    """How a job trains, as far as its row has it (newuser31 item 7).

    ``qlora rank 16``, ``unsloth``, ``adamw-8bit``, the sequence, ``micro-batch 8 x 1 accumulation x 4 DP`` and a ZeRO
    stage above 0.
    """
    parts = []
    if training.get("method") is not None:
        rank = training.get("lora_rank")
        parts.append(_plain(training["method"]) + ("" if rank is None else f" rank {_plain(rank)}"))
    parts += [_plain(training[k]) for k in ("framework", "optimizer") if training.get(k) is not None]
    if training.get("sequence_length") is not None:
        parts.append(f"{_plain(training['sequence_length'])}-token sequences")
    step = [training.get(k) for k in ("micro_batch_size", "gradient_accumulation_steps", "data_parallel")]
    if None not in step:
        parts.append(f"micro-batch {_plain(step[0])} x {_plain(step[1])} accumulation x {_plain(step[2])} DP")
    if training.get("zero_stage") not in (None, 0):
        parts.append(f"ZeRO-{_plain(training['zero_stage'])}")
    if training.get("gradient_checkpointing") is not None:  # review40 item 12: none / selective / full moved the job
        parts.append(f"{_checkpointing(training['gradient_checkpointing'])} checkpointing")
    if training.get("paged_optimizer"):
        parts.append("optimizer states paged")
    return parts


def _checkpointing(value: Any) -> str:
    """A job's activation checkpointing as its cell says it: ``no``, ``selective``, ``full``."""
    return "no" if value == "none" else _plain(value)


def _on_off(value: Any) -> str:
    """A switch as a changed row says it."""
    return "on" if value else "off"


def _plain(value: Any) -> str:
    """A value inside a deployment cell, which is escaped as a whole: a number as :func:`fmt_cell`, a text unescaped."""
    return one_line(value) if isinstance(value, str) else fmt_cell(value)


def _ms(value: Any) -> str:
    """A target in milliseconds as the cell writes it (``2,000``), ``-`` where there is none."""
    return "-" if _number(value) is None else f"{value:,g}"


def _seconds_as_ms(places: int) -> Callable[[Any], str]:
    """A latency in seconds as the cell writes it in milliseconds, to ``places`` decimals."""
    return lambda value: "-" if _number(value) is None else f"{value * 1000:,.{places}f}"


def _task(value: Any) -> str:
    """A service's task, ``generate`` where the row names none (a text-generation service)."""
    return "generate" if value is None else _plain(value)


def _kv(value: Any) -> str:
    """A KV cache's dtype; ``none`` for a service that keeps none (an encoder)."""
    return "none" if value is None else _plain(value)


#: One field a changed row names: (where in the row, label, how a value reads, unit after the new value).
Change = tuple[tuple[str, ...], str, "Callable[[Any], str]", str]

#: A training row's fields a changed row names, as its cell labels them.
_TRAINING_CHANGES: tuple[Change, ...] = (
    *(
        (path, label, _plain, "")
        for path, label in (
            (("model_id",), "model"),
            (("precision",), "precision"),
            (("training", "method"), "method"),
            (("training", "lora_rank"), "LoRA rank"),
            (("training", "framework"), "framework"),
            (("training", "optimizer"), "optimizer"),
            (("training", "sequence_length"), "sequence"),
            (("training", "global_batch_size"), "global batch"),
            (("tp",), "TP"),
            (("pp",), "PP"),
            (("replicas",), "DP"),
            (("training", "micro_batch_size"), "micro-batch"),
            (("training", "gradient_accumulation_steps"), "accumulation"),
            (("training", "zero_stage"), "ZeRO stage"),
            (("training", "gradient_checkpointing"), "checkpointing"),
            (("training", "hours"), "hours a run"),
            (("training", "usd_per_job"), "$ a run"),
            (("training", "usd_per_month"), "$/month"),
            (("training", "runs_per_month"), "runs a month"),
            (("training", "runs_after"), "runs after"),
            (("training", "starts_at_hours"), "starts at hour"),
            (("training", "paid_by"), "paid by"),
        )
    ),
    (("training", "paged_optimizer"), "optimizer states paged", _on_off, ""),
)

#: A service's (or a fixed machine's) fields a changed row names (newuser44 item 2): what the workload or the plan
#: chose (model, precision, layout, rate asked, SLOs, engine settings); its pool is said after them.
_SERVICE_CHANGES: tuple[Change, ...] = (
    (("model_id",), "model", _plain, ""),
    (("precision",), "precision", _plain, ""),
    (("task",), "task", _task, ""),
    (("tp",), "TP", _plain, ""),
    (("ep",), "EP", _plain, ""),
    (("attention_dp",), "attention DP", _plain, ""),
    (("pp",), "PP", _plain, ""),
    (("router", "routing"), "routing", _plain, ""),
    (("replicas",), "replicas", _plain, ""),
    (("gpus",), "GPUs", _plain, ""),
    (("load", "requests_per_s"), "rate asked", rate_text, " req/s"),
    (("load", "average_requests_per_s"), "average rate", rate_text, " req/s"),
    (("load", "replicas_at_average"), "replicas at the average", _plain, ""),
    (("batch_job", "requests_per_run"), "requests a run", _plain, ""),
    (("batch_job", "deadline_hours"), "deadline", _plain, " h"),
    (("batch_job", "runs_per_month"), "runs a month", _plain, ""),
    (("load", "slo", "ttft_p95_ms"), "SLO TTFT p95", _ms, " ms"),
    (("load", "slo", "tpot_ms"), "SLO TPOT", _ms, " ms"),
    (("load", "slo", "latency_p95_ms"), "SLO request latency p95", _ms, " ms"),
    (("serving", "engine"), "engine", _plain, ""),
    (("serving", "kv_cache_precision"), "KV", _kv, ""),
    (("max_model_len",), "max_model_len", _plain, ""),
    (("serving", "mem_fraction_static"), "mem_fraction_static", _fraction, ""),
    (("serving", "max_num_seqs"), "max_num_seqs", _plain, ""),
    (("router", "max_in_flight_per_replica"), "places a replica", _plain, ""),
    (("serving", "max_num_batched_tokens"), "max_num_batched_tokens", _plain, ""),
    (("serving", "nodes_down_tolerated"), "nodes_down_tolerated", _plain, ""),
    (("serving", "cached_prompt_share"), "cached prompt share", _plain, ""),
    (("machine", "engine"), "engine", _plain, ""),
    (("machine", "command"), "command", _plain, ""),
)

#: What a service's settings give (its capacity, latency at the load; its share of capacity follows from the rate and
#: the capacity): said where none of its settings moved, so a row listed reads why (the workload's constants changed).
_SERVICE_FIGURES: tuple[Change, ...] = (
    (("serving", "requests_per_s_per_replica_max"), "at most", _plain, " req/s a replica"),
    (("serving", "max_concurrency_at_max_model_len"), "max_model_len sequences a replica", _plain, ""),
    (("load", "ttft_p95_s"), "TTFT p95 at that load", _seconds_as_ms(0), " ms"),
    (("load", "tpot_s"), "TPOT at that load", _seconds_as_ms(1), " ms"),
    (("load", "latency_p95_s"), "request latency p95 at that load", _seconds_as_ms(0), " ms"),
    (("batch_job", "hours_per_run"), "a run", _plain, " h"),
    (("machine", "decode_tokens_per_s"), "decode", _plain, " tokens/s"),
    (("machine", "ttft_s"), "TTFT", _plain, " s"),
    (("machine", "weights_gib", "gpu"), "weights on GPU", _plain, " GiB"),
    (("machine", "weights_gib", "ram"), "weights in RAM", _plain, " GiB"),
    (("machine", "weights_gib", "nvme"), "weights on NVMe", _plain, " GiB"),
)


def _at(side: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = side
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _fields_moved(old: dict[str, Any], new: dict[str, Any], fields: tuple[Change, ...]) -> list[str]:
    """``label was → now unit`` for each of ``fields`` that differs (a split one's parts as ``1,024 / 512``)."""
    return [
        f"{label} {_each(was, text)} → {_each(now, text)}{unit}"
        for path, label, text, unit in fields
        if (was := _at(old, path)) != (now := _at(new, path))
    ]


def _whole_gpus(side: dict[str, Any]) -> bool:
    """Whether a row's GPUs are its TP x PP x replicas (none shared with another replica, as time-slicing shares)."""
    gpus, tp, pp, replicas = (_number(side.get(key)) for key in ("gpus", "tp", "pp", "replicas"))
    if gpus is None or tp is None or pp is None or replicas is None:
        return False
    return gpus == tp * pp * replicas


def _rates_served(
    old: dict[str, Any], new: dict[str, Any], fields: tuple[Change, ...]
) -> tuple[dict[str, Any], dict[str, Any], tuple[Change, ...]]:
    """``old``, ``new`` and ``fields`` with the rate said as served where a side is a capacity plan's (``served_at``).

    review29 item 2: a capacity plan's ``requests_per_s`` is served at its factor, not asked, so the marker read "rate
    asked 147.50 → 295.00 req/s" where the file asks 10 on both sides. There it is ``rate served`` (a cost plan's side
    serves the rate it asks), and the file's own rate is ``rate asked``, said where that moved.
    """
    if not any(isinstance(_at(side, ("load", "served_at")), dict) for side in (old, new)):
        return old, new, fields

    def asked(side: dict[str, Any]) -> dict[str, Any]:
        load = side.get("load")
        if not isinstance(load, dict):
            return side
        at = load.get("served_at")
        given = at.get("given_requests_per_s") if isinstance(at, dict) else load.get("requests_per_s")
        return side | {"load": load | {"asked_requests_per_s": given}}

    rate = ("load", "requests_per_s")
    said: list[Change] = []
    for field in fields:
        if field[0] == rate:
            said += [(rate, "rate served", *field[2:]), (("load", "asked_requests_per_s"), "rate asked", *field[2:])]
        elif field[0] == ("load", "average_requests_per_s"):  # the file's average times the factor, as the peak
            said.append((field[0], "average rate served", *field[2:]))
        else:
            said.append(field)
    return asked(old), asked(new), tuple(said)


def _command_moved(old: dict[str, Any], new: dict[str, Any]) -> str:
    """``command -np 3 → -np 2``: the words of a machine's engine line that differ, the rest said as ``…``.

    newuser95 item 2: both whole lines (each 200 characters of ``-ot`` patterns) were written, one flag apart. A flag's
    value that differs is said with its flag.
    """
    was, now = _at(old, ("machine", "command")), _at(new, ("machine", "command"))
    if not (isinstance(was, str) and isinstance(now, str)):
        return f"command {_plain(was)} → {_plain(now)}"
    a, b = was.split(" "), now.split(" ")
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    if 0 < head < min(len(a), len(b)) and a[head - 1].startswith("-"):  # the flag whose value differs
        head -= 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1

    def words(line: list[str]) -> str:
        kept = " ".join(line[head : len(line) - tail]) or "(none)"
        return ("… " if head else "") + kept + (" …" if tail else "")

    return f"command {words(a)} → {words(b)}"


def row_changes(old: dict[str, Any] | None, new: dict[str, Any] | None) -> str:
    """What moved between two sides of a deployment row, first in its new cell (bold).

    ``changed: global batch 128 → 256, accumulation 8 → 16`` for a training job (newuser43 item 11: a changed field
    was buried in two near-identical 300-character cells); ``changed: TP 4 → 2, replicas 3 → 8, rate asked 20.00 →
    30.00 req/s, pool a → b`` for a service (newuser44 item 2: a model swap or rate bump had no marker), ``moved to
    pool b (from a)`` where only its pool changed (a row otherwise identical on both sides read as listed for
    nothing), and what its settings give (capacity, latency at the load) where none of them moved. "" where either
    side is missing (added, removed) or the rows are the same.
    """
    if not (old and new) or old == new:
        return ""
    kinds = ["training job" if isinstance(side.get("training"), dict) else "service" for side in (old, new)]
    split = bool(old.get("parts") or new.get("parts"))
    if kinds[0] != kinds[1]:
        fields = tuple(f for f in _SERVICE_CHANGES if f[0][0] in ("model_id", "precision"))
        moved = [f"{kinds[0]} → {kinds[1]}", *_fields_moved(old, new, fields)]
    else:
        fields = _TRAINING_CHANGES if kinds[0] == "training job" else _SERVICE_CHANGES
        if split:  # the layout, each part with its pool, says TP, PP, replicas and pools at once
            fields = tuple(f for f in fields if f[0][0] not in ("tp", "pp", "replicas"))
        if not split and all(_whole_gpus(side) for side in (old, new)):  # its GPUs are TP x PP x replicas: said
            fields = tuple(f for f in fields if f[0] != ("gpus",))
        moved = _fields_moved(*_rates_served(old, new, fields)) if kinds[0] == "service" else _fields_moved(old, new, fields)
    if split:
        layouts = [
            deployment_layout(side) + ("" if side.get("parts") else f" in {_plain(side.get('pool'))}") for side in (old, new)
        ]
        moved += [f"layout {layouts[0]} → {layouts[1]}"] if layouts[0] != layouts[1] else []
        pool = None
    else:
        pool = (old.get("pool"), new.get("pool")) if old.get("pool") != new.get("pool") else None
    # the workload's inputs that moved and no setting above names (newuser73 item 5: routing free_place -> even
    # bought a replica, +$64,598/month, and the row said "replicas 4 → 5" alone): the cause first
    given = _inputs_moved(old, new, kinds[0]) if kinds[0] == kinds[1] else []
    if moved:
        moved = [_command_moved(old, new) if m.startswith("command ") else m for m in moved]
        if any(m.startswith("command ") for m in moved):  # its -c is among the words that moved, said once
            moved = [m for m in moved if not m.startswith("max_model_len ")]
        # newuser95 item 2: a machine's CPU swapped read "changed: command <line> → <line>" alone (-np 3 → -np 2 in
        # two 200-character lines), where decode went 33.32 → 57.36 tokens/s: what the machine's settings give follows
        timed = _fields_moved(old, new, tuple(f for f in _SERVICE_FIGURES if f[0][0] == "machine"))
        return (
            "changed: "
            + ", ".join(given + moved + ([f"pool {_plain(pool[0])} → {_plain(pool[1])}"] if pool else []))
            + (f"; giving {', '.join(timed)}" if timed else "")
        )
    figures = _fields_moved(old, new, _SERVICE_FIGURES) if kinds[0] == "service" else []
    if given:
        return (
            "changed: "
            + ", ".join(given + ([f"pool {_plain(pool[0])} → {_plain(pool[1])}"] if pool else []))
            + (f"; at the same engine settings: {', '.join(figures)}" if figures else "")
        )
    if pool:
        return f"moved to pool {_plain(pool[1])} (from {_plain(pool[0])})" + (
            f"; at the same settings {', '.join(figures)}" if figures else ""
        )
    if figures:
        return f"changed at the same settings: {', '.join(figures)}"
    # never a row listed for nothing it says: the inputs that differ (those a setting names too, where the setting
    # came out the same), else the parts of the record that differ, by name
    if given := _inputs_moved(old, new, kinds[0], every=True):
        return f"changed: {', '.join(given)}"
    keys = [key for key in sorted(set(old) | set(new)) if old.get(key) != new.get(key)]
    return f"changed: {', '.join(keys)}"


#: The workload fields a changed row's settings already name (:data:`_SERVICE_CHANGES`, :data:`_TRAINING_CHANGES`),
#: left out of the inputs it lists beside them (a rate bump said once, as "rate asked").
_INPUTS_SAID = {
    "service": frozenset(
        {
            "precision",
            "kv_cache_precision",
            "max_context_tokens",
            "requests_per_second",
            "average_requests_per_second",
            "requests_per_run",
            "deadline_hours",
            "runs_per_month",
            "slo.ttft_p95_ms",
            "slo.tpot_ms",
            "slo.latency_p95_ms",
            "engine",
            "mem_fraction_static",
            "max_num_seqs",
            "max_num_batched_tokens",
            "nodes_down_tolerated",
            "cached_prompt_share",
            "task",
            "routing",
        }
    ),
    "training job": frozenset({*TRAINING_SETTINGS, "runs_per_month", "global_batch_size", "run_after"}),
}


def _inputs_moved(old: dict[str, Any], new: dict[str, Any], kind: str, every: bool = False) -> list[str]:
    """``field was → now`` for each workload input of the deployment that differs (newuser73 item 5).

    Generic over the ``inference`` / ``training`` fields (:func:`~generator.workload.models.spec_fields`): a field
    one side leaves out takes its default. Those a setting of the row names already are left out unless ``every``.
    Nothing where either side's spec.json records no inputs (one written before they were).
    """
    was, now = old.get("inputs"), new.get("inputs")
    if not isinstance(was, dict) or not isinstance(now, dict):
        return []
    defaults = default_fields(TrainingSpec if kind == "training job" else InferenceSpec)
    said = frozenset() if every else _INPUTS_SAID.get(kind, frozenset())
    out = []
    for key in sorted(set(was) | set(now)):
        before, after = was.get(key, defaults.get(key)), now.get(key, defaults.get(key))
        if key not in said and _input_value(before) != _input_value(after):
            out.append(f"{key} {_input_text(before)} → {_input_text(after)}")
    return out


def _input_value(value: Any) -> Any:
    """An input as compared: a list and a tuple alike (spec.json writes a tuple as a list), 4 and 4.0 alike."""
    return tuple(value) if isinstance(value, list | tuple) else value


def _input_text(value: Any) -> str:
    """An input as a changed row says it: ``unset`` for none, a list comma-joined, a number as given (``0.7``)."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_input_text(v) for v in value) + "]"
    if isinstance(value, int | float):
        return f"{value:,g}" if abs(value) < 1e15 else f"{value:g}"
    return one_line(str(value))


#: How a training job's servers paid by the month are had, as a deployment cell says it.
_PAID_BY = {
    "bought": "servers bought",
    "owned": "owned servers' running cost",
    "owned-runs": RUNS_ENERGY_PAID,
    "month": "servers rented by the month",
}


def _month_text(training: dict[str, Any]) -> str:
    """``$603.49/month of owned servers' running cost, paid whatever runs``: what a job on monthly servers costs."""
    share = "its share of " if training.get("share") else ""
    paid = _PAID_BY.get(str(training.get("paid_by")), "servers")
    when = PAID_AS_RUNS if training.get("paid_by") == "owned-runs" else "paid whatever runs"
    return f"{share}${fmt_cell(training['usd_per_month'])}/month of {paid}, {when}"
