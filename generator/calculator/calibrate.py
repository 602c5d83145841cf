"""``specgen calibrate``: what a run printed, against the prediction for the same setup.

Reads a vLLM start-up log (weights loaded, KV cache tokens or GPU blocks, maximum concurrency),
a ``torch.cuda.memory_summary()`` (peak allocated memory, e.g. of a training step),
``nvidia-smi --query-gpu=...,memory.used,... --format=csv`` output, and llama.cpp timings
(``eval time = ... tokens per second``) or a ``llama-bench`` table (``tg`` rows; rows run with
``-nkvo 1``, the KV cache in host memory, are left out), runs ``specgen estimate`` with the given
options, prints each figure's error and writes a
``constants:`` block that makes later plans match the measured stack:

- KV cache tokens: the bytes the prediction gave the KV cache beyond what the run had are runtime
  memory it did not count; ``non_torch_bytes`` grows (or shrinks) by that much;
- decode tokens/s: the bandwidth efficiency of the bound tier (``decode_bandwidth_efficiency`` on
  the GPU, ``ddr_bandwidth_efficiency`` when layers run on the CPU) scales by measured / predicted;
  when the prediction has the step compute-bound (small-batch GEMMs), ``gemm_half_efficiency_tokens``
  is fitted instead.

The run's own settings, where the log prints them (the ``vllm serve`` command line, vLLM's ``non-default
args`` and engine-config lines: model, memory utilization, max model length, TP, KV-cache dtype,
quantization), fill the options the command leaves at their defaults; a setting the command contradicts,
another model, or loaded weights more than 5% from the prediction's stop the comparison (exit 1). A
constant whose fit lands on a bound of its range is not recommended: the run does not identify it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import re
import sys
from collections.abc import Callable
from typing import Any

from generator.calculator.block_file import CALIBRATE_HEADER, CALIBRATE_NO_FIT_HEADER, CALIBRATE_NONE_HEADER
from generator.calculator.smi_csv import MOST_FIGURE, memory_used_bytes, unreadable_figure, unreported_rows
from generator.errors import InputError, SpecgenError, arithmetic_error, one_line
from generator.input_files import ascii_count, dash_output, short
from generator.named_tuple import NamedTuple

#: vLLM's default KV block size in tokens (``--block-size``), to turn "# GPU blocks" into tokens.
VLLM_BLOCK_TOKENS = 16
GIB = 2**30


class Measurement(NamedTuple):
    """One figure a run printed: what, its value, the line it came from and where (``file:line``; '' where not known)."""

    name: str
    value: float
    line: str
    where: str = ""
    #: a llama-bench row's model parameters (its ``params`` cell) and layers on the GPU (``ngl``; 0 on a CPU backend),
    #: where it prints them: what :func:`bench_rows_of_this_setup` checks against the prediction's model and split
    params: float | None = None
    gpu_layers: int | None = None


#: (figure, text every line that prints it holds, pattern). The text is looked for first, and each pattern matches in
#: time linear in the line (a number starts where no digit or point precedes it): a log is up to 64 MiB of anyone's.
_PATTERNS = (
    # vLLM: "Loading model weights took 67.7229 GB" (V1 prints GiB values, older releases label them GB)
    ("weights_gib", " took ", re.compile(r"(?:Loading model weights|Model loading) took ([\d.]+) Gi?B")),
    ("kv_cache_tokens", "GPU KV cache size: ", re.compile(r"GPU KV cache size: ([\d,]+) tokens")),
    ("gpu_blocks", "# GPU blocks: ", re.compile(r"# GPU blocks: (\d+)")),
    ("max_concurrency", "Maximum concurrency for ", re.compile(r"Maximum concurrency for [\d,]+ tokens per request: ([\d.]+)x")),
)
#: The vLLM figures (:data:`_PATTERNS`) whose line, holding its words and no figure its pattern reads, is refused, not
#: dropped. Not the weights' "... took": vLLM's loading lines also time it in seconds alone (see :data:`_WEIGHTS_IN_GB`).
_ANNOUNCED = frozenset({"kv_cache_tokens", "gpu_blocks", "max_concurrency"})
#: The weights' line with a size in GB, whatever the size is written as: one whose size the pattern cannot read
#: (``took nan GB``, ``took -67.7 GB``, ``took 1e308 GB``) is refused, not dropped (newuser75 item 3).
_WEIGHTS_IN_GB = re.compile(r"(?:Loading model weights|Model loading) took \S+ Gi?B")
#: The vLLM figures a run that started never prints as 0: weights it loaded, and the KV cache vLLM refuses to start
#: without ("No available memory for the cache blocks"; a cache that cannot hold one request of the context stops it too).
_NEVER_ZERO = frozenset({"weights_gib", "kv_cache_tokens", "gpu_blocks", "max_concurrency"})
#: vLLM's periodic stats line ("Engine 000: Avg prompt throughput: ... Avg generation throughput: ... tokens/s, ..."):
#: reported as unread (:func:`unread_settings_lines`), not compared.
_VLLM_STATS = "Avg generation throughput: "
#: vLLM V1's "Available KV cache memory: 20.10 GiB": reported as unread, the KV tokens it holds being compared.
_VLLM_AVAILABLE = "Available KV cache memory: "
#: SGLang's start-up lines ("Load weight end. type=..., mem usage=29.40 GB.", "KV Cache is allocated. #tokens: 500000,
#: ...", "max_total_num_tokens=500000, ..."): recognised to refuse the log by name, not read (calibrate compares vLLM's
#: accounting; SGLang's mem_fraction_static pool is another).
_SGLANG_LINES = ("KV Cache is allocated. #tokens: ", "max_total_num_tokens=", "Load weight end. type=")
#: llama.cpp's decode line: "eval time = 1234.56 ms / 127 runs ( 9.72 ms per token, 102.87 tokens per second)" (not the
#: "prompt eval time" line); read by :func:`_eval_tokens_per_s`, not a pattern that backtracks over a long line.
_EVAL = re.compile(r"(?<!prompt )eval time =")
_PER_SECOND = " tokens per second"


#: ``torch.cuda.memory_summary()``: the "Allocated memory" row's second column is the peak.
_TORCH_ALLOCATED = re.compile(r"\|\s*Allocated memory\s*\|\s*[\d.]+ [KMG]?i?B\s*\|\s*([\d.]+) ([KMG]?i?B)\s*\|")
#: ``nvidia-smi``'s default table prints each GPU's "Memory-Usage" as ``23859MiB / 24564MiB``.
_SMI_USAGE = re.compile(r"\b(\d+)MiB\s*/\s*(\d+)MiB")
#: Characters of a log line a measurement quotes.
_QUOTED_CHARS = 200
#: "used / total" figures read from one line: a table row has one, a sentence a few (an 8-GPU node's, at most).
_MOST_USAGES_A_LINE = 8
_UNIT_BYTES = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "KB": 2**10, "MB": 2**20, "GB": 2**30}


def parse_log(text: str, label: str) -> list[Measurement]:
    """Every known figure in ``text`` (a vLLM log, llama.cpp output, llama-bench table, nvidia-smi CSV or table)."""
    found: list[Measurement] = []
    bench_header: list[str] = []
    kv_sizes: dict[float, int] = {}  # each KV cache size the log prints, and its first line
    bench_runs: dict[tuple[str, ...], tuple[float, int]] = {}  # each llama-bench setup's first t/s and its line
    for number, line in enumerate(text.splitlines(), 1):
        # one excerpt a line, shared by its figures (a copy of a long line for each of its matches grew as its square)
        quoted = line.strip()[:_QUOTED_CHARS]

        def figure(digits: str, line: str = line, number: int = number) -> float:
            return _figure(digits, f"{label}:{number}", line)

        if line.startswith("|") and re.match(r"\|\s*model\s*\|", line):
            bench_header = _cells(line)
        for name, key, pattern in _PATTERNS:
            match = pattern.search(line) if key in line else None
            if match is None and name in _ANNOUNCED and key in line:
                # review70 item 16: "GPU KV cache size: -425,024 tokens" or "...: nanx" was dropped unsaid, where a
                # 29-digit figure is refused: a line that names a figure vLLM prints and holds none it could print
                raise unreadable_figure(f"{label}:{number}", line)
            if match is None and name == "weights_gib" and key in line and _WEIGHTS_IN_GB.search(line):
                raise unreadable_figure(f"{label}:{number}", line)
            if match:
                value, measured = figure(match.group(1)), name
                if value == 0 and name in _NEVER_ZERO:
                    raise InputError(
                        f"{label}:{number}: cannot read a figure from {short(line.strip(), 120)}: a vLLM run that started "
                        "prints no 0 here (it loads the weights and stops without room for its KV cache)"
                    )
                if name == "gpu_blocks":
                    figure(str(int(value) * VLLM_BLOCK_TOKENS))  # the tokens they hold, within a figure's bound
                    value, measured = value * VLLM_BLOCK_TOKENS, "kv_cache_tokens"
                if measured == "kv_cache_tokens":
                    kv_sizes.setdefault(value, number)
                found.append(Measurement(measured, value, quoted, f"{label}:{number}"))
        if _PER_SECOND in line and _EVAL.search(line):
            # hostile90: the whole word before the words, so "-2.50", "x2.50" or "２.50" is refused, not read as 2.50 / 0.50
            digits = _word_before(line, line.rfind(_PER_SECOND))
            if not _DECIMAL.fullmatch(digits):
                raise unreadable_figure(f"{label}:{number}", line)
            found.append(Measurement("decode_tokens_per_s", figure(digits), quoted, f"{label}:{number}"))
        # each pattern behind a test for its words: a day of nvidia-smi -l 1 is 691,000 lines (review70 item 7)
        torch_peak = _TORCH_ALLOCATED.match(line) if "Allocated memory" in line else None
        if torch_peak:
            size = figure(torch_peak.group(1)) * _UNIT_BYTES[torch_peak.group(2)] / GIB
            found.append(Measurement("torch_peak_allocated_gib", size, quoted, f"{label}:{number}"))
        usages = _SMI_USAGE.finditer(line) if "MiB" in line else ()
        for usage in itertools.islice(usages, _MOST_USAGES_A_LINE):  # a GPU a table row; prose quotes more
            used, total = figure(usage.group(1)), figure(usage.group(2))
            if used > total:
                raise InputError(f"{label}:{number}: {used:,.0f} MiB used of a {total:,.0f} MiB GPU ({short(quoted, 120)})")
            found.append(Measurement("gpu_memory_used_gib", used * 2**20 / GIB, quoted, f"{label}:{number}"))
        # llama-bench names the test "tg128" (2024 on) or "tg 128" (2023 builds); its t/s cell follows: "150.23 ± 0.50"
        if line.startswith("|") and "±" in line:
            cells = _cells(line)
            test = next((i for i, c in enumerate(cells[:-1]) if re.fullmatch(r"tg ?\d+", c)), None)
            speed = "" if test is None else cells[test + 1]
            bench = re.match(r"([\d.]+)\s*±", speed)
            if speed and bench is None:  # hostile78 item 9: "-130.00 ± 0.50", "nan ± nan" were dropped unsaid
                raise unreadable_figure(f"{label}:{number}", line)
            if bench and test is not None and not _kv_cache_in_host_memory(bench_header, cells):
                value = figure(bench.group(1))
                params, gpu_layers = _bench_setup(bench_header, cells)
                if params is None:  # hostile79 item 5a: a row without its header was fitted to any model
                    raise InputError(f"{label}:{number}: {_unattributed(bench_header, cells)}")
                setup = (*cells[: test + 1], *cells[test + 2 :])
                if _repeated_bench_run(setup, value, number, bench_runs, label, cells[test]):
                    continue
                found.append(Measurement("decode_tokens_per_s", value, quoted, f"{label}:{number}", params, gpu_layers))
    if len(kv_sizes) > 1:  # fuzz27 L2: appended logs of two runs were fitted across both
        sizes = "; ".join(f"line {n}: {v:,.0f}" for v, n in sorted(kv_sizes.items(), key=lambda item: item[1])[:3])
        raise InputError(f"{label} holds the KV cache sizes of {len(kv_sizes)} runs ({sizes}): give each run a log of its own")
    found += _nvidia_smi(text, label)
    if not found and (unreported := unreported_rows(text, label)) is not None:
        rows, cell = unreported
        raise InputError(
            f"{label}: an nvidia-smi CSV, but its memory.used is {cell} in all {rows} row(s) (nvidia-smi does not report "
            "this GPU's memory, or was not allowed to read it): take the CSV where it reports memory.used"
        )
    sglang = _sglang_line(text)
    if sglang is not None:  # newuser74 items 5-6: SGLang's figures are not vLLM's, and are not read
        number, line = sglang
        raise InputError(
            f"{label}:{number}: an SGLang log ({short(line.strip(), 80)}): calibrate reads vLLM and llama.cpp runs "
            "(and nvidia-smi / torch memory figures), not SGLang's log lines; give a vLLM or llama.cpp run's log"
        )
    if not found:
        raise InputError(_nothing_found(text, label))
    return found


#: A llama-bench markdown test run at a KV depth (``-d 4096``): "tg128 @ d4096".
_BENCH_DEPTH = re.compile(r"\|\s*(tg ?\d+ @ d\d+)\s*\|")


def _nothing_found(text: str, label: str) -> str:
    """The error of a log with no figure calibrate reads: where it is llama-bench's in a form not read, which it reads.

    hostile79 item 9: llama-bench's ``-o csv`` / ``-o json`` and its rows at a depth (``tg128 @ d4096``) read "no ...
    figure found", as if llama-bench were not read at all.
    """
    markdown = "calibrate reads llama-bench's markdown table (-o md, its default), rows of tg tests"
    if "avg_ts" in text and "n_gen" in text:
        kind = "JSON (-o json / jsonl)" if '"avg_ts"' in text else "CSV (-o csv)"
        return f"{label}: llama-bench's {kind} output is not read: {markdown}"
    depth = _BENCH_DEPTH.search(text)
    if depth is not None:
        number = text.count("\n", 0, depth.start()) + 1
        return (
            f"{label}:{number}: a llama-bench row at a KV depth ({depth.group(1)}) is not compared: the prediction's decode "
            "starts from the prompt alone; give a run without -d (a tg128 row)"
        )
    return f"{label}: no vLLM, llama.cpp, nvidia-smi or torch memory-summary figure found"


def _sglang_line(text: str) -> tuple[int, str] | None:
    """The first of SGLang's start-up lines in ``text`` (its number and text), else None."""
    if not any(key in text for key in _SGLANG_LINES):
        return None
    return next((n, line) for n, line in enumerate(text.splitlines(), 1) if any(key in line for key in _SGLANG_LINES))


