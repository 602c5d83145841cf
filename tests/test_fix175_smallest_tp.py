"""newuser97 item 5: a replica whose weights leave vLLM no KV memory names the smallest --tp that starts it.

The oracle is the estimate itself at each --tp (what a user would run next): the TP named starts, every smaller one
vLLM accepts does not, and the per-GPU weights said are that estimate's.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

import pytest

from generator.calculator.smallest_tp import tp_degrees
from tests.helpers import estimate_json, run_estimate

if TYPE_CHECKING:
    from generator.sizing.architecture import Architecture

LLAMA_70B = "meta-llama/Llama-3.3-70B-Instruct"


def _log(*args: str) -> dict[str, Any]:
    log: dict[str, Any] = estimate_json(*args)["capacity"]["vllm_log"]
    return log


def _starts(*args: str) -> bool:
    return bool(_log(*args)["starts"])


@pytest.mark.parametrize(
    ("args", "tp", "tried"),
    [
        # the finding: 67.67 GiB of fp8 weights on one H100 leave no KV memory; two GPUs hold 33.83 GiB each
        ((LLAMA_70B, "--precision", "fp8", "--context", "8192", "--gpu", "h100-sxm5-80gb"), 2, [2, 4, 8]),
        # bf16 on 48 GB L40S: TP2's 65.7 GiB a GPU still leaves none, TP4 starts
        ((LLAMA_70B, "--precision", "bf16", "--context", "8192", "--gpu", "l40s-48gb"), 4, [2, 4, 8]),
        # --tp given: the search starts above it (TP2 asked, TP4 the next that splits 64 heads and 8 KV heads)
        ((LLAMA_70B, "--precision", "bf16", "--context", "8192", "--gpu", "l40s-48gb", "--tp", "2"), 4, [4, 8]),
        # 405B in bf16: 94.5 GiB a GPU at TP8, more than an H100 holds; no TP inside the 8-GPU server starts it
        (("meta-llama/Llama-3.1-405B-Instruct", "--precision", "bf16", "--context", "8192", "--gpu", "h100-sxm5-80gb"),
         None, [2, 4, 8]),
        # a GH200 server holds one superchip: no larger TP on one server to try
        ((LLAMA_70B, "--precision", "bf16", "--context", "8192", "--gpu", "gh200-96gb"), None, []),
    ],
)  # fmt: skip
def test_the_smallest_starting_tp_is_the_estimates_own(args: tuple[str, ...], tp: int | None, tried: list[int]) -> None:
    log = _log(*args)
    assert not log["starts"]
    found = log["smallest_starting_tp"]
    assert (found["tp"], found["tp_tried"]) == (tp, tried)
    asked = int(args[args.index("--tp") + 1]) if "--tp" in args else 1
    for smaller in [d for d in tried if tp is None or d < tp]:  # each degree below the answer is refused on its own
        assert not _starts(*[a for a in args if a not in ("--tp", str(asked))], "--tp", str(smaller))
    if tp is not None:
        at = estimate_json(*[a for a in args if a not in ("--tp", str(asked))], "--tp", str(tp))
        assert at["capacity"]["vllm_log"]["starts"]
        assert found["weights_bytes_per_gpu"] == at["memory"]["per_gpu"]["weights"]
        assert "smallest_starting_tp" not in at["capacity"]["vllm_log"]  # a replica that starts has no search


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            (LLAMA_70B, "--precision", "fp8", "--context", "8192", "--gpu", "h100-sxm5-80gb"),
            # fix193: a larger --gpu-memory-utilization is offered first where the weights leave no KV cache at 0.9
            "leave none: --gpu-memory-utilization 0.95 (it starts, 9,840 KV tokens a replica, where nothing else holds the "
            "GPUs' memory), add GPUs (--tp 2 starts it, 33.83 GiB of weights a GPU), a smaller --precision, or --ram-gib",
        ),
        (
            ("meta-llama/Llama-3.1-405B-Instruct", "--precision", "bf16", "--context", "8192", "--gpu", "h100-sxm5-80gb"),
            "leave none: add GPUs (no --tp up to 8 starts it; --pp spreads the layers over servers), a smaller --precision",
        ),
        (
            (LLAMA_70B, "--precision", "bf16", "--context", "8192", "--gpu", "gh200-96gb"),
            "leave none: add GPUs (a server holds 1 of these GPUs; --pp spreads the layers over servers), a smaller",
        ),
    ],
)
def test_the_remedy_names_the_tp(args: tuple[str, ...], said: str) -> None:
    code, text = run_estimate(*args)
    assert code == 3
    (line,) = [line for line in text.splitlines() if "vLLM refuses to start" in line]
    assert said in line


@pytest.mark.parametrize(
    "args",
    [
        # starts at TP1: nothing to search
        ("meta-llama/Llama-3.1-8B-Instruct", "--context", "8192", "--gpu", "h100-sxm5-80gb"),
        # refused for its context, not its weights: the remedy is the context's, no TP search
        ("meta-llama/Llama-3.1-8B-Instruct", "--gpu", "rtx-4090-24gb", "--context", "131072"),
        # a MIG slice: the remedy is a larger share, not more GPUs
        ("meta-llama/Llama-3.1-8B-Instruct", "--context", "8192", "--gpu", "h100-sxm5-80gb", "--mig", "1g.10gb"),
    ],
)
def test_no_search_outside_the_weights_remedy(args: tuple[str, ...]) -> None:
    assert "smallest_starting_tp" not in _log(*args)


@pytest.mark.parametrize(
    ("heads", "kv_heads", "above", "widest", "degrees"),
    [
        (64, 8, 1, 8, [2, 4, 8]),  # Llama 70B
        (40, 8, 1, 8, [2, 4, 8]),  # 5 divides 40 heads but not 8 KV heads
        (28, 4, 1, 8, [2, 4]),  # 7 divides 28 heads; 4 KV heads do not divide 7
        (12, 2, 1, 8, [2, 4, 6]),  # 3 refused (2 KV heads); 4 and 6 replicate the 2 KV heads
        (64, 8, 2, 8, [4, 8]),  # above the TP asked
        (64, 8, 1, 4, [2, 4]),  # a 4-GPU server
        (64, 8, 8, 8, []),
    ],
)
def test_tp_degrees_are_what_vllm_accepts(heads: int, kv_heads: int, above: int, widest: int, degrees: list[int]) -> None:
    arch = cast("Architecture", SimpleNamespace(num_attention_heads=heads, num_kv_heads=kv_heads))
    assert tp_degrees(arch, above, widest) == degrees
