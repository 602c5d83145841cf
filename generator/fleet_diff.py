"""``specgen diff``: what a change to a workload does to the fleet, for a pull request."""

from __future__ import annotations

import json
import math
import os
import re
from typing import TYPE_CHECKING, Any, TypeGuard

import click

from generator import catalog
from generator.capacity_diff import capacity_change, capacity_change_lines, rate_said, served_at
from generator.circuit_diff import check_circuits, load_text, rack_load, supply_change, supply_lines
from generator.errors import InputError, Location, SpecShapeError, UnreadableError, one_line
from generator.input_files import MAX_SPEC_BYTES, DuplicateKeyError, linked_inside, read_text_limited, short, unique_keys
from generator.json_numbers import finite_float, refuse_constant, unreadable_number
from generator.json_positions import joined_field, line_column, locate
from generator.planner.capex_scope import capex_excludes_text
from generator.planner.naming import MAX_POOL_NAME
from generator.planner.narrower import NARROWER_LEAD
from generator.planner.plan import (
    BATCH_RUN_KEYS,
    PAID_AS_RUNS,
    PAID_WHETHER_RUN,
    RUNS_ENERGY_BASIS,
    RUNS_ENERGY_PAID,
    RUNS_ONLY_TOTALS,
    runs_only_figures,
)
from generator.render.md_escape import md_code, md_text
from generator.sizing.constants import BOUGHT_SERVER_CONSTANTS, OWNED_SERVER_CONSTANTS, Constants
from generator.spec_figures import MAX_FIGURE, check_count, check_figure
from generator.spec_layout import check_layout_gpus
from generator.spec_stamp import stamp_note
from generator.units import HOURS_PER_MONTH, dollars_text, money_text, shows_zero, signed_money_text
from generator.wall_circuit_diff import check_wall_circuit, wall_circuit_change, wall_circuit_lines
from generator.workload.models import InferenceSpec, TrainingSpec, default_fields

if TYPE_CHECKING:
    from collections.abc import Callable

    from generator.planner.plan import Plan
    from generator.workload.models import Workload

FIELDS = ("gpus", "nodes", "racks", "power_w", "usd_per_month")
#: The engine's constants at their defaults: a plan's ``constants`` holds the workload's overrides of them alone.
DEFAULT_CONSTANTS: dict[str, float] = Constants()._asdict()
CONSTANT_NAMES = frozenset(DEFAULT_CONSTANTS)
#: Totals a plan has only with rented training jobs (each priced per run, not per month).
TRAINING_FIELDS = ("training_usd_per_job", "training_usd_per_month")
#: Totals of servers bought (their price, and their energy and colocation a month): shown where either side buys.
OWNED_FIELDS = ("capex_usd", "opex_usd_per_month")
#: The month with the pools that autoscale at their services' average rates (a plan without them: its month).
MONTH_FLOOR = "usd_per_month_floor"


def load_plan_dict(path: str) -> dict[str, Any]:
    """A plan from a rendered ``spec.json`` or, for anything else, by planning the workload file."""
    if os.path.isdir(path) and os.path.isfile(os.path.join(path, "spec.json")):  # a render tree (fuzz25 L5)
        raise InputError(f"{path} is a directory (a render tree?): give its spec.json, {os.path.join(path, 'spec.json')}")
    tree = path if os.path.isdir(path) else os.path.dirname(path) if os.path.basename(path) == "spec.json" else None
    if (tree is not None and not os.path.exists(path)) or tree == path:
        # hostile78 item 11: a tree of several workloads (its root's manifest) holds a spec.json a workload, none at its root
        inside = _workload_specs(tree or ".") if os.path.isfile(os.path.join(tree or ".", ".specgen-manifest")) else []
        if inside:
            shown = ", ".join(inside[:3]) + (f" and {len(inside) - 3} more" if len(inside) > 3 else "")
            raise InputError(
                f"{path}: {tree or '.'} is the render tree of several workloads, with a spec.json each and none at its "
                f"root: give one workload's ({shown})"
            )
    if path.endswith(".json"):
        linked_inside(path)
        try:
            text = read_text_limited(path, MAX_SPEC_BYTES, "spec.json")
        except InputError as exc:  # not UTF-8, too large, unreadable: the file could not be read (fix146 item 3)
            raise UnreadableError(exc.message, exc.location) from None
        return plan_from_spec(text, path, say_stamp=True)
    from generator.api import plan_file

    loaded, plan = plan_file(path)
    return deployed_dict(plan, loaded.workload)


def _workload_specs(tree: str) -> list[str]:
    """The ``spec.json`` of each workload's folder in ``tree`` (a render of several files), by name."""
    try:
        names = sorted(os.listdir(tree))
    except OSError:
        return []
    return [os.path.join(tree, name, "spec.json") for name in names if os.path.isfile(os.path.join(tree, name, "spec.json"))]


def deployed_dict(plan: Plan, workload: Workload, *, alone: bool = True) -> dict[str, Any]:
    """A workload's plan as ``spec.json`` holds it: as deployed (:func:`generator.render.deployed`, with ``alone``).

    newuser31 item 1: the plan alone lacked the findings a deployment adds (Karpenter, EKS, GKE, list prices, Cluster
    API, GPU sharing), so a diff of two workloads missed the warnings a diff of their two rendered spec.json says.
    ``zone``: the one zone GKE node pools run in (``nodeLocations``), where the workload places them in one; the
    spec.json does not record it (newuser31 item 14: a zone move read "No change to the fleet").
    """
    from generator.render import deployed
    from generator.workload.gke_zone import pool_zone

    out = deployed(plan, workload, alone=alone).to_dict()
    zone = pool_zone(workload.kubernetes) if out.get("provider") == "gcp" else None
    return out | ({"zone": zone} if zone else {})


def plan_from_spec(text: str, path: str, *, say_stamp: bool = False) -> dict[str, Any]:
    """The plan of a ``spec.json``'s ``text`` (``path`` names it in errors), checked for what the diff reads.

    ``say_stamp``: a line on stderr where another specgen (or none) wrote it (:func:`generator.spec_stamp.stamp_note`).
    """
    if len(text) > MAX_SPEC_BYTES:  # as read_text_limited refuses it from a file
        raise UnreadableError(f"{path}: more than the {MAX_SPEC_BYTES:,} bytes specgen reads of a spec.json")
    # hostile79 item 10: a byte-order mark (PowerShell's UTF-8) is read past, as a workload YAML's is
    bom = 1 if text.startswith("\ufeff") else 0
    body = text[bom:]
    try:
        data = json.loads(body, parse_constant=refuse_constant, parse_float=finite_float, object_pairs_hook=unique_keys)
    except DuplicateKeyError as exc:  # hostile82 item 2: Python's json kept the last of two keys silently
        line, column = _duplicate_key_at(body)
        raise UnreadableError(
            f"cannot read spec.json: key {short(exc.key, 60)} is given twice in one object (specgen writes each once; "
            "a JSON reader keeps one of the two, so one value would be dropped without a word): keep one",
            _spec_location(path, bom, line, column),
        ) from None
    except json.JSONDecodeError as exc:  # newuser75 item 10: located as every YAML error is, file:line:col
        where = _spec_location(path, bom, exc.lineno, exc.colno)
        raise UnreadableError(f"cannot read spec.json: {_json_problem(exc, body)}", where) from None
    except ValueError as exc:  # a NaN, an Infinity, 1e400 or an integer too long: at its field (hostile79 item 10)
        found = unreadable_number(body)
        if found is None:
            raise UnreadableError(f"{path}: cannot read spec.json: {short(str(exc), 200)}") from None
        number_field, said, line, column = found
        raise UnreadableError(
            f"cannot read spec.json: {short(number_field, 200)}: {said}", _spec_location(path, bom, line, column)
        ) from None
    except RecursionError:  # newuser88: placed where the nesting goes deepest, as every other refusal is
        at, depth = _deepest_at(body)
        raise UnreadableError(
            f"cannot read spec.json: it is nested too deeply ({depth:,} lists or objects inside each other here; "
            "specgen writes a few)",
            _spec_location(path, bom, *line_column(body, at)),
        ) from None
    if _SURROGATE_ESCAPE.search(body) and (field := _unpaired_surrogate(data)) is not None:
        raise UnreadableError(
            f"cannot read spec.json: {'the document' if not field else short(field, 200)} holds an unpaired surrogate escape "
            "(\\ud800-\\udfff alone), which no UTF-8 text can hold (specgen writes none)",
            _spec_location(path, bom, *locate(body, field)),
        )
    if not isinstance(data, dict) or "plan" not in data:
        raise InputError("not a specgen spec.json (no 'plan')", _spec_location(path, bom, *locate(body, "")))
    try:
        _check_plan(path, data["plan"])
    except SpecShapeError as exc:
        raise _located(exc, path, body, bom) from None
    if say_stamp and (note := stamp_note(data, path)) is not None:
        click.echo(note, err=True)
    return dict(data["plan"])


#: A JSON text or one bracket: what :func:`_deepest_at` steps over (a bracket inside a text is no nesting).
_TEXT_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _deepest_at(body: str) -> tuple[int, int]:
    """The offset of the first bracket that opens the deepest nesting of ``body`` (a JSON text), and that depth."""
    depth, deepest, at = 0, 0, 0
    for match in _TEXT_OR_BRACKET.finditer(body):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > deepest:
                deepest, at = depth, match.start()
        elif token in "]}":
            depth -= 1
    return at, deepest


#: A JSON escape of a surrogate: where the text has none, no string it holds has one.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _unpaired_surrogate(data: Any) -> str | None:
    """The field of the first key or text holding an unpaired surrogate (a lone escape of one is valid JSON), else None.

    hostile84: such a text, echoed, stopped the diff with a UnicodeEncodeError traceback as it was printed. A stack,
    not recursion: the document may be nested as deep as ``json`` reads.
    """
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str) and _SURROGATE.search(value):
            return path
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, item in reversed(list(items)):
            if isinstance(key, str) and _SURROGATE.search(key):
                return path
            stack.append((joined_field(path, key), item))
    return None


def _located(exc: SpecShapeError, path: str, body: str, bom: int) -> InputError:
    """A shape error of a spec.json at the line and column of the value it names (its object, where a key is missing).

    hostile84 item 1: the ~45 checks of :func:`_check_plan` named the file and the field, never the line. Each raises
    :class:`~generator.errors.SpecShapeError` with its field's path (``plan.deployments[0].split[1].tp``); the value's
    place is read off the text (:func:`generator.json_positions.locate`) here, once, rather than by each check.
    """
    return InputError(exc.problem, _spec_location(path, bom, *locate(body, exc.field)))


def _spec_location(path: str, bom: int, line: int, column: int) -> Location:
    """``path``'s place of a line and column in its text read past a byte-order mark of ``bom`` characters."""
    return Location(path, line, column + (bom if line == 1 else 0))


def _json_problem(exc: json.JSONDecodeError, text: str) -> str:
    """The JSON parser's complaint in a sentence, and where the text ends inside a value, that it may be cut short."""
    problem = exc.msg.removesuffix(" at").replace(" starting", " starting here")
    problem = problem[:1].lower() + problem[1:]
    if exc.msg.startswith("Unterminated string") or exc.pos >= len(text.rstrip()):
        problem += " (the file ends inside it: cut short?)"
    return problem


def drift_replacement_lines(committed: dict[str, str], rendered: dict[str, str]) -> list[str]:
    """``render --check``: one plain line per pool the committed tree's ``spec.json`` has and the rendered one replaces.

    ``committed`` and ``rendered`` map a tree's relative paths to their text; each ``spec.json`` (``spec.json`` or
    ``<workload>/spec.json``) in both is compared. A committed one specgen cannot read adds no line (it may hold
    anything; the patch shows it); every value is printed as one line of plain text.
    """
    lines = []
    for rel in sorted(set(committed) & set(rendered)):
        if rel.rsplit("/", 1)[-1] != "spec.json" or committed[rel] == rendered[rel]:
            continue
        try:
            old, new = plan_from_spec(committed[rel], rel), plan_from_spec(rendered[rel], rel)
        except InputError:
            continue
        for entry in pool_replacements(old, new):
            lines.append(f"specgen: {one_line(rel)}: node pool replaced, not resized: {replacement_text(entry, plain=True)}")
    return lines


def _duplicate_key_at(text: str) -> tuple[int, int]:
    """Line and column (1-based) of the repeated key ``json.loads`` met in ``text`` (valid JSON but for the repeat).

    One pass over the text with a stack of the objects open (the keys each has named so far, and where it first named
    one again) and of the arrays open, strings read whole, so a key's name inside a string value or in another object is
    not taken for the repeat. ``json.loads`` builds an object when it closes, so the repeat it meets is the first one of
    the first object to close that has one; that object's first repeat is returned.
    """
    stack: list[tuple[set[str], list[int]] | None] = []  # an object's keys and its first repeat's offset; None: an array
    at = 0
    while at < len(text):
        char = text[at]
        if char == '"':
            match = _JSON_STRING.match(text, at)
            end = match.end() if match else len(text)
            top = stack[-1] if stack else None
            if top is not None and _JSON_COLON.match(text, end):
                name = json.loads(text[at:end])
                if name in top[0] and not top[1]:
                    top[1].append(at)
                top[0].add(name)
            at = end
            continue
        if char == "{":
            stack.append((set(), []))
        elif char == "[":
            stack.append(None)
        elif char in "]}" and stack:
            closed = stack.pop()
            if closed is not None and closed[1]:
                repeat = closed[1][0]
                return text.count("\n", 0, repeat) + 1, repeat - text.rfind("\n", 0, repeat)
        at += 1
    return 1, 1  # not reached for a repeat json.loads found; the file's start, located all the same


#: A JSON string, and the colon after an object's key.
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_JSON_COLON = re.compile(r"\s*:")


#: What ``diff_plans`` reads from a plan: field -> the JSON type it must have (None: any).
_NUMBER = (int, float)
_PLAN_FIELDS: dict[str, tuple[type, ...] | None] = {"totals": (dict,), "pools": (list,), "deployments": (list,)}
#: The totals every plan has that the diff compares (``usd_per_month`` is null where a pool is unpriced).
_TOTALS_FIELDS: dict[str, tuple[type, ...] | None] = dict.fromkeys(FIELDS)
#: Of those, the figures every plan has (a number, never null).
_TOTALS_FIGURES = ("gpus", "nodes", "racks", "power_w")
#: What the diff reads of a rack (``Plan.racks``) and of each pool's nodes in it.
_RACK_FIELDS: dict[str, tuple[type, ...] | None] = {"id": (str,), "pools": (list,), "power_w": _NUMBER}
_RACK_POOL_FIELDS: dict[str, tuple[type, ...] | None] = {"pool": (str,), "nodes": _NUMBER}
_POOL_FIELDS: dict[str, tuple[type, ...] | None] = {
    "name": (str,),
    "node": (dict,),
    "nodes": _NUMBER,
    "power_w": _NUMBER,
    "usd_per_hour": None,
}
_NODE_FIELDS: dict[str, tuple[type, ...] | None] = {"gpu_id": (str,), "gpus": _NUMBER}
_DEPLOYMENT_FIELDS: dict[str, tuple[type, ...] | None] = {
    "name": (str,),
    **dict.fromkeys(("model_id", "precision", "pool")),
    **dict.fromkeys(("tp", "pp", "replicas", "gpus"), _NUMBER),
}
#: What the diff echoes from each part of a split deployment beside its layout: the engine settings it is sized with.
_ECHOED_PART_SETTINGS = (
    "requests_per_s_per_replica_max",
    "max_num_seqs",
    "max_num_batched_tokens",
    "mem_fraction_static",
    "ttft_p95_s",
    "tpot_s",
)
#: What ``diff_plans`` reads from each part of a deployment split over two server kinds.
_PART_FIELDS: dict[str, tuple[type, ...] | None] = {"pool": None, **dict.fromkeys(("tp", "pp", "replicas"), _NUMBER)}
#: Of the fields read as numbers, those every plan writes as whole numbers (the plan dataclasses' ints).
_COUNTS = frozenset(("gpus", "nodes", "replicas"))
_TYPE_NAMES = {dict: "an object", list: "a list", str: "a string", int: "a number"}


def _require(path: str, where: str, record: Any, fields: dict[str, tuple[type, ...] | None]) -> None:
    """Raise InputError naming the file and the field when ``record`` lacks one of ``fields`` or has the wrong type."""
    if not isinstance(record, dict):
        # hostile89: JSON's name of what is there, not Python's ("got NoneType" of a null)
        kind = "null" if record is None else "a boolean" if isinstance(record, bool) else _TYPE_NAMES.get(type(record))
        raise SpecShapeError(path, where, f"must be an object, got {kind or 'a number'}")
    for key, types in fields.items():
        if key not in record:
            raise SpecShapeError(path, where, f"has no '{key}'")
        value = record[key]
        if types is not None and (isinstance(value, bool) or not isinstance(value, types)):
            raise SpecShapeError(path, f"{where}.{key}", f"must be {_TYPE_NAMES[types[0]]}, got {short(value)}")
        if types is _NUMBER:  # hostile86: a count (GPUs, nodes, replicas) is a whole number
            (check_count if key in _COUNTS else check_figure)(path, f"{where}.{key}", value)


