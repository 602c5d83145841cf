"""Embedding and reranking services (``task: embed`` / ``score``): one forward pass a request, no decode.

Refused fields are located; a pooling service is sized with the prefill model alone (no decode, no output tokens,
no sampler rows in vLLM's profiling), so against the same model as a generating service at the same input length it
needs no more replicas and no more memory; its FLOPs a request are checked by hand; the rendered outputs say the task
and carry vLLM's pooling flags.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from generator import catalog
from generator.api import plan_file, render_file
from generator.calculator.model_source import resolve_model
from generator.planner.plan import DeploymentPlan
from generator.planner.pooling import (
    pass_kv_tokens,
    pooling_flops_per_request,
    requests_per_pass,
)
from generator.planner.slo import effective_slo
from generator.sizing.precision import weight_format
from generator.sizing.weights import Parallelism, size_weights
from generator.workload.models import InferenceSpec
from tests.helpers import ansible_reader, call_cli

EMBED = """\
version: 1
name: rag
deployments:
  - name: embed
    model: {model}{pin}
    inference:
      task: {task}
      max_context_tokens: 8192
      avg_input_tokens: {input}
      requests_per_second: {rate}{extra}
hardware:
  gpus: [{gpu}]
  provider: aws
"""


def _workload(tmp_path: Path, **fields: Any) -> Path:
    values = {
        "model": "Qwen/Qwen3-8B",
        "task": "embed",
        "input": 512,
        "rate": 50,
        "extra": "",
        "gpu": "h100-sxm5-80gb",
        "pin": "",
    }
    values.update(fields)
    path = tmp_path / "workload.yaml"
    path.write_text(EMBED.format(**values))
    return path


def _plan(tmp_path: Path, **fields: Any) -> DeploymentPlan:
    (dep,) = plan_file(str(_workload(tmp_path, **fields)))[1].deployments
    return dep


REFUSED = [
    pytest.param(
        {"extra": "\n      avg_output_tokens: 1"},
        "workload.yaml:11:26: deployments[0].inference.avg_output_tokens: avg_output_tokens means nothing for task: "
        "embed: a pooling request generates no tokens; drop it or set task: generate",
        id="output-tokens-on-embed",
    ),
    pytest.param(
        {"task": "score", "extra": "\n      slo: {ttft_p95_ms: 300, tpot_ms: 20}"},
        "workload.yaml:11:40: deployments[0].inference.slo.tpot_ms: slo.tpot_ms means nothing for task: score: a "
        "pooling request has no decode steps to time (slo.ttft_p95_ms is its whole request's p95); drop it or set "
        "task: generate",
        id="tpot-on-score",
    ),
    pytest.param(
        {"input": 9000},
        "workload.yaml:9:25: deployments[0].inference.avg_input_tokens: avg_input_tokens (9,000) exceeds "
        "max_context_tokens (8,192): an average request would not fit its context window",
        id="input-longer-than-window",
    ),
    pytest.param(
        {"model": "./deberta"},
        "workload.yaml:5:12: deployments[0].model: {dir}/deberta/config.json: cannot size model_type 'deberta-v2': an "
        "encoder-decoder model or an encoder-only one outside the BERT / RoBERTa / XLM-RoBERTa family, whose layers "
        "specgen does not count exactly; BERT, RoBERTa and XLM-RoBERTa encoders (bge, e5, all-MiniLM, bge-m3, "
        "bge-reranker) and decoder-only models (Qwen3-Embedding, gte-Qwen2, e5-mistral) are sized for task: embed / score",
        id="encoder-outside-the-bert-family",
    ),
]


@pytest.mark.parametrize(("fields", "expected"), REFUSED)
def test_refused_at_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str], fields: dict[str, Any], expected: str) -> None:
    # an encoder-only checkpoint outside the BERT family (a DeBERTa-v3 reranker's geometry; only its model_type matters
    # to the refusal; BERT / RoBERTa / XLM-RoBERTa ones are sized, tests/test_encoder.py)
    (tmp_path / "deberta").mkdir()
    config = {"architectures": ["DebertaV2ForSequenceClassification"], "model_type": "deberta-v2", "hidden_size": 768}
    config |= {"num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072, "vocab_size": 128100}
    (tmp_path / "deberta" / "config.json").write_text(json.dumps(config))
    _workload(tmp_path, **fields)
    code = call_cli(tmp_path, ("validate", "workload.yaml"))
    err = capsys.readouterr().err
    assert code == 1, err
    assert err == f"specgen: error: {expected.format(dir=tmp_path)}\n"


def test_unknown_task_is_refused_by_the_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _workload(tmp_path, task="rerank")
    assert call_cli(tmp_path, ("validate", "workload.yaml")) == 1
    err = capsys.readouterr().err
    assert err.startswith("specgen: error: workload.yaml:7:13: deployments[0].inference.task: "), err
    assert err.endswith("'rerank' is not one of generate, embed, score\n"), err


def test_pooling_is_not_planned_on_an_existing_machine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = _workload(tmp_path).read_text().split("hardware:")[0]
    (tmp_path / "workload.yaml").write_text(text + "hardware:\n  fixed: {gpu: rtx-4090-24gb, gpu_count: 1, ram_gib: 64}\n")
    assert call_cli(tmp_path, ("validate", "workload.yaml")) == 1
    err = capsys.readouterr().err
    assert err.startswith("specgen: error: workload.yaml:7:13: deployments[0].inference.task: task: embed is not "), err


def test_a_request_may_fill_the_window(tmp_path: Path) -> None:
    # no output tokens: an 8,192-token input fits an 8,192-token window (a generating service's 200 would not)
    assert _plan(tmp_path, input=8192, rate=1).details["task"] == "embed"


def test_no_decode_target_is_defaulted() -> None:
    spec, notes = effective_slo(InferenceSpec(max_context_tokens=8192, task="embed", avg_output_tokens=0))
    assert spec.slo.tpot_ms is None
    assert spec.slo.ttft_p95_ms == 2000
    assert notes == ["request latency p95 <= 2000 ms (interactive default)"]


def test_flops_per_request_by_hand() -> None:
    """Qwen3-8B over 512 tokens, from its config.json (36 layers, hidden 4096, 32 heads of 128, 8 KV heads, FFN 12288)."""
    layers, hidden, heads, head_dim, kv_heads, ffn, tokens = 36, 4096, 32, 128, 8, 12288, 512
    q_o = 2 * hidden * heads * head_dim  # q_proj and o_proj
    k_v = 2 * hidden * kv_heads * head_dim  # k_proj and v_proj
    mlp = 3 * hidden * ffn  # gate, up, down
    norms = 2 * hidden + 2 * head_dim  # input/post-attention RMSNorm, q_norm and k_norm
    body = layers * (q_o + k_v + mlp + norms) + hidden  # + the final norm; no embedding lookup, no LM head
    assert body == 6_946_075_648
    linear = 2 * body * tokens
    # causal QK^T and PV: position p attends to the p tokens up to itself, (N + 1) / 2 on average
    attention = 4 * layers * heads * head_dim * tokens * (tokens + 1) // 2
    model = resolve_model("Qwen/Qwen3-8B", ".")
    spec = InferenceSpec(max_context_tokens=8192, avg_input_tokens=tokens, task="embed", avg_output_tokens=0)
    assert pooling_flops_per_request(model, spec) == linear + attention == 7_190_241_869_824


@pytest.mark.parametrize(
    ("model", "dropped_bytes", "read_less_bytes"),
    [
        # Qwen3-8B: its own 151,936 x 4,096 bf16 LM head (1.16 GiB), no longer held or read
        pytest.param("Qwen/Qwen3-8B", 151_936 * 4_096 * 2, 151_936 * 4_096 * 2, id="untied"),
        # Llama-3.2-1B ties its head to the 128,256 x 2,048 embedding: the table stays, as a lookup no pass streams
        pytest.param("meta-llama/Llama-3.2-1B", 0, 128_256 * 2_048 * 2, id="tied"),
    ],
)
def test_a_pooling_model_is_loaded_without_its_lm_head(model: str, dropped_bytes: int, read_less_bytes: int) -> None:
    """vLLM's pooling adapter deletes ``lm_head`` and skips its weights (``_create_pooling_model_cls``)."""
    arch = resolve_model(model, ".").architecture
    fmt = weight_format("bf16")
    generating, pooling = size_weights(arch, fmt), size_weights(arch, fmt, lm_head=False)
    assert generating.total_bytes - pooling.total_bytes == dropped_bytes
    assert generating.per_gpu_bytes - pooling.per_gpu_bytes == dropped_bytes
    assert generating.per_gpu_read_bytes - pooling.per_gpu_read_bytes == read_less_bytes
    split = Parallelism(4, 1)  # each TP rank held its quarter of the head
    assert size_weights(arch, fmt, split).per_gpu_bytes - size_weights(arch, fmt, split, lm_head=False).per_gpu_bytes == (
        pytest.approx(dropped_bytes / 4, abs=1)
    )


