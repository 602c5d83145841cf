"""The sizing core and the estimate path stay free of I/O, templating, CLI and validation libraries."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from tests.conftest import REPO

HEAVY = ("click", "jinja2", "ruamel", "pydantic", "jsonschema")


@pytest.mark.parametrize(
    "module",
    [
        pytest.param("generator.sizing.architecture", id="architecture"),
        pytest.param("generator.sizing.memory", id="memory"),
        pytest.param("generator.sizing.training", id="training"),
        pytest.param("generator.sizing.performance", id="performance"),
        pytest.param("generator.sizing.offload", id="offload"),
        pytest.param("generator.calculator.cli", id="estimate-path"),
    ],
)
def test_module_imports_no_heavy_library(module: str) -> None:
    code = f"import sys, {module}; print(','.join(sorted({{m.split('.')[0] for m in sys.modules}})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO).stdout
    loaded = set(out.strip().split(","))
    assert not loaded & set(HEAVY), f"{module} pulls in {sorted(loaded & set(HEAVY))}"


def test_sizing_package_reads_no_files() -> None:
    for path in (REPO / "generator" / "sizing").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                names = {(node.module or "").split(".")[0]}
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in ("open", "print", "input"), f"{path.name}:{node.lineno} calls {node.func.id}"
                continue
            else:
                continue
            assert not names & {"os", "io", "sys", "pathlib", "logging", "shutil", "subprocess"}, f"{path.name}:{node.lineno}"
