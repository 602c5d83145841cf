"""`specgen estimate`: expert parallelism (serving and training), the KV capacity's basis and concurrency, and the
parts of a training job's weights. Expected values are computed by hand in the comments.

Qwen3-30B-A3B (config in the catalog): 48 layers, hidden 2048, 32 query heads and 4 KV heads of 128, 128 routed
experts of width 768 (top 8), vocabulary 151,936, untied embeddings.
- routed experts: 48 x 128 x 3 x 2048 x 768 = 28,991,029,248 parameters;
- the rest: per layer q 2048x4096 + k, v 2048x512 each + o 4096x2048 = 18,874,368, router 2048x128 = 262,144,
  norms 2 x 2048 + q/k norms 2 x 128 = 4,352 -> 19,140,864; x 48 = 918,761,472; embeddings and LM head
  2 x 151,936 x 2048 = 622,329,856; final norm 2048 -> 1,541,093,376;
- total 30,532,122,624 (bf16: 61,064,245,248 bytes).
"""

from __future__ import annotations

import pytest

from generator import catalog
from generator.calculator.estimate import EstimateRequest, estimate
from generator.errors import InputError
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.training import TrainingSetup, size_training
from generator.sizing.weights import Parallelism
from tests.helpers import estimate_json, run_estimate

QWEN_MOE = "Qwen/Qwen3-30B-A3B"
PARAMS = 30_532_122_624
EXPERT_PARAMS = 28_991_029_248
DENSE_PARAMS = 1_541_093_376
H100 = "h100-sxm5-80gb"


def test_hand_counts_match_the_model() -> None:
    data = estimate_json(QWEN_MOE)
    assert data["params"]["total"] == PARAMS == EXPERT_PARAMS + DENSE_PARAMS


# --- 6a: --ep on a dense model ----------------------------------------------------------------------------------


