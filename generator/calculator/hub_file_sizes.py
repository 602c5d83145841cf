"""The sizes of a Hub checkpoint's safetensors files, against which their headers are checked (hostile95).

huggingface_hub's ``get_safetensors_metadata`` reads each file's header alone (HTTP range requests), so a header whose
tensors end past the file, or short of it, was sized as it said. One ranged read of each file's first 8 bytes gives
the file's size (the answer's ``Content-Range`` total) and its header's length, hence the data section's length the
tensors must tile (:func:`generator.calculator.safetensors_header.check_end_to_end`). Split from
:mod:`generator.calculator.hub` (review100).
"""

from __future__ import annotations

import threading

from generator.errors import InputError

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from typing import Any


#: Reads of the safetensors files' first bytes run at once, as huggingface_hub reads their headers.
_SIZE_READERS = 8


def _file_size(hub: Any, repo_id: str, commit: str, file: str) -> tuple[int, int] | None:
    """A safetensors file's size on the Hub and its header's length, from one ranged read of its first 8 bytes.

    The size is the ``Content-Range`` total of the answer (its ``Content-Length`` where the server sends the file
    whole); None where it says none. hostile95: a header whose tensors end past the file was taken as it said, the
    Hub client reading its header alone.
    """
    utils = hub.utils
    url = hub.hf_hub_url(repo_id, file, revision=commit)
    response = utils.http_backoff("GET", url, headers={**utils.build_hf_headers(), "Range": "bytes=0-7"})
    utils.hf_raise_for_status(response)
    head = response.content[:8]
    if response.status_code == 206:
        total = str(response.headers.get("Content-Range") or "").rpartition("/")[2].strip()
    else:
        total = str(response.headers.get("Content-Length") or "").strip()
    if len(head) < 8 or not total.isdecimal():  # review100: not isdigit, which takes '²' (int refuses it)
        return None
    return int(total), int.from_bytes(head, "little")


def file_sizes(hub: Any, repo_id: str, commit: str, files: list[str]) -> dict[str, tuple[int, int] | None]:
    """:func:`_file_size` of each file, :data:`_SIZE_READERS` at once in daemon threads (left behind if one hangs)."""
    sizes: dict[str, tuple[int, int] | None] = {}
    failed: list[BaseException] = []
    todo = list(files)
    lock = threading.Lock()

    def work() -> None:
        while True:
            with lock:
                if not todo or failed:
                    return
                file = todo.pop()
            try:
                size = _file_size(hub, repo_id, commit, file)
            except BaseException as exc:  # handed to the caller's thread as it is
                with lock:
                    failed.append(exc)
                return
            with lock:
                sizes[file] = size

    workers = [threading.Thread(target=work, daemon=True) for _ in range(min(_SIZE_READERS, len(files)))]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    if failed:
        raise failed[0]
    return sizes


def data_section_bytes(label: str, size: tuple[int, int] | None) -> int | None:
    """The length of a Hub safetensors file's data section (None: its size not said), or an InputError."""
    if size is None:
        return None
    file_bytes, header_bytes = size
    if header_bytes > file_bytes - 8:
        raise InputError(
            f"{label}: its header is {header_bytes:,} bytes by its first 8 (the ranged read of the file), more than "
            f"the file's {file_bytes:,} bytes (the size the ranged read's answer gives) hold: a damaged or truncated upload"
        )
    return file_bytes - 8 - header_bytes
