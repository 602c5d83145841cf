"""Validate a parsed workload against ``schemas/workload.schema.json`` (JSON Schema 2020-12).

Each violation becomes an :class:`InputError` at the line and column of the offending key or
value, with a message a person can act on (unknown keys get a "did you mean").
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING, Any, cast

from generator.catalog import suggest
from generator.errors import InputError, Location
from generator.input_files import short
from generator.paths import schema_path
from generator.workload.host_network import ADDRESS_FIELDS, address_form_problem
from generator.workload.loader import Document
from generator.workload.schema_subset import additional_keys, canonical, conforms, supported

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

#: What the schema's patterns end with so that ``$`` cannot match before a final newline (Python's ``re``).
NO_TRAILING_NEWLINE = "(?!\\n)"


@cache
def workload_schema() -> dict[str, Any]:
    """The workload JSON Schema, as shipped."""
    with open(schema_path("workload"), encoding="utf-8") as fh:
        schema: dict[str, Any] = json.load(fh)
    return schema


@cache
def _subset_schema() -> bool:
    """The schema uses only keywords :func:`conforms` decides (otherwise every document goes to jsonschema)."""
    return supported(workload_schema())


#: Most schema errors reported for one file; the rest are counted, not listed.
MAX_ERRORS = 20
#: Errors gathered (then sorted by position) before the first MAX_ERRORS are kept.
_COLLECTED = 1000


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """``uniqueItems`` in linear time (jsonschema's own is quadratic on lists of mixed types)."""
    from jsonschema.exceptions import ValidationError

    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[str] = set()
    for item in instance:
        key = canonical(item)
        if key in seen:
            yield ValidationError(f"has non-unique elements ({short(item)} is repeated)")
            return
        seen.add(key)


@cache
def _validator() -> Any:
    from jsonschema import Draft202012Validator, validators

    # the shipped schema is checked against the 2020-12 meta-schema by the tests (70 ms a run saved here)
    linear = validators.extend(Draft202012Validator, {"uniqueItems": _unique_items})  # type: ignore[no-untyped-call]
    return linear(workload_schema())


def _type_name(value: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "list", dict: "mapping"}.get(
        type(value), "null"
    )


def _as_written(value: Any) -> str:
    """A value as YAML writes it where Python's spelling differs (``true``, ``false``, ``null``), else :func:`short`."""
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    return short(value)


def _enum_text(choice: Any) -> str:
    """A choice as the enum error lists it: a text bare, anything else as YAML writes it."""
    return choice if isinstance(choice, str) else _as_written(choice)


#: Words YAML 1.1 reads as booleans and YAML 1.2 (this reader) as text (https://yaml.org/type/bool.html).
_YAML11_BOOLEANS = {"yes": True, "y": True, "on": True, "no": False, "n": False, "off": False}


def _unquote_hint(error: ValidationError) -> str:
    """``; write 3 without quotes`` where a quoted value would be what the schema takes unquoted, else ""."""
    instance = error.instance
    if not isinstance(instance, str) or not isinstance(error.schema, dict):
        return ""
    said = _YAML11_BOOLEANS.get(instance.lower())
    if said is not None and conforms(error.schema, said):  # hostile91: 'buy: yes' read "expected boolean, got 'yes'"
        return f"; {instance} is a boolean to YAML 1.1 readers only (text to YAML 1.2, as here): write {json.dumps(said)}"
    try:
        value = json.loads(instance)
    except ValueError:
        return ""
    if isinstance(value, (dict, list, str)) or not conforms(error.schema, value):
        return ""
    return f"; write {json.dumps(value)} without quotes"


def unknown_field(path: tuple[str | int, ...]) -> tuple[tuple[str | int, ...], str] | None:
    """The path to the first key of ``path`` the schema refuses as unknown, and its did-you-mean; None where it has each.

    newuser89 item 5: ``learning_rate: 2e-4`` was refused for its YAML 1.1 number form ("write it in plain digits"),
    and once rewritten refused again as an unknown field: the loader says the unknown field with it. Where the
    schema's shape is not plain properties (a pattern, a map of any keys), the key counts as known.
    """
    node: Any = workload_schema()
    for depth, step in enumerate(path):
        if not isinstance(node, dict):
            return None
        if isinstance(step, int):
            node = node.get("items")
            continue
        properties, patterns = node.get("properties", {}), node.get("patternProperties", {})
        if step in properties:
            node = properties[step]
        elif any(re.search(pattern, step) for pattern in patterns):
            return None
        elif node.get("additionalProperties") is False and properties:
            parent = path[:depth]
            hint = _hint(parent, step) or _one_level_up(parent, step) or suggest(step, sorted(properties))
            return path[: depth + 1], hint
        else:
            node = node.get("additionalProperties")
    return None


#: A number written with a unit or separators, as people say it (``4k``, ``50M``, ``$5,000``): digits, then a scale.
_WRITTEN_NUMBER = re.compile(r"\$?\s*([0-9][0-9,]*(?:\.[0-9]+)?)\s*([kKmMbB]?)\s*(?:USD|usd)?")
_SCALES = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9}


