"""newuser93: a field set inside a list item that belongs to the block holding the list says where it belongs.

README's introduction read "owned servers ... go under ``hardware.inventory`` with ``buy: false``"; written so, inside
the inventory entry, it was refused as "hardware.inventory[0].buy: unknown field 'buy'" with no pointer, though
``buy`` is a field of ``hardware`` (the block holding ``inventory``). The one-level-up hint (newuser48 item 8) walked
into the list's schema, which has items, not properties, so a list item's misplaced field never got it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.errors import InputError
from generator.workload import load_workload

OWNED = """\
version: 1
name: owned
deployments:
  - name: chat
    model: Qwen/Qwen3-32B
    inference:
      precision: fp8
      max_context_tokens: 32768
      avg_input_tokens: 2000
      avg_output_tokens: 400
      requests_per_second: 12
hardware:
  provider: baremetal
  inventory:
    - platform: dell-xe8640
      FIELD
      count: 3
"""


def _refusal(tmp_path: Path, field: str) -> str:
    path = tmp_path / "w.yaml"
    path.write_text(OWNED.replace("FIELD", field), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_workload(str(path))
    return str(caught.value)


@pytest.mark.parametrize(
    ("field", "said"),
    [
        (
            "buy: false",
            "hardware.inventory[0].buy: unknown field 'buy'; buy is a field of hardware (the block holding the list), "
            "not of inventory[0]",
        ),
        (
            "rack_power_kw: 17.3",
            "hardware.inventory[0].rack_power_kw: unknown field 'rack_power_kw'; rack_power_kw is a field of hardware "
            "(the block holding the list), not of inventory[0]",
        ),
    ],
)
def test_a_field_of_the_block_holding_the_list_says_so(tmp_path: Path, field: str, said: str) -> None:
    assert _refusal(tmp_path, field).endswith(said)


def test_a_list_items_own_unknown_field_gets_no_such_pointer(tmp_path: Path) -> None:
    """A key no block above has keeps the plain refusal (with its did-you-mean, where one is close)."""
    text = _refusal(tmp_path, "colour: blue")
    assert "hardware.inventory[0].colour: unknown field 'colour'" in text and "block holding" not in text


def test_the_readme_puts_buy_under_hardware() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    assert "`hardware.inventory` with `buy: false`" not in readme
