"""Output paths through symlinks (review 1, items 1 and 7): a pull request's symlink is refused wherever it is.

One machine in ``tmp`` stands for every layout a CI job or a user meets::

    tmp/link -> private          a system link, as macOS /tmp -> /private/tmp
    tmp/private/A/               `git init`: the workspace (the working directory of most cases)
    tmp/private/A/planted -> tmp/elsewhere
    tmp/private/B/               `git init`: a pull request's checkout elsewhere (the reviewer's repro)
    tmp/private/B/out -> tmp/elsewhere
    tmp/private/W/.git           a file (a linked work tree or submodule); W/planted -> tmp/elsewhere
    tmp/private/T/w.yaml         a checkout without .git (a tarball) holding the workload; T/planted -> tmp/elsewhere
    tmp/private/home/            the user's own directory, no repository
    tmp/private/home/mine -> tmp/private/data   the user's own link
    tmp/private/home/hop -> tmp/private/B/out   the user's link that runs through a planted one

``tmp/elsewhere`` must stay empty whatever happens.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from generator import writer
from generator.calculator.block_file import CALIBRATE_HEADER, CALIBRATE_NO_FIT_HEADER, CALIBRATE_NONE_HEADER, DETECT_HEADER
from generator.cli import main
from generator.errors import OutputError
from tests.helpers import VALID

NEW = {"a.txt": "new a\n", "e/f.txt": "new f\n"}
ADVICE = "a pull request could have committed it); give the real path if that is where the output belongs"


@pytest.fixture
def machine(tmp_path: Path) -> Path:
    tmp = tmp_path.resolve()
    private = tmp / "private"
    for name in ("A", "B", "W", "T", "home", "data", "A/deploy"):
        (private / name).mkdir(parents=True)
    (tmp / "elsewhere").mkdir()
    for checkout in ("A", "B"):
        subprocess.run(["git", "init", "-q", str(private / checkout)], check=True, capture_output=True)
    (private / "W" / ".git").write_text("gitdir: /somewhere/.git/worktrees/W\n")
    (private / "T" / "w.yaml").write_text(VALID)
    os.symlink(private, tmp / "link")
    for planted in ("A/planted", "B/out", "W/planted", "T/planted"):
        os.symlink(tmp / "elsewhere", private / planted)
    os.symlink(private / "data", private / "home" / "mine")
    os.symlink(private / "B" / "out", private / "home" / "hop")
    return tmp


def _untouched(tmp: Path) -> None:
    assert list((tmp / "elsewhere").iterdir()) == []


@pytest.mark.parametrize(
    ("cwd", "out", "written"),
    [
        ("link/A", "infra", "private/A/infra"),  # the working directory entered through the system link
        ("link/A", "{tmp}/link/A/infra", "private/A/infra"),  # the system link in an absolute path
        ("link/A", "{tmp}/link/A/deploy/../infra", "private/A/infra"),
        ("link/A", "../B/infra", "private/B/infra"),  # into another checkout, through no symlink
        # a $PWD entered through the user's own link outside any repository
        ("link/home/mine", "{tmp}/link/home/mine/infra", "private/data/infra"),
        ("private/T", "{tmp}/link/T/infra", "private/T/infra"),
        ("private/home", "{tmp}/link/T/infra", "private/T/infra"),
    ],
)
def test_a_symlink_of_the_machine_or_the_user_is_followed(
    machine: Path, monkeypatch: pytest.MonkeyPatch, cwd: str, out: str, written: str
) -> None:
    monkeypatch.chdir(machine / cwd)
    writer.write_tree(NEW, out.format(tmp=machine), workloads=[str(machine / "private" / "T" / "w.yaml")])
    assert (machine / written / "e" / "f.txt").read_text() == "new f\n"
    _untouched(machine)


GIT = "it lies in the git work tree {tmp}/private/"
GIT_B = GIT + "B"


@pytest.mark.parametrize(
    ("cwd", "out", "workload", "shown", "why"),
    [
        # the reviewer's repro: the working directory is checkout A, the symlink is in checkout B
        ("link/A", "../B/out/infra", "", "../B/out", GIT_B),
        ("link/A", "../B/out/../infra", "", "../B/out", GIT_B),  # `..` after the symlink is its target's parent
        # an absolute path from outside any checkout (a job running in $RUNNER_TEMP) into one with a planted link
        ("private/home", "{tmp}/private/B/out/infra", "", "{tmp}/private/B/out", GIT_B),
        ("private/home", "{tmp}/link/B/out/infra", "", "{tmp}/link/B/out", GIT_B),  # after a followed system link
        ("link/A", "planted/infra", "", "planted", GIT + "A"),
        ("private/home", "{tmp}/private/W/planted/x", "", "{tmp}/private/W/planted", GIT + "W"),
        # the user's link is followed, the planted one its target runs through is not
        ("link/A", "{tmp}/link/home/hop/infra", "", "{tmp}/private/B/out", GIT_B),
        # no .git: below the working directory, or in the workload's directory
        ("private/T", "planted/infra", "", "planted", "it lies in the working directory, {tmp}/private/T"),
        ("private/home", "mine/infra", "", "mine", "it lies in the working directory, {tmp}/private/home"),
        (
            "private/home",
            "{tmp}/private/T/planted/infra",
            "{tmp}/private/T/w.yaml",
            "{tmp}/private/T/planted",
            "it lies in the repository of {tmp}/private/T/w.yaml, {tmp}/private/T",
        ),
        # the output directory itself, wherever it is
        ("link/A", "{tmp}/link/home/mine", "", "{tmp}/link/home/mine", "it is the output path itself"),
        ("link/A", "{tmp}/link/home/mine/.", "", "{tmp}/link/home/mine", "it is the output path itself"),
    ],
)
def test_a_symlink_a_pull_request_could_plant_is_refused(
    machine: Path, monkeypatch: pytest.MonkeyPatch, cwd: str, out: str, workload: str, shown: str, why: str
) -> None:
    monkeypatch.chdir(machine / cwd)
    path = out.format(tmp=machine)
    link = shown.format(tmp=machine)
    target = os.readlink(link if os.path.isabs(link) else machine / cwd / link)
    with pytest.raises(OutputError) as refused:
        writer.write_tree(NEW, path, workloads=[workload.format(tmp=machine)] if workload else [])
    assert str(refused.value) == (
        f"refusing to write {path}: {link} is a symlink to {target} ({why.format(tmp=machine)}; {ADVICE}"
    )
    _untouched(machine)
    assert sorted(os.listdir(machine / "private")) == ["A", "B", "T", "W", "data", "home"]


def test_a_symlink_loop_is_refused(machine: Path) -> None:
    os.symlink(machine / "loop", machine / "loop")
    with pytest.raises(OutputError, match=f"cannot write {machine}/loop/x: more than 40 symlinks in it"):
        writer.write_tree(NEW, str(machine / "loop" / "x"))


def test_a_symlink_planted_after_the_check_is_refused_under_the_lock(machine: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = machine / "private" / "home"
    (home / "d").mkdir()
    checked = writer.refuse_symlinks

    def then_plant(path: str, workloads: object = ()) -> str:
        real = checked(path)
        (home / "d").rename(home / "d.real")
        os.symlink(machine / "elsewhere", home / "d")
        return real

    monkeypatch.setattr(writer, "refuse_symlinks", then_plant)
    out = str(home / "d" / "infra")
    with pytest.raises(OutputError, match=f"^refusing to write {out}: its path changed while specgen checked it"):
        writer.write_tree(NEW, out)
    _untouched(machine)


def test_the_report_is_opened_without_following_a_symlink_planted_after_the_check(
    machine: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = machine / "elsewhere" / "victim"
    victim.write_text("keep\n")
    report = machine / "private" / "home" / "gl.json"

    def then_plant(path: str, workloads: object = ()) -> str:
        os.symlink(victim, path)
        return path

    monkeypatch.setattr(writer, "refuse_symlinks", then_plant)
    with pytest.raises(OutputError, match=f"^cannot write {report}: Too many levels of symbolic links"):
        writer.write_report(str(report), "[]\n")
    assert victim.read_text() == "keep\n"


def specgen(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """Run the CLI in this process: (exit code, stderr)."""
    with pytest.raises(SystemExit) as done:
        main(list(args))
    code = done.value.code
    return (code if isinstance(code, int) else 0 if code is None else 1), capsys.readouterr().err


def test_the_reviewers_repro_through_the_cli(
    machine: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(machine / "private" / "A")
    code, err = specgen(capsys, "render", str(machine / "private" / "T" / "w.yaml"), "-o", "../B/out/infra")
    assert code == 1
    assert f"specgen: error: refusing to write ../B/out/infra: ../B/out is a symlink to {machine / 'elsewhere'} " in err
    _untouched(machine)
    # fuzz25 L6: --check reads only where a render would write (it reported drift against the link's target)
    code, err = specgen(capsys, "render", str(machine / "private" / "T" / "w.yaml"), "-o", "../B/out/infra", "--check")
    assert code == 1 and "../B/out is a symlink to" in err


@pytest.mark.parametrize("command", ["render", "plan"])
def test_the_gitlab_report_path_is_held_to_the_same_rule(
    machine: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    monkeypatch.chdir(machine / "private" / "A")
    out = ["-o", str(machine / "private" / "A" / "infra")] if command == "render" else []
    workload = str(machine / "private" / "T" / "w.yaml")
    code, err = specgen(capsys, command, workload, *out, "--gitlab-report", "../B/out/gl.json")
    assert code == 1
    refused = f"refusing to write ../B/out/gl.json: ../B/out is a symlink to {machine / 'elsewhere'}"
    assert f"specgen: error: {refused} ({GIT_B.format(tmp=machine)}; " in err
    _untouched(machine)
    code, err = specgen(capsys, command, workload, *out, "--gitlab-report", str(machine / "link" / "A" / "gl.json"))
    assert code == 0, err
    assert isinstance(json.loads((machine / "private" / "A" / "gl.json").read_text()), list)


@pytest.fixture
def deleted_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory that was removed after the shell entered it; the workload lies elsewhere."""
    (tmp_path / "w.yaml").write_text(VALID)
    (tmp_path / "gone").mkdir()
    monkeypatch.chdir(tmp_path / "gone")
    (tmp_path / "gone").rmdir()
    return tmp_path


