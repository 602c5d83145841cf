"""Qwen3-Next: Gated DeltaNet layers keep a fixed recurrent state per sequence, not KV; vLLM pages it with the KV.

Figures are worked by hand from the shapes in vLLM ``model_executor/layers/mamba/mamba_utils.py``
(``gated_delta_net_state_shape``: conv ``(kernel - 1) x conv_dim / tp``, recurrent ``v_heads / tp x v_dim x k_dim``;
``gated_delta_net_state_dtype``: the model dtype unless ``--mamba-cache-dtype`` says otherwise) and
``model_executor/models/config.py`` (``HybridAttentionMambaModelConfig.verify_and_update_config``: the attention block
is the smallest multiple of 16 tokens whose page holds one state; the state page is padded to it).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from generator.api import plan_file, render_file
from generator.errors import ArchitectureError, InputError
from generator.planner.early import early_checks
from generator.sizing.architecture import FULL, Architecture, parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.kv_cache import size_kv_cache, stage_decode_bits, state_bytes, token_bytes_per_gpu
from generator.sizing.linear_attention import LINEAR, layer_state_bytes
from generator.sizing.memory import Capacity, kv_capacity, size_inference
from generator.sizing.offload import Machine, place
from generator.sizing.precision import weight_format
from generator.sizing.sglang_kv import sglang_capacity
from generator.sizing.training import TrainingSetup, size_training
from generator.sizing.vllm_kv import STATE, pool_groups, request_kv_bytes, vllm_kv_cache
from generator.sizing.weights import Parallelism
from generator.workload import load_workload
from tests.conftest import REPO

CONFIG = REPO / "tests" / "reference" / "configs" / "qwen3-next-80b-a3b" / "config.json"
GIB = 2**30

#: The Hub's safetensors parameter count for Qwen/Qwen3-Next-80B-A3B-Instruct (https://huggingface.co/Qwen/
#: Qwen3-Next-80B-A3B-Instruct, "81.3B params"), as two independent model tables quote it exactly: the checkpoint holds
#: the 48-layer model and its multi-token-prediction layer (mtp.*).
HUB_PARAMS_WITH_MTP = 81_324_862_720

#: One Gated DeltaNet + MoE decoder layer as torchinfo counts transformers' Qwen3NextDecoderLayer built from the
#: release's config (a model dump of Qwen/Qwen3-Next-80B-A3B-Instruct with one layer: "Qwen3NextDecoderLayer: 3-1
#: 1,648,531,648").
TORCHINFO_LINEAR_LAYER = 1_648_531_648

#: One sequence's state in one Gated DeltaNet layer, bf16, TP 1: conv (4 - 1) x (2 x 16 x 128 + 32 x 128) = 24,576
#: elements plus recurrent 32 x 128 x 128 = 524,288 elements, 2 bytes each.
STATE_LAYER_BYTES = (3 * 8192 + 32 * 128 * 128) * 2


@pytest.fixture(scope="module")
def arch() -> Architecture:
    return parse_architecture(json.loads(CONFIG.read_text()))


def test_parameters_are_the_hub_count_less_the_prediction_layer(arch: Architecture) -> None:
    assert arch.params_total == 79_674_391_296
    # 10 of 512 routed experts a token in each of 48 layers: 502 x 3 x 2048 x 512 x 48 skipped
    assert arch.params_active == 79_674_391_296 - 502 * 3 * 2048 * 512 * 48 == 3_874_929_408
    # vLLM qwen3_next_mtp.py: fc (2h -> h), pre_fc_norm_hidden, pre_fc_norm_embedding, one full-attention layer, norm
    full_layer = arch.layers[3]
    mtp = full_layer.params + 2 * 2048 * 2048 + 3 * 2048
    assert arch.params_total + mtp == HUB_PARAMS_WITH_MTP


def test_a_gated_delta_net_layer_has_the_released_shapes(arch: Architecture) -> None:
    layer = arch.layers[0]
    assert layer.params == TORCHINFO_LINEAR_LAYER
    shapes = {lin.name: (lin.in_features, lin.out_features) for lin in layer.linears}
    assert shapes["in_proj_qkvz"] == (2048, 2 * 2048 + 2 * 4096)  # q, k: 16 x 128; v, z: 32 x 128
    assert shapes["in_proj_ba"] == (2048, 64)
    assert shapes["out_proj"] == (4096, 2048)
    assert "q_proj" not in shapes
    # conv1d 8,192 channels x 4 taps, dt_bias and A_log 32 each, the gated norm over 128, two layer norms, shared gate
    assert layer.other_params == 8192 * 4 + 64 + 128 + 2 * 2048


def test_every_fourth_layer_is_gated_full_attention(arch: Architecture) -> None:
    kinds = [layer.attention for layer in arch.layers]
    assert kinds == ([LINEAR] * 3 + [FULL]) * 12
    full = arch.layers[3]
    q_proj = next(lin for lin in full.linears if lin.name == "q_proj")
    assert (q_proj.in_features, q_proj.out_features) == (2048, 2 * 16 * 256)  # the query and its output gate
    assert full.kv_elements_per_token == 2 * 2 * 256 and full.state is None
    assert all(layer.kv_elements_per_token == 0 and layer.state is not None for layer in arch.layers if layer.attention == LINEAR)


@pytest.mark.parametrize(
    ("tp", "layer_bytes"),
    [
        pytest.param(1, STATE_LAYER_BYTES, id="tp1-1097728"),
        pytest.param(2, (3 * 4096 + 16 * 128 * 128) * 2, id="tp2-548864"),
        pytest.param(8, (3 * 1024 + 4 * 128 * 128) * 2, id="tp8-137216"),
    ],
)
def test_state_splits_across_tensor_parallel_ranks(arch: Architecture, tp: int, layer_bytes: int) -> None:
    assert layer_state_bytes(arch.layers[0], tp, 16) == layer_bytes
    assert state_bytes(arch, tp, 1) == (36 * STATE_LAYER_BYTES, (36 * layer_bytes,))


@pytest.mark.parametrize("kv_bits", [pytest.param(16, id="bf16-kv"), pytest.param(8, id="fp8-kv")])
def test_kv_only_in_full_layers_and_the_state_in_the_model_dtype(arch: Architecture, kv_bits: int) -> None:
    kv = size_kv_cache(arch, kv_bits, 32_768, 4)
    assert kv.bytes_per_token == 12 * 2 * 2 * 256 * kv_bits // 8  # 12 layers of 2 KV heads of 256
    assert kv.state_bytes_per_sequence == 36 * STATE_LAYER_BYTES == 39_518_208  # fp8 KV leaves the state in bf16
    assert kv.total_bytes == kv.bytes_per_token * 32_768 * 4 + 4 * 39_518_208
    assert kv.per_gpu_bytes == kv.total_bytes
    assert token_bytes_per_gpu(arch, kv_bits, Parallelism(tp=2)) == 12 * 2 * 256 * kv_bits // 8  # one KV head a rank


def test_a_short_sequence_still_holds_the_whole_state(arch: Architecture) -> None:
    one = size_kv_cache(arch, 16, 1, 1)
    assert one.total_bytes == 24_576 + 39_518_208  # 1,608x the one token's KV


def test_pipeline_stages_each_hold_their_layers_state(arch: Architecture) -> None:
    assert state_bytes(arch, 1, 2) == (39_518_208, (18 * STATE_LAYER_BYTES, 18 * STATE_LAYER_BYTES))
    kv = size_kv_cache(arch, 8, 1000, 2, Parallelism(pp=2))
    assert kv.per_gpu_bytes == 2 * (6 * 1024 * 1000 + 18 * STATE_LAYER_BYTES)


def test_decode_moves_the_state_twice_and_the_kv_once(arch: Architecture) -> None:
    # the recurrent update reads each state and writes it back; the KV of the context is read
    assert stage_decode_bits(arch, 32_768, 8, 1, 1) == 12 * 1024 * 32_768 * 8 + 2 * 8 * 39_518_208


@pytest.mark.parametrize(
    ("kv_bits", "tp", "block", "page", "blocks", "concurrency", "logged"),
    [
        # fp8 KV, TP1: 1 KiB of KV a token; 16 x ceil(1,097,728 / 16,384) = 1,072 tokens, exactly one state (no padding);
        # 60 GiB // (1,097,728 x 12 layers a group) = 4,890 pages; a 32,768-token request takes 31 + 3 state pages
        pytest.param(8, 1, 1072, 1_097_728, 4890, 4890 / 34, 4890 // 4 * 1072, id="fp8-tp1"),
        # bf16 KV, TP2: one 256-wide KV head a rank, 1 KiB a token; 16 x ceil(548,864 / 16,384) = 544 tokens, the
        # state page padded from 548,864 to 557,056 bytes (1.49%); 60 GiB // (557,056 x 12) = 9,637 pages
        pytest.param(16, 2, 544, 557_056, 9637, 9637 / (61 + 3), 9637 // 4 * 544, id="bf16-tp2"),
    ],
)
def test_vllm_raises_the_attention_block_to_hold_a_state_page(
    arch: Architecture, kv_bits: int, tp: int, block: int, page: int, blocks: int, concurrency: float, logged: int
) -> None:
    pool = vllm_kv_cache(arch, kv_bits, 60 * GIB, 32_768, Parallelism(tp=tp))
    assert pool.page_bytes == page == block * 1024
    assert (pool.group_size, pool.groups) == (12, 4)  # 12 full layers in one group, 36 state layers in three
    assert pool.num_blocks == blocks
    assert pool.max_concurrency == pytest.approx(concurrency) == pool.steady_concurrency
    assert pool.logged_tokens == logged
    kinds = {t.kind: (t.layers, t.groups, t.padding_layers) for t in pool.by_layer_type}
    assert kinds == {"full": (12, 1, 0), STATE: (36, 3, 0)}
    assert pool_groups(pool) == (("full", 1, block), (STATE, 3, 1))


def test_vllm_start_check_counts_one_state_page_a_layer(arch: Architecture) -> None:
    # check_enough_kv_cache_memory: 12 full layers x ceil(32,768 / 1,072) = 31 pages + 36 state layers x 1 page
    assert request_kv_bytes(arch, 8, 32_768) == (12 * 31 + 36) * 1_097_728 == 447_873_024


def test_short_sequences_are_bounded_by_their_state_pages() -> None:
    cap = Capacity(0, 0, 0, 0, 0.0, 0, 0.0, 1, rank_pool_blocks=4890, pool_groups=(("full", 1, 1072), (STATE, 3, 1)))
    assert cap.sequences_held(2500) == 4890 // (3 + 3) == 815  # 3 attention pages and 3 state pages each
    assert cap.sequences_held(100) == 4890 // 4  # one attention page: the states bind
    plain = Capacity(0, 0, 0, 1_000_000, 0.0, 1_000_000, 0.0)
    assert plain.sequences_held(2500) == 400  # without a state: KV tokens over tokens a sequence


def test_h200_capacity_is_vllms_hybrid_pool(arch: Architecture) -> None:
    consts = Constants()
    fmt = weight_format("fp8")
    mem = size_inference(arch, fmt, 8, 32_768, 1, Parallelism(), consts, 141 * 10**9, nvlink=False)
    cap = mem.capacity
    assert cap is not None
    pool = vllm_kv_cache(arch, 8, cap.kv_available_bytes, 32_768, Parallelism(), consts.kv_block_tokens)
    assert cap.rank_max_concurrency == pool.steady_concurrency == pool.num_blocks / 34
    assert cap.rank_pool_blocks == pool.num_blocks and cap.pool_groups == pool_groups(pool)
    assert cap == kv_capacity(arch, 8, 32_768, Parallelism(), consts, 141 * 10**9, mem.per_gpu)


def test_another_gated_delta_net_is_refused_naming_the_fields_it_lacks() -> None:
    config: dict[str, object] = {"hidden_size": 4096, "num_hidden_layers": 52, "num_attention_heads": 32}
    config |= {"vocab_size": 131072, "model_type": "qwen3_5_text", "linear_num_value_heads": 32}
    with pytest.raises(ArchitectureError, match=r"keep a fixed recurrent state per sequence .* only for Qwen3-Next"):
        parse_architecture(config)


@pytest.mark.parametrize(
    "config",
    [
        pytest.param({"model_type": "nemotron_h", "hybrid_override_pattern": "M-M-M*-", "mamba_num_heads": 128}, id="nemotron-h"),
        pytest.param({"model_type": "jamba", "attn_layer_period": 8, "mamba_d_state": 16}, id="jamba"),
        pytest.param({"model_type": "falcon_h1", "mamba_d_ssm": 3072, "mamba_n_heads": 24, "mamba_d_state": 256}, id="falcon-h1"),
    ],
)
def test_mamba_hybrids_are_refused_as_mamba(config: dict[str, object]) -> None:
    """newuser71 item 2: a Mamba hybrid was told its config "lacks" Qwen3-Next's Gated DeltaNet fields."""
    base = {"hidden_size": 4096, "num_hidden_layers": 52, "num_attention_heads": 32, "vocab_size": 131072}
    with pytest.raises(ArchitectureError) as refused:
        parse_architecture({**base, **config})
    message = refused.value.message
    assert f"cannot size model_type '{config['model_type']}': it is a Mamba / SSM (state-space) hybrid" in message
    assert "does not size this model's Mamba / SSM hybrid layers yet" in message
    assert "Granite-4.0-H's Mamba-2, model_type granitemoehybrid" in message
    assert "lacks" not in message and "linear_num_key_heads" not in message


