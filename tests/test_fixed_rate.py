"""A machine of yours asked for more requests than it serves (newuser29 item 7).

`hardware.fixed` at 5 req/s of a 70B offloaded to RAM was planned with exit 0 and a warning that one stream is short,
550 times short; and at the example's own 0.01 req/s the plan said the rate needs 3.0 tokens/s where one stream makes
2.73, though llama.cpp's server decodes several requests a step. Now the rate takes llama.cpp server slots (`-np`,
with a unified KV cache in the tokens planned), each step reading the weights once for all of them; a rate beyond
what the slots the KV cache holds can make is refused at its field (exit 3), as owned servers with `buy: false` are.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from generator.api import plan_file
from generator.catalog import find_model
from generator.cli import main
from generator.errors import InfeasibleError
from generator.sizing.architecture import Architecture, parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.offload import Machine, Placement, offload_cost, place, stream_capacity
from generator.sizing.precision import WeightFormat, weight_format
from generator.units import GIB
from tests.conftest import REPO

HOME = (REPO / "examples" / "home-70b-offload.yaml").read_text()
CONSTS = Constants()


def _at(tmp_path: Path, rps: float) -> Path:
    path = tmp_path / "home.yaml"
    path.write_text(re.sub(r"requests_per_second: [0-9.]+", f"requests_per_second: {rps:g}", HOME))
    return path


def test_the_examples_rate_takes_two_slots(tmp_path: Path) -> None:
    plan = plan_file(str(_at(tmp_path, 0.01)))[1].to_dict()
    (said,) = [f for f in plan["findings"] if f["code"] == "parallel-slots"]
    assert said["path"] == "deployments[0].inference.requests_per_second"
    assert said["message"].startswith("the request rate needs 3.0 output tokens/s and one stream makes 2.73: 2 llama.cpp")
    options = plan["deployments"][0]["details"]["runtime_settings"]
    assert (options["llama.cpp_options"]["parallel"], options["llama.cpp_options"]["kv_unified"]) == (2, True)
    assert options["llama.cpp"].endswith("-np 2 -kvu") or " -np 2 -kvu" in options["llama.cpp"]


def test_a_rate_one_stream_makes_takes_no_slots(tmp_path: Path) -> None:
    plan = plan_file(str(_at(tmp_path, 0.005)))[1].to_dict()
    assert not [f for f in plan["findings"] if f["code"] == "parallel-slots"]
    assert "parallel" not in plan["deployments"][0]["details"]["runtime_settings"]["llama.cpp_options"]
    assert "-np" not in plan["deployments"][0]["details"]["runtime_settings"]["llama.cpp"]


def test_a_rate_beyond_the_machine_is_refused_at_its_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _at(tmp_path, 5)
    with pytest.raises(InfeasibleError) as refused:
        plan_file(str(path))
    said = str(refused.value)
    assert said.startswith(
        f"{path}:14:28: deployments[0].inference.requests_per_second: 5 req/s x 300 output tokens need 1,500.0"
    )
    assert (
        "makes at most 38.53 with 64 llama.cpp server slot(s) (the best count that fits its memory, more KV cache leaving "
        "less of it to the weights; a KV cache of 70,400 tokens for requests of 1,100;" in said
    )
    with pytest.raises(SystemExit) as exited:
        main(["plan", str(path)])
    assert exited.value.code == 3
    err = capsys.readouterr().err
    assert "Traceback" not in err and "requests_per_second: 5 req/s" in err


def _offloaded() -> tuple[Architecture, WeightFormat, Machine, Placement]:
    """Llama 3.1 70B at q4_k_m on a 24 GiB GPU with 128 GiB of RAM: most layers on the CPU."""
    arch = parse_architecture(find_model("meta-llama/Llama-3.1-70B-Instruct").config)
    fmt = weight_format("q4_k_m")
    machine = Machine(1, 24 * GIB, 1008.0, 82.6, 25.0, 128 * GIB, 8 * GIB, 0, 2000 * GIB, 7.0, 80.0)
    return arch, fmt, machine, place(arch, fmt, 16, 8192, machine, CONSTS)


def test_slots_share_the_weights_of_a_step() -> None:
    arch, fmt, machine, placement = _offloaded()
    speeds = [offload_cost(arch, fmt, 16, placement, machine, 950, CONSTS, 950, n).decode_tokens_per_s for n in (1, 2, 4, 7)]
    totals = [n * s for n, s in zip((1, 2, 4, 7), speeds, strict=True)]
    assert speeds == sorted(speeds, reverse=True)  # each stream slower as the step grows
    assert totals == sorted(totals) and totals[1] > 1.8 * totals[0]  # the weights' time is shared: output nearly doubles
    assert offload_cost(arch, fmt, 16, placement, machine, 950, CONSTS, 950).decode_tokens_per_s == speeds[0]


@pytest.mark.parametrize("demand", [1.0, 3.0, 5.0, 9.0, 1e6])
def test_the_fewest_slots_that_meet_the_demand(demand: float) -> None:
    arch, fmt, machine, _ = _offloaded()
    got = stream_capacity(arch, fmt, 16, 8192, machine, CONSTS, 950, 1100, demand)
    assert got.context_tokens == max(8192, got.streams * 1100)  # a unified cache of the slots' requests
    if got.tokens_per_s < demand:  # beyond the machine: the best count found, twice as many not fitting its memory
        assert got.memory_bound and got.streams > 1
        with pytest.raises(InfeasibleError):
            place(arch, fmt, 16, 2 * got.streams * 1100, machine, CONSTS)
        return
    assert not got.memory_bound
    if got.streams > 1:  # one slot fewer falls short
        fewer = place(arch, fmt, 16, max(8192, (got.streams - 1) * 1100), machine, CONSTS)
        one_less = offload_cost(arch, fmt, 16, fewer, machine, 950, CONSTS, 950, got.streams - 1)
        assert one_less.decode_tokens_per_s * (got.streams - 1) < demand


def test_the_spec_json_keeps_the_rate_and_the_slots(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exited:
        main(["render", str(_at(tmp_path, 0.01)), "-o", str(out)])
    assert exited.value.code == 0
    spec = json.loads((out / "spec.json").read_text())
    assert spec["plan"]["deployments"][0]["details"]["requests_per_s"] == 0.01
    assert "-np 2 -kvu" in spec["plan"]["deployments"][0]["details"]["runtime_settings"]["llama.cpp"]


def test_validate_refuses_the_rate_as_plan_does(tmp_path: Path) -> None:
    """validate runs a fixed machine's placement (a calculation, not a search), so it says what plan would."""
    from generator.planner.early import early_checks
    from generator.workload import load_workload

    path = _at(tmp_path, 5)
    with pytest.raises(InfeasibleError, match=r"requests_per_second: 5 req/s x 300 output tokens need 1,500\.0"):
        early_checks(load_workload(str(path)))
