"""The cluster-wide GPU stack, shared by every workload rendered into one tree (``cluster/``).

One source of truth per pool (:class:`GpuPoolStack`): who owns the driver (Ansible, the GPU Operator or
the cloud's node image), which version, and the pool's device-plugin config key. From the pools of all
workloads this renders the GPU Operator's Helm ``values.yaml``, ONE device-plugin ConfigMap holding every
pool's key, and an ``NVIDIADriver`` per pool when operator-managed pools need different drivers. There is
no bare ``ClusterPolicy``: the Helm chart creates and owns it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from generator.catalog import gpus, software
from generator.catalog.cloud_gpu_stack import CLOUD_GPU_STACK
from generator.errors import InputError
from generator.named_tuple import NamedTuple
from generator.planner.cluster_findings import renders_amd_plugin
from generator.planner.plan import Plan, Pool
from generator.planner.spot import AKS_SPOT_TAINT
from generator.render.amd_device_plugin import render_amd_device_plugin
from generator.render.efa_plugin import efa_interfaces, render_efa_plugin
from generator.render.env import to_yaml
from generator.render.gpu_sharing import (
    MIG_CONFIG_LABEL,
    MIG_DISABLED,
    MIG_MANAGER_DEPLOY_LABEL,
    device_plugin_config,
    mig_parted_config,
)
from generator.render.kube_objects import HEADER, dns_name, kustomize_directory, namespace_object
from generator.render.mirrors import ClusterMirror, driver_images, gpu_operator_values, helm_install_lines, merge_values
from generator.render.yaml_emit import Block
from generator.workload.models import GpuSharing

NAMESPACE = "gpu-operator"
DEVICE_PLUGIN_CONFIG = "specgen-device-plugin"
CONFIG_LABEL = "nvidia.com/device-plugin.config"
DEFAULT_CONFIG_KEY = "default"
MIG_PARTED_CONFIG = "specgen-mig-parted"
VALUES_PATH = "cluster/gpu-operator/values.yaml"
#: The GPU Operator chart's default ``node-feature-discovery.worker.tolerations`` (kept where specgen sets the list).
NFD_WORKER_TOLERATIONS = (
    {"key": "node-role.kubernetes.io/master", "operator": "Equal", "value": "", "effect": "NoSchedule"},
    {"key": "node-role.kubernetes.io/control-plane", "operator": "Equal", "value": "", "effect": "NoSchedule"},
)
MANIFESTS_DIR = "cluster/gpu-operator/manifests"

DriverOwner = Literal["ansible", "operator", "node-image"]


def default_driver_version() -> str:
    """The catalog's pinned NVIDIA driver (the schema documents the same default; a test checks it)."""
    return str(software("nvidia-driver")["version"])


def driver_version(override: str | None) -> str:
    """The driver version for every consumer: the workload's override, else the catalog's pin."""
    return override or default_driver_version()


def whole_gpu_config() -> str:
    """Device-plugin config (format v1): whole GPUs, no MIG, no sharing."""
    return to_yaml({"version": str(software("nvidia-device-plugin")["config_version"]), "flags": {"migStrategy": "none"}})


class GpuPoolStack(NamedTuple):
    """What the cluster's GPU stack must provide for one NVIDIA pool."""

    key: str  # device-plugin config key == the pool's nvidia.com/device-plugin.config label value
    workload: str
    provider: str
    driver_owner: DriverOwner
    driver_version: str | None  # None where the node image owns the driver
    rdma: bool
    device_plugin_config: str | None  # None where the provider runs its own device plugin (GKE: no operator at all)
    mig_config: str | None = None  # the MIG manager's config for the pool's nodes (their nvidia.com/mig.config label)
    #: The cloud partitions the pool's GPUs with MIG itself (an AKS node pool's GPU instance profile), not the MIG manager.
    cloud_mig: bool = False
    mirror: ClusterMirror | None = None  # the site's registry, pull secret and Helm repository (workload's mirrors)
    spot: bool = False  # the pool is spot capacity (on AKS its nodes carry the Spot taint, which the stack must tolerate)
    #: EFA interfaces a node gives its pods where the pool's GPUs talk across nodes over EFA (0 elsewhere): the tree
    #: renders the EFA device plugin for these pools' instance type (newuser76 item 1).
    efa: int = 0
    instance_type: str | None = None
    taints: tuple[tuple[str, str], ...] = ()  # the pool's node taints as (key, effect): the EFA plugin tolerates them
    #: The pool's GPU vendor: an ``amd`` pool on bare metal needs AMD's device plugin, not the GPU Operator (newuser103).
    vendor: str = "nvidia"


