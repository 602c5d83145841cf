"""GPU sharing as part of a pool's identity (newuser40 items 1 and 4).

Item 1: a Karpenter NodePool of shared GPUs was capped by its advertised GPUs only (``nvidia.com/gpu: '112'`` for a
planned 8 x H100 node at MIG 1g.10gb), but Karpenter charges a node it launches the instance type's physical GPUs
(karpenter ``StateNode.Capacity``: the NodeClaim's capacity until the node is initialized), so a burst could launch 14
nodes where the ``karpenter-replacement-slot`` finding promised 2. Item 4: ``specgen diff`` said "No change to the
fleet." for a sharing change GKE cannot apply in place (Config Connector's ContainerNodePool marks ``guestAccelerator``,
``gpuPartitionSize`` and ``gpuSharingConfig`` Immutable) and that Karpenter treats as drift (the NodePool template's
``nvidia.com/mig.config`` label changes).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from generator.api import render_file
from tests.helpers import specgen_in_process as specgen

BASE = """\
version: 1
name: platform
deployments:
  - name: embed
    model: BAAI/bge-m3
    inference: {{task: embed, precision: bf16, max_context_tokens: 8192, avg_input_tokens: 500,
                requests_per_second: 20, slo: {{ttft_p95_ms: 500}}}}
hardware: {{provider: {provider}, gpus: [h100-sxm5-80gb]}}
outputs: [terraform, ansible, kubernetes]
kubernetes:
  {place}
