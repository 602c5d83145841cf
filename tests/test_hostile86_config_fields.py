"""hostile86 item 1: a config.json field the sizing refuses is named at its line and column, not only by its name.

``"hidden_size": 1e21``-sized integers, a ``torch_dtype`` no checkpoint is stored in, a YaRN factor below 1, read
``./m/config.json: config field 'hidden_size' = ... is out of range``: the file and the field, but no line (the
product's rule: file, line and field). A field the file lacks keeps the message it had (there is no place to name).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.cli import main
from tests.helpers import VALID
from tests.test_hostile85_config_numbers import CONFIG, MARK, _estimate


def _text_with(path: tuple[str, ...], literal: str) -> tuple[str, int, int]:
    """CONFIG written as HF does (indent 2), the value at ``path`` replaced by ``literal``; its line and column."""
    config = json.loads(json.dumps(CONFIG))
    holder = config
    for step in path[:-1]:
        holder = holder.setdefault(step, {})
    holder[path[-1]] = "@@bad@@"
    text = json.dumps(config, indent=2)
    offset = text.index(MARK)  # the oracle: where the marker is, the literal starts
    line = text.count("\n", 0, offset) + 1
    return text.replace(MARK, literal), line, offset - text.rfind("\n", 0, offset)


CASES = [
    (("hidden_size",), "1180591620717411303424", "config field 'hidden_size' = 1180591620717411303424 is out of range"),
    (("num_hidden_layers",), "0", "config field 'num_hidden_layers' = 0 is out of range"),
    (("num_key_value_heads",), "-8", "config field 'num_key_value_heads' = -8 is out of range"),
    (("torch_dtype",), '"int64"', "config field 'torch_dtype' is 'int64', not a PyTorch dtype"),
    (("rope_scaling", "factor"), "0.5", "config field 'rope_scaling.factor' must be a number >= 1"),
    (("text_config", "hidden_size"), "-1", "config field 'text_config.hidden_size' = -1 is out of range"),
]


@pytest.mark.parametrize(("path", "literal", "said"), CASES, ids=[".".join(c[0]) for c in CASES])
def test_a_refused_config_field_is_named_at_its_line_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], path: tuple[str, ...], literal: str, said: str
) -> None:
    text, line, column = _text_with(path, literal)
    code, err = _estimate(tmp_path, text, capsys)
    assert code == 1
    assert err.startswith(f"specgen estimate: error: {tmp_path / 'm' / 'config.json'}:{line}:{column}: {said}"), err
    assert "Traceback" not in err and err.count("\n") == 1


def test_a_missing_field_keeps_its_message_without_a_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = dict(CONFIG)
    del config["hidden_size"]
    code, err = _estimate(tmp_path, json.dumps(config, indent=2), capsys)
    assert code == 1
    assert err.startswith(f"specgen estimate: error: {tmp_path / 'm' / 'config.json'}: "), err
    assert "hidden_size" in err


def test_a_workload_names_the_model_field_then_the_config_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text, line, column = _text_with(("hidden_size",), "0")
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(text)
    workload = tmp_path / "w.yaml"
    assert "model: meta-llama/Llama-3.1-8B-Instruct" in VALID
    workload.write_text(VALID.replace("model: meta-llama/Llama-3.1-8B-Instruct", "model: ./m"))
    with pytest.raises(SystemExit) as done:
        main(["validate", str(workload)])
    err = capsys.readouterr().err
    assert done.value.code == 1
    assert f"{workload}:5:12: deployments[0].model: " in err, err
    assert f"m/config.json:{line}:{column}: config field 'hidden_size' = 0 is out of range" in err, err
