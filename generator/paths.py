"""The one place that finds specgen's data folders, in a wheel and in a source checkout alike.

The wheel maps ``templates/`` and ``schemas/`` into the package (see ``pyproject.toml``);
a source checkout or editable install keeps them at the repository root.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """``templates`` or ``schemas``: inside the installed package, else beside it in the checkout."""
    for candidate in (_PACKAGE / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"specgen data folder '{name}' is missing from this installation")


def schema_path(name: str = "workload") -> Path:
    """Path of a JSON Schema shipped with specgen."""
    return data_dir("schemas") / f"{name}.schema.json"
