"""llama.cpp's prompt with every layer on its GPUs: int8 or fp16 tensor-core GEMMs, fp16 copies, time a layer.

The serving engines' prefill (the dense 16-bit rate at ``prefill_compute_efficiency``) read llama.cpp's published
pp512 runs up to 6.4x fast (tests/data/llama_cpp_gpu_decode.json, group "llama.cpp gpu-resident prompt" of
benchmarks/calibration_report.py). llama.cpp takes a prompt in passes of ``offload_ubatch_tokens`` (its -ub, 512), and
the builds of those runs multiply a pass's matrices through cuBLAS (``ggml_cuda_op_mul_mat_cublas``): a quantized weight
is first converted to a temporary fp16 copy (``to_fp16_cuda``), then ``cublasGemmEx`` runs with ``CUBLAS_COMPUTE_16F``.
A pass therefore takes:

- the GEMMs' FLOPs at ``llama_cpp_prompt_gemm_efficiency`` of the card's 16-bit tensor rate; a GeForce card runs
  fp16-accumulate at ``consumer_fp16_accumulate_speedup`` times the fp32-accumulate rate its catalog entry quotes
  (RTX 4090: 330.3 against 165.2 dense TFLOPS; the workstation and data-centre cards run both at one rate);
- for a quantized file, every weight read and written again as fp16 each pass, at ``llama_cpp_dequant_bandwidth_efficiency``
  of the memory's rate but no faster than ``llama_cpp_dequant_ceiling_gb_per_s`` (an f16 file skips it: Llama 2 7B
  q4_0 runs 15-34% below its f16 on the same card, 23-36 ms a pass on cards of 0.94 to 2.0 TB/s alike);
- ``llama_cpp_prompt_layer_s`` a layer, whatever the card: the pass's other kernels (norms, RoPE, the attention's
  per-head products and softmax over the pass, the activations' fp16 copies) and their launches. A layer is counted in
  dense layers' kernels as the decode step counts it (``dense_layer_equivalents``, llama_cpp_gpu.py): a MoE layer's
  routing (top-k, weights gathered, weighted, summed), shared experts and MLA's latent kernels run over the whole pass
  too (acc172: DeepSeek-V2-Lite's 27 layers count 46.7, gpt-oss-20b's 24 count 30, a Llama layer 1). That figure is a
  512-token pass's; a pass of other tokens takes the line from the decode step's kernel time through it
  (:func:`pass_layer_seconds`, acc180).

On AMD GPUs llama.cpp's HIP build compiles the same source (``ggml_cuda_should_use_mmq`` in ggml-cuda's mmq.cu picks
the kernel) and the maker's architecture decides (:func:`prompt_gpu`): a CDNA card (MI210, MI300X: ``amd_mfma_available``)
multiplies a quantized file with MMQ on its MFMA int8 matrix cores, the int8 path above at the card's dense int8 rate; an
RDNA 3 card (RX 7900 XTX, W7900) in the builds of the published rows (ROCm scoreboard, mid / late 2025) takes MMQ only
below 64 tokens (``MMQ_DP4A_MAX_BATCH_SIZE``; its last line excludes RDNA 3 and RDNA 4 from larger batches), so a pass of
512 tokens dequantizes to fp16 and runs hipBLAS: the cuBLAS path above, without the GeForce fp16-accumulate factor (RDNA
3's WMMA runs fp16 at the one rate its catalog entry quotes). Later builds turned MMQ on for RDNA 3
(``amd_wmma_available`` with RDNA 3, the commit of :data:`MFMA_ARCHITECTURES`); no published row times them. Other makers'
GPUs (Intel, ...) keep the serving engines' figure, which no row checks.

Builds since June 2024 (the product's figures) multiply a quantized file's matrices with int8 tensor-core kernels on
cards that have them (MMQ, llama.cpp PR #7676: RTX 4090 Llama 3 8B Q4_0 pp512 1.65x the cuBLAS path): no fp16 copy, the
prompt's FLOPs at ``llama_cpp_mmq_int8_efficiency`` of the card's dense int8 rate (the catalog's ``dense_tflops.int8``);
an f16 file, and a card without an int8 rate (a V100: no int8 mma), keep the cuBLAS fp16 path above. Those builds'
other kernels take ``llama_cpp_prompt_layer_s`` a layer (tests/data/llama_cpp_gpu_decode_recent.json, group "llama.cpp
gpu-resident prompt, current builds"); the Dec 2023 / May 2024 rows are timed in benchmarks/calibration_report.py with
their builds' path (no MMQ) and layer time (``PROMPT_LAYER_BEFORE_MMQ_S``).

A MoE model's routed experts multiply in one MUL_MAT_ID per matrix, each expert's tokens in tiles of its own, the
tile's width chosen against the whole pass (:func:`expert_tile_fill`): an expert handed 64 of a pass's 512 tokens fills
half of its 128-token tile and takes the time of a full one, so the routed FLOPs run at the MMQ rate over that fill.
Routing is taken as uniform but random, not even (:func:`expected_expert_tiles`): an expert's count is binomial, an
expert handed no token runs no tile and one handed more than 128 a second; real routers are more skewed than that,
which no figure here models (the fill is then an upper bound).
A pass's MMQ GEMMs take no less than reading the matrices it touches at the decode's read rate, a routed expert only
when one of its tokens picks it (:func:`touched_matrix_bytes`, acc180): short passes (-ub 16 to 128) of a MoE model
read a share of its experts, long ones all of them; at 512 tokens every row's GEMMs outlast their reads.

Without flash attention (llama-bench ``-fa 0``, the tool's default until https://github.com/ggml-org/llama.cpp/pull/23714,
May 2026; ``flash_attention`` False) a pass multiplies K by Q into a score matrix in memory, softmaxes it and
multiplies it by V: each element (pass tokens x KV cells x query heads, :func:`score_elements`) is written and read
back, at ``llama_cpp_score_bytes_per_element`` bytes an element of the decode's read rate (acc204; acc200 found the
term on the -ub 1024-4096 rows). With flash attention (``-fa 1``; the default ``auto`` of llama.cpp's tools since
https://github.com/ggml-org/llama.cpp/pull/15434, Aug 2025, and of llama-bench since PR #23714) the fused kernel keeps
its tiles on chip and the term is 0.
"""

