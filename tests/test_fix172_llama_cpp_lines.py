"""fix172 items 1 and 2: every llama-server line the estimate prints is shell-quoted, and a converted GGUF's line
carries the ``--threads`` its own line does.

Item 1: the CPU-only and GPU-only lines (``llama_cpp.command``, ``cpu_only.command``) were joined with spaces, so an
``-ot`` pattern (``blk\\.(0|1)\\.ffn_.*_exps\\.=CPU``) pasted into a shell was a pipe and a glob; the ``--ram-gib`` line was
quoted, and had its ``--threads`` joined on with spaces. One writer now (``offload_report.llama_cpp_line``). Item 2: the
conversion note's "run it with ..." line lacked the ``--threads N`` of the plan's own line (acc146's rule,
``llama_cpp_threads.estimate_thread_args``), on 2+ sockets leaving llama.cpp's default of every socket's cores.
"""

from __future__ import annotations

import re
import shlex

import pytest

from generator.calculator.llama_cpp_estimate import _command
from generator.calculator.offload_report import llama_cpp_args, llama_cpp_line, llama_cpp_options
from generator.sizing.offload import place
from generator.sizing.precision import weight_format
from tests.helpers import estimate_json
from tests.test_offload import CONSTS, arch_of, machine

#: Option values a line may carry that a shell would read as syntax: a pattern of ``|``, ``*``, ``\\``, ``(``; a space.
WORDS = [
    ["-ot", "blk\\.(0|1|2)\\.ffn_.*_exps\\.=CPU"],
    ["--override-kv", "llama.context_length=int:262144"],
    ["--threads", "12"],
    ["-m", "/models/my model $(touch x).gguf"],
]


@pytest.mark.parametrize("threads", [(), ("--threads", "8")])
def test_a_line_reads_back_as_its_words(threads: tuple[str, ...]) -> None:
    options = {"n_gpu_layers": 20, "ctx_size": 4096, "cache_type": "f16", "cpu_expert_layers": [0, 1, 2], "no_mmap": False}
    line = llama_cpp_line(options, threads)
    assert shlex.split(line) == [*llama_cpp_args(options), *threads]


@pytest.mark.parametrize("words", WORDS)
def test_each_word_a_shell_would_read_as_syntax_is_quoted(words: list[str]) -> None:
    options = {"n_gpu_layers": 1, "ctx_size": 512, "cache_type": "f16", "no_mmap": False}
    assert shlex.split(llama_cpp_line(options, words))[-len(words) :] == words


def test_the_cpu_and_gpu_only_line_quotes_its_expert_pattern() -> None:
    """``_command`` (the GPU-only and CPU-only estimates' line) wrote the -ot pattern bare before."""
    arch = arch_of("mistralai/Mixtral-8x7B-Instruct-v0.1")
    p = place(arch, weight_format("q4_k_m"), 16, 16384, machine(24), CONSTS)
    assert any("+experts:cpu" in d for d in p.layer_devices)
    line = _command(p, 1, "bf16", 1, "llama.cpp", None, 16384)
    pattern = next(w for w in llama_cpp_args(llama_cpp_options(p, 1, "bf16")) if w.startswith("blk"))
    assert f"-ot {shlex.quote(pattern)}" in line and shlex.quote(pattern) != pattern
    assert shlex.split(line) == llama_cpp_args(llama_cpp_options(p, 1, "bf16", streams=1))


# --- item 2: the converted GGUF's line has the --threads its own line has --------------------------------------------

#: (machine options, threads on both lines): 2 sockets of a catalog CPU (one socket's cores under numactl), and
#: --threads given on one socket.
THREADED = [
    (("--ram-gib", "256", "--cpu-sockets", "2", "--cpu", "epyc-7773x"), "64"),
    (("--ram-gib", "128", "--cpu", "epyc-7773x", "--threads", "12"), "12"),
]
INT4_70B = ("meta-llama/Llama-3.3-70B-Instruct", "--gpu", "rtx-4090-24gb", "--precision", "int4")
#: the file the conversion note's line runs (fix176: the int4 checkpoint converted to q4_k_m)
Q4_FILE = "Llama-3.3-70B-Instruct-Q4_K_M.gguf"


@pytest.mark.parametrize(("given", "threads"), THREADED)
def test_the_conversion_lines_threads_are_the_plans(given: tuple[str, ...], threads: str) -> None:
    settings = estimate_json(*INT4_70B, *given)["runtime_settings"]
    line, note = settings["llama.cpp"], settings["llama.cpp_note"]
    assert shlex.split(line)[-2:] == ["--threads", threads]
    file_line = re.search(r"run it with (.*) \(it places differently\)", note)
    assert file_line is not None, note
    words = shlex.split(file_line.group(1))
    assert words[-2:] == ["--threads", threads] and words[:4] == ["-m", Q4_FILE, "-ngl", "46"]  # q4_k_m: 46 layers, not 53


def test_no_threads_where_the_plans_line_has_none() -> None:
    """One socket, no --threads: llama.cpp's default is the cores the share was timed on; neither line has them."""
    settings = estimate_json(*INT4_70B, "--ram-gib", "128", "--cpu", "epyc-7773x")["runtime_settings"]
    assert "--threads" not in settings["llama.cpp"] and "--threads" not in settings["llama.cpp_note"]


def test_the_rope_flags_a_note_gives_are_quoted_too() -> None:
    """``LlamaCppRope.flags`` ("start llama-server with {flags} -c N") was joined with spaces."""
    from generator.sizing.context_limit import LlamaCppRope

    rope = LlamaCppRope(32768, 131072, (("rope_scaling", "yarn"), ("override_kv", "x y.context_length=int:131072")))
    assert shlex.split(rope.flags) == ["--rope-scaling", "yarn", "--override-kv", "x y.context_length=int:131072"]
