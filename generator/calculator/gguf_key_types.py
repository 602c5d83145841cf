"""The value type each GGUF metadata key the estimate reads must have, and the refusal of a key of another (fix172).

A GGUF value carries its type (gguf.md: ``uint32``, ``float32``, ``string``, ``array`` ...), and llama.cpp's loader
reads each key as one type: ``get_key`` refuses any other ("key %s has wrong type %s but expected type %s",
llama-model-loader.cpp ``GGUFMeta::GKV::validated_get``), and ``get_key_or_arr`` takes an array (one value a layer)
only for ``feed_forward_length``, ``attention.head_count`` and ``attention.head_count_kv`` (llama-model.cpp
``load_hparams``). The estimate read some leniently: a ``block_count`` stored as float32 32.0 was 32 layers, a
one-value array of it too, a ``rope.scaling.factor`` stored as text was no scaling, a ``general.file_type`` as text
a mixed file. Each is now refused, naming the file, the key, the type found and the type expected. Integers of any
width are taken (the converter writes uint32; other writers a uint64), as the sizing reads their values alone.
"""

from __future__ import annotations

from generator.calculator.gguf_header import INTEGER_TYPES
from generator.errors import InputError, Location
from generator.input_files import short

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start reads this module)
if TYPE_CHECKING:
    from typing import Any

#: The value types of each kind a key is read as.
KINDS = {
    "integer": INTEGER_TYPES,
    "float": frozenset({"float32", "float64"}),
    "string": frozenset({"string"}),
}
#: How a refusal says each kind: what the value must be, and the types that are.
_SAID = {
    "integer": ("a whole number", "an integer type (uint32, as convert_hf_to_gguf.py writes it)"),
    "float": ("a number", "float32 (as convert_hf_to_gguf.py writes it)"),
    "string": ("text", "string"),
}
#: The ``<arch>.*`` keys llama.cpp reads one value a layer or one for all (``get_key_or_arr``).
PER_LAYER = frozenset({"feed_forward_length", "attention.head_count", "attention.head_count_kv"})
#: Keys the estimate reads beside the architecture's counts, and the kind of each.
GENERAL_KEYS = {
    "general.architecture": "string",
    "general.name": "string",
    "general.file_type": "integer",
    "split.count": "integer",
    "split.no": "integer",
    "split.tensors.count": "integer",
}
#: ``<arch>.rope.scaling.*`` keys the estimate reads (gguf-py ``Keys.Rope``: type string, factor float32, original
#: context length uint32), and the kind of each.
ROPE_KEYS = {
    "rope.scaling.type": "string",
    "rope.scaling.factor": "float",
    "rope.scaling.original_context_length": "integer",
}


def type_refusal(
    key: str, value: Any, found: str | None, kind: str, where: tuple[str, Location | None], per_layer: bool = False
) -> InputError | None:
    """The error for ``key`` (holding ``value`` of type ``found``) where it is not of ``kind``; None where it is.

    ``per_layer``: an array of ``kind`` is taken too (llama.cpp's ``get_key_or_arr``). ``found`` None: the type is not
    known (a header not read from a file), and nothing is refused. ``where``: the file's label and the location.
    """
    allowed = KINDS[kind]
    if found is None or found in allowed or (per_layer and found.removeprefix("array of ") in allowed):
        return None
    what, expected = _SAID[kind]
    layers = ", or an array of them (one a layer)" if per_layer else ""
    label, location = where
    return InputError(
        f"{label}: GGUF key {key} must be {what}, got {short(value)}: its type is {found}, where {expected}{layers} is "
        "expected (llama.cpp's loader refuses it too: key has wrong type)",
        location,
    )


def check_key_types(
    fields: dict[str, Any], types: dict[str, str], kinds: dict[str, str], where: tuple[str, Location | None], prefix: str = ""
) -> None:
    """Refuse the first key of ``kinds`` a file holds as a value of another type.

    ``kinds``: :data:`GENERAL_KEYS`, or :data:`ROPE_KEYS` under ``prefix`` ``"<arch>."``.
    """
    for suffix, kind in kinds.items():
        key = prefix + suffix
        if key in fields and (error := type_refusal(key, fields[key], types.get(key), kind, where)):
            raise error
