"""fix159: the llama-server line of a ``hardware.fixed`` plan carries the RoPE scaling a long request needs, and the
threads a workload gives (``hardware.fixed.threads``).

Item 1. llama-server caps each slot at the GGUF's ``context_length`` (``n_ctx_train``, tools/server/server-context.cpp),
which convert_hf_to_gguf writes from ``max_position_embeddings``; ``--rope-scaling yarn --rope-scale F --yarn-orig-ctx M``
re-adjust it to ``M x F`` (ggml-org/llama.cpp PR #28030). The estimate named those flags (fix157), but a workload's
rendered line (Ansible ``args``, spec.json's ``runtime_settings``) carried ``-c 65536`` alone for Qwen2.5-7B with its
model card's YaRN x4, so every request past 32,768 tokens would be capped. A ``dynamic`` scaling, which llama.cpp lacks,
passed validation and was planned at a context llama-server does not serve.

Item 2. ``threads`` in ``hardware.fixed`` (the estimate's ``--threads``, fix153): llama.cpp's ``-t``, the CPU's share
timed on the cores they take (:func:`generator.calculator.machine.thread_cores`), rendered as ``--threads``. The oracles:
ansible-inventory reads the rendered tree, yamllint (default rules, 80 columns) lints it, the plan's own line
(spec.json) and the estimate's machine for the same fields.
"""

from __future__ import annotations

import importlib
import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from generator import catalog
from generator.api import plan_file, render_file
from generator.calculator.machine import FixedSpec, build_machine, thread_cores, wider_machine
from generator.planner.fixed_place import fixed_machine
from generator.sizing.context_limit import (
    LLAMA_CPP_NO_SUCH_ROPE,
    llama_cpp_rope,
    rope_args,
    rope_options,
)
from generator.workload import load_workload
from tests.conftest import REPO
from tests.helpers import call_cli, estimate_json
from tests.test_oracles import ansible_inventory

DATA = REPO / "tests" / "data" / "fix159"
YARN_HOME = DATA / "yarn-home.yaml"
FLAGS = ["--rope-scaling", "yarn", "--rope-scale", "4", "--yarn-orig-ctx", "32768"]
#: fix163: llama.cpp's line also lifts the cap with the GGUF's context_length (qwen2: Qwen2ForCausalLM's GGUF arch)
OVERRIDE = ["--override-kv", "qwen2.context_length=int:131072"]

# yamllint ships without type information: reach it untyped.
LINTER: Any = importlib.import_module("yamllint.linter")
YAMLLINT = importlib.import_module("yamllint.config").YamlLintConfig("extends: default")

WORKLOAD = """\
version: 1
name: rope-home
deployments:
  - name: long
    model: ./{model}
    inference:
      precision: q4_k_m
      max_context_tokens: {context}
      avg_input_tokens: 2000
      avg_output_tokens: 500
      requests_per_second: 0.001
hardware:
  provider: baremetal
  fixed:
    gpu: rtx-4090-24gb
    gpu_count: 1
    ram_gib: 64
    nvme_gib: 500
    cpu: ryzen-9-7950x
{more}"""


def _workload(tmp_path: Path, model: str, context: int, more: str = "", rope: dict[str, Any] | None = None) -> Path:
    """A workload in ``tmp_path`` of Qwen2.5-7B-Instruct's config with ``rope`` as its rope_scaling (the YaRN x4 of its
    model card where None)."""
    config = json.loads((DATA / "qwen2.5-7b-yarn" / "config.json").read_text())
    if rope is not None:
        config["rope_scaling"] = rope
    (tmp_path / model).mkdir()
    (tmp_path / model / "config.json").write_text(json.dumps(config))
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(model=model, context=context, more=more))
    return path


def _engine_entry(tree: dict[str, str], work: Path) -> dict[str, Any]:
    """The one deployment's engine entry as ansible-inventory reads the rendered tree."""
    for name, body in tree.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(body)
    (host,) = ansible_inventory(work).data["_meta"]["hostvars"].values()
    (dep,) = host["specgen_deployments"]
    engine: dict[str, Any] = dep["engine"]
    return engine


def _lint(tree: dict[str, str]) -> list[str]:
    return [
        f"{path}:{p.line}: {p.message}"
        for path, text in sorted(tree.items())
        if path.endswith((".yaml", ".yml"))
        for p in LINTER.run(text, YAMLLINT)
    ]


