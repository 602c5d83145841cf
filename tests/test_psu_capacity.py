"""A node drawing more than its non-redundant PSU capacity: ruled out on sourced figures, a warning on beliefs.

Capacities by hand from ``platforms.json``: Dell XE7740 8 x 3,200 W with four redundant (StorageReview's
spec table: N+N, 1+1 CPU zone and 3+3 GPU zone) = 4 x 3,200 = 12,800 W; the WRX90 workstation 1 x 2,000 W,
all three PSU fields marked unsourced; DGX H100 6 x 3,300 W with two redundant = 13,200 W.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import catalog
from generator.api import plan_file
from generator.planner.nodes import psu_capacity_w, psu_overload

REPO = Path(__file__).resolve().parents[1]
XE7740 = "dell-xe7740"
WRX90 = "wrx90-workstation"
PRO6000 = "rtx-pro-6000-blackwell-96gb"


@pytest.mark.parametrize(
    ("platform", "capacity"),
    [
        pytest.param(XE7740, 12_800, id="xe7740-4+4"),
        pytest.param("dgx-h100", 13_200, id="dgx-h100-4+2"),
        pytest.param(WRX90, 2_000, id="wrx90-one-psu"),
        pytest.param("dell-xe8640", None, id="xe8640-psu-null"),
    ],
)
def test_non_redundant_psu_capacity(platform: str, capacity: float | None) -> None:
    assert psu_capacity_w(catalog.platforms()[platform]) == capacity


PSU_CASES = [
    pytest.param(
        XE7740,
        8,
        12_801,
        "sum of components",
        "error",
        "psu-over-capacity",
        "dell-xe7740 with 8 x rtx-pro-6000-blackwell-96gb draws 12,801 W (sum of components), more than its PSUs "
        "deliver without redundancy (4 of 8 x 3,200 W = 12,800 W)",
        id="sourced-over-ruled-out",
    ),
    pytest.param(XE7740, 8, 12_800, "sum of components", None, None, None, id="sourced-at-capacity-kept"),
    pytest.param(
        XE7740,
        8,
        12_801,
        "published maximum of dgx-h100 (same baseboard)",
        "warning",
        "psu-headroom",
        "dell-xe7740 with 8 x rtx-pro-6000-blackwell-96gb draws 12,801 W (published maximum of dgx-h100 (same "
        "baseboard)), more than its PSUs deliver without redundancy (4 of 8 x 3,200 W = 12,800 W); not ruled out "
        "because the power figure is another system's: check the chassis' PSU rating for this configuration before buying",
        id="borrowed-power-warns",
    ),
    pytest.param(
        WRX90,
        4,
        3_382,
        "sum of components",
        "warning",
        "psu-headroom",
        "wrx90-workstation with 4 x rtx-pro-6000-blackwell-96gb draws 3,382 W (sum of components), more than its PSUs "
        "deliver without redundancy (1 x 2,000 W = 2,000 W); not ruled out because the catalog's psu.count, "
        "psu.rating_w, psu.redundant for it are unsourced: check the chassis' PSU rating for this configuration "
        "before buying",
        id="believed-psu-warns",
    ),
    pytest.param(WRX90, 1, 2_000, "sum of components", None, None, None, id="believed-within"),
    pytest.param("dell-xe8640", 4, 99_999, "sum of components", None, None, None, id="no-psu-no-check"),
]


@pytest.mark.parametrize(("platform", "gpus", "power_w", "basis", "level", "code", "message"), PSU_CASES)
def test_psu_overload(
    platform: str, gpus: int, power_w: int, basis: str, level: str | None, code: str | None, message: str | None
) -> None:
    found = psu_overload(catalog.platforms()[platform], catalog.gpus()[PRO6000], gpus, power_w, basis)
    if level is None:
        assert found is None
        return
    assert found is not None
    assert (found.level, found.code, found.message) == (level, code, message)


def test_finetune_example_keeps_four_gpus_per_workstation_and_warns() -> None:
    # the WRX90's PSU figures are beliefs: the layout is kept and the warning says what to check
    plan = plan_file(str(REPO / "examples" / "finetune-8b-qlora.yaml"))[1]
    (pool,) = plan.pools
    assert (pool.nodes, pool.node.gpus, pool.node.power_w) == (2, 4, 3_382)
    assert [f.code for f in plan.findings if f.code.startswith("psu")] == ["psu-headroom"]


def test_a_sourced_psu_rules_the_full_chassis_out_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    # were the WRX90's PSU sourced, 4 x 600 W cards (3,382 W) could not be powered by 2,000 W; 2 per chassis draw
    # 1,978 W (under 2,000 W) and are bought instead: 4 workstations, not 2
    sourced = catalog.platforms()[WRX90]._replace(unsourced_fields=())
    monkeypatch.setitem(catalog.platforms(), WRX90, sourced)
    plan = plan_file(str(REPO / "examples" / "finetune-8b-qlora.yaml"))[1]
    (pool,) = plan.pools
    assert (pool.nodes, pool.node.gpus, pool.node.power_w) == (4, 2, 1_978)
    assert not [f for f in plan.findings if f.code.startswith("psu")]
    (deployment,) = plan.deployments
    assert (
        "ruled out: wrx90-workstation with 4 x rtx-pro-6000-blackwell-96gb draws 3,382 W (sum of components), more "
        "than its PSUs deliver without redundancy (1 x 2,000 W = 2,000 W)"
    ) in deployment.reasons
