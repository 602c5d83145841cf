"""A layout whose 16-bit KV cache does not fit, and whose FP8 one does, is refused with the FP8 cache as a way out.

fix183 item 3: Llama 3.1 8B in bf16 at a 32,768-token context on one L4 (pinned TP1) was refused ("needs 21.1 GiB per
GPU of 19.8 GiB usable") with a shorter context and a bigger GPU, never vLLM's --kv-cache-dtype fp8, which fits it.
The figure said is the engine's own sizing: the plan with ``kv_cache_precision: fp8`` holds those KV tokens.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from generator.errors import InfeasibleError
from generator.planner import plan_workload
from generator.workload import load_workload

WORKLOAD = """\
version: 1
name: kv
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference:
      precision: bf16
      kv_cache_precision: {kv}
      engine: {engine}
      max_context_tokens: {context}
      requests_per_second: 0.2
    parallelism: {{tp: 1, pp: 1}}
hardware:
  provider: baremetal
  gpus: [{gpu}]
"""
FP8_WAY = re.compile(
    r"to unblock: kv_cache_precision: fp8 \(the engine's --kv-cache-dtype; a token's KV in half the bytes\) fits "
    r"TP1 PP1 on (\S+): ([\d,]+) KV tokens a replica"
)


def _write(tmp_path: Path, *, kv: str = "bf16", engine: str = "vllm", context: int = 32768, gpu: str = "l4-24gb") -> str:
    path = tmp_path / f"w-{kv}-{engine}-{context}-{gpu}.yaml"
    path.write_text(WORKLOAD.format(kv=kv, engine=engine, context=context, gpu=gpu))
    return str(path)


def _refusal(path: str) -> str:
    with pytest.raises(InfeasibleError) as caught:
        plan_workload(load_workload(path))
    return str(caught.value)


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_the_fp8_cache_is_said_with_the_tokens_the_engine_holds(tmp_path: Path, engine: str) -> None:
    found = FP8_WAY.search(_refusal(_write(tmp_path, engine=engine)))
    assert found, "no FP8 KV way in the refusal"
    assert found.group(1) == "l4-24gb"
    plan = plan_workload(load_workload(_write(tmp_path, kv="fp8", engine=engine)))
    (dep,) = plan.deployments
    assert f"{dep.details['kv_cache_tokens_per_replica']:,}" == found.group(2)


def test_not_said_where_the_fp8_cache_does_not_fit_either(tmp_path: Path) -> None:
    message = _refusal(_write(tmp_path, context=131072))
    assert "needs 33.1 GiB per GPU" in message
    assert "kv_cache_precision: fp8" not in message


def test_not_said_on_a_gpu_without_fp8(tmp_path: Path) -> None:
    message = _refusal(_write(tmp_path, gpu="a10-24gb"))
    assert "kv_cache_precision: fp8" not in message


def _estimate(context: int, kv_precision: str | None = None) -> dict[str, Any]:
    from generator.calculator.estimate import EstimateRequest, estimate

    req = EstimateRequest(
        model="meta-llama/Llama-3.1-8B-Instruct", gpu="rtx-4090-24gb", context_tokens=context, kv_precision=kv_precision
    )
    return estimate(req)


def test_the_estimate_names_the_fp8_cache_that_starts_vllm() -> None:
    """A 40,000-token request on an RTX 4090: 4.88 GiB of 16-bit KV against 4.19 GiB left; FP8 starts it."""
    log = _estimate(40000)["capacity"]["vllm_log"]
    assert log["starts"] is False
    fp8 = _estimate(40000, kv_precision="fp8")["capacity"]
    assert fp8["vllm_log"]["starts"] is True
    assert log["fp8_kv_starts"] == {"kv_cache_tokens": fp8["kv_cache_tokens"], "kv_cache_bytes": fp8["kv_cache_bytes"]}


def test_the_estimate_says_it_in_its_remedy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.helpers import call_cli

    call_cli(tmp_path, ("estimate", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "rtx-4090-24gb", "--context", "40000"))
    out = capsys.readouterr().out
    tokens = _estimate(40000, kv_precision="fp8")["capacity"]["kv_cache_tokens"]
    # newuser107's larger --gpu-memory-utilization follows the FP8 cache, before the shorter context
    higher = _estimate(40000)["capacity"]["vllm_log"]["utilization_starts"]
    assert (
        "4.19 GiB is available; --kv-precision fp8 (vLLM's --kv-cache-dtype fp8, a token's KV in half the bytes: it "
        f"starts, {tokens:,} KV tokens a replica), --gpu-memory-utilization {higher['gpu_memory_utilization']:g} (it "
        f"starts, {higher['kv_cache_tokens']:,} KV tokens a replica, where nothing else holds the GPUs' memory), lower "
        "--context"
    ) in out


def test_the_estimate_does_not_say_it_where_fp8_does_not_start_it_either() -> None:
    assert "fp8_kv_starts" not in _estimate(131072)["capacity"]["vllm_log"]
