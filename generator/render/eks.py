"""``eks_managed_node_groups`` for the terraform-aws-modules/eks module (v21), one node group per GPU pool.

Written as ``terraform/eks-managed-node-groups.tfvars.json`` (not ``*.auto.tfvars``: the specgen root module
does not declare the variable); pass it with ``-var-file`` to the root that calls the EKS module, or merge
the map into that module's ``eks_managed_node_groups``.
"""

from __future__ import annotations

from typing import Any

from generator.planner.plan import Plan, Pool
from generator.render.karpenter_aws import efa_cards
from generator.render.kube_objects import dns_name
from generator.render.node_tags import node_tags

PATH = "terraform/eks-managed-node-groups.tfvars.json"

#: The module's taint effects are the EKS API's enum names.
TAINT_EFFECT = {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}


def node_group(pool: Pool, workload: str) -> dict[str, Any]:
    """One managed node group: the planned instance type and size, the NVIDIA AL2023 AMI, labels, taints and tags.

    ``tags`` (terraform-aws-eks v21 ``eks_managed_node_groups[*].tags``, map(string)) go to every resource of the
    group, instances included: the module's launch template tags ``tag_specifications``, by default
    ``["instance", "volume", "network-interface"]`` (modules/eks-managed-node-group/variables.tf).
    """
    group: dict[str, Any] = {
        "name": dns_name(pool),
        "ami_type": "AL2023_x86_64_NVIDIA",
        "capacity_type": "ON_DEMAND",
        "instance_types": [str(pool.node.instance_type)],
        # a pool costed per training job runs only while a job does: it scales from zero (the cluster autoscaler or
        # the job's scheduler raises desired_size), else it would bill every hour of the month
        "min_size": 0 if pool.per_job else pool.nodes,
        "max_size": pool.nodes,
        "desired_size": 0 if pool.per_job else pool.nodes,
        "labels": dict(pool.labels),
        "taints": {
            f"{k}-{e}".replace("/", "-").replace(".", "-"): {"key": k, "value": v, "effect": TAINT_EFFECT[e]}
            for k, v, e in pool.taints
        },
        "tags": node_tags("aws", pool.name, workload),
    }
    if efa_cards(pool):
        group["enable_efa_support"] = True
    return group


def eks_managed_node_groups(plan: Plan) -> dict[str, Any]:
    """The variable value, keyed by pool name."""
    return {
        "eks_managed_node_groups": {
            pool.name: node_group(pool, plan.workload) for pool in plan.pools if pool.node.provider == "aws"
        }
    }
