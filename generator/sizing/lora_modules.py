"""The linear modules of a model as PEFT's ``target_modules`` sees them: Transformers' full module names.

The names are those of Transformers 4.x modeling files for a ``*ForCausalLM`` model (``model.layers.N.self_attn.q_proj``,
``model.layers.N.mlp.experts.E.down_proj``, ``lm_head``); later releases store more models' experts as fused parameters
(as gpt-oss's), which only PEFT's ``target_parameters`` reaches.

The architecture engine names every matrix generically (``q_proj``, ``experts.gate_proj``, ``router``). Transformers
names some model types' matrices otherwise, fuses some, and keeps some models' experts as parameters of one module
rather than as linear layers (fuzz15 item 4: Mixtral's ``w1, w2, w3`` were refused and ``gate_proj`` was accepted, a
name PEFT matches to nothing there; gpt-oss's all-linear counted its experts' adapters, about 28x PEFT's).

PEFT matches a list entry against every module's full name: the name equals the entry or ends with ``"." + entry``
(``check_target_module_exists``,
https://github.com/huggingface/peft/blob/main/src/peft/tuners/tuners_utils.py). So a dotted entry's parents count: on
an MoE model ``shared_experts.gate_proj`` is the shared experts' matrix alone, and in ``mlp.experts.0.down_proj`` the
0 is the expert, not the decoder layer (fuzz17 item 9: both were read as every ``gate_proj`` / layer 0's experts).
"""

from __future__ import annotations

from generator.named_tuple import NamedTuple
from generator.sizing.architecture import ATTENTION, EXPERT, MLP, ROUTER, SHARED_EXPERT, Architecture, Layer, Linear
from generator.sizing.memo import memoized

#: Model types whose modules Transformers names otherwise: the engine's name -> Transformers' (modeling_mixtral
#: ``MixtralBlockSparseTop2MLP`` w1 / w3 / w2 and the router ``gate``; the Qwen MoE routers are ``gate`` too).
RENAMED: dict[str, dict[str, str]] = {
    "mixtral": {"experts.gate_proj": "w1", "experts.up_proj": "w3", "experts.down_proj": "w2", "router": "gate"},
    "qwen2_moe": {"router": "gate"},
    "qwen3_moe": {"router": "gate"},
}

#: Model types whose feed-forward block Transformers calls otherwise than ``mlp`` (modeling_mixtral
#: ``MixtralDecoderLayer.block_sparse_moe``).
FEED_FORWARD_BLOCK: dict[str, str] = {"mixtral": "block_sparse_moe"}

#: Model types that fuse matrices into one linear module: its name -> the engine's matrices in it (modeling_phi3:
#: ``qkv_proj``, ``gate_up_proj``). One adapter spans the fused output.
FUSED: dict[str, dict[str, tuple[str, ...]]] = {
    "phi3": {"qkv_proj": ("q_proj", "k_proj", "v_proj"), "gate_up_proj": ("gate_proj", "up_proj")},
}

#: Model types whose routed experts are parameters of one module, not linear layers: ``target_modules`` (and so
#: ``all-linear``) cannot adapt them (modeling_gpt_oss ``GptOssExperts.gate_up_proj`` / ``down_proj``; PEFT reaches
#: them only through ``target_parameters``). Their router is no linear layer either.
EXPERTS_NOT_LINEAR = frozenset({"gpt_oss"})

#: Model types whose routers are ``nn.Linear`` layers, which all-linear adapts and a name can target.
LINEAR_ROUTERS = frozenset({"mixtral", "qwen2_moe", "qwen3_moe"})

#: The groups of matrices that are linear modules in every model type.
_ADAPTABLE = (ATTENTION, MLP, EXPERT, SHARED_EXPERT)

#: Where the decoder layers are (``LlamaForCausalLM.model.layers``); the output layer is top-level ``lm_head``.
DECODER_LAYERS = ("model", "layers")
LM_HEAD = "lm_head"

#: Modules LoRA adapts with ``target_modules="all-linear"`` (PEFT) - every linear except lm_head and routers.
LORA_ALL = "all-linear"

