"""The optimizer step on the GPU: a memory-bound pass over each trainable parameter's weight, gradient and states.

After the last micro-batch's backward pass every optimizer the regimes here name (AdamW in its precisions, 8-bit
AdamW, SGD with momentum, Adafactor) updates each trainable parameter it holds elementwise: it reads the gradient,
reads the weight and its states (an fp32 master copy included where the regime keeps one), and writes the weight and
the states back. PyTorch's fused AdamW (``torch.optim.AdamW(fused=True)``, the Hugging Face Trainer's
``adamw_torch_fused`` default) and its ``foreach`` form launch few kernels for it ("foreach and fused implementations
are typically faster than the for-loop, single-tensor implementation",
https://docs.pytorch.org/docs/stable/generated/torch.optim.AdamW.html), but each element's bytes still cross HBM: a
handful of FLOPs a byte, far below any GPU's FLOPs per byte, so the step runs at the GPU's memory bandwidth and in
series with the compute (nothing of the next step starts before the weights are updated; an optimizer stepped in
backward, torchtune's ``optimizer_in_bwd``, runs each parameter's update in its gradient hook, on the compute stream).

Per trainable parameter, in the regime's bytes (:data:`generator.sizing.training.OPTIMIZERS`): ``grad + 2 x (weight +
states)``: AdamW with an fp32 master (``adamw``) 2 + 2 x (2 + 12) = 30, PyTorch AMP's fp32 weights (``adamw-torch-amp``)
4 + 2 x (4 + 8) = 28, pure bf16 (``adamw-bf16``) 2 + 2 x (2 + 4) = 14; LoRA adapters in their own precision with the
regime's moments. ZeRO-1 and above (and FSDP, which is ZeRO-3) step each GPU's ``1 / dp`` shard only; an offloaded
optimizer steps on the CPU (:mod:`generator.sizing.training_offload` times that) and moves nothing here. Gradient
clipping's passes over the gradients are not counted.

The step's HBM time is the bytes at the GPU's sustained bandwidth (:func:`generator.sizing.training_step.hbm_seconds`):
no fitted constant. On one H200 it is 24 ms of Llama 3.1 8B's 0.55 s step at 4,096 tokens (full fine-tune, bf16
AdamW), and 19 ms of Llama 3.2 3B's 0.26 s at 4,096 tokens with fp32 weights (specgen's runs,
``benchmarks/measurements/h200-finetune-*.jsonl``): a step of few tokens feels it.
"""

from __future__ import annotations

from generator.sizing.architecture import Architecture
from generator.sizing.frameworks import framework_profile
from generator.sizing.training import OPTIMIZERS, TrainingSetup, adapter_targets, lora_params_split
from generator.sizing.training_moe import routed_total_params
from generator.sizing.weights import Parallelism


def optimizer_bytes_per_param(grad_bytes: float, weight_bytes: float, state_bytes: float) -> float:
    """HBM bytes one trainable parameter's update moves: its gradient read, its weight and states read and written."""
    return grad_bytes + 2 * (weight_bytes + state_bytes)


def gpu_optimizer_step_bytes(arch: Architecture, setup: TrainingSetup, par: Parallelism) -> float:
    """HBM bytes one GPU's optimizer step moves per optimizer step (0 where the optimizer is offloaded to the CPU).

    The GPU's share of the trainable parameters: its TP x PP split (an even split of the layers' parameters, as the
    offload's copies are counted), then its ZeRO shard over ``data_parallel`` from ZeRO-1 on; at ZeRO-0 a full
    fine-tune under expert parallelism holds ``1 / ep`` of the routed experts.
    """
    if setup.offloads_optimizer():
        return 0.0
    opt = OPTIMIZERS[setup.optimizer]
    model_parallel = par.tp * par.pp
    if setup.method == "full":
        routed = routed_total_params(arch) if setup.expert_parallel > 1 and setup.zero_stage == 0 else 0
        trainable = (arch.params_total - routed + routed / setup.expert_parallel) / model_parallel
        main = framework_profile(setup.framework).main_grad_bytes if setup.framework else None
        per_param = optimizer_bytes_per_param(main or opt.grad_bytes, opt.weight_bytes, opt.state_bytes)
    else:
        targets = adapter_targets(arch, setup.lora_targets, setup.framework)
        trainable = sum(lora_params_split(arch, setup.lora_rank, targets)) / model_parallel
        per_param = optimizer_bytes_per_param(opt.adapter_bytes, opt.adapter_bytes, opt.moment_bytes)
    if setup.zero_stage >= 1:
        trainable /= max(1, setup.data_parallel)
    return trainable * per_param