def _digits_hint(error: ValidationError) -> str:
    """``; write 5000`` where a number was written as text with a scale or separators (newuser89 item 2), else ""."""
    instance, schema = error.instance, error.schema
    if not isinstance(instance, str) or not isinstance(schema, dict) or schema.get("type") not in ("integer", "number"):
        return ""
    return written_number_hint(instance, str(error.absolute_path[-1]) if error.absolute_path else "")


def written_number_hint(text: str, field: str) -> str:
    """``; write ... 5000`` where ``text`` writes a number of field ``field`` with a scale or separators, else "".

    A ``k`` of tokens is 1,000 or, as context lengths count it, 1,024: both are said where ``field`` names tokens or a
    length. The workload's schema errors and ``specgen estimate``'s whole-number options both say it.
    """
    written = _WRITTEN_NUMBER.fullmatch(text.strip())
    if written is None or (written.group(0) == written.group(1) and "," not in text):
        return ""  # plain digits in quotes: the unquote hint says it
    number, scale = float(written.group(1).replace(",", "")), written.group(2).lower()
    value = number * _SCALES[scale]
    if scale == "k" and ("token" in field or "length" in field) and float(number * 1024).is_integer():
        return f"; write the number in full, digits only: {value:.0f}, or {number * 1024:.0f} where a k is 1,024"
    return f"; write the number in full, digits only: {value:.0f}" if value.is_integer() else ""


#: Fields a user looks for where they are not: the field that says it (newuser26 item 5: ``hardware.region``).
_ELSEWHERE = {"region": "kubernetes.location", "location": "kubernetes.location", "zone": "kubernetes.zone"}


def _hint(path: tuple[object, ...], key: str) -> str:
    """Where a field the schema has under another name or block is set; empty when it is not one of those."""
    where = _ELSEWHERE.get(key.lower())
    if where is None or ".".join(map(str, (*path, key))) == where:
        return ""
    return f"; the cluster's {key.lower()} is set as {where} (the cloud region that prices the plan)"


def _one_level_up(path: tuple[object, ...], key: str) -> str:
    """Where ``key`` is a field of the block that holds ``path``'s (newuser48 item 8: ``slo.min_replicas``); else empty."""
    if not path:
        return ""
    # newuser93: a list item's block (hardware.inventory[0]) is held by a list, which has no fields: the block one level
    # up from the item is the one holding the list (``buy`` of hardware, written inside an inventory entry)
    in_list = isinstance(path[-1], int) and len(path) > 1
    holder = path[:-2] if in_list else path[:-1]
    schema: Any = workload_schema()
    for step in holder:
        schema = schema.get("items", {}) if isinstance(step, int) else schema.get("properties", {}).get(step, {})
    if key not in schema.get("properties", {}):
        return ""
    parent = ".".join(str(s) if not isinstance(s, int) else f"[{s}]" for s in holder).replace(".[", "[")
    if in_list:
        return f"; {key} is a field of {parent or 'the top level'} (the block holding the list), not of {path[-2]}[{path[-1]}]"
    return f"; {key} is a field of {parent or 'the top level'} (one level up), not of {path[-1]}"


