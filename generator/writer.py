"""Write a rendered tree atomically, or compare it with what is on disk (``--check``).

specgen owns only the files it wrote. Their relative paths are listed in ``.specgen-manifest`` at the
root of the output directory (sorted, one per line, the manifest itself included); every other file,
directory or symlink there (``terraform.tfstate``, ``.terraform/``, notes) belongs to the user, is never
read, and survives a re-render unchanged (hard-linked into the new tree). A non-empty directory without
a manifest is not a specgen output directory, and specgen refuses to write into it.

The new tree is built in a temporary sibling directory and exchanged with the output directory in
one atomic step (:mod:`generator.swap`), under an exclusive lock; the next run recovers or removes
whatever an interrupted one left. An output path through a symlink a pull request could have planted (in any git
work tree, below the working directory, in a workload's repository, or the output directory itself) is refused
(see :func:`refuse_symlinks`).
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from generator.errors import InputError, OutputError
from generator.input_files import git_work_tree, repository_root
from generator.path_parts import file_on_the_way
from generator.swap import ExchangeUnsupportedError, exchange, interrupts_held, output_lock, recover, work_prefix
from generator.terminate import pause_if_asked, terminate_cleans_up

MANIFEST = ".specgen-manifest"
#: Longest file or directory name most file systems take, in bytes.
MAX_NAME_BYTES = 255


#: Names that are the user's whatever a manifest lists (fuzz23 item 10: the manifest is committed with the tree, and a
#: pull request adding ``terraform/terraform.tfstate`` to it had the next render delete the state): Terraform state and
#: saved plans, Terraform's override files and default variables file; the Ansible ``hosts.yml`` the rendered
#: ``hosts.yml.example`` tells the user to make (fuzz25 M7); and anything hidden (``.terraform/``).
_USER_FILES = re.compile(r".*\.tfstate(\..*)?|.*\.tfplan|(.*_)?override\.tf(\.json)?|terraform\.tfvars(\.json)?|hosts\.ya?ml")


def specgen_writes(rel: str) -> bool:
    """Whether the relative path ``rel`` may be specgen's (the only kind a manifest can give it to replace or delete)."""
    parts = rel.split("/")  # a tree of several workloads lists each workload's own manifest
    hidden = any(part.startswith(".") for part in parts[:-1]) or (parts[-1].startswith(".") and parts[-1] != MANIFEST)
    return not hidden and not _USER_FILES.fullmatch(parts[-1])


def manifest_text(paths: Iterable[str]) -> str:
    """The manifest's bytes for the owned ``paths``: sorted, one per line, the manifest included."""
    return "".join(f"{rel}\n" for rel in sorted({*paths, MANIFEST}))


def with_manifest(files: Mapping[str, str]) -> dict[str, str]:
    """``files`` plus the manifest that lists them: the tree exactly as :func:`write_tree` writes it."""
    owned = {rel: text for rel, text in files.items() if rel != MANIFEST}
    owned[MANIFEST] = manifest_text(owned)
    return dict(sorted(owned.items()))


def read_manifest(directory: str) -> list[str] | None:
    """The paths listed in ``directory``'s manifest that specgen writes (sorted), or None when it has no manifest.

    Entries naming what is never specgen's (:func:`specgen_writes`) are left out: those files stay the user's.
    """
    path = os.path.join(directory, MANIFEST)
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        with open(path, encoding="utf-8", newline="") as fh:
            text = fh.read()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise OutputError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise OutputError(f"cannot read {path}: it is not UTF-8 text") from None
    entries: set[str] = set()
    for number, line in enumerate(text.split("\n"), 1):
        if not line:
            continue
        if not _is_relative(line):
            raise OutputError(f"{path}:{number}: {line!r} is not a relative path inside the output directory")
        if specgen_writes(line):
            entries.add(line)
    return sorted(entries)


