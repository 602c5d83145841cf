"""GPU sharing (``kubernetes.gpu_sharing``) at deployment time: pool labels, findings and the GPU stack's configs.

The planner sizes each replica of one GPU against its share (:mod:`generator.sizing.gpu_share`) and packs the shares
onto GPUs; a pool whose GPUs it shares carries ``shares_per_gpu``. Here the cluster is told to advertise them. A
deployment's own ``gpu_sharing`` overrides the workload's (:func:`~generator.workload.sharing.deployment_sharing`);
the planner never packs deployments of different sharing into one pool, so each pool has one sharing
(:func:`pool_sharing`), read from its deployments.
GKE takes it natively (:mod:`generator.render.gke`); everywhere else the GPU Operator does: time-slicing and MPS
through the pool's device-plugin config (``sharing.timeSlicing`` / ``sharing.mps`` replicas), MIG through the MIG manager, which
partitions every node labelled ``nvidia.com/mig.config`` with the matching entry of a mig-parted config.
"""

from __future__ import annotations

from typing import Any

from generator.catalog import gpus, mig_profile_specs, software
from generator.errors import InputError
from generator.planner.batch_job import pool_month_usd
from generator.planner.plan import Finding, Plan, Pool, sorted_findings
from generator.planner.spread import spread_services
from generator.render.env import to_yaml
from generator.render.whole_gpu_reasons import whole_gpu_reasons
from generator.workload.aks_mig import aks_gpu_instance
from generator.workload.loader import format_path
from generator.workload.models import GpuSharing, Workload
from generator.workload.sharing import (
    SHARING_OUTPUT,
    WHERE,
    aks_native_mig,
    deployment_sharing,
    excluded_gpus,
    mig_problem,
    sharing_gpus,
    sharing_text,
    sharing_where,
)

MIG_CONFIG_LABEL = "nvidia.com/mig.config"
#: The GPU Operator deploys its MIG manager to a MIG-capable node unless the node carries this label already: "false"
#: keeps it off a node whose GPUs AKS partitions (NVIDIA/gpu-operator controllers/state_manager.go, addGPUStateLabels
#: honours a label already there), which would otherwise set them to its default, all-disabled.
MIG_MANAGER_DEPLOY_LABEL = "nvidia.com/gpu.deploy.mig-manager"
MIG_DISABLED = "all-disabled"
#: The extended resource the device plugin advertises for whole GPUs and, under the single MIG strategy, MIG devices.
GPU_RESOURCE = "nvidia.com/gpu"
#: Device-plugin config sections of each sharing strategy (config v1 ``sharing.timeSlicing`` / ``sharing.mps``).
PLUGIN_SHARING = {"time-slicing": "timeSlicing", "mps": "mps"}


def mig_config_name(gpu_id: str, profile: str) -> str:
    """The mig-parted config (and node-label value) that splits every GPU of a node into ``profile`` instances."""
    return f"{gpu_id}-{profile}"


def mig_instances(gpu_id: str, profile: str) -> int:
    """How many ``profile`` instances fit one GPU: the MIG user guide's Number of Instances Available (the catalog's)."""
    return mig_profile_specs()[gpu_id][profile].instances


def advertised_per_gpu(pool: Pool, sharing: GpuSharing | None) -> int:
    """How many GPU resources the device plugin advertises per physical GPU of ``pool``.

    Time-slicing or MPS replicas, or MIG instances under the single strategy; 1 without sharing and on GPUs the
    NVIDIA stack does not manage.
    """
    if sharing is None or gpus()[pool.node.gpu_id].vendor != "nvidia":
        return 1
    if sharing.strategy == "mig":
        return mig_instances(pool.node.gpu_id, str(sharing.mig_profile))
    return sharing.replicas_per_gpu or 1  # the schema requires it for time-slicing and MPS


def pool_shares(plan: Plan, workload: Workload) -> dict[str, GpuSharing | None]:
    """The sharing each pool's GPUs get, by pool name: any only where the planner packed shares of GPUs onto it.

    That is inference replicas of TP1 x PP1 sized against their share: a pod of several shared GPUs could be handed
    slices of one GPU, a training job plans whole GPUs with their links (newuser16 H1; review 13 item 3: MIG split a
    LoRA job's GPUs), and a replica too big for its share keeps whole GPUs (newuser40 item 3).
    """
    return {pool.name: pool_sharing(workload, pool) for pool in plan.pools}


