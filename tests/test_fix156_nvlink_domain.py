"""A platform's own NVLink domain (``platforms.json`` ``nvlink_domain``; newuser89 found item 1).

GCP a2-megagpu-16g holds two HGX A100 8-GPU boards joined back-to-back through their NVSwitches: one 16-GPU NVLink
domain (NVIDIA's HGX A100 post, sourced in the record). The A100 record's domain is one board's 8, so a DP16 job's
collectives were timed over PCIe and serving was never split 16 ways.
"""

from __future__ import annotations

import pytest

from generator import catalog
from generator.planner.options import Hardware, tensor_parallel_sizes
from generator.planner.training_comm import gpu_link

A100 = "a100-sxm4-40gb"


def _fitted(platform_id: str) -> Hardware:
    platform = catalog.platforms()[platform_id]
    return Hardware(platform, platform.fitted_gpu(catalog.gpus()[A100]))


@pytest.mark.parametrize(
    ("platform_id", "domain", "link16", "tp_sizes"),
    [
        # the A100 record's NVLink collective rate (gpus.json collective_gb_per_s), not PCIe's
        ("gcp-a2-megagpu-16g", 16, "NVLink 240 GB/s per GPU", [1, 2, 4, 8, 16]),
        # one 8-GPU board: a group of 16 is not inside its domain (it spans two machines in a plan)
        ("gcp-a2-highgpu-8g", 8, "PCIe Gen4 31.5 GB/s per GPU", [1, 2, 4, 8]),
    ],
)
def test_platform_nvlink_domain(platform_id: str, domain: int, link16: str, tp_sizes: list[int]) -> None:
    hw = _fitted(platform_id)
    assert hw.gpu.nvlink_domain_gpus == domain
    assert gpu_link(hw.gpu, 16)[1] == link16
    assert tensor_parallel_sizes(hw, 64) == tp_sizes


def test_domain_override_needs_a_source() -> None:
    platform = catalog.platforms()["gcp-a2-megagpu-16g"]
    assert platform.nvlink_domain_gpus == 16
    # the catalog's A100 record itself is unchanged: only this platform joins two boards
    assert catalog.gpus()[A100].nvlink_domain_gpus == 8
