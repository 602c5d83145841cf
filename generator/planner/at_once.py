"""Raise every refusal a check found at once, in file order: the one rule of the early checks (fix186 item 1).

A check that stopped at its first refusal told a workload with two bad deployments of one; fixed, the second was
refused on the next run. Each check now gathers its refusals and hands them here.
"""

from __future__ import annotations

from generator.errors import MultipleInputError, SpecgenError


def raise_in_file_order(refusals: list[SpecgenError]) -> None:
    """Raise nothing, the one refusal, or all of them (:class:`MultipleInputError`) by line, stably; repeats said once.

    The exit code is the first's, as :class:`MultipleInputError` takes it: where every refusal is of one kind (an
    input error, 1; no feasible plan, 3), the code a lone one exits with.
    """
    unique = list({str(e): e for e in refusals}.values())
    if len(unique) > 1:
        # file order, stably: by line, then by the order found (Python's sort keeps the latter)
        unique.sort(key=lambda e: (e.location.line or 0) if e.location else 0)
        raise MultipleInputError(unique)
    if unique:
        raise unique[0]
