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
_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")
#: GitLab code-quality severities of findings (docs.gitlab.com/ci/testing/code_quality: info, minor, major, critical,
#: blocker); an error that stops the run is a ``blocker``.
_GITLAB_SEVERITY = {"info": "info", "warning": "minor", "error": "major"}


def parse_path(path: str) -> tuple[str | int, ...]:
    """``deployments[1].inference`` -> ``("deployments", 1, "inference")``."""
    return tuple(int(index) if index else name for name, index in _PATH_PART.findall(path))


def locate_findings(loaded: LoadedWorkload, findings: Iterable[Finding]) -> tuple[Located, ...]:
    """Each finding with the ``file:line:col`` of the workload node it concerns (the file's start when none)."""
    out = []
    for f in findings:
        where = loaded.document.locate(parse_path(f.path))
        line = where.line or 1
        column = where.column or 1
        out.append((f.level, f.code, f.message, f"{loaded.file}:{line}:{column}"))
    return tuple(out)


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


def gitlab_error_report(errors: Iterable[PlacedError], default_path: str, findings: Iterable[Located] = ()) -> str:
    """Fatal errors as a GitLab code-quality report (severity ``blocker``); unplaced ones at ``default_path``, line 1.

    ``findings`` reported before the error stopped the run come first.
    """
    paths: dict[str, str] = {}
    issues = _gitlab_findings(findings, paths)
    for error in errors:
        file = default_path if error.file is None else error.file
        issues.append(_gitlab_issue("error", "blocker", error.message, file, error.line, paths))
    return json.dumps(issues, indent=2, sort_keys=True) + "\n"


def gitlab_report(findings: Iterable[Located]) -> str:
    """A GitLab code-quality report (JSON list of issues with a stable fingerprint each)."""
    return json.dumps(_gitlab_findings(findings, {}), indent=2, sort_keys=True) + "\n"


def _gitlab_findings(findings: Iterable[Located], paths: dict[str, str]) -> list[dict[str, object]]:
    issues = []
    for level, code, message, where in findings:
        file, line, _ = _split_where(where)
        issues.append(_gitlab_issue(code, _GITLAB_SEVERITY[level], message, file, line, paths))
    return issues


def repository_path(path: str) -> str:
    """``path`` relative to its repository root (the git work tree holding it, else the current directory).

    GitLab's code-quality widget matches ``location.path`` against the repository's files, so a path as typed
    (``../w/chat-70b.yaml``, ``/builds/x/chat-70b.yaml``) would match nothing.
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
    return relative.replace(os.sep, "/")


def _gitlab_issue(code: str, severity: str, message: str, file: str, line: int, paths: dict[str, str]) -> dict[str, object]:
    """One code-quality issue at ``file``'s repository path, with a fingerprint stable across runs and checkouts.

    ``paths``: repository paths already found in this report (most issues share one file; each lookup walks up
    the directories for ``.git``).
    """
    if file not in paths:
        paths[file] = repository_path(file)
    file = paths[file]
    fingerprint = hashlib.sha256(f"{file}\0{code}\0{message}".encode()).hexdigest()
    return {
        "check_name": f"specgen/{code}",
        "description": message,
        "fingerprint": fingerprint,
        "location": {"lines": {"begin": line}, "path": file},
        "severity": severity,
        "type": "issue",
    }


def _split_where(where: str) -> tuple[str, int, int]:
    file, line, col = where.rsplit(":", 2)
    return file, int(line), int(col)
