"""The --no-mmap prompt rows timed on the RAM their source states, as the plan of a machine of yours is (acc103).

llama.cpp's --no-mmap loads the weights held in RAM into one CUDA_Host (pinned) buffer; where cudaMallocHost fails it
falls back to a pageable CPU buffer (ggml-cuda.cu ``ggml_backend_cuda_host_buffer_type_alloc_buffer``, "fallback to
cpu buffer"), and the plan times the prompt's copies at the pageable rate where the pinned bytes are more than
``pinned_host_ram_share`` of the RAM (``pinned_falls_back``, review26 item 1). The calibration timed its two --no-mmap
rows (an i5-12600K + RTX 4070 with 64 GB, 52.6 GB of experts pinned, 82%) on a machine of unlimited RAM, so at the
pinned rate: a figure the plan never prints for that machine (+272% / -46%). Each prompt row whose source states its RAM
carries it (``installed_ram_gib``), and the row is timed on it: the memory-mapped rows do not move (nothing is pinned),
the two --no-mmap rows are timed at the pageable rate the plan prints (+141% / -67%).

The rows' own figures say the box pinned the buffers in one run and not in the other, which no input of the plan
tells apart (the warning ``pinned-buffers-large`` gives both TTFTs): the last two tests keep that arithmetic.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from generator.sizing.offload import offload_cost, pinned_bytes, prefill_host_parts
from generator.sizing.performance import expected_experts_touched
from generator.sizing.weights import size_weights
from generator.units import GIB
from tests.conftest import REPO
from tests.conftest import calibration_report as _report


def _rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads((REPO / "tests" / "data" / "calibration.json").read_text())["offload_prefill"]
    return rows


def _row(**match: Any) -> dict[str, Any]:
    return next(r for r in _rows() if all(r.get(k) == v for k, v in match.items()))


def _unlimited(row: dict[str, Any]) -> float:
    """The row's prompt tokens/s on a machine of unlimited RAM (how the calibration timed every row before)."""
    report = _report()
    prompt = row["prompt_tokens"]
    arch, fmt, kv_bits, machine, placement = report._offload_setup(row, prompt + 1)
    consts = report.with_overrides({**report.OVERRIDES, "offload_ubatch_tokens": row["ubatch_tokens"]})
    machine = machine._replace(ram_bytes=4096 * GIB)
    cost = offload_cost(arch, fmt, kv_bits, placement, machine, prompt, consts, memory_mapped=row["mmap"], engine=row["engine"])
    return cost.prefill_tokens_per_s


@pytest.mark.parametrize(
    ("match", "ram_gib", "unlimited", "on_its_ram"),
    [
        # the 12600K's --no-mmap rows: 52.6 GB pinned of 64 GiB, over half: the pageable rate, at DDR5-2000 the DRAM's
        # over its three passes a staged byte takes (acc185: 462.89 at 0.6 of the link before), at DDR5-6000 the link's
        ({"prompt_tokens": 5501, "mmap": False}, 64, 713.48, 323.23),
        ({"prompt_tokens": 512, "mmap": False}, 64, 231.38, 142.06),
        # memory-mapped rows whose source states the RAM: nothing pinned, nothing moves with the RAM (the DDR5-2000
        # row's pageable copy is its DRAM's, acc185: 142.06 before)
        ({"prompt_tokens": 512, "mmap": True, "cpu": "core-i5-12600k"}, 64, 96.32, 96.32),
        ({"prompt_tokens": 12717}, 96, 122.34, 122.34),
        ({"prompt_tokens": 5500}, 64, 159.45, 159.45),
    ],
)
def test_a_prompt_row_is_timed_on_the_ram_its_source_states(
    match: dict[str, Any], ram_gib: int, unlimited: float, on_its_ram: float
) -> None:
    row = _row(**match)
    assert row["installed_ram_gib"] == ram_gib
    assert _unlimited(row) == pytest.approx(unlimited, abs=0.01)
    assert _report().predict_offload_prefill(row) == pytest.approx(on_its_ram, abs=0.01)


