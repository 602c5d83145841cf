"""TensorRT-LLM's MoE exchange under attention DP as CutlassFusedMoE runs it (acc157).

An all-gather of every rank's quantized tokens (one NCCL broadcast a rank, allgatherOp.cpp with per-rank sizes) and a
reduce-scatter of the bf16 outputs: ``(ep - 1) x rank tokens x hidden x (input bytes + 2)`` a MoE layer at
``gathered_exchange_link_share`` of the link, ``(ep + 1) x gathered_exchange_latency_s`` beside it; no busiest-rank
factor. ``moe_gathered_exchange`` 0 keeps the top-k all-to-all (acc164: split from ``moe_gathered_workspace``).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

import pytest

from generator.catalog import find_model
from generator.sizing.architecture import Architecture, parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.performance import (
    GATHERED_INPUT_BYTES,
    Accelerator,
    GatheredExchange,
    gathered_exchange,
    rank_alltoall_seconds,
)
from generator.sizing.weights import Parallelism

QWEN3_235B = "Qwen/Qwen3-235B-A22B"  # 94 layers, every one MoE; hidden 4,096; 128 experts, top-8


def _arch() -> Architecture:
    return parse_architecture(find_model(QWEN3_235B).config)


def _acc(compute: str) -> Accelerator:
    return cast(Accelerator, SimpleNamespace(compute=compute))


@pytest.mark.parametrize(
    ("compute", "input_bytes"),
    [("fp8", 1.0), ("fp4", 0.5625), ("bf16", 2.0), ("fp16", 2.0)],
)
def test_the_gathered_tokens_travel_in_the_format_the_gemms_compute_in(compute: str, input_bytes: float) -> None:
    consts = Constants()._replace(moe_gathered_exchange=1)
    exchange = gathered_exchange(_acc(compute), consts)
    assert exchange == GatheredExchange(input_bytes, consts.gathered_exchange_link_share, consts.gathered_exchange_latency_s)
    assert GATHERED_INPUT_BYTES.get(compute, 2.0) == input_bytes
    # 2 (SGLang): the bf16 hidden states gathered, whatever the GEMMs compute in (acc164)
    bf16 = gathered_exchange(_acc(compute), consts._replace(moe_gathered_exchange=2))
    assert bf16 == GatheredExchange(2.0, consts.gathered_exchange_link_share, consts.gathered_exchange_latency_s)


def test_an_engine_without_the_gathered_moe_keeps_the_top_k_all_to_all() -> None:
    assert gathered_exchange(_acc("fp8"), Constants()._replace(moe_gathered_exchange=0)) is None
    # the TensorRT-LLM start-up workspace alone does not choose the exchange (acc164: the flags split)
    assert gathered_exchange(_acc("fp8"), Constants()._replace(moe_gathered_workspace=1)) is None


@pytest.mark.parametrize(
    ("ep", "rank_tokens", "input_bytes", "gb_per_s"),
    [(8, 205, 1.0, 370.8), (4, 706, 0.5625, 370.8), (2, 824, 0.5625, 50.4), (8, 1, 2.0, 370.8)],
)
def test_a_moe_layer_moves_every_other_ranks_rows_in_and_out(
    ep: int, rank_tokens: int, input_bytes: float, gb_per_s: float
) -> None:
    arch = _arch()
    share, latency = 0.3, 20e-6
    exchange = GatheredExchange(input_bytes, share, latency)
    par = Parallelism(tp=1, ep=ep)
    # hand-computed: 94 MoE layers, hidden 4,096
    per_layer = (ep - 1) * rank_tokens * 4096 * (input_bytes + 2) / (share * gb_per_s * 1e9) + (ep + 1) * latency
    got = rank_alltoall_seconds(arch, par, rank_tokens, gb_per_s, 32e-6, 1.73, None, exchange)
    assert got == pytest.approx(94 * per_layer, rel=1e-12)
    # every rank gets every row: the busiest expert rank does not stretch it
    assert rank_alltoall_seconds(arch, par, rank_tokens, gb_per_s, 32e-6, 1.0, None, exchange) == got


def test_the_gathered_exchange_is_not_the_top_k_all_to_all() -> None:
    """At DEP8 / top-8 in FP8 the gathered bytes are 0.43x the all-to-all's busiest rank's (acc144 item 3)."""
    arch, par = _arch(), Parallelism(tp=1, ep=8)
    no_latency = GatheredExchange(1.0, 1.0, 0.0)
    gathered = rank_alltoall_seconds(arch, par, 205, 370.8, 0.0, 1.73, None, no_latency)
    top_k = rank_alltoall_seconds(arch, par, 205, 370.8, 0.0, 1.73)
    assert gathered / top_k == pytest.approx(8 * 3 / (2 * 2 * 8 * 1.73), rel=1e-9)


def test_without_attention_dp_nothing_is_exchanged() -> None:
    exchange = GatheredExchange(1.0, 0.3, 20e-6)
    assert rank_alltoall_seconds(_arch(), Parallelism(tp=8, ep=8), 205, 370.8, 32e-6, 1.0, None, exchange) == 0.0
