"""fix174: the G4 GPU quota metric's name has no Google page as source: the gke-gpu-quota finding says so beside it.

``GPU_QUOTA_METRIC`` names each GKE accelerator's regional quota metric. NVIDIA_RTX_PRO_6000_GPUS (G4) rests on
third-party scripts and the NVIDIA_<GPU>_GPUS pattern (the research notes in ``vcpu_quota.py``); the project's rule is
that such a figure is marked unsourced, so the row of a G4 pool says so, on demand and on Spot, and the rows of the
sourced metrics do not.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import SimpleNamespace
from typing import cast

import pytest

from generator.planner.plan import Pool
from generator.planner.vcpu_quota import GPU_QUOTA_METRIC, UNSOURCED_QUOTA_METRICS, vcpu_quota_findings

UNSOURCED = "the metric's name is unsourced: no Google page names it"


def pools(*rows: tuple[str, str, int, int, bool]) -> Iterable[Pool]:
    """(name, machine type, nodes, GPUs a node, Spot) -> the fields of a Pool the finding reads."""
    return [
        cast(
            "Pool",
            SimpleNamespace(
                name=name, nodes=nodes, spot=spot, node=SimpleNamespace(provider="gcp", instance_type=machine, gpus=gpus)
            ),
        )
        for name, machine, nodes, gpus, spot in rows
    ]


def test_every_unsourced_metric_is_one_the_table_names() -> None:
    assert set(GPU_QUOTA_METRIC.values()) >= UNSOURCED_QUOTA_METRICS
    assert GPU_QUOTA_METRIC["nvidia-rtx-pro-6000"] in UNSOURCED_QUOTA_METRICS


@pytest.mark.parametrize(
    ("spot", "metric"), [(False, "NVIDIA_RTX_PRO_6000_GPUS"), (True, "PREEMPTIBLE_NVIDIA_RTX_PRO_6000_GPUS")]
)
def test_a_g4_row_says_its_metric_is_unsourced(spot: bool, metric: str) -> None:
    (found,) = vcpu_quota_findings("gcp", "us-central1", pools(("chat", "g4-standard-96", 3, 2, spot)))
    assert f"{metric} 6 (pool chat 3 node(s) x 2; {UNSOURCED}); 6 of GPUS_ALL_REGIONS" in found.message


def test_a_sourced_metric_row_says_nothing_of_it() -> None:
    (found,) = vcpu_quota_findings(
        "gcp", "us-central1", pools(("chat", "a3-highgpu-8g", 2, 8, False), ("g4", "g4-standard-48", 1, 1, False))
    )
    assert "NVIDIA_H100_GPUS 16 (pool chat 2 node(s) x 8); " in found.message
    assert found.message.count(UNSOURCED) == 1
