"""Karpenter NodePools leave room for a replacement node, a training pool stops billing soon after its run, and both
are said with what they cost (newuser24 items 5 and 6); a cloud plan says its prices are one region's on-demand list
prices (newuser24 item 14)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from generator.planner import plan_workload
from generator.planner.plan import Plan
from generator.render import deployed, render_plan
from generator.render.eks import AUTOSCALER_UNNEEDED_H
from generator.render.karpenter_aws import EMPTY_NODE_GRACE, PER_JOB_NODE_GRACE, PER_JOB_NODE_GRACE_H
from generator.render.kube_objects import dns_name, gpu_resource
from generator.workload import load_workload
from generator.workload.models import Workload
from tests.conftest import REPO


@functools.cache
def planned(stem: str) -> tuple[Plan, Workload]:
    loaded = load_workload(str(REPO / "examples" / f"{stem}.yaml"))
    return deployed(plan_workload(loaded), loaded.workload), loaded.workload


def plan_text(tmp_path: Path, text: str) -> tuple[Plan, Workload]:
    path = tmp_path / "w.yaml"
    path.write_text(text)
    loaded = load_workload(str(path))
    return deployed(plan_workload(loaded), loaded.workload), loaded.workload


def node_pools(plan: Plan, workload: Workload) -> dict[str, Any]:
    files = render_plan(plan, workload)
    docs = [YAML(typ="safe", pure=True).load(text) for path, text in files.items() if "/nodepool-" in path]
    return {d["metadata"]["name"]: d["spec"] for d in docs}


def findings(plan: Plan) -> dict[str, str]:
    return {f.code: f.message for f in plan.findings}


@pytest.mark.parametrize("stem", ["mixed", "chat-70b-fp8-aws", "chat-70b-fp8-azure"])
def test_a_serving_pool_allows_one_replacement_node_and_a_training_pool_its_plan(stem: str) -> None:
    """Karpenter launches a drifted node's replacement before it drains the old one: limits at exactly the planned
    GPUs blocked it forever, and a rollout's surge pod stayed Pending."""
    plan, workload = planned(stem)
    specs = node_pools(plan, workload)
    assert len(specs) == len(plan.pools)
    for pool in plan.pools:
        spec = specs[dns_name(pool)]
        nodes = pool.nodes if pool.per_job else pool.nodes + 1
        assert spec["limits"] == {gpu_resource(pool): str(nodes * pool.node.gpus)}, pool.name
        grace = PER_JOB_NODE_GRACE if pool.per_job else EMPTY_NODE_GRACE
        assert spec["disruption"]["consolidateAfter"] == grace, pool.name
    assert any(p.per_job for p in plan.pools) == (stem == "mixed")  # the LoRA job's pool is covered


@pytest.mark.parametrize("stem", ["mixed", "chat-70b-fp8-azure"])
def test_the_replacement_slot_is_said_with_each_pools_node_price(stem: str) -> None:
    plan, _ = planned(stem)
    message = findings(plan)["karpenter-replacement-slot"]
    for pool in plan.pools:
        if pool.per_job:
            assert dns_name(pool) not in message
            continue
        assert pool.usd_per_hour is not None
        rate = pool.usd_per_hour / pool.nodes
        assert f"{dns_name(pool)} {pool.nodes + 1} for {pool.nodes}, {pool.node.instance_type} at ${rate:,.2f}/h" in message
    assert "maxSurge 0" in message and "https://karpenter.sh/v1.14/concepts/disruption/" in message


def test_a_training_pools_idle_grace_is_priced_beside_its_run() -> None:
    """newuser24 item 6: 30 min of an idle p6-b200.48xlarge after each run was $57 on an $88 run, counted nowhere."""
    plan, _ = planned("mixed")
    (job,) = [p for p in plan.pools if p.per_job]
    assert job.usd_per_hour is not None
    codes = findings(plan)
    karpenter = codes["karpenter-per-job-grace"]
    idle = job.usd_per_hour * PER_JOB_NODE_GRACE_H  # the pool's rate covers all of its nodes
    assert f"{dns_name(job)} {job.nodes} x {job.node.instance_type}" in karpenter
    assert f"up to ${idle:,.2f} a run" in karpenter and f"removes its nodes {PER_JOB_NODE_GRACE} after" in karpenter
    # the EKS node groups scale down on the cluster autoscaler's clock instead
    assert f"{job.name} ${job.usd_per_hour * AUTOSCALER_UNNEEDED_H:,.2f}" in codes["aws-per-job-node-groups"]
    assert float(PER_JOB_NODE_GRACE.removesuffix("m")) == PER_JOB_NODE_GRACE_H * 60


def test_no_karpenter_finding_where_no_nodepool_is_rendered(tmp_path: Path) -> None:
    text = (REPO / "examples" / "chat-70b-fp8-aws.yaml").read_text()
    plan, _ = plan_text(tmp_path, text.split("outputs:")[0] + "outputs: [terraform]\n")
    assert not [f for f in plan.findings if f.code.startswith("karpenter-")]
    for stem in ("chat-70b-fp8-gcp", "chat-70b"):  # GKE node pools, kubeadm joins
        assert not [f for f in planned(stem)[0].findings if f.code.startswith("karpenter-")]


