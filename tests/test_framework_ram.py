"""fix173: a training job refused for a node's host RAM names the other frameworks whose load fits it (newuser96).

A 70B QLoRA job under fsdp2 or torchtune builds the whole bf16 checkpoint in host memory before sharding it (148 GiB on
a 128 GiB tower); axolotl and trl quantize the base as it loads and fit. The refusal named only more servers or more
RAM. The oracle is the planner itself: a framework is named exactly where the same workload under it plans, and its
figure is the least RAM the owned tower may state for it to plan (one GiB less is refused).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.errors import InfeasibleError
from generator.planner import plan_workload
from generator.sizing.frameworks import FRAMEWORKS
from generator.workload import load_workload
from generator.workload.models import TrainingSpec
from generator.workload.value_checks import spec_conflicts

TOWER = """version: 1
name: home70
deployments:
  - name: tune
    model: meta-llama/Llama-3.1-70B-Instruct
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
      gpus_per_server: 2
      count: 1
      ram_gib: {ram}
"""

NAMED = re.compile(r"another training\.framework, whose load of the checkpoint and offload fit the same servers' RAM: (.*)$")


def _refusal(tmp_path: Path, framework: str, ram: int) -> str | None:
    path = tmp_path / f"{framework}-{ram}.yaml"
    path.write_text(TOWER.format(framework=framework, ram=ram), encoding="utf-8")
    try:
        plan_workload(load_workload(str(path)))
    except InfeasibleError as exc:
        return str(exc)
    return None


def _named(refusal: str) -> dict[str, int]:
    """framework -> GiB, as the refusal names them."""
    found = NAMED.search(refusal)
    assert found, refusal
    out = {}
    for group in found.group(1).split("; "):
        names, gib = re.fullmatch(r"(.+) \(([\d,]+) GiB of RAM a node at the least\)", group).groups()  # type: ignore[union-attr]
        out.update(dict.fromkeys(re.split(r", | and ", names), int(gib.replace(",", ""))))
    return out


@pytest.mark.parametrize("framework", ["fsdp2", "torchtune"])
def test_a_host_ram_refusal_names_the_frameworks_that_plan_on_the_same_ram(tmp_path: Path, framework: str) -> None:
    refusal = _refusal(tmp_path, framework, 128)
    assert refusal is not None and "148 GiB needed" in refusal and "the whole bf16 checkpoint" in refusal
    named = _named(refusal)
    assert {"axolotl", "trl"} <= named.keys()
    # named exactly where the workload under that framework plans on the same 128 GiB
    for other in FRAMEWORKS:
        if other == framework:
            continue
        allowed = not spec_conflicts(TrainingSpec(method="qlora", framework=other, lora_rank=16))
        plans = allowed and _refusal(tmp_path, other, 128) is None
        assert (other in named) == plans, (other, refusal)


def test_the_figure_is_the_least_ram_the_framework_plans_on(tmp_path: Path) -> None:
    gib = _named(_refusal(tmp_path, "fsdp2", 128) or "")["axolotl"]
    assert gib < 128
    assert _refusal(tmp_path, "axolotl", gib) is None
    below = _refusal(tmp_path, "axolotl", gib - 1)
    assert below is not None and f"{gib} GiB needed" in below


def test_nothing_is_named_where_no_framework_fits(tmp_path: Path) -> None:
    refusal = _refusal(tmp_path, "fsdp2", 16)
    assert refusal is not None and "another training.framework" not in refusal
