"""The AMD GPU device plugin of a bare-metal cluster's AMD pools: Helm values for ROCm's ``amd-gpu`` chart.

A kubeadm node with AMD GPUs advertises no ``amd.com/gpu`` until AMD's device plugin runs on it, and specgen taints
every GPU node with its device plugin's resource (``amd.com/gpu=present:NoSchedule``), which the plugin as shipped does
not tolerate: its chart's ``tolerations`` value is ``CriticalAddonsOnly`` alone. Without a toleration the DaemonSet
never lands on the pool's nodes and every pod asking ``amd.com/gpu`` stays Pending (newuser103 item 2; until then
specgen rendered nothing for an AMD pool and only said so in a warning).

``cluster/amd-gpu/values.yaml`` keeps the chart's defaults (no node-feature-discovery, no labeller, the node selector
off, so the DaemonSet runs on every node it tolerates) and adds one toleration a distinct taint of the AMD pools.
Ansible installs the amdgpu driver and ROCm the plugin reads (``specgen_amdgpu_driver``). A site mirror
(``mirrors.container_registry``, ``image_pull_secret``, ``helm_repository``) gives the plugin's image, its pull
secret and the chart's repository, as it does the NVIDIA GPU Operator's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from generator.planner.cluster_findings import AMD_DEVICE_PLUGIN_VALUES
from generator.render.env import to_yaml
from generator.render.kube_objects import HEADER
from generator.render.mirrors import ClusterMirror, chart_install_lines, mirrored

VALUES_PATH = AMD_DEVICE_PLUGIN_VALUES
#: The chart's own namespace value (``namespace: kube-system`` in its values; its templates use the release's).
NAMESPACE = "kube-system"
CHART = "amd-gpu"
#: Chart 0.16.0 (app 1.31.0.2): its Chart.yaml, values.yaml and DaemonSet template at the commits read.
CHART_VERSION = "0.16.0"
CHART_REPOSITORY = "https://rocm.github.io/k8s-device-plugin/"
IMAGE = "docker.io/rocm/k8s-device-plugin"
SOURCES = (
    "https://github.com/ROCm/k8s-device-plugin/blob/867afce3d98c8ee9334df7f66ea839aa05bf0ccd/helm/amd-gpu/Chart.yaml",
    "https://github.com/ROCm/k8s-device-plugin/blob/2303c30ee75771122011cf7f408ebfc37df309aa/helm/amd-gpu/values.yaml",
    "https://github.com/ROCm/k8s-device-plugin/blob/9bfda41399b09dd8baa15ba37569eb6bcfeecc66/helm/amd-gpu/templates/"
    "deviceplugin-daemonset.yaml",
)
#: The chart's default ``tolerations``, kept where specgen sets the list (a value list replaces the chart's).
CHART_TOLERATIONS = ({"key": "CriticalAddonsOnly", "operator": "Exists"},)


def amd_values(taints: Sequence[tuple[str, str]], mirror: ClusterMirror | None) -> dict[str, Any]:
    """The chart's values: its default toleration, one a distinct (key, effect) taint of the pools, the site's image."""
    tolerations = [dict(t) for t in CHART_TOLERATIONS]
    tolerations += [{"key": key, "operator": "Exists", "effect": effect} for key, effect in sorted(set(taints))]
    values: dict[str, Any] = {"tolerations": tolerations}
    if mirror is not None and mirror.registry is not None:
        values["dp"] = {"image": {"repository": mirrored(IMAGE, mirror.registry)}}
    if mirror is not None and mirror.pull_secret is not None:
        values["imagePullSecrets"] = [{"name": mirror.pull_secret}]
    return values


def install_lines(mirror: ClusterMirror | None) -> list[str]:
    """The ``helm upgrade --install`` command, as comment lines: the chart from ROCm's repository or the site's."""
    header = [f"# Helm values for ROCm's AMD GPU device plugin chart {CHART} {CHART_VERSION}:", f"# {SOURCES[0]}"]
    default = [CHART, f"--repo {CHART_REPOSITORY}"]
    return header + chart_install_lines(mirror, NAMESPACE, CHART, CHART_VERSION, default)


def render_amd_device_plugin(taints: Sequence[tuple[str, str]], mirror: ClusterMirror | None) -> dict[str, str]:
    """``cluster/amd-gpu/values.yaml`` for the AMD pools' taints and the site's mirror."""
    usage = "\n".join(install_lines(mirror)) + "\n"
    return {VALUES_PATH: usage + HEADER + to_yaml(amd_values(taints, mirror))}
