"""Every constant of the sizing engine that is not physics: named, documented, sourced, overridable.

A workload overrides any of them under ``constants:``; ``specgen estimate`` under ``--set NAME=VALUE``.
``CONSTANT_DOCS`` holds each one's meaning and source.
"""

from __future__ import annotations

import math

from generator.errors import InputError
from generator.named_tuple import NamedTuple
from generator.units import GB, GIB, MIB

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from typing import Any


class Constants(NamedTuple):
    """Named engine constants; ``CONSTANT_DOCS`` says what each means and where it comes from."""

    # --- inference runtime (vLLM-style memory budget) ---
    gpu_memory_utilization: float = 0.9
    non_torch_bytes: int = 512 * MIB
    nccl_bytes: int = 256 * MIB
    nccl_nvlink_bytes: int = 2 * GIB
    cuda_graph_bytes_per_size: int = 8 * MIB
    sampler_bytes_per_logit: int = 28
    prefill_chunk_tokens: int = 8192
    activation_mlp_copies: int = 3
    activation_hidden_copies: int = 4
    kv_block_tokens: int = 16
    max_num_seqs: int = 256
    safety_margin_fraction: float = 0.05
    moe_gathered_workspace: int = 0
    moe_gathered_exchange: int = 0
    kv_budget_of_free_memory: int = 0
    kv_window_layers_full_context: int = 0

    # --- training ---
    training_overhead_bytes: int = 1 * GIB
    logits_bytes_per_element: int = 11
    training_allocator_slack_logits_fraction: float = 0.5
    zero3_live_layers: int = 2

    # --- performance (roofline) ---
    decode_bandwidth_efficiency: float = 0.7
    prefill_compute_efficiency: float = 0.55
    training_mfu: float = 0.56
    training_gemm_half_hidden: float = 512.0
    training_attention_mfu: float = 0.15
    training_goodput: float = 0.9
    training_tp_exposed_fraction: float = 0.25
    training_pipeline_microbatches: int = 8
    training_pipeline_virtual_stages: int = 8
    nf4_dequant_bandwidth_efficiency: float = 0.5
    eager_forward_kernel_host_s: float = 45e-6
    eager_backward_kernel_host_s: float = 15e-6
    training_masked_attention_rate: float = 0.6
    allreduce_latency_nvlink_s: float = 32e-6
    allreduce_latency_pcie_s: float = 25e-6
    ring_link_step_latency_s: float = 3.4e-6
    ring_net_step_latency_s: float = 14e-6
    tree_net_step_latency_s: float = 28e-6
    decode_step_overhead_s: float = 0.002
    gemm_half_efficiency_tokens: float = 16.0
    grouped_mm_half_tokens: float = 512.0
    fp4_gemm_efficiency_ratio: float = 0.75
    fp8_block_gemm_efficiency_ratio: float = 0.4
    dequant_gemm_efficiency_ratio: float = 0.66
    machete_gemm_efficiency_ratio: float = 1.0
    dequant_expert_gemm_efficiency_ratio: float = 0.35
    decode_overhead_per_sequence_s: float = 2e-5
    expert_popularity_cv: float = 2.17
    host_overlap_fraction: float = 0.45
    max_batch_size: int = 2048
    ttft_p95_factor: float = 2.0

    # --- node assembly ---
    psu_efficiency: float = 0.94
    dimm_power_w: float = 10.0
    nvme_power_w: float = 25.0
    nic_power_w: float = 25.0
    nvswitch_power_w: float = 100.0
    fan_power_fraction: float = 0.10
    host_os_ram_bytes: int = 16 * GIB
    checkpoint_shard_bytes: int = 5 * GB
    dataset_bytes_per_token: int = 4
    checkpoints_kept: int = 2
    amortization_months: int = 36
    cpu_cores_per_gpu: int = 8

    # --- offload to system RAM / NVMe (fixed hardware) ---
    ddr_bandwidth_efficiency: float = 0.95
    cpu_weight_read_ceiling_gb_per_s: float = 300.0
    cpu_expert_call_overhead_s: float = 10e-6
    cpu_attention_gflops_per_s: float = 90.0
    ik_llama_cpp_cpu_attention_gflops_per_s: float = 500.0
    cpu_core_gparams_per_s: float = 20.0
    cpu_core_gparams_per_s_without_vnni: float = 6.0
    offload_backend_switch_s: float = 50e-6
    pcie_efficiency: float = 0.8
    offload_pageable_copy_efficiency: float = 0.6
    pinned_host_ram_share: float = 0.5
    nvme_efficiency: float = 0.8
    nvme_paged_read_efficiency: float = 0.45
    object_storage_download_efficiency: float = 1.0
    offload_ubatch_tokens: int = 512
    offload_min_batch_tokens: int = 32
    runtime_host_bytes: int = 2 * GIB
    interactive_tokens_per_s: float = 10.0

    # --- llama.cpp with the whole model on its GPUs (generator/sizing/llama_cpp_gpu.py) ---
    llama_cpp_gpu_bandwidth_efficiency: float = 0.72
    llama_cpp_gpu_read_ceiling_gb_per_s: float = 1075.0
    llama_cpp_layer_launch_s: float = 84e-6

    # --- llama.cpp's prompt with the whole model on its GPUs (generator/sizing/llama_cpp_prompt.py; acc151) ---
    llama_cpp_prompt_gemm_efficiency: float = 0.54
    llama_cpp_dequant_bandwidth_efficiency: float = 0.35
    llama_cpp_dequant_ceiling_gb_per_s: float = 600.0
    llama_cpp_prompt_layer_s: float = 0.32e-3  # acc204: refitted with llama_cpp_score_bytes_per_element (0.4e-3 before)
    consumer_fp16_accumulate_speedup: float = 2.0
    llama_cpp_mmq_int8_efficiency: float = 0.23

    # --- TensorRT-LLM's gathered MoE exchange under attention DP (performance.py GatheredExchange; acc157) ---
    gathered_exchange_link_share: float = 0.3
    gathered_exchange_latency_s: float = 20e-6

    # --- total cost of ownership of owned servers ---
    energy_usd_per_kwh: float = 0.13
    pue: float = 1.56
    power_utilization: float = 0.6
    colocation_usd_per_kw_month: float = 184.0

    # --- decode attention that reads a KV head once per query head (kv_head_reads.py; acc166) ---
    decode_kv_read_per_query_head: int = 0
    # --- llama.cpp's decode of 16-bit weights on its GPUs: the float mat-vec kernel (llama_cpp_gpu.py; acc165) ---
    llama_cpp_gpu_16bit_bandwidth_efficiency: float = 0.77

    # --- llama.cpp's decode step split over GPUs by layers (llama_cpp_gpu.py layer_split_hops; acc170) ---
    llama_cpp_gpu_hop_s: float = 250e-6
    # --- llama.cpp's decode of K-quant files on RDNA cards (llama_cpp_gpu.py mat_vec_kernel; acc173) ---
    llama_cpp_gpu_rdna_kquant_bandwidth_efficiency: float = 0.47
    # --- a prompt's attention in a kernel that re-reads the KV cache per query block (prompt_attention_kernel.py; acc177) ---
    prompt_attention_query_rows: int = -1  # -1: the engine's kernel (prompt_attention_kernel.ENGINE_KERNEL; fix189)
    prompt_attention_read_share: float = 1.3
    # --- a fixed time per MoE layer per engine step: vLLM's fused-MoE path at decode (performance.py; acc181) ---
    moe_layer_step_s: float = -1.0  # -1: the engine's (moe_layer_step.engine_moe_layer_step_s; fix191)
    vllm_moe_layer_step_s: float = 70e-6
    # --- llama.cpp's decode of MXFP4 matrices on its GPUs: mmvq's byte-gathered 17-byte blocks (llama_cpp_gpu.py; acc187) ---
    llama_cpp_gpu_mxfp4_bandwidth_efficiency: float = 0.41
    # --- a pageable copy to the GPU staged through pinned buffers: passes over host memory a byte (offload.py; acc185) ---
    pageable_copy_host_passes: float = 3.0
    # --- llama.cpp's prompt without flash attention: the score matrix in memory (llama_cpp_prompt.py; acc204) ---
    llama_cpp_score_bytes_per_element: float = 6.0

    def __hash__(self) -> int:
        """Hash of a few fields: the sizing caches hash the constants on every lookup, and all (55 then) took 1 us.

        Equal constants have equal fields, so they hash alike; equality still compares every field.
        """
        return hash((self.gpu_memory_utilization, self.decode_bandwidth_efficiency, self.prefill_compute_efficiency))


#: Constants only a server bought reads: its purchase price spread over the months (``planner.tco``).
BOUGHT_SERVER_CONSTANTS = ("amortization_months",)
#: Constants only a server bought or owned on bare metal reads: its energy and colocation bills (``planner.tco``,
#: ``planner.training_energy``, ``planner.colocation``); a rented server's rate holds both.
OWNED_SERVER_CONSTANTS = ("energy_usd_per_kwh", "pue", "power_utilization", "colocation_usd_per_kw_month")

#: name -> (what it means, where the value comes from)
#: NCCL's latency and bandwidth model, the source of the collective step latencies.
_NCCL_TUNING = "https://github.com/NVIDIA/nccl/blob/b6475625fbcaa2c3c0e50eed2fa1255d7514d4a2/src/graph/tuning.cc"

