"""NVFP4 / FP4 GEMMs at the GPU's own measured FP4 ceiling, read from the catalog (acc142, issue 9).

The B200 measures FP4 at 0.582 of its 9,000 TFLOPS peak (cuBLASLt's FP4 x FP4 GEMM at 8192^3, 5,239 TFLOPS,
https://github.com/deepseek-ai/DeepGEMM/pull/348) against 0.763 of its FP8 peak (stas00/ml-engineering's MAMF,
3,432.5 of 4,500). Before, FP4 had no measurement and took the FP8 share: 9,000 x 0.763 = 6,865. The reference H100
has no FP4 tensor rate, so the FP4 share is expressed over its FP8 one (1,402.6 of 1,979). Figures copied here from
``generator/catalog/gpus.json`` with their sources, so a test fails if the FP8 share were used again.

acc147: the RTX PRO 6000 Server Edition measures NVFP4 at 1,629 of its 2,000 TFLOPS (8192^3,
https://github.com/NVIDIA/cutlass/pull/3272); before, FP4 took its BF16 share (409.42 of 500) over the H100's BF16
share. The Workstation Edition, measured in BF16 alone, keeps that fallback.
"""

import pytest

from generator import catalog
from generator.catalog import REFERENCE_GPU_ID
from generator.catalog.records import narrow_format_rates

H100_FP8_SHARE = 1402.6 / 1979  # stas00 MAMF, the reference GPU's
B200_FP4_SHARE = 5239 / 9000  # cuBLASLt at 8192^3, DeepGEMM PR #348
B200_FP8_SHARE = 3432.5 / 4500  # stas00 MAMF
GB200_FP8_SHARE = 3615.6 / 5000  # stas00 MAMF
B300_FP8_SHARE = 3353.3 / 4500  # stas00 MAMF
RTX_PRO_FP4_SHARE = 1629 / 2000  # NVFP4 at 8192^3, Server Edition, https://github.com/NVIDIA/cutlass/pull/3272
RTX_PRO_WS_BF16_SHARE = 417.98 / 500  # zzc0721/torch-performance-test-data, Workstation Edition
H100_BF16_SHARE = 794.5 / 989


@pytest.mark.parametrize(
    ("gpu_id", "physical", "not_physical"),
    [
        # measured: the catalog's figure itself, not its FP8 share's 9,000 x 0.763 = 6,865
        pytest.param("b200-sxm-180gb", 5239.0, 9000 * B200_FP8_SHARE, id="b200-measured"),
        # the same die (FP4 twice FP8 on both datasheets): its own FP8 share times the B200's FP4-over-FP8 share, 5,518.5,
        # not its FP8 share's 7,231
        pytest.param(
            "gb200-186gb",
            10000 * GB200_FP8_SHARE * B200_FP4_SHARE / B200_FP8_SHARE,
            10000 * GB200_FP8_SHARE,
            id="gb200-sibling",
        ),
        # Blackwell Ultra: FP4 three times FP8 on its datasheet, a datapath the B200's share cannot stand for: FP8's share
        pytest.param("b300-sxm-270gb", 13500 * B300_FP8_SHARE, 13500 * B200_FP4_SHARE, id="b300-fp8-share"),
        # SM120 Server Edition, measured in NVFP4 (acc147): the catalog's figure, not the B200's share
        pytest.param("rtx-pro-6000-blackwell-96gb", 1629.0, 2000 * B200_FP4_SHARE, id="rtx-pro-measured"),
        # SM120 Workstation Edition, measured in BF16 alone: that share
        pytest.param("rtx-pro-6000-ws-96gb", 2000 * RTX_PRO_WS_BF16_SHARE, 2000 * B200_FP4_SHARE, id="rtx-pro-ws-bf16-share"),
    ],
)
def test_fp4_runs_at_the_ceiling_the_catalog_gives(gpu_id: str, physical: float, not_physical: float) -> None:
    gpu = catalog.find_gpu(gpu_id)
    assert gpu.physical_tflops("fp4") == pytest.approx(physical)
    assert gpu.physical_tflops("fp4") != pytest.approx(not_physical, rel=0.01)