def refuse_non_directory(path: str, directory: str) -> None:
    """Refuse an output path ``directory`` (at ``path``) that exists and is not a directory: render and --check alike.

    fix146 item 2: a symbolic link loop (``ln -s loop loop``; or one a directory of the path runs through) is said as
    one, not "not a directory".
    """
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(
                f"output path {directory} is a symbolic link loop (it never resolves to a directory: {exc.strerror}); "
                "give the path of a directory; nothing was written"
            ) from None
    if os.path.islink(path) and not os.path.exists(path):  # hostile89: it read "exists and is not a directory"
        raise InputError(
            f"output path {directory} is a symbolic link to {os.readlink(path)!r}, which does not exist; give the path "
            "of a directory; nothing was written"
        )
    if os.path.lexists(path) and not os.path.isdir(path):
        raise InputError(f"output path {directory} exists and is not a directory")


def read_tree(directory: str) -> dict[str, str]:
    """The files specgen owns in ``directory`` (per its manifest), keyed by relative path (``/``-separated).

    Files the manifest does not list are not read at all; an owned path that is missing, a directory or
    a symlink (or lies below one) is left out. A directory without a manifest owns nothing: ``{}``.
    """
    owned = read_manifest(directory) if os.path.isdir(directory) else None
    if owned is None:
        return {}
    found: dict[str, str] = {}
    for rel in sorted({*owned, MANIFEST}):
        path = os.path.join(directory, *rel.split("/"))
        try:
            if not _is_plain_file(directory, rel):
                continue
            with open(path, "rb") as fh:
                found[rel] = fh.read().decode("utf-8", errors="replace")
        except OSError as exc:
            raise OutputError(f"cannot read {path}: {exc.strerror or exc}") from None
    return found


def interrupted_leftovers(directory: str, target: str) -> list[str]:
    """What an interrupted render of the output at the real path ``target`` left beside it, as paths by ``directory``.

    newuser53 item 9: a render killed while it staged the new tree leaves it (``.specgen-<hash>-new-XXXX``, a partial
    tree) in the output's parent, which only the next render removes; there, often a repository's root, a CI job's
    ``git add -A`` commits it. ``render --check`` names them (it writes nothing, so it removes none).
    """
    parent = os.path.dirname(target)
    try:
        names = sorted(os.listdir(parent))
    except OSError:
        return []
    prefixes = (work_prefix(target, "new"), work_prefix(target, "old"))
    shown = os.path.dirname(os.path.normpath(directory))
    return [os.path.join(shown, name) for name in names if name.startswith(prefixes)]


def diff_trees(current: dict[str, str], files: dict[str, str]) -> str:
    """A unified diff from ``current`` to ``files`` (empty when identical)."""
    import difflib

    chunks: list[str] = []
    for rel in sorted(set(current) | set(files)):
        old, new = current.get(rel), files.get(rel)
        if old == new:
            continue
        chunks.extend(
            difflib.unified_diff(
                _shown(old or "").splitlines(keepends=True),
                _shown(new or "").splitlines(keepends=True),
                fromfile=f"a/{rel}" if old is not None else "/dev/null",
                tofile=f"b/{rel}" if new is not None else "/dev/null",
            )
        )
    return "".join(line if line.endswith("\n") else line + "\n" for line in chunks)


def _shown(text: str) -> str:
    r"""``text`` with control characters other than line feeds and tabs escaped (``\x1b``, ``\r``).

    A tampered file's bytes reach the terminal or CI log as text, never as escape sequences.
    """
    if all(ch.isprintable() or ch in "\n\t" for ch in text):
        return text
    return "".join(ch if ch.isprintable() or ch in "\n\t" else ascii(ch)[1:-1] for ch in text)


