"""What serving LoRA adapters over one base model costs: GPU slots the engine preallocates, host RAM, per-token work.

vLLM (``--enable-lora --max-loras N --max-lora-rank R``) wraps every linear layer of the model at load time, whatever
modules the adapters target: ``get_supported_lora_modules`` collects every ``LinearBase`` (and ``FusedMoE``) of the
model, and ``LoRAModelManager._create_lora_modules`` replaces each with its LoRA layer
(https://github.com/vllm-project/vllm/blob/main/vllm/lora/utils.py,
https://github.com/vllm-project/vllm/blob/main/vllm/lora/models.py). Each layer's
``create_lora_weights`` then allocates, per output slice (q, k and v of ``qkv_proj``; gate and up of
``gate_up_proj``), ``lora_a_stacked`` of ``(max_loras, 1, max_lora_rank, input_size)`` and ``lora_b_stacked`` of
``(max_loras, 1, output_size, max_lora_rank)`` zeros in ``lora_dtype`` (``auto``: the model's dtype)
(https://github.com/vllm-project/vllm/blob/main/vllm/lora/layers/base_linear.py). Under tensor parallelism a column-parallel
layer (q, k, v, gate, up) keeps A whole and B's output slice; a row-parallel one (o, down) A's input slice and B whole
(``input_size`` is ``input_size_per_partition`` there). These buffers exist before vLLM's profiling run measures what is
left for the KV cache, so they come out of the pool: ``max_loras x max_lora_rank x sum(in + out)`` elements a GPU.

SGLang (``--enable-lora --max-loras-per-batch N --max-lora-rank R``) keeps a ``LoRAMemoryPool`` of A buffers
``(max_loras_per_batch, c x max_lora_rank, input_dim)`` (c: 3 for qkv, 2 for gate_up) and B buffers
``(max_loras_per_batch, output_dim, max_lora_rank)`` per layer for the target modules only, split alike under TP
(``get_lora_A_shape`` / ``get_lora_B_shape``,
https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/lora/mem_pool.py): the same count over the targets.

Host RAM: vLLM's ``WorkerLoRAManager`` loads each requested adapter on the CPU (``LoRAModel.from_local_checkpoint``,
device ``cpu``, pinned where it can) and keeps up to ``--max-cpu-loras`` of them in an LRU cache (default
``max_loras``), one cache per worker process: a TP replica holds it once per GPU
(https://github.com/vllm-project/vllm/blob/main/vllm/lora/worker_manager.py). An adapter there is its own rank over its
own targets; sized at ``max_rank`` it is an upper bound. SGLang loads every ``--lora-paths`` adapter on the CPU alike.

Per step (:class:`LoraStep`, timed in :mod:`generator.sizing.performance`): the punica kernels (vLLM's triton
``lora_shrink`` / ``lora_expand``, ``PunicaWrapperGPU.add_lora_linear``, one launch each per wrapped layer over all its
slices; SGLang's ``sgemm_lora_a`` / ``sgemm_lora_b``) multiply each token by its adapter's slot at the slot's full
rank (the kernels' ``N`` / ``K`` is ``lora_a_stacked``'s rank dimension, ``max_lora_rank``, zero-padded for a smaller
adapter: https://github.com/vllm-project/vllm/blob/main/vllm/lora/ops/triton_ops/lora_shrink_op.py,
lora_expand_op.py): ``2 x max_rank x (in + out)`` FLOPs a module and token. A step reads the A and B of each distinct
adapter its batch holds (the kernels gather tokens by adapter, ``token_indices_sorted_by_lora_ids``, and each
adapter's tiles read its slot once), and every token's activations pass again: the shrink reads ``x`` once a slice and
writes its float32 ``(slice, token, r)`` buffer, the expand reads that buffer and adds into ``y`` (``ADD_INPUTS``:
``y`` read and written). Each is a roofline, the longer of its bytes and its FLOPs at the bf16 tensor rate; the
kernels also take a fixed GPU time each, whatever their tokens (:data:`LORA_KERNEL_SECONDS` x
:func:`lora_kernels`, once a forward pass); the engine's LoRA metadata per step is not counted (see :class:`LoraStep`).

The embedding and output-layer LoRA buffers some vLLM releases add for models with ``embedding_modules``
(``embed_tokens``, ``lm_head``) are left out; routed experts are counted as linear modules with their copies.
"""

