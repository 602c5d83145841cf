"""newuser53 (a GitOps platform engineer: ``render --check``, ``diff --base`` comments, ``--gitlab-report``).

Each test names the item of the finding it holds to. Diffs against a base build a git repository under ``tmp_path``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.helpers import VALID, run_specgen
from tests.helpers import specgen_in_process as specgen
from tests.test_diff_base_set import _commit, _git

CHAT = REPO / "examples" / "chat-70b.yaml"
RAG = REPO / "examples" / "rag-embed.yaml"


def _named(name: str, deployment: str) -> str:
    """VALID as workload ``name`` whose deployment is ``deployment`` (one tree needs a pool name each)."""
    return VALID.replace("name: demo", f"name: {name}").replace("- name: chat", f"- name: {deployment}")


# ---------------------------------------------------------------- item 1


def test_a_current_check_leaves_stdout_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Item 1: ``render --check > drift.patch`` wrote "rendered output is current" into the patch; ``test -s`` fired."""
    files = [tmp_path / "a.yaml", tmp_path / "b.yaml"]
    files[0].write_text(_named("a", "chat-a"))
    files[1].write_text(_named("b", "chat-b"))
    out_dir = str(tmp_path / "infra")
    assert specgen(capsys, "render", *map(str, files), "-o", out_dir)[0] == 0
    code, out, err = specgen(capsys, "render", *map(str, files), "-o", out_dir, "--check")
    assert (code, out) == (0, "")
    assert err.splitlines()[-1] == "specgen: rendered output is current"
    files[1].write_text(_named("b", "chat-b").replace("requests_per_second: 2", "requests_per_second: 3"))
    code, out, err = specgen(capsys, "render", *map(str, files), "-o", out_dir, "--check")
    assert code == 4 and out.startswith("--- a/b/") and err.splitlines()[-1].startswith("specgen: rendered output is stale")


# ---------------------------------------------------------------- item 2


@pytest.fixture(scope="module")
def cluster_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository holding the chat and RAG examples, rendered together into ``infra/`` and committed."""
    repo = tmp_path_factory.mktemp("cluster")
    _commit(repo, {"workloads/chat-70b.yaml": CHAT.read_text(), "workloads/rag-embed.yaml": RAG.read_text()})
    done = run_specgen("render", "workloads/chat-70b.yaml", "workloads/rag-embed.yaml", "-o", "infra", cwd=repo)
    assert done.returncode == 0, done.stderr
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "infra")
    return repo


def _copy_repo(repo: Path, tmp_path: Path) -> Path:
    _git(tmp_path, "clone", "-q", str(repo), "work")
    return tmp_path / "work"


def test_a_trees_spec_json_against_its_file_matches_the_rack_by_its_place(
    cluster_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 2a: the committed ``support-chat-rack-01`` against the file alone (``rack-01``) read as one rack emptied and
    another filled: "de-racked, re-cabled and re-powered"."""
    monkeypatch.chdir(cluster_repo)
    code, out, err = specgen(capsys, "diff", "infra/support-chat/spec.json", "workloads/chat-70b.yaml", "--format", "json")
    assert code == 0, err
    assert "racks" not in json.loads(out)  # the same servers in the same rack
    work = tmp_path / "chat.yaml"
    work.write_text(CHAT.read_text().replace("requests_per_second: 12", "requests_per_second: 30"))
    code, out, err = specgen(capsys, "diff", "infra/support-chat/spec.json", str(work), "--format", "json")
    assert code == 0, err
    (rack,) = json.loads(out)["racks"]
    assert (rack["rack"], rack["old_rack"]) == ("rack-01", "support-chat-rack-01")
    # fix74: the committed chat-70b is one 8 x H200 server (4 x TP2, 4 x 73 = 292 places at 82% busy at 12 req/s, 0.1%
    # wait), no longer one DGX H100 (2 x TP4: 244 places, a request 20.08 s, 98.7% busy, p95 wait 18.1 s); at 30 req/s
    # it is three DGX H100 as before. The rack is still matched by its place, whatever its servers are
    assert (rack["old"]["pools"], rack["new"]["pools"]) == ({"chat_h200_sxm_141gb": 1}, {"chat_h100_sxm5_80gb": 3})
    code, out, _ = specgen(capsys, "diff", "infra/support-chat/spec.json", str(work))
    assert "| `rack-01` (was `support-chat-rack-01`) | 1 x `chat_h200_sxm_141gb` (10.2 kW) | 3 x" in out
    assert "| - |" not in out


