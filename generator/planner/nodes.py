"""Node assembly: CPU, system RAM, NVMe, NICs, power, cooling and racks for one pool of GPU servers."""

from __future__ import annotations

import functools
import math

from generator import catalog
from generator.catalog.dimms import dimms_per_channel, rated_mt_per_s
from generator.catalog.gke_gpu_nics import primary_nic_gbps, unattached
from generator.catalog.records import CpuSpec, GpuSpec, PlatformSpec
from generator.named_tuple import NamedTuple
from generator.planner.bom import MemoryLayout, boot_drives_text, fill_channels, soldered_memory, soldered_text
from generator.planner.gpu_power_limit import limited_power_saving_w
from generator.planner.heat import heat_btu_per_h
from generator.planner.host_minimums import minimum_ram_gib, minimum_text, wanted_cores_basis, wanted_cpu_cores
from generator.planner.plan import Finding, Nic, NodeSpec
from generator.sizing.constants import Constants
from generator.units import GIB, TB
from generator.words import counted as counted_noun
from generator.workload.models import Hardware

#: NVSwitch chips per HGX baseboard generation (NVIDIA HGX A100 / H100 / B200 architecture briefs).
NVSWITCH_CHIPS = {"ampere": 6, "hopper": 4, "blackwell": 2}
#: The NVSwitch generation on the 8-GPU SXM baseboard of each GPU architecture, as NVIDIA's Fabric Manager user guide
#: lists its server architectures (https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html: HGX
#: A100 second, HGX H100 / H200 / H20 third, DGX / HGX B200 / B300 and HGX B100 fourth generation). Volta has none here:
#: the guide's V100 NVSwitch systems are DGX-2 / HGX-2 (V100 SXM3, two 8-GPU boards), which the catalog does not carry,
#: while eight V100 SXM2 (DGX-1 class) are joined by six NVLinks a GPU in a hybrid cube mesh, no NVSwitch, at most two
#: links between a pair (https://www.alibabacloud.com/help/en/ack/topology-aware-gpu-scheduling): Fabric Manager, "for
#: NVSwitch-based systems" (the same guide), has nothing to configure there (newuser57 item 5).
NVSWITCH_GENERATION = {"ampere": 2, "hopper": 3, "blackwell": 4}
#: NICs added where a bare-metal platform lists none: fabric for multi-node jobs, front-end for service.
DEFAULT_FABRIC_NIC = "connectx-7-400g-ib"
DEFAULT_FRONTEND_NIC = "connectx-6-lx-2p-25gbe"
#: Least network bandwidth per node for work split across nodes (pipeline stages, full-model gradients):
#: the EFA / GPUDirect-TCPX class of cloud GPU instances starts at 100 Gb/s (platforms.json).
MIN_FABRIC_GBPS = 100

#: The finding (and the reason a layout is dropped) where the link between nodes rules out work across them.
NO_GPU_FABRIC = "no-gpu-fabric"
#: The error code of a node whose RAM is short of what its job holds there.
RAM_SHORT = "ram-short"
#: RAM of the smallest build the planner configures, GiB, and the step a configurable server's RAM is rounded up to.
SMALLEST_BUILD_GIB = 64
#: Drive fitted where a bare-metal platform lists none.
DEFAULT_DRIVE = "generic-nvme-u2-gen4-3-84tb"


class NodeNeeds(NamedTuple):
    """What the deployments on one node need from the host."""

    model_file_bytes: int
    host_ram_bytes: int
    dataset_bytes: int
    checkpoint_bytes: int
    needs_fabric: bool
    #: What ``host_ram_bytes`` is, as a refusal says it (empty: nothing beyond the OS reserve is named).
    host_ram_text: str = ""
    #: Whether the node's work streams its host memory every step (ZeRO-Offload's CPU optimizer step), timed at the
    #: speed of the DIMMs it is built with: one DIMM a channel is kept where it holds ``host_ram_bytes``
    #: (:func:`node_memory`).
    host_dram_streamed: bool = False

    @property
    def files_bytes(self) -> int:
        """The files a node keeps on disk: the model's, the dataset and the checkpoints (``Pool.files_bytes``)."""
        return self.model_file_bytes + self.dataset_bytes + self.checkpoint_bytes


def _round_up(value: float, step: float) -> float:
    return math.ceil(value / step) * step if value > 0 else 0.0


#: Where RAM an owned group states is given, as a ram-short reason says it (newuser43 item 2); the search names the
#: group's own field in its place (``hardware.inventory[0].ram_gib``: :func:`generator.planner.candidates.layout_option`).
OWNED_RAM = "as owned: hardware.inventory[].ram_gib"

#: Why a tower takes no GPU fabric, as messages say it.
TOWER_NO_FABRIC = "a tower's PCIe lanes go to its GPUs, or the card has no GPUDirect RDMA"
#: PCIe lanes a GPU and a fabric NIC each take (x16).
_LANES_PER_DEVICE = 16


def fabric_fits(platform: PlatformSpec, gpu: GpuSpec) -> bool:
    """Whether a GPU fabric NIC can be fitted: to bare-metal servers.

    A workstation tower takes one only where its CPU has x16 lanes for a NIC beside its most GPUs at x16 and the GPU
    does GPUDirect RDMA: not the desktop towers (two GPUs at x8 on AM5 and LGA1700 boards), nor a consumer
    (GeForce) card, which has no GPUDirect RDMA; a WRX90 Threadripper PRO (128 lanes) with RTX PRO cards does.
    """
    if platform.provider != "baremetal":
        return False
    if platform.kind != "workstation":
        return True
    cpu = catalog.cpus().get(platform.cpu_id or "")
    lanes = cpu.pcie_lanes if cpu is not None and cpu.pcie_lanes else 0
    return not gpu.consumer and lanes >= _LANES_PER_DEVICE * (max(platform.gpu_counts) + 1)


def fitted_fabric_nics(platform: PlatformSpec, gpus: int) -> int:
    """Fabric NICs fitted to a node whose platform lists none: one a GPU, as GPU servers have them.

    A tower has the lanes for one (:func:`fabric_fits`). The NICs built and the bandwidth training is timed with
    are both this count.
    """
    return 1 if platform.kind == "workstation" else gpus


class FabricNics(NamedTuple):
    """The GPU fabric NICs one node is built with."""

    nic_id: str
    nics: int


def node_fabric(platform: PlatformSpec, gpu: GpuSpec, gpus: int, needs_fabric: bool) -> FabricNics | None:
    """The GPU fabric a node of ``gpus`` GPUs is built with, or None where it has none.

    The one decision both the node's parts list (its NICs, power and cost) and the link a training step is timed
    over read (newuser23 item 1), so a step is never timed over a fabric the node is not built with:

    - a server built for a partial GPU population (a PCIe chassis of 1-8 GPUs) takes the scale-out NICs it lists
      with the GPUs that need them: none where no replica or job spans servers (``needs_fabric`` False), else in
      proportion to the GPUs fitted;
    - any other platform that lists a fabric (a DGX, a cloud instance, a custom server as owned) has it;
    - a bare-metal server whose parts are chosen and that lists none is fitted one where ``needs_fabric`` asks and
      it takes one (:func:`fabric_fits`): one NIC a GPU, one a tower (:func:`fitted_fabric_nics`);
    - an owned custom server without one, an owned catalog server whose inventory states none
      (``fabric_nic_count: 0``), a cloud instance without one, or a tower that takes none has none.
    """
    listed_id, listed_count = platform.fabric_nic_id, platform.fabric_nic_count
    configurable = fabric_chosen(platform)
    if listed_id and configurable and len(platform.gpu_counts) > 1:
        most = max(platform.gpu_counts)
        return FabricNics(listed_id, math.ceil((listed_count or most) * gpus / most)) if needs_fabric else None
    if listed_id:
        return FabricNics(listed_id, listed_count or gpus)
    if needs_fabric and configurable and fabric_fits(platform, gpu):
        return FabricNics(DEFAULT_FABRIC_NIC, fitted_fabric_nics(platform, gpus))
    return None


