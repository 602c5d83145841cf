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
from collections.abc import Callable
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
    read = _read(args, _VALIDATE_VALUES, ("--together",), VALIDATE_DEFAULTS, lambda name, value: _value(name, value, levels))
    return None if read is None else {"files": read[0], **read[1]}


def render_params(args: list[str], targets: tuple[str, ...], levels: tuple[str, ...]) -> dict[str, Any] | None:
    """The parameters click would pass ``render`` for ``args`` (the words after ``render``), or None.

    ``targets`` and ``levels`` are the choices of ``--target`` and ``--fail-on``.
    """
    read = _read(args, _RENDER_VALUES, ("--check", "--prune"), RENDER_DEFAULTS, lambda n, v: _value(n, v, levels, targets))
    return None if read is None else {"files": read[0], "targets": read[2], **read[1]}


def _value(name: str, value: str, levels: tuple[str, ...], targets: tuple[str, ...] = ()) -> object:
    """The value click would pass for option ``name`` given the plain word ``value``, or None where click reads it."""
    if name == "targets":
        return value if value in targets else None
    if name == "jobs":
        return int(value) if _JOBS.fullmatch(value) else None
    if name == "fail_on":
        return value if value in levels else None
    # an empty one is click's to refuse ('-' too, which no plain word is)
    if name == "gitlab_report":
        return value if _file(value) and value.strip() else None
    return value if value.strip() else None  # output


def _read(
    args: list[str],
    values: dict[str, str],
    flags: tuple[str, ...],
    defaults: dict[str, Any],
    read_value: Callable[[str, str], object],
) -> tuple[tuple[str, ...], dict[str, Any], tuple[object, ...]] | None:
    """The files, the parameters and the ``--target`` values of ``args``, or None where click should read them.

    ``values``: the options that take a value, by spelling, and the parameter each sets; ``flags``: the options that
    set their parameter (the spelling without ``--``) true; ``read_value``: an option's value, None where click reads it.
    """
    files: list[str] = []
    chosen: list[object] = []
    params = dict(defaults)
    given: set[str] = set()
    words = iter(args)
    for word in words:
        name = values.get(word)
        if word in flags:
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
            read = read_value(name, value)
            if read is None:
                return None
            if name == "targets":
                chosen.append(read)
            else:
                params[name] = read
    if not files:
        return None
    return tuple(files), params, tuple(chosen)
