"""Whether a serving engine will load a model at a parallel layout: the checks vLLM and SGLang make.

Sources (vLLM ``vllm/config`` and ``model_executor/layers``; SGLang applies the same rules):
- attention heads must divide evenly over tensor-parallel ranks ("Total number of attention
  heads (H) must be divisible by tensor parallel size (T)");
- KV heads either divide over the ranks or, when fewer than the ranks, the ranks divide over them
  (each KV head is then replicated);
- block-quantized weights (FP8 with ``weight_block_size`` 128 x 128, DeepSeek-V3 style) must split
  into whole blocks on every rank: the column-parallel gate/up output and the row-parallel down
  input per rank must be multiples of the block ("... is not divisible by weight quantization
  block_n = 128"); routed experts split this way under tensor parallelism, whole under expert
  parallelism;
- expert parallelism spreads whole experts: the routed experts must divide over the EP ranks, and
  an EP group is a multiple of the TP group.
"""

from __future__ import annotations

from generator.sizing.architecture import ATTENTION, EXPERT, Architecture
from generator.sizing.precision import WeightFormat
from generator.sizing.weights import Parallelism

#: The MLP / expert matrices tensor parallelism splits (routers and norms are replicated).
_SPLIT_PROJECTIONS = ("gate_proj", "up_proj", "down_proj")


def loadability_problems(arch: Architecture, fmt: WeightFormat, par: Parallelism) -> tuple[str, ...]:
    """Reasons a vLLM/SGLang-style engine refuses this layout (empty when it loads)."""
    problems: list[str] = []
    tp = par.tp
    heads = arch.num_attention_heads
    if heads % tp:
        problems.append(f"attention heads ({heads}) must be divisible by the tensor parallel size ({tp})")
    kv = arch.num_kv_heads
    if kv and (kv % tp if kv >= tp else tp % kv):
        problems.append(f"KV heads ({kv}) and tensor parallel size ({tp}) must divide one another")
    experts, _top_k = arch.routed_experts
    if par.ep > 1:
        if par.ep % tp:
            problems.append(f"expert parallel size ({par.ep}) must be a multiple of the tensor parallel size ({tp})")
        if experts and experts % par.ep:
            problems.append(f"routed experts ({experts}) must be divisible by the expert parallel size ({par.ep})")
    if fmt.block:
        problems.extend(_block_problems(arch, fmt.block, par))
    return tuple(problems)


def _block_problems(arch: Architecture, block: int, par: Parallelism) -> list[str]:
    """Column/row shards of block-quantized matrices that do not hold whole blocks."""
    seen: set[str] = set()
    for layer in arch.layers:
        for lin in layer.linears:
            if lin.group == ATTENTION or lin.name in seen or not lin.name.endswith(_SPLIT_PROJECTIONS):
                continue
            ranks = 1 if (lin.group == EXPERT and par.ep > 1) else par.tp
            if ranks == 1:
                continue
            # gate/up split their output (column parallel), down its input (row parallel)
            width = lin.in_features if lin.name.endswith("down_proj") else lin.out_features
            shard, rest = divmod(width, ranks)
            if rest or shard % block:
                seen.add(lin.name)
                kind = "expert intermediate size" if lin.group == EXPERT else "intermediate size"
                which = "input" if lin.name.endswith("down_proj") else "output"
                return [
                    f"{lin.name} {which} width {width} / TP {ranks} = {width / ranks:g} is not divisible by the "
                    f"weight quantization block ({block}): the {kind} does not split into whole {block}-wide "
                    f"blocks per rank (vLLM and SGLang refuse to load it); use a TP whose shard is a multiple "
                    f"of {block}, or expert parallelism"
                ]
    return []
