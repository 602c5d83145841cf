"""render --check, atomic writes, --target, diff, plan, schema and catalog commands."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from generator import writer
from generator.errors import OutputError
from generator.swap import ExchangeUnsupportedError
from generator.workload.schema import workload_schema
from tests.conftest import REPO
from tests.helpers import VALID, run_specgen

TWO_POOLS = VALID.replace("    inference:\n", "    platform: dell-r760\n    inference:\n", 1).replace(
    "hardware:",
    """  - name: embed
    model: meta-llama/Llama-3.1-8B-Instruct
    platform: dell-r760xa  # each on its own platform: the two 8B services would share one server otherwise
    inference:
      max_context_tokens: 4096
      requests_per_second: 1
hardware:""",
)
EMBED_VARS = "ansible/group_vars/embed_l40s_48gb.yml"
BINARY = bytes(range(256)) * 4  # not UTF-8


def test_check_exits_4_with_a_diff_when_stale_and_0_when_current(tmp_path: Path) -> None:
    (tmp_path / "w.yaml").write_text(VALID)
    out = tmp_path / "infra"
    assert run_specgen("render", "w.yaml", "-o", str(out), cwd=tmp_path).returncode == 0
    current = run_specgen("render", "w.yaml", "-o", str(out), "--check", cwd=tmp_path)
    assert current.returncode == 0 and current.stdout == "" and "rendered output is current" in current.stderr
    (tmp_path / "w.yaml").write_text(VALID.replace("requests_per_second: 2", "requests_per_second: 40"))
    stale = run_specgen("render", "w.yaml", "-o", str(out), "--check", cwd=tmp_path)
    assert stale.returncode == 4
    assert "--- a/spec.json" in stale.stdout and "+++ b/spec.json" in stale.stdout
    assert "Traceback" not in stale.stderr


@pytest.mark.skipif(not hasattr(fcntl, "F_SETPIPE_SZ"), reason="pipe sizes are set only on Linux (F_SETPIPE_SZ)")
def test_check_keeps_its_exit_code_when_the_reader_of_the_diff_stops_early(tmp_path: Path) -> None:
    """newuser16 L2: ``render --check | head -1`` exited 1, the code of bad input, and CI lost the drift signal."""
    (tmp_path / "w.yaml").write_text(VALID)
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)  # the smallest pipe: the diff cannot all wait in it
    command = [sys.executable, "-c", "from generator.cli import main; main()", "render", "w.yaml", "-o", "new", "--check"]
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
    with subprocess.Popen(command, cwd=tmp_path, env=env, stdout=write_end, stderr=subprocess.PIPE) as process:
        os.close(write_end)
        with os.fdopen(read_end, "rb") as reader:
            assert reader.readline().startswith(b"--- ")
        _, stderr = process.communicate()  # the reader is gone: the rest of the diff meets a closed pipe
    assert process.returncode == 4
    verdict = "rendered output is stale in new (SPEC.md, ansible/, spec.json and terraform/); run `specgen render w.yaml -o new`"
    assert stderr.decode().strip() == f"specgen: {verdict} and commit the result"


def test_check_of_a_file_says_it_is_not_a_directory_as_render_does(tmp_path: Path) -> None:
    """fuzz14 item 7: ``--check -o afile`` read the file as an empty tree and said "stale" (exit 4)."""
    (tmp_path / "w.yaml").write_text(VALID)
    (tmp_path / "afile").write_text("x")
    for extra in ((), ("--check",)):
        result = run_specgen("render", "w.yaml", "-o", "afile", *extra, cwd=tmp_path)
        refused = "specgen: error: output path afile exists and is not a directory"
        assert (result.returncode, result.stderr.strip()) == (1, refused)


@pytest.mark.parametrize("loop", ["self", "pair", "below"])
def test_an_output_path_through_a_symbolic_link_loop_is_said_to_be_one(tmp_path: Path, loop: str) -> None:
    """fix146 item 2: ``--check -o loop`` (``ln -s loop loop``) said "not a directory", and render "cannot read
    loop/.specgen-manifest"; both now name the loop, exit 1, and write nothing."""
    (tmp_path / "w.yaml").write_text(VALID)
    if loop == "pair":
        (tmp_path / "l1").symlink_to("l2")
        (tmp_path / "l2").symlink_to("l1")
    else:
        (tmp_path / "loop").symlink_to("loop")
    output = {"self": "loop", "pair": "l1", "below": "loop/sub"}[loop]
    before = sorted(p.name for p in tmp_path.iterdir())
    for extra in (("--check",), ()):
        result = run_specgen("render", "w.yaml", "-o", output, *extra, cwd=tmp_path)
        said = f"specgen: error: output path {output} is a symbolic link loop (it never resolves to a directory: "
        assert (result.returncode, result.stdout) == (1, "") and result.stderr.startswith(said), result.stderr
        assert result.stderr.rstrip().endswith("give the path of a directory; nothing was written")
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_check_of_a_folder_of_trees_is_refused_as_render_refuses_it(tmp_path: Path) -> None:
    """newuser82 item 4: ``--check -o infra`` on a folder holding trees of their own (``infra/eks``) and no manifest
    said "stale; run `specgen render`" (exit 4) over a patch adding every file, where that render refused it (exit 1).
    An empty or missing directory is still stale (the render creates it)."""
    (tmp_path / "w.yaml").write_text(VALID)
    assert run_specgen("render", "w.yaml", "-o", "infra/eks", cwd=tmp_path).returncode == 0
    refused = "specgen: error: refusing to write into infra: it holds files specgen did not write (no .specgen-manifest)"
    for extra in ((), ("--check",)):
        result = run_specgen("render", "w.yaml", "-o", "infra", *extra, cwd=tmp_path)
        assert (result.returncode, result.stdout) == (1, "") and result.stderr.startswith(refused), result.stderr
    (tmp_path / "empty").mkdir()
    for folder in ("empty", "missing"):
        result = run_specgen("render", "w.yaml", "-o", folder, "--check", cwd=tmp_path)
        assert result.returncode == 4 and "+++ b/spec.json" in result.stdout


