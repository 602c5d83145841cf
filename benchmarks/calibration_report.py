"""Print every calibration row of shared/reference/calibration.json next to specgen's prediction.

Usage: python benchmarks/calibration_report.py  (from the repository root)
Reports: vLLM weights per GPU, LLaMA-Factory / axolotl fine-tuning peaks, TensorRT-LLM throughput.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from generator.calculator.estimate import EstimateRequest, estimate  # noqa: E402
from generator.catalog import find_model  # noqa: E402
from generator.sizing.architecture import parse_architecture  # noqa: E402
from generator.sizing.constants import Constants  # noqa: E402
from generator.sizing.precision import weight_format  # noqa: E402
from generator.sizing.training import TrainingSetup, size_training  # noqa: E402
from generator.sizing.weights import Parallelism, size_weights  # noqa: E402
from generator.units import GB, GIB  # noqa: E402

TRT_MODELS = {
    "nvidia/Llama-3.3-70B-Instruct-FP4 / -FP8": "meta-llama/Llama-3.3-70B-Instruct",
    "Llama-3.1-405B-Instruct (nvidia FP4/FP8 ckpts)": "meta-llama/Llama-3.1-405B-Instruct",
    "nvidia/Llama-3.1-8B-Instruct-FP8": "meta-llama/Llama-3.1-8B-Instruct",
    "Qwen3-235B-A22B (nvidia FP4/FP8 ckpts)": "Qwen/Qwen3-235B-A22B",
}


def _summary(name: str, errors: list[float]) -> None:
    absolute = [abs(e) for e in errors]
    print(f"{name}: {len(errors)} rows, median |error| {statistics.median(absolute):.1%}, max |error| {max(absolute):.1%}\n")


def vllm(cal: dict[str, Any]) -> None:
    errors = []
    print("vLLM weights per GPU (GiB): model, TP, measured, predicted, error")
    for row in cal["vllm_memory"]:
        arch = parse_architecture(find_model(row["model"]).config)
        got = size_weights(arch, weight_format("bf16"), Parallelism(tp=row["tensor_parallel_size"])).per_gpu_bytes / GIB
        errors.append(got / row["weights_gib"] - 1)
        print(f"  {row['model']:45s} {row['tensor_parallel_size']}  {row['weights_gib']:8.4f} {got:8.4f} {errors[-1]:+.2%}")
    _summary("vLLM weights", errors)


def training(cal: dict[str, Any]) -> None:
    errors = []
    print("Fine-tuning peak (GB): framework, method, batch, seq, measured, predicted, error")
    for row in cal["training_memory"]:
        if not row["framework"].startswith("LLaMA-Factory") or not isinstance(row["vram_gb"], (int, float)):
            continue
        arch = parse_architecture(find_model("meta-llama/Llama-2-7b-hf").config)
        flash = "FA2" in row["framework"] or "FlashAttention2" in row["framework"] or "Unsloth" in row["framework"]
        setup = TrainingSetup(row["method"], micro_batch_size=row["batch_size"], sequence_length=row["seq_len"],
                              lora_rank=row["lora_rank"], flash_attention=flash)  # fmt: skip
        got = size_training(arch, setup, Parallelism(), Constants()).per_gpu.total / GB
        err = got / row["vram_gb"] - 1
        unsloth = "Unsloth" in row["framework"]
        if not unsloth:
            errors.append(err)
        tag = "  (Unsloth: offloaded checkpoints and fused loss; not modelled, not in the median)" if unsloth else ""
        shape = f"{row['method']:5s} b{row['batch_size']} s{row['seq_len']:6d}"
        print(f"  {row['framework']:32s} {shape} {row['vram_gb']:5} {got:6.1f} {err:+.1%}{tag}")
    _summary("Fine-tuning (HF / FlashAttention2 rows)", errors)


def throughput(cal: dict[str, Any]) -> None:
    errors = []
    print("TensorRT-LLM max output tokens/s (H100, FP8): model, TP, ISL/OSL, measured, predicted, error")
    for row in cal["throughput_trtllm"]:
        model = TRT_MODELS.get(row["model"])
        if model is None:
            print(f"  {row['model']}: not in the catalog (Llama 4 configs unsourced), skipped")
            continue
        req = EstimateRequest(
            model=model, precision="fp8", kv_precision="fp8", context_tokens=row["isl"] + row["osl"], tp=row["tp"], pp=row["pp"],
            gpu="h100-sxm5-80gb", input_tokens=row["isl"], output_tokens=row["osl"],
        )  # fmt: skip
        got = estimate(req)["throughput"]["max_output_tokens_per_s"]
        errors.append(got / row["output_tokens_per_sec_total"] - 1)
        name = model.split("/")[1]
        measured = row["output_tokens_per_sec_total"]
        print(f"  {name:28s} {row['tp']} {row['isl']:6d}/{row['osl']:5d} {measured:7d} {got:9.0f} {errors[-1]:+.1%}")
    _summary("TensorRT-LLM throughput", errors)


def main() -> int:
    cal = json.loads((REPO.parent / "shared" / "reference" / "calibration.json").read_text())
    vllm(cal)
    training(cal)
    throughput(cal)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
