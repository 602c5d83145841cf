"""The routed experts' memory-bound kernels in an offloaded placement's decode step (review77 item 2).

:func:`generator.sizing.offload.offload_cost` counts them through the serving rule
(:func:`generator.sizing.performance.routed_expert_traffic_bytes`), W8A8 FP8's quantization bytes included, and for every
MoE layer whose experts the GPU multiplies: the layers it holds, and in the streaming mode the layers it streams. They
used to be re-derived without W8A8's bytes and counted only where no layer was offloaded, so one layer moved to RAM
dropped the whole term. Each case times a placement with the rule's bytes and with none, and checks the difference.
"""

from __future__ import annotations

import pytest

from generator.catalog import find_gpu, find_model
from generator.sizing import offload
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.llama_cpp_gpu import gpu_read_bytes_per_s
from generator.sizing.offload import Machine, Placement, _offload_accelerator, offload_cost, on_gpu, place
from generator.sizing.performance import accelerator_for, routed_expert_bytes, routed_expert_traffic_bytes
from generator.sizing.precision import weight_format
from generator.sizing.weights import Parallelism
from generator.units import GIB

CONSTS = Constants()
ARCH = parse_architecture(find_model("Qwen/Qwen3-30B-A3B").config)


def _h100(gpu_gib: float) -> Machine:
    return Machine(1, int(gpu_gib * GIB), 3350.0, 989.0, 63.0, 256 * GIB, 8 * GIB, 0, 2000 * GIB, 7.0, 300.0)


def _routed_hbm_seconds(
    monkeypatch: pytest.MonkeyPatch, precision: str, gpu_gib: float, streams: int, engine: str, consts: Constants = CONSTS
) -> tuple[float, float, tuple[Placement, str]]:
    """The step's hbm seconds with the routed kernels' bytes less those without, the placement and its mode."""
    fmt = weight_format(precision)
    machine = _h100(gpu_gib)
    placement = place(ARCH, fmt, 16, 8192, machine, consts, engine=engine)
    cost = offload_cost(ARCH, fmt, 16, placement, machine, 800, consts, 950, streams, engine=engine)
    monkeypatch.setattr(offload, "routed_expert_traffic_bytes", lambda *_: (0.0, 0.0))
    bare = offload_cost(ARCH, fmt, 16, placement, machine, 800, consts, 950, streams, engine=engine)
    monkeypatch.undo()
    assert cost.mode == bare.mode
    return cost.seconds_per_token["hbm"] - bare.seconds_per_token["hbm"], _hbm(machine), (placement, cost.mode)


def _hbm(machine: Machine) -> float:
    return machine.gpu_bandwidth_gb_per_s * 1e9 * CONSTS.decode_bandwidth_efficiency


def test_all_on_gpu_fp8_counts_w8a8s_quantization(monkeypatch: pytest.MonkeyPatch) -> None:
    # llama.cpp's whole-GPU step reads at its own rate, the layers' kernels' floor off (acc148: 48 layers' 11.3 ms
    # would hide these bytes' time under it)
    consts = CONSTS._replace(llama_cpp_layer_launch_s=0.0)
    extra, _, (placement, mode) = _routed_hbm_seconds(monkeypatch, "fp8", 80, 4, "llama.cpp", consts)
    assert mode == "gpu" and not placement.offloaded
    w8a8 = sum(routed_expert_bytes(ARCH, Parallelism(), True))
    assert w8a8 > sum(routed_expert_bytes(ARCH, Parallelism(), False))
    assert extra == pytest.approx(4 * w8a8 / gpu_read_bytes_per_s(_h100(80).gpu_bandwidth_gb_per_s, consts), rel=1e-9)


@pytest.mark.parametrize(("streams", "engine", "mode"), [(1, "llama.cpp", "cpu-compute"), (32, "llama.cpp", "pcie-stream")])
def test_an_offloaded_placement_keeps_its_gpu_layers_share(
    monkeypatch: pytest.MonkeyPatch, streams: int, engine: str, mode: str
) -> None:
    extra, hbm, (placement, got) = _routed_hbm_seconds(monkeypatch, "bf16", 40, streams, engine)
    assert got == mode and placement.offloaded
    moe = [layer.is_moe for layer in ARCH.layers]
    held = sum(1 for d, m in zip(placement.layer_devices, moe, strict=True) if m and on_gpu(d))
    assert 0 < held < sum(moe)  # some MoE layers on the GPU, some not
    every = streams * sum(routed_expert_bytes(ARCH, Parallelism(), False)) / hbm
    # the CPU multiplies its layers' experts; streamed, the GPU multiplies every layer's
    share = held / sum(moe) if mode == "cpu-compute" else 1.0
    assert extra == pytest.approx(every * share, rel=1e-9)


