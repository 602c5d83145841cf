"""newuser106: a SaaS serving many LoRA adapters over one base, and an AWQ tier on Hopper.

1. ``lora-slots-short``: vLLM's scheduler skips a request of an adapter the step does not hold once it holds
   ``max_loras`` (vllm/v1/core/sched/scheduler.py), so a planned batch whose distinct adapters outnumber the slots
   cannot form. 40 adapters, batch 40: 40 x (1 - (39/40)^40) = 25.4707 distinct, 26 slots; 10 adapters, batch 14:
   10 x (1 - 0.9^14) = 7.71, 8 slots.
2. An AWQ checkpoint (zero points) runs Marlin on an H100, not Machete, which refuses zero points
   (vllm/.../kernels/mixed_precision/machete.py: "Zero points currently not supported by Machete").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.api import plan_file
from generator.catalog import find_model
from generator.errors import ArchitectureError
from generator.planner.lora_slot_wait import distinct_adapters_in_batch, slots_needed
from generator.sizing.loaded_weights import loaded_format
from generator.sizing.performance import dense_dequant_kernel
from generator.sizing.precision import WEIGHT_FORMATS
from generator.sizing.quantization import parse_quantization_config
from tests.conftest import REPO
from tests.helpers import edited_copy, estimate_json

EXAMPLE = REPO / "examples" / "saas-lora-adapters-aws.yaml"


@pytest.mark.parametrize(
    ("adapters", "batch", "distinct", "slots"),
    [(40, 40, 25.4707, 26), (10, 14, 7.7123, 8), (40, 3, 2.9256, 3), (4, 500, 4.0, 4)],
)
def test_distinct_adapters_of_a_batch_and_the_slots_they_need(adapters: int, batch: int, distinct: float, slots: int) -> None:
    assert distinct_adapters_in_batch(adapters, batch) == pytest.approx(distinct, abs=1e-4)
    assert slots_needed(adapters, batch) == slots


def _slot_findings(path: Path) -> list[tuple[str, str]]:
    _, plan = plan_file(str(path))
    return [(f.message, f.path) for f in plan.findings if f.code == "lora-slots-short"]


def test_the_example_s_slots_hold_its_batch() -> None:
    assert _slot_findings(EXAMPLE) == []


def test_eight_slots_for_forty_adapters_at_batch_40_are_said_short(tmp_path: Path) -> None:
    path = edited_copy(EXAMPLE, tmp_path, ("max_loras: 32", "max_loras: 8"))
    [(message, at)] = _slot_findings(path)
    assert at == "deployments[0].inference.lora.max_loras"
    assert "planned batch of 40 requests" in message
    assert "holds 25.5 distinct adapters on average, but --max-loras 8" in message
    # 18 more slots of 80 MiB (Llama 3.1 8B at rank 16 over every linear, tests/test_lora_serving.py)
    assert "Set max_loras to at least 26 (another 1,440 MiB a GPU" in message


def _asymmetric(cfg: dict[str, object]) -> bool:
    parsed = parse_quantization_config(cfg)
    assert parsed is not None
    return parsed.asymmetric


def test_awq_and_gptq_say_whether_their_kernel_takes_zero_points() -> None:
    awq = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}
    assert _asymmetric(awq)
    assert not _asymmetric({**awq, "zero_point": False})
    gptq = {"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": True}
    assert not _asymmetric(gptq)
    assert _asymmetric({**gptq, "sym": False})
    with pytest.raises(ArchitectureError, match=r"quantization_config\.zero_point' must be true or false"):
        parse_quantization_config({**awq, "zero_point": "false"})


def test_machete_runs_symmetric_int4_on_hopper_and_marlin_runs_awq() -> None:
    int4 = WEIGHT_FORMATS["int4"]
    awq = parse_quantization_config({"quant_method": "awq", "bits": 4, "group_size": 128})
    gptq = parse_quantization_config({"quant_method": "gptq", "bits": 4, "group_size": 128})
    assert dense_dequant_kernel("hopper", loaded_format(int4, "hopper", "vllm", gptq)) == "machete"
    assert dense_dequant_kernel("hopper", loaded_format(int4, "hopper", "vllm", awq)) == "marlin"
    assert dense_dequant_kernel("ada-lovelace", loaded_format(int4, "ada-lovelace", "vllm", awq)) == "marlin"


def test_an_awq_checkpoint_on_an_h100_is_timed_with_marlin(tmp_path: Path) -> None:
    config = dict(find_model("Qwen/Qwen2.5-32B-Instruct").config)
    config["quantization_config"] = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True}
    config["torch_dtype"] = "float16"
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    args = ("--gpu", "h100-sxm5-80gb", "--context", "4096", "--input-tokens", "1500", "--output-tokens", "300")
    awq = estimate_json(str(path), *args, "--batch", "32")["throughput"]
    assert awq["dequantized_in_gemm"]["dense_kernel"] == "marlin"
    # Machete (ratio 1) gave 1,073.6 output tokens/s here; Marlin's dequant_gemm_efficiency_ratio slows the prompts
    assert awq["max_output_tokens_per_s"] < 900
