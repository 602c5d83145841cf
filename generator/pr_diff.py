"""``specgen diff --base REV FILE...``: what a pull request does to the fleet, for one sticky comment.

Each workload file is read twice: as it is in the working tree, and as it was at the git revision
``REV`` (``git show REV:path``, no checkout). Both are planned; the Markdown says, in one headline,
what changes in GPUs, nodes, power and cost over every file, then per file the totals, and per
changed pool its per-GPU memory (a Mermaid pie per deployment). The body stays under GitHub's
65,536-character comment limit (cut at :data:`MAX_MARKDOWN_CHARS`, saying what was left out).
"""

from __future__ import annotations

import errno
import io
import os
import re
import stat
import subprocess
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import partial
from typing import TYPE_CHECKING, Any

from generator.choice_moves import choice_move_lines, choice_moves
from generator.errors import (
    InfeasibleError,
    InputError,
    Location,
    MultipleInputError,
    SpecgenError,
    UnreachableError,
    UnreadableError,
    arithmetic_error,
    one_line,
)
from generator.fleet_diff import (
    MONTH_FLOOR,
    TRAINING_FIELDS,
    deployed_dict,
    diff_plans,
    fmt_cell,
    load_plan_dict,
    markdown_diff,
    plan_from_spec,
    replacement_lines,
    replacement_text,
    sharing_lines,
    signed_cell,
    two_places,
)
from generator.input_files import MAX_SPEC_BYTES, MAX_WORKLOAD_BYTES, check_distinct_files, read_text_limited, short
from generator.markdown_cut import cut_markdown
from generator.named_tuple import NamedTuple
from generator.pr_set import renamed_files, set_replacements
from generator.render.md_escape import md_text
from generator.render.md_escape import one_line as escape_controls
from generator.units import GIB
from generator.workload.loader import given_field

if TYPE_CHECKING:
    from generator.render import PoolsCluster

MAX_MARKDOWN_CHARS = 60_000
#: The limit :data:`MAX_MARKDOWN_CHARS` keeps under, as the line saying what was left out names it.
COMMENT_LIMIT = "GitHub's 65,536-character comment limit"
#: A file's section that does not fit is cut to the room left where at least this much is left (its heading, its
#: table's head and first rows); with less, it is left out whole and named in the last line (hostile94).
MIN_CUT_SECTION_CHARS = 2_000
#: Room kept at the end for the lines that say what was left out (ten names of at most
#: :data:`MAX_NAMED_FILE_CHARS` characters and words).
_LEFT_OUT_CHARS = 2_000
#: Room kept after a cut section for the line saying where it is cut (its file's name and the count).
_CUT_LINE_CHARS = 400
#: Characters of a file's path the lines saying what was cut or left out show (hostile94).
MAX_NAMED_FILE_CHARS = 100
#: Replaced pools the comment's headline lists one by one (each file's section lists its own).
MAX_HEADLINE_REPLACEMENTS = 10
EMPTY_PLAN: dict[str, Any] = {"totals": {}, "pools": [], "deployments": []}
#: Totals shown in the headline, with their labels (cost fields appear where the plan has them).
HEADLINE = (
    # each beside it, where a pool rests at 0 nodes between its jobs' runs: what of it runs only then (newuser69 item 9)
    ("gpus", "GPUs"),
    ("runs_only_gpus", "of which only during runs"),
    ("nodes", "nodes"),
    ("runs_only_nodes", "of which only during runs"),
    ("power_w", "power (W)"),
    ("runs_only_power_w", "of which only during runs (W)"),
    ("capex_usd", "capex (USD)"),
    ("opex_usd_per_month", "opex (USD/month)"),
    ("usd_per_month", "cost (USD/month)"),
    # newuser69 item 3: an average rate 5 -> 9 req/s moved the floor by +$20,381.60 under a headline of "0.00"
    (MONTH_FLOOR, "cost at the autoscaled floor (USD/month)"),
    ("training_usd_per_job", "rented training (USD per run)"),
    ("training_usd_per_month", "rented training runs (USD/month)"),
)
_MEMORY_PARTS = ("weights", "kv_cache", "activations", "gradients", "optimizer", "overhead")


class _Git(NamedTuple):
    """A git command's exit status, its output as bytes (a blob is checked as text where it is read), and its errors."""

    returncode: int
    out: bytes
    err: str

    @property
    def stdout(self) -> str:
        return self.out.decode("utf-8", errors="replace")


#: Characters of a repository's directory an error quotes (a CI runner's checkout path fits).
_DIR_CHARS = 200
#: The top of the git repository holding the files compared (git runs there; None: the current directory).
_REPOSITORY: ContextVar[str | None] = ContextVar("_REPOSITORY", default=None)


def _git(args: list[str]) -> _Git:
    try:
        done = subprocess.run(["git", *args], capture_output=True, check=False, cwd=_REPOSITORY.get())
    except OSError as exc:
        raise InputError(f"cannot run git: {exc.strerror or exc}") from None
    # bytes: a non-UTF-8 blob, file name or link target is an input error, not a decoding traceback (fuzz13 item 1)
    return _Git(done.returncode, done.stdout, done.stderr.decode("utf-8", errors="replace"))


#: Symbolic links followed in a row at a revision before giving up (as the kernel's ELOOP, roughly).
_MOST_LINKS = 8


def file_at(rev: str, path: str) -> str | None:
    """The text of ``path`` (relative to the current directory, or absolute) at ``rev``, or None where it did not exist.

    Below the repository's top the path is read at ``rev`` component by component: a symbolic link there, to a
    directory or to the file, is followed as it was at ``rev``, as render at ``rev`` would follow it (review 10 item 7,
    review 12 item 5: a directory link retargeted in the working tree read "unchanged").
    """
    rel = _repo_relative(path)
    if _outside(rel):
        top = _git(["rev-parse", "--show-toplevel"]).stdout.strip()
        raise InputError(f"{short(path)} is outside the git repository {short(top, _DIR_CHARS) if top else 'here'}")
    return _blob_at(rev, rel, path)


def _outside(rel: str) -> bool:
    """Whether a normalised repository-relative path leaves the repository (``..m.yaml`` does not; review 12 item 10)."""
    return rel == ".." or rel.startswith("../")


def _entry(rev: str, rel: str) -> tuple[str, str]:
    """(mode, type) of the tree entry ``rel`` at ``rev``; ("", "") where there is none."""
    fields = _git(["--literal-pathspecs", "ls-tree", "--full-tree", rev, "--", rel]).stdout.split(" ", 2)
    return (fields[0], fields[1]) if len(fields) == 3 else ("", "")


