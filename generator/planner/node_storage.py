"""Where a cloud node keeps a pod's files: its local NVMe (instance store, local SSD) or its root disk.

The rule the rendered node pools follow (``generator.render.node_disk``), here in the planner's layer so that a
training job's findings say where its checkpoints lie (newuser89 item 1) without importing a render module.
"""

from __future__ import annotations

from generator.planner.plan import NodeSpec

#: An engine's container image as containerd keeps it unpacked: ``vllm/vllm-openai:latest`` is 28.6 GB
#: (https://github.com/vllm-project/vllm/pull/22377), ``rocm/vllm`` about 22 GB
#: (https://github.com/ROCm/vllm/issues/363); one image a distinct engine (or training job) a node runs.
ENGINE_IMAGE_BYTES = 30 * 10**9


def store_holds(node: NodeSpec, disk_bytes: int) -> bool:
    """Whether ``node``'s local NVMe (instance store), striped as one array, holds ``disk_bytes`` a host."""
    return node.nvme_drives > 0 and (node.nvme_tb or 0.0) * 10**12 / node.hosts >= disk_bytes


def files_on_instance_store(provider: str, node: NodeSpec, files_bytes: int) -> bool:
    """Whether a cloud node of a training pool keeps its files (a pod's ``emptyDir``: a job's checkpoints) on local NVMe.

    As the rendered node pools place kubelet and containerd: EKS on the instance store striped as RAID0 where it holds
    ``files_bytes`` and the pool's one training image (``generator.render.node_disk.instance_store_holds``), else on
    the root volume; GKE on the machine's local SSDs wherever it has them (``ephemeralStorageLocalSsdConfig``), else on
    the boot disk; AKS on the OS disk (no node pool field puts them on the VM's local NVMe).
    """
    if provider == "gcp":
        return node.nvme_drives > 0
    return provider == "aws" and store_holds(node, files_bytes + ENGINE_IMAGE_BYTES)