def unfabricated_link(platform: PlatformSpec) -> tuple[float, str]:
    """Gb/s a node without a GPU fabric sends to other nodes, and the words for it.

    A cloud instance's network, or a bare-metal server's front end: one port a front-end NIC (a dual-port NIC's second
    port is taken for redundancy, not bonded for NCCL).
    """
    if platform.provider != "baremetal":
        gbps = float(platform.network_gbps_total or 0)
        return gbps, f"{gbps:g} Gb/s instance network"
    nic = catalog.nics()[platform.frontend_nic_id or DEFAULT_FRONTEND_NIC]
    count = platform.frontend_nic_count or 1
    return nic.port_gbps * count, f"{count} x {nic.port_gbps:g} Gb/s front-end Ethernet"


def fabric_chosen(platform: PlatformSpec) -> bool:
    """Whether the planner chooses a bare-metal server's GPU fabric: not a custom server's, nor one an owned group states."""
    return platform.provider == "baremetal" and not platform.custom and not platform.nics_as_owned


def fixed_system(platform: PlatformSpec) -> bool:
    """A vendor's complete system sold as one build (a DGX, a GB200 NVL72): its I/O is the vendor's, not a choice.

    The catalog marks it by the system maximum power the vendor publishes for the build as sold (``max_power_w``);
    no default NIC is added to it where the catalog lists none (newuser36 item 4: a 25 GbE NIC the DGX H100 lacks).
    """
    return platform.provider == "baremetal" and not platform.custom and platform.max_power_w is not None


def _nics(platform: PlatformSpec, gpu: GpuSpec, gpus: int, needs_fabric: bool, findings: list[Finding]) -> tuple[Nic, ...]:
    table = catalog.nics()
    out: list[Nic] = []
    configurable = platform.provider == "baremetal" and not platform.custom  # parts are chosen, not as owned
    if needs_fabric and not platform.fabric_nic_id:
        if fabric_chosen(platform) and not fabric_fits(platform, gpu):  # a tower: its front end is all it has between nodes
            findings.append(
                Finding("error", NO_GPU_FABRIC, f"{platform.id} with {gpu.id} takes no GPU fabric ({TOWER_NO_FABRIC}), "
                        f"and multi-node work needs at least {MIN_FABRIC_GBPS} Gb/s between nodes")
            )  # fmt: skip
        elif not fabric_chosen(platform) and (between := unfabricated_link(platform)[0]) < MIN_FABRIC_GBPS:
            # the link a step is timed over (newuser47 item 2: the gate counted both ports of a dual-port 25 GbE NIC, 50
            # Gb/s, where the step was timed over one)
            owned = " (no GPU fabric, as hardware.inventory states)" if platform.nics_as_owned else ""
            findings.append(
                Finding("error", NO_GPU_FABRIC, f"{platform.id} has {between:g} Gb/s between nodes"
                        f"{owned}; multi-node work needs at least {MIN_FABRIC_GBPS} Gb/s")
            )  # fmt: skip
    fabric = node_fabric(platform, gpu, gpus, needs_fabric)
    if fabric is not None:
        nic = table[fabric.nic_id]
        out.append(Nic("fabric", nic.id, nic.name, fabric.nics, nic.port_gbps, nic.protocol, nic.gpudirect_rdma))
    front_id, front_count = platform.frontend_nic_id, platform.frontend_nic_count
    if not front_id and configurable and not fixed_system(platform):
        front_id, front_count = DEFAULT_FRONTEND_NIC, platform.hosts  # one per host
    if front_id:
        nic = table[front_id]
        out.append(Nic("frontend", nic.id, nic.name, front_count or 1, nic.port_gbps, nic.protocol, nic.gpudirect_rdma))
    return tuple(out)


#: GiB of RAM counted as one DIMM drawing ``dimm_power_w`` in a server's summed power.
DIMM_GIB = 64


def component_dc_load_w(
    gpu: GpuSpec, gpus: int, platform: PlatformSpec, ram_gib: int, drives: int, nics: tuple[Nic, ...], consts: Constants
) -> float:
    """DC load a server's PSUs deliver, from its parts: GPUs, CPUs, DIMMs, drives, NICs, NVSwitches and fans.

    NIC and drive power come from the catalog where it lists them, else from the named constants.
    """
    cpu = catalog.cpus().get(platform.cpu_id or "") or choose_cpu(
        platform.cpu_sockets, wanted_cpu_cores(platform, gpu, gpus, consts), platform.cpu_vendor, platform.cpu_socket
    )
    nvswitch = NVSWITCH_CHIPS.get(_gpu_generation(gpu), 0) if platform.kind == "hgx-8gpu" and gpus == 8 else 0
    nic_table = catalog.nics()
    nic_w = sum(n.count * (nic_table[n.nic_id].power_w or consts.nic_power_w * nic_table[n.nic_id].ports) for n in nics)
    drive = catalog.drives().get(platform.nvme_drive_id or "")
    drive_w = (drive.power_w_active if drive and drive.power_w_active else consts.nvme_power_w) * drives
    host = (cpu, vm_cpu_sockets(platform, cpu), ram_gib)
    return parts_dc_load_w(gpu, gpus, host, drive_w + nic_w + nvswitch * consts.nvswitch_power_w, consts)


def vm_cpu_sockets(platform: PlatformSpec, cpu: CpuSpec | None) -> float:
    """The CPU sockets whose power a server's sum counts: a cloud VM's share of its host's, else the platform's.

    newuser79 item 7: a cloud VM was summed with a whole CPU chosen for its GPUs' wanted cores, whatever its vCPUs, so a
    g2-standard-4 (4 vCPU, 1 L4) drew 424 W and g2-standard-96 (96 vCPU, 8 L4) only 1,008 W. A VM draws its cores'
    share of the host CPU: its vCPUs over two (SMT siblings; physical where ``vcpus_physical``) over the chosen CPU's cores.
    """
    if platform.kind != "cloud-instance" or not platform.vcpus or cpu is None or not cpu.cores:
        return platform.cpu_sockets
    cores = platform.vcpus if platform.vcpus_physical else platform.vcpus / 2
    return cores / cpu.cores


def parts_dc_load_w(
    gpu: GpuSpec, gpus: int, host: tuple[CpuSpec | None, float, float], other_w: float, consts: Constants
) -> float:
    """DC load of a machine's parts and the fans' share.

    Its GPUs at TDP, ``host`` (CPU, sockets, RAM GiB) and ``other_w`` (drives, NICs, switches). Each CPU socket draws
    its most rated power (Intel's Maximum Turbo Power for a K part: newuser49 item 1, review34 item 10); a superchip
    module's TDP (GH200) covers its CPU and the CPU's on-module memory: neither is added again.
    """
    cpu, sockets, ram_gib = host
    on_module = gpu.tdp_includes_host_cpu
    cpu_w = cpu.full_load_w * sockets if cpu and not on_module else 0.0
    dimm_w = 0.0 if on_module else math.ceil(ram_gib / DIMM_GIB) * consts.dimm_power_w
    return (gpu.tdp_w * gpus + cpu_w + dimm_w + other_w) * (1 + consts.fan_power_fraction)


def component_power_w(
    gpu: GpuSpec, gpus: int, platform: PlatformSpec, ram_gib: int, drives: int, nics: tuple[Nic, ...], consts: Constants
) -> int:
    """Wall (AC) power of a server from its parts: the DC load (:func:`component_dc_load_w`) over the PSU efficiency."""
    return round(component_dc_load_w(gpu, gpus, platform, ram_gib, drives, nics, consts) / consts.psu_efficiency)


