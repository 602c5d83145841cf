"""A server whose NVMe capacity the catalog sources without the drive count (newuser36 item 9).

The Dell XE9680 (HGX H100 / H200) is 3.0 TB of NVMe in its MLPerf submission, with no drive count: the group vars
said ``drives: 0`` beside ``capacity_tb: 3.0`` (a role building the model-cache array from ``drives`` got none), and
the owned-build finding "0 NVMe data drive(s)".
"""

from __future__ import annotations

from pathlib import Path

from generator.planner import plan_workload
from generator.render import render_plan
from generator.workload import load_workload
from tests.helpers import ansible_reader

WORKLOAD = """\
version: 1
name: xe
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-70B-Instruct
    platform: dell-xe9680-hgx-h100-h200
    inference: {precision: fp8, max_context_tokens: 8192, requests_per_second: 2}
hardware:
  gpus: [h100-sxm5-80gb]
  provider: baremetal
  inventory:
    - {platform: dell-xe9680-hgx-h100-h200, gpu: h100-sxm5-80gb, count: 1}
outputs: [ansible]
"""


def test_a_capacity_without_a_drive_count_is_said_so(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD)
    loaded = load_workload(str(path))
    plan = plan_workload(loaded)
    (pool,) = plan.pools
    assert (pool.node.nvme_tb, pool.node.nvme_drives) == (3.0, 0)
    files = render_plan(plan, loaded.workload)
    nvme = ansible_reader().load(files[f"ansible/group_vars/{pool.name}.yml"].split("---\n", 1)[1])["specgen_nvme"]
    assert (nvme["capacity_tb"], nvme["drives"], nvme["raid_level"]) == (3.0, None, None)
    (owned,) = [f.message for f in plan.findings if f.code == "owned-build-assumed"]
    assert "3 TB of NVMe data drives a host (how many drives: not in the catalog)" in owned
    assert "0 NVMe data drive(s)" not in owned
