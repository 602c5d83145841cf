"""newuser85: the offload's steps are the placement's that runs, at the -ub the plan takes.

gpt-oss-120b on an RTX 4090 with 128 GiB at 16,384 tokens said "routed experts of 23 MoE layer(s) to system RAM" beside
the llama-server line's ``-ot`` of 24 (blk 12-35): the steps were read off llama.cpp's -ub 512 placement before the
larger -ub 1024 buffer moved layer 12's experts off the GPU too.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers import estimate_json, specgen_in_process

CASES = [
    ("openai/gpt-oss-120b", "--gpu", "rtx-4090", "--ram-gib", "128", "--context", "16384"),
    ("mistralai/Mixtral-8x7B-Instruct-v0.1", "--gpu", "rtx-4090", "--ram-gib", "96", "--context", "8192",
     "--input-tokens", "3000", "--output-tokens", "300"),
]  # fmt: skip


@pytest.mark.parametrize("args", CASES, ids=["gpt-oss-120b", "mixtral"])
def test_expert_layers_said_are_the_override_tensors(args: tuple[str, ...]) -> None:
    data = estimate_json(*args)
    decisions = data["offload"]["decisions"]
    assert any("more layer(s) off the GPUs" in d for d in decisions)  # a larger -ub moved weights: the case at issue
    said = next(d for d in decisions if d.startswith("routed experts of "))
    count = int(re.match(r"routed experts of (\d+) MoE layer", said).group(1))  # type: ignore[union-attr]
    line = data["runtime_settings"]["llama.cpp"]
    listed = re.search(r"blk\\\.\(([0-9|]+)\)\\\.ffn_", line)
    assert listed is not None, line
    assert count == len(listed.group(1).split("|"))


OSS_OFFICE = """\
version: 1
name: office-oss
deployments:
  - name: oss
    model: openai/gpt-oss-120b
    inference:
      max_context_tokens: 16384
      avg_input_tokens: 1000
      avg_output_tokens: 200
      requests_per_second: 0.05
hardware:
  provider: baremetal
  fixed:
    gpu: rtx-4090-24gb
    gpu_count: 1
    ram_gib: 128
    cpu: core-i9-14900k
"""


def test_server_slots_are_timed_at_the_plans_ubatch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The slots were placed at -ub 512 where the plan runs -ub 1024, whose buffer moves layer 12's experts to RAM: a
    slot "alone" decoded 36.97 tokens/s beside the plan's decode of 35.82 (3 slots 14.88 each, now 14.38)."""
    path = tmp_path / "w.yaml"
    path.write_text(OSS_OFFICE)
    code, out, err = specgen_in_process(capsys, "plan", str(path))
    assert code == 0, err
    decode = re.search(r"- decode ([0-9.]+) tokens/s", out)
    alone = re.search(r"output tokens at ([0-9.]+) tokens/s alone", out)
    assert decode is not None and alone is not None, out
    assert alone.group(1) == decode.group(1) == "35.82"
    assert "-b/-ub 1024" in out


def test_estimate_slots_are_timed_at_the_plans_ubatch() -> None:
    args = CASES[0] + ("--input-tokens", "1000", "--output-tokens", "200")
    one = estimate_json(*args)["throughput"]["decode_tokens_per_s"]
    three = estimate_json(*args, "--batch", "3")
    assert three["throughput"]["ubatch_tokens"] == 1024
    slots = three["throughput"]["slots"]
    # on the -ub 1024 placement (24 layers' experts in RAM) 14.375 each; on the -ub 512 one (23) it was 14.88
    assert slots["slots"] == 3 and slots["stream_tokens_per_s"] == 14.375 < one