def test_check_reports_extra_and_missing_files_but_not_foreign_ones(tmp_path: Path) -> None:
    (tmp_path / "w.yaml").write_text(TWO_POOLS)
    out = tmp_path / "infra"
    run_specgen("render", "w.yaml", "-o", str(out), cwd=tmp_path)
    (tmp_path / "w.yaml").write_text(VALID)  # the embed pool is gone: its files are now extra
    (out / "stray.txt").write_text("left over\n")  # not specgen's: not compared
    (out / "SPEC.md").unlink()
    result = run_specgen("render", "w.yaml", "-o", str(out), "--check", cwd=tmp_path)
    assert result.returncode == 4
    assert f"--- a/{EMBED_VARS}" in result.stdout and "+++ b/SPEC.md" in result.stdout
    assert "-ansible/group_vars/embed_l40s_48gb.yml" in result.stdout  # the manifest is checked too
    assert "stray.txt" not in result.stdout + result.stderr


def test_check_takes_a_manifest_entry_too_long_for_a_file_name_as_drift(tmp_path: Path) -> None:
    """fuzz12 item 12: 300 characters appended to the manifest made --check exit 1 ("File name too long"), not 4."""
    (tmp_path / "w.yaml").write_text(VALID)
    out = tmp_path / "infra"
    run_specgen("render", "w.yaml", "-o", str(out), cwd=tmp_path)
    with (out / ".specgen-manifest").open("a") as fh:
        fh.write("a" * 300 + "\n")
    result = run_specgen("render", "w.yaml", "-o", str(out), "--check", cwd=tmp_path)
    assert result.returncode == 4, result.stderr
    assert "-" + "a" * 300 in result.stdout


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
    assert writer.read_tree(str(target)) == writer.with_manifest({"a.txt": "old\n", "d/b.txt": "old b\n"})
    assert [p.name for p in tmp_path.iterdir()] == ["infra"]  # no staging directories left behind


def test_write_replaces_the_owned_files_and_keeps_permissions(tmp_path: Path) -> None:
    target = tmp_path / "infra"
    writer.write_tree({"a.txt": "1\n", "old.txt": "x\n"}, str(target))
    writer.write_tree({"a.txt": "2\n"}, str(target))
    assert writer.read_tree(str(target)) == writer.with_manifest({"a.txt": "2\n"})
    assert sorted(p.name for p in target.iterdir()) == [".specgen-manifest", "a.txt"]
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
    (tmp_path / "b.yaml").write_text(VALID.replace("name: demo", "name: other").replace("- name: chat", "- name: assistant"))
    result = run_specgen("render", "a.yaml", "b.yaml", "-o", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "demo" / "spec.json").exists() and (tmp_path / "out" / "other" / "spec.json").exists()
    assert (tmp_path / "out" / "cluster" / "gpu-operator" / "values.yaml").exists()  # one shared layer, not one per workload
    assert not (tmp_path / "out" / "demo" / "cluster").exists()


