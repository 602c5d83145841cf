"""The linear modules of a decoder layer as PEFT's ``target_modules`` sees them: Transformers' names, fused or not.

The names are those of Transformers 4.x modeling files; later releases store more models' experts as fused parameters
(as gpt-oss's), which only PEFT's ``target_parameters`` reaches.

The architecture engine names every matrix generically (``q_proj``, ``experts.gate_proj``, ``router``). Transformers
names some model types' matrices otherwise, fuses some, and keeps some models' experts as parameters of one module
rather than as linear layers (fuzz15 item 4: Mixtral's ``w1, w2, w3`` were refused and ``gate_proj`` was accepted, a
name PEFT matches to nothing there; gpt-oss's all-linear counted its experts' adapters, about 28x PEFT's).
"""

from __future__ import annotations

from generator.sizing.architecture import ATTENTION, EXPERT, MLP, ROUTER, SHARED_EXPERT, Architecture, Layer, Linear

#: Model types whose modules Transformers names otherwise: the engine's name -> Transformers' (modeling_mixtral
#: ``MixtralBlockSparseTop2MLP`` w1 / w3 / w2 and the router ``gate``; the Qwen MoE routers are ``gate`` too).
RENAMED: dict[str, dict[str, str]] = {
    "mixtral": {"experts.gate_proj": "w1", "experts.up_proj": "w3", "experts.down_proj": "w2", "router": "gate"},
    "qwen2_moe": {"router": "gate"},
    "qwen3_moe": {"router": "gate"},
}

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


def peft_modules(model_type: str, layer: Layer) -> list[tuple[str, Linear]]:
    """The layer's linear modules by the name ``target_modules`` matches (the last component), fused where fused."""
    renamed = RENAMED.get(model_type, {})
    fused = FUSED.get(model_type, {})
    in_fused = {part: name for name, parts in fused.items() for part in parts}
    modules: list[tuple[str, Linear]] = []
    joined: dict[str, list[Linear]] = {}
    for lin in layer.linears:
        adaptable = lin.group in _ADAPTABLE or (lin.group == ROUTER and model_type in LINEAR_ROUTERS)
        if not adaptable or (lin.group == EXPERT and model_type in EXPERTS_NOT_LINEAR):
            continue
        if lin.name in in_fused:
            joined.setdefault(in_fused[lin.name], []).append(lin)
            continue
        modules.append((renamed.get(lin.name, lin.name).rsplit(".", 1)[-1], lin))
    for name, parts in joined.items():
        first = parts[0]
        width = sum(p.out_features for p in parts)
        modules.append((name, Linear(name, first.in_features, width, first.group, any(p.bias for p in parts))))
    return modules


def module_names(arch: Architecture) -> set[str]:
    """Every name ``target_modules`` can match in the model's decoder layers."""
    return {name for layer in arch.layers for name, _ in peft_modules(arch.model_type, layer)}
