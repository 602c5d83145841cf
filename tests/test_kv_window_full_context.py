"""TensorRT-LLM's KV pool of a sliding-window model without ``max_attention_window`` (acc131).

TensorRT-LLM's PyTorch KVCacheManager takes ``[max_seq_len]`` as the attention window of every layer when
``kv_cache_config.max_attention_window`` is None, and pools per window only where
``is_vswa = len(set(self.max_attention_window_vec)) > 1``
(https://github.com/NVIDIA/TensorRT-LLM/blob/main/tensorrt_llm/_torch/pyexecutor/resource_manager.py); gpt-oss's model
code applies its 128-token window in the attention call only. So a sliding layer holds the whole context in the pool.
``kv_window_layers_full_context`` sizes ``kv_capacity`` that way; vLLM and SGLang (the planner's engines) keep 0. The
figures are worked by hand from gpt-oss-120b's config (36 layers, every other one windowed at 128, 8 KV heads of 64).
"""

from __future__ import annotations

from generator.catalog import find_model
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.memory import Capacity, MemoryBreakdown, full_context_layers, kv_capacity
from generator.sizing.weights import Parallelism
from generator.units import GIB
from tests.helpers import estimate_json

GPT_OSS = "openai/gpt-oss-120b"
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


def _capacity(model: str, full_context: int, context_tokens: int = 8192) -> Capacity:
    arch = parse_architecture(find_model(model).config)
    # 80 GiB at 0.9 with 60 GiB of weights held: 12 GiB for the KV cache
    per_gpu = MemoryBreakdown(60 * GIB, 0, 0, 0, 0, 0)
    consts = Constants()._replace(gpu_memory_utilization=0.9, kv_window_layers_full_context=full_context)
    return kv_capacity(arch, 16, context_tokens, Parallelism(tp=1), consts, 80 * GIB, per_gpu)


def test_a_full_context_pool_charges_every_layer_the_whole_context() -> None:
    """36 layers x 2 (K, V) x 8 heads x 64 x 2 bytes = 73,728 bytes a token; 12 GiB hold 174,762.7 tokens, 10,922 whole
    16-token blocks: 174,752 tokens, 21.33 sequences of 8,192 tokens (512 blocks each)."""
    full = _capacity(GPT_OSS, 1)
    assert full.kv_available_bytes == 12 * GIB
    assert full.rank_kv_cache_tokens == 10_922 * 16
    assert full.rank_max_concurrency == 10_922 / 512


def test_the_window_pool_holds_about_twice_the_sequences() -> None:
    """With windows, a sequence of 8,192 tokens takes 18 full layers' 8,192 tokens and 18 windowed layers' 128: 306.7 MB
    against 604.0 MB, so about 1.97x the sequences (vLLM's grouped pool rounds to its pages)."""
    windowed, full = _capacity(GPT_OSS, 0), _capacity(GPT_OSS, 1)
    assert 1.9 < windowed.rank_max_concurrency / full.rank_max_concurrency < 2.0


def test_a_model_without_windows_is_unchanged() -> None:
    arch = parse_architecture(find_model(LLAMA).config)
    assert full_context_layers(arch) is arch
    assert _capacity(LLAMA, 1) == _capacity(LLAMA, 0)


def test_only_the_window_is_dropped() -> None:
    arch = parse_architecture(find_model(GPT_OSS).config)
    full = full_context_layers(arch)
    assert [layer.window_tokens for layer in full.layers] == [None] * 36
    assert [layer._replace(window_tokens=None) for layer in arch.layers] == list(full.layers)


def test_the_estimate_keeps_the_window_pool_unless_set() -> None:
    """The planner's engines size the sliding layers at their window; ``--set`` gives TensorRT-LLM's pool."""
    args = (GPT_OSS, "--gpu", "h200-sxm-141gb", "--context", "32768")
    windowed = estimate_json(*args)["capacity"]
    full = estimate_json(*args, "--set", "kv_window_layers_full_context=1")["capacity"]
    assert full["kv_cache_bytes"] == windowed["kv_cache_bytes"]
    assert 1.9 < windowed["max_concurrency"] / full["max_concurrency"] < 2.0
