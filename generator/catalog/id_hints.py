"""What to tell a user who typed a catalog id (GPU, platform, CPU, NIC) the catalog does not have.

newuser30 item 10: ``h100`` (the likeliest first try) got no "did you mean", while ``mi355x`` was offered
``mi325x-256gb`` and ``rtx-4080-16gb`` ``rtx-a4000-16gb``: other products, which a user following the hint plans with.
Here a hint names only ids of the model typed:

1. ids that start with what was typed (``h100`` -> ``h100-nvl-94gb``, ``h100-pcie-80gb``, ``h100-sxm5-80gb``), those
   whose first parts are exactly what was typed first;
2. ids with the typed name's model part and its variant words (``ti``, ``super``: a 4080 SUPER is no 4080; the
   model part is its first part with a digit that is no memory size: ``h100`` in
   ``nvidia-h100-80gb``, ``4090`` in ``rtx-4090``); where none has it, those with a part it begins (``mi300`` of
   ``mi300x``); where none, those with a slip of it (two neighbouring characters swapped, a character doubled or typed
   once: ``4900``, ``h1000``); most of the typed parts shared first;
3. where no id has that model part: that it is not in the catalog, how many ids the catalog holds and the command
   that lists them (a digit changed is another product: ``mi355x`` is no ``mi325x``);
4. a name without a model part (``gaudi``, a misspelt word) keeps difflib's closest ids.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

#: A part that is a memory size (``80gb``, ``96g``, ``141gib``, the slip ``96b``), not a model.
_SIZE = re.compile(r"\d+(?:g|gb|gib|b)")
#: Ids listed that start with what was typed (``rtx`` starts 13 GPU ids), and ids of the model typed.
MAX_PREFIXED = 6
MAX_SAME_MODEL = 3
#: The most characters of a typed id compared (the longest catalog id has 32).
_MAX_CHARS = 100
#: Words that make another product of a model number (``rtx-4080-super`` is no ``rtx-4080``, ``rtx-4070-ti`` no
#: ``rtx-4070``): an id of the model typed is offered only with the same of them.
VARIANT_WORDS = frozenset({"ti", "super"})
#: The ``specgen catalog`` table that lists each kind of id.
LISTED_BY = {"GPU": "gpus", "platform": "platforms", "CPU": "cpus", "NIC": "nics"}


def id_hint(what: str, value: str, choices: Sequence[str], catalog_size: int | None = None) -> str:
    """The suffix of an ``unknown <what> '<value>'`` message: ids of the model typed, or that it is not in the catalog.

    ``choices`` are the ids known (in the order to list them); ``catalog_size`` how many the catalog holds (default:
    as many as ``choices``).
    """
    value = value[:_MAX_CHARS]  # an id is short: a huge value (a hostile file's) is not matched at length
    prefixed = _prefixed(value, choices)
    model = _model_part(value)
    if model is None:
        close = prefixed or _close(value, choices)
        return _did_you_mean(close, len(prefixed))
    same = [c for c in _same_model(value, model, choices) if c not in prefixed][: max(0, MAX_SAME_MODEL)]
    if prefixed or same:
        return _did_you_mean([*prefixed, *same], len(prefixed) + len(same))
    count = len(choices) if catalog_size is None else catalog_size
    table = LISTED_BY.get(what)
    listed = f": `specgen catalog {table}` lists them" if table else ""
    plural = what if what.endswith("s") else f"{what}s"
    return f"; no {what} of that model is in the catalog ({count} {plural}{listed})"


def _did_you_mean(ids: list[str], found: int) -> str:
    """``; did you mean 'a', 'b'?`` with at most :data:`MAX_PREFIXED` ids and a count of the rest ('' for none)."""
    if not ids:
        return ""
    shown = ids[:MAX_PREFIXED]
    more = f" (or {found - len(shown)} more)" if found > len(shown) else ""
    return f"; did you mean {', '.join(repr(c) for c in shown)}{more}?"


def _parts(text: str) -> list[str]:
    """The lower-case parts of an id: ``NVIDIA_H100-80GB`` -> ``nvidia``, ``h100``, ``80gb``."""
    return [p for p in re.split(r"[^a-z0-9]+", text.lower()) if p]


def _model_part(text: str) -> str | None:
    """The first part with a digit that is no memory size and no count under 100 (``48`` vCPUs); None if none."""
    for part in _parts(text):
        if re.search(r"\d", part) and not _SIZE.fullmatch(part) and not (part.isdigit() and len(part) < 3):
            return part
    return None


def _prefixed(value: str, choices: Sequence[str]) -> list[str]:
    """Ids that start with what was typed, parts and case aside.

    Where what was typed is some ids' first parts exactly, those first, and no id where a digit follows what was typed
    (``l4``: ``l4-24gb``, not ``l40-48gb``; ``a10``: ``a10-24gb`` and ``a10g-24gb``, not the A100s); else every id it
    begins (``h10``: the H100s).
    """
    typed = "".join(_parts(value))
    if not typed:
        return []
    starts = [c for c in choices if "".join(_parts(c)).startswith(typed)]

    def whole(choice: str) -> bool:  # what was typed ends where one of the id's parts does
        parts = _parts(choice)
        return any("".join(parts[:k]) == typed for k in range(1, len(parts) + 1))

    wholes = [c for c in starts if whole(c)]
    if not wholes:
        return starts
    return wholes + [c for c in starts if c not in wholes and not "".join(_parts(c))[len(typed)].isdigit()]


def _same_model(value: str, model: str, choices: Sequence[str]) -> list[str]:
    """Ids with the model part ``model``: those that have it, else those with a part it begins, else with a slip of it.

    Most typed parts shared first, then the closest by difflib.
    """
    typed = _parts(value)
    variant = set(typed) & VARIANT_WORDS
    for matches in (lambda a, b: a == b, _begins, _slip):
        ranked = []
        for choice in choices:
            parts = _parts(choice)
            if not any(matches(model, part) for part in parts) or set(parts) & VARIANT_WORDS != variant:
                continue
            shared = sum(any(_similar(t, part) for part in parts) for t in typed)
            ratio = difflib.SequenceMatcher(None, value.lower(), choice.lower()).ratio()
            ranked.append((-shared, -ratio, choice))
        if ranked:
            return [choice for *_, choice in sorted(ranked)]
    return []


def _similar(typed: str, part: str) -> bool:
    """Whether an id's ``part`` is the ``typed`` part, one it begins, or a slip of it."""
    return typed == part or _begins(typed, part) or _slip(typed, part)


