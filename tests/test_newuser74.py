"""newuser74 (an ML platform lead on Azure): what ``diff`` says of a node's root disk, and the Azure tree's root.

Item 12: swapping a model resized an AKS pool's OS disk (``os_disk_size_gb`` 223 -> 140), which azurerm applies by
cycling every node through the pool's ``temporary_name_for_rotation`` pool (and Karpenter treats as drift), while
``specgen diff`` said only "changed (what runs on it)". ``spec.json`` now records each cloud pool's root disk
(``root_disk_size``, as the rendered objects ask for it) and the diff counts its change as a replacement, with why.
(Item 4, the multi-file Azure root, is tested with Terraform in tests/test_oracles.py.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.api import render_file
from generator.fleet_diff import pool_replacements, replacement_text, root_disk_changes
from tests.helpers import specgen_in_process as specgen

AZ = """\
version: 1
name: az-chat70b
deployments:
  - name: chat70b
    model: MODEL
    inference:
      precision: fp8
      max_context_tokens: 16384
      avg_input_tokens: 2000
      avg_output_tokens: 400
      requests_per_second: 5
      min_replicas: 2
      slo: {ttft_p95_ms: 2000, tpot_ms: 50}
hardware:
  provider: azure
  gpus: [h200-sxm-141gb]
kubernetes: {location: eastus2, cluster_name: aks-ml}
outputs: [terraform, kubernetes]
"""


def test_a_model_swap_that_resizes_the_aks_os_disk_is_a_replacement(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = tmp_path / "a.yaml", tmp_path / "b.yaml"
    old.write_text(AZ.replace("MODEL", "meta-llama/Llama-3.3-70B-Instruct"))
    new.write_text(AZ.replace("MODEL", "Qwen/Qwen3-32B"))
    disks = []
    for path in (old, new):
        files = render_file(str(path))
        (pool,) = json.loads(files["spec.json"])["plan"]["pools"]
        (aks,) = json.loads(files["terraform/specgen.auto.tfvars.json"])["aks_node_pools"].values()
        assert pool["root_disk_size"] == aks["os_disk_size_gb"]  # the figure the diff compares is the one applied
        assert f"osDiskSizeGB: {aks['os_disk_size_gb']}" in "".join(files.values())
        disks.append(aks["os_disk_size_gb"])
    assert disks == [223, 140]
    code, out, err = specgen(capsys, "diff", str(old), str(new), "--format", "json")
    assert code == 0, err
    (entry,) = json.loads(out)["replacements"]
    assert entry["root_disk"] == {"provider": "azure", "old": 223, "new": 140}
    assert entry["nodes_deleted"] == entry["nodes_created"] == 2
    text = specgen(capsys, "diff", str(old), str(new))[1]
    assert "**Node pools replaced, not resized: 2 node(s) deleted and 2 created.**" in text
    assert "its nodes' OS disk changes (223 → 140 GB)" in text and "temporary_name_for_rotation" in text
    assert "| replaced (OS disk 223 GB → OS disk 140 GB) |" in text


def _spec(provider: str, disk: int | None, **pool: Any) -> dict[str, Any]:
    node = {"gpu_id": "h100-sxm5-80gb", "platform_id": "x", "gpus": 8, "provider": provider}
    entry = {"name": "chat", "nodes": 3, "node": node, **pool}
    if disk is not None:
        entry["root_disk_size"] = disk
    return {"provider": provider, "pools": [entry], "deployments": [{"name": "chat", "pool": "chat"}]}


@pytest.mark.parametrize(
    ("provider", "said"),
    [
        ("azure", "OS disk changes (223 → 140 GB)"),
        ("aws", "root volume changes (223 → 140 GiB)"),
        ("gcp", "boot disk changes (223 → 140 GB)"),
    ],
)
def test_every_cloud_creates_a_node_again_for_another_root_disk(provider: str, said: str) -> None:
    (entry,) = pool_replacements(_spec(provider, 223), _spec(provider, 140))
    assert entry["root_disk"]["old"] == 223 and entry["nodes_deleted"] == 3
    assert said in replacement_text(entry, plain=True)


def test_an_unknown_or_equal_root_disk_and_a_per_job_pool_say_nothing() -> None:
    assert root_disk_changes(_spec("azure", None), _spec("azure", 140)) == {}  # a spec.json from before the field
    assert root_disk_changes(_spec("azure", 140), _spec("azure", 140)) == {}
    assert root_disk_changes(_spec("aws", 223, per_job=True), _spec("aws", 140, per_job=True)) == {}
