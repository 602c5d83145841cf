"""Resolve a model reference: a catalog id, a Hub id, a ``config.json``, a model directory or a ``.gguf`` file.

A catalog id is answered offline from the catalog. An ``org/name`` the catalog lacks, any
``org/name@revision`` or ``hf:org/name``, and every Hub id when ``from_hub`` is set, are read from
the Hugging Face Hub (:mod:`generator.calculator.hub`). A directory's safetensors headers and a
``.gguf`` file's tensor table give the exact weight bytes.
"""

from __future__ import annotations

import functools
import json
import os
import re
from fractions import Fraction

from generator import catalog
from generator.calculator.gguf_header import starts_as_gguf
from generator.calculator.model_limits import check_config_dimensions
from generator.errors import ArchitectureError, InputError, Location, UnknownIdError, UnreachableError
from generator.input_files import MAX_CONFIG_BYTES, inside_root, read_text_limited, refuse_unencodable, short
from generator.json_numbers import finite_float, finite_int, refuse_constant, unreadable_number
from generator.json_positions import line_column, locate, unpaired_surrogate
from generator.named_tuple import NamedTuple
from generator.sizing.architecture import Architecture, parse_architecture
from generator.sizing.precision import WEIGHT_FORMATS, WeightFormat, storage_family, weight_format

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


class ResolvedModel(NamedTuple):
    """A model ready to size: its id, where it came from, and its architecture."""

    id: str
    name: str
    source: str
    architecture: Architecture

    def __hash__(self) -> int:
        """Hash of the names only: hashing the architecture (every layer) took 37 us, and planning keys caches by model.

        Equal models have equal names, so equal models hash alike; equality still compares every field.
        """
        return hash((self.id, self.name, self.source))


#: What the architecture parser raises on a config whose fields have the wrong shape or value.
_MALFORMED = (TypeError, ValueError, AttributeError, ArithmeticError, KeyError, IndexError, RecursionError)


def parse_config(config: Mapping[str, Any], label: str, location: Location | None) -> Architecture:
    """``parse_architecture``, with every failure an ArchitectureError that names the config."""
    try:
        check_config_dimensions(config)
        return parse_architecture(config)
    except ArchitectureError as exc:
        raise ArchitectureError(f"{label}: {exc.message}", location) from None
    except _MALFORMED as exc:
        detail = str(exc) or type(exc).__name__
        if isinstance(exc, RecursionError):
            detail = "nested too deeply"
        raise ArchitectureError(f"{label}: malformed config.json: {detail}", location) from None


def hub_config_name(repo_id: str, commit: str) -> str:
    """How a message names a Hub model's ``config.json``: ``org/name@<commit>:config.json``, then its line and column.

    The commit, not the revision asked: a line is a line of the file at that commit, and ``main`` moves (fix162).
    """
    return f"{repo_id}@{commit}:config.json"


def config_from_text(text: str, name: str, location: Location | None) -> dict[str, Any]:
    """A config.json's text read as its object: one reading for a local file and a Hub download alike.

    ``name`` is how messages name the file (its path, or :func:`hub_config_name`), before the line and column of a
    refusal. fix162 item 1: a Hub config was read by ``json.loads`` alone, so NaN passed and a syntax error had no line.
    """
    if not text.strip():  # newuser29 item 10: the JSON library's "Expecting value" said nothing of why
        raise InputError(f"model config {short(name, 200)} is empty (an incomplete download?)", location)
    try:
        config = json.loads(text, parse_constant=refuse_constant, parse_float=finite_float, parse_int=finite_int)
    except ValueError as exc:
        raise InputError(_unreadable_config(text, name, exc), location) from None
    except RecursionError:
        raise InputError(f"cannot read model config {name}: JSON nested too deeply", location) from None
    if not isinstance(config, dict):
        raise InputError(f"{name}: a config.json must hold a JSON object", location)
    if (field := unpaired_surrogate(text, config)) is not None:  # hostile92: a traceback as model_type was printed
        line, column = locate(text, field)
        raise InputError(
            f"{name}:{line}:{column}: cannot read model config: {'the document' if not field else short(field, 200)} "
            "holds an unpaired surrogate escape (\\ud800-\\udfff alone), which no UTF-8 text can hold",
            location,
        )
    return config


