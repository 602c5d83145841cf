"""llama.cpp on the catalog's AMD cards against its ROCm / Vulkan scoreboards (tests/data/llama_cpp_amd_scoreboard.json),
and the AMD cards themselves (generator/catalog/gpus.json: RX 7900 XTX, Radeon PRO W7900, Instinct MI210).

The rows: llama.cpp's ROCm scoreboard (https://github.com/ggml-org/llama.cpp/discussions/15021, Llama 2 7B Q4_0
tg128 / pp512: RX 7900 XTX 167.11 / 3552.27, W7900 121.18 / 3213.17, MI210 124.51 / 2486.22), its Vulkan scoreboard
(https://github.com/ggml-org/llama.cpp/discussions/10879: RX 7900 XTX 191.28 / 3531.93) and one ROCm issue's run
(https://github.com/ROCm/ROCm/issues/4868: Meta-Llama-3-8B Q4_K_M on an RX 7900 XTX, 90.04 / 2970.46), and a HIP
maintainer's tg64 of the same file on the same card (https://github.com/ggml-org/llama.cpp/pull/26284: 105.75, no
pp512). The decode is timed as the CUDA rows are, with the per-layer floor of a build that launches each kernel on its
own for the ROCm rows (HIP graphs were an opt-in build option), a K-quant file's mat-vec on an RDNA card at its own
share (acc173, ``mmvq_k_rdna``): 8.0% / 22.3% (median / p90) on the GDDR cards (22.5% / 44.2% with the Q4_0 share, the
two Q4_K_M rows 23-44% fast), 4.3% on the MI210, 4.9% for Vulkan. The prompt (acc171) follows the kernels
llama.cpp's HIP build runs (generator/sizing/llama_cpp_prompt.py's ``prompt_gpu``): RDNA 3 dequantizes to fp16 for
hipBLAS, CDNA runs int8 MMQ on MFMA: 8.3% / 13.3% on the GDDR cards, 16.4% on the MI210, 12.8% for Vulkan (the
serving prefill read them 43-200% fast).
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from generator import catalog
from generator.api import render_file
from tests.conftest import REPO, report_overrides
from tests.conftest import calibration_report as _report

calibration_report = _report()

DATA = REPO / "tests" / "data" / "llama_cpp_amd_scoreboard.json"
AMD_CARDS = ("rx-7900-xtx-24gb", "radeon-pro-w7900-48gb", "mi210-64gb")

ROCM_GDDR = "llama.cpp gpu-resident decode, AMD scoreboard (ROCm GDDR)"
ROCM_HBM = "llama.cpp gpu-resident decode, AMD scoreboard (ROCm HBM)"
VULKAN_GDDR = "llama.cpp gpu-resident decode, AMD scoreboard (Vulkan GDDR)"

#: (rows, median bound, p90 bound) of |predicted / measured - 1| by decode group: the report's (8.0% / 22.3%, 4.3%,
#: 4.9%) with headroom.
BOUNDS = {ROCM_GDDR: (4, 0.10, 0.24), ROCM_HBM: (1, 0.06, 0.06), VULKAN_GDDR: (1, 0.07, 0.07)}
#: The same for the prompt groups (acc171: 8.3% / 13.3%, 16.4%, 12.8%).
PROMPT_BOUNDS = {
    ROCM_GDDR.replace("decode", "prompt"): (3, 0.10, 0.15),
    ROCM_HBM.replace("decode", "prompt"): (1, 0.18, 0.18),
    VULKAN_GDDR.replace("decode", "prompt"): (1, 0.14, 0.14),
}


def _rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(DATA.read_text(encoding="utf-8"))["rows"]
    return rows


def _errors(rows: list[tuple[str, str, float, Any, dict[str, Any]]], **change: Any) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for group, _, measured, predict, row in rows:
        out.setdefault(group, []).append(predict({**row, **change}) / measured - 1)
    return out


def test_every_row_is_sourced_complete_and_an_amd_catalog_gpu() -> None:
    rows = _rows()
    assert len(rows) == 6
    for row in rows:
        assert row["source"] in (
            "https://github.com/ggml-org/llama.cpp/discussions/15021",
            "https://github.com/ggml-org/llama.cpp/discussions/10879",
            "https://github.com/ROCm/ROCm/issues/4868",
            "https://github.com/ggml-org/llama.cpp/pull/26284",
        ), row
        assert catalog.find_gpu(row["gpu"]).vendor == "amd", row
        assert row["tg_tokens"] in (64, 128) and row["tg_tokens_per_s"] > 0, row
        assert row.get("pp512_tokens_per_s", 1) > 0, row
        assert row["build"] and row["gpu_as_reported"] and row["backend"] in ("ROCm", "Vulkan"), row
        assert isinstance(row["kernel_graphs"], bool) and row["kernel_graphs_why"], row
    assert {r["gpu"] for r in rows} == set(AMD_CARDS)
    assert {r["backend"] for r in rows if not r["kernel_graphs"]} == {"ROCm"}


@pytest.mark.parametrize("group", sorted(BOUNDS))
def test_decode_error_by_group_is_bounded(group: str) -> None:
    errors = [abs(e) for e in _errors(calibration_report.llama_cpp_amd_decode_rows())[group]]
    rows, median_bound, p90_bound = BOUNDS[group]
    assert len(errors) == rows
    assert statistics.median(errors) <= median_bound, sorted(errors)
    assert calibration_report._p90(errors) <= p90_bound, sorted(errors)


def test_the_rocm_rows_pay_the_floor_of_a_build_without_graphs() -> None:
    """Timed as one graph (today's 100 us a layer) the MI210's read-bound step would read more than twice its 124.51
    tokens/s: the scoreboard's HIP builds launched each kernel on its own (240 us a layer, 130 tokens/s for 32 layers)."""
    as_graphs = _errors(calibration_report.llama_cpp_amd_decode_rows(), kernel_graphs=True)
    assert as_graphs[ROCM_HBM][0] > 1.0
    assert max(as_graphs[ROCM_GDDR]) > 0.30  # the W7900


def test_rdna_k_quant_files_read_at_their_own_share() -> None:
    """acc173: the two Llama 3 8B Q4_K_M rows on the RX 7900 XTX read 46-54% of its 960 GB/s; at the Q4_0 share
    (``llama_cpp_gpu_bandwidth_efficiency``) they read 23-44% fast. The share is the HIP build's on RDNA cards alone: the
    same file on CDNA or an NVIDIA card, and a Q4_0 file on RDNA, keep the Q4_0 share."""
    from generator.sizing.constants import Constants
    from generator.sizing.llama_cpp_gpu import gpu_read_bytes_per_s, mat_vec_kernel

    assert mat_vec_kernel(4.5, 0.5, "q4_k_m", "rdna3") == "mmvq_k_rdna"
    assert mat_vec_kernel(6.5, 0.5, "q6_k", "rdna4") == "mmvq_k_rdna"
    assert mat_vec_kernel(4.5, 0.5, "q4_k_m", "cdna3") == "mmvq"
    assert mat_vec_kernel(4.5, 0.5, "q4_k_m", "ada") == "mmvq"
    assert mat_vec_kernel(4.0, 0.5, "q4_0", "rdna3") == "mmvq"
    assert mat_vec_kernel(16.0, 0.0, "bf16", "rdna3") == "mmvf"
    consts = Constants()
    assert gpu_read_bytes_per_s(960.0, consts, "mmvq_k_rdna") == pytest.approx(
        960e9 * consts.llama_cpp_gpu_rdna_kquant_bandwidth_efficiency
    )
    assert consts.llama_cpp_gpu_rdna_kquant_bandwidth_efficiency < consts.llama_cpp_gpu_bandwidth_efficiency
    kquant = [(m, r) for g, _, m, _, r in calibration_report.llama_cpp_amd_decode_rows() if r["precision"] == "q4_k_m"]
    assert len(kquant) == 2
    q4_0_share = {"llama_cpp_gpu_rdna_kquant_bandwidth_efficiency": consts.llama_cpp_gpu_bandwidth_efficiency}
    for measured, row in kquant:
        assert abs(calibration_report.predict_gpu_resident_decode(row) / measured - 1) < 0.10, row
        with report_overrides(calibration_report, q4_0_share):
            assert calibration_report.predict_gpu_resident_decode(row) / measured - 1 > 0.20, row


@pytest.mark.parametrize("group", sorted(PROMPT_BOUNDS))
def test_prompt_error_by_group_is_bounded(group: str) -> None:
    errors = [abs(e) for e in _errors(calibration_report.llama_cpp_amd_prompt_rows())[group]]
    rows, median_bound, p90_bound = PROMPT_BOUNDS[group]
    assert len(errors) == rows
    assert statistics.median(errors) <= median_bound, sorted(errors)
    assert calibration_report._p90(errors) <= p90_bound, sorted(errors)


def _serving_prefill(row: dict[str, Any]) -> float:
    """The figure before acc171: the serving engines' prefill (``prefill_compute_efficiency`` of the 16-bit rate)."""
    from generator.sizing.performance import prefill_flops

    arch, _, machine, _ = calibration_report._gpu_resident_setup(row)
    consts = calibration_report.with_overrides(dict(calibration_report.OVERRIDES))
    tokens = calibration_report.LLAMA_CPP_PROMPT_TOKENS
    return float(tokens / (prefill_flops(arch, tokens) / (machine.gpu_tflops * 1e12 * consts.prefill_compute_efficiency)))


def test_the_serving_prefill_fails_every_prompt_bound() -> None:
    """The serving engines' prefill, which the AMD prompt kept before, read every group 43-200% fast."""
    for group, errors in _errors(calibration_report.llama_cpp_amd_prompt_rows()).items():
        rows = [r for g, *_, r in calibration_report.llama_cpp_amd_prompt_rows() if g == group]
        measured = [m for g, _, m, *_ in calibration_report.llama_cpp_amd_prompt_rows() if g == group]
        old = [_serving_prefill(r) / m - 1 for r, m in zip(rows, measured, strict=True)]
        assert min(old) > 0.3 and statistics.median(old) > PROMPT_BOUNDS[group][1], (group, old, errors)


def _prompt_on(row: dict[str, Any], **machine_change: Any) -> float:
    """A row's pp512 (tokens/s) as ``predict_gpu_resident_prompt`` times it, on its machine with ``machine_change``."""
    from generator.sizing.offload import offload_cost

    arch, fmt, machine, placement = calibration_report._gpu_resident_setup(row)
    consts = calibration_report.with_overrides(dict(calibration_report.OVERRIDES))
    tokens = calibration_report.LLAMA_CPP_PROMPT_TOKENS
    cost = offload_cost(arch, fmt, 16, placement, machine._replace(**machine_change), tokens, consts)
    return float(cost.prefill_tokens_per_s)


def _rocm_row(gpu: str) -> tuple[float, dict[str, Any]]:
    rows = calibration_report.llama_cpp_amd_prompt_rows()
    (found,) = [(m, r) for g, _, m, _, r in rows if r["gpu"] == gpu and "ROCm" in g and r["precision"] == "q4_0"]
    return found


def test_rdna3_copies_to_fp16_for_hipblas_and_cdna_runs_int8_mmq() -> None:
    """The kernels by architecture (``prompt_gpu``): an RX 7900 XTX (RDNA 3, a consumer card) dequantizes to fp16 for
    hipBLAS at its one WMMA rate; the MI210 (CDNA 2) runs int8 MMQ on MFMA. Each on the other's path misses its run."""
    from generator.sizing.llama_cpp_prompt import prompt_gpu

    xtx_measured, xtx = _rocm_row("rx-7900-xtx-24gb")
    mi210_measured, mi210 = _rocm_row("mi210-64gb")
    xtx_machine = calibration_report._gpu_resident_setup(xtx)[2]
    mi210_machine = calibration_report._gpu_resident_setup(mi210)[2]
    assert xtx_machine.gpu_consumer and xtx_machine.gpu_architecture == "rdna3"
    assert prompt_gpu(xtx_machine) == (122.9, xtx_machine.gpu_bandwidth_gb_per_s, False, 0.0)
    assert prompt_gpu(mi210_machine) == (181.0, mi210_machine.gpu_bandwidth_gb_per_s, False, 181.0)
    assert prompt_gpu(mi210_machine._replace(gpu_vendor="intel")) is None  # another maker: the serving prefill
    assert abs(_prompt_on(xtx) / xtx_measured - 1) < 0.15
    assert _prompt_on(xtx, gpu_architecture="cdna3") / xtx_measured - 1 < -0.35  # int8 MMQ at the WMMA int8 rate
    assert _prompt_on(xtx, gpu_vendor="nvidia") / xtx_measured - 1 < -0.35  # a GeForce: MMQ as well
    assert abs(_prompt_on(mi210) / mi210_measured - 1) < 0.19  # +18.1% since acc204's 0.32 ms layer time (+16.4%)
    assert _prompt_on(mi210, gpu_architecture="rdna3") / mi210_measured - 1 > 0.5  # hipBLAS fp16 and its copies


# ---------------------------------------------------------------- the catalog's AMD cards


@pytest.mark.parametrize(
    ("gpu_id", "rates", "bandwidth_gb_per_s", "memory_bytes", "tdp_w"),
    [
        # WMMA: 512 FP16 / BF16 / INT8 a clock a CU (AMD GPUOpen) x 96 CUs x 2.5 GHz; FP32 61.4 counts dual issue
        pytest.param("rx-7900-xtx-24gb", (122.9, 122.9, 122.9, 61.4), 960, 25_753_026_560, 355, id="rx-7900-xtx"),
        # the same die at 2,495 MHz; rocm-smi's 49,136 MiB (newuser99: tests/test_newuser99_w7900_memory.py)
        pytest.param("radeon-pro-w7900-48gb", (122.6, 122.6, 122.6, 61.3), 864, 51_522_830_336, 295, id="w7900"),
        # AnandTech's MI210 table: FP16 / INT8 matrix 181, FP32 vector 22.6; 3.2 Gbps x 4096 bit / 8
        pytest.param("mi210-64gb", (181.0, 181.0, 181.0, 22.6), 1638.4, 64_000_000_000, 300, id="mi210"),
    ],
)
def test_amd_card_figures(
    gpu_id: str, rates: tuple[float, ...], bandwidth_gb_per_s: float, memory_bytes: int, tdp_w: float
) -> None:
    gpu = catalog.find_gpu(gpu_id)
    assert tuple(gpu.dense_tflops[k] for k in ("bf16", "fp16", "int8", "fp32")) == rates
    assert {k: gpu.dense_tflops[k] for k in ("fp8", "tf32", "fp4")} == {"fp8": None, "tf32": None, "fp4": None}
    assert (gpu.memory_bandwidth_gb_per_s, gpu.memory_bytes, gpu.tdp_w) == (bandwidth_gb_per_s, memory_bytes, tdp_w)
    assert (gpu.vendor, gpu.device_resource, gpu.form_factor, gpu.pcie_gen) == ("amd", "amd.com/gpu", "pcie", 4)
    assert gpu.interconnect_kind == "none" and gpu.mig_max_instances == 0


def test_no_amd_card_is_bought_by_the_planner() -> None:
    """None of the three has a purchase price or a platform: the planner cannot buy one by accident (a plan names it
    under hardware.fixed, a machine the user owns; an allowed list naming one is refused: no platform holds it)."""
    platforms = json.loads((REPO / "generator" / "catalog" / "platforms.json").read_text(encoding="utf-8"))["platforms"]
    purchases = json.loads((REPO / "generator" / "catalog" / "purchases.json").read_text(encoding="utf-8"))["purchases"]
    assert not [p["id"] for p in platforms if set(p["gpu_ids"]) & set(AMD_CARDS)]
    assert not [p["id"] for p in purchases if p.get("gpu_id") in AMD_CARDS]
    assert set(AMD_CARDS) <= set(catalog.unpriced())  # each says why it has no price


WORKLOAD = """\
version: 1
name: home
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: bf16, max_context_tokens: 8192, requests_per_second: 1}}
hardware:
  provider: baremetal
  fixed: {{gpu: {gpu}, gpu_count: 1, ram_gib: 64}}
outputs: [terraform, ansible, kubernetes]
"""


@pytest.mark.parametrize("gpu_id", AMD_CARDS)
def test_a_fixed_amd_machine_renders_with_the_amd_stack(tmp_path: Path, gpu_id: str) -> None:
    path = tmp_path / "home.yaml"
    path.write_text(WORKLOAD.format(gpu=gpu_id))
    files = render_file(str(path))
    pool = f"home_{gpu_id.replace('-', '_')}"
    tfvars = json.loads(files["terraform/specgen.auto.tfvars.json"])
    assert "amd.com/gpu" in json.dumps(tfvars)
    assert "specgen_amdgpu_driver" in files[f"ansible/group_vars/{pool}.yml"]
    codes = {f["code"] for f in json.loads(files["spec.json"])["plan"]["findings"]}
    assert {"device-plugin-not-rendered", "kubernetes-single-host"} <= codes


@pytest.mark.parametrize(("precision", "refused"), [("fp8", True), ("nvfp4", True), ("bf16", False)])
def test_rdna3_has_no_fp8_or_nvfp4_kernel(precision: str, refused: bool) -> None:
    """RDNA 3 has no FP8 matrix type (AMD GPUOpen: no FP8 / BF8 rate) and NVFP4 has NVIDIA kernels only: a vLLM plan
    of either on an RX 7900 XTX is refused where the catalog's other AMD architectures are; bf16 loads."""
    from generator.sizing.loadability import format_problems
    from generator.sizing.precision import WEIGHT_FORMATS

    problems = format_problems(WEIGHT_FORMATS[precision], catalog.find_gpu("rx-7900-xtx-24gb").architecture)
    assert bool(problems) is refused
    if precision == "fp8":
        assert "RDNA 3 GPUs (Radeon RX 7900 XTX, Radeon PRO W7900)" in problems[0]


@pytest.mark.parametrize(
    ("name", "mib", "gpu_id"),
    [
        pytest.param("Radeon RX 7900 XTX", 24_560, "rx-7900-xtx-24gb", id="xtx-rocm-smi"),
        pytest.param("AMD Radeon PRO W7900", 49_136, "radeon-pro-w7900-48gb", id="w7900"),
        pytest.param("AMD Instinct MI210", 65_520, "mi210-64gb", id="mi210"),
        pytest.param("Radeon RX 7900 XT", 20_464, None, id="the-20gb-xt-is-not-the-xtx"),
    ],
)
def test_detect_reads_the_amd_cards(name: str, mib: int, gpu_id: str | None) -> None:
    """`specgen detect`'s rocm-smi names now find the catalog's AMD cards; the 20 GB RX 7900 XT, whose name shares
    the model word, is refused by its memory."""
    from generator.calculator.detect import GpuReading, match_amd_gpu

    assert match_amd_gpu(GpuReading(name, mib, None, None, "rocm-smi"))[0] == gpu_id


def test_the_prompt_note_says_what_is_checked_by_maker() -> None:
    """NVIDIA: no note; AMD: timed by the HIP kernels, with what is left unchecked; another maker: unchecked."""
    from generator.calculator.llama_cpp_vendor import prompt_unchecked_note

    assert prompt_unchecked_note("nvidia") is None and prompt_unchecked_note("") is None
    amd = prompt_unchecked_note("amd")
    assert amd is not None and "HIP build" in amd and "unchecked" in amd and "43-200%" not in amd
    other = prompt_unchecked_note("intel")
    assert other is not None and other.startswith("the TTFT is unchecked on this GPU")
