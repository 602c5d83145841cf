"""Host RAM a training job holds while it loads the model's checkpoint (newuser29 item 3).

Two ways a trainer reads the checkpoint:

- **shard by shard** (LoRA and QLoRA with unsharded model states, ZeRO 0-2): each GPU's process loads the model
  with a ``device_map`` or a ``quantization_config`` (bitsandbytes), which implies ``low_cpu_mem_usage``: the model is
  created on the meta device and "the state dict is then loaded inside it (shard by shard in the case of a sharded
  checkpoint)" (https://huggingface.co/docs/transformers/main_classes/model#large-model-loading); each tensor goes to
  the GPU (and is quantized there) as its shard is read. The files are memory-mapped safetensors: their pages are
  file cache (the plan's soft ``model_file_bytes``), so what a process holds at once is about one shard. A
  checkpoint is sharded by ``save_pretrained``'s ``max_shard_size``, 5 GB by default
  (https://huggingface.co/docs/transformers/big_models: "by default it is 5GB"), and a tensor larger than that gets
  a shard of its own; a checkpoint smaller than a shard is one file, held whole.
- **whole, once** (model states sharded by ZeRO-3 / FSDP, and Megatron-LM): the model is built in host memory
  before it is sharded, by one process: FSDP's ``cpu_ram_efficient_loading`` "only the first process loads the
  pretrained model checkpoint while all other processes have empty weights"
  (https://huggingface.co/docs/accelerate/usage_guides/fsdp), and under ZeRO-3 ``from_pretrained`` builds it inside
  ``deepspeed.zero.Init``, each parameter partitioned as it is created
  (https://huggingface.co/docs/transformers/main/en/deepspeed, "Constructing massive models"). torchtune and a
  plain FSDP2 loop shard with FSDP2 at ZeRO-2 as at ZeRO-3 (:data:`ONCE_A_JOB_FRAMEWORKS`): they read the
  Hugging Face checkpoint, whole.
- **its own shards, a tensor at a time** (Megatron-LM, fix197; newuser111 counted a 70B's 131 GiB on one process):
  Megatron-LM loads its own distributed checkpoint (``--ckpt-format`` ``torch_dist`` by default,
  https://github.com/NVIDIA/Megatron-LM/blob/main/megatron/training/arguments.py; a Hugging Face model is converted
  to it before training). Each rank hands ``dist_checkpointing.load`` its model's sharded state dict, whose local
  shards are the rank's own GPU tensors (``mcore_to_pyt_state_dict`` / ``sharded_tensor_to_torch_sharded_tensor``,
  https://github.com/NVIDIA/Megatron-LM/blob/main/megatron/core/dist_checkpointing/strategies/torch.py), and
  PyTorch DCP's ``FileSystemReader.read_data`` reads each stored item into host memory, narrows it to the rank's
  slice and copies it into that tensor before the next
  (https://github.com/pytorch/pytorch/blob/main/torch/distributed/checkpoint/filesystem.py). A process holds about
  one stored tensor at once: the largest, whole, where the checkpoint was saved at another TP than the job's.
  Counted once a GPU on the node. The legacy ``--ckpt-format torch`` (each rank ``torch.load``-s its whole
  ``mp_rank`` file) is not modelled.
- **quantized, once** (QLoRA with a bitsandbytes base, model states sharded by ZeRO-3 / FSDP, under the Hugging Face
  Trainer family or DeepSpeed, newuser47 item 4): the checkpoint is read shard by shard and quantized as it loads, and
  each node's first process keeps the quantized base in host memory for FSDP to shard while the others build it on
  the meta device (transformers #32276 / #33154, https://github.com/huggingface/transformers/pull/32276: "I was able to
  load the hugging-quants/Meta-Llama-3.1-405B-BNB-NF4-BF16 model with ~240GiB system RAM instead of the previous 1.6TB
  RAM"; before it every rank held it, https://github.com/huggingface/transformers/issues/31577). torchtune's QLoRA
  loads the bf16 checkpoint on one process and quantizes on the GPUs: whole, once, as above.
- **whole, by each GPU's process** (full fine-tuning at ZeRO-0/1/2 under the Hugging Face Trainer family and
  DeepSpeed, newuser43 item 4): each rank of ``torchrun`` / ``deepspeed`` / ``accelerate launch`` calls
  ``from_pretrained`` without a ``device_map`` and materializes the whole model on the CPU before ``.to(device)``:
  "if you are using torch.distributed to launch a distributed training, each process will load the pretrained
  model" (https://huggingface.co/docs/transformers/v4.18.0/en/big_models). Counted once a GPU on the node.

The trainer processes' own resident memory (Python, PyTorch and the CUDA runtime), their data loaders and pinned
transfer buffers are in the node's OS reserve (``host_os_ram_bytes``), as before.
"""

from __future__ import annotations

from generator.named_tuple import NamedTuple
from generator.sizing.architecture import Architecture
from generator.sizing.constants import Constants
from generator.sizing.frameworks import framework_profile
from generator.sizing.memo import memoized
from generator.sizing.precision import weight_format
from generator.sizing.training import BNB_QUANT_STATE_FORMATS, TrainingSetup
from generator.sizing.weights import size_weights
from generator.units import GB, GIB

#: bf16 bytes a parameter of the checkpoint a trainer loads (the 16-bit weights the model is published in).
_BF16_BYTES = 2

