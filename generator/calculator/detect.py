"""``specgen detect``: this machine as a ``hardware.fixed`` block, every value marked measured or assumed.

Read from what Linux and the NVIDIA driver print: ``nvidia-smi --query-gpu`` (GPU model, memory,
PCIe generation and width of each GPU's link) or, where it lists no GPU, AMD's ``amd-smi static --json`` (or the older
``rocm-smi --json``: product name and VRAM total), ``/proc/cpuinfo`` (CPU model, sockets, cores),
``/proc/meminfo`` (RAM, RAM in use), ``/proc/swaps``, ``/sys/block/nvme*`` (NVMe drives and sizes)
and, where readable (root), ``dmidecode -t memory`` (populated DIMMs, channels, configured speed); the host name
(``hostname``) is the Ansible inventory's name for the machine (fix194: ``hardware.fixed.host_name``).
:class:`Sources` reads them from a root folder and a table of command outputs, so the same code
runs on this machine (``/`` and real commands) and on recorded fixtures.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping

from generator import catalog
from generator.calculator.block_file import DETECT_HEADER
from generator.catalog.records import GpuSpec
from generator.input_files import ascii_count
from generator.named_tuple import NamedTuple
from generator.sizing.performance import PCIE_X16_GB_PER_S
from generator.units import GIB

#: The nvidia-smi query detect runs (all documented ``--query-gpu`` fields, ``nvidia-smi --help-query-gpu``).
NVIDIA_SMI = (
    "nvidia-smi",
    "--query-gpu=index,name,memory.total,pcie.link.gen.max,pcie.link.width.max",
    "--format=csv,noheader,nounits",
)
DMIDECODE = ("dmidecode", "-t", "memory")
#: AMD's tools, asked where nvidia-smi lists no GPU (newuser77 item 12): ``amd-smi static --asic --vram --json`` gives
#: each GPU's ``asic.market_name`` and ``vram.size`` (``{"value": 196592, "unit": "MB"}``; amdsmi_vram_info_t: "vram
#: size in MB", MB of 2^20 bytes: 196,592 MB is 206,141,652,992 B, the MI300X's 196,592 MiB rocminfo pool,
#: https://rocm.docs.amd.com/projects/amdsmi/en/latest/doxygen/docBin/html/structamdsmi__vram__info__t.html), a list
#: of GPUs (amd-smi 24.x) or one under ``gpu_data`` (amd-smi 25.x and later); ``rocm-smi`` (deprecated by amd-smi,
#: still shipped) gives ``{"card0": {"Card Series": ..., "VRAM Total Memory (B)": "206158430208"}}``.
AMD_SMI = ("amd-smi", "static", "--asic", "--vram", "--json")
ROCM_SMI = ("rocm-smi", "--showproductname", "--showmeminfo", "vram", "--json")
_GPU_NOISE = {"nvidia", "geforce", "tesla", "generation"}
#: Words that tell variants of one GPU apart: a catalog name with one the reading lacks is a different part
#: (PCIe and NVL cards beside SXM ones; the RTX PRO 6000 Max-Q beside the Workstation Edition of the same memory).
_FORM_WORDS = {"pcie", "nvl", "max", "q"}
#: Architecture words of GPU names: a bare model number ('6000') names a different card in each generation (Quadro RTX
#: 6000 is Turing, RTX 6000 Ada Generation, RTX PRO 6000 Blackwell), so it matches only beside the catalog's word.
_GENERATION_WORDS = {"volta", "turing", "ampere", "ada", "hopper", "blackwell"}
#: Words that make another card of one model number: an RTX 4070 SUPER or 4070 Ti is no RTX 4070 (56 or 60 SMs against
#: 46, the same 12 GB), an RTX 4080 no RTX 4080 SUPER; a reading and a catalog name must have the same of them.
_VARIANT_WORDS = {"ti", "super", "d"}
#: MiB in a GB (10^9 bytes).
GB_MIB = 1000**3 / 2**20
#: GDDR memory with ECC on holds the check bits in the memory itself: "the available DRAM is reduced by 6.25%"
#: (CUDA C++ Best Practices Guide, https://docs.nvidia.com/cuda/cuda-c-best-practices-guide/index.html), so
#: nvidia-smi reads one GPU 1/16 apart depending on the setting (a T4 15,360 MiB with it on, an L40S 46,068 of its 48 GiB).
GDDR_ECC_SHARE = 1 / 16
#: What drivers set aside differs by release: a T4 read 15,079 MiB under driver 418
#: (https://forums.developer.nvidia.com/t/nvidia-t4-has-only-15g-of-memory/173099), the catalog has 15,360.
GPU_MEMORY_SLACK = 0.02


class Fact(NamedTuple):
    """One value of the machine and how it is known: ``measured: <where>`` or ``assumed: <why>``."""

    value: object
    how: str


def _not_recorded(argv: tuple[str, ...]) -> str:
    return f"{argv[0]} output not recorded"


def _not_failed(argv: tuple[str, ...]) -> str | None:
    return None


class Sources(NamedTuple):
    """Where detect reads: a filesystem root (``/`` or a fixture), a command runner and why a command gave nothing.

    ``failed``: how a command that ran failed (its exit status and first line, or the wait given up), None where it
    did not run or did not fail (newuser75 item 6: a failing nvidia-smi was told "missing or no GPU").
    """

    root: str
    run: Callable[[tuple[str, ...]], str | None]
    why_nothing: Callable[[tuple[str, ...]], str] = _not_recorded
    failed: Callable[[tuple[str, ...]], str | None] = _not_failed
    #: The machine's host name as the system gives it (``socket.gethostname()``), None where not read (a fixture).
    host_name: str | None = None

    def read(self, path: str) -> str | None:
        """A file under the root, or ``None`` when it is missing or unreadable."""
        try:
            with open(os.path.join(self.root, path.lstrip("/")), encoding="utf-8", errors="replace") as fh:
                return fh.read()
        except OSError:
            return None

    def listdir(self, path: str) -> list[str]:
        """Entries of a folder under the root (empty when missing)."""
        try:
            return sorted(os.listdir(os.path.join(self.root, path.lstrip("/"))))
        except OSError:
            return []


#: Seconds detect waits for a command of this machine (nvidia-smi, dmidecode) before giving it up.
COMMAND_TIMEOUT_S = 20


#: The most a command of this machine may print (stdout, and stderr apart) before detect stops reading it: a real
#: ``amd-smi static --json`` of 8 GPUs is tens of KB (hostile79 item 8: 300 MB of output took 3.2 GB of memory).
MAX_COMMAND_OUTPUT_BYTES = 16 << 20


class _TooMuchOutputError(Exception):
    """A command printed more than :data:`MAX_COMMAND_OUTPUT_BYTES` on one of its streams."""


def run_command(argv: tuple[str, ...], failures: dict[tuple[str, ...], str] | None = None) -> str | None:
    """Run a command of this machine; ``None`` when it is missing or fails, and how it failed put in ``failures``."""
    if shutil.which(argv[0]) is None:
        return None
    try:
        code, out, err = _bounded_run(argv, COMMAND_TIMEOUT_S, MAX_COMMAND_OUTPUT_BYTES)
    except subprocess.TimeoutExpired:
        if failures is not None:
            failures[argv] = f"{argv[0]} did not answer within {COMMAND_TIMEOUT_S} s"
        return None
    except _TooMuchOutputError:
        if failures is not None:
            failures[argv] = f"{argv[0]} printed more than {MAX_COMMAND_OUTPUT_BYTES >> 20} MiB, which detect does not read"
        return None
    except (OSError, subprocess.SubprocessError) as exc:
        if failures is not None:
            failures[argv] = f"{argv[0]} could not be run ({getattr(exc, 'strerror', None) or type(exc).__name__})"
        return None
    # a byte that is not UTF-8 (a Latin-1 locale, a garbled driver string) is replaced, not a traceback (fuzz27 M1)
    stdout, stderr = out.decode("utf-8", errors="replace"), err.decode("utf-8", errors="replace")
    if code != 0 and failures is not None:
        failures[argv] = f"{argv[0]} exited {code}" + _first_line(stderr, stdout)
    return stdout if code == 0 else None


def _bounded_run(argv: tuple[str, ...], timeout_s: float, limit: int) -> tuple[int, bytes, bytes]:
    """``argv``'s exit status, stdout and stderr; TimeoutExpired past ``timeout_s``, _TooMuchOutputError past ``limit``.

    ``subprocess.run(capture_output=True)`` keeps all a command prints: one printing without end fills memory within
    the timeout. Here both pipes are read as they fill, and the command is killed once either holds more than ``limit``.
    """
    import selectors
    import time

    deadline = time.monotonic() + timeout_s
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.stdout is None or proc.stderr is None:  # never: both are pipes
        raise subprocess.SubprocessError("no pipe")
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    read = {out_fd: bytearray(), err_fd: bytearray()}
    try:
        with selectors.DefaultSelector() as selector:
            for fd in read:
                selector.register(fd, selectors.EVENT_READ)
            while selector.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise subprocess.TimeoutExpired(argv, timeout_s)
                for key, _ in selector.select(left):
                    chunk = os.read(key.fd, 1 << 16)
                    if not chunk:
                        selector.unregister(key.fd)
                        continue
                    read[key.fd] += chunk
                    if len(read[key.fd]) > limit:
                        raise _TooMuchOutputError(argv[0])
        code = proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    return code, bytes(read[out_fd]), bytes(read[err_fd])


def _first_line(*texts: str) -> str:
    """``: "<line>"``, the first line with text of the first of ``texts`` that has one (printable, cut at 160)."""
    for text in texts:
        line = next((line.strip() for line in text.splitlines() if line.strip()), "")
        if line:
            shown = "".join(ch for ch in line if ch.isprintable())
            return f': "{shown[:160]}..."' if len(shown) > 160 else f': "{shown}"'
    return ""


def command_failure(argv: tuple[str, ...]) -> str:
    """Why a command of this machine printed nothing: not installed, not root, or it failed."""
    if shutil.which(argv[0]) is None:
        return f"{argv[0]} not installed"
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        return f"{argv[0]} needs root: run with sudo"
    return f"{argv[0]} ran as root but failed (no SMBIOS memory table?)"


def recorded(outputs: Mapping[str, str]) -> Callable[[tuple[str, ...]], str | None]:
    """A runner answering from recorded outputs, keyed by the command's name."""
    return lambda argv: outputs.get(argv[0])


