"""llama.cpp server slots decoding together: each slot's speed and their sum as the slots grow (acc146).

fix166 / note62 read a plan at ``hardware.fixed.threads: 1`` whose slot decodes 0.64 tokens/s with 34 decoding and
0.44 alone as the CPU's work not growing with the slots. It does grow (:func:`cpu_weight_seconds`: the weights read
once a step, every slot's token multiplied by each, its attention over its own KV): below llama.cpp's op-offload batch
(``offload_min_batch_tokens``, 32) a step on one thread of Llama-3.3-70B's 49 RAM layers takes 2.24 s of the cores'
time alone and 66.7 s at 31 slots. What 34 slots gain is llama.cpp's CUDA backend taking every op of a batch of 32
tokens or more whose weights are in host memory, the scheduler copying the weights over PCIe first
(ggml-cuda.cu ``ggml_backend_cuda_device_offload_op``: ``get_op_batch_size(op) >= min_batch_size``, 32): 1.45 s of
PCIe a step for all 32, which one thread's 2.24 s for one token does not reach. So within each of the two ways a step
runs, a slot's speed never rises with the slots and their sum never falls; across the step at 32 either may jump,
as llama.cpp's own does (the property below holds for each side; the jump is pinned by hand).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from generator.api import plan_file
from generator.catalog import find_model
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.offload import Machine, offload_cost, place, place_on_host
from generator.sizing.precision import weight_format
from generator.units import GIB
from tests.helpers import estimate_json, run_estimate

CONSTS = Constants()
STEP = CONSTS.offload_min_batch_tokens

#: (model, GGUF type, context a request holds)
MODELS = [
    ("meta-llama/Llama-3.3-70B-Instruct", "q4_k_m", 1_800),  # dense: whole layers in RAM (-ngl)
    ("openai/gpt-oss-120b", "mxfp4", 1_800),  # MoE: routed experts in RAM
]


def _machine(cores: float, gpus: int = 1) -> Machine:
    """A desktop: one 24 GiB GPU (a 4090's figures) on PCIe Gen4, dual-channel DDR5-5200, ``cores`` for llama.cpp."""
    if not gpus:
        return Machine(0, 0, float("inf"), float("inf"), float("inf"), 256 * GIB, 8 * GIB, 0, 0, 7.0, 83.2, cores)
    return Machine(gpus, 24 * GIB, 1008.0, 165.0, 31.5, 256 * GIB, 8 * GIB, 0, 0, 7.0, 83.2, cores)


def _costs(model: str, fmt_name: str, request: int, cores: float, gpus: int, streams: range) -> list[Any]:
    arch = parse_architecture(find_model(model).config)
    fmt = weight_format(fmt_name)
    context = request * streams[-1]  # one unified cache (-kvu) holding every slot's request, placed once
    machine = _machine(cores, gpus)
    if gpus:
        placement = place(arch, fmt, 16, context, machine, CONSTS)
    else:
        placement = place_on_host(arch, fmt, 16, context, machine, CONSTS, "llama.cpp")
    assert placement.offloaded
    return [offload_cost(arch, fmt, 16, placement, machine, request, CONSTS, request, n) for n in streams]


@pytest.mark.parametrize("cores", [0, 1, 2, 4, 16, 64])
@pytest.mark.parametrize("gpus", [1, 0])
@pytest.mark.parametrize(("model", "fmt_name", "request_tokens"), MODELS)
def test_a_slot_never_speeds_up_and_the_slots_never_slow_down_within_a_step_kind(
    model: str, fmt_name: str, request_tokens: int, cores: float, gpus: int
) -> None:
    """Per slot non-increasing, summed non-decreasing, in 1..31 (the CPU multiplies) and in 32..96 (copied to the GPU).

    Property of the roofline each step is timed by: the weights' bytes once a step, the arithmetic (each slot's token
    by every weight, each slot's attention over its own KV) once a slot, so a step's time T(n) never falls and T(n) / n
    never rises. A machine without a GPU multiplies every layer on the CPU at every count.
    """
    costs = _costs(model, fmt_name, request_tokens, cores, gpus, range(1, 97))
    kinds = {c.mode for c in costs}
    assert kinds == ({"cpu-compute", "pcie-stream"} if gpus else {"cpu-compute"})
    for kind in kinds:
        runs = [(n, c.decode_tokens_per_s) for n, c in enumerate(costs, 1) if c.mode == kind]
        assert [n for n, _ in runs] == (list(range(1, 97)) if kind == "cpu-compute" and not gpus else [
            n for n in range(1, 97) if (n < STEP) == (kind == "cpu-compute")
        ])  # fmt: skip
        for (n, each), (m, after) in itertools.pairwise(runs):
            assert after <= each * (1 + 1e-12), f"{kind}: a slot at {m} decoding {after} > at {n} {each}"
            assert m * after >= n * each * (1 - 1e-12), f"{kind}: {m} slots make {m * after} < {n} make {n * each}"


@pytest.mark.parametrize(
    ("cores", "alone", "at_31", "at_32"),
    [
        # one thread: the RAM layers' weights at 20 G a second, 2.19 s of the cores a token alone, 65.4 s at 31 slots;
        # at 32 the step copies their 36.70 GB (with the RAM layers' KV) over PCIe Gen4 at 80%, 25.2 GB/s: 1.456 s
        # for all 32, and the GPU's 0.086 s
        (1, 0.4446, 0.0151, 0.6473),
        # sixteen cores: the memory's 0.41 s alone; at 31 slots the cores' 4.20 s; the copy's 1.456 s at 32 alike
        (16, 2.134, 0.1918, 0.6473),
    ],
)
def test_the_step_at_32_slots_copies_the_ram_layers_to_the_gpu_whatever_the_threads(
    cores: float, alone: float, at_31: float, at_32: float
) -> None:
    """fix166's plan (Llama-3.3-70B q4_k_m on an RTX 4090, 34 slots of 1,800 tokens): a slot of 32 decoding at 0.65
    tokens/s is faster than one alone on one thread, slower than one alone on sixteen, as llama.cpp's op offload makes it."""
    costs = _costs(*MODELS[0], cores, 1, range(1, 35))
    one, thirty_one, thirty_two = costs[0], costs[30], costs[31]
    assert (one.mode, thirty_one.mode, thirty_two.mode) == ("cpu-compute", "cpu-compute", "pcie-stream")
    assert one.decode_tokens_per_s == pytest.approx(alone, rel=5e-3)
    assert thirty_one.decode_tokens_per_s == pytest.approx(at_31, rel=5e-3)
    assert thirty_two.decode_tokens_per_s == pytest.approx(at_32, rel=5e-3)
    assert thirty_two.seconds_per_token["pcie"] > 0 and "cpu-cores" not in thirty_two.seconds_per_token


def test_llama_cpp_on_the_cpu_alone_multiplies_every_step_on_it_at_32_slots_too() -> None:
    """A machine without a GPU has no backend to take a step's ops: 32 slots are timed on the CPU as 31 are.

    Before: ``estimate --ram-gib 128 --cpu ryzen-9-7950x --batch 32`` (Llama-3.1-8B q4_k_m, no --gpu) read 425.17
    tokens/s a slot, 13,605 for all, bound by the engine's 2.4 ms a step alone (the weights "streamed" to no GPU at an
    unbounded rate); 31 slots read 1.04 a slot, 32.35 for all.
    """
    got = {}
    for slots in (31, 32):
        cpu_only = estimate_json(
            "meta-llama/Llama-3.1-8B-Instruct", "--precision", "q4_k_m", "--ram-gib", "128", "--cpu", "ryzen-9-7950x",
            "--context", "4096", "--batch", str(slots),
        )["cpu_only"]  # fmt: skip
        assert cpu_only["bound"] == "cpu-cores"
        got[slots] = cpu_only["decode_tokens_per_s"], cpu_only["decode_tokens_per_s_all_slots"]
    assert got[32][0] <= got[31][0] and got[31][1] <= got[32][1] <= 1.01 * got[31][1]
    assert got[32][0] == pytest.approx(1.011, abs=2e-3)


FIX166 = """version: 1
name: t1
deployments:
  - name: assistant
    model: meta-llama/Llama-3.3-70B-Instruct
    inference: {precision: q4_k_m, max_context_tokens: 8192, avg_input_tokens: 1500, avg_output_tokens: 300,
                requests_per_second: 0.02}
hardware:
  provider: baremetal
  fixed: {gpu: rtx-4090-24gb, gpu_count: 1, ram_gib: 128, reserved_ram_gib: 16, nvme_gib: 1800,
          nvme_read_gb_per_s: 7.0, pcie_gen: 4, cpu: ryzen-9-7950x, threads: THREADS}
"""


@pytest.mark.parametrize(
    ("threads", "said"),
    [
        # fix166's plan: 34 slots at 0.64 each, one alone 0.44 on the one thread
        (
            1,
            "0.64 each (a step this wide llama.cpp runs on the GPU, the weights held in RAM copied to it each step, not "
            "multiplied on the CPU: each is faster than one stream alone, whose step the CPU multiplies)",
        ),
        # sixteen threads: one alone 2.15, faster than a slot of the 32 the wait takes (the CPU's step at few slots is
        # tests/test_fixed_slot_wait.py's)
        (
            16,
            "0.66 each (a step this wide llama.cpp runs on the GPU, the weights held in RAM copied to it each step, not "
            "multiplied on the CPU), in the 91%",
        ),
    ],
)
def test_the_parallel_slots_warning_says_how_the_slots_step_runs(tmp_path: Path, threads: int, said: str) -> None:
    """Before: "(the weights read once a step for all; the CPU's arithmetic is not counted, so at best)" whatever the
    step, though the CPU's multiplies have been counted once a slot since newuser38 and a step of 32 is the GPU's."""
    path = tmp_path / "t1.yaml"
    path.write_text(FIX166.replace("THREADS", str(threads)))
    plan = plan_file(str(path))[1].to_dict()
    (message,) = [f["message"] for f in plan["findings"] if f["code"] == "parallel-slots"]
    assert said in message and "not counted" not in message


def test_the_estimates_slots_line_says_the_step_is_the_gpus_at_32() -> None:
    """``estimate --ram-gib ... --gpu rtx-4090 --threads 1 --batch 34``: the slots line and its JSON ``step``."""
    args = (
        "meta-llama/Llama-3.3-70B-Instruct", "--precision", "q4_k_m", "--gpu", "rtx-4090-24gb", "--ram-gib", "128",
        "--cpu", "ryzen-9-7950x", "--threads", "1", "--context", "1800", "--input-tokens", "1500", "--output-tokens",
        "300",
    )  # fmt: skip
    steps = {n: estimate_json(*args, "--batch", str(n))["throughput"]["slots"]["step"] for n in (31, 34)}
    assert steps == {31: "cpu-compute", 34: "pcie-stream"}
    code, text = run_estimate(*args, "--batch", "34")
    (line,) = [line for line in text.splitlines() if line.lstrip().startswith("slots ")]
    assert code == 0 and "each is faster than one stream alone, whose step the CPU multiplies" in line, line


TWO_SOCKETS = """version: 1
name: two
deployments:
  - name: assistant
    model: meta-llama/Llama-3.3-70B-Instruct
    inference: {precision: q4_k_m, max_context_tokens: 8192, avg_input_tokens: 1000, avg_output_tokens: 300,
                requests_per_second: 0.001}
hardware:
  provider: baremetal
  fixed: {gpu: rtx-4090-24gb, gpu_count: 1, ram_gib: 256, nvme_gib: 1800, nvme_read_gb_per_s: 7.0, pcie_gen: 4,
          cpu: epyc-9354, cpu_sockets: 2THREADS}
"""
MACHINE = ("--ram-gib", "256", "--cpu", "epyc-9354", "--cpu-sockets", "2", "--nvme-gib", "1800", "--context", "8192")


@pytest.mark.parametrize(
    ("threads", "tail"),
    [
        # the bound socket's 32 cores, as a plan's line runs without threads given (llama.cpp's default: both sockets'
        # 64 cores, on the one node numactl gives it)
        (None, "--numa numactl --no-mmap --threads 32"),
        ("32", "--numa numactl --no-mmap --threads 32"),
        # past the bound socket's 64 threads: the plan's line runs 64 (fix163)
        ("100", "--numa numactl --no-mmap --threads 64"),
    ],
)
def test_the_estimates_line_runs_the_threads_a_plans_line_runs(tmp_path: Path, threads: str | None, tail: str) -> None:
    """fix163's left-over: on 2 x EPYC 9354 the estimate's line ended "--numa numactl --no-mmap", no --threads."""
    given = ("--threads", threads) if threads else ()
    line = estimate_json("meta-llama/Llama-3.3-70B-Instruct", "--precision", "q4_k_m", "--gpu", "rtx-4090-24gb",
                         *MACHINE, *given)["runtime_settings"]["llama.cpp"]  # fmt: skip
    assert line.endswith(tail), line
    path = tmp_path / "two.yaml"
    path.write_text(TWO_SOCKETS.replace("THREADS", f", threads: {threads}" if threads else ""))
    details = plan_file(str(path))[1].to_dict()["deployments"][0]["details"]
    assert tail.endswith(f"--threads {details['llama_cpp_threads']}")  # the plan's rendered --threads
    assert details["runtime_settings"]["llama.cpp_options"]["numactl"] == "-N 0 -m 0"


@pytest.mark.parametrize(
    ("machine", "tail"),
    [
        # two sockets: bound to one node with its 32 cores (the command had no --numa and no --threads)
        (("--cpu", "epyc-9354", "--cpu-sockets", "2"), "-np 1 --numa numactl --no-mmap --threads 32"),
        (("--cpu", "epyc-9354", "--cpu-sockets", "2", "--threads", "24"), "-np 1 --numa numactl --no-mmap --threads 24"),
        # one socket, threads given: the figures are timed at them
        (("--cpu", "ryzen-9-7950x", "--threads", "8"), "-np 1 --no-mmap --threads 8"),
        # one socket, none given: llama.cpp's default is the cores timed, the line as before
        (("--cpu", "ryzen-9-7950x"), "-np 1 --no-mmap"),
    ],
)
def test_the_cpu_only_estimates_command_runs_as_a_plans_line(machine: tuple[str, ...], tail: str) -> None:
    command = estimate_json("meta-llama/Llama-3.1-8B-Instruct", "--precision", "q4_k_m", "--ram-gib", "256",
                            "--context", "4096", *machine)["cpu_only"]["command"]  # fmt: skip
    assert command.endswith(tail), command
