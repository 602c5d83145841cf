"""hostile92: hostile model configs that ended in a traceback or were refused with no place.

1. A config.json text holding an unpaired surrogate escape (``"model_type": "\\ud800"``: valid JSON, no UTF-8 text)
   was read; the estimate and the plan died printing it (``UnicodeEncodeError`` traceback), a render as it wrote
   SPEC.md. Now refused at the value's line and column, as a spec.json holding one is in the diff (hostile84).
2. An integer past a float's range written in digits (``"vocab_size": 1000...000``, 401 digits) was read, then stopped
   a float conversion (``malformed config.json: int too large to convert to float``, no field, no line), or was taken
   without a word (``rope_theta``, ``quantization_config.group_size``). Now refused at its field's line and column.
3. stdout closed (``>&-``) ended every command in an ``AttributeError: 'NoneType' object has no attribute 'flush'``
   traceback (a render after writing its tree), stderr closed made a good run exit 1, and stdout on a full disk
   (``> /dev/full``) was an ``OSError: [Errno 28]`` traceback. Now: stdout closed is refused before anything runs,
   stderr closed leaves the exit code as it is, a stdout that cannot be written says so and exits 1.
4. SIGHUP mid-render (the terminal closed, an ssh session dropped) ended the process by the signal with the staged
   tree left beside the output (``.specgen-<tag>-new-*``), as SIGTERM did before fix168. Now as SIGTERM: the staged
   tree removed, the output as it was, exit 128 + 1 without a traceback.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from generator.json_numbers import finite_int
from generator.swap import interrupts_held
from generator.terminate import PAUSE_ENV
from tests.conftest import REPO
from tests.helpers import edited_copy, run_specgen, specgen_in_process
from tests.test_gguf import CONFIG

HERE = Path(__file__).parent
CHAT = HERE.parent / "examples" / "chat-70b.yaml"
BIG = "1" + "0" * 400


def _config(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text(text, encoding="utf-8")
    return folder


def _with(field: str, raw: str) -> str:
    """CONFIG's JSON text with ``field`` (a top-level key or ``block.key``) written as ``raw`` JSON."""
    config = json.loads(json.dumps(CONFIG))
    block, _, key = field.rpartition(".")
    into = (
        config.setdefault(block, {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 4096})
        if block
        else config
    )
    into[key] = "@@"
    return json.dumps(config).replace('"@@"', raw)


SURROGATES = [
    ("model_type", '"\\ud800"', "'model_type'"),
    ("model_type", '"lla\\udfffma"', "'model_type'"),
    ("architectures", '["\\udc00ForCausalLM"]', "'architectures[0]'"),
    ("extra", '{"\\ud800": 1}', "'extra'"),  # a key holding one names its object
]


@pytest.mark.parametrize(("field", "raw", "named"), SURROGATES)
def test_a_config_holding_an_unpaired_surrogate_is_refused_at_it(tmp_path: Path, field: str, raw: str, named: str) -> None:
    text = _with(field, raw)
    folder = _config(tmp_path, text)
    done = run_specgen("estimate", str(folder))
    assert done.returncode == 1, done.stderr
    line, column = 1, text.index(raw) + 1 + raw.startswith("[")  # a list's item: past its bracket
    assert f"config.json:{line}:{column}: cannot read model config: {named} holds an unpaired surrogate" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_render_of_a_model_whose_config_holds_a_surrogate_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    _config(tmp_path, _with("model_type", '"\\ud800"'))
    path = edited_copy(CHAT, tmp_path, ("model: meta-llama/Llama-3.1-70B-Instruct", "model: ./model"))
    code, _, err = specgen_in_process(capsys, "render", str(path), "-o", str(tmp_path / "out"))
    assert code == 1
    assert f"{path}:7:12: deployments[0].model: " in err and "'model_type' holds an unpaired surrogate" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("raw", ['"\\ud83d\\ude00 llama"', '"caf\\u00e9"'])
