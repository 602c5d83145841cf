"""Where an AKS user reads a VM size's list price in the cluster's own region (newuser109).

The catalog prices Azure's GPU sizes in eastus2 alone; ``price-region`` asked a westeurope user for the size's USD per
node-hour there without saying where Azure publishes it. Azure's Retail Prices API answers one size in one region
unauthenticated (https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices), in USD
unless ``currencyCode`` asks otherwise; its Consumption rows hold the Linux and Windows meters and the Spot and Low
Priority ones of the size, so the message names the row to take.
"""

from __future__ import annotations

from urllib.parse import quote

RETAIL_PRICES = "https://prices.azure.com/api/retail/prices"


def retail_price_url(region: str, vm_size: str) -> str:
    """The Retail Prices API query for ``vm_size``'s pay-as-you-go meters in ``region``."""
    query = f"armRegionName eq '{region}' and armSkuName eq '{vm_size}' and priceType eq 'Consumption'"
    return f"{RETAIL_PRICES}?$filter={quote(query, safe='')}"


def retail_price_hint(region: str, vm_size: str) -> str:
    """Where to read ``vm_size``'s on-demand Linux rate in ``region``, as a clause of the ``price-region`` warning."""
    return (
        f"Azure's Retail Prices API lists it, {retail_price_url(region, vm_size)}: the row whose productName has no "
        "Windows and whose meterName has no Spot or Low Priority"
    )
