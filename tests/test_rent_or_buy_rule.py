"""One rent-or-buy rule for a bare-metal node from the catalog (review77 item 9).

:func:`generator.planner.tco._rented_in_catalog` answers "is this node rented?" without forming the node's cost;
:func:`_catalog_node_cost` forms the cost, rented or bought. Both now ask :func:`_rents_on_bare_metal`; this table, over
every catalog platform, GPU and GPU count, pins that the quick answer is the cost's (``.rented`` set) everywhere.
"""

from __future__ import annotations

from generator import catalog
from generator.catalog.records import PlatformSpec
from generator.planner import tco
from generator.sizing.constants import Constants


def _nodes() -> list[tuple[PlatformSpec, str, int]]:
    return [
        (platform, gpu_id, count)
        for platform in sorted(catalog.platforms().values(), key=lambda p: p.id)
        for gpu_id in platform.gpu_ids
        for count in platform.gpu_counts
    ]


def test_the_quick_answer_is_the_costs_on_every_catalog_node() -> None:
    seen = {"rented": 0, "bought": 0, "cloud": 0}
    for platform, gpu_id, count in _nodes():
        cost = tco._catalog_node_cost(platform, gpu_id, count, 700 * count, Constants())
        rented = tco._rented_in_catalog(platform, gpu_id, count)
        assert rented == (cost.rented is not None), (platform, gpu_id, count)
        kind = "cloud" if platform.provider != "baremetal" else "rented" if rented else "bought"
        seen[kind] += 1
    assert all(seen.values()), seen  # the table holds rented and bought bare-metal nodes and cloud ones


def test_the_rule() -> None:
    (rec,) = [p for p in catalog.prices().values() if p.unit == "hour"][:1]
    assert tco._rents_on_bare_metal((rec,), "no purchase price for x (host)")
    assert not tco._rents_on_bare_metal((rec,), (1.0, "priced", False))  # priced: bought
    assert not tco._rents_on_bare_metal((), "no purchase price for x (host)")  # neither: unpriced
    assert not tco._rents_on_bare_metal((), (1.0, "priced", False))