def psu_count(node: NodeSpec, hardware: Hardware | None = None) -> int | None:
    """The PSUs of ``node``'s platform: the catalog's, or those a custom server of ``hardware``'s inventory states.

    None for a platform without (review39 item 3: a custom server's PSUs were read by the feed-loss check, not by the
    packing or the circuit check).
    """
    platform = catalog.platforms().get(node.platform_id)
    if platform is not None:
        return platform.psu_count
    custom = (g.custom for g in hardware.inventory if g.custom is not None) if hardware is not None else ()
    return next((c.psu_count for c in custom if c.platform_id == node.platform_id), None)


def wall_to_dc_w(wall_w: float, consts: Constants) -> int:
    """The DC load a PSU delivers for a wall (AC) draw: what its rating (a DC output) is compared with.

    The PSU's own conversion loss is drawn at the wall but dissipated in the PSU, not delivered by it
    (newuser25 item 1: 1,644 W at the wall is 1,545 W DC, inside a 1,600 W PSU).
    """
    return round(wall_w * consts.psu_efficiency)


def reference_system(platform: PlatformSpec, gpu: GpuSpec) -> PlatformSpec | None:
    """The NVIDIA DGX (or other platform with a published maximum) built on the same 8-GPU baseboard."""
    if platform.kind not in ("hgx-8gpu", "oam-8gpu"):
        return None
    same = [
        p
        for p in catalog.platforms().values()
        if p.max_power_w and p.kind == platform.kind and gpu.id in p.gpu_ids and max(p.gpu_counts) == max(platform.gpu_counts)
    ]
    return min(same, key=lambda p: p.id) if same else None


#: The basis of a node's power figure summed from its parts (no published maximum, its own or borrowed).
SUMMED = "sum of components"
#: Servers built on an 8-GPU baseboard (HGX, OAM UBB): the reference systems a published maximum is borrowed from.
BASEBOARD_KINDS = ("hgx-8gpu", "oam-8gpu")
#: The warning on a full 8-GPU baseboard server with no published maximum: planned on its parts summed, scaled.
POWER_SUMMED = "power-summed"


class UnderRead(NamedTuple):
    """How much more than their summed parts the catalog's 8-GPU baseboard systems with a published maximum draw.

    ``high`` / ``high_id``: the largest published / summed ratio and whose; ``low`` / ``low_id``: the smallest.
    """

    high: float
    high_id: str
    low: float
    low_id: str


@functools.cache
def baseboard_under_read(consts: Constants) -> UnderRead | None:
    """Published maximum over the parts summed, for each full 8-GPU baseboard system with a published maximum.

    newuser36 item 1: the parts sum under-reads every published 8-GPU system maximum (DGX A100 / H100 / H200 /
    B200 / B300: 1.159-1.257x at the default constants), so a server on such a baseboard with no published figure of
    its own or its GPU's reference (the XE9680 with 8 x MI300X: 8,677 W summed, beside 10,200 W for the same chassis
    with 8 x 700 W H100) is planned on its sum scaled by the largest of them, the safer figure for racks and PSUs.
    Each system is summed as the catalog lists it (its own RAM, data drives and NICs).
    """
    ratios: list[tuple[float, str]] = []
    for p in catalog.platforms().values():
        if not p.max_power_w or p.kind not in BASEBOARD_KINDS or p.custom:
            continue
        most = max(p.gpu_counts)
        for gpu_id in p.gpu_ids:
            gpu = catalog.gpus()[gpu_id]
            nics = _nics(p, gpu, most, False, [])
            summed = component_power_w(gpu, most, p, int(p.ram_gib or 0), p.nvme_count or 0, nics, consts)
            ratios.append((p.max_power_w / summed, p.id))
    if not ratios:
        return None
    (low, low_id), (high, high_id) = min(ratios), max(ratios)
    return UnderRead(high, high_id, low, low_id)


def scaled_basis(under: UnderRead) -> str:
    """The basis of a summed 8-GPU baseboard figure scaled by :func:`baseboard_under_read`."""
    return f"{SUMMED} x {under.high:.3f}, the most a published 8-GPU maximum is over its parts ({under.high_id})"


def power_summed(platform: PlatformSpec, gpu: GpuSpec, gpus: int, summed_w: int, power: NodePower, under: UnderRead) -> Finding:
    """The warning on a full 8-GPU baseboard server planned on its parts summed and scaled (no published maximum)."""
    return Finding(
        "warning",
        POWER_SUMMED,
        f"{platform.id} with {gpus} x {gpu.id}: no published system maximum in the catalog (its own, or an 8-GPU "
        f"system with {gpu.id}), and its parts sum to {summed_w:,} W; the catalog's 8-GPU systems with a published "
        f"maximum draw {under.low:.3f}x ({under.low_id}) to {under.high:.3f}x ({under.high_id}) their summed parts, "
        f"so it is planned, racked and costed at {power.watts:,} W: check the vendor's power calculator for this "
        "configuration before filling racks",
    )


#: The basis of a platform's own ``max_power_w`` where its source publishes it as the system's maximum.
PUBLISHED_MAXIMUM = "published system maximum"


def max_power_label(platform: PlatformSpec) -> str:
    """What a platform's ``max_power_w`` is, by the catalog's own marks (newuser64 item 4).

    A figure in ``unsourced_fields`` is a belief; one marked ``max_power_approximate`` is its source's approximate
    consumption ("~14 kW"): neither is called a published maximum, which a facility signs breakers off against.
    """
    what, qualifier = _max_power_marks(platform)
    return f"{what}{qualifier}" if what else PUBLISHED_MAXIMUM


def _max_power_marks(platform: PlatformSpec) -> tuple[str, str]:
    """What an approximate ``max_power_w`` is and what it is not (``("", "")``: a published maximum)."""
    if "max_power_w" in platform.unsourced_fields:
        return "approximate system figure", ", unsourced in the catalog, not a published maximum"
    if platform.max_power_approximate:
        return "published approximate system figure", ", not a nameplate maximum"
    return "", ""


class NodePower(NamedTuple):
    """A node's wall power, the DC load its PSUs deliver, its basis, and whose published maximum it borrows.

    ``watts`` is for energy, racks and PUE; ``dc_load_w`` is compared with PSU ratings; ``borrowed_from`` is "" where
    the figure is the platform's own.
    """

    watts: int
    dc_load_w: int
    basis: str
    borrowed_from: str = ""

    @property
    def scaled(self) -> bool:
        """Whether the figure is the node's parts summed and scaled as a published system's (:func:`scaled_basis`)."""
        return self.basis.startswith(f"{SUMMED} x ")


def _limited(gpu: GpuSpec, saved_w: int) -> str:
    """The basis' words for boards under a power limit that lowered a published or given maximum by ``saved_w``."""
    return f", its GPUs limited to {gpu.tdp_w:,.0f} W each (-{saved_w:,} W)" if saved_w > 0 else ""


