"""The tags (AWS, Azure) or GCE labels (GCP) naming the pool and the workload on every cloud node.

The node-pool renderers set them (EKS node groups and Karpenter's EC2NodeClass, AKSNodeClass ``tags``, GKE
``resourceLabels``) and the Ansible dynamic inventories filter and group on them, so both read one table.
GCE label keys allow no ``.`` or ``/``.
"""

from __future__ import annotations

#: (pool key, workload key) per cloud.
NODE_TAG_KEYS = {
    "aws": ("specgen.dev/pool", "specgen.dev/workload"),
    "gcp": ("specgen-pool", "specgen-workload"),
    "azure": ("specgen-pool", "specgen-workload"),
}


def node_tags(provider: str, pool_name: str, workload: str) -> dict[str, str]:
    """The tags (labels on GCP) every node of the pool ``pool_name`` carries on ``provider``."""
    pool_key, workload_key = NODE_TAG_KEYS[provider]
    return {pool_key: pool_name, workload_key: workload}