"""
PLACES = {
    "azure": "location: eastus2",
    "aws": "location: us-east-1",
    "gcp": "{gcp_project: acme-inference, location: us-central1, zone: us-central1-a}",
}
MIG_1G = "gpu_sharing: {strategy: mig, mig_profile: 1g.10gb}"
MIG_3G = "gpu_sharing: {strategy: mig, mig_profile: 3g.40gb}"
TS_4 = "gpu_sharing: {strategy: time-slicing, replicas_per_gpu: 4}"
MPS_4 = "gpu_sharing: {strategy: mps, replicas_per_gpu: 4}"


def workload(tmp_path: Path, name: str, provider: str, sharing: str | None) -> Path:
    place = PLACES[provider]
    if provider == "gcp":  # one flow mapping: add the sharing inside it
        text = BASE.format(provider=provider, place="")
        body = place[1:-1] + (f", {sharing}" if sharing else "")
        text = text.replace("kubernetes:\n  \n", f"kubernetes: {{{body}}}\n")
    else:
        text = BASE.format(provider=provider, place=place + (f"\n  {sharing}" if sharing else ""))
    if provider == "azure":  # Karpenter's pools: with Terraform, AKS partitions a MIG pool (tests/test_aks_mig.py)
        text = text.replace("outputs: [terraform, ansible, kubernetes]", "outputs: [ansible, kubernetes]")
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def load(text: str) -> Any:
    return YAML(typ="safe", pure=True).load(text)


def docs(files: dict[str, str], prefix: str) -> list[Any]:
    return [load(text) for path, text in files.items() if path.startswith(prefix)]


# ---------------------------------------------------------------- item 1: Karpenter limits


def launchable_nodes(limits: dict[str, str], gpus_per_node: int) -> int:
    """Nodes Karpenter may launch from none under ``limits``, counting each as it does before it is initialized:
    its instance type's physical GPUs, and one node (kubernetes-sigs/karpenter#2526)."""
    charge = {"nvidia.com/gpu": gpus_per_node, "nodes": 1}
    return min(int(limit) // charge[resource] for resource, limit in limits.items())


@pytest.mark.parametrize(
    ("provider", "sharing", "per_gpu"),
    [
        ("azure", MIG_1G, 7),  # the report's repro: 112 advertised, 14 ND96isr_H100_v5 launchable
        ("azure", MIG_3G, 2),
        ("azure", TS_4, 4),
        ("aws", MPS_4, 4),
        ("aws", MIG_1G, 7),
    ],
)
def test_a_shared_pool_launches_no_more_nodes_than_the_finding_promises(
    tmp_path: Path, provider: str, sharing: str, per_gpu: int
) -> None:
    files = render_file(str(workload(tmp_path, "w", provider, sharing)))
    plan = json.loads(files["spec.json"])["plan"]
    pools = {p["name"].replace("_", "-"): p for p in plan["pools"]}
    node_pools = docs(files, f"kubernetes/{provider}/nodepool-")
    assert node_pools and len(node_pools) == len(pools)
    slot = next(f["message"] for f in plan["findings"] if f["code"] == "karpenter-replacement-slot")
    for node_pool in node_pools:
        pool = pools[node_pool["metadata"]["name"]]
        gpus, nodes = pool["node"]["gpus"], pool["nodes"]
        limits = node_pool["spec"]["limits"]
        assert f"{node_pool['metadata']['name']} {nodes + 1} for {nodes}" in slot  # the promise
        # a burst from no node: at most the plan plus the replacement node (before: 14 at 1g.10gb, 8 at x4, 4 at 3g)
        assert launchable_nodes(limits, gpus) == nodes + 1
        # with the planned nodes up (advertising their shared GPUs), the replacement node can still launch: a limit of
        # the physical GPUs would block it
        used = nodes * gpus * per_gpu
        assert used + gpus <= int(limits["nvidia.com/gpu"]) and nodes + 1 <= int(limits["nodes"])


def test_whole_gpus_keep_their_gpu_limit_alone(tmp_path: Path) -> None:
    files = render_file(str(workload(tmp_path, "w", "azure", None)))
    (node_pool,) = docs(files, "kubernetes/azure/nodepool-")
    assert set(node_pool["spec"]["limits"]) == {"nvidia.com/gpu"}
    assert "karpenter-shared-gpus" not in files["SPEC.md"]


@pytest.mark.parametrize(("provider", "sharing"), [("azure", MIG_1G), ("aws", TS_4), ("azure", MPS_4)])
def test_karpenter_scheduling_shared_pools_by_physical_gpus_is_said(tmp_path: Path, provider: str, sharing: str) -> None:
    files = render_file(str(workload(tmp_path, "w", provider, sharing)))
    plan = json.loads(files["spec.json"])["plan"]
    (finding,) = [f for f in plan["findings"] if f["code"] == "karpenter-shared-gpus"]
    (pool,) = plan["pools"]
    gpus = pool["node"]["gpus"]
    message = finding["message"]
    for issue in ("karpenter/issues/729", "karpenter/issues/2140", "karpenter/issues/2915"):
        assert issue in message
    assert f"{pool['node']['instance_type']} counts {gpus} GPUs where its nodes advertise " in message
    assert "NodeOverlay" in message and "specgen renders none" in message
    assert finding["path"] == "kubernetes.gpu_sharing"


def test_the_shared_node_pools_are_valid_against_the_pinned_crds(tmp_path: Path) -> None:
    """``limits.nodes`` is accepted by both pinned NodePool CRDs (AWS v1.14.1 and the Azure build)."""
    from tests import test_oracles

    test_oracles.needs_crds()
    problems = []
    for provider, sharing in (("aws", MIG_1G), ("azure", TS_4)):
        files = render_file(str(workload(tmp_path, provider, provider, sharing)))
        test_oracles.CURRENT_PROVIDER[0] = provider
        try:
            problems += [e for doc in docs(files, f"kubernetes/{provider}/nodepool-") for e in test_oracles.crd_errors(doc)]
        finally:
            test_oracles.CURRENT_PROVIDER[0] = "baremetal"
    assert not problems, problems


# ---------------------------------------------------------------- item 4: diff


def diff(tmp_path: Path, capsys: pytest.CaptureFixture[str], provider: str, old: str | None, new: str | None) -> Any:
    a, b = workload(tmp_path, "old", provider, old), workload(tmp_path, "new", provider, new)
    code, out, err = specgen(capsys, "diff", str(a), str(b), "--format", "json")
    assert code == 0, err
    code, md, err = specgen(capsys, "diff", str(a), str(b))
    assert code == 0, err
    return json.loads(out), md


def node_pool_name(tmp_path: Path, name: str, sharing: str | None) -> str:
    files = render_file(str(workload(tmp_path, name, "gcp", sharing)))
    (node_pool,) = docs(files, "kubernetes/gcp/containernodepool-")
    return str(node_pool["metadata"]["name"])


@pytest.mark.parametrize(("old", "new"), [(MIG_1G, MIG_3G), (MIG_3G, TS_4), (TS_4, MPS_4), (None, MIG_1G)])
def test_a_gke_sharing_change_is_a_new_node_pool_and_diff_says_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str | None, new: str | None
) -> None:
    result, md = diff(tmp_path, capsys, "gcp", old, new)
    (entry,) = result["replacements"]
    (change,) = result["sharing_changes"]
    assert change["effect"] == "replaced" and entry["gpu_sharing"] == change
    # the names diff says are those the two renders give the ContainerNodePool (and the Terraform node pool)
    names = change["node_pool"]
    assert names == {"old": node_pool_name(tmp_path, "a", old), "new": node_pool_name(tmp_path, "b", new)}
    assert names["old"] != names["new"]
    assert entry["nodes_deleted"] == entry["nodes_created"] == entry["removed"][0]["nodes"]
    assert "**Node pools replaced, not resized:" in md and "GKE cannot change in place" in md
    assert "No change to the fleet." not in md
    assert "set `pool:`" not in md  # a pool name does not keep a node pool whose sharing changes


