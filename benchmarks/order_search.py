"""Timings of the planner's order search over owned servers (fuzz20 item 14).

Usage: python benchmarks/order_search.py [--runs 3] [--only NAME] [--write DIR]  (from the repository root)

With owned servers (``hardware.inventory``) the planner tries every order of up to
``MAX_DEPLOYMENTS_REORDERED`` deployments, and a few orders of more. Two workloads the fuzz run found slow:

- ``heavy``: four training jobs (Llama-3.1-8B full, Llama-3.3-70B LoRA, Qwen3-30B-A3B QLoRA, Mixtral-8x7B full;
  4,096-token sequences, a global batch of 96, 1e9 tokens, deadlines of 5 / 20 / 50 / 100 h) beside 3 each of
  four owned server kinds (8 x H100, 8 x A100 80GB, 4 x L40S, 4 x RTX 4090): every one of the 24 orders;
- ``heavy64``: 64 deployments (the schema's maximum), alternating a LoRA job (2,048-token sequences, a global
  batch of 64, 1e8 tokens, 24 h) and an FP8 service (8,192-token context, 2 to 64 requests a second), on the
  same owned servers;
- ``inv16``, ``inv16-noinv`` and ``inv64`` (fuzz21 item 4): 14 and 56 services of catalog models (phi-4 to
  DeepSeek-V3 and Llama-3.1-405B, ``min_replicas`` 1-3, ``max_utilization`` 0.5-1, 3,000 / 80 ms SLOs) and 2 and 8
  training jobs (LoRA / QLoRA / full, 4,096-token sequences, a global batch of 64, 1e9 tokens, 48 h), no GPU list,
  beside 20 DGX H100, 30 Dell XE8640 and 50 custom 4 x A40 servers (``inv16-noinv``: the same without them). Too
  many deployments for every order: the owned servers go to them in three orders, and the services share servers
  in passes of their own, one per GPU and server kind.

Each is planned (``specgen plan --format json``) in ``--runs`` fresh processes; the script prints the least and
the median CPU seconds (user + system, less sensitive to a busy machine than wall time), the peak memory, and the
SHA-256 of the plan JSON, which must not change when the search is only made faster. ``--write DIR`` writes the
two workload files there instead of timing them.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
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


INV16_SERVICES = [
    ("microsoft/phi-4", "fp8", 4096, 3, 3, 0.5),
    ("mistralai/Mixtral-8x22B-Instruct-v0.1", "bf16", 8192, 20, 3, 1),
    ("Qwen/Qwen2.5-72B-Instruct", "bf16", 4096, 100, 3, 1),
    ("microsoft/phi-4", "fp8", 8192, 100, 2, 0.8),
    ("Qwen/Qwen2.5-7B-Instruct", "bf16", 4096, 3, 3, 0.8),
    ("Qwen/Qwen2.5-7B-Instruct", "bf16", 8192, 0.5, 1, 0.8),
    ("openai/gpt-oss-120b", "fp8", 4096, 3, 3, 0.8),
    ("Qwen/Qwen2.5-72B-Instruct", "bf16", 4096, 3, 3, 0.8),
    ("openai/gpt-oss-120b", "fp8", 4096, 20, 3, 0.8),
    ("meta-llama/Llama-3.1-8B-Instruct", "bf16", 4096, 3, 2, 1),
    ("Qwen/Qwen2.5-72B-Instruct", "bf16", 4096, 0.5, 2, 0.8),
    ("meta-llama/Llama-3.1-8B-Instruct", "bf16", 4096, 0.5, 1, 0.8),
    ("meta-llama/Llama-3.1-8B-Instruct", "bf16", 4096, 20, 1, 0.5),
    ("meta-llama/Llama-3.1-405B-Instruct", "bf16", 4096, 3, 2, 0.8),
]
INV16_JOBS = [
    ("Qwen/Qwen2.5-7B", "lora"),
    ("Qwen/Qwen2.5-7B", "lora"),
]
INV64_SERVICES = [
    ("openai/gpt-oss-120b", "bf16", 4096, 20, 1, 0.8),
    ("mistralai/Mixtral-8x22B-Instruct-v0.1", "bf16", 4096, 3, 1, 0.8),
    ("microsoft/phi-4", "bf16", 8192, 20, 3, 0.5),
    ("meta-llama/Llama-3.1-8B-Instruct", "bf16", 8192, 20, 1, 0.8),
    ("Qwen/Qwen2.5-7B-Instruct", "bf16", 8192, 100, 1, 0.5),
    ("Qwen/Qwen3-235B-A22B", "fp8", 4096, 20, 2, 0.8),
    ("Qwen/Qwen2.5-72B-Instruct", "bf16", 8192, 0.5, 2, 0.8),
    ("meta-llama/Llama-3.1-405B-Instruct", "fp8", 8192, 0.5, 1, 1),
    ("meta-llama/Llama-3.1-405B-Instruct", "fp8", 4096, 20, 2, 1),
    ("meta-llama/Llama-3.1-70B-Instruct", "fp8", 8192, 100, 1, 1),
    ("meta-llama/Llama-3.1-8B-Instruct", "fp8", 4096, 0.5, 1, 1),
    ("meta-llama/Llama-3.1-8B-Instruct", "bf16", 4096, 3, 3, 0.8),
    ("mistralai/Mixtral-8x22B-Instruct-v0.1", "fp8", 4096, 3, 1, 0.8),
    ("meta-llama/Llama-3.1-8B-Instruct", "bf16", 8192, 20, 2, 1),
    ("Qwen/Qwen3-235B-A22B", "bf16", 8192, 3, 2, 0.8),
    ("openai/gpt-oss-120b", "bf16", 4096, 3, 3, 0.5),
    ("Qwen/Qwen2.5-72B-Instruct", "fp8", 4096, 100, 3, 0.5),
    ("mistralai/Mixtral-8x22B-Instruct-v0.1", "bf16", 8192, 100, 1, 1),
    ("deepseek-ai/DeepSeek-V3", "fp8", 4096, 3, 2, 1),
    ("Qwen/Qwen2.5-72B-Instruct", "bf16", 4096, 20, 2, 1),
    ("deepseek-ai/DeepSeek-V3", "fp8", 4096, 100, 2, 0.8),
    ("Qwen/Qwen3-235B-A22B", "fp8", 8192, 20, 2, 0.5),
    ("mistralai/Mixtral-8x22B-Instruct-v0.1", "bf16", 4096, 20, 1, 1),
    ("openai/gpt-oss-120b", "fp8", 4096, 20, 1, 0.8),
    ("meta-llama/Llama-3.1-8B-Instruct", "bf16", 8192, 20, 1, 0.5),
    ("Qwen/Qwen2.5-7B-Instruct", "bf16", 4096, 100, 3, 0.8),
    ("Qwen/Qwen2.5-7B-Instruct", "fp8", 8192, 100, 2, 0.5),
    ("Qwen/Qwen2.5-72B-Instruct", "fp8", 4096, 3, 3, 1),
    ("Qwen/Qwen2.5-72B-Instruct", "bf16", 4096, 0.5, 1, 0.5),
    ("deepseek-ai/DeepSeek-V3", "fp8", 4096, 20, 1, 1),
    ("meta-llama/Llama-3.1-405B-Instruct", "bf16", 4096, 0.5, 1, 0.5),
    ("meta-llama/Llama-3.1-405B-Instruct", "fp8", 8192, 20, 1, 1),
    ("Qwen/Qwen2.5-7B-Instruct", "fp8", 4096, 20, 2, 0.8),
    ("meta-llama/Llama-3.1-70B-Instruct", "fp8", 8192, 3, 3, 0.5),
    ("Qwen/Qwen2.5-7B-Instruct", "bf16", 4096, 20, 1, 0.5),
    ("deepseek-ai/DeepSeek-V3", "bf16", 4096, 100, 1, 0.8),
    ("deepseek-ai/DeepSeek-V3", "bf16", 8192, 3, 2, 0.5),
    ("Qwen/Qwen3-235B-A22B", "bf16", 4096, 100, 2, 1),
    ("meta-llama/Llama-3.1-8B-Instruct", "fp8", 4096, 20, 3, 1),
    ("Qwen/Qwen2.5-72B-Instruct", "fp8", 8192, 3, 2, 0.5),
    ("deepseek-ai/DeepSeek-V3", "bf16", 4096, 20, 2, 0.5),
    ("google/gemma-2-27b-it", "bf16", 4096, 3, 1, 0.8),
    ("meta-llama/Llama-3.1-8B-Instruct", "fp8", 4096, 3, 2, 0.5),
    ("deepseek-ai/DeepSeek-V3", "fp8", 4096, 3, 2, 0.5),
    ("Qwen/Qwen3-235B-A22B", "fp8", 4096, 100, 2, 1),
    ("meta-llama/Llama-3.1-70B-Instruct", "fp8", 4096, 3, 2, 0.5),
    ("Qwen/Qwen3-30B-A3B", "bf16", 4096, 20, 3, 1),
    ("meta-llama/Llama-3.1-8B-Instruct", "bf16", 8192, 100, 1, 0.5),
    ("Qwen/Qwen2.5-7B-Instruct", "fp8", 8192, 0.5, 2, 0.8),
    ("Qwen/Qwen2.5-72B-Instruct", "fp8", 8192, 20, 2, 0.8),
    ("Qwen/Qwen2.5-72B-Instruct", "fp8", 4096, 100, 1, 0.8),
    ("openai/gpt-oss-120b", "bf16", 4096, 20, 2, 1),
    ("mistralai/Mixtral-8x22B-Instruct-v0.1", "fp8", 4096, 100, 1, 1),
    ("meta-llama/Llama-3.1-8B-Instruct", "fp8", 8192, 0.5, 2, 0.5),
    ("Qwen/Qwen2.5-7B-Instruct", "bf16", 4096, 0.5, 3, 0.8),
    ("meta-llama/Llama-3.1-70B-Instruct", "bf16", 8192, 0.5, 2, 1),
]
INV64_JOBS = [
    ("mistralai/Mistral-7B-v0.1", "qlora"),
    ("mistralai/Mistral-7B-v0.1", "lora"),
    ("Qwen/Qwen2.5-32B", "full"),
    ("meta-llama/Llama-3.1-8B", "lora"),
    ("Qwen/Qwen2.5-7B", "lora"),
    ("meta-llama/Llama-3.1-70B-Instruct", "full"),
    ("meta-llama/Llama-3.1-70B-Instruct", "qlora"),
    ("mistralai/Mistral-7B-v0.1", "qlora"),
]


#: The owned servers of the ``inv`` workloads.
INV_INVENTORY = """\
  inventory:
    - platform: dgx-h100
      count: 20
    - platform: dell-xe8640
      count: 30
    - custom:
        name: lab-a40
        gpu: a40-48gb
        gpus_per_server: 4
        cpu: epyc-9354
        cpu_sockets: 2
        ram_gib: 512
        max_power_w: 2300
        rack_units: 4
      count: 50
