from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import settings

# No test reaches the Hugging Face Hub: an id the catalog lacks is looked up offline (in an empty
# cache) unless a test points HF_ENDPOINT at its own local server (tests/hub_server.py).
os.environ["HF_HUB_OFFLINE"] = "1"

REPO = Path(__file__).resolve().parents[1]
#: The project's shared folder beside the checkout: upstream schemas (CRDs) live only there.
SHARED = REPO.parent / "shared"
#: Facts and figures the tests use, carried in the repository (tests/reference/README.md names their sources).
REFERENCE = REPO / "tests" / "reference"
#: Set by ``.ci/run`` where ``../shared`` exists: a test that needs it then fails instead of skipping.
REQUIRE_SHARED = os.environ.get("SPECGEN_REQUIRE_SHARED") == "1"

# Property tests draw the same examples on every run, so a CI run passes or fails by the code alone (stop 39's CI
# failed on an example no earlier run had drawn); SPECGEN_HYPOTHESIS=explore draws new ones, to hunt for failures.
settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("SPECGEN_HYPOTHESIS", "repeatable"))


def require_shared(path: Path) -> None:
    """Skip (with the reason) when ``path`` in ``../shared`` is absent, or fail when CI requires it."""
    if path.exists():
        return
    reason = f"{path} is absent: upstream schemas are read from the project's shared folder beside the checkout"
    if REQUIRE_SHARED:
        pytest.fail(f"{reason} (SPECGEN_REQUIRE_SHARED=1)")
    pytest.skip(reason)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite tests/golden from the current renderer")


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


def reference_config(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((REFERENCE / "configs" / name / "config.json").read_text())
    return data


def calibration() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((REFERENCE / "calibration.json").read_text())
    return data


def catalog_json(kind: str) -> dict[str, Any]:
    """The raw catalog file of ``kind`` (``platforms``, ``purchases``...), research notes included."""
    data: dict[str, Any] = json.loads((REPO / "generator" / "catalog" / f"{kind}.json").read_text(encoding="utf-8"))
    return data


def calibration_report() -> ModuleType:
    """``benchmarks/calibration_report.py`` loaded as a module (it is a script, not part of the package)."""
    spec = importlib.util.spec_from_file_location("calibration_report", REPO / "benchmarks" / "calibration_report.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("calibration_report", module)
    spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def report_overrides(report: Any, overrides: dict[str, float]) -> Iterator[None]:
    """``report``'s (:func:`calibration_report`) constant overrides with ``overrides`` added inside the block, restored after."""
    saved = dict(report.OVERRIDES)
    report.OVERRIDES.update(overrides)
    try:
        yield
    finally:
        report.OVERRIDES.clear()
        report.OVERRIDES.update(saved)
