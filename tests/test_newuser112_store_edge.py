"""newuser112: a retail chain's 30 stores, one small owned box each (2 x L4) in a back office on a 16 A / 230 V outlet.

What the persona found: a host left without its ip_address among 29 that give one was rendered without ansible_host
and said nothing; a duplicated host name did not say where the first one is; a rack server of one's own on an office
outlet was told to "list an owned one" it had already listed; SPEC.md gave a back-office box's heat only as the whole
chain's total.
"""

from __future__ import annotations

from pathlib import Path

from generator.api import plan_as_deployed
from generator.render.markdown import render_markdown
from tests.conftest import REPO
from tests.helpers import run_specgen

EXAMPLE = REPO / "examples" / "store-assistant-edge.yaml"


def _variant(tmp_path: Path, old: str, new: str) -> Path:
    text = EXAMPLE.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "stores.yaml"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def test_the_example_validates_without_an_address_warning() -> None:
    done = run_specgen("validate", str(EXAMPLE))
    assert done.returncode == 0, done.stderr
    assert "host-address-missing" not in done.stderr


def test_a_host_without_its_address_among_others_is_warned_at_its_line(tmp_path: Path) -> None:
    path = _variant(tmp_path, "{name: store-09, ip_address: 10.9.0.10}", "{name: store-09}")
    done = run_specgen("validate", str(path))
    assert done.returncode == 0, done.stderr
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "store-09" in text)
    assert f"{path}:{line}:11: warning: 1 owned host (store-09) gives no ip_address while 29 of the 30 listed " in done.stderr
    assert "[host-address-missing]" in done.stderr
    _, plan = plan_as_deployed(str(path))  # plan says it too, at the host
    assert [f.path for f in plan.findings if f.code == "host-address-missing"] == ["hardware.inventory[0].hosts[8]"]


def test_no_address_anywhere_is_the_sites_choice(tmp_path: Path) -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    path = tmp_path / "stores.yaml"
    for i in range(1, 31):
        text = text.replace(f"{{name: store-{i:02d}, ip_address: 10.{i}.0.10}}", f"{{name: store-{i:02d}}}")
    path.write_text(text, encoding="utf-8")
    done = run_specgen("validate", str(path))
    assert done.returncode == 0 and "host-address-missing" not in done.stderr


def test_a_duplicated_host_name_says_where_the_first_is(tmp_path: Path) -> None:
    path = _variant(tmp_path, "store-07, ip_address", "store-03, ip_address")
    done = run_specgen("validate", str(path))
    assert done.returncode == 1
    lines = path.read_text().splitlines()
    first = next(n for n, text in enumerate(lines, 1) if "store-03" in text)
    second = next(n for n, text in enumerate(lines, 1) if "store-03, ip_address: 10.7" in text)
    assert done.stderr.startswith(
        f"specgen: error: {path}:{second}:18: hardware.inventory[0].hosts[6].name: host name 'store-03' is used twice "
        f"(first at hardware.inventory[0].hosts[2].name, line {first}): "
    )
    assert "Traceback" not in done.stderr


def test_an_owned_rack_server_on_an_outlet_is_told_how_to_say_so(tmp_path: Path) -> None:
    old = "    - custom:\n        name: store-box\n        kind: workstation\n        gpu: l4-24gb\n        gpus_per_server: 2\n"
    rest = "        cpu_cores: 16\n        ram_gib: 64\n        nvme_tb: 1.92\n        max_power_w: 550\n"
    path = _variant(tmp_path, old + rest, "    - platform: dell-r760\n      gpu: l4-24gb\n      gpus_per_server: 2\n")
    done = run_specgen("validate", str(path))
    assert "dell-r760 is a rack server" in done.stderr
    assert (
        "; an owned server that stands on such an outlet (an office, no rack) is given as hardware.inventory[].custom "
        "with kind: workstation, its GPUs, RAM and max_power_w, and its draw is then held to this circuit"
    ) in done.stderr


def test_spec_md_gives_each_box_its_draw_of_the_outlet_and_its_heat() -> None:
    _, plan = plan_as_deployed(str(EXAMPLE))
    spec = render_markdown(plan)["SPEC.md"]
    # 550 W of 230 V x 16 A x 0.8 x 0.95 = 2,796 W (20%); 550 W x 3.412 = 1,877 BTU/h
    line = (
        "each machine on its outlet: 550 W of the 2,796 W the 230 V / 16 A circuit (hardware.wall_circuit) carries "
        "continuously (20%); 1,877 BTU/h of heat into its room"
    )
    assert f"- `chat_embed_l4_24gb` {line}" in spec  # newuser113: each store's one box runs both (sites:)


def test_no_outlet_line_without_a_wall_circuit(tmp_path: Path) -> None:
    path = _variant(tmp_path, "  wall_circuit: {voltage_v: 230, breaker_a: 16}\n", "")
    _, plan = plan_as_deployed(str(path))
    assert "each machine on its outlet" not in render_markdown(plan)["SPEC.md"]


def test_a_box_too_big_for_its_outlet_is_said_at_its_inventory_entry(tmp_path: Path) -> None:
    path = _variant(tmp_path, "max_power_w: 550", "max_power_w: 3000")
    _, plan = plan_as_deployed(str(path))
    said = [f for f in plan.findings if f.code == "wall-circuit"]
    assert [f.path for f in said] == ["hardware.inventory[0]"]  # the one pool on the boxes (newuser113: sites:)
    assert "the owned store-box draws up to 3,000 W at the wall, more than the 230 V / 16 A circuit" in said[0].message


def test_validate_says_a_stated_draw_its_outlet_cannot_carry(tmp_path: Path) -> None:
    path = _variant(tmp_path, "max_power_w: 550", "max_power_w: 3000")
    done = run_specgen("validate", str(path))
    assert done.returncode == 0, done.stderr
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "max_power_w: 3000" in text)
    assert (
        f"{path}:{line}:22: warning: the owned store-box draws up to 3,000 W at the wall, more than the 230 V / 16 A "
        "circuit hardware.wall_circuit gives carries continuously (2,796 W: "
    ) in done.stderr
    assert "give it a circuit of at least 18 A at 230 V or cap the GPUs' power [wall-circuit]" in done.stderr


def test_validate_is_quiet_where_the_outlet_carries_the_box() -> None:
    assert "wall-circuit" not in run_specgen("validate", str(EXAMPLE)).stderr