def driver_owner(provider: str, *, ansible_owns_driver: bool) -> DriverOwner:
    """Who installs the NVIDIA driver: a cloud's GPU node image, else Ansible when it is rendered, else the operator."""
    if provider != "baremetal":
        return "node-image"
    return "ansible" if ansible_owns_driver else "operator"


def pool_stacks(
    plan: Plan,
    *,
    ansible_owns_driver: bool,
    driver_override: str | None,
    shares: Mapping[str, GpuSharing | None] | None = None,
    mirror: ClusterMirror | None = None,
) -> list[GpuPoolStack]:
    """The GPU-stack needs of a plan's NVIDIA pools and bare-metal AMD pools (:func:`renders_amd_plugin`).

    ``shares``: each pool's GPU sharing, by name; ``mirror``: its mirrors.
    """
    table = gpus()
    shares = shares or {}
    stacks = []
    for pool in plan.pools:
        if renders_amd_plugin(pool):
            stacks.append(_amd_stack(plan, pool, mirror))
        if table[pool.node.gpu_id].vendor != "nvidia":
            continue
        owner = driver_owner(pool.node.provider, ansible_owns_driver=ansible_owns_driver)
        labels = dict(pool.labels)
        stacks.append(
            GpuPoolStack(
                key=labels.get(CONFIG_LABEL, dns_name(pool)),
                workload=plan.workload,
                provider=pool.node.provider,
                driver_owner=owner,
                driver_version=None if owner == "node-image" else driver_version(driver_override),
                rdma=owner == "operator" and any(n.role == "fabric" and n.gpudirect_rdma for n in pool.node.nics),
                device_plugin_config=(
                    None if pool.node.provider in CLOUD_GPU_STACK else device_plugin_config(shares.get(pool.name))
                ),
                mig_config=labels.get(MIG_CONFIG_LABEL),
                cloud_mig=labels.get(MIG_MANAGER_DEPLOY_LABEL) == "false",
                mirror=mirror,
                spot=pool.spot,
                efa=efa_interfaces(plan, pool),
                instance_type=pool.node.instance_type,
                taints=tuple((k, e) for k, _, e in pool.taints),
            )
        )
    return stacks


def _amd_stack(plan: Plan, pool: Pool, mirror: ClusterMirror | None) -> GpuPoolStack:
    """A bare-metal AMD pool's need: AMD's device plugin tolerating its taints (Ansible installs the driver)."""
    return GpuPoolStack(
        key=dns_name(pool),
        workload=plan.workload,
        provider=pool.node.provider,
        driver_owner="ansible",
        driver_version=None,
        rdma=False,
        device_plugin_config=None,
        mirror=mirror,
        taints=tuple((k, e) for k, _, e in pool.taints),
        vendor="amd",
    )


def merge_stacks(stacks: list[GpuPoolStack]) -> list[GpuPoolStack]:
    """The merge rule: one entry per config key; the same key from two workloads must mean the same thing."""
    merged: dict[str, GpuPoolStack] = {}
    for stack in stacks:
        seen = merged.get(stack.key)
        if seen is not None and (
            seen.driver_owner,
            seen.driver_version,
            seen.device_plugin_config,
            seen.rdma,
            seen.mig_config,
            seen.cloud_mig,
        ) != (
            stack.driver_owner,
            stack.driver_version,
            stack.device_plugin_config,
            stack.rdma,
            stack.mig_config,
            stack.cloud_mig,
        ):
            raise InputError(
                f"workloads '{seen.workload}' and '{stack.workload}' both define GPU pool '{stack.key}' differently; "
                "rename a deployment so their pools differ"
            )
        merged.setdefault(stack.key, stack)
    _one_mirror(stacks, "GPU Operator")  # one cluster pulls its GPU stack from one place (newuser36 item 7)
    providers = sorted({s.provider for s in merged.values()})
    if len(providers) > 1:
        raise InputError(f"workloads rendered into one tree share one cluster, but their pools run on {', '.join(providers)}")
    return [merged[key] for key in sorted(merged)]


