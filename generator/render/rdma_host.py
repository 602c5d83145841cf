"""What GPUDirect RDMA over a bare-metal pool's fabric NICs needs of its hosts that nothing rendered sets up.

newuser57 item 11: the group vars said ``gpudirect_rdma: true`` (the fabric NICs can read and write GPU memory) while
no output installed the NICs' driver stack, registered GPU memory with them or addressed the fabric ports, and the GPU
Operator's ``driver.rdma`` is on only where the operator installs the driver. A site that runs NCCL over the fabric
without them falls back to staging through host memory, or fails to bring the ports up.
"""

from __future__ import annotations

from generator import catalog
from generator.planner.plan import Finding, Plan, sorted_findings
from generator.words import listed
from generator.workload.models import Workload

#: NVIDIA's GPU Operator page on GPUDirect RDMA: DMA-BUF (the open kernel modules) recommended over nvidia-peermem,
#: and the NIC drivers from the Network Operator or the host.
RDMA_GUIDE = "https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-rdma.html"
CODE = "rdma-host-setup"


def with_rdma_findings(plan: Plan, workload: Workload) -> Plan:
    """``plan`` with one info naming the pools whose fabric NICs do GPUDirect RDMA between hosts, and what they need.

    Those of NVIDIA GPUs on bare metal, of more than one server of the site's (not rented from a provider).
    """
    nvidia = {g.id for g in catalog.gpus().values() if g.vendor == "nvidia"}
    pools = [
        pool.name
        for pool in plan.pools
        # NVIDIA's, on servers of the site's, of more than one node: NCCL between hosts (review39 item 4)
        if pool.node.provider == "baremetal"
        and pool.node.gpu_id in nvidia
        and pool.rented is None
        and pool.nodes > 1
        and any(n.role == "fabric" and n.gpudirect_rdma for n in pool.node.nics)
    ]
    if not pools:
        return plan
    # the GPU Operator installs the driver, and loads nvidia-peermem, where it is rendered and Ansible is not
    operator = "ansible" not in workload.outputs and "kubernetes" in workload.outputs
    registration = (
        "the GPU Operator's values load nvidia-peermem (driver.rdma.enabled)"
        if operator
        else "GPU memory registered with the NICs through DMA-BUF (NVIDIA's open kernel modules and a kernel that has it) "
        "or the nvidia-peermem module, loaded after the driver"
    )
    said = (
        f"the hosts of {listed(pools)} have fabric NICs with GPUDirect RDMA (specgen_network.gpudirect_rdma), which "
        "NCCL uses between hosts (a replica or a training job over several) and which needs of each host what nothing "
        "rendered sets up: "
        "the NICs' driver stack (DOCA-Host or MLNX_OFED on the hosts, or NVIDIA's Network Operator), "
        f"{registration}, the fabric ports' addresses (IPoIB or RoCE), and the IOMMU in passthrough where it is on "
        f"(iommu=pt); without them NCCL stages through host memory ({RDMA_GUIDE})"
    )
    return plan._replace(findings=sorted_findings([*plan.findings, Finding("info", CODE, said, "hardware")]))
