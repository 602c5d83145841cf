"""newuser65 (offline and batch inference): item 9, an encoder's max_num_batched_tokens raised with no word.

bge-m3 with ``max_num_batched_tokens: 1024`` and an 8,192-token context was sized and rendered at 8,192: vLLM runs an
encoder-only model without chunked prefill, so a pass holds one whole request. ``batched-tokens-raised`` says so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.api import plan_as_deployed

EMBED = """\
version: 1
name: emb
deployments:
  - name: d
    model: MODEL
    inference:
      task: TASK
      max_context_tokens: 8192
      avg_input_tokens: 512
      max_num_batched_tokens: TOKENS
      requests_per_second: 20
      slo: {ttft_p95_ms: 500}
hardware:
  provider: aws
  gpus: [l4-24gb]
kubernetes: {location: us-east-1}
"""


@pytest.mark.parametrize(
    ("model", "task", "tokens", "raised"),
    [
        ("BAAI/bge-m3", "embed", 1024, True),
        ("BAAI/bge-m3", "embed", 8192, False),  # at the context already
        ("Qwen/Qwen3-8B", "embed", 1024, False),  # a decoder embedding: chunked prefill runs, the setting stands
    ],
)
def test_an_encoders_batched_tokens_below_its_context_are_said_raised(
    tmp_path: Path, model: str, task: str, tokens: int, raised: bool
) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(EMBED.replace("MODEL", model).replace("TASK", task).replace("TOKENS", str(tokens)), encoding="utf-8")
    _, plan = plan_as_deployed(str(path))
    found = [f for f in plan.findings if f.code == "batched-tokens-raised"]
    assert [(f.level, f.path) for f in found] == ([("info", "deployments[0].inference.max_num_batched_tokens")] if raised else [])
    if raised:
        assert found[0].message.startswith("deployment d: max_num_batched_tokens 1,024 is raised to max_context_tokens (8,192)")
        (dep,) = plan.deployments
        assert dep.details["max_num_batched_tokens"] == 8192  # as sized and rendered


BATCH = """\
version: 1
name: b
deployments:
  - name: s
    model: meta-llama/Llama-3.1-8B-Instruct
    inference:
      service_class: batch
      max_context_tokens: 8192
      avg_input_tokens: 3000
      avg_output_tokens: 300
      requests_per_second: 20
SLO
hardware:
  provider: aws
  gpus: [h100-sxm5-80gb]
kubernetes: {location: us-east-1}
"""


@pytest.mark.parametrize(
    ("slo", "bound"),
    [
        ("", "at its largest batch, service_class batch setting no latency target"),  # item 8: read "within the SLOs"
        ("      slo: {tpot_ms: 50}", "within the SLOs"),
    ],
)
def test_a_batch_service_says_what_holds_its_replicas(tmp_path: Path, slo: str, bound: str) -> None:
    path = tmp_path / "b.yaml"
    path.write_text(BATCH.replace("SLO\n", f"{slo}\n" if slo else ""), encoding="utf-8")
    _, plan = plan_as_deployed(str(path))
    (dep,) = plan.deployments
    assert any(reason.startswith("one replica sustains ") and f" req/s {bound} (" in reason for reason in dep.reasons)