from __future__ import annotations

import functools
import math

from generator.sizing.architecture import EXPERT, routed_expert_params
from generator.sizing.llama_cpp_gpu import dense_layer_equivalents, gpu_read_bytes_per_s

TYPE_CHECKING = False
if TYPE_CHECKING:
    from generator.sizing.architecture import Architecture
    from generator.sizing.constants import Constants
    from generator.sizing.offload import Machine
    from generator.sizing.precision import WeightFormat

#: The GPU maker (``GpuSpec.vendor``) whose CUDA runs the constants were fitted on.
CUDA_VENDOR = "nvidia"
#: The GPU maker whose HIP (ROCm) build of the same kernels :func:`prompt_gpu` times.
HIP_VENDOR = "amd"
#: AMD architectures (``gpus.json`` names) whose HIP build multiplies a quantized prompt with MMQ on MFMA int8 matrix
#: cores: ``amd_mfma_available(cc)`` is ``GGML_CUDA_CC_IS_CDNA(cc)`` (ggml-cuda common.cuh), and
#: ``ggml_cuda_should_use_mmq`` returns true there for any batch of a Q4_0 / Q4_1 / Q5_0 / Q5_1 file, and for every
#: type on CDNA 3 (https://github.com/ggml-org/llama.cpp/blob/027ef8769913a5f665e287c5e1f13d9d633a9d57/ggml/src/ggml-cuda/mmq.cu).
#: Every other AMD architecture (RDNA 3 in the rows' 2025 builds, whose last line read ``(!RDNA4 && !RDNA3 && !CDNA) ||
#: ne11 < MMQ_DP4A_MAX_BATCH_SIZE``: stored copies of that mmq.cu, search-index file ids 659734037 and 54206692937)
#: dequantizes a pass of 64 tokens or more for hipBLAS.
MFMA_ARCHITECTURES = ("cdna", "cdna2", "cdna3")

