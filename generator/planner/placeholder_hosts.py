"""The names a bare-metal plan gives the hosts it buys: ``<pool>-NN`` (moved from generator.render.hosts, fix171).

The planner names them too where it says which GPUs of each host the services sharing a pool take
(:mod:`generator.planner.host_gpus`): the same names Ansible's hosts.yml.example gives them, with their
``specgen_replicas``.
"""

from __future__ import annotations

from generator.planner.plan import Pool
from generator.workload.models import Workload


def placeholder_names(pool: Pool, workload: Workload) -> list[str]:
    """``<pool>-NN`` with dashes (valid DNS labels), one per host of the pool the inventory does not name.

    They number on from the pool's owned hosts (``-03`` after two owned ones), as they always have, so that a name
    stays with its machine from one render to the next. A number whose name an owned host of the inventory has is
    skipped: that machine is another, and one name would stand for both.
    """
    base = pool.name.replace("_", "-")
    width = max(2, len(str(pool.hosts)))
    taken = {host.name for group in workload.hardware.inventory for host in group.hosts}
    names: list[str] = []
    number = len(pool.owned_hosts)
    while len(names) < pool.hosts - len(pool.owned_hosts):
        number += 1
        if (name := f"{base}-{number:0{width}d}") not in taken:
            names.append(name)
    return names
