"""Reading a side of ``specgen diff``: a spec.json (or a workload, planned) into a checked plan dict, bad JSON located."""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING, Any

import click

from generator.errors import InputError, Location, SpecShapeError, UnreadableError
from generator.fleet_diff_shape import _check_plan
from generator.input_files import MAX_SPEC_BYTES, DuplicateKeyError, linked_inside, read_text_limited, short, unique_keys
from generator.json_numbers import finite_float, refuse_constant, unreadable_number
from generator.json_positions import line_column, locate, unpaired_surrogate
from generator.spec_stamp import stamp_note

if TYPE_CHECKING:
    from generator.planner.plan import Plan
    from generator.workload.models import Workload


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
    if (field := unpaired_surrogate(body, data)) is not None:
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
