"""A Markdown document cut to the size a pull-request comment holds, at a line outside a code fence (hostile94).

GitHub refuses a comment of more than 65,536 characters (GitLab a note of more than 1,000,000): a diff of a fleet of
thousands of pools was printed whole (264,263 characters for 2,000 pools), and a ``diff --base`` file whose section
alone passed the limit was left out entirely, the comment showing none of it. The head is kept; the caller says what
was left out and where the whole is.
"""

from __future__ import annotations

#: The fence lines of a Markdown code block (a Mermaid picture is one): a cut inside one would leave it open.
_FENCE = "```"


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
    fenced = False
    for index, line in enumerate(lines):
        size += len(line) + 1
        if size > room:
            break
        if line.lstrip().startswith(_FENCE):
            fenced = not fenced
        if not fenced:
            kept = index + 1
    head = lines[:kept]
    while head and not head[-1].strip():
        head.pop()
    dropped = sum(1 for line in lines[len(head) :] if line.strip())
    return "\n".join(head) + "\n" if head else "", dropped