@pytest.mark.parametrize("extra", [(), ("--train", "qlora"), ("--train", "full", "--gpus", "2")])
def test_ep_on_a_dense_model_is_refused(extra: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_estimate("llama-3.1-8b", "--ep", "2", *extra)
    assert (code, out) == (1, "")  # exit 1: a value that is invalid for this model (as --tp 3 on Llama)
    err = capsys.readouterr().err
    assert "--ep 2" in err and "meta-llama/Llama-3.1-8B is a dense model (no routed experts)" in err


def test_ep_1_on_a_dense_model_is_the_default() -> None:
    assert estimate_json("llama-3.1-8b", "--ep", "1") == estimate_json("llama-3.1-8b")


# --- 6b: training with EP carved out of data parallel ------------------------------------------------------------


def _train(*extra: str) -> dict[str, object]:
    return estimate_json(QWEN_MOE, "--train", "full", "--gpus", "8", "--gpu", H100, *extra)


@pytest.mark.parametrize(
    ("zero", "ep", "optimizer", "gradients"),
    [
        # ZeRO-0: every GPU holds its whole model-parallel shard; EP keeps 1/8 of the experts.
        # adamw: 12 B/param of states, 2 of gradients.
        ("0", "1", PARAMS * 12, PARAMS * 2),  # 366,385,471,488 and 61,064,245,248
        ("0", "8", (DENSE_PARAMS + EXPERT_PARAMS // 8) * 12, (DENSE_PARAMS + EXPERT_PARAMS // 8) * 2),
        # ZeRO-1: states sharded; the other params over 8 DP ranks, each expert shard over 8 / EP ranks:
        # DENSE / 8 + (EXPERT / EP) / (8 / EP) = PARAMS / 8 whatever EP
        ("1", "1", PARAMS * 12 // 8, PARAMS * 2),
        ("1", "2", PARAMS * 12 // 8, (DENSE_PARAMS + EXPERT_PARAMS // 2) * 2),
        ("1", "8", PARAMS * 12 // 8, (DENSE_PARAMS + EXPERT_PARAMS // 8) * 2),
        # ZeRO-3 (the bug report's case): 45,798,183,936 B of states with or without EP, gradients sharded too
        ("3", "1", 45_798_183_936, PARAMS * 2 // 8),
        ("3", "8", 45_798_183_936, PARAMS * 2 // 8),
    ],
)
def test_training_optimizer_and_gradients_with_expert_parallel(zero: str, ep: str, optimizer: int, gradients: int) -> None:
    data = _train("--zero", zero, "--ep", ep)
    per_gpu = data["memory"]["per_gpu"]  # type: ignore[index]
    assert (per_gpu["optimizer"], per_gpu["gradients"]) == (optimizer, gradients)
    assert data["training"]["data_parallel"] == 8 and data["training"]["expert_parallel"] == int(ep)  # type: ignore[index]


def test_zero3_weights_with_expert_parallel() -> None:
    # ZeRO-3 holds the shard (PARAMS x 2 B / 8 = 7,633,030,656), two gathered layers (zero3_live_layers) and 7/8 of the
    # root unit (embeddings + LM head + final norm, (2 x 311,164,928 + 2048) x 2 B = 1,244,663,808 -> 1,089,080,832).
    # A layer is 19,140,864 + 128 x 3 x 2048 x 768 = 623,120,640 params (1,246,241,280 B); with EP 8 a GPU gathers
    # only its 16 of the 128 experts: 1,246,241,280 - 1,207,959,552 x 7/8 = 189,276,672 B.
    assert Constants().zero3_live_layers == 2
    no_ep = _train("--zero", "3")["memory"]["per_gpu"]  # type: ignore[index]
    ep8 = _train("--zero", "3", "--ep", "8")["memory"]["per_gpu"]  # type: ignore[index]
    assert no_ep["weights"] == 7_633_030_656 + 2 * 1_246_241_280 + 1_089_080_832 == 11_214_594_048
    assert ep8["weights"] == 7_633_030_656 + 2 * 189_276_672 + 1_089_080_832 == 9_100_664_832
    assert ep8["optimizer"] <= no_ep["optimizer"] and ep8["total"] < no_ep["total"]
    assert ep8["total"] == sum(v for k, v in ep8.items() if k != "total")


# LoRA rank 16 (the default) on Qwen3-30B-A3B, rank x (in + out) per matrix, fp32 (4 B) adapters and gradients,
# adamw's m + v (8 B) of states; TP 1, so a GPU's model-parallel share is the whole model.
# - q_proj, v_proj (attention, no expert): 16 x ((2048 + 4096) + (2048 + 512)) = 139,264 per layer x 48 = 6,684,672
#   params = 26,738,688 B; EP spreads routed experts only, so these stay whole on every GPU at any EP.
# - gate_proj, up_proj, down_proj of the 128 routed experts: 16 x 3 x (2048 + 768) = 135,168 per expert x 128 x 48 =
#   830,472,192 params = 3,321,888,768 B at EP 1; EP 8 holds 16 of the 128 experts: 103,809,024 params = 415,236,096 B.
QV_ADAPTERS = 6_684_672
EXPERT_ADAPTERS = 830_472_192


@pytest.mark.parametrize(
    ("targets", "ep", "adapter_bytes"),
    [
        ("q_proj,v_proj", "1", QV_ADAPTERS * 4),
        ("q_proj,v_proj", "8", QV_ADAPTERS * 4),  # 26,738,688 B, not 1/6.8 of it (the whole model's EP share)
        ("gate_proj,up_proj,down_proj", "1", EXPERT_ADAPTERS * 4),
        ("gate_proj,up_proj,down_proj", "8", EXPERT_ADAPTERS // 8 * 4),
        ("q_proj,v_proj,gate_proj,up_proj,down_proj", "8", (QV_ADAPTERS + EXPERT_ADAPTERS // 8) * 4),
    ],
)
def test_lora_adapters_split_by_ep_only_on_expert_modules(targets: str, ep: str, adapter_bytes: int) -> None:
    data = estimate_json(QWEN_MOE, "--train", "lora", "--gpus", "8", "--lora-targets", targets, "--ep", ep)
    per_gpu, parts = data["memory"]["per_gpu"], data["memory"]["weight_parts"]
    assert parts["adapters"] == adapter_bytes
    # ZeRO-0: fp32 gradients (4 B) and m + v (8 B) of the adapters the GPU holds
    assert (per_gpu["gradients"], per_gpu["optimizer"]) == (adapter_bytes, adapter_bytes * 2)
    assert data["params"]["trainable"] == sum(
        n for name, n in (("q_proj", QV_ADAPTERS), ("gate_proj", EXPERT_ADAPTERS)) if name in targets
    )


@pytest.mark.parametrize("ep", ["1", "8"])
def test_lora_adapter_states_under_zero_are_the_same_at_any_ep(ep: str) -> None:
    # ZeRO-3 over 8 DP ranks: the attention adapters' states over all 8, an expert's over the 8 / EP ranks holding it
    data = estimate_json(
        QWEN_MOE, "--train", "lora", "--gpus", "8", "--zero", "3", "--lora-targets", "q_proj,v_proj,down_proj", "--ep", ep
    )
    trainable = QV_ADAPTERS + EXPERT_ADAPTERS // 3  # down_proj alone: a third of the three expert matrices
    per_gpu = data["memory"]["per_gpu"]
    assert (per_gpu["gradients"], per_gpu["optimizer"]) == (trainable * 4 // 8, trainable * 8 // 8)


@pytest.mark.parametrize(
    ("offload", "ep", "base", "host"),
    [
        # ZeRO-3 of the bf16 base, as for full training (test_zero3_weights_with_expert_parallel)
        ("", "1", 11_214_594_048, 0),
        ("", "8", 9_100_664_832, 0),
        # parameter offload: the GPU keeps the two gathered layers and the whole root unit (1,244,663,808 B), the
        # same gathered layer as ZeRO-3's: 2 x 1,246,241,280 + 1,244,663,808 = 3,737,146,368 at EP 1 and
        # 2 x 189,276,672 + 1,244,663,808 = 1,623,217,152 at EP 8; the host takes the rest of the ZeRO-3 shard:
        # 11,214,594,048 - 3,737,146,368 = 9,100,664,832 - 1,623,217,152 = 7,477,447,680
        ("--offload-params", "1", 3_737_146_368, 7_477_447_680),
        ("--offload-params", "8", 1_623_217_152, 7_477_447_680),
    ],
)
def test_lora_base_under_zero3_and_parameter_offload_falls_with_ep(offload: str, ep: str, base: int, host: int) -> None:
    flags = ("--offload-params",) if offload else ()
    data = estimate_json(
        QWEN_MOE, "--train", "lora", "--gpus", "8", "--zero", "3", *flags, "--lora-targets", "q_proj,v_proj", "--ep", ep
    )
    assert data["memory"]["weight_parts"]["base"] == base
    assert data["training"]["host_ram_bytes_per_gpu"] == host


def test_training_ep_layout_text_and_errors(capsys: pytest.CaptureFixture[str]) -> None:
    code, text = run_estimate(QWEN_MOE, "--train", "full", "--gpus", "8", "--zero", "3", "--ep", "8")
    assert code == 0
    assert "parallelism  TP 1 x PP 1 x DP 8 = 8 GPU(s), experts EP 8 within DP" in text
    # without --gpus the job has EP data-parallel ranks
    assert estimate_json(QWEN_MOE, "--train", "full", "--ep", "4")["training"]["data_parallel"] == 4
    code, _ = run_estimate(QWEN_MOE, "--train", "full", "--gpus", "8", "--ep", "16")
    assert code == 1
    assert "--ep 16 must divide the data-parallel size 8" in capsys.readouterr().err


def test_size_training_takes_ep_from_the_setup_only() -> None:
    arch = parse_architecture(catalog.find_model(QWEN_MOE).config)
    with pytest.raises(InputError, match=r"TrainingSetup\.expert_parallel"):
        size_training(arch, TrainingSetup(data_parallel=8), Parallelism(1, 1, 8), Constants(), nvlink=True)
    with pytest.raises(InputError, match="must divide the data-parallel size 4"):
        size_training(arch, TrainingSetup(data_parallel=4, expert_parallel=8), Parallelism(), Constants(), nvlink=True)
    dense = parse_architecture(catalog.find_model("llama-3.1-8b").config)
    with pytest.raises(InputError, match="no routed experts"):
        size_training(dense, TrainingSetup(data_parallel=2, expert_parallel=2), Parallelism(), Constants(), nvlink=True)


# --- 6c: KV capacity basis under serving EP ----------------------------------------------------------------------


def test_serving_ep_capacity_is_per_dp_rank_and_matches_the_vllm_log() -> None:
    data = estimate_json(QWEN_MOE, "--ep", "4", "--tp", "2", "--gpu", H100, "--max-num-seqs", "256")
    par, cap, kv = data["parallelism"], data["capacity"], data["kv_cache"]
    assert (par["tp"], par["ep"], par["attention_dp"], par["gpus_per_replica"]) == (2, 4, 2, 4)
    assert par["vllm_flags"] == "--tensor-parallel-size 2 --data-parallel-size 2 --enable-expert-parallel"
    # TP 2 keeps 2 of the 4 KV heads: 48 layers x (K + V) x 2 heads x 128 x 2 B = 49,152 B per token per GPU
    assert kv["bytes_per_token_per_gpu"] == 49_152
    # one GPU's pool: 56,379,386,265 B / 49,152 = 1,147,040.9 tokens -> 71,690 blocks of 16 = 1,147,040 tokens
    assert cap["kv_cache_bytes"] == 56_379_386_265
    # the pool of one attention-DP rank (its TP group of 2 GPUs, each holding half the KV heads): vLLM's log line
    rank_tokens = cap["kv_cache_tokens_per_dp_rank"]
    assert rank_tokens == 1_147_040 == cap["vllm_log"]["gpu_kv_cache_size_tokens"]
    assert rank_tokens * 49_152 <= cap["kv_cache_bytes"] < (rank_tokens + 16) * 49_152
    # 71,690 blocks / (4096 / 16 = 256 blocks per request) = 280.04, as vLLM logs per DP rank
    assert cap["max_concurrency_per_dp_rank"] == 280.04 == cap["vllm_log"]["max_concurrency"]
    # kv_cache_tokens / max_concurrency keep their meaning: the replica, two attention-DP ranks, each its own pool
    assert cap["attention_dp_ranks"] == 2
    assert (cap["kv_cache_tokens"], cap["max_concurrency"]) == (2_294_080, 560.08)
    assert not {"kv_cache_tokens_per_replica", "max_concurrency_per_replica"} & set(cap)


def test_serving_ep_text_shows_the_engine_layout() -> None:
    code, text = run_estimate(QWEN_MOE, "--ep", "4", "--tp", "2", "--gpu", H100, "--max-num-seqs", "256")
    assert code == 0
    assert (
        "parallelism  attention TP 2 x DP 2, experts EP 4 = 4 GPU(s) per replica "
        "(vLLM --tensor-parallel-size 2 --data-parallel-size 2 --enable-expert-parallel)"
    ) in text
    assert (
        "KV capacity  1,147,040 tokens per DP rank (2 GPUs, 52.51 GiB of KV cache on each); "
        "max concurrency 280.04 at 4,096 tokens"
    ) in text
    assert "x 2 attention-DP ranks, each its own pool: 2,294,080 tokens, max concurrency 560.08 per replica" in text
    assert "'GPU KV cache size: 1,147,040 tokens', 'Maximum concurrency: 280.04x'" in text
    # SGLang's layout is the same; the vLLM flags are not printed for it
    _, sglang = run_estimate(QWEN_MOE, "--ep", "4", "--tp", "2", "--gpu", H100, "--max-num-seqs", "256", "--engine", "sglang")
    assert "parallelism  attention TP 2 x DP 2, experts EP 4 = 4 GPU(s) per replica\n" in sglang


# --- 14: concurrency from whole blocks ---------------------------------------------------------------------------

# the figures below are at 256 sequences (vLLM's limit before its H100 default of 1,024, which samples 768 rows more)
LLAMA_70B_FP8 = ("llama-3.3-70b-instruct", "--tp", "2", "--precision", "fp8", "--kv-precision", "fp8", "--gpu", H100,
                 "--max-num-seqs", "256")  # fmt: skip


@pytest.mark.parametrize(
    ("context", "tokens", "concurrency"),
    [
        # 441,520 tokens = 27,595 blocks; a 2,000-token request takes 125: 220.76 (bytes over bytes gave 220.77)
        ("2000", 441_520, 220.76),
        # 441,728 tokens = 27,608 blocks; a 1,000-token request takes ceil(1000 / 16) = 63: 438.22 (not 441.73)
        ("1000", 441_728, 438.22),
    ],
)
def test_max_concurrency_is_whole_blocks_over_blocks_per_request(context: str, tokens: int, concurrency: float) -> None:
    cap = estimate_json(*LLAMA_70B_FP8, "--context", context)["capacity"]
    # one DP rank (TP 2) is the whole replica: both figures are the TP group's pool, as vLLM logs it
    assert cap["kv_cache_tokens"] == cap["kv_cache_tokens_per_dp_rank"] == tokens == cap["vllm_log"]["gpu_kv_cache_size_tokens"]
    assert cap["max_concurrency"] == cap["max_concurrency_per_dp_rank"] == concurrency == cap["vllm_log"]["max_concurrency"]


def test_max_concurrency_text_agrees_with_the_vllm_line() -> None:
    _, text = run_estimate(*LLAMA_70B_FP8, "--context", "2000")
    # 441,520 tokens is the pool of the TP group (2 GPUs, each holding half of every layer's KV heads), not of one GPU
    assert "KV capacity  441,520 tokens per DP rank (2 GPUs, 33.69 GiB of KV cache on each); max concurrency 220.76" in text
    assert "attention-DP ranks" not in text
    assert "'Maximum concurrency: 220.76x'" in text


def test_library_request_gives_the_same_capacity() -> None:
    result = estimate(
        EstimateRequest(
            model="llama-3.3-70b-instruct",
            tp=2,
            precision="fp8",
            kv_precision="fp8",
            context_tokens=2000,
            gpu=H100,
            max_num_seqs=256,
        )
    )
    assert (result["capacity"]["kv_cache_tokens"], result["capacity"]["max_concurrency"]) == (441_520, 220.76)


# --- 12: the parts of a training job's weights -------------------------------------------------------------------


def test_qlora_weight_parts_are_labelled_and_sum_to_the_breakdown() -> None:
    args = ("llama-3.1-8b", "--train", "qlora", "--gpu", "l40s-48gb", "--seq-len", "8192", "--framework", "unsloth")
    data = estimate_json(*args)
    parts = data["memory"]["weight_parts"]
    # adapters: rank 16 x (in + out) per matrix: q, o 8192; k, v 5120; gate, up, down 18,432 -> 81,920 x 16 per layer,
    # x 32 layers = 41,943,040 fp32 parameters = 167,772,160 B; the dequantization buffer is the widest matrix in
    # bf16: 4096 x 14,336 x 2 = 117,440,512 B; the base is the nf4 model on one GPU (weights.bytes_per_gpu)
    assert data["params"]["trainable"] == 41_943_040
    assert parts == {"base": 5_702_295_552, "adapters": 167_772_160, "dequant_buffer": 117_440_512}
    assert parts["base"] == data["weights"]["bytes_per_gpu"]
    assert sum(parts.values()) == data["memory"]["per_gpu"]["weights"] == 5_987_508_224
    _, text = run_estimate(*args)
    assert "    base          5,702,295,552       5.31" in text
    assert "    adapters        167,772,160       0.16" in text
    assert "    dequant         117,440,512       0.11" in text


def test_full_training_autocast_copy_is_its_own_part() -> None:
    data = estimate_json("llama-3.1-8b", "--train", "full", "--optimizer", "adamw-torch-amp")
    # fp32 weights 8,030,261,248 x 4 B and autocast's bf16 copy x 2 B
    assert data["memory"]["weight_parts"] == {"model": 32_121_044_992, "autocast_copy": 16_060_522_496}
    assert data["memory"]["per_gpu"]["weights"] == 48_181_567_488
