"""hostile85 item 3: a no-break (or other non-ASCII) space where YAML needs a space is named at its place.

A no-break space pasted from a web page or chat into a workload's indentation (``\\u00a0   model: x``) or after its
``key:`` or ``-`` is text to YAML: the line became a plain scalar and the error, "YAML syntax error: mapping values are
not allowed here", stood on the next line, naming neither the character nor the line it was on.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.errors import InputError
from generator.workload.loader import parse_yaml

REPO = Path(__file__).resolve().parent.parent
WORKLOAD = (REPO / "examples" / "chat-70b.yaml").read_text()
SPACES = ["\u00a0", "\u2003", "\u3000", "\u202f", "\u200b"]


def _error(text: str) -> InputError:
    with pytest.raises(InputError) as raised:
        parse_yaml(text, "w.yaml")
    return raised.value


@pytest.mark.parametrize(
    ("old", "new", "place", "said"),
    [
        (
            "    model: meta",
            "\u00a0   model: meta",
            (7, 1),
            "'\\xa0' (no-break space) where YAML needs a space (indentation, or after ':' or '-'); YAML reads it as text, "
            "not a space, hence the syntax error 'mapping values are not allowed here' (at line 8, column 14)",
        ),
        (
            "  - name: chat",
            "\u2003 - name: chat",
            (6, 1),
            "'\\u2003' (em space) where YAML needs a space (indentation, or after ':' or '-'); YAML reads it as text, not a "
            "space, hence the syntax error 'mapping values are not allowed here' (at line 7, column 10)",
        ),
        (
            "      precision: fp8\n      kv",
            "      precision:\u00a0fp8\n      kv",
            (9, 17),
            "'\\xa0' (no-break space) where YAML needs a space (indentation, or after ':' or '-'); YAML reads it as text, "
            "not a space, hence the syntax error 'mapping values are not allowed here' (at line 10, column 25)",
        ),
        (
            "  - name: chat",
            "  -\u3000name: chat",
            (6, 4),
            "'\\u3000' (ideographic space) where YAML needs a space (indentation, or after ':' or '-'); YAML reads it as "
            "text, not a space, hence the syntax error 'mapping values are not allowed here' (at line 7, column 10)",
        ),
    ],
)
def test_an_odd_space_is_named_at_its_line_and_column(old: str, new: str, place: tuple[int, int], said: str) -> None:
    assert old in WORKLOAD
    error = _error(WORKLOAD.replace(old, new, 1))
    assert error.location is not None and (error.location.line, error.location.column) == place
    assert error.message == f"the file holds {said}: replace it with a space"


def test_a_no_break_space_in_a_comment_is_not_blamed_for_another_error() -> None:
    error = _error("version: 1\nname: x\n# a note -\u00a0x: y\ndeployments: [\n")
    assert error.message.startswith("YAML syntax error: while parsing a flow node")
    assert error.location is not None and error.location.line == 5


def test_a_no_break_space_after_the_error_is_not_blamed() -> None:
    error = _error("version: 1\nname: x\ndeployments: [\n  a: b: c\n\u00a0 x: 1\n")
    assert error.message.startswith("YAML syntax error:")


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(SPACES), st.booleans())
def test_an_odd_space_in_any_indentation_is_placed_or_read(seed: int, space: str, replace: bool) -> None:
    """Property: an odd space put at the start of any indented line of a workload is never a syntax error elsewhere."""
    lines = WORKLOAD.split("\n")
    indented = [k for k, line in enumerate(lines) if line.startswith("  ") and line.strip() and not line.lstrip().startswith("#")]
    k = indented[seed % len(indented)]
    lines[k] = space + (lines[k][1:] if replace else lines[k])
    error: InputError | None = None
    try:
        parse_yaml("\n".join(lines), "w.yaml")
    except InputError as raised:
        error = raised
    if error is not None:
        assert not error.message.startswith("YAML syntax error"), error.message
        assert error.location is not None and (error.location.line, error.location.column) == (k + 1, 1)
