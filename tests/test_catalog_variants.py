"""GH200 and the RTX PRO 6000 Blackwell editions in ``gpus.json``: figures from their datasheets, dense not sparse.

Expected values are the datasheets' as the records cite them: NVIDIA's GH200 datasheet (reproduced in
atineoSE/coding-model-seeks-gpu ``gh200_specs.md``) prints each tensor rate as ``<sparse>* | <dense>``; the RTX PRO 6000
datasheets give FP4 "AI TOPS" with sparsity (Workstation 4000, Max-Q 3511; Server Edition 4 PF) and FP32.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator import catalog
from generator.api import plan_file
from generator.errors import InputError
from generator.planner.tco import purchase_price
from generator.units import GB, MIB
from tests.conftest import REPO
from tests.helpers import estimate_json, run_estimate

GPUS_JSON = REPO / "generator" / "catalog" / "gpus.json"
NEW_IDS = (
    "gh200-96gb",
    "gh200-144gb",
    "rtx-pro-6000-blackwell-96gb",
    "rtx-pro-6000-ws-96gb",
    "rtx-pro-6000-max-q-96gb",
)


def record(gpu_id: str) -> dict[str, Any]:
    """The raw ``gpus.json`` record of ``gpu_id``."""
    found: dict[str, Any] = next(r for r in json.loads(GPUS_JSON.read_text(encoding="utf-8"))["gpus"] if r["id"] == gpu_id)
    return found


GDDR7 = "GDDR7 with ECC"


@pytest.fixture
def unrated_max_q(monkeypatch: pytest.MonkeyPatch) -> str:
    """The Max-Q as a GPU whose tensor rates are unknown: only its published FP4 and FP32 kept (its derived rates
    dropped), the case of any record that leaves bf16 null. Its id, for the tests of that case."""
    gpu = catalog.gpus()["rtx-pro-6000-max-q-96gb"]
    kept = {p: (v if p in ("fp4", "fp32") else None) for p, v in gpu.dense_tflops.items()}
    monkeypatch.setitem(catalog.gpus(), gpu.id, gpu._replace(dense_tflops=kept))
    return gpu.id


# (id, memory GB, bandwidth GB/s, memory type, TDP W, form factor, cooling, MIG instances, link, domain)
FACTS = [
    pytest.param("gh200-96gb", 96, 4000, "HBM3", 1000, "superchip", "air-or-liquid", 7, "nvlink", 256, id="gh200-96gb"),
    pytest.param("gh200-144gb", 144, 4900, "HBM3e", 1000, "superchip", "air-or-liquid", 7, "nvlink", 256, id="gh200-144gb"),
    pytest.param("rtx-pro-6000-blackwell-96gb", 96, 1597, GDDR7, 600, "pcie", "air", 4, "none", 1, id="rtx-pro-server"),
    pytest.param("rtx-pro-6000-ws-96gb", 96, 1792, GDDR7, 600, "pcie", "air", 4, "none", 1, id="rtx-pro-ws"),
    pytest.param("rtx-pro-6000-max-q-96gb", 96, 1792, GDDR7, 300, "pcie", "air", 4, "none", 1, id="rtx-pro-max-q"),
]


@pytest.mark.parametrize(
    ("gpu_id", "memory_gb", "bandwidth", "memory_type", "tdp_w", "form", "cooling", "mig", "link", "domain"), FACTS
)
def test_record_loads_with_its_datasheet_figures(
    gpu_id: str,
    memory_gb: int,
    bandwidth: int,
    memory_type: str,
    tdp_w: int,
    form: str,
    cooling: str,
    mig: int,
    link: str,
    domain: int,
) -> None:
    gpu = catalog.find_gpu(gpu_id)
    assert (gpu.memory_gb, gpu.memory_bandwidth_gb_per_s, gpu.tdp_w) == (memory_gb, bandwidth, tdp_w)
    assert (gpu.form_factor, gpu.cooling, gpu.mig_max_instances) == (form, cooling, mig)
    assert (gpu.interconnect_kind, gpu.nvlink_domain_gpus) == (link, domain)
    assert record(gpu_id)["memory_type"] == memory_type


# (id, precision, the datasheet's sparse figure, the catalog's dense figure (the datasheet's own dense column where printed))
SPARSE_HALVED = [
    pytest.param("gh200-96gb", "tf32", 989, 494, id="gh200-96-tf32"),
    pytest.param("gh200-96gb", "bf16", 1979, 990, id="gh200-96-bf16"),
    pytest.param("gh200-96gb", "fp16", 1979, 990, id="gh200-96-fp16"),
    pytest.param("gh200-96gb", "fp8", 3958, 1979, id="gh200-96-fp8"),
    pytest.param("gh200-96gb", "int8", 3958, 1979, id="gh200-96-int8"),
    pytest.param("gh200-144gb", "bf16", 1979, 990, id="gh200-144-bf16"),
    pytest.param("gh200-144gb", "fp8", 3958, 1979, id="gh200-144-fp8"),
    pytest.param("rtx-pro-6000-blackwell-96gb", "fp4", 4000, 2000, id="rtx-pro-server-fp4"),
    pytest.param("rtx-pro-6000-ws-96gb", "fp4", 4000, 2000, id="rtx-pro-ws-fp4"),
    pytest.param("rtx-pro-6000-max-q-96gb", "fp4", 3511, 1755.5, id="rtx-pro-max-q-fp4"),
]


@pytest.mark.parametrize(("gpu_id", "precision", "sparse", "dense"), SPARSE_HALVED)
def test_dense_rate_is_the_sparse_figure_halved(gpu_id: str, precision: str, sparse: float, dense: float) -> None:
    value = catalog.find_gpu(gpu_id).tflops(precision)
    assert value == dense
    # NVIDIA rounds each column on its own: 989.5 prints as 990, 494.5 as 494
    assert value is not None and abs(value - sparse / 2) <= 0.5


@pytest.mark.parametrize(
    ("gpu_id", "fp32"),
    [
        pytest.param("gh200-96gb", 67, id="gh200"),
        pytest.param("rtx-pro-6000-blackwell-96gb", 120, id="server"),
        pytest.param("rtx-pro-6000-ws-96gb", 125, id="workstation"),
        pytest.param("rtx-pro-6000-max-q-96gb", 110, id="max-q"),
    ],
)
def test_fp32_is_the_datasheet_figure(gpu_id: str, fp32: float) -> None:
    assert catalog.find_gpu(gpu_id).tflops("fp32") == fp32


def test_gh200_has_no_fp4() -> None:
    assert catalog.find_gpu("gh200-144gb").tflops("fp4") is None


@pytest.mark.parametrize(
    ("gpu_id", "fp8", "bf16", "tf32"),
    [
        # NVIDIA publishes only FP4 (sparse) and FP32 for each edition; the rest is its own FP4 figure divided by
        # Blackwell's ratios (FP4 = 2 x FP8 = 4 x BF16 = 8 x TF32), the same rule for all three, and marked unsourced
        pytest.param("rtx-pro-6000-blackwell-96gb", 1000, 500, 250, id="server"),
        pytest.param("rtx-pro-6000-ws-96gb", 1000, 500, 250, id="workstation"),
        pytest.param("rtx-pro-6000-max-q-96gb", 877.75, 438.875, 219.4375, id="max-q"),  # 3511 / 2 / 2, / 4, / 8
    ],
)
def test_the_editions_derive_their_unpublished_rates_alike(gpu_id: str, fp8: float, bf16: float, tf32: float) -> None:
    rec = record(gpu_id)
    assert rec["dense_tflops"] | {"fp32": None, "fp4": None} == {
        "fp8": fp8, "int8": fp8, "bf16": bf16, "fp16": bf16, "tf32": tf32, "fp32": None, "fp4": None,
    }  # fmt: skip
    derived = {f"dense_tflops.{p}" for p in ("bf16", "fp16", "fp8", "int8", "tf32")}
    assert derived <= set(rec["unsourced_fields"])
    assert not derived & set(rec["field_sources"])


@pytest.mark.parametrize("gpu_id", NEW_IDS)
def test_every_value_has_a_source_or_is_marked_unsourced(gpu_id: str) -> None:
    rec = record(gpu_id)
    sourced = set(rec["field_sources"]) | set(rec["unsourced_fields"])
    fields = {f"dense_tflops.{k}" for k, v in rec["dense_tflops"].items() if v is not None}
    fields |= {"memory_gb", "memory_bandwidth_gb_per_s", "tdp_w", "memory_type", "form_factor", "cooling", "pcie"}
    fields |= {f for f in ("memory_usable_mib", "mig_max_instances") if rec[f] is not None}
    assert fields <= sourced, sorted(fields - sourced)
    assert all(s.startswith("https://") for s in rec["source"])


@pytest.mark.parametrize(
    ("gpu_id", "memory_bytes"),
    [
        pytest.param("gh200-96gb", 97_871 * MIB, id="gh200-96gb-nvidia-smi"),
        pytest.param("gh200-144gb", 144 * GB, id="gh200-144gb-marketed"),  # no nvidia-smi total found
    ],
)
def test_memory_the_runtime_sees(gpu_id: str, memory_bytes: int) -> None:
    assert catalog.find_gpu(gpu_id).memory_bytes == memory_bytes


def test_estimate_llama_70b_fp8_on_gh200_144gb() -> None:
    capacity = estimate_json("meta-llama/Llama-3.1-70B-Instruct", "--gpu", "gh200-144gb", "--precision", "fp8")["capacity"]
    assert capacity["gpu"] == "gh200-144gb"
    assert capacity["gpu_memory_bytes"] == 144_000_000_000
    assert capacity["budget_bytes"] == 129_600_000_000  # 90 % of 144 GB
    assert capacity["fits"] is True


def test_throughput_on_a_gpu_without_a_published_rate_is_an_error(unrated_max_q: str) -> None:
    code, _ = run_estimate(
        "meta-llama/Llama-3.1-8B-Instruct",
        "--gpu",
        unrated_max_q,
        "--input-tokens",
        "1000",
        "--output-tokens",
        "200",
    )
    assert code == 1


def test_a_tower_workstation_takes_the_workstation_edition() -> None:
    gpu_ids = catalog.platforms()["wrx90-workstation"].gpu_ids
    assert "rtx-pro-6000-ws-96gb" in gpu_ids
    assert "rtx-pro-6000-blackwell-96gb" not in gpu_ids  # the passive Server Edition needs a server's airflow


@pytest.mark.parametrize(
    ("platform_id", "gpu_id", "gpus", "usd"),
    [
        # host components $16,028.83 + the Workstation Edition's $8,565 MSRP
        pytest.param("wrx90-workstation", "rtx-pro-6000-ws-96gb", 1, 16_028.83 + 8_565, id="workstation-msrp"),
        pytest.param("dell-xe7740", "rtx-pro-6000-blackwell-96gb", 8, None, id="server-edition-unpriced"),
    ],
)
def test_the_msrp_prices_the_workstation_edition_only(platform_id: str, gpu_id: str, gpus: int, usd: float | None) -> None:
    got = purchase_price(catalog.platforms()[platform_id], catalog.gpus()[gpu_id], gpus)
    if usd is None:
        assert isinstance(got, str) and catalog.unpriced()[gpu_id] in got
        return
    assert not isinstance(got, str) and got[0] == pytest.approx(usd, abs=0.005)


def _home_server_with(tmp_path: Path, gpu: str, cpu: str) -> Path:
    """The home offload example on another GPU and CPU (one GPU, 64 GiB RAM)."""
    text = (REPO / "examples" / "home-70b-offload.yaml").read_text(encoding="utf-8")
    assert "    gpu: rtx-4090-24gb\n" in text and "    cpu: ryzen-9-7950x\n" in text
    path = tmp_path / "home.yaml"
    path.write_text(text.replace("gpu: rtx-4090-24gb", f"gpu: {gpu}").replace("cpu: ryzen-9-7950x", f"cpu: {cpu}"))
    return path


def test_a_gh200_machine_adds_no_grace_tdp_to_its_module_power(tmp_path: Path) -> None:
    # the datasheet's 1,000 W covers memory + CPU + GPU: (1,000 W + the 25 W drive) x 1.10 (fans) / 0.94 (PSU) =
    # 1,199 W, not (1,000 + 300 W Grace + DIMMs) x 1.10 / 0.94
    assert catalog.find_gpu("gh200-96gb").tdp_includes_host_cpu
    plan = plan_file(str(_home_server_with(tmp_path, "gh200-96gb", "nvidia-grace")))[1]
    (pool,) = plan.pools
    assert (pool.node.power_w, pool.node.power_basis) == (1_199, "GPU module TDP, its CPU included (existing machine)")


def test_a_machine_on_a_gpu_without_a_published_rate_is_a_located_error(tmp_path: Path, unrated_max_q: str) -> None:
    path = _home_server_with(tmp_path, unrated_max_q, "ryzen-9-7950x")
    with pytest.raises(InputError) as caught:
        plan_file(str(path))
    assert str(caught.value).startswith(f"{path}:18:10: hardware.fixed.gpu: rtx-pro-6000-max-q-96gb has no published dense bf16")


@pytest.mark.parametrize("gpu_id", ["rtx-pro-6000-ws-96gb", "rtx-pro-6000-max-q-96gb", "rtx-a6000-48gb", "t4-16gb"])
def test_a_derived_or_fallback_rate_is_kept(gpu_id: str) -> None:
    # the T4 has no bf16 and is timed at its fp16 rate; the RTX PRO editions' rates are derived, not published
    assert catalog.find_gpu(gpu_id).unrated("bf16") is None


def test_unrated_names_a_missing_rate(unrated_max_q: str) -> None:
    assert catalog.find_gpu(unrated_max_q).unrated("bf16") == (
        "rtx-pro-6000-max-q-96gb has no published dense bf16 tensor rate in the catalog (attention runs at it, "
        "whatever the weight format): its speed cannot be estimated; choose another GPU"
    )


def _custom_fleet_with(tmp_path: Path, gpu: str, cpu: str = "epyc-9354", max_power_w: int = 2100) -> Path:
    """The custom-server example with its owned 4-GPU boxes built on ``gpu`` and ``cpu``."""
    text = (REPO / "examples" / "fleet-custom.yaml").read_text(encoding="utf-8")
    for old in ("        gpu: a40-48gb\n", "        cpu: epyc-9354\n", "        max_power_w: 2100\n"):
        assert old in text
    text = text.replace("        gpu: a40-48gb\n", f"        gpu: {gpu}\n").replace(
        "        cpu: epyc-9354\n", f"        cpu: {cpu}\n"
    )
    path = tmp_path / "custom.yaml"
    path.write_text(text.replace("        max_power_w: 2100\n", f"        max_power_w: {max_power_w}\n"))
    return path


def test_an_owned_gpu_without_a_published_rate_is_a_located_error(tmp_path: Path, unrated_max_q: str) -> None:
    # an owned custom server is the machine: it cannot be timed, so validate refuses it where it is named
    path = _custom_fleet_with(tmp_path, unrated_max_q, max_power_w=2500)
    with pytest.raises(InputError) as caught:
        plan_file(str(path))
    message = str(caught.value)
    assert f"{path}:32:14: hardware.inventory[0].custom.gpu: rtx-pro-6000-max-q-96gb has no published dense bf16" in message


def test_an_allowed_gpu_without_a_published_rate_is_skipped_unless_it_is_the_only_one(tmp_path: Path, unrated_max_q: str) -> None:
    text = (REPO / "examples" / "chat-70b.yaml").read_text(encoding="utf-8")
    allowed = next(line for line in text.splitlines() if line.startswith("  gpus: ["))
    path = tmp_path / "w.yaml"
    path.write_text(text.replace(allowed, "  gpus: [h100-sxm5-80gb, rtx-pro-6000-max-q-96gb]"))
    plan = plan_file(str(path))[1]
    assert {p.node.gpu_id for p in plan.pools} == {"h100-sxm5-80gb"}
    (skipped,) = [f for f in plan.findings if f.code == "gpu-not-rated"]
    assert (skipped.level, skipped.path) == ("warning", "hardware.gpus[=rtx-pro-6000-max-q-96gb]")  # by value (fix191)
    assert skipped.message.startswith("skipped: rtx-pro-6000-max-q-96gb has no published dense bf16 tensor rate")
    path.write_text(text.replace(allowed, "  gpus: [rtx-pro-6000-max-q-96gb]"))
    with pytest.raises(InputError, match=r"hardware\.gpus\[0\]: rtx-pro-6000-max-q-96gb has no published dense bf16"):
        plan_file(str(path))


@pytest.mark.parametrize("precision", ["nvfp4", "fp8", "bf16"])
def test_a_gpu_without_a_published_bf16_rate_is_timed_in_no_format(
    precision: str, capsys: pytest.CaptureFixture[str], unrated_max_q: str
) -> None:
    # a GPU with FP4 alone: attention runs at the bf16 rate, so even an NVFP4 run cannot be timed
    code, _ = run_estimate(
        "meta-llama/Llama-3.1-8B-Instruct", "--gpu", unrated_max_q, "--precision", precision,
        "--input-tokens", "2048", "--output-tokens", "128",
    )  # fmt: skip
    assert code == 1
    assert "rtx-pro-6000-max-q-96gb has no published dense bf16 tensor rate" in capsys.readouterr().err


def test_a_gh200_server_adds_no_dimm_power_for_the_memory_on_its_modules(tmp_path: Path) -> None:
    # 4 x GH200 modules (1,000 W each, Grace and its LPDDR5X included) in an owned custom server with 512 GiB: summed
    # from components 4,798 W; the 8 x 10 W DIMMs that 512 GiB would be on a socketed CPU are not added (4,892 W)
    plan = plan_file(str(_custom_fleet_with(tmp_path, "gh200-96gb", cpu="nvidia-grace", max_power_w=6000)))[1]
    (pool,) = [p for p in plan.pools if p.node.gpu_id == "gh200-96gb"]
    assert pool.node.power_components_w == 4_798