def node_power_w(
    platform: PlatformSpec, gpu: GpuSpec, gpus: int, ram_gib: int, drives: int, nics: tuple[Nic, ...], consts: Constants
) -> NodePower:
    """Wall power of one node, the DC load its PSUs deliver, and its basis.

    A full node of a platform with a published maximum uses it; a full 8-GPU baseboard system
    without one uses the published maximum of the reference system on the same baseboard (the
    baseboard, its NVSwitches and its fans dominate); everything else is summed from components.
    A published maximum is a wall figure, as the sum is: its DC load is taken after the PSU efficiency too.
    """
    full = gpus == max(platform.gpu_counts)
    # boards under a power limit draw it, not their TDP: a published maximum loses the difference at the wall (newuser115)
    saved = round(limited_power_saving_w(gpu, gpus) * (1 + consts.fan_power_fraction) / consts.psu_efficiency)
    # hostile98: a limit lowers a maximum to its parts' sum at the limit at most (a custom max_power_w under its
    # parts went negative at a deep limit), and never raises it
    floor = round(component_dc_load_w(gpu, gpus, platform, ram_gib, drives, nics, consts) / consts.psu_efficiency) if saved else 0
    if full and platform.max_power_w:
        basis = "as given in hardware.inventory" if platform.custom else max_power_label(platform)
        wall = max(int(platform.max_power_w) - saved, min(floor, int(platform.max_power_w)))
        return NodePower(wall, wall_to_dc_w(wall, consts), basis + _limited(gpu, int(platform.max_power_w) - wall))
    reference = reference_system(platform, gpu) if full else None
    if reference is not None and reference.max_power_w:
        what, qualifier = _max_power_marks(reference)
        basis = f"{what or 'published maximum'} of {reference.id} (same baseboard){qualifier}"
        wall = max(int(reference.max_power_w) - saved, min(floor, int(reference.max_power_w)))
        return NodePower(wall, wall_to_dc_w(wall, consts), basis + _limited(gpu, int(reference.max_power_w) - wall), reference.id)
    dc_load = component_dc_load_w(gpu, gpus, platform, ram_gib, drives, nics, consts)
    under = baseboard_under_read(consts) if full and platform.kind in BASEBOARD_KINDS else None
    if under is not None:  # an 8-GPU baseboard with no published figure: its sum under-reads as every one published
        wall = round(dc_load / consts.psu_efficiency * under.high)
        return NodePower(wall, wall_to_dc_w(wall, consts), scaled_basis(under), under.high_id)
    return NodePower(round(dc_load / consts.psu_efficiency), round(dc_load), SUMMED)


#: How a layout over its PSU capacity is described, and the code of the error that rules it out.
PSU_OVER = "more than its PSUs deliver without redundancy"
PSU_OVER_CAPACITY = "psu-over-capacity"
#: The warning of a node over its PSU capacity that is kept (owned, or its power figure another system's).
PSU_HEADROOM = "psu-headroom"
#: The note on a server to buy whose PSU figures the catalog lacks (its draw is checked against nothing).
PSU_UNKNOWN = "psu-unknown"
#: The warning of a fault-tolerant node (Dell FTR) that needs its redundant PSUs at full load: losing them caps the GPUs.
PSU_POWER_BRAKE = "psu-power-brake"


def redundant_psus(platform: PlatformSpec) -> int:
    """The PSUs held back as redundant: none where there is a single PSU, whatever the catalog believes."""
    count = platform.psu_count or 0
    return 0 if count <= 1 else platform.psu_redundant or 0


def psu_capacity_w(platform: PlatformSpec) -> float | None:
    """What a node's PSUs deliver with the redundant ones held back (N of N+M); None where the catalog gives no PSU."""
    if not platform.psu_count or not platform.psu_rating_w:
        return None
    return (platform.psu_count - redundant_psus(platform)) * platform.psu_rating_w


def psu_full_capacity_w(platform: PlatformSpec) -> float | None:
    """What a node may draw at full speed: every PSU where they share the load fault-tolerantly, else N of N+M."""
    if platform.psu_fault_tolerant and platform.psu_count and platform.psu_rating_w:
        return platform.psu_count * platform.psu_rating_w
    return psu_capacity_w(platform)


def believed_psu_fields(platform: PlatformSpec) -> list[str]:
    """The PSU figures the capacity rests on that the catalog marks as beliefs (``unsourced_fields``).

    A single PSU's redundancy is not among them: one PSU cannot be redundant, so the figure is not used.
    """
    used = ("psu.count", "psu.rating_w") + (("psu.redundant",) if (platform.psu_count or 0) > 1 else ())
    return [f for f in used if f in platform.unsourced_fields]


def node_build_text(nics: tuple[Nic, ...], spanning: bool = True) -> str:
    """What a node's draw counts besides its GPUs and host, so two draws of one platform say how they differ.

    'with 8 x connectx-7-400g-ib fabric NICs (a replica spanning servers)'; "" for a node without fabric NICs (newuser24
    item 1: one platform named twice, at 11,018 W and 11,252 W, without saying why). ``spanning``: whether a replica or
    job spans servers (the node's ``needs_fabric``); a server that has its fabric whatever runs on it (a custom server as
    owned, a DGX) names them as its own (newuser77 item 13: 8 x TP1 on an owned MI300X server read "(a replica spanning
    servers)").
    """
    fabric = next((n for n in nics if n.role == "fabric"), None)
    why = "a replica spanning servers" if spanning else "the server's own"
    return "" if fabric is None else f"with {fabric.count} x {fabric.nic_id} fabric NICs ({why})"


def psu_overload(
    platform: PlatformSpec, gpu: GpuSpec, gpus: int, power: NodePower, owned: bool = False, build: str = ""
) -> Finding | None:
    """A node whose DC load is more than its non-redundant PSU capacity: an error that rules the layout out, or a warning.

    A PSU's rating is its DC output: it is compared with the node's DC load (``power.dc_load_w``, the wall draw
    after the PSU efficiency), not with the wall draw, which also holds the PSU's own loss.

    A node to buy is ruled out (``psu-over-capacity``) when the power figure is this platform's own (its
    components summed, or its own published maximum), whether the catalog's PSU figures are sourced or
    believed: the plan never buys a node its own data says cannot be powered; the reason names the
    believed figures and that owned servers of the kind are kept. Where the power figure is another system's
    published maximum, the layout stays with a ``psu-headroom`` warning. A server the team already ``owned`` exists
    and runs, so it is never ruled out: a ``psu-headroom`` warning gives the figures, and says whether the power
    figure is another system's, the PSU figures are believed, or the sourced rating is exceeded at full load.
    Fault-tolerant PSUs (``psu_fault_tolerant``) power the node at full speed from all of them: over the
    non-redundant ones only, it is a ``psu-power-brake`` warning (losing the redundant PSUs caps the GPUs).
    ``build``: what the draw counts besides the GPUs (:func:`node_build_text`), named in the text.
    """
    capacity = psu_capacity_w(platform)
    if capacity is None or power.dc_load_w <= capacity:
        return None
    count, rating, redundant = platform.psu_count or 0, platform.psu_rating_w or 0.0, redundant_psus(platform)
    supplies = f"{count - redundant} of {count} x {rating:,.0f} W" if redundant else f"{count} x {rating:,.0f} W"
    built = f", {build}" if build else ""
    drawn = (
        f"{platform.id} with {gpus} x {gpu.id} draws {power.watts:,} W at the wall ({power.basis}{built}), "
        f"a DC load of {power.dc_load_w:,} W"
    )
    over = f"{drawn}, {PSU_OVER} ({supplies} = {capacity:,.0f} W)"
    believed = f"{', '.join(fields)} believed, not sourced" if (fields := believed_psu_fields(platform)) else ""
    full = psu_full_capacity_w(platform) or capacity
    if platform.psu_fault_tolerant and power.dc_load_w <= full:
        spare = count - math.ceil(power.dc_load_w / rating)
        return Finding(
            "warning",
            PSU_POWER_BRAKE,
            f"{over}: its fault-tolerant redundancy runs it on all {count} x {rating:,.0f} W = {full:,.0f} W and keeps "
            f"full speed with up to {spare} PSU(s) lost; past that (a feed of {redundant} down) it caps the GPUs' power "
            "(the vendor's power brake) instead of shutting down, and serving slows until the PSUs are back"
            + (f"; {believed}: check the chassis' PSU" if believed else ""),
        )
    if owned and redundant and power.dc_load_w <= count * rating:
        return Finding("warning", PSU_HEADROOM, _redundancy_lost(platform, power, drawn, supplies, capacity, believed))
    if owned and power.borrowed_from:
        why = (
            f"kept because the server is owned and runs, and the power figure is {_not_own(power)}: check the "
            "chassis' PSU rating for this configuration"
        )
        return Finding("warning", PSU_HEADROOM, f"{over}; {why}")
    if owned:
        why = (
            f"{believed}: kept because the server is owned and runs; check the chassis' PSU rating"
            if believed
            else "kept because the server is owned, but its PSUs are over their rating at full load: cap the GPUs' "
            "power limit (nvidia-smi -pl) or check the chassis' PSU configuration"
        )
        return Finding("warning", PSU_HEADROOM, f"{over}; {why}")
    if not power.borrowed_from:
        unblock = (
            f"; {believed}: check the chassis' PSU (servers of this kind already owned, listed under "
            "hardware.inventory, are kept with a psu-headroom warning)"
        )
        return Finding("error", PSU_OVER_CAPACITY, over + (unblock if believed else ""))
    return Finding(
        "warning",
        PSU_HEADROOM,
        f"{over}; not ruled out because the power figure is {_not_own(power)}: check the chassis' PSU rating "
        "for this configuration before buying",
    )


