"""newuser105: a university lab's 4 x A100 PCIe 40GB server, sized at the memory CUDA gives the card.

The A100 PCIe 40GB was the one A100 without CUDA's total in the catalog, so it was sized at nvidia-smi's 40,960 MiB
(40.00 GiB) where its SXM4 sibling gets 40,339 and the card itself reports 40,377 MiB to PyTorch
(https://github.com/WangYangfan/yolov8/blob/main/README.md). A LoRA of Qwen2.5-32B at 16,384 tokens under axolotl +
Liger over the four cards (ZeRO-3) needs 37.56 GiB a GPU: it was said to fit in the 38.00 GiB usable, and is 0.10 GiB
over the 37.46 GiB that the card's real total leaves at the 5% margin.
"""

from __future__ import annotations

from generator import catalog
from generator.units import MIB
from tests.helpers import estimate_json

_QWEN_16K = ("Qwen/Qwen2.5-32B", "--train", "lora", "--framework", "axolotl+liger", "--gpus", "4", "--zero", "3",
             "--gpu", "a100-pcie-40gb")  # fmt: skip


def test_the_pcie_card_is_sized_at_cudas_total_as_the_sxm4_card_is() -> None:
    pcie, sxm = catalog.gpus()["a100-pcie-40gb"], catalog.gpus()["a100-sxm4-40gb"]
    assert pcie.memory_bytes == 40_377 * MIB
    # one GA100 with 40 GB of HBM2 and ECC: the two parts' CUDA totals are within 0.1 GiB, not 0.6 apart
    assert abs(pcie.memory_bytes - sxm.memory_bytes) < 100 * MIB


def test_a_32b_lora_at_16k_tokens_does_not_fit_four_pcie_cards() -> None:
    data = estimate_json(*_QWEN_16K, "--seq-len", "16384")
    total = data["memory"]["per_gpu"]["total"]
    assert data["capacity"]["gpu_memory_bytes"] == 40_377 * MIB
    assert data["capacity"]["usable_bytes"] < total < 38 * 2**30  # was "fits" under the 38.00 GiB of 40,960 MiB
    assert data["capacity"]["fits"] is False


def test_the_longest_sequence_on_the_pcie_cards_is_under_16k() -> None:
    longest = estimate_json(*_QWEN_16K, "--max-seq-len")["training"]["max_sequence_length"]
    assert 16_000 < longest < 16_384  # 16,814 at nvidia-smi's total