from __future__ import annotations

from generator.named_tuple import NamedTuple
from generator.sizing.architecture import EXPERT, Architecture, Linear
from generator.sizing.lora_modules import LORA_ALL, adapted_in_layers
from generator.sizing.memo import memoized

#: vLLM's accepted ``--max-lora-rank`` values (``MaxLoRARanks``, https://github.com/vllm-project/vllm/blob/main/vllm/config/lora.py).
VLLM_MAX_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)


class EngineLora(NamedTuple):
    """One engine's LoRA serving rules, the two kept side by side in :data:`ENGINE_LORA`."""

    #: The flag of the adapters one batch holds (its GPU slots).
    batch_flag: str
    #: Its default.
    default_max_loras: int
    #: The flag of the adapters kept loaded in host RAM, which the engine refuses below ``batch_flag``.
    host_flag: str
    #: Whether its slots wrap every linear layer (vLLM) or the target modules only (SGLang).
    wraps_every_linear: bool
    #: Whether its profiling run's peak holds the float32 shrink buffer (:func:`shrink_buffer_bytes`) before the KV
    #: pool is sized (vLLM); SGLang sizes its pool from what is free after its adapter buffers.
    shrink_buffer_at_start: bool


#: vLLM: ``--max-loras`` (``LoRAConfig.max_loras = 1``) and ``--max-cpu-loras``
#: (https://github.com/vllm-project/vllm/blob/main/vllm/config/lora.py); SGLang: ``--max-loras-per-batch`` (8) and
#: ``--max-loaded-loras`` (https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/server_args.py).
ENGINE_LORA = {
    "vllm": EngineLora(
        batch_flag="--max-loras",
        default_max_loras=1,
        host_flag="--max-cpu-loras",
        wraps_every_linear=True,
        shrink_buffer_at_start=True,
    ),
    "sglang": EngineLora(
        batch_flag="--max-loras-per-batch",
        default_max_loras=8,
        host_flag="--max-loaded-loras",
        wraps_every_linear=False,
        shrink_buffer_at_start=False,
    ),
}


#: The schema's ranges of ``inference.lora``'s counts (schemas/workload.schema.json; the estimate's options check
#: the same, tests/test_lora_estimate.py compares them).
LORA_RANGES = {"adapters": (1, 100_000), "max_rank": (1, 512), "max_loras": (1, 1024), "max_cpu_loras": (1, 100_000)}


def rank_problem(engine: str, max_rank: int, field: str = "max_rank") -> str | None:
    """Why the engine refuses ``max_rank`` (vLLM: a rank outside :data:`VLLM_MAX_LORA_RANKS`, the next one named); None.

    ``field``: what the setting is called where it is given (a workload's ``max_rank``, the estimate's option).
    """
    if engine != "vllm" or max_rank in VLLM_MAX_LORA_RANKS:
        return None
    up = next(r for r in VLLM_MAX_LORA_RANKS if r > max_rank)
    return (
        f"{field} {max_rank}: vLLM's --max-lora-rank takes {', '.join(map(str, VLLM_MAX_LORA_RANKS))}; "
        f"set {up} (every slot is sized at it, and adapters of a lower rank fit)"
    )


def max_loras_problem(max_loras: int | None, adapters: int, fields: tuple[str, str] = ("max_loras", "adapters")) -> str | None:
    """Why ``max_loras`` above ``adapters`` is refused (slots never filled); None where it is not.

    ``fields``: what ``max_loras`` and ``adapters`` are called where they are given.
    """
    if max_loras is None or max_loras <= adapters:
        return None
    slots, served = fields
    return (
        f"{slots} {max_loras} is more than {served} {adapters}: each slot holds GPU memory the KV cache would have, and "
        f"a batch uses at most {adapters}; set {slots} to {adapters} or fewer"
    )