CONSTANT_DOCS: dict[str, tuple[str, str]] = {
    "gpu_memory_utilization": (
        "Fraction of GPU memory the serving engine may use (weights + activations + KV + graphs).",
        "vLLM EngineArgs default gpu_memory_utilization=0.9 (docs.vllm.ai, engine arguments)",
    ),
    "non_torch_bytes": (
        "CUDA context, cuBLAS/cuDNN workspaces and other memory outside PyTorch's allocator, per GPU.",
        "vLLM memory profiling logs: 0.25-0.35 GiB on RTX 3090/4090, 1.79 GiB on an 80 GB GPU "
        "(vllm issue #10517, #13061, PR #10511); 0.5 GiB is a planning value between them",
    ),
    "nccl_bytes": (
        "Extra non-torch memory per GPU when a serving replica or a training job spans several GPUs without NVLink "
        "peers (PCIe, an NVLink bridge, Infinity Fabric): NCCL communicators and buffers.",
        "SGLang 0.4.3 on 4 x L4 (PCIe, custom all-reduce off): 'Init torch distributed ends. mem usage=0.13 GB' "
        "(https://github.com/didier-durand/llms-in-clouds/blob/b001c8690e894d234cf3a2e2345d259173acf293/docs/sglang.md); "
        "vllm issue #13061: 0.25 GiB non-torch in total at TP=2 on 4090s; a planning value",
    ),
    "nccl_nvlink_bytes": (
        "Extra non-torch memory per GPU when a serving replica's TP group or a training job has NVLink (SXM) peers in "
        "the GPU's node: NCCL communicators and custom all-reduce buffers, replacing nccl_bytes there. Measured on "
        "NVSwitch boards; applied to direct-attached 4-GPU NVLink boards too (generator/sizing/distributed_runtime.py).",
        "SGLang on 8 x H200 (TP8): 'Init torch distributed ends. mem usage=' 1.77-2.01 GB (GiB) per rank "
        "(https://github.com/sgl-project/sglang/pull/11716); vLLM PR #10511 (https://github.com/vllm-project/vllm/pull/10511): "
        "non-torch memory 1.79 -> 3.58 GiB from TP=1 to TP=2 on an 80 GB GPU; 2 GiB, the largest rank "
        "(SGLang sizes every rank by the one with least free memory)",
    ),
    "cuda_graph_bytes_per_size": (
        "Fixed memory of one captured CUDA-graph batch size (beyond the shared pool of the largest batch), per GPU.",
        "vLLM logs 'Profiling CUDA graph memory: PIECEWISE=51 (largest=512), FULL=35 (largest=256)' then 'Estimated "
        "CUDA graph memory: 0.73 GiB total' (vllm PR #39559), 'PIECEWISE=16 (largest=16)' 0.36 GiB (gpustack/runner "
        "PR #251): 8-23 MiB per captured graph; a planning value at the low end (the larger figure is a TP=2 worker)",
    ),
    "sampler_bytes_per_logit": (
        "Bytes per (row x vocab) of vLLM's dummy sampler run: fp32 logits, the sort's values and int64 indices, "
        "softmax, cumulative sum, mask and the scatter back, with the bf16 logits they come from.",
        "vllm/v1/sample/ops/topk_topp_sampler.py (apply_top_k_top_p): 2 + 4 + 4 + 8 + 4 + 1 + 4 = 27, rounded up",
    ),
    "prefill_chunk_tokens": (
        "Tokens processed in one forward pass during the profiling run / chunked prefill (max_num_batched_tokens), "
        "where the engine's own default on the GPU is not known; vLLM's comes from the GPU (8192 on 70 GiB+ "
        "non-A100, else 2048), and setting this constant in a workload sets inference.max_num_batched_tokens.",
        "vLLM V1 OpenAI-server default max_num_batched_tokens=8192 on H100-class GPUs (vllm/engine/arg_utils.py "
        "get_batch_defaults)",
    ),
    "activation_mlp_copies": (
        "Live copies of the MLP intermediate per token at the activation peak (gate, up, act(gate)*up).",
        "SwiGLU forward in vLLM: gate_up output (2 x intermediate) and the SiluAndMul output (1 x)",
    ),
    "activation_hidden_copies": (
        "Live hidden-size tensors per token at the activation peak (residual, norm output, attention output, MLP output).",
        "vLLM decoder layer forward (residual + hidden_states pairs); checked against vLLM's measured "
        "activation peak of 1.26 GiB for Llama-3-8B at 8192 tokens (PR #10511)",
    ),
    "kv_block_tokens": (
        "Tokens per paged KV cache block.",
        "vLLM default block_size=16",
    ),
    "max_num_seqs": (
        "Sequences vLLM's profiling run samples at once (fp32 logits of this many rows are live); plans and estimates "
        "set it to the replica's batch limit (inference.max_num_seqs, else vLLM's default on the GPU).",
        "vLLM EngineArgs.get_batch_defaults: 1024 on GPUs of 70 GiB or more other than A100, else 256 (V0 and early "
        "V1: 256 on every GPU)",
    ),
    "safety_margin_fraction": (
        "Fraction of each GPU's memory a plan keeps free beyond the runtime's own budget. A llama.cpp placement on a "
        "machine of yours does not keep it: it reserves llama.cpp's compute buffer (a logit row for every token of "
        "-ub) and the CUDA context against CUDA's total, whether the model fits whole or not (review80 items 1-2).",
        "planning headroom; the sizing guide's advice to leave a reserve for working data",
    ),
    "moe_gathered_workspace": (
        "1: under attention data parallelism the engine's MoE layer runs every rank's tokens gathered and its "
        "start-up profiling pass (max_num_tokens on every rank) holds the gathered rows' input, output and MoE "
        "workspace before the KV cache is sized (generator/sizing/moe_workspace.py); 0: the engine's start-up pass "
        "is not modelled so (vLLM, SGLang). How the tokens travel is moe_gathered_exchange.",
        "TensorRT-LLM's CutlassFusedMoE sizes its MoE for max_num_tokens x world_size rows under attention DP "
        "(https://github.com/NVIDIA/TensorRT-LLM/blob/000a01de66f0eab4ab05640711f0253f50f5209c/tensorrt_llm/_torch/"
        "modules/fused_moe/fused_moe_cutlass.py) and allocates the op's workspace as a torch tensor "
        "(https://github.com/NVIDIA/TensorRT-LLM/blob/01503f5535c0379da60bfd282d225626813781ab/cpp/tensorrt_llm/thop/"
        "moeOp.cpp); benchmarks/calibration_report.py sets 1 for its rows, the planner's engines keep 0",
    ),
    "moe_gathered_exchange": (
        "How an attention-DP engine's MoE exchanges tokens (generator/sizing/performance.py gathered_exchange): 0 a "
        "top-k all-to-all (each token to its top_k experts' ranks); 1 an all-gather of every rank's quantized tokens "
        "(FP8 1 byte, NVFP4 0.5625, else bf16 2) and a reduce-scatter of the bf16 outputs; 2 the same with the bf16 "
        "hidden states gathered (quantized after).",
        "1: TensorRT-LLM's CutlassFusedMoE (run_post_quant_allgather, https://github.com/NVIDIA/TensorRT-LLM/blob/"
        "000a01de66f0eab4ab05640711f0253f50f5209c/tensorrt_llm/_torch/modules/fused_moe/fused_moe_cutlass.py) and "
        "vLLM's default all2all backend allgather_reducescatter (https://docs.vllm.ai/en/latest/serving/"
        "expert_parallel_deployment/), whose naive DP/EP prepare quantizes a rank's tokens before the all-gather "
        "(_quantize_and_setup_dispatch, https://github.com/vllm-project/vllm/blob/759fe1987bc8212cd59b7d3befe7ff7b92d1dc26/"
        "vllm/model_executor/layers/fused_moe/prepare_finalize/naive_dp_ep.py); 2: SGLang with --enable-dp-attention "
        "all-gathers the hidden states before the MoE (dp_gather_partial, https://github.com/sgl-project/sglang/blob/"
        "2aa2e2d0ffda0a44ed9a022fdd9d5d042f365eee/python/sglang/srt/layers/dp_attention.py); the planner sets these "
        "by engine (generator/planner/inference.py engine_constants), benchmarks/calibration_report.py by row",
    ),
    "gathered_exchange_link_share": (
        "Share of the GPU link's rate the gathered MoE exchange reaches under attention DP (moe_gathered_exchange 1 or 2): "
        "a rank's all-gather of the other ranks' quantized tokens and reduce-scatter of their bf16 outputs, "
        "(ep - 1) x rank tokens x hidden x (1 FP8 / 0.5625 NVFP4 / 2 bf16, + 2) bytes a MoE layer "
        "(generator/sizing/performance.py GatheredExchange).",
        "the collectives as TensorRT-LLM's CutlassFusedMoE runs them under attention DP (run_post_quant_allgather, "
        "https://github.com/NVIDIA/TensorRT-LLM/blob/000a01de66f0eab4ab05640711f0253f50f5209c/tensorrt_llm/_torch/"
        "modules/fused_moe/fused_moe_cutlass.py); 0.30 fitted with gathered_exchange_latency_s across all 42 "
        "throughput groups at once (benchmarks/CALIBRATION.md, acc157 entry of 2026-12-07)",
    ),
    "gathered_exchange_latency_s": (
        "Fixed time of each NCCL call of the gathered MoE exchange: its all-gather of per-rank counts is one broadcast "
        "a rank (ep of them in one group), its reduce-scatter one more, (ep + 1) x this a MoE layer.",
        "TensorRT-LLM's allgather with all_rank_split_size issues one ncclBroadcast a root between ncclGroupStart and "
        "ncclGroupEnd (https://github.com/NVIDIA/TensorRT-LLM/blob/135e595e0189da4848f5a359e7356960cd7197cd/cpp/"
        "tensorrt_llm/thop/allgatherOp.cpp); 20 us fitted with gathered_exchange_link_share (acc157), beside the "
        "25-32 us of the all-reduce latencies",
    ),
    "kv_budget_of_free_memory": (
        "1: the KV cache takes gpu_memory_utilization of the memory left free after the engine's profiling pass "
        "(weights, the pass's activations, CUDA context and communicator buffers), TensorRT-LLM's "
        "free_gpu_memory_fraction; 0: gpu_memory_utilization of the whole GPU is the engine's budget, the KV cache "
        "what is left of it (vLLM's gpu_memory_utilization, SGLang's mem_fraction_static).",
        "TensorRT-LLM KvCacheConfig free_gpu_memory_fraction default 0.9 "
        "(https://nvidia.github.io/TensorRT-LLM/examples/kvcacheconfig.html): the PyTorch executor sizes the pool as "
        "(total - peak memory of the profiling forward, torch and non-torch) x fraction "
        "(cal_max_tokens, https://github.com/NVIDIA/TensorRT-LLM/blob/main/tensorrt_llm/_torch/pyexecutor/_util.py), "
        "the C++ runtime as freeGpuMemoryFraction x (free + pool-free memory) once the engine is loaded "
        "(BaseKVCacheManager::calculateMaxNumBlocks, "
        "https://github.com/NVIDIA/TensorRT-LLM/blob/main/cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp); "
        "trtllm-bench's --kv_cache_free_gpu_mem_fraction default .90 ('The percentage of memory to use for KV Cache "
        "after model load', tensorrt_llm/bench/benchmark/throughput.py); the planner's engines keep 0, "
        "benchmarks/calibration_report.py sets 1 for its TensorRT-LLM rows (acc133; with it the KV-bound multi-GPU "
        "attention-DP rows sit 10-35% over, the memory TensorRT-LLM holds there beyond the model's not modelled: acc130)",
    ),
    "kv_window_layers_full_context": (
        "1: the KV pool holds every sliding-window layer's keys and values for the whole context, as for a full "
        "attention layer (the window only masks the attention); 0: a sliding layer holds its window's blocks "
        "(vLLM's and SGLang's pools, the planner's engines).",
        "TensorRT-LLM's PyTorch KVCacheManager: 'if kv_cache_config.max_attention_window is None: # Use max_seq_len as "
        "default max_attention_window / self.max_attention_window_vec = [max_seq_len]', then "
        "'self.is_vswa = len(set(self.max_attention_window_vec)) > 1' "
        "(https://github.com/NVIDIA/TensorRT-LLM/blob/main/tensorrt_llm/_torch/pyexecutor/resource_manager.py, the "
        "2025 versions), and _util.py takes the variable-window pool only when 'max_attention_window is not None and "
        "len(set(executor_config.kv_cache_config.max_attention_window)) > 1' "
        "(https://github.com/NVIDIA/TensorRT-LLM/blob/main/tensorrt_llm/_torch/pyexecutor/_util.py); gpt-oss's model "
        "code applies its window in the attention call only ('self.sliding_window = pretrained_config.sliding_window if "
        "layer_idx % 2 == 0 else None', "
        "https://github.com/NVIDIA/TensorRT-LLM/blob/main/tensorrt_llm/_torch/models/modeling_gpt_oss.py). "
        "benchmarks/calibration_report.py sets 1 for its TensorRT-LLM rows, none of which sets max_attention_window "
        "(acc131, benchmarks/CALIBRATION.md)",
    ),
    "training_overhead_bytes": (
        "CUDA context, cuBLAS workspaces and allocator fragmentation during training, per GPU.",
        "PyTorch CUDA context 0.3-0.5 GiB plus caching-allocator slack; calibrated against "
        "LLaMA-Factory's measured LoRA/QLoRA rows (shared/reference/calibration.json)",
    ),
    "logits_bytes_per_element": (
        "Bytes per (token x vocab) at the loss peak: bf16 logits, their fp32 upcast and the fp32 log-softmax saved for backward.",
        "transformers ForCausalLMLoss upcasts logits to float32 before cross_entropy (2 + 4 + 4 = 10 at the end of "
        "forward; the fp32 gradient of the log-softmax adds to it in backward); 11 fitted across every fine-tuning "
        "memory group at once with training_allocator_slack_logits_fraction (benchmarks/calibration_report.py "
        "--fit-memory; 12 before the allocator's reserve had a term of its own: CALIBRATION.md, 2026-12-04 H200 entry)",
    ),
    "training_allocator_slack_logits_fraction": (
        "PyTorch's caching allocator's reserve beyond the allocated peak, as a fraction of one micro-batch's fp32 logits.",
        "a step frees its fp32 logits (tokens x vocab x 4 bytes, the largest block it allocates) before its allocated peak, "
        "and the allocator keeps the block reserved where the peak's requests do not fit it: on one H200 the peak reserved "
        "memory of the 18 Trainer runs with checkpointing on exceeded the allocated by 0.65-3.1x that block (median 1.0) "
        "(benchmarks/measurements/h200-finetune-2026-12-04.jsonl); 0.5 fitted across every fine-tuning memory group at "
        "once with logits_bytes_per_element (benchmarks/calibration_report.py --fit-memory)",
    ),
    "zero3_live_layers": (
        "Decoder layers whose full parameters ZeRO-3 / FSDP gathers at once (current + prefetched).",
        "DeepSpeed stage3_prefetch_bucket_size / FSDP forward_prefetch gather the next layer ahead",
    ),
    "decode_bandwidth_efficiency": (
        "Fraction of peak HBM bandwidth reached while streaming weights and KV in decode.",
        "memory-bound GEMV and paged-attention kernels reach 70-85% of peak bandwidth (NVIDIA and vLLM benchmark blogs); "
        "0.7 fitted across all calibration groups at once (benchmarks/calibration_report.py --fit); held there since the "
        "refit entry of 2026-12-03 (benchmarks/CALIBRATION.md): 0.65 scores lower but takes four groups off their target",
    ),
    "prefill_compute_efficiency": (
        "Fraction of dense tensor-core peak reached in prefill GEMMs (model FLOPs utilization).",
        "large-GEMM MFU of 50-65% reported for TensorRT-LLM / vLLM prefill; 0.55 fitted across all calibration groups "
        "at once (benchmarks/calibration_report.py --fit), the non-GEMM work of a forward included",
    ),
    "training_mfu": (
        "Utilization of the dense peak by a training step's large GEMMs (the ceiling the other factors scale down).",
        "fitted across every training calibration group at once (benchmarks/calibration_report.py --fit-training): "
        "llm-foundry's MPT MFU table on H100 (https://github.com/mosaicml/llm-foundry/blob/main/scripts/train/benchmarking/"
        "README.md), Llama 3 Table 4 (https://arxiv.org/abs/2407.21783, 38-43% MFU), model-card GPU-hours",
    ),
    "training_gemm_half_hidden": (
        "Hidden size at which a training step's GEMMs reach half of training_mfu on the reference GPU (H100 SXM; small "
        "models run GEMMs below peak and lose more of the step to memory-bound norms, activations and residuals); "
        "another GPU's is this x its sustained FLOPs per HBM byte over the reference's.",
        "GEMM efficiency falls with the matrix dimension (NVIDIA Matrix Multiplication Background guide, "
        "https://docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication/index.html); "
        "memory-bound operators bound a transformer's training step (Data Movement Is All You Need, "
        "https://arxiv.org/abs/2007.00072); fitted across all gpu-hours calibration rows at once "
        "(benchmarks/calibration_report.py --fit-training)",
    ),
    "training_attention_mfu": (
        "Fraction of the dense peak the attention kernels of a training step reach on Hopper (forward + backward); "
        "other architectures scale it by FlashAttention-2's published share of their peak (training_mfu.py).",
        "FlashAttention-3 paper: FlashAttention-2 reaches about 35% of the H100's peak (https://arxiv.org/abs/2407.08608 "
        "section 1); fitted with the training rows (benchmarks/calibration_report.py --fit-training)",
    ),
    "training_goodput": (
        "Share of a training job's wall-clock spent in training steps "
        "(the rest: restarts after failures, checkpoints, evaluation).",
        "Llama 3 paper: higher than 90% effective training time over a 54-day snapshot of the 405B pretraining "
        "(https://arxiv.org/abs/2407.21783 section 3.3.4)",
    ),
    "nf4_dequant_bandwidth_efficiency": (
        "Fraction of peak HBM bandwidth a QLoRA step reaches while dequantizing its NF4 base to bf16 before each matmul.",
        "bitsandbytes' MatMul4Bit and torchao's LinearNF4 dequantize the whole weight in forward and again for the "
        "input gradient (generator/sizing/nf4_dequant.py); fitted across every training calibration group at once "
        "(benchmarks/calibration_report.py --fit-training)",
    ),
    "eager_forward_kernel_host_s": (
        "CPU seconds eager PyTorch spends per kernel of a training step's forward pass through the layers: Python, "
        "nn.Module calls, PEFT's LoRA layers, the dispatcher, autocast and autograd's recording, the views and reshapes "
        "around each kernel counted with it; a step of eager kernels runs no faster than their launches "
        "(generator/sizing/training_elementwise.py kernels_per_micro_batch).",
        "PyTorch's CPU time for one nn.Linear forward is 13.48 us on an H100 DGX's Xeon 8480C "
        "(https://github.com/NVIDIA/TransformerEngine/issues/2053), a module of one kernel; fitted with "
        "eager_backward_kernel_host_s across every training calibration group at once (benchmarks/calibration_report.py, "
        "the training score; acc111 and fix126 entries of 2026-12-06 in benchmarks/CALIBRATION.md), a micro-batch's forward "
        "launches against its forward's GPU work alone, its backward's against what the forward leaves of both phases' "
        "(one stream synced after the backward: review80 item 8, acc121). The rows that identify it are the HF "
        "Trainer's short steps on one H200: 15 dense rows (14 LoRA, 1 full) at 2,048-4,096 tokens and Qwen3-30B-A3B "
        "LoRA s2048. Scanned jointly with "
        "eager_backward_kernel_host_s, training_masked_attention_rate and grouped_mm_half_tokens once the Gemma / Qwen3 "
        "norms, the loss's logits passes, the masked kernel and the per-phase exposure were all in (session 42 merge, "
        "CALIBRATION.md): argmin 0.3269 at (45, 15 us, 0.6, 512), (40, 20) alike, (65, 5) 0.3283, 0.3573 without launches "
        "before the masked rate; with the Qwen3-30B-A3B rows held out the dense rows alone put it at 65 us (fix126 entry). "
        "13.48 us moves no dense row (no forward's launches outlast its GPU work there), so the published figure is "
        "neither confirmed nor excluded; the fitted figure counts the views, reshapes, dtype checks and hooks dispatched "
        "around each counted kernel",
    ),
    "eager_backward_kernel_host_s": (
        "CPU seconds autograd's engine spends per kernel of a training step's backward pass through eagerly run layers "
        "(C++, no Python: less than a forward kernel's).",
        "fitted with eager_forward_kernel_host_s across every training calibration group at once "
        "(benchmarks/calibration_report.py, the training score; acc111 and fix126 entries of 2026-12-06 in "
        "benchmarks/CALIBRATION.md), a micro-batch's backward launches (a full recompute's forward among them) against "
        "its backward's GPU work and whatever of the forward's its launches left over (one stream, synced once a "
        "micro-batch after the backward: review80 item 8, acc121): 15 us at the joint argmin with "
        "eager_forward_kernel_host_s 45 us (0.3269); the score runs along a valley (40 / 20, 45 / 15, 65 / 0-5 within "
        "0.0014), so the pair is identified, each alone less so. Rescanned under the one-stream form (acc121): no "
        "calibration row moves at 45 / 15 and the argmin and valley stay; only pairs away from the valley (backward "
        "20-40 us with forward 20-45 us) score differently",
    ),
    "training_masked_attention_rate": (
        "The rate of PyTorch SDPA's attention under an explicit mask (a sliding-window layer whose keys reach its "
        "window, under Transformers' sdpa) as a share of the causal flash kernel's, over the whole square it computes.",
        "SDPA runs no flash kernel with an attn_mask: its memory-efficient kernel (or cuDNN's) takes the mask as a bias "
        "read a tile at a time and skips no block; fitted across every training calibration group at once "
        "(benchmarks/calibration_report.py, the training score; acc113 entry of 2026-12-06 in benchmarks/CALIBRATION.md): "
        "specgen's own Mistral-7B-v0.1 (window 4,096) and v0.3 (no window) runs of the same shapes on one H200 differ by "
        "more than the square's FLOPs at the causal rate",
    ),
    "training_tp_exposed_fraction": (
        "Share of a training step's tensor-parallel all-reduce time not overlapped with compute.",
        "Megatron-LM runs TP all-reduces on the critical path unless communication overlap is enabled "
        "(https://arxiv.org/abs/2104.04473 section 3); fitted with the training rows (--fit-training)",
    ),
    "training_pipeline_microbatches": (
        "Micro-batches per optimizer step in a pipeline-parallel training layout (gradient accumulation steps).",
        "the 1F1B bubble is (pp - 1) / (m + pp - 1); Narayanan et al. keep m well above pp "
        "(https://arxiv.org/abs/2104.04473 section 2.2); planning value",
    ),
    "training_pipeline_virtual_stages": (
        "Model chunks per GPU of an interleaved 1F1B pipeline schedule (1: plain 1F1B); the bubble shrinks by this factor.",
        "Narayanan et al., interleaved schedule, bubble (p - 1) / (v m) (https://arxiv.org/abs/2104.04473 section 2.2.2; "
        "Megatron-LM --num-layers-per-virtual-pipeline-stage); fitted with the training rows (--fit-training)",
    ),
    "allreduce_latency_nvlink_s": (
        "Fixed latency of one small all-reduce inside an NVLink / NVSwitch domain.",
        "nccl-tests all_reduce_perf small-message times of 10-30 us on 8-GPU NVSwitch systems "
        "(https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md); 32 us fitted across all calibration "
        "groups at once (benchmarks/calibration_report.py --fit), NCCL's tuning model's 8-GPU ring; held there since the "
        "refit entry of 2026-12-03 (benchmarks/CALIBRATION.md): the fit's score falls on past 64 us by slowing the "
        "over-predicted attention-DP groups while others leave their target",
    ),
    "allreduce_latency_pcie_s": (
        "Fixed latency of one small all-reduce between GPUs over PCIe (no NVLink).",
        "nccl-tests small-message all-reduce of 15-40 us over PCIe switches; planning value",
    ),
    "ring_link_step_latency_s": (
        "Latency of each step of a ring collective between two GPUs of one node over NVLink (a ring spanning nodes "
        "takes one such step per GPU of each further node).",
        f"NCCL's tuning model, hwLat[NVLINK][Ring][Simple] = 3.4 us ({_NCCL_TUNING}); with its Ring/Simple base of 8.4 us, an "
        "8-GPU ring's 7 steps give 32 us, the fitted allreduce_latency_nvlink_s",
    ),
    "ring_net_step_latency_s": (
        "Latency of each step of a ring collective that crosses the network to the next node.",
        f"NCCL's tuning model, hwLat[NET][Ring][Simple] = 14 us ({_NCCL_TUNING}); reduce-scatter and all-gather (ZeRO 2-3, "
        "FSDP) run as rings there, one network step per further node",
    ),
    "tree_net_step_latency_s": (
        "Latency of each network hop of a tree all-reduce across nodes (two per level: reduce up, broadcast down).",
        f"NCCL's tuning model, hwLat[NET][Tree][Simple] = 28 us, 2 x log2(nodes) hops ({_NCCL_TUNING}); NCCL picks the tree "
        "for all-reduces across many nodes (ZeRO 0-1 gradients)",
    ),
    "decode_step_overhead_s": (
        "CPU scheduling, sampling and kernel-launch time of one serving-engine iteration (each pipeline micro-batch is one).",
        "vLLM / TensorRT-LLM step profiles show 1-3 ms outside the model forward; planning value 2 ms, not fitted: the "
        "TensorRT-LLM rows alone prefer 5 ms, which would cap one llama.cpp stream below its measured rate (the "
        "llama-bench row of specgen calibrate, tests/test_calibrate.py); see benchmarks/CALIBRATION.md",
    ),
    "gemm_half_efficiency_tokens": (
        "Tokens per GEMM at which a matmul reaches half its large-GEMM efficiency (efficiency = peak x t / (t + this)).",
        "tensor-core GEMMs need about 64-128 rows to fill a 128-wide tile (CUTLASS tile shapes; DeepSeek-V3 report on "
        "expert GEMMs at small batch); 16 fitted across all calibration groups at once (benchmarks/calibration_report.py --fit); "
        "held there since the refit entry of 2026-12-03 (benchmarks/CALIBRATION.md): 24 scores lower but takes vLLM's "
        "MI300X MXFP4 rows off their target",
    ),
    "grouped_mm_half_tokens": (
        "Tokens per routed expert at which PyTorch's grouped GEMM (torch._grouped_mm, Transformers 5's grouped_mm "
        "experts under the eager Trainer family) reaches half the rate the step gives a dense GEMM: the routed share "
        "runs at t / (t + this) of it, t the tokens an expert multiplies a micro-batch (generator/sizing/training_moe.py).",
        "CUTLASS's SM90 grouped GEMMs run Qwen3-30B-A3B's up_proj (128 experts, K 2048, N 1536, 512 rows an expert) at "
        "134-161 TFLOPS on an H100 and a loop of cuBLAS calls at 130 (https://github.com/tgale96/grouped_gemm/pull/37), "
        "torch._grouped_mm's whole MoE forward of that model at 2,048 rows an expert at 242 "
        "(https://github.com/ByteDance-Seed/VeOmni/pull/460), against 443 the step gives that model's dense GEMMs there: "
        "at most 900-1,240 and 1,700 tokens, bounds from above, as those timings also hold the host's argument setup "
        "(tgale96's) and the routing and activation (VeOmni's); 512 fitted across every training calibration group at "
        "once (benchmarks/calibration_report.py --fit-training, acc117 entry of 2026-12-06 in benchmarks/CALIBRATION.md), "
        "only the eager frameworks' MoE rows reading it",
    ),
    "fp4_gemm_efficiency_ratio": (
        "Attainable share of the dense FP4 tensor rate a W4A4 GEMM (NVFP4 / MXFP4 compute) reaches beside other "
        "formats' GEMMs, past the GPU's own FP4 ceiling.",
        "W4A4 GEMMs quantize their activations into 16-element blocks with E4M3 scales on the fly (TensorRT-LLM "
        "fp4_quantize before every FP4 GEMM): vLLM's NVFP4 GEMM bench times the quantizing GEMM at 0.78-0.81 of the "
        "pre-quantized one at 4,096-16,384 tokens (N=6144 K=4096, https://github.com/vllm-project/vllm/pull/20646). The "
        "FP4 ceiling itself is the GPU's measured FP4 share where the catalog has one (B200: 0.582 of its peak against FP8's "
        "0.763, https://github.com/deepseek-ai/DeepGEMM/pull/348; GB200 by its B200 sibling), else its FP8 share. 0.75 "
        "fitted across all calibration groups at once with host_overlap_fraction and decode_overhead_per_sequence_s "
        "(acc142 entry of 2026-12-06 in benchmarks/CALIBRATION.md; /work/wt/bugs/acc142/fit_joint.py); 0.65 before, when "
        "FP4 took the FP8 share on every GPU and the ratio also stood in for the B200's lower FP4 ceiling: 0.65 x 0.763 = "
        "0.496 of the B200's FP4 peak, 0.85 x 0.582 = 0.495; 0.8 until the refit entry of 2026-12-03",
    ),
    "fp8_block_gemm_efficiency_ratio": (
        "Attainable share of the dense FP8 tensor rate of a GEMM over block-scaled FP8 weights (128 x 128 scales, "
        "activations per token group of 128) on GPUs whose tensor cores take no block scales (Hopper, Ada, CDNA3).",
        "the scales are applied on the CUDA cores, promoting each 128-deep partial sum (DeepSeek-V3 report "
        "arXiv:2412.19437 section 3.3.2), after a kernel of its own quantizes the activations. Measured on H100 in vLLM "
        "PR #23280 (https://github.com/vllm-project/vllm/pull/23280, DeepSeek-V3 N=2112 K=7168, 128 x 128 blocks): "
        "CUTLASS block FP8 426.6 / 456.9 / 489.7 TFLOP/s at 2,048 / 4,096 / 8,192 rows beside torch bf16 648.2 / 715.8 "
        "/ 666.4 in the same run, 0.64-0.73 of bf16, i.e. 0.37-0.41 of the 1.77x FP8-over-bf16 rate the catalog gives "
        "the H100 (1,402.6 / 794.5 sustained TFLOPS); FBGEMM PR #2546 (https://github.com/pytorch/FBGEMM/pull/2546, "
        "H100 500 W) block GEMMs with their activation scaling at 547.6-762.0 TFLOP/s against 876.7-1,024.1 row-wise. "
        "0.4 searched across all calibration groups at once (0.15-1.0, the other performance constants held; held at "
        "0.4 in benchmarks/calibration_report.py FIT_GRID, CALIBRATION.md acc92 entry of 2026-12-05): the in-sample "
        "score is flat from 0.34 to 0.5, and its only block-FP8 rows, TensorRT-LLM's DeepSeek-R1-0528 DEP8 on H200, go "
        "from +79% at 1k/1k at the FP8 rate to +2%. A share of the kernels vLLM and SGLang run by default (CUTLASS / "
        "Triton block FP8), not of the hardware: DeepGEMM, which fuses the promotion into its main loop, measures near "
        "the FP8 rate (review76 item 2); one share stands for every engine until per-kernel tables exist",
    ),
    "dequant_gemm_efficiency_ratio": (
        "Share of the 16-bit rate a GEMM over dense (or replicated) matrices reaches where vLLM's Marlin kernel "
        "dequantizes weight-only weights inside its main loop (GPTQ / AWQ / compressed-tensors int4 and int8 on Ampere, "
        "Ada and Blackwell; MXFP4 without FP4 tensor cores; NVFP4 on Hopper and FP8 on Ampere, Marlin W4A16 / W8A16), "
        "once compute-bound (large batches, prefill); a memory-bound step still reads the quantized bytes. Hopper's "
        "integer formats run Machete instead (machete_gemm_efficiency_ratio). Matrices a checkpoint keeps at 16 bits "
        "run as plain GEMMs. The routed experts vLLM runs through Marlin's MoE kernel (MXFP4 on Ampere and Ada, whose "
        "mma.sync main loop is the kernel's own) run at this ratio too.",
        "Marlin's FP16xINT4 GEMM holds 141 TFLOP/s from 128 rows on, 0.74 / 0.73 / 0.66 / 0.60 / 0.61 of torch's FP16 "
        "GEMM at 256 / 512 / 1,024 / 2,048 / 4,000 rows on an A100-class GPU (IST-DASLab/marlin bench.py, "
        "https://github.com/vllm-project/vllm/pull/2497); 0.66, their median: derived, not fitted. Past 128 tokens "
        "'weight-only quantization can generally not be faster' (Marlin's author, "
        "https://github.com/IST-DASLab/marlin/issues/21). Out of sample: vLLM's RTN int4 (Marlin on an H100, "
        "https://github.com/vllm-project/vllm/pull/23197 and /pull/26051) measured 2,048 more prompt tokens at BF16's "
        "cost in one build and at about half its rate in the merged one; 0.66 lies between (benchmarks/CALIBRATION.md, "
        "2026-12-03 w4a16b entry)",
    ),
    "machete_gemm_efficiency_ratio": (
        "Share of the 16-bit rate a GEMM over dense (or replicated) matrices reaches on Hopper where vLLM runs integer "
        "weight-only formats (GPTQ / AWQ / compressed-tensors int4 and int8) through its Machete kernel, once "
        "compute-bound; vLLM's choose_mp_linear_kernel tries Machete first and Machete needs compute capability 9.0.",
        "Machete uses Hopper's wgmma instructions, without which mma-based kernels such as Marlin reach 'at best ~75% of "
        "peak' (https://github.com/vllm-project/vllm/pull/7174); integrated for GPTQ and compressed-tensors W4A16 in "
        "https://github.com/vllm-project/vllm/pull/7701; Meta found it 'starts to do quite well for BS=64 and above' with "
        "'similar speedups over bf16' (https://github.com/pytorch/FBGEMM/pull/3259). 1.0, the 16-bit rate: derived, not "
        "fitted, as no calibration row runs Machete (the H100 int4 rows of vLLM's RTN run Marlin)",
    ),
    "dequant_expert_gemm_efficiency_ratio": (
        "Share of the 16-bit rate the routed experts' grouped GEMMs reach where their kernels dequantize the weights "
        "inside the main loop (MXFP4 experts on Hopper and MI300X: OpenAI's Triton matmul_ogs, aiter's W4A16), before "
        "each expert's token-count efficiency (gemm_half_efficiency_tokens); Blackwell's FP4 tensor cores multiply MXFP4 "
        "as stored, and vLLM's Marlin MoE kernel on Ampere and Ada runs at dequant_gemm_efficiency_ratio.",
        "0.35 fitted across all calibration groups at once (0.3 until acc131, when TensorRT-LLM's rows pooled gpt-oss's "
        "sliding layers at the whole context, kv_window_layers_full_context: of 0.30-0.40 scanned, 0.35-0.38 leave 13 "
        "throughput groups out of target and none leaving, 0.35 the lowest mean error; 0.35 x 989 = 346 TFLOP/s on "
        "H100 / H200, about 0.64 of the dense GEMMs' prefill_compute_efficiency): gpt-oss-120b under "
        "TensorRT-LLM on H200 TP1 and H100 DEP4 in sample, vLLM on H100 and MI300X out of sample; below the dense "
        "figure, as each expert's weight tiles are dequantized for the few rows routed to it. The kernels differ widely "
        "at load: FlashInfer's CUTLASS W4A16 MXFP4 MoE served 43% more than Marlin's at 96 sequences on H20 "
        "(https://github.com/lightseekorg/tokenspeed/pull/1664), vLLM's CUTLASS bf16 x mxfp4 MoE on Hopper less than "
        "Triton's (https://github.com/vllm-project/vllm/pull/23696); the H100 DEP4 rows also carry the Hopper "
        "attention-DP gap (H100 FP8 DEP8 over-predicted 50%), which pulls the fit down",
    ),
    "decode_overhead_per_sequence_s": (
        "Per-step engine time for each running sequence (scheduling, sampling, detokenization bookkeeping) on the "
        "reference host (Xeon Platinum 8480C, DGX H100); other hosts scale it by their CPU's measured host time "
        "(cpus.json host_dispatch_us, generator/catalog/host_cpu.py).",
        "grows with the batch in vLLM / TensorRT-LLM PyTorch-backend step profiles; 20 us fitted across all calibration "
        "groups at once with GB200's Grace host scaled by its measured host time (benchmarks/calibration_report.py --fit)",
    ),
    "expert_popularity_cv": (
        "Spread (coefficient of variation) of the routed experts' popularity across experts, which sets how many more "
        "tokens the busiest expert-parallel rank draws than the mean rank (performance.busiest_expert_rank_load), and "
        "which experts the page cache keeps of a model memory-mapped from NVMe: popularity lognormal at this CV, the "
        "most popular share c of the experts serving Phi(Phi^-1(c) + sqrt(ln(1 + CV^2))) of a token's expert reads "
        "(page_cache.expert_cache_hit_rate); both capped at the sqrt(experts / top_k - 1) top-k routing allows.",
        "derived, not fitted to specgen's rows: TensorRT-LLM measured DeepSeek-R1 on 32 GB200 GPUs (EP32, 8 of 256 experts "
        "a rank, 1,024 routed tokens a rank) at an average imbalance ratio (busiest rank / mean - 1, per layer and "
        "iteration) of 1.564 "
        "(https://github.com/NVIDIA/TensorRT-LLM/blob/1d263f15a979ef2902c60de3f6238bcc0952bb29/docs/source/blogs/tech_blog/"
        "blog4_Scaling_Expert_Parallelism_in_TensorRT-LLM.md, 'The effect of EP Load Balancer'; ratio as "
        "examples/ep_load_balancer/report_load_statistics.py computes it); the busiest-rank model reproduces it at "
        "sqrt((1.564 / z_32)^2 - 1/1024) / sqrt(31/256) = 2.17 (z_32 = 2.067, Blom); the same runs' standard deviation "
        "(491.7 of 1,024) alone would give 1.38, but the busiest rank, not the spread, sets the time",
    ),
    "host_overlap_fraction": (
        "Share of the per-sequence host time that runs while the GPUs compute (an overlap scheduler prepares the next "
        "iteration during this one); pipelines (PP > 1) keep it serial.",
        "TensorRT-LLM PyTorch backend: overlap scheduler on by default (disable_overlap_scheduler=False, "
        "https://nvidia.github.io/TensorRT-LLM/torch/features/overlap_scheduler.html), not in the pipeline executor loop; "
        "0.45 fitted across all calibration groups at once with fp4_gemm_efficiency_ratio (benchmarks/calibration_report.py "
        "--fit; 0.55 until the refit entry of 2026-12-03 in benchmarks/CALIBRATION.md; 0 = serial host time, the model "
        "before)",
    ),
    "max_batch_size": (
        "Most sequences a replica decodes at once where the engine has no default of its own here (SGLang, "
        "TensorRT-LLM); vLLM's comes from the GPU (max_num_seqs).",
        "TensorRT-LLM trtllm-bench default max_batch_size=2048 (perf-overview 'max batch size' tuning)",
    ),
    "ttft_p95_factor": (
        "95th-percentile time to first token of a prompt alone over the mean's, an allowance for a prompt-length "
        "spread the workload does not state; the wait for the prompts queued ahead is added to it (an M/D/1 queue on "
        "the replica's prefill time). Not applied where inference.p95_input_tokens states the spread: the prompt mix "
        "and its M/G/1 wait model it (acc122).",
        "planning value for a long-tailed prompt mix; serving benchmarks (vLLM benchmark_serving) report P95/mean TTFT "
        "of 1.5-3 with their queueing in it, which is added here on its own, so the sum is on the safe side",
    ),
    "psu_efficiency": (
        "Power supply efficiency at typical load (wall power = DC load / efficiency).",
        "80 PLUS Platinum: 94% at 50% load; Titanium 96% (80 PLUS program requirements)",
    ),
    "dimm_power_w": (
        "Power of one 64 GiB DDR5 RDIMM under load.",
        "Micron / Samsung DDR5 RDIMM datasheets list 8-12 W per module under load; planning value",
    ),
    "nvme_power_w": (
        "Active power of one enterprise NVMe drive, where the catalog has none.",
        "U.2 Gen4 drives are specified at 20-25 W maximum (Micron 7400 PRO: 22 W, drives.json)",
    ),
    "nic_power_w": (
        "Power of one high-speed NIC port (200-400 Gb/s), where the catalog has none.",
        "ConnectX-7 single-port cards are specified around 20-25 W typical; planning value",
    ),
    "nvswitch_power_w": (
        "Power of one NVSwitch chip on an HGX baseboard (4 on HGX H100, 6 on HGX A100, 2 on HGX B200).",
        "planning value (NVIDIA publishes only system totals); checked against DGX system totals in tests",
    ),
    "fan_power_fraction": (
        "Fans and board losses as a fraction of the component load.",
        "air-cooled GPU servers spend roughly 8-15% of IT load on fans; planning value",
    ),
    "host_os_ram_bytes": (
        "RAM kept for the operating system, agents and page cache floor on every node (and a training job's data "
        "loader workers, pinned transfer buffers and its processes' own resident memory: Python, PyTorch, the CUDA "
        "runtime).",
        "planning value (kubelet + container runtime + monitoring agents + OS)",
    ),
    "checkpoint_shard_bytes": (
        "Largest shard of a sharded safetensors checkpoint: what a LoRA / QLoRA trainer's process holds in host RAM "
        "at once as it loads the model shard by shard (a tensor larger than it is a shard of its own; the whole "
        "checkpoint where smaller).",
        "transformers save_pretrained / huggingface_hub default max_shard_size '5GB' = 5 x 10^9 bytes "
        "(https://huggingface.co/docs/transformers/big_models); low_cpu_mem_usage loading reads a sharded "
        "checkpoint shard by shard (https://huggingface.co/docs/transformers/main_classes/model#large-model-loading)",
    ),
    "dataset_bytes_per_token": (
        "Bytes per token of a tokenized training dataset on disk.",
        "token ids stored as uint32 (vocabularies above 65,536 do not fit uint16)",
    ),
    "checkpoints_kept": (
        "Training checkpoints kept on local NVMe at once.",
        "planning value: the latest and the previous checkpoint",
    ),
    "amortization_months": (
        "Months over which a purchased server's price is spread to compare it with rentals.",
        "a common 3-year depreciation schedule for servers",
    ),
    "cpu_cores_per_gpu": (
        "Physical CPU cores wanted per GPU (tokenization, data loading, the serving engine's scheduler).",
        "NVIDIA DGX H100/H200 pair 112 cores with 8 GPUs (14 per GPU, hardware_facts.json); 8 is a planning minimum",
    ),
    "ddr_bandwidth_efficiency": (
        "Fraction of one socket's theoretical DRAM bandwidth llama.cpp's CPU kernels reach reading offloaded weights on "
        "a machine of few memory channels; many channels are capped by cpu_weight_read_ceiling_gb_per_s.",
        "fitted with cpu_weight_read_ceiling_gb_per_s, cpu_expert_call_overhead_s and cpu_attention_gflops_per_s to "
        "llama.cpp's published CPU decode rows at short and long context (tests/data/calibration.json offload_decode; "
        "benchmarks/CALIBRATION.md, 2026-12-02 first and third entries): dual-channel "
        "desktops reach 79-84% (Mixtral Q8_0, https://github.com/ggml-org/llama.cpp/issues/4716), 8- and 12-channel "
        "EPYC and Xeon 39-57%; measure a machine with 'specgen calibrate'",
    ),
    "cpu_weight_read_ceiling_gb_per_s": (
        "The most weight bytes a second llama.cpp's CPU kernels read on one socket however many channels it has: a CPU "
        "layer's time is its bytes over the DRAM rate plus its bytes over this ceiling.",
        "fitted with ddr_bandwidth_efficiency to the same rows: 12-channel DDR5 servers (460-614 GB/s theoretical) "
        "reached 180-245 GB/s, 2-channel desktops 79-84% of theirs",
    ),
    "cpu_expert_call_overhead_s": (
        "Seconds a token spends on each routed expert the CPU evaluates, beyond reading its weights (thread dispatch "
        "and synchronisation of a small matrix product).",
        "fitted with ddr_bandwidth_efficiency to the same rows: Qwen3-30B-A3B (384 expert calls a token, 768-wide "
        "experts) decodes well below the rate its bytes allow on a 12-channel EPYC",
    ),
    "cpu_attention_gflops_per_s": (
        "Attention FLOPs a second (scores and values over the cached context, counted as in the serving model: MLA in "
        "its absorbed form) that llama.cpp's CPU kernels reach for a layer the CPU runs, with flash attention on, its "
        "default; a token's attention time grows with the context.",
        "fitted with ddr_bandwidth_efficiency to the llama.cpp CPU decode rows, those at 6,000-15,872 tokens of "
        "context among them (tests/data/calibration.json offload_decode; benchmarks/CALIBRATION.md, 2026-12-02 third "
        "entry): between an empty and a long context mainline llama.cpp with flash attention ran it at 88 and 94 "
        "GFLOP/s on the rows' 32-thread Threadripper PRO 5975WX and 44 threads of an EPYC 9B14, and at 87 on a 16-core "
        "Ryzen 9 7950X in a GGUF type specgen does not size (https://github.com/ikawrakow/ik_llama.cpp/pull/332, "
        "https://github.com/ikawrakow/ik_llama.cpp/discussions/357, "
        "https://www.reddit.com/r/LocalLLaMA/comments/1mieqcb/comment/n736v47/): the kernel sets it, not the cores; "
        "194 with flash attention off (the 9B14; the product times that at this rate over the threads flash attention "
        "engages, one a query head, times every thread: generator.sizing.offload.llama_cpp_attention_gflops_per_s, "
        "acc136 entry of 2026-12-06), and ik_llama.cpp 227-447 for GQA models and 856-903 for MLA (its own "
        "rate since the 2026-12-03 ik attention entry: ik_llama_cpp_cpu_attention_gflops_per_s)",
    ),
    "ik_llama_cpp_cpu_attention_gflops_per_s": (
        "Attention FLOPs a second (counted as cpu_attention_gflops_per_s counts them) that ik_llama.cpp's CPU kernels "
        "reach for a layer the CPU runs: they multiply the query heads sharing a KV head together, a matrix product "
        "where mainline's flash attention runs one matrix-vector product a head (https://github.com/ikawrakow/"
        "ik_llama.cpp/pull/207, 'Faster CPU TG for GQA models'; PRs #332 and #351), and MLA's heads share one cached "
        "latent (FlashMLA, https://github.com/ikawrakow/ik_llama.cpp/pull/243).",
        "fitted with the other CPU constants across the offload groups at once, its 14 long-context CPU-only rows among "
        "them (benchmarks/calibration_report.py --fit-offload; benchmarks/CALIBRATION.md, ik attention entry of "
        "2026-12-03): 500, 5.6 times mainline's 90. The rows' added time a token, less the KV bytes read, gives "
        "395-1,131 GFLOP/s for GQA models (Llama-3.1-8B, Qwen3-14B, gpt-oss-20b on a Ryzen 7950X / 9950X and "
        "Threadripper PRO 5975WX / 7965WX; https://github.com/ikawrakow/ik_llama.cpp/pull/332, /pull/602, /pull/757) "
        "and 1,128-1,211 for DeepSeek-V2-Lite's MLA (-mla 3, /pull/410): one rate, not one a model; the MLA rows, "
        "whose 16 heads share a latent, want about 1,000",
    ),
    "cpu_core_gparams_per_s": (
        "Billions of weights a second one core's llama.cpp kernels multiply by a token's activations in decode (a "
        "matrix-vector product; a step of several tokens multiplies each weight once a token): a CPU layer's weight time "
        "is the larger of its bytes over the DRAM rate and its weights over this rate times the cores llama.cpp's "
        "threads run on (Machine.cpu_cores: a hybrid Intel's P-cores, else its physical cores, one thread a core; "
        "SMT siblings and E-cores count nothing, as llama.cpp's default threads leave them idle).",
        "fitted with the other CPU constants across the offload groups at once (benchmarks/calibration_report.py "
        "--fit-offload; benchmarks/CALIBRATION.md, offload entry of 2026-12-03 and its ggufq note): 20, set by "
        "llama.cpp's decode of gpt-oss-120b's experts in RAM on an i5-12600K's 6 P-cores (23.85 tokens/s at DDR5-6000, "
        "https://github.com/carteakey/carteakey.dev/blob/0f6a50ab271526bdef351a6625c892696d7430bb/src/posts/"
        "2025-09-21-optimizing-gpt-oss-120b-local-inference.md) and an i9-14900K's 8 (25.62, "
        "https://www.reddit.com/r/LocalLLaMA/comments/1mke7ef/120b_runs_awesome_on_just_8gb_vram), with the GGUF's Q8_0 "
        "attention on the GPU (24 with the checkpoint's BF16 sizing); the CPU-only rows of 12 cores or more read at "
        "their memory's rate but for ik_llama.cpp's two-socket and Threadripper rows. A lower rate "
        "was not fitted: the 12600K's 9.7 tokens/s that read as a 6-core limit (newuser38 item 2) ran at DDR5-2000, as "
        "its author found later (the post's changelog, 2026-02-15). Both rows are MXFP4 experts: the rate is applied to every "
        "GGUF type unmeasured, and K- and i-quants dequantize more work a weight (an iq2 / iq3 file on few cores is "
        "likely slower than it predicts)",
    ),
    "cpu_core_gparams_per_s_without_vnni": (
        "cpu_core_gparams_per_s for a CPU without VNNI's 8-bit dot product (AVX2 parts: AMD's Zen 2 / Zen 3 EPYC and "
        "Threadripper; AVX-512 parts before it: Intel's Skylake-SP Xeons): llama.cpp's quantized dot products multiply "
        "the weights' 8-bit values by the activations' with one vpdpbusd a 32-pair vector where the CPU has AVX-VNNI or "
        "AVX512-VNNI, else with vpmaddubsw and vpmaddwd (signed pairs take two vpsignb first either way) "
        "(ggml/src/ggml-cpu/arch/x86/quants.c mul_sum_us8_pairs_float / mul_sum_i8_pairs_float, "
        "https://github.com/ggml-org/llama.cpp/blob/master/ggml/src/ggml-cpu/arch/x86/quants.c); the catalog's CPU "
        "record says which (CpuSpec.int8_vnni; a record that does not say is counted at cpu_core_gparams_per_s).",
        "fitted with the other CPU constants across the offload groups at once (benchmarks/calibration_report.py "
        "--fit-offload; benchmarks/CALIBRATION.md, acc116 entry of 2026-12-06): 6, set by the in-sample rows on CPUs "
        "without VNNI, mainline's and ik_llama.cpp's Llama-3.1-8B Q4_0 on a Threadripper PRO 5975WX (Zen 3, 32 cores: "
        "16.96 and 16.54 tokens/s at an empty context, 74 GB/s of its 205, https://github.com/ikawrakow/ik_llama.cpp/pull/332; "
        "+51% / +55% at 20 -> +6% / +9%); the out-of-sample two-socket Xeon Gold 6138 rows (Skylake-SP, 20 threads, "
        "https://github.com/ikawrakow/ik_llama.cpp/discussions/385, whose author saw the memory not saturated) move from "
        "+50% / +78% to -7% / +15%. ik_llama.cpp's DeepSeek-R1 on an EPYC 7773X at 32 threads moves away (+6.6% -> "
        "-23.4%): it decoded 4.81 tokens/s at 24 threads and at 32, memory-bound, which 6 a core at 32 cores does not "
        "reach (ik_llama.cpp's own kernels for Q4_K may be faster on AVX2 than mainline's). 6 against 20 is more than the "
        "instruction count's half: these parts also run slower clocks than the desktops that set 20 (Xeon Gold 6138 "
        "2.0 GHz base, Threadripper PRO 5975WX 3.6, against the i5-12600K's and i9-14900K's 4.9 and 6.0 GHz boost)",
    ),
    "offload_backend_switch_s": (
        "Seconds a decoded token spends at each switch between the GPU and the CPU under llama.cpp's scheduler "
        "(llama.cpp, ik_llama.cpp): the split's activations copied across and its stream synchronised, the CPU's "
        "threads started, and the next GPU split's kernels launched one by one, as CUDA graphs are turned off under "
        "partial offload; two a MoE layer whose routed experts are in RAM (generator.sizing.offload.backend_switches).",
        "held at 50 us in the offload fit (benchmarks/calibration_report.py --fit-offload; benchmarks/CALIBRATION.md, "
        "accoff entry of 2026-12-04): llama.cpp's decode of gpt-oss-120b with the experts of 31 / 36 layers in RAM (62 / "
        "72 switches a token; llama.cpp logs 'graph splits' 4 + 2 x --n-cpu-moe, "
        "https://github.com/nibor1896/Crow/issues/159) at the memory's rated speed leaves 20 us a switch on an "
        "i5-12600K at DDR5-6000 and 48 us on an i9-14900K; the grid's argmin, 150 us, is set by the 12600K's two runs "
        "at DDR5-2000 (XMP off) and takes both of those rows to -16%. The count is llama.cpp's (ggml-backend.cpp "
        "ggml_backend_sched_compute_splits; ggml-cuda.cu turns CUDA graphs off after 4 consecutive updates, and 'with "
        "partial offload CUDA graphs get disabled after just a few splits', "
        "https://github.com/ikawrakow/ik_llama.cpp/pull/1040); the time a switch takes is fitted, not measured",
    ),
    "offload_pageable_copy_efficiency": (
        "Fraction of the pinned copy rate (pcie_efficiency of the host link) that llama.cpp's prompt passes reach "
        "copying the routed experts of RAM layers to the GPU from pageable memory: a memory-mapped model file (its "
        "default, and specgen's command where layers are read from NVMe). With --no-mmap the weights are loaded into "
        "pinned CUDA_Host buffers and copy at the pinned rate.",
        "fitted across the offload groups at once (benchmarks/calibration_report.py --fit-offload; "
        "benchmarks/CALIBRATION.md, offload entry of 2026-12-03): 0.6 over llama.cpp's and ik_llama.cpp's memory-mapped prompt "
        "passes of gpt-oss-120b on an RTX 3090, 4080, 4070 and 5090 (10 rows, tests/data/calibration.json "
        "offload_prefill); CUDA copies pageable memory through pinned staging buffers, a CPU memcpy each; refitted "
        "beside the DRAM bound of that staging (pageable_copy_host_passes, acc185 entry of 2026-12-07): 0.6 stays the "
        "argmin of --fit-offload (score 0.3620 -> 0.3614)",
    ),
    "offload_min_batch_tokens": (
        "Tokens a prompt pass needs before llama.cpp runs the layers held in RAM on the GPU, copying their weights "
        "(or, for a layer whose routed experts alone are in RAM, the experts the pass routes to) over the host link; "
        "a shorter pass runs them on the CPU.",
        "llama.cpp's CUDA backend: ggml_backend_cuda_device_offload_op returns get_op_batch_size(op) >= min_batch_size "
        "with min_batch_size = 32 (ggml/src/ggml-cuda/ggml-cuda.cu; MUL_MAT_ID's batch is its ne[2], the tokens); the "
        "scheduler copies only the experts the pass routes to (ggml/src/ggml-backend.cpp, 'copying only the experts "
        "that are used', https://github.com/ggml-org/llama.cpp/pull/15346)",
    ),
    "pcie_efficiency": (
        "Fraction of the host link's rate (PCIe, or a superchip's NVLink-C2C) reached by pinned host-to-device copies.",
        "PyTorch / NVIDIA bandwidthTest pinned copies reach ~80% of the link (e.g. ~25 of 31.5 GB/s on Gen4 x16); "
        "assumed the same for NVLink-C2C, for which no measured fraction was found",
    ),
    "pinned_host_ram_share": (
        "Share of the machine's RAM above which the pinned buffers llama.cpp's --no-mmap asks for (the weights held in "
        "RAM, one CUDA_Host buffer) are taken not to be granted: cudaMallocHost fails and llama.cpp falls back to an "
        "ordinary pageable CPU buffer, logged at debug level only (ggml-cuda.cu ggml_backend_cuda_host_buffer_type_alloc_"
        "buffer, 'fallback to cpu buffer'; https://github.com/ggml-org/llama.cpp/pull/1233). Above it the prompt's copies "
        "are timed at offload_pageable_copy_efficiency, and the plan warns (pinned-buffers-large). Set 1 where the "
        "load log shows the buffers pinned ('CUDA_Host model buffer size', not 'CPU model buffer size').",
        "estimated, not documented by NVIDIA or llama.cpp: Windows' WDDM grants page-locked memory up to about half "
        "of RAM (13.8 GB of a 32 GB machine measured, https://github.com/FlashML-org/FreeToken/issues/55; 28 GB of a "
        "64 GB one in a bare process and a 52.2 GiB request never granted, "
        "https://github.com/GenerelSchwerz/llama.cpp/pull/84); Linux pins what is free when the model loads, for which "
        "no figure is published. The only published --no-mmap prompt run whose buffers were most of RAM (52 GB of 64, "
        "an i5-12600K, tests/data/calibration.json offload_prefill) ran 3.7 times slower than the pinned rate "
        "predicts (benchmarks/CALIBRATION.md, offload entry of 2026-12-03)",
    ),
    "nvme_efficiency": (
        "Fraction of an NVMe drive's sequential read rate reached reading the model file in order: the cold start, and a "
        "prompt pass paging in whole layers held on NVMe.",
        "planning value; a memory-mapped file read in order reaches most of the drive's sequential rate: 'NVMe reads "
        "appear to be intense (5-6 GiB/s)' while llama.cpp ran the prompt of a 143 GiB memory-mapped Llama 4 Maverick "
        "on 64 GB of RAM (r/LocalLLaMA, 2025-04-13, https://www.reddit.com/r/LocalLLaMA/s/DNJXzOHKJV; mirror read: "
        "https://reddit.wdas.io/r/LocalLLaMA/s/DNJXzOHKJV)",
    ),
    "nvme_paged_read_efficiency": (
        "Fraction of an NVMe drive's sequential read rate a decode step reaches paging in the weights of the "
        "memory-mapped model file that the page cache lacks (generator/sizing/page_cache.py): page faults on the "
        "routed experts a token uses, random reads of the kernel's 128-256 KiB read-around within an expert's "
        "MiB-scale contiguous slice of each tensor, through the page cache's buffered I/O (its page allocation and "
        "reclaim: kswapd), not the drive's queue-deep sequential stream.",
        "fitted to the NVMe group (benchmarks/calibration_report.py --fit-nvme; benchmarks/CALIBRATION.md, nvme entry of "
        "2026-12-03) at expert_popularity_cv 2.17: 0.45, 5.6 GB/s of a Crucial T700's 12.4, over DeepSeek-R1 at 2.5-2.9 bits "
        "on a 9950X with 96 GB of DDR5-6400 under ktransformers (3.2 tokens/s), ik_llama.cpp (about 3) and llama.cpp "
        "CPU-only (2.13); one machine. The source found the page cache, not the drive, the limit: 'no advantage to "
        "using a quad Gen 5 NVMe RAID0 striped array as the bottleneck appears to be Linux Kernel Page Cache buffered "
        "i/o and not raw O_DIRECT disk speeds' (https://github.com/ubergarm/r1-ktransformers-guide), so a faster or "
        "striped drive may not raise it",
    ),
    "object_storage_download_efficiency": (
        "Fraction of a cloud node's network interface rate (the one that reaches object storage: not a GPU NIC) reached "
        "downloading the model's checkpoint from object storage in the node's region (S3, GCS, Blob storage) when a new "
        "node starts to serve (planner.cold_start: model_download_s). At 1 the download time said is a floor.",
        "the interface's full rate, the most the provider allows: 'Within the Region - Traffic can utilize the full "
        "network bandwidth available to the instance' (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/"
        "ec2-instance-network-bandwidth.html); the same page limits one flow to 5 Gbps outside a cluster placement "
        "group, so only a client of many parallel streams nears it (the Run:ai Model Streamer's concurrency, "
        "https://docs.vllm.ai/en/stable/models/extensions/runai_model_streamer/). No published fraction for a "
        "checkpoint's download was found: measure yours and set it; a download from the Hugging Face Hub over the "
        "internet is slower and not what this times",
    ),
    "offload_ubatch_tokens": (
        "Prompt tokens processed per pass (llama.cpp's -ub) when offloaded weights are copied to the GPU for prefill; "
        "a plan on a machine of yours sets a larger -b / -ub where the GPU's free memory holds the larger compute "
        "buffer and it shortens the prompt's time.",
        "llama.cpp default n_ubatch=512",
    ),
    "runtime_host_bytes": (
        "Host RAM the inference process itself needs (runtime, CUDA host allocations, tokenizer).",
        "planning value; llama.cpp / vLLM processes hold 1-3 GiB of host memory besides offloaded weights",
    ),
    "energy_usd_per_kwh": (
        "Electricity price for owned servers, US dollars per kWh at the meter.",
        "US EIA Electric Power Monthly, table 5.6.A "
        "(https://www.eia.gov/electricity/monthly/epm_table_grapher.php?t=epmt_5_6_a): "
        "commercial-sector average retail price about 13 cents/kWh in 2024",
    ),
    "pue": (
        "Power usage effectiveness of the data centre: facility power / IT power (cooling, conversion losses).",
        "Uptime Institute Global Data Center Survey 2024 (https://uptimeinstitute.com/resources/research-and-reports/"
        "uptime-institute-global-data-center-survey-results-2024): industry average PUE 1.56; an owned workstation "
        "(at home or in an office) uses 1.0",
    ),
    "power_utilization": (
        "Average wall power of an owned server as a fraction of its planned (maximum) power, for the energy bill.",
        "stated assumption, no published source found (searched 2026-12-01): GPU servers serving or training run "
        "below their published maximum on average; shown in every plan's cost basis; override with constants.power_utilization",
    ),
    "colocation_usd_per_kw_month": (
        "Colocation rent per kW per month (space, power and cooling capacity; energy billed apart): billed per kW the "
        "servers draw, or, where hardware.rack_circuits gives the contract, per rack at its circuits' usable kW.",
        "CBRE North America Data Center Trends H2 2024 "
        "(https://www.cbre.com/insights/reports/north-america-data-center-trends-h2-2024): "
        "average asking rent $184.06 per kW per month for 250-500 kW; an owned workstation pays none",
    ),
    "interactive_tokens_per_s": (
        "Decode speed below which a single stream feels unusable interactively.",
        "reading speed is ~5-10 tokens/s; planning value",
    ),
    "llama_cpp_gpu_bandwidth_efficiency": (
        "Fraction of a GPU's datasheet memory bandwidth llama.cpp's decode kernels reach reading the weights and KV "
        "cache of layers the GPU holds (up to llama_cpp_gpu_read_ceiling_gb_per_s; generator/sizing/llama_cpp_gpu.py).",
        "fitted at once with llama_cpp_gpu_read_ceiling_gb_per_s and llama_cpp_layer_launch_s to 37 published llama.cpp "
        "runs with the whole model on the GPUs (acc152, benchmarks/CALIBRATION.md entry of 2026-12-07): 20 of Dec 2023 / "
        "May 2024 builds (https://github.com/XiongjieDai/GPU-Benchmarks-on-LLM-Inference, tests/data/llama_cpp_gpu_decode.json) "
        "and 17 of current ones (llama.cpp's CUDA scoreboard https://github.com/ggml-org/llama.cpp/discussions/15013: "
        "Llama 2 7B Q4_0 on 16 catalog cards from the RTX 3060 to the 5090; AMD's MI300X run; "
        "tests/data/llama_cpp_gpu_decode_recent.json): the scoreboard's GDDR cards read 64-80% of their rate, the old "
        "f16 rows 77-81%",
    ),
    "llama_cpp_gpu_read_ceiling_gb_per_s": (
        "The most bytes a second llama.cpp's decode kernels read from one GPU's memory however fast it is: the bytes "
        "its matrix-vector kernels keep in flight over the memory's latency (Little's law), which caps HBM cards.",
        "fitted with llama_cpp_gpu_bandwidth_efficiency (same rows): the A100 80GB and H100 PCIe run Llama 2 70B q4_0 "
        "at about 1.0 TB/s of their 1.9-2.0 (Dec 2023), the RTX 5090 and RTX PRO 6000 Max-Q (1.79 TB/s GDDR7) Llama 2 7B "
        "Q4_0 at 1.0-1.1 TB/s in 2025 builds; AMD's MI300X reads 1.55 TB/s (Llama 3.1 70B Q4_K_M, b6652), which this one "
        "figure puts 30% slow: one AMD row on a catalog card is too few to fit a ceiling of its own",
    ),
    "llama_cpp_layer_launch_s": (
        "Fixed seconds a dense decoder layer (Llama's 24 kernels) takes a decode step under llama.cpp on a GPU whatever it "
        "reads, in today's builds, which run the step as one CUDA / HIP graph: what is left of each kernel's launch and "
        "latency (norms, RoPE, the KV copy, the attention, the activations' quantization); a layer of more kernels (a "
        "MoE layer's routing, shared experts, MLA's latent) takes its kernels' share of it (acc165: "
        "generator/sizing/llama_cpp_gpu.py layer_kernels); the matrix kernels' reads overlap it, so a step takes the "
        "longer of the layers' floor and the GPU's reads.",
        "84 us fitted over every llama.cpp group at once with the kernel count (acc165, benchmarks/CALIBRATION.md entry "
        "of 2026-12-07): Llama 3.2 1B Q4_0 runs 744 tokens/s on an RTX 3090 (84 us a layer, 16 layers), Qwen3-30B-A3B "
        "99-107 us a 30-kernel layer on the 4090 / 5090, DeepSeek-V2-Lite 205 us a 42-kernel one on the 3090 "
        "(https://github.com/ggml-org/llama.cpp/pull/20586, /pull/15631, /pull/21086, /pull/15525; "
        "tests/data/llama_cpp_gpu_quant_moe_recent.json); acc152's 100 us a layer, fitted to Llama 2 7B rows that are "
        "read-bound, bounded it from above only; builds that launch every kernel on its own (before CUDA graphs, "
        "https://github.com/ggml-org/llama.cpp/pull/6766; a V100 before https://github.com/ggml-org/llama.cpp/pull/25749) "
        "took about 240 us a layer (benchmarks/calibration_report.py LAYER_LAUNCH_WITHOUT_GRAPHS_S): set that for one",
    ),
    "llama_cpp_gpu_16bit_bandwidth_efficiency": (
        "Fraction of a GPU's datasheet memory bandwidth llama.cpp's decode kernels reach reading an F16 / BF16 / F32 "
        "file's weights: its CUDA backend multiplies float matrices at batch 1 with mul_mat_vec_f (ggml-cuda/mmvf.cu), "
        "which streams the 16-bit values straight into float dot products, and quantized ones with mul_mat_vec_q "
        "(ggml-cuda/mmvq.cu: the activations quantized to q8_1 first, each block's scales read beside its integer dot "
        "products), whose share is llama_cpp_gpu_bandwidth_efficiency (ggml_cuda_mul_mat's use_mul_mat_vec_f / "
        "use_mul_mat_vec_q, https://github.com/ggml-org/llama.cpp/blob/master/ggml/src/ggml-cuda/ggml-cuda.cu); under "
        "the same llama_cpp_gpu_read_ceiling_gb_per_s (generator/sizing/llama_cpp_gpu.py).",
        "fitted over every llama.cpp group at once (acc165, benchmarks/CALIBRATION.md entry of 2026-12-07): the 16-bit "
        "rows on GDDR cards, 6 F16 ones of Dec 2023 / May 2024 builds (tests/data/llama_cpp_gpu_decode.json, 73-81% of "
        "the rate), Llama 3 8B BF16 on an RTX 4090 (90%) and Llama 3.2 1B all-F32 on an RTX 3090 (86%) in an Aug 2025 "
        "build (https://github.com/ggml-org/llama.cpp/pull/15131, tests/data/llama_cpp_gpu_quant_moe_recent.json), "
        "against 64-80% for the Q4_0 rows; 0.77 is the least summed error of the eight (50.7 points; 0.72: 73.1, "
        "0.78: 51.5, 0.80: 52.8; the HBM cards' and the RTX 5090's 16-bit rows sit at the ceiling)",
    ),
    "llama_cpp_gpu_hop_s": (
        "Fixed seconds a llama.cpp decode step adds at each GPU-to-GPU boundary of a layer split (-sm layer): the "
        "scheduler's split of its own (ggml_backend_sched_compute_splits) copies the hidden state to the next GPU "
        "(cudaMemcpyPeerAsync, staged through the host where the cards have no peer access) and the run's inputs "
        "(positions, mask) to it, and the next GPU's kernels wait on that copy (generator/sizing/llama_cpp_gpu.py).",
        "fitted over the 33 layer-split decode runs of tests/data/llama_cpp_multi_gpu.json that the same table also ran on "
        "one of the cards (https://github.com/XiongjieDai/GPU-Benchmarks-on-LLM-Inference, May 2024 build; 2-8 RTX "
        "3090 / 4090, 4 A6000 / 6000 Ada / A40 / L40S / A100 / H100): the split's tokens/s over the one GPU's, off by "
        "4.8% (median; p90 17.9%) at 0 and 1.8% (p90 9.9%) at 250 us; the single-GPU groups have no boundary "
        "(benchmarks/CALIBRATION.md, acc170 entry of 2026-12-07). No current-build CUDA split checks it",
    ),
    "llama_cpp_gpu_rdna_kquant_bandwidth_efficiency": (
        "Fraction of an RDNA card's datasheet memory bandwidth llama.cpp's HIP decode kernels reach reading a K-quant "
        "file's weights (Q2_K-Q6_K: 256-weight super-blocks whose packed 6-bit sub-block scales and mins each mmvq "
        "thread unpacks beside its integer dot products; ggml-cuda/mmvq.cu on RDNA picks its own parameter table, "
        "MMVQ_PARAMETERS_RDNA2 / RDNA3_0 / RDNA4, where CDNA takes the GCN one): the mat-vec kernel mmvq_k_rdna "
        "(generator/sizing/llama_cpp_gpu.py mat_vec_kernel); a Q4_0 file's share on the same card stays "
        "llama_cpp_gpu_bandwidth_efficiency, under the same llama_cpp_gpu_read_ceiling_gb_per_s.",
        "fitted over every llama.cpp group at once (acc173, benchmarks/CALIBRATION.md entry of 2026-12-07): only the "
        "two RDNA K-quant rows move, Meta-Llama-3-8B Q4_K_M on an RX 7900 XTX at 90.04 tokens/s (tg128, build 5616, "
        "https://github.com/ROCm/ROCm/issues/4868) and 105.75 (tg64, 2026 master, "
        "https://github.com/ggml-org/llama.cpp/pull/26284), 46% and 54% of the card's 960 GB/s where its Q4_0 rows "
        "read 62% (ROCm) and 72% (Vulkan) or more; summed error 15.0 points at 0.44, 15.6 at 0.46, 16.3 at 0.48, "
        "17.0 at 0.50, 67.0 at 0.72: flat from 0.44 to 0.48, 0.47 the least largest error of the two (8.1%). Two "
        "rows of one card: the W7900 shares its die and table, no CDNA or RDNA 4 row checks it",
    ),
    "prompt_attention_query_rows": (
        "Query rows one program of the prompt's attention kernel holds while it streams the KV cache (BLOCK_M of "
        "vLLM's Triton unified attention: 16 where a KV head serves 16 query heads or fewer, the tokens of a block "
        "BLOCK_M // query heads a KV head): each block of prompt tokens reads every key and value up to its position "
        "again, so the kernel's prompt rate is at most 2 x BLOCK_M / 2 bytes = 16 FLOPs a byte of 16-bit cache times "
        "its read rate (generator/sizing/prompt_attention_kernel.py); 0: FlashAttention / FlashInfer, no cap; -1 (the "
        "default): the engine's choice, 16 where vLLM picks that kernel (a sink model before Hopper), else 0.",
        "vllm/attention/ops/triton_unified_attention.py ('BLOCK_M = 16 if num_queries_per_kv <= 16 else "
        "triton.next_power_of_2(num_queries_per_kv)', 'BLOCK_Q = BLOCK_M // num_queries_per_kv', 'num_tiles = "
        "cdiv_fn(max_seq_prefix_len, TILE_SIZE)', https://github.com/vllm-project/vllm); vLLM picks TRITON_ATTN on "
        "CUDA for attention sinks before Hopper (vllm/platforms/cuda.py); a wider BLOCK_M 'leaves the Q@K / P@V dots' "
        "less small: ~2x prefill at BLOCK_M 32 (https://github.com/vllm-project/vllm/pull/47246); a setting of the "
        "row's kernel, not fitted",
    ),
    "moe_layer_step_s": (
        "Fixed time each MoE layer adds to an engine step (decode and the prompt tokens riding along), whatever the "
        "tokens or bytes: the routing, alignment and expert-GEMM kernels of the engine's fused-MoE layer, which at few "
        "tokens run at their latency, not at the weights' read rate; 0: none (the SGLang and TensorRT-LLM rows fit "
        "without it); -1 (the default): the engine's, vLLM's vllm_moe_layer_step_s and 0 for every other engine "
        "(generator/sizing/moe_layer_step.py, which the planner's engine_constants and the estimate share).",
        "0 outside vLLM: SGLang's DeepSeek-R1 rows on B200 / H200 at batch 1-8 fit within 10% without it and fall "
        "13-20% short with 50 us a layer (acc181 entry of 2026-12-07, benchmarks/CALIBRATION.md)",
    ),
    "vllm_moe_layer_step_s": (
        "vLLM's moe_layer_step_s: the time each MoE layer of a vLLM step takes beyond its reads and matmuls "
        "(gpt-oss-20b's 24 layers: 1.7 ms a step, about what its single-stream runs on an H200 and a B200 take "
        "beyond the model's step: 4.5 ms a token on both).",
        "fitted over all calibration groups at once (acc181 entry of 2026-12-07, benchmarks/CALIBRATION.md): mean "
        "(median + p90) over the 50 throughput groups 0.5286 without it, 0.4905 at 60 us, 0.4893 at 70 us (argmin "
        "on a 10 us grid), 0.4894 at 80 us, 0.4908 at 100 us; the vLLM MoE groups it moves: gpt-oss-20b MXFP4 on "
        "H200 / H100 PCIe / B200 (AIMultiple), gpt-oss on H100 / A100 / MI300X, Qwen3-235B FP8 H100, DeepSeek-R1 FP8 "
        "H200, Mixtral BF16 A100",
    ),
    "llama_cpp_gpu_mxfp4_bandwidth_efficiency": (
        "Fraction of a GPU's datasheet memory bandwidth llama.cpp's decode reads MXFP4 matrices at (the routed experts "
        "of a MXFP4_MOE GGUF, gpt-oss's): mmvq's vec_dot_mxfp4_q8_1 gathers each 32-bit word of a 17-byte block "
        "byte by byte (get_int_b1; Q4_0's 18-byte and Q8_0's 34-byte blocks load 16-bit halves, get_int_b2) and maps "
        "its nibbles to int8 through a 16-entry table (__byte_perm) before dp4a; the mat-vec kernel mmvq_mxfp4 "
        "(generator/sizing/llama_cpp_gpu.py), under the same llama_cpp_gpu_read_ceiling_gb_per_s, the file's other "
        "matrices (Q8_0) at llama_cpp_gpu_bandwidth_efficiency.",
        "fitted over every llama.cpp group at once (acc187, benchmarks/CALIBRATION.md entry of 2026-12-07)",
    ),
    "pageable_copy_host_passes": (
        "Passes over host memory a byte of a host-to-GPU copy from pageable memory takes: CUDA stages it through "
        "pinned buffers, a CPU memcpy into one (a read and a write) while the DMA engine reads the one before (a "
        "third). llama.cpp's prompt passes copy memory-mapped experts so (and --no-mmap's where the pinned buffer is "
        "not granted) at the slower of offload_pageable_copy_efficiency of the pinned link and the DRAM's rate "
        "(ddr_bandwidth_efficiency) over these passes.",
        "counted, not fitted: NVIDIA's 'How to Optimize Data Transfers in CUDA C/C++' (the driver copies pageable "
        "data into a pinned host array, then transfers it, "
        "https://developer.nvidia.com/blog/how-optimize-data-transfers-cuda-cc/); "
        "the offload-prefill groups scanned at 2 / 2.5 / 3 / 3.5 / 4 (acc185 entry of 2026-12-07, "
        "benchmarks/CALIBRATION.md): llama.cpp memory-mapped 9.0/35.2, 9.0/34.8, 9.0/34.8, 13.1/34.8, 23.8/34.8; "
        "--no-mmap 104.2/141.5, 82.9/98.9, 67.8/68.6, 56.6/67.0, 48.1/67.0",
    ),
    "prompt_attention_read_share": (
        "Rate at which that kernel streams the KV cache, over the GPU's sustained memory bandwidth (above 1: a block's "
        "tiles re-read by the programs beside it partly hit L2).",
        "anchored on one published run outside the calibration set, not fitted: vLLM PR #20690's H100 baseline, "
        "TRITON_ATTN_VLLM_V1 benchmark_latency Llama-3.1-8B-Instruct, 10,000 input / 4 output tokens, batch 1, avg "
        "latency 0.6648 s (https://github.com/vllm-project/vllm/pull/20690); specgen's latency of that run is 0.7731 s "
        "at 1.0, 0.6916 at 1.2, 0.6603 at 1.3, 0.6101 at 1.5, FlashAttention's rate 0.3322: 1.3. Checked out of "
        "sample on GPUStack's vLLM v0.11.0 gpt-oss-20b / -120b 32,000-token A100 rows (+3.6% / -5.2%; acc177, "
        "benchmarks/CALIBRATION.md entry of 2026-12-07)",
    ),
    "llama_cpp_prompt_gemm_efficiency": (
        "Fraction of a GPU's 16-bit tensor rate llama.cpp's prompt GEMMs reach with every layer on the GPU (cuBLAS "
        "fp16, generator/sizing/llama_cpp_prompt.py).",
        "fitted at once with llama_cpp_prompt_layer_s, llama_cpp_dequant_bandwidth_efficiency and "
        "llama_cpp_dequant_ceiling_gb_per_s to the pp512 of 20 published llama.cpp CUDA runs with the whole model on one "
        "GPU (Llama 2 7B / 70B q4_0 and f16, Llama 3 8B Q4_K_M and F16 on RTX 3090 / 4090 / A6000 / 6000 Ada, A100 "
        "80GB, H100 PCIe; https://github.com/XiongjieDai/GPU-Benchmarks-on-LLM-Inference, "
        "tests/data/llama_cpp_gpu_decode.json; benchmarks/CALIBRATION.md, acc151 entry of 2026-12-07); builds of Dec "
        "2023 / May 2024, before int8 tensor-core MMQ (https://github.com/ggml-org/llama.cpp/pull/7676)",
    ),
    "llama_cpp_dequant_bandwidth_efficiency": (
        "Fraction of a GPU's memory rate llama.cpp's conversion of a quantized file's matrices to fp16 reaches, read "
        "and written once a prompt pass, up to llama_cpp_dequant_ceiling_gb_per_s (generator/sizing/llama_cpp_prompt.py).",
        "fitted with llama_cpp_prompt_gemm_efficiency (same rows): Llama 2 7B q4_0 runs pp512 15-34% below its f16 on "
        "the same card, the conversion's 17 GB a pass on the GDDR cards (0.94-1.0 TB/s) at about the time of the "
        "HBM ones (1.9-2.0 TB/s), where llama_cpp_dequant_ceiling_gb_per_s binds",
    ),
    "llama_cpp_dequant_ceiling_gb_per_s": (
        "The most bytes a second llama.cpp's conversion of quantized matrices to fp16 moves on one GPU however fast its "
        "memory (generator/sizing/llama_cpp_prompt.py).",
        "fitted with llama_cpp_prompt_gemm_efficiency (same rows): q4_0 adds 23-48 ms a 7B pass over f16 on cards of "
        "0.77-2.0 TB/s alike (the 17 GB at 350-740 GB/s, the A100 / H100 PCIe no faster than the GDDR cards)",
    ),
    "llama_cpp_prompt_layer_s": (
        "Fixed seconds each layer takes a prompt pass under current llama.cpp builds on a GPU besides its GEMMs: the "
        "norms, RoPE, the attention's per-head products and softmax, the activations' conversions and their launches; "
        "at the 512-token passes it was fitted on (a pass of other tokens: the line from llama_cpp_layer_launch_s at none "
        "through it, acc180's llama_cpp_prompt.pass_layer_seconds).",
        "fitted at once with llama_cpp_mmq_int8_efficiency over the pp512 of both files' rows (acc156): 0.4 ms on the "
        "2025-26 scoreboard runs (tests/data/llama_cpp_gpu_decode_recent.json, the V100's cuBLAS path at 0.2%); the Dec "
        "2023 / May 2024 builds took 1.7 ms (benchmarks/calibration_report.py PROMPT_LAYER_BEFORE_MMQ_S: Llama 2 7B "
        "f16 pp512 70 ms on an RTX 4090 and an H100 PCIe alike): set that for one; refitted to 0.32 ms by acc204 with "
        "llama_cpp_score_bytes_per_element over every llama.cpp prompt group at once (the -fa 0 pp512 rows' score "
        "traffic, which 0.4 ms held, now timed apart; benchmarks/CALIBRATION.md entry of 2026-12-07, fifty-sixth session)",
    ),
    "llama_cpp_mmq_int8_efficiency": (
        "Fraction of a GPU's dense int8 tensor rate (gpus.json dense_tflops.int8) llama.cpp's int8 MMQ kernels reach "
        "multiplying a quantized file's matrices in a prompt pass, without an fp16 copy (builds since "
        "https://github.com/ggml-org/llama.cpp/pull/7676, June 2024; generator/sizing/llama_cpp_prompt.py).",
        "fitted at once with llama_cpp_prompt_layer_s over the pp512 of tests/data/llama_cpp_gpu_decode.json and of the "
        "15 NVIDIA GDDR scoreboard rows of tests/data/llama_cpp_gpu_decode_recent.json (Llama 2 7B Q4_0, "
        "https://github.com/ggml-org/llama.cpp/discussions/15013): 5.9% / 35.0% median / p90 (benchmarks/CALIBRATION.md, "
        "acc156 entry of 2026-12-07)",
    ),
    "consumer_fp16_accumulate_speedup": (
        "How many times a GeForce card's fp32-accumulate tensor rate (the catalog's 16-bit rate) its fp16-accumulate "
        "one is, which llama.cpp's cuBLAS GEMMs use (CUBLAS_COMPUTE_16F); workstation and data-centre cards run both "
        "at one rate.",
        "NVIDIA Ada whitepaper v2.1 Appendix A (RTX 4090: FP16 tensor 330.3 dense TFLOPS with FP16 accumulate, 165.2 "
        "with FP32; https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf); NVIDIA "
        "GA102 whitepaper (RTX 3090: 142 / 71; "
        "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf); "
        "llama.cpp ggml-cuda.cu ggml_cuda_op_mul_mat_cublas (https://github.com/ggml-org/llama.cpp, cublasGemmEx with "
        "CUBLAS_COMPUTE_16F after to_fp16_cuda)",
    ),
    "decode_kv_read_per_query_head": (
        "1: the decode attention kernel reads a KV head's cache once for each query head sharing it (one thread block "
        "per sequence and query head), so a GQA / MQA model's decode step moves its KV that many times; 0: once per KV "
        "head (XQA, FlashInfer, FlashAttention decode: the planner's engines).",
        "TensorRT-LLM's masked multi-head attention kernel before XQA ('The different kernels assign a threadblock for "
        "B x H pair', 'const unsigned hi_kv{hi / qhead_per_kv}', "
        "https://github.com/NVIDIA/TensorRT-LLM/blob/main/cpp/tensorrt_llm/kernels/decoderMaskedMultiheadAttention/"
        "decoderMaskedMultiheadAttentionTemplate.h); XQA, which reads it once for the group, came with v0.8 ('New "
        "XQA-kernel provides 2.4x more Llama-70B throughput': 1,227 -> 2,941 out tok/s on one H200 at 128/2048, "
        "https://github.com/NVIDIA/TensorRT-LLM/blob/main/docs/source/blogs/XQA-kernel.md). "
        "benchmarks/calibration_report.py sets 1 for the rows whose TensorRT-LLM predates it (acc166)",
    ),
    "llama_cpp_score_bytes_per_element": (
        "Bytes a prompt pass without flash attention moves per attention score element (pass tokens x KV cells x query "
        "heads; generator/sizing/llama_cpp_prompt.py score_elements): the KQ product written, the softmax's read and "
        "write, the KQV product's read, at the decode's read rate (llama_cpp_gpu_bandwidth_efficiency); 0 with flash "
        "attention on (offload_cost's flash_attention: llama.cpp's default -fa auto, on for CUDA / HIP, since "
        "https://github.com/ggml-org/llama.cpp/pull/15434, b6325 of 2025-08-30, and for llama-bench since "
        "https://github.com/ggml-org/llama.cpp/pull/23714, b9437 of 2026-05-31).",
        "fitted over every llama.cpp prompt group at once with llama_cpp_prompt_layer_s (acc204, scan 0-16 B x 0.2-0.4 ms "
        "x the old builds' 1.1-1.7 ms, /work/wt/bugs/acc204/fit.py; minimum of the groups' mean median + p90 at 6 B, "
        "0.32 ms, 1.7 ms): below the unfused kernels' count (a 4-byte f32 write and read for KQ, softmax and KQV, about "
        "16-24 B), the L2 holding part of a head's tile; benchmarks/CALIBRATION.md entry of 2026-12-07 (fifty-sixth session)",
    ),
}