@pytest.mark.parametrize(
    ("tokens", "batched", "seqs", "kv", "expected_pass", "expected_kv"),
    [
        pytest.param(512, 8192, 1024, 400_000, 16, 8192, id="tokens-bound"),
        pytest.param(512, 8192, 4, 400_000, 4, 8192, id="seqs-bound"),
        pytest.param(512, 8192, 1024, 2048, 4, 8192, id="kv-bound"),
        pytest.param(20_000, 8192, 1024, 400_000, 1, 8192, id="longer-than-a-pass"),
        pytest.param(256, 2048, 256, 400_000, 8, 8192, id="at-least-one-window"),
    ],
)
def test_a_pass_packs_what_tokens_sequences_and_kv_allow(
    tokens: int, batched: int, seqs: int, kv: int, expected_pass: int, expected_kv: int
) -> None:
    per_pass = requests_per_pass(tokens, batched, seqs, kv)
    assert per_pass == expected_pass
    spec = InferenceSpec(max_context_tokens=8192, avg_input_tokens=tokens, task="embed", avg_output_tokens=0)
    assert pass_kv_tokens(spec, per_pass) == max(expected_kv, per_pass * tokens)


#: (model, GPU, input tokens, rate, latency target): a pooling service against the same model generating 1 and 200
#: output tokens at the same input length and target. ``sampler``: its vocabulary and vLLM's default sequences make
#: the sampler's profiling rows the activation peak a generating replica reserves, so the pooling one needs less.
SIZED = [
    pytest.param("Qwen/Qwen3-8B", "h100-sxm5-80gb", 512, 200, 500, True, id="qwen3-8b-h100-short"),
    pytest.param("Qwen/Qwen3-8B", "l40s-48gb", 2048, 20, 2000, True, id="qwen3-8b-l40s-long"),
    pytest.param("meta-llama/Llama-3.1-8B-Instruct", "h100-sxm5-80gb", 1024, 100, 1000, True, id="llama-8b-h100"),
    pytest.param("mistralai/Mistral-7B-v0.1", "a100-sxm4-80gb", 256, 300, 300, False, id="mistral-7b-a100"),
    pytest.param("Qwen/Qwen2.5-14B-Instruct", "l40s-48gb", 512, 30, 1000, True, id="qwen2.5-14b-l40s"),
]


