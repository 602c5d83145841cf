"""A plan serving with vLLM / SGLang on an owned RDNA 3 server says specgen has no measurement there (fix186 item 2).

fix183 item 4 put the note in ``specgen estimate`` alone: a plan of an owned RX 7900 XTX or Radeon PRO W7900 server
(``hardware.inventory``, the one path that serves vLLM or SGLang on them: no catalog platform holds them, and
``hardware.fixed`` runs llama.cpp) said nothing of it. The words are the estimate's, from one function.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.calculator.rdna3_engines import rdna3_engine_note
from generator.planner import plan_workload
from generator.planner.rdna3_finding import RDNA3_ENGINE_UNMEASURED
from generator.workload import load_workload

OWNED = """\
version: 1
name: rdna
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference:
      engine: {engine}
      precision: bf16
      max_context_tokens: 8192
      requests_per_second: 1
hardware:
  gpus: [{gpu}]
  provider: baremetal
  inventory:
    - custom:
        name: den
        gpu: {gpu}
        gpus_per_server: 2
        cpu: epyc-9354
        cpu_sockets: 1
        ram_gib: 128
        nvme_tb: 2
        nvme_drives: 1
        frontend_nic: connectx-6-lx-2p-25gbe
        frontend_nic_count: 1
        max_power_w: 1300
        rack_units: 4
      count: 1
"""


def _findings(tmp_path: Path, gpu: str, engine: str) -> list[tuple[str, str, str]]:
    path = tmp_path / "w.yaml"
    path.write_text(OWNED.format(gpu=gpu, engine=engine))
    plan = plan_workload(load_workload(str(path)))
    return [(f.level, f.message, f.path) for f in plan.findings if f.code == RDNA3_ENGINE_UNMEASURED]


@pytest.mark.parametrize("gpu", ["rx-7900-xtx-24gb", "radeon-pro-w7900-48gb"])
@pytest.mark.parametrize(("engine", "severity"), [("vllm", "info"), ("sglang", "warning")])
def test_owned_rdna3_server_says_it(tmp_path: Path, gpu: str, engine: str, severity: str) -> None:
    note = rdna3_engine_note(engine, "rdna3")
    assert _findings(tmp_path, gpu, engine) == [(severity, f"deployment chat on {gpu}: {note}", "deployments[0]")]


def test_not_said_off_rdna3(tmp_path: Path) -> None:
    assert _findings(tmp_path, "a40-48gb", "vllm") == []
