"""Attention data parallelism with expert parallelism, planned (newuser72 item 1).

DeepSeek-V3 / R1 keep one MLA latent a token and layer, which TP does not split: under TP8 each of the 8 GPUs holds
the whole latent of every sequence, so an 8-GPU replica holds 1/8 of the sequences its KV memory holds as 8 attention
data-parallel ranks with the experts spread over all 8 (vLLM ``--data-parallel-size 8 --enable-expert-parallel``,
SGLang ``--enable-dp-attention``). A workload may pin it (``ep`` a multiple of ``tp``) and the planner searches it for a
mixture-of-experts model whose KV TP would copy; a dense model is never offered it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.api import render_file
from generator.calculator.report import plan_text
from generator.catalog import find_model
from generator.planner import plan_workload
from generator.planner.inference import attention_dp_degrees
from generator.planner.plan import layout_name
from generator.render.ansible import render_ansible
from generator.sizing.architecture import parse_architecture
from generator.workload import load_workload
from generator.workload.models import InferenceSpec
from tests.helpers import ansible_reader

#: newuser72's r1-deepseek-aws.yaml: long reasoning outputs, whose KV pool binds the batch.
R1 = """\
version: 1
name: reason-r1-aws
deployments:
  - name: r1
    model: deepseek-ai/DeepSeek-R1
{pin}    inference:
      precision: fp8
      kv_cache_precision: bf16
      max_context_tokens: 40960
      avg_input_tokens: 1000
      avg_output_tokens: 32000
      requests_per_second: 1
      engine: {engine}
      slo:
        ttft_p95_ms: 3000
        tpot_ms: 50
hardware:
  provider: aws
  gpus: [{gpus}]
objective: cost
kubernetes:
  location: us-east-1
