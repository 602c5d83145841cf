"""One hook refuses a number Python reads as none, in a ``spec.json`` as in a model's ``config.json`` (fix160 item 3).

``fleet_diff._finite_float`` / ``_refuse_constant`` sat beside ``json_numbers.finite_float`` with other words, and
placed the number by a regex over the text (at its line, never its field). Both readers now use
``json_numbers.finite_float`` / ``refuse_constant`` and place the refusal with ``unreadable_number``: the same words
at file:line:column and the field's path. A key given twice whose first value is the bad number was found by neither
``unreadable_number`` (a dict keeps the last value: "cannot read model config ...", no line) nor placed in a
``spec.json`` at its field; an integer of more digits than Python converts in a ``spec.json`` read
"bad.json: cannot read spec.json: Exceeds the limit (4300 digits) ..." with no line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator import fleet_diff
from generator.calculator import model_source
from generator.cli import main
from generator.json_numbers import finite_float, refuse_constant, unreadable_number
from tests.helpers import specgen_in_process as specgen

GOLDEN_SPEC = Path(__file__).parent / "golden" / "chat-70b" / "spec.json"
FIELD = '"usd_per_hour": 17.4'  # the first is plan.totals' (keys sorted)

LITERALS = [
    ("NaN", "NaN is not a finite number (JSON has no NaN or Infinity)"),
    ("-Infinity", "-Infinity is not a finite number (JSON has no NaN or Infinity)"),
    ("1e400", "1e400 is too large for a number (it reads as infinity)"),
    ("9" * 5000, "a number of 5,000 digits is longer than the 4,300 digits a number may have"),
]


def test_one_hook_for_both_readers() -> None:
    """No reader keeps a copy of its own (the duplicate this item removes)."""
    for module in (fleet_diff, model_source):
        assert not hasattr(module, "_finite_float") and not hasattr(module, "_refuse_constant")
    with pytest.raises(ValueError, match=r"^1e400 is too large for a number \(it reads as infinity\)$"):
        finite_float("1e400")
    with pytest.raises(ValueError, match=r"^NaN is not a finite number \(JSON has no NaN or Infinity\)$"):
        refuse_constant("NaN")


def _spec_with(tmp_path: Path, literal: str, twice: bool = False) -> tuple[Path, int, int]:
    """The golden spec.json with plan.totals.usd_per_hour ``literal`` (``twice``: the key given again after it)."""
    text = GOLDEN_SPEC.read_text(encoding="utf-8")
    at = text.index(FIELD) + len('"usd_per_hour": ')
    line, column = text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)
    bad = f'"usd_per_hour": {literal}' + (", " + FIELD if twice else "")
    path = tmp_path / "bad.json"
    path.write_text(text.replace(FIELD, bad, 1), encoding="utf-8")
    return path, line, column


@pytest.mark.parametrize("twice", [False, True], ids=["once", "key-twice"])
@pytest.mark.parametrize(("literal", "said"), LITERALS, ids=["nan", "-inf", "1e400", "digits"])
def test_a_spec_json_number_is_refused_at_its_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], literal: str, said: str, twice: bool
) -> None:
    path, line, column = _spec_with(tmp_path, literal, twice)
    code, out, err = specgen(capsys, "diff", str(GOLDEN_SPEC), str(path))
    assert (code, out) == (1, "")
    assert err == f"specgen: error: {path}:{line}:{column}: cannot read spec.json: 'plan.totals.usd_per_hour': {said}\n"


@pytest.mark.parametrize(("literal", "said"), LITERALS, ids=["nan", "-inf", "1e400", "digits"])
def test_a_config_number_given_twice_is_placed_at_the_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], literal: str, said: str
) -> None:
    """``"rope_theta": <bad>, "rope_theta": 500000.0``: the first is what ``json`` refuses, placed at its line."""
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "rope_theta": 0}
    text = json.dumps(config, indent=2).replace('"rope_theta": 0', f'"rope_theta": {literal},\n  "rope_theta": 500000.0')
    at = text.index(literal)
    line, column = text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)
    assert unreadable_number(text) == ("rope_theta", said, line, column)
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(text, encoding="utf-8")
    with pytest.raises(SystemExit) as done:
        main(["estimate", str(tmp_path / "m")])
    err = capsys.readouterr().err
    assert done.value.code == 1
    where = f"{tmp_path / 'm' / 'config.json'}:{line}:{column}"
    assert err == f"specgen estimate: error: {where}: cannot read model config: config field 'rope_theta': {said}\n"
