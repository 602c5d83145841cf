"""A GPU no catalog platform holds is refused with the real reason and the way out (fix183 item 1).

The AMD cards (RX 7900 XTX, Radeon PRO W7900, MI210) and the other platform-less GPUs of the catalog are on no
platform and unpriced: an allowed list naming one was refused with "hardware.cooling: liquid where the site has it"
and "another provider" (neither can help) and no word of ``hardware.fixed``, which plans a machine the user owns.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import catalog
from generator.errors import InfeasibleError
from generator.planner import plan_workload
from generator.workload import load_workload

WORKLOAD = """\
version: 1
name: owned
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: bf16, max_context_tokens: 8192, requests_per_second: 1}}
hardware:
  provider: {provider}
  {hardware}
"""

UNHELD = sorted(g for g in catalog.gpus() if not any(g in p.gpu_ids for p in catalog.platforms().values()))


def _refusal(tmp_path: Path, provider: str, hardware: str) -> str:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(provider=provider, hardware=hardware))
    with pytest.raises(InfeasibleError) as caught:
        plan_workload(load_workload(str(path)))
    return str(caught.value).partition(": hardware: ")[2]


def test_the_amd_cards_are_among_the_unheld() -> None:
    assert {"rx-7900-xtx-24gb", "radeon-pro-w7900-48gb", "mi210-64gb"} <= set(UNHELD)


@pytest.mark.parametrize("gpu", UNHELD)
def test_every_unheld_gpu_is_refused_with_the_reason_and_hardware_fixed(tmp_path: Path, gpu: str) -> None:
    message = _refusal(tmp_path, "baremetal", f"gpus: [{gpu}]")
    why = catalog.unpriced().get(gpu)
    assert f"no platform of any provider in the catalog holds {gpu}, nor is it priced there" in message
    if why:
        assert why in message
    unblock = message.partition("; to unblock: ")[2]
    assert unblock.startswith("allow more GPUs, or describe a server you own or buy under hardware.inventory[].custom")
    assert f"hardware: {{fixed: {{gpu: {gpu}, gpu_count: 1, ram_gib: 64}}}}" in unblock
    for useless in ("liquid", "another provider", "or platforms"):
        assert useless not in unblock


def test_a_cloud_is_told_hardware_fixed_is_bare_metal(tmp_path: Path) -> None:
    message = _refusal(tmp_path, "aws", "gpus: [rx-7900-xtx-24gb]")
    unblock = message.partition("; to unblock: ")[2]
    assert unblock.startswith("allow a GPU the catalog's aws platforms hold (")
    assert "more platforms" not in unblock and "another provider" not in unblock
    assert "hardware: {provider: baremetal, fixed: {gpu: rx-7900-xtx-24gb, gpu_count: 1, ram_gib: 64}}" in unblock


def test_liquid_cooling_is_still_said_where_it_helps(tmp_path: Path) -> None:
    message = _refusal(tmp_path, "baremetal", "gpus: [gb200-186gb, rx-7900-xtx-24gb]")
    assert "hardware.cooling: liquid where the site has it" in message
    assert "planned under hardware.fixed" in message


@pytest.mark.parametrize("gpu", ["rx-7900-xtx-24gb", "radeon-pro-w7900-48gb", "mi210-64gb"])
def test_the_snippet_the_hint_gives_plans(tmp_path: Path, gpu: str) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(provider="baremetal", hardware=f"fixed: {{gpu: {gpu}, gpu_count: 1, ram_gib: 64}}"))
    plan = plan_workload(load_workload(str(path)))
    assert plan.deployments[0].name == "chat"
