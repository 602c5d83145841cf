"""Cold-start time of `specgen estimate` on a catalog model: median wall time of fresh processes.

Usage: python benchmarks/estimate_cold_start.py [--runs 15] [-- extra estimate args]
The target (issue #3) is a median under 0.1 s on the project's 2-core machine.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def command(extra: list[str]) -> list[str]:
    script = Path(sys.executable).parent / "specgen"
    base = (
        [str(script)]
        if script.exists()
        else [
            shutil.which("specgen") or "",
        ]
    )
    if not base[0]:
        base = [sys.executable, "-m", "generator"]
    return [*base, "estimate", *(extra or ["llama-3.1-8b", "--gpu", "h100-sxm5-80gb", "--context", "8192", "--json"])]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("extra", nargs="*")
    args = parser.parse_args()
    cmd = command(args.extra)
    subprocess.run(cmd, check=True, capture_output=True)  # warm the bytecode cache, not the process
    times = []
    for _ in range(args.runs):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    python = [sys.executable, "-c", "pass"]
    base = []
    for _ in range(args.runs):
        start = time.perf_counter()
        subprocess.run(python, check=True)
        base.append(time.perf_counter() - start)
    print(f"command: {' '.join(cmd)}")
    median_ms, low_ms, high_ms = statistics.median(times) * 1000, min(times) * 1000, max(times) * 1000
    print(f"runs: {args.runs}  median: {median_ms:.1f} ms  min: {low_ms:.1f} ms  max: {high_ms:.1f} ms")
    print(f"bare python startup median: {statistics.median(base) * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
