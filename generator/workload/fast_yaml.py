"""A fast path for reading ordinary workload files: libyaml composes the nodes, positions come from their marks.

ruamel.yaml's pure-Python round-trip parser is most of the cost of reading a workload. Most files are
plain: mappings, lists, quoted or simple plain scalars, no anchors, aliases, tags or merge keys. For
those, PyYAML's C parser (libyaml) gives the same nodes with the same start marks, and this module
builds the same data and position tables :mod:`generator.workload.loader` builds from ruamel's
round-trip nodes. Anything else returns None and the caller reads the file with ruamel, so every
error, refusal and guarantee stays ruamel's: parse errors, duplicate keys, custom tags, aliases
(counted against the expansion budget), merge keys, non-string keys, non-finite numbers, and any
plain scalar whose type is not one of the unambiguous forms below (YAML 1.2 core schema, as ruamel
reads it: ``yes`` and ``on`` are strings; see :mod:`generator.workload.yaml_scalars`). The tests hold both
paths to the same results.
"""

from __future__ import annotations

import re
from typing import Any

from generator.workload.simple_yaml import read_simple_document
from generator.workload.yaml_scalars import Declined, Path, Positions, nesting_allowed, plain_scalar

#: The tag this parser gives every scalar, sequence and mapping without an explicit tag.
_IMPLICIT = "?implicit"
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"
#: Text read here: tabs, line feeds, printable ASCII and the printable Unicode planes; no directives (``%YAML 1.1``
#: changes how ruamel types scalars), no ``!`` (tags), no carriage returns (marks count lines differently).
_OUTSIDE = "[^\t\n\x20-\x7e\xa0-\ud7ff\ue000-\ufffd]|\ufeff|!|^%"
#: The same test for ASCII text: its small character class compiles in a 30th of the time (most files are ASCII).
_OUTSIDE_ASCII = re.compile("[^\t\n\x20-\x7e]|!|^%", re.MULTILINE)
#: Most flow brackets read here: deep flow nesting goes to ruamel, which refuses it without recursing in C.
MAX_BRACKETS = 1000


def _parser_class() -> Any:
    try:
        from yaml.cyaml import CParser  # type: ignore[import-untyped, unused-ignore]
    except ImportError:  # PyYAML built without libyaml
        return None

    class _Composer(CParser):  # type: ignore[misc]
        """libyaml's parser and composer; every untagged node gets the same marker tag, explicit tags stay visible."""

        def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
            return _IMPLICIT

        def descend_resolver(self, parent: Any, index: Any) -> None:
            """No path-dependent resolution."""

        def ascend_resolver(self) -> None:
            """No path-dependent resolution."""

    return _Composer


_COMPOSER: Any = None


def _outside(text: str) -> bool:
    """``text`` has a character, tag or directive this fast path leaves to ruamel."""
    if text.isascii():
        return _OUTSIDE_ASCII.search(text) is not None
    return re.search(_OUTSIDE, text, re.MULTILINE) is not None


def read_plain_document(text: str, max_nodes: int) -> tuple[dict[str, Any], Positions, Positions] | None:
    """(data, value positions, key positions) of an ordinary document, 1-based; None when ruamel must read it.

    The plainest documents are read without a YAML library (:mod:`generator.workload.simple_yaml`), the others by libyaml.
    """
    simple = read_simple_document(text, max_nodes)
    return simple if simple is not None else read_libyaml_document(text, max_nodes)


def read_libyaml_document(text: str, max_nodes: int) -> tuple[dict[str, Any], Positions, Positions] | None:
    """What :func:`read_plain_document` reads with libyaml: an ordinary document, or None when ruamel must read it."""
    global _COMPOSER  # noqa: PLW0603 (built once, on first use)
    if _COMPOSER is None:
        _COMPOSER = _parser_class() or False
    if not _COMPOSER or text.count("[") + text.count("{") > MAX_BRACKETS or _outside(text):
        return None
    parser = _COMPOSER(text)
    try:
        root = parser.get_single_node()
    except Exception:
        return None
    finally:
        parser.dispose()
    if root is None or root.tag != _IMPLICIT or type(root).__name__ != "MappingNode":
        return None
    positions: Positions = {(): (1, 1)}
    keys: Positions = {}
    walk = _Walk(max_nodes)
    try:
        data = walk.value(root, (), positions, keys)
    except (Declined, RecursionError):
        return None
    return data, positions, keys


class _Walk:
    """Builds the plain data, refusing (with :class:`Declined`) shared nodes and documents past the value budget."""

    def __init__(self, max_nodes: int) -> None:
        self.left = max_nodes
        self.seen: set[int] = set()

    def value(self, node: Any, path: Path, positions: Positions, keys: Positions) -> Any:
        self.left -= 1
        if self.left < 0 or node.tag != _IMPLICIT or id(node) in self.seen:  # an alias: the same node again
            raise Declined
        self.seen.add(id(node))
        kind = type(node).__name__
        if kind == "ScalarNode":
            return _scalar(node)
        nesting_allowed(path)
        if kind == "SequenceNode":
            items = []
            for i, item in enumerate(node.value):
                child = (*path, i)
                positions[child] = (item.start_mark.line + 1, item.start_mark.column + 1)
                items.append(self.value(item, child, positions, keys))
            return items
        if kind != "MappingNode":
            raise Declined
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if type(key_node).__name__ != "ScalarNode" or key_node.tag != _IMPLICIT:
                raise Declined
            key = _scalar(key_node)
            if not isinstance(key, str) or key in out or key == "<<":
                raise Declined
            child = (*path, key)
            keys[child] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            positions[child] = (value_node.start_mark.line + 1, value_node.start_mark.column + 1)
            out[key] = self.value(value_node, child, positions, keys)
        return out


def _scalar(node: Any) -> Any:
    value: str = node.value
    if node.style:  # quoted or block: a string as written (libyaml gives plain scalars the style "")
        if node.style in "|>" or node.start_mark.line == node.end_mark.line:
            return value
        raise Declined  # a quoted scalar over several lines: left to ruamel's folding
    if node.start_mark.line != node.end_mark.line or not value:
        raise Declined
    return plain_scalar(value)
