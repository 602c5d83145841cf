"""The bandwidth a TP all-reduce gets over NVLink / Infinity Fabric: what NCCL / RCCL count on per link, not the raw link rate.

NCCL's and RCCL's topology code (``src/graph/topo.h``) gives each link its usable per-direction bandwidth after
protocol and error-correction overheads: NVLink3 (SM80) 20.0, NVLink3 bridges (SM86) 12.0, NVLink4 (SM90) 20.6,
NVLink5 (SM100) 40.0, MI300X's xGMI (gfx942) 48.0 GB/s, against raw rates of 25, 14.0625, 25, 50 and 64 GB/s.
``gpus.json`` records links x that figure as ``interconnect.collective_gb_per_s``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.catalog import find_gpu
from generator.sizing.performance import HOST_STAGED_ALLREDUCE_SHARE, accelerator_for, allreduce_seconds
from tests.conftest import catalog_json

#: gpu -> (links, the library's GB/s per link and direction, raw GB/s per link and direction), from topo.h and the datasheets.
LINKS: dict[str, tuple[int, float, float]] = {
    "a100-sxm4-80gb": (12, 20.0, 25.0),
    "a40-48gb": (4, 12.0, 14.0625),
    "h100-sxm5-80gb": (18, 20.6, 25.0),
    "h100-nvl-94gb": (12, 20.6, 25.0),
    "h200-sxm-141gb": (18, 20.6, 25.0),
    "b200-sxm-180gb": (18, 40.0, 50.0),
    "gb200-186gb": (18, 40.0, 50.0),
    "mi300x-192gb": (7, 48.0, 64.0),
    "mi325x-256gb": (7, 48.0, 64.0),
}


@pytest.mark.parametrize(
    ("gpu", "expected"),
    [
        pytest.param("a100-sxm4-80gb", 240.0, id="a100-12x20"),
        pytest.param("a40-48gb", 48.0, id="a40-bridge-4x12"),
        pytest.param("h100-sxm5-80gb", 370.8, id="h100-18x20.6"),
        pytest.param("h100-nvl-94gb", 247.2, id="h100-nvl-12x20.6"),
        pytest.param("h200-sxm-141gb", 370.8, id="h200-18x20.6"),
        pytest.param("b200-sxm-180gb", 720.0, id="b200-18x40"),
        pytest.param("gb200-186gb", 720.0, id="gb200-18x40"),
        pytest.param("mi300x-192gb", 336.0, id="mi300x-7x48"),
        pytest.param("mi325x-256gb", 336.0, id="mi325x-7x48"),
    ],
)
def test_tp_link_is_what_the_collective_library_counts_on(gpu: str, expected: float) -> None:
    record = find_gpu(gpu)
    acc = accelerator_for(record, "bf16", record.mesh_gpus or 2)  # a board's every GPU (test_mesh_links: fewer)
    assert acc.fast_link
    assert acc.link_gb_per_s == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize(("gpu", "expected"), [pytest.param("gaudi3-128gb", 525.0, id="gaudi3-no-library-figure")])
def test_a_link_without_a_library_figure_keeps_half_its_bidirectional_rate(gpu: str, expected: float) -> None:
    record = find_gpu(gpu)
    assert record.collective_gb_per_s is None
    assert accelerator_for(record, "bf16", record.mesh_gpus or 2).link_gb_per_s == expected


def test_pcie_groups_are_unchanged() -> None:
    # no scale-up link: the TP group talks over PCIe, Gen5 x16 63 GB/s per direction on a card with peer access
    acc = accelerator_for(find_gpu("rtx-pro-6000-blackwell-96gb"), "fp8", 2)
    assert (acc.link_gb_per_s, acc.host_staged) == (63.0, False)


def test_a_pcie_group_without_peer_access_is_staged_through_host_memory() -> None:
    """acc102: the L40S's TP4 / TP8 runs measured 1.28-1.79x below a ring at PCIe Gen4 x16's 31.5 GB/s. The card has
    no GPU peer-to-peer over PCIe, so NCCL routes each ring step through host memory, at 0.45 of the PCIe rate (NCCL's
    maintainer's 8-GPU runs without P2P: 28 GB/s of bus bandwidth over Gen5's 63, 0.44; 35 with 4 GPUs, 0.56)."""
    record = find_gpu("l40s-48gb")
    assert not record.pcie_peer_to_peer
    acc = accelerator_for(record, "fp8", 4)
    assert acc.link_gb_per_s == pytest.approx(0.45 * 31.5)
    assert (acc.host_staged, acc.fast_link) == (True, False)
    assert 0.44 <= HOST_STAGED_ALLREDUCE_SHARE <= 0.56
    # a 4 MiB all-reduce of a TP4 group: 2 x 3/4 of it over 14.175 GB/s, not 31.5 (2.22x the time on the wire)
    message = 4 * 2**20
    assert allreduce_seconds(message, 4, acc.link_gb_per_s, 0.0) == pytest.approx(1.5 * message / 14.175e9)


@pytest.mark.parametrize(("gpu", "facts"), list(LINKS.items()))
def test_catalog_figure_is_links_times_the_library_per_link_figure(gpu: str, facts: tuple[int, float, float]) -> None:
    links, per_link, raw = facts
    record: dict[str, Any] = next(r for r in catalog_json("gpus")["gpus"] if r["id"] == gpu)
    link = record["interconnect"]
    assert link["bandwidth_gb_per_s_bidir"] == pytest.approx(2 * links * raw)
    assert link["collective_gb_per_s"] == pytest.approx(links * per_link)
    assert "interconnect.collective_gb_per_s" in record["field_sources"]


def test_every_library_figure_is_below_the_raw_rate_and_sourced() -> None:
    for record in catalog_json("gpus")["gpus"]:
        link = record["interconnect"]
        if "collective_gb_per_s" not in link:
            continue
        assert 0 < link["collective_gb_per_s"] < link["bandwidth_gb_per_s_bidir"] / 2, record["id"]
        assert "topo.h" in record["field_sources"]["interconnect.collective_gb_per_s"], record["id"]


def test_mi300x_all_reduce_of_a_decode_step_at_batch_256() -> None:
    """405B's hidden state (16,384 bf16) for 256 tokens is 8 MiB; a ring over 8 GPUs moves 2 x 7/8 of it per link."""
    acc = accelerator_for(find_gpu("mi300x-192gb"), "fp8", 8)
    message = 256 * 16384 * 2  # 8,388,608 bytes
    # 2 x 7/8 x 8,388,608 B / 336 GB/s = 43.690667 us, plus 32 us of latency
    assert allreduce_seconds(message, 8, acc.link_gb_per_s, 32e-6) == pytest.approx(75.690667e-6, rel=1e-6)


