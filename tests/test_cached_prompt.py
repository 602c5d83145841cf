"""``inference.cached_prompt_share``: the share of each prompt the engine's prefix cache already holds (newuser72 item 9).

An agent's turn resends its earlier turns verbatim, and vLLM's automatic prefix caching (on by default in its V1 engine,
https://docs.vllm.ai/en/latest/features/automatic_prefix_caching.html) prefills only the new tail. specgen charged every
request its whole 60,000-token prompt: ``agent-llama70b.yaml`` (10 req/s of 60k-token prompts, 500-token answers, Llama
3.3 70B FP8 on H100) was planned on 17 x TP8 PP3 (408 GPUs), prefill taking about half of each replica's time. With the
share, the tail's GEMMs and its attention (each new token against every position before it) are what a prompt costs,
while the KV cache still holds each request's whole context.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.api import plan_file
from generator.catalog import find_gpu, find_model
from generator.errors import InputError
from generator.sizing.architecture import Architecture, parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.performance import (
    accelerator_for,
    causal_pairs_per_token,
    prefill_flops,
    prefill_seconds,
    prompt_attention_flops_per_token,
)
from generator.sizing.precision import weight_format
from generator.sizing.serving_queue import prompt_tail
from generator.sizing.weights import Parallelism
from generator.workload import load_workload
from tests.helpers import estimate_json, run_estimate, specgen_in_process

LLAMA = "meta-llama/Llama-3.3-70B-Instruct"

AGENT = """\
version: 1
name: agent-llama
deployments:
  - name: agent
    model: {model}
{pin}    inference:
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 131072
      avg_input_tokens: 60000
      p95_input_tokens: 100000
      avg_output_tokens: 500
      requests_per_second: 10
{share}      slo:
        ttft_p95_ms: 8000
        tpot_ms: 50
hardware:
  provider: gcp
  gpus: [h100-sxm5-80gb]
objective: cost
kubernetes:
  location: us-central1
  zone: us-central1-a
  gcp_project: my-proj
