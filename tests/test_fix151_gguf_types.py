"""llama-quantize's other file types and its aliases (fix151; newuser86 left them out).

``--precision q4_k`` (llama-quantize's alias for Q4_K_M) and ``q4_k_s``, ``q5_k_s``, ``q3_k_s``, ``q3_k_l``, ``q4_1``,
``q5_0``, ``q5_1`` were "unknown precision" (exit 1). Each file type is now its mixture as ``llama_tensor_get_type``
(https://github.com/ggml-org/llama.cpp/blob/master/src/llama-quant.cpp) chooses it, checked against llama-quantize's
own file sizes for Llama-3-8B (QUANT_OPTIONS in https://github.com/ggml-org/llama.cpp/blob/master/tools/quantize/
quantize.cpp, read at commit 03161a4e: "Q4_K_S : 4.37G, +0.2689 ppl @ Llama-3-8B", ...). Q2_K_S is left out: the table
gives it Q2_K's 2.96G while its rules (Q2_K ffn_down and attn_output where Q2_K has Q3_K) make a file 6% smaller.
"""

from __future__ import annotations

from typing import Any

import pytest

from generator.calculator.model_source import resolve_model
from generator.sizing.architecture import Linear
from generator.sizing.gguf_mixture import gguf_model, output_type, tensor_type
from generator.sizing.precision import WEIGHT_FORMAT_ALIASES, WEIGHT_FORMATS, alias_note, weight_format
from generator.sizing.weights import size_weights
from generator.workload.loader import parse_yaml
from generator.workload.schema import validate_document
from tests.helpers import VALID, run_estimate

GIB = 2**30
LLAMA3_8B = "meta-llama/Llama-3.1-8B"  # Llama 3 8B's shapes

#: llama-quantize's QUANT_OPTIONS: file type, "G" of Llama-3-8B's file (GiB; the file holds its tokenizer too).
LLAMA_QUANTIZE_GIB = [("q3_k_s", 3.41), ("q3_k_l", 4.03), ("q4_k_s", 4.37), ("q4_1", 4.78), ("q5_0", 5.21),
                      ("q5_1", 5.65), ("q5_k_s", 5.21), ("q4_k", 4.58), ("q3_k", 3.74), ("q5_k", 5.33)]  # fmt: skip


@pytest.mark.parametrize(("precision", "file_gib"), LLAMA_QUANTIZE_GIB)
def test_sizes_are_llama_quantizes(precision: str, file_gib: float) -> None:
    sized = size_weights(resolve_model(LLAMA3_8B).architecture, weight_format(precision)).total_bytes / GIB
    assert sized == pytest.approx(file_gib, rel=0.005)
    assert sized < file_gib + 0.005  # the file holds its metadata besides the tensors (the table rounds to 0.01)


def _linear(name: str) -> Linear:
    """A Llama 3 8B matrix (4096 wide; ffn_down 14336)."""
    return Linear(name, 14336 if name.endswith("down_proj") else 4096, 4096, "dense")


# (file type, tensor, layer -> its type in Llama 3 8B's 32 layers): llama_tensor_get_type's raises.
MIXTURES = [
    ("Q4_K_S", "self_attn.v_proj", {0: "Q5_K", 3: "Q5_K", 4: "Q4_K", 31: "Q4_K"}),  # i_attention_wv < 4
    ("Q4_K_S", "mlp.down_proj", {0: "Q5_K", 3: "Q5_K", 4: "Q4_K", 31: "Q4_K"}),  # i_layer < n_layer / 8
    ("Q4_K_S", "self_attn.o_proj", {0: "Q4_K", 31: "Q4_K"}),
    ("Q3_K_L", "self_attn.v_proj", {0: "Q5_K", 16: "Q5_K"}),
    ("Q3_K_L", "mlp.down_proj", {0: "Q5_K", 16: "Q5_K"}),
    ("Q3_K_L", "self_attn.o_proj", {0: "Q5_K", 16: "Q5_K"}),
    ("Q3_K_L", "self_attn.q_proj", {0: "Q3_K", 16: "Q3_K"}),
    ("Q3_K_S", "self_attn.v_proj", {0: "Q3_K", 16: "Q3_K"}),
    ("Q3_K_S", "mlp.down_proj", {0: "Q3_K", 16: "Q3_K"}),
    ("Q5_K_S", "self_attn.v_proj", {0: "Q5_K", 31: "Q5_K"}),
    ("Q5_K_S", "mlp.down_proj", {0: "Q5_K", 31: "Q5_K"}),
    ("Q5_0", "mlp.down_proj", {0: "Q5_0", 31: "Q5_0"}),  # Q5_1 only with an importance matrix
    ("Q4_1", "self_attn.v_proj", {0: "Q4_1"}),
]


