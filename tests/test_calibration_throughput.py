"""Throughput against the public calibration rows, by group: the issue's targets where they hold, pinned figures elsewhere.

Issue 9's target is a median |error| of at most 15% and a p90 of at most 40% in every throughput group.
Groups that meet it are held to it; groups that do not (see benchmarks/CALIBRATION.md for why) are
pinned at today's figures, so a change that makes any group worse fails here. The rows, their sources
and the per-group report are in ``benchmarks/calibration_report.py``; the constants are fitted across
all in-sample groups at once (``--fit``), never per group.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.calculator.estimate import EstimateRequest, estimate
from generator.sizing.constants import Constants
from generator.sizing.performance import decode_model, prefill_seconds
from tests.conftest import calibration_report as _report
from tests.helpers import check_calibration_groups

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "calibration.json"

TARGET_MEDIAN = 0.15
TARGET_P90 = 0.40

#: group -> (median, p90) |error| today, for groups that miss the target (benchmarks/CALIBRATION.md).
#: vLLM's fused-MoE layers' fixed time a step, which its rows run under (acc181)
VLLM_MOE_LAYER_STEP_S = Constants().vllm_moe_layer_step_s

PINNED: dict[str, tuple[float, float]] = {
    # out of sample (TensorRT-LLM v0.6.1 C++ runtime, Llama-2-7B FP16 on one A100, static batches): 14-25% low even
    # without per-sequence host time (generator/sizing/engine_runtime.py); 20% low since the A100's measured GEMM share
    # over the H100's BF16 one (MAMF 86.9% vs 80.3%) counts (2026-12-02 fifth entry)
    "throughput tensorrt-llm-cpp a100-sxm4-80gb fp16 static batch": (0.2039, 0.2358),
    # out of sample (vLLM v0.11.0 and a 2024 V0 build, SGLang v0.5.5.post1, on NVIDIA; benchmarks/CALIBRATION.md,
    # 2026-12-01 fifth entry): every row over-predicted. The V1/SGLang rows are prefill-bound server runs (2,000-32,000
    # input tokens, 100-200 output) that sustain 28-31% of the BF16 peak where the engine assumes the prefill rate the
    # TensorRT-LLM rows of the same shape reach; block-FP8 checkpoints gain less over BF16 than the FP8 tensor rate;
    # DeepSeek-R1 (MLA, 256 experts, TP8 without EP) is 2.4-2.7x too fast; the V0 row lacks V0's host loop
    # (sixth entry: the same lab's A100 rows of vLLM and trtllm-serve meet the target and its trtllm-serve H100 rows miss
    # by more, so the H100 prefill gap is not vLLM's engine; whether it is the lab's H100 setup or BF16 / block FP8 on
    # Hopper is not established)
    # 2026-12-01 eighth entry: two offline rows of vllm issue #25915 (Qwen3-8B, 1024/2048, v0.8.5 and v0.10.2) joined the
    # BF16 group (-11%, +9%) and two with Qwen3-8B-FP8 the FP8 group (+6%, +16%: its median falls to 16.4%, the lab's
    # Qwen3-235B row keeps its p90); the lab's gpt-oss-120b rows (MXFP4, 32,000/100) are a group of their own
    # 2026-12-04 mi300x entry: vLLM's serial host loop before async scheduling: 59.7 / 68.6 -> 54.1 / 59.5 and
    # 15.1 / 101.9 -> 9.6 / 98.6 (the FP8 group's median now within the target, its p90 the lab's Qwen3-235B row)
    # acc92 entry of 2026-12-05: block-FP8 GEMMs on Hopper at fp8_block_gemm_efficiency_ratio of the FP8 rate (the FP8
    # group's rows are all block-FP8 checkpoints, precision fp8-block): 9.6 / 98.6 -> 13.7 / 30.3, within the target
    # acc101 entry of 2026-12-05: the routed experts' memory-bound kernels (FP8 input quantization, gated activation,
    # top-k sum over every routed pair's hidden-size output) at the stream rate, every GPU of a TP group over all tokens:
    # 54.1 / 59.5 -> 51.1 / 59.5 (the lab's Qwen3-235B-A22B BF16 TP8 row +57.5% -> +40.2%; the dense rows unmoved)
    # acc109 entry of 2026-12-06 (unmoved): the lab's pages' own decode-only steps read its "H100" at 1.1x the lab's A100
    # (test_the_gpustack_h100_decodes_at_about_the_lab_a100s_rate); the V0 row is V0's host loop; per-row research notes
    # acc174 entry of 2026-12-07: the same lab's Qwen3-8B latency page (v0.11.0, ShareGPT, concurrency 4) joins at -6.6%
    # (tests/data/vllm_serving_out_of_sample.json): 51.1 / 59.5 -> 50.9 / 59.5
    # acc182 entry of 2026-12-07: vLLM PR #12093's offline Llama-3.1-8B 2,048 / 128 runs on a Hopper GPU (V1 FA3 / FA2,
    # V0 FA2) join at -9.2% / +1.0% / +4.3%: vLLM's own dense BF16 prompt pass on an H100 meets the model, the lab's
    # does not (no engine change): 50.9 / 59.5 -> 40.2 / 59.5; acc181's fixed time per vLLM MoE layer (70 us) slows
    # the lab's Qwen3-235B-A22B TP8 row, which sets the median of 13 no more: 40.2 / 59.5 -> 26.8 / 59.5
    # acc186 entry of 2026-12-07: the lab's runs end with the tail of their stated 100 / 500 requests (bench_requests,
    # vllm bench serve at request rate inf: the last requests in flight finish at a falling batch, as trtllm-bench's do):
    # 26.8 / 59.5 -> 20.0 / 59.1 (the Qwen3-235B-A22B TP8 row that sets the median +26.8% -> +20.0%)
    # acc190 entry of 2026-12-07: finite_run's tail floors at the last request (a batch of one has none): 20.03 -> 20.09
    # acc203 entry of 2026-12-07: a step that runs a prompt pass takes its own roofline: 20.09 / 59.07 -> 20.09 / 50.44
    "throughput vllm h100-sxm5-80gb bf16": (0.2009, 0.5044),
    # acc174 entry of 2026-12-07 (new, out of sample: AIMultiple's closed-loop gpt-oss-20b runs of August 2025, vLLM
    # version not stated, concurrency 1-16): at concurrency 1 every GPU is 42-67% over (4.5 ms a token on the H200 and
    # the B200 alike: a per-step time the GPU does not set); the B200 runs slower than the H200 at every concurrency
    # (+74% to +129%); the H100 PCIe's 8 / 16 rows fit (+0.2%, +3.1%); no mechanism fitted (CALIBRATION.md)
    # acc181 entry of 2026-12-07: vLLM's fused-MoE layers' fixed time a step (vllm_moe_layer_step_s 70 us, fitted over
    # all groups) takes the H200 group 27.0 / 42.8 -> 10.3 / 14.5 and the H100 PCIe 3.1 / 42.0 -> 10.6 / 15.7 (within
    # the target, unpinned); the B200 79.1 / 129.2 -> 22.4 / 67.5 (c1 +2.9%, c16 +67.5%: its from-source build's MoE
    # runs slower than the H200's as the batch grows, a kernel path not modelled)
    # acc203 entry of 2026-12-07: a step that runs a prompt pass takes its own roofline: 22.39 / 67.50 -> 21.90 / 65.95
    "throughput vllm b200-sxm-180gb mxfp4": (0.219, 0.6595),
    # acc174: Neural Magic's nm-vllm nightly (V0, spring 2024), Llama 2 7B FP16 on one A10G, 256 / 128: +22% (KV-bound at
    # 33 sequences, memory-bound steps); one row, one measurement posted on many commits
    # acc190 entry of 2026-12-07, each run's stated request count's tail: 22.07 -> 21.11
    # acc203 entry of 2026-12-07: a step that runs a prompt pass takes its own roofline (its 256 tokens with the
    # decodes compute-bound on the A10G's 70 TFLOPS, the steps without one memory-bound): 21.11 -> 1.1, pin dropped
    # 2026-12-03 w4a16 entry: MXFP4 experts dequantized in the GEMMs' main loop took the lab's two 32,000/100 rows from
    # +27% / +55% to -32% / -15% (41.1 / 55.1 -> 23.3 / 31.7); the thirty-second session's four gpt-oss-20b rows
    # (-25% to +7%) bring the H100 group within the target (14.8 / 24.8), so it is no longer pinned.
    # Thirty-second session: the lab's gpt-oss-20b / -120b on one A100, the experts through Marlin's MoE kernel at its
    # own ratio (43.2 / 47.0 -> 14.9 / 48.1): the two 32,000-token rows +48% / +61%, long prompts slower on Ampere
    # fix73 (newuser72 item 3): a prompt's attention now stops at each layer's window (gpt-oss's window-128 layers,
    # half of them, cost ~N x 128 rather than N^2 / 2, as FlashAttention skips the key blocks outside it): the
    # 32,000-token prompts' prefill attention halves, so the two 32,000-token rows go +48% / +61% -> +76% / +100%
    # (14.9 / 48.1 -> 16.9 / 76.3); the mechanism, not a constant: whatever makes long prompts slower on Ampere
    # (Triton attention with sinks, no FlashAttention 3) was hidden by the over-counted window layers
    # acc101 entry of 2026-12-05: the routed experts' memory-bound kernels (FP8 input quantization, gated activation,
    # top-k sum over every routed pair's hidden-size output) at the stream rate, every GPU of a TP group over all tokens:
    # Marlin's MoE runs them (MXFP4 off Marlin fuses them and is unmoved): 16.9 / 76.3 -> 16.2 / 73.3
    # acc177 entry of 2026-12-07: the prompt's attention in vLLM's Triton unified kernel (sinks before Hopper), which
    # re-reads the KV cache every 16 query rows (generator/sizing/prompt_attention_kernel.py): 16.2 / 54.1 -> 6.9 / 19.6,
    # within the target; no longer pinned
    # acc92 entry of 2026-12-05: the SGLang H100 FP8 group (Qwen/Qwen3-14B-FP8, block FP8) 90.6 / 99.7 -> 4.2 / 8.1 with
    # block-FP8 GEMMs on Hopper at fp8_block_gemm_efficiency_ratio; no longer pinned
    # 2026-12-02 sixth entry: a prompt's MLA attention in its materialized form and the matrices every TP rank multiplies
    # whole (q_a_proj, kv_a_proj_with_mqa, routers) brought DeepSeek-R1 from 160.5 / 176.2% to 131.5 / 148.1% and SGLang's
    # lab rows from +156-159% to +130-132%; what remains sits in the band of the same lab's dense block-FP8 H100 rows
    # 2026-12-04 mi300x entry (vLLM's serial host loop): 130.7 / 147.1 -> 127.2 / 142.6
    # acc92 entry of 2026-12-05 (DeepSeek-R1's block-FP8 GEMMs on Hopper at fp8_block_gemm_efficiency_ratio 0.4):
    # 127.2 / 142.6 -> 46.0 / 48.0 (32000/100 +18%, 4000/200 +46%, 2000/100 +48%)
    # acc101 entry of 2026-12-05: the routed experts' memory-bound kernels (FP8 input quantization, gated activation,
    # top-k sum over every routed pair's hidden-size output) at the stream rate, every GPU of a TP group over all tokens:
    # 46.0 / 48.0 -> 36.6 / 37.2 (32000/100 +12%, 4000/200 +37%, 2000/100 +37%)
    # acc109 entry of 2026-12-06 (unmoved): the page's decode-only steps are 1.12x the model's; a slice-width term for
    # TP-sliced experts fits these rows but not TensorRT-LLM's TP8 MoE rows; acc115 entry (unmoved): its prompts pass at
    # 0.81-0.93 of the model's rate (acc109's 0.50-0.68 timed them at the plain FP8 rate, not the checkpoint's block-FP8)
    # acc181 entry of 2026-12-07: vLLM's fused-MoE layers' fixed time a step, 58 layers: 36.6 / 37.2 -> 32.8 / 35.1
    # acc186 entry of 2026-12-07: the runs' stated 100 / 500 requests end with their tail (bench_requests): 32.8 / 35.1
    # -> 30.0 / 32.2 (32000/100 +10.4%, 4000/200 +30.0%, 2000/100 +32.2%)
    # acc203 entry of 2026-12-07: a step that runs a prompt pass takes its own roofline: 30.03 / 32.24 -> 26.28 / 32.27
    "throughput vllm h200-sxm-141gb fp8": (0.2628, 0.3227),
    # eighth entry: DeepSeek-R1 / V3 under SGLang on 8 x H200 (the same lab's v0.5.3 runs, and DataCrunch's v0.4.1 run
    # in the sglang repository), 2.6-3.9x too fast, as vLLM's DeepSeek-R1 rows of the lab: MLA/MoE at TP8 without EP;
    # 2.3-3.9x since the sixth entry of 2026-12-02 (DataCrunch's decode-heavy v0.4.1 row, +285%, sets the p90)
    # 2026-12-03 entry: 7 InferenceX rows (SGLang v0.5.7, DeepSeek-R1-0528, TP8 at client concurrency 4-64) joined: the
    # decode-bound 1k/1k sweep is -25% to +2%, the 8k/1k row -49% (MoE prefill spread over decode steps), the conc-4
    # 1k/1k row of a slower runner +86%; the lab's and DataCrunch's rows unchanged (+130%, +132%, +285%)
    # acc92 entry of 2026-12-05 (block-FP8 GEMMs on Hopper): the lab's rows +129% / +131% -> +46% / +40%, DataCrunch's
    # +277% -> +216% (p90 now the conc-4 slow runner's +86%); the decode-bound InferenceX rows unmoved: 36.6 / 131.1 ->
    # 32.2 / 85.8
    # acc101 entry of 2026-12-05: the routed experts' memory-bound kernels (FP8 input quantization, gated activation,
    # top-k sum over every routed pair's hidden-size output) at the stream rate, every GPU of a TP group over all tokens:
    # 32.2 / 85.8 -> 27.2 / 85.4 (the lab's rows +37% / +30%, DataCrunch's +199%)
    # acc112 entry of 2026-12-06: a prompt's tokens read the routed experts in one pass (SGLang prefills a waiting prompt
    # in a batch of its own), not spread over every decode step: the InferenceX rows at 8 / 16 / 32 / 64 requests
    # -22.6 / -24.9 / -13.4 / +0.9% -> +2.0 / -1.2 / +5.3 / +8.9%, 922/7373 +0.8 -> +7.4%, 7373/922 -48.8 -> +5.6%; the
    # p90 is now the conc-4 1k/1k row of the slower runner, +85.4 -> +131.4% (its mean TPOT 22.73 ms against 10.93 ms at
    # 4 requests of 922/7373 and 12.8 ms at 8 of 922/922: the model now gives it the step its siblings measured):
    # 27.2 / 85.4 -> 8.2 / 131.4. The lab's rows (prefill-bound, +37% / +30%) and DataCrunch's v0.4.1 row (+199%)
    # unmoved: their batches read every expert either way
    # fix126 (review79 item 3): SGLang runs a waiting prompt as a forward of its own (--enable-mixed-chunk off), which
    # reads the weights again and pays an iteration's overhead in the steps that run one: 8 / 16 / 32 / 64 requests
    # +2.0 / -1.2 / +5.3 / +8.9% -> +1.4 / -2.4 / +2.7 / +3.5%, the slow runner's conc-4 row +131.4 -> +130.8%:
    # 8.2 / 131.4 -> 6.4 / 130.8
    # acc160 entry of 2026-12-07: the slow runner's conc-4 row (issue 870, mean TPOT 22.73 ms) replaced by issue 890's
    # rerun of the same cell (9.81 ms, +130.8 -> +1.5%), its conc-8 job beside it (-6.9%): 6.4 / 130.8 -> 5.5 / 35.1,
    # within the target; no longer pinned
    # 2026-12-03 entry: InferenceX, SGLang v0.5.6, DeepSeek-R1-0528 NVFP4 on 8 x B200 (TP8 EP8), concurrency 4-64 at
    # 1k/1k: 4-32 within 4%; conc 64 +56%, a point the source flags for queueing (mean TTFT 5.7 s)
    # acc112 entry of 2026-12-06: a prompt's tokens read the experts in one pass (4-32: +0.9 / -3.6 / -2.9 / -3.0% ->
    # +12.7 / +12.7 / +15.6 / +11.2% alone) and each MoE layer waits for the EP8 rank that touches the most of its 32
    # experts (-> +3.0 / +1.9 / +5.0 / +3.1%); the queued conc-64 point +55.2 -> +57.3%: 3.0 / 55.2 -> 3.1 / 57.3
    # fix126 (review79 item 3): the pass a forward of its own, SGLang's: -> +2.8 / +1.4 / +3.9 / +0.8%, conc 64 +50.5%
    # acc190 entry of 2026-12-07, each run's stated request count's tail: 2.76 / 50.52 -> 1.43 / 45.27
    # fix196 entry of 2026-12-07: nvfp4 of DeepSeek-R1 sized as the rows' NVIDIA FP4-v2 checkpoint holds it (q_a / q_b /
    # kv_a / kv_b in BF16, read each step): conc 4-32 -4.2 / -5.1 / -2.2 / -4.8%, conc 64 +42.1%: 1.43 / 45.27 ->
    # 4.79 / 42.08
    "throughput sglang b200-sxm-180gb nvfp4": (0.0479, 0.4208),
    # acc175 entry of 2026-12-07 (out of sample, new): dstack's DeepSeek-R1 runs of SGLang 0.4.3.post2 (H200, DP
    # attention) and 0.4.2.post4 (MI300X, ROCm), Feb 2025, online (3200/800-6400 at client concurrency 4-128) and
    # offline (32-1024 prompts): over-predicted 1.2-4.6x, a release's kernels (mean TPOT 43.6 / 34.9 ms at 4 requests,
    # where InferenceX's v0.5.7 / v0.5.12 H200 runs measure 9.7-9.8 ms and the model about 10), grouped by release_era
    # acc190 entry of 2026-12-07, each run's stated request count's tail: 121.57 / 215.51 -> 121.56 / 213.15
    "throughput sglang h200-sxm-141gb fp8 SGLang 0.4 (Feb 2025)": (1.2156, 2.1315),
    # acc190 entry of 2026-12-07, each run's stated request count's tail: 168.37 / 258.69 -> 168.39 / 258.74
    # acc195 entry of 2026-12-07, CDNA3's block-FP8 GEMMs scaled on the vector ALUs: 168.39 / 258.74 -> 160.38 / 220.20
    "throughput sglang mi300x-192gb fp8 SGLang 0.4 (Feb 2025)": (1.6038, 2.2020),
    # acc175: InferenceX's SGLang v0.5.9 (1k/1k, 4 / 8 requests) and v0.5.19 (8k/1k, 4-64) DeepSeek-R1 runs on 8 x
    # MI325X, +23% to +142%: mean TPOT 24.0 ms at 4 requests of 1k/1k against 9.7-9.8 ms on H200 (a per-step cost of the
    # ROCm build no modelled mechanism gives; throughput_gaps.json sglang-cdna3-mla-moe warns of it)
    # acc190 entry of 2026-12-07, each run's stated request count's tail: 58.07 / 100.88 -> 52.96 / 96.98
    # acc195 entry of 2026-12-07, CDNA3's block-FP8 GEMMs scaled on the vector ALUs (the 8k/1k 4 / 8-request rows'
    # prompt passes): 52.96 / 96.98 -> 44.70 / 96.98; the 1k/1k rows' per-step cost is left pinned
    "throughput sglang mi325x-256gb fp8": (0.4470, 0.9698),
    # acc155 entry of 2026-12-07: the B200 NVFP4 group (pinned at 10.5 / 41.8 since acc153: its Qwen3-235B-A22B "TP8"
    # cells 17-46% under) back within the target, 8.6 / 25.3: those cells are the DEP8 runs of the page's MoE recipe and
    # now sit in the attention-dp group below; no longer pinned
    # out of sample (TensorRT-LLM v1.2.0rc1 behind trtllm-serve, the same lab's H100, Qwen3-32B block FP8; CALIBRATION.md,
    # 2026-12-01 sixth entry): over-predicted more than the lab's vLLM rows, while the lab's A100 rows of both engines meet
    # the target, so the H100 gap is not vLLM's (block-FP8 GEMMs or that lab's H100 setup); acc92 entry of 2026-12-05:
    # block-FP8 GEMMs on Hopper at fp8_block_gemm_efficiency_ratio took it to 9.0 / 13.4, within the target: not pinned
    # newuser34 item 5 (CALIBRATION.md, 2026-12-03 attention-DP entry): TensorRT-LLM's DEP rows (perf-overview @ 03e27c7d,
    # attention data-parallel, experts over all GPUs), in sample. The busiest expert rank (the imbalance TensorRT-LLM
    # published for DeepSeek-R1 at EP32) took them from 37.4 / 77.4, 29.5 / 50.9, 97.0 / 99.6, 110.1 / 146.2 and
    # 43.5 / 126.0; the 1k/1k rows of DEP4 / DEP8 stay 24-80% over while the same page's TP rows fit; DeepSeek-R1 on H200
    # (+80%) is the Hopper MLA/MoE gap the TP8 rows of other engines show too. gpt-oss on H100 (MXFP4 on Hopper, 85.7 /
    # 116.5) and on H200 TP1 (59.9 / 97.6), and gpt-oss on MI300X under vLLM (61.6 / 108.8), meet the target since the
    # w4a16 entry of 2026-12-03 (experts dequantized in the GEMMs' main loop): 12.8 / 33.3, 13.1 / 35.3, 5.6 / 10.4
    # acc108 entry of 2026-12-06: TensorRT-LLM's MoE under attention DP holds every rank's gathered tokens and its
    # CUTLASS workspace in the start-up profiling pass, before the KV cache is sized (generator/sizing/moe_workspace.py)
    # 21.1 / 44.7 -> 21.0 / 44.7
    # acc133 entry of 2026-12-06: TensorRT-LLM's own KV budget, free_gpu_memory_fraction 0.9 of the memory its profiling
    # pass left free (cal_max_tokens), not vLLM's 0.9 of the GPU less what is held: 21.0 / 44.7 -> 22.1 / 45.2
    # acc138: the B200's measured GEMM rates (stas00/ml-engineering's MAMF: FP8 3,432.5 of 4,500, 0.763 of its peak
    # against the H100's 0.709, which NVFP4 takes, unmeasured): its over-predicted rows faster still, 22.1 / 45.2 ->
    # 25.0 / 48.1 (the GB200's groups 9.5 / 32.2 -> 8.8 / 32.2 and 10.3 / 27.4 -> 9.1 / 26.1)
    # acc142: NVFP4 at the B200's own measured FP4 ceiling (cuBLASLt 5,239 of 9,000: 0.582 of its peak, not FP8's 0.763),
    # the GB200 at its sibling's FP4-over-FP8 share, fp4_gemm_efficiency_ratio refitted 0.65 -> 0.75: 25.0 / 48.1 ->
    # 18.6 / 42.9 (the prompt-heavy rows; the long-output rows, decode-bound, unmoved)
    # acc153 entry of 2026-12-07: trtllm-bench's finite request count (1,000-30,000 a run, perf-overview.md's dataset
    # table): the run's tail at a falling batch, 18.6 / 42.9 -> 12.0 / 35.2: within the target, pin dropped
    # acc155 entry of 2026-12-07: the earlier perf overview's Qwen3-235B-A22B "TP8" cells on 8 x B200 counted here as the
    # DEP8 runs its MoE recipe makes (trtllm-bench --ep, enable_attention_dp: true), +11.6% to +49.4% as Qwen3-235B's
    # DEP4 cells of the later page are (+7.6% to +43.9%): 11 -> 21 rows, 12.0 / 35.2 -> 18.7 / 42.95
    # acc157 entry of 2026-12-07: TensorRT-LLM's MoE exchange under attention DP as CutlassFusedMoE runs it (all-gather of
    # the quantized tokens as one broadcast a rank, reduce-scatter of the bf16 outputs; gathered_exchange_link_share 0.30,
    # gathered_exchange_latency_s 20 us fitted over all throughput groups at once):
    # 18.7 / 43.0 -> 12.0 / 21.5: within the target, pin dropped
    # acc101 entry of 2026-12-05: the routed experts' memory-bound kernels (FP8 input quantization, gated activation,
    # top-k sum over every routed pair's hidden-size output) at the stream rate, every GPU of a TP group over all tokens:
    # H100 DEP 49.9 / 51.4 -> 43.3 / 44.7
    # acc108 entry of 2026-12-06: TensorRT-LLM's MoE under attention DP holds every rank's gathered tokens and its
    # CUTLASS workspace in the start-up profiling pass, before the KV cache is sized (generator/sizing/moe_workspace.py)
    # the 1k/8k row +33.0% -> +9.4%, the batch-bound 1k/1k rows -0.8 points: 43.3 / 44.7 -> 42.5 / 43.9
    # acc133 entry of 2026-12-06: TensorRT-LLM's own KV budget, free_gpu_memory_fraction 0.9 of the memory its profiling
    # pass left free (cal_max_tokens), not vLLM's 0.9 of the GPU less what is held: 42.5 / 43.9 -> 44.9 / 46.2
    # acc153 entry of 2026-12-07: trtllm-bench's finite request count (1,000-30,000 a run, perf-overview.md's dataset
    # table): the run's tail at a falling batch, 44.9 / 46.2 -> 35.7 / 46.2
    # acc157 entry of 2026-12-07: TensorRT-LLM's MoE exchange under attention DP as CutlassFusedMoE runs it (all-gather of
    # the quantized tokens as one broadcast a rank, reduce-scatter of the bf16 outputs; gathered_exchange_link_share 0.30,
    # gathered_exchange_latency_s 20 us fitted over all throughput groups at once):
    # 36.0 / 46.2 -> 7.7 / 14.2: within the target, pin dropped
    # acc92 entry of 2026-12-05: DeepSeek-R1-0528's block-FP8 GEMMs on Hopper at fp8_block_gemm_efficiency_ratio 0.4
    # (the 1k/1k rows +79% -> +2%, 1k/8k +39% -> +35%, 1k/32k +15%): 22.8 / 78.9 -> 22.1 / 23.8, the median the
    # Qwen3-235B-A22B DEP4 rows' (ModelOpt per-tensor FP8, +5% to +24%, unmoved)
    # acc101 entry of 2026-12-05: the routed experts' memory-bound kernels (FP8 input quantization, gated activation,
    # top-k sum over every routed pair's hidden-size output) at the stream rate, every GPU of a TP group over all tokens:
    # 22.1 / 23.8 -> 17.4 / 22.4
    # acc108 entry of 2026-12-06: TensorRT-LLM's MoE under attention DP holds every rank's gathered tokens and its
    # CUTLASS workspace in the start-up profiling pass, before the KV cache is sized (generator/sizing/moe_workspace.py)
    # DeepSeek-R1 DEP8 1k/8k +33.4% -> -3.5%, 1k/32k +14.7% -> -19.4%: 17.4 / 22.4 -> 16.9 / 18.1
    # acc133 entry of 2026-12-06: TensorRT-LLM's own KV budget, free_gpu_memory_fraction 0.9 of the memory its profiling
    # pass left free (cal_max_tokens), not vLLM's 0.9 of the GPU less what is held: DeepSeek-R1 DEP8 1k/8k -3.5% ->
    # +32.1% (the model holds less memory than the engine there, acc130), 16.9 / 18.1 -> 18.2 / 26.5
    # acc153 entry of 2026-12-07: trtllm-bench's finite request count (1,000-30,000 a run, perf-overview.md's dataset
    # table): the run's tail at a falling batch, 18.2 / 26.5 -> 13.0 / 18.7: within the target, pin dropped
    # acc105 entry of 2026-12-06: the perf overview @00f37686's RTX PRO 6000 Qwen3-30B-A3B "TP2 / TP4 / TP8" cells are
    # attention-DP runs (the page's MoE recipe sets enable_attention_dp; the later page's DEP2 / DEP8 cells of the same
    # model and GPU measure the same to 1-2%): relabelled DEP2 / DEP4 / DEP8 (29 rows), they join this group (8 -> 37 rows,
    # 13.0 / 24.4 -> 17.8 / 24.4) and leave the PP1 TP group (49 -> 20 rows, 14.6 / 35.5 -> 12.2 / 22.5). Every DEP8 row
    # is within -6% / +16%; every DEP2 / DEP4 row is 4-35% under, as the later page's own DEP2 rows (-24%, -18%) are
    # acc108 entry of 2026-12-06: TensorRT-LLM's MoE under attention DP holds every rank's gathered tokens and its
    # CUTLASS workspace in the start-up profiling pass, before the KV cache is sized (generator/sizing/moe_workspace.py)
    # the under-predicted DEP2 / DEP4 rows a little further under: 17.75 / 24.37 -> 17.85 / 24.27
    # acc133 entry of 2026-12-06: TensorRT-LLM's own KV budget, free_gpu_memory_fraction 0.9 of the memory its profiling
    # pass left free (cal_max_tokens), not vLLM's 0.9 of the GPU less what is held: 17.85 / 24.27 -> 17.56 / 24.16
    # acc142 / acc147 entries of 2026-12-06 / -07: the B200's, then the RTX PRO 6000's own measured FP4 ceilings (NVFP4
    # 1,629 TFLOPS of 2,000, NVIDIA/cutlass PR #3272): p90 24.16 -> 23.2 -> 22.28, the median held at 17.56
    # acc153 entry of 2026-12-07: trtllm-bench's finite request count (1,000-30,000 a run, perf-overview.md's dataset
    # table): the run's tail at a falling batch: 17.56 / 22.28 -> 16.87 / 24.75
    # acc157 entry of 2026-12-07: TensorRT-LLM's MoE exchange under attention DP as CutlassFusedMoE runs it (all-gather of
    # the quantized tokens as one broadcast a rank, reduce-scatter of the bf16 outputs; gathered_exchange_link_share 0.30,
    # gathered_exchange_latency_s 20 us fitted over all throughput groups at once):
    # 16.9 / 24.8 -> 11.2 / 19.7: within the target, pin dropped
    # in sample, within the target until the acc153 entry of 2026-12-07: trtllm-bench's finite request count (1,000-30,000
    # a run, perf-overview.md's dataset table): the run's tail at a falling batch takes the 1000/1000 runs (3,000 requests,
    # 1,200-3,500 in flight), already under at the steady state, further under (Qwen3-30B-A3B DEP2 -23.3% -> -26.9%,
    # Qwen3-235B-A22B DEP2 -8.1% -> -14.5%): 11.8 / 23.3 -> 15.75 / 23.3
    # acc157 entry of 2026-12-07: TensorRT-LLM's MoE exchange under attention DP as CutlassFusedMoE runs it (all-gather of
    # the quantized tokens as one broadcast a rank, reduce-scatter of the bf16 outputs; gathered_exchange_link_share 0.30,
    # gathered_exchange_latency_s 20 us fitted over all throughput groups at once):
    # 15.8 / 23.3 -> 9.4 / 11.5: within the target, pin dropped
    # 2026-12-03 refit entry: fp4_gemm_efficiency_ratio 0.8 -> 0.65 and host_overlap_fraction 0.55 -> 0.45, refitted
    # across the in-sample groups at once, took B200 DEP4 from 33.6 / 55.5 to 21.1 / 44.7 and brought GB200's DEP rows
    # (18.4 / 38.3 -> 9.2 / 27.1) and the RTX PRO 6000's DEP8 rows (15.4 / 21.7 -> 12.9 / 24.4) into the target; the
    # out-of-sample pins above moved by -3.8 to +0.3 points (median), -3.6 to -0.6 (p90)
    # cal65 entry of 2026-12-05: TensorRT-LLM v0.5.0's H200 launch table (static batches, FP8), out of sample: Llama 2 13B
    # -0.1% to +18%, Llama 2 70B TP1 +16% to +27%, and its TP2 128/2048 batch-512 cell +159%; v0.5 predates the XQA
    # kernel for GQA decode: read once per query head, the 70B rows are -9% to +1% (a what-if, not adopted)
    # acc166 entry of 2026-12-07: landed as a setting of the version (the rows before XQA say "xqa": false; the
    # masked multi-head attention kernel reads a KV head once per query head): 18.0 / 27.2 -> 7.7 / 9.6, pin dropped
    # cal68 entry of 2026-12-05 (thirty-sixth): vLLM on one RTX 4090, the first vLLM rows on an inference /
    # workstation GPU (a blog's closed-loop sweep, Mistral-7B-Instruct-v0.3 BF16, 256 in / ~100 out, concurrency 4-48):
    # -15% at 4, within 7% at 8-16, +33% / +43% at 32 / 48: the measured step grows about 0.35 ms a sequence, the
    # modelled one about 0.13; version, host and async scheduling unstated, one source; no mechanism fitted
    # acc190 entry of 2026-12-07, each run's stated request count's tail: 15.24 / 42.47 -> 15.65 / 35.00
    # acc203 entry of 2026-12-07: a step that runs a prompt pass takes its own roofline (the average step's 171 tokens at
    # 48 sequences sit at the 4090's ridge; a step with a whole 256-token prompt is compute-bound, one without it
    # memory-bound): 15.65 / 35.00 -> 9.97 / 17.59 (-17.6 / -12.1 / -5.7 / +4.7 / +10.0%), pin dropped
}

#: Tolerance on a pinned figure (rounding of the report's four decimals).
SLACK = 0.005


@pytest.fixture(scope="module")
def groups() -> dict[str, dict[str, Any]]:
    summary: dict[str, dict[str, Any]] = _report().evaluate()
    return {name: g for name, g in summary.items() if name.startswith("throughput")}


def test_every_throughput_row_is_answered(groups: dict[str, dict[str, Any]]) -> None:
    assert groups and all(g["failed"] == 0 for g in groups.values())


def test_groups_meet_the_target_or_their_pinned_figures(groups: dict[str, dict[str, Any]]) -> None:
    # a pin for a group that now meets the target should be dropped, so the target guards it
    check_calibration_groups(groups, lambda _: (TARGET_MEDIAN, TARGET_P90), PINNED, SLACK)


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        # TensorRT-LLM keeps the engine's own limits (its KV capacity sized by vLLM's reservation at 256 sequences),
        # a step's tokens its max_num_tokens, its attention-DP MoE's gathered rows held before the KV cache (acc108),
        # a sliding-window layer's KV at the whole context (no max_attention_window set, acc131), and its KV budget
        # free_gpu_memory_fraction of the memory left free after the profiling pass (acc133)
        (
            {"engine": "tensorrt-llm"},
            (
                ("kv_budget_of_free_memory", 1),
                ("kv_window_layers_full_context", 1),
                ("max_batch_size", 2048),
                ("max_num_seqs", 256),
                ("moe_gathered_exchange", 1),
                ("moe_gathered_workspace", 1),
                ("moe_layer_step_s", 0.0),
                ("prefill_chunk_tokens", 8192),
            ),
        ),
        # the C++ runtime: its own max batch, the same pool (max_attention_window_size defaults to max_seq_len) and budget
        # (calculateMaxNumBlocks: freeGpuMemoryFraction of the free memory once the engine is loaded)
        (
            {"engine": "tensorrt-llm-cpp"},
            (
                ("kv_budget_of_free_memory", 1),
                ("kv_window_layers_full_context", 1),
                ("max_batch_size", 2048),
                ("max_num_seqs", 256),
                ("moe_layer_step_s", 0.0),
            ),
        ),
        # vLLM V0's documented max_num_seqs=256 bounds the batch; its host loop runs serially with the GPU
        (
            {"engine": "vllm"},
            (
                ("host_overlap_fraction", 0.0),
                ("max_batch_size", 256),
                ("max_num_seqs", 256),
                ("moe_gathered_exchange", 1),
                ("moe_layer_step_s", VLLM_MOE_LAYER_STEP_S),
            ),
        ),
        # a row of vLLM V1 on an H100-class GPU names that version's default, 1024
        (
            {"engine": "vllm", "max_num_seqs": 1024},
            (
                ("host_overlap_fraction", 0.0),
                ("max_batch_size", 1024),
                ("max_num_seqs", 1024),
                ("moe_gathered_exchange", 1),
                ("moe_layer_step_s", VLLM_MOE_LAYER_STEP_S),
            ),
        ),
        # and a --max-num-batched-tokens the run set becomes the prefill chunk
        (
            {"engine": "vllm", "max_num_seqs": 1024, "max_num_batched_tokens": 16384},
            (
                ("host_overlap_fraction", 0.0),
                ("max_batch_size", 1024),
                ("max_num_seqs", 1024),
                ("moe_gathered_exchange", 1),
                ("moe_layer_step_s", VLLM_MOE_LAYER_STEP_S),
                ("prefill_chunk_tokens", 16384),
            ),
        ),
        # a vLLM build with async scheduling (its default since PR #27614) hides host work as the fitted share says
        (
            {"engine": "vllm", "max_num_seqs": 64, "async_scheduling": True},
            (
                ("max_batch_size", 64),
                ("max_num_seqs", 64),
                ("moe_gathered_exchange", 1),
                ("moe_layer_step_s", VLLM_MOE_LAYER_STEP_S),
            ),
        ),
        # SGLang sizes its running batch from KV memory (at least 2,048): the engine-wide cap; its attention-DP MoE
        # all-gathers the bf16 hidden states (acc164; vLLM its quantized tokens, TensorRT-LLM too)
        (
            {"engine": "sglang"},
            (("max_batch_size", 2048), ("max_num_seqs", 256), ("moe_gathered_exchange", 2), ("moe_layer_step_s", 0.0)),
        ),
        # trtllm-serve states its CLI defaults (BuildConfig max_batch_size=2048, max_num_tokens=8192)
        (
            {"engine": "tensorrt-llm-serve"},
            (
                ("kv_budget_of_free_memory", 1),
                ("kv_window_layers_full_context", 1),
                ("max_batch_size", 2048),
                ("max_num_seqs", 256),
                ("moe_gathered_exchange", 1),
                ("moe_gathered_workspace", 1),
                ("moe_layer_step_s", 0.0),
                ("prefill_chunk_tokens", 8192),
            ),
        ),
        # a vLLM V1 server on an A100 keeps the small defaults: 256 sequences, 2,048-token chunks
        (
            {"engine": "vllm", "max_num_seqs": 256, "max_num_batched_tokens": 2048},
            (
                ("host_overlap_fraction", 0.0),
                ("max_batch_size", 256),
                ("max_num_seqs", 256),
                ("moe_gathered_exchange", 1),
                ("moe_layer_step_s", VLLM_MOE_LAYER_STEP_S),
                ("prefill_chunk_tokens", 2048),
            ),
        ),
    ],
)
def test_a_row_runs_under_its_engine_versions_documented_settings(
    row: dict[str, Any], expected: tuple[tuple[str, float], ...]
) -> None:
    assert _report()._row_constants(row) == expected


def test_sglang_rows_size_their_kv_cache_the_sglang_way() -> None:
    report = _report()
    # the steady-state rows (acc175: an offline row of SGLang 0.4 is one wave, or a queue its KV pool drains; acc186: a
    # row of a stated request count, bench_requests, ends with the queue's tail)
    rows = [
        r
        for r in json.loads(DATA.read_text())["throughput"]
        if r["engine"] == "sglang" and "num_prompts" not in r and "bench_requests" not in r
    ]
    assert rows
    differs = []
    for row in rows:
        base = EstimateRequest(
            constants=report._row_constants(row),  # a concurrency-bound row's batch limit (max_num_seqs), as predicted
            model=row["model"],
            precision=row["precision"],
            kv_precision=row["kv_precision"],
            context_tokens=row["input_tokens"] + row["output_tokens"],
            tp=row["tp"],
            pp=row["pp"],
            gpu=row["gpu"],
            input_tokens=row["input_tokens"],
            output_tokens=row["output_tokens"],
            ep=row.get("ep", 1),
        )
        # at the --mem-fraction-static the row's server states (acc175), else SGLang's default
        sglang_request = base._replace(engine="sglang", mem_fraction_static=row.get("mem_fraction_static"))
        sglang = estimate(sglang_request)["throughput"]["max_output_tokens_per_s"]
        vllm = estimate(base)["throughput"]["max_output_tokens_per_s"]
        assert report.predict_throughput(row) == sglang
        differs.append(sglang != vllm)
    # SGLang's mem_fraction_static leaves a smaller KV cache than vLLM's accounting, so the choice is visible
    assert any(differs)


@pytest.mark.parametrize(
    ("engine", "count"),
    # fifth entry: 11 vLLM and 3 SGLang rows on H100/H200; sixth entry: 5 vLLM rows on A100, 7 trtllm-serve rows; eighth
    # entry: 6 vLLM rows on H100 (gpt-oss-120b, Qwen3-8B), 10 vLLM static-batch rows on A100 (Mixtral), 3 SGLang on H200;
    # 2026-12-03: 12 SGLang rows of InferenceX on H200 / B200 (its 4 vLLM rows are on MI300X, which this count leaves out);
    # w4a16b entry: 16 vLLM static-batch rows on H100 (PR #23197's BF16 and RTN int4, PR #26051's RTN int4);
    # thirty-second session: 12 vLLM rows of the lab's gpt-oss-20b (A100, H100) and gpt-oss-120b (A100);
    # acc160 (2026-12-07): InferenceX's issue 890 rerun adds its conc-8 job on H200 (its conc-4 job replaces a row);
    # acc175: dstack's 21 H200 runs of SGLang 0.4.3.post2, InferenceX's 7 MI325X, 10 H200 (PR 3288), 10 B200 (PR 3363)
    [("vllm", 68), ("sglang", 70), ("tensorrt-llm-serve", 7)],
)
def test_out_of_sample_serving_rows_state_their_version_and_source(engine: str, count: int) -> None:
    report = _report()
    rows = json.loads(DATA.read_text())["throughput"]
    new = [r for r in rows if r["engine"] == engine and r["gpu"] != "mi300x-192gb"]
    assert len(new) == count
    for row in new:
        assert row["version"] and row["source"].startswith("https://") and row["setup"], row
        assert row["engine"] not in report.FIT_ENGINES


def test_trtllm_serve_rows_run_the_in_sample_runtime_and_stay_out_of_the_fit() -> None:
    report = _report()
    rows = [r for r in json.loads(DATA.read_text())["throughput"] if r["engine"] == "tensorrt-llm-serve"]
    assert rows
    for row in rows:
        # the serve defaults equal the engine's own (trtllm-bench) limits and the label resolves to the PyTorch
        # executor's runtime, so a row predicts exactly as the same row labelled tensorrt-llm
        assert report.predict_throughput(row) == report.predict_throughput({**row, "engine": "tensorrt-llm"})
    groups = {f"throughput tensorrt-llm-serve {gpu}" for gpu in ("a100-sxm4-80gb bf16", "h100-sxm5-80gb fp8")}
    assert groups <= set(report.evaluate())
    # --fit selects groups by "throughput <engine> " prefix: the serve groups are not among them
    assert not any(g.startswith(f"throughput {e} ") for g in groups for e in report.FIT_ENGINES)


#: The versions the L40S perf-overview rows state (accnew entry of 2026-12-04).
V012 = "TensorRT-LLM v0.12.0 (trtllm-bench, TensorRT engine)"
V010 = "TensorRT-LLM v0.10.0 (gptManagerBenchmark, TensorRT engine)"


@pytest.mark.parametrize(
    ("group", "version", "tp", "rows", "median", "p90"),
    [
        # accnew entry of 2026-12-04 (CALIBRATION.md): the L40S column of TensorRT-LLM's perf overviews, in-flight
        # batching on the C++ runtime; TP1: v0.12.0 in FP8 (FP8 KV cache) -11% to +9%, v0.10.0 in FP16 -17% to 0%
        # acc120 entry of 2026-12-06: the L40S streams at its AD102 sibling's measured GDDR6 triad share (803 of 864
        # GB/s, the L40's) in place of the H100's HBM3 share: fp8 4.50 / 11.19 -> 4.38 / 8.02, fp16 11.17 / 12.95 ->
        # 8.75 / 11.93, over PCIe 5.70 / 12.04 -> 5.68 / 11.62
        # acc203 entry of 2026-12-07: a step that runs a prompt pass takes its own roofline: 4.38 / 8.02 -> 3.23 / 9.03
        ("throughput tensorrt-llm-cpp l40s-48gb fp8", V012, (1,), 14, 0.0323, 0.0903),
        # acc133 entry of 2026-12-06: the engine's own KV budget (kv_cache_free_gpu_mem_fraction 0.9 of the memory
        # free once the engine is loaded, as these runs state): fp16 8.75 / 11.93 -> 7.36 / 10.81, over PCIe 5.68 / 11.62 ->
        # 6.20 / 11.62, fp8 4.38 / 8.02 -> 4.38 / 8.03
        # acc190 entry of 2026-12-07: the page's 2,000 requests a run end with a tail: 7.36 / 10.81 -> 8.02 / 11.90
        # acc203 entry of 2026-12-07: a step that runs a prompt pass takes its own roofline: 8.02 / 11.90 -> 11.33 / 13.45
        ("throughput tensorrt-llm-cpp l40s-48gb fp16", V010, (1,), 6, 0.1133, 0.1345),
        # and v0.12.0's TP4 Mixtral / TP8 Llama 2 70B cells over PCIe: +28% to +79% (54.9 / 78.4%) while the ring ran at
        # the x16 Gen4 rate; the L40S has no GPU peer-to-peer, so NCCL stages the all-reduce through host memory at
        # HOST_STAGED_ALLREDUCE_SHARE of it (acc102 entry of CALIBRATION.md): -10% to +7%, within the target; with
        # acc101's routed experts' memory-bound kernels beside it the Mixtral TP4 cells run slower still (5.7 / 12.0)
        # acc190 entry: the page's 1,500-30,000 requests a run end with a tail: 6.20 / 11.62 -> 5.65 / 11.69
        ("throughput tensorrt-llm-cpp l40s-48gb fp8 tp>1 over pcie", V012, (4, 8), 9, 0.0565, 0.1169),
    ],
)
def test_the_l40s_in_flight_batching_rows_are_out_of_sample_groups_of_their_own(
    group: str, version: str, tp: tuple[int, ...], rows: int, median: float, p90: float
) -> None:
    report = _report()
    data = [r for r in json.loads(DATA.read_text())["throughput"] if r.get("version") == version and r["tp"] in tp]
    assert len(data) == rows
    for row in data:
        # one replica, no static batch: the saturated in-flight-batching prediction
        assert (row["engine"], row["gpu"], row["pp"]) == ("tensorrt-llm-cpp", "l40s-48gb", 1), row
        assert "batch" not in row and row["kv_precision"] == row["precision"], row
        assert row["source"].startswith("https://github.com/NVIDIA/TensorRT-LLM/blob/v0.1") and row["setup"], row
        # out of sample; the TP groups over PCIe (the L40S has no NVLink) form a group of their own
        assert report.pcie_tp_out_of_sample(row) == (row["tp"] > 1), row
    assert "tensorrt-llm-cpp" not in report.FIT_ENGINES
    (figures,) = report.evaluate(only=lambda name: name == group).values()
    assert (figures["rows"], figures["failed"]) == (rows, 0)
    assert figures["median_abs_error"] == pytest.approx(median, abs=SLACK)
    assert figures["p90_abs_error"] == pytest.approx(p90, abs=SLACK)


#: TensorRT-LLM's H200 launch blog, the version its table states (cal65 entry of 2026-12-05).
H200_LAUNCH = (
    "https://github.com/NVIDIA/TensorRT-LLM/blob/2c39687db20941793ee357ef598b114c69453368/docs/source/blogs/H200launch.md"
)


def test_the_h200_launch_rows_are_static_batches_per_replica_of_their_tp() -> None:
    report = _report()
    rows = [r for r in json.loads(DATA.read_text())["throughput"] if r["source"] == H200_LAUNCH]
    # the table's seven cells: (model, batch, tp, input, output) -> out tok/s per GPU
    per_gpu = {
        ("Llama-2-13b-hf", 1024, 1, 128, 128): 11819,
        ("Llama-2-13b-hf", 128, 1, 128, 2048): 4750,
        ("Llama-2-13b-hf", 64, 1, 2048, 128): 1349,
        ("Llama-2-70b-hf", 512, 1, 128, 128): 3014,
        ("Llama-2-70b-hf", 512, 2, 128, 2048): 1654,
        ("Llama-2-70b-hf", 64, 1, 2048, 128): 341,
        ("Llama-2-70b-hf", 32, 1, 2048, 128): 303,
    }
    cells = {(r["model"].split("/")[-1], r["batch"], r["tp"], r["input_tokens"], r["output_tokens"]): r for r in rows}
    assert set(cells) == set(per_gpu)
    for key, row in cells.items():
        # one replica of tp GPUs: the TP2 cell is 2 x 1,654 = 3,308, not 4 x 1,654 (newuser65 item 7 read it as TP4)
        assert row["output_tokens_per_s"] == per_gpu[key] * row["tp"], key
        assert (row["engine"], row["gpu"], row["precision"], row["kv_precision"]) == (
            "tensorrt-llm-cpp",
            "h200-sxm-141gb",
            "fp8",
            "fp8",
        ), key
        assert row["version"].startswith("TensorRT-LLM v0.5.0") and row["research_notes"], key
    assert "tensorrt-llm-cpp" not in report.FIT_ENGINES
    (figures,) = report.evaluate(only=lambda name: name == "throughput tensorrt-llm-cpp h200-sxm-141gb fp8 static batch").values()
    assert (figures["rows"], figures["failed"]) == (7, 0)


def test_only_out_of_sample_rows_over_pcie_are_split_off() -> None:
    # the in-sample RTX PRO 6000 rows (no NVLink, TP up to 8) stay in their groups: the fit reads them as they were
    report = _report()
    rows = json.loads(DATA.read_text())["throughput"]
    split = [r for r in rows if report.pcie_tp_out_of_sample(r)]
    assert {(r["engine"], r["gpu"]) for r in split} == {("tensorrt-llm-cpp", "l40s-48gb")}
    assert any(r["tp"] > 1 and r["gpu"] == "rtx-pro-6000-blackwell-96gb" for r in rows)
    in_sample = {"engine": "tensorrt-llm", "gpu": "rtx-pro-6000-blackwell-96gb", "tp": 8, "precision": "nvfp4"}
    assert not report.pcie_tp_out_of_sample(in_sample)
    # an NVLink group is no PCIe group, and one GPU has none
    assert not report.pcie_tp_out_of_sample({"engine": "vllm", "gpu": "h100-sxm5-80gb", "tp": 8, "precision": "bf16"})
    assert not report.pcie_tp_out_of_sample({"engine": "vllm", "gpu": "l40s-48gb", "tp": 1, "precision": "bf16"})
    assert report.pcie_tp_out_of_sample({"engine": "vllm", "gpu": "rtx-4090-24gb", "tp": 2, "precision": "bf16"})


def test_inferencex_rows_carry_the_harness_mean_lengths_and_their_concurrency() -> None:
    # InferenceX's client draws each length uniformly from int(0.8 L) to L (--random-range-ratio 0.8): the rows carry
    # the mean, 921.5 -> 922 for L = 1,024 and 7,372.5 -> 7,373 for L = 8,192 (CALIBRATION.md, 2026-12-03 entry)
    mean = {length: int((int(0.8 * length) + length) / 2 + 0.5) for length in (1024, 8192)}
    assert mean == {1024: 922, 8192: 7373}
    rows = [r for r in json.loads(DATA.read_text())["throughput"] if r.get("lab") == "SemiAnalysis InferenceX"]
    assert len(rows) == 44  # acc160: issue 890's rerun adds its conc-8 job; acc175: 27 of issues 890 / PRs 3288, 3318, 3363
    for row in rows:
        assert {row["input_tokens"], row["output_tokens"]} <= set(mean.values()), row
        # the client's concurrency is the batch bound the row is predicted under
        assert row["max_num_seqs"] == row["max_concurrency"], row
        assert row["source"].startswith("https://github.com/SemiAnalysisAI/InferenceX/"), row


def test_inferencex_1k_sweeps_never_step_slower_at_fewer_requests() -> None:
    """acc160: within one source's 1k/1k sweep on one GPU, the closed-loop step (concurrency / output tokens/s) grows
    with the concurrency. Issue 870's conc-4 run on runner h200-nv_0 (169.6 tok/s, a 23.6 ms step against 13.4 ms at
    conc 8) broke it; issue 890 re-ran that cell (385.6 tok/s, 10.4 ms) and the row holds the rerun, with the old
    figure in its research notes."""
    rows = [
        r
        for r in json.loads(DATA.read_text())["throughput"]
        if r.get("lab") == "SemiAnalysis InferenceX" and r["input_tokens"] == r["output_tokens"] == 922
    ]
    sweeps: dict[tuple[str, str, str], list[tuple[int, float]]] = {}
    for r in rows:
        key = (r["source"], r["gpu"], r["precision"])
        sweeps.setdefault(key, []).append((r["max_concurrency"], r["max_concurrency"] / r["output_tokens_per_s"]))
    # issue 870's H200 FP8 and B200 NVFP4 sweeps, issue 890's H200 FP8 rerun, PR 1053's MI300X MXFP4 sweep; acc175:
    # issue 890's MI325X FP8 pair, PR 3288's H200 FP8 and PR 3363's B200 FP8 baselines
    assert len(sweeps) == 7
    for key, points in sweeps.items():
        steps_s = [step for _, step in sorted(points)]
        assert steps_s == sorted(steps_s), key
    (rerun,) = (
        r for r in rows if r["source"].endswith("/issues/890") and r["max_concurrency"] == 4 and r["gpu"] == "h200-sxm-141gb"
    )
    assert any(note.startswith("acc160") and "22.73 ms" in note for note in rerun["research_notes"])


#: The RTX 4090 blog sweep (cal68 entry of 2026-12-05): client concurrency -> printed Output Tok/s.
RTX4090_SWEEP = {4: 210.0, 8: 377.0, 16: 644.0, 32: 975.0, 48: 1190.0}


def test_the_rtx_4090_rows_are_closed_loop_runs_bound_by_their_client_concurrency() -> None:
    report = _report()
    rows = [r for r in json.loads(DATA.read_text())["throughput"] if r["gpu"] == "rtx-4090-24gb"]
    assert {r["max_concurrency"]: r["output_tokens_per_s"] for r in rows} == RTX4090_SWEEP
    for row in rows:
        assert (row["engine"], row["precision"], row["kv_precision"], row["tp"], row["pp"]) == ("vllm", "bf16", "bf16", 1, 1)
        # the client's concurrency is the batch bound; the mean output the table's Output Tok/s / Req/s gives (~100)
        assert row["max_num_seqs"] == row["max_concurrency"] and (row["input_tokens"], row["output_tokens"]) == (256, 100)
        assert row["source"].startswith("https://mushfiqrahman.dev/") and row["research_notes"], row
        assert report._saturated(row)["saturation_batch"] == row["max_concurrency"], row
    (figures,) = report.evaluate(only=lambda name: name == "throughput vllm rtx-4090-24gb bf16").values()
    assert (figures["rows"], figures["failed"]) == (5, 0)


#: ree2raz/inference-bench's L4 runs (cal68 entry of 2026-12-05): the summary's medians by engine, regime and concurrency.
L4_RUNS = {
    ("vllm", 128, 1): 17.11,
    ("vllm", 128, 4): 66.16,
    ("vllm", 512, 1): 16.94,
    ("sglang", 128, 1): 17.12,
    ("sglang", 128, 4): 66.77,
    ("sglang", 512, 1): 17.13,
}


def test_the_l4_rows_are_the_closed_loop_runs_whose_concurrency_divides_the_prompts() -> None:
    report = _report()
    rows = [r for r in json.loads(DATA.read_text())["throughput"] if r["gpu"] == "l4-24gb"]
    assert {(r["engine"], r["output_tokens"], r["max_concurrency"]): r["output_tokens_per_s"] for r in rows} == L4_RUNS
    for row in rows:
        assert (row["model"], row["precision"], row["kv_precision"], row["tp"]) == ("Qwen/Qwen2.5-7B-Instruct", "bf16", "bf16", 1)
        # 100 measured prompts: a concurrency that divides them runs whole waves, the steady batch the predictor takes
        assert 100 % row["max_concurrency"] == 0 and row["max_num_seqs"] == row["max_concurrency"], row
        assert row["source"].startswith("https://github.com/ree2raz/inference-bench/blob/") and row["research_notes"], row
        assert row["engine"] not in report.FIT_ENGINES
    for engine in ("vllm", "sglang"):
        (figures,) = report.evaluate(only=lambda name, e=engine: name == f"throughput {e} l4-24gb bf16").values()
        assert (figures["rows"], figures["failed"]) == (3, 0)
        # every row under-predicted, 9-13% since the L4 streams at the L40's measured GDDR6 share (acc120), 13-17% before
        assert figures["median_signed_error"] < 0
        assert figures["median_abs_error"] < 0.15 and figures["p90_abs_error"] < 0.15


#: The GPUStack lab's Qwen3-32B pages, vLLM v0.11.0, one GPU, 32,000 / 100 (acc109 entry of 2026-12-06 in
#: benchmarks/CALIBRATION.md): the printed median TPOT of a run that decodes one 32K sequence at a time, ms. Read from
#: https://github.com/gpustack/gpustack/blob/10e9444a07c73556f2ef0d10d2b2766bbf54c9c0/docs/performance-lab/qwen3-32b/h100.md
#: (peak output 24 tok/s: one sequence) and its a100.md (median ITL, the same run).
GPUSTACK_QWEN3_32B_32K_DECODE_MS = {"h100-sxm5-80gb": 43.36, "a100-sxm4-80gb": 48.55}


def test_the_gpustack_h100_decodes_at_about_the_lab_a100s_rate() -> None:
    """Why the lab's H100 rows stay pinned: its decode-only step is 1.12x its A100's, not the model's 1.7x.

    The model's A100 step is within 20% of the lab's A100 page, its H100 SXM5 step a quarter below the lab's "H100":
    the rows keep the page's GPU and no engine mechanism is fitted to them (the rows' research notes say why).
    """
    report = _report()
    step_ms = {}
    for gpu, seqs, chunk in (("h100-sxm5-80gb", 1024, 8192), ("a100-sxm4-80gb", 256, 2048)):
        row = {"engine": "vllm", "gpu": gpu, "model": "Qwen/Qwen3-32B", "precision": "bf16", "kv_precision": "bf16",
               "tp": 1, "pp": 1, "input_tokens": 32000, "output_tokens": 100, "max_num_seqs": seqs,
               "max_num_batched_tokens": chunk}  # fmt: skip
        arch, weights, par, acc, kv_bits, consts = report._replica(row)
        step_ms[gpu] = 1e3 * decode_model(arch, weights, kv_bits, par, acc, 32050, consts, 32050).step(1, 0).seconds
    lab = GPUSTACK_QWEN3_32B_32K_DECODE_MS
    assert step_ms["a100-sxm4-80gb"] == pytest.approx(lab["a100-sxm4-80gb"], rel=0.2)
    assert step_ms["h100-sxm5-80gb"] < 0.8 * lab["h100-sxm5-80gb"]
    assert lab["a100-sxm4-80gb"] / lab["h100-sxm5-80gb"] < 1.2 < step_ms["a100-sxm4-80gb"] / step_ms["h100-sxm5-80gb"]


def test_the_lab_vllm_rows_record_the_server_defaults_and_their_research_notes() -> None:
    # acc109: every GPUStack vLLM row on an H100 / H200 records the server's max_num_batched_tokens (V1's 8192 on a
    # >= 70 GiB GPU that is not an A100, or the 16384 its command sets), as the lab's A100 rows record 2048; the BF16 H100
    # and FP8 H200 rows say why they miss
    rows = [
        r
        for r in json.loads(DATA.read_text())["throughput"]
        if r["engine"] == "vllm" and "gpustack/gpustack" in r["source"] and r["gpu"] in ("h100-sxm5-80gb", "h200-sxm-141gb")
    ]
    assert rows
    for row in rows:
        assert row["max_num_batched_tokens"] in (8192, 16384) and row["max_num_seqs"] == 1024, row
        if row["precision"] == "bf16" or row["gpu"] == "h200-sxm-141gb":
            assert any(note.startswith("acc109") for note in row["research_notes"]), row


#: The GPUStack DeepSeek-R1 H200 page's prompt tokens/s of its vLLM runs by prompt length (duration less the decode at
#: the peak output rate: the rows' research notes), https://github.com/gpustack/gpustack/blob/
#: a5c9fafc3022e81779c2c5ade32c5b703ce2248c/docs/performance-lab/deepseek-r1/h200.md
GPUSTACK_R1_PROMPT_TOKENS_PER_S = {32000: 17_100, 4000: 20_300, 2000: 21_300}


def test_a_rows_roofline_inputs_are_the_estimates_served_format() -> None:
    """acc115: ``_replica`` (what decompositions of a row are built on) serves the checkpoint's block-FP8 as the estimate does.

    ``--precision fp8`` on DeepSeek-R1's 128 x 128 block checkpoint is that layout (``served_precision``), whose GEMMs run
    at ``fp8_block_gemm_efficiency_ratio`` on Hopper; acc109 timed the lab's prompt passes from the row's bare ``fp8``
    and found them at 0.50-0.68 of a model 1.6x too fast. At the estimate's inputs the page's prompts pass at 0.8-0.95
    of the model's rate.
    """
    report = _report()
    rows = [
        r
        for r in json.loads(DATA.read_text())["throughput"]
        if r["engine"] == "vllm" and r["model"] == "deepseek-ai/DeepSeek-R1" and r["gpu"] == "h200-sxm-141gb"
    ]
    assert sorted(r["input_tokens"] for r in rows) == sorted(GPUSTACK_R1_PROMPT_TOKENS_PER_S)
    for row in rows:
        assert row["precision"] == "fp8"
        served = estimate(
            EstimateRequest(
                model=row["model"], precision=row["precision"], kv_precision=row["kv_precision"], tp=row["tp"],
                gpu=row["gpu"], context_tokens=row["input_tokens"] + row["output_tokens"],
                input_tokens=row["input_tokens"], output_tokens=row["output_tokens"],
            )
        )["precision"]["weights"]  # fmt: skip
        assert served == "fp8-block"
        arch, weights, par, acc, _, consts = report._replica(row)
        assert acc.software_block_scaled
        isl = row["input_tokens"]
        model_rate = isl / prefill_seconds(arch, par, acc, isl, consts, weights, fill=False)
        assert 0.8 < GPUSTACK_R1_PROMPT_TOKENS_PER_S[isl] / model_rate < 0.95, (isl, model_rate)


def test_the_a100_gpt_oss_32k_rows_lose_their_time_in_the_triton_kernels_re_reads() -> None:
    """acc118 / acc177: GPUStack's vLLM gpt-oss rows on one A100 at 32,000 prompt tokens are prompt-bound.

    A 2,048-token chunk took about 167 / 230 ms longer than at 2,000 tokens on the same page: the prompt's attention,
    which vLLM runs on SM80 in its Triton unified kernel (sinks), 16 query rows a program re-reading the KV cache. At
    FlashAttention's rate (no cap) the model's chunk spends 4.4-4.9x too little in it and the rows read +96% / +54%;
    with the kernel's re-reads (``prompt_attention_query_rows`` 16, its read share from an H100 figure, not these rows)
    the measured excess is within 20% of the model's attention, and both rows within 10%.
    """
    report = _report()
    rows = [
        r
        for r in json.loads(DATA.read_text())["throughput"]
        if r["gpu"] == "a100-sxm4-80gb" and r["precision"] == "mxfp4" and r["input_tokens"] in (2000, 32000)
    ]
    chunk = 2048  # the A100's V1 server default max_num_batched_tokens, the rows' own
    for model in ("openai/gpt-oss-20b", "openai/gpt-oss-120b"):
        short, long = sorted((r for r in rows if r["model"] == model), key=lambda r: r["input_tokens"])
        seconds = [
            chunk * r["output_tokens"] / (r["output_tokens_per_s"] * (r["input_tokens"] + r["output_tokens"]))
            for r in (short, long)
        ]
        arch, weights, par, acc, kv_bits, consts = report._replica(long)
        assert consts.prompt_attention_query_rows == 16, model  # the row's kernel: Triton unified attention
        isl, osl = long["input_tokens"], long["output_tokens"]
        model_ = decode_model(arch, weights, kv_bits, par, acc, isl + osl // 2, consts, isl)
        attention_s = chunk * model_._prefill_attention_flops / model_._prefill_attention_rate
        assert 0.8 < (seconds[1] - seconds[0]) / attention_s < 1.2, model
        flash = decode_model(
            arch, weights, kv_bits, par, acc, isl + osl // 2, consts._replace(prompt_attention_query_rows=0), isl
        )
        assert flash._prefill_attention_rate > 4 * model_._prefill_attention_rate, model  # FlashAttention's rate: no cap
        # within 13%: acc186's queue tail (the pages' 100 / 500 requests, bench_requests) took gpt-oss-120b's 2,000-token
        # row from -9.0% to -10.3%; acc203's own roofline of a step that runs a prompt pass to -12.6%
        assert abs(report.predict_throughput(long) / long["output_tokens_per_s"] - 1) < 0.13, model
        assert abs(report.predict_throughput(short) / short["output_tokens_per_s"] - 1) < 0.13, model
        assert any(note.startswith("acc118") for note in long["research_notes"]), model


def test_a_serving_run_of_a_stated_request_count_ends_with_its_tail() -> None:
    """acc186: the GPUStack lab's ``vllm bench serve`` runs send ``--num-prompts`` requests at once (request rate inf) and
    print the generated tokens over a duration that ends with the last request: each row records that count
    (``bench_requests``), and its figure is the steady state's times the finite run's factor (below 1: the tail)."""
    report = _report()
    rows = [row for row in report.serving_throughput_rows() if "gpustack/gpustack" in row["source"] and "batch" not in row]
    assert len(rows) >= 50
    for row in rows:
        assert f"--num-prompts {row['bench_requests']} " in row["setup"], row["setup"]
        assert report.bench_requests(row) == row["bench_requests"]
    row = next(r for r in rows if r["model"] == "Qwen/Qwen3-14B" and r["gpu"] == "h100-sxm5-80gb" and r["input_tokens"] == 2000)
    steady = report._saturated(row)["max_output_tokens_per_s"]
    factor = report.finite_run(row, report.row_batch(row))
    assert 0.99 < factor < 1.0  # 500 requests at 120 in flight: the last 100 steps at a falling batch
    assert report.predict_throughput(row) == pytest.approx(steady * factor)
    assert report.finite_run({k: v for k, v in row.items() if k != "bench_requests"}, report.row_batch(row)) == 1.0
