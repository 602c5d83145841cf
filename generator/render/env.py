"""The one Jinja environment and the value emitters every renderer uses.

Structured values go through :func:`to_json` / :func:`to_yaml` / :func:`hcl` - never hand-built
quoting. Output is deterministic: sorted keys, fixed widths, a trailing newline.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from functools import cache
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, FileSystemBytecodeCache, FileSystemLoader, StrictUndefined

from generator.paths import data_dir
from generator.render import md_escape
from generator.render.yaml_emit import NotEmittedError, Unsafe, emit
from generator.units import GIB


def to_json(value: Any) -> str:
    """Canonical JSON: sorted keys, two-space indent, no trailing newline."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, (list, tuple)):
        return [_sorted(v) for v in value]
    return value


_BLANKS_BEFORE_BREAK = re.compile(r"[ \t]+\n")
#: yamllint's default line length (its ``line-length`` rule, max 80), which it waives for a line of one word alone.
YAMLLINT_MAX_LINE = 80
#: A line past that holding an ``!unsafe`` scalar with no blank to fold at (a URL), after its key or list dash:
#: ruamel and :mod:`~generator.render.yaml_emit` keep it on the key's line, which yamllint refuses (newuser89 item 6: an
#: AMD pool's group vars, its ROCm guide's URL, ``specgen_rocm_host.source``).
_LONG_UNSAFE_WORD = re.compile(r"^(?P<head> *(?:- )*(?P<key>[^ '\"#-][^ ]*: )?)!unsafe (?P<word>'[^ ]*')$", re.MULTILINE)


def _word_on_its_line(line: re.Match[str]) -> str:
    """The tag on the key's line and the scalar alone on the next, two columns in from its key (or its list dash)."""
    head = line["head"]
    if len(line[0]) <= YAMLLINT_MAX_LINE:
        return line[0]
    owner = len(head) - len(line["key"] or "- ")  # the column of the key, or of the dash, the value is under
    return f"{head}!unsafe\n{' ' * (owner + 2)}{line['word']}"


