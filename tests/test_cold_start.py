"""Cold-start structure: each command imports only the libraries it uses (no timings asserted here).

``benchmarks/scale.py`` measures the cold starts; these tests keep the structure that makes them fast:
``estimate`` never loads a validation, templating or CLI library (nor ``typing``: it is needed only for
annotations), ``validate`` of a plain valid file loads neither click nor jsonschema nor the renderers nor a YAML
library, ``render`` of a plain inference example reads and writes its YAML without a YAML library and plans
without the training modules (its records are named tuples, not dataclasses), and the click-free ``validate``
answers exactly as the click command.
"""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.cli import LEVELS, TARGETS, _build_cli, main
from generator.plain_args import render_params
from tests.conftest import REPO

EXAMPLE = str(REPO / "examples" / "chat-70b.yaml")


def _loaded_after(args: list[str]) -> set[str]:
    """Top-level packages and generator modules in ``sys.modules`` after ``specgen ARGS`` ran in a fresh interpreter."""
    code = (
        "import sys\nfrom generator.cli import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit as exc:\n    assert not exc.code, exc.code\n"
        "print(','.join(sorted({m if m.startswith('generator.') else m.split('.')[0] for m in sys.modules})), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True, cwd=REPO)
    return set(done.stderr.strip().splitlines()[-1].split(","))


@pytest.mark.parametrize(
    ("args", "absent"),
    [
        pytest.param(
            ["estimate", "llama-3.1-8b", "--gpu", "h100-sxm5-80gb", "--context", "8192", "--json"],
            {"click", "pydantic", "jsonschema", "jinja2", "ruamel", "yaml", "pathlib", "shutil", "typing", "contextlib"}
            | {"generator.planner", "generator.sizing.training_step", "generator.sizing.training", "generator.sizing.sglang_kv"},
            id="estimate",
        ),
        pytest.param(
            ["validate", EXAMPLE],
            {"click", "pydantic", "jsonschema", "jinja2", "ruamel", "yaml", "dataclasses", "pathlib"}
            | {"generator.calculator.estimate", "generator.planner.candidates"},
            id="validate",
        ),
        pytest.param(  # newuser104: CI's warnings-as-errors form stays click-free too
            ["validate", "--fail-on", "warning", EXAMPLE],
            {"click", "pydantic", "jsonschema", "jinja2", "ruamel", "yaml", "dataclasses", "pathlib"},
            id="validate-fail-on",
        ),
        pytest.param(
            ["render", EXAMPLE, "-o", "{tmp}", "--target", "spec"], {"click", "pydantic", "jsonschema", "ctypes"}, id="render"
        ),
        pytest.param(  # every output of an inference-only example: YAML read and written without a YAML library, no training
            ["render", EXAMPLE, "-o", "{tmp}"],
            {"click", "pydantic", "jsonschema", "ctypes", "ruamel", "yaml", "dataclasses"}
            | {"generator.planner.training", "generator.planner.training_comm", "generator.sizing.training_step"}
            | {"generator.sizing.training"},
            id="render-all",
        ),
        pytest.param(["plan", EXAMPLE], {"pydantic", "jsonschema"}, id="plan"),
    ],
)
def test_a_command_loads_only_what_it_uses(args: list[str], absent: set[str], tmp_path: Path) -> None:
    loaded = _loaded_after([a.replace("{tmp}", str(tmp_path / "out")) for a in args])
    assert not loaded & absent, f"{args[0]} loads {sorted(loaded & absent)}"


def _outcome(run: object, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        run()  # type: ignore[operator]
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "files",
    [
        pytest.param([EXAMPLE], id="valid"),
        pytest.param([EXAMPLE, str(REPO / "examples" / "mixed.yaml")], id="two-valid"),
        pytest.param([EXAMPLE, str(REPO / "examples" / "infeasible" / "home-405b.yaml"), EXAMPLE], id="infeasible-second"),
        pytest.param(["no-such-file.yaml"], id="missing"),
        pytest.param(["{bad}"], id="schema-errors"),
        pytest.param(["{unknown-gpu}"], id="catalog-error"),
    ],
)
def test_validate_without_click_answers_as_the_click_command(
    files: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 2\nname: x\ndeployments:\n  - name: a\n    modle: m\n", encoding="utf-8")
    unknown = tmp_path / "unknown-gpu.yaml"
    unknown.write_text((REPO / "examples" / "chat-70b.yaml").read_text().replace("h100-sxm5-80gb", "h100-sxm5-80g"))
    args = ["validate", *(f.replace("{bad}", str(bad)).replace("{unknown-gpu}", str(unknown)) for f in files)]
    fast = _outcome(lambda: main(args), capsys)
    with_click = _outcome(lambda: _build_cli().main(args=args, prog_name="specgen"), capsys)
    assert fast == with_click
    assert fast[0] in (0, 1, 3)


@pytest.mark.parametrize(
    "args",
    [
        ["validate"],
        ["validate", "-h"],
        ["validate", "examples"],
        ["validate", "--", "x.yaml"],
        ["render"],
        ["render", "-h"],
        ["render", EXAMPLE, "-o"],
        ["render", EXAMPLE, "--target", "nope"],
        ["render", EXAMPLE, "-j", "0"],
        ["render", EXAMPLE, "--fail-on", "info"],
        ["render", "examples"],
        # fuzz12 item 14: an empty output directory is a usage error naming -o, not "refusing to write into : ..."
        ["render", EXAMPLE, "-o", ""],
    ],
)
def test_odd_arguments_are_left_to_click(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    fast = _outcome(lambda: main(args), capsys)
    with_click = _outcome(lambda: _build_cli().main(args=args, prog_name="specgen"), capsys)
    assert fast == with_click
    assert fast[0] in (0, 1, 2)


def _click_params(args: list[str]) -> dict[str, Any] | None:
    """What click passes ``render`` for ``args``, or None where click refuses them."""
    import click

    command = _build_cli().commands["render"]
    try:
        with command.make_context("render", list(args)) as ctx:
            return dict(ctx.params)
    except click.exceptions.Exit:
        return None
    except click.UsageError:
        return None


#: Words a render command line is made of: files, every option in its separate-word spelling, odd values.
WORDS = st.sampled_from(["a.yaml", "b.yaml", "examples", "out", "-o", "--output", "--check", "--prune", "--target", "spec",
                         "markdown", "kubernetes", "bogus", "-j", "--jobs", "2", "0", "01", "--fail-on", "warning",
                         "error", "--gitlab-report", "report.json", "--", "-h", "--output=x", "-ox", "-", ""])  # fmt: skip


@settings(max_examples=400, derandomize=True, deadline=None, database=None)
@given(args=st.lists(WORDS, max_size=7))
def test_plain_render_arguments_are_read_as_click_reads_them(args: list[str]) -> None:
    fast = render_params(args, TARGETS, LEVELS)
    if fast is not None:  # None: click reads them
        assert fast == _click_params(args)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param([EXAMPLE, "-o", "{out}"], id="one"),
        pytest.param([EXAMPLE, "--output", "{out}", "--target", "spec", "--target", "markdown"], id="targets"),
        pytest.param([EXAMPLE, str(REPO / "examples" / "mixed.yaml"), "-o", "{out}", "-j", "1"], id="two-files"),
        pytest.param([EXAMPLE, "-o", "{out}", "--check"], id="check-missing-tree"),
        pytest.param([str(REPO / "examples" / "home-70b-offload.yaml"), "-o", "{out}", "--fail-on", "warning"], id="fail-on"),
        pytest.param([str(REPO / "examples" / "infeasible" / "home-405b.yaml"), "-o", "{out}"], id="infeasible"),
    ],
)
def test_render_without_click_answers_as_the_click_command(
    args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outcomes = []
    for way in ("plain", "click"):
        words = ["render", *(a.replace("{out}", str(tmp_path / way)) for a in args)]
        if way == "plain":
            assert render_params(words[1:], TARGETS, LEVELS) is not None
        code, out, err = _outcome(functools.partial(_render, words, plain=way == "plain"), capsys)
        tree = {str(p.relative_to(tmp_path / way)): p.read_bytes() for p in sorted((tmp_path / way).rglob("*")) if p.is_file()}
        where = str(tmp_path / way)
        outcomes.append((code, out.replace(where, "OUT"), err.replace(where, "OUT"), tree))
    assert outcomes[0] == outcomes[1]


def _render(words: list[str], plain: bool) -> None:
    if plain:
        main(words)
    else:
        _build_cli().main(args=words, prog_name="specgen")


def _render_tree(out: Path, cache_home: Path) -> dict[str, str]:
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "XDG_CACHE_HOME": str(cache_home)}
    code = "from generator.cli import main; main()"
    cmd = [sys.executable, "-c", code, "render", EXAMPLE, "-o", str(out), "--target", "markdown", "--target", "terraform"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=REPO, env=env)
    assert done.returncode == 0, done.stderr
    return {str(p.relative_to(out)): p.read_text() for p in sorted(out.rglob("*")) if p.is_file()}


def test_compiled_templates_are_reused_and_a_broken_cache_is_skipped(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cold = _render_tree(tmp_path / "cold", cache)
    compiled = sorted(cache.rglob("*.cache"))
    assert compiled, "the compiled templates were not kept"
    assert _render_tree(tmp_path / "warm", cache) == cold
    for path in compiled:  # the header Jinja checks survives, the code after it does not
        path.write_bytes(path.read_bytes()[:40] + b"\x00garbage")
    assert _render_tree(tmp_path / "corrupt", cache) == cold
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    assert _render_tree(tmp_path / "unwritable", blocked) == cold
    assert "SPEC.md" in cold


@pytest.mark.parametrize("columns", [None, "40", "100", "0", "junk"])
def test_estimate_help_is_laid_out_as_argparse_lays_it_out(columns: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse

    from generator.calculator.cli import build_parser

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    ours = build_parser()
    stock = build_parser()
    stock.formatter_class = argparse.HelpFormatter
    assert ours.format_help() == stock.format_help()
    assert ours.format_usage() == stock.format_usage()


@pytest.mark.parametrize("home", ["relative/cache", ""])
def test_no_template_cache_without_an_absolute_folder(home: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from generator.render.env import _template_cache

    monkeypatch.setenv("XDG_CACHE_HOME", home)
    monkeypatch.setattr("os.path.expanduser", lambda path: path)  # HOME unset, no passwd entry: "~" stays "~"
    assert _template_cache(markdown=False) is None