def test_a_config_holding_a_surrogate_pair_or_other_escape_is_read(tmp_path: Path, raw: str) -> None:
    done = run_specgen("estimate", str(_config(tmp_path, _with("_name_or_path", raw))))
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    "field",
    [
        "vocab_size",  # was "malformed config.json: int too large to convert to float", no place
        "hidden_size",
        "rope_scaling.factor",
        "rope_scaling.original_max_position_embeddings",
        "partial_rotary_factor",
        "rope_theta",  # was taken without a word
        "max_position_embeddings",
    ],
)
@pytest.mark.parametrize("sign", ["", "-"])
def test_an_integer_past_a_floats_range_is_refused_at_its_field(tmp_path: Path, field: str, sign: str) -> None:
    text = _with(field, sign + BIG)
    done = run_specgen("estimate", str(_config(tmp_path, text)))
    assert done.returncode == 1, done.stderr
    column = text.index(sign + BIG) + 1
    said = f"config.json:1:{column}: cannot read model config: config field '{field}': a number of 401 digits is past"
    assert said in done.stderr
    assert "Traceback" not in done.stderr and "OverflowError" not in done.stderr


def test_the_integer_bound_is_a_floats() -> None:
    most = int(__import__("sys").float_info.max)
    assert finite_int(str(most)) == most
    assert finite_int(str(-most)) == -most
    for past in (most + 1, 2**1024, 10**309):
        with pytest.raises(ValueError, match="past a float's range"):
            finite_int(str(past))


COMMANDS = [
    ("validate", str(CHAT)),
    ("plan", str(CHAT)),
    ("estimate", "meta-llama/Llama-3.1-8B-Instruct"),
    ("estimate", "meta-llama/Llama-3.1-8B-Instruct", "--json"),
    ("catalog", "gpus"),
    ("schema",),
    ("--version",),
    ("render", str(CHAT), "-o", "{out}"),
]


def _specgen(args: tuple[str, ...], tmp_path: Path, stdout: Any, stderr: Any, close: int | None) -> tuple[int, str]:
    """``specgen ARGS`` with stdout / stderr as given (``close``: that descriptor closed in the child): (code, stderr)."""
    argv = [a.replace("{out}", str(tmp_path / "out")) for a in args]
    done = subprocess.run(
        [sys.executable, "-c", "from generator.cli import main; main()", *argv],
        stdout=stdout,
        stderr=stderr,
        cwd=REPO,
        check=False,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"},
        preexec_fn=None if close is None else lambda: os.close(close),
    )
    return done.returncode, (done.stderr or b"").decode()


@pytest.mark.parametrize("args", COMMANDS)
def test_stdout_closed_is_refused_before_the_command_runs(tmp_path: Path, args: tuple[str, ...]) -> None:
    code, err = _specgen(args, tmp_path, None, subprocess.PIPE, close=1)
    assert code == 1, err
    assert err.startswith("specgen: error: standard output is closed") and "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("args", [*COMMANDS, ("validate", str(HERE / "no-such.yaml"))])
def test_stderr_closed_leaves_the_exit_code_as_it_is(tmp_path: Path, args: tuple[str, ...]) -> None:
    code, _ = _specgen(args, tmp_path, subprocess.DEVNULL, None, close=2)
    assert code == (1 if "no-such.yaml" in args[-1] else 0)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("args", COMMANDS)
def test_stdout_on_a_full_disk_says_so(tmp_path: Path, args: tuple[str, ...]) -> None:
    with open("/dev/full", "w") as full:
        code, err = _specgen(args, tmp_path, full, subprocess.PIPE, close=None)
    assert code == 1, err
    assert err == "specgen: error: cannot write the output: No space left on device\n"


