"""newuser63 (an SRE's availability review), items 4, 5, 6 and the label part of 9.

- item 6: bare metal's ``model_load_s`` reads the checkpoint's files (a 16-bit one quantized online to FP8 at its
  16-bit size) at ``nvme_efficiency`` of the drives' rate, not the FP8 weights at the drives' full rate;
- item 5: a cloud plan times the checkpoint's download to a new node over the interface that reaches object storage
  (``model_download_s``, info ``cold-start-time``), and ``serving-on-spot`` carries it;
- item 4: GKE node pools upgrade with a surge node (maxSurge 1, maxUnavailable 0), and the findings say so;
- item 9: a bare-metal pool in one rack joins with the node label ``specgen.dev/rack``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from generator import catalog
from generator.api import render_file
from generator.planner import plan_workload
from generator.planner.cold_start import download_link
from generator.planner.plan import Plan
from generator.render.kubeadm import RACK_LABEL
from generator.sizing.constants import Constants
from generator.workload import load_workload

#: The 8B chat model: a BF16 checkpoint (16.06 GB), 8.03 GB of weights served in FP8.
CHAT = """\
version: 1
name: w
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    {capacity}inference:
      precision: {precision}
      max_context_tokens: 8192
      avg_input_tokens: 1000
      avg_output_tokens: 300
      requests_per_second: {rate}{more}