outputs: [ansible, kubernetes]
"""


def _r1(
    tmp_path: Path, pin: str = "", engine: str = "vllm", gpus: str = "h100-sxm5-80gb, h200-sxm-141gb, b200-sxm-180gb"
) -> Path:
    path = tmp_path / "r1.yaml"
    path.write_text(R1.format(pin=pin, engine=engine, gpus=gpus), encoding="utf-8")
    return path


def test_long_output_r1_is_planned_with_attention_dp_on_fewer_gpus(tmp_path: Path) -> None:
    """Before: 19 x TP4 PP2 on 19 p6-b200 (152 B200, $1,580,248/month; runner-up 37 p5en, 296 H200, $1,709,625),
    every TP rank holding every sequence's latent. After: 5 x TP1 EP8 (attention DP 8) on 5 p6-b200 (40 B200,
    $415,855/month); runner-up 15 x TP1 EP8 on 15 p5en (120 H200, $693,091). A searched DP layout is one stage.

    fix74: the B200 plan's 5 x 224 places = 1,120 (8 ranks of 28 whole requests of 33,000 tokens; 229 from the ranks'
    tokens pooled before m74e), a request 1,014 s: 91% busy at 1 req/s, 0.1% wait. The H200 runner-up was 14 x TP1 EP8
    ($646,885): 14 x 96 places (8 ranks of 12; 100 pooled) = 1,344 at 1,341 s a request, 99.8% busy: 90% wait, p95
    1,293 s past the 2.76 s slack (3 s TTFT target - 239 ms TTFT p95 at batch 96); 15 (1,440 places, 93%) wait 0.4%.

    acc112: the H200 runner-up is 16 x TP1 EP8 (128 H200, $739,297/month): its steps of 96 tokens touch 95% of each
    rank's 32 experts on average and the layer waits for the rank that touches them all (busiest_rank_routed_share),
    ~5% more expert reads a step; the B200 plan's request 1,014 -> 1,017 s, still 5 replicas.

    acc138: the B200 at its measured GEMM rate (stas00/ml-engineering's MAMF, FP8 0.763 of its peak against the
    H100's 0.709; BF16 0.776 against 0.803): a request 1,017 -> 1,025 s, 0.1% -> 0.2% of requests wait; the same
    5 replicas and places.

    acc164: vLLM's MoE under attention DP is its default allgather_reducescatter (the quantized tokens all-gathered,
    one NCCL broadcast a rank, the bf16 outputs reduce-scattered: GatheredExchange, moe_gathered_exchange 1), not a
    top-k all-to-all: its (8 + 1) x 20 us of NCCL calls a MoE layer slow each step, 5 -> 6 replicas (40 -> 48 B200,
    $415,855 -> $499,026/month; 6 x 224 places = 1,344, 93% busy, 0.7% wait, a request 1,255 s); the H200
    runner-up 16 -> 19 x TP1 EP8 (128 -> 152 H200, $739,297 -> $877,916).

    acc181 (landed by acc183): vLLM's fused-MoE layers take a fixed 70 us a step each; DeepSeek-R1's 58 MoE layers add
    4.06 ms to every step, a request of 32,000 output tokens 1,255 -> 1,385 s (+130 s = 32,000 x 4.06 ms), so 6 -> 7
    replicas (48 -> 56 B200, $499,026 -> $582,197/month; 7 x 224 places = 1,568, 88% busy, 0.0% wait); the H200
    runner-up 19 -> 29 x TP1 EP8 (152 -> 232 H200)."""
    files = render_file(str(_r1(tmp_path)))
    plan = json.loads(files["spec.json"])["plan"]
    (dep,) = plan["deployments"]
    assert (dep["tp"], dep["pp"], dep["replicas"], dep["gpus"]) == (1, 1, 7, 56)
    assert (dep["details"]["expert_parallel"], dep["details"]["attention_dp"]) == (8, 8)
    assert plan["totals"]["gpus"] == 56  # 152 before, 40 before acc164, 48 before acc181's 70 us a MoE layer
    assert (
        "chosen by cost: 7 x TP1 EP8 (attention DP 8) on 7 x aws-p6-b200-48xlarge (8 x b200-sxm-180gb), $582,197/month"
        in files["SPEC.md"]
    )  # $1,580,248/month before
    assert "29 x TP1 EP8 (attention DP 8) on 29 x aws-p5en-48xlarge (8 x h200-sxm-141gb)" in files["SPEC.md"]  # runner-up
    assert "7 replica(s) x 224 places = 1,568 (c), 88% busy at 1 req/s: 0.0% of requests wait for one" in files["SPEC.md"]
    assert "cap the router's concurrency at 224 a replica, or give inference.max_num_seqs: 28 (28 a rank)" in files["SPEC.md"]
    assert "- Layout: TP 1 x EP 8 (attention DP 8) x PP 1 per replica" in files["SPEC.md"]
    assert not any(f" PP{pp} (attention DP" in files["SPEC.md"] for pp in (2, 3, 4, 6, 8))
    # the engine is told: vLLM runs 8 data-parallel ranks of TP1, the experts over the 8 (TP x DP)
    (name,) = (n for n in files if "group_vars" in n)
    engine = ansible_reader().load(files[name])["specgen_deployments"][0]["engine"]
    assert (engine["data_parallel_size"], engine["expert_parallel_size"]) == (8, 8)
    # after the sizing flags (fix115): each DP rank is TP1, its own --max-num-seqs (vLLM schedules a rank's own batch)
    assert engine["args"][:2] == ["--tensor-parallel-size", "1"]
    assert engine["args"][12:] == ["--data-parallel-size", "8", "--enable-expert-parallel"]


def test_a_pinned_attention_dp_layout_is_planned_and_rendered_for_sglang(tmp_path: Path) -> None:
    """newuser72's r1-deepseek-dp8.yaml (tp 1, ep 8 on H200) was refused at the field; SGLang's --tp-size is the
    stage's GPUs under --enable-dp-attention, its attention TP that over --dp-size."""
    loaded = load_workload(str(_r1(tmp_path, "    parallelism: {tp: 1, ep: 8}\n", "sglang", "h200-sxm-141gb")))
    plan = plan_workload(loaded)
    (dep,) = plan.deployments
    assert (dep.tp, dep.pp, dep.expert_parallel, dep.details["attention_dp"], dep.stage_gpus) == (1, 1, 8, 8, 8)
    assert dep.gpus == dep.replicas * dep.stage_gpus * dep.pp
    assert "(as pinned; vLLM --data-parallel-size 8 --enable-expert-parallel, SGLang --enable-dp-attention)" in dep.reasons[0]
    (group_vars,) = (ansible_reader().load(t) for n, t in render_ansible(plan, loaded.workload).items() if "group_vars" in n)
    engine = group_vars["specgen_deployments"][0]["engine"]
    assert engine["args"][-7:] == ["--tp-size", "8", "--enable-dp-attention", "--dp-size", "8", "--ep-size", "8"]
    # review72 item 8: tensor_parallel is SGLang's --tp-size too (was 1 beside --tp-size 8): one value on its command line
    settings = group_vars["specgen_deployments"][0]
    assert (settings["tensor_parallel"], engine["attention_tensor_parallel"], engine["data_parallel_size"]) == (8, 1, 8)
    assert {engine["args"][i + 1] for i, a in enumerate(engine["args"]) if a == "--tp-size"} == {str(settings["tensor_parallel"])}
    # SGLang's default for --tp-size 8 --enable-dp-attention --dp-size 8 on H200 reserves 33,280 MiB (its DP-attention
    # padding and CUDA-graph terms): 0.769, not the 0.907 of a TP1 replica (review72 item 5)
    assert engine["mem_fraction_static"] == dep.details["mem_fraction_static"] == 0.769
    # newuser74 item 13: SGLang's --max-running-requests is the engine's, split over its 8 DP ranks, where the plan's
    # max_num_seqs is each rank's (review32 item 5)
    assert engine["max_running_requests"] == 8 * dep.details["max_num_seqs"]
    at = engine["args"].index("--max-running-requests")
    assert engine["args"][at + 1] == str(engine["max_running_requests"])


