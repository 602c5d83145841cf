"""CI-scale timings of specgen against the targets of issue #11.

Usage: python benchmarks/scale.py [--workloads 200] [--runs 5]  (from the repository root)

Generates ``--workloads`` workload files (a deterministic mix of catalog models, precisions,
contexts, rates, SLOs, hardware lists and inference / fine-tuning, one to three deployments each) in a
temporary directory, then times, each in fresh processes (cold start included) unless noted:

- one ``specgen render`` of every generated file into one output root, as it runs by default (one process a usable
  core) and with ``--jobs 1``;
- planning one deployment on the full default bare-metal hardware set (no ``gpus:`` list), in process;
- ``render`` of one shipped example, ``validate`` of it, and ``estimate`` of a catalog model (minimum and
  median of ``--runs`` fresh processes, after one run that fills Python's bytecode cache);
- growth: render time per workload at a quarter, half and all of the files, and planning time
  per deployment for files of 1, 2, 4 and 8 deployments.

It prints each target with the measured value, PASS or MISS (the median against the target), and the
machine's load average, which matters on a shared machine: measure when it is quiet. The timed commands
run with Python's bytecode cache on, as users run specgen, even where ``PYTHONDONTWRITEBYTECODE`` is set
here (without the cache every cold start compiles the package again). ``--cold-only`` times only the
three cold starts.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

MODELS = [
    "meta-llama/Llama-3.1-8B-Instruct",
    "meta-llama/Llama-3.1-70B-Instruct",
    "Qwen/Qwen2.5-7B-Instruct",
    "Qwen/Qwen2.5-32B-Instruct",
    "Qwen/Qwen3-30B-A3B",
    "mistralai/Mixtral-8x7B-Instruct-v0.1",
    "google/gemma-2-9b-it",
    "microsoft/phi-4",
    "Qwen/Qwen3-14B",
    "meta-llama/Llama-3.3-70B-Instruct",
]
PRECISIONS = ["bf16", "fp8", "int4"]
CONTEXTS = [4096, 8192, 16384, 32768]
RATES = [0.5, 2, 5, 12, 30]
#: Files rendered together make one tree for one cluster, so one provider (bare metal: the largest default
#: hardware set) with and without a GPU list.
HARDWARE = [
    "  provider: baremetal\n  gpus: [h100-sxm5-80gb, l40s-48gb, h200-sxm-141gb]\n",
    "  provider: baremetal\n",
]


def _served_context(model: str) -> int:
    """The longest context the model serves (vLLM's max_model_len): a workload asking more is refused."""
    from generator.catalog import find_model
    from generator.sizing.architecture import parse_architecture

    return parse_architecture(find_model(model).config).max_model_len


def _inference(i: int, model: str) -> str:
    precision = PRECISIONS[i % len(PRECISIONS)]
    context = min(CONTEXTS[(i // 3) % len(CONTEXTS)], _served_context(model))
    rate = RATES[(i // 2) % len(RATES)]
    slo = "      slo: {ttft_p95_ms: 2000, tpot_ms: 60}\n" if i % 2 else ""
    return (
        f"    model: {model}\n    inference:\n      precision: {precision}\n      max_context_tokens: {context}\n"
        f"      avg_input_tokens: {context // 8}\n      avg_output_tokens: 300\n      requests_per_second: {rate}\n{slo}"
    )


def _training(i: int, model: str) -> str:
    method = ("lora", "qlora")[i % 2]
    return (
        f"    model: {model}\n    training:\n      method: {method}\n      lora_rank: 16\n      sequence_length: 4096\n"
        f"      micro_batch_size: 2\n      dataset_tokens: {100_000_000 * (1 + i % 5)}\n      deadline_hours: 24\n"
    )


def workload_text(i: int, deployments: int | None = None, hardware: str | None = None) -> str:
    """The ``i``-th generated workload (deterministic)."""
    count = deployments or 1 + i % 3
    parts = []
    for j in range(count):
        k = i * 7 + j * 3
        model = MODELS[k % len(MODELS)]
        train = deployments is None and j == 2 and "8B" in model
        body = _training(k, "meta-llama/Llama-3.1-8B-Instruct") if train else _inference(k, model)
        # one tree is one cluster: each workload names its own pools (deployment names make the pool names)
        parts.append(f"  - name: w{i}-d{j}\n{body}")
    hw = hardware if hardware is not None else HARDWARE[i % len(HARDWARE)]
    return f"version: 1\nname: gen-{i:04d}\ndeployments:\n{''.join(parts)}hardware:\n{hw}"


def generate(root: Path, count: int) -> list[str]:
    """Write ``count`` workload files under ``root``; their paths."""
    paths = []
    for i in range(count):
        path = root / f"gen-{i:04d}.yaml"
        path.write_text(workload_text(i), encoding="utf-8")
        paths.append(str(path))
    return paths


def specgen() -> list[str]:
    script = Path(sys.executable).parent / "specgen"
    return [str(script)] if script.exists() else [sys.executable, "-m", "generator"]


#: The environment of the timed commands: this one with Python's bytecode cache on.
CACHED = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(cmd: list[str]) -> tuple[float, float]:
    """Wall seconds of ``cmd`` and its CPU seconds (user + system, children included: less sensitive to a busy machine)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, env=CACHED)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 3):
        raise SystemExit(f"{' '.join(cmd[:4])} ... failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return elapsed, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def cold_start(cmd: list[str], runs: int, goal_s: float) -> tuple[str, str]:
    """Minimum and median wall seconds of fresh processes (median CPU seconds too); PASS when the median meets ``goal_s``."""
    timed(cmd)  # bytecode cache warm, not the process
    walls, cpus = zip(*(timed(cmd) for _ in range(runs)), strict=True)
    median = statistics.median(walls)
    text = f"min {min(walls):.3f} s, median {median:.3f} s (CPU median {statistics.median(cpus):.3f} s)"
    return text, verdict(median, goal_s)


def verdict(value_s: float, goal_s: float) -> str:
    return "PASS" if value_s <= goal_s else "MISS"


def planning_seconds(text: str, root: Path, name: str) -> float:
    """Planning time of one workload in a fresh process (loading excluded, caches cold)."""
    path = root / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    code = (
        "import sys, time\n"
        "from generator.workload import load_workload\n"
        "from generator.planner import plan_workload\n"
        # the search's modules load on the first plan_workload call: imported here, they are not counted as planning
        "import generator.planner.assemble, generator.planner.candidates, generator.planner.fixed\n"
        f"loaded = load_workload({str(path)!r})\n"
        "start = time.perf_counter()\n"
        "plan_workload(loaded)\n"
        "print(time.perf_counter() - start)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO, env=CACHED)
    return float(done.stdout.strip())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workloads", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=None, help="pass --jobs N to the big render (default: render's own)")
    parser.add_argument("--cold-only", action="store_true", help="time only the cold starts of render, validate and estimate")
    args = parser.parse_args()
    rows: list[tuple[str, str, str, str]] = []
    load_before = os.getloadavg()
    root = Path(tempfile.mkdtemp(prefix="specgen-scale-"))
    try:
        per_workload: list[tuple[int, float]] = []
        if not args.cold_only:
            scaled, per_workload = scale_rows(root, args.workloads, args.runs, args.jobs)
            rows += scaled
        example = str(REPO / "examples" / "chat-70b.yaml")
        render_one = [*specgen(), "render", example, "-o", str(root / "1")]
        rows.append(("render one example, cold", *cold_target(render_one, args.runs, 0.3)))
        validate = [*specgen(), "validate", example]
        rows.append(("validate one example, cold", *cold_target(validate, args.runs, 0.15)))
        estimate = [*specgen(), "estimate", "llama-3.1-8b", "--gpu", "h100-sxm5-80gb", "--context", "8192", "--json"]
        rows.append(("estimate, cold", *cold_target(estimate, args.runs, 0.06)))
        if not args.cold_only:
            rows += growth_rows(root, per_workload)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    load_after = os.getloadavg()
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':{width}}  {'target':9}  {'':4}  measured")
    for name, target, value, status in rows:
        print(f"{name:{width}}  {target:9}  {status:4}  {value}")
    print(f"load average (1 min) before {load_before[0]:.2f}, after {load_after[0]:.2f}; CPUs {os.cpu_count()}")
    print("Python's bytecode cache on for the timed commands (PYTHONDONTWRITEBYTECODE removed from their environment)")
    return 0


def target(limit_s: float) -> str:
    """A target as the table prints it."""
    return f"<= {limit_s:g} s"


def cold_target(command: list[str], runs: int, limit_s: float) -> tuple[str, str, str]:
    """(target, measured, verdict) of a cold-start target."""
    return (target(limit_s), *cold_start(command, runs, limit_s))


def scale_rows(
    root: Path, workloads: int, runs: int, jobs_n: int | None
) -> tuple[list[tuple[str, str, str, str]], list[tuple[int, float]]]:
    """The 200-workload render (as render runs by default, and in one process) and one deployment's planning; (files,
    seconds) of the one-process renders of a quarter, half and all."""
    from generator.batch import usable_cores

    (root / "workloads").mkdir()
    files = generate(root / "workloads", workloads)
    per_workload = []
    for share in (4, 2, 1):
        subset = files[: max(1, len(files) // share)]
        seconds, cpu = timed([*specgen(), "render", *subset, "-o", str(root / f"out-{share}"), "--jobs", "1"])
        per_workload.append((len(subset), seconds))
    count, one_s = per_workload[-1]
    jobs = ["--jobs", str(jobs_n)] if jobs_n is not None else []
    seconds, all_cpu = timed([*specgen(), "render", *files, "-o", str(root / "out-jobs"), *jobs])
    processes = jobs_n or min(usable_cores(), count)
    rows = [(f"render {count} generated workloads, one run ({processes} processes{'' if jobs else ': the default'})",
             target(10.0), f"{seconds:.2f} s (CPU {all_cpu:.2f} s)", verdict(seconds, 10.0)),
            (f"render {count} generated workloads, one run, --jobs 1", "-", f"{one_s:.2f} s (CPU {cpu:.2f} s)", "")]  # fmt: skip
    text = workload_text(0, deployments=1, hardware="  provider: baremetal\n")
    plans = [planning_seconds(text, root, f"one-{r}") for r in range(runs)]
    plan_s = statistics.median(plans)
    rows.append(("plan one deployment, full default bare-metal hardware", target(0.1),
                 f"min {min(plans):.3f} s, median {plan_s:.3f} s", verdict(plan_s, 0.1)))  # fmt: skip
    return rows, per_workload


def growth_rows(root: Path, per_workload: list[tuple[int, float]]) -> list[tuple[str, str, str, str]]:
    """Render time per workload over the three renders, and planning time per deployment for files of 1 to 8."""
    growth = ", ".join(f"{n}: {s / n * 1000:.0f} ms" for n, s in per_workload)
    rows = [("growth in workloads (render time per workload)", "linear", growth, "")]
    deps = []
    for n in (1, 2, 4, 8):
        text = workload_text(1, deployments=n, hardware="  provider: baremetal\n")
        deps.append((n, planning_seconds(text, root, f"deps-{n}")))
    per_dep = ", ".join(f"{n}: {s / n * 1000:.0f} ms" for n, s in deps)
    rows.append(("growth in deployments (planning per deployment)", "linear", per_dep, ""))
    return rows


if __name__ == "__main__":
    raise SystemExit(main())