def pool_sharing(workload: Workload, pool: Pool) -> GpuSharing | None:
    """The sharing of ``pool``'s GPUs: its deployments' (one for all: the planner packs each sharing apart); None: whole."""
    if not pool.shares_per_gpu:
        return None
    by_name = {d.name: d for d in workload.deployments}
    return next(
        (deployment_sharing(workload, by_name[name]) for name in pool.deployments if name in by_name),
        workload.kubernetes.gpu_sharing,
    )


def pool_sharing_fields(plan: Plan, workload: Workload) -> dict[str, str]:
    """Where each shared pool's sharing is asked, by pool name: its first deployment's field.

    ``deployments[2].gpu_sharing`` where the deployment gives its own, else ``kubernetes.gpu_sharing``.
    """
    index = {d.name: i for i, d in enumerate(workload.deployments)}
    return {
        pool.name: format_path(sharing_where(workload, next(index[n] for n in pool.deployments if n in index)))
        for pool in plan.pools
        if pool.shares_per_gpu and any(n in index for n in pool.deployments)
    }


def requested_sharings(workload: Workload) -> dict[GpuSharing, tuple[str | int, ...]]:
    """Each sharing the workload asks for, with the field that first asks it (the workload's first), in file order."""
    asked: dict[GpuSharing, tuple[str | int, ...]] = {}
    if workload.kubernetes.gpu_sharing is not None:
        asked[workload.kubernetes.gpu_sharing] = WHERE
    for index, dep in enumerate(workload.deployments):
        sharing = deployment_sharing(workload, dep)
        if sharing is not None:
            asked.setdefault(sharing, sharing_where(workload, index))
    return asked


def whole_gpu_pools(plan: Plan) -> set[str]:
    """Pools the planner did not share (a pod of more than one GPU, a training job, a replica too big for its share)."""
    return {pool.name for pool in plan.pools if not pool.shares_per_gpu}


def device_plugin_config(sharing: GpuSharing | None) -> str:
    """Device-plugin config (format v1) of a pool: whole GPUs, time-sliced or MPS replicas, or single-strategy MIG."""
    config: dict[str, Any] = {"version": str(software("nvidia-device-plugin")["config_version"])}
    if sharing is not None and sharing.strategy == "mig":
        config["flags"] = {"migStrategy": "single"}
        return to_yaml(config)
    config["flags"] = {"migStrategy": "none"}
    if sharing is not None:
        resource = {"name": GPU_RESOURCE, "replicas": sharing.replicas_per_gpu}
        shared: dict[str, Any] = {"resources": [resource]}
        if sharing.strategy == "time-slicing":  # a pod asking for two slices could get two of one GPU: refuse it
            shared["failRequestsGreaterThanOne"] = True
        config["sharing"] = {PLUGIN_SHARING[sharing.strategy]: shared}
    return to_yaml(config)


def _with_label(pool: Pool, key: str, value: str) -> Pool:
    return pool._replace(labels=tuple(sorted({**dict(pool.labels), key: value}.items())))


def apply_sharing(plan: Plan, workload: Workload, *, single_host: bool = False) -> Plan:
    """The plan as rendered with GPU sharing: shared pools' ``gpu_sharing`` and MIG-config labels, and findings.

    Each pool whose GPUs are shared records its sharing (:func:`sharing_text`); pools the GPU Operator partitions get
    the MIG-config label.

    The planner sized the shares; a MIG profile the chosen GPU lacks is refused here too.
    ``single_host``: one machine on its own, which gets no GPU stack (so no sharing config either).
    """
    asked = requested_sharings(workload)
    if not asked or SHARING_OUTPUT not in workload.outputs:  # nothing configures it: planned on whole GPUs
        return plan
    pools = []
    for pool in plan.pools:
        gpu = pool.node.gpu_id
        sharing = pool_sharing(workload, pool)
        if gpus()[gpu].vendor != "nvidia" or sharing is None:
            pools.append(pool)
            continue
        shared = pool._replace(gpu_sharing=sharing_text(sharing))
        if sharing.strategy == "mig":
            problem = mig_problem(gpu, str(sharing.mig_profile))
            if problem is not None:
                raise InputError(f"{format_path(asked[sharing])}: pool '{pool.name}': {problem}")
            if plan.provider == "azure" and aks_native_mig(workload, sharing):  # AKS partitions it: Terraform's pool
                pools.append(_with_label(shared, MIG_MANAGER_DEPLOY_LABEL, "false"))
                continue
            if plan.provider != "gcp":
                pools.append(_with_label(shared, MIG_CONFIG_LABEL, mig_config_name(gpu, str(sharing.mig_profile))))
                continue
        pools.append(shared)
    applied = plan._replace(pools=tuple(pools))
    said: list[Finding] = []
    several = len(asked) > 1 or any(d.gpu_sharing is not None for d in workload.deployments)
    for sharing, where in asked.items():
        # the pools of the deployments under this sharing: those sharing by it, and those of them keeping whole GPUs
        names = {d.name for d in workload.deployments if deployment_sharing(workload, d) == sharing}
        excluded = _excluded_gpus_finding(workload, sharing, where, frozenset(names) if several else None)
        said += [excluded] if excluded else []
        own = [p for p in pools if (pool_sharing(workload, p) or sharing) == sharing and names & set(p.deployments)]
        if not own:
            continue
        said += sharing_findings(
            applied._replace(pools=tuple(own)),
            sharing,
            single_host=single_host and not said,
            aks_native=aks_native_mig(workload, sharing),
            field=format_path(where),
            names=frozenset(names) if several else None,
            spread=spread_services(workload),
        )
    said += common_profile_findings(applied, workload)
    return applied._replace(findings=sorted_findings([*plan.findings, *said]))


