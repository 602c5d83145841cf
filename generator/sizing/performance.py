"""Roofline performance: decode and prefill steps, TP/EP communication, pipelines, training time.

A step's kernels run one after another, each bound by its own roofline. The linear layers take the
longer of streaming the weights the step touches (MoE layers read only the experts a batch routes to:
with ``b`` tokens and top-``k`` of ``E`` experts, ``E x (1 - (1 - k/E)^b)`` are expected to be touched)
and their matmuls (``2 x active params`` FLOPs per token; the LM head only for tokens that need
logits) at the weight format's tensor rate; W4A4 FP4 GEMMs reach ``fp4_gemm_efficiency_ratio`` of
that rate, and block-scaled FP8 GEMMs on tensor cores without block scales (Hopper, Ada, CDNA3)
``fp8_block_gemm_efficiency_ratio`` of it. A GEMM's efficiency grows with the tokens it multiplies, ``peak x t / (t +
gemm_half_efficiency_tokens)``, so routed experts, which see ``batch x top_k / experts touched``
tokens each, run slower per FLOP than dense layers. A matrix every tensor-parallel rank holds whole (MLA's
down-projections ``q_a_proj`` / ``kv_a_proj_with_mqa``, MoE routers) is multiplied whole by every rank: only
attention data parallelism splits its tokens. The attention takes the longer of reading every
sequence's KV cache and its FLOPs (``4 x heads x head width`` per cached token and layer; MLA in its
absorbed form attends over the ``kv_lora_rank + rope`` latent) at the bf16 rate; a prompt's attention runs MLA in
its materialized form, ``2 x heads x (query-key width + value width)`` per pair of tokens. Then come the
tensor-parallel all-reduces (two per layer) and the expert-parallel dispatch and combine (two per MoE
layer), each with a latency and a bandwidth term, and the engine's own time per iteration and per
running sequence; a service with LoRA adapters adds their kernels' roofline
(:attr:`Accelerator.lora`). Where expert parallelism places whole experts on ranks, every MoE layer waits for the rank whose
experts draw the most tokens (:func:`busiest_expert_rank_load`): its expert GEMMs and its share of the all-to-all.

Offline throughput is in-flight batching at steady state: every step decodes the batch and prefills as
many prompt tokens as finishing sequences free (``batch x input / output``), sharing the step's weight
reads. A static batch (a latency run) prefills first, then decodes without new arrivals. Pipelines:
``pp`` micro-batches are in flight, each an engine iteration of its own, and the last stage (with the
LM head) sets the pace; fewer sequences than stages leave stages idle (the bubble). A single prompt
passes the stages one after another (TTFT).
"""

from __future__ import annotations

import bisect
import itertools
import math

from generator.errors import InputError
from generator.named_tuple import NamedTuple
from generator.sizing import op_checkpointing
from generator.sizing.alltoall_split import alltoall_gbps
from generator.sizing.architecture import EXPERT, MLA, Architecture, Layer
from generator.sizing.constants import Constants
from generator.sizing.frameworks import checkpoint_stops_early, recomputes_ops
from generator.sizing.kv_cache import ceil_bytes, stage_decode_bits
from generator.sizing.kv_head_reads import per_query_head_decode_bits
from generator.sizing.linear_attention import layer_state_flops
from generator.sizing.loaded_weights import runs_marlin_moe
from generator.sizing.memo import memoized
from generator.sizing.moe_layer_step import engine_moe_layer_step_s
from generator.sizing.precision import storage_family
from generator.sizing.prompt_attention_kernel import prompt_attention_rate
from generator.sizing.weights import Parallelism, WeightSizes, dequantized_flop_shares, replicated_on_every_rank

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from collections.abc import Collection

    from generator.catalog.records import GpuSpec
    from generator.sizing.lora_serving import LoraStep
    from generator.sizing.precision import WeightFormat

#: PCIe x16 bandwidth per direction, GB/s, by generation (hardware_facts.json, PCIe fact record).
PCIE_X16_GB_PER_S = {3: 15.75, 4: 31.5, 5: 63.0, 6: 121.0}

#: Share of its PCIe rate (:func:`pcie_gb_per_s`) a GPU reaches in a TP group's ring all-reduce where the cards have no
#: peer access to each other over PCIe (``gpus.json`` ``pcie.peer_to_peer`` false: the L40S). NCCL then diverts every
#: transfer between two GPUs through host memory (``ncclTopoComputePaths``, "Divert all traffic through the CPU",
#: HOST_STAGED_SOURCES[0]; its SHM transport), and TensorRT-LLM's AUTO all-reduce takes NCCL on a GPU without P2P or
#: NVLink (HOST_STAGED_SOURCES[1]), vLLM's custom all-reduce likewise needs P2P: so every ring step is written to and read
#: back from the CPU's memory by the GPUs' DMA, and "on PCI systems, the performance you get is usually determined by the
#: bandwidth your CPU and memory can deliver" (NCCL's maintainer, HOST_STAGED_SOURCES[2], on 8 GPUs without P2P on a
#: two-socket Intel server: 28 GB/s of all_reduce_perf bus bandwidth with 8 GPUs, 35 GB/s with 4, over PCIe Gen5 x16's
#: 63 GB/s: 0.44 and 0.56). 0.45 fitted across every calibration group at once (benchmarks/calibration_report.py; the
#: only rows it moves are the L40S TP4 / TP8 runs of TensorRT-LLM v0.12.0's perf overview: acc102 entry of
#: benchmarks/CALIBRATION.md), inside that measured range.
HOST_STAGED_ALLREDUCE_SHARE = 0.45
HOST_STAGED_SOURCES = (
    "https://github.com/NVIDIA/nccl/blob/master/src/graph/paths.cc",
    "https://github.com/NVIDIA/TensorRT-LLM/blob/main/cpp/tensorrt_llm/plugins/ncclPlugin/allreducePlugin.cpp",
    "https://github.com/NVIDIA/nccl/issues/1639",
)


def host_staged_text(acc: Accelerator, gpu_name: str) -> str:
    """What a link :attr:`Accelerator.host_staged` is timed at, and why: its share of the PCIe rate."""
    return (
        f"{HOST_STAGED_ALLREDUCE_SHARE:g} of its {acc.link_gb_per_s / HOST_STAGED_ALLREDUCE_SHARE:g} GB/s: the "
        f"{gpu_name} has no GPU peer-to-peer over PCIe, so NCCL stages each transfer through host memory"
    )


class Accelerator(NamedTuple):
    """What the roofline needs to know of a GPU."""

    memory_bandwidth_gb_per_s: float
    dense_tflops: float
    #: Per-direction bandwidth between the GPUs of a TP group (NVLink / Infinity Fabric as NCCL / RCCL count it, else PCIe), GB/s.
    link_gb_per_s: float
    #: Whether the TP group talks over NVLink / Infinity Fabric (else PCIe).
    fast_link: bool
    #: Dense bf16 rate for attention (FlashAttention / FlashMLA run in bf16); 0: ``dense_tflops``.
    attention_tflops: float = 0.0
    #: Tensor format the linear layers compute in (``fp4``, ``fp8``, ``bf16``...).
    compute: str = ""
    #: The serving host's per-sequence host time over the reference host's (its CPU's single-thread speed).
    host_time_scale: float = 1.0
    #: A TP all-reduce's time over the modelled one by message size, ``(bytes, factor)`` pairs (the GPU's collective
    #: library measured against the reference GPU's over the fast link: :attr:`GpuSpec.allreduce_vs_reference`); empty: 1.
    allreduce_time_scale: tuple[tuple[int, float], ...] = ()
    #: The weight format whose quantized matrices the linear layers' kernels dequantize inside the GEMM's main loop
    #: (W4A16 / W8A16 mixed-input kernels: :func:`accelerator_for`); None: every matrix multiplied as stored.
    dequantized: WeightFormat | None = None
    #: The mixed-input kernel the engine runs the dense (non-expert) dequantized matrices with (:func:`dense_dequant_kernel`):
    #: ``machete`` or ``marlin``; "": none dequantized.
    dequant_kernel: str = ""
    #: The CUDA-core 16-bit rate (half2 FMAs), TFLOP/s normalised as ``dense_tflops``, where the dense kernel is
    #: ``exllama`` (:data:`EXLLAMA_MAX_Q_GEMM_ROWS`: it multiplies small passes as stored on the CUDA cores); 0: none.
    scalar_half_tflops: float = 0.0
    #: The routed experts' dequantizing kernel where it is known to be Marlin's (:func:`expert_dequant_kernel`), which
    #: then runs them at its dense ratio; "": the grouped kernels of ``dequant_expert_gemm_efficiency_ratio``.
    expert_dequant_kernel: str = ""
    #: The reference GPU's measured share of its peak in ``compute`` (:meth:`GpuSpec.reference_share`): ``dense_tflops``
    #: and the rates derived from it are normalised to the reference GPU the efficiencies were fitted on, and times this
    #: are the rates the GPU is modelled to reach, the ones output says (newuser42 item 9); the sizing never reads it.
    reference_share: float = 1.0
    #: Where the replica's expert-parallel group is wider than one host (a pinned ``ep`` above a server's GPUs): its
    #: GPUs a host and a GPU's share of the host's network, over which the all-to-all's share to other hosts goes
    #: (:func:`rank_alltoall_seconds`); None: the group on one host's GPU link. Set by the planner, which knows the host.
    expert_network: ExpertNetwork | None = None
    #: Whether the linear layers multiply block-scaled FP8 weights (128 x 128 scales, :attr:`WeightFormat.block`) on
    #: tensor cores without a block-scaled MMA (:data:`SOFTWARE_BLOCK_SCALING`): their GEMMs then reach
    #: ``fp8_block_gemm_efficiency_ratio`` of the FP8 rate (:func:`accelerator_for`).
    software_block_scaled: bool = False
    #: Whether the routed experts' kernels fuse their gather, activation and top-k reduction into the grouped GEMMs
    #: (:data:`FUSED_ROUTING_FAMILIES` off Marlin's MoE): no :func:`routed_expert_traffic_bytes` of their own.
    fused_routing: bool = False
    #: Whether the TP group's PCIe transfers are staged through host memory (cards without peer access over PCIe):
    #: ``link_gb_per_s`` is then :data:`HOST_STAGED_ALLREDUCE_SHARE` of the PCIe rate.
    host_staged: bool = False
    #: The LoRA adapters' kernels a step runs on each GPU (a service with ``inference.lora``): their slot reads, FLOPs and
    #: activation traffic add to every decode step and prompt pass (:class:`generator.sizing.lora_serving.LoraStep`,
    #: set by the planner); None: no adapters.
    lora: LoraStep | None = None

    @property
    def physical_tflops(self) -> float:
        """``dense_tflops`` as the GPU is modelled to reach it (its measured max-achievable rate where measured)."""
        return self.dense_tflops * self.reference_share

    @property
    def attention_rate_tflops(self) -> float:
        """Tensor rate attention runs at."""
        return self.attention_tflops or self.dense_tflops


def fast_link(gpu: GpuSpec, tp: int) -> bool:
    """Whether a TP group of ``tp`` on ``gpu`` all-reduces over a fast link rather than PCIe.

    A link the GPU has (NVLink, a bridge, Infinity Fabric, the Gaudi's Ethernet) whose domain holds the group; a link
    of no published rate is then still PCIe's (:func:`accelerator_for`).
    """
    return gpu.interconnect_kind in ("nvlink", "nvlink-bridge", "infinity-fabric", "ethernet") and tp <= gpu.nvlink_domain_gpus


@memoized  # keyed by the GPU record's identity: a training job's layouts ask it 480,608 times of a few GPUs (fuzz27 M7)
def accelerator_for(
    gpu: GpuSpec, compute: str, tp: int, host_time_scale: float = 1.0, weights: WeightFormat | None = None
) -> Accelerator:
    """Roofline inputs for ``gpu`` computing in ``compute`` precision in a TP group of ``tp``.

    ``host_time_scale``: the serving host's per-sequence host time relative to the reference host's.
    ``weights``: the weight format, where its kernels may dequantize it inside the GEMM's main loop: a weight-only
    format unless the GPU has the tensor rate that multiplies it as stored (:attr:`WeightFormat.dequantized_unless`),
    and a W8A8 / W4A4 format on a GPU without its rate (NVFP4 on Hopper: Marlin W4A16; FP8 on Ampere: W8A16).
    """
    # attention, and any format without tensor cores of its own, run at the bf16 rate: a rate the vendor does not
    # publish is null in the catalog, never guessed, so such a GPU cannot be timed in any format
    if (why := gpu.unrated("bf16")) is not None:
        raise InputError(why)
    # the rate a dense GEMM sustains (the vendor's max-achievable figure where published, else the datasheet peak)
    tflops = gpu.sustained_tflops(compute)
    dequantizes = weights is not None and dequantizes_on(gpu.tensor_formats, weights, compute)
    if not tflops:  # no tensor rate of that format: the kernels dequantize to bf16 (NVFP4 on Hopper: Marlin W4A16)
        # the 16-bit float the GPU has: fp16 on one without bf16 (a V100, a T4: fix68 item 3 said bf16 there)
        compute = "bf16" if gpu.dense_tflops.get("bf16") is not None else "fp16"
        tflops = gpu.sustained_tflops("bf16") or gpu.sustained_tflops("fp16") or 0.0
    fast = fast_link(gpu, tp)
    host_staged = False
    if fast and gpu.interconnect_gb_per_s_bidir > 0:
        # what the collective library counts on after protocol overheads where published, else half the bidirectional
        # peak; on a fully connected board, the links that join the group's GPUs
        link = (gpu.collective_gb_per_s or gpu.interconnect_gb_per_s_bidir / 2) * peer_link_share(tp, gpu.mesh_gpus)
    else:
        fast = False
        link = pcie_gb_per_s(gpu.pcie_gen, gpu.lanes_with(tp))  # the slot's lanes with tp GPUs fitted (newuser25 12)
        host_staged = not gpu.pcie_peer_to_peer  # no peer access: the collective library stages each transfer in host memory
        if host_staged:
            link *= HOST_STAGED_ALLREDUCE_SHARE
    attention = gpu.sustained_tflops("bf16") or gpu.sustained_tflops("fp16") or tflops
    # the collective library's measured efficiency belongs to the fast link it was measured over, not to PCIe
    scale = gpu.allreduce_vs_reference if fast else ()
    kernel = dense_dequant_kernel(gpu.architecture, weights) if dequantizes and weights is not None else ""
    # block-scaled FP8 at the FP8 tensor rate on a GPU whose MMAs take no block scales: the scales are applied beside them
    block_scaled = (
        compute == "fp8"
        and not dequantizes
        and weights is not None
        and weights.block is not None
        and gpu.architecture in SOFTWARE_BLOCK_SCALING
    )
    return Accelerator(
        gpu.sustained_bandwidth_gb_per_s,
        tflops,
        link,
        fast,
        attention,
        compute,
        host_time_scale,
        scale,
        weights if dequantizes else None,
        kernel,
        # half2 FMAs: two 16-bit results an instruction where the 32-bit FMA gives one (HALF2_SOURCE)
        HALF2_PER_FP32 * (gpu.sustained_tflops("fp32") or 0.0) if kernel == "exllama" else 0.0,
        expert_dequant_kernel(weights) if dequantizes and weights is not None else "",
        gpu.reference_share(compute),
        software_block_scaled=block_scaled,
        fused_routing=weights is not None and fuses_routing(weights),
        host_staged=host_staged,
    )


