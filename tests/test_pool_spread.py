"""Named pools a deployment cannot share, and replicas spread over nodes (fuzz21 items 1 and 2).

Item 1: two deployments naming one ``pool`` were refused as invalid input (exit 1), after the whole plan, when the
planner made one of them take whole servers (a replica wider than a server, a training job): which hardware it picks
is not the user's to see. That deployment now keeps a pool of its own, ``<pool>_<deployment>_<gpu>``, with an info
finding at its ``pool``.

Item 2: ``min_replicas: 2`` (README: for a service that must stay up while a replica's node is upgraded) packed both
replicas on one node, and the plan then warned that the service goes down on upgrade, at ``kubernetes``. A service
with ``min_replicas`` of 2 or more now runs on two nodes at least, a pool it shares keeps them, and the GKE warning is
at the deployment it names.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.api import render_file
from generator.cli import main
from generator.planner import plan_workload
from generator.planner.spread import spread_layouts, strands_a_replica
from generator.workload import load_workload

HEAD = "version: 1\nname: w\ndeployments:\n"

#: Llama 3.1 405B in BF16 (16 H100s a replica: it spans two 8-GPU servers) beside an 8B, both naming pool serving.
WIDE = """\
  - name: big
    model: meta-llama/Llama-3.1-405B-Instruct
    pool: {pool}
    inference:
      precision: bf16
      max_context_tokens: 8192
      requests_per_second: 1
      slo: {{ttft_p95_ms: 5000, tpot_ms: 100}}
"""

SMALL = """\
  - name: {name}
    model: meta-llama/Llama-3.1-8B-Instruct{pool}
    inference:
      precision: bf16
      max_context_tokens: 8192
      requests_per_second: 5{extra}
      slo: {{ttft_p95_ms: 1500, tpot_ms: 60}}
"""

TUNE = """\
  - name: tune
    model: Qwen/Qwen2.5-7B-Instruct
    pool: serving
    training:
      method: lora
      lora_rank: 32
      sequence_length: 4096
      micro_batch_size: 2
      dataset_tokens: 500000000
      epochs: 3
      deadline_hours: 24
