"""fix149: a pool served by llama.cpp (``hardware.fixed``) gets llama.cpp's vars alone, and no var the plan knows is 0.

Its group vars carried vLLM's flags (``vllm_args``: ``--gpu-memory-utilization 0.9``, ``--cpu-offload-gb 23`` ...)
for an engine the pool does not run, no command line, GGUF file or threads for the one it does, and ``cores: 0`` (and
Terraform's ``cpu_cores: 0``) for a machine whose CPU was not given. The oracles: ansible-inventory (ansible-core) reads
the rendered tree; the plan's own llama.cpp line (spec.json ``runtime_settings``) and the catalog's CPU records.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from generator import catalog
from generator.api import render_file
from generator.render.ansible import omitted_vars_comment
from tests.helpers import ansible_reader
from tests.test_oracles import ansible_inventory

REPO = Path(__file__).resolve().parents[1]
GOLDEN = REPO / "tests" / "golden"

#: Every key a llama.cpp-family engine entry may carry: its own settings, nothing of vLLM's or SGLang's.
LLAMA_CPP_KEYS = {"name", "max_model_len", "llama_cpp", "args", "threads", "model_file", "gguf_type", "llama_cpp_note"}
#: Keys of one engine that another's entry must never carry.
VLLM_ONLY = {"max_num_seqs", "max_num_batched_tokens", "gpu_memory_utilization", "vllm_args"}
SGLANG_ONLY = {"context_length", "max_running_requests", "mem_fraction_static", "max_total_tokens", "is_embedding"}
LLAMA_CPP_ONLY = {"llama_cpp", "threads", "model_file", "gguf_type", "llama_cpp_note", "vllm_args"}
#: vLLM's flags, which llama-server does not take (it refuses an unknown argument).
VLLM_FLAGS = ("--gpu-memory-utilization", "--cpu-offload-gb", "--max-model-len", "--max-num-seqs", "--pipeline-parallel-size")


def _rendered(tmp_path: Path, example: str, change: tuple[str, str] | None = None) -> Path:
    """``examples/<example>.yaml`` (with ``change`` made) rendered under ``tmp_path/out``, as ``specgen render`` writes."""
    text = (REPO / "examples" / f"{example}.yaml").read_text(encoding="utf-8")
    if change is not None:
        assert change[0] in text
        text = text.replace(*change)
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / f"{example}.yaml"
    path.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    for name, body in render_file(str(path)).items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(body, encoding="utf-8")
    return out


def _host_engine(out: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The one host's vars as ansible-inventory reads them (group vars included), and its one deployment's engine."""
    hostvars = ansible_inventory(out).data["_meta"]["hostvars"]
    (host,) = hostvars.values()
    (dep,) = host["specgen_deployments"]
    return host, dep["engine"]


def _plan_line(out: Path) -> str:
    (dep,) = json.loads((out / "spec.json").read_text())["plan"]["deployments"]
    settings = dep["details"]["runtime_settings"]
    return str(settings[dep["details"]["offload"]["engine"]])


CASES = [
    # (example, change, CPU given, model file name)
    pytest.param("home-70b-offload", None, "ryzen-9-7950x", "Llama-3.3-70B-Instruct-Q4_K_M.gguf", id="70b"),
    pytest.param("home-moe-experts", None, "ryzen-9-7950x", "Mixtral-8x7B-Instruct-v0.1-Q4_K_M.gguf", id="moe-experts"),
    # a hybrid part: llama.cpp's default threads run on its 8 P-cores, of 24 cores
    pytest.param(
        "home-moe-experts",
        ("    cpu: ryzen-9-7950x\n", "    cpu: core-i9-14900k\n"),
        "core-i9-14900k",
        "Mixtral-8x7B-Instruct-v0.1-Q4_K_M.gguf",
        id="hybrid-p-cores",
    ),
]


@pytest.mark.parametrize(("example", "change", "cpu", "file"), CASES)
def test_a_llama_cpp_pool_gets_its_engines_vars_alone(
    tmp_path: Path, example: str, change: tuple[str, str] | None, cpu: str, file: str
) -> None:
    out = _rendered(tmp_path, example, change)
    host, engine = _host_engine(out)
    assert engine["name"] == "llama.cpp"
    assert set(engine) <= LLAMA_CPP_KEYS, set(engine) - LLAMA_CPP_KEYS  # was: vllm_args beside llama_cpp
    record = catalog.cpus()[cpu]
    threads = record.performance_cores or record.cores
    # the plan's own line and the threads its CPU share was timed at; the file by its name in the model cache
    assert engine["args"] == [*shlex.split(_plan_line(out)), "--threads", str(threads)]
    assert host["specgen_nvme"]["model_cache_dir"] == "/var/lib/specgen/models"
    assert (engine["model_file"], engine["gguf_type"], engine["threads"]) == (file, "Q4_K_M", threads)
    assert not any(arg in VLLM_FLAGS for arg in engine["args"])
    assert host["specgen_cpu"]["cores"] == record.cores  # the host's cores, the P-cores' llama.cpp threads beside