def test_sglang_and_llama_cpp_offload_are_refused(arch: Architecture) -> None:
    with pytest.raises(ArchitectureError, match=r"cannot size SGLang's KV pool .* serving with vLLM only"):
        sglang_capacity(arch, 8, 32_768, Parallelism(), 141 * 10**9, 80 * 10**9, 10**9)
    machine = Machine(1, 24 * GIB, 1000.0, 100.0, 32.0, 256 * GIB, 0, 0, 2000 * GIB, 7.0, 80.0)
    with pytest.raises(ArchitectureError, match=r"across GPU, RAM and disk \(llama\.cpp\): .* vLLM only"):
        place(arch, weight_format("q4_k_m"), 16, 4096, machine, Constants())


def test_training_is_refused(arch: Architecture) -> None:
    setup = TrainingSetup(method="lora", sequence_length=4096)
    with pytest.raises(ArchitectureError, match=r"cannot size training of .* serving with vLLM only"):
        size_training(arch, setup, Parallelism(), Constants(), nvlink=False)


@pytest.mark.parametrize(
    ("change", "where", "what"),
    [
        pytest.param(
            lambda w: w.replace("    inference:\n", "    inference:\n      engine: sglang\n"),
            ":11:15: deployments[0].inference.engine",
            "SGLang's KV pool",
            id="sglang",
        ),
        pytest.param(
            lambda w: (
                w[: w.index("    inference:")]
                + "    training:\n      method: qlora\n      sequence_length: 2048\nhardware:"
                + w.split("hardware:", 1)[1]
            ),
            ":11:7: deployments[0].training",
            "training",
            id="training",
        ),
    ],
)
def test_validate_refuses_what_is_not_sized_at_its_field(tmp_path: Path, change: Any, where: str, what: str) -> None:
    workload = tmp_path / "w.yaml"
    workload.write_text(change((REPO / "examples" / "qwen3-next-fp8.yaml").read_text()))
    loaded = load_workload(str(workload))
    with pytest.raises(InputError, match=rf"{re.escape(where)}: deployment 'assistant': cannot .*{what}") as caught:
        early_checks(loaded)
    with pytest.raises(InputError) as planned:
        plan_file(str(workload))
    assert str(planned.value) == str(caught.value)