"""

DGX = "hardware:\n  gpus: [h100-sxm5-80gb]\n  provider: baremetal\n  platforms: [dgx-h100]\n"
A3 = "hardware:\n  gpus: [h100-sxm5-80gb]\n  provider: gcp\n  platforms: [gcp-a3-highgpu-8g]\n"
P5 = "hardware:\n  provider: aws\n  platforms: [aws-p5-48xlarge]\n"
GKE = (
    "outputs: [terraform, kubernetes]\n"
    "kubernetes:\n  gcp_project: acme-inference\n  location: us-central1\n  zone: us-central1-b\n"
)


def small(name: str = "small", pool: str | None = "serving", extra: str = "") -> str:
    """An 8B service (5 req/s: one GPU holds it), naming ``pool``, with ``extra`` lines in its ``inference``."""
    return SMALL.format(name=name, pool=f"\n    pool: {pool}" if pool else "", extra=extra)


def plan_of(tmp_path: Path, text: str) -> dict[str, Any]:
    """The plan of a workload ``text`` as spec.json holds it (with the findings of its render: GKE's)."""
    path = tmp_path / "w.yaml"
    path.write_text(text, encoding="utf-8")
    plan: dict[str, Any] = json.loads(render_file(str(path))["spec.json"])["plan"]
    return plan


def pool_of(plan: dict[str, Any], deployment: str) -> str:
    """The pool a deployment runs in."""
    return str(next(d["pool"] for d in plan["deployments"] if d["name"] == deployment))


def findings(plan: dict[str, Any], code: str) -> list[dict[str, Any]]:
    """The plan's findings with ``code``."""
    return [f for f in plan["findings"] if f["code"] == code]


# ---------------------------------------------------------------- item 1: a named pool it cannot share


@pytest.mark.parametrize(
    ("text", "apart", "shared", "at", "why"),
    [
        pytest.param(
            HEAD + WIDE.format(pool="serving") + small() + DGX,
            ("big", "serving_big_h100_sxm5_80gb"),
            ("small", "serving_h100_sxm5_80gb"),
            "deployments[0].pool",
            "each replica (16 GPUs) spans 2 of the 8-GPU dgx-h100 servers it runs on",
            id="replica-wider-than-a-server",
        ),
        pytest.param(
            HEAD + small("assistant") + TUNE + P5,
            ("tune", "serving_tune_h100_sxm5_80gb"),
            ("assistant", "serving_h100_sxm5_80gb"),
            "deployments[1].pool",
            "a training job's memory, interconnect and power peaks must not slow a service",
            id="training-job",
        ),
    ],
)
def test_a_deployment_that_cannot_share_its_named_pool_keeps_one_of_its_own(
    tmp_path: Path, text: str, apart: tuple[str, str], shared: tuple[str, str], at: str, why: str
) -> None:
    """Refused with exit 1 before (pool serving would be named serving-dgx-h100-h100-sxm5-80gb, as big's is)."""
    plan = plan_of(tmp_path, text)
    assert (pool_of(plan, apart[0]), pool_of(plan, shared[0])) == (apart[1], shared[1])
    (kept,) = findings(plan, "pool-kept-apart")
    assert (kept["level"], kept["path"]) == ("info", at)
    assert kept["message"] == (
        f"deployment {apart[0]} names pool serving but cannot share servers: {why}; it gets a pool of its own, "
        f"{apart[1]}, beside pool serving's other deployments"
    )


def test_the_command_line_plans_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """fuzz21's reproducer (pool_wide2.yaml) exited 1 with 'invalid input' after the whole plan."""
    path = tmp_path / "w.yaml"
    path.write_text(HEAD + WIDE.format(pool="serving") + small() + DGX, encoding="utf-8")
    with pytest.raises(SystemExit) as exited:
        main(["plan", str(path)])
    assert exited.value.code == 0
    assert "pool serving_big_h100_sxm5_80gb: 2 x NVIDIA DGX H100" in capsys.readouterr().out


def test_a_kept_apart_name_too_long_for_gke_is_shortened_not_refused(tmp_path: Path) -> None:
    """The derived name is nobody's choice: like a pool named after its deployments, it is shortened, never refused.

    inference-serving-xyz_h100_sxm5_80gb fits GKE's 40 characters; with the deployment's name it has 43.
    """
    text = HEAD + WIDE.format(pool="inference-serving-xyz") + small(pool="inference-serving-xyz") + A3 + GKE
    plan = plan_of(tmp_path, text)
    assert pool_of(plan, "small") == "inference_serving_xyz_h100_sxm5_80gb"
    assert pool_of(plan, "big") == "inference_serving_xyz_big_h100_sxm5_80gb"
    assert [f["path"] for f in findings(plan, "pool-kept-apart")] == ["deployments[0].pool"]


def test_two_pools_sharing_servers_still_keep_the_plain_name(tmp_path: Path) -> None:
    """Only the deployment that cannot share is renamed: two services of one pool on one kind of server share it."""
    plan = plan_of(tmp_path, HEAD + small("chat") + small("asst") + DGX)
    assert pool_of(plan, "chat") == pool_of(plan, "asst") == "serving_h100_sxm5_80gb"
    assert not findings(plan, "pool-kept-apart")


# ---------------------------------------------------------------- item 2: min_replicas spreads the replicas


@pytest.mark.parametrize(
    ("layouts", "replicas", "min_replicas", "spread"),
    [
        pytest.param([(1, 2), (2, 1), (8, 1)], 2, 2, [(1, 2), (2, 2), (8, 2)], id="two-replicas-one-node-each"),
        pytest.param([(8, 1)], 5, 3, [(8, 2)], id="floor-3-still-two-nodes"),
        pytest.param([(8, 3)], 24, 2, [(8, 3)], id="already-three-nodes"),
        pytest.param([(2, 1), (8, 1)], 2, 1, [(2, 1), (8, 1)], id="no-floor-packs"),
        pytest.param([(8, 1)], 3, 1, [(8, 1)], id="replicas-for-the-rate-pack"),
    ],
)
def test_spread_layouts(layouts: list[tuple[int, int]], replicas: int, min_replicas: int, spread: list[tuple[int, int]]) -> None:
    """min_replicas of 2 or more puts the replicas on two nodes at least; the rate's replicas alone are packed."""
    assert spread_layouts(layouts, replicas, min_replicas) == spread


@pytest.mark.parametrize(
    ("hardware", "pool", "replicas"),
    [
        # was 1 x DGX H100 with both replicas; the two DGXs bought run a replica on every GPU (newuser46 item 2)
        pytest.param(DGX, "chat_h100_sxm5_80gb", 16, id="bare-metal"),
        pytest.param("hardware:\n  provider: gcp\n" + GKE, "chat_a100_sxm4_40gb", 2, id="gke"),  # was 1 x a2-highgpu-2g
    ],
)
def test_min_replicas_two_runs_on_two_nodes(tmp_path: Path, hardware: str, pool: str, replicas: int) -> None:
    """fuzz21 item 2: both replicas were packed on one node, which an upgrade takes down."""
    plan = plan_of(tmp_path, HEAD + small("chat", None, "\n      min_replicas: 2") + hardware)
    (chosen,) = [p for p in plan["pools"] if p["name"] == pool]
    (chat,) = plan["deployments"]
    assert chat["replicas"] == replicas and chosen["nodes"] >= 2
    assert not [f for f in findings(plan, "node-down-capacity") if "on one node:" in f["message"]]
    (spread,) = findings(plan, "replicas-spread")
    assert spread["path"] == "deployments[0].inference.min_replicas"
    assert "topologyKey: kubernetes.io/hostname" in spread["message"]


def test_a_shared_pool_keeps_the_two_nodes_a_spread_service_needs(tmp_path: Path) -> None:
    """chat (min_replicas 2) and asst fit one DGX's GPUs together; the pool keeps two servers so chat's replicas part."""
    plan = plan_of(tmp_path, HEAD + small("chat", "serving", "\n      min_replicas: 2") + small("asst") + DGX)
    assert pool_of(plan, "chat") == pool_of(plan, "asst")
    (pool,) = plan["pools"]
    assert pool["nodes"] == 2


def test_co_located_services_keep_the_two_nodes_a_spread_service_needs(tmp_path: Path) -> None:
    """Without pool names the planner co-locates them where it saves servers; the spread still holds."""
    plan = plan_of(tmp_path, HEAD + small("chat", None, "\n      min_replicas: 2") + small("asst", None) + DGX)
    assert [p["nodes"] for p in plan["pools"] if "chat" in p["deployments"]] == [2]


def test_the_gke_upgrade_warning_is_at_the_deployment_and_names_the_field(tmp_path: Path) -> None:
    """A one-replica service on one GKE node: the warning was at kubernetes.gcp_project and offered no field; then it
    named min_replicas 2, which spread the replicas but kept no rate (newuser63 item 3): nodes_down_tolerated."""
    plan = plan_of(tmp_path, HEAD + small("other", None) + small("chat", None) + "hardware:\n  provider: gcp\n" + GKE)
    warned = sorted((f["path"], f["message"].split(" runs on")[0]) for f in findings(plan, "node-down-capacity"))
    assert warned == [
        ("deployments[0].inference", "deployment other: its one replica"),
        ("deployments[1].inference", "deployment chat: its one replica"),
    ]
    assert all("set inference.nodes_down_tolerated: 1" in f["message"] for f in findings(plan, "node-down-capacity"))


def test_one_owned_server_and_nothing_bought_is_no_feasible_plan_that_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The second node is a requirement: with one owned server and ``buy: false`` the plan fails (exit 3) and says so."""
    inventory = "  buy: false\n  inventory:\n    - platform: dgx-h100\n      count: 1\n"
    path = tmp_path / "w.yaml"
    path.write_text(HEAD + small("chat", None, "\n      min_replicas: 2") + DGX + inventory, encoding="utf-8")
    with pytest.raises(SystemExit) as exited:
        main(["plan", str(path)])
    err = capsys.readouterr().err
    assert exited.value.code == 3
    assert "2 x TP1 on 2 x dgx-h100 (8 x h100-sxm5-80gb) (min_replicas spreads them) needs 2 servers; 1 owned" in err


def test_one_pool_on_servers_of_two_gpu_counts_names_the_count(tmp_path: Path) -> None:
    """Deployments of one pool on 8- and 4-GPU XE7740s (TP8, TP4) were refused as one name (exit 1); each is a pool.

    The first deployment's servers keep ``<pool>_<gpu>`` (fuzz22 item 4); the other's name their count.
    """
    service = "  - name: {name}\n    model: meta-llama/Llama-3.1-8B-Instruct\n    pool: p\n    parallelism: {{tp: {tp}}}\n"
    service += "    inference: {{precision: bf16, max_context_tokens: 8192, requests_per_second: 1}}\n"
    hardware = "hardware:\n  gpus: [h100-nvl-94gb]\n  platforms: [dell-xe7740]\n  provider: baremetal\n"
    plan = plan_of(tmp_path, HEAD + service.format(name="a", tp=8) + service.format(name="b", tp=4) + hardware)
    assert (pool_of(plan, "a"), pool_of(plan, "b")) == ("p_h100_nvl_94gb", "p_dell_xe7740_4x_h100_nvl_94gb")


PACKED = """\
version: 1
name: platform-eks
deployments:
  - name: chat70
    model: meta-llama/Llama-3.3-70B-Instruct
    inference: {precision: fp8, kv_cache_precision: fp8, max_context_tokens: 32768, avg_input_tokens: 3000,
                avg_output_tokens: 400, requests_per_second: 9, slo: {ttft_p95_ms: 1500, tpot_ms: 35}}
  - name: moe
    model: Qwen/Qwen3-30B-A3B
    inference: {precision: fp8, max_context_tokens: 32768, avg_input_tokens: 2000, avg_output_tokens: 500,
                requests_per_second: 8, slo: {ttft_p95_ms: 1000, tpot_ms: 30}}
hardware: {provider: aws, gpus: [h100-sxm5-80gb]}
objective: cost
kubernetes: {location: us-east-1}
"""


def test_replicas_of_different_widths_that_fit_only_packed_are_warned_of(tmp_path: Path) -> None:
    """newuser31 item 4: 3 TP4 and 2 TP1 replicas on two 8-GPU nodes fit only as 4+4 and 4+1+1; the TP1 pods placed
    first on different nodes leave 7 + 7 GPUs and the third TP4 replica Pending. chat70 at 9 req/s (was 10: three TP4
    replicas of 3.425 req/s at 97% of their places wait for one past the TTFT target, newuser72 item 6, and a fourth
    took the pool apart)."""
    path = tmp_path / "w.yaml"
    path.write_text(PACKED)
    plan = plan_workload(load_workload(str(path)))
    (pool,) = plan.pools
    widths = sorted({d.tp * d.pp for d in plan.deployments})
    assert pool.nodes == 2 and widths == [1, 4]
    (finding,) = [f for f in plan.findings if f.code == "pool-packing"]
    assert finding.level == "warning"
    assert finding.message.startswith(
        f"pool {pool.name}: its 2 nodes hold the replicas of chat70, moe (4-GPU, 1-GPU) only packed as planned"
    )
    # one narrow replica placed first leaves 7 GPUs on its node: the three TP4 replicas still fit
    path.write_text(PACKED.replace("requests_per_second: 8,", "requests_per_second: 2,"))
    looser = plan_workload(load_workload(str(path)))
    assert sorted((d.name, d.replicas) for d in looser.deployments) == [("chat70", 3), ("moe", 1)]
    assert [f for f in looser.findings if f.code == "pool-packing"] == []


AMD_PACKED = """\
version: 1
name: pack
deployments:
  - name: chat
    pool: shared
    model: meta-llama/Llama-3.3-70B-Instruct
    inference: {precision: fp8, kv_cache_precision: fp8, max_context_tokens: 16384, avg_input_tokens: 1500,
                avg_output_tokens: 400, requests_per_second: 10, slo: {ttft_p95_ms: 1500, tpot_ms: 50}}
  - name: coder
    pool: shared
    model: Qwen/Qwen2.5-32B-Instruct
    inference: {max_context_tokens: 32768, avg_input_tokens: 3000, avg_output_tokens: 150,
                requests_per_second: 7, slo: {ttft_p95_ms: 800, tpot_ms: 30}}
hardware: {provider: baremetal, gpus: [mi300x-192gb]}
outputs: [kubernetes]
"""


def test_the_packing_advice_names_the_pools_own_gpu_resource(tmp_path: Path) -> None:
    """newuser103 item 1: on owned MI300X nodes the advice said to weight nvidia.com/gpu, a resource those nodes never
    advertise (theirs is amd.com/gpu), and that a Karpenter NodePool launches a node more, which kubeadm nodes lack."""
    path = tmp_path / "w.yaml"
    path.write_text(AMD_PACKED)
    plan = plan_workload(load_workload(str(path)))
    (finding,) = [f for f in plan.findings if f.code == "pool-packing"]
    assert "score nodes MostAllocated with amd.com/gpu weighted" in finding.message
    assert "nvidia.com/gpu" not in finding.message and "Karpenter" not in finding.message
    assert "that replica stays Pending: schedule the widest replicas first" in finding.message


@pytest.mark.parametrize(
    ("widths", "nodes", "strands"),
    [([4, 4, 4, 1, 1], 2, True), ([4, 4, 4, 1], 2, False), ([4, 4, 1, 1], 2, False), ([2, 2, 2, 4, 4, 1, 1], 2, True)],
)
def test_a_replica_is_stranded_where_narrow_pods_spread_first(widths: list[int], nodes: int, strands: bool) -> None:
    assert strands_a_replica(widths, nodes, 8) is strands
