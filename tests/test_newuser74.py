"""newuser74 (an ML platform lead on Azure): what ``diff`` says of a node's root disk, and the Azure tree's root.

Item 12: swapping a model resized an AKS pool's OS disk (``os_disk_size_gb`` 223 -> 140), which azurerm applies by
cycling every node through the pool's ``temporary_name_for_rotation`` pool (and Karpenter treats as drift), while
``specgen diff`` said only "changed (what runs on it)". ``spec.json`` now records each cloud pool's root disk
(``root_disk_size``, as the rendered objects ask for it) and the diff counts its change as a replacement, with why.
(Item 4, the multi-file Azure root, is tested with Terraform in tests/test_oracles.py.)
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

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
    # fix115 item 2: Azure's disk "GB" is GiB (node_disk.AZURE_DISK_UNIT), as said now
    assert "its nodes' OS disk changes (223 → 140 GiB)" in text and "temporary_name_for_rotation" in text
    assert "| replaced (OS disk 223 GiB → OS disk 140 GiB) |" in text


def _spec(provider: str, disk: int | None, **pool: Any) -> dict[str, Any]:
    node = {"gpu_id": "h100-sxm5-80gb", "platform_id": "x", "gpus": 8, "provider": provider}
    entry = {"name": "chat", "nodes": 3, "node": node, **pool}
    if disk is not None:
        entry["root_disk_size"] = disk
    return {"provider": provider, "pools": [entry], "deployments": [{"name": "chat", "pool": "chat"}]}


@pytest.mark.parametrize(
    ("model", "disk", "files_gb"), [("meta-llama/Llama-3.3-70B-Instruct", 223, 141.1), ("Qwen/Qwen3-32B", 140, 65.5)]
)
def test_spec_md_says_what_the_aks_os_disk_is_sized_from(tmp_path: Path, model: str, disk: int, files_gb: float) -> None:
    """newuser74 item 15: ``os_disk_size_gb`` 223 / 140 stood in the AKS Terraform with no word in SPEC.md on what it is
    sized from. SPEC.md now says it under the pools, from the figures that size it: the OS's 30 GiB, the pool's files
    and one 30 GB engine image, below kubelet's 85% image-collection threshold."""
    (path := tmp_path / "w.yaml").write_text(AZ.replace("MODEL", model))
    files = render_file(str(path))
    (pool,) = json.loads(files["spec.json"])["plan"]["pools"]
    (aks,) = json.loads(files["terraform/specgen.auto.tfvars.json"])["aks_node_pools"].values()
    assert aks["os_disk_size_gb"] == disk == math.ceil((30 * 2**30 + pool["files_bytes"] + 30e9) / 0.85 / 2**30)
    (line,) = [line for line in files["SPEC.md"].splitlines() if "node disk:" in line]
    assert line == (
        f"- `{pool['name']}` node disk: OS disk, AKS node pool os_disk_size_gb / AKSNodeClass osDiskSizeGB {disk} GiB, "
        "sized "
        f"to hold the pool's files, {files_gb} GB (its models' checkpoint files, a training job's dataset and checkpoints: "
        "files_bytes), and 1 engine image(s) of 30 GB, with the OS's 30 GiB, below kubelet's 85% image-collection "
        f"threshold: {disk} GiB; another model or dataset resizes it, which replaces every node of the pool"
    )
    assert round(pool["files_bytes"] / 1e9, 1) == files_gb