def constant_docs() -> dict[str, dict[str, Any]]:
    """Every constant with its default, doc and source (for ``specgen schema`` and SPEC.md)."""
    defaults = Constants._field_defaults
    return {name: {"default": defaults[name], "doc": doc, "source": src} for name, (doc, src) in CONSTANT_DOCS.items()}


#: Allowed range of each constant: (low, low inclusive, high, high inclusive); None is unbounded.
#: Fractions of a peak are in [0.001, 1] (below a thousandth no layout is worth sizing, and the quotients of a smaller
#: divisor overflow); shares of something else in [0, 1); divisors and counts > 0; nothing above 10^12 (watts, bytes,
#: seconds, dollars: fuzz25 M8, 1e308 watts overflowed the sizing to infinity, an error at no field).
MOST_CONSTANT = 1e12
_FRACTION_OF_PEAK = (0.001, True, 1, True)
_SHARE = (0, True, 1, False)
_POSITIVE = (0, False, MOST_CONSTANT, True)
_NON_NEGATIVE = (0, True, MOST_CONSTANT, True)
CONSTANT_BOUNDS: dict[str, tuple[float, bool, float | None, bool]] = {
    **dict.fromkeys(Constants._fields, _NON_NEGATIVE),
    **dict.fromkeys(
        (
            "gpu_memory_utilization",
            "decode_bandwidth_efficiency",
            "fp4_gemm_efficiency_ratio",
            "fp8_block_gemm_efficiency_ratio",
            "dequant_gemm_efficiency_ratio",
            "machete_gemm_efficiency_ratio",
            "dequant_expert_gemm_efficiency_ratio",
            "prefill_compute_efficiency",
            "training_mfu",
            "training_attention_mfu",
            "training_goodput",
            "training_tp_exposed_fraction",
            "nf4_dequant_bandwidth_efficiency",
            "psu_efficiency",
            "ddr_bandwidth_efficiency",
            "pcie_efficiency",
            "offload_pageable_copy_efficiency",
            "pinned_host_ram_share",
            "nvme_efficiency",
            "nvme_paged_read_efficiency",
            "object_storage_download_efficiency",
            "power_utilization",
            "llama_cpp_gpu_bandwidth_efficiency",
        ),
        _FRACTION_OF_PEAK,
    ),
    **dict.fromkeys(("safety_margin_fraction", "fan_power_fraction"), _SHARE),
    **dict.fromkeys(("llama_cpp_prompt_gemm_efficiency", "llama_cpp_dequant_bandwidth_efficiency"), _FRACTION_OF_PEAK),
    "llama_cpp_dequant_ceiling_gb_per_s": _POSITIVE,
    "llama_cpp_prompt_layer_s": (0, True, MOST_CONSTANT, True),
    "llama_cpp_gpu_hop_s": (0, True, MOST_CONSTANT, True),
    "llama_cpp_mmq_int8_efficiency": _FRACTION_OF_PEAK,
    "llama_cpp_gpu_16bit_bandwidth_efficiency": _FRACTION_OF_PEAK,
    "llama_cpp_gpu_rdna_kquant_bandwidth_efficiency": _FRACTION_OF_PEAK,
    "llama_cpp_gpu_mxfp4_bandwidth_efficiency": _FRACTION_OF_PEAK,
    "consumer_fp16_accumulate_speedup": (1, True, MOST_CONSTANT, True),
    "host_overlap_fraction": (0, True, 1, True),
    "moe_gathered_workspace": (0, True, 1, True),
    "moe_gathered_exchange": (0, True, 2, True),
    "kv_budget_of_free_memory": (0, True, 1, True),
    "decode_kv_read_per_query_head": (0, True, 1, True),
    "prompt_attention_query_rows": (-1, True, 1024, True),  # -1: the engine's choice
    "prompt_attention_read_share": (0, False, 10, True),
    "pageable_copy_host_passes": (0, False, 10, True),
    **dict.fromkeys(("moe_layer_step_s", "vllm_moe_layer_step_s"), (0, True, 0.01, True)),
    "gathered_exchange_link_share": _FRACTION_OF_PEAK,
    "gathered_exchange_latency_s": _NON_NEGATIVE,
    "kv_window_layers_full_context": (0, True, 1, True),
    "pue": (1, True, MOST_CONSTANT, True),
    # a 95th percentile is at least the mean; a GEMM reaches half its rate at one token or more
    **dict.fromkeys(("ttft_p95_factor", "gemm_half_efficiency_tokens"), (1, True, MOST_CONSTANT, True)),
    # a grouped GEMM's half point: 0 runs it at the dense GEMMs' rate
    "grouped_mm_half_tokens": (0, True, MOST_CONSTANT, True),
    # the engine settings these fill are bounded as the workload's own fields (inference.max_num_batched_tokens,
    # inference.max_num_seqs), so a constant renders nothing a field would refuse
    "prefill_chunk_tokens": (0, False, 16777216, True),
    **dict.fromkeys(("max_num_seqs", "max_batch_size"), (0, False, 65536, True)),
    **dict.fromkeys(
        (
            "kv_block_tokens",
            "zero3_live_layers",
            "training_pipeline_microbatches",
            "training_pipeline_virtual_stages",
            "checkpoints_kept",
            "amortization_months",
            "offload_ubatch_tokens",
            # rates: zero would divide (review 15 item 8)
            "cpu_weight_read_ceiling_gb_per_s",
            "llama_cpp_gpu_read_ceiling_gb_per_s",
            "cpu_attention_gflops_per_s",
            "ik_llama_cpp_cpu_attention_gflops_per_s",
            "cpu_core_gparams_per_s",
            "cpu_core_gparams_per_s_without_vnni",
            "offload_min_batch_tokens",
        ),
        _POSITIVE,
    ),
    "llama_cpp_score_bytes_per_element": (0, True, 64, True),
}


