"""llama.cpp's decode step with every layer on its GPUs: the weights' read against its kernels' fixed time.

One efficiency of the datasheet bandwidth (the serving engines' ``decode_bandwidth_efficiency``) read llama.cpp's
published single-stream runs 5-22% slow on GDDR cards and 5-59% fast on the HBM ones (newuser95's left-over 1; the
rows: tests/data/llama_cpp_gpu_decode.json, group "llama.cpp gpu-resident decode" of benchmarks/calibration_report.py).
Two mechanisms make the difference:

- the matrix-vector kernels read at ``llama_cpp_gpu_bandwidth_efficiency`` of the memory's rate, but no faster than
  ``llama_cpp_gpu_read_ceiling_gb_per_s``: the bytes they keep in flight over the memory's latency (Little's law) cap
  the rate of the fastest cards (A100 / H100 PCIe: 1.0 TB/s of 1.9-2.0 in Dec 2023 builds; the RTX 5090 / RTX PRO 6000
  Max-Q: 1.0-1.1 TB/s of 1.79 in 2025 ones), not of the slower GDDR ones;
- each layer's kernels take a fixed time whatever they read, ``llama_cpp_layer_launch_s`` a dense layer of 24 kernels
  and its kernels' share of that for others (:func:`layer_kernels`, acc165: a MoE layer's routing, shared experts and
  MLA's latent kernels made DeepSeek-V2-Lite's 27 layers take 205 us each on an RTX 3090 where a Llama layer takes
  84): what is left of the launch and latency of each of its kernels (norms, RoPE, the KV copy, softmax, the activations'
  quantization) once the step runs as one CUDA / HIP graph, as today's builds run it on every catalog GPU (graphs on
  compute capability 8.0 and later since https://github.com/ggml-org/llama.cpp/pull/6766, 7.0 since
  https://github.com/ggml-org/llama.cpp/pull/25749; HIP graphs on by default). The matrix kernels' reads overlap it,
  so a step takes the longer of the two. In 2025-26 builds Llama 2 7B Q4_0 is read-bound on every scoreboard card
  (75-290 tokens/s from the RTX 3060 to the 5090, tests/data/llama_cpp_gpu_decode_recent.json); builds that launched
  every kernel on its own took about 240 us a layer (Llama 2 7B Q4_0: 112-149 tokens/s on cards from 0.77 to 2 TB/s
  in Dec 2023): ``constants: {llama_cpp_layer_launch_s: 240e-6}`` times one.

The matrix-vector kernel is the file's type's (:func:`mat_vec_kernel`): F16 / BF16 / F32 matrices read at
``llama_cpp_gpu_16bit_bandwidth_efficiency`` (llama.cpp's mul_mat_vec_f), quantized ones at
``llama_cpp_gpu_bandwidth_efficiency`` (mul_mat_vec_q), under the same ceiling (acc165: Llama 3 8B BF16 on an RTX 4090
read 90% of its rate where the Q4_0 files read 64-80%); a K-quant file on an RDNA card in the HIP build at
``llama_cpp_gpu_rdna_kquant_bandwidth_efficiency`` (acc173: Llama 3 8B Q4_K_M on an RX 7900 XTX read 46-54% of its
rate where Llama 2 7B Q4_0 read 62-72%; mmvq's launch shape there is its own table's, the super-blocks' packed scales
unpacked in each thread: which of the two costs the share is not measured).

Split over GPUs by layers (``-sm layer``, llama.cpp's default) the GPUs run their layers one after another, so a step
reads the same bytes at one GPU's rate as on one GPU, plus ``llama_cpp_gpu_hop_s`` at each GPU-to-GPU boundary: the
scheduler's next split copies the hidden state over (``ggml_backend_tensor_copy_async``, through the host where the
cards have no peer access) and the run's inputs to the next GPU, whose kernels wait for them. Published runs on 2-8
identical cards (tests/data/llama_cpp_multi_gpu.json) lose 0.1-0.4 ms a boundary against the same card alone (Llama 3
8B Q4_K_M: 130.6 tokens/s on one RTX 4090, 118.1 on eight); a 70B step hides it in the noise.
"""

from __future__ import annotations

from generator.sizing.architecture import MLA, SHARED_EXPERT

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from generator.sizing.architecture import Layer
    from generator.sizing.constants import Constants