def _dominates(gpu_id: str, big: str, small: str) -> bool:
    """Whether MIG instance ``big`` of ``gpu_id`` has at least the SMs, memory and memory bandwidth of ``small``."""
    specs = mig_profile_specs()[gpu_id]
    a, b = specs[big], specs[small]
    gib = a.memory_gib is None or b.memory_gib is None or a.memory_gib >= b.memory_gib
    return a.sm_fraction >= b.sm_fraction and a.memory_fraction >= b.memory_fraction and gib


def common_profile_findings(plan: Plan, workload: Workload) -> list[Finding]:
    """Pools of one server kind apart only for their MIG profiles, and what one common profile would save (newuser69 item 5).

    A pool has one MIG profile (an AKS node pool one ``gpu_instance``), so services asking different profiles never
    share a GPU. Where one profile asked has at least the SMs, memory and bandwidth of every other (:func:`_dominates`),
    no service needs more replicas in it than in its own, so the replicas planned, all in it, bound the GPUs: a
    figure from the plan, no re-plan (fewer replicas in the larger instances could save more, which is not counted).
    Only pools of services on their own servers: not spread over nodes (``min_replicas``, N+1), no owned servers,
    every pool priced alike per node.
    """
    spread = spread_services(workload)
    by_name = {d.name: d for d in plan.deployments}
    groups: dict[tuple[str, str], list[tuple[Pool, str, int]]] = {}
    for pool in plan.pools:
        sharing = pool_sharing(workload, pool)
        if sharing is None or sharing.strategy != "mig" or pool.owned_nodes or pool.usd_per_hour is None:
            continue
        names = [n for n in pool.deployments if n in by_name]
        if not names or any(n in spread or by_name[n].kind != "inference" for n in names):
            continue
        replicas = sum((by_name[n].in_pool(pool.name) or (1, 1, 0, 0))[2] for n in names)
        groups.setdefault((pool.node.platform_id, pool.node.gpu_id), []).append((pool, str(sharing.mig_profile), replicas))
    found = []
    for (_, gpu_id), members in sorted(groups.items()):
        profiles = sorted({profile for _, profile, _ in members})
        if len(profiles) < 2:
            continue
        common = next((p for p in profiles if all(_dominates(gpu_id, p, q) for q in profiles)), None)
        pools = [pool for pool, _, _ in members]
        nodes_now = sum(pool.nodes for pool in pools)
        per_node = {round(float(pool.usd_per_hour or 0) / pool.nodes, 6) for pool in pools}
        if common is None or len(per_node) != 1:
            continue
        replicas = sum(r for _, _, r in members)
        gpus_needed = -(-replicas // mig_instances(gpu_id, common))
        nodes = -(-gpus_needed // pools[0].node.gpus)
        if nodes >= nodes_now:
            continue
        month = sum(pool_month_usd(pool) or 0.0 for pool in pools) * (nodes_now - nodes) / nodes_now
        each = "; ".join(
            f"{', '.join(n for n in pool.deployments if n in by_name)} at {profile} ({pool.name}, {pool.nodes} node(s))"
            for pool, profile, _ in members
        )
        first = next(n for pool in pools for n in pool.deployments if n in by_name)
        index = next(i for i, d in enumerate(workload.deployments) if d.name == first)
        found.append(
            Finding(
                "info",
                "gpu-sharing-common-profile",
                f"services on {pools[0].node.instance_type} ({gpu_id}) ask different MIG profiles, so none shares a GPU "
                f"with another (a pool has one profile; an AKS node pool one gpu_instance): {each}, {nodes_now} node(s). "
                f"Under {common} for all of them, an instance with at least the SMs, memory and bandwidth of each "
                f"profile asked, no service needs more replicas than now: their {replicas} replica(s) fit "
                f"{gpus_needed} GPU(s) of {mig_instances(gpu_id, common)} {common} instances, {nodes} node(s), "
                f"${month:,.0f}/month less at the peak (give each gpu_sharing: {{strategy: mig, mig_profile: {common}}}); "
                "fewer replicas in the larger instances could save more, which specgen does not plan: it plans the "
                "profile each deployment asks",
                f"{format_path(sharing_where(workload, index))}.mig_profile",
            )
        )
    return found


def _excluded_gpus_finding(
    workload: Workload, sharing: GpuSharing, where: tuple[str | int, ...], names: frozenset[str] | None
) -> Finding | None:
    """The allowed GPUs the sharing asked at ``where`` rules out for its services (newuser69 item 8), or None.

    The workload's sharing and a deployment's follow one rule (:func:`~generator.workload.sharing.excluded_gpus`):
    refused only where no GPU its services may use takes it, else planned on those that do, and these are said.
    """
    excluded = excluded_gpus(workload, sharing, where)
    if not excluded:
        return None
    out = {gpu for gpu, _ in excluded}
    takers = sorted({gpu for _, gpu in sharing_gpus(workload, where) if gpu not in out})
    for_whom = "" if names is None else f" ({', '.join(sorted(names))})"
    field = format_path(where)
    return Finding(
        "info",
        "gpu-sharing-excluded-gpus",
        f"{sharing_text(sharing)} rules out {', '.join(out_id for out_id, _ in excluded)} for the services under it"
        f"{for_whom}: {'; '.join(why for _, why in excluded)}. Those services are planned only on {', '.join(takers)}, "
        "even where a replica keeps whole GPUs; a replica pinned wider than one GPU (parallelism tp or pp above 1), a "
        "training job and a deployment under no sharing or another (its own gpu_sharing) may take every GPU allowed",
        f"{field}.mig_profile" if sharing.strategy == "mig" else f"{field}.strategy",
    )


def aks_mig_pools(plan: Plan) -> list[Pool]:
    """The pools AKS partitions with a node pool's GPU instance profile (rendered in Terraform, not by Karpenter)."""
    if plan.provider != "azure":
        return []
    return [pool for pool in plan.pools if dict(pool.labels).get(MIG_MANAGER_DEPLOY_LABEL) == "false"]


def sharing_findings(
    plan: Plan,
    sharing: GpuSharing,
    *,
    single_host: bool = False,
    aks_native: bool = False,
    field: str = "kubernetes.gpu_sharing",
    names: frozenset[str] | None = None,
    spread: frozenset[str] = frozenset(),
) -> list[Finding]:
    """What the user must know about the sharing they asked for (``aks_native``: AKS node pools partition the GPUs).

    ``plan``: its pools of the deployments under ``sharing``; ``field``: the field that asks it; ``names``: where
    deployments share GPUs differently, those under it (said, and the only ones a whole-GPU pool's reasons name);
    ``spread``: the services ``min_replicas`` spreads over nodes (what a whole-GPU pool needs without one of them).
    """
    for_whom = "" if names is None else f" for {', '.join(sorted(names))}"
    if sharing.strategy == "mig":
        how = f"MIG: every GPU split into {sharing.mig_profile} instances, each pod gets one instance"
    else:
        how = f"{sharing.strategy}: each GPU advertised as {sharing.replicas_per_gpu} GPUs, pods share its memory and compute"
    whole = sorted(whole_gpu_pools(plan))
    if whole and len(whole) == len(plan.pools):  # fuzz32 item 13: no pool shares, so nothing is configured or to do
        asked = Finding(
            "info",
            "gpu-sharing",
            f"GPU sharing asked ({sharing_text(sharing)}){for_whom} but no pool shares its GPUs, so none is configured: "
            "every pool keeps whole GPUs (gpu-sharing-whole-gpus)",
            field,
        )
        return [asked, _whole_gpus_finding(plan, whole, sharing, field, names, spread)]
    findings = [
        Finding(
            "info",
            "gpu-sharing",
            f"GPU sharing configured ({how}){for_whom}; each replica of one GPU is sized against its share (memory; SMs "
            "and memory bandwidth: the MIG instance's slices, or 1/replicas_per_gpu each with every replica at full load) and "
            "the shares are packed onto GPUs; a replica that does not fit its share keeps whole GPUs (gpu-share-too-small)",
            field,
        )
    ]
    if single_host:
        findings.append(
            Finding(
                "warning",
                "gpu-sharing-single-host",
                "A single host gets no GPU stack, so no sharing config is rendered for it: give its NVIDIA device "
                "plugin a config with sharing.timeSlicing or sharing.mps replicas, or partition its GPUs with MIG yourself",
                field,
            )
        )
    if whole:
        findings.append(_whole_gpus_finding(plan, whole, sharing, field, names, spread))
    if sharing.strategy == "mig" and plan.provider == "azure" and aks_native:
        findings.append(_aks_native_finding(plan, sharing, field))
    elif sharing.strategy == "mig" and plan.provider == "azure":
        findings.append(
            Finding(
                "warning",
                "gpu-sharing-aks-mig",
                "Karpenter for Azure (AKSNodeClass, NodePool) has no MIG field: the GPU Operator's MIG manager partitions "
                f"the nodes from their {MIG_CONFIG_LABEL} label instead. AKS's native MIG is a node pool's "
                "gpuInstanceProfile (MIG1g..MIG7g, azurerm gpu_instance), which specgen renders as AKS node pools in "
                "terraform/aks-node-pools.tf where the workload's outputs include terraform",
                f"{field}.mig_profile",
            )
        )
    return findings


def _aks_native_finding(plan: Plan, sharing: GpuSharing, field: str) -> Finding:
    """The MIG pools AKS partitions: where they are rendered, what AKS does, and what cannot change in place."""
    said = [
        f"{pool.name} ({pool.node.instance_type}, gpu_instance {aks_gpu_instance(pool.node.gpu_id, str(sharing.mig_profile))})"
        for pool in aks_mig_pools(plan)
    ]
    return Finding(
        "info",
        "gpu-sharing-aks-mig",
        f"AKS partitions the GPUs of {'; '.join(said)} itself: they are AKS node pools with a GPU instance profile "
        "(azurerm_kubernetes_cluster_node_pool arguments in terraform/aks-node-pools.tf), not Karpenter NodePools, "
        "which have no MIG field. Every GPU is split into "
        f"{sharing.mig_profile} instances at the node's boot; the GPU Operator's device plugin advertises each as "
        f"{GPU_RESOURCE} (single strategy, the pool's device-plugin config) and its MIG manager is kept off them "
        f"({MIG_MANAGER_DEPLOY_LABEL}=false). AKS cannot change a pool's profile: another mig_profile replaces the "
        "node pool (a new name), and MIG node pools do not run Azure Linux (os_sku Ubuntu)",
        f"{field}.mig_profile",
    )


def _whole_gpus_finding(
    plan: Plan, whole: list[str], sharing: GpuSharing, field: str, names: frozenset[str] | None, spread: frozenset[str]
) -> Finding:
    """The pools that keep whole GPUs under the sharing asked, and why each does (:mod:`~.whole_gpu_reasons`)."""
    pools = {pool.name: pool for pool in plan.pools}
    why = ". ".join(f"In {name}, {'; '.join(whole_gpu_reasons(plan, pools[name], sharing, names, spread))}" for name in whole)
    return Finding(
        "info",
        "gpu-sharing-whole-gpus",
        f"pool(s) {', '.join(whole)} keep whole GPUs (no {sharing.strategy}). {why}",
        field,
    )


def mig_parted_config(names: list[str]) -> str:
    """mig-parted config (v1, the MIG manager's ``config.yaml``): MIG off, plus one all-devices entry per name."""
    configs: dict[str, Any] = {MIG_DISABLED: [{"devices": "all", "mig-enabled": False}]}
    for name in names:
        gpu_id, _, profile = name.rpartition("-")
        configs[name] = [{"devices": "all", "mig-enabled": True, "mig-devices": {profile: mig_instances(gpu_id, profile)}}]
    return to_yaml({"version": "v1", "mig-configs": configs})