def this_machine() -> Sources:
    """The machine detect runs on (how each of its commands that ran failed kept for :attr:`Sources.failed`)."""
    import socket

    failures: dict[tuple[str, ...], str] = {}
    return Sources("/", lambda argv: run_command(argv, failures), command_failure, failures.get, socket.gethostname())


class GpuReading(NamedTuple):
    """One GPU as a vendor's tool lists it: a line of the nvidia-smi query, or one GPU of amd-smi / rocm-smi."""

    name: str
    memory_mib: int
    pcie_gen: int | None
    pcie_width: int | None
    #: The tool that listed it (``nvidia-smi``, ``amd-smi``, ``rocm-smi``): said in the block's comments.
    tool: str = "nvidia-smi"


def parse_nvidia_smi(text: str) -> list[GpuReading]:
    """Rows of ``index, name, memory.total [MiB], pcie.link.gen.max, pcie.link.width.max``; an index once."""
    gpus = []
    indexes: set[str] = set()
    for line in text.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < 5 or (memory := ascii_count(cells[2])) is None or cells[0] in indexes:
            continue
        indexes.add(cells[0])
        name = "".join(ch for ch in cells[1] if ch.isprintable())[:100]  # quoted in the block's comments
        gpus.append(GpuReading(name, memory, ascii_count(cells[3]), ascii_count(cells[4])))
    return gpus


#: The columns specgen asks nvidia-smi for, as a reader of an unread line is told them.
SMI_COLUMNS = "'index, name, memory.total [MiB], pcie.link.gen.max, pcie.link.width.max' (whole numbers, no units)"


def repeated_nvidia_smi_indexes(text: str) -> list[str]:
    """The GPU indexes of rows :func:`parse_nvidia_smi` read that a later row gives again (each counted once).

    newuser75 item 6: the same ``index 0`` row twice (a wrapper, a log of two runs) was counted as ``gpu_count: 2``.
    """
    seen: set[str] = set()
    repeated: list[str] = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < 5 or ascii_count(cells[2]) is None:
            continue
        if cells[0] in seen and cells[0] not in repeated:
            repeated.append(cells[0])
        seen.add(cells[0])
    return repeated


def unread_nvidia_smi_lines(text: str) -> list[str]:
    """The lines of nvidia-smi's output that :func:`parse_nvidia_smi` does not read as a GPU row (a header is none).

    review70 item 5: a row of ``81559 MiB`` or ``81559.5`` (another nvidia-smi, a wrapper) was skipped unsaid, and the
    machine said to have no GPU ("nvidia-smi missing or no GPU").
    """
    unread = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if not line.strip() or cells[0].lower() == "index":
            continue
        if len(cells) < 5 or ascii_count(cells[2]) is None:
            unread.append("".join(ch for ch in line if ch.isprintable())[:200])
    return unread


def _amd_mib(size: object) -> int | None:
    """amd-smi's ``vram.size`` in MiB: ``{"value": 196592, "unit": "MB"}``, ``"196592 MB"`` or a bare count of MB."""
    if isinstance(size, dict):
        value, unit = size.get("value"), str(size.get("unit", "MB"))
    elif isinstance(size, str):
        value, _, unit = size.strip().partition(" ")
    else:
        value, unit = size, "MB"
    count = value if isinstance(value, int) and not isinstance(value, bool) else ascii_count(str(value), 15)
    scale = {"B": 1 / 2**20, "KB": 1 / 1024, "MB": 1, "GB": 1024}.get(unit.strip().upper() or "MB")
    if count is None or scale is None or not 0 < count < 10**15:  # no GPU's memory; a huge int overflows a float
        return None
    return round(count * scale)


def _printable(text: object, limit: int = 100) -> str:
    return "".join(ch for ch in str(text) if ch.isprintable())[:limit]


