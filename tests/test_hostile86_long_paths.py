"""hostile86 item 6: an error about a path of thousands of characters still says why.

``one_line`` cut a line at 2,000 characters from its start, so ``render -o <5,000-character path>``,
``validate`` / ``diff`` of such a file printed the path and "... (3,072 characters more)": the reason ("File name too
long") was cut off. A long line now keeps its start (file, line, field) and its end (the reason).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.cli import main
from generator.errors import MAX_ERROR_LINE_CHARS
from tests.helpers import VALID

LONG = "/".join(["d" * 200] * 25)


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        pytest.param(("render", "w.yaml", "-o", LONG), "File name too long", id="render-output"),
        pytest.param(("validate", f"{LONG}/w.yaml"), "File name too long", id="validate"),
        pytest.param(("diff", "w.yaml", f"{LONG}.json"), "File name too long", id="diff"),
    ],
)
def test_a_long_path_keeps_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], reason: str
) -> None:
    (tmp_path / "w.yaml").write_text(VALID)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as done:
        main(list(args))
    err = capsys.readouterr().err
    assert done.value.code == 1
    assert err.count("\n") == 1 and len(err) <= MAX_ERROR_LINE_CHARS + 60, len(err)
    assert err.startswith("specgen: error: ") and err.rstrip("\n").endswith(reason), err[-200:]
    assert "characters left out" in err
