"""A training step is timed over the link the node it renders is built with (newuser23 item 1).

A LoRA job over 2 x Dell XE7740 (8 x L4 each) was timed over "8 x 400 Gb/s GPU fabric" while the node was built,
powered, priced and rendered with one 25 GbE card: the XE7740 lists 8 CX-7 NICs for a full population of GPUs, the
step counted them always, the parts list only where the job asked for a fabric (a LoRA job does not). One decision
(:func:`generator.planner.nodes.node_fabric`) now feeds both.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator import catalog
from generator.planner import plan_workload
from generator.planner.nodes import NodeNeeds, assemble_node, node_link
from generator.planner.plan import Nic, NodeSpec, Plan
from generator.sizing.constants import Constants
from generator.workload import LoadedWorkload, load_workload

#: The report's workload (/tmp/newuser23/colo-lora.yaml); ``{extra}`` pins a layout where a test wants one.
COLO_LORA = """\
version: 1
name: colo-lora
deployments:
  - name: nightly-70b
    model: meta-llama/Llama-3.3-70B-Instruct
{extra}    training:
      method: lora
      gradient_checkpointing: full
      lora_rank: 16
      sequence_length: 4096
      global_batch_size: 64
      dataset_tokens: 50000000
      epochs: 1
      deadline_hours: 8
hardware:
  provider: baremetal
  rack_power_kw: 17
{hardware}outputs: [terraform, ansible, kubernetes]
"""

#: "8 x 400 Gb/s GPU fabric", "1 x 25 Gb/s front-end Ethernet": what node_link names.
_LINK = re.compile(r"(\d+) x ([\d.]+) Gb/s (GPU fabric|front-end Ethernet)")


def _plan(tmp_path: Path, extra: str = "", hardware: str = "") -> Plan:
    path = tmp_path / "colo-lora.yaml"
    path.write_text(COLO_LORA.format(extra=extra, hardware=hardware))
    loaded: LoadedWorkload = load_workload(str(path))
    return plan_workload(loaded)


def _nic_named(link: str, nics: tuple[Nic, ...]) -> Nic | None:
    """The node's NIC a step link names, with the count and speed it names; None where the node has no such NIC."""
    match = _LINK.fullmatch(link)
    assert match is not None, link
    count, gbps, what = int(match[1]), float(match[2]), match[3]
    role = "fabric" if what == "GPU fabric" else "frontend"
    return next((n for n in nics if n.role == role and n.count == count and n.port_gbps == gbps), None)


def _assert_link_is_the_nodes(link: str, node: NodeSpec) -> None:
    assert _nic_named(link, node.nics) is not None, f"the step is timed over {link!r}; the node has {node.nics}"


def test_the_reported_lora_job_is_timed_over_the_network_its_node_is_built_with(tmp_path: Path) -> None:
    """Before: timed over 8 x 400 Gb/s GPU fabric, the node built with 1 x 25 GbE only."""
    plan = _plan(tmp_path)
    dep, pool = plan.deployments[0], plan.pools[0]
    assert pool.nodes > 1
    _assert_link_is_the_nodes(dep.details["inter_node_link"], pool.node)
    _assert_link_is_the_nodes(dep.details["step_links"]["data_parallel"], pool.node)


def test_a_layout_that_needs_the_fabric_gets_its_nics_power_and_rendered_network(tmp_path: Path) -> None:
    """TP2 x ZeRO-3 over several XE7740s (the report's layout, DP8 on 2 servers; DP16 on 4 since the L4 counts at its
    measured GEMM share, CALIBRATION.md 2026-12-02 fifth entry) communicates far longer than it computes over 25 GbE:
    the XE7740 is built with its 8 CX-7 NICs, powered with them, and the step is timed over them."""
    plan = _plan(tmp_path, extra="    parallelism: {tp: 2}\n", hardware="  gpus: [l4-24gb]\n  platforms: [dell-xe7740]\n")
    dep, pool = plan.deployments[0], plan.pools[0]
    assert (pool.node.platform_id, pool.nodes, pool.node.gpus) == ("dell-xe7740", 4, 8)
    assert dep.details["inter_node_link"] == "8 x 400 Gb/s GPU fabric"
    fabric = _nic_named(dep.details["inter_node_link"], pool.node.nics)
    assert fabric is not None and fabric.nic_id == "connectx-7-400gbe"
    # the 8 NICs are in the node's power: the same node without them draws less
    bare = assemble_node(
        catalog.platforms()["dell-xe7740"], catalog.gpus()["l4-24gb"], 8, NodeNeeds(0, 0, 0, 0, False), Constants(), []
    )
    assert pool.node.power_components_w is not None and bare.power_components_w is not None
    assert pool.node.power_components_w > bare.power_components_w


def _bare_metal_layouts() -> list[object]:
    params: list[object] = []
    for platform in sorted(catalog.platforms().values(), key=lambda p: p.id):
        if platform.provider != "baremetal":
            continue
        gpu_id = platform.gpu_ids[0]
        for gpus in platform.gpu_counts:
            for fabric in (False, True):
                params.append(pytest.param(platform.id, gpu_id, gpus, fabric, id=f"{platform.id}-{gpus}-{fabric}"))
    return params


@pytest.mark.parametrize(("platform_id", "gpu_id", "gpus", "needs_fabric"), _bare_metal_layouts())
def test_the_link_a_step_is_timed_over_is_a_nic_the_node_is_built_with(
    platform_id: str, gpu_id: str, gpus: int, needs_fabric: bool
) -> None:
    """Every catalog bare-metal platform and GPU count, with and without a job asking for a fabric.

    Before: the XE7740 was timed over its 8 listed NICs with 1-4 GPUs (built with 1-4) and without a fabric asked
    (built with none).
    """
    platform = catalog.platforms()[platform_id]
    gpu = platform.fitted_gpu(catalog.gpus()[gpu_id])
    node = assemble_node(platform, gpu, gpus, NodeNeeds(0, 0, 0, 0, needs_fabric), Constants(), [])
    gbps, link = node_link(platform, gpu, gpus, needs_fabric)
    nic = _nic_named(link, node.nics)
    assert nic is not None, f"{link!r} against {node.nics}"
    assert gbps == nic.count * nic.port_gbps
