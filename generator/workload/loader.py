"""Read a workload YAML file safely, keeping the line and column of every node.

ruamel.yaml's round-trip parser records positions; it rejects duplicate keys. Custom tags are
refused (the file is data, never objects), and the result is converted to plain Python values.
"""

from __future__ import annotations

from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq, TaggedScalar
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from generator.errors import InputError, Location

#: A path into the document: mapping keys and sequence indexes.
Path = tuple[str | int, ...]


def format_path(path: Path) -> str:
    """``('deployments', 0, 'model')`` -> ``deployments[0].model``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


class Document:
    """A parsed YAML document: plain data plus the position of each key and value."""

    def __init__(self, file: str, data: Any, positions: dict[Path, tuple[int, int]], key_positions: dict[Path, tuple[int, int]]):
        """Keep the file name, the data and the 1-based (line, column) maps."""
        self.file = file
        self.data = data
        self._positions = positions
        self._key_positions = key_positions

    def locate(self, path: Path, key: bool = False) -> Location:
        """Location of the value (or, with ``key``, of the key) at ``path``; the nearest known parent otherwise."""
        table = self._key_positions if key else self._positions
        probe = path
        while probe:
            if probe in table:
                line, col = table[probe]
                return Location(self.file, line, col, format_path(path))
            if probe in self._positions:
                line, col = self._positions[probe]
                return Location(self.file, line, col, format_path(path))
            probe = probe[:-1]
        line, col = self._positions.get((), (1, 1))
        return Location(self.file, line, col, format_path(path))


def _plain(
    node: Any, path: Path, doc_file: str, positions: dict[Path, tuple[int, int]], keys: dict[Path, tuple[int, int]]
) -> Any:
    tag = getattr(getattr(node, "tag", None), "value", None)
    if isinstance(node, TaggedScalar) or (tag and not str(tag).startswith("tag:yaml.org,2002:")):
        line, col = positions.get(path, (1, 1))
        raise InputError(f"custom YAML tag {tag!r} is not allowed", Location(doc_file, line, col, format_path(path)))
    if isinstance(node, CommentedMap):
        out: dict[str, Any] = {}
        for key in node:
            if not isinstance(key, str):
                kline, kcol = node.lc.key(key)
                raise InputError(
                    f"mapping keys must be strings, got {key!r}", Location(doc_file, kline + 1, kcol + 1, format_path(path))
                )
            child = (*path, key)
            kline, kcol = node.lc.key(key)
            vline, vcol = node.lc.value(key)
            keys[child] = (kline + 1, kcol + 1)
            positions[child] = (vline + 1, vcol + 1)
            out[key] = _plain(node[key], child, doc_file, positions, keys)
        return out
    if isinstance(node, CommentedSeq):
        items = []
        for i, item in enumerate(node):
            child = (*path, i)
            line, col = node.lc.item(i)
            positions[child] = (line + 1, col + 1)
            items.append(_plain(item, child, doc_file, positions, keys))
        return items
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    line, col = positions.get(path, (1, 1))
    raise InputError(f"unsupported YAML value of type {type(node).__name__}", Location(doc_file, line, col, format_path(path)))


def parse_yaml(text: str, file: str) -> Document:
    """Parse one YAML document; errors carry ``file:line:col``."""
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    try:
        docs = list(yaml.load_all(text))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        col = mark.column + 1 if mark else None
        problem = " ".join(str(p).strip() for p in (exc.context, exc.problem) if p)
        problem = problem.splitlines()[0] if problem else "invalid YAML"
        if "duplicate key" in str(exc):
            problem = "duplicate key " + str(exc).split("found duplicate key", 1)[-1].split("with value", 1)[0].strip()
        raise InputError(f"YAML syntax error: {problem}", Location(file, line, col)) from None
    except YAMLError as exc:
        raise InputError(f"YAML error: {str(exc).splitlines()[0]}", Location(file)) from None
    docs = [d for d in docs if d is not None]
    if not docs:
        raise InputError("the file is empty; expected a workload mapping (version, name, deployments)", Location(file, 1, 1))
    if len(docs) > 1:
        raise InputError("expected one YAML document, found several", Location(file, 1, 1))
    root = docs[0]
    positions: dict[Path, tuple[int, int]] = {(): (1, 1)}
    keys: dict[Path, tuple[int, int]] = {}
    if not isinstance(root, CommentedMap):
        kind = "a list" if isinstance(root, CommentedSeq) else f"a single {type(root).__name__} value"
        raise InputError(f"the top level must be a mapping (version, name, deployments), got {kind}", Location(file, 1, 1))
    return Document(file, _plain(root, (), file, positions, keys), positions, keys)


def read_yaml(path: str) -> Document:
    """Read and parse a YAML file."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        raise InputError("file not found", Location(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read file: {exc}", Location(path)) from None
    return parse_yaml(text, path)
