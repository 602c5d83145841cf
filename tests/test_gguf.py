"""Local weights: ``.gguf`` files written with the gguf writer, and model directories with safetensors headers."""

from __future__ import annotations

import json
import re
import struct
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from generator.calculator.estimate import EstimateRequest, estimate
from generator.calculator.model_source import model_weight_format, parse_config, resolve_model
from generator.errors import InputError
from generator.sizing.architecture import Architecture
from generator.sizing.constants import Constants
from generator.sizing.memory import inference_activation_bytes
from generator.sizing.offload import Machine, plan_offload
from generator.sizing.precision import WeightFormat, weight_format
from generator.sizing.weights import Parallelism, size_weights
from tests.hub_server import safetensors_bytes

gguf = pytest.importorskip("gguf")

#: (weights per block, bytes per block) of each ggml type, from the block structs and their
#: static_asserts in ggml/src/ggml-common.h (https://github.com/ggml-org/llama.cpp/blob/master/ggml/src/ggml-common.h).
BLOCK = {
    "F32": (1, 4), "F16": (1, 2), "BF16": (1, 2), "Q8_0": (32, 34), "Q4_0": (32, 18), "Q5_0": (32, 22),
    "Q2_K": (256, 84), "Q3_K": (256, 110), "Q4_K": (256, 144), "Q5_K": (256, 176), "Q6_K": (256, 210),
    "IQ1_S": (256, 50), "IQ1_M": (256, 56), "IQ2_XXS": (256, 66), "IQ2_XS": (256, 74), "IQ2_S": (256, 82),
    "IQ3_XXS": (256, 98), "IQ3_S": (256, 110), "IQ4_NL": (32, 18), "IQ4_XS": (256, 136), "TQ1_0": (256, 54),
    "TQ2_0": (256, 66), "MXFP4": (32, 17),
}  # fmt: skip

#: A small Llama: every matrix's input dimension is a multiple of 256 (the K-quant block).
CONFIG: dict[str, Any] = {
    "model_type": "llama",
    "hidden_size": 256,
    "intermediate_size": 512,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 64,
    "num_hidden_layers": 8,
    "vocab_size": 512,
    "max_position_embeddings": 4096,
    "tie_word_embeddings": False,
}
LAYER = {  # GGUF name -> (rows, cols) as numpy holds them (out, in)
    "attn_q": (256, 256), "attn_k": (128, 256), "attn_v": (128, 256), "attn_output": (256, 256),
    "ffn_gate": (512, 256), "ffn_up": (512, 256), "ffn_down": (256, 512),
}  # fmt: skip


def nbytes(type_name: str, elements: int) -> int:
    per_block, size = BLOCK[type_name]
    assert elements % per_block == 0
    return elements // per_block * size


