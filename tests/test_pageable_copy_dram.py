"""A pageable host-to-GPU copy bound by the host's DRAM (acc185, issue 9).

CUDA copies pageable memory through pinned staging buffers: a CPU memcpy into one (a read and a write of host memory)
while the DMA engine reads the one before (a third pass). llama.cpp's prompt passes copy memory-mapped experts so (and
--no-mmap's where cudaMallocHost failed), at the slower of ``offload_pageable_copy_efficiency`` of the pinned link and
the DRAM's rate over ``pageable_copy_host_passes`` (:func:`generator.sizing.offload.pageable_copy_bytes_per_s`).
The i5-12600K at DDR5-2000 (32 GB/s) copied its memory-mapped pp512 passes at about 9 GB/s apparent: +64% -> +11%.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from generator.errors import InputError
from generator.sizing.constants import Constants, with_overrides
from generator.sizing.offload import offload_cost, pageable_copy_bytes_per_s, prefill_host_parts
from tests.conftest import REPO
from tests.conftest import calibration_report as _report


def _rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads((REPO / "tests" / "data" / "calibration.json").read_text())["offload_prefill"]
    return rows


def _row(**match: Any) -> dict[str, Any]:
    return next(r for r in _rows() if all(r.get(k) == v for k, v in match.items()))


def _machine(row: dict[str, Any]) -> Any:
    return _report()._offload_setup(row, row["prompt_tokens"] + 1)[3]


def test_ddr5_2000_bounds_the_staged_copy_and_ddr5_6000_does_not() -> None:
    """PCIe 4.0 x16 (31.5 GB/s, 0.8 of it pinned, 0.6 of that pageable: 15.1 GB/s); two DDR5 channels at 2000 MT/s
    give 32 GB/s, 0.95 of it over 3 passes: 10.1 GB/s, the bound; at 6000 MT/s 30.4 GB/s, the link's 15.1 is."""
    consts = Constants()
    slow = _machine(_row(prompt_tokens=512, mmap=True, cpu="core-i5-12600k"))
    fast = _machine(_row(prompt_tokens=512, mmap=False))
    assert slow.ddr_gb_per_s == pytest.approx(32.0) and fast.ddr_gb_per_s == pytest.approx(96.0)
    assert slow.pcie_gb_per_s == fast.pcie_gb_per_s == pytest.approx(31.5, abs=0.1)
    pinned = slow.pcie_gb_per_s * 1e9 * consts.pcie_efficiency
    assert pageable_copy_bytes_per_s(pinned, slow, consts) == pytest.approx(32e9 * 0.95 / 3)
    assert pageable_copy_bytes_per_s(pinned, fast, consts) == pytest.approx(pinned * 0.6)
    # a machine whose DRAM is not known is counted at the link alone
    assert pageable_copy_bytes_per_s(pinned, slow._replace(ddr_gb_per_s=0.0), consts) == pytest.approx(pinned * 0.6)
    # more passes a byte, a slower copy where the DRAM bounds it
    four = with_overrides({"pageable_copy_host_passes": 4.0})
    assert pageable_copy_bytes_per_s(pinned, slow, four) == pytest.approx(32e9 * 0.95 / 4)


def test_the_pinned_path_does_not_read_the_dram_bound() -> None:
    """A --no-mmap copy is a DMA from the CUDA_Host buffer: the same seconds at DDR5-2000 as at DDR5-6000."""
    row = _row(prompt_tokens=512, mmap=True, cpu="core-i5-12600k")
    report = _report()
    arch, fmt, _, machine, placement = report._offload_setup(row, row["prompt_tokens"] + 1)
    consts = report.with_overrides(dict(report.OVERRIDES))
    pinned = prefill_host_parts(arch, fmt, placement, machine, consts, 512, False).seconds
    faster = prefill_host_parts(arch, fmt, placement, machine._replace(ddr_gb_per_s=96.0), consts, 512, False).seconds
    assert pinned == pytest.approx(faster, rel=1e-12)
    paged = prefill_host_parts(arch, fmt, placement, machine, consts, 512, True).seconds
    paged_fast = prefill_host_parts(arch, fmt, placement, machine._replace(ddr_gb_per_s=96.0), consts, 512, True).seconds
    assert paged / paged_fast == pytest.approx(15.12 / 10.13, rel=2e-3)


@pytest.mark.parametrize(
    ("match", "predicted", "before"),
    [
        # the 12600K at DDR5-2000, memory-mapped pp512: 86.45 measured, +64.3% -> +11.4%
        ({"prompt_tokens": 512, "mmap": True, "cpu": "core-i5-12600k"}, 96.32, 142.06),
        # schedcp's RTX 5090 on PCIe 5.0 beside an Intel Core Ultra 9 285K (2 channels, ASSUMED DDR5-5600: 28.4 GB/s
        # under the link's 30.2): 245.63 / 260.14 measured, +1.6% / +7.7% -> -4.6% / +1.2%
        ({"prompt_tokens": 512, "cpu_moe_layers": 36, "gpu": "rtx-5090-32gb"}, 234.38, 245.63 * 1.0160),
        ({"prompt_tokens": 512, "cpu_moe_layers": 32, "gpu": "rtx-5090-32gb"}, 263.19, 260.14 * 1.0772),
        # the EPYC 7343's 8 channels of DDR4-3200 (204.8 GB/s) leave the link the bound: unchanged
        ({"prompt_tokens": 5500}, 159.45, 159.45),
    ],
)
def test_the_memory_mapped_rows(match: dict[str, Any], predicted: float, before: float) -> None:
    row = _row(**match)
    assert _report().predict_offload_prefill(row) == pytest.approx(predicted, abs=0.01)
    unbounded = with_overrides({**_report().OVERRIDES, "pageable_copy_host_passes": 1e-3})
    report = _report()
    prompt = row["prompt_tokens"]
    arch, fmt, kv_bits, machine, placement = report._offload_setup(row, prompt + 1)
    consts = unbounded._replace(offload_ubatch_tokens=row["ubatch_tokens"])
    cost = offload_cost(arch, fmt, kv_bits, placement, machine, prompt, consts, memory_mapped=True, engine=row["engine"])
    assert cost.prefill_tokens_per_s == pytest.approx(before, rel=2e-3)


def test_the_5090_rows_carry_the_machine_their_repository_states() -> None:
    """The UVM report names no CPU or RAM; the same repository's co-located record, on the same RTX 5090 and llama.cpp
    build directory, says 'CPU: Intel Core Ultra 9 285K, Memory: 128GB DDR5': two DDR5 channels."""
    for layers in (36, 32):
        row = _row(gpu="rtx-5090-32gb", cpu_moe_layers=layers)
        assert row["memory_channels"] == 2 and row["installed_ram_gib"] == 128
        assert "test-record-co-located.md" in row["machine_source"]
        assert "ASSUMED DDR5-5600" in row["assumptions"] or "Same machine" in row["assumptions"]
        assert _machine(row).ddr_gb_per_s == pytest.approx(89.6)


def test_the_passes_are_bounded_above_zero() -> None:
    with pytest.raises(InputError):
        with_overrides({"pageable_copy_host_passes": 0.0})
