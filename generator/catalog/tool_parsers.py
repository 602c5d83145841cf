"""The tool-call parser each serving engine takes for a model family (``tool_parsers.json``, each entry sourced).

``inference.tool_calling`` renders vLLM's ``--enable-auto-tool-choice --tool-call-parser NAME`` or SGLang's
``--tool-call-parser NAME``: without them vLLM answers a ``tool_choice: "auto"`` request with HTTP 400. A family is
config.json's ``model_type`` and, where one type spans families with and without tool calling, a pattern on the id.
``inference.tool_call_parser`` names the parser outright (a model whose id hides its family), checked against the
names each engine's registry holds (``engine_parsers``, read at a pinned commit).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from generator.catalog import _records, _section


def _families() -> tuple[Mapping[str, Any], ...]:
    return _records("tool_parsers")


def _family(model_type: str, model_id: str) -> Mapping[str, Any] | None:
    """The table's family of the model (its ``model_type`` and, where given, a pattern on its id).

    A family with a pattern goes first: Qwen3-Coder's config says ``qwen3_moe`` as Qwen3's MoE models do, and only its
    id tells it apart (the records are sorted by id, which puts ``qwen3`` first).
    """
    for family in sorted(_families(), key=lambda f: f["id_pattern"] is None):
        if model_type not in family["model_types"]:
            continue
        if (pattern := family["id_pattern"]) is not None and re.search(pattern, model_id, re.IGNORECASE) is None:
            continue
        return family
    return None


def tool_call_parser(model_type: str, model_id: str, engine: str) -> str | None:
    """``engine``'s parser name for the model (vllm or sglang), or None where no family of the table matches."""
    family = _family(model_type, model_id)
    return None if family is None else str(family[engine])


def chat_template(model_type: str, model_id: str, engine: str) -> str | None:
    """The tool chat template ``engine``'s docs recommend beside the family's parser (optional); None where none."""
    family = _family(model_type, model_id)
    template = None if family is None else family.get("chat_template", {}).get(engine)
    return None if template is None else str(template)


@cache
def known_parsers(engine: str) -> tuple[str, ...]:
    """Every ``--tool-call-parser`` name ``engine``'s registry holds (vllm or sglang), sorted."""
    return tuple(sorted(str(name) for name in _section("tool_parsers", "engine_parsers")[engine]))


def supported_families() -> str:
    """The families the table knows, for a refusal ("DeepSeek-V3, gpt-oss, ...")."""
    return ", ".join(str(family["family"]) for family in _families())


#: Where each engine's docs say the tool chat template is optional beside ``--tool-call-parser`` (fix184 item 4).
TEMPLATE_SOURCES = {
    "vllm": "https://github.com/vllm-project/vllm/blob/24bac9ba9873ee85cca6b6a2912c06b544322153/docs/features/tool_calling.md",
    "sglang": "https://docs.sglang.io/docs/advanced_features/tool_parser.md",
}


def tool_template_reason(engine: str, template: str) -> str:
    """The plan's words on the tool chat template ``engine``'s docs recommend for the family (not rendered)."""
    name = {"vllm": "vLLM", "sglang": "SGLang"}.get(engine, engine)
    return (
        f"tool calling: {name}'s docs recommend --chat-template {template} beside the parser (a file of {name}'s "
        "repository); optional, the model's own chat template is used without it, so it is not rendered: to use it, "
        f"put the file on the hosts and add the flag to the engine's args ({TEMPLATE_SOURCES[engine]})"
    )
