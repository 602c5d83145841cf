from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
REFERENCE = SHARED / "reference"


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