def _bound_text(bound: float) -> str:
    return f"{int(bound):,}" if float(bound).is_integer() else f"{bound:g}"


#: Constants whose value outside ``CONSTANT_BOUNDS`` leaves the setting to the engine (the default; fix191).
ENGINE_CHOICES: dict[str, float] = {"moe_layer_step_s": -1.0}


def _range_text(bounds: tuple[float, bool, float | None, bool]) -> str:
    low, low_in, high, high_in = bounds
    if high is None:
        return f"{'>=' if low_in else '>'} {_bound_text(low)}"
    return f"in {'[' if low_in else '('}{_bound_text(low)}, {_bound_text(high)}{']' if high_in else ')'}"


def _shown(value: object) -> str:
    """A given value as an error quotes it: its repr, cut to 40 characters (a number may have hundreds of digits)."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:40]}... ({len(text)} characters)"


def with_overrides(overrides: dict[str, Any], base: Constants | None = None) -> Constants:
    """A copy of ``base`` with named constants replaced; unknown names, bad types and out-of-range values raise.

    Every value must be a finite number within ``CONSTANT_BOUNDS`` (the message names the range).
    """
    base = base or Constants()
    defaults = Constants._field_defaults
    clean: dict[str, Any] = {}
    for name, given in overrides.items():
        value = given
        if name not in defaults:
            raise InputError(f"unknown constant '{name}'; known: {', '.join(sorted(defaults))}")
        kind = type(defaults[name])
        what = "an integer" if kind is int else "a number"
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(f"constant '{name}' must be {what}, got {_shown(value)}")
        bounds = CONSTANT_BOUNDS[name]
        if not math.isfinite(value):
            raise InputError(f"constant '{name}' must be a finite number {_range_text(bounds)}, got {_shown(value)}")
        if kind is int and isinstance(value, float):
            if not value.is_integer():
                raise InputError(f"constant '{name}' must be {what}, got {_shown(value)}")
            value = int(value)
        low, low_in, high, high_in = bounds
        choice = ENGINE_CHOICES.get(name)
        if value != choice and (
            (value < low or (value == low and not low_in))
            or (high is not None and (value > high or (value == high and not high_in)))
        ):
            either = "" if choice is None else f" or {_bound_text(choice)} (the engine's)"
            raise InputError(f"constant '{name}' must be {_range_text(bounds)}{either}, got {_shown(value)}")
        clean[name] = kind(value)
    return base._replace(**clean)
