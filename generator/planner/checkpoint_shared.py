"""A multi-node training job's checkpoints on servers bought or owned: the filesystem every node must read them from.

newuser108 item 2: a startup's 8B continued pre-training over two bought DGX H100 was sized with its checkpoints on the
nodes' local NVMe (112.4 GB a checkpoint, written in 2 s) and nothing said, while a cloud job of the same layout is
warned (``checkpoints-on-instance-store``). A sharded checkpoint written to each node's own disk cannot be resumed:
the trainers write what finds the shards from one rank and read it on every rank at resume. PyTorch's distributed
checkpoint (Megatron-LM's torch_dist format, FSDP2, torchtune, torchtitan) writes its ``.metadata`` in the
coordinator's directory alone (``FileSystemWriter.finish``) and every rank's ``FileSystemReader`` reads it; DeepSpeed's
standard multi-node checkpointing assumes a shared filesystem (its maintainer, below; ``use_node_local_storage`` is
the exception). The finding names the checkpoint's size, so the user can size that filesystem's write bandwidth
against the time the nodes' NVMe take.
"""

from __future__ import annotations

from typing import Any

from generator.planner.plan import Finding

#: Why a checkpoint sharded over several nodes needs storage all of them mount (the module's docstring).
SHARED_CHECKPOINT_SOURCES = (
    "https://docs.pytorch.org/2.1/_modules/torch/distributed/checkpoint/filesystem.html",
    "https://github.com/microsoft/DeepSpeed/issues/5452",
)


def shared_checkpoint_finding(index: int, name: str, details: dict[str, Any]) -> Finding | None:
    """A full training job over several hosts whose checkpoints are sized on their local NVMe; None otherwise.

    ``details``: the job's planned figures (``hosts``, ``checkpoint_bytes_per_node``, ``checkpoints_kept``,
    ``checkpoint_write_s``). A LoRA job's adapters are written whole by one rank, so they are not asked about here.
    """
    hosts = int(details.get("hosts") or 1)
    kept_bytes_per_node = details.get("checkpoint_bytes_per_node")
    if hosts < 2 or not kept_bytes_per_node or details.get("method") != "full":
        return None
    count = int(details.get("checkpoints_kept") or 1)
    one_bytes = kept_bytes_per_node / count * hosts  # one checkpoint over all the job's nodes
    write_s = details.get("checkpoint_write_s")
    local = f", which the nodes' NVMe write in {write_s:,} s" if write_s else ""
    at_1_gb_per_s_s = one_bytes / 1e9  # seconds a checkpoint takes at 1 GB/s of the shared filesystem's writes
    return Finding(
        "warning",
        "checkpoints-need-shared-storage",
        f"deployment {name}: its checkpoints are sized on its {hosts} nodes' local NVMe ({count} kept, "
        f"{one_bytes / 1e9:,.1f} GB a checkpoint over {hosts} nodes{local}), but a checkpoint sharded over nodes is "
        "resumed only from storage every node mounts: PyTorch's distributed checkpoint (Megatron-LM's torch_dist, "
        "FSDP2, torchtune) writes the .metadata that finds the shards from one rank and reads it on every rank, and "
        "DeepSpeed's multi-node checkpoints assume a shared filesystem; write them to one (NFS, Lustre, a parallel "
        f"filesystem), which specgen does not size or render: a checkpoint takes {at_1_gb_per_s_s:,.0f} s at 1 GB/s of its "
        f"writes ({', '.join(SHARED_CHECKPOINT_SOURCES)})",
        f"deployments[{index}]",
    )
