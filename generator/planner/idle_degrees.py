"""The data-parallel degrees a training job is timed at on a serving pool's idle GPUs (``training-fits-idle-gpus``).

The plan's own training search times the fewest GPUs a job's memory and deadline need and the degrees that fill whole
servers (servers are bought or rented whole): on 4 idle GPUs of a DGX H100's 8 a weekly QLoRA was timed on 1 (3.37 h a
run) though 4 were free (fix178, newuser97 item 2). On GPUs already there every degree they hold is worth timing.
"""

from __future__ import annotations

from generator.named_tuple import NamedTuple

#: Most degrees over several whole idle nodes timed (evenly spread from the fewest nodes to the most, the most kept):
#: each is a layout the search times at every ZeRO stage and checkpointing level, and the finding is per pool and job.
MOST_NODE_DEGREES = 8


class IdleGpus(NamedTuple):
    """A pool's idle GPUs as a training layout may take them: on one node, or on whole idle nodes.

    ``on_one_node``: the most idle GPUs of any one of its nodes; ``whole_nodes``: its nodes with every GPU idle;
    ``node_gpus``: the GPUs a node of it has.
    """

    on_one_node: int
    whole_nodes: int
    node_gpus: int

    def degrees(self, replica_gpus: int, start: int, most: int, gbs: int | None) -> list[int]:
        """Data-parallel degrees past ``start`` (up to ``most``) of ``replica_gpus``-GPU replicas the idle GPUs hold.

        Every degree within one node's idle GPUs, and over several nodes those that fill whole idle nodes (at most
        :data:`MOST_NODE_DEGREES` of them); with a global batch ``gbs`` only those that split it evenly.
        """
        on_nodes = self.whole_nodes * self.node_gpus if self.whole_nodes > 1 else 0
        widest = min(max(self.on_one_node, on_nodes) // replica_gpus, most)
        held = [dp for dp in range(start + 1, widest + 1) if gbs is None or gbs % dp == 0]
        one = [dp for dp in held if dp * replica_gpus <= self.on_one_node]
        several = [dp for dp in held if dp * replica_gpus > self.on_one_node and dp * replica_gpus % self.node_gpus == 0]
        if len(several) > MOST_NODE_DEGREES:
            last = len(several) - 1
            several = sorted({several[i * last // (MOST_NODE_DEGREES - 1)] for i in range(MOST_NODE_DEGREES)})
        return one + several
