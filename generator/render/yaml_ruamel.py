"""ruamel.yaml's emitter, configured as :func:`generator.render.env.to_yaml` needs it, for what the fast emitter declines.

Imported only when :func:`generator.render.yaml_emit.emit` declines a document (rare values: control characters,
long keys...): loading ruamel costs about 10 ms of a cold start.
"""

from __future__ import annotations

import io
import re
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.representer import SafeRepresenter
from ruamel.yaml.resolver import VersionedResolver

from generator.render.yaml_emit import Block, Unsafe
from generator.render.yaml_implicit import STR_TAG, needs_quotes

_YAML11 = VersionedResolver(version=(1, 1))


#: Characters a plain or single-quoted YAML scalar cannot hold. Patterns with wide Unicode classes stay text and
#: compile on first use (``re`` caches them): only the ruamel fallback reads them, and each costs milliseconds.
_UNSAFE_UNQUOTED = "[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f\\u2028\\u2029\\ufeff\\ud800-\\udfff\\ufffe\\uffff]"


def _represent_str(representer: SafeRepresenter, data: str) -> ScalarNode:
    """Quote strings a YAML 1.1 reader (PyYAML in Ansible) or Go's (yaml.v2, v3) would take for bools or numbers."""
    style = "'" if needs_quotes(data) else None
    if re.search(_UNSAFE_UNQUOTED, data):  # line breaks of YAML 1.1 only, controls, BOM: escaped in double quotes
        style = '"'

    node: ScalarNode = representer.represent_scalar(STR_TAG, data, style=style)
    return node


def _represent_unsafe(representer: SafeRepresenter, data: Unsafe) -> ScalarNode:
    """``!unsafe 'text'``; a string YAML 1.1 would read as a bool or number is only quoted.

    Ansible re-resolves an ``!unsafe`` scalar as if it were plain (``!unsafe '580'`` becomes the int 580),
    and such a string cannot hold Jinja anyway.
    """
    if _YAML11.resolve(ScalarNode, str(data), (True, False)) != STR_TAG:
        return _represent_str(representer, str(data))
    node: ScalarNode = representer.represent_scalar("!unsafe", str(data), style="'")
    return node


def _represent_block(representer: SafeRepresenter, data: Block) -> ScalarNode:
    node: ScalarNode = representer.represent_scalar(STR_TAG, str(data), style="|")
    return node


class _Representer(SafeRepresenter):
    """SafeRepresenter that quotes YAML-1.1-ambiguous strings and tags :class:`Unsafe` ones ``!unsafe``."""


_Representer.add_representer(str, _represent_str)
_Representer.add_representer(Unsafe, _represent_unsafe)
_Representer.add_representer(Block, _represent_block)


def _has_escaped_text(value: Any) -> bool:
    """Whether a string (key or value) holds a character the YAML emitter writes as an escape sequence."""
    if isinstance(value, Block):
        return False  # a literal block is never folded
    if isinstance(value, str):
        return re.search(_ESCAPED, value) is not None
    if isinstance(value, dict):
        return any(_has_escaped_text(k) or _has_escaped_text(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_has_escaped_text(item) for item in value)
    return False


#: Characters outside YAML's printable set (the emitter escapes them), as ruamel's emitter decides.
_ESCAPED = "[^\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|\ufeff"


def ruamel_yaml(value: Any) -> str:
    """ruamel.yaml's block YAML of sorted plain data, as :func:`to_yaml` configures it (blanks before breaks kept)."""
    yaml = YAML(typ="safe", pure=True)
    yaml.Representer = _Representer
    yaml.default_flow_style = False
    yaml.width = 72  # folds long strings: yamllint's default 80-column limit holds at any nesting depth we emit
    if _has_escaped_text(value):
        # ruamel can fold a double-quoted string right after an escape sequence without the closing backslash,
        # which turns the line break into a space: such strings stay on one line, unchanged
        yaml.width = 1 << 30
    yaml.indent(mapping=2, sequence=4, offset=2)
    buf = io.StringIO()
    yaml.dump(value, buf)
    return buf.getvalue()
