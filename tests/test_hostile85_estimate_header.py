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
