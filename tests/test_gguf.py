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
from generator.sizing.kv_cache import size_kv_cache
from generator.sizing.memory import inference_activation_bytes
from generator.sizing.offload import Machine, plan_offload
from generator.sizing.precision import WeightFormat, weight_format
from generator.sizing.weights import Parallelism, size_weights
from tests.helpers import write_sparse_gguf
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
    path: Path,
    types: dict[str, str],
    file_type: int,
    tied: bool = False,
    missing_layers: tuple[int, ...] = (),
    extra_layers: int = 0,
    keys: dict[str, int] | None = None,
) -> int:
    """A GGUF of CONFIG whose tensor ``name`` has ``types[name]`` (default F32); returns its tensor bytes.

    ``tied``: no ``output.weight`` (the embedding is the output projection too); ``missing_layers``: blocks whose
    tensors the file leaves out (a damaged file, or one part of a split one); ``extra_layers``: blocks past block_count;
    ``keys``: config fields whose header keys say other than the tensors hold (a mislabelled file).
    """
    said = CONFIG | (keys or {})
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_block_count(said["num_hidden_layers"])
    writer.add_embedding_length(said["hidden_size"])
    writer.add_feed_forward_length(said["intermediate_size"])
    writer.add_head_count(said["num_attention_heads"])
    writer.add_head_count_kv(said["num_key_value_heads"])
    writer.add_key_length(said["head_dim"])
    writer.add_context_length(said["max_position_embeddings"])
    writer.add_file_type(file_type)
    shapes: dict[str, tuple[int, ...]] = {
        "token_embd.weight": (512, 256),
        "output.weight": (512, 256),
        "output_norm.weight": (256,),
    }
    if tied:
        del shapes["output.weight"]
    for i in (i for i in range(CONFIG["num_hidden_layers"] + extra_layers) if i not in missing_layers):
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
    expected_total = write_gguf(path, types, gguf.LlamaFileType.MOSTLY_TQ1_0)  # a file type specgen has no formula for
    model = resolve_model(str(path))
    arch = model.architecture
    assert arch.file_weights is not None and arch.file_weights.precision == "gguf-tq1_0"
    sizes = size_weights(arch, model_weight_format(arch, "gguf-tq1_0"))
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
        pytest.param(
            {"attention.head_count": ["a", "a"]},
            None,
            "must be a whole number, got ['a', 'a']: its type is array of string",
            id="text-list",
        ),
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
    assert dep.precision == "iq2_m" and dep.model_source == "local GGUF: ./m.gguf"  # its own bytes, not the formula's
    # the file's bytes, not a formula's; llama.cpp keeps the input embedding in system RAM (newuser29 item 13)
    in_ram = dep.details["offload"]["bytes"]["embedding_cpu"] if hardware == "fixed" else 0
    assert dep.memory_per_gpu["weights"] + in_ram == total
    assert in_ram == (nbytes("F32", 512 * 256) if hardware == "fixed" else 0)  # token_embd.weight


def test_a_gguf_without_some_layers_tensors_is_refused(tmp_path: Path) -> None:
    """fuzz17 item 13: a file whose block_count is 8 but holds tensors of blocks 0-5 only was sized as the model (and
    -ngl rendered for it); llama.cpp refuses it ("missing tensor 'blk.6.attn_q.weight'")."""
    path = tmp_path / "part.gguf"
    write_gguf(path, {}, 0, missing_layers=(6, 7))
    with pytest.raises(InputError, match=r"holds no tensor of layer\(s\) 6, 7 of the 8 its llama\.block_count names"):
        resolve_model(str(path))


def test_a_gguf_with_tensors_of_layers_past_its_block_count_is_refused(tmp_path: Path) -> None:
    """fuzz26 L3: the tensors of a layer past block_count were dropped unsaid; llama.cpp refuses such a file."""
    path = tmp_path / "more.gguf"
    write_gguf(path, {}, 0, extra_layers=1)
    with pytest.raises(InputError, match=r"bytes of tensors of layers past the 8 its llama\.block_count names"):
        resolve_model(str(path))


