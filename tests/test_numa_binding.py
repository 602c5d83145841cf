"""fuzz18 item 6: the llama.cpp settings carry the NUMA binding the offload speed counts on.

On a machine of several sockets, offload counts one socket's bandwidth "for llama.cpp bound to one node (numactl -N 0
-m 0)"; the line and the group vars said nothing of it, while the spanning case carried ``--numa distribute``. Both
now come from one place (``llama_cpp_numa``): bound, the line runs under ``numactl -N 0 -m 0`` with llama.cpp's
``--numa numactl`` ("use the CPU map provided by numactl", llama.cpp tools/server/README.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.api import render_file
from tests.helpers import ansible_reader, estimate_json

REPO = Path(__file__).resolve().parents[1]
QWEN = ("Qwen/Qwen3-235B-A22B", "--precision", "q4_k_m", "--gpu", "rtx-4090-24gb", "--nvme-gib", "1000",
        "--context", "8192", "--cpu", "epyc-9654")  # fmt: skip
#: 94 layers, 93 - 11 + 1 = 83 of them with their routed experts on the CPU; -ngl 95 counts the output layer
EXPERTS = "-ot 'blk\\.(" + "|".join(map(str, range(11, 94))) + ")\\.ffn_.*_exps\\.=CPU'"
#: the estimate's 1,000-token prompt in one pass of 1,024 (newuser38 item 7: the free VRAM holds its compute buffer)
PASSES = "-np 1 -b 1024 -ub 1024"  # one slot, as timed: llama-server runs 4 left to itself
#: fix176: the q4_k_m GGUF of the Hub id, the line's model (was: no model word)
QWEN_FILE = "-m Qwen3-235B-A22B-Q4_K_M.gguf"


@pytest.mark.parametrize(
    ("ram_gib", "sockets", "line", "numa"),
    [
        pytest.param(
            # and the bound socket's 96 cores as --threads, as a plan's line runs (acc146: llama.cpp's default would
            # start a thread on each of both sockets' 192 cores within the one node numactl gives it)
            "256", "2", f"{QWEN_FILE} -ngl 95 -c 8192 {EXPERTS} {PASSES} --numa numactl --no-mmap --threads 96",
            {"numa": "numactl", "numactl": "-N 0 -m 0"}, id="bound-to-one-of-two-nodes",
        ),
        # 256 GiB over 4 sockets: one node's 64 GiB does not hold the experts, so they spread (unchanged)
        pytest.param(
            "256", "4", f"{QWEN_FILE} -ngl 95 -c 8192 {EXPERTS} {PASSES} --numa distribute --no-mmap", {"numa": "distribute"},
            id="spread-over-four-nodes",
        ),
        pytest.param("256", "1", f"{QWEN_FILE} -ngl 95 -c 8192 {EXPERTS} {PASSES} --no-mmap", {}, id="one-socket"),
    ],
)  # fmt: skip
def test_the_llama_cpp_line_carries_the_numa_binding(ram_gib: str, sockets: str, line: str, numa: dict[str, str]) -> None:
    settings = estimate_json(*QWEN, "--ram-gib", ram_gib, "--cpu-sockets", sockets)["runtime_settings"]
    assert settings["llama.cpp"] == line
    options: dict[str, Any] = settings["llama.cpp_options"]
    assert {k: v for k, v in options.items() if k.startswith("numa")} == numa


def test_a_model_in_vram_is_not_bound() -> None:
    """Nothing offloaded reads the sockets' memory: no binding, as no NUMA finding."""
    data = estimate_json("meta-llama/Llama-3.1-8B-Instruct", "--precision", "q4_k_m", "--gpu", "rtx-4090-24gb",
                         "--ram-gib", "256", "--cpu", "epyc-9654", "--cpu-sockets", "2", "--context", "8192")  # fmt: skip
    held = data["offload"]["bytes"]
    assert held["cpu"] == held["embedding_cpu"]  # the input embedding alone, a lookup llama.cpp keeps in RAM
    assert data["runtime_settings"]["llama.cpp"] == "-m Llama-3.1-8B-Instruct-Q4_K_M.gguf -ngl 33 -c 8192 -np 1"
    assert "numa" not in data["runtime_settings"]["llama.cpp_options"]


def test_the_rendered_group_vars_carry_the_binding(tmp_path: Path) -> None:
    """examples/home-moe-experts.yaml on two sockets: the experts in one node's RAM, llama.cpp bound to it."""
    path = tmp_path / "two.yaml"
    text = (REPO / "examples" / "home-moe-experts.yaml").read_text()
    path.write_text(text.replace("    cpu: ryzen-9-7950x\n", "    cpu: epyc-9654\n    cpu_sockets: 2\n", 1))
    files = render_file(str(path))
    (group_vars,) = [t for p, t in files.items() if p.startswith("ansible/group_vars/")]
    (dep,) = ansible_reader().load(group_vars)["specgen_deployments"]
    llama_cpp = dep["engine"]["llama_cpp"]
    assert (llama_cpp["numa"], llama_cpp["numactl"]) == ("numactl", "-N 0 -m 0")
    assert "llama.cpp: -ngl 33 -c 16384 " in files["SPEC.md"]  # one shape: the binding is the numactl setting