outputs: [kubernetes]
"""


def _arch(model: str) -> Architecture:
    return parse_architecture(find_model(model).config)


def _agent(tmp_path: Path, share: float | None, pin: str = "", model: str = LLAMA) -> Path:
    path = tmp_path / "agent.yaml"
    given = "" if share is None else f"      cached_prompt_share: {share}\n"
    path.write_text(AGENT.format(model=model, pin=pin, share=given))
    return path


# --- the pairs a new tail computes ---------------------------------------------------------------------------------


def _pairs_by_hand(tokens: int, window: int | None, before: int) -> float:
    """Mean of min(p, W) over positions before + 1 .. before + tokens, term by term."""
    return sum(p if window is None else min(p, window) for p in range(before + 1, before + tokens + 1)) / tokens


@pytest.mark.parametrize(
    ("tokens", "window", "before", "mean"),
    [
        (4, None, 0, 2.5),  # (1 + 2 + 3 + 4) / 4: a whole prompt, as before the change
        (10, 4, 0, 3.4),  # 1 + 2 + 3 + 4, then 6 x 4 = 34 over 10
        (2, None, 3, 4.5),  # positions 4 and 5: each new token sees every cached position before it
        (3, 2, 1, 2.0),  # positions 2, 3, 4 in a window of 2: 2 keys each
        (4, 3, 1, 2.75),  # positions 2, 3, 4, 5 in a window of 3: 2 + 3 + 3 + 3 = 11 over 4
        (3, 8, 6, 23 / 3),  # positions 7, 8, 9 in a window of 8: 7 + 8 + 8
        (6000, None, 54000, 57000.5),  # Llama's tail at s = 0.9: the mean of 54,001 .. 60,000
        (6000, 128, 54000, 128.0),  # a window-128 layer: every new token sees 128 keys, past the cached prefix or not
    ],
)
def test_a_new_tail_attends_to_every_position_before_it(tokens: int, window: int | None, before: int, mean: float) -> None:
    assert _pairs_by_hand(tokens, window, before) == pytest.approx(mean, rel=1e-12)
    assert causal_pairs_per_token(tokens, window, before) == pytest.approx(mean, rel=1e-12)


@pytest.mark.parametrize("window", [None, 1, 5, 17, 64])
@pytest.mark.parametrize("before", [0, 1, 16, 40, 100])
@pytest.mark.parametrize("tokens", [1, 7, 33])
def test_the_pairs_match_a_term_by_term_sum(tokens: int, window: int | None, before: int) -> None:
    assert causal_pairs_per_token(tokens, window, before) == pytest.approx(_pairs_by_hand(tokens, window, before), rel=1e-12)


@pytest.mark.parametrize(
    ("prompt", "share", "split"),
    [
        (60000, 0.0, (60000, 0)),
        (60000, 0.5, (30000, 30000)),
        (60000, 0.9, (6000, 54000)),
        (3, 0.5, (2, 1)),  # 1.5 cached tokens round down
        (10, 0.99, (1, 9)),  # 9.9 round down
        (1, 0.9, (1, 0)),  # the last prompt token is always computed: its logits give the first output token
        (100000, 0.99999, (1, 99999)),  # 99,999.0 cached, the last token left
    ],
)
def test_the_tail_is_the_share_left(prompt: int, share: float, split: tuple[int, int]) -> None:
    assert prompt_tail(prompt, share) == split


def test_llamas_tail_prefill_flops_by_hand() -> None:
    """Llama 3.3 70B at s = 0.9 of a 60,000-token prompt: 6,000 new tokens after 54,000 cached.

    GEMMs: 2 x 69,503,033,344 FLOP parameters (its 70.55e9 less the 1.05e9 input embedding, a lookup) x 6,000 =
    8.340e14; attention: 4 x 64 heads x 128 x 80 layers = 2,621,440 FLOPs a pair, x 6,000 tokens x 57,000.5 keys on
    average = 8.965e14; 1.731e15 in all, 13% of the whole prompt's 1.306e16 (8.340e15 + 4.719e15).
    """
    arch = _arch(LLAMA)
    assert (arch.flop_params, arch.num_layers, arch.num_attention_heads, arch.head_dim) == (69_503_033_344, 80, 64, 128)
    pair = 4 * 64 * 128 * 80
    linear, attention = 2 * 69_503_033_344 * 6000, pair * 6000 * 57000.5
    assert prompt_attention_flops_per_token(arch, 6000, 54000) == pytest.approx(pair * 57000.5, rel=1e-12)
    assert prefill_flops(arch, 6000, 54000) == pytest.approx(linear + attention, rel=1e-12)
    assert prefill_flops(arch, 6000, 54000) == pytest.approx(1.7306e15, rel=1e-4)
    whole = 2 * 69_503_033_344 * 60000 + pair * 60000 * 60001 / 2
    assert prefill_flops(arch, 60000) == pytest.approx(whole, rel=1e-12)
    assert prefill_flops(arch, 6000, 54000) / whole == pytest.approx(0.1325, abs=5e-4)


def test_a_window_layers_tail_sees_its_window_alone() -> None:
    """gpt-oss-120b: 18 full layers and 18 of window 128 (config.json layer_types), 4 x 64 x 64 FLOPs a pair a layer.

    A 1,000-token tail after 9,000 cached: the full layers' tokens see 9,500.5 keys on average, the window layers' 128.
    """
    arch = _arch("openai/gpt-oss-120b")
    pair = 4 * 64 * 64
    assert all(layer.state is None for layer in arch.layers)
    expected = pair * (18 * 9500.5 + 18 * 128)
    assert prompt_attention_flops_per_token(arch, 1000, 9000) == pytest.approx(expected, rel=1e-12)


def test_the_tails_prefill_time_lies_between_the_tail_alone_and_the_whole_prompt() -> None:
    """The tail's passes and GEMMs are its own; its attention reaches back over the cached prefix."""
    arch, consts, par = _arch(LLAMA), Constants(), Parallelism(8, 1)
    acc = accelerator_for(find_gpu("h100-sxm5-80gb"), weight_format("fp8").compute, 8)
    tail = prefill_seconds(arch, par, acc, 6000, consts, fill=False, cached_tokens=54000)
    alone = prefill_seconds(arch, par, acc, 6000, consts, fill=False)
    whole = prefill_seconds(arch, par, acc, 60000, consts, fill=False)
    assert alone < tail < whole / 5
    assert prefill_seconds(arch, par, acc, 6000, consts, fill=False, cached_tokens=0) == alone


