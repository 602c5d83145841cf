"""AWS: a Karpenter ``NodePool`` and ``EC2NodeClass`` per GPU pool (karpenter.sh/v1, karpenter.k8s.aws/v1).

The NodePool asks for exactly the planned instance type and GPU count, carries the pool's labels and taints, caps a
serving pool at the planned GPUs plus one node (the replacement / surge slot) and a per-job pool at the planned GPUs,
and disrupts GPU nodes only when they are empty, one at a time, never by expiry. The EC2NodeClass pins the EKS
AL2023 AMI release, stripes the instance store as RAID0 where it holds the node's model files and images, else sizes
the root volume for them (:mod:`generator.render.node_disk`), and attaches one EFA interface per network card on EFA
instances.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generator.catalog import platforms, software
from generator.planner.batch_job import runs_only_why
from generator.planner.plan import Finding, Plan, Pool, sorted_findings
from generator.planner.spread import drain_grace_text
from generator.render.gpu_sharing import advertised_per_gpu, aks_mig_pools
from generator.render.kube_objects import dns_name, gpu_resource, node_taints
from generator.render.node_disk import AKS_MAX_OS_DISK_GB, AZURE_DISK_UNIT, NodeDisk, root_disk_gib
from generator.render.node_tags import node_tags
from generator.workload.cluster_name import DEFAULT_ROLE_PREFIX
from generator.workload.models import GpuSharing

#: How long an empty serving node may idle before Karpenter removes it (a cold start pulls tens of GB of weights).
EMPTY_NODE_GRACE = "30m"

#: How long an empty node of a job (training, or a batch job's run) may idle: its nodes are not reused by a later
#: request, so the grace only has to keep the node through the Job controller's retries of a failed pod (back-off 10 s,
#: 20 s, 40 s, 80 s: 2.5 min for four retries,
#: https://kubernetes.io/docs/concepts/workloads/controllers/job/#pod-backoff-failure-policy) rather than boot a new one
#: and pull the model again; 30 min would bill half an hour after every run (newuser24 item 6: $57 on an $88 LoRA run on
#: p6-b200.48xlarge).
PER_JOB_NODE_GRACE = "5m"
PER_JOB_NODE_GRACE_H = 5 / 60

#: Nodes a serving NodePool may run beyond the plan. Karpenter replaces a drifted or disrupted node by launching the
#: replacement first and draining the old node once it is ready ("Pre-spin any replacement nodes needed ... and wait
#: for them to become ready", https://karpenter.sh/v1.14/concepts/disruption/), and ``spec.limits`` stop it launching
#: a node once the pool would exceed them ("Limits prevent Karpenter from creating new instances once the limit is
#: exceeded", https://karpenter.sh/v1.14/concepts/nodepools/#speclimits): limits at exactly the plan block every
#: replacement, which then waits forever (kubernetes-sigs/karpenter#2525, aws/karpenter-provider-aws#8873), and a
#: RollingUpdate's surge pod stays Pending (newuser24 item 5). One node is enough: the budget disrupts one node at a
#: time. It is billed only while it runs beside the node it replaces. Karpenter for Azure (AKS node auto-provisioning)
#: runs the same disruption: it "spins up replacements when needed"
#: (https://learn.microsoft.com/en-us/azure/aks/node-auto-provisioning-disruption).
REPLACEMENT_NODES = 1


def efa_cards(pool: Pool) -> int:
    """Network cards with an EFA interface (0 on instances without EFA)."""
    return sum(n.count for n in pool.node.nics if n.role == "fabric" and n.nic_id.startswith("aws-efa"))


def network_interfaces(pool: Pool, crosses: bool = True) -> list[dict[str, Any]]:
    """ENA primary on card 0, plus one EFA-only interface on every EFA network card (none without EFA).

    ``crosses``: whether GPUs on different nodes of the pool talk (:func:`~generator.render.kube_objects.crosses_nodes`).
    None where they do not (fix141, newuser81 item 6): EFA carries traffic between instances ("inter-instance
    communication", https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa.html), and a replica within one node talks
    over NVLink; the EFA device plugin advertises the interfaces only on the pools that cross nodes
    (:func:`~generator.render.efa_plugin.efa_pools`), so on the others they were attached and never used.
    """
    cards = efa_cards(pool) if crosses else 0
    if not cards:
        return []
    interfaces = [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}]
    interfaces += [
        {"networkCardIndex": card, "deviceIndex": 1 if card == 0 else 0, "interfaceType": "efa-only"} for card in range(cards)
    ]
    return interfaces


#: Karpenter's getting-started guide, whose CloudFormation creates the ``KarpenterNodeRole-<cluster>`` node role.
KARPENTER_GETTING_STARTED = "https://karpenter.sh/v1.14/getting-started/getting-started-with-karpenter/"


def node_role(cluster: str, role: str | None = None) -> str:
    """The IAM role an EC2NodeClass gives its nodes (``spec.role``).

    ``kubernetes.karpenter_node_role``, else the name Karpenter's getting-started guide creates for the cluster,
    ``KarpenterNodeRole-<cluster>`` (:data:`KARPENTER_GETTING_STARTED`).
    """
    return role or f"{DEFAULT_ROLE_PREFIX}{cluster}"


def ec2_node_class(
    pool: Pool, cluster: str, workload: str, disk: NodeDisk, role: str | None = None, crosses: bool = True
) -> dict[str, Any]:
    """``EC2NodeClass`` of one pool (its EFA interfaces only where ``crosses``: :func:`network_interfaces`).

    ``disk``: where its nodes keep their files (:mod:`generator.render.node_disk`); ``role``: the node IAM role given
    (:func:`node_role`). Where the instance store holds the files, kubelet and containerd go on it as one RAID0 array
    (``instanceStorePolicy``); otherwise on the root volume, sized for them: the AL2023 alias's own is 20 GiB
    (``/dev/xvda``, https://karpenter.sh/v1.14/concepts/nodeclasses/#specblockdevicemappings).
    """
    discovery = [{"tags": {"karpenter.sh/discovery": cluster}}]
    spec: dict[str, Any] = {
        "amiSelectorTerms": [{"alias": f"al2023@{software('eks-optimized-ami-al2023')['version']}"}],
        "role": node_role(cluster, role),
        "subnetSelectorTerms": discovery,
        "securityGroupSelectorTerms": discovery,
        "metadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 1},
        "tags": node_tags("aws", pool.name, workload),
    }
    if disk.local:
        spec["instanceStorePolicy"] = "RAID0"
    else:
        spec["blockDeviceMappings"] = [{"deviceName": ROOT_DEVICE, "rootVolume": True, "ebs": root_ebs(disk)}]
    if interfaces := network_interfaces(pool, crosses):
        spec["networkInterfaces"] = interfaces
    if reserved_only(pool):  # the reservation the user tags for this pool (newuser26 item 8)
        spec["capacityReservationSelectorTerms"] = [{"tags": {RESERVATION_TAG: dns_name(pool)}}]
    return {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": dns_name(pool)},
        "spec": spec,
    }


#: The EKS AL2023 AMI's root device (Karpenter's default mapping for the AL2023 alias, and terraform-aws-eks's examples).
ROOT_DEVICE = "/dev/xvda"


def root_ebs(disk: NodeDisk) -> dict[str, Any]:
    """The root EBS volume of ``disk``'s size (gp3, deleted with the node), as an EC2NodeClass writes it."""
    return {"volumeSize": f"{disk.root_gib}Gi", "volumeType": "gp3", "deleteOnTermination": True, "encrypted": True}


def serving_pools(plan: Plan) -> frozenset[str]:
    """The pools an inference service runs in: the ones rolled and replaced under a serving replica.

    A pool that runs only for batch jobs' runs (:attr:`Pool.runs_only`) is none: like a training job's, it is capped at
    the plan, as ``karpenter-per-job-grace`` says of it (newuser77 item 16: its NodePool allowed a node beyond the plan
    beside that finding's "capped at its planned GPUs").
    """
    runs_only = {p.name for p in plan.pools if p.runs_only}
    return frozenset(pool for d in plan.deployments if d.kind == "inference" for pool in d.pools if pool not in runs_only)


def limit_nodes(pool: Pool, serving: bool) -> int:
    """Nodes a pool's NodePool limits allow: the plan, plus :data:`REPLACEMENT_NODES` for a ``serving`` pool.

    A training pool, and one that runs only for batch jobs' runs, is capped at the plan: a job is not rolled, and the
    cap bounds what a run can bill (review22 item 10: one billed by the month was given the serving pools' extra node;
    newuser77 item 16: a batch job's, see :func:`serving_pools`). The plan's nodes are the peak's where
    a service's rate varies (``average_requests_per_second``): Karpenter launches nodes for pending replicas up to them
    and removes empty ones, so the NodePool scales between its services' average and peak with no bound of its own.
    """
    return pool.nodes + (REPLACEMENT_NODES if serving else 0)


def node_pool_limits(pool: Pool, serving: bool, devices_per_gpu: int = 1) -> dict[str, str]:
    """A NodePool's ``spec.limits``: the GPUs of :func:`limit_nodes` nodes, and on shared GPUs the nodes themselves.

    The GPU resource counts what a node advertises once it is initialized: shared GPUs (time-slicing, MPS, MIG) count
    ``devices_per_gpu`` times. But Karpenter charges a node it is still launching, and every NodeClaim its scheduler
    creates, the instance type's physical GPUs ("if !in.Initialized() && in.NodeClaim != nil ... return
    in.NodeClaim.Status.Capacity", karpenter ``StateNode.Capacity``), so a limit of 112 shared GPUs let a burst launch
    14 8-GPU nodes where the plan allows 2 (newuser40 item 1), and a limit of the physical GPUs would block every
    launch once one node advertises its shared ones. So a shared pool is also capped by ``nodes`` (both pinned
    NodePool CRDs, AWS v1.14.1 and Azure, accept ``limits.nodes``; Karpenter counts it per node from v1.11.1,
    kubernetes-sigs/karpenter#2526): the GPU limit stays as the ceiling within one provisioning pass, which does not
    count ``nodes`` (kubernetes-sigs/karpenter#2915, open).
    """
    nodes = limit_nodes(pool, serving)
    limits = {gpu_resource(pool): str(nodes * pool.node.gpus * devices_per_gpu)}
    return limits | ({"nodes": str(nodes)} if devices_per_gpu > 1 else {})


#: The tag an EC2 capacity reservation (a Capacity Block for ML is one) carries for a pool's EC2NodeClass to select it:
#: its value is the pool's NodePool name. Karpenter selects reservations by tag or id (``capacityReservationSelectorTerms``)
#: and launches ``reserved`` capacity on them with its ``ReservedCapacity`` feature gate, Capacity Blocks since v1.6
#: (https://karpenter.sh/v1.14/tasks/odcrs/).
RESERVATION_TAG = "specgen.dev/capacity-reservation"


def reserved_only(pool: Pool) -> bool:
    """Whether the pool's AWS instance type is sold only through reservations (Capacity Blocks), not on demand."""
    return pool.node.provider == "aws" and platforms()[pool.node.platform_id].not_on_demand is not None


def karpenter_node_pool(
    pool: Pool, node_class: tuple[str, str], gpu_count_label: str, devices_per_gpu: int = 1, *, serving: bool = True
) -> dict[str, Any]:
    """Karpenter ``NodePool`` of one pool (AWS and Azure builds share it).

    ``node_class``: (API group, kind) of the provider's node class; ``gpu_count_label``: the provider's
    well-known label for GPUs per instance; ``devices_per_gpu``: GPU resources the device plugin advertises per
    physical GPU (:func:`generator.render.gpu_sharing.advertised_per_gpu`). On-demand (reserved capacity for an
    instance type not sold on demand, :func:`reserved_only`; spot for a spot pool, ``capacity_type: spot``), never
    expired, removed only when empty (a per-job pool's
    nodes sooner, :data:`PER_JOB_NODE_GRACE`); limits: :func:`limit_nodes`.
    """
    node = pool.node
    # a spot pool's type is sold as spot (one sold only through reservations is no spot deployment's choice)
    capacity = "spot" if pool.spot else "reserved" if reserved_only(pool) else "on-demand"
    requirements = [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [str(node.instance_type)]},
        {"key": gpu_count_label, "operator": "In", "values": [str(node.gpus)]},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": [capacity]},
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
            "limits": node_pool_limits(pool, serving, devices_per_gpu),
            "disruption": {
                "consolidationPolicy": "WhenEmpty",
                "consolidateAfter": PER_JOB_NODE_GRACE if pool.runs_only else EMPTY_NODE_GRACE,
                "budgets": [{"nodes": "1"}],
            },
        },
    }


