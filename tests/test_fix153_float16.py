"""fix153 item 4: ``--precision f16`` (llama.cpp's name of fp16) on a GPU follows vLLM's ``--dtype float16`` rules.

vLLM's ``_get_and_verify_dtype`` (vllm/config/model.py; SGLang's model_config.py has the same branch): a float16 run
caches in float16 (``kv_cache_dtype auto`` is the model dtype), a bfloat16 checkpoint is cast with a warning
("Casting torch.bfloat16 to torch.float16."), and the model types of ``_FLOAT16_NOT_SUPPORTED_MODELS`` (Gemma 2 / 3,
GLM-4, PLaMo 2) are refused in float16. ``f16`` was cached in bf16 where ``fp16`` was cached in fp16, and neither said
a bf16 checkpoint is cast.
"""

from __future__ import annotations

import json

import pytest

from generator.sizing.precision import auto_kv_cache_precision, float16_cast_note
from tests.helpers import run_estimate

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"  # torch_dtype bfloat16
CAST = "'Casting torch.bfloat16 to torch.float16.'"


def _estimate(*args: str) -> dict[str, object]:
    code, text = run_estimate(*args, "--json")
    assert code == 0, text
    data: dict[str, object] = json.loads(text)
    return data


@pytest.mark.parametrize(
    ("weights", "kv"),
    [("f16", "fp16"), ("fp16", "fp16"), ("f32", "fp32"), ("fp32", "fp32"), ("bf16", "bf16"), ("q4_k_m", "bf16"), (None, "bf16")],
)
def test_auto_kv_cache_is_the_float_by_any_name(weights: str | None, kv: str) -> None:
    assert auto_kv_cache_precision(weights) == kv


@pytest.mark.parametrize("gpu", ["h100-sxm5-80gb", "v100-sxm2-32gb"])
def test_f16_on_a_gpu_is_fp16_exactly(gpu: str) -> None:
    """The same estimate as fp16 but for the alias's own note: weights, cache and every figure."""
    f16 = _estimate(LLAMA, "--precision", "f16", "--gpu", gpu)
    fp16 = _estimate(LLAMA, "--precision", "fp16", "--gpu", gpu)
    assert f16["precision"] == fp16["precision"] == {"weights": "fp16", "kv_cache": "fp16"}
    notes = f16.pop("notes")
    assert isinstance(notes, list)
    assert [note for note in notes if "llama-quantize's name" not in note] == fp16.pop("notes")
    assert f16 == fp16


def test_a_bf16_checkpoint_in_fp16_warns_as_vllm_logs() -> None:
    notes = _estimate(LLAMA, "--precision", "f16", "--gpu", "h100-sxm5-80gb")["notes"]
    assert isinstance(notes, list)
    cast = [note for note in notes if CAST in note]
    assert len(cast) == 1 and cast[0].startswith("warning: the checkpoint is bfloat16")
    assert "65,504" in cast[0]
    # bf16 as stored: nothing cast
    notes = _estimate(LLAMA, "--precision", "bf16", "--gpu", "h100-sxm5-80gb")["notes"]
    assert isinstance(notes, list) and not any("Casting" in note for note in notes)


def test_a_float16_refused_model_type_says_the_refusal_not_the_cast() -> None:
    """Gemma 2 in float16: vLLM refuses it (``_FLOAT16_NOT_SUPPORTED_MODELS``), so the cast is not what happens."""
    notes = _estimate("google/gemma-2-9b-it", "--precision", "f16", "--gpu", "h100-sxm5-80gb")["notes"]
    assert isinstance(notes, list)
    assert any("vLLM refuses gemma2 in float16" in note for note in notes)
    assert not any("Casting" in note for note in notes)


def test_llama_cpp_runs_f16_without_vllms_warning() -> None:
    """On a machine (--ram-gib) llama.cpp converts to its F16 GGUF: vLLM's cast is not said."""
    notes = _estimate(LLAMA, "--precision", "f16", "--ram-gib", "64", "--cpu", "ryzen-9-7950x")["notes"]
    assert isinstance(notes, list) and not any("Casting" in note for note in notes)


@pytest.mark.parametrize(
    ("stored", "weights", "expected"),
    [
        ("bfloat16", "fp16", "Casting torch.bfloat16 to torch.float16."),
        ("bfloat16", "f16", "Casting torch.bfloat16 to torch.float16."),
        ("float16", "bf16", "Casting torch.float16 to torch.bfloat16."),
        ("half", "bf16", "Casting torch.float16 to torch.bfloat16."),
        ("bfloat16", "bf16", None),
        ("float16", "fp16", None),
        ("float32", "fp16", None),  # vLLM's downcast from float32 is logged at info, not warned
        ("bfloat16", "fp8", None),
        ("bfloat16", "q4_k_m", None),
    ],
)
def test_the_cast_note_is_vllms_warning(stored: str, weights: str, expected: str | None) -> None:
    note = float16_cast_note(stored, weights)
    assert (note is None) if expected is None else (note is not None and expected in note)
