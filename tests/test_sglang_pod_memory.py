"""An SGLang service is started with the memory fraction its pool was sized with, and on a shared GPU with its pool's
tokens as a cap (fuzz33 items 2, 3 and 4).

Facts: SGLang's ``--mem-fraction-static`` is "the fraction of the memory used for static allocation (model weights and
KV cache memory pool)" (https://docs.sglang.io/advanced_features/server_arguments.html), taken of the memory free when
the engine starts (``min_per_gpu_memory = get_available_gpu_memory(...)`` in ``model_runner``); ``--max-total-tokens``
caps the pool (``min(profiled, max_total_tokens)``). vLLM's ``--gpu-memory-utilization`` is of the GPU's total memory.
So a time-sliced SGLang pod is given the share's fraction and the planned pool as a cap, not vLLM's split fraction.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.api import render_file
from generator.catalog import gpus
from generator.sizing.sglang_kv import sglang_default_mem_fraction_static
from tests.conftest import REPO
from tests.helpers import ansible_reader, estimate_json, run_estimate

EXAMPLE = REPO / "examples" / "small-models-gke-sharing.yaml"
ENGINE = "      precision: bf16\n"
SHARING = "  gpu_sharing:\n    strategy: mig\n    mig_profile: 3g.40gb\n"


def _render(tmp_path: Path, engine: str, sharing: str | None, extra: str = "") -> tuple[dict[str, Any], dict[str, Any]]:
    """The example with ``engine``, ``sharing`` (None: none) and ``extra`` inference lines: its service's engine vars
    and its spec.json deployment."""
    text = EXAMPLE.read_text(encoding="utf-8")
    assert ENGINE in text and SHARING in text
    text = text.replace(ENGINE, ENGINE + f"      engine: {engine}\n" + extra).replace(SHARING, sharing or "")
    path = tmp_path / "w.yaml"
    path.write_text(text, encoding="utf-8")
    files = render_file(str(path))
    (vars_path,) = [p for p in files if p.startswith("ansible/group_vars/")]
    (service,) = ansible_reader().load(files[vars_path])["specgen_deployments"]
    (deployment,) = json.loads(files["spec.json"])["plan"]["deployments"]
    return dict(service["engine"]), deployment


TIME_SLICED = "  gpu_sharing:\n    strategy: time-slicing\n    replicas_per_gpu: 2\n"
MPS = "  gpu_sharing:\n    strategy: mps\n    replicas_per_gpu: 2\n"


@pytest.mark.parametrize("sharing", [TIME_SLICED, MPS], ids=["time-slicing", "mps"])
def test_a_shared_sglang_pod_gets_its_fraction_and_its_pool_as_a_cap(tmp_path: Path, sharing: str) -> None:
    engine, deployment = _render(tmp_path, "sglang", sharing)
    details = deployment["details"]
    half = gpus()["a100-sxm4-80gb"].memory_bytes // 2
    # SGLang's own default for the share's memory (40 GiB: chunk 4096, 32 graphs, TP1), the fraction the pool is sized at
    assert engine["mem_fraction_static"] == sglang_default_mem_fraction_static(half) == details["mem_fraction_static"]
    assert engine["max_total_tokens"] == details["kv_cache_tokens_per_replica"] > 0
    # a pod that finds the whole GPU free stops at its planned weights and pool: within its share of the memory
    static = details["weights_bytes"] + engine["max_total_tokens"] * details["kv_cache_bytes_per_token"]
    assert static <= half * engine["mem_fraction_static"]


def test_the_fraction_given_is_rendered(tmp_path: Path) -> None:
    engine, deployment = _render(tmp_path, "sglang", None, "      mem_fraction_static: 0.8\n")
    assert engine["mem_fraction_static"] == deployment["details"]["mem_fraction_static"] == 0.8
    assert "max_total_tokens" not in engine  # a whole GPU: the fraction alone gives the pool sized
    assert "gpu_memory_utilization" not in engine


def test_a_whole_gpu_gets_sglangs_default_for_its_memory(tmp_path: Path) -> None:
    engine, _ = _render(tmp_path, "sglang", None)
    assert engine["mem_fraction_static"] == sglang_default_mem_fraction_static(gpus()["a100-sxm4-80gb"].memory_bytes)
    assert "max_total_tokens" not in engine


def test_a_mig_instance_is_its_own_gpu(tmp_path: Path) -> None:
    engine, _ = _render(tmp_path, "sglang", SHARING)
    assert "mem_fraction_static" in engine and "max_total_tokens" not in engine


def test_vllm_keeps_its_own_setting(tmp_path: Path) -> None:
    engine, _ = _render(tmp_path, "vllm", TIME_SLICED)
    assert engine["gpu_memory_utilization"] == 0.45
    assert "mem_fraction_static" not in engine and "max_total_tokens" not in engine


SHARED_SGLANG = ("llama-3.1-8b", "--gpu", "h100-sxm5-80gb", "--share", "2", "--engine", "sglang", "--mem-fraction-static", "0.9")


def test_the_estimate_tells_how_to_start_sglang_in_a_share() -> None:
    data = estimate_json(*SHARED_SGLANG)
    tokens = data["capacity"]["sglang_log"]["max_total_num_tokens"]
    assert data["gpu_share"]["pod_mem_fraction_static"] == 0.9
    assert data["gpu_share"]["pod_max_total_tokens"] == tokens
    code, out = run_estimate(*SHARED_SGLANG)
    assert code == 0
    assert f"start it with --mem-fraction-static 0.9 --max-total-tokens {tokens} " in out
    assert "vLLM" not in out and "--gpu-memory-utilization" not in out


def test_the_estimate_still_tells_vllm_its_split_fraction() -> None:
    code, out = run_estimate("llama-3.1-8b", "--gpu", "h100-sxm5-80gb", "--share", "2")
    assert code == 0
    assert "start vLLM with --gpu-memory-utilization 0.45" in out and "--max-total-tokens" not in out
