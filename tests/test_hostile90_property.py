"""hostile90: a property test of the rule for bad input, over random edits of valid workloads.

For any one value of a valid workload replaced by another (a hostile number, a text, a list, a mapping, null, a
boolean), ``specgen validate`` exits 0, or 1 / 2 / 3 with an error that names the file, the line and the column; it
never raises (a traceback) and never exits otherwise.
"""

from __future__ import annotations

import contextlib
import io
import re
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from generator.cli import main
from tests.conftest import REPO

#: A cloud service, bought servers, and an owned machine (hardware.fixed) with RAM offload.
WORKLOADS = ("chat-70b.yaml", "chat-70b-fp8-aws.yaml", "home-70b-offload.yaml", "batch-jobs-gke.yaml")

HOSTILE = st.one_of(
    st.sampled_from([0, -1, 10**30, 2**63, 1e308, -0.0, 0.5, True, False, None, "", " ", "x", "1e309", "٣", "2026-01-01"]),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.sampled_from(["a", "gpu", "count"]), st.integers(), max_size=2),
)

_LOCATED = re.compile(r"^specgen: error: (?P<path>.+?):(?P<line>\d+):(?P<column>\d+): ", re.MULTILINE)


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key or index path of ``node``'s mappings and lists."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    out = []
    for key, value in items:
        out.append((*path, key))
        out.extend(_leaves(value, (*path, key)))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(WORKLOADS), pick=st.integers(min_value=0), value=HOSTILE)
def test_any_one_value_replaced_is_planned_or_refused_at_its_place(name: str, pick: int, value: Any) -> None:
    yaml = YAML()
    doc = yaml.load((REPO / "examples" / name).read_text())
    paths = _leaves(doc)
    path = paths[pick % len(paths)]
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    with tempfile.TemporaryDirectory() as folder:
        workload = Path(folder) / "w.yaml"
        with workload.open("w") as fh:
            yaml.dump(doc, fh)
        out, err = io.StringIO(), io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                main(["validate", str(workload)])
            code = 0
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else 1
    said = err.getvalue()
    assert code in (0, 1, 2, 3), (path, value, said)
    assert "Traceback" not in said, (path, value, said)
    if code:
        located = _LOCATED.search(said)
        assert located is not None and located["path"] == str(workload), (path, value, said)
