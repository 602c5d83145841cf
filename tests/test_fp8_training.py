"""fix77 (issue 9): FP8 training (``training.compute_precision: fp8``, ``estimate --compute-precision fp8``).

The linear layers' GEMMs (forward and both backward GEMMs) run at the GPU's dense FP8 rate with the bf16 GEMMs'
efficiency constants; attention, the memory-bound operators, the optimizer and communication keep their bf16 time.
Megatron-LM (Transformer Engine) holds an FP8 copy of each linear weight and its transpose through the step. Refused
for LoRA / QLoRA, under a framework without FP8 training, and on a GPU without an FP8 rate.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.catalog import find_gpu, find_model
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.training import FP8_WEIGHT_CACHE_BYTES, TrainingSetup, size_training
from generator.sizing.training_conflicts import training_conflicts
from generator.sizing.training_mfu import linear_gemm_rate_ratio, training_utilisation
from generator.sizing.weights import Parallelism
from tests.helpers import call_cli

JOB = """\
version: 1
name: pt70b
deployments:
  - name: pt70b
    model: meta-llama/Llama-3.1-70B-Instruct
    parallelism: {{tp: 8, pp: 4}}
    training:
      method: {method}
      framework: {framework}
      compute_precision: {precision}
      sequence_length: 8192
      global_batch_size: 64
      dataset_tokens: 2000000000
      deadline_hours: 72
hardware:
  gpus: [{gpu}]
  platforms: [{platform}]
  provider: baremetal