@pytest.mark.parametrize(
    ("again", "dropped"),
    [
        pytest.param(
            ("a.yaml",),
            "a render of one file writes the flat tree of workload 'demo' in place of the trees of workloads demo, other there",
            id="one-file-of-two",
        ),
        pytest.param(
            ("a.yaml", "c.yaml"),
            "this render would remove the tree of workload other, which no file given renders",
            id="one-file-swapped",
        ),
    ],
)
def test_a_render_that_drops_workload_trees_is_refused_unless_pruned(
    tmp_path: Path, again: tuple[str, ...], dropped: str
) -> None:
    """newuser33 item 2: rendering only the file a change touched into a cluster's root removed every other
    workload's tree (66 files) and printed "wrote 16 files", exit 0; the root's Terraform then destroys their pools."""
    (tmp_path / "a.yaml").write_text(VALID)
    (tmp_path / "b.yaml").write_text(VALID.replace("name: demo", "name: other").replace("- name: chat", "- name: assistant"))
    (tmp_path / "c.yaml").write_text(VALID.replace("name: demo", "name: third").replace("- name: chat", "- name: coder"))
    assert run_specgen("render", "a.yaml", "b.yaml", "-o", "out", cwd=tmp_path).returncode == 0
    before = snapshot(tmp_path)
    refused = run_specgen("render", *again, "-o", "out", cwd=tmp_path)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert f"out: {dropped}; " in refused.stderr
    assert refused.stderr.strip().endswith(
        "render every workload file of the cluster together, or pass --prune to remove them; nothing was written"
    )
    assert snapshot(tmp_path) == before
    pruned = run_specgen("render", *again, "-o", "out", "--prune", cwd=tmp_path)
    assert pruned.returncode == 0, pruned.stderr
    assert "specgen: removed the tree of workload 'other' (out/other)" in pruned.stderr
    assert not (tmp_path / "out" / "other").exists()
    # the trees the files given render are no drop: rendering the same files again needs no --prune
    assert run_specgen("render", *again, "-o", "out", cwd=tmp_path).returncode == 0


def test_prune_with_target_is_refused(tmp_path: Path) -> None:
    """fuzz28 H1: --prune --target spec said it removed a tree whose other outputs stayed (the root module still called
    it), exit 0."""
    (tmp_path / "a.yaml").write_text(VALID)
    (tmp_path / "b.yaml").write_text(VALID.replace("name: demo", "name: other").replace("- name: chat", "- name: assistant"))
    (tmp_path / "c.yaml").write_text(VALID.replace("name: demo", "name: third").replace("- name: chat", "- name: coder"))
    assert run_specgen("render", "a.yaml", "b.yaml", "-o", "out", cwd=tmp_path).returncode == 0
    before = snapshot(tmp_path)
    for again in (("a.yaml",), ("a.yaml", "c.yaml")):
        refused = run_specgen("render", *again, "-o", "out", "--prune", "--target", "spec", cwd=tmp_path)
        assert refused.returncode == 1 and "--prune removes whole workload trees (" in refused.stderr
        assert snapshot(tmp_path) == before


def test_a_render_over_another_workloads_flat_tree_is_refused_unless_pruned(tmp_path: Path) -> None:
    """review24 L5: two files rendered over a third workload's flat tree removed it, exit 0, with no word."""
    (tmp_path / "a.yaml").write_text(VALID)
    (tmp_path / "b.yaml").write_text(VALID.replace("name: demo", "name: other").replace("- name: chat", "- name: assistant"))
    (tmp_path / "c.yaml").write_text(VALID.replace("name: demo", "name: third").replace("- name: chat", "- name: coder"))
    assert run_specgen("render", "c.yaml", "-o", "out", cwd=tmp_path).returncode == 0
    refused = run_specgen("render", "a.yaml", "b.yaml", "-o", "out", cwd=tmp_path)
    assert refused.returncode == 1
    assert "out: this render would remove the tree of workload third, which no file given renders" in refused.stderr
    assert (tmp_path / "out" / "spec.json").exists()
    pruned = run_specgen("render", "a.yaml", "b.yaml", "-o", "out", "--prune", cwd=tmp_path)
    assert pruned.returncode == 0 and "specgen: removed the tree of workload 'third' (out)" in pruned.stderr
    # the flat tree of the workload rendered, into its trees of a cluster: nothing dropped
    assert run_specgen("render", "a.yaml", "-o", "flat", cwd=tmp_path).returncode == 0
    assert run_specgen("render", "a.yaml", "b.yaml", "-o", "flat", cwd=tmp_path).returncode == 0


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


