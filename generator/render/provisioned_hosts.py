"""The owned hosts Metal3 and Tinkerbell get an object for, and the error where the plan uses none of them.

A host tool renders an object (a BareMetalHost, a Hardware) for each inventory host the plan puts on a pool that gives
the fields the object needs; nothing is invented for the others. validate refuses a tool no host gives those fields at
all; which hosts the plan uses is the plan's choice, so ``plan`` and ``render`` refuse a plan that uses none of the
described hosts (fuzz30 item 6: render's error named no file and said that no host gave the fields, while unused hosts
did), at ``provisioning.tools``, naming what the used hosts lack and the described hosts left unused.
"""

from __future__ import annotations

from generator.errors import InputError, MultipleInputError
from generator.planner.plan import Plan, Pool
from generator.render.hosts import owned_hosts
from generator.words import listed
from generator.workload.loader import Document
from generator.workload.models import METAL3_HOST_FIELDS, TINKERBELL_HOST_FIELDS, InventoryHost, Workload

#: The host object each host-provisioning tool gets per described host, and the fields it needs of the host.
HOST_OBJECTS = {"metal3": ("BareMetalHost", METAL3_HOST_FIELDS), "tinkerbell": ("Hardware", TINKERBELL_HOST_FIELDS)}
#: Host names a message lists before it counts the rest.
NAMES_SHOWN = 8


def provisioned_hosts(tool: str, pool: Pool, workload: Workload) -> list[InventoryHost]:
    """The pool's inventory hosts ``tool`` (metal3, tinkerbell) renders an object for: those giving its fields."""
    return [host for host in owned_hosts(pool, workload) if not host.missing(HOST_OBJECTS[tool][1])]


def no_host_message(tool: str, plan: Plan, workload: Workload) -> str | None:
    """Why ``tool`` would render no host object for ``plan`` (fuzz30 item 6: validate and plan passed), or None.

    The hosts the plan uses and what each lacks, and the hosts that give every field but the plan leaves unused.
    """
    kind, fields = HOST_OBJECTS[tool]
    if tool not in workload.provisioning.tools or any(provisioned_hosts(tool, pool, workload) for pool in plan.pools):
        return None
    used = [host for pool in plan.pools for host in owned_hosts(pool, workload)]
    lacking: dict[tuple[str, ...], list[str]] = {}
    for host in used:
        lacking.setdefault(host.missing(fields), []).append(host.name)
    said = [
        f"{_names(names)} {'gives' if len(names) == 1 else 'give'} no {listed(missing, 'or')}"
        for missing, names in lacking.items()
    ]
    if not said:
        said = ["the plan uses no owned host named under hardware.inventory[].hosts"]
    taken = {host.name for host in used}
    unused = [h.name for g in workload.hardware.inventory for h in g.hosts if h.name not in taken and not h.missing(fields)]
    if unused:
        said.append(f"the plan puts {_names(unused)}, which {'gives' if len(unused) == 1 else 'give'} them all, on no pool")
    return (
        f"{tool} renders a {kind} for each owned host the plan uses (hardware.inventory[].hosts) that gives "
        f"{listed(fields)}, and none it uses does: {'; '.join(said)} (specgen does not invent them)" + _why_free(unused, plan)
    )


def _why_free(unused: list[str], plan: Plan) -> str:
    """Why the plan leaves ``unused`` hosts free, as its ``inventory-free`` findings say it.

    newuser98: the refusal, which keeps the plan's findings from being printed, said only that they were on no pool,
    not that a 10.2 kW DGX exceeds an 8 kW rack.
    """
    said = [f.message for f in plan.findings if f.code == "inventory-free" and any(name in f.message for name in unused)]
    return f"; why, as the plan's inventory-free finding says: {' / '.join(said)}" if said else ""


def _names(names: list[str]) -> str:
    """Host names as a message lists them, the first NAMES_SHOWN and a count of the rest."""
    if len(names) > NAMES_SHOWN:
        return f"{', '.join(names[:NAMES_SHOWN])} and {len(names) - NAMES_SHOWN:,} more"
    return listed(names)


def provisioning_plan_errors(document: Document, plan: Plan, workload: Workload) -> None:
    """Raise, at ``provisioning.tools``, a host tool with no host of the plan to render (as plan and render refuse it).

    validate refuses the tool where no host gives its fields at all; which hosts are used is the plan's choice.
    """
    errors = [
        InputError(message, document.locate(("provisioning", "tools")))
        for tool in HOST_OBJECTS
        if (message := no_host_message(tool, plan, workload)) is not None
    ]
    if errors:
        raise errors[0] if len(errors) == 1 else MultipleInputError(errors)