def _redundancy_lost(platform: PlatformSpec, power: NodePower, drawn: str, supplies: str, capacity: float, believed: str) -> str:
    """An owned node over its N of N+M PSUs but within all of them: it runs at full power, its redundancy is what is lost.

    newuser64 item 2: a 1+1 server of 2 x 2,000 W at a 2,820 W DC load was told its PSUs were "over their rating at full
    load" and to cap its GPUs, although both PSUs together carry it: only losing one overloads the other.
    """
    count, rating = platform.psu_count or 0, platform.psu_rating_w or 0.0
    lost_ok = count - math.ceil(power.dc_load_w / rating)
    keeps = f"it keeps full power with up to {lost_ok} PSU(s) lost, but " if lost_ok else ""
    left_w = (count - lost_ok - 1) * rating
    cap_w = math.floor(capacity * power.watts / power.dc_load_w)  # the wall draw whose DC load N of N+M deliver
    text = (
        f"{drawn}, {PSU_OVER} ({supplies} = {capacity:,.0f} W) but within all {count} x {rating:,.0f} W = "
        f"{count * rating:,.0f} W, which share the load: the server runs at full power; what it lacks at full load is "
        f"PSU redundancy: {keeps}losing {lost_ok + 1} PSU(s) (or their feed) leaves {left_w:,.0f} W for its "
        f"{power.dc_load_w:,} W DC load. Kept because the server is owned; to keep its "
        f"{count - redundant_psus(platform)}+{redundant_psus(platform)} redundancy, cap it at {cap_w:,} W at the wall "
        f"({capacity:,.0f} W DC: the GPUs' power limit, nvidia-smi -pl), or accept that a PSU failure at full load "
        "overloads the others"
    )
    if power.borrowed_from:
        text += f"; the power figure is {_not_own(power)}: check the chassis' draw in this configuration"
    if believed:
        text += f"; {believed}: check the chassis' PSU rating"
    return text


#: A PSU check passed by less than this share of the PSUs' capacity, on a rating the catalog marks as a belief, is said
#: (``psu-margin-believed``). A reporting threshold ("a few percent", newuser64 item 6), not a measured figure.
PSU_MARGIN_SAID_FRACTION = 0.05
#: The note on a PSU check that passes by a thin margin on a believed or derived PSU figure.
PSU_MARGIN_BELIEVED = "psu-margin-believed"


def psu_margin_believed(platform: PlatformSpec, gpu: GpuSpec, gpus: int, power: NodePower) -> Finding | None:
    """A node within its N of N+M PSUs by under :data:`PSU_MARGIN_SAID_FRACTION`, where that rests on believed figures.

    newuser64 item 6: a Dell XE9680 with 8 x H100 (a 9,588 W DC load) passed against 3 of 6 x 3,200 W = 9,600 W, 12 W
    of margin, with ``psu.rating_w`` derived (19,200 W over six): the check and the feed-loss check on one side's three
    PSUs both rest on it, and nothing said so. None where the margin is wider, or the PSU figures are sourced.
    """
    capacity = psu_capacity_w(platform)
    fields = believed_psu_fields(platform)
    if capacity is None or not fields or power.dc_load_w > capacity:
        return None
    margin = capacity - power.dc_load_w
    if margin >= PSU_MARGIN_SAID_FRACTION * capacity:
        return None
    count, rating, redundant = platform.psu_count or 0, platform.psu_rating_w or 0.0, redundant_psus(platform)
    supplies = f"{count - redundant} of {count} x {rating:,.0f} W" if redundant else f"{count} x {rating:,.0f} W"
    return Finding(
        "info",
        PSU_MARGIN_BELIEVED,
        f"{platform.id} with {gpus} x {gpu.id} draws {power.watts:,} W at the wall ({power.basis}), a DC load of "
        f"{power.dc_load_w:,} W, within its PSUs without redundancy ({supplies} = {capacity:,.0f} W) by "
        f"{margin:,.0f} W ({margin / capacity:.1%}); that margin rests on {', '.join(fields)}, which the catalog marks "
        "as derived or believed, not sourced: check the chassis' PSU rating at the site's feed voltage before "
        "relying on it",
    )


def _not_own(power: NodePower) -> str:
    """What a power figure that is not the node's own is: another system's maximum, or its parts scaled as one's."""
    if power.scaled:
        return f"its parts summed and scaled as {power.borrowed_from}'s published maximum is over its own, an estimate"
    return "another system's"


def psu_unknown(platform: PlatformSpec, gpu: GpuSpec, gpus: int, power: NodePower) -> Finding:
    """A server to buy whose PSUs the catalog does not give: its draw is checked against nothing, so the plan says so.

    An info, not a warning: it is the catalog's gap, not the plan's, and a warning would fail ``--fail-on warning``
    on every plan of such a chassis.

    newuser25 item 13: a 2U Dell R760xa with 4 x 600 W cards (3,762 W at the wall) was chosen without a word. Where
    the catalog's GPU list for the chassis is itself marked a belief (``gpu_ids`` unsourced), the warning says so.
    """
    believed = (
        f"; {gpu.id} in this chassis is also a belief (the catalog's GPU list for it is not all sourced): check the "
        "vendor's GPU support for it"
        if "gpu_ids" in platform.unsourced_fields
        else ""
    )
    return Finding(
        "info",
        PSU_UNKNOWN,
        f"{platform.id} with {gpus} x {gpu.id} draws {power.watts:,} W at the wall ({power.basis}), a DC load of "
        f"{power.dc_load_w:,} W; the catalog has no PSU figure for this chassis, so nothing checks that its power "
        f"supplies deliver that: check the chassis' PSU configuration for these GPUs before buying{believed}",
    )


def _gpu_generation(gpu: GpuSpec) -> str:
    for gen, prefixes in (("ampere", ("a100",)), ("hopper", ("h100", "h200")), ("blackwell", ("b200", "b100"))):
        if gpu.id.startswith(prefixes):
            return gen
    return ""


@functools.cache
def most_catalog_bays() -> int:
    """The most NVMe data drives any catalog chassis is published to take a host (platforms.json max_nvme_drives)."""
    return max((p.max_nvme_drives or 0 for p in catalog.platforms().values()), default=0)


def ram_needed_gib(needs: NodeNeeds, consts: Constants) -> int:
    """GiB a node must hold: the OS and what its work keeps in host memory (a ``ram-short`` reason's "needed")."""
    return math.ceil((consts.host_os_ram_bytes + needs.host_ram_bytes) / GIB)


