"""newuser58 (a developer portal feeding user YAML to specgen), items 6-10: what a library caller and a CLI user are told.

Item 6: a config of a model_type specgen does not read by name was sized without a word. Item 7-8: the Hub client's
progress bars and warnings were turned off for the whole process by a library call (its logger's level set), not in
the CLI alone. Item 9: ``MultipleInputError.location`` was None. Item 10: ``-`` read as a missing file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.api import plan_file
from generator.errors import MultipleInputError
from tests.conftest import REPO
from tests.helpers import specgen_in_process

QWEN = json.loads((REPO / "tests" / "data" / "hub" / "qwen2.5-7b.config.json").read_text(encoding="utf-8"))


def _workload(tmp_path: Path, model: str, extra: str = "") -> Path:
    path = tmp_path / "w.yaml"
    path.write_text(
        f"version: 1\nname: portal\ndeployments:\n  - name: chat\n    model: {model}\n"
        "    inference: {max_context_tokens: 4096, avg_input_tokens: 500, avg_output_tokens: 100, requests_per_second: 1}\n"
        f"hardware: {{provider: aws}}\n{extra}",
        encoding="utf-8",
    )
    return path


def test_a_model_type_not_read_by_name_is_said(tmp_path: Path) -> None:
    model = tmp_path / "frob"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(QWEN | {"model_type": "frobnicator", "architectures": ["FrobForCausalLM"]}))
    _, plan = plan_file(str(_workload(tmp_path, str(model))))
    (said,) = [f for f in plan.findings if f.code == "model-source-note"]
    assert said.path == "deployments[0].model"
    assert (
        "model_type 'frobnicator' (FrobForCausalLM) is not one specgen reads by name: sized as a generic decoder" in said.message
    )
    (model / "config.json").write_text(json.dumps(QWEN))
    _, plan = plan_file(str(_workload(tmp_path, str(model))))
    assert not [f for f in plan.findings if f.code == "model-source-note"]


def test_several_errors_at_once_are_located_at_the_first(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text("version: 1\nname: x\ndeployments: []\nx: 1\nhardware: {provider: aws}\n", encoding="utf-8")
    with pytest.raises(MultipleInputError) as caught:
        plan_file(str(path))
    assert len(caught.value.errors) == 2
    assert caught.value.location == caught.value.errors[0].location is not None


def test_standard_input_is_said_to_be_no_input(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = specgen_in_process(capsys, "validate", "-")
    assert code == 1 and "specgen reads no input from standard input; write it to a file" in err


def test_a_library_call_leaves_the_hub_clients_logging_alone(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from tests.hub_server import serve
    from tests.test_hub import C1, make_hub

    workload = _workload(tmp_path, f"hf:acme/qwen-7b-chat@{C1}")
    script = (
        "import logging, huggingface_hub.utils.logging as hub_logging\n"
        "from generator.api import plan_file\n"
        "hub_logging.get_logger()  # the library's own set-up, done\n"
        "logging.getLogger('huggingface_hub').setLevel(logging.DEBUG)  # the portal's\n"
        "before = logging.getLogger('huggingface_hub').level\n"
        f"plan_file({str(workload)!r})\n"
        "print(before, logging.getLogger('huggingface_hub').level)\n"
    )
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE"))}
    with serve(make_hub()) as hub:
        environ |= {"HF_ENDPOINT": hub.url, "HF_HOME": str(tmp_path / "home"), "HF_HUB_DISABLE_TELEMETRY": "1"}
        run = subprocess.run(
            [sys.executable, "-c", script], check=False, capture_output=True, text=True, env=environ, cwd=REPO, timeout=120
        )
    assert run.returncode == 0, run.stderr
    before, after = run.stdout.split()
    assert before == after


def test_fp8_of_a_model_whose_publisher_keeps_layers_in_bf16_names_that_checkpoint(tmp_path: Path) -> None:
    """newuser59 item 6: Meta's Llama 3.1 405B FP8 checkpoint sized as fp8 (every linear layer FP8) was 17% light."""
    from tests.helpers import estimate_json

    model = ("meta-llama/Llama-3.1-405B-Instruct", "--gpu", "h100-sxm5-80gb", "--tp", "8", "--precision")
    data = estimate_json(*model, "fp8")
    assert any("meta-llama/Llama-3.1-405B-Instruct-FP8" in n and "fbgemm-fp8 sizes it" in n for n in data["notes"])
    assert not any("Instruct-FP8" in n for n in estimate_json(*model, "fbgemm-fp8")["notes"])
    path = _workload(tmp_path, "meta-llama/Llama-3.1-405B-Instruct")
    path.write_text(path.read_text().replace("    inference: {", "    inference: {precision: fp8, "), encoding="utf-8")
    _, plan = plan_file(str(path))
    (said,) = [f for f in plan.findings if f.code == "publisher-checkpoint"]
    assert said.path == "deployments[0].inference.precision"