#: The widest MMQ tile in tokens (``mmq_x``) on NVIDIA cards with int8 tensor cores (``get_mmq_x_max_host``: 128 where
#: ``turing_mma_available``); ``mul_mat_q_case`` takes the narrowest width, in steps of 8, that covers ``ncols_max``
#: tokens in the fewest tiles. A kernel fact, not a fitted figure:
#: https://github.com/ggml-org/llama.cpp/blob/00cd208554e3f21e967084e9845c4de64dc761c0/ggml/src/ggml-cuda/mmq.cuh
MMQ_TILE_TOKENS_MAX = 128
#: ``mul_mat_q_case`` tries tile widths in steps of 8 tokens (same file).
MMQ_TILE_TOKENS_STEP = 8
#: The pass, in tokens, of the runs ``llama_cpp_prompt_layer_s`` was fitted on (every row a pp512 at the default -ub
#: 512): a fact of the fit, not a fitted figure (:func:`pass_layer_seconds`).
PROMPT_LAYER_FIT_TOKENS = 512


def prompt_gpu(machine: Machine) -> tuple[float, float, bool, float] | None:
    """One GPU's rates for :func:`resident_prompt_seconds` by the kernels llama.cpp runs on it; None: another maker.

    (16-bit TFLOPS, memory GB/s, fp16-accumulate GeForce, dense int8 TOPS or 0); None: a maker no row times (the
    serving prefill).

    NVIDIA: as the catalog gives them. AMD (HIP): never the GeForce fp16-accumulate factor; the int8 rate (MMQ) on CDNA
    alone (:data:`MFMA_ARCHITECTURES`), 0 elsewhere (RDNA 3: dequantize, then hipBLAS fp16).
    """
    rates = (machine.gpu_tflops, machine.gpu_bandwidth_gb_per_s)
    if machine.gpu_vendor == CUDA_VENDOR:
        return (*rates, machine.gpu_consumer, machine.gpu_int8_tflops)
    if machine.gpu_vendor == HIP_VENDOR:
        return (*rates, False, machine.gpu_int8_tflops if machine.gpu_architecture in MFMA_ARCHITECTURES else 0.0)
    return None


def gemm_tflops(gpu_tflops: float, consumer: bool, consts: Constants) -> float:
    """The rate llama.cpp's fp16 cuBLAS GEMMs reach on one GPU of 16-bit tensor rate ``gpu_tflops`` (TFLOPS)."""
    speedup = consts.consumer_fp16_accumulate_speedup if consumer else 1.0
    return gpu_tflops * speedup * consts.llama_cpp_prompt_gemm_efficiency


def uses_int8_kernels(fmt: WeightFormat, int8_tflops: float) -> bool:
    """Whether llama.cpp multiplies ``fmt``'s matrices with its int8 tensor-core kernels (MMQ).

    A quantized file on a card with an int8 rate (``int8_tflops`` > 0; 0: none, or not published).
    """
    return fmt.bits < 16 and int8_tflops > 0


def dequantized_bytes(arch: Architecture, fmt: WeightFormat, matrix_bytes: int) -> float:
    """Bytes a pass moves converting a quantized file's ``matrix_bytes`` of matrices to fp16.

    Read, and written at 2 bytes a weight; 0 for a 16-bit file, whose matrices cuBLAS reads as they are.
    """
    if fmt.bits >= 16:
        return 0.0
    params = sum(layer.params for layer in arch.layers) + arch.logits_params
    return float(matrix_bytes + 2 * params)