@pytest.mark.parametrize(("model", "gpu", "tokens", "rate", "target", "sampler"), SIZED)
def test_pooling_needs_no_more_than_generation(
    tmp_path: Path, model: str, gpu: str, tokens: int, rate: float, target: int, sampler: bool
) -> None:
    slo = f"\n      slo: {{ttft_p95_ms: {target}}}"
    pooled = _plan(tmp_path, model=model, gpu=gpu, input=tokens, rate=rate, extra=slo)
    for output in (1, 200):
        generate = {"model": model, "gpu": gpu, "input": tokens, "rate": rate, "task": "generate"}
        generating = _plan(tmp_path, **generate, extra=f"{slo}\n      avg_output_tokens: {output}")
        assert pooled.gpus <= generating.gpus
        # the same layout (newuser72 item 6: a 1-token generation at 300 req/s is TP1 PP2 x 4 since the wait for a place
        # in the batch counts, rated per PP2 replica, beside the pooling TP1 PP1 x 8)
        if (pooled.tp, pooled.pp) == (generating.tp, generating.pp):
            assert pooled.details["requests_per_s_per_replica_max"] >= generating.details["requests_per_s_per_replica_max"]
        # on the pooling one's layout: the same weights and KV, less or no sampler reservation
        same = _plan(
            tmp_path,
            **generate,
            extra=f"\n      avg_output_tokens: {output}",
            pin=f"\n    parallelism: {{tp: {pooled.tp}, pp: {pooled.pp}}}",
        )
        mine, theirs = pooled.memory_per_gpu, same.memory_per_gpu
        # the same KV; the weights less the LM head, which a pooling model does not load (an untied one's share)
        arch = resolve_model(model, ".").architecture
        head_share = arch.lm_head_params * 2 / pooled.tp  # these checkpoints' bf16 LM heads, in bytes
        assert mine["weights"] == pytest.approx(theirs["weights"] - head_share, abs=1)
        assert mine["kv_cache"] == theirs["kv_cache"]
        assert (mine["total"] < theirs["total"]) if sampler else (mine["total"] <= theirs["total"])
    # a request costs the replica its prefill: the rate it sustains never implies more than the GPUs' dense peak
    flops = pooled.details["prefill_gflop_per_request"] * 1e9
    dense_tflops = catalog.gpus()[gpu].tflops(pooled.precision)
    assert dense_tflops is not None
    peak = dense_tflops * 1e12 * pooled.tp * pooled.pp
    assert pooled.details["requests_per_s_per_replica_max"] * flops < 0.55 * peak  # prefill_compute_efficiency
    assert pooled.details["max_input_tokens_per_s_per_replica"] == pytest.approx(
        pooled.details["requests_per_s_per_replica_max"] * tokens, rel=1e-3
    )
    needed = pooled.replicas - pooled.details.get("replicas_past_rate", 0)  # the rest fill idle GPUs (newuser46 item 2)
    assert needed == max(1, math.ceil(rate / pooled.details["requests_per_s_per_replica_max"]))