def _json(text: str) -> object:
    import json

    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past Python's limit (a hostile or broken tool)
        return None


def parse_amd_smi(text: str) -> list[GpuReading] | None:
    """The GPUs of ``amd-smi static --asic --vram --json``; ``None`` where it is not that JSON (said as unread)."""
    data = _json(text)
    if isinstance(data, dict) and isinstance(data.get("gpu_data"), list):
        data = data["gpu_data"]
    if not isinstance(data, list):
        return None
    gpus = []
    seen: set[str] = set()
    for entry in data:
        if not isinstance(entry, dict) or not isinstance(entry.get("asic"), dict) or not isinstance(entry.get("vram"), dict):
            continue
        index = str(entry.get("gpu", len(seen)))
        mib = _amd_mib(entry["vram"].get("size", entry["vram"].get("vram_size")))
        name = _printable(entry["asic"].get("market_name", ""))
        if mib is None or not name.strip() or index in seen:
            continue
        seen.add(index)
        gpus.append(GpuReading(name, mib, None, None, "amd-smi"))
    return gpus


def parse_rocm_smi(text: str) -> list[GpuReading] | None:
    """The GPUs of ``rocm-smi --showproductname --showmeminfo vram --json`` (``card<N>`` keys; ``None`` where not JSON)."""
    data = _json(text)
    if not isinstance(data, dict):
        return None
    gpus = []
    for card, fields in sorted(data.items(), key=lambda item: (len(item[0]), item[0])):
        if not re.fullmatch(r"card\d+", card) or not isinstance(fields, dict):
            continue
        lower = {str(k).lower(): v for k, v in fields.items()}
        total = ascii_count(str(lower.get("vram total memory (b)", "")).strip(), 15)
        name = _printable(lower.get("card series") or lower.get("device name") or "")
        if total is None or total <= 0 or not name.strip():
            continue
        gpus.append(GpuReading(name, round(total / 2**20), None, None, "rocm-smi"))
    return gpus


def _amd_tokens(name: str) -> set[str]:
    """The model words of an AMD name ('mi300x' of 'AMD Instinct MI300X' or 'Aqua Vanjaram [Instinct MI300X]')."""
    return {t for t in re.findall(r"[a-z0-9]+", name.lower()) if re.search(r"\d", t) and not re.fullmatch(r"\d+gb", t)}


def match_amd_gpu(reading: GpuReading) -> tuple[str | None, str]:
    """The catalog AMD GPU of an amd-smi / rocm-smi name and VRAM total: its model word, then its memory.

    As for nvidia-smi (:func:`match_gpu`), a part whose memory is not the reading's is refused and said (an MI250X's
    one GCD of 64 GB is the catalog's, a whole 128 GB package read as one is not).
    """
    said = f"{reading.tool} '{reading.name}', {reading.memory_mib} MiB"
    seen = _amd_tokens(reading.name)
    best: tuple[float, str] | None = None
    refused: list[str] = []
    for gpu in catalog.gpus().values():
        if gpu.vendor.lower() != "amd" or not (_amd_tokens(gpu.name) & seen):
            continue
        if not memory_fits(gpu, reading.memory_mib):
            refused.append(
                f"{gpu.id} has " + (f"{gpu.memory_usable_mib} MiB" if gpu.memory_usable_mib else f"{gpu.memory_gb:g} GB")
            )
            continue
        mib = gpu.memory_usable_mib or gpu.memory_gb * GB_MIB
        key = (-abs(mib - reading.memory_mib), gpu.id)
        if best is None or key[0] > best[0]:
            best = key
    if best is None:
        other = f" (its name matches, its memory does not: {'; '.join(refused)})" if refused else ""
        return None, f"assumed: {said} is not in the GPU catalog{other}; give gpu: (see 'specgen catalog gpus')"
    return best[1], f"measured: {said}"


def read_amd_gpus(src: Sources) -> tuple[list[GpuReading], dict[str, Fact]]:
    """AMD's GPUs by amd-smi, else rocm-smi; with ``gpu_failed`` / ``gpu_unread`` facts where neither lists one.

    A tool that fails or hangs is said as nvidia-smi's is (newuser75 item 6), unless the other lists the GPUs.
    """
    facts: dict[str, Fact] = {}
    for argv, parse in ((AMD_SMI, parse_amd_smi), (ROCM_SMI, parse_rocm_smi)):
        text = src.run(argv)
        if text is None:
            if (failed := src.failed(argv)) is not None and "gpu_failed" not in facts:
                facts["gpu_failed"] = Fact(None, failed)
            continue
        gpus = parse(text)
        if gpus:
            return gpus, {}
        if gpus is None and "gpu_unread" not in facts:
            shown = _printable(next((line.strip() for line in text.splitlines() if line.strip()), ""), 200)
            facts["gpu_unread"] = Fact(1, f"{argv[0]} printed what specgen could not read as its JSON: '{shown}'")
    return [], facts


def _tokens(name: str) -> set[str]:
    name = re.sub(r"\(.*?\)", " ", name.lower()).replace("-", " ")
    return {t for t in name.split() if t not in _GPU_NOISE and not re.fullmatch(r"\d+gb|hbm\w*", t)}


def _form(words: set[str]) -> str | None:
    """The form factor a name states: ``sxm`` (SXM2/4/5), ``pcie`` or ``nvl``; ``None`` where it states none."""
    forms = {"sxm" if w.startswith("sxm") else w for w in words if w.startswith("sxm") or w in {"pcie", "nvl"}}
    return forms.pop() if len(forms) == 1 else None


def memory_fits(gpu: GpuSpec, memory_mib: int) -> bool:
    """Whether nvidia-smi's ``memory.total`` can be this catalog GPU's memory.

    Against ``memory_usable_mib`` where the catalog has it, else anywhere from ``memory_gb`` in GB to the same
    figure in GiB (datasheets write either); within 2% for driver reservations, or 1/16 off for GDDR ECC, which sets
    aside one part in 16 of the memory when it is on (a T4 with ECC on reads 15,360 MiB of its 16 GiB).
    """
    low, high = (float(gpu.memory_usable_mib),) * 2 if gpu.memory_usable_mib else (gpu.memory_gb * GB_MIB, gpu.memory_gb * 1024.0)
    return (
        low * (1 - GDDR_ECC_SHARE) * (1 - GPU_MEMORY_SLACK) <= memory_mib <= high / (1 - GDDR_ECC_SHARE) * (1 + GPU_MEMORY_SLACK)
    )


