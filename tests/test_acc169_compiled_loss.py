"""acc169 (issue 9): torchtune's compiled chunked loss holds bf16 logits, never beside a layer's backward.

torchtune's ``compile: True`` compiles each chunk's cross-entropy (``training.compile_loss``): the graph saves its bf16
logits and never materialises their fp32 upcast, and the loss's backward frees them before the last layer is
recomputed. Its LoRA / QLoRA README rows (Llama 3.2 3B, 'Peak Memory Active') peak at the end of forward: the frozen
base, the adapters' states and the bf16 logits (benchmarks/CALIBRATION.md, acc169 entry).
"""

from __future__ import annotations

import math

from generator.catalog import find_model
from generator.sizing.architecture import Architecture, parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.frameworks import COMPILED_CHUNKED_LOGITS_BYTES_PER_ELEMENT, compiles_loss
from generator.sizing.training import (
    TrainingMemory,
    TrainingSetup,
    activation_bytes_per_token_per_layer,
    backward_transient_bytes_per_token,
    size_training,
)
from generator.sizing.weights import Parallelism
from tests.conftest import calibration_report

LLAMA_3B = "meta-llama/Llama-3.2-3B"
SETUP = TrainingSetup(
    method="lora",
    optimizer="adamw-bf16",
    micro_batch_size=2,
    sequence_length=4096,
    checkpointing="full",
    lora_rank=64,
    lora_targets=("q_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"),
    framework="torchtune",
    loss="chunked",
    fused_kernels=True,
)


def _memory(setup: TrainingSetup) -> tuple[Architecture, TrainingMemory]:
    arch = parse_architecture(find_model(LLAMA_3B).config)
    return arch, size_training(arch, setup, Parallelism(), Constants(), nvlink=False)


def test_the_readme_adapter_rows_peak_at_the_end_of_forward() -> None:
    """The 3B LoRA and QLoRA rows of torchtune's 'Optimization flags' table: +25.9% / +49.0% before, within 10% now."""
    report = calibration_report()
    errors = {
        row["method"]: report.predict_training(row) / measured - 1
        for group, _, measured, _, row in report._rows()
        if group == "memory torchtune" and row["model"] == LLAMA_3B and row["method"] != "full"
    }
    assert set(errors) == {"lora", "qlora"}
    assert all(abs(e) < 0.10 for e in errors.values()), errors


def test_the_logits_and_the_recomputed_layer_never_coexist() -> None:
    """The activations are the layer inputs kept plus the larger of the bf16 logits and one layer's backward."""
    arch, memory = _memory(SETUP)
    tokens = SETUP.micro_batch_size * SETUP.sequence_length
    per_layer = activation_bytes_per_token_per_layer(arch, SETUP.sequence_length, True)
    working = per_layer + backward_transient_bytes_per_token(arch)
    assert COMPILED_CHUNKED_LOGITS_BYTES_PER_ELEMENT == 2.25  # the bf16 logits and one of 8 chunks' bf16 gradient
    logits = math.ceil(arch.vocab_size * 2.25)
    assert logits > working  # the 128k vocabulary's logits outweigh a 3B layer's backward
    kept_inputs = arch.num_layers * arch.hidden_size * 2
    assert memory.activation_peak_bytes == tokens * (kept_inputs + logits)
    assert memory.allocator_reserve_bytes == 0  # no fp32 chunk is ever freed into the allocator's cache


def test_eager_a_trained_head_or_another_framework_keep_the_summed_figure() -> None:
    """Without compile, in a full fine-tune (the head's weight gradient forms in the loss's backward) or under a
    framework that does not compile its loss, the figure is the one before: logits beside the layer's backward."""
    _, compiled = _memory(SETUP)
    for other in (
        SETUP._replace(fused_kernels=False),
        SETUP._replace(method="full"),
        SETUP._replace(lora_targets=(*SETUP.lora_targets, "lm_head")),
        SETUP._replace(framework="hf", optimizer="adamw"),
    ):
        _, memory = _memory(other)
        assert memory.activation_peak_bytes > compiled.activation_peak_bytes, other
    assert compiles_loss("torchtune", True, "chunked") and not compiles_loss("torchtune", True, "standard")
    assert not compiles_loss("hf", True, "chunked") and not compiles_loss("torchtune", False, "chunked")