#: The input embedding (``LlamaForCausalLM.model.embed_tokens``, an ``nn.Embedding``). PEFT's LoRA adapts it when it is
#: named (fuzz31 item 16), with ``peft.tuners.lora.layer.Embedding``: ``lora_embedding_A`` is ``(r, in_features)`` and
#: ``lora_embedding_B`` ``(out_features, r)``, where in_features is the embedding's ``num_embeddings`` (the vocabulary)
#: and out_features its ``embedding_dim`` (the hidden size): ``r x (vocab + hidden)`` parameters
#: (``Embedding.update_layer``, https://github.com/huggingface/peft/blob/main/src/peft/tuners/lora/layer.py).
#: ``all-linear`` leaves it out: it is no linear layer.
EMBED_TOKENS = "embed_tokens"
EMBED_TOKENS_PATH = ("model", EMBED_TOKENS)

#: Placeholders in a module's path for its decoder layer's number and its routed expert's.
LAYER_NO = "N"
EXPERT_NO = "E"


class PeftModule(NamedTuple):
    """One linear module of a decoder layer: its path under the layer (``mlp.experts.E.down_proj``) and its matrix.

    A routed expert's path holds :data:`EXPERT_NO`; its matrix's ``copies`` are the experts.
    """

    path: tuple[str, ...]
    linear: Linear

    @property
    def name(self) -> str:
        """The last component, which ``all-linear`` and a plain entry match."""
        return self.path[-1]


def peft_modules(model_type: str, layer: Layer) -> list[PeftModule]:
    """The layer's linear modules as Transformers names them, fused where fused."""
    renamed = RENAMED.get(model_type, {})
    fused = FUSED.get(model_type, {})
    in_fused = {part: name for name, parts in fused.items() for part in parts}
    feed_forward = FEED_FORWARD_BLOCK.get(model_type, "mlp") if layer.is_moe else "mlp"
    modules: list[PeftModule] = []
    joined: dict[str, list[Linear]] = {}
    for lin in layer.linears:
        adaptable = lin.group in _ADAPTABLE or (lin.group == ROUTER and model_type in LINEAR_ROUTERS)
        if not adaptable or (lin.group == EXPERT and model_type in EXPERTS_NOT_LINEAR):
            continue
        if lin.name in in_fused:
            joined.setdefault(in_fused[lin.name], []).append(lin)
            continue
        *parents, last = lin.name.split(".")
        if lin.group == EXPERT:
            parents.append(EXPERT_NO)  # experts.E.down_proj: an nn.ModuleList of experts
        block = "self_attn" if lin.group == ATTENTION else feed_forward
        modules.append(PeftModule((block, *parents, renamed.get(lin.name, last)), lin))
    for name, parts in joined.items():
        first = parts[0]
        width = sum(p.out_features for p in parts)
        block = "self_attn" if first.group == ATTENTION else feed_forward
        fused_lin = Linear(name, first.in_features, width, first.group, any(p.bias for p in parts))
        modules.append(PeftModule((block, name), fused_lin))
    return modules


def module_names(arch: Architecture) -> set[str]:
    """Every last component ``target_modules`` can match in the model's decoder layers."""
    return {module.name for layer in arch.layers for module in peft_modules(arch.model_type, layer)}


def _matched_copies(entry: tuple[str, ...], full: tuple[str, ...], copies: int) -> frozenset[int]:
    """Which of a module's copies (experts) an entry's components match, PEFT's way: ``full`` ends with ``entry``.

    ``full`` is the module's full name with the layer's number filled in and :data:`EXPERT_NO` where an expert's
    number goes. Names are compared as strings, as PEFT does (``03`` is not ``3``); an empty component (``.q_proj``)
    is in no module's name.
    """
    if len(entry) > len(full):
        return frozenset()
    experts = frozenset(range(copies))
    for want, have in zip(entry, full[len(full) - len(entry) :], strict=True):
        if have == EXPERT_NO:
            number = int(want) if want.isascii() and want.isdigit() and str(int(want)) == want else copies
            experts &= {number}
        elif want != have:
            return frozenset()
    return experts


