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
import math
import random
from typing import Any

import pytest

from generator.catalog import find_model
from generator.sizing.architecture import parse_architecture
from generator.sizing.performance import (
    bulk_routed_read_bytes,
    busiest_rank_routed_share,
    decode_weight_read_bytes,
    prefill_apart_read_bytes,
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


def _simulated_skewed_busiest_share(tokens: int, cv: float, trials: int) -> float:
    """Like :func:`_simulated_busiest_share` for DeepSeek-R1 at EP8, each expert's popularity lognormal of coefficient of
    variation ``cv`` (the all-to-all's ``expert_popularity_cv``), experts placed on the ranks at random each trial."""
    rng = random.Random(20261206)
    experts, top_k, ep = 256, 8, 8
    sigma = math.sqrt(math.log(1 + cv * cv))
    most = 0
    for _ in range(trials):
        weights = [rng.lognormvariate(0.0, sigma) for _ in range(experts)]
        order = list(range(experts))
        rng.shuffle(order)
        rank = {expert: i * ep // experts for i, expert in enumerate(order)}
        touched: set[int] = set()
        for _ in range(tokens):
            chosen: set[int] = set()
            while len(chosen) < top_k:  # top_k distinct experts, each drawn by its popularity
                chosen.add(rng.choices(range(experts), weights)[0])
            touched |= chosen
        counts = [0] * ep
        for expert in touched:
            counts[rank[expert]] += 1
        most += max(counts)
    return most / trials / (experts // ep)


@pytest.mark.parametrize(("tokens", "skewed"), [(8, 0.291), (32, 0.555)])
def test_uniform_routing_reads_the_most_experts(tokens: int, skewed: float) -> None:
    """review79 item 7: the reads take uniform routing while the all-to-all takes the popularity spread. Skew touches
    fewer distinct experts, so the uniform count bounds the busiest rank's reads from above (0.332 / 0.755 at 8 / 32
    tokens against 0.291 / 0.555 skewed, 300 trials of /work/wt/bugs/fix126/skew_reads.py)."""
    simulated = _simulated_skewed_busiest_share(tokens, 2.17, 60)
    assert simulated == pytest.approx(skewed, abs=0.03)
    assert busiest_rank_routed_share(R1, 8, tokens) > simulated + 0.03


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
    experts of 930 tokens (every one), the rest those of 8, far less than every step reading those of 16.

    By hand (review79 item 8: not the function's formula again): TP8 splits every expert over the GPUs; 8 tokens of
    top 8 of 256 touch ``1 - (1 - 8 / 256)^8`` = 22.4% of them, 930 tokens all but ``(1 - 1/32)^930`` ~ 1e-13.
    """
    par = Parallelism(tp=8)
    weights = size_weights(R1, weight_format("fp8"), par)
    experts = weights.expert_bytes / 8  # a GPU's slice of every routed expert
    alone = weights.per_gpu_read_bytes - experts * (1 - 8 / 256) ** 8
    assert decode_weight_read_bytes(R1, weights, par, 8) == pytest.approx(alone)
    bulk = bulk_routed_read_bytes(R1, weights, par, 8, 8.0, 922.0)
    assert bulk == pytest.approx(alone + (weights.per_gpu_read_bytes - alone) * 8 / 922)
    assert bulk < decode_weight_read_bytes(R1, weights, par, 16) * 0.8
    # a pass no larger than a step's average prompt tokens: every step carries prompt tokens, read as spread
    assert bulk_routed_read_bytes(R1, weights, par, 8, 64.0, 64.0) == decode_weight_read_bytes(R1, weights, par, 72)


def test_sglang_reads_the_weights_again_in_its_prefill_forward() -> None:
    """review79 item 3: SGLang (``--enable-mixed-chunk`` off) runs the pass as a forward of its own: in its 8 / 922 of
    the steps the decodes' forward reads what 8 tokens route to and the prefill's every weight again (922 tokens touch
    every expert): ``alone + 8 / 922 x all``, not vLLM's ``alone + 8 / 922 x (all - alone)``; a step that averages a
    pass or more prefills once a step, all its prompt tokens in one batch; dense weights too are read twice."""
    par = Parallelism(tp=8)
    weights = size_weights(R1, weight_format("fp8"), par)
    alone = decode_weight_read_bytes(R1, weights, par, 8)
    everything = float(weights.per_gpu_read_bytes)
    apart = bulk_routed_read_bytes(R1, weights, par, 8, 8.0, 922.0, prefill_apart=True)
    assert apart == pytest.approx(alone + everything * 8 / 922)
    assert apart - bulk_routed_read_bytes(R1, weights, par, 8, 8.0, 922.0) == pytest.approx(alone * 8 / 922)
    assert prefill_apart_read_bytes(R1, weights, par, 8, 8.0, 922.0) == pytest.approx((apart, 8 / 922))
    assert prefill_apart_read_bytes(R1, weights, par, 8, 1000.0, 922.0) == pytest.approx((alone + everything, 1.0))
    assert prefill_apart_read_bytes(R1, weights, par, 8, 0.0, 922.0) == (alone, 0.0)
    dense = parse_architecture(find_model("meta-llama/Llama-3.1-8B-Instruct").config)
    one = Parallelism()
    dense_weights = size_weights(dense, weight_format("bf16"), one)
    read = float(dense_weights.per_gpu_read_bytes)
    assert prefill_apart_read_bytes(dense, dense_weights, one, 4, 4.0, 256.0) == pytest.approx((read * (1 + 4 / 256), 4 / 256))


@pytest.mark.parametrize(
    ("engine", "budget", "pass_tokens"),
    [
        # vLLM: a step holds the decodes, then what its budget leaves of the waiting prompt: 512 - 8 = 504 of the 922
        ("vllm", 512, 504.0),
        ("vllm", 2048, 922.0),  # the whole prompt fits beside the 8 decodes
        # SGLang: no shared budget (None), the prompt in one prefill of up to --chunked-prefill-size (8,192), apart
        ("sglang", None, 922.0),
    ],
)
def test_the_pass_each_engine_runs(monkeypatch: pytest.MonkeyPatch, engine: str, budget: int | None, pass_tokens: float) -> None:
    """review79 item 8: ``saturated_throughput``'s pass, 8 sequences of 922 / 922 tokens on 8 x H200 (KV for 8)."""
    from generator.catalog import find_gpu
    from generator.sizing import performance
    from generator.sizing.constants import Constants

    par = Parallelism(tp=8)
    fmt = weight_format("fp8")
    weights = size_weights(R1, fmt, par)
    acc = performance.accelerator_for(find_gpu("h200-sxm-141gb"), fmt.compute, 8, 1.0, fmt)
    seen: list[tuple[float, bool]] = []
    original = performance.decode_step

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append((args[11], args[12]))  # pass_tokens, prefill_apart
        return original(*args, **kwargs)

    monkeypatch.setattr(performance, "decode_step", spy)
    sat = performance.saturated_throughput(
        R1, weights, 8, par, acc, 8 * 1844, 922, 922, Constants(), budget, prefill_apart=engine == "sglang"
    )
    assert sat.batch == 8
    assert seen == [(pass_tokens, engine == "sglang")]


def _sglang_rows(gpu: str) -> list[dict[str, Any]]:
    rows = json.loads((REPO / "tests" / "data" / "calibration.json").read_text())["throughput"]
    # issues 870 / 890's runs (acc175: InferenceX's later baselines, PRs 3288 / 3363, are tested in test_acc175_sglang_rows)
    issues = ("/issues/870", "/issues/890")
    return [r for r in rows if r["engine"] == "sglang" and r["gpu"] == gpu and r["source"].endswith(issues)]


# InferenceX's SGLang v0.5.7 DeepSeek-R1-0528 TP8 runs on 8 x H200 (issue 870), by (input, output, requests at once),
# with the error the model has now; before the prompt's pass read its experts in its own steps: -22.6 / -24.9 / -13.4 /
# +0.9% at 8 / 16 / 32 / 64, +0.8% at 922/7373, -48.8% at 7373/922. The conc-4 922/922 run of a slower runner (mean TPOT
# 22.73 ms where 922/7373 at 4 requests measured 10.93 ms) is left out: +131%. fix126 (review79 item 3): SGLang runs the
# pass as a forward of its own (a second read of the dense weights and the pass's experts, and an iteration's overhead, in
# the 0.9-6.9% of steps that run one): +2.0 / -1.2 / +5.3 / +8.9% at 8-64 fell to +1.4 / -2.4 / +2.7 / +3.5% (at 64: the
# review's +4.8% of the 32.85 ms step in reads and 0.069 x 2 ms of overhead, 1.089 / 1.052 = +3.5%); +7.4 / +5.6% at
# 4 requests moved under 0.2 points (0.4% of steps run a pass). acc160: that slow run's row now holds issue 890's rerun
# of the cell (mean TPOT 9.81 ms), +1.5%, and the rerun's conc-8 job, -6.9% (keyed apart: "890"). acc190: each run's
# 10 x CONC requests (benchmarks/dsr1_fp8_h200.sh) end with a tail at a batch falling to one: 1.7 to 2.8 points lower.
H200_TP8 = {
    (922, 922, 4, "890"): -0.006,
    (922, 922, 8, "890"): -0.087,
    (922, 922, 8): -0.005,
    (922, 922, 16): -0.042,
    (922, 922, 32): 0.004,
    (922, 922, 64): 0.007,
    (922, 7373, 4): 0.052,
    (7373, 922, 4): 0.038,
}

# InferenceX's SGLang v0.5.6 DeepSeek-R1-0528 NVFP4 TP8 EP8 runs on 8 x B200 at 4-32 requests; before: +0.9 / -3.6 /
# -2.9 / -3.0%, with the prompt's pass alone +12.7 / +12.7 / +15.6 / +11.2% (the spread prompt's extra experts had
# stood for the busiest rank's). fix126: +3.0 / +1.9 / +5.0 / +3.1% before the pass was SGLang's forward of its own.
# acc190: the same runs' 10 x CONC requests' tail: +2.8 / +1.4 / +3.9 / +0.8% before. fix196: the rows' checkpoint
# (NVIDIA's FP4-v2) keeps the q_a / q_b / kv_a / kv_b projections in BF16, read every step: 0.0 / -1.4 / +1.0 / -2.3% before.
B200_EP8 = {(922, 922, 4): -0.042, (922, 922, 8): -0.051, (922, 922, 16): -0.022, (922, 922, 32): -0.048}


@pytest.mark.parametrize(("gpu", "table"), [("h200-sxm-141gb", H200_TP8), ("b200-sxm-180gb", B200_EP8)])
def test_the_small_batch_deepseek_runs_are_where_the_mechanisms_put_them(gpu: str, table: dict[Any, float]) -> None:
    report = calibration_report()
    found = {}
    for row in _sglang_rows(gpu):
        key: tuple[Any, ...] = (row["input_tokens"], row["output_tokens"], row["max_num_seqs"])
        if row["source"].endswith("/issues/890"):
            key += ("890",)
        if key in table:
            found[key] = report.predict_throughput(row) / row["output_tokens_per_s"] - 1
    assert found == pytest.approx(table, abs=0.001)
