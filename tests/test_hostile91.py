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
    with pytest.raises(InputError, match=r"is a symbolic link to .*moved-away'?, which does not exist"):
        resolve_model(name)


def test_a_catalog_name_with_no_link_there_is_still_the_catalog_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolve_model("Llama-3.1-8B").source.startswith("catalog: ")


def test_a_hub_cache_the_client_cannot_use_is_named_not_a_python_exception() -> None:
    """HOME a file (/dev/null): 'NotADirectoryError: [Errno 20] Not a directory: ...' was the whole reason given."""
    from tests.helpers import run_specgen

    env = {"HOME": "/dev/null", "HF_HUB_OFFLINE": "0", "HF_ENDPOINT": "http://127.0.0.1:9"}
    run = run_specgen("estimate", "acme/not-in-catalog", env=env)
    assert run.returncode == 1, run.stderr
    assert "its client cannot use '/dev/null/.cache/huggingface/token': Not a directory" in run.stderr
    assert "set HF_HOME to a folder this user may write" in run.stderr
    assert "NotADirectoryError" not in run.stderr and "Traceback" not in run.stderr


@pytest.mark.parametrize("form", ["markdown", "json"])
def test_a_diff_of_two_workloads_named_differently_says_so(capsys: pytest.CaptureFixture[str], form: str) -> None:
    old, new = HERE.parent / "examples" / "chat-70b.yaml", HERE.parent / "examples" / "mixed.yaml"
    code, out, err = specgen_in_process(capsys, "diff", str(old), str(new), "--format", form)
    assert code == 0, err
    if form == "json":
        assert json.loads(out)["workload_change"] == {"old": "support-chat", "new": "assistant-platform"}
    else:
        assert "**Workload: support-chat → assistant-platform.** Its name is the rendered trees' Kubernetes namespace" in out


def test_a_diff_of_one_workload_names_no_workload_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    new = edited_copy(CHAT, tmp_path, (RATE, "requests_per_second: 24"))
    code, out, err = specgen_in_process(capsys, "diff", str(CHAT), str(new), "--format", "json")
    assert code == 0, err
    assert "workload_change" not in json.loads(out)


TINKERBELL = HERE.parent / "examples" / "colo-tinkerbell.yaml"


@pytest.mark.parametrize(("word", "meant"), [("yes", "true"), ("on", "true"), ("Off", "false"), ("no", "false")])
def test_a_yaml_11_boolean_word_in_a_boolean_field_says_what_to_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], word: str, meant: str
) -> None:
    path = edited_copy(TINKERBELL, tmp_path, ("buy: false", f"buy: {word}"))
    code, _, err = specgen_in_process(capsys, "validate", str(path))
    assert code == 1
    assert (
        f"{path}:15:8: hardware.buy: expected boolean, got string '{word}'; {word} is a boolean to YAML 1.1 readers "
        f"only (text to YAML 1.2, as here): write {meant}"
    ) in err


def test_another_word_in_a_boolean_field_gets_no_boolean_hint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = edited_copy(TINKERBELL, tmp_path, ("buy: false", "buy: maybe"))
    code, _, err = specgen_in_process(capsys, "validate", str(path))
    assert code == 1 and "got string 'maybe'" in err and "YAML 1.1" not in err


#: A first SIGINT at the command's first write to stdout, then one each time stderr says "Aborted!" (Ctrl-C held down:
#: the terminal repeats it), up to five in all.
_CTRL_C_HELD_DOWN = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
class Stream:
    def __init__(self, inner, said, most):
        self.inner, self.said, self.most = inner, said, most
    def write(self, text):
        if self.said in text and getattr(self, "sent", 0) < self.most:
            self.sent = getattr(self, "sent", 0) + 1
            os.kill(os.getpid(), signal.SIGINT)
        return self.inner.write(text)
    def __getattr__(self, name):
        return getattr(self.inner, name)
sys.stdout = Stream(sys.stdout, "Llama", 1)
sys.stderr = Stream(sys.stderr, "Aborted!", 4)
sys.argv = ["specgen", "estimate", "meta-llama/Llama-3.1-8B", "--gpu", "rtx-4090", "--precision", "q4_k_m"]
from generator.cli import main
main()
"""


def test_more_ctrl_c_while_aborted_prints_exit_130_without_a_traceback() -> None:
    import subprocess
    import sys

    env = {"PYTHONPATH": str(HERE.parent), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", _CTRL_C_HELD_DOWN], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 130, (done.returncode, done.stderr)
    assert done.stderr.count("Aborted!") == 1  # said once, the repeats held
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr


@pytest.mark.parametrize(
    ("quantization", "field", "said"),
    [
        ({}, "quantization_config", "quantization_config.quant_method is not given: transformers and vLLM read"),
        ({"quant_method": "gptq", "bits": 3}, "quantization_config.bits", "config field 'quantization_config.bits' is 3"),
        ({"quant_method": "awq", "w_bit": 2}, "quantization_config.w_bit", "config field 'quantization_config.w_bit' is 2"),
    ],
)
def test_a_quantization_config_refusal_is_placed_at_its_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], quantization: dict[str, object], field: str, said: str
) -> None:
    from generator.calculator.cli import main as estimate
    from generator.json_positions import line_column, value_offsets

    path = tmp_path / "config.json"
    text = json.dumps(CONFIG | {"quantization_config": quantization}, indent=2)
    path.write_text(text)
    line, column = line_column(text, value_offsets(text)[field])
    assert estimate([str(path)]) == 1
    assert capsys.readouterr().err.startswith(f"specgen estimate: error: {path}:{line}:{column}: {said}")
