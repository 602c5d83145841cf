"""newuser57 (a bare-metal / colocation ops engineer): what ``diff`` says of owned hosts.

Item 1: a host renamed (MAAS releases the machine, Metal3 deprovisions its BareMetalHost) read "No change to the
fleet", and a pool shrunk never named the host that leaves. Item 16: the shrink read "minimum nodes 2 → 1, in place".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.helpers import specgen_in_process

TINKERBELL = (REPO / "examples" / "colo-tinkerbell.yaml").read_text(encoding="utf-8")


def _diff(tmp_path: Path, capsys: pytest.CaptureFixture[str], new: str, *args: str) -> str:
    (tmp_path / "old.yaml").write_text(TINKERBELL, encoding="utf-8")
    (tmp_path / "new.yaml").write_text(new, encoding="utf-8")
    code, out, _ = specgen_in_process(capsys, "diff", str(tmp_path / "old.yaml"), str(tmp_path / "new.yaml"), *args)
    assert code == 0
    return out


def test_a_renamed_host_is_a_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _diff(tmp_path, capsys, TINKERBELL.replace("gpu-t02", "gpu-t09"))
    assert "No change to the fleet" not in out
    assert "| changed (host `gpu-t09` joins, host `gpu-t02` leaves) |" in out
    (pool,) = json.loads(_diff(tmp_path, capsys, TINKERBELL.replace("gpu-t02", "gpu-t09"), "--format", "json"))["pools"]
    assert (pool["old"]["hosts"], pool["new"]["hosts"]) == (["gpu-t01", "gpu-t02"], ["gpu-t01", "gpu-t09"])


def test_a_shrunk_pool_names_the_host_that_leaves_not_a_minimum(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _diff(tmp_path, capsys, TINKERBELL.replace("requests_per_second: 40", "requests_per_second: 5"))
    assert "| changed (host `gpu-t02` leaves) |" in out
    assert "minimum nodes" not in out


def test_hosts_listed_in_another_order_are_the_same_pool(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """review38 item 5: the owned hosts were compared in plan order, so two swapped in the inventory read "changed"."""
    first, second = TINKERBELL.index("        - name: gpu-t01"), TINKERBELL.index("        - name: gpu-t02")
    end = TINKERBELL.index("provisioning:")
    swapped = TINKERBELL[:first] + TINKERBELL[second:end] + TINKERBELL[first:second] + TINKERBELL[end:]
    assert swapped != TINKERBELL
    assert json.loads(_diff(tmp_path, capsys, swapped, "--format", "json"))["pools"] == []
