"""``hardware.site_power`` and ``hardware.gpu_power_limits`` where they cannot hold, refused at their fields (newuser115).

Both are facts of the user's own site: a cloud's instances stand in the provider's data centre, whose power the
user neither contracts nor caps. A power limit names a catalog GPU and lies at or below its TDP: ``nvidia-smi -pl``
refuses a limit above the board's Max Power Limit (the TDP on the catalog's datacenter boards), and a limit above it
would not lower the draw the plan counts. Below the board's Min Power Limit nvidia-smi refuses too; the catalog
has no sourced minimum, so none is checked here (the plan's note says to read it with ``nvidia-smi -q -d POWER``).
"""

from __future__ import annotations

from generator import catalog
from generator.catalog.power_limit_tools import power_limit_commands
from generator.errors import InputError
from generator.workload.value_checks import given_in

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from generator.workload.loader import Document
    from generator.workload.models import Hardware


def power_limit_errors(doc: Document, hardware: Hardware) -> list[InputError]:
    """Every error of ``hardware.site_power`` and ``hardware.gpu_power_limits``, each at its field."""
    errors = []
    for field in ("site_power", "gpu_power_limits"):
        if hardware.provider != "baremetal" and given_in(doc, ("hardware", field)):
            why = (
                f"{field} is a limit of your own site's power; {hardware.provider} instances stand in the provider's "
                "data centre, whose power you neither contract nor cap: drop it, or plan bare metal (provider: baremetal)"
            )
            errors.append(InputError(why, doc.locate(("hardware", field))))
    if hardware.provider != "baremetal":
        return errors
    if hardware.fixed is not None and hardware.gpu_power_limits:
        why = (
            "gpu_power_limits is planned for servers the planner sizes, not for hardware.fixed (the machine's "
            "figures are taken as given): drop it, or give the machine's GPUs as an inventory group"
        )
        errors.append(InputError(why, doc.locate(("hardware", "gpu_power_limits"))))
        return errors
    gpus, seen = catalog.gpus(), set()
    for i, limit in enumerate(hardware.gpu_power_limits):
        gpu = gpus.get(limit.gpu)
        if gpu is None:
            why = f"gpu {limit.gpu!r} is not a catalog GPU id (specgen catalog gpus lists them)"
            errors.append(InputError(why, doc.locate(("hardware", "gpu_power_limits", i, "gpu"))))
        elif limit.gpu in seen:
            why = f"gpu {limit.gpu} is given a power limit twice: keep one"
            errors.append(InputError(why, doc.locate(("hardware", "gpu_power_limits", i, "gpu"))))
        elif hardware.gpus and not hardware.inventory and limit.gpu not in hardware.gpus:  # hostile98: set on nothing
            why = (
                f"gpu {limit.gpu} is not among hardware.gpus ({', '.join(hardware.gpus)}): the plan holds none of "
                "its boards, so the limit would be set on nothing; name a GPU the plan may use, or drop the entry"
            )
            errors.append(InputError(why, doc.locate(("hardware", "gpu_power_limits", i, "gpu"))))
        elif not power_limit_commands(gpu.vendor, limit.watts):  # fix204: the plan would count what nothing sets
            why = (
                f"gpu {gpu.id} is a {gpu.vendor} GPU: specgen knows no sourced command that sets its power limit "
                "(it renders nvidia-smi -pl for NVIDIA, rocm-smi --setpoweroverdrive for AMD): drop the entry"
            )
            errors.append(InputError(why, doc.locate(("hardware", "gpu_power_limits", i, "gpu"))))
        elif limit.watts > gpu.tdp_w:
            why = (
                f"watts {limit.watts:g} is above the {gpu.tdp_w:g} W TDP of {gpu.id}: nvidia-smi -pl takes no limit "
                "above the board's maximum, and a limit at the TDP is none; give less, or drop the entry"
            )
            errors.append(InputError(why, doc.locate(("hardware", "gpu_power_limits", i, "watts"))))
        seen.add(limit.gpu)
    return errors
