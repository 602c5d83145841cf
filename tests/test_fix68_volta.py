"""fix68: what ``specgen estimate`` says of Volta and Turing agrees with what the planner does there.

Items from an earlier trial on owned V100 32GB SXM2, A100 PCIe and RTX 6000 Ada servers.
"""

from __future__ import annotations

import pytest

from generator.calculator.estimate import EstimateRequest, estimate

LLAMA_8B = "meta-llama/Llama-3.1-8B"


@pytest.mark.parametrize(("gpu", "launched"), [("v100-sxm2-32gb", False), ("t4-16gb", False), ("a100-pcie-80gb", True)])
def test_a_training_estimate_says_flash_attention_as_the_plan_launches_it(gpu: str, launched: bool) -> None:
    """Item 4: ``estimate --train`` on a V100 or T4 said flash_attention: true, where the plan launches it false."""
    result = estimate(EstimateRequest(model=LLAMA_8B, train="lora", gpu=gpu))
    assert result["training"]["flash_attention"] is launched
    said = [n for n in result["notes"] if n.startswith("FlashAttention-2 runs on Ampere, Ada and Hopper")]
    assert bool(said) is not launched


def test_no_flash_attention_asked_stays_off_everywhere() -> None:
    result = estimate(EstimateRequest(model=LLAMA_8B, train="lora", gpu="a100-pcie-80gb", flash_attention=False))
    assert result["training"]["flash_attention"] is False
