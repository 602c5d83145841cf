"""AMD Instinct records: the memory the runtime sees (newuser21 item 5).

AMD's ROCm GPU specification table (column "VRAM (GiB)") gives MI300X 192 and MI325X 256; rocm-smi reports the
MI300X's as 206,158,430,208 B = 192 GiB, so the MI325X is read as 256 GiB = 274,877,906,944 B, not 256e9 B.
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
