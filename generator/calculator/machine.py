"""An existing machine (a home or office server): what the user says about it, and its bandwidths."""

from __future__ import annotations

import math

from generator import catalog
from generator.catalog.dimms import dimm_sizes_gib, dimms_per_channel, rated_mt_per_s, two_dimm_note
from generator.catalog.records import CpuSpec, GpuSpec, dram_bandwidth_gb_per_s
from generator.errors import InfeasibleError, InputError
from generator.named_tuple import NamedTuple
from generator.sizing.constants import Constants
from generator.sizing.offload import Machine
from generator.sizing.performance import pcie_gb_per_s
from generator.units import GIB

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Literal, TypeVar

    _Placed = TypeVar("_Placed")

#: The catalog CPU whose memory (channels x DDR speed) is assumed, by kind of machine, when the user
#: gives neither a CPU nor memory_channels and ddr_mt_per_s: a desktop's dual-channel DDR5, a
#: GPU server's 8-channel DDR5 socket, a superchip's own Grace. Their figures and sources are the catalog records'.
ASSUMED_CPU = {"desktop": "core-i9-14900k", "server": "xeon-platinum-8480-plus", "superchip": "nvidia-grace"}


def machine_kind(spec: FixedSpec, gpu: GpuSpec | None) -> str:
    """``superchip`` for a GPU on a CPU's module (GH200, GB200), ``server`` for 4+ GPUs or SXM / OAM modules, else ``desktop``.

    A machine without a GPU (``gpu`` None) is a desktop (newuser86 item 2: a workstation with no GPU).
    """
    if gpu is None:
        return "desktop"
    if gpu.form_factor == "superchip":
        return "superchip"
    return "server" if spec.gpu_count >= 4 or gpu.form_factor != "pcie" else "desktop"


def pcie_not_applied(spec: FixedSpec) -> str | None:
    """Why a PCIe generation or width the user gave is not used (the GPU reaches host memory over NVLink-C2C), else None."""
    gpu = catalog.find_gpu(spec.gpu)
    if not gpu.host_link_gb_per_s_bidir or (spec.pcie_gen is None and spec.pcie_lanes in (None, 16)):
        return None
    return (
        f"{gpu.id} reaches host memory over NVLink-C2C ({gpu.host_link_gb_per_s_bidir / 2:g} GB/s per direction), not "
        "PCIe: the PCIe generation and lanes given do not apply to offload"
    )


def host_link(spec: FixedSpec, gpu: GpuSpec) -> tuple[float, str]:
    """GB/s per direction between a GPU and host memory, and its name: a superchip's NVLink-C2C, else PCIe.

    The offload model's PCIe terms (streamed weights, cold start) cross this link.
    """
    if gpu.host_link_gb_per_s_bidir:
        return gpu.host_link_gb_per_s_bidir / 2, "NVLink-C2C to Grace"
    gen = min(spec.pcie_gen or gpu.pcie_gen, gpu.pcie_gen)
    lanes = slot_lanes(spec, gpu)
    return pcie_gb_per_s(gen, lanes), f"PCIe Gen{gen} x{lanes}"


def slot_lanes(spec: FixedSpec, gpu: GpuSpec) -> int:
    """PCIe lanes each GPU has: as given, else what the CPU gives each of ``gpu_count`` slots, else 16.

    A desktop CPU's x16 is split x8/x8 for two GPUs (newuser25 item 12). The CPU is the one given, else the one whose
    memory and cores are assumed (:func:`_memory_cpu`): newuser85, two RTX 3090s with no CPU were timed at x16 each
    while the machine line said "assumed like Intel Core i9-14900K", whose x16 they share (TTFT 7.41 s, 13.84 s with
    --cpu core-i9-14900k).
    """
    if spec.pcie_lanes is not None:
        return spec.pcie_lanes
    return gpu.in_slots(_memory_cpu(spec).gpu_slot_lanes).lanes_with(spec.gpu_count)


def ddr_assumption(spec: FixedSpec, consts: Constants) -> str | None:
    """The warning to give when the DRAM bandwidth is assumed rather than known, else ``None``.

    ``consts``: the workload's (or the estimate's), whose core rates the engine counts.
    """
    if spec.cpu or (spec.memory_channels and spec.ddr_mt_per_s):
        return None
    kind = machine_kind(spec, _spec_gpu(spec))
    cpu = catalog.cpus()[ASSUMED_CPU[kind]]
    # the rate counted: the CPU's at the DIMMs a channel that hold the RAM (newuser49 item 5: "DDR-5600" was said of
    # 256 GiB counted at the 2-DIMM DDR-4000)
    mts = _ram_mt_per_s(spec, cpu, socket_channels(spec, cpu))
    rate = f"DDR-{mts}" + (" at 2 DIMMs a channel" if mts < cpu.ddr_mt_per_s else "")
    if spec.memory_channels:  # the speed alone is assumed
        assumed = rate
    elif spec.ddr_mt_per_s:  # the channels alone
        assumed = f"{cpu.memory_channels} channels a socket"
    else:
        assumed = f"{rate}, {cpu.memory_channels} channels a socket"
    cores = (
        f"the {spec.cpu_cores} cores given for llama.cpp's threads"
        if spec.cpu_cores
        else f"its {cpu.llama_cpp_cores} cores for llama.cpp's threads"
    )
    return (
        f"no CPU given: system-RAM bandwidth assumed for a {kind} ({assumed}, like {cpu.name}) and "
        f"{cores}, {assumed_core_rate(cpu, consts)}; give the CPU (a catalog id, see "
        "'specgen catalog cpus') or memory_channels and ddr_mt_per_s (`specgen detect` reads them) for offload speeds of "
        "this machine"
    )


