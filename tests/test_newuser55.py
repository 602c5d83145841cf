"""newuser55 (long-context serving with SLOs): a sliding-window model's replica holds sequences in pages at their own
length, and a plan never renders settings vLLM's start-up check refuses.

Item 1: Gemma 3 27B at 32,768 tokens on an H100 ran a batch of 58 requests of 2,300 tokens where its pool held 18 (the
pool's tokens of 32,768-token requests over 2,300): one replica was bought for 2.4 req/s where two serve it. Item 2: at
131,072 tokens the plan rendered max_num_seqs 1024, whose profiling activations leave 12.12 GiB of KV cache where one
request needs 13.66 GiB at start-up (a sliding layer charged its window plus a forward pass's tokens).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator import catalog
from generator.planner import plan_workload
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.memory import size_inference
from generator.sizing.precision import weight_format
from generator.sizing.vllm_kv import request_kv_bytes, vllm_kv_cache
from generator.sizing.weights import Parallelism
from generator.units import GIB
from generator.workload import load_workload
from tests.helpers import estimate_json, run_estimate
from tests.test_config_defaults import GEMMA3_27B

H100_BYTES = catalog.gpus()["h100-sxm5-80gb"].memory_bytes


def _workload(tmp_path: Path, context: int, rate: float) -> str:
    model = tmp_path / "gemma3-27b"
    model.mkdir(exist_ok=True)
    (model / "config.json").write_text(json.dumps(GEMMA3_27B), encoding="utf-8")
    text = (
        "version: 1\nname: gemma-chat\ndeployments:\n  - name: chat\n    model: ./gemma3-27b/config.json\n    inference:\n"
        f"      precision: bf16\n      max_context_tokens: {context}\n      avg_input_tokens: 2000\n"
        f"      avg_output_tokens: 300\n      requests_per_second: {rate}\n      slo: {{ttft_p95_ms: 3000, tpot_ms: 80}}\n"
        "hardware: {provider: aws, gpus: [h100-sxm5-80gb]}\nobjective: cost\nkubernetes: {location: us-east-1}\n"
    )
    path = tmp_path / f"w{context}.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_sliding_layer_holds_the_window_of_a_request_longer_than_it() -> None:
    """A 2,300-token request holds 144 blocks in the full layers' group and 65 in each of the 6 sliding groups (a
    1,024-token window spans 64 blocks, one more unaligned): the pool's blocks over 534, not its tokens over 2,300."""
    arch = parse_architecture(GEMMA3_27B)
    memory = size_inference(arch, weight_format("bf16"), 16, 32768, 1, Parallelism(), Constants(), H100_BYTES, nvlink=False)
    cap = memory.capacity
    assert cap is not None
    blocks = vllm_kv_cache(arch, 16, cap.kv_available_bytes, 32768).num_blocks
    assert cap.rank_pool_blocks == blocks
    assert cap.sequences_held(2300) == blocks // (144 + 6 * 65)
    assert cap.sequences_held(2300) * 3 < cap.kv_cache_tokens // 2300  # what the tokens of 32,768-token requests gave
    # shorter than the window, a sequence takes as many blocks in every group: 63 each of 7 groups
    assert cap.sequences_held(1000) == blocks // (7 * 63)


def test_the_plan_buys_the_replicas_the_pool_holds(tmp_path: Path) -> None:
    plan = plan_workload(load_workload(_workload(tmp_path, 32768, 2.4)))
    (dep,) = plan.deployments
    assert dep.replicas == 2
    assert dep.details["requests_per_s_per_replica_max"] < 1.5  # was 2.46 a replica, at a batch of 58


def test_the_rendered_settings_pass_vllms_start_up_check(tmp_path: Path) -> None:
    """At 131,072 tokens the plan sizes the replica at vLLM's smaller default max_num_seqs (256), whose activations leave
    the pool the 13.66 GiB one request needs at start-up."""
    plan = plan_workload(load_workload(_workload(tmp_path, 131072, 0.5)))
    (dep,) = plan.deployments
    arch = parse_architecture(GEMMA3_27B)
    needed = request_kv_bytes(arch, 16, 131072, Parallelism(), 16, dep.details["max_num_batched_tokens"])
    assert round(needed / GIB, 2) == 13.66
    assert dep.details["max_num_seqs"] == 256
    assert dep.memory_per_gpu["kv_cache_pool"] >= needed


