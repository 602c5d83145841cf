"""A rack's power from the circuits a colocation contract sells, and the current its servers draw on them.

Pure arithmetic over scalars (volts, amps, watts). Three-phase power is P = sqrt(3) x V(line-to-line) x I x PF for a
load balanced over the three phases; single-phase P = V x I x PF. A continuous load is held to a fraction of the
breaker's rating, and with 2N (A+B) feeds one side alone must carry the whole rack, so only half the circuits count
towards what a rack may draw. A server's PSU is a single-phase load: on a three-phase circuit it is plugged into one
phase's outlet (line-to-neutral, or line-to-line where that is the voltage a PSU takes), and
:mod:`generator.sizing.psu_feeds` places each PSU and gives the current on each line.
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
#: The AC input server PSUs are rated for: 100-127 V ("low line") or 200-240 V ("high line") (HP, "Power basics for IT
#: professionals": https://www.easymanua.ls/hp/proliant-dl140-g2-server/manual/107875?p=3), run up to 264 V (Intel
#: Server Chassis P4000S TPS, table 53: http://38.142.81.21:8001/manual/intel/p4304btlsfcnr/2-technical-product-specification/page-59.html);
#: some take 277 V, the line-to-neutral voltage of a 277/480 V wye supply
#: (https://www.mail-archive.com/nanog@nanog.org/msg12055.html). Above it no server PSU is fed.
HIGHEST_PSU_INPUT_V = 277.0
#: The lowest high-line input (200 V): a three-phase circuit whose line-to-neutral voltage reaches it (a 400/415 V
#: supply's 230/240 V, a 480 V one's 277 V) feeds its PSUs line-to-neutral; one below it (208 V, whose line-to-neutral
#: 120 V is low line) feeds them line-to-line, at its own voltage.
LOWEST_HIGH_LINE_V = 200.0


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


def splits_evenly(circuits: int, redundancy: str) -> bool:
    """Whether ``circuits`` form the equal A and B sides 2N feeds need (always, without redundancy)."""
    return redundancy not in SPLIT_FEEDS or (circuits >= 2 and circuits % 2 == 0)


def serving_circuits(circuits: int, redundancy: str) -> int:
    """The circuits that together must carry a rack: one side's (half) with 2N feeds, every one without redundancy."""
    if redundancy in SPLIT_FEEDS:
        if not splits_evenly(circuits, redundancy):
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


def whole_watts(kilowatts: float) -> int:
    """``kilowatts`` in whole watts, rounded down; float noise under a microwatt is not a watt less (2.002 kW: 2,002 W).

    A rack's budget is compared in these: ``2.002 * 1000`` is 2001.9999999999998, under which a 2,002 W node did not
    fit (fuzz30 item 3).
    """
    return math.floor(kilowatts * 1000 + _EPSILON_W)


def line_to_neutral_outlets(voltage_v: float, phases: int) -> bool:
    """Whether a three-phase circuit feeds its PSUs line-to-neutral: its line-to-neutral voltage is high line."""
    return phases == 3 and voltage_v / math.sqrt(3) >= LOWEST_HIGH_LINE_V - _EPSILON_W


def outlet_voltage_v(voltage_v: float, phases: int) -> float:
    """The voltage a PSU plugged into the circuit gets: line-to-neutral on a 400/415/480 V three-phase one, else ``voltage_v``."""
    return voltage_v / math.sqrt(3) if line_to_neutral_outlets(voltage_v, phases) else voltage_v


def line_currents_a(outlet_watts: tuple[float, ...], voltage_v: float, phases: int, power_factor: float) -> tuple[float, ...]:
    """The current on each line of one circuit whose outlets (one a phase) carry ``outlet_watts``.

    Single-phase: the one outlet's amperes. Three-phase, line-to-neutral: each phase's outlet alone is on its line.
    Three-phase, line-to-line: the outlets are across lines a-b, b-c and c-a, and a line carries the phasor difference of
    the two outlets on it, 120 degrees apart: sqrt(x^2 + y^2 + xy) (balanced, sqrt(3) x one outlet's current, as
    P = sqrt(3) x V x I says).
    """
    amps = tuple(w / power_factor / outlet_voltage_v(voltage_v, phases) for w in outlet_watts)
    if phases == 1 or line_to_neutral_outlets(voltage_v, phases):
        return amps
    ab, bc, ca = amps
    return tuple(math.sqrt(x * x + y * y + x * y) for x, y in ((ab, ca), (bc, ab), (ca, bc)))
