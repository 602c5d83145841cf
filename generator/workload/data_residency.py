"""``kubernetes.data_residency: eu``: the cluster's region held to the EU, at ``kubernetes.location`` (newuser114).

A European company whose data must stay in the EU (GDPR) names a region; until 2026-12 nothing said whether it was
one: ``eu-west-2`` (London) or ``switzerlandnorth`` passed as any region did, and a cloud workload without
``kubernetes.location`` runs where the provider configuration says (priced in us-east-1 / eastus2 / us-central1).
With ``data_residency: eu`` a cloud workload must name its region, and the region must lie in a member state of the
European Union; the error names the field, the region's country and the provider's EU regions.

Each provider's regions and their places are read from its own region list: the region's name says its city, and the
city its country. Regions in Europe outside the EU (the United Kingdom, Switzerland, Norway: GDPR applies in Norway
through the EEA and the UK and Switzerland have adequacy decisions, but neither is the EU) are refused, named so.
Bare metal's servers stand where they are placed: not checked.
"""

from __future__ import annotations

from generator.errors import InputError
from generator.workload.cloud_regions import region_problem
from generator.workload.gke_zone import cluster_region, place_problem
from generator.workload.loader import Document
from generator.workload.models import Workload

WHERE = ("kubernetes",)

#: Per provider: the page its regions and their places are read from (2026-12).
REGION_PAGES = {
    "aws": "https://docs.aws.amazon.com/global-infrastructure/latest/regions/aws-regions.html",
    "azure": "https://learn.microsoft.com/azure/reliability/regions-list",
    "gcp": "https://cloud.google.com/compute/docs/regions-zones",
}

#: The regions in a member state of the EU, by provider: region -> (city or area, country).
EU_REGIONS: dict[str, dict[str, tuple[str, str]]] = {
    "aws": {
        "eu-central-1": ("Frankfurt", "Germany"),
        "eu-north-1": ("Stockholm", "Sweden"),
        "eu-south-1": ("Milan", "Italy"),
        "eu-south-2": ("Aragon", "Spain"),
        "eu-west-1": ("Ireland", "Ireland"),
        "eu-west-3": ("Paris", "France"),
    },
    "azure": {
        "austriaeast": ("Vienna", "Austria"),
        "belgiumcentral": ("Brussels", "Belgium"),
        "francecentral": ("Paris", "France"),
        "francesouth": ("Marseille", "France"),
        "germanynorth": ("Berlin", "Germany"),
        "germanywestcentral": ("Frankfurt", "Germany"),
        "italynorth": ("Milan", "Italy"),
        "northeurope": ("Ireland", "Ireland"),
        "polandcentral": ("Warsaw", "Poland"),
        "spaincentral": ("Madrid", "Spain"),
        "swedencentral": ("Gävle", "Sweden"),
        "swedensouth": ("Staffanstorp", "Sweden"),
        "westeurope": ("Netherlands", "Netherlands"),
    },
    "gcp": {
        "europe-central2": ("Warsaw", "Poland"),
        "europe-north1": ("Hamina", "Finland"),
        "europe-north2": ("Stockholm", "Sweden"),
        "europe-southwest1": ("Madrid", "Spain"),
        "europe-west1": ("St. Ghislain", "Belgium"),
        "europe-west3": ("Frankfurt", "Germany"),
        "europe-west4": ("Eemshaven", "Netherlands"),
        "europe-west8": ("Milan", "Italy"),
        "europe-west9": ("Paris", "France"),
        "europe-west10": ("Berlin", "Germany"),
        "europe-west12": ("Turin", "Italy"),
    },
}

#: Regions in Europe outside the EU, named so in the refusal: region -> (city, country).
EUROPE_OUTSIDE_EU: dict[str, tuple[str, str]] = {
    "eu-central-2": ("Zurich", "Switzerland"),
    "eu-west-2": ("London", "the United Kingdom"),
    "norwayeast": ("Oslo", "Norway (EEA, not EU)"),
    "norwaywest": ("Stavanger", "Norway (EEA, not EU)"),
    "switzerlandnorth": ("Zurich", "Switzerland"),
    "switzerlandwest": ("Geneva", "Switzerland"),
    "uksouth": ("London", "the United Kingdom"),
    "ukwest": ("Cardiff", "the United Kingdom"),
    "europe-west2": ("London", "the United Kingdom"),
    "europe-west6": ("Zurich", "Switzerland"),
}


def location_region(provider: str, location: str) -> str:
    """The region of a cloud's ``kubernetes.location``: a GKE zone's region, any other provider's location itself."""
    return cluster_region(location) if provider == "gcp" else location


def eu_region(provider: str, location: str) -> tuple[str, str] | None:
    """(city, country) of the EU region ``location`` (a GKE zone: its region) of ``provider``; None outside the EU."""
    return EU_REGIONS.get(provider, {}).get(location_region(provider, location))


def residency_errors(doc: Document, wl: Workload) -> list[InputError]:
    """A cloud workload under ``data_residency: eu`` whose ``kubernetes.location`` is missing or outside the EU."""
    settings, provider = wl.kubernetes, wl.hardware.provider
    if settings.data_residency != "eu" or provider not in EU_REGIONS:
        return []
    regions = ", ".join(sorted(EU_REGIONS[provider]))
    location = settings.location
    if location is None:
        return [
            InputError(
                f"eu needs kubernetes.location: without it the cluster runs in the region "
                f"of your {provider} provider configuration, which nothing checks is in the EU (and the plan is "
                f"priced in a US region); name one of {provider}'s EU regions: {regions} ({REGION_PAGES[provider]})",
                doc.locate((*WHERE, "data_residency")),
            )
        ]
    if eu_region(provider, location) is not None:
        return []
    if (place_problem(location) if provider == "gcp" else region_problem(provider, location)) is not None:
        return []  # hostile98: location_errors says what the name is ("WestEurope" is westeurope, an EU region)
    place = EUROPE_OUTSIDE_EU.get(location_region(provider, location))
    where = f"{place[0]}, {place[1]}" if place else "outside the EU"
    return [
        InputError(
            f"'{location}' ({where}) is not an EU region, which kubernetes.data_residency: eu asks for; "
            f"{provider}'s EU regions: {regions} ({REGION_PAGES[provider]})",
            doc.locate((*WHERE, "location")),
        )
    ]
