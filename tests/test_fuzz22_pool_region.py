"""fuzz22 items 4, 13, 3 and 7: a named pool's name, one short GKE name, the price region, GKE locations.

Item 4: a deployment joining ``pool: web`` on another GKE machine type renamed the pool already there
(``web_l4_24gb`` -> ``web_gcp_g2_standard_4_l4_24gb``: 2 nodes deleted, 2 created) and the diff advised setting
``pool:``, already set; with an 18-character pool name the grown name passed GKE's 40 characters and the file was
refused. The pool's first deployment keeps ``<pool>_<gpu>``; the newcomer's name says its servers, shortened if long.

Item 3: a pinned type the user prices (``prices:``) moved the whole Azure plan to eastus, where the catalog prices 1
of the 10 types allowed; the finding said eastus "prices the most of the types allowed".

Item 7: ``mars-north9-a`` and ``us-central1-z`` were accepted as GKE locations and rendered into Terraform.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.api import plan_file
from generator.errors import InputError
from generator.fleet_diff import diff_plans, markdown_diff, replacement_lines
from generator.planner.price_region import pricing_region
from generator.workload import load_workload
from generator.workload.gke_zone import GCP_REGIONS, place_problem

CHAT = """\
  - name: chat
    model: Qwen/Qwen2.5-7B-Instruct
    pool: {pool}
    inference: {{max_context_tokens: 8192, avg_input_tokens: 1000, avg_output_tokens: 200, requests_per_second: 1}}
"""
#: On two L4s a replica (TP2): the planner puts it on g2-standard-24 servers, chat stays on g2-standard-4.
CHAT2 = """\
  - name: chat2
    model: meta-llama/Llama-3.1-8B-Instruct
    pool: {pool}
    inference: {{max_context_tokens: 8192, avg_input_tokens: 1000, avg_output_tokens: 200, requests_per_second: 5}}
    parallelism: {{tp: 2}}