#: A value the field refuses that another field takes, and where (fuzz35 item 9: ``kubernetes.gpu_sharing: {strategy:
#: none}`` read only "not one of"): (field path, value in lower case) -> what to say.
_VALUE_ELSEWHERE: dict[tuple[tuple[object, ...], str], str] = {
    (("kubernetes", "gpu_sharing", "strategy"), "none"): (
        "; strategy none is a deployment's own setting (deployments[].gpu_sharing: {strategy: none} keeps that "
        "deployment on whole GPUs where kubernetes.gpu_sharing shares the rest); for whole GPUs everywhere, leave "
        "kubernetes.gpu_sharing out"
    ),
    **{
        # newuser64 item 12: 'N+1' was offered 'N+N', which is 2N, another topology
        (("hardware", "rack_circuits", "redundancy"), spelled): (
            f"; {spelled.upper()} (distributed redundancy: several feeds, any {spelled[-1]} of which may be lost) is not "
            "modelled; 2N and N+N (the same: A+B feeds, either side alone carrying the rack) and none (every circuit "
            "counts) are: for a distributed contract give none and count only the circuits left when feeds are lost"
        )
        for spelled in ("n+1", "n+2")
    },
    # newuser89 item 3: what another cloud or another field calls it (keyed without list indices: a deployment's field)
    **{
        (("deployments", "capacity_type"), spelled): (
            f"; {said}, capacity the cloud may reclaim, is capacity_type: spot here (AWS Spot Instances, GCP Spot VMs, "
            "Azure Spot Virtual Machines)"
        )
        for spelled, said in (("preemptible", "preemptible"), ("low-priority", "low-priority"), ("lowpriority", "low-priority"))
    },
    **{
        (("deployments", "training", "framework"), spelled): (
            f"; {spelled} is a training method (training.method: {spelled}); framework names the library that trains"
        )
        for spelled in ("full", "lora", "qlora")
    },
    **{
        # newuser87 item 1: 'aks' was offered 'aws' (one letter off), the wrong cloud; a managed Kubernetes service or
        # the cloud's maker is the provider that runs it
        (("hardware", "provider"), spelled): f"; {said}: give provider: {provider}"
        for spelled, said, provider in (
            ("aks", "AKS is Azure's Kubernetes service", "azure"),
            ("microsoft", "Microsoft's cloud is Azure", "azure"),
            ("eks", "EKS is AWS's Kubernetes service", "aws"),
            ("ec2", "EC2 is AWS's", "aws"),
            ("amazon", "Amazon's cloud is AWS", "aws"),
            ("gke", "GKE is Google Cloud's Kubernetes service", "gcp"),
            ("gce", "Compute Engine is Google Cloud's", "gcp"),
            ("google", "Google's cloud is Google Cloud", "gcp"),
        )
    },
}


def _constant_range_error(path: tuple[object, ...], value: object) -> str | None:
    """A named constant's own range, where the schema's bounds for every constant refuse its value; else None.

    fuzz32 item 10: ``amortization_months: -3`` read "must be >= 0" (the schema's bound for all constants) though 0
    is refused too, by the constant's own range, and at another column: one check speaks, at the value.
    """
    from generator.sizing.constants import Constants, with_overrides

    if len(path) != 2 or path[0] != "constants" or path[1] not in Constants._field_defaults:
        return None
    try:
        with_overrides({str(path[1]): value})
    except InputError as exc:
        return exc.message
    except (OverflowError, ValueError):  # an integer past a float's range: the schema's own bound says it
        return None
    return None


#: An unknown key shown in its error: what a mistyped field name looks like (letters, digits, ``_ - . /`` and spaces).
_FIELD_LIKE = re.compile(r"[\w .\-/]{1,64}")


def _unshown_key(doc: Document, path: tuple[Any, ...], key: str) -> InputError:
    """The error of an unknown key that no field name could be, its text not echoed (hostile79 item 14).

    A workload path that is a link to ``/etc/shadow`` had each account's line (its password hash with it) echoed into
    the CI log as "unknown field 'root:$6$...'"; the line and column say where it is.
    """
    text = str(key)
    odd = next((ch for ch in text if not _FIELD_LIKE.fullmatch(ch)), None)
    why = f"it holds {odd!a}, which no field name does" if odd is not None else "no field name is that long"
    where = doc.locate((*path, key), key=True)  # its line and column; its path without the key's text
    shown = Location(where.file, where.line, where.column, doc.locate(path).path if path else "")
    return InputError(f"unknown field (a key of {len(text):,} characters, not shown: {why})", shown)