def _blob_at(rev: str, rel: str, path: str) -> str | None:
    """The text of the repository-relative ``rel`` at ``rev``, links followed there."""
    found = _resolve_at(rev, rel, path)
    if found is None:
        return None
    resolved, kind = found
    if kind != "blob":
        what = "a spec.json" if is_spec_json(path) else "a workload file"
        raise InputError(f"{short(path)} at {rev} is {'a directory' if kind == 'tree' else f'a git {kind}'}, not {what}")
    return _read_blob(rev, resolved, path)


def _resolve_at(rev: str, rel: str, path: str) -> tuple[str, str] | None:
    """(the path ``rel`` leads to at ``rev``, every link on it followed there; its git object type), or None if none.

    ``path`` names it in errors: a link leaving the repository, absolute, dangling or in a loop is refused.
    """
    if "\x00" in rel:  # fuzz27 H3: git's argument, which the OS refuses with a ValueError
        raise InputError(f"{short(path)} at {rev} holds a NUL character, which no file name may hold")
    parts = rel.split("/")
    done: list[str] = []
    kind = "tree"  # the top
    links = 0
    via, rest = "", -1  # the last link followed, and the components left after it: a part of its target missing
    # is a dangling link; a part missing below the target (a file added since) is not
    while parts:
        part = parts.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            if not done:  # through a link to the top (the target itself was checked)
                raise InputError(f"{short(path)} at {rev} leads outside the git repository through {short(via)}")
            done.pop()
            continue
        here = "/".join([*done, part])
        mode, kind = _entry(rev, here)
        if not mode:
            if len(parts) >= rest >= 0:
                raise InputError(f"{short(path)} at {rev} is a symbolic link to {short(via)}, which does not exist there")
            return None
        if mode == "120000":
            target = _git(["cat-file", "blob", f"{rev}:{here}"]).out.decode("utf-8", errors="replace")
            joined = "/".join([*done, target])
            links += 1
            if links > _MOST_LINKS or os.path.isabs(target) or _outside(os.path.normpath(joined)):
                raise InputError(f"{short(path)} at {rev} is a symbolic link to {short(target)}, which is not followed")
            via, rest = target, len(parts)
            done, parts = [], [*joined.split("/"), *parts]  # the target's components are walked at rev in turn
            continue
        if parts and kind != "tree":
            return None  # a file where the path goes on: no such path at rev
        done.append(part)
    return "/".join(done) or ".", kind


def _read_blob(rev: str, rel: str, path: str) -> str:
    """The UTF-8 text of the blob ``rel`` at ``rev`` (a file, links already followed)."""
    spec = f"{rev}:{rel}"
    size = int(_git(["cat-file", "-s", spec]).stdout.strip() or 0)
    most = MAX_SPEC_BYTES if is_spec_json(path) else MAX_WORKLOAD_BYTES  # as the file is read (fuzz13 item 12)
    if size > most:
        raise InputError(f"{short(path)} at {rev} is {size:,} bytes, more than the {most:,} specgen reads")
    try:
        return _git(["cat-file", "blob", spec]).out.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{short(path)} at {rev}: file is not UTF-8 text (byte {exc.start})") from None


def _repo_relative(path: str) -> str:
    """``path`` relative to the work tree's top, as spelled (links below the top are followed at the revision).

    The top may be reached through a link (the nearest directory of the path that resolves to the top counts as
    it); a path that reaches the repository only through a link from outside is resolved in the working tree.
    """
    absolute = os.path.abspath(path)
    top = os.path.realpath(_git(["rev-parse", "--show-toplevel"]).stdout.strip())
    head, tail = absolute, ""
    while True:
        if os.path.realpath(head) == top:
            return tail.replace(os.sep, "/") or "."
        parent, name = os.path.split(head)
        if parent == head:
            break
        head, tail = parent, os.path.join(name, tail) if tail else name
    resolved = os.path.join(os.path.realpath(os.path.dirname(absolute)), os.path.basename(absolute))
    return os.path.relpath(resolved, top).replace(os.sep, "/")


@contextmanager
def _repository(paths: list[str]) -> Iterator[str]:
    """Run git in the repository holding the files (its top), not the current directory's (newuser33 item 12).

    The repository is that of the first file's directory that exists (a file removed may have taken its directory).
    """
    folders = [os.path.dirname(os.path.abspath(path)) for path in paths]
    folder = next((f for f in folders if os.path.isdir(f)), os.getcwd())
    token = _REPOSITORY.set(folder)
    try:
        done = _git(["rev-parse", "--show-toplevel"])
        if done.returncode != 0:
            raise InputError(
                f"{short(folder, _DIR_CHARS)} is not in a git repository (diff --base reads the files at the revision with git "
                f"there): {one_line(done.err.strip())}"
            )
        top = os.path.realpath(done.stdout.strip())
        _REPOSITORY.set(top)
        yield top
    finally:
        _REPOSITORY.reset(token)


def check_revision(rev: str) -> None:
    """Raise InputError unless ``rev`` names a commit of the files' repository (the current directory's outside one).

    newuser33 item 17: in a shallow clone (GitHub's checkout fetches one commit by default) the base is often not
    there; the error says so, and how to fetch it.
    """
    done = _git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"])
    if done.returncode != 0:
        top = _git(["rev-parse", "--show-toplevel"]).stdout.strip()
        where = short(top, _DIR_CHARS) if top else "here"
        shallow = _git(["rev-parse", "--is-shallow-repository"]).stdout.strip() == "true"
        why = (
            ": the clone is shallow (it holds the last commits only); fetch the history (git fetch --unshallow), or "
            "check out with depth 0 (GitHub actions/checkout `fetch-depth: 0`, GitLab `GIT_DEPTH: 0`)"
            if shallow
            else ""
        )
        # hostile84: a 5,000-character REV was quoted whole, and the line cut before it named the repository
        raise InputError(f"--base {short(rev, _DIR_CHARS)} is not a commit of the git repository {where}{why}")


