from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

# No test reaches the Hugging Face Hub: an id the catalog lacks is looked up offline (in an empty
# cache) unless a test points HF_ENDPOINT at its own local server (tests/hub_server.py).
os.environ["HF_HUB_OFFLINE"] = "1"

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
