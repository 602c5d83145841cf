"""``diff`` says which specgen wrote a ``spec.json`` it compares when it is not this one (hostile85).

A base stamped ``specgen 99.0.0``, ``5`` or nothing was compared without a word, and the fields this version does not
know were skipped. The diff goes on (a shape it cannot read is refused, as before) and says so in one line on stderr,
naming both stamps; its stdout (markdown or JSON) is as for a spec.json of this version.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from generator import __version__
from generator.spec_stamp import SPEC_STAMP, stamp_note
from tests.helpers import VALID
from tests.helpers import specgen_in_process as specgen


@pytest.fixture(scope="module")
def spec_text(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A spec.json this specgen renders (the helpers' valid workload)."""
    from generator.api import plan_file
    from generator.render.spec import render_spec

    path = tmp_path_factory.mktemp("stamp") / "w.yaml"
    path.write_text(VALID)
    return render_spec(plan_file(str(path))[1])["spec.json"]


def _stamped(text: str, stamp: object) -> str:
    data = json.loads(text)
    if stamp is None:
        del data["generator"]
    else:
        data["generator"] = stamp
    return json.dumps(data, indent=2)


def test_the_stamp_is_this_version() -> None:
    assert f"specgen {__version__}" == SPEC_STAMP
    assert stamp_note({"generator": SPEC_STAMP, "plan": {}}, "spec.json") is None


@pytest.mark.parametrize(
    ("stamp", "said"),
    [
        ("specgen 99.0.0", f"old.json was written by 'specgen 99.0.0', not this {SPEC_STAMP}"),
        ("specgen 0.0.1", f"old.json was written by 'specgen 0.0.1', not this {SPEC_STAMP}"),
        (5, f"old.json has 'generator' 5, not a specgen version (this specgen writes '{SPEC_STAMP}')"),
        (None, f"old.json has no 'generator' stamp (this specgen writes '{SPEC_STAMP}')"),
        ("x\n::error::y", f"old.json was written by 'x\\n::error::y', not this {SPEC_STAMP}"),
    ],
    ids=["newer", "older", "not-a-text", "missing", "control-characters"],
)
@pytest.mark.parametrize("fmt", ["markdown", "json"])
def test_diff_says_a_spec_json_of_another_version(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    spec_text: str,
    stamp: object,
    said: str,
    fmt: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("new.json").write_text(spec_text)
    Path("same.json").write_text(spec_text)
    Path("old.json").write_text(_stamped(spec_text, stamp))
    code, out, err = specgen(capsys, "diff", "old.json", "new.json", "--format", fmt)
    assert code == 0
    assert err == f"specgen: note: {said}: the diff compares the fields this version writes and skips any other\n"
    # stdout is the diff of two spec.json of this version: the note is on stderr alone
    assert (code, out, "") == specgen(capsys, "diff", "same.json", "new.json", "--format", fmt)


def test_diff_base_says_a_committed_spec_json_of_another_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, spec_text: str
) -> None:
    """``diff --base REV tree/spec.json``: the committed side is named as it was read (``REV:path``)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "infra").mkdir()
    spec = tmp_path / "infra" / "spec.json"
    spec.write_text(_stamped(spec_text, "specgen 0.0.1"))
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}  # fmt: skip
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True, env=env)
    spec.write_text(spec_text)
    code, _, err = specgen(capsys, "diff", "--base", "HEAD", "infra/spec.json", "--format", "json")
    assert code == 0
    assert err == (
        f"specgen: note: HEAD:infra/spec.json was written by 'specgen 0.0.1', not this {SPEC_STAMP}: the diff compares "
        "the fields this version writes and skips any other\n"
    )


def test_a_shape_it_cannot_read_is_refused_as_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, spec_text: str
) -> None:
    """A spec.json of another version whose plan lacks what the diff reads is refused, with no note first."""
    monkeypatch.chdir(tmp_path)
    Path("new.json").write_text(spec_text)
    Path("old.json").write_text(json.dumps({"generator": "specgen 99.0.0", "plan": {"totals": {}}}))
    code, out, err = specgen(capsys, "diff", "old.json", "new.json")
    assert code != 0 and out == ""
    assert "has no 'pools'" in err and "note:" not in err
