"""Renderers: a plan in, ``{relative path: text}`` out. One module per target."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import pairwise

from generator.errors import InputError, Location, MultipleInputError
from generator.named_tuple import NamedTuple
from generator.planner.plan import Finding, Plan, sorted_findings
from generator.planner.racks import racks_named_for_workload
from generator.render.aks_terraform import with_aks_findings
from generator.render.ansible import render_ansible
from generator.render.aso import with_aso_findings
from generator.render.deepspeed_config import render_deepspeed_configs
from generator.render.eks import with_eks_findings
from generator.render.env import render_template
from generator.render.failure_domains import with_failure_domain_findings
from generator.render.gke import with_gke_findings
from generator.render.gpu_sharing import apply_sharing, pool_shares, pool_sharing_fields
from generator.render.gpu_stack import GpuPoolStack, render_cluster
from generator.render.hosts import cluster_hosts
from generator.render.karpenter_aws import with_karpenter_findings
from generator.render.kubernetes import cluster_name, gpu_stacks, is_single_host, render_node_pools
from generator.render.list_prices import CLOUD_PROVIDERS, with_list_price_finding
from generator.render.markdown import render_markdown
from generator.render.mirrors import ClusterMirror, cluster_mirror, with_mirror_findings
from generator.render.node_disk import with_root_disks
from generator.render.provisioning import render_provisioning, with_cluster_api_findings, with_unprovisioned_findings
from generator.render.rdma_host import with_rdma_findings
from generator.render.rented import SINGLE_HOST_CODE, with_rented_findings
from generator.render.site_groups import other_profiles
from generator.render.spec import render_spec
from generator.render.terraform import render_terraform
from generator.render.tinkerbell import with_tinkerbell_findings
from generator.workload.host_network import address_clashes, host_addresses, path_text
from generator.workload.models import Workload


def deployed(plan: Plan, workload: Workload, *, alone: bool = True) -> Plan:
    """The plan as it is deployed: GPU sharing applied, and what the cluster must provide itself said.

    Sharing gives MIG-config pool labels and its findings; GKE's GPU stack, AWS's two alternative provisioners, what
    Karpenter's limits and idle grace allow, the cloud's list prices, the Cluster API templates a site writes and the hosts
    Tinkerbell gets no Hardware for are findings, as is what an air-gapped site's mirrors leave to it and what the user
    does for servers rented from a provider on bare metal.

    The one plan ``spec.json``, SPEC.md, ``specgen plan`` and the findings a render reports all show.
    ``alone``: the workload is the whole tree (a single host is then its own cluster and joins nothing).
    """
    shared = apply_sharing(plan, workload, single_host=alone and is_single_host(plan, workload))
    shared = with_root_disks(shared)  # newuser74 item 12: spec.json records each cloud node's root disk
    if not alone:
        shared = joined_cluster(shared)
    shared = with_list_price_finding(
        with_karpenter_findings(
            shared,
            "kubernetes" in workload.outputs,
            pool_shares(shared, workload),
            pool_sharing_fields(shared, workload),
            terraform="terraform" in workload.outputs,
            cluster=None if workload.kubernetes.karpenter_node_role else cluster_name(workload),
            assumed_cluster=None if workload.kubernetes.cluster_name else workload.name,
        )
    )
    shared = with_aks_findings(with_eks_findings(with_gke_findings(shared, workload), workload), workload)
    shared = with_aso_findings(shared, workload)  # hostile83: an owner.name no ManagedCluster object can have
    shared = with_cluster_api_findings(with_tinkerbell_findings(shared, workload), workload)
    shared = with_unprovisioned_findings(shared, workload)  # fuzz33 item 9
    shared = with_rdma_findings(shared, workload)  # newuser57 item 11
    shared = with_failure_domain_findings(shared, workload)  # newuser63 items 7 and 9
    return with_rented_findings(with_mirror_findings(shared, workload), workload)


def joined_cluster(plan: Plan) -> Plan:
    """``plan`` rendered with other workloads into one cluster: a single host joins it, as the files rendered say.

    The planner decides ``kubernetes-single-host`` ("no kubeadm join file and no GPU Operator are rendered") from one
    workload; rendered with others, the host gets a join file and the tree the cluster's GPU stack (fuzz20 item 10: the
    SPEC.md said otherwise beside them). Its racks are named after it, beside the other workloads' racks.
    """
    plan = racks_named_for_workload(plan)
    if not any(f.code == SINGLE_HOST_CODE for f in plan.findings):
        return plan
    joins = Finding(
        "info",
        "kubernetes-joins-cluster",
        "Rendered with other workloads into one cluster, this workload's one host joins it: its kubeadm join file is "
        "under kubeadm/ and the cluster's GPU stack (the GPU Operator or device plugin) under the tree's shared cluster/",
        "outputs",
    )
    return plan._replace(findings=sorted_findings([joins if f.code == SINGLE_HOST_CODE else f for f in plan.findings]))


def render_workload(plan: Plan, workload: Workload, *, alone: bool = True) -> tuple[dict[str, str], list[GpuPoolStack]]:
    """One workload's own files, and what its pools need from the cluster's shared GPU stack.

    ``plan``: as :func:`deployed` gives it, with the same ``alone``.
    """
    files = {**render_spec(plan), **render_markdown(plan), **render_provisioning(plan, workload)}
    files.update(render_deepspeed_configs(plan))  # a DeepSpeed training job's config, whatever the outputs
    plan = with_deployed_profiles(plan, workload, alone=alone)
    if "terraform" in workload.outputs:
        files.update(render_terraform(plan, workload))
    if "ansible" in workload.outputs:
        files.update(render_ansible(plan, workload))
    stacks: list[GpuPoolStack] = []
    if "kubernetes" in workload.outputs:
        files.update(render_node_pools(plan, workload, alone=alone))
        stacks = gpu_stacks(plan, workload, alone=alone)
    for _, tag, own in other_profiles(plan):  # fix203: each later site profile's one-site cluster, under its tag
        at = f"{PROFILES_DIRECTORY}/{tag}/"
        if "terraform" in workload.outputs:
            files.update({at + path: text for path, text in render_terraform(own, workload).items()})
        if "kubernetes" in workload.outputs:
            files.update({at + path: text for path, text in render_node_pools(own, workload, alone=alone).items()})
            files.update({at + path: text for path, text in render_cluster(gpu_stacks(own, workload, alone=alone)).items()})
    return files, stacks


#: Where a per-site plan's later profiles (``sites[].requests_per_second_scale``) have their own Terraform and
#: Kubernetes files, each under its tag (``site-profiles/x3/``): each site is a cluster of its own (fix203).
PROFILES_DIRECTORY = "site-profiles"


def with_deployed_profiles(plan: Plan, workload: Workload, *, alone: bool) -> Plan:
    """``plan`` with its later site profiles' plans as they are deployed (GPU sharing applied, as the plan's own)."""
    if plan.sites is None or len(plan.sites.plans) < 2:
        return plan
    own = (plan.sites.plans[0], *(deployed(p, workload, alone=alone) for p in plan.sites.plans[1:]))
    return plan._replace(sites=plan.sites._replace(plans=own))


def render_plan(plan: Plan, workload: Workload) -> dict[str, str]:
    """Every output file of one workload, keyed by path relative to the output directory."""
    return render_alone(deployed(plan, workload), workload)


def render_alone(plan: Plan, workload: Workload) -> dict[str, str]:
    """:func:`render_plan` of a plan :func:`deployed` already gave."""
    files, stacks = render_workload(plan, workload)
    files.update(render_cluster(stacks))
    return dict(sorted(files.items()))


#: Top-level directories of a tree of several workloads that belong to no single workload.
SHARED_DIRECTORIES = ("cluster", "terraform")


def render_plans(rendered: Sequence[tuple[Plan, Workload]]) -> dict[str, str]:
    """Several workloads in one tree (one cluster): ``<workload>/...`` each, plus one merged ``cluster/`` layer."""
    files: dict[str, str] = {}
    parts: list[tuple[str, Sequence[GpuPoolStack], str | None]] = []
    check_one_cluster([(workload.name, pools_cluster(workload)) for _, workload in rendered])
    check_same_mirrors([(w.name, pools_cluster(w), cluster_mirror(w.mirrors)) for _, w in rendered])
    for plan, workload in sorted(rendered, key=lambda planned: planned[1].name):  # not the order given
        check_tree_name(workload.name, [name for name, _, _ in parts])
        own, needs = render_workload(deployed(plan, workload, alone=False), workload, alone=False)
        files.update({f"{workload.name}/{path}": text for path, text in own.items()})
        parts.append((workload.name, needs, plan.provider if "terraform" in workload.outputs else None))
    check_cluster_names([ClusterNames(w.name, tuple(p.name for p in plan.pools), cluster_hosts(plan, w)) for plan, w in rendered])
    check_tree_addresses([workload for _, workload in rendered])
    files.update(render_shared(parts))
    return dict(sorted(files.items()))


def check_tree_addresses(workloads: Sequence[Workload]) -> None:
    """Refuse a host's boot MAC, address or BMC that two workloads of one tree both give (fuzz30 item 2), by name.

    :func:`~generator.workload.host_network.tree_address_errors` says it at the files' fields, where there are files.
    """
    ordered = sorted(workloads, key=lambda w: w.name)
    clashes = address_clashes([(w.name, host_addresses(w)) for w in ordered], lambda name, path: f"{name}: {path_text(path)}")
    errors = [InputError(f"{name}: {path_text(address.path)}: {message}") for (name, address), message in clashes]
    if errors:
        raise errors[0] if len(errors) == 1 else MultipleInputError(errors)


class ClusterNames(NamedTuple):
    """The names a workload takes in a tree's one cluster (:func:`check_cluster_names`)."""

    #: The workload file (or, rendering plans in a library call, the workload's name).
    file: str
    pools: Sequence[str]
    #: Its owned hosts and the placeholders of those it buys (:func:`~generator.render.hosts.cluster_hosts`).
    hosts: Sequence[str]
    #: Where the file gives each name, as field paths (the first it has is the one): an error stands there.
    fields: tuple[tuple[str, tuple[tuple[str | int, ...], ...]], ...] = ()