def _begins(typed: str, part: str) -> bool:
    """Whether ``typed`` (two characters or more) begins an id's ``part``: ``mi300`` of ``mi300x``."""
    return len(typed) >= 2 and part.startswith(typed) and part != typed


def _slip(typed: str, part: str) -> bool:
    """Whether ``typed`` is a slip of ``part``: two neighbouring characters swapped, or a character doubled or typed once.

    A character changed is no slip (``mi355x`` is another product than ``mi325x``, ``4080`` than ``4090``), nor one
    added at the end (``4090d``, ``l40s`` are others than ``4090``, ``l40``).
    """
    if len(typed) == len(part):
        diff = [i for i in range(len(part)) if typed[i] != part[i]]
        return len(diff) == 2 and diff[1] == diff[0] + 1 and (typed[diff[0]], typed[diff[1]]) == (part[diff[1]], part[diff[0]])
    longer, shorter = (typed, part) if len(typed) > len(part) else (part, typed)
    if len(longer) != len(shorter) + 1:
        return False
    return any(longer[i] == longer[i - 1] and longer[:i] + longer[i + 1 :] == shorter for i in range(1, len(longer)))


def _close(value: str, choices: Sequence[str]) -> list[str]:
    """The closest ids by difflib to a name without a model part (a misspelt word), at most three."""
    lookup = {c.lower(): c for c in choices}
    return [lookup[c] for c in difflib.get_close_matches(value.lower(), list(lookup), n=3, cutoff=0.5)]


#: The most characters outside ASCII :func:`lookalike_note` names.
MAX_NAMED_CHARACTERS = 3


def lookalike_note(typed: str, written: str = "every id") -> str:
    """`` (it holds 'с' (U+0441 CYRILLIC SMALL LETTER ES), ...)`` for an id typed with characters outside ASCII; '' else.

    hostile86: ``Llama-3.1-70B-Instruсt`` with a Cyrillic ``с`` (pasted, or a confusable a pull request planted) read
    ``unknown model 'meta-llama/Llama-3.1-70B-Instruсt'; did you mean 'meta-llama/Llama-3.1-70B-Instruct'``: the two
    names look the same. Every catalog id and Hub id is ASCII, so each character outside it is named by its code point;
    ``written``: what is written in ASCII (a schema pattern's field: "this field").
    """
    if typed.isascii():
        return ""
    import unicodedata  # only on a refusal

    odd = list(dict.fromkeys(ch for ch in typed if not ch.isascii()))
    named = [f"{ch!r} (U+{ord(ch):04X} {unicodedata.name(ch, 'unnamed character')})" for ch in odd[:MAX_NAMED_CHARACTERS]]
    more = f" and {len(odd) - MAX_NAMED_CHARACTERS} more" if len(odd) > MAX_NAMED_CHARACTERS else ""
    return f" (it holds {', '.join(named)}{more}, outside ASCII, which {written} is written in)"
