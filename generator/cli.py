"""The ``specgen`` command line: the one place that prints and turns errors into exit codes.

Exit codes: 0 ok; 1 invalid input (schema, semantics, catalog); 2 usage; 3 no feasible plan;
4 ``render --check`` found drift. ``specgen estimate`` is dispatched before click is imported
(see :mod:`generator.calculator.cli`) to keep its cold start fast.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from generator.errors import SpecgenError

F = TypeVar("F", bound=Callable[..., Any])
#: Most error lines printed for one failure.
MAX_REPORTED = 25
TARGETS = ("spec", "markdown", "terraform", "ansible", "kubernetes")
_TARGET_PREFIX = {
    "spec": ("spec.json",),
    "markdown": ("SPEC.md",),
    "terraform": ("terraform/",),
    "ansible": ("ansible/",),
    "kubernetes": ("kubernetes/", "kubeadm/", "cluster/"),
}


def main(argv: list[str] | None = None) -> None:
    """Console entry point."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["estimate"]:
        from generator.calculator.cli import main as estimate_main

        sys.exit(estimate_main(args[1:]))
    if args[:1] == ["calibrate"]:
        from generator.calculator.calibrate import main as calibrate_main

        sys.exit(calibrate_main(args[1:]))
    cli = _build_cli()
    cli.main(args=args, prog_name="specgen")


def _report(exc: SpecgenError) -> int:
    from generator.errors import MultipleInputError

    lines = [str(e) for e in exc.errors] if isinstance(exc, MultipleInputError) else [str(exc)]
    if len(lines) > MAX_REPORTED:
        lines = [*lines[:MAX_REPORTED], f"... and {len(lines) - MAX_REPORTED:,} more errors not shown"]
    for line in lines:
        print(f"specgen: error: {line}" if exc.exit_code != 4 else line, file=sys.stderr)
    return exc.exit_code


