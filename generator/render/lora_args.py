"""A LoRA-serving deployment's engine flags: the adapter slots and host cache its memory is sized with.

vLLM: ``--enable-lora --max-loras N --max-lora-rank R --max-cpu-loras C``
(https://docs.vllm.ai/en/stable/configuration/engine_args.html); SGLang: ``--enable-lora --max-loras-per-batch N
--max-lora-rank R [--max-loaded-loras C] --lora-target-modules ...``
(https://docs.sglang.ai/advanced_features/server_arguments.html), whose
pool is allocated for the target modules (``all`` for every linear one). The adapters themselves (vLLM
``--lora-modules name=path``, SGLang ``--lora-paths``, or loaded at run time) are the deployment's own, not rendered.
"""

from __future__ import annotations

from typing import Any

#: PEFT's value for every linear module, and SGLang's name for it in ``--lora-target-modules``.
ALL_LINEAR = "all-linear"
SGLANG_ALL = "all"


def lora_engine_vars(lora: dict[str, Any], engine: str) -> tuple[dict[str, Any], list[str]]:
    """The ``engine.lora`` settings and the flags (args) of a plan's ``lora`` details, for ``engine``."""
    if engine == "vllm":
        settings = {
            "max_loras": lora["max_loras"],
            "max_lora_rank": lora["max_rank"],
            "max_cpu_loras": lora["max_cpu_loras"],
        }
        flags = {"max_loras": "--max-loras", "max_lora_rank": "--max-lora-rank", "max_cpu_loras": "--max-cpu-loras"}
        return settings, ["--enable-lora", *(arg for key, flag in flags.items() for arg in (flag, str(settings[key])))]
    targets = [SGLANG_ALL if t == ALL_LINEAR else t for t in lora["target_modules"]]
    settings = {"max_loras_per_batch": lora["max_loras"], "max_lora_rank": lora["max_rank"], "lora_target_modules": targets}
    args = ["--enable-lora", "--max-loras-per-batch", str(lora["max_loras"]), "--max-lora-rank", str(lora["max_rank"])]
    if (loaded := lora.get("max_cpu_loras")) is not None:  # SGLang's host cache of adapters (unset: every one)
        settings["max_loaded_loras"] = loaded
        args += ["--max-loaded-loras", str(loaded)]
    return settings, [*args, "--lora-target-modules", *targets]
