"""Numbers written in a form YAML 1.1 and YAML 1.2 readers read differently: each is refused, never guessed.

The workload is read by ruamel (YAML 1.2 with YAML 1.1 leftovers), but it is also read by editors and JSON Schema
tools (YAML 1.2 core schema, https://yaml.org/spec/1.2.2/#1023-core-schema) and by PyYAML and Ansible (YAML 1.1,
https://yaml.org/type/float.html and https://yaml.org/type/int.html). A number one of them reads as text, or as
another number, is refused with what each reads (fuzz22 item 12, fuzz23 item 5, fuzz31 items 4 and 10): a typo of
``1.0`` written ``1_0.0`` planned ten times the replicas. So is a number too large or too small for a float (it
would read as infinity or 0, a value the user never wrote).
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any

#: A float as YAML 1.1 reads it (PyYAML's resolver, less base 60 and ``.inf``/``.nan``): a point is required, and an
#: exponent needs its sign.
FLOAT_11 = re.compile(r"[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?")
#: A number as the YAML 1.2 core schema reads it (ints included): no ``_``, and an exponent needs neither point nor sign.
NUMBER_12 = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
#: Nonzero digits in a mantissa: a literal holding one that reads as 0 underflowed.
_NONZERO_MANTISSA = re.compile(r"^[^eE]*[1-9]")

PLAIN_DIGITS = ": write it in plain digits"
#: A scalar ruamel's resolver takes for a number though it holds no digit (``+_``, ``._``): text to every YAML version.
_NO_DIGIT = re.compile(r"[-+._]+")


def _shown(text: str) -> str:
    """``text`` as a message quotes it: a literal of hundreds of digits is cut in the middle."""
    return text if len(text) <= 40 else f"{text[:24]}...{text[-12:]} ({len(text):,} characters)"


def int_form_problem(node: int) -> str | None:
    """What is wrong with an integer ruamel read (a ``ScalarInt`` keeps how it was written), or None.

    ruamel reads ``2_0`` as 20 and ``0b10`` as 2 (YAML 1.1 forms), where YAML 1.2 readers read the texts "2_0" and
    "0b10". The other way round, ``0o10`` is 8 to YAML 1.2 and the text "0o10" to YAML 1.1 readers, and ``010`` is
    10 to YAML 1.2 but octal 8 to YAML 1.1. Hexadecimal is read alike by both.
    """
    kind = type(node).__name__
    digits = str(abs(int(node))).zfill(getattr(node, "_width", None) or 0)
    if getattr(node, "_underscore", None) or "_" in getattr(node, "yaml_text", ""):  # ruamel misses 1_ and 0_
        how = f"with digit separators is read as {int(node):,} by YAML 1.1 but as text by YAML 1.2 (editors, JSON Schema tools)"
    elif kind == "BinaryInt":
        how = f"in binary is read as {int(node):,} by YAML 1.1 but as text by YAML 1.2 (editors, JSON Schema tools)"
    elif kind == "OctalInt":
        how = f"in octal is read as {int(node):,} by YAML 1.2 but as text by YAML 1.1 (PyYAML, Ansible)"
    elif kind == "ScalarInt" and len(digits) > 1 and digits.startswith("0"):
        sign = -1 if int(node) < 0 else 1
        old = f"as octal {sign * int(digits, 8):,}" if set(digits) <= set("01234567") else "as text"
        how = f"with a leading zero is read as {int(node):,} by YAML 1.2 but {old} by YAML 1.1 (PyYAML, Ansible)"
    else:
        return None
    return f"a number written {how}{PLAIN_DIGITS}"


def float_form_problem(text: str, value: float) -> str | None:
    """What is wrong with the plain scalar ``text`` that ruamel read as the float ``value``, or None.

    ``1_0.0`` is 10 to YAML 1.1 (and ruamel) but text to YAML 1.2; ``1e3``, ``1.0e3`` and ``-.5`` are numbers to
    YAML 1.2 (and ruamel) but text to YAML 1.1. ``1e400`` reads as infinity and ``1e-400`` as 0.
    """
    if text.lstrip("+-").lower() in (".inf", ".nan"):
        return None  # written as a non-finite number: the caller refuses it as such
    if not math.isfinite(value):
        return f"{_shown(text)} is too large for a number (it reads as infinity)"
    if value == 0 and _NONZERO_MANTISSA.match(text):
        return f"{_shown(text)} is too small for a number (it reads as 0)"
    if "_" in text:
        how = f"with digit separators is read as {value:,} by YAML 1.1 but as text by YAML 1.2 (editors, JSON Schema tools)"
    elif not FLOAT_11.fullmatch(text):
        how = f"as {_shown(text)} is read as {value:,} by YAML 1.2 but as text by YAML 1.1 (PyYAML, Ansible)"
    else:
        return None
    return f"a number written {how}{PLAIN_DIGITS}"


def text_form_problem(text: str) -> str | None:
    """What is wrong with the plain scalar ``text`` that ruamel read as text, or None.

    ruamel reads ``.5e1`` as text (it wants a signed exponent after a leading point), YAML 1.1 does too, but YAML
    1.2 reads the number 5.0: an editor shows a number where specgen sees text.
    """
    if not NUMBER_12.fullmatch(text):
        return None
    how = f"as {_shown(text)} is read as {float(text):,} by YAML 1.2 but as text by YAML 1.1 (PyYAML, Ansible)"
    return f"a number written {how}{PLAIN_DIGITS}"


class PlainNumberText(str):
    """A plain scalar ruamel read as text that YAML 1.2 reads as a number (see :func:`text_form_problem`)."""

    __slots__ = ()


@functools.cache
def number_keeping_constructor() -> Any:
    """Ruamel's round-trip constructor, keeping the text of each plain float and marking number-like plain text.

    A ``ScalarFloat`` keeps its width and precision but not its ``_`` or how its exponent was written, which
    :func:`float_form_problem` needs: the text is kept as ``yaml_text`` on it. So it is on an int written with ``_``
    where ruamel keeps no ``_underscore`` (``1_`` is a plain int, ``0_`` a ScalarInt without it).
    """
    from ruamel.yaml.constructor import RoundTripConstructor
    from ruamel.yaml.scalarint import ScalarInt

    def implicit(node: Any) -> bool:
        return getattr(getattr(node, "ctag", None), "handle", None) is None and node.style is None

    class NumberKeepingConstructor(RoundTripConstructor):
        """Round-trip construction that keeps what :mod:`generator.workload.yaml_numbers` checks."""

        def construct_yaml_float(self, node: Any) -> Any:
            if implicit(node) and _NO_DIGIT.fullmatch(str(node.value)):
                return str(node.value)  # ._ : text to YAML 1.1 and 1.2; ruamel's float() of it raised
            value = super().construct_yaml_float(node)
            if implicit(node) and type(value) is not float:  # a ScalarFloat (``.inf`` and ``.nan`` are plain floats)
                value.yaml_text = str(node.value)
            return value

        def construct_yaml_int(self, node: Any) -> Any:
            if implicit(node) and _NO_DIGIT.fullmatch(str(node.value)):
                return str(node.value)  # +_ : text to YAML 1.1 and 1.2; ruamel indexed past its end (a traceback)
            value = super().construct_yaml_int(node)
            if implicit(node) and "_" in str(node.value):  # ruamel keeps no _underscore for 1_ (a plain int) or 0_
                value = ScalarInt(value) if type(value) is int else value
                value.yaml_text = str(node.value)
            return value

        def construct_yaml_str(self, node: Any) -> Any:
            value = super().construct_yaml_str(node)
            if type(value) is str and implicit(node) and NUMBER_12.fullmatch(value):
                return PlainNumberText(value)
            return value

    # registered on the subclass only (add_constructor copies the table): ruamel's own class is left as it is
    NumberKeepingConstructor.add_constructor("tag:yaml.org,2002:float", NumberKeepingConstructor.construct_yaml_float)
    NumberKeepingConstructor.add_constructor("tag:yaml.org,2002:int", NumberKeepingConstructor.construct_yaml_int)
    NumberKeepingConstructor.add_constructor("tag:yaml.org,2002:str", NumberKeepingConstructor.construct_yaml_str)
    return NumberKeepingConstructor