def _build_cli() -> Any:
    import click

    from generator.errors import SpecgenError

    def boundary(func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return func(*args, **kwargs)
            except SpecgenError as exc:
                sys.exit(_report(exc))

        return wrapper  # type: ignore[return-value]

    @click.group(context_settings={"help_option_names": ["-h", "--help"]})
    @click.version_option(package_name="specgen")
    @click.option(
        "--allow-outside-paths", is_flag=True, help="Let model paths in a workload lie outside its repository (git root)."
    )
    def cli(allow_outside_paths: bool) -> None:
        """Size AI workloads into GPU hardware and render Terraform, Ansible and Kubernetes code."""
        from generator import input_files

        input_files.allow_outside_paths.set(allow_outside_paths)

    @cli.command()
    @click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
    @click.option("-o", "--output", default="infra", show_default=True, help="Output directory.")
    @click.option("--check", is_flag=True, help="Compare with the committed output instead of writing; exit 4 on drift.")
    @click.option(
        "--target", "targets", multiple=True, type=click.Choice(TARGETS), help="Render only these outputs (repeatable)."
    )
    @boundary
    def render(files: tuple[str, ...], output: str, check: bool, targets: tuple[str, ...]) -> None:
        """Validate, plan and render workload FILES into an output tree."""
        from generator.errors import DriftError
        from generator.writer import diff_trees, read_manifest, read_tree, with_manifest, write_tree

        trees = _render_all(files, output)
        drift = []
        for directory, rendered in trees.items():
            wanted = _select(rendered, targets)
            if check:
                # only the files specgen owns are compared (terraform state and the like are not read)
                text = diff_trees(_select(read_tree(directory), targets), _select(with_manifest(rendered), targets))
                if text:
                    drift.append(text)
                continue
            # --target: the other outputs' owned files stay as they are on disk, and in the manifest
            owned = (read_manifest(directory) or []) if targets else []
            keep = set(owned) - set(_select(dict.fromkeys(owned, ""), targets))
            for note in write_tree(wanted, directory, keep=keep):
                click.echo(f"specgen: {note}", err=True)
            click.echo(f"wrote {len(wanted)} files to {directory}")
        if drift:
            raise DriftError("".join(drift) + "specgen: rendered output is stale; run `specgen render` and commit the result")
        if check:
            click.echo("rendered output is current")

    @cli.command()
    @click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
    @boundary
    def validate(files: tuple[str, ...]) -> None:
        """Check workload FILES against the schema and the catalog, without planning or writing."""
        from generator.workload import load_workload

        for path in files:
            load_workload(path)
            click.echo(f"{path}: ok")

    @cli.command()
    @click.argument("file", type=click.Path(dir_okay=False))
    @click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True)
    @boundary
    def plan(file: str, fmt: str) -> None:
        """Show the sizing of FILE: the choice, the runners-up and the reasons."""
        from generator.api import plan_file
        from generator.calculator.report import plan_text
        from generator.render.env import to_json
        from generator.render.markdown import render_markdown

        _, result = plan_file(file)
        if fmt == "json":
            click.echo(to_json(result.to_dict()))
        elif fmt == "markdown":
            click.echo(render_markdown(result)["SPEC.md"], nl=False)
        else:
            click.echo(plan_text(result), nl=False)

    @cli.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []})
    @click.pass_context
    def estimate(ctx: click.Context) -> None:
        """Quick calculator for one MODEL (run 'specgen estimate -h' for its options)."""
        from generator.calculator.cli import main as estimate_main

        sys.exit(estimate_main(list(ctx.args)))

    @cli.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []})
    @click.pass_context
    def calibrate(ctx: click.Context) -> None:
        """Compare a run's logs with the prediction; writes a constants: block (see 'specgen calibrate -h')."""
        from generator.calculator.calibrate import main as calibrate_main

        sys.exit(calibrate_main(list(ctx.args)))

    @cli.command()
    @click.argument("old", type=click.Path(dir_okay=False))
    @click.argument("new", type=click.Path(dir_okay=False))
    @click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown", show_default=True)
    @boundary
    def diff(old: str, new: str, fmt: str) -> None:
        """What changing workload OLD into NEW does to the fleet (workload files or spec.json files)."""
        from generator.fleet_diff import diff_plans, load_plan_dict, markdown_diff
        from generator.render.env import to_json

        result = diff_plans(load_plan_dict(old), load_plan_dict(new))
        click.echo(to_json(result) if fmt == "json" else markdown_diff(result), nl=fmt == "json")

    @cli.command()
    @click.option("--constants", is_flag=True, help="Print the engine constants with their defaults and sources instead.")
    @boundary
    def schema(constants: bool) -> None:
        """Print the workload JSON Schema (for editors and CI)."""
        from generator.render.env import to_json
        from generator.sizing.constants import constant_docs
        from generator.workload.schema import workload_schema

        click.echo(to_json(constant_docs() if constants else workload_schema()))

    @cli.command()
    @click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the block to this file instead of stdout.")
    @boundary
    def detect(output: str | None) -> None:
        """Describe this machine as a hardware.fixed block (GPUs, CPU, RAM, swap, NVMe, PCIe links)."""
        from generator.calculator.detect import detect_machine, fixed_block, this_machine, write_block

        text = fixed_block(detect_machine(this_machine()))
        if output:
            write_block(output, text)
            click.echo(f"wrote {output}")
        else:
            click.echo(text, nl=False)

    @cli.command()
    @click.argument("kind", type=click.Choice(["gpus", "platforms", "models", "cpus", "nics", "drives", "prices"]))
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    @boundary
    def catalog(kind: str, as_json: bool) -> None:
        """List catalog GPUs, platforms, models, CPUs, NICs, drives or prices with their ids and key figures."""
        from generator.calculator.catalog_listing import KINDS, listing_rows
        from generator.calculator.report import catalog_rows, catalog_text
        from generator.render.env import to_json

        rows = listing_rows(kind) if kind in KINDS else catalog_rows(kind)
        click.echo(to_json(rows) if as_json else catalog_text(rows), nl=as_json)

    return cli


def _render_all(files: tuple[str, ...], output: str) -> dict[str, dict[str, str]]:
    """Plan and render every file before anything is written (one bad file writes nothing).

    Several files make one tree for one cluster: ``<workload>/...`` each plus the merged ``cluster/`` layer.
    """
    from generator.api import plan_file
    from generator.render import render_plan, render_plans

    planned = [plan_file(path) for path in files]
    if len(planned) == 1:
        loaded, result = planned[0]
        return {output: render_plan(result, loaded.workload)}
    return {output: render_plans([(result, loaded.workload) for loaded, result in planned])}


def _select(files: dict[str, str], targets: tuple[str, ...]) -> dict[str, str]:
    if not targets:
        return files
    prefixes = tuple(prefix for t in targets for prefix in _TARGET_PREFIX[t])
    # in a tree of several workloads, their own files sit one level down (<workload>/terraform/...)
    return {k: v for k, v in files.items() if k.startswith(prefixes) or k.partition("/")[2].startswith(prefixes)}
