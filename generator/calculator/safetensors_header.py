"""Safetensors headers: every tensor's dtype, shape and exact bytes, without reading the weights.

A safetensors file starts with an 8-byte little-endian header length and a JSON header mapping
each tensor name to ``dtype``, ``shape`` and ``data_offsets`` (begin, end) in the data section
(https://github.com/huggingface/safetensors#format). Bytes per tensor are ``end - begin``: exact for
packed quantized tensors (GPTQ ``qweight`` int32, MXFP4 blocks) too.
"""

from __future__ import annotations

import json
import math
import os
import struct
from collections.abc import Iterable

from generator.errors import InputError, Location
from generator.input_files import DuplicateKeyError, read_text_limited, short, unique_keys
from generator.named_tuple import NamedTuple
from generator.sizing.architecture import Architecture
from generator.sizing.file_weights import group_tensor_bytes
from generator.sizing.precision import WEIGHT_FORMATS
from generator.sizing.weights import size_weights

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    pass

#: The safetensors reference implementation refuses headers above 100 MB.
MAX_HEADER_BYTES = 100_000_000
#: Largest safetensors index read, in bytes: DeepSeek-V3's names 91,982 tensors in about 8.9 MB (its tensor names as
#: the index lists them, computed), Kimi K2's 384 experts a layer about half as many again; the 4 MiB a config.json
#: is read to refused a DeepSeek-V3 directory (hostile94).
MAX_INDEX_BYTES = 64 << 20
#: Unquantized checkpoint dtypes and the weight format that holds them as stored.
DTYPE_PRECISION = {"BF16": "bf16", "F16": "fp16", "F32": "fp32", "F8_E4M3": "fp8"}
#: Files a directory's weights are in, by preference (as transformers and huggingface_hub look for them).
INDEX_FILE = "model.safetensors.index.json"
SINGLE_FILE = "model.safetensors"


class Tensor(NamedTuple):
    """One tensor of a checkpoint: name, safetensors dtype, bytes."""

    name: str
    dtype: str
    nbytes: int


#: Bits per element of the safetensors dtypes (https://github.com/huggingface/safetensors, ``Dtype``; F4 and F6 pack
#: elements in bytes).
DTYPE_BITS = {
    "BOOL": 8, "U8": 8, "I8": 8, "F8_E4M3": 8, "F8_E5M2": 8, "F8_E8M0": 8, "U16": 16, "I16": 16, "F16": 16,
    "BF16": 16, "U32": 32, "I32": 32, "F32": 32, "U64": 64, "I64": 64, "F64": 64, "C64": 64, "F4": 4,
    "F6_E2M3": 6, "F6_E3M2": 6,
}  # fmt: skip
#: Below this share of the bytes the config names, a checkpoint's files are not its weights: the config sizes them.
MIN_FILE_SHARE = 0.5
#: Above this multiple of the bytes the config names, the config is misread (a vision tower or MTP layers the config
#: leaves out are a few percent to a tenth of a model): refused.
MAX_FILE_SHARE = 1.5
#: More dimensions, or a dimension this large, is no tensor of a model (and the product would grow without bound).
MAX_RANK = 8
MAX_DIMENSION = 2**40


