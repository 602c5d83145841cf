"""newuser74 items 5, 6 and 16: calibrate reads vLLM's accounting only, and says which lines it leaves unread."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from generator.calculator.calibrate import main

#: vLLM V1 start-up lines (their formats as vLLM's gpu_model_runner.py / kv_cache_utils.py log them).
VLLM_LOG = (
    "INFO 12-01 10:00:05 [gpu_model_runner.py:1329] Model loading took 15.0294 GiB and 4.812014 seconds\n"
    "INFO 12-01 10:00:20 [kv_cache_utils.py:634] GPU KV cache size: 164,640 tokens\n"
    "INFO 12-01 10:00:20 [kv_cache_utils.py:637] Maximum concurrency for 8,192 tokens per request: 20.10x\n"
)
#: vLLM's periodic stats line (vllm/v1/metrics/loggers.py).
STATS = (
    "INFO 12-01 10:05:00 [loggers.py:116] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: "
    "1500.0 tokens/s, Running: 32 reqs, Waiting: 0 reqs, GPU KV cache usage: 40.0%, Prefix cache hit rate: 0.0%\n"
)
#: SGLang start-up lines (model_runner.py "Load weight end", memory_pool.py "KV Cache is allocated", scheduler's
#: "max_total_num_tokens=").
SGLANG_LOG = (
    "[2026-12-01 10:00:30 TP0] Load weight end. type=Qwen3MoeForCausalLM, dtype=torch.bfloat16, avail mem=62.10 GB, "
    "mem usage=29.40 GB.\n"
    "[2026-12-01 10:00:31 TP0] KV Cache is allocated. #tokens: 500000, K size: 22.89 GB, V size: 22.89 GB\n"
    "[2026-12-01 10:00:40 TP0] max_total_num_tokens=500000, chunked_prefill_size=8192, max_prefill_tokens=16384, "
    "max_running_requests=2048, context_len=32768\n"
)
SETUP = ("llama-3.1-8b", "--gpu", "l40s-48gb", "--context", "8192")


def calibrate(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(args))
    return code, out.getvalue()


@pytest.fixture
def vllm_log(tmp_path: Path) -> str:
    path = tmp_path / "vllm.log"
    path.write_text(VLLM_LOG, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    ("option", "named"),
    [
        pytest.param(("--engine", "sglang"), "--engine sglang", id="engine"),
        pytest.param(("--mem-fraction-static", "0.88"), "--mem-fraction-static", id="fraction"),
    ],
)
def test_sglang_options_are_a_usage_error_not_a_wrong_fit(
    vllm_log: str, option: tuple[str, ...], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: exit 0 and non_torch_bytes 3,547,987,968 fitted from a vLLM log against SGLang's pool (vLLM's: 4,081,057,792)
    with pytest.raises(SystemExit) as exc:
        main([*SETUP, "--log", vllm_log, *option])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert named in err and "vLLM and llama.cpp runs only" in err and "Traceback" not in err


def test_the_vllm_fit_reproduces_the_run(vllm_log: str) -> None:
    code, text = calibrate(*SETUP, "--log", vllm_log, "--json")
    assert code == 0
    doc = json.loads(text)
    # 4,081,057,792 before src98: the L40S at CUDA's 45,589 MiB, 0.9 x its 479 MiB reserve
    assert doc["constants"] == {"non_torch_bytes": 3630170112}
    code, again = calibrate(*SETUP, "--log", vllm_log, "--json", "--set", "non_torch_bytes=3630170112")
    rows = {r["figure"]: r for r in json.loads(again)["rows"]}
    assert rows["kv_cache_tokens"]["predicted"] == pytest.approx(164640, rel=1e-4)


def test_an_sglang_log_is_refused_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "sglang.log"
    path.write_text(SGLANG_LOG, encoding="utf-8")
    assert main(["Qwen/Qwen3-30B-A3B", "--precision", "fp8", "--gpu", "h100-nvl-94gb", "--log", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}:1: an SGLang log" in err and "not SGLang's log lines" in err


def test_vllm_throughput_stats_are_listed_as_unread(tmp_path: Path) -> None:
    path = tmp_path / "vllm.log"
    path.write_text(VLLM_LOG + STATS, encoding="utf-8")
    code, text = calibrate(*SETUP, "--log", str(path), "--json")
    assert code == 0
    doc = json.loads(text)
    notes = [n for n in doc["notes"] if "Avg generation throughput" in n]
    assert len(notes) == 1 and "line 4" in notes[0] and "not compared" in notes[0]
    assert "decode_tokens_per_s" not in {r["figure"] for r in doc["rows"]}


def test_vllms_available_kv_memory_line_is_listed_as_unread(tmp_path: Path) -> None:
    path = tmp_path / "vllm.log"
    path.write_text(VLLM_LOG + "INFO 12-01 10:00:20 [gpu_worker.py:227] Available KV cache memory: 20.10 GiB\n", encoding="utf-8")
    code, text = calibrate(*SETUP, "--log", str(path), "--json")
    assert code == 0
    notes = json.loads(text)["notes"]
    assert [n for n in notes if "Available KV cache memory' (line 4) not compared" in n]