def write_tree(
    files: dict[str, str], directory: str, *, keep: Collection[str] = (), workloads: Collection[str] = ()
) -> list[str]:
    """Make ``files`` (paths relative to ``directory``) the files specgen owns there, atomically.

    Owned files of the previous render that are not in ``files`` disappear, except those named in
    ``keep`` (``render --target``), which stay as they are on disk and stay in the manifest. Everything
    specgen does not own is carried over unchanged. The manifest is written from the result. Returns what
    was done to recover an interrupted earlier render (for the user to read). ``directory`` may run through no
    symlink a pull request could have planted (:func:`refuse_symlinks`; ``workloads`` are the files rendered).
    """
    target = refuse_symlinks(directory, workloads)
    refuse_non_directory(target, directory)
    files = {rel: text for rel, text in files.items() if rel != MANIFEST}
    for rel in files:
        if not _is_relative(rel):
            raise OutputError(f"cannot write {directory}: {rel!r} is not a relative path inside it")
        if any(len(part.encode("utf-8")) > MAX_NAME_BYTES for part in rel.split("/")):
            raise OutputError(f"cannot write {directory}: a name in {rel[:80]!r}... is longer than {MAX_NAME_BYTES} bytes")
    parent = os.path.dirname(target)
    try:
        os.makedirs(parent, exist_ok=True)
    except FileExistsError:  # a file where a directory of the path goes (makedirs says "File exists")
        raise OutputError(f"cannot write {directory}: {os.path.dirname(directory) or parent} is not a directory") from None
    except NotADirectoryError:  # hostile90: a file further up (afile/sub/out) read "Not a directory", naming none
        raise OutputError(f"cannot write {directory}: {file_on_the_way(directory)} is not a directory") from None
    except OSError as exc:
        raise OutputError(f"cannot write {directory}: {exc.strerror or exc}") from None
    with output_lock(parent, directory):
        if os.path.realpath(parent) != parent or os.path.islink(target):  # a symlink planted since the check
            raise OutputError(f"refusing to write {directory}: its path changed while specgen checked it; render again")
        try:
            recovered = recover(target, parent, _remove_tree)
        except OSError as exc:
            raise OutputError(f"cannot recover the interrupted render of {directory}: {_describe(exc)}") from None
        _refuse_replacing_workloads(workloads, target, directory, keep)
        _write_locked(files, directory, target, parent, keep)
    return recovered


def _refuse_replacing_workloads(workloads: Collection[str], target: str, directory: str, keep: Collection[str]) -> None:
    """Refuse a render that would replace or delete a workload it reads: one at a path the previous render wrote.

    hostile86: ``specgen render infra/ansible/inventory.yml -o infra`` (a workload saved over a rendered file, or
    reached through a symlink into the tree) was read, then replaced by the new render's file: the input was lost.
    """
    listed = read_manifest(target) if os.path.isdir(target) else None
    if not listed:
        return
    owned = {*listed, MANIFEST} - set(keep)
    for workload in workloads:
        real = os.path.realpath(workload)
        rel = os.path.relpath(real, target).replace(os.sep, "/")
        if rel in owned and not rel.startswith("../"):
            raise OutputError(
                f"refusing to write {directory}: the workload {workload} is {rel} there, a file the previous render wrote "
                f"(listed in {MANIFEST}), which this render would replace: keep the workload outside the output tree; "
                "nothing was written"
            )


def _write_locked(files: dict[str, str], directory: str, target: str, parent: str, keep: Collection[str]) -> None:
    """:func:`write_tree` once the lock is held and leftovers are dealt with."""
    old: dict[str, str] = {}
    owned: set[str] = set()
    mode = 0o777 & ~_umask()
    if os.path.isdir(target):
        listed = read_manifest(target)
        try:
            # a directory specgen did not write is refused before it is walked (``-o /`` reads nothing below it)
            if listed is None and _has_entries(target):
                raise _unowned_error(directory)
            old = _scan(target)
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except OSError as exc:
            raise OutputError(f"cannot read {directory}: {_describe(exc)}") from None
        owned = {*(listed or ()), MANIFEST}
    # an owned path holding a directory is the user's (specgen writes only files): carry it over too
    kept = {rel for rel, kind in old.items() if rel in owned and kind != "dir" and rel in keep} - {*files, MANIFEST}
    carried = {rel: kind for rel, kind in old.items() if rel not in owned or kind == "dir" or rel in kept}
    _refuse_conflicts(files, carried, directory)
    manifest = manifest_text([*files, *kept])
    if os.path.ismount(target):
        # hostile78 item 3: a bind mount (docker run -v $PWD/out:/out) cannot be renamed, so no tree swaps into it
        raise _mount_point_error(directory)
    with terminate_cleans_up(lambda: _terminated_said(directory)):
        _stage_and_swap(files, directory, target, parent, (old, carried), manifest, mode)


