"""fix162 item 1: a Hub model's config.json is read as a local one is, and a refusal names its repo, commit and line.

A local ``config.json`` whose field is refused says ``./m/config.json:6:18: config field ...`` (hostile86). The same
file from the Hub said ``acme/x config.json: config field ...`` (no line), ``config.json on the Hub is not valid JSON``
(no line, no reason), and ``NaN`` passed (``json.loads`` alone). Now the downloaded text goes through the local file's
reading (``config_from_text`` / ``config_architecture``), named ``org/name@<commit>:config.json``.

Oracle: the same bytes as a local file; the message after the file's name must be the local one, word for word, and
the line and column are found in the text independently (where the marker was).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.cli import main
from tests.helpers import VALID
from tests.hub_server import FakeHub, Repo, VirtualFile, serve
from tests.test_hostile85_config_numbers import CONFIG, MARK
from tests.test_hub import C1, specgen

NAME = f"acme/m@{C1}:config.json"


def _text_with(field: str, literal: str) -> tuple[bytes, int, int]:
    """CONFIG as HF writes it (indent 2) with ``field``'s value ``literal``; the literal's line and column."""
    text = json.dumps(CONFIG | {field: "@@bad@@"}, indent=2)
    offset = text.index(MARK)
    return text.replace(MARK, literal).encode(), text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)


def _hub_of(config: bytes) -> FakeHub:
    return FakeHub(repos={"acme/m": Repo({"main": C1}, {C1: {"config.json": VirtualFile(config, len(config))}})})


def _local(tmp_path: Path, config: bytes, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    folder = tmp_path / "local"
    folder.mkdir()
    (folder / "config.json").write_bytes(config)
    with pytest.raises(SystemExit) as done:
        main(["estimate", str(folder)])
    return int(done.value.code or 0), capsys.readouterr().err.replace(str(folder / "config.json"), "<file>")


HIDDEN, HIDDEN_LINE, HIDDEN_COLUMN = _text_with("hidden_size", "1000000000")
EPS, EPS_LINE, EPS_COLUMN = _text_with("rms_norm_eps", "NaN")
CASES = [
    pytest.param(HIDDEN, f"{HIDDEN_LINE}:{HIDDEN_COLUMN}: config field 'hidden_size' = 1000000000 is out of range", id="range"),
    pytest.param(EPS, f"{EPS_LINE}:{EPS_COLUMN}: cannot read model config: config field 'rms_norm_eps': NaN is not", id="nan"),
    pytest.param(b'{\n  "hidden_size" 1\n}', "2:17: cannot read model config: Expecting ':' delimiter", id="syntax"),
    pytest.param(b"[1, 2]", "a config.json must hold a JSON object", id="array"),
    pytest.param(b"\xef\xbb\xbf{}", "1:1: cannot read model config: it starts with a UTF-8 byte-order mark", id="bom"),
]


@pytest.mark.parametrize(("config", "said"), CASES)
def test_a_hub_config_is_refused_at_its_repo_commit_line_and_column_as_a_local_file_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], config: bytes, said: str
) -> None:
    with serve(_hub_of(config)) as hub:
        run = specgen(hub, tmp_path, "estimate", "acme/m", "--from-hub")
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    hub_said = run.stderr.replace(NAME, "<file>")
    sep = ":" if said[0].isdigit() else ": "
    assert hub_said.startswith(f"specgen estimate: error: <file>{sep}{said}"), run.stderr
    code, local_said = _local(tmp_path, config, capsys)  # one reading: the local file's words, word for word
    assert (code, local_said) == (1, hub_said)


def test_a_hub_config_that_is_not_utf8_names_its_line_and_column(tmp_path: Path) -> None:
    config = b'{\n  "model_type": "caf\xe9"\n}'
    with serve(_hub_of(config)) as hub:
        run = specgen(hub, tmp_path, "estimate", "acme/m", "--from-hub")
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    byte = config.index(b"\xe9")  # line 2, its column counted from the newline before it
    column = byte - config.rfind(b"\n", 0, byte)
    assert f"specgen estimate: error: {NAME}:2:{column}: model config is not UTF-8 text (byte {byte})" in run.stderr


def test_a_workload_names_its_model_field_then_the_hub_config_place(tmp_path: Path) -> None:
    workload = tmp_path / "w.yaml"
    assert "model: meta-llama/Llama-3.1-8B-Instruct" in VALID
    workload.write_text(VALID.replace("model: meta-llama/Llama-3.1-8B-Instruct", "model: hf:acme/m"))
    with serve(_hub_of(HIDDEN)) as hub:
        run = specgen(hub, tmp_path, "validate", str(workload))
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert f"{workload}:5:12: deployments[0].model: {NAME}:{HIDDEN_LINE}:{HIDDEN_COLUMN}: config field 'hidden_size'" in (
        run.stderr
    )
