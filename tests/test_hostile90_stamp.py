"""hostile90: a spec.json ``generator`` stamp that is no text is said in JSON's words, not Python's.

``"generator": null`` was said "has 'generator' None", ``{"a": 1}`` "{'a': 1}" and ``true`` "True" (hostile89 put
JSON's words in the shape errors of the same file; the stamp's note kept Python's).
"""

from __future__ import annotations

import pytest

from generator.spec_stamp import DIFF_READS, SPEC_STAMP, stamp_note


@pytest.mark.parametrize(
    ("stamp", "shown"),
    [(None, "null"), (True, "true"), ({"a": 1}, '{"a": 1}'), ([1, "x"], '[1, "x"]'), (5, "5"), (1.5, "1.5"),
     (list(range(100)), "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 1... (390 characters)")],
    ids=["null", "true", "object", "list", "int", "float", "long"],
)  # fmt: skip
def test_a_stamp_that_is_no_text_is_shown_as_json(stamp: object, shown: str) -> None:
    said = f"specgen: note: s.json has 'generator' {shown}, not a specgen version (this specgen writes {SPEC_STAMP!r})"
    note = stamp_note({"generator": stamp, "plan": {}}, "s.json")
    assert note == f"{said}: {DIFF_READS}", note