def _terminated_said(directory: str) -> str:
    """What a render SIGTERM stopped left (:mod:`generator.terminate`): the output old or new, nothing beside it."""
    if directory in REPLACED:
        return f"the new render was written in full to {directory}; nothing is left beside it"
    return f"{directory} is as it was, and the tree staged beside it was removed"


def _stage_and_swap(
    files: dict[str, str],
    directory: str,
    target: str,
    parent: str,
    trees: tuple[dict[str, str], dict[str, str]],
    manifest: str,
    mode: int,
) -> None:
    """Build the new tree beside ``target`` and swap it in (``trees``: the old tree's entries, those carried over)."""
    old, carried = trees
    try:
        staging = tempfile.mkdtemp(prefix=work_prefix(target, "new"), dir=parent)
    except PermissionError as exc:
        # hostile78 item 8: the output itself may be writable; it is its parent the new tree is built in
        shown = os.path.dirname(os.path.normpath(directory)) or "."
        raise OutputError(
            f"cannot write {directory}: its parent directory {shown} is not writable ({exc.strerror}); specgen builds the "
            "new tree beside the output and swaps the two: make it writable, or render elsewhere"
        ) from None
    except OSError as exc:
        raise OutputError(f"cannot write {directory}: {exc.strerror or exc}") from None
    try:
        _stage(staging, target, files, manifest, old, carried, directory)
        try:
            # mkdtemp makes it 0700; the output gets the usual (or its previous) mode once it is filled, as its
            # subdirectories do (hostile78 item 4: a read-only output given its 555 first could not be filled)
            os.chmod(staging, mode)
        except OSError as exc:
            raise OutputError(f"cannot write {directory}: {exc.strerror or exc}") from None
        pause_if_asked()  # test-only: SIGTERM sent here, with the tree staged (tests/test_fix168.py)
        left = _swap(staging, target, parent, directory)
    except BaseException:
        _remove_tree(staging)
        raise
    if left is not None:  # hostile79 item 6: the new tree is in place; the previous one could not all be deleted
        retired, why = left
        shown = os.path.join(os.path.dirname(os.path.normpath(directory)), os.path.basename(retired))
        raise OutputError(
            f"wrote the new render to {directory} in full, but could not remove the previous tree, left in {shown} "
            f"({why}); it is no part of the output: remove it by hand (as the user that owns what stays)"
        )


def _mount_point_error(directory: str) -> OutputError:
    """The refusal of an output directory that is a mount point (hostile78 item 3), which no rename can move."""
    return OutputError(
        f"cannot write {directory}: it is a mount point, and specgen replaces its output directory whole (the new tree "
        f"is built beside it and renamed into its place), which a mount point cannot take; render into a directory "
        f"inside it ({os.path.join(directory, 'specgen')}, say)"
    )


def _unrenamed(exc: OSError, directory: str) -> OutputError:
    """The error of renaming the output directory ``directory`` away (or exchanging it), its previous tree unchanged.

    review78 item 3: EBUSY is a mount point that :func:`os.path.ismount` misses, a bind mount within one filesystem
    (the same device as its parent); rename(2) refuses to move a mount point with EBUSY.
    """
    if exc.errno == errno.EBUSY:
        return _mount_point_error(directory)
    return OutputError(f"cannot write {directory}: {exc.strerror or exc}; the previous output is unchanged")