def _plan_line(tree: dict[str, str]) -> tuple[str, dict[str, Any]]:
    (dep,) = json.loads(tree["spec.json"])["plan"]["deployments"]
    details: dict[str, Any] = dep["details"]
    return str(details["runtime_settings"][details["offload"]["engine"]]), details


# --- item 1: RoPE scaling -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rope", "request_tokens", "expected"),
    [
        # YaRN x4 from 32,768 (Qwen2.5's card): past 32,768 the stretch, within it none (the model runs as trained)
        ({"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}, 65536, FLAGS),
        ({"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}, 32768, []),
        ({"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}, 32769, FLAGS),
        # a YaRN block without its original: from max_position_embeddings
        (
            {"rope_type": "yarn", "factor": 2.5},
            40000,
            ["--rope-scaling", "yarn", "--rope-scale", "2.5", "--yarn-orig-ctx", "32768"],
        ),
        ({"type": "linear", "factor": 2.0}, 65536, ["--rope-scaling", "linear", "--rope-scale", "2"]),
        ({"type": "dynamic", "factor": 2.0}, 65536, []),  # llama.cpp has no such type: nothing lifts the cap
        ({"rope_type": "llama3", "factor": 8.0}, 65536, []),  # already the stretched length: no limit of llama.cpp's
        (None, 32768, []),
    ],
)
def test_rope_options_and_flags_table(rope: dict[str, Any] | None, request_tokens: int, expected: list[str]) -> None:
    config: dict[str, Any] = {"max_position_embeddings": 32768, **({"rope_scaling": rope} if rope else {})}
    got = llama_cpp_rope(config, "qwen2")
    assert rope_args(rope_options(got, request_tokens)) == expected
    if got is not None and expected:
        assert got.flags == " ".join(expected)  # the estimate's note and the lines: one writer


def test_the_rendered_line_carries_the_yarn_flags_and_the_sizing_its_context(tmp_path: Path) -> None:
    """The new test workload: 65,536-token requests of Qwen2.5-7B + YaRN x4 on llama.cpp. The line was ``-c 65536``
    alone; now the flags follow ``-c``, in the plan's own line and the Ansible args, and the KV cache is sized for the
    65,536 tokens the line gives (the stretch adds no memory in llama.cpp)."""
    tree = render_file(str(YARN_HOME))
    line, details = _plan_line(tree)
    engine = _engine_entry(tree, tmp_path)
    assert engine["args"] == [*shlex.split(line), "--threads", "16"]
    c = engine["args"].index("-c")
    assert engine["args"][c : c + 10] == ["-c", "65536", *FLAGS, *OVERRIDE]
    options = engine["llama_cpp"]
    assert (options["rope_scaling"], options["rope_scale"], options["yarn_orig_ctx"]) == ("yarn", 4, 32768)
    assert options["ctx_size"] == details["context_tokens"] == engine["max_model_len"] == 65536
    assert not _lint(tree), _lint(tree)
    _, plan = plan_file(str(YARN_HOME))
    (said,) = [f for f in plan.findings if f.code == "llama-cpp-rope-scaling"]
    assert said.level == "info" and said.path == "deployments[0].inference.max_context_tokens"
    assert " ".join(FLAGS) in said.message and "context_length 32,768" in said.message
    assert " ".join([*FLAGS, *OVERRIDE]) in said.message
    assert "its --override-kv sets the GGUF's context_length, which llama-server caps a slot at, to 131,072" in said.message


def test_the_estimate_and_the_plan_write_the_same_flags() -> None:
    """One writer: the estimate's llama-server command, its note and the plan's line carry the same text."""
    est = estimate_json(str(DATA / "qwen2.5-7b-yarn"), "--context", "65536", "--ram-gib", "64", "--precision", "q4_k_m")
    assert f"-c 65536 {' '.join(FLAGS)} " in est["cpu_only"]["command"]
    assert any(f"start llama-server with {' '.join([*FLAGS, *OVERRIDE])} -c 65536" in n for n in est["notes"])
    line, _ = _plan_line(render_file(str(YARN_HOME)))
    assert f"-c 65536 {' '.join(FLAGS)} " in line


@pytest.mark.parametrize(
    ("context", "engine", "flags"),
    [
        pytest.param(32768, "", False, id="within-context_length"),
        pytest.param(65536, "", True, id="past-llama.cpp"),
        # ik_llama.cpp caps no slot, but runs positions past the GGUF's length unscaled without the stretch
        pytest.param(65536, "    offload_engine: ik_llama.cpp\n", True, id="past-ik_llama.cpp"),
    ],
)
def test_the_flags_only_where_a_request_is_past_the_ggufs_context_length(
    tmp_path: Path, context: int, engine: str, flags: bool
) -> None:
    path = _workload(tmp_path, "qwen", context, engine)
    line, details = _plan_line(render_file(str(path)))
    assert (" ".join(FLAGS) in line) is flags
    assert details["context_tokens"] == context
    _, plan = plan_file(str(path))
    said = [f.message for f in plan.findings if f.code == "llama-cpp-rope-scaling"]
    assert len(said) == (1 if flags else 0)
    if flags and engine:
        assert "past which ik_llama.cpp runs unscaled" in said[0] and "caps each slot" not in said[0]
    # fix163: --override-kv lifts llama-server's cap; ik_llama.cpp caps no slot, so its line has none
    assert ("--override-kv" in line) is (flags and not engine)


@pytest.mark.parametrize(
    ("context", "code"),
    [pytest.param(65536, 1, id="past-refused"), pytest.param(32768, 0, id="within-planned")],
)
def test_a_dynamic_scaling_llama_cpp_lacks_is_refused_past_the_ggufs_context_length(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], context: int, code: int
) -> None:
    """vLLM serves 131,072 tokens of a dynamic x4 config; llama.cpp has no dynamic type, so llama-server stops a slot at
    the GGUF's 32,768: a 65,536-token max_context_tokens was planned (exit 0) and is now refused at its line."""
    _workload(tmp_path, "dyn", context, rope={"type": "dynamic", "factor": 4.0})
    assert call_cli(tmp_path, ("validate", "w.yaml")) == code
    err = capsys.readouterr().err
    if code:
        assert "w.yaml:8:27: deployments[0].inference.max_context_tokens: max_context_tokens 65,536 is more than " in err
        assert "the 32,768 tokens of dyn's GGUF context_length" in err and LLAMA_CPP_NO_SUCH_ROPE in err


# --- item 2: hardware.fixed.threads ---------------------------------------------------------------------------------

HOME = REPO / "examples" / "home-moe-experts.yaml"


def _home(tmp_path: Path, cpu: str, more: str) -> Path:
    text = HOME.read_text().replace("    cpu: ryzen-9-7950x\n", cpu + more)
    path = tmp_path / "home.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("cpu", "more", "message", "column"),
    [
        ("    cpu: ryzen-9-7950x\n", "    threads: 0\n", "0 is out of range: must be >= 1", 14),
        ("    cpu: ryzen-9-7950x\n", "    threads: 2.5\n", "expected integer, got number 2.5", 14),
        (
            "    cpu: ryzen-9-7950x\n",
            "    threads: 33\n",
            "threads must be at most 32, the threads of cpu ryzen-9-7950x (32)",
            14,
        ),
        (
            "    cpu: epyc-9654\n    cpu_sockets: 2\n",
            "    threads: 385\n",
            "threads must be at most 384, the threads of cpu epyc-9654 (192 x 2 sockets), got 385",
            14,
        ),
        ("", "    threads: 8\n", "threads needs cpu (the catalog CPU whose cores the threads run on)", 14),
    ],
)
def test_bad_threads_are_refused_at_their_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cpu: str, more: str, message: str, column: int
) -> None:
    path = _home(tmp_path, cpu, more)
    line = path.read_text().splitlines().index(more.rstrip("\n")) + 1
    assert call_cli(tmp_path, ("validate", path.name)) == 1
    err = capsys.readouterr().err
    assert f"{path.name}:{line}:{column}: hardware.fixed.threads" in err and message in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize(("threads", "cores"), [(2, 2), (4, 4), (8, 8), (16, 16), (32, 16)])
def test_threads_time_the_cpu_on_the_estimates_cores_and_render_as_given(tmp_path: Path, threads: int, cores: int) -> None:
    """One socket: the plan's cores are the estimate's (``build_machine`` of the same fields, ``thread_cores``); a
    thread beyond a core (SMT) adds none, so 32 threads on the 16-core 7950X time as its default."""
    path = _home(tmp_path, "    cpu: ryzen-9-7950x\n", f"    threads: {threads}\n")
    loaded = load_workload(str(path))
    machine = fixed_machine(loaded)[0]
    spec = FixedSpec(gpu="rtx-4090-24gb", gpu_count=1, ram_gib=64, cpu="ryzen-9-7950x", threads=threads)
    assert machine.cpu_cores == build_machine(spec)[0].cpu_cores == cores
    tree = render_file(str(path))
    engine = _engine_entry(tree, tmp_path / "out")
    assert engine["threads"] == threads and engine["args"][-2:] == ["--threads", str(threads)]
    assert not _lint(tree), _lint(tree)


def test_fewer_threads_decode_slower_and_all_cores_as_the_default(tmp_path: Path) -> None:
    """Mixtral's experts on the CPU: 2 threads are core-bound, 16 (every core) the default's figures."""
    (default,) = plan_file(str(HOME))[1].deployments
    speeds = {}
    for threads in (2, 4, 16):
        folder = tmp_path / str(threads)
        folder.mkdir()
        (dep,) = plan_file(str(_home(folder, "    cpu: ryzen-9-7950x\n", f"    threads: {threads}\n")))[1].deployments
        speeds[threads] = dep.details["decode_tokens_per_s"]
        if threads == 2:
            assert "cpu-cores-bound" in " ".join(dep.reasons)
    assert speeds[2] < speeds[4] < speeds[16] == default.details["decode_tokens_per_s"]


def test_threads_bound_to_one_node_take_its_cores_and_spread_ones_every_nodes(tmp_path: Path) -> None:
    """Two EPYC 9654 sockets: the plan binds llama.cpp to node 0 (numactl -N 0 -m 0), so 48 threads take 48 of its
    cores (the estimate, counting them over the sockets as the calibration rows ran, 24); four sockets spread the
    weights (--numa distribute), the given threads rendered there too and counted over the four."""
    cpu = catalog.cpus()["epyc-9654"]
    two = _home(tmp_path, "    cpu: epyc-9654\n    cpu_sockets: 2\n", "    threads: 48\n")
    machine = fixed_machine(load_workload(str(two)))[0]
    spec = FixedSpec(gpu="rtx-4090-24gb", gpu_count=1, ram_gib=64, cpu="epyc-9654", cpu_sockets=2, threads=48)
    assert machine.cpu_cores == thread_cores(48, 1, cpu) == 48
    assert build_machine(spec)[0].cpu_cores == thread_cores(48, 2, cpu) == 24
    wider = wider_machine(machine, spec)
    assert wider is not None and wider.cpu_cores == 24
    engine = _engine_entry(render_file(str(two)), tmp_path / "two")
    assert engine["llama_cpp"]["numactl"] == "-N 0 -m 0" and engine["args"][-2:] == ["--threads", "48"]
    four = tmp_path / "four"
    four.mkdir()
    spread = _home(four, "    cpu: epyc-9654\n    cpu_sockets: 4\n", "    threads: 200\n")
    engine = _engine_entry(render_file(str(spread)), four / "out")
    assert engine["llama_cpp"]["numa"] == "distribute" and engine["args"][-2:] == ["--threads", "200"]
    assert engine["threads"] == 200


def test_the_test_data_is_the_fix157_config() -> None:
    """The YaRN config is fix157's (Qwen2.5-7B-Instruct's, with its model card's block), copied for this workload."""
    ours = DATA / "qwen2.5-7b-yarn" / "config.json"
    theirs = REPO / "tests" / "data" / "fix157" / "qwen2.5-7b-yarn" / "config.json"
    assert ours.read_text() == theirs.read_text()


@pytest.mark.parametrize(
    ("sockets", "threads", "warned"),
    [
        pytest.param(2, 250, True, id="bound-past-the-socket"),
        pytest.param(2, 192, False, id="bound-within-the-socket"),
        pytest.param(4, 250, False, id="spread-over-four"),  # --numa distribute: the threads spread over the nodes
    ],
)
def test_threads_past_the_bound_sockets_are_warned_of(tmp_path: Path, sockets: int, threads: int, warned: bool) -> None:
    """Bound to node 0, threads beyond one EPYC 9654 socket's 192 oversubscribe it (the schema's bound is both
    sockets' 384); the warning is at the field."""
    path = _home(tmp_path, f"    cpu: epyc-9654\n    cpu_sockets: {sockets}\n", f"    threads: {threads}\n")
    _, plan = plan_file(str(path))
    said = [f for f in plan.findings if f.code == "threads-past-node"]
    assert len(said) == (1 if warned else 0)
    if warned:
        assert said[0].path == "hardware.fixed.threads" and "give at most 192" in said[0].message