def config_architecture(config: Mapping[str, Any], text: str, name: str, location: Location | None) -> Architecture:
    """:func:`parse_config` of a config read from ``text``: a refused field named at its line and column in ``name``."""
    try:
        return parse_config(config, name, location)
    except ArchitectureError as exc:
        raise ArchitectureError(_placed_field_error(text, name, exc.message), location) from None


def _unreadable_config(text: str, path: str, exc: ValueError) -> str:
    """Why a config.json's text is not read, at its line and column, and at its field where a number is the cause."""
    if isinstance(exc, json.JSONDecodeError):
        said = exc.msg
        if said.startswith("Unexpected UTF-8 BOM"):  # Python's words: "(decode using utf-8-sig)"
            said = "it starts with a UTF-8 byte-order mark, which JSON readers (transformers' too) refuse: save it without"
        return f"{path}:{exc.lineno}:{exc.colno}: cannot read model config: {said}"
    found = unreadable_number(text)
    if found is None:
        return f"cannot read model config {short(path, 200)}: {short(str(exc), 200)}"
    field, said, line, column = found
    return f"{path}:{line}:{column}: cannot read model config: config field {short(field)}: {said}"


#: The field a config.json refusal names (``config field 'rope_scaling.factor' must be ...``).
_NAMED_FIELD = re.compile(r"config field '([^']+)'")
#: Or the field it begins with (``num_key_value_heads 8 must ...``, ``layer_types[3] is 'x'``, ``quantization_config.
#: quant_method 'x' is not supported``): placed only where the file holds a value of that name (hostile90).
_LEADING_FIELD = re.compile(r"([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*|\[[0-9]+\])*)[ :]")


def _placed_field_error(text: str, path: str, message: str) -> str:
    """``message`` (``<path>: ...``) at the line and column of the config field it names, where the file holds it.

    hostile86: a refused field (``hidden_size`` past its range, a ``torch_dtype`` no checkpoint has) named the file and
    the field but no line; a field the file lacks (a required one) keeps the message as it is.
    """
    if not message.startswith(f"{path}: "):
        return message
    named = _NAMED_FIELD.search(message) or _LEADING_FIELD.match(message, len(path) + 2)
    if named is None:
        return message
    from generator.json_positions import field_offset  # only on a refusal

    field = named.group(1)
    offset = field_offset(text, field)
    while offset is None and "." in field:  # hostile91: quantization_config {} lacks its quant_method: at the block
        field = field.rsplit(".", 1)[0]
        offset = field_offset(text, field)
    if offset is None:
        return message
    line, column = line_column(text, offset)
    return f"{path}:{line}:{column}: {message[len(path) + 2 :]}"


def _looks_like_path(ref: str) -> bool:
    return ref.endswith(".json") or ref.startswith((".", "/", "~")) or (os.sep in ref and os.path.exists(ref))


def resolve_model(
    ref: str, base_dir: str = ".", location: Location | None = None, root: str | None = None, from_hub: bool = False
) -> ResolvedModel:
    """Resolve ``ref``; paths are relative to ``base_dir`` (the workload file's folder) and, given a ``root``, inside it.

    ``from_hub``: read an ``org/name`` id from the Hub even when the catalog has it.
    """
    if "\x00" in ref:  # fuzz27 H3: os.path and git refuse a NUL with a ValueError, not as input
        raise InputError(f"the model {short(ref)} holds a NUL character, which no file name or id may hold", location)
    path = os.path.expanduser(ref)
    path = path if base_dir in ("", ".") else os.path.join(base_dir, path)  # never "././model" in a message
    refuse_unencodable(path, "model", location)  # hostile86: a traceback in a locale that is not UTF-8
    if ref.lower().endswith(".gguf"):
        from generator.calculator.gguf_file import resolve_gguf

        if root is not None:
            path = inside_root(path, root, ref, location)
        return resolve_gguf(ref, path, location, root)
    gguf = starts_as_gguf(path)  # a GGUF file of another name (an old ggml-model-q4_k_m.bin): its header says so
    # hostile91: a name that is a dangling symbolic link here (a model folder moved away) is that path, not a
    # catalog / Hub id of the same spelling sized without a word
    dangling = os.path.islink(path) and not os.path.exists(path)
    if _looks_like_path(ref) or os.path.isdir(path) or gguf or dangling:
        if root is not None:
            path = inside_root(path, root, ref, location)  # the same file, or refused
        if gguf:
            from generator.calculator.gguf_file import resolve_gguf

            return resolve_gguf(ref, path, location, root)
        return _from_path(ref, path, location, root)
    hub_id = _hub_id(ref, from_hub, location)
    if hub_id is not None:
        return _from_hub(*hub_id, location)
    try:
        record = catalog.find_model(ref)
    except InputError as exc:
        raise type(exc)(exc.message, location) from None
    try:
        arch = _catalog_architecture(record.id)
    except ArchitectureError as exc:
        raise ArchitectureError(exc.message, location) from None
    return ResolvedModel(record.id, record.name, "catalog: " + (record.source[0] if record.source else "unsourced"), arch)


