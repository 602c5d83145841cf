"""hostile90: ``specgen calibrate`` over a hand-edited llama.cpp or vLLM log.

- llama.cpp's decode line ("eval time = ... ( 400.00 ms per token, 2.50 tokens per second)") was read as the run of
  ASCII digits and points before "tokens per second": "-2.50", "+2.50", "x2.50" and "−2.50" were read as 2.50 and
  fitted; "２.50" (a full-width 2) as 0.50 (+508% error, fitted); "nan" and "2.5e0" as no figure or 0. The whole word is
  now read, and one that is no figure llama.cpp prints is refused at its line.
- vLLM's patterns match ``\\d``, any script's digit, and ``float`` reads them: "took １２ GB" was 12 GiB of weights.
- Two refusals of a figure the log printed named no line: the weights of another model ("the run loaded 12.00 GiB of
  weights ...") and a decode speed of 0 ("none of the measured figures has a prediction"); both now begin
  ``run.log:N:``.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from generator.calculator.calibrate import main
from tests.test_calibrate import DATA, OFFLOAD_SETUP, VLLM_SETUP

TIMINGS = (DATA / "llama-cpp-timings.txt").read_text()
VLLM_LOG = (DATA / "vllm-llama-3.1-70b-w8a8.log").read_text()
SPEED = "  2.50 tokens per second"
WEIGHTS = "took 67.7229 GB"


def _calibrate(tmp_path: Path, setup: tuple[str, ...], text: str) -> tuple[int, str, str]:
    log = tmp_path / "run.log"
    log.write_text(text)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*setup, "--log", str(log)])
    return code, out.getvalue(), err.getvalue()


def _line_of(text: str, words: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if words in line)


@pytest.mark.parametrize("speed", ["-2.50", "+2.50", "x2.50", "\u22122.50", "\uff12.50", "nan", "inf", "2.5e0", "2,50"])
def test_a_decode_speed_llama_cpp_does_not_print_is_refused_at_its_line(tmp_path: Path, speed: str) -> None:
    assert SPEED in TIMINGS
    text = TIMINGS.replace(SPEED, f" {speed} tokens per second")
    code, out, err = _calibrate(tmp_path, OFFLOAD_SETUP, text)
    line = _line_of(TIMINGS, SPEED)
    assert (code, out) == (1, ""), out
    assert err.startswith(f"specgen calibrate: error: {tmp_path / 'run.log'}:{line}: cannot read a figure from "), err
    assert "Traceback" not in err


def test_the_decode_speed_llama_cpp_prints_is_read_as_before(tmp_path: Path) -> None:
    code, out, err = _calibrate(tmp_path, OFFLOAD_SETUP, TIMINGS)
    assert code == 0, err
    assert out.splitlines()[1].split()[:2] == ["decode_tokens_per_s", "2.50"]


def test_a_decode_speed_of_0_is_refused_at_its_line(tmp_path: Path) -> None:
    code, out, err = _calibrate(tmp_path, OFFLOAD_SETUP, TIMINGS.replace(SPEED, "  0.00 tokens per second"))
    line = _line_of(TIMINGS, SPEED)
    assert (code, out) == (1, "")
    head = f"specgen calibrate: error: {tmp_path / 'run.log'}:{line}: none of the measured figures has a prediction: "
    assert err.startswith(head + "the log's decode_tokens_per_s is 0 ("), err


@pytest.mark.parametrize("size", ["\uff11\uff12", "\u0661\u0662", "6\uff17.7229"])
def test_vllm_weights_in_digits_of_another_script_are_refused_at_their_line(tmp_path: Path, size: str) -> None:
    assert WEIGHTS in VLLM_LOG
    code, out, err = _calibrate(tmp_path, VLLM_SETUP, VLLM_LOG.replace(WEIGHTS, f"took {size} GB"))
    line = _line_of(VLLM_LOG, WEIGHTS)
    assert (code, out) == (1, ""), out
    assert err.startswith(f"specgen calibrate: error: {tmp_path / 'run.log'}:{line}: cannot read a figure from "), err


def test_another_models_weights_are_refused_at_their_line(tmp_path: Path) -> None:
    code, out, err = _calibrate(tmp_path, VLLM_SETUP, VLLM_LOG.replace(WEIGHTS, "took 12 GB"))
    line = _line_of(VLLM_LOG, WEIGHTS)
    assert (code, out) == (1, "")
    assert err.startswith(f"specgen calibrate: error: {tmp_path / 'run.log'}:{line}: the run loaded 12.00 GiB of weights"), err


def test_a_llama_bench_params_cell_in_full_width_digits_is_refused_at_its_row(tmp_path: Path) -> None:
    """``\\d`` matched "８.03 B" and ``float`` read it as 8.03 B: the row was fitted as a model of 8.03 B parameters."""
    from tests.test_calibrate import BENCH_SETUP

    bench = (DATA / "llama-bench.md").read_text()
    text = bench.replace("     8.03 B", "     \uff18.03 B")
    code, out, err = _calibrate(tmp_path, BENCH_SETUP, text)
    line = _line_of(bench, "tg128")
    assert (code, out) == (1, ""), out
    assert err.startswith(f"specgen calibrate: error: {tmp_path / 'run.log'}:{line}: a llama-bench row whose model "), err
    assert "its params cell '\uff18.03 B' is no parameter count" in err
