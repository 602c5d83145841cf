"""What an unknown catalog id is told (newuser30 item 10): the ids of the model typed, or that the catalog has none.

``h100``, the likeliest first try, got no "did you mean"; ``mi355x`` was offered ``mi325x-256gb`` and ``rtx-4080-16gb``
``rtx-a4000-16gb``, ``rtx-4090-24gb``, ``t4-16gb``: other products a user following the hint would plan with.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import catalog
from generator.errors import UnknownIdError
from tests.helpers import VALID, call_cli, run_estimate

NO_GPU = "; no GPU of that model is in the catalog (51 GPUs: `specgen catalog gpus` lists them)"
NO_PLATFORM = "; no platform of that model is in the catalog (104 platforms: `specgen catalog platforms` lists them)"


def _mean(*ids: str, more: int = 0) -> str:
    return f"; did you mean {', '.join(repr(i) for i in ids)}{f' (or {more} more)' if more else ''}?"


H100 = ("h100-nvl-94gb", "h100-pcie-80gb", "h100-sxm5-80gb")
PRO_6000 = ("rtx-pro-6000-blackwell-96gb", "rtx-pro-6000-max-q-96gb", "rtx-pro-6000-ws-96gb")


@pytest.mark.parametrize(
    ("typed", "hint"),
    [
        # ids that start with what was typed come first
        pytest.param("h100", _mean(*H100), id="h100"),
        pytest.param("H100", _mean(*H100), id="h100-upper-case"),
        pytest.param("h10", _mean(*H100), id="h10-begins-h100"),
        pytest.param("a100", _mean("a100-pcie-40gb", "a100-pcie-80gb", "a100-sxm4-40gb", "a100-sxm4-80gb"), id="a100"),
        pytest.param("v100", _mean("v100-pcie-16gb", "v100-sxm2-32gb"), id="v100"),
        pytest.param("b200", _mean("b200-sxm-180gb"), id="b200-not-gb200"),
        pytest.param("h200", _mean("h200-nvl-141gb", "h200-sxm-141gb"), id="h200-not-gh200-nor-h20"),
        pytest.param("t4", _mean("t4-16gb"), id="t4"),
        # a whole part typed: that model alone, not those whose part it begins (L4 is no L40, A10 no A100)
        pytest.param("l4", _mean("l4-24gb"), id="l4-not-l40"),
        pytest.param("a10", _mean("a10-24gb", "a10g-24gb"), id="a10-not-a100"),
        pytest.param("h20", _mean("h20-96gb"), id="h20-not-h200"),
        pytest.param("mi300", _mean("mi300x-192gb"), id="mi300-begins-mi300x"),
        pytest.param("rtx4090", _mean("rtx-4090-24gb"), id="rtx4090-no-dash"),
        pytest.param(
            "rtx",
            _mean(
                "rtx-3060-12gb",
                "rtx-3090-24gb",
                "rtx-3090-ti-24gb",
                "rtx-4060-ti-16gb",
                "rtx-4070-12gb",
                "rtx-4070-ti-super-16gb",
                more=12,
            ),
            id="rtx-many",
        ),
        # what was kept: the RTX PRO 6000 variants, a typo in the size
        pytest.param("rtx-pro-6000", _mean(*PRO_6000, "rtx-6000-ada-48gb"), id="rtx-pro-6000"),
        pytest.param(
            "rtx-pro-6000-ws-96b",
            _mean("rtx-pro-6000-ws-96gb", "rtx-pro-6000-max-q-96gb", "rtx-pro-6000-blackwell-96gb"),
            id="size-typo",
        ),
        pytest.param("l40-48gbx", _mean("l40-48gb"), id="l40-size-typo"),
        pytest.param("l40s-48g", _mean("l40s-48gb"), id="l40s-48g"),
        # the model part anywhere, parts shared first
        pytest.param("h100-80gb", _mean("h100-pcie-80gb", "h100-sxm5-80gb", "h100-nvl-94gb"), id="h100-80gb"),
        pytest.param("h100-sxm", _mean("h100-sxm5-80gb", "h100-nvl-94gb", "h100-pcie-80gb"), id="h100-sxm"),
        pytest.param("a100-80gb-pcie", _mean("a100-pcie-80gb", "a100-pcie-40gb", "a100-sxm4-80gb"), id="parts-reordered"),
        pytest.param("nvidia-h100", _mean(*H100), id="vendor-first"),
        pytest.param("4090", _mean("rtx-4090-24gb"), id="number-alone"),
        pytest.param("nvidia-rtx-a6000", _mean("rtx-a6000-48gb"), id="a6000"),
        pytest.param("rtx-a600-48gb", _mean("rtx-a6000-48gb"), id="a600-begins-a6000"),
        # slips: two characters swapped, one doubled
        pytest.param("rtx-4900-24gb", _mean("rtx-4090-24gb"), id="swapped"),
        pytest.param("h1000", _mean("h100-pcie-80gb", "h100-sxm5-80gb", "h100-nvl-94gb"), id="doubled"),
        # another product: a digit changed, a letter added, is not a slip
        pytest.param("mi355x", NO_GPU, id="mi355x-is-no-mi325x"),
        pytest.param("rtx-4080-16gb", NO_GPU, id="rtx-4080"),  # the RTX 4080 SUPER is another card
        pytest.param("rtx-4070-super-12gb", NO_GPU, id="rtx-4070-super-is-no-4070"),
        pytest.param("rtx-4080-super", _mean("rtx-4080-super-16gb"), id="rtx-4080-super"),
        pytest.param("4070-ti-super", _mean("rtx-4070-ti-super-16gb"), id="rtx-4070-ti-super-by-its-words"),
        pytest.param("rtx-3080-10gb", NO_GPU, id="rtx-3080"),
        pytest.param("rtx-4090d", NO_GPU, id="rtx-4090d"),
        pytest.param("rtx-a4500-20gb", NO_GPU, id="rtx-a4500"),
        # no model part: difflib's closest, as before
        pytest.param("gaudi", _mean("gaudi3-128gb"), id="gaudi"),
        pytest.param("blackwell", _mean("rtx-pro-6000-blackwell-96gb"), id="a-word"),
    ],
)
def test_an_unknown_gpu_is_told_the_ids_of_its_model(typed: str, hint: str) -> None:
    assert catalog.unknown_id_message("GPU", typed, catalog.gpus()) == f"unknown GPU {typed!r}{hint}"
    with pytest.raises(UnknownIdError) as caught:  # estimate --gpu, hardware.fixed.gpu
        catalog.find_gpu(typed)
    assert str(caught.value) == f"unknown GPU {typed!r}{hint}"


@pytest.mark.parametrize(
    ("typed", "hint"),
    [
        pytest.param("aws-p5", _mean("aws-p5-48xlarge", "aws-p5-4xlarge", "aws-p5e-48xlarge", "aws-p5en-48xlarge"), id="aws-p5"),
        pytest.param("p5.48xlarge", _mean("aws-p5-48xlarge", "aws-p5-4xlarge"), id="aws-own-name"),
        pytest.param("dgx", _mean("dgx-a100", "dgx-b200", "dgx-b300", "dgx-h100", "dgx-h200"), id="dgx"),
        pytest.param("xe9680", _mean("dell-xe9680-gaudi3", "dell-xe9680-mi300x", "dell-xe9680-hgx-h100-h200"), id="xe9680"),
        pytest.param("Dell-R760", _mean("dell-r760", "dell-r760xa"), id="case"),
        pytest.param("dgx-h1000", _mean("dgx-h100", "dell-xe9680-hgx-h100-h200", "azure-standard-nc40ads-h100-v5"), id="doubled"),
        pytest.param(
            "Standard_ND96isr_H100_v5",
            _mean("azure-standard-nd96isr-h100-v5", "azure-standard-nd96isr-h200-v5", "azure-standard-nd96isr-mi300x-v5"),
            id="azure-own-name",
        ),
        pytest.param("a3-highgpu-8g", _mean("gcp-a3-highgpu-8g", "gcp-a3-highgpu-1g", "gcp-a3-highgpu-2g"), id="gcp-own-name"),
        pytest.param("gcp-a3-ultragpu-9g", _mean("gcp-a3-ultragpu-8g", "gcp-a3-megagpu-8g", "gcp-a3-highgpu-1g"), id="typo"),
        pytest.param("am5-tower", _mean("am5-desktop-tower"), id="am5"),
        pytest.param(
            "supermicro", _mean("supermicro-ars-111gl-nhr", "supermicro-as-4124go-nart", "supermicro-as-8125gs-tnhr"), id="vendor"
        ),
        pytest.param("dell-r750", NO_PLATFORM, id="another-server"),
    ],
)
def test_an_unknown_platform_is_told_the_ids_of_its_model(typed: str, hint: str) -> None:
    assert catalog.unknown_id_message("platform", typed, catalog.platforms()) == f"unknown platform {typed!r}{hint}"


@pytest.mark.parametrize(
    ("what", "typed", "hint"),
    [
        pytest.param("CPU", "ryzen-7950x", _mean("ryzen-9-7950x"), id="cpu-series-left-out"),
        pytest.param("CPU", "xeon-8480", _mean("xeon-platinum-8480-plus"), id="cpu-xeon"),
        pytest.param(
            "CPU",
            "epyc-9554",
            "; no CPU of that model is in the catalog (27 CPUs: `specgen catalog cpus` lists them)",
            id="cpu-another",
        ),
        pytest.param("NIC", "connectx-7-400g", _mean("connectx-7-400g-ib", "connectx-7-400gbe"), id="nic"),
    ],
)
def test_an_unknown_cpu_or_nic(what: str, typed: str, hint: str) -> None:
    table = catalog.cpus() if what == "CPU" else catalog.nics()
    assert catalog.unknown_id_message(what, typed, table) == f"unknown {what} {typed!r}{hint}"


def test_a_workload_and_estimate_say_it_at_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """newuser30's ``hardware.gpus: [h100, ..., mi355x]``: each at its line and column, told as above."""
    (tmp_path / "gpu.yaml").write_text(VALID.replace("[l40s-48gb]", "[h100, mi355x]"))
    assert call_cli(tmp_path, ("validate", "gpu.yaml")) == 1
    err = capsys.readouterr().err
    assert f"gpu.yaml:10:10: hardware.gpus[0]: unknown GPU 'h100'{_mean(*H100)}" in err
    assert f"gpu.yaml:10:16: hardware.gpus[1]: unknown GPU 'mi355x'{NO_GPU}" in err
    assert NO_GPU.startswith(f"; no GPU of that model is in the catalog ({len(catalog.gpus())} GPUs")
    assert NO_PLATFORM.startswith(f"; no platform of that model is in the catalog ({len(catalog.platforms())} platforms")
    code, _ = run_estimate("meta-llama/Llama-3.1-8B", "--gpu", "rtx-4080-16gb")
    assert code == 1 and f"unknown GPU 'rtx-4080-16gb'{NO_GPU}" in capsys.readouterr().err