@memoized
def adapted_modules(arch: Architecture, entries: tuple[str, ...]) -> tuple[tuple[int, PeftModule, int], ...]:
    """(decoder layer, module, experts adapted) for each decoder-layer module a named ``target_modules`` list adapts.

    The count is the module's ``copies`` unless entries name single experts (``experts.0.down_proj``).
    """
    split = [tuple(entry.split(".")) for entry in entries]
    adapted = []
    for index, layer in enumerate(arch.layers):
        for module in peft_modules(arch.model_type, layer):
            full = (*DECODER_LAYERS, str(index), *module.path)
            copies: frozenset[int] = frozenset()
            for entry in split:
                copies |= _matched_copies(entry, full, module.linear.copies)
            if copies:
                adapted.append((index, module, len(copies)))
    return tuple(adapted)


def matches_lm_head(entry: str) -> bool:
    """Whether an entry names the output layer (top-level ``lm_head``: equal to it, nothing ends with ``.lm_head``)."""
    return entry == LM_HEAD


def matches_embedding(entry: str) -> bool:
    """Whether an entry names the input embedding (``model.embed_tokens`` ends with it, PEFT's way)."""
    parts = tuple(entry.split("."))
    return len(parts) <= len(EMBED_TOKENS_PATH) and EMBED_TOKENS_PATH[len(EMBED_TOKENS_PATH) - len(parts) :] == parts


def unmatched(arch: Architecture, entries: tuple[str, ...]) -> dict[str, str]:
    """Each entry that matches no linear module of the model, with why (what its last component is, or is not)."""
    why: dict[str, str] = {}
    for entry in entries:
        if matches_lm_head(entry) or matches_embedding(entry) or adapted_modules(arch, (entry,)):
            continue
        last = entry.rsplit(".", 1)[-1]
        if "" in entry.split("."):
            why[entry] = f"an empty component: PEFT looks for a module name ending in '.{entry}', which none has"
        elif last == LM_HEAD:
            why[entry] = "the output layer is top-level lm_head, under no parent module"
        elif last == EMBED_TOKENS:
            why[entry] = "the input embedding is model.embed_tokens"
        elif last in module_names(arch):
            why[entry] = f"{last} is {_paths_of(arch, last)}"
        else:  # its last component, cut as the entry is (fuzz25 L7); a look-alike character named (hostile87)
            from generator.catalog.id_hints import lookalike_note  # only on a refusal

            why[entry] = f"no linear module is called {last if len(last) <= 60 else last[:60] + '...'}{lookalike_note(last)}"
    return why


def _paths_of(arch: Architecture, last: str) -> str:
    """The full names of the modules called ``last``, with the layers (N) and experts (E) they exist for."""
    layers: dict[tuple[str, ...], list[int]] = {}
    experts: dict[tuple[str, ...], int] = {}
    for index, layer in enumerate(arch.layers):
        for module in peft_modules(arch.model_type, layer):
            if module.name == last:
                layers.setdefault(module.path, []).append(index)
                experts[module.path] = module.linear.copies
    described = []
    for path, numbers in layers.items():
        ranges = f"N {_runs(numbers)}"
        if EXPERT_NO in path:
            ranges += f", E 0-{experts[path] - 1}"
        described.append(f"{'.'.join((*DECODER_LAYERS, LAYER_NO, *path))} ({ranges})")
    return " or ".join(described)