def assumed_core_rate(cpu: CpuSpec, consts: Constants) -> str:
    """The rate an assumed CPU's cores multiply at, said with the other (review80 item 15: an unknown CPU's was unsaid).

    The assumed CPU is a whole one (its memory, its cores and its 8-bit dot product together), so its cores are counted
    at its own sourced rate, and the warning says what a CPU without VNNI would be counted at: both as ``consts`` (the
    workload's ``constants:``) count them (review81 item 5: the defaults, 20 and 10, were said where the workload's 12
    and 6 were counted).
    """
    with_vnni, without = consts.cpu_core_gparams_per_s, consts.cpu_core_gparams_per_s_without_vnni
    if cpu.int8_vnni is True:
        return (
            f"each multiplying {with_vnni:g} billion weights a second (the rate of a core with VNNI's 8-bit dot product, "
            f"as it has; one without it, AMD's Zen 2 / Zen 3 or Intel's Skylake-derived cores (Skylake-SP Xeons, desktops "
            f"to Comet Lake), {without:g})"
        )
    return f"each multiplying {without:g} billion weights a second (without VNNI's 8-bit dot product, as it is)"


def channels_problem(spec: FixedSpec) -> str | None:
    """Why the memory channels given cannot be the machine's over its sockets (fuzz16 item 2), else None."""
    channels, sockets = spec.memory_channels, spec.cpu_sockets
    if channels and channels % sockets:
        return f"memory_channels {channels} (the machine's) do not divide over its {sockets} CPU sockets"
    return None


#: DIMMs a DDR5 (or a desktop DDR4) memory channel takes at most (those platforms run one or two DIMMs a channel).
MOST_DIMMS_PER_CHANNEL = 2


def ram_beyond_slots(spec: FixedSpec, ram: str) -> str | None:
    """Why ``spec``'s RAM cannot be fitted to its catalog CPU's slots (fuzz23 item 4), else None.

    A DDR5 channel, or a DDR4 desktop's of unbuffered DIMMs, takes at most two DIMMs, each at most the largest the CPU
    takes (64 GiB unbuffered DDR5, 32 GiB unbuffered DDR4): 65,536 GiB on a Ryzen 9 7950X was planned, and its offload
    counted on RAM the machine cannot hold. ``ram`` names the RAM field as the user wrote it.
    """
    given = _given_cpu(spec)
    if spec.cpu and given is None:
        return None  # an unknown CPU id: _memory_cpu refuses it
    cpu = given or _memory_cpu(spec)  # none named: the machine assumed (newuser29 item 9: 64,000 GiB on a desktop)
    if given is None and socket_channels(spec, cpu) > cpu.memory_channels:
        # more channels a socket than the assumed desktop has are a server board's, which takes registered DIMMs
        # (newuser88 item 1: 2 TB over 8 channels was capped at a desktop's 64 GiB UDIMMs)
        cpu = catalog.cpus()[ASSUMED_CPU["server"]]
    if cpu.ddr_generation != "ddr5" and not (cpu.ddr_generation == "ddr4" and cpu.dimm_type == "udimm"):
        return None  # a DDR4 server's registered DIMMs (up to 256 GB) are not bounded here
    channels, largest = socket_channels(spec, cpu), max(dimm_sizes_gib(cpu))
    most = spec.cpu_sockets * channels * MOST_DIMMS_PER_CHANNEL * largest
    if spec.ram_gib <= most:
        return None
    machine = f"a machine with the {cpu.name}" if given else f"the machine assumed without a CPU (like the {cpu.name})"
    return (
        f"{ram} {spec.ram_gib:g} is more than {machine} holds: {spec.cpu_sockets} socket(s) x {channels} channels x "
        f"{MOST_DIMMS_PER_CHANNEL} DIMMs a channel x {largest} GiB, the largest {cpu.dimm_type.upper()} it takes = "
        f"{most:g} GiB" + ("" if given else "; give the CPU, or the RAM in GiB")
    )


