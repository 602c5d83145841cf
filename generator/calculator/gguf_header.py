"""A GGUF file's header read as its format lays it out: metadata and tensor table, without the token arrays.

gguf-py's ``GGUFReader`` forms a numpy view of every element of every metadata array, so a real Llama 3 file's
128,256 tokens, their types and 280,147 merges took 18 s to read before the first tensor (fuzz26 H2: a 5-million-
string array ran past 120 s at 3.3 GB). Sizing reads a few dozen keys and the tensor table: here arrays are walked
over (a string's length read, its bytes skipped) and kept only where short, and nothing is decoded that is not
used. Layout (ggml ``docs/gguf.md``, versions 2 and 3, little-endian): magic ``GGUF``, version u32, tensor count
u64, key/value count u64; each key a string (u64 length and UTF-8 bytes), its value type u32 and value (an array:
element type u32, count u64, elements); each tensor its name, dimension count u32, dimensions u64 each (ggml order,
fastest first), type u32 and offset u64 from the data section, which starts at the header's end rounded up to
``general.alignment`` (32 by default).
"""

from __future__ import annotations

import os
import struct

from generator.named_tuple import NamedTuple
from generator.sizing.context_limit import FLOAT32_MAX

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start reads this module)
if TYPE_CHECKING:
    from typing import Any

#: Value types by their number: struct format of a scalar (``s``: a string, ``a``: an array).
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY, _FLOAT32 = 8, 9, 6
#: Value types by their number, as gguf.md names them (``GGUF_METADATA_VALUE_TYPE_*`` in lower case).
TYPE_NAMES = {
    0: "uint8", 1: "int8", 2: "uint16", 3: "int16", 4: "uint32", 5: "int32", 6: "float32", 7: "bool", 8: "string",
    9: "array", 10: "uint64", 11: "int64", 12: "float64",
}  # fmt: skip
#: The integer value types: a count read as a whole number may be any of them, never a float, bool or string.
INTEGER_TYPES = frozenset({"uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64"})
#: Arrays longer than this are walked over and not kept (per-layer values have one element a layer).
MAX_KEPT_ARRAY = 4096
#: ggml's most dimensions a tensor has (``GGML_MAX_DIMS``).
MAX_DIMS = 4
DEFAULT_ALIGNMENT = 32
#: The bytes every GGUF file begins with.
MAGIC = b"GGUF"


class SkippedArray(NamedTuple):
    """An array longer than :data:`MAX_KEPT_ARRAY` (a tokenizer's tokens or merges), its length alone kept."""

    element_type: int
    length: int


class GgufTensor(NamedTuple):
    """One entry of the tensor table."""

    name: str
    #: Dimensions in ggml order (the fastest-varying first).
    shape: tuple[int, ...]
    tensor_type: int
    #: Offset of its data from the start of the data section.
    offset: int
    #: Bytes of its data: elements / block size x block bytes of its type.
    n_bytes: int


class GgufHeader(NamedTuple):
    """What sizing reads of a GGUF file."""

    fields: dict[str, Any]
    tensors: list[GgufTensor]
    #: Each key's value type as gguf.md names it (``uint32``, ``string``; an array's ``array of <element type>``): the
    #: values alone do not tell a float32 32.0 from a uint32 32 (fix172 item 3).
    types: dict[str, str]


class GgufFormatError(Exception):
    """The file is no GGUF file this reader reads; the message says why in words."""


class EndsEarlyError(GgufFormatError):
    """A read needed more bytes than the file has."""

    def __init__(self, needed: int) -> None:
        """Keep how many bytes the read needed the file to have."""
        self.needed = needed
        super().__init__(f"the file ends early: its header and tensors need at least {needed:,} bytes")


#: Bytes read from the file at a time: the header is read in order, a window of the file at once, never mapped whole
#: (review70 item 12: mapping a 16 GB file to read its 0.5 MB header failed under ``ulimit -v``, "Cannot allocate
#: memory"; a 400 GB file needed 400 GB of address space).
READ_WINDOW = 1 << 20