def checked_tensor(label: str, name: str, dtype: str, shape: object, offsets: object, data_bytes: int | None) -> Tensor:
    """One tensor of a header, or an InputError naming it: a header can claim any size.

    Its bytes must lie in the data section (``data_bytes``, where known) and be what its shape and dtype hold.
    """
    begin, end = offsets if isinstance(offsets, list | tuple) and len(offsets) == 2 else (None, None)
    if not isinstance(begin, int) or not isinstance(end, int) or not 0 <= begin <= end:
        raise InputError(f"{label}: tensor {short(name)} has invalid data_offsets {short(offsets)}")
    if data_bytes is not None and end > data_bytes:
        raise InputError(f"{label}: tensor {short(name)} ends at byte {end:,} of a {data_bytes:,}-byte data section")
    bits = DTYPE_BITS.get(dtype)
    if bits is None:
        raise InputError(f"{label}: tensor {short(name)} has dtype {short(dtype)}, not one safetensors defines")
    dims = shape if isinstance(shape, list) and len(shape) <= MAX_RANK else [-1]
    if not all(isinstance(d, int) and not isinstance(d, bool) and 0 <= d < MAX_DIMENSION for d in dims):
        raise InputError(f"{label}: tensor {short(name)} has invalid shape {short(shape)}")
    if (held := -(-math.prod(dims) * bits // 8)) != end - begin:
        raise InputError(
            f"{label}: tensor {short(name)} takes {end - begin:,} bytes, but its shape {short(shape)} of {dtype} holds {held:,}"
        )
    return Tensor(str(name), dtype, end - begin)


def tensors_of_header(header: object, label: str, data_bytes: int) -> list[Tensor]:
    """The tensors of a decoded safetensors header; an InputError for a malformed one."""
    if not isinstance(header, dict):
        raise InputError(f"{label}: safetensors header is not a JSON object")
    out = []
    spans: list[tuple[int, int, str]] = []
    for name, info in header.items():
        if name == "__metadata__":
            # a map of strings to strings, as the format has it (review70 item 15: a list was accepted); the safetensors
            # readers refuse another (https://github.com/huggingface/safetensors/blob/main/safetensors/src/tensor.rs)
            if not isinstance(info, dict) or not all(isinstance(v, str) for v in info.values()):
                raise InputError(f"{label}: safetensors __metadata__ must be a map of strings to strings, got {short(info)}")
            continue
        if not isinstance(info, dict) or "data_offsets" not in info or "dtype" not in info:
            raise InputError(f"{label}: tensor {short(name)} lacks dtype or data_offsets")
        out.append(checked_tensor(label, name, str(info["dtype"]), info.get("shape"), info["data_offsets"], data_bytes))
        spans.append((info["data_offsets"][0], info["data_offsets"][1], name))
    check_end_to_end(label, spans, data_bytes)
    return out


def check_end_to_end(label: str, spans: list[tuple[int, int, str]], data_bytes: int | None) -> None:
    """Refuse a file's tensors (``(begin, end, name)``, offsets already checked) that do not tile its data section.

    The safetensors readers refuse a header whose tensors leave a hole or overlap (``InvalidOffset``: each tensor
    begins where the one before it ends, the first at 0), or end before the data section does
    (``MetadataIncompleteBuffer``), so such a header sizes a checkpoint no engine loads (hostile94: one at twice the
    file's size was counted from the Hub; review99 item 1: a local file with a hole was accepted). ``data_bytes``: the
    data section's length, where known.
    """
    at, last = 0, ""
    for begin, end, name in sorted(spans):
        if begin < at:  # the format lays the tensors end to end: bytes two tensors claim would be counted twice
            raise InputError(f"{label}: tensors {short(last)} and {short(name)} claim the same bytes")
        if begin > at:
            raise InputError(f"{label}: tensor {short(name)} begins at byte {begin:,} and leaves bytes {at:,} to "
                             f"{begin:,} unclaimed: {_REFUSED} (each tensor begins where the one before ends)")  # fmt: skip
        at, last = end, name
    if data_bytes is not None and at != data_bytes:
        raise InputError(
            f"{label}: its data section is {data_bytes:,} bytes but its tensors end at byte {at:,}, leaving "
            f"{data_bytes - at:,} bytes that belong to no tensor: {_REFUSED}"
        )


#: Why a header whose tensors do not tile the data section is refused.
_REFUSED = "the safetensors readers refuse such a header"


#: How a Git LFS pointer file begins (https://github.com/git-lfs/git-lfs/blob/main/docs/spec.md).
GIT_LFS_POINTER = b"version https://git-lfs.github.com/spec/v1"


def read_header(path: str) -> list[Tensor]:
    """Read only the header of one ``.safetensors`` file."""
    if not os.path.isfile(path):
        if not os.path.exists(path):  # hostile85 item 2: a shard the index names, missing, read "not a regular file"
            broken = f" (a broken link to {short(os.readlink(path), 200)})" if os.path.islink(path) else ""
            raise InputError(f"{path}: no such file{broken}; the safetensors index names it (an unfinished download?)")
        raise InputError(f"{path}: not a regular file; only regular safetensors files are read")
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
            if len(head) < 8:
                raise InputError(f"{path}: too short to be a safetensors file")
            if head == GIT_LFS_POINTER[:8]:  # fuzz23 item 14: the file a clone without git-lfs leaves
                raise InputError(f"{path}: a Git LFS pointer, not the safetensors file: fetch it (git lfs pull)")
            (length,) = struct.unpack("<Q", head)
            size = os.path.getsize(path)
            if length > min(MAX_HEADER_BYTES, size - 8):
                # the length is not echoed: read from a file that is not a safetensors one, its bytes could be a secret
                raise InputError(f"{path}: not a safetensors file (its header length is larger than its {size:,} bytes allow)")
            header = json.loads(fh.read(length), object_pairs_hook=unique_keys)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc}") from None
    except DuplicateKeyError as exc:
        # review70 item 15: Python's json kept the last of a name given twice, and the first's bytes belonged to no tensor
        raise InputError(
            f"{path}: {short(exc.key)} appears twice in the safetensors header (the format names each tensor "
            "once; a reader keeps one of them, and the other's bytes belong to no tensor)"
        ) from None
    except (ValueError, RecursionError):
        raise InputError(f"{path}: safetensors header is not valid JSON") from None
    return tensors_of_header(header, path, size - 8 - length)


def shard_tensors(files: list[str]) -> list[Tensor]:
    """The tensors of a checkpoint's files; a name in two of them is refused.

    An engine loads a tensor name once (a later one overwrites the parameter), so one named in two shards would be
    counted twice (fuzz27 M3: +99.8% against the config, and "the files are used").
    """
    out: list[Tensor] = []
    first: dict[str, str] = {}
    for path in files:
        for tensor in read_header(path):
            if tensor.name in first:
                raise InputError(
                    f"tensor {short(tensor.name)} is in both {os.path.basename(first[tensor.name])} and "
                    f"{os.path.basename(path)}: a checkpoint holds each tensor once"
                )
            first[tensor.name] = path
            out.append(tensor)
    return out


def directory_weight_files(directory: str) -> list[str]:
    """The safetensors files holding a model directory's weights (the index's shards, else ``model.safetensors``)."""
    index = os.path.join(directory, INDEX_FILE)
    if os.path.isfile(index):
        text = read_text_limited(index, MAX_INDEX_BYTES, "safetensors index")
        try:
            weight_map = json.loads(text)["weight_map"]
            shards = weight_map.values()
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            raise InputError(f"{index}: not a valid safetensors index (needs a weight_map object)") from None
        # hostile85 item 2: str() of a shard 5, null or true read as the file '5', 'None' or 'True'
        if (odd := next((f for f in shards if not isinstance(f, str)), "")) != "":
            raise InputError(f"{index}: shard {json.dumps(odd)[:60]} (JSON) is not a file name in the model directory")
        files = sorted(set(shards))
        if not files:  # review70 item 15: sized from the config with no word, where a missing shard is refused
            raise InputError(f"{index}: its weight_map names no shard (a damaged or unfinished index)")
        for name in files:
            if os.path.basename(name) != name or name in ("", ".", ".."):
                raise InputError(f"{index}: shard {short(name)} is not a file name in the model directory")
        return [os.path.join(directory, f) for f in files]
    single = os.path.join(directory, SINGLE_FILE)
    return [single] if os.path.isfile(single) else []


def file_precision(arch: Architecture, tensors: Iterable[Tensor]) -> str | None:
    """The weight format the checkpoint stores: its quantization, else the dtype holding most layer bytes."""
    if arch.quantization is not None:
        return arch.quantization.precision
    by_dtype: dict[str, int] = {}
    for t in tensors:
        if ".layers." in t.name:
            by_dtype[t.dtype] = by_dtype.get(t.dtype, 0) + t.nbytes
    if not by_dtype:
        return None
    return DTYPE_PRECISION.get(max(sorted(by_dtype), key=lambda d: by_dtype[d]))


def with_file_weights(arch: Architecture, tensors: list[Tensor], source: str, location: Location | None = None) -> Architecture:
    """``arch`` carrying the checkpoint's exact bytes (when its format is known), with notes on what differs.

    Files holding far more than the config names are refused (at ``location``, the workload's ``model``).
    """
    precision = file_precision(arch, tensors)
    if precision is None and not any(".layers." in t.name for t in tensors):
        # newuser29 item 11: one embedding of 291 tensors read as "BF16 is not a known format"
        note = (
            f"weights sized from the config: the checkpoint's files hold {len(tensors):,} tensor(s) and none of a "
            "decoder layer (an incomplete download?)"
        )
        return arch._replace(notes=(*arch.notes, note))
    if precision is None or precision not in WEIGHT_FORMATS:
        dtypes = ", ".join(sorted({t.dtype for t in tensors})) or "none"
        note = f"weights sized from the config: the checkpoint's tensor dtypes ({dtypes}) are not a known format"
        return arch._replace(notes=(*arch.notes, note))
    pairs = ((t.name, t.nbytes) for t in tensors)
    files = group_tensor_bytes(pairs, arch.num_layers, precision, source, arch.tie_word_embeddings)
    notes = list(arch.notes)
    computed = size_weights(arch, WEIGHT_FORMATS[precision]).total_bytes
    if computed and files.total_bytes < MIN_FILE_SHARE * computed:
        # most of what the config names is not in the files (a partial download, or a header that claims little)
        notes.append(
            f"weights sized from the config: the checkpoint's files hold {files.total_bytes:,} bytes of {precision} "
            f"weights, under half the {computed:,} its config names"
        )
        return arch._replace(notes=tuple(notes))
    if shown := files.missing_layers_text():
        # hostile91: a checkpoint without one layer's tensors was sized from its files ("-11.8% ...; the files are
        # used"); vLLM refuses it ("Following weights were not initialized from checkpoint"), as llama.cpp a GGUF's
        raise InputError(
            f"{source}: the checkpoint's files hold no tensor of layer(s) {shown} of the {arch.num_layers} its "
            "config's num_hidden_layers names: a damaged or unfinished download (an engine refuses it: weights not "
            "initialized from checkpoint)",
            location,
        )
    if computed and files.total_bytes > MAX_FILE_SHARE * computed:
        # newuser32 item 4: ERNIE 4.5's experts, unread, made a 21.8 B MoE a 3.35 B dense model whose files held +552%;
        # the bytes came from the files, its KV cache, experts and decode reads from the misread config
        raise InputError(
            f"{source}: the checkpoint's files hold {files.total_bytes:,} bytes of {precision} weights, "
            f"{files.total_bytes / computed:.1f}x the {computed:,} its config gives: specgen does not read this config "
            "as the checkpoint is built (experts, layers or a tower it does not count), so it would size the memory and "
            "speed wrongly; report the model's config.json as a specgen bug",
            location,
        )
    if computed and abs(files.total_bytes - computed) / computed > 0.005:
        notes.append(
            f"{precision} weights are {files.total_bytes:,} bytes in the checkpoint's files, "
            f"{(files.total_bytes - computed) / computed:+.1%} against {computed:,} computed from the config; the files are used"
        )
    if files.extra_layer_bytes:
        notes.append(f"{files.extra_layer_bytes:,} bytes of tensors in layers past num_hidden_layers are not counted")
    return arch._replace(file_weights=files, notes=tuple(notes))