outputs: [ansible]
"""


def _job(method: str = "full", framework: str = "megatron", precision: str = "fp8", gpu: str = "h100-sxm5-80gb") -> str:
    platform = {"h100-sxm5-80gb": "dgx-h100", "a100-sxm4-80gb": "dgx-a100"}[gpu]
    return JOB.format(method=method, framework=framework, precision=precision, gpu=gpu, platform=platform)


@pytest.mark.parametrize(
    ("yaml", "words"),
    [
        (_job(precision="fp16"), "compute_precision: 'fp16' is not one of bf16, fp8"),
        (_job(method="lora"), "not to lora: its base is frozen"),
        (_job(method="qlora"), "not to qlora: its base is frozen"),
        (_job(framework="hf"), "hf trains its GEMMs in bf16"),
        (_job(framework="deepspeed"), "deepspeed trains its GEMMs in bf16"),
    ],
)
def test_a_job_that_cannot_train_in_fp8_is_refused_at_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], yaml: str, words: str
) -> None:
    (tmp_path / "w.yaml").write_text(yaml)
    assert call_cli(tmp_path, ("validate", "w.yaml")) == 1
    err = capsys.readouterr().err
    assert "w.yaml:10:26: deployments[0].training.compute_precision" in err  # file, line and field
    assert words in err
    assert "Traceback" not in err


def test_no_framework_named_is_refused() -> None:
    (conflict,) = training_conflicts(method="full", compute_precision="fp8")
    assert conflict[0] == "compute_precision"
    assert "no framework is named" in conflict[1]
    assert training_conflicts(method="full", framework="megatron", compute_precision="fp8") == []
    assert training_conflicts(method="full", framework="fsdp2", compute_precision="fp8") == []
    assert training_conflicts(method="lora", framework="hf") == []  # bf16 (the default) is never refused for this


def test_a_gpu_without_fp8_is_refused_and_told_what_helps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "w.yaml").write_text(_job(gpu="a100-sxm4-80gb"))
    assert call_cli(tmp_path, ("plan", "w.yaml")) == 3  # no feasible plan
    err = capsys.readouterr().err
    assert "a100-sxm4-80gb (Ampere) has no dense FP8 rate in the catalog" in err
    assert "to unblock: allow a GPU with FP8 tensor cores (Ada, Hopper, Blackwell), or compute_precision bf16" in err
    assert "LoRA" not in err
    (tmp_path / "b.yaml").write_text(_job(gpu="a100-sxm4-80gb", precision="bf16"))
    assert call_cli(tmp_path, ("plan", "b.yaml")) == 0  # the same job in bf16 plans there


def test_the_estimate_refuses_at_its_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ("estimate", "meta-llama/Llama-3.1-8B", "--compute-precision", "fp8")
    assert call_cli(tmp_path, (*base, "--train", "lora", "--framework", "megatron")) == 2
    assert "--compute-precision: FP8 training (compute_precision fp8) applies to full training" in capsys.readouterr().err
    assert call_cli(tmp_path, (*base, "--train", "full", "--framework", "unsloth")) == 2
    assert "--compute-precision: " in capsys.readouterr().err
    assert call_cli(tmp_path, (*base, "--train", "full", "--framework", "megatron", "--gpu", "a100-sxm4-80gb")) == 1
    assert "--gpu a100-sxm4-80gb: FP8 training (compute_precision fp8) needs FP8 tensor cores" in capsys.readouterr().err
    assert call_cli(tmp_path, ("estimate", "meta-llama/Llama-3.1-8B", "--compute-precision", "fp8")) == 2
    assert "--compute-precision applies to training" in capsys.readouterr().err


def test_the_gemm_rate_divides_the_gemms_alone() -> None:
    consts = Constants()
    args = (8192, 80, 70_000_000_000, 8192, consts)
    bf16 = training_utilisation(*args, operator_bytes_scale=1.3)
    assert training_utilisation(*args, operator_bytes_scale=1.3, gemm_rate_ratio=1.0) == bf16  # bf16 unchanged
    fp8 = training_utilisation(*args, operator_bytes_scale=1.3, gemm_rate_ratio=2.0)
    half = consts.training_gemm_half_hidden * 1.3
    # the GEMM-size term: the GEMMs' time halved, the memory-bound operators' (half x scale) kept
    assert fp8.gemm == pytest.approx(8192 / (8192 / 2 + half))
    assert bf16.gemm == pytest.approx(8192 / (8192 + half))
    # compute FLOPs a unit time: faster, but by less than the GEMM rate (attention and the operators stay)
    assert 1.0 < fp8.compute / bf16.compute < 2.0
    assert linear_gemm_rate_ratio("bf16", 1979.0, 989.0) == 1.0
    assert linear_gemm_rate_ratio("fp8", 1979.0, 989.0) == pytest.approx(2.001, abs=1e-3)


ESTIMATE: tuple[str, ...] = ("--train", "full", "--gpus", "8", "--seq-len", "8192", "--micro-batch", "1")
ESTIMATE += ("--accumulation", "16", "--gradient-checkpointing", "full", "--json")
#: Each framework's layout: Megatron-LM TP2 x DP4 at ZeRO-1 (its distributed optimizer), FSDP2 over 8 at ZeRO-3.
LAYOUT = {"megatron": ("--zero", "1", "--tp", "2"), "fsdp2": ("--zero", "3")}


def _estimate(tmp_path: Path, capsys: pytest.CaptureFixture[str], gpu: str, framework: str, precision: str) -> dict[str, Any]:
    args = ("estimate", "meta-llama/Llama-3.1-8B", "--gpu", gpu, "--framework", framework, *ESTIMATE, *LAYOUT[framework])
    assert call_cli(tmp_path, (*args, "--compute-precision", precision)) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


@pytest.mark.parametrize(
    ("gpu", "framework"),
    [("h100-sxm5-80gb", "megatron"), ("b200-sxm-180gb", "megatron"), ("l40s-48gb", "fsdp2"), ("h200-sxm-141gb", "fsdp2")],
)
def test_an_fp8_step_is_faster_by_less_than_the_peak_ratio(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], gpu: str, framework: str
) -> None:
    bf16 = _estimate(tmp_path, capsys, gpu, framework, "bf16")
    fp8 = _estimate(tmp_path, capsys, gpu, framework, "fp8")
    spec = find_gpu(gpu)
    peak = (spec.tflops("fp8") or 0) / (spec.tflops("bf16") or 1)
    speed_up = bf16["training_speed"]["step_seconds"] / fp8["training_speed"]["step_seconds"]
    assert 1.2 < speed_up < peak
    # communication unchanged: the TP all-reduce and the DP traffic move the same bytes in the same time
    for term in ("tp_allreduce_s", "dp_zero_comm_s"):
        assert fp8["training_speed"]["step_time"][term] == bf16["training_speed"]["step_time"][term]
    assert fp8["training"]["compute_precision"] == "fp8"
    assert "compute_precision" not in bf16["training"]


def test_megatron_holds_fp8_copies_of_its_linear_weights(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bf16 = _estimate(tmp_path, capsys, "h100-sxm5-80gb", "megatron", "bf16")
    fp8 = _estimate(tmp_path, capsys, "h100-sxm5-80gb", "megatron", "fp8")
    arch = parse_architecture(find_model("meta-llama/Llama-3.1-8B").config)
    linear = sum(lin.weight_params for layer in arch.layers for lin in layer.linears)
    # 2 bytes (the weight and its transpose, 1 each) a linear parameter, the GPU's TP2 half of them
    cache = fp8["memory"]["weight_parts"]["fp8_weight_cache"]
    assert cache == pytest.approx(FP8_WEIGHT_CACHE_BYTES * linear / 2, rel=2e-3)
    assert cache / 2**30 == pytest.approx(6.50, abs=0.01)
    assert "fp8_weight_cache" not in bf16["memory"]["weight_parts"]
    assert fp8["memory"]["per_gpu"]["total"] - bf16["memory"]["per_gpu"]["total"] == pytest.approx(cache, abs=2)
    # the gradients and optimizer states keep their bytes
    for part in ("gradients", "optimizer"):
        assert fp8["memory"]["per_gpu"][part] == bf16["memory"]["per_gpu"][part]


def test_torchao_float8_memory_is_sized_as_bf16s() -> None:
    arch = parse_architecture(find_model("meta-llama/Llama-3.1-8B").config)
    setup = TrainingSetup(method="full", framework="fsdp2", zero_stage=3, data_parallel=8, sequence_length=4096)
    bf16 = size_training(arch, setup, Parallelism(), Constants(), nvlink=True)
    fp8 = size_training(arch, setup._replace(compute_precision="fp8"), Parallelism(), Constants(), nvlink=True)
    assert fp8 == bf16


def test_an_fp8_plan_is_deterministic_and_says_it(tmp_path: Path) -> None:
    (tmp_path / "w.yaml").write_text(_job())
    assert call_cli(tmp_path, ("render", "w.yaml", "-o", "a")) == 0
    assert call_cli(tmp_path, ("render", "w.yaml", "-o", "b")) == 0
    first, second = (tmp_path / "a" / "spec.json").read_bytes(), (tmp_path / "b" / "spec.json").read_bytes()
    assert first == second
    (job,) = json.loads(first)["plan"]["deployments"]
    assert job["details"]["compute_precision"] == "fp8"
    assert any(r.startswith("FP8 training: the linear layers' GEMMs") and "FP8 copies" in r for r in job["reasons"])
    # the header keeps the weights' bf16 and says the GEMMs' FP8 (fix77 left it "bf16" alone)
    assert "- Precision: bf16 (FP8 GEMMs)" in (tmp_path / "a" / "SPEC.md").read_text()
    (tmp_path / "c.yaml").write_text(_job(precision="bf16"))
    assert call_cli(tmp_path, ("render", "c.yaml", "-o", "c")) == 0
    (bf16,) = json.loads((tmp_path / "c" / "spec.json").read_text())["plan"]["deployments"]
    assert "compute_precision" not in bf16["details"]
    assert "- Precision: bf16\n" in (tmp_path / "c" / "SPEC.md").read_text()
    fp8_step, bf16_step = job["details"]["step_time"], bf16["details"]["step_time"]
    assert bf16_step["total_s"] / 2 < fp8_step["total_s"] < bf16_step["total_s"]
    assert fp8_step["tp_allreduce_s"] == bf16_step["tp_allreduce_s"]
