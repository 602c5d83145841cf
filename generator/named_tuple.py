"""``NamedTuple`` for the package's records, without ``typing``'s checks of each field's annotation at import.

``typing.NamedTuple`` turns every annotation (a string, under ``from __future__ import annotations``)
into a ``ForwardRef``, compiling it, when the class is made: about 0.16 ms a class, and ``specgen`` makes
dozens of record classes at start-up. This base makes the same ``collections.namedtuple`` class (fields,
defaults, methods, properties, docstrings, ``__annotations__`` as written, so ``get_type_hints`` works) and
leaves the annotations to the type checker, which sees ``typing.NamedTuple`` itself.
"""

from __future__ import annotations

import collections

TYPE_CHECKING = False  # typing is imported only by the type checker

__all__ = ["NamedTuple"]

if TYPE_CHECKING:
    from typing import NamedTuple
else:
    #: Names a record class may not define: namedtuple's own machinery.
    _RESERVED = frozenset({"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults", "_make",
                           "_replace", "_asdict", "_source"})  # fmt: skip

    class _NamedTupleMeta(type):
        def __new__(mcs, typename: str, bases: tuple[type, ...], ns: dict[str, object]) -> type:
            if not bases:  # the base class below
                return super().__new__(mcs, typename, bases, ns)
            if bases != (NamedTuple,):
                raise TypeError(f"{typename}: a NamedTuple record has no other base")
            annotations = ns.get("__annotations__", {})
            defaults = [ns[name] for name in annotations if name in ns]
            if any(name not in ns for name in list(annotations)[len(annotations) - len(defaults) :]):
                raise TypeError(f"{typename}: a field without a default follows one with a default")
            cls = collections.namedtuple(typename, list(annotations), defaults=defaults, module=ns["__module__"])
            cls.__annotations__ = dict(annotations)
            for key, value in ns.items():
                if key in _RESERVED:
                    raise AttributeError(f"{typename}: cannot overwrite NamedTuple attribute {key}")
                if key not in annotations and key not in ("__module__", "__annotations__"):
                    setattr(cls, key, value)
            return cls

    class NamedTuple(metaclass=_NamedTupleMeta):
        """Base of a record class: ``class Point(NamedTuple): x: int; y: int = 0``."""
