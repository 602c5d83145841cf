"""fix184: ``inference.tool_calling`` leftovers of fix180.

1. ``inference.tool_call_parser`` names the parser outright (a local copy of Llama 3.1 under ``models/my-llama``,
   whose id hides its family), checked against the engine's registry at a pinned commit (vLLM's
   ``_TOOL_PARSERS_TO_REGISTER``, SGLang's ``ToolCallParserEnum``), ahead of the family table.
2. ``hardware.fixed``: llama-server answers tool calls through the GGUF's Jinja chat template, started with ``--jinja``
   (https://github.com/ggml-org/llama.cpp/blob/edb465a901a36028919c4c4a3715b47bb8c88687/docs/function-calling.md).
3. Qwen3-Coder (config.json model_type qwen3_moe, as Qwen3's MoE) takes its own parser, told apart by its id.
4. vLLM's tool chat template for Llama 3.1-3.3 / DeepSeek-V3 is optional (docs/features/tool_calling.md): said in the
   plan's reasons, not rendered.
5. ``specgen estimate --tool-calling`` puts ``--jinja`` on its llama-server lines.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.api import render_file
from generator.catalog import find_model
from generator.catalog.tool_parsers import chat_template, known_parsers, tool_call_parser
from tests.conftest import REPO
from tests.helpers import ansible_reader, load_errors, run_specgen
from tests.test_fix180_tool_calling import _engine, _write  # its workload, written with each case's lines


def _my_llama(tmp_path: Path) -> str:
    folder = tmp_path / "models" / "my-llama"
    folder.mkdir(parents=True)
    # Llama 3.1 8B's config.json (the catalog's copy), under a directory name that hides the family
    (folder / "config.json").write_text(json.dumps(find_model("meta-llama/Llama-3.1-8B-Instruct").config))
    return "models/my-llama"


@pytest.mark.parametrize(("engine", "parser"), [("vllm", "llama3_json"), ("sglang", "llama3")])
def test_a_named_parser_serves_a_model_whose_id_hides_its_family(tmp_path: Path, engine: str, parser: str) -> None:
    model = _my_llama(tmp_path)
    refused = load_errors(_write(tmp_path, model, engine, "      tool_calling: true\n"))
    assert any("no " + engine + " tool-call parser is known for" in e and "tool_call_parser" in e for e in refused)
    path = _write(tmp_path, model, engine, f"      tool_calling: true\n      tool_call_parser: {parser}\n")
    rendered = _engine(render_file(str(path)))
    args = list(rendered["args"])  # type: ignore[call-overload]
    assert args[args.index("--tool-call-parser") + 1] == parser
    assert rendered["tool_call_parser"] == parser


def test_the_named_parser_comes_before_the_familys(tmp_path: Path) -> None:
    extra = "      tool_calling: true\n      tool_call_parser: qwen3_xml\n"
    rendered = _engine(render_file(str(_write(tmp_path, "Qwen/Qwen3-8B", "vllm", extra))))
    args = list(rendered["args"])  # type: ignore[call-overload]
    assert args[args.index("--tool-call-parser") + 1] == "qwen3_xml" and "hermes" not in args


@pytest.mark.parametrize(
    ("engine", "name", "extra", "says"),
    [
        ("vllm", "llama3_jsn", "", "'llama3_jsn' is not a vllm tool-call parser; did you mean 'llama3_json'"),
        ("sglang", "llama3_json", "", "'llama3_json' is not a sglang tool-call parser"),  # vLLM's name, not SGLang's
        ("vllm", "hermes", "off", "names the parser of tool_calling, which is off"),
    ],
)
def test_a_bad_parser_is_refused_at_its_field(tmp_path: Path, engine: str, name: str, extra: str, says: str) -> None:
    on = "" if extra == "off" else "      tool_calling: true\n"
    path = _write(tmp_path, "Qwen/Qwen3-8B", engine, f"{on}      tool_call_parser: {name}\n")
    errors = load_errors(path)
    line = path.read_text().splitlines().index(f"      tool_call_parser: {name}") + 1
    assert any(f"tools.yaml:{line}:25: deployments[0].inference.tool_call_parser:" in e and says in e for e in errors), errors
    done = run_specgen("render", str(path), "-o", str(tmp_path / "out"))
    assert done.returncode == 1 and "Traceback" not in done.stderr and not (tmp_path / "out").exists()


def test_the_registries_hold_the_tables_names() -> None:
    """Every family's parser is a name its engine's registry holds (a typo in the table fails here)."""
    families = json.loads((REPO / "generator" / "catalog" / "tool_parsers.json").read_text())
    for family in families["tool_parsers"]:
        assert family["vllm"] in known_parsers("vllm"), family["id"]
        assert family["sglang"] in known_parsers("sglang"), family["id"]
    assert all(url.startswith("https://github.com/") for url in families["engine_parsers"]["source"])
    for name in ("hermes", "llama3_json", "qwen3_coder", "qwen3_xml", "openai", "deepseek_v3"):
        assert name in known_parsers("vllm")
    for name in ("qwen25", "llama3", "qwen3_coder", "gpt-oss", "deepseekv3"):
        assert name in known_parsers("sglang")


@pytest.mark.parametrize(
    ("model", "model_type", "vllm", "sglang"),
    [
        ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3_moe", "qwen3_xml", "qwen3_coder"),
        ("Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", "qwen3_moe", "qwen3_xml", "qwen3_coder"),
        ("Qwen/Qwen3-30B-A3B", "qwen3_moe", "hermes", "qwen25"),  # the same model_type, not a Coder
    ],
)
def test_qwen3_coder_takes_its_own_parser(model: str, model_type: str, vllm: str, sglang: str) -> None:
    assert tool_call_parser(model_type, model, "vllm") == vllm
    assert tool_call_parser(model_type, model, "sglang") == sglang


def test_the_optional_chat_template_is_said_not_rendered(tmp_path: Path) -> None:
    assert chat_template("llama", "meta-llama/Llama-3.1-8B-Instruct", "vllm") == "examples/tool_chat_template_llama3.1_json.jinja"
    assert chat_template("qwen3", "Qwen/Qwen3-8B", "vllm") is None
    sglang = chat_template("deepseek_v3", "deepseek-ai/DeepSeek-V3", "sglang")
    assert sglang == "examples/chat_template/tool_chat_template_deepseekv3.jinja"
    files = render_file(str(_write(tmp_path, "meta-llama/Llama-3.1-8B-Instruct", "vllm", "      tool_calling: true\n")))
    assert "--chat-template" not in list(_engine(files)["args"])  # type: ignore[call-overload]
    reasons = json.loads(files["spec.json"])["plan"]["deployments"][0]["reasons"]
    said = [r for r in reasons if r.startswith("tool calling: vLLM's docs recommend --chat-template")]
    assert len(said) == 1 and "examples/tool_chat_template_llama3.1_json.jinja" in said[0] and "optional" in said[0]


def _fixed(tmp_path: Path, extra: str) -> Path:
    source = (REPO / "examples" / "home-70b-offload.yaml").read_text()
    text = source.replace("      max_context_tokens: 8192\n", f"      max_context_tokens: 8192\n{extra}", 1)
    assert text != source or not extra
    path = tmp_path / "fixed.yaml"
    path.write_text(text)
    return path


def test_a_fixed_machine_starts_llama_server_with_jinja(tmp_path: Path) -> None:
    from tests.test_iac_outputs import lint

    files = render_file(str(_fixed(tmp_path, "      tool_calling: true\n")))
    assert lint(files) == []  # yamllint at 80 columns
    group_vars = next(text for path, text in files.items() if path.startswith("ansible/group_vars/home_70b"))
    engine = ansible_reader().load(group_vars)["specgen_deployments"][0]["engine"]
    assert list(engine["args"]).count("--jinja") == 1
    details = json.loads(files["spec.json"])["plan"]["deployments"][0]["details"]
    assert "--jinja" in details["runtime_settings"]["llama.cpp"].split()
    off = render_file(str(_fixed(tmp_path, "")))
    assert "--jinja" not in off["spec.json"]


def test_a_fixed_machine_takes_no_parser_name(tmp_path: Path) -> None:
    errors = load_errors(_fixed(tmp_path, "      tool_calling: true\n      tool_call_parser: llama3_json\n"))
    assert len(errors) == 1 and "deployments[0].inference.tool_call_parser: tool_call_parser: hardware.fixed" in errors[0]


def test_the_estimate_puts_jinja_on_its_llama_server_lines() -> None:
    machine = ["meta-llama/Llama-3.3-70B-Instruct", "--gpu", "rtx-4090-24gb", "--ram-gib", "64", "--precision", "q4_k_m"]
    on = run_specgen("estimate", *machine, "--context", "8192", "--tool-calling", "--json")
    off = run_specgen("estimate", *machine, "--context", "8192", "--json")
    assert on.returncode == 0 and off.returncode == 0, on.stderr + off.stderr
    line_on = json.loads(on.stdout)["runtime_settings"]["llama.cpp"]
    line_off = json.loads(off.stdout)["runtime_settings"]["llama.cpp"]
    assert line_on.split() == [*line_off.split()[:-1], "--jinja", line_off.split()[-1]]  # before --no-mmap
    refused = run_specgen("estimate", "Qwen/Qwen3-8B", "--gpu", "h100-sxm5-80gb", "--tool-calling")
    assert refused.returncode == 2 and "--tool-calling adds --jinja" in refused.stderr


def test_the_schema_documents_the_parser_field() -> None:
    schema = json.loads((REPO / "schemas" / "workload.schema.json").read_text())
    node = schema["properties"]["deployments"]["items"]["properties"]["inference"]["properties"]
    assert node["tool_call_parser"]["type"] == "string"
    for name in ("engine_parsers", "llama3_json", "qwen3_coder", "hardware.fixed"):
        assert name in node["tool_call_parser"]["description"]
    assert "--jinja" in node["tool_calling"]["description"] and "Qwen3-Coder" in node["tool_calling"]["description"]
