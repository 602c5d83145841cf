"""Every error a user can cause, in one place.

Only ``generator.cli`` catches these and turns them into a message and an exit code.
"""

from __future__ import annotations

from generator.named_tuple import NamedTuple


class SpecgenError(Exception):
    """Base class of every error specgen reports to a user (never shown as a traceback).

    ``location``: where in which input file the problem is, where known (the message starts with it too), so that a
    library caller annotating a pull request need not parse the message (newuser33 item 10).
    """

    exit_code = 1
    location: Location | None = None


class Location(NamedTuple):
    """Where in an input file a problem is: file, 1-based line and column, and a field path."""

    file: str
    line: int | None = None
    column: int | None = None
    path: str = ""

    def __str__(self) -> str:
        """Render as ``file:line:col: path`` (parts that are unknown are left out)."""
        parts = [self.file]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        head = ":".join(parts)
        return f"{head}: {self.path}" if self.path else head


class InputError(SpecgenError):
    """A workload, config.json or option is invalid; carries where it is."""

    def __init__(self, message: str, location: Location | None = None) -> None:
        """Keep the message and, when known, where in which file the problem is."""
        self.message = message
        self.location = location
        super().__init__(f"{location}: {message}" if location else message)


class UnreadableError(InputError):
    """A rendered file (``spec.json``) that could not be read, or is not JSON; exit 1.

    Unread: missing, not a regular file, past the bytes specgen reads, not UTF-8 text; not JSON: empty, cut short.
    fix146 item 3: ``diff --base`` said such a file "cannot be planned" (status ``invalid``), as of a workload that
    reads but does not plan; it is ``unreadable`` there, its reason as ``diff OLD NEW`` gives it.
    """


class MultipleInputError(SpecgenError):
    """Several input errors found at once (all are reported, in file order); exits as the first does."""

    errors: list[SpecgenError]

    def __init__(self, errors: list[InputError] | list[SpecgenError]) -> None:
        """Keep every error (those of several at once each); the CLI prints each on its own line."""
        flat: list[SpecgenError] = []
        for error in errors:
            flat += error.errors if isinstance(error, MultipleInputError) else [error]
        self.errors = flat
        # the first's, where one of them is no source out of reach: a file to fix outranks a retry (newuser82 item 7)
        fixable = [e for e in flat if e.exit_code != UnreachableError.exit_code] or flat
        self.exit_code = fixable[0].exit_code if fixable else SpecgenError.exit_code
        self.location = self.errors[0].location if self.errors else None  # the first's (newuser58 item 9); each in errors
        super().__init__("\n".join(str(e) for e in self.errors))


class UsageError(InputError):
    """A command-line option's value outside the range it takes: a usage error, exit 2.

    ``--context -1``, ``--batch 0``, ``--set kv_block_tokens=0`` exit as the parser's own refusal of a value it cannot
    read does (newuser73 item 9: ``--context -1`` exited 1 and ``--context 99999999999999999999`` 2).
    """

    exit_code = 2


class UnreachableError(InputError):
    """A source specgen needs could not be reached: exit 75, ``EX_TEMPFAIL`` of sysexits.h (try again later).

    newuser82 item 7: the Hugging Face Hub out of reach (no connection, a name that does not resolve, no answer within
    the wait, HTTP 429 or 5xx) exited 1, as a broken workload file does, so CI could not tell "retry" from "fix the
    file". A model the Hub says does not exist, a gated one without a token, a refused token: still 1.
    """

    exit_code = 75


class ShapeError(InputError):
    """A document value does not fit the typed workload model; keeps the value's path for the loader to locate."""

    def __init__(self, message: str, path: tuple[str | int, ...]) -> None:
        """Keep the message and the path into the document (mapping keys and list indexes)."""
        self.path = path
        super().__init__(message)


class SpecShapeError(InputError):
    """A ``spec.json`` field not as specgen writes it; keeps the field's JSON path for the reader to place it.

    The message names the file and the field, quoted (``x/spec.json: not a specgen spec.json: 'plan.pools[0].nodes'
    must be ...``); ``field`` is that path (``plan.pools[0].nodes``) and ``problem`` the message without the file, so
    the reader (:func:`generator.fleet_diff.plan_from_spec`) places it at the field's line and column without reading
    the field back out of the text.
    """

    def __init__(self, file: str, field: str, problem: str) -> None:
        """Keep the field's path and what is wrong with it (the text after the quoted field)."""
        self.field = field
        self.problem = f"not a specgen spec.json: '{field}' {problem}"
        super().__init__(f"{file}: {self.problem}")


