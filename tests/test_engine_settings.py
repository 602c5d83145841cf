"""The serving engine settings a plan counts on, and the group vars that carry them to the engine.

The batch limit (vLLM --max-num-seqs): its default per GPU and the plan never counting on more (newuser9 item 1);
a pinned expert-parallel degree sized as expert parallelism and rendered (newuser9 item 2).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import catalog
from generator.calculator.estimate import EstimateRequest, estimate
from generator.errors import InfeasibleError, InputError
from generator.planner import plan_workload
from generator.planner.plan import Plan
from generator.render.ansible import render_ansible
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.engine_runtime import default_max_num_batched_tokens, default_max_num_seqs
from generator.sizing.weights import Parallelism
from generator.workload import LoadedWorkload, load_workload
from tests.conftest import REPO
from tests.helpers import ansible_reader


@pytest.mark.parametrize(
    ("engine", "gpu", "expected"),
    [
        # vLLM get_batch_defaults: 70 GiB or more and not an A100 -> 1,024; the rest 256
        ("vllm", "h100-sxm5-80gb", 1024),
        ("vllm", "h200-sxm-141gb", 1024),
        ("vllm", "mi300x-192gb", 1024),
        ("vllm", "rtx-pro-6000-blackwell-96gb", 1024),
        ("vllm", "a100-sxm4-80gb", 256),  # 80 GB, but vLLM keeps A100 on the small defaults (its PR #17885)
        ("vllm", "l40s-48gb", 256),
        ("vllm", "l4-24gb", 256),
        ("sglang", "h100-sxm5-80gb", None),  # SGLang sizes its request pool from the KV tokens (2,048 or more)
    ],
)
def test_default_max_num_seqs_per_gpu(engine: str, gpu: str, expected: int | None) -> None:
    spec = catalog.gpus()[gpu]
    assert default_max_num_seqs(engine, spec.name, spec.memory_bytes) == expected
    # the same test sets the tokens of a forward pass: 8,192 with the larger batch, 2,048 with the smaller
    tokens = default_max_num_batched_tokens(engine, spec.name, spec.memory_bytes)
    assert tokens == {1024: 8192, 256: 2048, None: None}[expected]


TINY_ON_L4 = """\
version: 1
name: small-l4
deployments:
  - name: tiny
    model: meta-llama/Llama-3.2-1B-Instruct
    inference:
      max_context_tokens: 4096
      avg_input_tokens: 300
      avg_output_tokens: 200
      requests_per_second: 124
      slo: {{ttft_p95_ms: 2000, tpot_ms: 100}}{limit}
hardware:
  gpus: [l4-24gb]
  provider: baremetal