def check_cluster_names(workloads: Sequence[ClusterNames], locate: FieldLocator | None = None) -> None:
    """Refuse two workloads of one tree that name the same pool or host.

    A tree is one cluster: a pool's node pool, node group and Ansible group, and a host, would be one object for both,
    and applying the second would replace or double-book the first. With ``locate`` the error stands at the second
    workload's field that gives the name (fuzz30: it named the two files only).
    """
    hosts_fix = (
        "list each owned host in one workload only, and name none like another workload's pool (<pool>-NN is the "
        "placeholder specgen gives a host it buys)"
    )
    # a pool is named <pool>_<gpu> where its deployments set pool:, else <deployment>_<gpu> (fuzz21 item 13)
    pool_fix = "give one of them another name: its deployments' pool field where they set one, else a deployment's name"
    for what, fix in (("pool", pool_fix), ("host", hosts_fix)):
        owner: dict[str, str] = {}
        for workload in workloads:
            for name in workload.pools if what == "pool" else workload.hosts:
                first = owner.setdefault(name, workload.file)
                if first == workload.file:
                    continue
                paths = dict(workload.fields).get(name)
                raise InputError(
                    f"{first} and {workload.file} both have {what} '{name}'; rendered into one tree they share one "
                    f"cluster, where it would be one object for both: {fix}",
                    locate(workload.file, paths) if locate is not None and paths else None,
                )


