"""fix153 item 5: llama-quantize's Q2_K_S, and the _S / _L K-quants among the smaller precisions the offload advice tries.

Q2_K_S as ``llama_tensor_get_type`` (https://github.com/ggml-org/llama.cpp/blob/master/src/llama-quant.cpp) makes it:
Q2_K throughout, ``attn_v`` Q4_K where ``n_gqa() >= 4`` and the first eighth's ``ffn_down`` Q4_K (``i_layer <
n_layer/8``); output Q6_K. llama-quantize's current table repeats Q2_K's size for it ("Q2_K_S : 2.96G, +3.1836 ppl @
Llama-3-8B", QUANT_OPTIONS in tools/quantize/quantize.cpp), so the size oracle is its earlier table, whose LLaMA-v1-7B
column lists each file type it then had ("Q2_K_S : 2.16G, +9.0634 ppl @ LLaMA-v1-7B", "Q3_K_S : 2.75G", "Q5_0 :
4.33G", examples/quantize/quantize.cpp before the tool moved): LLaMA 7B has no GQA, so its attn_v stays Q2_K.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from generator.calculator.model_source import resolve_model
from generator.calculator.offload_report import ALTERNATIVES, alternatives
from generator.sizing.architecture import Linear, parse_architecture
from generator.sizing.gguf_mixture import gguf_model, output_type, tensor_type
from generator.sizing.precision import WEIGHT_FORMATS, weight_format
from generator.sizing.step_down import GGUF_PERPLEXITY_ADDED, quality_note
from generator.sizing.weights import size_weights
from generator.workload.loader import parse_yaml
from generator.workload.schema import validate_document
from tests.helpers import VALID, run_estimate

GIB = 2**30
#: LLaMA-v1-7B (huggyllama/llama-7b's config.json): 32 layers of 4096, ffn 11008, 32 heads, no GQA, vocab 32000.
LLAMA_V1_7B: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32000,
    "max_position_embeddings": 2048, "rms_norm_eps": 1e-6, "tie_word_embeddings": False, "torch_dtype": "float16",
}  # fmt: skip
#: llama-quantize's earlier QUANT_OPTIONS, "G" of LLaMA-v1-7B's file (GiB) for the types whose rules have not changed.
LLAMA_V1_7B_GIB = [("q2_k_s", 2.16), ("q3_k_s", 2.75), ("q3_k_m", 3.07), ("q4_0", 3.56), ("q5_0", 4.33)]


@pytest.mark.parametrize(("precision", "file_gib"), LLAMA_V1_7B_GIB)
def test_llama_7b_sizes_are_llama_quantizes(precision: str, file_gib: float) -> None:
    sized = size_weights(parse_architecture(LLAMA_V1_7B), weight_format(precision)).total_bytes / GIB
    assert sized == pytest.approx(file_gib, rel=0.003)


def test_llama_3_8b_q2_k_s_is_smaller_than_q2_k() -> None:
    """Llama 3 8B (GQA 4): 2.78 GiB, where Q2_K (Q3_K ffn_down and attn_output) is 2.95, the table's 2.96."""
    arch = resolve_model("meta-llama/Llama-3.1-8B").architecture
    q2_k_s = size_weights(arch, weight_format("q2_k_s")).total_bytes / GIB
    q2_k = size_weights(arch, weight_format("q2_k")).total_bytes / GIB
    assert q2_k_s == pytest.approx(2.776, abs=0.002)
    assert q2_k == pytest.approx(2.96, rel=0.005)


def _linear(name: str, out_features: int = 4096) -> Linear:
    return Linear(name, 14336 if name.endswith("down_proj") else 4096, out_features, "dense")


