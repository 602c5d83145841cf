"""A yes/no JSON Schema (2020-12) check for the keywords the workload schema uses, without jsonschema.

Most workload files are valid, and importing and building jsonschema's validator is most of the cost of
checking one. :func:`conforms` answers only "valid or not", with jsonschema's semantics for the keywords in
:data:`KEYWORDS`; a schema that uses any other keyword is not :func:`supported`, and then the caller asks
jsonschema. When a document does not conform, the caller runs jsonschema for the located errors, so the
messages are always jsonschema's. The tests hold this check to jsonschema's verdict on the shipped
examples and on generated and mutated documents.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from numbers import Number
from typing import Any

#: Keywords that say nothing about validity (annotations and identifiers).
ANNOTATIONS = frozenset({"$id", "$schema", "$comment", "title", "description", "default", "examples", "deprecated"})


def canonical(value: Any) -> str:
    """A text equal for exactly the values JSON Schema calls equal (1 == 1.0, True != 1)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, float) and value.is_integer():
        return repr(int(value))
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{canonical(v)}" for k, v in sorted(value.items())) + "}"
    return repr(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, Number) and not isinstance(value, bool)


def _is_integer(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, float) and value.is_integer())


#: jsonschema's 2020-12 type checker: an integral float is an integer, a bool is not a number.
_TYPE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "number": _is_number,
    "integer": _is_integer,
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}


def _type(rule: Any, value: Any, _: dict[str, Any]) -> bool:
    return any(_TYPE_CHECKS[name](value) for name in ([rule] if isinstance(rule, str) else rule))


def _properties(rule: dict[str, Any], value: Any, _: dict[str, Any]) -> bool:
    return not isinstance(value, dict) or all(conforms(rule[k], v) for k, v in value.items() if k in rule)


def _pattern_properties(rule: dict[str, Any], value: Any, _: dict[str, Any]) -> bool:
    if not isinstance(value, dict):
        return True
    return all(conforms(sub, v) for pattern, sub in rule.items() for k, v in value.items() if re.search(pattern, k))


def additional_keys(schema: dict[str, Any], value: dict[str, Any]) -> list[str]:
    """The keys of ``value`` that ``additionalProperties`` holds: neither a property nor a ``patternProperties`` match."""
    known, patterns = schema.get("properties", {}), schema.get("patternProperties", {})
    return [k for k in value if k not in known and not any(re.search(p, k) for p in patterns)]


def _additional(rule: Any, value: Any, schema: dict[str, Any]) -> bool:
    if not isinstance(value, dict):
        return True
    return all(conforms(rule, value[k]) for k in additional_keys(schema, value))


def _required(rule: list[str], value: Any, _: dict[str, Any]) -> bool:
    return not isinstance(value, dict) or all(k in value for k in rule)


def _enum(rule: list[Any], value: Any, _: dict[str, Any]) -> bool:
    key = canonical(value)
    return any(key == canonical(choice) for choice in rule)


def _const(rule: Any, value: Any, _: dict[str, Any]) -> bool:
    return canonical(value) == canonical(rule)


def _bound(test: Callable[[Any, Any], bool]) -> Callable[[Any, Any, dict[str, Any]], bool]:
    return lambda rule, value, _: not _is_number(value) or test(value, rule)


def _length(test: Callable[[int, int], bool], kind: type[str | list[Any]]) -> Callable[[Any, Any, dict[str, Any]], bool]:
    return lambda rule, value, _: not isinstance(value, kind) or test(len(value), rule)


def _pattern(rule: str, value: Any, _: dict[str, Any]) -> bool:
    return not isinstance(value, str) or re.search(rule, value) is not None


def _items(rule: Any, value: Any, _: dict[str, Any]) -> bool:
    return not isinstance(value, list) or all(conforms(rule, item) for item in value)


def _unique(rule: bool, value: Any, _: dict[str, Any]) -> bool:
    if not rule or not isinstance(value, list):
        return True
    keys = [canonical(item) for item in value]
    return len(set(keys)) == len(keys)


