"""newuser114: a European insurer's workload: EU-only regions (kubernetes.data_residency) and EU-region prices.

Until 2026-12 every GPU VM price of the catalog was a US region's: a GKE cluster in europe-west4 was priced at
us-central1's rates (the a3-highgpu-8g pool $64,598 a month against europe-west4's $82,155), and no field said the
cluster must stay in the EU: London, Zurich or no region at all passed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import catalog
from generator.errors import MultipleInputError, SpecgenError
from generator.planner.price_region import pricing_region
from generator.workload import load_workload
from generator.workload.cloud_regions import AWS_REGIONS, AZURE_REGIONS
from generator.workload.data_residency import EU_REGIONS, EUROPE_OUTSIDE_EU, eu_region
from generator.workload.gke_zone import GCP_REGIONS
from tests.conftest import REPO
from tests.helpers import run_specgen

EXAMPLE = REPO / "examples" / "eu-insurer-70b.yaml"

WORKLOAD = """version: 1
name: eu-chat
deployments:
  - name: chat
    model: meta-llama/Llama-3.3-70B-Instruct
    inference:
      precision: fp8
      max_context_tokens: 8192
      requests_per_second: 6
hardware:
  provider: {provider}
  gpus: [{gpus}]
kubernetes:
{kubernetes}
outputs: [terraform]
"""


def write(tmp_path: Path, provider: str, kubernetes: str, gpus: str = "h100-sxm5-80gb") -> Path:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(provider=provider, gpus=gpus, kubernetes=kubernetes))
    return path


def errors_of(path: Path) -> list[str]:
    """Every input error loading ``path`` raises, as the CLI prints it (file:line:col: field: message)."""
    try:
        load_workload(str(path))
    except MultipleInputError as exc:
        return [str(e) for e in exc.errors]
    except SpecgenError as exc:
        return [str(exc)]
    return []


# ---------------------------------------------------------------- refusals, at the file, line and field


@pytest.mark.parametrize(
    ("provider", "kubernetes", "where", "said"),
    [
        pytest.param(
            "aws",
            "  location: eu-west-2\n  data_residency: eu",
            ":14:13: kubernetes.location:",
            "'eu-west-2' (London, the United Kingdom) is not an EU region",
            id="aws-london",
        ),
        pytest.param(
            "aws",
            "  location: eu-central-2\n  data_residency: eu",
            ":14:13: kubernetes.location:",
            "'eu-central-2' (Zurich, Switzerland) is not an EU region",
            id="aws-zurich",
        ),
        pytest.param(
            "aws",
            "  location: us-east-1\n  data_residency: eu",
            ":14:13: kubernetes.location:",
            "'us-east-1' (outside the EU) is not an EU region",
            id="aws-us",
        ),
        pytest.param(
            "azure",
            "  location: uksouth\n  data_residency: eu",
            ":14:13: kubernetes.location:",
            "'uksouth' (London, the United Kingdom) is not an EU region",
            id="azure-uk",
        ),
        pytest.param(
            "azure",
            "  location: norwayeast\n  data_residency: eu",
            ":14:13: kubernetes.location:",
            "'norwayeast' (Oslo, Norway (EEA, not EU)) is not an EU region",
            id="azure-norway",
        ),
        pytest.param(
            "azure",
            "  data_residency: eu",
            ":14:19: kubernetes.data_residency:",
            "eu needs kubernetes.location: without it the cluster runs in the region of your azure provider",
            id="azure-no-location",
        ),
        pytest.param(
            "gcp",
            "  location: europe-west2-b\n  data_residency: eu",
            ":14:13: kubernetes.location:",
            "'europe-west2-b' (London, the United Kingdom) is not an EU region",
            id="gcp-london-zone",
        ),
    ],
)
def test_a_region_outside_the_eu_is_refused_at_its_field(
    tmp_path: Path, provider: str, kubernetes: str, where: str, said: str
) -> None:
    path = write(tmp_path, provider, kubernetes)
    found = [e for e in errors_of(path) if "EU" in e]
    assert len(found) == 1, errors_of(path)
    assert found[0].startswith(f"{path}{where} {said}"), found[0]
    assert EU_REGIONS[provider].keys() <= set(found[0].replace(",", " ").replace("(", " ").split()), found[0]


@pytest.mark.parametrize(
    ("provider", "location"),
    [
        ("aws", "eu-central-1"),
        ("aws", "eu-north-1"),
        ("azure", "westeurope"),
        ("azure", "germanywestcentral"),
        ("azure", "swedencentral"),
        ("gcp", "europe-west4-b"),
        ("gcp", "europe-west3"),
    ],
)
def test_an_eu_region_passes(tmp_path: Path, provider: str, location: str) -> None:
    path = write(tmp_path, provider, f"  location: {location}\n  data_residency: eu")
    # fix200: eu-central-1 lists no H100 type, refused for that (tests/test_fix200_residency.py), not for the region
    assert not [e for e in errors_of(path) if "is not an EU region" in e]


def test_bare_metal_is_not_checked(tmp_path: Path) -> None:
    path = write(tmp_path, "baremetal", "  data_residency: eu")
    assert not [e for e in errors_of(path) if "EU" in e]


def test_a_value_other_than_eu_is_a_schema_error(tmp_path: Path) -> None:
    path = write(tmp_path, "aws", "  location: eu-central-1\n  data_residency: eea")
    result = run_specgen("validate", str(path))
    assert result.returncode == 1
    assert f"{path}:15:19: kubernetes.data_residency:" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_eu_lists_name_regions_the_providers_have() -> None:
    known = {"aws": AWS_REGIONS, "azure": AZURE_REGIONS, "gcp": GCP_REGIONS}
    for provider, regions in EU_REGIONS.items():
        assert regions.keys() <= known[provider], provider
    every = AWS_REGIONS | AZURE_REGIONS | GCP_REGIONS
    assert EUROPE_OUTSIDE_EU.keys() <= every
    assert not EUROPE_OUTSIDE_EU.keys() & {r for regions in EU_REGIONS.values() for r in regions}
    assert eu_region("gcp", "europe-west4-b") == ("Eemshaven", "Netherlands")
    assert eu_region("aws", "eu-west-2") is None


# ---------------------------------------------------------------- EU-region prices, each with its source


@pytest.mark.parametrize(
    ("price_id", "usd", "source"),
    [
        ("gcp-a3-highgpu-8g-on-demand-europe-west4", 112.540479175233, "Cyclenerd/google-cloud-pricing-cost-calculator"),
        ("gcp-a3-highgpu-8g-on-demand-europe-west3", 104.43135208789, "Cyclenerd/google-cloud-pricing-cost-calculator"),
        ("aws-p5-48xlarge-on-demand-eu-north-1", 58.8928, "skypilot-org/skypilot-catalog"),
        ("aws-p5en-48xlarge-on-demand-eu-north-1", 67.7267, "dstackai/dstack/pull/4110"),
        ("aws-p4d-24xlarge-on-demand-eu-central-1", 27.43298, "skypilot-org/skypilot-catalog"),
        ("aws-p4de-24xlarge-on-demand-eu-central-1", 34.29122, "skypilot-org/skypilot-catalog"),
    ],
)
def test_an_eu_price_has_its_figure_and_source(price_id: str, usd: float, source: str) -> None:
    price = catalog.prices()[price_id]
    assert price.usd == usd
    assert any(source in s and s.startswith("https://") for s in price.source), price.source


@pytest.mark.parametrize(
    ("provider", "gpus", "location", "region"),
    [
        ("gcp", "h100-sxm5-80gb", "europe-west4-b", "europe-west4"),
        ("gcp", "h100-sxm5-80gb", "europe-west3-c", "europe-west3"),
        ("aws", "h100-sxm5-80gb, h200-sxm-141gb", "eu-north-1", "eu-north-1"),
        # nothing priced in eu-central-1 of H100 / H200, nor in any Azure region outside the US: warned price-region
        ("aws", "h100-sxm5-80gb", "eu-central-1", "us-east-1"),
        ("azure", "h100-sxm5-80gb, h200-sxm-141gb", "germanywestcentral", "eastus2"),
        ("azure", "h100-sxm5-80gb, h200-sxm-141gb", "westeurope", "eastus2"),
        # a workload naming no region stays at the reference region (a3-megagpu-8g's europe-west4 rate left out)
        ("gcp", "h100-sxm5-80gb", None, "us-central1"),
    ],
)
def test_the_pricing_region_of_a_european_cluster(
    tmp_path: Path, provider: str, gpus: str, location: str | None, region: str
) -> None:
    kubernetes = f"  location: {location}" if location else "  cluster_name: eu-chat"
    if provider == "gcp" and location:
        kubernetes += "\n  gcp_project: insurer-ai-prod"
    wl = load_workload(str(write(tmp_path, provider, kubernetes, gpus))).workload
    assert pricing_region(wl) == region


def test_the_example_is_priced_in_europe_west4_and_says_so() -> None:
    result = run_specgen("plan", str(EXAMPLE))
    assert result.returncode == 0, result.stderr
    headline = result.stdout.splitlines()[0]
    assert "$82,155/month" in headline
    assert "rates (the cluster is in" not in headline  # no price-region: priced where it runs
    assert "catalog gcp-a3-highgpu-8g-on-demand-europe-west4 (hour)" in result.stdout
    assert "price-region" not in result.stdout + result.stderr


def test_price_region_says_when_the_clusters_region_has_the_rate_unused(tmp_path: Path) -> None:
    """eu-north-1 prices p5.48xlarge, but 2 of the 5 AWS types an A100 / H100 / H200 workload allows: us-east-1's rates.

    The warning said eu-north-1's prices were "not in the catalog" beside a type whose eu-north-1 rate it holds.
    """
    from generator.planner.price_region import _region_rates

    path = write(tmp_path, "aws", "  location: eu-north-1", "a100-sxm4-40gb, a100-sxm4-80gb, h100-sxm5-80gb, h200-sxm-141gb")
    wl = load_workload(str(path)).workload
    assert pricing_region(wl) == "us-east-1"
    assert _region_rates(wl, "aws-p5-48xlarge", "eu-north-1", "us-east-1") == (
        "whose rate of aws-p5-48xlarge the catalog holds but does not use: it prices 2 of the types the workload "
        "allows in eu-north-1, fewer than half of the 5 it prices in us-east-1, so every option is priced at "
        "us-east-1's rates, to compare"
    )
    assert _region_rates(wl, "aws-p5-4xlarge", "eu-north-1", "us-east-1") == (
        "whose GPU VM prices differ and are not in the catalog"
    )


@pytest.mark.parametrize(
    ("provider", "kubernetes", "constants", "said"),
    [
        pytest.param(
            "baremetal",
            "  data_residency: eu",
            "",
            "constants.energy_usd_per_kwh 0.13 (the US EIA's commercial-sector average); "
            "constants.colocation_usd_per_kw_month 184 (CBRE's North America average asking rent)",
            id="both-defaults",
        ),
        pytest.param(
            "baremetal",
            "  data_residency: eu",
            "constants: {energy_usd_per_kwh: 0.21}\n",
            "constants.colocation_usd_per_kw_month 184 (CBRE's North America average asking rent)",
            id="energy-given",
        ),
        pytest.param(
            "baremetal",
            "  data_residency: eu",
            "constants: {energy_usd_per_kwh: 0.21, colocation_usd_per_kw_month: 250}\n",
            None,
            id="both-given",
        ),
        pytest.param("baremetal", "  cluster_name: colo", "", None, id="no-residency"),
        pytest.param("gcp", "  location: europe-west4\n  data_residency: eu", "", None, id="cloud"),
    ],
)
def test_a_european_colocation_at_us_cost_defaults_says_so(
    tmp_path: Path, provider: str, kubernetes: str, constants: str, said: str | None
) -> None:
    from generator.planner.residency_costs import residency_cost_findings

    path = write(tmp_path, provider, kubernetes)
    path.write_text(path.read_text() + constants)
    found = residency_cost_findings(load_workload(str(path)).workload)
    if said is None:
        assert found == []
        return
    assert [(f.level, f.code, f.path) for f in found] == [("info", "us-cost-defaults", "constants")]
    assert said in found[0].message
