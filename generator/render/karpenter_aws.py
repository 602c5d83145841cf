"""AWS: a Karpenter ``NodePool`` and ``EC2NodeClass`` per GPU pool (karpenter.sh/v1, karpenter.k8s.aws/v1).

The NodePool asks for exactly the planned instance type and GPU count, carries the pool's labels and
taints, caps the pool at the planned GPUs and nodes, and disrupts GPU nodes only when they are empty,
one at a time, never by expiry. The EC2NodeClass pins the EKS AL2023 AMI release, stripes the instance
store as RAID0 (model cache), and attaches one EFA interface per network card on EFA instances.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generator.catalog import software
from generator.planner.plan import Pool
from generator.render.gpu_sharing import advertised_per_gpu
from generator.render.kube_objects import dns_name, gpu_resource, node_taints
from generator.render.node_tags import node_tags
from generator.workload.models import GpuSharing

#: How long an empty GPU node may idle before Karpenter removes it (a cold start pulls tens of GB of weights).
EMPTY_NODE_GRACE = "30m"


def efa_cards(pool: Pool) -> int:
    """Network cards with an EFA interface (0 on instances without EFA)."""
    return sum(n.count for n in pool.node.nics if n.role == "fabric" and n.nic_id.startswith("aws-efa"))


def network_interfaces(pool: Pool) -> list[dict[str, Any]]:
    """ENA primary on card 0, plus one EFA-only interface on every EFA network card (none without EFA)."""
    cards = efa_cards(pool)
    if not cards:
        return []
    interfaces = [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}]
    interfaces += [
        {"networkCardIndex": card, "deviceIndex": 1 if card == 0 else 0, "interfaceType": "efa-only"} for card in range(cards)
    ]
    return interfaces


def ec2_node_class(pool: Pool, cluster: str, workload: str) -> dict[str, Any]:
    """``EC2NodeClass`` of one pool."""
    discovery = [{"tags": {"karpenter.sh/discovery": cluster}}]
    spec: dict[str, Any] = {
        "amiSelectorTerms": [{"alias": f"al2023@{software('eks-optimized-ami-al2023')['version']}"}],
        "role": f"KarpenterNodeRole-{cluster}",
        "subnetSelectorTerms": discovery,
        "securityGroupSelectorTerms": discovery,
        "metadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 1},
        "tags": node_tags("aws", pool.name, workload),
    }
    if pool.node.nvme_drives > 0:
        spec["instanceStorePolicy"] = "RAID0"
    if interfaces := network_interfaces(pool):
        spec["networkInterfaces"] = interfaces
    return {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": dns_name(pool)},
        "spec": spec,
    }


def karpenter_node_pool(
    pool: Pool, node_class: tuple[str, str], gpu_count_label: str, devices_per_gpu: int = 1
) -> dict[str, Any]:
    """Karpenter ``NodePool`` of one pool (AWS and Azure builds share it).

    ``node_class``: (API group, kind) of the provider's node class; ``gpu_count_label``: the provider's
    well-known label for GPUs per instance; ``devices_per_gpu``: GPU resources the device plugin advertises per
    physical GPU (:func:`generator.render.gpu_sharing.advertised_per_gpu`). On-demand only, never expired, removed
    only when empty.
    """
    node = pool.node
    requirements = [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [str(node.instance_type)]},
        {"key": gpu_count_label, "operator": "In", "values": [str(node.gpus)]},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
        {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
    ]
    group, kind = node_class
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": dns_name(pool)},
        "spec": {
            "template": {
                "metadata": {"labels": dict(pool.labels)},
                "spec": {
                    "nodeClassRef": {"group": group, "kind": kind, "name": dns_name(pool)},
                    "requirements": requirements,
                    "taints": node_taints(pool),
                    "expireAfter": "Never",
                },
            },
            # the resource counts what the nodes advertise: shared GPUs (time-slicing, MPS, MIG) count several times
            "limits": {gpu_resource(pool): str(pool.nodes * node.gpus * devices_per_gpu)},
            "disruption": {
                "consolidationPolicy": "WhenEmpty",
                "consolidateAfter": EMPTY_NODE_GRACE,
                "budgets": [{"nodes": "1"}],
            },
        },
    }


def karpenter_aws_objects(
    pools: list[Pool], cluster: str, workload: str, *, shares: Mapping[str, GpuSharing | None]
) -> list[dict[str, Any]]:
    """NodePool + EC2NodeClass for each pool (``shares``: each pool's GPU sharing, by name)."""
    objects: list[dict[str, Any]] = []
    for pool in pools:
        per_gpu = advertised_per_gpu(pool, shares.get(pool.name))
        objects += [
            karpenter_node_pool(pool, ("karpenter.k8s.aws", "EC2NodeClass"), "karpenter.k8s.aws/instance-gpu-count", per_gpu),
            ec2_node_class(pool, cluster, workload),
        ]
    return objects
