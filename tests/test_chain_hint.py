"""A weekly job that could run in turn on another's owned server, idle most of the month (newuser30 item 7)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.planner import plan_workload
from generator.planner.plan import Plan
from generator.workload import load_workload

# The GPUs the lab's jobs were planned on: tune32 buys an RTX 6000 Ada workstation, full8 runs on the owned A100s. m74c
# item 1 (fix87): ranked by their runs' month, both jobs rent GH200 by the hour ($27.96 and $15.81 a run, $175 a month
# at 4 runs), so no job buys and nothing is offered to run in turn; these tests are of a job that buys.
LAB = """\
version: 1
name: lab
deployments:
  - name: tune32
    model: Qwen/Qwen3-32B
    training: {{method: qlora, lora_rank: 16, sequence_length: 4096, global_batch_size: 32, dataset_tokens: 100000000,
      epochs: 1, deadline_hours: 48, runs_per_month: {runs}{after}}}
  - name: full8
    model: meta-llama/Llama-3.1-8B
    training: {{method: full, sequence_length: 4096, global_batch_size: 64, dataset_tokens: 200000000, epochs: 1,
      deadline_hours: 24, runs_per_month: {runs}}}
hardware:
  provider: baremetal
  gpus: [a100-pcie-80gb, rtx-6000-ada-48gb]
  inventory:
    - custom: {{name: old-a100, gpu: a100-pcie-80gb, gpus_per_server: 4, gpu_bridge: true, cpu_cores: 64, cpu_sockets: 2,
        ram_gib: 512, nvme_tb: 7.68, nvme_drives: 2, rack_units: 4}}
      count: 1
"""


def _plan(tmp_path: Path, runs: int = 4, after: str = "") -> Plan:
    path = tmp_path / "lab.yaml"
    path.write_text(LAB.format(runs=runs, after=after))
    return plan_workload(load_workload(str(path)))


def test_a_job_that_buys_is_said_to_fit_in_turn_on_idle_owned_servers(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    pools = {d.name: d.pool for d in plan.deployments}
    assert pools["tune32"] != pools["full8"]
    (said,) = [f for f in plan.findings if f.code == "run-after-idle-servers"]
    assert said.path == "deployments[0].training"
    assert said.message.startswith("tune32 could run after full8, whose servers (1 x old-a100) are busy ")
    assert "with run_after: full8 on tune32 the two run in turn on 1 x old-a100" in said.message
    then, now = (float(m.replace(",", "")) for m in re.findall(r"\$([\d,]+)/month", said.message))
    assert then < now == pytest.approx(plan.totals["usd_per_month"], abs=1)
    # and the chain it suggests plans so
    chained = _plan(tmp_path, after=", run_after: full8")
    assert chained.totals["usd_per_month"] == pytest.approx(then, abs=1)
    assert not [f for f in chained.findings if f.code == "run-after-idle-servers"]


def test_servers_busy_most_of_the_month_are_not_offered(tmp_path: Path) -> None:
    plan = _plan(tmp_path, runs=60)  # 60 runs of full8 fill its server past half the month
    assert not [f for f in plan.findings if f.code == "run-after-idle-servers"]
