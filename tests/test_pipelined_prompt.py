"""A lone prompt's chunks under pipeline parallelism: pipelined, as vLLM's V1 engine and SGLang run them (newuser73 item 19).

newuser73 read vllm-project/vllm#41682 as "vLLM runs one prompt's chunks one after another across the stages", so that
a lone 40,000-token prompt at TP8 PP4 would take about TP8 PP1's 1.64 s, not 0.67 s. vLLM's code says otherwise:
``Scheduler._update_after_schedule`` advances ``num_computed_tokens`` when a chunk is scheduled, so the next
``schedule()`` takes the prompt's next chunk, and ``EngineCore.step_with_batch_queue`` schedules a new batch while its
queue of ``max_concurrent_batches`` (the PP size) is not full; vLLM's Model Runner V2 PP RFC (#50853) keeps "Non-final
chunked-prefill chunks remain eligible in adjacent steps". SGLang documents it ("Different chunks of the same request
can be processed simultaneously by different nodes"). The sources are in :func:`prefill_seconds`. These tests pin the
pipelined figure to its formula, so that a change to it (or to the engines it rests on) is a decision, not a drift.
"""

from __future__ import annotations

import pytest

from generator.catalog import find_gpu, find_model
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.performance import accelerator_for, prefill_seconds
from generator.sizing.precision import weight_format
from generator.sizing.weights import Parallelism
from tests.helpers import estimate_json

LLAMA = "meta-llama/Llama-3.3-70B-Instruct"


@pytest.mark.parametrize("pp", [2, 4])
def test_a_lone_prompts_chunks_flow_through_the_stages_together(pp: int) -> None:
    """40,000 tokens in 8,192-token passes (5): the last pass leaves the last stage pp - 1 passes after the first
    stage is done, so the prompt takes one stage's share times 1 + (pp - 1) / 5, not pp shares (run one after another)."""
    arch, consts = parse_architecture(find_model(LLAMA).config), Constants()
    acc = accelerator_for(find_gpu("h100-sxm5-80gb"), weight_format("fp8").compute, 8)
    par = Parallelism(8, pp)
    stage = prefill_seconds(arch, par, acc, 40000, consts, fill=False)  # what the prompt keeps one stage busy
    alone = prefill_seconds(arch, par, acc, 40000, consts)
    assert consts.prefill_chunk_tokens == 8192
    assert alone == pytest.approx(stage * (1 + (pp - 1) / 5), rel=1e-12)
    assert alone < stage * pp  # serialized chunks (TensorRT-LLM's PP loop) would take pp shares


def test_the_estimates_ttft_falls_with_stages_as_the_pipelined_chunks_give() -> None:
    """The user's figures: 1.644 s at TP8 PP1, 0.993 at PP2, 0.671 at PP4 for one 40,000-token prompt."""
    ttft = {}
    for pp in (1, 2, 4):
        data = estimate_json(
            LLAMA, "--gpu", "h100-sxm5-80gb", "--tp", "8", "--pp", str(pp), "--precision", "fp8",
            "--kv-precision", "fp8", "--context", "65536", "--input-tokens", "40000", "--output-tokens", "600",
            "--batch", "1",
        )  # fmt: skip
        ttft[pp] = data["throughput"]["ttft_s"]
    assert ttft[1] == pytest.approx(1.644, abs=0.002)
    assert ttft[2] == pytest.approx(0.993, abs=0.002)
    assert ttft[4] == pytest.approx(0.671, abs=0.002)
