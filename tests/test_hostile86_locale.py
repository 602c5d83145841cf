"""hostile86 item 8: a locale that is not UTF-8 neither changes the output nor ends in a traceback.

With ``LC_ALL=C`` and ``PYTHONUTF8=0`` (Python's file names then ASCII, as in any non-UTF-8 locale for the characters
it lacks) a workload's ``model: ./modèle`` ended in ``UnicodeEncodeError: 'ascii' codec can't encode character``.
It is refused at the model field, saying how to run; a workload without such a path renders the same bytes.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import REPO
from tests.helpers import VALID, run_specgen

NOT_UTF8 = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": ""}


def test_a_model_path_the_locale_cannot_encode_is_refused_at_its_field(tmp_path: Path) -> None:
    model = tmp_path / "mod\u00e8le"
    model.mkdir()
    (model / "config.json").write_text((REPO / "tests" / "data" / "hub" / "qwen2.5-7b.config.json").read_text())
    assert "model: meta-llama/Llama-3.1-8B-Instruct" in VALID
    (tmp_path / "w.yaml").write_text(VALID.replace("model: meta-llama/Llama-3.1-8B-Instruct", "model: ./mod\u00e8le"))
    done = run_specgen("validate", "w.yaml", cwd=tmp_path, env=NOT_UTF8)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("specgen: error: w.yaml:5:12: deployments[0].model: the model path "), done.stderr
    assert "holds '\\xe8' (U+00E8), which this process's file names, in the locale's encoding (ascii), cannot hold: " in (
        done.stderr
    )
    assert run_specgen("validate", "w.yaml", cwd=tmp_path).returncode == 0  # a UTF-8 locale reads it


def test_the_render_is_the_same_bytes_in_a_locale_that_is_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "w.yaml").write_text(VALID)
    trees = {}
    for name, env in (("utf8", {}), ("c", NOT_UTF8)):
        done = run_specgen("render", "w.yaml", "-o", name, cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stderr
        out = tmp_path / name
        trees[name] = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    assert trees["utf8"] == trees["c"] and trees["c"]
