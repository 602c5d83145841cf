"""fix176 item 2: a Ctrl-C while Python was already exiting after a complete output ended the process by SIGINT (-2)
without a word: the interpreter's exit gives SIGINT back to the system's default before it finalizes the modules.

The CLI now ends the process itself once its output is flushed (``generator.cli._leave``). Each case signals the
process at a point it synchronises on, no timing: a finalizer of ``__main__`` (run by the interpreter's exit, after
SIGINT's default is back) and the final flush of stdout (the last moment the command still runs). Each child first
takes Python's own SIGINT handler, as a terminal starts it: a process started in the background by a non-interactive
shell (a CI job launched with `&`) inherits SIGINT ignored, and Python then installs none (the last-flush case read 0).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ESTIMATE = '["specgen", "estimate", "meta-llama/Llama-3.1-8B", "--gpu", "rtx-4090", "--precision", "q4_k_m"]'

#: SIGINT sent by a finalizer that runs as the interpreter exits: before, the process died by it (returncode -2).
AT_INTERPRETER_EXIT = f"""
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
class Late:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)
late = Late()
sys.argv = {ESTIMATE}
from generator.cli import main
main()
"""

#: SIGINT sent as the CLI flushes its complete output (the flush its exit code waits on).
AT_THE_LAST_FLUSH = f"""
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
class Stream:
    def __init__(self, inner):
        self.inner = inner
    def write(self, text):
        return self.inner.write(text)
    def flush(self):
        self.inner.flush()
        if sys._getframe(1).f_code.co_name == "_flush_streams":
            os.kill(os.getpid(), signal.SIGINT)
    def __getattr__(self, name):
        return getattr(self.inner, name)
sys.stdout = Stream(sys.stdout)
sys.argv = {ESTIMATE}
from generator.cli import main
main()
"""


def _run(script: str) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True, check=False)


def test_a_ctrl_c_as_python_exits_no_longer_kills_the_process_silently() -> None:
    done = _run(AT_INTERPRETER_EXIT)
    assert done.returncode == 0, (done.returncode, done.stderr)  # before: -2, killed by the signal
    assert "-m Llama-3.1-8B-Q4_K_M.gguf -ngl 33 -c 4096 -np 1" in done.stdout  # the output complete
    assert "Traceback" not in done.stderr


def test_a_ctrl_c_at_the_last_flush_exits_130_saying_so() -> None:
    done = _run(AT_THE_LAST_FLUSH)
    assert done.returncode == 130, (done.returncode, done.stderr)
    assert done.stderr.strip() == "Aborted!"
    assert "-m Llama-3.1-8B-Q4_K_M.gguf -ngl 33 -c 4096 -np 1" in done.stdout


def test_the_estimate_to_a_closed_pipe_exits_1_without_a_traceback() -> None:
    """Its write to a pipe nobody reads printed a BrokenPipeError traceback (exit 1); the planning commands' way now."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # closed before the process starts: its first write fails, whatever the timing
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-c", "from generator.cli import main; main()", *json.loads(ESTIMATE)[1:]]
    try:
        done = subprocess.run(command, cwd=REPO, env=env, stdout=write_end, stderr=subprocess.PIPE, text=True, check=False)
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (1, "")
