"""specgen against every row of its own calibration data (tests/data/calibration.json), by group.

Usage (from the repository root):
    python benchmarks/calibration_report.py               # per-row and per-group errors, with the BEFORE figures
    python benchmarks/calibration_report.py --groups      # the per-group table only
    python benchmarks/calibration_report.py --save-before # record the current figures as BEFORE

Groups: throughput by engine, GPU, precision and pipeline (PP > 1 apart); weights per GPU and
KV-cache tokens by engine and GPU; fine-tuning peak memory by framework. Each group reports the
median and the 90th percentile of |predicted / measured - 1|. A row the engine cannot answer
(unknown precision, refused layout) counts as ``failed`` in its group. Constants are the engine's
defaults: nothing here is fitted per row.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from generator.calculator.estimate import EstimateRequest, estimate  # noqa: E402
from generator.catalog import find_gpu, find_model  # noqa: E402
from generator.errors import SpecgenError  # noqa: E402
from generator.sizing.architecture import parse_architecture  # noqa: E402
from generator.sizing.constants import with_overrides  # noqa: E402
from generator.sizing.performance import training_flops_per_token, training_hours  # noqa: E402
from generator.sizing.precision import kv_cache_bits, weight_format  # noqa: E402
from generator.sizing.training import TrainingSetup, size_training  # noqa: E402
from generator.sizing.training_mfu import training_utilisation  # noqa: E402
from generator.sizing.vllm_kv import vllm_kv_cache  # noqa: E402
from generator.sizing.weights import Parallelism, size_weights  # noqa: E402
from generator.units import GB, GIB  # noqa: E402

DATA = REPO / "tests" / "data" / "calibration.json"
BEFORE = REPO / "benchmarks" / "calibration_before.json"


def _training_kwargs(row: dict[str, Any]) -> dict[str, Any]:
    """TrainingSetup fields of a row; the framework profile when the engine knows frameworks."""
    kwargs: dict[str, Any] = {
        "method": row["method"],
        "optimizer": row["optimizer"],
        "zero_stage": row["zero_stage"],
        "data_parallel": row["gpus"],
        "micro_batch_size": row["micro_batch"],
        "sequence_length": row["seq_len"],
        "checkpointing": row["checkpointing"],
        "flash_attention": row["flash_attention"],
        "lora_rank": row["lora_rank"],
        "lora_targets": tuple(row["lora_targets"]),
        "offload_params": row["offload_params"],
    }
    if "framework" in TrainingSetup._fields:  # the BEFORE figures predate framework profiles
        kwargs["framework"] = row["profile"]
        kwargs["loss"] = row.get("loss")
    for technique in ("activation_offload", "optimizer_in_backward", "fused_kernels", "lora_dropout", "offload_optimizer"):
        if technique in row and technique in TrainingSetup._fields:
            kwargs[technique] = row[technique]
    return kwargs


#: What a row's figure counts: PyTorch's allocated/active peak leaves out the CUDA context, NCCL and the
#: caching allocator's slack, which the engine's overhead holds; reserved and nvidia-smi figures include them.
TORCH_COUNTED = ("allocated", "active")


def predict_training(row: dict[str, Any]) -> float:
    """Predicted peak GB per GPU of a fine-tuning row."""
    arch = parse_architecture(find_model(row["model"]).config)
    setup = TrainingSetup(**_training_kwargs(row))
    per_gpu = size_training(arch, setup, Parallelism(), with_overrides(dict(OVERRIDES))).per_gpu
    counted = per_gpu.total - (per_gpu.overhead if row.get("measured_as") in TORCH_COUNTED else 0)
    return counted / GB


def predict_weights(row: dict[str, Any]) -> float:
    """Predicted weights GiB per GPU of a vLLM row."""
    arch = parse_architecture(find_model(row["model"]).config)
    return size_weights(arch, weight_format(row["precision"]), Parallelism(tp=row["tp"])).per_gpu_bytes / GIB


def predict_kv_tokens(row: dict[str, Any]) -> float:
    """The token count vLLM's start-up log prints for the row's available KV memory (its group/block accounting)."""
    arch = parse_architecture(find_model(row["model"]).config)
    kv_bits = kv_cache_bits(row["kv_precision"])
    available = int(row["available_kv_gib"] * GIB)
    cache = vllm_kv_cache(arch, kv_bits, available, row["max_model_len"], Parallelism(tp=row["tp"]), row["block_size"])
    return float(cache.logged_tokens)


def predict_gpu_hours(row: dict[str, Any]) -> float:
    """GPU-hours of a training run: the engine's FLOPs per token x tokens at its utilisation of the GPU's dense BF16 rate."""
    arch = parse_architecture(find_model(row["model"]).config)
    consts = with_overrides(dict(OVERRIDES))
    flops = training_flops_per_token(arch, row["method"], row["checkpointing"]) * row["tokens"]
    util = training_utilisation(arch.hidden_size, arch.num_layers, arch.flop_params, row["sequence_length"], consts)
    return training_hours(flops, 1, find_gpu(row["gpu"]).tflops("bf16") or 0.0, consts, mfu=util.mfu)


#: Constants overridden while fitting (``--fit``); empty for the report.
OVERRIDES: dict[str, float] = {}


def predict_throughput(row: dict[str, Any]) -> float:
    """Predicted total output tokens/s of one replica at full load."""
    req = EstimateRequest(
        constants=tuple(sorted(OVERRIDES.items())),
        model=row["model"],
        precision=row["precision"],
        kv_precision=row["kv_precision"],
        context_tokens=row["input_tokens"] + row["output_tokens"],
        tp=row["tp"],
        pp=row["pp"],
        gpu=row["gpu"],
        input_tokens=row["input_tokens"],
        output_tokens=row["output_tokens"],
    )
    result = estimate(req)
    if "throughput" not in result:
        raise SpecgenError("the model does not fit this layout")
    return float(result["throughput"]["max_output_tokens_per_s"])


def _rows() -> list[tuple[str, str, float, Callable[[dict[str, Any]], float], dict[str, Any]]]:
    """(group, label, measured, predictor, row) for every calibration row."""
    cal = json.loads(DATA.read_text())
    out: list[tuple[str, str, float, Callable[[dict[str, Any]], float], dict[str, Any]]] = []
    for row in cal["throughput"]:
        pipe = " pp>1" if row["pp"] > 1 else ""
        group = f"throughput {row['engine']} {row['gpu']} {row['precision']}{pipe}"
        label = f"{row['model'].split('/')[-1]} tp{row['tp']} pp{row['pp']} {row['input_tokens']}/{row['output_tokens']}"
        out.append((group, label, float(row["output_tokens_per_s"]), predict_throughput, row))
    for row in cal["vllm_memory"]:
        label = f"{row['model'].split('/')[-1]} tp{row['tp']}"
        out.append((f"weights {row['engine']} {row['gpu']}", label, float(row["weights_gib"]), predict_weights, row))
    for row in cal["vllm_kv_tokens"]:
        label = f"{row['model'].split('/')[-1]} tp{row['tp']} len{row['max_model_len']}"
        group = f"kv-tokens {row['engine']} (available KV memory -> logged tokens)"
        out.append((group, label, float(row["logged_tokens"]), predict_kv_tokens, row))
    for row in cal["training_time"]:
        label = f"{row['model'].split('/')[-1]} {row['tokens'] / 1e12:.1f}T tokens on {row['gpu_as_reported']}"
        out.append(("gpu-hours pretraining", label, float(row["gpu_hours"]), predict_gpu_hours, row))
    for row in cal["training_memory"]:
        label = f"{row['model'].split('/')[-1]} {row['method']} b{row['micro_batch']} s{row['seq_len']} x{row['gpus']}"
        out.append((f"memory {row['framework']}", label, float(row["measured_gb"]), predict_training, row))
    return out


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


def evaluate(verbose: bool = False) -> dict[str, dict[str, Any]]:
    """Per-group rows, failures, median and p90 |error| (fractions); prints rows when verbose."""
    groups: dict[str, dict[str, Any]] = {}
    for group, label, measured, predict, row in _rows():
        entry = groups.setdefault(group, {"rows": 0, "failed": 0, "errors": []})
        entry["rows"] += 1
        try:
            got = predict(row)
        except SpecgenError as exc:
            entry["failed"] += 1
            if verbose:
                print(f"  {group:55s} {label:42s} {measured:9.2f}  refused: {exc}")
            continue
        err = got / measured - 1
        entry["errors"].append(err)
        if verbose:
            print(f"  {group:55s} {label:42s} {measured:9.2f} {got:9.2f} {err:+7.1%}")
    summary: dict[str, dict[str, Any]] = {}
    for group, entry in sorted(groups.items()):
        absolute = [abs(e) for e in entry["errors"]]
        summary[group] = {
            "rows": entry["rows"],
            "failed": entry["failed"],
            "median_abs_error": round(statistics.median(absolute), 4) if absolute else None,
            "p90_abs_error": round(_p90(absolute), 4) if absolute else None,
            "median_signed_error": round(statistics.median(entry["errors"]), 4) if absolute else None,
        }
    return summary


def _pct(value: float | None) -> str:
    return "   n/a" if value is None else f"{value:6.1%}"


def print_table(now: dict[str, dict[str, Any]], before: dict[str, dict[str, Any]]) -> None:
    """Per-group median / p90 |error|, before and after, with failures."""
    columns = f"{'med':>6s} {'p90':>6s} {'fail':>4s}"
    print(f"{'group':58s} {'rows':>4s} | BEFORE {columns} | AFTER {columns}")
    for group, cur in now.items():
        old = before.get(group, {})
        was = f"{_pct(old.get('median_abs_error'))} {_pct(old.get('p90_abs_error'))} {old.get('failed', '-')!s:>4s}"
        now_text = f"{_pct(cur['median_abs_error'])} {_pct(cur['p90_abs_error'])} {cur['failed']:4d}"
        print(f"{group:58s} {cur['rows']:4d} |        {was} |       {now_text}")


def _grid_search(grid: dict[str, tuple[float, ...]], score: Callable[[], float]) -> dict[str, float]:
    """The point of ``grid`` (set in :data:`OVERRIDES` while ``score`` runs) with the lowest score; prints each improvement."""
    import itertools

    best: tuple[float, dict[str, float]] = (float("inf"), {})
    names = sorted(grid)
    for values in itertools.product(*(grid[n] for n in names)):
        OVERRIDES.clear()
        OVERRIDES.update(zip(names, values, strict=True))
        current = score()
        if current < best[0]:
            best = (current, dict(OVERRIDES))
            print(f"  {current:.4f} {best[1]}")
    OVERRIDES.clear()
    return best[1]


#: The grid ``--fit`` searches: the performance constants that are not physics.
FIT_GRID: dict[str, tuple[float, ...]] = {
    "prefill_compute_efficiency": (0.45, 0.55),
    "decode_bandwidth_efficiency": (0.7, 0.8),
    "gemm_half_efficiency_tokens": (16.0, 64.0),
    "decode_overhead_per_sequence_s": (0.0, 5e-6, 1e-5, 2e-5, 4e-5),
}


def fit() -> dict[str, float]:
    """Grid search minimising the mean over throughput groups of (median + p90) |error|: all groups at once."""

    return _grid_search(FIT_GRID, lambda: _mean_group_score("throughput"))


def _mean_group_score(prefix: str) -> float:
    """Mean over the groups named ``prefix ...`` of (median + p90) |error|."""
    scores: list[float] = [
        g["median_abs_error"] + g["p90_abs_error"]
        for name, g in evaluate().items()
        if name.startswith(prefix) and g["median_abs_error"] is not None
    ]
    return sum(scores) / len(scores)


#: The grid ``--fit-training`` searches: the training-utilisation constants that are not physics.
TRAINING_FIT_GRID: dict[str, tuple[float, ...]] = {
    "training_mfu": tuple(round(0.30 + 0.02 * i, 2) for i in range(21)),
    "training_gemm_half_hidden": tuple(float(h) for h in range(0, 4097, 256)),
}


def fit_training() -> dict[str, float]:
    """Grid search minimising median + p90 |error| of the gpu-hours group (every row at once)."""
    rows = [(measured, row) for group, _, measured, _, row in _rows() if group.startswith("gpu-hours")]

    def score() -> float:
        errors = [abs(predict_gpu_hours(row) / measured - 1) for measured, row in rows]
        return statistics.median(errors) + _p90(errors)

    return _grid_search(TRAINING_FIT_GRID, score)


#: The grid ``--fit-memory`` searches: the fine-tuning memory constants that are not physics.
MEMORY_FIT_GRID: dict[str, tuple[float, ...]] = {
    "logits_bytes_per_element": (8.0, 10.0, 12.0, 14.0, 16.0, 18.0),
    "training_overhead_bytes": tuple(float(m * 2**20) for m in (512, 768, 1024, 1280, 1536)),
}


def fit_memory() -> dict[str, float]:
    """Grid search minimising the mean over every fine-tuning memory group of (median + p90) |error|: all groups at once."""

    return _grid_search(MEMORY_FIT_GRID, lambda: _mean_group_score("memory"))


def main(argv: list[str] | None = None) -> int:
    """Print the report (or save the BEFORE figures, or fit the performance constants)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", action="store_true", help="the per-group table only")
    parser.add_argument("--save-before", action="store_true", help=f"write the current figures to {BEFORE.name}")
    parser.add_argument("--fit", action="store_true", help="grid-search the performance constants over all groups at once")
    parser.add_argument("--fit-training", action="store_true", help="grid-search the training-utilisation constants")
    parser.add_argument("--fit-memory", action="store_true", help="grid-search the fine-tuning memory constants")
    args = parser.parse_args(argv)
    if args.fit_memory:
        print(json.dumps(fit_memory(), sort_keys=True))
        return 0
    if args.fit_training:
        print(json.dumps(fit_training(), sort_keys=True))
        return 0
    if args.fit:
        print(json.dumps(fit(), sort_keys=True))
        return 0
    now = evaluate(verbose=not args.groups and not args.save_before)
    if args.save_before:
        BEFORE.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n")
        print(f"wrote {BEFORE.relative_to(REPO)}")
        return 0
    before = json.loads(BEFORE.read_text()) if BEFORE.exists() else {}
    print()
    print_table(now, before)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
