"""What PEFT's LoRA layers cost beside their two rank-r matmuls: HBM traffic each step and input copies kept for backward.

PEFT's LoRA ``Linear.forward`` (``peft/tuners/lora/layer.py``) computes the frozen base layer, then adds
``lora_B(lora_A(dropout(x))) * scaling`` to its output. Each of those operations is a pass over the activations that no
GEMM hides, memory-bound on every GPU: ``lora_A`` reads the input again, ``lora_B`` writes a base-output-wide tensor,
``* scaling`` reads and writes it, and the sum reads two and writes one. Before that it casts the input to the adapter's
dtype (``_cast_input_dtype``): adapters kept in fp32 over a 16-bit base (PEFT's ``autocast_adapter_dtype``, what the
Hugging Face Trainer family trains) make an fp32 copy of the input, which autocast casts back to bf16 for ``lora_A``'s
matmul. A bitsandbytes base's LoRA layer (``peft/tuners/lora/bnb.py``) skips that cast under autocast, and its 4-bit
layer clones the base output first ("for 4bit, we need to defensively clone here"). Backward runs each operation's
gradient over the same widths, and sums the adapter's input gradient into the base layer's.

Measured on an H200 (``benchmarks/measurements/h200-finetune-2026-12-04.jsonl``): Llama 3.1 8B LoRA under the
Trainer ran no faster per token than its full fine-tune (145 against 132 us a token, checkpointing on), where its
matmuls are three quarters of the full run's; the traffic counted here is 106 MB a token there, 23 us at the step's
sustained bandwidth.
"""

from __future__ import annotations

from generator.sizing.architecture import EXPERT, Architecture
from generator.sizing.lora_modules import adapted_in_layers
from generator.sizing.memo import memoized

#: Bytes of a bf16 activation element and of its fp32 copy.
ACT_BYTES = 2
FP32_BYTES = 4
#: Bytes of a dropout mask element (bool).
MASK_BYTES = 1


@memoized  # the planner times every layout of a job: one walk of the adapted modules a model and target list
def _widths(arch: Architecture, targets: tuple[str, ...]) -> tuple[float, float]:
    """(input, output) features per token summed over the adapted modules of the whole model.

    A token passes through its routed experts only: at most ``experts_per_token`` of those adapted.
    """
    ins = outs = 0.0
    for index, module, copies in adapted_in_layers(arch, targets):
        lin = module.linear
        visits = min(copies, arch.layers[index].experts_per_token) if lin.group == EXPERT else copies
        ins += lin.in_features * visits
        outs += lin.out_features * visits
    return ins, outs


def peft_traffic_bytes_per_token(
    arch: Architecture,
    targets: tuple[str, ...],
    *,
    checkpointing: str,
    cast_input: bool,
    clone_output: bool,
    dropout: bool,
) -> float:
    """HBM bytes one token moves through PEFT's LoRA layers outside their matmuls, forward and backward (whole model).

    Per adapted module of ``d_in`` inputs and ``d_out`` outputs, in bf16: forward reads ``x`` for ``lora_A`` (2 d_in),
    writes ``lora_B``'s output (2 d_out), scales it (4 d_out) and adds it to the base output (6 d_out); backward scales
    the output gradient (4 d_out), reads it for ``lora_B``'s two gradients (4 d_out), writes ``lora_A``'s input gradient
    and reads ``x`` for its weight gradient (4 d_in) and sums that gradient into the base layer's (6 d_in).
    ``cast_input`` (fp32 adapters over a 16-bit base) adds the fp32 copy and autocast's bf16 copy of it, 12 d_in each
    way; ``clone_output`` (a bitsandbytes 4-bit base) the clone, 4 d_out forward; ``dropout`` reads ``x`` and writes its
    output and mask each way (5 d_in; 9 on the fp32 copy where cast). Full checkpointing runs the forward twice.
    """
    ins, outs = _widths(arch, targets)
    cast = 2 * (ACT_BYTES + FP32_BYTES) * ins if cast_input else 0.0
    # dropout runs on the input lora_A reads: the fp32 copy where it is cast (review31 item 10)
    drop = (2 * (FP32_BYTES if cast_input else ACT_BYTES) + MASK_BYTES) * ins if dropout else 0.0
    forward = ACT_BYTES * ins + 6 * ACT_BYTES * outs + cast + drop + (2 * ACT_BYTES * outs if clone_output else 0.0)
    backward = 5 * ACT_BYTES * ins + 4 * ACT_BYTES * outs + cast + drop
    return forward * (2 if checkpointing == "full" else 1) + backward


@memoized
def peft_cast_copy_bytes_per_token_per_layer(arch: Architecture, targets: tuple[str, ...], copy_bytes: int = ACT_BYTES) -> int:
    """Bytes a token's saved activations grow by in the widest decoder layer where PEFT casts the adapters' inputs.

    ``lora_A`` saves its input for its weight gradient. Uncast, the modules that read one tensor (q/k/v the attention
    input, gate/up the MLP's) save that one tensor, which the activation count holds once; cast, each saves its own
    bf16 copy (``x.to(fp32)``, cast back by autocast), and ``o_proj``'s copy sits beside the attention output the
    attention kernel keeps anyway. ``down_proj``'s input is kept by nothing else, so its copy replaces it. A routed
    expert's input is its own gather of the tokens routed to it, cast or not. With dropout each module keeps its own
    dropped-out input already (:func:`generator.sizing.training.lora_dropout_bytes_per_token_per_layer`).

    ``copy_bytes``: what each saved copy takes: 2 under autocast; 4 where the forward runs without autocast over a
    bf16 model (PEFT's ``autocast_adapter_dtype=True`` fp32 adapters: ``_cast_input_dtype`` gives each module an fp32
    copy and the fp32 ``lora_A`` matmul saves it as it is; acc176, PEFT's MetaMathQA suite, ``use_amp: false``).
    """
    per_layer = [0] * arch.num_layers
    readers: dict[tuple[int, str], list[int]] = {}
    for index, module, _ in adapted_in_layers(arch, targets):
        lin = module.linear
        if lin.group == EXPERT:
            continue
        if module.name == "o_proj":
            per_layer[index] += lin.in_features * copy_bytes
        elif lin.in_features == arch.hidden_size:  # reads the normed residual stream: the attention's or the MLP's
            readers.setdefault((index, module.path[0]), []).append(lin.in_features)
        else:  # down_proj: its copy replaces the uncast input the activation count holds
            per_layer[index] += lin.in_features * (copy_bytes - ACT_BYTES)
    for (index, _), widths in readers.items():
        per_layer[index] += sum(widths) * copy_bytes - widths[0] * ACT_BYTES
    return max(per_layer)
