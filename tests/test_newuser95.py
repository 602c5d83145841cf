"""A home user's questions about a machine they have (newuser95: the seed articles' power and electricity question).

Item 1: ``constants: {energy_usd_per_kwh: 0.25}`` beside ``hardware.fixed`` read ``unpriced`` and nothing on the
constant; now the machine's energy a month is said (``fixed-energy``, info: wall power x ``power_utilization`` x PUE 1 x
$/kWh x 730 h, the formula an owned workstation's running cost takes), and the cost constants a machine you have never
reads (``amortization_months``, ``pue``, ``colocation_usd_per_kw_month``) are ``setting-unused``. Hand check for the
example's machine (RTX 4090 + Ryzen 9 7950X, 766 W at the wall: 450 W GPU TDP, the CPU's 230 W PPT, DIMMs and drive over
the supply's efficiency): 0.766 x 0.6 x 0.25 x 730 = $83.88/month.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.api import plan_file
from generator.fleet_diff import _command_moved, _context_text, row_changes
from tests.conftest import REPO
from tests.helpers import run_specgen

HOME = (REPO / "examples" / "home-70b-offload.yaml").read_text()

#: constants given -> (the fixed-energy finding's path or None, the constants said unused, $/kWh, utilisation)
CASES = [
    ({}, None, [], None, None),
    ({"energy_usd_per_kwh": 0.25}, "constants.energy_usd_per_kwh", [], 0.25, 0.6),
    ({"power_utilization": 0.2}, "constants.power_utilization", [], 0.13, 0.2),  # the default $0.13/kWh
    ({"energy_usd_per_kwh": 0.3, "pue": 1.4}, "constants.energy_usd_per_kwh", ["constants.pue"], 0.3, 0.6),
    (
        {"amortization_months": 48, "colocation_usd_per_kw_month": 150},
        None,
        ["constants.amortization_months", "constants.colocation_usd_per_kw_month"],
        None,
        None,
    ),
]


@pytest.mark.parametrize(("given", "energy_path", "unused", "usd_per_kwh", "utilisation"), CASES)
def test_fixed_machine_cost_constants_are_said(
    tmp_path: Path,
    given: dict[str, float],
    energy_path: str | None,
    unused: list[str],
    usd_per_kwh: float | None,
    utilisation: float | None,
) -> None:
    path = tmp_path / "home.yaml"
    block = "".join(f"  {k}: {v}\n" for k, v in given.items())
    path.write_text(HOME + (f"constants:\n{block}" if given else ""))
    plan = plan_file(str(path))[1].to_dict()
    findings = plan["findings"]
    energy = [f for f in findings if f["code"] == "fixed-energy"]
    assert [f["path"] for f in energy] == ([energy_path] if energy_path else [])
    said = sorted(f["path"] for f in findings if f["code"] == "setting-unused" and f["path"].startswith("constants."))
    assert said == unused
    assert plan["totals"]["usd_per_month"] is None  # still unpriced: the machine is had
    if energy:
        assert usd_per_kwh is not None and utilisation is not None
        kw = plan["pools"][0]["power_w"] / 1000
        month = kw * utilisation * usd_per_kwh * 730
        assert energy[0]["level"] == "info"
        assert f"= ${month:,.2f}/month" in energy[0]["message"]
        assert f"{kw:.2f} kW at the wall x {utilisation:g} utilisation" in energy[0]["message"]


#: item 2: the machine changed (the CPU, so its memory channels) or the precision -> the marker's parts, in order
DIFF_CASES = [
    (
        ("cpu: ryzen-9-7950x", "cpu: threadripper-pro-7975wx"),
        ["command … -np 5 … → … -np 3 …"],  # the slots the rate takes, the machine faster
        ["decode 2.79 → 5.77 tokens/s"],  # 2 -> 8 channels of DDR5-5200: 83.2 -> 332.8 GB/s
    ),
    (
        ("precision: q4_k_m", "precision: q5_k_m"),
        ["precision q4_k_m → q5_k_m", "command -ngl "],
        ["decode ", "weights on GPU "],
    ),
]


@pytest.mark.parametrize(("swap", "settings", "figures"), DIFF_CASES)
def test_a_machine_rows_marker_says_what_the_change_gives(
    tmp_path: Path, swap: tuple[str, str], settings: list[str], figures: list[str]
) -> None:
    """The marker says the words of the llama.cpp line that moved, not both whole lines, and the speed it gives."""
    (tmp_path / "old.yaml").write_text(HOME)
    (tmp_path / "new.yaml").write_text(HOME.replace(*swap))
    data = json.loads(run_specgen("diff", "old.yaml", "new.yaml", "--format", "json", cwd=tmp_path).stdout)
    (row,) = data["deployments"]
    marker = row_changes(row["old"], row["new"])
    old, new = row["old"]["machine"], row["new"]["machine"]
    assert old["decode_tokens_per_s"] != new["decode_tokens_per_s"]
    assert f"decode {old['decode_tokens_per_s']:,.2f} → {new['decode_tokens_per_s']:,.2f} tokens/s" in marker
    if old["command"] != new["command"]:
        assert old["command"] not in marker and new["command"] not in marker  # the words that moved, not the lines
    head, _, tail = marker.partition("; giving " if settings else "changed at the same settings: ")
    assert all(s in head for s in settings), marker
    assert all(f in (tail or head) for f in figures), marker


#: the words of two llama.cpp lines that differ, a flag's value with its flag
COMMAND_CASES = [
    ("-ngl 37 -c 32768 -np 3 -kvu -b 2048", "-ngl 37 -c 32768 -np 2 -kvu -b 2048", "command … -np 3 … → … -np 2 …"),
    ("-ngl 44 -c 8192 -np 1", "-ngl 10 -c 8192 -np 1", "command -ngl 44 … → -ngl 10 …"),
    ("-ngl 44 -c 8192", "-ngl 44 -c 8192 --no-mmap", "command … (none) → … --no-mmap"),
]


@pytest.mark.parametrize(("was", "now", "said"), COMMAND_CASES)
def test_command_words_moved(was: str, now: str, said: str) -> None:
    assert _command_moved({"machine": {"command": was}}, {"machine": {"command": now}}) == said


#: item 3: a machine row's context -> its cell's words (llama.cpp's -c of slots sharing one KV cache is no request's)
CONTEXT_CASES = [
    (
        {"max_model_len": 147400, "machine": {"command": "-ngl 10 -c 147400 -np 134 -kvu"}},
        "llama.cpp -c 147,400 (the KV cache its server slots share)",
    ),
    ({"max_model_len": 8192, "machine": {"command": "-ngl 44 -c 8192 -np 1"}}, "max_model_len 8,192"),
    (
        {"max_model_len": 32768, "serving": {"max_concurrency_at_max_model_len": 2.67}},
        "max_model_len 32,768 (2.67 such sequences a replica)",
    ),
]


@pytest.mark.parametrize(("row", "said"), CONTEXT_CASES)
def test_a_machine_rows_context_is_said_as_llama_cpp_holds_it(row: dict[str, object], said: str) -> None:
    assert _context_text(row) == said


def test_q4_to_bf16_on_the_home_machine_says_c_once(tmp_path: Path) -> None:
    """70B q4_k_m -> bf16 read "max_model_len 8,192 → 147,400": 134 slots' shared -c, past the 131,072-token training context."""
    (tmp_path / "old.yaml").write_text(HOME)
    (tmp_path / "new.yaml").write_text(HOME.replace("precision: q4_k_m", "precision: bf16"))
    data = json.loads(run_specgen("diff", "old.yaml", "new.yaml", "--format", "json", cwd=tmp_path).stdout)
    (row,) = data["deployments"]
    marker = row_changes(row["old"], row["new"])
    assert "-kvu" in row["new"]["machine"]["command"] and row["new"]["max_model_len"] > 131072
    assert marker.startswith("changed: precision q4_k_m → bf16, command ") and "max_model_len" not in marker
