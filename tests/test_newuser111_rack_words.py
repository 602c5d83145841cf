"""newuser111 item 2: a max_racks refusal said a rack's circuits "2 circuit(s) none, 2 serving" of redundancy none."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.api import plan_file
from generator.errors import FleetLimitError
from generator.planner.rack_findings import redundancy_said

ROOM = """\
version: 1
name: lab-room
deployments:
  - name: cpt70b
    model: meta-llama/Llama-3.1-70B-Instruct
    training:
      method: full
      framework: megatron
      sequence_length: 8192
      global_batch_size: 256
      dataset_tokens: 20000000000
      epochs: 1
      deadline_hours: 200
hardware:
  provider: baremetal
  buy: false
  max_racks: 1
  rack_circuits: {voltage_v: 400, phases: 3, breaker_a: 32, circuits: 2, redundancy: none}
  inventory:
    - platform: dell-xe9680-hgx-h100-h200
      gpu: h200-sxm-141gb
      count: 4
      fabric_nic: connectx-7-400g-ib
      fabric_nic_count: 8
"""


def test_redundancy_is_said_in_words() -> None:
    assert redundancy_said("none") == "without redundancy"
    assert redundancy_said("2N") == "2N"


def test_a_room_of_two_feeds_too_small_for_four_servers_names_its_circuits_in_words(tmp_path: Path) -> None:
    path = tmp_path / "room.yaml"
    # the deadline needs all four owned 10.2 kW servers; the room's two 32 A feeds carry 33.7 kW
    path.write_text(ROOM)
    with pytest.raises(FleetLimitError) as caught:
        plan_file(str(path))
    said = str(caught.value)
    assert "hardware.max_racks is 1" in said
    assert "a rack's 2 circuit(s) without redundancy, 2 serving, of 400 V 32 A 3-phase" in said
    assert "circuit(s) none" not in said