def cpu_loras_problem(
    engine: str,
    max_cpu_loras: int | None,
    max_loras: int | None,
    adapters: int,
    fields: tuple[str, str] = ("max_cpu_loras", "max_loras"),
) -> str | None:
    """Why the engine refuses ``max_cpu_loras`` below the adapters one batch holds (:func:`served_max_loras`); None.

    ``fields``: what ``max_cpu_loras`` and ``max_loras`` are called where they are given.
    """
    slots = served_max_loras(max_loras, engine, adapters)
    if max_cpu_loras is None or max_cpu_loras >= slots:
        return None
    from generator.sizing.engine_runtime import ENGINE_NAMES  # only on this refusal

    rules = ENGINE_LORA[engine]
    host, batch = fields
    return (
        f"{host} {max_cpu_loras} is below {batch} {slots}: {ENGINE_NAMES[engine]} refuses to start ({rules.host_flag} "
        f"must be at least {rules.batch_flag}); raise it"
    )


#: The names SGLang's ``--lora-target-modules`` takes (argparse ``choices``: ``SUPPORTED_LORA_TARGET_MODULES`` and
#: ``all``, https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/utils/common.py and
#: python/sglang/srt/server_args.py), less ``embed_tokens`` and ``lm_head``, which are refused as not sized; its
#: ``all`` is rendered for PEFT's ``all-linear``. Any other name stops the server at its argument parser.
SGLANG_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "qkv_proj", "gate_up_proj")


def target_problem(
    arch: Architecture, targets: tuple[str, ...], field: str = "target_modules", *, engine: str = "vllm"
) -> str | None:
    """Why the adapters' ``targets`` are not sized, or not taken by ``engine``; None where they are.

    Refused: a name the model lacks (PEFT's matching), the output layer and the input embedding (their serving buffers
    are not sized), and under SGLang a name its ``--lora-target-modules`` does not take (:data:`SGLANG_TARGETS`).
    """
    from generator.errors import InputError
    from generator.sizing.lora_modules import matches_embedding, matches_lm_head

    if head := [t for t in targets if matches_lm_head(t) or matches_embedding(t)]:
        return (
            f"{field} {', '.join(head)}: the engines' output-layer and embedding LoRA buffers are not sized "
            "(their shapes differ between vLLM releases); give the decoder layers' modules, or all-linear"
        )
    try:
        adapted_linears(arch, targets)
    except InputError as exc:
        return exc.message
    return sglang_target_problem(targets, field) if engine == "sglang" else None


def sglang_target_problem(targets: tuple[str, ...], field: str = "target_modules") -> str | None:
    """Why SGLang's ``--lora-target-modules`` would not take a target (:data:`SGLANG_TARGETS`); None where it does."""
    from generator.sizing.lora_modules import LORA_ALL

    if not (refused := [t for t in targets if t != LORA_ALL and t not in SGLANG_TARGETS]):
        return None
    last = [t.rsplit(".", 1)[-1] for t in refused]
    hint = f" (as {', '.join(dict.fromkeys(last))})" if any(n in SGLANG_TARGETS for n in last) else ""
    return (
        f"{field} {', '.join(refused)}: SGLang's --lora-target-modules takes {', '.join(SGLANG_TARGETS)} "
        f"or all-linear, a module's last name, over every layer; give the modules so{hint}, or engine: vllm"
    )


def served_max_loras(max_loras: int | None, engine: str, adapters: int) -> int:
    """The adapters one batch holds: ``max_loras`` as given, else the engine's default capped at ``adapters``.

    The engines allocate their default's slots whatever the adapters (SGLang's ``max_loras_per_batch = 8`` sizes its
    ``LoRAMemoryPool`` buffers), but a slot past ``adapters`` is never filled and ``max_loras`` above ``adapters`` is
    refused (:func:`max_loras_problem`); the default is capped so, and the rendered command always says the flag
    (``--max-loras`` / ``--max-loras-per-batch``, :mod:`generator.render.lora_args`), so the engine allocates what the
    plan sized.
    """
    return max_loras or min(ENGINE_LORA[engine].default_max_loras, adapters)


