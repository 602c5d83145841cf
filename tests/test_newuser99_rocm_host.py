"""newuser99 item 5: a home box of two Radeon RX 7900 XTX (a one-socket AM5 desktop) got AMD's MI300X host tuning in
its Ansible group vars: ``specgen_rocm_host`` with ``kernel.numa_balancing: 0``, the MI300X vLLM benchmark page as its
source and "otherwise the GPU might hang until the periodic balancing is finalized". That page is for Instinct
accelerators in multi-socket servers; nothing of AMD's says it of a Radeon. The host setting is for the Instinct (CDNA)
pools only; the Radeon pool keeps the amdgpu driver and ROCm vars (``specgen_amdgpu_driver``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.cli import main
from tests.helpers import ansible_reader

WORKLOAD = """\
version: 1
name: den
deployments:
  - name: chat
    model: Qwen/Qwen3-30B-A3B
    inference:
      precision: q4_k_m
      max_context_tokens: 8192
      requests_per_second: 0.05
hardware:
  provider: baremetal
  fixed:
    gpu: {gpu}
    gpu_count: 2
    ram_gib: 128
    cpu: ryzen-9-7950x
outputs: [ansible]
"""


def _group_vars(tmp_path: Path, gpu: str) -> dict[str, Any]:
    path = tmp_path / "den.yaml"
    path.write_text(WORKLOAD.format(gpu=gpu))
    with pytest.raises(SystemExit) as done:
        main(["render", str(path), "-o", str(tmp_path / "out")])
    assert done.value.code == 0
    (file,) = (tmp_path / "out" / "ansible" / "group_vars").glob("*.yml")
    values: dict[str, Any] = ansible_reader().load(file.read_text())
    return values


@pytest.mark.parametrize(("gpu", "tuned"), [("rx-7900-xtx-24gb", False), ("radeon-pro-w7900-48gb", False), ("mi210-64gb", True)])
def test_numa_balancing_only_on_instinct(tmp_path: Path, gpu: str, tuned: bool) -> None:
    values = _group_vars(tmp_path, gpu)
    assert ("specgen_rocm_host" in values) is tuned
    assert values["specgen_amdgpu_driver"]["install"] is True