def _stage(
    staging: str,
    target: str,
    files: dict[str, str],
    manifest: str,
    old: dict[str, str],
    carried: dict[str, str],
    directory: str,
) -> None:
    """Fill ``staging``: the carried-over entries of the old tree, then the new owned files and the manifest."""
    nonempty = {_parent(rel) for rel in old}
    rel = ""
    try:
        for rel, kind in sorted(carried.items()):
            src, dst = _join(target, rel), _join(staging, rel)
            if kind == "dir":
                # the user's empty directories stay; one that held only owned files goes when they go
                # (a directory with anything left in it is made below, for its contents)
                if rel not in nonempty:
                    os.makedirs(dst, exist_ok=True)
                continue
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if kind == "link":
                os.symlink(os.readlink(src), dst)
            else:
                try:
                    os.link(src, dst)
                except OSError:
                    if kind != "file":
                        raise
                    shutil.copy2(src, dst)
        made: set[str] = set()  # the folders made for the files so far: each made once
        for rel, text in sorted({**files, MANIFEST: manifest}.items()):
            dst = _join(staging, rel)
            folder = os.path.dirname(dst)
            if folder not in made:
                os.makedirs(folder, exist_ok=True)
                made.add(folder)
            # the UTF-8 bytes as they are (a text file opened with newline="\n" writes the same): no text layer a file
            with open(dst, "wb") as fh:
                fh.write(text.encode("utf-8"))
        rel = ""
        # the old directories' permissions, deepest first (a read-only one is filled before it is closed)
        for rel in sorted((r for r, kind in old.items() if kind == "dir"), reverse=True):
            if os.path.isdir(_join(staging, rel)):
                os.chmod(_join(staging, rel), stat.S_IMODE(os.lstat(_join(target, rel)).st_mode))
    except OSError as exc:
        where = os.path.join(directory, *rel.split("/")) if rel else directory
        raise OutputError(f"cannot write {where}: {exc.strerror or exc}; the previous output is unchanged") from None


#: The output directories this process has put a new tree in (:func:`write_tree`), in order: what an interrupted
#: ``render`` says it wrote (newuser75 item 5: Ctrl-C after the swap exited 1, "Aborted!", as if nothing was).
REPLACED: list[str] = []


def _swap(staging: str, target: str, parent: str, directory: str) -> tuple[str, str] | None:
    """Exchange ``staging`` and ``target`` atomically and delete the retired tree (two renames where impossible).

    None, or where the retired tree stays and what of it could not be deleted (:func:`_remove_tree`).

    Ctrl-C is held off from the first rename until the swap is recorded in :data:`REPLACED`: an interrupt then finds
    the output directory either as it was and unrecorded, or whole, new and recorded.
    """
    with interrupts_held():
        if not os.path.isdir(target):
            try:
                os.rename(staging, target)
            except OSError as exc:
                raise OutputError(f"cannot write {directory}: {exc.strerror or exc}") from None
            REPLACED.append(directory)
            return None
        try:
            exchange(staging, target)
        except ExchangeUnsupportedError:
            retired = _swap_by_renames(staging, target, parent, directory)
        except OSError as exc:
            raise _unrenamed(exc, directory) from None
        else:
            retired = staging  # now the previous tree; everything the user owned in it is linked into the new one
            REPLACED.append(directory)
    # deleted with Ctrl-C let through (review77 item 6: a large old tree's deletion was held too); one it stops is a
    # working directory the next run's recover() deletes
    left = _remove_tree(retired)
    return None if left is None else (retired, left)


def _swap_by_renames(staging: str, target: str, parent: str, directory: str) -> str:
    """Rename ``target`` away and ``staging`` in, putting it back if that fails; the retired tree's directory, to delete."""
    try:
        retired = tempfile.mkdtemp(prefix=work_prefix(target, "old"), dir=parent)
    except OSError as exc:
        raise OutputError(f"cannot write {directory}: {exc.strerror or exc}; the previous output is unchanged") from None
    old_home = os.path.join(retired, "tree")
    try:
        os.rename(target, old_home)
    except OSError as exc:
        _remove_tree(retired)
        raise _unrenamed(exc, directory) from None
    try:
        os.rename(staging, target)
    except OSError as exc:
        try:
            os.rename(old_home, target)
        except OSError:
            raise OutputError(
                f"cannot write {directory}: {exc.strerror or exc}; the previous output could not be put back and is in {old_home}"
            ) from None
        _remove_tree(retired)
        raise OutputError(f"cannot write {directory}: {exc.strerror or exc}; the previous output is unchanged") from None
    REPLACED.append(directory)
    return retired