def _one_mirror(stacks: list[GpuPoolStack], puller: str) -> None:
    """Refuses ``stacks`` of several workloads whose mirrors differ: the cluster's ``puller`` pulls from one place."""
    for stack in stacks[1:]:
        if stack.mirror != stacks[0].mirror:
            raise InputError(
                f"workloads '{stacks[0].workload}' and '{stack.workload}' share one cluster, whose {puller} pulls "
                f"from one registry, but their mirrors differ ({_mirror_words(stacks[0].mirror)} against "
                f"{_mirror_words(stack.mirror)}): give every file the same mirrors.container_registry, "
                "image_pull_secret and helm_repository"
            )


def _mirror_words(mirror: ClusterMirror | None) -> str:
    """A cluster mirror as a reader compares it: its registry, secret and Helm repository, or that it has none."""
    if mirror is None:
        return "none"
    return ", ".join(f"{name} {value or '(unset)'}" for name, value in zip(("registry", "secret", "Helm"), mirror, strict=True))


def helm_values(stacks: list[GpuPoolStack]) -> dict[str, Any]:
    """GPU Operator chart values for these pools (their images on the site's mirror, where it has one)."""
    operator_versions = sorted({str(s.driver_version) for s in stacks if s.driver_owner == "operator"})
    per_pool = len(operator_versions) > 1
    driver: dict[str, Any] = {
        "enabled": bool(operator_versions),
        "rdma": {"enabled": any(s.rdma for s in stacks)},
        "nvidiaDriverCRD": {"enabled": per_pool, "deployDefaultCR": not per_pool},
    }
    if len(operator_versions) == 1:
        driver["version"] = operator_versions[0]
    plugin = any(s.device_plugin_config is not None for s in stacks)
    image_owned = all(s.driver_owner == "node-image" for s in stacks)
    gpu_toleration = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    values: dict[str, Any] = {
        "operator": {"defaultRuntime": "containerd"},
        "daemonsets": {"tolerations": [gpu_toleration]},
        "driver": driver,
        "toolkit": {"enabled": not image_owned},
        "devicePlugin": {"enabled": plugin},
        "migManager": {"enabled": plugin},
        "mig": {"strategy": "none"},
        "gfd": {"enabled": True},
        "dcgmExporter": {"enabled": True},
        "nfd": {"enabled": True},
    }
    if any(s.mig_config or s.cloud_mig for s in stacks):  # GPU feature discovery's labels: one MIG device a GPU
        values["mig"]["strategy"] = "single"
    if any(s.mig_config for s in stacks):
        values["migManager"]["config"] = {"create": False, "name": MIG_PARTED_CONFIG, "default": MIG_DISABLED}
    if plugin:
        values["devicePlugin"]["config"] = {"create": False, "name": DEVICE_PLUGIN_CONFIG, "default": DEFAULT_CONFIG_KEY}
    if any(s.spot and s.provider == "azure" for s in stacks):  # AKS taints Spot nodes: the daemonsets and NFD tolerate it
        key, value, effect = AKS_SPOT_TAINT
        spot = {"key": key, "operator": "Equal", "value": value, "effect": effect}
        values["daemonsets"]["tolerations"].append(spot)
        # Helm replaces a list whole: the chart's own NFD worker tolerations, then the Spot taint's
        values["node-feature-discovery"] = {"worker": {"tolerations": [*NFD_WORKER_TOLERATIONS, gpu_toleration, spot]}}
    mirror = stacks[0].mirror if stacks else None
    return merge_values(values, gpu_operator_values(mirror)) if mirror is not None else values


def device_plugin_config_map(stacks: list[GpuPoolStack]) -> dict[str, Any]:
    """The one device-plugin ConfigMap: a ``default`` key plus every pool's key."""
    data = {DEFAULT_CONFIG_KEY: Block(whole_gpu_config())}
    data.update({s.key: Block(s.device_plugin_config) for s in stacks if s.device_plugin_config is not None})
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": DEVICE_PLUGIN_CONFIG, "namespace": NAMESPACE},
        "data": data,
    }