def test_a_batch_service_runs_at_its_compute(tmp_path: Path) -> None:
    """Without a latency target, a replica takes requests as fast as it prefills them: sustained compute / FLOPs.

    One H100 (989 dense BF16 TFLOP/s) at the prefill model's efficiency (prefill_compute_efficiency 0.55, a 512-row
    GEMM at 512 / (512 + 16) of it): about 520 TFLOP/s of the request's 7,190 GFLOP, 72 req/s.
    """
    dep = _plan(tmp_path, extra="\n      service_class: batch", pin="\n    parallelism: {tp: 1, pp: 1}")
    assert (dep.tp, dep.pp) == (1, 1)  # one GPU: PP inside a server is searched at TP1 too (fuzz22 item 1)
    implied_tflops = dep.details["requests_per_s_per_replica_max"] * dep.details["prefill_gflop_per_request"] / 1000
    assert 0.45 * 989 < implied_tflops < 0.55 * 989


def test_outputs_say_the_task_and_carry_the_pooling_flags(tmp_path: Path) -> None:
    for task, convert in (("embed", "embed"), ("score", "classify")):
        tree = render_file(str(_workload(tmp_path, task=task)))
        (group_vars,) = [text for path, text in tree.items() if path.startswith("ansible/group_vars/")]
        (service,) = ansible_reader().load(group_vars)["specgen_deployments"]
        engine = service["engine"]
        assert (engine["task"], engine["runner"], engine["convert"]) == (task, "pooling", convert)
        assert engine["args"][12:] == ["--runner", "pooling", "--convert", convert]  # after the sizing flags (fix115)
        (planned,) = json.loads(tree["spec.json"])["plan"]["deployments"]
        assert planned["details"]["task"] == task
        assert "tpot_s" not in planned["details"] and "latency_p95_s" in planned["details"]
        assert f"## Deployment `embed` (inference, {task})" in tree["SPEC.md"]
        assert "kv_cache (one request at the context)" in tree["SPEC.md"]


def test_sglang_runs_it_as_an_embedding_server(tmp_path: Path) -> None:
    tree = render_file(str(_workload(tmp_path, extra="\n      engine: sglang")))
    (group_vars,) = [text for path, text in tree.items() if path.startswith("ansible/group_vars/")]
    (service,) = ansible_reader().load(group_vars)["specgen_deployments"]
    assert service["engine"]["is_embedding"] is True and service["engine"]["args"][-1:] == ["--is-embedding"]
    assert service["engine"]["args"][:2] == ["--tp-size", str(service["tensor_parallel"])]  # its layout first (fix115)
    assert service["engine"]["args"][2:4] == ["--context-length", str(service["engine"]["context_length"])]


def test_a_pass_packs_its_requests_and_reads_the_weights_once(tmp_path: Path) -> None:
    """review22 item 1: each request was costed alone, without the weight read: 16-token inputs ran at half the
    tokens/s of 1,024-token ones, and one request a pass (max_num_seqs 1) sustained what 64 a pass did.

    Packed, a replica's input tokens/s barely depend on the input length (its passes are the same 8,192 tokens; only
    each request's own attention grows); one request a pass is bounded by reading the weights once per request.
    """
    pin = "\n    parallelism: {tp: 1}"
    tokens_per_s = {
        n: _plan(tmp_path, input=n, pin=pin, extra="\n      service_class: batch").details["max_input_tokens_per_s_per_replica"]
        for n in (16, 512)
    }
    assert tokens_per_s[16] == pytest.approx(tokens_per_s[512], rel=0.05)
    one, many = (
        _plan(tmp_path, input=32, gpu="l4-24gb", pin=pin, extra=f"\n      service_class: batch\n      max_num_seqs: {n}")
        for n in (1, 64)
    )
    weights_s = 8.2e9 * 2 / (catalog.gpus()["l4-24gb"].memory_bandwidth_gb_per_s * 1e9)  # Qwen3-8B, bf16, at full rate
    assert one.details["requests_per_s_per_replica_max"] < 1 / weights_s  # no faster than a weight read a request
    assert many.details["requests_per_s_per_replica_max"] > 4 * one.details["requests_per_s_per_replica_max"]