def match_gpu(reading: GpuReading) -> tuple[str | None, str]:
    """The catalog GPU of an nvidia-smi name and memory: most model words in common, then nearest memory.

    A catalog form-factor word (PCIe, NVL, Max-Q) the name lacks counts against it: nvidia-smi names the
    SXM parts without one ('NVIDIA H100 80GB HBM3'). Only a model word counts as a match ('sxm4' is none: an
    A800-SXM4 is no A100-SXM4). Refused outright: a part whose memory is not the reading's
    (:func:`memory_fits`), one of another form factor than the name states (SXM2 against PCIe), and one matched
    by a bare model number ('6000') whose catalog name has a generation word the reading lacks ('Quadro RTX 6000'
    is Turing, not the RTX 6000 Ada).
    """
    seen = _tokens(reading.name)
    best: tuple[float, float, str] | None = None
    refused: list[str] = []
    for gpu in catalog.gpus().values():
        if gpu.vendor.lower() != "nvidia":
            continue
        words = _tokens(gpu.name)
        numbers = {w for w in words & seen if any(ch.isdigit() for ch in w) and not _form({w})}
        if not numbers:
            continue
        generation_missing = all(w.isdigit() for w in numbers) and (words & _GENERATION_WORDS) - seen
        if generation_missing or (_form(seen) and _form(words) and _form(seen) != _form(words)):
            continue
        if (words ^ seen) & _VARIANT_WORDS:  # another card of the model number (a 4070 SUPER read, a 4070 listed)
            continue
        if not memory_fits(gpu, reading.memory_mib):
            refused.append(
                f"{gpu.id} has " + (f"{gpu.memory_usable_mib} MiB" if gpu.memory_usable_mib else f"{gpu.memory_gb:g} GB")
            )
            continue
        score = len(words & seen) - 0.5 * len((words & _FORM_WORDS) - seen)
        mib = gpu.memory_usable_mib or gpu.memory_gb * GB_MIB
        key = (score, -abs(mib - reading.memory_mib), gpu.id)
        if best is None or key[:2] > best[:2]:
            best = key
    if best is None:
        other = f" (its name matches, its memory does not: {'; '.join(refused)})" if refused else ""
        return None, (
            f"assumed: nvidia-smi '{reading.name}', {reading.memory_mib} MiB is not in the GPU catalog{other}; "
            "give gpu: (see 'specgen catalog gpus')"
        )
    return best[2], f"measured: nvidia-smi '{reading.name}', {reading.memory_mib} MiB"


class CpuReading(NamedTuple):
    """What /proc/cpuinfo says."""

    model: str
    #: Distinct ``physical id`` values: 0 where none is listed (Arm kernels print none).
    physical_ids: int
    cores: int
    threads: int
    #: An Arm machine's core ('Neoverse-V2', or 'core' where the part is not in ``_ARM_CORES``), from ``CPU implementer``
    #: and ``CPU part``; ``None`` on x86, which names its model.
    arm_core: str | None = None


#: Arm cores by /proc/cpuinfo's ``CPU implementer`` and ``CPU part`` (the kernel's arch/arm64/include/asm/cputype.h,
#: https://github.com/torvalds/linux/blob/master/arch/arm64/include/asm/cputype.h: ARM_CPU_PART_NEOVERSE_N1 0xD0C, ...).
_ARM_CORES = {("0x41", "0xd0c"): "Neoverse-N1", ("0x41", "0xd40"): "Neoverse-V1", ("0x41", "0xd4f"): "Neoverse-V2"}
#: Arm SoCs of the CPU catalog: the SMCCC SOC_ID Linux gives in /sys/devices/soc0/soc_id (JEP106 maker and chip: NVIDIA
#: 0x036b, Grace 0x0241, as NVIDIA's DCGM tells Grace,
#: https://github.com/NVIDIA/DCGM/blob/master/modules/sysmon/DcgmSystemMonitor.cpp) and the core it is built of. The core
#: alone tells no SoC: a Grace's /proc/cpuinfo reads 'CPU implementer 0x41, CPU part 0xd4f', as AWS Graviton4's does.
ARM_SOCS = {"nvidia-grace": ("jep106:036b:0241", "Neoverse-V2")}
SOC_ID = "/sys/devices/soc0/soc_id"


def parse_cpuinfo(text: str) -> CpuReading | None:
    """Model name (or Arm core), physical ids, physical cores and logical CPUs of /proc/cpuinfo."""
    model, sockets, cores, threads = "", set(), set(), 0
    physical, arm = "0", {"CPU implementer": "", "CPU part": ""}
    for line in text.splitlines():
        key, _, value = (part.strip() for part in line.partition(":"))
        if key == "processor":
            threads += 1
        elif key == "model name" and not model:
            model = value
        elif key == "physical id":
            physical = value
            sockets.add(value)
        elif key == "core id":
            cores.add((physical, value))
        elif key in arm and not arm[key]:
            arm[key] = value.lower()[:10]
    if not threads:
        return None
    core = None
    if not model and arm["CPU part"]:
        ids = (arm["CPU implementer"], arm["CPU part"])
        core = _ARM_CORES.get(ids, "core")
        model = f"Arm {core} (CPU implementer {ids[0]}, part {ids[1]})"
    return CpuReading(model or "unknown CPU", len(sockets), len(cores) or threads, threads, core)


def _model_number(cpu_name: str) -> str | None:
    """A catalog CPU's model number: the last word of its name outside parentheses, where it holds a digit."""
    words = re.sub(r"\(.*?\)", "", cpu_name).lower().split()
    return words[-1] if words and any(ch.isdigit() for ch in words[-1]) else None


def match_cpu(model: str) -> str | None:
    """The catalog CPU whose model number ('14900k', '9654', '8480+') is a word of /proc/cpuinfo's model name.

    Only a word with a digit is a model number: 'Intel(R) Xeon(R) Gold 6248 CPU' names no catalog CPU, not Grace
    (whose name ends in 'CPU'). Arm CPUs print no model name; :func:`match_arm_cpu` tells those.
    """
    text = model.lower().replace("(r)", "").replace("(tm)", "")
    for cpu in catalog.cpus().values():
        number = _model_number(cpu.name)
        if number and re.search(rf"(?<![\w+-]){re.escape(number)}(?![\w+-])", text):
            return cpu.id
    return None


def match_arm_cpu(core: str, soc_id: str, gpu_id: str | None) -> tuple[str, str] | None:
    """The catalog Arm CPU and how it is known: by the SoC id, else by its cores beside a GPU the catalog pairs with it alone.

    A GH200 or GB200 GPU comes only on a Grace, so Neoverse-V2 cores beside one are a Grace; without the SoC id or
    such a GPU, Neoverse-V2 cores may be a Graviton4 or an Axion, and ``None`` is returned.
    """
    paired = {p.cpu_id for p in catalog.platforms().values() if gpu_id in p.gpu_ids}
    for cpu_id, (soc, soc_core) in ARM_SOCS.items():
        if soc_id.strip() == soc:
            return cpu_id, f"measured: {SOC_ID} '{soc}' ({core} cores)"
        if core == soc_core and paired == {cpu_id}:
            return cpu_id, f"measured: {core} cores (/proc/cpuinfo) beside {gpu_id}, which the catalog pairs with {cpu_id} alone"
    return None


def numa_nodes(src: Sources) -> int | None:
    """NUMA nodes with CPUs in /sys/devices/system/node; ``None`` where it lists none.

    A node of memory alone (a GH200's HBM) is left out: its ``cpulist`` is empty.
    """
    folder = "/sys/devices/system/node"
    nodes = [n for n in src.listdir(folder) if re.fullmatch(r"node\d+", n)]
    with_cpus = [n for n in nodes if (src.read(f"{folder}/{n}/cpulist") or "unread").strip()]
    return len(with_cpus) or None


