"""fix166: the outlet circuit a home or office machine is compared with follows ``hardware.wall_circuit``; a bought
workstation at home (``colocation_usd_per_kw_month: 0``, the README's recipe, or a circuit given) gets the advice too."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.api import plan_file
from generator.planner.wall_circuit import bought_on_outlet, wall_circuit_advice
from generator.workload.models import WallCircuit

EU = WallCircuit(voltage_v=230, breaker_a=16)


@pytest.mark.parametrize(
    ("watts", "circuit", "said", "words"),
    [
        (1_368, None, False, ""),  # 120 V x 15 A x 0.8 x 0.95 = 1,368 W
        (1_369, None, True, "120 V / 15 A circuit carries continuously (1,368 W"),
        (1_978, None, True, "hardware.wall_circuit: {voltage_v: 230, breaker_a: 16}"),  # how to state another
        (1_978, EU, False, ""),  # 230 x 16 x 0.8 x 0.95 = 2,796.8, whole watts 2,796, carries it
        (2_796, EU, False, ""),
        (2_797, EU, True, "230 V / 16 A circuit hardware.wall_circuit gives carries continuously (2,796 W"),
        (3_382, EU, True, "at least 20 A at 230 V"),  # 3,382 / (230 x 0.8 x 0.95) = 19.3
        (1_978, WallCircuit(230, 10), True, "at least 12 A at 230 V"),  # 1,748 W carried
        (3_000, WallCircuit(230, 16, 1.0), False, ""),  # the local rule's full rating: 3,496 W
    ],
)
def test_the_circuit_compared_follows_the_workload(watts: int, circuit: WallCircuit | None, said: bool, words: str) -> None:
    text = wall_circuit_advice("the machine", watts, circuit)
    assert (text is not None) == said
    if said:
        assert text is not None and words in text


@pytest.mark.parametrize(
    ("given", "colocation", "home"),
    [(False, 150.0, False), (False, 0.0, True), (True, 150.0, True), (True, 0.0, True)],
)
def test_a_bought_workstation_at_home(given: bool, colocation: float, home: bool) -> None:
    assert (bought_on_outlet(given, colocation) is not None) == home


OFFICE = """version: 1
name: office-70b
deployments:
  - name: assistant
    model: meta-llama/Llama-3.3-70B-Instruct
    inference: {precision: int4, max_context_tokens: 16384, avg_input_tokens: 1500,
      avg_output_tokens: 400, requests_per_second: 0.2}
hardware:
  provider: baremetal
  gpus: [rtx-pro-6000-ws-96gb]
%s
constants: {colocation_usd_per_kw_month: %s, pue: 1, energy_usd_per_kwh: 0.25}
"""


@pytest.mark.parametrize(
    ("circuit", "colocation", "code", "words"),
    [
        ("", "0", 1, "1,978 W at the wall, more than a 120 V / 15 A"),  # newuser95: none before
        ("", "150", 0, ""),  # racked in colocation: no outlet
        ("  wall_circuit: {voltage_v: 230, breaker_a: 16}", "0", 0, ""),  # 2,797 W carries 1,978 W
        ("  wall_circuit: {voltage_v: 230, breaker_a: 10}", "150", 1, "230 V / 10 A"),
    ],
)
def test_the_newuser95_office_tower(tmp_path: Path, circuit: str, colocation: str, code: int, words: str) -> None:
    path = tmp_path / "office.yaml"
    path.write_text(OFFICE % (circuit, colocation))
    plan = plan_file(str(path))[1]
    found = [f.message for f in plan.findings if f.code == "wall-circuit"]
    assert len(found) == code
    assert all(words in m for m in found)


@pytest.mark.parametrize(
    ("cpu", "circuit", "words"),
    [
        ("", "", None),  # no CPU named: a server in a rack for all specgen knows, as before
        ("", "  wall_circuit: {voltage_v: 120, breaker_a: 10}\n", "120 V / 10 A circuit"),  # the circuit says the outlet
        (", cpu: ryzen-9-7950x", "", "120 V / 15 A circuit"),  # a desktop: the US default, as before
        (", cpu: ryzen-9-7950x", "  wall_circuit: {voltage_v: 230, breaker_a: 16}\n", None),  # 2,796 W carries it
    ],
)
def test_a_fixed_machine_on_the_circuit_given(tmp_path: Path, cpu: str, circuit: str, words: str | None) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(
        "version: 1\nname: t\ndeployments:\n  - name: chat\n    model: meta-llama/Llama-3.1-8B-Instruct\n"
        "    inference: {max_context_tokens: 8192}\nhardware:\n  provider: baremetal\n"
        "  fixed: {gpu: rtx-5090-32gb, gpu_count: 2, ram_gib: 192" + cpu + "}\n" + circuit
    )
    found = [f.message for f in plan_file(str(path))[1].findings if f.code == "wall-circuit"]
    assert len(found) == (words is not None)
    assert all(words is not None and words in m for m in found)
