"""QLoRA's NF4 base is dequantized to bf16 before every matmul: a step term of its own, by hand.

Llama 3.1 8B's decoder linears: 32 layers x (q 4096x4096 + k, v 4096x1024 + o 4096x4096 + gate, up, down 4096x14336)
= 32 x 218,103,808 = 6,979,321,856 weights. bitsandbytes NF4 with double quantization stores 4 bits a weight plus an
8-bit absmax per 64 and a 32-bit second-level scale per 256 absmax: (4 + 8.125 / 64) / 8 = 0.515869140625 bytes; a
dequantization reads that, writes 2 bytes of bf16 and the matmul reads them back: 4.515869140625 bytes a weight.
Full activation checkpointing dequantizes each weight 3 times a micro-batch (forward, recomputed forward, input
gradient): 6,979,321,856 x 4.515869140625 x 3 = 94,553,112,576 bytes, at the RTX 4090's 1,008 GB/s x 0.3.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import catalog
from generator.calculator.model_source import resolve_model
from generator.planner import plan_workload
from generator.planner.options import Hardware
from generator.planner.training import training_shapes
from generator.sizing.constants import Constants
from generator.sizing.nf4_dequant import dequant_bytes_per_micro_batch, dequant_bytes_per_param, quantized_weight_params
from generator.sizing.precision import weight_format
from generator.sizing.training_step import NO_DP, StepLayout, StepLinks, training_step
from generator.workload import load_workload
from generator.workload.models import TrainingSpec

CONSTS = Constants()
LLAMA_8B = "meta-llama/Llama-3.1-8B"
#: Bytes one micro-batch moves dequantizing Llama 3.1 8B under full checkpointing (module docstring).
BYTES_8B_FULL_CKPT = 94_553_112_576
#: Those bytes at the RTX 4090's 1,008 GB/s x nf4_dequant_bandwidth_efficiency 0.5 (0.3 until acc107 refitted it with
#: the Trainer family's eager operators counted, benchmarks/CALIBRATION.md).
DEQUANT_S_4090 = 94_553_112_576 / (1008e9 * 0.5)


def test_the_fitted_efficiency_is_the_one_the_hand_figures_use() -> None:
    assert CONSTS.nf4_dequant_bandwidth_efficiency == 0.5
    assert catalog.gpus()["rtx-4090-24gb"].memory_bandwidth_gb_per_s == 1008.0


@pytest.mark.parametrize(
    ("precision", "bytes_per_weight"),
    [
        pytest.param("nf4", 4.515869140625, id="nf4-double-quant"),
        # an fp32 absmax per 64: (4 + 32 / 64) / 8 + 4
        pytest.param("nf4-no-double-quant", 4.5625, id="nf4-fp32-absmax"),
    ],
)
def test_bytes_per_weight_of_one_dequantization(precision: str, bytes_per_weight: float) -> None:
    assert dequant_bytes_per_param(weight_format(precision)) == bytes_per_weight


@pytest.mark.parametrize(
    ("precision", "checkpointing", "model_parallel", "expected"),
    [
        pytest.param("nf4", "full", 1, BYTES_8B_FULL_CKPT, id="forward-recompute-backward"),
        pytest.param("nf4", "none", 1, BYTES_8B_FULL_CKPT * 2 // 3, id="no-recompute"),
        pytest.param("nf4", "full", 2, BYTES_8B_FULL_CKPT // 2, id="tp2-half-the-layers"),
        pytest.param("bf16", "full", 1, 0, id="lora-bf16-base-nothing"),
        pytest.param("int4", "full", 1, 0, id="gptq-base-not-modelled-here"),
    ],
)
def test_bytes_per_micro_batch(precision: str, checkpointing: str, model_parallel: int, expected: int) -> None:
    arch = resolve_model(LLAMA_8B).architecture
    assert quantized_weight_params(arch) == 6_979_321_856
    got = dequant_bytes_per_micro_batch(arch, weight_format(precision), checkpointing, model_parallel)
    assert got == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("accumulation", [1, 4])
def test_the_step_adds_the_dequantization_once_per_micro_batch(accumulation: int) -> None:
    def step(dequant: float) -> float:
        return training_step(
            StepLayout(1, 1, 1, 2, accumulation, 2048),
            StepLinks(tp_gbps=0.0, stage_gbps=0.0),
            CONSTS,
            hidden_size=4096,
            num_layers=32,
            flops_per_token=6 * 8e9,
            base_efficiency=0.3,
            dense_tflops=165.2,
            dp_traffic=NO_DP,
            dequant_bytes_per_micro_batch=dequant,
            memory_gb_per_s=1008.0,
        ).total_s

    assert step(BYTES_8B_FULL_CKPT) - step(0.0) == pytest.approx(accumulation * DEQUANT_S_4090, rel=1e-12)


def test_a_qlora_step_is_slower_than_the_lora_step_by_the_dequantization() -> None:
    """newuser22 item 3: QLoRA and LoRA of Llama 3.1 8B on one RTX 4090 were timed the same to the millisecond."""
    model = resolve_model(LLAMA_8B)
    hw = Hardware(catalog.platforms()["am5-desktop-tower"], catalog.gpus()["rtx-4090-24gb"])

    def steps(method: str) -> dict[tuple[int, int, int], float]:
        spec = TrainingSpec(method=method, sequence_length=2048, micro_batch_size=1, zero_stage=0, gradient_checkpointing="full")  # type: ignore[arg-type]
        shapes, blocked = training_shapes(model, spec, hw, CONSTS)
        assert shapes, blocked
        out = {}
        for s in shapes:
            assert s.step is not None
            out[(s.par.tp, s.setup.data_parallel, s.accumulation)] = s.step.total_s
            # TP splits the layers, and their dequantization with them
            assert s.step.dequant_s == (pytest.approx(DEQUANT_S_4090 / s.par.tp, rel=1e-12) if method == "qlora" else 0.0)
        return out

    lora, qlora = steps("lora"), steps("qlora")
    shared = lora.keys() & qlora.keys()  # the layouts both fit (a bf16 base needs more memory than NF4)
    assert (1, 1, 1) in shared
    for tp, dp, acc in shared:
        assert qlora[(tp, dp, acc)] - lora[(tp, dp, acc)] == pytest.approx(acc * DEQUANT_S_4090 / tp, rel=1e-9)


def test_the_plan_names_the_dequantization_in_the_step(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(
        "version: 1\nname: q\ndeployments:\n  - name: tune\n    model: meta-llama/Llama-3.1-8B\n"
        "    training: {method: qlora, sequence_length: 2048, micro_batch_size: 2, global_batch_size: 2,"
        " dataset_tokens: 100000000}\n"
        "hardware:\n  provider: baremetal\n  gpus: [rtx-4090-24gb]\n  platforms: [am5-desktop-tower]\n  max_nodes: 1\n"
    )
    job = plan_workload(load_workload(str(path))).deployments[0]
    assert job.details["step_time"]["nf4_dequant_s"] == round(DEQUANT_S_4090, 4)
    (line,) = [r for r in job.reasons if r.startswith("one step takes")]
    assert f"NF4 dequantization {DEQUANT_S_4090:.3f} s ({BYTES_8B_FULL_CKPT / 1e9:.1f} GB per GPU read and written)" in line


def test_the_deadline_counts_the_dequantization_when_it_sizes_the_gpus(tmp_path: Path) -> None:
    """70B QLoRA at one 2,048-token micro-batch on L40S: the dequantization is a third of the step, so a GPU count
    sized from the MFU alone missed the 10 h deadline on every layout (13.3 h at DP15) and the plan was infeasible."""
    path = tmp_path / "w.yaml"
    path.write_text(
        "version: 1\nname: q\ndeployments:\n  - name: tune\n    model: meta-llama/Llama-3.1-70B-Instruct\n"
        "    training: {method: qlora, zero_stage: 3, sequence_length: 2048, dataset_tokens: 200000000,"
        " deadline_hours: 10}\n"
        "hardware:\n  gpus: [l40s-48gb]\n  platforms: [dell-r760xa]\n  provider: baremetal\n"
    )
    job = plan_workload(load_workload(str(path))).deployments[0]
    step = job.details["step_time"]
    assert step["nf4_dequant_s"] > 0.25 * step["total_s"]
    assert job.details["hours"] <= 10


QLORA_DEADLINE = """version: 1
name: dq
deployments:
  - name: tune
    model: meta-llama/Llama-3.1-70B-Instruct
    training: {{method: qlora, lora_rank: 16, sequence_length: 512, global_batch_size: 64, dataset_tokens: 50000000,
               epochs: 1, deadline_hours: {hours}}}
hardware: {{gpus: [l40s-48gb], provider: baremetal}}
"""


def test_a_later_deadline_never_needs_more_gpus(tmp_path: Path) -> None:
    """fuzz19 item 1: the count from the compute alone (DP8) missed 4.9 h once each step dequantized, and DP16, which
    met 4 h, was never tried: a later deadline was infeasible. The count at one sequence a micro-batch is tried too."""
    from generator.api import plan_file

    gpus = []
    for hours in (3, 4, 4.5, 4.9, 6, 10):
        path = tmp_path / f"dq{hours}.yaml"
        path.write_text(QLORA_DEADLINE.format(hours=hours))
        (dep,) = plan_file(str(path))[1].deployments
        assert dep.details["hours"] <= hours
        gpus.append(dep.gpus)
    assert gpus == sorted(gpus, reverse=True) and gpus[3] == 16  # 4.9 h: the 16 GPUs that met 4 h
