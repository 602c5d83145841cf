"""Resolve a model reference - a catalog id, a ``config.json`` file or a directory holding one."""

from __future__ import annotations

import json
import os
from typing import NamedTuple

from generator import catalog
from generator.errors import ArchitectureError, InputError, Location
from generator.sizing.architecture import Architecture, parse_architecture

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


class ResolvedModel(NamedTuple):
    """A model ready to size: its id, where it came from, and its architecture."""

    id: str
    name: str
    source: str
    architecture: Architecture
    config: Mapping[str, Any]


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
        arch = parse_architecture(record.config)
    except ArchitectureError as exc:
        raise ArchitectureError(f"catalog model '{record.id}': {exc.message}", location) from None
    return ResolvedModel(record.id, record.name, "catalog: " + record.source[0], arch, record.config)


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
    if not isinstance(config, dict):
        raise InputError(f"{path}: a config.json must hold a JSON object", location)
    try:
        arch = parse_architecture(config)
    except ArchitectureError as exc:
        raise ArchitectureError(f"{path}: {exc.message}", location) from None
    name = str(config.get("_name_or_path") or os.path.basename(os.path.dirname(os.path.abspath(path))) or ref)
    return ResolvedModel(ref, name, f"local config: {ref}", arch, config)
