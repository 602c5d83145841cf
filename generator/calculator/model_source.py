"""Resolve a model reference - a catalog id, a ``config.json`` file or a directory holding one."""

from __future__ import annotations

import functools
import json
import os
from typing import TYPE_CHECKING, NamedTuple

from generator import catalog
from generator.errors import ArchitectureError, InputError, Location
from generator.sizing.architecture import Architecture, parse_architecture

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


class ResolvedModel(NamedTuple):
    """A model ready to size: its id, where it came from, and its architecture."""

    id: str
    name: str
    source: str
    architecture: Architecture


#: What the architecture parser raises on a config whose fields have the wrong shape or value.
_MALFORMED = (TypeError, ValueError, AttributeError, ArithmeticError, KeyError, IndexError, RecursionError)


def _parse(config: Mapping[str, Any], label: str, location: Location | None) -> Architecture:
    """``parse_architecture``, with every failure an ArchitectureError that names the config."""
    try:
        return parse_architecture(config)
    except ArchitectureError as exc:
        raise ArchitectureError(f"{label}: {exc.message}", location) from None
    except _MALFORMED as exc:
        detail = str(exc) or type(exc).__name__
        if isinstance(exc, RecursionError):
            detail = "nested too deeply"
        raise ArchitectureError(f"{label}: malformed config.json: {detail}", location) from None


def _looks_like_path(ref: str) -> bool:
    return ref.endswith(".json") or ref.startswith((".", "/", "~")) or (os.sep in ref and os.path.exists(ref))


def resolve_model(ref: str, base_dir: str = ".", location: Location | None = None) -> ResolvedModel:
    """Resolve ``ref``; paths are relative to ``base_dir`` (the workload file's folder)."""
    path = os.path.join(base_dir, os.path.expanduser(ref))
    if _looks_like_path(ref) or os.path.isdir(path):
        return _from_path(ref, path, location)
    try:
        record = catalog.find_model(ref)
    except InputError as exc:
        raise type(exc)(exc.message, location) from None
    try:
        arch = _catalog_architecture(record.id)
    except ArchitectureError as exc:
        raise ArchitectureError(exc.message, location) from None
    return ResolvedModel(record.id, record.name, "catalog: " + (record.source[0] if record.source else "unsourced"), arch)


@functools.cache
def _catalog_architecture(model_id: str) -> Architecture:
    """A catalog model's architecture, parsed once per process (every workload naming it shares it)."""
    return _parse(catalog.models()[model_id].config, f"catalog model '{model_id}'", None)


def _from_path(ref: str, path: str, location: Location | None) -> ResolvedModel:
    if os.path.isdir(path):
        path = os.path.join(path, "config.json")
    try:
        with open(path, encoding="utf-8") as fh:
            config = json.load(fh)
    except FileNotFoundError:
        raise InputError(f"model config '{ref}' not found (looked for {path})", location) from None
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read model config {path}: {exc}", location) from None
    except RecursionError:
        raise InputError(f"cannot read model config {path}: JSON nested too deeply", location) from None
    if not isinstance(config, dict):
        raise InputError(f"{path}: a config.json must hold a JSON object", location)
    arch = _parse(config, path, location)
    name = str(config.get("_name_or_path") or os.path.basename(os.path.dirname(os.path.abspath(path))) or ref)
    return ResolvedModel(ref, name, f"local config: {ref}", arch)
