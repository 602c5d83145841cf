"""Layouts the serving engines refuse to load are infeasible, with the engine's reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.api import render_file
from generator.calculator.estimate import EstimateRequest, estimate
from generator.catalog import find_model
from generator.errors import InfeasibleError, InputError
from generator.planner import plan_workload
from generator.sizing.architecture import parse_architecture
from generator.sizing.loadability import loadability_problems
from generator.sizing.precision import weight_format
from generator.sizing.weights import Parallelism
from generator.workload import load_workload


def _qwen3_235b() -> object:
    return parse_architecture(find_model("Qwen/Qwen3-235B-A22B").config)


@pytest.mark.parametrize(
    ("tp", "ep", "loads"),
    [
        # moe_intermediate_size 1536: /8 = 192 is not a whole number of 128-wide blocks (Qwen3-235B-A22B-FP8 at TP8
        # fails in vLLM with "... is not divisible by weight quantization block_n = 128"); /4 = 384 = 3 blocks
        pytest.param(8, 1, False, id="tp8-192-wide-shard-refused"),
        pytest.param(4, 1, True, id="tp4-384-wide-shard-loads"),
        pytest.param(8, 8, True, id="tp8-with-ep8-whole-experts-load"),
    ],
)
def test_block_quantized_moe_expert_shards(tp: int, ep: int, loads: bool) -> None:
    problems = loadability_problems(_qwen3_235b(), weight_format("fp8-block"), Parallelism(tp=tp, ep=ep))  # type: ignore[arg-type]
    assert (problems == ()) is loads
    if not loads:
        assert "not divisible by the weight quantization block (128)" in problems[0]
        assert "1536 / TP 8 = 192" in problems[0]


def test_estimate_refuses_a_block_quantized_moe_at_a_non_dividing_tp() -> None:
    req = EstimateRequest(model="Qwen/Qwen3-235B-A22B", precision="fp8-block", tp=8, gpu="h200-sxm-141gb")
    with pytest.raises(InputError, match=r"will not load: .*expert intermediate size"):
        estimate(req)
    assert estimate(req._replace(precision="fp8"))["capacity"]["fits"]  # per-tensor FP8 has no blocks to split


def test_attention_heads_must_divide_over_tp() -> None:
    arch = parse_architecture(find_model("meta-llama/Llama-3.1-8B-Instruct").config)
    problems = loadability_problems(arch, weight_format("bf16"), Parallelism(tp=3))
    assert any("attention heads (32) must be divisible by the tensor parallel size (3)" in p for p in problems)
    assert loadability_problems(arch, weight_format("bf16"), Parallelism(tp=8)) == ()


def test_expert_parallel_must_hold_whole_experts() -> None:
    problems = loadability_problems(_qwen3_235b(), weight_format("bf16"), Parallelism(tp=2, ep=3))  # type: ignore[arg-type]
    assert any("multiple of the tensor parallel size" in p for p in problems)
    assert any("routed experts (128)" in p for p in problems)


def test_a_moe_whose_tp_shards_do_not_load_is_planned_with_expert_parallelism(tmp_path: Path) -> None:
    """newuser20 item 1: Qwen3-235B-A22B block FP8 at TP8 splits each 1,536-wide expert into 192-wide shards, not whole
    128-wide blocks, so vLLM refuses it; the planner bought two 8-GPU servers (TP4 x 3) where one runs TP8 with
    expert parallelism (vLLM --enable-expert-parallel, as vLLM issue 17569 advises)."""
    path = tmp_path / "q.yaml"
    path.write_text(
        "version: 1\nname: q\ndeployments:\n  - name: q\n    model: Qwen/Qwen3-235B-A22B\n    inference: {precision: "
        "fp8-block, kv_cache_precision: fp8, max_context_tokens: 32768, avg_input_tokens: 1000, avg_output_tokens: 1000, "
        "requests_per_second: 10}\nhardware: {gpus: [h100-sxm5-80gb], platforms: [supermicro-as-8125gs-tnhr], "
        "provider: baremetal}\n",
        encoding="utf-8",
    )
    assert loadability_problems(
        parse_architecture(find_model("Qwen/Qwen3-235B-A22B").config), weight_format("fp8-block"), Parallelism(8, 1)
    )
    text = path.read_text()
    # newuser72 item 1: searched, the server ran it as 8 attention data-parallel ranks with the experts over the 8
    # (TP8 copies each of its 4 KV heads twice: 2,753,536 KV tokens fit against TP8 EP8's 1,632,336). acc164: vLLM's
    # attention-DP MoE exchange is its allgather_reducescatter ((8 + 1) x 20 us of NCCL calls and 7 ranks' rows a MoE
    # layer, 94 layers), so one TP1 EP8 replica falls short of 10 req/s (its runner-up takes 2 servers); the one
    # server runs TP4 PP2 (11.03 req/s), still one server, not the two of TP4 x 3. acc181 (landed by acc183): vLLM's
    # fused-MoE layers take a fixed 70 us a step each, Qwen3-235B's 94 = 6.6 ms more a step, so no layout of one server
    # reaches 10 req/s (TP4 PP2 falls below it): two servers as 2 x TP1 EP8 (attention DP 8), 9.54 req/s each, ahead of
    # 2 x TP8 EP8 (8.81 each) on the same purchase; the split that does not load is still not planned
    plan = json.loads(render_file(str(path))["spec.json"])["plan"]
    (pool,) = plan["pools"]
    (dep,) = plan["deployments"]
    assert (pool["nodes"], dep["tp"], dep["pp"], dep["replicas"]) == (2, 1, 1, 2)
    assert (dep["details"]["expert_parallel"], dep["details"]["attention_dp"]) == (8, 8)
    # TP pinned to 8: the split that does not load is turned into EP over the TP group
    path.write_text(text.replace("    inference:", "    parallelism: {tp: 8}\n    inference:"))
    files = render_file(str(path))
    plan = json.loads(files["spec.json"])["plan"]
    (pool,) = plan["pools"]
    (dep,) = plan["deployments"]
    # two servers since block-FP8 GEMMs on Hopper run at fp8_block_gemm_efficiency_ratio of the FP8 rate (acc92 entry
    # of CALIBRATION.md): one TP8 EP8 replica sustains 9.80 req/s of 1k/1k (12.29 at the FP8 rate), short of the 10
    assert (pool["nodes"], dep["tp"], dep["details"]["expert_parallel"]) == (2, 8, 8)
    assert "expert parallelism, TP8 alone splits the experts into shards that do not load" in files["SPEC.md"]
    # the engine is told: vLLM --enable-expert-parallel
    assert "expert_parallel_size: 8" in files["ansible/group_vars/q_h100_sxm5_80gb.yml"]
    # fuzz16 item 10: ep 1 pins expert parallelism off, so the TP8 split is refused, not turned into EP
    path.write_text(text.replace("    inference:", "    parallelism: {tp: 8, ep: 1}\n    inference:"))
    with pytest.raises(InfeasibleError, match="is not divisible by the weight quantization block"):
        plan_workload(load_workload(str(path)))


@pytest.mark.parametrize(
    "args",
    [
        ("--gpu", "h100-sxm5-80gb"),  # a serving engine
        ("--gpu", "rtx-4090-24gb", "--ram-gib", "128"),  # a machine of yours: llama.cpp's MXFP4_MOE as well
    ],
)
def test_mxfp4_on_a_dense_model_is_refused_on_every_path(args: tuple[str, ...]) -> None:
    """newuser20 item 7, review 16 item 1: Llama 70B at MXFP4 "fit" at 37.8 GiB; no engine holds a dense model in it."""
    from tests.helpers import run_estimate

    code, _ = run_estimate("meta-llama/Llama-3.3-70B-Instruct", "--precision", "mxfp4", *args)
    assert code == 1


def test_mxfp4_on_a_dense_model_is_refused_at_the_precision_field(tmp_path: Path) -> None:
    from generator.errors import InputError, MultipleInputError

    path = tmp_path / "d.yaml"
    path.write_text(
        "version: 1\nname: d\ndeployments:\n  - name: d\n    model: meta-llama/Llama-3.3-70B-Instruct\n"
        "    inference: {precision: mxfp4, max_context_tokens: 8192}\nhardware: {provider: aws}\n"
    )
    with pytest.raises((InputError, MultipleInputError), match=r"deployments\[0\]\.inference\.precision: MXFP4 holds"):
        render_file(str(path))


def test_ep_1_pins_expert_parallelism_off_at_any_tp(tmp_path: Path) -> None:
    """fuzz18 item 1: the pin filter still wanted TP equal to EP, so ep 1 left TP1 layouts only and every MoE model
    needing more than one GPU was refused (Mixtral 8x7B bf16 on H100 at tp 2)."""
    path = tmp_path / "m.yaml"
    path.write_text(
        "version: 1\nname: m\ndeployments:\n  - name: m\n    model: mistralai/Mixtral-8x7B-Instruct-v0.1\n"
        "    parallelism: {tp: 2, ep: 1}\n    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 1}\n"
        "hardware: {gpus: [h100-sxm5-80gb], provider: baremetal}\n",
        encoding="utf-8",
    )
    (dep,) = plan_workload(load_workload(str(path))).deployments
    assert (dep.tp, dep.details.get("expert_parallel")) == (2, None)
