"""The ``specgen`` command line: the one place that prints and turns errors into exit codes.

Exit codes: 0 ok; 1 invalid input (schema, semantics, catalog); 2 usage; 3 no feasible plan;
4 ``render --check`` found drift; 5 findings reached the ``--fail-on`` level; 130 interrupted (Ctrl-C).
``specgen estimate`` is dispatched before click is imported (see :mod:`generator.calculator.cli`) to keep its cold
start fast, and so are ``validate`` and ``render`` with plain arguments (see :mod:`generator.plain_args`).
"""

from __future__ import annotations

import errno
import functools
import os
import re
import sys
from collections.abc import Callable, Collection, Sequence

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from typing import Any, NoReturn, TypeVar

    from generator.errors import SpecgenError
    from generator.findings import PlacedError
    from generator.tree_moves import Move
    from generator.workload import LoadedWorkload

    F = TypeVar("F", bound=Callable[..., Any])
    T = TypeVar("T")
#: Most error lines printed for one failure.
MAX_REPORTED = 25
TARGETS = ("spec", "markdown", "terraform", "ansible", "kubernetes")
#: Levels of ``--fail-on``.
LEVELS = ("warning", "error")
_TARGET_PREFIX = {
    "spec": ("spec.json",),
    "markdown": ("SPEC.md",),
    "terraform": ("terraform/",),
    "ansible": ("ansible/",),
    "kubernetes": ("kubernetes/", "kubeadm/", "cluster/"),
}
#: Files a target's own files name and that it writes with them (fix115 item 3: ``--target ansible`` wrote group vars
#: naming ``training/<job>/ds_config.json``, ``deepspeed_config``, and not the file): a DeepSpeed job's config, which the
#: group vars and SPEC.md name. They make no output of their own (a target with none of its own files is still refused).
#: ``training/`` is :func:`generator.render.deepspeed_config.ds_config_path`'s (not imported here: the CLI's start).
_TARGET_COMPANIONS = {"ansible": ("training/",), "markdown": ("training/",)}


def main(argv: list[str] | None = None) -> None:
    """Console entry point (``argv`` None: the process's own arguments, and the process leaves by :func:`_leave`).

    hostile89: Ctrl-C while the command's modules still load (before a command's own handler) printed Python's
    traceback and exited by SIGINT; it says ``Aborted!`` and exits :data:`INTERRUPTED`, as later.
    """
    if argv is None:
        _AS_PROCESS.append(True)
        _mend_closed_streams()
        _leave(lambda: _main(sys.argv[1:]))
    try:
        _main(argv)
    except KeyboardInterrupt:
        sys.exit(_interrupted())


def _leave(run: Callable[[], None]) -> NoReturn:
    """Run the command, flush its output, and end the process there (``os._exit``) with its exit code.

    fix176 item 2: after a complete output the interpreter's own exit ran on, and a Ctrl-C in it, once Python had
    given SIGINT back to the system's default, ended the process by the signal (-2) without a word. Nothing runs after
    the output now: a Ctrl-C up to the flush says ``Aborted!`` and exits :data:`INTERRUPTED`, and from the flush on
    SIGINT is held (``pthread_sigmask``, which raises one already pending), so the process ends with the code it had.
    Output to a closed pipe exits 1 quietly (its estimate printed a BrokenPipeError traceback); a code that is no number
    (``sys.exit("text")``), or another stream that cannot be flushed, leaves by Python's own exit as before.
    """
    try:
        code = _exit_code(run)
        try:
            _flush_streams()
        except OSError as exc:  # a closed pipe: the rest nowhere, exit 1 as a command's own write to it
            if exc.errno == errno.EPIPE:
                code = _closed_pipe()
            elif exc.errno in _UNWRITABLE:
                code = _unwritable_output(exc)
            else:
                sys.exit(code)
            _flush_streams()
        except ValueError:  # a closed stream: Python's exit says so as before
            sys.exit(code)
    except KeyboardInterrupt:
        code = _interrupted()
        try:
            _flush_streams()
        except (KeyboardInterrupt, OSError, ValueError):  # a second Ctrl-C while saying so; a closed stream
            code = INTERRUPTED
    if not isinstance(code, int):
        sys.exit(code)
    os._exit(code)


def _exit_code(run: Callable[[], None]) -> int | str | None:
    """``run``'s exit code: its ``sys.exit``'s, 0 where it returns; :func:`_interrupted` where Ctrl-C stops it."""
    try:
        run()
    except SystemExit as exc:
        return 0 if exc.code is None else exc.code
    except KeyboardInterrupt:
        return _interrupted()
    except OSError as exc:  # the estimate's write to a closed pipe printed a BrokenPipeError traceback (fix176)
        if exc.errno == errno.EPIPE:
            return _closed_pipe()
        if exc.errno in _UNWRITABLE and exc.filename is None:  # a stream's write, not a named file's (those say so)
            return _unwritable_output(exc)
        raise
    return 0


#: Why a write to stdout fails other than a closed pipe: a full disk (``> /dev/full``), a quota, a file past its size
#: limit, an I/O error, a descriptor not open for writing (``1<&-`` reopened read-only).
_UNWRITABLE = frozenset(getattr(errno, name) for name in ("ENOSPC", "EDQUOT", "EFBIG", "EIO", "EBADF") if hasattr(errno, name))


