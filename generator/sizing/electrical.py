"""A rack's power from the circuits a colocation contract sells, and the current its servers draw on them.

Pure arithmetic over scalars (volts, amps, watts). Three-phase power is P = sqrt(3) x V(line-to-line) x I x PF, the
load taken as balanced over the three phases (the rack PDU spreads its outlets over them); single-phase P = V x I x PF.
A continuous load is held to a fraction of the breaker's rating, and with 2N (A+B) feeds one side alone must carry the
whole rack, so only half the circuits count towards what a rack may draw.
"""

from __future__ import annotations

import math

#: Power factor assumed for a rack of server PSUs where the workload gives none: 0.95, the floor 80 PLUS sets for
#: server PSUs at its Platinum level ("The Platinum level requires 0.95 or better power factor for servers", every level
#: 0.9 or better at 100% load: https://ipfs.io/ipfs/QmXoypizjW3WknFiJnKLwHCnL72vedxjQkDDP1mXWo6uco/wiki/80_Plus.html;
#: the 0.9 at 100% load also at https://en.wikipedia.org/wiki/80_Plus). PSU specifications ask more at full load (at
#: least 0.97 in iStarUSA's 800 W server PSU's: https://manuzoid.com/manuals/G5Gn1-iStarUSA%20IS-800S2UPD8%20User%20manual),
#: so 0.95 counts at least the amperes a kW they draw: a rack packed at 0.95 stays under its breaker at any higher
#: factor. A PDU's measured figure goes in ``hardware.rack_circuits.power_factor``.
DEFAULT_POWER_FACTOR = 0.95
#: The share of a breaker's rating a continuous load (three hours or more) may draw where the workload gives none:
#: 80%, as NEC 210.19(A)(1) and 210.20(A) size North American branch circuits at 125% of the continuous load
#: (https://mail-archive.com/emc-pstc@listserv.ieee.org/msg63549.html). IEC 60364 has no such rule (a Schneider
#: Electric engineer: "You won't find it in any part of IEC 60364-4-43",
#: https://www.mail-archive.com/emc-pstc@listserv.ieee.org/msg74234.html), and Equinix sells EMEA circuits usable to
#: 100% of the breaker, 80% in North America and Asia-Pacific
#: (https://docs.equinix.com/en-us/Content/Colocation-Products/Power/colo-power.htm): the default is the stricter,
#: and an IEC site whose contract allows the full rating sets 1.0.
DEFAULT_CONTINUOUS_LOAD_FRACTION = 0.8
#: Redundancy of a rack's circuits: ``2N`` (also sold as ``N+N``) splits them into an A and a B side, either of which
#: carries the whole rack (A+B feeds); ``none`` adds every circuit up, and losing one drops what it feeds.
SPLIT_FEEDS = ("2N", "N+N")
REDUNDANCY_NONE = "none"
#: Float noise below a watt kept from turning an exact figure (208 V x 24 A = 4,992 VA) into the watt under it.
_EPSILON_W = 1e-6


def line_factor(phases: int) -> float:
    """What multiplies V x I into volt-amperes: sqrt(3) on three phases (V line-to-line), 1 on one."""
    if phases not in (1, 3):
        raise ValueError(f"a circuit has 1 or 3 phases, not {phases}")
    return math.sqrt(3) if phases == 3 else 1.0


def apparent_power_va(voltage_v: float, phases: int, current_a: float) -> float:
    """Volt-amperes of ``current_a`` on each phase of a circuit at ``voltage_v`` (line-to-line on three phases)."""
    return line_factor(phases) * voltage_v * current_a


def phase_current_a(apparent_va: float, voltage_v: float, phases: int) -> float:
    """The current on each phase that carries ``apparent_va`` (balanced over three phases): the inverse of the above."""
    return apparent_va / (line_factor(phases) * voltage_v)


def serving_circuits(circuits: int, redundancy: str) -> int:
    """The circuits that together must carry a rack: one side's (half) with 2N feeds, every one without redundancy."""
    if redundancy in SPLIT_FEEDS:
        if circuits < 2 or circuits % 2:
            raise ValueError(f"{redundancy} splits a rack's circuits into two equal sides: {circuits} circuit(s) do not")
        return circuits // 2
    if redundancy == REDUNDANCY_NONE:
        return circuits
    raise ValueError(f"redundancy is one of {', '.join((*SPLIT_FEEDS, REDUNDANCY_NONE))}, not {redundancy!r}")


def continuous_current_a(breaker_a: float, continuous_load_fraction: float) -> float:
    """The most a circuit may carry continuously: its breaker's rating times the continuous-load fraction."""
    return breaker_a * continuous_load_fraction


def usable_apparent_va(
    voltage_v: float, phases: int, breaker_a: float, circuits: int, redundancy: str, continuous_load_fraction: float
) -> float:
    """Volt-amperes a rack may draw continuously: the serving circuits each at their continuous limit."""
    one = apparent_power_va(voltage_v, phases, continuous_current_a(breaker_a, continuous_load_fraction))
    return one * serving_circuits(circuits, redundancy)


def usable_power_w(
    voltage_v: float,
    phases: int,
    breaker_a: float,
    circuits: int,
    redundancy: str,
    continuous_load_fraction: float,
    power_factor: float,
) -> int:
    """Watts a rack may draw (whole watts, rounded down): its usable volt-amperes times the power factor."""
    va = usable_apparent_va(voltage_v, phases, breaker_a, circuits, redundancy, continuous_load_fraction)
    return math.floor(va * power_factor + _EPSILON_W)


def load_current_a(power_w: float, power_factor: float, voltage_v: float, phases: int, sharing_circuits: int) -> float:
    """The current on each phase of each of ``sharing_circuits`` circuits that share a load of ``power_w`` equally."""
    return phase_current_a(power_w / power_factor, voltage_v, phases) / sharing_circuits