def served_cpu_loras(max_cpu_loras: int | None, adapters: int) -> int:
    """The adapters a worker process keeps loaded in host RAM: ``max_cpu_loras`` as given, else every adapter."""
    return max_cpu_loras or adapters


#: Bytes of an adapter element: ``lora_dtype auto`` is the model's dtype, which for a quantized checkpoint is its
#: activation dtype (bf16 / fp16).
LORA_ELEMENT_BYTES = 2

#: Row-parallel linears (vLLM ``RowParallelLinear``; SGLang ``ROW_PARALLELISM_LINEAR_LORA_NAMES``): TP splits their
#: input, so A's input slice and B whole on each GPU; every other linear is column-parallel.
ROW_PARALLEL = frozenset({"o_proj", "down_proj", "dense", "fc2", "w2", "out_proj"})


class LoraServing(NamedTuple):
    """One replica's LoRA serving cost at its TP and PP degrees."""

    #: Bytes on each GPU of the fullest stage the engine's slots hold (``max_loras`` slots at ``max_rank`` over the
    #: wrapped modules of its layers).
    gpu_bytes: int
    #: One slot's bytes on each GPU of the fullest stage.
    slot_bytes_per_gpu: int
    #: One adapter's bytes at ``max_rank`` over its target modules (its safetensors file, its CPU copy).
    adapter_bytes: int
    #: Host RAM of the replica's CPU adapter caches: ``cpu_loras`` adapters in each of its ``tp x pp`` worker processes.
    host_bytes: int
    #: Extra FLOPs of one token through the LoRA kernels (the whole replica).
    flops_per_token: int

    @property
    def slot_read_bytes_per_step(self) -> int:
        """Bytes each GPU reads from the slots in one decode step whose batch uses every slot: all of them."""
        return self.gpu_bytes


def _widths_per_gpu(lin: Linear, tp: int) -> tuple[int, int]:
    """The linear's input and output widths on one GPU.

    TP splits a row-parallel linear's input (o_proj, down_proj and their kin), every other one's output.
    """
    if lin.name.rsplit(".", 1)[-1] in ROW_PARALLEL:
        return lin.in_features // tp, lin.out_features
    return lin.in_features, lin.out_features // tp


def slot_params_per_gpu(linears: list[Linear], rank: int, tp: int) -> int:
    """Parameters of one adapter slot on one GPU: ``rank x (in + out)`` a module, split as TP splits the module."""
    return sum(rank * sum(_widths_per_gpu(lin, tp)) * lin.copies for lin in linears)


def slot_bytes_per_gpu(linears: list[Linear], rank: int, tp: int) -> int:
    """Bytes of one adapter slot on one GPU over all its layers (:func:`slot_params_per_gpu` in the adapters' dtype)."""
    return slot_params_per_gpu(linears, rank, tp) * LORA_ELEMENT_BYTES


@memoized
def adapted_linears(arch: Architecture, targets: tuple[str, ...]) -> tuple[Linear, ...]:
    """The linears an adapter of ``targets`` adapts (PEFT's matching; a name the model lacks is refused)."""
    from generator.sizing.training import lora_targets  # training sizing loads only for a service with adapters

    return tuple(lora_targets(arch, targets))


def wrapped_targets(engine: str, targets: tuple[str, ...]) -> tuple[str, ...]:
    """The target modules the engine wraps with LoRA layers: every linear under vLLM, the targets under SGLang."""
    return (LORA_ALL,) if ENGINE_LORA[engine].wraps_every_linear else targets


def wrapped_linears(arch: Architecture, engine: str, targets: tuple[str, ...]) -> tuple[Linear, ...]:
    """The linears the engine gives adapter slots (:func:`wrapped_targets`)."""
    return adapted_linears(arch, wrapped_targets(engine, targets))