def test_the_estimate_sizes_at_the_limit_that_starts_and_never_calls_a_refused_start_a_fit(tmp_path: Path) -> None:
    """Item 2: the estimate printed "fits" and exited 0 beside "vLLM refuses to start"; it now sizes at vLLM's smaller
    default, as the plan does, and a pinned --max-num-seqs 1024 does not fit."""
    _workload(tmp_path, 131072, 0.5)
    args = (str(tmp_path / "gemma3-27b" / "config.json"), "--gpu", "h100-sxm5-80gb", "--context", "131072")
    code, text = run_estimate(*args)
    assert code == 0 and ": fits" in text and "refuses" not in text
    assert "sized at --max-num-seqs 256" in text
    code, text = run_estimate(*args, "--max-num-seqs", "1024")
    assert code == 3 and "does NOT fit" in text and "vLLM refuses to start" in text


def test_a_long_prompts_prefill_is_said_as_its_share_of_the_replicas_time(tmp_path: Path) -> None:
    """Item 3: at batch 1 a 24,000-token prompt read "the prompts they bring take 0% of the time in prefill"."""
    _workload(tmp_path, 131072, 0.5)
    config = str(tmp_path / "gemma3-27b" / "config.json")
    result = estimate_json(
        config, "--gpu", "h100-sxm5-80gb", "--context", "131072", "--tp", "2", "--input-tokens", "24000", "--output-tokens", "300"
    )
    thr = result["throughput"]
    assert thr["prefill_share"] == 0  # no other sequence's prompt between its tokens
    assert 0.15 < thr["prefill_time_share"] < 0.25  # its own 1.2 s prefill of a 6.6 s request


def test_the_weights_marlins_padding_adds_are_said() -> None:
    """Item 5: gpt-oss-20b held 13.67 GiB a GPU on an L4 against 12.82 GiB of weights, with no word of why."""
    notes = estimate_json("openai/gpt-oss-20b", "--gpu", "l4-24gb", "--context", "8192")["notes"]
    assert [n for n in notes if "through Marlin on ada-lovelace GPUs" in n and "0.86 GiB a GPU more" in n]
    assert not [
        n for n in estimate_json("openai/gpt-oss-20b", "--gpu", "h100-sxm5-80gb", "--context", "8192")["notes"] if "Marlin" in n
    ]


def test_a_refused_start_names_the_batch_limits_that_cause_it(tmp_path: Path) -> None:
    """review36 item 6: a pinned max_num_seqs and a large max_num_batched_tokens were never named, "looser SLOs" was
    offered, and the sliding layers were said charged "65,536 tokens beyond their window" where the context capped them."""
    from generator.errors import InfeasibleError

    path = _workload(tmp_path, 131072, 2.4)
    text = (
        Path(path)
        .read_text(encoding="utf-8")
        .replace("      precision: bf16\n", "      precision: bf16\n      max_num_seqs: 1024\n")
        .replace("hardware:", "    parallelism: {tp: 1, pp: 1}\nhardware:")  # one GPU a replica
    )
    Path(path).write_text(text, encoding="utf-8")
    with pytest.raises(InfeasibleError) as caught:
        plan_workload(load_workload(path))
    said = str(caught.value)
    assert "charged 9,215 tokens each, where decoding they hold 1,024), 12.88 GiB is left at max_num_seqs 1,024" in said
    assert "to unblock: a lower inference.max_num_seqs" in said and "looser SLOs" not in said
    text = text.replace("max_num_seqs: 1024", "max_num_batched_tokens: 65536").replace("131072", "32768")
    Path(path).write_text(text, encoding="utf-8")
    with pytest.raises(InfeasibleError) as caught:
        plan_workload(load_workload(path))
    said = str(caught.value)
    assert "charged 32,768 tokens each" in said and "to unblock: a lower inference.max_num_batched_tokens" in said