def write_gpt_oss_20b_header(path: Path) -> None:
    """A GGUF of gpt-oss-20b's metadata as llama.cpp's converter writes it (``gpt-oss.*`` keys, the 128-token window
    and no per-layer pattern: https://huggingface.co/openai/gpt-oss-20b/blob/main/config.json), with one small tensor
    a layer's tensors at their shapes, their data a hole."""
    writer = gguf.GGUFWriter(str(path), "gpt-oss")
    writer.add_block_count(24)
    writer.add_embedding_length(2880)
    writer.add_feed_forward_length(2880)
    writer.add_head_count(64)
    writer.add_head_count_kv(8)
    writer.add_key_length(64)
    writer.add_value_length(64)
    writer.add_context_length(131072)
    writer.add_expert_count(32)
    writer.add_expert_used_count(4)
    writer.add_expert_feed_forward_length(2880)
    writer.add_sliding_window(128)
    writer.add_vocab_size(201088)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_K_M)
    h, heads, kv, hd, experts, ff, vocab = 2880, 64, 8, 64, 32, 2880, 201088
    shapes: dict[str, tuple[int, ...]] = {"token_embd.weight": (vocab, h), "output.weight": (vocab, h)}
    for i in range(24):  # numpy order (outer first): llama.cpp's [n_embd, n_head * head_dim] is (heads x 64, 2880)
        blk = f"blk.{i}."
        shapes |= {
            f"{blk}attn_norm.weight": (h,),
            f"{blk}attn_q.weight": (heads * hd, h),
            f"{blk}attn_k.weight": (kv * hd, h),
            f"{blk}attn_v.weight": (kv * hd, h),
            f"{blk}attn_output.weight": (h, heads * hd),
            f"{blk}ffn_gate_inp.weight": (experts, h),
            f"{blk}ffn_gate_exps.weight": (experts, ff, h),
            f"{blk}ffn_up_exps.weight": (experts, ff, h),
            f"{blk}ffn_down_exps.weight": (experts, h, ff),
        }
    write_sparse_gguf(writer, shapes)  # the data a hole: the header's keys and shapes agree (review70 item 20)


def test_a_gpt_oss_gguf_alternates_full_and_sliding_layers_as_llama_cpp_does(tmp_path: Path) -> None:
    """newuser29 item 4: every layer of a gpt-oss GGUF was sized as a 128-token window (KV 6,291,456 B for a 131,072-
    token request). llama.cpp's LLM_ARCH_OPENAI_MOE sets swa_pattern 2 (layers 0, 2, 4... slide), as the Hub config's
    layer_types: 12 full layers x 131,072 tokens + 12 sliding x 128, at 8 KV heads x 64 x (K, V) x 2 bytes = 2,048 B a
    token a layer = 3,224,371,200 B (3.00 GiB), the catalog model's figure."""
    path = tmp_path / "gpt-oss-20b.gguf"
    write_gpt_oss_20b_header(path)
    from_file = resolve_model(str(path)).architecture
    catalog = resolve_model("openai/gpt-oss-20b").architecture
    assert [layer.window_tokens for layer in from_file.layers] == [128, None] * 12
    assert [layer.window_tokens for layer in catalog.layers] == [128, None] * 12
    kv = [size_kv_cache(a, 16, 131072).total_bytes for a in (from_file, catalog)]
    assert kv == [12 * 131072 * 2048 + 12 * 128 * 2048] * 2 == [3_224_371_200] * 2


def test_an_f32_gguf_is_sized_at_its_own_32_bits(tmp_path: Path) -> None:
    """newuser29 item 5: an F32 GGUF (general.file_type ALL_F32) was sized as bf16, half its bytes (a 32.1 GB
    Llama-3.1-8B file planned as 16.06 GB, -ngl 33 on a 24 GB card): llama.cpp keeps F32 tensors F32. The KV cache
    stays llama.cpp's 16-bit default."""
    path = tmp_path / "f32.gguf"
    total = write_gguf(path, {}, gguf.LlamaFileType.ALL_F32)
    params = 2 * 512 * 256 + 8 * sum(r * c for r, c in LAYER.values()) + (8 * 2 + 1) * 256
    assert total == 4 * params == 19_940_352
    result = estimate(EstimateRequest(model=str(path)))
    assert result["precision"] == {"weights": "fp32", "kv_cache": "bf16"}
    assert result["weights"]["bytes"] == total  # was 9,970,176 (bf16)


