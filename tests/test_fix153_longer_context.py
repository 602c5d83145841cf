"""fix153 item 2: a context past the model's served limit, said as the engine that serves it handles it.

A workload on ``hardware.fixed`` (planned for its llama.cpp-family server, ``offload_engine``) whose
``max_context_tokens`` is past the model's limit said "vLLM and SGLang refuse" (fix152 fixed the estimate alone).
llama-server caps each slot at the training context (``LLAMA_CPP_LONGER_CAPPED``); ik_llama.cpp's server splits -c over
its slots and caps none (examples/server/server-context.cpp ``server_context::init``: ``n_ctx_slot = n_ctx /
n_parallel``). Both go through ``context_limit.longer_context_wording``, as the estimate does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.sizing.context_limit import (
    IK_LLAMA_CPP_LONGER_UNCAPPED,
    LLAMA_CPP_LONGER_CAPPED,
    LONGER_REFUSED,
    longer_context_wording,
)
from tests.helpers import VALID, call_cli, run_estimate

FIXED = """\
version: 1
name: home
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference:
      max_context_tokens: {context}
hardware:
  fixed:
    gpu: rtx-4090-24gb
    gpu_count: 1
    ram_gib: 64
{engine}"""
SERVED = (
    "max_context_tokens 1,000,000 is more than the 131,072 tokens Llama 3.1 8B Instruct serves (the max_model_len vLLM "
    "derives from its config's max_position_embeddings and rope_scaling); "
)


def test_the_wording_is_the_engines() -> None:
    assert longer_context_wording("llama.cpp") == LLAMA_CPP_LONGER_CAPPED
    assert longer_context_wording("ik_llama.cpp") == IK_LLAMA_CPP_LONGER_UNCAPPED
    assert longer_context_wording("vllm") == longer_context_wording("sglang") == LONGER_REFUSED
    assert "vLLM" not in LLAMA_CPP_LONGER_CAPPED and "vLLM" not in IK_LLAMA_CPP_LONGER_UNCAPPED


@pytest.mark.parametrize(
    ("text", "wording"),
    [
        pytest.param(FIXED.format(context=1000000, engine=""), LLAMA_CPP_LONGER_CAPPED, id="fixed-llama.cpp-default"),
        pytest.param(
            FIXED.format(context=1000000, engine="    offload_engine: llama.cpp\n"), LLAMA_CPP_LONGER_CAPPED, id="fixed-llama.cpp"
        ),
        pytest.param(
            FIXED.format(context=1000000, engine="    offload_engine: ik_llama.cpp\n"),
            IK_LLAMA_CPP_LONGER_UNCAPPED,
            id="fixed-ik_llama.cpp",
        ),
        pytest.param(VALID.replace("max_context_tokens: 8192", "max_context_tokens: 1000000"), LONGER_REFUSED, id="bought-vllm"),
    ],
)
def test_a_workload_past_the_limit_says_what_its_engine_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, wording: str
) -> None:
    (tmp_path / "workload.yaml").write_text(text)
    assert call_cli(tmp_path, ("validate", "workload.yaml")) == 1
    err = capsys.readouterr().err
    assert f"{SERVED}{wording}\n" in err, err
    assert "Traceback" not in err


def test_the_fixed_machine_at_the_limit_is_not_refused_for_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """131,072 tokens, the limit: no context refusal (the rate asked may still not be met, exit 3)."""
    (tmp_path / "workload.yaml").write_text(FIXED.format(context=131072, engine="    offload_engine: ik_llama.cpp\n"))
    assert call_cli(tmp_path, ("validate", "workload.yaml")) in (0, 3)
    assert "max_context_tokens" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("engine", "wording"), [("llama.cpp", LLAMA_CPP_LONGER_CAPPED), ("ik_llama.cpp", IK_LLAMA_CPP_LONGER_UNCAPPED)]
)
def test_the_estimate_on_a_machine_says_its_offload_engines(
    capsys: pytest.CaptureFixture[str], engine: str, wording: str
) -> None:
    """fix152 gave the estimate llama.cpp's wording; ik_llama.cpp (--offload-engine) kept vLLM's refusal."""
    args = ["meta-llama/Llama-3.1-8B-Instruct", "--precision", "q4_k_m", "--ram-gib", "64", "--context", "200000"]
    code, text = run_estimate(*args, "--offload-engine", engine)
    err = capsys.readouterr().err
    assert (code, text) == (1, "")
    assert err.rstrip("\n").endswith(wording), err
