"""newuser85: the offload's steps are the placement's that runs, at the -ub the plan takes.

gpt-oss-120b on an RTX 4090 with 128 GiB at 16,384 tokens said "routed experts of 23 MoE layer(s) to system RAM" beside
the llama-server line's ``-ot`` of 24 (blk 12-35): the steps were read off llama.cpp's -ub 512 placement before the
larger -ub 1024 buffer moved layer 12's experts off the GPU too.
"""

from __future__ import annotations

import re

import pytest

from tests.helpers import estimate_json

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
