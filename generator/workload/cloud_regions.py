"""The AWS and Azure regions ``kubernetes.location`` may name (an EKS cluster's region, an AKS cluster's location).

A region opened after these lists were read is refused until it is added here; the message names the page to check.
Google Cloud's regions and zones are :mod:`generator.workload.gke_zone`'s.
"""

from __future__ import annotations

import difflib

#: AWS Regions by code: https://docs.aws.amazon.com/global-infrastructure/latest/regions/aws-regions.html (read
#: 2026-12; commercial Regions, AWS GovCloud (US) and the China Regions). EKS runs in each.
AWS_REGIONS_PAGE = "https://docs.aws.amazon.com/global-infrastructure/latest/regions/aws-regions.html"
AWS_REGIONS = frozenset(
    {
        "af-south-1",
        "ap-east-1",
        "ap-east-2",
        "ap-northeast-1",
        "ap-northeast-2",
        "ap-northeast-3",
        "ap-south-1",
        "ap-south-2",
        "ap-southeast-1",
        "ap-southeast-2",
        "ap-southeast-3",
        "ap-southeast-4",
        "ap-southeast-5",
        "ap-southeast-6",
        "ap-southeast-7",
        "ca-central-1",
        "ca-west-1",
        "cn-north-1",
        "cn-northwest-1",
        "eu-central-1",
        "eu-central-2",
        "eu-north-1",
        "eu-south-1",
        "eu-south-2",
        "eu-west-1",
        "eu-west-2",
        "eu-west-3",
        "il-central-1",
        "me-central-1",
        "me-south-1",
        "mx-central-1",
        "sa-east-1",
        "us-east-1",
        "us-east-2",
        "us-gov-east-1",
        "us-gov-west-1",
        "us-west-1",
        "us-west-2",
    }
)

#: Azure regions by programmatic name: https://learn.microsoft.com/azure/reliability/regions-list (read 2026-12;
#: the public cloud, restricted-access regions included), and the sovereign clouds' below.
AZURE_REGIONS_PAGE = "https://learn.microsoft.com/azure/reliability/regions-list"
AZURE_REGIONS = frozenset(
    {
        "australiacentral",
        "australiacentral2",
        "australiaeast",
        "australiasoutheast",
        "austriaeast",
        "belgiumcentral",
        "brazilsouth",
        "brazilsoutheast",
        "canadacentral",
        "canadaeast",
        "centralindia",
        "centralus",
        "chilecentral",
        "eastasia",
        "eastus",
        "eastus2",
        "francecentral",
        "francesouth",
        "germanynorth",
        "germanywestcentral",
        "indonesiacentral",
        "israelcentral",
        "italynorth",
        "japaneast",
        "japanwest",
        "jioindiacentral",
        "jioindiawest",
        "koreacentral",
        "koreasouth",
        "malaysiawest",
        "mexicocentral",
        "newzealandnorth",
        "northcentralus",
        "northeurope",
        "norwayeast",
        "norwaywest",
        "polandcentral",
        "qatarcentral",
        "southafricanorth",
        "southafricawest",
        "southcentralus",
        "southeastasia",
        "southindia",
        "spaincentral",
        "swedencentral",
        "swedensouth",
        "switzerlandnorth",
        "switzerlandwest",
        "uaecentral",
        "uaenorth",
        "uksouth",
        "ukwest",
        "westcentralus",
        "westeurope",
        "westindia",
        "westus",
        "westus2",
        "westus3",
        # Azure Government (https://learn.microsoft.com/azure/azure-government/documentation-government-overview-dod,
        # regions of the US Government cloud) and Azure operated by 21Vianet
        # (https://learn.microsoft.com/azure/china/resources-developer-guide): sovereign clouds, as AWS's list holds
        # GovCloud and China (fuzz24 item L2)
        "usdodcentral",
        "usdodeast",
        "usgovarizona",
        "usgovtexas",
        "usgovvirginia",
        "chinaeast",
        "chinaeast2",
        "chinaeast3",
        "chinanorth",
        "chinanorth2",
        "chinanorth3",
    }
)

#: Per provider: (its regions, the page that lists them, what the provider calls the cluster's place).
_REGIONS = {
    "aws": (AWS_REGIONS, AWS_REGIONS_PAGE, "an AWS Region (the EKS cluster's, e.g. us-east-1)"),
    "azure": (AZURE_REGIONS, AZURE_REGIONS_PAGE, "an Azure region (the AKS cluster's location, e.g. westeurope)"),
}


def region_problem(provider: str, location: str, google: bool = False) -> str | None:
    """Why ``location`` names no region of ``provider`` (aws or azure); None when it does, or for other providers.

    ``google``: the location names a Google Cloud region or zone (one copied from a GKE workload).
    """
    if provider not in _REGIONS:
        return None
    regions, page, what = _REGIONS[provider]
    if location in regions:
        return None
    written = location.lower().replace(" ", "")  # "US-EAST-1", Azure's display name "East US 2" (fuzz24 item L1)
    if written in regions:
        return f"'{location}' is written {written} (the region's programmatic name, lower case)"
    if provider == "aws" and written[:-1] in regions and written[-1:].isalpha():  # an Availability Zone (item L4)
        return f"'{location}' is an Availability Zone of {written[:-1]}: give the Region, {written[:-1]}"
    other = next((name for name, (elsewhere, _, _) in _REGIONS.items() if location in elsewhere), None)
    close = sorted(difflib.get_close_matches(location, sorted(regions), n=2, cutoff=0.8))
    hint = f" (it is an {'AWS Region' if other == 'aws' else 'Azure region'})" if other else ""
    hint = " (it is a Google Cloud location: copied from a GKE workload?)" if google else hint
    hint = hint or (f" (did you mean {' or '.join(close)}?)" if close else "")
    return f"'{location}' is not {what}{hint}; the regions are listed at {page}"