@pytest.mark.parametrize("model", ['"./\\ud800/m"', '"\\udfffx/y"'])
def test_a_model_path_holding_an_unpaired_surrogate_is_refused_without_locale_advice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], model: str
) -> None:
    path = edited_copy(CHAT, tmp_path, ("model: meta-llama/Llama-3.1-70B-Instruct", f"model: {model}"))
    code, _, err = specgen_in_process(capsys, "validate", str(path))
    assert code == 1
    assert f"{path}:7:12: deployments[0].model: the model path " in err
    assert "an unpaired surrogate (a \\ud800-\\udfff escape alone), which is no character" in err
    assert "locale" not in err  # it told a UTF-8 locale to run in a UTF-8 locale


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="no SIGHUP")
def test_sighup_mid_render_removes_the_staged_tree(tmp_path: Path) -> None:
    path = edited_copy(CHAT, tmp_path, ("requests_per_second: 12", "requests_per_second: 12"))
    pause = tmp_path / "pause"
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", PAUSE_ENV: str(pause)}
    # SIGHUP at its default in the child: under nohup (SIG_IGN inherited) the render rightly ignores it and waits
    start = "import signal; signal.signal(signal.SIGHUP, signal.SIG_DFL); from generator.cli import main; main()"
    command = [sys.executable, "-c", start, "render", str(path), "-o", "out"]
    with subprocess.Popen(command, cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True) as proc:
        while not Path(f"{pause}.staged").exists():  # the writer has staged the tree and waits
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.05)
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".specgen-")]
        proc.send_signal(signal.SIGHUP)
        try:
            _, err = proc.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            proc.kill()  # not left waiting on the writer's pause for ever
            raise
    assert proc.returncode == 128 + signal.SIGHUP
    assert "Traceback" not in err and "Hangup (SIGHUP): out is as it was, and the tree staged beside it was removed" in err
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".specgen-")]
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="no SIGHUP")
def test_the_swap_holds_sighup_off_where_a_handler_takes_it() -> None:
    arrived: list[str] = []
    previous = signal.signal(signal.SIGHUP, lambda signum, frame: arrived.append("handler"))
    try:
        with interrupts_held():
            os.kill(os.getpid(), signal.SIGHUP)
            for _ in range(1000):  # a Python handler runs between bytecodes: any would have run by now
                pass
            arrived.append("block ends")
        assert arrived == ["block ends", "handler"]
    finally:
        signal.signal(signal.SIGHUP, previous)


@pytest.mark.parametrize(
    ("field", "raw", "said"),
    [
        ("text_config", '"x"', "got a text 'x'"),  # was passed over: the top level sized without a word
        ("text_config", "[1, 2]", "got a list '[1, 2]'"),
        ("vision_config", "true", "got a boolean 'True'"),
        ("vision_config", "7", "got a number '7'"),
    ],
)
def test_a_sub_config_that_is_not_a_mapping_is_refused_at_it(tmp_path: Path, field: str, raw: str, said: str) -> None:
    text = _with(field, raw)
    done = run_specgen("estimate", str(_config(tmp_path, text)))
    assert done.returncode == 1, done.stderr
    assert f"config.json:1:{text.index(raw) + 1}: config field '{field}' must be a mapping" in done.stderr
    assert said in done.stderr


def test_a_null_sub_config_is_still_read(tmp_path: Path) -> None:
    assert run_specgen("estimate", str(_config(tmp_path, _with("text_config", "null")))).returncode == 0


DASH_OUTPUTS = [
    (("render", str(CHAT), "-o", "-"), "-o", "the output directory"),
    (("render", str(CHAT), "--output", "-", "--target", "spec"), "-o", "the output directory"),
    (("plan", str(CHAT), "--gitlab-report", "-"), "--gitlab-report", "the report's file"),
    (("render", str(CHAT), "-o", "out", "--gitlab-report", "-"), "--gitlab-report", "the report's file"),
    (("detect", "-o", "-"), "-o", "the block's file (or leave -o out to print it)"),
]


@pytest.mark.parametrize(("args", "option", "what"), DASH_OUTPUTS)
def test_an_output_named_dash_is_refused_not_written_as_a_file_named_dash(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: tuple[str, ...],
    option: str,
    what: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = specgen_in_process(capsys, *args)
    assert code == 2, err
    assert f"is '-', which names no file here (specgen writes no output to standard output this way): name {what}" in err
    assert option in err
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no file or directory named '-', no half-written 'out'


def test_calibrate_output_named_dash_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text("INFO GPU KV cache size: 425,024 tokens\n", encoding="utf-8")
    done = run_specgen(
        "calibrate", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100-sxm5-80gb", "--log", str(log), "-o", "-", cwd=tmp_path
    )
    assert done.returncode == 2, done.stderr
    assert "-o/--output is '-', which names no file here" in done.stderr
    assert not (tmp_path / "-").exists()


def test_an_output_directory_named_dash_is_still_written_as_dot_slash_dash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = specgen_in_process(capsys, "render", str(CHAT), "-o", "./-", "--target", "spec")
    assert code == 0, err
    assert (tmp_path / "-" / "spec.json").is_file()
