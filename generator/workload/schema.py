"""Validate a parsed workload against ``schemas/workload.schema.json`` (JSON Schema 2020-12).

Each violation becomes an :class:`InputError` at the line and column of the offending key or
value, with a message a person can act on (unknown keys get a "did you mean").
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any, cast

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from generator.catalog import suggest
from generator.errors import InputError
from generator.paths import schema_path
from generator.workload.loader import Document


@cache
def workload_schema() -> dict[str, Any]:
    """The workload JSON Schema, as shipped."""
    with open(schema_path("workload"), encoding="utf-8") as fh:
        schema: dict[str, Any] = json.load(fh)
    return schema


@cache
def _validator() -> Draft202012Validator:
    # the shipped schema is checked against the 2020-12 meta-schema by the tests (70 ms a run saved here)
    return Draft202012Validator(workload_schema())


def _type_name(value: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "list", dict: "mapping"}.get(
        type(value), "null"
    )


def _errors_for(doc: Document, error: ValidationError) -> list[InputError]:
    path = tuple(error.absolute_path)
    schema = error.schema if isinstance(error.schema, dict) else {}
    instance = error.instance
    if error.validator == "additionalProperties" and isinstance(instance, dict):
        known = sorted(schema.get("properties", {}))
        extra = [k for k in instance if k not in known]
        return [InputError(f"unknown field '{key}'{suggest(key, known)}", doc.locate((*path, key), key=True)) for key in extra]
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
        choices = [str(c) for c in cast("list[Any]", error.validator_value)]
        hint = suggest(str(instance), choices)
        return [InputError(f"{instance!r} is not one of {', '.join(choices)}{hint}", doc.locate(path))]
    if error.validator == "type":
        return [InputError(f"expected {error.validator_value}, got {_type_name(instance)} {instance!r}", doc.locate(path))]
    if error.validator in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        words = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}
        return [
            InputError(
                f"{instance!r} is out of range: must be {words[str(error.validator)]} {error.validator_value}", doc.locate(path)
            )
        ]
    if error.validator == "pattern":
        return [
            InputError(f"{instance!r} does not match {error.validator_value} ({schema.get('description', '')})", doc.locate(path))
        ]
    if error.validator == "const":
        return [InputError(f"must be {error.validator_value!r}, got {instance!r}", doc.locate(path))]
    return [InputError(error.message, doc.locate(path))]


def validate_document(doc: Document) -> None:
    """Raise :class:`InputError` (one) or ``MultipleInputError`` (several) for every schema violation."""
    from generator.errors import MultipleInputError

    found: list[InputError] = []
    for error in _validator().iter_errors(doc.data):
        found.extend(_errors_for(doc, error))
    if not found:
        return
    found.sort(key=lambda e: (e.location.line or 0, e.location.column or 0, e.message) if e.location else (0, 0, e.message))
    unique: list[InputError] = []
    for err in found:
        if not unique or str(unique[-1]) != str(err):
            unique.append(err)
    if len(unique) == 1:
        raise unique[0]
    raise MultipleInputError(unique)