def _ram_wanted_gib(needs: NodeNeeds, consts: Constants) -> tuple[int, int]:
    """GiB a node must hold (the OS and what its work keeps in host memory) and wants (with the model files' page cache)."""
    hard = ram_needed_gib(needs, consts)
    return hard, math.ceil((consts.host_os_ram_bytes + needs.host_ram_bytes + needs.model_file_bytes) / GIB)


def _ram_counted(needs: NodeNeeds, consts: Constants) -> str:
    """``: 16 GiB kept for the OS and its processes and <what the deployments hold>``, where they say it; '' else."""
    if not needs.host_ram_text:
        return ""
    return f": {consts.host_os_ram_bytes / GIB:g} GiB kept for the OS and its processes and {needs.host_ram_text}"


def memory_chosen(platform: PlatformSpec, cpu: CpuSpec | None) -> bool:
    """Whether the planner chooses a node's DIMMs for its work (:func:`node_memory`), not takes them as it is built.

    Not: a cloud instance or a listed system (its memory as built), an owned server (``ram_gib`` given), soldered
    memory, or a CPU the catalog does not know.
    """
    configurable = platform.provider == "baremetal" and not platform.custom
    return cpu is not None and configurable and not soldered_memory(cpu) and not platform.ram_as_owned


def node_memory(
    platform: PlatformSpec, cpu: CpuSpec | None, gpu: GpuSpec, gpus: int, needs: NodeNeeds, consts: Constants
) -> MemoryLayout | None:
    """The DIMMs :func:`assemble_node` builds a node of ``platform`` with for ``needs``; None where it chooses none.

    None: memory as the platform is built (a cloud instance, a listed system), as owned (``ram_gib`` given), soldered,
    or on a CPU the catalog does not know. The build holds the platform's default RAM, the published minimum for its
    GPUs and what its work needs with the model files' page cache; a node that streams host memory every step
    (``needs.host_dram_streamed``) keeps one DIMM a channel where that holds all but the page cache
    (:func:`~generator.planner.bom.fill_channels`).
    """
    if not memory_chosen(platform, cpu):
        return None
    assert cpu is not None
    hard_gib, want_gib = _ram_wanted_gib(needs, consts)
    floor_gib = minimum_ram_gib(platform, gpu, gpus)  # the published minimum per GPU (0 where none)
    wanted = int(max(platform.ram_gib or 0, want_gib, floor_gib))
    keep = int(max(platform.ram_gib or 0, hard_gib, floor_gib)) if needs.host_dram_streamed else None
    return fill_channels(cpu, platform.cpu_sockets, wanted, platform.ram_max_gib, keep)


def node_dram_mt_per_s(
    platform: PlatformSpec, cpu: CpuSpec, gpu: GpuSpec, gpus: int, host_ram_bytes: int, consts: Constants
) -> int:
    """The DDR rate a node's DIMMs run at where its work holds ``host_ram_bytes`` and streams them every step.

    A node the planner builds: the DIMMs :func:`node_memory` chooses for it (newuser76 item 13: a Ryzen 9 7950X tower
    built with 4 x 48 GiB at DDR5-3600 had its CPU optimizer step timed at the CPU's DDR5-5200). Memory as built or as
    owned: the CPU's rating at the fewest DIMMs a channel that hold the platform's RAM, as a machine given by its RAM is
    counted (:func:`generator.calculator.machine.build_machine`); soldered memory, or no RAM figure: the CPU's rating.
    """
    needs = NodeNeeds(0, host_ram_bytes, 0, 0, needs_fabric=False, host_dram_streamed=True)
    layout = node_memory(platform, cpu, gpu, gpus, needs, consts)
    if layout is not None:
        return layout.mt_per_s
    if soldered_memory(cpu) or not platform.ram_gib:
        return cpu.ddr_mt_per_s
    sockets = max(platform.cpu_sockets, 1)
    return rated_mt_per_s(cpu, dimms_per_channel(cpu, cpu.memory_channels, platform.ram_gib / sockets))


