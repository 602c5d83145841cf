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
secret and the chart's repository, as it does the NVIDIA GPU Operator's. The chart's name, version, repository, image
and default tolerations, with their sources: the software record ``rocm-k8s-device-plugin``
(generator/catalog/software.json), as the EFA plugin's chart is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from generator.catalog import software
from generator.planner.cluster_findings import AMD_DEVICE_PLUGIN_RECORD, AMD_DEVICE_PLUGIN_VALUES
from generator.render.env import to_yaml
from generator.render.kube_objects import HEADER
from generator.render.mirrors import ClusterMirror, chart_install_lines, mirrored

VALUES_PATH = AMD_DEVICE_PLUGIN_VALUES


def amd_values(taints: Sequence[tuple[str, str]], mirror: ClusterMirror | None) -> dict[str, Any]:
    """The chart's values: its default toleration, one a distinct (key, effect) taint of the pools, the site's image.

    The chart's default ``tolerations`` are kept where specgen sets the list (a value list replaces the chart's).
    """
    record = software(AMD_DEVICE_PLUGIN_RECORD)
    tolerations = [dict(t) for t in record["default_tolerations"]]
    tolerations += [{"key": key, "operator": "Exists", "effect": effect} for key, effect in sorted(set(taints))]
    values: dict[str, Any] = {"tolerations": tolerations}
    if mirror is not None and mirror.registry is not None:
        values["dp"] = {"image": {"repository": mirrored(str(record["image"]), mirror.registry)}}
    if mirror is not None and mirror.pull_secret is not None:
        values["imagePullSecrets"] = [{"name": mirror.pull_secret}]
    return values


def install_lines(mirror: ClusterMirror | None) -> list[str]:
    """The ``helm upgrade --install`` command, as comment lines: the chart from ROCm's repository or the site's."""
    record = software(AMD_DEVICE_PLUGIN_RECORD)
    chart, version, namespace = str(record["helm_chart"]), str(record["version"]), str(record["namespace"])
    header = [f"# Helm values for ROCm's AMD GPU device plugin chart {chart} {version}:", f"# {record['source'][0]}"]
    default = [chart, f"--repo {record['helm_repository']}"]
    return header + chart_install_lines(mirror, namespace, chart, version, default)


def render_amd_device_plugin(taints: Sequence[tuple[str, str]], mirror: ClusterMirror | None) -> dict[str, str]:
    """``cluster/amd-gpu/values.yaml`` for the AMD pools' taints and the site's mirror."""
    usage = "\n".join(install_lines(mirror)) + "\n"
    return {VALUES_PATH: usage + HEADER + to_yaml(amd_values(taints, mirror))}