def test_an_absolute_output_path_works_from_a_deleted_working_directory(
    deleted_cwd: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, report = deleted_cwd / "infra", deleted_cwd / "gl.json"
    code, err = specgen(capsys, "render", str(deleted_cwd / "w.yaml"), "-o", str(out), "--gitlab-report", str(report))
    assert code == 0, err
    assert (out / writer.MANIFEST).is_file() and isinstance(json.loads(report.read_text()), list)


@pytest.mark.parametrize(
    ("args", "shown"), [(["-o", "infra"], "infra"), (["-o", "{tmp}/infra", "--gitlab-report", "gl.json"], "gl.json")]
)
def test_a_relative_output_path_from_a_deleted_working_directory_is_an_error(
    deleted_cwd: Path, capsys: pytest.CaptureFixture[str], args: list[str], shown: str
) -> None:
    argv = [arg.format(tmp=deleted_cwd) for arg in args]
    code, err = specgen(capsys, "render", str(deleted_cwd / "w.yaml"), *argv)
    assert code == 1
    assert err.endswith(f"specgen: error: cannot write {shown}: the working directory no longer exists; give an absolute path\n")
    assert "Traceback" not in err
    assert sorted(p.name for p in deleted_cwd.iterdir()) == ["w.yaml"]


# --- fuzz9 items 4 and 5: a report or constants block never replaces an input, the tree or a special file -----------


def test_the_gitlab_report_never_replaces_a_workload_or_lands_in_the_output_tree(tmp_path: Path) -> None:
    workload = tmp_path / "w.yaml"
    workload.write_text(VALID)
    os.link(workload, tmp_path / "hard.yaml")  # fuzz25 M2: a second name of the workload was overwritten
    reports = (workload, tmp_path / "hard.yaml", tmp_path / "out" / "r.json")
    for report, output in ((report, tmp_path / "out") for report in reports):
        args = ["render", str(workload), "--gitlab-report", str(report), "-o", str(output)]
        with pytest.raises(SystemExit) as exit_:
            main(args)
        assert exit_.value.code == 1, report
    assert workload.read_text() == VALID
    assert not (tmp_path / "out").exists()


def test_a_constants_block_is_written_to_a_new_path_or_a_regular_file_only(tmp_path: Path) -> None:
    from generator.calculator.block_file import write_block

    log = tmp_path / "v.log"
    log.write_text("INFO GPU KV cache size: 100000 tokens\n")
    (tmp_path / "link").symlink_to(log)
    os.mkfifo(tmp_path / "fifo")
    for target in ("link", "fifo", "."):
        with pytest.raises(OutputError, match="exists and is not a regular file"):
            write_block(str(tmp_path / target), "constants: {}\n")
    with pytest.raises(OutputError, match="it is an input read"):
        write_block(str(log), "constants: {}\n", [str(log)])
    assert log.read_text() == "INFO GPU KV cache size: 100000 tokens\n"
    block = f"{CALIBRATE_HEADER}\nconstants:\n  non_torch_bytes: 1\n"
    write_block(str(tmp_path / "new.yaml"), block, [str(log)])
    assert (tmp_path / "new.yaml").read_text() == block
    # fuzz27 M5: -o naming the workload replaced it with the block; a block specgen wrote is written over again
    workload = tmp_path / "workload.yaml"
    workload.write_text(VALID)
    with pytest.raises(OutputError, match="it exists and is not a block specgen wrote"):
        write_block(str(workload), f"{DETECT_HEADER}\nhardware: {{}}\n")
    assert workload.read_text() == VALID
    write_block(str(tmp_path / "new.yaml"), f"{DETECT_HEADER}\nhardware: {{}}\n")
    assert (tmp_path / "new.yaml").read_text().startswith("# specgen detect:")


@pytest.mark.parametrize(
    ("text", "ours"),
    [
        # fuzz31 item 2: the first 10 bytes '# specgen ' were the whole test, so this workload was replaced
        pytest.param("# specgen workload for the chat team\n" + VALID, False, id="workload-with-specgen-comment"),
        pytest.param("# specgen detect: my notes\nhardware:\n  fixed: {}\n", False, id="not-the-exact-header"),
        pytest.param(f"{DETECT_HEADER}\n" + VALID, False, id="detect-header-over-a-workload"),
        pytest.param(f"{DETECT_HEADER}\nhardware:\n  fixed: {{}}\nname: x\n", False, id="detect-block-and-more"),
        pytest.param(f"{CALIBRATE_HEADER}\nhardware:\n  fixed: {{}}\n", False, id="calibrate-header-detect-body"),
        pytest.param(f"{DETECT_HEADER}\nhardware:\n  fixed:\n    gpu: h100-sxm5-80gb  # measured\n", True, id="detect"),
        pytest.param(f"{DETECT_HEADER}\r\nhardware:\r\n  fixed: {{}}\r\n", True, id="detect-crlf"),
        pytest.param(f"{CALIBRATE_HEADER}\n# a note\nconstants:\n  non_torch_bytes: 1\n", True, id="calibrate"),
        pytest.param(f"{CALIBRATE_NONE_HEADER}\n# a note\n", True, id="calibrate-none"),
        pytest.param(f"{CALIBRATE_NO_FIT_HEADER}\n", True, id="calibrate-no-fit"),
    ],
)
def test_only_a_block_detect_or_calibrate_wrote_is_written_over(tmp_path: Path, text: str, ours: bool) -> None:
    from generator.calculator.block_file import write_block

    target = tmp_path / "mywl.yaml"
    target.write_bytes(text.encode())
    block = f"{DETECT_HEADER}\nhardware:\n  fixed: {{}}\n"
    if ours:
        write_block(str(target), block)
        assert target.read_text() == block
    else:
        with pytest.raises(OutputError, match=r"cannot write .*mywl.yaml: it exists and is not a block specgen wrote"):
            write_block(str(target), block)
        assert target.read_bytes() == text.encode()


def test_the_blocks_detect_and_calibrate_write_are_recognised_as_theirs() -> None:
    from generator.calculator.block_file import is_written_block
    from generator.calculator.calibrate import constants_block
    from generator.calculator.detect import Fact, fixed_block

    facts = {"gpu": Fact("h100-sxm5-80gb", "measured"), "gpu_count": Fact(8, "measured"), "mixed_gpus": Fact("2", "x")}
    for text in (
        fixed_block(facts),
        fixed_block({}),
        constants_block({"non_torch_bytes": 1e9}, ["a note"]),
        constants_block({}, ["a note"]),
        constants_block({}),
    ):
        assert is_written_block(text), text


def test_detect_and_calibrate_o_refuse_a_workload_beginning_with_a_specgen_comment(tmp_path: Path) -> None:
    """fuzz31 item 2, end to end: both commands exit 1 naming the file, which is left as it was."""
    from generator.calculator.calibrate import main as calibrate_main

    workload = tmp_path / "mywl.yaml"
    text = "# specgen workload for the chat team\n" + VALID
    workload.write_text(text)
    log = tmp_path / "v1.log"
    log.write_text("INFO Loading model weights took 14.99 GiB\nINFO GPU KV cache size: 400,000 tokens\n")
    args = ["meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100-sxm5-80gb", "--log", str(log), "-o", str(workload)]
    assert calibrate_main(args) == 1
    with pytest.raises(SystemExit) as exit_:
        main(["detect", "-o", str(workload)])
    assert exit_.value.code == 1
    assert workload.read_text() == text


def test_detect_output_that_is_a_non_utf8_byte_is_read_not_a_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """fuzz27 M1: a command detect runs printing a byte that is not UTF-8 (a Latin-1 locale) was a traceback."""
    from generator.calculator.detect import run_command

    tool = tmp_path / "nvidia-smi"
    tool.write_bytes(b"#!/bin/sh\nprintf 'x\\377y'\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    assert run_command(("nvidia-smi",)) == "x\ufffdy"


def test_a_link_the_user_may_not_read_is_an_error_not_a_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """fuzz13 item 9: -o /proc/1/cwd/x as a user gave a PermissionError traceback."""
    (tmp_path / "link").symlink_to(tmp_path)

    def unreadable(path: str) -> str:
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(os, "readlink", unreadable)
    with pytest.raises(OutputError, match=r"cannot check .*link/x: .*link: Permission denied"):
        writer.refuse_symlinks(str(tmp_path / "link" / "x"))
