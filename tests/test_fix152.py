"""fix152: newuser88's "found, left" items 3, 4, 5 and 8 (the llama.cpp estimate's texts, f16 / f32, the NUMA basis).

1. ``--batch 4`` CPU-only: the text headline said all the slots' rate, the JSON's ``decode_tokens_per_s`` of the same
   name one slot's; both are now one slot's (as the GPU estimate's "one stream alone"), all slots' said beside.
2. "at 1 tokens of context": a count's noun agrees (:func:`generator.words.counted`).
3. A context past the model's limit in llama.cpp's modes said vLLM's refusal; llama-server starts and caps each slot
   at the training context (tools/server/server-context.cpp).
4. ``--precision f16`` / ``f32`` (llama.cpp's names, llama-quantize's F16 / F32) were unknown: aliases of fp16 / fp32.
5. ``--cpu-sockets 4``: the RAM free after the reserve is one NUMA node's (or every node's): the placement line says so.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from generator.calculator.cli import main as estimate_main
from generator.sizing.precision import WEIGHT_FORMAT_ALIASES, alias_note, weight_format
from generator.words import counted
from tests.helpers import run_estimate

CPU_ONLY = ("meta-llama/Llama-3.1-8B", "--precision", "q4_k_m", "--ram-gib", "128", "--cpu", "ryzen-9-7950x")


def _json(*args: str) -> dict[str, Any]:
    code, text = run_estimate(*args, "--json")
    assert code == 0
    data: dict[str, Any] = json.loads(text)
    return data


def _line(text: str, head: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(f"  {head}"))


# --- item 1: the headline and the field of the same name are one slot's ----------------------------------------------


@pytest.mark.parametrize("slots", [1, 2, 4])
def test_the_cpu_headline_is_the_jsons_decode_tokens_per_s(slots: int) -> None:
    args = (*CPU_ONLY, "--batch", str(slots))
    cpu = _json(*args)["cpu_only"]
    _, text = run_estimate(*args)
    speed = _line(text, "speed")
    head = re.match(r"  speed\s+([\d.]+) tokens/s decode", speed)
    assert head is not None
    assert float(head.group(1)) == pytest.approx(cpu["decode_tokens_per_s"], abs=0.006)
    assert cpu["decode_tokens_per_s_all_slots"] == pytest.approx(cpu["decode_tokens_per_s"] * slots, abs=0.01)
    if slots > 1:  # all the slots together said beside, with the figure of the JSON's all-slots field
        assert f"each of the {slots} slots" in speed
        assert f"{slots} slots together {cpu['decode_tokens_per_s_all_slots']:.2f} tokens/s" in speed
    else:
        assert "a stream" in speed and "together" not in speed


def test_the_gpu_headline_is_one_stream_too() -> None:
    """The GPU estimate's shape the CPU one now follows: its ``decode_tokens_per_s`` is one stream's, said as such."""
    args = ("meta-llama/Llama-3.1-8B", "--precision", "q4_k_m", "--gpu", "rtx-4090-24gb", "--batch", "4")
    llama = _json(*args)["llama_cpp"]
    _, text = run_estimate(*args)
    assert f"{llama['decode_tokens_per_s']:.2f} tokens/s one stream alone" in text


# --- item 2: plural agreement ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("count", "said"), [(0, "0 tokens"), (1, "1 token"), (2, "2 tokens"), (4096, "4,096 tokens")])
def test_counted(count: int, said: str) -> None:
    assert counted(count, "token") == said


def test_one_token_of_context() -> None:
    _, text = run_estimate(*CPU_ONLY, "--input-tokens", "1", "--output-tokens", "1")
    speed = _line(text, "speed")
    assert "at 1 token of context" in speed and "1 tokens" not in speed


# --- item 3: a context past the limit, as llama.cpp treats it -------------------------------------------------------

VLLM_Q4 = ("meta-llama/Llama-3.1-8B", "--precision", "q4_k_m", "--gpu", "h100-sxm5-80gb", "--engine", "vllm")
PAST_LIMIT = [
    # (arguments past Llama 3.1's 131,072 tokens, llama.cpp's answer)
    (("meta-llama/Llama-3.1-8B", "--precision", "q4_k_m", "--ram-gib", "128", "--context", "200000"), True),
    (("meta-llama/Llama-3.1-8B", "--precision", "q4_k_m", "--gpu", "h100-sxm5-80gb", "--context", "200000"), True),
    (("meta-llama/Llama-3.1-8B", "--precision", "bf16", "--gpu", "h100-sxm5-80gb", "--context", "200000"), False),
    ((*VLLM_Q4, "--context", "200000"), False),
]


@pytest.mark.parametrize(("args", "llama"), PAST_LIMIT)
def test_a_context_past_the_limit_says_the_engines_answer(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], llama: bool
) -> None:
    assert estimate_main(list(args)) == 1
    err = capsys.readouterr().err
    assert "--context 200,000 is more than the 131,072 tokens" in err and "Traceback" not in err
    assert ("vLLM and SGLang refuse" in err) is not llama
    assert ("llama-server starts with a longer -c but caps each slot at the model's training context" in err) is llama


# --- item 4: llama.cpp's float names --------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "canonical"), [("f16", "fp16"), ("F16", "fp16"), ("f32", "fp32")])
def test_llama_cpps_float_names_are_aliases(name: str, canonical: str) -> None:
    assert WEIGHT_FORMAT_ALIASES[name.lower()] == canonical
    assert weight_format(name) is weight_format(canonical)
    assert alias_note(name) == f"precision {name} is llama-quantize's name for {canonical}: sized and shown as {canonical}"


def test_f16_estimates_as_fp16() -> None:
    f16 = _json("meta-llama/Llama-3.1-8B", "--precision", "f16", "--ram-gib", "128")
    fp16 = _json("meta-llama/Llama-3.1-8B", "--precision", "fp16", "--ram-gib", "128")
    assert f16["cpu_only"] == fp16["cpu_only"] and f16["memory"] == fp16["memory"]
    assert "precision f16 is llama-quantize's name for fp16: sized and shown as fp16" in f16["notes"]


# --- item 5: the RAM free is one node's ------------------------------------------------------------------------------


NUMA = [
    # (sockets, context, what the placement line says after the free RAM)
    ("1", "2048", None),
    ("4", "2048", "(of one NUMA node's 16 GiB of 64, the 8 GiB reserve kept on it)"),
    ("4", "32768", "(of all 4 NUMA nodes' 64 GiB, the model spread over them)"),
]


@pytest.mark.parametrize(("sockets", "context", "said"), NUMA)
def test_the_free_ram_says_its_node(sockets: str, context: str, said: str | None) -> None:
    args = ("meta-llama/Llama-3.1-8B", "--precision", "q4_k_m", "--ram-gib", "64", "--cpu-sockets", sockets)
    _, text = run_estimate(*args, "--context", context)
    placement = _line(text, "placement")
    if said is None:
        assert placement.endswith("RAM free after the reserve")
    else:
        assert placement.endswith(f"RAM free after the reserve {said}")
