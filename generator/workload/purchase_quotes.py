"""A workload's own purchase prices (``purchase_prices``): what a vendor quoted for one server bought on bare metal.

newuser61 item 1: ``prices:`` is per node-hour and rents a platform, so a quote could not replace the catalog's
purchase estimate, and a server the catalog lists unpriced (DGX B300, GB300 NVL72) could never be bought under
``max_capex_usd`` or the ``capacity`` objective. Each key names a bare-metal catalog platform, or one configuration
of it (``<platform id>/<GPU id>x<count>``); the planner reads them in :func:`generator.planner.tco.given_purchase`.
"""

from __future__ import annotations

from generator import catalog
from generator.errors import InputError
from generator.workload.loader import Document
from generator.workload.models import Workload


def purchase_price_errors(doc: Document, wl: Workload) -> list[InputError]:
    """Every ``purchase_prices`` key that names no bare-metal configuration to buy, at its key."""
    if not wl.purchase_prices:
        return []
    if wl.hardware.provider != "baremetal":
        return [
            InputError(
                f"purchase_prices price servers bought on bare metal, and hardware.provider is {wl.hardware.provider}: "
                "give a cloud instance's rate under prices: (USD per node-hour), or remove it",
                doc.locate(("purchase_prices",), key=True),
            )
        ]
    errors = []
    platforms = catalog.platforms()
    for key in wl.purchase_prices:
        at = doc.locate(("purchase_prices", key), key=True)
        platform_id, _, configuration = key.partition("/")
        platform = platforms.get(platform_id)
        if platform is None:
            errors.append(InputError(catalog.unknown_id_message("platform", platform_id, platforms), at))
            continue
        if platform.provider != "baremetal":
            errors.append(InputError(f"{platform_id} is an instance type of {platform.provider}, not a server to buy", at))
            continue
        held = [f"{gpu}x{count}" for gpu in platform.gpu_ids for count in platform.gpu_counts]
        gpu_id, _, count = configuration.rpartition("x")
        if configuration and not (gpu_id in platform.gpu_ids and count.isdigit() and int(count) in platform.gpu_counts):
            errors.append(InputError(f"{platform_id} holds {', '.join(held)}, not {configuration}", at))
        elif configuration and count != str(int(count)):
            # hostile81 item 3: 'x04' passed here, but the planner looks the quote up as 'x4' and bought at the catalog's
            errors.append(InputError(f"write the GPU count without leading zeros: {platform_id}/{gpu_id}x{int(count)}", at))
        elif not configuration and len(held) > 1:  # one price for a 1-GPU and a 2-GPU box alike (review39 item 9)
            errors.append(
                InputError(f"{platform_id} holds {', '.join(held)}: key the price by one, as {platform_id}/{held[0]}", at)
            )
        elif platform_id in wl.prices and not any(g.platform == platform_id for g in wl.hardware.inventory):
            # a rate for servers owned is their own all-in cost, beside which the ones bought take the quote
            errors.append(
                InputError(f"{platform_id} is also priced by the hour under prices:, which rents it: give it one of the two", at)
            )
    return errors
