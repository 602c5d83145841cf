"""hostile86 item 7: a ``.gguf`` path that exists but is no regular file says what it is, not "not found".

``specgen estimate ./f.gguf`` with ``f.gguf`` a FIFO (or a link to ``/dev/null``) read "GGUF file './f.gguf' not
found": the user looks for a missing file that is there. It is never opened (a FIFO would block the read).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from generator.cli import main


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("fifo", "GGUF file './f.gguf' is a FIFO (./f.gguf); only regular files are read"),
        ("device", "GGUF file './f.gguf' is a device (./f.gguf); only regular files are read"),
        ("missing", "GGUF file './f.gguf' not found (looked for ./f.gguf)"),
        ("dangling", "GGUF file './f.gguf' not found (looked for ./f.gguf)"),
    ],
)
def test_a_gguf_path_that_is_no_regular_file_says_what_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, kind: str, said: str
) -> None:
    monkeypatch.chdir(tmp_path)
    if kind == "fifo":
        os.mkfifo("f.gguf")
    elif kind == "device":
        os.symlink(os.devnull, "f.gguf")
    elif kind == "dangling":
        os.symlink("gone.gguf", "f.gguf")
    with pytest.raises(SystemExit) as done:
        main(["estimate", "./f.gguf"])
    assert done.value.code == 1
    assert capsys.readouterr().err == f"specgen estimate: error: {said}\n"
