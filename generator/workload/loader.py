"""Read a workload YAML file safely, keeping the line and column of every node.

ruamel.yaml's round-trip parser records positions; it rejects duplicate keys. Custom tags are
refused (the file is data, never objects), and the result is converted to plain Python values.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from generator.errors import InputError, Location
from generator.input_files import MAX_WORKLOAD_BYTES, linked_inside, read_text_limited, short
from generator.workload.fast_yaml import read_plain_document
from generator.workload.yaml_numbers import (
    PLAIN_DIGITS,
    PlainNumberText,
    float_form_problem,
    int_form_problem,
    number_keeping_constructor,
    text_form_problem,
)
from generator.workload.yaml_scalars import MAX_NESTING

#: A path into the document: mapping keys and sequence indexes.
Path = tuple[str | int, ...]

#: Most values one document may expand to: aliases can make a small file huge ("billion laughs").
MAX_NODES = 20_000
#: Most lines, commas and flow brackets a workload may have: bounds the parser's work (pure-Python YAML, about 10k
#: values/s; each opening bracket is a value, and ruamel's scanner works per token in proportion to the flow depth).
MAX_YAML_PIECES = 5_000
#: The opening and closing flow brackets, which nest.
_FLOW_BRACKETS = re.compile(r"[\[\]{}]")
#: Deepest flow-bracket nesting (``[[...]]``, ``{a: {b: ...}}``) read: a workload written as JSON nests about six deep,
#: and ruamel's scanner works per token in proportion to it (fuzz25 H1: 4,900 lines 98 deep took 162 s).
MAX_FLOW_NESTING = 20


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


def _own_position(node: Any) -> tuple[int, int]:
    """0-based (line, column) where a mapping or sequence itself starts."""
    lc = getattr(node, "lc", None)
    line = getattr(lc, "line", None)
    col = getattr(lc, "col", None)
    return (line or 0, col or 0)


def _recorded(node: Any, key: Any, value: bool, seen: frozenset[int] = frozenset()) -> tuple[int, int] | None:
    """0-based position ruamel recorded for ``key`` of ``node``, looking into ``<<`` merged mappings too."""
    data = getattr(getattr(node, "lc", None), "data", None) or {}
    record = data.get(key)
    if record is not None and len(record) >= 4:
        return (record[2], record[3]) if value else (record[0], record[1])
    for merged in getattr(node, "merge", None) or ():
        source = merged[1] if isinstance(merged, tuple) else merged
        if id(source) in seen:
            continue
        found = _recorded(source, key, value, seen | {id(node)})
        if found is not None:
            return found
    return None


def _key_position(node: Any, key: Any, value: bool = False) -> tuple[int, int]:
    """0-based position of a key (or its value): recorded, else from a merged mapping, else the mapping's own."""
    return _recorded(node, key, value) or _own_position(node)


def _item_position(node: Any, index: int) -> tuple[int, int]:
    data = getattr(getattr(node, "lc", None), "data", None) or {}
    record = data.get(index)
    return (record[0], record[1]) if record is not None and len(record) >= 2 else _own_position(node)