def module_on_a_desktop(spec: FixedSpec) -> str | None:
    """Why the GPU given cannot sit in a machine of the desktop CPU given (fuzz23 item 7), else None.

    An SXM or OAM module, or a superchip, sits on its own baseboard (HGX, OAM, a Grace board), not in a PCIe slot of a
    desktop board (a CPU taking unbuffered DIMMs): an H100 SXM in a Ryzen tower was planned, its NVLink counted.
    """
    cpu, gpu = _given_cpu(spec), catalog.gpus().get(spec.gpu)
    if cpu is None or gpu is None or cpu.dimm_type != "udimm" or gpu.form_factor == "pcie":
        return None
    return (
        f"{gpu.id} is {'a superchip' if gpu.form_factor == 'superchip' else f'an {gpu.form_factor.upper()} module'} "
        "on a baseboard of its own, not a card for the PCIe slots of the "
        f"{cpu.name} desktop board: give the GPU's PCIe card, or the CPU of the server that holds the modules"
    )


def sockets_beyond_cpu(spec: FixedSpec) -> str | None:
    """Why more CPU sockets are given than the catalog CPU runs in (its vendor's ``max_sockets``; fuzz18 item 7), else None.

    A warning, not an error: the machine is the user's, and the count may be a typo the plan should not refuse over.
    """
    cpu = catalog.cpus().get(spec.cpu or "")
    if cpu is None or cpu.max_sockets is None or spec.cpu_sockets <= cpu.max_sockets:
        return None
    return (
        f"{spec.cpu_sockets} CPU sockets: the {cpu.name} goes in systems of at most {cpu.max_sockets} "
        f"socket{'s' if cpu.max_sockets > 1 else ''} (its vendor's spec page), and the machine's cores and power are "
        f"counted for {spec.cpu_sockets}: give the sockets it has (`specgen detect` reads them)"
    )


def _given_cpu(spec: FixedSpec) -> CpuSpec | None:
    """The catalog CPU ``spec`` names, else None (none named, or an unknown id that ``_memory_cpu`` refuses)."""
    return catalog.cpus().get(spec.cpu or "")


def channels_beyond_cpu(spec: FixedSpec) -> str | None:
    """Why the memory channels given are more than the named CPU has, else None (fuzz20 item 2).

    A CPU's memory controllers fix its channels, so the bandwidth counts the CPU's (``socket_channels``).
    """
    cpu = _given_cpu(spec)
    if cpu is None or not spec.memory_channels or channels_problem(spec):
        return None
    per_socket = spec.memory_channels // spec.cpu_sockets
    if per_socket <= cpu.memory_channels:
        return None
    return (
        f"memory_channels {spec.memory_channels} is {per_socket} a socket, but {cpu.id} has "
        f"{cpu.memory_channels} memory channels a socket (its catalog record): the bandwidth counts "
        f"{cpu.memory_channels} a socket; give the channels the machine has populated (`specgen detect` reads them)"
    )


def ddr_beyond_cpu(spec: FixedSpec) -> str | None:
    """Why the DDR speed given is above the named CPU's rated speed, else None (fuzz20 item 2).

    A warning, and the speed given is counted: memory overclocked past the CPU's rating (XMP / EXPO profiles) runs
    on many desktops, but the rating is what the vendor guarantees.
    """
    cpu = _given_cpu(spec)
    if cpu is None or not spec.ddr_mt_per_s or spec.ddr_mt_per_s <= cpu.ddr_mt_per_s:
        return None
    rated = dram_bandwidth_gb_per_s(socket_channels(spec, cpu), cpu.ddr_mt_per_s)
    return (
        f"ddr_mt_per_s {spec.ddr_mt_per_s} is above the DDR-{cpu.ddr_mt_per_s} that {cpu.id} is rated for (its "
        f"catalog record): counted as given, {spec.ddr_mt_per_s / cpu.ddr_mt_per_s:.2f}x the bandwidth at its rating "
        f"({rated:.1f} GB/s a socket), as memory overclocked by an XMP / EXPO profile runs; check the speed the memory "
        "runs at (`specgen detect` reads it)"
    )


def ram_dimm_note(spec: FixedSpec) -> str | None:
    """Why the machine's RAM runs below its CPU's one-DIMM rate (two DIMMs a channel to hold it), else None.

    Not where the user gives ``ddr_mt_per_s``: that is the speed counted (newuser25 item 4: 192 GiB on a Ryzen 9 7950X
    was counted at DDR5-5200, 83.2 GB/s, where its 4 DIMMs run at AMD's DDR5-3600, 57.6 GB/s).
    """
    if spec.ddr_mt_per_s or channels_problem(spec):
        return None
    cpu = _memory_cpu(spec)
    note = two_dimm_note(cpu, spec.ram_gib / spec.cpu_sockets, socket_channels(spec, cpu))
    return None if note is None else f"{note}; give ddr_mt_per_s (`specgen detect` reads it) if it runs faster"


def _ram_mt_per_s(spec: FixedSpec, cpu: CpuSpec, channels: int) -> int:
    """The DDR rate counted: the one given, else ``cpu``'s rating at the DIMMs a channel that hold the RAM of a socket."""
    return spec.ddr_mt_per_s or rated_mt_per_s(cpu, dimms_per_channel(cpu, channels, spec.ram_gib / spec.cpu_sockets))


