"""A training step's sliding-window layers are timed at the pairs their kernel computes (newuser76 item 2).

Gemma 3 27B: 52 of its 62 layers attend over a 1,024-token window. At 16,384 tokens a window layer's FlashAttention
kernel computes 0.121 of a full causal layer's (query, key) pairs (:func:`attention_layer_equivalents`), so the
step's attention is that of ~16.3 full layers, not 62. Transformers' sdpa (the hf family's default) masks the window
and computes the whole square: those layers count twice.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.catalog import find_gpu, find_model
from generator.planner.training import _step_shape
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.training_mfu import training_utilisation
from generator.workload.models import TrainingSpec
from tests.helpers import call_cli

GEMMA3 = parse_architecture(find_model("google/gemma-3-27b-it").config)
#: A window-1,024 layer's share of a full causal layer's pairs at 16,384 tokens, by hand.
WINDOW_SHARE = (1024 * 1025 / 2 + 15360 * 1024) / 16384 / (16385 / 2)


def _estimate(tmp_path: Path, capsys: pytest.CaptureFixture[str], framework: str) -> dict[str, Any]:
    args: tuple[str, ...] = ("estimate", "google/gemma-3-27b-it", "--train", "qlora", "--framework", framework)
    args += ("--gpu", "rtx-6000-ada-48gb", "--seq-len", "16384", "--lora-rank", "16")
    assert call_cli(tmp_path, (*args, "--gradient-checkpointing", "full", "--json")) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def test_the_planner_counts_gemma3s_window_layers_at_their_pairs() -> None:
    spec = TrainingSpec(method="qlora", framework="unsloth", sequence_length=16384, gradient_checkpointing="full")
    gpu = find_gpu("rtx-6000-ada-48gb")
    shape = _step_shape(GEMMA3, spec, gpu, Constants())
    assert sum(1 for layer in GEMMA3.layers if layer.window_tokens == 1024) == 52
    assert shape["attention_layers"] == pytest.approx(10 + 52 * WINDOW_SHARE)
    args = (GEMMA3.hidden_size, GEMMA3.num_layers, GEMMA3.flop_params, 16384, Constants())
    window = training_utilisation(*args, **shape).compute
    full = training_utilisation(*args, **{**shape, "attention_layers": 62.0}).compute
    # the old count (every layer full) ran the compute 1.43x slower (the step 25.58 s against 18.21 s)
    assert window / full == pytest.approx(24.376 / 17.006, rel=0.01)
    # under Transformers' sdpa the 52 masked layers compute the whole square
    masked = _step_shape(GEMMA3, spec._replace(framework="hf"), gpu, Constants())
    # computes the whole square, at the masked kernel's rate (acc113: training_masked_attention_rate, 0.6 of the flash
    # kernel's, fitted over every training group; 10 + 2 x 52 = 114 layers at the flash rate before)
    rate = Constants().training_masked_attention_rate
    assert rate == 0.6
    assert masked["attention_layers"] == pytest.approx(10 + 2 * 52 / rate) == pytest.approx(183.33, abs=0.01)
    # review77 item 3: without FlashAttention the window layers run masked over the whole square under any framework
    eager = _step_shape(GEMMA3, spec._replace(framework="axolotl", flash_attention=False), gpu, Constants())
    assert eager["attention_layers"] == pytest.approx(10 + 2 * 52 / rate)


def test_the_estimate_times_the_window_unsloths_kernel_takes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    unsloth = _estimate(tmp_path, capsys, "unsloth")["training_speed"]["step_seconds"]
    # 25.581 s when every window layer was timed full; 18.211 s before acc104 counted the GPU's optimizer step; 18.2125 s
    # before acc107 refitted nf4_dequant_bandwidth_efficiency 0.3 -> 0.5 (Unsloth runs fused kernels: no eager term)
    assert unsloth == pytest.approx(17.7309, abs=0.001)
