"""A deployment's ``capacity_type``: on-demand (the default) or spot cloud nodes (newuser44 item 3).

A spot deployment's nodes are the cloud's spare capacity, reclaimed at short notice and billed below the on-demand rate
(a rate the cloud changes over time, which the catalog does not hold). It is planned in pools of its own (a pool is one
node group, one capacity type) and rendered as spot: EKS ``capacity_type = "SPOT"``, Karpenter
``karpenter.sh/capacity-type: spot``, GKE ``spot: true``, AKS ``priority = "Spot"``.

Refused, located at the field:

- on bare metal (``hardware.provider: baremetal``, ``hardware.fixed``) and beside owned servers: nothing there is rented;
- on an instance type sold only through reservations (the catalog's ``not_on_demand`` without Spot: AWS p5e's Capacity
  Blocks), pinned by the deployment's ``platform``; the planner leaves such types out of a spot deployment's choices;
- where deployments naming the same ``pool`` ask for different capacity: a named pool is one node group, and a spot
  deployment and an on-demand one cannot share it (give the spot one a pool name of its own).

Priced at the on-demand rate (finding ``spot-priced-on-demand``) unless ``prices:`` gives the type's spot rate under
``<platform id>@spot``; the plain id keeps meaning the on-demand (or committed) rate.
"""

from __future__ import annotations

from collections.abc import Mapping

from generator import catalog
from generator.catalog.records import PlatformSpec
from generator.errors import InputError
from generator.workload.loader import Document
from generator.workload.models import Workload

SPOT = "spot"
#: What a ``prices:`` key adds to a platform id to give its spot rate.
SPOT_SUFFIX = "@spot"


def spot_key(platform_id: str) -> str:
    """The ``prices:`` key of ``platform_id``'s spot rate."""
    return f"{platform_id}{SPOT_SUFFIX}"


def given_rate(prices: Mapping[str, float], platform_id: str, spot: bool) -> tuple[float, str] | None:
    """The workload's rate for ``platform_id`` nodes and the ``prices:`` key it is under, or None where none is given.

    A spot node takes the ``@spot`` rate where given, else the plain (on-demand) one; an on-demand node the plain one.
    """
    if spot and (key := spot_key(platform_id)) in prices:
        return prices[key], key
    if platform_id in prices:
        return prices[platform_id], platform_id
    return None


def sold_as_spot(platform: PlatformSpec) -> bool:
    """Whether the cloud sells ``platform`` as spot capacity: every on-demand type, and those sold through Spot VMs."""
    if platform.provider == "baremetal":
        return False
    return platform.not_on_demand is None or "spot" in platform.not_on_demand.lower()


def capacity_type_errors(doc: Document, wl: Workload) -> list[InputError]:
    """Spot deployments the workload cannot have, and ``@spot`` prices of what is not a cloud instance type."""
    errors: list[InputError] = []
    hw = wl.hardware
    named: dict[str, tuple[str, str]] = {}  # pool -> (capacity type, the first deployment naming it)
    for i, dep in enumerate(wl.deployments):
        where = doc.locate(("deployments", i, "capacity_type"))
        spot = dep.capacity_type == SPOT
        if spot and hw.fixed is not None:
            errors.append(InputError("capacity_type spot does not go with hardware.fixed: the one machine is yours", where))
        elif spot and hw.provider == "baremetal":
            errors.append(
                InputError(
                    "capacity_type spot is a cloud's capacity (hardware.provider aws, gcp or azure): on bare metal "
                    "servers are bought, owned or rented whole",
                    where,
                )
            )
        elif spot and hw.inventory:
            why = "capacity_type spot does not go with hardware.inventory: owned servers are not rented"
            errors.append(InputError(why, where))
        elif spot and dep.platform is not None:
            platform = catalog.platforms().get(dep.platform)
            if platform is not None and not sold_as_spot(platform):
                errors.append(
                    InputError(
                        f"capacity_type spot: {platform.id} is sold through {platform.not_on_demand} alone, not as spot "
                        "capacity; drop platform or capacity_type",
                        where,
                    )
                )
        if dep.pool is None:
            continue
        first = named.setdefault(dep.pool, (dep.capacity_type, dep.name))
        if first[0] != dep.capacity_type:
            given = "capacity_type" in doc.data["deployments"][i]
            where = doc.locate(("deployments", i, "capacity_type" if given else "pool"))
            errors.append(
                InputError(
                    f"capacity_type {dep.capacity_type}: deployment {first[1]} names pool {dep.pool} as {first[0]}, and a "
                    "pool is one node group of one capacity type: give this deployment a pool of its own",
                    where,
                )
            )
    for key in wl.prices:
        if not key.endswith(SPOT_SUFFIX):
            continue
        base = key.removesuffix(SPOT_SUFFIX)
        platform = catalog.platforms().get(base)
        at = doc.locate(("prices", key), key=True)
        if platform is None:
            errors.append(InputError(catalog.unknown_id_message("platform", base, catalog.platforms()), at))
        elif not sold_as_spot(platform):
            why = "a bare-metal server" if platform.provider == "baremetal" else f"sold through {platform.not_on_demand} alone"
            errors.append(InputError(f"{base} is {why}, not as spot capacity: no spot rate prices it", at))
    return errors