def test_the_bytes_by_hand() -> None:
    """Qwen3-30B-A3B: 48 MoE layers, hidden 2,048, a routed expert 768 columns, 8 a token. A token: its top-k sum
    written (2 B an element of the hidden size), W8A8 its input quantized too (3 B more); a routed pair: the gated
    activation's 3 x 2 B a column, W8A8 re-quantized (3 B more), and its output read for the sum (2 B an element)."""
    assert sum(routed_expert_bytes(ARCH, Parallelism(), False)) == 48 * (2 * 2048 + 8 * (6 * 768 + 2 * 2048)) == 3_538_944
    assert sum(routed_expert_bytes(ARCH, Parallelism(), True)) == 48 * (5 * 2048 + 8 * (9 * 768 + 2 * 2048)) == 4_718_592


@pytest.mark.parametrize(
    ("precision", "gpu", "w8a8"),
    [
        ("fp8", "h100-sxm5-80gb", True),
        ("bf16", "h100-sxm5-80gb", False),
        ("q4_k_m", "rtx-4090-24gb", False),
        ("int4", "a100-sxm4-80gb", False),
        ("mxfp4", "h100-sxm5-80gb", None),  # fused outside Marlin's MoE kernel: none
        ("mxfp4_moe", "rtx-4090-24gb", False),  # llama.cpp's GGUF, run unfused
        ("nvfp4", "b200-sxm-180gb", None),
    ],
)
def test_the_offloaded_gpu_counts_what_the_serving_decode_step_counts(precision: str, gpu: str, w8a8: bool | None) -> None:
    """One rule: the bytes offload_cost times equal the serving estimate's on the GPU the machine has (its format
    computed as stored on it)."""
    fmt = weight_format(precision)
    spec = find_gpu(gpu)
    serving = routed_expert_traffic_bytes(ARCH, Parallelism(), accelerator_for(spec, fmt.compute, 1, weights=fmt))
    machine = Machine(1, spec.memory_bytes, spec.sustained_bandwidth_gb_per_s, 1.0, 63.0, 256 * GIB, 8 * GIB, 0, 0, 7.0, 300.0)
    offloaded = routed_expert_traffic_bytes(ARCH, Parallelism(), _offload_accelerator(fmt, machine))
    assert offloaded == serving
    assert offloaded == ((0.0, 0.0) if w8a8 is None else routed_expert_bytes(ARCH, Parallelism(), w8a8))


@pytest.mark.parametrize(("gpu_id", "w8a8"), [("a100-sxm4-80gb", False), ("h100-sxm5-80gb", True)])
def test_an_fp8_moe_on_the_fixed_machine_counts_the_serving_estimates_bytes(gpu_id: str, w8a8: bool) -> None:
    """review78 item 7: an A100 (no FP8 tensor rate) runs FP8 experts W8A16 in serving; the offload step counted W8A8.

    The machine ``hardware.fixed`` builds records its GPU's tensor formats, so the offload accelerator's routed bytes
    are the serving accelerator's: Qwen3-30B-A3B FP8, 3,538,944 B a token on an A100 (was 4,718,592), W8A8 on an H100.
    """
    from generator.calculator.machine import FixedSpec, build_machine

    fmt = weight_format("fp8")
    machine, gpu, _ = build_machine(FixedSpec(gpu=gpu_id, gpu_count=1, ram_gib=256))
    assert gpu.id == gpu_id and machine.gpu_tensor_formats is not None
    assert ("fp8" in machine.gpu_tensor_formats) is w8a8
    offloaded = routed_expert_traffic_bytes(ARCH, Parallelism(), _offload_accelerator(fmt, machine))
    serving = routed_expert_traffic_bytes(ARCH, Parallelism(), accelerator_for(find_gpu(gpu_id), fmt.compute, 1, weights=fmt))
    assert offloaded == serving == routed_expert_bytes(ARCH, Parallelism(), w8a8)
    assert sum(offloaded) == (4_718_592 if w8a8 else 3_538_944)
