"""A failing or hung nvidia-smi is said as such, not as "missing or no GPU" (newuser75 item 6).

The most common failure (a driver / kernel mismatch after an upgrade: nvidia-smi present, exit 9) read "no NVIDIA GPU
detected (nvidia-smi missing or no GPU)", a hang the same after 20 s, and ``estimate --detect`` then exited 2 (a usage
error) with the whole usage text.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from generator.calculator import detect
from tests.helpers import specgen_in_process as specgen

DRIVER = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."


def _fake_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    tool = tmp_path / "nvidia-smi"
    tool.write_text("#!/bin/sh\n" + script + "\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    monkeypatch.setattr(detect, "COMMAND_TIMEOUT_S", 1)


CASES = [
    pytest.param(f'echo "{DRIVER}"; exit 9', f'nvidia-smi exited 9: "{DRIVER}"', id="driver-mismatch-exit-9"),
    pytest.param('echo "Failed to initialize NVML: Driver/library version mismatch" >&2; exit 18',
                 'nvidia-smi exited 18: "Failed to initialize NVML: Driver/library version mismatch"', id="stderr-first"),
    pytest.param("exit 3", "nvidia-smi exited 3", id="silent"),
    pytest.param("exec sleep 30", "nvidia-smi did not answer within 1 s", id="hang"),
]  # fmt: skip


@pytest.mark.parametrize(("script", "said"), CASES)
def test_detect_says_how_nvidia_smi_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], script: str, said: str
) -> None:
    _fake_smi(tmp_path, monkeypatch, script)
    facts = detect.detect_machine(detect.this_machine())
    assert facts["gpu_failed"].how == said and "gpu" not in facts
    block = detect.fixed_block(facts)
    assert f"# gpu not written: {said}; add gpu: and gpu_count: before using it\n" in block
    assert "nvidia-smi missing or no GPU" not in block
    code, out, err = specgen(capsys, "detect")
    assert code == 0 and f"# gpu not written: {said};" in out
    assert f"specgen: warning: {said}: the block has no gpu" in err


@pytest.mark.parametrize(("script", "said"), CASES[:1] + CASES[-1:])
def test_estimate_detect_exits_1_with_the_reason_not_2_with_the_usage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], script: str, said: str
) -> None:
    _fake_smi(tmp_path, monkeypatch, script)
    code, out, err = specgen(capsys, "estimate", "llama-3.1-8b", "--detect")
    assert (code, out) == (1, ""), err
    assert err == f"specgen estimate: error: --detect could not read this machine's GPUs: {said}; give --gpu\n"


def test_an_nvidia_smi_that_lists_no_gpu_is_still_no_gpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_smi(tmp_path, monkeypatch, "exit 0")
    facts = detect.detect_machine(detect.this_machine())
    assert "gpu_failed" not in facts
    assert "# no GPU detected (nvidia-smi, amd-smi and rocm-smi missing or list no GPU)" in detect.fixed_block(facts)


def test_a_gpu_index_listed_twice_is_counted_once_and_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """newuser75 item 6 (related): the same index 0 row twice was counted as gpu_count 2 (estimate split the model)."""
    row = "0, NVIDIA H100 80GB HBM3, 81559, 5, 16"
    _fake_smi(tmp_path, monkeypatch, f'echo "{row}"; echo "{row}"; echo "1, NVIDIA H100 80GB HBM3, 81559, 5, 16"')
    facts = detect.detect_machine(detect.this_machine())
    assert facts["gpu"].value == "h100-sxm5-80gb" and facts["gpu_count"].value == 2
    assert "# nvidia-smi lists GPU index 0 more than once: each counted once\n" in detect.fixed_block(facts)