@pytest.mark.parametrize(
    ("change", "why"),
    [
        pytest.param(None, "memory given, no CPU: the plan counted its memory alone", id="memory-given"),
        pytest.param(
            ("    memory_channels: 2\n    ddr_mt_per_s: 3200\n", ""),
            "nothing given: the plan assumed a desktop's CPU, which is not this machine's",
            id="cpu-assumed",
        ),
    ],
)
def test_cores_the_plan_does_not_know_are_left_out_with_the_reason(
    tmp_path: Path, change: tuple[str, str] | None, why: str
) -> None:
    out = _rendered(tmp_path, "home-quantize-instead", change)
    host, engine = _host_engine(out)
    assert "cores" not in host["specgen_cpu"], why  # was: cores: 0
    assert "threads" not in engine and "--threads" not in engine["args"], why  # llama.cpp's default counts the host's
    (group_vars,) = (out / "ansible" / "group_vars").iterdir()
    text = group_vars.read_text()
    assert text.splitlines()[2].startswith("# specgen_cpu.cores omitted: the plan does not know this host's CPU cores")
    (pool,) = json.loads((out / "terraform" / "specgen.auto.tfvars.json").read_text())["gpu_pools"].values()
    assert pool["cpu_cores"] is None  # was 0; null as ram_gib's where no figure is known
    assert engine["model_file"] == "Qwen2.5-32B-Instruct-Q4_K_M.gguf"


def test_threads_are_one_sockets_where_bound_to_one_node_and_llama_cpps_own_where_spread(tmp_path: Path) -> None:
    """Bound to one NUMA node (numactl -N 0 -m 0) the plan times one socket's cores: --threads says so, where
    llama.cpp's default would start a thread for every core of both sockets on one node's; spread over the nodes
    (--numa distribute) its default threads over all of them are what distribute is for."""
    two = _rendered(
        tmp_path / "two", "home-moe-experts", ("    cpu: ryzen-9-7950x\n", "    cpu: epyc-9654\n    cpu_sockets: 2\n")
    )
    host, engine = _host_engine(two)
    per_socket = catalog.cpus()["epyc-9654"].cores
    assert engine["llama_cpp"]["numactl"] == "-N 0 -m 0" and engine["args"][-2:] == ["--threads", str(per_socket)]
    assert host["specgen_cpu"]["cores"] == 2 * per_socket
    four = _rendered(
        tmp_path / "four", "home-moe-experts", ("    cpu: ryzen-9-7950x\n", "    cpu: epyc-9654\n    cpu_sockets: 4\n")
    )
    _, engine = _host_engine(four)
    assert engine["llama_cpp"]["numa"] == "distribute" and "threads" not in engine and "--threads" not in engine["args"]


def test_a_known_cpu_has_no_omission_comment() -> None:
    from generator.api import plan_file

    _, plan = plan_file(str(REPO / "examples" / "home-70b-offload.yaml"))
    assert omitted_vars_comment(plan.pools[0].node) == ""


def _golden_group_vars() -> list[Path]:
    return sorted(GOLDEN.glob("**/ansible/group_vars/*.yml"))


@pytest.mark.parametrize("path", _golden_group_vars(), ids=lambda p: str(p.relative_to(GOLDEN)))
def test_each_engine_entry_carries_its_own_engines_keys_only(path: Path) -> None:
    """Every golden pool, mixed ones too (colo-airgap's vLLM and SGLang services on one pool): vLLM's keys only under
    vLLM, SGLang's only under SGLang, llama.cpp's only under llama.cpp; and no ``cores: 0``."""
    data = ansible_reader().load(path.read_text())
    assert data["specgen_cpu"].get("cores", 1) > 0
    for dep in data.get("specgen_deployments", []):
        engine = dep.get("engine")
        if engine is None:
            continue
        name, keys = engine["name"], set(engine)
        if name == "vllm":
            assert not keys & (SGLANG_ONLY | LLAMA_CPP_ONLY), (dep["name"], keys & (SGLANG_ONLY | LLAMA_CPP_ONLY))
        elif name == "sglang":
            assert not keys & (VLLM_ONLY | LLAMA_CPP_ONLY | {"max_model_len"}), dep["name"]
        else:
            assert keys <= LLAMA_CPP_KEYS, (dep["name"], keys - LLAMA_CPP_KEYS)
            assert not any(arg in VLLM_FLAGS for arg in engine["args"]), dep["name"]