def assemble_node(
    platform: PlatformSpec,
    gpu: GpuSpec,
    gpus: int,
    needs: NodeNeeds,
    consts: Constants,
    findings: list[Finding],
    owned: bool = False,
) -> NodeSpec:
    """Configure one node of ``platform`` with ``gpus`` GPUs for what its deployments need (``owned``: all already owned)."""
    cpu = node_cpu(platform, gpu, gpus, consts)
    wanted_cores = wanted_cpu_cores(platform, gpu, gpus, consts)  # the published minimum per GPU where higher
    configurable = platform.provider == "baremetal" and not platform.custom  # parts are chosen, not as owned
    if cpu:
        cpu_text, cores = _cpu_text(platform, cpu, platform.cpu_sockets), cpu.cores * platform.cpu_sockets
    elif platform.custom:
        cores = platform.vcpus or 0  # a custom server's total cores, where given
        cpu_text = f"{cores} cores (as owned; CPU model not in the catalog)" if cores else "CPU not given (owned server)"
    elif platform.provider == "baremetal":
        cores = max(wanted_cores, 8 * platform.cpu_sockets)
        cpu_text = f"{platform.cpu_sockets} socket(s), at least {cores} cores in total (model per vendor configuration)"
    else:
        per_core = 1 if platform.vcpus_physical else 2  # SMT's two a core, where the provider says nothing else
        cpu_text, cores = f"{platform.vcpus} vCPUs", (platform.vcpus or 0) // per_core
    if cores < wanted_cores and (cores or not platform.custom):
        # a cloud instance's vCPUs come with the shape the search chose: nothing at the workload changes them
        cloud = platform.provider != "baremetal"
        fixed = "; fixed by the instance type" if cloud else ""
        # src97 (newuser83 item 9): the halving is a default, not a source; ND H200 v5's pages give 96 vCPUs, not cores
        halved = (
            f" ({platform.vcpus} vCPUs counted two a core: no source in the catalog says they are physical cores)"
            if cloud and not platform.custom and not platform.vcpus_physical and cpu is None
            else ""
        )
        findings.append(
            Finding(
                "info" if cloud else "warning",
                "few-cpu-cores",
                f"{platform.id}: {cores} CPU cores{halved} for {counted_noun(gpus, 'GPU')}; {wanted_cores} wanted"
                f" ({wanted_cores_basis(platform, gpu, consts)}{fixed})",
            )
        )

    # Hard: the OS and what must live in host memory (offloaded states, data loaders).
    # Soft: page cache for the model files, so a restart reloads from RAM instead of disk.
    hard_gib, want_gib = _ram_wanted_gib(needs, consts)
    floor_gib = minimum_ram_gib(platform, gpu, gpus)  # the published minimum per GPU (0 where none)
    memory_text = None
    if configurable and not soldered_memory(cpu) and not platform.ram_as_owned:
        ram_gib = int(max(platform.ram_gib or 0, _round_up(want_gib, SMALLEST_BUILD_GIB), floor_gib))
        layout = node_memory(platform, cpu, gpu, gpus, needs, consts)
        if layout is not None:
            ram_gib, memory_text = layout.total_gib, layout.text
        if platform.ram_max_gib and ram_gib > platform.ram_max_gib:
            ram_gib = int(max(platform.ram_max_gib, platform.ram_gib or 0))
            message = f"{platform.id} takes at most {platform.ram_max_gib:g} GiB RAM; {want_gib} GiB wanted"
            if hard_gib > ram_gib:
                findings.append(Finding("error", "ram-exceeds-platform", message))
            else:
                findings.append(Finding("warning", "ram-page-cache", message))
        elif hard_gib > ram_gib:  # fix161: the most DIMMs its channels take hold less than its work needs in host memory
            findings.append(
                Finding(
                    "error",
                    "ram-exceeds-platform",
                    f"{platform.id} takes at most {ram_gib} GiB RAM in its CPUs' channels ({memory_text}); {hard_gib} GiB "
                    f"needed{_ram_counted(needs, consts)}",
                )
            )
    else:
        ram_gib = int(platform.ram_gib or 0)  # as built: 0 where the catalog has no sourced figure
        memory_text = soldered_text(cpu, ram_gib, platform.hosts) if cpu and soldered_memory(cpu) else None
        if ram_gib and hard_gib > ram_gib:
            # RAM an owned group states says where it is given (newuser43 item 2)
            owned_ram = f" ({OWNED_RAM})" if platform.ram_as_owned else ""
            counted = _ram_counted(needs, consts)
            findings.append(
                Finding("error", RAM_SHORT, f"{platform.id} has {ram_gib} GiB RAM{owned_ram}; {hard_gib} GiB needed{counted}")
            )
        elif ram_gib and want_gib > ram_gib:
            findings.append(
                Finding(
                    "info",
                    "ram-page-cache",
                    f"{platform.id}: {ram_gib} GiB RAM cannot also cache the model files: {want_gib} GiB wanted, the "
                    f"{hard_gib} GiB the OS and the deployments need in host memory and "
                    f"{want_gib - hard_gib} GiB of model files",
                )
            )
    if floor_gib and ram_gib < floor_gib:
        findings.append(
            Finding(
                "warning",
                "ram-below-published-minimum",
                f"{platform.id}: {ram_gib} GiB RAM for {gpus} x {gpu.id}; the published minimum asks {floor_gib} GiB",
            )
        )

    drive = catalog.drives().get(platform.nvme_drive_id or (DEFAULT_DRIVE if configurable else ""))
    nvme_need_tb = (needs.model_file_bytes + needs.dataset_bytes + needs.checkpoint_bytes) / TB
    # the whole system's drives (PlatformSpec multiplies the catalog's per-host figures); each host caches its own copy
    nvme_tb, drives, hosts = platform.nvme_total_tb or 0.0, platform.nvme_count, platform.hosts
    # drives the catalog counts without a sourced capacity (a GB300 NVL72 tray's E1.S drives): unknown, not 0 TB
    capacity_unknown = platform.nvme_total_tb is None and drives > 0
    each = " per host" if hosts > 1 else ""
    # a system the catalog lists with its drives (a DGX) is built with those: the planner does not add bays to it
    # (fuzz14 item 3: a DGX H100 was given 16, then 1,042 drives for a dataset); a server whose drives are chosen
    # takes as many as the files need, up to the bays a source gives its chassis (fuzz15 item 1: a 2U R760, bought or
    # owned, was given 53 drives), and an owned one is said to need them
    if capacity_unknown:
        findings.append(
            Finding(
                "warning",
                "nvme-capacity-unknown",
                f"{platform.id} has {drives // hosts} NVMe drives{each} of a capacity the catalog has no source for; "
                f"{nvme_need_tb:.2f} TB wanted{each}: check that they hold it"
                + (", or keep the dataset on network storage" if needs.dataset_bytes else ""),
            )
        )
    elif nvme_tb / hosts < nvme_need_tb and configurable and not drives:
        size = drive.capacity_tb if drive else 3.84
        per_host = max(math.ceil(nvme_need_tb / size), 1)
        bays = platform.max_nvme_drives
        if bays is not None and per_host > bays:
            findings.append(
                Finding(
                    "warning",
                    "nvme-short",
                    f"{platform.id} takes at most {bays} NVMe drives a host ({bays * size:g} TB of {size:g} TB drives); "
                    f"{nvme_need_tb:.2f} TB wanted: keep the dataset on network storage, or plan larger drives",
                )
            )
        elif owned and needs.dataset_bytes:
            findings.append(
                Finding(
                    "warning",
                    "nvme-owned",
                    f"{platform.id} (owned) is planned with {per_host} NVMe drives a host for {nvme_need_tb:.2f} TB: "
                    "specgen does not know the drives of a server you own; check that it holds them, or keep the "
                    "dataset on network storage",
                )
            )
        elif bays is None and per_host > most_catalog_bays():
            findings.append(
                Finding(
                    "warning",
                    "nvme-bays-unknown",
                    f"{platform.id} is planned with {per_host} NVMe drives a host for {nvme_need_tb:.2f} TB; the catalog has "
                    f"no source for its drive bays, and the most any catalog server takes is {most_catalog_bays()}: check "
                    "that it holds them, or keep the dataset on network storage",
                )
            )
        drives = min(per_host, bays or per_host) * hosts
        nvme_tb = round(drives * size, 2)
    elif nvme_tb / hosts < nvme_need_tb and platform.kind == "cloud-instance":
        findings.append(Finding("info", "cloud-block-storage", cloud_storage_text(platform, nvme_need_tb)))
    elif nvme_tb / hosts < nvme_need_tb:
        findings.append(
            Finding(
                "warning",
                "nvme-short",
                f"{platform.id} has {nvme_tb / hosts:g} TB local NVMe{each}; {nvme_need_tb:.2f} TB wanted{each}",
            )
        )
    read = (drive.seq_read_gb_per_s if drive else 0.0) * drives
    write = (drive.seq_write_gb_per_s if drive else 0.0) * drives

    nics = _nics(platform, gpu, gpus, needs.needs_fabric, findings)
    power_figure = node_power_w(platform, gpu, gpus, ram_gib, drives, nics, consts)
    power, basis = power_figure.watts, power_figure.basis
    # one basis for comparing layouts: every node's components summed (the published maximum, where
    # there is one, stays the figure racks and PSUs are provisioned for)
    components = component_power_w(gpu, gpus, platform, ram_gib, drives, nics, consts)
    under = baseboard_under_read(consts)
    if under is not None and power_figure.scaled:  # summed and scaled: an estimate
        findings.append(power_summed(platform, gpu, gpus, components, power_figure, under))
    psu = None
    if platform.psu_count and platform.psu_rating_w:
        redundant = redundant_psus(platform)
        tolerant = " fault-tolerant" if platform.psu_fault_tolerant else ""
        psu = f"{platform.psu_count}x {platform.psu_rating_w:g} W ({platform.psu_count - redundant}+{redundant}{tolerant})"
        build = node_build_text(nics, spanning=needs.needs_fabric)
        over = psu_overload(platform, gpu, gpus, power_figure, owned, build)
        if over is not None and over.level != "error" and power_figure.scaled:
            # a scaled estimate keeps the layout with a warning, unless its own parts summed already overload the PSUs
            dc_load = component_dc_load_w(gpu, gpus, platform, ram_gib, drives, nics, consts)
            own = psu_overload(platform, gpu, gpus, NodePower(components, round(dc_load), SUMMED), owned, build)
            over = own if own is not None and own.level == "error" else over
        if over is not None:
            findings.append(over)
        elif (thin := psu_margin_believed(platform, gpu, gpus, power_figure)) is not None:
            findings.append(thin)
    elif configurable and not owned:  # newuser64 item 5: a published or borrowed figure is checked against nothing too
        findings.append(psu_unknown(platform, gpu, gpus, power_figure))
    cooling = "liquid" if "liquid" in (platform.cooling, gpu.cooling) else "air"
    return NodeSpec(
        platform_id=platform.id,
        platform_name=platform.name,
        kind=platform.kind,
        provider=platform.provider,
        instance_type=platform.instance_type,
        gpu_id=gpu.id,
        gpu_name=gpu.name,
        gpus=gpus,
        gpu_memory_gib=round(gpu.memory_bytes / GIB, 2),
        cpu=cpu_text,
        cpu_cores=cores,
        ram_gib=ram_gib or None,  # None: no sourced figure (as built, the catalog has none)
        nvme_tb=None if capacity_unknown else round(nvme_tb, 2),
        nvme_drives=drives,
        nvme_read_gb_per_s=round(read, 2),
        nvme_write_gb_per_s=round(write, 2),
        nics=nics,
        power_w=power,
        power_basis=basis,
        heat_btu_per_h=heat_btu_per_h(power),
        cooling=cooling,
        rack_units=platform.rack_units,
        psu=psu,
        nvswitch=has_nvswitch(platform, gpu, gpus),
        memory=memory_text,
        power_components_w=components,
        boot_drives=boot_drives_text() if configurable else None,
        host_minimum=minimum_text(platform, gpu, gpus, cores, ram_gib) if configurable and not soldered_memory(cpu) else None,
        hosts=platform.hosts,
        host_cpu=_host_cpu_text(platform, cpu),
    )


