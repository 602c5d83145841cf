"""The cluster findings: the GPU taint, a single host as its own cluster, the device plugin and AMD stack advice."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from generator import catalog
from generator.catalog.records import GpuSpec
from generator.planner.driver_series import DRIVER_SERIES, ROCM_INSTALL_GUIDE, ROCM_UBUNTU_RELEASES
from generator.planner.plan import Finding, Level, Pool
from generator.planner.spot import AKS_SPOT_TAINT, AKS_SPOT_TAINT_TEXT
from generator.workload.models import Workload

if TYPE_CHECKING:
    pass


#: A vendor's name for its Kubernetes device plugin, as the single-host advice names it.
DEVICE_PLUGIN = {
    "nvidia": "the NVIDIA device plugin",
    "amd": "the AMD GPU device plugin",
    "intel": "the Intel Gaudi device plugin",
}


#: The co-location group of inference replicas in shares of GPUs, followed by how they share them.
SHARED_GROUP = "inference-shared"


#: What a pool group's kind ends in for spot capacity (``capacity_type: spot``): a node group of its own.
SPOT_GROUP = " spot"


def gpu_taint(gpu: GpuSpec) -> tuple[str, str, str]:
    """The taint that keeps pods without a GPU request off a GPU node: its device plugin's resource."""
    return (gpu.device_resource, "present", "NoSchedule")


def own_cluster(wl: Workload, pools: Sequence[Pool]) -> bool:
    """A fleet of one bare-metal host that joins no cluster: its own cluster, for which no Kubernetes output is rendered.

    One host whose workload names the cluster it joins, or joins it by Cluster API, is a node of that cluster
    (:attr:`Workload.joins_cluster`), whether it is rendered alone or with other workloads.
    """
    return wl.hardware.provider == "baremetal" and sum(p.hosts for p in pools) == 1 and not wl.joins_cluster


def single_host_findings(wl: Workload, pools: list[Pool] | tuple[Pool, ...]) -> list[Finding]:
    """Why a single bare-metal host gets no Kubernetes output although the workload asks for it."""
    if "kubernetes" not in wl.outputs or not own_cluster(wl, pools):
        return []
    plugins = sorted({DEVICE_PLUGIN[catalog.gpus()[p.node.gpu_id].vendor] for p in pools})
    message = (
        "One host is its own cluster: no kubeadm join file and no GPU Operator are rendered for it "
        f"(Ansible installs the driver; a single-node Kubernetes such as k3s needs only {' and '.join(plugins)})"
    )
    return [Finding("info", "kubernetes-single-host", message, "outputs")]


def unrated_findings(wl: Workload) -> list[Finding]:
    """Allowed GPUs the search skipped because no tensor rate of theirs is published (their speed cannot be estimated)."""
    out = []
    for gpu_id in wl.hardware.gpus or ():
        gpu = catalog.gpus().get(gpu_id.lower())
        if gpu is not None and (why := gpu.unrated("bf16")) is not None:  # named by value: a reordered list keeps it
            out.append(Finding("warning", "gpu-not-rated", f"skipped: {why}", f"hardware.gpus[={gpu_id}]"))
    return out


#: AMD's GPU Operator: its Kernel Module Management operator builds and loads the amdgpu driver on each node, and it runs
#: the device plugin and the node labeller. A cloud's GPU node runs the provider's node image, which no ROCm install guide
#: applies to; the AKSNodeClass's ``gpu.mode: None`` is, in its CRD's words, for "managing GPU drivers via a GPU Operator
#: or other external mechanism" (shared/crds/karpenter-azure/karpenter.azure.com_aksnodeclasses.yaml; newuser77 item 1).
AMD_GPU_OPERATOR = "https://github.com/ROCm/gpu-operator/blob/21575c33014500c81d56c7b4379e60d006cd473d/docs/overview.md"


#: The AMD device plugin as shipped (its DaemonSet, and its Helm chart's default ``tolerations`` value) tolerates only
#: ``CriticalAddonsOnly``: a pool tainted for its GPUs must add a toleration or the plugin never runs there.
AMD_DEVICE_PLUGIN_TOLERATIONS_SOURCES = (
    "https://github.com/ROCm/k8s-device-plugin/blob/037495778be99438cf9e4e99353cb85172a91ee9/k8s-ds-amdgpu-dp.yaml",
    "https://github.com/ROCm/k8s-device-plugin/blob/0747facd8fc170e8f73f199fe55c28c817d3ea92/helm/amd-gpu/values.yaml",
)


def device_plugin_findings(wl: Workload, pools: list[Pool] | tuple[Pool, ...]) -> list[Finding]:
    """Pools whose GPUs the rendered NVIDIA GPU stack (the GPU Operator and its device plugin) does not serve.

    A bare-metal AMD pool of a cluster: an info naming the rendered ROCm device plugin (:func:`renders_amd_plugin`).
    Any other pool of another vendor: a warning that its device plugin is not rendered; an info for one bare-metal
    host, for which no Kubernetes is rendered (``kubernetes-single-host``), so no pod waits.
    """
    if "kubernetes" not in wl.outputs:
        return []
    single_host = own_cluster(wl, pools)
    level: Level = "info" if single_host else "warning"
    out = []
    for pool in pools:
        gpu = catalog.gpus()[pool.node.gpu_id]
        if renders_amd_plugin(pool) and not single_host:
            out.append(_amd_plugin_rendered(wl, pool.name, gpu))
        elif gpu.vendor != "nvidia":
            other = "install it in the cluster, or the pool's pods stay pending"
            advice = _amd_stack_advice(wl, gpu, spot=pool.spot) if gpu.vendor == "amd" else other
            out.append(
                Finding(
                    level,
                    "device-plugin-not-rendered",
                    f"pool {pool.name}: its GPUs are advertised as {gpu.device_resource} by {DEVICE_PLUGIN[gpu.vendor]}, "
                    f"which specgen does not render (it renders NVIDIA's GPU stack only): {advice}",
                    "outputs",
                )
            )
    return out