#: The providers a plan is made for (``plan.provider``).
PROVIDERS = ("aws", "azure", "baremetal", "gcp")


def _unique(path: str, where: str, name: str, seen: set[str]) -> None:
    """Raise InputError where a pool's or deployment's name is given again (``seen``: those before it, kept here).

    review68 item 3: a pool listed twice read as "No change to the fleet".
    """
    if name in seen:
        raise SpecShapeError(path, where, f"{short(name)} is given twice")
    seen.add(name)


#: The longest text a diff echoes from a spec.json (an id, a precision, a pool name).
_MAX_ECHOED_CHARS = 200


def _check_echoed(path: str, where: str, value: Any) -> None:
    """Raise InputError unless ``value``, which the diff prints, is a scalar: a number, a short string, null or a bool."""
    if (isinstance(value, str) and len(value) <= _MAX_ECHOED_CHARS) or value is None or isinstance(value, int | float):
        return
    raise SpecShapeError(path, where, f"must be a number or a short text, got {short(value)}")


def _check_text(path: str, where: str, value: Any, example: str) -> None:
    """Raise InputError unless ``value`` is null or a text of 1 to 200 characters (as ``example``), as specgen writes it.

    hostile90: a region of true or 5 read as no change ("No change to the fleet" beside us-central1), '' as a move to
    nowhere ("us-central1 → ."); a model of true or a precision of 5 as a change to "True" / "5".
    """
    if value is not None and not (isinstance(value, str) and 0 < len(value) <= _MAX_ECHOED_CHARS):
        raise SpecShapeError(
            path, where, f"must be a text of 1 to {_MAX_ECHOED_CHARS} characters (as {example!r}) or null, got {short(value)}"
        )


def _check_node_names(path: str, where: str, node: dict[str, Any]) -> None:
    """Raise InputError unless a pool node's ``platform_id`` and ``provider``, where given, are as specgen writes them.

    They are what a replaced pool's hardware is told by: a short text, and one of :data:`PROVIDERS`.
    hostile90: true, 1.5 or '' as the platform read as other hardware ("h200-sxm-141gb on True", its servers drained
    and bought again); a provider of 5 as no change.
    """
    platform = node.get("platform_id", "-")
    if not (isinstance(platform, str) and 0 < len(platform) <= _MAX_ECHOED_CHARS):
        said = "null" if platform is None else short(platform)
        raise SpecShapeError(
            path, f"{where}.platform_id", f"must be a text of 1 to {_MAX_ECHOED_CHARS} characters (a platform id), got {said}"
        )
    provider = node.get("provider", PROVIDERS[0])
    if provider not in PROVIDERS:
        said = "null" if provider is None else short(provider)
        raise SpecShapeError(path, f"{where}.provider", f"must be one of {', '.join(PROVIDERS)}, got {said}")


#: The context a deployment is sized for (vLLM's ``max_model_len``), as ``details`` names it.
CONTEXT = "context_tokens"
#: The sequences at that context a service's replica holds in its KV cache, as ``details`` names it.
FULL_CONTEXT_SEQUENCES = "max_concurrency_per_replica"
#: The KV cache bytes a token of a service takes, as ``details`` names it: 0 for an encoder, which keeps none.
KV_BYTES_PER_TOKEN = "kv_cache_bytes_per_token"
#: A training job's settings the diff shows (its method, framework, optimizer and step), as ``details`` names them.
TRAINING_SETTINGS = (
    "method",
    "framework",
    "optimizer",
    "lora_rank",
    "sequence_length",
    "micro_batch_size",
    "gradient_accumulation_steps",
    "data_parallel",
    "zero_stage",
    "gradient_checkpointing",
)

#: What the diff echoes from a deployment's details (a service's engine settings, a fixed machine's speed).
_ECHOED_DETAILS = (
    "hours",
    "usd_per_job",
    "max_num_seqs",
    "max_num_batched_tokens",
    "requests_per_s_per_replica_max",
    "decode_tokens_per_s",
    "ttft_s",
    "requests_per_s",
    "ttft_p95_s",
    "tpot_s",
    "latency_p95_s",
    "slo_ttft_p95_ms",
    "slo_tpot_ms",
    "slo_latency_p95_ms",
    "task",
    "serving_engine",
    "mem_fraction_static",
    "nodes_down_tolerated",
    "cached_prompt_share",
    "runs_after",
    "starts_at_hours",
    # a service's context (max_model_len) and the sequences at that context a replica holds (newuser31 item 6)
    CONTEXT,
    FULL_CONTEXT_SEQUENCES,
    # a training job's method and step (newuser31 item 7)
    *TRAINING_SETTINGS,
)


#: Of those, the ones specgen writes as a text (or null), and an example of each.
_TEXT_DETAILS = (
    ("task", "generate"),
    ("serving_engine", "vllm"),
    ("method", "lora"),
    ("framework", "deepspeed"),
    ("optimizer", "adamw"),
    ("gradient_checkpointing", "full"),
)


def _check_plan(path: str, plan: Any) -> None:
    """Check that ``plan`` has every field ``diff_plans`` and ``markdown_diff`` read, and that what they echo is small."""
    _require(path, "plan", plan, _PLAN_FIELDS)
    # fuzz31 item 17: totals without their figures read as every total gone, and "No change to the fleet"
    _require(path, "plan.totals", plan["totals"], _TOTALS_FIELDS)
    if not isinstance(plan.get("provider"), str | None):  # fuzz31 item 17: a provider of 5 was echoed as one
        raise SpecShapeError(path, "plan.provider", f"must be a string, got {short(plan['provider'])}")
    _check_echoed(path, "plan.provider", plan.get("provider"))
    # review68 item 3: "mars" was said as a change of provider; newuser75 item 9: null as "baremetal -> None"
    if "provider" in plan and plan["provider"] not in PROVIDERS:
        raise SpecShapeError(
            path,
            "plan.provider",
            f"must be one of {', '.join(PROVIDERS)}, got {'null' if plan['provider'] is None else short(plan['provider'])}",
        )
    _check_text(path, "plan.region", plan.get("region"), "us-central1")
    if not isinstance(plan.get("workload", ""), str):  # newuser75 item 9: 5 was read as no workload name
        raise SpecShapeError(path, "plan.workload", f"must be a string, got {short(plan['workload'])}")
    _check_echoed(path, "plan.workload", plan.get("workload"))
    _check_text(path, "plan.zone", plan.get("zone"), "us-central1-a")
    # hostile84 item 1: capex "x" or an opex of [1] read as no change (the buy-or-rent comparison skips what is no figure)
    for key in (*FIELDS, *TRAINING_FIELDS, MONTH_FLOOR, *OWNED_FIELDS):
        if plan["totals"].get(key) is not None or key in _TOTALS_FIGURES:
            check_figure(path, f"plan.totals.{key}", plan["totals"][key])
    if "constants" in plan:  # the workload's constants: the diff names those that changed (newuser39 item 10)
        _require(path, "plan", plan, {"constants": (dict,)})
        for key in CONSTANT_NAMES & set(plan["constants"]):
            check_figure(path, f"plan.constants.{key}", plan["constants"][key])
    pool_names: set[str] = set()
    for i, pool in enumerate(plan["pools"]):
        _require(path, f"plan.pools[{i}]", pool, _POOL_FIELDS)
        _unique(path, f"plan.pools[{i}].name", pool["name"], pool_names)
        if not _POOL_NAME.fullmatch(pool["name"]):  # newuser75 item 9: "../../evil", 10,000 characters, were echoed
            raise SpecShapeError(
                path, f"plan.pools[{i}].name", f"must be 1 to {MAX_POOL_NAME} of a-z, 0-9 and _, got {short(pool['name'])}"
            )
        _check_labels(path, f"plan.pools[{i}].labels", pool.get("labels"))
        _require(path, f"plan.pools[{i}].node", pool["node"], _NODE_FIELDS)
        _check_echoed(path, f"plan.pools[{i}].usd_per_hour", pool["usd_per_hour"])
        _check_node_names(path, f"plan.pools[{i}].node", pool["node"])
        # what counts a pool as running only for its runs and its month (review69 item 9: "x" read as none)
        for key in ("busy_hours_per_month", *OWNED_FIELDS):  # hostile84 item 1: a pool's capex and opex unchecked
            if pool.get(key) is not None:
                check_figure(path, f"plan.pools[{i}].{key}", pool[key])
        sharing = pool.get("gpu_sharing")  # hostile84: [1], true and 5 were said as a change of GPU sharing
        if sharing is not None and not (isinstance(sharing, str) and 0 < len(sharing) <= _MAX_ECHOED_CHARS):
            raise SpecShapeError(
                path,
                f"plan.pools[{i}].gpu_sharing",
                f"must be a text of 1 to {_MAX_ECHOED_CHARS} characters (as 'mig 3g.40gb') or null, got {short(sharing)}",
            )
        _check_owned_nodes(path, f"plan.pools[{i}]", pool)
        _check_pool_capacity(path, f"plan.pools[{i}]", pool)
        _check_owned_hosts(path, f"plan.pools[{i}].owned_hosts", pool.get("owned_hosts"))
        if not isinstance(pool.get("per_job", False), bool):
            raise SpecShapeError(path, f"plan.pools[{i}].per_job", f"must be true or false, got {short(pool['per_job'])}")
    if "racks" in plan:  # a spec.json from before the rack list has none (test_rack_layout)
        _require(path, "plan", plan, {"racks": (list,)})
        for i, rack in enumerate(plan["racks"]):
            _require(path, f"plan.racks[{i}]", rack, _RACK_FIELDS)
            _check_echoed(path, f"plan.racks[{i}].id", rack["id"])
            for j, share in enumerate(rack["pools"]):
                _require(path, f"plan.racks[{i}].pools[{j}]", share, _RACK_POOL_FIELDS)
                _named_pool(path, f"plan.racks[{i}].pools[{j}].pool", share["pool"], pool_names)
        check_circuits(path, plan)
    check_wall_circuit(path, plan)
    deployment_names: set[str] = set()
    pools = {pool["name"]: pool for pool in plan["pools"]}
    for i, dep in enumerate(plan["deployments"]):
        where = f"plan.deployments[{i}]"
        _require(path, where, dep, _DEPLOYMENT_FIELDS)
        # hostile78 item 12: without its details every setting read as changed to nothing ("KV fp8 -> none")
        _require(path, where, dep, {"details": (dict,)})
        _unique(path, f"{where}.name", dep["name"], deployment_names)
        for key in ("tp", "pp"):
            _check_degree(path, f"{where}.{key}", dep[key])
        for key in (*_DEPLOYMENT_FIELDS, "kv_cache_precision"):
            _check_echoed(path, f"{where}.{key}", dep.get(key))
        for key, example in (("model_id", "org/name"), ("precision", "fp8"), ("kv_cache_precision", "fp8")):
            _check_text(path, f"{where}.{key}", dep.get(key), example)
        if dep["pool"] is not None:
            _named_pool(path, f"{where}.pool", dep["pool"], pool_names)
        details = dep.get("details")
        if isinstance(details, dict):
            for key in _ECHOED_DETAILS:
                _check_echoed(path, f"{where}.details.{key}", details.get(key))
            for key, example in _TEXT_DETAILS:  # hostile90: true or 7 was said as a change of engine or task
                _check_text(path, f"{where}.details.{key}", details.get(key), example)
            for key in BATCH_RUN_KEYS:  # a batch job's run, which the diff compares as figures (review68 item 3)
                if details.get(key) is not None:
                    check_figure(path, f"{where}.details.{key}", details[key])
            router = details.get("router")
            if router is not None:  # the router a service is sized behind, which a changed row names (newuser73 14)
                _require(path, f"{where}.details", details, {"router": (dict,)})
                for key in ("routing", "max_in_flight_per_replica"):
                    value = router.get(key)
                    for one in value if isinstance(value, list) else [value]:
                        _check_echoed(path, f"{where}.details.router.{key}", one)
            inputs = details.get("inputs")
            if inputs is not None:  # the workload's inputs, which a changed row names (newuser73 item 5)
                _require(path, f"{where}.details", details, {"inputs": (dict,)})
                for key, value in inputs.items():
                    for one in value if isinstance(value, list) else [value]:
                        _check_echoed(path, f"{where}.details.inputs.{short(key)}", one)
            offload = details.get("offload")
            if isinstance(offload, dict) and isinstance(offload.get("bytes"), dict):
                for key, value in offload["bytes"].items():
                    _check_echoed(path, f"{where}.details.offload.bytes.{key}", value)
        if "split" in dep:
            _require(path, where, dep, {"split": (list,)})
            for j, part in enumerate(dep["split"]):
                _require(path, f"{where}.split[{j}]", part, _PART_FIELDS)
                for key in ("tp", "pp"):
                    _check_degree(path, f"{where}.split[{j}].{key}", part[key])
                for key in (*_PART_FIELDS, *_ECHOED_PART_SETTINGS):
                    _check_echoed(path, f"{where}.split[{j}].{key}", part.get(key))
                if part["pool"] is not None:
                    _named_pool(path, f"{where}.split[{j}].pool", part["pool"], pool_names)
        check_layout_gpus(path, where, dep, pools)  # fix162 item 2: GPUs the layout does not hold were compared
    for i, pool in enumerate(plan["pools"]):
        _check_pool_deployments(path, f"plan.pools[{i}].deployments", pool.get("deployments"), deployment_names)
    _check_findings(path, plan)
    _check_totals(path, plan)


def _check_pool_deployments(path: str, where: str, names: Any, deployment_names: set[str]) -> None:
    """Raise InputError unless a pool's ``deployments`` (where given) is a list of names ``plan.deployments`` has.

    hostile84 item 1: read unchecked (which layout a deployment alone on its pool runs, for why a price moved it): "x",
    5 or names of no deployment were taken as a pool shared, or as a deployment alone on another's pool.
    """
    if names is None:
        return
    if not isinstance(names, list):
        raise SpecShapeError(path, where, f"must be a list of deployment names, got {short(names)}")
    for k, name in enumerate(names):
        _check_echoed(path, f"{where}[{k}]", name)
        if name not in deployment_names:
            raise SpecShapeError(path, f"{where}[{k}]", f"names {short(name)}, which 'plan.deployments' does not have")


#: The levels a finding has (:data:`generator.planner.plan.Level`).
_LEVELS = ("info", "warning", "error")


def _check_findings(path: str, plan: dict[str, Any]) -> None:
    """Raise InputError unless ``plan.findings`` (where given) is a list of findings as the planner writes them.

    hostile84 item 1: read leniently, so "abc", 5 or a finding whose level is 5 were dropped without a word, and the
    diff said no new warning where the file held one it could not read.
    """
    if "findings" not in plan:
        return
    findings = plan["findings"]
    if not isinstance(findings, list):
        raise SpecShapeError(path, "plan.findings", f"must be a list, got {short(findings)}")
    for k, finding in enumerate(findings):
        where = f"plan.findings[{k}]"
        _require(path, where, finding, {"level": (str,), "code": (str,), "message": (str,)})
        if finding["level"] not in _LEVELS:
            raise SpecShapeError(path, f"{where}.level", f"must be one of {', '.join(_LEVELS)}, got {short(finding['level'])}")
        _check_echoed(path, f"{where}.code", finding["code"])
        if not isinstance(finding.get("path", ""), str):
            raise SpecShapeError(path, f"{where}.path", f"must be a string, got {short(finding['path'])}")


#: A pool's name (:mod:`generator.planner.naming`): an Ansible group and a Terraform key, the stem of host names.
_POOL_NAME = re.compile(f"[a-z0-9_]{{1,{MAX_POOL_NAME}}}")


def _check_pool_capacity(path: str, where: str, pool: dict[str, Any]) -> None:
    """Raise InputError unless a pool's ``capacity_type``, ``min_nodes`` and ``root_disk_size`` are as the planner writes them.

    hostile83: a ``capacity_type`` of 1 was said as a move "from on-demand to 1 capacity", and a ``root_disk_size`` of
    ``"x"`` or a ``min_nodes`` above the pool's nodes counted as a change of the fleet (``--exit-code`` 6), unsaid.
    """
    capacity = pool.get("capacity_type")
    if capacity is not None and capacity not in ("spot", "on-demand"):
        raise SpecShapeError(path, f"{where}.capacity_type", f"must be spot or on-demand, got {short(capacity)}")
    for key in ("min_nodes", "root_disk_size"):
        if pool.get(key) is not None:
            check_figure(path, f"{where}.{key}", pool[key])
    if pool.get("min_nodes") is not None and pool["min_nodes"] > pool["nodes"]:
        raise SpecShapeError(
            path, f"{where}.min_nodes", f"is {short(pool['min_nodes'])}, more than its {short(pool['nodes'])} nodes"
        )