#: Where a cloud instance keeps files its local instance store does not hold: the provider's block storage.
CLOUD_BLOCK_STORAGE = {
    "aws": "an EBS volume (the root volume or one attached)",
    "gcp": "the boot disk or an attached Persistent Disk / Hyperdisk",
    "azure": "the OS disk or an attached managed disk",
}


def cloud_storage_text(platform: PlatformSpec, need_tb: float) -> str:
    """Where a cloud instance's files go when its local NVMe (instance store) is short or absent.

    Not a warning: the instance type's local store is fixed, and the files go on the provider's block storage
    (a 15 GB model on GCP a2-highgpu-2g, which has no local SSD, was warned of "0 TB local NVMe").
    """
    local_tb = (platform.nvme_total_tb or 0.0) / platform.hosts
    local = f"{local_tb:g} TB of local NVMe (instance store)" if local_tb else "no local NVMe (instance store)"
    where = CLOUD_BLOCK_STORAGE.get(platform.provider, "the instance's boot disk or attached block storage")
    # newuser100: a 2.3 GB embedding model read "the 0.00 TB of files"; under a tenth of a TB the files are in GB
    files = f"{need_tb * 1000:,.1f} GB" if need_tb < 0.1 else f"{need_tb:.2f} TB"
    return f"{platform.id} has {local}; the {files} of files go on {where}: size it to hold them"


def _cpu_text(platform: PlatformSpec, cpu: CpuSpec, sockets: int) -> str:
    """``<sockets>x <CPU>``, saying so where the chassis does not fix the model (the planner chose it)."""
    text = f"{sockets}x {cpu.name}"
    return text if platform.cpu_id else text + " (smallest catalog CPU with the cores wanted; the chassis takes others)"


def _host_cpu_text(platform: PlatformSpec, cpu: CpuSpec | None) -> str | None:
    """The CPUs of one host of a platform of several (its sockets split evenly over them); None for one host."""
    if platform.hosts == 1 or cpu is None or platform.cpu_sockets % platform.hosts:
        return None
    return _cpu_text(platform, cpu, platform.cpu_sockets // platform.hosts)


def has_nvswitch(platform: PlatformSpec, gpu: GpuSpec, gpus: int) -> bool:
    """Whether the node's GPUs sit on an NVSwitch baseboard (then Fabric Manager must run with the driver).

    Eight SXM GPUs with NVLink of an architecture whose 8-GPU board has NVSwitches (:data:`NVSWITCH_GENERATION`) are an
    HGX baseboard whether bought (``hgx-8gpu``) or rented as a cloud instance (p4d/p5/p5e/p5en/p6, ND A100 v4 / H100 /
    H200 v5, a2/a3/a4); eight V100 SXM2 are a DGX-1 class hybrid cube mesh without one (newuser57 item 5).
    """
    board = platform.kind in ("hgx-8gpu", "cloud-instance") and nvswitch_generation(gpu) is not None
    return board and gpu.form_factor == "sxm" and gpu.interconnect_kind == "nvlink" and gpus >= 8


def nvswitch_generation(gpu: GpuSpec) -> int | None:
    """The NVSwitch generation of ``gpu``'s 8-GPU SXM baseboard; None where its architecture's board has none."""
    return NVSWITCH_GENERATION.get(gpu.architecture)


def node_cpu(platform: PlatformSpec, gpu: GpuSpec, gpus: int, consts: Constants) -> CpuSpec | None:
    """The CPU model a node of ``platform`` is built with, or None where nothing names one.

    The platform's own, else, where the vendor offers a choice (catalog bare metal), the smallest catalog
    CPU with the cores wanted.
    """
    cpu = catalog.cpus().get(platform.cpu_id or "")
    if cpu is None and platform.provider == "baremetal" and not platform.custom:
        cpu = choose_cpu(
            platform.cpu_sockets, wanted_cpu_cores(platform, gpu, gpus, consts), platform.cpu_vendor, platform.cpu_socket
        )
    return cpu


def choose_cpu(sockets: int, wanted_cores: int, vendor: str | None = None, socket: str | None = None) -> CpuSpec | None:
    """The smallest server CPU (by cores, then id) giving ``wanted_cores`` over ``sockets`` sockets.

    Used to estimate the power of platforms whose CPU model varies by configuration; only CPUs of the
    platform's vendor and socket, where it states them (a chassis takes one socket generation), and not those
    catalogued for ``estimate --cpu`` alone (``chassis_choice`` false).
    """
    server = [
        c
        for c in catalog.cpus().values()
        if c.chassis_choice
        and c.memory_channels >= 8
        and (vendor is None or c.vendor == vendor)
        and (socket is None or c.socket == socket)
    ]
    enough = sorted((c for c in server if c.cores * sockets >= wanted_cores), key=lambda c: (c.cores, c.id))
    if enough:
        return enough[0]
    return max(server, key=lambda c: (c.cores, c.id), default=None)


def node_link(platform: PlatformSpec, gpu: GpuSpec, gpus_per_node: int, fabric: bool) -> tuple[float, str]:
    """Gb/s a node sends to other nodes, and what carries it: the GPU fabric the node is built with, else its front end.

    ``fabric``: the job asks for a fabric (``NodeNeeds.needs_fabric``); the NICs are those :func:`node_fabric` builds the
    node with for that ask, so the step is timed over the link the node's parts list names (newuser23 item 1).
    """
    nics = catalog.nics()
    if platform.provider != "baremetal" and platform.fabric_nic_id and platform.fabric_nic_count:
        # the GPU NICs alone carry NCCL's traffic: an A3's 4 x 200 Gb/s, not the 1,000 its primary NIC adds to
        # (newuser28 item 7; https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx)
        nic = nics[platform.fabric_nic_id]
        gbps = nic.port_gbps * nic.ports * platform.fabric_nic_count
        if unattached(platform):
            # newuser45 item 8: the node pools rendered attach none of them, so the step crosses the primary NIC
            primary = primary_nic_gbps(platform, gbps)
            return primary, f"{primary:g} Gb/s primary NIC (the GPU NICs attached to no network: kubernetes.gpu_networks)"
        return gbps, f"{platform.fabric_nic_count} x {nic.port_gbps * nic.ports:g} Gb/s GPU NICs of the instance"
    built = node_fabric(platform, gpu, gpus_per_node, fabric) if platform.provider == "baremetal" else None
    if built is not None:
        from generator.planner.nic_host_link import capped_text, timed_nic_gbps, vendor_nic_id  # newuser111 item 3

        nic = nics[built.nic_id]
        vendor = vendor_nic_id(platform.id, platform.custom)
        said = f"{built.nics} x {nic.port_gbps:g} Gb/s GPU fabric" + ("" if nic.id == vendor else capped_text(nic, gpu))
        return timed_nic_gbps(nic, gpu, vendor) * built.nics, said
    return unfabricated_link(platform)