def test_a_pinned_tp_and_ep_keep_their_degrees(tmp_path: Path) -> None:
    """tp 2, ep 8: four attention groups of TP2, the experts over the stage's 8 GPUs."""
    loaded = load_workload(str(_r1(tmp_path, "    parallelism: {tp: 2, ep: 8}\n", gpus="h200-sxm-141gb")))
    (dep,) = plan_workload(loaded).deployments
    assert (dep.tp, dep.expert_parallel, dep.details["attention_dp"]) == (2, 8, 4)


def test_a_pipeline_of_attention_dp_stages_is_planned_where_pinned(tmp_path: Path) -> None:
    """Searched DP layouts are one stage (vLLM: DP attention with PP "not a common setup", vllm issue 20053); a pinned
    pp is taken: 6 x TP1 EP8 PP2 on 12 p5en ($554,473/month) against PP1's 14 ($646,885), each replica over 2 nodes.
    acc112: 7 x PP2 on 14 p5en (PP1's runner-up 16): a request holds its place 1,598 s, the EP rank that touches the
    most of its experts setting each MoE layer's reads (busiest_rank_routed_share); 6 x 276 places would be 96% busy.
    acc164: vLLM's gathered MoE exchange (allgather_reducescatter, (8 + 1) x 20 us of NCCL calls a MoE layer) makes
    the 50 ms TPOT bind at batch 128 a replica: 7 -> 14 x PP2 (112 -> 224 H200), a request 1,597 s.
    acc181 (landed by acc183): vLLM's 70 us per MoE layer a step, 58 layers (29 a stage) = 4.06 ms more a step of the
    pipeline, leaves less of the 50 ms TPOT to the batch's reads, so each replica holds fewer sequences within it:
    14 -> 19 x PP2 (224 -> 304 H200)."""
    loaded = load_workload(str(_r1(tmp_path, "    parallelism: {tp: 1, ep: 8, pp: 2}\n", gpus="h200-sxm-141gb")))
    plan = plan_workload(loaded)
    (dep,) = plan.deployments
    assert (dep.tp, dep.pp, dep.expert_parallel, dep.replicas, dep.gpus) == (1, 2, 8, 19, 304)
    assert "TP1 x EP8 (attention DP 8) x PP2 x 19 replica(s) in r1_h200_sxm_141gb" in plan_text(plan)
    (group_vars,) = (ansible_reader().load(t) for n, t in render_ansible(plan, loaded.workload).items() if "group_vars" in n)
    assert group_vars["specgen_deployments"][0]["hosts_per_replica"] == 2


