"""newuser104: the exit codes a CI job branches on, run as the job runs them (a process, no TTY).

Item 1: ``validate`` had no ``--fail-on``: a workload whose settings ``validate`` warns about (a cost constant 77x its
sourced default) passed a CI step ``specgen validate`` with exit 0, where ``plan`` and ``render`` had warnings as
errors (``--fail-on warning``, exit 5); nor had it ``--gitlab-report`` (item 3). Item 2: README gave each command's
codes in its own row and the rest in prose; a table in "In CI" now gives every code once, and it must hold every code
a command row lists. Item 4: README now gives one pattern a line parser of another CI takes both stderr forms with.
Item 5: ``validate`` with those options is read without importing click, as plain ``validate FILES`` was.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import REPO

CHAT = (REPO / "examples" / "chat-70b.yaml").read_text()
#: A cost constant 10 / 0.13 = 77x its sourced default: the warning ``setting-implausible``, which validate finds.
WARNED = CHAT + "constants:\n  energy_usd_per_kwh: 10\n"
INVALID = CHAT.replace("requests_per_second: 12", "requests_per_second: -1")
INFEASIBLE = REPO / "examples" / "infeasible" / "home-405b.yaml"


def _specgen(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "PYTHONPATH")}
    env |= {"PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "generator", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "ok.yaml").write_text(CHAT)
    (tmp_path / "warned.yaml").write_text(WARNED)
    (tmp_path / "invalid.yaml").write_text(INVALID)
    (tmp_path / "infeasible.yaml").write_text(INFEASIBLE.read_text())
    return tmp_path


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["ok.yaml"], 0),
        (["--fail-on", "warning", "ok.yaml"], 0),
        (["warned.yaml"], 0),  # a warning alone never fails
        (["--fail-on", "error", "warned.yaml"], 0),
        (["--fail-on", "warning", "warned.yaml"], 5),  # newuser104 item 1: exited 2 (no such option)
        (["--fail-on", "warning", "ok.yaml", "warned.yaml"], 5),  # every file checked, then the findings' 5
        (["--fail-on", "warning", "warned.yaml", "invalid.yaml"], 1),  # invalid input first
        (["--fail-on", "warning", "warned.yaml", "infeasible.yaml"], 3),  # no feasible plan first
        (["--fail-on", "strict", "warned.yaml"], 2),  # a usage error
    ],
)
def test_validate_exit_codes(files: Path, args: list[str], code: int) -> None:
    run = _specgen(files, "validate", *args)
    assert run.returncode == code, run.stderr
    ok = [f"{name}: ok" for name in sorted(args) if name in ("ok.yaml", "warned.yaml")]
    if code in (0, 5):  # stdout: each valid file's ok line, nothing else
        assert run.stdout.splitlines() == ok
    if "warned.yaml" in args and code != 2:  # the warning at its place, on stderr, whatever the level
        assert "warned.yaml:24:23: warning: constants.energy_usd_per_kwh 10 is 76.9x" in run.stderr
    if code == 5:
        assert run.stderr.endswith("specgen: error: 1 finding(s) at level 'warning' or above (--fail-on warning)\n")


@pytest.mark.parametrize("command", ["validate", "plan", "render"])
def test_fail_on_warning_exits_5_in_every_command(files: Path, command: str) -> None:
    """The one warning ``validate`` finds fails ``plan`` and ``render`` alike under ``--fail-on warning``."""
    args = ["--fail-on", "warning", "warned.yaml"] + (["-o", "out"] if command == "render" else [])
    run = _specgen(files, command, *args)
    assert run.returncode == 5, run.stderr
    assert "[setting-implausible]" in run.stderr and "[setting-implausible]" not in run.stdout
    if command == "render":  # the output is still written, as README says
        assert (files / "out" / "spec.json").is_file()


@pytest.mark.parametrize(
    ("given", "code", "issues"),
    [
        (["ok.yaml"], 0, []),
        (["warned.yaml", "ok.yaml"], 0, [("warned.yaml", 24, "minor", "specgen/setting-implausible")]),
        (
            ["warned.yaml", "invalid.yaml"],
            1,
            [
                ("warned.yaml", 24, "minor", "specgen/setting-implausible"),
                ("invalid.yaml", 14, "blocker", "specgen/error"),
            ],
        ),
        (  # together: one name in two files, render's refusal, beside the findings
            ["--together", "warned.yaml", "ok.yaml"],
            1,
            [
                ("warned.yaml", 24, "minor", "specgen/setting-implausible"),
                ("warned.yaml", 4, "blocker", "specgen/error"),
            ],
        ),
    ],
)
def test_validate_gitlab_report(files: Path, given: list[str], code: int, issues: list[tuple[str, int, str, str]]) -> None:
    """Item 3: every file's findings and errors in one report, each finding fingerprinted as render's report has it."""
    subprocess.run(["git", "init", "-q", str(files)], check=True)  # paths relative to the repository, as in CI
    run = _specgen(files, "validate", "--gitlab-report", "gl.json", *given)
    assert run.returncode == code, run.stderr
    report = json.loads((files / "gl.json").read_text())
    got = [(i["location"]["path"], i["location"]["lines"]["begin"], i["severity"], i["check_name"]) for i in report]
    assert got == issues
    if code == 0 and issues:  # the same issue render's report holds: GitLab sees one issue, not two
        rendered = _specgen(files, "render", "warned.yaml", "-o", "out", "--gitlab-report", "render.json")
        assert rendered.returncode == 0, rendered.stderr
        fingerprints = {i["fingerprint"] for i in json.loads((files / "render.json").read_text())}
        assert report[0]["fingerprint"] in fingerprints


def _rows() -> dict[str, set[int]]:
    """README's command table: each command's exit codes."""
    rows = {}
    for line in (REPO / "README.md").read_text().splitlines():
        if line.startswith("| `specgen "):
            command = line.split("`")[1]
            rows[command] = {int(c) for c in re.findall(r"\d+", line.rsplit("|", 2)[1])}
    return rows


def _ci_table() -> dict[int, str]:
    """README's exit code table under "In CI": code -> meaning."""
    section = (REPO / "README.md").read_text().split("## In CI", 1)[1].split("\n## ", 1)[0]
    table = section.split("| code | meaning |", 1)[1].split("\n\n", 1)[0]
    out = {}
    for line in table.splitlines()[2:]:
        codes, meaning = line.split("|")[1:3]
        for code in re.findall(r"\d+", codes):
            out[int(code)] = meaning.strip()
    return out