def karpenter_aws_objects(
    pools: list[Pool],
    cluster: str,
    workload: str,
    *,
    shares: Mapping[str, GpuSharing | None],
    serving: frozenset[str],
    disks: Mapping[str, NodeDisk],
    role: str | None = None,
    crossing: frozenset[str] = frozenset(),
) -> list[dict[str, Any]]:
    """NodePool + EC2NodeClass for each pool.

    ``shares``: GPU sharing by pool; ``serving``: pools a service runs in; ``disks``: where each pool's nodes keep
    their files; ``role``: ``kubernetes.karpenter_node_role`` (:func:`node_role`); ``crossing``: the pools whose GPUs
    talk across nodes, the only ones given EFA interfaces (:func:`network_interfaces`).
    """
    objects: list[dict[str, Any]] = []
    for pool in pools:
        per_gpu = advertised_per_gpu(pool, shares.get(pool.name))
        aws = ("karpenter.k8s.aws", "EC2NodeClass")
        objects += [
            karpenter_node_pool(pool, aws, "karpenter.k8s.aws/instance-gpu-count", per_gpu, serving=pool.name in serving),
            ec2_node_class(pool, cluster, workload, disks[pool.name], role, pool.name in crossing),
        ]
    return objects


#: Providers whose node pools render as Karpenter NodePools (``kubernetes/<provider>/``).
KARPENTER_PROVIDERS = ("aws", "azure")


