"""vLLM on Intel Gaudi runs FP8 through Intel Neural Compressor, from a calibration run (newuser34 item 6).

The vllm-gaudi plugin's FP8: ``vllm serve ... --quantization inc --kv-cache-dtype fp8_inc`` with ``QUANT_CONFIG``
pointing at the measurements of a calibration run on the same Gaudi generation, validated on Llama models only
(https://docs.vllm.ai/projects/gaudi/en/latest/configuration/quantization/inc.html). The CUDA flags (``--quantization
fp8``, ``--kv-cache-dtype fp8``) were rendered, and nothing said a calibration run comes first.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.api import plan_file, render_file

#: vLLM's flags of the settings its memory and batch are sized at, which args gives first (fix115).
VLLM_SIZING = ("--tensor-parallel-size", "--pipeline-parallel-size", "--max-model-len", "--max-num-seqs",
               "--max-num-batched-tokens", "--gpu-memory-utilization")  # fmt: skip

WORKLOAD = """\
version: 1
name: gd
deployments:
  - name: chat
    model: meta-llama/Llama-3.3-70B-Instruct
    inference:
      precision: {precision}
      kv_cache_precision: {kv}
      max_context_tokens: 8192
      requests_per_second: 2
hardware:
  provider: baremetal
  gpus: [{gpu}]
"""


@pytest.mark.parametrize(
    ("gpu", "precision", "kv", "args", "warned"),
    [
        ("gaudi3-128gb", "fp8", "fp8", ["--quantization", "inc", "--kv-cache-dtype", "fp8_inc"], True),
        ("gaudi3-128gb", "fp8", "bf16", ["--quantization", "inc"], True),
        ("gaudi3-128gb", "bf16", "fp8", ["--kv-cache-dtype", "fp8_inc"], True),
        ("gaudi3-128gb", "bf16", "bf16", [], False),
        ("h100-sxm5-80gb", "fp8", "fp8", ["--quantization", "fp8", "--kv-cache-dtype", "fp8"], False),  # CUDA's
    ],
)
def test_fp8_on_gaudi_is_rendered_as_inc_and_warned_of_its_calibration(
    tmp_path: Path, gpu: str, precision: str, kv: str, args: list[str], warned: bool
) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(gpu=gpu, precision=precision, kv=kv))
    codes = [f.code for f in plan_file(str(path))[1].findings]
    assert ("gaudi-fp8-calibration" in codes) is warned
    (group_vars,) = [text for name, text in render_file(str(path)).items() if name.startswith("ansible/group_vars/")]
    rendered = [line.split("'")[1] for line in group_vars.splitlines() if line.startswith("        - ")]
    assert rendered[:12:2] == list(VLLM_SIZING) and rendered[12:] == args  # after the sizing flags (fix115)