def socket_channels(spec: FixedSpec, cpu: CpuSpec) -> int:
    """Memory channels of one socket: those given over the sockets, at most the named CPU's; else ``cpu``'s own."""
    if not spec.memory_channels:
        return cpu.memory_channels
    given = spec.memory_channels // spec.cpu_sockets
    return min(given, cpu.memory_channels) if spec.cpu else given


def gpus_split_packages(spec: FixedSpec) -> str | None:
    """Why the GPU count given is not whole packages of a GPU sold several to a package (an MI250X's 2 GCDs), else None."""
    gpu = catalog.find_gpu(spec.gpu)
    per, count = gpu.package_gpus, spec.gpu_count
    if count % per == 0:
        return None
    whole = sorted({n for n in (count - count % per, count - count % per + per) if n})
    return (
        f"{count} x {gpu.id}: each is one of the {per} GPUs (GCDs) of a package, and {count / per:g} packages cannot be; "
        f"give whole packages' GPUs ({' or '.join(map(str, whole))})"
    )


#: PCIe lanes below which a GPU slot is not counted as one the CPU gives (x4: the narrowest link a GPU is sold for).
NARROWEST_GPU_SLOT_LANES = 4


def gpus_beyond_cpu_slots(spec: FixedSpec, lanes: str = "pcie_lanes") -> str | None:
    """Why the catalog CPU named gives no slot of its own to each of the GPUs given (fuzz23 item 13), else None.

    A desktop CPU wires at most two GPU slots (x16, or x8/x8: ``gpu_slot_lanes``); any CPU at least x4 a GPU from its
    lanes. More GPUs hang off the chipset, risers or a PCIe switch, which the plan does not model. ``lanes`` names the
    PCIe-lanes field as the caller's user gives it (the estimate's ``--pcie-lanes``, review98 bug 1).
    """
    cpu = _given_cpu(spec)
    if cpu is None or spec.pcie_lanes is not None:
        return None
    slots = max((count for count, _ in cpu.gpu_slot_lanes), default=None)
    if slots is None and cpu.pcie_lanes:
        slots = spec.cpu_sockets * cpu.pcie_lanes // NARROWEST_GPU_SLOT_LANES
    if slots is None or spec.gpu_count <= slots:
        return None
    return (
        f"{spec.gpu_count} GPUs: the {cpu.name} gives GPU slots to at most {slots} from its own PCIe lanes; the rest "
        "would hang off the chipset, risers or a PCIe switch, which the plan does not model (its PCIe figures take each "
        f"GPU at the CPU's split): give {lanes} as the machine wires them"
    )


def machine_findings(
    spec: FixedSpec, consts: Constants, lanes: str = "pcie_lanes"
) -> list[tuple[Literal["info", "warning"], str, str, str]]:
    """(level, code, field, message) of what a machine as given assumes or cannot be.

    One list for the estimate and ``hardware.fixed``; ``field``: the ``hardware.fixed`` field it is about, "" for the
    machine as a whole; ``lanes``: the PCIe-lanes field's name in the message (the estimate's ``--pcie-lanes``).
    """
    said: tuple[tuple[Literal["info", "warning"], str, str, str | None], ...] = (
        ("warning", "ddr-bandwidth-assumed", "", ddr_assumption(spec, consts)),
        ("warning", "cpu-sockets-beyond-cpu", "cpu_sockets", sockets_beyond_cpu(spec)),
        ("warning", "memory-channels-beyond-cpu", "memory_channels", channels_beyond_cpu(spec)),
        ("warning", "ddr-speed-beyond-cpu", "ddr_mt_per_s", ddr_beyond_cpu(spec)),
        ("info", "ddr-two-dimms-per-channel", "ram_gib", ram_dimm_note(spec)),
        ("warning", "gpu-count-splits-package", "gpu_count", gpus_split_packages(spec) if spec.gpu else None),
        ("warning", "gpus-beyond-cpu-slots", "gpu_count", gpus_beyond_cpu_slots(spec, lanes) if spec.gpu else None),
        ("info", "pcie-not-applied", "", pcie_not_applied(spec) if spec.gpu else None),
    )
    return [(level, code, field, message) for level, code, field, message in said if message]


def _memory_cpu(spec: FixedSpec) -> CpuSpec:
    """The CPU whose memory fills what the user left out: the one given, else the kind of machine's assumed one."""
    if spec.cpu:
        cpu = catalog.cpus().get(spec.cpu)
        if cpu is None:
            raise InputError(catalog.unknown_id_message("CPU", spec.cpu, catalog.cpus()))
        return cpu
    return catalog.cpus()[ASSUMED_CPU[machine_kind(spec, _spec_gpu(spec))]]


def _spec_gpu(spec: FixedSpec) -> GpuSpec | None:
    """The machine's GPU, None for a machine without one (``gpu`` empty: llama.cpp on the CPU alone)."""
    return catalog.find_gpu(spec.gpu) if spec.gpu else None


