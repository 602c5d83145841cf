"""fix172 item 5: LoRA adapters over a GGUF precision without --engine are llama.cpp's, which the estimate refuses.

A GGUF precision without ``--engine`` is llama.cpp's file; on the GPUs given it was refused, but without ``--gpu`` or
with ``--share`` its adapters were sized as vLLM's (adapter slots, ``--max-loras``, a host-RAM pool). llama-server has
none of those: it loads every ``--lora`` adapter GGUF at start, in the adapter file's own type, and a request picks
adapters by the scales of its ``lora`` list (tools/server/README.md). With ``--engine vllm`` / ``sglang`` the adapters
are that engine's, sized as before.
"""

from __future__ import annotations

import pytest

from generator.calculator.lora_estimate import LLAMA_CPP_LORA
from tests.helpers import run_estimate

MODEL = "Qwen/Qwen3-8B"
ADAPTERS = ("--lora-adapters", "4", "--lora-max-rank", "16")

#: (options, exit code, refused as llama.cpp's): GGUF precisions without --engine refused wherever they are sized.
ROWS = [
    pytest.param(("--precision", "q4_k_m"), 1, True, id="gguf-no-gpu"),
    pytest.param(("--precision", "q4_k_m", "--gpu", "h100-sxm5-80gb", "--share", "2"), 1, True, id="gguf-share"),
    pytest.param(("--precision", "q4_k_m", "--gpu", "rtx-4090-24gb"), 1, True, id="gguf-on-gpu"),
    pytest.param(("--precision", "q4_k_m", "--engine", "vllm"), 0, False, id="gguf-vllm"),
    pytest.param(("--precision", "q4_k_m", "--gpu", "rtx-4090-24gb", "--engine", "sglang"), 0, False, id="gguf-sglang"),
    pytest.param(("--precision", "bf16", "--gpu", "h100-sxm5-80gb"), 0, False, id="bf16-vllm"),
]


@pytest.mark.parametrize(("given", "code", "refused"), ROWS)
def test_lora_over_a_gguf_is_llama_cpps_or_the_engine_chosen(
    given: tuple[str, ...], code: int, refused: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    got, out = run_estimate(MODEL, *given, *ADAPTERS)
    err = capsys.readouterr().err
    assert got == code, err
    assert (LLAMA_CPP_LORA in err) is refused and "Traceback" not in err
    assert ("adapter slot" in out) is not refused


def test_the_refusal_says_what_llama_cpp_does() -> None:
    """The words the refusal gives of llama-server's LoRA, each a fact of its README (no slots, a per-request list)."""
    for said in ("loads every adapter GGUF at start", "adapter file's own type", "'lora' list of scales", "no adapter slots"):
        assert said in LLAMA_CPP_LORA