def _errors_for(doc: Document, error: ValidationError) -> list[InputError]:
    path = tuple(error.absolute_path)
    schema = error.schema if isinstance(error.schema, dict) else {}
    instance = error.instance
    if error.validator == "additionalProperties" and isinstance(instance, dict):
        known = sorted(schema.get("properties", {}))
        extra = additional_keys(schema, instance)
        return [
            # ascii: a key that looks like a known one but is not ('n\u0430me', a Cyrillic a) shows what differs (fuzz27 L9)
            InputError(
                f"unknown field {key!a}{_hint(path, key) or _one_level_up(path, key) or suggest(key, known)}",
                doc.locate((*path, key), key=True),
            )
            if _FIELD_LIKE.fullmatch(str(key))
            else _unshown_key(doc, path, key)
            for key in extra
        ]
    if error.validator == "required":
        missing = str(error.message).split("'")[1] if "'" in str(error.message) else str(error.message)
        return [InputError(f"missing required field '{missing}'", doc.locate(path))]
    if (
        error.validator == "oneOf"
        and isinstance(instance, dict)
        and {"inference", "training"} & set(schema.get("properties", {}))
    ):
        both = "inference" in instance and "training" in instance
        text = "give either 'inference' or 'training', not both" if both else "needs an 'inference' or a 'training' section"
        return [InputError(text, doc.locate(path))]
    if error.validator == "enum":
        if "type" in schema and not conforms({"type": schema["type"]}, instance):
            return []  # the type error at the same value says it (fuzz20 item 17: "'3' ... did you mean '3'?")
        choices = [str(c) for c in cast("list[Any]", error.validator_value)]
        field = tuple(step for step in path if not isinstance(step, int))  # deployments[2].x is deployments.x
        hint = _VALUE_ELSEWHERE.get((field, str(instance).lower())) or suggest(str(instance), choices)
        return [InputError(f"{short(instance)} is not one of {', '.join(choices)}{hint}", doc.locate(path))]
    if error.validator == "type":
        got = "null" if instance is None else f"{_type_name(instance)} {_as_written(instance)}"  # fuzz31 item 10
        # newuser89 item 4: `gradient_checkpointing: true` (the Trainer's spelling) read "expected string" and no choices
        listed = f"; give one of {', '.join(map(_enum_text, schema['enum']))}" if schema.get("enum") else ""
        text = f"expected {error.validator_value}, got {got}{_unquote_hint(error) or _digits_hint(error) + listed}"
        return [InputError(text, doc.locate(path))]
    if error.validator in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        if (ranged := _constant_range_error(path, instance)) is not None:
            return [InputError(ranged, doc.locate(path))]
        words = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}
        return [
            InputError(
                f"{short(instance)} is out of range: must be {words[str(error.validator)]} {error.validator_value}",
                doc.locate(path),
            )
        ]
    # fuzz30 L7: an address field's regular expression told a reader less than words do
    problem = address_form_problem(str(path[-1]), instance) if _is_host_address(path) and isinstance(instance, str) else None
    if error.validator == "pattern" and problem is not None:
        return [InputError(f"{short(instance)} {problem}", doc.locate(path))]
    if error.validator == "pattern" and path and path[-1] in SECRET_NAME_FIELDS:  # fuzz31 item 9: 'a..b' passed
        return [InputError(f"{short(instance)} is not a Kubernetes Secret name: {SECRET_NAME_RULE}", doc.locate(path))]
    if error.validator == "pattern":
        # the pattern as a reader writes it: its trailing-newline guard is the matcher's detail (fuzz22 item 10)
        pattern = str(error.validator_value).removesuffix(NO_TRAILING_NEWLINE)
        # hostile82 item 5: a key's pattern (propertyNames) has no description of its own, and read "... ()"
        what = "key " if "propertyNames" in error.schema_path else ""
        about = f" ({schema['description']})" if schema.get("description") else ""
        if (cased := _case_problem(instance, str(error.validator_value))) is not None:
            return [InputError(f"{what}{short(instance)} {cased}{about}", doc.locate(path))]
        odd = _lookalikes(instance)
        return [InputError(f"{what}{short(instance)} does not match {pattern}{odd}{about}", doc.locate(path))]
    if error.validator == "not":  # a value the field refuses by name (fuzz25 M5: jsonschema's own words were shown)
        return [InputError(f"{short(instance)} is refused here ({schema.get('description', '')})", doc.locate(path))]
    if error.validator == "const":  # newuser53 item 10: `version: true` read "got True", Python's spelling
        return [InputError(f"must be {_as_written(error.validator_value)}, got {_as_written(instance)}", doc.locate(path))]
    limits = {
        "maxLength": "longer than {} characters",
        "minLength": "shorter than {} character(s)",
        "maxItems": "has more than {} items",
        "minItems": "has fewer than {} item(s)",
    }
    if error.validator in limits and isinstance(instance, (str, list)):
        text = limits[str(error.validator)].format(error.validator_value)
        message = f"{short(instance)} is {text}" if isinstance(instance, str) else f"{text} ({len(instance):,})"
        return [InputError(message, doc.locate(path))]
    # the validator's own words, cut, not quoted as a value (fz62 item 4: "has non-unique elements (...)" in quotes)
    text = str(error.message)
    return [InputError(text if len(text) <= 200 else text[:200] + "...", doc.locate(path))]


