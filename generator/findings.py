"""Findings where reviewers look: stderr lines, GitHub Actions annotations, a GitLab code-quality report.

The planner returns findings with a workload path (``deployments[1]``); here each gets the
``file:line:col`` of that place in the workload file, and is printed in the form the CI system shows
next to the changed line. ``--fail-on`` turns findings at or above a level into a failing exit code.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from generator.errors import Location, one_line
from generator.named_tuple import NamedTuple

if TYPE_CHECKING:
    from generator.planner.plan import Finding
    from generator.workload import LoadedWorkload

#: (level, code, message, where) with where = ``file:line:col``.
Located = tuple[str, str, str, str]

LEVELS = ("info", "warning", "error")
_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]|\[=([^\]]+)\]")
#: GitLab code-quality severities of findings (docs.gitlab.com/ci/testing/code_quality: info, minor, major, critical,
#: blocker); an error that stops the run is a ``blocker``.
_GITLAB_SEVERITY = {"info": "info", "warning": "minor", "error": "major"}


def parse_path(path: str, data: object = None) -> tuple[str | int, ...]:
    """``deployments[1].inference`` -> ``("deployments", 1, "inference")``.

    A list item named by its value or its ``name`` (``hardware.gpus[=l40s-48gb]``, ``deployments[=chat]``: fix191, a
    finding that stays with its item where the list is reordered) is read as its index in the document ``data``; the
    path ends at the list where no item there has it.
    """
    parts: list[str | int] = []
    node = data
    for name, index, named in _PATH_PART.findall(path):
        if named:
            items = node if isinstance(node, list) else []
            found = next((i for i, item in enumerate(items) if _item_name(item) == named), None)
            if found is None:
                break
            parts.append(found)
            node = items[found]
        elif index:
            parts.append(int(index))
            node = node[int(index)] if isinstance(node, list) and int(index) < len(node) else None
        else:
            parts.append(name)
            node = node.get(name) if isinstance(node, dict) else None
    return tuple(parts)


def _item_name(item: object) -> str | None:
    """What names a list item in a path: its ``name`` where a mapping has one, else the item where it is a text."""
    name = item.get("name") if isinstance(item, dict) else item
    return name if isinstance(name, str) else None


def locate_findings(loaded: LoadedWorkload, findings: Iterable[Finding]) -> tuple[Located, ...]:
    """Each finding with the ``file:line:col`` of the workload node it concerns (the file's start when none)."""
    out = []
    for f in findings:
        where = loaded.document.locate(parse_path(f.path, loaded.document.data))
        line = where.line or 1
        column = where.column or 1
        out.append((f.level, f.code, f.message, f"{loaded.file}:{line}:{column}"))
    return tuple(out)


def finding_fields(loaded: LoadedWorkload, findings: Iterable[Finding]) -> tuple[str, ...]:
    """Each finding's field, an item of a list named by its ``name`` where it has one: ``deployments[=chat].inference``.

    What identifies a finding across runs and edits for a GitLab fingerprint (newuser53 item 4): not its message, whose
    figures change, nor its line, which moves when a line above it is added, nor a list index a new item shifts.
    """
    return tuple(named_field(loaded.document.data, parse_path(f.path, loaded.document.data)) for f in findings)


def named_field(data: object, parts: tuple[str | int, ...]) -> str:
    """The field at ``parts`` of the document ``data``, each list item that has a string ``name`` by it (``[=chat]``).

    A list item that is a text is named by its value (``hardware.gpus[=l40s-48gb]``: fix191).
    """
    out = []
    node = data
    for part in parts:
        if isinstance(part, int):
            node = node[part] if isinstance(node, list) and part < len(node) else None
            name = _item_name(node)
            out.append(f"[={name}]" if name is not None else f"[{part}]")
        else:
            node = node.get(part) if isinstance(node, dict) else None
            out.append(f".{part}" if out else part)
    return "".join(out)


def at_least(findings: Iterable[Located], level: str) -> list[Located]:
    """The findings at ``level`` or above."""
    floor = LEVELS.index(level)
    return [f for f in findings if LEVELS.index(f[0]) >= floor]


def text_line(finding: Located) -> str:
    """``file:line:col: warning: message [code]`` (the compiler form editors and CI logs link), on one line.

    A file name may hold a line break: escaped as in error lines, so that it cannot start a CI workflow command.
    """
    level, code, message, where = finding
    return one_line(f"{where}: {level}: {message} [{code}]")


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotation(finding: Located) -> str:
    """A GitHub Actions workflow command: ``::warning file=F,line=L,col=C,title=T::message``.

    Info findings become ``notice``; data and properties are escaped as the runner expects.
    """
    level, code, message, where = finding
    file, line, col = _split_where(where)
    command = {"info": "notice", "warning": "warning", "error": "error"}[level]
    props = f"file={_escape_property(file)},line={line},col={col},title={_escape_property('specgen ' + code)}"
    return f"::{command} {props}::{_escape_data(message)}"


class PlacedError(NamedTuple):
    """A fatal error where a CI report shows it: its one-line message, and the file, line, column and field it is at.

    ``file`` None: the error has no place in a file (an annotation of the run; a GitLab issue at the first workload).
    """

    message: str
    file: str | None = None
    line: int = 1
    column: int = 1
    field: str = ""


#: What follows a workload file's name in an error that names its line and column.
_LINE_COLUMN = re.compile(r":([0-9]+):([0-9]+): ")


def place_error(text: str, location: Location | None, files: Sequence[str] = ()) -> PlacedError:
    """Where the error ``text`` is: its ``location`` where it has a line, else a file of ``files`` whose name begins it.

    newuser53 item 7: the place was read back out of the text (``x:9:9: y.yaml:7:1: ...`` read as file ``x``, line 9),
    and a pull request names its files, so a file name could put an annotation or a blocker on any file and line. A
    file name is matched whole, the longest first; text that no file given begins is placed nowhere.
    """
    if location is not None and location.line is not None:
        head = f"{Location(location.file, location.line, location.column)}: "
        if text.startswith(head):
            return PlacedError(one_line(text[len(head) :]), location.file, location.line, location.column or 1, location.path)
    for file in sorted(set(files), key=len, reverse=True):
        found = _LINE_COLUMN.match(text, len(file)) if file and text.startswith(file) else None
        if found is not None:
            return PlacedError(one_line(text[found.end() :]), file, int(found[1]), int(found[2]))
    return PlacedError(one_line(text))


def github_error(error: PlacedError) -> str:
    """A fatal error as a GitHub ``::error`` annotation at its file, line and column.

    An error without a place in a file becomes an annotation of the run, not of a line.
    """
    if error.file is None:
        return f"::error title=specgen::{_escape_data(error.message)}"
    where = f"file={_escape_property(one_line(error.file))},line={error.line},col={error.column}"
    return f"::error {where},title=specgen::{_escape_data(error.message)}"


def gitlab_error_report(
    errors: Iterable[PlacedError],
    default_path: str,
    findings: Iterable[Located] = (),
    fields: Sequence[str] | None = None,
) -> str:
    """Fatal errors as a GitLab code-quality report (severity ``blocker``); unplaced ones at ``default_path``, line 1.

    ``findings`` reported before the error stopped the run come first (``fields``: theirs, as :func:`gitlab_report`).
    """
    report = _Report()
    issues = _gitlab_findings(findings, fields, report)
    for error in errors:
        file = default_path if error.file is None else error.file
        issues.append(report.issue("error", "blocker", error.message, file, error.line, error.field))
    return json.dumps(issues, indent=2, sort_keys=True) + "\n"


def gitlab_report(findings: Iterable[Located], fields: Sequence[str] | None = None) -> str:
    """A GitLab code-quality report (JSON list of issues with a stable fingerprint each).

    ``fields``: each finding's (:func:`finding_fields`), which identifies it beside its file and code; without them,
    its line does.
    """
    return json.dumps(_gitlab_findings(findings, fields, _Report()), indent=2, sort_keys=True) + "\n"


def _gitlab_findings(findings: Iterable[Located], fields: Sequence[str] | None, report: _Report) -> list[dict[str, object]]:
    """The issues of ``findings``, each identified by its field (``fields``, one a finding), else by its line."""
    findings = list(findings)
    if fields is not None and len(fields) != len(findings):
        fields = None  # not the findings' own: their lines identify them instead
    issues = []
    for i, (level, code, message, where) in enumerate(findings):
        file, line, _ = _split_where(where)
        field = fields[i] if fields is not None else f"line {line}"
        issues.append(report.issue(code, _GITLAB_SEVERITY[level], message, file, line, field))
    return issues


def repository_path(path: str) -> str:
    """``path`` relative to its repository root (the git work tree holding it, else the current directory).

    GitLab's code-quality widget matches ``location.path`` against the repository's files, so a path as typed
    (``../w/chat-70b.yaml``, ``/builds/x/chat-70b.yaml``) would match nothing. A file in no git work tree and outside
    the current directory has no repository path: its absolute path, which :func:`outside_repository` tells (newuser74
    item 14: ``../bugs/newuser74/az-70b.yaml``, a path relative to nothing GitLab holds).
    """
    from generator.input_files import git_work_tree

    real = os.path.realpath(path)
    root = git_work_tree(os.path.dirname(real))
    if root is None:
        try:
            root = os.path.realpath(os.getcwd())
        except OSError:  # the working directory was deleted: the path as given is the only one there is
            return path.replace(os.sep, "/")
    relative = os.path.relpath(real, root)
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return real.replace(os.sep, "/")
    return relative.replace(os.sep, "/")


def outside_repository(path: str) -> bool:
    """Whether ``path`` has no repository path (:func:`repository_path` gives its absolute path): no link in GitLab."""
    return os.path.isabs(repository_path(path))


class _Report:
    """The issues of one code-quality report as they are made: their repository paths, and the keys already given."""

    def __init__(self) -> None:
        #: Repository paths already found (most issues share one file; each lookup walks up the directories for .git).
        self.paths: dict[str, str] = {}
        #: How many issues each (path, code, field) has had so far.
        self.seen: dict[tuple[str, str, str], int] = {}

    def issue(self, code: str, severity: str, message: str, file: str, line: int, field: str) -> dict[str, object]:
        """One issue at ``file``'s repository path, its fingerprint stable across runs, checkouts and changed figures.

        newuser53 item 4: the fingerprint hashed the message, so an MR that changed a figure in it ("1 server(s)" ->
        "3") listed the same finding as resolved and as new. It is the file, the code, the field and the issue's
        ordinal among those of the same three (two findings of one code at one field), in the report's order.
        """
        if file not in self.paths:
            self.paths[file] = repository_path(file)
        path = self.paths[file]
        key = (path, code, field)
        ordinal = self.seen.get(key, 0)
        self.seen[key] = ordinal + 1
        fingerprint = hashlib.sha256("\0".join([*key, str(ordinal)]).encode()).hexdigest()
        return {
            "check_name": f"specgen/{code}",
            "description": message,
            "fingerprint": fingerprint,
            "location": {"lines": {"begin": line}, "path": path},
            "severity": severity,
            "type": "issue",
        }


def _split_where(where: str) -> tuple[str, int, int]:
    file, line, col = where.rsplit(":", 2)
    return file, int(line), int(col)