@pytest.mark.parametrize(
    ("gpu_id", "sustained"),
    [
        # the rate the efficiencies fitted on the H100's FP8 GEMMs apply to: the FP4 share over the H100's FP8 share
        pytest.param("b200-sxm-180gb", 9000 * B200_FP4_SHARE / H100_FP8_SHARE, id="b200"),
        pytest.param("gb200-186gb", 10000 * GB200_FP8_SHARE * B200_FP4_SHARE / B200_FP8_SHARE / H100_FP8_SHARE, id="gb200"),
        # a measured FP4 share over the reference's FP8 one, whichever GPU (not over the reference's BF16 one: 1,990)
        pytest.param("rtx-pro-6000-blackwell-96gb", 2000 * RTX_PRO_FP4_SHARE / H100_FP8_SHARE, id="rtx-pro"),
        # a BF16 share standing in for FP4 over the reference's BF16 one
        pytest.param("rtx-pro-6000-ws-96gb", 2000 * RTX_PRO_WS_BF16_SHARE / H100_BF16_SHARE, id="rtx-pro-ws"),
    ],
)
def test_the_fp4_share_is_normalised_over_the_reference_share_it_stands_beside(gpu_id: str, sustained: float) -> None:
    gpu = catalog.find_gpu(gpu_id)
    assert gpu.sustained_tflops("fp4") == pytest.approx(sustained)
    # what output says the GPU reaches is the sustained rate times the share it was normalised over
    assert gpu.physical_tflops("fp4") == pytest.approx(sustained * gpu.reference_share("fp4"))


@pytest.mark.parametrize("fp4", [4000.0, 5239.0, 6500.0])
def test_a_measured_fp4_figure_sets_the_rate_and_the_fp8_share_does_not(fp4: float) -> None:
    """The rate follows the catalog's FP4 figure, whatever it is; the FP8 measurement beside it does not move it."""
    raw = catalog.find_gpu("b200-sxm-180gb")._replace(tflops_vs_reference=None)
    reference = catalog.find_gpu(REFERENCE_GPU_ID)
    for fp8 in (3000.0, 3432.5, 4000.0):
        gpu = raw._replace(max_achievable_tflops={"bf16": 1745.0, "fp8": fp8, "fp4": fp4}).relative_to(reference)
        assert gpu.tflops_vs_reference is not None
        assert gpu.tflops_vs_reference["fp4"] == pytest.approx(fp4 / 9000 / H100_FP8_SHARE)
        assert gpu.sustained_tflops("fp4") == pytest.approx(fp4 / H100_FP8_SHARE)


@pytest.mark.parametrize(
    ("own_rates", "own_peaks", "borrowed"),
    [
        # measured in FP8 only, FP4 twice FP8 like the donor's: the donor's FP4-over-FP8 share on its own FP8 share
        pytest.param(
            {"fp8": 3615.6},
            {"fp8": 5000, "fp4": 10000},
            10000 * GB200_FP8_SHARE * B200_FP4_SHARE / B200_FP8_SHARE,
            id="same-datapath",
        ),
        # FP4 three times FP8 (Blackwell Ultra): nothing borrowed
        pytest.param({"fp8": 3353.3}, {"fp8": 4500, "fp4": 13500}, None, id="other-datapath"),
        # its own FP4 measurement stands
        pytest.param({"fp8": 3615.6, "fp4": 6000.0}, {"fp8": 5000, "fp4": 10000}, 6000.0, id="own-measurement"),
        # no FP8 measurement of its own: no share to scale
        pytest.param({"bf16": 1822.0}, {"fp8": 5000, "fp4": 10000}, None, id="no-wider-share"),
    ],
)
def test_a_sibling_lends_its_fp4_over_fp8_share_only_across_the_same_datapath(
    own_rates: dict[str, float], own_peaks: dict[str, float], borrowed: float | None
) -> None:
    b200 = catalog.find_gpu("b200-sxm-180gb")
    gpu = catalog.find_gpu("gb200-186gb")._replace(
        max_achievable_tflops=own_rates, dense_tflops={**catalog.find_gpu("gb200-186gb").dense_tflops, **own_peaks}
    )
    rates = narrow_format_rates(gpu, b200) or {}
    if borrowed is None:
        assert "fp4" not in rates
    else:
        assert rates["fp4"] == pytest.approx(borrowed)
    assert {k: v for k, v in rates.items() if k != "fp4"} == {k: v for k, v in own_rates.items() if k != "fp4"}