def node_usd_per_hour(pool: Pool) -> float | None:
    """One node's price an hour (None where the pool is unpriced)."""
    return pool.usd_per_hour / pool.nodes if pool.usd_per_hour is not None and pool.nodes else None


def _node_rate(pool: Pool) -> str:
    """``p5.48xlarge at $55.04/h`` (or ``unpriced``)."""
    rate = node_usd_per_hour(pool)
    return f"{pool.node.instance_type} at ${rate:,.2f}/h" if rate is not None else f"{pool.node.instance_type}, unpriced"


def replacement_slot_finding(
    pools: list[Pool], serving_names: frozenset[str], shared: frozenset[str] = frozenset(), drain: str = ""
) -> Finding | None:
    """What the serving NodePools' one node beyond the plan allows, costs, and how to take it away (newuser24 item 5).

    ``shared``: the pools whose GPUs are shared, capped by ``limits.nodes`` as well (:func:`node_pool_limits`);
    ``drain``: what the drain of a drifted node must wait for (:func:`~generator.planner.spread.drain_grace_text`).
    """
    serving = [p for p in pools if p.name in serving_names]
    if not serving:
        return None
    limits = "; ".join(f"{dns_name(p)} {limit_nodes(p, True)} for {p.nodes}, {_node_rate(p)}" for p in serving)
    capped = [dns_name(p) for p in serving if p.name in shared]
    nodes = f" (and, on shared GPUs, limits.nodes to the planned nodes: {', '.join(capped)})" if capped else ""
    return Finding(
        "info",
        "karpenter-replacement-slot",
        f"each serving Karpenter NodePool's spec.limits allow one node beyond the plan (nodes: {limits}): Karpenter "
        "launches a drifted node's replacement and waits for it to be ready before it drains the old node, and a "
        "RollingUpdate's surge pod needs a node of its own, so limits at the plan would keep a drifted node forever and "
        "leave the surge pod Pending (https://karpenter.sh/v1.14/concepts/disruption/). The extra node bills only while "
        "it runs beside the one it replaces, outside the plan's cost; limits cap and reserve nothing, so a replica added "
        f"beyond the plan gets it too. To forbid it, set spec.limits to the planned GPUs{nodes} and roll with "
        "maxSurge 0: a one-replica service is then down while its node is replaced" + drain,
        "kubernetes",
    )


