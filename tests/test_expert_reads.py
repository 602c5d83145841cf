"""Which routed experts a decode step reads (acc112 entry of benchmarks/CALIBRATION.md).

Two mechanisms of a MoE step's weight reads at small batches:

- a prompt's tokens run in one forward pass, up to the engine's chunk (SGLang prefills a waiting prompt in a batch of
  its own; vLLM puts its chunk in one step), so most steps read only the experts their decodes route to, and a few read
  those of a whole pass: spread over every step, the prompt's tokens had a step of 8 decodes read the experts 16 tokens
  route to (InferenceX's SGLang DeepSeek-R1 runs at 8-32 requests at once were 13-25% under the model, its 7373/922 run
  49%);
- under expert parallelism each rank reads its own experts, and every MoE layer waits for the rank that touches the most
  of them (SGLang's DeepSeek-R1 NVFP4 runs at EP8 on B200).
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from generator.catalog import find_model
from generator.sizing.architecture import parse_architecture
from generator.sizing.performance import (
    bulk_routed_read_bytes,
    busiest_rank_routed_share,
    decode_weight_read_bytes,
    routed_share,
)
from generator.sizing.precision import weight_format
from generator.sizing.weights import Parallelism, size_weights
from tests.conftest import REPO, calibration_report

R1 = parse_architecture(find_model("deepseek-ai/DeepSeek-R1").config)


def _simulated_busiest_share(experts: int, top_k: int, ep: int, tokens: int, trials: int = 400) -> float:
    """The oracle: route ``tokens`` tokens to ``top_k`` distinct experts each, uniformly, and average the most experts
    any of the ``ep`` ranks (``experts / ep`` consecutive experts each) has touched, over its experts."""
    rng = random.Random(20261206)
    per_rank = experts // ep
    most = 0
    for _ in range(trials):
        touched: set[int] = set()
        for _ in range(tokens):
            touched.update(rng.sample(range(experts), top_k))
        counts = [0] * ep
        for expert in touched:
            counts[expert // per_rank] += 1
        most += max(counts)
    return most / trials / per_rank


@pytest.mark.parametrize("tokens", [1, 4, 8, 16, 32, 64])
def test_the_busiest_ranks_share_is_what_routing_draws(tokens: int) -> None:
    """DeepSeek-R1 (top 8 of 256 experts) at EP8: the binomial's expected maximum over the ranks against a simulation."""
    modelled = busiest_rank_routed_share(R1, 8, tokens)
    assert modelled == pytest.approx(_simulated_busiest_share(256, 8, 8, tokens), rel=0.08)
    assert modelled > routed_share(R1, tokens)  # above the mean rank's


@pytest.mark.parametrize("tokens", [1, 4, 64, 4096])
def test_tensor_parallel_experts_read_the_mean_share(tokens: int) -> None:
    """Every GPU a slice of every expert (EP 1): each reads what the step routes to, no rank more than another."""
    assert busiest_rank_routed_share(R1, 1, tokens) == routed_share(R1, tokens)


def test_a_step_that_touches_every_expert_reads_them_all_on_every_rank() -> None:
    assert busiest_rank_routed_share(R1, 8, 8192) == 1.0
    dense = parse_architecture(find_model("meta-llama/Llama-3.1-8B-Instruct").config)
    assert busiest_rank_routed_share(dense, 8, 4) == 1.0  # no experts: everything is read


def test_a_prompt_pass_reads_its_experts_in_its_own_steps() -> None:
    """8 decodes and an average of 8 prompt tokens a step, the prompt's 922 in one pass: 8 / 922 of the steps read the
    experts of 930 tokens (every one), the rest those of 8, far less than every step reading those of 16."""
    par = Parallelism(tp=8)
    weights = size_weights(R1, weight_format("fp8"), par)
    alone = decode_weight_read_bytes(R1, weights, par, 8)
    whole = decode_weight_read_bytes(R1, weights, par, 930)
    bulk = bulk_routed_read_bytes(R1, weights, par, 8, 8.0, 922.0)
    assert bulk == pytest.approx(alone + (whole - alone) * 8 / 922)
    assert bulk < decode_weight_read_bytes(R1, weights, par, 16) * 0.8
    # a pass no larger than a step's average prompt tokens: every step carries prompt tokens, read as spread
    assert bulk_routed_read_bytes(R1, weights, par, 8, 64.0, 64.0) == decode_weight_read_bytes(R1, weights, par, 72)


def _sglang_rows(gpu: str) -> list[dict[str, Any]]:
    rows = json.loads((REPO / "tests" / "data" / "calibration.json").read_text())["throughput"]
    return [r for r in rows if r["engine"] == "sglang" and r["gpu"] == gpu and r.get("lab") == "SemiAnalysis InferenceX"]


# InferenceX's SGLang v0.5.7 DeepSeek-R1-0528 TP8 runs on 8 x H200 (issue 870), by (input, output, requests at once),
# with the error the model has now; before the prompt's pass read its experts in its own steps: -22.6 / -24.9 / -13.4 /
# +0.9% at 8 / 16 / 32 / 64, +0.8% at 922/7373, -48.8% at 7373/922. The conc-4 922/922 run of a slower runner (mean TPOT
# 22.73 ms where 922/7373 at 4 requests measured 10.93 ms) is left out: +131%.
H200_TP8 = {
    (922, 922, 8): 0.020,
    (922, 922, 16): -0.012,
    (922, 922, 32): 0.053,
    (922, 922, 64): 0.089,
    (922, 7373, 4): 0.074,
    (7373, 922, 4): 0.056,
}

# InferenceX's SGLang v0.5.6 DeepSeek-R1-0528 NVFP4 TP8 EP8 runs on 8 x B200 at 4-32 requests; before: +0.9 / -3.6 /
# -2.9 / -3.0%, with the prompt's pass alone +12.7 / +12.7 / +15.6 / +11.2% (the spread prompt's extra experts had
# stood for the busiest rank's).
B200_EP8 = {(922, 922, 4): 0.030, (922, 922, 8): 0.019, (922, 922, 16): 0.050, (922, 922, 32): 0.031}


@pytest.mark.parametrize(("gpu", "table"), [("h200-sxm-141gb", H200_TP8), ("b200-sxm-180gb", B200_EP8)])
def test_the_small_batch_deepseek_runs_are_where_the_mechanisms_put_them(gpu: str, table: dict[Any, float]) -> None:
    report = calibration_report()
    found = {}
    for row in _sglang_rows(gpu):
        key = (row["input_tokens"], row["output_tokens"], row["max_num_seqs"])
        if key in table and not (key == (922, 922, 4) and gpu == "h200-sxm-141gb"):
            found[key] = report.predict_throughput(row) / row["output_tokens_per_s"] - 1
    assert found == pytest.approx(table, abs=0.001)