def per_stage(value: int, arch: Architecture, pp: int) -> int:
    """The fullest pipeline stage's share of a per-layer ``value``: ``ceil(layers / pp)`` of the layers."""
    layers = arch.num_layers
    return value * -(-layers // pp) // layers


def lora_serving(
    arch: Architecture,
    *,
    engine: str,
    targets: tuple[str, ...],
    max_rank: int,
    max_loras: int,
    cpu_loras: int,
    tp: int,
    pp: int = 1,
) -> LoraServing:
    """The GPU slots, host RAM and per-token work of serving adapters of ``targets`` up to ``max_rank``.

    The slots are per decoder layer, so a pipeline stage holds its own layers' (the most layers a stage takes).
    """
    wrapped = list(wrapped_linears(arch, engine, targets))
    slot = slot_bytes_per_gpu(wrapped, max_rank, tp)
    adapter = slot_bytes_per_gpu(list(adapted_linears(arch, targets)), max_rank, 1)
    return LoraServing(
        gpu_bytes=per_stage(max_loras * slot, arch, pp),
        slot_bytes_per_gpu=per_stage(slot, arch, pp),
        adapter_bytes=adapter,
        host_bytes=cpu_loras * adapter * tp * pp,
        flops_per_token=2 * slot_params_per_gpu(wrapped, max_rank, 1),
    )


#: Output slices of the widest packed module vLLM's punica wrapper runs (``qkv_proj``: q, k and v).
PACKED_SLICES = 3
#: Bytes of an element of the kernels' intermediate buffer, the shrink's float32 output a slice and rank, written by
#: ``lora_shrink`` and read back by ``lora_expand`` (triton-lang/triton#1387).
SHRINK_BUFFER_BYTES = 4


def shrink_buffer_bytes(tokens: int, max_rank: int) -> int:
    """VLLM's intermediate ``x @ A`` buffer for one linear at ``tokens`` tokens: the profiling run's extra peak.

    ``PunicaWrapperGPU.add_lora_linear`` allocates ``(len(output_slices), num_tokens, r)`` float32 for the shrink's
    output, then expands it into the layer's output
    (https://github.com/vllm-project/vllm/blob/main/vllm/lora/punica_wrapper/punica_gpu.py); ``r`` is the slots' rank.
    Its widest, ``qkv_proj``'s three slices, is held while the profiling run's ``max_num_batched_tokens`` tokens pass;
    each GPU's is whole (the rank dimension is split only with ``fully_sharded_loras``).
    """
    return PACKED_SLICES * tokens * max_rank * SHRINK_BUFFER_BYTES


def expected_distinct_adapters(adapters: int, max_loras: int, sequences: float) -> float:
    """Distinct adapters among ``sequences`` requests drawn uniformly from ``adapters``: ``N x (1 - (1 - 1/N)^B)``.

    Capped at ``max_loras``: vLLM's scheduler admits a request of a new adapter only while the step holds fewer than
    ``max_loras`` (``Scheduler.schedule``: ``len(scheduled_loras) == self.lora_config.max_loras``), SGLang's
    ``--max-loras-per-batch`` alike.
    """
    if adapters <= 0 or sequences <= 0:
        return 0.0
    untouched: float = (1.0 - 1.0 / adapters) ** sequences
    return min(float(max_loras), adapters * (1.0 - untouched))


#: Fixed GPU time of one LoRA shrink or expand kernel, whatever its tokens: vLLM's profile of ``_lora_expand_kernel``
#: (qkv, batch <= 16, rank 16) measured ~14 us, ~10 us after its fix
#: (https://github.com/vllm-project/vllm/pull/32425). Taken from that source, not fitted: with the kernel count of
#: :func:`lora_kernels` (528 a pass for Qwen3-30B-A3B) it gives -50 / -46 / -45% against unsloth#5123's measured
#: -44 / -41 / -40% on vLLM 0.19.2 from the measured base step; within 1.3 points without the routers' two a layer,
#: which vLLM wraps as ``ReplicatedLinear`` but whose kernels are tiny (benchmarks/CALIBRATION.md, acc141 entry).
LORA_KERNEL_SECONDS = 10e-6

#: Kernels vLLM launches a forward pass for one wrapped linear module: ``lora_shrink`` and ``lora_expand``, each one
#: grid over all the module's slices (``_lora_shrink``: grid ``(..., NUM_SLICES, num_active_loras)``,
#: https://github.com/vllm-project/vllm/blob/main/vllm/lora/ops/triton_ops/lora_shrink_op.py). SGLang's triton backend
#: alike: ``run_qkv_lora`` is ``sgemm_lora_a_fwd(..., stack_num=3)`` then ``qkv_lora_b_fwd``, ``run_gate_up_lora``
#: ``sgemm_lora_a_fwd(..., stack_num=2)`` then ``gate_up_lora_b_fwd``, any other module ``sgemm_lora_a_fwd`` then
#: ``sgemm_lora_b_fwd`` (https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/lora/backend/triton_backend.py);
#: its time a kernel is taken as vLLM's (no SGLang profile found).
KERNELS_PER_MODULE = 2

#: Kernels vLLM's ``FusedMoEWithLoRA`` adds to a MoE layer, which it wraps whenever LoRA is on:
#: ``moe_lora_align_block_size``, then shrink and expand for w13 and for w2
#: (https://github.com/vllm-project/vllm/blob/main/vllm/lora/layers/fused_moe.py; acc140's reading). SGLang's routed
#: experts are counted as one module (:data:`KERNELS_PER_MODULE`).
VLLM_MOE_KERNELS = 5

#: Matrices the engines load as one packed module (vLLM's ``packed_modules_mapping``, SGLang's fused qkv / gate_up LoRA
#: layers): one module's kernels run all its slices.
PACKED_MODULES = {
    "q_proj": "qkv_proj",
    "k_proj": "qkv_proj",
    "v_proj": "qkv_proj",
    "gate_proj": "gate_up_proj",
    "up_proj": "gate_up_proj",
    "q_a_proj": "fused_qkv_a_proj",
    "kv_a_proj_with_mqa": "fused_qkv_a_proj",
}


def _packed_module(lin: Linear) -> str:
    """The engine's module a matrix belongs to (``shared_experts.gate_proj`` -> ``shared_experts.gate_up_proj``)."""
    if lin.group == EXPERT:
        return "experts"
    parent, _, leaf = lin.name.rpartition(".")
    packed = PACKED_MODULES.get(leaf, leaf)
    return f"{parent}.{packed}" if parent else packed


@memoized
def lora_kernels(arch: Architecture, engine: str, targets: tuple[str, ...]) -> int:
    """LoRA kernels a forward pass launches over the whole model, each taking :data:`LORA_KERNEL_SECONDS` at least.

    vLLM: two a wrapped module (every linear of every layer, packed as it loads them: qkv and gate_up are one module
    each) and :data:`VLLM_MOE_KERNELS` a MoE layer. SGLang: two a module holding a target, routed experts as one.
    Llama 3.1 8B under vLLM: 32 layers x (qkv, o, gate_up, down) x 2 = 256.
    """
    wrapped = adapted_in_layers(arch, wrapped_targets(engine, targets))
    modules = {(layer, _packed_module(module.linear)) for layer, module, _ in wrapped}
    moe = VLLM_MOE_KERNELS if engine == "vllm" else KERNELS_PER_MODULE
    return sum(moe if name == "experts" else KERNELS_PER_MODULE for _, name in modules)


class LoraStep(NamedTuple):
    """What the LoRA kernels add to one forward pass on one GPU of a stage (:func:`lora_step`).

    A roofline (slot and activation bytes, FLOPs) plus a fixed time a kernel (:data:`LORA_KERNEL_SECONDS` x
    ``kernels``), once a decode step or prompt pass. Not counted: the engine's per-step adapter bookkeeping (vLLM's
    token-to-slot mapping, sorted by adapter), adapters loaded into slots mid-run, and any kernel the engine swaps for
    the base model under LoRA (vLLM's ``FusedMoEWithLoRA`` runs the experts on ``TritonExperts``).
    """

    #: Adapters the service serves (requests are taken as spread evenly over them).
    adapters: int
    #: Most distinct adapters a step holds (``--max-loras`` / ``--max-loras-per-batch``).
    max_loras: int
    #: Bytes of one adapter's slot on the GPU (the stage's layers): read once a step that holds the adapter.
    slot_bytes: int
    #: FLOPs a token on the GPU: ``2 x max_rank x (in + out)`` over the wrapped modules, as TP splits them.
    flops_per_token: int
    #: Activation bytes a token the kernels move: ``x`` read a slice, the float32 rank buffer written and read, ``y``
    #: read and written.
    activation_bytes_per_token: int
    #: LoRA kernels a forward pass launches on the GPU (the stage's share of :func:`lora_kernels`).
    kernels: int = 0

    def moved_bytes(self, sequences: float, tokens: float) -> float:
        """Bytes a step of ``tokens`` tokens from ``sequences`` requests reads and writes in the LoRA kernels."""
        slots = expected_distinct_adapters(self.adapters, self.max_loras, sequences)
        return slots * self.slot_bytes + tokens * self.activation_bytes_per_token

    def seconds(self, sequences: float, tokens: float, bandwidth_bytes_per_s: float, tensor_flops_per_s: float) -> float:
        """The kernels' time in a pass: their fixed time plus the longer of their bytes and their FLOPs' time.

        Bytes at ``bandwidth_bytes_per_s``, FLOPs at ``tensor_flops_per_s``; a pass with no token runs none.
        """
        if tokens <= 0:
            return 0.0
        moved = self.moved_bytes(sequences, tokens)
        roofline = max(moved / bandwidth_bytes_per_s, tokens * self.flops_per_token / tensor_flops_per_s)
        return self.kernels * LORA_KERNEL_SECONDS + roofline


def token_linears(linears: list[Linear], top_k: int) -> list[Linear]:
    """The linears one token passes: a routed expert's ``top_k`` of its copies (the slots hold them all)."""
    return [lin._replace(copies=top_k) if lin.group == EXPERT and lin.copies > 1 else lin for lin in linears]


def activation_elements_per_token(linears: list[Linear], rank: int, tp: int) -> int:
    """16-bit elements a token moves through the kernels on one GPU, the float32 buffer counted as two a rank.

    A module: its input slice read by the shrink (``in``, TP-split for a row-parallel one), its ``rank`` float32
    outputs written and read back, its output slice read and written by the expand.
    """
    buffer = 2 * (SHRINK_BUFFER_BYTES // LORA_ELEMENT_BYTES) * rank  # written and read back, two 16-bit a float32
    total = 0
    for lin in linears:
        width_in, width_out = _widths_per_gpu(lin, tp)
        total += (width_in + buffer + 2 * width_out) * lin.copies
    return total


def lora_step(
    arch: Architecture, *, engine: str, targets: tuple[str, ...], max_rank: int, adapters: int, max_loras: int, tp: int,
    pp: int = 1,
) -> LoraStep:  # fmt: skip
    """:class:`LoraStep` of one GPU of the fullest pipeline stage (``ceil(layers / pp)`` of the layers).

    A token passes ``top_k`` of a routed expert's copies (its FLOPs and activations); a slot read counts every expert's
    A and B, an upper bound where the engine's MoE LoRA kernel reads only the experts a step routes to.
    """
    wrapped = list(wrapped_linears(arch, engine, targets))
    passed = token_linears(wrapped, arch.routed_experts[1])
    return LoraStep(
        adapters=adapters,
        max_loras=max_loras,
        slot_bytes=per_stage(slot_bytes_per_gpu(wrapped, max_rank, tp), arch, pp),  # LoraServing.slot_bytes_per_gpu
        flops_per_token=per_stage(2 * slot_params_per_gpu(passed, max_rank, tp), arch, pp),
        activation_bytes_per_token=per_stage(activation_elements_per_token(passed, max_rank, tp) * LORA_ELEMENT_BYTES, arch, pp),
        kernels=per_stage(lora_kernels(arch, engine, targets), arch, pp),
    )