def dequantizes_on(rated: Collection[str], weights: WeightFormat, compute: str) -> bool:
    """Whether the kernels dequantize ``weights`` inside the GEMM on a GPU with tensor rates in ``rated`` (W4A16 / W8A16).

    A format that always is (:attr:`WeightFormat.dequantized_unless` ""), or is unless the GPU has the rate it names;
    and a quantized format whose ``compute`` the GPU has no rate of (FP8 on Ampere: W8A16; NVFP4 on Hopper: W4A16).
    ``rated``: :attr:`GpuSpec.tensor_formats`, or a :class:`~generator.sizing.offload.Machine`'s record of them, so the
    serving estimate (:func:`accelerator_for`) and the offload estimate apply one rule (review78 item 7).
    """
    native = weights.dequantized_unless
    if native is not None and not (native and native in rated):
        return True
    return compute not in rated and weights.is_quantized


#: GPU architectures (``gpus.json`` ``architecture``) whose FP8 tensor cores take no block scales: a block-FP8 GEMM
#: (DeepSeek-V3's 128 x 128 weight blocks, activations quantized per token group of 128 by a kernel of their own)
#: promotes each 128-deep partial sum to the CUDA cores and scales it there (DeepSeek-V3 technical report, arXiv:2412.19437
#: section 3.3.2, "promotion to CUDA cores"; DeepGEMM, https://github.com/deepseek-ai/DeepGEMM, "CUDA-core two-level
#: accumulation"). Hopper (SM90) and Ada (SM89) have no block-scaled MMA; Blackwell's ``tcgen05.mma`` takes the scales
#: (block_scale), so its block-FP8 GEMMs run at the FP8 rate as NVFP4's do at theirs. CDNA3 (gfx942: MI300X, MI325X)
#: has none either: its FP8 MFMAs take no scale operand (the scaled ``mfma_scale_f32_*_f8f6f4`` family is CDNA4's,
#: gfx950: https://docs.modular.com/mojo/kernels/linalg/arch/amd/block_scaled_mma/, "CDNA4 block-scaled MFMA"), so its
#: 128-block GEMMs (AITER's ``gemm_a8w8_blockscale`` on MI300X, https://github.com/sgl-project/sglang/pull/14043) scale
#: each partial sum on the vector ALUs, as HipKittens' blockwise kernel does with its FP32 scales on CDNA3, the scaled
#: MFMA serving only its CDNA4 power-of-2 variant (https://github.com/HazyResearch/HipKittens/pull/76). acc195: the
#: share is the one fitted constant; no CDNA3 engine kernel's share was found measured.
SOFTWARE_BLOCK_SCALING = ("hopper", "ada-lovelace", "cdna3")


#: Integer weight-only formats vLLM multiplies through its mixed-precision linear kernels (GPTQ, AWQ and compressed-tensors
#: WNA16 all ask ``choose_mp_linear_kernel``), which tries them "in priority/performance order": ``MacheteLinearKernel``
#: first, which needs compute capability 9.0 exactly ("Machete requires compute capability of 90 (Hopper)"), then
#: ``MarlinLinearKernel`` (vllm/model_executor/layers/quantization/kernels/mixed_precision/__init__.py and machete.py,
#: https://github.com/vllm-project/vllm/pull/7701). Every other in-loop dequantization (MXFP4 on Hopper, NVFP4 on Hopper,
#: FP8 on Ampere) and every other architecture (Ampere, Ada, Blackwell) runs Marlin.
MACHETE_FORMATS = ("int4", "int8-gptq")
#: The GPU architecture Machete runs on (``gpus.json`` ``architecture``).
MACHETE_ARCHITECTURE = "hopper"
#: The architecture Marlin does not run on and vLLM's GPTQ kernel (exllama's) multiplies integer weights on: Volta
#: (compute capability 7.0; Marlin needs 8.0, "Marlin (GPTQ/AWQ/FP8)" unsupported on Volta and GPTQ supported in vLLM's
#: quantization hardware table, VOLTA_INT4_SOURCES[0]; the mixed-precision kernels' ``ExllamaLinearKernel`` has
#: ``get_min_capability`` 60, VOLTA_INT4_SOURCES[1]). The releases that still start on Volta are v0.14.0 and older.
EXLLAMA_ARCHITECTURE = "volta"
#: ``MacheteLinearKernel.can_implement`` refuses a layer with zero points, which AWQ (and asymmetric GPTQ /
#: compressed-tensors) checkpoints have: vLLM's ``AWQMarlinLinearMethod`` asks ``choose_mp_linear_kernel`` with
#: ``zero_points=True`` and gets Marlin on Hopper too.
MACHETE_ZERO_POINT_SOURCE = (
    "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/layers/quantization/kernels/mixed_precision/machete.py"
)
VOLTA_INT4_SOURCES = (
    "https://docs.vllm.ai/en/v0.14.0/features/quantization/",
    "https://github.com/vllm-project/vllm/blob/v0.14.0/vllm/model_executor/layers/quantization/kernels/mixed_precision/"
    "exllama.py",
    "https://github.com/vllm-project/vllm/blob/v0.14.0/csrc/quantization/gptq/q_gemm.cu",
)
#: vLLM's GPTQ kernel (``gemm_half_q_half_cuda`` in csrc/quantization/gptq/q_gemm.cu, VOLTA_INT4_SOURCES[2]): a pass
#: of more rows than this first reconstructs each quantized matrix to fp16 (``reconstruct_exllama``) and multiplies it
#: with cuBLAS (``cublasHgemm``); up to it, the exllama kernel multiplies the stored weights with half2 FMAs.
#: ``MAX_Q_GEMM_ROWS`` (50) for 4-bit weights, ``MAX_Q_GEMM_ROWS_8BIT`` (24) for 8-bit ones, by storage family.
EXLLAMA_MAX_Q_GEMM_ROWS = {"int4": 50, "int8-gptq": 24}
#: 16-bit results per 32-bit FMA's on the CUDA cores (``__hfma2`` packs two): the CUDA C++ Programming Guide's
#: arithmetic-instruction throughputs give compute capability 7.x 128 16-bit multiply-adds a clock an SM to 64 32-bit.
HALF2_PER_FP32 = 2
HALF2_SOURCE = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#arithmetic-instructions"


def dense_dequant_kernel(architecture: str, weights: WeightFormat) -> str:
    """The kernel vLLM multiplies a format's dequantized dense matrices with on a GPU architecture.

    ``machete`` (Hopper, GPTQ-style integers without zero points: :data:`MACHETE_ZERO_POINT_SOURCE`), ``exllama`` (the
    same on Volta, where Marlin does not run: fix68 item 1 timed int4 on a V100 with Marlin's kernel), else ``marlin``.
    """
    family = storage_family(weights.name)
    if architecture == EXLLAMA_ARCHITECTURE and family in MACHETE_FORMATS:
        return "exllama"
    # Machete's can_implement: "Zero points currently not supported by Machete" (an AWQ checkpoint runs Marlin there)
    zeros = weights.kernel_zero_points
    machete = architecture == MACHETE_ARCHITECTURE and family in MACHETE_FORMATS and not zeros
    return "machete" if machete else "marlin"


def expert_dequant_kernel(weights: WeightFormat) -> str:
    """``marlin`` where the engine runs a format's routed experts through Marlin's MoE kernel, else "".

    vLLM's MXFP4 experts on Ampere and Ada, the format as it holds them there (:func:`loaded_format`, whose Marlin
    padding marks them: neither ``triton_kernels`` nor FlashInfer's MXFP4 path runs there, and SGLang refuses the format
    below SM90), whose mma.sync main loop is those GPUs' own fastest path, as in the A100-class benchmarks
    ``dequant_gemm_efficiency_ratio`` is derived from (newuser59 item 2: gpt-oss-20b's prompts on one A100 ran 2x the
    rate the Hopper-fitted expert ratio gave, 813 output tokens/s for 2,000-token prompts where 431 were predicted).
    """
    return "marlin" if runs_marlin_moe(weights) else ""


def expert_dequant_ratio(acc: Accelerator, consts: Constants) -> float:
    """Share of the 16-bit rate the routed experts' dequantizing GEMMs reach once compute-bound, by their kernel."""
    if acc.expert_dequant_kernel == "marlin":
        return consts.dequant_gemm_efficiency_ratio
    return consts.dequant_expert_gemm_efficiency_ratio


def dense_dequant_ratio(acc: Accelerator, consts: Constants) -> float:
    """Share of the 16-bit rate the dense dequantizing GEMMs of ``acc`` reach once compute-bound, by their kernel.

    exllama's: 1, as a pass of more than :data:`EXLLAMA_MAX_Q_GEMM_ROWS` rows multiplies the reconstructed fp16 matrix
    with cuBLAS (its reconstruction is memory traffic, :func:`weight_pass_seconds`; smaller passes, :func:`_gemm_at`).
    """
    if acc.dequant_kernel == "machete":
        return consts.machete_gemm_efficiency_ratio
    if acc.dequant_kernel == "exllama":
        return 1.0
    return consts.dequant_gemm_efficiency_ratio


def peer_link_share(group: int, mesh_gpus: int | None) -> float:
    """The share of a GPU's scale-up bandwidth a group of ``group`` GPUs reaches on a fully connected board.

    Each GPU of a board of ``mesh_gpus`` has one equal share of its links to each of its ``mesh_gpus - 1`` peers, and
    a collective inside the group crosses only those to the group's others: RCCL counts 4 MI300X of an 8-GPU board at
    "maxBw 48.0 totalBw 144.0", 3 of 7 links (https://github.com/ROCm/rccl/issues/1210), where all 8 reach the 336 GB/s
    the catalog's ``collective_gb_per_s`` holds; "When using less than 8 GPUs, one can only achieve a fraction of the
    potential bandwidth" (https://github.com/ROCm/rccl/pull/1270). None: a switched fabric, the whole link.
    """
    if mesh_gpus is None or not 1 < group < mesh_gpus:
        return 1.0
    return (group - 1) / (mesh_gpus - 1)


def pcie_gb_per_s(gen: int, lanes: int) -> float:
    """PCIe bandwidth per direction of a link of ``lanes`` lanes (Gen4 when the generation is unknown)."""
    return PCIE_X16_GB_PER_S.get(gen, PCIE_X16_GB_PER_S[4]) * lanes / 16


class DecodeStep(NamedTuple):
    """One decode step of a replica at a batch size."""

    batch: int
    seconds: float
    memory_seconds: float
    compute_seconds: float
    comm_seconds: float

    @property
    def tokens_per_s(self) -> float:
        """Output tokens per second of the whole replica."""
        return self.batch / self.seconds


def expected_experts_touched(experts: int, top_k: int, tokens: float) -> float:
    """Expected distinct experts a batch of ``tokens`` routes to (uniform routing)."""
    if experts <= 0:
        return 0.0
    return float(experts * (1.0 - (1.0 - top_k / experts) ** tokens))


def routed_share(arch: Architecture, tokens: float) -> float:
    """Share of the routed-expert bytes a step over ``tokens`` tokens reads: ``top_k / experts`` at one token."""
    experts, top_k = arch.routed_experts
    if not experts:
        return 1.0
    return expected_experts_touched(experts, top_k, tokens) / experts


def decode_weight_read_bytes(arch: Architecture, weights: WeightSizes, par: Parallelism, tokens: float) -> float:
    """Weight bytes one GPU streams per decode step over ``tokens`` tokens (serving estimate and offload planner).

    The one count of :class:`DecodeModel` and :func:`generator.sizing.offload.offload_cost`: the GPU's
    stage weights less the tables a step only looks rows up in (``WeightSizes.per_gpu_read_bytes``: the
    input embedding unless it is the tied LM head, the vision tower), routed experts only as far as the
    step routes to them (:func:`routed_share`).
    """
    read = float(weights.per_gpu_read_bytes)
    if weights.expert_bytes:
        expert_per_gpu = weights.expert_bytes / max(par.tp, par.ep) / par.pp
        read -= expert_per_gpu * (1.0 - busiest_rank_routed_share(arch, par.ep, tokens))
    return read