#: The matrix-vector kernel a batch-1 step of llama.cpp's CUDA backend multiplies a weight type with:
#: ``mmvq`` (ggml-cuda/mmvq.cu) for the quantized block types, which first quantizes the activations to q8_1 and
#: takes each block's integer dot product with its scales; ``mmvf`` (ggml-cuda/mmvf.cu, mmv.cu before 2025) for
#: F16 / BF16 / F32 matrices, which streams the 16-bit pairs straight into float dot products.
#: ``mmvq_k_rdna``: the same mmvq kernel on a K-quant file (Q2_K-Q6_K's 256-weight super-blocks, whose packed 6-bit
#: sub-block scales and mins each thread unpacks) in the HIP build on an RDNA card, which reads a lower share of the
#: card's rate than the Q4_0 blocks (acc173: Llama 3 8B Q4_K_M on an RX 7900 XTX at 46-54% of 960 GB/s,
#: https://github.com/ROCm/ROCm/issues/4868 and https://github.com/ggml-org/llama.cpp/pull/26284, where Llama 2 7B Q4_0
#: reads 62% or more in ROCm builds and 72% in Vulkan; RTX 3090 / 4090 read the same Q4_K_M file at 60% or more).
#: ``mmvq_mxfp4``: the same mmvq kernel over MXFP4 blocks (``vec_dot_mxfp4_q8_1``): 17 bytes of 32 weights (an E8M0
#: scale, 16 bytes of E2M1 nibbles), each 32-bit word gathered byte by byte (``get_int_b1``, where Q4_0's and Q8_0's
#: 2-byte-aligned blocks load 16-bit halves) and its nibbles mapped to int8 through a 16-entry table (``__byte_perm``)
#: before the dp4a (acc187: gpt-oss-20b's MXFP4 experts on RTX 3090 / 4090 at about 40% of the rate where its Q8_0
#: attention reads 72%; https://github.com/ggml-org/llama.cpp/pull/16834, tests/data/llama_cpp_moe_gpu_tg.json).
MAT_VEC_KERNELS = ("mmvq", "mmvf", "mmvq_k_rdna", "mmvq_mxfp4")
#: Weight formats whose routed experts llama.cpp holds in MXFP4 (``expert_mat_vec_kernel``): GGUF's MXFP4_MOE, gpt-oss's
#: file (its other matrices Q8_0).
MXFP4_EXPERT_FORMATS = ("mxfp4_moe",)
#: GGUF's K-quant file types (``q4_k_m`` ...): the weight formats llama.cpp multiplies from K-quant super-blocks.
K_QUANT_PREFIXES = ("q2_k", "q3_k", "q4_k", "q5_k", "q6_k")


def mat_vec_kernel(weight_bits: float, scale_bits: float, format_name: str = "", gpu_architecture: str = "") -> str:
    """The mat-vec kernel of a file's weights on a GPU (:data:`MAT_VEC_KERNELS`).

    ``"mmvf"`` for float weights (16 or 32 bits, no scales: F16 / BF16 / F32 files), ``"mmvq_k_rdna"`` for a K-quant
    file (``format_name``) on an RDNA card (``gpu_architecture``: gpus.json's ``rdna3`` ...), else ``"mmvq"``.
    """
    if weight_bits >= 16 and not scale_bits:
        return "mmvf"
    if gpu_architecture.startswith("rdna") and format_name.startswith(K_QUANT_PREFIXES):
        return "mmvq_k_rdna"
    return "mmvq"


def gpu_read_bytes_per_s(gpu_bandwidth_gb_per_s: float, consts: Constants, kernel: str = "mmvq") -> float:
    """Bytes a second llama.cpp's decode kernels read from one GPU's memory: a share of its rate, under the ceiling.

    The share is the kernel's (``kernel``, :data:`MAT_VEC_KERNELS`): a 16-bit file's float kernel reads more of a
    GDDR card's rate than the quantized one (acc165: Llama 3 8B BF16 on an RTX 4090 at 90%, Q4_0 files at 64-80%); a
    K-quant file's on an RDNA card less (acc173, :data:`MAT_VEC_KERNELS`).
    """
    if kernel not in MAT_VEC_KERNELS:
        raise ValueError(f"unknown llama.cpp mat-vec kernel {kernel!r}; one of {', '.join(MAT_VEC_KERNELS)}")
    share = {
        "mmvf": consts.llama_cpp_gpu_16bit_bandwidth_efficiency,
        "mmvq_k_rdna": consts.llama_cpp_gpu_rdna_kquant_bandwidth_efficiency,
        "mmvq_mxfp4": consts.llama_cpp_gpu_mxfp4_bandwidth_efficiency,
    }.get(kernel, consts.llama_cpp_gpu_bandwidth_efficiency)
    return min(gpu_bandwidth_gb_per_s * share, consts.llama_cpp_gpu_read_ceiling_gb_per_s) * 1e9


#: Kernels a dense decoder layer (Llama's) runs for one token in llama.cpp's CUDA graph, against which
#: ``llama_cpp_layer_launch_s`` is timed: 10 besides the matrices (the two RMS norms, RoPE of Q and of K, the K and
#: the V rows stored, the attention, the gated activation, the two residual adds) and two for each of its 7 matrices
#: (the activations quantized to q8_1, then the mat-vec kernel).
DENSE_LAYER_KERNELS = 24
#: Kernels every decoder layer runs besides its matrices (the dense layer's 10).
LAYER_BASE_KERNELS = 10
#: Kernels each matrix multiplication runs: the activations' q8_1 quantization and the mat-vec (one mul_mat_id
#: kernel for all of a token's routed experts of one matrix).
MATRIX_KERNELS = 2
#: A MoE layer's routing besides its router matrix (build_moe_ffn in llama.cpp's src/llama-graph.cpp): the top-k
#: selection of the router's probabilities (softmax / argsort, fused in one kernel in later builds), the selected
#: weights gathered (get_rows), the experts' outputs weighted and summed.
ROUTING_KERNELS = 4
#: Shared experts beside the routed ones: their activation and their add to the routed sum.
SHARED_EXPERT_KERNELS = 2
#: Multi-head latent attention (DeepSeek-V2 / V3's MLA as src/models/deepseek2.cpp builds it): the latent's RMS norm
#: and the Q and K concatenations of the rotary and latent parts, less the V store (V is a view of the latent K).
MLA_KERNELS = 2


