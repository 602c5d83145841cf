"""What one GPU-fabric NIC of a bare-metal server moves between nodes: its ports, at most the PCIe link that feeds them.

newuser111 item 3: a lab's HGX H200 servers stated with ConnectX-8 800 Gb/s NICs were timed at 8 x 800 Gb/s between
nodes. GPUDirect RDMA moves a GPU's data from its memory to its NIC over PCIe (the GPU's link and the NIC's, through
the board's PCIe switch: https://docs.nvidia.com/cuda/gpudirect-rdma/), so a NIC carries at most what the narrower of
the two links moves a direction: an H200's PCIe Gen5 x16, 63 GB/s (504 Gb/s), under an 800 Gb/s port, as an L40S's
Gen4 x16 (252 Gb/s) is under a 400 Gb/s one. A NIC counts one port's rate, as the bare-metal fabric has been timed
(:func:`~generator.planner.nodes.node_link`). The link rate is
:data:`~generator.sizing.performance.PCIE_X16_GB_PER_S` (hardware_facts.json's PCIe record); a NIC whose PCIe is not
recorded is taken at the GPU's.
"""

from __future__ import annotations

from generator import catalog
from generator.catalog.records import GpuSpec, NicSpec
from generator.sizing.performance import pcie_gb_per_s

#: Bits a byte: the PCIe rate is GB/s, a port's Gb/s.
BITS_PER_BYTE = 8


def host_link(nic: NicSpec, gpu: GpuSpec) -> tuple[int, int]:
    """(generation, lanes) of the PCIe path between ``gpu`` and ``nic``: the older generation, the fewer lanes."""
    return min(gpu.pcie_gen, nic.pcie_gen or gpu.pcie_gen), min(gpu.pcie_lanes, nic.pcie_lanes or gpu.pcie_lanes)


def host_link_gbps(nic: NicSpec, gpu: GpuSpec) -> float:
    """Gb/s a direction of the PCIe path between ``gpu`` and ``nic`` (:func:`host_link`)."""
    return pcie_gb_per_s(*host_link(nic, gpu)) * BITS_PER_BYTE


def nic_data_gbps(nic: NicSpec, gpu: GpuSpec) -> float:
    """Gb/s one NIC moves a direction for ``gpu``: its port's rate, at most its PCIe path's."""
    return min(nic.port_gbps, host_link_gbps(nic, gpu))


def capped_text(nic: NicSpec, gpu: GpuSpec) -> str:
    """`` (504 Gb/s each: PCIe Gen5 x16 of h200-sxm-141gb and the NIC)`` where the PCIe path caps a NIC, else ``""``."""
    data = nic_data_gbps(nic, gpu)
    if data >= nic.port_gbps:
        return ""
    gen, lanes = host_link(nic, gpu)
    return f" ({data:g} Gb/s each: the PCIe Gen{gen} x{lanes} between {gpu.id} and the NIC)"


def vendor_nic_id(platform_id: str, custom: bool) -> str | None:
    """The fabric NIC the catalog builds ``platform_id`` with (None: a custom server, or none)."""
    record = None if custom else catalog.platforms().get(platform_id)
    return record.fabric_nic_id if record is not None else None


def timed_nic_gbps(nic: NicSpec, gpu: GpuSpec, vendor_nic: str | None) -> float:
    """Gb/s a fabric NIC is timed at: the vendor's build at its port's rate, any other at most its PCIe path's.

    A DGX B300's ConnectX-8 sit on its GPU board, past the host's PCIe, at NVIDIA's 800 Gb/s a GPU; a NIC stated for an
    owned server or fitted by the planner is held to :func:`nic_data_gbps`.
    """
    return nic.port_gbps if nic.id == vendor_nic else nic_data_gbps(nic, gpu)