def _check_owned_nodes(path: str, where: str, pool: dict[str, Any]) -> None:
    """Raise InputError unless a pool's ``owned_nodes`` (where given) is a whole number from 0 to its ``nodes``.

    hostile79 item 3: "abc", [1] or {} made the buy-or-rent comparison raise a traceback; -3, 1.5 and "4" were taken.
    """
    value = pool.get("owned_nodes")
    if value is None:
        return
    whole = isinstance(value, int) and not isinstance(value, bool)
    if not whole or not 0 <= value <= pool["nodes"]:
        raise SpecShapeError(
            path,
            f"{where}.owned_nodes",
            f"must be a whole number from 0 to the pool's 'nodes' ({fmt_cell(pool['nodes'])}), got {short(value)}",
        )


def _check_degree(path: str, where: str, value: Any) -> None:
    """Raise InputError unless a layout's ``tp`` or ``pp`` is a whole number of at least 1, as every plan writes it.

    hostile81 item 1: ``tp: 0`` and ``pp: 2.5`` passed the figure check (0 to 10^12) and were echoed as ``TP0xPP1``.
    """
    if not (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
        raise SpecShapeError(path, where, f"must be a whole number of at least 1, got {short(value)}")


def _check_owned_hosts(path: str, where: str, hosts: Any) -> None:
    """Raise InputError unless a pool's ``owned_hosts`` (where given) is a list of host names the diff may echo.

    hostile81 item 2: the list was read unchecked and each entry echoed whole with ``str()``: a 3,000,000-character name
    made a 3 MB diff (every other echoed text is held to 200 characters), ``[{"a": ...}]`` printed a dict's repr, and
    ``"abc"`` (not a list) was taken as no hosts.
    """
    if hosts is None:
        return
    if not isinstance(hosts, list):
        raise SpecShapeError(path, where, f"must be a list of host names, got {short(hosts)}")
    for k, host in enumerate(hosts):
        if not isinstance(host, str) or not host or len(host) > _MAX_ECHOED_CHARS:
            raise SpecShapeError(
                path, f"{where}[{k}]", f"must be a host name of 1 to {_MAX_ECHOED_CHARS} characters, got {short(host)}"
            )


def _named_pool(path: str, where: str, name: Any, pool_names: set[str]) -> None:
    """Raise InputError unless ``name`` (a deployment's, a part's or a rack's pool) is one of ``plan.pools``.

    newuser75 item 4: a spec.json whose pools were emptied read as the pool "removed" beside totals of "0 change".
    """
    if not isinstance(name, str):
        raise SpecShapeError(path, where, f"must be a pool's name, got {short(name)}")
    if name not in pool_names:
        raise SpecShapeError(path, where, f"names {short(name)}, which 'plan.pools' does not have")


def _check_labels(path: str, where: str, labels: Any) -> None:
    """Raise InputError unless a pool's ``labels`` (where given) is a list of [key, value] string pairs."""
    if labels is None:
        return
    pairs = isinstance(labels, list) and all(
        isinstance(pair, list) and len(pair) == 2 and all(isinstance(part, str) for part in pair) for pair in labels
    )
    if not pairs:
        raise SpecShapeError(path, where, f"must be a list of [key, value] texts, got {short(labels)}")


#: The totals that are their pools' sums: (total, the pool's figure it adds up).
_POOL_SUMS: tuple[tuple[str, Callable[[dict[str, Any]], Any]], ...] = (
    ("gpus", lambda pool: pool["nodes"] * pool["node"]["gpus"]),
    ("nodes", lambda pool: pool["nodes"]),
    ("power_w", lambda pool: pool["power_w"]),
)


def _check_totals(path: str, plan: dict[str, Any]) -> None:
    """Raise InputError where ``plan.totals`` is not the sum of ``plan.pools`` (newuser75 item 4).

    The planner writes the GPUs, nodes and watts as exact sums of its pools' (``planner.assemble.totals``), and the month
    as their months rounded to cents, each pool's hourly rate rounded in the spec.json: a cent a pool is the most that
    rounding moves it. A hand-edited file whose parts disagree made the diff print a pool "removed" beside "0 change".
    """
    pools = plan["pools"]
    for key, figure in _POOL_SUMS:
        summed = math.fsum(figure(pool) for pool in pools)
        if abs(plan["totals"][key] - summed) > 1e-9 * max(1.0, summed):
            raise SpecShapeError(
                path,
                f"plan.totals.{key}",
                f"is {fmt_cell(plan['totals'][key])}, but the pools of 'plan.pools' add up to {fmt_cell(summed)}",
            )
    months = [_pool_usd_per_month(pool) for pool in pools if not pool.get("per_job")]
    summed_month = None if not pools or None in months else math.fsum(m for m in months if m is not None)
    total = plan["totals"]["usd_per_month"]
    if (total is None) != (summed_month is None) or (
        total is not None and summed_month is not None and abs(total - summed_month) > 0.01 * (len(pools) + 1)
    ):
        given = "null" if total is None else fmt_cell(total)
        sums = "no month (a pool has no price)" if summed_month is None else f"{fmt_cell(round(summed_month, 2))} a month"
        raise SpecShapeError(path, "plan.totals.usd_per_month", f"is {given}, but the pools of 'plan.pools' add up to {sums}")
    _check_owned_totals(path, plan, month_known=total is not None)


def _check_owned_totals(path: str, plan: dict[str, Any], *, month_known: bool) -> None:
    """Raise InputError where ``plan.totals``' capex or opex is not its pools' sum (fix168).

    hostile/fix162: a spec.json whose totals read capex 0 while its pools held 357,000 of bought servers was accepted,
    and the diff said "capex_usd 357,000.00 → 0.00". The planner writes each as its pools' sum rounded to cents where
    the month is known (the opex over the pools billed monthly, not a rented job's), else null; a cent a pool is
    the most rounding moves it.
    """
    pools = plan["pools"]
    monthly = [pool for pool in pools if not pool.get("per_job")]
    for key, counted in (("capex_usd", pools), ("opex_usd_per_month", monthly)):
        figures = [pool[key] for pool in counted if pool.get(key) is not None]
        summed = math.fsum(figures) if figures and month_known else None
        if key == "opex_usd_per_month" and len(figures) != len(counted):
            summed = None  # a pool without running costs leaves the fleet's unknown
        total = plan["totals"].get(key)
        if total is None and summed is None:
            continue
        if total is None or summed is None or abs(total - summed) > 0.01 * (len(pools) + 1):
            given = "null" if total is None else fmt_cell(total)
            sums = "nothing (no pool gives it, or the month is unknown)" if summed is None else fmt_cell(round(summed, 2))
            raise SpecShapeError(path, f"plan.totals.{key}", f"is {given}, but the pools of 'plan.pools' add up to {sums}")


def _pool_row(pool: dict[str, Any] | None, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """What a diff compares of a pool: its hardware, size, power, price and what runs on it (``runs``)."""
    if pool is None:
        return {"gpu": None, "nodes": 0, "gpus": 0, "power_w": 0, "usd_per_hour": None, "usd_per_month": None, "runs": []}
    row = {
        "gpu": pool["node"]["gpu_id"],
        "nodes": pool["nodes"],
        "gpus": pool["nodes"] * pool["node"]["gpus"],
        "power_w": pool["power_w"],
        "usd_per_hour": two_places(pool["usd_per_hour"]),
        "usd_per_month": _pool_usd_per_month(pool),
        "runs": runs,
    }
    # how its GPUs are shared, where they are (newuser40 item 4: MIG 1g.10gb -> 3g.40gb read "No change to the fleet")
    if pool.get("gpu_sharing") is not None:
        row["gpu_sharing"] = pool["gpu_sharing"]
    # its spot capacity, where it is (newuser56 item 1: on-demand -> spot read "No change to the fleet")
    if pool.get("capacity_type") is not None:
        row["capacity_type"] = pool["capacity_type"]
    # charged its training runs' energy, not a node-hour price (newuser89 left item 3); racked, its colocation beside,
    # paid whether it runs or not, most of a racked server's month (fix173)
    if RUNS_ENERGY_BASIS in (basis := str(pool.get("price_basis") or "")):
        row["runs_energy"] = True
        if PAID_WHETHER_RUN in basis:
            row["colocation"] = True
    # its nodes' root / OS disk, where recorded (newuser74 item 12: a change creates every node again)
    if _number(pool.get("root_disk_size")) is not None:
        words, unit = ROOT_DISK_WORDS.get(str(pool["node"].get("provider")), ("root disk", "GB"))
        row["root_disk"] = f"{words} {fmt_cell(pool['root_disk_size'])} {unit}"
    # the nodes it scales down to at the services' average rate, where it scales (a move of the minimum alone read
    # "No change to the fleet"); a plan without one is a pool of a fixed size
    if _number(pool.get("min_nodes")) is not None:
        row["min_nodes"] = pool["min_nodes"]
    # the owned hosts it runs on, where it names them (newuser57 item 1: a host renamed, which MAAS releases and Metal3
    # deprovisions, read "No change to the fleet"; a pool shrunk never named the host that leaves)
    if isinstance(pool.get("owned_hosts"), list) and pool["owned_hosts"]:
        row["hosts"] = sorted(str(h) for h in pool["owned_hosts"])  # as a set: hosts swapped in order are the same pool
    return row


def _part_of(key: str, parts: dict[str, dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """The ``runs_only_`` row of total ``key`` where ``parts`` has one (``runs_only_nodes`` of ``nodes``)."""
    part = f"runs_only_{key}"
    return [(part, parts[part])] if part in parts else []


def _runs_only(plan: dict[str, Any]) -> dict[str, Any]:
    """The GPUs, nodes and watts of a plan's pools that rest at 0 nodes between their jobs' runs (``Pool.runs_only``).

    Read off its pools (rented per training run, ``per_job``; or batch jobs' hours, ``busy_hours_per_month``), as
    the planner's ``runs_only_*`` totals count them, so that a spec.json written before them reads the same.
    """
    return runs_only_figures(
        (p["node"]["gpus"], p["nodes"], p["power_w"])
        for p in plan["pools"]
        if p.get("per_job") is True or _plan_figure(p.get("busy_hours_per_month")) is not None
    )


def minimum_nodes(row: dict[str, Any]) -> Any:
    """The nodes a pool row scales down to: its ``min_nodes``, else (a fixed size) its nodes."""
    return row.get("min_nodes", row["nodes"])


def _pool_usd_per_month(pool: dict[str, Any]) -> float | None:
    """A pool's cost a month: its hourly rate x 730 h, or x the hours its batch jobs' runs take.

    None for a pool rented per training run or without a price.
    """
    rate = _number(pool["usd_per_hour"])
    if rate is None or pool.get("per_job"):
        return None
    busy = _number(pool.get("busy_hours_per_month"))
    return round(rate * (HOURS_PER_MONTH if busy is None else min(busy, HOURS_PER_MONTH)), 2) + 0.0


def _plan_figure(value: Any) -> float | None:
    """``value`` where it is a figure a plan holds (a number from 0 to :data:`~generator.spec_figures.MAX_FIGURE`), else None."""
    number = _number(value)
    return number if number is not None and 0 <= number <= MAX_FIGURE else None


def _number(value: Any) -> float | None:
    """``value`` where it is a number (not a bool); None for anything else a spec.json may hold there."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def pool_runs(plan: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Per pool: what runs on it, each deployment (or part of a split one) with its model, precision and layout.

    A pool whose nodes stay but whose GPUs hold another model, precision or layout is a changed pool (newuser24 item 8).
    """
    runs: dict[str, list[dict[str, Any]]] = {}
    for dep in plan["deployments"]:
        for part in dep.get("split") or [dep]:
            entry = {"deployment": dep["name"], "model_id": dep["model_id"], "precision": dep["precision"]}
            entry.update({key: part[key] for key in ("tp", "pp", "replicas")})
            runs.setdefault(str(part["pool"]), []).append(entry)
    return {pool: sorted(entries, key=lambda e: str(e["deployment"])) for pool, entries in runs.items()}


def two_places(value: Any) -> Any:
    """A float figure to two decimal places (cents, tenths of a kW), as the Markdown prints it; else unchanged.

    Differences of floats carry binary noise (``20565.660000000003``); rounding keeps the JSON exact to the byte.
    """
    if isinstance(value, float):
        return round(value, 2) + 0.0  # + 0.0: never a "-0.0"
    return value


def _known_capex(totals: dict[str, Any]) -> Any:
    """A plan's capex, 0 where it buys nothing and its cost is known (a fleet rented whole), else as the plan gives it.

    A plan's total capex is None both where no pool is bought (a rented fleet: nothing is paid up front) and where some
    pool has no price (unknown); its month tells them apart. fuzz34 item 9d: a rented fleet against the same bought
    read capex "-" (not known) where it is $0.

    The planner's :func:`generator.planner.assemble.fleet_up_front_usd` (the figure ``max_capex_usd`` holds) reads the
    same 0 where the capex is None and the month known. It differs where the month is None and the capex is not (a
    priced purchase beside an unpriced rented pool): it holds the fleet's up-front cost unknown, where the diff shows
    the capex the plan gives, a figure known (review28 item 11).
    """
    capex = totals.get("capex_usd")
    if capex is None and _number(totals.get("usd_per_month")) is not None:
        return 0.0
    return capex


def diff_plans(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Totals before/after/delta, and every pool and deployment that changed."""
    totals = {}
    # a rented training job's per-run cost, where either side has one (newuser14 item 3: +50% a run read "unchanged")
    runs = [key for key in TRAINING_FIELDS if old["totals"].get(key) is not None or new["totals"].get(key) is not None]
    # what buying costs up front and to run (newuser25 item 9: a buy-vs-rent diff showed the monthly figure alone)
    bought = any(_number(plan["totals"].get("capex_usd")) for plan in (old, new))
    runs = [*(OWNED_FIELDS if bought else ()), *runs]
    # racks are bare metal's: two cloud plans have none to compare (review 10 item 8b)
    clouds = all(plan.get("provider") not in (None, "baremetal") for plan in (old, new) if plan["pools"])
    for key in (*(f for f in FIELDS if not (clouds and f == "racks")), *runs):
        a, b = (_known_capex(plan["totals"]) if key == "capex_usd" else plan["totals"].get(key) for plan in (old, new))
        delta = b - a if isinstance(a, (int, float)) and isinstance(b, (int, float)) else None
        totals[key] = {"old": two_places(a), "new": two_places(b), "delta": two_places(delta)}
    resting = [_runs_only(plan) for plan in (old, new)]
    if any(side["runs_only_nodes"] for side in resting):
        # newuser69 item 9: a training pool at 0 nodes between runs read as running in the nodes and power rows; each
        # beside the total it is part of (runs_only_nodes after nodes)
        parts = {
            k: {"old": resting[0][k], "new": resting[1][k], "delta": resting[1][k] - resting[0][k]} for k in RUNS_ONLY_TOTALS
        }
        totals = {k: v for key, row in totals.items() for k, v in [(key, row), *_part_of(key, parts)]}
    if any(plan["totals"].get(MONTH_FLOOR) is not None for plan in (old, new)):
        # newuser48 item 3: an average rate that halved the month its pools autoscale to read "$0.00"
        a, b = (_plan_figure(p["totals"].get(MONTH_FLOOR, p["totals"].get("usd_per_month"))) for p in (old, new))
        delta = b - a if a is not None and b is not None else None
        totals[MONTH_FLOOR] = {"old": two_places(a), "new": two_places(b), "delta": two_places(delta)}
    if any(_counted_runs(plan["totals"]) is not None for plan in (old, new)):
        # the month with the rented runs, as the planner ranks fleets (newuser30 item 4: a cloud plan of training jobs
        # alone read a bare "usd_per_month 0" beside a bought fleet's $2,080)
        a, b = _month_with_runs(old["totals"]), _month_with_runs(new["totals"])
        delta = b - a if a is not None and b is not None else None
        totals[MONTH_WITH_RUNS] = {"old": two_places(a), "new": two_places(b), "delta": two_places(delta)}
    moved = _place_change(old, new, "provider")
    relocated = None if moved else _place_change(old, new, "region")
    # newuser44 item 11: another provider's (or named region's) pools are another cluster's, whatever their names
    pools = _pool_changes(old, new, in_place=not moved and not _named_both(relocated))
    old_deps = {d["name"]: d for d in old["deployments"]}
    new_deps = {d["name"]: d for d in new["deployments"]}
    deployments = []
    old_runs, new_runs = _runs_energy_pools(old), _runs_energy_pools(new)
    for name in sorted(set(old_deps) | set(new_deps)):
        a = served_at(_deployment_row(old_deps[name], old_runs) if name in old_deps else None, old, name)
        b = served_at(_deployment_row(new_deps[name], new_runs) if name in new_deps else None, new, name)
        if a and b and ("inputs" in a) != ("inputs" in b):  # a spec.json written before the inputs were recorded
            a, b = {k: v for k, v in a.items() if k != "inputs"}, {k: v for k, v in b.items() if k != "inputs"}
        if a != b:
            deployments.append({"deployment": name, "old": a, "new": b} | _wider_why(a, b, new_deps.get(name)))
    # a GKE zone move keeps the cluster but drains and recreates every GPU node there (newuser31 item 14); a zone
    # known on one side alone (a spec.json records none) says nothing
    rezoned = None if moved or relocated else _place_change(old, new, "zone")
    rezoned = rezoned if _named_both(rezoned) else None
    # another provider's or region's pools are another cluster: none of them replaces a node in place (newuser26 item 9);
    # a region named on one side alone may be the other's (the provider configuration's), so pools still compare
    replacements = [] if moved or _named_both(relocated) else pool_replacements(old, new)
    out = {"totals": totals, "replacements": replacements, "pools": pools, "deployments": deployments}
    if not moved and not _named_both(relocated) and (shared := sharing_changes(old, new)):
        out["sharing_changes"] = shared
    if racks := rack_changes(old, new):
        out["racks"] = racks
    if supply := supply_change(old, new):  # fuzz30 item 10: circuits changed, servers in place
        out["rack_supply"] = supply
    if outlet := wall_circuit_change(old, new):  # fix168: the outlet changed, and with it the advice
        out["wall_circuit"] = outlet
    unpriced = {side: found for side, plan in (("old", old), ("new", new)) if (found := _unpriced_pools(plan))}
    if unpriced:
        out["unpriced"] = unpriced
    if elsewhere := _priced_elsewhere(old, new):
        out["priced_elsewhere"] = elsewhere
        if not elsewhere["change_known"]:  # newuser31 item 8: a region move read "0.00"
            for key in _unknown_costs(old, new, elsewhere["sides"]):
                if key in totals:
                    totals[key]["delta"] = None
    if said := new_findings(old, new):
        out["new_findings"] = said
    if scaled := capacity_change(old, new):  # fuzz35 item 5
        out["capacity_change"] = scaled
    if changed := constants_changed(old, new):
        out["constants_changed"] = changed
    payback = buy_vs_rent(old, new)
    return (
        out
        | ({"buy_vs_rent": payback} if payback else {})
        | ({"provider_change": moved} if moved else {})
        | ({"region_change": relocated} if relocated else {})
        | ({"zone_change": rezoned} if rezoned else {})
    )


def _wider_why(a: dict[str, Any] | None, b: dict[str, Any] | None, dep: dict[str, Any] | None) -> dict[str, str]:
    """Where a deployment's replica takes more GPUs, why NEW's plan says a narrower one is not the layout (fix168).

    newuser95 item 4: fp8 -> int4 took TP1 -> TP2 and the diff said "precision fp8 → int4, TP 1 → 2" alone, the dearer
    plan for the smaller weights unexplained; NEW's plan names the narrower layout's latency miss among its reasons.
    """
    if not a or not b or not dep:
        return {}
    widths = [
        side.get("tp", 0) * side.get("pp", 0) if isinstance(side.get("tp"), int) and isinstance(side.get("pp"), int) else 0
        for side in (a, b)
    ]
    reasons = dep.get("reasons")
    if widths[1] <= widths[0] or not isinstance(reasons, list):
        return {}
    said = next((r for r in reasons if isinstance(r, str) and r.startswith(NARROWER_LEAD)), None)
    return {} if said is None else {"wider_why": said}


def rack_changes(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """Each rack whose servers, power or currents change, before and after.

    Per rack: the nodes of each pool in it, its watts and, where the workload gives its circuits, the amperes of its
    most loaded line (shared and with a side lost).

    newuser36 item 11: a rack limit raised from 17.3 to 40 kW moved a server into the first rack (two racks -> one),
    a de-rack, re-cable and new PDU outlets, and the diff said "No change to the fleet.". fuzz30 item 10: circuits
    halved with the same packing said so too. A side without racks (a cloud plan, or a spec.json from before the rack
    list) compares none. Racks are matched by their place in the workload's fleet (:func:`racks_by_place`), each
    named by its new id and, where the old side names it otherwise, its old one (``old_rack``).
    """
    if "racks" not in old or "racks" not in new:
        return []
    sides = [racks_by_place(plan) for plan in (old, new)]

    def held(rack: dict[str, Any] | None) -> dict[str, Any] | None:
        if rack is None:
            return None
        pools = {share["pool"]: share["nodes"] for share in sorted(rack["pools"], key=lambda share: share["pool"])}
        return {"pools": pools, "power_w": rack["power_w"], **rack_load(rack)}

    out = []
    for place in sorted(set(sides[0]) | set(sides[1])):
        a, b = (held(side.get(place)) for side in sides)
        if a != b:
            ids = [side[place]["id"] for side in sides if place in side]
            out.append({"rack": ids[-1], "old": a, "new": b} | ({"old_rack": ids[0]} if ids[0] != ids[-1] else {}))
    return out


#: A rack's id as the planner names the racks of one fleet (:func:`generator.planner.racks.rack_id`).
_RACK_ID = re.compile(r"rack-[0-9]{2,}")


def racks_by_place(plan: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A plan's racks by their place in its workload's fleet: ``rack-01`` whether the plan is a tree's or its own.

    newuser53 item 2: in a tree of several workloads the racks are named after the workload (``support-chat-rack-01``),
    a plan of the file alone names them ``rack-01``, and a workload renamed renames them; matched by id, the same
    servers in the same rack read as de-racked from one and re-cabled into the other. A side whose ids the workload's
    name does not strip to the planner's one by one (a spec.json edited by hand) keeps its ids.
    """
    workload = plan.get("workload")
    prefix = f"{workload}-" if isinstance(workload, str) else None
    places = {}
    for rack in plan["racks"]:
        rack_id = rack["id"]
        local = rack_id[len(prefix) :] if prefix and rack_id.startswith(prefix) else rack_id
        places[local if _RACK_ID.fullmatch(local) else rack_id] = rack
    return places if len(places) == len(plan["racks"]) else {rack["id"]: rack for rack in plan["racks"]}


def _rack_name(change: dict[str, Any]) -> str:
    """A rack's cell of the racks table: its id, and the old side's where that names it otherwise (newuser53 item 2)."""
    name = md_code(change["rack"], cell=True)
    return f"{name} (was {md_code(change['old_rack'], cell=True)})" if "old_rack" in change else name


def _rack_text(held: dict[str, Any] | None) -> str:
    """A rack's side of the racks table: each pool's servers in it, and its power."""
    if held is None:
        return "-"
    pools = ", ".join(f"{fmt_cell(n)} x {md_code(p, cell=True)}" for p, n in held["pools"].items()) or "empty"
    return f"{pools} ({held['power_w'] / 1000:,.1f} kW{load_text(held)})"


#: The totals row of a month with the rented training jobs' runs: ``usd_per_month`` + ``training_usd_per_month``.
MONTH_WITH_RUNS = "usd_per_month_with_runs"
#: What a racked owned pool's month holds, training jobs alone on it (fix173): the racks' rent, paid whether it runs or
#: not, most of it, and its runs' energy (:class:`~generator.planner.plan.OwnedRuns`).
RACKED_RUNS_MONTH = "its colocation and runs' energy"


def _month_with_runs(totals: dict[str, Any]) -> float | None:
    """A plan's month with its rented training runs.

    None where a figure is missing, or where a job's runs a month are not given (its runs cannot be counted).
    """
    month, runs = _plan_figure(totals.get("usd_per_month")), _counted_runs(totals)
    if month is None or (runs is None and _rented_jobs(totals)):
        return None
    return month + (runs or 0.0)


def _counted_runs(totals: dict[str, Any]) -> float | None:
    """A plan's rented training runs a month where every rented job gives its runs a month; None otherwise.

    A plan may sum the runs of the jobs that give them beside jobs that do not (``training_pools_without_runs``,
    newuser35 item 7); the diff counts a month of runs only where it is the whole of it.
    """
    if totals.get("training_pools_without_runs"):
        return None
    return _plan_figure(totals.get("training_usd_per_month"))


def _rented_jobs(totals: dict[str, Any]) -> bool:
    """Whether a plan has training jobs rented per run (priced or not)."""
    return any(totals.get(key) is not None for key in ("training_usd_per_job", "unpriced_training_pools"))


#: The planner's ``price-region`` finding: a pool priced at another region's list rate than its cluster's.
_PRICED_AT = re.compile(r"pool (\S+) is priced at the (\S+) on-demand rate of ")


def _priced_elsewhere(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any] | None:
    """Where either side prices pools at another region's list rates than its cluster's region, which the catalog lacks.

    ``sides``: per side, its region and each such pool with the region priced (``price-region`` findings);
    ``change_known``: whether the cost change is one at the same rates: where both sides have pools, only when they
    are in the same region and priced in the same regions (a region move priced at the old region's rates read
    "0.00": newuser31 item 8). None where neither side has such a pool.
    """
    sides = {side: found for side, plan in (("old", old), ("new", new)) if (found := _priced_at(plan))}
    if not sides:
        return None
    bases = [{p["priced_in"] for p in sides[side]["pools"]} if side in sides else set() for side in ("old", "new")]
    known = not (old["pools"] and new["pools"]) or (old.get("region") == new.get("region") and bases[0] == bases[1])
    return {"sides": sides, "change_known": known}


def _priced_at(plan: dict[str, Any]) -> dict[str, Any] | None:
    """A plan's region and its pools priced at another region's rate (each with that region), or None where none is."""
    names = {str(p["name"]) for p in plan["pools"]}
    found = {
        (m[1], _cut(m[2], _MAX_ECHOED_CHARS))  # a spec.json's finding may say anything
        for f in _findings(plan)
        if f["code"] == "price-region" and (m := _PRICED_AT.match(f["message"])) and m[1] in names
    }
    if not found:
        return None
    region = plan.get("region")
    return {"region": region, "pools": [{"pool": pool, "priced_in": where} for pool, where in sorted(found)]}


def _unknown_costs(old: dict[str, Any], new: dict[str, Any], sides: dict[str, Any]) -> set[str]:
    """The cost totals that pools priced elsewhere count in: a per-run job's are the training rows, others the month."""
    keys: set[str] = set()
    for side, plan in (("old", old), ("new", new)):
        per_job = {str(p["name"]): p.get("per_job") is True for p in plan["pools"]}
        for pool in sides.get(side, {}).get("pools", []):
            keys |= (
                {*TRAINING_FIELDS, MONTH_WITH_RUNS}
                if per_job.get(pool["pool"])
                else {"usd_per_month", MONTH_WITH_RUNS, MONTH_FLOOR}
            )
    return keys


def _priced_elsewhere_lines(elsewhere: dict[str, Any]) -> list[str]:
    """Each side's pools priced at another region's list prices, and whether the change in cost is known."""
    lines = []
    sides = elsewhere["sides"]
    for side, found in sides.items():
        pools = found["pools"]
        named = ", ".join(md_code(p["pool"]) for p in pools[:5]) + (f" and {len(pools) - 5} more" if len(pools) > 5 else "")
        at = " / ".join(sorted({md_text(one_line(str(p["priced_in"]))) for p in pools}))
        region = md_text(one_line(str(found["region"])))
        text = (
            f"{side.upper()}'s cost is at {at} on-demand list prices for {named}: its cluster is in {region}, "
            "whose GPU VM prices are not in the catalog"
        )
        if side == "new" and not elsewhere["change_known"]:
            text += f", so the change in cost is not known (`-`); give {region}'s rates under `prices:` to compare"
        lines += ["", text + "."]
    if elsewhere["change_known"] and len(sides) == 2:
        lines += ["", "Both sides are priced at the same region's rates: the change in cost is at those prices."]
    elif not elsewhere["change_known"] and "new" not in sides:  # OLD priced elsewhere, NEW at its own region's
        lines += ["", "OLD's and NEW's costs are at different regions' prices: the change in cost is not known (`-`)."]
    return lines


def _unpriced_pools(plan: dict[str, Any]) -> list[dict[str, str]]:
    """A plan's pools without a price and why: they leave its cost rows blank.

    newuser28 item 8: a region move read "-" for the fleet's month without a word of the type the region does not price.
    """
    return [
        {"pool": str(p["name"]), "why": str(p.get("price_basis") or "no price")}
        for p in plan["pools"]
        if _number(p.get("usd_per_hour")) is None
    ]


def _unpriced_lines(unpriced: dict[str, list[dict[str, str]]]) -> list[str]:
    """Each side's unpriced pools, at most five named, with why each has no price."""
    lines = []
    for side, pools in unpriced.items():
        named = "; ".join(f"{md_code(p['pool'])} ({md_text(_cut(one_line(p['why']), 200))})" for p in pools[:5])
        more = f"; {len(pools) - 5} more" if len(pools) > 5 else ""
        lines += ["", f"{side.upper()}'s fleet has no price for {named}{more}: its cost rows read `-`."]
    return lines


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def replaces_in_place(diff: dict[str, Any]) -> bool:
    """Whether a diff's pools are compared in place: no move to another provider, nor to a region named on both sides."""
    return "provider_change" not in diff and not _named_both(diff.get("region_change"))


def _named_both(change: dict[str, str | None] | None) -> bool:
    """Whether a change of place names both sides (a region unset on one may be the same region)."""
    return change is not None and None not in change.values()


#: Most new findings a diff lists (the comment stays bounded; the plan has them all).
MAX_NEW_FINDINGS = 20


def new_findings(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, str]]:
    """The warnings and errors NEW's plan says that OLD's does not, by code and field (its figures may change).

    newuser28 item 4: a change to a precision the checkpoint does not hold read "85% of capacity" in the comment while
    the plan warned that what it sized is not what runs. A spec.json's findings are read only where well formed.

    newuser83 item 3: a field under a deployment is compared by the deployment's name, not its place in the list: a
    deployment added before others moved their findings from ``deployments[1]`` to ``deployments[2]``, and every
    warning OLD's plan already said of them was listed as new.
    """
    before = {(f["code"], _named_field(old, f.get("path", ""))) for f in _findings(old)}
    fresh = [
        f
        for f in _findings(new)
        if f["level"] in ("warning", "error") and (f["code"], _named_field(new, f.get("path", ""))) not in before
    ]
    return fresh[:MAX_NEW_FINDINGS]


_DEPLOYMENT_FIELD = re.compile(r"deployments\[(\d+)\]")


def _named_field(plan: dict[str, Any], path: str) -> str:
    """A finding's field with its deployment's index read as the deployment's name (the plan lists them in order)."""
    found = _DEPLOYMENT_FIELD.match(path)
    deployments = plan.get("deployments")
    if found is None or not isinstance(deployments, list) or int(found[1]) >= len(deployments):
        return path
    record = deployments[int(found[1])]
    name = record.get("name") if isinstance(record, dict) else None
    return f"deployments[{name!r}]{path[found.end() :]}" if isinstance(name, str) else path


def _findings(plan: dict[str, Any]) -> list[dict[str, str]]:
    """A plan's well-formed findings (a spec.json may hold anything): level, code, message and path where a text."""
    items = plan.get("findings")
    fields = ("level", "code", "message")
    return [
        {k: f[k] for k in (*fields, "path") if isinstance(f.get(k), str)}
        for f in (items if isinstance(items, list) else [])
        if isinstance(f, dict) and all(isinstance(f.get(k), str) for k in fields)
    ]


def _place_change(old: dict[str, Any], new: dict[str, Any], key: str) -> dict[str, str | None] | None:
    """``{"old": ..., "new": ...}`` where both plans have pools and name different ``key`` (provider, region or zone).

    A region one side leaves unset is None there (fuzz24 M2: the Terraform variable and the inventory's filter go).
    """
    a, b = old.get(key), new.get(key)
    if not (old["pools"] and new["pools"]) or a == b or not all(v is None or isinstance(v, str) for v in (a, b)):
        return None
    return {"old": a, "new": b}


def buy_vs_rent(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any] | None:
    """Where one side buys its servers and the other rents them: the months after which buying has cost less.

    Buying pays its capex once and its running cost (energy, colocation) each month; renting its monthly bill and its
    training jobs' runs a month (``training_usd_per_month``, as the planner's fleet ranking counts the month), so the
    two meet after capex / (rent - running) months; never where running the bought servers costs as much as the rent.
    newuser30 item 4: the rented runs were left out, and a cloud plan of training jobs alone ($0 a month of standing
    servers, $773 of runs) had no comparison at all. A rented side's jobs whose runs a month are not given are counted
    at none, and said (``rent_training_usd_per_job_uncounted``).

    newuser39 item 1: a break-even of 48.6 months read as a win for buying, while the bought servers are costed as
    worth nothing after the bought side's ``amortization_months`` (36): both sides' totals over that period
    (``total_usd_over_amortization``) and whether buying pays back within it (``within_amortization``). Item 2: what
    each rented pool's rate is (``rent_basis``): the catalog's on-demand list price, or the workload's own (``prices:``).
    """
    sides = {"old": old["totals"], "new": new["totals"]}
    plans = {"old": old, "new": new}
    owned = {k: sum(int(p.get("owned_nodes") or 0) for p in plan["pools"]) for k, plan in plans.items()}
    # a fleet of owned servers alone buys nothing, but pays its running costs against the rent (newuser61 item 5)
    buyer = [
        k
        for k, t in sides.items()
        if (_plan_figure(t.get("capex_usd")) or 0.0) > 0 or (owned[k] and t.get("capex_usd") is not None)
    ]
    renter = [k for k, t in sides.items() if t.get("capex_usd") is None and _rent(t)[0] > 0]
    if len(buyer) != 1 or len(renter) != 1:
        return None
    bought, rented = sides[buyer[0]], sides[renter[0]]
    capex, running = _plan_figure(bought["capex_usd"]) or 0.0, _plan_figure(bought.get("opex_usd_per_month"))
    if running is None:  # no running cost to set against the rent: no break-even to tell
        return None
    # rented runs on the bought side (none on bare metal, which pays its servers by the month) are paid monthly too
    running += _counted_runs(bought) or 0.0
    rent, services, runs = _rent(rented)
    saved = rent - running
    uncounted = runs is None and _rented_jobs(rented)  # runs a month not given, or a job unpriced
    months = constants_of(old if buyer[0] == "old" else new)["amortization_months"]
    break_even = _months_either_side(capex / saved, months) if saved > 0 else None
    # newuser65 item 4: a rented side that autoscales (average_requests_per_second) pays its floor to its peak: the
    # break-even against the floor too (8.2 months at the peak's $138,618, 28.3 at the floor's $46,206)
    floor = _plan_figure(rented.get(MONTH_FLOOR))
    at_floor: dict[str, Any] = {}
    if floor is not None and floor < services:
        rent_floor = floor + (runs or 0.0)
        saved_floor = rent_floor - running
        at_floor = {
            "rent_usd_per_month_floor": two_places(rent_floor),
            "break_even_months_at_floor": _months_either_side(capex / saved_floor, months) if saved_floor > 0 else None,
            "within_amortization_at_floor": saved_floor > 0 and capex / saved_floor <= months,
            "rent_total_usd_over_amortization_at_floor": two_places(months * rent_floor),
        }
    return {
        "bought": buyer[0],
        # the servers it already owns, which cost no capex here (newuser61 item 5: "payback after 0.8 months" with 4 of
        # 5 servers owned, unsaid)
        "owned_nodes": owned[buyer[0]],
        "capex_usd": two_places(capex),
        "running_usd_per_month": two_places(running),
        "rent_usd_per_month": two_places(rent),
        "rent_services_usd_per_month": two_places(services),
        "rent_training_usd_per_month": two_places(runs),
        # the rented jobs' runs the rent leaves out, with their cost a run where every job has a price
        **(
            {"rent_training_usd_per_job_uncounted": two_places(_plan_figure(rented.get("training_usd_per_job")))}
            if uncounted
            else {}
        ),
        "break_even_months": break_even,
        "amortization_months": months,
        "within_amortization": saved > 0 and capex / saved <= months,
        "total_usd_over_amortization": {
            buyer[0]: two_places(capex + months * running),
            renter[0]: two_places(months * rent),
        },
        **at_floor,
        "rent_basis": rent_basis(old if renter[0] == "old" else new),
        "capex_excludes": capex_excludes_text(),
    }


def constants_of(plan: dict[str, Any]) -> dict[str, float]:
    """A plan's engine constants: the workload's overrides (``constants``) over the defaults.

    A spec.json's are checked figures (:func:`_check_plan`); a name the engine does not know is left out.
    """
    given = plan.get("constants")
    overrides = {k: v for k, v in given.items() if k in CONSTANT_NAMES} if isinstance(given, dict) else {}
    return DEFAULT_CONSTANTS | overrides


def constants_changed(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """The engine constants whose value differs between two plans, by name: what moved the figures on the same fleet.

    newuser39 item 10: two bare-metal files differing in their cost constants alone showed $1,929/month saved with no
    cause. A side with no ``constants`` (an empty plan, an older spec.json) is compared with nothing.

    newuser61 item 9: "amortization_months 60 -> 36" against a cloud plan, whose 36 is a default nothing reads. A cost
    constant of the servers bought or owned is compared only where both sides read it (:func:`_unread_constants`).
    """
    if not (isinstance(old.get("constants"), dict) and isinstance(new.get("constants"), dict)):
        return []
    a, b = constants_of(old), constants_of(new)
    unread = _unread_constants(old) | _unread_constants(new)
    return [{"name": name, "old": a[name], "new": b[name]} for name in sorted(CONSTANT_NAMES - unread) if a[name] != b[name]]


def _unread_constants(plan: dict[str, Any]) -> frozenset[str]:
    """The cost constants of servers bought or owned that a plan's figures do not read, as it buys or owns none.

    A server rented (a cloud instance, a bare-metal rental: its pool's ``rented``) pays its rate alone; one bought
    (capex above 0) is amortised; one bought or owned on bare metal pays energy and colocation.
    """
    totals, pools = plan.get("totals"), plan.get("pools")
    if isinstance(totals, dict) and (_plan_figure(totals.get("capex_usd")) or 0.0) > 0:
        return frozenset()
    pools = pools if isinstance(pools, list) else []
    if plan.get("provider") == "baremetal" and any(isinstance(p, dict) and not p.get("rented") for p in pools):
        return frozenset(BOUGHT_SERVER_CONSTANTS)  # owned servers alone (or unpriced ones): energy and colocation
    return frozenset(BOUGHT_SERVER_CONSTANTS + OWNED_SERVER_CONSTANTS)


def constants_line(changed: list[dict[str, Any]], totals: dict[str, Any]) -> str:
    """The constants that changed (old -> new), and where the capex is the same, what the amortisation moved."""
    named = ", ".join(f"{c['name']} {_constant_text(c['old'])} → {_constant_text(c['new'])}" for c in changed)
    text = f"Constants changed (the workload's constants:): {named}."
    months = next((c for c in changed if c["name"] == "amortization_months"), None)
    capex = totals.get("capex_usd") or {}
    same = _number(capex.get("old")) is not None and capex.get("old") == capex.get("new") and capex["old"] > 0
    if months and same and months["old"] and months["new"]:
        moved = capex["new"] / months["new"] - capex["old"] / months["old"]
        text += (
            f" The same {dollars_text(capex['old'])} of capex spread over {_constant_text(months['new'])} months instead of "
            f"{_constant_text(months['old'])}: {signed_money_text(moved)}/month of the change."
        )
    return text


def _constant_text(value: float) -> str:
    """A constant as the workload writes it: a whole number without a point, else its shortest float form."""
    return f"{int(value)}" if float(value).is_integer() and abs(value) < 1e15 else repr(float(value))


#: What a rented pool's ``price_basis`` says where the workload gives its price (``planner.tco.node_cost``).
_GIVEN_PRICE = "workload prices"
#: ... and where the catalog's rent record prices it: ``catalog <price id> (<unit>)``.
_CATALOG_PRICE = re.compile(r"catalog (\S+) \((hour|month)\)")


#: A spot rate given under ``prices:`` as a pool's price basis says it (:func:`generator.planner.tco.node_cost`).
_SPOT_RATE = re.compile(r"spot rate prices\.(\S+@spot)")


def rent_basis(plan: dict[str, Any]) -> list[dict[str, Any]]:
    """Each priced pool of a rented fleet with the rate it is at, a node-hour.

    ``basis``: ``prices`` (the workload's own, which may be a commitment's), ``list`` (the catalog's on-demand list
    price of one region, named), or ``catalog`` (another catalog rent, by its record).
    """
    out = []
    for pool in plan["pools"]:
        rate = _plan_figure(pool.get("usd_per_hour"))
        if rate is None:
            continue
        nodes = _plan_figure(pool.get("nodes")) or 1.0
        basis = str(pool.get("price_basis") or "")
        entry: dict[str, Any] = {
            "pool": str(pool["name"]),
            "platform_id": _cut(str(pool["node"].get("platform_id")), _MAX_ECHOED_CHARS),
            "usd_per_node_hour": round(rate / nodes, 4) if nodes else None,
        }
        record = _CATALOG_PRICE.match(basis)
        if basis.startswith(_GIVEN_PRICE):
            entry["basis"] = "prices"
            if spot := _SPOT_RATE.search(basis):  # a spot rate's key (newuser66 item 6: read as an on-demand rate)
                entry["price_key"] = _cut(spot[1], _MAX_ECHOED_CHARS)
        elif record and record[2] == "hour" and (priced := catalog.prices().get(record[1])) and priced.region:
            entry |= {"basis": "list", "price_id": priced.id, "region": priced.region}
        else:
            entry |= {"basis": "catalog", "price_id": _cut(record[1], _MAX_ECHOED_CHARS) if record else None}
        out.append(entry)
    return out


def _rent(totals: dict[str, Any]) -> tuple[float, float, float | None]:
    """A rented side's month: (its servers by the month + its training runs a month, the servers', the runs').

    The runs' figure is None where the plan has none (no rented job, or one whose runs a month are not given); a
    figure no plan holds counts as none.
    """
    services = _plan_figure(totals.get("usd_per_month")) or 0.0
    runs = _counted_runs(totals)
    return services + (runs or 0.0), services, runs


def _months_either_side(months: float, limit: float) -> float:
    """``months`` to one decimal, or to as many more as keep it on its side of ``limit`` (at most 6).

    fuzz32 item 7: a break-even of 36.04 months was rounded to 36.0, and read "it would after 36 months, past the 36
    months": the figure said must show which side of the amortisation it falls on, as ``within_amortization`` does.
    """
    for places in range(1, 7):
        shown = round(months, places)
        if (shown > limit) == (months > limit) and (shown == limit) == (months == limit):
            return shown
    return round(months, 6)


def months_text(months: float) -> str:
    """A count of months as the comment says it: ``36``, ``36.04``, ``1,000,000,000,000`` (never ``1e+12``)."""
    return f"{int(months):,}" if months == int(months) else f"{months:,}"


def buy_vs_rent_line(payback: dict[str, Any]) -> str:
    """The break-even of buying against renting, as the comment says it, with both sides' totals over the amortisation."""
    rented = "new" if payback["bought"] == "old" else "old"
    rent, running = payback["rent_usd_per_month"], payback["running_usd_per_month"]
    months = payback["amortization_months"]
    totals = payback["total_usd_over_amortization"]
    buy_total, rent_total = totals[payback["bought"]], totals[rented]
    span = f"the {months_text(months)}-month amortisation"
    over = f"over {months_text(months)} months buying costs {dollars_text(buy_total)} and renting {dollars_text(rent_total)}"
    break_even = payback["break_even_months"]
    if not payback["capex_usd"]:  # owned servers alone: nothing to pay back (review39 item 11: "buying never pays back")
        cheaper = f"{dollars_text(rent - running)}/month less" if rent > running else f"{dollars_text(running - rent)}/month more"
        over = (
            f"over {months_text(months)} months running them costs {dollars_text(buy_total)} and renting "
            f"{dollars_text(rent_total)}"
        )
        when = f"the servers owned cost {cheaper} to run than the rent; {over}"
    elif break_even is not None and payback["within_amortization"]:
        when = f"buying has cost less after {months_text(break_even)} months, within {span}: {over}"
    elif break_even is not None:
        # newuser39 item 1: past the amortisation the bought servers are costed as worth nothing: no win for buying
        when = (
            f"buying does not pay back within {span} (it would after {months_text(break_even)} months, "
            f"past the {months_text(months)} months its servers are costed over): renting costs "
            f"{dollars_text(buy_total - rent_total)} less over {months_text(months)} months "
            f"({dollars_text(rent_total)} rented against {dollars_text(buy_total)} bought)"
        )
    elif rent < running:
        when = (
            f"renting costs {dollars_text(running - rent)}/month less than running the bought servers alone: buying never "
            f"pays back; {over}"
        )
    else:
        when = f"running the bought servers costs as much as the rent: buying never pays back; {over}"
    when += _at_floor_text(payback, span)
    owned = payback.get("owned_nodes") or 0
    held = f" (the {owned} server{'s' if owned != 1 else ''} already owned counted at no capex)" if owned else ""
    return (
        f"Buy ({payback['bought']}) or rent ({rented}): {dollars_text(payback['capex_usd'])} up front{held} and "
        f"{dollars_text(running)}/month to run, against {dollars_text(rent)}/month rented{_rent_parts(payback)}: {when} "
        f"(the bought side's capex is its servers alone, without {payback['capex_excludes']}, and is spread over "
        f"amortization_months with no resale value{_rent_basis_text(payback['rent_basis'])})."
    )


def _rent_basis_text(basis: list[dict[str, Any]]) -> str:
    """``; the rent of a and b is ...``: the rate each rented pool is at, pools at the same rate together."""
    groups: dict[tuple[Any, ...], list[str]] = {}
    for entry in basis:
        named_as = entry.get("price_key") or entry["platform_id"]  # the key it is given under (a spot rate's @spot)
        key = (entry["basis"], named_as, entry["usd_per_node_hour"], entry.get("region"), entry.get("price_id"))
        groups.setdefault(key, []).append(entry["pool"])
    parts = []
    for (kind, platform, rate, region, price_id), pools in groups.items():
        named = " and ".join(pools) if len(pools) < 3 else ", ".join(pools[:-1]) + " and " + pools[-1]
        at = f"{platform} {dollars_text(rate, 2)}/h" if rate is not None else str(platform)
        if kind == "prices":
            what = f"the rate given under prices: ({at})"
        elif kind == "list":
            what = f"the on-demand list price of {region} ({at})"
        else:
            what = f"the catalog's rent {price_id} ({at})" if price_id else f"its catalog price ({at})"
        parts.append(f"the rent of {named} is {what}")
    if any(entry["basis"] == "list" for entry in basis):
        parts.append("on-demand list prices are what 1-3-year commitments lower")
    return "".join(f"; {part}" for part in parts)


def _at_floor_text(payback: dict[str, Any], span: str) -> str:
    """The break-even against the rented side's autoscaled floor, where it has one (newuser65 item 4); else ""."""
    if "rent_usd_per_month_floor" not in payback or not payback["capex_usd"]:
        return ""
    floor, break_even = payback["rent_usd_per_month_floor"], payback["break_even_months_at_floor"]
    if break_even is None:
        verdict = "buying never pays back"
    elif payback["within_amortization_at_floor"]:
        verdict = f"buying has cost less after {months_text(break_even)} months, within {span}"
    else:
        verdict = f"buying does not pay back within {span} (it would after {months_text(break_even)} months)"
    total = payback["rent_total_usd_over_amortization_at_floor"]
    return (
        f"; the rented side's pools autoscale: at their floor all month ({dollars_text(floor)}/month, the nodes its services' "
        f"average rates need; {dollars_text(total)} over {months_text(payback['amortization_months'])} months) {verdict}, and "
        "the rented month lies between the floor's and the peak's, as the day's profile sets it"
    )


def _rent_parts(payback: dict[str, Any]) -> str:
    """What the rent is made of, where rented training runs are part of it or left out of it."""
    services, runs = payback.get("rent_services_usd_per_month"), payback.get("rent_training_usd_per_month")
    if "rent_training_usd_per_job_uncounted" in payback:
        run = payback["rent_training_usd_per_job_uncounted"]
        if run is None:
            return ", plus its training jobs' runs (not counted: a job has no price or no runs_per_month)"
        return f", plus {dollars_text(run)} a run of its training jobs (not counted: the workload gives no runs_per_month)"
    if not runs:
        return ""
    if not services:
        return " (its training jobs' runs a month, no servers rented by the month)"
    return f" ({dollars_text(services)} of servers by the month + {dollars_text(runs)} of training runs a month)"


def _pool_changes(old: dict[str, Any], new: dict[str, Any], *, in_place: bool = True) -> list[dict[str, Any]]:
    """Every pool added, removed or changed (in size, power, price, or what runs on it), by name.

    ``in_place``: whether a pool of one name on both sides is the same pool. Not where the fleet moves to another
    provider or region (another cluster): a pool of one name that differs is removed and added, the removed first
    (newuser44 item 11: aws -> gcp read "changed 2 → 2" under a banner saying none is resized in place).
    """
    old_pools = {p["name"]: p for p in old["pools"]}
    new_pools = {p["name"]: p for p in new["pools"]}
    old_runs, new_runs = pool_runs(old), pool_runs(new)
    pools = []
    for name in sorted(set(old_pools) | set(new_pools)):
        a = _pool_row(old_pools.get(name), old_runs.get(name, []))
        b = _pool_row(new_pools.get(name), new_runs.get(name, []))
        if a != b and not in_place and name in old_pools and name in new_pools:
            empty = _pool_row(None, [])
            pools.append({"pool": name, "status": "removed", "old": a, "new": empty})
            pools.append({"pool": name, "status": "added", "old": empty, "new": b})
        elif a != b:
            status = "added" if name not in old_pools else "removed" if name not in new_pools else "changed"
            pools.append({"pool": name, "status": status, "old": a, "new": b})
    return pools


#: What a pool's nodes are: (provider, platform, GPU, GPUs a node).
Hardware = tuple[Any, Any, Any, Any]


def _hardware(plan: dict[str, Any], pool: dict[str, Any]) -> Hardware:
    """A pool's (provider, platform, GPU, GPUs a node): what its nodes are, the server build a node is bought as.

    newuser33 item 7b: a pool going from 4 to 8 L40S a dell-xe7740 kept its name and read as resized (3 -> 1 nodes,
    "-$68,542 capex"), while MAAS allocates a node by its ``gpus-<n>`` tag (ForceNew): every node is replaced, and
    the servers taken out were bought. A spec.json without a platform matches on the GPU.
    """
    node = pool["node"]
    return (plan.get("provider") or node.get("provider"), node.get("platform_id"), node["gpu_id"], node.get("gpus"))


def _same_hardware(a: Hardware, b: Hardware) -> bool:
    """Whether two pools' (provider, platform, GPU, GPUs a node) agree wherever both spec.json files say."""
    return all(x == y for x, y in zip(a, b, strict=True) if x is not None and y is not None)


def pool_replacements(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """Pools whose nodes are deleted and created again rather than resized (newuser23 item 3, newuser24 item 3).

    A pool's name is its identity wherever it goes (GKE node pool, node group, Ansible group, Terraform key,
    ``specgen.dev/pool`` label): a pool that disappears while a pool of the same hardware (provider, platform, GPU)
    appears is a replacement, and so is a pool that keeps its name on another platform, and a service that leaves a
    removed pool for an added one on other hardware (it moves: every node it runs on is deleted, others created).
    One entry per hardware kind or move (entries sharing a pool merged, so no node is counted twice): the pools
    removed and added, the nodes deleted and created, the hardware before and after (the kept name's, where a pool
    keeps it), the deployments that ran or run there and those of them that change hardware (``moved``). Pools rented
    per job (``per_job``) are left out.
    """
    # a pool rented per job runs no node between its runs: renaming or moving it deletes nothing (review22 item 9)
    old_pools = {p["name"]: p for p in old["pools"] if p.get("per_job") is not True}
    new_pools = {p["name"]: p for p in new["pools"] if p.get("per_job") is not True}
    removed, added = sorted(set(old_pools) - set(new_pools)), sorted(set(new_pools) - set(old_pools))
    kinds: dict[Hardware, tuple[list[str], list[str]]] = {}
    for name in removed:
        kinds.setdefault(_hardware(old, old_pools[name]), ([], []))[0].append(name)
    for name in added:
        kinds.setdefault(_hardware(new, new_pools[name]), ([], []))[1].append(name)
    groups = [([name], [name]) for name in sorted(set(old_pools) & set(new_pools))
              if not _same_hardware(_hardware(old, old_pools[name]), _hardware(new, new_pools[name]))]  # fmt: skip
    groups += [sides for sides in kinds.values() if sides[0] and sides[1]]
    used = {name for sides in groups for name in sides[0]}, {name for sides in groups for name in sides[1]}
    # a service may also leave a removed pool for a pool that keeps its name on other hardware, or leave that pool for
    # an added one (fuzz23 item 6: the named pool's first deployment left or came, its short name passed to other
    # servers): both pools' nodes go, and are created, in one entry
    kept = [name for sides in groups if sides[0] == sides[1] for name in sides[1]]
    gone = [n for n in removed if n not in used[0]] + kept
    moves = _service_moves(old, new, gone, [n for n in added if n not in used[1]] + kept)
    groups = _merged(groups + moves)
    out = [_replacement(old, new, [old_pools[n] for n in gone], [new_pools[n] for n in come]) for gone, come in groups]
    grouped = {name for gone, come in groups for name in (*gone, *come)}
    out += [
        _replacement(old, new, [old_pools[change["pool"]]], [new_pools[change["pool"]]]) | {"gpu_sharing": change}
        for change in sharing_changes(old, new)
        if change["effect"] == "replaced" and change["pool"] not in grouped and change["pool"] in old_pools
    ]
    grouped |= {str(entry["added"][0]["pool"]) for entry in out if "gpu_sharing" in entry}
    out += [  # (_replacement says the capacity a pool keeping its name moves between)
        _replacement(old, new, [old_pools[name]], [new_pools[name]]) for name in capacity_changes(old, new) if name not in grouped
    ]
    grouped |= {str(entry["added"][0]["pool"]) for entry in out if "capacity_type" in entry}
    disks = root_disk_changes(old, new)
    for entry in out:  # a pool replaced for another reason says its disk's change too
        same = {str(p["pool"]) for p in entry["removed"]} & {str(p["pool"]) for p in entry["added"]}
        if len(same) == 1 and (change := disks.get(next(iter(same)))) is not None:
            entry["root_disk"] = change
    out += [
        _replacement(old, new, [old_pools[name]], [new_pools[name]]) | {"root_disk": change}
        for name, change in disks.items()
        if name not in grouped
    ]
    return sorted(out, key=lambda entry: (str(entry["removed"][0]["pool"]), str(entry["added"][0]["pool"])))


#: What a pool's capacity reads as in a diff (``capacity_type`` left out of a ``spec.json`` is on demand).
ON_DEMAND = "on-demand"


def capacity_changes(old: dict[str, Any], new: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Pools that keep their name and hardware while their nodes move between on-demand and spot capacity.

    newuser56 item 1: on-demand -> spot read "No change to the fleet." Every node of such a pool is created again:
    a GKE node pool of spot VMs is another node pool (``<pool>-spot``), an AKS node pool's ``priority`` and an EKS
    managed node group's ``capacity_type`` force a new one, and a Karpenter NodePool's ``karpenter.sh/capacity-type``
    requirement is drift, which replaces each node.

    Pools rented per job (``per_job``) are left out, as :func:`pool_replacements` leaves them (newuser70 item 2: a
    training pool moved to spot raised a KeyError there): no node of theirs rests between runs, so none is created
    again; the pool's row still says its move (``on-demand → spot``, :func:`_pool_status`).
    """
    old_pools = {p["name"]: p for p in old["pools"] if p.get("per_job") is not True}
    new_pools = {p["name"]: p for p in new["pools"] if p.get("per_job") is not True}
    out = {}
    for name in sorted(set(old_pools) & set(new_pools)):
        a, b = old_pools[name], new_pools[name]
        was, now = (str(p.get("capacity_type") or ON_DEMAND) for p in (a, b))
        if was != now and _same_hardware(_hardware(old, a), _hardware(new, b)):
            out[str(name)] = {"old": was, "new": now}
    return out


#: A cloud node's root disk as each provider names it, and the unit ``root_disk_size`` is in.
ROOT_DISK_WORDS = {"aws": ("root volume", "GiB"), "azure": ("OS disk", "GiB"), "gcp": ("boot disk", "GB")}  # Azure's "GB" is GiB


def root_disk_changes(old: dict[str, Any], new: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Pools that keep their name and hardware while their nodes' root / OS disk (``root_disk_size``) changes.

    newuser74 item 12: a model swap resized an AKS pool's OS disk (223 -> 140 GB) and the diff said "changed (what
    runs on it)". No provider resizes a running node's root disk: azurerm cycles an AKS node pool's nodes through its
    ``temporary_name_for_rotation`` pool (a new ``os_disk_size_gb``), an EKS managed node group rolls every node onto
    its launch template's new version (``block_device_mappings``), a GKE node pool's ``nodeConfig`` (``diskSizeGb``)
    is immutable, and a Karpenter EC2NodeClass's ``blockDeviceMappings`` or AKSNodeClass's ``osDiskSizeGB`` is drift:
    every node is created again. A spec.json from before the field (no ``root_disk_size``) says nothing; pools rented
    per job are left out, as :func:`capacity_changes` leaves them.
    """
    old_pools = {p["name"]: p for p in old["pools"] if p.get("per_job") is not True}
    new_pools = {p["name"]: p for p in new["pools"] if p.get("per_job") is not True}
    out = {}
    for name in sorted(set(old_pools) & set(new_pools)):
        a, b = old_pools[name], new_pools[name]
        was, now = _number(a.get("root_disk_size")), _number(b.get("root_disk_size"))
        provider = _hardware(new, b)[0]
        if was is None or now is None or was == now or provider not in ROOT_DISK_WORDS:
            continue
        out[str(name)] = {"provider": provider, "old": a["root_disk_size"], "new": b["root_disk_size"]}
    return out


#: Providers whose GPU pools deploy as Karpenter NodePools (``kubernetes/<provider>/``), as the renderer's.
KARPENTER_PROVIDERS = ("aws", "azure")
#: The pool label the GPU Operator's MIG manager partitions a node's GPUs by (``generator.render.gpu_sharing``).
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
#: The label that keeps the MIG manager off an AKS node pool whose GPUs AKS partitions (``generator.render.gpu_sharing``).
MIG_MANAGER_DEPLOY_LABEL = "nvidia.com/gpu.deploy.mig-manager"


def _sharing(pool: dict[str, Any]) -> str | None:
    value = pool.get("gpu_sharing")
    return None if value is None else str(value)


def _mig_label(pool: dict[str, Any]) -> Any:
    """A pool's ``nvidia.com/mig.config`` label value (None without one), from its ``labels`` pairs."""
    labels = pool.get("labels")
    pairs = [pair for pair in labels if isinstance(pair, list) and len(pair) == 2] if isinstance(labels, list) else []
    return next((value for key, value in pairs if key == MIG_CONFIG_LABEL), None)


def _aks_native(pool: dict[str, Any]) -> bool:
    """Whether a pool is an AKS node pool whose GPUs AKS partitions (``generator.render.gpu_sharing.aks_mig_pools``)."""
    labels = pool.get("labels")
    pairs = [pair for pair in labels if isinstance(pair, list) and len(pair) == 2] if isinstance(labels, list) else []
    return any(key == MIG_MANAGER_DEPLOY_LABEL and value == "false" for key, value in pairs)


def _aks_pool_name(pool: dict[str, Any], sharing: str | None) -> str:
    """What runs a pool's nodes on Azure: its AKS node pool (MIG: that alone), else its Karpenter NodePool or that."""
    from generator.render.aks_terraform import aks_node_pool_name
    from generator.workload.aks_mig import aks_gpu_instance

    name = str(pool["name"])
    profile = (sharing or "").removeprefix("mig ")
    value = aks_gpu_instance(str(pool["node"]["gpu_id"]), profile) if _aks_native(pool) else None
    spot = pool.get("capacity_type") == "spot"
    if value:
        return f"AKS node pool {aks_node_pool_name(name, value, spot)}"
    # a spec.json does not record its outputs: the AKS node pool exists only where terraform was rendered (review29 13)
    return (
        f"Karpenter NodePool {name.replace('_', '-')}, or AKS node pool {aks_node_pool_name(name, None, spot)} where "
        "terraform is rendered"
    )


def sharing_changes(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """Pools that keep their name and hardware while their GPU sharing changes, and what applying that does.

    newuser40 item 4: MIG 1g.10gb -> 3g.40gb, or MIG -> time-slicing, read "No change to the fleet". ``effect``:

    - ``replaced`` on GKE: a node pool's ``guestAccelerator`` (``gpuPartitionSize``, ``gpuSharingConfig``) cannot
      change in place (Config Connector: Immutable; Terraform replaces the resource), so the sharing is part of the
      node pool's name (``node_pool``: old and new) and a new node pool is created beside the old one;
    - ``replaced`` on Azure where either side is an AKS node pool whose GPUs AKS partitions (``gpu_instance``, fixed
      at creation; its name holds the profile): a new node pool, or a Karpenter NodePool, is created beside the old;
    - ``drift`` on AWS and Azure where the pool's ``nvidia.com/mig.config`` label changes: it is a label of the
      Karpenter NodePool's template, so Karpenter replaces every node of the pool (and a MIG repartition would evict
      every GPU pod anyway);
    - ``in place`` otherwise: the device plugin's config changes on the nodes as they are (time-slicing or MPS
      replicas), or, on servers, the MIG manager repartitions their GPUs (``mig``: whether it does).
    """
    old_pools = {p["name"]: p for p in old["pools"]}
    new_pools = {p["name"]: p for p in new["pools"]}
    out = []
    for name in sorted(set(old_pools) & set(new_pools)):
        a, b = old_pools[name], new_pools[name]
        was, now = _sharing(a), _sharing(b)
        relabelled = _mig_label(a) != _mig_label(b)
        if (was == now and not relabelled) or not _same_hardware(_hardware(old, a), _hardware(new, b)):
            continue
        provider = _hardware(new, b)[0]
        mig = relabelled or any(text is not None and text.startswith("mig") for text in (was, now))
        entry: dict[str, Any] = {"pool": name, "provider": provider, "nodes": a["nodes"], "old": was, "new": now}
        if provider == "gcp":
            from generator.render.gke import node_pool_name

            sides = {
                "old": node_pool_name(name, was, a.get("capacity_type") == "spot"),
                "new": node_pool_name(name, now, b.get("capacity_type") == "spot"),
            }
            entry |= {"effect": "replaced", "node_pool": sides}
        elif provider == "azure" and (_aks_native(a) or _aks_native(b)):  # an AKS node pool's gpu_instance is fixed
            sides = {"old": _aks_pool_name(a, was), "new": _aks_pool_name(b, now)}
            entry |= {"effect": "replaced", "node_pool": sides}
        elif provider in KARPENTER_PROVIDERS and relabelled:
            entry |= {"effect": "drift", "mig": True}
        else:
            entry |= {"effect": "in place", "mig": mig}
        out.append(entry)
    return out


def _merged(groups: list[tuple[list[str], list[str]]]) -> list[tuple[list[str], list[str]]]:
    """The (removed, added) groups, those with a pool in common merged into one: its nodes are counted once."""
    out: list[tuple[set[str], set[str]]] = []  # no two share a pool
    for gone, come in groups:
        old_side, new_side = set(gone), set(come)
        for other in [g for g in out if g[0] & old_side or g[1] & new_side]:
            out.remove(other)
            old_side, new_side = old_side | other[0], new_side | other[1]
        out.append((old_side, new_side))
    return [(sorted(gone), sorted(come)) for gone, come in out]


def _deployment_pools(plan: dict[str, Any]) -> dict[str, set[str]]:
    """Per deployment name: the pools it runs in (both parts' of a split one)."""
    return {str(d["name"]): {str(part["pool"]) for part in d.get("split") or [d]} for d in plan["deployments"]}


def _service_moves(
    old: dict[str, Any], new: dict[str, Any], removed: list[str], added: list[str]
) -> list[tuple[list[str], list[str]]]:
    """(removed pools, added pools) a service moves between: it ran in the removed ones and runs in the added ones.

    Pools linked by any one service form one group (two services moving out of one pool into two count once).
    """
    before, after = _deployment_pools(old), _deployment_pools(new)
    group_of: dict[tuple[str, str], int] = {}  # ("old"|"new", pool) -> group id
    groups: list[tuple[set[str], set[str]]] = []
    for name in sorted(set(before) & set(after)):
        gone = sorted(before[name] & set(removed))
        come = sorted(after[name] & set(added))
        if not gone or not come:
            continue
        members = [("old", p) for p in gone] + [("new", p) for p in come]
        ids = sorted({group_of[m] for m in members if m in group_of})
        target = ids[0] if ids else len(groups)
        if not ids:
            groups.append((set(), set()))
        for other in ids[1:]:  # a service joining two groups merges them
            groups[target][0].update(groups[other][0])
            groups[target][1].update(groups[other][1])
            groups[other] = (set(), set())
        groups[target][0].update(gone)
        groups[target][1].update(come)
        for side, pools in (("old", groups[target][0]), ("new", groups[target][1])):
            group_of.update({(side, p): target for p in pools})
    return [(sorted(gone), sorted(come)) for gone, come in groups if gone and come]


def _replacement(
    old: dict[str, Any], new: dict[str, Any], removed: list[dict[str, Any]], added: list[dict[str, Any]]
) -> dict[str, Any]:
    """A replacement's entry: the hardware after and before, the pools and nodes removed and added, the services.

    The services are the deployments that ran in the removed pools or run in the added ones.
    """
    gone, come = {str(p["name"]) for p in removed}, {str(p["name"]) for p in added}
    # the hardware after and before is that of the pool keeping its name where one does (fuzz23 item 6)
    provider, platform, gpu, per_node = _hardware(new, next((p for p in added if p["name"] in gone), added[0]))
    was = _hardware(old, next((p for p in removed if p["name"] in come), removed[0]))
    before, after = _deployment_pools(old), _deployment_pools(new)
    services = {name for name, pools in before.items() if pools & gone}
    services |= {name for name, pools in after.items() if pools & come}
    named = _named_pools(old) | _named_pools(new)
    was_on = {str(p["name"]): _hardware(old, p) for p in removed}
    now_on = {str(p["name"]): _hardware(new, p) for p in added}
    # who moves: a service that ran in a removed pool and runs in an added one on other hardware (not one that left
    # the workload or came, nor one that runs on the same servers under another pool name: fuzz23 item 6)
    moved = {
        name
        for name, pools in before.items()
        if any(not _same_hardware(was_on[a], now_on[b]) for a in pools & gone for b in after.get(name, set()) & come)
    }
    entry = {
        "provider": provider,
        "platform": platform,
        "gpu": gpu,
        "gpus_per_node": per_node,
        "was": dict(zip(("provider", "platform", "gpu", "gpus_per_node"), was, strict=True)),
        "removed": [{"pool": p["name"], "nodes": p["nodes"]} for p in removed],
        "added": [{"pool": p["name"], "nodes": p["nodes"]} for p in added],
        "nodes_deleted": sum(p["nodes"] for p in removed),
        "nodes_created": sum(p["nodes"] for p in added),
        "deployments": sorted(services),
        "moved": sorted(moved),
        # those whose workload names no pool (``pool``): the diff's advice to set one is for them (fuzz22 item 4)
        "unnamed": sorted(services - named),
    }
    # servers of another build are bought: those taken out were paid for, and the capex change does not refund them
    # (newuser33 item 7b: "-$68,542 capex" for three 4-GPU servers bought and one 8-GPU server to buy)
    taken_out, put_in = (sum(_plan_figure(p.get("capex_usd")) or 0.0 for p in side) for side in (removed, added))
    if taken_out > 0 and not _same_hardware(was, (provider, platform, gpu, per_node)):
        entry["capex_usd"] = {"taken_out": two_places(taken_out), "put_in": two_places(put_in)}
        if grow := _grow_on_bought(old, new, removed, sorted(services)):
            entry["capex_usd"]["grow"] = grow
    # the capacity a pool keeping its name moves between (review37 item 7: on other hardware too, unsaid)
    capacity = {
        side: str(p.get("capacity_type") or ON_DEMAND)
        for side, ps in (("old", removed), ("new", added))
        for p in ps
        if p["name"] in gone & come
    }
    if len(capacity) == 2 and capacity["old"] != capacity["new"]:
        entry["capacity_type"] = capacity
    return entry


def _named_pools(plan: dict[str, Any]) -> set[str]:
    """The deployments of a plan whose workload names their pool (``pool``, as ``details.named_pool``)."""
    return {
        str(d["name"])
        for d in plan["deployments"]
        if isinstance(d.get("details"), dict) and isinstance(d["details"].get("named_pool"), str)
    }


#: Pools a replacement names on each side (a spec.json may hold thousands; the JSON lists every one).
_MAX_NAMED_POOLS = 3


def _count(value: Any, noun: str, plain: bool) -> str:
    """A count and its noun, singular for one (fuzz21 item 8: "(1 nodes)", "1 servers leave")."""
    return f"{_cell(value, plain)} {noun}{'' if value == 1 else 's'}"


def _pools_text(pools: list[dict[str, Any]], plain: bool) -> str:
    """Pools with their nodes, the first :data:`_MAX_NAMED_POOLS` by name and a count of the rest."""
    text = ", ".join(f"{_name(p['pool'], plain)} ({_count(p['nodes'], 'node', plain)})" for p in pools[:_MAX_NAMED_POOLS])
    return text + (f" and {len(pools) - _MAX_NAMED_POOLS} more" if len(pools) > _MAX_NAMED_POOLS else "")


def _name(value: Any, plain: bool) -> str:
    """A name as a Markdown code span, or (``plain``) quoted on one line."""
    return f"'{one_line(str(value))}'" if plain else md_code(str(value))


def _cell(value: Any, plain: bool) -> str:
    """A value as :func:`fmt_cell` prints it, or (``plain``) as one line of text without Markdown escapes."""
    if plain and isinstance(value, str):
        return one_line(value)
    return fmt_cell(value)


def _hardware_text(kind: dict[str, Any], plain: bool, per_node: bool = False) -> str:
    """A GPU and, where known, its platform: ``h100-sxm5-80gb on aws-p5-48xlarge``; ``per_node``: ``8 x`` before it."""
    gpu = _cell(kind["gpu"], plain)
    if per_node and kind.get("gpus_per_node") is not None:
        gpu = f"{_cell(kind['gpus_per_node'], plain)} x {gpu}"
    return gpu if kind["platform"] is None else f"{gpu} on {_cell(kind['platform'], plain)}"


def replacement_text(entry: dict[str, Any], plain: bool = False) -> str:
    """One replacement as Markdown (``plain``: one line of plain text): pools, hardware, what it does to the nodes.

    Where the hardware changes, the hardware before and the services that move are said too.
    """
    removed, added = (_pools_text(entry[side], plain) for side in ("removed", "added"))
    moved = _moved(entry)
    # the GPUs a node where they change (the same GPU on the same platform reads as no change otherwise)
    was = entry.get("was") or {}
    per_node = moved and was.get("gpus_per_node") not in (None, entry.get("gpus_per_node"))
    hardware = _hardware_text(entry, plain, per_node)
    gone, come = ([p["pool"] for p in entry[side]] for side in ("removed", "added"))
    kept = [name for name in come if name in gone] if gone != come else []
    if moved:
        services = entry.get("moved", entry.get("deployments", []))
        names = ", ".join(_name(d, plain) for d in services[:_MAX_NAMED_POOLS])
        names += f" and {len(services) - _MAX_NAMED_POOLS} more" if len(services) > _MAX_NAMED_POOLS else ""
        moves = f"; {names} {'moves' if len(services) == 1 else 'move'}" if services else ""
        which = f"{', '.join(_name(k, plain) for k in kept)} " if kept else ""
        hardware += f" ({which}was {_hardware_text(entry['was'], plain, per_node)}{moves})"
    deleted, created = entry["nodes_deleted"], entry["nodes_created"]
    if entry["provider"] not in (None, "baremetal"):
        effect = f"applying it deletes {_count(deleted, 'node', plain)} and creates {_cell(created, plain)}"
    elif moved:  # other machines: the old servers leave the cluster, the new hardware joins it
        effect = (
            f"{_count(deleted, 'server', plain)} taken out and {_count(created, 'server', plain)} of the new hardware "
            "put in (Kubernetes nodes drained; the new ones provisioned and joined)"
        ) + _capex_text(entry.get("capex_usd"))
    else:
        effect = (
            f"{_count(deleted, 'server', plain)} {'leaves' if deleted == 1 else 'leave'} the pool and "
            f"{_cell(created, plain)} join the new one (Ansible group, node labels and Terraform keys renamed; "
            "Kubernetes nodes drained and rejoined)"
        )
    if isinstance(entry.get("gpu_sharing"), dict):  # a kept name and hardware, GPUs shared otherwise (GKE)
        return f"{added}, {hardware}: {_gke_sharing_text(entry['gpu_sharing'], plain)}: {effect}"
    if isinstance(entry.get("root_disk"), dict):  # the nodes' root disk changes too, or alone
        effect = f"{_root_disk_effect(entry['root_disk'], plain)}; {effect}"
    capacity = entry.get("capacity_type")
    if isinstance(capacity, dict) and not moved:  # a kept name and hardware, another capacity
        return (
            f"{added}, {hardware}: its nodes move from {_cell(capacity['old'], plain)} to {_cell(capacity['new'], plain)} "
            "capacity, which no node changes in place (a GKE spot node pool is another node pool, an AKS node pool's "
            "priority and an EKS node group's capacity type force new ones, a Karpenter NodePool's capacity-type "
            f"requirement is drift): {effect}"
        )
    if isinstance(entry.get("root_disk"), dict) and gone == come and not moved:  # a kept name, hardware, capacity
        return f"{added}, {hardware}: {effect}"
    if gone == come:  # a kept name, other hardware (and capacity)
        to = ""
        if isinstance(capacity, dict):
            to = f", its nodes on {_cell(capacity['new'], plain)} capacity (were {_cell(capacity['old'], plain)})"
        return f"{added} keeps its name on other hardware, {hardware}{to}: {effect}"
    return f"{removed} replaced by {added}, {hardware}: {effect}"


def _root_disk_effect(change: dict[str, Any], plain: bool) -> str:
    """Why a pool whose nodes' root disk changes has its nodes created again, as its provider applies it."""
    words, unit = ROOT_DISK_WORDS.get(str(change.get("provider")), ("root disk", "GB"))
    sizes = f"{_cell(change.get('old'), plain)} → {_cell(change.get('new'), plain)} {unit}"
    how = {
        "azure": "an AKS node pool cycles every node through its temporary_name_for_rotation pool, as many VMs again "
        "for a while, which needs quota for them; an AKSNodeClass's osDiskSizeGB change is Karpenter drift",
        "aws": "an EKS managed node group rolls every node onto its launch template's new version, and an "
        "EC2NodeClass's blockDeviceMappings change is Karpenter drift",
        "gcp": "a GKE node pool's boot disk (nodeConfig diskSizeGb) is immutable: its nodes are created again",
    }.get(str(change.get("provider")), "no node resizes it in place")
    return f"its nodes' {words} changes ({sizes}), which no node takes in place ({how})"


def _sharing_side(text: Any) -> str:
    return "whole GPUs" if text is None else str(text)


def _gke_sharing_text(change: dict[str, Any], plain: bool) -> str:
    """Why a GKE or AKS pool whose GPU sharing changes is replaced: its node pool's accelerator is immutable."""
    names = change.get("node_pool") or {}
    if change.get("provider") == "azure":  # AKS: gpu_instance forces a new node pool (azurerm), Karpenter has no MIG
        return (
            f"its GPU sharing changes ({_cell(_sharing_side(change.get('old')), plain)} → "
            f"{_cell(_sharing_side(change.get('new')), plain)}), which AKS cannot change in place (a node pool's "
            f"gpu_instance is fixed when it is created), so {_cell(names.get('old'), plain)} is replaced by "
            f"{_cell(names.get('new'), plain)}, created beside it (terraform/aks-node-pools.tf: create_before_destroy)"
        )
    return (
        f"its GPU sharing changes ({_cell(_sharing_side(change.get('old')), plain)} → "
        f"{_cell(_sharing_side(change.get('new')), plain)}), which GKE cannot change in place (guestAccelerator "
        f"is immutable), so node pool {_name(names.get('old'), plain)} is replaced by {_name(names.get('new'), plain)}, "
        "created beside it (under Terraform only where the resource has lifecycle create_before_destroy; "
        "otherwise the old one is deleted first)"
    )


def sharing_lines(changes: list[dict[str, Any]]) -> list[str]:
    """The warning on pools whose GPU sharing changes on Karpenter (drift) or in place; GKE's are replacements."""
    shown = [c for c in changes if c.get("effect") != "replaced"]
    if not shown:
        return []
    drift = [c for c in shown if c.get("effect") == "drift"]
    lines = []
    if drift:
        nodes = sum(c["nodes"] for c in drift if isinstance(c.get("nodes"), int))
        lines.append(f"**Karpenter drift: {fmt_cell(nodes)} node(s) replaced, one at a time, where GPU sharing changes.**")
    else:
        lines.append("**GPU sharing changes in place.**")
    lines.append("")
    for c in shown:
        pool = f"{md_code(str(c['pool']))} ({_count(c.get('nodes'), 'node', False)})"
        change = f"{md_text(_sharing_side(c.get('old')))} → {md_text(_sharing_side(c.get('new')))}"
        if c.get("effect") == "drift":
            effect = (
                f"its Karpenter NodePool's template label `{MIG_CONFIG_LABEL}` changes, which Karpenter treats as drift: "
                "it launches a replacement for every node of the pool and drains the old one once the new one is "
                "ready (the MIG manager partitions the new node's GPUs first), so every pod on the pool restarts"
            )
        elif c.get("mig"):
            effect = (
                "the GPU Operator's MIG manager repartitions every GPU of the pool's nodes in place, evicting every "
                "GPU pod there first: no node is replaced, but every pod on the pool restarts"
            )
        else:
            effect = (
                "the device plugin takes its new config on each node (its sharing replicas): no node is replaced; "
                "pods already running keep their GPU until they restart"
            )
        lines.append(f"- {pool}: GPU sharing {change}: {effect}")
    return [*lines, ""]


def _grow_on_bought(
    old: dict[str, Any], new: dict[str, Any], removed: list[dict[str, Any]], services: list[str]
) -> dict[str, Any] | None:
    """Servers of the old build to add to those bought, where that alone meets a new rate; None where it cannot be said.

    newuser80 item 7: a rate increase (20 -> 30 req/s) replaced 3 bought XE8640s ($591,000) by 2 new 8-GPU servers
    ($714,000) with no word of growing on top of them. Said only for one service in one removed pool whose inputs
    differ in the rate alone (same model and every other input), every added server at the old servers' price each.

    The replicas the new rate needs lie between two counts the old plan gives (review80 item 9: the most a replica
    sustains alone was taken, where the diff's capacity share is the replicas' ``requests_per_s_sustained``, the wait
    for a place in the batch included). At least ``rate / requests_per_s_per_replica_max`` (no replica sustains more
    than that); at most ``rate / (sustained / replicas)``, a replica's share of what the old replicas sustain together:
    more replicas at the same load each wait less for a place (Erlang C), so each sustains at least that share. The
    plan of the advice (the inventory listed) counts the wait at the new count, and finds the figure in that range
    (``requests_per_s_sustained`` absent, a ``spec.json`` written before it: the most a replica sustains, both ends).
    Whole replicas go to a server (``floor(gpus_per_node / (tp x pp))`` each; a replica wider than a server takes
    ``ceil(tp x pp / gpus_per_node)`` of them): ``ceil(replicas x tp x pp / gpus_per_node)`` split a replica of TP2
    PP3 over two 8-GPU servers.
    """
    if len(removed) != 1 or len(services) != 1:
        return None
    pool = removed[0]
    by_name = [{str(d.get("name")): d for d in plan.get("deployments") or [] if isinstance(d, dict)} for plan in (old, new)]
    before, after = (names.get(services[0]) for names in by_name)
    if before is None or after is None or before.get("model_id") != after.get("model_id"):
        return None
    if before.get("pool") != pool.get("name") or (pool.get("owned_nodes") or 0) > 0:
        return None
    ins = [d.get("details", {}).get("inputs") for d in (before, after)]
    if not all(isinstance(i, dict) for i in ins):
        return None
    rate_key = "requests_per_second"
    if {k: v for k, v in ins[0].items() if k != rate_key} != {k: v for k, v in ins[1].items() if k != rate_key}:
        return None
    details = before["details"]
    most = _plan_figure(details.get("requests_per_s_per_replica_max"))
    rate, was_rate = _plan_figure(ins[1].get(rate_key)), _plan_figure(ins[0].get(rate_key))
    node = pool.get("node") or {}
    capex = _plan_figure(pool.get("capex_usd"))
    counts = [n for n in (before.get("tp"), before.get("pp"), node.get("gpus"), pool.get("nodes")) if _whole(n)]
    if not most or not rate or not was_rate or rate <= was_rate or not capex or len(counts) != 4:
        return None
    tp, pp, per_node, nodes = counts
    had, sustained = before.get("replicas"), _plan_figure(details.get("requests_per_s_sustained"))
    # a replica's of the old fleet's, unrounded for the counts (review81 item 10: 5.0 / 3 taken as 1.667 counted 12
    # replicas for 20.004 req/s where 20.004 / 1.66667 = 12.0024 needs 13); rounded only where said
    share = sustained / had if sustained and _whole(had) else most
    width = tp * pp  # a replica's GPUs: whole replicas to a server, or whole servers to a replica

    def servers(replicas: int) -> int:
        if width <= per_node:
            return math.ceil(replicas / (per_node // width))
        return replicas * math.ceil(width / per_node)

    least, surely = (math.ceil(rate / each - 1e-9) for each in (most, min(share, most)))
    if servers(surely) <= nodes:
        return None
    add = [max(0, servers(n) - nodes) for n in (least, surely)]
    return {
        "platform": node.get("platform_id"),
        "replicas": surely,  # enough with the wait counted as the old fleet's
        "replicas_least": least,  # none fewer: each at the most a replica sustains
        "requests_per_s_per_replica_max": most,
        "requests_per_s_per_replica_sustained": round(min(share, most), 3),
        "servers_kept": nodes,
        "servers_added": add[1],
        "servers_added_least": add[0],
        "usd_added": two_places(capex / nodes * add[1]),
        "usd_added_least": two_places(capex / nodes * add[0]),
    }


def _whole(value: Any) -> TypeGuard[int]:
    """Whether ``value`` is a count a plan holds (a positive int, not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _capex_text(capex: dict[str, Any] | None) -> str:
    """What a replacement onto servers of another build does to capex: those taken out are bought, not refunded."""
    if not capex:
        return ""
    text = (
        f"; the servers taken out were bought ({dollars_text(capex['taken_out'])}): the capex change counts them as saved, but "
        f"they are freed, not refunded (reuse or sell them), and the new ones are {dollars_text(capex['put_in'])} to buy"
    )
    if grow := capex.get("grow"):  # newuser80 item 7: growing on the servers bought, said before replacing them
        platform, most, share = (
            grow["platform"],
            grow["requests_per_s_per_replica_max"],
            grow["requests_per_s_per_replica_sustained"],
        )
        if grow["replicas_least"] == grow["replicas"]:
            need = f"at the old layout's {share:g} req/s a replica the new rate needs {grow['replicas']} replicas"
        else:  # review80 item 9: between a replica's most and its share of what the old ones sustain with the wait
            need = (
                f"the new rate needs {grow['replicas_least']} to {grow['replicas']} replicas ({grow['replicas_least']} "
                f"at the {most:g} req/s a replica of the old layout sustains at most, {grow['replicas']} at the "
                f"{share:g} each of its old replicas sustains with the wait for a place in the batch, which more "
                "replicas shorten)"
            )
        added = f"{grow['servers_added']} ({dollars_text(grow['usd_added'])} at their price)"
        if grow["servers_added_least"] != grow["servers_added"]:
            added = (
                f"{grow['servers_added_least']} to {grow['servers_added']} ({dollars_text(grow['usd_added_least'])} to "
                f"{dollars_text(grow['usd_added'])} at their price)"
            )
        text += (
            f"; growing on them instead: {need}, so keep the {grow['servers_kept']} {platform} and add {added}: list "
            f"them under hardware.inventory (platform: {platform}, count: {grow['servers_kept']}) and allow {platform} "
            "in hardware.platforms, so the plan uses them first and buys only the shortfall, then diff that plan"
        )
    return text


def _moved(entry: dict[str, Any]) -> bool:
    """Whether a replacement puts its pools on other hardware (not only other names)."""
    was = entry.get("was")
    return isinstance(was, dict) and not _same_hardware(_kind(was), _kind(entry))


def _kind(kind: dict[str, Any]) -> Hardware:
    """A replacement's hardware (or its ``was``) as :data:`Hardware`."""
    return (kind["provider"], kind["platform"], kind["gpu"], kind.get("gpus_per_node"))


def replacement_lines(replacements: list[dict[str, Any]]) -> list[str]:
    """The warning a diff opens with when node pools are replaced, not resized; no lines when none is."""
    if not replacements:
        return []
    deleted = sum(r["nodes_deleted"] for r in replacements)
    created = sum(r["nodes_created"] for r in replacements)
    # the pool: advice only where a name changed on the same hardware (fuzz21 item 8: a kept name was told to set it)
    # (and where a pool whose deployments all name it takes another removed pool's services: fuzz23 item 6)
    renamed = [
        r
        for r in replacements
        if (not _moved(r) or _takes_over(r)) and not {"gpu_sharing", "capacity_type", "root_disk"} & set(r)
    ]
    lines = [
        f"**Node pools replaced, not resized: {fmt_cell(deleted)} node(s) deleted and {fmt_cell(created)} created.**"
        + _pool_advice(renamed),
        "",
    ]
    lines += [f"- {replacement_text(r)}" for r in replacements]
    return [*lines, ""]


def _takes_over(entry: dict[str, Any]) -> bool:
    """Whether a named pool keeps its name on other servers and takes the services of another pool removed."""
    gone, come = ({p["pool"] for p in entry[side]} for side in ("removed", "added"))
    return bool(gone & come) and gone != come and not entry.get("unnamed", entry.get("deployments"))


#: What a pool's name is, said before the advice on keeping it.
_IDENTITY = " A pool's name is its identity (node pool, Ansible group, Terraform key, `specgen.dev/pool` label);"


def _pool_advice(renamed: list[dict[str, Any]]) -> str:
    """How to keep a renamed pool's name: set ``pool:`` where its deployments name none; else why it changed anyway.

    fuzz22 item 4: deployments that already set ``pool:`` were told to set it. A spec.json from before
    ``details.named_pool`` counts its deployments as naming none.
    """
    if not renamed:
        return ""
    unnamed = sorted({name for r in renamed for name in r.get("unnamed", r.get("deployments", []))})
    if unnamed:
        return f"{_IDENTITY} set `pool:` on the deployments to keep it when deployments join or leave."
    return (
        f"{_IDENTITY} these deployments set `pool:`, so the pool's own name changed, or its first deployment in the "
        "file changed (it runs on other servers, left, or another came before it): the servers of the pool's first "
        "deployment keep `<pool>_<gpu>`, its deployments on other servers add the platform to the name."
    )


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


def fmt_cell(value: Any) -> str:
    """A cell value as inert Markdown text (a spec.json given to ``diff`` may hold anything)."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return money_text(value)
    return f"{value:,}" if isinstance(value, int) else md_text(str(value))


def signed_cell(value: Any) -> str:
    """A change as a cell: ``+`` before a rise, ``-`` when there is none to show."""
    if value is None:
        return "-"
    text = fmt_cell(value)
    return text if text.startswith("-") or shows_zero(text) else f"+{text}"  # 0.00: no sign (-0.004 moved none)


def _pool_status(p: dict[str, Any], place: dict[str, Any] | None = None, replaced: dict[str, bool] | None = None) -> str:
    """A pool row's status; a changed pool of the same size says that what runs on it changed.

    ``place``: the provider or region the fleet moves from and to, which a removed and an added pool name.
    ``replaced``: the pools that keep their name while their nodes are created again (:func:`pool_replacements`), and
    whether on other hardware: they say what moves (review37 item 7: a pool moved to spot read a bare "changed"
    beside equal cells, and one on other servers "in place").
    """
    if place is not None and p["status"] in ("removed", "added"):
        where = place["old"] if p["status"] == "removed" else place["new"]
        return f"{p['status']} ({md_text(one_line(str(where)))})"
    if p["status"] != "changed":
        return str(p["status"])
    old, new = p["old"], p["new"]
    sharing = [str(side.get("gpu_sharing") or "whole GPUs") for side in (old, new)]
    capacity = [str(side.get("capacity_type") or ON_DEMAND) for side in (old, new)]
    said = [f"GPU sharing {md_text(sharing[0])} → {md_text(sharing[1])}"] if sharing[0] != sharing[1] else []
    said += [f"{capacity[0]} → {capacity[1]}"] if capacity[0] != capacity[1] else []
    disks = [side.get("root_disk") for side in (old, new)]
    said += [f"{disks[0]} → {disks[1]}"] if None not in disks and disks[0] != disks[1] else []
    if replaced and p["pool"] in replaced:
        return f"replaced ({', '.join(['other hardware'] * replaced[p['pool']] + said) or 'its nodes created again'})"
    price = _node_price_change(old, new)
    hosts = [set(side.get("hosts", ())) for side in (old, new)]
    for moved, verb in ((sorted(hosts[1] - hosts[0]), "join"), (sorted(hosts[0] - hosts[1]), "leave")):
        if moved:
            said.append(f"hosts {_names_text(moved)} {verb}" if len(moved) > 1 else f"host {_names_text(moved)} {verb}s")
    if old["runs"] != new["runs"] and old["nodes"] == new["nodes"]:  # (review38 item 6: said beside the hosts)
        said.insert(0, "what runs on it")
    if said:
        return f"changed ({', '.join(said + price)})"
    low = [minimum_nodes(side) for side in (old, new)]
    if low[0] != low[1] and "min_nodes" not in old and "min_nodes" not in new:
        # newuser73 item 16: a pool of a fixed size (GKE nodeCount, no autoscaling) has no minimum: it is resized
        return f"changed ({', '.join([f'nodes {fmt_cell(low[0])} → {fmt_cell(low[1])}, resized in place', *price])})"
    if low[0] != low[1]:  # the autoscaler's minimum (EKS min_size, GKE autoscaling)
        return f"changed ({', '.join([f'minimum nodes {fmt_cell(low[0])} → {fmt_cell(low[1])}, in place', *price])})"
    return f"changed ({', '.join(price)})" if price else "changed"


def _node_price_change(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """A pool's price a node-hour, where it moved: ``price $48.00 → $30.00 a node-hour``.

    newuser77 item 2: a rate given under ``prices:`` (or a bought server's running cost) changed only the cost cells, and
    the row read a bare "changed" beside equal nodes, GPUs and power. A pool's ``usd_per_hour`` is its nodes'; a resize
    at the same rate says nothing here. An owned pool charged its training runs' energy (``runs_energy``) has no
    node-hour price: its month of energy is said instead (newuser89 left item 3).
    """
    if old.get("runs_energy") and new.get("runs_energy"):
        # an owned pool training jobs alone run on: its usd_per_hour is its runs' energy a month / 730 h, and racked its
        # colocation's (fix173: "its runs' energy $1,877.46 → ..." where $1,876.80 of it was the racks' rent)
        months = [_number(side.get("usd_per_month")) for side in (old, new)]
        if months[0] is None or months[1] is None or months[0] == months[1]:
            return []
        held = RACKED_RUNS_MONTH if old.get("colocation") or new.get("colocation") else "its runs' energy"
        return [f"{held} {dollars_text(months[0], 2)} → {dollars_text(months[1], 2)} a month"]
    rates = []
    for side in (old, new):
        hourly, nodes = _number(side.get("usd_per_hour")), _number(side.get("nodes"))
        if hourly is None or not nodes:
            return []
        rates.append(round(hourly / nodes, 2))
    if rates[0] == rates[1]:
        return []
    return [f"price {dollars_text(rates[0], 2)} → {dollars_text(rates[1], 2)} a node-hour"]


def _names_text(names: list[str]) -> str:
    """Host names as a status cell lists them: the first three as code, then a count."""
    shown = ", ".join(md_code(n, cell=True) for n in names[:3])
    return shown + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _pool_lines(
    pools: list[dict[str, Any]], place: dict[str, Any] | None = None, replacements: list[dict[str, Any]] | None = None
) -> list[str]:
    """The pool table: status, GPU, nodes, GPUs, power and cost a month, old -> new (``place``: :func:`_pool_status`).

    ``replacements``: the diff's (:func:`pool_replacements`), whose pools of one name on both sides read as replaced.
    """
    replaced = {
        str(pool["pool"]): _moved(entry)
        for entry in replacements or []
        for pool in entry["added"]
        if pool["pool"] in {p["pool"] for p in entry["removed"]}
    }
    lines = ["", "| pool | status | GPU | nodes | GPUs | power W | $/month |", "|---|---|---|---:|---:|---:|---:|"]
    for p in pools:
        o, n = p["old"], p["new"]
        gpu = n["gpu"] or o["gpu"]
        cells = " | ".join(
            f"{_nodes_cell(o, p) if key == 'nodes' else fmt_cell(o.get(key))} → "
            f"{_nodes_cell(n, p) if key == 'nodes' else fmt_cell(n.get(key))}"
            for key in ("nodes", "gpus", "power_w", "usd_per_month")
        )
        lines.append(f"| {md_code(p['pool'], cell=True)} | {_pool_status(p, place, replaced)} | {fmt_cell(gpu)} | {cells} |")
    return lines


def _nodes_cell(side: dict[str, Any], pool: dict[str, Any]) -> str:
    """A side's nodes, as the range it scales over (``1–3``) where either side of ``pool`` scales, else the count."""
    scales = "min_nodes" in pool["old"] or "min_nodes" in pool["new"]
    low = minimum_nodes(side)
    if not scales or low == side["nodes"]:
        return fmt_cell(side["nodes"])
    return f"{fmt_cell(low)}–{fmt_cell(side['nodes'])}"


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
    text = f"{x['model_id']} {x['precision']}{task} {deployment_layout(x)} ({x['gpus']} GPUs)"
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


def markdown_diff(result: dict[str, Any]) -> str:
    """The diff as a Markdown comment body."""
    lines = ["## specgen: fleet change", ""]
    if result.get("old_errors"):
        lines += ["OLD could not be planned; its fleet is counted as empty. specgen said:", ""]
        lines += [f"- {md_text(one_line(line))}" for line in result["old_errors"]] + [""]
    if moved := result.get("provider_change"):
        lines += [
            f"**Provider changes: {md_text(one_line(str(moved['old'])))} → {md_text(one_line(str(moved['new'])))}.** "
            "The new fleet is another provider's cluster: its pools are created there and the old ones deleted, "
            "none resized or replaced in place.",
            "",
        ]
    if (moved := result.get("region_change")) and not _named_both(moved):
        named = str(moved["old"] or moved["new"])
        lines += [
            f"**Region: {md_text(one_line(str(moved['old'] or '(unset)')))} → "
            f"{md_text(one_line(str(moved['new'] or '(unset)')))}.** "
            + (
                f"The new render names no region: its pools go to the region of the provider's configuration, and "
                f"where that is not {md_text(one_line(named))} they are created there and the old ones deleted."
                if moved["new"] is None
                else f"The old render named none (the provider configuration's): where that was not "
                f"{md_text(one_line(named))}, the pools are created there and the old ones deleted."
            ),
            "",
        ]
    elif moved:
        lines += [
            f"**Region changes: {md_text(one_line(str(moved['old'])))} → {md_text(one_line(str(moved['new'])))}.** "
            "The new fleet's nodes run in another region: its pools are created there and the old ones deleted, "
            "none resized or replaced in place; check that the region offers each instance type planned.",
            "",
        ]
    if moved := result.get("zone_change"):
        lines += [
            f"**Zone changes: {md_text(one_line(str(moved['old'])))} → {md_text(one_line(str(moved['new'])))}.** "
            "The GPU node pools move to another zone of the cluster (`nodeLocations`): each of their nodes is drained, "
            "deleted and created again there, none kept in place; check that the zone offers each machine type planned.",
            "",
        ]
    lines += capacity_change_lines(result.get("capacity_change"))
    lines += replacement_lines(result.get("replacements", []))
    lines += sharing_lines(result.get("sharing_changes", []))
    if "buy_vs_rent" in result:
        lines += [md_text(buy_vs_rent_line(result["buy_vs_rent"])), ""]
    if result.get("constants_changed"):
        lines += [md_text(constants_line(result["constants_changed"], result["totals"])), ""]
    lines += ["| | old | new | change |", "|---|---:|---:|---:|"]
    for key, row in result["totals"].items():
        lines.append(f"| {md_text(key)} | {fmt_cell(row['old'])} | {fmt_cell(row['new'])} | {signed_cell(row['delta'])} |")
    lines += _unpriced_lines(result.get("unpriced", {}))
    if "priced_elsewhere" in result:
        lines += _priced_elsewhere_lines(result["priced_elsewhere"])
    if result["pools"]:
        region = result.get("region_change")
        place = result.get("provider_change") or (region if _named_both(region) else None)
        lines += _pool_lines(result["pools"], place, result.get("replacements"))
    if result["deployments"]:
        lines += ["", "| deployment | old | new |", "|---|---|---|"]
        for d in result["deployments"]:
            changed = row_changes(d["old"], d["new"])
            marked = f"**{md_text(changed)}**; " if changed else ""
            lines.append(
                f"| {md_code(d['deployment'], cell=True)} | {_deployment_text(d['old'])} | {marked}{_deployment_text(d['new'])} |"
            )
        wider = [d for d in result["deployments"] if d.get("wider_why")]
        if wider:  # fix168: why a replica takes more GPUs (newuser95 item 4)
            lines += [""] + [f"- {md_code(d['deployment'])}: {md_text(one_line(d['wider_why']))}" for d in wider]
    if result.get("new_findings"):
        lines += ["", "New in NEW's plan:", ""]
        lines += [
            f"- **{md_text(f['level'])}** {md_code(f['code'])}"
            + (f" ({md_text(one_line(f['path']))})" if f.get("path") else "")
            + f": {md_text(one_line(f['message']))}"
            for f in result["new_findings"]
        ]
    if "rack_supply" in result:
        lines += ["", *supply_lines(result["rack_supply"])][:-1]
    if "wall_circuit" in result:
        said = {f["message"] for f in result.get("new_findings", ())}
        lines += ["", *wall_circuit_lines(result["wall_circuit"], said, lambda m: md_text(one_line(m)))][:-1]
    if result.get("racks"):
        moved = "a server moved to another rack is de-racked, re-cabled and re-powered"
        currents = any("phase_current_a" in (r["old"] or r["new"] or {}) for r in result["racks"])
        lines += ["", f"Racks whose servers{', power or currents' if currents else ' or power'} change ({moved}):", ""]
        lines += ["| rack | old | new |", "|---|---|---|"]
        lines += [f"| {_rack_name(r)} | {_rack_text(r['old'])} | {_rack_text(r['new'])} |" for r in result["racks"]]
    if not result["pools"] and not result["deployments"]:
        moved = "provider_change" in result or "zone_change" in result or _named_both(result.get("region_change"))
        same = "The same pools and deployments where they move to." if moved else _unchanged_fleet_line(result)
        fed = " and fed" if "rack_supply" in result else ""
        racked = result.get("racks") or "rack_supply" in result
        outlet = "wall_circuit" in result and same == "No change to the fleet."
        same = "The same pools and deployments, on the outlet above." if outlet else same
        lines += ["", f"The same pools and deployments, racked{fed} as above." if racked else same]
    return "\n".join(lines) + "\n"


def _unchanged_fleet_line(result: dict[str, Any]) -> str:
    """The closing line of a diff that changes no pool and no deployment: what it changes, or that it changes nothing.

    newuser91 item 9 (a diff of constants alone read as tables naming nothing): such a diff closed on "No change to
    the fleet." under totals that moved, or under "Constants changed". The totals that moved are named (old -> new),
    constants that moved none say so, and no pool or deployment table is written without a row.
    """
    moved = [
        f"{key} {fmt_cell(row['old'])} → {fmt_cell(row['new'])}"
        for key, row in result["totals"].items()
        if row["old"] != row["new"]
    ]
    if moved:
        cause = " (the constants above)" if result.get("constants_changed") else ""
        return f"No pool or deployment changed; the totals that moved{cause}: {', '.join(moved)}."
    if result.get("constants_changed"):
        return "No pool or deployment changed, and no total: the constants above move no figure this diff compares."
    return "No change to the fleet."
