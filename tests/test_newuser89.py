"""newuser89: an ML engineer new to specgen, fine-tuning and serving open models on owned and rented GPUs.

Item 1: a cloud training job's checkpoints were said to lie on "its nodes' local NVMe" on machine types that have none
(GCP a2 / g2 / g4: no local SSD), beside the same plan's ``cloud-block-storage`` finding that the files go on the boot
disk. The finding now names the disk the rendered node pool keeps the pod's files on: the local SSDs where GKE's
``ephemeralStorageLocalSsdConfig`` is rendered, else the boot disk (the rendered node pool is the oracle).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from generator.api import render_file

TRAINING_ON_GCP = """\
version: 1
name: ck-gcp
deployments:
  - name: tune
    model: Qwen/Qwen3-8B
    training:
      method: lora
      lora_rank: 16
      sequence_length: 2048
      global_batch_size: 16
      dataset_tokens: 20000000
hardware:
  provider: gcp
  gpus: [GPU]
kubernetes:
  location: us-central1-a
  gcp_project: acme-ml
"""


def _checkpoint_finding(spec: dict[str, object]) -> str:
    plan = spec["plan"]
    assert isinstance(plan, dict)
    (found,) = [f["message"] for f in plan["findings"] if f["code"] == "checkpoints-on-instance-store"]
    return str(found)


@pytest.mark.parametrize(
    ("gpu", "machine", "local_ssds"),
    [
        ("l4-24gb", "g2-standard-8", False),  # G2: no local SSD bundled (its files on the boot disk)
        ("h100-sxm5-80gb", "a3-highgpu-8g", True),  # A3: local SSDs, rendered as the node's ephemeral storage
    ],
)
def test_a_gke_jobs_checkpoints_are_said_on_the_disk_its_node_pool_keeps_them(
    tmp_path: Path, gpu: str, machine: str, local_ssds: bool
) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(TRAINING_ON_GCP.replace("GPU", gpu))
    files = render_file(str(path))
    (pool_file,) = [name for name in files if name.startswith("kubernetes/gcp/containernodepool-")]
    node_pool = YAML(typ="safe", pure=True).load(files[pool_file])
    assert node_pool["spec"]["nodeConfig"]["machineType"] == machine
    # the oracle: where GKE puts kubelet's and containerd's files (a pod's emptyDir, the job's checkpoints)
    assert ("ephemeralStorageLocalSsdConfig" in node_pool["spec"]["nodeConfig"]) is local_ssds
    said = _checkpoint_finding(json.loads(files["spec.json"]))
    where = "its nodes' local NVMe (" if local_ssds else "its nodes' boot disk ("
    assert said.startswith(f"deployment tune: its checkpoints are sized on {where}"), said
    if not local_ssds:  # the same plan's storage finding says the machine has none
        assert f"gcp-{machine} has no local NVMe (instance store)" in files["SPEC.md"]
        assert "local NVMe (2 kept" not in files["SPEC.md"]
