"""``specgen estimate``: argument parsing and output for the quick calculator.

This command is parsed with argparse instead of click: importing click alone costs about
half of the 0.1 s cold-start budget of this command. Usage errors still exit 2.
"""

from __future__ import annotations

import argparse
import decimal
import json
import math
import os
import re
import sys

from generator.calculator.estimate import (
    DATASET_NEEDS_GPU,
    LORA_REQUEST_FIELDS,
    MAX_SEQ_LEN,
    SERVING_ENGINES,
    SHARE_REPLICAS,
    SHARE_STRATEGIES,
    EstimateRequest,
    estimate,
)
from generator.errors import SpecgenError, UsageError, arithmetic_error, one_line
from generator.sizing.slot_step import slot_step_text
from generator.units import GIB, hours_text, seconds_text

#: The tasks ``--task`` takes beside ``generate`` (the workload's ``inference.task``); here, not in
#: :mod:`generator.calculator.pooling_estimate`, which loads ``typing`` (an estimate of a generating model loads neither).
POOLING_TASKS = ("embed", "score")

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

    from generator.calculator.machine import FixedSpec


#: A whole number, also in scientific notation (1e9, 2.5e10: the workload file's YAML takes them too)
_WHOLE = re.compile(r"[+-]?[0-9]+(\.[0-9]*)?([eE]\+?[0-9]{1,3})?")
#: Beyond every range check's limit: a larger figure is refused as it is parsed (its digits are not echoed)
_MOST_WHOLE = 10**18
#: nan and inf pass as numbers: the range checks refuse them by name (exit 2, as any value out of range)
_DECIMAL = re.compile(r"[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|nan|inf|infinity)", re.IGNORECASE)


def _whole(text: str, field: str = "") -> int:
    """A whole number in ASCII digits (``int()`` alone would take other scripts' digits and underscores).

    ``4k`` / ``50,000`` are refused with the digits to write, as the workload file's errors say them (newuser89 left
    item 2); ``field`` names what the number counts (a k of tokens is also 1,024).
    """
    value = decimal.Decimal(text.strip()) if _WHOLE.fullmatch(text.strip()) else None
    if value is None or value != value.to_integral_value() or abs(value) > _MOST_WHOLE:
        from generator.workload.schema import written_number_hint  # the workload package only on a refusal (cold start)

        hint = written_number_hint(text, field)
        raise argparse.ArgumentTypeError(f"expected a whole number (at most 10^18), got {text!r}{hint}")
    return int(value)


def _tokens(text: str) -> int:
    """A whole number of tokens (a context or sequence length): ``4k`` is told 4000 or 4096 (:func:`_whole`)."""
    return _whole(text, "tokens")


def _gpu_id(text: str) -> str:
    """``--gpu``'s catalog id (:func:`generator.catalog.gpu_id_for`); an unknown one is refused where it is looked up."""
    from generator.catalog import gpu_id_for

    return gpu_id_for(text)


def _number(text: str) -> float:
    """A decimal number in ASCII digits (no underscores or other scripts' digits, which ``float()`` takes)."""
    if not _DECIMAL.fullmatch(text.strip()):
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}")
    value = float(text)
    if math.isinf(value) and "inf" not in text.lower():  # fuzz31 item 10: 1e400 was reported as "got inf"
        raise argparse.ArgumentTypeError(f"{text.strip()!r} is too large for a number (it reads as infinity)")
    return value


def _constant(text: str) -> tuple[str, float]:
    name, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    try:
        return name.strip(), _number(value)
    except argparse.ArgumentTypeError as exc:
        said = f": {exc}" if "too large" in str(exc) else f" must be a number, got {value!r}"
        raise argparse.ArgumentTypeError(f"value of {name!r}{said}") from None


EPILOG = (
    "Exit codes: 0 done; 1 a value is invalid (an unknown model, GPU, CPU or precision, "
    "a malformed config.json or engine constant, or a layout the model does not split into: --tp, --pp or --ep "
    "against its attention heads, layers or experts); 2 a usage error (an unknown option, text where a number is "
    "expected, a number outside the option's range below or a --set constant's, a value not among the choices, or "
    "options that do not go together, such as --ram-gib with --train, "
    "--precision with --train full, a training option without --train, a machine option without --ram-gib, "
    "--max-seq-len or --dataset-tokens without --gpu, --epochs without --dataset-tokens, --offload-params without --zero 3 "
    "or --max-batched-tokens with --engine sglang); "
    "3 the model cannot run on the given machine (--ram-gib; without --gpu, llama.cpp on its CPU alone) or does not fit "
    "the GPU given (a GGUF precision without --engine, as llama.cpp holds it), or its share of it with --mig / --share "
    "(the breakdown is still printed). --mig or --share (not both) size one replica of one GPU (no --tp, --pp or --ep "
    "above 1, no --train or --ram-gib) in one pod's share of --gpu, as a plan does under kubernetes.gpu_sharing; "
    f"--share {SHARE_REPLICAS[0]} to {SHARE_REPLICAS[1]}; an unknown MIG profile, or a GPU without MIG or not NVIDIA's, "
    "exits 1. "
    "Counts (--context, --batch, --tp, --pp, --ep, --gpus, "
    "--input-tokens, --output-tokens, --p95-input-tokens, --max-batched-tokens, --micro-batch, --accumulation, --seq-len, "
    "--lora-rank, --min-context, --dataset-tokens) "
    "must be at least 1 (--dataset-tokens at most 10^15); --epochs in (0, 1000]; --gpu-memory-utilization in [0.001, 1]; "
    "--ram-gib in (0, 65,536]; --nvme-read-gb-per-s at least 0.01; "
    "--reserved-ram-gib, --swap-gib and --nvme-gib at least 0; --reserved-ram-gib (default 8) less than --ram-gib "
    "(exit 1, as hardware.fixed); --pcie-lanes 1, 4, 8 or 16; --pcie-gen 3 to 6; "
    "--memory-channels 1 to 96; --ddr-mt-per-s 1000 to 12000; --cpu-sockets 1 to 8; --cpu-cores 1 to 512; "
    "--threads (with --cpu) 1 to the part's threads; "
    "--gpus at most 16 with --ram-gib; "
    "--lora-adapters and --max-cpu-loras 1 to 100,000, --lora-max-rank 1 to 512 (vLLM: 1, 8, 16, 32, 64, 128, 256, 320 or "
    "512), --max-loras 1 to 1,024 and at most --lora-adapters, --max-cpu-loras at least --max-loras (a workload's "
    "inference.lora rules; a target module the model lacks exits 1). "
    "A value out of its range is a usage error, exit 2."
)

#: Options that only training reads, and those that only an existing machine (``--ram-gib``) reads.
TRAINING_OPTIONS = (
    "optimizer", "zero_stage", "micro_batch", "accumulation", "seq_len", "checkpointing", "flash_attention", "lora_rank",
    "lora_dropout", "lora_targets", "offload_optimizer", "paged_optimizer", "offload_params", "framework", "loss",
    "activation_offload", "optimizer_in_backward", "fused_kernels", "max_seq_len", "dataset_tokens", "epochs",
    "compute_precision",
)  # fmt: skip
LORA_OPTIONS = ("lora_rank", "lora_dropout", "lora_targets")
#: Their values where not given.
LORA_DEFAULTS: dict[str, Any] = {"lora_rank": 16, "lora_dropout": 0.0, "lora_targets": "all-linear"}
MACHINE_OPTIONS = (
    "reserved_ram_gib", "swap_gib", "nvme_gib", "nvme_read_gb_per_s", "pcie_gen", "pcie_lanes", "cpu", "memory_channels",
    "ddr_mt_per_s", "cpu_sockets", "cpu_cores", "threads", "allow_precision", "min_context", "offload_engine",
)  # fmt: skip
#: The options of LoRA adapters served (a workload's inference.lora).
LORA_SERVING_OPTIONS = tuple(LORA_REQUEST_FIELDS.values())
#: Inference options a training estimate does not read, and those placement on an existing machine does not read.
INFERENCE_ONLY_OPTIONS = (
    "kv_precision", "batch", "input_tokens", "output_tokens", "p95_input_tokens", "max_batched_tokens", "max_num_seqs",
    "engine", "mem_fraction_static", "gpu_memory_utilization", "mig", "share", "share_strategy", "cached_prompt_share",
    *LORA_SERVING_OPTIONS,
)  # fmt: skip
NOT_FOR_MACHINE_OPTIONS = (
    "tp", "pp", "ep", "max_batched_tokens", "max_num_seqs", "gpu_memory_utilization", "engine",
    "mem_fraction_static", "p95_input_tokens", "mig", "share", "share_strategy", "cached_prompt_share",
    *LORA_SERVING_OPTIONS,
)  # fmt: skip


