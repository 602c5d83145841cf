"""``size_weights`` sums identical layers as one value times a count: the same exact result as adding them one by one."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.calculator.model_source import resolve_model
from generator.sizing import weights
from generator.sizing.precision import weight_format
from generator.sizing.weights import Parallelism, size_weights, stage_layers

FRACTIONS = st.fractions(min_value=0, max_value=10**12, max_denominator=64)


@settings(max_examples=200, derandomize=True, database=None)
@given(values=st.lists(FRACTIONS, min_size=1, max_size=6), picks=st.lists(st.integers(0, 5), max_size=120))
def test_counted_sum_is_the_plain_sum(values: list[Fraction], picks: list[int]) -> None:
    kind_of = [p % len(values) for p in picks]
    assert weights._counted_sum(kind_of, values) == sum((values[k] for k in kind_of), Fraction(0))


@pytest.mark.parametrize("model", ["meta-llama/Llama-3.1-70B-Instruct", "Qwen/Qwen3-30B-A3B", "google/gemma-2-9b-it"])
@pytest.mark.parametrize("precision", ["bf16", "fp8", "int4"])
@pytest.mark.parametrize("par", [Parallelism(), Parallelism(tp=2, pp=3), Parallelism(tp=4, pp=2)], ids=str)
def test_sizes_equal_the_layer_by_layer_sums(model: str, precision: str, par: Parallelism) -> None:
    arch = resolve_model(model).architecture
    fmt = weight_format(precision)
    bits = [weights._layer_bits(fmt, arch, layer, par) for layer in arch.layers]
    sizes = size_weights(arch, fmt, par)
    assert sizes.layer_bytes == tuple(math.ceil(b[0] / 8) for b in bits)
    assert sizes.layer_expert_bytes == tuple(math.ceil(b[2] / 8) for b in bits)
    assert sizes.expert_bytes == math.ceil(sum((b[2] for b in bits), Fraction(0)) / 8)
    embedding = fmt.embedding_bits(arch.hidden_size, tied=arch.tie_word_embeddings)
    embed = arch.embedding_params * weights._top_bits(arch, fmt, "model.embed_tokens", embedding)
    head = arch.lm_head_params * weights._top_bits(arch, fmt, "lm_head", fmt.lm_head_bits(arch.hidden_size))
    other = arch.other_params * fmt.other_bits() + arch.vision_params * 16
    assert sizes.total_bytes == math.ceil((sum((b[0] for b in bits), Fraction(0)) + embed + head + other) / 8)
    stages = [sum((bits[i][1] for i in r), Fraction(0)) for r in stage_layers(arch.num_layers, par.pp)]
    stages[0] += embed / par.tp + arch.vision_params * 16
    tied = embed / par.tp if arch.tie_word_embeddings and par.pp > 1 else 0
    stages[-1] += head / par.tp + arch.other_params * fmt.other_bits() + tied
    assert sizes.per_gpu_bytes == math.ceil(max(stages) / 8)


@pytest.mark.parametrize(
    ("model", "par", "table_read"),
    [
        pytest.param("meta-llama/Llama-3.1-70B-Instruct", Parallelism(), False, id="untied: a lookup"),
        pytest.param("meta-llama/Llama-3.1-70B-Instruct", Parallelism(pp=2), False, id="untied, two stages"),
        pytest.param("google/gemma-2-9b-it", Parallelism(), True, id="tied, one stage: the LM head reads it"),
        pytest.param("google/gemma-2-9b-it", Parallelism(pp=2), False, id="tied, two stages: the first copy is a lookup"),
    ],
)
def test_a_forward_streams_the_embedding_table_only_as_the_lm_head(model: str, par: Parallelism, table_read: bool) -> None:
    arch = resolve_model(model).architecture
    sizes = size_weights(arch, weight_format("bf16"), par)
    stages = [sum(sizes.layer_bytes[i] for i in r) for r in stage_layers(arch.num_layers, par.pp)]
    embed, head = sizes.embedding_bytes, sizes.lm_head_bytes
    tied_copy = embed if arch.tie_word_embeddings and par.pp > 1 else 0
    other = arch.other_params * 2  # the final norm, on the last stage
    stages[-1] += head + tied_copy + other
    read = list(stages)
    stages[0] += embed
    read[0] += embed if table_read else 0
    assert (sizes.per_gpu_bytes, sizes.per_gpu_read_bytes) == (max(stages), max(read))


def test_streamed_bytes_leave_out_a_tp_share_of_the_table_and_the_vision_tower() -> None:
    # TP 2: each GPU holds half the untied table and streams none of it; a vision tower (here 1,000,000 bf16
    # parameters on the first stage) is held but run once per image, not per token
    arch = resolve_model("meta-llama/Llama-3.1-70B-Instruct").architecture
    sizes = size_weights(arch, weight_format("bf16"), Parallelism(tp=2))
    assert sizes.per_gpu_bytes - sizes.per_gpu_read_bytes == sizes.embedding_bytes // 2
    with_tower = arch._replace(vision_params=1_000_000)
    towered = size_weights(with_tower, weight_format("bf16"), Parallelism(tp=2))
    assert towered.per_gpu_bytes - sizes.per_gpu_bytes == 2_000_000
    assert towered.per_gpu_read_bytes == sizes.per_gpu_read_bytes