#: Where Karpenter's ignorance of shared GPUs is tracked: it sizes nodes by the instance type's physical GPUs.
KARPENTER_SHARING_ISSUES = (
    "https://github.com/kubernetes-sigs/karpenter/issues/729",
    "https://github.com/kubernetes-sigs/karpenter/issues/2140",
)
#: Karpenter's NodeOverlay (karpenter.sh/v1alpha1, alpha, behind the NodeOverlay feature gate): what would tell it a
#: node's shared capacity. Not rendered: no NodeOverlay CRD is pinned to check one against.
NODE_OVERLAY_DOCS = "https://karpenter.sh/v1.13/concepts/nodeoverlays/"


def pool_pods(plan: Plan, pool: str) -> int:
    """Serving pods (replicas) in ``pool``: each takes one GPU resource where the pool's GPUs are shared."""
    return sum(
        part.replicas for dep in plan.deployments if dep.kind == "inference" for part in dep.split or (dep,) if part.pool == pool
    )


def shared_gpu_finding(
    plan: Plan, pools: list[Pool], per_gpu: Mapping[str, int], fields: Mapping[str, str] | None = None
) -> Finding | None:
    """That Karpenter launches a shared-GPU pool's nodes by physical GPUs (newuser40 item 1).

    ``per_gpu``: GPU resources each pool's nodes advertise per physical GPU (:func:`advertised_per_gpu`); ``fields``:
    the field each pool's sharing is asked at (:func:`~generator.render.gpu_sharing.pool_sharing_fields`), the first
    shared pool's the finding's path (newuser69 item 2: ``kubernetes.gpu_sharing``, not in the file). Karpenter's
    instance types carry the physical GPUs as ``nvidia.com/gpu``, so ``n`` pending one-GPU pods ask it for
    ``ceil(n / GPUs a node)`` nodes though one node, once up, takes ``GPUs x per_gpu`` of them. A warning where the
    plan's own pods would ask for more nodes than it has.
    """
    shared = [p for p in pools if per_gpu.get(p.name, 1) > 1]
    if not shared:
        return None
    each, extra = [], False
    for pool in shared:
        gpus, pods = pool.node.gpus, pool_pods(plan, pool.name)
        wanted = -(-pods // gpus)
        extra = extra or wanted > pool.nodes
        each.append(
            f"{dns_name(pool)}: {pool.node.instance_type} counts {gpus} GPUs where its nodes advertise "
            f"{gpus * per_gpu[pool.name]}; its {pods} pod(s) ask for {wanted} node(s), the plan has {pool.nodes}"
        )
    return Finding(
        "warning" if extra else "info",
        "karpenter-shared-gpus",
        "Karpenter sizes a NodePool's nodes by the instance type's physical GPUs: it does not know that the device "
        "plugin advertises each shared GPU several times (time-slicing, MPS replicas, MIG instances), so it launches a node "
        "for each batch of pending pods as large as a node's physical GPU count, though a node already up takes more "
        f"({', '.join(KARPENTER_SHARING_ISSUES)}; {'; '.join(each)}). A node launched that no pod needs once the first is "
        f"up bills until it has been empty for {EMPTY_NODE_GRACE} (consolidateAfter); limits.nodes caps the pool at the "
        "plan plus one node between provisioning passes, its GPU limit within one pass "
        "(https://github.com/kubernetes-sigs/karpenter/issues/2915). A Karpenter NodeOverlay (karpenter.sh/v1alpha1, "
        f"alpha, NodeOverlay feature gate, {NODE_OVERLAY_DOCS}) can give the instance type the nvidia.com/gpu its nodes "
        "advertise; specgen renders none (no NodeOverlay CRD is pinned to check it against)",
        (fields or {}).get(shared[0].name, "kubernetes.gpu_sharing"),
    )


def per_job_grace_finding(pools: list[Pool]) -> Finding | None:
    """What a per-job NodePool's limit and idle grace mean for a run's bill (newuser24 item 6)."""
    per_job = [p for p in pools if p.runs_only]
    if not per_job:
        return None

    def idle(pool: Pool) -> str:
        rate = node_usd_per_hour(pool)
        cost = f": up to ${rate * pool.nodes * PER_JOB_NODE_GRACE_H:,.2f} a run" if rate is not None else ""
        return f"{dns_name(pool)} {pool.nodes} x {_node_rate(pool)}{cost}"

    return Finding(
        "info",
        "karpenter-per-job-grace",
        f"the Karpenter NodePool of each pool {runs_only_why(pools)} is capped at its planned GPUs (a job is not "
        f"rolled, and a drifted node is not replaced under a running job) and removes its nodes {PER_JOB_NODE_GRACE} "
        f"after the job's pods end (consolidateAfter; serving pools keep {EMPTY_NODE_GRACE}), which the per-run cost "
        f"does not count ({'; '.join(idle(p) for p in per_job)}), nor the nodes' boot and the model's download",
        "kubernetes",
    )


def reserved_finding(pools: list[Pool]) -> Finding | None:
    """How the NodePools of instance types sold only through reservations find theirs (newuser26 item 8)."""
    reserved = [p for p in pools if reserved_only(p)]
    if not reserved:
        return None
    tags = ", ".join(f"{RESERVATION_TAG}={dns_name(p)} ({p.node.instance_type})" for p in reserved)
    return Finding(
        "warning",
        "karpenter-reserved-capacity",
        f"the Karpenter NodePool(s) of {', '.join(dns_name(p) for p in reserved)} launch only on reserved capacity "
        "(karpenter.sh/capacity-type: reserved): the instance type is not sold on demand. Their EC2NodeClass selects the "
        f"capacity reservations (a Capacity Block for ML is one) tagged {tags}: tag yours so, and enable Karpenter's "
        "ReservedCapacity feature gate (Capacity Blocks from v1.6, https://karpenter.sh/v1.14/tasks/odcrs/); with no "
        "such reservation active, the pool's pods stay Pending",
        "kubernetes",
    )


#: Where Karpenter's handling of an instance type whose EC2 API GPU count is wrong is tracked.
KARPENTER_GPU_COUNT_ISSUE = "https://github.com/aws/karpenter-provider-aws/issues/8368"


def api_gpu_count_finding(pools: list[Pool], terraform: bool = True) -> Finding | None:
    """AWS NodePools of instance types whose GPU count in EC2 DescribeInstanceTypes is not their GPUs (p5.4xlarge: 0).

    Karpenter reads an instance type's GPUs (its ``instance-gpu-count`` label and ``nvidia.com/gpu`` capacity) from that
    API, so it matches no such NodePool's GPU-count requirement and launches no such node for a pod requesting GPUs.
    ``terraform``: the workload renders ``terraform/eks-managed-node-groups.tfvars.json``, the way out the finding names;
    where it does not, the finding says to add it to ``outputs`` or leave the types out (newuser81 item 1: it named a
    file the render had not written, and the Karpenter NodePools were the only provisioner rendered).
    """
    wrong = [
        (p, count)
        for p in pools
        if p.node.provider == "aws"
        and (count := platforms()[p.node.platform_id].ec2_api_gpus) is not None
        and count != p.node.gpus
    ]
    if not wrong:
        return None
    each = "; ".join(f"{dns_name(p)}: {p.node.instance_type} has {p.node.gpus}, the API says {count}" for p, count in wrong)
    types = " and ".join(sorted({p.node.platform_id for p, _ in wrong}))
    return Finding(
        "warning",
        "karpenter-api-gpu-count",
        f"EC2 DescribeInstanceTypes reports a GPU count other than the instance's for these Karpenter NodePools ({each}), "
        "and Karpenter takes an instance type's GPUs (its karpenter.k8s.aws/instance-gpu-count label and nvidia.com/gpu "
        "capacity) from that API: it matches no node of the type to the NodePool and launches none for the pods' "
        f"nvidia.com/gpu requests, which stay Pending ({KARPENTER_GPU_COUNT_ISSUE}, open). "
        + (
            "Run these pools as the EKS managed node groups of terraform/eks-managed-node-groups.tfvars.json instead: "
            "their nodes join with the GPUs the device plugin finds"
            if terraform
            else "The workload renders no other provisioner for them: add terraform to outputs to render "
            "terraform/eks-managed-node-groups.tfvars.json, whose EKS managed node groups' nodes join with the GPUs the "
            f"device plugin finds, or list the platforms allowed in hardware.platforms without {types}, for a plan "
            "whose NodePools Karpenter launches"
        ),
        "kubernetes",
    )


def node_role_finding(pools: list[Pool], cluster: str) -> Finding | None:
    """The node IAM role the AWS EC2NodeClasses name where ``kubernetes.karpenter_node_role`` is not given (info).

    An EC2NodeClass whose ``spec.role`` names no role of the account never becomes Ready, and its NodePool launches
    nothing (newuser81 item 3: the name was fixed, and a Karpenter installed with terraform-aws-eks's karpenter module
    has ``Karpenter-<cluster>`` with a suffix, ``coalesce(var.node_iam_role_name, "Karpenter-${var.cluster_name}")``).
    """
    if not any(p.node.provider == "aws" for p in pools):
        return None
    return Finding(
        "info",
        "karpenter-node-role",
        f"the EC2NodeClasses give their nodes the IAM role {node_role(cluster)}, the name Karpenter's getting-started "
        f"CloudFormation creates for cluster {cluster} ({KARPENTER_GETTING_STARTED}); a Karpenter installed otherwise "
        "names it otherwise (terraform-aws-modules/eks's karpenter module: Karpenter-<cluster> with a suffix, its "
        "node_iam_role_name output), and an EC2NodeClass naming no role of the account never becomes Ready: set "
        "kubernetes.karpenter_node_role to your cluster's Karpenter node role",
        "kubernetes",
    )


#: Karpenter's getting-started guide tags the cluster's subnets and node security group ``karpenter.sh/discovery:
#: <cluster>``, which the EC2NodeClasses' selector terms match (https://karpenter.sh/v1.14/concepts/nodeclasses/).
KARPENTER_NODECLASSES = "https://karpenter.sh/v1.14/concepts/nodeclasses/"


def cluster_assumed_finding(pools: list[Pool], workload_name: str) -> Finding | None:
    """The EKS cluster name taken from the workload's ``name`` where ``kubernetes.cluster_name`` is not given (info).

    newuser97 item 1: a workload named ``chat-eks`` for an existing cluster ``prod`` rendered EC2NodeClasses selecting
    subnets and security groups tagged ``karpenter.sh/discovery: chat-eks``, which match none of the cluster's: the
    NodePools launch nothing. ``karpenter-node-role`` named the role's cluster only where no role was given, and never
    said the name was the workload's.
    """
    if not any(p.node.provider == "aws" for p in pools):
        return None
    return Finding(
        "info",
        "karpenter-cluster-name-assumed",
        f"kubernetes.cluster_name is not given, so the EKS cluster is taken to be named after the workload, "
        f"{workload_name}: the EC2NodeClasses select their subnets and security groups by the tag "
        f"karpenter.sh/discovery: {workload_name} ({KARPENTER_NODECLASSES}), and a cluster of another name, or whose "
        "subnets and node security group carry no such tag, gives Karpenter none, so its NodePools launch no node: "
        "set kubernetes.cluster_name to your EKS cluster's name",
        "kubernetes",
    )


#: Karpenter's interruption handling: it drains a node on the 2-minute spot notice only where its controller reads the
#: SQS queue that EventBridge's EC2 rules feed (``settings.interruptionQueue``); otherwise the instance is terminated
#: under its pods (https://karpenter.sh/v1.14/concepts/disruption/#interruption; eksctl-io/eksctl#7697 is that failure).
KARPENTER_INTERRUPTION = "https://karpenter.sh/v1.14/concepts/disruption/#interruption"


def spot_interruption_finding(pools: list[Pool]) -> Finding | None:
    """AWS spot NodePools, whose 2-minute reclaim notice Karpenter acts on only with its interruption queue (info).

    newuser81 item 4: ``serving-on-spot`` says AWS gives 2 minutes of notice, which a Karpenter installed without
    ``settings.interruptionQueue`` never reads, so the pods get no drain and no replacement node is started early.
    """
    spot = [dns_name(p) for p in pools if p.node.provider == "aws" and p.spot]
    if not spot:
        return None
    return Finding(
        "info",
        "karpenter-spot-interruption",
        f"the Karpenter NodePool(s) {', '.join(spot)} launch spot capacity: Karpenter cordons and drains a spot node on "
        "EC2's 2-minute interruption notice, and starts its replacement, only where its settings.interruptionQueue names "
        "the SQS queue EventBridge's EC2 spot interruption, rebalance, instance state-change and scheduled-change rules "
        f"feed ({KARPENTER_INTERRUPTION}); without it the instance is terminated under its pods, with no drain",
        "kubernetes",
    )


def aks_os_disk_finding(plan: Plan, pools: list[Pool]) -> Finding | None:
    """AKS pools whose files and images outgrow the largest OS disk an AKSNodeClass asks for (2048 GiB: Azure's "GB")."""
    short = [(p, disk) for p in pools if p.node.provider == "azure" and (disk := root_disk_gib(plan, p)) > AKS_MAX_OS_DISK_GB]
    if not short:
        return None
    each = "; ".join(f"{dns_name(p)} {disk:,} {AZURE_DISK_UNIT} wanted" for p, disk in short)
    return Finding(
        "warning",
        "aks-os-disk-short",
        f"the AKSNodeClass OS disk holds at most {AKS_MAX_OS_DISK_GB:,} {AZURE_DISK_UNIT} (osDiskSizeGB), less than the "
        f"model files, dataset, checkpoints and images its nodes keep ({each}): keep the dataset or checkpoints on Azure "
        "storage, or the files on the VM's local NVMe through Azure Container Storage "
        "(https://learn.microsoft.com/en-us/azure/aks/best-practices-storage-nvme)",
        "kubernetes",
    )


def with_karpenter_findings(
    plan: Plan,
    kubernetes: bool,
    shares: Mapping[str, GpuSharing | None] | None = None,
    fields: Mapping[str, str] | None = None,
    *,
    terraform: bool = True,
    cluster: str | None = None,
    assumed_cluster: str | None = None,
) -> Plan:
    """The plan with what its Karpenter NodePools' limits and idle grace allow and cost (AWS and Azure).

    ``kubernetes``: the workload renders its node pools; ``terraform``: it renders its Terraform too (on AWS the EKS
    managed node groups, the other provisioner a finding may send a pool to); ``cluster``: on AWS the cluster whose
    getting-started node role the EC2NodeClasses name, said where ``kubernetes.karpenter_node_role`` is not given
    (None: it is given, or no finding); ``assumed_cluster``: the workload's name where ``kubernetes.cluster_name`` is not
    given, which the AWS EC2NodeClasses' discovery tags then take (None: it is given); ``shares``: each pool's GPU
    sharing, by name (:func:`~generator.render.gpu_sharing.pool_shares`); ``fields``: where each shared pool's sharing is asked
    (:func:`~generator.render.gpu_sharing.pool_sharing_fields`). The pools AKS partitions with MIG are AKS node pools
    with no NodePool (:func:`~generator.render.gpu_sharing.aks_mig_pools`): no Karpenter finding is theirs (newuser69
    item 2: their NodePool's limits were said, and warned of, though none is rendered).
    """
    if plan.provider not in KARPENTER_PROVIDERS or not kubernetes or not plan.pools:
        return plan
    aks_pools = {p.name for p in aks_mig_pools(plan)}
    pools = [p for p in plan.pools if p.node.provider == plan.provider and p.name not in aks_pools]
    if not pools:
        return plan
    per_gpu = {p.name: advertised_per_gpu(p, (shares or {}).get(p.name)) for p in pools}
    found = [
        f
        for f in (
            replacement_slot_finding(
                pools,
                serving_pools(plan),
                frozenset(n for n, k in per_gpu.items() if k > 1),
                drain_grace_text(d for d in plan.deployments if d.kind == "inference"),
            ),
            shared_gpu_finding(plan, pools, per_gpu, fields),
            per_job_grace_finding(pools),
            reserved_finding(pools),
            api_gpu_count_finding(pools, terraform),
            node_role_finding(pools, cluster) if cluster is not None else None,
            cluster_assumed_finding(pools, assumed_cluster) if assumed_cluster is not None else None,
            spot_interruption_finding(pools),
            aks_os_disk_finding(plan, pools),
        )
        if f
    ]
    return plan._replace(findings=sorted_findings([*plan.findings, *found])) if found else plan
