"""hostile90: ``render -o afile/sub/out``, where a file stands two or more levels up the output path.

One level up (``afile/out``) said "afile is not a directory"; further up said "cannot write afile/sub/out: Not a
directory", the OS's words, naming no part of the path. Both now name the file in the way, and nothing is written.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.helpers import specgen_in_process as specgen


@pytest.mark.parametrize("output", ["afile/out", "afile/sub/out", "afile/sub/deeper/out", "dir/afile/sub/out"])
def test_a_file_in_the_output_path_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], output: str
) -> None:
    monkeypatch.chdir(tmp_path)
    in_the_way = "dir/afile" if output.startswith("dir/") else "afile"
    Path(in_the_way).parent.mkdir(parents=True, exist_ok=True)
    Path(in_the_way).write_text("x\n")
    code, _, err = specgen(capsys, "render", str(REPO / "examples" / "chat-70b.yaml"), "-o", output)
    assert code == 1
    assert err == f"specgen: error: cannot write {output}: {in_the_way} is not a directory\n", err
    assert sorted(p.name for p in tmp_path.rglob("*")) == sorted(Path(in_the_way).parts)


@pytest.mark.parametrize("output", ["afile/constants.yaml", "afile/sub/constants.yaml"])
def test_a_file_in_a_block_output_path_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], output: str
) -> None:
    """``calibrate -o`` / ``detect -o`` (one block file): the same words, and no temporary file left."""
    from generator.calculator.calibrate import main
    from tests.test_calibrate import DATA, VLLM_SETUP

    monkeypatch.chdir(tmp_path)
    Path("afile").write_text("x\n")
    code = main([*VLLM_SETUP, "--log", str(DATA / "vllm-llama-3.1-70b-w8a8.log"), "-o", output])
    assert code == 1
    assert capsys.readouterr().err == f"specgen calibrate: error: cannot write {output}: afile is not a directory\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]