# --- the plan ------------------------------------------------------------------------------------------------------


def _agent_dep(tmp_path: Path, share: float | None, pin: str = "") -> object:
    _, plan = plan_file(str(_agent(tmp_path, share, pin)))
    (dep,) = plan.deployments
    return dep


def test_the_agent_plan_falls_with_the_cached_share(tmp_path: Path) -> None:
    """agent-llama70b.yaml (newuser72 item 9) at s = 0, 0.5, 0.9.

    s = 0: 17 x TP8 PP3 (408 GPUs), as before the field: prefill takes about half of a replica's time, so TPOT 50 ms
    binds at batch 15. s = 0.5: 29 x TP4 PP2 (232 GPUs; 30 before fix90: at 10/29 = 0.345 of a replica's most 0.37 req/s,
    the 19/20 rung, each runs 12 places, 348 at 76% busy, P(TTFT + wait > 8 s) = 4.0%; 27 for the rate alone).
    s = 0.9: 9 x TP8 (72 GPUs), each prompt prefilling its 6,000 new tokens in 0.38 s of a replica's time (2.81 s
    whole), TPOT binding at batch 29; the report's by-hand estimate was 8-10 TP8 replicas.

    acc122: p95_input_tokens states the spread (95% of 57,895 tokens, 5% of 100,000), so the average prompt's rule
    takes no ttft_p95_factor (2 x its TTFT bound TP8 PP3 before): s = 0 is 23 x TP8 PP2 (368 GPUs; was 17 x TP8 PP3,
    408), TPOT 50 ms binding at batch 12; s = 0.5 is 29 x TP8 (232 GPUs; was 29 x TP4 PP2, the same count).

    acc129: past the stated lengths the wait falls at M/G/1's own decay (the heavy-traffic slope fell too slowly: at
    rho 0.4 of these 2.68 / 5.89 s prefills the TTFT p95 8.19 s against 7.82 simulated, now 7.84): s = 0.5 is 28 x
    TP8 (224 GPUs), a replica's most 0.366 -> 0.378 req/s, 15 places each at 10 / 28 req/s, P(TTFT + wait > 8 s) 3.5%.
    """
    figures = {}
    for share in (None, 0.0, 0.5, 0.9):
        dep = _agent_dep(tmp_path, share)
        figures[share] = (dep.tp, dep.pp, dep.replicas, dep.gpus)  # type: ignore[attr-defined]
    # was {None: (8, 3, 17, 408), 0.0: (8, 3, 17, 408), 0.5: (4, 2, 29, 232), 0.9: (8, 1, 9, 72)} (acc122); 0.5 was
    # (8, 1, 29, 232) until acc129
    assert figures == {None: (8, 2, 23, 368), 0.0: (8, 2, 23, 368), 0.5: (8, 1, 28, 224), 0.9: (8, 1, 9, 72)}
    dep = _agent_dep(tmp_path, 0.9)
    assert dep.details["cached_prompt_share"] == 0.9  # type: ignore[attr-defined]
    assert dep.details["prefill_new_tokens"] == 6000  # type: ignore[attr-defined]
    (said,) = [r for r in dep.reasons if "prefix cache" in r]  # type: ignore[attr-defined]
    assert said.startswith(
        "the engine's prefix cache holds 90% of each prompt (cached_prompt_share 0.9): an average 60,000-token prompt "
        "prefills its 6,000 new tokens, each attending to the 54,000 cached before it, 0.38 s of a replica's time "
        "(2.81 s for the whole prompt)"
    )
    assert "the KV cache still holds each request's 60,500 tokens" in said
    assert "assumes the pool keeps the idle sessions' prefixes between their turns" in said
    # TP8's pool holds 2,951,888 tokens: 48 requests of 60,500, 29 of them running at the most load
    assert "beside its 29 running requests at the most load a replica's pool holds about 19 more of 60,500 tokens" in said
    assert "vllm:prefix_cache_hits / vllm:prefix_cache_queries" in said
    plain = _agent_dep(tmp_path, 0.0)
    assert "cached_prompt_share" not in plain.details  # type: ignore[attr-defined]
    assert not [r for r in plain.reasons if "prefix cache" in r]  # type: ignore[attr-defined]


