"""The shape a spec.json's plan must have before ``specgen diff`` reads it: each field's type, name, count and sum."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from generator.circuit_diff import check_circuits
from generator.errors import SpecShapeError
from generator.fleet_diff_cells import _number, fmt_cell
from generator.input_files import short
from generator.planner.naming import MAX_POOL_NAME
from generator.planner.plan import BATCH_RUN_KEYS
from generator.sizing.constants import Constants
from generator.spec_figures import check_count, check_figure
from generator.spec_layout import check_layout_gpus
from generator.units import HOURS_PER_MONTH
from generator.wall_circuit_diff import check_wall_circuit

if TYPE_CHECKING:
    from collections.abc import Callable


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


#: Of the details the diff shows or compares, those specgen writes as a number (or null); fix181: true was read as 1
#: (JSON's boolean is a Python int) and said as a change ("max_num_seqs 256 -> True"), a text as one too.
_NUMBER_DETAILS = (
    *(key for key in _ECHOED_DETAILS if key not in dict(_TEXT_DETAILS) and key != "runs_after"),
    "usd_per_month",
    "capex_usd",
    "requests_per_s_sustained",
    "average_requests_per_s",
    "replicas_at_average",
    "global_batch_size",
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
            for key in _NUMBER_DETAILS:
                if details.get(key) is not None:
                    check_figure(path, f"{where}.details.{key}", details[key])
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
                for key in _ECHOED_PART_SETTINGS:  # fix181: true was read as 1, as in details
                    if part.get(key) is not None:
                        check_figure(path, f"{where}.split[{j}].{key}", part[key])
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

    The planner writes the GPUs, nodes and watts as exact sums of its pools' (``planner.plan_totals.totals``), and the month
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


def _pool_usd_per_month(pool: dict[str, Any]) -> float | None:
    """A pool's cost a month: its hourly rate x 730 h, or x the hours its batch jobs' runs take.

    None for a pool rented per training run or without a price.
    """
    rate = _number(pool["usd_per_hour"])
    if rate is None or pool.get("per_job"):
        return None
    busy = _number(pool.get("busy_hours_per_month"))
    return round(rate * (HOURS_PER_MONTH if busy is None else min(busy, HOURS_PER_MONTH)), 2) + 0.0
