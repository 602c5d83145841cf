"""The switches between the GPU and the CPU in llama.cpp's offloaded decode (issue #9, accoff entry of 2026-12-04 in
benchmarks/CALIBRATION.md).

llama.cpp's scheduler (ggml-backend.cpp ``ggml_backend_sched_compute_splits``) runs a token as splits of one backend
each, copying a split's inputs across and synchronising before the next; a layer whose routed experts are in RAM is two
switches (llama.cpp's log: "graph splits" 4 + 2 x --n-cpu-moe), and CUDA graphs are off under partial offload. Each
switch costs ``offload_backend_switch_s`` (50 us: held in the offload fit, whose argmin, 150 us, is set by two runs
with the memory at DDR5-2000).
ktransformers runs its own loop, not these splits: none counted.
"""

from __future__ import annotations

from typing import Any

import pytest

from generator.sizing.constants import Constants, with_overrides
from generator.sizing.offload import GGML_SCHEDULER_ENGINES, backend_switches, offload_cost
from tests.conftest import calibration_report

EXPERTS = "gpu:0+experts:cpu"


@pytest.mark.parametrize(
    ("engine", "devices", "switches"),
    [
        # gpt-oss-120b with --n-cpu-moe 31 of its 36 layers (the 12600K rows): 62, as llama.cpp's 66 - 4
        ("llama.cpp", (EXPERTS,) * 31 + ("gpu:0",) * 5, 62),
        ("ik_llama.cpp", (EXPERTS,) * 31 + ("gpu:0",) * 5, 62),
        # its fork runs the same scheduler; ktransformers does not
        ("ktransformers", (EXPERTS,) * 31 + ("gpu:0",) * 5, 0),
        # one side only: every layer on the CPU, or every layer on the GPUs
        ("llama.cpp", ("cpu",) * 36, 0),
        ("llama.cpp", ("gpu:0",) * 36, 0),
        # whole layers on the host after the GPU's (llama.cpp's -ngl: the first layers on the CPU): one switch
        ("llama.cpp", ("cpu",) * 37 + ("gpu:0",) * 43, 1),
        # a run of host layers (RAM, then NVMe) inside GPU layers: in and out
        ("llama.cpp", ("gpu:0",) * 2 + ("cpu", "disk") + ("gpu:1",) * 2, 2),
        # experts in RAM next to a whole CPU layer: two for the experts' layer, one where the sides change
        ("llama.cpp", (EXPERTS, "cpu", "gpu:0"), 4),
    ],
)
def test_backend_switches(engine: str, devices: tuple[str, ...], switches: int) -> None:
    assert backend_switches(engine, devices) == switches


def test_a_dense_layer_with_no_experts_to_move_does_not_switch() -> None:
    """DeepSeek's first three layers are dense: -ot exps=CPU moves nothing of theirs."""
    devices = (EXPERTS,) * 5
    assert backend_switches("llama.cpp", devices, (False, False, False, True, True)) == 4
    assert backend_switches("llama.cpp", devices) == 10


def test_the_scheduler_engines_and_the_constant() -> None:
    assert GGML_SCHEDULER_ENGINES == ("llama.cpp", "ik_llama.cpp")
    assert Constants().offload_backend_switch_s == 50e-6


def _row(predicate: Any) -> dict[str, Any]:
    report = calibration_report()
    rows: list[dict[str, Any]] = [row for group, _, _, _, row in report._rows() if predicate(group, row)]
    assert len(rows) == 1
    return rows[0]


def _cost(row: dict[str, Any], consts: Constants) -> Any:
    report = calibration_report()
    context = row["context_tokens"] + 1
    arch, fmt, kv_bits, machine, placement = report._offload_setup(row, context)
    return offload_cost(arch, fmt, kv_bits, placement, machine, context, consts, engine=row["engine"])


def test_the_12600k_row_at_ddr5_2000_counts_62_switches() -> None:
    """gpt-oss-120b, the experts of 31 layers in RAM on an i5-12600K at DDR5-2000 (tg128 9.77 tokens/s): 62 switches at
    50 us are 3.1 ms a token, its own term; without them the row is timed as before this entry (14.49 tokens/s, +48.3%),
    with them 13.87 (+41.9%)."""
    group = "offload-decode llama.cpp (experts-cpu)"
    row = _row(lambda name, row: name == group and row["ddr_mt_per_s"] == 2000 and not row["context_tokens"])
    cost = _cost(row, Constants())
    assert cost.seconds_per_token["gpu-cpu-switch"] == pytest.approx(62 * 50e-6, rel=1e-12)
    # 13.8674464543 and 14.4903743757 before review77 item 2 (the 5 GPU-held MoE layers' routed-expert kernels)
    assert cost.decode_tokens_per_s == pytest.approx(13.8671462279, rel=1e-9)
    without = _cost(row, with_overrides({"offload_backend_switch_s": 0.0}))
    assert "gpu-cpu-switch" not in without.seconds_per_token
    assert without.decode_tokens_per_s == pytest.approx(14.4900465713, rel=1e-9)
    # the switches alone separate the two
    assert 1 / cost.decode_tokens_per_s - 1 / without.decode_tokens_per_s == pytest.approx(0.0031, rel=1e-9)


@pytest.mark.parametrize(
    ("engine", "placement", "tokens_per_s"),
    [
        ("ktransformers", "experts-cpu", 3.1950762139),  # its own loop: no switch counted
        # the CPU alone: no switch (1.9239484802 before acc116 timed this pre-MLA build's DeepSeek attention as it ran,
        # calibration_report ``without_mla``)
        ("llama.cpp", "cpu-only", 2.0163420148),
    ],
)
def test_no_switch_where_the_scheduler_does_not_switch(engine: str, placement: str, tokens_per_s: float) -> None:
    """The NVMe rows (DeepSeek-R1 q2_k on a 9950X) of ktransformers and of llama.cpp on the CPU alone are timed alike with
    the constant at 0 and at its value."""
    row = _row(lambda group, row: "ram_gib" in row and row["engine"] == engine and row["placement"] == placement)
    fitted, zero = _cost(row, Constants()), _cost(row, with_overrides({"offload_backend_switch_s": 0.0}))
    assert "gpu-cpu-switch" not in fitted.seconds_per_token
    assert fitted.decode_tokens_per_s == zero.decode_tokens_per_s == pytest.approx(tokens_per_s, rel=1e-9)


def test_ik_llama_cpp_with_every_expert_in_ram_switches_twice_a_moe_layer() -> None:
    """ik_llama.cpp's -ot exps=CPU NVMe row (DeepSeek-R1: 61 layers, the first 3 dense, 58 MoE): 116 switches, 5.8 ms
    a token, the dense layers none; 3.20 -> 3.14 tokens/s against the 3.00 measured."""
    row = _row(lambda group, row: "ram_gib" in row and row["engine"] == "ik_llama.cpp")
    cost = _cost(row, Constants())
    assert cost.seconds_per_token["gpu-cpu-switch"] == pytest.approx(116 * 50e-6, rel=1e-12)
    assert cost.decode_tokens_per_s == pytest.approx(3.1371742856, rel=1e-9)
    without = _cost(row, with_overrides({"offload_backend_switch_s": 0.0}))
    assert without.decode_tokens_per_s == pytest.approx(3.1953149938, rel=1e-9)
