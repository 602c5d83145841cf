"""A service sized in a format its checkpoint does not hold and no engine makes of it online (newuser27 item 2).

``precision: int4`` on the 16-bit Qwen3-32B was sized as an AWQ/GPTQ model while the rendered engine started the BF16
checkpoint: the plan's weights, KV cache and replicas were not what runs, and nothing said so. fp8 is quantized as
vLLM loads the checkpoint (``--quantization fp8``); bf16 and fp16 cast to each other; a checkpoint quantized to the
format is served as it is.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator import catalog
from generator.api import plan_file

WORKLOAD = """\
version: 1
name: q
deployments:
  - name: assistant
    model: {model}
    inference: {{precision: {precision}, max_context_tokens: 8192, requests_per_second: 1}}
hardware:
  gpus: [a100-sxm4-80gb]
"""


def _warnings(tmp_path: Path, model: str, precision: str) -> list[dict[str, str]]:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(model=model, precision=precision))
    plan = plan_file(str(path))[1].to_dict()
    return [f for f in plan["findings"] if f["code"] == "precision-not-in-checkpoint"]


@pytest.mark.parametrize(
    ("precision", "warned"), [("int4", True), ("int8", True), ("nf4", True), ("fp8", False), ("bf16", False), ("fp16", False)]
)
def test_a_16_bit_checkpoint_is_served_in_the_formats_engines_make_of_it(tmp_path: Path, precision: str, warned: bool) -> None:
    found = _warnings(tmp_path, "Qwen/Qwen3-32B", precision)
    if not warned:
        assert found == []
        return
    (finding,) = found
    assert finding["level"] == "warning" and finding["path"] == "deployments[0].inference.precision"
    assert f"'assistant' is sized at {precision}, but Qwen/Qwen3-32B holds bf16 weights" in finding["message"]
    # fuzz24 L9: vLLM's in-flight bitsandbytes NF4 is named where it exists, with why specgen does not plan on it
    assert ("--quantization bitsandbytes" in finding["message"]) is (precision == "nf4")


def test_a_checkpoint_quantized_to_the_format_is_served_as_it_is(tmp_path: Path) -> None:
    """An AWQ config (a local folder with its quantization_config) holds int4: nothing to warn."""
    folder = tmp_path / "Qwen3-32B-AWQ"
    folder.mkdir()
    config = dict(catalog.find_model("Qwen/Qwen3-32B").config)
    config["quantization_config"] = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}
    (folder / "config.json").write_text(json.dumps(config))
    assert _warnings(tmp_path, "./Qwen3-32B-AWQ", "int4") == []


@pytest.mark.parametrize(
    ("precision", "served"), [("fp8", "fp8-block"), ("fp8-block", "fp8-block"), ("fp8-channel", "fp8-channel")]
)
def test_fp8_on_a_checkpoint_of_another_fp8_layout_is_that_layout(tmp_path: Path, precision: str, served: str) -> None:
    """newuser34 item 10: ``precision: fp8`` on DeepSeek-R1 (128 x 128 block-scaled FP8) was sized per tensor and
    warned that the checkpoint was not what the plan sized; the engine loads the checkpoint's FP8 as stored. Another
    FP8 layout named exactly is still one the checkpoint does not hold."""
    from tests.helpers import estimate_json

    model = "deepseek-ai/DeepSeek-V2-Lite"  # a small MLA model, given DeepSeek-R1's block-FP8 quantization_config
    folder = tmp_path / "V2-Lite-FP8"
    folder.mkdir()
    config = dict(catalog.find_model(model).config)
    config["quantization_config"] = catalog.find_model("deepseek-ai/DeepSeek-R1").config["quantization_config"]
    (folder / "config.json").write_text(json.dumps(config))
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(model="./V2-Lite-FP8", precision=precision))
    plan = plan_file(str(path))[1].to_dict()
    (dep,) = plan["deployments"]
    assert dep["precision"] == served
    warned = [f for f in plan["findings"] if f["code"] == "precision-not-in-checkpoint"]
    assert bool(warned) == (served != "fp8-block")
    # the estimate sizes it so too: fp8 626.77 GiB per tensor, 626.92 GiB in the checkpoint's blocks
    data = estimate_json("deepseek-ai/DeepSeek-R1", "--precision", precision, "--gpu", "h200-sxm-141gb", "--tp", "8")
    assert data["precision"]["weights"] == served