hardware:
{hardware}
{extra}"""


def _plan(tmp_path: Path, precision: str = "fp8", hardware: str = "  provider: baremetal\n  gpus: [h100-sxm5-80gb]",
          extra: str = "", rate: float = 2, capacity: str = "") -> Plan:  # fmt: skip
    path = tmp_path / "w.yaml"
    path.write_text(CHAT.format(precision=precision, hardware=hardware, extra=extra, rate=rate, capacity=capacity, more=""))
    return plan_workload(load_workload(str(path)))


def _details(plan: Plan) -> dict[str, Any]:
    (dep,) = plan.deployments
    return dict(dep.details)


# ---------------------------------------------------------------------------------------------- item 6: bare metal


@pytest.mark.parametrize(
    ("precision", "extra", "efficiency"),
    [
        pytest.param("fp8", "", 0.8, id="fp8-quantized-online-reads-the-bf16-files"),
        pytest.param("bf16", "", 0.8, id="bf16-reads-its-own-files"),
        pytest.param("fp8", "constants: {nvme_efficiency: 0.4}", 0.4, id="nvme-efficiency-applies"),
    ],
)
def test_bare_metal_load_reads_the_checkpoints_files_at_nvme_efficiency(
    precision: str, extra: str, efficiency: float, tmp_path: Path
) -> None:
    """Item 6: 72.7 GB of FP8 weights at 7.0 GB/s said 10.4 s; the node reads the 141.1 GB BF16 files at 0.8 x 7.0."""
    plan = _plan(tmp_path, precision, extra=extra)
    details = _details(plan)
    (pool,) = plan.pools
    files = details["model_files_bytes"]
    assert files > 15e9  # the BF16 checkpoint's 16 GB, whatever is served
    if precision == "fp8":
        assert details["quantized_online_from"] == "bf16" and files > 1.7 * details["weights_bytes"]
    else:
        assert files == details["weights_bytes"]
    expected = files / (pool.node.nvme_read_gb_per_s / pool.node.hosts * efficiency * 1e9)
    assert details["model_load_s"] == pytest.approx(expected, abs=0.06)
    assert "model_download_s" not in details  # bare metal reads its own drives


# ---------------------------------------------------------------------------------------------- item 5: clouds


@pytest.mark.parametrize(
    ("platform", "gbps"),
    [
        pytest.param("aws-p5-48xlarge", 100, id="aws-p5-network-card-0-of-32"),
        pytest.param("aws-p6-b200-48xlarge", 400, id="aws-p6-network-card-0-of-8"),
        pytest.param("aws-g6e-xlarge", 20, id="aws-no-efa-instance-network"),
        pytest.param("aws-g6e-12xlarge", 100, id="aws-one-efa-card-is-the-network"),
        pytest.param("gcp-a3-highgpu-8g", 200, id="gcp-a3-primary-gvnic"),
        pytest.param("gcp-a4-highgpu-8g", 200, id="gcp-a4-first-of-two-gvnics"),
        pytest.param("gcp-g2-standard-24", 32, id="gcp-no-gpu-nics"),
        pytest.param("azure-standard-nd96isr-h100-v5", 80, id="azure-nd-front-end-ethernet-not-infiniband"),
        pytest.param("azure-standard-nc40ads-h100-v5", 40, id="azure-nc-network"),
        pytest.param("dgx-h100", None, id="bare-metal-none"),
    ],
)
def test_the_download_goes_over_the_interface_that_reaches_object_storage(platform: str, gbps: float | None) -> None:
    """Item 5: never a GPU NIC (an InfiniBand fabric reaches no storage; AWS's primary ENA interface is on one card)."""
    link = download_link(catalog.platforms()[platform])
    assert (None if link is None else link[0]) == gbps


AWS_L40S = "  provider: aws\n  gpus: [l40s-48gb]"


@pytest.mark.parametrize(
    ("hardware", "extra", "efficiency"),
    [
        pytest.param(AWS_L40S, "", 1.0, id="aws"),
        pytest.param("  provider: azure\n  gpus: [h100-nvl-94gb]", "", 1.0, id="azure"),
        pytest.param(
            "  provider: aws\n  gpus: [l40s-48gb]",
            "constants: {object_storage_download_efficiency: 0.25}",
            0.25,
            id="aws-quarter",
        ),
    ],
)
def test_a_cloud_plan_times_the_checkpoints_download(hardware: str, extra: str, efficiency: float, tmp_path: Path) -> None:
    """Item 5: model_load_s was null on every cloud and nothing else timed a new node; the download is a floor."""
    plan = _plan(tmp_path, hardware=hardware, extra=extra)
    details = _details(plan)
    (pool,) = plan.pools
    link = download_link(catalog.platforms()[pool.node.platform_id])
    assert link is not None and details["model_download_gbps"] == link[0]
    expected = details["model_files_bytes"] * 8 / (link[0] * 1e9 * efficiency)
    assert details["model_download_s"] == pytest.approx(expected, abs=0.06)
    assert details["model_load_s"] is None
    (said,) = [f for f in plan.findings if f.code == "cold-start-time"]
    floor = "at least " if efficiency == 1 else ""  # a floor at the full rate only (the user's constant said as set)
    assert said.level == "info" and f"takes {floor}~{details['model_download_s']:,.0f} s" in said.message
    assert f"object_storage_download_efficiency: {efficiency:g}" in said.message and "image's pull" in said.message


def test_the_constant_is_documented_bounded_and_a_floor_by_default() -> None:
    """Item 5: the download's fraction of the interface is an engine constant with a source, 1 (the full rate)."""
    from generator.sizing.constants import CONSTANT_BOUNDS, CONSTANT_DOCS

    assert Constants().object_storage_download_efficiency == 1.0
    meaning, source = CONSTANT_DOCS["object_storage_download_efficiency"]
    assert "floor" in meaning and "https://docs.aws.amazon.com/" in source
    assert CONSTANT_BOUNDS["object_storage_download_efficiency"][2] == 1


def test_serving_on_spot_carries_the_download(tmp_path: Path) -> None:
    """Item 5: on a cloud the spot warning said 'until a new node starts and loads the model' with no figure."""
    plan = _plan(tmp_path, hardware="  provider: aws\n  gpus: [l40s-48gb]", capacity="capacity_type: spot\n    ")
    (said,) = [f for f in plan.findings if f.code == "serving-on-spot"]
    assert f"downloading its model alone takes at least ~{_details(plan)['model_download_s']:,.0f} s" in said.message


# ---------------------------------------------------------------------------------------------- item 4: GKE surge

GKE = "  provider: gcp\n  gpus: [l4-24gb]"
GKE_CLUSTER = "kubernetes: {gcp_project: acme-inference, location: us-central1, zone: us-central1-b}\n"


def _gke_tree(directory: Path, rate: float) -> dict[str, str]:
    """The rendered tree of the 8B chat on GKE L4 nodes: one node at 0.5 req/s, two at 2."""
    path = directory / "gke.yaml"
    path.write_text(CHAT.format(precision="fp8", hardware=GKE, extra=GKE_CLUSTER, rate=rate, capacity="", more=""))
    return render_file(str(path))


@pytest.fixture(scope="module")
def gke_tree(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """One GKE L4 node."""
    return _gke_tree(tmp_path_factory.mktemp("gke"), 0.5)


def test_gke_node_pools_upgrade_with_a_surge_node(gke_tree: dict[str, str]) -> None:
    """Item 4: maxSurge 0 / maxUnavailable 1 took a node away before its replacement; GKE's default is surge."""
    files = gke_tree
    pools = [YAML(typ="safe").load(text) for name, text in files.items() if "containernodepool-" in name]
    assert pools and all(p["spec"]["upgradeSettings"] == {"maxSurge": 1, "maxUnavailable": 0} for p in pools)
    tfvars = json.loads(files["terraform/specgen.auto.tfvars.json"])
    settings = [p["upgrade_settings"] for p in tfvars["gke_node_pools"].values()]
    assert settings and all(s == {"max_surge": 1, "max_unavailable": 0} for s in settings)


def test_the_gke_upgrade_findings_say_what_the_surge_does(gke_tree: dict[str, str]) -> None:
    """Item 4: the findings advised the surge specgen 'does not render'; they now say what it does and needs."""
    findings = json.loads(gke_tree["spec.json"])["plan"]["findings"]
    (surge,) = [f for f in findings if f["code"] == "gke-upgrade-surge"]
    assert "maxSurge 1, maxUnavailable 0" in surge["message"] and "no surge" not in surge["message"]
    assert "quota and capacity for one more node" in surge["message"] and "cold-start-time" in surge["message"]
    assert not any("does not render" in f["message"] and "maxSurge" in f["message"] for f in findings)


def test_a_drained_node_is_said_to_restart_on_the_surge_node(tmp_path: Path) -> None:
    """Item 4: two nodes, two replicas: the drained node's replica serves again only once started on the surge node."""
    findings = json.loads(_gke_tree(tmp_path, 2)["spec.json"])["plan"]["findings"]
    (down,) = [f for f in findings if f["code"] == "node-down-capacity"]
    assert down["level"] == "warning"
    assert "GKE's auto-upgrades drain every node in turn, and its replicas start again on the surge node" in down["message"]


# ---------------------------------------------------------------------------------------------- item 9: rack label


def test_a_pool_in_one_rack_joins_with_its_rack_label(tmp_path: Path) -> None:
    """Item 9: the JoinConfiguration's node-labels had no rack, so no spread over racks could be written."""
    path = tmp_path / "bm.yaml"
    hardware = "  provider: baremetal\n  gpus: [h100-sxm5-80gb]"
    more = "\n      min_replicas: 2"  # two hosts: a single host is its own cluster, with no join file
    path.write_text(CHAT.format(precision="fp8", hardware=hardware, extra="", rate=2, capacity="", more=more))
    files = render_file(str(path))
    plan = json.loads(files["spec.json"])["plan"]
    (rack,) = plan["racks"]
    (join,) = [YAML(typ="safe").load(t) for name, t in files.items() if name.startswith("kubeadm/join-")]
    (labels,) = [a["value"] for a in join["nodeRegistration"]["kubeletExtraArgs"] if a["name"] == "node-labels"]
    assert f"{RACK_LABEL}={rack['id']}" in labels.split(",")
    assert "topology.kubernetes.io/zone" not in labels