class FixedSpec(NamedTuple):
    """What the user says about an existing server (the same fields as ``hardware.fixed``)."""

    gpu: str
    gpu_count: int
    ram_gib: float
    reserved_ram_gib: float = 8.0
    swap_gib: float = 0.0
    nvme_gib: float = 0.0
    nvme_read_gb_per_s: float = 3.5
    pcie_gen: int | None = None
    #: PCIe lanes per GPU; None: what the CPU gives each GPU slot (:func:`slot_lanes`).
    pcie_lanes: int | None = None
    cpu: str | None = None
    memory_channels: int | None = None
    ddr_mt_per_s: int | None = None
    cpu_sockets: int = 1
    #: The power supply's rating, where given: the machine's draw at full load is checked against it.
    psu_w: float | None = None
    #: The llama.cpp-family server the machine runs (``generator.sizing.offload.PLANNED_OFFLOAD_ENGINES``): the offload
    #: figures are timed for it and its own command line is planned (the schema and ``--offload-engine`` hold the choices).
    offload_engine: str = "llama.cpp"
    #: Cores of one socket llama.cpp's threads run on, where the CPU is not a catalog one (``--cpu-cores``, which
    #: ``estimate --detect`` fills from /proc/cpuinfo); None: the catalog CPU's, or the assumed one's.
    cpu_cores: int | None = None
    #: llama.cpp's threads (its ``-t``) over all sockets, where fewer than a catalog CPU's cores (``--threads``, with
    #: ``--cpu``); None: one a core (:func:`thread_cores`).
    threads: int | None = None
    #: The machine's host name and the address Ansible connects to it at (``ansible_host``), where given
    #: (``hardware.fixed.host_name`` / ``address``): the inventory names the host so, as an owned server's
    #: (:func:`generator.render.hosts.named_hosts`); None: a placeholder host (fix192). The estimate never reads them.
    host_name: str | None = None
    address: str | None = None
    #: llama.cpp's ``-fa`` (``hardware.fixed.flash_attention``): "auto" (its default since
    #: https://github.com/ggml-org/llama.cpp/pull/15434, on for CUDA / HIP and the CPU), "on" or "off" (the prompt then
    #: writes and reads its score matrices: :func:`~generator.sizing.llama_cpp_prompt.score_matrix_seconds`; fix202).
    flash_attention: str = "auto"


#: numactl's binding of a process to one NUMA node, as offload counts a machine of several sockets: its threads on
#: node 0's CPUs (``-N``, --cpunodebind) and its memory in node 0's RAM (``-m``, --membind); numactl(8).
NUMACTL_ONE_NODE = "-N 0 -m 0"

#: Two-socket llama.cpp-family runs against one socket of the same machine (ik_llama.cpp, a llama.cpp fork).
CROSS_SOCKET_SOURCE = (
    "across sockets, ik_llama.cpp (a llama.cpp fork) measured slower than on one (a Xeon 6980P decoded DeepSeek-R1 at "
    "10.0 tokens/s on one socket, 7.0-8.1 on two: https://github.com/ikawrakow/ik_llama.cpp/pull/259)"
)


def numa_note(spec: FixedSpec, spans_nodes: bool = False) -> str | None:
    """What offload counts on a machine of several CPU sockets, else None.

    One socket's memory bandwidth and its node's RAM; ``spans_nodes``: the offloaded weights needed the RAM of every
    node, so llama.cpp runs across them (still counted at one socket's bandwidth). Given threads: how the estimate and
    a workload's plan count them (:func:`threads_binding`), the same words in both.
    """
    if spec.cpu_sockets < 2:
        return None
    node = f"{spec.ram_gib / spec.cpu_sockets:.4g} GiB of {spec.ram_gib:g}"  # 256 / 3: 85.33, not 85.3333
    binding = f"; {said}" if (said := threads_binding(spec, spans_nodes)) else ""
    if spans_nodes:
        return (
            f"the offloaded weights need more than one node's RAM ({node}): llama.cpp runs across the "
            f"{spec.cpu_sockets} sockets' nodes (--numa distribute, or numactl --interleave=all), and the speed is "
            f"counted at one socket's memory bandwidth, which is optimistic: {CROSS_SOCKET_SOURCE}{binding}"
        )
    return (
        f"{spec.cpu_sockets} CPU sockets: offload counts one socket's memory bandwidth and RAM ({node}), for llama.cpp "
        f"started under numactl {NUMACTL_ONE_NODE} (its settings' numactl) with the model in that node's RAM, one "
        f"NUMA node a socket (NPS1 on AMD, SNC off on Intel, as the rows measured ran); {CROSS_SOCKET_SOURCE}"
        f"{_reserve_on_node(spec)}{binding}"
    )