#: Frameworks whose full fine-tune builds the model in host memory once a job at any ZeRO stage: torchtune and a
#: plain FSDP2 loop shard with FSDP2 (ZeRO-2 is ``reshard_after_forward=False``) and load the state dict on one
#: process (``cpu_ram_efficient_loading``). The Hugging Face Trainer family (hf, trl, axolotl, llama-factory, unsloth)
#: and DeepSpeed build it in each rank below ZeRO-3 (the module's docstring).
ONCE_A_JOB_FRAMEWORKS = ("torchtune", "fsdp2")

#: Frameworks that load their own distributed checkpoint, each rank its shards a tensor at a time (fix197).
SHARDED_LOAD_FRAMEWORKS = ("megatron",)


class CheckpointLoad(NamedTuple):
    """Host RAM held while the checkpoint is loaded, and what it is."""

    #: Bytes held at the peak of the load, by one process (``per_process``) or by one process of the job.
    held_bytes: int
    #: Each GPU's process holds ``held_bytes`` at once (shard by shard), or one process per job (whole).
    per_process: bool
    #: The whole bf16 checkpoint.
    checkpoint_bytes: int
    #: What is counted, as a reason or a refusal says it.
    text: str


@memoized  # pure; the training search asks it for every layout of every job (perf12: 16,228 calls of 4 jobs, one model)
def _largest_tensor_bytes(arch: Architecture) -> int:
    """bf16 bytes of the checkpoint's largest tensor: the embedding table or one weight matrix."""
    matrices = (linear.in_features * linear.out_features for layer in arch.layers for linear in layer.linears)
    return max(arch.embedding_params, max(matrices, default=0)) * _BF16_BYTES


def size_checkpoint_load(arch: Architecture, setup: TrainingSetup, consts: Constants) -> CheckpointLoad:
    """Host RAM ``setup`` holds while loading ``arch``'s checkpoint (see the module's docstring)."""
    whole = size_weights(arch, weight_format("bf16")).total_bytes
    framework = framework_profile(setup.framework).name if setup.framework else None
    if framework in SHARDED_LOAD_FRAMEWORKS:
        held = min(whole, _largest_tensor_bytes(arch))
        text = (
            f"{held / GIB:.2f} GiB a GPU's process holds loading its shards of the distributed (torch_dist) "
            "checkpoint: one stored tensor at a time, read and copied into its GPU (the largest, whole)"
        )
        return CheckpointLoad(held, True, whole, text)
    # on one GPU the one process is the job's: the text below says "once" (the Trainer family has no TP / PP)
    each_framework = framework not in ONCE_A_JOB_FRAMEWORKS  # the Trainer family and DeepSpeed
    each_rank = each_framework and setup.zero_stage < 3 and setup.data_parallel > 1
    if setup.method == "full" and each_rank:
        text = (
            f"{whole / GIB:.2f} GiB: the whole bf16 checkpoint, built in host memory by each GPU's process as the job "
            f"starts (full fine-tuning at ZeRO-{setup.zero_stage}: every rank's from_pretrained without a device_map; "
            "only ZeRO-3's zero.Init and FSDP's cpu_ram_efficient_loading build it once)"
        )
        return CheckpointLoad(whole, True, whole, text)
    base = weight_format(setup.base_precision_name)
    if setup.zero_stage >= 3 and setup.method != "full" and base.name in BNB_QUANT_STATE_FORMATS and each_framework:
        held = size_weights(arch, base).total_bytes
        text = (
            f"{held / GIB:.2f} GiB: the {base.name} base, quantized as the bf16 checkpoint's shards are read and held in "
            "host memory by one process a node as the job starts (ZeRO-3 / FSDP; the other ranks build it on the meta "
            "device)"
        )
        return CheckpointLoad(held, False, whole, text)
    if setup.method == "full" or setup.zero_stage >= 3:
        why = "full fine-tuning" if setup.method == "full" else f"ZeRO-{setup.zero_stage} / FSDP"
        text = f"{whole / GIB:.2f} GiB: the whole bf16 checkpoint, built in host memory by one process as the job starts ({why})"
        return CheckpointLoad(whole, False, whole, text)
    shard = max(consts.checkpoint_shard_bytes, _largest_tensor_bytes(arch))
    if whole <= shard:
        text = f"{whole / GIB:.2f} GiB a GPU's process holds loading the bf16 checkpoint: its one file"
        return CheckpointLoad(whole, True, whole, text)
    text = (
        f"{shard / GIB:.2f} GiB a GPU's process holds loading the bf16 checkpoint: one {shard / GB:.3g} GB shard of its "
        f"{whole / GIB:.2f} GiB at a time (memory-mapped: the rest is page cache)"
    )
    return CheckpointLoad(shard, True, whole, text)


def training_host_ram(load: CheckpointLoad, offloaded_per_gpu: int, gpus: int) -> tuple[int, str]:
    """Host RAM a node of ``gpus`` GPUs of the job must hold beyond its OS reserve, and what it is.

    The larger of what loading the checkpoint holds (:func:`size_checkpoint_load`: per GPU's process, or once) and
    what the setup offloads to the CPU over the node's GPUs: the shards are released once the weights are on the
    GPUs, before the optimizer states or saved activations are offloaded.
    """
    loading = load.held_bytes * (gpus if load.per_process else 1)
    offloaded = offloaded_per_gpu * gpus
    if offloaded > loading:
        text = (
            f"{offloaded / GIB:.2f} GiB the setup offloads to the CPU (optimizer states, parameters or saved "
            f"activations of {gpus} GPU(s)), more than loading the checkpoint holds"
        )
        return offloaded, text
    each = f" x {gpus} GPUs" if load.per_process and gpus > 1 else ""
    return loading, f"{load.text}{each}"
