"""llama.cpp's decode step with every layer on its GPUs: the weights' read against its kernels' fixed time.

One efficiency of the datasheet bandwidth (the serving engines' ``decode_bandwidth_efficiency``) read llama.cpp's
published single-stream runs 5-22% slow on GDDR cards and 5-59% fast on the HBM ones (newuser95's left-over 1; the
rows: tests/data/llama_cpp_gpu_decode.json, group "llama.cpp gpu-resident decode" of benchmarks/calibration_report.py).
Two mechanisms make the difference:

- the matrix-vector kernels read at ``llama_cpp_gpu_bandwidth_efficiency`` of the memory's rate, but no faster than
  ``llama_cpp_gpu_read_ceiling_gb_per_s``: the bytes they keep in flight over the memory's latency (Little's law) cap
  the rate of the fastest cards (A100 / H100 PCIe: 1.0 TB/s of 1.9-2.0 in Dec 2023 builds; the RTX 5090 / RTX PRO 6000
  Max-Q: 1.0-1.1 TB/s of 1.79 in 2025 ones), not of the slower GDDR ones;
- each layer's kernels take a fixed time whatever they read, ``llama_cpp_layer_launch_s`` a layer: what is left of
  the launch and latency of each of its ~20 kernels (norms, RoPE, the KV copy, softmax, the activations'
  quantization) once the step runs as one CUDA / HIP graph, as today's builds run it on every catalog GPU (graphs on
  compute capability 8.0 and later since https://github.com/ggml-org/llama.cpp/pull/6766, 7.0 since
  https://github.com/ggml-org/llama.cpp/pull/25749; HIP graphs on by default). The matrix kernels' reads overlap it,
  so a step takes the longer of the two. In 2025-26 builds Llama 2 7B Q4_0 is read-bound on every scoreboard card
  (75-290 tokens/s from the RTX 3060 to the 5090, tests/data/llama_cpp_gpu_decode_recent.json); builds that launched
  every kernel on its own took about 240 us a layer (Llama 2 7B Q4_0: 112-149 tokens/s on cards from 0.77 to 2 TB/s
  in Dec 2023): ``constants: {llama_cpp_layer_launch_s: 240e-6}`` times one.

Split over GPUs by layers (``-sm layer``, llama.cpp's default) the GPUs run their layers one after another, so a step
reads the same bytes at one GPU's rate as on one GPU, plus ``llama_cpp_gpu_hop_s`` at each GPU-to-GPU boundary: the
scheduler's next split copies the hidden state over (``ggml_backend_tensor_copy_async``, through the host where the
cards have no peer access) and the run's inputs to the next GPU, whose kernels wait for them. Published runs on 2-8
identical cards (tests/data/llama_cpp_multi_gpu.json) lose 0.1-0.4 ms a boundary against the same card alone (Llama 3
8B Q4_K_M: 130.6 tokens/s on one RTX 4090, 118.1 on eight); a 70B step hides it in the noise.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from generator.sizing.constants import Constants


def gpu_read_bytes_per_s(gpu_bandwidth_gb_per_s: float, consts: Constants) -> float:
    """Bytes a second llama.cpp's decode kernels read from one GPU's memory: a share of its rate, under the ceiling."""
    rate_gb_per_s = gpu_bandwidth_gb_per_s * consts.llama_cpp_gpu_bandwidth_efficiency
    return min(rate_gb_per_s, consts.llama_cpp_gpu_read_ceiling_gb_per_s) * 1e9


def kernels_floor_seconds(layers: int, consts: Constants) -> float:
    """The fixed time ``layers`` layers' kernels take a decode step, whatever they read and whichever device runs them."""
    return layers * consts.llama_cpp_layer_launch_s


def resident_step_seconds(read_bytes: float, layers: int, gpu_bandwidth_gb_per_s: float, consts: Constants) -> tuple[str, float]:
    """What binds a decode step reading ``read_bytes`` over ``layers`` layers, and its seconds: the longer of the two.

    ``("hbm", reads)`` or ``("engine", the layers' fixed kernel time)``: the shorter hides under the longer (split over
    GPUs in layers, both add up along the chain).
    """
    memory_s = read_bytes / gpu_read_bytes_per_s(gpu_bandwidth_gb_per_s, consts)
    launches_s = kernels_floor_seconds(layers, consts)
    return ("hbm", memory_s) if memory_s >= launches_s else ("engine", launches_s)


def layer_split_hops(layer_devices: tuple[str, ...]) -> int:
    """GPU-to-GPU boundaries a token crosses through ``layer_devices`` (``"gpu:1"``, ...) in order: 0 on one GPU."""
    gpus = [device.split("+", 1)[0] for device in layer_devices if device.startswith("gpu:")]
    return sum(1 for i in range(1, len(gpus)) if gpus[i] != gpus[i - 1])


def hops_seconds(layer_devices: tuple[str, ...], consts: Constants) -> float:
    """The fixed time a decode step's GPU-to-GPU boundaries add (``llama_cpp_gpu_hop_s`` each)."""
    return layer_split_hops(layer_devices) * consts.llama_cpp_gpu_hop_s