def test_the_kv_cache_still_holds_the_whole_context(tmp_path: Path) -> None:
    """On one layout (TP8) the share changes the prompt's time, not the pool: the same KV tokens, the same requests."""
    pin = "    parallelism: {tp: 8, pp: 1}\n"
    whole, cached = (_agent_dep(tmp_path, share, pin) for share in (0.0, 0.9))
    keys = ("kv_cache_tokens_per_replica", "max_concurrency_per_replica", "kv_cache_bytes_per_token")
    assert [whole.details[k] for k in keys] == [cached.details[k] for k in keys]  # type: ignore[attr-defined]
    assert cached.details["ttft_p95_s"] < whole.details["ttft_p95_s"]  # type: ignore[attr-defined]
    assert cached.details["requests_per_s_per_replica_max"] > whole.details["requests_per_s_per_replica_max"]  # type: ignore[attr-defined]


# --- refusals ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("1", "1 is out of range: must be < 1"),  # all of a prompt cached: its last token is always computed
        ("1.5", "1.5 is out of range: must be < 1"),
        ("-0.1", "-0.1 is out of range: must be >= 0"),
        ("high", "expected number, got string 'high'"),
    ],
)
def test_the_share_is_at_least_0_and_below_1(tmp_path: Path, value: str, message: str) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(AGENT.format(model=LLAMA, pin="", share=f"      cached_prompt_share: {value}\n"))
    with pytest.raises(InputError) as raised:
        load_workload(path)
    said = str(raised.value)
    assert said == f"{path}:14:28: deployments[0].inference.cached_prompt_share: {message}"


def test_a_recurrent_state_model_is_refused(tmp_path: Path) -> None:
    """Qwen3-Next's Gated DeltaNet layers: vLLM runs it without prefix caching (HybridAttentionMambaModelConfig)."""
    path = _agent(tmp_path, 0.5, model="Qwen/Qwen3-Next-80B-A3B-Instruct")
    with pytest.raises(InputError) as raised:
        load_workload(path)
    said = str(raised.value)
    assert said.startswith(f"{path}:14:28: deployments[0].inference.cached_prompt_share: cached_prompt_share 0.5: ")
    assert "linear-attention or Mamba layers" in said and "without prefix caching" in said


EMBED = """\
version: 1
name: rag
deployments:
  - name: embed
    model: BAAI/bge-m3
    inference:
      task: embed
      max_context_tokens: 8192
      avg_input_tokens: 512
      requests_per_second: 60
      cached_prompt_share: 0.3
hardware:
  gpus: [l40s-48gb]
"""

FIXED = """\
version: 1
name: home-70b
deployments:
  - name: assistant
    model: meta-llama/Llama-3.3-70B-Instruct
    inference:
      precision: q4_k_m
      max_context_tokens: 8192
      avg_input_tokens: 800
      avg_output_tokens: 300
      requests_per_second: 0.01
      cached_prompt_share: 0.3
hardware:
  provider: baremetal
  fixed:
    gpu: rtx-4090-24gb
    gpu_count: 1
    ram_gib: 64
"""


@pytest.mark.parametrize(
    ("text", "line", "why"),
    [
        pytest.param(EMBED, 11, "a pooling service (task: embed) runs each request in one forward pass", id="pooling"),
        pytest.param(FIXED, 12, "hardware.fixed is sized as llama.cpp's server", id="fixed"),
    ],
)
def test_where_no_prefix_is_reused_the_share_is_refused(tmp_path: Path, text: str, line: int, why: str) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match=re.escape(f"{path}:{line}:28: deployments[0].inference.cached_prompt_share: ")) as e:
        load_workload(path)
    assert why in str(e.value)


def test_a_batch_job_takes_the_share(tmp_path: Path) -> None:
    """A batch job's requests sharing an instruction or a document prefix are reused by the same cache: not refused."""
    path = tmp_path / "job.yaml"
    text = AGENT.format(model=LLAMA, pin="", share="      cached_prompt_share: 0.5\n")
    path.write_text(text.replace("      requests_per_second: 10\n", "      requests_per_run: 36000\n      deadline_hours: 4\n"))
    assert load_workload(path).workload.deployments[0].inference.cached_prompt_share == 0.5  # type: ignore[union-attr]


