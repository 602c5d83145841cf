"""How long a new node takes to have a replica's model: reading its files from local NVMe.

newuser63 item 6. The node reads the checkpoint's files, not the weights as served: a 16-bit checkpoint quantized online
to FP8 is read at its 16-bit size, from its local NVMe at ``nvme_efficiency`` of the drives' sequential rate
(``model_load_s``). It does not count the node's boot, the engine image's pull nor the engine's start.
"""

from __future__ import annotations

from generator.planner.plan import NodeSpec
from generator.sizing.constants import Constants
from generator.units import GB

#: What a new node's time to serve leaves out, said wherever a cold-start figure is printed.
NOT_TIMED = "the node's boot, the engine image's pull and the engine's start (CUDA graphs, compilation) are not timed"


def model_load_seconds(files_bytes: int, node: NodeSpec, consts: Constants) -> float | None:
    """Cold start: reading the checkpoint's files from local NVMe at ``nvme_efficiency`` of the drives' sequential rate.

    ``files_bytes``: the files the node keeps (the checkpoint's own where the engine quantizes it as it loads it). A
    rack-scale system's hosts each read from their own drives: counted at one host's rate (the safe side). None where
    the node has no drive rate (a cloud instance).
    """
    if not node.nvme_read_gb_per_s:
        return None
    return files_bytes / (node.nvme_read_gb_per_s / node.hosts * consts.nvme_efficiency * GB)
