"""render --check, atomic writes, --target, diff, plan, schema and catalog commands."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from generator import writer
from generator.errors import OutputError
from generator.workload.schema import workload_schema
from tests.conftest import REPO
from tests.test_cli_errors import VALID, run_specgen


def test_check_exits_4_with_a_diff_when_stale_and_0_when_current(tmp_path: Path) -> None:
    (tmp_path / "w.yaml").write_text(VALID)
    out = tmp_path / "infra"
    assert run_specgen("render", "w.yaml", "-o", str(out), cwd=tmp_path).returncode == 0
    current = run_specgen("render", "w.yaml", "-o", str(out), "--check", cwd=tmp_path)
    assert current.returncode == 0 and "current" in current.stdout
    (tmp_path / "w.yaml").write_text(VALID.replace("requests_per_second: 2", "requests_per_second: 40"))
    stale = run_specgen("render", "w.yaml", "-o", str(out), "--check", cwd=tmp_path)
    assert stale.returncode == 4
    assert "--- a/spec.json" in stale.stderr and "+++ b/spec.json" in stale.stderr
    assert "Traceback" not in stale.stderr


def test_check_reports_extra_and_missing_files(tmp_path: Path) -> None:
    (tmp_path / "w.yaml").write_text(VALID)
    out = tmp_path / "infra"
    run_specgen("render", "w.yaml", "-o", str(out), cwd=tmp_path)
    (out / "stray.txt").write_text("left over\n")
    (out / "SPEC.md").unlink()
    result = run_specgen("render", "w.yaml", "-o", str(out), "--check", cwd=tmp_path)
    assert result.returncode == 4
    assert "a/stray.txt" in result.stderr and "+++ b/SPEC.md" in result.stderr


def test_interrupted_write_leaves_previous_tree_intact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "infra"
    writer.write_tree({"a.txt": "old\n", "d/b.txt": "old b\n"}, str(target))
    calls = {"n": 0}
    real_open = open

    def failing_open(path: Any, *args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError("disk full")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", failing_open)
    with pytest.raises(OutputError, match="disk full"):
        writer.write_tree({"a.txt": "new\n", "d/b.txt": "new b\n", "c.txt": "new c\n"}, str(target))
    monkeypatch.undo()
    assert writer.read_tree(str(target)) == {"a.txt": "old\n", "d/b.txt": "old b\n"}
    assert [p.name for p in tmp_path.iterdir()] == ["infra"]  # no staging directories left behind


def test_write_replaces_the_whole_tree_and_keeps_permissions(tmp_path: Path) -> None:
    target = tmp_path / "infra"
    writer.write_tree({"a.txt": "1\n", "old.txt": "x\n"}, str(target))
    writer.write_tree({"a.txt": "2\n"}, str(target))
    assert writer.read_tree(str(target)) == {"a.txt": "2\n"}
    assert oct(target.stat().st_mode & 0o777) != oct(0o700)


def test_target_renders_only_that_output_and_keeps_the_rest(tmp_path: Path) -> None:
    (tmp_path / "w.yaml").write_text(VALID)
    out = tmp_path / "infra"
    run_specgen("render", "w.yaml", "-o", str(out), cwd=tmp_path)
    tf = out / "terraform" / "variables.tf"
    tf.write_text("edited\n")
    (out / "SPEC.md").write_text("edited\n")
    assert run_specgen("render", "w.yaml", "-o", str(out), "--target", "terraform", cwd=tmp_path).returncode == 0
    assert tf.read_text() != "edited\n"
    assert (out / "SPEC.md").read_text() == "edited\n"


def test_several_files_render_into_named_subdirectories(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(VALID)
    (tmp_path / "b.yaml").write_text(VALID.replace("name: demo", "name: other"))
    result = run_specgen("render", "a.yaml", "b.yaml", "-o", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "demo" / "spec.json").exists() and (tmp_path / "out" / "other" / "spec.json").exists()


def test_diff_summarises_the_fleet_change(tmp_path: Path) -> None:
    (tmp_path / "old.yaml").write_text(VALID)
    (tmp_path / "new.yaml").write_text(VALID.replace("requests_per_second: 2", "requests_per_second: 40"))
    md = run_specgen("diff", "old.yaml", "new.yaml", cwd=tmp_path)
    assert md.returncode == 0, md.stderr
    assert md.stdout.startswith("## specgen: fleet change") and "| gpus |" in md.stdout
    data = json.loads(run_specgen("diff", "old.yaml", "new.yaml", "--format", "json", cwd=tmp_path).stdout)
    assert data["totals"]["gpus"]["delta"] > 0
    run_specgen("render", "old.yaml", "-o", "infra", cwd=tmp_path)
    same = json.loads(run_specgen("diff", "infra/spec.json", "old.yaml", "--format", "json", cwd=tmp_path).stdout)
    assert all(row["delta"] in (0, None) for row in same["totals"].values()) and not same["pools"]


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_plan_formats(fmt: str) -> None:
    result = run_specgen("plan", "examples/chat-70b.yaml", "--format", fmt)
    assert result.returncode == 0, result.stderr
    if fmt == "json":
        assert json.loads(result.stdout)["deployments"][0]["runners_up"]
    else:
        assert "runner-up" in result.stdout


def _walk_properties(schema: dict[str, Any], path: str = "") -> list[str]:
    missing = []
    for name, sub in schema.get("properties", {}).items():
        here = f"{path}.{name}" if path else name
        if "description" not in sub:
            missing.append(here)
        missing += _walk_properties(sub, here)
        if isinstance(sub.get("items"), dict):
            missing += _walk_properties(sub["items"], here + "[]")
    return missing


def test_schema_describes_every_field_and_is_printed() -> None:
    schema = workload_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert _walk_properties(schema) == []
    printed = run_specgen("schema")
    assert printed.returncode == 0 and json.loads(printed.stdout) == schema
    constants = json.loads(run_specgen("schema", "--constants").stdout)
    assert all(c["source"] and c["doc"] for c in constants.values())


@pytest.mark.parametrize("kind", ["gpus", "platforms", "models"])
def test_catalog_listing(kind: str) -> None:
    rows = json.loads(run_specgen("catalog", kind, "--json").stdout)
    assert len(rows) >= 25 and all(r["id"] and r["name"] for r in rows)
    text = run_specgen("catalog", kind).stdout
    assert rows[0]["id"] in text


def test_wheel_layout_finds_templates_and_schemas(tmp_path: Path) -> None:
    # an installed wheel has templates/ and schemas/ inside the package (pyproject force-include)
    pkg = tmp_path / "generator"
    shutil.copytree(REPO / "generator", pkg, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "templates", pkg / "templates")
    shutil.copytree(REPO / "schemas", pkg / "schemas")
    code = "from generator.paths import data_dir; print(data_dir('templates'), data_dir('schemas'))"
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True,
                         env={**os.environ, "PYTHONPATH": str(tmp_path)}).stdout  # fmt: skip
    assert str(pkg / "templates") in out and str(pkg / "schemas") in out


def test_unwritable_output_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "w.yaml").write_text(VALID)
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro" / "file").write_text("x")
    result = run_specgen("render", "w.yaml", "-o", str(tmp_path / "ro" / "file" / "infra"), cwd=tmp_path)
    assert result.returncode == 1
    assert "cannot write" in result.stderr and "Traceback" not in result.stderr