#: A figure as llama.cpp prints one: ASCII digits, with a point and decimals or not.
_DECIMAL = re.compile(r"[0-9]+(?:\.[0-9]+)?")


def _word_before(line: str, end: int) -> str:
    """The run of characters other than white space that ends at ``end`` of ``line`` ('' where none does)."""
    words = line[:end].rsplit(None, 1)
    return words[-1] if words and not line[:end][-1:].isspace() else ""


def _figure(digits: str, where: str, line: str) -> float:
    """A figure matched in a log line; an InputError naming the line when it is no number a run prints."""
    try:  # hostile90: not "１２" ("\\d" is any script's digit; float() reads them), which no run prints
        value = float(digits.replace(",", "")) if digits.isascii() else math.nan
    except ValueError:
        value = math.nan
    if not 0 <= value <= MOST_FIGURE:  # NaN fails too
        raise unreadable_figure(where, line)
    return value


def _cells(line: str) -> list[str]:
    """The cells of a markdown table row."""
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _kv_cache_in_host_memory(header: list[str], cells: list[str]) -> bool:
    """A llama-bench row run with ``-nkvo 1``: the KV cache stays in host memory, a setup the estimate does not model."""
    if "nkvo" not in header or len(cells) != len(header):
        return False
    return cells[header.index("nkvo")] not in ("0", "false")