#: The cluster node pools join: its provider, and on a cloud its name, GKE project and location (bare metal: "", None, None).
PoolsCluster = tuple[str, str, str | None, str | None]


def pools_cluster(workload: Workload) -> PoolsCluster | None:
    """The cluster ``workload``'s node pools join; None where it renders none (no Kubernetes).

    Bare metal's is its provider alone: its nodes join the kubeadm cluster of the tree, whatever it is called; where
    Cluster API provisions them (``provisioning.tools`` capi), its MachineDeployments name their ``Cluster``
    (``spec.clusterName``: ``kubernetes.cluster_name``, else the workload's name), so the name is the cluster's too
    (newuser36 item 5: two names in one tree, and the second file's Machines waited for a Cluster of their own). Read
    from the workload alone, so that ``validate`` of several files checks it before any plan (newuser33 item 9).
    """
    provider = workload.hardware.provider
    capi = provider not in CLOUD_PROVIDERS and "capi" in workload.provisioning.tools
    if "kubernetes" not in workload.outputs and not capi:
        return None
    if provider not in CLOUD_PROVIDERS:
        return provider, cluster_name(workload) if capi else "", None, None
    return provider, cluster_name(workload), workload.kubernetes.gcp_project, workload.kubernetes.location


#: Where workload file ``file`` gives the first of ``paths`` it has (:func:`~generator.workload.loader.given_field`).
FieldLocator = Callable[[str, Sequence[tuple[str | int, ...]]], Location]

#: The fields of :data:`PoolsCluster` in order, as a workload file spells them, and what each is of the cluster.
_CLUSTER_FIELDS = (
    (("hardware", "provider"), "provider"),
    (("kubernetes", "cluster_name"), "name"),
    (("kubernetes", "gcp_project"), "GCP project"),
    (("kubernetes", "location"), "region"),
)