class _Window:
    """Bytes of an open file read a window at a time (the header's reads go forward)."""

    def __init__(self, fh: Any) -> None:
        self.fh = fh
        self.start = 0
        self.buf = b""

    def __call__(self, start: int, length: int) -> bytes:
        if start < self.start or start + length > self.start + len(self.buf):
            self.fh.seek(start)
            self.buf, self.start = self.fh.read(max(length, READ_WINDOW)), start
            if len(self.buf) < length:  # the file shrank under us
                raise EndsEarlyError(start + length)
        offset = start - self.start
        return self.buf[offset : offset + length]


class _Cursor:
    """Reads little-endian values from a file of ``size`` bytes, every read checked against its end."""

    def __init__(self, read: Any, size: int) -> None:
        self.read = read
        self.size = size
        self.at = 0

    def take(self, size: int) -> int:
        """The offset of the next ``size`` bytes, moving past them (unread)."""
        start, end = self.at, self.at + size
        if end > self.size:
            raise EndsEarlyError(end)
        self.at = end
        return start

    def bytes(self, size: int) -> bytes:
        """The next ``size`` bytes."""
        return bytes(self.read(self.take(size), size))

    def unpack(self, fmt: str) -> Any:
        return struct.unpack("<" + fmt, self.bytes(struct.calcsize("<" + fmt)))[0]

    def string(self, what: str) -> str:
        length = self.unpack("Q")
        try:
            return self.bytes(length).decode("utf-8")
        except UnicodeDecodeError:
            raise GgufFormatError(f"{what} is not UTF-8 text") from None

    def skip_string(self) -> None:
        self.take(self.unpack("Q"))

    def value(self, kind: int, key: str) -> Any:
        if kind == _FLOAT32:
            return float32_decimal(self.unpack("f"))
        if kind in _SCALARS:
            return self.unpack(_SCALARS[kind])
        if kind == _STRING:
            return self.string(f"the value of {key}")
        if kind != _ARRAY:
            raise GgufFormatError(f"metadata key {key} has value type {kind}, which GGUF does not define")
        element, count = self.unpack("I"), self.unpack("Q")
        if element == _ARRAY:
            raise GgufFormatError(f"metadata key {key} is an array of arrays, which specgen does not read")
        if count > MAX_KEPT_ARRAY:
            self._skip_array(element, count, key)
            return SkippedArray(element, count)
        return [self.value(element, key) for _ in range(count)]

    def _skip_array(self, element: int, count: int, key: str) -> None:
        if element == _STRING:
            for _ in range(count):
                self.skip_string()
        elif element in _SCALARS:
            self.take(struct.calcsize("<" + _SCALARS[element]) * count)
        else:
            raise GgufFormatError(f"metadata key {key} is an array of value type {element}, which GGUF does not define")


def float32_decimal(value: float) -> float:
    """A float32 ``value`` as the shortest decimal that reads back as the same float32 (fix165).

    GGUF stores ``rope.scaling.factor`` and the like as float32, written from the config's decimal (1.2); widened to
    a Python float it is 1.2000000476837158, which a rendered ``--rope-scale`` said as is. The shortest of 1 to 9
    significant digits whose float32 is ``value`` is the decimal the converter was given (9 digits always round-trip).
    """
    if not -FLOAT32_MAX <= value <= FLOAT32_MAX:  # NaN and the infinities as read
        return value
    for digits in range(1, 10):
        short = float(f"{value:.{digits}g}")
        # never past the largest float32 (llama-server's std::stof refuses more): that one is kept as read
        if abs(short) <= FLOAT32_MAX and struct.unpack("<f", struct.pack("<f", short))[0] == value:
            return short
    return value


def starts_as_gguf(path: str) -> bool:
    """Whether ``path`` is a regular file that begins with :data:`MAGIC`, whatever its name."""
    if not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as fh:
            return fh.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def read_gguf_header(path: str, block_sizes: dict[int, tuple[int, int]]) -> GgufHeader:
    """The header of the GGUF file ``path``; ``block_sizes``: (elements, bytes) of a block of each ggml type.

    Raises :class:`GgufFormatError` (a damaged or foreign file) or :class:`EndsEarlyError` (cut short), and ``OSError``.
    """
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size == 0:
            raise GgufFormatError("the file is empty")
        return _parse(_Cursor(_Window(fh), size), size, block_sizes)