def _same_file(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are one file (device and inode); False where either cannot be read."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_report_path(path: str, inputs: Collection[str], output: str | None = None) -> None:
    """Refuse a report path that would destroy an input or collide with the output tree, before anything is written.

    ``inputs``: the files read (a report written over one would replace the workload); ``output``: the tree's
    directory (the report may not be it, nor lie inside it, where the tree's writer owns every path).
    """
    try:
        real = os.path.realpath(path)
    except OSError:  # a relative path from a working directory deleted since: the writer says so
        return
    for given in inputs:
        # the same file by any name, a hard link included (fuzz25 M2: a second name of the workload was overwritten)
        if os.path.exists(given) and (os.path.realpath(given) == real or _same_file(given, path)):
            raise InputError(f"--gitlab-report {path} is the input file {given}; give the report a path of its own")
    if output is not None:
        tree = os.path.realpath(output)
        if real == tree or real.startswith(tree.rstrip(os.sep) + os.sep):
            raise InputError(f"--gitlab-report {path} is the output directory {output} or inside it; give a path outside it")
    if os.path.exists(path) and not stat.S_ISREG(os.stat(path).st_mode):  # a symlink: write_report decides
        raise InputError(f"--gitlab-report {path} exists and is not a regular file")


def write_report(path: str, text: str, workloads: Collection[str] = ()) -> None:
    """Write a report file (``--gitlab-report``) at ``path``, not through a symlink a pull request could have planted.

    The file is opened at the real path :func:`refuse_symlinks` found and without following a symlink there, so one
    put at the report's place after the check is refused by the kernel too.
    """
    real = refuse_symlinks(path, workloads)
    try:
        fd = os.open(real, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o666)
        with open(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None


#: Symlinks the kernel follows in one path before giving up (Linux's ``MAXSYMLINKS``).
MAX_SYMLINKS = 40


def refuse_symlinks(path: str, workloads: Collection[str] = ()) -> str:
    """The real path ``path`` (an output tree or a report file) names; an OutputError if a pull request could steer it.

    A pull request controls the files of its checkout: a committed ``infra -> /home/runner/.ssh`` would send the
    render outside the output tree, wherever that checkout lies relative to the working directory. So the path is
    walked as the kernel walks it (a symlink's target is walked in turn, and ``..`` after a followed symlink is the
    parent of its target) and a symlink in it is refused when

    * it is the last component (the output directory or report file itself), wherever it is;
    * the directory holding it lies in a git work tree (a ``.git`` file or directory in it or above): any checkout,
      not only the working directory's;
    * that directory is the working directory or below it (a checkout without ``.git``);
    * that directory is in the repository of one of ``workloads`` (its git root, else its directory).

    Every other symlink belongs to the machine or to the user and is followed: ``/tmp -> /private/tmp`` on macOS,
    ``/home -> /var/home`` on Fedora Silverblue, a ``$PWD`` entered through the user's own link outside any
    repository. The returned path holds no symlink; the writer works on it, so the path is resolved only once.
    """
    here = _working_directory()
    if os.path.isabs(path):
        resolved = os.sep
    elif here is None:
        raise OutputError(f"cannot write {path}: the working directory no longer exists; give an absolute path")
    else:
        resolved = here
    roots = [(here, "the working directory")] if here else []
    roots += _workload_repositories(workloads)
    given = [part for part in path.split(os.sep) if part not in ("", ".")]
    # the output directory or report file itself (none after a final ``..``: that names a directory the walk resolves)
    last = len(given) - 1 if given and given[-1] != ".." else None
    # a stack, the next component last; the index in ``given``, None for a component of a followed link's target
    pending: list[tuple[str, int | None]] = [(part, i) for i, part in reversed(list(enumerate(given)))]
    typed = os.sep if os.path.isabs(path) else ""  # the path as given, up to the component being walked
    followed = 0
    while pending:
        part, index = pending.pop()
        if part in ("", "."):
            continue
        if index is not None:
            typed = os.path.join(typed, part) if typed else part
        if part == "..":
            resolved = os.path.dirname(resolved)  # ``resolved`` holds no symlink: its parent is the kernel's ``..``
            continue
        probe = os.path.join(resolved, part)
        if not os.path.islink(probe):
            resolved = probe
            continue
        try:
            link = os.readlink(probe)
        except OSError as exc:  # a link the user may not read (/proc/1/cwd as a user): fuzz13 item 9
            raise OutputError(f"cannot check {path}: {_describe(exc)}") from None
        why = "it is the output path itself" if index == last else _controlled(resolved, roots)
        if why:
            shown = typed if index is not None else probe  # a component of a link's target: where the walk found it
            raise OutputError(
                f"refusing to write {path}: {shown} is a symlink to {link} ({why}; a pull request could have "
                "committed it); give the real path if that is where the output belongs"
            )
        followed += 1
        if followed > MAX_SYMLINKS:
            raise OutputError(f"cannot write {path}: more than {MAX_SYMLINKS} symlinks in it (a loop?)")
        if os.path.isabs(link):
            resolved = os.sep
        pending.extend((piece, None) for piece in reversed(link.split(os.sep)))
    return resolved


def _working_directory() -> str | None:
    """The working directory's real path, or None when it was deleted (an absolute output path still works)."""
    try:
        return os.path.realpath(os.getcwd())
    except OSError:
        return None


def _workload_repositories(workloads: Collection[str]) -> list[tuple[str, str]]:
    """(real path, description) of the repository holding each workload file: its git root, else its directory."""
    roots: list[tuple[str, str]] = []
    for workload in sorted(set(workloads)):
        try:
            root = repository_root(os.path.dirname(os.path.abspath(workload)))
        except OSError:  # a relative workload path after the working directory was deleted: it was not read either
            continue
        roots.append((root, f"the repository of {workload}"))
    return roots


def _controlled(directory: str, roots: Iterable[tuple[str, str]]) -> str:
    """Why a symlink in the real path ``directory`` could be a pull request's, or "" when it is the machine's."""
    tree = git_work_tree(directory)
    if tree is not None:
        return f"it lies in the git work tree {tree}"
    for root, what in roots:
        if os.path.commonpath([directory, root]) == root:
            return f"it lies in {what}, {root}"
    return ""


def _refuse_conflicts(files: dict[str, str], carried: dict[str, str], directory: str) -> None:
    """Raise before writing anything if a user's entry is where a new owned file or its directory goes."""
    for rel in sorted({*files, MANIFEST}):
        if rel in carried:
            why = (
                "it is a directory, where specgen writes a file"
                if carried[rel] == "dir"
                else (f"specgen did not write it (it is not in {MANIFEST})")
            )
            raise OutputError(
                f"refusing to overwrite {os.path.join(directory, *rel.split('/'))}: {why}; move it away and render again"
            )
        ancestor = _parent(rel)
        while ancestor:
            if carried.get(ancestor, "dir") != "dir":
                raise OutputError(
                    f"cannot write {os.path.join(directory, *rel.split('/'))}: "
                    f"{os.path.join(directory, *ancestor.split('/'))} is in the way and specgen did not write it; "
                    "move it away and render again"
                )
            ancestor = _parent(ancestor)


def _unowned_error(directory: str) -> OutputError:
    """A render's refusal of a directory that holds files and no manifest."""
    return OutputError(
        f"refusing to write into {directory}: it holds files specgen did not write (no {MANIFEST}); "
        "choose a new or empty directory"
    )


def refuse_unowned(directory: str) -> None:
    """``render --check``: refuse, as the render would, an output directory that holds files and no manifest.

    newuser82 item 4: ``--check -o infra`` on a folder of trees (``infra/eks``, ``infra/gke``, each with its own
    manifest) read as an empty tree: a patch adding every file, "stale; run `specgen render`" (exit 4), and that render
    refused the folder (exit 1).
    """
    try:
        if os.path.isdir(directory) and read_manifest(directory) is None and _has_entries(directory):
            raise _unowned_error(directory)
    except OSError as exc:
        raise OutputError(f"cannot read {directory}: {_describe(exc)}") from None


def refuse_conflicts(directory: str, target: str, files: dict[str, str]) -> None:
    """``render --check``: refuse, as the render would, a user's entry where a file of ``files`` goes.

    hostile87: a directory at an owned file's path (``SPEC.md/``), or a file specgen did not write where it now writes
    one, read "stale; run `specgen render`" with a patch from /dev/null (exit 4), and that render refused it (exit 1).
    ``target``: the real path of ``directory``.
    """
    listed = read_manifest(target) if os.path.isdir(target) else None
    if listed is None:
        return
    try:
        found = _scan(target)
    except OSError as exc:
        raise OutputError(f"cannot read {directory}: {_describe(exc)}") from None
    owned = {*listed, MANIFEST}
    _refuse_conflicts(files, {rel: kind for rel, kind in found.items() if rel not in owned or kind == "dir"}, directory)


def _has_entries(path: str) -> bool:
    with os.scandir(path) as entries:
        return next(entries, None) is not None


def _scan(root: str) -> dict[str, str]:
    """Every entry under ``root`` (not following symlinks): relative path -> dir, file, link or other."""
    found: dict[str, str] = {}

    def walk(path: str, prefix: str) -> None:
        with os.scandir(path) as entries:
            for entry in entries:
                rel = prefix + entry.name
                if entry.is_symlink():
                    found[rel] = "link"
                elif entry.is_dir(follow_symlinks=False):
                    found[rel] = "dir"
                    walk(entry.path, rel + "/")
                else:
                    found[rel] = "file" if entry.is_file(follow_symlinks=False) else "other"

    walk(root, "")
    return found


def _is_plain_file(root: str, rel: str) -> bool:
    """Whether ``rel`` is a regular file under ``root`` reached through real directories only."""
    path = root
    parts = rel.split("/")
    try:
        for part in parts[:-1]:
            path = os.path.join(path, part)
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                return False
        return stat.S_ISREG(os.lstat(os.path.join(path, parts[-1])).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:  # a name longer than the file system takes names no file (a tampered manifest): missing
        if exc.errno == errno.ENAMETOOLONG:
            return False
        raise


def _is_relative(rel: str) -> bool:
    return "\0" not in rel and all(part not in ("", ".", "..") for part in rel.split("/"))


def _parent(rel: str) -> str:
    return rel.rpartition("/")[0]


def _join(root: str, rel: str) -> str:
    return os.path.join(root, *rel.split("/"))


def _describe(exc: OSError) -> str:
    return f"{exc.filename}: {exc.strerror}" if exc.filename and exc.strerror else str(exc.strerror or exc)


def _remove_tree(path: str) -> str | None:
    """Delete ``path`` as far as possible, making a user's read-only directories in it writable first.

    None where it is gone; else the first thing that stayed and why (``terraform/.terraform/p: Permission denied``):
    hostile79 item 6, a file of another user's (a root container's ``terraform init``) was kept unsaid.
    """
    stayed: list[str] = []

    def retry(func: Callable[[str], object], failed: str, exc_info: Any) -> None:
        holder = os.path.dirname(failed)
        inside = holder == path or holder.startswith(path + os.sep)
        try:
            if not inside:  # never touch anything outside the tree being removed
                raise exc_info[1]
            os.chmod(holder, 0o700)
            func(failed)
        except FileNotFoundError:
            pass
        except OSError:
            if not stayed:
                first = exc_info[1]
                rel = os.path.relpath(failed, path) if failed != path else "."
                stayed.append(f"{rel}: {getattr(first, 'strerror', None) or first}")

    if not os.path.lexists(path):
        return None
    shutil.rmtree(path, onerror=retry)
    if not os.path.lexists(path):
        return None
    return stayed[0] if stayed else "it is still there"


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask
