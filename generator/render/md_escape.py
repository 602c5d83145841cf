"""Text from a workload or a file name, made inert in Markdown and HTML (SPEC.md, the ``diff`` comment).

:func:`md_text` backslash-escapes every character CommonMark/GFM or HTML give a meaning inside a
line, and a leading block marker; :func:`md_code` builds a code span whose fence is longer than any
backtick run in the text. Both replace line breaks and other control characters with visible
escapes, so no value can start a new block (a heading, a list, ``<details>``, a table row).
"""

from __future__ import annotations

import re

#: Characters escaped anywhere in text: emphasis, code, links, HTML, entities, tables, strikethrough
#: (``_`` only where it can delimit emphasis: not between two letters or digits, as in ``kv_cache``).
_INLINE = re.compile(r"([\\`*\[\]<>&|~!]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
#: A block marker at the start of a line: heading, quote, list item, thematic break, setext underline.
_LEADING = re.compile(r"^([#>+=-]|\d{1,9}(?=[.)](\s|$)))")
#: A line that would close a fenced code block.
_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.MULTILINE)
#: Control characters, line breaks, and the bidirectional and zero-width formatting characters that make a line read
#: otherwise than it is (Trojan Source, CVE-2021-42574; fuzz25 M1: a model path in SPEC.md and the diff comment).
_CONTROL = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


class MarkdownSafe(str):
    """Text already made safe for Markdown; the escaping finalizer leaves it alone."""

    __slots__ = ()


def _visible(match: re.Match[str]) -> str:
    char = match.group(0)
    return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char, f"\\u{ord(char):04x}")


def one_line(text: str) -> str:
    """``text`` with control characters (line breaks included) shown as escapes."""
    return _CONTROL.sub(_visible, text)


def md_text(text: str) -> MarkdownSafe:
    """``text`` as inert inline Markdown: it renders as itself and changes no document structure.

    An @-mention in it (``@octocat``, ``@org/team``) is put in a code span, where GitHub and GitLab notify no one
    (newuser75 item 8: a model path's ``@name`` reached the ``diff --base`` pull-request comment as a live mention); a
    backslash would not do, the mention being found in the rendered text. A copy of the text is still the text.
    """
    flat = one_line(text)
    pieces, last = [], 0
    for mention in _MENTION.finditer(flat):
        pieces += [_escaped(flat[last : mention.start()]), f"`{mention.group()}`"]
        last = mention.end()
    pieces.append(_escaped(flat[last:]))
    leading = _LEADING.match(pieces[0])  # a text that starts with a mention starts with a code span: no marker
    if leading:
        end = leading.end()
        pieces[0] = pieces[0][:end] + "\\" + pieces[0][end:] if pieces[0][:1].isdigit() else "\\" + pieces[0]
    return MarkdownSafe("".join(pieces))


#: An @-mention as GitHub and GitLab find one: ``@`` after no word character (``a@b.c`` is no mention), then a user
#: or ``org/team`` name. A code span around it (no backticks or pipes in it) shows it as text.
_MENTION = re.compile(r"(?<![A-Za-z0-9_])@[A-Za-z0-9][A-Za-z0-9_.-]*(?:/[A-Za-z0-9][A-Za-z0-9_.-]*)?")


def _escaped(text: str) -> str:
    """``text`` (one line) with every inline Markdown and HTML character backslash-escaped."""
    return _INLINE.sub(r"\\\1", text)


def md_code(text: str, cell: bool = False) -> MarkdownSafe:
    """``text`` as a code span that nothing in it can close; ``cell``: inside a GFM table (pipes escaped)."""
    flat = one_line(text)
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat[:1] in ("`", " ") or flat[-1:] in ("`", " ") else ""
    if cell:
        flat = flat.replace("|", "\\|")
    return MarkdownSafe(f"{fence}{pad}{flat}{pad}{fence}")


def md_fenced(text: str) -> MarkdownSafe:
    """``text`` for a line inside a fenced code block: line breaks kept, no line able to close the fence."""
    kept = _CONTROL.sub(lambda m: m.group(0) if m.group(0) == "\n" else _visible(m), text)
    return MarkdownSafe(_FENCE_LINE.sub(lambda m: "    " + m.group(0).lstrip(" "), kept))


def finalize(value: object) -> object:
    """Jinja ``finalize`` for Markdown templates: every interpolated string not already safe is escaped."""
    if isinstance(value, str) and not isinstance(value, MarkdownSafe):
        return md_text(value)
    return value
