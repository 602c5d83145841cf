"""A cloud refusal names no site cooling and suggests no liquid cooling (newuser77 item 5).

``plan`` of an AKS workload allowing only the MI325X (no Azure VM has it) said "(with cooling 'air')" and "to unblock:
... hardware.cooling: liquid where the site has it": on a cloud the user sets no cooling, the provider cools its VMs.
Bare metal keeps both (tests/test_rack_scale.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.errors import InfeasibleError
from generator.planner import plan_workload
from generator.workload import load_workload

WORKLOAD = """\
version: 1
name: cloud
deployments:
  - name: chat
    model: meta-llama/Llama-3.3-70B-Instruct
    inference: {{precision: fp8, max_context_tokens: 32768, requests_per_second: 10}}
hardware:
  provider: {provider}
  gpus: [{gpu}]
"""


@pytest.mark.parametrize(
    ("provider", "gpu", "said"),
    [
        ("azure", "mi325x-256gb", "no azure platform in the catalog offers an allowed GPU: no azure platform holds "
                                  "mi325x-256gb; to unblock: allow a GPU the catalog's azure platforms hold ("),
        ("aws", "mi300x-192gb", "no aws platform in the catalog offers an allowed GPU: no aws platform holds "
                                "mi300x-192gb; to unblock: allow a GPU the catalog's aws platforms hold ("),
        ("baremetal", "gb200-186gb", "no baremetal platform in the catalog offers an allowed GPU (with cooling 'air'): "
                                     "gb200-186gb is in gb200-nvl72, liquid-cooled; to unblock: allow more GPUs or "
                                     "platforms, hardware.cooling: liquid where the site has it, or"),
    ],
)  # fmt: skip
def test_site_cooling_is_said_on_bare_metal_only(tmp_path: Path, provider: str, gpu: str, said: str) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(provider=provider, gpu=gpu))
    with pytest.raises(InfeasibleError) as caught:
        plan_workload(load_workload(str(path)))
    message = str(caught.value).partition(": hardware: ")[2]  # the temporary path names the test, "cooling" in it
    assert said in message
    assert ("cooling" in message) is (provider == "baremetal")
