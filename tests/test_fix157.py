"""fix157: the quick estimate's usable share under TensorRT-LLM's KV budget (item 2) and llama.cpp's context limit of
a RoPE-scaled model (item 3)."""

from __future__ import annotations

from typing import Any

import pytest

from generator.sizing.context_limit import llama_cpp_rope
from tests.conftest import REPO
from tests.helpers import estimate_json, run_estimate

L4 = ("llama-3.1-8b", "--gpu", "l4-24gb")


def test_the_usable_basis_names_tensorrt_llms_budget_when_the_constant_sets_it() -> None:
    """Item 2: under ``--set kv_budget_of_free_memory=1`` the capacity is TensorRT-LLM's free_gpu_memory_fraction 0.9
    of what the weights, activations and overhead leave free, but the verdict said "usable at vLLM's
    --gpu-memory-utilization 0.9" and 0.9 of the GPU. L4 (23,583,522,816 bytes), Llama 3.1 8B bf16: held
    16,060,522,496 + 936,116,224 + 1,352,663,040 = 18,349,301,760; usable 0.9 x 23,583,522,816 + 0.1 x held =
    23,060,100,710 bytes (vLLM's: 21,225,170,534)."""
    vllm = estimate_json(*L4)["capacity"]
    assert vllm["usable_basis"] == "vLLM's --gpu-memory-utilization 0.9"
    trt = estimate_json(*L4, "--set", "kv_budget_of_free_memory=1")
    cap, per_gpu = trt["capacity"], trt["memory"]["per_gpu"]
    assert "vLLM" not in cap["usable_basis"]
    assert cap["usable_basis"].startswith("TensorRT-LLM's free_gpu_memory_fraction 0.9 of the memory")
    held = per_gpu["weights"] + per_gpu["activations"] + per_gpu["overhead"]
    assert cap["usable_bytes"] == int(cap["gpu_memory_bytes"] * 0.9 + held * 0.1)
    assert (cap["usable_bytes"], vllm["usable_bytes"]) == (23_060_100_710, 21_225_170_534)
    _, text = run_estimate(*L4, "--set", "kv_budget_of_free_memory=1")
    assert "usable at TensorRT-LLM's free_gpu_memory_fraction 0.9" in text


# --- item 3: llama.cpp's limit of a RoPE-scaled model ---------------------------------------------------------------

#: Qwen2.5-7B-Instruct's config as the catalog holds it (max_position_embeddings 32,768) with the YaRN block its model
#: card documents for 128k (factor 4 from 32,768): https://huggingface.co/Qwen/Qwen2.5-7B-Instruct#processing-long-texts
YARN = str(REPO / "tests" / "data" / "fix157" / "qwen2.5-7b-yarn")
#: fix163: with the context_length override of its GGUF architecture (qwen2)
FLAGS = "--rope-scaling yarn --rope-scale 4 --yarn-orig-ctx 32768 --override-kv qwen2.context_length=int:131072 -c 65536"


def _notes(*args: str) -> list[str]:
    notes: list[str] = estimate_json(YARN, "--context", "65536", *args)["notes"]
    return notes


def test_a_llama_cpp_estimate_past_the_ggufs_context_length_names_the_cap_and_the_yarn_flags() -> None:
    """Item 3: vLLM serves 131,072 tokens (32,768 x 4), but llama-server caps a slot at the GGUF's context_length,
    32,768 (n_ctx_train), unless started with the YaRN flags (llama.cpp PR #28030 re-adjusts n_ctx_train to
    --yarn-orig-ctx x --rope-scale). The estimate sized 65,536 tokens in silence."""
    cpu_only = [n for n in _notes("--ram-gib", "64", "--precision", "q4_k_m") if "context_length" in n]
    assert len(cpu_only) == 1
    assert "past the GGUF's context_length 32,768" in cpu_only[0] and "131,072 tokens" in cpu_only[0]
    assert f"start llama-server with {FLAGS} " in cpu_only[0]
    assert "its --override-kv sets the GGUF's context_length, which llama-server caps a slot at, to 131,072" in cpu_only[0]
    # with a GPU and the rest in RAM, llama.cpp too
    assert any(FLAGS in n for n in _notes("--gpu", "rtx-4090-24gb", "--ram-gib", "64", "--precision", "q4_k_m"))


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("--gpu", "h100-sxm5-80gb"), id="vllm"),  # vLLM takes the config's rope_scaling: its path unchanged
        pytest.param(("--ram-gib", "64", "--precision", "q4_k_m", "--offload-engine", "ik_llama.cpp"), id="ik_llama"),
    ],
)
def test_no_llama_cpp_rope_note_where_llama_server_does_not_cap(args: tuple[str, ...]) -> None:
    assert not any("context_length" in n for n in _notes(*args))


def test_within_the_ggufs_context_length_there_is_no_note() -> None:
    notes: list[str] = estimate_json(YARN, "--context", "32768", "--ram-gib", "64", "--precision", "q4_k_m")["notes"]
    assert not any("context_length" in n for n in notes)


@pytest.mark.parametrize(
    ("rope", "expected"),
    [
        (
            {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
            (40960, 131072, "--rope-scaling yarn --rope-scale 4 --yarn-orig-ctx 32768"),
        ),
        ({"type": "linear", "factor": 2.0}, (40960, 81920, "--rope-scaling linear --rope-scale 2")),
        ({"rope_type": "dynamic", "factor": 2.0}, (40960, 81920, "")),
        ({"rope_type": "llama3", "factor": 8.0}, None),  # max_position_embeddings is already the stretched length
        (None, None),
    ],
)
def test_llama_cpp_rope_table(rope: dict[str, Any] | None, expected: tuple[int, int, str] | None) -> None:
    config: dict[str, Any] = {"max_position_embeddings": 40960, **({"rope_scaling": rope} if rope else {})}
    got = llama_cpp_rope(config, "qwen3")
    if expected is None:
        assert got is None
        return
    assert got is not None and (got.context_length, got.scaled_tokens) == expected[:2]
    assert expected[2] in got.flags if expected[2] else got.flags == ""
