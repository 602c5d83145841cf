"""Communication of one training step between nodes, and whether it needs a GPU fabric.

Per step, each GPU exchanges (ring collectives move ``2 (n - 1) / n`` of the data for an
all-reduce and ``(n - 1) / n`` for an all-gather or reduce-scatter over ``n`` ranks):

- data-parallel gradients: an all-reduce of the trainable gradients (bf16) under ZeRO 0-2, a
  reduce-scatter under ZeRO-3;
- ZeRO-3 parameters: an all-gather of the sharded weights in the forward pass and again in the
  backward pass (for LoRA / QLoRA that is the frozen base: the adapters are small, the base is not).

Tensor-parallel all-reduces stay inside a node (TP is limited to the NVLink domain), so only the
data-parallel traffic crosses nodes. A ring collective crosses each node boundary once per ring and
NCCL runs a ring per NIC, so a node's NICs together carry one GPU's share once: the inter-node time
is the bytes per GPU over the node's total network bandwidth (the NCCL "bus bandwidth" model).
Step time is ``max(compute, communication)``: the collectives are bucketed behind the backward pass,
so only communication longer than the compute shows.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator import catalog
from generator.catalog.records import PlatformSpec
from generator.planner.nodes import DEFAULT_FABRIC_NIC, DEFAULT_FRONTEND_NIC

#: Bytes per gradient or gathered weight element on the wire (bf16, the mixed-precision default).
WIRE_BYTES_PER_ELEMENT = 2


@dataclass(frozen=True)
class StepComm:
    """Inter-node communication of one optimizer step on one layout."""

    bytes_per_gpu: float
    link: str
    comm_s: float
    compute_s: float

    @property
    def dominates(self) -> bool:
        """Communication takes longer than the step's compute."""
        return self.comm_s > self.compute_s

    @property
    def slowdown(self) -> float:
        """Step time over compute time when communication does not fully overlap."""
        return max(self.comm_s, self.compute_s) / self.compute_s if self.compute_s else 1.0


def dp_bytes_per_gpu(trainable_params: int, weight_bytes_total: int, zero_stage: int, dp: int) -> float:
    """Bytes each GPU sends per step for data parallelism over ``dp`` ranks."""
    if dp <= 1:
        return 0.0
    share = (dp - 1) / dp
    grads = trainable_params * WIRE_BYTES_PER_ELEMENT
    if zero_stage < 3:
        return 2 * share * grads  # all-reduce
    return share * grads + 2 * share * weight_bytes_total  # reduce-scatter + forward and backward all-gathers


def node_link(platform: PlatformSpec, gpus_per_node: int, fabric: bool) -> tuple[float, str]:
    """Gb/s a node sends to other nodes, and what carries it: the GPU fabric, or the front-end network."""
    nics = catalog.nics()
    if platform.provider != "baremetal":
        return float(platform.network_gbps_total or 0), f"{platform.network_gbps_total or 0:g} Gb/s instance network"
    if fabric:
        nic_id = platform.fabric_nic_id or DEFAULT_FABRIC_NIC
        count = platform.fabric_nic_count or gpus_per_node
        return nics[nic_id].port_gbps * count, f"{count} x {nics[nic_id].port_gbps:g} Gb/s GPU fabric"
    nic_id = platform.frontend_nic_id or DEFAULT_FRONTEND_NIC
    count = platform.frontend_nic_count or 1
    return nics[nic_id].port_gbps * count, f"{count} x {nics[nic_id].port_gbps:g} Gb/s front-end Ethernet"


def step_comm(
    platform: PlatformSpec,
    gpus_per_node: int,
    nodes: int,
    fabric: bool,
    bytes_per_gpu: float,
    compute_s: float,
) -> StepComm:
    """Inter-node time of one step; zero on a single node (NVLink / PCIe inside the node is not the bottleneck)."""
    gbps, link = node_link(platform, gpus_per_node, fabric)
    if nodes <= 1:
        return StepComm(bytes_per_gpu, "inside one node", 0.0, compute_s)
    comm = bytes_per_gpu * 8 / (gbps * 1e9) if gbps else float("inf")
    return StepComm(bytes_per_gpu, link, comm, compute_s)