def _listing(directory: str) -> list[str]:
    """The names in ``directory``; none where it cannot be read."""
    try:
        return os.listdir(directory)
    except OSError:
        return []


@functools.cache
def _catalog_architecture(model_id: str) -> Architecture:
    """A catalog model's architecture, parsed once per process (every workload naming it shares it)."""
    arch = parse_config(catalog.models()[model_id].config, f"catalog model '{model_id}'", None)
    checkpoint = catalog.models()[model_id].nvfp4_checkpoint
    if checkpoint is not None and (arch.quantization is None or arch.quantization.precision != "nvfp4"):
        # fix196: ``precision: nvfp4`` of this model is sized as its published NVFP4 checkpoint, modules it keeps
        arch = arch._replace(published=_catalog_architecture(checkpoint).quantization)
    return arch


#: ``org/name`` or ``org/name@revision`` (optionally written ``hf:org/name@revision``).
HUB_ID = re.compile(r"(?:hf:)?(?P<repo>[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)(?:@(?P<revision>[\w./-]+))?")


def parse_hub_id(ref: str) -> tuple[str, str | None] | None:
    """``(repo_id, revision)`` of a Hub reference, or ``None`` when ``ref`` is not one."""
    match = HUB_ID.fullmatch(ref)
    if match is None:
        return None
    return match.group("repo"), match.group("revision")


#: A commit id as the Hub gives it (``X-Repo-Commit``): 40 hexadecimal digits.
COMMIT = re.compile(r"[0-9a-f]{40}")
#: A Hub model's source (:attr:`generator.calculator.hub.HubModel.source`): its repository and the commit read.
_HUB_SOURCE = re.compile(rf"hf: (?P<repo>[^@\s]+)@(?P<commit>{COMMIT.pattern})\b")


def hub_source(source: str) -> tuple[str, str] | None:
    """(repository, commit) a model read from the Hub was sized at (its ``source``); None for another source."""
    match = _HUB_SOURCE.match(source)
    return (match.group("repo"), match.group("commit")) if match else None


def _bad_revision(revision: str) -> str | None:
    """Why ``revision`` is no git ref name (``git check-ref-format``'s rules that :data:`HUB_ID`'s characters can break).

    The Hub client keeps a resolved revision's commit at ``refs/<revision>`` in its cache, unnormalised: a ``..``
    segment wrote it to any file the user may write (newuser58 item 1, through a mirror that resolved any revision).
    """
    parts = revision.split("/")
    if revision.startswith("/") or revision.endswith("/") or "" in parts:
        return "has an empty path segment (a leading, trailing or doubled '/')"
    if ".." in revision:
        return "holds '..'"
    if any(part.startswith(".") or part.endswith(".lock") for part in parts) or revision.endswith("."):
        return "has a segment starting with '.' or ending in '.lock', or ends in '.'"
    return None


