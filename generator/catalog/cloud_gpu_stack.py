"""Providers whose cloud runs the whole GPU stack of their node pools.

The planner labels their pools for no GPU Operator and the renderers write none for them: one rule for both.
"""

from __future__ import annotations

#: Providers whose node pools get their whole GPU stack from the cloud, so the GPU Operator serves none of them.
#: GKE: the driver installer (``gpuDriverInstallationConfig``), GKE's own device plugin and GPU sharing / MIG from the
#: node pool (https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-operator recommends GKE's GPU management;
#: the operator would need NVIDIA's GKE settings: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/google-gke.html).
#: Its parts that remain enabled without driver and toolkit (GFD, DCGM exporter, validator) run with the
#: ``nvidia`` runtime class that GKE's containerd lacks. GPU metrics on GKE: its managed DCGM metrics
#: (https://cloud.google.com/kubernetes-engine/docs/how-to/dcgm-metrics, on by default from 1.32.1-gke.1357000).
CLOUD_GPU_STACK = frozenset({"gcp"})