class _Budget:
    """Counts the values a document expands to, so aliases cannot blow it up."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.left = MAX_NODES

    def take(self, path: Path, positions: dict[Path, tuple[int, int]]) -> None:
        self.left -= 1
        if self.left < 0:
            line, col = positions.get(path, (1, 1))
            raise InputError(
                f"the document expands to more than {MAX_NODES:,} values (through YAML aliases?); refusing to read it",
                Location(self.file, line, col, format_path(path)),
            )


_YAML_TAG_PREFIX = "tag:yaml.org,2002:"
#: The YAML core schema's tags: they only say what the value already is (``!!str 5`` is the text "5").
_CORE_TAGS = frozenset(_YAML_TAG_PREFIX + name for name in ("str", "int", "float", "bool", "null", "map", "seq"))


def _plain(
    node: Any,
    path: Path,
    doc_file: str,
    positions: dict[Path, tuple[int, int]],
    keys: dict[Path, tuple[int, int]],
    budget: _Budget | None = None,
) -> Any:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq, TaggedScalar
    from ruamel.yaml.scalarbool import ScalarBoolean

    budget = budget or _Budget(doc_file)
    budget.take(path, positions)
    tag = getattr(getattr(node, "tag", None), "value", None)
    if tag and tag not in _CORE_TAGS:  # one rule for every tag, as written (fuzz21 item 11: !!python/... was read bare)
        line, col = positions.get(path, (1, 1))
        written = str(tag).replace(_YAML_TAG_PREFIX, "!!", 1)
        raise InputError(f"YAML tag {written!r} is not allowed", Location(doc_file, line, col, format_path(path)))
    if isinstance(node, TaggedScalar):  # !!str: the text as written
        return str(node.value)
    if isinstance(node, (CommentedMap, CommentedSeq)) and len(path) >= MAX_NESTING:
        line, col = positions.get(path, (1, 1))
        raise _too_deep(doc_file, line, col)
    if isinstance(node, CommentedMap):
        out: dict[str, Any] = {}
        for key in node:
            kline, kcol = _key_position(node, key)
            if not isinstance(key, str):
                raise InputError(
                    f"mapping keys must be strings, got {key!r}", Location(doc_file, kline + 1, kcol + 1, format_path(path))
                )
            child = (*path, key)
            vline, vcol = _key_position(node, key, value=True)
            keys[child] = (kline + 1, kcol + 1)
            positions[child] = (vline + 1, vcol + 1)
            out[key] = _plain(node[key], child, doc_file, positions, keys, budget)
        return out
    if isinstance(node, CommentedSeq):
        items = []
        for i, item in enumerate(node):
            child = (*path, i)
            line, col = _item_position(node, i)
            positions[child] = (line + 1, col + 1)
            items.append(_plain(item, child, doc_file, positions, keys, budget))
        return items
    # ruamel keeps anchored scalars as subclasses: ScalarBoolean is an int, so test it before int.
    if isinstance(node, ScalarBoolean):
        return bool(node)
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        _check_plain_int(node, path, doc_file, (positions, keys))
        return int(node)
    if isinstance(node, float):
        _check_plain_float(node, path, doc_file, (positions, keys))
        return float(node)
    if isinstance(node, PlainNumberText) and (problem := text_form_problem(node)) is not None:
        raise _number_error(problem, path, doc_file, (positions, keys))
    if isinstance(node, str):
        return str(node)
    line, col = positions.get(path, (1, 1))
    raise InputError(_unsupported_value(node), Location(doc_file, line, col, format_path(path)))


def _unsupported_value(node: Any) -> str:
    """Why a YAML value of no kind a workload holds is refused, named as YAML's, with the way out.

    hostile87: ``name: 2024-01-01`` read "unsupported YAML value of type date", and ``!!set`` "... of type CommentedSet":
    a parser's class names, not what the user wrote.
    """
    import datetime

    if isinstance(node, datetime.date):  # a datetime (ruamel's TimeStamp) is a date too
        kind = "timestamp" if isinstance(node, datetime.datetime) else "date"
        return f"YAML reads this value as a {kind}, which no field takes: quote it where it is text ('...')"
    if isinstance(node, (bytes, bytearray)):
        return "YAML binary data (!!binary) is not read: give the value as text"
    if isinstance(node, (set, frozenset)) or type(node).__name__ == "CommentedSet":
        return "a YAML set (!!set, or '? ' keys) is not read: write a list ([a, b])"
    if isinstance(node, list):  # !!pairs
        return "a YAML list of pairs (!!pairs) is not read: write a mapping or a list"
    return f"a YAML value of type {type(node).__name__} is not read: write a number, text, a list or a mapping"


#: Where a document's values and keys lie, by path (1-based line and column).
_Places = tuple[dict[Path, tuple[int, int]], dict[Path, tuple[int, int]]]


def _number_error(problem: str, path: Path, doc_file: str, places: _Places) -> InputError:
    """The refusal of a number written in a form YAML readers read apart, at its value.

    newuser89 item 5: under a field the schema does not have (``learning_rate: 2e-4``, as every fine-tuning recipe
    writes it) the value is never read: the unknown field is said first, at its key, with its did-you-mean, and the
    number's form after it (a user told only to rewrite the number was then told the field is unknown).
    """
    from generator.workload.schema import unknown_field  # the schema module reads this one's Document

    positions, keys = places
    unknown = unknown_field(path)
    if unknown is None:
        line, col = positions.get(path, (1, 1))
        return InputError(problem, Location(doc_file, line, col, format_path(path)))
    field, hint = unknown
    line, col = keys.get(field, positions.get(field, (1, 1)))
    value = problem.removesuffix(PLAIN_DIGITS)  # not to be rewritten: the field goes
    said = f"unknown field {field[-1]!a}, its value not read ({value}){hint}"
    return InputError(said, Location(doc_file, line, col, format_path(field)))


def _check_plain_int(node: int, path: Path, doc_file: str, places: _Places) -> None:
    """Refuse an integer YAML 1.1 and YAML 1.2 readers read differently (:func:`~.yaml_numbers.int_form_problem`)."""
    problem = int_form_problem(node)
    if problem is not None:
        raise _number_error(problem, path, doc_file, places)


def _check_plain_float(node: float, path: Path, doc_file: str, places: _Places) -> None:
    """Refuse a float YAML 1.1 and 1.2 readers read differently, or one out of a float's range (fuzz31 items 4, 10)."""
    text = getattr(node, "yaml_text", None)
    problem = float_form_problem(text, node) if text is not None else None
    if problem is None and not math.isfinite(node):
        problem = f"{node!r} is not a finite number"
    if problem is not None:
        raise _number_error(problem, path, doc_file, places)