@pytest.mark.parametrize(
    ("gpu", "tp", "text"),
    [
        pytest.param(
            "h100-sxm5-80gb", 8, "370.8 GB/s per direction over NVLink (what NCCL/RCCL count on; 450 GB/s peak)", id="nvlink"
        ),
        pytest.param(
            "mi300x-192gb", 8, "336 GB/s per direction over Infinity Fabric (what NCCL/RCCL count on; 448 GB/s peak)", id="xgmi"
        ),
        pytest.param("rtx-pro-6000-blackwell-96gb", 2, "63 GB/s per direction over PCIe Gen5", id="pcie-no-library-figure"),
        pytest.param(
            "l40s-48gb",
            2,
            "14.175 GB/s per direction over PCIe Gen4 (0.45 of its 31.5 GB/s: the NVIDIA L40S 48GB has no GPU peer-to-peer "
            "over PCIe, so NCCL stages each transfer through host memory)",
            id="pcie-through-host-memory",
        ),
    ],
)
def test_the_plan_names_the_link_and_both_bandwidths(tmp_path: Path, gpu: str, tp: int, text: str) -> None:
    from generator.planner import plan_workload
    from generator.workload import load_workload

    path = tmp_path / "w.yaml"
    path.write_text(
        "version: 1\nname: link\ndeployments:\n  - name: chat\n    model: meta-llama/Llama-3.1-8B-Instruct\n"
        f"    parallelism: {{tp: {tp}}}\n    inference:\n      max_context_tokens: 8192\n      requests_per_second: 1\n"
        f"hardware:\n  provider: baremetal\n  gpus: [{gpu}]\n"
    )
    (dep,) = plan_workload(load_workload(str(path))).deployments
    (split,) = [r for r in dep.reasons if r.startswith(f"split over {tp} GPUs (TP{tp})")]
    assert split.endswith(text)
