"""fix169: ``count`` on an autoscaled Azure Service Operator agent pool: set, within its bounds, and said to go.

AKS refuses an autoscaled agent pool created without ``properties.count`` (Azure/azure-service-operator#3220) and one
whose count is outside ``minCount`` .. ``maxCount`` (kubernetes-sigs/cluster-api-provider-azure#5947); once the pool
exists, ASO re-applies ``spec.count`` over the cluster autoscaler's on each reconcile, which is why CAPZ sets it only
until the pool exists (``setAgentPoolCount``, pkg/mutators/azureasomanagedmachinepool.go). specgen's manifest is
static: it seeds the count (the Terraform pool's initial ``node_count``) and warns (``aso-autoscaled-count``) to remove
it after the first apply. Each object is checked against the pinned ASO CRD (skipped, with the reason, without
``../shared``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.render.aks_terraform import ASO_DIRECTORY
from tests.test_aks_node_pools import render
from tests.test_aso_agent_pools import agent_pools


def findings(files: dict[str, str], code: str) -> list[dict[str, Any]]:
    return [f for f in json.loads(files["spec.json"])["plan"]["findings"] if f["code"] == code]


def test_an_autoscaled_pool_starts_within_its_bounds_and_is_warned_of(tmp_path: Path) -> None:
    files = render(tmp_path, "scaling")
    scaled = [p for p in agent_pools(files) if p["spec"].get("enableAutoScaling")]
    assert scaled
    for pool in scaled:
        spec = pool["spec"]
        assert "count" in spec, "AKS refuses an autoscaled pool created without properties.count"
        assert spec["minCount"] <= spec["count"] <= spec["maxCount"], pool["metadata"]["name"]
    (warning,) = findings(files, "aso-autoscaled-count")
    assert warning["level"] == "warning" and warning["path"] == "kubernetes"
    for pool in scaled:
        assert pool["spec"]["azureName"] in warning["message"]
    assert f"in {ASO_DIRECTORY}/" in warning["message"]
    assert "after the first apply, delete the spec.count lines" in warning["message"]


@pytest.mark.parametrize("stem", ["example", "mixed"])
def test_fixed_size_pools_carry_no_bounds_and_no_warning(tmp_path: Path, stem: str) -> None:
    files = render(tmp_path, stem)
    pools = agent_pools(files)
    fixed = [p for p in pools if not p["spec"].get("enableAutoScaling")]
    assert fixed
    assert all("minCount" not in p["spec"] and "maxCount" not in p["spec"] for p in fixed)
    if len(fixed) == len(pools):
        assert findings(files, "aso-autoscaled-count") == []


def test_no_warning_without_the_asos_manifests(tmp_path: Path) -> None:
    """Terraform alone renders no agent pool objects: nothing to remove a count from."""
    files = render(tmp_path, "scaling", outputs="terraform")
    assert not any(path.startswith(f"{ASO_DIRECTORY}/") for path in files)
    assert findings(files, "aso-autoscaled-count") == []