#: Fields naming a Kubernetes Secret, and the rule such a name follows (a DNS-1123 subdomain, as the API server checks
#: object names: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#dns-subdomain-names).
SECRET_NAME_FIELDS = frozenset({"image_pull_secret", "bmc_credentials_secret"})
SECRET_NAME_RULE = (
    "lower-case letters, digits, '-' and '.', each part between dots starting and ending with a letter or digit "
    "(a DNS-1123 subdomain, at most 253 characters)"
)


def _is_host_address(path: tuple[object, ...]) -> bool:
    """Whether ``path`` is an owned host's IPv4 field: ``hardware.inventory[j].hosts[k].<ADDRESS_FIELDS>``."""
    return len(path) == 6 and path[:2] == ("hardware", "inventory") and path[3] == "hosts" and path[5] in ADDRESS_FIELDS


def _oversized(doc: Document, schema: Any, data: Any, path: tuple[str | int, ...]) -> Iterator[InputError]:
    """Lists longer than their ``maxItems``, found in one pass that looks only where the schema has limits."""
    if not isinstance(schema, dict):
        return
    if isinstance(data, list):
        limit = schema.get("maxItems")
        if isinstance(limit, int) and len(data) > limit:
            yield InputError(f"has {len(data):,} items, more than the {limit:,} allowed", doc.locate(path))
            return
        for i, item in enumerate(data):
            yield from _oversized(doc, schema.get("items"), item, (*path, i))
    elif isinstance(data, dict):
        properties = schema.get("properties", {})
        for key, value in data.items():
            yield from _oversized(doc, properties.get(key, schema.get("additionalProperties")), value, (*path, key))


def validate_document(doc: Document) -> None:
    """Raise :class:`InputError` (one) or ``MultipleInputError`` (several) for every schema violation."""
    from generator.errors import MultipleInputError

    oversized = list(_oversized(doc, workload_schema(), doc.data, ()))
    if oversized:  # a list past its limit is refused before its items are validated one by one
        raise oversized[0] if len(oversized) == 1 else MultipleInputError(oversized[:MAX_ERRORS])
    if _subset_schema() and conforms(workload_schema(), doc.data):
        return  # valid, so jsonschema (imported only to locate errors) would find nothing
    found: list[InputError] = []
    more = 0
    for error in _validator().iter_errors(doc.data):
        if len(found) >= _COLLECTED:
            more += 1
            continue
        found.extend(_errors_for(doc, error))
    if not found:
        return
    found.sort(key=lambda e: (e.location.line or 0, e.location.column or 0, e.message) if e.location else (0, 0, e.message))
    unique: list[InputError] = []
    for err in found:
        if not unique or str(unique[-1]) != str(err):
            unique.append(err)
    if more or len(unique) > MAX_ERRORS:
        unique = unique[:MAX_ERRORS]
        unique.append(InputError(f"more schema errors not listed (the first {MAX_ERRORS} are shown)", Location(doc.file)))
    if len(unique) == 1:
        raise unique[0]
    raise MultipleInputError(unique)


def _case_problem(instance: object, pattern: str) -> str | None:
    """``is written in lower case here: us-central1-a`` where only the case keeps a text from its pattern; None else.

    hostile88: ``kubernetes.zone: US-CENTRAL1-A`` read "does not match ^[a-z][a-z0-9-]*$", where ``kubernetes.location:
    Us-Central1`` (a pattern that takes capitals) read "'Us-Central1' is written us-central1 (lower case)".
    """
    if not isinstance(instance, str) or instance == instance.lower() or re.search(pattern, instance.lower()) is None:
        return None
    return f"is written in lower case here: {short(instance.lower())}"


def _lookalikes(instance: object) -> str:
    """The characters outside ASCII of a text an ASCII pattern refused (a Cyrillic ``с`` in a zone), named; '' else."""
    if not isinstance(instance, str):
        return ""
    from generator.catalog.id_hints import lookalike_note  # only on a refusal

    return lookalike_note(instance, "this field")
