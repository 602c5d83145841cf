"""hostile89: hostile input that broke the rule (a clear error naming file, line and field; no traceback).

- ``specgen calibrate``: a run setting read from a log (``vllm serve ... --gpu-memory-utilization nan``, a TP of 0,
  another model, a value the command contradicts) was refused naming the log but not its line; the error now says
  ``run.log:N:``, as the figure errors of the same logs do.
- Ctrl-C while the command line's modules still load (the first few tenths of a second, before a command's own
  handler) printed Python's traceback and exited by SIGINT (-2); it now says ``Aborted!`` and exits 130.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from generator import cli
from tests.conftest import REPO
from tests.test_calibrate import calibrate

MODEL = "meta-llama/Llama-3.1-8B-Instruct"
KV = "INFO GPU KV cache size: 432,000 tokens\n"


@pytest.mark.parametrize(
    ("log", "said"),
    [
        pytest.param(
            "start\nvllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization nan\n" + KV,
            "run.log:2: cannot read gpu_memory_utilization 'nan'",
            id="nan-utilization",
        ),
        pytest.param(
            "a\nb\nc\nvllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len=８１９２\n" + KV,
            "run.log:4: cannot read max_model_len '８１９２'",
            id="fullwidth-digits",
        ),
        pytest.param(
            KV + "vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 0\n",
            "run.log:2: the run's tensor_parallel_size 0 (",
            id="tp-0",
        ),
        pytest.param(
            "x\nvllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 1e-400\n" + KV,
            "run.log:2: the run's gpu_memory_utilization 0.0 (",
            id="underflow",
        ),
        pytest.param(
            "\n\n\nvllm serve meta-llama/Llama-3.1-70B-Instruct\n" + KV,
            "run.log:4: the run served 'meta-llama/Llama-3.1-70B-Instruct'",
            id="another-model",
        ),
    ],
)
def test_a_run_setting_error_names_the_logs_line(tmp_path: Path, log: str, said: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "run.log"
    path.write_text(log, encoding="utf-8")
    code, out = calibrate(MODEL, "--gpu", "h100-sxm5-80gb", "--log", str(path))
    err = capsys.readouterr().err
    assert (code, out) == (1, "")
    assert said in err and "Traceback" not in err


def test_a_contradicted_option_names_the_logs_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "run.log"
    path.write_text("boot\n\nvllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 2048\n" + KV)
    code, _ = calibrate(MODEL, "--gpu", "h100-sxm5-80gb", "--context", "4096", "--log", str(path))
    assert code == 1
    assert "run.log:3: the run used max_model_len 2048 (" in capsys.readouterr().err


def _interrupt(*_: object) -> None:
    raise KeyboardInterrupt


@pytest.mark.parametrize(
    ("argv", "patched"),
    [
        (["render", "w.yaml", "-o", "out"], "_escape_what_the_streams_cannot_encode"),  # the first step of every command
        (["render", "w.yaml", "-o", "out"], "_plan_command"),  # plain_args / collector imports
        (["estimate", MODEL], "_escape_what_the_streams_cannot_encode"),
        (["calibrate", MODEL, "--log", "x"], "_escape_what_the_streams_cannot_encode"),
        (["diff", "a.yaml", "b.yaml"], "_build_cli"),  # click not yet loaded
    ],
)
def test_ctrl_c_before_a_commands_handler_exits_130_without_a_traceback(
    argv: list[str], patched: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli, patched, _interrupt)
    with pytest.raises(SystemExit) as caught:
        cli.main(argv)
    assert caught.value.code == cli.INTERRUPTED == 130
    assert capsys.readouterr().err.strip().startswith("Aborted!")


#: Run ``python -m generator`` with the import of generator.cli interrupted, as Ctrl-C during it does.
_INTERRUPTED_IMPORT = """
import runpy, sys
class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == "generator.cli":
            raise KeyboardInterrupt
        return None
sys.meta_path.insert(0, Interrupt())
sys.argv = ["generator", "--version"]
runpy.run_module("generator", run_name="__main__", alter_sys=True)
"""


def test_ctrl_c_while_python_m_generator_imports_its_cli() -> None:
    done = subprocess.run([sys.executable, "-c", _INTERRUPTED_IMPORT], cwd=REPO, capture_output=True, text=True, check=False)
    assert done.returncode == 130
    assert done.stderr.strip() == "Aborted!"
