"""A LoRA-serving deployment's engine flags: the adapter slots and host cache its memory is sized with.

vLLM: ``--enable-lora --max-loras N --max-lora-rank R --max-cpu-loras C``
(https://docs.vllm.ai/en/stable/configuration/engine_args.html); SGLang: ``--enable-lora --max-loras-per-batch N
--max-lora-rank R [--max-loaded-loras C] --lora-target-modules ...``
(https://docs.sglang.ai/advanced_features/server_arguments.html), whose
pool is allocated for the target modules (``all`` for every linear one). The flags' names are the engines' rules
(:data:`generator.sizing.lora_serving.ENGINE_LORA`); each setting is its flag's name in snake case. The adapters
themselves (vLLM ``--lora-modules name=path``, SGLang ``--lora-paths``, or loaded at run time) are the deployment's own,
not rendered.
"""

from __future__ import annotations

from typing import Any

#: SGLang's name for every linear module in ``--lora-target-modules`` (PEFT's ``all-linear``).
SGLANG_ALL = "all"


def lora_engine_vars(lora: dict[str, Any], engine: str) -> tuple[dict[str, Any], list[str]]:
    """The ``engine.lora`` settings and the flags (args) of a plan's ``lora`` details, for ``engine``."""
    from generator.sizing.lora_modules import LORA_ALL  # a service with adapters only
    from generator.sizing.lora_serving import ENGINE_LORA

    rules = ENGINE_LORA[engine]
    slots = {rules.batch_flag: lora["max_loras"], "--max-lora-rank": lora["max_rank"]}
    # the host cache of adapters: vLLM's always said; SGLang's unset where every adapter stays loaded
    host = {} if (loaded := lora.get("max_cpu_loras")) is None else {rules.host_flag: loaded}
    targets = [SGLANG_ALL if t == LORA_ALL else t for t in lora["target_modules"]]
    pool = {} if rules.wraps_every_linear else {"--lora-target-modules": targets}  # SGLang's pool: the targets only
    settings = {flag.removeprefix("--").replace("-", "_"): value for flag, value in {**slots, **pool, **host}.items()}
    args = ["--enable-lora"]
    for flag, value in {**slots, **host, **pool}.items():
        args += [flag, *map(str, value if isinstance(value, list) else [value])]
    return settings, args