def busiest_rank_routed_share(arch: Architecture, ep: int, tokens: float) -> float:
    """Share of its routed-expert bytes the expert-parallel rank that reads the most streams in a step over ``tokens``.

    Tensor-parallel experts (``ep`` 1: every GPU a slice of every expert) read :func:`routed_share` each. Expert
    parallelism places ``experts / ep`` whole experts on a rank, each touched by the step with the chance
    :func:`routed_share` gives, so a rank's count of touched experts is binomial; every MoE layer waits for the rank
    that touches the most, which lies ``z_ep`` of that count's spreads above the mean (:func:`expected_normal_max`, as
    :func:`busiest_expert_rank_load` takes the busiest rank's tokens). A small batch touches a few experts a rank and
    this rank several more than the mean (acc112: DeepSeek-R1 at EP8, 4 tokens: 6.4 of its 32 experts against the
    mean's 3.8); a batch that touches nearly every expert reads them all on every rank.

    Routing is taken as uniform here, where the same step's all-to-all takes the busiest rank's tokens under the
    popularity spread (``expert_popularity_cv``, review79 item 7): the two respond to skew in opposite ways. Skew draws
    more tokens to the rank of the hot experts (the all-to-all's load), but touches fewer distinct experts (the reads):
    uniform routing touches the most, ``sum (1 - p_e)^n`` untouched being least at equal ``p_e``, so its count is the
    upper bound of the reads. Simulated for DeepSeek-R1 at EP8 with lognormal popularity of cv 2.17 placed at random
    (tests/test_expert_reads.py), the busiest rank's share at 8 / 32 / 64 tokens: 0.332 / 0.755 / 0.949 uniform,
    0.291 / 0.555 / 0.714 skewed; the skewed reads would lower the step further where the B200 EP8 runs already sit
    above their measurements (tests/test_expert_reads.py).
    """
    share = routed_share(arch, tokens)
    experts, _ = arch.routed_experts
    if ep <= 1 or not experts or share >= 1.0:
        return share
    per_rank = experts / ep
    return min(1.0, share + math.sqrt(share * (1.0 - share) / per_rank) * expected_normal_max(ep))


def bulk_routed_read_bytes(
    arch: Architecture,
    weights: WeightSizes,
    par: Parallelism,
    decodes: int,
    prefill_tokens: float,
    pass_tokens: float,
    prefill_apart: bool = False,
) -> float:
    """Weight bytes one GPU streams in an average step of ``decodes`` decodes whose prompt tokens come in passes.

    A step's ``prefill_tokens`` (a stage's average share) arrive ``pass_tokens`` at a time, in a
    ``prefill_tokens / pass_tokens`` share of the steps: SGLang and vLLM run a waiting prompt's tokens, up to their
    chunk, in one forward pass (SGLang ``--chunked-prefill-size``, vLLM ``max_num_batched_tokens``) rather than a few
    of them in every decode step. Dense weights are read every step either way; the routed experts are read as each
    step's own tokens route (:func:`decode_weight_read_bytes`): the decodes' alone in most steps, the decodes' and a
    whole pass's in the rest. The average's tokens spread over every step would route a small batch to several times
    the experts its decodes read (acc112: InferenceX's SGLang DeepSeek-R1 runs at 4-32 requests at once).

    How the pass meets the decodes is the engine's (review79 item 3). vLLM's scheduler fills a step with the decodes,
    then the waiting prompts' chunks, one forward over both: a pass step reads the union, the weights the decodes and
    the pass route to, once. SGLang by default runs a waiting prompt as a forward of its own (``prefill_apart``):
    ``Scheduler.get_next_batch_to_run`` returns the prefill batch from ``get_new_batch_prefill`` before the running
    decode batch, and folds the decodes into it only with ``--enable-mixed-chunk`` (``is_mixed_chunk``, off by default;
    https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/managers/scheduler.py, ``mix_with_running``;
    ``enable_mixed_chunk: bool = False`` in python/sglang/srt/server_args.py): its pass step reads the decodes' weights and then
    the pass's again, every dense weight among them (:func:`prefill_apart_read_bytes`).
    """
    share = min(1.0, prefill_tokens / pass_tokens)
    alone = decode_weight_read_bytes(arch, weights, par, max(1, decodes))
    if prefill_apart:
        return alone + share * decode_weight_read_bytes(arch, weights, par, max(1, round(pass_tokens)))
    with_pass = decode_weight_read_bytes(arch, weights, par, max(1, round(decodes + pass_tokens)))
    return (1.0 - share) * alone + share * with_pass


def prefill_apart_read_bytes(
    arch: Architecture, weights: WeightSizes, par: Parallelism, decodes: int, prefill_tokens: float, pass_tokens: float
) -> tuple[float, float]:
    """An average step's weight bytes where the engine prefills in forwards of their own, and those forwards a step.

    The decodes' forward reads their weights every step; the prompts' forward reads its own in the
    ``prefill_tokens / pass_tokens`` share of the steps that run a pass (:func:`bulk_routed_read_bytes`), or, where a
    step averages a pass or more, once a step over all of its prompt tokens (SGLang batches the waiting prompts into
    one prefill forward, up to ``--chunked-prefill-size``).
    """
    if prefill_tokens <= 0:
        return decode_weight_read_bytes(arch, weights, par, max(1, decodes)), 0.0
    if 0 < prefill_tokens < pass_tokens:
        share = prefill_tokens / pass_tokens
        return bulk_routed_read_bytes(arch, weights, par, decodes, prefill_tokens, pass_tokens, prefill_apart=True), share
    alone = decode_weight_read_bytes(arch, weights, par, max(1, decodes))
    return alone + decode_weight_read_bytes(arch, weights, par, max(1, round(prefill_tokens))), 1.0


def allreduce_seconds(
    message_bytes: float, gpus: int, link_gb_per_s: float, latency_s: float, scale: tuple[tuple[int, float], ...] = ()
) -> float:
    """Ring all-reduce: ``2 (n-1)/n`` of the message crosses each link (at ``link_gb_per_s``), plus a fixed latency.

    ``scale``: the GPU's measured all-reduce time over the modelled one by message size (:func:`allreduce_time_factor`),
    never more than at a larger size measured (:func:`_allreduce_ceilings`).
    """
    if gpus <= 1:
        return 0.0
    seconds = _ring_seconds(message_bytes, gpus, link_gb_per_s, latency_s)
    if not scale:
        return seconds
    sizes, ceilings = _allreduce_ceilings(scale, gpus, link_gb_per_s, latency_s)
    above = bisect.bisect_left(sizes, message_bytes)
    scaled = seconds * allreduce_time_factor(scale, message_bytes)
    return min(scaled, ceilings[above]) if above < len(sizes) else scaled


def _ring_seconds(message_bytes: float, gpus: int, link_gb_per_s: float, latency_s: float) -> float:
    return 2 * (gpus - 1) / gpus * message_bytes / (link_gb_per_s * 1e9) + latency_s


@memoized
def _allreduce_ceilings(
    scale: tuple[tuple[int, float], ...], gpus: int, link_gb_per_s: float, latency_s: float
) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """The sizes ``scale`` measures, and the least time an all-reduce of that size or a larger one measured takes.

    A smaller message never takes longer, but the factor is a ratio of two GPUs' measured curves, whose steps fall at
    other sizes: MI300X's 16 KiB all-reduce came out 31% slower than its 64 KiB one, and a TP8 70B model's decode step
    1.6 ms slower at batch 1 than at batch 4 (newuser59 item 3; AMD's own batch-1 latency is 31% below even that).
    """
    least, ceilings = math.inf, []
    for size, factor in reversed(scale):
        least = min(least, _ring_seconds(size, gpus, link_gb_per_s, latency_s) * factor)
        ceilings.append(least)
    return tuple(size for size, _ in scale), tuple(reversed(ceilings))


def allreduce_time_factor(scale: tuple[tuple[int, float], ...], message_bytes: float) -> float:
    """The factor of ``scale`` (``(bytes, factor)`` pairs, by size) at ``message_bytes``.

    Linear in the size's logarithm between the measured sizes, the nearest one's outside them (1 where none is measured).
    """
    if not scale:
        return 1.0
    if message_bytes <= scale[0][0]:
        return scale[0][1]
    for (low, low_factor), (high, high_factor) in itertools.pairwise(scale):
        if message_bytes <= high:
            share = math.log(message_bytes / low) / math.log(high / low)
            return low_factor + (high_factor - low_factor) * share
    return scale[-1][1]


@memoized
def decode_step(
    arch: Architecture,
    weights: WeightSizes,
    kv_bits: int,
    par: Parallelism,
    acc: Accelerator,
    batch: int,
    context_tokens: int,
    consts: Constants,
    prefill_tokens: float = 0.0,
    prompt_tokens: int = 0,
    cached_tokens: int = 0,
    pass_tokens: float = 0.0,
    prefill_apart: bool = False,
) -> DecodeStep:
    """Time of one decode step for ``batch`` sequences whose contexts average ``context_tokens``.

    Kernels run one after another, each bound by its own roofline: the linear layers take the longer
    of streaming the weights the step touches and their matmuls (over every token of the step); the
    attention takes the longer of reading each sequence's KV cache and its FLOPs. ``prefill_tokens``
    prompt tokens (of ``prompt_tokens``-token prompts) may ride in the same step, as in-flight
    batching schedules them: they share the weight reads and add their matmuls and causal attention (``cached_tokens``:
    each prompt's new tail after that many tokens its prefix cache holds, :func:`prompt_attention_flops_per_token`).
    ``pass_tokens``: the prompt tokens arrive in passes of that many (a prompt, or a chunk of it, at once), so the
    routed experts are read as :meth:`DecodeModel.step` says; 0: spread over the steps. ``prefill_apart``: the engine
    runs the prompt tokens in forwards of their own (SGLang's default, :func:`bulk_routed_read_bytes`).

    With pipeline parallelism the batch flows through the stages as ``pp`` micro-batches: every
    token passes every stage, so the time per output token is ``pp`` stage times.
    """
    model = decode_model(arch, weights, kv_bits, par, acc, context_tokens, consts, prompt_tokens, cached_tokens)
    return model.step(batch, prefill_tokens, pass_tokens, prefill_apart)


@memoized
def decode_model(
    arch: Architecture,
    weights: WeightSizes,
    kv_bits: int,
    par: Parallelism,
    acc: Accelerator,
    context_tokens: int,
    consts: Constants,
    prompt_tokens: int = 0,
    cached_tokens: int = 0,
) -> DecodeModel:
    """:func:`decode_step` of one replica and context at any batch: what does not depend on the batch, formed once."""
    return DecodeModel(arch, weights, kv_bits, par, acc, context_tokens, consts, prompt_tokens, cached_tokens)