def test_diff_plans_both_files_before_either_fails(tmp_path: Path) -> None:
    """Review: ``diff OLD NEW`` stopped at OLD's error, so a change that fixes OLD could not be reviewed and NEW's own
    errors stayed unseen until OLD was fixed. Both are planned; an unplannable OLD counts as an empty fleet."""
    (tmp_path / "bad.yaml").write_text(VALID.replace("requests_per_second: 2", "requests_per_second: -1"))
    (tmp_path / "unknown.yaml").write_text(VALID.replace("Llama-3.1-8B-Instruct", "No-Such-Model"))
    (tmp_path / "good.yaml").write_text(VALID)
    fixed = run_specgen("diff", "bad.yaml", "good.yaml", "--format", "json", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stderr
    data = json.loads(fixed.stdout)
    assert data["old_errors"] and data["old_errors"][0].startswith("bad.yaml:")
    assert data["totals"]["gpus"]["old"] is None and data["totals"]["gpus"]["new"] >= 1
    md = run_specgen("diff", "bad.yaml", "good.yaml", cwd=tmp_path).stdout
    assert "OLD could not be planned; its fleet is counted as empty" in md and "requests_per_second" in md
    both = run_specgen("diff", "bad.yaml", "unknown.yaml", cwd=tmp_path)
    assert both.returncode == 1 and both.stdout == ""
    assert "bad.yaml:" in both.stderr and "unknown.yaml:" in both.stderr and "Traceback" not in both.stderr
    new_only = run_specgen("diff", "good.yaml", "unknown.yaml", cwd=tmp_path)
    assert new_only.returncode == 1 and "unknown.yaml:" in new_only.stderr and "good.yaml" not in new_only.stderr
    # fuzz24 L11: an OLD that is no file is a typo, not a fix: it fails as a NEW would
    typo = run_specgen("diff", "godo.yaml", "good.yaml", cwd=tmp_path)
    assert typo.returncode == 1 and typo.stdout == "" and "godo.yaml: file not found" in typo.stderr
    # fuzz25 L4-L5: a spec.json that cannot be read, or a render tree given for its spec.json, is no workload a change
    # fixes: it fails as a NEW would, the tree with where its spec.json is
    (tmp_path / "s.json").write_text('{"plan": {"provider": "x", "pools": "y"}}')
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "spec.json").write_text("{}")
    for old, said in (("s.json", "s.json:1:10: not a specgen spec.json"), ("tree", "give its spec.json, tree/spec.json")):
        failed = run_specgen("diff", old, "good.yaml", cwd=tmp_path)
        assert failed.returncode == 1 and failed.stdout == "" and said in failed.stderr


def test_diff_of_a_machine_the_team_has_shows_its_speed_and_where_the_weights_live(tmp_path: Path) -> None:
    """newuser11 item 3: q4_k_m -> bf16 on the home server read "no change"; decode fell from 2.66 to 0.07 tokens/s
    with 65 GiB of weights paged from NVMe."""
    text = (REPO / "examples" / "home-70b-offload.yaml").read_text()
    (tmp_path / "old.yaml").write_text(text)
    (tmp_path / "new.yaml").write_text(text.replace("precision: q4_k_m", "precision: bf16"))
    data = json.loads(run_specgen("diff", "old.yaml", "new.yaml", "--format", "json", cwd=tmp_path).stdout)
    (row,) = data["deployments"]
    old, new = row["old"]["machine"], row["new"]["machine"]
    assert old["decode_tokens_per_s"] > 30 * new["decode_tokens_per_s"]
    assert old["weights_gib"]["nvme"] == 0 < new["weights_gib"]["nvme"]
    md = run_specgen("diff", "old.yaml", "new.yaml", cwd=tmp_path).stdout
    assert f"; {old['decode_tokens_per_s']:.2f} tokens/s, TTFT " in md
    # fuzz32 item 8: the engine and its planned command line follow, the settings the figures are timed for
    assert f"/ NVMe 0.00 GiB; llama.cpp {old['command']} |" in md and old["engine"] == "llama.cpp"
    assert old["command"].startswith("-ngl ") and old["command"] != new["command"]


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


# --- ownership: specgen replaces only the files listed in .specgen-manifest ---------------------------------