#: llama-bench's ``params`` cell: "8.03 B", "494.03 M" (the model's parameters, to two places).
_BENCH_PARAMS = re.compile(r"(\d{1,9}(?:\.\d{1,6})?) ?([KMBT])", re.ASCII)  # hostile90: not "８.03 B" (float reads it)
_BENCH_PARAM_UNITS = {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}


def _bench_setup(header: list[str], cells: list[str]) -> tuple[float | None, int | None]:
    """A llama-bench row's model parameters and layers offloaded to the GPU (``-ngl``), each None where not printed.

    A row run on the CPU backend has none on a GPU, whatever ``ngl`` says.
    """
    if not header or len(cells) != len(header):
        return None, None
    cell = dict(zip(header, cells, strict=True))
    params = _BENCH_PARAMS.fullmatch(cell.get("params", ""))
    ngl = cell.get("ngl", "")
    gpu_layers = 0 if cell.get("backend") == "CPU" else int(ngl) if ngl.isascii() and ngl.isdigit() and len(ngl) < 7 else None
    return (float(params.group(1)) * _BENCH_PARAM_UNITS[params.group(2)] if params else None), gpu_layers


def _unattributed(header: list[str], cells: list[str]) -> str:
    """Why a llama-bench ``tg`` row's model cannot be read (hostile79 item 5a), and what to give instead."""
    if not header:
        why = "no header line above it"
    elif len(cells) != len(header):
        why = f"{len(cells)} cells where its header has {len(header)}"
    elif "params" not in header:
        why = "its header has no params column"
    else:
        why = f"its params cell {short(cells[header.index('params')], 40)} is no parameter count"
    return (
        f"a llama-bench row whose model cannot be told ({why}): calibrate checks each row's model by its params cell and "
        "its layers on the GPU by ngl; give the table with its header line (| model | size | params | backend | ngl | "
        "test | t/s |)"
    )


#: How far apart two llama-bench runs of one setup may be (their t/s, of the lower) before they are two runs'
#: figures that no one constant fits (hostile79 item 5b); within it, both are compared.
BENCH_REPEAT_TOLERANCE = 0.10


def _repeated_bench_run(
    setup: tuple[str, ...], value: float, number: int, runs: dict[tuple[str, ...], tuple[float, int]], label: str, test: str
) -> bool:
    """Whether a llama-bench row repeats an earlier row's run (every cell but its t/s the same) with the same figure.

    A repeat whose figure is more than :data:`BENCH_REPEAT_TOLERANCE` from the first's is refused, naming both lines
    (hostile79 item 5b: the constant followed the last row, 0.3177 or 0.82 by the rows' order); the same figure again
    (a table pasted twice) is left out, the comparison saying it once.
    """
    first = runs.setdefault(setup, (value, number))
    if first[1] == number:
        return False
    low, high = sorted((first[0], value))
    if high > low * (1 + BENCH_REPEAT_TOLERANCE):
        apart = "" if low == 0 else f", {high / low - 1:.0%} apart"
        raise InputError(
            f"{label}:{number}: two llama-bench runs of {test} with one setup disagree: {_fmt(first[0])} t/s at line "
            f"{first[1]} and {_fmt(value)} t/s at line {number}{apart}; give one run's table (each run a --log of its own)"
        )
    return value == first[0]


def _fmt(value: float) -> str:
    return f"{value:,.2f}"


#: How far a llama-bench row's parameter count may be from the model's (it prints two places: 0.6% of a 1.5 B model)
#: before the row is another model's.
BENCH_PARAMS_TOLERANCE = 0.05


def bench_rows_of_this_setup(measured: list[Measurement], result: dict[str, Any]) -> tuple[list[Measurement], list[str]]:
    """``measured`` less the llama-bench rows run with another split of the layers than the prediction's, and why each went.

    hostile78 item 2: a row's own model and ``-ngl`` were never read, so a table of a 70B model, or of a run with every
    layer on the CPU (``-ngl 0``), fitted the GPU's ``decode_bandwidth_efficiency`` of an 8B model 5-10x low. A row of
    another model is refused (as another model's vLLM log is); a row whose GPU held another number of layers than the
    prediction puts there (all of them, or the split of an offload) is left out, as an ``-nkvo 1`` row is.
    """
    params = result.get("params") or {}
    # llama-bench's params is llama_model_n_params, the elements of every tensor in the GGUF: an MoE's every expert
    # (review78 item 4: a dense 3.21 B row matched Qwen3-30B-A3B's 3.34 B active and was fitted), and a vision-language
    # model's text model alone, its projector being a file of its own (Gemma 3 27B: 27.43 B with SigLIP, 27.01 B)
    text = float(params.get("text") or params.get("total") or 0)
    layers = int((result.get("model") or {}).get("layers") or 0)
    split = (result.get("offload") or {}).get("layers")
    on_gpu = sum(1 for place in split if not str(place).startswith("cpu")) if isinstance(split, list) else layers
    kept, left_out = [], []
    for m in measured:
        if m.params is not None and text and abs(m.params / text - 1) > BENCH_PARAMS_TOLERANCE:
            raise InputError(
                f"{_at(m)}a llama-bench row of a model of {m.params / 1e9:,.2f} B parameters ({short(m.line, 120)}), not "
                f"this model's {text / 1e9:,.2f} B: give the model the run loaded"
            )
        if m.gpu_layers is not None and layers and min(m.gpu_layers, layers) != on_gpu:
            run = f"-ngl {on_gpu}" if on_gpu < layers else "-ngl 99, or give the estimate the run's machine (--ram-gib, --cpu)"
            left_out.append(
                f"{_at(m)}left out: the llama-bench row ran {min(m.gpu_layers, layers)} of the model's {layers} layers on "
                f"the GPU (-ngl {m.gpu_layers}), the prediction {on_gpu}; compare a run of {run}"
            )
            continue
        kept.append(m)
    return kept, left_out


def _nvidia_smi(text: str, label: str) -> list[Measurement]:
    """``memory.used`` of the GPU using the most in an ``nvidia-smi --query-gpu`` CSV with a header line (:mod:`.smi_csv`).

    fuzz32 item 11: the first row alone was read, so an idle GPU 0 beside the model on GPU 1 was taken for the run's.
    The row holding the most is the GPU serving the model (a tensor-parallel run's GPUs hold the same); the first of
    equal rows is kept.
    """
    rows = memory_used_bytes(text, label)
    if not rows:
        return []
    used, line, where = max(rows, key=lambda row: row[0])  # max keeps the first of equal rows
    return [Measurement("gpu_memory_used_gib", used / GIB, line, where)]