def write_gguf(
    path: Path, types: dict[str, str], file_type: int, tied: bool = False, missing_layers: tuple[int, ...] = ()
) -> int:
    """A GGUF of CONFIG whose tensor ``name`` has ``types[name]`` (default F32); returns its tensor bytes.

    ``tied``: no ``output.weight`` (the embedding is the output projection too); ``missing_layers``: blocks whose
    tensors the file leaves out (a damaged file, or one part of a split one).
    """
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_block_count(CONFIG["num_hidden_layers"])
    writer.add_embedding_length(CONFIG["hidden_size"])
    writer.add_feed_forward_length(CONFIG["intermediate_size"])
    writer.add_head_count(CONFIG["num_attention_heads"])
    writer.add_head_count_kv(CONFIG["num_key_value_heads"])
    writer.add_key_length(CONFIG["head_dim"])
    writer.add_context_length(CONFIG["max_position_embeddings"])
    writer.add_file_type(file_type)
    shapes: dict[str, tuple[int, ...]] = {
        "token_embd.weight": (512, 256),
        "output.weight": (512, 256),
        "output_norm.weight": (256,),
    }
    if tied:
        del shapes["output.weight"]
    for i in (i for i in range(CONFIG["num_hidden_layers"]) if i not in missing_layers):
        shapes |= {f"blk.{i}.{name}.weight": shape for name, shape in LAYER.items()}
        shapes |= {f"blk.{i}.attn_norm.weight": (256,), f"blk.{i}.ffn_norm.weight": (256,)}
    total = 0
    for name, shape in shapes.items():
        kind = types.get(name, "F32")
        rows, cols = (1, shape[0]) if len(shape) == 1 else shape
        size = nbytes(kind, rows * cols)
        total += size
        qtype = gguf.GGMLQuantizationType[kind]
        if kind == "F32":
            writer.add_tensor(name, np.zeros(shape, dtype=np.float32))
        else:
            writer.add_tensor(name, np.zeros((*shape[:-1], size // rows), dtype=np.uint8), raw_dtype=qtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return total


def use_more_bits(i: int, n: int) -> bool:
    """llama.cpp src/llama-quant.cpp ``use_more_bits``."""
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def q4_k_m_types() -> dict[str, str]:
    """Tensor types llama-quantize gives a Llama with Q4_K_M (llama_tensor_get_type): attn_v and ffn_down
    Q6_K where use_more_bits, output Q6_K, other matrices Q4_K, norms F32."""
    n = CONFIG["num_hidden_layers"]
    types = {"token_embd.weight": "Q4_K", "output.weight": "Q6_K"}
    for i in range(n):
        for name in LAYER:
            more = name in ("attn_v", "ffn_down") and use_more_bits(i, n)
            types[f"blk.{i}.{name}.weight"] = "Q6_K" if more else "Q4_K"
    return types


IQ_TYPES = ["IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ4_NL", "IQ4_XS", "TQ1_0", "TQ2_0", "MXFP4"]
K_TYPES = ["Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q8_0", "Q4_0", "Q5_0", "F16", "BF16"]


def test_every_tensor_type_is_sized_exactly(tmp_path: Path) -> None:
    every = IQ_TYPES + K_TYPES
    types = {}
    for i in range(CONFIG["num_hidden_layers"]):
        for j, name in enumerate(LAYER):
            types[f"blk.{i}.{name}.weight"] = every[(i * len(LAYER) + j) % len(every)]
    types |= {"token_embd.weight": "IQ4_XS", "output.weight": "Q6_K"}
    path = tmp_path / "mixed.gguf"
    expected_total = write_gguf(path, types, gguf.LlamaFileType.MOSTLY_IQ2_M)
    model = resolve_model(str(path))
    arch = model.architecture
    assert arch.file_weights is not None and arch.file_weights.precision == "gguf-iq2_m"
    sizes = size_weights(arch, model_weight_format(arch, "gguf-iq2_m"))
    assert sizes.total_bytes == expected_total
    for i in range(CONFIG["num_hidden_layers"]):
        want = sum(nbytes(types[f"blk.{i}.{n}.weight"], r * c) for n, (r, c) in LAYER.items()) + 2 * 256 * 4
        assert sizes.layer_bytes[i] == want, i
    assert sizes.embedding_bytes == nbytes("IQ4_XS", 512 * 256)
    assert sizes.lm_head_bytes == nbytes("Q6_K", 512 * 256)


def test_architecture_from_gguf_metadata_matches_the_config(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    write_gguf(path, q4_k_m_types(), gguf.LlamaFileType.MOSTLY_Q4_K_M)
    from_file = resolve_model(str(path)).architecture
    from_config = parse_config(CONFIG, "config", None)
    assert from_file._replace(file_weights=None, notes=()) == from_config._replace(notes=())


def half_model_machine(arch: Architecture, fmt: WeightFormat, consts: Constants) -> Machine:
    """A GPU that holds about half the model next to its activations: the rest goes to system RAM."""
    activations = inference_activation_bytes(arch, Parallelism(), consts.offload_ubatch_tokens, 16, consts)
    gpu = activations + size_weights(arch, fmt).total_bytes // 2
    return Machine(1, gpu, 1000.0, 100.0, 25.0, 2**30, 0, 0, 0, 3.5, 60.0)


def test_q4_k_m_gguf_offload_plan_matches_the_config_plan(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    write_gguf(path, q4_k_m_types(), gguf.LlamaFileType.MOSTLY_Q4_K_M)
    from_file = resolve_model(str(path)).architecture
    from_config = parse_config(CONFIG, "config", None)
    fmt = weight_format("q4_k_m")
    assert size_weights(from_file, fmt) == size_weights(from_config, fmt)  # the formula and the file agree to the byte
    consts = Constants(non_torch_bytes=0, runtime_host_bytes=0, safety_margin_fraction=0.0)
    machine = half_model_machine(from_config, fmt, consts)
    plans = [plan_offload(a, [fmt], 16, 256, None, machine, 64, consts) for a in (from_file, from_config)]
    assert plans[0] == plans[1]
    assert plans[0].placement.offloaded and 0 < plans[0].placement.layers_on_gpu < 8


def test_a_tied_embedding_is_quantized_as_the_output_tensor_it_also_is(tmp_path: Path) -> None:
    """newuser13 item 1: llama.cpp gives a tied token_embd the output tensor's type (Q6_K with Q4_K_M); it was sized at
    Q4_K, 5-10% under the published files of Llama 3.2 1B / 3B."""
    path = tmp_path / "tied.gguf"
    types = q4_k_m_types() | {"token_embd.weight": "Q6_K"}
    expected = write_gguf(path, types, gguf.LlamaFileType.MOSTLY_Q4_K_M, tied=True)
    from_config = parse_config({**CONFIG, "tie_word_embeddings": True}, "config", None)
    assert size_weights(from_config, weight_format("q4_k_m")).total_bytes == expected


def test_a_row_no_k_quant_block_divides_takes_llama_cpps_fallback_type() -> None:
    """newuser13 item 1: K-quant blocks span 256 weights of a row; Gemma 3 1B's 1,152-wide rows are stored Q5_0 / Q8_0
    (llama.cpp's convert_incompatible_tensor), 26% more than sized as Q4_K / Q6_K."""
    from generator.sizing.architecture import Linear
    from generator.sizing.precision import GGUF_TYPE_BITS

    fmt = weight_format("q4_k_m")
    gate = Linear("gate_proj", 1152, 6912, "mlp")
    assert fmt.linear_bits(gate, 5, 26) == GGUF_TYPE_BITS["Q5_0"] == Fraction(11, 2)
    assert fmt.linear_bits(gate._replace(in_features=2048), 5, 26) == GGUF_TYPE_BITS["Q4_K"]
    assert fmt.embedding_bits(1152, tied=True) == GGUF_TYPE_BITS["Q8_0"]  # the output's Q6_K, its fallback
    assert fmt.embedding_bits(2048, tied=True) == fmt.lm_head_bits(2048) == GGUF_TYPE_BITS["Q6_K"]
    assert fmt.embedding_bits(2048) == GGUF_TYPE_BITS["Q4_K"]


def test_offload_plan_uses_the_files_real_layer_sizes(tmp_path: Path) -> None:
    types = q4_k_m_types()
    for name in LAYER:  # the last two layers much larger (Q8_0) than the rest
        types[f"blk.6.{name}.weight"] = types[f"blk.7.{name}.weight"] = "Q8_0"
    path = tmp_path / "m.gguf"
    write_gguf(path, types, gguf.LlamaFileType.MOSTLY_Q4_K_M)
    arch = resolve_model(str(path)).architecture
    fmt = weight_format("q4_k_m")
    sizes = size_weights(arch, fmt)
    assert sizes.layer_bytes[7] > sizes.layer_bytes[5] * 1.5
    consts = Constants(non_torch_bytes=0, runtime_host_bytes=0, safety_margin_fraction=0.0)
    machine = half_model_machine(arch, fmt, consts)
    plan = plan_offload(arch, [fmt], 16, 256, None, machine, 64, consts)
    off = [i for i, d in enumerate(plan.placement.layer_devices) if d == "cpu"]
    assert plan.placement.cpu_bytes == sum(sizes.layer_bytes[i] for i in off) + sizes.lm_head_bytes + sizes.other_bytes + (
        sizes.embedding_bytes if plan.placement.embedding_device == "cpu" else 0
    )


def test_estimate_of_a_gguf_reports_its_own_format(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    total = write_gguf(path, q4_k_m_types(), gguf.LlamaFileType.MOSTLY_Q4_K_M)
    result = estimate(EstimateRequest(model=str(path)))
    assert result["precision"]["weights"] == "q4_k_m"
    assert result["weights"]["bytes"] == total
    assert result["weights_from"] == "GGUF tensor table of m.gguf"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param(b"not a gguf file at all", "not a readable GGUF file", id="garbage"),
        pytest.param(None, "not found", id="missing"),
    ],
)
def test_bad_gguf_is_an_input_error(tmp_path: Path, content: bytes | None, message: str) -> None:
    path = tmp_path / "bad.gguf"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        resolve_model(str(path))


def write_crafted_gguf(path: Path, metadata: dict[str, Any], tensors: dict[str, Any] | None = None) -> None:
    """A small llama GGUF whose metadata values may have any type (what a hostile file can hold)."""
    writer = gguf.GGUFWriter(str(path), "llama")
    values = {"block_count": 2, "embedding_length": 64, "feed_forward_length": 128, "attention.head_count": 4,
              "attention.head_count_kv": 4, "context_length": 2048, **metadata}  # fmt: skip
    for key, value in values.items():
        name = f"llama.{key}"
        if isinstance(value, str):
            writer.add_string(name, value)
        elif isinstance(value, float):
            writer.add_float32(name, value)
        elif isinstance(value, list):
            writer.add_array(name, value)
        else:
            writer.add_uint32(name, value)
    for name, array in (tensors or {"token_embd.weight": np.zeros((100, 64), np.float16)}).items():
        writer.add_tensor(name, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


@pytest.mark.parametrize(
    ("metadata", "tensors", "message"),
    [
        pytest.param({"block_count": "abc"}, None, "GGUF key llama.block_count must be a whole number, got 'abc'", id="text"),
        pytest.param({"block_count": float("nan")}, None, "llama.block_count must be a whole number, got nan", id="nan"),
        pytest.param({"block_count": float("inf")}, None, "llama.block_count must be a whole number, got inf", id="inf"),
        pytest.param({"attention.head_count": 4.5}, None, "attention.head_count must be a whole number, got 4.5", id="half"),
        pytest.param({"attention.head_count": ["a", "a"]}, None, "must be a whole number, got 'a'", id="text-list"),
        pytest.param({"expert_count": "x"}, None, "llama.expert_count must be a whole number, got 'x'", id="experts-text"),
        pytest.param(
            {},
            {"token_embd.weight": np.zeros((100,), np.float16)},
            "token_embd.weight has shape [100], not [hidden, vocab]",
            id="vocab-1d",
        ),
    ],
)
def test_crafted_gguf_metadata_is_an_input_error_naming_the_key(
    tmp_path: Path, metadata: dict[str, Any], tensors: dict[str, Any] | None, message: str
) -> None:
    """fuzz10 item 2: int() on any metadata value, and a one-dimensional embedding, gave tracebacks."""
    path = tmp_path / "m.gguf"
    write_crafted_gguf(path, metadata, tensors)
    with pytest.raises(InputError, match=re.escape(message)):
        resolve_model(str(path))


def test_a_gguf_path_that_is_a_directory_is_said_to_be_one(tmp_path: Path) -> None:
    (tmp_path / "x.gguf").mkdir()
    with pytest.raises(InputError, match=r"GGUF file '.*x\.gguf' is a directory"):
        resolve_model(str(tmp_path / "x.gguf"))


def test_a_layer_number_of_thousands_of_digits_is_no_layer(tmp_path: Path) -> None:
    """fuzz10 item 3: int() of a 5,000-digit layer number in a tensor name raised (Python's 4,300-digit limit)."""
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    weights = bf16_tensors()
    weights["model.layers." + "9" * 5000 + ".mlp.weight"] = ("BF16", [1], 2)
    write_safetensors(tmp_path / "model.safetensors", weights)
    arch = resolve_model(str(tmp_path)).architecture
    assert arch.file_weights is not None  # read; the odd tensor counted past every layer
    path = tmp_path / "blk.gguf"
    write_crafted_gguf(path, {}, {"token_embd.weight": np.zeros((100, 64), np.float16),
                                  "blk." + "9" * 5000 + ".attn_q.weight": np.zeros((64, 64), np.float16)})  # fmt: skip
    with pytest.raises(InputError, match="holds no tensor of layer"):  # read (no traceback); its layers have no tensors
        resolve_model(str(path))


def write_safetensors(path: Path, tensors: dict[str, tuple[str, list[int], int]]) -> None:
    header, size = safetensors_bytes(tensors)
    with path.open("wb") as fh:
        fh.write(header)
        fh.truncate(size)


def bf16_tensors() -> dict[str, tuple[str, list[int], int]]:
    from tests.test_hub import hf_tensors

    return hf_tensors(CONFIG)


def test_model_directory_reads_safetensors_headers(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    tensors = bf16_tensors()
    write_safetensors(tmp_path / "model.safetensors", tensors)
    model = resolve_model(str(tmp_path))
    params = model.architecture.params_total
    assert sum(t[2] for t in tensors.values()) == 2 * params
    sizes = size_weights(model.architecture, weight_format("bf16"))
    assert sizes.total_bytes == 2 * params
    assert model.architecture.file_weights is not None


def test_sharded_directory_follows_its_index(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    tensors = bf16_tensors()
    names = sorted(tensors)
    write_safetensors(tmp_path / "a.safetensors", {n: tensors[n] for n in names[:10]})
    write_safetensors(tmp_path / "b.safetensors", {n: tensors[n] for n in names[10:]})
    write_safetensors(tmp_path / "consolidated.safetensors", tensors)  # Mistral's duplicate: not in the index
    weight_map = {n: "a.safetensors" if k < 10 else "b.safetensors" for k, n in enumerate(names)}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    arch = resolve_model(str(tmp_path)).architecture
    assert size_weights(arch, weight_format("bf16")).total_bytes == 2 * arch.params_total


@pytest.mark.parametrize(
    ("info", "message"),
    [
        pytest.param({"dtype": "BF16", "shape": [256, 256], "data_offsets": [0, 0]},
                     "takes 0 bytes, but its shape [256, 256] of BF16 holds 131,072", id="zero-bytes"),
        pytest.param({"dtype": "BF16", "shape": [1], "data_offsets": [0, 10**13]}, "ends at byte 10,000,000,000,000 of a",
                     id="past-the-file"),
        pytest.param({"dtype": "BF16", "shape": [-1], "data_offsets": [0, 2]}, "has invalid shape [-1]", id="negative-dim"),
        pytest.param({"dtype": "BF16", "data_offsets": [0, 2]}, "has invalid shape None", id="no-shape"),
        # fuzz11 item 2: 3,000 dimensions of 2^63 - 1 made a 4,300-digit product (a traceback, and quadratic time)
        pytest.param({"dtype": "BF16", "shape": [2**63 - 1] * 3000, "data_offsets": [0, 2]},
                     "has invalid shape a list of 3,000 items", id="rank-3000"),
        pytest.param({"dtype": "BF16", "shape": [2**41], "data_offsets": [0, 2]}, "has invalid shape [", id="huge-dim"),
        # fuzz11 item 4: a dtype safetensors does not define skipped the check
        pytest.param({"dtype": "Q9", "shape": [1], "data_offsets": [0, 2]}, "has dtype 'Q9', not one safetensors defines",
                     id="unknown-dtype"),
        pytest.param({"dtype": "F4", "shape": [4, 4], "data_offsets": [0, 16]},
                     "takes 16 bytes, but its shape [4, 4] of F4 holds 8", id="f4-packs-two-a-byte"),
    ],
)  # fmt: skip
def test_a_header_claiming_bytes_its_file_or_shape_does_not_hold_is_refused(
    tmp_path: Path, info: dict[str, Any], message: str
) -> None:
    """fuzz10 item 9: one zero-byte tensor got a 141 GB model planned on RTX 4090s; 300 bytes claimed 9,313 GiB."""
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    header = json.dumps({"model.layers.0.self_attn.q_proj.weight": info}).encode()
    (tmp_path / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 16)
    with pytest.raises(InputError, match=re.escape(message)):
        resolve_model(str(tmp_path))


def test_tensors_that_claim_the_same_bytes_are_refused(tmp_path: Path) -> None:
    """fuzz11 item 4: 224 tensors each claiming the whole 1 MiB data section were counted as 224 MiB of weights."""
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    info = {"dtype": "BF16", "shape": [256, 256], "data_offsets": [0, 131072]}
    header = json.dumps({"model.layers.0.mlp.up_proj.weight": info, "model.layers.1.mlp.up_proj.weight": info}).encode()
    (tmp_path / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 131072)
    with pytest.raises(InputError, match="claim the same bytes"):
        resolve_model(str(tmp_path))


def test_files_holding_under_half_the_configs_weights_do_not_size_the_model(tmp_path: Path) -> None:
    """fuzz11 item 4: a file of one 2-byte tensor was taken as the model's weights (0.00 GiB, -100%)."""
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    write_safetensors(tmp_path / "model.safetensors", {"model.layers.0.mlp.up_proj.weight": ("BF16", [1], 2)})
    arch = resolve_model(str(tmp_path)).architecture
    assert arch.file_weights is None
    assert any("weights sized from the config: the checkpoint's files hold 2 bytes" in n for n in arch.notes)


def test_truncated_safetensors_header_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    (tmp_path / "model.safetensors").write_bytes(struct.pack("<Q", 10_000) + b"{}")
    with pytest.raises(InputError, match="not a safetensors file"):
        resolve_model(str(tmp_path))


@pytest.mark.parametrize("hardware", ["fixed", "planned"])
def test_workload_with_a_gguf_model_plans_in_its_own_format(tmp_path: Path, hardware: str) -> None:
    from generator.api import plan_file

    every = ["IQ2_XXS", "IQ2_S", "Q4_K"]
    types = {f"blk.{i}.{n}.weight": every[(i + j) % 3] for i in range(8) for j, n in enumerate(LAYER)}
    total = write_gguf(tmp_path / "m.gguf", types, gguf.LlamaFileType.MOSTLY_IQ2_M)
    where = (
        "  fixed:\n    gpu: rtx-4090-24gb\n    gpu_count: 1\n    ram_gib: 32\n    cpu: ryzen-9-7950x\n"
        if hardware == "fixed"
        else "  gpus: [l4-24gb]\n"
    )
    workload = tmp_path / "w.yaml"
    workload.write_text(
        "version: 1\nname: gguf-home\ndeployments:\n  - name: chat\n    model: ./m.gguf\n    inference:\n"
        "      max_context_tokens: 2048\n      requests_per_second: 0.1\nhardware:\n  provider: baremetal\n" + where
    )
    _, plan = plan_file(str(workload))
    dep = plan.deployments[0]
    assert dep.precision == "gguf-iq2_m" and dep.model_source == "local GGUF: ./m.gguf"
    assert dep.memory_per_gpu["weights"] == total  # the file's bytes, not a formula's


def test_a_gguf_without_some_layers_tensors_is_refused(tmp_path: Path) -> None:
    """fuzz17 item 13: a file whose block_count is 8 but holds tensors of blocks 0-5 only was sized as the model (and
    -ngl rendered for it); llama.cpp refuses it ("missing tensor 'blk.6.attn_q.weight'")."""
    path = tmp_path / "part.gguf"
    write_gguf(path, {}, 0, missing_layers=(6, 7))
    with pytest.raises(InputError, match=r"holds no tensor of layer\(s\) 6, 7 of the 8 its llama\.block_count names"):
        resolve_model(str(path))
