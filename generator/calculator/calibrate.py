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
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from typing import Any

from generator.errors import InputError, SpecgenError
from generator.named_tuple import NamedTuple

#: vLLM's default KV block size in tokens (``--block-size``), to turn "# GPU blocks" into tokens.
VLLM_BLOCK_TOKENS = 16
GIB = 2**30


class Measurement(NamedTuple):
    """One figure a run printed: what, its value, and the line it came from."""

    name: str
    value: float
    line: str


_PATTERNS = (
    # vLLM: "Loading model weights took 67.7229 GB" (V1 prints GiB values, older releases label them GB)
    ("weights_gib", re.compile(r"(?:Loading model weights|Model loading) took ([\d.]+) Gi?B")),
    ("kv_cache_tokens", re.compile(r"GPU KV cache size: ([\d,]+) tokens")),
    ("gpu_blocks", re.compile(r"# GPU blocks: (\d+)")),
    ("max_concurrency", re.compile(r"Maximum concurrency for [\d,]+ tokens per request: ([\d.]+)x")),
    # llama.cpp: "eval time = 1234.56 ms / 127 runs ( 9.72 ms per token, 102.87 tokens per second)"
    ("decode_tokens_per_s", re.compile(r"(?<!prompt )eval time =.*?([\d.]+) tokens per second")),
)


#: ``torch.cuda.memory_summary()``: the "Allocated memory" row's second column is the peak.
_TORCH_ALLOCATED = re.compile(r"\|\s*Allocated memory\s*\|\s*[\d.]+ [KMG]?i?B\s*\|\s*([\d.]+) ([KMG]?i?B)\s*\|")
#: ``nvidia-smi``'s default table prints each GPU's "Memory-Usage" as ``23859MiB / 24564MiB``.
_SMI_USAGE = re.compile(r"\b(\d+)MiB\s*/\s*\d+MiB")
_UNIT_BYTES = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "KB": 2**10, "MB": 2**20, "GB": 2**30}


def parse_log(text: str, label: str) -> list[Measurement]:
    """Every known figure in ``text`` (a vLLM log, llama.cpp output, llama-bench table, nvidia-smi CSV or table)."""
    found: list[Measurement] = []
    bench_header: list[str] = []
    for line in text.splitlines():
        if re.match(r"\|\s*model\s*\|", line):
            bench_header = _cells(line)
        for name, pattern in _PATTERNS:
            match = pattern.search(line)
            if match:
                value = float(match.group(1).replace(",", ""))
                if name == "gpu_blocks":
                    found.append(Measurement("kv_cache_tokens", value * VLLM_BLOCK_TOKENS, line.strip()))
                else:
                    found.append(Measurement(name, value, line.strip()))
        torch_peak = _TORCH_ALLOCATED.match(line)
        if torch_peak:
            size = float(torch_peak.group(1)) * _UNIT_BYTES[torch_peak.group(2)] / GIB
            found.append(Measurement("torch_peak_allocated_gib", size, line.strip()))
        for usage in _SMI_USAGE.finditer(line):
            found.append(Measurement("gpu_memory_used_gib", int(usage.group(1)) * 2**20 / GIB, line.strip()))
        # llama-bench names the test "tg128" (2024 on) or "tg 128" (2023 builds)
        bench = re.match(r"\|.*\|\s*tg ?\d+\s*\|\s*([\d.]+)\s*±", line)
        if bench and not _kv_cache_in_host_memory(bench_header, _cells(line)):
            found.append(Measurement("decode_tokens_per_s", float(bench.group(1)), line.strip()))
    found += _nvidia_smi(text)
    if not found:
        raise InputError(f"{label}: no vLLM, llama.cpp, nvidia-smi or torch memory-summary figure found")
    return found


def _cells(line: str) -> list[str]:
    """The cells of a markdown table row."""
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _kv_cache_in_host_memory(header: list[str], cells: list[str]) -> bool:
    """A llama-bench row run with ``-nkvo 1``: the KV cache stays in host memory, a setup the estimate does not model."""
    if "nkvo" not in header or len(cells) != len(header):
        return False
    return cells[header.index("nkvo")] not in ("0", "false")


