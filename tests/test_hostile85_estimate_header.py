"""hostile85 item 4: the estimate's header line prints a model path with control characters as escapes, on one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.cli import main
from tests.test_hostile85_config_numbers import CONFIG


def test_a_model_path_holding_control_characters_is_printed_on_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """hostile85 item 4: the estimate's first line printed the path as given: an ESC sequence recoloured the terminal
    and a newline started a line of its own (a CI runner obeys one such as ``::error::``)."""
    model = tmp_path / "m\x1b[31mred\n::error::x"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(CONFIG))
    with pytest.raises(SystemExit) as done:
        main(["estimate", str(model)])
    out = capsys.readouterr().out
    assert done.value.code == 0
    assert out.split("\n")[0] == f"{tmp_path}/m\\x1b[31mred\\n::error::x (llama, 32 layers)"


def test_validate_says_ok_of_a_file_name_holding_control_characters_on_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """hostile85 item 5: ``validate`` printed ``<file>: ok`` with the name as given, so a newline in it began a line
    (``::error::x.yaml: ok``, which a GitHub Actions runner reads as an error annotation) and an ESC recoloured it."""
    workload = tmp_path / "e\x1b[31m\n::error::x.yaml"
    workload.write_text(
        "version: 1\nname: w\ndeployments:\n  - name: chat\n    model: meta-llama/Llama-3.1-8B-Instruct\n"
        "    inference:\n      max_context_tokens: 8192\n      requests_per_second: 1\n"
        "hardware:\n  gpus: [h100-sxm5-80gb]\n  provider: baremetal\n"
    )
    with pytest.raises(SystemExit) as done:
        main(["validate", str(workload)])
    out = capsys.readouterr().out
    assert done.value.code in (0, None)
    assert out == f"{tmp_path}/e\\x1b[31m\\n::error::x.yaml: ok\n"
