"""Measure one GPU's GEMM rate by token count: a transformer layer's weight matrix times ``tokens`` rows.

For each weight shape (a Llama layer's at TP 1) and row count, in bf16 (``torch.matmul``) and FP8 E4M3 with
per-tensor scales (``torch._scaled_mm``, bf16 out), it times 20 products after 3 warm-ups with CUDA events, cycling
through copies of the weight that together outsize the L2 cache (a decode step reads each weight from HBM once).
One JSON line per (shape, precision, tokens): seconds per product, TFLOP/s and the bytes moved per second (weights,
activations in and out). The row of ``benchmarks/CALIBRATION.md`` on GEMM fill cites this file.

Needs torch and a CUDA GPU: ``python benchmarks/measure_gemm.py --out gemm.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import pathlib
from typing import Any

#: (name, in_features, out_features): Llama 3.1 8B's and 70B's projections at TP 1 (q/k/v fused, gate/up fused).
SHAPES = (
    ("8b-qkv", 4096, 6144),
    ("8b-o", 4096, 4096),
    ("8b-gate-up", 4096, 28672),
    ("8b-down", 14336, 4096),
    ("70b-qkv", 8192, 10240),
    ("70b-gate-up", 8192, 57344),
    ("70b-down", 28672, 8192),
)
TOKENS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
L2_OUTSIZED_BYTES = 512 * 2**20
WARMUP, TIMED = 3, 20


def time_products(product: Any, weights: list[Any]) -> float:
    """Seconds per call of ``product(weight)``, cycling through ``weights``."""
    import torch

    for i in range(WARMUP):
        product(weights[i % len(weights)])
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for i in range(TIMED):
        product(weights[i % len(weights)])
    end.record()
    torch.cuda.synchronize()
    return float(start.elapsed_time(end)) / 1e3 / TIMED


def measure(name: str, k: int, n: int, precision: str) -> list[dict[str, Any]]:
    """Rows for one weight shape and precision over :data:`TOKENS`."""
    import torch

    element = 2 if precision == "bf16" else 1
    copies = max(1, -(-L2_OUTSIZED_BYTES // (k * n * element)))
    master = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) * 0.02
    if precision == "bf16":
        weights = [master.t().clone() for _ in range(copies)]  # [k, n], column-major as nn.Linear's weight.t()
    else:
        weights = [master.to(torch.float8_e4m3fn).t() for _ in range(copies)]  # column-major [k, n], as _scaled_mm wants
    one = torch.ones((), device="cuda", dtype=torch.float32)
    rows = []
    for tokens in TOKENS:
        x = torch.randn(tokens, k, device="cuda", dtype=torch.bfloat16)
        if precision == "bf16":
            seconds = time_products(lambda w, x=x: torch.matmul(x, w), weights)
        else:
            x8 = x.to(torch.float8_e4m3fn)
            seconds = time_products(
                lambda w, x8=x8: torch._scaled_mm(x8, w, scale_a=one, scale_b=one, out_dtype=torch.bfloat16), weights
            )
        moved = k * n * element + tokens * k * element + tokens * n * 2
        rows.append(
            {
                "shape": name,
                "in_features": k,
                "out_features": n,
                "precision": precision,
                "tokens": tokens,
                "seconds": seconds,
                "tflops": round(2 * tokens * k * n / seconds / 1e12, 2),
                "gb_per_s": round(moved / seconds / 1e9, 1),
            }
        )
    del weights, master
    torch.cuda.empty_cache()
    return rows


def main() -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=pathlib.Path)
    opts = parser.parse_args()
    with opts.out.open("w") as out:
        out.write(json.dumps({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__}) + "\n")
        for name, k, n in SHAPES:
            for precision in ("bf16", "fp8"):
                try:
                    rows = measure(name, k, n, precision)
                except Exception as exc:  # fp8 GEMM missing on this build: the bf16 rows still count
                    rows = [{"shape": name, "precision": precision, "error": f"{type(exc).__name__}: {str(exc)[:300]}"}]
                for row in rows:
                    out.write(json.dumps(row, sort_keys=True) + "\n")
                out.flush()


if __name__ == "__main__":
    main()