#: Option of the run -> (where vLLM prints it: command-line flags, ``non-default args`` key, engine-config key).
_RUN_KEYS: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "model": (("--model",), ("model", "model_tag"), ("model",)),
    "gpu_memory_utilization": (("--gpu-memory-utilization",), ("gpu_memory_utilization",), ()),
    "max_model_len": (("--max-model-len",), ("max_model_len",), ("max_seq_len",)),
    "tensor_parallel_size": (("--tensor-parallel-size", "-tp"), ("tensor_parallel_size",), ("tensor_parallel_size",)),
    "kv_cache_dtype": (("--kv-cache-dtype",), ("kv_cache_dtype",), ("kv_cache_dtype",)),
    "quantization": (("--quantization", "-q"), ("quantization",), ("quantization",)),
    # both move vLLM's profiling reservation, so the KV tokens a run logs (review 9 M3)
    "max_num_batched_tokens": (("--max-num-batched-tokens",), ("max_num_batched_tokens",), ()),
    "max_num_seqs": (("--max-num-seqs",), ("max_num_seqs",), ()),
}
#: vLLM's "Maximum concurrency for 2,048 tokens per request: 10.79x": the context it divides the KV cache by.
_CONCURRENCY = "Maximum concurrency for "
_COMMAND = re.compile(r"(?:\bvllm serve|vllm\.entrypoints\.openai\.api_server|vllm\.entrypoints\.api_server)\b(.*)")
#: Where vLLM's settings lines begin: ``non-default args: {...}`` and ``LLM engine (v...) with config: ...``.
_NON_DEFAULT = "non-default args: {"
_ENGINE_CONFIG = ("LLM engine (v", ") with config: ")
#: Longest line read for run settings (vLLM's are a few KB, an inline chat template makes them longer): longer ones
#: are skipped, not scanned (fuzz13 item 2), and said so (review 12 item 8).
_SETTINGS_LINE_CHARS = 1 << 20


def _settings_text(line: str, column: int) -> str | None:
    """The text of vLLM's ``non-default args`` dict (``column`` 1) or engine config (2) on ``line``, else None.

    Found by position, not by a pattern that backtracks over a long line.
    """
    if column == 1:
        start, end = line.find(_NON_DEFAULT), line.rfind("}")
        return line[start + len(_NON_DEFAULT) : end] if 0 <= start < end else None
    start = line.find(_ENGINE_CONFIG[0])
    config = line.find(_ENGINE_CONFIG[1], start) if start >= 0 else -1
    return line[config + len(_ENGINE_CONFIG[1]) :] if config >= 0 else None


class RunSetting(NamedTuple):
    """One setting of the run a log describes, the line it was read from and that line's 1-based number."""

    value: str
    line: str
    number: int = 0


class TakenSetting(NamedTuple):
    """An estimate option filled from the run's log: ``--tp 3`` from ``tensor_parallel_size`` at ``v3.log:1``."""

    flag: str
    value: Any
    setting: str
    where: str

    @property
    def note(self) -> str:
        """What a report's notes say of it."""
        return f"{self.flag} {self.value} (the run's {self.setting}, from the log)"

    def blamed(self, message: str) -> str | None:
        """``message`` (an estimate error naming this option) said of the log's line, or None if it names no such option.

        fuzz31 item 15: "--tp 3 does not divide ..." was said of an option never typed, without the log's file and line.
        """
        said = re.compile(rf"{re.escape(self.flag)} {re.escape(str(self.value))}(?![\w.])")
        if said.search(message) is None:
            return None
        return f"{self.where}: " + said.sub(lambda _: f"the run's {self.setting} {self.value}", message, count=1)


def _command_words(line: str) -> tuple[dict[str, str], list[str]] | None:
    """The flags and positional words of a ``vllm serve`` / api_server command on ``line``; None where it holds none.

    A flag given twice keeps its last value, as vLLM's argument parser does (``--max-model-len 8192 --max-model-len 4096``).
    """
    import shlex

    command = _COMMAND.search(line)
    if command is None:
        return None
    try:
        words = shlex.split(command.group(1))
    except ValueError:
        words = command.group(1).split()
    flags: dict[str, str] = {}
    positional: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word.startswith("-"):
            key, eq, value = word.partition("=")
            if not eq and i + 1 < len(words) and not words[i + 1].startswith("--"):
                value, i = words[i + 1], i + 1
            flags[key] = value
        else:
            positional.append(word)
        i += 1
    return flags, positional


