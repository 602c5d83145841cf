"""hostile90: an input that is a symbolic link to nothing, and a model folder whose config.json is no file.

- A dangling symlink given as a workload, a log, a spec.json or a model config was said "not found", though
  ``ls`` shows it there: the error now says it is a link and names what it points to (hostile89 did so for ``-o``).
- ``specgen estimate DIR`` where ``DIR/config.json`` is a directory, a FIFO or a dangling link said "model config
  'DIR' is a directory" / "not found", naming the folder, which is what the user meant to give; it now names
  ``DIR/config.json``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from generator.calculator.cli import main as estimate
from tests.helpers import specgen_in_process as specgen


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("validate", "w.yaml"), "w.yaml: file is a symbolic link to 'gone/w.yaml', which does not exist"),
        (("diff", "w.json", "w.json"), "w.json: spec.json is a symbolic link to 'gone/w.json', which does not exist"),
    ],
    ids=["workload", "spec-json"],
)
def test_a_dangling_link_is_said_to_be_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], said: str
) -> None:
    monkeypatch.chdir(tmp_path)
    os.symlink(f"gone/{args[1]}", args[1])
    code, out, err = specgen(capsys, *args)
    assert (code, out) == (1, "")
    assert err.splitlines()[0] == f"specgen: error: {said}", err  # diff names each of its two files


def test_a_dangling_log_is_said_to_be_a_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from generator.calculator.calibrate import main

    monkeypatch.chdir(tmp_path)
    os.symlink("old/run.log", "run.log")
    assert main(["meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100-sxm5-80gb", "--log", "run.log"]) == 1
    err = capsys.readouterr().err
    assert err == "specgen calibrate: error: run.log: log is a symbolic link to 'old/run.log', which does not exist\n"


def _folder_config(folder: Path, kind: str) -> None:
    folder.mkdir()
    config = folder / "config.json"
    if kind == "directory":
        config.mkdir()
    elif kind == "fifo":
        os.mkfifo(config)
    else:
        os.symlink("/nonexistent/config.json", config)


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("directory", "model config 'model/config.json' is a directory; only regular files are read"),
        ("fifo", "model config 'model/config.json' is a FIFO; only regular files are read"),
        ("dangling", "model config 'model/config.json' is a symbolic link to '/nonexistent/config.json', which does not exist"),
    ],
)
def test_a_model_folder_whose_config_is_no_file_names_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], kind: str, said: str
) -> None:
    monkeypatch.chdir(tmp_path)
    _folder_config(tmp_path / "model", kind)
    assert estimate(["model"]) == 1
    err = capsys.readouterr().err
    assert err == f"specgen estimate: error: model/config.json: {said}\n", err
