"""``generator.named_tuple.NamedTuple`` makes the class ``typing.NamedTuple`` makes, without checking annotations."""

from __future__ import annotations

import pickle
import typing

import pytest

from generator.named_tuple import NamedTuple


class Point(NamedTuple):
    """A point."""

    x: int
    y: float = 0.5
    tags: tuple[str, ...] = ()

    @property
    def norm1(self) -> float:
        """Sum of the coordinates."""
        return self.x + self.y

    def moved(self, dx: int) -> Point:
        """The point ``dx`` to the right."""
        return self._replace(x=self.x + dx)


class TypingPoint(typing.NamedTuple):
    """A point."""

    x: int
    y: float = 0.5
    tags: tuple[str, ...] = ()


def test_same_behaviour_as_typing_namedtuple() -> None:
    p, q = Point(1), TypingPoint(1)
    assert tuple(p) == tuple(q) == (1, 0.5, ())
    assert Point._fields == TypingPoint._fields
    assert Point._field_defaults == TypingPoint._field_defaults
    assert p._asdict() == q._asdict()
    assert Point(x=2, tags=("a",)) == (2, 0.5, ("a",))
    assert p.norm1 == 1.5 and p.moved(2) == Point(3)
    assert Point.__doc__ == "A point." and Point.__qualname__ == "Point" and Point.__module__ == __name__
    assert typing.get_type_hints(Point) == typing.get_type_hints(TypingPoint)
    assert pickle.loads(pickle.dumps(Point(4, 1.0))) == Point(4, 1.0)
    assert hash(p) == hash(q) and repr(p).replace("Point", "") == repr(q).replace("TypingPoint", "")


def test_refuses_what_typing_refuses() -> None:
    with pytest.raises(TypeError, match="without a default follows"):

        class Bad(NamedTuple):
            a: int = 0
            b: int  # type: ignore[misc]

    with pytest.raises(AttributeError, match="_replace"):

        class Overwrites(NamedTuple):
            a: int

            def _replace(self, **changes: object) -> Overwrites:  # type: ignore[misc]
                return self
