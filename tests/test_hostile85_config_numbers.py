"""hostile85 item 1: a model config.json's number that Python reads as none is refused at its line, column and field.

``NaN`` / ``Infinity`` read ``cannot read model config '...': 'Infinity is not a finite number'`` (no field, no line), a
5,000-digit integer Python's own "Exceeds the limit (4300 digits) for integer string conversion ... use
sys.set_int_max_str_digits()", and ``"rope_theta": 1e400`` (read as infinity by ``json``) was sized without a word; a
JSON syntax error was quoted as ``'Expecting value: line 1 column 6 (char 5)'`` rather than at ``file:line:col``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.cli import main
from generator.json_numbers import unreadable_number

#: A small Llama config (its numbers within every check), in the order HF writes one.
CONFIG: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "num_hidden_layers": 32,
    "vocab_size": 128256,
    "max_position_embeddings": 8192,
    "rope_theta": 500000.0,
    "rope_scaling": {"factor": 8.0, "rope_type": "llama3", "original_max_position_embeddings": 8192},
    "torch_dtype": "bfloat16",
}
MARK = '"@@bad@@"'


def _text_with(path: tuple[str | int, ...], literal: str) -> tuple[str, int, int]:
    """CONFIG written as HF does (indent 2), the value at ``path`` replaced by ``literal``; its line and column."""
    config = json.loads(json.dumps(CONFIG))
    holder = config
    for step in path[:-1]:
        holder = holder[step]
    holder[path[-1]] = "@@bad@@"
    text = json.dumps(config, indent=2)
    offset = text.index(MARK)  # the oracle: where the marker is, the literal starts
    line = text.count("\n", 0, offset) + 1
    return text.replace(MARK, literal), line, offset - text.rfind("\n", 0, offset)


def _estimate(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(text)
    with pytest.raises(SystemExit) as done:
        main(["estimate", str(tmp_path / "m")])
    return int(done.value.code or 0), capsys.readouterr().err


@pytest.mark.parametrize(
    ("path", "literal", "said"),
    [
        (("hidden_size",), "Infinity", "Infinity is not a finite number (JSON has no NaN or Infinity)"),
        (("num_hidden_layers",), "NaN", "NaN is not a finite number (JSON has no NaN or Infinity)"),
        (("rope_scaling", "factor"), "-Infinity", "-Infinity is not a finite number (JSON has no NaN or Infinity)"),
        (("rope_theta",), "1e400", "1e400 is too large for a number (it reads as infinity)"),
        (("rope_theta",), "-2.5E+999", "-2.5E+999 is too large for a number (it reads as infinity)"),
        (
            ("vocab_size",),
            "9" * 5000,
            "a number of 5,000 digits is longer than the 4,300 digits a number may have",
        ),
        (
            ("architectures", 0),
            "-" + "1" * 4301,
            "a number of 4,301 digits is longer than the 4,300 digits a number may have",
        ),
    ],
)
def test_an_unreadable_number_is_refused_at_its_line_column_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], path: tuple[str | int, ...], literal: str, said: str
) -> None:
    text, line, column = _text_with(path, literal)
    code, err = _estimate(tmp_path, text, capsys)
    field = ".".join(str(s) for s in path if isinstance(s, str)) + "".join(f"[{s}]" for s in path if isinstance(s, int))
    config = tmp_path / "m" / "config.json"
    assert code == 1
    said = f"cannot read model config: config field '{field}': {said}"
    assert err == f"specgen estimate: error: {config}:{line}:{column}: {said}\n"


def test_a_json_syntax_error_is_placed_at_file_line_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = json.dumps(CONFIG, indent=2).replace('"vocab_size": 128256', '"vocab_size": \x00')
    code, err = _estimate(tmp_path, text, capsys)
    line = 1 + text[: text.index("\x00")].count("\n")
    column = text.index("\x00") - text.rfind("\n", 0, text.index("\x00"))
    assert code == 1
    place = f"{tmp_path / 'm' / 'config.json'}:{line}:{column}"
    assert err == f"specgen estimate: error: {place}: cannot read model config: Expecting value\n"


def test_a_workload_names_its_model_field_then_the_config_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text, line, column = _text_with(("rope_theta",), "1e400")
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(text)
    (tmp_path / "w.yaml").write_text(
        "version: 1\nname: w\ndeployments:\n  - name: chat\n    model: ./m\n    inference:\n"
        "      max_context_tokens: 8192\n      requests_per_second: 1\n"
        "hardware:\n  gpus: [h100-sxm5-80gb]\n  provider: baremetal\n"
    )
    with pytest.raises(SystemExit) as done:
        main(["validate", str(tmp_path / "w.yaml")])
    err = capsys.readouterr().err
    assert done.value.code == 1
    assert err.startswith(f"specgen: error: {tmp_path / 'w.yaml'}:5:12: deployments[0].model: ")
    assert f"config.json:{line}:{column}: cannot read model config: config field 'rope_theta': 1e400 is too large" in err


#: JSON values without an unreadable number (finite floats, integers within the digits).
_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(alphabet="abc_", min_size=1, max_size=4), inner, max_size=4)
    ),
    max_leaves=20,
)
_BAD = st.sampled_from(["NaN", "Infinity", "-Infinity", "1e309", "-7E+400", "1" * 4301])


@settings(max_examples=200, deadline=None)
@given(_VALUES, _BAD, st.integers(0, 2**16), st.booleans())
def test_the_first_unreadable_number_is_found_where_it_stands(document: Any, bad: str, seed: int, indent: bool) -> None:
    """Property: with one unreadable number put at any value of any document, it is placed at its literal's offset."""
    slots: list[tuple[Any, Any]] = []  # (holder, key) of every value but the root

    def walk(value: Any) -> None:
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, item in list(items):
            slots.append((value, key))
            walk(item)

    root: dict[str, Any] = {"x": document}
    walk(root)
    holder, key = slots[seed % len(slots)]
    holder[key] = "@@bad@@"
    text = json.dumps(root, indent=2 if indent else None)
    offset = text.index(MARK)
    text = text.replace(MARK, bad)
    found = unreadable_number(text)
    assert found is not None
    _, said, line, column = found
    assert (line, column) == (text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset))
    assert said.startswith((bad, "a number of 4,301 digits")) or "too large" in said


def test_a_text_without_such_a_number_gives_none() -> None:
    assert unreadable_number(json.dumps(CONFIG)) is None
    assert unreadable_number('{"a": ') is None


def test_a_byte_order_mark_is_said_in_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _estimate(tmp_path, "\ufeff" + json.dumps(CONFIG, indent=2), capsys)
    said = "it starts with a UTF-8 byte-order mark, which JSON readers (transformers' too) refuse: save it without"
    assert (code, err) == (
        1,
        f"specgen estimate: error: {tmp_path / 'm' / 'config.json'}:1:1: cannot read model config: {said}\n",
    )