SPEC = InferenceSpec(max_context_tokens=4096)


@pytest.mark.parametrize(
    ("model", "sizes", "ep", "pin_tp", "degrees"),
    [
        # a dense model: no experts to spread, its DP ranks are replicas
        ("meta-llama/Llama-3.1-70B-Instruct", (1, 2, 4, 8), None, None, ()),
        ("meta-llama/Llama-3.1-70B-Instruct", (1, 2, 4, 8), 8, None, ()),
        # 8 KV heads: TP8 splits them with no copy, so DP8 holds no more sequences (and copies attention weights)
        ("mistralai/Mixtral-8x7B-Instruct-v0.1", (1, 2, 4, 8), None, None, ()),
        # MLA: every TP copies the latent; each TP below the width copies less
        ("deepseek-ai/DeepSeek-R1", (1, 2, 4, 8), None, None, ((1, 8), (2, 8), (4, 8))),
        ("deepseek-ai/DeepSeek-R1", (1, 2, 4, 8), None, 2, ((2, 8),)),
        ("deepseek-ai/DeepSeek-R1", (1, 2, 4), None, None, ((1, 4), (2, 4))),
        # pinned: that EP only; ep 1 pins EP off
        ("deepseek-ai/DeepSeek-R1", (1, 2, 4, 8), 4, None, ((1, 4), (2, 4))),
        ("deepseek-ai/DeepSeek-R1", (1, 2, 4, 8), 1, None, ()),
        # 4 KV heads: TP8 copies each twice; TP4 and below split them whole
        ("Qwen/Qwen3-30B-A3B", (1, 2, 4, 8), None, None, ((1, 8), (2, 8), (4, 8))),
    ],
)
def test_attention_dp_is_tried_where_tp_copies_the_kv_of_a_moe_model(
    model: str, sizes: tuple[int, ...], ep: int | None, pin_tp: int | None, degrees: tuple[tuple[int, int], ...]
) -> None:
    arch = parse_architecture(find_model(model).config)
    assert attention_dp_degrees(arch, SPEC, sizes, pin_tp, ep) == degrees


def test_a_dense_model_is_never_offered_attention_dp(tmp_path: Path) -> None:
    path = tmp_path / "d.yaml"
    path.write_text(
        "version: 1\nname: d\ndeployments:\n  - name: d\n    model: meta-llama/Llama-3.1-70B-Instruct\n    inference: "
        "{precision: fp8, max_context_tokens: 32768, avg_input_tokens: 1000, avg_output_tokens: 8000, "
        "requests_per_second: 2}\nhardware: {gpus: [h100-sxm5-80gb, h200-sxm-141gb], provider: baremetal}\n",
        encoding="utf-8",
    )
    (dep,) = plan_workload(load_workload(str(path))).deployments
    assert "attention_dp" not in dep.details
    assert not any("attention DP" in c.summary or " EP" in c.summary for c in dep.runners_up)


def test_the_plan_is_the_same_to_the_byte(tmp_path: Path) -> None:
    first = render_file(str(_r1(tmp_path)))
    assert render_file(str(_r1(tmp_path))) == first


@pytest.mark.parametrize(
    ("degrees", "text"),
    [
        ((8, 1, 1), "TP8"),
        ((8, 2, 8), "TP8 EP8 PP2"),
        ((1, 1, 8), "TP1 EP8 (attention DP 8)"),
        ((2, 2, 8), "TP2 EP8 PP2 (attention DP 4)"),
    ],
)
def test_layout_names(degrees: tuple[int, int, int], text: str) -> None:
    assert layout_name(*degrees) == text


