"""``eks_managed_node_groups`` for the terraform-aws-modules/eks module (v21), one node group per GPU pool.

Written as ``terraform/eks-managed-node-groups.tfvars.json`` (not ``*.auto.tfvars``: the specgen root module
does not declare the variable); pass it with ``-var-file`` to the root that calls the EKS module, or merge
the map into that module's ``eks_managed_node_groups``.
"""

from __future__ import annotations

from typing import Any

from generator.planner.batch_job import runs_only_why
from generator.planner.plan import Finding, Plan, Pool, sorted_findings
from generator.render.efa_plugin import efa_finding
from generator.render.env import to_yaml
from generator.render.karpenter_aws import ROOT_DEVICE, efa_cards
from generator.render.kube_objects import crosses_nodes, dns_name
from generator.render.node_disk import NodeDisk, node_disks
from generator.render.node_provisioners import node_provisioners_finding
from generator.render.node_tags import node_tags
from generator.workload.models import Workload

PATH = "terraform/eks-managed-node-groups.tfvars.json"

#: terraform-aws-modules/eks v21 names a node group's IAM role ``coalesce(iam_role_name, "<name>-eks-node-group")`` and,
#: with ``iam_role_use_name_prefix`` (default true), creates it under ``name_prefix = "<that>-"``
#: (https://github.com/terraform-aws-modules/terraform-aws-eks/blob/master/modules/eks-managed-node-group/main.tf); the AWS
#: provider takes a role name prefix of at most 64 - 26 = 38 characters (``roleNamePrefixMaxLen``,
#: https://github.com/hashicorp/terraform-provider-aws/blob/main/internal/service/iam/role.go).
IAM_ROLE_DEFAULT_SUFFIX = "-eks-node-group"
IAM_ROLE_NAME_PREFIX_MAX = 38


def iam_role_name(name: str) -> str | None:
    """The ``iam_role_name`` a node group named ``name`` needs; None where the module's default fits (newuser75 item 1).

    A pool name over 22 characters makes the default prefix ``<name>-eks-node-group-`` too long; the role is then
    named after the group alone (``<name>-``: at most 37, the pool name being at most
    :data:`generator.planner.naming.EKS_POOL_NAME_MAX`). The prefix (and Terraform's random suffix) stays: an IAM role
    name is the AWS account's, so two clusters' pools of one name get roles of their own, and a replacement role is
    created beside the old one. A default that fits is left as it is, so no role of a pool that already applied is
    replaced.
    """
    if len(f"{name}{IAM_ROLE_DEFAULT_SUFFIX}-") <= IAM_ROLE_NAME_PREFIX_MAX:
        return None
    return name


#: The module's taint effects are the EKS API's enum names.
TAINT_EFFECT = {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}


#: AL2023's nodeadm puts kubelet and containerd on the instance store striped as RAID0 (``spec.instance.localStorage``,
#: https://awslabs.github.io/amazon-eks-ami/nodeadm/doc/api/#localstorageoptions; the EKS AMI's user guide, "RAID-0 for
#: kubelet and containerd", https://github.com/awslabs/amazon-eks-ami/blob/main/doc/USER_GUIDE.md); a cloud-init part
#: of type ``application/node.eks.aws`` before nodeadm's own (terraform-aws-eks ``cloudinit_pre_nodeadm``).
LOCAL_STORAGE_RAID0 = {
    "apiVersion": "node.eks.aws/v1alpha1",
    "kind": "NodeConfig",
    "spec": {"instance": {"localStorage": {"strategy": "RAID0"}}},
}


