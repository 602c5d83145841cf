"""The GPU fabric a replica or training job counts on between servers rented on bare metal (newuser91 item 1).

A server rented from a provider (a catalog rental record such as Lambda's on-demand GH200, or a rate under
``prices:``) is the provider's machine: nobody fits NICs to it and nothing about it is capex. Where the plan spans a
replica or a job over such servers it gives each the platform's fabric NICs, as it would a server bought; the rental's
price record states no fabric between its instances, so the plan holds only where the provider joins them so. The
finding says that, instead of ``fabric-unpriced``'s "fitted ... not in capex", which reads as a purchase.
"""

from __future__ import annotations

from generator.planner.plan import Finding, Pool
from generator.planner.tco import rented_at_given_rates, server_rent
from generator.workload.models import Workload

#: The finding on a rented pool given GPU-fabric NICs.
RENTED_FABRIC = "fabric-rented-unstated"


def rented_fabric_finding(wl: Workload, pool: Pool, nics: str, field: str) -> Finding:
    """The ``fabric-rented-unstated`` warning for ``pool``, rented, whose nodes the plan gives fabric NICs ``nics``.

    A pool rented at the workload's own ``prices:`` rate names no catalog record or provider (the rate and the
    provider are the user's, as :func:`generator.render.rented.pool_rent` says). ``field`` is the first deployment of
    the pool (the one whose layout spans its servers), so the warning has a place.
    """
    node = pool.node
    given = node.platform_id in rented_at_given_rates(wl)
    rent = None if given else server_rent(node.platform_id, node.gpu_id, node.gpus)
    who = rent.rented_from if rent is not None and rent.rented_from else "your provider"
    record = f" (catalog price {rent.id})" if rent is not None else f" (prices: {node.platform_id})" if given else ""
    return Finding(
        "warning",
        RENTED_FABRIC,
        f"pool {pool.name}: its {pool.nodes} server(s) are rented from {who}{record}, and the plan joins them by a GPU "
        f"fabric ({nics} each) that the rental does not state: a rented server's NICs and network are the provider's "
        f"(no capex of yours, nothing to fit); check that {who} links these servers so before spanning a replica or a "
        "job over them, or keep each replica on one server (parallelism)",
        field,
    )