def socket_fact(physical_ids: int, numa: int | None) -> Fact:
    """``cpu_sockets``: the fewer of /proc/cpuinfo's physical ids and the NUMA nodes with CPUs, and which it was.

    A hypervisor may show each vCPU as a socket of its own (VMware's one core per socket, QEMU's older machine
    types), while the VM's memory is one node; a socket split into NUMA nodes (sub-NUMA clustering, NPS) is still
    one socket.
    """
    nodes = f"{numa} NUMA node(s) with CPUs (/sys/devices/system/node)"
    ids = f"{physical_ids} physical id(s) (/proc/cpuinfo)"
    if numa and physical_ids and numa < physical_ids:
        return Fact(numa, f"measured: {nodes}, fewer than its {ids}")
    if numa and not physical_ids:
        return Fact(numa, f"measured: {nodes}; /proc/cpuinfo lists no physical id")
    if physical_ids:
        return Fact(physical_ids, f"measured: {ids}; " + (f"{nodes}" if numa else "no NUMA node in /sys/devices/system/node"))
    return Fact(1, "assumed: /proc/cpuinfo lists no physical id, /sys/devices/system/node no NUMA node")


def parse_meminfo(text: str) -> dict[str, int]:
    """/proc/meminfo fields in bytes."""
    out = {}
    for line in text.splitlines():
        match = re.match(r"(\w+):\s+([0-9]{1,15})\s*kB", line)
        if match:
            out[match.group(1)] = int(match.group(2)) * 1024
    return out


def parse_swaps(text: str) -> int:
    """Bytes of swap configured (/proc/swaps sizes are KiB)."""
    total = 0
    for line in text.splitlines()[1:]:
        cells = line.split()
        if len(cells) >= 3 and (kib := ascii_count(cells[2])) is not None:
            total += kib * 1024
    return total


class DimmReading(NamedTuple):
    """Populated DIMMs and their channels and speed, from ``dmidecode -t memory``."""

    dimms: int
    channels: int
    mt_per_s: int | None
    channel_basis: str


#: Channel names in SMBIOS locators: 'P0 CHANNEL A' (AMD Bank Locator), 'Controller0-ChannelA-DIMM0'
#: (Intel client), 'CPU0_DIMM_A1', 'P1-DIMMA1', 'DIMM_P0_A0', 'DIMM_A1' (server and desktop boards).
_CHANNEL_WORD = re.compile(r"CHANNEL[\s_-]*([A-Z0-9]+)")
_CHANNEL_LETTER = re.compile(r"DIMM[\s_-]*(?:P\d+[\s_-]*)?([A-Z])\d")
_SOCKET = re.compile(r"(?<![A-Z0-9])(?:P|CPU|NODE|PROC|SOCKET)[\s_-]*(\d+)(?![0-9])")
_CONTROLLER = re.compile(r"(?<![A-Z0-9])(?:CONTROLLER|MC|IMC)[\s_-]*(\d+)(?![0-9])")
#: Supermicro's Intel boards (X11, X13) name a socket's memory controller "Node" after the socket:
#: 'Bank Locator: P0_Node1_Channel0_Dimm0' is socket 0, controller 1, that controller's channel 0.
_SOCKET_NODE = re.compile(r"(?<![A-Z0-9])P[\s_-]*(\d+)[\s_-]*NODE[\s_-]*(\d+)(?![0-9])")


def channel_of(bank_locator: str, locator: str) -> tuple[str, str, str] | None:
    """(socket, memory controller, channel) a DIMM sits on, from its locators; ``None`` when they name no channel.

    The controller is part of the channel: Intel client boards name two controllers each with a
    'ChannelA' ('Controller0-ChannelA-DIMM0', 'Controller1-ChannelA-DIMM0' are two channels), and Supermicro's
    Intel servers two "Node"s a socket each with a 'Channel0' ('P0_Node0_Channel0_Dimm0', 'P0_Node1_Channel0_Dimm0').
    """
    text = f"{bank_locator} {locator}".upper()
    channel = _CHANNEL_WORD.search(text) or _CHANNEL_LETTER.search(text)
    if channel is None:
        return None
    if node := _SOCKET_NODE.search(text):
        return node.group(1), node.group(2), channel.group(1)
    socket = _SOCKET.search(text)
    controller = _CONTROLLER.search(text)
    return (socket.group(1) if socket else "0", controller.group(1) if controller else "0", channel.group(1))


def parse_dmidecode(text: str) -> DimmReading | None:
    """Populated 'Memory Device' records: count, distinct channels (from locators) and configured speed."""
    dimms, speeds, channels = 0, [], set()
    for block in text.split("\n\n"):
        if "Memory Device" not in block:
            continue
        fields = {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in block.splitlines()) if _}
        size = fields.get("Size", "")
        if not size or size.startswith("No Module") or size.startswith("0"):
            continue
        dimms += 1
        speed = fields.get("Configured Memory Speed") or fields.get("Configured Clock Speed") or fields.get("Speed", "")
        match = re.match(r"(\d+)\s*MT/s", speed)
        if match:
            speeds.append(int(match.group(1)))
        channel = channel_of(fields.get("Bank Locator", ""), fields.get("Locator", ""))
        if channel is not None:
            channels.add(channel)
    if not dimms:
        return None
    if channels:
        return DimmReading(dimms, len(channels), min(speeds) if speeds else None, "DIMM locators name the channels")
    return DimmReading(dimms, dimms, min(speeds) if speeds else None, "one DIMM per channel assumed")


def nvme_drives(src: Sources) -> dict[str, int]:
    """NVMe namespaces and their bytes (/sys/block/nvme*/size counts 512-byte sectors)."""
    drives = {}
    for name in src.listdir("/sys/block"):
        if re.fullmatch(r"nvme\d+n\d+", name):
            sectors = (src.read(f"/sys/block/{name}/size") or "").strip()
            if (count := ascii_count(sectors)) is not None:
                drives[name] = count * 512
    return drives


def _gpu_groups(gpus: list[GpuReading]) -> dict[str, list[GpuReading]]:
    """nvidia-smi's rows by GPU type (name and memory), in the order listed."""
    groups: dict[str, list[GpuReading]] = {}
    for gpu in gpus:
        groups.setdefault(f"{gpu.name}, {gpu.memory_mib} MiB", []).append(gpu)
    return groups


def described_gpus(gpus: list[GpuReading]) -> tuple[str, list[GpuReading]]:
    """The GPU type the block describes (the most numerous; the first listed wins a tie) and its rows."""
    return max(_gpu_groups(gpus).items(), key=lambda item: len(item[1]))