def nvidia_driver(stack: GpuPoolStack) -> dict[str, Any]:
    """``NVIDIADriver`` for one operator-managed pool (used when pools need different drivers)."""
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "NVIDIADriver",
        "metadata": {"name": stack.key},
        "spec": {
            "default": False,
            "driverType": "gpu",
            **driver_images(stack.mirror),
            "image": "driver",
            "version": str(stack.driver_version),
            "nodeSelector": {CONFIG_LABEL: stack.key},
            "rdma": {"enabled": stack.rdma},
        },
    }


def render_cluster(stacks: list[GpuPoolStack]) -> dict[str, str]:
    """``cluster/gpu-operator/``: Helm values and a kustomize directory with the Namespace, ConfigMap and drivers.

    Nothing for pools whose cloud runs the GPU stack (:data:`CLOUD_GPU_STACK`). Beside it, the AMD pools' device
    plugin values (:func:`amd_cluster_files`).
    """
    amd_files = amd_cluster_files(stacks)
    stacks = [s for s in merge_stacks([s for s in stacks if s.vendor == "nvidia"]) if s.provider not in CLOUD_GPU_STACK]
    if not stacks:
        return amd_files
    efa = [s for s in stacks if s.efa and s.instance_type]
    plugin = render_efa_plugin([str(s.instance_type) for s in efa], [t for s in efa for t in s.taints])
    values = helm_values(stacks)
    objects: list[dict[str, Any]] = [namespace_object(NAMESPACE)]
    if values["devicePlugin"]["enabled"]:
        objects.append(device_plugin_config_map(stacks))
    mig_configs = sorted({str(s.mig_config) for s in stacks if s.mig_config})
    if mig_configs:
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": MIG_PARTED_CONFIG, "namespace": NAMESPACE},
                "data": {"config.yaml": Block(mig_parted_config(mig_configs))},
            }
        )
    if values["driver"]["nvidiaDriverCRD"]["enabled"]:
        objects += [nvidia_driver(s) for s in stacks if s.driver_owner == "operator"]
    chart = software("nvidia-gpu-operator")["version"]
    lines = [
        f"# Helm values for the NVIDIA GPU Operator chart {chart}.",
        f"# kubectl apply -k {MANIFESTS_DIR.rpartition('/')[2]}/, then",
        *helm_install_lines(stacks[0].mirror, NAMESPACE),
        *_aks_driver_lines(stacks),
    ]
    usage = "\n".join(lines) + "\n"
    return {
        VALUES_PATH: usage + HEADER + to_yaml(values),
        **kustomize_directory(MANIFESTS_DIR, objects),
        **plugin,
        **amd_files,
    }


def amd_cluster_files(stacks: list[GpuPoolStack]) -> dict[str, str]:
    """``cluster/amd-gpu/values.yaml`` for the bare-metal AMD pools among ``stacks``; nothing where there are none."""
    amd = [s for s in stacks if s.vendor == "amd"]
    if not amd:
        return {}
    _one_mirror(amd, "AMD device plugin")  # one device plugin DaemonSet pulls its image from one place, as the operator does
    return render_amd_device_plugin([t for s in amd for t in s.taints], amd[0].mirror)


#: newuser83 item 5: on AKS the values turned the operator's driver and toolkit off with no word of why, while
#: Microsoft's page on the operator says to skip AKS's driver install for it; both ways are documented, and the header
#: says which one this tree takes.
AKS_DRIVER_LINES = (
    "# AKS installs the NVIDIA driver and container toolkit on these GPU nodes",
    "# (the AKS node pools' gpu_driver Install, the AKSNodeClass's gpu.mode",
    "# Driver), so the operator's driver and toolkit are off and it runs the",
    "# device plugin, GPU feature discovery and DCGM exporter beside them: the",
    "# operator on AKS's preinstalled driver and toolkit, as NVIDIA's page says:",
    "# https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/microsoft-aks.html",
    "# Microsoft's page instead creates the node pools with --gpu-driver none for",
    "# the operator to install the driver, which specgen does not render:",
    "# https://learn.microsoft.com/azure/aks/nvidia-gpu-operator",
)


def _aks_driver_lines(stacks: list[GpuPoolStack]) -> tuple[str, ...]:
    """The header's word on who installs the driver where AKS's node image does (none for other clouds' pools)."""
    return AKS_DRIVER_LINES if any(s.provider == "azure" and s.driver_owner == "node-image" for s in stacks) else ()