def _one_of(rule: list[Any], value: Any, _: dict[str, Any]) -> bool:
    return sum(1 for sub in rule if conforms(sub, value)) == 1


def _not(rule: Any, value: Any, _: dict[str, Any]) -> bool:
    return not conforms(rule, value)


def _property_names(rule: Any, value: Any, _: dict[str, Any]) -> bool:
    return not isinstance(value, dict) or all(conforms(rule, key) for key in value)


#: The keywords :func:`conforms` decides, each with jsonschema's meaning; a keyword's check sees its whole schema.
KEYWORDS: dict[str, Callable[[Any, Any, dict[str, Any]], bool]] = {
    "type": _type,
    "properties": _properties,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional,
    "required": _required,
    "enum": _enum,
    "const": _const,
    "minimum": _bound(lambda v, r: v >= r),
    "maximum": _bound(lambda v, r: v <= r),
    "exclusiveMinimum": _bound(lambda v, r: v > r),
    "exclusiveMaximum": _bound(lambda v, r: v < r),
    "minLength": _length(lambda n, r: n >= r, str),
    "maxLength": _length(lambda n, r: n <= r, str),
    "pattern": _pattern,
    "items": _items,
    "minItems": _length(lambda n, r: n >= r, list),
    "maxItems": _length(lambda n, r: n <= r, list),
    "uniqueItems": _unique,
    "oneOf": _one_of,
    "not": _not,
    "propertyNames": _property_names,
}
#: Keywords whose value is a schema, a list of schemas, or a mapping of names to schemas.
_SUBSCHEMA = frozenset({"additionalProperties", "items", "not", "propertyNames"})
_SUBSCHEMA_LISTS = frozenset({"oneOf"})
_SUBSCHEMA_MAPS = frozenset({"properties", "patternProperties"})
#: Keywords whose value must be a number, a count, a text or a list of names for the checks above to mean jsonschema's.
_NUMBERS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
_COUNTS = frozenset({"minLength", "maxLength", "minItems", "maxItems"})


def _well_formed(key: str, rule: Any) -> bool:
    """``rule`` has the form the check of ``key`` reads (anything else is left to jsonschema)."""
    if key in _NUMBERS:
        return _is_number(rule)
    if key in _COUNTS:
        return isinstance(rule, int) and not isinstance(rule, bool) and rule >= 0
    if key == "type":
        names = [rule] if isinstance(rule, str) else rule
        return isinstance(names, list) and all(isinstance(n, str) and n in _TYPE_CHECKS for n in names)
    if key == "required":
        return isinstance(rule, list) and all(isinstance(k, str) for k in rule)
    if key == "enum":
        return isinstance(rule, list)
    if key == "pattern":
        return isinstance(rule, str)
    if key == "uniqueItems":
        return isinstance(rule, bool)
    return True


def supported(schema: Any) -> bool:
    """Every keyword of ``schema``, at every depth, is one :func:`conforms` decides, in the form it reads."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict):
        return False
    for key, rule in schema.items():
        if key in ANNOTATIONS:
            continue
        if key not in KEYWORDS or not _well_formed(key, rule):
            return False
        if key in _SUBSCHEMA and not supported(rule):
            return False
        if key in _SUBSCHEMA_LISTS and not (isinstance(rule, list) and all(supported(s) for s in rule)):
            return False
        if key in _SUBSCHEMA_MAPS and not (isinstance(rule, dict) and all(supported(s) for s in rule.values())):
            return False
    return True


def conforms(schema: Any, value: Any) -> bool:
    """``value`` is valid against ``schema`` (a :func:`supported` one), with jsonschema's semantics."""
    if isinstance(schema, bool):
        return schema
    for key, rule in schema.items():
        check = KEYWORDS.get(key)
        if check is not None and not check(rule, value, schema):
            return False
    return True