def check_one_cluster(workloads: Sequence[tuple[str, PoolsCluster | None]], locate: FieldLocator | None = None) -> None:
    """Node pools of workloads rendered into one tree must join one cluster: one provider, on a cloud one name and region.

    ``workloads``: (file or name, :func:`pools_cluster`) each. The cluster name defaults to each workload's own name,
    so workloads that do not set ``kubernetes.cluster_name`` would each target a cluster of their own (EKS discovery
    tags and node roles, GKE clusterRef). The error stands at the first field where a workload differs from the
    one before it (by name), located by ``locate`` where the workloads are files (fuzz24 M5): a cluster name left to
    default stands at the workload's ``name``. A bare-metal workload without Cluster API names no cluster (its name
    is ""): it joins whichever the others name, so its name is compared with none.
    """
    clusters = sorted(((name, key) for name, key in workloads if key is not None), key=lambda item: item[0])
    for (first, first_key), (name, key) in pairwise(clusters):
        for (path, what), here, there in zip(_CLUSTER_FIELDS, key, first_key, strict=True):
            if here != there and not (path[1] == "cluster_name" and key[0] not in CLOUD_PROVIDERS):
                _different_cluster(first, name, path, what, here, there, locate)
    # bare metal: the names Cluster API gives (newuser36 item 5), each compared with the first given
    named = [(name, key[1]) for name, key in clusters if key[0] not in CLOUD_PROVIDERS and key[1]]
    for name, here in named[1:]:
        if here != named[0][1]:
            _different_cluster(named[0][0], name, ("kubernetes", "cluster_name"), "name", here, named[0][1], locate, True)


def _different_cluster(
    first: str,
    name: str,
    path: tuple[str, ...],
    what: str,
    here: str | None,
    there: str | None,
    locate: FieldLocator | None,
    first_bare: bool = False,
) -> None:
    """Raise :func:`check_one_cluster`'s error: workload ``name``'s cluster ``what`` is not ``first``'s."""
    if path[1] == "provider":  # newuser26 item 3: AWS and Azure Karpenter objects, one GPU operator layer
        fix = "one cluster runs on one provider; render each provider's workloads into a tree of its own (-o)"
    elif path[1] == "cluster_name" and first_bare:  # review25 F: Cluster API's name on bare metal, no region there
        fix = (
            "a tree's Cluster API machines join one cluster: set kubernetes.cluster_name (it defaults to the "
            "workload's name) the same in every file that provisions with capi, or render them into trees of their own (-o)"
        )
    else:
        fix = (
            "a tree's node pools join one cluster: set kubernetes.cluster_name (it defaults to the workload's "
            "name), location (the cluster's region) and on GKE gcp_project the same in every file, or render "
            "them into trees of their own (-o)"
        )
    message = f"the cluster's {what} is {here or '(unset)'} here but {there or '(unset)'} in {first}: {fix}"
    if locate is None:
        raise InputError(f"{name}: {'.'.join(path)}: {message}")
    raise InputError(message, locate(name, (path, ("name",)) if path[1] == "cluster_name" else (path,)))


#: The fields of :class:`~generator.render.mirrors.ClusterMirror` in order, as a workload file spells them under
#: ``mirrors``, and what each is of the cluster.
_MIRROR_FIELDS = (
    ("container_registry", "registry"),
    ("image_pull_secret", "pull secret"),
    ("helm_repository", "Helm repository"),
)


