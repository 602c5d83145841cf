"""Kubernetes for bare metal: kubeadm JoinConfiguration per pool, GPU Operator ClusterPolicy, device-plugin config.

Labels and taints come from the plan; the driver version from the software catalog; the
bootstrap credentials are referenced by path, never written into git.
"""

from __future__ import annotations

from typing import Any

from generator.catalog import gpus, software
from generator.planner.plan import Plan, Pool
from generator.render.ansible import HEADER
from generator.render.env import to_yaml
from generator.workload.models import KubernetesSettings

NAMESPACE = "gpu-operator"
DEVICE_PLUGIN_CONFIG = "specgen-device-plugin"


def join_configuration(pool: Pool, settings: KubernetesSettings) -> dict[str, Any]:
    """Kubeadm ``JoinConfiguration`` (v1beta4) registering a pool's nodes with its labels and taints."""
    labels = ",".join(f"{k}={v}" for k, v in pool.labels)
    return {
        "apiVersion": "kubeadm.k8s.io/v1beta4",
        "kind": "JoinConfiguration",
        "discovery": {"file": {"kubeConfigPath": settings.bootstrap_kubeconfig_path}},
        "nodeRegistration": {
            "kubeletExtraArgs": [{"name": "node-labels", "value": labels}],
            "taints": [{"key": k, "value": v, "effect": e} for k, v, e in pool.taints],
        },
    }


def _nvidia_pools(plan: Plan) -> list[Pool]:
    table = gpus()
    return [p for p in plan.pools if table[p.node.gpu_id].vendor == "nvidia"]


def cluster_policy(plan: Plan, settings: KubernetesSettings) -> dict[str, Any]:
    """NVIDIA GPU Operator ``ClusterPolicy`` (nvidia.com/v1) for the GPU pools."""
    driver = software("nvidia-driver")
    rdma = any(n.role == "fabric" and n.gpudirect_rdma for p in _nvidia_pools(plan) for n in p.node.nics)
    return {
        "apiVersion": "nvidia.com/v1",
        "kind": "ClusterPolicy",
        "metadata": {"name": "cluster-policy"},
        "spec": {
            "operator": {"defaultRuntime": "containerd"},
            "daemonsets": {
                "tolerations": [{"key": k, "operator": "Equal", "value": v, "effect": e} for k, v, e in _taints(plan)],
            },
            "driver": {
                "enabled": True,
                "version": settings.driver_version or str(driver["version"]),
                "rdma": {"enabled": rdma},
            },
            "toolkit": {"enabled": True},
            "devicePlugin": {"enabled": True, "config": {"name": DEVICE_PLUGIN_CONFIG, "default": "default"}},
            "dcgm": {"enabled": True},
            "dcgmExporter": {"enabled": True},
            "gfd": {"enabled": True},
            "nodeStatusExporter": {"enabled": True},
            "mig": {"strategy": "none"},
        },
    }


def _taints(plan: Plan) -> list[tuple[str, str, str]]:
    return sorted({t for p in plan.pools for t in p.taints})


def device_plugin_config(plan: Plan) -> dict[str, Any]:
    """ConfigMap with the device plugin's configuration: whole GPUs, no sharing (one per pool name too)."""
    whole_gpus = to_yaml({"version": "v1", "flags": {"migStrategy": "none"}})
    data = {"default": whole_gpus}
    for pool in _nvidia_pools(plan):
        data[pool.name.replace("_", "-")] = whole_gpus
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": DEVICE_PLUGIN_CONFIG, "namespace": NAMESPACE},
        "data": data,
    }


def render_kubernetes(plan: Plan, settings: KubernetesSettings) -> dict[str, str]:
    """``kubernetes/baremetal/...``: one join configuration per pool plus the cluster-wide GPU stack."""
    base = "kubernetes/baremetal"
    files = {f"{base}/join/{pool.name}.yaml": HEADER + to_yaml(join_configuration(pool, settings)) for pool in plan.pools}
    if _nvidia_pools(plan):
        files[f"{base}/gpu-operator/cluster-policy.yaml"] = HEADER + to_yaml(cluster_policy(plan, settings))
        files[f"{base}/gpu-operator/device-plugin-config.yaml"] = HEADER + to_yaml(device_plugin_config(plan))
    return files
