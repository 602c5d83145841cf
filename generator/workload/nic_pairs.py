"""The one rule of a server's stated NICs: each NIC id with its count, the fabric NICs a server takes.

An owned catalog platform's group (``hardware.inventory[]``, :mod:`~generator.workload.owned_nics`) and a custom server
(``hardware.inventory[].custom``, :mod:`~generator.workload.custom_servers`) both give a GPU fabric NIC and a front-end
NIC, each as an id and a count per server. Each problem is located at the field that causes it:

* an id the catalog lacks: at the NIC field;
* a NIC named without a count: at the count where one of 0 is given, else at the NIC (no count field to point at);
* a count without a NIC: at the count (``fabric_nic_count: 0`` without a NIC says the servers have no GPU fabric);
* more fabric NICs than the server takes (one a GPU; one in a workstation tower): at the count;
* a cloud provider's virtual NIC (AWS EFA, GCP's gVNIC for GPUs: a NIC only its cloud's instances have), which no
  owned server can hold: at the NIC field, naming the NICs an owned server may have (fix198 item 3);
* an InfiniBand-only NIC as the front end, which carries the servers' IP over Ethernet (SSH, Kubernetes, the
  API): at the front-end NIC (fuzz34 item 6). A fabric NIC without GPUDirect RDMA is possible but slow: a warning of
  the plan (:func:`~generator.planner.owned_build.slow_fabric_findings`, :func:`slow_fabric`), not an error here.

A count not given is None (a custom server's as an owned group's, not 0). Without one, an owned catalog platform's
front end takes one NIC (its group's ``frontend_nic`` alone replaces the catalog's NIC:
:func:`~generator.planner.custom.owned_catalog_platform`); a custom server, described by all its parts, says how many.
"""

from __future__ import annotations

from generator import catalog
from generator.named_tuple import NamedTuple
from generator.workload.models import CustomServer, InventoryGroup

Path = tuple[str | int, ...]

#: The NIC fields a server states: its GPU fabric's and its front end's.
NIC_FIELDS = ("fabric_nic", "fabric_nic_count", "frontend_nic", "frontend_nic_count")
#: What a fabric count of 0 without a NIC says.
NO_FABRIC = "the servers have no GPU fabric"


def slow_fabric(nic_id: str) -> bool:
    """Whether a catalog NIC, taken as a GPU fabric, moves GPU memory without GPUDirect RDMA (through host memory)."""
    nic = catalog.nics().get(nic_id)
    return nic is not None and not nic.gpudirect_rdma


def cloud_only_nics() -> frozenset[str]:
    """The catalog's NICs that only cloud instances have: on a platform of a cloud provider, on no bare-metal one."""
    on: dict[bool, set[str]] = {True: set(), False: set()}
    for platform in catalog.platforms().values():
        on[platform.provider == "baremetal"].update(n for n in (platform.fabric_nic_id, platform.frontend_nic_id) if n)
    return frozenset(on[False] - on[True])


def _ethernet_nics() -> str:
    """The catalog's NICs that can carry an owned server's front end (not InfiniBand-only, not a cloud's), listed."""
    cloud = cloud_only_nics()
    return ", ".join(sorted(i for i, n in catalog.nics().items() if n.protocol != "infiniband" and i not in cloud))


class FabricRoom(NamedTuple):
    """The most GPU fabric NICs one server takes, and the server it is said of."""

    server: str
    most: int
    workstation: bool


def nic_pair_errors(
    at: Path, stated: InventoryGroup | CustomServer, room: FabricRoom | None, frontend_default: bool = False
) -> list[tuple[Path, str]]:
    """(field path, message) for each problem of the NIC fields of ``stated``, the mapping at ``at``.

    ``room``: the fabric NICs the server takes, None where unknown (an unknown platform or GPU, refused at its own
    field). ``frontend_default``: a front-end NIC without its count is one NIC (an owned catalog platform's).
    """
    nics = catalog.nics()
    out: list[tuple[Path, str]] = []
    roles = (
        ("fabric_nic", "fabric_nic_count", "fabric", stated.fabric_nic, stated.fabric_nic_count),
        ("frontend_nic", "frontend_nic_count", "front-end", stated.frontend_nic, stated.frontend_nic_count),
    )
    for nic_field, count_field, role, nic, count in roles:
        fabric = role == "fabric"
        if nic is not None and nic not in nics:
            out.append(((*at, nic_field), catalog.unknown_id_message("NIC", nic, nics)))
        elif nic is not None and nic in (cloud := cloud_only_nics()):
            # fix198 item 3: aws-efa-400g was accepted on an owned server, its fabric sized at EFA's 400 Gb/s
            allowed = sorted(i for i in nics if i not in cloud and (fabric or nics[i].protocol != "infiniband"))
            out.append(
                (
                    (*at, nic_field),
                    f"{nic_field} {nic} is a cloud provider's virtual NIC ({nics[nic].name}), which only that cloud's "
                    f"instances have, not an owned server; name the NIC the servers have, one of {', '.join(allowed)}",
                )
            )
        elif nic is not None and not count and (count is not None or fabric or not frontend_default):
            least = f"at least 1; 0 with no fabric_nic: {NO_FABRIC}" if fabric else "at least 1"
            out.append(
                (
                    (*at, nic_field if count is None else count_field),
                    f"{nic_field} {nic} is given: say how many each server has in {count_field} ({least})",
                )
            )
        elif not fabric and nic is not None and nics[nic].protocol == "infiniband":
            out.append(
                (
                    (*at, nic_field),
                    f"frontend_nic {nic} is an InfiniBand-only NIC: the front end carries the servers' IP over Ethernet "
                    "(SSH, Kubernetes, the API), so name an Ethernet NIC (one of "
                    f"{_ethernet_nics()}); an InfiniBand NIC goes in fabric_nic",
                )
            )
        elif nic is None and count:
            none = f" (0: {NO_FABRIC})" if fabric else ""
            out.append(((*at, count_field), f"{count} {role} NIC(s) counted but no {nic_field} named{none}"))
    count = stated.fabric_nic_count
    if room is not None and count and count > room.most:
        holds = (
            "a workstation tower has the PCIe lanes for one"
            if room.workstation
            else f"one a GPU, {room.most} in its {room.most}-GPU build"
        )
        out.append(
            ((*at, "fabric_nic_count"), f"{count} fabric NICs: a {room.server} server takes at most {room.most} ({holds})")
        )
    return out
