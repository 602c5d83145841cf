"""AMD Instinct records: the memory the runtime sees (newuser21 items 5 and 2).

AMD's ROCm GPU specification table (column "VRAM (GiB)") gives MI300X 192 and MI325X 256; rocm-smi reports the
MI300X's as 206,158,430,208 B = 192 GiB, so the MI325X is read as 256 GiB = 274,877,906,944 B, not 256e9 B.

An MI250X package is two GPUs to ROCm and vLLM (one per GCD): the record is one GCD, rocm-smi's 68,702,699,520 B,
half the package's 383 TFLOPS and 3.28 TB/s (110 of its 220 compute units, ROCm's spec table), and the 400 GB/s
bidirectional Infinity Fabric between the two GCDs of a package (ROCm's MI250 microarchitecture page).
"""

from __future__ import annotations

import pytest

from generator import catalog
from tests.helpers import estimate_json


@pytest.mark.parametrize(
    ("gpu_id", "memory_bytes"),
    [
        pytest.param("mi300x-192gb", 206_158_430_208, id="mi300x-rocm-smi"),
        pytest.param("mi325x-256gb", 274_877_906_944, id="mi325x-rocm-spec-table-256-gib"),
        pytest.param("mi250x-128gb", 68_702_699_520, id="mi250x-one-gcd-rocm-smi"),
    ],
)
def test_memory_the_runtime_sees(gpu_id: str, memory_bytes: int) -> None:
    assert catalog.find_gpu(gpu_id).memory_bytes == memory_bytes


def test_mi325x_usable_memory_is_sourced() -> None:
    gpu = catalog.find_gpu("mi325x-256gb")
    assert gpu.memory_usable_mib == 262_144  # 256 GiB
    assert "memory_usable_mib" not in gpu.unsourced_fields


def test_gpt_oss_120b_kv_pool_on_mi325x_gains_the_extra_64_gib() -> None:
    """Same model, same engine overheads: the MI325X's pool exceeds the MI300X's by 90 % of the 64 GiB it adds."""
    args = ("openai/gpt-oss-120b", "--context", "131072", "--gpu")
    mi325x = estimate_json(*args, "mi325x-256gb")["capacity"]
    mi300x = estimate_json(*args, "mi300x-192gb")["capacity"]
    assert mi325x["usable_bytes"] == 247_390_116_249  # floor(274,877,906,944 x 0.9)
    assert mi300x["usable_bytes"] == 185_542_587_187  # floor(206,158,430,208 x 0.9)
    assert mi325x["kv_cache_bytes"] - mi300x["kv_cache_bytes"] == 61_847_529_062  # the usable difference


def test_an_mi250x_record_is_one_gcd() -> None:
    gcd = catalog.find_gpu("mi250x-128gb")
    assert gcd.memory_usable_mib == 65_520
    assert gcd.memory_bandwidth_gb_per_s == 1640  # 3,280 / 2
    assert {k: gcd.dense_tflops[k] for k in ("bf16", "fp16", "int8", "fp32", "fp8")} == {
        "bf16": 191.5,  # 383 / 2
        "fp16": 191.5,
        "int8": 191.5,
        "fp32": 23.95,  # 47.9 / 2
        "fp8": None,
    }
    assert (gcd.interconnect_gb_per_s_bidir, gcd.nvlink_domain_gpus) == (400, 2)
    assert gcd.tdp_w == 280  # 560 / 2, marked unsourced
    assert "tdp_w" in gcd.unsourced_fields


def test_gemma_2_27b_on_mi250x_gets_one_gcd_of_memory() -> None:
    """A TP1 replica is one GCD: 90 % of 68,702,699,520 B, not of the package's 137,405,399,040 B."""
    capacity = estimate_json("google/gemma-2-27b-it", "--gpu", "mi250x-128gb", "--context", "8192")["capacity"]
    assert capacity["gpu_memory_bytes"] == 68_702_699_520
    assert capacity["usable_bytes"] == 61_832_429_568  # floor(68,702,699,520 x 0.9)
