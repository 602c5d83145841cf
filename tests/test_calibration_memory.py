"""Memory, KV-token, GPU-hour and training-MFU groups against the public calibration rows.

Issue 9's targets: every memory group's median |error| at most 10% and p90 at most 40%, weights per GPU
within 2%. KV tokens are held to the memory target; GPU-hours and training MFU to the p90 of 40% and a
median of 15%. Groups that meet their target are held to it; those that miss it (benchmarks/CALIBRATION.md
and the reasons beside each pin) are pinned at today's figures, so a change that makes any group worse
fails here. The rows and their sources are in ``tests/data/calibration.json`` and
``tests/data/calibration_training_mfu.json``; the per-group report is ``benchmarks/calibration_report.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import calibration_report as _report
from tests.helpers import check_calibration_groups

REPO = Path(__file__).resolve().parents[1]

#: (prefix of the group name, median target, p90 target).
TARGETS: tuple[tuple[str, float, float], ...] = (
    ("memory ", 0.10, 0.40),
    ("weights ", 0.02, 0.02),
    ("kv-tokens ", 0.10, 0.40),
    ("kv-concurrency ", 0.10, 0.40),
    ("kv-needed ", 0.10, 0.40),
    ("gpu-hours ", 0.15, 0.40),
    ("training-mfu ", 0.15, 0.40),
    ("training-throughput ", 0.15, 0.40),
    ("offload-decode ", 0.15, 0.40),
    ("offload-prefill ", 0.15, 0.40),
)

#: group -> (median, p90) |error| today, for groups that miss their target.
#: GPU-hours are grouped by GPU (benchmarks/CALIBRATION.md, 2026-12-01 third entry): the seven A100 rows (LLaMA,
#: Llama 2) meet the target at 4.6% / 6.1%; the four H100 rows (Llama 3.1 8B -52.0%, 70B -26.4%, 405B -13.6%,
#: DeepSeek-V3 on H800 -14.7%) miss it: under-predicted, the 8B most, whose published hours imply 15.6% MFU and
#: whose training layout is not published, so no mechanism in the engine accounts for it.
#: Training MFU is grouped by layout and GPU (2026-12-01 eighth entry): llm-foundry's A100 tables (8 rows, out of
#: sample) are all under-predicted, 18-41%: the step model has no GPU-specific compute efficiency, and these A100 runs
#: reach 49-64% MFU where the same code's H100 rows reach 36-46% (FlashAttention-2 runs at 50-73% of A100's peak but
#: about 35% of H100's, per the FlashAttention-2 and -3 papers). Attention on Ampere now runs at that ratio
#: (thirteenth entry), which closes part of the gap: a constant shared by all GPUs cannot close the rest.
#: LLaMA-Factory's single-A100 QLoRA tokens/s (thirteenth entry) were over-predicted at short sequences: the NF4
#: dequantization each micro-batch pays whatever its tokens (2026-12-02 fourth entry) took the group from 29.6% / 37.0%
#: to 16.0% / 29.9%; what is left is the long-context rows (-30% to -38%), slow in the step's attention. Unsloth's rows
#: (39.2% / 44.9% before) are 30.5% / 45.6%: the dequantization, a fixed 0.094 s a micro-batch on the A100 40GB, adds
#: 1.3% to the 16,384-token micro-batch that sets the p90, already 45% slow (Unsloth's kernels are not modelled as
#: faster, thirteenth entry).
#: torchtune's README tables (fourth entry) are under-predicted on one RTX 4090 and on A100 alike (LoRA 3B -24%, 70B
#: -14%, 8B on the 4090 -47%): the 4090's LoRA row implies 56% MFU at 4N FLOPs a token (the step: 29.5%), 84% with
#: the recompute its config and its 16.2 GiB peak imply, of a 165.2 TFLOPS dense bf16 peak; compile and packing are
#: not modelled as faster. The QLoRA rows sit below their LoRA rows' error by the part of the dequantization the
#: model has (the 4090's published QLoRA/LoRA ratio is 0.78, modelled 0.94; the A100's 0.979, modelled 0.977). The
#: 70B full run offloads parameters to the CPU (FSDP cpu_offload), whose transfers the step does not count (+43%).
#: Since the measured GEMM shares over the H100's (2026-12-02 fifth entry) the 4090 computes at 1.28x its former rate
#: (it sustains 1.03 of its FP32-accumulate peak, the H100 0.80 of its own) and the A100 at 1.08x: the 4090's full and
#: the A100's LoRA rows meet the target; the 70B offload row is +55% (over-predicted, its copies not in the step); the
#: LLaMA-Factory QLoRA rows moved from -3.9% to +3.5% signed, 21.7% / 27.1% in size.
#: Issue 9 (fttput entry): a LoRA step's attention counted in full, FlashAttention-2's published share under the
#: frameworks that run it, NF4 at 0.3: LLaMA-Factory 4.3% / 10.1% and Unsloth 10.5% / 19.1% meet the target; torchtune's
#: QLoRA rows pay the larger dequantization the bitsandbytes rows want, the 4090 (Ada: no published share) its LoRA
#: attention in full; the 70B offload row's host optimizer step is not modelled (+59%).
#: Issue 9 (2026-12-02, memory-bound operators by each GPU's FLOPs per byte): the GEMM-size term scales with the GPU's
#: sustained FLOPs per HBM byte over the H100's (A100 80GB 0.60, 40GB 0.74, 4090 0.71, A6000 0.68): every pinned
#: training group but one moves toward its target; the 70B offload row, over-predicted, moves away (+59% -> +63%).
#: Issue 9 (fsdpoff entry, 2026-12-03): the step counts CPU offload (host-link copies hidden behind compute, the CPU
#: AdamW over the host's DRAM in series): the 70B offload row +62.9% -> +22.8%, 3.9 s of its 20.9 s step unexplained.
#: Issue 9 (trainacc entry, 2026-12-04): full checkpointing recomputes the decoder blocks, not the LM head: every
#: checkpointed row's step is shorter by 2 x vocab x hidden FLOPs a token. torchtune's A100 QLoRA group meets its target
#: (15.9% / 21.6% -> 14.3% / 21.5%) and leaves this list; the A100 MFU groups (18.8 / 26.2 -> 18.6 / 25.8, 18.2 / 19.8 ->
#: 17.6 / 19.4) and the 4090's LoRA / QLoRA rows (-32.9% -> -31.5%, -25.9% -> -24.6%) move toward their targets; the 70B
#: offload row, over-predicted, moves away (+22.8% -> +23.2%). The A6000 rows cannot be reached by a step model: at the
#: fewest FLOPs a LoRA token can take (4 N, no recompute) its row runs at 91% of the card's dense bf16 peak and above
#: its measured GEMM maximum (CALIBRATION.md).
#: Issue 9 (acc107, 2026-12-06): the layers' eager norm, rotary, gating and residual operators under the Hugging Face
#: Trainer family (generator.sizing.training_elementwise), nf4_dequant_bandwidth_efficiency refitted 0.3 -> 0.5 with
#: them: the three H200 Trainer groups pinned here meet the target and leave this list (LoRA runs 18.8% / 38.5% ->
#: 8.7% / 22.5%, LoRA check runs 20.4% / 41.4% -> 8.1% / 20.9%, full check runs 32.7% / 64.3% -> 14.4% / 35.1%).
PINNED: dict[str, tuple[float, float]] = {
    # newuser70 item 1 (attention at heads x head_dim): DeepSeek-V3's MLA runs 20,480 wide, not its 7,168 hidden,
    # -14.7% -> +8.4% (0.2055 / 0.5196 before)
    # acc110: the pipeline runs at its slowest stage's pace (the LM head on the last): Llama 3.1 405B -12.8% -> -12.0%
    # acc188: DeepSeek-V3 with the D = 1 MTP module it pretrained with, +8.4% -> +12.2% (its FP8 GEMMs not timed)
    "gpu-hours pretraining h100-sxm5-80gb": (0.1930, 0.5196),
    # acc198 (2026-12-07): llm-foundry's non-reentrant checkpoint stops its recompute before each block's down
    # projection: the A100 MFU groups (pinned 0.1864 / 0.2584 and 0.1765 / 0.1939; 17.7% / 21.1% and 15.9% / 18.0%
    # before) meet the target at 12.1% / 15.4% and 9.1% / 11.2% and leave this list; torchtune's A100 full group (the
    # 70B offload row alone, pinned 0.2318) gains the Llama 3.2 3B flags-table rows, 14.4% / 23.7%, and leaves it too
    # acc135: the RTX 4090's three torchtune groups (full 0.2298, LoRA 0.3149, QLoRA 0.2020) meet the target and lose
    # their pins: a GeForce card's half-rate bf16 MMAs hide half the losses beside them (7.5% / 11.5% / 0.5%)
    # the same table's RTX A6000 rows (added with its catalog record): they imply 75% (full) and 91% (LoRA) of its
    # dense bf16 peak without recomputation, above any other row, so the step is slow on them as on the 4090's.
    # acc104: the GPU's optimizer step (8.03B parameters of 8-bit paged AdamW over bf16 weights, 10 bytes each at
    # 768 GB/s, 0.105 s) is counted in the full row's step: -33.9% -> -36.6%, as the 4090's full row -0.9% -> -4.0%
    # acc125: the same migration, 0.637 s (the states do not fit beside the modelled step): -36.6% -> -49.5%
    "training-throughput torchtune rtx-a6000-48gb (full, tokens/s/GPU)": (0.4948, 0.4948),
    "training-throughput torchtune rtx-a6000-48gb (lora, tokens/s/GPU)": (0.4694, 0.4694),
    # newuser105 (2026-12-07, out of sample): Answer.AI fsdp_qlora's Llama-2 70B QLoRA over 2-8 GPUs, timed as estimate
    # times the step (ZeRO-3 gathers over each GPU's links). Nine rows within -24% / +9%; the RTX 6000 Ada pair +41% /
    # +46% (its 300 W board holds it below the 4090 measured beside it: no power cap is modelled) sets the p90
    "training-throughput Answer.AI fsdp_qlora (Llama-2 70B QLoRA over 2-8 GPUs, tokens/s/GPU)": (0.1347, 0.4141),
    # acc116 (2026-12-06): the cores of a CPU without VNNI's 8-bit dot product (Zen 3, Skylake-SP) multiply at
    # cpu_core_gparams_per_s_without_vnni (6, fitted over the offload groups at once): three pinned groups meet the
    # target and lose their pins. ik_llama.cpp's two-socket group (out of sample) 0.3303 / 0.7761 -> 0.1269 / 0.1579,
    # the two Windows Xeon Gold 6138 rows +78% / +50% -> +15% / -7%; mainline's one-socket short-context group
    # 0.0545 / 0.5142 -> 0.0545 / 0.1425 (the AVX2 5975WX's Llama-3.1-8B Q4_0 +51% -> +6%, 74 GB/s of its 205 bound by
    # its dot products); ik_llama.cpp's long-context group 0.1924 / 0.3161 -> 0.1429 / 0.2402 (its 5975WX rows +40% /
    # +32% -> +11% / +13%)
    # the CPU's attention at long context (2026-12-02 third entry) is fitted to mainline llama.cpp with flash attention:
    # flash attention off runs about twice as fast. newuser38 item 5: gpt-oss's rows sized as the MXFP4_MOE GGUF they
    # ran (attention Q8_0, not the checkpoint's BF16) brought mainline's long-context group to its target (0.1440 /
    # 0.4790 before: gpt-oss-120b's row -48%, now -39%) and ik_llama.cpp's closer (0.3510 / 0.6817); llama.cpp's F32
    # routers, read whole every token (sized at the file's type before), moved DeepSeek's rows away (0.2064 / 0.2219).
    # acc116 (2026-12-06): DeepSeek before llama.cpp's MLA is timed with the attention it ran (calibration_report
    # ``without_mla``: every head's key and value cached, a quarter of the absorbed form's FLOPs a cached token) and
    # meets the target (0.2125 / 0.2267 -> 0.1353 / 0.2121): its pin is dropped
    "offload-decode llama.cpp (cpu-only, long context, fa off)": (0.4322, 0.4322),
    # prompt passes copying gpt-oss-120b's experts from pinned memory (--no-mmap), two rows of one 12600K box, not fitted
    # (pcie_efficiency is a measured copy rate): its 5,501-token server prompt at -ub 2048 ran at 191.7 tokens/s, +268%
    # (52 GB of pinned buffers asked of a 64 GB machine at DDR5-2000; a failed cudaMallocHost falls back to pageable
    # memory unlogged), its pp512 at DDR5-6000 at 429.9, -46% (gpt-oss routes a 512-token pass to fewer experts than
    # uniform routing does, and llama.cpp copies only those: ik_llama.cpp PR #698 measured 1.3-1.7x) (offload entry of 2026-12-03)
    # fix73 (newuser72 item 3): the prompt's attention stops at each layer's window (gpt-oss's window-128 layers; llama.cpp
    # keeps only the window's cells of their KV), so the 5,501-token prompt's FLOPs fall: +268% -> +272% (156.8 / 267.4 ->
    # 159.2 / 272.2), the mechanism, no constant moved
    # acc103 (2026-12-06): each row timed on the 64 GiB its source states, as a machine of yours is: 52.6 GB pinned is
    # 82% of it, over pinned_host_ram_share, so both at the pageable rate the plan prints (+272% -> +141%, -46% -> -67%).
    # The box pinned them in the DDR5-6000 pp512 run (faster than any pageable copy) and not in the DDR5-2000 one (its
    # passes slower than the same box's memory-mapped pass): the product cannot tell which, and warns with both TTFTs
    # acc185 (2026-12-07): a pageable copy is staged through pinned buffers, three passes over the host's memory a byte,
    # so at DDR5-2000 the DRAM's rate over three bounds it (pageable_copy_bytes_per_s): the 5,501-token row +141% -> +69%,
    # the DDR5-6000 pp512 (its DRAM over three above 0.6 of the link) stays -67%
    "offload-prefill llama.cpp (experts-cpu, no-mmap)": (0.6778, 0.6860),
    # gpt-oss-120b's experts in RAM beside a GPU: the 12600K's two runs at DDR5-2000 (XMP off) +42% and +25%, its run at
    # DDR5-6000 -4%, an i9-14900K -0.4%, with llama.cpp's 62 / 72 switches between the GPU and the CPU a token at 50 us
    # each (accoff entry of 2026-12-04; 0.2028 / 0.4832 before: +48% / +31% / +3% / +10%, the cores' rate refitted at
    # 20 with the GGUF's Q8_0 attention, offload entry of 2026-12-03 and its ggufq note). The median meets its target,
    # the p90 misses it by two points: the DDR5-2000 rows still read their memory below 0.95 of its rate
    "offload-decode llama.cpp (experts-cpu)": (0.1475, 0.4194),
    # Out of sample (cal69, CALIBRATION.md 2026-12-05 entry): Megatron-Bridge's published BF16 MoE pre-training rows
    # (25.11 NeMo container, 26.02 archive), predicted before they were added; no constant refitted. Two H100 rows meet
    # the target (+1.1%, -8.4%). GB300 (DeepSeek-V3 -11.9%, Qwen3-235B -19.9%, gpt-oss-120b +7.6% / +25.9%) misses the
    # median by a point. GB200's PP 4 / PP 8 rows (DeepSeek-V3 EP64 -61.4%, Qwen3-235B EP32 -73.4%) place their EP group
    # on ep x pp GPUs (256 > 72: over the rack's network) where Megatron's rank order keeps it on one stage inside the
    # NVL72 domain (-61.4% -> +6.0%, -73.4% -> -7.5% so placed); its gpt-oss rows +23.3% / +54.9%. gpt-oss-120b on the
    # 8-GPU Blackwell boards runs at half the NVL72 racks' rate at the same layout (B200 8,047 vs GB200 15,784 tokens/s,
    # B300 8,359 vs GB300 19,412), which no term of the step separates: B200 +78.2% (EP8; +176.2% before acc93's
    # expert-data-parallel gradients, each rank of that group on its own node's NIC) / +15.7% (EP64 over 400 Gb/s), B300
    # +60.7% (EP64 over 800 Gb/s)
    # acc138: the B200 / B300 at their measured GEMM rates (stas00/ml-engineering's MAMF, 1,745 / 1,769 of 2,250 BF16
    # TFLOPS against the H100's 794.5 of 989): B200 46.6 / 77.6 -> 44.9 / 75.4, B300 60.5 -> 58.8
    # acc145: an EP 64 all-to-all over 8-GPU nodes sends its 7 in-node peers' share over NVLink, only 56/63 of its
    # bytes over the network (all of them before): the B200 EP64 row +14.3% -> +22.5%, the B300's +58.8% -> +66.9%.
    # The all-to-all is right now (B200-over-GB200 extra 4.99 s measured, 4.94 s modelled); gpt-oss's unmodelled
    # compute residual (1.08-1.43x on every board, CALIBRATION.md acc143 entry) shows through: 44.9 -> 49.0, 58.8 -> 66.9
    # acc168 (issue 9): the 25.11 B200 row read at EP 64, the layout of every stored Megatron-Bridge preset that gives
    # the B200 a micro-batch of 4 (its table's "EP 8 | GA 2" cells are the DGX-H100 row's, whose GA 2 contradicts its
    # own GBS / MBS / DP); its seconds a micro-batch are the 26.02 EP64 row's within 2%: +75.4% -> +19.9%, beside the
    # EP64 row's +22.5%: 49.0 / 75.4 -> 21.2 / 22.5, both now gpt-oss's residual diluted by the cross-node all-to-all
    "training-mfu MoE b200-sxm-180gb (Megatron-Bridge perf summary, out of sample)": (0.2119, 0.2252),
    "training-mfu MoE b300-sxm-270gb (Megatron-Bridge perf summary, out of sample)": (0.6693, 0.6693),
    # acc110 (CALIBRATION.md 2026-12-06 acc110 entry): an EP group on ep x tp GPUs of one pipeline stage (Megatron's rank
    # order tp-cp-ep-dp-pp), and the pipeline at its slowest stage's pace (the LM head on the last stage beside its
    # layers). GB200 DeepSeek-V3 PP4 EP64 -61.4% -> +3.9%, Qwen3-235B PP8 EP32 -73.4% -> -11.2% (58.0 / 73.5 before);
    # its gpt-oss rows +23.2% / +54.6% stay. GB300 Qwen3-235B PP4 -19.9% -> -21.4%, DeepSeek-V3 PP2 -12.5% -> -12.6%.
    # gpt-oss-120b PP4 EP8 on H100 was right by accident (+0.8% / -8.4%, its all-to-alls over InfiniBand): in one node
    # over NVLink +57.6% / +55.3%, with its last stage's 9 layers and its 579M-parameter LM head (201,088 x 2,880, a
    # 4.6-layer share; 36 layers divide by PP 4, so Megatron's default split, no account_for_loss_in_pipeline_split in
    # its recipe) +20.7% / +20.3%: the gpt-oss rows' residual (1.2-1.55x on every board) is not modelled
    # fix126 (review79 items 4-5): the stages placed Megatron's way (256 GPUs over 72-GPU racks: a stage's sends cross
    # the racks' network) and the bubble of the other stages' time: DeepSeek-V3 +3.9% -> +3.2%, Qwen3-235B -11.2% ->
    # -12.1%
    # acc134 (issue 9): Megatron-Core's attention is Transformer Engine's cuDNN kernel, FlashAttention-2's algorithm, at
    # its published 35% of the peak (Hopper's on Blackwell) rather than the fitted Triton rate: DeepSeek-V3 +3.2% ->
    # +22.6%, Qwen3-235B -12.1% -> +1.8%; gpt-oss (attention sinks: the fitted rate kept) unchanged: 17.6 -> 22.9
    # acc138: the GB200 at its measured GEMM rate (MAMF 1,822 of 2,500 BF16 TFLOPS: 4.4% past the B200's, not the
    # datasheet's 11%) and Blackwell's borrowed Hopper attention share of that sustained rate: DeepSeek-V3 +22.6% ->
    # +13.7%, Qwen3-235B +1.8% -> -4.3%, gpt-oss +23.2% / +54.6% -> +13.7% / +43.2%: 22.9 / 54.6 -> 13.7 / 43.2
    # acc188: DeepSeek-V3 timed with the MTP module its recipe trains (mtp_num_layers 1), +13.7% -> +8.2%: 13.7 -> 10.9
    "training-mfu MoE gb200-186gb (Megatron-Bridge perf summary, out of sample)": (0.1093, 0.4317),
    # GB300 DeepSeek-V3 (PP2 EP32) -11.9% -> -12.4% with its experts' gradients over their expert-data-parallel group
    # fix126 (review79 items 4-5): Qwen3-235B PP4 (256 GPUs, a stage of 64, TP1 x DP64) and DeepSeek-V3 PP2 over
    # 72-GPU racks: some stage's sends cross the racks' network; the bubble of the other stages' time: 17.0 -> 17.2
    # acc134 (issue 9): with Megatron-Core's cuDNN attention at FlashAttention-2's share, DeepSeek-V3 -12.8% -> +4.0%,
    # Qwen3-235B -21.6% -> -7.8%: 17.2 / 25.7 -> 7.7 / 25.7, within the target, the pin dropped
    # fix126 (review79 items 4-5): gpt-oss-120b PP4 EP8 on 8 x 8 H100: a stage is 16 GPUs (TP1 x DP16), two nodes, so
    # its PP sends cross InfiniBand (+20.7% -> +20.0%); its last stage 1.26x the mean, the bubble slots 0.91x the mean
    # stage's rather than 1.26x (+20.0% -> +24.2%; /work/wt/bugs/fix126/pipeline_rows.py)
    "training-mfu MoE h100-sxm5-80gb (Megatron-Bridge perf summary, out of sample)": (0.2227, 0.2424),
    # Out of sample (fix77, CALIBRATION.md 2026-12-05 FP8 entry): Megatron-Bridge's FP8-CS dense Llama pre-training rows
    # (25.11), timed with FP8 training (training.compute_precision fp8: the linear layers' GEMMs at the dense FP8 rate,
    # the BF16 GEMMs' efficiency constants, attention / norms / optimizer / communication as in bf16); no constant
    # fitted. At bf16 they were -41% to -50%; now -1.6% to -29.1%, every row still under-predicted. GB200 (8B -15.5%,
    # 70B -9.0%, 405B -1.6%) meets the target. The 8B rows at 8,192 tokens miss most (GB300 -29.1%, H100 -26.7%, B200
    # -21.2%): their bf16 attention (the fitted rate, Megatron's cuDNN fused attention has no published share) and
    # memory-bound operators are a larger share of an 8B's step than of a 70B's (GB300 70B -13.2%, H100 70B -8.9%)
    # fix79 (review71 item 10): the LM head's GEMMs at bf16 (neither Transformer Engine under Megatron nor torchao runs
    # it in FP8): every FP8 row slower by its head's share, GB300 8B -29.1% -> -31.2%, H100 8B -26.7% -> -28.9%,
    # B200 -21.2% -> -23.5%, GB200 (9.0% / 15.5% -> 9.8% / 17.9%) still meets the target
    # acc134 (issue 9): their attention at FlashAttention-2's published share (Transformer Engine's cuDNN attention, its
    # algorithm) rather than the fitted Triton rate: B200 -23.5% -> +2.7%, GB300 8B -31.2% -> -7.8%, 70B -14.0% -> +6.3%,
    # within the target, the pins dropped (GB200 9.8 / 18.0 -> 9.9 / 11.5)
    # acc110: the 70B row's PP 8 last stage runs its 10 layers and the LM head (80 layers divide by 8: Megatron's
    # default split): -9.8% -> -18.1%, the FP8 rows' under-prediction (the 8B, PP 1, -28.9%) not the pipeline's
    # fix126 (review79 items 4-5): the 70B's TP4 PP8 DP2 (a stage of 8 GPUs, one node: its sends cross InfiniBand
    # as before, its DP pair now inside the node) with the bubble of the other stages' time (its last stage runs 10
    # layers and the head): 23.5 -> 23.4; acc134 (issue 9): 8B -28.9% -> -4.5%, 70B -17.9% -> +0.7% with the cuDNN
    # attention at FlashAttention-2's share: 2.6 / 4.5, within the target, the pin dropped
    # Out of sample (fix79, review71 item 1, CALIBRATION.md 2026-12-05 torchao entry): torchao's float8 README training
    # benchmarks (torchtitan, Llama 3 8B, 8 GPUs, FSDP2, batch 1, sequence 8192, per-op SAC), tensorwise with float8
    # all-gather, timed with torchao's amax / cast passes as memory traffic (torchao's own roofline bytes): H100 +29.8%
    # before (the casts free, the LM head in FP8) -> +18.5%; MI300X +50.2% -> +39.7%: its bf16 row is +17.1% already,
    # and MI300X's FP8 GEMMs are timed at the datasheet's 2x (no measured FP8 share of its own beside bf16's)
    "training-mfu FP8 dense h100-sxm5-80gb (torchao float8 README, out of sample)": (0.1848, 0.1848),
    "training-mfu FP8 dense mi300x-192gb (torchao float8 README, out of sample)": (0.3971, 0.3971),
    # their bf16 baselines (the README's 'none (bfloat16)' rows): H100 +11.7% meets the target; MI300X +17.1%
    "training-mfu FSDP fsdp2 mi300x-192gb (torchao float8 README, out of sample)": (0.1711, 0.1711),
}

#: Tolerance on a pinned figure (rounding of the report's four decimals).
SLACK = 0.005


def _target(name: str) -> tuple[float, float] | None:
    return next(((median, p90) for prefix, median, p90 in TARGETS if name.startswith(prefix)), None)


@pytest.fixture(scope="module")
def groups() -> dict[str, dict[str, Any]]:
    summary: dict[str, dict[str, Any]] = _report().evaluate()
    return {name: g for name, g in summary.items() if _target(name) is not None}


def test_every_row_is_answered(groups: dict[str, dict[str, Any]]) -> None:
    for prefix, _, _ in TARGETS:
        assert any(name.startswith(prefix) for name in groups), prefix
    assert all(g["failed"] == 0 for g in groups.values())


def test_groups_meet_the_target_or_their_pinned_figures(groups: dict[str, dict[str, Any]]) -> None:
    # a pin for a group that now meets its target should be dropped, so the target guards it
    check_calibration_groups(groups, _known_target, PINNED, SLACK)


def _known_target(name: str) -> tuple[float, float]:
    target = _target(name)
    assert target is not None, name
    return target


def test_an_fp8_row_is_grouped_apart_from_bf16_in_sample_too() -> None:
    # review71 item 11e: the FP8 split sat inside the out-of-sample branch; an in-sample FP8 row joined its bf16 group
    report = _report()
    row: dict[str, Any] = {"tp": 1, "pp": 1, "gpu": "h100-sxm5-80gb", "profile": "fsdp2"}
    assert report.training_mfu_group(row) == "training-mfu FSDP fsdp2 h100-sxm5-80gb"
    assert report.training_mfu_group({**row, "compute_precision": "fp8"}) == "training-mfu FP8 dense h100-sxm5-80gb"
    oos = {**row, "compute_precision": "fp8", "out_of_sample": "torchao float8 README"}
    assert report.training_mfu_group(oos) == "training-mfu FP8 dense h100-sxm5-80gb (torchao float8 README, out of sample)"