def terminal_columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` finds it: ``COLUMNS``, else the terminal's, else 80.

    argparse asks shutil for it, and shutil loads the compression modules: a tenth of the estimate's imports.
    """
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's help layout at the width it would choose itself (less 2), found without importing shutil."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=terminal_columns() - 2)


def _framework_name(text: str) -> str:
    """``--framework`` as the framework's own name: another name for it (``peft``, ``fsdp``) becomes the one it names.

    A workload takes the same names (fuzz20 item 17); the output then says whose defaults apply (fsdp2's, not fsdp's).
    """
    from generator.sizing.frameworks import FRAMEWORK_ALIASES

    key = text.lower()
    return FRAMEWORK_ALIASES.get(key, key)


class _EngineGiven(argparse.Action):
    """``--engine``, noting that it was given: ``--engine vllm`` is the default's value, set aside on a machine."""

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option_string: str | None = None
    ) -> None:
        setattr(namespace, self.dest, values)
        namespace.engine_given = True


#: Why ``--engine vllm`` is set aside with ``--ram-gib`` (review73 item 2: the estimate said "timed for llama.cpp" only).
ENGINE_SET_ASIDE = (
    "--engine vllm set aside: placement on an existing machine (--ram-gib) offloads weights to RAM and NVMe as llama.cpp "
    "does (-ngl, -ot), which specgen plans and times; vLLM's own offload (--cpu-offload-gb) is not sized. Pick the "
    "offload engine with --offload-engine"
)


class _SuggestingParser(argparse.ArgumentParser):
    """argparse, naming the closest option of its own for an option it does not know (newuser79 item 10).

    ``--kv-cache-precision`` (the workload's ``kv_cache_precision``) was refused with "unrecognized arguments" alone,
    where a workload's unknown field is told "did you mean"; click, specgen's other commands' parser, does the same.
    """

    def error(self, message: str) -> NoReturn:
        prefix = "unrecognized arguments: "
        if message.startswith(prefix):
            import difflib  # only on this error: an estimate's start loads no more than it did

            known = sorted(s for s in self._option_string_actions if s.startswith("--"))
            asked = [a.split("=", 1)[0] for a in message[len(prefix) :].split() if a.startswith("--")]
            hints = [f"{a}: did you mean {close[0]}?" for a in asked if (close := difflib.get_close_matches(a, known, 1))]
            if hints:
                message = f"{message} ({'; '.join(hints)})"
        super().error(message)


def build_parser() -> argparse.ArgumentParser:
    """The estimate command's options."""
    p = _SuggestingParser(
        prog="specgen estimate",
        description="How much VRAM / how many GPUs for one model: a catalog id, a config.json, or a directory holding one.",
        epilog=EPILOG,
        formatter_class=_HelpFormatter,
    )
    p.add_argument(
        "model",
        help="catalog model id (see 'specgen catalog models'), a Hugging Face id org/name[@revision], "
        "or a path to a config.json, a model directory (safetensors headers are read) or a .gguf file",
    )
    p.add_argument(
        "--from-hub",
        action="store_true",
        help="read an org/name id from the Hugging Face Hub even when the catalog has it (HF_TOKEN, HF_HUB_OFFLINE, "
        "HF_ENDPOINT apply)",
    )
    p.add_argument(
        "--precision",
        help="weight format: bf16, fp16, fp32, fp8, int8, int4, nf4, mxfp4, q8_0, q4_k_m, ... (default: the checkpoint's)",
    )
    p.add_argument(
        "--kv-precision",
        "--kv-cache-precision",  # a workload's kv_cache_precision (newuser79 item 10)
        help="KV cache precision: bf16, fp16, fp8, int8 (default: bf16)",
    )
    p.add_argument(
        "--context",
        type=_tokens,
        dest="context_tokens",
        help="context tokens per sequence (default: 4096, or the model's maximum if smaller)",
    )
    p.add_argument("--batch", type=_whole, default=1, help="concurrent sequences (default 1)")
    p.add_argument("--tp", type=_whole, default=1, help="tensor-parallel GPUs per replica")
    p.add_argument("--pp", type=_whole, default=1, help="pipeline-parallel stages per replica")
    p.add_argument(
        "--ep",
        type=_whole,
        default=1,
        help="MoE models only: GPUs a replica's routed experts are spread over (attention TP x DP beside them); "
        "with --train, the expert-parallel group inside data parallel",
    )
    p.add_argument(
        "--gpu",
        type=_gpu_id,
        help="GPU catalog id, or the start of one id up to a hyphen (rtx-4090): adds capacity (KV tokens, max concurrency, fits)",
    )
    p.add_argument("--gpu-memory-utilization", type=_number, help="fraction of GPU memory the runtime may use (default 0.9)")
    p.add_argument(
        "--engine",
        choices=SERVING_ENGINES,
        default="vllm",
        action=_EngineGiven,
        help="serving engine whose KV accounting sizes the cache: vllm (default) or sglang",
    )
    p.add_argument(
        "--mem-fraction-static",
        type=_number,
        help="SGLang's --mem-fraction-static in (0, 1) (default: SGLang's own, from the GPU's memory)",
    )
    p.add_argument(
        "--task",
        choices=("generate", *POOLING_TASKS),
        default="generate",
        help="what a request does: generate (default), or a pooling server's embed / score (vLLM --runner pooling: one "
        "forward pass over the input, no decode; needs --gpu and --input-tokens)",
    )
    p.add_argument("--input-tokens", type=_tokens, help="average prompt tokens: adds throughput (needs --gpu)")
    p.add_argument("--output-tokens", type=_tokens, help="average generated tokens: adds throughput (needs --gpu)")
    p.add_argument(
        "--p95-input-tokens",
        type=_whole,
        help="95th-percentile prompt tokens (a long-prompt tail, as a workload's p95_input_tokens): adds that prompt's "
        "TTFT alone, in the TTFT p95 (needs --gpu)",
    )
    p.add_argument(
        "--cached-prompt-share",
        type=_number,
        help="share of each prompt the engine's prefix cache holds, 0 <= s < 1 (as a workload's cached_prompt_share: "
        "vLLM's prefix cache hit rate): the TTFT and the prefill share count the new tail alone, the KV cache the whole "
        "prompt (needs --gpu)",
    )
    p.add_argument(
        "--max-batched-tokens",
        type=_whole,
        help="tokens per forward pass (the prefill chunk; vLLM's profiling run reserves for them) (default: vLLM's on "
        "the GPU, 8192 on GPUs of 70 GiB or more other than A100, else 2048)",
    )
    p.add_argument(
        "--max-num-seqs",
        type=_whole,
        help="most sequences a replica runs at once, vLLM's --max-num-seqs (default: the engine's on the GPU; vLLM 1024 on "
        "GPUs of 70 GiB or more other than A100, else 256)",
    )
    s = p.add_argument_group("a share of the GPU (with --gpu): a replica of one GPU sized as a plan under gpu_sharing does")
    s.add_argument(
        "--mig",
        metavar="PROFILE",
        help="size in one MIG instance of --gpu (e.g. 1g.20gb, 3g.40gb: a profile the GPU lacks is refused with those it "
        "has): its memory as nvidia-smi mig -lgip reports it, its SMs and memory bandwidth",
    )
    s.add_argument(
        "--share",
        type=_whole,
        metavar="N",
        help=f"size in one of N ({SHARE_REPLICAS[0]}-{SHARE_REPLICAS[1]}) replicas sharing --gpu by time-slicing or MPS: "
        "1/N of its memory, compute and bandwidth (every replica at full load)",
    )
    s.add_argument(
        "--share-strategy",
        choices=SHARE_STRATEGIES,
        help="how --share shares the GPU (default time-slicing): the sizing is the same; the vLLM setting differs (each "
        "time-sliced pod's --gpu-memory-utilization is its fraction of the whole GPU)",
    )
    a = p.add_argument_group("LoRA adapters served over the model (a workload's inference.lora; vLLM or SGLang)")
    a.add_argument(
        "--lora-adapters",
        type=_whole,
        metavar="N",
        help="adapters served (inference.lora.adapters, 1-100,000): their GPU slots come out of the KV cache, their "
        "copies take host RAM, the LoRA kernels time every step; needs --lora-max-rank",
    )
    a.add_argument(
        "--lora-max-rank",
        type=_whole,
        metavar="R",
        help="the adapters' highest rank, --max-lora-rank (max_rank, 1-512; vLLM takes 1, 8, 16, 32, 64, 128, 256, 320, "
        "512): every slot is sized at it",
    )
    a.add_argument(
        "--max-loras",
        type=_whole,
        metavar="N",
        help="adapters one batch holds, each a GPU slot: vLLM's --max-loras (default 1), SGLang's --max-loras-per-batch "
        "(default 8); at most --lora-adapters",
    )
    a.add_argument(
        "--max-cpu-loras",
        type=_whole,
        metavar="N",
        help="adapters each engine worker keeps in host RAM: vLLM's --max-cpu-loras, SGLang's --max-loaded-loras "
        "(default: --lora-adapters); at least --max-loras",
    )
    a.add_argument(
        "--lora-target-modules",
        metavar="NAMES",
        help="comma-separated modules the adapters adapt (q_proj,v_proj, ...), or all-linear (default): their host size, "
        "and SGLang's slots (vLLM gives every linear layer a slot)",
    )
    t = p.add_argument_group("training (with --train)")
    t.add_argument("--train", choices=("full", "lora", "qlora"), help="size a training / fine-tuning job instead of inference")
    t.add_argument(
        "--optimizer",
        help="adamw (16 B/param), adamw-torch-amp (18), adamw-bf16, adamw-8bit, adamw-8bit-bf16, sgd, adafactor "
        "(default: the --framework's regime, torchtune adamw-bf16, or on one GPU its full fine-tune's bitsandbytes "
        "PagedAdamW8bit, adamw-8bit-bf16 with its states paged to host RAM; else adamw; a regime given is not paged)",
    )
    t.add_argument(
        "--zero",
        type=_whole,
        dest="zero_stage",
        choices=(0, 1, 2, 3),
        help="ZeRO / FSDP sharding stage (default: 3 for --framework fsdp2 or torchtune over several GPUs; else 0)",
    )
    t.add_argument(
        "--gpus",
        type=_whole,
        help="total GPUs of a training job (data parallel = gpus / (tp x pp)), or of an existing machine with --ram-gib "
        "(the layers are split over them, as llama.cpp's --tensor-split)",
    )
    t.add_argument("--micro-batch", type=_whole, default=1, help="sequences per GPU per step")
    t.add_argument(
        "--accumulation",
        type=_whole,
        default=1,
        help="gradient accumulation steps (default 1): above 1 the gradients stay resident beside each micro-batch",
    )
    t.add_argument("--seq-len", type=_tokens, help="training sequence length (default: --context or 2048)")
    t.add_argument(
        "--gradient-checkpointing",
        nargs="?",
        const="full",
        default=None,
        dest="checkpointing",
        choices=("none", "selective", "full"),
        help=(
            "activation checkpointing (default: the fastest of none, selective and full that fits the --gpu, as a plan "
            "sizes it; full without --gpu)"
        ),
    )
    t.add_argument(
        "--no-flash-attention",
        action="store_false",
        dest="flash_attention",
        help="eager attention: keeps heads x seq x seq scores",
    )
    # LoRA options default to None, so that one given at its default value with --train full is refused (newuser28
    # item 13: --lora-rank 16 was dropped without a word, as a workload refuses it)
    t.add_argument("--lora-rank", type=_whole, help=f"LoRA rank (default {LORA_DEFAULTS['lora_rank']})")
    t.add_argument("--lora-dropout", type=_number, help="PEFT lora_dropout, 0 <= p < 1 (default 0.0: nothing saved for it)")
    t.add_argument("--lora-targets", help="comma-separated module names (lm_head, embed_tokens too), or all-linear (default)")
    t.add_argument("--offload-optimizer", action="store_true", help="ZeRO-Offload: optimizer states and gradients in host RAM")
    t.add_argument(
        "--paged-optimizer",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="bitsandbytes' paged AdamW (axolotl's and TRL's paged_adamw_8bit): its states paged to host RAM when the GPU "
        "runs short, sized there (default: the framework recipe's, on for torchtune's single-device full fine-tune)",
    )
    t.add_argument(
        "--offload-params", action="store_true", help="ZeRO-3 / FSDP parameter offload to host RAM (LoRA/QLoRA: the frozen base)"
    )
    t.add_argument(
        "--framework",
        type=_framework_name,
        help="fine-tuning framework whose defaults apply: hf, trl, trl+liger, torchtune, unsloth, axolotl, axolotl+liger, "
        "llama-factory, deepspeed, fsdp2, megatron (or a name a workload also takes for one of them: peft, transformers, "
        "hf-trainer, liger, fsdp, llamafactory, megatron-lm)",
    )
    t.add_argument(
        "--loss",
        choices=("standard", "chunked", "inplace", "fused"),
        help="cross-entropy: full logits, chunked, in-place or fused",
    )
    t.add_argument(
        "--activation-offload", action="store_const", const=True, default=None, help="checkpointed activations in host RAM"
    )
    t.add_argument(
        "--optimizer-in-backward",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="step each parameter during backward (--no-optimizer-in-backward: after it; default: the framework recipe's, "
        "on for torchtune's single-device full fine-tune)",
    )
    t.add_argument(
        "--fused-kernels",
        action="store_const",
        const=True,
        default=None,
        help="RMSNorm and SwiGLU fused (torch.compile, Liger, Unsloth): they save only their inputs",
    )
    t.add_argument(
        "--compute-precision",
        choices=("bf16", "fp8"),
        default=None,
        help="what the linear layers' GEMMs run in (a workload's training.compute_precision; default bf16): fp8 is FP8 "
        "training (Megatron-LM / NeMo through Transformer Engine, torchtitan / torchao float8), timed at the GPU's dense "
        "FP8 rate; --train full, --framework megatron or fsdp2, a GPU with FP8",
    )
    t.add_argument(
        "--max-seq-len",
        action="store_true",
        help=f"answer the longest training sequence that fits --gpu (at most {MAX_SEQ_LEN:,} tokens: --seq-len's limit)",
    )
    t.add_argument(
        "--dataset-tokens",
        type=_whole,
        help="tokens in one pass over the training data (a workload's training.dataset_tokens): adds the run's hours and "
        "GPU-hours (needs --gpu)",
    )
    t.add_argument(
        "--epochs",
        type=_number,
        help="passes over --dataset-tokens (a workload's training.epochs; default 1)",
    )
    o = p.add_argument_group("an existing machine (with --ram-gib): offload planning")
    o.add_argument(
        "--detect",
        action="store_true",
        help="plan on the machine this runs on, as 'specgen detect' finds it; options given override what it finds",
    )
    o.add_argument(
        "--ram-gib",
        type=_number,
        help="installed system RAM, GiB: plan placement on this machine instead of sizing (without --gpu: llama.cpp on "
        "the CPU alone, its decode timed from the DIMMs' bandwidth and the cores)",
    )
    o.add_argument("--reserved-ram-gib", type=_number, default=8.0, help="RAM the host's other services need (default 8)")
    o.add_argument("--swap-gib", type=_number, default=0.0, help="configured swap, GiB")
    o.add_argument("--nvme-gib", type=_number, default=0.0, help="free NVMe for model files and offload, GiB")
    o.add_argument("--nvme-read-gb-per-s", type=_number, default=3.5, help="NVMe sequential read, GB/s (default 3.5)")
    o.add_argument("--pcie-gen", type=_whole, help="PCIe generation of the GPU slots (default: the GPU's)")
    o.add_argument(
        "--pcie-lanes",
        type=_whole,
        default=None,
        help=(
            "PCIe lanes per GPU (default: what --cpu, else the CPU assumed, gives each of --gpus GPU slots, x8 for two "
            "on a desktop CPU; else 16)"
        ),
    )
    o.add_argument("--cpu", help="CPU catalog id (memory channels and DDR speed)")
    o.add_argument("--memory-channels", type=_whole, help="populated DDR channels of the machine (all sockets)")
    o.add_argument("--ddr-mt-per-s", type=_whole, help="DDR transfer rate, MT/s")
    o.add_argument("--cpu-sockets", type=_whole, default=1, help="CPU sockets; offload counts one socket's memory (default 1)")
    o.add_argument(
        "--cpu-cores",
        type=_whole,
        help="cores of one socket llama.cpp's threads run on, for a CPU not in the catalog (default: the assumed CPU's, "
        "or none counted where --memory-channels and --ddr-mt-per-s are given; --detect counts /proc/cpuinfo's)",
    )
    o.add_argument(
        "--threads",
        type=_whole,
        help="llama.cpp's threads (-t) over all sockets, with --cpu, where fewer than its cores: the CPU's share is timed "
        "on threads / --cpu-sockets cores a socket, as the calibration rows count theirs (default: one thread a core; "
        "1 to the part's threads)",
    )
    o.add_argument("--allow-precision", action="append", default=[], help="a lower precision the plan may use (repeatable)")
    o.add_argument("--min-context", type=_tokens, help="shortest context acceptable if memory is tight")
    o.add_argument(
        "--offload-engine",
        choices=("llama.cpp", "ik_llama.cpp"),
        help="the llama.cpp-family server the machine runs, whose figures and llama-server line are planned: llama.cpp "
        "(default) or ik_llama.cpp (its faster CPU attention); ktransformers is not planned (attention on the GPU)",
    )
    o.add_argument(
        "--tool-calling",
        action="store_true",
        help="the server answers OpenAI tool calls (a workload's inference.tool_calling): its llama-server lines take "
        "--jinja, the GGUF's chat template giving the tool-call format",
    )
    p.add_argument("--set", action="append", type=_constant, default=[], metavar="NAME=VALUE", help="override an engine constant")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return p


def _gib(n: float) -> str:
    return f"{n / GIB:,.2f} GiB"


def _starting_tp(log: dict[str, Any]) -> str:
    """The "add GPUs" remedy's TP: the smallest that starts, or none up to the widest tried (newuser97 item 5)."""
    found = log.get("smallest_starting_tp")
    if found is None:
        return " (--tp)"
    if found["tp"] is None:
        most = found["server_gpus"]
        said = f"no --tp up to {most} starts it" if found["tp_tried"] else f"a server holds {most} of these GPUs"
        return f" ({said}; --pp spreads the layers over servers)"
    return f" (--tp {found['tp']} starts it, {_gib(found['weights_bytes_per_gpu'])} of weights a GPU)"


def _rate(tokens_per_s: float) -> str:
    """A serving rate as the JSON keeps it (one decimal) below 100 tokens/s, whole above.

    review70 item 13: "8 output tokens/s" was printed of the JSON's 8.5, "2" of 2.1 (5% off).
    """
    return f"{tokens_per_s:,.1f}" if tokens_per_s < 100 else f"{tokens_per_s:,.0f}"


#: Text labels of the parts of a training job's per-GPU weights (``memory.weight_parts`` in the JSON).
_WEIGHT_PART_LABELS = {
    "model": "model",
    "base": "base",
    "autocast_copy": "bf16 copy",
    "fp8_weight_cache": "fp8 copy",
    "adapters": "adapters",
    "dequant_buffer": "dequant",
}


def _layout_text(par: dict[str, Any]) -> str:
    """The parallel layout: a serving replica (experts over EP GPUs, attention TP x DP) or a training job (EP inside DP)."""
    pp = f" x PP {par['pp']}" if par["pp"] > 1 else ""
    if "data_parallel" in par:
        ep = f", experts EP {par['ep']} within DP" if par["ep"] > 1 else ""
        gpus = par["gpus_per_replica"] * par["data_parallel"]
        return f"TP {par['tp']} x PP {par['pp']} x DP {par['data_parallel']} = {gpus} GPU(s){ep}"
    if par["ep"] > 1:
        flags = f" (vLLM {par['vllm_flags']})" if "vllm_flags" in par else ""
        return (
            f"attention TP {par['tp']} x DP {par['attention_dp']}, experts EP {par['ep']}{pp} = "
            f"{par['gpus_per_replica']} GPU(s) per replica{flags}"
        )
    return f"TP {par['tp']} x PP {par['pp']} = {par['gpus_per_replica']} GPU(s) per replica"


#: What stops a saturated batch (``throughput.saturation_limit``), as the text says it.
_SATURATION_LIMITS = {
    "kv_cache": "all the KV cache holds",
    "max_num_seqs": "the engine's sequence limit, --max-num-seqs",
    "max_num_batched_tokens": "the decodes a step's tokens carry with the prompt tokens each brings, --max-batched-tokens",
}


def _training_line(job: dict[str, Any]) -> str:
    """The estimate's training line: method, optimizer, stage, loss, and whose defaults fill what is not given.

    Under a framework recipe with defaults of its own (torchtune's single-device full fine-tune) the line names the
    recipe and the techniques in effect that the other recipes leave off (newuser25 item 3).
    """
    paged = " (paged to host RAM)" if job["paged_optimizer"] else ""
    in_backward = ", optimizer stepped in backward" if job["optimizer_in_backward"] else ""  # fuzz23 item 8: said alike
    line = f"  training     {job['method_label']}, {job['optimizer']}{paged}, ZeRO-{job['zero_stage']}, loss {job['loss']}"
    line += in_backward + f", checkpointing {job['checkpointing']}" + _checkpointing_basis(job)
    # the framework fills the loss, offloads and optimizer; the adapters are the estimate's own (newuser54 item 5:
    # "torchtune's defaults" read as its recipes' rank 8 on q, v, output and the MLP)
    adapters = f"; LoRA rank {job['lora_rank']} on {job['lora_targets']}" if job["lora_rank"] is not None else ""
    if job["recipe"]:
        return f"{line} ({job['framework']}'s {job['recipe']} recipe defaults where not given{adapters})"
    return line + (f" ({job['framework']}'s defaults where not given{adapters})" if job["framework"] else adapters)


def _checkpointing_basis(job: dict[str, Any]) -> str:
    """Where the estimate's checkpointing is not what the framework runs unless told.

    newuser45 item 4: the Trainer's ``gradient_checkpointing`` defaults to False, and a LoRA that fits a 24 GB card
    with checkpointing does not without it; the line said neither.
    """
    from generator.sizing.frameworks import framework_profile, recomputes_ops

    if not job["framework"] or job["checkpointing"] == "none":
        return ""
    framework = job["framework"]
    own = framework_profile(framework).checkpointing
    notes = ["op-level: every other matmul's output saved"] if recomputes_ops(framework, job["checkpointing"]) else []
    passed = {entry["level"]: entry for entry in job.get("checkpointing_passed_over", ())}
    if own is None and "none" in passed:
        # fix195: the estimate chose this level over none, which does not fit or runs slower: giving none would not help
        from generator.calculator.lighter_checkpointing import passed_over_text

        notes.append(f"not {framework}'s default, {passed_over_text(passed['none'])}: turn it on")
    elif own is None:
        notes.append(f"not {framework}'s default, none: turn it on, or give --gradient-checkpointing none")
    elif own != job["checkpointing"]:
        notes.append(f"{framework} runs {own} unless told")
    return f" ({'; '.join(notes)})" if notes else ""


def _gpu_name(gpu_id: str) -> str:
    """The catalog's name of a GPU id (the id itself where the catalog has none: a GPU described by hand)."""
    from generator import catalog

    gpu = catalog.gpus().get(gpu_id)
    return gpu.name if gpu is not None else gpu_id


#: The head of the per-GPU memory table, and one row of it.
MEMORY_HEADER = "  per GPU        bytes            GiB"
HOST_MEMORY_HEADER = "  in RAM         bytes            GiB"


def _memory_row(key: str, value: int) -> str:
    return f"  {key:<12} {value:>16,} {value / GIB:>10.2f}"


def pooling_text(result: dict[str, Any]) -> str:
    """The pooling estimate as the terminal prints it."""
    m, par = result["model"], result["parallelism"]
    cap = result["capacity"]
    lines = [
        f"{one_line(m['id'])} ({m['model_type']}, {m['layers']} layers), task {result['task']} (vLLM --runner pooling)",
        f"  gpu          {cap['gpu']}",
        f"  precision    weights {result['precision']['weights']}, KV cache {result['precision']['kv_cache']}",
        f"  parallelism  TP {par['tp']} x PP {par['pp']} = {par['gpus_per_replica']} GPU(s) per replica",
        f"  requests     {result['input_tokens']:,} input tokens each, a context of {result['context_tokens']:,}",
    ]
    if share := result.get("gpu_share"):  # one pod's share of the GPU, as a plan sizes it (newuser100)
        lines.append(f"  share        {share['text']}; memory and rates below are the share's")
        if share["strategy"] == "time-slicing":  # its fraction is of the whole GPU (pod_memory_fraction)
            lines.append(
                f"               each pod sees the whole GPU: start vLLM with --gpu-memory-utilization "
                f"{share['pod_gpu_memory_utilization']:g} (its share of the GPU's memory)"
            )
    notes = [f"  note: {n}" for n in result.get("notes", ())]
    if not cap["fits"]:
        return "\n".join([*lines, f"  does NOT fit: {cap['why']}", *notes]) + "\n"
    mem, pooled = result["memory"]["per_gpu"], result["pooling"]
    lines += ["", MEMORY_HEADER]
    lines += [_memory_row(key, mem[key]) for key in ("weights", "kv_cache", "activations", "overhead", "total")]
    lines += [
        "",
        f"  throughput   {pooled['requests_per_s']:,.2f} requests/s, {pooled['input_tokens_per_s']:,.0f} input tokens/s at "
        f"saturation (forward passes of up to {pooled['requests_per_pass']} request(s); "
        f"{pooled['prefill_gflop_per_request']:,} GFLOP a request)",
        f"  latency      {pooled['latency_alone_p95_s'] * 1000:,.0f} ms p95 for one request alone (no queue)",
        *notes,
    ]
    return "\n".join(lines) + "\n"


def format_text(result: dict[str, Any]) -> str:
    """A readable breakdown table of an estimate."""
    m, params = result["model"], result["params"]
    # a machine without a GPU holds the model in its RAM (newuser86 item 2)
    mem = result["memory"]["per_gpu"] if "per_gpu" in result["memory"] else result["memory"]["host"]
    par = result["parallelism"]
    precision = result["precision"]
    training = "training" in precision  # a training job holds no KV cache: its lines are left out
    lines = [
        f"{one_line(m['id'])} ({m['model_type']}, {m['layers']} layers)",  # hostile85 item 4: a path's ESC / newline
        f"  parameters   {params['total']:,} total, {params['active']:,} active per token"
        + (f", {params['trainable']:,} trainable" if "trainable" in params else ""),
        f"  precision    weights {precision['weights']}: {precision['training']}"
        if training
        else f"  precision    weights {precision['weights']}"
        + (f" (the checkpoint's {precision['cast_from']}, cast: no bf16 on this GPU)" if "cast_from" in precision else "")
        + f", KV cache {precision['kv_cache']}",
        f"  parallelism  {_layout_text(par) if par['gpus_per_replica'] else 'none: no GPU, llama.cpp on the CPU'}",
        f"  weights      {_gib(result['weights']['bytes'])} whole model",
    ]
    if gpu_id := (result.get("capacity") or result.get("machine") or {}).get("gpu"):
        # the GPU sized by its full name: --gpu takes the start of an id (newuser47 item 5: rtx-6000 read as the
        # 48 GB RTX 6000 Ada, not the 24 GB Quadro RTX 6000, and the offload text named no GPU)
        lines.insert(1, f"  gpu          {gpu_id}: {_gpu_name(gpu_id)}")
    if training:
        lines.insert(3, _training_line(result["training"]))
    if not training:
        kv = result["kv_cache"]
        average = kv["sized_at"] == "average"  # a batch sized as a plan sizes it (newuser44 item 7)
        per_token = f"{kv['bytes_per_token']:,} B/token"
        if window := kv["window_bytes_per_sequence"]:  # newuser55 item 4: sliding layers do not grow with the context
            per_token = (
                f"{kv['bytes_per_token_growing']:,} B/token in the layers that keep every token, and at most "
                f"{window / 1e6:,.0f} MB a sequence in the sliding-window layers ({kv['bytes_per_token']:,} B/token if "
                "every layer kept every token)"
            )
        # review70 item 3: a batch at the average that holds less than one whole-context sequence is sized at that one
        floor = kv["sized_at"] == "one_whole_context"
        # review76 item 12: a batch that queues past the pool is sized at the sequences it holds at a time
        held = kv.get("sequences_held")
        count = held or kv["sequences"]
        sized = (
            f"one whole {kv['context_tokens']:,}-token sequence, more than {count} x "
            f"{kv['tokens_per_sequence']:,} tokens (--input-tokens + --output-tokens, as a plan sizes its batch): the "
            "pool holds one whole-context request at least, as batch 1 and vLLM's start-up check ask"
            if floor
            else f"{count} x {kv['tokens_per_sequence']:,} tokens"
        )
        whole = f"at the whole --context {kv['context_tokens']:,} each, {_gib(kv['whole_context_bytes'])}"
        if average:
            sized += " (--input-tokens + --output-tokens, as a plan sizes its batch" + ("" if held else f"; {whole}") + ")"
        if held:
            sized += (
                f", the sequences the pool holds at a time (the batch of {kv['sequences']:,} asked: "
                f"{_gib(kv['asked_bytes'])}" + (f"; {whole}" if average else "") + ")"
            )
        lines.append(
            f"  KV cache     {per_token}; {_gib(kv['bytes'])} for {sized}"
            + (
                f", recurrent state included ({state:,} B a sequence)"
                if (state := result["kv_cache"]["state_bytes_per_sequence"])
                else ""
            )
        )
    lines += ["", MEMORY_HEADER if "per_gpu" in result["memory"] else HOST_MEMORY_HEADER]
    for key in ("weights", "kv_cache", "activations", "gradients", "optimizer", "overhead", "total"):
        if key == "total":
            lines.append("  " + "-" * 40)
        lines.append(_memory_row(key, mem[key]))
        if key == "kv_cache" and not training and (held := result["kv_cache"].get("sequences_held")):
            lines.append(
                f"    ({held:,} sequences held at a time; the batch of {result['kv_cache']['sequences']:,} asked would "
                f"take {result['kv_cache']['asked_bytes_per_gpu'] / GIB:,.2f} GiB)"
            )
        parts = result["memory"].get("weight_parts", {})
        if key == "weights" and len(parts) > 1:
            lines += [f"    {_WEIGHT_PART_LABELS[n]:<10} {b:>16,} {b / GIB:>10.2f}" for n, b in parts.items()]
        beyond = training and result["training"]["activations_beyond_gradients"]
        if key == "activations" and beyond:  # newuser17 L1: the row is not the logits and saved tensors in full
            # newuser54 item 7: the row grew 2.69 to 15.11 GiB from 1 to 8 GPUs at one micro-batch, read as activations
            peak = result["memory"]["activation_peak"]
            lines.append(
                f"    (beyond the gradients: the activations and logits of a micro-batch peak at {peak / GIB:.2f} GiB, and "
                "backward frees a layer's activations as it allocates its gradients, so sharded gradients leave more of "
                "that peak in this row)"
            )
        if key == "overhead" and (reserve := result["memory"].get("allocator_reserve")):
            lines.append(
                f"    (of it {reserve / GIB:.2f} GiB: PyTorch's caching allocator's reserve beyond the allocated peak, "
                "sized by the micro-batch's fp32 logits)"
            )
    lines += _capacity_lines(result)
    cap = result.get("capacity")
    lines += _llama_cpp_lines(result)
    if "lora" in result:  # the adapters' slots, host RAM and kernels, each beside the replica without them
        from generator.calculator.lora_estimate import lora_lines

        lines += lora_lines(result)
    thr = result.get("throughput")
    if thr and "max_output_tokens_per_s" in thr:
        starts = cap is None or (cap["fits"] and cap.get("vllm_log", {}).get("starts", True))
        running = thr["steady_batch"]  # a batch above the saturated one: the replica runs that many, the rest wait
        steady = f"{running} of them run at once, " if running < result["kv_cache"]["sequences"] else ""
        whole = f" of the {running} running" if steady else ""
        tail = (
            f"; the {thr['p95_input_tokens']:,}-token p95 prompt alone {thr['ttft_p95_prompt_s'] * 1000:.0f} ms"
            if "p95_input_tokens" in thr
            else ""
        )
        if "cached_prompt_share" in thr:  # the prefix cache's share: only the new tail is prefilled
            tail += (
                f"; {thr['cached_prompt_share']:.0%} of each prompt in the prefix cache, {thr['prefill_new_tokens']:,} new "
                "tokens prefilled"
            )
        lines.append(
            f"  throughput   {'' if starts else 'if it ran: '}{_rate(thr['max_output_tokens_per_s'])} output tokens/s at "
            "saturation "
            f"(batch {thr['saturation_batch']}, {_SATURATION_LIMITS[thr['saturation_limit']]}); "
            f"at batch {result['kv_cache']['sequences']}: TTFT {thr['ttft_s'] * 1000:.0f} ms (p95 "
            f"{thr['ttft_p95_alone_s'] * 1000:.0f} ms as a plan checks it, before queueing{tail}), "
            f"TPOT {thr['tpot_s'] * 1000:.1f} ms "
            f"at steady state ({steady}prefill takes {thr['prefill_time_share']:.0%} of the replica's time, "
            f"{thr['prefill_share']:.0%} of the time between a sequence's tokens, its own prompt being its TTFT; "
            f"{_rate(thr['decode_tokens_per_s'])} output tokens/s), decode-only step{whole} {thr['decode_step_s'] * 1000:.1f} ms "
            f"({thr['decode_step_bound']}-bound)"
        )
        if "drain_s" in thr:
            lines.append(
                f"  drain        {result['kv_cache']['sequences']:,} requests in about {hours_text(thr['drain_s'] / 3600)} "
                f"at {thr['requests_per_s']:,.2f} req/s ({thr['steady_batch']:,} at a time)"
            )
        if "dequantized_in_gemm" in thr:  # review 27 item 3
            lines.append(f"  GEMM rate    {thr['dequantized_in_gemm']['basis']}")
    lines += _offload_lines(result)
    lines += _training_memory_lines(result)
    if "training_speed" in result:
        from generator.calculator.training_time import training_speed_lines

        lines += training_speed_lines(result["training_speed"])
    lines += [f"  note: {n}" for n in result["notes"]]
    return "\n".join(lines) + "\n"


def _capacity_lines(result: dict[str, Any]) -> list[str]:
    """The estimate's fit on its GPU (or pod's share), KV capacity and the engine's log lines; none without a GPU."""
    cap, share = result.get("capacity"), result.get("gpu_share")
    lines: list[str] = []
    if not cap:
        return lines
    lines.append("")
    verdict = "fits" if cap["fits"] else "does NOT fit"
    if at := cap.get("average_batch"):  # both figures: the batch at the average length, whole-context sequences
        batch, held, full = result["kv_cache"]["sequences"], at["sequences_held"], int(cap["max_concurrency"])
        asked = f"batch {batch:,} asked"
        if queued := at.get("queued"):  # newuser65 item 12: an offline queue runs, a place at a time
            verdict = f"runs {held:,} at a time, the rest queue"
            asked += f": {queued:,} wait{'s' if queued == 1 else ''} for a place in it"
        verdict += (
            f": the KV pool holds {held:,} sequences of {at['tokens_per_sequence']:,} tokens ({asked}), "
            f"{full:,} of the whole {result['kv_cache']['context_tokens']:,}-token context"
        )
    elif whole := cap.get("whole_context_batch"):  # the pool against --batch's whole-context sequences
        asked = f"batch {whole['sequences_asked']:,} asked"
        if queued := whole.get("queued"):  # newuser73 item 8: they queue, as the batch at the average length does
            verdict = f"runs {whole['sequences_held']:,} at a time, the rest queue"
            asked += f": {queued:,} wait{'s' if queued == 1 else ''} for a place in it"
        pool = "SGLang's KV pool" if "sglang_log" in cap else "the KV pool"
        verdict += (
            f": {pool} holds {whole['sequences_held']:,} sequences of {result['kv_cache']['context_tokens']:,} tokens ({asked})"
        )
    where = cap["gpu"] if share is None else f"one pod's share of {cap['gpu']}"
    lines.append(
        f"  on {where} ({_gib(cap['gpu_memory_bytes'])}; {_gib(cap['usable_bytes'])} usable at {cap['usable_basis']}): {verdict}"
    )
    if share is not None:
        lines.append(f"  share        {share['text']}; KV cache, concurrency and rates below are the share's")
        if "pod_max_total_tokens" in share:  # SGLang's fraction is of the memory free as it starts (fuzz33 item 4)
            lines.append(
                f"               SGLang's fraction is of the memory free when it starts, not of its share: start it with "
                f"--mem-fraction-static {share['pod_mem_fraction_static']:g} --max-total-tokens "
                f"{share['pod_max_total_tokens']} (the pool sized here, whichever pod starts first)"
            )
        elif "pod_mem_fraction_static" not in share and (
            share["pod_gpu_memory_utilization"] != result["constants"]["gpu_memory_utilization"]
        ):
            lines.append(
                f"               each pod sees the whole GPU: start vLLM with --gpu-memory-utilization "
                f"{share['pod_gpu_memory_utilization']:g} (its share of the GPU's memory)"
            )
    if "kv_cache_tokens" in cap:
        # one engine rank's pool (vLLM's 'GPU KV cache size' is per DP rank): its TP x PP GPUs hold it together
        ranks = cap["attention_dp_ranks"]
        rank_gpus = result["parallelism"]["gpus_per_replica"] // ranks
        # with sliding-window layers the tokens are context served (concurrency x context), not the pool's slots
        tokens = "tokens of context" if cap["kv_cache_tokens_windowed"] else "tokens"
        lines.append(
            f"  KV capacity  {cap['kv_cache_tokens_per_dp_rank']:,} {tokens} per DP rank "
            f"({rank_gpus} GPU{'s' if rank_gpus > 1 else ''}, {_gib(cap['kv_cache_bytes'])} of KV cache on each); "
            f"max concurrency {cap['max_concurrency_per_dp_rank']:.2f} at {result['kv_cache']['context_tokens']:,} tokens"
        )
        if ranks > 1:
            lines.append(
                f"               x {ranks} attention-DP ranks, each its own pool: "
                f"{cap['kv_cache_tokens']:,} {tokens}, max concurrency {cap['max_concurrency']:.2f} per replica"
            )
        if cap["kv_cache_tokens_windowed"]:
            lines.append(
                "               (max concurrency x context: a sliding-window layer keeps only its window of a "
                "request, so the pool serves more context than it has token slots)"
            )
    sglang = cap.get("sglang_log")
    if sglang:
        lines.append(
            f"  SGLang log   'KV Cache is allocated. #tokens: {sglang['max_total_num_tokens']}' "
            f"at --mem-fraction-static {sglang['mem_fraction_static']:g}"
        )
    log = cap.get("vllm_log")
    if log:
        lines.append(
            f"  vLLM log     'GPU KV cache size: {log['gpu_kv_cache_size_tokens']:,} tokens', "
            f"'Maximum concurrency: {log['max_concurrency']:.2f}x' ({log['kv_cache_groups']} KV cache group(s))"
        )
        for part in log["by_layer_type"]:
            pad = f", +{part['padding_layers']} padding" if part["padding_layers"] else ""
            lines.append(f"    {part['kind']:14s} {part['layers']} layers{pad}: {_gib(part['pool_bytes'])} of the pool")
        if cap["kv_cache_tokens_windowed"]:
            lines.append(
                "  note: vLLM's log is its start-up worst case, a sliding-window layer charged a whole chunk of "
                "prompt; decoding, it frees the blocks outside the window, so a replica holds the KV capacity above "
                "(what plans size with)"
            )
        if not log["starts"]:
            # with no KV memory left the weights themselves are the problem: a shorter context cannot help
            more = "a larger share (--mig, --share)" if share is not None else "GPUs"  # a share is of one GPU
            fp8 = log.get("fp8_kv_starts")  # fix183 item 3: the FP8 cache that starts it, sized by the estimate
            higher = log.get("utilization_starts")  # newuser107; review98 bug 2: also where the weights leave none
            larger = (
                f"--gpu-memory-utilization {higher['gpu_memory_utilization']:g} (it starts, "
                f"{higher['kv_cache_tokens']:,} KV tokens a replica, where nothing else holds the GPUs' memory), "
                if higher
                else ""
            )
            remedy = (
                (
                    f"--kv-precision fp8 (vLLM's --kv-cache-dtype fp8, a token's KV in half the bytes: it starts, "
                    f"{fp8['kv_cache_tokens']:,} KV tokens a replica), "
                    if fp8
                    else ""
                )
                + larger
                + "lower --context, a lower --max-num-seqs (vLLM profiles its activations before it sizes the pool), "
                + (
                    "a lower --max-batched-tokens (the check charges each sliding-window layer a forward pass's tokens), "
                    if result["kv_cache"]["window_bytes_per_sequence"]
                    else ""
                )
                + f"or add {more}"
                if cap["kv_cache_bytes"] > 0
                else f"the weights ({_gib(result['memory']['per_gpu']['weights'])} per GPU) leave none: "
                + larger
                + (
                    "a larger share (--mig, a smaller --share), a smaller --precision, or whole GPUs (drop it)"
                    if share is not None
                    else f"add GPUs{_starting_tp(log)}, a smaller --precision, or --ram-gib to plan offload to system RAM"
                )
            )
            lines.append(
                f"  vLLM refuses to start: one {result['kv_cache']['context_tokens']:,}-token request needs "
                f"{_gib(log['one_request_kv_bytes'])} of KV cache, {_gib(cap['kv_cache_bytes'])} is available; {remedy}"
            )
    return lines


def _offload_lines(result: dict[str, Any]) -> list[str]:
    """A machine of yours: the placement over GPU, RAM and NVMe, its speed and settings, or why none runs."""
    from generator.calculator.prefill_bound import prompt_prefill_text

    lines: list[str] = []
    off = result.get("offload")
    if off and not off["fits"]:  # no placement: the table above is the model held whole on the GPUs (review70 item 1)
        lines += [
            "",
            f"  placement    none: the model cannot run on this machine: {off['blocked_by']} (the table above holds it "
            f"whole on the GPUs at {off['precision']}, {off['context_tokens']:,} tokens)",
            f"  {off['unblock']}",
            f"  machine      {result['machine']['bandwidths']}",
        ]
        lines += [f"  {f['level']}: {f['message']}" for f in result["findings"]]
    elif off:
        b = off["bytes"]
        lines += [
            "",
            f"  placement    GPU {_gib(b['gpu'])}, RAM {_gib(b['cpu'])}, NVMe {_gib(b['disk'])} "
            f"of weights at {off['precision']}; "
            f"{_gib(off['ram_free_after_reserve_bytes'])} RAM free after the reserve",
            f"  speed        {result['throughput']['decode_tokens_per_s']:.2f} tokens/s ({off['bound']}-bound, {off['mode']}); "
            # the prompt the TTFT is of, in the plan's reasons' words (fix194)
            f"TTFT {seconds_text(result['throughput']['ttft_s'])} for {prompt_prefill_text(result['throughput'])}; "
            f"cold start {seconds_text(off['cold_start_s'])}; timed for {off['engine']}",
        ]
        if "slots" in result["throughput"]:  # --batch N on a machine: llama.cpp server slots (newuser68 item 8)
            slots, alone = result["throughput"]["slots"], result["throughput"]["decode_tokens_per_s"]
            lines.append(
                f"  slots        {slots['slots']:,} {off['engine']} server slots (a KV cache of {slots['context_tokens']:,} "
                f"tokens) decode together at {slots['tokens_per_s']:.2f} tokens/s, {slots['stream_tokens_per_s']:.2f} each "
                f"({slot_step_text(slots['step'], off['engine'], slots['stream_tokens_per_s'], alone)})"
            )
        lines.append(f"  machine      {result['machine']['bandwidths']}")
        lines += _upgrade_lines(result)
        lines += [f"  decision     {d}" for d in off["decisions"]]
        engine, settings = off["engine"], result["runtime_settings"]
        lines.append(f"  {engine:<12} {settings[engine]}")
        if f"{engine}_note" in settings:
            lines.append(f"               {settings[f'{engine}_note']}")
        lines += [f"  {f['level']}: {f['message']}" for f in result["findings"]]
    return lines


def _upgrade_lines(result: dict[str, Any]) -> list[str]:
    """What one more GPU, or twice the RAM, would give this machine (newuser107), one ``upgrade`` line each."""
    from generator.calculator.upgrade_options import upgrade_text

    now = result["throughput"]
    return [
        f"  upgrade      {upgrade_text(row, now['decode_tokens_per_s'], now['ttft_s'])}" for row in result.get("upgrades", ())
    ]


def _training_memory_lines(result: dict[str, Any]) -> list[str]:
    """A training job's host RAM (offload, the node's) and the longest sequence that fits, where asked."""
    lines: list[str] = []
    train = result.get("training")
    if train and train["host_ram_bytes_per_gpu"]:
        lines.append(f"  host RAM for offload: {_gib(train['host_ram_bytes_per_gpu'])} per GPU")
    if train:  # the node's hard host RAM as `specgen plan` counts it (newuser29 item 3)
        need, gpus, nodes = train["host_ram_gib_per_node"], train["host_ram_node_gpus"], train["host_ram_nodes"]
        held = (
            f"a node holding {gpus} of the job's {train['host_ram_job_gpus']:,} GPUs ({nodes:,} nodes)"
            if nodes > 1
            else f"a node holding the job's {gpus} GPU(s)"
        )
        lines.append(f"  host RAM     {need:,} GiB {held}: {train['host_ram_text']}")
    if train and "max_sequence_length" in train:
        longest, whole = train["max_sequence_length"], train["max_sequence_length_without_margin"]
        capped = train.get("max_sequence_length_capped", False)  # the search stopped at --seq-len's limit (fix191)
        least = "at least " if capped else ""
        margin = f" ({least}{whole:,} in all of the GPU's memory, with no margin kept free)" if whole != longest else ""
        limit = " (the longest --seq-len takes)" if capped and whole == longest else ""
        lines.append(f"  longest sequence that fits: {least if whole == longest else ''}{longest:,} tokens{margin}{limit}")
        if longest:  # the table above is sized at --seq-len's length; what the answer's sequence takes (newuser45 item 10)
            held = train["max_sequence_memory_bytes_per_gpu"]
            usable = result["capacity"]["usable_bytes"]
            lines.append(
                f"  at {longest:,} tokens the GPU holds {_gib(held)} of the {_gib(usable)} usable "
                f"(the table above is at {train['sequence_length']:,} tokens)"
            )
        host = train["max_sequence_host_ram_bytes_per_gpu"]
        if longest and host != train["host_ram_bytes_per_gpu"]:  # offloaded activations grow with the sequence
            lines.append(f"  host RAM for offload at {longest:,} tokens: {_gib(host)} per GPU, beside the GPU's memory")
    return lines


def _llama_cpp_lines(result: dict[str, Any]) -> list[str]:
    """The lines of a GGUF precision sized as llama.cpp holds it, on the GPUs alone or on a CPU alone (newuser86)."""
    if (llama := result.get("llama_cpp")) is not None:
        engine = llama["engine"]
        if "command" in llama:
            return [
                f"  {engine:<12} {llama['command']}",
                f"  speed        {llama['decode_tokens_per_s']:.2f} tokens/s "
                + ("one stream alone" if llama["slots"] > 1 else "a stream")
                + f" ({llama['bound']}-bound, all on the GPU); TTFT {seconds_text(llama['ttft_s'])} for "
                f"{llama['ttft_prompt_tokens']:,} prompt tokens; timed for {engine}",
            ]
        if "layers_on_gpu" in llama:
            experts = llama["expert_layers_in_ram"]
            kept = f"the routed experts of {experts} layers and " if experts else ""
            held = (
                f"{engine} would run it with {kept}{llama['layers'] - llama['layers_on_gpu']} of its {llama['layers']} "
                "layers in system RAM"
            )
        else:
            held = f"{engine} cannot offload it either: {llama['offload_blocked_by']}"
        return [
            f"  {engine:<12} {held}: give --ram-gib (the machine's RAM; --cpu for its memory bandwidth) to plan and time "
            "the offload"
        ]
    if (cpu := result.get("cpu_only")) is None:
        return []
    from generator.words import counted

    slots = cpu["slots"]
    # decode_tokens_per_s is a stream's, as the GPU estimate's headline and field are (fix152: the headline said all slots)
    together = f"; {slots} slots together {cpu['decode_tokens_per_s_all_slots']:.2f} tokens/s" if slots > 1 else ""
    basis = f" ({cpu['ram_basis']})" if cpu.get("ram_basis") else ""
    whose = f"each of the {slots} slots" if slots > 1 else "a stream"
    paged_bytes = cpu.get("nvme_paged_bytes", 0)
    paged = f"; {_gib(paged_bytes)} of the layers read from the model file on NVMe every token" if paged_bytes else ""
    return [
        "",
        f"  placement    RAM {_gib(cpu['ram_used_bytes'])} (weights, KV cache, compute buffer, runtime), no GPU; "
        f"{_gib(cpu['ram_free_after_reserve_bytes'])} RAM free after the reserve{basis}{paged}",
        f"  speed        {cpu['decode_tokens_per_s']:.2f} tokens/s decode {whose} "
        f"({cpu['bound']}-bound, on the CPU, at {counted(cpu['decode_context_tokens'], 'token')} of context{together}); "
        f"cold start {seconds_text(cpu['cold_start_s'])}; timed for {cpu['engine']}",
        f"  not timed    {cpu['not_estimated']}",
        f"  machine      {result['machine']['bandwidths']}",
        f"  {cpu['engine']:<12} {cpu['command']}",
        *(f"  {f['level']}: {f['message']}" for f in result["findings"]),
    ]


def _fixed_machine(args: argparse.Namespace) -> FixedSpec | None:
    """The existing machine described by ``--ram-gib`` and friends, if any."""
    if args.ram_gib is None:
        return None
    from generator.calculator.machine import FixedSpec

    return FixedSpec(
        gpu=args.gpu or "", gpu_count=(1 if args.gpus is None else args.gpus) if args.gpu else 0, ram_gib=args.ram_gib,
        reserved_ram_gib=args.reserved_ram_gib, swap_gib=args.swap_gib, nvme_gib=args.nvme_gib,
        nvme_read_gb_per_s=args.nvme_read_gb_per_s, pcie_gen=args.pcie_gen, pcie_lanes=args.pcie_lanes, cpu=args.cpu,
        memory_channels=args.memory_channels, ddr_mt_per_s=args.ddr_mt_per_s, cpu_sockets=args.cpu_sockets,
        offload_engine=args.offload_engine or "llama.cpp", cpu_cores=args.cpu_cores, threads=args.threads,
    )  # fmt: skip


def _flag(dest: str) -> str:
    return "--" + {"zero_stage": "zero", "checkpointing": "gradient-checkpointing", "flash_attention": "no-flash-attention",
                   "allow_precision": "allow-precision"}.get(dest, dest).replace("_", "-")  # fmt: skip


def check_combinations(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Exit 2 (a usage error) when an option is given that the chosen mode would silently ignore."""

    def given(dest: str) -> bool:
        return bool(getattr(args, dest) != parser.get_default(dest))

    def refuse(dests: tuple[str, ...], why: str) -> None:
        for dest in dests:
            if given(dest):
                parser.error(f"{_flag(dest)} {why}")

    for dest, value in sorted(vars(args).items()):
        if isinstance(value, str) and not value.strip():
            parser.error(f"{'MODEL' if dest == 'model' else _flag(dest)} is empty")
    if args.ram_gib is not None and not args.gpu and not args.train:  # newuser86 item 2: a machine without a GPU
        refuse(
            ("gpus", "pcie_gen", "pcie_lanes", "allow_precision", "min_context"),
            "is about the GPUs; --ram-gib without --gpu plans llama.cpp on the CPU alone, at --precision",
        )
    if args.offload_engine and args.gpu:
        from generator import catalog
        from generator.sizing.offload import engine_gpu_problem

        gpu = catalog.gpus().get(args.gpu)  # an unknown id is refused with the catalog's suggestions
        if gpu is not None and (why := engine_gpu_problem(args.offload_engine, gpu.id, gpu.vendor, gpu.architecture)):
            parser.error(f"--offload-engine {args.offload_engine}: {why}")
    if args.train:
        if args.ram_gib is not None:
            parser.error("--ram-gib plans inference on an existing machine; it cannot be combined with --train")
        if args.train == "full" and args.precision is not None:
            parser.error(
                "--precision cannot be combined with --train full: full training holds bf16 weights (mixed precision; "
                "fp32 with --optimizer adamw-torch-amp); --precision sets the frozen base of --train lora / qlora. For FP8 "
                "training (Transformer Engine, torchao float8) give --compute-precision fp8"
            )
        if args.train == "full":
            refuse(LORA_OPTIONS, "applies to --train lora / qlora, not --train full")
        refuse(
            INFERENCE_ONLY_OPTIONS, "is an inference option; a training estimate does not read it (see --micro-batch, --seq-len)"
        )
        if args.max_seq_len and not args.gpu:
            parser.error("--max-seq-len needs --gpu: the longest sequence that fits which GPU")
        if args.epochs is not None and args.dataset_tokens is None:
            parser.error("--epochs needs --dataset-tokens: the passes over how many tokens")
        if args.dataset_tokens is not None and not args.gpu:
            parser.error(DATASET_NEEDS_GPU)
        _refuse_training_conflicts(parser, args)
    else:
        if args.compute_precision == "fp8":  # review71 item 11a: FP8 training is full training only (lora / qlora refused)
            parser.error("--compute-precision fp8 applies to full training and pre-training: add --train full")
        if args.lora_targets is not None:  # the training option beside the served adapters' own
            parser.error("--lora-targets applies to training (--train lora / qlora); served adapters' are --lora-target-modules")
        refuse(TRAINING_OPTIONS, "applies to training: add --train full, lora or qlora")
        if args.batch and args.max_num_seqs and args.batch > args.max_num_seqs:  # fuzz23 item 7: KV for 64, activations for 1
            parser.error(
                f"--batch {args.batch} is more than --max-num-seqs {args.max_num_seqs}: the engine never runs more sequences "
                "at once than its max-num-seqs"
            )
        if args.max_num_seqs and args.max_batched_tokens and args.max_num_seqs > args.max_batched_tokens:
            parser.error(  # as the workload schema refuses it (vllm SchedulerConfig._verify_args)
                f"--max-num-seqs {args.max_num_seqs} is more than --max-batched-tokens {args.max_batched_tokens}: vLLM "
                "refuses to start with more sequences than the tokens of a forward pass"
            )
        if args.gpus is not None and args.ram_gib is None:
            parser.error(
                "--gpus is the GPU count of a training job (--train) or of an existing machine (--ram-gib); "
                "for inference use --tp / --pp"
            )
    if args.task != "generate":  # newuser65 item 11: a pooling server answers with one pass over the input
        if not args.gpu or args.input_tokens is None:
            parser.error(f"--task {args.task} needs --gpu and --input-tokens: the requests a GPU serves, of how many tokens")
        refuse(
            (
                "train",
                "ram_gib",
                "output_tokens",
                "p95_input_tokens",
                "batch",
                "ep",
                "cached_prompt_share",
            ),
            f"is not read with --task {args.task}: a pooling request is one forward pass over its input, sized at the "
            "replica's saturated rate",
        )
        refuse(LORA_SERVING_OPTIONS, f"is not read with --task {args.task}: a pooling server is not sized with LoRA adapters")
        refuse(("engine", "mem_fraction_static"), f"is not read with --task {args.task}: it is sized for vLLM's pooling runner")
    if args.ram_gib is None:
        refuse(MACHINE_OPTIONS, "describes an existing machine: add --ram-gib (and --gpu for its GPUs)")
        # fix184 item 5: the estimate prints an engine line only for llama-server on a machine; vLLM / SGLang's tool
        # flags (--enable-auto-tool-choice --tool-call-parser) are rendered from a workload's inference.tool_calling
        refuse(
            ("tool_calling",),
            "adds --jinja to the llama-server lines of a machine's estimate: add --ram-gib (and --gpu); for vLLM or "
            "SGLang, `specgen render` a workload with inference.tool_calling: true renders the tool-call parser",
        )
    else:
        refuse(NOT_FOR_MACHINE_OPTIONS, "is not read when planning placement on an existing machine (--ram-gib)")
        if getattr(args, "engine_given", False):  # --engine vllm, the default's value: said, not silently dropped
            args.engine_notes = [ENGINE_SET_ASIDE]
    if not args.gpu:
        refuse(
            (
                *(() if args.ram_gib is not None else ("input_tokens", "output_tokens")),  # a CPU's decode reads their KV
                "p95_input_tokens",
                "gpu_memory_utilization",
                "mem_fraction_static",
                "cached_prompt_share",
            ),
            "needs --gpu",
        )
    _check_share(parser, args)
    if args.engine != "sglang":
        refuse(("mem_fraction_static",), "is SGLang's setting: add --engine sglang")
    else:
        refuse(("gpu_memory_utilization",), "is vLLM's setting; SGLang's is --mem-fraction-static")
        # as a workload's max_num_batched_tokens beside engine: sglang (SGLang's --chunked-prefill-size is not modelled)
        refuse(("max_batched_tokens",), "is vLLM's setting (--engine vllm)")


def _check_share(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Exit 2 where --mig / --share go with options they cannot (one replica of one GPU given)."""
    if args.mig is not None and args.share is not None:
        parser.error(
            "--mig and --share do not go together: a GPU is split into MIG instances, or shared between time-slicing / "
            "MPS replicas"
        )
    if args.share_strategy is not None and args.share is None:
        parser.error("--share-strategy needs --share: the replicas a GPU is shared between")
    asked = f"--mig {args.mig}" if args.mig is not None else f"--share {args.share}" if args.share is not None else None
    if asked is None:
        return
    if not args.gpu:
        parser.error(f"{asked} needs --gpu: a share of which GPU")
    for name, degree in (("--tp", args.tp), ("--pp", args.pp), ("--ep", args.ep)):
        if degree > 1:
            parser.error(
                f"{asked} sizes a replica in one pod's share of one GPU; {name} {degree} makes a replica of several "
                "GPUs, which keeps whole GPUs (a plan gives it a pool without sharing: gpu-sharing-whole-gpus)"
            )


def _refuse_training_conflicts(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Exit 2 at the first training option that contradicts another (QLoRA over 16 bits, FSDP2 without sharding)."""
    from generator.sizing.frameworks import framework_profile, resolved_regime
    from generator.sizing.training_conflicts import as_estimate_options, training_conflicts, zero_offload_regime_refusal

    model_parallel = (args.tp or 1) * (args.pp or 1)
    # as the estimate counts them: --gpus, else one replica per expert-parallel rank (review 13 item 5)
    data_parallel = max(1, (args.gpus or model_parallel * (args.ep or 1)) // model_parallel)
    zero_stage = resolved_regime(args.framework, args.optimizer, args.zero_stage, data_parallel)[1]
    conflicts = training_conflicts(
        method=args.train,
        framework=args.framework,
        zero_stage=zero_stage,
        data_parallel=data_parallel,
        base_precision=args.precision,
        offload_params=args.offload_params,  # at the stage resolved: a framework's own ZeRO-3 takes it (fuzz19 item 7)
        compute_precision=args.compute_precision or "bf16",
    )
    flags = {
        "precision": "--precision",
        "framework": "--framework",
        "zero_stage": "--zero",
        "offload_params": "--offload-params",
        "compute_precision": "--compute-precision",
    }
    if args.offload_optimizer and args.framework is not None and zero_stage != 0:  # review77 item 11 (ZeRO-0: its own)
        regime = zero_offload_regime_refusal(framework_profile(args.framework), args.optimizer)
        conflicts += [("optimizer", regime)] if regime else []
    flags["optimizer"] = "--optimizer"
    for field, why in conflicts[:1]:
        parser.error(f"{flags[field]}: {as_estimate_options(why)}")


#: ``hardware.fixed`` fields that ``specgen detect`` reports -> the estimate option they fill.
_DETECTED = {
    "gpu": "gpu", "gpu_count": "gpus", "ram_gib": "ram_gib", "reserved_ram_gib": "reserved_ram_gib", "swap_gib": "swap_gib",
    "nvme_gib": "nvme_gib", "pcie_gen": "pcie_gen", "pcie_lanes": "pcie_lanes", "cpu": "cpu",
    "memory_channels": "memory_channels", "ddr_mt_per_s": "ddr_mt_per_s", "cpu_sockets": "cpu_sockets",
}  # fmt: skip


def apply_detected(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Fill the machine options the user left at their defaults from what this machine reports."""
    from generator.calculator.detect import detect_machine, this_machine

    facts = detect_machine(this_machine())
    notes: list[str] = []
    for field, dest in _DETECTED.items():
        if field in facts and getattr(args, dest) == parser.get_default(dest):
            setattr(args, dest, facts[field].value)
            if field == "reserved_ram_gib":  # review70 item 19: what it took, and what it counts
                notes.append(
                    f"--detect took --reserved-ram-gib {facts[field].value:g}, the RAM in use now: a model server running "
                    "now is counted as other services (stop it first, or give --reserved-ram-gib)"
                )
    # review70 item 14: GPUs detect found but the plan leaves out are said, as detect says them
    if "mixed_gpus" in facts:
        tool = facts["gpu_tool"].value if "gpu_tool" in facts else "nvidia-smi"
        notes.append(f"--detect: {tool} lists {facts['mixed_gpus'].value} ({facts['mixed_gpus'].how})")
    if "gpu_repeated" in facts:
        notes.append(f"--detect: {facts['gpu_repeated'].how}")
    if "omitted_gpu_count" in facts and args.gpus is None:
        left = facts["omitted_gpu_count"]
        notes.append(f"--detect did not take gpu_count {left.value} ({left.how}): planned on 1 GPU; give --gpus")
    # newuser88: a CPU the catalog lacks is timed at the cores /proc/cpuinfo counts (one socket's), not the assumed
    # desktop's 8 (a 2-core VM was said to decode Qwen3-8B q4_k_m at 12.18 tokens/s, its 2 cores allow 4.66): detect's
    # cpu_cores, the fact a workload's hardware.fixed.cpu_cores is written from (newuser107)
    if "cpu_cores" in facts and args.cpu is None and args.cpu_cores is None:
        args.cpu_cores = facts["cpu_cores"].value
        model = one_line(str(facts["cpu_model"].value))[:80] if "cpu_model" in facts else "unknown"
        notes.append(
            f"--detect took --cpu-cores {args.cpu_cores}: the cores of one socket /proc/cpuinfo counts, as the CPU "
            f"({model}) is not in the catalog; give --cpu if it is one the catalog has under another name"
        )
    args.detect_notes = notes
    # hostile79 item 11: what --detect could not find is said in one line, as estimate's other value errors are (exit
    # 2), not after the 43 lines of usage that parser.error prints
    if args.ram_gib is None:
        raise UsageError("--detect could not read this machine's RAM (/proc/meminfo); give --ram-gib")
    if not args.gpu and "gpu_failed" in facts:  # newuser75 item 6: the machine's failure, not a usage error (exit 2)
        from generator.errors import MachineError

        raise MachineError(f"--detect could not read this machine's GPUs: {facts['gpu_failed'].how}; give --gpu")
    if not args.gpu and "gpu_unread" in facts:  # review70 item 5: not "nvidia-smi missing" where it printed rows
        raise UsageError(f"--detect found no GPU: {facts['gpu_unread'].how}; give --gpu")
    if not args.gpu and "gpu_unknown" in facts:
        raise UsageError(f"--detect found no GPU it knows: {facts['gpu_unknown'].how}; give --gpu")
    if not args.gpu:
        # newuser86 item 2: no GPU tool at all is a machine without a GPU, planned for llama.cpp on its CPU (with the
        # memory detect read); what only a GPU reads is not taken
        for dest in ("gpus", "pcie_gen", "pcie_lanes"):
            setattr(args, dest, parser.get_default(dest))
        notes.append(
            "--detect found no GPU (nvidia-smi, amd-smi and rocm-smi missing): planned for llama.cpp on the CPU alone; "
            "give --gpu if the machine has one"
        )


def _refuse_set_twice(parser: argparse.ArgumentParser, sets: list[tuple[str, float]]) -> None:
    """A usage error where ``--set`` gives one constant two values.

    hostile88: the last one was taken without a word, where a workload's ``constants:`` block refuses a key given twice.
    """
    given: dict[str, float] = {}
    for name, value in sets:
        if name in given and given[name] != value:
            parser.error(f"--set {name} is given twice ({given[name]:g} and {value:g}): give it once")
        given[name] = value


def build_request(parser: argparse.ArgumentParser, args: argparse.Namespace) -> EstimateRequest:
    """The request of parsed arguments (``--detect`` applied, combinations checked; usage errors exit 2)."""
    if args.detect:
        apply_detected(parser, args)
    check_combinations(parser, args)
    _refuse_set_twice(parser, args.set)
    return EstimateRequest(
        model=args.model,
        precision=args.precision,
        kv_precision=args.kv_precision,
        context_tokens=args.context_tokens,
        batch=args.batch,
        tp=args.tp,
        pp=args.pp,
        ep=args.ep,
        gpu=args.gpu,
        gpu_memory_utilization=args.gpu_memory_utilization,
        engine=args.engine,
        engine_chosen=getattr(args, "engine_given", False),
        mem_fraction_static=args.mem_fraction_static,
        input_tokens=args.input_tokens,
        output_tokens=args.output_tokens,
        p95_input_tokens=args.p95_input_tokens,
        cached_prompt_share=args.cached_prompt_share or 0.0,
        max_batched_tokens=args.max_batched_tokens,
        max_num_seqs=args.max_num_seqs,
        train=args.train,
        optimizer=args.optimizer,
        zero_stage=args.zero_stage,
        gpus=args.gpus,
        micro_batch=args.micro_batch,
        accumulation=args.accumulation,
        seq_len=args.seq_len,
        checkpointing=args.checkpointing or "full",
        checkpointing_given=args.checkpointing is not None,
        flash_attention=args.flash_attention,
        lora_rank=LORA_DEFAULTS["lora_rank"] if args.lora_rank is None else args.lora_rank,
        lora_dropout=LORA_DEFAULTS["lora_dropout"] if args.lora_dropout is None else args.lora_dropout,
        lora_targets=tuple(t.strip() for t in (args.lora_targets or LORA_DEFAULTS["lora_targets"]).split(",") if t.strip()),
        offload_optimizer=args.offload_optimizer,
        paged_optimizer=args.paged_optimizer,
        offload_params=args.offload_params,
        framework=args.framework,
        loss=args.loss,
        activation_offload=args.activation_offload,
        optimizer_in_backward=args.optimizer_in_backward,
        fused_kernels=args.fused_kernels,
        compute_precision=args.compute_precision or "bf16",
        max_seq_len=args.max_seq_len,
        dataset_tokens=args.dataset_tokens,
        epochs=1.0 if args.epochs is None else args.epochs,
        constants=tuple(args.set),
        fixed=_fixed_machine(args),
        allowed_precisions=tuple(args.allow_precision),
        min_context_tokens=args.min_context,
        from_hub=args.from_hub,
        task=args.task,
        mig=args.mig,
        share=args.share,
        share_strategy=args.share_strategy or "time-slicing",
        lora_adapters=args.lora_adapters,
        lora_max_rank=args.lora_max_rank,
        max_loras=args.max_loras,
        max_cpu_loras=args.max_cpu_loras,
        tool_calling=args.tool_calling,
        lora_target_modules=None
        if args.lora_target_modules is None
        else tuple(t.strip() for t in args.lora_target_modules.split(",") if t.strip()),
    )


def run_estimate(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, Any]:
    """The estimate of parsed arguments."""
    return estimate(build_request(parser, args))


def _write(result: dict[str, Any], as_json: bool) -> None:
    """The estimate on stdout: JSON, or the text table."""
    if as_json:
        sys.stdout.write(json.dumps(result, indent=2, sort_keys=True) + "\n")
    else:
        sys.stdout.write(pooling_text(result) if "task" in result else format_text(result))


def main(argv: list[str] | None = None) -> int:
    """Run ``specgen estimate``; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        try:
            result = run_estimate(parser, args)
        except ArithmeticError as exc:
            raise arithmetic_error(exc) from exc
    except SpecgenError as exc:
        print(f"specgen estimate: error: {one_line(str(exc))}", file=sys.stderr)
        # a model that cannot run on the machine given: its breakdown is printed all the same (review70 item 1)
        if isinstance(document := getattr(exc, "document", None), dict):
            document["notes"] += getattr(args, "detect_notes", []) + getattr(args, "engine_notes", [])
            _write(document, args.json)
        return exc.exit_code
    if "notes" in result:
        result["notes"] += getattr(args, "detect_notes", []) + getattr(args, "engine_notes", [])
    _write(result, args.json)
    # the breakdown is printed either way; a layout that does not fit the GPU given cannot run there
    return 3 if (result.get("capacity") or {}).get("fits") is False else 0