def unsafe_strings(value: Any) -> Any:
    """``value`` with every string value (not mapping keys) marked :class:`Unsafe`, recursively."""
    if isinstance(value, str):
        return Unsafe(value)
    if isinstance(value, dict):
        return {k: unsafe_strings(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [unsafe_strings(v) for v in value]
    return value


def to_yaml(value: Any) -> str:
    """Block-style YAML of plain data with sorted keys, read alike by YAML 1.1 and 1.2 parsers.

    :func:`~generator.render.yaml_emit.emit` writes the common shapes (ruamel's bytes, faster); ruamel the rest.
    """
    data = _sorted(value)
    try:
        text = emit(data)
    except NotEmittedError:
        text = ruamel_yaml(data)
    # folding a long value leaves blanks before line breaks ("key: ", "word "); YAML drops them when it
    # folds plain and quoted scalars, and the only block scalars emitted (generated configs) have none
    return _LONG_UNSAFE_WORD.sub(_word_on_its_line, _BLANKS_BEFORE_BREAK.sub("\n", text))


def ruamel_yaml(value: Any) -> str:
    """ruamel.yaml's block YAML of sorted plain data, as :func:`to_yaml` configures it (blanks before breaks kept)."""
    from generator.render.yaml_ruamel import ruamel_yaml as dump  # ruamel loads only for what emit declines

    return dump(value)


def ansible_yaml(value: Any) -> str:
    """YAML for Ansible (inventories, group_vars): every string value is ``!unsafe``, so no Jinja in it is ever evaluated."""
    return to_yaml(unsafe_strings(value))


def hcl(value: Any) -> str:
    """An HCL literal: JSON syntax is valid HCL for these values, with template sequences escaped."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)
    return text.replace("${", "$${").replace("%{", "%%{")


def _hcl_string(text: str) -> str:
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif char in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out).replace("${", "$${").replace("%{", "%%{") + '"'


def hcl_inline(value: Any) -> str:
    """An HCL expression on one line in ``terraform fmt``'s canonical spacing (``{ "k" : v }``), keys sorted."""
    if isinstance(value, dict):
        items = ", ".join(f"{_hcl_string(str(k))} : {hcl_inline(value[k])}" for k in sorted(value))
        return f"{{ {items} }}" if items else "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(hcl_inline(v) for v in value) + "]"
    if isinstance(value, str):
        return _hcl_string(value)
    if value is None:
        return "null"
    return json.dumps(value, allow_nan=False)


def num(value: Any) -> str:
    """A number with thousands separators (integers exact; floats whole above 1,000, else 4 significant digits)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    if abs(value) >= 1e15:
        return f"{value:.3e}"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


def gib(value: int) -> str:
    """Bytes as GiB with two decimals."""
    return f"{value / GIB:.2f}"


if TYPE_CHECKING:
    from jinja2.bccache import Bucket


class _TemplateCache(FileSystemBytecodeCache):
    """Jinja's cache of compiled templates on disk, which never fails a render.

    Compiling the templates is most of a one-file ``render`` after imports. Like Python's own bytecode,
    compiled templates are kept between runs (Jinja checks each one against its template's source) and
    not written when Python writes none (``PYTHONDONTWRITEBYTECODE``); a cache that cannot be read or
    written is skipped.
    """

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            # hostile86: Jinja's own open() of a FIFO left there (a restored CI cache) waited for a writer for ever,
            # and the render with it; an entry that is not a regular file is a miss
            fd = os.open(self._get_cache_filename(bucket), os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
            with open(fd, "rb") as entry:
                if stat.S_ISREG(os.fstat(entry.fileno()).st_mode):
                    bucket.load_bytecode(entry)
        except Exception:  # any unreadable entry (truncated pickle or marshal data, I/O) is a miss, compiled anew
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        if sys.dont_write_bytecode:
            return
        try:
            os.makedirs(self.directory, mode=0o700, exist_ok=True)
            super().dump_bytecode(bucket)
        except OSError:
            pass


def _template_cache(markdown: bool) -> _TemplateCache | None:
    """A cache folder per Jinja version and per version of this module (which sets how templates compile).

    None (templates compiled on every run) when no absolute cache folder is known: with HOME unset,
    ``~`` stays ``~`` and would put the cache under the working directory.
    """
    import hashlib

    import jinja2

    with open(__file__, "rb") as fh:
        key = hashlib.sha256(fh.read() + f"{jinja2.__version__}:{markdown}".encode()).hexdigest()[:16]
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(root):
        return None
    return _TemplateCache(os.path.join(root, "specgen", f"templates-{key}"))


@cache
def environment(markdown: bool = False) -> Environment:
    """The Jinja environment over ``templates/``; for Markdown, every interpolated string is escaped.

    In the Markdown one, ``{{ x }}`` is inert text (:func:`md_escape.md_text`) and ``{{ x | code }}``
    a code span nothing in ``x`` can close; ``| incode`` keeps a value literal inside a fenced block.
    """
    env = Environment(
        loader=FileSystemLoader(data_dir("templates")),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        finalize=md_escape.finalize if markdown else None,
        bytecode_cache=_template_cache(markdown),
    )
    env.filters["tojson"] = to_json
    env.filters["hcl"] = hcl
    env.filters["hcl_inline"] = hcl_inline
    env.filters["num"] = num
    env.filters["gib"] = gib
    env.filters["code"] = md_escape.md_code
    env.filters["incode"] = lambda value: md_escape.md_fenced(str(value))
    return env


def render_template(name: str, **context: Any) -> str:
    """Render one template (``.md.j2`` ones with Markdown escaping); the result ends with exactly one newline."""
    env = environment(markdown=name.endswith(".md.j2"))
    return env.get_template(name).render(**context).rstrip("\n") + "\n"
