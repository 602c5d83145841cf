"""Errors stay one located line whatever the input holds (fuzz9 items 1, 2 and 7)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.errors import MAX_ERROR_LINE_CHARS, InputError, one_line
from generator.sizing.constants import CONSTANT_BOUNDS
from generator.workload import load_workload
from tests.conftest import REPO
from tests.helpers import run_estimate, run_specgen


def test_one_line_escapes_control_characters_and_caps_the_length() -> None:
    assert one_line("unknown field '\n::add-mask::x\r'") == "unknown field '\\n::add-mask::x\\r'"
    assert one_line("tab\tand é 中") == "tab\tand é 中"  # printable text and tabs as they are
    long = one_line("k" * (MAX_ERROR_LINE_CHARS + 500) + ": File name too long")
    assert long.endswith(": File name too long") and len(long) < MAX_ERROR_LINE_CHARS + 40
    assert "... (520 characters left out) ..." in long  # hostile86: the middle is cut, the reason kept


def test_a_value_with_line_breaks_cannot_start_a_ci_workflow_command(tmp_path: Path) -> None:
    """A key or value holding ``\\n::cmd::`` printed raw would be a line GitHub Actions obeys."""
    path = tmp_path / "w.yaml"
    path.write_text('version: 1\nname: t\n"\\n::add-mask::secret\\r\\n::error::INJ": 1\ndeployments: []\n')
    done = run_specgen("validate", str(path), cwd=tmp_path, env={"GITHUB_ACTIONS": "true"})
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert lines and all(line.startswith(("specgen: error: ", "::error file=")) for line in lines)
    # hostile79 item 14: a key no field name could be is located, not echoed (escaped or not)
    assert "unknown field (a key of 33 characters, not shown: it holds '\\n', which no field name does)" in lines[0]
    assert "add-mask" not in done.stderr


def test_a_file_name_with_line_breaks_cannot_start_a_ci_workflow_command_in_a_finding_line(tmp_path: Path) -> None:
    """fuzz10 item 7: error lines were escaped, the ``file:line:col: warning: ...`` lines of findings were not."""
    (tmp_path / "g\n::error::X.yaml").write_text((REPO / "examples" / "home-70b-offload.yaml").read_text())  # warns
    done = run_specgen("plan", "g\n::error::X.yaml", cwd=tmp_path, env={"GITHUB_ACTIONS": "true"})
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert any(line.startswith("g\\n::error::X.yaml:") for line in lines)
    assert not [line for line in lines if line.startswith("::error::")]


FRACTIONS = sorted(name for name, bounds in CONSTANT_BOUNDS.items() if bounds[2] == 1 and bounds[0] > 0)


@pytest.mark.parametrize("name", FRACTIONS)
def test_a_vanishing_fraction_of_a_peak_is_refused_where_it_is_set(tmp_path: Path, name: str) -> None:
    """5e-324 (the smallest float) divided into a step time overflowed, or the product was 0 and divided by."""
    path = tmp_path / "w.yaml"
    path.write_text((REPO / "examples" / "finetune-8b-qlora.yaml").read_text() + f"constants:\n  {name}: 5.0e-324\n")
    with pytest.raises(InputError, match=rf"w\.yaml:\d+:\d+: constants\.{name}: constant '{name}' must be in \[0\.001, 1\]"):
        load_workload(str(path))


def test_an_overflow_in_the_sizing_is_an_error_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The last line of defence: an arithmetic error anywhere in the estimate is reported as an error, exit 1."""
    from generator.calculator import cli

    def overflow(*_: object) -> object:
        raise OverflowError("cannot convert float infinity to integer")

    monkeypatch.setattr(cli, "run_estimate", overflow)
    code, _ = run_estimate("llama-3.1-8b", "--gpu", "h100-sxm5-80gb")
    assert code == 1
    assert "error: the sizing arithmetic failed (cannot convert float infinity to integer)" in capsys.readouterr().err