def check_one_run_command(text: str, label: str) -> None:
    """Raise InputError where two runs' settings in one log differ: ``vllm serve`` command lines, ``non-default args``.

    hostile81 item 7: a log holding ``vllm serve ... --max-model-len 8192 --gpu-memory-utilization 0.9`` and, further
    on, ``... --max-model-len 4096 --gpu-memory-utilization 0.5`` (two runs appended) was predicted with the first
    line's settings without a word, where two runs' KV cache sizes in one log are refused (fuzz27 L2).
    hostile82 item 4: two vLLM start-ups appended print no command line but each its ``non-default args: {...}``, and
    runs at 8,192 and 4,096 tokens of context log the same KV cache size (the pool is the memory's, not the context's),
    so neither check said it; those lines are compared too, with the command lines (one run prints both, alike). A
    figure written two ways (``0.9``, ``0.90``) is one value.
    """
    seen: dict[str, tuple[str, int]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if len(line) > _SETTINGS_LINE_CHARS:
            continue
        for name, value in _line_run_settings(line):
            first = seen.setdefault(name, (value, number))
            if not _same_setting(name, first[0], value):
                raise InputError(
                    f"{label}:{number}: the log holds the settings of two runs ({name} {short(first[0], 40)} at "
                    f"line {first[1]}, {short(value, 40)} here): give each run a log of its own"
                )


def _line_run_settings(line: str) -> list[tuple[str, str]]:
    """The run settings a ``vllm serve`` command line or a ``non-default args: {...}`` line on ``line`` gives."""
    out: list[tuple[str, str]] = []
    command = _command_words(line)
    if command is not None:
        flags, positional = command
        for name, (options, _, _) in _RUN_KEYS.items():
            value = next((flags[o] for o in options if o in flags), None)
            if value is None and name == "model" and "vllm serve" in line and positional:
                value = positional[0]
            if value is not None:
                out.append((name, value))
    settings = _settings_text(line, 1)
    if settings is not None:
        top = _top_level(settings)  # the run's own: a draft model's nested max_model_len is not
        for name, (_, keys, _) in _RUN_KEYS.items():
            for key in keys:
                got = re.search(rf"'{re.escape(key)}':\s*('[^']*'|[^,}}\s]+)", top)
                if got and got.group(1).strip("'") not in ("", "None"):
                    out.append((name, got.group(1).strip("'")))
                    break
    return out


def _same_setting(name: str, first: str, value: str) -> bool:
    """Whether two lines give a run setting the same value: numbers as numbers (:data:`_NUMBER_SETTINGS`), else the text."""
    if first == value:
        return True
    read = _NUMBER_SETTINGS.get(name)
    if read is None:
        return False
    try:
        return read(first) == read(value)
    except ValueError:  # not a number either way: the text differs
        return False


def parse_run_settings(text: str) -> dict[str, RunSetting]:
    """The run's model, memory utilization, max model length, TP, KV dtype, quantization and batch limits, where printed.

    Read from the ``vllm serve`` command line, vLLM's ``non-default args: {...}`` line and its ``Initializing a
    V1 LLM engine (v...) with config: model='...', max_seq_len=..., ...`` line; the first place wins.
    """
    found: dict[str, RunSetting] = {}

    def put(name: str, value: str, line: str) -> None:
        if name not in found and value not in ("", "None"):
            found[name] = RunSetting(value, line.strip(), number)

    for number, line in enumerate(text.splitlines(), 1):  # noqa: B007 (put reads number)
        if len(line) > _SETTINGS_LINE_CHARS:
            continue
        if (at := line.find(_CONCURRENCY)) >= 0:  # "for 2048 tokens per request": the run's max_model_len (fuzz21 item 3)
            put("max_model_len", line[at + len(_CONCURRENCY) :].split(" ", 1)[0].replace(",", ""), line)
        command = _command_words(line)
        if command is not None:
            flags, positional = command
            if "vllm serve" in line and positional:
                put("model", positional[0], line)
            for name, (options, _, _) in _RUN_KEYS.items():
                for option in options:
                    if option in flags:
                        put(name, flags[option], line)
        for column, form in ((1, r"'{key}':\s*('[^']*'|[^,}}\s]+)"), (2, r"\b{key}=('[^']*'|[^,\s]+)")):
            settings = _settings_text(line, column)
            if settings is not None:
                # the run's own settings only: a nested one (a draft model's max_model_len) is not the run's
                top = _top_level(settings)
                for name, keys in _RUN_KEYS.items():
                    for key in keys[column]:
                        got = re.search(form.format(key=re.escape(key)), top)
                        if got:
                            put(name, got.group(1).strip("'"), line)
    return found


def unread_settings_lines(text: str, label: str) -> list[str]:
    """Notes of the lines left unread: settings lines too long to read, and vLLM's periodic throughput lines."""
    notes = [
        f"{label}: line {number} ({len(line):,} characters) is longer than the {_SETTINGS_LINE_CHARS:,} read for run "
        "settings; give its settings on the command line"
        for number, line in enumerate(text.splitlines(), 1)
        if len(line) > _SETTINGS_LINE_CHARS
        and (_COMMAND.search(line[:4096]) or _NON_DEFAULT in line or _ENGINE_CONFIG[1] in line)
    ]
    available = next((n for n, line in enumerate(text.splitlines(), 1) if _VLLM_AVAILABLE in line), None)
    if available is not None:  # newuser74 item 6 (LOW): a figure vLLM prints, left out unsaid
        notes.append(
            f"{label}: vLLM's 'Available KV cache memory' (line {available:,}) not compared: the KV cache tokens it "
            "holds are ('GPU KV cache size': those bytes over the model's KV bytes a token)"
        )
    stats = [number for number, line in enumerate(text.splitlines(), 1) if _VLLM_STATS in line]
    if stats:  # newuser74 item 16: the line was dropped unsaid
        lines = ", ".join(str(n) for n in stats[:3]) + (f" and {len(stats) - 3:,} more" if len(stats) > 3 else "")
        notes.append(
            f"{label}: vLLM's throughput stats (line {lines}, 'Avg generation throughput') not compared: each is a "
            "10 s window's average over whatever batch ran, prefills and idle time included, not a decode step at a "
            "known batch; give a llama-bench table or llama.cpp timings to fit the decode speed"
        )
    return notes


def _top_level(text: str) -> str:
    """``text`` with everything inside brackets blanked out (quoted text kept whole), so a key found is a top-level one."""
    out = []
    depth, quote, escaped = 0, "", False
    for char in text:
        if quote:  # a backslash in a quoted string escapes the next character, a quote included (fuzz13 item 11)
            quote = "" if char == quote and not escaped else quote
            escaped = char == "\\" and not escaped
        elif char in "'\"":
            quote = char
        elif char in "{[(":
            depth += 1
        elif char in "}])":
            depth = max(0, depth - 1)
            out.append(" ")
            continue
        out.append(char if depth == 0 else " ")
    return "".join(out)


def model_key(name: str) -> str:
    """A model name without organisation, fine-tune and quantization words, to compare a log's model with the command's.

    ``neuralmagic/Meta-Llama-3.1-70B-Instruct-quantized.w8a8`` and ``meta-llama/Llama-3.1-70B-Instruct`` are both
    ``llama-3.1-70b``.
    """
    key = name.rstrip("/").rsplit("/", 1)[-1].lower()
    key = re.sub(r"^meta-", "", key)
    key = re.split(r"[-_.](?:quantized|fp8|int8|int4|w8a8|w4a16|w8a16|awq|gptq|bnb|gguf|nvfp4|mxfp4)\b", key)[0]
    return re.sub(r"[-_](?:instruct|chat|hf|it|base)$", "", key)


#: vLLM ``--kv-cache-dtype`` -> the estimate's ``--kv-precision`` (``auto``: the model's dtype, the default).
_KV_DTYPES = {"fp8": "fp8", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8"}
#: vLLM ``--quantization`` -> the estimate's ``--precision`` where one format is meant.
_QUANTIZATIONS = {"fp8": "fp8", "awq": "int4", "awq_marlin": "int4", "gptq": "int4", "gptq_marlin": "int4"}


#: Values of a run's setting that leave the engine's default (nothing to read into an option).
_ENGINE_DEFAULTS = frozenset({"auto", "none", "null", ""})
#: Figures that do not depend on the model served (the GPU's memory x the utilization).
_MODEL_FREE = frozenset({"gpu_memory_used_gib"})


#: The numeric run settings read from a log, with the open-closed range a run can have them in.
_RUN_BOUNDS: dict[str, tuple[float, float]] = {
    "gpu_memory_utilization": (0.001, 1),  # as the gpu_memory_utilization constant
    "max_model_len": (1, 2**24),
    "tensor_parallel_size": (1, 1024),
    "max_num_batched_tokens": (1, 2**24),  # as the workload schema bounds them
    "max_num_seqs": (1, 2**24),
}


def _whole(text: str) -> int:
    """A count the log prints, in ASCII digits (a ValueError otherwise, as ``int`` raises)."""
    if (count := ascii_count(text, 9)) is None:
        raise ValueError(text)
    return count


def _decimal(text: str) -> float:
    """A fraction the log prints, in ASCII digits."""
    if not re.fullmatch(r"[0-9]{0,9}\.?[0-9]{1,9}(e-?[0-9]{1,3})?", text.strip()):
        raise ValueError(text)
    return float(text)


#: The run settings that are numbers, read as :func:`apply_run_settings` reads them: two command lines agree on one
#: where the numbers do (review81 item 13: ``--gpu-memory-utilization 0.9`` and ``0.90`` were refused as two runs by
#: hostile81 item 7's check). The others (model, KV dtype, quantization) are compared as the text given.
_NUMBER_SETTINGS: dict[str, Callable[[str], float]] = {
    "gpu_memory_utilization": _decimal,
    "max_model_len": _whole,
    "tensor_parallel_size": _whole,
    "max_num_batched_tokens": _whole,
    "max_num_seqs": _whole,
}


def apply_run_settings(
    args: Any, defaults: dict[str, Any], settings: dict[str, RunSetting], label: str, figures: set[str]
) -> tuple[list[TakenSetting], list[str]]:
    """Fill the estimate options the command left at their defaults from the run's settings.

    Returns the options taken, and notes of the settings not read.

    An option the command gives that the run contradicts (another model, utilization, context, TP, KV dtype,
    quantization, tokens a forward pass or sequences) is an input error: the comparison would be of two different
    setups. The model is checked where one of the log's ``figures`` depends on it.
    """
    notes: list[str] = []
    taken: list[TakenSetting] = []
    model_matters = bool(figures - _MODEL_FREE)
    if model_matters and "model" in settings and model_key(settings["model"].value) != model_key(args.model):
        served = settings["model"]
        raise InputError(
            f"{label}:{served.number}: the run served {short(served.value)} ({short(served.line, 120)}), the command "
            f"names '{args.model}': calibrate against the model the run served"
        )
    wanted: list[tuple[str, str, str, Any]] = []  # (setting, option dest, option flag, value)
    for setting, dest, flag, convert in (
        ("gpu_memory_utilization", "gpu_memory_utilization", "--gpu-memory-utilization", _decimal),
        ("max_model_len", "context_tokens", "--context", _whole),
        ("tensor_parallel_size", "tp", "--tp", _whole),
        ("kv_cache_dtype", "kv_precision", "--kv-precision", _KV_DTYPES.get),
        ("quantization", "precision", "--precision", _QUANTIZATIONS.get),
        ("max_num_batched_tokens", "max_batched_tokens", "--max-batched-tokens", _whole),
        ("max_num_seqs", "max_num_seqs", "--max-num-seqs", _whole),
    ):
        if setting not in settings:
            continue
        try:
            value = convert(settings[setting].value)
        except ValueError:
            line = short(settings[setting].line, 120)
            at = f"{label}:{settings[setting].number}"
            raise InputError(f"{at}: cannot read {setting} {short(settings[setting].value)} ({line})") from None
        raw = str(settings[setting].value).strip("'\"").lower()
        if value is None and raw not in _ENGINE_DEFAULTS:  # fuzz26 L5: an unknown dtype was compared unsaid
            notes.append(
                f"the run's {setting} {short(settings[setting].value)} is not one specgen reads: compared with the "
                f"command's {flag} ({short(settings[setting].line, 120)})"
            )
        if value is not None:
            bounds = _RUN_BOUNDS.get(setting)
            if bounds is not None and isinstance(value, int | float) and not bounds[0] <= value <= bounds[1]:
                line = short(settings[setting].line, 120)
                raise InputError(
                    f"{label}:{settings[setting].number}: the run's {setting} {value} ({line}) is not one a run can have"
                )
            wanted.append((setting, dest, flag, value))
    for setting, dest, flag, value in wanted:
        given = getattr(args, dest)
        if given is not None and given != defaults.get(dest) and given != value:
            raise InputError(
                f"{label}:{settings[setting].number}: the run used {setting} {value} ({short(settings[setting].line, 120)}), "
                f"the command gives {flag} "
                f"{given}: drop {flag} or give the run's value"
            )
        if given != value:
            setattr(args, dest, value)
            taken.append(TakenSetting(flag, value, setting, f"{label}:{settings[setting].number}"))
    return taken, notes


#: A measured weights figure further than this from the prediction means another model or format was loaded.
WEIGHTS_TOLERANCE = 0.05


def check_same_weights(rows: list[dict[str, Any]], measured: list[Measurement]) -> None:
    """Refuse a comparison whose loaded weights differ from the prediction's by more than :data:`WEIGHTS_TOLERANCE`.

    ``measured``: the log's figures the rows were made of, whose ``file:line`` the error begins with (hostile90).
    """
    for row in rows:
        if row["figure"] == "weights_gib" and abs(row["error"]) > WEIGHTS_TOLERANCE:
            at = next((_at(m) for m in measured if m.name == "weights_gib" and m.value == row["measured"]), "")
            raise InputError(
                f"{at}the run loaded {row['measured']:.2f} GiB of weights, the prediction {row['predicted']:.2f} GiB "
                f"({row['error']:+.1%}): another model or precision than the command's; give the model and --precision "
                "the run served (no constant is fitted across different setups)"
            )


#: A fitted ``non_torch_bytes`` above this share of the GPU's memory is no runtime's: vLLM logs 0.25-1.8 GiB (the
#: constant's source); a KV figure that far off was measured on another setup (fuzz21 item 3: 53 GB on an 80 GB GPU).
MOST_NON_TORCH_SHARE = 0.25


def check_plausible_fit(rows: list[dict[str, Any]], constants: dict[str, float], result: dict[str, Any]) -> None:
    """Refuse a ``non_torch_bytes`` fit above :data:`MOST_NON_TORCH_SHARE` of the GPU: another setup's KV figures."""
    gpu_bytes = (result.get("capacity") or {}).get("gpu_memory_bytes")
    fitted = constants.get("non_torch_bytes")
    if fitted is None or not gpu_bytes or fitted <= MOST_NON_TORCH_SHARE * gpu_bytes:
        return
    kv = next(row for row in rows if row["figure"] == "kv_cache_tokens")
    raise InputError(
        f"the run held {kv['measured']:,.0f} KV cache tokens, the prediction {kv['predicted']:,.0f} ({kv['error']:+.1%}): "
        f"fitting that would put {fitted / GIB:.1f} GiB outside PyTorch on a {gpu_bytes / GIB:.1f} GiB GPU (more than "
        f"{MOST_NON_TORCH_SHARE:.0%}); another model, precision, --context, --tp or --gpu-memory-utilization than the "
        "run's: give the ones it served (no constant is fitted across different setups)"
    )


def predicted(result: dict[str, Any]) -> dict[str, float]:
    """The estimate's figures under the measurement names."""
    per_gpu = result["memory"]["per_gpu"]
    out: dict[str, float] = {
        "weights_gib": result["weights"]["bytes_per_gpu"] / GIB,
        # what PyTorch's allocator holds: everything but the runtime's own (CUDA context, NCCL, graphs)
        "torch_peak_allocated_gib": (per_gpu["total"] - per_gpu["overhead"]) / GIB,
    }
    cap = result.get("capacity") or {}
    if "kv_cache_tokens" in cap:
        # the engine logs one data-parallel rank's pool and concurrency
        out["kv_cache_tokens"] = cap["kv_cache_tokens_per_dp_rank"]
        out["max_concurrency"] = cap["max_concurrency_per_dp_rank"]
        out["gpu_memory_used_gib"] = cap["gpu_memory_bytes"] * result["constants"]["gpu_memory_utilization"] / GIB
    if "decode_tokens_per_s" in (result.get("throughput") or {}):
        out["decode_tokens_per_s"] = decode_speed(result)
    return out


def decode_speed(result: dict[str, Any]) -> float:
    """The decode tokens/s a log's figure is compared with: on GPUs the decode-only step's, else the machine's stream.

    A log's decode figure is a benchmark's decode (llama-bench ``tg``, a generation throughput), no prompts riding along.
    """
    thr = result["throughput"]
    return float(thr.get("decode_step_tokens_per_s", thr["decode_tokens_per_s"]))


def _at(m: Measurement) -> str:
    """``s7.csv:2: ``: where a measurement was read, as the other log errors begin (fuzz32 item 11); '' where unknown."""
    return f"{m.where}: " if m.where else ""


def compare(measured: list[Measurement], result: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per measured figure the prediction has: measured, predicted, error (predicted / measured - 1)."""
    pred = predicted(result)
    rows = []
    for m in measured:
        if m.name == "gpu_memory_used_gib" and "gpu_memory_used_gib" in pred and m.value < pred["weights_gib"]:
            # a GPU serving the model holds at least its weights: the CSV was taken when it was not loaded
            raise InputError(
                f"{_at(m)}nvidia-smi shows {m.value:.2f} GiB used ({short(m.line, 120)}), less than this model's weights alone "
                f"({pred['weights_gib']:.2f} GiB a GPU): take the CSV while the model is served"
            )
        if m.name == "torch_peak_allocated_gib" and "weights_gib" in pred and m.value < pred["weights_gib"]:
            # torch's allocated peak holds the weights it loaded: a smaller one is another run's, or no run's
            raise InputError(
                f"{_at(m)}the torch memory summary's allocated peak is {m.value:.2f} GiB ({short(m.line, 120)}), less than this "
                f"model's weights alone ({pred['weights_gib']:.2f} GiB a GPU): not a run of this model"
            )
        if m.name in pred and m.value:
            rows.append(
                {
                    "figure": m.name,
                    "measured": m.value,
                    "predicted": round(pred[m.name], 4),
                    "error": round(pred[m.name] / m.value - 1, 4),
                    "line": m.line,
                }
            )
    return rows


def _why_none_compared(measured: list[Measurement], args: Any) -> tuple[str, str]:
    """What the command lacks for the figures a log gave to be compared (none was), and the ``file:line: `` it is of.

    The place is '' where the reason is of no one line.
    """
    if not args.gpu:
        return "", "give --gpu (and --ram-gib for an existing machine)"
    zero = next((m for m in measured if not m.value), None)
    if zero is not None and all(not m.value or m.name == zero.name for m in measured):
        # hostile90: the log's line named, as every other figure's error names it
        return _at(zero), f"the log's {zero.name} is 0 ({short(zero.line, 120)}): nothing to compare"
    if any(m.name == "decode_tokens_per_s" for m in measured) and args.ram_gib is None:
        return "", "decode tokens/s is predicted with --input-tokens and --output-tokens (or for an existing machine, --ram-gib)"
    return "", "give the setup the run used (--gpu, --tp, --context, and --ram-gib for an existing machine)"


def fitted_constants(
    rows: list[dict[str, Any]],
    result: dict[str, Any],
    current: dict[str, float],
    predict: Callable[[dict[str, float]], dict[str, Any]],
) -> dict[str, float]:
    """The constants that make this setup's prediction match the run (see the module docstring).

    Decode time is ``a / efficiency + b`` (bandwidth-bound bytes plus fixed per-step costs): two
    predictions (``predict`` with overridden constants) give ``a`` and ``b``, and the efficiency
    that yields the measured time follows; capped at 1.
    """
    from generator.sizing.constants import with_overrides

    consts = with_overrides(current)
    out: dict[str, float] = {}
    by_name = {row["figure"]: row for row in rows}
    kv = by_name.get("kv_cache_tokens")
    if kv is not None:
        per_token = result["kv_cache"]["bytes_per_token"] / result["parallelism"]["tp"]
        extra = (kv["predicted"] - kv["measured"]) * per_token
        out["non_torch_bytes"] = max(0, int(consts.non_torch_bytes + extra))
    speed = by_name.get("decode_tokens_per_s")
    if speed is not None:
        offload = result.get("offload") or {}
        mode = offload.get("mode", "gpu")
        if mode == "gpu" and result["throughput"].get("decode_step_bound") == "compute":
            out.update(_fit_gemm_half_efficiency(speed, current, consts.gemm_half_efficiency_tokens, predict))
            return out
        if mode == "gpu" and offload:  # llama.cpp's own step, every layer on the GPUs (generator/sizing/llama_cpp_gpu.py)
            out.update(_fit_llama_cpp_gpu(speed, offload["bound"], current, consts, predict))
            return out
        name = "decode_bandwidth_efficiency" if mode in ("gpu", "pcie-stream") else "ddr_bandwidth_efficiency"
        e0 = getattr(consts, name)
        t0 = 1 / speed["predicted"]
        t1 = 1 / decode_speed(predict({**current, name: e0 / 2}))
        a = (t1 - t0) * e0  # t(e) = a / e + b: t1 - t0 = a / e0
        b = t0 - a / e0
        target = 1 / speed["measured"]
        out[name] = round(min(1.0, a / (target - b)), 4) if target > b and a > 0 else 1.0
    return out


def _fit_llama_cpp_gpu(
    speed: dict[str, Any],
    bound: str,
    current: dict[str, float],
    consts: Any,
    predict: Callable[[dict[str, float]], dict[str, Any]],
) -> dict[str, float]:
    """The constant of llama.cpp's all-on-GPU decode step that binds it, solved for the measured time.

    The layers' kernels' floor a layer (``engine``-bound: the step is linear in it) or the memory's rate (the
    efficiency, or the read ceiling where that caps it: the step is ``a / rate + b``), from two predictions; an
    efficiency capped at 1.
    """
    target = 1 / speed["measured"]
    t0 = 1 / speed["predicted"]
    if bound == "engine":
        x0 = consts.llama_cpp_layer_launch_s
        t1 = 1 / decode_speed(predict({**current, "llama_cpp_layer_launch_s": x0 * 0.9}))
        slope = (t0 - t1) / (x0 * 0.1)
        value = x0 + (target - t0) / slope if slope > 0 else x0
        return {"llama_cpp_layer_launch_s": max(0.0, float(f"{value:.4g}"))}
    # a MXFP4_MOE file's MXFP4 experts' efficiency (acc187: the share that sets gpt-oss's step, its Q8_0 matrices
    # beside them), the quantized files' efficiency, a 16-bit file's (its float mat-vec kernel, acc165), else the
    # ceiling: the first that moves the step binds it
    rates = (
        "llama_cpp_gpu_mxfp4_bandwidth_efficiency",
        "llama_cpp_gpu_bandwidth_efficiency",
        "llama_cpp_gpu_16bit_bandwidth_efficiency",
        "llama_cpp_gpu_read_ceiling_gb_per_s",
    )
    for name in rates:
        rate = getattr(consts, name)
        t1 = 1 / decode_speed(predict({**current, name: rate * 0.9}))
        a = (t1 - t0) / (1 / (rate * 0.9) - 1 / rate)  # t(r) = a / r + b
        if a > 1e-12 * t0 * rate:  # this rate binds (the ceiling caps a fast memory: the efficiency moves nothing)
            break
    b = t0 - a / rate
    efficiency = name.endswith("efficiency")
    if not (target > b and a > 0):
        return {name: 1.0} if efficiency else {}
    value = a / (target - b)
    return {name: round(min(1.0, value), 4) if efficiency else round(value, 1)}


def _fit_gemm_half_efficiency(
    speed: dict[str, Any],
    current: dict[str, float],
    h0: float,
    predict: Callable[[dict[str, float]], dict[str, Any]],
) -> dict[str, float]:
    """``gemm_half_efficiency_tokens`` for a compute-bound decode step (small-batch GEMMs).

    The GEMM time over ``b`` rows is proportional to ``(b + h)``: linear in ``h``, so two predictions
    give the slope and the ``h`` that yields the measured time follows; at least 0.
    """
    t0 = 1 / speed["predicted"]
    t1 = 1 / decode_speed(predict({**current, "gemm_half_efficiency_tokens": 2 * h0}))
    slope = (t1 - t0) / h0
    if slope <= 0:
        return {}
    return {"gemm_half_efficiency_tokens": round(max(0.0, h0 + (1 / speed["measured"] - t0) / slope), 4)}


def on_bound(name: str, value: float) -> str | None:
    """The bound of ``name``'s allowed range that ``value`` sits on or beyond (``constants.CONSTANT_BOUNDS``), else None."""
    from generator.sizing.constants import CONSTANT_BOUNDS

    low, _, high, _ = CONSTANT_BOUNDS.get(name, (None, True, None, True))
    if low is not None and value <= low:
        return f"its lower bound {low:g}"
    if high is not None and value >= high:
        return f"its upper bound {high:g}"
    return None


def identifiable(constants: dict[str, float]) -> tuple[dict[str, float], list[str]]:
    """The fitted constants inside their ranges, and a note for each stuck on a bound (never recommended).

    A fit on a bound (``non_torch_bytes`` 0, an efficiency of 1) says the run differs from the prediction by more
    than that constant can express: the data do not identify it.
    """
    kept, notes = {}, []
    for name, value in constants.items():
        bound = on_bound(name, value)
        if bound is None:
            kept[name] = value
        else:
            notes.append(
                f"{name} is not identifiable from this run: its fit sits on {bound}; the gap comes from something "
                "the constant does not model (check the model, --precision, --context and the memory utilization)"
            )
    return kept, notes


def yaml_number(value: float) -> str:
    """``value`` as YAML 1.1 and YAML 1.2 both read it: ``1e-05`` is text to YAML 1.1, ``1.0e-05`` the number.

    The workload loader refuses a number the two read differently (fuzz31 item 10), so a pasted block must not hold one.
    """
    text = json.dumps(value)
    mantissa, e, exponent = text.partition("e")
    if not e:
        return text
    return f"{mantissa if '.' in mantissa else mantissa + '.0'}e{exponent if exponent[0] in '+-' else '+' + exponent}"


def constants_block(constants: dict[str, float], notes: list[str] | None = None) -> str:
    """A ``constants:`` block for a workload file (JSON scalars are valid YAML); a comment when none is fitted."""
    comments = [f"# {note}" for note in notes or []]
    if not constants:
        if comments:
            return "\n".join([CALIBRATE_NONE_HEADER, *comments]) + "\n"
        return CALIBRATE_NO_FIT_HEADER + "\n"
    lines = [CALIBRATE_HEADER]
    lines += comments
    lines.append("constants:")
    lines += [f"  {name}: {yaml_number(value)}" for name, value in sorted(constants.items())]
    return "\n".join(lines) + "\n"


def report(rows: list[dict[str, Any]]) -> str:
    """The comparison as a table."""
    lines = [f"{'figure':<22} {'measured':>14} {'predicted':>14} {'error':>8}"]
    lines += [f"{r['figure']:<22} {r['measured']:>14,.2f} {r['predicted']:>14,.2f} {r['error']:>+8.1%}" for r in rows]
    return "\n".join(lines) + "\n"


def json_report(rows: list[dict[str, Any]], constants: dict[str, float], constant_notes: list[str], notes: list[str]) -> str:
    """``--json``: the comparison, the fitted constants and the notes as one JSON object (the README documents its keys).

    ``rows``: figure, measured, predicted, error (predicted / measured - 1) and the log line; ``constants``: the fitted
    engine constants by name (what the ``constants:`` block holds, ``{}`` where none is fitted); ``constant_notes``: why
    a fitted constant is not recommended; ``notes``: the settings read from the logs and the lines left unread.
    """
    doc = {"rows": rows, "constants": dict(sorted(constants.items())), "constant_notes": constant_notes, "notes": notes}
    return json.dumps(doc, indent=2) + "\n"


#: Estimate options that answer a question calibrate does not ask (fuzz20 item 13): no log figure is compared with them.
UNUSED_OPTIONS = {
    "max_seq_len": "--max-seq-len (the longest sequence that fits)",
    "dataset_tokens": "--dataset-tokens (a run's hours)",
    "epochs": "--epochs (a run's hours)",
}


#: Why ``--engine sglang`` and ``--mem-fraction-static`` are refused (newuser74 items 5-6).
SGLANG_REFUSED = (
    'calibrate compares vLLM and llama.cpp runs only: it reads vLLM\'s start-up lines ("GPU KV cache size", "Model '
    'loading took") and fits vLLM\'s constants, and does not read SGLang\'s ("KV Cache is allocated. #tokens", '
    '"max_total_num_tokens"); a vLLM log compared with SGLang\'s mem_fraction_static pool would fit a wrong '
    "non_torch_bytes. Leave it out and give a vLLM or llama.cpp run's log"
)


def refuse_unused_options(parser: Any, args: Any) -> None:
    """A usage error (exit 2) for each estimate option given that calibrate would ignore, and for SGLang's."""
    asked = (("--engine sglang", args.engine == "sglang"), ("--mem-fraction-static", args.mem_fraction_static is not None))
    sglang = [text for text, given in asked if given]
    if sglang:
        parser.error(f"{', '.join(sglang)}: {SGLANG_REFUSED}")
    given = [text for dest, text in UNUSED_OPTIONS.items() if getattr(args, dest) not in (None, False)]
    if given:
        parser.error(
            f"{', '.join(given)}: calibrate compares a run's log with the memory, KV cache and decode speed predicted "
            "for its setup, and does not use this; leave it out"
        )


def main(argv: list[str] | None = None) -> int:
    """Run ``specgen calibrate``; returns the exit code."""
    from generator.calculator import cli as estimate_cli
    from generator.calculator.estimate import estimate
    from generator.input_files import MAX_LOG_BYTES, decode_log, read_limited

    parser = estimate_cli.build_parser()
    parser.prog = "specgen calibrate"
    parser.description = "Compare what a run printed (--log, repeatable) with the prediction for the same setup."
    for action in parser._actions:  # refused below (refuse_unused_options): not offered in the help either
        if action.dest in UNUSED_OPTIONS or action.dest == "mem_fraction_static":
            action.help = argparse.SUPPRESS
        elif action.dest == "engine":
            action.help = "vllm only (the default): calibrate reads vLLM's log lines, not SGLang's"
    parser.add_argument("--log", action="append", required=True, help="a vLLM log, llama.cpp output or nvidia-smi CSV")
    parser.add_argument("-o", "--output", help="write the constants: block to this file (default: print it)")
    args = parser.parse_args(argv)
    if args.output is not None and not args.output.strip():  # hostile88: "-o ''" printed the block, without a word
        parser.error("-o/--output is empty: name the file the constants: block goes to (or leave -o out to print it)")
    if args.output == "-":  # hostile92: a file named '-' was written
        parser.error(f"-o/--output {dash_output('the file the constants: block goes to (or leave -o out to print it)')}")
    if any(not log.strip() for log in args.log):  # hostile89: "--log ''" read ": log not found", exit 1
        parser.error("--log is empty: name the run's log file")
    refuse_unused_options(parser, args)
    try:
        estimate_cli.build_request(parser, args)  # usage errors (exit 2) before any log is read
        measured = []
        taken: list[TakenSetting] = []
        unread: list[str] = []
        defaults = {dest: parser.get_default(dest) for dest in vars(args)}
        for path in args.log:
            # regular files only, size-limited: a device reads forever and a FIFO blocks (as for workload files)
            data = read_limited(path, MAX_LOG_BYTES, "log")
            text = decode_log(data, path)
            found = parse_log(text, path)
            check_one_run_command(text, path)
            measured += found
            took, unknown = apply_run_settings(args, defaults, parse_run_settings(text), path, {m.name for m in found})
            taken += took
            unread += unknown + unread_settings_lines(text, path)
        try:
            # a log is compared with the serving estimate's figures, a GGUF precision's too (its decode step, on the GPUs)
            request = estimate_cli.build_request(parser, args)._replace(engine_chosen=True)
            result = estimate(request)
        except InputError as exc:
            if not taken:
                raise
            # a value the log gave may be what the model does not take: say it of the log's line, else which came from it
            blamed = [said for setting in taken if (said := setting.blamed(exc.message)) is not None]
            if len(blamed) == 1:
                raise InputError(blamed[0]) from None
            located = "; ".join(f"{t.flag} {t.value} (the run's {t.setting}, {t.where})" for t in taken)
            raise InputError(f"{exc.message} (with {located})") from None
        measured, left_out = bench_rows_of_this_setup(measured, result)
        rows = compare(measured, result)
        if not rows:
            at, why = ("", left_out[0]) if left_out and not measured else _why_none_compared(measured, args)
            raise InputError(f"{at}none of the measured figures has a prediction: {why}")
        check_same_weights(rows, measured)

        def predict(constants: dict[str, float]) -> dict[str, Any]:
            return estimate(request._replace(constants=tuple(constants.items())))

        constants = fitted_constants(rows, result, dict(args.set), predict)
        check_plausible_fit(rows, constants, result)
        fitted, fit_notes = identifiable(constants)
        block = constants_block(fitted, fit_notes)
    except ArithmeticError as exc:
        print(f"specgen calibrate: error: {arithmetic_error(exc)}", file=sys.stderr)
        return 1
    except SpecgenError as exc:
        print(f"specgen calibrate: error: {one_line(str(exc))}", file=sys.stderr)
        return exc.exit_code
    notes = [*(f"predicted with {t.note}" for t in taken), *unread, *left_out]
    if args.json:
        sys.stdout.write(json_report(rows, fitted, fit_notes, notes))
    else:
        sys.stdout.write(report(rows))
        if notes:
            sys.stdout.write("\n" + "".join(f"note: {n}\n" for n in notes))
    if args.output:
        from generator.calculator.block_file import write_block

        try:
            write_block(args.output, block, args.log)
        except SpecgenError as exc:
            print(f"specgen calibrate: error: {one_line(str(exc))}", file=sys.stderr)
            return exc.exit_code
    elif not args.json:
        sys.stdout.write("\n" + block)
    return 0
