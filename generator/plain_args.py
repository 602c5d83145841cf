"""The plain argument forms of ``specgen validate`` and ``specgen render``, read without importing click.

Importing click is a tenth of a cold ``render`` and a sixth of a cold ``validate``. CI runs these two
commands with plain arguments: files, and options spelled as separate words. Those forms are read here
into the values click would pass the command; anything else (``--output=DIR``, ``-oDIR``, ``--help``,
``--``, a value that looks like an option, a directory, a value click would refuse) gives None, and then
click reads the command line, its errors and help included. The tests hold every form read here to
click's reading of it.
"""

from __future__ import annotations

import os
import re
from typing import Any

#: ``render``'s options that take a value, by spelling, and the parameter each sets.
_RENDER_VALUES = {"-o": "output", "--output": "output", "--target": "targets", "-j": "jobs", "--jobs": "jobs",
                  "--fail-on": "fail_on", "--gitlab-report": "gitlab_report"}  # fmt: skip
#: ``render``'s parameters when not given (click's command takes its defaults from here too).
RENDER_DEFAULTS: dict[str, Any] = {"output": "infra", "check": False, "prune": False, "jobs": None, "fail_on": None,
                                   "gitlab_report": None}  # fmt: skip
#: ``--jobs`` values read here (click reads the rest: ``01``, ``+2``, ``0``...).
_JOBS = re.compile(r"[1-9][0-9]{0,5}")


def _plain(word: str) -> bool:
    """A word click takes as it is: printable text that is not an option."""
    return word.isprintable() and not word.startswith("-")


def _file(word: str) -> bool:
    """A path click's ``Path(dir_okay=False)`` passes as it is."""
    return _plain(word) and not os.path.isdir(word)


#: ``validate``'s options that take a value, by spelling, and the parameter each sets.
_VALIDATE_VALUES = {"--fail-on": "fail_on", "--gitlab-report": "gitlab_report"}
#: ``validate``'s parameters when not given.
VALIDATE_DEFAULTS: dict[str, Any] = {"together": False, "fail_on": None, "gitlab_report": None}


def validate_params(args: list[str], levels: tuple[str, ...]) -> dict[str, Any] | None:
    """The parameters click would pass ``validate`` for ``args`` (the words after ``validate``), or None.

    ``levels`` are the choices of ``--fail-on`` (newuser104: ``validate --fail-on warning``, CI's form, read here too).
    """
    files: list[str] = []
    params = dict(VALIDATE_DEFAULTS)
    words = iter(args)
    for word in words:
        name = _VALIDATE_VALUES.get(word)
        if word == "--together":
            params["together"] = True
        elif name is None:
            if not _file(word):
                return None
            files.append(word)
        else:
            value = next(words, None)
            if value is None or not _plain(value) or params[name] is not None:
                return None  # an option given twice is click's to refuse
            if name == "fail_on" and value in levels:
                params["fail_on"] = value
            elif name == "gitlab_report" and _file(value) and value.strip():  # an empty one is click's to refuse
                params["gitlab_report"] = value
            else:
                return None
    if not files:
        return None
    return {"files": tuple(files), **params}


def render_params(args: list[str], targets: tuple[str, ...], levels: tuple[str, ...]) -> dict[str, Any] | None:
    """The parameters click would pass ``render`` for ``args`` (the words after ``render``), or None.

    ``targets`` and ``levels`` are the choices of ``--target`` and ``--fail-on``.
    """
    files: list[str] = []
    chosen: list[str] = []
    params = dict(RENDER_DEFAULTS)
    given: set[str] = set()
    words = iter(args)
    for word in words:
        name = _RENDER_VALUES.get(word)
        if word in ("--check", "--prune"):
            params[word[2:]] = True
        elif name is None:
            if not _file(word):
                return None
            files.append(word)
        else:
            value = next(words, None)
            if value is None or not _plain(value) or (name != "targets" and name in given):
                return None  # an option given twice is click's to refuse (hostile78 item 13)
            given.add(name)
            if name == "targets" and value in targets:
                chosen.append(value)
            elif name == "jobs" and _JOBS.fullmatch(value):
                params["jobs"] = int(value)
            elif name == "fail_on" and value in levels:
                params["fail_on"] = value
            elif name == "gitlab_report" and _file(value) and value.strip() and value != "-":  # click's to refuse
                params["gitlab_report"] = value
            elif name == "output" and value.strip() and value != "-":  # an empty one or '-' is click's to refuse
                params["output"] = value
            else:
                return None
    if not files:
        return None
    return {"files": tuple(files), "targets": tuple(chosen), **params}