def node_disk_vars(disk: NodeDisk) -> dict[str, Any]:
    """Where a node group's nodes keep their files: the instance store as RAID0, else a root volume sized for them.

    The group's launch template is the module's own (``use_custom_launch_template`` defaults to true), so the root
    volume is a ``block_device_mappings`` entry: ``disk_size`` applies only to EKS's default template, and the AMI's
    own root volume is 20 GiB (terraform-aws-eks modules/eks-managed-node-group/variables.tf).
    """
    if disk.local:
        return {
            "cloudinit_pre_nodeadm": [
                {"content_type": "application/node.eks.aws", "content": "---\n" + to_yaml(LOCAL_STORAGE_RAID0)}
            ]
        }
    ebs = {"volume_size": disk.root_gib, "volume_type": "gp3", "delete_on_termination": True, "encrypted": True}
    return {"block_device_mappings": {"xvda": {"device_name": ROOT_DEVICE, "ebs": ebs}}}


def node_group(pool: Pool, workload: str, disk: NodeDisk, together: bool = False) -> dict[str, Any]:
    """One managed node group: the planned instance type and size, the NVIDIA AL2023 AMI, labels, taints and tags.

    ``disk``: where its nodes keep their model files and images (:func:`node_disk_vars`, newuser26 item 2);
    ``together``: its GPUs talk across nodes over EFA (:func:`placement_grouped`), the only groups given EFA.

    ``tags`` (terraform-aws-eks v21 ``eks_managed_node_groups[*].tags``, map(string)) go to every resource of the
    group, instances included: the module's launch template tags ``tag_specifications``, by default
    ``["instance", "volume", "network-interface"]`` (modules/eks-managed-node-group/variables.tf).
    """
    group: dict[str, Any] = {
        "name": dns_name(pool),
        "ami_type": "AL2023_x86_64_NVIDIA",
        # spot (capacity_type: spot): EKS labels the nodes eks.amazonaws.com/capacityType: SPOT and drains a node on
        # its two-minute interruption notice (managed node groups' Capacity Rebalancing)
        "capacity_type": "SPOT" if pool.spot else "ON_DEMAND",
        "instance_types": [str(pool.node.instance_type)],
        # a pool costed per training job or by its batch jobs' runs runs only while a job does: it scales from zero
        # (the cluster autoscaler or the job's scheduler raises desired_size), else it would bill every hour of the month
        # a serving pool whose services give an average rate scales down to the nodes the average needs (min_nodes)
        "min_size": 0 if pool.runs_only else pool.nodes if pool.min_nodes is None else pool.min_nodes,
        "max_size": pool.nodes,
        "desired_size": 0 if pool.runs_only else pool.nodes,
        "labels": dict(pool.labels),
        "taints": {
            f"{k}-{e}".replace("/", "-").replace(".", "-"): {"key": k, "value": v, "effect": TAINT_EFFECT[e]}
            for k, v, e in pool.taints
        },
        "tags": node_tags("aws", pool.name, workload),
        **node_disk_vars(disk),
    }
    if (role := iam_role_name(group["name"])) is not None:
        group["iam_role_name"] = role
    # GPUs on its nodes talk over EFA: its EFA interfaces (fix141: not where every replica stays within a node, which
    # talks over NVLink; EFA is for "inter-instance communication", https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa.html)
    # and one cluster placement group (its subnets must be one AZ's: a finding says so)
    if together:
        group["enable_efa_support"] = True
        group["create_placement_group"] = True
    return group


def placement_grouped(plan: Plan, pool: Pool) -> bool:
    """Whether a pool's node group gets a cluster placement group: its GPUs talk across nodes over EFA.

    Over the instance network alone (no EFA) the plan counts on no more than any AZ gives, and a placement group
    would only narrow where capacity is found.
    """
    return efa_cards(pool) > 0 and crosses_nodes(plan, pool)


def eks_managed_node_groups(plan: Plan) -> dict[str, Any]:
    """The variable value, keyed by pool name."""
    disks = node_disks(plan)
    return {
        "eks_managed_node_groups": {
            pool.name: node_group(pool, plan.workload, disks[pool.name], placement_grouped(plan, pool))
            for pool in plan.pools
            if pool.node.provider == "aws"
        }
    }


