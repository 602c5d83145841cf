"""The labels a pool's registered hosts carry (Metal3 BareMetalHosts, Tinkerbell Hardware) and the selector that finds them.

Cluster API's bare-metal providers claim any available host their template selects; a template that selects its own
pool's hosts keeps one pool's Machines off another pool's servers (newuser36 item 2).
"""

from __future__ import annotations

from generator.planner.plan import Pool
from generator.render.kube_objects import dns_name

#: The pool labels a registered host carries: what the machine is and the pool the plan puts it on.
HOST_LABELS = ("specgen.dev/pool", "specgen.dev/gpu", "specgen.dev/platform")


def host_labels(pool: Pool) -> dict[str, str]:
    """A pool's host labels: its pool, GPU and platform, as its nodes are labelled."""
    return {key: value for key, value in sorted(pool.labels) if key in HOST_LABELS}


def host_selector(pool: Pool) -> dict[str, str]:
    """The ``matchLabels`` that select a pool's hosts only.

    A Metal3MachineTemplate's ``spec.template.spec.hostSelector``, a TinkerbellMachineTemplate's
    ``spec.template.spec.hardwareAffinity.required[].labelSelector``: without one, CAPM3 claims any available
    BareMetalHost of the namespace and CAPT any unclaimed Hardware, another pool's server included.
    """
    return {"specgen.dev/pool": dns_name(pool)}


def labels_text(labels: dict[str, str]) -> str:
    """``k=v,k=v``, as ``kubectl get -l`` takes a selector."""
    return ",".join(f"{key}={value}" for key, value in labels.items())
