"""The 12-16 GB GeForce cards of home offload rigs (newuser38 item 6): in the catalog, with rates of their own.

``--gpu rtx-4070-12gb`` was an unknown GPU: the home builds every gpt-oss-120b ``--n-cpu-moe`` post is about could not
be stated, and stand-ins (an RTX A4000) were planned instead.
"""

from __future__ import annotations

import pytest

from generator import catalog
from generator.calculator.detect import GpuReading, match_gpu
from tests.helpers import estimate_json

#: (catalog id, SMs, boost GHz, memory GB, GB/s, TDP W, PCIe gen, lanes, nvidia-smi MiB). SMs and boost clocks: CUDA
#: cores / 128 and the clocks of the pages each record cites (pcpartdb, thefpsreview, svethardware.cz, brojogopalsapui;
#: the 5070 Ti's 2.452 GHz unsourced); the rest as the records cite them (nvidia-smi tables for MiB and power caps).
HOME_GPUS = [
    ("rtx-3060-12gb", 28, 1.777, 12, 360, 170, 4, 16, 12288),
    ("rtx-4060-ti-16gb", 34, 2.535, 16, 288, 165, 4, 8, 16380),
    ("rtx-4070-12gb", 46, 2.475, 12, 504, 200, 4, 16, 12282),
    ("rtx-4070-ti-super-16gb", 66, 2.61, 16, 672, 285, 4, 16, 16376),
    ("rtx-4080-super-16gb", 80, 2.55, 16, 736, 320, 4, 16, 16376),
    ("rtx-5070-ti-16gb", 70, 2.452, 16, 896, 300, 5, 16, 16303),
    ("rtx-5080-16gb", 84, 2.617, 16, 960, 360, 5, 16, 16303),
]
#: The measured flagship of each architecture, whose sourced rates give the per-SM rate: (id, SMs, boost GHz).
FLAGSHIP = {"ampere": ("rtx-3090-24gb", 82, 1.695), "ada-lovelace": ("rtx-4090-24gb", 128, 2.52),
            "blackwell": ("rtx-5090-32gb", 170, 2.407)}  # fmt: skip


@pytest.mark.parametrize(("gpu_id", "sms", "ghz", "gb", "gbps", "watts", "gen", "lanes", "mib"), HOME_GPUS)
def test_a_home_card_is_in_the_catalog(
    gpu_id: str, sms: int, ghz: float, gb: int, gbps: int, watts: int, gen: int, lanes: int, mib: int
) -> None:
    gpu = catalog.gpus()[gpu_id]
    assert (gpu.memory_gb, gpu.memory_bandwidth_gb_per_s, gpu.tdp_w, gpu.memory_usable_mib) == (gb, gbps, watts, mib)
    assert (gpu.pcie_gen, gpu.pcie_lanes) == (gen, lanes)
    assert gpu.consumer and gpu.vendor == "nvidia" and gpu.fast_link_gb_per_s == 0  # no NVLink: the GeForce licence
    # finding of a racked pool and the PCIe-only layout follow from these


@pytest.mark.parametrize(("gpu_id", "sms", "ghz"), [row[:3] for row in HOME_GPUS])
def test_tensor_rates_are_the_flagships_per_sm_clock_rate(gpu_id: str, sms: int, ghz: float) -> None:
    """Dense, FP32-accumulate rates: this card's SMs x clock at its architecture flagship's rate per SM a clock (the
    4090's 165.2 BF16 over 128 SMs at 2.52 GHz); never a sparse figure (an 'AI TOPS' or '101 tensor TFLOPS')."""
    gpu = catalog.gpus()[gpu_id]
    flagship_id, flagship_sms, flagship_ghz = FLAGSHIP[gpu.architecture]
    flagship = catalog.gpus()[flagship_id]
    for precision in ("bf16", "fp16", "fp8", "int8", "fp4", "tf32"):
        big = flagship.dense_tflops[precision]
        if big is None:
            assert gpu.dense_tflops[precision] is None, (gpu_id, precision)
            continue
        expected = big / (flagship_sms * flagship_ghz) * sms * ghz
        assert gpu.dense_tflops[precision] == pytest.approx(expected, rel=0.005), (gpu_id, precision)
    assert gpu.dense_tflops["fp32"] == pytest.approx(sms * 128 * 2 * ghz / 1000, rel=0.005)


def test_gpt_oss_120b_on_a_4070_and_64_gib_plans() -> None:
    """The item's own run: an RTX 4070 12 GB with 64 GiB of DDR5-6000 (its 12,282 MiB, the experts in RAM)."""
    data = estimate_json("openai/gpt-oss-120b", "--gpu", "rtx-4070-12gb", "--ram-gib", "64", "--memory-channels", "2",
                         "--ddr-mt-per-s", "6000", "--context", "24576")  # fmt: skip
    assert data["machine"]["gpu"] == "rtx-4070-12gb"
    assert data["offload"]["precision"] == "mxfp4_moe"
    assert data["memory"]["per_gpu"]["total"] <= 12282 * 2**20


@pytest.mark.parametrize(
    ("name", "mib", "expected"),
    [
        pytest.param("NVIDIA GeForce RTX 4070", 12282, "rtx-4070-12gb", id="4070"),
        pytest.param("NVIDIA GeForce RTX 4070 SUPER", 12282, None, id="4070-super-is-no-4070"),
        pytest.param("NVIDIA GeForce RTX 4070 Ti", 12282, None, id="4070-ti-is-no-4070"),
        pytest.param("NVIDIA GeForce RTX 4070 Ti SUPER", 16376, "rtx-4070-ti-super-16gb", id="4070-ti-super"),
        pytest.param("NVIDIA GeForce RTX 4080", 16376, None, id="4080-is-no-4080-super"),
        pytest.param("NVIDIA GeForce RTX 4080 SUPER", 16376, "rtx-4080-super-16gb", id="4080-super"),
        pytest.param("NVIDIA GeForce RTX 4060 Ti", 16380, "rtx-4060-ti-16gb", id="4060-ti-16gb"),
        pytest.param("NVIDIA GeForce RTX 4060 Ti", 8188, None, id="4060-ti-8gb-is-another-card"),
        pytest.param("NVIDIA GeForce RTX 3060", 12288, "rtx-3060-12gb", id="3060"),
        pytest.param("NVIDIA GeForce RTX 5070 Ti", 16303, "rtx-5070-ti-16gb", id="5070-ti"),
        pytest.param("NVIDIA GeForce RTX 5070", 12227, None, id="5070-is-no-5070-ti"),
        pytest.param("NVIDIA GeForce RTX 5080", 16303, "rtx-5080-16gb", id="5080"),
        pytest.param("NVIDIA GeForce RTX 3090 Ti", 24564, "rtx-3090-ti-24gb", id="3090-ti"),
        pytest.param("NVIDIA GeForce RTX 3090", 24576, "rtx-3090-24gb", id="3090"),
    ],
)
def test_detect_tells_the_variants_of_a_model_number_apart(name: str, mib: int, expected: str | None) -> None:
    """nvidia-smi's full name: a SUPER or Ti read is not the plain card listed (and the other way round)."""
    assert match_gpu(GpuReading(name, mib, 4, 16))[0] == expected
