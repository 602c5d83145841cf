"""fix180 (newuser98 item 4): ``inference.tool_calling`` renders the engine's tool-call parser for the model's family.

Without ``--enable-auto-tool-choice --tool-call-parser NAME`` vLLM answers an OpenAI ``tool_choice: "auto"`` request
with HTTP 400 (https://docs.vllm.ai/en/v0.10.1.1/features/tool_calling.html); SGLang takes ``--tool-call-parser NAME``
(https://docs.sglang.io/docs/advanced_features/tool_parser.md). The parser names below are those pages' (the catalog's
``tool_parsers.json`` holds them with their sources; the test keeps its own copy so a wrong catalog entry fails here).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.api import render_file
from generator.calculator.model_source import resolve_model
from generator.catalog.tool_parsers import tool_call_parser
from tests.conftest import REPO
from tests.helpers import ansible_reader, load_errors, run_specgen

WORKLOAD = """\
version: 1
name: tools
deployments:
  - name: tools
    model: {model}
    inference:
      max_context_tokens: 4096
      avg_input_tokens: 3000
      avg_output_tokens: 250
      requests_per_second: 2
      engine: {engine}
{extra}hardware:
  gpus: [h100-sxm5-80gb]
  provider: baremetal
  rack_power_kw: 40
outputs: [ansible]
"""

#: (model, engine, the args the Ansible group vars end their tool-call flags with): one row a family and engine.
ROWS = [
    ("Qwen/Qwen3-30B-A3B", "vllm", ["--enable-auto-tool-choice", "--tool-call-parser", "hermes"]),
    ("Qwen/Qwen3-30B-A3B", "sglang", ["--tool-call-parser", "qwen25"]),
    ("Qwen/Qwen2.5-7B-Instruct", "vllm", ["--enable-auto-tool-choice", "--tool-call-parser", "hermes"]),
    ("meta-llama/Llama-3.1-8B-Instruct", "vllm", ["--enable-auto-tool-choice", "--tool-call-parser", "llama3_json"]),
    ("meta-llama/Llama-3.1-8B-Instruct", "sglang", ["--tool-call-parser", "llama3"]),
    ("mistralai/Mistral-7B-Instruct-v0.3", "vllm", ["--enable-auto-tool-choice", "--tool-call-parser", "mistral"]),
    ("mistralai/Mistral-7B-Instruct-v0.3", "sglang", ["--tool-call-parser", "mistral"]),
    ("openai/gpt-oss-20b", "vllm", ["--enable-auto-tool-choice", "--tool-call-parser", "openai"]),
]


def _write(tmp_path: Path, model: str, engine: str = "vllm", extra: str = "      tool_calling: true\n") -> Path:
    path = tmp_path / "tools.yaml"
    path.write_text(WORKLOAD.format(model=model, engine=engine, extra=extra))
    return path


def _engine(files: dict[str, str]) -> dict[str, object]:
    group_vars = next(text for path, text in files.items() if path.startswith("ansible/group_vars/tools_"))
    return dict(ansible_reader().load(group_vars)["specgen_deployments"][0]["engine"])


@pytest.mark.parametrize(("model", "engine", "flags"), ROWS)
def test_the_familys_parser_is_rendered(tmp_path: Path, model: str, engine: str, flags: list[str]) -> None:
    from tests.test_iac_outputs import lint

    files = render_file(str(_write(tmp_path, model, engine)))
    assert lint(files) == []  # yamllint at 80 columns
    rendered = _engine(files)
    args = list(rendered["args"])  # type: ignore[call-overload]
    at = args.index("--tool-call-parser")
    assert args[at - len(flags) + 2 : at + 2] == flags
    assert args.count("--enable-auto-tool-choice") == (engine == "vllm")
    assert rendered["tool_call_parser"] == flags[-1]
    spec = json.loads(files["spec.json"])
    assert spec["plan"]["deployments"][0]["details"]["inputs"]["tool_calling"] is True


def test_off_renders_no_tool_flags(tmp_path: Path) -> None:
    files = render_file(str(_write(tmp_path, "Qwen/Qwen3-30B-A3B", extra="")))
    rendered = _engine(files)
    assert "--tool-call-parser" not in list(rendered["args"])  # type: ignore[call-overload]
    assert "tool_call_parser" not in rendered
    assert "tool_calling" not in files["spec.json"]  # the default is not written: older spec.json files read alike


#: (model id, model_type, vLLM parser, SGLang parser): the table's families; None where none is known.
LOOKUPS = [
    ("Qwen/Qwen3-8B", "qwen3", "hermes", "qwen25"),
    ("Qwen/Qwen3-30B-A3B", "qwen3_moe", "hermes", "qwen25"),
    ("Qwen/Qwen2.5-72B-Instruct", "qwen2", "hermes", "qwen25"),
    ("meta-llama/Llama-3.3-70B-Instruct", "llama", "llama3_json", "llama3"),
    ("meta-llama/Llama-3.2-3B-Instruct", "llama", "llama3_json", "llama3"),
    ("meta-llama/Llama-2-7b-hf", "llama", None, None),  # Llama 2: no tool calling
    ("meta-llama/Meta-Llama-3-8B", "llama", None, None),  # Llama 3.0: none either
    ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral", "mistral", "mistral"),
    ("deepseek-ai/DeepSeek-V3", "deepseek_v3", "deepseek_v3", "deepseekv3"),
    ("openai/gpt-oss-120b", "gpt_oss", "openai", "gpt-oss"),
    ("google/gemma-2-9b-it", "gemma2", None, None),
]


@pytest.mark.parametrize(("model", "model_type", "vllm", "sglang"), LOOKUPS)
def test_the_table_by_family(model: str, model_type: str, vllm: str | None, sglang: str | None) -> None:
    assert resolve_model(model).architecture.model_type == model_type  # the catalog's config.json says the family
    assert tool_call_parser(model_type, model, "vllm") == vllm
    assert tool_call_parser(model_type, model, "sglang") == sglang


def test_every_family_is_sourced() -> None:
    path = REPO / "generator" / "catalog" / "tool_parsers.json"
    for family in json.loads(path.read_text())["tool_parsers"]:
        assert all(url.startswith("https://") for url in family["source"]), family
        assert family["vllm"] and family["sglang"], family


@pytest.mark.parametrize(
    ("model", "engine", "extra", "says"),
    [
        ("meta-llama/Llama-2-7b-hf", "vllm", "", "no vllm tool-call parser is known for meta-llama/Llama-2-7b-hf"),
        ("google/gemma-2-9b-it", "sglang", "", "no sglang tool-call parser is known for google/gemma-2-9b-it"),
        ("Qwen/Qwen3-8B", "vllm", "      task: embed\n", "a pooling service (task: embed) calls no tools"),
    ],
)
def test_refused_at_the_field(tmp_path: Path, model: str, engine: str, extra: str, says: str) -> None:
    path = _write(tmp_path, model, engine, extra + "      tool_calling: true\n")
    if "task" in extra:  # a pooling service has no output tokens
        path.write_text(path.read_text().replace("      avg_output_tokens: 250\n", ""))
    errors = load_errors(path)
    line = path.read_text().splitlines().index("      tool_calling: true") + 1
    assert any(f"tools.yaml:{line}:21: deployments[0].inference.tool_calling:" in e and says in e for e in errors), errors
    if says.startswith("no "):
        families = "DeepSeek-V3, gpt-oss, Llama 3.1 / 3.2 / 3.3, Mistral / Mixtral, Qwen2.5, Qwen3, Qwen3-Coder"
        assert f"supported families: {families}" in errors[0]
    done = run_specgen("render", str(path), "-o", str(tmp_path / "out"))
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "out").exists()


def test_a_fixed_machine_is_not_refused(tmp_path: Path) -> None:
    """hardware.fixed is llama.cpp's server, started with --jinja since fix184 (tests/test_fix184_tool_calling.py)."""
    source = (REPO / "examples" / "home-70b-offload.yaml").read_text()
    text = source.replace("      max_context_tokens: 8192\n", "      max_context_tokens: 8192\n      tool_calling: true\n", 1)
    assert text != source
    path = tmp_path / "fixed.yaml"
    path.write_text(text)
    assert load_errors(path) == []


def test_the_schema_documents_the_field() -> None:
    schema = json.loads((REPO / "schemas" / "workload.schema.json").read_text())
    node = schema["properties"]["deployments"]["items"]["properties"]["inference"]["properties"]["tool_calling"]
    assert node["type"] == "boolean" and node["default"] is False
    names = ("--enable-auto-tool-choice", "hermes", "llama3_json", "qwen25", "hardware.fixed", "--jinja", "tool_parsers.json")
    for name in names:
        assert name in node["description"]


def test_diff_says_the_setting_changed(tmp_path: Path) -> None:
    on = _write(tmp_path, "Qwen/Qwen3-8B")
    assert run_specgen("render", str(on), "-o", str(tmp_path / "out")).returncode == 0
    off = tmp_path / "off.yaml"
    off.write_text(on.read_text().replace("      tool_calling: true\n", ""))
    done = run_specgen("diff", str(tmp_path / "out" / "spec.json"), str(off))
    assert done.returncode == 0, done.stderr
    assert "changed: tool_calling true → false" in done.stdout
