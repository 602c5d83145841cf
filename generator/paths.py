"""The one place that finds specgen's data folders, in a wheel and in a source checkout alike.

The wheel maps ``templates/`` and ``schemas/`` into the package (see ``pyproject.toml``);
a source checkout or editable install keeps them at the repository root.
"""

from __future__ import annotations

import os

#: os.path rather than pathlib: ``validate`` loads this module, and pathlib (with urllib.parse) is a tenth of its start.
_PACKAGE = os.path.dirname(os.path.realpath(__file__))


def data_dir(name: str) -> str:
    """``templates`` or ``schemas``: inside the installed package, else beside it in the checkout."""
    for candidate in (os.path.join(_PACKAGE, name), os.path.join(os.path.dirname(_PACKAGE), name)):
        if os.path.isdir(candidate):
            return candidate
    raise FileNotFoundError(f"specgen data folder '{name}' is missing from this installation")


def schema_path(name: str = "workload") -> str:
    """Path of a JSON Schema shipped with specgen."""
    return os.path.join(data_dir("schemas"), f"{name}.schema.json")