def write_q4_k_m_workload(tmp_path: Path, inference: str) -> Path:
    write_gguf(tmp_path / "m.gguf", q4_k_m_types(), gguf.LlamaFileType.MOSTLY_Q4_K_M)
    workload = tmp_path / "w.yaml"
    workload.write_text(
        "version: 1\nname: gguf-home\ndeployments:\n  - name: chat\n    model: ./m.gguf\n    inference:\n"
        f"{inference}      max_context_tokens: 2048\n      requests_per_second: 0.1\nhardware:\n  provider: baremetal\n"
        "  fixed:\n    gpu: rtx-4090-24gb\n    gpu_count: 1\n    ram_gib: 32\n    cpu: ryzen-9-7950x\n"
    )
    return workload


@pytest.mark.parametrize(
    ("inference", "where", "message"),
    [
        pytest.param(
            "      precision: q8_0\n",
            r"w\.yaml:7:\d+: deployments\[0\]\.inference\.precision",
            "is a GGUF file of q4_k_m weights, which llama.cpp runs as stored: it cannot be planned at q8_0",
            id="precision",
        ),
        pytest.param(
            "      precision: q4_k_m\n      allowed_precisions: [q2_k]\n",
            r"w\.yaml:8:\d+: deployments\[0\]\.inference\.allowed_precisions\[0\]",
            "a GGUF file is planned only at its own type: drop allowed_precisions",
            id="allowed",
        ),
    ],
)
def test_a_gguf_file_is_planned_only_at_its_own_type(tmp_path: Path, inference: str, where: str, message: str) -> None:
    """newuser29 item 1: allowed_precisions [q2_k] on a Q4_K_M file rendered n_gpu_layers 69 for bytes the file does
    not have (~35 GB of its layers on a 24 GB card), and precision q8_0 planned a 69.82 GiB file that does not exist."""
    from generator.api import plan_file

    workload = write_q4_k_m_workload(tmp_path, inference)
    with pytest.raises(InputError) as caught:
        plan_file(str(workload))
    assert re.search(where, str(caught.value)) and message in str(caught.value)


def test_a_gguf_file_at_its_own_type_plans(tmp_path: Path) -> None:
    from generator.api import plan_file

    _, plan = plan_file(str(write_q4_k_m_workload(tmp_path, "      precision: q4_k_m\n")))
    assert plan.deployments[0].precision == "q4_k_m"


@pytest.mark.parametrize(
    ("request_fields", "message"),
    [
        pytest.param({"precision": "q8_0"}, "--precision q8_0: ", id="precision"),
        pytest.param({"allowed_precisions": ("q2_k",)}, "--allow-precision q2_k: ", id="allowed"),
    ],
)
def test_an_estimate_of_a_gguf_file_is_refused_at_another_type(
    tmp_path: Path, request_fields: dict[str, Any], message: str
) -> None:
    path = tmp_path / "m.gguf"
    write_gguf(path, q4_k_m_types(), gguf.LlamaFileType.MOSTLY_Q4_K_M)
    with pytest.raises(InputError, match=re.escape(message) + r".*GGUF file of q4_k_m weights"):
        estimate(EstimateRequest(model=str(path), gpu="rtx-4090-24gb", **request_fields))
    assert estimate(EstimateRequest(model=str(path), precision="q4_k_m"))["precision"]["weights"] == "q4_k_m"


#: Published gpt-oss GGUF sizes, every type keeping the MXFP4 experts. unsloth/gpt-oss-120b-GGUF files as listed in
#: GiB by https://ailocalcheck.com/model/unsloth/gpt-oss-120b-GGUF (its F16 row, 60.88, is the 65.4 GB the Hub
#: shows); bartowski/openai_gpt-oss-20b-GGUF's Q6_K 12.04 GB (https://huggingface.co/bartowski/openai_gpt-oss-20b-GGUF);
#: ggml-org's own files, llama.cpp's MXFP4_MOE type, in bytes (https://huggingface.co/ggml-org/gpt-oss-120b-GGUF/blob/
#: 238abdd290bb874b90a5da1b4549881b7d05c091/gpt-oss-120b-MXFP4.gguf, 59.02 GiB of tensors in llama-bench's tables, and
#: https://huggingface.co/ggml-org/gpt-oss-20b-GGUF/blob/main/gpt-oss-20b-MXFP4.gguf). A file holds its metadata
#: (the 201,088-token vocabulary, about 13 MB) besides the tensors sized here.
PUBLISHED_GPT_OSS = [
    pytest.param("openai/gpt-oss-120b", "q2_k", 58.27 * 2**30, 62_557_233_408, id="120b-q2_k"),
    pytest.param("openai/gpt-oss-120b", "q4_0", 58.32 * 2**30, 62_606_999_808, id="120b-q4_0"),
    pytest.param("openai/gpt-oss-120b", "q4_k_m", 58.46 * 2**30, 62_755_699_968, id="120b-q4_k_m"),
    pytest.param("openai/gpt-oss-120b", "q6_k", 58.94 * 2**30, 63_271_473_408, id="120b-q6_k"),
    pytest.param("openai/gpt-oss-120b", "q8_0", 59.03 * 2**30, 63_374_323_968, id="120b-q8_0"),
    pytest.param("openai/gpt-oss-120b", "mxfp4_moe", 63_387_346_208, 63_374_323_968, id="120b-mxfp4_moe"),
    pytest.param("openai/gpt-oss-20b", "q6_k", 12.04e9, 12_027_991_296, id="20b-q6_k"),
    pytest.param("openai/gpt-oss-20b", "mxfp4_moe", 12_109_566_624, 12_096_558_336, id="20b-mxfp4_moe"),
]