TWO_MODELS = """\
version: 1
name: two
deployments:
  - name: coder
    model: Qwen/Qwen2.5-7B-Instruct
    inference: {precision: q4_k_m, max_context_tokens: 8192, requests_per_second: 0.05}
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {precision: q8_0, max_context_tokens: 8192, requests_per_second: 0.05}
hardware:
  provider: baremetal
  fixed: {gpu: rtx-3090-24gb, gpu_count: 2, ram_gib: 64, cpu: ryzen-9-7950x}
outputs: [ansible]
"""


def test_models_sharing_a_fixed_machine_each_get_its_gpus_and_take_turns(tmp_path: Path) -> None:
    """Two deployments on one 2-GPU machine, each placed over both GPUs as the resident model (models-share-machine):
    the host had no specgen_replicas at all (the side-by-side packing found no room), so a role knew no GPUs."""
    path = tmp_path / "two.yaml"
    path.write_text(TWO_MODELS, encoding="utf-8")
    out = tmp_path / "out"
    for name, body in render_file(str(path)).items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(body, encoding="utf-8")
    plan = json.loads((out / "spec.json").read_text())["plan"]
    assert any(f["code"] == "models-share-machine" for f in plan["findings"])
    (host,) = ansible_inventory(out).data["_meta"]["hostvars"].values()
    spans = {d["name"]: d["tp"] * d["pp"] for d in plan["deployments"]}
    assert spans == {"coder": 2, "chat": 2}  # each over both GPUs (-ts over two)
    assert host["specgen_replicas"] == [
        {"deployment": name, "replica": 1, "gpus": list(range(width))} for name, width in spans.items()
    ]
    assert host["specgen_one_resident_at_a_time"] is True
    for dep in host["specgen_deployments"]:
        assert len(dep["engine"]["llama_cpp"]["tensor_split"]) == spans[dep["name"]]


def test_one_model_on_a_fixed_machine_is_not_told_to_take_turns(tmp_path: Path) -> None:
    host, _ = _host_engine(_rendered(tmp_path, "home-70b-offload"))
    assert "specgen_one_resident_at_a_time" not in host
    assert host["specgen_replicas"] == [{"deployment": "assistant", "replica": 1, "gpus": [0]}]


def test_a_local_gguf_is_loaded_by_its_own_name(tmp_path: Path) -> None:
    """A workload whose model is a .gguf file: the runner loads that file (by its name, in the hosts' model folder)
    in the file's own type, not a conversion of a Hub checkpoint."""
    gguf = pytest.importorskip("gguf", reason="the gguf package writes the file (the test extras)")
    from tests.test_gguf import LAYER, write_gguf

    every = ["IQ2_XXS", "IQ2_S", "Q4_K"]
    write_gguf(
        tmp_path / "m.gguf",
        {f"blk.{i}.{n}.weight": every[(i + j) % 3] for i in range(8) for j, n in enumerate(LAYER)},
        gguf.LlamaFileType.MOSTLY_IQ2_M,
    )
    workload = tmp_path / "w.yaml"
    workload.write_text(
        "version: 1\nname: gguf-home\ndeployments:\n  - name: chat\n    model: ./m.gguf\n    inference:\n"
        "      max_context_tokens: 2048\n      requests_per_second: 0.1\nhardware:\n  provider: baremetal\n"
        "  fixed:\n    gpu: rtx-4090-24gb\n    gpu_count: 1\n    ram_gib: 32\n    cpu: ryzen-9-7950x\noutputs: [ansible]\n"
    )
    files = render_file(str(workload))
    (group_vars,) = [t for p, t in files.items() if p.startswith("ansible/group_vars/")]
    (dep,) = ansible_reader().load(group_vars)["specgen_deployments"]
    engine = dep["engine"]
    assert (engine["model_file"], engine["gguf_type"]) == ("m.gguf", "IQ2_M")  # in specgen_nvme.model_cache_dir
    assert "-m" not in engine["args"]  # the runner joins model_cache_dir and model_file
