"""newuser111 item 1: owned servers a training job's global batch leaves free are said, with the batches that use them.

Three owned 8-GPU H200 servers, a 70B job at TP8 and a global batch of 256: 256 does not split over the 3 ranks the
three servers hold, so the plan ran the job on 2 (480 h a run) and named the third free without saying why.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.api import plan_file
from generator.errors import InfeasibleError
from generator.planner.batch_free_servers import batches_for_ranks, hint_batches, owned_servers, ranks_on_all
from generator.planner.plan import Plan
from generator.workload.models import InventoryGroup

LAB = """\
version: 1
name: lab-pretrain
deployments:
  - name: cpt70b
    model: meta-llama/Llama-3.1-70B-Instruct
    training:
      method: full
      framework: megatron
      sequence_length: 8192
      global_batch_size: {batch}
      dataset_tokens: 20000000000
      epochs: 1
hardware:
  provider: baremetal
  buy: false
  rack_power_kw: 33
  inventory:
    - platform: dell-xe9680-hgx-h100-h200
      gpu: h200-sxm-141gb
      count: 3
      fabric_nic: connectx-7-400g-ib
      fabric_nic_count: 8
"""


def _plan(tmp_path: Path, batch: int) -> Plan:
    path = tmp_path / f"lab{batch}.yaml"
    path.write_text(LAB.format(batch=batch))
    return plan_file(str(path))[1]


def test_the_batches_for_ranks_are_the_nearest_multiples() -> None:
    assert batches_for_ranks(256, 3) == [255, 258]
    assert batches_for_ranks(256, 4) == []  # already splits
    assert batches_for_ranks(2, 3) == [3]  # no multiple below that is a batch
    assert ranks_on_all(3, 8, 8) == 3
    assert ranks_on_all(3, 8, 4) == 6


def test_owned_servers_count_the_kind_alone() -> None:
    groups = (
        InventoryGroup(count=3, platform="dell-xe9680-hgx-h100-h200", gpu="h200-sxm-141gb"),
        InventoryGroup(count=2, platform="dell-xe9680-hgx-h100-h200", gpu="h100-sxm5-80gb"),
        InventoryGroup(count=1, platform="dgx-h200", gpu="h200-sxm-141gb"),
    )
    assert owned_servers(groups, "dell-xe9680-hgx-h100-h200", "h200-sxm-141gb", 8) == 3


def test_a_batch_that_leaves_an_owned_server_free_says_the_batches_that_use_it(tmp_path: Path) -> None:
    plan = _plan(tmp_path, 256)
    job = plan.deployments[0]
    assert job.details["hosts"] == 2  # the third server is left free
    found = [f for f in plan.findings if f.code == "batch-leaves-servers-free"]
    assert len(found) == 1
    text = found[0].message
    assert found[0].path == "deployments[0].training.global_batch_size"
    assert "does not split evenly over the 3 data-parallel ranks of TP8 x PP1 that all 3 owned" in text
    assert "leaves 1 of them free" in text
    assert "global_batch_size of 255: cpt70b on 3 x dell-xe9680-hgx-h100-h200" in text
    assert "global_batch_size of 258: cpt70b on 3 x" in text
    # the batch said plans the job on all three servers, in fewer hours
    other = _plan(tmp_path, 258)
    assert other.deployments[0].details["hosts"] == 3
    assert other.deployments[0].details["hours"] < job.details["hours"]
    assert not [f for f in other.findings if f.code == "batch-leaves-servers-free"]


def test_hint_batches_are_nearest_first_and_none_where_the_batch_splits() -> None:
    # 3 x 8 GPUs: 3, 6, 12 or 24 ranks at TP8, 4, 2, 1; 256 splits over none of them
    assert hint_batches(256, [(3, 8)])[:2] == [255, 258]
    assert hint_batches(256, [(4, 8)]) == []  # 4 ranks at TP8 split it


def test_a_refusal_on_owned_servers_names_the_batch_that_runs_the_job_on_all_of_them(tmp_path: Path) -> None:
    path = tmp_path / "lab-deadline.yaml"
    # 256 over the 3 servers' ranks at TP8 takes DP2 on 2 (480 h); 255 runs DP3 on all three in 240 h, within 300
    path.write_text(LAB.format(batch=256).replace("      epochs: 1\n", "      epochs: 1\n      deadline_hours: 300\n"))
    with pytest.raises(InfeasibleError) as caught:
        plan_file(str(path))
    said = str(caught.value)
    assert "with a global_batch_size of 255 in the training of deployment cpt70b" in said
    assert "cpt70b on 3 x dell-xe9680-hgx-h100-h200 (8 x h200-sxm-141gb), 240.39 h a run" in said
