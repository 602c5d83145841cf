"""newuser99 item 3: an owned custom server of two Radeon RX 7900 XTX was warned ``consumer-gpu-licence``: "AMD Radeon RX
7900 XTX 24GB is a GeForce card, whose driver licence excludes datacenter deployment (section 2.1.3,
https://www.nvidia.com/en-us/drivers/geforce-license/)". That licence is NVIDIA's GeForce driver's; AMD's amdgpu kernel
driver is in the Linux kernel (GPL / MIT), under no such clause. The warning is for NVIDIA consumer cards alone, as
generator/planner/options.py's ``geforce_in_colocation`` already was; an RTX 4090 custom server keeps it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.cli import main

WORKLOAD = """\
version: 1
name: den
deployments:
  - name: chat
    model: Qwen/Qwen3-8B
    inference:
      precision: bf16
      max_context_tokens: 8192
      requests_per_second: 0.05
hardware:
  provider: baremetal
  buy: false
  inventory:
    - custom:
        name: den-box
        gpu: {gpu}
        gpus_per_server: 2
        cpu: ryzen-9-7950x
        cpu_sockets: 1
        ram_gib: 128
        nvme_tb: 2
        nvme_drives: 1
        max_power_w: 1100
        rack_units: 4
      count: 1
"""


def _codes(tmp_path: Path, capsys: pytest.CaptureFixture[str], gpu: str) -> list[dict[str, Any]]:
    path = tmp_path / "den.yaml"
    path.write_text(WORKLOAD.format(gpu=gpu))
    with pytest.raises(SystemExit) as done:
        main(["plan", str(path), "--format", "json"])
    assert done.value.code == 0
    findings: list[dict[str, Any]] = json.loads(capsys.readouterr().out)["findings"]
    return [f for f in findings if f["code"] == "consumer-gpu-licence"]


@pytest.mark.parametrize(("gpu", "warned"), [("rx-7900-xtx-24gb", False), ("rtx-4090-24gb", True)])
def test_geforce_licence_is_nvidia_only(tmp_path: Path, capsys: pytest.CaptureFixture[str], gpu: str, warned: bool) -> None:
    found = _codes(tmp_path, capsys, gpu)
    assert len(found) == int(warned), found
    assert all("GeForce" in f["message"] for f in found)
