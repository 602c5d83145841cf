"""fix151: Terraform's rack variables on a machine that stands in no rack, and the Spot label of AKS Karpenter NodePools.

- fix149 found ``rack_power_kw: 17.3`` (the schema's default, which the user never gave) and ``racks: []`` in the
  Terraform values of every hardware.fixed home machine, with the rack power checks against them; they are left out
  where the plan packs no rack (terraform validate / plan of the rendered home examples run in test_oracles).
- newuser87: a Spot pool's Karpenter NodePool on Azure carried AKS's Spot taint but not its label
  ``kubernetes.azure.com/scalesetpriority: spot``, which its AKS node pool (Terraform, ASO) carries: a pod selecting
  Spot nodes by that label was provisioned for by the AKS pool only.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from generator.api import render_file
from generator.planner.spot import AKS_SPOT_LABEL
from tests.conftest import REPO, SHARED, require_shared
from tests.test_newuser87 import WORKLOAD

HOME = ["home-70b-offload", "home-moe-experts", "home-quantize-instead", "finetune-8b-deepspeed-home"]


@pytest.mark.parametrize("stem", HOME)
def test_a_home_machine_has_no_rack_variables(stem: str) -> None:
    files = render_file(str(REPO / "examples" / f"{stem}.yaml"))
    assert json.loads(files["spec.json"])["plan"]["racks"] == []
    tfvars = json.loads(files["terraform/specgen.auto.tfvars.json"])
    assert "rack_power_kw" not in tfvars and "racks" not in tfvars
    assert "rack_power_kw" not in files["terraform/variables.tf"] and 'variable "racks"' not in files["terraform/variables.tf"]


def test_a_racked_fleet_keeps_them() -> None:
    files = render_file(str(REPO / "examples" / "chat-70b.yaml"))
    racks = json.loads(files["spec.json"])["plan"]["racks"]
    tfvars = json.loads(files["terraform/specgen.auto.tfvars.json"])
    assert racks and tfvars["rack_power_kw"] > 0 and len(tfvars["racks"]) == len(racks)


@pytest.fixture(scope="module")
def azure_spot(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    path = tmp_path_factory.mktemp("fix151") / "workload.yaml"
    path.write_text(WORKLOAD.replace("PROVIDER", "azure").replace("LOCATION", "location: eastus2"))
    return render_file(str(path))


def _docs(files: dict[str, str], prefix: str) -> list[dict[str, Any]]:
    return [d for p, t in sorted(files.items()) if p.startswith(prefix) for d in YAML(typ="safe").load_all(t) if d]


def _node_pools(files: dict[str, str]) -> dict[str, dict[str, Any]]:
    pools = [d for d in _docs(files, "kubernetes/azure/") if d["kind"] == "NodePool"]
    return {d["metadata"]["name"]: d for d in pools}


def test_the_spot_nodepool_carries_aks_spot_label_as_its_aks_pool_does(azure_spot: dict[str, str]) -> None:
    pools = _node_pools(azure_spot)
    spot = {name: d for name, d in pools.items() if _capacity(d) == ["spot"]}
    assert spot and len(spot) < len(pools)
    key, value = AKS_SPOT_LABEL
    operator = _docs(azure_spot, "kubernetes/azure-service-operator/")
    agent_pools = [d for d in operator if d["kind"] == "ManagedClustersAgentPool"]
    spot_agent_pools = [d for d in agent_pools if d["spec"]["scaleSetPriority"] == "Spot"]
    assert len(spot_agent_pools) == len(spot) and all(d["spec"]["nodeLabels"][key] == value for d in spot_agent_pools)
    for name, pool in pools.items():
        template = pool["spec"]["template"]
        labels = template["metadata"]["labels"]
        taint = {"key": key, "value": value, "effect": "NoSchedule"}
        if name in spot:
            assert labels[key] == value and taint in template["spec"]["taints"], name
        else:
            assert key not in labels and taint not in template["spec"]["taints"], name


def _capacity(pool: dict[str, Any]) -> list[str]:
    for req in pool["spec"]["template"]["spec"]["requirements"]:
        if req["key"] == "karpenter.sh/capacity-type":
            return list(req["values"])
    return []


#: The two forms of the Azure NodePool CRD's CEL rules on template label keys (a domain with its allowed keys, a key).
_DOMAIN_RULE = re.compile(
    r'self\.all\(x, x in \[(?P<keys>[^\]]*)\] \|\| !x\.find\("\^\(\[\^/\]\+\)"\)\.endsWith\("(?P<domain>[^"]+)"\)\)'
)
_KEY_RULE = re.compile(r"""self\.all\(x, x != ['"](?P<key>[^'"]+)['"]\)""")


def _label_rule_errors(rules: list[dict[str, str]], keys: list[str]) -> list[str]:
    """The CEL rules' messages ``keys`` break (each rule read as one of the two forms, or the test fails)."""
    errors = []
    for rule in rules:
        text = rule["rule"]
        if match := _DOMAIN_RULE.fullmatch(text):
            allowed = set(re.findall(r'"([^"]+)"', match["keys"]))
            domain = match["domain"]
            errors += [rule["message"] for k in keys if k.split("/", 1)[0].endswith(domain) and k not in allowed]
        elif match := _KEY_RULE.fullmatch(text):
            errors += [rule["message"] for k in keys if k == match["key"]]
        else:
            raise AssertionError(f"a label rule of another form: {text}")
    return errors


def test_the_azure_nodepool_crd_allows_the_labels(azure_spot: dict[str, str]) -> None:
    """The CEL rules (which the CRD oracle of test_oracles cannot run) on each rendered NodePool's template labels."""
    crd_path = SHARED / "crds" / "karpenter-azure" / "karpenter.sh_nodepools.yaml"
    require_shared(crd_path)
    crd = YAML(typ="safe").load(Path(crd_path).read_text())
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")
    labels_schema = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["template"]["properties"][
        "metadata"
    ]["properties"]["labels"]
    rules = labels_schema["x-kubernetes-validations"]
    assert any("kubernetes.azure.com" in r["message"] for r in rules)
    assert _label_rule_errors(rules, ["kubernetes.azure.com/agentpool"])  # the oracle refuses what the CRD refuses
    for name, pool in _node_pools(azure_spot).items():
        assert not _label_rule_errors(rules, list(pool["spec"]["template"]["metadata"]["labels"])), name
