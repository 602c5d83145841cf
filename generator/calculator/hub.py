"""Models on the Hugging Face Hub: ``config.json`` and the safetensors headers, never the weights.

Everything goes through ``huggingface_hub`` (imported only when a Hub id is resolved), so its
cache, ``HF_TOKEN`` (gated and private models), ``HF_HUB_OFFLINE``, ``HF_ENDPOINT`` and
``HF_HOME`` behave as they do for transformers. ``config.json`` is downloaded into the Hub cache;
the safetensors headers are read with HTTP range requests
(``HfApi.get_safetensors_metadata``) and the tensor table is kept in the cache's assets folder
(``huggingface_hub.cached_assets_path``) keyed by commit, so an offline run sizes exactly as the
online one did. The resolved commit and the SHA-256 of the config are recorded in the model's
source, so spec.json changes (drift) when the upstream config does.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from typing import TYPE_CHECKING

from generator.calculator.safetensors_header import Tensor, checked_tensor
from generator.errors import InputError, Location
from generator.named_tuple import NamedTuple

if TYPE_CHECKING:
    from typing import Any

_TENSOR_TABLE = "safetensors-tensors.json"


class HubRepoError(InputError):
    """The Hub has the repository but will not give a model from it (gated, no such revision, no usable config)."""


class HubModel(NamedTuple):
    """What was read from the Hub for one model."""

    repo_id: str
    #: The revision asked for (a branch, tag or commit; ``main`` when none was given).
    revision: str
    #: The commit it resolved to.
    commit: str
    config: dict[str, Any]
    config_sha256: str
    #: Every tensor of the checkpoint (``None``: no safetensors headers could be read).
    tensors: list[Tensor] | None
    notes: tuple[str, ...]

    @property
    def source(self) -> str:
        """Where the model came from, reproducibly: repository, commit and config hash."""
        asked = "" if self.revision in ("main", self.commit) else f" (revision {self.revision})"
        return f"hf: {self.repo_id}@{self.commit}{asked}; config.json sha256:{self.config_sha256}"


def fetch_hub_model(repo_id: str, revision: str | None, location: Location | None = None) -> HubModel:
    """Download ``config.json`` (through the Hub cache) and read the safetensors headers of ``repo_id``."""
    try:
        import huggingface_hub
        from huggingface_hub import errors as hub_errors
    except ImportError:
        raise InputError(
            f"reading '{repo_id}' from the Hub needs huggingface_hub (pip install huggingface_hub)", location
        ) from None
    download = huggingface_hub.hf_hub_download  # loads the library's logging setup, which the next line overrides
    logging.getLogger("huggingface_hub").setLevel(logging.ERROR)  # its warnings would repeat what the error says
    asked = revision or "main"
    where = f"'{repo_id}'" + (f" at revision '{revision}'" if revision else "")
    offline = huggingface_hub.constants.HF_HUB_OFFLINE
    unresolved = None if offline else _unresolvable_host(huggingface_hub.constants.ENDPOINT)
    try:
        path = download(repo_id, "config.json", revision=revision, local_files_only=unresolved is not None)
    except hub_errors.GatedRepoError:
        raise HubRepoError(
            f"{where} is a gated model on the Hub: accept its license on the model page, then set HF_TOKEN "
            "to a read token of that account (or run `hf auth login`)",
            location,
        ) from None
    except hub_errors.RepositoryNotFoundError:
        raise InputError(
            f"{where} is neither in the catalog nor on the Hub ({huggingface_hub.constants.ENDPOINT}); "
            "check the id, or set HF_TOKEN if it is a private model (see 'specgen catalog models')",
            location,
        ) from None
    except hub_errors.RevisionNotFoundError:
        raise HubRepoError(f"revision '{revision}' of '{repo_id}' does not exist on the Hub", location) from None
    except hub_errors.LocalEntryNotFoundError:  # before EntryNotFoundError, its base class
        raise InputError(_offline_message(where, huggingface_hub, unresolved), location) from None
    except hub_errors.EntryNotFoundError:
        raise HubRepoError(f"{where} has no config.json on the Hub: not a transformers model", location) from None
    except (hub_errors.HfHubHTTPError, hub_errors.HFValidationError, OSError) as exc:
        raise InputError(f"cannot read {where} from the Hub: {str(exc).splitlines()[0]}", location) from None
    commit = os.path.basename(os.path.dirname(path))
    with open(path, "rb") as fh:
        raw = fh.read()
    try:
        config = json.loads(raw)
    except (ValueError, RecursionError):
        raise HubRepoError(f"{where}: config.json on the Hub is not valid JSON", location) from None
    if not isinstance(config, dict):
        raise HubRepoError(f"{where}: config.json must hold a JSON object", location)
    tensors, notes = _tensor_table(huggingface_hub, hub_errors, repo_id, commit, unresolved)
    return HubModel(repo_id, asked, commit, config, hashlib.sha256(raw).hexdigest(), tensors, notes)


#: Environment variables that send requests through a proxy, which resolves the Hub's name itself.
_PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


def _unresolvable_host(endpoint: str) -> str | None:
    """The Hub's host name when it does not resolve here and no proxy resolves it instead; else None.

    A runner without network (air-gapped CI) then reads the Hub cache at once: huggingface_hub retries a failed
    request five times with back-off, 23 s per model (newuser24 item 11), for an answer a name lookup gives in
    milliseconds.
    """
    import socket
    from urllib.parse import urlsplit

    host = urlsplit(endpoint).hostname
    if not host or any(os.environ.get(name) for name in _PROXY_VARIABLES):
        return None
    try:
        socket.getaddrinfo(host, None)
    except OSError:  # socket.gaierror: the name does not resolve
        return host
    return None


def _offline_message(where: str, hub: Any, unresolved: str | None) -> str:
    cache = f"{where} is not in the Hub cache ({hub.constants.HF_HUB_CACHE})"
    if hub.constants.HF_HUB_OFFLINE:
        return f"HF_HUB_OFFLINE is set and {cache}; run once online"
    reason = f": its name {unresolved} does not resolve" if unresolved else ""
    return (
        f"cannot reach the Hub ({hub.constants.ENDPOINT}{reason}) and {cache}; on a runner without network set "
        "HF_HUB_OFFLINE=1 so that no request is tried"
    )


def _tensor_table(
    hub: Any, hub_errors: Any, repo_id: str, commit: str, unresolved: str | None
) -> tuple[list[Tensor] | None, tuple[str, ...]]:
    """The checkpoint's tensors: from the assets cache, else from the safetensors headers on the Hub."""
    cache = hub.cached_assets_path(library_name="specgen", namespace=repo_id.replace("/", "--"), subfolder=commit)
    table = cache / _TENSOR_TABLE
    if table.is_file():
        try:
            rows = json.loads(table.read_text(encoding="utf-8"))
            return [Tensor(str(n), str(d), int(b)) for n, d, b in rows], ()
        except (OSError, ValueError, TypeError):
            pass  # a damaged cache entry is read again from the Hub
    if hub.constants.HF_HUB_OFFLINE or unresolved:
        why = "HF_HUB_OFFLINE" if hub.constants.HF_HUB_OFFLINE else f"{unresolved} does not resolve"
        return None, (f"{why}: the safetensors headers were never read online; weights sized from the config",)
    try:
        meta = hub.HfApi().get_safetensors_metadata(repo_id, revision=commit)
    except hub_errors.NotASafetensorsRepoError:
        return None, ("the Hub repository has no safetensors weights; weights sized from the config",)
    except (hub_errors.HfHubHTTPError, hub_errors.SafetensorsParsingError, OSError) as exc:
        return None, (f"safetensors headers could not be read ({str(exc).splitlines()[0]}); weights sized from the config",)
    tensors = sorted(
        checked_tensor(f"{repo_id}/{file}", name, str(info.dtype), list(info.shape), list(info.data_offsets), None)
        for file, file_meta in sorted(meta.files_metadata.items())
        for name, info in file_meta.tensors.items()
    )
    with contextlib.suppress(OSError):  # a read-only cache only costs the next run a few range requests
        table.write_text(json.dumps([list(t) for t in tensors]), encoding="utf-8")
    return tensors, ()