def threads_binding(spec: FixedSpec, spans_nodes: bool = False) -> str | None:
    """How the estimate and a workload's plan count given llama.cpp threads on several sockets, else None (fix163).

    The one wording of both outputs (each states the binding it assumes and the other's): the estimate's ``--threads``
    are counted over the sockets, as its calibration rows ran them (fix153; counted bound to one socket, the Xeon Gold
    6138 rows would be off by +50 / +78 %); a workload's line binds llama.cpp to one node (``numactl``), so its
    ``hardware.fixed.threads`` run on that socket's cores (fix159), but where the weights span the nodes
    (``spans_nodes``: ``--numa distribute``), where they spread as the estimate's do.
    """
    cpu = catalog.cpus().get(spec.cpu or "")
    if not spec.threads or spec.cpu_sockets < 2 or cpu is None:
        return None
    threads, sockets = spec.threads, spec.cpu_sockets
    spread = f"spread over the {sockets} sockets ({thread_cores(threads, sockets, cpu):g} cores a socket)"
    if spans_nodes:
        return (
            f"threads: the estimate's --threads and a workload's hardware.fixed.threads both count llama.cpp's "
            f"{threads} threads {spread}, the weights spanning the nodes"
        )
    return (
        f"threads: the estimate's --threads counts llama.cpp's {threads} threads {spread}, as its calibration rows "
        f"ran them (without numactl); a workload's hardware.fixed.threads counts them all on the one socket numactl "
        f"{NUMACTL_ONE_NODE} binds its line to ({thread_cores(threads, 1, cpu):g} cores)"
    )


def _reserve_on_node(spec: FixedSpec) -> str:
    """Where the reserve is counted on a machine of several sockets: whole on the model's node (``build_machine``)."""
    if not spec.reserved_ram_gib:
        return ""
    return (
        f"; the {spec.reserved_ram_gib:g} GiB reserve (reserved_ram_gib) is kept whole on that node, not split over "
        f"the {spec.cpu_sockets} nodes, as the other services may take their memory from it"
    )


def wider_machine(machine: Machine, spec: FixedSpec) -> Machine | None:
    """``machine`` (one node's RAM and reserve) with every node's, where it has several; None for one socket."""
    if spec.cpu_sockets < 2:
        return None
    wider = machine._replace(ram_bytes=int(spec.ram_gib * GIB), reserved_ram_bytes=int(spec.reserved_ram_gib * GIB))
    if spec.threads and (cpu := catalog.cpus().get(spec.cpu or "")) is not None:
        # --numa distribute spreads the given threads over every node's cores (the estimate's count on any machine)
        wider = wider._replace(cpu_cores=thread_cores(spec.threads, spec.cpu_sockets, cpu))
    return wider


def place_over_nodes(
    place: Callable[[Machine], _Placed], machine: Machine, wider: Machine | None, disk_bytes: Callable[[_Placed], int]
) -> tuple[_Placed, Machine, bool]:
    """``place`` on one node's RAM, else across every node's (``wider``): the result, its machine and whether it spans.

    A machine of several sockets takes the other nodes' RAM where one node's would not hold the offloaded weights (the
    placement fails, or pages layers from NVMe that the machine's RAM holds; fuzz17 item 5: a model the 256 GiB
    machine held at ~17 tokens/s was refused, or read from NVMe at 0.74, counting one node's 64 GiB). Raises the
    node's InfeasibleError where nothing places.
    """
    try:
        placed = place(machine)
    except InfeasibleError:
        if wider is None:
            raise
        return place(wider), wider, True
    if wider is None or not disk_bytes(placed):
        return placed, machine, False
    try:
        spread = place(wider)
    except InfeasibleError:
        return placed, machine, False
    if disk_bytes(spread) < disk_bytes(placed):
        return spread, wider, True
    return placed, machine, False


def reserve_leaves_no_ram(spec: FixedSpec, reserved: str, ram: str) -> str | None:
    """Why ``spec`` has no RAM to plan with (its reservation at or above its RAM), else None.

    ``reserved`` names the reservation with its value and ``ram`` the RAM field, as the user wrote them
    (``reserved_ram_gib 64`` / ``ram_gib`` in a workload, ``--reserved-ram-gib 64`` / ``--ram-gib`` on the command line).
    """
    if spec.reserved_ram_gib < spec.ram_gib:
        return None
    return (
        f"{reserved} leaves none of {ram} {spec.ram_gib:g} for the model: the reservation (OS and engine) "
        "must be less than the machine's RAM"
    )