def _nvidia_smi(text: str) -> list[Measurement]:
    """``memory.used`` of each GPU from ``nvidia-smi --query-gpu`` CSV with a header line."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines or "memory.used" not in lines[0]:
        return []
    header = [h.strip() for h in lines[0].split(",")]
    column = next(i for i, h in enumerate(header) if h.startswith("memory.used"))
    out = []
    for line in lines[1:]:
        cells = [c.strip() for c in line.split(",")]
        match = re.match(r"(\d+)", cells[column]) if len(cells) > column else None
        if match:
            out.append(Measurement("gpu_memory_used_gib", int(match.group(1)) * 2**20 / GIB, line.strip()))
    return out[:1] if out else []


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
        out["decode_tokens_per_s"] = result["throughput"]["decode_tokens_per_s"]
    return out


def compare(measured: list[Measurement], result: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per measured figure the prediction has: measured, predicted, error (predicted / measured - 1)."""
    pred = predicted(result)
    rows = []
    for m in measured:
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
        mode = (result.get("offload") or {}).get("mode", "gpu")
        if mode == "gpu" and result["throughput"].get("bound") == "compute":
            out.update(_fit_gemm_half_efficiency(speed, current, consts.gemm_half_efficiency_tokens, predict))
            return out
        name = "decode_bandwidth_efficiency" if mode in ("gpu", "pcie-stream") else "ddr_bandwidth_efficiency"
        e0 = getattr(consts, name)
        t0 = 1 / speed["predicted"]
        t1 = 1 / predict({**current, name: e0 / 2})["throughput"]["decode_tokens_per_s"]
        a = (t1 - t0) * e0  # t(e) = a / e + b: t1 - t0 = a / e0
        b = t0 - a / e0
        target = 1 / speed["measured"]
        out[name] = round(min(1.0, a / (target - b)), 4) if target > b and a > 0 else 1.0
    return out


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
    t1 = 1 / predict({**current, "gemm_half_efficiency_tokens": 2 * h0})["throughput"]["decode_tokens_per_s"]
    slope = (t1 - t0) / h0
    if slope <= 0:
        return {}
    return {"gemm_half_efficiency_tokens": round(max(0.0, h0 + (1 / speed["measured"] - t0) / slope), 4)}


def constants_block(constants: dict[str, float]) -> str:
    """A ``constants:`` block for a workload file (JSON scalars are valid YAML); a comment when none is fitted."""
    if not constants:
        return "# specgen calibrate: none of these figures fits an engine constant (only KV tokens and decode speed do)\n"
    lines = ["# specgen calibrate: engine constants fitted to the measured run; commit at the workload's top level"]
    lines.append("constants:")
    lines += [f"  {name}: {json.dumps(value)}" for name, value in sorted(constants.items())]
    return "\n".join(lines) + "\n"


def report(rows: list[dict[str, Any]]) -> str:
    """The comparison as a table."""
    lines = [f"{'figure':<22} {'measured':>14} {'predicted':>14} {'error':>8}"]
    lines += [f"{r['figure']:<22} {r['measured']:>14,.2f} {r['predicted']:>14,.2f} {r['error']:>+8.1%}" for r in rows]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Run ``specgen calibrate``; returns the exit code."""
    from generator.calculator import cli as estimate_cli
    from generator.calculator.estimate import estimate
    from generator.input_files import MAX_LOG_BYTES, read_limited

    parser = estimate_cli.build_parser()
    parser.prog = "specgen calibrate"
    parser.description = "Compare what a run printed (--log, repeatable) with the prediction for the same setup."
    parser.add_argument("--log", action="append", required=True, help="a vLLM log, llama.cpp output or nvidia-smi CSV")
    parser.add_argument("-o", "--output", help="write the constants: block to this file (default: print it)")
    args = parser.parse_args(argv)
    try:
        request = estimate_cli.build_request(parser, args)  # usage errors (exit 2) before any log is read
        measured = []
        for path in args.log:
            # regular files only, size-limited: a device reads forever and a FIFO blocks (as for workload files)
            data = read_limited(path, MAX_LOG_BYTES, "log")
            measured += parse_log(data.decode("utf-8", errors="replace"), path)
        result = estimate(request)
        rows = compare(measured, result)
        if not rows:
            raise InputError("none of the measured figures has a prediction: give --gpu (and --ram-gib for offload)")

        def predict(constants: dict[str, float]) -> dict[str, Any]:
            return estimate(request._replace(constants=tuple(constants.items())))

        block = constants_block(fitted_constants(rows, result, dict(args.set), predict))
    except SpecgenError as exc:
        print(f"specgen calibrate: error: {exc}", file=sys.stderr)
        return exc.exit_code
    sys.stdout.write(report(rows))
    if args.output:
        from generator.calculator.detect import write_block

        try:
            write_block(args.output, block)
        except SpecgenError as exc:
            print(f"specgen calibrate: error: {exc}", file=sys.stderr)
            return exc.exit_code
    else:
        sys.stdout.write("\n" + block)
    return 0