def gpu_facts(gpus: list[GpuReading]) -> dict[str, Fact]:
    """``gpu`` and ``gpu_count`` of nvidia-smi's rows; a machine of mixed GPUs is described by its most numerous type.

    ``hardware.fixed`` holds one GPU type, so the others are left out and named in ``mixed_gpus``
    (printed as a comment), never silently.
    """
    groups = _gpu_groups(gpus)
    facts: dict[str, Fact] = {}
    label, chosen = described_gpus(gpus)
    tool = chosen[0].tool
    gpu_id, how = match_gpu(chosen[0]) if tool == "nvidia-smi" else match_amd_gpu(chosen[0])
    facts["gpu" if gpu_id else "gpu_unknown"] = Fact(gpu_id or chosen[0].name, how)
    facts["gpu_tool"] = Fact(tool, f"measured: {tool} listed the GPUs")
    if len(groups) == 1:
        facts["gpu_count"] = Fact(len(gpus), f"measured: {tool} lists {len(gpus)} GPU(s)")
        return facts
    listing = "; ".join(f"{len(rows)} x {name}" for name, rows in groups.items())
    facts["gpu_count"] = Fact(
        len(chosen), f"measured: {len(chosen)} of {len(gpus)} GPUs are '{label}' (mixed GPUs, see the note above)"
    )
    facts["mixed_gpus"] = Fact(
        listing,
        f"assumed: hardware.fixed holds one GPU type; only the {len(chosen)} x '{label}' are described, "
        f"the other {len(gpus) - len(chosen)} GPU(s) are left out",
    )
    return facts


#: PCIe generations hardware.fixed takes, the lane counts it takes, and the x16 rate of the older generations, GB/s per
#: direction (2.5 and 5 GT/s with 8b/10b coding: 250 and 500 MB/s a lane; PCI-SIG's published rates).
PCIE_GENERATIONS = (3, 6)
PCIE_LANE_COUNTS = (1, 4, 8, 16)
OLD_PCIE_X16_GB_PER_S = {1: 4.0, 2: 8.0}
#: Generations a GPU's link can report (PCIe 1.0 to 6.0, the newest any GPU links at) and the link widths the PCIe
#: specification defines: any other reading is a misread, never written (fuzz31 item 14: Gen99 was written as Gen6).
LINK_GENERATIONS = range(1, 7)
LINK_WIDTHS = (1, 2, 4, 8, 12, 16, 32)


def pcie_facts(gpus: list[GpuReading], mixed: bool) -> dict[str, Fact]:
    """``pcie_gen`` and ``pcie_lanes`` of the slowest and narrowest link of ``gpus`` (the GPUs the block describes).

    A reading no GPU link can have (Gen99, x3) leaves the field out with a comment saying why. A width PCIe has but
    hardware.fixed does not take (x2, x12, x32) is written as the nearest count below it that it takes.
    """
    link = f"link of the {len(gpus)} GPU(s) described" if mixed else "GPU link"
    facts: dict[str, Fact] = {}
    gens = [g.pcie_gen for g in gpus if g.pcie_gen is not None]
    widths = [g.pcie_width for g in gpus if g.pcie_width is not None]
    odd_gens = sorted({g for g in gens if g not in LINK_GENERATIONS})
    odd_widths = sorted({w for w in widths if w not in LINK_WIDTHS})
    if odd_widths:
        facts["omitted_pcie_lanes"] = Fact(
            ", ".join(f"x{w}" for w in odd_widths),
            "measured: nvidia-smi pcie.link.width.max; no PCIe link is that wide "
            f"(x{', x'.join(map(str, LINK_WIDTHS))}): misread",
        )
    elif widths:
        narrowest = min(widths)
        stated = max(n for n in PCIE_LANE_COUNTS if n <= narrowest)
        how = f"measured: nvidia-smi pcie.link.width.max, narrowest {link}"
        if stated != narrowest:
            how += f" (x{narrowest}); written as x{stated}, the nearest below it hardware.fixed takes"
        facts["pcie_lanes"] = Fact(stated, how)
    if odd_gens:
        facts["omitted_pcie_gen"] = Fact(
            ", ".join(f"Gen{g}" for g in odd_gens),
            "measured: nvidia-smi pcie.link.gen.max; no PCIe generation a GPU links at (Gen1 to Gen6): misread",
        )
    elif gens:
        facts["pcie_gen"] = Fact(min(gens), f"measured: nvidia-smi pcie.link.gen.max, slowest {link}")
        if min(gens) < PCIE_GENERATIONS[0] and odd_widths:
            facts["omitted_pcie_gen"] = Fact(
                f"Gen{min(gens)}", "measured: nvidia-smi pcie.link.gen.max; an old link is stated by its width, which is misread"
            )
            del facts["pcie_gen"]
        elif min(gens) < PCIE_GENERATIONS[0]:
            facts.update(_within_pcie_range(min(gens), min(widths, default=16)))
    return facts


def _within_pcie_range(gen: int, lanes: int) -> dict[str, Fact]:
    """A link hardware.fixed cannot state as it is (``gen``, ``lanes`` as nvidia-smi reads them), as one it takes.

    An older generation becomes the Gen3 link with the most lanes that carries no more than it (x1 where even that
    carries more, and the comment says so). Empty where the link is stated as is.
    """
    if gen >= PCIE_GENERATIONS[0] or gen not in OLD_PCIE_X16_GB_PER_S:
        return {}
    rate = OLD_PCIE_X16_GB_PER_S[gen] * lanes / 16
    gen3_lane = PCIE_X16_GB_PER_S[3] / 16
    fitting = [n for n in PCIE_LANE_COUNTS if n * gen3_lane <= rate * 1.01]
    gen3 = max(fitting, default=1)
    ratio = gen3 * gen3_lane / rate
    said = "about its bandwidth" if 0.9 <= ratio <= 1.1 else f"{ratio:.2g}x its bandwidth, the nearest that can be stated"
    why = f"measured: nvidia-smi Gen{gen} x{lanes} ({rate:g} GB/s); written as Gen3 x{gen3}, {said}"
    return {"pcie_gen": Fact(3, why), "pcie_lanes": Fact(gen3, why)}


def _within_schema(facts: dict[str, Fact]) -> dict[str, Fact]:
    """``facts`` without the hardware.fixed values its schema refuses (and a reserve not below the RAM).

    Each one left out becomes an ``omitted_<field>`` fact the block prints as a comment: nothing pasted fails.
    """
    from generator.workload.schema import workload_schema

    fields = workload_schema()["properties"]["hardware"]["properties"]["fixed"]["properties"]
    out = dict(facts)
    for key in FIXED_FIELDS:
        value = out[key].value if key in out else None
        if not isinstance(value, int | float) or isinstance(value, bool):
            continue
        rule = fields.get(key, {})
        low, high = rule.get("minimum", rule.get("exclusiveMinimum")), rule.get("maximum", rule.get("exclusiveMaximum"))
        refused = (low is not None and (value < low or ("exclusiveMinimum" in rule and value == low))) or (
            high is not None and (value > high or ("exclusiveMaximum" in rule and value == high))
        )
        why = f"outside what hardware.fixed takes ({low if low is not None else '-'} to {high if high is not None else '-'})"
        ram = out["ram_gib"].value if "ram_gib" in out else None
        if key == "reserved_ram_gib" and isinstance(ram, int | float) and value >= ram and not refused:
            refused, why = True, f"not below ram_gib {ram:g}, as hardware.fixed needs"
        if refused:
            out[f"omitted_{key}"] = Fact(value, f"{out.pop(key).how}; {why}")
    return out