def mmq_tile_tokens(pass_tokens: int) -> int:
    """The MMQ tile width (tokens) ``mul_mat_q_case`` picks for a GEMM whose widest operand has ``pass_tokens`` columns.

    The narrowest width in steps of ``MMQ_TILE_TOKENS_STEP`` that covers them in the fewest tiles, at most
    ``MMQ_TILE_TOKENS_MAX``: 128 for any pass of 121 tokens or more.
    """
    steps = -(-max(1, pass_tokens) // MMQ_TILE_TOKENS_STEP)
    return min(MMQ_TILE_TOKENS_MAX, steps * MMQ_TILE_TOKENS_STEP)


@functools.lru_cache(maxsize=256)
def expected_expert_tiles(pass_tokens: int, share: float, width: int) -> float:
    """Expected MMQ tiles, ``E[ceil(n / width)]``, of one expert handed ``n`` of a pass's ``pass_tokens`` tokens.

    Each token picks its ``top_k`` experts apart, so under uniform routing an expert is one of a token's picks with
    probability ``share = top_k / experts``, independently of the other tokens: ``n`` is binomial(``pass_tokens``,
    ``share``), exactly (no fitted figure). Summed over experts (linearity) it is the pass's expected tile count
    whatever the experts' counts share between them. The probabilities are summed over every count and the tiles divided
    by that sum, so rounding in ``lgamma`` leaves an even 64-token share at exactly one tile's expectation to 1e-15.
    """
    if pass_tokens <= 0 or share <= 0.0:
        return 0.0
    if share >= 1.0:
        return float(-(-pass_tokens // width))
    log_p, log_q = math.log(share), math.log1p(-share)
    log_all = math.lgamma(pass_tokens + 1)
    tiles = total = 0.0
    for n in range(pass_tokens + 1):
        log_pmf = log_all - math.lgamma(n + 1) - math.lgamma(pass_tokens - n + 1) + n * log_p + (pass_tokens - n) * log_q
        pmf = math.exp(log_pmf)
        tiles += -(-n // width) * pmf
        total += pmf
    return tiles / total


def expert_tile_fill(arch: Architecture, pass_tokens: int) -> float:
    """Share of its MMQ tiles' columns a routed expert fills in a pass of ``pass_tokens`` tokens (1.0 for a dense model).

    llama.cpp's MUL_MAT_ID (``ggml_cuda_mul_mat_q`` with ids, ggml/src/ggml-cuda/mmq.cu at the commit above) sorts the
    pass's tokens by expert (``expert_bounds``) and gives each expert its own tiles, but passes the pass's token count
    (``ne12``) as ``ncols_max``, so the tile width is chosen against the whole pass: an expert with ``n`` tokens runs
    ``ceil(n / width)`` full tiles, and the kernel skips an empty expert's tiles (``jt*mmq_x >= col_diff``). The fill is
    the experts' mean count, ``pass_tokens * top_k / experts``, over the expected tiles' columns under uniform random
    routing (:func:`expected_expert_tiles`): gpt-oss-20b's 64 of a 512-token pass fill half a tile as with an even
    share, Mixtral's mean 128 spills into a second tile for about half its experts.
    """
    experts, top_k = arch.routed_experts
    if not experts or pass_tokens <= 0:
        return 1.0
    width = mmq_tile_tokens(pass_tokens)
    share = min(1.0, top_k / experts)
    tiles = expected_expert_tiles(pass_tokens, share, width)
    return min(1.0, pass_tokens * share / (tiles * width)) if tiles > 0 else 1.0


def routed_tile_flops(arch: Architecture, prompt_tokens: int, ubatch_tokens: int) -> float:
    """The routed experts' extra FLOPs a prompt's MMQ passes spend on their tiles' empty columns.

    Each pass of ``ubatch_tokens`` (the last one shorter) multiplies ``2 * routed_expert_params`` a token; its tiles do
    ``1 / expert_tile_fill`` times that work. 0 for a dense model.
    """
    routed = routed_expert_params(arch)
    if not routed or prompt_tokens <= 0:
        return 0.0
    full, last = divmod(prompt_tokens, max(1, ubatch_tokens))
    extra = 0.0
    for tokens, count in ((ubatch_tokens, full), (last, 1 if last else 0)):
        if count:
            extra += count * 2.0 * routed * tokens * (1.0 / expert_tile_fill(arch, tokens) - 1.0)
    return extra


def pass_layer_seconds(pass_tokens: int, consts: Constants) -> float:
    """A dense layer's time besides its GEMMs in one pass of ``pass_tokens`` tokens (acc180).

    The pass's other kernels (norms, RoPE, the activations' quantization, the adds, the attention's softmax over the
    pass) each move the pass's activations, so their time is what they take with one token, the decode step's
    ``llama_cpp_layer_launch_s`` (the same kernels, launched from one CUDA graph), plus a share per token:
    ``llama_cpp_prompt_layer_s`` at the :data:`PROMPT_LAYER_FIT_TOKENS`-token passes it was fitted on, by a line through
    those two points (no figure fitted here). A 16-token pass of a -ub 16 run takes 94 us a layer, not 400.
    """
    launch = consts.llama_cpp_layer_launch_s
    per_token = max(0.0, consts.llama_cpp_prompt_layer_s - launch) / PROMPT_LAYER_FIT_TOKENS
    return launch + per_token * max(0, pass_tokens)


def touched_matrix_bytes(arch: Architecture, matrix_bytes: int, pass_tokens: int) -> float:
    """Bytes of a file's ``matrix_bytes`` of matrices a pass of ``pass_tokens`` tokens reads (acc180).

    Every matrix but the routed experts', and of those the experts one of the pass's tokens picks: under uniform random
    routing each expert of a layer is picked by none of them with probability ``(1 - top_k / experts) ** pass_tokens``
    (a 16-token pass of Qwen3-30B-A3B reads 64% of its experts, a 64-token one 98%). The matrices' bytes are shared by
    parameter, the routed experts' share dropped for the experts no token picks.
    """
    total = sum(layer.params for layer in arch.layers) + arch.logits_params
    if total <= 0:
        return float(matrix_bytes)
    idle = 0.0
    for layer in arch.layers:
        for lin in layer.linears:
            if lin.group == EXPERT and lin.copies:
                share = min(1.0, layer.experts_per_token / lin.copies)
                idle += (lin.weight_params + lin.bias_params) * (1.0 - share) ** max(0, pass_tokens)
    return matrix_bytes * (1.0 - idle / total)


def _passes(prompt_tokens: int, ubatch_tokens: int) -> tuple[tuple[int, int], ...]:
    """(tokens, count) of a prompt's passes: full ones of ``ubatch_tokens``, then the rest."""
    full, rest = divmod(prompt_tokens, max(1, ubatch_tokens))
    return tuple((tokens, count) for tokens, count in ((ubatch_tokens, full), (rest, 1 if rest else 0)) if count)


def score_elements(arch: Architecture, prompt_tokens: int, ubatch_tokens: int) -> float:
    """Attention score elements a prompt's passes write without flash attention, from an empty cache.

    A pass of ``n`` tokens after ``done`` cached ones scores each query head against ``done + n`` KV cells in a layer
    over the whole context, ``n`` plus its window in a sliding one (llama.cpp keeps the window and the pass; gpt-oss's
    128-token layers), none in a linear-attention layer (no score matrix). A kernel count, no fitted figure.
    """
    windows: dict[int | None, int] = {}
    for layer in arch.layers:
        if layer.state is None:
            windows[layer.window_tokens] = windows.get(layer.window_tokens, 0) + 1
    ubatch = max(1, ubatch_tokens)
    total = 0.0
    for window, count in windows.items():
        done = 0
        while done < prompt_tokens:
            tokens = min(ubatch, prompt_tokens - done)
            cells = done + tokens if window is None else min(done + tokens, tokens + window)
            total += count * tokens * cells
            done += tokens
    return total * arch.num_attention_heads


def score_matrix_seconds(arch: Architecture, prompt_tokens: int, bandwidth_gb_per_s: float, consts: Constants) -> float:
    """Seconds a prompt's passes without flash attention spend writing and reading their score matrices (acc204)."""
    elements = score_elements(arch, prompt_tokens, consts.offload_ubatch_tokens)
    return elements * consts.llama_cpp_score_bytes_per_element / gpu_read_bytes_per_s(bandwidth_gb_per_s, consts)


def resident_prompt_seconds(
    arch: Architecture,
    fmt: WeightFormat,
    prompt_tokens: int,
    gemm_flops: float,
    matrix_bytes: int,
    gpu: tuple[float, float, bool, float],
    consts: Constants,
    flash_attention: bool = True,
) -> float:
    """Seconds llama.cpp takes a prompt of ``prompt_tokens`` with every layer on its GPUs.

    ``gemm_flops``: the prompt's FLOPs (linear layers and attention); ``matrix_bytes``: the file's matrices the passes
    multiply (the decoder layers and the LM head); ``gpu``: one GPU's (16-bit TFLOPS, memory GB/s, consumer card,
    dense int8 TOPS or 0); ``flash_attention``: llama.cpp's -fa (off: :func:`score_matrix_seconds` more).
    Over GPUs in layers the passes run through them in turn: the same sum as on one.
    """
    if prompt_tokens <= 0:
        return 0.0
    tflops, bandwidth_gb_per_s, consumer, int8_tflops = gpu
    ubatch = consts.offload_ubatch_tokens
    passes = -(-prompt_tokens // max(1, ubatch))
    # a MoE / MLA layer's routing, shared-expert and latent kernels counted against a dense layer's (acc172), each
    # pass's by its tokens (acc180, pass_layer_seconds)
    layer_passes_s = sum(count * pass_layer_seconds(tokens, consts) for tokens, count in _passes(prompt_tokens, ubatch))
    layers_s = dense_layer_equivalents(arch.layers) * layer_passes_s
    if not flash_attention:
        layers_s += score_matrix_seconds(arch, prompt_tokens, bandwidth_gb_per_s, consts)
    if uses_int8_kernels(fmt, int8_tflops):
        # a pass's GEMMs take their FLOPs at the MMQ rate, a MoE model's experts whole tiles for the tokens each is
        # routed (expert_tile_fill), but no less than reading the matrices the pass touches (acc180)
        rate = int8_tflops * consts.llama_cpp_mmq_int8_efficiency * 1e12
        read_rate = gpu_read_bytes_per_s(bandwidth_gb_per_s, consts)
        gemm_s = 0.0
        for tokens, count in _passes(prompt_tokens, ubatch):
            flops = gemm_flops * tokens / prompt_tokens + routed_tile_flops(arch, tokens, tokens)
            read_s = touched_matrix_bytes(arch, matrix_bytes, tokens) / read_rate
            gemm_s += count * max(flops / rate, read_s)
        return gemm_s + layers_s
    gemm_s = gemm_flops / (gemm_tflops(tflops, consumer, consts) * 1e12)
    dequant_gb_per_s = bandwidth_gb_per_s * consts.llama_cpp_dequant_bandwidth_efficiency
    dequant_rate = min(dequant_gb_per_s, consts.llama_cpp_dequant_ceiling_gb_per_s) * 1e9
    dequant_s = passes * dequantized_bytes(arch, fmt, matrix_bytes) / dequant_rate
    return gemm_s + dequant_s + layers_s
