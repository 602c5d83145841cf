"""newuser96: a new user's QLoRA fine-tunes of Qwen2.5-32B and Llama 3.1 70B on owned 2 x RTX 4090 and one rented H100.

Item 1: an Unsloth job planned over the two GPUs of one host (ZeRO-3 x DP2) was said nothing of how it launches, while
the same job over several hosts is warned (``job-spans-hosts``, which names Unsloth's multi-GPU route); the render holds
no DeepSpeed config for it (Unsloth is not among the frameworks ``ds_config.json`` is written for), so the user had
no word that the plan's ZeRO-3 is theirs to set up (https://unsloth.ai/docs/basics/multi-gpu-training-with-unsloth).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.api import render_file
from generator.cli import main
from generator.planner import plan_workload
from generator.planner.plan import RUNS_ENERGY_BASIS, Plan
from generator.workload import load_workload

HOME = """version: 1
name: home32
deployments:
  - name: tune
    model: Qwen/Qwen2.5-32B
    training:
      method: qlora
      framework: {framework}
      lora_rank: 16
      sequence_length: 2048
      global_batch_size: 16
      dataset_tokens: 5000000
      epochs: 1
hardware:
  provider: baremetal
  buy: false
  inventory:
    - platform: am5-desktop-tower
      gpu: rtx-4090-24gb
      gpus_per_server: {gpus}
      count: 1
      ram_gib: 128
"""


def _plan(tmp_path: Path, framework: str, gpus: int) -> tuple[str, Plan]:
    path = tmp_path / "home32.yaml"
    path.write_text(HOME.format(framework=framework, gpus=gpus), encoding="utf-8")
    return str(path), plan_workload(load_workload(str(path)))


def test_an_unsloth_job_over_two_gpus_of_one_host_says_its_launch_is_by_hand(tmp_path: Path) -> None:
    path, plan = _plan(tmp_path, "unsloth", 2)
    (dep,) = plan.deployments
    assert dep.details["world_size"] == 2 and dep.details.get("hosts", 1) == 1
    (finding,) = [f for f in plan.findings if f.code == "unsloth-multi-gpu"]
    assert finding.level == "warning" and finding.path == "deployments[0]"
    zero = int(dep.details.get("zero_stage") or 0)
    assert finding.message.startswith(
        f"deployment tune: the plan runs it {f'ZeRO-{zero} ' if zero else ''}over 2 GPUs, but Unsloth runs on several "
        "GPUs only through Accelerate or DeepSpeed, set up by hand (https://unsloth.ai/docs/basics/"
    )
    # the warning's reason holds: no DeepSpeed config is rendered for an Unsloth job
    assert not [name for name in render_file(path) if name.endswith("ds_config.json")]


@pytest.mark.parametrize(("framework", "gpus"), [("unsloth", 1), ("axolotl", 2)])
def test_no_unsloth_launch_warning_on_one_gpu_or_another_framework(tmp_path: Path, framework: str, gpus: int) -> None:
    _, plan = _plan(tmp_path, framework, gpus)
    assert not [f for f in plan.findings if f.code == "unsloth-multi-gpu"]


def test_a_job_on_an_owned_tower_charged_its_runs_energy_is_not_said_paid_whatever_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """newuser96 item 2: ``specgen diff`` of the tower's QLoRA job read "$0.21/month of owned servers' running cost,
    paid whatever runs", while the plan charges the owned tower its runs' energy alone ("the servers are owned, their
    hours left free charged nothing (off or idle)"): the month is its runs', paid only as it runs."""
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text(HOME.format(framework="unsloth", gpus=2), encoding="utf-8")
    new.write_text(HOME.format(framework="axolotl", gpus=2), encoding="utf-8")
    plan = plan_workload(load_workload(str(old)))
    (pool,) = plan.pools
    assert RUNS_ENERGY_BASIS in str(pool.price_basis)  # the premise: a pool charged its runs' energy
    with pytest.raises(SystemExit) as done:
        main(["diff", str(old), str(new), "--format", "json"])
    assert done.value.code in (0, None)
    (row,) = json.loads(capsys.readouterr().out)["deployments"]
    assert row["old"]["training"]["paid_by"] == row["new"]["training"]["paid_by"] == "owned-runs"
    with pytest.raises(SystemExit):
        main(["diff", str(old), str(new)])
    (line,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| `tune` |")]
    assert "/month of its runs' energy on owned servers, paid only as it runs" in line
    assert "paid whatever runs" not in line