@pytest.mark.parametrize(
    "sharing",
    [
        pytest.param("    strategy: mig\n    mig_profile: 3g.40gb\n", id="mig"),
        pytest.param("    strategy: time-slicing\n    replicas_per_gpu: 2\n", id="time-slicing"),
    ],
)
def test_a_pinned_attention_dp_replica_keeps_whole_gpus_under_gpu_sharing(tmp_path: Path, sharing: str) -> None:
    """review72 item 2: a pinned {tp: 1, ep: 2} is a 2-GPU replica (two DP ranks, the experts over both), so it never
    runs in one share of one GPU: it keeps 2 whole GPUs, as a pinned TP2 does, and the pool is said to keep them."""
    path = tmp_path / "mig-ep2.yaml"
    path.write_text(
        "version: 1\nname: mig-ep2\ndeployments:\n  - name: assistant\n    model: Qwen/Qwen3-30B-A3B\n"
        "    parallelism: {tp: 1, ep: 2}\n    inference:\n      precision: fp8\n      max_context_tokens: 8192\n"
        "      avg_input_tokens: 800\n      avg_output_tokens: 200\n      requests_per_second: 2\n"
        "      slo:\n        ttft_p95_ms: 2000\n        tpot_ms: 50\n"
        "hardware:\n  provider: gcp\n  gpus: [a100-sxm4-80gb]\nobjective: cost\noutputs: [ansible, kubernetes]\n"
        "kubernetes:\n  gcp_project: acme-inference\n  location: us-central1\n  zone: us-central1-a\n  gpu_sharing:\n"
        + "\n".join("  " + line for line in sharing.splitlines())
        + "\n"
    )
    loaded = load_workload(str(path))
    plan = plan_workload(loaded)
    (dep,) = plan.deployments
    assert (dep.tp, dep.expert_parallel, dep.details["attention_dp"], dep.replicas, dep.gpus) == (1, 2, 2, 1, 2)
    assert "gpu_share" not in dep.details
    assert "in 3g.40gb shares" not in plan_text(plan) and "in 1/2 shares" not in plan_text(plan)
    files = render_file(str(path))
    codes = {f["code"]: f["message"] for f in json.loads(files["spec.json"])["plan"]["findings"]}
    assert codes["gpu-sharing-whole-gpus"].endswith(
        "assistant: its replica takes 2 GPUs (TP1 EP2 (attention DP 2)), and shares could hand one pod slices of one GPU"
    )
    (group_vars,) = (ansible_reader().load(t) for n, t in files.items() if n.startswith("ansible/group_vars/assistant_"))
    assert group_vars["specgen_deployments"][0]["engine"]["data_parallel_size"] == 2


def test_engine_setting_findings_name_the_attention_dp_layout_and_compare_per_rank(tmp_path: Path) -> None:
    """review72 item 6: kv-cache-fp8 and engine-limits-cost-capacity named the 8-GPU TP1 EP8 replica "(TP1 PP1)", and
    compared vLLM's max_num_seqs (each DP rank's: 2,048, 16,384 over 8 ranks) with the replica's 208 requests (m74e: 8
    ranks of 26 whole requests; 215, the ranks' tokens pooled, said beside "26 a rank" before)."""
    path = _r1(tmp_path)
    text = path.read_text().replace(
        "      requests_per_second: 1\n",
        "      requests_per_second: 1\n      max_num_seqs: 2048\n      max_num_batched_tokens: 65536\n",
    )
    path.write_text(text)
    plan = plan_workload(load_workload(str(path)))
    codes = {f.code: f.message for f in plan.findings}
    assert "(TP1 PP1)" not in codes["kv-cache-fp8"] + codes["engine-limits-cost-capacity"]
    assert "208 requests of 33,000 tokens a replica on b200-sxm-180gb (TP1 EP8 (attention DP 8))" in codes["kv-cache-fp8"]
    limits = codes["engine-limits-cost-capacity"]
    assert "cost capacity on b200-sxm-180gb (TP1 EP8 (attention DP 8)):" in limits
    assert (
        "max_num_seqs 2,048 is each attention-DP rank's (16,384 over the replica's 8 ranks), above the 208 average "
        "requests the KV cache holds (26 a rank), so the sequences past them wait"
    ) in limits


