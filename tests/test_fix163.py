"""fix163 item 1: the ``--override-kv <arch>.context_length=int:N`` that lifts llama-server's cap, rendered.

llama-server caps a slot at the GGUF's ``context_length`` (``n_ctx_train``). The RoPE flags re-adjust it only on builds
from ggml-org/llama.cpp PR #28030 on, and only for a GGUF that does not already carry the same scaling; the finding
named ``--override-kv <arch>.context_length=int:N`` with ``<arch>`` unfilled, since the GGUF architecture name (the
``general.architecture`` key prefix) was not mapped from the Hugging Face model type. Oracles: convert_hf_to_gguf.py's
model classes and llama-arch.cpp's ``LLM_ARCH_NAMES`` (the mapping's sources, :mod:`generator.sizing.gguf_arch`); the
GGUF reader itself (a file's own ``general.architecture`` and RoPE keys, written by gguf-py's ``GGUFWriter``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.api import plan_file, render_file
from generator.calculator.gguf_file import MODEL_TYPES
from generator.calculator.machine import FixedSpec, threads_binding
from generator.sizing.context_limit import (
    LLAMA_CPP_OVERRIDE_KV,
    llama_cpp_rope,
    llama_cpp_rope_note,
    llama_cpp_rope_planned,
    rope_args,
    rope_options,
)
from generator.sizing.gguf_arch import GGUF_ARCHITECTURES, gguf_architecture
from tests.conftest import REPO
from tests.helpers import estimate_json, write_sparse_gguf

YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
RAISE = ["--rope-scaling", "yarn", "--rope-scale", "4", "--yarn-orig-ctx", "32768"]


@pytest.mark.parametrize(
    ("model_type", "arch"),
    [
        # convert_hf_to_gguf.py: LlamaModel registers LlamaForCausalLM, MistralForCausalLM and MixtralForCausalLM
        ("llama", "llama"),
        ("mistral", "llama"),
        ("mixtral", "llama"),
        ("qwen2", "qwen2"),
        ("qwen2_moe", "qwen2moe"),
        ("qwen3", "qwen3"),
        ("qwen3_moe", "qwen3moe"),
        ("qwen3_next", "qwen3next"),
        ("phi3", "phi3"),
        ("gemma2", "gemma2"),
        # Gemma 3's max_position_embeddings is already the stretched length (vLLM's rule): no limit of llama.cpp's
        ("gemma3", "gemma3"),
        ("gemma3_text", "gemma3"),
        # DeepseekV2Model registers DeepseekV3ForCausalLM too
        ("deepseek_v2", "deepseek2"),
        ("deepseek_v3", "deepseek2"),
        # LLM_ARCH_OPENAI_MOE's name
        ("gpt_oss", "gpt-oss"),
    ],
)
def test_each_model_type_renders_its_architectures_context_length_override(model_type: str, arch: str) -> None:
    """model type -> GGUF architecture -> the flags a request past the context_length gets on llama.cpp's line."""
    config: dict[str, Any] = {"max_position_embeddings": 32768, "rope_scaling": YARN}
    assert gguf_architecture(config, model_type) == arch
    rope = llama_cpp_rope(config, model_type, gguf_architecture(config, model_type))
    if arch == "gemma3":
        assert rope is None and rope_args(rope_options(rope, 65536)) == []
        return
    assert rope is not None
    assert rope_args(rope_options(rope, 65536)) == [*RAISE, "--override-kv", f"{arch}.context_length=int:131072"]
    # ik_llama.cpp caps no slot at the context_length: the stretch alone
    assert rope_args(rope_options(rope, 65536, "ik_llama.cpp")) == RAISE
    assert rope_args(rope_options(rope, 32768)) == []  # within it, unscaled as trained


def test_the_table_is_the_one_the_test_pins() -> None:
    """No model type mapped that the table above does not source (a new entry needs its row)."""
    assert len(GGUF_ARCHITECTURES) == 15


def test_the_mapping_inverts_the_gguf_readers() -> None:
    """Each GGUF architecture the reader sizes maps back from its model type, but mistral3 (whose text model type,
    ``mistral``, is Mistral 7B's too, converted as ``llama``): the reader carries a file's own name instead."""
    for arch, model_type in MODEL_TYPES.items():
        assert GGUF_ARCHITECTURES[model_type] == arch or (arch, model_type) == ("mistral3", "mistral")
    assert gguf_architecture({"general.architecture": "mistral3"}, "mistral") == "mistral3"


@pytest.mark.parametrize("model_type", ["mistral3", "falcon", "unknown"])
def test_a_model_type_without_a_mapping_keeps_the_named_override(model_type: str) -> None:
    """No architecture: no --override-kv on the line, and the finding and note name it with ``<arch>`` as before."""
    config: dict[str, Any] = {"max_position_embeddings": 32768, "rope_scaling": YARN}
    rope = llama_cpp_rope(config, model_type, gguf_architecture(config, model_type))
    assert rope is not None and "override_kv" not in dict(rope.options)
    assert rope_args(rope_options(rope, 65536)) == RAISE
    said = LLAMA_CPP_OVERRIDE_KV.format(tokens=131072)
    assert said.endswith("--override-kv <arch>.context_length=int:131072")
    assert said in llama_cpp_rope_planned(rope, 65536, "llama.cpp")
    assert said in llama_cpp_rope_note(rope, 65536)


