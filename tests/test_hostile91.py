"""hostile91: hostile input that was read wrongly, or refused with no place or a traceback.

1. A YAML scalar whose core tag ruamel cannot make a value of (``!!int abc``, ``!!bool maybe``) failed the document with
   no line and Python's words (``ValueError: invalid literal for int()``); ``!!float ""`` with a traceback.
2. A model directory's safetensors files lacking a whole decoder layer were used as the model's bytes ("-11.8% ...;
   the files are used"); vLLM refuses such a checkpoint (weights not initialized from checkpoint).
3. A bare model name that is a dangling symbolic link (a model folder moved away) was sized as the catalog model of
   that spelling, without a word.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from generator.calculator.model_source import resolve_model
from generator.errors import InputError
from tests.helpers import edited_copy, specgen_in_process
from tests.test_gguf import CONFIG, bf16_tensors, write_safetensors

HERE = Path(__file__).parent
CHAT = HERE.parent / "examples" / "chat-70b.yaml"
RATE = "requests_per_second: 12"


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("!!int abc", "'abc' as the !!int"),
        ("!!float abc", "'abc' as the !!float"),
        ("!!bool maybe", "'maybe' as the !!bool"),
        ('!!float ""', "'' as the !!float"),  # was a traceback (ruamel's IndexError)
        ('!!int ""', "'' as the !!int"),
        ('!!float "-"', "'-' as the !!float"),
        ('!!int "0b"', "'0b' as the !!int"),
    ],
)
def test_a_tagged_value_yaml_cannot_make_is_refused_at_its_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, said: str
) -> None:
    path = edited_copy(CHAT, tmp_path, (RATE, f"requests_per_second: {value}"))
    code, _, err = specgen_in_process(capsys, "validate", str(path))
    assert code == 1
    assert f"{path}:14:28: deployments[0].inference.requests_per_second: YAML cannot read {said} its tag names" in err
    assert "Traceback" not in err and "ValueError" not in err and "KeyError" not in err


def test_a_tagged_value_yaml_makes_is_still_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = edited_copy(CHAT, tmp_path, (RATE, "requests_per_second: !!float 12"))
    code, _, err = specgen_in_process(capsys, "validate", str(path))
    assert code == 0, err


def _folder(tmp_path: Path, dropped: str) -> Path:
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    tensors = {name: t for name, t in bf16_tensors().items() if not name.startswith(dropped)}
    write_safetensors(tmp_path / "model.safetensors", tensors)
    return tmp_path


@pytest.mark.parametrize(
    ("dropped", "layers"),
    [("model.layers.3.", "3"), ("model.layers.7.", "7"), ("model.layers.0.", "0")],
)
def test_safetensors_lacking_a_whole_layer_are_refused(tmp_path: Path, dropped: str, layers: str) -> None:
    with pytest.raises(InputError, match=rf"hold no tensor of layer\(s\) {layers} of the 8 its config's num_hidden_layers"):
        resolve_model(str(_folder(tmp_path, dropped)))


@pytest.mark.parametrize("dropped", ["model.layers.3.mlp.", "model.norm.", "nothing"])
def test_safetensors_holding_every_layer_are_still_read(tmp_path: Path, dropped: str) -> None:
    assert resolve_model(str(_folder(tmp_path, dropped))).architecture.file_weights is not None


@pytest.mark.parametrize("name", ["Llama-3.1-8B", "meta-llama/Llama-3.1-8B", "my-model"])
def test_a_model_name_that_is_a_dangling_link_is_that_link_not_a_catalog_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(tmp_path / "moved-away", tmp_path / name)
    with pytest.raises(InputError, match="is a symbolic link to .*moved-away'?, which does not exist"):
        resolve_model(name)


def test_a_catalog_name_with_no_link_there_is_still_the_catalog_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolve_model("Llama-3.1-8B").source.startswith("catalog: ")