def build_machine(spec: FixedSpec, bound: bool = False, spans_nodes: bool = False) -> tuple[Machine, GpuSpec, str]:
    """The :class:`Machine` of ``spec`` and a sentence on where its DDR bandwidth comes from.

    ``bound``: a workload's machine, whose llama.cpp line is bound to one NUMA node of several (``numactl -N 0 -m 0``),
    its ``threads`` all on that node's cores; the estimate counts them over the sockets, as the calibration rows ran
    (:func:`threads_binding`). ``spans_nodes`` (with ``bound``): the workload's weights span the nodes, its threads
    spread over the sockets as :func:`wider_machine` counts them.
    """
    gpu = catalog.find_gpu(spec.gpu)
    if (why := gpu.unrated("bf16")) is not None:
        raise InputError(why)
    host, host_basis = _host_machine(spec, bound, spans_nodes)
    link, link_name = host_link(spec, gpu)
    machine = host._replace(
        gpus=spec.gpu_count,
        gpu_memory_bytes=gpu.memory_bytes,
        gpu_bandwidth_gb_per_s=gpu.sustained_bandwidth_gb_per_s,
        gpu_tflops=gpu.sustained_tflops("bf16") or 0.0,
        pcie_gb_per_s=link,
        gpu_tensor_formats=gpu.tensor_formats,
        gpu_consumer=gpu.consumer,
        gpu_vendor=gpu.vendor,
        gpu_int8_tflops=gpu.sustained_tflops("int8") or 0.0,
        gpu_architecture=gpu.architecture,
    )
    return machine, gpu, f"{host_basis}; {link_name}: {link:.1f} GB/s per direction"


def build_host_machine(spec: FixedSpec) -> tuple[Machine, str]:
    """The :class:`Machine` of ``spec`` without a GPU (llama.cpp on the CPU alone) and where its bandwidth comes from.

    newuser86 item 2: the same DRAM and cores as :func:`build_machine`'s, so a decode reads the DIMMs at the offload
    model's rate. No GPU reads or computes anything, so its figures are unbounded (its time 0) and no link crosses to one.
    """
    host, basis = _host_machine(spec)
    return host, f"{basis}; no GPU"


def _host_machine(spec: FixedSpec, bound: bool = False, spans_nodes: bool = False) -> tuple[Machine, str]:
    """The host side of ``spec``'s :class:`Machine` (no GPU: unbounded, its time 0) and its DRAM's and cores' basis.

    ``bound``: a workload's threads, on one socket's cores but where they span the nodes (:func:`build_machine`).
    """
    cpu = _memory_cpu(spec)
    sockets = spec.cpu_sockets
    # memory_channels are the machine's, over its sockets; a catalog CPU's are one socket's. One socket's are what a
    # decode reads at (numa_note), and its node's RAM what holds the offloaded weights (review 15 item 1)
    if problem := channels_problem(spec):
        raise InputError(problem)
    channels = socket_channels(spec, cpu)
    mts = _ram_mt_per_s(spec, cpu, channels)  # two DIMMs a channel run slower (ram_dimm_note)
    given = spec.cpu or (spec.memory_channels and spec.ddr_mt_per_s)
    source = f"{cpu.name}: " if spec.cpu else "" if given else f"assumed like {cpu.name}: "
    source += f"one of {sockets} sockets, " if sockets > 1 else ""
    ddr = dram_bandwidth_gb_per_s(channels, mts)
    ddr_basis = f"{source}{channels} channels x DDR-{mts}"
    if mts < cpu.ddr_mt_per_s and not spec.ddr_mt_per_s:
        ddr_basis += f" at 2 DIMMs a channel, DDR-{cpu.ddr_mt_per_s} at 1"
    cores: float = 0 if given and not spec.cpu else cpu.llama_cpp_cores  # an unknown CPU: its memory alone (cores_basis)
    if spec.cpu_cores and not spec.cpu:  # newuser88: the cores measured, not the assumed CPU's (or none)
        cores = spec.cpu_cores
    if spec.cpu and spec.threads:  # fix153: a run on fewer threads than the part's cores
        cores = thread_cores(spec.threads, 1 if bound and not spans_nodes else sockets, cpu)
    machine = Machine(
        gpus=0,
        gpu_memory_bytes=0,
        gpu_bandwidth_gb_per_s=math.inf,
        gpu_tflops=math.inf,
        pcie_gb_per_s=math.inf,
        ram_bytes=int(spec.ram_gib / sockets * GIB),
        # the reserve is kept whole on the node the model is bound to: the other services' memory may come from that
        # node (Linux allocates on the node a process runs on first), and a reserve split over the nodes was halved
        # on two sockets without a word (newuser25 item 7)
        reserved_ram_bytes=int(spec.reserved_ram_gib * GIB),
        swap_bytes=int(spec.swap_gib * GIB),
        nvme_bytes=int(spec.nvme_gib * GIB),
        nvme_read_gb_per_s=spec.nvme_read_gb_per_s,
        ddr_gb_per_s=ddr,
        cpu_cores=cores,
        # a record that does not say is counted without it, the slower rate (review80 item 15: every catalog CPU says)
        cpu_int8_vnni=cpu.int8_vnni is True,
        flash_attention=spec.flash_attention,
    )
    return machine, f"{ddr:.1f} GB/s ({ddr_basis}); {_spec_cores(spec, cpu, cores, bound, spans_nodes)}"