def _plan_at(rev: str, rel: str, text: str, alone: bool) -> dict[str, Any]:
    """The plan of a workload as it was at ``rev``: its text, and the model files it names by path as they were there.

    As deployed (:func:`generator.fleet_diff.deployed_dict`, ``alone`` as the render of the files given), as the
    working tree's version is planned: newuser31 item 1.

    fuzz22 item 5: model paths were read from the working tree, so a changed local ``config.json`` read "unchanged".
    The repository-relative paths its deployments name are copied from ``rev`` into a scratch tree (a git work tree of
    its own, so that paths stay inside it as in the repository), where the workload is resolved.
    """
    from generator.planner import plan_workload
    from generator.workload import load_document
    from generator.workload.loader import parse_yaml

    file = f"{rev}:{rel}"
    doc = parse_yaml(text, file)
    folder = os.path.dirname(rel)
    with tempfile.TemporaryDirectory(prefix="specgen-base-") as scratch:
        _git(["init", "-q", scratch])
        resolved = {path: found[0] for path in _model_paths(doc.data, folder) if (found := _resolve_at(rev, path, path))}
        if resolved:
            _extract(rev, sorted(set(resolved.values())), scratch)
        for path, target in resolved.items():
            link = os.path.join(scratch, path)
            if target != path and not os.path.lexists(link):  # reached through links at rev (fuzz23 item 2)
                os.makedirs(os.path.dirname(link), exist_ok=True)
                os.symlink(os.path.relpath(os.path.join(scratch, target), os.path.dirname(link)), link)
        base_dir = os.path.join(scratch, folder)
        os.makedirs(base_dir, exist_ok=True)
        loaded = load_document(doc, file, base_dir)
        return deployed_dict(plan_workload(loaded), loaded.workload, alone=alone)


def _model_paths(data: Any, folder: str) -> list[str]:
    """The repository-relative paths a workload's deployments name as models (whatever exists at the revision)."""
    deployments = data.get("deployments") if isinstance(data, dict) else None
    refs = {d.get("model") for d in deployments or () if isinstance(d, dict)}
    paths = {os.path.normpath(os.path.join(folder, ref)).replace(os.sep, "/") for ref in refs if isinstance(ref, str)}
    return sorted(p for p in paths if p != "." and not _outside(p) and not os.path.isabs(p))


def _extract(rev: str, paths: list[str], into: str) -> None:
    """The files under ``paths`` at ``rev``, written below ``into`` (``git archive``; no link leaves the tree)."""
    top = _git(["rev-parse", "--show-toplevel"]).stdout.strip()
    # from the top: git reads pathspecs against the current directory, the paths are the top's (fuzz23 item 1)
    done = _git(["-C", top, "archive", "--format=tar", rev, "--", *paths])
    if done.returncode != 0:
        raise InputError(f"cannot read {', '.join(paths)} at {rev}: {one_line(done.err.strip())}")
    with tarfile.open(fileobj=io.BytesIO(done.out)) as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later: links that leave the tree are refused
            tar.extractall(into, filter="data")
        else:  # earlier: plain files and folders only, none above the tree
            plain = [m for m in tar.getmembers() if (m.isfile() or m.isdir()) and not _outside(os.path.normpath(m.name))]
            tar.extractall(into, members=plain)


def is_spec_json(path: str) -> bool:
    """Whether ``path`` names a rendered tree's ``spec.json`` (``diff --base`` reads it as written, plans nothing)."""
    return os.path.basename(path) == "spec.json"


def _plan_path(path: str, alone: bool, clusters: list[tuple[str, PoolsCluster | None]]) -> dict[str, Any]:
    """The plan of a workload file in the working tree, as deployed (``alone``: the one file the tree renders).

    The cluster its node pools join is added to ``clusters`` (file, :func:`~generator.render.pools_cluster`). A
    rendered ``spec.json`` is read as it is committed (newuser82 item 2), and joins no cluster check: trees of
    several clusters are compared in one comment.
    """
    from generator.api import plan_file
    from generator.render import pools_cluster

    if is_spec_json(path):
        return load_plan_dict(path)
    loaded, plan = plan_file(path)
    clusters.append((path, pools_cluster(loaded.workload)))
    return deployed_dict(plan, loaded.workload, alone=alone)


def broken_link(path: str) -> str:
    """What a symbolic link that reaches no file is (hostile83: it read as the file deleted, its fleet removed, exit 6)."""
    try:
        os.stat(path)
    except OSError as exc:
        reason = "into a loop of links" if exc.errno == errno.ELOOP else "to no file"
    else:  # changed since the check: said as it was
        reason = "to no file"
    return (
        f"{path}: a symbolic link to {short(os.readlink(path), 60)} that leads {reason}: give the file it stands for, "
        "or remove the link where the change deletes the file (git rm)"
    )


def compare_with_base(rev: str, paths: list[str]) -> dict[str, Any]:
    """Per file: status (added, removed, changed, unchanged, renamed), its fleet diff and both plans' pools' memory.

    A file that cannot be planned in the working tree (invalid or infeasible) is one of its own: status ``invalid``
    or ``infeasible``, its error lines, no diff, left out of the totals; the other files are still compared
    (newuser24 item 2: one infeasible file made the whole comment empty). :func:`unplanned_error` is the error the
    command exits with then. A file that could not be planned at ``rev`` and can now is ``fixed``: its fleet is added.

    The files are one cluster, as ``render`` of them deploys them (newuser33 items 7, 13): files of two clusters are
    refused as ``render`` refuses them; a file removed and a file added holding the workload of one name are one
    workload renamed (``renamed_from``: status ``renamed`` where nothing else changes); ``replacements`` are the pools
    replaced over the whole set. git runs in the repository holding the files, not the current directory's (item 12).
    """
    for path in paths:  # fuzz31 item 6: `diff --base HEAD .` said the parent "is not in a git repository"
        if os.path.isdir(path):
            # newuser82 item 5: a render tree's directory was offered its *.yaml (its Kubernetes manifests' folder)
            tree = os.path.isfile(os.path.join(path, ".specgen-manifest"))
            example = os.path.join(path, "spec.json" if os.path.isfile(os.path.join(path, "spec.json")) else "*/spec.json")
            raise InputError(
                f"{path}: a directory; diff --base compares workload files or rendered spec.json files: give them "
                f"(for example {example if tree else os.path.join(path, '*.yaml')})"
            )
    with _repository(paths):
        check_revision(rev)
        check_distinct_files(paths)  # a workload given twice would count twice in the fleet's totals
        return _compare(rev, paths)