@pytest.mark.parametrize(
    ("provider", "said"),
    [
        ("azure", "OS disk changes (223 → 140 GiB)"),  # fix115 item 2: Azure's "GB" is GiB
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


@pytest.mark.parametrize(
    ("platform_id", "cores"),
    [
        # newuser74 MED: "96 physical 4th Gen Intel Xeon Scalable processor cores" (nd-h100-v5-series-summary.md)
        ("azure-standard-nd96isr-h100-v5", 96),
        ("azure-standard-nd96amsr-a100-v4", 96),  # "96 physical 2nd-generation AMD Epyc 7V12 (Rome) CPU cores"
        ("azure-standard-nd96asr-v4", 96),
        ("azure-standard-nc96ads-a100-v4", 96),  # "up to 96 non-multithreaded AMD EPYC Milan processor cores"
        ("azure-standard-nc24ads-a100-v4", 24),
        ("azure-standard-nc80adis-h100-v5", 80),  # "up to 96 non-multithreaded AMD EPYC Genoa processor cores"
        ("azure-standard-nc40ads-h100-v5", 40),
    ],
)
def test_azure_vcpus_that_are_physical_cores_count_as_cores(platform_id: str, cores: int) -> None:
    from generator.catalog import platforms

    platform = platforms()[platform_id]
    per_core = 1 if platform.vcpus_physical else 2
    assert (platform.vcpus or 0) // per_core == cores


def test_nd_h100_v5_is_not_said_to_be_short_of_cpu_cores(tmp_path: Path) -> None:
    path = tmp_path / "h100.yaml"
    path.write_text(AZ.replace("MODEL", "meta-llama/Llama-3.3-70B-Instruct").replace("h200-sxm-141gb", "h100-sxm5-80gb"))
    files = render_file(str(path))
    plan = json.loads(files["spec.json"])["plan"]
    assert {p["node"]["platform_id"] for p in plan["pools"]} == {"azure-standard-nd96isr-h100-v5"}
    assert {p["node"]["cpu_cores"] for p in plan["pools"]} == {96}
    assert not [f for f in plan["findings"] if f["code"] == "few-cpu-cores"]


def test_a_cluster_outside_the_priced_region_is_warned_and_its_dollars_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """newuser74 item 9: brazilsouth got eastus2's dollars in the headline and SPEC.md with only an info."""
    path = tmp_path / "brazil.yaml"
    path.write_text(AZ.replace("MODEL", "meta-llama/Llama-3.3-70B-Instruct").replace("eastus2", "brazilsouth"))
    files = render_file(str(path))
    plan = json.loads(files["spec.json"])["plan"]
    (found,) = [f for f in plan["findings"] if f["code"] == "price-region"]
    assert found["level"] == "warning"
    assert "the plan's dollars for it are eastus2's, not brazilsouth's" in found["message"]
    assert "whether brazilsouth offers Standard_ND96isr_H200_v5 at all is not checked" in found["message"]
    assert "/month at eastus2 rates (the cluster is in brazilsouth: warning `price-region`) |" in files["SPEC.md"]
    code, out, _ = specgen(capsys, "plan", str(path), "--fail-on", "warning")
    assert code == 5
    assert "/month at eastus2 rates (the cluster is in brazilsouth: warning price-region)" in out.splitlines()[0]
    path.write_text(AZ.replace("MODEL", "meta-llama/Llama-3.3-70B-Instruct"))
    code, out, _ = specgen(capsys, "plan", str(path))
    assert code == 0 and " rates (" not in out.splitlines()[0]


SGLANG = """\
version: 1
name: az-sglang
deployments:
  - name: coder
    model: Qwen/Qwen3-30B-A3B
    inference:
      engine: sglang
      precision: fp8
      kv_cache_precision: fp8
      max_num_seqs: MAX
      max_context_tokens: 32768
      avg_input_tokens: 6000
      avg_output_tokens: 400
      requests_per_second: 6
      slo: {ttft_p95_ms: 3000, tpot_ms: 50}
hardware:
  provider: azure
  gpus: [h100-sxm5-80gb, h100-nvl-94gb, a100-sxm4-80gb]
kubernetes: {location: eastus2, cluster_name: aks-ml}
outputs: [terraform, ansible, kubernetes]
"""


def test_sglang_group_vars_carry_the_sizings_settings_as_its_flags(tmp_path: Path) -> None:
    """newuser74 item 13: the plan's "1,114,668 KV tokens fit ... by SGLang's mem_fraction_static accounting" rests on
    0.86 and its batch on the 87 running requests asked, which stood beside ``args`` as keys named as vLLM's
    (``max_model_len``, ``max_num_seqs``), so a role passing ``args`` started SGLang at its own defaults. Now args
    starts ``--context-length --max-running-requests --mem-fraction-static`` and the keys are SGLang's names."""
    (path := tmp_path / "w.yaml").write_text(SGLANG.replace("MAX", "87"))
    files = render_file(str(path))
    (dep,) = json.loads(files["spec.json"])["plan"]["deployments"]
    (name,) = [n for n in files if n.startswith("ansible/group_vars/")]
    (entry,) = YAML(typ="safe").load(files[name].replace("!unsafe ", ""))["specgen_deployments"]
    engine = entry["engine"]
    fraction, context = dep["details"]["mem_fraction_static"], dep["details"]["context_tokens"]
    assert (engine["context_length"], engine["max_running_requests"], engine["mem_fraction_static"]) == (32768, 87, fraction)
    assert context == 32768 and "max_num_seqs" not in engine and "max_model_len" not in engine
    assert engine["args"][:2] == ["--tp-size", str(entry["tensor_parallel"])]  # its layout first (fix115)
    assert engine["args"][2:8] == ["--context-length", "32768", "--max-running-requests", "87", "--mem-fraction-static",
                                   str(fraction)]  # fmt: skip
    assert engine["args"][8:] == ["--quantization", "fp8", "--kv-cache-dtype", "fp8_e4m3"]


def test_sglangs_admission_limit_is_named_by_its_flag_in_every_line(tmp_path: Path) -> None:
    """newuser74 item 18: "SGLang admits up to 2,048 (--max-running-requests)" in one plan, "(max_num_seqs)", vLLM's
    name, in another: both name SGLang's flag now (and a vLLM plan its --max-num-seqs)."""
    (path := tmp_path / "w.yaml").write_text(SGLANG.replace("      max_num_seqs: MAX\n", ""))
    reasons = " ".join(r for d in json.loads(render_file(str(path))["spec.json"])["plan"]["deployments"] for r in d["reasons"])
    assert "SGLang admits up to 2,048 (--max-running-requests)" in reasons and "(max_num_seqs)" not in reasons
    (path := tmp_path / "v.yaml").write_text(
        SGLANG.replace("      max_num_seqs: MAX\n", "").replace("engine: sglang", "engine: vllm")
    )
    reasons = " ".join(r for d in json.loads(render_file(str(path))["spec.json"])["plan"]["deployments"] for r in d["reasons"])
    assert "vLLM admits up to" in reasons and "(--max-num-seqs)" in reasons and "(max_num_seqs)" not in reasons