@pytest.mark.parametrize(
    ("old", "new", "effect"),
    [
        (MIG_3G, TS_4, "drift"),  # the report's aks-mig -> aks-ts-same: the mig.config label goes
        (MIG_1G, MIG_3G, "drift"),  # the label's value changes
        (None, MIG_1G, "drift"),
        (TS_4, MPS_4, "in place"),  # only the device plugin's config changes
    ],
)
@pytest.mark.parametrize("provider", ["azure", "aws"])
def test_a_karpenter_sharing_change_is_drift_where_the_nodepool_template_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], provider: str, old: str | None, new: str | None, effect: str
) -> None:
    result, md = diff(tmp_path, capsys, provider, old, new)
    assert result["replacements"] == []
    (change,) = result["sharing_changes"]
    assert change["effect"] == effect and change["provider"] == provider
    old_label, new_label = (
        [
            d["spec"]["template"]["metadata"]["labels"].get("nvidia.com/mig.config")
            for d in docs(files, f"kubernetes/{provider}/nodepool-")
        ]
        for files in (render_file(str(tmp_path / "old.yaml")), render_file(str(tmp_path / "new.yaml")))
    )
    assert (old_label != new_label) is (effect == "drift")  # drift is exactly a change of the NodePool template
    (pool,) = result["pools"]
    assert pool["status"] == "changed" and pool["old"]["nodes"] == pool["new"]["nodes"]
    assert "No change to the fleet." not in md
    if effect == "drift":
        assert "**Karpenter drift: " in md and "treats as drift" in md
    else:
        assert "**GPU sharing changes in place.**" in md and "no node is replaced" in md


def test_the_same_sharing_is_still_no_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for provider in ("gcp", "azure"):
        result, md = diff(tmp_path, capsys, provider, MIG_3G, MIG_3G)
        assert "sharing_changes" not in result and result["replacements"] == [] and result["pools"] == []
        assert "No change to the fleet." in md


def test_a_pull_request_comment_heads_with_the_karpenter_drift_of_each_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from generator.pr_diff import _drift_headline

    result, _ = diff(tmp_path, capsys, "azure", MIG_3G, TS_4)
    lines = _drift_headline([{"file": "aks.yaml", "diff": result}, {"file": "gone.yaml", "diff": None}])
    assert lines[0].startswith("**Karpenter drift: 1 node(s) replaced")
    (bullet,) = [line for line in lines if line.startswith("- ")]
    assert bullet.startswith("- `aks.yaml`: `embed_h100_sxm5_80gb` (1 node): GPU sharing mig 3g.40gb → time-slicing x4")