def _mend_closed_streams() -> None:
    """A closed stderr (``2>&-``): messages go nowhere, the exit code stands; a closed stdout (``>&-``): exit 1.

    hostile92: Python leaves a closed standard stream None, and the flush at the end was an ``AttributeError:
    'NoneType' object has no attribute 'flush'`` traceback, exit 1 after a good run (a render's tree written). Nothing
    specgen prints to a closed stdout could be read, so nothing runs: the message says what to give it instead.
    """
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (the process's stderr to its end)
    if sys.stdout is None:
        sys.stderr.write(
            "specgen: error: standard output is closed (>&-), so nothing specgen prints could be read: "
            "give it a file, or /dev/null to drop what it prints\n"
        )
        sys.stderr.flush()
        os._exit(1)


def _unwritable_output(exc: OSError) -> int:
    """Say that stdout cannot be written (a full disk, an I/O error), the rest of it sent nowhere; exit code 1.

    hostile92: ``specgen validate w.yaml > /dev/full`` ended in an ``OSError: [Errno 28] No space left on device``
    traceback.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)  # what remains of the output, and Python's exit flush, go nowhere
    os.dup2(devnull, sys.stdout.fileno())
    try:
        sys.stderr.write(f"specgen: error: cannot write the output: {exc.strerror or exc}\n")
        sys.stderr.flush()
    except OSError:  # stderr on the full disk too: the exit code says it
        os.dup2(devnull, sys.stderr.fileno())
    return 1


def _closed_pipe() -> int:
    """Send what remains of the output (and any message) nowhere, as the pipe reading it is closed; exit code 1."""
    devnull = os.open(os.devnull, os.O_WRONLY)  # nothing more reaches the closed pipe, not even at exit
    os.dup2(devnull, sys.stdout.fileno())
    os.dup2(devnull, sys.stderr.fileno())
    return 1


def _flush_streams() -> None:
    """Flush stdout and stderr, then hold SIGINT: the output is complete."""
    sys.stdout.flush()
    sys.stderr.flush()
    _block_ctrl_c()


def _block_ctrl_c() -> None:
    """Hold SIGINT to the process's end, where the system has signal masks (one already pending is raised here)."""
    import signal

    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def _main(args: list[str]) -> None:
    """Dispatch ``args`` to the quick estimate, calibrate or the planning commands."""
    _escape_what_the_streams_cannot_encode()
    # the Hub client's progress bars (carriage returns in CI logs) and warnings (what an error says again) are off in
    # the CLI, unless asked for; a library caller keeps its own settings (newuser58 items 7-8)
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("HF_HUB_VERBOSITY", "error")
    if args[:1] == ["estimate"]:
        from generator.calculator.cli import main as estimate_main

        sys.exit(_unless_interrupted(lambda: estimate_main(args[1:])))
    if args[:1] == ["calibrate"]:
        from generator.calculator.calibrate import main as calibrate_main

        sys.exit(_unless_interrupted(lambda: calibrate_main(args[1:])))
    from generator.collector import fewer_full_collections  # not the estimate's: contextlib is left out of its start

    with fewer_full_collections():  # planning's commands: the collector paced for them, a library caller's left alone
        _plan_command(args)


def _plan_command(args: list[str]) -> None:
    """Run one of the commands that plan (every one but ``estimate`` and ``calibrate``)."""
    from generator import plain_args  # the plain forms CI uses run without importing click (see that module)

    plain = "_SPECGEN_COMPLETE" not in os.environ  # shell completion is click's
    if plain and args[:1] == ["validate"] and (checks := plain_args.validate_params(args[1:], LEVELS)) is not None:
        sys.exit(_standalone(lambda: validate_files(echo=_echo, **checks), checks["files"]))
    if plain and args[:1] == ["render"] and (params := plain_args.render_params(args[1:], TARGETS, LEVELS)) is not None:
        sys.exit(_standalone(lambda: render_files(**params, echo=_echo), params["files"]))
    cli = _build_cli()
    cli.main(args=args, prog_name="specgen")


def _escape_what_the_streams_cannot_encode() -> None:
    """Write a character stdout or stderr cannot encode as its escape (backslashreplace), not as a traceback.

    hostile78 item 7: under ``PYTHONIOENCODING=latin-1`` (or a Windows code page) ``diff`` and ``plan --format markdown``
    crashed on their first arrow. A UTF-8 stream encodes everything and is left as it is.
    """
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("_", "-")
        reconfigure = getattr(stream, "reconfigure", None)
        if encoding not in ("utf-8", "utf8") and reconfigure is not None and getattr(stream, "errors", "") == "strict":
            reconfigure(errors="backslashreplace")


def _unless_interrupted(run: Callable[[], int]) -> int:
    """``run``'s exit code, or :data:`INTERRUPTED` where Ctrl-C stops it (a traceback before)."""
    try:
        return run()
    except KeyboardInterrupt:
        return _interrupted()


def _echo(message: str, err: bool = False) -> None:
    """``click.echo`` of one line of text: to stdout (stderr with ``err``), flushed; ANSI codes dropped off a terminal."""
    stream = sys.stderr if err else sys.stdout
    if "\x1b" in message and not stream.isatty():
        import re

        message = re.sub(r"\033\[[;?0-9]*[a-zA-Z]", "", message)  # as click strips them
    print(message, file=stream, flush=True)


def _standalone(run: Callable[[], None], files: Sequence[str]) -> int:
    """The exit code of a command run as click's standalone mode runs one, with the group's defaults.

    A :class:`SpecgenError` is reported (``files``: the workload files given); Ctrl-C exits 130 (:func:`_interrupted`),
    end of input prints ``Aborted!`` and exits 1; a closed output pipe exits 1 quietly.
    """
    from generator import input_files
    from generator.errors import SpecgenError, arithmetic_error

    input_files.allow_outside_paths.set(False)  # as the group's callback sets it
    try:
        run()
    except SpecgenError as exc:
        return _report(exc, files)
    except ArithmeticError as exc:
        return _report(arithmetic_error(exc), files)
    except KeyboardInterrupt:
        return _interrupted()
    except EOFError:
        print("\nAborted!", file=sys.stderr)
        return 1
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        return _closed_pipe()
    return 0


#: Exit code of a run stopped by Ctrl-C: 128 + SIGINT, as a shell reports a process SIGINT ended.
INTERRUPTED = 130


#: Holds True where the CLI runs as the process (:func:`main` with no arguments), which ends once Ctrl-C stops it.
_AS_PROCESS: list[bool] = []


def _hold_ctrl_c() -> None:
    """Hold SIGINT to the process's end (where the system has signal masks): a run already stopped has nothing left.

    hostile91: Ctrl-C held down (the terminal repeats it) while "Aborted!" printed raised in the handler saying so,
    a traceback and death by SIGINT. One that came before the mask is raised as it is set, and taken here.
    """
    for _ in range(3):
        try:
            _block_ctrl_c()
            return
        except KeyboardInterrupt:
            continue


def _interrupted() -> int:
    """Say that Ctrl-C stopped the run, and what a render had written by then; :data:`INTERRUPTED`.

    newuser75 item 5: it exited 1, "Aborted!", invalid input's code, also where the new tree had been swapped in. The
    swap is atomic and recorded with Ctrl-C held off (:func:`generator.writer._swap`): each output directory named
    here holds the new render in full, any other is as it was.
    """
    if _AS_PROCESS:
        _hold_ctrl_c()
    writer = sys.modules.get("generator.writer")
    replaced = list(getattr(writer, "REPLACED", ()))
    if replaced:
        said = ", ".join(replaced)
        print(f"\nAborted! Interrupted after the new render was written in full to {said}.", file=sys.stderr)
    elif writer is not None:
        print("\nAborted! Interrupted before any output directory was changed.", file=sys.stderr)
    else:
        print("\nAborted!", file=sys.stderr)
    return INTERRUPTED


def validate_files(
    files: tuple[str, ...],
    echo: Callable[[str], object],
    together: bool = False,
    fail_on: str | None = None,
    gitlab_report: str | None = None,
) -> None:
    """Check each workload file (schema, catalog, early feasibility) and ``echo`` its ok line; then raise their errors.

    Every bad file's errors, exiting as the first bad file does (newuser27 item 13: CI learnt of one bad file a push).
    ``together``: the files are also checked as ``render`` checks a tree of them (newuser33 item 9): each file once, one
    cluster, names of their own; files validated one by one (a folder of unrelated workloads) need not be one cluster.
    ``fail_on``: exit 5 (:class:`~generator.errors.FindingsError`) where a valid file's finding reaches that level, as
    ``plan`` and ``render`` do (newuser104: a CI job had no warnings-as-errors for ``validate``); an error's code first.
    ``gitlab_report``: every file's findings, and each error as a blocker, in a GitLab code-quality report, as ``render``.
    """
    from generator.errors import MultipleInputError, SpecgenError, one_line
    from generator.findings import finding_fields, locate_findings
    from generator.planner.early import early_checks
    from generator.planner.host_address import missing_address_findings
    from generator.planner.owned_outlet_early import owned_outlet_findings
    from generator.planner.owned_rack_fit import owned_rack_findings
    from generator.planner.setting_findings import (
        implausible_setting_findings,
        model_findings,
        unused_setting_findings,
    )
    from generator.planner.unserved_precision_early import early_unserved_precision_findings
    from generator.workload import load_workload

    if gitlab_report:
        from generator.writer import check_report_path

        check_report_path(gitlab_report, files)
    if together and len(files) > 1:  # a file given twice under two names, as render refuses it first (fuzz27 L11)
        from generator.input_files import check_distinct_files

        _errors_to_gitlab(gitlab_report, files, lambda: check_distinct_files(list(files)))
    failed: list[SpecgenError] = []
    valid: list[tuple[str, LoadedWorkload, list[Any]]] = []
    fields: list[str] = []
    # in path order, as render takes them: the exit code is the first bad file's whatever order a shell's glob gave
    # (review68 item 2: `validate zz.yaml aa.yaml` exited 1 where render of them exits 3)
    for path in sorted(files):
        try:
            loaded = load_workload(path)
            early_checks(loaded)
        except SpecgenError as exc:
            failed.append(exc)
            continue
        # the warnings that read the workload alone, as plan says them (fuzz24 item M4); exit 0 still
        said = [
            *unused_setting_findings(loaded.workload),
            *implausible_setting_findings(loaded.workload),
            *model_findings(loaded),
            *owned_rack_findings(loaded),  # newuser98: owned servers no rack holds, which plan leaves free
            *early_unserved_precision_findings(loaded),  # newuser110: NVFP4 of a BF16 checkpoint said "ok"
            *missing_address_findings(loaded.workload),  # newuser112: a host left without its ansible_host
            *owned_outlet_findings(loaded.workload),  # newuser112: an owned box its stated draw puts past its outlet
        ]
        valid.append((path, loaded, list(locate_findings(loaded, said))))
        fields.extend(finding_fields(loaded, said))
    found = [finding for _, _, located in valid for finding in located]
    if together and not failed and len(valid) > 1:  # as render checks the one tree they make (newuser33 item 9)
        _errors_to_gitlab(gitlab_report, files, lambda: _check_together([(p, w) for p, w, _ in valid]), found, fields)
    for path, _, located in valid:  # "ok" only for files no error then names (fuzz27 L11)
        _print_findings(located, None, ())
        echo(one_line(f"{path}: ok"))  # hostile85 item 5: a file name's newline began a line such as '::error::'
    if failed:
        error = failed[0] if len(failed) == 1 else MultipleInputError(failed)
        _errors_to_gitlab(gitlab_report, files, lambda: _raise(error), found, fields)
    if gitlab_report:
        from generator.findings import gitlab_report as gitlab_text

        _write_gitlab(gitlab_report, gitlab_text(found, fields), files)
    _fail_on(found, fail_on)


def _raise(error: Exception) -> NoReturn:
    raise error


def _check_together(valid: list[tuple[str, LoadedWorkload]]) -> None:
    """Raise what render refuses of valid workload files rendered into one tree (one cluster).

    Names of their own, one cluster pulling from one registry, no owned host or address in two files (fuzz30 item 2:
    a boot MAC, an address, a BMC); then the pool names and bought hosts' placeholders, which come of each file's plan:
    each is planned as render plans it (fuzz30 item 12), and one the planner refuses is left to plan and render to
    report.
    """
    from generator.batch import owned_host_fields, planned_cluster_names
    from generator.errors import MultipleInputError
    from generator.render import (
        ClusterNames,
        check_cluster_names,
        check_one_cluster,
        check_same_mirrors,
        check_workload_names,
        pools_cluster,
    )
    from generator.render.mirrors import cluster_mirror
    from generator.workload.host_network import host_addresses, tree_address_errors
    from generator.workload.loader import given_field

    ordered = sorted(valid, key=lambda v: (v[1].workload.name, v[0]))  # as render meets them
    check_workload_names([(path, loaded.workload.name) for path, loaded in ordered], given_field)
    check_one_cluster([(path, pools_cluster(loaded.workload)) for path, loaded in ordered], given_field)
    # one registry for the cluster's stack, as render refuses it (review26 item 2)
    check_same_mirrors([(path, pools_cluster(loaded.workload), cluster_mirror(loaded.workload.mirrors))
                        for path, loaded in ordered], given_field)  # fmt: skip
    # the hosts the workloads name (fuzz28 M1), before any plan
    owned = [(path, owned_host_fields(loaded.workload)) for path, loaded in ordered]
    check_cluster_names([ClusterNames(path, (), list(hosts), tuple(hosts.items())) for path, hosts in owned], given_field)
    clashes = tree_address_errors([(path, host_addresses(loaded.workload)) for path, loaded in ordered])
    if clashes:
        raise clashes[0] if len(clashes) == 1 else MultipleInputError(clashes)
    planned = [planned_cluster_names(path, loaded) for path, loaded in ordered]
    check_cluster_names([names for names in planned if names is not None], given_field)


def render_files(
    files: tuple[str, ...],
    output: str,
    check: bool,
    targets: tuple[str, ...],
    jobs: int | None,
    fail_on: str | None,
    gitlab_report: str | None,
    echo: Callable[..., object],
    prune: bool = False,
) -> None:
    """Validate, plan and render workload ``files`` into the tree at ``output`` (or compare with it); ``echo`` prints.

    ``prune``: the workload trees of the output that no file given renders are removed (else the render is refused).
    """
    from generator import writer
    from generator.batch import output_files, render_many, tree_summary, trees_in, unlisted_trees
    from generator.errors import DriftError, OutputError, one_line
    from generator.tree_moves import refuse_stranding
    from generator.writer import (
        check_report_path,
        diff_trees,
        interrupted_leftovers,
        read_manifest,
        read_tree,
        refuse_conflicts,
        refuse_non_directory,
        refuse_symlinks,
        refuse_unowned,
        with_manifest,
        write_tree,
    )

    # what an interrupt of this render says it wrote: this render's swaps alone (review77 item 5: a second render in
    # one process, a library caller's or a test's, named the first one's directory)
    writer.REPLACED.clear()
    if gitlab_report:
        check_report_path(gitlab_report, files, output)
    from generator.calculator.hub import outage_fails

    outage_fails(check)  # fix143: a Hub outage while the safetensors headers are read is exit 75, never a false drift
    try:
        results = _errors_to_gitlab(gitlab_report, files, lambda: render_many(list(files), jobs))
    finally:
        outage_fails(False)
    located = [f for r in results for f in r.findings]
    fields = [field for r in results for field in r.finding_fields]  # newuser53 item 4: the report's fingerprints
    _print_findings(located, gitlab_report, files, fields)

    def write_or_check() -> None:
        single = len(files) == 1
        depth = 0 if single else 1
        rendered = output_files(results, single)
        _refuse_empty_targets(output, targets, rendered, depth)
        refuse_non_directory(output, output)  # fuzz14 item 7: a file read as an empty tree, "stale"; fix146: a loop
        if check:
            target = refuse_symlinks(output, files)  # fuzz25 L6: read only where a render would write
            refuse_unowned(output)  # newuser82 item 4: the directory a render refuses is not "stale"
            if not targets:  # hostile87: nor an entry of the user's where a file goes (--target keeps the others')
                refuse_conflicts(output, target, rendered)
            for leftover in interrupted_leftovers(output, target):  # newuser53 item 9
                echo(one_line(f"specgen: {leftover} was left by an interrupted render (not part of the output; the "
                              "next render recovers or removes it): do not commit it"), err=True)  # fmt: skip
            # only the files specgen owns are compared (terraform state and the like are not read)
            current = read_tree(output)
            full = with_manifest(rendered)
            compared = _select(current, targets, depth), _select(full, targets, depth)
            text = diff_trees(*compared)
            wanted = trees_in(rendered)
            unlisted = [] if single else unlisted_trees(output, trees_in(current) | wanted)
            if text or unlisted:
                names = {r.name for r in results}
                # newuser53 item 3: a tree the render moves (flat <-> a tree of each workload) read "removed" or
                # "missing", as render's moves say it; and a render that removes a tree needs --prune
                moves = _tree_moves(output, names, single)
                summary = ""
                if not single or trees_in(current) or moves:
                    changed = {p.split("/", 1)[0] for p in {*current, *full} if "/" in p and current.get(p) != full.get(p)}
                    summary = tree_summary(trees_in(current), wanted, changed, unlisted, moves)
                from generator.fleet_diff import drift_replacement_lines  # only on drift: render's cold start

                summary += "".join(f"{line}\n" for line in drift_replacement_lines(current, full))
                try:  # the drift is the command's document: stdout, as a patch
                    echo(f"{text}{summary}".rstrip("\n"))
                except BrokenPipeError:  # its reader stopped early (| head): the verdict's exit code stands
                    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                from generator.spec_stamp import drift_stamp_notes

                for note in drift_stamp_notes(current, full, output):  # fix160: a tree of another specgen's
                    echo(note, err=True)
                from generator.drift_verdict import drifted_entries, stale_verdict

                pruned = bool(_dropped_trees(output, names, single)[0])
                drifted = drifted_entries(*compared, unlisted)
                raise DriftError(f"specgen: {stale_verdict(files, output, targets, pruned, drifted)}")
            # newuser53 item 1: the verdict goes where the stale one goes, so that stdout (`> drift.patch`) holds
            # only the drift and is empty when there is none
            echo("specgen: rendered output is current", err=True)
        else:
            # --target: the other outputs' owned files stay as they are on disk, and in the manifest
            owned = (read_manifest(output) or []) if targets else []
            keep = set(owned) - set(_select(dict.fromkeys(owned, ""), targets, depth))
            wanted_files = _select(rendered, targets, depth)
            if keep:
                _refuse_another_plans_outputs(output, targets, keep, rendered, depth)
            names = {r.name for r in results}
            dropped, _ = _dropped_trees(output, names, single)
            if dropped and not prune:
                _refuse_dropping(output, dropped, results[0].name if single else None)
            if dropped and targets:  # fuzz28 H1: the other outputs of a dropped tree stayed, said removed
                raise OutputError(
                    f"{output}: --prune removes whole workload trees ({', '.join(dropped[:6])}), and --target "
                    f"{' '.join(targets)} renders only some outputs, which would leave the rest of them; render every "
                    "output with --prune (without --target); nothing was written"
                )
            # fuzz31 item 3: a tree moved or removed left the user's Terraform state behind, and was said "removed"
            listed = read_manifest(output) or []
            if not trees_in(listed) and _flat_workload(output, listed) is None:
                _refuse_unnamed_state(output, listed, wanted_files)
            moves = _tree_moves(output, names, single)
            moved = refuse_stranding(output, listed, moves, results[0].name if single else None, rendered)
            for note in write_tree(wanted_files, output, keep=keep, workloads=files):
                echo(f"specgen: {note}", err=True)
            for note in moved:
                echo(one_line(f"specgen: {note}"), err=True)
            for move in moves:
                old = os.path.join(output, move.old) if move.old else output
                if move.new is None:
                    echo(one_line(f"specgen: removed the tree of workload {move.workload!r} ({old})"), err=True)
                else:
                    new = os.path.join(output, move.new) if move.new else output
                    echo(one_line(f"specgen: moved the tree of workload {move.workload!r} from {old} to {new}"), err=True)
            if single:
                echo(one_line(f"wrote {len(wanted_files)} files to {output}"))  # a newline in -o stays on the line
            for result in [] if single else results:
                count = sum(1 for rel in wanted_files if rel.startswith(result.name + "/"))
                echo(one_line(f"wrote {count} files to {os.path.join(output, result.name)}"))
            if not single:
                echo(one_line(_shared_written(output, wanted_files, names)))

    # an error past planning (workloads that clash in one tree, stale output, an unwritable tree) stops the run too
    _errors_to_gitlab(gitlab_report, files, write_or_check, located, fields)
    _fail_on(located, fail_on)


def _shared_written(output: str, written: Collection[str], names: Collection[str]) -> str:
    """The line saying what a render of several files wrote outside the workloads' trees, the root's manifest with it.

    newuser53 item 10: ``wrote 10 files to infra/rag`` was said of each tree, and nothing of the shared ``cluster/``
    and ``terraform/main.tf`` or the manifest, which are in the tree the reviewer diffs.
    """
    from generator.words import listed
    from generator.writer import MANIFEST

    shared = [rel for rel in written if rel.split("/", 1)[0] not in names]
    directories = sorted({rel.split("/", 1)[0] + "/" for rel in shared if "/" in rel})
    what = f"the workloads' shared {listed(directories)}, and " if directories else ""
    return f"wrote {len(shared) + 1} files to {output} ({what}the tree's {MANIFEST})"


def _errors_to_gitlab(
    gitlab_report: str | None,
    workloads: Sequence[str],
    run: Callable[[], T],
    findings: list[tuple[str, str, str, str]] | None = None,
    fields: Sequence[str] | None = None,
) -> T:
    """``run()``; with ``--gitlab-report``, an error that stops the run goes to the report as a blocker, then on.

    ``findings`` already reported stay in the report beside the blocker (``fields``: theirs, for their fingerprints).

    An error that names no file is reported at the first of ``workloads``.

    A plain wrapper, not a context manager: ``contextlib`` would cost the estimate's cold start an import.
    """
    from generator.errors import SpecgenError

    try:
        return run()
    except SpecgenError as exc:
        if gitlab_report:
            from generator.findings import gitlab_error_report

            try:
                placed = _placed_errors(exc, workloads)
                text = gitlab_error_report(placed, workloads[0], findings or [], fields if findings else None)
                _write_gitlab(gitlab_report, text, workloads)
            except SpecgenError as unwritten:  # the workload's error stays the one reported, with its exit code
                print(f"specgen: error: {unwritten}", file=sys.stderr)
        raise


def _error_lines(exc: SpecgenError) -> list[str]:
    from generator.errors import MultipleInputError, one_line

    return [one_line(str(e)) for e in (exc.errors if isinstance(exc, MultipleInputError) else [exc])]


def _is_drift(exc: SpecgenError) -> bool:
    from generator.errors import DriftError

    return isinstance(exc, DriftError)


def _given_files(params: dict[str, Any]) -> tuple[str, ...]:
    """The workload files a command was given: its FILES, PATHS or FILE argument (none for the others)."""
    given = params.get("files") or params.get("paths") or params.get("file")
    return (given,) if isinstance(given, str) else tuple(given or ())


def _drift_verdict(exc: SpecgenError) -> str:
    """A drift's one-line verdict for CI reports: its message without the ``specgen:`` a log line starts with."""
    return str(exc).removeprefix("specgen: ")


def _placed_errors(exc: SpecgenError, files: Sequence[str]) -> list[PlacedError]:
    """Each error of ``exc`` where CI reports show it: at its location, never read back out of its text (item 7).

    ``files``: the workload files the command was given; an error without a location is placed at one of them only
    where that file's whole name begins it. A drift is the run's, placed nowhere.
    """
    from generator.errors import MultipleInputError
    from generator.findings import PlacedError, place_error

    if _is_drift(exc):
        return [PlacedError(_drift_verdict(exc))]
    errors = exc.errors if isinstance(exc, MultipleInputError) else [exc]
    return [place_error(str(e), e.location, files) for e in errors]


def _report(exc: SpecgenError, files: Sequence[str] = ()) -> int:
    """Print ``exc`` on stderr (and as GitHub annotations in Actions); its exit code. ``files``: the workloads given."""
    drift = _is_drift(exc)
    lines = _error_lines(exc)
    if len(lines) > MAX_REPORTED:
        lines = [*lines[:MAX_REPORTED], f"... and {len(lines) - MAX_REPORTED:,} more errors not shown"]
    for line in lines:
        print(line if drift else f"specgen: error: {line}", file=sys.stderr)
    if os.environ.get("GITHUB_ACTIONS") == "true":
        from generator.findings import PlacedError, github_error

        placed = _placed_errors(exc, files)
        if len(placed) > MAX_REPORTED:
            placed = [*placed[:MAX_REPORTED], PlacedError(lines[-1])]
        for error in placed:
            print(github_error(error), file=sys.stderr)  # stdout stays the command's document
    return exc.exit_code


def _build_cli() -> Any:
    import click

    from generator.errors import SpecgenError, arithmetic_error
    from generator.input_files import dash_output
    from generator.plain_args import RENDER_DEFAULTS

    def _not_empty(ctx: click.Context, param: click.Parameter, value: str) -> str:
        if not value.strip():  # "-o ''" named no directory ("refusing to write into : ...")
            raise click.BadParameter("is empty: name the output directory")
        if value == "-":  # hostile92: a directory named '-' was written, where '-' means standard output
            raise click.BadParameter(dash_output("the output directory"))
        return value

    def _no_empty_file(what: str) -> Callable[[click.Context, click.Parameter, str | None], str | None]:
        def check(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
            if value is not None and not value.strip():  # fuzz27 L7: "" wrote no report, without a word
                raise click.BadParameter(f"is empty: name {what}")
            if value == "-":  # hostile92: a file named '-' was written
                raise click.BadParameter(dash_output(what))
            return value

        return check

    _no_empty_report = _no_empty_file("the report's file")

    def boundary(func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return func(*args, **kwargs)
            except SpecgenError as exc:
                sys.exit(_report(exc, _given_files(kwargs)))
            except ArithmeticError as exc:
                sys.exit(_report(arithmetic_error(exc), _given_files(kwargs)))
            except KeyboardInterrupt:  # not click's "Aborted!" and 1, invalid input's code (newuser75 item 5)
                sys.exit(_interrupted())

        return wrapper  # type: ignore[return-value]

    class _GivenOnce(click.Command):
        """A command that refuses a single-valued option given twice.

        hostile78 item 13: ``render -o A -o B`` wrote B alone, without a word (click keeps the last value). Repeatable
        options (``--target``) and flags are not checked.
        """

        def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
            given = list(args)
            rest = super().parse_args(ctx, list(args))  # click's own errors, and --help, first
            seen: set[str] = set()
            for param in self.make_parser(ctx).parse_args(args=given)[2]:
                if not isinstance(param, click.Option) or param.multiple or param.count or param.is_flag:
                    continue
                if param.name in seen:
                    names = " / ".join(f"'{o}'" for o in param.opts)
                    raise click.UsageError(f"Option {names} is given more than once; give it once (it takes one value)", ctx)
                seen.add(param.name or "")
            return rest

    @click.group(context_settings={"help_option_names": ["-h", "--help"]})
    @click.version_option(package_name="specgen")
    @click.option(
        "--allow-outside-paths", is_flag=True, help="Let model paths in a workload lie outside its repository (git root)."
    )
    def cli(allow_outside_paths: bool) -> None:
        """Size AI workloads into GPU hardware and render Terraform, Ansible and Kubernetes code."""
        from generator import input_files

        input_files.allow_outside_paths.set(allow_outside_paths)

    cli.command_class = _GivenOnce

    fail_on = click.option(
        "--fail-on",
        type=click.Choice(LEVELS),
        help="Exit 5 when a finding reaches this level (findings always go to stderr with file:line:col).",
    )
    gitlab = click.option(
        "--gitlab-report",
        type=click.Path(dir_okay=False),
        help="Also write the findings as a GitLab code-quality report (JSON) to this file.",
        callback=_no_empty_report,
    )

    @cli.command()
    @click.argument("files", nargs=-1, required=True, type=click.Path())
    @click.option(
        "-o", "--output", default=RENDER_DEFAULTS["output"], show_default=True, help="Output directory.", callback=_not_empty
    )
    @click.option("--check", is_flag=True, help="Compare with the committed output instead of writing; exit 4 on drift.")
    @click.option(
        "--prune", is_flag=True, help="Remove the workload trees of the output that no file given renders (else refused)."
    )
    @click.option(
        "--target", "targets", multiple=True, type=click.Choice(TARGETS), help="Render only these outputs (repeatable)."
    )
    @click.option(
        "-j",
        "--jobs",
        type=click.IntRange(min=1),
        default=RENDER_DEFAULTS["jobs"],
        show_default="on Linux every core this process may run on, else 1",
        help="Plan files on this many cores.",
    )
    @fail_on
    @gitlab
    @boundary
    def render(
        files: tuple[str, ...],
        output: str,
        check: bool,
        prune: bool,
        targets: tuple[str, ...],
        jobs: int | None,
        fail_on: str | None,
        gitlab_report: str | None,
    ) -> None:
        """Validate, plan and render workload FILES into an output tree."""
        render_files(files, output, check, targets, jobs, fail_on, gitlab_report, click.echo, prune)

    @cli.command()
    @click.argument("files", nargs=-1, required=True, type=click.Path())
    @click.option(
        "--together",
        is_flag=True,
        help="Also check the files as render checks the one tree they make: each file once, one cluster, own names, "
        "no host's MAC or address in two files; pool names come of each file's plan, so the files are planned too.",
    )
    @fail_on
    @gitlab
    @boundary
    def validate(files: tuple[str, ...], together: bool, fail_on: str | None, gitlab_report: str | None) -> None:
        """Check workload FILES: schema, catalog and every feasibility check decidable without the planner's search."""
        validate_files(files, click.echo, together, fail_on, gitlab_report)

    @cli.command()
    @click.argument("file", type=click.Path())
    @click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True)
    @fail_on
    @gitlab
    @boundary
    def plan(file: str, fmt: str, fail_on: str | None, gitlab_report: str | None) -> None:
        """Show the sizing of FILE: the choice, the runners-up and the reasons."""
        from generator.api import plan_as_deployed
        from generator.calculator.report import plan_text
        from generator.findings import finding_fields, locate_findings
        from generator.render.env import to_json
        from generator.render.markdown import render_markdown

        if gitlab_report:
            from generator.writer import check_report_path

            check_report_path(gitlab_report, [file])
        loaded, result = _errors_to_gitlab(gitlab_report, [file], lambda: plan_as_deployed(file))
        located = list(locate_findings(loaded, result.findings))
        _print_findings(located, gitlab_report, [file], finding_fields(loaded, result.findings))
        if fmt == "json":
            click.echo(to_json(result.to_dict()))
        elif fmt == "markdown":
            click.echo(render_markdown(result)["SPEC.md"], nl=False)
        else:
            click.echo(plan_text(result), nl=False)
        _fail_on(located, fail_on)

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
    @click.argument("paths", nargs=-1, type=click.Path())
    @click.option("--base", help="Compare workload FILES with their version at this git revision (no checkout).")
    @click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown", show_default=True)
    @click.option(
        "--exit-code",
        "exit_code",
        is_flag=True,
        help="Exit 6 where a file changes the fleet (as git diff --exit-code), 0 where none does.",
    )
    @boundary
    def diff(paths: tuple[str, ...], base: str | None, fmt: str, exit_code: bool) -> None:
        """What changing workload OLD into NEW does to the fleet (workload files or spec.json files).

        With --base REV: what the working tree's changes to the workload FILES do, against REV; a rendered tree's
        spec.json is compared as committed at REV and now (what applying the committed trees does).
        """
        from generator.pr_diff import FLEET_CHANGED_EXIT_CODE
        from generator.render.env import to_json

        if base is not None:
            from generator.pr_diff import compare_with_base, fleet_changes, markdown, unplanned_error

            if not paths:
                raise click.UsageError("--base needs the workload FILES to compare")
            from generator.calculator.hub import outage_fails

            outage_fails()  # fix143: a Hub outage on the safetensors headers is `unreachable` (75), not a fleet change
            try:
                compared = compare_with_base(base, list(paths))
            finally:
                outage_fails(False)
            click.echo(to_json(compared) if fmt == "json" else markdown(compared), nl=fmt == "json")
            failed = unplanned_error(compared)  # the report says why; the exit code fails the job (newuser24 item 2)
            if failed is not None:
                raise failed
            if exit_code and fleet_changes(compared):  # newuser82 item 8: a gate without parsing the JSON
                sys.exit(FLEET_CHANGED_EXIT_CODE)
            return
        if len(paths) != 2:
            raise click.UsageError("give OLD and NEW (two workload or spec.json files), or --base REV and FILES")
        from generator.pr_diff import compare_two, two_files_change_fleet, two_files_markdown

        result = compare_two(*paths)
        click.echo(to_json(result) if fmt == "json" else two_files_markdown(result), nl=fmt == "json")
        if exit_code and two_files_change_fleet(result):
            sys.exit(FLEET_CHANGED_EXIT_CODE)

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
    @click.option(
        "-o",
        "--output",
        type=click.Path(dir_okay=False),
        callback=_no_empty_file("the block's file (or leave -o out to print it)"),  # hostile88: "" printed it
        help="Write the block to this file instead of stdout.",
    )
    @boundary
    def detect(output: str | None) -> None:
        """Describe this machine as a hardware.fixed block (GPUs, CPU, RAM, swap, NVMe, PCIe links)."""
        from generator.calculator.block_file import write_block
        from generator.calculator.detect import detect_machine, fixed_block, this_machine
        from generator.errors import one_line

        facts = detect_machine(this_machine())
        text = fixed_block(facts)
        if "gpu_failed" in facts and "gpu" not in facts:  # the block says it too; with -o, a file no one reads yet
            click.echo(one_line(f"specgen: warning: {facts['gpu_failed'].how}: the block has no gpu"), err=True)
        if output:
            write_block(output, text)
            click.echo(one_line(f"wrote {output}"))
        else:
            click.echo(text, nl=False)

    @cli.command()
    @click.argument("kind", type=click.Choice(["gpus", "platforms", "models", "cpus", "nics", "drives", "prices", "purchases"]))
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    @boundary
    def catalog(kind: str, as_json: bool) -> None:
        """List catalog GPUs, platforms, models, CPUs, NICs, drives, prices or purchase prices with ids and key figures."""
        from generator.calculator.catalog_listing import KINDS, listing_rows
        from generator.calculator.report import catalog_rows, catalog_text
        from generator.render.env import to_json

        rows = listing_rows(kind) if kind in KINDS else catalog_rows(kind)
        if kind == "purchases" and not as_json:  # each basis to its first clause (newuser77 item 7); the JSON has all
            from generator.calculator.catalog_listing import purchase_table_rows

            rows = purchase_table_rows(rows)
        # purchases: whether each product is still sold new, after its price and date (newuser30 item 11)
        # prices: its date and region before whose table it is (newuser83 item 4)
        shown = {"purchases": 7, "prices": 8}.get(kind, 6)
        click.echo(to_json(rows) if as_json else catalog_text(rows, shown), nl=as_json)

    return cli


def _print_findings(
    located: list[tuple[str, str, str, str]],
    gitlab_report: str | None,
    workloads: Sequence[str],
    fields: Sequence[str] | None = None,
) -> None:
    """Warnings and errors on stderr as ``file:line:col: level: message``; GitHub annotations in Actions.

    ``fields``: each finding's field, which identifies it in the GitLab report (:func:`~generator.findings.finding_fields`).

    The annotations go to stderr too (the Actions runner reads workflow commands from both streams), so stdout
    holds only the command's document (``plan --format json``, the diff comment).
    """
    from generator.findings import at_least, github_annotation, text_line
    from generator.findings import gitlab_report as gitlab_text

    shown = at_least(located, "warning")
    for finding in shown:
        print(text_line(finding), file=sys.stderr)
    if os.environ.get("GITHUB_ACTIONS") == "true":
        for finding in shown:
            print(github_annotation(finding), file=sys.stderr)
    if gitlab_report:
        _write_gitlab(gitlab_report, gitlab_text(located, fields), workloads)


def _write_gitlab(path: str, text: str, workloads: Sequence[str]) -> None:
    """Write the report; not through a symlink a pull request could commit on the report's path (as for the tree).

    A workload in no git work tree and outside the current directory is said on stderr: its issues carry its absolute
    path, which GitLab links to no file (newuser74 item 14).
    """
    from generator.errors import one_line
    from generator.findings import outside_repository
    from generator.writer import write_report

    write_report(path, text, workloads)
    for workload in workloads:
        if outside_repository(workload):
            print(
                f"specgen: warning: {one_line(workload)} is in no git repository and outside the working directory: its "
                "issues in the GitLab report carry its absolute path, which GitLab links to no file; run specgen from "
                "the repository that holds it",
                file=sys.stderr,
            )


def _fail_on(located: list[tuple[str, str, str, str]], level: str | None) -> None:
    from generator.errors import FindingsError
    from generator.findings import at_least

    if level and (hits := at_least(located, level)):
        raise FindingsError(f"{len(hits)} finding(s) at level '{level}' or above (--fail-on {level})")


def _dropped_trees(output: str, names: set[str], single: bool) -> tuple[list[str], bool]:
    """The workloads whose trees at ``output`` a render of workloads ``names`` would remove; whether the tree is flat.

    A render of one file makes the flat layout of one workload, so it removes every tree of a cluster's root; a flat
    tree is removed by a render that does not render its workload (review24 L5: rendering two files over another
    workload's flat tree removed it without a word).
    """
    from generator.batch import trees_in
    from generator.writer import read_manifest

    listed = read_manifest(output) or []
    current = trees_in(listed)
    if current:
        return sorted(current if single else current - names), False
    flat = _flat_workload(output, listed)
    return ([] if flat is None or flat in names else [flat]), True


#: The name a rendered file records its workload by, past ``spec.json``: Ansible's group vars, Kubernetes' node labels.
_WORKLOAD_LINE = re.compile(r"^\s*(?:specgen_workload|specgen-workload): (?:!unsafe )?['\"]?([^'\"\s]+)['\"]?\s*$", re.M)


def _tree_moves(output: str, names: Collection[str], single: bool) -> list[Move]:
    """The workload trees of ``output`` a render of workloads ``names`` moves or removes (``single``: one file)."""
    from generator.batch import trees_in
    from generator.tree_moves import tree_moves
    from generator.writer import read_manifest

    listed = read_manifest(output) or []
    current = trees_in(listed)
    return tree_moves(current, None if current else _flat_workload(output, listed), names, single)


def _flat_workload(output: str, listed: Collection[str] | None = None) -> str | None:
    """The workload whose flat tree ``output`` holds; None where no file of it names one.

    Its ``spec.json`` names it; a tree rendered without one (``--target``, or the file deleted) names it in the files
    it holds (fuzz32 item 3: a render of another workload replaced such a tree and left its Terraform state beside the
    new module): the Terraform values' ``workload``, then the Ansible group vars' ``specgen_workload``, then the
    Kubernetes node labels' ``specgen-workload``. ``listed``: the manifest's paths (None: read it).
    """
    import json

    from generator.errors import SpecgenError
    from generator.input_files import MAX_SPEC_BYTES, read_text_limited
    from generator.writer import read_manifest

    listed = (read_manifest(output) or []) if listed is None else listed
    tfvars = "terraform/specgen.auto.tfvars.json"
    for rel, key in (("spec.json", ("plan", "workload")), (tfvars, ("workload",))):
        if rel not in listed:
            continue
        try:
            value = json.loads(read_text_limited(os.path.join(output, *rel.split("/")), MAX_SPEC_BYTES, rel))
            for part in key:
                value = value[part]
        except (SpecgenError, ValueError, KeyError, TypeError, RecursionError):
            continue
        if isinstance(value, str) and value.isprintable():  # hostile84: "x\ud800" (valid JSON) was a traceback when said
            return value
    tagged = [rel for rel in listed if rel.startswith(("ansible/group_vars/", "kubernetes/")) and rel.endswith((".yml", ".yaml"))]
    for rel in sorted(tagged):
        try:
            text = read_text_limited(os.path.join(output, *rel.split("/")), MAX_SPEC_BYTES, rel)
        except SpecgenError:
            continue
        if found := _WORKLOAD_LINE.search(text):
            return found.group(1)
    return None


def _refuse_unnamed_state(output: str, listed: Collection[str], written: Collection[str]) -> None:
    """Refuse a render over a flat tree no file of which names its workload, beside Terraform state it would move under.

    fuzz32 item 3: the tree cannot be shown to be this workload's, and a ``terraform apply`` of another workload's
    module over that state destroys the fleet it holds. Nothing is written then.
    """
    from generator.errors import OutputError

    state = os.path.join(output, "terraform", "terraform.tfstate")
    replaced = sorted(rel for rel in written if rel in listed and rel.startswith("terraform/"))
    if not replaced or not os.path.lexists(state):
        return
    raise OutputError(
        f"{output}: no file of the tree names the workload it is of (no spec.json, and no workload in "
        f"{', '.join(replaced[:3])}), and {state} holds Terraform state beside the module this render would replace: "
        "a terraform apply of another workload's module there destroys the fleet the state holds; render into the "
        "tree of this workload, or into another directory; nothing was written"
    )


def _refuse_dropping(output: str, dropped: list[str], single: str | None) -> None:
    """Refuse a render that would remove workload trees no file given renders (newuser33 item 2).

    Rendering the one file a change touched into the root of a cluster replaced every other workload's tree with that
    workload's flat layout (66 files gone, exit 0); a root module applied from it destroys their node pools. ``single``:
    the one workload rendered, whose flat tree would take the root's place.
    """
    from generator.errors import OutputError

    names = ", ".join(dropped[:6]) + (", ..." if len(dropped) > 6 else "")
    trees = f"tree{'s' if len(dropped) > 1 else ''} of workload{'s' if len(dropped) > 1 else ''} {names}"
    if single is not None:
        what = f"a render of one file writes the flat tree of workload {single!r} in place of the {trees} there"
    else:
        what = f"this render would remove the {trees}, which no file given renders"
    raise OutputError(
        f"{output}: {what}; render every workload file of the cluster together, or pass --prune to remove them; "
        "nothing was written"
    )


def _refuse_another_plans_outputs(
    output: str, targets: tuple[str, ...], keep: set[str], rendered: dict[str, str], depth: int
) -> None:
    """Refuse a ``--target`` render into a tree of another plan whose other outputs it would leave (newuser31 item 5).

    The outputs not asked for stay as they are on disk. Where the tree's ``spec.json`` is not the one this render
    makes, they are another plan's: Terraform of the new plan beside the Kubernetes node pools of the old. Nothing is
    written then. A tree holding no ``spec.json`` is told by the outputs it keeps: any not as this plan renders it is
    another plan's (or was edited), and is refused alike.
    """
    from generator.errors import OutputError
    from generator.writer import MANIFEST, read_tree

    current = read_tree(output)
    specs = sorted(rel for rel in rendered if rel.rpartition("/")[2] == "spec.json")
    changed = [rel for rel in specs if rel in current and current[rel] != rendered[rel]]
    # newuser53 item 10: the outputs by name (--target's words), not the tree's top directories (workload trees)
    others = [
        target
        for target in TARGETS
        if target not in targets and _select(dict.fromkeys(keep, ""), (target,), depth, companions=False)
    ]
    fix = (
        f"the outputs not asked for ({', '.join(others)}) would stay that plan's beside this one's; render every "
        "output (without --target), or into another directory; nothing was written"
    )
    if changed:
        raise OutputError(
            f"{output}: --target {' '.join(targets)}: {', '.join(changed)} in the tree is another plan's, and {fix}"
        )
    # fuzz31 item 1: a tree without its spec.json (rendered with targets that write none, or deleted) took another
    # workload's partial render. Its kept outputs tell: where they are not what this plan renders, they are another's.
    trees = {rel.split("/")[0] for rel in current if rel.count("/") == 1 and rel.endswith("/" + MANIFEST)}
    # a tree of the same layout that lacks it (another layout is no tree of this render's: refused as such later)
    unnamed = [rel for rel in specs if rel not in current and (rel.partition("/")[0] in trees if "/" in rel else not trees)]
    if unnamed:
        from generator.render import SHARED_DIRECTORIES

        trees = {rel.rpartition("/")[0] for rel in unnamed}
        told = [rel for rel in keep if rel.split("/")[0] in SHARED_DIRECTORIES or "" in trees or rel.split("/")[0] in trees]
        differ = sorted(
            rel for rel in told if rel in current and rel.rpartition("/")[2] != MANIFEST and current[rel] != rendered.get(rel)
        )
        if differ:
            raise OutputError(
                f"{output}: --target {' '.join(targets)}: the tree holds no {', '.join(unnamed)} to name the plan it "
                f"is of, and {', '.join(differ[:6])}{', ...' if len(differ) > 6 else ''} in it "
                f"{'is' if len(differ) == 1 else 'are'} not what this plan renders: another plan's (or edited), and {fix}"
            )


def _refuse_empty_targets(output: str, targets: tuple[str, ...], rendered: dict[str, str], depth: int) -> None:
    """Refuse a ``--target`` the plan renders no file of (fuzz31 item 12: "wrote 0 files", a tree of a manifest alone)."""
    from generator.errors import InputError
    from generator.writer import MANIFEST

    for target in targets:
        if not any(rel.rpartition("/")[2] != MANIFEST for rel in _select(rendered, (target,), depth, companions=False)):
            raise InputError(
                f"{output}: --target {target}: this plan renders no {target} output (no {', '.join(_TARGET_PREFIX[target])} "
                "in its tree: a bare-metal plan without a Kubernetes cluster has none, nor an output the workload's "
                "outputs leave out); give the targets it renders, or none; nothing was written"
            )


def _select(files: dict[str, str], targets: tuple[str, ...], depth: int = 0, *, companions: bool = True) -> dict[str, str]:
    """The files of ``targets`` (all without); ``depth`` 1: paths start with a workload tree's name.

    ``companions``: with the files their own name (:data:`_TARGET_COMPANIONS`); False: their own files alone.
    """
    if not targets:
        return files
    from generator.render import PROFILES_DIRECTORY, SHARED_DIRECTORIES
    from generator.writer import MANIFEST

    prefixes = tuple(prefix for t in targets for prefix in _TARGET_PREFIX[t])
    if companions:
        prefixes += tuple(prefix for t in targets for prefix in _TARGET_COMPANIONS.get(t, ()))
    out = {}
    for rel, text in files.items():
        top, _, inner = rel.partition("/")
        if not depth or top in SHARED_DIRECTORIES:
            inner = rel  # the tree's own files, or a tree of several workloads' shared layer (cluster/, terraform/)
        if inner.startswith(PROFILES_DIRECTORY + "/") and inner.count("/") >= 2:  # fix203: site-profiles/x3/terraform/
            inner = inner.split("/", 2)[2]
        if inner.startswith(prefixes) or (depth and inner == MANIFEST and "/" in rel):
            out[rel] = text
    return out


if __name__ == "__main__":  # newuser100: `python -m generator.cli` ran nothing and exited 0
    main()