# ---------------------------------------------------------------- list prices


STACK = """\
version: 1
name: lp
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {max_context_tokens: 4096, avg_input_tokens: 500, avg_output_tokens: 100, requests_per_second: 4}
hardware: {provider: aws, platforms: [aws-g6e-xlarge, aws-p5-48xlarge]}
"""


def test_a_cloud_plan_says_its_prices_are_one_regions_on_demand_list_prices(tmp_path: Path) -> None:
    plan, _ = plan_text(tmp_path, STACK)
    (pool,) = plan.pools
    message = findings(plan)["cloud-list-prices"]
    assert f"in us-east-1: {pool.node.platform_id} ${pool.usd_per_hour / pool.nodes:,.2f}/h" in message  # type: ignore[operator]
    assert f"(prices: {{{pool.node.platform_id}: ...}}; README, Costs)" in message and "reserved instances" in message
    # a price of the workload's own is not a list price
    plan, _ = plan_text(tmp_path, STACK + f"prices: {{{pool.node.platform_id}: 1.5}}\n")
    assert "cloud-list-prices" not in findings(plan)
    assert "cloud-list-prices" not in findings(planned("chat-70b")[0])  # bought servers


@pytest.mark.parametrize(("stem", "region"), [("chat-70b-fp8-azure", "eastus2"), ("chat-70b-fp8-gcp", "us-central1")])
def test_every_clouds_list_price_names_its_region(stem: str, region: str) -> None:
    assert f"in {region}: " in findings(planned(stem)[0])["cloud-list-prices"]


MONTHLY_TRAINING = """\
version: 1
name: untimed
deployments:
  - name: sft
    model: meta-llama/Llama-3.1-8B
    training: {method: full, sequence_length: 4096, global_batch_size: 64}
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {max_context_tokens: 8192, avg_input_tokens: 1000, avg_output_tokens: 200, requests_per_second: 2}
hardware: {provider: aws}
outputs: [kubernetes]
"""


def test_a_training_pool_billed_by_the_month_is_capped_at_its_plan(tmp_path: Path) -> None:
    """review22 item 10: a training job without dataset_tokens (billed by the month, not per job) was given the serving
    pools' replacement node and named among them."""
    plan, workload = plan_text(tmp_path, MONTHLY_TRAINING)
    specs = node_pools(plan, workload)
    (training,) = [p for p in plan.pools if "sft" in p.deployments]
    (serving,) = [p for p in plan.pools if "chat" in p.deployments]
    assert not training.per_job
    assert specs[dns_name(training)]["limits"] == {gpu_resource(training): str(training.nodes * training.node.gpus)}
    assert specs[dns_name(serving)]["limits"] == {gpu_resource(serving): str((serving.nodes + 1) * serving.node.gpus)}
    message = findings(plan)["karpenter-replacement-slot"]
    assert dns_name(serving) in message and dns_name(training) not in message


BATCH = """\
version: 1
name: nightly
deployments:
  - name: summarize
    model: meta-llama/Llama-3.3-70B-Instruct
    inference: {{precision: fp8, kv_cache_precision: fp8, max_context_tokens: 16384, avg_input_tokens: 3000,
                avg_output_tokens: 300, requests_per_run: 200000, deadline_hours: 6, runs_per_month: 30,
                service_class: batch}}
hardware:
  provider: {provider}
  gpus: [{gpu}]
kubernetes:
  location: {location}
outputs: [kubernetes]
"""


@pytest.mark.parametrize(
    ("provider", "gpu", "location"),
    [("azure", "mi300x-192gb", "eastus2"), ("azure", "h100-sxm5-80gb", "eastus2"), ("aws", "h100-sxm5-80gb", "us-east-1")],
)
def test_a_batch_jobs_pool_is_capped_at_its_plan_as_its_finding_says(
    tmp_path: Path, provider: str, gpu: str, location: str
) -> None:
    """newuser77 item 16: a pool resting at zero between batch runs got the serving pools' node beyond the plan
    (amd.com/gpu 16 for one 8-GPU ND MI300X v5) beside karpenter-per-job-grace's "capped at its planned GPUs (a job is
    not rolled, and a drifted node is not replaced under a running job)"; it is capped, as a training pool is."""
    plan, workload = plan_text(tmp_path, BATCH.format(provider=provider, gpu=gpu, location=location))
    (pool,) = plan.pools
    assert pool.runs_only and not pool.per_job
    spec = node_pools(plan, workload)[dns_name(pool)]
    assert spec["limits"] == {gpu_resource(pool): str(pool.nodes * pool.node.gpus)}
    assert spec["disruption"]["consolidateAfter"] == PER_JOB_NODE_GRACE
    said = findings(plan)
    assert "capped at its planned GPUs" in said["karpenter-per-job-grace"]
    assert "karpenter-replacement-slot" not in said
