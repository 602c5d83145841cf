"""Heat in BTU/h from watts: a node's, a rack's and a fleet's, each rounded once from its own watts."""

from __future__ import annotations

#: 1 W of heat in BTU_IT/h: NIST SP 811 (2008) Appendix B.9 gives 1 Btu_IT/h = 2.930 711 E-01 W
#: (https://www.nist.gov/pml/special-publication-811), so 1 W = 3.412142 Btu_IT/h.
BTU_IT_PER_H_IN_W = 0.2930711
BTU_PER_H_PER_W = 1 / BTU_IT_PER_H_IN_W


def heat_btu_per_h(power_w: float) -> int:
    """The heat of ``power_w`` watts in whole BTU/h.

    A rack's or a fleet's heat is the rounding of its summed watts, not a sum of its nodes' rounded figures (those drift
    by up to half a BTU/h a node: 103,168 summed where the fleet's 30,236 W give 103,171).
    """
    return round(power_w * BTU_PER_H_PER_W)