def test_a_row_that_states_no_ram_is_timed_without_a_limit() -> None:
    """ik_llama.cpp PR #698's 5975WX names no RAM: its machine keeps the unlimited RAM (schedcp's RTX 5090 has its
    128 GB since acc185, from the same repository's co-located test record)."""
    unstated = [r for r in _rows() if "installed_ram_gib" not in r]
    assert len(unstated) == 3
    for row in unstated:
        _, _, _, machine, _ = _report()._offload_setup(row, row["prompt_tokens"] + 1)
        assert machine.ram_bytes == 4096 * GIB
        assert _report().predict_offload_prefill(row) == pytest.approx(_unlimited(row), rel=1e-12)


def _copy_seconds(row: dict[str, Any]) -> tuple[float, float, float]:
    """(measured seconds of the prompt, the GPU's compute and first token the model times, bytes of experts a pass of
    ``-ub`` tokens would copy under uniform routing)."""
    report = _report()
    prompt = row["prompt_tokens"]
    arch, fmt, kv_bits, machine, placement = report._offload_setup(row, prompt + 1)
    consts = report.with_overrides({**report.OVERRIDES, "offload_ubatch_tokens": row["ubatch_tokens"]})
    unlimited = machine._replace(ram_bytes=4096 * GIB)
    cost = offload_cost(arch, fmt, kv_bits, placement, unlimited, prompt, consts, memory_mapped=False)
    host = prefill_host_parts(arch, fmt, placement, machine, consts, prompt, False).seconds
    routed, top_k = arch.routed_experts
    share = expected_experts_touched(routed, top_k, row["ubatch_tokens"]) / routed
    assert sum(size_weights(arch, fmt).layer_expert_bytes[: row["cpu_moe_layers"]]) == pinned_bytes(placement)
    return prompt / row["tokens_per_s"], cost.prefill_s - host, pinned_bytes(placement) * share


def test_the_ddr5_6000_run_pinned_its_buffers_and_copied_fewer_experts_than_uniform_routing() -> None:
    """pp512 at 429.9 tokens/s: 1.06 s of copying a pass. Every expert of the 31 layers (52.6 GB, uniform routing touches
    all 128 at 512 tokens) would need 49.4 GB/s, over PCIe 4.0 x16's 31.5: gpt-oss's router sent the pass to at most
    64% of them. And faster than any memory-mapped (pageable) row's apparent rate, the RTX 5090's on PCIe 5.0 (29.7 GB/s)
    included: a pinned copy."""
    measured, other, copied = _copy_seconds(_row(prompt_tokens=512, mmap=False))
    rate = copied / (measured - other) / 1e9
    assert rate == pytest.approx(49.4, abs=0.1)
    assert rate > 31.5
    pageable = []
    for row in (r for r in _rows() if r["mmap"] and r["engine"] == "llama.cpp"):
        m, o, c = _copy_seconds(row)
        full, rest = divmod(row["prompt_tokens"], row["ubatch_tokens"])
        pageable.append(c * (full + (rest / row["ubatch_tokens"] if rest else 0)) / (m - o) / 1e9)
    assert max(pageable) == pytest.approx(29.7, abs=0.1)
    assert rate > max(pageable)


def test_the_ddr5_2000_server_run_copied_slower_than_the_same_box_memory_mapped() -> None:
    """The 5,501-token server run at -ub 2048: 27.2 s of copying over 3 passes, 9.1 s a pass, where the same box at the
    same DDR5-2000 copied its memory-mapped (pageable) pp512 pass in 5.8 s; pinned, a pass of every expert takes 2.1 s
    at the modelled link (0.8 of 31.5 GB/s). So not the pinned rate: a failed cudaMallocHost (the plan's rule), or a
    pinned buffer that left the machine short of memory (NVIDIA's cudaHostAlloc documentation: excessive pinned memory
    degrades system performance)."""
    measured, other, copied = _copy_seconds(_row(prompt_tokens=5501, mmap=False))
    per_pass = (measured - other) / 3
    assert per_pass == pytest.approx(9.08, abs=0.05)
    mapped, mapped_other, _ = _copy_seconds(_row(prompt_tokens=512, mmap=True, cpu="core-i5-12600k"))
    assert mapped - mapped_other == pytest.approx(5.80, abs=0.05)
    assert copied / (0.8 * 31.5e9) == pytest.approx(2.09, abs=0.01)
    assert per_pass > mapped - mapped_other > copied / (0.8 * 31.5e9)