#: The cluster autoscaler's default wait before it removes an unneeded node (``--scale-down-unneeded-time``,
#: https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/FAQ.md).
AUTOSCALER_UNNEEDED_H = 10 / 60


def autoscaler_idle_text(plan: Plan, per_job: list[str]) -> str:
    """What the cluster autoscaler's default idle wait adds to each run of per-job node groups (newuser24 item 6)."""
    costs = [
        f"{pool.name} ${pool.usd_per_hour * AUTOSCALER_UNNEEDED_H:,.2f}"
        for pool in plan.pools
        if pool.name in per_job and pool.usd_per_hour is not None
    ]
    bill = f" (up to {', '.join(costs)} a run)" if costs else ""
    return (
        "the cluster autoscaler removes a node 10 min after its job's pods end (--scale-down-unneeded-time's default), "
        f"billed beyond the per-run cost{bill}: lower it for these groups"
    )


def with_eks_findings(plan: Plan, workload: Workload) -> Plan:
    """The plan with what the node groups rendered for AWS need beside them, and what Karpenter's pools mean.

    The node groups and Karpenter's NodePools each size every pool in full; Karpenter's ``limits`` count only the nodes
    it launched, so with both applied a pending GPU pod (a rollout's surge, a second job) gets a Karpenter node beside
    the node group's (newuser16 M3). A per-job node group rests at 0 nodes and nothing rendered raises it. A cluster
    placement group holds one AZ's instances, and terraform-aws-eks v21 gives the group the cluster's subnets unless
    told otherwise (review 13 item 4).
    """
    pools = [p for p in plan.pools if p.node.provider == "aws"]
    karpenter = "kubernetes" in workload.outputs
    node_groups = "terraform" in workload.outputs
    efa = efa_finding(plan, rendered=karpenter, karpenter=karpenter, node_groups=node_groups) if pools else None
    if efa is not None:  # newuser76 item 1: the pods' EFA request and the device plugin that advertises it
        plan = plan._replace(findings=sorted_findings([*plan.findings, efa]))
    if plan.provider != "aws" or not node_groups or not pools:
        return plan
    findings = []
    if karpenter:
        findings.append(
            node_provisioners_finding(
                "aws-node-provisioners",
                f"{PATH} (EKS managed node groups)",
                "kubernetes/aws/ (Karpenter NodePools)",
                "every pool",
                "node group",
            )
        )
    per_job = [p.name for p in pools if p.runs_only]
    if per_job:
        findings.append(
            Finding(
                "info",
                "aws-per-job-node-groups",
                f"the node group(s) of {', '.join(per_job)} rest at 0 nodes ({runs_only_why(pools)}): nothing rendered "
                "raises desired_size; run the Kubernetes cluster autoscaler or set "
                "desired_size for the run"
                + (", or use the Karpenter NodePool, which launches the job's nodes for its pods" if karpenter else "")
                + f"; {autoscaler_idle_text(plan, per_job)}",
                "hardware.provider",
            )
        )
    spread = [p.name for p in pools if placement_grouped(plan, p)]
    if spread:
        findings.append(
            Finding(
                "warning",
                "aws-placement-group",
                f"GPUs on different nodes of pool(s) {', '.join(spread)} talk over EFA: their node groups create a cluster "
                "placement group (create_placement_group), which holds the instances of one AZ: give each of them "
                "subnet_ids of one AZ, since terraform-aws-eks v21 takes the cluster's subnets otherwise "
                "(https://github.com/terraform-aws-modules/terraform-aws-eks/blob/master/docs/UPGRADE-21.0.md)"
                + (
                    "; a Karpenter NodePool keeps them together only through an existing cluster placement group named "
                    "in the EC2NodeClass's placementGroupSelector, which specgen does not render "
                    "(https://karpenter.sh/docs/concepts/nodeclasses/)"
                    if karpenter
                    else ""
                ),
                "hardware.provider",
            )
        )
    return plan._replace(findings=sorted_findings([*plan.findings, *findings]))
