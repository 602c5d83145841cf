"""Timings of the planner's order search over owned servers (fuzz20 item 14).

Usage: python benchmarks/order_search.py [--runs 3] [--only heavy|heavy64] [--write DIR]  (from the repository root)

With owned servers (``hardware.inventory``) the planner tries every order of up to
``MAX_DEPLOYMENTS_REORDERED`` deployments, and a few orders of more. Two workloads the fuzz run found slow:

- ``heavy``: four training jobs (Llama-3.1-8B full, Llama-3.3-70B LoRA, Qwen3-30B-A3B QLoRA, Mixtral-8x7B full;
  4,096-token sequences, a global batch of 96, 1e9 tokens, deadlines of 5 / 20 / 50 / 100 h) beside 3 each of
  four owned server kinds (8 x H100, 8 x A100 80GB, 4 x L40S, 4 x RTX 4090): every one of the 24 orders;
- ``heavy64``: 64 deployments (the schema's maximum), alternating a LoRA job (2,048-token sequences, a global
  batch of 64, 1e8 tokens, 24 h) and an FP8 service (8,192-token context, 2 to 64 requests a second), on the
  same owned servers.

Each is planned (``specgen plan --format json``) in ``--runs`` fresh processes; the script prints the least and
the median CPU seconds (user + system, less sensitive to a busy machine than wall time), the peak memory, and the
SHA-256 of the plan JSON, which must not change when the search is only made faster. ``--write DIR`` writes the
two workload files there instead of timing them.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODELS = ["meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.3-70B-Instruct", "Qwen/Qwen3-30B-A3B", "mistralai/Mixtral-8x7B-v0.1"]

#: Three each of four owned server kinds: (GPU, GPUs per server).
OWNED = [("h100-sxm5-80gb", 8), ("a100-sxm4-80gb", 8), ("l40s-48gb", 4), ("rtx-4090-24gb", 4)]


def _inventory() -> str:
    kinds = "".join(
        f"  - custom:\n      gpu: {gpu}\n      gpus_per_server: {per}\n      cpu_cores: 64\n      ram_gib: 1024\n"
        f"      nvme_tb: 30\n    count: 3\n"
        for gpu, per in OWNED
    )
    return f"hardware:\n  provider: baremetal\n  inventory:\n{kinds}"


def _job(name: str, model: str, method: str, sequence: int, batch: int, tokens: int, deadline_h: int) -> str:
    return (
        f"- name: {name}\n  model: {model}\n  training:\n    method: {method}\n    sequence_length: {sequence}\n"
        f"    global_batch_size: {batch}\n    dataset_tokens: {tokens}\n    deadline_hours: {deadline_h}\n"
    )


def heavy_text() -> str:
    """Four training jobs beside owned servers: planned in all 24 orders."""
    methods = ["full", "lora", "qlora", "full"]
    deadlines_h = [5, 20, 50, 100]
    jobs = "".join(_job(f"t{i}", model, methods[i], 4096, 96, 1_000_000_000, deadlines_h[i]) for i, model in enumerate(MODELS))
    return f"version: 1\nname: heavy\ndeployments:\n{jobs}{_inventory()}"


def heavy64_text() -> str:
    """64 deployments (the schema's maximum), LoRA jobs and FP8 services alternating, beside owned servers."""
    parts = []
    for i in range(64):
        model = MODELS[i % len(MODELS)]
        if i % 2 == 0:
            parts.append(_job(f"t{i}", model, "lora", 2048, 64, 100_000_000, 24))
        else:
            parts.append(
                f"- name: s{i}\n  model: {model}\n  inference:\n    precision: fp8\n    max_context_tokens: 8192\n"
                f"    requests_per_second: {i + 1}\n"
            )
    return f"version: 1\nname: heavy64\ndeployments:\n{''.join(parts)}{_inventory()}"


WORKLOADS = {"heavy": heavy_text, "heavy64": heavy64_text}


def specgen() -> list[str]:
    script = Path(sys.executable).parent / "specgen"
    return [str(script)] if script.exists() else [sys.executable, "-m", "generator"]


def plan_once(path: Path) -> tuple[float, float, int, str]:
    """Wall seconds, CPU seconds, peak memory (KiB) and the SHA-256 of the plan JSON of one fresh ``specgen plan``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([*specgen(), "plan", "--format", "json", str(path)], capture_output=True, check=False, env=env)
    wall_s = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"specgen plan {path.name} failed ({done.returncode}):\n{done.stderr.decode()[-2000:]}")
    cpu_s = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall_s, cpu_s, after.ru_maxrss, hashlib.sha256(done.stdout).hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", choices=sorted(WORKLOADS), action="append", help="time only this workload")
    parser.add_argument("--write", type=Path, help="write the workload files to this folder and exit")
    args = parser.parse_args()
    names = args.only or list(WORKLOADS)
    if args.write:
        args.write.mkdir(parents=True, exist_ok=True)
        for name in names:
            (args.write / f"{name}.yaml").write_text(WORKLOADS[name](), encoding="utf-8")
        return 0
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="specgen-orders-") as root:
        for name in names:
            path = Path(root) / f"{name}.yaml"
            path.write_text(WORKLOADS[name](), encoding="utf-8")
            runs = [plan_once(path) for _ in range(args.runs)]
            walls, cpus = [r[0] for r in runs], [r[1] for r in runs]
            digests = {r[3] for r in runs}
            digest = digests.pop() if len(digests) == 1 else f"DIFFERS between runs: {sorted(digests)}"
            print(
                f"{name}: CPU least {min(cpus):.2f} s, median {statistics.median(cpus):.2f} s; wall least "
                f"{min(walls):.2f} s; peak memory {max(r[2] for r in runs) / 1024:.0f} MiB; plan JSON sha256 {digest}"
            )
    print(f"load average (1 min) before {load_before:.2f}, after {os.getloadavg()[0]:.2f}; CPUs {os.cpu_count()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