def test_the_finding_says_why_the_override_is_on_the_line() -> None:
    rope = llama_cpp_rope({"max_position_embeddings": 32768, "rope_scaling": YARN}, "qwen2", "qwen2")
    assert rope is not None
    said = llama_cpp_rope_planned(rope, 65536, "llama.cpp")
    assert "the llama.cpp line carries " + " ".join(RAISE) + " --override-kv qwen2.context_length=int:131072," in said
    assert "its --override-kv sets the GGUF's context_length, which llama-server caps a slot at, to 131,072" in said
    assert "<arch>" not in said
    # ik_llama.cpp: its line has no override; the text is fix159's
    ik = llama_cpp_rope_planned(rope, 65536, "ik_llama.cpp")
    assert "--override-kv qwen2" not in ik and LLAMA_CPP_OVERRIDE_KV.format(tokens=131072) in ik


def test_linear_scaling_overrides_the_context_length_too() -> None:
    rope = llama_cpp_rope({"max_position_embeddings": 4096, "rope_scaling": {"type": "linear", "factor": 2.0}}, "llama", "llama")
    assert rope is not None
    assert rope_args(rope_options(rope, 8192)) == [
        "--rope-scaling",
        "linear",
        "--rope-scale",
        "2",
        "--override-kv",
        "llama.context_length=int:8192",
    ]


# --- a GGUF file's own keys ----------------------------------------------------------------------------------------


def _gguf(path: Path, rope: dict[str, Any] | None) -> Path:
    """A small llama GGUF of context_length 4,096 (tensors as holes), with ``rope``'s RoPE-scaling keys if given."""
    gguf = pytest.importorskip("gguf")
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_block_count(2)
    writer.add_embedding_length(256)
    writer.add_feed_forward_length(512)
    writer.add_head_count(4)
    writer.add_head_count_kv(2)
    writer.add_key_length(64)
    writer.add_context_length(4096)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    if rope is not None:
        writer.add_rope_scaling_type(gguf.RopeScalingType(rope["type"]))
        writer.add_rope_scaling_factor(rope["factor"])
        if "original" in rope:
            writer.add_rope_scaling_orig_ctx_len(rope["original"])
    shapes: dict[str, tuple[int, ...]] = {"token_embd.weight": (512, 256), "output.weight": (512, 256)}
    shapes["output_norm.weight"] = (256,)
    for i in range(2):
        shapes |= {
            f"blk.{i}.attn_q.weight": (256, 256),
            f"blk.{i}.attn_k.weight": (128, 256),
            f"blk.{i}.attn_v.weight": (128, 256),
            f"blk.{i}.attn_output.weight": (256, 256),
            f"blk.{i}.ffn_gate.weight": (512, 256),
            f"blk.{i}.ffn_up.weight": (512, 256),
            f"blk.{i}.ffn_down.weight": (256, 512),
            f"blk.{i}.attn_norm.weight": (256,),
            f"blk.{i}.ffn_norm.weight": (256,),
        }
    write_sparse_gguf(writer, shapes)
    return path


@pytest.mark.parametrize(
    ("rope", "context", "flags"),
    [
        # converted with YaRN x4 from 4,096: llama.cpp stretches it itself, but caps a slot at 4,096 on every build
        pytest.param(
            {"type": "yarn", "factor": 4.0, "original": 4096},
            8192,
            "--rope-scaling yarn --rope-scale 4 --yarn-orig-ctx 4096 --override-kv llama.context_length=int:16384",
            id="yarn-keys",
        ),
        pytest.param(
            {"type": "linear", "factor": 2.0},
            8192,
            "--rope-scaling linear --rope-scale 2 --override-kv llama.context_length=int:8192",
            id="linear-keys",
        ),
        pytest.param({"type": "yarn", "factor": 4.0, "original": 4096}, 4096, "", id="yarn-keys-within"),
        # no keys: nothing says the model stretches; a longer context is refused as before
        pytest.param(None, 4096, "", id="no-keys"),
    ],
)
def test_a_gguf_files_rope_keys_decide_the_flags(tmp_path: Path, rope: dict[str, Any] | None, context: int, flags: str) -> None:
    path = _gguf(tmp_path / "m.gguf", rope)
    est = estimate_json(str(path), "--context", str(context), "--ram-gib", "64")
    command = est["cpu_only"]["command"]
    # fix176: the file given is the line's -m (was: no model word; the line started at -ngl)
    assert command.startswith(f"-m {path} -ngl 0 -c {context} {flags}".rstrip() + " ")
    assert ("--rope-scaling" in command) is bool(flags)


# --- item 2: the estimate's threads and a workload's on several sockets ---------------------------------------------

#: The example workload of Mixtral q4_k_m on an RTX 4090, its experts partly in RAM (the CPU's share counts).
HOME = REPO / "examples" / "home-moe-experts.yaml"
MIXTRAL = ["mistralai/Mixtral-8x7B-Instruct-v0.1", "--gpu", "rtx-4090-24gb", "--precision", "q4_k_m"]