def test_a_pooling_service_gets_no_decode_throughput_gap(tmp_path: Path) -> None:
    """review22 item 4: the vLLM-on-MI300X gap, measured in output tokens/s of generating runs, told an embedding
    service to buy up to 57% margin; it runs no decode."""
    path = _workload(tmp_path, gpu="mi300x-192gb")
    path.write_text(path.read_text().replace("provider: aws", "provider: baremetal"))
    assert not [f for f in plan_file(str(path))[1].findings if f.code == "throughput-gap"]


SPLIT_EMBED = """\
version: 1
name: split-embed
deployments:
  - name: embed
    model: meta-llama/Llama-3.1-70B-Instruct
    inference: {task: embed, precision: bf16, max_context_tokens: 8192, avg_input_tokens: 2000,
                requests_per_second: 40, slo: {ttft_p95_ms: 2000}}
hardware:
  gpus: [h200-sxm-141gb]
  provider: baremetal
  inventory:
    - {platform: dgx-h100, gpu: h100-sxm5-80gb, count: 1, hosts: [{name: h100-01}]}
"""


def test_a_split_pooling_service_is_told_as_one(tmp_path: Path) -> None:
    """review22 item 8: its parts read "TTFT p95 1273 ms, TPOT 0.0 ms" in SPEC.md, as a generating service's."""
    from generator.render import render_plan
    from generator.workload import load_workload

    path = tmp_path / "w.yaml"
    path.write_text(SPLIT_EMBED)
    loaded = load_workload(str(path))
    plan = plan_file(str(path))[1]
    assert plan.deployments[0].split
    spec = render_plan(plan, loaded.workload)["SPEC.md"]
    parts = [line for line in spec.splitlines() if line.startswith("  - TP ")]
    assert len(parts) == 2 and all("request latency p95" in p and "TPOT" not in p for p in parts)


@pytest.mark.parametrize(
    ("outputs", "said"), [("[ansible]", "the Ansible group vars carry them"), ("[kubernetes]", "no Ansible")]
)
def test_the_engine_flags_are_said_where_they_are_rendered(tmp_path: Path, outputs: str, said: str) -> None:
    """review22 item 11: "the group vars carry them" with no Ansible output rendered."""
    path = _workload(tmp_path)
    path.write_text(path.read_text() + f"outputs: {outputs}\n")
    (dep,) = plan_file(str(path))[1].deployments
    (reason,) = [r for r in dep.reasons if r.startswith("task embed: vLLM runs it with --runner pooling")]
    assert said in reason


@pytest.mark.parametrize(
    ("name", "overrides"),
    [("Qwen3-Reranker-8B", True), ("Qwen3-Reranker-8B/", True), ("Qwen3-Reranker-8B/config.json", True),
     ("Qwen3-Reranker-8B-seq-cls", False)],
)  # fmt: skip
def test_a_qwen3_reranker_is_served_with_the_overrides_that_make_it_score(tmp_path: Path, name: str, overrides: bool) -> None:
    """newuser26 item 12: Qwen's original Qwen3-Reranker is a causal LM scoring by its 'no' / 'yes' logits; vLLM's
    --convert classify alone gives it an untrained head. Its config is Qwen3-8B's (the catalog's, as a local folder)."""
    folder = tmp_path / name.partition("/")[0]  # fuzz24 item H3: the folder, its slash or its config.json, alike
    folder.mkdir()
    config = catalog.find_model("Qwen/Qwen3-8B")
    (folder / "config.json").write_text(json.dumps(config.config))
    path = _workload(tmp_path, model=f"./{name}", task="score", rate=5)
    files = render_file(str(path))
    plan = json.loads(files["spec.json"])["plan"]
    (group_vars,) = [v for k, v in files.items() if k.startswith("ansible/group_vars/")]
    (service,) = ansible_reader().load(group_vars)["specgen_deployments"]
    engine = service["engine"]
    reasons = " ".join(plan["deployments"][0]["reasons"])
    expected = (
        '{"architectures":["Qwen3ForSequenceClassification"],"classifier_from_token":["no","yes"],'
        '"is_original_qwen3_reranker":true}'
    )
    if overrides:
        assert engine["args"][-2:] == ["--hf-overrides", expected]
        assert engine["hf_overrides"]["classifier_from_token"] == ["no", "yes"]
        assert f"--hf-overrides '{expected}'" in reasons
    else:
        assert "--hf-overrides" not in engine["args"] and "hf_overrides" not in engine
        assert "--hf-overrides" not in reasons
