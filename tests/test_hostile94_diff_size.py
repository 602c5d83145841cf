"""A diff of a big fleet stays under a pull-request comment's size, cut honestly (hostile94).

``diff OLD NEW`` printed 264,263 characters of Markdown for 2,000 resized pools (GitHub refuses a comment of more
than 65,536), and ``diff --base`` left a file whose section alone passed the limit out whole: the comment showed none
of it and said "1 more changed file(s) left out". Each is now cut at a line, outside a code fence, the summary first,
the last line saying how much was left out and that ``--format json`` gives it whole; the same bytes on every run.
"""

from __future__ import annotations

from typing import Any

from generator.fleet_diff import diff_plans
from generator.markdown_cut import cut_markdown
from generator.pr_diff import MAX_MARKDOWN_CHARS, markdown, two_files_markdown
from tests.test_pool_identity import _fleet, _pool


def _resized(pools: int) -> dict[str, Any]:
    """The diff of ``pools`` pools each grown from one node to two."""
    old = _fleet(*(_pool(f"pool-{i:05}", "p", 1) for i in range(pools)))
    new = _fleet(*(_pool(f"pool-{i:05}", "p", 2) for i in range(pools)))
    return diff_plans(old, new)


def _fences_closed(text: str) -> bool:
    return sum(1 for line in text.split("\n") if line.lstrip().startswith("```")) % 2 == 0


def test_a_two_file_diff_of_thousands_of_pools_is_cut_under_the_limit() -> None:
    diff = _resized(2000)
    text = two_files_markdown(diff)
    assert len(text) < MAX_MARKDOWN_CHARS and text == two_files_markdown(diff)
    head, last = text.rstrip("\n").rsplit("\n\n", 1)
    assert head.startswith("## specgen: fleet change\n\n| | old | new | change |")  # the totals first
    assert head.endswith("7,300.00 → 14,600.00 |") and "| `pool-00100` |" in head and "`pool-01999`" not in text
    shown = head.count("| `pool-")
    assert last == (
        f"_The diff is cut here: {2000 - shown:,} more lines left out to stay under GitHub's 65,536-character comment "
        "limit; `--format json` gives it whole._"
    )


def test_a_small_two_file_diff_is_not_cut() -> None:
    text = two_files_markdown(_resized(3))
    assert "cut here" not in text and text.count("| `pool-") == 3


def test_a_base_diff_shows_the_head_of_a_file_whose_section_alone_passes_the_limit() -> None:
    files = [{"file": "big.yaml", "status": "changed", "diff": _resized(2000), "memory": []}]
    files += [{"file": f"after-{i}.yaml", "status": "changed", "diff": _resized(2), "memory": []} for i in range(12)]
    result = {"base": "main", "totals": {}, "files": files}
    text = markdown(result)
    assert len(text) < MAX_MARKDOWN_CHARS and text == markdown(result)
    assert "### `big.yaml` (changed)" in text and "| `pool-00100` |" in text  # was: none of it
    shown = text.count("| `pool-0")
    assert f"_`big.yaml`'s section is cut here: {2000 - shown:,} more lines left out._" in text
    assert text.endswith(
        "_13 changed file(s) cut or left out to stay under GitHub's 65,536-character comment limit: `big.yaml`, "
        + ", ".join(f"`after-{i}.yaml`" for i in range(9))
        + " and 3 more; `--format json` gives every file whole._\n"
    )
    assert "### `after-0.yaml`" not in text and _fences_closed(text)


def test_a_cut_never_ends_inside_a_code_fence() -> None:
    text = "# t\n\n| a |\n|---|\n| 1 |\n\n```mermaid\npie\n" + '"x" : 1\n' * 50 + "```\n\nafter\n"
    room = text.index('"x"') + 100  # inside the fence
    head, dropped = cut_markdown(text, room)
    assert head == "# t\n\n| a |\n|---|\n| 1 |\n" and dropped == 54 and _fences_closed(head)
    assert cut_markdown(text, len(text)) == (text, 0)
