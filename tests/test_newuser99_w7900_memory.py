"""newuser99 item 4: the Radeon PRO W7900 was planned at the decimal 48 GB (44.70 GiB) while rocm-smi reads 49,136 MiB
(47.98 GiB) on a 48 GB gfx1100 card: 'VRAM Total Memory (B): 51522830336' (search-index file ids 62757695864, a Radeon
Pro W7900D; 58612314090 and 66434952461, 96-CU gfx1100 cards of 48 GB; 53723446860, eight W7900D at 49136MiB each).
``specgen detect`` already matched a W7900 reading 49,136 MiB (tests/test_llama_cpp_amd_scoreboard.py), then planned it
3.3 GiB smaller: Llama 3.3 70B Q4_K_M at 32,768 tokens was said not to fit (7 of 80 layers to RAM). Its GDDR6 is
binary-sized like the RX 7900 XTX's (24,560 MiB: 24 GiB less 16 MiB; the W7900: 48 GiB less 16 MiB).
"""

from __future__ import annotations

from generator import catalog
from generator.units import GIB

ROCM_SMI_W7900_BYTES = 51_522_830_336  # 49,136 MiB


def test_w7900_memory_is_rocm_smi_total() -> None:
    gpu = catalog.find_gpu("radeon-pro-w7900-48gb")
    assert gpu.memory_bytes == ROCM_SMI_W7900_BYTES
    assert round(gpu.memory_bytes / GIB, 2) == 47.98


def test_w7900_holds_twice_the_xtx_less_the_same_reserve() -> None:
    xtx = catalog.find_gpu("rx-7900-xtx-24gb")
    w7900 = catalog.find_gpu("radeon-pro-w7900-48gb")
    assert 48 * GIB - w7900.memory_bytes == 24 * GIB - xtx.memory_bytes == 16 * 2**20
