"""fix162 item 4: ``detect``'s comment and the fixed-server advice name ``hardware.buy``, not a ``buy`` of the inventory.

They said "describe the server under hardware.inventory (a custom server: gpu, gpus_per_server, ram_gib) with buy:
false" and "hardware.inventory with buy: false": read as ``buy: false`` inside the inventory entry, which the schema
refuses (``buy is a field of hardware (the block holding the list), not of inventory[0]``). The comment now gives the
owned server as YAML a workload takes; the oracle is the workload loader itself: the comment's YAML validates.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from generator.calculator.detect import detect_machine, fixed_block
from generator.planner.fixed_engines import AS_OWNED
from tests.helpers import VALID, load_errors
from tests.test_detect import fixture

#: Fixtures of machines with a catalog GPU whose RAM /proc/meminfo gives.
WITH_RAM = ["server-8xh100", "desktop-4090", "desktop-intel-mixed-gpus"]
MARK = "replicas (buy is a field of hardware, beside inventory): "


def _owned_yaml(name: str) -> str:
    (line,) = (line for line in fixed_block(detect_machine(fixture(name))).splitlines() if MARK in line)
    return line.split(MARK, 1)[1]


def _workload(tmp_path: Path, hardware_yaml: str) -> Path:
    hardware = YAML(typ="safe").load(hardware_yaml)["hardware"]
    text = VALID.split("hardware:")[0]
    out = io.StringIO()
    YAML().dump({"hardware": {"provider": "baremetal", **hardware}}, out)
    path = tmp_path / "w.yaml"
    path.write_text(text + out.getvalue())
    return path


@pytest.mark.parametrize("name", WITH_RAM)
def test_detects_owned_server_comment_is_a_hardware_block_that_validates(tmp_path: Path, name: str) -> None:
    said = _owned_yaml(name)
    assert said.startswith("hardware: {buy: false, inventory: [{count: 1, custom: {gpu: "), said
    assert load_errors(_workload(tmp_path, said)) == []


def test_the_old_form_buy_inside_the_inventory_entry_is_refused(tmp_path: Path) -> None:
    """What the old words led to: ``buy`` written in the entry. The loader refuses it, so the advice must not say it."""
    said = _owned_yaml("server-8xh100").replace("{buy: false, inventory: [{", "{inventory: [{buy: false, ")
    errors = load_errors(_workload(tmp_path, said))
    assert any("buy is a field of hardware" in e for e in errors), errors


def test_a_machine_whose_ram_is_not_read_is_told_to_add_it() -> None:
    text = fixed_block(detect_machine(fixture("grace-gh200")))
    assert "custom: {gpu: gh200-96gb, gpus_per_server: 1}}]}, adding ram_gib (the server's RAM in GiB" in text


def test_as_owned_names_hardware_buy() -> None:
    assert AS_OWNED == "hardware.inventory with hardware.buy: false"
    assert "with buy: false" not in fixed_block(detect_machine(fixture("server-8xh100")))
