"""What a vendor would quote for an owned server: memory filling every channel, mirrored boot drives.

Memory is populated one DIMM size across every memory channel of every CPU (one DIMM per channel,
two where one is not enough): a partly filled channel set loses memory bandwidth and most vendors'
configurators do not offer it. The sizes are those the CPU's slots take (a desktop's unbuffered DIMMs
stop at 64 GiB), and two DIMMs a channel are printed at the CPU's two-DIMM rating where the catalog has
one (``generator/catalog/dimms.py``).

A node whose work streams its host memory every step (ZeRO-Offload's CPU optimizer step) keeps one DIMM a channel
wherever that holds what the work cannot do without (``keep_rate_gib``): the page cache for the model files a second
DIMM a channel would add speeds only a restart, while the slower two-DIMM rating (a Ryzen 9 7950X's DDR5-3600 against
DDR5-5200, 31% less) slows every step, and two DIMMs cost more than one (newuser76 item 13).
"""

from __future__ import annotations

from generator.catalog.dimms import dimm_sizes_gib, rated_mt_per_s
from generator.catalog.records import CpuSpec
from generator.named_tuple import NamedTuple

#: OS drives: two M.2 NVMe in RAID 1, as NVIDIA ships DGX B200 ("2 x 1.92 TB NVMe M.2 SSD in RAID 1",
#: https://docs.nvidia.com/dgx/dgxb200-user-guide/introduction-to-dgxb200.html).
BOOT_DRIVES = 2
BOOT_DRIVE_TB = 1.92


class MemoryLayout(NamedTuple):
    """DIMMs of one server."""

    dimms: int
    dimm_gib: int
    total_gib: int
    text: str
    #: The rate the DIMMs run at: the CPU's rating at this many DIMMs a channel.
    mt_per_s: int = 0


def fill_channels(
    cpu: CpuSpec, sockets: int, wanted_gib: int, max_gib: float | None, keep_rate_gib: int | None = None
) -> MemoryLayout:
    """The smallest one-size DIMM population filling every channel with at least ``wanted_gib`` (capped at ``max_gib``).

    ``keep_rate_gib``: what a node that streams its memory every step cannot do without; where one DIMM a channel holds
    it and two run slower, one a channel (the smallest DIMMs that hold ``wanted_gib``, else the largest), however much
    more ``wanted_gib`` asks.
    """
    channels = cpu.memory_channels * max(sockets, 1)
    sizes = dimm_sizes_gib(cpu)  # a desktop's unbuffered DIMMs: at most 64 GiB (newuser25 item 4)
    one = [size for size in sizes if not max_gib or channels * size <= max_gib]
    slower = rated_mt_per_s(cpu, 2) < rated_mt_per_s(cpu, 1)
    if keep_rate_gib is not None and slower and one and channels * one[-1] >= keep_rate_gib:
        size = next((size for size in one if channels * size >= wanted_gib), one[-1])
        layout = _layout(cpu, channels, 1, size)
        if layout.total_gib >= wanted_gib:
            return layout
        generation = (cpu.ddr_generation or "DDR").upper()
        kept = (
            f"; {generation}-{layout.mt_per_s} kept for the CPU optimizer step, which streams host memory each step: the "
            f"{wanted_gib} GiB wanted to cache the model files too takes 2 a channel, at {generation}-"
            f"{rated_mt_per_s(cpu, 2)}"
        )
        return layout._replace(text=layout.text[:-1] + kept + ")")
    for per_channel in (1, 2):
        for size in sizes:
            total = channels * per_channel * size
            if max_gib and total > max_gib:
                break
            if total >= wanted_gib:
                return _layout(cpu, channels, per_channel, size)
    # the most the platform takes with full channels
    best = _layout(cpu, channels, 1, sizes[0])
    for per_channel in (1, 2):
        for size in sizes:
            if not max_gib or channels * per_channel * size <= max_gib:
                candidate = _layout(cpu, channels, per_channel, size)
                best = candidate if candidate.total_gib > best.total_gib else best
    return best


def _layout(cpu: CpuSpec, channels: int, per_channel: int, size: int) -> MemoryLayout:
    dimms = channels * per_channel
    generation = (cpu.ddr_generation or "DDR").upper()
    rate = rated_mt_per_s(cpu, per_channel)
    kind = " UDIMM" if cpu.dimm_type == "udimm" else ""  # registered, a server's, goes without saying
    text = f"{dimms} x {size} GiB {generation}-{rate}{kind} ({per_channel} per channel, {channels} channels"
    return MemoryLayout(dimms, size, dimms * size, f"{text}{_two_dimm_clause(cpu, per_channel)})", rate)


def _two_dimm_clause(cpu: CpuSpec, per_channel: int) -> str:
    """What two DIMMs a channel do to the speed: the CPU's rating at two against one, or that the catalog has none."""
    if per_channel < 2:
        return ""
    generation = (cpu.ddr_generation or "DDR").upper()
    if cpu.ddr_mt_per_s_2dpc is None:
        return f"; {generation}-{cpu.ddr_mt_per_s} is the rating at 1 a channel, the catalog has none at 2"
    return f": the rating at 2 a channel, {generation}-{cpu.ddr_mt_per_s} at 1"


def soldered_memory(cpu: CpuSpec | None) -> bool:
    """Whether the CPU's memory is soldered or on its package (LPDDR: JEDEC defines no DIMM for it), not DIMMs to fill."""
    return cpu is not None and (cpu.ddr_generation or "").lower().startswith("lpddr")


def soldered_text(cpu: CpuSpec, ram_gib: int, hosts: int) -> str:
    """The memory line of a node whose memory is soldered: its catalog capacity per host, or that none is sourced."""
    kind = f"{(cpu.ddr_generation or '').upper()} on the {cpu.name} package (soldered, no DIMMs)"
    if not ram_gib:
        return f"{kind}; capacity unsourced"
    return f"{kind}; {ram_gib // hosts} GiB per host" if hosts > 1 else f"{kind}; {ram_gib} GiB"


def boot_drives_text() -> str:
    """The mirrored OS drives every owned server gets."""
    return f"{BOOT_DRIVES} x {BOOT_DRIVE_TB:g} TB M.2 NVMe, RAID 1 (OS)"