def test_readme_exit_code_table_holds_every_command_code() -> None:
    rows = _rows()
    table = _ci_table()
    assert 5 in rows["specgen validate [--together] [--fail-on L] [--gitlab-report F] FILE..."]
    for command, codes in rows.items():
        assert codes <= set(table), (command, codes - set(table))
    assert {2, 130, 143} <= set(table)  # the codes no row gives: usage error, Ctrl-C, a cancel
    assert "`--fail-on warning`" in table[5] and "`validate`" in table[5]


def test_readme_line_pattern_takes_errors_and_findings(files: Path) -> None:
    """Item 4: README's one pattern for a CI line parser takes a finding's line and a stopping error's alike."""
    text = (REPO / "README.md").read_text().split("## In CI", 1)[1]
    pattern = re.compile(re.findall(r"`(\^[^`]+\$)` takes both", text.replace("\n", " "))[0])
    run = _specgen(files, "validate", "warned.yaml", "invalid.yaml")
    assert run.returncode == 1
    parsed = [m.groups() if (m := pattern.match(line)) else line for line in run.stderr.splitlines()]
    assert [p[:4] if isinstance(p, tuple) else p for p in parsed] == [
        ("warned.yaml", "24", "23", "warning"),
        ("invalid.yaml", "14", "28", None),
    ]
    assert parsed[1][4].startswith("deployments[0].inference.requests_per_second: ")


def _click_validate_params(args: list[str]) -> dict[str, Any] | None:
    """What click passes ``validate`` for ``args``, or None where click refuses them."""
    import click

    from generator.cli import _build_cli

    command = _build_cli().commands["validate"]
    try:
        with command.make_context("validate", list(args)) as ctx:
            return dict(ctx.params)
    except (click.exceptions.Exit, click.UsageError):
        return None


#: Words a validate command line is made of: files, every option in its separate-word spelling, odd values.
VALIDATE_WORDS = st.sampled_from(["a.yaml", "b.yaml", "examples", "--together", "--fail-on", "warning", "error", "info",
                                  "--gitlab-report", "gl.json", "", "--", "-h", "--fail-on=error", "-"])  # fmt: skip


@settings(max_examples=300, derandomize=True, deadline=None, database=None)
@given(args=st.lists(VALIDATE_WORDS, max_size=6))
def test_plain_validate_arguments_are_read_as_click_reads_them(args: list[str]) -> None:
    """Item 5: ``validate --fail-on warning FILE`` is read without click (a sixth of a cold validate), as click reads it."""
    from generator.cli import LEVELS
    from generator.plain_args import validate_params

    fast = validate_params(args, LEVELS)
    if fast is not None:  # None: click reads them
        assert fast == _click_validate_params(args)


@pytest.mark.parametrize(
    "args",
    [
        ["--fail-on", "warning", "warned.yaml"],
        ["--fail-on", "warning", "--gitlab-report", "gl.json", "warned.yaml", "invalid.yaml"],
        ["--together", "--fail-on", "error", "ok.yaml", "warned.yaml"],
    ],
)
def test_plain_validate_answers_as_the_click_command(
    files: Path, args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from generator.cli import LEVELS, _build_cli, main
    from generator.plain_args import validate_params

    assert validate_params(args, LEVELS) is not None
    monkeypatch.chdir(files)
    outcomes = []
    for run in (lambda: main(["validate", *args]), lambda: _build_cli().main(args=["validate", *args], prog_name="specgen")):
        try:
            run()
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        out, err = capsys.readouterr()
        report = (files / "gl.json").read_text() if (files / "gl.json").exists() else None
        outcomes.append((code, out, err, report))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0] in (1, 5)
