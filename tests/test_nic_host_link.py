"""newuser111 item 3: a GPU-fabric NIC moves at most what the PCIe path between its GPU and it carries.

Owned HGX H200 servers stated with ConnectX-8 800 Gb/s NICs were timed at 800 Gb/s a GPU between nodes; an H200's
PCIe Gen5 x16 moves 63 GB/s a direction (504 Gb/s), which GPUDirect RDMA's transfers cross. A vendor's own build
(a DGX B300's ConnectX-8 on its GPU board) keeps its published rate.
"""

from __future__ import annotations

from pathlib import Path

from generator import catalog
from generator.api import plan_file
from generator.planner.nic_host_link import capped_text, host_link_gbps, nic_data_gbps
from generator.planner.nodes import node_link

LAB = """\
version: 1
name: lab-ib
deployments:
  - name: cpt70b
    model: meta-llama/Llama-3.1-70B-Instruct
    training:
      method: full
      framework: megatron
      sequence_length: 8192
      global_batch_size: 256
      dataset_tokens: 20000000000
      epochs: 1
      deadline_hours: 400
hardware:
  provider: baremetal
  buy: false
  rack_power_kw: 33
  inventory:
    - platform: dell-xe9680-hgx-h100-h200
      gpu: h200-sxm-141gb
      count: 4
      fabric_nic: {nic}
      fabric_nic_count: 8
"""


def test_the_pcie_path_caps_a_nic_faster_than_it() -> None:
    nics, gpus = catalog.nics(), catalog.gpus()
    h200 = gpus["h200-sxm-141gb"]
    assert host_link_gbps(nics["connectx-8-800g"], h200) == 504.0  # Gen5 x16: 63 GB/s x 8
    assert nic_data_gbps(nics["connectx-8-800g"], h200) == 504.0
    assert nic_data_gbps(nics["connectx-7-400g-ib"], h200) == 400.0  # under the link: its ports
    assert capped_text(nics["connectx-7-400g-ib"], h200) == ""
    assert nic_data_gbps(nics["connectx-7-400gbe"], gpus["l40s-48gb"]) == 252.0  # an L40S's Gen4 x16
    assert "PCIe Gen5 x16" in capped_text(nics["connectx-8-800g"], h200)


def test_a_vendor_build_keeps_its_published_rate() -> None:
    platform = catalog.platforms()["dgx-b300"]
    gpu = catalog.gpus()["b300-sxm-270gb"]
    gbps, said = node_link(platform, gpu, 8, True)
    assert gbps == 8 * 800
    assert "(" not in said


def _step_line(tmp_path: Path, nic: str) -> str:
    path = tmp_path / f"{nic}.yaml"
    path.write_text(LAB.format(nic=nic))
    plan = plan_file(str(path))[1]
    return next(r for r in plan.deployments[0].reasons if r.startswith("one step takes"))


def test_owned_servers_stated_with_800g_nics_are_timed_at_their_gpus_pcie(tmp_path: Path) -> None:
    fast = _step_line(tmp_path, "connectx-8-800g")
    assert "8 x 800 Gb/s GPU fabric (504 Gb/s each: the PCIe Gen5 x16 between h200-sxm-141gb and the NIC)" in fast
    assert "shared by 8 data-parallel groups (504 Gb/s each)" in fast
    ndr = _step_line(tmp_path, "connectx-7-400g-ib")
    assert "8 x 400 Gb/s GPU fabric, shared by 8 data-parallel groups (400 Gb/s each)" in ndr