def _schema_pattern(field: str) -> re.Pattern[str]:
    """The pattern the workload schema gives a ``hardware.fixed`` string field."""
    from generator.workload.schema import workload_schema

    return re.compile(workload_schema()["properties"]["hardware"]["properties"]["fixed"]["properties"][field]["pattern"])


def host_name_facts(name: str | None) -> dict[str, Fact]:
    """``host_name`` of the machine's host name, as the workload schema takes it (a DNS label), or why none is written.

    A name the schema takes is written as it is; a fully qualified or upper-case one (``GPUBox.lan``) as its first
    label lower-cased (``gpubox``); any other becomes ``omitted_host_name`` (a comment: nothing pasted fails).
    """
    if not name or not name.strip():
        return {}
    from generator.workload.fixed_host import host_name_problem

    given = name.strip()
    label = given.split(".")[0].lower()
    pattern = _schema_pattern("host_name").match

    def fits(text: str) -> bool:  # hostile96: a machine named 'all' was written, and the block then failed validate
        return bool(pattern(text)) and host_name_problem(text) is None

    if fits(given):
        return {"host_name": Fact(given, "measured: this machine's host name (hostname)")}
    if fits(label):
        how = f"measured: the first label of this machine's host name '{_printable(given)}', lower-cased"
        return {"host_name": Fact(label, how), "host_name_given": Fact(given, how)}
    why = "not a DNS label hardware.fixed takes (lower-case letters, digits and '-', at most 63; not all or ungrouped)"
    return {"omitted_host_name": Fact(_printable(given), f"measured: this machine's host name; {why}")}


def address_advice(facts: Mapping[str, Fact]) -> str:
    """The comment saying how to set ``hardware.fixed.address`` (Ansible's ``ansible_host``), which detect cannot know.

    A machine has several addresses (each interface, IPv4 and IPv6, the LAN's and a VPN's); the one Ansible reaches it
    at is the user's to give.
    """
    if "host_name" not in facts:
        return (
            "# host_name / address: add host_name: (a DNS label) to name this machine in the Ansible inventory, and "
            "address: (its IP address or DNS name, ansible_host) where Ansible cannot reach it by that name"
        )
    from generator.workload.fixed_host import address_problem

    given = facts["host_name_given"].value if "host_name_given" in facts else None
    # offered where the workload takes it: its schema's pattern, then its own check (review100: 'gpubox.300' passed one)
    takes = isinstance(given, str) and bool(_schema_pattern("address").match(given)) and address_problem(given) is None
    full = f" ('{given}' where it resolves)" if takes else ""
    return (
        f"# address: Ansible connects to {facts['host_name'].value} by that name; where it does not resolve from the "
        f"machine that runs Ansible, add address: beside host_name: this machine's IP address (hostname -I lists "
        f"them) or DNS name{full}"
    )


def _small_ram_reserve(facts: Mapping[str, Fact], used: int) -> dict[str, Fact]:
    """A reserve below ``ram_gib`` where neither the GiB-above reading nor the default one is (fix199 item 1).

    A few-GiB machine nearly all in use had its reserve left out, and ``validate`` then refused its ``ram_gib`` against
    the default 8 GiB. The reading to 0.1 GiB above is written where it is below the RAM; else (or with no reading)
    all but 0.1 GiB is reserved, said as such: the block validates and plans with no RAM the machine lacks now.
    """
    from generator.calculator.machine import FixedSpec

    default = float(FixedSpec._field_defaults["reserved_ram_gib"])  # validate's reserve where none is given
    ram = facts["ram_gib"].value
    reserve = facts["reserved_ram_gib"].value if "reserved_ram_gib" in facts else default
    if not isinstance(ram, int | float) or not isinstance(reserve, int | float) or reserve < ram:
        return {}
    fine = math.ceil(used * 10 / GIB) / 10
    if used >= 0 and fine < ram:
        how = "measured: RAM in use now (MemTotal - MemAvailable), to the 0.1 GiB above (the GiB above is not below ram_gib)"
        return {"reserved_ram_gib": Fact(fine, how)}
    if "reserved_ram_gib" in facts and default < ram:
        return {}  # the reserve is left out with a comment, and the default one is below the RAM
    said = "nearly all of it in use now" if used >= 0 else f"no reading of RAM in use, the default {reserve:g} GiB"
    how = f"assumed: all of ram_gib but 0.1 GiB ({said}); lower it to what the OS and services need"
    return {"reserved_ram_gib": Fact(round(ram - 0.1, 1), how)}


