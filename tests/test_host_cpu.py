"""The serving host's CPU scales the per-sequence host time: sourced figures, the reference, the fallback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator import catalog
from generator.calculator.estimate import EstimateRequest, estimate
from generator.catalog import find_gpu
from generator.catalog.host_cpu import REFERENCE_CPU_ID, host_time_scale, platform_host_time_scale
from generator.errors import InputError
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.performance import accelerator_for, decode_step
from generator.sizing.precision import weight_format
from generator.sizing.weights import Parallelism, size_weights

#: TransformerEngine issue #2053 (2025-08-11): CPU time of one torch.nn.Linear forward (BF16, hidden 2048,
#: 8192 tokens) on GB200 (Grace) and on an H100 DGX (Xeon Platinum 8480C), microseconds.
GRACE_US, XEON_8480C_US = 37.08, 13.48


def test_the_catalog_holds_the_published_figures_with_their_source() -> None:
    cpus = catalog.cpus()
    assert cpus["nvidia-grace"].host_dispatch_us == GRACE_US
    assert cpus[REFERENCE_CPU_ID].host_dispatch_us == XEON_8480C_US


def test_every_host_figure_comes_from_one_benchmark() -> None:
    records = json.loads((Path(catalog.__file__).parent / "cpus.json").read_text())["cpus"]
    sources = {r["host_dispatch_source"]["url"] for r in records if "host_dispatch_us" in r}
    assert sources == {"https://github.com/NVIDIA/TransformerEngine/issues/2053"}


@pytest.mark.parametrize(
    ("cpu_id", "scale"),
    [
        (REFERENCE_CPU_ID, 1.0),  # the host the constant was fitted on
        ("nvidia-grace", GRACE_US / XEON_8480C_US),  # 2.75x the reference's host time
        ("xeon-platinum-8570", 1.0),  # DGX B200: not measured by that benchmark, taken at the reference's speed
        (None, 1.0),  # no host named
    ],
)
def test_host_time_scale_is_the_ratio_of_the_figures(cpu_id: str | None, scale: float) -> None:
    assert host_time_scale(cpu_id) == pytest.approx(scale)


def test_platforms_map_to_their_cpu() -> None:
    platforms = catalog.platforms()
    assert platform_host_time_scale(platforms["gb200-nvl72"]) == pytest.approx(GRACE_US / XEON_8480C_US)
    assert platform_host_time_scale(platforms["dgx-b200"]) == 1.0
    assert platform_host_time_scale(None) == 1.0


def test_a_slower_host_adds_its_share_of_per_sequence_time() -> None:
    arch = parse_architecture(catalog.find_model("meta-llama/Llama-3.1-8B-Instruct").config)
    weights = size_weights(arch, weight_format("fp8"))
    serial = Constants(host_overlap_fraction=0.0)
    gpu = find_gpu("h100-sxm5-80gb")
    steps = [
        decode_step(arch, weights, 8, Parallelism(), accelerator_for(gpu, "fp8", 1, scale), 512, 1024, serial).seconds
        for scale in (1.0, 2.0)
    ]
    assert steps[1] - steps[0] == pytest.approx(512 * serial.decode_overhead_per_sequence_s)


def test_estimate_takes_the_host_cpu_and_refuses_an_unknown_one() -> None:
    base = EstimateRequest(model="Qwen/Qwen3-30B-A3B", precision="nvfp4", gpu="gb200-186gb", input_tokens=128, output_tokens=128)
    x86 = estimate(base)["throughput"]["max_output_tokens_per_s"]
    grace = estimate(base._replace(host_cpu="nvidia-grace"))["throughput"]["max_output_tokens_per_s"]
    assert grace < x86
    with pytest.raises(InputError, match="unknown host CPU"):
        estimate(base._replace(host_cpu="no-such-cpu"))
