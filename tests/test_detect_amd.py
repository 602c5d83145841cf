"""``specgen detect`` on an AMD machine reads amd-smi, else rocm-smi (newuser77 item 12).

It read nvidia-smi alone and wrote "no NVIDIA GPU detected (nvidia-smi missing or no GPU)" on an MI300X server. The
fake tools print the JSON shapes AMD's tools print:

- ``amd-smi static --asic --vram --json``: a list of GPUs (amd-smi 24.x) or ``{"gpu_data": [...]}`` (25.x and later),
  each with ``asic.market_name`` and ``vram.size`` ``{"value": <MB>, "unit": "MB"}``, MB of 2^20 bytes (amdsmi_vram_info_t
  "vram size in MB", https://rocm.docs.amd.com/projects/amdsmi/en/latest/doxygen/docBin/html/structamdsmi__vram__info__t.html;
  196,592 MB on an MI300X, its 201,310,208 KB rocminfo pool).
- ``rocm-smi --showproductname --showmeminfo vram --json``: ``{"card0": {"Card Series": ..., "VRAM Total Memory (B)":
  "206158430208", ...}}`` (206,158,430,208 B: an MI300X's rocm-smi VRAM total, the catalog's memory_usable_mib source).

A failing or hung AMD tool is said as a failing nvidia-smi is (tests/test_detect_smi_failure.py).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from generator.calculator import detect
from tests.helpers import specgen_in_process as specgen


def _asic(name: str) -> dict[str, object]:
    return {"market_name": name, "vendor_id": "0x1002", "vendor_name": "Advanced Micro Devices Inc. [AMD/ATI]",
            "device_id": "0x74a1", "target_graphics_version": "gfx942"}  # fmt: skip


def _amd_smi(name: str, mb: int, count: int, wrapped: bool) -> str:
    gpus = [
        {"gpu": i, "asic": _asic(name), "vram": {"type": "HBM3", "vendor": "N/A", "size": {"value": mb, "unit": "MB"},
                                                 "bit_width": 8192, "max_bandwidth": {"value": 5300, "unit": "GB/s"}}}
        for i in range(count)
    ]  # fmt: skip
    return json.dumps({"gpu_data": gpus} if wrapped else gpus, indent=4)


def _rocm_smi(series: str, total_b: int, count: int) -> str:
    cards = {
        f"card{i}": {"Card Series": series, "Card Model": "0x74a1", "Card Vendor": "Advanced Micro Devices, Inc. [AMD/ATI]",
                     "Card SKU": "M3000100", "VRAM Total Memory (B)": str(total_b),
                     "VRAM Total Used Memory (B)": "297574400"}
        for i in range(count)
    }  # fmt: skip
    return json.dumps(cards, indent=4)


def _tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **scripts: str) -> None:
    """Fake tools on PATH (``amd_smi=`` names amd-smi); nvidia-smi lists no GPU, as on an AMD server with it left over."""
    scripts.setdefault("nvidia_smi", "exit 0")
    for name, script in scripts.items():
        tool = tmp_path / name.replace("_", "-")
        tool.write_text("#!/bin/sh\n" + script + "\n")
        tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    monkeypatch.setattr(detect, "COMMAND_TIMEOUT_S", 1)


def _printing(tmp_path: Path, text: str, name: str) -> str:
    out = tmp_path / f"{name}.json"
    out.write_text(text)
    return f'cat "{out}"'


MACHINES = [
    pytest.param("amd_smi", _amd_smi("AMD Instinct MI300X", 196592, 8, wrapped=True), "mi300x-192gb", 8,
                 "amd-smi 'AMD Instinct MI300X', 196592 MiB", id="amd-smi-25-gpu_data-8xMI300X"),
    pytest.param("amd_smi", _amd_smi("AMD Instinct MI300X", 196592, 8, wrapped=False), "mi300x-192gb", 8,
                 "amd-smi 'AMD Instinct MI300X', 196592 MiB", id="amd-smi-24-list-8xMI300X"),
    pytest.param("amd_smi", _amd_smi("AMD Instinct MI325X", 262128, 8, wrapped=True), "mi325x-256gb", 8,
                 "amd-smi 'AMD Instinct MI325X', 262128 MiB", id="amd-smi-MI325X"),
    # an MI250X is two GCDs, each listed as a GPU of 64 GB: the catalog's part is one GCD
    pytest.param("amd_smi", _amd_smi("AMD Instinct MI250X", 65520, 8, wrapped=True), "mi250x-128gb", 8,
                 "amd-smi 'AMD Instinct MI250X', 65520 MiB", id="amd-smi-MI250X-GCDs"),
    pytest.param("rocm_smi", _rocm_smi("AMD Instinct MI300X", 206158430208, 8), "mi300x-192gb", 8,
                 "rocm-smi 'AMD Instinct MI300X', 196608 MiB", id="rocm-smi-8xMI300X"),
    pytest.param("rocm_smi", _rocm_smi("Aqua Vanjaram [Instinct MI300X]", 206158430208, 4), "mi300x-192gb", 4,
                 "rocm-smi 'Aqua Vanjaram [Instinct MI300X]', 196608 MiB", id="rocm-smi-pci-ids-name"),
]  # fmt: skip


@pytest.mark.parametrize(("tool", "text", "gpu", "count", "how"), MACHINES)
def test_amd_gpus_are_read_and_matched_to_the_catalog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool: str, text: str, gpu: str, count: int, how: str
) -> None:
    _tools(tmp_path, monkeypatch, **{tool: _printing(tmp_path, text, tool)})
    facts = detect.detect_machine(detect.this_machine())
    assert (facts["gpu"].value, facts["gpu"].how) == (gpu, f"measured: {how}")
    assert facts["gpu_count"] == detect.Fact(count, f"measured: {tool.replace('_', '-')} lists {count} GPU(s)")
    assert "gpu_failed" not in facts
    block = detect.fixed_block(facts)
    assert f"gpu: {gpu}" in block and "no GPU detected" not in block


def test_specgen_detect_and_estimate_detect_on_an_mi300x_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _amd_smi("AMD Instinct MI300X", 196592, 8, wrapped=True)
    _tools(tmp_path, monkeypatch, amd_smi=_printing(tmp_path, text, "amd-smi"))
    code, out, err = specgen(capsys, "detect")
    assert code == 0, err
    assert "gpu: mi300x-192gb" in out and "gpu_count: 8" in out
    code, out, err = specgen(capsys, "estimate", "llama-3.1-8b", "--detect")
    assert code == 0, err
    assert "mi300x" in out.lower()


def test_an_unknown_amd_part_is_said_not_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tools(tmp_path, monkeypatch, amd_smi=_printing(tmp_path, _amd_smi("AMD Instinct MI300A", 131072, 4, True), "a"))
    facts = detect.detect_machine(detect.this_machine())
    assert "gpu" not in facts
    assert facts["gpu_unknown"].how.startswith("assumed: amd-smi 'AMD Instinct MI300A', 131072 MiB is not in the GPU catalog")


def test_an_mi300x_of_another_memory_is_refused_with_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tools(tmp_path, monkeypatch, amd_smi=_printing(tmp_path, _amd_smi("AMD Instinct MI300X", 98304, 1, True), "a"))
    facts = detect.detect_machine(detect.this_machine())
    assert "gpu" not in facts
    assert "its memory does not: mi300x-192gb has 196608 MiB" in facts["gpu_unknown"].how


FAILURES = [
    pytest.param('echo "ERROR:root:Unable to detect any GPU devices, check amdgpu version and module status" >&2; exit 1',
                 'amd-smi exited 1: "ERROR:root:Unable to detect any GPU devices, check amdgpu version and module status"',
                 id="driver-not-loaded"),
    pytest.param("exec sleep 30", "amd-smi did not answer within 1 s", id="hang"),
]  # fmt: skip


@pytest.mark.parametrize(("script", "said"), FAILURES)
def test_a_failing_or_hung_amd_smi_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], script: str, said: str
) -> None:
    _tools(tmp_path, monkeypatch, amd_smi=script)
    facts = detect.detect_machine(detect.this_machine())
    assert facts["gpu_failed"].how == said and "gpu" not in facts
    assert f"# gpu not written: {said}; add gpu: and gpu_count: before using it\n" in detect.fixed_block(facts)
    code, out, err = specgen(capsys, "detect")
    assert code == 0 and f"specgen: warning: {said}: the block has no gpu" in err
    code, out, err = specgen(capsys, "estimate", "llama-3.1-8b", "--detect")
    assert (code, out) == (1, ""), err
    assert err == f"specgen estimate: error: --detect could not read this machine's GPUs: {said}; give --gpu\n"


def test_rocm_smi_answers_where_amd_smi_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rocm = _printing(tmp_path, _rocm_smi("AMD Instinct MI300X", 206158430208, 8), "rocm")
    _tools(tmp_path, monkeypatch, amd_smi="exit 1", rocm_smi=rocm)
    facts = detect.detect_machine(detect.this_machine())
    assert facts["gpu"].value == "mi300x-192gb" and "gpu_failed" not in facts


def test_amd_smi_text_that_is_not_its_json_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tools(tmp_path, monkeypatch, amd_smi="echo 'GPU: 0'; echo '    ASIC:'")
    facts = detect.detect_machine(detect.this_machine())
    assert facts["gpu_unread"].how == "amd-smi printed what specgen could not read as its JSON: 'GPU: 0'"
    assert "# gpu not written: amd-smi printed" in detect.fixed_block(facts)


def test_no_gpu_tool_at_all_names_all_three(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tools(tmp_path, monkeypatch)
    facts = detect.detect_machine(detect.this_machine())
    assert "# no GPU detected (nvidia-smi, amd-smi and rocm-smi missing or list no GPU)" in detect.fixed_block(facts)


def test_amd_smi_sizes_in_every_unit_it_writes() -> None:
    assert [detect._amd_mib(v) for v in ({"value": 196592, "unit": "MB"}, "196592 MB", 196592, {"value": "N/A", "unit": "MB"},
                                         {"value": 192, "unit": "GB"})] == [196592, 196592, 196592, None, 196608]  # fmt: skip


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "]" * 100_000,  # nested past Python's recursion limit
        json.dumps([{"gpu": 0, "asic": {"market_name": "AMD Instinct MI300X"}, "vram": {"size": {"value": 10**400}}}]),
        json.dumps({"gpu_data": [{"gpu": 0, "asic": [], "vram": "x"}, 5, None]}),
        json.dumps({"card0": {"Card Series": "AMD Instinct MI300X", "VRAM Total Memory (B)": "9" * 40}}),
    ],
    ids=["deep-nesting", "huge-int", "wrong-types", "huge-bytes"],
)
def test_hostile_amd_output_is_no_gpu_not_a_traceback(text: str) -> None:
    src = detect.Sources("/nonexistent", detect.recorded({"amd-smi": text, "rocm-smi": text}))
    facts = detect.detect_machine(src)
    assert "gpu" not in facts and "gpu_count" not in facts
    detect.fixed_block(facts)