"""


def inv_text(services: list[tuple[str, str, int, float, int, float]], jobs: list[tuple[str, str]], owned: bool) -> str:
    """Services then training jobs (fuzz21's generated ``big*.yaml``), beside the owned servers where ``owned``."""
    parts = [
        f"  - name: s{i}\n    model: {model}\n    inference:\n      precision: {precision}\n"
        f"      max_context_tokens: {context}\n      requests_per_second: {rate}\n      min_replicas: {least}\n"
        f"      max_utilization: {utilization}\n      slo: {{ttft_p95_ms: 3000, tpot_ms: 80}}\n"
        for i, (model, precision, context, rate, least, utilization) in enumerate(services)
    ]
    parts += [
        f"  - name: t{i}\n    model: {model}\n    training:\n      method: {method}\n      sequence_length: 4096\n"
        "      global_batch_size: 64\n      dataset_tokens: 1000000000\n      deadline_hours: 48\n"
        for i, (model, method) in enumerate(jobs)
    ]
    hardware = "hardware:\n  provider: baremetal\n" + (INV_INVENTORY if owned else "")
    return f"version: 1\nname: big\ndeployments:\n{''.join(parts)}{hardware}"


WORKLOADS: dict[str, Callable[[], str]] = {
    "heavy": heavy_text,
    "heavy64": heavy64_text,
    "inv16": functools.partial(inv_text, INV16_SERVICES, INV16_JOBS, owned=True),
    "inv16-noinv": functools.partial(inv_text, INV16_SERVICES, INV16_JOBS, owned=False),
    "inv64": functools.partial(inv_text, INV64_SERVICES, INV64_JOBS, owned=True),
}


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