def _two_socket_home(tmp_path: Path, sockets: int, threads: int, ram_gib: int = 64) -> Path:
    text = HOME.read_text().replace(
        "    cpu: ryzen-9-7950x\n", f"    cpu: epyc-9654\n    cpu_sockets: {sockets}\n    threads: {threads}\n"
    )
    path = tmp_path / "home.yaml"
    path.write_text(text.replace("    ram_gib: 64\n", f"    ram_gib: {ram_gib}\n"))
    return path


def test_the_estimate_and_the_plan_state_their_thread_binding_in_one_wording(tmp_path: Path) -> None:
    """Two EPYC 9654 sockets, 48 threads: the estimate counts them over the sockets (24 cores a socket, as its
    calibration rows ran), the plan all on the socket numactl binds its line to (48). Each said only its own count; now
    both say the same sentence, naming both bindings, and the counts are unchanged."""
    spec = FixedSpec(gpu="rtx-4090-24gb", gpu_count=1, ram_gib=64, cpu="epyc-9654", cpu_sockets=2, threads=48)
    sentence = threads_binding(spec)
    assert sentence == (
        "threads: the estimate's --threads counts llama.cpp's 48 threads spread over the 2 sockets (24 cores a "
        "socket), as its calibration rows ran them (without numactl); a workload's hardware.fixed.threads counts them "
        "all on the one socket numactl -N 0 -m 0 binds its line to (48 cores)"
    )
    est = estimate_json(*MIXTRAL, "--ram-gib", "64", "--cpu", "epyc-9654", "--cpu-sockets", "2", "--threads", "48")
    (said,) = [f["message"] for f in est["findings"] if f["code"] == "one-socket-bandwidth"]
    assert said.endswith(f"; {sentence}")
    assert "24 of its 96 cores a socket for llama.cpp's 48 threads" in est["machine"]["bandwidths"]
    _, plan = plan_file(str(_two_socket_home(tmp_path, 2, 48)))
    (found,) = [f.message for f in plan.findings if f.code == "one-socket-bandwidth"]
    assert found.endswith(f"; {sentence}")
    assert "48 of its 96 cores for llama.cpp's 48 threads" in plan.deployments[0].reasons[0]
    # one socket, or no threads given: nothing to tell apart
    assert threads_binding(spec._replace(cpu_sockets=1)) is None and threads_binding(spec._replace(threads=None)) is None


@pytest.mark.parametrize(
    ("sockets", "threads", "rendered"),
    [
        # bound to node 0 (numactl -N 0 -m 0): at most its socket's 192 threads (250 were rendered, to wait for cores)
        pytest.param(2, 250, 192, id="bound-past-the-socket"),
        pytest.param(2, 192, 192, id="bound-the-socket"),
        pytest.param(2, 48, 48, id="bound-within"),
        # four sockets of 16 GiB nodes: the weights span them (--numa distribute), the threads with them
        pytest.param(4, 250, 250, id="spread-over-four"),
    ],
)
def test_the_line_runs_no_more_threads_than_the_socket_it_is_bound_to(
    tmp_path: Path, sockets: int, threads: int, rendered: int
) -> None:
    tree = render_file(str(_two_socket_home(tmp_path, sockets, threads)))
    (dep,) = json.loads(tree["spec.json"])["plan"]["deployments"]
    options = dep["details"]["runtime_settings"]["llama.cpp_options"]
    assert ("numactl" in options) is (sockets == 2) and (options.get("numa") == "distribute") is (sockets == 4)
    assert dep["details"]["llama_cpp_threads"] == rendered
    (vars_file,) = [body for name, body in tree.items() if name.startswith("ansible/group_vars/")]
    assert f"threads: {rendered}\n" in vars_file
    # the machine basis names the threads the line runs
    (basis,) = [r for r in dep["reasons"] if r.startswith("machine as sized: ")]
    assert f"for llama.cpp's {rendered} threads (hardware.fixed.threads" in basis
    assert (f"hardware.fixed.threads {threads}, at most the socket's" in basis) is (rendered < threads)


def test_spread_threads_are_said_spread_in_the_machine_basis(tmp_path: Path) -> None:
    """fix159 left the basis of a placement that spans the nodes saying 'all on the socket numactl binds llama.cpp
    to' while its figures counted the threads over the sockets (wider_machine): 200 over 4 sockets, 50 a socket."""
    _, plan = plan_file(str(_two_socket_home(tmp_path, 4, 200)))
    basis = plan.deployments[0].reasons[0]
    assert "50 of its 96 cores a socket for llama.cpp's 200 threads (hardware.fixed.threads over 4 sockets" in basis
    assert "numactl binds" not in basis
    (found,) = [f.message for f in plan.findings if f.code == "numa-spans-nodes"]
    assert found.endswith(
        "; threads: the estimate's --threads and a workload's hardware.fixed.threads both count llama.cpp's 200 "
        "threads spread over the 4 sockets (50 cores a socket), the weights spanning the nodes"
    )
