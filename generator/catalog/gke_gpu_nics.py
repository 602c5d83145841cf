"""What a GKE node pool's GPU machine has to talk to other nodes over: its GPU NICs only on networks attached to it.

An A3's GPU NICs carry NCCL's traffic only once each is attached to a VPC network of its own, as an additional node
network of the pool (GPUDirect-TCPX on A3 High, TCPXO on A3 Mega:
https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx); the workload names those networks
under ``kubernetes.gpu_networks``. A3 Ultra and A4 attach theirs as RDMA networks (a second gVNIC's network and the
RDMA subnets of a RoCE VPC), which specgen does not render. Without them a node has its first gVNIC alone. One rule for
the planner (what a step is timed over), the workload check and the GKE rendering.
"""

from __future__ import annotations

from generator.catalog.records import PlatformSpec

#: Providers whose rendered node pools attach GPU NICs only to networks the workload names (GKE).
PROVIDERS_WITHOUT_GPU_NICS = frozenset({"gcp"})

#: The GPU NIC of the machine types whose networks ``kubernetes.gpu_networks`` attaches: A3 High's and A3 Mega's gVNICs.
TCPX_GPU_NIC = "gcp-gpu-nic-200g"

#: Machine types with two gVNICs beside their RDMA GPU NICs (A3 Ultra, A4: 2 x 200 Gb/s gVNIC and 8 x 400 Gb/s
#: CX-7, https://cloud.google.com/compute/docs/gpus/gpu-network-bandwidth): a pool with no additional network has
#: the first gVNIC alone.
TWO_GVNIC_MACHINES = frozenset({"gcp-a3-ultragpu-8g", "gcp-a4-highgpu-8g"})


def takes_gpu_networks(platform: PlatformSpec) -> bool:
    """Whether ``kubernetes.gpu_networks`` can attach the GPU NICs of ``platform`` (a TCPX / TCPXO machine type)."""
    return platform.provider in PROVIDERS_WITHOUT_GPU_NICS and platform.fabric_nic_id == TCPX_GPU_NIC


def unattached(platform: PlatformSpec) -> bool:
    """Whether ``platform``'s GPU NICs are on no network a rendered node pool attaches: its nodes have their primary NIC."""
    return platform.provider in PROVIDERS_WITHOUT_GPU_NICS and bool(platform.fabric_nic_id) and not platform.gpu_nics_attached


def primary_nic_gbps(platform: PlatformSpec, gpu_nics_gbps: float) -> float:
    """Gb/s of the one NIC a node pool without additional networks has.

    The machine's network less its GPU NICs, over its gVNICs.
    """
    gvnics = 2 if platform.id in TWO_GVNIC_MACHINES else 1
    return (float(platform.network_gbps_total or 0) - gpu_nics_gbps) / gvnics


def pools_rendered(outputs: tuple[str, ...]) -> bool:
    """Whether a workload of these outputs renders node pools a GKE setting lands in (Kubernetes or Terraform)."""
    return bool({"kubernetes", "terraform"} & set(outputs))
