"""The DIMMs a CPU's memory slots take, and the speed its vendor rates it for at one or two DIMMs a channel.

A desktop CPU takes unbuffered DIMMs (UDIMMs), of at most 64 GB a module, where a server takes registered ones of up
to 256 GB (newuser25 item 4: a Core i9-14900K tower was given "2 x 96 GiB" DIMMs, a size no UDIMM comes in). Two
DIMMs in a channel run slower than one: AMD rates a Ryzen 7000 for DDR5-5200 with one DIMM a channel and DDR5-3600
with two, so 192 GiB on a desktop (4 x 48 GiB) reads at 70% of the one-DIMM bandwidth. ``cpus.json`` carries
``dimm_type`` and ``ddr_mt_per_s_2dpc`` where a vendor figure was found; a CPU without them is taken as registered
memory at its one-DIMM rate.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from generator.catalog.records import CpuSpec

#: Registered DIMM capacities offered for DDR4/DDR5 servers, GiB (JEDEC densities: 16-256 GB modules,
#: including the non-binary 24/48/96 GB DDR5 modules).
RDIMM_SIZES_GIB = (16, 24, 32, 48, 64, 96, 128, 256)
#: Unbuffered DDR5 DIMM capacities sold for desktops, GiB: 8, 16 and 32 GB (Micron's Crucial DDR5 launch,
#: https://investors.micron.com/news-releases/news-release-details/microns-new-crucial-ddr5-memory-delivers-blazing-speeds-and),
#: 24 and 48 GB (https://pcgamer.com/micron-outs-24gb-and-48gb-ddr5-modules-but-your-games-dont-care) and 64 GB, the
#: largest UDIMM ("UDIMMs ... can currently be equipped with a maximum of 64 GB of DDR5 RAM", https://heise.de/-11079570;
#: 32 Gbit chips, 2024: https://en.overclocking.com/64-gb-ddr5-ram-for-256-gb-capacities/).
UDIMM_SIZES_GIB = (8, 16, 24, 32, 48, 64)
#: Unbuffered DDR4 DIMM capacities, GiB: 32 GB is the largest, two ranks of 16 Gbit chips (Samsung's M378A4G43MB1 and
#: Micron's, 2019: https://www.hardcoregames.ca/2019/08/22/32gb-ddr4-udimm/; "up to 128 GB RAM if your motherboard has 4
#: DIMM slots": https://appuals.com/samsung-32-gb-memory-dimm/), so a DDR4 desktop of two channels holds 128 GiB
#: (newuser107: 256 GiB on an AM4 Ryzen's two DDR4-3200 channels was planned as an upgrade it cannot take).
DDR4_UDIMM_SIZES_GIB = (4, 8, 16, 32)


def dimm_sizes_gib(cpu: CpuSpec) -> tuple[int, ...]:
    """The DIMM capacities ``cpu``'s slots take, GiB, smallest first."""
    if cpu.dimm_type != "udimm":
        return RDIMM_SIZES_GIB
    return DDR4_UDIMM_SIZES_GIB if cpu.ddr_generation == "ddr4" else UDIMM_SIZES_GIB


def rated_mt_per_s(cpu: CpuSpec, dimms_per_channel: int) -> int:
    """The DDR rate of ``cpu`` with ``dimms_per_channel`` DIMMs a channel: its two-DIMM rating where it has one."""
    if dimms_per_channel >= 2:
        return cpu.ddr_mt_per_s_2dpc or cpu.ddr_mt_per_s
    return cpu.ddr_mt_per_s


def dimms_per_channel(cpu: CpuSpec, channels: int, ram_gib: float) -> int:
    """The fewest DIMMs a channel (1 or 2) that hold ``ram_gib`` over ``channels`` channels in the largest DIMMs it takes."""
    return 1 if channels * max(dimm_sizes_gib(cpu)) >= ram_gib else 2


def two_dimm_note(cpu: CpuSpec, ram_gib: float, channels: int) -> str | None:
    """Why ``ram_gib`` over ``channels`` channels of ``cpu`` runs below its one-DIMM rate, else None."""
    rate = cpu.ddr_mt_per_s_2dpc
    if rate is None or rate >= cpu.ddr_mt_per_s or dimms_per_channel(cpu, channels, ram_gib) < 2:
        return None
    gen, vendor = (cpu.ddr_generation or "ddr").upper(), {"amd": "AMD", "intel": "Intel"}.get(cpu.vendor, "its vendor")
    return (
        f"{ram_gib:g} GiB takes 2 DIMMs a channel ({channels} channels x {max(dimm_sizes_gib(cpu))} GiB, the largest "
        f"{cpu.dimm_type.upper()} it takes, hold {channels * max(dimm_sizes_gib(cpu))}): {gen}-{rate}, {vendor}'s "
        f"rating of the {cpu.name} at 2 DIMMs a channel, not the {gen}-{cpu.ddr_mt_per_s} of one"
    )
