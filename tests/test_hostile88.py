"""hostile88: hostile input to the CLI, each case a bug found this session (the cases that already held are listed in
the report, /work/wt/bugs/hostile88.md).

1. A config.json's ``general.architecture`` key (a GGUF metadata key, which the GGUF reader alone writes into the
   config it forms) was taken as the GGUF architecture and rendered into llama.cpp's ``--override-kv``: unquoted on
   the estimate's line (``--override-kv evil $(touch x) x.context_length=int:32768``), and a name of another model's
   keys set a context_length llama-server never reads. Oracle: the GGUF reader's own files (gguf-py's writer) keep
   their name, and a config.json's line equals the one without the key.
2. A workload text refused by its field's pattern only for its capitals (``kubernetes.zone: US-CENTRAL1-A``, ``name:
   Small-Models-GKE``) read "does not match ^[a-z][a-z0-9-]*$", where ``kubernetes.location: Us-Central1`` reads "is
   written us-central1 (lower case)"; one holding a look-alike (a Cyrillic ``с``, a zero-width space) did not name it,
   as hostile86 names them in ids. Every pattern of the schema is ASCII (a test says so).
3. A GGUF file without ``<arch>.context_length`` was sized at any ``--context``; llama.cpp's loader requires the key
   (``ml.get_key(LLM_KV_CONTEXT_LENGTH, hparams.n_ctx_train)``, required, in ``llama_model::load_hparams``,
   src/llama-model.cpp) and refuses the file. Oracle: gguf-py's writer, the same file with the key sizes.
4. ``detect -o ''`` and ``calibrate ... -o ''`` printed the block to stdout and exited 0, where ``render -o ''`` and
   ``--gitlab-report ''`` are usage errors (fuzz27 L7): the file named was never written.
5. ``estimate --set C=0.1 --set C=0.2`` took the last value without a word (a workload's ``constants:`` refuses a key
   given twice); now a usage error, for calibrate too. The same value twice is still taken.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from generator.sizing.gguf_arch import GGUF_ARCH_KEY, gguf_architecture
from tests.helpers import estimate_json, specgen_in_process

REPO = Path(__file__).resolve().parent.parent

# --- item 1: a config.json's general.architecture ------------------------------------------------------------------

#: A Llama 3 8B-shaped config with YaRN x4 from 8,192 tokens: a 16,384-token context gets llama.cpp's RoPE flags and
#: --override-kv llama.context_length=int:32768.
LLAMA_YARN: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "num_hidden_layers": 32,
    "vocab_size": 128256,
    "max_position_embeddings": 8192,
    "torch_dtype": "bfloat16",
    "rope_theta": 500000.0,
    "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192},
}


def _llama_cpp_line(tmp_path: Path, extra: dict[str, Any]) -> str:
    model = tmp_path / "m"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(LLAMA_YARN | extra))
    est = estimate_json(str(model), "--context", "16384", "--ram-gib", "64", "--precision", "q4_k_m")
    command: str = est["cpu_only"]["command"]
    return command


@pytest.mark.parametrize(
    "given",
    [
        "evil $(touch /tmp/hostile88) x",  # shell text, printed unquoted on the estimate's line
        "qwen2",  # a GGUF name, of another model's keys: llama-server reads llama.context_length
        "",
        "LLAMA",
    ],
)
def test_a_config_jsons_gguf_key_names_no_architecture(tmp_path: Path, given: str) -> None:
    line = _llama_cpp_line(tmp_path, {GGUF_ARCH_KEY: given})
    assert "--override-kv llama.context_length=int:32768 " in line
    plain = tmp_path / "plain"
    plain.mkdir()
    assert line == _llama_cpp_line(plain, {})


@pytest.mark.parametrize(
    ("config", "model_type", "arch"),
    [
        ({}, "llama", "llama"),
        ({GGUF_ARCH_KEY: "llama"}, "mixtral", "llama"),  # a GGUF file of Mixtral's experts
        ({GGUF_ARCH_KEY: "mistral3"}, "mistral", "mistral3"),  # newer converters' name, kept from the file
        ({GGUF_ARCH_KEY: "llama"}, "mistral", "llama"),  # older converters'
        ({GGUF_ARCH_KEY: "mistral3"}, "llama", "llama"),
        ({GGUF_ARCH_KEY: "qwen2"}, "llama", "llama"),
        ({GGUF_ARCH_KEY: "x; rm -rf /"}, "llama", "llama"),
        ({GGUF_ARCH_KEY: "x; rm -rf /"}, "bert", None),
    ],
)
def test_the_gguf_architecture_kept(config: dict[str, Any], model_type: str, arch: str | None) -> None:
    assert gguf_architecture(config, model_type) == arch


# --- item 2: a pattern refused only for capitals, or for characters outside ASCII ------------------------------------

GKE = REPO / "examples" / "small-models-gke-sharing.yaml"


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        # as kubernetes.location's 'Us-Central1' reads (gke_zone.place_problem, fuzz24 L1): the zone's pattern took no
        # capitals, and read "does not match ^[a-z][a-z0-9-]*$"
        (
            "zone: us-central1-a",
            "zone: US-CENTRAL1-A",
            "kubernetes.zone: 'US-CENTRAL1-A' is written in lower case here: 'us-central1-a' (",
        ),
        (
            "name: small-models-gke",
            "name: Small-Models-GKE",
            "name: 'Small-Models-GKE' is written in lower case here: 'small-models-gke' (",
        ),
        # a look-alike: the same two names on screen
        (
            "zone: us-central1-a",
            "zone: us-сentral1-a",
            "kubernetes.zone: 'us-сentral1-a' does not match ^[a-z][a-z0-9-]*$ (it holds 'с' (U+0441 CYRILLIC SMALL "
            "LETTER ES), outside ASCII, which this field is written in) (",
        ),
        ("zone: us-central1-a", 'zone: "us-central1-a\\u200b"', "(it holds '\\u200b' (U+200B ZERO WIDTH SPACE), outside ASCII"),
        # capitals and another fault: the pattern's words, as before
        ("zone: us-central1-a", "zone: US_CENTRAL1-A", "kubernetes.zone: 'US_CENTRAL1-A' does not match ^[a-z][a-z0-9-]*$ (GKE"),
    ],
)
def test_a_pattern_names_the_case_or_the_characters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, said: str
) -> None:
    text = GKE.read_text()
    assert old in text
    path = tmp_path / "w.yaml"
    path.write_text(text.replace(old, new, 1))
    code, _out, err = specgen_in_process(capsys, "validate", str(path))
    assert code == 1
    assert said in err
    assert "Traceback" not in err


def test_every_pattern_of_the_schema_is_ascii() -> None:
    """What item 2's note says of a character outside ASCII: no field's pattern takes one (no \\w, \\S or '.')."""
    schema = json.loads((REPO / "schemas" / "workload.schema.json").read_text())
    patterns: list[str] = []
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            patterns += [v for k, v in node.items() if k == "pattern" and isinstance(v, str)]
            stack += list(node.values())
        elif isinstance(node, list):
            stack += node
    assert len(patterns) > 20
    for pattern in patterns:
        assert pattern.isascii() and not any(w in pattern for w in ("\\w", "\\S", "\\D", "[^")), pattern
        # a '.' outside a class and a negative lookahead matches any character
        bare = re.sub(r"\(\?!.*?\)|\[[^\]]*\]|\\.", "", pattern)
        assert "." not in bare, pattern


# --- item 3: a GGUF without its context_length ------------------------------------------------------------------------


def _small_gguf(path: Path, context: int | None) -> Path:
    """A 2-layer llama GGUF (tensors as holes), with ``context`` as its llama.context_length where given."""
    gguf = pytest.importorskip("gguf")
    from tests.helpers import write_sparse_gguf

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_block_count(2)
    writer.add_embedding_length(256)
    writer.add_feed_forward_length(512)
    writer.add_head_count(4)
    writer.add_head_count_kv(2)
    if context is not None:
        writer.add_context_length(context)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    shapes: dict[str, tuple[int, ...]] = {"token_embd.weight": (512, 256), "output.weight": (512, 256)}
    shapes["output_norm.weight"] = (256,)
    for i in range(2):
        blk = f"blk.{i}."
        shapes |= {
            f"{blk}attn_q.weight": (256, 256),
            f"{blk}attn_k.weight": (128, 256),
            f"{blk}attn_v.weight": (128, 256),
            f"{blk}attn_output.weight": (256, 256),
            f"{blk}ffn_gate.weight": (512, 256),
            f"{blk}ffn_up.weight": (512, 256),
            f"{blk}ffn_down.weight": (256, 512),
            f"{blk}attn_norm.weight": (256,),
            f"{blk}ffn_norm.weight": (256,),
        }
    write_sparse_gguf(writer, shapes)
    return path


@pytest.mark.parametrize("args", [(), ("--context", "16384", "--ram-gib", "64")])
def test_a_gguf_without_its_context_length_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> None:
    path = _small_gguf(tmp_path / "m.gguf", None)
    code, out, err = specgen_in_process(capsys, "estimate", str(path), *args)
    assert (code, out) == (1, "")
    assert f"{path}: GGUF has no llama.context_length key, which llama.cpp requires of every model" in err
    assert "Traceback" not in err
    # the same file with the key is sized
    assert estimate_json(str(_small_gguf(tmp_path / "k.gguf", 4096)))["model"]["layers"] == 2


# --- item 4: an empty -o of detect and calibrate -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("detect", "-o", ""), "Invalid value for '-o' / '--output': is empty: name the block's file"),
        (("detect", "-o", "  "), "Invalid value for '-o' / '--output': is empty: name the block's file"),
        (
            ("calibrate", "meta-llama/Llama-3.1-8B-Instruct", "--log", "/dev/null", "-o", ""),
            "specgen calibrate: error: -o/--output is empty: name the file the constants: block goes to",
        ),
    ],
)
def test_an_empty_output_file_is_a_usage_error(capsys: pytest.CaptureFixture[str], args: tuple[str, ...], said: str) -> None:
    code, out, err = specgen_in_process(capsys, *args)
    assert (code, out) == (2, "")
    assert said in err


# --- item 5: one constant --set twice ----------------------------------------------------------------------------------

MODEL = "meta-llama/Llama-3.1-8B-Instruct"


@pytest.mark.parametrize("command", [("estimate", MODEL), ("calibrate", MODEL, "--log", "/dev/null")])
def test_a_constant_set_twice_is_a_usage_error(capsys: pytest.CaptureFixture[str], command: tuple[str, ...]) -> None:
    args = ("--set", "safety_margin_fraction=0.1", "--set", "safety_margin_fraction=0.2")
    code, out, err = specgen_in_process(capsys, *command, *args)
    assert (code, out) == (2, "")
    assert "--set safety_margin_fraction is given twice (0.1 and 0.2): give it once" in err


def test_a_constant_set_twice_alike_is_taken() -> None:
    once = estimate_json(MODEL, "--set", "safety_margin_fraction=0.1")
    assert estimate_json(MODEL, "--set", "safety_margin_fraction=0.1", "--set", "safety_margin_fraction=0.10") == once
