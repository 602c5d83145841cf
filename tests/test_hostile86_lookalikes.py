"""hostile86 item 5: an id typed with a character outside ASCII names that character.

``meta-llama/Llama-3.1-70B-Instruсt`` (a Cyrillic ``с``) read ``unknown model 'meta-llama/Llama-3.1-70B-Instruсt';
did you mean 'meta-llama/Llama-3.1-70B-Instruct'``: two names that look the same, and no word of why one is unknown.
The same for a GPU id with a Unicode hyphen (U+2010) or a zero-width space. Every catalog and Hub id is ASCII.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from generator.catalog import find_model, gpus, models, unknown_id_message
from generator.catalog.id_hints import lookalike_note
from generator.cli import main
from generator.errors import UnknownIdError
from tests.helpers import VALID

#: (a catalog id, the index of the character replaced, its look-alike)
LOOKALIKES = [
    ("meta-llama/Llama-3.1-70B-Instruct", -2, "\u0441"),  # CYRILLIC SMALL LETTER ES for c
    ("Qwen/Qwen2.5-7B-Instruct", 16, "\u0406"),  # CYRILLIC CAPITAL LETTER BYELORUSSIAN-UKRAINIAN I for I
    ("meta-llama/Llama-3.1-8B", 10, "\u2010"),  # HYPHEN for -
    ("meta-llama/Llama-3.1-8B", 23, "\u200b"),  # ZERO WIDTH SPACE appended
]


def _typed(model: str, at: int, char: str) -> str:
    if at >= len(model):
        return model + char
    at %= len(model)
    return model[:at] + char + model[at + 1 :]


@pytest.mark.parametrize(("model", "at", "char"), LOOKALIKES)
def test_an_unknown_model_names_its_character_outside_ascii(model: str, at: int, char: str) -> None:
    assert model in models()
    typed = _typed(model, at, char)
    with pytest.raises(UnknownIdError) as caught:
        find_model(typed)
    said = f"(it holds {char!r} (U+{ord(char):04X} {unicodedata.name(char)}), outside ASCII, which every id is written in)"
    assert said in caught.value.message, caught.value.message
    assert caught.value.message.index(said) < caught.value.message.index("did you mean")


def test_an_unknown_gpu_names_its_unicode_hyphen() -> None:
    said = unknown_id_message("GPU", "h100\u2010sxm5-80gb", gpus())
    assert said.startswith(
        "unknown GPU 'h100\u2010sxm5-80gb' (it holds '\u2010' (U+2010 HYPHEN), outside ASCII, which every id is "
        "written in); did you mean 'h100-sxm5-80gb'"
    ), said


@pytest.mark.parametrize(
    ("typed", "note"),
    [
        ("h100-sxm5-80gb", ""),
        ("héllo", " (it holds 'é' (U+00E9 LATIN SMALL LETTER E WITH ACUTE), outside ASCII, which every id is written in)"),
        ("ααα", " (it holds 'α' (U+03B1 GREEK SMALL LETTER ALPHA), outside ASCII, which every id is written in)"),
        ("\u0430\u0431\u0432\u0433\u0434", " and 2 more, outside ASCII"),
        ("a\U000e0001", "(U+E0001 LANGUAGE TAG)"),
        ("a\ue000", "(U+E000 unnamed character)"),
    ],
)
def test_lookalike_note(typed: str, note: str) -> None:
    said = lookalike_note(typed)
    assert (said == note) if not note or note.startswith(" (") else note in said, said


def test_a_workload_model_with_a_lookalike_names_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    typed = "meta-llama/Llama-3.1-8B-Instru\u0441t"
    assert "model: meta-llama/Llama-3.1-8B-Instruct" in VALID
    (tmp_path / "w.yaml").write_text(VALID.replace("model: meta-llama/Llama-3.1-8B-Instruct", f"model: {typed}"))
    with pytest.raises(SystemExit) as done:
        main(["validate", str(tmp_path / "w.yaml")])
    err = capsys.readouterr().err
    assert done.value.code == 1
    assert "deployments[0].model: unknown model" in err and "U+0441 CYRILLIC SMALL LETTER ES" in err, err
