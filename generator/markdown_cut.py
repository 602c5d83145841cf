"""A Markdown document cut to the size a pull-request comment holds, at a line outside a code fence (hostile94).

A fence is a run of three or more backticks or tildes, closed by a run of the same character at least as long
(CommonMark, https://spec.commonmark.org/0.31.2/#fenced-code-blocks): review99 item 2 found ``~~~`` and ````` ```` `````
fences cut open (hostile95).

GitHub refuses a comment of more than 65,536 characters (GitLab a note of more than 1,000,000): a diff of a fleet of
thousands of pools was printed whole (264,263 characters for 2,000 pools), and a ``diff --base`` file whose section
alone passed the limit was left out entirely, the comment showing none of it. The head is kept; the caller says what
was left out and where the whole is.
"""

from __future__ import annotations

#: The characters a Markdown code fence is a run of, and its shortest run (CommonMark 0.31, 4.5 "Fenced code blocks").
_FENCE_CHARS = "`~"
_MIN_FENCE = 3


def _fence(line: str) -> tuple[str, str] | None:
    """The run of fence characters ``line`` begins with (its indent aside) and what follows it; None: no fence line.

    A backtick fence's info string holds no backtick (CommonMark), so ```` ``` a`b ```` opens none. Any indent is taken,
    not only CommonMark's three spaces, so that a fence in a list item is seen too: a cut then errs to an earlier line.
    """
    text = line.lstrip(" \t")
    char = text[:1]
    if not char or char not in _FENCE_CHARS:
        return None
    run = text[: len(text) - len(text.lstrip(char))]
    rest = text[len(run) :]
    if len(run) < _MIN_FENCE or (char == "`" and "`" in rest):
        return None
    return run, rest


def _closes(line: str, opened: str) -> bool:
    """Whether ``line`` closes the fence ``opened``: the same character, a run at least as long, nothing after it."""
    fence = _fence(line)
    return fence is not None and fence[0][0] == opened[0] and len(fence[0]) >= len(opened) and not fence[1].strip()


def cut_markdown(text: str, room: int) -> tuple[str, int]:
    """The longest head of ``text`` within ``room`` characters ending outside a code fence, and the lines it leaves out.

    The head ends on a newline, blank lines at its end dropped, so that a line written after a blank one is never read
    as a table row; the count is of ``text``'s non-blank lines after it.
    """
    if len(text) <= room:
        return text, 0
    lines = text.split("\n")
    kept = 0  # lines of the head so far that end outside a fence
    size = 0
    opened = ""  # the run of the fence the line is in ("": none); a ``` inside a ~~~ or ```` fence is its text
    for index, line in enumerate(lines):
        size += len(line) + 1
        if size > room:
            break
        if opened:
            if _closes(line, opened):
                opened = ""
        elif fence := _fence(line):
            opened = fence[0]
        if not opened:
            kept = index + 1
    head = lines[:kept]
    while head and not head[-1].strip():
        head.pop()
    dropped = sum(1 for line in lines[len(head) :] if line.strip())
    return "\n".join(head) + "\n" if head else "", dropped