def _hub_id(ref: str, from_hub: bool, location: Location | None) -> tuple[str, str | None, str | None] | None:
    """``(repo, revision, catalog miss)`` when ``ref`` is to be read from the Hub, else ``None`` (a catalog id).

    The catalog miss is the catalog's own message (with close ids) for an id read from the Hub only
    because the catalog lacks it: a typo of a catalog id then says so first.
    """
    parsed = parse_hub_id(ref)
    if parsed is None:
        if ref.endswith("@") and parse_hub_id(ref[:-1]) is not None:
            raise InputError(
                f"model {short(ref)} names no revision after '@': give a branch, tag or commit, or drop the '@'", location
            )
        return None
    if parsed[1] is not None and (why := _bad_revision(parsed[1])):
        said = f"model {short(ref)} names revision {short(parsed[1])}, which {why}: give a branch, tag or commit"
        raise InputError(said, location)
    if from_hub or ref.startswith("hf:") or parsed[1] is not None:
        return (*parsed, None)
    try:
        catalog.find_model(ref)
    except UnknownIdError as exc:
        return (*parsed, exc.message)
    return None


def _from_hub(repo_id: str, revision: str | None, catalog_miss: str | None, location: Location | None) -> ResolvedModel:
    from generator.calculator.hub import HeadersUnreachableError, HubRepoError, fetch_hub_model
    from generator.calculator.safetensors_header import with_file_weights

    try:
        hub = fetch_hub_model(repo_id, revision, location)
    except InputError as exc:
        if catalog_miss is None or isinstance(exc, HeadersUnreachableError):  # the Hub has it (fix143): no close ids
            raise
        if isinstance(exc, HubRepoError):
            # the Hub has it but will not give it (gated, say): that reason is the one to act on, the catalog's after
            raise UnknownIdError(f"{exc.message} (nor is it a catalog id: {catalog_miss})", location) from None
        # on neither, or the Hub out of reach: a typo of a catalog id is as likely, so its close ids come first
        said = f"{catalog_miss}; not read from the Hub either: {exc.message}"
        if isinstance(exc, UnreachableError):  # exits 75, not 1: a retry may read it (newuser82 item 7)
            raise UnreachableError(said, location) from None
        raise UnknownIdError(said, location) from None
    arch = config_architecture(hub.config, hub.config_text, hub_config_name(repo_id, hub.commit), location)
    if hub.tensors is not None:
        arch = with_file_weights(arch, hub.tensors, f"safetensors headers of {repo_id}@{hub.commit}", location)
    arch = arch._replace(notes=(*arch.notes, *hub.notes))
    return ResolvedModel(repo_id, repo_id, hub.source, arch)


def _from_path(ref: str, path: str, location: Location | None, root: str | None = None) -> ResolvedModel:
    """A local config.json, or a model directory's with its safetensors headers.

    Given a ``root``, every file read resolves inside it, symlinks followed, as the path named does.
    """
    directory = None
    if os.path.isdir(path):
        directory = path
        path = os.path.join(path, "config.json")
    if not os.path.lexists(path):
        held = sorted(n for n in _listing(directory) if n.lower().endswith(".gguf")) if directory else []
        if held:  # newuser29 item 13: a folder of GGUF files is not a model directory
            names = ", ".join(short(n) for n in held[:5]) + (f" and {len(held) - 5} more" if len(held) > 5 else "")
            raise InputError(
                f"model {short(ref)} is a folder without config.json that holds GGUF file(s): {names}; give the path "
                "of one (the first part of a split file)",
                location,
            )
        raise InputError(f"model config {short(ref)} not found (looked for {short(path, 200)})", location)
    if root is not None:
        path = inside_root(path, root, path, location)
    # hostile90: a folder's config.json that is no file is named, not the folder ("model config 'DIR' is a directory")
    named = ref if directory is None else os.path.join(ref, "config.json")
    text = read_text_limited(path, MAX_CONFIG_BYTES, f"model config {short(named)}", location)
    config = config_from_text(text, path, location)
    arch = config_architecture(config, text, path, location)
    if directory is not None:
        arch = _with_directory_weights(arch, directory, root, location)
    name = str(config.get("_name_or_path") or os.path.basename(os.path.dirname(os.path.abspath(path))) or ref)
    return ResolvedModel(ref, name, f"local config: {ref}", arch)


