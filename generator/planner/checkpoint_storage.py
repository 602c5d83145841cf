"""Where a training job's checkpoints are written: durable storage, local NVMe, the node's files disk or its root disk."""

from __future__ import annotations

from generator.planner.node_storage import files_on_instance_store
from generator.planner.nodes import NodeNeeds
from generator.planner.plan import Finding, NodeSpec

#: Storage of each cloud that outlives a node, for checkpoints and the final model.
DURABLE_STORAGE = {
    "aws": "S3, or FSx for Lustre beside it",
    "gcp": "Cloud Storage, or Managed Lustre",
    "azure": "Blob Storage, or Azure Managed Lustre",
}


#: Where the checkpoints-on-instance-store finding says a cloud job's checkpoints are, unless its provider's is below.
LOCAL_NVME = "its nodes' local NVMe"


#: Where a cloud node keeps a job's files where it is not its local NVMe: an AKS node pool or AKSNodeClass has no field
#: that puts kubelet's files on the VM's local NVMe, so they are on the OS disk, which is sized for them
#: (``generator.render.node_disk``) and deleted with the node (newuser87 item 7: the finding said "local NVMe").
NODE_FILES_DISK = {"azure": "its nodes' OS disk (AKS keeps a pod's files there, not on the VM's local NVMe)"}


#: Where an EKS or GKE node keeps them where its local NVMe does not (newuser89 item 1: a job on GCP a2-megagpu-16g, which
#: has no local SSD, was said to checkpoint to "its nodes' local NVMe" beside cloud-block-storage's "no local NVMe"): the
#: root volume / boot disk the rendered node pools size for them (``generator.render.node_disk``), deleted with the node.
ROOT_DISK = {"aws": "its nodes' root volume (EBS)", "gcp": "its nodes' boot disk"}


def checkpoint_disk(provider: str, node: NodeSpec, needs: NodeNeeds) -> str | None:
    """Where a cloud training job's checkpoints lie on its nodes, as its rendered node pool puts them; None: local NVMe."""
    if provider in NODE_FILES_DISK:
        return NODE_FILES_DISK[provider]
    return None if files_on_instance_store(provider, node, needs.files_bytes) else ROOT_DISK.get(provider)


def _checkpoints_deleted(
    index: int, name: str, kept: tuple[float, int, int, bool], storage: str, disk: str | None = None
) -> Finding:
    """Where a cloud job's checkpoints on its nodes' local NVMe (or ``disk``) go with the nodes (newuser51 item 5).

    ``kept``: the bytes a node keeps, the checkpoints they are, the job's nodes and whether a checkpoint is sharded
    over them (a full fine-tune's weights and optimizer states; a LoRA job's adapters are written whole by one rank:
    review35 item 5). A warning for a full fine-tune, whose run is lost with it; an info for the adapters.
    """
    kept_bytes, count, nodes, sharded = kept
    one = kept_bytes / count
    size, taken = (
        (
            f"{one / 1e9:,.1f} GB a node each, {one * nodes / 1e9:,.1f} GB a checkpoint over {nodes} node(s)",
            "its shard and the final model",
        )
        if sharded
        else (f"{one / 1e9:,.2f} GB a checkpoint of the adapters", "them and the final adapters")
    )
    return Finding(
        "warning" if sharded else "info",
        "checkpoints-on-instance-store",
        f"deployment {name}: its checkpoints are sized on {disk or LOCAL_NVME} ({count} kept, {size}), which the cloud "
        f"deletes with a node: a reclaimed node, or the job's pool scaled down after the run, takes {taken} with it; "
        f"write checkpoints and the final model to storage that outlives the nodes ({storage}), which specgen does not "
        "size or render",
        f"deployments[{index}]",
    )