# --- estimate ------------------------------------------------------------------------------------------------------

ESTIMATE: tuple[str, ...] = (
    LLAMA, "--precision", "fp8", "--kv-precision", "fp8", "--gpu", "h100-sxm5-80gb", "--tp", "8", "--context", "131072",
    "--input-tokens", "60000", "--output-tokens", "500", "--batch", "16",
)  # fmt: skip


def test_estimate_times_the_tail_and_keeps_the_pool() -> None:
    """The saturated batch stays what the KV cache holds of 60,500-token requests (48 on TP8); the TTFT falls 7x."""
    whole = estimate_json(*ESTIMATE)["throughput"]
    cached = estimate_json(*ESTIMATE, "--cached-prompt-share", "0.9")["throughput"]
    assert (whole["saturation_batch"], whole["saturation_limit"]) == (48, "kv_cache")
    assert (cached["saturation_batch"], cached["saturation_limit"]) == (48, "kv_cache")
    assert (cached["cached_prompt_share"], cached["prefill_new_tokens"]) == (0.9, 6000)
    assert "cached_prompt_share" not in whole
    assert cached["ttft_s"] < whole["ttft_s"] / 5
    assert cached["prefill_time_share"] < whole["prefill_time_share"]
    code, text = run_estimate(*ESTIMATE, "--cached-prompt-share", "0.9")
    assert code == 0 and "90% of each prompt in the prefix cache, 6,000 new tokens prefilled" in text


@pytest.mark.parametrize("value", ["1", "-0.5"])
def test_estimate_refuses_a_share_out_of_range(value: str) -> None:
    code, _ = run_estimate(*ESTIMATE, "--cached-prompt-share", value)
    assert code == 2  # an option's value out of its range: a usage error (newuser73 item 9)


def test_estimate_refuses_a_share_for_a_recurrent_state_model(capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run_estimate(
        "Qwen/Qwen3-Next-80B-A3B-Instruct", "--gpu", "h200-sxm-141gb", "--precision", "fp8", "--input-tokens", "4000",
        "--cached-prompt-share", "0.5",
    )  # fmt: skip
    assert code == 1
    # the workload's refusal and this one say the one rule (review75: no_prefix_cache_reason)
    assert capsys.readouterr().err.strip() == (
        "specgen estimate: error: --cached-prompt-share 0.5: Qwen/Qwen3-Next-80B-A3B-Instruct has linear-attention or "
        "Mamba layers (a recurrent state a sequence), which vLLM runs without prefix caching "
        "(HybridAttentionMambaModelConfig): drop it"
    )


def test_diff_names_a_change_of_the_share(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``specgen diff`` of the agent at 0 and 0.9: the row's change names the share beside the layout it moved."""
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    old, new = _agent(tmp_path / "old", None), _agent(tmp_path / "new", 0.9)
    code, out, _ = specgen_in_process(capsys, "diff", str(old), str(new))
    assert code == 0
    # the router's cap a replica moves with the layout (newuser73 item 14)
    # was "PP 3 → 1, replicas 17 → 9, places a replica 15 → 29": s = 0 plans 23 x TP8 PP2 since acc122; its places
    # 12 -> 18 since acc126 (the stated spread's wait each length's M/D/1 law, lower where the exponential was high:
    # e.g. at rho 0.27 of 2.68 / 5.89 s prefills its p95 2.96 s against 2.98 simulated, the exponential from 0 3.44);
    # 18 -> 12 since acc129: the wait past the stated lengths falls at M/G/1's own decay, so the replica's queue at its
    # most load (12 places, 94% busy, 19% wait) keeps P(TTFT + wait > 8 s) within 5% (4.3%) and is kept; before, the
    # fuller tail broke it there and the 19/20 rung's 18 places (63% busy) were taken (2.8%); the same 23 replicas
    assert "**changed: PP 2 → 1, replicas 23 → 9, places a replica 12 → 29, cached prompt share - → 0.90**" in out