@pytest.mark.parametrize(
    ("config", "name", "by_layer"),
    [
        ("llama3", "self_attn.v_proj", {0: "Q4_K", 31: "Q4_K"}),  # n_gqa() = 4
        ("llama1", "self_attn.v_proj", {0: "Q2_K", 31: "Q2_K"}),  # no GQA: the default
        ("llama3", "mlp.down_proj", {0: "Q4_K", 3: "Q4_K", 4: "Q2_K", 31: "Q2_K"}),  # i_layer < n_layer / 8
        ("llama3", "self_attn.o_proj", {0: "Q2_K", 31: "Q2_K"}),  # Q2_K raises it to Q3_K; Q2_K_S does not
        ("llama3", "self_attn.q_proj", {0: "Q2_K"}),
        ("llama3", "mlp.up_proj", {0: "Q2_K"}),
    ],
)
def test_each_tensors_type(config: str, name: str, by_layer: dict[int, str]) -> None:
    arch = resolve_model("meta-llama/Llama-3.1-8B").architecture if config == "llama3" else parse_architecture(LLAMA_V1_7B)
    model = gguf_model(arch)
    for layer, kind in by_layer.items():
        assert tensor_type("Q2_K_S", _linear(name), layer, 32, model) == kind, (name, layer)
    assert output_type("Q2_K_S", 4096) == "Q6_K"


def test_a_70b_raises_attn_v_to_q5_k() -> None:
    """LLM_TYPE_70B: the Q4_K attn_v goes to Q5_K."""
    model = gguf_model(resolve_model("meta-llama/Llama-3.1-70B-Instruct").architecture)
    assert tensor_type("Q2_K_S", Linear("self_attn.v_proj", 8192, 1024, "dense"), 40, 80, model) == "Q5_K"


def test_the_estimate_and_a_workload_take_it() -> None:
    code, text = run_estimate("meta-llama/Llama-3.1-8B", "--gpu", "rtx-4090-24gb", "--precision", "q2_k_s", "--json")
    assert code == 0, text
    data = json.loads(text)
    assert data["precision"]["weights"] == "q2_k_s"
    assert (
        data["weights"]["bytes"]
        == size_weights(resolve_model("meta-llama/Llama-3.1-8B").architecture, weight_format("q2_k_s")).total_bytes
    )
    rps = "      requests_per_second: 2\n"
    validate_document(parse_yaml(VALID.replace(rps, f"{rps}      precision: q2_k_s\n"), "workload.yaml"))


def test_its_quality_note_quotes_llama_quantizes_table() -> None:
    assert quality_note("q2_k_s").startswith(" (q2_k_s adds 3.18 to Llama-3-8B's perplexity in llama-quantize's table")


# --- the smaller precisions the offload advice tries ------------------------------------------------------------------


def test_every_k_quant_not_dominated_is_an_alternative() -> None:
    """Each GGUF type with a figure in llama-quantize's table is tried unless another tried type holds Llama 3 8B in
    fewer bytes and adds less perplexity (the legacy Q4_1, Q5_0, Q5_1: never the better choice)."""
    arch = resolve_model("meta-llama/Llama-3.1-8B").architecture
    size = {name: size_weights(arch, WEIGHT_FORMATS[name]).total_bytes for name in GGUF_PERPLEXITY_ADDED}
    tried = {name for name in ALTERNATIVES if name in GGUF_PERPLEXITY_ADDED}

    def dominated(name: str) -> bool:
        return any(size[other] <= size[name] and GGUF_PERPLEXITY_ADDED[other] < GGUF_PERPLEXITY_ADDED[name] for other in tried)

    assert {name for name in GGUF_PERPLEXITY_ADDED if not dominated(name)} <= tried
    assert {"q4_k_s", "q5_k_s", "q3_k_l", "q3_k_s", "q2_k_s"} <= tried
    assert {name for name in ("q4_1", "q5_0", "q5_1") if dominated(name)} == {"q4_1", "q5_0", "q5_1"}
    assert all(WEIGHT_FORMATS[name] in alternatives() for name in tried)


def test_the_largest_type_that_fits_whole_is_advised_a_new_one_where_it_is() -> None:
    """Llama 3.1 8B q8_0 on a 12 GB RTX 3060 at 65,536 tokens offloads; q3_k_s (3.41 GiB) is the largest tried type
    that fits the card whole with that cache, where iq3_xs (3.27 GiB) was named before (q3_k_s was not tried)."""
    args = ["meta-llama/Llama-3.1-8B", "--precision", "q8_0", "--gpu", "rtx-3060-12gb", "--ram-gib", "64"]
    args += ["--cpu", "ryzen-9-7950x", "--context", "65536"]
    code, text = run_estimate(*args, "--json")
    assert code == 0, text
    advice = [f["message"] for f in json.loads(text)["findings"] if f["code"] == "quantize-instead"]
    assert len(advice) == 1 and advice[0].startswith("at q3_k_s (3.41 GiB of weights) the model would fit entirely"), advice
