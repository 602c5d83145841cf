"""``validate`` says ``precision-not-in-checkpoint`` as ``plan`` does (newuser110).

A platform engineer wrote ``precision: nvfp4`` beside ``meta-llama/Llama-3.3-70B-Instruct`` (BF16) and
``deepseek-ai/DeepSeek-R1`` (FP8 blocks) for Blackwell on GKE: ``validate`` said "ok" (exit 0, even with
``--fail-on warning``) while ``plan`` warned that the engine would load the checkpoints' own weights, so a CI job
gating on ``validate`` passed a plan whose weights, KV cache and replicas are not what runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import run_specgen

WORKLOAD = """\
version: 1
name: q
deployments:
  - name: chat
    model: {model}
    inference: {{precision: {precision}, max_context_tokens: 8192, requests_per_second: 1}}
hardware:
  gpus: [b200-sxm-180gb]
"""


@pytest.mark.parametrize(
    ("model", "precision", "own"),
    [("meta-llama/Llama-3.3-70B-Instruct", "nvfp4", "bf16"), ("deepseek-ai/DeepSeek-R1", "fp4", "fp8-block")],
)
def test_validate_warns_of_a_format_the_checkpoint_does_not_hold(tmp_path: Path, model: str, precision: str, own: str) -> None:
    (tmp_path / "w.yaml").write_text(WORKLOAD.format(model=model, precision=precision))
    said = run_specgen("validate", "w.yaml", cwd=tmp_path)
    assert said.returncode == 0, said.stderr
    # the alias fp4 is said as the format it names, at the precision's line and column
    assert f"w.yaml:6:28: warning: 'chat' is sized at nvfp4, but {model} holds {own} weights" in said.stderr
    assert "[precision-not-in-checkpoint]" in said.stderr
    gated = run_specgen("validate", "--fail-on", "warning", "w.yaml", cwd=tmp_path)
    assert gated.returncode == 5, gated.stderr


@pytest.mark.parametrize("precision", ["fp8", "bf16"])
def test_validate_is_silent_where_the_engine_serves_the_format(tmp_path: Path, precision: str) -> None:
    """fp8 of a 16-bit checkpoint is quantized as vLLM loads it; bf16 is the checkpoint's own."""
    (tmp_path / "w.yaml").write_text(WORKLOAD.format(model="meta-llama/Llama-3.3-70B-Instruct", precision=precision))
    said = run_specgen("validate", "--fail-on", "warning", "w.yaml", cwd=tmp_path)
    assert said.returncode == 0 and "precision-not-in-checkpoint" not in said.stderr, said.stderr