def test_the_example_serves_qwen3_next_fp8_with_its_state(tmp_path: Path) -> None:
    workload = tmp_path / "qwen3-next-fp8.yaml"
    shutil.copy(REPO / "examples" / "qwen3-next-fp8.yaml", workload)
    _, plan = plan_file(str(workload))
    (deployment,) = plan.deployments
    assert (deployment.params_total, deployment.precision, deployment.kv_cache_precision) == (79_674_391_296, "fp8", "fp8")
    # 2 x TP2 on the 4-GPU server (the rate needs one; newuser46 item 2: the one TP4 the rate needed before, idle-free)
    assert (deployment.tp, deployment.replicas, deployment.pool) == (2, 2, "assistant_h100_sxm5_80gb")
    # one 32,768-token sequence on one of 2 ranks: 12 layers x one 256-wide fp8 KV head (2 heads over 2 ranks) x K and
    # V, plus 36 layers' state at TP2: (3 x 4,096 + 16 x 128 x 128) x 2 bytes
    assert deployment.memory_per_gpu["kv_cache"] == 12 * 2 * 256 * 32_768 + 36 * (3 * 4096 + 16 * 128 * 128) * 2
    assert deployment.details["recurrent_state_bytes_per_sequence"] == 39_518_208


def test_the_rendered_engine_runs_without_prefix_caching(tmp_path: Path) -> None:
    # the pool was sized with one state page a sequence (mamba_cache_mode "none"); vLLM's prefix caching for hybrid
    # models keeps states at block boundaries ("align" / "all"), so the group vars pin it off
    workload = tmp_path / "qwen3-next-fp8.yaml"
    shutil.copy(REPO / "examples" / "qwen3-next-fp8.yaml", workload)
    group_vars = render_file(str(workload))["ansible/group_vars/assistant_h100_sxm5_80gb.yml"]
    assert "enable_prefix_caching: false" in group_vars and "--no-enable-prefix-caching" in group_vars
