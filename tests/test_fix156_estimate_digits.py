"""``specgen estimate``'s whole-number options tell the digits to write, as the workload file's errors do.

newuser89 left item 2: ``--seq-len 4k`` read "expected a whole number ... got '4k'" with nothing to write instead. The
hint is the workload's own (:func:`generator.workload.schema.written_number_hint`).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

WHOLE = "expected a whole number (at most 10^18), got"


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        (
            "--seq-len",
            "4k",
            f"argument --seq-len: {WHOLE} '4k'; write the number in full, digits only: 4000, or 4096 where a k is 1,024",
        ),
        (
            "--context",
            "32k",
            f"argument --context: {WHOLE} '32k'; write the number in full, digits only: 32000, or 32768 where a k is 1,024",
        ),
        ("--batch", "1,000", f"argument --batch: {WHOLE} '1,000'; write the number in full, digits only: 1000"),
        ("--batch", "4k", f"argument --batch: {WHOLE} '4k'; write the number in full, digits only: 4000"),
        ("--batch", "two", f"argument --batch: {WHOLE} 'two'\n"),
    ],
)
def test_estimate_whole_number_hint(option: str, value: str, said: str) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "generator", "estimate", "Qwen/Qwen3-8B", "--train", "lora", option, value],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 2
    assert said in run.stderr
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize(
    ("framework", "hint"),
    [
        ("llama_factory", "; did you mean 'llamafactory', 'llama-factory'?\n"),
        ("nemo-9", "unsloth\n"),  # nothing close: the choices alone
    ],
)
def test_estimate_framework_did_you_mean(framework: str, hint: str) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "generator", "estimate", "Qwen/Qwen3-8B", "--train", "lora", "--framework", framework],
        capture_output=True,
        text=True,
        check=False,
    )
    assert f"unknown framework '{framework}'; choose one of axolotl, " in run.stderr
    assert run.stderr.endswith(hint)