def layer_kernels(layer: Layer) -> int:
    """Kernels llama.cpp runs for one decoder layer of one token: the base, two a matrix, the routing, MLA's own.

    An MLA layer's ``kv_b_proj`` is two matrices (llama.cpp's GGUF holds it as ``attn_k_b`` and ``attn_v_b``, the
    absorbed halves multiplied on either side of the attention); every other linear, the router included, is one.
    """
    mla = layer.attention == MLA
    matrices = sum(2 if mla and lin.name.endswith("kv_b_proj") else 1 for lin in layer.linears)
    kernels = LAYER_BASE_KERNELS + MATRIX_KERNELS * matrices
    if layer.is_moe:
        kernels += ROUTING_KERNELS
    if any(lin.group == SHARED_EXPERT for lin in layer.linears):
        kernels += SHARED_EXPERT_KERNELS
    return kernels + (MLA_KERNELS if mla else 0)


def dense_layer_equivalents(layers: Iterable[Layer]) -> float:
    """``layers`` counted in dense layers' kernels (acc165): a MoE or MLA layer runs more kernels than a Llama layer."""
    return sum(layer_kernels(layer) for layer in layers) / DENSE_LAYER_KERNELS


def kernels_floor_seconds(layers: float, consts: Constants) -> float:
    """The fixed time a decode step's kernels take, whatever they read and whichever device runs them.

    ``layers``: the step's layers in dense-layer equivalents (:func:`dense_layer_equivalents`).
    """
    return layers * consts.llama_cpp_layer_launch_s


def expert_mat_vec_kernel(format_name: str, kernel: str) -> str:
    """The mat-vec kernel of a file's routed experts (acc187).

    ``"mmvq_mxfp4"`` where the file holds them in MXFP4 (the MXFP4_MOE GGUF, :data:`MXFP4_EXPERT_FORMATS`), else the
    file's ``kernel`` (:func:`mat_vec_kernel`).
    """
    return "mmvq_mxfp4" if format_name in MXFP4_EXPERT_FORMATS else kernel


def resident_step_seconds(
    read_bytes: float,
    layers: float,
    gpu_bandwidth_gb_per_s: float,
    consts: Constants,
    kernel: str = "mmvq",
    expert_bytes: float = 0.0,
    expert_kernel: str = "",
) -> tuple[str, float]:
    """What binds a decode step reading ``read_bytes`` over ``layers`` layers, and its seconds: the longer of the two.

    ``("hbm", reads)`` or ``("engine", the layers' fixed kernel time)``: the shorter hides under the longer (split over
    GPUs in layers, both add up along the chain). ``layers``: in dense-layer equivalents (:func:`dense_layer_equivalents`);
    ``kernel``: the weights' mat-vec kernel (:func:`mat_vec_kernel`); ``expert_bytes``: the routed experts' part of
    ``read_bytes``, read by ``expert_kernel`` (:func:`expert_mat_vec_kernel`; acc187: a MXFP4_MOE file's MXFP4 experts
    beside its Q8_0 attention).
    """
    experts = min(max(0.0, expert_bytes), read_bytes)
    memory_s = (read_bytes - experts) / gpu_read_bytes_per_s(gpu_bandwidth_gb_per_s, consts, kernel)
    if experts:
        memory_s += experts / gpu_read_bytes_per_s(gpu_bandwidth_gb_per_s, consts, expert_kernel or kernel)
    launches_s = kernels_floor_seconds(layers, consts)
    return ("hbm", memory_s) if memory_s >= launches_s else ("engine", launches_s)


def layer_split_hops(layer_devices: tuple[str, ...]) -> int:
    """GPU-to-GPU boundaries a token crosses through ``layer_devices`` (``"gpu:1"``, ...) in order: 0 on one GPU."""
    gpus = [device.split("+", 1)[0] for device in layer_devices if device.startswith("gpu:")]
    return sum(1 for i in range(1, len(gpus)) if gpus[i] != gpus[i - 1])


def hops_seconds(layer_devices: tuple[str, ...], consts: Constants) -> float:
    """The fixed time a decode step's GPU-to-GPU boundaries add (``llama_cpp_gpu_hop_s`` each)."""
    return layer_split_hops(layer_devices) * consts.llama_cpp_gpu_hop_s
