"""fix170: small wording fixes, each pinned against the plan's own figures.

Item 1: ``training-fits-idle-gpus`` said a job's own pool of owned servers cost "$X a month, paid whatever runs", where
the plan charges that pool its runs' energy only (and, racked, its colocation, paid whether it runs or not): newuser96
item 2 fixed the same words in ``specgen diff``; the finding now says it as the diff does (shared constants).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.planner import plan_workload
from generator.planner.plan import PAID_AS_RUNS, RUNS_ENERGY_BASIS, RUNS_ENERGY_PAID, Plan
from generator.units import usd_text
from generator.workload import load_workload
from tests.test_newuser94_beside_service import _plan as lab_plan

#: Two owned 2 x RTX 4090 towers (no colocation): a 7B service on one, a 7B QLoRA on the other, a GPU of the service's
#: running a replica past its rate, which the job's run fits.
TOWERS = """version: 1
name: home
deployments:
  - name: chat
    model: Qwen/Qwen2.5-7B-Instruct
    inference:
      max_context_tokens: 4096
      avg_input_tokens: 500
      avg_output_tokens: 200
      requests_per_second: 0.2
  - name: tune
    model: Qwen/Qwen2.5-7B
    training:
      method: qlora
      sequence_length: 2048
      global_batch_size: 16
      dataset_tokens: 2000000
      epochs: 1
hardware:
  provider: baremetal
  buy: false
  inventory:
    - platform: am5-desktop-tower
      gpu: rtx-4090-24gb
      gpus_per_server: 2
      count: 2
      ram_gib: 128
"""


def _towers(tmp_path: Path) -> Plan:
    path = tmp_path / "home.yaml"
    path.write_text(TOWERS, encoding="utf-8")
    return plan_workload(load_workload(str(path)))


def _idle_message(plan: Plan) -> str:
    (found,) = [f for f in plan.findings if f.code == "training-fits-idle-gpus"]
    return found.message


def test_idle_gpus_finding_says_an_owned_towers_month_is_its_runs_energy(tmp_path: Path) -> None:
    plan = _towers(tmp_path)
    tune = plan.deployments[1]
    (own,) = [p for p in plan.pools if p.name == tune.pool]
    assert RUNS_ENERGY_BASIS in str(own.price_basis)  # the premise: the job's own pool is charged its runs' energy
    month = usd_text(tune.details["usd_per_month"])
    message = _idle_message(plan)
    assert f"against its own pool's {month} a month of its runs' energy on owned servers, paid only as it runs." in message
    assert "paid whatever runs" not in message


def test_idle_gpus_finding_splits_a_racked_pools_runs_energy_from_its_colocation(tmp_path: Path) -> None:
    """The lab's owned DGX H100 (racked): its month is the runs' energy (paid as they run) and colocation (not)."""
    plan = lab_plan(tmp_path)
    tune = plan.deployments[1]
    (own,) = [p for p in plan.pools if p.name == tune.pool]
    assert RUNS_ENERGY_BASIS in str(own.price_basis)
    month = tune.details["usd_per_month"]
    message = _idle_message(plan)
    head = f"against its own pool's {usd_text(month)} a month: its runs' energy on owned servers ("
    assert head in message and "paid whatever runs" not in message
    energy_text, rest = message.split(head)[1].split(", paid only as it runs) and their colocation (", 1)
    colocation_text = rest.split(", paid whether they run or not)", 1)[0]
    energy = float(energy_text.lstrip("$").replace(",", ""))
    colocation = float(colocation_text.lstrip("$").replace(",", ""))
    assert 0 < energy < colocation and energy + colocation == pytest.approx(month, abs=0.01)


def test_the_diff_and_the_finding_share_their_words() -> None:
    from generator import fleet_diff

    assert fleet_diff._PAID_BY["owned-runs"] == RUNS_ENERGY_PAID == "its runs' energy on owned servers"
    assert PAID_AS_RUNS == "paid only as it runs"


def _estimate_note(capsys: pytest.CaptureFixture[str], framework: str, gpus: int) -> str:
    from generator.cli import main

    argv = ["estimate", "meta-llama/Llama-3.1-70B-Instruct", "--train", "qlora", "--framework", framework]
    with pytest.raises(SystemExit) as done:
        main([*argv, "--gpu", "rtx-4090-24gb", "--gpus", str(gpus), "--seq-len", "2048"])
    assert done.value.code == 3  # "does NOT fit" (README: estimate exits 3), with the hint of what fits
    (note,) = [line for line in capsys.readouterr().out.splitlines() if line.strip().startswith("note: it fits with")]
    return note


@pytest.mark.parametrize("gpus", [1, 2])
def test_estimates_fit_hint_for_unsloth_on_several_gpus_says_they_are_set_up_by_hand(
    capsys: pytest.CaptureFixture[str], gpus: int
) -> None:
    """fix170 item 2 (newuser96 left 1): Llama 3.1 70B QLoRA with Unsloth on RTX 4090s is offered ZeRO-3 (with parameter
    offload on 2, or over 4 GPUs); the hint now says Unsloth runs on several GPUs only as set up by hand, in the words
    of the plan's ``unsloth-multi-gpu`` warning."""
    from generator.planner.multi_host import unsloth_one_host_text
    from generator.sizing.frameworks import UNSLOTH_MULTI_GPU

    note = _estimate_note(capsys, "unsloth", gpus)
    assert "--zero 3" in note and note.endswith(f". {UNSLOTH_MULTI_GPU}")
    assert UNSLOTH_MULTI_GPU in unsloth_one_host_text(2, 3)  # one wording for the plan's warning and the hint


def test_estimates_fit_hint_for_axolotl_says_no_unsloth_setup(capsys: pytest.CaptureFixture[str]) -> None:
    note = _estimate_note(capsys, "axolotl", 2)
    assert "--zero 3" in note and "Unsloth" not in note


def test_diff_of_a_racked_owned_job_does_not_say_its_colocation_is_paid_only_as_it_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The lab's owned DGX H100 (racked) is charged its runs' energy and its colocation, which is paid whether it runs
    or not: newuser96's "its runs' energy on owned servers, paid only as it runs" read $1,877.46/month so, $1,876.80 of
    it colocation. The diff says it as it did before (owned servers' running cost, paid whatever runs)."""
    from generator.cli import main
    from tests.test_newuser94_beside_service import LAB

    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text(LAB, encoding="utf-8")
    new.write_text(LAB.replace("epochs: 2", "epochs: 3"), encoding="utf-8")
    with pytest.raises(SystemExit):
        main(["diff", str(old), str(new), "--format", "json"])
    rows = {row["deployment"]: row for row in json.loads(capsys.readouterr().out)["deployments"]}
    assert rows["tune"]["old"]["training"]["paid_by"] == rows["tune"]["new"]["training"]["paid_by"] == "owned"
