"""hostile86 item 2: a render never replaces or deletes the workload it reads.

A workload saved at a path the previous render wrote (``infra/ansible/inventory.yml``, or a link to ``infra/spec.json``)
was read, planned, and then replaced by the new render's file, exit 0: the user's input was gone. It is refused before
anything is written; a workload the tree holds that specgen did not write is carried over as before.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from generator import writer
from generator.errors import OutputError
from tests.helpers import VALID, call_cli

OLD = {"spec.json": "old spec\n", "ansible/inventory.yml": "old inventory\n"}
NEW = {"spec.json": "new spec\n", "ansible/inventory.yml": "new inventory\n"}


def _previous_render(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    writer.write_tree(dict(OLD), str(out))
    return out


def _tree(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    ("workload", "link", "keep", "refused"),
    [
        pytest.param("out/ansible/inventory.yml", None, (), "ansible/inventory.yml", id="saved-over-a-rendered-file"),
        pytest.param("w.yaml", "out/spec.json", (), "spec.json", id="a-link-to-a-rendered-file"),
        pytest.param("out/ansible/inventory.yml", None, ("ansible/inventory.yml",), None, id="kept-by-target"),
        pytest.param("out/notes.yaml", None, (), None, id="the-users-file-in-the-tree"),
        pytest.param("w.yaml", None, (), None, id="outside-the-tree"),
    ],
)
def test_a_render_that_would_replace_its_workload_is_refused(
    tmp_path: Path, workload: str, link: str | None, keep: tuple[str, ...], refused: str | None
) -> None:
    out = _previous_render(tmp_path)
    path = tmp_path / workload
    if link is None:
        path.write_text(VALID)
    else:
        (tmp_path / link).write_text(VALID)
        os.symlink(tmp_path / link, path)
    before = _tree(out)
    files = {rel: text for rel, text in NEW.items() if rel not in keep}
    if refused is None:
        writer.write_tree(files, str(out), keep=keep, workloads=[str(path)])
        assert path.read_text() == VALID
        return
    with pytest.raises(OutputError) as caught:
        writer.write_tree(files, str(out), keep=keep, workloads=[str(path)])
    assert str(caught.value) == (
        f"refusing to write {out}: the workload {path} is {refused} there, a file the previous render wrote (listed in "
        ".specgen-manifest), which this render would replace: keep the workload outside the output tree; nothing was "
        "written"
    )
    assert _tree(out) == before
    assert path.read_text() == VALID


def test_render_keeps_a_workload_saved_over_its_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "w.yaml").write_text(VALID)
    assert call_cli(tmp_path, ("render", "w.yaml", "-o", "out")) == 0
    (tmp_path / "out" / "spec.json").write_text(VALID)
    capsys.readouterr()
    assert call_cli(tmp_path, ("render", "out/spec.json", "-o", "out")) == 1
    err = capsys.readouterr().err
    assert "the workload out/spec.json is spec.json there" in err and "Traceback" not in err
    assert (tmp_path / "out" / "spec.json").read_text() == VALID
