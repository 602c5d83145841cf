"""Imports run down the layers: nothing below the renderers imports generator.render, and sizing imports no planner.

The layers, top down: render -> planner -> sizing, with catalog and workload beneath the planner (the estimate's
calculator beside the planner, below render). A module of a lower layer importing a higher one (even late, inside a
function) ties the layers in a loop and loads the renderers where only a plan is wanted (review87: vcpu_quota imported
render.gke's accelerator type; review86's node_storage, before).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO

#: Each package under generator/ and the packages its modules must not import (any depth, module or function level).
FORBIDDEN = {
    "planner": ("generator.render",),
    "sizing": ("generator.render", "generator.planner"),
    "catalog": ("generator.render", "generator.planner"),
    "workload": ("generator.render", "generator.planner"),
    "calculator": ("generator.render",),  # the quick estimate reuses the planner's candidates, never a renderer
}


def imported_modules(tree: ast.AST, package: str) -> list[tuple[int, str]]:
    """Every module a parsed file imports, with its line: ``import a.b``, ``from a.b import c`` (as ``a.b`` and
    ``a.b.c``, since ``c`` may be a module) and relative imports resolved against ``package``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def _breaks(module: str, forbidden: tuple[str, ...]) -> bool:
    return any(module == name or module.startswith(f"{name}.") for name in forbidden)


def layer_breaks(root: Path) -> list[str]:
    """``file:line imports module`` for every import that runs up the layers under ``root`` (generator/)."""
    out = []
    for layer, forbidden in FORBIDDEN.items():
        for path in sorted((root / layer).rglob("*.py")):
            package = ".".join(("generator", *path.relative_to(root).parent.parts))
            said: set[int] = set()  # one report an import statement: ``from a.b import c`` also yields ``a.b.c``
            for line, module in imported_modules(ast.parse(path.read_text()), package):
                if _breaks(module, forbidden) and line not in said:
                    said.add(line)
                    out.append(f"{path.relative_to(root.parent)}:{line} imports {module}")
    return out


def test_no_import_runs_up_the_layers() -> None:
    assert layer_breaks(REPO / "generator") == []


@pytest.mark.parametrize(
    ("source", "package", "caught"),
    [
        pytest.param("from generator.render.gke import accelerator_type\n", "generator.planner", True, id="from"),
        pytest.param("def f():\n    from generator.render import gke\n", "generator.planner", True, id="late"),
        pytest.param("import generator.render.gke\n", "generator.planner", True, id="import"),
        pytest.param("from generator import render\n", "generator.planner", True, id="package-name"),
        pytest.param("from ..render import gke\n", "generator.planner", True, id="relative"),
        pytest.param("from generator.renderer import x\n", "generator.planner", False, id="prefix-only"),
        pytest.param("from generator.catalog.gke_accelerators import accelerator_type\n", "generator.planner", False, id="down"),
    ],
)
def test_the_walk_catches_each_spelling(source: str, package: str, caught: bool) -> None:
    """The check itself: each way of writing an import of generator.render is seen, and a lookalike is not."""
    found = [m for _, m in imported_modules(ast.parse(source), package) if _breaks(m, FORBIDDEN["planner"])]
    assert bool(found) is caught, found


def test_the_walk_caught_the_old_import(tmp_path: Path) -> None:
    """The import this test was written for (vcpu_quota's late import of render.gke) is reported with its line."""
    (tmp_path / "planner").mkdir()
    (tmp_path / "planner" / "quota.py").write_text("def f():\n    from generator.render.gke import accelerator_type\n")
    assert layer_breaks(tmp_path) == [f"{tmp_path.name}/planner/quota.py:2 imports generator.render.gke"]