def test_a_workload_renamed_in_its_file_is_said_renamed_not_re_racked(
    cluster_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 2b: ``name: rag`` -> ``rag-two`` read "1 workload file(s) change the fleet" with its rack de-racked and a
    ``rag-two-rack-01`` re-cabled; the rename, which moves its tree and Terraform module, was said nowhere."""
    work = _copy_repo(cluster_repo, tmp_path)
    rag = work / "workloads" / "rag-embed.yaml"
    rag.write_text(rag.read_text().replace("\nname: rag\n", "\nname: rag-two\n"))
    monkeypatch.chdir(work)
    files = ["workloads/chat-70b.yaml", "workloads/rag-embed.yaml"]
    code, out, err = specgen(capsys, "diff", "--base", "HEAD", *files, "--format", "json")
    assert code == 0, err
    entry = json.loads(out)["files"][1]
    assert (entry["status"], entry["workload_renamed"]) == ("renamed", {"old": "rag", "new": "rag-two"})
    assert "racks" not in entry["diff"]
    code, out, _ = specgen(capsys, "diff", "--base", "HEAD", *files)
    assert "0 workload file(s) change the fleet; 2 unchanged." in out and "de-racked" not in out
    assert "Workload renamed in `workloads/rag-embed.yaml`: `rag` → `rag-two`; its tree is `rag-two/` in place of `rag/`" in out
    assert "`terraform state mv module.rag module.rag-two`" in out
    code, out, _ = specgen(capsys, "diff", "--base", "HEAD", "workloads/rag-embed.yaml")  # a flat tree stays in place
    assert "Workload renamed in `workloads/rag-embed.yaml`: `rag` → `rag-two`; its tree's files" in out
    assert "module." not in out


# ---------------------------------------------------------------- item 3


def test_check_says_a_tree_moved_to_the_root_and_the_prune_a_removal_needs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 3 case 1: one of two workload files deleted; --check read both trees "removed or renamed" and advised a
    ``specgen render`` that fails without --prune, where the render moves ``a`` to the root."""
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(_named("a", "chat-a"))
    b.write_text(_named("b", "chat-b"))
    out_dir = str(tmp_path / "infra")
    assert specgen(capsys, "render", str(a), str(b), "-o", out_dir)[0] == 0
    code, out, err = specgen(capsys, "render", str(a), "-o", out_dir, "--check")
    assert code == 4
    assert out.split("specgen: workload trees under the output root:\n")[1].splitlines()[:2] == [
        "  a: moved to the output's root (one file renders a flat tree)",
        "  b: removed or renamed (no workload file renders it any more; render removes it with --prune)",
    ]
    assert err.splitlines()[-1] == (  # fix146 item 1: the entries that drift and the command, -o and --prune with it
        f"specgen: rendered output is stale in {out_dir} (SPEC.md, a/, ansible/, b/, cluster/, spec.json and 1 more); "
        f"run `specgen render {a} -o {out_dir} --prune` (it removes the trees of workloads no file renders) and commit "
        "the result"
    )
    code, _, err = specgen(capsys, "render", str(a), "-o", out_dir, "--prune")
    assert code == 0 and f"moved the tree of workload 'a' from {out_dir}/a to {out_dir}" in err
    assert f"removed the tree of workload 'b' ({out_dir}/b)" in err


def test_check_says_a_flat_tree_moved_into_a_tree_of_its_own(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Item 3 case 2: a second file added to a flat tree; --check read the live workload "missing (not rendered yet)"."""
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(_named("a", "chat-a"))
    b.write_text(_named("b", "chat-b"))
    out_dir = str(tmp_path / "flat")
    assert specgen(capsys, "render", str(a), "-o", out_dir)[0] == 0
    code, out, err = specgen(capsys, "render", str(a), str(b), "-o", out_dir, "--check")
    assert code == 4
    assert out.split("specgen: workload trees under the output root:\n")[1].splitlines()[:2] == [
        "  a: moved from the output's root to a/ (several files render a tree of each workload)",
        "  b: missing (not rendered yet)",
    ]
    assert err.splitlines()[-1] == (
        f"specgen: rendered output is stale in {out_dir} (SPEC.md, a/, ansible/, b/, cluster/, spec.json and 1 more); "
        f"run `specgen render {a} {b} -o {out_dir}` and commit the result"
    )
    code, _, err = specgen(capsys, "render", str(a), str(b), "-o", out_dir)
    assert code == 0 and f"moved the tree of workload 'a' from {out_dir} to {out_dir}/a" in err


# ---------------------------------------------------------------- item 7

#: A workload whose line 7 starts with a tab: a YAML syntax error at 7:1.
TABBED = VALID.replace("      max_context_tokens: 8192", "\tmax_context_tokens: 8192")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_file_name_holding_line_and_column_does_not_move_the_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, jobs: str
) -> None:
    """Item 7: ``x:9:9: y.yaml`` put the annotation and the blocker on file ``x``, line 9; a pull request could aim one at
    ``README.md:1:1``. The place is the error's location, carried back from the worker processes too."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    Path("README.md:1:1: x.yaml").write_text(TABBED)
    Path("ok.yaml").write_text(_named("ok", "chat-ok"))
    files = ["README.md:1:1: x.yaml", "ok.yaml"]
    code, _, err = specgen(capsys, "render", *files, "-o", "out", "--jobs", jobs, "--gitlab-report", "gl.json")
    assert code == 1
    (annotation,) = [line for line in err.splitlines() if line.startswith("::error")]
    assert annotation.startswith("::error file=README.md%3A1%3A1%3A x.yaml,line=7,col=1,title=specgen::YAML syntax error")
    (blocker,) = [i for i in json.loads(Path("gl.json").read_text()) if i["severity"] == "blocker"]
    assert blocker["location"] == {"lines": {"begin": 7}, "path": "README.md:1:1: x.yaml"}
    assert blocker["description"].startswith("YAML syntax error")


def test_a_diff_error_is_placed_at_the_file_given_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 7: ``diff --base``'s errors come back as text from the comment's report: placed only at a file given whose
    whole name begins them, the longest first (``x`` is given too, and is not where the error is)."""
    _commit(tmp_path, {"x": _named("x", "chat-x"), "x:9:9: y.yaml": _named("y", "chat-y")})
    Path(tmp_path / "x:9:9: y.yaml").write_text(TABBED)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    code, _, err = specgen(capsys, "diff", "--base", "HEAD", "x", "x:9:9: y.yaml")
    assert code == 1
    (annotation,) = [line for line in err.splitlines() if line.startswith("::error")]
    assert annotation.startswith("::error file=x%3A9%3A9%3A y.yaml,line=7,col=1,title=specgen::YAML syntax error")


# ---------------------------------------------------------------- item 5


@pytest.mark.parametrize("jobs", ["1", "3"])
def test_render_reports_every_bad_file_and_exits_as_the_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, jobs: str
) -> None:
    """Item 5: w2 (bf17) and w5 (a context past the model's) are bad: render said w2 alone, in stderr and in the
    report, and CI learnt of w5 a push later. The first bad file in path order gives the exit code (w2: 3, infeasible)."""
    monkeypatch.chdir(tmp_path)
    for i in range(1, 7):
        Path(f"w{i}.yaml").write_text(_named(f"w{i}", f"chat{i}"))
    Path("w2.yaml").write_text(_named("w2", "chat2").replace("gpus: [l40s-48gb]", "gpus: [l40s-48gb]\n  max_nodes: 1")
                               .replace("requests_per_second: 2", "requests_per_second: 2000"))  # fmt: skip
    Path("w5.yaml").write_text(_named("w5", "chat5").replace("8192", "9999999"))
    files = [f"w{i}.yaml" for i in (6, 5, 4, 3, 2, 1)]
    code, _, err = specgen(capsys, "render", *files, "-o", "out", "--jobs", jobs, "--gitlab-report", "gl.json")
    assert code == 3 and not Path("out").exists()
    errors = [line for line in err.splitlines() if line.startswith("specgen: error: ")]
    assert [line.split(":")[2].strip() for line in errors] == ["w2.yaml", "w5.yaml"]
    assert "hardware.max_nodes" in errors[0] and "max_context_tokens 9,999,999" in errors[1]
    blockers = [i for i in json.loads(Path("gl.json").read_text()) if i["severity"] == "blocker"]
    assert [(b["location"]["path"], b["location"]["lines"]["begin"]) for b in blockers] == [("w2.yaml", 11), ("w5.yaml", 7)]
    assert len({b["fingerprint"] for b in blockers}) == 2


# ---------------------------------------------------------------- item 4


def _fingerprints(report: Path) -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = {}
    for issue in json.loads(report.read_text()):
        out.setdefault((issue["check_name"], issue["location"]["path"]), []).append(issue["fingerprint"])
    return out


def test_a_findings_fingerprint_does_not_change_with_its_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 4: rps 12 -> 30 changed capex-excludes' "$270,000 ... 1 server(s)" to "$810,000 ... 3" and its fingerprint
    (7965aea7 -> a3f98398): GitLab listed the finding as resolved and as new on every MR that changed a number."""
    monkeypatch.chdir(tmp_path)
    Path("chat.yaml").write_text(CHAT.read_text())
    assert specgen(capsys, "render", "chat.yaml", "-o", "out", "--gitlab-report", "before.json")[0] == 0
    Path("chat.yaml").write_text(CHAT.read_text().replace("requests_per_second: 12", "requests_per_second: 30"))
    assert specgen(capsys, "render", "chat.yaml", "-o", "out", "--gitlab-report", "after.json")[0] == 0
    before, after = _fingerprints(Path("before.json")), _fingerprints(Path("after.json"))
    for code in ("specgen/capex-excludes", "specgen/colocation-per-kw-drawn"):
        assert before[(code, "chat.yaml")] == after[(code, "chat.yaml")]
    messages = {i["check_name"]: i["description"] for i in json.loads(Path("after.json").read_text())}
    assert "$810,000" in messages["specgen/capex-excludes"]  # the figures are in the text, not in the fingerprint


def test_a_fingerprint_names_the_deployment_not_its_line_or_index(tmp_path: Path) -> None:
    """Item 4: a deployment added above another moves its findings' lines and list index; the finding is the same."""
    from generator.findings import finding_fields, gitlab_report, locate_findings
    from generator.planner.plan import Finding
    from generator.workload import load_workload

    one = tmp_path / "one.yaml"
    one.write_text(VALID)
    two = tmp_path / "two.yaml"
    first = (
        "  - name: first\n    model: meta-llama/Llama-3.1-8B-Instruct\n"
        "    inference: {max_context_tokens: 8192, requests_per_second: 1}\n"
    )
    two.write_text(VALID.replace("deployments:\n", "deployments:\n" + first))
    reports = []
    for path, index in ((one, 0), (two, 1)):
        loaded = load_workload(str(path))
        said = [
            Finding("warning", "slow-decode", f"{index + 7} tokens/s", f"deployments[{index}].inference"),
            Finding("warning", "slow-decode", "again", f"deployments[{index}].inference"),
        ]
        assert finding_fields(loaded, said) == ("deployments[=chat].inference",) * 2
        # the one file, as changed: its line as each version has it
        located = [(level, code, message, "w.yaml:" + where.split(":")[-2] + ":1")
                   for level, code, message, where in locate_findings(loaded, said)]  # fmt: skip
        reports.append(json.loads(gitlab_report(located, finding_fields(loaded, said))))
    assert [i["location"]["lines"]["begin"] for r in reports for i in r] == [7, 7, 10, 10]
    prints = [[issue["fingerprint"] for issue in report] for report in reports]
    assert prints[0] == prints[1] and len(set(prints[0])) == 2  # one code at one field twice: told apart by order


# ---------------------------------------------------------------- item 6


@pytest.mark.parametrize("name", ["cluster", "terraform"])
@pytest.mark.parametrize("command", ["render", "validate"])
def test_a_workload_named_as_a_shared_directory_is_told_so_at_its_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, name: str, command: str
) -> None:
    """Item 6: ``name: cluster`` beside another file read "two workload files are both named 'cluster'", at no file."""
    monkeypatch.chdir(tmp_path)
    Path("c1.yaml").write_text(_named(name, "chat-c"))
    Path("base.yaml").write_text(_named("small", "chat-small"))
    args = (
        ["render", "c1.yaml", "base.yaml", "-o", "out"]
        if command == "render"
        else ["validate", "--together", "c1.yaml", "base.yaml"]
    )
    code, _, err = specgen(capsys, *args)
    assert code == 1
    assert f"specgen: error: c1.yaml:2:7: name: '{name}' is the name of a directory a tree of several workloads holds" in err
    assert "both named" not in err


# ---------------------------------------------------------------- item 8


def test_the_comment_names_files_by_their_repository_path_however_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 8: ``mixed.yaml``, ``./mixed.yaml`` and ``/tmp/.../mixed.yaml`` gave three comments; a job passing
    ``$CI_PROJECT_DIR/workloads/*.yaml`` put ``/builds/<group>/<project>/`` into the note. Errors quoted alike."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _commit(repo, {"w/a.yaml": _named("a", "chat-a"), "w/b.yaml": _named("b", "chat-b"), "w/c.yaml": _named("c", "chat-c")})
    (repo / "w" / "a.yaml").write_text(_named("a", "chat-a").replace("requests_per_second: 2", "requests_per_second: 30"))
    (repo / "w" / "b.yaml").write_text(TABBED.replace("name: demo", "name: b"))
    _git(repo, "rm", "-q", "w/c.yaml")
    spellings = [
        (repo, ("w/a.yaml", "w/b.yaml")),
        (repo, ("./w/a.yaml", "./w//b.yaml")),
        (repo / "w", ("a.yaml", "b.yaml")),
        (tmp_path, (str(repo / "w" / "a.yaml"), str(repo / "w" / "b.yaml"))),
    ]
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    comments = set()
    for cwd, files in spellings:
        monkeypatch.chdir(cwd)
        code, out, err = specgen(capsys, "diff", "--base", "HEAD", *files)
        assert code == 1
        comments.add(out)
        assert "::error file=w/b.yaml,line=7,col=1,title=specgen::YAML syntax error" in err
    (comment,) = comments
    assert "### `w/a.yaml` (changed)" in comment and "### `w/b.yaml` (invalid)" in comment
    assert "- w/b.yaml:7:1: YAML syntax error" in comment and "**Not compared: `w/c.yaml` was a workload" in comment
    assert str(tmp_path) not in comment


# ---------------------------------------------------------------- item 9


def test_check_names_what_an_interrupted_render_left_beside_the_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 9: a render killed while staging left ``.specgen-<hash>-new-XXXX`` (a partial tree) in the repository's root,
    which a bot's ``git add -A`` commits; --check said nothing of it."""
    from generator.swap import work_prefix

    monkeypatch.chdir(tmp_path)
    Path("w.yaml").write_text(VALID)
    assert specgen(capsys, "render", "w.yaml", "-o", "out")[0] == 0
    leftover = Path(work_prefix(str(tmp_path / "out"), "new") + "bz3ga2wa")
    (leftover / "terraform").mkdir(parents=True)
    (leftover / "terraform" / "main.tf").write_text("partial\n")
    code, out, err = specgen(capsys, "render", "w.yaml", "-o", "out", "--check")
    assert (code, out) == (0, "")
    assert err.splitlines()[-2:] == [
        f"specgen: {leftover} was left by an interrupted render (not part of the output; the next render recovers or "
        "removes it): do not commit it",
        "specgen: rendered output is current",
    ]
    code, _, err = specgen(capsys, "render", "w.yaml", "-o", "out")
    assert code == 0 and not leftover.exists() and f"removed {tmp_path / leftover}, left by an interrupted render" in err


# ---------------------------------------------------------------- item 10


def test_target_names_the_outputs_it_leaves_not_the_workload_trees(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Item 10: "the outputs not asked for (cluster, w1, w3)" named workload trees and a directory, not outputs."""
    files = [tmp_path / "w1.yaml", tmp_path / "w3.yaml"]
    files[0].write_text(_named("w1", "chat-w1"))
    files[1].write_text(_named("w3", "chat-w3"))
    out_dir = str(tmp_path / "out")
    assert specgen(capsys, "render", *map(str, files), "-o", out_dir)[0] == 0
    files[0].write_text(_named("w1", "chat-w1").replace("requests_per_second: 2", "requests_per_second: 20"))
    code, _, err = specgen(capsys, "render", *map(str, files), "-o", out_dir, "--target", "terraform")
    assert code == 1
    assert (
        "w1/spec.json in the tree is another plan's, and the outputs not asked for (spec, markdown, ansible, kubernetes) " in err
    )


def test_a_boolean_version_is_said_as_the_file_writes_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Item 10: ``version: true`` read "must be 1, got True", Python's spelling of the file's ``true``."""
    path = tmp_path / "w.yaml"
    path.write_text(VALID.replace("version: 1", "version: true"))
    code, _, err = specgen(capsys, "validate", str(path))
    assert code == 1 and f"{path}:1:10: version: must be 1, got true\n" in err


def test_render_says_what_it_wrote_beside_the_workload_trees(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Item 10: the shared cluster/, terraform/main.tf and the root manifest were written without a word."""
    files = [tmp_path / "a.yaml", tmp_path / "b.yaml"]
    files[0].write_text(_named("a", "chat-a"))
    files[1].write_text(_named("b", "chat-b"))
    out_dir = tmp_path / "out"
    code, out, _ = specgen(capsys, "render", *map(str, files), "-o", str(out_dir))
    assert code == 0
    said = out.splitlines()[-1]
    outside = [p for p in out_dir.rglob("*") if p.is_file() and p.relative_to(out_dir).parts[0] not in ("a", "b")]
    shared = "the workloads' shared cluster/ and terraform/, and the tree's .specgen-manifest"
    assert said == f"wrote {len(outside)} files to {out_dir} ({shared})"
