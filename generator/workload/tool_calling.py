"""Where ``inference.tool_calling`` can be rendered, each refusal at its field.

The parser comes from ``inference.tool_call_parser`` where given (checked against the engine's registry, the names in
:func:`generator.catalog.tool_parsers.known_parsers`), else from :mod:`generator.catalog.tool_parsers` by the model's
family. Refused: a model of no family in that table and no parser named (no parser to name: the engine would start
and answer tool calls with HTTP 400, or not start), a pooling task (embed, score: no chat completion to call a tool
from), a parser name the engine does not know, and a parser named without ``tool_calling``. ``hardware.fixed`` runs
llama.cpp's server, which takes ``--jinja`` and reads the tool-call format from the GGUF's chat template (no parser
name: one given there is refused); any model goes, a template llama.cpp does not know by its generic format
(https://github.com/ggml-org/llama.cpp/blob/edb465a901a36028919c4c4a3715b47bb8c88687/docs/function-calling.md).
"""

from __future__ import annotations

from generator.calculator.model_source import ResolvedModel
from generator.catalog import suggest
from generator.catalog.tool_parsers import known_parsers, supported_families, tool_call_parser
from generator.errors import InputError
from generator.workload.loader import Document
from generator.workload.models import InferenceSpec


def _parser_errors(doc: Document, i: int, spec: InferenceSpec, *, fixed: bool) -> list[InputError]:
    """Errors at deployment ``i``'s ``inference.tool_call_parser`` (none where it is not given)."""
    name = spec.tool_call_parser
    if name is None:
        return []
    where = doc.locate(("deployments", i, "inference", "tool_call_parser"))
    if not spec.tool_calling:
        return [InputError("tool_call_parser: names the parser of tool_calling, which is off: add tool_calling: true", where)]
    if fixed:
        why = (
            "hardware.fixed is served by llama.cpp's server, which takes --jinja and reads the tool-call format from "
            "the GGUF's chat template, not a parser name: drop tool_call_parser (a template of another format goes "
            "in llama-server's --chat-template-file)"
        )
        return [InputError(f"tool_call_parser: {why}", where)]
    names = known_parsers(spec.engine)
    if name in names:
        return []
    why = (
        f"tool_call_parser: {name!r} is not a {spec.engine} tool-call parser{suggest(name, list(names)) or ';'} "
        f"{spec.engine} knows: {', '.join(names)} "
        "(generator/catalog/tool_parsers.json engine_parsers, read from the engine's registry)"
    )
    return [InputError(why, where)]


def tool_calling_errors(
    doc: Document, i: int, spec: InferenceSpec, model: ResolvedModel | None, *, fixed: bool
) -> list[InputError]:
    """Errors at deployment ``i``'s ``inference.tool_calling`` and ``tool_call_parser`` (none where both are off)."""
    if errors := _parser_errors(doc, i, spec, fixed=fixed):
        return errors
    if not spec.tool_calling:
        return []
    where = doc.locate(("deployments", i, "inference", "tool_calling"))
    if spec.pooling:
        return [InputError(f"tool_calling: a pooling service (task: {spec.task}) calls no tools; drop tool_calling", where)]
    if fixed or spec.tool_call_parser is not None or model is None:
        return []
    if tool_call_parser(model.architecture.model_type, model.id, spec.engine) is not None:
        return []
    why = (
        f"tool_calling: no {spec.engine} tool-call parser is known for {model.id} (model_type "
        f"{model.architecture.model_type!r}); supported families: {supported_families()} "
        "(generator/catalog/tool_parsers.json); name the engine's parser in tool_call_parser, drop tool_calling, "
        "or serve a model of one of them"
    )
    return [InputError(why, where)]
