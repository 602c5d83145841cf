"""fix181: a spec.json deployment detail the diff compares as a number, given a boolean (or a text), is refused.

hostile90 left it: ``details.max_num_seqs: true`` passed ``_check_echoed`` (JSON's ``true`` is a Python ``int``) and was
said as a change ("max_num_seqs 256 -> True"). Each is now refused at its field, as ``check_figure`` words it.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.helpers import specgen_in_process as specgen
from tests.test_hostile84 import _put, _where

GOOD = json.loads((REPO / "tests" / "golden" / "chat-70b" / "spec.json").read_text())
DETAILS = ("plan", "deployments", 0, "details")
SPLIT = ("plan", "deployments", 0, "split", 0)

CASES = [
    (DETAILS, "max_num_seqs", True, "got True"),
    (DETAILS, "max_num_seqs", False, "got False"),
    (DETAILS, "max_num_batched_tokens", True, "got True"),
    (DETAILS, "requests_per_s_per_replica_max", True, "got True"),
    (DETAILS, "ttft_p95_s", False, "got False"),
    (DETAILS, "tpot_s", True, "got True"),
    (DETAILS, "slo_ttft_p95_ms", True, "got True"),
    (DETAILS, "context_tokens", True, "got True"),
    (DETAILS, "max_concurrency_per_replica", True, "got True"),
    (DETAILS, "requests_per_s", True, "got True"),
    (DETAILS, "usd_per_month", True, "got True"),
    (DETAILS, "max_num_seqs", "256", "got '256'"),
    (DETAILS, "ttft_p95_s", -1.0, "got -1.0"),
    (DETAILS, "lora_rank", True, "got True"),
    (DETAILS, "nodes_down_tolerated", True, "got True"),
    (DETAILS, "hours", True, "got True"),
    (SPLIT, "max_num_seqs", True, "got True"),
]


def _split_spec() -> dict[str, Any]:
    """GOOD with its first deployment split in two parts (as a split deployment writes them)."""
    spec: dict[str, Any] = copy.deepcopy(GOOD)
    dep = spec["plan"]["deployments"][0]
    part = {k: dep[k] for k in ("pool", "tp", "pp", "replicas")} | {"max_num_seqs": 256}
    dep["split"] = [part]
    return spec


@pytest.mark.parametrize(
    ("steps", "key", "value", "said"), CASES, ids=[f"{c[1]}-{c[2]!r}-{'split' if c[0] == SPLIT else ''}" for c in CASES]
)
def test_a_numeric_detail_given_no_number_is_refused_at_its_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], steps: tuple[str | int, ...], key: str, value: object, said: str
) -> None:
    old = _split_spec() if steps == SPLIT else copy.deepcopy(GOOD)
    spec = copy.deepcopy(old)
    _put(value, *steps, key)(spec)
    (tmp_path / "old.json").write_text(json.dumps(old, indent=2))
    (tmp_path / "new.json").write_text(json.dumps(spec, indent=2))
    line, column = _where(spec, (*steps, key))
    code, out, err = specgen(capsys, "diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"))
    assert (code, out) == (1, ""), out
    field = ".".join(str(s) for s in (*steps, key)).replace(".0.", "[0].")
    head = f"specgen: error: {tmp_path / 'new.json'}:{line}:{column}: not a specgen spec.json: '{field}' must be a "
    assert err.startswith(head) and "number" in err and said in err, err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(("key", "value"), [("max_num_seqs", 512), ("ttft_p95_s", 0.5), ("slo_ttft_p95_ms", None)])
def test_a_numeric_detail_given_a_number_or_null_is_still_compared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, value: object
) -> None:
    spec = copy.deepcopy(GOOD)
    _put(value, *DETAILS, key)(spec)
    (tmp_path / "old.json").write_text(json.dumps(GOOD, indent=2))
    (tmp_path / "new.json").write_text(json.dumps(spec, indent=2))
    code, _out, err = specgen(capsys, "diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"))
    assert code == 0 and "error" not in err, err