def _parse(cur: _Cursor, size: int, block_sizes: dict[int, tuple[int, int]]) -> GgufHeader:
    if cur.read(0, min(size, len(MAGIC))) != MAGIC:
        raise GgufFormatError("it does not begin with the GGUF magic bytes")
    cur.take(len(MAGIC))
    version = cur.unpack("I")
    if version not in (2, 3):
        swapped = struct.unpack("<I", struct.pack(">I", version))[0]
        if swapped in (2, 3):
            raise GgufFormatError(f"it is a big-endian GGUF file (version {swapped}), which specgen does not read")
        raise GgufFormatError(f"it is GGUF version {version}, which specgen does not read (it reads versions 2 and 3)")
    tensor_count, kv_count = cur.unpack("Q"), cur.unpack("Q")
    # every key/value takes at least 13 bytes and every tensor 24: counts beyond the file are no counts (no loop over them)
    if kv_count * 13 + tensor_count * 24 > size:
        raise GgufFormatError(
            f"its header counts {kv_count:,} metadata keys and {tensor_count:,} tensors, more than its {size:,} bytes hold"
        )
    fields: dict[str, Any] = {}
    types: dict[str, str] = {}
    for _ in range(kv_count):
        key = cur.string("a metadata key")
        if key in fields:
            raise GgufFormatError(f"metadata key {key} appears twice")
        kind = cur.unpack("I")
        types[key] = _type_name(cur, kind)
        fields[key] = cur.value(kind, key)
    tensors: list[GgufTensor] = []
    seen: set[str] = set()
    for _ in range(tensor_count):
        name = cur.string("a tensor name")
        if name in seen:
            raise GgufFormatError(f"tensor {name} appears twice in the tensor table")
        seen.add(name)
        dims = cur.unpack("I")
        if not 1 <= dims <= MAX_DIMS:
            raise GgufFormatError(f"tensor {name} has {dims} dimensions; ggml tensors have 1 to {MAX_DIMS}")
        shape = tuple(cur.unpack("Q") for _ in range(dims))
        kind, offset = cur.unpack("I"), cur.unpack("Q")
        tensors.append(GgufTensor(name, shape, kind, offset, _tensor_bytes(name, shape, kind, block_sizes)))
    alignment = fields.get("general.alignment", DEFAULT_ALIGNMENT)
    if "general.alignment" in types and types["general.alignment"] not in INTEGER_TYPES:  # fix172 item 3
        raise GgufFormatError(
            f"metadata key general.alignment is a {types['general.alignment']} ({alignment!r}), where gguf.md has a uint32"
        )
    if isinstance(alignment, bool) or not isinstance(alignment, int) or alignment <= 0 or alignment & (alignment - 1):
        raise GgufFormatError(f"general.alignment {alignment!r} is not a power of two")
    start = -(-cur.at // alignment) * alignment
    needed = max((start + t.offset + t.n_bytes for t in tensors), default=cur.at)
    if needed > size:
        raise EndsEarlyError(needed)
    return GgufHeader(fields, tensors, types)


def _type_name(cur: _Cursor, kind: int) -> str:
    """The name of value type ``kind`` (an array's with its element type, read ahead without moving ``cur``)."""
    if kind != _ARRAY or cur.at + 4 > cur.size:
        return TYPE_NAMES.get(kind, f"type {kind}")
    element = struct.unpack("<I", bytes(cur.read(cur.at, 4)))[0]
    return f"array of {TYPE_NAMES.get(element, f'type {element}')}"


def _tensor_bytes(name: str, shape: tuple[int, ...], kind: int, block_sizes: dict[int, tuple[int, int]]) -> int:
    """Bytes of a tensor of ``shape`` in ggml type ``kind``: its rows are whole blocks of the type."""
    if kind not in block_sizes:
        raise GgufFormatError(f"tensor {name} has ggml type {kind}, which the gguf package does not know")
    block, block_bytes = block_sizes[kind]
    elements = 1
    for dim in shape:
        elements *= dim
    if elements >= 2**63:
        raise GgufFormatError(f"tensor {name} has {elements:,} elements, more than any file holds")
    if shape[0] % block:
        raise GgufFormatError(f"tensor {name}'s rows of {shape[0]:,} are not whole blocks of {block} of its ggml type")
    return elements // block * block_bytes
