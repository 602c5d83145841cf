"""A GPU fabric across servers needs switches the plan does not price (newuser35 item 4).

Four DGX B200 of one continued pre-training job were bought with their 32 x 400G fabric NICs and no word of the
switches, optics and cables those need, nor of their power and rack units; only a server fitted with NICs by specgen
said the fabric was unpriced.
"""

from __future__ import annotations

from pathlib import Path

from generator.planner import plan_workload
from generator.workload import load_workload

CPT = """\
version: 1
name: cpt
deployments:
  - name: cpt-32b
    model: Qwen/Qwen3-32B
    platform: dgx-b200
    training: {method: full, framework: megatron, sequence_length: 8192, global_batch_size: 512,
               dataset_tokens: 100000000000, epochs: 1, deadline_hours: 336}
hardware: {gpus: [b200-sxm-180gb], provider: baremetal}
"""


def test_a_job_over_several_dgx_says_their_fabric_switches_are_not_counted(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(CPT)
    plan = plan_workload(load_workload(str(path)))
    (pool,) = plan.pools
    assert pool.nodes > 1
    (finding,) = [f for f in plan.findings if f.code == "fabric-switches-unpriced"]
    nics = sum(n.count for n in pool.node.nics if n.role == "fabric")
    assert finding.message.startswith(f"pool {pool.name}: cpt-32b spans its {pool.nodes} servers over their GPU fabric")
    assert f"{pool.nodes * nics} in all): the fabric's switches, optics and cables are not in the plan's capex" in (
        finding.message
    )


def test_servers_that_do_not_talk_need_no_fabric_switch(tmp_path: Path) -> None:
    """Replicas each within one DGX: the servers never talk over the fabric, whatever NICs they come with."""
    path = tmp_path / "w.yaml"
    path.write_text(
        "version: 1\nname: chat\ndeployments:\n  - name: chat\n    model: meta-llama/Llama-3.1-70B-Instruct\n"
        "    platform: dgx-b200\n    inference: {precision: fp8, max_context_tokens: 8192, requests_per_second: 300}\n"
        "hardware: {gpus: [b200-sxm-180gb], provider: baremetal}\n"
    )
    plan = plan_workload(load_workload(str(path)))
    assert sum(p.nodes for p in plan.pools) > 1
    assert not [f for f in plan.findings if f.code == "fabric-switches-unpriced"]
