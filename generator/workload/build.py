"""Build typed models (named tuples) from a schema-checked document.

The workload schema has already decided what is valid; this turns the plain data into the models the
planner reads, the way a validating model library would, without its start-up cost: an ``int`` in a
``float`` field becomes a float (``2`` prints as ``2.0``), an integral float in an ``int`` field an int,
lists become tuples, mappings become nested models, a union of models is chosen by the keys only one of
its members has, and a ``Literal`` keeps its declared value. A document key ``$name`` is read into the
field ``name_``. Anything that still does not fit (the schema and the models disagree, or a caller passes
unchecked data) raises :class:`ShapeError` with the path of the value, which the loader turns into
``file:line:col``. Field annotations are resolved once per class.
"""

from __future__ import annotations

import math
import types
from collections.abc import Mapping
from functools import cache
from typing import Any, Literal, TypeVar, Union, cast, get_args, get_origin, get_type_hints

from generator.errors import ShapeError
from generator.named_tuple import NamedTuple

T = TypeVar("T")
Path = tuple[str | int, ...]


class _Field(NamedTuple):
    name: str
    hint: Any
    required: bool


def build(cls: type[T], data: Any, path: Path = ()) -> T:
    """``data`` (plain YAML/JSON values) as a ``cls``; :class:`ShapeError` names the path of what does not fit."""
    return cast(T, _convert(cls, data, path))


@cache
def _fields(cls: type) -> dict[str, _Field]:
    """A named tuple's fields by document key (``$schema`` for ``schema_``)."""
    hints = get_type_hints(cls)
    defaults = cls._field_defaults  # type: ignore[attr-defined]
    fields = {}
    for name in cls._fields:  # type: ignore[attr-defined]
        key = f"${name[:-1]}" if name.endswith("_") else name
        fields[key] = _Field(name, hints[name], name not in defaults)
    return fields


def _is_model(hint: Any) -> bool:
    return isinstance(hint, type) and issubclass(hint, tuple) and hasattr(hint, "_fields")


def _convert(hint: Any, value: Any, path: Path) -> Any:
    if _is_model(hint):
        return _model(hint, value, path)
    origin = get_origin(hint)
    if origin is Union or origin is types.UnionType:
        return _union(get_args(hint), value, path)
    if origin is Literal:
        return _literal(get_args(hint), value, path)
    if origin is tuple:
        item, *rest = get_args(hint)
        if rest != [Ellipsis]:
            raise TypeError(f"only tuple[X, ...] fields are built, not {hint}")
        if not isinstance(value, (list, tuple)):
            raise ShapeError(f"expected a list, got {_kind(value)}", path)
        return tuple(_convert(item, v, (*path, i)) for i, v in enumerate(value))
    if origin is dict or origin is Mapping:
        key_type, item = get_args(hint)
        if not isinstance(value, Mapping):
            raise ShapeError(f"expected a mapping, got {_kind(value)}", path)
        out = {}
        for k, v in value.items():
            out[_convert(key_type, k, (*path, k))] = _convert(item, v, (*path, k))
        return out
    return _scalar(hint, value, path)


def _model(cls: type, value: Any, path: Path) -> Any:
    if isinstance(value, cls):
        return value
    if not isinstance(value, Mapping):
        raise ShapeError(f"expected a mapping, got {_kind(value)}", path)
    fields = _fields(cls)
    kwargs: dict[str, Any] = {}
    for key, item in value.items():
        spec = fields.get(key)
        if spec is None:
            raise ShapeError(f"unknown field {key!a}", (*path, key))
        kwargs[spec.name] = _convert(spec.hint, item, (*path, key))
    for key, spec in fields.items():
        if spec.required and key not in value:
            raise ShapeError(f"missing required field '{key}'", path)
    return cls(**kwargs)


def _union(members: tuple[Any, ...], value: Any, path: Path) -> Any:
    if value is None and type(None) in members:
        return None
    options = [m for m in members if m is not type(None)]
    if len(options) == 1:
        return _convert(options[0], value, path)
    if all(_is_model(m) for m in options) and isinstance(value, Mapping):
        return _convert(_member_by_keys(options, value, path), value, path)
    raise TypeError(f"no rule chooses a member of {members}")


def _member_by_keys(options: list[Any], value: Mapping[str, Any], path: Path) -> Any:
    """The one union member that has a key of ``value`` no other member has."""
    keys = [set(_fields(m)) for m in options]
    own = [{k for k in mine if sum(k in other for other in keys) == 1} for mine in keys]
    chosen = [m for m, distinct in zip(options, own, strict=True) if distinct & value.keys()]
    if len(chosen) != 1:
        names = sorted(set().union(*own))
        raise ShapeError(f"give exactly one of {', '.join(names)}", path)
    return chosen[0]


def _literal(choices: tuple[Any, ...], value: Any, path: Path) -> Any:
    for choice in choices:
        if type(choice) is type(value) and choice == value:
            return choice
        if isinstance(value, float) and type(choice) is int and value == choice:
            return choice
    raise ShapeError(f"{value!r} is not one of {', '.join(str(c) for c in choices)}", path)


def _scalar(hint: Any, value: Any, path: Path) -> Any:
    if hint is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                number = float(value)
            except OverflowError:
                raise ShapeError("is too large for a number (beyond ±1.8e308)", path) from None
            if not math.isfinite(number):
                raise ShapeError(f"{value!r} is not a finite number", path)
            return number
        raise ShapeError(f"expected number, got {_kind(value)}", path)
    if hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise ShapeError(f"expected integer, got {_kind(value)}", path)
    if hint is str or hint is bool:
        if isinstance(value, hint):
            return value
        raise ShapeError(f"expected {'string' if hint is str else 'boolean'}, got {_kind(value)}", path)
    raise TypeError(f"no rule builds a {hint!r} field")


def _kind(value: Any) -> str:
    name = {bool: "boolean", int: "integer", float: "number", str: "string", list: "list", dict: "mapping"}.get(type(value))
    return f"{name} {value!r}" if name in ("boolean", "integer", "number", "string") else (name or "null")
