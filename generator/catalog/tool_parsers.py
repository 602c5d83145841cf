"""The tool-call parser each serving engine takes for a model family (``tool_parsers.json``, each entry sourced).

``inference.tool_calling`` renders vLLM's ``--enable-auto-tool-choice --tool-call-parser NAME`` or SGLang's
``--tool-call-parser NAME``: without them vLLM answers a ``tool_choice: "auto"`` request with HTTP 400. A family is
config.json's ``model_type`` and, where one type spans families with and without tool calling, a pattern on the id.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from generator.catalog import _records


def _families() -> tuple[Mapping[str, Any], ...]:
    return _records("tool_parsers")


def tool_call_parser(model_type: str, model_id: str, engine: str) -> str | None:
    """``engine``'s parser name for the model (vllm or sglang), or None where no family of the table matches."""
    for family in _families():
        if model_type not in family["model_types"]:
            continue
        if (pattern := family["id_pattern"]) is not None and re.search(pattern, model_id, re.IGNORECASE) is None:
            continue
        return str(family[engine])
    return None


def supported_families() -> str:
    """The families the table knows, for a refusal ("DeepSeek-V3, gpt-oss, ...")."""
    return ", ".join(str(family["family"]) for family in _families())
