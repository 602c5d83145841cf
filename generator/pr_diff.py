"""``specgen diff --base REV FILE...``: what a pull request does to the fleet, for one sticky comment.

Each workload file is read twice: as it is in the working tree, and as it was at the git revision
``REV`` (``git show REV:path``, no checkout). Both are planned; the Markdown says, in one headline,
what changes in GPUs, nodes, power and cost over every file, then per file the totals, and per
changed pool its per-GPU memory (a Mermaid pie per deployment). The body stays under GitHub's
65,536-character comment limit (cut at :data:`MAX_MARKDOWN_CHARS`, saying what was left out).
"""

from __future__ import annotations

import os
import re
import subprocess
from typing import Any

from generator.errors import InputError
from generator.fleet_diff import (
    TRAINING_FIELDS,
    diff_plans,
    fmt_cell,
    markdown_diff,
    replacement_lines,
    replacement_text,
    signed_cell,
)
from generator.input_files import MAX_WORKLOAD_BYTES, check_distinct_files, short
from generator.named_tuple import NamedTuple
from generator.units import GIB

MAX_MARKDOWN_CHARS = 60_000
#: Replaced pools the comment's headline lists one by one (each file's section lists its own).
MAX_HEADLINE_REPLACEMENTS = 10
EMPTY_PLAN: dict[str, Any] = {"totals": {}, "pools": [], "deployments": []}
#: Totals shown in the headline, with their labels (cost fields appear where the plan has them).
HEADLINE = (
    ("gpus", "GPUs"),
    ("nodes", "nodes"),
    ("power_w", "power (W)"),
    ("capex_usd", "capex (USD)"),
    ("opex_usd_per_month", "opex (USD/month)"),
    ("usd_per_month", "cost (USD/month)"),
    ("training_usd_per_job", "rented training (USD per run)"),
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


def _git(args: list[str]) -> _Git:
    try:
        done = subprocess.run(["git", *args], capture_output=True, check=False)
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
        raise InputError(f"{short(path)} is outside the git repository here")
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
    parts = rel.split("/")
    done: list[str] = []
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
        if not parts and kind != "blob":
            raise InputError(
                f"{short(path)} at {rev} is {'a directory' if kind == 'tree' else f'a git {kind}'}, not a workload file"
            )
        done.append(part)
    if not done:
        raise InputError(f"{short(path)} at {rev} is a directory, not a workload file")
    return _read_blob(rev, "/".join(done), path)


def _read_blob(rev: str, rel: str, path: str) -> str:
    """The UTF-8 text of the blob ``rel`` at ``rev`` (a file, links already followed)."""
    spec = f"{rev}:{rel}"
    size = int(_git(["cat-file", "-s", spec]).stdout.strip() or 0)
    if size > MAX_WORKLOAD_BYTES:  # as a workload file is read (fuzz13 item 12)
        raise InputError(f"{short(path)} at {rev} is {size:,} bytes, more than the {MAX_WORKLOAD_BYTES:,} specgen reads")
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


def check_revision(rev: str) -> None:
    """Raise InputError unless ``rev`` names a commit of the repository in the current directory."""
    done = _git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"])
    if done.returncode != 0:
        raise InputError(f"--base {rev!r} is not a commit of the git repository here")


def _plan_text(text: str, file: str) -> dict[str, Any]:
    from generator.planner import plan_workload
    from generator.workload import load_document
    from generator.workload.loader import parse_yaml

    return plan_workload(load_document(parse_yaml(text, file), file)).to_dict()


def _plan_path(path: str) -> dict[str, Any]:
    from generator.api import plan_file

    return plan_file(path)[1].to_dict()


def compare_with_base(rev: str, paths: list[str]) -> dict[str, Any]:
    """Per file: status (added, removed, changed, unchanged), its fleet diff and both plans' pools' memory."""
    check_revision(rev)
    check_distinct_files(paths)  # a workload given twice would count twice in the fleet's totals
    files: list[dict[str, Any]] = []
    named: dict[str, str] = {}  # workload name -> the file naming it first
    for path in paths:
        old_text = file_at(rev, path)
        exists = os.path.exists(path)
        if old_text is None and not exists:
            raise InputError(f"{path}: neither in the working tree nor at {rev}")
        old = _plan_text(old_text, f"{rev}:{path}") if old_text is not None else EMPTY_PLAN
        new = _plan_path(path) if exists else EMPTY_PLAN
        # the change's own workloads must differ in name; two at the base alike are what a fixing change removes
        name = new.get("workload")
        if new is not EMPTY_PLAN and (first := named.setdefault(str(name), path)) != path:
            raise InputError(
                f"{first} and {path} are both named '{name}'; as one cluster's workloads (render) their names must "
                "differ, and the diff would count the fleet twice"
            )
        status = "added" if old_text is None else "removed" if not exists else "changed"
        diff = diff_plans(old, new)
        if status == "changed" and not diff["pools"] and not diff["deployments"]:
            status = "unchanged"
        files.append({"file": path, "status": status, "diff": diff, "memory": pool_memory(new, diff)})
    replaced = [{"file": f["file"], **entry} for f in files for entry in f["diff"]["replacements"]]
    return {"base": rev, "replacements": replaced, "totals": _sum_totals(files), "files": files}


def _sum_totals(files: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {}
    for key, _ in HEADLINE:
        rows = [f["diff"]["totals"].get(key) or {"old": None, "new": None} for f in files]
        old = [r["old"] for r in rows if r["old"] is not None]
        new = [r["new"] for r in rows if r["new"] is not None]
        if not old and not new:
            continue
        if key in TRAINING_FIELDS:  # no rented job on a side is no figure, not a free one (fuzz15 item 11)
            a, b = (sum(side) if side else None for side in (old, new))
            out[key] = {"old": a, "new": b, "delta": b - a if a is not None and b is not None else None}
            continue
        a, b = sum(old), sum(new)
        out[key] = {"old": a, "new": b, "delta": b - a}
    return out


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
    bullets = [f"- {code_span(r['file'])}: {replacement_text(r)}" for r in replacements[:MAX_HEADLINE_REPLACEMENTS]]
    more = len(replacements) - MAX_HEADLINE_REPLACEMENTS
    if more > 0:
        bullets.append(f"- _{more} more; see each file below or the JSON report._")
    return [*lines[:2], *bullets, ""]


def markdown(result: dict[str, Any]) -> str:
    """The pull-request comment: headline over every file, then each changed file (within the size limit)."""
    head = [f"## specgen: fleet change against {code_span(result['base'])}", ""]
    head += _replaced_headline(result.get("replacements", []))
    labels = dict(HEADLINE)
    if result["totals"]:
        head += ["| | before | after | change |", "|---|---:|---:|---:|"]
        for key, row in result["totals"].items():
            head.append(f"| **{labels[key]}** | {fmt_cell(row['old'])} | {fmt_cell(row['new'])} | {signed_cell(row['delta'])} |")
    changed = [f for f in result["files"] if f["status"] != "unchanged"]
    unchanged = [f["file"] for f in result["files"] if f["status"] == "unchanged"]
    head += ["", f"{len(changed)} workload file(s) change the fleet; {len(unchanged)} unchanged."]
    body = "\n".join(head) + "\n"
    left_out = 0
    for entry in changed:
        section = [
            "",
            f"### {code_span(entry['file'])} ({entry['status']})",
            "",
            markdown_diff(entry["diff"]).split("\n", 2)[2].strip(),
        ]
        section += [mermaid_memory(m) for m in entry["memory"]]
        text = "\n".join(section) + "\n"
        if len(body) + len(text) > MAX_MARKDOWN_CHARS - 200:
            left_out += 1
            continue
        body += text
    if left_out:
        body += f"\n_{left_out} more changed file(s) left out to stay under the comment size limit; see the JSON report._\n"
    return body