def _compare(rev: str, paths: list[str]) -> dict[str, Any]:
    """:func:`compare_with_base` in the files' repository."""
    alone = len(paths) == 1  # as ``render`` of these files deploys them: one file is its own tree, several one cluster
    clusters: list[tuple[str, PoolsCluster | None]] = []
    sides: list[tuple[str, str | None, dict[str, Any] | _Unplanned]] = []  # (file, its text at rev, its plan now)
    for path in paths:
        old_text = file_at(rev, path)
        if os.path.islink(path) and not os.path.exists(path):  # after the base's own link is said (test_ci)
            raise InputError(broken_link(path))
        exists = os.path.exists(path)
        if old_text is None and not exists:
            raise InputError(f"{path}: neither in the working tree nor at {rev}")
        sides.append((path, old_text, _planned(partial(_plan_path, path, alone, clusters)) if exists else EMPTY_PLAN))
    from generator.render import check_one_cluster

    check_one_cluster(clusters, given_field)  # newuser33 item 13: one headline over two clusters, which render refuses
    named: dict[str, str] = {}  # workload name -> the file naming it first
    for path, _, new in sides:
        # the change's own workloads must differ in name; two at the base alike are what a fixing change removes
        name = new.get("workload") if isinstance(new, dict) else None
        if isinstance(new, dict) and new is not EMPTY_PLAN and (first := named.setdefault(str(name), path)) != path:
            raise InputError(
                f"'{name}' is also the name of {first}: as one cluster's workloads (render) their names must differ, "
                "and the diff would count the fleet twice",
                given_field(path, (("name",),)),
            )
    olds = {
        path: _planned(partial(_old_plan, rev, path, text, alone)) if text is not None else EMPTY_PLAN
        for path, text, new in sides
        if not isinstance(new, _Unplanned)
    }
    # newuser53 item 8: the comment names each file by its repository path, whichever way the job spelt it
    shown = {path: _shown_path(path) for path in paths}
    sides = [(path, text, _said_at(new, path, shown[path])) for path, text, new in sides]
    # newuser33 item 7c: a `git mv` read as a fleet removed and one added; the workload's name is its tree's identity
    renames = renamed_files(
        {path: old["workload"] for path, _, new in sides if new is EMPTY_PLAN and isinstance(old := olds[path], dict)},
        {path: new["workload"] for path, text, new in sides if text is None and isinstance(new, dict)},
    )
    moved_away = set(renames.values())
    files: list[dict[str, Any]] = []
    compared: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]] = []
    for path, old_text, new in sides:
        if isinstance(new, _Unplanned):
            files.append({"file": shown[path], "status": new.status, "errors": new.lines, "diff": None, "memory": []})
            continue
        if path in moved_away:
            continue
        renamed_from = renames.get(path)
        old = _said_at(olds[renamed_from or path], renamed_from or path, shown[renamed_from or path])
        if isinstance(old, _Unplanned) and old.status == "unreachable":  # not "fixed": unknown at the base (item 7)
            files.append({"file": shown[path], "status": old.status, "errors": old.lines, "diff": None, "memory": []})
            continue
        status = "added" if old_text is None and not renamed_from else "removed" if new is EMPTY_PLAN else "changed"
        base_errors = old.lines if isinstance(old, _Unplanned) else []
        old_plan = EMPTY_PLAN if isinstance(old, _Unplanned) else old
        diff = diff_plans(old_plan, new)
        was = _workload_renamed_from(old_plan, new)
        if base_errors and new is not EMPTY_PLAN:
            status = "fixed"
        elif status == "changed" and not _moves(diff):
            status = "renamed" if renamed_from or was else "unchanged"
        entry = {"file": shown[path], "status": status, "diff": diff, "memory": pool_memory(new, diff)}
        if renamed_from:
            entry["renamed_from"] = shown[renamed_from]
        if was:
            entry["workload_renamed"] = {"old": was, "new": new["workload"]}
        if base_errors:
            entry["base_errors"] = base_errors
        if moves := choice_moves(old_plan, new):  # newuser82 item 3: the rent that moved the choice
            entry["choice_moves"] = moves
        files.append(entry)
        compared.append((shown[path], old_plan, new, diff))
    planned = [f for f in files if f["diff"] is not None]
    # newuser33 item 7a: a pool removed in one file and one of its hardware added in another is replaced too
    replaced = set_replacements(compared)
    out = {"base": rev, "replacements": replaced, "totals": _sum_totals(planned), "files": files}
    return out | ({"deleted_not_given": deleted} if (deleted := deleted_beside(rev, paths)) else {})


#: Workload files a directory may hold that ``diff --base`` names as deleted and not given (the JSON has them all).
MAX_DELETED_SHOWN = 10
_WORKLOAD_SUFFIXES = (".yaml", ".yml")


def _old_plan(rev: str, path: str, text: str, alone: bool) -> dict[str, Any]:
    """The plan of ``path`` as it was at ``rev``: a workload planned now, a ``spec.json`` as it was written then.

    newuser82 item 2: a change that upgrades specgen (its catalog's prices, its engine) plans both sides' workloads
    alike, so their diff reads "unchanged" while the committed tree replaces pools; the committed ``spec.json`` files
    at ``rev`` against the working tree's say what applying the change does.
    """
    if is_spec_json(path):
        return plan_from_spec(text, f"{rev}:{_repo_relative(path)}", say_stamp=True)
    return _plan_at(rev, _repo_relative(path), text, alone)


def deleted_beside(rev: str, paths: list[str]) -> list[str]:
    """Workload files at ``rev`` in the directories of ``paths``, deleted in the working tree and not given.

    newuser33 item 8: a shell glob (``workloads/*.yaml``) lists no deleted file, so a change deleting a workload read
    "0 workload file(s) change the fleet". They are not compared (which files are one cluster is the caller's to say,
    and a directory may hold two clusters'): the comment names them, to be given too (examples/ci give them). Files of
    the suffixes given (``.yaml``, ``.yml``) that read at ``rev`` as workloads (a mapping with ``version`` and
    ``deployments``); each by its repository path, as the comment names every file (newuser53 item 8).
    """
    from generator.workload.loader import parse_yaml

    top = _git(["rev-parse", "--show-toplevel"]).stdout.strip()
    given = {_repo_relative(path) for path in paths}
    suffixes = {suffix for path in paths for suffix in _WORKLOAD_SUFFIXES if path.endswith(suffix)}
    found = []
    for folder in sorted({os.path.dirname(rel) for rel in given}):
        spec = f"{folder}/" if folder else "."
        listed = _git(["--literal-pathspecs", "ls-tree", "--full-tree", "-z", rev, "--", spec]).out.decode("utf-8", "replace")
        for line in filter(None, listed.split("\0")):
            meta, _, rel = line.partition("\t")
            if meta.split(" ")[1:2] != ["blob"] or not rel.endswith(tuple(suffixes)) or rel in given:
                continue
            if os.path.lexists(os.path.join(top, rel)):
                continue
            try:
                data = parse_yaml(_read_blob(rev, rel, rel), f"{rev}:{rel}").data
            except SpecgenError:
                continue
            if isinstance(data, dict) and "version" in data and "deployments" in data:
                found.append(rel)
    return found


def _shown_path(path: str) -> str:
    """``path`` as the comment names it: relative to the repository's top (``./w.yaml``, ``/builds/g/p/w.yaml``: w.yaml)."""
    return os.path.normpath(_repo_relative(path)).replace(os.sep, "/")


def _said_at(planned: dict[str, Any] | _Unplanned, path: str, shown: str) -> dict[str, Any] | _Unplanned:
    """``planned``, its errors that begin with the file's name as given begun with the name the comment gives it."""
    if not isinstance(planned, _Unplanned) or shown == path:
        return planned
    lines = [shown + line[len(path) :] if line.startswith(f"{path}:") else line for line in planned.lines]
    return planned._replace(lines=lines)


def _workload_renamed_from(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """The workload's old ``name`` where a file's change renames it (both sides planned), else None.

    newuser53 item 2b: ``name: rag`` -> ``rag-two`` read as its rack de-racked and another re-cabled, and the rename
    was said nowhere; rendered with other files it moves the workload's tree and its Terraform module.
    """
    before, after = old.get("workload"), new.get("workload")
    if old is EMPTY_PLAN or new is EMPTY_PLAN or not isinstance(before, str) or not isinstance(after, str):
        return None
    return before if before != after else None


def _moves(diff: dict[str, Any]) -> bool:
    """Whether a file's diff changes anything: a pool, a deployment, a total (its runs' cost), a rack or where it runs.

    newuser28 item 2: 30 -> 60 nightly runs added $34,626 a month to the totals and the file read "unchanged".
    """
    totals = any(row["old"] != row["new"] for row in diff["totals"].values())
    moved = any(f"{k}_change" in diff for k in PLACES)
    return bool(
        diff["pools"]
        or diff["deployments"]
        or totals
        or diff.get("racks")
        or diff.get("rack_supply")
        or diff.get("wall_circuit")
        or moved
    )


#: Where a fleet runs, whose change a diff says (``provider_change``, ...).
PLACES = ("provider", "region", "zone")


def compare_two(old_path: str, new_path: str) -> dict[str, Any]:
    """``diff OLD NEW``: the fleet diff of two workload or ``spec.json`` files, both planned before either fails.

    A NEW that cannot be planned raises both files' errors (:class:`UnplannedFilesError`); an OLD that cannot be
    planned while NEW can is what a fixing change looks like: NEW's fleet is counted as added and ``old_errors`` says
    why OLD could not be planned (as ``diff --base`` does for a file fixed since its base). An OLD that is no file
    at all is a typo more likely than a fix, and a spec.json that cannot be read, a device, a FIFO or an empty file is
    no workload a change fixes: all fail as NEW does (fuzz24 L11, fuzz25 L4, fuzz31 item 11; ``diff --base`` says a
    file added).
    """
    old = _planned(partial(load_plan_dict, old_path))
    new = _planned(partial(load_plan_dict, new_path))
    damaged = isinstance(old, _Unplanned) and (not _a_file_with_text(old_path) or old_path.endswith(".json"))
    if isinstance(new, _Unplanned) or damaged:
        failed = [result for result in (old, new) if isinstance(result, _Unplanned)]
        code = unplanned_exit_code([result.status for result in failed])
        raise UnplannedFilesError([InputError(line) for result in failed for line in result.lines], code)
    if isinstance(old, _Unplanned):
        return {**diff_plans(EMPTY_PLAN, new), "old_errors": old.lines}
    diff = diff_plans(old, new)
    moves = choice_moves(old, new)  # newuser82 item 3: the rent that moved the choice
    return diff | ({"choice_moves": moves} if moves else {})


def two_files_markdown(result: dict[str, Any]) -> str:
    """``diff OLD NEW``'s comment: the fleet diff, and why a service moved where the rent moved it (item 3)."""
    text = markdown_diff(result)
    if result.get("choice_moves"):
        text = text.rstrip("\n") + "\n\n" + "\n".join(choice_move_lines(result["choice_moves"], code_span, "in OLD")) + "\n"
    kept, dropped = cut_markdown(text, MAX_MARKDOWN_CHARS - _LEFT_OUT_CHARS)
    if not dropped:
        return text
    said = f"{dropped:,} more lines left out to stay under {COMMENT_LIMIT}; `--format json` gives it whole"
    return kept + f"\n_The diff is cut here: {said}._\n"


def _a_file_with_text(path: str) -> bool:
    """Whether ``path`` is a regular file (through links) that holds something: an OLD a change may have fixed.

    fuzz31 item 11: ``/dev/null``, a FIFO and an empty file were counted as an empty fleet (exit 0) where a missing file
    or a directory was refused; none is a workload a change fixes. fuzz33 item 10: nor is a file whose text cannot be
    read (not UTF-8, or more than a workload file may hold): a binary OLD was counted as an empty fleet where an empty
    one was refused.
    """
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return False
    if not stat.S_ISREG(info.st_mode) or info.st_size == 0:
        return False
    try:
        read_text_limited(path, MAX_WORKLOAD_BYTES, "file")
    except InputError:
        return False
    return True


#: Error lines kept for a file that cannot be planned (the CLI prints as many for one failure).
MAX_ERROR_LINES = 25


class _Unplanned(NamedTuple):
    """A workload file's version that specgen cannot plan, and why.

    ``invalid`` (exit 1), ``unreadable`` (exit 1: a ``spec.json`` that could not be read or is not JSON,
    :class:`~generator.errors.UnreadableError`; fix146 item 3), ``infeasible`` (exit 3) or ``unreachable`` (exit 75:
    a source it needs, the Hub, out of reach; newuser82 item 7).
    """

    status: str
    lines: list[str]


def _planned(plan: Callable[[], dict[str, Any]]) -> dict[str, Any] | _Unplanned:
    """``plan()``, or what stopped it: the same one-line errors ``plan`` prints for the file."""
    try:
        return plan()
    except SpecgenError as exc:
        return _unplanned(exc)
    except ArithmeticError as exc:
        return _unplanned(arithmetic_error(exc))


def _unplanned(exc: SpecgenError) -> _Unplanned:
    """Why a file cannot be planned: each error on one line, whole (the CLI and the comment cut a long one once)."""
    errors = exc.errors if isinstance(exc, MultipleInputError) else [exc]
    lines = [escape_controls(str(e)) for e in errors]
    if len(lines) > MAX_ERROR_LINES:
        lines = [*lines[:MAX_ERROR_LINES], f"... and {len(lines) - MAX_ERROR_LINES:,} more errors not shown"]
    if isinstance(exc, InfeasibleError):
        return _Unplanned("infeasible", lines)
    if isinstance(exc, UnreadableError):
        return _Unplanned("unreadable", lines)
    return _Unplanned("unreachable" if exc.exit_code == UnreachableError.exit_code else "invalid", lines)


#: Statuses of a file the working tree's version of which cannot be planned.
UNPLANNED = ("invalid", "unreadable", "infeasible", "unreachable")


def unplanned_exit_code(statuses: list[str]) -> int:
    """1 where any file is invalid or unreadable, else 3 where any is infeasible, else 75 (only sources out of reach)."""
    if "invalid" in statuses or "unreadable" in statuses:
        return 1
    return InfeasibleError.exit_code if "infeasible" in statuses else UnreachableError.exit_code


class UnplannedFilesError(MultipleInputError):
    """Workload files of the change that cannot be planned; exits 1 if any is invalid, else 3 (all infeasible)."""

    def __init__(self, errors: list[InputError], exit_code: int) -> None:
        super().__init__(errors)
        self.exit_code = exit_code


def unplanned_error(result: dict[str, Any]) -> UnplannedFilesError | None:
    """The error ``diff --base`` exits with after writing its report, where a file of the change cannot be planned."""
    failed = [f for f in result["files"] if f["status"] in UNPLANNED]
    if not failed:
        return None
    code = unplanned_exit_code([f["status"] for f in failed])
    return UnplannedFilesError([_placed(line, f["file"]) for f in failed for line in f["errors"]], code)


def _placed(line: str, file: str) -> InputError:
    """An error line of ``file`` (as the comment names it) with the place its text begins with, where it begins with it.

    newuser53 item 7: CI annotations are placed at an error's location, never read back out of any text; the file's
    whole name is known here.
    """
    from generator.findings import place_error

    placed = place_error(line, None, [file])
    error = InputError(line)
    if placed.file is not None:
        error.location = Location(placed.file, placed.line, placed.column)
    return error


def _sum_totals(files: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {}
    floors = any(MONTH_FLOOR in f["diff"]["totals"] for f in files)
    for key, _ in HEADLINE:
        if key == MONTH_FLOOR and not floors:
            continue
        # where any file's pools autoscale, the floor sums over every file: one whose pools do not, at its month
        held = (MONTH_FLOOR, "usd_per_month") if key == MONTH_FLOOR else (key,)
        rows = [next((t[k] for k in held if k in (t := f["diff"]["totals"])), {"old": None, "new": None}) for f in files]
        old = [r["old"] for r in rows if r["old"] is not None]
        new = [r["new"] for r in rows if r["new"] is not None]
        if not old and not new:
            continue
        # a file whose change in cost is not known (priced at another region's list prices: newuser31 item 8)
        unknown = any(r["old"] is not None and r["new"] is not None and r.get("delta", 0) is None for r in rows)
        if key in TRAINING_FIELDS:  # no rented job on a side is no figure, not a free one (fuzz15 item 11)
            a, b = (sum(side) if side else None for side in (old, new))
            delta = b - a if a is not None and b is not None and not unknown else None
        else:
            a, b = sum(old), sum(new)
            delta = None if unknown else b - a
        # newuser33 item 14: sums of floats carry binary noise (828929.2400000001): rounded as each file's figures
        out[key] = {"old": two_places(a), "new": two_places(b), "delta": two_places(delta)}
    return out


def _first_named(named: list[str], most: int) -> str:
    """The first ``most`` of ``named`` (as a line shows them), and how many more."""
    more = len(named) - most
    return ", ".join(named[:most]) + (f" and {more} more" if more > 0 else "")


def _priced_elsewhere_headline(files: list[dict[str, Any]]) -> list[str]:
    """The line under the headline where a file's change in cost is not known: its pools are priced elsewhere."""
    unknown = [
        f["file"]
        for f in files
        if f["diff"] is not None and (f["diff"].get("priced_elsewhere") or {"change_known": True})["change_known"] is False
    ]
    if not unknown:
        return []
    named = _first_named([code_span(name) for name in unknown], MAX_HEADLINE_UNPLANNED)
    return [
        "",
        f"The change in cost is not known (`-`): {named} {'prices' if len(unknown) == 1 else 'price'} pools at another "
        "region's on-demand list prices than their cluster's, which the catalog does not have (see below).",
    ]


def pool_memory(plan: dict[str, Any], diff: dict[str, Any]) -> list[dict[str, Any]]:
    """Per-GPU memory of the deployments in the pools that changed or were added (one entry per part of a split one)."""
    changed = {p["pool"] for p in diff["pools"] if p["status"] != "removed"}
    return [
        {
            "deployment": d["name"],
            "pool": part["pool"],
            "gpu_memory_bytes": _memory_parts(part["memory_per_gpu"]),
        }
        for d in plan["deployments"]
        for part in (d.get("split") or [d])
        if part["pool"] in changed and isinstance(part.get("memory_per_gpu"), dict)
    ]


def _memory_parts(memory: dict[str, int]) -> dict[str, int]:
    """Every part of a GPU's memory (0 where it holds none), and a serving GPU's KV cache pool."""
    parts = {k: memory.get(k, 0) for k in _MEMORY_PARTS}
    if "kv_cache_pool" in memory:
        parts["kv_cache_pool"] = memory["kv_cache_pool"]
    return parts


def mermaid_memory(entry: dict[str, Any]) -> str:
    """A Mermaid pie of one deployment's per-GPU memory, in GiB (parts that are zero left out).

    A serving GPU shows the KV cache pool its engine allocates, not one sequence's KV: the GPU as it runs.
    """
    parts = entry["gpu_memory_bytes"]
    pool = "kv_cache_pool" in parts
    title = "GiB per GPU as the engine allocates it" if pool else "GiB per GPU"
    lines = ["```mermaid", f"pie showData title {entry['deployment']} on {entry['pool']}: {title}"]
    for part, value in parts.items():
        if value and not (pool and part == "kv_cache"):
            lines.append(f'    "{part}" : {value / GIB:.2f}')
    lines.append("```")
    return "\n".join(lines)


def code_span(text: str) -> str:
    """``text`` as a Markdown code span that its own backticks cannot close (fuzz15 item 11: ``q`k.yaml``).

    CommonMark closes a span at a run of backticks as long as the one that opened it, so the fence is one longer than
    the longest run inside, and padded with a space where the text has backticks.
    """
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    pad = " " if longest else ""
    fence = "`" * (longest + 1)
    return f"{fence}{pad}{text}{pad}{fence}"


def _replaced_headline(replacements: list[dict[str, Any]]) -> list[str]:
    """The comment's first lines when pools are replaced, not resized: every file's, each with its file."""
    if not replacements:
        return []
    lines = replacement_lines(replacements)
    # each entry names its file: the bullets say which workload's pool is replaced (a few, within the size limit)
    # an entry over several files names each (newuser33 item 7a: a pool removed in one, added in another)
    bullets = [
        f"- {', '.join(code_span(f) for f in r.get('files', [r['file']]))}: {replacement_text(r)}"
        for r in replacements[:MAX_HEADLINE_REPLACEMENTS]
    ]
    more = len(replacements) - MAX_HEADLINE_REPLACEMENTS
    if more > 0:
        bullets.append(f"- _{more} more; see each file below or the JSON report._")
    return [*lines[:2], *bullets, ""]


def _drift_headline(files: list[dict[str, Any]]) -> list[str]:
    """The comment's lines on pools whose GPU sharing change Karpenter treats as drift (newuser40 item 4), by file."""
    drift = [
        (f["file"], c) for f in files if f.get("diff") for c in f["diff"].get("sharing_changes", []) if c.get("effect") == "drift"
    ]
    if not drift:
        return []
    lines = sharing_lines([c for _, c in drift])
    bullets = [f"- {code_span(file)}: {line[2:]}" for (file, _), line in zip(drift, lines[2:], strict=False)]
    return [*lines[:2], *bullets[:MAX_HEADLINE_REPLACEMENTS], ""]


#: Files the headline names one by one as not plannable (each has its section below with the error).
MAX_HEADLINE_UNPLANNED = 10
#: Error lines a file's section quotes (the JSON report and the job's log have all).
MAX_SECTION_ERRORS = 5


def _deleted_headline(result: dict[str, Any]) -> list[str]:
    """The comment's warning where workload files beside those given were deleted and are not compared (item 8)."""
    deleted = result.get("deleted_not_given") or []
    if not deleted:
        return []
    named = _first_named([code_span(path) for path in deleted], MAX_DELETED_SHOWN)
    return [
        f"**Not compared: {named} {'was a workload' if len(deleted) == 1 else 'were workloads'} at "
        f"{code_span(result['base'])} beside the files given and {'is' if len(deleted) == 1 else 'are'} deleted; "
        "the totals leave the removal out. Give deleted files too (`git diff --no-renames --name-only "
        '--diff-filter=D "$BASE"`, as examples/ci do).**',
        "",
    ]


def _cannot(failed: list[dict[str, Any]]) -> str:
    """What stopped the ``failed`` files: fix146 item 3, a spec.json that could not be read is not "cannot be planned".

    A spec.json is read, never planned: one that is JSON but no plan (``invalid``) could not be read as one either.
    """
    unread = sum(1 for f in failed if f["status"] == "unreadable" or is_spec_json(f["file"]))
    return "could not be read" if unread == len(failed) else "could not be read or planned" if unread else "cannot be planned"


def _unplanned_headline(files: list[dict[str, Any]]) -> list[str]:
    """The comment's first lines when files of the change cannot be planned: which, and that CI fails on them.

    hostile84 item 4: named by what they are: an unreadable spec.json beside an invalid workload file was counted among
    "2 workload file(s)", which `specgen render` was said to fail on too (it never reads a spec.json).
    """
    failed = [f for f in files if f["status"] in UNPLANNED]
    if not failed:
        return []
    named = _first_named([f"{code_span(f['file'])} ({f['status']})" for f in failed], MAX_HEADLINE_UNPLANNED)
    specs = sum(1 for f in failed if is_spec_json(f["file"]))
    workloads = len(failed) - specs
    if not specs:
        what, fails = "workload file(s)", "`specgen render` fails on them too, and so does this check"
    elif not workloads:
        what, fails = "spec.json file(s)", "This check fails on them"
    else:
        what = f"file(s) ({workloads} workload file(s), {specs} spec.json)"
        fails = "`specgen render` fails on the workload files too, and this check on all of them"
    return [
        f"**{len(failed)} {what} {_cannot(failed)} as changed: {named}.** {fails}; each is explained below and left out "
        "of the totals.",
        "",
    ]


def _error_lines_md(lines: list[str]) -> list[str]:
    """Error lines as Markdown list items, escaped (a workload's values may be anything), the first few."""
    shown = [f"- {md_text(one_line(line))}" for line in lines[:MAX_SECTION_ERRORS]]
    if len(lines) > MAX_SECTION_ERRORS:
        shown.append(f"- _{len(lines) - MAX_SECTION_ERRORS} more; see the job's log or the JSON report._")
    return shown


#: Statuses of a file whose fleet does not change (a workload whose file was renamed, and nothing else).
STILL = ("unchanged", "renamed")
#: Renamed files the comment lists one by one.
MAX_RENAMED = 10


def _renamed_lines(files: list[dict[str, Any]]) -> list[str]:
    """The line under the count naming the files renamed without a change to their fleet (newuser33 item 7c)."""
    renamed = [f for f in files if f["status"] == "renamed" and "renamed_from" in f]
    if not renamed:
        return []
    named = _first_named([f"{code_span(f['renamed_from'])} → {code_span(f['file'])}" for f in renamed], MAX_RENAMED)
    return ["", f"Renamed, no change to the fleet (the same workload `name`): {named}."]


def _workload_renamed_lines(files: list[dict[str, Any]], tree: bool) -> list[str]:
    """A line under the count per workload whose ``name`` its file's change renames, and what that moves (item 2b).

    ``tree``: several files were given, which ``render`` makes one tree of, where the workload's directory and its
    module in the root ``terraform/main.tf`` are named after it; a flat tree keeps its place, its files the new name.
    """
    lines = []
    for f in [f for f in files if "workload_renamed" in f][:MAX_RENAMED]:
        old, new = (f["workload_renamed"][side] for side in ("old", "new"))
        said = f"Workload renamed in {code_span(f['file'])}: {code_span(old)} → {code_span(new)}"
        if not tree:
            files_named = "spec.json, SPEC.md, the Terraform variables, the Ansible group vars"
            lines += ["", f"{said}; its tree's files ({files_named}) name it anew."]
            continue
        module, moved = f"module.{old}", f"module.{new}"
        lines += [
            "",
            f"{said}; its tree is {code_span(new + '/')} in place of {code_span(old + '/')} (`render` removes the old "
            f"tree only with `--prune`), and its Terraform module {code_span(moved)} in place of {code_span(module)}: "
            f"move state applied there first ({code_span(f'terraform state mv {module} {moved}')}, or a `moved` "
            "block), or Terraform destroys what the old module created and creates it again.",
        ]
    return lines


#: ``diff --exit-code``'s exit status where the fleet changes, as ``git diff --exit-code`` exits 1 on a difference
#: (newuser82 item 8: a CI gate had to parse the JSON); no other exit status of specgen's is 6.
FLEET_CHANGED_EXIT_CODE = 6


def fleet_changes(result: dict[str, Any]) -> bool:
    """Whether ``diff --base``'s result (its ``files``) has a file that changes the fleet, as its count line says."""
    return any(f["status"] not in (*UNPLANNED, *STILL) and _fleet_moves(f["diff"]) for f in result["files"])


def two_files_change_fleet(result: dict[str, Any]) -> bool:
    """Whether ``diff OLD NEW``'s result changes the fleet (an OLD that could not be planned: NEW's fleet, added)."""
    return _fleet_moves(result)


def _fleet_moves(diff: dict[str, Any]) -> bool:
    """Whether a file's diff changes the fleet itself, not only what runs on it.

    The fleet moves where a total (GPUs, nodes, power, cost, the runs' cost) changes, a pool is added, removed,
    replaced or changes in more than what runs on it (its size, minimum, GPU sharing, price), a rack or its supply
    changes, or the fleet moves to another provider, region or zone. A model swap on the same GPUs changes what runs
    alone (newuser44 item 10: it read "1 workload file(s) change the fleet" with every total 0).
    """
    if any(row["old"] != row["new"] for row in diff["totals"].values()):
        return True
    resized = [
        p
        for p in diff["pools"]
        if p["status"] != "changed"
        or {k: v for k, v in p["old"].items() if k != "runs"} != {k: v for k, v in p["new"].items() if k != "runs"}
    ]
    places = any(f"{k}_change" in diff for k in PLACES)
    return bool(
        resized
        or diff.get("replacements")
        or diff.get("sharing_changes")
        or diff.get("racks")
        or diff.get("rack_supply")
        or places
    )


def _count_text(changed: list[dict[str, Any]], unchanged: list[str]) -> str:
    """``2 workload file(s) change the fleet; 1 file(s) change what runs (fleet unchanged); 0 unchanged``."""
    runs = [f for f in changed if not _fleet_moves(f["diff"])]
    fleet = len(changed) - len(runs)
    parts = [f"{fleet} workload file(s) change the fleet"] if fleet or not runs else []
    if runs:
        parts.append(f"{len(runs)} {'file(s)' if parts else 'workload file(s)'} change what runs (fleet unchanged)")
    return "; ".join([*parts, f"{len(unchanged)} unchanged"])


def _files_given(result: dict[str, Any]) -> int:
    """How many files were compared: one entry each, a file renamed since the base (its two paths) one for two."""
    return len(result["files"]) + sum(1 for f in result["files"] if "renamed_from" in f)


def _section(entry: dict[str, Any]) -> str:
    """One file's part of the comment: its error, or its fleet diff and the memory of each changed pool."""
    renamed = f"; renamed from {code_span(entry['renamed_from'])}" if entry.get("renamed_from") else ""
    if "workload_renamed" in entry:  # newuser53 item 2b
        renamed += f"; workload {code_span(entry['workload_renamed']['old'])} → {code_span(entry['workload_renamed']['new'])}"
    lines = ["", f"### {code_span(entry['file'])} ({entry['status']}{renamed})", ""]
    if entry["status"] in UNPLANNED:
        what = {"infeasible": "is infeasible", "unreachable": "could not be planned now", "unreadable": "could not be read"}.get(
            entry["status"], "is invalid"
        )
        if entry["status"] == "unreachable":
            what += " (a source specgen reads was out of reach: run the check again)"
        lines += [f"As changed, this file {what}; specgen says:", "", *_error_lines_md(entry["errors"])]
        return "\n".join(lines) + "\n"
    if entry.get("base_errors"):
        counted = "; its fleet is counted as added" if entry["status"] == "fixed" else ""
        lines += [f"At the base it could not be planned{counted}. specgen said then:", ""]
        lines += [*_error_lines_md(entry["base_errors"]), ""]
    lines.append(markdown_diff(entry["diff"]).split("\n", 2)[2].strip())
    if entry.get("choice_moves"):
        lines += ["", *choice_move_lines(entry["choice_moves"], code_span)]
    for memory in entry["memory"]:
        lines += ["", mermaid_memory(memory)]  # a fence right after a table row is read as part of it by some viewers
    return "\n".join(lines) + "\n"


def _file_span(name: str) -> str:
    """A file's path as the lines saying what was left out name it: its first :data:`MAX_NAMED_FILE_CHARS` characters."""
    return code_span(name if len(name) <= MAX_NAMED_FILE_CHARS else name[:MAX_NAMED_FILE_CHARS] + "…")


def markdown(result: dict[str, Any]) -> str:
    """The pull-request comment: headline over every file, then each changed file (within the size limit).

    Files that cannot be planned come first: they are what fails the job.
    """
    head = [f"## specgen: fleet change against {code_span(result['base'])}", ""]
    head += _unplanned_headline(result["files"])
    head += _deleted_headline(result)
    head += _replaced_headline(result.get("replacements", []))
    head += _drift_headline(result["files"])
    labels = dict(HEADLINE)
    if result["totals"]:
        head += ["| | before | after | change |", "|---|---:|---:|---:|"]
        for key, row in result["totals"].items():
            head.append(f"| **{labels[key]}** | {fmt_cell(row['old'])} | {fmt_cell(row['new'])} | {signed_cell(row['delta'])} |")
        head += _priced_elsewhere_headline(result["files"])
    failed = [f for f in result["files"] if f["status"] in UNPLANNED]
    changed = [f for f in result["files"] if f["status"] not in (*UNPLANNED, *STILL)]
    unchanged = [f["file"] for f in result["files"] if f["status"] in STILL]
    count = _count_text(changed, unchanged)
    head += ["", count + (f"; {len(failed)} {_cannot(failed)}." if failed else ".")]
    head += _renamed_lines(result["files"])
    head += _workload_renamed_lines(result["files"], _files_given(result) > 1)
    body, dropped = cut_markdown("\n".join(head) + "\n", MAX_MARKDOWN_CHARS - 2 * _LEFT_OUT_CHARS)
    if dropped:  # a headline past the limit (names of thousands of characters): cut as a section is
        body += f"\n_The headline is cut here: {dropped:,} more lines left out to stay under {COMMENT_LIMIT}._\n"
    left_out: list[str] = []
    for entry in [*failed, *changed]:  # in order: the first that does not fit is cut, it and those after it named
        text = _section(entry)
        room = MAX_MARKDOWN_CHARS - _LEFT_OUT_CHARS - len(body)
        if not left_out and len(text) <= room:
            body += text
            continue
        if not left_out and room >= MIN_CUT_SECTION_CHARS:  # hostile94: a file whose section alone passed the limit
            kept, dropped = cut_markdown(text, room - _CUT_LINE_CHARS)  # was left out whole, the comment showing none of it
            body += kept + f"\n_{_file_span(entry['file'])}'s section is cut here: {dropped:,} more lines left out._\n"
        left_out.append(entry["file"])
    if left_out:
        named = _first_named([_file_span(name) for name in left_out], MAX_HEADLINE_UNPLANNED)
        body += (
            f"\n_{len(left_out)} changed file(s) cut or left out to stay under {COMMENT_LIMIT}: {named}; "
            "`--format json` gives every file whole._\n"
        )
    return body