#: Where a bare-metal cluster's AMD pools get their device plugin: ROCm's ``amd-gpu`` Helm chart's values (newuser103).
AMD_DEVICE_PLUGIN_VALUES = "cluster/amd-gpu/values.yaml"
#: Its chart's software record (chart, version, repository, image; generator/catalog/software.json).
AMD_DEVICE_PLUGIN_RECORD = "rocm-k8s-device-plugin"


def renders_amd_plugin(pool: Pool) -> bool:
    """Whether a cluster's render installs ROCm's device plugin for ``pool``: an AMD pool on bare metal (newuser103).

    The findings, the rendered stacks (:func:`generator.render.gpu_stack.pool_stacks`) and the mirrors' coverage
    (:func:`generator.render.mirrors.amd_plugin_rendered`) all ask this one question.
    """
    return catalog.gpus()[pool.node.gpu_id].vendor == "amd" and pool.node.provider == "baremetal"


def _amd_plugin_rendered(wl: Workload, pool_name: str, gpu: GpuSpec) -> Finding:
    """A bare-metal AMD pool of a cluster: the rendered Helm values install its device plugin, tolerating its taint."""
    key, value, effect = gpu_taint(gpu)
    return Finding(
        "info",
        "amd-device-plugin",
        f"pool {pool_name}: its GPUs are advertised as {gpu.device_resource} by {DEVICE_PLUGIN['amd']}, which "
        f"{AMD_DEVICE_PLUGIN_VALUES} installs (ROCm's amd-gpu Helm chart, the command in its header) with a toleration "
        f"for the pool's taint {key}={value}:{effect}, which the chart's own tolerations (CriticalAddonsOnly alone) "
        f"lack; {_amd_driver_words(wl)}",
        "outputs",
    )


def _amd_driver_words(wl: Workload) -> str:
    """Who installs an AMD pool's amdgpu driver and ROCm: Ansible on bare metal, else what the user must install."""
    provider = wl.hardware.provider
    series = wl.provisioning.distro_series
    if provider == "baremetal" and "ansible" in wl.outputs and series in ROCM_UBUNTU_RELEASES:
        driver = "Ansible installs the amdgpu driver and ROCm (group_vars specgen_amdgpu_driver)"
    elif provider == "baremetal" and "ansible" in wl.outputs:  # review 17 item L4; newuser57 item 6: its own warning
        driver = (
            f"the hosts' Ubuntu {series} is not a release ROCm's guide covers ({', '.join(ROCM_UBUNTU_RELEASES)}), so "
            f"nothing rendered installs the amdgpu driver and ROCm (warning {DRIVER_SERIES}): install them yourself "
            f"({ROCM_INSTALL_GUIDE})"
        )
    elif provider == "baremetal":
        driver = (
            "the nodes also need the amdgpu driver and ROCm, which nothing rendered installs: install them as AMD's "
            f"guide says ({ROCM_INSTALL_GUIDE})"
        )
    else:  # a cloud's node image: no host install guide applies to it (newuser77 item 1)
        pool = "the AKS node pool's gpu_driver and " if "terraform" in wl.outputs else ""
        where = f" ({pool}the AKSNodeClass's gpu.mode {'are' if pool else 'is'} None)" if provider == "azure" else ""
        driver = (
            f"the nodes also need the amdgpu driver, which nothing rendered installs{where}: install AMD's GPU Operator, "
            "whose Kernel Module Management operator builds and loads the amdgpu driver on each node and which runs "
            f"the device plugin and the node labeller ({AMD_GPU_OPERATOR})"
        )
    return driver


def _amd_stack_advice(wl: Workload, gpu: GpuSpec, *, spot: bool = False) -> str:
    """What an AMD pool needs besides the rendered output: the device plugin tolerating the pool's taint(s), and ROCm."""
    key, value, effect = gpu_taint(gpu)
    driver = _amd_driver_words(wl)
    taint = f"a toleration for the pool's taint {key}={value}:{effect} ({{key: {key}, operator: Exists, effect: {effect}}}"
    if spot and wl.hardware.provider == "azure":  # AKS taints Spot nodes too (review30 item 1)
        taint = (
            f"tolerations for the pool's taint {key}={value}:{effect} and AKS's Spot taint {AKS_SPOT_TAINT_TEXT} "
            f"({{key: {key}, operator: Exists, effect: {effect}}} and {{key: {AKS_SPOT_TAINT[0]}, "
            f"operator: Equal, value: {AKS_SPOT_TAINT[1]}, effect: {AKS_SPOT_TAINT[2]}}}"
        )
    return (
        f"install it with {taint}; its stock DaemonSet and its Helm chart's tolerations "
        f"value tolerate only CriticalAddonsOnly: {AMD_DEVICE_PLUGIN_TOLERATIONS_SOURCES[0]}, "
        f"{AMD_DEVICE_PLUGIN_TOLERATIONS_SOURCES[1]}), or it never runs on these nodes and the pool's pods stay "
        f"pending; {driver}"
    )
