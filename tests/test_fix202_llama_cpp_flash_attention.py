"""fix202 item 2: llama.cpp's -fa as a workload field (``hardware.fixed.flash_attention``).

acc204 timed llama.cpp's prompt without flash attention (the score matrices written and read) but only with it on,
the plan's default (llama.cpp's ``-fa auto``, on for CUDA / HIP since https://github.com/ggml-org/llama.cpp/pull/15434):
a llama-server run with ``-fa off`` could not be said. Now it can: the plan times it (a slower prompt) and the
rendered line says ``-fa off``; llama.cpp's refusals (a quantized V cache without it) are refused at the field.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.calculator.offload_report import llama_cpp_args
from generator.errors import InputError
from generator.planner import plan_workload
from generator.workload import load_workload
from tests.helpers import specgen_in_process

WORKLOAD = """\
version: 1
name: fa
deployments:
  - name: coder
    model: Qwen/Qwen2.5-32B-Instruct
    inference:
      precision: q4_k_m
      max_context_tokens: 8192
      avg_input_tokens: 4000
      avg_output_tokens: 400
      requests_per_second: 0.05{kv}
hardware:
  provider: baremetal
  fixed:
    gpu: rtx-3090-24gb
    gpu_count: 1
    ram_gib: 32
    nvme_gib: 400{fa}
"""


def _plan(tmp_path: Path, fa: str, kv: str = ""):  # type: ignore[no-untyped-def]
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(fa=f"\n    flash_attention: {fa}" if fa else "", kv=kv), encoding="utf-8")
    return plan_workload(load_workload(str(path))).deployments[0]


def test_flash_attention_off_times_a_slower_prompt_and_says_so_on_the_line(tmp_path: Path) -> None:
    plans = {fa: _plan(tmp_path, fa) for fa in ("", "auto", "on", "off")}
    ttft = {fa: p.details["ttft_s"] for fa, p in plans.items()}
    assert ttft[""] == ttft["auto"] == ttft["on"]  # auto is llama.cpp's on (CUDA)
    assert ttft["off"] > ttft["on"] * 1.01, ttft  # the score matrices: 4,000 x 4,000 x 40 heads x 64 layers
    assert plans["off"].details["decode_tokens_per_s"] == plans["on"].details["decode_tokens_per_s"]  # all on the GPU
    line = {fa: llama_cpp_args(p.details["runtime_settings"]["llama.cpp_options"]) for fa, p in plans.items()}
    assert "-fa" not in line[""] and line[""] == line["auto"]  # the default line is as before
    for fa in ("on", "off"):
        words = line[fa]
        assert words[words.index("-fa") + 1] == fa


def test_the_rendered_llama_server_line_says_fa_off(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(fa="\n    flash_attention: off", kv=""), encoding="utf-8")
    code, _, err = specgen_in_process(capsys, "render", str(path), "-o", str(tmp_path / "out"), "--target", "ansible")
    assert code in (0, 3), err
    rendered = "\n".join(p.read_text(encoding="utf-8") for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert re.search(r"'-fa'\s+- (!unsafe )?'off'", rendered), rendered  # llama-server's argument list


@pytest.mark.parametrize(
    ("fa", "kv", "said"),
    [
        ("off", "\n      kv_cache_precision: int8", "llama.cpp refuses a quantized V cache"),
        ("off", "\n      kv_cache_precision: fp8", "llama.cpp refuses a quantized V cache"),
        ("off\n    offload_engine: ik_llama.cpp", "", "ik_llama.cpp's line runs -fa on"),
        ("maybe", "", "flash_attention"),
        ("false", "", "flash_attention"),
    ],
)
def test_flash_attention_refusals_name_file_line_and_field(tmp_path: Path, fa: str, kv: str, said: str) -> None:
    with pytest.raises(InputError) as caught:
        _plan(tmp_path, fa, kv)
    text = str(caught.value)
    written = (tmp_path / "w.yaml").read_text(encoding="utf-8").splitlines()
    line = next(n for n, row in enumerate(written, 1) if "flash_attention" in row)
    assert re.search(rf"w\.yaml:{line}:\d+: .*flash_attention", text), text
    assert said in text, text