def threads_problem(spec: FixedSpec, option: Callable[[str], str]) -> str | None:
    """Why ``spec.threads`` cannot be counted, else None.

    It needs a catalog CPU and is at most its threads a socket times the sockets (an unknown ``cpu`` is refused by its
    own check). ``option`` names a field as the user gave it (``--threads`` / ``threads``): the estimate's ``--threads``
    (fix153) and a workload's ``hardware.fixed.threads`` (fix159) share the rule.
    """
    if spec.threads is None:
        return None
    if not spec.cpu:
        return f"{option('threads')} needs {option('cpu')} (the catalog CPU whose cores the threads run on)"
    cpu = catalog.cpus().get(spec.cpu)
    most = cpu.socket_threads * spec.cpu_sockets if cpu is not None else spec.threads
    if spec.threads <= most:
        return None
    assert cpu is not None
    sockets = f" x {spec.cpu_sockets} sockets" if spec.cpu_sockets > 1 else ""
    return (
        f"{option('threads')} must be at most {most}, the threads of {option('cpu')} {spec.cpu} "
        f"({cpu.socket_threads}{sockets}), got {spec.threads}"
    )


def thread_cores(threads: int, sockets: int, cpu: CpuSpec) -> float:
    """The cores of one socket that ``threads`` llama.cpp threads multiply on.

    ``threads`` over the ``sockets``, at most the cores llama.cpp's default takes (:attr:`CpuSpec.llama_cpp_cores`).

    The calibration report counts a row's threads so (``_offload_setup``: ``threads`` over its sockets), a CPU-only
    decode and a short prompt's CPU pass being timed at the slower of one socket's memory and its cores
    (``cpu_weight_seconds``): 20 threads on two 20-core Xeon Gold 6138s count 10 cores a socket, and the row's Qwen3-
    30B-A3B q8_0 decode is bound by them (12.90 tokens/s measured), not by the DIMMs. A thread past a core's (an SMT
    sibling) adds no multiply rate: common.cpp ``cpu_get_num_math`` skips them, "hyperthreading isn't useful for linear
    algebra".
    """
    return min(threads / sockets, float(cpu.llama_cpp_cores))


def _spec_cores(spec: FixedSpec, cpu: CpuSpec, cores: float, bound: bool = False, spans_nodes: bool = False) -> str:
    """:func:`cores_basis` of ``spec``'s machine: measured where its cores were counted on it (``cpu_cores``)."""
    if spec.cpu and spec.threads and bound:  # a workload's threads (fix159)
        node = ", all on the socket numactl binds llama.cpp to" if spec.cpu_sockets > 1 else ""
        if spec.cpu_sockets > 1 and spans_nodes:  # fix163: was said bound where the numbers spread them
            node = f" over {spec.cpu_sockets} sockets, the weights spanning their nodes"
        given = f"{spec.threads} threads (hardware.fixed.threads{node})"
        if spec.cpu_sockets > 1 and not spans_nodes and spec.threads > cpu.socket_threads:
            # fix163: the line runs at most the bound socket's threads (calculator.llama_cpp_threads.llama_cpp_threads)
            given = f"{cpu.socket_threads} threads (hardware.fixed.threads {spec.threads}, at most the socket's{node})"
        each = " a socket" if spec.cpu_sockets > 1 and spans_nodes else ""
        return f"{cores:g} of its {cpu.llama_cpp_cores} cores{each} for llama.cpp's {given}{_isa(cpu)}"
    if spec.cpu and spec.threads:
        return threads_basis(spec.threads, spec.cpu_sockets, cpu, cores)
    return cores_basis(cpu, int(cores), measured=bool(spec.cpu_cores and not spec.cpu))


def threads_basis(threads: int, sockets: int, cpu: CpuSpec, cores: float) -> str:
    """What the CPU's time counts of a run on ``threads`` threads (``--threads``): the cores of one socket they use."""
    over = f" over {sockets} sockets" if sockets > 1 else ""
    return f"{cores:g} of its {cpu.llama_cpp_cores} cores a socket for llama.cpp's {threads} threads (--threads{over}){_isa(cpu)}"


def _isa(cpu: CpuSpec) -> str:
    """``, without VNNI's 8-bit dot product`` for a CPU whose cores lack it (cpu_core_gparams_per_s_without_vnni)."""
    return ", without VNNI's 8-bit dot product" if cpu.int8_vnni is not True else ""


def cores_basis(cpu: CpuSpec, cores: int, *, measured: bool = False) -> str:
    """What the CPU's time counts of its cores: those llama.cpp's threads run on, or none where the CPU is not known.

    ``measured``: the cores are the machine's as given (``--cpu-cores``, or ``--detect``'s count), not a catalog CPU's.
    """
    if not cores:
        return "CPU not given: its cores assumed to keep up with the memory"
    if measured:
        return f"{cores} cores for llama.cpp's threads (one socket's, as given), each at an assumed core's rate"
    kind = "P-cores" if cpu.performance_cores else "cores"
    # a CPU without VNNI's 8-bit dot product multiplies a quantized weight at a lower rate
    return f"{cores} {kind} for llama.cpp's threads{_isa(cpu)}"
