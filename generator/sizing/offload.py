"""Offload planning for fixed hardware: what goes to the GPUs, to system RAM and to NVMe, and what it costs.

Order (issue #5): fit in VRAM as is; else the highest-quality allowed precision that fits; else a
shorter context if the deployment allows one; else offload at the largest allowed precision whose single-stream
decode meets the service's TPOT target (the fastest where none does, or where a batch service has none) -
MoE routed experts first (attention and KV stay on the GPU), then whole decoder layers from the
first one forward (llama.cpp's ``-ngl N`` holds the last N on the GPU), and, when system RAM (after
the host's reserve) is full, those layers to NVMe (memory-mapped). The input embedding is in system
RAM whatever fits: llama.cpp never puts it on a GPU (a lookup, almost free).

Cost per generated token, batch 1 (each tier is read once per token):
- GPU-resident weights and KV stream from HBM;
- RAM-resident layers either run on the CPU, bounded by DDR bandwidth (llama.cpp's way), or are
  copied to the GPU every token, bounded by PCIe (Accelerate, vLLM ``--cpu-offload-gb``,
  DeepSpeed ZeRO-Inference); the faster of the two is reported, the other beside it;
- weights beyond RAM stay in the memory-mapped model file on NVMe: the page cache (the RAM the placed weights may
  take) keeps the dense weights of the CPU's layers and the most popular routed experts of every layer, and a token
  pages in from NVMe the experts it uses that are not kept (``generator.sizing.page_cache``), at the paged read rate.
MoE layers read only the routed experts a token uses (``top_k / experts`` of them).
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable
from fractions import Fraction

from generator.errors import InfeasibleError
from generator.named_tuple import NamedTuple
from generator.sizing.architecture import EXPERT, Architecture, Layer
from generator.sizing.constants import Constants
from generator.sizing.kv_cache import tokens_held
from generator.sizing.linear_attention import check_sized_use
from generator.sizing.llama_cpp_gpu import (
    dense_layer_equivalents,
    expert_mat_vec_kernel,
    hops_seconds,
    kernels_floor_seconds,
    mat_vec_kernel,
    resident_step_seconds,
)
from generator.sizing.llama_cpp_prompt import prompt_gpu, resident_prompt_seconds
from generator.sizing.memo import memoized
from generator.sizing.memory import MemoryBreakdown, inference_activation_bytes
from generator.sizing.page_cache import PagedReads, paged_reads, routing_popularity_cv
from generator.sizing.performance import (
    Accelerator,
    decode_weight_read_bytes,
    dequantizes_on,
    expected_experts_touched,
    fuses_routing,
    host_overlapped_seconds,
    layer_attention_flops,
    prefill_flops,
    routed_expert_traffic_bytes,
    routed_share,
)
from generator.sizing.precision import GGUF_TYPE_BITS, KV_CACHE_BITS, WeightFormat
from generator.sizing.weights import Parallelism, WeightSizes, size_weights


def layer_split_degree(gpus: int, arch: Architecture) -> int:
    """The GPUs a machine's layer split (llama.cpp ``-ts``, vLLM ``--pipeline-parallel-size``) gives layers: each a layer.

    fuzz23 item 1: a 1-layer model on 16 GPUs was planned TP1 x PP16 and rendered ``--pipeline-parallel-size 16``,
    which vLLM refuses above the layer count; the GPUs beyond the layers hold none.
    """
    return max(1, min(gpus, arch.num_layers))


class Machine(NamedTuple):
    """A server that cannot grow: its GPUs, RAM, NVMe and buses."""

    gpus: int
    gpu_memory_bytes: int
    gpu_bandwidth_gb_per_s: float
    gpu_tflops: float
    #: The GPU's link to host memory, per direction: PCIe, or a superchip's NVLink-C2C (the "pcie" terms and
    #: output names of this module stand for that link).
    pcie_gb_per_s: float
    ram_bytes: int
    reserved_ram_bytes: int
    swap_bytes: int
    nvme_bytes: int
    nvme_read_gb_per_s: float
    ddr_gb_per_s: float
    #: Cores of one socket llama.cpp's threads run the CPU's share on (``CpuSpec.llama_cpp_cores``); 0: not known, and
    #: the CPU's time counts its memory alone, as if it had the cores to read at the DRAM rate.
    cpu_cores: float = 0.0
    #: Whether the CPU has a one-instruction 8-bit dot product (AVX-VNNI or AVX512-VNNI; Arm's SDOT; ``CpuSpec.int8_vnni``):
    #: its cores multiply at ``cpu_core_gparams_per_s``, else at ``cpu_core_gparams_per_s_without_vnni``
    #: (:func:`cpu_weight_seconds`). The product's machines always set it (``build_machine``: the catalog CPU's sourced
    #: flag, the slower rate for one that did not say; review80 item 15); the default is for a machine built by hand, the
    #: rate the constant was fitted at, as a calibration row that does not say is counted.
    cpu_int8_vnni: bool = True
    #: The formats the GPU has a tensor rate of (:attr:`GpuSpec.tensor_formats`): where a weight format's compute is not
    #: one, its kernels dequantize it (FP8 on an A100: W8A16), as the serving estimate counts it
    #: (:func:`~generator.sizing.performance.dequantizes_on`); None: not recorded (a machine built by hand), every
    #: format computed as stored.
    gpu_tensor_formats: frozenset[str] | None = None
    #: The GPU is a consumer card (``GpuSpec.consumer``: the catalog's GeForce cards), whose tensor cores run
    #: fp16-accumulate GEMMs at ``consumer_fp16_accumulate_speedup`` times the 16-bit rate :attr:`gpu_tflops` quotes
    #: (llama.cpp's prompt, :mod:`generator.sizing.llama_cpp_prompt`).
    gpu_consumer: bool = False
    #: The GPU's maker (``GpuSpec.vendor``: "nvidia", "amd", ...); "": not recorded (a machine built by hand). llama.cpp's
    #: whole-GPU prompt is timed from CUDA runs (:mod:`generator.sizing.llama_cpp_prompt`), on NVIDIA GPUs alone.
    gpu_vendor: str = ""
    #: The GPU's dense int8 tensor rate, TOPS (``GpuSpec.sustained_tflops("int8")``); 0: none (a V100) or not recorded.
    #: llama.cpp multiplies a quantized file's matrices at it (:mod:`generator.sizing.llama_cpp_prompt`).
    gpu_int8_tflops: float = 0.0
    #: The GPU's architecture as ``gpus.json`` names it (``GpuSpec.architecture``: "rdna3", "cdna2", ...); "": not
    #: recorded. llama.cpp's HIP build picks its prompt's kernels by it (:func:`~generator.sizing.llama_cpp_prompt.prompt_gpu`).
    gpu_architecture: str = ""
    #: llama.cpp's ``-fa`` (``hardware.fixed.flash_attention``: on, off or auto, its default, on for CUDA / HIP and the
    #: CPU): "off" times :func:`offload_cost` without flash attention (fix202).
    flash_attention: str = "auto"


class Placement(NamedTuple):
    """Where every byte of one model lives."""

    precision: str
    context_tokens: int
    #: Per decoder layer: "gpu:N", "gpu:N+experts:cpu", "cpu" or "disk".
    layer_devices: tuple[str, ...]
    embedding_device: str
    lm_head_device: str
    gpu_bytes: int
    cpu_bytes: int
    disk_bytes: int
    kv_gpu_bytes: int
    kv_cpu_bytes: int
    #: Weights, KV, activations and overhead of each GPU.
    per_gpu: tuple[MemoryBreakdown, ...]
    gpu_budget_bytes: int
    ram_used_bytes: int
    ram_free_bytes: int
    steps: tuple[str, ...]
    #: The input embedding table in system RAM (part of ``cpu_bytes``): llama.cpp keeps it there, "very little benefit
    #: to offloading the input layer" (llama-model.cpp load_tensors; newuser29 item 13).
    embedding_bytes: int = 0
    #: The model file's bytes: a tied embedding is loaded twice, in RAM as the input and as the output layer beside the
    #: last one (llama.cpp's TENSOR_DUPLICATED), so the tiers together hold more than the file.
    file_bytes: int = 0

    @property
    def offloaded(self) -> bool:
        """Whether anything beyond the input embedding lives off the GPUs."""
        return self.cpu_bytes - self.embedding_bytes + self.disk_bytes + self.kv_cpu_bytes > 0

    @property
    def layers_on_gpu(self) -> int:
        """Decoder layers whose attention (and dense MLP) run on a GPU."""
        return sum(1 for d in self.layer_devices if d.startswith("gpu"))


class OffloadCost(NamedTuple):
    """Predicted speed of a placement."""

    decode_tokens_per_s: float
    #: ``gpu`` (nothing offloaded), ``cpu-compute`` (the CPU multiplies the layers held off the GPUs) or ``pcie-stream``
    #: (llama.cpp's step of ``offload_min_batch_tokens`` slots or more: their weights copied to the GPUs).
    mode: str
    bound: str
    seconds_per_token: dict[str, float]
    cpu_mode_tokens_per_s: float
    #: What the GPUs would decode reading every offloaded byte over the host link each step: vLLM's
    #: ``--cpu-offload-gb`` way, and llama.cpp's only at ``offload_min_batch_tokens`` slots or more (newuser68 item 2).
    stream_mode_tokens_per_s: float
    pcie_bytes_per_token: int
    ttft_s: float
    cold_start_s: float
    #: Weight bytes read from NVMe each token (a MoE model: the routed experts a token uses that the page cache lacks).
    nvme_bytes_per_token: int = 0
    #: With an NVMe tier, the weight bytes a token finds in RAM (the page cache), and the decode speed if the page
    #: cache kept none of them: llama.cpp memory-maps the whole file, so the RAM tier is page cache the NVMe tier's
    #: reads pass through, and other programs' files compete for it.
    ram_weight_bytes_per_token: int = 0
    evicted_tokens_per_s: float | None = None
    #: Seconds a token spends in the attention of the layers the CPU runs (computing them there, as llama.cpp does).
    cpu_attention_s: float = 0.0
    #: The prompt ``ttft_s`` is of, the passes it is processed in (llama.cpp's -ub) and the seconds they take (the
    #: GPUs' compute and the weights held off them): ``prompt_tokens / prefill_s`` is the prefill rate llama.cpp prints.
    prompt_tokens: int = 0
    ubatch_tokens: int = 512
    prefill_s: float = 0.0
    #: With an NVMe tier, where a token finds the memory-mapped weights (:func:`generator.sizing.page_cache.paged_reads`)
    #: and the page cache it assumed, in bytes; None without one.
    paged: PagedReads | None = None
    page_cache_bytes: int = 0
    #: Where the --no-mmap command's pinned buffers are taken not to be granted (:func:`pinned_falls_back`): the bytes
    #: it asks to pin, and the TTFT were they pinned (``ttft_s`` is timed at the pageable rate); 0 and None otherwise.
    pinned_fallback_bytes: int = 0
    pinned_ttft_s: float | None = None
    #: ``prefill_s``'s parts, (part, seconds): ``gpu-compute`` then :class:`PrefillHost`'s (fix192, read-only).
    prefill_parts_s: tuple[tuple[str, float], ...] = ()

    @property
    def prefill_tokens_per_s(self) -> float:
        """Prompt tokens a second while the prompt is processed (llama.cpp's "prompt eval" rate)."""
        return self.prompt_tokens / self.prefill_s if self.prefill_s > 0 else 0.0

    @property
    def prefill_bound(self) -> str | None:
        """The part of ``prefill_s`` that takes longest (as ``bound`` of a decode step), None without a prompt."""
        return max(self.prefill_parts_s, key=lambda part: part[1])[0] if self.prefill_parts_s else None

    def request_seconds(self, answer_tokens: int) -> float:
        """A lone request's time: its prompt's TTFT and ``answer_tokens`` decoded at the decode rate."""
        return self.ttft_s + answer_tokens / self.decode_tokens_per_s


class PrefillHost(NamedTuple):
    """:func:`prefill_host_parts`: a prompt's seconds on the weights held off the GPUs, and what they are spent on.

    ``parts``: (part, seconds) of the sum, in its order of first use (fix192: the estimate says which bounds the
    prefill, as a decode's ``bound``): ``pcie`` (copying the weights in RAM to the GPUs, passes of at least
    ``offload_min_batch_tokens``), ``nvme`` (paging the layers on NVMe in), ``cpu-cores`` / ``ddr`` (a shorter pass
    multiplying them on the CPU, :func:`cpu_weight_seconds`'s bound, with its routed experts' calls), ``cpu-lm-head``.
    Read-only: ``seconds`` is the sum the TTFT counts; ``parts`` (those above zero) add up to it.
    """

    seconds: float
    parts: tuple[tuple[str, float], ...]


def _head_bytes(arch: Architecture, sizes: WeightSizes) -> int:
    """The weights kept with the output layer: the LM head, the weights outside the layers, and a tied embedding."""
    return sizes.lm_head_bytes + sizes.other_bytes + (sizes.embedding_bytes if arch.tie_word_embeddings else 0)


def _host_head_bytes(sizes: WeightSizes) -> int:
    """The output layer's weights in RAM beside the input embedding: a tied output is the embedding itself there.

    llama.cpp creates a tied output as a view of token_embd.weight (``TENSOR_DUPLICATED``); on the CPU both are served
    from the one memory-mapped range of the file, a copy only on a GPU (fix157).
    """
    return sizes.lm_head_bytes + sizes.other_bytes


def page_cache_bytes(arch: Architecture, fmt: WeightFormat, placement: Placement) -> int:
    """RAM the memory-mapped weights held off the GPUs may take as page cache.

    What the placement holds of them in RAM and what it leaves free after the reserve; the input embedding and an LM
    head on the CPU stay resident apart.
    """
    sizes = size_weights(arch, fmt)
    resident = placement.embedding_bytes + (_host_head_bytes(sizes) if placement.lm_head_device == "cpu" else 0)
    return max(0, placement.cpu_bytes - resident) + max(0, placement.ram_free_bytes)


def pinned_bytes(placement: Placement) -> int:
    """Bytes llama.cpp's ``--no-mmap`` (the planned command where no layer is on NVMe) asks to pin.

    The weights held in RAM, loaded into one CUDA_Host buffer; 0 where nothing is offloaded or the file is memory-mapped.
    """
    return placement.cpu_bytes if placement.offloaded and not placement.disk_bytes else 0


def pinned_falls_back(placement: Placement, machine: Machine, consts: Constants) -> bool:
    """Whether the pinned buffers of ``--no-mmap`` are taken not to be granted.

    They are where they are more than ``pinned_host_ram_share`` of the machine's RAM: cudaMallocHost then fails and
    llama.cpp loads the weights into a pageable CPU buffer instead, logged at debug level only (ggml-cuda.cu
    ``ggml_backend_cuda_host_buffer_type_alloc_buffer``), so its prompt passes copy them at the pageable rate.
    """
    return pinned_bytes(placement) > consts.pinned_host_ram_share * machine.ram_bytes


#: The engines an offloaded decode is timed for: llama.cpp and ik_llama.cpp (the commands specgen plans and prints), and
#: ktransformers, whose published CPU rows the calibration holds beside them (tests/data/calibration.json
#: ``offload_decode``).
OFFLOAD_ENGINES = ("llama.cpp", "ik_llama.cpp", "ktransformers")

#: The engines a machine of yours may be planned for (``hardware.fixed.offload_engine``, ``--offload-engine``): those
#: whose whole path specgen times, the weights' reads, the CPU's attention and the prompt passes (the calibration's
#: ``offload_decode`` and ``offload_prefill`` rows of both). Not ktransformers: it runs attention on the GPU, and no
#: row times its prompt passes nor the GPU's share of its decode, so no plan of it is timed end to end.
PLANNED_OFFLOAD_ENGINES = ("llama.cpp", "ik_llama.cpp")


#: NVIDIA architectures ik_llama.cpp's CUDA backend supports: Turing (sm_75) or newer. Its README: "The only fully
#: functional and performant compute backends are CPU (AVX2 or better, ARM_NEON or better) and CUDA (Turing or newer).
#: Please do not enter issues related to ROCm, Vulkan, Metal, old Nvidia GPUs" (https://github.com/ikawrakow/ik_llama.cpp#readme).
IK_LLAMA_CPP_ARCHITECTURES = frozenset({"turing", "ampere", "ada-lovelace", "hopper", "blackwell"})


def engine_gpu_problem(engine: str, gpu_id: str, vendor: str, architecture: str) -> str | None:
    """Why ``engine`` cannot run on a GPU of ``vendor`` and ``architecture`` (the catalog's fields), or None.

    fuzz32 item 4: ik_llama.cpp was planned on an MI300X (AMD) and a V100 (Volta, before Turing), which its README
    says it does not support (:data:`IK_LLAMA_CPP_ARCHITECTURES`).
    """
    if engine != "ik_llama.cpp" or (vendor == "nvidia" and architecture in IK_LLAMA_CPP_ARCHITECTURES):
        return None
    maker = {"amd": "an AMD", "intel": "an Intel"}.get(vendor, f"a {vendor}")
    what = f"{maker} GPU" if vendor != "nvidia" else f"a {architecture.title()} GPU, older than Turing"
    return (
        f'ik_llama.cpp does not run on {gpu_id} ({what}): its README says "The only fully functional and performant '
        'compute backends are CPU (AVX2 or better, ARM_NEON or better) and CUDA (Turing or newer)" '
        "(https://github.com/ikawrakow/ik_llama.cpp#readme); plan llama.cpp on it"
    )


def splits_context_over_slots(engine: str) -> bool:
    """Whether ``engine``'s server divides its ``-c`` tokens equally among its ``-np`` slots.

    llama.cpp shares them in one unified KV cache (``-kvu``, https://github.com/ggml-org/llama.cpp/pull/16736);
    ik_llama.cpp has no ``-kvu`` and splits them ("If you use parallel slots, this context size will be split across
    the slots": https://github.com/ikawrakow/ik_llama.cpp/blob/main/docs/parameters.md, ``-c``), so each slot holds
    ``-c / -np`` tokens, and every slot must hold a whole request.
    """
    return engine == "ik_llama.cpp"


def cpu_attention_gflops_per_s(engine: str, consts: Constants) -> float | None:
    """Attention FLOPs a second ``engine``'s CPU kernels reach for a decoded token over its cached context.

    llama.cpp's flash attention runs each query head as its own dot products with the cached keys and values
    (``cpu_attention_gflops_per_s``). ik_llama.cpp's multiplies the query heads that share a KV head together, a
    matrix product rather than one matrix-vector product a head (ik_llama.cpp PR #207, "Faster CPU TG for GQA
    models"; PRs #332 and #351), and MLA's heads share one cached latent (FlashMLA, PRs #240 / #243):
    ``ik_llama_cpp_cpu_attention_gflops_per_s``. ktransformers runs attention on the GPU and its routed experts on the
    CPU: no row measures its CPU attention, and None says so (:func:`offload_cost` refuses a placement that would need it).
    """
    if engine == "llama.cpp":
        return consts.cpu_attention_gflops_per_s
    if engine == "ik_llama.cpp":
        return consts.ik_llama_cpp_cpu_attention_gflops_per_s
    if engine == "ktransformers":
        return None
    raise ValueError(f"unknown offload engine '{engine}'; one of {', '.join(OFFLOAD_ENGINES)}")


def llama_cpp_attention_threads(query_rows: int, threads: float, flash_attention: bool) -> float:
    """Threads llama.cpp's CPU attention engages for a step of ``query_rows`` query rows (heads x tokens) on ``threads``.

    With flash attention on, ``ggml_compute_forward_flash_attn_ext_f16`` parallelizes by query rows, one row a thread
    ("parallelize by q rows": ``nr = neq1*neq2*neq3``, ``dr = (nr + nth - 1)/nth``; ggml/src/ggml-cpu/ops.cpp), so a
    decoded token of 32 query heads engages 32 of 44 threads. With it off, KQ and KQV are ``ggml_mul_mat`` over the
    cached positions, split over every thread.
    """
    return float(threads) if not flash_attention else float(min(threads, query_rows))


def llama_cpp_attention_gflops_per_s(consts: Constants, query_rows: int, threads: float, flash_attention: bool) -> float:
    """llama.cpp's CPU attention rate for a step of ``query_rows`` query rows on ``threads``, with or without flash attention.

    With flash attention, ``cpu_attention_gflops_per_s``: the kernel's rate, fitted on rows whose threads it engaged,
    not a rate a core (87-94 GFLOP/s on 16-44 threads). With it off, that rate over the threads flash attention would
    engage, times every thread (:func:`llama_cpp_attention_threads`). A CPU whose threads are not known (0) is counted
    at the flash-attention rate either way.
    """
    if flash_attention or not threads:
        return consts.cpu_attention_gflops_per_s
    engaged = llama_cpp_attention_threads(query_rows, threads, True)
    return consts.cpu_attention_gflops_per_s * llama_cpp_attention_threads(query_rows, threads, False) / engaged


#: The engines whose decode runs as ggml-backend's scheduler splits (llama.cpp and its fork ik_llama.cpp): each switch
#: between the GPU and the CPU within a token costs ``offload_backend_switch_s`` (:func:`backend_switches`). ktransformers
#: runs its own loop, not these splits.
GGML_SCHEDULER_ENGINES = ("llama.cpp", "ik_llama.cpp")


def backend_switches(engine: str, layer_devices: tuple[str, ...], moe_layers: tuple[bool, ...] | None = None) -> int:
    """Switches between the GPU and the CPU a decoded token makes under llama.cpp's scheduler.

    ggml-backend.cpp ``ggml_backend_sched_compute_splits`` runs one split a run of nodes on one backend, its inputs
    copied across and the stream synchronised before the next runs. A layer whose routed experts are in RAM
    (``gpu:N+experts:cpu``) runs its attention and router on the GPU, its experts on the CPU and hands the result back:
    two switches (a dense layer, ``moe_layers`` false, has no experts to move: none; every layer is taken to be MoE
    where not given). Whole layers on the host (``cpu``, ``disk``) next to GPU layers switch where the run of them
    begins and ends. A placement on one side only (every layer on the CPU, or on the GPUs) switches none; nor does an
    engine not in :data:`GGML_SCHEDULER_ENGINES`.
    """
    if engine not in GGML_SCHEDULER_ENGINES:
        return 0
    moe = moe_layers if moe_layers is not None else (True,) * len(layer_devices)
    experts = sum(2 for device, routed in zip(layer_devices, moe, strict=True) if "+experts:" in device and routed)
    sides = [runs_on_host(device) for device in layer_devices]
    return experts + sum(1 for a, b in itertools.pairwise(sides) if a != b)


def runs_on_host(device: str) -> bool:
    """Whether a layer placed on ``device`` runs on the CPU: held in RAM, or read from NVMe into it."""
    return device in ("cpu", "disk")


def on_gpu(device: str) -> bool:
    """Whether the GPU multiplies a layer's routed experts where it is placed on ``device``: held on it, experts and all."""
    return not runs_on_host(device) and "+experts:" not in device


def _offload_accelerator(fmt: WeightFormat, machine: Machine) -> Accelerator:
    """The GPU :func:`offload_cost` times, as :func:`routed_expert_traffic_bytes` reads one: ``fmt`` as it computes.

    One GPU, its HBM and its 16-bit rate (:attr:`Machine.gpu_tflops`); the format's compute, its matrices multiplied as
    stored (FP8: W8A8, whose kernels quantize their inputs; FP4: fused) where the GPU has that tensor rate, else
    dequantized to 16 bit (FP8 on an A100: W8A16) by the serving estimate's rule
    (:func:`~generator.sizing.performance.dequantizes_on` over :attr:`Machine.gpu_tensor_formats`, review78 item 7: an
    A100's FP8 experts were counted W8A8 here and W8A16 in serving); its experts' kernels fused where the format's are
    (:func:`fuses_routing`, as :func:`~generator.sizing.performance.accelerator_for` sets it). The rule's choice of
    fused / W8A8 / neither stays the serving decode step's.
    """
    rated = machine.gpu_tensor_formats
    compute = fmt.compute if rated is None or fmt.compute in rated else "bf16"
    return Accelerator(
        memory_bandwidth_gb_per_s=machine.gpu_bandwidth_gb_per_s,
        dense_tflops=machine.gpu_tflops,
        link_gb_per_s=machine.pcie_gb_per_s,
        fast_link=False,
        compute=compute,
        dequantized=fmt if rated is not None and dequantizes_on(rated, fmt, fmt.compute) else None,
        fused_routing=fuses_routing(fmt),
    )


def _gpu_moe_share(arch: Architecture, layer_devices: tuple[str, ...]) -> float:
    """The share of ``arch``'s MoE layers whose routed experts the GPU holds (:func:`on_gpu`); 0 for a dense model."""
    moe = [device for device, routed in zip(layer_devices, _moe_layers(arch), strict=True) if routed]
    return sum(map(on_gpu, moe)) / len(moe) if moe else 0.0


@memoized
def _layer_kv(arch: Architecture, kv_bits: int, context: int) -> tuple[int, ...]:
    """KV bytes of each layer for one sequence of ``context`` tokens, in llama.cpp's cache types.

    An 8-bit cache is llama.cpp's q8_0 (:func:`llama_cpp_kv_bits`): sized at 8 bits, a tight fit was short by 1/16 of
    its KV cache (newuser29 item 13). Layers alike in their KV elements and window are sized once (speed101: a slot
    search sizes every layer's cache at each count it tries, twice a cost).
    """
    check_sized_use(arch, "offload")  # llama.cpp keeps recurrent states in a cache of its own, not modelled
    bits = llama_cpp_kv_bits(kv_bits)
    sized: dict[tuple[int, int | None], int] = {}
    out = []
    for layer in arch.layers:
        key = (layer.kv_elements_per_token, layer.window_tokens)
        if key not in sized:
            sized[key] = math.ceil(layer.kv_elements_per_token * tokens_held(layer, context) * bits / 8)
        out.append(sized[key])
    return tuple(out)


@memoized
def _moe_layers(arch: Architecture) -> tuple[bool, ...]:
    """Each decoder layer's :attr:`~generator.sizing.architecture.Layer.is_moe` (read per layer by every cost)."""
    return tuple(layer.is_moe for layer in arch.layers)


def llama_cpp_kv_bits(kv_bits: int) -> Fraction:
    """Bits an element of the KV cache llama.cpp allocates for a planned ``kv_bits``; others as planned.

    An 8-bit cache is its q8_0 type, 34 bytes a block of 32 elements (ggml-common.h ``block_q8_0``: 8.5 bits).
    """
    return GGUF_TYPE_BITS["Q8_0"] if kv_bits == 8 else Fraction(kv_bits)


def fits_on_gpus(arch: Architecture, fmt: WeightFormat, kv_bits: int, context: int, machine: Machine, consts: Constants) -> bool:
    """Whether the whole model and one sequence's KV fit the GPUs (layer split, beside the compute buffer and runtime)."""
    try:
        place(arch, fmt, kv_bits, context, machine, consts, allow_offload=False)
    except InfeasibleError:
        return False
    return True


def _fill_gpus(items: list[tuple[str, int]], capacity: int, gpus: int) -> tuple[list[int], dict[str, int]]:
    """Fill GPUs in order up to ``capacity`` each: per-GPU loads and the GPU of each item."""
    loads = [0] * gpus
    where: dict[str, int] = {}
    gpu = 0
    for key, size in items:
        while gpu < gpus - 1 and loads[gpu] + size > capacity:
            gpu += 1
        loads[gpu] += size
        where[key] = gpu
    return loads, where


def _fills_in_order(sizes: list[int], capacity: int, gpus: int) -> bool:
    """Whether :func:`_fill_gpus` of items of ``sizes`` (none negative) loads no GPU past ``capacity``.

    The same fill, worked out from the running sums: each GPU but the last takes the longest run of the next items
    that fits it (an item that does not fit goes to the next GPU, and no later item comes back), the last takes the
    rest. An item of 0 bytes stays where the fill is, so it stands for an item left out. ``place`` asks this after
    every layer it moves, over all the layers (speed101: the fill as a loop, rebuilt each time, was most of a placement).
    """
    running = list(itertools.accumulate(sizes, initial=0))
    start = 0
    for _ in range(gpus - 1):
        start = bisect.bisect_right(running, running[start] + capacity, lo=start) - 1
    return running[-1] - running[start] <= capacity


def _fewest_moved(fits_with: Callable[[int], bool], n: int) -> int:
    """The fewest ``k`` in 0..``n`` - 1 with ``fits_with(k)``, else ``n``: what a loop moving one more a step moves.

    By bisection: ``fits_with`` is monotone, false up to some ``k`` and true from it, since each step only shrinks
    items (routed experts to RAM) or empties them (a layer to the CPU) and the fill :func:`_fills_in_order` checks
    never fills worse with smaller items: item by item, its (GPU, load) with the smaller items is never past the
    other's (the same GPU and no more load, or an earlier GPU), so where the larger items fit, the smaller fit. The
    loops tried every count in turn (speed101: ~80 fills a placement on Qwen3-235B).
    """
    low, high = 0, n
    while low < high:
        middle = (low + high) // 2
        if fits_with(middle):
            high = middle
        else:
            low = middle + 1
    return low


def _split_gpus(items: list[tuple[str, int]], capacity: int, gpus: int) -> tuple[list[int], dict[str, int]]:
    """llama.cpp's layer split: consecutive items spread over all GPUs in equal shares of the bytes.

    Its ``--tensor-split`` defaults to the GPUs' memory (equal here), so the layers do not fill the first GPUs to the
    brim. An item goes to the GPU its middle byte falls in; where that overfills a GPU, the GPUs fill in order instead.
    """
    total = sum(size for _, size in items) or 1
    loads = [0] * gpus
    where: dict[str, int] = {}
    running = 0
    for key, size in items:
        gpu = min(gpus - 1, (2 * running + size) * gpus // (2 * total))
        loads[gpu] += size
        where[key] = gpu
        running += size
    if max(loads) > capacity:
        return _fill_gpus(items, capacity, gpus)
    return loads, where


def _offload_steps(experts_off: list[bool], layer_cpu: list[bool], disk: set[int]) -> list[str]:
    """What left the GPU and where it went, one line per kind (routed experts, whole layers)."""

    def where(layers: list[int], kept: str = "") -> str:
        on_disk = sum(i in disk for i in layers)
        if not on_disk:
            return "to system RAM"
        worth = " layers' worth" if kept else ""
        return (
            f"off the GPU: {len(layers) - on_disk}{worth} in system RAM, {on_disk} on NVMe "
            f"(memory-mapped: system RAM is full after the reserve{kept})"
        )

    steps = []
    if experts := [i for i, off in enumerate(experts_off) if off]:
        kept = "; the page cache keeps the most used experts of every layer, not whole layers"
        steps.append(f"routed experts of {len(experts)} MoE layer(s) {where(experts, kept)}; attention and KV stay on the GPU")
    if layers := [i for i, off in enumerate(layer_cpu) if off]:
        steps.append(
            f"the first {len(layers)} decoder layer(s) and the LM head {where(layers)} (llama.cpp's -ngl holds the last "
            "layers on the GPU)"
        )
    return steps


def spill_to_nvme(movable: dict[int, int], resident_bytes: int, ram_budget_bytes: int) -> set[int]:
    """The layers whose offloaded weights stay on NVMe, memory-mapped, so that the rest fit RAM.

    ``movable``: layer -> bytes; the rest fit ``ram_budget_bytes`` beside the ``resident_bytes`` always in RAM. The
    last layers go first, until the rest fit.
    """
    disk: set[int] = set()
    in_ram = resident_bytes + sum(movable.values())
    for i in sorted(movable, reverse=True):
        if in_ram <= ram_budget_bytes:
            break
        disk.add(i)
        in_ram -= movable[i]
    return disk


@memoized  # pure: a slot search places the same model with the same cache for the plan and again for its slots
def place(
    arch: Architecture,
    fmt: WeightFormat,
    kv_bits: int,
    context: int,
    machine: Machine,
    consts: Constants,
    allow_offload: bool = True,
    engine: str = "llama.cpp",
) -> Placement:
    """Place one model on ``machine`` at ``fmt`` and ``context``; raises InfeasibleError if impossible.

    ``engine``: the llama.cpp-family server the decisions name (ik_llama.cpp places the tensors as llama.cpp does:
    review 27 item 7, an ik_llama.cpp plan said "where llama.cpp keeps it").
    """
    sizes = size_weights(arch, fmt)
    kv = _layer_kv(arch, kv_bits, context)
    # each GPU keeps room besides weights and KV for what llama.cpp allocates there itself, one reserve whether the
    # model fits whole or not (review80 items 1-2: a 5% margin switched on only past a whole fit made a 1.2 GiB
    # cliff): its compute buffer (a pass's activations at -ub with a logit row for every token of it, as llama.cpp
    # reserves its prompt graph) and the CUDA context (non_torch_bytes), against the memory CUDA lets a process
    # allocate (GpuSpec.memory_bytes: totalGlobalMem, 24,268 MiB on a 3090, not nvidia-smi's 24,576). Two 3090s run
    # Llama 3.3 70B q4_k_m fully on GPU at 16.29 tokens/s (https://github.com/XiongjieDai/GPU-Benchmarks-on-LLM-Inference).
    activations = compute_buffer_bytes(arch, consts)
    reserved = machine.gpu_memory_bytes - activations - consts.non_torch_bytes
    if reserved <= 0:
        raise InfeasibleError(
            f"each GPU's {machine.gpu_memory_bytes / 2**30:.1f} GiB is taken by the runtime and the compute buffer"
        )
    capacity = reserved
    n = arch.num_layers
    experts_off = [False] * n
    layer_cpu = [False] * n
    steps = [f"input embedding ({sizes.embedding_bytes / 2**30:.2f} GiB) in system RAM, where {engine} keeps it (a lookup)"]
    # the output layer with the last one: a tied embedding is loaded again as it (llama.cpp's TENSOR_DUPLICATED)
    head = _head_bytes(arch, sizes)

    def gpu_items() -> list[tuple[str, int]]:
        items = []
        for i in range(n):
            if not layer_cpu[i]:
                items.append((str(i), sizes.layer_bytes[i] - (sizes.layer_expert_bytes[i] if experts_off[i] else 0) + kv[i]))
        if not any(layer_cpu):
            items.append(("lm_head", head))
        return items

    # gpu_items()' sizes in order, a layer on the CPU (and the LM head once one is) as 0 bytes: see _fills_in_order
    held = [sizes.layer_bytes[i] + kv[i] for i in range(n)] + [head]

    def fits() -> bool:
        return _fills_in_order(held, capacity, machine.gpus)

    def experts_of_last(k: int) -> bool:  # whether it fits with the routed experts of the last k layers in RAM
        return _fills_in_order(
            [*held[: n - k], *(held[i] - sizes.layer_expert_bytes[i] for i in range(n - k, n)), head], capacity, machine.gpus
        )

    def first_layers(j: int) -> bool:  # whether it fits with the first j layers (and the LM head with them) on the CPU
        return _fills_in_order([0] * j + held[j:n] + [head if j == 0 else 0], capacity, machine.gpus)

    if not fits() and not allow_offload:
        raise InfeasibleError("does not fit the GPUs")
    # Routed experts from the last layer back, then whole layers from the first on, each until the rest fit: the fewest
    # moved that fit, found by bisection (what moves is the same: see _fewest_moved)
    if not fits() and arch.is_moe:
        for i in range(n - _fewest_moved(experts_of_last, n), n):
            if sizes.layer_expert_bytes[i]:
                experts_off[i] = True
                held[i] -= sizes.layer_expert_bytes[i]
    if not fits():
        # -ngl N holds the last N layers on the GPUs (llama-model.cpp: i_gpu_start = n_layer - N)
        for i in range(_fewest_moved(first_layers, n)):
            layer_cpu[i] = True
            held[i] = held[n] = 0
    if not fits():
        raise InfeasibleError("not even the first layer fits next to the runtime on the GPU")

    # System RAM after the host's reserve, the runtime and a staging buffer for the largest offloaded layer.
    # Offloaded weights may spill to NVMe; the KV cache of CPU layers stays in RAM.
    movable = {
        i: sizes.layer_bytes[i] if layer_cpu[i] else sizes.layer_expert_bytes[i]
        for i in range(n)
        if layer_cpu[i] or experts_off[i]
    }
    kv_cpu = sum(kv[i] for i in range(n) if layer_cpu[i])
    head_cpu = any(layer_cpu)
    head_ram = _host_head_bytes(sizes) if head_cpu else 0
    base_cpu = sizes.embedding_bytes + head_ram
    staging = max(movable.values(), default=0)
    ram_budget = machine.ram_bytes - machine.reserved_ram_bytes - consts.runtime_host_bytes - staging - kv_cpu
    if ram_budget < base_cpu:
        raise _host_ram_short(machine, consts, sizes.embedding_bytes, head_ram, staging, kv_cpu, context, engine)
    disk = spill_to_nvme(movable, base_cpu, ram_budget)
    steps += _offload_steps(experts_off, layer_cpu, disk)
    disk_bytes = sum(movable[i] for i in disk)
    if disk and sizes.total_bytes > machine.nvme_bytes:
        # llama.cpp memory-maps the model file: the layers it pages in come from the file, so all of it is on the NVMe
        raise InfeasibleError(
            f"needs {disk_bytes / 2**30:.0f} GiB on NVMe beyond RAM, paged from the memory-mapped model file, so the "
            f"whole {sizes.total_bytes / 2**30:.0f} GiB file must be on the NVMe: {machine.nvme_bytes / 2**30:.0f} GiB "
            "available"
        )

    loads, where = _split_gpus(gpu_items(), capacity, machine.gpus)
    devices = []
    for i in range(n):
        tier = "disk" if i in disk else "cpu"
        if layer_cpu[i]:
            devices.append(tier)
        else:
            devices.append(f"gpu:{where[str(i)]}" + (f"+experts:{tier}" if experts_off[i] else ""))
    cpu_weights = base_cpu + sum(v for i, v in movable.items() if i not in disk)
    kv_per_gpu = [sum(kv[i] for i in range(n) if not layer_cpu[i] and where[str(i)] == g) for g in range(machine.gpus)]
    per_gpu = tuple(
        MemoryBreakdown(load - kv_per_gpu[g], kv_per_gpu[g], activations, 0, 0, consts.non_torch_bytes)
        for g, load in enumerate(loads)
    )
    ram_used = cpu_weights + kv_cpu + consts.runtime_host_bytes + staging
    return Placement(
        precision=fmt.name,
        context_tokens=context,
        layer_devices=tuple(devices),
        embedding_device="cpu",
        lm_head_device="cpu" if head_cpu else f"gpu:{where['lm_head']}",
        gpu_bytes=sum(loads) - sum(kv_per_gpu),
        cpu_bytes=cpu_weights,
        disk_bytes=disk_bytes,
        kv_gpu_bytes=sum(kv) - kv_cpu,
        kv_cpu_bytes=kv_cpu,
        per_gpu=per_gpu,
        gpu_budget_bytes=capacity,
        ram_used_bytes=ram_used,
        ram_free_bytes=machine.ram_bytes - machine.reserved_ram_bytes - ram_used,
        steps=tuple(steps),
        embedding_bytes=sizes.embedding_bytes,
        file_bytes=sizes.total_bytes,
    )


def compute_buffer_bytes(arch: Architecture, consts: Constants) -> int:
    """llama.cpp's compute buffer: a prompt pass's activations at its -ub, a logit row for every token of it.

    llama.cpp reserves its prompt graph so, on each GPU of a placement, and in RAM on a machine without one.
    """
    return inference_activation_bytes(arch, Parallelism(), consts.offload_ubatch_tokens, 16, consts, logits_every_token=True)


def place_on_host(
    arch: Architecture, fmt: WeightFormat, kv_bits: int, context: int, machine: Machine, consts: Constants, engine: str
) -> Placement:
    """Every byte of one model in a machine's system RAM, no GPU: llama.cpp's CPU backend (newuser86 item 2).

    The weights (the memory-mapped file, in the page cache), the KV cache of ``context`` tokens, the compute buffer and the
    runtime, beside the host's reserve; raises :class:`HostRamShortError` naming each part where the RAM does not hold
    them; past the RAM, with the whole file on the machine's NVMe, the last layers stay in the memory-mapped file and are
    read every token (``spill_to_nvme``, as ``place`` spills an offload's; newuser88 item 2).
    """
    sizes = size_weights(arch, fmt)
    kv = sum(_layer_kv(arch, kv_bits, context))
    buffer = compute_buffer_bytes(arch, consts)
    parts = [
        (machine.reserved_ram_bytes, "reserved for other services"),
        (consts.runtime_host_bytes, "for the runtime"),
        (sizes.total_bytes, f"of weights at {fmt.name} (the model file)"),
        (kv, f"of KV cache at {context:,} tokens"),
        (buffer, f"of {engine}'s compute buffer at -ub {consts.offload_ubatch_tokens}"),
    ]
    need = sum(size for size, _ in parts)
    # the LM head and the weights outside the layers stay in RAM beside the input embedding, a tied output once (fix157)
    resident = sizes.embedding_bytes + _host_head_bytes(sizes)
    movable = {i: size for i, size in enumerate(sizes.layer_bytes) if size}
    staging = max(movable.values(), default=0)
    # past the RAM, the last layers stay in the memory-mapped file on NVMe (as ``place`` spills an offload's), paged in
    # every token through a staging layer, where the whole file is on the NVMe --nvme-gib gives (acc132)
    budget = machine.ram_bytes - machine.reserved_ram_bytes - consts.runtime_host_bytes - staging - kv - buffer
    spills = need > machine.ram_bytes and machine.nvme_bytes >= sizes.total_bytes and budget >= resident
    if need > machine.ram_bytes and not spills:
        said = ", ".join(f"{size / 2**30:.2f} GiB {what}" for size, what in parts if size)
        raise HostRamShortError(
            f"{_ram_gib(machine.ram_bytes)} GiB of system RAM is less than the {need / 2**30:.2f} GiB {engine} needs on a "
            f"machine without a GPU ({said})",
            "more system RAM, a smaller --precision, a shorter --context, a smaller reserve for other services, or "
            f"--nvme-gib of at least the model file's {sizes.total_bytes / 2**30:.0f} GiB (the layers past the RAM read "
            "from the memory-mapped file every token)",
        )
    disk = spill_to_nvme(movable, resident, budget) if spills else set()
    on_disk = sum(movable[i] for i in disk)
    used = sizes.total_bytes - on_disk + kv + buffer + consts.runtime_host_bytes + (staging if disk else 0)
    where = "every layer, the KV cache"
    if disk:
        where = f"{len(disk)} of {arch.num_layers} layers ({on_disk / 2**30:.2f} GiB) read from NVMe every token; the rest"
    return Placement(
        precision=fmt.name,
        context_tokens=context,
        layer_devices=tuple("disk" if i in disk else "cpu" for i in range(arch.num_layers)),
        embedding_device="cpu",
        lm_head_device="cpu",
        gpu_bytes=0,
        cpu_bytes=sizes.total_bytes - on_disk,
        disk_bytes=on_disk,
        kv_gpu_bytes=0,
        kv_cpu_bytes=kv,
        per_gpu=(),
        gpu_budget_bytes=0,
        ram_used_bytes=used,
        ram_free_bytes=machine.ram_bytes - machine.reserved_ram_bytes - used,
        steps=(f"{where} and the compute buffer in system RAM: no GPU ({engine}'s CPU backend)",),
        embedding_bytes=sizes.embedding_bytes,
        file_bytes=sizes.total_bytes,
    )


class HostRamShortError(InfeasibleError):
    """The machine's RAM does not hold what the host keeps beside the GPUs; ``unblock``: the levers that can help."""

    def __init__(self, message: str, unblock: str | None) -> None:
        """The reason, and the levers where they are fewer than an offload's (None: an offload's)."""
        super().__init__(message)
        self.unblock = unblock


def _host_ram_short(
    machine: Machine, consts: Constants, embedding: int, head: int, staging: int, kv_cpu: int, context: int, engine: str
) -> HostRamShortError:
    """Why the RAM does not hold what the host keeps beside the GPUs, each part named (review70 item 2).

    The offloaded layers themselves may spill to NVMe; the reserve, the runtime, the input embedding (and the output
    layer once a layer is on the CPU), a layer's staging buffer and the CPU layers' KV cache may not. Where nothing is
    offloaded only more RAM or a smaller reserve helps: the message said "no room for the offloaded weights", the RAM
    rounded to a whole GiB (8.5 as 8), and offered a lower precision, a shorter context, NVMe and a larger GPU.
    """
    parts = [
        (machine.reserved_ram_bytes, "reserved for other services"),
        (consts.runtime_host_bytes, "for the runtime"),
        (embedding, f"of input embedding ({engine} keeps it in RAM)"),
        (head, "of output layer (on the CPU with the first layer)"),
        (staging, "staging an offloaded layer"),
        (kv_cpu, f"of KV cache for the layers off the GPU at {context:,} tokens"),
    ]
    need = sum(size for size, _ in parts)
    said = ", ".join(f"{size / 2**30:.2f} GiB {what}" for size, what in parts if size)
    offloaded = bool(head or staging or kv_cpu)
    message = (
        f"{_ram_gib(machine.ram_bytes)} GiB of system RAM is less than the {need / 2**30:.2f} GiB the host needs "
        f"beside the GPUs ({said})"
    )
    if not offloaded:
        levers = "more system RAM, or a smaller reserve for other services"
        return HostRamShortError(f"{message}; the weights fit the GPUs", levers)
    return HostRamShortError(message, None)


def _ram_gib(ram_bytes: float) -> str:
    """A machine's RAM in GiB to two decimals, as given; a figure under 0.005 GiB in two significant digits.

    hostile82 item 3: ``ram_gib: 0.001`` was said as "0 GiB of system RAM", a figure the user never gave.
    """
    gib = ram_bytes / 2**30
    return f"{round(gib, 2):g}" if round(gib, 2) > 0 else f"{gib:.2g}"


@memoized
def layer_params(arch: Architecture) -> tuple[tuple[int, int], ...]:
    """Each decoder layer's weights a token multiplies: (those of every token, those of its routed experts).

    The routed experts' are a token's ``top_k`` of them (``Layer.experts_per_token``), not all the layer holds.
    """
    out = []
    for layer in arch.layers:
        experts = [lin for lin in layer.linears if lin.group == EXPERT]
        held = sum(lin.weight_params + lin.bias_params for lin in experts)
        used = sum((lin.weight_params + lin.bias_params) // lin.copies * layer.experts_per_token for lin in experts)
        out.append((layer.params - held, used))
    return tuple(out)


def cpu_weight_seconds(read_bytes: float, multiplied_params: float, machine: Machine, consts: Constants) -> tuple[float, str]:
    """Seconds the CPU spends on ``read_bytes`` (weights, and KV) multiplying ``multiplied_params`` weights; and its bound.

    The bound is ``ddr`` or ``cpu-cores``. Its memory reads the bytes at the DRAM rate (``ddr_bandwidth_efficiency``)
    and its kernels at most at ``cpu_weight_read_ceiling_gb_per_s`` (a sum: many channels are capped by the kernels);
    its cores multiply ``cpu_core_gparams_per_s`` weights a second each, the cores llama.cpp's threads run on
    (``Machine.cpu_cores``): the slower of the memory and the cores sets the time (newuser38 item 2: the speed had no
    term for the cores; a desktop of 6 P-cores reads dual-channel DDR5-6000 at about the rate its cores multiply). A
    machine whose CPU is not known (``cpu_cores`` 0) is counted at its memory alone. A core without VNNI's 8-bit dot
    product (``Machine.cpu_int8_vnni`` false: AVX2, or AVX-512 before VNNI) takes two multiply instructions a vector
    where VNNI takes one, and multiplies at ``cpu_core_gparams_per_s_without_vnni``.
    """
    ddr = machine.ddr_gb_per_s * 1e9 * consts.ddr_bandwidth_efficiency
    memory_s = read_bytes / ddr
    rate = consts.cpu_core_gparams_per_s if machine.cpu_int8_vnni else consts.cpu_core_gparams_per_s_without_vnni
    cores_s = multiplied_params / (machine.cpu_cores * rate * 1e9) if machine.cpu_cores else 0.0
    ceiling_s = read_bytes / (consts.cpu_weight_read_ceiling_gb_per_s * 1e9)
    return max(memory_s, cores_s) + ceiling_s, ("cpu-cores" if cores_s > memory_s else "ddr")


def pageable_copy_bytes_per_s(pinned_bytes_per_s: float, machine: Machine, consts: Constants) -> float:
    """Bytes a second a host-to-GPU copy from pageable memory reaches, given the pinned rate of the link.

    CUDA stages a pageable copy through pinned buffers: a CPU memcpy of the data into one (a read and a write of host
    memory) while the DMA engine reads the previous one (a third pass), so the copy runs at the slower of
    ``offload_pageable_copy_efficiency`` of the pinned rate and the DRAM's rate over ``pageable_copy_host_passes``
    (``ddr_bandwidth_efficiency`` of it). A machine whose DRAM is not known (0) is counted at the link alone.
    """
    link = pinned_bytes_per_s * consts.offload_pageable_copy_efficiency
    ddr = machine.ddr_gb_per_s * 1e9 * consts.ddr_bandwidth_efficiency / consts.pageable_copy_host_passes
    return min(link, ddr) if ddr > 0 else link


@memoized  # pure: the slots' speeds time one placement's prompt at every count of them (:func:`slots_at`)
def prefill_host_parts(
    arch: Architecture,
    fmt: WeightFormat,
    placement: Placement,
    machine: Machine,
    consts: Constants,
    prompt_tokens: int,
    pageable: bool,
) -> PrefillHost:
    """Seconds a prompt's passes spend on the weights held off the GPUs, beyond the GPUs' compute (llama.cpp).

    llama.cpp takes a prompt in passes of ``offload_ubatch_tokens`` (its -ub). In a pass of at least
    ``offload_min_batch_tokens`` tokens the CUDA backend runs the layers held in RAM on the GPU
    (``ggml_backend_cuda_device_offload_op``) and the scheduler copies their weights over the host link before each one
    runs, waiting for the copy (``ggml_backend_sched_compute_splits``): a whole layer's tensors, and of routed experts
    those the pass routes to (it reads the router's choices back first; ``expected_experts_touched``). The copy runs at
    ``pcie_efficiency`` of the link from pinned memory (``--no-mmap`` loads the weights into CUDA_Host buffers), at
    :func:`pageable_copy_bytes_per_s` from pageable memory (``pageable``: a memory-mapped file, or the CPU buffer
    llama.cpp falls back to where the pinned one is not granted: ``offload_pageable_copy_efficiency`` of the pinned
    rate, or the DRAM's over the staged copy's passes where slower); layers on NVMe are paged in first. The experts
    a pass copies are counted under uniform routing (``expected_experts_touched``): an upper bound, as a model whose
    router favours some experts touches fewer (gpt-oss-120b's pp512 on an i5-12600K is predicted 46% below its
    measured rate, benchmarks/CALIBRATION.md). A shorter pass (a short prompt, or the remainder of a long one) runs
    those layers on the CPU: their weights read once, every token multiplied (:func:`cpu_weight_seconds`), and each
    routed expert's call. The LM head, where it is in RAM, multiplies the last token alone, on the CPU.
    """
    if prompt_tokens <= 0:
        return PrefillHost(0.0, ())
    sizes = size_weights(arch, fmt)
    params = layer_params(arch)
    moe = _moe_layers(arch)
    routed, top_k = arch.routed_experts
    link = machine.pcie_gb_per_s * 1e9 * consts.pcie_efficiency
    if pageable:
        link = pageable_copy_bytes_per_s(link, machine, consts)
    nvme = machine.nvme_read_gb_per_s * 1e9 * consts.nvme_efficiency

    def one_pass(tokens: int) -> tuple[float, dict[str, float]]:
        touched = expected_experts_touched(routed, top_k, tokens)
        share = touched / routed if routed else 1.0
        in_ram, on_disk, multiplied, calls = 0.0, 0.0, 0.0, 0.0
        for i, device in enumerate(placement.layer_devices):
            experts = sizes.layer_expert_bytes[i] * share
            every_token, routed_params = params[i]
            if runs_on_host(device):
                moved, work = sizes.layer_bytes[i] - sizes.layer_expert_bytes[i] + experts, float(every_token + routed_params)
            elif "+experts:" in device:
                moved, work = experts, float(routed_params)
            else:
                continue
            if device.endswith("disk"):
                on_disk += moved
            else:
                in_ram += moved
            multiplied += work * tokens
            calls += touched if moe[i] else 0.0
        paged_s = on_disk / nvme if on_disk else 0.0
        if tokens >= consts.offload_min_batch_tokens:
            copy_s = (in_ram + on_disk) / link if link else 0.0
            return copy_s + paged_s, {"pcie": copy_s, "nvme": paged_s}  # copy_s 0 without a link
        cpu_s, cpu_bound = cpu_weight_seconds(in_ram, multiplied, machine, consts)
        calls_s = calls * consts.cpu_expert_call_overhead_s
        return cpu_s + paged_s + calls_s, {cpu_bound: cpu_s + calls_s, "nvme": paged_s}

    ubatch = consts.offload_ubatch_tokens
    full, rest = divmod(prompt_tokens, ubatch)
    (full_s, full_parts), (rest_s, rest_parts) = one_pass(ubatch), (one_pass(rest) if rest else (0.0, {}))
    seconds = full * full_s + rest_s
    # the full passes' parts first where there are any: their order breaks a tie of :attr:`OffloadCost.prefill_bound`
    parts = {k: full * v for k, v in full_parts.items()} if full else {}
    for k, v in rest_parts.items():
        parts[k] = parts.get(k, 0.0) + v
    if placement.lm_head_device == "cpu":
        head = sizes.embedding_bytes if arch.tie_word_embeddings else sizes.lm_head_bytes
        head_s = cpu_weight_seconds(head, arch.logits_params, machine, consts)[0]
        seconds += head_s
        parts["cpu-lm-head"] = head_s
    return PrefillHost(seconds, tuple((k, v) for k, v in parts.items() if v > 0))


#: How a layer's weights held off the GPUs are read (:class:`_HeldOff`): all of it from RAM or NVMe, or its routed
#: experts alone from RAM or NVMe.
_CPU, _DISK, _EXPERTS_CPU, _EXPERTS_DISK = range(4)


class _HeldOff(NamedTuple):
    """What :func:`offload_cost` reads of a placement's layer devices whatever the streams: worked out once a placement."""

    #: The layers with weights off the GPUs, in order: (how they are read, their bytes other than the routed experts',
    #: their routed experts' bytes, whether the layer has routed experts, the layer where the CPU runs its attention).
    layers: tuple[tuple[int, int, int, bool, Layer | None], ...]
    #: The dense bytes of the layers the CPU runs, the routed experts' bytes off the GPUs, the weights the CPU multiplies
    #: a token by (exact sums: whole numbers of bytes and parameters, which a float holds exactly).
    dense: int
    experts: int
    multiplied: int
    #: :func:`backend_switches`, :func:`_gpu_moe_share` and the changes of device kind along the layers.
    switches: int
    gpu_moe_share: float
    boundaries: int


@memoized  # pure: a placement is timed at every count of slots decoding (:func:`slots_at`), each of them a layer walk
def _held_off(arch: Architecture, fmt: WeightFormat, layer_devices: tuple[str, ...], engine: str) -> _HeldOff:
    """The stream-independent part of :func:`offload_cost`'s walk over the layers of a placement."""
    sizes = size_weights(arch, fmt)
    params = layer_params(arch)
    moe = _moe_layers(arch)
    layers = []
    dense_sum = experts_sum = multiplied = 0
    for i, device in enumerate(layer_devices):
        host = runs_on_host(device)
        if not host and "+experts:" not in device:
            continue
        dense = sizes.layer_bytes[i] - sizes.layer_expert_bytes[i]
        every_token, routed_params = params[i]
        dense_sum += dense if host else 0
        experts_sum += sizes.layer_expert_bytes[i]
        multiplied += (every_token if host else 0) + routed_params
        if device == "cpu":
            tier = _CPU
        elif device == "disk":
            tier = _DISK
        else:
            tier = _EXPERTS_DISK if device.endswith("disk") else _EXPERTS_CPU
        layers.append((tier, dense, sizes.layer_expert_bytes[i], moe[i], arch.layers[i] if host else None))
    return _HeldOff(
        tuple(layers),
        dense_sum,
        experts_sum,
        multiplied,
        backend_switches(engine, layer_devices, moe),
        _gpu_moe_share(arch, layer_devices),
        sum(1 for a, b in itertools.pairwise(layer_devices) if a[:3] != b[:3]),
    )


def offload_cost(
    arch: Architecture,
    fmt: WeightFormat,
    kv_bits: int,
    placement: Placement,
    machine: Machine,
    prompt_tokens: int,
    consts: Constants,
    decode_context_tokens: int | None = None,
    streams: int = 1,
    memory_mapped: bool | None = None,
    engine: str = "llama.cpp",
    flash_attention: bool = True,
) -> OffloadCost:
    """Decode tokens/s of each stream, TTFT and cold start of a placement (``streams`` decoded together; TTFT alone).

    One decode model with the serving estimate (:class:`generator.sizing.performance.DecodeModel`): a step reads
    the weights once for all its ``streams`` (:func:`decode_weight_read_bytes`: the routed experts they touch), and
    each stream's KV of the ``decode_context_tokens`` in use (default: the prompt), its attention and its host time;
    offloaded parts are read from their tier. Many streams are llama.cpp's server slots (``-np``): the CPU multiplies
    each weight it reads once a stream (:func:`cpu_weight_seconds`), as matrix-vector products (its batched kernels
    may do better). The TTFT is of ``prompt_tokens`` in passes of ``offload_ubatch_tokens``
    (:func:`prefill_host_parts`), the weights copied from pinned memory unless ``memory_mapped`` (default: as the
    planned llama.cpp command runs, memory-mapped where layers are on NVMe, else ``--no-mmap``) or unless the pinned
    buffers ``--no-mmap`` asks for are more of the RAM than is taken to be granted (:func:`pinned_falls_back`: llama.cpp
    then holds them in pageable memory; ``pinned_ttft_s`` is the TTFT were they pinned). ``engine`` (one of
    :data:`OFFLOAD_ENGINES`; llama.cpp, whose command specgen plans) sets the rate the CPU's attention runs at
    (:func:`cpu_attention_gflops_per_s`); llama.cpp's by the threads its kernels engage, fewer with ``flash_attention``
    (its default, on) than without (:func:`llama_cpp_attention_gflops_per_s`); without it, a prompt with every layer on
    the GPUs also writes and reads its score matrices (:func:`~generator.sizing.llama_cpp_prompt.score_matrix_seconds`).
    """
    flash_attention = flash_attention and machine.flash_attention != "off"  # fix202: the machine's -fa off
    sizes = size_weights(arch, fmt)
    share = routed_share(arch, streams)
    routed, top_k = arch.routed_experts
    touched = expected_experts_touched(routed, top_k, streams)  # top_k at one stream
    cpu_read = disk_read = 0.0
    held = _held_off(arch, fmt, placement.layer_devices, engine)
    # weights the CPU multiplies a step's token by (RAM and NVMe layers, a token's routed experts)
    multiplied = float(held.multiplied)
    cpu_expert_calls = 0.0  # routed experts a step runs on the CPU, each a small matrix product with its fixed cost
    in_use = min(decode_context_tokens or prompt_tokens, placement.context_tokens)
    cpu_attention_flops = 0.0  # the scores and values of the layers the CPU runs, over the context in use
    # the weights held off the GPUs: every token's, the experts, read
    host_dense, host_experts, host_routed = float(held.dense), float(held.experts), 0.0
    for tier, dense, expert_bytes, moe, layer in held.layers:  # in order; a layer on the GPUs adds nothing
        if layer is not None:
            cpu_attention_flops += layer_attention_flops(arch, layer, in_use) * streams
        experts = expert_bytes * share
        host_routed += experts
        cpu_expert_calls += touched if moe else 0.0
        if tier == _CPU:
            cpu_read += dense + experts
        elif tier == _DISK:
            disk_read += dense + experts
        elif tier == _EXPERTS_DISK:
            disk_read += experts
        else:
            cpu_read += experts
    paged, cache = None, 0
    if placement.disk_bytes:
        # the whole file is memory-mapped: the split into RAM and NVMe layers is the page cache's size, not which
        # pages it keeps (the most used of every layer)
        cache = page_cache_bytes(arch, fmt, placement)
        cv = routing_popularity_cv(consts.expert_popularity_cv, routed, top_k)
        paged = paged_reads(host_dense, host_experts, host_routed, cache, cv, (routed, top_k), streams)
        cpu_read, disk_read = paged.cached_bytes, paged.nvme_bytes
    head = sizes.embedding_bytes if arch.tie_word_embeddings else sizes.lm_head_bytes
    if placement.lm_head_device == "cpu":
        cpu_read += head
        multiplied += arch.logits_params
    multiplied *= streams  # each stream's token multiplies every weight read
    cpu_weights_read = cpu_read
    # what the GPUs read is the serving count less the layers and head read elsewhere (an untied input embedding
    # is a lookup wherever it lives: the count leaves it out, and a CPU-held table costs one row below)
    gpu_read = decode_weight_read_bytes(arch, sizes, Parallelism(), streams) - cpu_read - disk_read
    embedding_row = arch.hidden_size * 2
    kv_share = sum(_layer_kv(arch, kv_bits, max(in_use, 1))) / max(1, sum(_layer_kv(arch, kv_bits, placement.context_tokens)))
    kv_share *= streams  # each stream reads its own
    gpu_read += placement.kv_gpu_bytes * kv_share
    cpu_read += placement.kv_cpu_bytes * kv_share + (embedding_row * streams if placement.embedding_device == "cpu" else 0)
    hbm = machine.gpu_bandwidth_gb_per_s * 1e9 * consts.decode_bandwidth_efficiency
    pcie = machine.pcie_gb_per_s * 1e9 * consts.pcie_efficiency
    nvme = machine.nvme_read_gb_per_s * 1e9 * consts.nvme_efficiency
    # a routed expert's pages are faulted in at random, the dense weights of NVMe layers in order
    paged_rate = machine.nvme_read_gb_per_s * 1e9 * consts.nvme_paged_read_efficiency
    # the engine's own time each token (scheduling, sampling, launches), as in the serving estimate
    engine_s = host_overlapped_seconds(consts.decode_step_overhead_s, consts.decode_overhead_per_sequence_s * streams, 1, consts)
    t_gpu = gpu_read / hbm
    # the routed experts' activation and top-k sum kernels over the step's tokens, as the serving decode step counts
    # them (one rule: routed_expert_traffic_bytes, of the GPU timed here), in every mode for the MoE layers whose experts
    # the GPU holds; in the streaming mode the GPU multiplies the others' too, their weights copied to it, and runs
    # their kernels as well (review77 item 2: an offloaded placement counted none, an all-GPU one all, by a rule of
    # its own). Taken even over the MoE layers: the serving rule sums them, and their experts are alike.
    routed_s = streams * sum(routed_expert_traffic_bytes(arch, Parallelism(), _offload_accelerator(fmt, machine))) / hbm
    held_share = held.gpu_moe_share
    t_gpu += routed_s * held_share
    t_streamed_routed = routed_s * (1.0 - held_share)
    expert_calls_s = cpu_expert_calls * consts.cpu_expert_call_overhead_s
    # the CPU's bytes at the slower of its memory and its cores, and again at the rate its kernels consume them
    weights_s, cpu_bound = cpu_weight_seconds(cpu_read, multiplied, machine, consts)
    t_cpu = weights_s + expert_calls_s
    # the scheduler's switches between the GPU and the CPU within the token (CUDA graphs off under partial offload)
    t_switch = held.switches * consts.offload_backend_switch_s
    # the scores and values of the CPU's layers: compute that grows with the context, beyond the KV bytes read, at the
    # rate of the engine's kernels
    attention_rate = cpu_attention_gflops_per_s(engine, consts)
    if engine == "llama.cpp":
        query_rows = arch.num_attention_heads * streams
        attention_rate = llama_cpp_attention_gflops_per_s(consts, query_rows, machine.cpu_cores, flash_attention)
    if attention_rate is None:
        if cpu_attention_flops:
            raise ValueError(f"{engine} runs attention on the GPU: a placement with layers on the CPU is not its")
        attention_rate = math.inf
    t_attention = cpu_attention_flops / (attention_rate * 1e9)
    t_disk = paged.dense_nvme_bytes / nvme + (disk_read - paged.dense_nvme_bytes) / paged_rate if paged is not None else 0.0
    cpu_mode = engine_s + t_gpu + t_cpu + t_attention + t_disk + t_switch
    # streaming: every offloaded byte (all experts, not just the routed ones) crosses the host link each token, but
    # the input embedding held on the host stays a lookup there: one row crosses, not the table
    table = placement.embedding_bytes
    streamed_weights = placement.cpu_bytes + placement.disk_bytes - table + (embedding_row if table else 0)
    # and the KV cache the placement holds in RAM, read where the layers now run (review 19 item 1)
    streamed = streamed_weights + placement.kv_cpu_bytes * kv_share
    t_stream = streamed / pcie if streamed else 0.0
    stream_mode = engine_s + t_gpu + t_streamed_routed + streamed / hbm + t_stream + t_disk
    # llama.cpp's CUDA backend takes an op whose weights are in host memory only for a batch of
    # ``offload_min_batch_tokens`` or more, the scheduler copying them over the host link first: a decode step of that
    # many slots streams them (every offloaded byte taken as copied; a MoE step that many tokens wide touches most
    # experts); a smaller step multiplies them on the CPU, as ktransformers always does (newuser68 item 2: one stream was
    # timed streaming where the link outran the host's memory, up to 2x high). The streamed figure of one stream is
    # vLLM's --cpu-offload-gb way, said beside it. A machine without a GPU has no backend to take the ops: its CPU
    # multiplies every step (acc146: llama.cpp on the CPU alone at --batch 32 was timed as streaming to no GPU, at
    # its engine's time alone, 425 tokens/s a slot of Llama-3.1-8B on a Ryzen 9 7950X against 1.04 at 31).
    if not placement.offloaded and engine in GGML_SCHEDULER_ENGINES:
        # every layer on the GPUs: llama.cpp's kernels read at their own rate, the layers' kernels' fixed time the
        # floor of the step (generator/sizing/llama_cpp_gpu.py), and each stream's host work beyond them
        # a 16-bit file's float mat-vec (acc165), a K-quant file's on an RDNA card (acc173)
        kernel = mat_vec_kernel(float(fmt.bits), float(fmt.scale_bits), fmt.name, machine.gpu_architecture)
        layers = dense_layer_equivalents(arch.layers)  # a MoE / MLA layer's extra kernels (acc165)
        # the routed experts the step's tokens pick, by their own kernel (acc187: a MXFP4_MOE file's MXFP4 ones)
        experts = sum(sizes.layer_expert_bytes) * share
        expert_kernel = expert_mat_vec_kernel(fmt.name, kernel)
        bandwidth = machine.gpu_bandwidth_gb_per_s
        part, step_s = resident_step_seconds(t_gpu * hbm, layers, bandwidth, consts, kernel, experts, expert_kernel)
        mode, seconds = "gpu", {"hbm": 0.0, "engine": consts.decode_overhead_per_sequence_s * streams}
        seconds[part] += step_s
        # split over GPUs by layers: each boundary's copy and wait (generator/sizing/llama_cpp_gpu.py)
        seconds["engine"] += hops_seconds(placement.layer_devices, consts)
        cpu_mode = stream_mode = sum(seconds.values())  # nothing held off the GPUs: no mode of its own
    elif not placement.offloaded:
        mode, seconds = "gpu", {"hbm": t_gpu, "engine": engine_s}
    elif machine.gpus and engine in GGML_SCHEDULER_ENGINES and streams >= consts.offload_min_batch_tokens:
        streamed_s = t_gpu + t_streamed_routed + streamed / hbm
        mode, seconds = "pcie-stream", {"hbm": streamed_s, "pcie": t_stream, "nvme": t_disk, "engine": engine_s}
    else:
        mode, seconds = "cpu-compute", {"hbm": t_gpu, cpu_bound: t_cpu, "nvme": t_disk, "engine": engine_s}
        if t_attention:
            seconds["cpu-attention"] = t_attention
        if t_switch:
            seconds["gpu-cpu-switch"] = t_switch
    if placement.offloaded and engine in GGML_SCHEDULER_ENGINES:
        # every layer's kernels take their fixed time whichever device runs them (llama_cpp_gpu.py): no placement
        # with fewer bytes on the GPUs decodes faster than that floor (the whole model on them would then be slower)
        layers = dense_layer_equivalents(arch.layers)
        floor_s = kernels_floor_seconds(layers, consts) + consts.decode_overhead_per_sequence_s * streams
        seconds["engine"] += max(0.0, floor_s - sum(seconds.values()))
    total = sum(seconds.values())
    bound = max(seconds, key=lambda k: seconds[k])
    boundaries = held.boundaries
    pcie_per_token = int(streamed) if mode == "pcie-stream" else 2 * arch.hidden_size * 2 * (boundaries + 1)
    gpu = prompt_gpu(machine) if not placement.offloaded and engine in GGML_SCHEDULER_ENGINES else None
    if gpu is not None:
        # every layer on the GPUs: llama.cpp's passes of int8 MMQ GEMMs (quantized, cards with int8 tensor cores) or
        # fp16 cuBLAS / hipBLAS ones with the quantized matrices' fp16 copies, and the layers' other kernels, by the
        # GPU's maker and architecture (generator/sizing/llama_cpp_prompt.py)
        matrices = sum(sizes.layer_bytes) + head
        flops = prefill_flops(arch, prompt_tokens)
        compute = resident_prompt_seconds(arch, fmt, prompt_tokens, flops, matrices, gpu, consts, flash_attention)
    else:
        compute = prefill_flops(arch, prompt_tokens) / (machine.gpu_tflops * 1e12 * consts.prefill_compute_efficiency)
    mapped = placement.disk_bytes > 0 if memory_mapped is None else memory_mapped
    fallback = not mapped and pinned_falls_back(placement, machine, consts)
    host = prefill_host_parts(arch, fmt, placement, machine, consts, prompt_tokens, mapped or fallback)
    prefill = compute + host.seconds
    ttft = prefill + total
    pinned_ttft = None
    if fallback:
        pinned_ttft = compute + prefill_host_parts(arch, fmt, placement, machine, consts, prompt_tokens, False).seconds + total
    file_bytes = sizes.total_bytes
    cold = file_bytes / nvme if nvme else 0.0
    cold += placement.gpu_bytes / pcie
    evicted = None
    if mode == "cpu-compute" and disk_read:
        # the RAM tier's weights read from NVMe as well: the CPU still multiplies them, and reads the KV from RAM
        kv_s = cpu_weight_seconds(cpu_read - cpu_weights_read, multiplied, machine, consts)[0]
        evicted_s = (disk_read + cpu_weights_read - host_routed) / nvme + host_routed / paged_rate
        evicted = 1.0 / (cpu_mode - t_cpu - t_disk + expert_calls_s + kv_s + evicted_s)
    return OffloadCost(
        decode_tokens_per_s=1.0 / total,  # each stream's: ``streams`` tokens a step
        mode=mode,
        bound=bound,
        seconds_per_token=seconds,
        cpu_mode_tokens_per_s=1.0 / cpu_mode,
        stream_mode_tokens_per_s=1.0 / stream_mode,
        pcie_bytes_per_token=pcie_per_token,
        ttft_s=ttft,
        cold_start_s=cold,
        nvme_bytes_per_token=int(disk_read),
        ram_weight_bytes_per_token=int(cpu_weights_read),
        evicted_tokens_per_s=evicted,
        cpu_attention_s=t_attention,
        prompt_tokens=prompt_tokens,
        ubatch_tokens=consts.offload_ubatch_tokens,
        prefill_s=prefill,
        paged=paged,
        page_cache_bytes=cache,
        pinned_fallback_bytes=pinned_bytes(placement) if fallback else 0,
        pinned_ttft_s=pinned_ttft,
        prefill_parts_s=_prefill_parts(compute, host),
    )


def _prefill_parts(compute_s: float, host: PrefillHost) -> tuple[tuple[str, float], ...]:
    """:attr:`OffloadCost.prefill_parts_s`: the GPUs' compute, then the host's parts (fix192)."""
    return (("gpu-compute", compute_s), *host.parts) if compute_s > 0 or host.parts else ()


class StreamCapacity(NamedTuple):
    """llama.cpp server slots decoding together on a machine, and their output tokens/s."""

    streams: int
    tokens_per_s: float
    #: Each stream's tokens/s at ``streams``.
    stream_tokens_per_s: float
    #: The KV cache's tokens (llama.cpp's ``-c``) that hold the slots' requests, a lone request's context at least.
    context_tokens: int
    #: Whether the search ended at the machine's memory (twice the slots do not fit): ``tokens_per_s`` is about its most.
    memory_bound: bool = False
    #: The share of the machine's time the requests' prompt passes take (rate x one prompt's prefill seconds), which the
    #: slots do not decode in (newuser68 item 1: 0.1 req/s of prompts taking 7.48 s each held 75% of it); 0: none.
    prompt_share: float = 0.0
    #: The fewest slots the rate's output tokens alone take where more were taken so that the wait for one fits the TTFT
    #: target (:func:`~generator.planner.fixed_place.place_for_rate`); 0: these are the rate's.
    rate_streams: int = 0
    #: Why more slots than ``rate_streams``: ``fits`` (the fewest whose wait fits the TTFT target), ``cache`` (the most
    #: the rate's KV cache holds, none fitting), ``drain`` (the rate's would not drain; the count tried that waits least).
    wait_basis: str = ""
    #: Each stream's tokens/s with 1, 2, ... ``streams`` of them decoding, on this placement (:func:`slots_at`'s
    #: ``with_speeds``; empty where not worked out). ``stream_tokens_per_s`` is the last.
    speeds: tuple[float, ...] = ()
    #: How a step of ``streams`` runs the weights held off the GPUs (:attr:`OffloadCost.mode`): ``cpu-compute`` (the CPU
    #: multiplies them by every slot's token), ``pcie-stream`` (llama.cpp's GPU backend takes a step of
    #: ``offload_min_batch_tokens`` or more, copying them to the GPU), ``gpu`` (none held off); "" where not timed.
    mode: str = ""

    @property
    def served_tokens_per_s(self) -> float:
        """Output tokens/s the slots make in the time the prompts' passes leave (0 where they take all of it)."""
        return self.tokens_per_s * max(0.0, 1.0 - self.prompt_share)

    def meets(self, demand_tokens_per_s: float) -> bool:
        """Whether the slots make ``demand_tokens_per_s`` beside their requests' prompt passes."""
        return self.served_tokens_per_s >= demand_tokens_per_s

    @property
    def slot_tokens_per_s(self) -> float:
        """Each slot's tokens/s over the whole time, its decode paused while a prompt pass runs (review69 item 6)."""
        return self.stream_tokens_per_s * max(0.0, 1.0 - self.prompt_share)


#: The most llama.cpp server slots looked at.
MAX_STREAMS = 1024


def slots_at(
    arch: Architecture,
    fmt: WeightFormat,
    kv_bits: int,
    context: int,
    machine: Machine,
    consts: Constants,
    decode_context_tokens: int,
    request_tokens: int,
    streams: int,
    engine: str = "llama.cpp",
    prompt_share: float = 0.0,
    with_speeds: bool = False,
) -> StreamCapacity | None:
    """``streams`` server slots of ``request_tokens`` requests placed with their KV cache, and their tokens/s.

    None where they do not fit the machine; :func:`stream_capacity` searches over these. ``with_speeds``: each
    stream's tokens/s with fewer of them decoding too, on the same placement (:attr:`StreamCapacity.speeds`): exact to
    :data:`EXACT_SPEEDS` streams, past it between counts a quarter apart, linearly (the speed falls smoothly there).
    """
    split = splits_context_over_slots(engine)
    tokens = streams * max(context, request_tokens) if split else max(context, streams * request_tokens)
    try:
        placement = place(arch, fmt, kv_bits, tokens, machine, consts, engine=engine)
    except InfeasibleError:
        return None

    def cost(decoding: int) -> OffloadCost:
        return offload_cost(
            arch, fmt, kv_bits, placement, machine, decode_context_tokens, consts, decode_context_tokens, decoding,
            engine=engine,
        )  # fmt: skip

    at = cost(streams)

    def each(decoding: int) -> float:
        return (at if decoding == streams else cost(decoding)).decode_tokens_per_s

    speeds = _speeds(streams, each) if with_speeds else ()
    last = speeds[-1] if speeds else at.decode_tokens_per_s
    return StreamCapacity(streams, last * streams, last, tokens, prompt_share=prompt_share, speeds=speeds, mode=at.mode)


#: Stream counts up to which :func:`slots_at` times each count's speed; past it, counts a quarter apart.
EXACT_SPEEDS = 32


def _speeds(streams: int, each: Callable[[int], float]) -> tuple[float, ...]:
    """``each(k)`` for ``k`` 1..``streams``: exact to :data:`EXACT_SPEEDS`, past it interpolated between counts."""
    timed = list(range(1, min(streams, EXACT_SPEEDS) + 1))
    while timed[-1] < streams:
        timed.append(min(streams, math.ceil(timed[-1] * 1.25)))
    known = {k: each(k) for k in timed}
    speeds = []
    for low, high in itertools.pairwise(timed):
        speeds += [known[low] + (known[high] - known[low]) * (k - low) / (high - low) for k in range(low, high)]
    return (*speeds, known[timed[-1]])


def stream_capacity(
    arch: Architecture,
    fmt: WeightFormat,
    kv_bits: int,
    context: int,
    machine: Machine,
    consts: Constants,
    decode_context_tokens: int,
    request_tokens: int,
    demand_tokens_per_s: float,
    engine: str = "llama.cpp",
    prompt_share: float = 0.0,
) -> StreamCapacity:
    """About the fewest server slots whose output tokens/s meet ``demand_tokens_per_s``, else the most the machine makes.

    ``prompt_share``: the share of the machine's time the requests' prompt passes take (:attr:`StreamCapacity.prompt_share`):
    the slots make the demand in the rest.

    llama.cpp's server shares the ``-c`` tokens among its ``-np`` slots in one unified KV cache (``-kvu``; the default
    where the slots are left to it: https://github.com/ggml-org/llama.cpp/pull/16736), so ``n`` slots of
    ``request_tokens`` take a cache of ``n x request_tokens`` (``context`` at least, a lone request's), placed as the
    model is (the cache's memory may push weights off the GPUs); a step reads the weights once for all of them
    (newuser29 item 7: a home box 550 times short of its rate was planned as one stream short of it). Counts double
    until one meets the demand or no longer fits, then halve to the fewest (the output rises with the slots while
    the weights stay where they are). ``engine`` times the slots (:func:`offload_cost`); where it splits ``-c`` over
    them (:func:`splits_context_over_slots`: ik_llama.cpp), every slot holds ``context`` tokens, a lone request's.
    """

    def at(streams: int) -> StreamCapacity | None:
        return slots_at(
            arch, fmt, kv_bits, context, machine, consts, decode_context_tokens, request_tokens, streams, engine,
            prompt_share,
        )  # fmt: skip

    best = at(1)
    if best is None:
        raise InfeasibleError(f"the model does not fit this machine at {context:,} tokens")
    if best.meets(demand_tokens_per_s):
        return best
    short, met, unfit = 1, None, None  # a count short of the demand, one that meets it, one that does not fit
    while met is None and unfit is None and short < MAX_STREAMS:
        streams = min(2 * short, MAX_STREAMS)
        got = at(streams)
        if got is None:
            unfit = streams
        elif got.meets(demand_tokens_per_s):
            met = got
        else:
            best, short = max(best, got, key=lambda c: c.tokens_per_s), streams
    if met is None:
        while unfit is not None and unfit - short > 1:  # the most slots that fit, between the last two counts
            mid = (short + unfit) // 2
            got = at(mid)
            if got is None:
                unfit = mid
            else:
                best, short = max(best, got, key=lambda c: c.tokens_per_s), mid
        return best._replace(memory_bound=unfit is not None)
    while met.streams - short > 1:
        got = at((short + met.streams) // 2)
        if got is not None and got.meets(demand_tokens_per_s):
            met = got
        else:
            short = (short + met.streams) // 2
    return met


class OffloadPlan(NamedTuple):
    """The decision for one model on a fixed machine, with the reasons in order."""

    placement: Placement
    cost: OffloadCost
    #: The format placed (a GGUF file's own, where the model is one).
    weight_format: WeightFormat
    decisions: tuple[str, ...]
    #: The largest precision outside the allowed ones that would fit entirely in VRAM, when offloading.
    fitting_alternative: str | None
    #: Else the smaller GGUF types outside the allowed ones that decode at least :data:`FASTER_BY` times as fast, largest
    #: first, with their tokens/s, when offloading.
    faster_alternatives: tuple[tuple[str, float], ...] = ()
    #: The cost when a request has filled the whole context (the CPU's attention grows with it); None: as ``cost``.
    full_context: OffloadCost | None = None
    #: Prompt tokens a pass (llama.cpp's -b and -ub) the placement keeps GPU memory for and the TTFT is timed at.
    ubatch_tokens: int = 512
    #: The engine the figures are timed for and whose command is planned (:data:`PLANNED_OFFLOAD_ENGINES`).
    engine: str = "llama.cpp"
    #: The fitting alternative's weight bytes and its decode tokens/s all in VRAM (0 without one).
    fitting_alternative_bytes: int = 0
    fitting_alternative_tokens_per_s: float = 0.0
    #: Offloading with a 16- or 32-bit KV cache: the decode tokens/s of the same weights all in VRAM with llama.cpp's q8_0
    #: cache (kv_cache_precision int8), where that fits them (newuser101 item 2); 0 otherwise.
    kv_int8_tokens_per_s: float = 0.0


#: The -ub (and -b) a plan on a machine of yours tries beyond llama.cpp's 512 where weights live off the GPUs: each pass
#: copies the weights held in RAM once, so a larger one cuts a long prompt's copies (newuser38 item 7: DeepSeek-V3 with
#: 8,000 tokens of prompt at -ub 4096 took 37 s, 252 at 512), its compute buffer permitting.
UBATCH_CHOICES = (1024, 2048, 4096)


def larger_ubatch(
    arch: Architecture,
    fmt: WeightFormat,
    kv_bits: int,
    machine: Machine,
    prompt_tokens: int,
    consts: Constants,
    placed: tuple[Placement, OffloadCost],
    decode_context_tokens: int | None = None,
    engine: str = "llama.cpp",
) -> tuple[Placement, OffloadCost, int]:
    """The -ub whose request is answered soonest (its TTFT and its answer's decode), with its placement and cost.

    Of :data:`UBATCH_CHOICES` and the default. A pass's activations grow with its tokens (``inference_activation_bytes``
    at ``offload_ubatch_tokens``, what :func:`place` keeps room for), so each size is placed again: where every layer
    stays where it was, the shorter TTFT wins; where the larger compute buffer moves weights off the GPUs, decode slows
    and the request's time decides: its prompt's TTFT plus its answer's tokens at the decode rate, the answer being
    twice ``decode_context_tokens`` past the prompt (the decode step is timed halfway through it). review70 item 4: a
    size that moved a layer was never taken, so Mixtral on an RTX 4090 at --context 8192 kept -ub 512 (a 3,000-token
    prompt in 28.9 s, 3.54 tokens/s) where -ub 4096 with one more layer's experts in RAM answers in 5.8 s at 3.42
    tokens/s, 93 s a 300-token request against 114, as it was planned at --context 16384: a longer context planned a
    5x faster TTFT. llama.cpp's MoE offload guides raise -b / -ub for prompt speed at that cost (ik_llama.cpp's
    ``-ub 4096 -b 4096`` beside ``-ot exps=CPU``). Without ``decode_context_tokens`` no weight may move. A size at or
    beyond twice the prompt gains nothing over the one below it and is not tried.
    """
    placement, cost = placed
    best = (placement, cost, consts.offload_ubatch_tokens)
    if not placement.offloaded:
        return best
    answer = None if decode_context_tokens is None else 2 * max(0, decode_context_tokens - prompt_tokens)

    for ubatch in UBATCH_CHOICES:
        if ubatch <= consts.offload_ubatch_tokens or ubatch >= 2 * prompt_tokens:
            continue
        wider = consts._replace(offload_ubatch_tokens=ubatch)
        try:
            there = place(arch, fmt, kv_bits, placement.context_tokens, machine, wider, engine=engine)
        except InfeasibleError:
            break
        if there.layer_devices != placement.layer_devices and answer is None:
            break  # the larger buffer pushed weights off the GPUs, and no answer to weigh the slower decode against
        timed = offload_cost(arch, fmt, kv_bits, there, machine, prompt_tokens, wider, decode_context_tokens, engine=engine)
        if timed.request_seconds(answer or 0) < best[1].request_seconds(answer or 0):
            best = (there, timed, ubatch)
    return best


def ubatch_decision(
    ubatch: int,
    engine: str,
    placed: tuple[Placement, OffloadCost],
    base: tuple[Placement, OffloadCost] | None,
    answer_tokens: int = 0,
) -> str:
    """The decision of prompt passes of ``ubatch`` tokens.

    ``base``: llama.cpp's -ub 512 placement where the larger buffer moved weights off the GPUs (its decode and TTFT
    said beside the plan's: the trade), else None; ``answer_tokens``: the request's answer, whose time the trade is
    weighed by.
    """
    said = (
        f"prompt passes of {ubatch:,} tokens ({engine} -b/-ub {ubatch}): the weights held off the GPUs are copied to "
        "them once a pass"
    )
    if base is None:
        return f"{said}, and the GPUs' free memory holds the larger compute buffer"
    (there, cost), (_, before) = placed, base
    moved = [i for i, (a, b) in enumerate(zip(there.layer_devices, base[0].layer_devices, strict=True)) if a != b]
    layers = ", ".join(map(str, moved[:8])) + (", ..." if len(moved) > 8 else "")
    now, was = cost.request_seconds(answer_tokens), before.request_seconds(answer_tokens)
    return (
        f"{said}; their larger compute buffer moves weights of {len(moved)} more layer(s) off the GPUs ({layers}): "
        f"decode {cost.decode_tokens_per_s:.2f} tokens/s instead of {before.decode_tokens_per_s:.2f} at -ub 512, for a "
        f"TTFT of {cost.ttft_s:.2f} s instead of {before.ttft_s:.2f} for {cost.prompt_tokens:,} prompt tokens: a request "
        f"of {cost.prompt_tokens:,} + {answer_tokens:,} tokens in {now:.1f} s instead of {was:.1f}"
    )


#: How much faster a precision the user did not allow must decode to be suggested when offloading.
FASTER_BY = 2.0


#: A placement, its cost and the prompt passes' -ub it is timed at (:func:`larger_ubatch`).
Placed = tuple[Placement, OffloadCost, int]


def _offloaded_format(
    arch: Architecture,
    ranked: list[WeightFormat],
    kv_bits: int,
    context: int,
    machine: Machine,
    prompt_tokens: int,
    consts: Constants,
    decode_context_tokens: int | None,
    engine: str,
    target: RateTarget,
) -> tuple[WeightFormat, Placed, str]:
    """Which of several allowed precisions (``ranked``, most bytes first), none of which fits VRAM, is offloaded.

    The largest that makes the rate (one stream, else llama.cpp server slots, :func:`stream_capacity`) with each stream
    within the TPOT target: its best quality that is fast enough. Else, of those that make the rate, the one whose
    streams are fastest; else the one that makes the most. With no TPOT target (a batch service) the largest that makes
    the rate. newuser68 item 5: the smallest was taken whatever it cost, q2_k (24.13 tokens/s) for Qwen3-235B on 2 x
    RTX 3090 where q4_k_m, the precision asked, decodes 12.93 within the interactive 100 ms. Returns the format, its
    placement, cost and -ub (:func:`larger_ubatch`'s), and the decision's text with what each gives.
    """
    offered: list[tuple[WeightFormat, Placed, StreamCapacity]] = []
    unplaced: list[str] = []
    error: InfeasibleError | None = None
    for fmt in ranked:
        try:
            there = place(arch, fmt, kv_bits, context, machine, consts, engine=engine)
        except InfeasibleError as exc:
            unplaced.append(fmt.name)
            error = exc
            continue
        cost = offload_cost(arch, fmt, kv_bits, there, machine, prompt_tokens, consts, decode_context_tokens, engine=engine)
        # its prompts at the -ub the plan would take it at (review69 item 4: judged at 512, run at 1,024)
        there, cost, ubatch = larger_ubatch(
            arch, fmt, kv_bits, machine, prompt_tokens, consts, (there, cost), decode_context_tokens, engine
        )
        alone = cost.decode_tokens_per_s
        share = target.requests_per_s * cost.prefill_s  # the prompts' passes take the machine from decoding
        slots = StreamCapacity(1, alone, alone, context, prompt_share=share)
        if not slots.meets(target.demand_tokens_per_s) and share < 1:  # server slots decode together (newuser29 item 7)
            slots = stream_capacity(
                arch, fmt, kv_bits, context, machine, consts._replace(offload_ubatch_tokens=ubatch),
                decode_context_tokens or prompt_tokens,
                target.request_tokens, target.demand_tokens_per_s, engine, share,
            )  # fmt: skip
        offered.append((fmt, (there, cost, ubatch), slots))
    if not offered:
        assert error is not None
        raise error  # the smallest's reason, as when it alone was tried

    def makes(o: tuple[WeightFormat, Placed, StreamCapacity]) -> bool:
        return o[2].meets(target.demand_tokens_per_s)

    def quick(o: tuple[WeightFormat, Placed, StreamCapacity]) -> bool:
        return target.tpot_ms is None or o[2].slot_tokens_per_s * target.tpot_ms >= 1000

    slotted = any(o[2].streams > 1 for o in offered)
    rate = f"the rate's {target.demand_tokens_per_s:.1f} output tokens/s"
    tpot = "" if target.tpot_ms is None else f"TPOT <= {target.tpot_ms:g} ms ({1000 / target.tpot_ms:.3g} tokens/s)"
    if slotted:
        figures = "; ".join(_offered_text(fmt.name, cost, slots, target) for fmt, (_, cost, _), slots in offered)
    else:
        figures = "one stream decodes " + ", ".join(
            f"{fmt.name} {round(cost.decode_tokens_per_s, 3):.2f}" for fmt, (_, cost, _), _ in offered
        )
        figures += " tokens/s"
    figures += "".join(f"; {name} cannot be placed" for name in unplaced)
    met = next((o for o in offered if makes(o) and quick(o)), None)
    if met is not None:
        why = (
            f"the largest allowed that makes {rate} (no TPOT target)"
            if target.tpot_ms is None
            else f"the largest allowed that meets {tpot}" + (f" at {rate}" if slotted else "")
        )
    elif any(makes(o) for o in offered):
        met = max((o for o in offered if makes(o)), key=lambda o: o[2].stream_tokens_per_s)
        why = f"the fastest allowed: none meets {tpot}" + (f" at {rate}" if slotted else "")
    else:
        met = max(offered, key=lambda o: o[2].served_tokens_per_s)
        why = f"the one that makes the most: none makes {rate}"
    return met[0], met[1], f"offloading at {met[0].name}, {why}; {figures}"


def _offered_text(name: str, cost: OffloadCost, slots: StreamCapacity, target: RateTarget) -> str:
    """What one allowed precision gives: one stream's tokens/s, and each slot's where the rate takes several."""
    alone = f"{name} {round(cost.decode_tokens_per_s, 3):.2f} tokens/s alone"
    if slots.prompt_share >= 1:
        return f"{alone}, its requests' prompt passes alone filling the machine"
    if not slots.meets(target.demand_tokens_per_s):
        return f"{alone}, at most {round(slots.served_tokens_per_s, 3):.2f} in all ({slots.streams:,} slots)"
    if slots.streams == 1:
        return alone
    return f"{alone}, {round(slots.stream_tokens_per_s, 3):.2f} each in the {slots.streams:,} slots the rate takes"


class RateTarget(NamedTuple):
    """What a service asks of a machine: its time per output token and its output rate (0: a lone stream's)."""

    #: None: no target (a batch service).
    tpot_ms: float | None
    demand_tokens_per_s: float = 0.0
    #: The prompt and output tokens of one request: what a server slot holds.
    request_tokens: int = 0
    #: The requests a second, whose prompt passes take the machine's time from decoding (0: not counted).
    requests_per_s: float = 0.0


def plan_offload(
    arch: Architecture,
    formats: list[WeightFormat],
    kv_bits: int,
    context: int,
    min_context: int | None,
    machine: Machine,
    prompt_tokens: int,
    consts: Constants,
    alternatives: tuple[WeightFormat, ...] = (),
    decode_context_tokens: int | None = None,
    engine: str = "llama.cpp",
    target: RateTarget | None = None,
) -> OffloadPlan:
    """Run the issue-#5 order over ``formats`` (the allowed precisions) and return the placement and its cost.

    ``engine`` (one of :data:`PLANNED_OFFLOAD_ENGINES`) times every cost of the plan: its CPU attention's rate
    (:func:`cpu_attention_gflops_per_s`); the weights' reads and the prompt passes are one model for both, as the
    calibration times both engines' rows (``offload_decode``, ``offload_prefill``).

    ``target``: the time per output token the service is held to (its own, else the interactive default) and its rate,
    which pick the precision offloaded where none fits VRAM (:func:`_offloaded_format`); None: no target, one stream.
    """
    if engine not in PLANNED_OFFLOAD_ENGINES:
        raise ValueError(f"offload is planned for {' or '.join(PLANNED_OFFLOAD_ENGINES)}, not '{engine}'")
    requested = size_weights(arch, formats[0]).total_bytes
    # never "upgrade" past the requested precision: only the requested one and smaller ones are candidates
    ranked = sorted(
        (f for f in formats if size_weights(arch, f).total_bytes <= requested), key=lambda f: -size_weights(arch, f).total_bytes
    )
    decisions: list[str] = []
    chosen: tuple[WeightFormat, int] | None = None
    for fmt in ranked:
        if fits_on_gpus(arch, fmt, kv_bits, context, machine, consts):
            chosen = (fmt, context)
            decisions.append(
                "fits in VRAM as requested"
                if fmt is formats[0]
                else f"quantized to {fmt.name}, the largest allowed precision that fits in VRAM"
            )
            break
    if chosen is None and min_context and min_context < context:
        candidates = sorted(
            {c for c in (context // 2**k for k in range(1, 12)) if c >= min_context} | {min_context}, reverse=True
        )
        for ctx in candidates:
            fmt_fit = next((f for f in ranked if fits_on_gpus(arch, f, kv_bits, ctx, machine, consts)), None)
            if fmt_fit is not None:
                chosen = (fmt_fit, ctx)
                decisions.append(
                    f"context shortened from {context} to {ctx} tokens (allowed down to {min_context}) "
                    f"to fit in VRAM at {fmt_fit.name}"
                )
                break
    placed: Placed | None = None
    if chosen is None:
        if len(ranked) == 1:
            chosen = (ranked[0], context)
            decisions.append(
                f"does not fit in VRAM at any allowed precision: offloading at {ranked[0].name}, the smallest allowed"
            )
        else:
            offloaded, placed, why = _offloaded_format(
                arch,
                ranked,
                kv_bits,
                context,
                machine,
                prompt_tokens,
                consts,
                decode_context_tokens,
                engine,
                target or RateTarget(None),
            )
            chosen = (offloaded, context)
            decisions.append(f"does not fit in VRAM at any allowed precision: {why}")
    fmt, ctx = chosen
    if placed is None:
        placement = place(arch, fmt, kv_bits, ctx, machine, consts, engine=engine)
        cost = offload_cost(arch, fmt, kv_bits, placement, machine, prompt_tokens, consts, decode_context_tokens, engine=engine)
        placement, cost, ubatch = larger_ubatch(
            arch, fmt, kv_bits, machine, prompt_tokens, consts, (placement, cost), decode_context_tokens, engine
        )
    else:  # the choice placed it at its -ub already (review69 item 4)
        placement, cost, ubatch = placed
    # the steps of the placement run, at its -ub (newuser85: the -ub 512 one's 23 expert layers beside -ot's 24)
    decisions += list(placement.steps)
    if ubatch != consts.offload_ubatch_tokens:
        base = place(arch, fmt, kv_bits, ctx, machine, consts, engine=engine)  # at llama.cpp's -ub 512
        trade = None
        if base.layer_devices != placement.layer_devices:  # the trade said (review70 item 4)
            trade = (
                base,
                offload_cost(arch, fmt, kv_bits, base, machine, prompt_tokens, consts, decode_context_tokens, engine=engine),
            )
        answer = 2 * max(0, (decode_context_tokens or prompt_tokens) - prompt_tokens)  # as larger_ubatch weighs it
        decisions.append(ubatch_decision(ubatch, engine, (placement, cost), trade, answer))
    alternative, faster, alternative_bytes, alternative_speed = None, [], 0, 0.0
    if placement.offloaded:
        # GGUF types alone: llama.cpp loads no AWQ / GPTQ / FP8 checkpoint (newuser101 item 1: int4 was advised)
        others = sorted(
            (alt for alt in alternatives if alt.gguf and alt.name not in {f.name for f in formats}),
            key=lambda f: -size_weights(arch, f).total_bytes,
        )
        fitting = next((alt for alt in others if fits_on_gpus(arch, alt, kv_bits, ctx, machine, consts)), None)
        if fitting is not None:
            alternative, alternative_bytes = fitting.name, size_weights(arch, fitting).total_bytes
            whole = place(arch, fitting, kv_bits, ctx, machine, consts, engine=engine)
            alternative_speed = offload_cost(
                arch, fitting, kv_bits, whole, machine, prompt_tokens, consts, decode_context_tokens, engine=engine
            ).decode_tokens_per_s
    if placement.offloaded and alternative is None:
        # llama.cpp is what runs a model split over VRAM, RAM and NVMe: its GGUF types, smaller than this one
        here = size_weights(arch, fmt).total_bytes
        for alt in (alt for alt in others if alt.gguf and size_weights(arch, alt).total_bytes < here):
            try:
                there = place(arch, alt, kv_bits, ctx, machine, consts, engine=engine)
            except InfeasibleError:
                continue
            speed = offload_cost(arch, alt, kv_bits, there, machine, prompt_tokens, consts, decode_context_tokens, engine=engine)
            if speed.decode_tokens_per_s >= FASTER_BY * cost.decode_tokens_per_s:
                faster.append((alt.name, speed.decode_tokens_per_s))
    kv_int8_speed, int8_bits = 0.0, KV_CACHE_BITS["int8"]
    if placement.offloaded and kv_bits > int8_bits and fits_on_gpus(arch, fmt, int8_bits, ctx, machine, consts):
        whole = place(arch, fmt, int8_bits, ctx, machine, consts, engine=engine)
        kv_int8_speed = offload_cost(
            arch, fmt, int8_bits, whole, machine, prompt_tokens, consts, decode_context_tokens, engine=engine
        ).decode_tokens_per_s
    on_host = any(runs_on_host(d) for d in placement.layer_devices)  # their attention grows with the context
    passes = consts._replace(offload_ubatch_tokens=ubatch)
    full = offload_cost(arch, fmt, kv_bits, placement, machine, prompt_tokens, passes, ctx, engine=engine) if on_host else None
    return OffloadPlan(
        placement, cost, fmt, tuple(decisions), alternative, tuple(faster), full, ubatch, engine, alternative_bytes,
        alternative_speed, kv_int8_speed,
    )  # fmt: skip