#: Characters libyaml and ruamel break lines at (YAML 1.1) that YAML 1.2, editors and review diffs do not: NEL, LS, PS.
_LINE_BREAKS_EDITORS_HIDE = re.compile("[\x85\u2028\u2029]")
#: A carriage return not ending a CRLF line, in a file of LF lines: the readers break there, a terminal shows what follows
#: over what precedes it, and diffs show one line.
_LONE_CR = re.compile("\r(?!\n)")
#: Characters outside YAML's printable set (https://yaml.org/spec/1.2.2/#51-character-set), so located here rather
#: than by the readers' unlocated error.
_NOT_PRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")


def parse_yaml(text: str, file: str) -> Document:
    """Parse one YAML document; errors carry ``file:line:col``."""
    pieces = text.count("\n") + text.count(",") + text.count("[") + text.count("{")
    if pieces > MAX_YAML_PIECES:
        raise InputError(
            f"the file has {pieces:,} lines, commas and flow brackets, more than the {MAX_YAML_PIECES:,} a workload may have",
            Location(file, 1, 1),
        )
    if (deep := _flow_too_deep(text, file)) is not None:  # before any parser (fuzz25 H1: 2 KB of '[' took 15 s)
        raise deep
    odd = _LINE_BREAKS_EDITORS_HIDE.search(text)
    if odd is None and "\n" in text:
        odd = _LONE_CR.search(text)
    why = "a line break to the YAML readers that editors and diffs show as none (it can turn a comment into settings)"
    if odd is None and (odd := _NOT_PRINTABLE.search(text)) is not None:
        why = "a control character YAML does not allow"
    if odd is not None:
        row = text.count("\n", 0, odd.start()) + 1
        column = odd.start() - text.rfind("\n", 0, odd.start())
        raise InputError(f"the file holds {odd.group()!a}, {why}: remove it", Location(file, row, column))
    if (directive := _yaml_directive_problem(text, file)) is not None:
        raise directive
    fast = read_plain_document(text, MAX_NODES)
    if fast is not None:  # an ordinary document, read by libyaml (see fast_yaml); ruamel reads the rest
        return Document(file, *fast)
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    yaml = YAML(typ="rt")
    yaml.Constructor = number_keeping_constructor()
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
        if (odd_space := _odd_space_error(text, file, problem, line, col)) is not None:
            raise odd_space from None
        raise InputError(f"YAML syntax error: {problem}", Location(file, line, col)) from None
    except YAMLError as exc:
        raise InputError(f"YAML error: {str(exc).splitlines()[0]}", Location(file)) from None
    except RecursionError:
        raise _first_too_deep(text, file) or InputError(_TOO_DEEP, Location(file)) from None
    except (AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:
        placed = (  # a number too long, an alias inside its anchor, a tagged scalar: said at its place
            _number_past_int_limit(text, file)
            or _alias_inside_its_anchor(text, file)
            or _tagged_scalar_unread(text, file, yaml.constructor)
        )
        if placed is not None:
            raise placed from None
        # ruamel fails like this on some self-referencing anchors (a mapping merged into itself).
        raise InputError(
            f"YAML error: the document cannot be read ({type(exc).__name__}: {exc}); "
            "check its anchors, aliases and '<<' merge keys",
            Location(file),
        ) from None
    # review68 item 6: a list holding its own alias loads without an error, the alias read as null ("got null")
    if "*" in text and (inside := _alias_inside_its_anchor(text, file)) is not None:
        raise inside
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
    try:
        data = _plain(root, (), file, positions, keys)
    except RecursionError:
        raise InputError(_TOO_DEEP, Location(file)) from None
    return Document(file, data, positions, keys)


_TOO_DEEP = "YAML error: the document is nested too deeply"

#: A space character that is not U+0020 (a no-break space pasted from a web page or chat, an ideographic or em space,
#: a zero-width space) where YAML's structure needs a space: in a line's indentation, or after its ``-`` or ``key:``.
_ODD_SPACE = re.compile(
    "^[ \t]*(?:-[ \t]*)?(?:[A-Za-z_][\\w.-]*:)?([\u00a0\u1680\u2000-\u200b\u202f\u205f\u3000\ufeff])", re.MULTILINE
)


def _odd_space_error(text: str, file: str, problem: str, line: int | None, col: int | None) -> InputError | None:
    """The syntax error placed at a no-break (or other non-ASCII) space where YAML needs a space; None where none is.

    hostile85 item 3: YAML reads such a space as text, so ``\u00a0   model: x`` made the line a plain scalar, and the error
    ("mapping values are not allowed here") stood on the next line, naming neither the character nor its place.
    """
    import unicodedata

    # the cause stands before the place the parser gave up at: on its line at the latest
    end = len("\n".join(text.split("\n")[:line])) if line is not None else len(text)
    found = _ODD_SPACE.search(text, 0, end)
    if found is None:
        return None
    at = found.start(1)
    row = text.count("\n", 0, at) + 1
    column = at - text.rfind("\n", 0, at)
    name = unicodedata.name(found.group(1), "a space").lower()
    where = f" (at line {line}, column {col})" if line is not None else ""
    return InputError(
        f"the file holds {found.group(1)!a} ({name}) where YAML needs a space (indentation, or after ':' or '-'); "
        f"YAML reads it as text, not a space, hence the syntax error {problem!r}{where}: replace it with a space",
        Location(file, row, column),
    )


#: A line that starts with ``%``: a directive, or (rarely) the continuation of a quoted scalar; the scanner tells which.
_DIRECTIVE_START = re.compile(r"^%", re.MULTILINE)


def _yaml_directive_problem(text: str, file: str) -> InputError | None:
    """The error for a ``%YAML`` directive other than 1.2, at its line; None where there is none (newuser75 item 2).

    ``%YAML 1.1`` switches ruamel to YAML 1.1's implicit types: ``1:30`` becomes the base-60 number 90, ``012`` octal 10,
    ``yes`` true, where editors and JSON Schema tools (and specgen without the line) read YAML 1.2. The file's meaning
    must not hang on that line, so only ``%YAML 1.2`` (what specgen reads anyway) is accepted. ruamel's parser also
    failed with a bare AssertionError (a traceback) on ``%YAML 1.0`` and ``1.3``.
    """
    if _DIRECTIVE_START.search(text) is None:
        return None
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.tokens import DirectiveToken

    try:
        for token in YAML(typ="rt").scan(text):
            if not isinstance(token, DirectiveToken) or token.name != "YAML" or tuple(token.value) == (1, 2):
                continue
            written = ".".join(str(part) for part in token.value)
            where = Location(file, token.start_mark.line + 1, token.start_mark.column + 1, f"%YAML {written}")
            if tuple(token.value) == (1, 1):
                return InputError(
                    "this directive makes YAML readers apply YAML 1.1's rules (1:30 is read as the number 90, 012 as 10, "
                    "yes as true), where editors, JSON Schema tools and specgen read YAML 1.2: remove the line",
                    where,
                )
            return InputError(f"specgen reads YAML 1.2, not {written}: remove the line (or write %YAML 1.2)", where)
    except YAMLError:
        return None  # a syntax error: the loader reports it, located
    return None


def _too_deep(file: str, line: int, col: int) -> InputError:
    """The error for a mapping or list at ``line``:``col`` nested past :data:`MAX_NESTING`."""
    return InputError(f"{_TOO_DEEP} (more than {MAX_NESTING} levels of mappings and lists)", Location(file, line, col))


def _flow_too_deep(text: str, file: str) -> InputError | None:
    """The error for the first flow bracket nested past :data:`MAX_FLOW_NESTING`, counting every bracket of the text.

    A bracket inside a quoted string counts too: no workload quotes twenty unclosed brackets in a row.
    """
    depth = 0
    for match in _FLOW_BRACKETS.finditer(text):
        depth += 1 if match.group() in "[{" else -1
        if depth > MAX_FLOW_NESTING:
            line = text.count("\n", 0, match.start()) + 1
            return InputError(
                f"{_TOO_DEEP} (flow brackets [ and {{ more than {MAX_FLOW_NESTING} deep)",
                Location(file, line, match.start() - text.rfind("\n", 0, match.start())),
            )
    return None


def _first_too_deep(text: str, file: str) -> InputError | None:
    """The error for the first mapping or list nested past :data:`MAX_NESTING`, found in ruamel's event stream.

    For a document too deep for ruamel's composer (it recurses; its parser does not): the same node, with the same
    position, that :func:`_plain` refuses in a document the composer can build.
    """
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.events import CollectionEndEvent, CollectionStartEvent

    depth = 0
    try:
        for event in YAML(typ="rt").parse(text):
            if isinstance(event, CollectionStartEvent):
                depth += 1
                if depth > MAX_NESTING:
                    return _too_deep(file, event.start_mark.line + 1, event.start_mark.column + 1)
            elif isinstance(event, CollectionEndEvent):
                depth -= 1
    except YAMLError:
        return None
    return None


def _alias_inside_its_anchor(text: str, file: str) -> InputError | None:
    """The first alias naming a mapping or list it lies inside, with its place; None where there is none.

    fuzz23 item 15: ruamel's composer fails on such an alias with an AttributeError of its own, and the error had no line.
    """
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.events import AliasEvent, CollectionEndEvent, CollectionStartEvent

    open_anchors: list[str | None] = []
    try:
        for event in YAML(typ="rt").parse(text):
            if isinstance(event, CollectionStartEvent):
                open_anchors.append(event.anchor)
            elif isinstance(event, CollectionEndEvent):
                open_anchors.pop()
            elif isinstance(event, AliasEvent) and event.anchor in open_anchors:
                return InputError(
                    f"YAML error: the alias *{event.anchor} refers to the mapping or list it is in; a node cannot hold itself",
                    Location(file, event.start_mark.line + 1, event.start_mark.column + 1),
                )
    except YAMLError:
        return None
    return None


def _tagged_scalar_unread(text: str, file: str, constructor: Any) -> InputError | None:
    """The first scalar whose tag ruamel cannot make a value of (``!!int abc``, ``!!bool maybe``), with its place.

    hostile91: such a value failed the whole document with no line (``ValueError: invalid literal for int()``), and
    ``!!float ""`` with a traceback (ruamel's IndexError). The document is composed and each scalar constructed alone.
    """
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

    try:
        pending = [YAML(typ="rt").compose(text)]
    except (YAMLError, RecursionError):
        return None
    while pending:  # a stack, its top the next node in document order
        node = pending.pop()
        if isinstance(node, MappingNode):
            pending += reversed([part for pair in node.value for part in pair])
        elif isinstance(node, SequenceNode):
            pending += reversed(node.value)
        elif isinstance(node, ScalarNode):
            try:
                constructor.construct_object(node, deep=True)
            except (YAMLError, AttributeError, TypeError, ValueError, KeyError, IndexError):
                tag = ascii(str(node.tag).removeprefix("tag:yaml.org,2002:")[:40])[1:-1]
                line, column = node.start_mark.line + 1, node.start_mark.column + 1
                field = _field_holding(text, node.start_mark.index)
                return InputError(
                    f"YAML cannot read {short(node.value)} as the !!{tag} its tag names: drop the tag or give "
                    "a value of that kind",
                    Location(file, line, column, format_path(field) if field else ""),
                )
    return None


def _number_past_int_limit(text: str, file: str) -> InputError | None:
    """A run of digits longer than Python converts to an int (``sys.get_int_max_str_digits``), with its place."""
    import re
    import sys

    limit = sys.get_int_max_str_digits()
    found = re.search(f"[0-9]{{{limit + 1},}}", text) if limit else None
    if found is None:
        return None
    start = found.start()
    line = text.count("\n", 0, start) + 1
    col = start - text.rfind("\n", 0, start)
    field = _field_holding(text, start)
    return InputError(
        f"a number of {found.end() - start:,} digits is longer than the {limit:,} digits a number may have",
        Location(file, line, col, format_path(field) if field else ""),
    )


def _field_holding(text: str, offset: int) -> Path | None:
    """The path of the scalar (a value, or a mapping's key: its mapping's path) that holds ``text[offset]``.

    hostile84 item 2: a number past Python's digits was placed at its line and column but named no field. The document
    is composed (nodes with their marks, no value converted, so the long number is no error there) and walked to it.
    """
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.nodes import MappingNode, Node, SequenceNode

    try:
        node: Node | None = YAML(typ="rt").compose(text)
    except (YAMLError, RecursionError, AttributeError, TypeError, ValueError, KeyError):
        return None
    path: Path = ()
    while node is not None:
        children: list[tuple[str | int | None, Node]] = []
        if isinstance(node, MappingNode):
            for key, value in node.value:
                children += [(None, key), (str(key.value) if not isinstance(key.value, list) else None, value)]
        elif isinstance(node, SequenceNode):
            children = list(enumerate(node.value))
        else:
            return path
        inside = [(step, child) for step, child in children if child.start_mark.index <= offset < child.end_mark.index]
        if not inside:
            return path
        step, node = inside[0]
        if step is None and not isinstance(node, MappingNode | SequenceNode):
            return path  # a key: its mapping names it
        path = (*path, step) if step is not None else path
    return path


def read_yaml(path: str) -> Document:
    """Read and parse a YAML file (one a symlink leads out of its repository is refused)."""
    linked_inside(path)
    return parse_yaml(read_text_limited(path, MAX_WORKLOAD_BYTES, "file"), path)


def given_field(file: str, paths: Sequence[Path]) -> Location:
    """Where workload ``file`` gives the first of ``paths`` it has (a field left to a default falls to the next)."""
    document = read_yaml(file)
    for path in paths:
        node = document.data
        for part in path:
            if isinstance(node, dict):
                node = node.get(part)
            elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
                node = node[part]
            else:
                node = None
        if node is not None:
            return document.locate(path)
    return document.locate(paths[-1])
