"""newuser86: the quick estimate of a GGUF precision as llama.cpp holds it, and llama.cpp on a machine without a GPU.

Item 1: without ``--ram-gib`` a GGUF precision was judged by vLLM's memory rules (``--gpu-memory-utilization`` 0.9,
vLLM's activations and runtime): Gemma 3 27B at q5_k_m, an 18.73 GiB file, read "does NOT fit" (22.82 GiB against
21.28 usable, exit 3) an RTX 4090 that llama.cpp holds whole. Its table and verdict are now the offload model's
placement with nothing offloaded, the one ``--ram-gib`` prints (20.84 GiB of the 23.64 CUDA allocates).
Item 2: ``--ram-gib`` without ``--gpu`` was a usage error (exit 2); it now places llama.cpp on the CPU alone and times
its decode from the DIMMs' bandwidth and the cores (the offload model's CPU path).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from generator import catalog
from generator.calculator.cli import main as estimate_main
from tests.helpers import run_estimate

GIB = 2**30


def _json(*args: str) -> tuple[int, dict[str, Any]]:
    code, text = run_estimate(*args, "--json")
    return code, json.loads(text)


# --- item 1: a GGUF precision on the GPU given, as llama.cpp holds it ---------------------------------------------------

#: (model, GPU, precision, context, fits whole as llama.cpp holds it, fits by vLLM's rules (--engine vllm)).
#: Gemma 3 27B q5_k_m (18.73 GiB of tensors) and Qwen3-32B q4_k_m (18.40 GiB) run whole on one 24 GB card under
#: llama.cpp at 8k; vLLM's 0.9 utilization and its runtime refused them. Llama 3.3 70B q4_k_m (39.6 GiB) fits
#: no 32 GB card either way.
GGUF_ON_GPU = [
    ("google/gemma-3-27b-it", "rtx-4090-24gb", "q5_k_m", 8192, True, False),
    ("google/gemma-3-27b-it", "rtx-3090-24gb", "q5_k_m", 8192, True, False),
    ("google/gemma-3-27b-it", "rtx-5090-32gb", "q6_k", 16384, True, True),
    ("Qwen/Qwen3-32B", "rtx-3090-24gb", "q4_k_m", 8192, True, False),
    ("google/gemma-3-27b-it", "rtx-4090-24gb", "q8_0", 8192, False, False),
    ("meta-llama/Llama-3.3-70B-Instruct", "rtx-5090-32gb", "q4_k_m", 8192, False, False),
]


@pytest.mark.parametrize(("model", "gpu", "precision", "context", "fits", "vllm_fits"), GGUF_ON_GPU)
def test_a_gguf_precision_is_judged_by_llama_cpps_rules(
    model: str, gpu: str, precision: str, context: int, fits: bool, vllm_fits: bool
) -> None:
    setup = (model, "--gpu", gpu, "--precision", precision, "--context", str(context))
    code, data = _json(*setup)
    assert code == (0 if fits else 3)
    cap = data["capacity"]
    assert cap["fits"] is fits and cap["engine"] == "llama.cpp"
    # all the memory CUDA lets a process allocate, not vLLM's 0.9 of it
    assert cap["usable_bytes"] == catalog.find_gpu(gpu).memory_bytes
    table = data["memory"]["per_gpu"]
    assert (table["total"] <= cap["usable_bytes"]) is fits
    assert "vllm_log" not in cap and "kv_cache_tokens" not in cap
    # the vLLM verdict is still there for the asking, unchanged
    code, served = _json(*setup, "--engine", "vllm")
    assert served["capacity"]["fits"] is vllm_fits and "vllm_log" in served["capacity"]
    assert code == (0 if vllm_fits else 3)


@pytest.mark.parametrize(("model", "gpu", "precision", "context"), [row[:4] for row in GGUF_ON_GPU if row[4]])
def test_the_table_is_the_one_ram_gib_places(model: str, gpu: str, precision: str, context: int) -> None:
    """One rule for llama.cpp's memory: the quick estimate's table is what ``--ram-gib`` places when nothing is offloaded."""
    setup = (model, "--gpu", gpu, "--precision", precision, "--context", str(context))
    _, quick = _json(*setup)
    code, placed = _json(*setup, "--ram-gib", "128")
    assert code == 0 and placed["offload"]["mode"] == "gpu"
    assert quick["memory"]["per_gpu"] == placed["memory"]["per_gpu"]
    assert quick["weights"] == placed["weights"]
    # and its speed, timed by the same model
    assert quick["llama_cpp"]["decode_tokens_per_s"] == placed["throughput"]["decode_tokens_per_s"]
    assert f"-c {context} -np 1" in quick["llama_cpp"]["command"]


def test_gemma_q5_k_m_on_a_4090_before_and_after() -> None:
    """The figures of the report: 22.82 GiB against 21.28 usable (vLLM) became 20.84 GiB of 23.64 (llama.cpp)."""
    code, data = _json("google/gemma-3-27b-it", "--gpu", "rtx-4090-24gb", "--precision", "q5_k_m", "--context", "8192")
    assert code == 0
    assert round(data["weights"]["bytes"] / GIB, 2) == 18.73  # the file's tensors
    assert round(data["memory"]["per_gpu"]["total"] / GIB, 2) == 20.84
    assert round(data["capacity"]["usable_bytes"] / GIB, 2) == 23.64
    code, text = run_estimate("google/gemma-3-27b-it", "--gpu", "rtx-4090-24gb", "--precision", "q5_k_m", "--context", "8192")
    assert code == 0
    assert "): fits" in text and "does NOT fit" not in text and "vLLM refuses" not in text
    assert "llama.cpp    -m gemma-3-27b-it-Q5_K_M.gguf -ngl 63 -c 8192 -np 1" in text  # fix176: -m (was none)


def test_one_too_large_says_the_layers_llama_cpp_would_offload() -> None:
    code, text = run_estimate("google/gemma-3-27b-it", "--gpu", "rtx-4090-24gb", "--precision", "q8_0", "--context", "8192")
    assert code == 3
    assert "does NOT fit" in text
    assert "llama.cpp would run it with 10 of its 62 layers in system RAM: give --ram-gib" in text


#: Precisions that are not GGUF types keep vLLM's sizing without --engine (fp8, bf16, awq-like int4).
@pytest.mark.parametrize("precision", ["bf16", "fp8", "int4"])
def test_other_precisions_stay_vllms(precision: str) -> None:
    code, data = _json("meta-llama/Llama-3.1-8B", "--gpu", "rtx-4090-24gb", "--precision", precision, "--context", "8192")
    assert code == 0
    assert "vllm_log" in data["capacity"] and "llama_cpp" not in data
    assert "gpu-memory-utilization" in data["capacity"]["usable_basis"]


# --- item 2: --ram-gib without --gpu, llama.cpp on the CPU -------------------------------------------------------------

#: (model, precision, options of the machine, bound): a 128 GiB DDR5 desktop.
CPU_ONLY = [
    ("Qwen/Qwen3-30B-A3B", "q4_k_m", ("--cpu", "ryzen-9-7950x")),
    ("meta-llama/Llama-3.1-8B", "q4_k_m", ("--cpu", "ryzen-9-7950x")),
    ("Qwen/Qwen3-8B", "q8_0", ("--memory-channels", "2", "--ddr-mt-per-s", "6000")),
    ("meta-llama/Llama-3.1-8B", "q4_k_m", ()),  # no CPU: the desktop assumed, said
]


@pytest.mark.parametrize(("model", "precision", "machine"), CPU_ONLY)
def test_a_machine_without_a_gpu_is_estimated(model: str, precision: str, machine: tuple[str, ...]) -> None:
    code, data = _json(model, "--precision", precision, "--ram-gib", "128", *machine)
    assert code == 0
    cpu = data["cpu_only"]
    assert data["machine"]["gpu"] is None and data["parallelism"]["gpus_per_replica"] == 0
    # the decode reads every weight a token uses from the DIMMs: never faster than those bytes at the DIMMs' rate
    ddr = float(data["machine"]["bandwidths"].split(" GB/s")[0]) * 1e9
    active = data["params"]["active"] / data["params"]["total"]
    floor_s = data["weights"]["bytes"] * active / ddr  # the routed experts a token skips are not read
    assert cpu["decode_tokens_per_s"] < 1 / floor_s
    assert cpu["decode_tokens_per_s"] > 0.25 / floor_s  # nor far below it: a DRAM-bound decode
    assert cpu["bound"] in ("ddr", "cpu-cores")
    table = data["memory"]["host"]
    assert table["weights"] == data["weights"]["bytes"]
    assert table["total"] == cpu["ram_used_bytes"]
    assert "-ngl 0" in cpu["command"]
    assert "TTFT" in cpu["not_estimated"]  # what is not timed is said
    said = [f["code"] for f in data["findings"]]
    assert ("ddr-bandwidth-assumed" in said) is (not machine)


def test_the_moe_decodes_faster_than_the_dense_model_of_its_file_size() -> None:
    """Qwen3-30B-A3B reads its 3.3B active parameters a token; the 8B reads all 8B."""
    _, moe = _json("Qwen/Qwen3-30B-A3B", "--precision", "q4_k_m", "--ram-gib", "128", "--cpu", "ryzen-9-7950x")
    _, dense = _json("meta-llama/Llama-3.1-8B", "--precision", "q4_k_m", "--ram-gib", "128", "--cpu", "ryzen-9-7950x")
    assert moe["cpu_only"]["decode_tokens_per_s"] > dense["cpu_only"]["decode_tokens_per_s"]


def test_the_text_says_ram_not_gpu() -> None:
    code, text = run_estimate("meta-llama/Llama-3.1-8B", "--precision", "q4_k_m", "--ram-gib", "128", "--cpu", "ryzen-9-7950x")
    assert code == 0
    assert "  in RAM         bytes            GiB" in text and "per GPU" not in text
    assert "parallelism  none: no GPU, llama.cpp on the CPU" in text
    assert "not timed    the prompt's time (TTFT)" in text
    assert "no GPU" in text.split("machine      ")[1].splitlines()[0]


#: (arguments, exit code, what stderr says): what still cannot be estimated, said without a traceback.
REFUSED = [
    (("Qwen/Qwen3-30B-A3B", "--precision", "q8_0", "--ram-gib", "32"), 3, "less than the 40.94 GiB llama.cpp needs"),
    (("Qwen/Qwen3-30B-A3B", "--precision", "q4_k_m", "--ram-gib", "128", "--gpus", "2"), 2, "--gpus is about the GPUs"),
    (("Qwen/Qwen3-30B-A3B", "--precision", "q4_k_m", "--ram-gib", "128", "--pcie-gen", "4"), 2, "--pcie-gen is about"),
    (("Qwen/Qwen3-30B-A3B", "--ram-gib", "128", "--allow-precision", "q4_k_m"), 2, "--allow-precision is about"),
    (("meta-llama/Llama-3.1-8B", "--train", "lora", "--ram-gib", "128"), 2, "cannot be combined with --train"),
    (("meta-llama/Llama-3.1-8B", "--precision", "q4_k_m", "--ram-gib", "128", "--p95-input-tokens", "9"), 2, ""),
    # vLLM's own settings beside a GGUF precision sized for llama.cpp (they were read as vLLM's)
    (
        ("meta-llama/Llama-3.1-8B", "--precision", "q4_k_m", "--gpu", "rtx-4090-24gb", "--gpu-memory-utilization", "0.95"),
        2,
        "--gpu-memory-utilization is vLLM's setting: a GGUF precision (q4_k_m) without --engine",
    ),
    (
        ("meta-llama/Llama-3.1-8B", "--precision", "q4_k_m", "--gpu", "rtx-4090-24gb", "--max-num-seqs", "8"),
        2,
        "--max-num-seqs is vLLM's setting",
    ),
]


@pytest.mark.parametrize(("args", "code", "said"), REFUSED)
def test_what_cannot_be_estimated_is_said(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], code: int, said: str
) -> None:
    try:
        got = estimate_main(list(args))
    except SystemExit as exc:  # a usage error: argparse exits 2
        got = int(str(exc.code))
    err = capsys.readouterr().err
    assert got == code
    assert said in err and "Traceback" not in err


#: llama-quantize's own sizes of Llama-3-8B's files (GiB, "G" in its help), from QUANT_OPTIONS in
#: https://github.com/ggml-org/llama.cpp/blob/master/tools/quantize/quantize.cpp: the GGUF precisions this estimate
#: now judges by; Llama 3.1 8B has Llama 3 8B's shapes. The file holds its tokenizer and metadata beside the tensors.
LLAMA_QUANTIZE_GIB = [("q2_k", 2.96), ("q3_k_m", 3.74), ("q4_0", 4.34), ("q4_k_m", 4.58), ("q5_k_m", 5.33), ("q6_k", 6.14),
                      ("q8_0", 7.96)]  # fmt: skip


@pytest.mark.parametrize(("precision", "file_gib"), LLAMA_QUANTIZE_GIB)
def test_the_weights_are_llama_quantizes_files(precision: str, file_gib: float) -> None:
    code, data = _json("meta-llama/Llama-3.1-8B", "--gpu", "rtx-4090-24gb", "--precision", precision, "--context", "8192")
    assert code == 0 and data["capacity"]["fits"]
    assert data["weights"]["bytes"] / GIB == pytest.approx(file_gib, rel=0.005)
    # the GPU holds the file less its input embedding (a lookup llama.cpp keeps in RAM), plus its buffers
    assert data["memory"]["per_gpu"]["weights"] < data["weights"]["bytes"]
