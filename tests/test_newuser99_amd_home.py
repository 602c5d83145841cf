"""newuser99: a home server with a Radeon RX 7900 XTX (or two) or a Radeon PRO W7900, llama.cpp GGUF, quick estimate.

Item 1: llama.cpp's prompt model is fitted on CUDA runs alone (generator/sizing/llama_cpp_prompt.py's ``CUDA_VENDOR``);
on an AMD GPU the TTFT is the serving engines' prefill, which reads 43% (RX 7900 XTX), 57% (W7900) and 200% (MI210)
faster than llama-bench's pp512 on llama.cpp's ROCm scoreboard (tests/data/llama_cpp_amd_scoreboard.json,
https://github.com/ggml-org/llama.cpp/discussions/15021: 3552.27, 3213.17, 2486.22 tokens/s, Llama 2 7B Q4_0; the
estimate gave 5063.61, 5051.25 and 7457.39). The estimate printed that TTFT as "timed for llama.cpp" with no word that it
is unchecked; it now says so in a note, on the GPUs alone and with --ram-gib, and not on an NVIDIA GPU. Since acc171 the
prompt follows llama.cpp's HIP kernels on AMD (within 7-16% of those runs) and the note says what that checks and what
it leaves unchecked (MoE prompts, newer RDNA 3 MMQ builds, the MI300X).

Item 2: the GPU-only llama.cpp sizing said "the CUDA context, in all the memory CUDA lets a process allocate" and "its
KV cache, compute buffer and CUDA context" of an AMD GPU, whose llama.cpp runs on ROCm's HIP: it names HIP there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.cli import main

AMD_CARDS = ("rx-7900-xtx-24gb", "radeon-pro-w7900-48gb", "mi210-64gb")
MODEL = "meta-llama/Llama-2-7b-hf"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    with pytest.raises(SystemExit) as done:
        main(["estimate", MODEL, *args])
    assert done.value.code == 0
    return capsys.readouterr().out


def _estimate(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(_run(capsys, "--precision", "q4_0", "--json", *args))
    return doc


def _prompt_notes(doc: dict[str, Any]) -> list[str]:
    return [n for n in doc["notes"] if "TTFT" in n and "unchecked" in n]


@pytest.mark.parametrize("gpu", AMD_CARDS)
@pytest.mark.parametrize("ram", [(), ("--ram-gib", "64")])
def test_amd_llama_cpp_ttft_said_unchecked(capsys: pytest.CaptureFixture[str], gpu: str, ram: tuple[str, ...]) -> None:
    notes = _prompt_notes(_estimate(capsys, "--gpu", gpu, *ram))
    assert len(notes) == 1, notes
    assert "HIP build" in notes[0] and "fitted on NVIDIA" in notes[0] and "discussions/15021" in notes[0]
    assert "hipBLAS" in notes[0] and "MoE" in notes[0]


@pytest.mark.parametrize("ram", [(), ("--ram-gib", "64")])
def test_nvidia_llama_cpp_ttft_not_flagged(capsys: pytest.CaptureFixture[str], ram: tuple[str, ...]) -> None:
    assert _prompt_notes(_estimate(capsys, "--gpu", "rtx-4090-24gb", *ram)) == []


def test_amd_vllm_estimate_has_no_llama_cpp_note(capsys: pytest.CaptureFixture[str]) -> None:
    # the note is of llama.cpp's prompt; vLLM's GGUF loader on the same card is another engine
    assert _prompt_notes(json.loads(_run(capsys, "--precision", "bf16", "--gpu", "rx-7900-xtx-24gb", "--json"))) == []


@pytest.mark.parametrize(
    ("gpu", "runtime"), [("rx-7900-xtx-24gb", "HIP"), ("radeon-pro-w7900-48gb", "HIP"), ("rtx-4090-24gb", "CUDA")]
)
def test_llama_cpp_memory_basis_names_the_runtime(capsys: pytest.CaptureFixture[str], gpu: str, runtime: str) -> None:
    out = _run(capsys, "--precision", "q4_0", "--gpu", gpu)
    other = "CUDA" if runtime == "HIP" else "HIP"
    assert f"the {runtime} context" in out
    assert f"the memory {runtime} lets a process allocate" in out
    assert f"compute buffer and {runtime} context" in out
    assert f"{other} context" not in out


HOME = """\
version: 1
name: home-amd
deployments:
  - name: chat
    model: Qwen/Qwen3-30B-A3B
    inference:
      precision: q4_k_m
      max_context_tokens: 16384
      avg_input_tokens: 800
      avg_output_tokens: 300
      requests_per_second: 0.05
hardware:
  provider: baremetal
  fixed:
    gpu: {gpu}
    gpu_count: {count}
    ram_gib: 128
    reserved_ram_gib: 12
    cpu: ryzen-9-7950x
"""


@pytest.mark.parametrize(
    ("gpu", "count", "said"), [("rx-7900-xtx-24gb", 2, True), ("radeon-pro-w7900-48gb", 1, True), ("rtx-4090-24gb", 1, False)]
)
def test_plan_of_a_fixed_amd_machine_says_the_ttft_unchecked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, gpu: str, count: int, said: bool
) -> None:
    path = tmp_path / "home.yaml"
    path.write_text(HOME.format(gpu=gpu, count=count))
    with pytest.raises(SystemExit) as done:
        main(["plan", str(path), "--format", "json"])
    assert done.value.code == 0
    (dep,) = json.loads(capsys.readouterr().out)["deployments"]
    unchecked = [r for r in dep["reasons"] if "TTFT is timed by the kernels llama.cpp's HIP build" in r]
    assert len(unchecked) == int(said), dep["reasons"]
