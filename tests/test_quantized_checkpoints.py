"""Pre-quantized checkpoints as vLLM loads them: ignore lists, zero points, group-quantized shards (newuser32 3, 8, 10)."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from generator.catalog import find_model
from generator.sizing.architecture import Architecture, parse_architecture
from generator.sizing.loadability import loadability_problems
from generator.sizing.precision import weight_format
from generator.sizing.quantization import QuantizationConfig, parse_quantization_config
from generator.sizing.weights import Parallelism, size_weights

DATA = Path(__file__).parent / "data" / "quantized"
GIB = 2**30


def _config(name: str) -> dict[str, Any]:
    config: dict[str, Any] = json.loads((DATA / name).read_text(encoding="utf-8"))
    return config


def _with(config: Mapping[str, Any], quantization: dict[str, Any]) -> Architecture:
    cfg = dict(copy.deepcopy(config))
    cfg["quantization_config"] = quantization
    return parse_architecture(cfg)


def _sizes(arch: Architecture, par: Parallelism = Parallelism()) -> tuple[int, int]:
    assert arch.quantization is not None
    sizes = size_weights(arch, weight_format(arch.quantization.precision), par)
    return sizes.total_bytes, sizes.per_gpu_bytes


#: compressed-tensors FP8, one scale per output channel (llm-compressor's FP8_DYNAMIC recipe).
_FP8_CHANNEL = {
    "quant_method": "compressed-tensors",
    "format": "float-quantized",
    "config_groups": {
        "group_0": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "channel", "symmetric": True}}
    },
}


def _w4a16(group: int, symmetric: bool | None, ignore: list[str]) -> dict[str, Any]:
    weights: dict[str, Any] = {"num_bits": 4, "type": "int", "strategy": "group", "group_size": group}
    if symmetric is not None:
        weights["symmetric"] = symmetric
    return {
        "quant_method": "compressed-tensors",
        "format": "pack-quantized",
        "ignore": ignore,
        "config_groups": {"group_0": {"targets": ["Linear"], "weights": weights}},
    }


# --- item 8: ignore lists matched as vLLM matches them ---------------------------------------------------------------

_SCOUT_LAYERS = 48
#: llm-compressor's Llama 4 FP8 recipe keeps attention, routers, the vision tower and the projector BF16.
_SCOUT_RECIPE = ["re:.*lm_head", "re:.*self_attn", "re:.*router", "re:.*vision_model.*", "re:.*multi_modal_projector.*"]
_SCOUT_NAMES = [
    f"language_model.model.layers.{i}.{m}"
    for i in range(_SCOUT_LAYERS)
    for m in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "feed_forward.router")
]


@pytest.mark.parametrize(
    "ignore",
    [
        pytest.param(_SCOUT_RECIPE, id="recipe-regexes-prefix-matched"),
        pytest.param(["language_model.lm_head", *_SCOUT_NAMES], id="checkpoint-names-under-language_model"),
        pytest.param(["lm_head", *[n.removeprefix("language_model.") for n in _SCOUT_NAMES]], id="text-model-names"),
        pytest.param(
            ["lm_head", *[n.replace("language_model.model.", "model.language_model.") for n in _SCOUT_NAMES]],
            id="transformers-4.52-names",
        ),
    ],
)
def test_llama4_scout_fp8_keeps_its_bf16_attention_however_the_ignore_list_names_it(ignore: list[str]) -> None:
    """newuser32 item 8: Llama-4-Scout FP8 (compressed-tensors, per channel) with attention and routers kept BF16 read
    103.89 GiB when the list used the checkpoint's ``language_model.model.layers.N`` names or the recipe's ``re:`` patterns
    (nothing matched: the 48 layers' 3.0 B attention parameters sized at 1 byte), 106.70 GiB only with bare
    ``model.layers.N`` names, which no Llama 4 checkpoint uses. vLLM maps the checkpoint's names onto its modules and
    prefix-matches ``re:`` patterns (``_is_equal_or_regex_match``), so all four lists keep the same modules."""
    arch = _with(_config("llama4-scout-17b-16e-instruct.config.json"), {**_FP8_CHANNEL, "ignore": ignore})
    total, per_gpu = _sizes(arch, Parallelism(tp=2))
    assert (total, per_gpu) == (114_569_991_680, 58_107_745_792)  # 106.70 GiB whole, 54.12 GiB a GPU at TP2
    nothing_kept = _with(_config("llama4-scout-17b-16e-instruct.config.json"), {**_FP8_CHANNEL, "ignore": ["lm_head"]})
    assert _sizes(nothing_kept, Parallelism(tp=2))[0] == 111_552_452_096  # 103.89 GiB: what the misses read
    assert round((total - 111_552_452_096) / GIB, 2) == 2.81


def test_llama4_shared_expert_is_named_as_llama4_names_it() -> None:
    """Llama 4's one shared expert is ``feed_forward.shared_expert`` (transformers ``Llama4TextMoe``, vLLM llama4.py), not
    DeepSeek's ``mlp.shared_experts``: a list naming it so keeps it BF16, the DeepSeek spelling keeps nothing."""
    scout = _config("llama4-scout-17b-16e-instruct.config.json")
    base = _sizes(_with(scout, {**_FP8_CHANNEL, "ignore": ["lm_head"]}))[0]
    llama4 = _sizes(_with(scout, {**_FP8_CHANNEL, "ignore": ["lm_head", "re:.*feed_forward\\.shared_expert\\."]}))[0]
    deepseek = _sizes(_with(scout, {**_FP8_CHANNEL, "ignore": ["lm_head", "re:.*mlp\\.shared_experts\\."]}))[0]
    # 48 shared experts of 3 x 5,120 x 8,192 weights: one more byte each, less one fp32 scale per output row
    shared = 48 * 3 * 5120 * 8192
    assert llama4 - base == shared - 48 * (2 * 8192 + 5120) * 4
    assert deepseek == base


def test_llama_3_1_8b_regex_ignore_prefix_matches_like_vllm() -> None:
    """newuser32 item 8: Llama-3.1-8B FP8 (channel) with ``"ignore": ["lm_head", "re:.*self_attn"]`` read 8.46 GiB (the
    pattern full-matched nothing), 9.71 GiB with the 128 attention modules listed by name; vLLM keeps attention BF16 in
    both (``re.match(".*self_attn", "model.layers.0.self_attn.q_proj")`` matches)."""
    l8 = find_model("meta-llama/Llama-3.1-8B-Instruct").config
    regex = _sizes(_with(l8, {**_FP8_CHANNEL, "ignore": ["lm_head", "re:.*self_attn"]}))[0]
    names = [f"model.layers.{i}.self_attn.{p}_proj" for i in range(32) for p in "qkvo"]
    listed = _sizes(_with(l8, {**_FP8_CHANNEL, "ignore": ["lm_head", *names]}))[0]
    assert regex == listed == 10_427_572_224  # 9.71 GiB, was 9,086,705,664 (8.46 GiB) for the regex
    assert round((regex - 9_086_705_664) / GIB, 2) == 1.25


@pytest.mark.parametrize(
    ("pattern", "name", "kept"),
    [
        ("re:.*self_attn", "model.layers.0.self_attn.q_proj", True),  # re.match: a prefix of the name
        ("re:self_attn", "model.layers.0.self_attn.q_proj", False),  # re.match anchors at the start (not re.search)
        ("re:model\\.layers\\.1\\.", "model.layers.10.mlp.down_proj", False),
        ("model.layers.0.self_attn", "model.layers.0.self_attn.q_proj", True),  # a parent module
        ("lm_head", "language_model.lm_head", False),  # one name; the wrappers are the caller's (checkpoint_names)
    ],
)
def test_keeps_matches_as_vllm(pattern: str, name: str, kept: bool) -> None:
    assert QuantizationConfig("fp8-channel", keep_patterns=(pattern,)).keeps(name) is kept


# --- item 10: a symmetric compressed-tensors scheme stores no zero point ----------------------------------------------


def test_symmetric_w4a16_stores_a_scale_and_no_zero_point_per_group() -> None:
    """newuser32 item 10: Llama-3.1-70B w4a16 (group 128, RedHatAI's ``*-quantized.w4a16`` are symmetric) read 37.04 GiB
    with ``symmetric`` true and false. Symmetric: weight_packed + one 16-bit weight_scale per 128 weights, 4 + 16/128 bits
    (vLLM's CompressedTensorsWNA16 registers weight_zero_point only "if not self.symmetric"); asymmetric adds a packed
    4-bit zero point per group, 4 + 20/128. compressed-tensors' default is symmetric."""
    l70 = find_model("meta-llama/Llama-3.1-70B-Instruct").config
    sym = _sizes(_with(l70, _w4a16(128, True, ["lm_head"])))[0]
    asym = _sizes(_with(l70, _w4a16(128, False, ["lm_head"])))[0]
    default = _sizes(_with(l70, _w4a16(128, None, ["lm_head"])))[0]
    quantized = sum(lin.weight_params for layer in parse_architecture(l70).layers for lin in layer.linears)
    assert asym - sym == quantized * 4 // 128 // 8  # the zero points: 4 bits per group of 128
    assert (round(sym / GIB, 2), round(asym / GIB, 2)) == (36.79, 37.04)
    assert default == sym


def test_kimi_k2_thinking_int4_group_32_without_zero_points() -> None:
    """Kimi-K2-Thinking: compressed-tensors pack-quantized INT4, group 32, symmetric, routed experts only (attention,
    shared experts, the first dense layer and lm_head BF16). 568.16 GiB whole and 72.80 GiB a GPU at TP8 counted a 4-bit
    zero point per 32 weights the checkpoint does not hold (+15.9 GB): 4 + 16/32 = 4.5 bits for 1.015 T expert weights."""
    k2 = _config("kimi-k2-thinking.config.json")
    ignore = ["lm_head", "re:.*self_attn.*", "re:.*shared_experts.*", "re:.*mlp\\.(gate|up|gate_up|down)_proj.*"]
    total, per_gpu = _sizes(_with(k2, _w4a16(32, True, ignore)), Parallelism(tp=8))
    assert (total, per_gpu) == (594_205_259_776, 76_182_501_376)  # 553.40 GiB whole, 70.95 GiB a GPU
    experts = 1_014_686_023_680
    assert _sizes(_with(k2, _w4a16(32, False, ignore)))[0] - total == experts * 4 // 32 // 8


@pytest.mark.parametrize(
    ("weights", "precision", "group", "zero_point"),
    [
        ({"num_bits": 4, "type": "int", "strategy": "group", "group_size": 64, "symmetric": False}, "int4", 64, True),
        ({"num_bits": 4, "type": "int", "strategy": "channel", "symmetric": True}, "int4", 0, False),  # was group 128
        ({"num_bits": 8, "type": "int", "strategy": "group", "group_size": 128, "symmetric": True}, "int8-gptq", 128, False),
        ({"num_bits": 8, "type": "int", "strategy": "channel", "symmetric": True}, "int8", None, True),
    ],
)
def test_compressed_tensors_integer_schemes(weights: dict[str, Any], precision: str, group: int | None, zero_point: bool) -> None:
    quant = parse_quantization_config(
        {"quant_method": "compressed-tensors", "config_groups": {"group_0": {"targets": ["Linear"], "weights": weights}}}
    )
    assert quant is not None
    assert (quant.precision, quant.group_size, quant.zero_point) == (precision, group, zero_point)


@pytest.mark.parametrize("method", [{"quant_method": "gptq", "bits": 4, "sym": True}, {"quant_method": "awq", "bits": 4}])
def test_gptq_and_awq_store_zero_points_even_when_symmetric(method: dict[str, Any]) -> None:
    """GPTQ writes ``qzeros`` whether ``sym`` is true or not, AWQ's GEMM layout always: 4 + 20/128 bits stay."""
    quant = parse_quantization_config({**method, "group_size": 128})
    assert quant is not None and quant.zero_point


# --- item 3: group-quantized shards vLLM refuses ----------------------------------------------------------------------


def _qwen2_72b_awq(group: int = 128) -> Architecture:
    """Qwen2-72B's text config with its unpadded intermediate 29,568, as Qwen2-VL-72B-Instruct-AWQ ships it."""
    cfg = dict(copy.deepcopy(find_model("Qwen/Qwen2.5-72B-Instruct").config))
    assert cfg["intermediate_size"] == 29568
    cfg["quantization_config"] = {"bits": 4, "group_size": group, "quant_method": "awq", "version": "gemm", "zero_point": True}
    return parse_architecture(cfg)


def _qwen3_30b_awq() -> Architecture:
    cfg = dict(copy.deepcopy(find_model("Qwen/Qwen3-30B-A3B").config))
    cfg["quantization_config"] = {"bits": 4, "group_size": 128, "quant_method": "awq", "version": "gemm", "zero_point": True}
    return parse_architecture(cfg)


@pytest.mark.parametrize(
    ("tp", "shard"),
    [pytest.param(1, None, id="tp1-loads"), (2, "14784"), (4, "7392"), (8, "3696")],
)
def test_qwen2_72b_awq_down_proj_shard_must_hold_whole_groups(tp: int, shard: str | None) -> None:
    """QwenLM/Qwen2-VL#231: the 72B GPTQ/AWQ builds fail at TP 2, 4 and 8 with vLLM's Marlin check "Weight
    input_size_per_partition = 14784 is not divisible by group_size = 128" (29,568 / 2 = 115.5 groups); only TP 1 loads.
    specgen accepted all four (newuser32 item 3)."""
    problems = loadability_problems(_qwen2_72b_awq(), weight_format("int4"), Parallelism(tp=tp))
    if shard is None:
        assert problems == ()
    else:
        (problem,) = problems
        assert (
            f"down_proj input width 29568 / TP {tp} = {shard} is not divisible by the checkpoint's quantization group (128)"
            in problem
        )
        assert f'"Weight input_size_per_partition = {shard} is not divisible by group_size = 128"' in problem
        assert problem.endswith("or pipeline parallelism")


def test_per_channel_and_a_16_bit_model_asked_for_int4_have_no_group_to_check() -> None:
    """GPTQ's group -1 (one scale per output row) splits anywhere; a 16-bit model asked for int4 is quantized by whoever
    runs it, with a group that fits (Qwen pads its 72B AWQ/GPTQ builds' intermediate to 29,696)."""
    assert loadability_problems(_qwen2_72b_awq(group=-1), weight_format("int4"), Parallelism(tp=8)) == ()
    bf16 = parse_architecture(find_model("Qwen/Qwen2.5-72B-Instruct").config)
    assert loadability_problems(bf16, weight_format("int4"), Parallelism(tp=8)) == ()


@pytest.mark.parametrize(
    ("tp", "ep", "loads"),
    [(2, 1, True), (4, 1, False), (8, 1, False), (4, 4, True), (8, 8, True)],
)
def test_qwen3_30b_a3b_awq_expert_shards(tp: int, ep: int, loads: bool) -> None:
    """Qwen3-30B-A3B-AWQ (moe_intermediate_size 768, group 128): vllm#17604 "TP=4, 8: ... 'size_k must divisible by
    BLOCK_SIZE_K'", vllm PR #28829 "moe_intermediate_size // group_size = 6, so qwen3-30b-a3b gptq int4 cannot run with
    tp=4 or 8"; 768 / 2 = 384 = 3 groups loads. Expert parallelism keeps each expert whole (vLLM FusedMoE: "In EP, each
    device owns a set of experts fully")."""
    problems = loadability_problems(_qwen3_30b_awq(), weight_format("int4"), Parallelism(tp=tp, ep=ep))
    assert (problems == ()) is loads
    if not loads:
        assert f"experts.down_proj expert intermediate size 768 / TP {tp} = {768 // tp}" in problems[0]
        assert problems[0].endswith("or expert parallelism")


def test_a_down_proj_the_checkpoint_keeps_16_bit_has_no_groups() -> None:
    arch = _qwen2_72b_awq()
    keep = arch.quantization._replace(keep_patterns=("re:.*mlp\\.down_proj",))  # type: ignore[union-attr]
    assert loadability_problems(arch._replace(quantization=keep), weight_format("int4"), Parallelism(tp=2)) == ()


def test_the_planner_splits_an_awq_model_whose_tp_shards_do_not_load_into_pipeline_stages(tmp_path: Path) -> None:
    """newuser32 item 3: Qwen2-72B-class AWQ (intermediate 29,568) on L40S was planned as 3 x TP4 (12 GPUs), a layout
    vLLM refuses at load; pipeline parallelism splits no matrix, so TP1 x PP2 replicas are what loads."""
    from generator.planner import plan_workload
    from generator.workload import load_workload

    cfg = dict(copy.deepcopy(find_model("Qwen/Qwen2.5-72B-Instruct").config))
    cfg["quantization_config"] = {"bits": 4, "group_size": 128, "quant_method": "awq", "version": "gemm", "zero_point": True}
    (tmp_path / "q72awq").mkdir()
    (tmp_path / "q72awq" / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    path = tmp_path / "q72.yaml"
    path.write_text(
        "version: 1\nname: q72\ndeployments:\n  - name: vl72\n    model: ./q72awq/config.json\n    inference:\n"
        "      max_context_tokens: 32768\n      avg_input_tokens: 2000\n      avg_output_tokens: 300\n"
        "      requests_per_second: 2\n      slo: {ttft_p95_ms: 10000, tpot_ms: 200}\n"
        "hardware: {provider: baremetal, gpus: [l40s-48gb]}\nobjective: cost\n",
        encoding="utf-8",
    )
    (dep,) = plan_workload(load_workload(str(path))).deployments
    # TP1 with the layers over pipeline stages: the rate needs 5 x PP2 since the w4a16 entry (its int4 GEMMs dequantize
    # in the main loop: 0.66 of the L40S's BF16 rate once compute-bound, benchmarks/CALIBRATION.md), on 3 servers of 4
    # L40S as 3 x PP4 needs; those hold a sixth PP2 replica, and at one price fewer stages win (newuser46 item 2)
    assert (dep.tp, dep.pp, dep.replicas, dep.details["replicas_past_rate"]) == (1, 2, 6, 1)
