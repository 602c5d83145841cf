"""One rule says whether a serving replica spans hosts; the finding, the Why and the Ansible group vars follow it.

Llama-3.1-405B bf16 on H100 (the workload below) runs TP8 x PP2: 16 GPUs per replica, two 8-GPU Dell XE9680
servers. That needs a multi-node engine launch (Ray / LeaderWorkerSet) like a replica over GB200 NVL72 trays, but
no NVIDIA IMEX: the two servers share no NVLink domain.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import catalog
from generator.planner import plan_workload
from generator.planner.multi_host import (
    COMPUTE_DOMAIN_URL,
    IMEX_URL,
    LEADER_WORKER_SET_URL,
    VLLM_MULTI_NODE_URL,
    hosts_per_replica,
    multi_host_note,
)
from generator.render import render_plan
from generator.workload import load_workload
from tests.helpers import ansible_reader

WORKLOAD = """\
version: 1
name: frontier-405b
deployments:
  - name: llama405
    model: meta-llama/Llama-3.1-405B-Instruct
    inference:
      precision: bf16
      kv_cache_precision: bf16
      max_context_tokens: 32768
      avg_input_tokens: 3000
      avg_output_tokens: 500
      requests_per_second: 2
      slo:
        ttft_p95_ms: 5000
        tpot_ms: 80
hardware:
  gpus: [h100-sxm5-80gb]
  provider: baremetal
  rack_power_kw: 40
objective: power
"""
LAUNCH = (
    f"launch the engine multi-node (vLLM over Ray or multiprocessing across nodes, {VLLM_MULTI_NODE_URL}; "
    f"on Kubernetes one LeaderWorkerSet group of 2 pods per replica, {LEADER_WORKER_SET_URL})"
)


@pytest.mark.parametrize(
    ("platform", "gpus_per_node", "replica_gpus", "expected"),
    [
        ("dell-xe9680-hgx-h100-h200", 8, 8, None),
        ("dell-xe8640", 4, 4, None),
        ("gb200-nvl72", 72, 4, None),
        (
            "dell-xe9680-hgx-h100-h200",
            8,
            16,
            f"one replica (16 GPUs) spans 2 dell-xe9680-hgx-h100-h200 servers of 8 GPUs: {LAUNCH}; "
            "specgen renders none of it (Ansible group vars say hosts_per_replica)",
        ),
        (
            "aws-p5-48xlarge",
            8,
            16,
            f"one replica (16 GPUs) spans 2 aws-p5-48xlarge instances of 8 GPUs: {LAUNCH}; "
            "specgen renders none of it (Ansible group vars say hosts_per_replica)",
        ),
        (
            "gb200-nvl72",
            72,
            8,
            f"one replica (8 GPUs) spans 2 gb200-nvl72 compute trays of 4 GPUs, each its own Linux host: {LAUNCH}, and "
            f"NVLink between trays needs NVIDIA IMEX on the hosts ({IMEX_URL}) or, on Kubernetes, a ComputeDomain of "
            f"the NVIDIA DRA driver for GPUs ({COMPUTE_DOMAIN_URL}); specgen renders neither (Ansible group vars say "
            "hosts_per_replica)",
        ),
    ],
)
def test_multi_host_note(platform: str, gpus_per_node: int, replica_gpus: int, expected: str | None) -> None:
    """IMEX only where the hosts are trays of one NVLink domain; the note exactly where a replica spans hosts."""
    spec = catalog.platforms()[platform]
    assert multi_host_note(spec, gpus_per_node, replica_gpus) == expected
    spans = hosts_per_replica(gpus_per_node // spec.hosts, replica_gpus) > 1
    assert (expected is not None) == spans


def test_a_replica_over_two_servers_is_said_and_configured(tmp_path: Path) -> None:
    path = tmp_path / "pp2.yaml"
    path.write_text(WORKLOAD)
    loaded = load_workload(str(path))
    plan = plan_workload(loaded)
    (deployment,) = plan.deployments
    (pool,) = plan.pools
    assert (pool.node.platform_id, pool.node.gpus) == ("dell-xe9680-hgx-h100-h200", 8)
    (finding,) = [f for f in plan.findings if f.code == "replica-spans-hosts"]
    note = (
        f"one replica (16 GPUs) spans 2 dell-xe9680-hgx-h100-h200 servers of 8 GPUs: {LAUNCH}; "
        "specgen renders none of it (Ansible group vars say hosts_per_replica)"
    )
    assert (finding.level, finding.path, finding.message) == ("warning", "deployments[0]", f"deployment llama405: {note}")
    assert note in deployment.reasons
    files = render_plan(plan, loaded.workload)
    (entry,) = ansible_reader().load(files[f"ansible/group_vars/{pool.name}.yml"])["specgen_deployments"]
    assert (entry["tensor_parallel"], entry["pipeline_parallel"], entry["hosts_per_replica"]) == (8, 2, 2)
