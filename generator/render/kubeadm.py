"""kubeadm ``JoinConfiguration`` (v1beta4) per bare-metal pool, written OUTSIDE the kustomize tree (``kubeadm/``).

It is a kubeadm config file, not an API object: ``kubeadm join --config kubeadm/join-<pool>.yaml``.
Discovery is by file: a kubeconfig holding the cluster-info (and a bootstrap token for TLS bootstrap),
provisioned on the node outside git. It is never the kubelet's ``bootstrap-kubelet.conf``, which
kubeadm join writes itself and whose presence fails its preflight (the workload schema refuses it).
"""

from __future__ import annotations

from typing import Any

from generator.planner.plan import Pool
from generator.render.env import to_yaml
from generator.render.kube_objects import HEADER, node_labels_arg, node_taints

DIRECTORY = "kubeadm"


def join_configuration(pool: Pool, discovery_kubeconfig: str) -> dict[str, Any]:
    """The JoinConfiguration registering a pool's nodes with its labels and taints."""
    return {
        "apiVersion": "kubeadm.k8s.io/v1beta4",
        "kind": "JoinConfiguration",
        "discovery": {"file": {"kubeConfigPath": discovery_kubeconfig}},
        "nodeRegistration": {
            "kubeletExtraArgs": [{"name": "node-labels", "value": node_labels_arg(pool)}],
            "taints": node_taints(pool),
        },
    }


def render_kubeadm(pools: list[Pool], discovery_kubeconfig: str) -> dict[str, str]:
    """``kubeadm/join-<pool>.yaml`` for each pool."""
    return {
        f"{DIRECTORY}/join-{pool.name}.yaml": HEADER + to_yaml(join_configuration(pool, discovery_kubeconfig)) for pool in pools
    }