def check_same_mirrors(
    workloads: Sequence[tuple[str, PoolsCluster | None, ClusterMirror | None]], locate: FieldLocator | None = None
) -> None:
    """Workloads whose node pools join one tree's cluster must pull its stack from one place.

    README: "their registry, secret and Helm repository must agree".
    ``workloads``: (file or name, :func:`pools_cluster`, :func:`~generator.render.mirrors.cluster_mirror`) each; one
    rendering no node pools (cluster None) joins no cluster and is not compared. The cluster's GPU Operator is one chart
    from one registry, and every pool's containerd is sent to its workload's registry, whatever its GPUs' vendor
    (review26 item 2: only NVIDIA pools were compared, when the cluster layer was merged, at no file or line). Read
    from the workloads alone, so that ``validate --together`` refuses what ``render`` does. The error stands at the
    first field where a workload differs from the first (by file or name), in that workload's file where ``locate``
    finds it: the field, else its ``mirrors``, else its ``name``.
    """
    joined = sorted(((name, mirror) for name, cluster, mirror in workloads if cluster is not None), key=lambda item: item[0])
    if not joined:
        return
    first, there = joined[0]
    for name, here in joined[1:]:
        for index, (field, what) in enumerate(_MIRROR_FIELDS):
            mine, theirs = (here[index] if here else None), (there[index] if there else None)
            if mine == theirs:
                continue
            message = (
                f"the cluster's {what} is {mine or '(unset)'} here but {theirs or '(unset)'} in {first}: workloads rendered "
                "into one tree share one cluster, whose GPU stack is pulled from one registry: give every file the same "
                "mirrors.container_registry, image_pull_secret and helm_repository, or render them into trees of their "
                "own (-o)"
            )
            if locate is None:
                raise InputError(f"{name}: mirrors.{field}: {message}")
            raise InputError(message, locate(name, (("mirrors", field), ("mirrors",), ("name",))))


def check_workload_names(files: Sequence[tuple[str, str]], locate: FieldLocator) -> None:
    """Workload files rendered into one tree must have names of their own (newuser27 item 9); ``files``: (file, name).

    The error stands at the second file's ``name``.
    """
    seen: dict[str, str] = {}
    for file, name in files:
        if name in seen:
            raise InputError(
                f"'{name}' is also the name of {seen[name]}: names must differ to render together (each "
                "is the directory of its tree under the output root)",
                locate(file, (("name",),)),
            )
        check_tree_name(name, (), locate(file, (("name",),)))
        seen[name] = file


def check_tree_name(name: str, taken: Sequence[str], location: Location | None = None) -> None:
    """A workload's tree name must differ from the others' and from the shared directories.

    ``location``: the workload's ``name`` field, where the workload has a file (newuser53 item 6: a workload named
    ``cluster`` was told, at no file or line, that two files shared its name).
    """
    if name in SHARED_DIRECTORIES:
        shared = " and ".join(f"{directory}/" for directory in SHARED_DIRECTORIES)
        raise InputError(
            f"'{name}' is the name of a directory a tree of several workloads holds beside theirs ({shared}, which "
            "belong to none of them): a workload rendered with others needs another name",
            location,
        )
    if name in taken:
        raise InputError(f"two workloads are both named '{name}': names must differ to render together", location)


#: What every module of one provider outputs that the root merges: the node groups or node pools a cluster module takes
#: (newuser33 item 11: wiring them into the EKS module needed a hand-written merge, edited at each workload added).
ROOT_MERGED_OUTPUTS = {"aws": "eks_managed_node_groups", "gcp": "gke_node_pools", "azure": "aks_node_pools"}

#: What the root takes and passes to every module of one provider: on Azure the AKS cluster's id, which each module's
#: ``aks_node_pools`` output carries as ``kubernetes_cluster_id`` (newuser74 item 4: a tree of several Azure workloads
#: merged no AKS node pools and had no way to set the cluster, so every pool's cluster id stayed null).
ROOT_PASSED_VARIABLES = {"azure": ("aks_cluster_id",)}


def render_shared(parts: Sequence[tuple[str, Sequence[GpuPoolStack], str | None]]) -> dict[str, str]:
    """The files of a tree of several workloads that belong to none of them.

    ``parts``: (workload name, its pools' GPU-stack needs, the provider of its Terraform or None), in name order.
    The merged ``cluster/`` layer and a root ``terraform/main.tf`` with one module per workload, whose outputs also
    merge the modules' node groups or node pools (:data:`ROOT_MERGED_OUTPUTS`; one tree is one provider's cluster, and
    its pool names are unique across workloads, so the keys never collide), and
    the variables it passes to every module (:data:`ROOT_PASSED_VARIABLES`).
    """
    files = render_cluster([stack for _, stacks, _ in parts for stack in stacks])
    with_terraform = [name for name, _, provider in parts if provider]
    if with_terraform:
        width = max(len(name) + 2 for name in with_terraform)  # quoted keys, aligned as terraform fmt does
        providers = {provider for _, _, provider in parts if provider}
        provider = providers.pop() if len(providers) == 1 else None
        merged = ROOT_MERGED_OUTPUTS.get(provider) if provider else None
        passed = ROOT_PASSED_VARIABLES.get(provider, ()) if provider else ()
        files["terraform/main.tf"] = render_template(
            "terraform/root.tf.j2", workloads=with_terraform, width=width, merged=merged, passed=passed
        )
    return files
