"""`specgen calibrate --json` (fuzz20 item 13): one JSON object, and the estimate options calibrate does not use refused."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from generator.calculator.calibrate import main

VLLM_LOG = "INFO 01-01 Model loading took 14.99 GiB and 3.1 seconds\nINFO GPU KV cache size: 400,000 tokens\n"
SETUP = ("llama-3.1-8b", "--gpu", "h100-sxm5-80gb")


def calibrate(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(args))
    return code, out.getvalue()


@pytest.fixture
def log(tmp_path: Path) -> str:
    path = tmp_path / "v1.log"
    path.write_text(VLLM_LOG, encoding="utf-8")
    return str(path)


def test_json_is_one_object_with_the_rows_and_constants(log: str) -> None:
    code, text = calibrate(*SETUP, "--log", log, "--json")
    assert code == 0
    doc = json.loads(text)  # the whole output: a CI step pipes it into jq
    assert sorted(doc) == ["constant_notes", "constants", "notes", "rows"]
    by_figure = {row["figure"]: row for row in doc["rows"]}
    assert sorted(by_figure) == ["kv_cache_tokens", "weights_gib"]
    assert by_figure["kv_cache_tokens"]["measured"] == 400000
    assert by_figure["weights_gib"]["line"] == "INFO 01-01 Model loading took 14.99 GiB and 3.1 seconds"
    row = by_figure["kv_cache_tokens"]
    assert row["error"] == pytest.approx(row["predicted"] / row["measured"] - 1, abs=1e-4)
    assert list(doc["constants"]) == ["non_torch_bytes"]


def test_json_and_table_fit_the_same_constant(log: str) -> None:
    _, table = calibrate(*SETUP, "--log", log)
    _, text = calibrate(*SETUP, "--log", log, "--json")
    fitted = json.loads(text)["constants"]["non_torch_bytes"]
    assert f"non_torch_bytes: {fitted}" in table


def test_json_with_output_writes_the_block_and_prints_only_json(log: str, tmp_path: Path) -> None:
    block = tmp_path / "constants.yaml"
    code, text = calibrate(*SETUP, "--log", log, "--json", "-o", str(block))
    assert code == 0
    assert "constants:" in block.read_text(encoding="utf-8")
    assert json.loads(text)["constants"]


@pytest.mark.parametrize(
    ("option", "named"),
    [
        pytest.param(("--max-seq-len",), "--max-seq-len", id="max-seq-len"),
        pytest.param(("--dataset-tokens", "1000000"), "--dataset-tokens", id="dataset-tokens"),
        pytest.param(("--dataset-tokens", "1000000", "--epochs", "2"), "--epochs", id="epochs"),
    ],
)
def test_options_calibrate_does_not_use_are_a_usage_error(
    log: str, option: tuple[str, ...], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["llama-3.1-8b", "--train", "qlora", "--gpu", "rtx-4090-24gb", "--log", log, *option])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert named in err and "calibrate compares a run's log" in err


def test_the_help_does_not_offer_them(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    usage = capsys.readouterr().out.split("\n\n", 1)[0]  # the usage line lists the options offered
    offered = usage.replace("\n", " ")
    assert "[--max-seq-len]" not in offered and "[--dataset-tokens" not in offered and "[--json]" in offered
