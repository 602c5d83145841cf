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