class ArchitectureError(InputError):
    """A model config lacks the fields the sizing engine needs, or has an unknown layout."""


class CatalogError(SpecgenError):
    """A catalog data file is malformed or an id is unknown."""


class UnknownIdError(InputError):
    """An id (model, GPU, platform) is not in the catalog; the message suggests close ids."""


class OutputError(SpecgenError):
    """The output tree cannot be written (permissions, a full disk); the previous tree is left as it was."""


class MachineError(SpecgenError):
    """A command that reads this machine failed (``nvidia-smi`` exiting non-zero, or not answering in time)."""


class InfeasibleError(SpecgenError):
    """No hardware choice satisfies the workload; the message says which limit blocked it."""

    exit_code = 3

    def __init__(self, message: str, location: Location | None = None) -> None:
        """Keep the message and, when known, the field of the workload that binds (the message starts with it)."""
        self.location = location
        super().__init__(f"{location}: {message}" if location else message)


class ChainDeadlineError(InfeasibleError):
    """A ``run_after`` sequence misses a job's deadline on every pool (``planner.training_chain.chain_failure``).

    ``stretched``: the late job runs stretched, straight through the gaps between the other jobs' runs (fix138);
    ``reasons``: the nearest misses as the message says them. A caller (the idle-servers hint) reads these rather than
    the message's wording (review81 item 12: a stretched miss was recognised by "runs straight through the gaps", which
    the branch for a gap that leaves no time, "would run straight through", did not contain).
    """

    def __init__(self, message: str, location: Location | None, stretched: bool, reasons: str) -> None:
        super().__init__(message, location)
        self.stretched = stretched
        self.reasons = reasons


class FleetLimitError(InfeasibleError):
    """The chosen fleet breaks a limit of the whole fleet (``max_racks``, ``max_nodes``, ``max_budget_usd_per_month``).

    ``limit`` names the field and ``needed`` what the fleet needs of it (racks, nodes, USD a month or up front; inf:
    unpriced), so that of several fleets tried the one nearest the limit is the one reported. ``plan``: the fleet
    itself where it was assembled (``max_capex_usd``: whether a fleet better by the objective broke the cap).
    """

    def __init__(self, message: str, limit: str, needed: float, plan: object = None, location: Location | None = None) -> None:
        super().__init__(message, location)
        self.limit = limit
        self.needed = needed
        self.plan = plan


class DriftError(SpecgenError):
    """``render --check`` found committed output that differs from what would be rendered."""

    exit_code = 4


class FindingsError(SpecgenError):
    """The plan's findings reach the level given with ``--fail-on`` (they were printed above)."""

    exit_code = 5


#: The longest error line printed; a longer one (a value quoted whole) is cut with a note of what was left out.
MAX_ERROR_LINE_CHARS = 2000
#: Of those, how many a cut line keeps of its end, where an error says why.
ERROR_LINE_TAIL_CHARS = 400


def one_line(text: str) -> str:
    r"""``text`` as one line of a terminal or CI log.

    Line breaks and other control characters are written as escapes (``\n``), so that a value quoted in a message
    cannot start a line of its own (a CI runner obeys a line such as ``::add-mask::``); at most
    :data:`MAX_ERROR_LINE_CHARS` characters. A longer line keeps its start (the file, line and field) and its end (the
    reason: hostile86, ``-o`` or a workload path of 5,000 characters lost "File name too long"), its middle cut.
    """
    escaped = "".join(ch if ch.isprintable() or ch == "\t" else ascii(ch)[1:-1] for ch in text)
    if len(escaped) <= MAX_ERROR_LINE_CHARS:
        return escaped
    head = MAX_ERROR_LINE_CHARS - ERROR_LINE_TAIL_CHARS
    left_out = len(escaped) - MAX_ERROR_LINE_CHARS
    return f"{escaped[:head]}... ({left_out:,} characters left out) ...{escaped[-ERROR_LINE_TAIL_CHARS:]}"


def arithmetic_error(exc: ArithmeticError) -> SpecgenError:
    """An overflow or division by zero in the sizing, as the input error it comes from (never a traceback)."""
    return SpecgenError(
        f"the sizing arithmetic failed ({exc}): a constant or figure given is outside what the model computes; "
        "check the values under constants: (or --set) and the sizes given, and if they are ordinary, report it as a "
        "specgen bug with the input"
    )