def _runs(numbers: list[int]) -> str:
    """Ascending numbers as runs: ``0-2, 5``."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


#: torchtune's LoRA module names -> Transformers' (newuser22 item 10). torchtune's Llama-family builders take
#: ``lora_attn_modules`` from q_proj, k_proj, v_proj and output_proj, adapt the MLP's ``FeedForward`` with
#: ``apply_lora_to_mlp``, whose w1 is the gate projection, w2 the down projection and w3 the up projection, and the final
#: ``output`` projection with ``apply_lora_to_output`` (``torchtune/models/llama3/_component_builders.py``
#: ``lora_llama3_self_attention`` / ``lora_llama3_mlp``, ``torchtune/modules/feed_forward.py`` ``self.w1 = gate_proj``,
#: https://github.com/pytorch/torchtune/blob/main/torchtune/modules/feed_forward.py). q_proj, k_proj and v_proj are
#: Transformers' names too.
TORCHTUNE_NAMES: dict[str, str] = {
    "output_proj": "o_proj",
    "w1": "gate_proj",
    "w2": "down_proj",
    "w3": "up_proj",
    "output": LM_HEAD,
}

#: The names that work under torchtune, for errors.
TORCHTUNE_NAMES_TEXT = "q_proj, k_proj, v_proj, " + ", ".join(f"{tt} ({hf})" for tt, hf in TORCHTUNE_NAMES.items())


def from_torchtune_names(arch: Architecture, entries: tuple[str, ...]) -> tuple[str, ...]:
    """``entries`` with torchtune's plain module names as Transformers names them; a name the model has is kept.

    A dotted entry is a Transformers path and is kept as written (torchtune's paths, ``layers.N.attn.output_proj``,
    are not PEFT's).
    """
    own = module_names(arch) | {LM_HEAD, EMBED_TOKENS}
    return tuple(entry if entry in own else TORCHTUNE_NAMES.get(entry, entry) for entry in entries)


def torchtune_names_in(entries: tuple[str, ...]) -> list[str]:
    """The entries that are torchtune's module names and not Transformers' (``output_proj``, ``w1``...)."""
    return [entry for entry in entries if entry in TORCHTUNE_NAMES]


#: torchtune's MLP matrices and Transformers' names for them: ``apply_lora_to_mlp`` adapts w1, w2 and w3 together.
TORCHTUNE_MLP = {"w1": "w1", "w2": "w2", "w3": "w3", "gate_proj": "w1", "down_proj": "w2", "up_proj": "w3"}


def torchtune_granularity_problem(entries: tuple[str, ...]) -> str | None:
    """Why torchtune cannot adapt exactly ``entries``; None where its LoRA builders can (fuzz20 item 4).

    torchtune's builders take ``lora_attn_modules`` from ``Literal["q_proj", "k_proj", "v_proj", "output_proj"]`` and two
    booleans, ``apply_lora_to_mlp`` (w1, w2 and w3 at once) and ``apply_lora_to_output``, for every layer alike
    (torchtune/modules/peft/_utils.py ``LORA_ATTN_MODULES``; models/llama3_1/_component_builders.py ``lora_llama3_1``):
    no single MLP matrix and no module path of one layer.
    """
    if paths := [entry for entry in entries if "." in entry]:
        return (
            f"torchtune applies LoRA to every layer alike (lora_attn_modules, apply_lora_to_mlp, apply_lora_to_output), "
            f"not to a module path: {', '.join(paths)}; give plain names (q_proj, k_proj, v_proj, output_proj, w1, w2, w3, "
            "output)"
        )
    if EMBED_TOKENS in entries:  # torchtune's LoRA builders have no embedding adapter
        return (
            "torchtune applies LoRA to no embedding (lora_attn_modules, apply_lora_to_mlp, apply_lora_to_output): "
            "leave out embed_tokens, or train it with PEFT (another framework)"
        )
    mlp = {TORCHTUNE_MLP[entry] for entry in entries if entry in TORCHTUNE_MLP}
    if mlp and len(mlp) < len(set(TORCHTUNE_MLP.values())):
        return (
            f"torchtune adapts the MLP as a whole (apply_lora_to_mlp: w1, w2 and w3 together), not {', '.join(sorted(mlp))} "
            "alone: give w1, w2 and w3 (gate_proj, down_proj, up_proj), or none of them"
        )
    return None


def adapted_in_layers(arch: Architecture, targets: tuple[str, ...]) -> tuple[tuple[int, PeftModule, int], ...]:
    """(decoder layer, module, copies adapted) of every decoder-layer module ``targets`` adapts (the head aside)."""
    if LORA_ALL in targets:
        return tuple((i, m, m.linear.copies) for i, layer in enumerate(arch.layers) for m in peft_modules(arch.model_type, layer))
    return adapted_modules(arch, targets)