def test_a_replica_holds_whole_requests_in_each_attention_dp_rank() -> None:
    """m74e: each attention-DP rank builds its own KV pool for its own sequences, so the replica holds the whole requests
    one rank holds times the ranks: R1 on a p6-b200 at TP1 EP8, 947,824 KV tokens a rank (7,582,592 a replica), holds
    8 x 28 = 224 requests of 33,000 tokens, not the 229 of the ranks' tokens pooled (5 of which no rank has room for;
    the plan's own advice, max_num_seqs 28 a rank, admits 224). One rank (no attention DP): the pool's tokens."""
    from generator.sizing.memory import Capacity

    dp8 = Capacity(0, 0, 0, 8 * 947_824, 8 * 947_824 / 40_960, 947_824, 947_824 / 40_960, attention_dp=8)
    assert (dp8.sequences_held(33_000), dp8.kv_cache_tokens // 33_000) == (224, 229)
    one = Capacity(0, 0, 0, 947_824, 947_824 / 40_960, 947_824, 947_824 / 40_960)
    assert one.sequences_held(33_000) == 28


Q30_TP1 = """\
version: 1
name: q30-h100
deployments:
  - name: m
    model: Qwen/Qwen3-30B-A3B
    parallelism: {pin}
    inference:
      engine: vllm
      precision: fp8
      max_context_tokens: 32768
      avg_input_tokens: 2000
      avg_output_tokens: 8000
      requests_per_second: 20
      slo:
        ttft_p95_ms: 5000
        tpot_ms: 60
hardware:
  provider: baremetal
  gpus: [h100-sxm5-80gb]
objective: cost
"""


def test_the_attention_dp_reason_names_the_models_own_kv_case_and_how_to_keep_tp1(tmp_path: Path) -> None:
    """review72 item 10: Qwen3-30B-A3B (4 KV heads, no MLA) was told "an MLA latent whole"; a pinned tp: 1 alone planned
    8-GPU TP1 EP8 replicas (ep searched) with no word that ep: 1 keeps one-GPU replicas."""
    path = tmp_path / "q30.yaml"
    path.write_text(Q30_TP1.format(pin="{tp: 1}"))
    (dep,) = plan_workload(load_workload(str(path))).deployments
    assert (dep.tp, dep.expert_parallel) == (1, 8)
    reason = dep.reasons[0]
    assert "MLA" not in reason
    assert (
        "(under TP8 each GPU keeps the KV heads it serves of every sequence: the model's 4 KV heads over 8 GPUs, each "
        "held 2 times)" in reason
    )
    assert "a pinned tp leaves ep searched: parallelism.ep: 1 keeps each replica to its TP1 GPUs" in reason
    path.write_text(Q30_TP1.format(pin="{tp: 1, ep: 1}"))
    (kept,) = plan_workload(load_workload(str(path))).deployments
    assert (kept.tp, kept.expert_parallel, kept.stage_gpus) == (1, 1, 1)
    # MLA: the latent itself, and no such sentence where ep is pinned
    r1 = plan_workload(load_workload(str(_r1(tmp_path, "    parallelism: {tp: 1, ep: 8}\n", gpus="h200-sxm-141gb"))))
    (r1_reason,) = (r for r in r1.deployments[0].reasons if "attention data-parallel" in r)
    assert "(under TP8 each of the 8 GPUs keeps the whole MLA latent of every sequence)" in r1_reason
    assert "a pinned tp leaves ep searched" not in r1_reason
