"""fix176 item 1: the estimate's llama-server lines name the model (``-m <file>``); before, a line copied into a shell
started a server with no model.

A local GGUF file is its own path (shell-quoted, ``~`` expanded); a Hub / catalog id or a local config.json is the GGUF
file made of it, ``<name>-<TYPE>.gguf``, of the type the line's placement holds (a checkpoint llama.cpp cannot load: the
type the conversion note names). The estimate never reads a Hub repository of GGUF files (it reads config.json and
safetensors headers), so ``-hf <repo>`` would find no GGUF there and is not printed.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from generator.calculator.llama_server_model import gguf_file_name, model_args
from generator.calculator.model_source import ResolvedModel
from generator.calculator.offload_report import file_precision
from tests.helpers import estimate_json
from tests.test_fix163 import _gguf


@pytest.mark.parametrize(
    ("name", "precision", "file"),
    [
        ("meta-llama/Llama-3.1-8B", "q4_k_m", "Llama-3.1-8B-Q4_K_M.gguf"),
        ("Qwen/Qwen3-235B-A22B", "iq2_xs", "Qwen3-235B-A22B-IQ2_XS.gguf"),
        ("openai/gpt-oss-120b", "mxfp4_moe", "gpt-oss-120b-MXFP4_MOE.gguf"),
        # a checkpoint's floats, as convert_hf_to_gguf.py's --outtype writes them
        ("org/m", "bf16", "m-BF16.gguf"),
        ("org/m", "fp16", "m-F16.gguf"),
        ("org/m", "fp32", "m-F32.gguf"),
        # a config's _name_or_path of a folder, and one of shell syntax: a plain file name either way
        ("/models/My Model/", "q8_0", "My-Model-Q8_0.gguf"),
        ("a$(touch x);b", "q8_0", "a-touch-x-b-Q8_0.gguf"),
        ("...", "q8_0", "model-Q8_0.gguf"),
    ],
)
def test_the_converted_files_name(name: str, precision: str, file: str) -> None:
    assert gguf_file_name(name, precision) == file


@pytest.mark.parametrize(
    ("precision", "runs"),
    [
        ("int4", "q4_k_m"),
        ("nvfp4", "q4_k_m"),
        ("nf4", "q4_k_m"),
        ("fp8", "q8_0"),
        ("int8", "q8_0"),
        ("bf16", "bf16"),
        ("fp32", "fp32"),
        ("q6_k", "q6_k"),
        ("mxfp4_moe", "mxfp4_moe"),
        ("gguf-mixed", "gguf-mixed"),  # a local GGUF file's own mixture: its path is the -m, not a type
    ],
)
def test_the_type_a_line_runs(precision: str, runs: str) -> None:
    assert file_precision(precision) == runs


def _model(source: str, model_id: str, name: str) -> ResolvedModel:
    return ResolvedModel(model_id, name, source, None)  # type: ignore[arg-type]  # the architecture is not read


def test_each_source_names_its_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/u")
    assert model_args(_model("local GGUF: ~/m.gguf", "~/m.gguf", "m"), "q4_k_m") == ["-m", "/home/u/m.gguf"]
    assert model_args(_model("hf: org/Name@abc", "org/Name", "org/Name"), "q4_k_m") == ["-m", "Name-Q4_K_M.gguf"]
    catalog = _model("catalog: https://x", "meta-llama/Llama-3.1-8B", "Llama 3.1 8B")
    assert model_args(catalog, "q8_0") == ["-m", "Llama-3.1-8B-Q8_0.gguf"]  # the id's name, not the display name
    local = _model("local config: ./cfg/config.json", "./cfg/config.json", "my-org/Tiny")
    assert model_args(local, "bf16") == ["-m", "Tiny-BF16.gguf"]


@pytest.mark.parametrize("file_name", ["m.gguf", "my model's $HOME.gguf"])
def test_a_local_gguf_files_path_is_the_lines_model(tmp_path: Path, file_name: str) -> None:
    """The path as given, one shell word however it is spelt: shlex.split of the line gives it back."""
    path = _gguf(tmp_path / file_name, None)
    cpu = estimate_json(str(path), "--ram-gib", "64")["cpu_only"]["command"]
    assert shlex.split(cpu)[:3] == ["-m", str(path), "-ngl"]
    placed = estimate_json(str(path), "--ram-gib", "64", "--gpu", "rtx-4090-24gb")["runtime_settings"]["llama.cpp"]
    assert shlex.split(placed)[:3] == ["-m", str(path), "-ngl"]


def test_a_tilde_path_is_expanded_where_a_quoted_one_would_not_be(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    _gguf(tmp_path / "m.gguf", None)
    command = estimate_json("~/m.gguf", "--ram-gib", "64")["cpu_only"]["command"]
    assert command.startswith(f"-m {tmp_path}/m.gguf -ngl 0 ")


def test_the_cpu_only_line_of_a_checkpoint_runs_the_file_the_warning_names() -> None:
    data = estimate_json("meta-llama/Llama-3.1-8B", "--ram-gib", "64", "--precision", "int4")
    assert data["cpu_only"]["command"].startswith("-m Llama-3.1-8B-Q4_K_M.gguf -ngl 0 ")
    said = [f["message"] for f in data["findings"] if f["code"] == "gguf-conversion"]
    assert len(said) == 1 and "convert to q4_k_m (" in said[0]


def test_the_gpu_only_line_runs_the_precisions_file() -> None:
    data = estimate_json("google/gemma-3-27b-it", "--gpu", "rtx-4090-24gb", "--precision", "q5_k_m", "--context", "8192")
    assert data["llama_cpp"]["command"] == "-m gemma-3-27b-it-Q5_K_M.gguf -ngl 63 -c 8192 -np 1"
