"""``lora_dropout`` as a user option: the workload field and ``estimate --lora-dropout`` reach the memory model.

PEFT saves each adapted module's dropped-out input (and its mask) for backward when ``lora_dropout``
is above zero (``peft/tuners/lora/layer.py``: ``lora_dropout`` is ``nn.Identity`` at 0, ``nn.Dropout``
otherwise), so a run with dropout needs more activation memory than the same run without.
"""

from __future__ import annotations

import pytest

from generator.calculator.estimate import EstimateRequest, estimate
from generator.catalog import find_model
from generator.errors import InputError
from generator.planner.training import _setup
from generator.sizing.architecture import Architecture, parse_architecture
from generator.sizing.weights import Parallelism
from generator.workload.models import TrainingSpec
from tests.helpers import estimate_json, run_estimate

BASE = ("llama-3.1-8b", "--gpu", "h100-sxm5-80gb", "--train", "lora", "--seq-len", "4096")


def test_dropout_adds_activation_memory_and_is_reported() -> None:
    without = estimate_json(*BASE)
    with_dropout = estimate_json(*BASE, "--lora-dropout", "0.05")
    assert without["training"]["lora_dropout"] == 0.0 and with_dropout["training"]["lora_dropout"] == 0.05
    assert with_dropout["training"]["activation_bytes_per_token"] > without["training"]["activation_bytes_per_token"]
    assert with_dropout["memory"]["per_gpu"]["total"] > without["memory"]["per_gpu"]["total"]


@pytest.mark.parametrize("bad", [-0.1, 1.0, float("nan")])
def test_out_of_range_dropout_is_refused(bad: float) -> None:
    with pytest.raises(InputError, match="--lora-dropout"):
        estimate(EstimateRequest(model="llama-3.1-8b", gpu="h100-sxm5-80gb", train="lora", lora_dropout=bad))


def test_full_training_refuses_the_flag() -> None:
    with pytest.raises(SystemExit) as exc:
        run_estimate("llama-3.1-8b", "--gpu", "h100-sxm5-80gb", "--train", "full", "--lora-dropout", "0.1")
    assert exc.value.code == 2


def _llama_8b() -> Architecture:
    return parse_architecture(find_model("meta-llama/Llama-3.1-8B").config)


def test_workload_field_defaults_to_peft_and_reaches_the_planner() -> None:
    assert TrainingSpec(method="lora").lora_dropout == 0.0
    spec = TrainingSpec(method="lora", lora_dropout=0.05)
    assert _setup(_llama_8b(), spec, zero=0, dp=1, par=Parallelism(1, 1)).lora_dropout == 0.05
