"""``estimate --ram-gib ... --engine vllm`` planned llama.cpp and said nothing of the engine asked (review73 item 2)."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from generator.calculator.cli import ENGINE_SET_ASIDE, main

MACHINE = ["meta-llama/Llama-3.3-70B-Instruct", "--gpu", "rtx-4090-24gb", "--ram-gib", "64", "--precision", "q4_k_m"]


def _run(*extra: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main([*MACHINE, *extra])
    return code, out.getvalue()


def test_engine_vllm_on_a_machine_is_said_set_aside() -> None:
    code, text = _run("--engine", "vllm")
    assert code == 0
    assert f"  note: {ENGINE_SET_ASIDE}\n" in text
    assert "vLLM's own offload (--cpu-offload-gb) is not sized" in ENGINE_SET_ASIDE
    code, out = _run("--engine", "vllm", "--json")
    assert ENGINE_SET_ASIDE in json.loads(out)["notes"]
    assert json.loads(out)["offload"]["engine"] == "llama.cpp"


def test_no_engine_given_says_nothing_of_it() -> None:
    assert _run("--json")[0] == 0
    _, out = _run("--json")
    assert not [n for n in json.loads(out)["notes"] if "--engine" in n]


def test_engine_sglang_on_a_machine_is_still_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as usage:
        _run("--engine", "sglang")
    assert usage.value.code == 2
    assert "--engine is not read when planning placement on an existing machine" in capsys.readouterr().err


def test_the_offload_keys_of_a_refusal_are_in_the_fitting_case_as_null() -> None:
    """review73 item 6: `blocked_by` / `unblock` appeared only on refusal; a script reads one shape either way."""
    _, out = _run("--json")
    offload = json.loads(out)["offload"]
    assert offload["fits"] is True
    assert (offload["blocked_by"], offload["unblock"]) == (None, None)
    refused = io.StringIO()
    with contextlib.redirect_stdout(refused), contextlib.redirect_stderr(io.StringIO()):
        code = main(["Qwen/Qwen3-235B-A22B", "--gpu", "rtx-5090-32gb", "--ram-gib", "32", "--precision", "q4_k_m", "--json"])
    assert code == 3
    keys = json.loads(refused.getvalue())["offload"]
    assert set(keys) == {"fits", "blocked_by", "unblock", "engine", "precision", "context_tokens"}
    assert set(keys) <= set(offload)