"""


def _plan(tmp_path: Path, limit: str = "", text: str = TINY_ON_L4) -> tuple[LoadedWorkload, Plan]:
    path = tmp_path / "w.yaml"
    path.write_text(text.format(limit=limit))
    loaded = load_workload(str(path))
    return loaded, plan_workload(loaded)


def test_a_replica_never_counts_on_more_sequences_than_vllm_runs(tmp_path: Path) -> None:
    """A 1B model on L4: the KV cache holds thousands of requests, stock vLLM runs 256 at once, so the plan does too and
    says what would lift it; the rendered group vars name the limit."""
    loaded, plan = _plan(tmp_path)
    (dep,) = plan.deployments
    assert dep.details["max_num_seqs"] == 256
    assert dep.details["batch_per_replica"] <= 256
    assert any("the batch stops at 256 sequences (vLLM's default on l4-24gb)" in r for r in dep.reasons)
    files = render_ansible(plan, loaded.workload)
    (group_vars,) = (ansible_reader().load(text) for name, text in files.items() if "group_vars" in name)
    (entry,) = group_vars["specgen_deployments"]
    # the same settings as vLLM's flags, with the layout (fix115: beside args as keys only, vLLM started at defaults)
    args = [
        "--tensor-parallel-size", "1", "--pipeline-parallel-size", "1", "--max-model-len", "4096",
        "--max-num-seqs", "256", "--max-num-batched-tokens", "2048", "--gpu-memory-utilization", "0.9",
    ]  # fmt: skip
    assert entry["engine"] == {
        "args": args,
        "gpu_memory_utilization": 0.9,  # the fraction of the GPU the sizing gave vLLM
        "kv_cache_precision": "bf16",
        "max_model_len": 4096,
        "max_num_batched_tokens": 2048,
        "max_num_seqs": 256,
        "name": "vllm",
    }


def test_a_higher_limit_in_the_workload_is_used_and_rendered(tmp_path: Path) -> None:
    """On an L40S (vLLM's default is 256 there too) at 300 req/s the 256 sequences, not the SLOs, bound a replica of
    this 1B model: 8 GPUs. At 1,024 a one-GPU replica batches 675 (a pass's 2,048 tokens stop it at 819), so 4 GPUs
    serve the rate and the plan costs less ($3,490.77 -> $2,099.44 a month).

    (A 4090 at 124 req/s, this test's case before the refit of 2026-12-03, is compute-bound below 256 sequences within
    the SLOs since; an L4 sustains 0.49 of its tensor peak under a large GEMM, so its compute binds too.)
    """
    on_l40s = TINY_ON_L4.replace("[l4-24gb]", "[l40s-48gb]").replace("requests_per_second: 124", "requests_per_second: 300")
    default, raised = (_plan(tmp_path, limit, on_l40s)[1] for limit in ("", "\n      max_num_seqs: 1024"))
    assert any("the batch stops at 256 sequences" in r for r in default.deployments[0].reasons)  # the limit binds
    (dep,) = raised.deployments
    assert dep.details["max_num_seqs"] == 1024
    assert dep.details["batch_per_replica"] > 256
    # larger batches: fewer GPUs for the same rate, and a cheaper plan
    assert raised.totals["gpus"] < default.totals["gpus"]
    assert raised.totals["usd_per_month"] < default.totals["usd_per_month"]
    assert not any("the batch stops at 256" in r for r in dep.reasons)  # the next limit, the tokens a pass, may say so


def test_the_tokens_of_a_forward_pass_are_vllms_on_the_gpu_or_the_workloads(tmp_path: Path) -> None:
    """vLLM's server runs 2,048 tokens a forward pass on an L4 (8,192 on H100-class GPUs) and its profiling run
    reserves memory for them: the plan sizes with that, a workload's own figure wins, and both are rendered."""
    _, default = _plan(tmp_path)
    _, given = _plan(tmp_path, "\n      max_num_batched_tokens: 8192")
    (small,), (large,) = default.deployments, given.deployments
    assert (small.details["max_num_batched_tokens"], large.details["max_num_batched_tokens"]) == (2048, 8192)
    # a larger profiling forward reserves more: fewer KV tokens fit
    assert large.details["kv_cache_tokens_per_replica"] < small.details["kv_cache_tokens_per_replica"]
    # the engine default as a constant of the workload counts as the workload's own
    path = tmp_path / "c.yaml"
    path.write_text(TINY_ON_L4.format(limit="") + "constants: {prefill_chunk_tokens: 8192}\n")
    (folded,) = plan_workload(load_workload(str(path))).deployments
    assert folded.details["max_num_batched_tokens"] == 8192


def test_vllm_never_runs_more_sequences_than_tokens_a_forward_pass(tmp_path: Path) -> None:
    """Review 8 H1: 256 tokens a pass beside vLLM's 1,024 sequences on an H100 is a start-up vLLM refuses
    (max_num_batched_tokens must be at least max_num_seqs): the default sequences are lowered to the tokens, and
    both given apart like that are refused."""
    text = TINY_ON_L4.replace("[l4-24gb]", "[h100-sxm5-80gb]")
    path = tmp_path / "w.yaml"
    path.write_text(text.format(limit="\n      max_num_batched_tokens: 256"))
    loaded = load_workload(str(path))
    (dep,) = plan_workload(loaded).deployments
    assert (dep.details["max_num_seqs"], dep.details["max_num_batched_tokens"]) == (256, 256)
    path.write_text(text.format(limit="\n      max_num_batched_tokens: 256\n      max_num_seqs: 1024"))
    refused = " 1,024: vLLM refuses to start with fewer tokens a forward pass"
    with pytest.raises(InputError, match="max_num_batched_tokens 256 is below max_num_seqs" + refused) as given:
        load_workload(str(path))
    assert "inference.max_num_batched_tokens" in str(given.value)
    # review 9 H1: the pair set by constants, or one of them, is refused as well, where it is set
    for limit, constants, field in (
        ("", "constants: {max_num_seqs: 1024, prefill_chunk_tokens: 512}\n", "constants.prefill_chunk_tokens"),
        ("\n      max_num_batched_tokens: 512", "constants: {max_batch_size: 1024}\n", "inference.max_num_batched_tokens"),
        ("\n      max_num_seqs: 1024", "constants: {prefill_chunk_tokens: 512}\n", "inference.max_num_seqs"),
    ):
        path.write_text(text.format(limit=limit) + constants)
        with pytest.raises(InputError, match=" 512 is below (max_num_seqs|max_batch_size)" + refused) as caught:
            load_workload(str(path))
        assert field in str(caught.value)
    # ... and a limit above the GPU's default tokens (2,048 on an L4) rules that GPU out with vLLM's reason
    path.write_text(TINY_ON_L4.format(limit="\n      max_num_seqs: 4096"))
    with pytest.raises(InfeasibleError, match="max_num_seqs 4,096 is more than the 2,048 tokens vLLM runs a forward pass"):
        plan_workload(load_workload(str(path)))
    path.write_text(TINY_ON_L4.format(limit="\n      max_num_seqs: 4096\n      max_num_batched_tokens: 4096"))
    (dep,) = plan_workload(load_workload(str(path))).deployments
    assert (dep.details["max_num_seqs"], dep.details["max_num_batched_tokens"]) == (4096, 4096)
    path.write_text(text.format(limit="\n      engine: sglang\n      max_num_batched_tokens: 256"))
    with pytest.raises(InputError, match=r"max_num_batched_tokens is vLLM's setting \(engine: vllm\)"):
        load_workload(str(path))
    # fuzz13 item 8: nor by the constant that fills it (it timed the plan with a chunk SGLang never got)
    path.write_text(text.format(limit="\n      engine: sglang") + "constants: {prefill_chunk_tokens: 16}\n")
    with pytest.raises(InputError, match=r"constants\.prefill_chunk_tokens: prefill_chunk_tokens sets vLLM"):
        load_workload(str(path))
    request = EstimateRequest(
        model="llama-3.2-1b-instruct", gpu="h100-sxm5-80gb", max_batched_tokens=256, input_tokens=300, output_tokens=200
    )
    # 256 tokens a step: 256 x 200 / 500 = 102 decodes beside the prompt tokens they bring
    assert estimate(request)["throughput"]["saturation_batch"] == 102
    with pytest.raises(InputError, match="1,024 sequences a step are more than the 256 tokens a forward pass runs"):
        estimate(request._replace(max_num_seqs=1024))


def test_vllms_smaller_limit_is_taken_where_its_h100_default_leaves_no_room(tmp_path: Path) -> None:
    """70B BF16 on two H100: sampling 1,024 rows of a 128,256-token vocabulary in vLLM's profiling run reserves
    3.4 GiB a GPU, more than the 71.7 GiB budget keeps beside 65.7 GiB of weights; at 256 one sequence fits."""
    text = """\
version: 1
name: t
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-70B-Instruct
    platform: dgx-h100
    parallelism: {tp: 2, pp: 1}
    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 1}
hardware:
  gpus: [h100-sxm5-80gb]
  provider: baremetal
"""
    path = tmp_path / "w.yaml"
    path.write_text(text)
    (dep,) = plan_workload(load_workload(str(path))).deployments
    assert (dep.tp, dep.details["max_num_seqs"]) == (2, 256)
    assert any(r.startswith("max_num_seqs 256: at vLLM's default of 1024 on h100-sxm5-80gb") for r in dep.reasons)


@pytest.mark.parametrize(
    ("gpu", "batch", "raised"),
    [
        # both KV caches hold more than 1,500; the L40S's 2,048 tokens a step hold 2,048 x 200 / 500 = 819 decodes with
        # the prompt tokens they bring (vLLM fills a step with the decodes, then prefill chunks)
        ("l40s-48gb", 256, 819),
        ("h100-sxm5-80gb", 1024, 1500),
    ],
)
def test_the_estimate_saturates_at_the_engines_limit(gpu: str, batch: int, raised: int) -> None:
    request = EstimateRequest(model="meta-llama/Llama-3.2-1B-Instruct", gpu=gpu, input_tokens=300, output_tokens=200)
    assert estimate(request)["throughput"]["saturation_batch"] == batch
    assert estimate(request._replace(max_num_seqs=1500))["throughput"]["saturation_batch"] == raised


QWEN_MOE = """\
version: 1
name: moe
deployments:
  - name: coder
    model: Qwen/Qwen3-30B-A3B
    parallelism: {{tp: 2{ep}}}
    inference: {{precision: bf16, max_context_tokens: 16384, requests_per_second: 20}}
hardware:
  gpus: [h100-sxm5-80gb]
  provider: baremetal
"""


def test_a_pinned_expert_parallel_degree_is_sized_and_rendered(tmp_path: Path) -> None:
    """EP pinned used to filter layouts only: the plan's figures were those of TP-split experts, and no file said EP."""
    plans = {}
    for ep in ("", ", ep: 2"):
        path = tmp_path / "w.yaml"
        path.write_text(QWEN_MOE.format(ep=ep))
        loaded = load_workload(str(path))
        plans[ep] = (loaded, plan_workload(loaded))
    (tp_only,) = plans[""][1].deployments
    loaded, plan = plans[", ep: 2"]
    (with_ep,) = plan.deployments
    assert "expert_parallel" not in tp_only.details and with_ep.details["expert_parallel"] == 2
    # EP over the TP group sends no all-to-all (every rank holds every token; the TP all-reduce combines the experts'
    # outputs, newuser13 item 3); its whole experts wait for the busiest rank's (busiest_expert_rank_load, newuser34
    # item 5), where TP-split experts do equal work: 39.132 -> 38.42 req/s (2 x TP2 on the 4-GPU server, newuser46
    # item 2; one TP2 PP2 before); 38.419 since a prompt token's pairs are (N + 1) / 2, not N / 2 (fix73); 37.059 /
    # 37.157 (from 38.419 / 39.132) since the routed experts' quantization, activation and top-k sum kernels are timed
    # (acc101): each TP rank reads every routed pair's hidden-size output, an EP rank only its own pairs'; 35.690 /
    # 35.781 (from 37.059 / 37.157, both -3.7%) since vLLM's fused-MoE layers take a fixed 70 us a step each (acc181
    # entry, landed by acc183): the model's 48 MoE layers add 3.4 ms to each step, EP and TP-split alike
    assert (with_ep.details["requests_per_s_per_replica_max"], tp_only.details["requests_per_s_per_replica_max"]) == (
        35.69,
        35.781,
    )
    assert "the routed experts spread whole over each stage's 2 GPUs (expert parallelism, as pinned)" in with_ep.reasons[0]
    files = render_ansible(plan, loaded.workload)
    (group_vars,) = (ansible_reader().load(text) for name, text in files.items() if "group_vars" in name)
    engine = group_vars["specgen_deployments"][0]["engine"]
    assert engine["expert_parallel_size"] == 2
    assert engine["args"][12:] == ["--enable-expert-parallel"]  # newuser31 item 13: vLLM's flag, the size is TP x DP's


def test_sglang_is_started_with_its_expert_parallel_size(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(QWEN_MOE.format(ep=", ep: 2").replace("precision: bf16,", "precision: bf16, engine: sglang,"))
    loaded = load_workload(str(path))
    files = render_ansible(plan_workload(loaded), loaded.workload)
    (group_vars,) = (ansible_reader().load(text) for name, text in files.items() if "group_vars" in name)
    engine = group_vars["specgen_deployments"][0]["engine"]
    assert (engine["name"], engine["expert_parallel_size"], engine["args"][-2:]) == ("sglang", 2, ["--ep-size", "2"])


@pytest.mark.parametrize(("precision", "kv"), [("fp32", "fp32"), ("fp16", "fp16"), ("bf16", "bf16"), ("fp8", "bf16")])
def test_the_kv_cache_follows_the_weights_float_type_as_the_engines_auto_does(precision: str, kv: str) -> None:
    """newuser9 item 9: fp32 weights kept a bf16 cache although vLLM's ``auto`` cache dtype is the model's."""
    result = estimate(EstimateRequest(model="meta-llama/Llama-3.2-1B-Instruct", precision=precision))
    assert result["precision"]["kv_cache"] == kv


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_an_int8_kv_cache_is_refused_for_the_serving_engines(engine: str) -> None:
    with pytest.raises(InputError, match=r"has no int8 KV cache \(its cache dtypes are bf16 / fp16 and fp8\)"):
        estimate(EstimateRequest(model="Qwen/Qwen3-8B", gpu="l4-24gb", kv_precision="int8", engine=engine))


def test_the_estimate_takes_vllms_smaller_limit_where_its_default_leaves_no_room() -> None:
    """Review 6 M5: 70B FP8 on one H100 at 4k fits at 256 sequences (as the plan sizes it) but not at vLLM's 1,024."""
    request = EstimateRequest(
        model="meta-llama/Llama-3.1-70B-Instruct", precision="fp8", kv_precision="fp8", gpu="h100-sxm5-80gb", context_tokens=4096
    )
    result = estimate(request)
    assert result["capacity"]["fits"] and result["capacity"]["vllm_log"]["starts"]
    assert any(note.startswith("sized at --max-num-seqs 256: at vLLM's default of 1024") for note in result["notes"])
    pinned = estimate(request._replace(max_num_seqs=1024))  # a limit the user gives is kept, and says it does not start
    assert not pinned["capacity"]["vllm_log"]["starts"]


@pytest.mark.parametrize("setting", ["constants: {max_batch_size: 32}", "constants: {max_num_seqs: 32}"])
def test_a_workload_constant_limits_the_batch_as_max_num_seqs_does(tmp_path: Path, setting: str) -> None:
    """Review 6 H2: the workload's constants were ignored once vLLM's per-GPU default applied (batch 1024, not 32)."""
    path = tmp_path / "w.yaml"
    path.write_text(QWEN_MOE.format(ep="") + setting + "\n")
    (dep,) = plan_workload(load_workload(str(path))).deployments
    assert dep.details["max_num_seqs"] == 32 and dep.details["batch_per_replica"] <= 32


def test_a_workloads_fp32_service_keeps_an_fp32_kv_cache_as_the_estimate_does(tmp_path: Path) -> None:
    """Review 6 M6: the estimate sized fp32 weights with an fp32 cache, the plan with bf16 (twice the tokens)."""
    path = tmp_path / "w.yaml"
    path.write_text(QWEN_MOE.format(ep="").replace("precision: bf16", "precision: fp32").replace("{tp: 2}", "{tp: 4}"))
    (dep,) = plan_workload(load_workload(str(path))).deployments
    assert dep.kv_cache_precision == "fp32"
    given = path.read_text().replace("precision: fp32,", "precision: fp32, kv_cache_precision: fp8,")
    path.write_text(given)
    (dep,) = plan_workload(load_workload(str(path))).deployments
    assert dep.kv_cache_precision == "fp8"  # one the workload gives stays


def test_the_batch_limit_is_each_engines_in_an_attention_data_parallel_replica() -> None:
    """newuser13 item 2: with --ep 8 (8 attention-DP ranks, one engine each) the replica's batch was capped at one
    engine's --max-num-seqs: 256 where 8 x 256 run."""
    request = EstimateRequest(model="qwen3-30b-a3b", gpu="h100-sxm5-80gb", ep=8, context_tokens=2000, input_tokens=500,
                              output_tokens=500, max_num_seqs=256)  # fmt: skip
    assert estimate(request)["throughput"]["saturation_batch"] == 8 * 256
    # review 9 M4: SGLang's --max-running-requests is the replica's, each attention-DP rank running 256 // 8
    assert estimate(request._replace(engine="sglang"))["throughput"]["saturation_batch"] == 256


def test_a_refused_sequence_count_names_the_option_that_set_it() -> None:
    """Review 9 L7a: the error said "lower --max-num-seqs" to a user who had set --set max_batch_size."""
    request = EstimateRequest(model="meta-llama/Llama-3.1-8B-Instruct", gpu="l40s-48gb")
    for constants, option in (
        ((("max_batch_size", 4096),), "--set max_batch_size"),
        ((("max_num_seqs", 4096),), "--set max_num_seqs"),
    ):
        with pytest.raises(InputError, match=f"raise --max-batched-tokens or lower {option}$"):
            estimate(request._replace(constants=constants))
    with pytest.raises(InputError, match=r"raise --max-batched-tokens or lower --max-num-seqs$"):
        estimate(request._replace(max_num_seqs=4096))


def test_a_prompt_is_prefilled_in_passes_of_the_tokens_a_step_runs() -> None:
    """fuzz12 item 5: max_num_batched_tokens moved the memory but not the time: a 4,000-token prompt at 1 token a pass
    kept the TTFT of one pass (0.12 s) and the throughput of 8,192 tokens a step."""
    request = EstimateRequest(model="llama-3.1-8b", gpu="h100-sxm5-80gb", context_tokens=8192, input_tokens=4000,
                              output_tokens=100, max_num_seqs=1)  # fmt: skip
    figures = {tokens: estimate(request._replace(max_batched_tokens=tokens))["throughput"] for tokens in (8192, 2048, 16, 1)}
    # a chunk of 2,048 or more is compute-bound: the same time in two passes as in one
    assert figures[2048]["ttft_s"] == pytest.approx(figures[8192]["ttft_s"], rel=0.01)
    # 4,000 passes of one token each read the 15 GB of weights: about 4,000 x 4.8 ms at least
    weights_read_s = 8_030_261_248 * 2 / 3.35e12
    assert figures[1]["ttft_s"] > 4000 * weights_read_s > 40 * figures[8192]["ttft_s"]
    assert 250 * weights_read_s < figures[16]["ttft_s"] < figures[1]["ttft_s"]
    # and a step of fewer tokens than a decode and the 40 prompt tokens it brings makes an output token every few steps
    assert (
        figures[1]["max_output_tokens_per_s"] < figures[16]["max_output_tokens_per_s"] < figures[8192]["max_output_tokens_per_s"]
    )


def test_the_planned_batch_stops_where_a_steps_tokens_hold_the_decodes_and_their_prompts(tmp_path: Path) -> None:
    """vLLM fills a step's max_num_batched_tokens with the running decodes, then prefill chunks: at 4,000 prompt tokens
    per 100 generated, 2,048 tokens a step hold 49 decodes, whatever the KV cache and max_num_seqs allow."""
    path = tmp_path / "w.yaml"
    text = TINY_ON_L4.format(limit="\n      max_num_batched_tokens: 2048").replace("[l4-24gb]", "[h100-sxm5-80gb]")
    text = text.replace("avg_input_tokens: 300", "avg_input_tokens: 4000").replace(
        "avg_output_tokens: 200", "avg_output_tokens: 100"
    )
    text = text.replace("max_context_tokens: 4096", "max_context_tokens: 8192").replace(
        "slo: {ttft_p95_ms: 2000, tpot_ms: 100}", "slo: {ttft_p95_ms: 20000, tpot_ms: 1000}"
    )
    path.write_text(text)
    (dep,) = plan_workload(load_workload(str(path))).deployments
    assert dep.details["batch_per_replica"] <= 49
    assert any(r.startswith("the batch stops at 49 sequences: a step runs at most 2,048 tokens") for r in dep.reasons)


def test_a_pipeline_runs_a_step_a_stage_and_pipelines_a_prompts_chunks() -> None:
    """Review 10 item 1: vLLM runs one batch a pipeline stage at once, each with its token budget, so PP4 at 2,048
    tokens a step holds 4 x 409 decodes (the KV cache's bind, as before the budget); and the next chunk of a prompt
    is scheduled while one is in flight, so two chunks through four stages take five stage-passes, not eight: less
    than one 4,000-token pass through the four stages one after another."""
    request = EstimateRequest(model="meta-llama/Llama-3.1-70B-Instruct", precision="fp8", gpu="l40s-48gb", tp=2, pp=4,
                              context_tokens=4400, input_tokens=4000, output_tokens=200)  # fmt: skip
    chunked, whole = (estimate(request._replace(max_batched_tokens=n))["throughput"] for n in (2048, 8192))
    # 181 both before src98 put the L40S at CUDA's 45,589 MiB: the KV cache now binds at 179 with a 2,048-token step
    # and 178 with an 8,192-token one
    assert (chunked["saturation_batch"], whole["saturation_batch"]) == (179, 178)
    assert chunked["ttft_s"] < 0.85 * whole["ttft_s"]


@pytest.mark.parametrize(
    ("options", "batch", "limit"),
    [
        # review 10 item 6: 512 tokens a step carry 512 x 200 / 2,200 = 46 decodes, and the estimate said nothing of why
        ({"max_batched_tokens": 512, "max_num_seqs": 256}, 46, "max_num_batched_tokens"),
        ({"max_num_seqs": 16}, 16, "max_num_seqs"),
        ({}, None, "kv_cache"),
    ],
)
def test_the_estimate_says_what_stops_the_saturated_batch(options: dict[str, int], batch: int | None, limit: str) -> None:
    request = EstimateRequest(model="meta-llama/Llama-3.1-8B-Instruct", gpu="h100-sxm5-80gb", context_tokens=8192,
                              input_tokens=2000, output_tokens=200, **options)  # type: ignore[arg-type]  # fmt: skip
    throughput = estimate(request)["throughput"]
    assert throughput["saturation_limit"] == limit
    assert batch is None or throughput["saturation_batch"] == batch


def test_the_p95_ttft_waits_for_the_prompts_queued_ahead() -> None:
    """newuser15 item 1: the TTFT p95 was twice the unloaded TTFT at any rate; 16,000-token prompts on one H100
    (0.535 s of prefill each) at 1.26 req/s wait 2.47 s at the 95th percentile in a simulated M/D/1 queue."""
    from generator.sizing.serving_queue import prefill_wait_p95

    assert prefill_wait_p95(0.04, 0.535) == 0.0  # fewer than one prompt in twenty waits at all
    # the wait and the prompt's own prefill, against the simulation's TTFT p95 (a little above it: conservative)
    assert prefill_wait_p95(1.26 * 0.535, 0.535) + 0.535 == pytest.approx(2.47, rel=0.1)
    assert prefill_wait_p95(1.0 * 0.535, 0.535) + 0.535 == pytest.approx(1.74, rel=0.1)
    waits = [prefill_wait_p95(rho / 10, 1.0) for rho in range(1, 10)]
    assert waits == sorted(waits)  # more load, longer waits


RAG_ON_H100 = """\
version: 1
name: rag
deployments:
  - name: rag
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {max_context_tokens: 16384, avg_input_tokens: 16000, avg_output_tokens: 200, requests_per_second: 10,
                slo: {ttft_p95_ms: 1500, tpot_ms: 100}}
hardware:
  gpus: [h100-sxm5-80gb]
  provider: baremetal
"""


def test_a_prefill_heavy_service_is_planned_with_its_queueing_for_prefill(tmp_path: Path) -> None:
    """newuser15 item 1: 8 x TP1 at 1.27 req/s each, 93% of saturation, where the prompts' wait alone passes 1,500 ms."""
    path = tmp_path / "w.yaml"
    path.write_text(RAG_ON_H100)
    (dep,) = plan_workload(load_workload(str(path))).deployments
    assert dep.details["ttft_p95_s"] <= 1.5
    assert dep.gpus >= 12 and dep.tp >= 2


RERANK = """\
version: 1
name: rerank
deployments:
  - name: cls
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {precision: bf16, max_context_tokens: 16384, avg_input_tokens: 12000, avg_output_tokens: 16,
                requests_per_second: 0.2, slo: {ttft_p95_ms: 4000, tpot_ms: 200}}
hardware:
  gpus: [l40s-48gb, l4-24gb, a10g-24gb]
  provider: aws
"""


def test_a_prefill_heavy_service_runs_below_one_sequence_in_flight_and_is_timed_at_its_planned_load(tmp_path: Path) -> None:
    """Review 11 items 1, 2: the queue was taken at batch 1's own rate, so 12,000-token prompts at 0.2 req/s "missed the
    SLO at batch 1" and bought a 4-GPU instance ($7,660 against $1,359); and the TTFT p95 "at the planned load" was
    taken at the chosen batch's whole rate, not the planned one."""
    path = tmp_path / "w.yaml"
    path.write_text(RERANK)
    (dep,) = plan_workload(load_workload(str(path))).deployments
    assert dep.gpus == 1 and dep.details["requests_per_s_per_replica"] == pytest.approx(0.2)
    assert dep.details["ttft_p95_s"] <= 4.0
    assert dep.details["batch_per_replica"] == 1 and dep.details["requests_per_s_per_replica_max"] >= 0.2


def test_a_pipelines_prompts_take_one_stages_turn_from_the_replica() -> None:
    """Review 11 item 3: under load the stages work on different prompts, so a prompt keeps each stage busy for its
    passes, not for its whole trip through the pipeline ((n + pp - 1) passes)."""
    from generator.sizing.performance import accelerator_for, prefill_seconds

    arch = catalog.find_model("meta-llama/Llama-3.1-70B-Instruct")
    model = parse_architecture(arch.config)
    acc = accelerator_for(catalog.find_gpu("l40s-48gb"), "fp8", 2)
    consts = Constants()._replace(prefill_chunk_tokens=512)
    trip, turn = (prefill_seconds(model, Parallelism(2, 4), acc, 1500, consts, fill=f) for f in (True, False))
    assert turn < trip  # three passes of filling the pipeline less
    # review 12 item 1: a stage's turn is a quarter of the whole prompt's work at PP4, its attention and TP all-reduces
    # included (they were the whole model's in every stage)
    whole = prefill_seconds(model, Parallelism(2, 1), acc, 1500, consts)
    assert turn == pytest.approx(whole / 4, rel=0.05)
    assert prefill_seconds(model, Parallelism(2, 1), acc, 1500, consts, fill=False) == prefill_seconds(
        model, Parallelism(2, 1), acc, 1500, consts
    )


def test_a_training_jobs_group_vars_carry_the_layout_it_is_sized_for() -> None:
    """newuser16 L2: a training job's group vars had TP, PP and replicas but not the ZeRO stage, micro-batch or
    accumulation its memory was sized for; a launcher with others could run out of memory."""
    loaded = load_workload(str(REPO / "examples" / "mixed.yaml"))
    plan = plan_workload(loaded)
    (job,) = [d for d in plan.deployments if d.kind == "training"]
    files = render_ansible(plan, loaded.workload)
    (entry,) = ansible_reader().load(files[f"ansible/group_vars/{job.pool}.yml"])["specgen_deployments"]
    assert entry["training"] == {
        key: job.details[key]
        for key in ("method", "optimizer", "zero_stage", "data_parallel", "micro_batch_size", "global_batch_size")
    } | {
        "gradient_accumulation_steps": job.details["gradient_accumulation_steps"],
        "sequence_length": job.details["sequence_length"],
        # newuser35 item 6: left out in mixed.yaml, searched: none, on one 8-GPU p6-b200.48xlarge (one host, so no
        # "hosts": newuser31 item 12 gives them to a job launched multi-node)
        "gradient_checkpointing": "none",
        # newuser22 item 4: what the memory counts on leaving the GPU (mixed.yaml's LoRA job offloads nothing)
        "offload_optimizer": False,
        "offload_params": False,
        # newuser23 item 10: the techniques and adapters it is sized with (mixed.yaml's LoRA job names no framework)
        "loss": "standard",
        "activation_offload": False,
        "optimizer_in_backward": False,
        "fused_kernels": False,
        "flash_attention": True,
        "lora_rank": 32,
        "lora_dropout": 0.0,
        "lora_target_modules": ["all-linear"],
    }
    assert entry["training"]["data_parallel"] * entry["training"]["micro_batch_size"] == entry["training"]["global_batch_size"]
