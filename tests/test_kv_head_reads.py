"""A decode attention kernel that reads a KV head's cache once per query head (TensorRT-LLM before XQA; acc166).

TensorRT-LLM's masked multi-head attention kernel runs one thread block per sequence and query head
(``hi_kv = hi / qhead_per_kv``): Llama 2 70B's 64 query heads over 8 KV heads read each KV head 8 times a step. XQA
(v0.8) reads it once for the group. Figures worked by hand from the models' configs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.catalog import find_model
from generator.sizing.architecture import Architecture, parse_architecture
from generator.sizing.constants import CONSTANT_BOUNDS, Constants
from generator.sizing.kv_cache import stage_decode_bits
from generator.sizing.kv_head_reads import per_query_head_decode_bits, query_heads_per_kv_read
from generator.sizing.performance import Accelerator, decode_step, static_batch_seconds
from generator.sizing.weights import Parallelism
from tests.conftest import calibration_report

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "calibration.json"
#: The calibration row fields of Llama 2 70B FP8 under TensorRT-LLM's C++ runtime on H200s (each test sets its TP).
H200_70B_FP8 = {
    "engine": "tensorrt-llm-cpp",
    "model": "meta-llama/Llama-2-70b-hf",
    "gpu": "h200-sxm-141gb",
    "precision": "fp8",
    "kv_precision": "fp8",
    "pp": 1,
}


def _arch(model: str) -> Architecture:
    return parse_architecture(find_model(model).config)


@pytest.mark.parametrize(
    ("model", "tp", "reads"),
    [
        # Llama 2 70B: 64 query heads, 8 KV heads; a GPU keeps the ratio up to TP8 (8 / 1)
        ("meta-llama/Llama-2-70b-hf", 1, 8),
        ("meta-llama/Llama-2-70b-hf", 2, 8),
        ("meta-llama/Llama-2-70b-hf", 8, 8),
        # TP16: 4 query heads a GPU beside its one (replicated) KV head
        ("meta-llama/Llama-2-70b-hf", 16, 4),
        # Llama 2 13B is MHA (40 / 40): one read
        ("meta-llama/Llama-2-13b-hf", 1, 1),
    ],
)
def test_a_gpu_reads_each_kv_head_once_per_query_head_of_its_group(model: str, tp: int, reads: int) -> None:
    arch = _arch(model)
    assert {query_heads_per_kv_read(arch, layer, tp) for layer in arch.layers} == {reads}


def test_the_70b_step_moves_eight_times_its_kv_and_the_13b_step_its_own() -> None:
    seventy = _arch("meta-llama/Llama-2-70b-hf")
    # 80 layers x 8 KV heads x 128 x (K + V) = 163,840 FP8 bytes a token; 1,152 tokens, TP2: half of it a GPU
    once = stage_decode_bits(seventy, 1152, 8, 2, 1, "first")
    assert once == 1152 * 163840 * 8 // 2
    assert per_query_head_decode_bits(seventy, 1152, 8, 2, 1, "first") == 8 * once
    thirteen = _arch("meta-llama/Llama-2-13b-hf")
    assert per_query_head_decode_bits(thirteen, 1152, 8, 1, 1, "first") == stage_decode_bits(thirteen, 1152, 8, 1, 1, "first")


def test_the_setting_moves_only_the_kv_read_of_the_decode_step() -> None:
    arch = _arch("meta-llama/Llama-2-70b-hf")
    report = calibration_report()
    row = {**H200_70B_FP8, "tp": 2}
    _, weights, par, acc, kv_bits, consts = report._replica(row)
    assert isinstance(acc, Accelerator) and par == Parallelism(tp=2, pp=1, ep=1, stages=par.stages)
    base = decode_step(arch, weights, kv_bits, par, acc, 512, 1152, consts)
    grouped = decode_step(arch, weights, kv_bits, par, acc, 512, 1152, consts._replace(decode_kv_read_per_query_head=1))
    # 512 sequences x 1,152 tokens x 81,920 B a GPU = 48.3 GB read once; seven more reads of it at 0.7 x 4.8 TB/s
    extra = 7 * 512 * 1152 * 81920 / (acc.memory_bandwidth_gb_per_s * 1e9 * consts.decode_bandwidth_efficiency)
    assert grouped.memory_seconds - base.memory_seconds == pytest.approx(extra, rel=1e-6)
    assert grouped.compute_seconds == base.compute_seconds and grouped.comm_seconds == base.comm_seconds
    assert Constants().decode_kv_read_per_query_head == 0
    assert CONSTANT_BOUNDS["decode_kv_read_per_query_head"] == (0, True, 1, True)


def test_rows_before_xqa_decode_with_it_and_the_others_do_not() -> None:
    report = calibration_report()
    assert dict(report._row_constants({"engine": "tensorrt-llm-cpp", "xqa": False}))["decode_kv_read_per_query_head"] == 1
    assert "decode_kv_read_per_query_head" not in dict(report._row_constants({"engine": "tensorrt-llm-cpp"}))
    rows = json.loads(DATA.read_text())["throughput"]
    before_xqa = [r for r in rows if r.get("xqa") is False]
    # the static batches of v0.5 (H200 launch blog, L40S table) and v0.6.1 (A100, H100 tables): 7 + 4 + 3 + 4
    assert len(before_xqa) == 18
    assert all(r["engine"] == "tensorrt-llm-cpp" and "batch" in r for r in before_xqa)


def test_the_h200_70b_long_output_cell_is_its_grouped_kv_read() -> None:
    # TensorRT-LLM v0.5.0, TP2, batch 512, 128/2048: 3,308 out tok/s a replica (1,654 a GPU); +158.7% with the KV read
    # once per KV head, -5.0% read once per query head
    report = calibration_report()
    (row,) = [
        r
        for r in json.loads(DATA.read_text())["throughput"]
        if r["engine"] == "tensorrt-llm-cpp" and r["model"].endswith("Llama-2-70b-hf") and r["tp"] == 2
    ]
    assert row["output_tokens_per_s"] == 3308 and row["xqa"] is False
    assert report.predict_static_batch(row) / 3308 - 1 == pytest.approx(-0.050, abs=0.01)
    assert report.predict_static_batch({**row, "xqa": True}) / 3308 - 1 > 1.5


def test_a_static_batch_prefills_with_context_attention_and_decodes_with_the_grouped_reads() -> None:
    # static_batch_seconds: the prompts' pass runs the fused context FMHA (the setting off), the osl - 1 steps the
    # generation kernel (the setting on)
    report = calibration_report()
    row = {**H200_70B_FP8, "tp": 1}
    arch, weights, par, acc, kv_bits, consts = report._replica(row)
    grouped = consts._replace(decode_kv_read_per_query_head=1)
    batch, isl, osl = 64, 2048, 128
    prefill = decode_step(arch, weights, kv_bits, par, acc, batch, isl, consts, batch * isl, isl).seconds
    step = decode_step(arch, weights, kv_bits, par, acc, batch, isl + osl // 2, grouped).seconds
    got = static_batch_seconds(arch, weights, kv_bits, par, acc, batch, isl, osl, grouped)
    assert got == pytest.approx(prefill + (osl - 1) * step, rel=1e-12)
    grouped_prefill = decode_step(arch, weights, kv_bits, par, acc, batch, isl, grouped, batch * isl, isl).seconds
    assert grouped_prefill > prefill
