"""newuser51 (multi-node training on rented clouds): items 1-6 and 8.

Item 1: Megatron's grad buffer was overlapped with the activations at ZeRO-1 with one micro-batch (a 70B layout shown
at 72.8 GiB a GPU held about 104 GiB). Item 2: each GPU's data-parallel bytes were timed over the whole node's network
where TP8 leaves it an eighth. Item 3: a ZeRO 0-1 gradient pass was hidden behind every micro-batch's compute, though it
runs after the last one's backward. Item 4: nothing said AKS pods reach the VMs' InfiniBand only once configured.
Item 5: a cloud job's checkpoints on its nodes' local NVMe go with the nodes, and the spot finding called two kept
checkpoints one. Item 6: a fully recomputed layer's TP collectives were counted once. Item 8: the between-nodes seconds
of a step were named the step's communication.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import catalog
from generator.api import plan_as_deployed
from generator.planner.plan import Plan
from generator.planner.training_comm import links_between
from generator.sizing.constants import Constants
from generator.sizing.training_step import BACKWARD_SHARE, StepTime
from tests.helpers import estimate_json

MEGATRON_70B = (
    "meta-llama/Llama-3.1-70B-Instruct", "--train", "full", "--gpu", "h100-sxm5-80gb", "--gpus", "40", "--framework",
    "megatron", "--tp", "8", "--seq-len", "8192", "--micro-batch", "1", "--zero", "1", "--gradient-checkpointing", "none",
)  # fmt: skip


def test_megatrons_grad_buffer_sits_beside_every_activation() -> None:
    """One micro-batch or two, the whole grad buffer is allocated when Megatron wraps the model: the activations
    (31.82 GiB at TP8 without recomputation) add to it, 104.07 GiB a GPU, which an 80 GB H100 does not hold."""
    one, two = (estimate_json(*MEGATRON_70B, "--accumulation", steps)["memory"]["per_gpu"] for steps in ("1", "2"))
    assert one["activations"] == two["activations"]
    assert round(one["activations"] / 2**30, 2) == 31.82
    assert round(one["total"] / 2**30, 2) == 104.07


@pytest.mark.parametrize(("tp", "pp", "share"), [(1, 1, 1), (2, 1, 2), (8, 1, 8), (4, 4, 4), (1, 4, 1)])
def test_a_gpus_data_parallel_share_of_the_node_network(tp: int, pp: int, share: int) -> None:
    """Each TP rank of a stage has a data-parallel group of its own, its ranks ``tp`` apart; the groups on a node share
    the node's network (a p5's 3,200 Gb/s: 400 a GPU at TP8), one group a node's GPUs (TP1) sends the whole.

    review79 item 4, Megatron's order tp-cp-ep-dp-pp: TP4 x PP4 x DP4 on 8-GPU nodes puts a stage (16 GPUs) on two
    nodes, each node 2 DP ranks of each of the 4 TP ranks' groups: 4 share it (the replica order's 8 had the stages
    side by side on one node); TP1 x PP4 x DP16: a stage's 16 GPUs are one group over two nodes, 3,200 Gb/s each."""
    gpu = catalog.find_gpu("h100-sxm5-80gb")
    links = links_between(gpu, 8, 8, 3200.0, tp, pp, 64 // (tp * pp), Constants())
    assert links.dp_inter_gbps == pytest.approx(3200.0 / share)


def test_a_zero1_gradient_pass_hides_behind_the_last_micro_batchs_backward_only() -> None:
    step = StepTime(
        compute_s=4.0, tp_allreduce_s=0.0, pp_transfer_s=0.0, pp_bubble_s=0.0, dp_comm_s=1.0, dp_inter_node_s=1.0,
        tp_bytes=0.0, pp_bytes=0.0, dp_bytes=1.0, dp_overlap_s=4.0 / 4 * BACKWARD_SHARE,
    )  # fmt: skip
    # 4 micro-batches of 1 s: the all-reduce overlaps the last one's 0.667 s of backward pass
    assert step.dp_exposed_s == pytest.approx(1.0 - 2 / 3)
    every = StepTime(4.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0)  # ZeRO 2-3: through every micro-batch
    assert every.dp_exposed_s == 0.0


AZURE_JOB = """\
version: 1
name: az-sft
deployments:
  - name: sft32
    model: Qwen/Qwen2.5-32B-Instruct
    training:
      method: full
      framework: deepspeed
      zero_stage: 3
      sequence_length: 8192
      global_batch_size: 128
      dataset_tokens: 2000000000
      epochs: 2
      deadline_hours: 48
      runs_per_month: 2
CAPACITYhardware:
  provider: azure
  gpus: [h100-sxm5-80gb]
outputs: [kubernetes]
"""


def _plan(tmp_path: Path, capacity: str = "") -> Plan:
    path = tmp_path / "w.yaml"
    path.write_text(AZURE_JOB.replace("CAPACITY", capacity), encoding="utf-8")
    return plan_as_deployed(str(path))[1]  # as plan and render report it: with the render's findings


def test_a_job_across_aks_nodes_says_what_reaches_the_infiniband(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    (pool,) = plan.pools
    assert pool.nodes > 1 and pool.node.platform_id == "azure-standard-nd96isr-h100-v5"
    (said,) = [f for f in plan.findings if f.code == "aks-infiniband"]
    assert (said.level, said.path) == ("warning", "kubernetes")
    assert "the NVIDIA Network Operator with its OFED driver and an RDMA device plugin" in said.message
    (job,) = plan.deployments
    assert "comm_between_nodes_s_per_step" in job.details and "comm_s_per_step" not in job.details


@pytest.mark.parametrize(("gpu", "library"), [("h100-sxm5-80gb", "NCCL"), ("mi300x-192gb", "RCCL")])
def test_the_tcp_fallback_names_the_collective_library_of_the_gpus(tmp_path: Path, gpu: str, library: str) -> None:
    """newuser77 item 8: a job over two ND MI300X v5 read "without them NCCL falls back to TCP"; AMD's is RCCL."""
    path = tmp_path / "w.yaml"
    text = (
        AZURE_JOB.replace("CAPACITY", "")
        .replace("h100-sxm5-80gb", gpu)
        .replace("Qwen/Qwen2.5-32B-Instruct", "meta-llama/Llama-3.3-70B-Instruct")
    )
    path.write_text(text, encoding="utf-8")
    plan = plan_as_deployed(str(path))[1]
    assert plan.pools[0].nodes > 1
    (said,) = [f for f in plan.findings if f.code == "aks-infiniband"]
    assert f"none of which specgen renders: without them {library} falls back to TCP" in said.message


def test_a_cloud_jobs_checkpoints_on_local_nvme_are_said_to_go_with_its_nodes(tmp_path: Path) -> None:
    """32.76 B trainable parameters at 14 bytes a checkpoint (458.7 GB), 2 kept, sharded over the job's 4 nodes."""
    plan = _plan(tmp_path, "    capacity_type: spot\n")
    (job,) = plan.deployments
    nodes = plan.pools[0].nodes
    one = job.details["checkpoint_bytes_per_node"] / job.details["checkpoints_kept"]
    (said,) = [f for f in plan.findings if f.code == "checkpoints-on-instance-store"]
    assert (said.level, said.path) == ("warning", "deployments[0]")
    assert f"(2 kept, {one / 1e9:,.1f} GB a node each, {one * nodes / 1e9:,.1f} GB a checkpoint over {nodes} node(s))" in (
        said.message
    )
    assert "(Blob Storage, or Azure Managed Lustre)" in said.message
    (spot,) = [f for f in plan.findings if f.code == "training-on-spot"]
    assert f"(a checkpoint: {one / 1e9:,.1f} GB a node" in spot.message


def test_a_fully_recomputed_layer_runs_its_tp_collectives_again() -> None:
    """Item 6: full recomputation reruns each layer's forward, its two TP collectives with it: 6 a layer, not 4."""
    args = (
        "meta-llama/Llama-3.1-8B", "--train", "full", "--gpu", "h100-sxm5-80gb", "--gpus", "8", "--framework", "megatron",
        "--tp", "2", "--seq-len", "4096", "--micro-batch", "1", "--accumulation", "8", "--zero", "1",
        "--gradient-checkpointing",
    )  # fmt: skip
    full, selective = (estimate_json(*args, level)["training_speed"]["step_time"] for level in ("full", "selective"))
    # bytes and collectives alike: the TP term's seconds (exposed share and per-collective latency) scale by 6 / 4
    assert full["tp_allreduce_s"] == pytest.approx(1.5 * selective["tp_allreduce_s"], abs=0.001)
