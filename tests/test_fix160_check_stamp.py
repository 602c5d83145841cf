"""``render --check`` notes a committed ``spec.json`` that another specgen (or none) wrote (fix160 item 2).

fix158 left it out: ``diff`` said on stderr that a ``spec.json`` was stamped by another version, ``render --check``
read the committed tree silently, so a drift that an upgrade of specgen makes read as a change to the workload. The
note is :func:`generator.spec_stamp.stamp_note`'s (one wording for both commands), on stderr before the verdict;
stdout (the patch) and the exit code (4) are what they are without it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from generator.spec_stamp import SPEC_STAMP, drift_stamp_notes
from tests.helpers import specgen_in_process as specgen

EXAMPLE = str(Path(__file__).parents[1] / "examples" / "chat-70b.yaml")
STAMP_LINE = f'  "generator": "{SPEC_STAMP}",\n'


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example's tree as render writes it (rendered once; each test checks a copy)."""
    from generator.cli import main

    out = tmp_path_factory.mktemp("rendered") / "infra"
    with pytest.raises(SystemExit) as done:
        main(["render", EXAMPLE, "-o", str(out)])
    assert done.value.code in (0, None)
    return out


def _tree(rendered: Path, tmp_path: Path, stamp_line: str | None) -> Path:
    """A copy of the rendered tree whose ``spec.json`` stamp line is ``stamp_line`` (None: the line removed)."""
    tree = tmp_path / "infra"
    shutil.copytree(rendered, tree)
    spec = tree / "spec.json"
    text = spec.read_text(encoding="utf-8")
    assert STAMP_LINE in text
    spec.write_text(text.replace(STAMP_LINE, stamp_line or ""), encoding="utf-8")
    return tree


@pytest.mark.parametrize(
    ("stamp_line", "said"),
    [
        ('  "generator": "specgen 0.0.1",\n', f"was written by 'specgen 0.0.1', not this {SPEC_STAMP}"),
        ('  "generator": 5,\n', f"has 'generator' 5, not a specgen version (this specgen writes {SPEC_STAMP!r})"),
        (None, f"has no 'generator' stamp (this specgen writes {SPEC_STAMP!r})"),
    ],
    ids=["older", "not-a-text", "missing"],
)
def test_a_tree_of_another_specgen_is_noted(
    rendered: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], stamp_line: str | None, said: str
) -> None:
    tree = _tree(rendered, tmp_path, stamp_line)
    code, out, err = specgen(capsys, "render", EXAMPLE, "-o", str(tree), "--check")
    assert code == 4
    note = (
        f"specgen: note: {tree}/spec.json {said}: its tree's drift may come from the specgen that wrote it, "
        "not from a change to the workload"
    )
    lines = err.splitlines()
    assert note in lines and lines[-1].startswith("specgen: rendered output is stale in ")
    assert lines.index(note) == len(lines) - 2  # after the findings, just before the verdict
    assert "specgen: note" not in out and out.startswith("--- a/spec.json\n+++ b/spec.json\n")


def test_a_drift_of_this_specgen_has_no_note(rendered: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A hand edit of a tree this specgen wrote: the drift, and no note."""
    tree = _tree(rendered, tmp_path, STAMP_LINE)
    (tree / "SPEC.md").write_text("edited\n", encoding="utf-8")
    code, out, err = specgen(capsys, "render", EXAMPLE, "-o", str(tree), "--check")
    assert code == 4 and "specgen: note" not in err + out and "SPEC.md" in out


def test_a_current_tree_has_no_note(rendered: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = _tree(rendered, tmp_path, STAMP_LINE)
    code, out, err = specgen(capsys, "render", EXAMPLE, "-o", str(tree), "--check")
    assert (code, out) == (0, "") and "specgen: note" not in err


def test_the_notes_of_a_tree_of_several_workloads() -> None:
    """Each workload's ``spec.json`` the render writes too, by path under the output; no note of another file, of a
    ``spec.json`` the render does not write, of one that is no JSON object, or of one of this specgen's."""
    ours = json.dumps({"generator": SPEC_STAMP, "plan": {}})
    committed = {
        "a/spec.json": json.dumps({"generator": "specgen 9.9.9", "plan": {}}),
        "b/spec.json": ours,
        "c/spec.json": "{not json",
        "d/spec.json": "[1, 2]",
        "e/spec.json": json.dumps({"generator": "specgen 9.9.9"}),  # a tree no file renders now
        "a/SPEC.md": json.dumps({"generator": "specgen 9.9.9"}),
    }
    rendered = dict.fromkeys(("a/spec.json", "b/spec.json", "c/spec.json", "d/spec.json", "a/SPEC.md"), ours)
    assert drift_stamp_notes(committed, rendered, "infra") == [
        f"specgen: note: infra/a/spec.json was written by 'specgen 9.9.9', not this {SPEC_STAMP}: its tree's drift may "
        "come from the specgen that wrote it, not from a change to the workload"
    ]