def snapshot(root: Path) -> dict[str, tuple[str, bytes | str | None]]:
    """Every entry under root, symlinks not followed: kind and content (bytes, or the link's target)."""
    found: dict[str, tuple[str, bytes | str | None]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                found[rel] = ("dir", None)
            else:
                found[rel] = ("file", path.read_bytes())
    return found


def add_foreign(out: Path) -> dict[str, tuple[str, bytes | str | None]]:
    """Add what terraform (and a user) leave inside a rendered tree; returns the snapshot of just those entries."""
    before = snapshot(out)
    tf = out / "terraform"
    (tf / "terraform.tfstate").write_text('{"version": 4, "serial": 7}\n')
    provider = tf / ".terraform" / "providers" / "registry" / "terraform-provider"
    provider.parent.mkdir(parents=True)
    provider.write_bytes(BINARY)
    provider.chmod(0o755)
    (tf / ".terraform" / "current").symlink_to("providers/registry")
    (tf / ".terraform" / "broken").symlink_to("/nonexistent/specgen-test")
    (tf / ".terraform" / "plugins").mkdir()  # empty directory
    (out / "notes.md").write_text("mine\n")
    return {rel: entry for rel, entry in snapshot(out).items() if rel not in before}


def test_a_manifest_naming_user_files_does_not_delete_them(tmp_path: Path) -> None:
    """fuzz23 item 10: the manifest is committed with the tree; a line naming the Terraform state added to it (in a pull
    request) had the next render delete the state. Only names specgen writes are taken from a manifest."""
    (tmp_path / "w.yaml").write_text(VALID)
    out = tmp_path / "infra"
    assert run_specgen("render", "w.yaml", "-o", "infra", cwd=tmp_path).returncode == 0
    foreign = add_foreign(out)
    (out / "keep").mkdir()
    (out / "keep" / "state.tfstate").write_text("{}\n")
    (out / "terraform" / "override.tf").write_text("# mine\n")
    (out / "ansible" / "hosts.yml").write_text("all: {hosts: {real-host: {}}}\n")  # fuzz25 M7: as hosts.yml.example says
    mine = ("keep", "terraform/override", "ansible/hosts.yml")
    foreign = {**foreign, **{rel: e for rel, e in snapshot(out).items() if rel.startswith(mine)}}
    planted = [
        "keep/state.tfstate",
        "terraform/terraform.tfstate",
        "terraform/.terraform/current",
        "terraform/override.tf",
        "ansible/hosts.yml",
    ]
    with (out / ".specgen-manifest").open("a") as fh:
        fh.write("".join(f"{rel}\n" for rel in planted))
    result = run_specgen("render", "w.yaml", "-o", "infra", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    after = snapshot(out)
    assert {rel: after.get(rel) for rel in foreign} == foreign
    assert not set(planted) & set(writer.read_manifest(str(out)) or [])


def test_every_rendered_file_is_a_kind_a_manifest_may_name() -> None:
    """specgen renders no name a manifest cannot give it (writer.specgen_writes): each file it writes it owns later."""
    trees = [tree for tree in (REPO / "tests" / "golden").iterdir() if tree.name != "errors"]
    rendered = [p.relative_to(tree).as_posix() for tree in trees for p in tree.rglob("*") if p.is_file()]
    assert len(rendered) > 200
    assert [rel for rel in rendered if not writer.specgen_writes(rel)] == []


@pytest.mark.parametrize(
    ("workload", "args"),
    [
        pytest.param(VALID, (), id="re-render"),
        pytest.param(VALID.replace("requests_per_second: 2", "requests_per_second: 40"), (), id="changed-workload"),
        pytest.param(TWO_POOLS, (), id="pool-added"),
        pytest.param(VALID, ("--target", "terraform"), id="target-terraform"),
        pytest.param(VALID, ("--target", "ansible"), id="target-ansible"),
    ],
)
def test_foreign_files_survive_a_re_render_and_check_ignores_them(tmp_path: Path, workload: str, args: tuple[str, ...]) -> None:
    (tmp_path / "w.yaml").write_text(VALID)
    out = tmp_path / "infra"
    assert run_specgen("render", "w.yaml", "-o", "infra", cwd=tmp_path).returncode == 0
    foreign = add_foreign(out)
    state_inode = (out / "terraform" / "terraform.tfstate").stat().st_ino
    check = run_specgen("render", "w.yaml", "-o", "infra", "--check", cwd=tmp_path)
    assert check.returncode == 0, check.stderr  # terraform state, a binary and a broken symlink are not compared
    (tmp_path / "w.yaml").write_text(workload)
    result = run_specgen("render", "w.yaml", "-o", "infra", *args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    after = snapshot(out)
    assert {rel: after.get(rel) for rel in foreign} == foreign  # byte-identical, links still links
    assert (out / "terraform" / "terraform.tfstate").stat().st_ino == state_inode  # hard-linked, not copied
    owned = writer.read_manifest(str(out)) or []
    assert ".specgen-manifest" in owned and not set(owned) & set(foreign)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".specgen")] == []
    again = run_specgen("render", "w.yaml", "-o", "infra", *args, "--check", cwd=tmp_path)
    assert again.returncode == 0, again.stderr


NON_SPECGEN = [
    pytest.param({"w.yaml": VALID, "notes/todo.txt": "mine\n"}, ".", id="dot-with-workload"),
    pytest.param({"w.yaml": VALID, "infra/main.tf": "# hand-written\n"}, "infra", id="hand-written-infra"),
    pytest.param({"w.yaml": VALID, "infra/.hidden": "x"}, "infra", id="only-a-hidden-file"),
    pytest.param({"w.yaml": VALID, "infra/sub/.keep": ""}, "infra", id="nested"),
]


@pytest.mark.parametrize("args", [(), ("--target", "terraform")], ids=["all", "target"])
@pytest.mark.parametrize(("layout", "output"), NON_SPECGEN)
def test_writing_into_a_directory_specgen_did_not_write_is_refused(
    tmp_path: Path, layout: dict[str, str], output: str, args: tuple[str, ...]
) -> None:
    for rel, text in layout.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    before = snapshot(tmp_path)
    result = run_specgen("render", "w.yaml", "-o", output, *args, cwd=tmp_path)
    assert result.returncode == 1
    assert (
        f"specgen: error: refusing to write into {output}: it holds files specgen did not write (no .specgen-manifest); "
        "choose a new or empty directory" in result.stderr
    )
    assert "Traceback" not in result.stderr
    assert snapshot(tmp_path) == before  # nothing deleted, nothing added


def test_a_directory_specgen_did_not_write_is_refused_before_it_is_walked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fuzz9 item 13: ``render -o /`` walked the whole file system and failed on /proc ("Permission denied")."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "mine.txt").write_text("x")

    def walked(root: str) -> dict[str, str]:
        raise AssertionError(f"walked {root}")

    monkeypatch.setattr(writer, "_scan", walked)
    with pytest.raises(OutputError, match=r"refusing to write into .*: it holds files specgen did not write"):
        writer.write_tree({"spec.json": "{}\n"}, str(tmp_path))


def test_check_shows_a_tampered_files_control_characters_as_escapes(tmp_path: Path) -> None:
    """fuzz9 item 13: bytes written into spec.json reached the terminal raw (an escape sequence runs there)."""
    (tmp_path / "w.yaml").write_text(VALID)
    out = tmp_path / "infra"
    assert run_specgen("render", "w.yaml", "-o", str(out), cwd=tmp_path).returncode == 0
    with open(out / "spec.json", "ab") as fh:
        fh.write(b"\x1b[2J\x07tampered\r\n")
    result = run_specgen("render", "w.yaml", "-o", str(out), "--check", cwd=tmp_path)
    assert result.returncode == 4
    assert "-\\x1b[2J\\x07tampered\\r\n" in result.stdout
    assert not any(ch in result.stdout for ch in "\x1b\x07\r")


def test_messages_say_what_is_in_the_way(tmp_path: Path) -> None:
    """fuzz10 item 12: a directory where spec.json goes was called a file specgen did not write; one file given twice
    was called two files sharing a name."""
    (tmp_path / "w.yaml").write_text(VALID)
    assert run_specgen("render", "w.yaml", "-o", "infra", cwd=tmp_path).returncode == 0
    (tmp_path / "infra" / "spec.json").unlink()
    (tmp_path / "infra" / "spec.json").mkdir()
    result = run_specgen("render", "w.yaml", "-o", "infra", cwd=tmp_path)
    assert result.returncode == 1
    assert "refusing to overwrite infra/spec.json: it is a directory, where specgen writes a file" in result.stderr
    twice = run_specgen("render", "w.yaml", "./w.yaml", "-o", "other", cwd=tmp_path)
    assert twice.returncode == 1
    assert "./w.yaml and w.yaml are the same file; give each workload once" in twice.stderr
    os.link(tmp_path / "w.yaml", tmp_path / "linked.yaml")  # fuzz11 item 13: a hard link is the same file too
    linked = run_specgen("render", "w.yaml", "linked.yaml", "-o", "other", cwd=tmp_path)
    assert "linked.yaml and w.yaml are the same file" in linked.stderr


def test_an_empty_directory_is_fine_to_render_into(tmp_path: Path) -> None:
    (tmp_path / "w.yaml").write_text(VALID)
    (tmp_path / "infra").mkdir()
    assert run_specgen("render", "w.yaml", "-o", "infra", cwd=tmp_path).returncode == 0
    assert (tmp_path / "infra" / "spec.json").is_file()


@pytest.mark.parametrize(
    ("target", "gone"),
    [
        pytest.param((), [EMBED_VARS, "kubeadm/join-embed_l40s_48gb.yaml"], id="all"),
    ],
)
def test_a_removed_pool_removes_its_files(tmp_path: Path, target: tuple[str, ...], gone: list[str]) -> None:
    (tmp_path / "w.yaml").write_text(TWO_POOLS)
    out = tmp_path / "infra"
    assert run_specgen("render", "w.yaml", "-o", "infra", cwd=tmp_path).returncode == 0
    assert all((out / rel).is_file() for rel in gone)
    (tmp_path / "w.yaml").write_text(VALID)
    assert run_specgen("render", "w.yaml", "-o", "infra", *target, cwd=tmp_path).returncode == 0
    manifest = writer.read_manifest(str(out)) or []
    for rel in gone:
        assert not (out / rel).exists() and rel not in manifest
    assert (out / "ansible" / "group_vars" / "chat_l40s_48gb.yml").is_file()


def test_target_refuses_a_tree_of_another_plan_and_writes_nothing(tmp_path: Path) -> None:
    """newuser31 item 5: a --target render of a changed plan left the other outputs of the old plan beside the new
    one's (Terraform's node groups of the new plan, Kubernetes node pools of the old)."""
    (tmp_path / "w.yaml").write_text(TWO_POOLS)
    assert run_specgen("render", "w.yaml", "-o", "infra", cwd=tmp_path).returncode == 0
    before = snapshot(tmp_path)
    (tmp_path / "w.yaml").write_text(VALID)
    result = run_specgen("render", "w.yaml", "-o", "infra", "--target", "ansible", cwd=tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().endswith(
        "infra: --target ansible: spec.json in the tree is another plan's, and the outputs not asked for (spec, "
        "markdown, terraform, kubernetes) would stay that plan's beside this one's; render every output (without "
        "--target), or into another directory; nothing was written"
    )
    assert {rel: e for rel, e in snapshot(tmp_path).items() if rel != "w.yaml"} == {
        rel: e for rel, e in before.items() if rel != "w.yaml"
    }


# kubernetes: this plan renders none, and a target that renders nothing is refused (test_fuzz31_tree)
@pytest.mark.parametrize("target", ["spec", "markdown", "terraform", "ansible"])
def test_target_keeps_other_owned_files_and_foreign_binaries(tmp_path: Path, target: str) -> None:
    (tmp_path / "w.yaml").write_text(VALID)
    out = tmp_path / "infra"
    run_specgen("render", "w.yaml", "-o", "infra", cwd=tmp_path)
    manifest_before = (out / ".specgen-manifest").read_text()
    (out / "model.bin").write_bytes(BINARY)
    (out / "terraform" / "plan.bin").write_bytes(BINARY)
    # spec.json names the plan the tree is of: edited, the tree would be another plan's (refused above)
    edited = {
        rel: f"edited {rel}\n" for rel in writer.read_manifest(str(out)) or [] if rel not in (".specgen-manifest", "spec.json")
    }
    for rel, text in edited.items():
        (out / rel).write_text(text)
    assert run_specgen("render", "w.yaml", "-o", "infra", "--target", target, cwd=tmp_path).returncode == 0
    prefix = {"spec": ("spec.json",), "markdown": ("SPEC.md",), "kubernetes": ("kubernetes/", "kubeadm/", "cluster/")}.get(
        target, (target + "/",)
    )
    for rel, text in edited.items():
        assert ((out / rel).read_text() == text) != rel.startswith(prefix), rel
    assert (out / "model.bin").read_bytes() == BINARY and (out / "terraform" / "plan.bin").read_bytes() == BINARY
    assert (out / ".specgen-manifest").read_text() == manifest_before


def test_a_foreign_file_where_a_new_file_goes_is_not_overwritten(tmp_path: Path) -> None:
    (tmp_path / "w.yaml").write_text(VALID)
    out = tmp_path / "infra"
    run_specgen("render", "w.yaml", "-o", "infra", cwd=tmp_path)
    (out / EMBED_VARS).write_text("mine\n")
    before = snapshot(tmp_path)
    (tmp_path / "w.yaml").write_text(TWO_POOLS)
    result = run_specgen("render", "w.yaml", "-o", "infra", cwd=tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"refusing to overwrite infra/{EMBED_VARS}: specgen did not write it" in result.stderr
    assert {rel: entry for rel, entry in snapshot(tmp_path).items() if rel != "w.yaml"} == {
        rel: entry for rel, entry in before.items() if rel != "w.yaml"
    }


@pytest.mark.parametrize(
    ("failing_calls", "message", "restored"),
    [
        pytest.param({1}, "the previous output is unchanged", True, id="first-rename"),
        pytest.param({2}, "the previous output is unchanged", True, id="second-rename"),
        pytest.param({2, 3}, "the previous output could not be put back and is in ", False, id="restore-fails"),
    ],
)
def test_a_failed_swap_restores_the_previous_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing_calls: set[int], message: str, restored: bool
) -> None:
    target = tmp_path / "infra"
    writer.write_tree({"a.txt": "old\n", "d/b.txt": "old b\n"}, str(target))
    (target / "terraform.tfstate").write_bytes(BINARY)
    before = snapshot(target)
    calls = {"n": 0}
    real_rename = os.rename

    def failing_rename(src: Any, dst: Any) -> None:
        calls["n"] += 1
        if calls["n"] in failing_calls:
            raise OSError(errno.EIO, "Input/output error")
        real_rename(src, dst)

    def no_exchange(a: str, b: str) -> None:
        raise ExchangeUnsupportedError("the two-rename swap is tested here")

    monkeypatch.setattr(os, "rename", failing_rename)
    monkeypatch.setattr(writer, "exchange", no_exchange)
    with pytest.raises(OutputError, match="Input/output error") as info:
        writer.write_tree({"a.txt": "new\n", "c.txt": "new c\n"}, str(target))
    monkeypatch.undo()
    assert message in str(info.value)
    if restored:
        assert snapshot(target) == before
        assert [p.name for p in tmp_path.iterdir()] == ["infra"]  # no staging or retired tree left behind
    else:
        stranded = Path(str(info.value).rsplit(" is in ", 1)[1])
        assert not target.exists() and snapshot(stranded) == before
        writer.write_tree({"a.txt": "new\n"}, str(target))  # the next render puts it back first
        assert (target / "terraform.tfstate").read_bytes() == BINARY
        assert [p.name for p in tmp_path.iterdir()] == ["infra"]


@pytest.mark.parametrize(
    "files",
    [
        pytest.param({"b.txt": "b\n", "a/z.txt": "z\n", "a.txt": "a\n", "A.txt": "A\n"}, id="mixed"),
        pytest.param({"x/y/z.txt": "1\n", "x/a.txt": "2\n", "x-y.txt": "3\n", "x.txt": "4\n"}, id="nested"),
        pytest.param({}, id="empty"),
    ],
)
def test_manifest_is_sorted_and_deterministic(tmp_path: Path, files: dict[str, str]) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    writer.write_tree(files, str(first))
    writer.write_tree(dict(reversed(list(files.items()))), str(second))
    text = (first / ".specgen-manifest").read_bytes()
    assert text == (second / ".specgen-manifest").read_bytes()
    assert text.decode().endswith("\n") and text.decode().split("\n")[:-1] == sorted([*files, ".specgen-manifest"])
    writer.write_tree(files, str(first))  # a re-render writes the same bytes
    assert (first / ".specgen-manifest").read_bytes() == text
    assert writer.read_tree(str(first)) == writer.with_manifest(files)


def test_rendered_manifest_lists_exactly_the_rendered_files(tmp_path: Path) -> None:
    (tmp_path / "w.yaml").write_text(TWO_POOLS)
    run_specgen("render", "w.yaml", "-o", "infra", cwd=tmp_path)
    on_disk = sorted(rel for rel, (kind, _) in snapshot(tmp_path / "infra").items() if kind == "file")
    assert (tmp_path / "infra" / ".specgen-manifest").read_text().splitlines() == on_disk