@pytest.mark.parametrize(("model", "precision", "published", "exact"), PUBLISHED_GPT_OSS)
def test_gpt_oss_at_a_gguf_type_keeps_its_mxfp4_experts(model: str, precision: str, published: float, exact: int) -> None:
    """newuser29 item 2: gpt-oss-120b "Q4_K_M" was sized at 81.76 GiB and "Q8_0" at 115.72 GiB, its experts re-quantized;
    llama.cpp's converter writes them as GGUF MXFP4 and llama-quantize re-quantizes only the other tensors. Within
    0.2% of every published file (0.3% while the routers were sized at the file's type: llama.cpp keeps them F32)."""
    arch = resolve_model(model).architecture
    sizes = size_weights(arch, weight_format(precision))
    experts = sum(lin.weight_params for layer in arch.layers for lin in layer.linears if lin.group == "expert")
    assert sizes.expert_bytes == experts * 17 // 32 + sum(
        lin.bias_params * 4 for layer in arch.layers for lin in layer.linears if lin.group == "expert"
    )  # MXFP4 blocks of 32 weights in 17 bytes, biases F32, whatever the type
    assert sizes.total_bytes == exact
    assert abs(sizes.total_bytes / published - 1) < 0.002


@pytest.mark.parametrize("name", ["ggml-model-q4_0.bin", "model"])
def test_a_gguf_file_of_another_name_is_read_by_its_header(tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """newuser29 item 13: an old ``ggml-model-*.bin`` name was read as a config.json ("... bytes, more than specgen
    reads"); the file's first four bytes (b"GGUF") say what it is, as a bare name in the folder or a path."""
    total = write_gguf(tmp_path / name, {}, gguf.LlamaFileType.ALL_F32)
    monkeypatch.chdir(tmp_path)
    for ref in (name, f"./{name}"):
        files = resolve_model(ref).architecture.file_weights
        assert files is not None and files.total_bytes == total  # the header's tensors, not a config.json


def test_a_folder_of_gguf_files_names_them(tmp_path: Path) -> None:
    """newuser29 item 13: "model config 'gdir' not found (looked for 'gdir/config.json')" for a folder of .gguf files."""
    folder = tmp_path / "gdir"
    folder.mkdir()
    for name in ("m-Q4_K_M.gguf", "m-Q8_0.gguf"):
        write_gguf(folder / name, {}, gguf.LlamaFileType.ALL_F32)
    with pytest.raises(InputError, match=r"is a folder without config.json that holds GGUF file\(s\): 'm-Q4_K_M.gguf', "
                       r"'m-Q8_0.gguf'; give the path of one"):  # fmt: skip
        resolve_model(str(folder))


def test_a_bad_gguf_key_is_named_as_the_key(tmp_path: Path) -> None:
    """newuser29 item 13: a file's ``llama.block_count = 0`` was said as "config field 'num_hidden_layers'"."""
    writer = gguf.GGUFWriter(str(tmp_path / "bad.gguf"), "llama")
    writer.add_block_count(0)
    writer.add_embedding_length(256)
    writer.add_feed_forward_length(512)
    writer.add_head_count(4)
    writer.add_head_count_kv(2)
    writer.add_context_length(4096)
    writer.add_tensor("token_embd.weight", np.zeros((512, 256), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(InputError, match=r"GGUF key 'llama.block_count' \(config field 'num_hidden_layers'\) = 0 is out"):
        resolve_model(str(tmp_path / "bad.gguf"))
