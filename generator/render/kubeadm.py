"""kubeadm ``JoinConfiguration`` (v1beta4) per bare-metal pool, written OUTSIDE the kustomize tree (``kubeadm/``).

It is a kubeadm config file, not an API object: ``kubeadm join --config kubeadm/join-<pool>.yaml``.
Discovery is by file: a kubeconfig holding the cluster-info (and a bootstrap token for TLS bootstrap),
provisioned on the node outside git. It is never the kubelet's ``bootstrap-kubelet.conf``, which
kubeadm join writes itself and whose presence fails its preflight (the workload schema refuses it).
"""

from __future__ import annotations

from typing import Any

from generator.planner.plan import Pool, RackSpec
from generator.render.env import to_yaml
from generator.render.kube_objects import HEADER, node_labels_arg, node_taints

DIRECTORY = "kubeadm"

#: The node label naming the rack a bare-metal node stands in (the plan's rack id, the Ansible host var ``specgen_rack``),
#: for a topologySpreadConstraint or an anti-affinity over racks (newuser63 item 9). A label of specgen's own, not
#: ``topology.kubernetes.io/zone``: Kubernetes reserves that one for the zone a cloud provider reports (a data-centre
#: failure domain, https://kubernetes.io/docs/reference/labels-annotations-taints/#topologykubernetesiozone), a rack
#: is a smaller one, and storage and scheduling tools that read zones would take racks for zones.
RACK_LABEL = "specgen.dev/rack"


def pool_rack(pool: Pool, racks: tuple[RackSpec, ...]) -> str | None:
    """The one rack every node of ``pool`` stands in, or None (its nodes in several racks, or in none).

    None for a pool of owned servers too: where they stand is not in the workload, so the rack specgen packed them
    into is no site's (review41 item 8; ``rack-failure-domain`` skips them alike).
    """
    if pool.owned_nodes:
        return None
    held = [(rack.id, share.nodes) for rack in racks for share in rack.pools if share.pool == pool.name]
    if len(held) != 1 or held[0][1] != pool.nodes:
        return None
    return held[0][0]


def join_labels(pool: Pool, racks: tuple[RackSpec, ...]) -> str:
    """The ``node-labels`` a pool's nodes join with: its labels, and its rack where all its nodes stand in one."""
    rack = pool_rack(pool, racks)
    return node_labels_arg(pool) + (f",{RACK_LABEL}={rack}" if rack is not None else "")


def join_configuration(pool: Pool, discovery_kubeconfig: str, racks: tuple[RackSpec, ...] = ()) -> dict[str, Any]:
    """The JoinConfiguration registering a pool's nodes with its labels (:func:`join_labels`) and taints."""
    labels = join_labels(pool, racks)
    return {
        "apiVersion": "kubeadm.k8s.io/v1beta4",
        "kind": "JoinConfiguration",
        "discovery": {"file": {"kubeConfigPath": discovery_kubeconfig}},
        "nodeRegistration": {
            "kubeletExtraArgs": [{"name": "node-labels", "value": labels}],
            "taints": node_taints(pool),
        },
    }


def render_kubeadm(pools: list[Pool], discovery_kubeconfig: str, racks: tuple[RackSpec, ...] = ()) -> dict[str, str]:
    """``kubeadm/join-<pool>.yaml`` for each pool, labelled with its rack where all its nodes stand in one.

    A pool across racks is one join file for all its hosts, so it carries no rack: label its nodes with
    ``kubectl label node <host> specgen.dev/rack=<the host's specgen_rack>`` (README).
    """
    return {
        f"{DIRECTORY}/join-{pool.name}.yaml": HEADER + to_yaml(join_configuration(pool, discovery_kubeconfig, racks))
        for pool in pools
    }