@pytest.mark.parametrize(("ftype", "name", "by_layer"), MIXTURES)
def test_each_tensors_type(ftype: str, name: str, by_layer: dict[int, str]) -> None:
    model = gguf_model(resolve_model(LLAMA3_8B).architecture)
    for layer, kind in by_layer.items():
        assert tensor_type(ftype, _linear(name), layer, 32, model) == kind, (ftype, name, layer)


@pytest.mark.parametrize("ftype", ["Q3_K_S", "Q3_K_L", "Q4_K_S", "Q5_K_S", "Q4_1", "Q5_0", "Q5_1"])
def test_the_output_tensor_is_q6_k(ftype: str) -> None:
    assert output_type(ftype, 4096) == "Q6_K"


def test_a_70b_raises_q3_k_s_attn_v_to_q5_k() -> None:
    """LLM_TYPE_70B: attn_v of Q3_K / Q4_K goes to Q5_K (Llama 3.1 70B: 80 layers, GQA)."""
    model = gguf_model(resolve_model("meta-llama/Llama-3.1-70B-Instruct").architecture)
    assert model.is_70b
    v = Linear("self_attn.v_proj", 8192, 1024, "dense")
    assert tensor_type("Q3_K_S", v, 40, 80, model) == "Q5_K"
    assert tensor_type("Q4_K_S", v, 40, 80, model) == "Q5_K"


@pytest.mark.parametrize(("alias", "canonical"), [("q3_k", "q3_k_m"), ("q4_k", "q4_k_m"), ("Q5_K", "q5_k_m")])
def test_llama_quantize_aliases_are_their_mixture(alias: str, canonical: str) -> None:
    assert weight_format(alias) is WEIGHT_FORMATS[canonical]
    assert alias_note(alias) == f"precision {alias} is llama-quantize's name for {canonical}: sized and shown as {canonical}"


def _estimate(*args: str) -> tuple[int, dict[str, Any]]:
    import json

    code, text = run_estimate(*args, "--json")
    return code, dict(json.loads(text))


def test_the_estimate_takes_q4_k_and_says_what_it_is() -> None:
    base = ("meta-llama/Llama-3.1-8B", "--gpu", "rtx-4090-24gb", "--context", "8192")
    code, aliased = _estimate(*base, "--precision", "q4_k")
    assert code == 0
    _, canonical = _estimate(*base, "--precision", "q4_k_m")
    assert aliased["precision"]["weights"] == "q4_k_m"
    assert aliased["weights"]["bytes"] == canonical["weights"]["bytes"]
    assert "precision q4_k is llama-quantize's name for q4_k_m: sized and shown as q4_k_m" in aliased["notes"]
    assert not any("llama-quantize's name" in n for n in canonical["notes"])


@pytest.mark.parametrize("precision", ["q4_k_s", "q3_k_l", "q5_0"])
def test_the_estimate_takes_the_new_types(precision: str) -> None:
    code, data = _estimate("meta-llama/Llama-3.1-8B", "--gpu", "rtx-4090-24gb", "--precision", precision, "--context", "8192")
    assert code == 0 and data["precision"]["weights"] == precision and data["capacity"]["fits"]


@pytest.mark.parametrize("name", ["q4_k", "q4_k_s", "q3_k_l", "q5_1"])
def test_a_workload_takes_them(name: str) -> None:
    rps = "      requests_per_second: 2\n"
    assert rps in VALID
    validate_document(parse_yaml(VALID.replace(rps, f"{rps}      precision: {name}\n"), "workload.yaml"))


def test_the_aliases_name_formats() -> None:
    assert all(target in WEIGHT_FORMATS for target in WEIGHT_FORMAT_ALIASES.values())