def default_precision(model: ResolvedModel) -> str:
    """The checkpoint's own format: its quantization, else its dtype (bf16 for fp32 safetensors checkpoints).

    vLLM's ``dtype=auto`` serves an fp32 safetensors checkpoint in bf16; a GGUF file is run as stored, so an F32 GGUF
    is fp32 (llama.cpp keeps F32 tensors F32: newuser29 item 5, a 32.1 GB Llama-3.1-8B F32 file was sized at its
    16.06 GB bf16 half).
    """
    arch = model.architecture
    files = arch.file_weights
    if files is not None and (files.precision != "fp32" or files.fixed_format):
        return files.precision
    if arch.quantization is not None:
        return arch.quantization.precision
    return "fp16" if arch.torch_dtype in ("float16", "fp16") else "bf16"


def fixed_format_problem(model: ResolvedModel, name: str) -> str | None:
    """Why ``model`` cannot be planned at precision ``name``: its file is run as stored in another format; else None.

    A GGUF file holds one fixed mixture of tensor types, and llama.cpp computes with those (nothing re-quantizes it
    as it loads): ``precision: q8_0`` or ``allowed_precisions: [q2_k]`` on a Q4_K_M file planned bytes the file does
    not have (newuser29 item 1: ``-ngl 69`` of a 42.47 GB Q4_K_M file on a 24 GB card).
    """
    files = model.architecture.file_weights
    if files is None or not files.fixed_format:
        return None
    own = default_precision(model)
    if model_weight_format(model.architecture, name).name == own:
        return None
    return (
        f"{model.id} is a GGUF file of {own} weights, which llama.cpp runs as stored: it cannot be planned at {name}; "
        f"for {name}, point model at a {name} .gguf file (llama-quantize makes one from the 16-bit GGUF, or download it)"
    )


def model_weight_format(arch: Architecture, name: str) -> WeightFormat:
    """The weight format called ``name``.

    A GGUF mixture specgen has no formula for (IQ types, ``Q4_K_S``...) is the checkpoint's own
    format, whose bytes come from its tensor table.
    """
    files = arch.file_weights
    if files is not None and name == files.precision and name not in WEIGHT_FORMATS:
        bits = Fraction(files.total_bytes * 8, max(arch.params_total, 1))
        return WeightFormat(name, files.source, bits, high_bits=32)
    return weight_format(name)


def served_precision(model: ResolvedModel, precision: str | None) -> str:
    """The format name a service asking for ``precision`` (None: the checkpoint's own) is served in.

    ``fp8`` on a checkpoint stored in another FP8 layout (DeepSeek-R1's 128 x 128 blocks, a per-channel or fbgemm one)
    is that layout: the engine loads the checkpoint's FP8 as stored (newuser34 item 10: sized per tensor, and warned
    that the checkpoint was not what the plan sized).
    """
    own = default_precision(model)
    if precision == "fp8" and storage_family(own) == "fp8":
        return own
    return precision or own


def serving_format(model: ResolvedModel, precision: str | None) -> WeightFormat:
    """The weight format a deployment serves: its ``precision``, else the checkpoint's own (:func:`served_precision`)."""
    return model_weight_format(model.architecture, served_precision(model, precision))


def _with_directory_weights(arch: Architecture, directory: str, root: str | None, location: Location | None) -> Architecture:
    """A model directory's safetensors headers (not the weights) give its exact bytes; each file inside ``root``."""
    from generator.calculator.safetensors_header import INDEX_FILE, directory_weight_files, shard_tensors, with_file_weights

    index = os.path.join(directory, INDEX_FILE)
    if root is not None and os.path.lexists(index):
        inside_root(index, root, index, location)
    try:
        files = directory_weight_files(directory)
        if root is not None:
            files = [inside_root(f, root, f, location) for f in files]
        tensors = shard_tensors(files)
    except InputError as exc:  # at the workload's model field, as a config.json's (fuzz25 M6)
        raise type(exc)(exc.message, exc.location or location) from None
    if not files:
        return arch
    return with_file_weights(arch, tensors, f"safetensors headers in {directory}", location)
