"""What the ``price-region`` warning says of the cluster's region's offer of a pool's type, outside GKE (newuser109).

The clause said "the catalog records no region's offer of an instance type" on every cloud, which is untrue on AWS and
Azure since fix177 (``gpu_regions.json``): an eastus2-priced pool in westus3 is a type the list names there, or one
``gpu-region-unlisted`` warns, and one in westeurope is one no list covers (``gpu-region-unchecked`` gives the check).
"""

from __future__ import annotations

from generator.catalog.gpu_regions import NOT_OFFERED, OFFERED, region_offer, region_source

#: The clouds whose regions ``gpu_regions.json`` checks.
CHECKED_CLOUDS = frozenset({"aws", "azure"})


def region_offer_clause(provider: str, platform_id: str, machine: str, region: str) -> str:
    """Whether ``region`` offers ``machine``, as the catalog knows it, closing the ``price-region`` message."""
    if provider in CHECKED_CLOUDS:
        offer = region_offer(platform_id, region)
        if offer == OFFERED:
            return f"{region} offers {machine} (generator/catalog/gpu_regions.json: {region_source(platform_id)})"
        if offer == NOT_OFFERED:
            return f"the catalog's region list for {machine} does not name {region} (warning gpu-region-unlisted)"
        return (
            f"whether {region} offers {machine} at all is not checked (no region list of the catalog covers it: "
            "info gpu-region-unchecked gives the command that checks it before applying)"
        )
    return (
        f"whether {region} offers {machine} at all is not checked (the catalog records no region's offer of an "
        "instance type: check the provider's list of products by region before applying)"
    )