"""
GKE = "hardware: {provider: gcp, gpus: [l4-24gb]}\nkubernetes: {gcp_project: acme-inference, location: us-central1-a}\n"


def workload(tmp_path: Path, name: str, *deployments: str, pool: str = "web", tail: str = GKE) -> str:
    """A workload file of ``deployments`` (templates taking ``pool``), written under ``tmp_path``."""
    path = tmp_path / f"{name}.yaml"
    body = "".join(d.format(pool=pool) for d in deployments)
    path.write_text(f"version: 1\nname: gk\ndeployments:\n{body}{tail}", encoding="utf-8")
    return str(path)


def plan_of(path: str) -> dict[str, Any]:
    plan: dict[str, Any] = plan_file(path)[1].to_dict()
    return plan


def pools_of(plan: dict[str, Any]) -> dict[str, str]:
    """Deployment -> the pool it runs in."""
    return {str(d["name"]): str(d["pool"]) for d in plan["deployments"]}


# ---------------------------------------------------------------- item 4: a named pool keeps its name


@pytest.mark.parametrize(
    ("pool", "chat_pool", "newcomer_pool"),
    [
        pytest.param("web", "web_l4_24gb", "web_gcp_g2_standard_24_l4_24gb", id="short-name"),
        # 45 characters with the platform: shortened with a hash (nobody chose it), not refused
        pytest.param(
            "inference-pool-abc", "inference_pool_abc_l4_24gb", "inference_pool_abc_gcp_g2_stand_4f98f08f", id="gke-limit"
        ),
    ],
)
def test_a_deployment_joining_on_other_servers_leaves_the_pool_its_name(
    tmp_path: Path, pool: str, chat_pool: str, newcomer_pool: str
) -> None:
    old = plan_of(workload(tmp_path, "old", CHAT, pool=pool))
    new = plan_of(workload(tmp_path, "new", CHAT, CHAT2, pool=pool))
    assert pools_of(old) == {"chat": chat_pool}
    assert pools_of(new) == {"chat": chat_pool, "chat2": newcomer_pool}
    assert len(newcomer_pool) <= 40
    (said,) = [f for f in new["findings"] if f["code"] == "pool-other-servers"]
    assert said["path"] == "deployments[1].pool"
    assert f"{chat_pool}, holding the pool's first deployment, keeps the name" in said["message"]
    assert f"chat2 on gcp-g2-standard-24 servers (2 GPUs each) is pool {newcomer_pool}" in said["message"]
    # the diff: a pool added, none replaced (was: 2 nodes deleted and 2 created)
    result = diff_plans(old, new)
    assert result["replacements"] == []
    assert "Node pools replaced" not in markdown_diff(result)


def test_the_first_deployment_in_the_file_keeps_the_plain_name(tmp_path: Path) -> None:
    """The rule is file order: put the newcomer first and it is the one named ``<pool>_<gpu>``."""
    plan = plan_of(workload(tmp_path, "w", CHAT2, CHAT))
    assert pools_of(plan) == {"chat2": "web_l4_24gb", "chat": "web_gcp_g2_standard_4_l4_24gb"}


def test_a_named_deployment_is_said_in_spec_json(tmp_path: Path) -> None:
    """``details.named_pool``: what the diff reads to know whom to advise to set ``pool:``."""
    plan = plan_of(workload(tmp_path, "w", CHAT, CHAT2.replace("    pool: {pool}\n", "")))
    assert {d["name"]: d["details"].get("named_pool") for d in plan["deployments"]} == {"chat": "web", "chat2": None}


def _renamed(unnamed: list[str] | None) -> dict[str, Any]:
    """A replacement of a pool by another name on the same hardware; ``unnamed`` None: a spec.json from before."""
    hardware = {"provider": "gcp", "platform": "gcp-g2-standard-4", "gpu": "l4-24gb"}
    entry = {
        **hardware,
        "was": hardware,
        "removed": [{"pool": "a_l4_24gb", "nodes": 2}],
        "added": [{"pool": "b_l4_24gb", "nodes": 2}],
        "nodes_deleted": 2,
        "nodes_created": 2,
        "deployments": ["chat"],
    }
    return entry if unnamed is None else {**entry, "unnamed": unnamed}


@pytest.mark.parametrize(
    ("unnamed", "advised"),
    [
        pytest.param(["chat"], True, id="no-pool-field-advised"),
        pytest.param(None, True, id="old-spec-json-advised"),
        pytest.param([], False, id="pool-field-set-not-advised"),
    ],
)
def test_the_diff_advises_setting_pool_only_where_none_is_set(unnamed: list[str] | None, advised: bool) -> None:
    (headline, *_) = replacement_lines([_renamed(unnamed)])
    assert ("set `pool:` on the deployments" in headline) is advised
    assert ("these deployments set `pool:`" in headline) is not advised


# ---------------------------------------------------------------- item 3: a priced pin chooses no region

AZURE = """\
version: 1
name: az
deployments:
  - name: old
    model: Qwen/Qwen2.5-7B-Instruct
    platform: azure-standard-nd96asr-v4
    inference: {max_context_tokens: 8192, requests_per_second: 2}
  - name: new
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {max_context_tokens: 8192, requests_per_second: 20}
hardware: {provider: azure}
"""


@pytest.mark.parametrize(
    ("prices", "elsewhere", "basis"),
    [
        # the pin is priced by the user: every type is priced in eastus2 and ranked by cost
        pytest.param("prices: {azure-standard-nd96asr-v4: 20}\n", False, None, id="priced-pin"),
        # the pin has only a catalog price, in eastus: it still comes first, and the finding says so with the counts;
        # the types priced in eastus2 alone rank after the priced ones (newuser28 item 8), not by power
        pytest.param(
            "",
            True,
            "eastus prices the type deployments pin (azure-standard-nd96asr-v4), which come first; it prices 1 of the "
            "16 types allowed; eastus2 prices 15",
            id="catalog-pin",
        ),
    ],
)
def test_a_pin_the_user_prices_does_not_choose_the_region(
    tmp_path: Path, prices: str, elsewhere: bool, basis: str | None
) -> None:
    path = tmp_path / "az.yaml"
    path.write_text(AZURE + prices, encoding="utf-8")
    codes = {f["code"]: f["message"] for f in plan_of(str(path))["findings"]}
    assert "objective-fallback" not in codes
    assert ("priced-elsewhere-ranked" in codes) is elsewhere
    assert pricing_region(load_workload(str(path)).workload) == ("eastus" if elsewhere else "eastus2")
    if basis is None:
        assert "priced-elsewhere" not in codes
    else:
        assert basis in codes["priced-elsewhere"]
        assert "the most of the types allowed" not in codes["priced-elsewhere"]


# ---------------------------------------------------------------- item 7: GKE locations that exist


@pytest.mark.parametrize(
    ("place", "problem"),
    [
        pytest.param("us-central1-a", None, id="zone"),
        pytest.param("us-central1-f", None, id="zone-f"),
        pytest.param("europe-west4", None, id="region"),
        pytest.param("africa-south1-b", None, id="region-the-catalog-does-not-price"),
        pytest.param("mars-north9-a", "mars-north9 is not a Google Cloud region;", id="made-up-region"),
        pytest.param("us-centrl1-a", "us-centrl1 is not a Google Cloud region (did you mean us-central1?)", id="typo"),
        pytest.param("us-central1-z", "'us-central1-z' is not a zone of us-central1", id="made-up-zone"),
    ],
)
def test_a_place_must_be_a_google_cloud_region_or_zone(place: str, problem: str | None) -> None:
    said = place_problem(place)
    assert said is None if problem is None else (said is not None and problem in said)
    if said is not None:
        assert "https://cloud.google.com/compute/docs/regions-zones" in said


def test_the_region_list_holds_every_region_the_catalog_prices() -> None:
    from generator import catalog

    gcp = {p.id for p in catalog.platforms().values() if p.provider == "gcp"}
    priced = {r.region for r in catalog.prices().values() if r.platform_id in gcp and r.region}
    assert priced and priced <= GCP_REGIONS


@pytest.mark.parametrize(
    ("location", "zone", "where"),
    [
        pytest.param("mars-north9-a", None, "w.yaml:11:13: kubernetes.location", id="location"),
        pytest.param("us-central1", "us-central1-z", "w.yaml:12:9: kubernetes.zone", id="zone"),
    ],
)
def test_a_made_up_place_is_refused_at_its_line(tmp_path: Path, location: str, zone: str | None, where: str) -> None:
    kubernetes = f"kubernetes:\n  gcp_project: acme-inference\n  location: {location}\n"
    kubernetes += f"  zone: {zone}\n" if zone else ""
    path = workload(tmp_path, "w", CHAT, tail=f"hardware: {{provider: gcp}}\n{kubernetes}")
    with pytest.raises(InputError) as refused:
        load_workload(path)
    assert where in str(refused.value)


@pytest.mark.parametrize("provider", ["azure"])  # every AWS type is priced in us-east-1: no finding
def test_the_region_finding_says_how_another_region_is_priced(tmp_path: Path, provider: str) -> None:
    """newuser26 item 5: "the workload names no region" read as if an AWS or Azure region could be named; now one can,
    kubernetes.location, and the finding names it."""
    path = tmp_path / "w.yaml"
    path.write_text(
        "version: 1\nname: demo\ndeployments:\n  - name: chat\n    model: meta-llama/Llama-3.1-8B-Instruct\n"
        f"    inference: {{max_context_tokens: 8192, requests_per_second: 2}}\nhardware:\n  provider: {provider}\n"
    )
    found = [f.message for f in plan_file(str(path))[1].findings if f.code == "priced-elsewhere"]
    assert found and "(kubernetes.location names no region; eastus2 prices the most of the types allowed" in found[0], found