class DecodeModel:
    """The decode step of one replica at one context as a function of the batch (:meth:`step`).

    Planning searches the batch of every layout; the terms that do not depend on it (bandwidth, KV bytes
    per sequence, FLOPs per token, link constants) are formed here once. :meth:`step` evaluates each
    term with the same operations, in the same order, as a direct evaluation would.
    """

    __slots__ = (
        "_acc",
        "_allreduce_scale",
        "_arch",
        "_attention_dp",
        "_attention_flops",
        "_attention_flops_per_s",
        "_attention_split",
        "_bandwidth",
        "_consts",
        "_dense_weight_read_s",
        "_expert_comm",
        "_gathered",
        "_gemm",
        "_host_per_sequence_s",
        "_kv_stage_bits",
        "_latency",
        "_moe_layers_s",
        "_par",
        "_prefill_attention_flops",
        "_prefill_attention_rate",
        "_routed_bytes",
        "_weights",
    )  # fmt: skip

    def __init__(
        self,
        arch: Architecture,
        weights: WeightSizes,
        kv_bits: int,
        par: Parallelism,
        acc: Accelerator,
        context_tokens: int,
        consts: Constants,
        prompt_tokens: int = 0,
        cached_tokens: int = 0,
    ) -> None:
        self._arch, self._weights, self._par, self._acc, self._consts = arch, weights, par, acc, consts
        self._bandwidth = acc.memory_bandwidth_gb_per_s * 1e9 * consts.decode_bandwidth_efficiency
        context = max(context_tokens, 1)
        self._kv_stage_bits = (
            per_query_head_decode_bits(arch, context, kv_bits, par.tp, par.pp, par.stages)
            if consts.decode_kv_read_per_query_head
            else stage_decode_bits(arch, context, kv_bits, par.tp, par.pp, par.stages)
        )  # KV read (once per query head by a kernel without XQA), state read + written
        experts, _ = arch.routed_experts
        dense_read = not experts or weights.expert_bytes == 0
        self._dense_weight_read_s = decode_weight_read_bytes(arch, weights, par, 1) / self._bandwidth if dense_read else None
        self._gemm = _gemm_parts(arch, par, acc, consts)
        self._attention_flops = attention_flops_per_token(arch, context)
        self._attention_split = par.tp * par.attention_dp * par.pp
        self._attention_flops_per_s = attention_flops_per_s(acc, consts)
        self._prefill_attention_flops = prompt_attention_flops_per_token(arch, prompt_tokens, cached_tokens)
        self._prefill_attention_rate = (
            par.tp
            * par.attention_dp
            * par.pp
            * prompt_attention_rate(arch, attention_flops_per_s(acc, consts), acc.memory_bandwidth_gb_per_s, consts)
        )
        self._latency = consts.allreduce_latency_nvlink_s if acc.fast_link else consts.allreduce_latency_pcie_s
        self._allreduce_scale = 2 * arch.num_layers / par.pp
        self._expert_comm = par.ep > 1 and experts > 0
        self._host_per_sequence_s = consts.decode_overhead_per_sequence_s * acc.host_time_scale
        self._attention_dp = par.attention_dp
        self._routed_bytes = routed_expert_traffic_bytes(arch, par, acc)
        self._gathered = gathered_exchange(acc, consts)
        # the engine's fixed time per MoE layer of a stage and step (moe_layer_step_s: vLLM's fused-MoE kernels)
        moe_layers = sum(1 for layer in arch.layers if layer.experts_per_token) if experts else 0
        self._moe_layers_s = engine_moe_layer_step_s(consts, None) * moe_layers / par.pp  # none where left to the engine

    def _routed_s(self, tokens: float) -> float:
        """:func:`routed_expert_traffic_seconds` of a step's ``tokens`` (0 without routed experts, or fused)."""
        per_token, per_pair = self._routed_bytes
        if not per_pair:
            return 0.0
        return tokens * (per_token / max(1, self._attention_dp) + per_pair) / self._bandwidth

    def _pass_read_s(self, tokens: float) -> float:
        """Seconds to stream the weights a forward over ``tokens`` tokens touches (the routed experts: those they route to)."""
        if self._dense_weight_read_s is not None:
            return self._dense_weight_read_s
        return decode_weight_read_bytes(self._arch, self._weights, self._par, max(1, round(tokens))) / self._bandwidth

    def _lumpy_linear_s(self, decodes: int, prefill_tokens: float, pass_tokens: float) -> float:
        """An average step's linear layers where its prompt tokens come in passes, in fewer than every step.

        ``prefill_tokens`` arrive ``pass_tokens`` at a time in a ``prefill_tokens / pass_tokens`` share of the steps (a
        prompt, or its chunk, in one forward with the decodes: vLLM's scheduler, the TensorRT-LLM runtimes' in-flight
        batching).
        Each kind of step takes its own roofline: the decodes' alone the longer of their weight reads and their small
        GEMMs, a pass step the longer of its reads and the GEMMs over the decodes and the whole pass. The average of
        the two is at least the roofline of the average step's tokens (the maximum is convex): a pass step is
        compute-bound where the average step is not.
        """
        share = prefill_tokens / pass_tokens
        gemm, consts, bandwidth = self._gemm, self._consts, self._bandwidth
        alone = weight_pass_seconds(
            gemm, self._pass_read_s(decodes), _gemm_at(gemm, decodes, decodes, consts), decodes, bandwidth
        )
        full = decodes + pass_tokens
        with_pass = weight_pass_seconds(gemm, self._pass_read_s(full), _gemm_at(gemm, full, decodes, consts), full, bandwidth)
        return (1.0 - share) * alone + share * with_pass

    def step(self, batch: int, prefill_tokens: float = 0.0, pass_tokens: float = 0.0, prefill_apart: bool = False) -> DecodeStep:
        """One decode step of ``batch`` sequences, with ``prefill_tokens`` prompt tokens riding along.

        ``pass_tokens``: the step's prompt tokens are the average of passes of that many a stage (an engine prefills a
        prompt, or a chunk of it, in one forward pass, not a few of its tokens in every step): the routed experts a
        step reads are those of its decodes in the steps without a pass and those of its decodes and a whole pass in a
        ``prefill_tokens / pp / pass_tokens`` share of them (:func:`bulk_routed_read_bytes`); 0, or a pass no larger
        than the average, reads them as the average's tokens route. The linear layers take each kind of step's own
        roofline, averaged over their shares (:meth:`_lumpy_linear_s`, acc203); the all-reduces and attention stay
        those of the average step. ``prefill_apart``: the engine runs the prompt tokens as forwards of
        their own (SGLang without ``--enable-mixed-chunk``): they read the weights again, every dense one among them,
        and pay an engine iteration's overhead of their own, in their share of the steps
        (:func:`prefill_apart_read_bytes`).
        """
        arch, par, acc, consts = self._arch, self._par, self._acc, self._consts
        attention_dp = self._attention_dp
        micro = max(1, math.ceil(batch / par.pp))
        prefill_micro = prefill_tokens / par.pp
        tokens = micro + prefill_micro
        bandwidth = self._bandwidth
        kv = ceil_bytes(self._kv_stage_bits * -(-micro // attention_dp))
        prefill_forwards = 0.0  # forwards of their own the prompt tokens run a step (an engine that prefills apart)
        if prefill_apart and prefill_micro > 0:
            read, prefill_forwards = prefill_apart_read_bytes(arch, self._weights, par, micro, prefill_micro, pass_tokens)
            weight_read_s = read / bandwidth
        elif self._dense_weight_read_s is not None:
            weight_read_s = self._dense_weight_read_s
        elif 0 < prefill_micro < pass_tokens:
            weight_read_s = bulk_routed_read_bytes(arch, self._weights, par, micro, prefill_micro, pass_tokens) / bandwidth
        else:
            weight_read_s = decode_weight_read_bytes(arch, self._weights, par, max(1, round(tokens))) / bandwidth
        kv_read_s = kv / bandwidth
        matmul_s = _gemm_at(self._gemm, tokens, micro, consts)
        attention_s = self._attention_flops * micro / self._attention_split / self._attention_flops_per_s
        prefill_attention_s = prefill_micro * self._prefill_attention_flops / self._prefill_attention_rate
        latency = self._latency
        link = acc.link_gb_per_s
        comm_s = 0.0
        if par.tp > 1:
            message = tokens / attention_dp * arch.hidden_size * 2
            comm_s = self._allreduce_scale * allreduce_seconds(message, par.tp, link, latency, acc.allreduce_time_scale)
        if self._expert_comm:
            busiest = busiest_expert_rank_load(*arch.routed_experts, par.ep, tokens, consts.expert_popularity_cv)
            comm_s += expert_alltoall_seconds(arch, par, tokens, link, latency, busiest, acc.expert_network, self._gathered)
        if not prefill_apart and 0 < prefill_micro < pass_tokens:
            linear_s = self._lumpy_linear_s(micro, prefill_micro, pass_tokens)
        else:
            linear_s = weight_pass_seconds(self._gemm, weight_read_s, matmul_s, tokens, bandwidth)
        # the routed experts' memory-bound kernels beside their GEMMs, over the step's tokens
        stage_s = linear_s + max(kv_read_s, attention_s) + prefill_attention_s + comm_s + self._routed_s(tokens)
        stage_s += self._moe_layers_s
        if acc.lora is not None:  # the adapters' shrink / expand kernels: a rank's requests, their distinct slots
            prompts = 1 if prefill_micro > 0 else 0  # the prompt riding along: one request (its adapter)
            rank_tokens = tokens / attention_dp
            stage_s += acc.lora.seconds(-(-micro // attention_dp) + prompts, rank_tokens, bandwidth, self._attention_flops_per_s)
        stages = par.pp
        # every micro-batch is an engine iteration of its own (scheduling, launches, sampling)
        host_s = self._host_per_sequence_s * batch / attention_dp
        overhead_s = consts.decode_step_overhead_s * (1.0 + prefill_forwards)
        seconds = host_overlapped_seconds(stages * (stage_s + overhead_s), host_s, par.pp, consts)
        memory_s = weight_read_s + kv_read_s
        if self._gemm.reconstructs(tokens):  # exllama's reconstruction: fp16 written, read back
            memory_s += 2 * self._gemm.reconstructed_bytes / bandwidth
        compute_s = matmul_s + attention_s + prefill_attention_s
        return DecodeStep(batch, seconds, stages * memory_s, stages * compute_s, stages * comm_s)


def host_overlapped_seconds(device_s: float, host_s: float, pp: int, consts: Constants) -> float:
    """Wall time of an engine iteration: ``device_s`` on the GPUs and ``host_s`` of per-sequence host work.

    An overlap scheduler (TensorRT-LLM's PyTorch executor by default, ``disable_overlap_scheduler=False``)
    prepares the next iteration on the CPU while the GPUs run this one, so ``host_overlap_fraction`` of the
    host work runs concurrently with the device and only the rest adds to it. Pipelines run another
    executor loop (one micro-batch per stage in flight), where host work stays serial.
    """
    hidden = consts.host_overlap_fraction if pp == 1 else 0.0
    return max(device_s, hidden * host_s) + (1.0 - hidden) * host_s


class ExpertNetwork(NamedTuple):
    """An expert-parallel group wider than one host: its GPUs on each host and a GPU's share of the host's network.

    ``host_gpus`` of the group's GPUs on each host; ``gb_per_s``: a GPU's share of the host's network (GB/s per
    direction), over which what leaves the host goes (review72 item 1).
    """

    host_gpus: int
    gb_per_s: float


def expert_alltoall_seconds(
    arch: Architecture,
    par: Parallelism,
    tokens: float,
    link_gb_per_s: float,
    latency_s: float,
    busiest: float = 1.0,
    network: ExpertNetwork | None = None,
    gathered: GatheredExchange | None = None,
) -> float:
    """Expert-parallel dispatch and combine of one forward over ``tokens`` tokens (one stage's MoE layers).

    Each GPU sends the hidden state (bf16) of each of its tokens to the ``top_k`` experts it routes to;
    ``(ep - 1) / ep`` of them live on other GPUs. The results come back the same way (combine). Only with
    attention data parallelism: where the EP group is the TP group, every rank already holds every token, runs its
    own experts on them, and the TP all-reduce combines them (vLLM's all2all kernels run only with
    ``--data-parallel-size`` above 1, ``FusedMoEParallelConfig.use_all2all_kernels``). ``busiest``: the rank whose
    experts draw the most tokens over the mean rank (:func:`busiest_expert_rank_load`), which receives that much more
    in the dispatch and sends that much more back in the combine; the collective ends with it. ``network``: the group
    spans hosts (:func:`rank_alltoall_seconds`).
    """
    return rank_alltoall_seconds(arch, par, tokens / par.attention_dp, link_gb_per_s, latency_s, busiest, network, gathered)


def rank_alltoall_seconds(
    arch: Architecture,
    par: Parallelism,
    rank_tokens: float,
    link_gb_per_s: float,
    latency_s: float,
    busiest: float = 1.0,
    network: ExpertNetwork | None = None,
    gathered: GatheredExchange | None = None,
) -> float:
    """:func:`expert_alltoall_seconds` where one attention data-parallel rank holds ``rank_tokens`` tokens.

    A rank sends ``rank_tokens x top_k x hidden x 2`` bytes a MoE layer, ``(ep - 1) / ep`` of them to other GPUs, and
    gets as much back. Where the group spans hosts (``network``, review72 item 1) the ``host_gpus - 1`` peers on the
    rank's own host take their share over ``link_gb_per_s`` and the ``ep - host_gpus`` others theirs over the GPU's
    share of the host's network, the two at once: the slower sets the time (one GPU a host: all of it over the network;
    :func:`~generator.sizing.alltoall_split.alltoall_gbps`, the rule a training step's all-to-all uses too).
    ``gathered``: the engine's MoE gathers every rank's tokens instead (:class:`GatheredExchange`).
    """
    experts, top_k = arch.routed_experts
    if par.ep <= 1 or not experts or par.attention_dp <= 1:
        return 0.0
    moe_layers = sum(1 for layer in arch.layers if layer.experts_per_token) / par.pp
    gb_per_s = link_gb_per_s if network is None else alltoall_gbps(par.ep, network.host_gpus, link_gb_per_s, network.gb_per_s)
    if gathered is not None:
        return moe_layers * gathered.seconds(rank_tokens * arch.hidden_size * (par.ep - 1), gb_per_s, par.ep)
    sent = rank_tokens * top_k * arch.hidden_size * 2 * (par.ep - 1) / par.ep
    return 2 * moe_layers * (busiest * sent / (gb_per_s * 1e9) + latency_s)


class GatheredExchange(NamedTuple):
    """TensorRT-LLM's MoE exchange under attention DP: every rank's tokens gathered, the outputs reduce-scattered.

    CutlassFusedMoE all-gathers each rank's quantized tokens (and their top-k ids) to every rank, runs the gathered
    rows through its local experts and reduce-scatters their bf16 outputs (``run_post_quant_allgather``,
    https://github.com/NVIDIA/TensorRT-LLM/blob/000a01de66f0eab4ab05640711f0253f50f5209c/tensorrt_llm/_torch/modules/
    fused_moe/fused_moe_cutlass.py): a rank sends and receives ``(ep - 1) x rank tokens x hidden`` elements, each of
    ``input_bytes`` in and 2 out, a MoE layer, with no busiest-rank factor (every rank gets every row), at
    ``link_share`` of the link's rate, each collective ``latency_s`` beside its bytes (constants.py
    ``gathered_exchange_link_share`` and ``gathered_exchange_latency_s``, acc157).
    """

    input_bytes: float
    link_share: float
    latency_s: float

    def seconds(self, elements: float, gb_per_s: float, ranks: int) -> float:
        """Both collectives of one MoE layer over ``elements`` of other ranks' rows, at the link share.

        The all-gather of per-rank counts is ``ranks`` NCCL broadcasts in one group, one a root (allgatherOp.cpp with
        ``all_rank_split_size``), each its own ``latency_s``; the reduce-scatter one more.
        """
        return elements * (self.input_bytes + 2.0) / (self.link_share * gb_per_s * 1e9) + (ranks + 1) * self.latency_s


#: Bytes an element of the activations the gathered MoE exchanges, by the format the GEMMs compute in: FP8 one; NVFP4 a
#: half (e2m1) and an FP8 scale for every 16; anything else bf16 (fused_moe_cutlass.py as :class:`GatheredExchange`).
GATHERED_INPUT_BYTES: dict[str, float] = {"fp8": 1.0, "fp4": 0.5 + 1 / 16}


def gathered_exchange(acc: Accelerator, consts: Constants) -> GatheredExchange | None:
    """The engine's gathered MoE exchange (``moe_gathered_exchange`` 1 or 2), else None (a top-k all-to-all).

    1: the quantized tokens are gathered (TensorRT-LLM, vLLM's ``allgather_reducescatter``); 2: the bf16 hidden
    states, quantized after the gather (SGLang's DP attention); constants.py ``moe_gathered_exchange`` cites each.
    """
    if not consts.moe_gathered_exchange:
        return None
    input_bytes = GATHERED_INPUT_BYTES.get(acc.compute, 2.0) if consts.moe_gathered_exchange == 1 else 2.0
    return GatheredExchange(input_bytes, consts.gathered_exchange_link_share, consts.gathered_exchange_latency_s)


def busiest_expert_rank_load(experts: int, top_k: int, ep: int, tokens: float, popularity_cv: float) -> float:
    """Routed tokens of the busiest of ``ep`` expert-parallel ranks over the mean rank's, for a step over ``tokens`` tokens.

    Expert parallelism places whole experts on ranks (``experts / ep`` each), and every MoE layer waits for its slowest
    rank, so the rank whose experts draw the most tokens sets the layer's expert time (TensorRT-LLM's tech blog 4,
    https://github.com/NVIDIA/TensorRT-LLM/blob/1d263f15a979ef2902c60de3f6238bcc0952bb29/docs/source/blogs/tech_blog/blog4_Scaling_Expert_Parallelism_in_TensorRT-LLM.md,
    measures it on DeepSeek-R1; DeepSeek's EPLB, https://github.com/deepseek-ai/EPLB, replicates hot experts to spread
    it). A rank's share of the ``tokens x top_k`` routed pairs varies with its experts' popularity (coefficient of
    variation ``popularity_cv`` across experts, at most the ``sqrt(experts / top_k - 1)`` top-k routing allows, every
    token's pairs on distinct experts: a relative spread of ``cv x sqrt((ep - 1) / experts)`` over ranks, drawn without
    replacement) and with routing's sampling (``1 / sqrt(pairs per rank)``); the largest of ``ep`` such ranks lies
    ``z_ep`` spreads above the mean (the expected maximum of ``ep`` standard normals, Blom's approximation). No rank
    draws more of a token's ``top_k`` pairs than it holds experts, ``min(top_k, experts / ep)``: ``ep x that / top_k``
    times the mean at most (review25 B: Mixtral, 8 experts and top 2, at EP8 was put at 4.25x the mean, more than the
    4x its routing allows, from a CV of 2.17 its routing cannot reach, 1.73 at most).
    Tensor-parallel experts (every rank a slice of every expert, ``ep`` 1) do equal work: 1.
    """
    if ep <= 1 or experts <= 1:
        return 1.0
    cv = min(popularity_cv, math.sqrt(max(experts / top_k - 1.0, 0.0)))
    pairs_per_rank = max(tokens * top_k / ep, 1.0)
    spread = math.sqrt(cv**2 * (ep - 1) / experts + 1.0 / pairs_per_rank)
    most = ep * min(float(top_k), experts / ep) / top_k
    return min(most, 1.0 + spread * expected_normal_max(ep))


def expected_normal_max(draws: int) -> float:
    """Expected largest of ``draws`` standard normal draws (Blom's plotting position, ``Phi^-1((n - 0.375) / (n + 0.25))``)."""
    if draws <= 1:
        return 0.0
    share = (draws - 0.375) / (draws + 0.25)
    low, high = 0.0, 10.0  # the normal quantile of ``share`` by bisection (math alone: the estimate's cold start)
    for _ in range(64):
        middle = (low + high) / 2
        low, high = (middle, high) if 0.5 * (1.0 + math.erf(middle / math.sqrt(2.0))) < share else (low, middle)
    return (low + high) / 2


@memoized
def prompt_attention_flops_per_token(arch: Architecture, prompt_tokens: int, cached_tokens: int = 0) -> float:
    """Attention FLOPs of one prompt token, averaged over a ``prompt_tokens``-token prompt (all layers).

    ``cached_tokens``: the prompt tokens are the new tail of a longer prompt whose first ``cached_tokens`` the engine's
    prefix cache already holds (their KV blocks reused, not computed): each new token at position ``cached + q`` attends
    to every position before it, the cached ones included (within its layer's window), so the mean is taken over
    positions ``cached + 1 .. cached + prompt_tokens`` (:func:`causal_pairs_per_token`).

    Causal: the token at position p (1-based) attends to the p tokens up to itself, or to the last ``window_tokens`` of
    them in a sliding-window layer (:func:`causal_pairs_per_token`), as decode caps a layer's context at its window
    (:func:`layer_attention_flops`); FlashAttention skips the key blocks outside a layer's window (vLLM passes the
    layer's ``sliding_window`` to the kernel as ``window_size``), so a window-W layer costs about N x W, not N^2 / 2
    (newuser72 item 3: gpt-oss-120b's window-128 layers, Gemma 3's window-1,024 ones). An encoder's bidirectional
    attention: every token to all of the prompt. A pair of tokens costs :func:`layer_prompt_pair_flops` per layer. A
    linear-attention layer (Qwen3-Next's Gated DeltaNet) has no pairs: each token updates and reads its fixed state
    (:func:`generator.sizing.linear_attention.layer_state_flops`), whatever the prompt's length.
    """
    if arch.encoder_only:
        return float(_prompt_pair_flops(arch)) * prompt_tokens
    pairs = sum(
        flops * causal_pairs_per_token(prompt_tokens, window, cached_tokens)
        for window, flops in _prompt_pair_flops_by_window(arch)
    )
    return pairs + (_state_flops(arch) if prompt_tokens > 0 else 0.0)


def causal_pairs_per_token(tokens: int, window: int | None = None, before: int = 0) -> float:
    """Mean (query, key) pairs a causal prompt's token computes: mean of ``min(p, window)``, p = before + 1 .. before + N.

    ``before`` 0: a whole ``N``-token prompt; else its last ``N`` tokens after ``before`` already in the KV cache (a
    prefix-cache hit: each new token still attends to every position before it). Exact: positions up to the window
    ``W`` ramp up (the sum of ``p`` over those of the range: ``N (N + 1) / 2`` pairs in all for full attention from the
    start, ``window`` None or at least the last position), the positions past it see ``W`` keys each.
    """
    if tokens <= 0:
        return 0.0
    last = before + tokens
    width = last if window is None else window
    ramp_end, ramp_start = min(last, width), min(before, width)
    ramp = (ramp_end * (ramp_end + 1) - ramp_start * (ramp_start + 1)) / 2
    flat = max(0, last - max(before, width)) * width
    return (ramp + flat) / tokens


@memoized
def _prompt_pair_flops(arch: Architecture) -> int:
    """FLOPs of one (query, key) pair of a prompt, all layers (:func:`layer_prompt_pair_flops`)."""
    return sum(layer_prompt_pair_flops(arch, layer) for layer in arch.layers)


@memoized
def _prompt_pair_flops_by_window(arch: Architecture) -> tuple[tuple[int | None, int], ...]:
    """(window, FLOPs of one (query, key) pair over the layers of that window), a pair per distinct window (None: full)."""
    flops: dict[int | None, int] = {}
    for layer in arch.layers:
        if layer.state is None:  # a linear-attention layer keeps a state, no (query, key) pairs
            flops[layer.window_tokens] = flops.get(layer.window_tokens, 0) + layer_prompt_pair_flops(arch, layer)
    return tuple(flops.items())


@memoized
def _state_flops(arch: Architecture) -> int:
    """FLOPs a token spends in the recurrences of the linear-attention layers, all layers (0 without any)."""
    return sum(layer_state_flops(layer) for layer in arch.layers)


def training_attention_width(arch: Architecture) -> float:
    """The width a training step's attention runs at, a layer's mean: its (query, key) pair's FLOPs over four.

    ``heads x head_dim`` for MHA / GQA (QK^T and PV, ``2 x heads x head_dim`` each), MLA's query-key and value widths
    (:func:`layer_prompt_pair_flops`), which ``hidden_size`` is not where heads x head_dim differs from it (newuser70
    item 1: Qwen3-30B-A3B 32 x 128 = 4,096 against hidden 2,048; Qwen3-32B 8,192 against 5,120; Gemma).
    """
    return _prompt_pair_flops(arch) / (4 * max(1, arch.num_layers))


def layer_prompt_pair_flops(arch: Architecture, layer: Layer) -> int:
    """FLOPs of one (query, key) pair of a prompt in one layer: QK^T and PV, ``2 x heads x width`` each.

    MHA / GQA: the head dimension for both. MLA runs a prompt in its materialized ("compute friendly") form: the
    latent is expanded through ``kv_b_proj`` into per-head keys and values, so the scores span the query-key width
    (``qk_nope + qk_rope``, 192 for DeepSeek-V3) and the values ``v_head_dim`` (128), where ``hidden / heads`` (56)
    undercounts them (vLLM's MLA backend, vllm/v1/attention/backends/mla/common.py: the compute-friendly approach for
    prefill, the data-movement-friendly absorbed form for decode).
    """
    if layer.attention != MLA:
        return 4 * arch.num_attention_heads * arch.head_dim
    query_key_width, value_width = mla_head_widths(arch, layer)
    return 2 * arch.num_attention_heads * (query_key_width + value_width)


def mla_head_widths(arch: Architecture, layer: Layer) -> tuple[int, int]:
    """(query-key width, value width) of one head of an MLA layer, from its projections' shapes.

    ``q_b_proj`` (or ``q_proj``) gives ``heads x (nope + rope)``; ``kv_b_proj`` gives ``heads x (nope + v)``; the
    cached ``latent + rope`` elements less ``kv_b_proj``'s input (the latent) give ``rope``.
    """
    heads = arch.num_attention_heads
    by_name = {lin.name: lin for lin in layer.linears}
    query = by_name.get("q_b_proj") or by_name["q_proj"]
    kv_b = by_name["kv_b_proj"]
    query_key = query.out_features // heads
    rope = layer.kv_elements_per_token - kv_b.in_features
    return query_key, kv_b.out_features // heads - (query_key - rope)


def gemm_fill(tokens: float, consts: Constants) -> float:
    """A GEMM over ``tokens`` rows against a large one: ``tokens / (tokens + gemm_half_efficiency_tokens)``."""
    return tokens / (tokens + consts.gemm_half_efficiency_tokens)


def gemm_efficiency(tokens: float, consts: Constants) -> float:
    """Fraction of the tensor peak a GEMM over ``tokens`` rows reaches (saturating in the token count)."""
    return consts.prefill_compute_efficiency * tokens / (tokens + consts.gemm_half_efficiency_tokens)


@memoized
def _expert_flop_params(arch: Architecture) -> int:
    """Active routed-expert parameters per token (whole model)."""
    total = 0
    for layer in arch.layers:
        for lin in layer.linears:
            if lin.group == EXPERT:
                total += lin.in_features * lin.out_features * layer.experts_per_token
    return total


def gemm_seconds(
    arch: Architecture, par: Parallelism, acc: Accelerator, tokens: float, consts: Constants, logit_tokens: float | None = None
) -> float:
    """Matmul time of one forward over ``tokens`` tokens on one GPU of the replica (the slowest stage's share).

    Dense layers multiply all ``tokens`` at once; each routed expert only the tokens routed to it. The
    LM head multiplies only the ``logit_tokens`` that need a next token (prompt tokens in a prefill do
    not), and only on the last pipeline stage, which therefore sets the pace of the pipeline.
    """
    return _gemm_at(_gemm_parts(arch, par, acc, consts), tokens, tokens if logit_tokens is None else logit_tokens, consts)


class _GemmParts(NamedTuple):
    """What :func:`gemm_seconds` needs of a replica, independent of the token count."""

    peak_flops: float
    #: ``2 x`` the dense (non-expert, non-head, split) FLOP parameters, the LM head's and the active experts'.
    dense_flops_per_token: float
    head_flops_per_token: float
    expert_flops_per_token: float
    gpus: int
    head_split: int
    experts: int
    top_k: int
    #: ``2 x`` the parameters every tensor-parallel rank multiplies whole (:func:`replicated_on_every_rank`).
    replicated_flops_per_token: float = 0.0
    #: What divides them: the attention data-parallel groups (each its own tokens) and the pipeline stages.
    replicated_split: int = 1
    #: Expert-parallel ranks the routed experts are placed on whole (1: every rank a slice of each), and the spread of
    #: the experts' popularity (:func:`busiest_expert_rank_load`).
    expert_ranks: int = 1
    popularity_cv: float = 0.0
    #: The rates the dense, replicated and routed-expert GEMMs reach before their token-count efficiency: ``peak_flops``
    #: but where their kernels dequantize the weights in the main loop (:func:`dequantized_peak`); 0: ``peak_flops``.
    dense_peak_flops: float = 0.0
    replicated_peak_flops: float = 0.0
    expert_peak_flops: float = 0.0
    #: exllama's (:data:`EXLLAMA_MAX_Q_GEMM_ROWS` of the format; 0: another kernel): up to that many rows, the quantized
    #: shares of the dense and replicated multiply-adds run as stored at ``scalar_peak_flops`` (half2 FMAs, CUDA cores).
    fused_rows: int = 0
    scalar_peak_flops: float = 0.0
    dense_quantized_share: float = 0.0
    replicated_quantized_share: float = 0.0
    #: Bytes of fp16 one GPU's quantized matrices reconstruct to for a pass of more than ``fused_rows`` rows: written by
    #: the reconstruction, then read by cuBLAS (:func:`weight_pass_seconds`).
    reconstructed_bytes: float = 0.0
    #: GPUs the routed experts' FLOPs are divided over where not ``gpus`` (0: ``gpus``): a single prompt under attention
    #: data parallelism runs its dense layers on its own rank's ``tp x pp`` GPUs and its routed experts on all ``ep x pp``
    #: (:func:`prompt_gemm_parts`).
    expert_gpus: int = 0

    def reconstructs(self, tokens: float) -> bool:
        """Whether exllama reconstructs the quantized matrices to fp16 for ``tokens`` rows (past ``fused_rows``)."""
        return bool(self.fused_rows) and tokens > self.fused_rows


@memoized
def _replicated_flop_params(arch: Architecture) -> int:
    """Parameters per token of the matrices every tensor-parallel rank holds and multiplies whole (whole model)."""
    return sum(
        lin.in_features * lin.out_features * lin.copies
        for layer in arch.layers
        for lin in layer.linears
        if replicated_on_every_rank(lin)
    )


#: The engine's settings :func:`_gemm_parts` reads none of, at one value in its key (:func:`_gemm_constants`).
_ENGINE_SETTINGS = {"prefill_chunk_tokens": Constants().prefill_chunk_tokens, "max_num_seqs": Constants().max_num_seqs}
#: :func:`_gemm_constants`' answers by the constants given (as their identity is kept: see there).
_GEMM_CONSTANTS: dict[int, tuple[Constants, Constants]] = {}


def _gemm_constants(consts: Constants) -> Constants:
    """``consts`` with the engine's tokens a pass and its sequences at one value: what the GEMM parts are kept by.

    :func:`_gemm_parts` reads the GEMM ratios, the expert popularity and ``prefill_compute_efficiency``, never
    ``prefill_chunk_tokens`` or ``max_num_seqs``, so its parts are the same whatever those are; a layout's prompt
    (:func:`prefill_seconds`, its chunk's constants) and its decode steps (the engine's) then share one (speed100: each
    layout formed both). One copy per constants object given (identity-checked, as the memo keys its first argument).
    """
    known = _GEMM_CONSTANTS.get(id(consts))
    if known is not None and known[0] is consts:
        return known[1]
    settings = {name: getattr(consts, name) for name in _ENGINE_SETTINGS}
    same = settings == _ENGINE_SETTINGS
    canonical = consts if same else consts._replace(**_ENGINE_SETTINGS)
    if len(_GEMM_CONSTANTS) >= 4096:
        _GEMM_CONSTANTS.clear()
    _GEMM_CONSTANTS[id(consts)] = (consts, canonical)
    return canonical


def _gemm_parts(arch: Architecture, par: Parallelism, acc: Accelerator, consts: Constants) -> _GemmParts:
    """What :func:`gemm_seconds` needs of a replica (:class:`_GemmParts`), kept by the constants it reads."""
    return _gemm_parts_of(arch, par, acc, _gemm_constants(consts))


@memoized
def _gemm_parts_of(arch: Architecture, par: Parallelism, acc: Accelerator, consts: Constants) -> _GemmParts:
    peak = acc.dense_tflops * 1e12 * (consts.fp4_gemm_efficiency_ratio if acc.compute == "fp4" else 1.0)
    if acc.software_block_scaled:  # block-FP8 weights scaled on the CUDA cores (SOFTWARE_BLOCK_SCALING)
        peak *= consts.fp8_block_gemm_efficiency_ratio
    dense_peak = replicated_peak = expert_peak = peak
    dense_share = replicated_share = 0.0
    if acc.dequantized is not None:  # the quantized matrices' tiles converted to 16-bit in the main loop, beside the MMAs
        dense_share, replicated_share, expert_share = dequantized_flop_shares(arch, acc.dequantized)
        dense_ratio = dense_dequant_ratio(acc, consts)
        dense_peak = dequantized_peak(peak, dense_share, dense_ratio)
        replicated_peak = dequantized_peak(peak, replicated_share, dense_ratio)
        expert_peak = dequantized_peak(peak, expert_share, expert_dequant_ratio(acc, consts))
    expert = _expert_flop_params(arch)
    head = arch.logits_params
    experts, top_k = arch.routed_experts
    # a single GPU multiplies everything once: its replicated matrices stay in the split count
    replicated = _replicated_flop_params(arch) if par.tp > 1 else 0
    dense = 2.0 * (arch.flop_params - expert - head - replicated)
    exllama = acc.dequant_kernel == "exllama"
    # one GPU's quantized dense and replicated weights, two fp16 bytes each once reconstructed
    reconstructed = 2.0 * (dense_share * dense / 2 / par.gpus + replicated_share * replicated / par.pp) if exllama else 0.0
    return _GemmParts(
        peak,
        dense,
        2.0 * head,
        2.0 * expert,
        par.gpus,
        par.tp * par.attention_dp,
        experts,
        top_k,
        2.0 * replicated,
        par.attention_dp * par.pp,
        par.ep,
        consts.expert_popularity_cv,
        dense_peak,
        replicated_peak,
        expert_peak,
        EXLLAMA_MAX_Q_GEMM_ROWS[storage_family(acc.dequantized.name)] if exllama and acc.dequantized else 0,
        acc.scalar_half_tflops * 1e12 * consts.prefill_compute_efficiency,
        dense_share,
        replicated_share,
        reconstructed,
    )


def prompt_gemm_parts(arch: Architecture, par: Parallelism, acc: Accelerator, consts: Constants) -> _GemmParts:
    """:func:`_gemm_parts` of ONE prompt's passes: under attention data parallelism it runs on one DP rank (review72 item 3).

    The rank's ``tp`` GPUs a stage multiply its dense (attention projections, dense MLPs, shared experts) and
    replicated matrices and its LM head; only its routed experts are spread over the stage's ``ep`` GPUs, its tokens
    exchanged all-to-all (:func:`rank_alltoall_seconds`). Without attention DP the replica's own parts.
    """
    if par.attention_dp <= 1:
        return _gemm_parts(arch, par, acc, consts)
    return _prompt_gemm_parts(arch, par, acc, _gemm_constants(consts))


@memoized
def _prompt_gemm_parts(arch: Architecture, par: Parallelism, acc: Accelerator, consts: Constants) -> _GemmParts:
    """:func:`prompt_gemm_parts` under attention data parallelism, kept by the constants the parts read."""
    parts = _gemm_parts_of(arch, par, acc, consts)
    return parts._replace(gpus=par.tp * par.pp, head_split=par.tp, replicated_split=par.pp, expert_gpus=par.gpus)


class DequantizedRates(NamedTuple):
    """The rates a replica's compute-bound GEMMs are timed at where their kernels dequantize weights in the main loop.

    What :func:`gemm_seconds` divides by (review 27 item 3: the 0.66 / 0.3 derate was applied but no figure said it).
    """

    #: The weight format dequantized (``int4``, ``mxfp4``, ``nvfp4``, ``fp8``...).
    format: str
    #: The 16-bit tensor rate the kernels multiply in, TFLOP/s, as the GPU reaches it (:attr:`Accelerator.physical_tflops`;
    #: this and the rates below are the ones :func:`gemm_seconds` divides by times :attr:`Accelerator.reference_share`).
    rate_tflops: float
    #: Shares of the dense (non-expert, non-head) and routed-expert multiply-adds whose weights are quantized.
    dense_share: float
    expert_share: float
    #: ``dequant_gemm_efficiency_ratio`` and ``dequant_expert_gemm_efficiency_ratio``.
    dense_ratio: float
    expert_ratio: float
    #: The dense and the routed-expert GEMMs' rates once compute-bound, TFLOP/s (the shares blended harmonically);
    #: the experts' None for a model without routed experts.
    effective_tflops: float
    expert_effective_tflops: float | None
    #: The dense matrices' mixed-input kernel (:func:`dense_dequant_kernel`): ``machete`` or ``marlin``.
    dense_kernel: str = "marlin"
    #: The routed experts' (:func:`expert_dequant_kernel`): ``marlin``, or "" for the grouped kernels.
    expert_kernel: str = ""
    #: exllama's (``dense_kernel``): the rows up to which it multiplies the weights as stored, and the CUDA-core half2
    #: rate it does so at, TFLOP/s as the GPU reaches it; 0 for another kernel.
    fused_rows: int = 0
    scalar_tflops: float = 0.0

    def to_dict(self) -> dict[str, object]:
        """The estimate's ``throughput.dequantized_in_gemm``, with :meth:`text` as its ``basis``."""
        out: dict[str, object] = {
            "format": self.format,
            "dense_share": round(self.dense_share, 4),
            "dense_ratio": self.dense_ratio,
            "dense_kernel": self.dense_kernel,
            "effective_tflops": round(self.effective_tflops, 1),
            "basis": self.text(),
        }
        if self.fused_rows:
            out |= {"fused_rows": self.fused_rows, "scalar_tflops": round(self.scalar_tflops, 1)}
        if self.expert_effective_tflops is not None:
            out |= {
                "expert_share": round(self.expert_share, 4),
                "expert_ratio": self.expert_ratio,
                "expert_kernel": self.expert_kernel or "grouped",
                "expert_effective_tflops": round(self.expert_effective_tflops, 1),
            }
        return out

    def text(self) -> str:
        """Why the quantized matrices' GEMMs run below the 16-bit rate, with the rates."""
        if self.dense_kernel == "exllama":
            return self._exllama_text()
        rates = []
        if self.dense_share:
            rates.append(
                f"the dense matrices' at {self.effective_tflops:,.0f} TFLOP/s ({self.dense_share:.0%} of their "
                f"multiply-adds quantized, {self.dense_kernel}'s kernel at {_KERNEL_RATIO[self.dense_kernel]} "
                f"{self.dense_ratio:g})"
            )
        if self.expert_effective_tflops is not None and self.expert_share:
            rates.append(
                f"the routed experts' at {self.expert_effective_tflops:,.0f} TFLOP/s ({self.expert_share:.0%} quantized, "
                + (
                    f"Marlin's MoE kernel at dequant_gemm_efficiency_ratio {self.expert_ratio:g}"
                    if self.expert_kernel == "marlin"
                    else f"at dequant_expert_gemm_efficiency_ratio {self.expert_ratio:g}"
                )
                + "), before each expert's token-count efficiency"
            )
        return (
            f"{self.format} weights are dequantized to 16 bits inside the GEMMs' main loop (mixed-input W4A16 / W8A16 "
            f"kernels: this GPU has no tensor rate that multiplies them as stored), so once compute-bound (large "
            f"batches, prefill) the GEMMs run below the {self.rate_tflops:,.0f} TFLOP/s 16-bit rate it sustains in matmuls: "
            f"{' and '.join(rates)}; a memory-bound decode step still reads the quantized bytes"
        )

    def _exllama_text(self) -> str:
        """How vLLM's GPTQ kernel runs the quantized matrices on Volta, where Marlin does not (fix68 item 1)."""
        return (
            f"{self.format} weights run through vLLM's GPTQ (exllama) kernel on Volta, where Marlin, which needs compute "
            f"capability 8.0, does not run ({VOLTA_INT4_SOURCES[0]}): GPTQ checkpoints, and compressed-tensors W4A16 / "
            f"W8A16 ones of symmetric integers, load there ({VOLTA_INT4_SOURCES[1]}); AWQ needs 7.5, FP8 and INT8 "
            f"W8A8 are not served. A pass of up to {self.fused_rows} rows multiplies the stored weights with half2 FMAs "
            f"on the CUDA cores, at {self.scalar_tflops:,.0f} TFLOP/s (twice the fp32 rate, {HALF2_SOURCE}), reading "
            f"the quantized bytes; a larger one first reconstructs each matrix to fp16 (written, then read back by "
            f"cuBLAS) and multiplies it at the {self.rate_tflops:,.0f} TFLOP/s 16-bit tensor rate ({VOLTA_INT4_SOURCES[2]})"
        )


#: The constant each dense mixed-input kernel's ratio is (:func:`dense_dequant_ratio`).
_KERNEL_RATIO = {"machete": "machete_gemm_efficiency_ratio", "marlin": "dequant_gemm_efficiency_ratio"}


def dequantized_rates(arch: Architecture, par: Parallelism, acc: Accelerator, consts: Constants) -> DequantizedRates | None:
    """The rates :func:`gemm_seconds` times the quantized matrices at, or None where none is dequantized in the GEMM."""
    if acc.dequantized is None:
        return None
    parts = _gemm_parts(arch, par, acc, consts)
    dense_share, _, expert_share = dequantized_flop_shares(arch, acc.dequantized)
    physical = acc.reference_share / 1e12  # the rates as the GPU reaches them, not as normalised to the reference's
    return DequantizedRates(
        format=acc.dequantized.name,
        rate_tflops=parts.peak_flops * physical,
        dense_share=dense_share,
        expert_share=expert_share,
        dense_ratio=dense_dequant_ratio(acc, consts),
        dense_kernel=acc.dequant_kernel or "marlin",
        expert_ratio=expert_dequant_ratio(acc, consts),
        expert_kernel=acc.expert_dequant_kernel,
        effective_tflops=(parts.dense_peak_flops or parts.peak_flops) * physical,
        expert_effective_tflops=(
            (parts.expert_peak_flops or parts.peak_flops) * physical if parts.expert_flops_per_token else None
        ),
        fused_rows=parts.fused_rows,
        scalar_tflops=acc.scalar_half_tflops * acc.reference_share,
    )


def dequantized_peak(peak_flops: float, share: float, ratio: float) -> float:
    """The rate of GEMMs ``share`` of whose multiply-adds run at ``ratio`` of ``peak_flops``, the rest at ``peak_flops``.

    Those are the matrices whose weights are dequantized in the main loop; the two kinds run one after another, so the
    rates blend harmonically.
    """
    return peak_flops / (1.0 - share + share / ratio)


def _gemm_at(parts: _GemmParts, tokens: float, logits: float, consts: Constants) -> float:
    """:func:`gemm_seconds` at ``tokens`` tokens, ``logits`` of them through the LM head."""
    peak = parts.peak_flops
    efficiency = gemm_efficiency(tokens, consts)
    fused = bool(parts.fused_rows) and not parts.reconstructs(tokens)  # exllama: the quantized weights as stored

    def matrices_s(flops: float, quantized_share: float, own_peak: float) -> float:
        if fused:
            return _fused_seconds(flops, quantized_share, peak * efficiency, parts)
        return flops / ((own_peak or peak) * efficiency)

    dense_s = matrices_s(parts.dense_flops_per_token * tokens / parts.gpus, parts.dense_quantized_share, parts.dense_peak_flops)
    if parts.replicated_flops_per_token:
        replicated = parts.replicated_flops_per_token * tokens / parts.replicated_split
        dense_s += matrices_s(replicated, parts.replicated_quantized_share, parts.replicated_peak_flops)
    if logits > 0:
        dense_s += parts.head_flops_per_token * logits / parts.head_split / (peak * gemm_efficiency(logits, consts))
    if not parts.expert_flops_per_token:
        return dense_s
    touched = max(1.0, expected_experts_touched(parts.experts, parts.top_k, tokens))
    per_expert_tokens = tokens * parts.top_k / touched
    busiest = busiest_expert_rank_load(parts.experts, parts.top_k, parts.expert_ranks, tokens, parts.popularity_cv)
    expert_s = busiest * parts.expert_flops_per_token * tokens / (parts.expert_gpus or parts.gpus)
    return dense_s + expert_s / ((parts.expert_peak_flops or peak) * gemm_efficiency(per_expert_tokens, consts))


def _fused_seconds(flops: float, quantized_share: float, tensor_flops: float, parts: _GemmParts) -> float:
    """``flops`` of which ``quantized_share`` run through exllama's kernel (half2 FMAs), the rest on the tensor cores."""
    return flops * quantized_share / parts.scalar_peak_flops + flops * (1.0 - quantized_share) / tensor_flops


def weight_pass_seconds(parts: _GemmParts, weight_read_s: float, matmul_s: float, tokens: float, bandwidth: float) -> float:
    """A pass's linear layers over ``tokens`` rows: the longer of reading the weights and their GEMMs, one after another.

    Where exllama reconstructs (more than ``fused_rows`` rows), each quantized matrix is first read and written as
    fp16 (``weight_read_s`` and the write), and cuBLAS then reads the fp16 back beside its multiply-adds.
    """
    if not parts.reconstructs(tokens):
        return max(weight_read_s, matmul_s)
    half_s = parts.reconstructed_bytes / bandwidth
    return weight_read_s + half_s + max(half_s, matmul_s)


def layer_attention_flops(arch: Architecture, layer: Layer, context_tokens: int) -> float:
    """Attention FLOPs of one new token over its cached context in one layer (its window caps the context).

    A linear-attention layer's: its recurrence's (:func:`generator.sizing.linear_attention.layer_state_flops`).

    QK^T and PV each cost ``2 x heads x width`` per cached token: the head dimension for MHA/GQA; for MLA in its
    absorbed form the scores span the cached latent and its RoPE key, the values the latent alone (``kv_b_proj``'s
    input).
    """
    if layer.state is not None:  # linear attention: the token updates and reads a fixed state, no cached context
        return float(layer_state_flops(layer))
    seen = min(context_tokens, layer.window_tokens) if layer.window_tokens else context_tokens
    if layer.attention != MLA:
        return 4.0 * arch.num_attention_heads * arch.head_dim * seen
    latent = next(lin.in_features for lin in layer.linears if lin.name == "kv_b_proj")
    return 2.0 * arch.num_attention_heads * (layer.kv_elements_per_token + latent) * seen


@memoized
def attention_flops_per_token(arch: Architecture, context_tokens: int) -> float:
    """Attention FLOPs of one new token over its cached context, all layers (:func:`layer_attention_flops`)."""
    return sum(layer_attention_flops(arch, layer, context_tokens) for layer in arch.layers)


def attention_flops_per_s(acc: Accelerator, consts: Constants) -> float:
    """One GPU's rate for the kernels timed at the bf16 tensor rate beside the GEMMs: attention, LoRA's shrink / expand."""
    return acc.attention_rate_tflops * 1e12 * consts.prefill_compute_efficiency


def attention_seconds(
    arch: Architecture, par: Parallelism, acc: Accelerator, sequences: int, context_tokens: int, consts: Constants
) -> float:
    """Attention time of one decode step for ``sequences`` sequences (heads split by TP, layers by PP)."""
    flops = attention_flops_per_token(arch, max(context_tokens, 1)) * sequences / (par.tp * par.attention_dp * par.pp)
    return flops / attention_flops_per_s(acc, consts)


def pipeline_speedup(pp: int, micro_batches: int) -> float:
    """How many stage groups' worth of work a pipeline of ``pp`` stages does on ``micro_batches`` (bubble included)."""
    if pp <= 1:
        return 1.0
    m = max(1, micro_batches)
    return pp * m / (m + pp - 1)


def prefill_flops(arch: Architecture, tokens: int, cached_tokens: int = 0) -> float:
    """FLOPs to prefill one sequence of ``tokens`` (linear layers plus attention, causal but for an encoder).

    ``cached_tokens``: the ``tokens`` are the new tail after that many prompt tokens the prefix cache holds: only the
    tail is multiplied, its tokens attending to the cached positions too (:func:`prompt_attention_flops_per_token`).
    """
    return 2.0 * arch.flop_params * tokens + prompt_attention_flops_per_token(arch, tokens, cached_tokens) * tokens


@memoized
def prompt_taken_seconds(
    arch: Architecture,
    par: Parallelism,
    acc: Accelerator,
    tokens: int,
    consts: Constants,
    weights: WeightSizes,
    cached_tokens: int = 0,
) -> float:
    """The time a prompt keeps a replica's stages busy where the engine runs it in forwards of its own (SGLang's default).

    Each pass reads the weights beside its GEMMs (:func:`prefill_seconds` with ``weights``) and is an engine iteration
    of its own (``decode_step_overhead_s``), as :meth:`DecodeModel.step` counts a pass step under ``prefill_apart``
    (review79 item 3): the rate at a batch then stays under the saturated one.
    """
    passes = -(-max(1, tokens) // max(1, consts.prefill_chunk_tokens))
    busy = prefill_seconds(arch, par, acc, tokens, consts, weights, fill=False, cached_tokens=cached_tokens)
    return busy + passes * consts.decode_step_overhead_s


@memoized  # planning asks it of the same prompt for every layout (it lost its cache when fix126 inserted the one above)
def prefill_seconds(
    arch: Architecture,
    par: Parallelism,
    acc: Accelerator,
    tokens: int,
    consts: Constants,
    weights: WeightSizes | None = None,
    fill: bool = True,
    sequences: int = 1,
    cached_tokens: int = 0,
) -> float:
    """Time to prefill ``tokens`` prompt tokens on one replica (compute-bound, plus TP all-reduces).

    ``sequences``: the tokens are that many equal prompts packed in the passes (a pooling engine's batch), each
    attending over its own tokens only.

    ``cached_tokens``: the ``tokens`` are a prompt's new tail, after that many tokens whose KV blocks the engine's
    prefix cache already holds (vLLM's automatic prefix caching: the request starts with ``num_computed_tokens`` at the
    hit, its scheduled tokens are the rest): the passes, GEMMs and all-reduces are the tail's alone, and its attention
    pairs each new token with every position before it (:func:`prompt_attention_flops_per_token`).

    Each pass crosses the pipeline stages one after another, and the engines planned (vLLM's V1 engine, SGLang) start a
    prompt's next pass on the first stage while its earlier ones are in later stages, so a lone prompt of ``n`` passes
    takes one stage's share of it times ``1 + (pp - 1) / n`` (the sources, per engine, at the end; TensorRT-LLM, which
    runs them one after another, would take ``pp`` such shares). The engine runs it in passes of at most
    ``prefill_chunk_tokens`` (vLLM's ``max_num_batched_tokens``): each pass multiplies only its chunk and all-reduces
    it, and, ``weights`` given, reads the GPU's weights once, which bounds a small chunk's pass.
    ``fill``: the prompt's own time through the stages (its last pass leaves the last stage pp - 1 passes after the
    first stage is done); without it, the time it keeps each stage busy (what it takes from a replica under load).
    """
    chunk = max(1, min(tokens, consts.prefill_chunk_tokens))
    full, rest = divmod(tokens, chunk)
    last = rest or chunk  # the last pass, whose final token alone goes through the LM head
    full -= 0 if rest else 1
    bandwidth = acc.memory_bandwidth_gb_per_s * 1e9 * consts.decode_bandwidth_efficiency

    # under attention DP the prompt runs on one rank: its dense GEMMs on the rank's GPUs, its routed experts on all the
    # stage's, its tokens exchanged all-to-all (review72 item 3); under load (not fill) the ranks each run their own
    # prompts at once, so the replica gives one prompt its dense GEMMs over all ranks and 1 / attention_dp of the exchange
    parts = prompt_gemm_parts(arch, par, acc, consts) if fill else _gemm_parts(arch, par, acc, consts)

    lora = acc.lora  # a prompt's pass runs one request's adapter through the LoRA kernels
    lora_rate = attention_flops_per_s(acc, consts)  # the rate its shrink / expand run at, as a decode step's

    def one_pass(n: int, logits: int) -> float:
        multiply = _gemm_at(parts, n, logits, consts)
        adapters = 0.0 if lora is None else lora.seconds(sequences, n, bandwidth, lora_rate)
        if not weights:
            return multiply + adapters
        read_s = decode_weight_read_bytes(arch, weights, par, n) / bandwidth
        return weight_pass_seconds(parts, read_s, multiply, n, bandwidth) + adapters

    # one stage's share of every pass: its GEMMs (gemm_seconds is per stage), and its layers' attention and TP
    # all-reduces (review 12 item 1: they were the whole model's in every stage)
    linear = full * one_pass(chunk, 0) + one_pass(last, 1)
    each = max(1, tokens // sequences)
    attention = (sequences * prompt_attention_flops_per_token(arch, each, cached_tokens) * each) / (
        par.tp * prompt_attention_rate(arch, attention_flops_per_s(acc, consts), acc.memory_bandwidth_gb_per_s, consts)
    )
    comm = 0.0
    if par.tp > 1:
        latency = consts.allreduce_latency_nvlink_s if acc.fast_link else consts.allreduce_latency_pcie_s
        per_pass = [
            allreduce_seconds(n * arch.hidden_size * 2, par.tp, acc.link_gb_per_s, latency, acc.allreduce_time_scale)
            for n in (chunk, last)
        ]
        comm = 2 * arch.num_layers * (full * per_pass[0] + per_pass[1])
    exchange = 0.0  # the prompt's expert all-to-all, one stage's MoE layers a pass (attention DP only)
    if par.attention_dp > 1:
        latency = consts.allreduce_latency_nvlink_s if acc.fast_link else consts.allreduce_latency_pcie_s
        gathered = gathered_exchange(acc, consts)

        def busiest(n: int) -> float:
            # one prompt: its rank's egress carries all it sends (1.0); under load every rank sends its own prompt's
            # tokens at once and the layer waits for the rank whose experts draw the most of the step's n x dp
            # tokens, as the decode step's term counts it (review73 item 5: 1.515 at EP8 for R1, 4,000 tokens)
            if fill:
                return 1.0
            return busiest_expert_rank_load(*arch.routed_experts, par.ep, n * par.attention_dp, consts.expert_popularity_cv)

        sent = [
            rank_alltoall_seconds(arch, par, n, acc.link_gb_per_s, latency, busiest(n), acc.expert_network, gathered)
            for n in (chunk, last)
        ]
        exchange = (full * sent[0] + sent[1]) / (1 if fill else par.attention_dp)
    # the routed experts' memory-bound kernels (quantization, activation, top-k sum) over every prompt token
    routed = routed_expert_traffic_seconds(arch, par, acc, tokens, bandwidth, one_rank=fill)
    stage = linear + (attention + comm) / par.pp + exchange + routed  # the time the prompt keeps one stage busy
    if not fill or par.pp == 1:
        return stage
    # the passes follow one another through the stages: the last leaves the last stage pp - 1 passes after the
    # first stage is done with it (newuser73 item 19 asked whether vLLM runs them one after another instead, after
    # vllm-project/vllm#41682, a throughput report with many prompts whose reading of the cause no maintainer
    # confirmed; the code below says the chunks of one prompt are pipelined, and vLLM's Model Runner V2 PP RFC,
    # https://github.com/vllm-project/vllm/issues/50853, keeps it: "Non-final chunked-prefill chunks remain eligible
    # in adjacent steps because they do not depend on sampled-token feedback"). Per engine:
    # - SGLang: "Different chunks of the same request can be processed simultaneously by different nodes, thus
    #   parallelizing the processing and reducing TTFT" (its PP event loop, one micro-batch a stage in flight,
    #   https://github.com/sgl-project/sglang/blob/main/docs/advanced_features/pipeline_parallelism.md).
    # - TensorRT-LLM (not a serving engine specgen plans): its PyTorch executor's PP loop keeps a scheduled request in
    #   `inflight_req_ids` until its micro-batch leaves the last stage and its scheduler skips those, so a prompt's
    #   chunks run one after another, a lone prompt's prefill the TP-only figure (the `fill=False` stage time x pp)
    #   (`PyExecutor._executor_loop_pp` / `_schedule`,
    #   https://github.com/NVIDIA/TensorRT-LLM/blob/main/tensorrt_llm/_torch/pyexecutor/py_executor.py).
    # - vLLM's V1 scheduler schedules a prompt's next chunk while one is in flight:
    # `Scheduler._update_after_schedule` advances num_computed_tokens at scheduling ("allowing us to schedule the
    # prefill request again immediately in the next scheduling step"), `schedule()` skips a running request only
    # once all its prompt is scheduled ("PP>1 and we have already scheduled all prompt tokens but they are not
    # finished yet"), and `EngineCore.step_with_batch_queue` schedules a new batch while its queue of
    # max_concurrent_batches (the PP size) is not full (vllm/v1/core/sched/scheduler.py, vllm/v1/engine/core.py;
    # fuzz22 item 1). A pooling request is chunked so only where chunked prefill is on: by default for causal models
    # pooling the LAST or ALL tokens (ModelConfig.is_chunked_prefill_supported), as vLLM's embed / classify conversion
    # of a decoder pools by default; a model configured for MEAN pooling runs whole (not modelled here), as does an
    # encoder, whose passes the planner widens to a whole request (generator.planner.inference.batched_tokens).
    return stage + (par.pp - 1) * stage / (full + 1)


#: Storage families of routed experts whose engine kernels fuse the gather into the first grouped GEMM and the top-k
#: reduction into the second one's epilogue (no separate activation, quantization or sum kernels): MXFP4 / NVFP4
#: experts outside Marlin's MoE kernel (vLLM's ``triton_kernels`` ``matmul_ogs`` backend on Hopper and ROCm, FlashInfer
#: / TensorRT-LLM-gen MoE on Blackwell; vllm/model_executor/layers/quantization/mxfp4.py ``get_mxfp4_backend``).
FUSED_ROUTING_FAMILIES = ("mxfp4", "nvfp4")


def fuses_routing(weights: WeightFormat) -> bool:
    """Whether the engine's routed-expert kernels for ``weights`` fuse their gather and top-k sum into the GEMMs."""
    return storage_family(weights.name) in FUSED_ROUTING_FAMILIES and not runs_marlin_moe(weights)


def routed_expert_traffic_bytes(arch: Architecture, par: Parallelism, acc: Accelerator) -> tuple[float, float]:
    """:func:`routed_expert_bytes` of a replica on ``acc``; 0 where its kernels fuse them.

    Fused: :attr:`Accelerator.fused_routing`, or FP4 computed as stored. W8A8 FP8 experts (FP8 computed as stored)
    quantize their inputs.
    """
    if acc.compute == "fp4" or acc.fused_routing:
        return 0.0, 0.0
    return routed_expert_bytes(arch, par, acc.compute == "fp8" and acc.dequantized is None)


@memoized
def routed_expert_bytes(arch: Architecture, par: Parallelism, w8a8: bool) -> tuple[float, float]:
    """HBM bytes one GPU moves a token beside the routed experts' GEMMs, one stage's layers: (per token, per routed pair).

    The engines run the routed experts as two grouped GEMMs with memory-bound kernels between and after them, each
    over every token a GPU holds: the input quantized to FP8 per token group (W8A8 FP8 experts: 2 bytes read, 1 written
    an element of the hidden size); the gated activation over the first GEMM's output (each routed (token, expert) pair:
    2 x its expert's intermediate columns on the GPU read, 1 x written, at 2 bytes; W8A8 FP8 re-quantizes the result, 3
    bytes more a column); and the top-k reduction, which reads each pair's full hidden-size output of the second GEMM
    and writes the token's weighted sum (2 bytes an element each). vLLM: ``fused_experts_impl`` (``silu_and_mul``,
    ``ops.moe_sum`` over ``intermediate_cache3``,
    https://github.com/vllm-project/vllm/blob/13cb3e44373beb1c8b9d2c017f565af6f7a1b601/vllm/model_executor/layers/fused_moe/fused_moe.py),
    which SGLang's ``fused_moe_triton`` follows; TensorRT-LLM's CUTLASS MoE: ``doActivationKernel`` and
    ``finalizeMoeRoutingKernel`` ("unpermutes the original data, does the k-way reduction",
    https://github.com/NVIDIA/TensorRT-LLM/blob/05316d3313360012536ace46c781518f5afae75e/cpp/tensorrt_llm/kernels/mixtureOfExperts/moe_kernels.cu).
    Under TP every GPU of the group runs them for every token at the full hidden size while the GEMMs' FLOPs divide by
    TP, so they grow into a large share of a TP8 prompt pass; EP spreads the pairs over its ranks. ``w8a8``: FP8 experts
    computed as stored, whose inputs and activations are quantized by kernels of their own.
    """
    experts, top_k = arch.routed_experts
    if not experts or not top_k:
        return 0.0, 0.0
    moe_layers = [layer for layer in arch.layers if layer.experts_per_token]
    hidden = arch.hidden_size
    per_token = per_pair = 0.0
    for layer in moe_layers:
        # the routed expert's intermediate columns on one GPU: its gate / up / down matrices hold 3 x hidden x that, sliced
        # by TP, or whole on one rank under EP (whose ranks then share the pairs)
        expert_params = sum(lin.in_features * lin.out_features for lin in layer.linears if lin.group == EXPERT)
        columns = expert_params / (3 * hidden) / (par.tp if par.ep <= 1 else 1)
        per_token += hidden * (3 if w8a8 else 0) + hidden * 2  # input quantization; moe_sum's write
        per_pair += columns * (6 + (3 if w8a8 else 0)) + hidden * 2  # silu_and_mul (+ re-quantization); moe_sum's read
    stages = max(1, par.pp)
    return per_token / stages, per_pair * top_k / max(1, par.ep) / stages


def routed_expert_traffic_seconds(
    arch: Architecture, par: Parallelism, acc: Accelerator, tokens: float, bandwidth: float, one_rank: bool = False
) -> float:
    """Time one GPU spends in :func:`routed_expert_traffic_bytes` for ``tokens`` tokens of a pass (one stage).

    Under attention data parallelism each rank quantizes and sums its own tokens: the replica's tokens divide over the
    ranks, where ``one_rank`` (a lone prompt, on one rank) they do not; the routed pairs spread over the EP ranks either way.
    """
    per_token, per_pair = routed_expert_traffic_bytes(arch, par, acc)
    if not per_pair:
        return 0.0
    return tokens * (per_token / (1 if one_rank else max(1, par.attention_dp)) + per_pair) / bandwidth


class Saturation(NamedTuple):
    """A replica at full load (offline benchmark conditions)."""

    batch: int
    output_tokens_per_s: float
    step: DecodeStep


def step_budget_batch(step_tokens: int, input_tokens: int, output_tokens: int) -> int:
    """Most sequences decoding at steady state when a step runs at most ``step_tokens`` tokens (at least 1).

    Each output token a step decodes brings ``input / output`` prompt tokens to prefill in the same steps (vLLM's
    scheduler fills a step's ``max_num_batched_tokens`` with the running decodes, then prefill chunks), so
    ``batch x (1 + input / output) <= step_tokens``.
    """
    return max(1, step_tokens * max(1, output_tokens) // (input_tokens + max(1, output_tokens)))


def saturated_throughput(
    arch: Architecture,
    weights: WeightSizes,
    kv_bits: int,
    par: Parallelism,
    acc: Accelerator,
    kv_capacity_tokens: int,
    input_tokens: int,
    output_tokens: int,
    consts: Constants,
    step_token_budget: int | None = None,
    cached_tokens: int = 0,
    prefill_apart: bool = False,
) -> Saturation:
    """Most output tokens/s of one replica: the largest batch the KV cache holds, prefill included.

    ``cached_tokens``: of each ``input_tokens`` prompt, the tokens the engine's prefix cache holds: the sequence still
    holds its whole prompt's KV, but only the rest is prefilled (and counted in a step's tokens).

    Each sequence occupies ``input + output`` tokens of KV at its end. In-flight batching (TensorRT-LLM,
    vLLM, SGLang) admits a new prompt whenever a sequence finishes and runs its prefill inside the decode
    steps: at steady state every step decodes ``batch`` tokens and prefills ``batch x input / output``
    prompt tokens, which share the step's weight reads; the routed experts a step reads are those of a prompt's whole
    pass in the share of steps that run one (a prompt, or its chunk, at once: :func:`bulk_routed_read_bytes`), those of
    the decodes alone in the rest. An engine that caps a step's tokens
    (``step_token_budget``: vLLM's ``max_num_batched_tokens``, decode and prefill chunks together) holds the batch
    to ``budget x output / (input + output)`` (:func:`step_budget_batch`). ``prefill_apart``: the engine runs a pass as a
    forward of its own (SGLang's default; vLLM folds it into a step: :func:`bulk_routed_read_bytes`).
    """
    per_seq = input_tokens + output_tokens
    new = input_tokens - cached_tokens  # the prompt tokens a sequence brings to prefill
    # the batch limit is each engine's: a replica of attention-DP ranks runs that many engines (vLLM --data-parallel-size)
    limit = consts.max_batch_size * par.attention_dp
    # a step in flight a pipeline stage (vLLM runs pp batches at once), each with its budget, on each attention-DP rank
    in_flight = step_token_budget * par.attention_dp * par.pp if step_token_budget else 0
    if in_flight:
        limit = min(limit, step_budget_batch(in_flight, new, output_tokens))
    batch = max(1, min(limit, kv_capacity_tokens // per_seq))
    prefill_tokens = batch * new / max(1, output_tokens)
    context = input_tokens + output_tokens // 2
    if in_flight and batch + prefill_tokens > in_flight:
        # fewer tokens a step than one sequence's decode and the prompt it brings: steps of the budget, one output
        # token every (1 + input / output) / budget of them
        full = in_flight
        step = decode_step(arch, weights, kv_bits, par, acc, 1, context, consts, full - 1, new, cached_tokens)
        return Saturation(1, full / (1 + new / max(1, output_tokens)) / step.seconds, step)
    # a waiting prompt runs its tokens in one pass, up to the engine's chunk (what a rank's decodes leave of vLLM's budget)
    ranks = par.pp * par.attention_dp
    chunk = step_token_budget - math.ceil(batch / ranks) if step_token_budget else consts.prefill_chunk_tokens
    passes = float(max(1, min(new, chunk)))
    step = decode_step(
        arch, weights, kv_bits, par, acc, batch, context, consts, prefill_tokens, new, cached_tokens, passes, prefill_apart
    )
    return Saturation(batch, batch / step.seconds, step)


def static_batch_seconds(
    arch: Architecture,
    weights: WeightSizes,
    kv_bits: int,
    par: Parallelism,
    acc: Accelerator,
    batch: int,
    input_tokens: int,
    output_tokens: int,
    consts: Constants,
) -> float:
    """Wall time of one static batch: ``batch`` prompts prefilled together, then ``output_tokens`` decode steps.

    This is a latency-bounded run (vLLM ``benchmark_latency``, a fixed number of users): the batch is
    what the caller set, not the largest the KV cache holds, and no new prompt joins while it decodes. The prompts run
    the context-phase attention (TensorRT-LLM's fused context FMHA), not the generation kernel that may read a KV head
    once per query head (``decode_kv_read_per_query_head``): that setting applies to the decode steps only.
    """
    prompt_consts = consts._replace(decode_kv_read_per_query_head=0) if consts.decode_kv_read_per_query_head else consts
    prefill = decode_step(
        arch, weights, kv_bits, par, acc, batch, input_tokens, prompt_consts, batch * input_tokens, input_tokens
    )
    step = decode_step(arch, weights, kv_bits, par, acc, batch, input_tokens + output_tokens // 2, consts)
    return prefill.seconds + max(0, output_tokens - 1) * step.seconds


def training_flops_per_token(arch: Architecture, method: str, checkpointing: str, framework: str | None = None) -> float:
    """FLOPs per training token from the active parameters N.

    6 N for full training (2 forward + 4 backward), 4 N for LoRA (no weight gradients of the
    frozen base), plus the recomputed forward of the checkpointed decoder blocks under full activation checkpointing
    (:func:`recomputed_params`: 2 FLOPs a parameter of the blocks, not of the LM head; a full fine-tune under a
    ``framework`` whose non-reentrant checkpoint stops early skips each dense block's last matmul,
    :func:`~generator.sizing.op_checkpointing.early_stop_skipped_params`), or of the matmuls op-level
    selective checkpointing runs again where ``framework``'s ``selective`` is that (:mod:`~generator.sizing.op_checkpointing`;
    a LoRA linear's two adapter matmuls leave the base matmuls' order of saved and recomputed as it is, and their own
    rank-sized FLOPs are left out).
    """
    n = arch.flop_params
    base = 6.0 * n if method == "full" else 4.0 * n
    if checkpointing == "full":
        # a non-reentrant checkpoint's early stop: a full fine-tune's last matmul of each dense block never reruns
        skipped = (
            op_checkpointing.early_stop_skipped_params(arch)
            if method == "full" and checkpoint_stops_early(framework, checkpointing)
            else 0
        )
        return base + 2.0 * (recomputed_params(arch) - skipped)
    if recomputes_ops(framework, checkpointing):
        return base + 2.0 * op_checkpointing.recomputed_params(arch)
    return base


def head_flops_per_token(arch: Architecture, method: str) -> float:
    """The LM head's share of :func:`training_flops_per_token`: ``6 x vocab x hidden`` a token (4 with a frozen base).

    Never recomputed under checkpointing (:func:`recomputed_params`); what a pipeline's last stage runs beside its
    decoder layers (:func:`generator.sizing.pipeline_schedule.slowest_stage_factor`).
    """
    return (6.0 if method == "full" else 4.0) * arch.logits_params


def recomputed_params(arch: Architecture) -> int:
    """Parameters whose forward full activation checkpointing runs twice: the decoder blocks' (N less the LM head).

    Every framework checkpoints the decoder blocks, not the output projection and loss that follow them: torchtune
    ``set_activation_checkpointing(model, auto_wrap_policy={modules.TransformerSelfAttentionLayer})``, llm-foundry's
    ``activation_checkpointing_fn`` ``isinstance(module, MPTBlock)``, Megatron-LM's recomputation of its transformer
    layers, whose FLOPs formula counts the logit layer's ``6 B s h V`` once against ``96 B s l h^2`` (four passes) for
    the layers (Narayanan et al., https://arxiv.org/abs/2104.04473). The LM head multiplies each token by
    ``vocab x hidden`` weights, tied or not (:attr:`Architecture.logits_params`).
    """
    return max(0, arch.flop_params - arch.logits_params)


def training_hours(total_flops: float, gpus: int, dense_tflops: float, consts: Constants, mfu: float | None = None) -> float:
    """Wall-clock hours at a model-FLOPs utilization (``mfu``, from ``training_mfu.py``; else ``training_mfu``).

    Steps run only ``training_goodput`` of the wall-clock (restarts after failures, checkpoints, evaluation).
    """
    return total_flops / (gpus * dense_tflops * 1e12 * (mfu or consts.training_mfu)) / 3600 / consts.training_goodput


def gpus_for_deadline(total_flops: float, hours: float, dense_tflops: float, consts: Constants, mfu: float | None = None) -> int:
    """GPUs needed to finish ``total_flops`` within ``hours``."""
    return max(
        1, math.ceil(total_flops / (hours * consts.training_goodput * 3600 * dense_tflops * 1e12 * (mfu or consts.training_mfu)))
    )