def detect_machine(src: Sources) -> dict[str, Fact]:
    """Every ``hardware.fixed`` field this machine answers, plus CPU facts (``cpu_model``, ``cores``)."""
    facts: dict[str, Fact] = host_name_facts(src.host_name)
    smi = src.run(NVIDIA_SMI)
    if smi is None and (failed := src.failed(NVIDIA_SMI)) is not None:  # not "missing or no GPU" (newuser75 item 6)
        facts["gpu_failed"] = Fact(None, failed)
    gpus = parse_nvidia_smi(smi) if smi else []
    if smi and (repeated := repeated_nvidia_smi_indexes(smi)):
        shown = ", ".join("".join(ch for ch in index if ch.isprintable())[:20] for index in repeated[:5])
        facts["gpu_repeated"] = Fact(len(repeated), f"nvidia-smi lists GPU index {shown} more than once: each counted once")
    if smi and (unread := unread_nvidia_smi_lines(smi)):
        facts["gpu_unread"] = Fact(
            len(unread),
            f"nvidia-smi printed {len(unread)} line(s) specgen could not read as {SMI_COLUMNS}: '{unread[0]}'",
        )
    if not gpus and "gpu_unread" not in facts:  # an AMD machine (newuser77 item 12)
        gpus, amd_facts = read_amd_gpus(src)
        if gpus:
            facts.pop("gpu_failed", None)
        else:
            facts.update({k: v for k, v in amd_facts.items() if k not in facts})
    if gpus:
        facts.update(gpu_facts(gpus))
        # the links of the GPUs described, not of those a mixed machine's block leaves out (fuzz31 item 7)
        facts.update(pcie_facts(described_gpus(gpus)[1], "mixed_gpus" in facts))
    cpuinfo = src.read("/proc/cpuinfo")
    cpu = parse_cpuinfo(cpuinfo) if cpuinfo else None
    if cpu is not None:
        named = "CPU implementer and part" if cpu.arm_core else "model name"
        facts["cpu_model"] = Fact(cpu.model, f"measured: /proc/cpuinfo {named}")
        facts["cpu_sockets"] = socket_fact(cpu.physical_ids, numa_nodes(src))
        facts["cores"] = Fact(cpu.cores, f"measured: /proc/cpuinfo core ids ({cpu.threads} threads)")
        if cpu.arm_core:
            gpu_id = str(facts["gpu"].value) if "gpu" in facts else None
            if (arm := match_arm_cpu(cpu.arm_core, src.read(SOC_ID) or "", gpu_id)) is not None:
                facts["cpu"] = Fact(*arm)
        elif cpu_id := match_cpu(cpu.model):
            facts["cpu"] = Fact(cpu_id, f"measured: /proc/cpuinfo '{cpu.model}'")
        sockets = facts["cpu_sockets"].value
        if "cpu" not in facts and cpu.cores and isinstance(sockets, int):
            # newuser107: a CPU the catalog lacks gives its cores, as estimate --detect's --cpu-cores (one socket's)
            facts["cpu_cores"] = Fact(max(1, cpu.cores // max(1, sockets)), "measured: /proc/cpuinfo core ids, one socket's")
    mem = parse_meminfo(src.read("/proc/meminfo") or "")
    if mem.get("MemTotal", 0) >= GIB / 10:  # less is no machine's RAM (hardware.fixed.ram_gib is above 0)
        facts["ram_gib"] = Fact(round(mem["MemTotal"] / GIB, 1), "measured: /proc/meminfo MemTotal")
        used = mem["MemTotal"] - mem.get("MemAvailable", mem["MemTotal"] + 1)
        if used >= 0:  # a container's view can report more available than in total: no reading of what is in use
            # to the whole GiB above: a figure of the moment, which churned a committed block at each run (1.3, then
            # 1.4: review70 item 19); a model server running now is counted in it
            facts["reserved_ram_gib"] = Fact(
                math.ceil(used / GIB),
                "measured: RAM in use now (MemTotal - MemAvailable), to the GiB above; add services not running now, "
                "and stop a model server first (its RAM is counted here)",
            )
        facts.update(_small_ram_reserve(facts, used))
    swaps = src.read("/proc/swaps")
    if swaps is not None:
        facts["swap_gib"] = Fact(round(parse_swaps(swaps) / GIB, 1), "measured: /proc/swaps")
    drives = nvme_drives(src)
    if drives:
        listing = ", ".join(f"{n} {b / 1e9:,.0f} GB" for n, b in drives.items())
        facts["nvme_gib"] = Fact(
            round(sum(drives.values()) / GIB, 1), f"assumed: whole capacity of {listing}; lower it to the free space"
        )
    dimm_text = src.run(DMIDECODE)
    dimms = parse_dmidecode(dimm_text) if dimm_text else None
    if dimm_text is None:
        facts["dimms_unread"] = Fact(src.why_nothing(DMIDECODE), "assumed: DIMMs not read")
    if dimms is not None:
        facts["memory_channels"] = Fact(
            dimms.channels,
            f"measured: dmidecode, {dimms.dimms} DIMMs; {dimms.channel_basis}",  # fuzz18 item 5: was capped at 24
        )
        if dimms.mt_per_s:
            facts["ddr_mt_per_s"] = Fact(dimms.mt_per_s, "measured: dmidecode Configured Memory Speed (slowest DIMM)")
    return _within_schema(facts)


#: The order fields are written in: the machine's name (fix194), then what it holds.
FIXED_FIELDS = (
    "host_name", "gpu", "gpu_count", "ram_gib", "reserved_ram_gib", "swap_gib", "nvme_gib", "pcie_gen", "pcie_lanes", "cpu",
    "memory_channels", "ddr_mt_per_s", "cpu_sockets", "cpu_cores",
)  # fmt: skip


def _owned_comment(facts: Mapping[str, Fact]) -> str:
    """The comment naming this machine as an owned server, in YAML a workload takes as it is.

    fix162 item 4: "describe the server under hardware.inventory (...) with buy: false" read as ``buy`` inside the
    inventory entry, which the schema refuses: ``buy`` is a field of ``hardware``, beside ``inventory``. A custom
    server's ``ram_gib`` is a whole number: MemTotal's GiB rounded down.
    """
    custom = f"gpu: {facts['gpu'].value}, gpus_per_server: {facts['gpu_count'].value if 'gpu_count' in facts else 1}"
    ram = facts["ram_gib"].value if "ram_gib" in facts else None
    if isinstance(ram, int | float):
        custom += f", ram_gib: {max(1, int(ram))}"
    return (
        "# hardware.fixed is planned for llama.cpp (offload to RAM and NVMe); where these GPUs hold your models, "
        "describe the server as owned instead, planned for vLLM / SGLang replicas (buy is a field of hardware, beside "
        f"inventory): hardware: {{buy: false, inventory: [{{count: 1, custom: {{{custom}}}}}]}}"
        + ("" if isinstance(ram, int | float) else ", adding ram_gib (the server's RAM in GiB, a whole number) to custom")
    )


def fixed_block(facts: Mapping[str, Fact]) -> str:
    """The ``hardware.fixed`` YAML of ``facts``, each value with a comment saying how it is known."""
    import io

    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap

    fixed = CommentedMap()
    for key in FIXED_FIELDS:
        if key in facts:
            fixed[key] = facts[key].value
            fixed.yaml_add_eol_comment(facts[key].how, key, column=30)
    doc = CommentedMap(hardware=CommentedMap(fixed=fixed))
    lines = [DETECT_HEADER]
    if "gpu" in facts:  # newuser77 item 11: an owned datacenter server was sent here alone, and planned for llama.cpp
        lines.append(_owned_comment(facts))
    if "gpu_unknown" in facts:
        lines.append(f"# gpu not written: {facts['gpu_unknown'].how}")
    elif "gpu" not in facts and "gpu_unread" in facts:
        lines.append(f"# gpu not written: {facts['gpu_unread'].how}; add gpu: and gpu_count: before using it")
    elif "gpu" not in facts and "gpu_failed" in facts:
        lines.append(f"# gpu not written: {facts['gpu_failed'].how}; add gpu: and gpu_count: before using it")
    elif "gpu" not in facts:
        lines.append(
            "# no GPU detected (nvidia-smi, amd-smi and rocm-smi missing or list no GPU): add gpu: and gpu_count: before using it"
        )
    if "gpu" in facts and "gpu_unread" in facts:  # some rows read, others not: those left out are said
        lines.append(f"# GPUs left out: {facts['gpu_unread'].how}")
    if "gpu_repeated" in facts:
        lines.append(f"# {facts['gpu_repeated'].how}")
    lines.append(address_advice(facts))  # fix194: detect names the host; the address Ansible reaches it at is the user's
    for key in ("cpu_model", "cores"):
        if key in facts:
            lines.append(f"# {key}: {facts[key].value} ({facts[key].how})")
    for key in FIXED_FIELDS:
        if f"omitted_{key}" in facts:
            left = facts[f"omitted_{key}"]
            lines.append(f"# {key} not written: {left.value} ({left.how}); give it yourself")
    if "mixed_gpus" in facts:
        tool = facts["gpu_tool"].value if "gpu_tool" in facts else "nvidia-smi"
        lines.append(f"# mixed GPUs: {tool} lists {facts['mixed_gpus'].value} ({facts['mixed_gpus'].how})")
    if "cpu" not in facts and "memory_channels" not in facts:
        why = facts["dimms_unread"].value if "dimms_unread" in facts else "no populated DIMM records"
        lines.append(
            f"# CPU not in the catalog and DIMMs unreadable ({why}): add cpu: or memory_channels: "
            "and ddr_mt_per_s:, else offload speed assumes a default machine"
        )
    out = io.StringIO()
    yaml = YAML()
    yaml.default_flow_style = False
    yaml.dump(doc, out)
    return "\n".join(lines) + "\n" + out.getvalue()
