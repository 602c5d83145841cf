"""The EFA Kubernetes device plugin for EKS pools whose GPUs talk across nodes over EFA (newuser76 item 1).

The node groups and EC2NodeClasses attach the instance's EFA interfaces, but a pod sees them only as the extended
resource ``vpc.amazonaws.com/efa`` that the EFA device plugin advertises: without the plugin, or without the pod's
request, the container gets no ``/dev/infiniband/uverbs*``, aws-ofi-nccl finds no EFA provider and NCCL falls back to
sockets over the ENA, while the plan times the step over EFA (https://docs.aws.amazon.com/eks/latest/userguide/node-efa.html).
This renders the plugin's Helm values (``cluster/efa-device-plugin/values.yaml``) for the tree's cluster and the
finding that names what the job's pods must request.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from generator.catalog import software
from generator.planner.plan import Finding, Plan, Pool
from generator.render.env import to_yaml
from generator.render.karpenter_aws import efa_cards
from generator.render.kube_objects import HEADER, crosses_nodes

RECORD = "aws-efa-k8s-device-plugin"
VALUES_PATH = "cluster/efa-device-plugin/values.yaml"
#: The resource the plugin advertises, one unit an EFA interface (the EKS user guide's node-efa page).
EFA_RESOURCE = "vpc.amazonaws.com/efa"
#: The instance-type label the chart's node affinity selects on (its ``supportedInstanceLabels.keys``).
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"


def efa_interfaces(plan: Plan, pool: Pool) -> int:
    """EFA interfaces a node of ``pool`` gives its pods: all of its EFA cards where its GPUs talk across nodes, else 0."""
    if pool.node.provider != "aws" or not crosses_nodes(plan, pool):
        return 0
    return efa_cards(pool)


def efa_pools(plan: Plan) -> list[Pool]:
    """The plan's pools whose jobs or replicas span nodes over EFA."""
    return [pool for pool in plan.pools if efa_interfaces(plan, pool)]


def efa_values(instance_types: Sequence[str], taints: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """The chart's values: its DaemonSet on these instance types only, tolerating the pools' taints (``(key, effect)``).

    The chart's own list of EFA instance types ships with each release; naming the planned ones keeps the plugin on
    them whatever list the installed version has, and off every other node.
    """
    return {
        "supportedInstanceLabels": {"keys": [INSTANCE_TYPE_LABEL], "values": sorted(set(instance_types))},
        "tolerations": [{"key": k, "operator": "Exists", "effect": e} for k, e in sorted(set(taints))],
    }


def render_efa_plugin(instance_types: Sequence[str], taints: Sequence[tuple[str, str]]) -> dict[str, str]:
    """``cluster/efa-device-plugin/values.yaml`` with its install command (nothing where no pool uses EFA)."""
    if not instance_types:
        return {}
    record = software(RECORD)
    chart, version, namespace = str(record["helm_chart"]), str(record["version"]), str(record["namespace"])
    usage = (
        f"# Helm values for the EFA Kubernetes device plugin chart {version} "
        f"(it advertises each node's EFA interfaces as {EFA_RESOURCE}):\n"
        f"#   helm repo add eks {record['helm_repository']}\n"
        f"#   helm upgrade --install {chart} eks/{chart} \\\n"
        f"#     --version {version} -n {namespace} -f values.yaml\n"
    )
    return {VALUES_PATH: usage + HEADER + to_yaml(efa_values(instance_types, taints))}


def efa_finding(plan: Plan, *, rendered: bool, karpenter: bool, node_groups: bool) -> Finding | None:
    """What the job's pods must request to use EFA, and where its device plugin comes from (None without EFA pools).

    ``rendered``: the tree renders the plugin's values (Kubernetes output); ``karpenter``: it renders EC2NodeClasses,
    whose security groups are found by tag, so the self-referencing rule EFA needs is the user's to give them;
    ``node_groups``: it renders EKS managed node groups, whose ``enable_efa_support`` creates that rule (terraform-aws-eks
    v21 has no cluster-level ``enable_efa_support``: the node-group module's security group carries ``all_self_efa``).
    """
    pools = efa_pools(plan)
    if not pools:
        return None
    requests = "; ".join(
        f"{pool.name}: {EFA_RESOURCE}: {efa_interfaces(plan, pool)} ({pool.node.instance_type}'s EFA interfaces) "
        f"beside nvidia.com/gpu: {pool.node.gpus} in each whole-node pod's limits"
        for pool in pools
    )
    plugin = (
        f"the EFA Kubernetes device plugin's Helm values are rendered at {VALUES_PATH} (install it before the job)"
        if rendered
        else f"install the EFA Kubernetes device plugin (Helm chart eks/{software(RECORD)['helm_chart']}), which "
        "specgen renders only with the kubernetes output"
    )
    groups = ""
    if node_groups:
        groups += (
            "; the EKS managed node groups' enable_efa_support gives each group a security group that allows all "
            "traffic to and from itself (terraform-aws-eks v21 modules/eks-managed-node-group)"
        )
    if karpenter:
        groups += (
            "; the EC2NodeClasses pick security groups by their karpenter.sh/discovery tag, and one of those must allow "
            "all traffic to and from itself (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-start.html#efa-start-security)"
        )
    return Finding(
        "warning",
        "eks-efa-device-plugin",
        f"GPUs on different nodes of pool(s) {', '.join(p.name for p in pools)} talk over EFA, as the plan times them, "
        f"only where their pods request the EFA interfaces: {requests}, and hugepages-2Mi as the EKS guide's example pod "
        f"does; without the request NCCL runs over TCP on the ENA; {plugin}{groups} "
        "(https://docs.aws.amazon.com/eks/latest/userguide/node-efa.html)",
        "hardware.provider",
    )
