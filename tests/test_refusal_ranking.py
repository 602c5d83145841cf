"""A refusal's suggestions, ranked by what they unblock (fix113: newuser76 items 9 and 11, fix107's leftovers).

- Owned servers stating no GPU fabric (``fabric_nic_count: 0``, 25 Gb/s between them): a layout over more of them than
  are owned was said as "needs 4 servers; 2 owned are free ... list more owned servers", though the same servers
  listed four times are refused "multi-node work needs at least 100 Gb/s"; the optimizer suggestion that plans one
  server was cut off the end of the long refusal of four.
- A refusal with network reasons leads with the network's fix, memory reasons beside them or not; the lighter
  suggestion found after it says when it plans over the same front end, and is ranked below that fix.
- The owned kind's "not usable by" tail no longer repeats the reasons the refusal opens with.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.api import plan_file
from generator.errors import SpecgenError

MIXTRAL = """version: 1
name: bm-mixtral
deployments:
  - name: mixft
    model: mistralai/Mixtral-8x7B-v0.1
    training:
      method: full
      framework: deepspeed
      sequence_length: 4096
      global_batch_size: 128
      dataset_tokens: 2000000000
      epochs: 1
      deadline_hours: 120
{optimizer}hardware:
  provider: baremetal
  buy: false
  inventory:
    - platform: dell-xe9680-hgx-h100-h200
      gpu: h100-sxm5-80gb
      count: {count}
{fabric}outputs: [ansible]
"""
NO_FABRIC = "      fabric_nic_count: 0\n"
#: An InfiniBand NIC a GPU, as the refusal's network fix says (the owned group's fabric_nic / fabric_nic_count).
FABRIC = "      fabric_nic: connectx-7-400g-ib\n      fabric_nic_count: 8\n"
EIGHT_BIT = "      optimizer: adamw-8bit\n"

GKE_70B = """version: 1
name: gke70
deployments:
  - name: sft70
    model: meta-llama/Llama-3.1-70B-Instruct
    training:
      method: full
      framework: fsdp2
      sequence_length: 8192
      global_batch_size: 64
      dataset_tokens: 500000000
      epochs: 2
      deadline_hours: 72
      runs_per_month: 1
hardware:
  gpus: [{gpus}]
  provider: gcp
kubernetes:
  location: us-east4
  zone: us-east4-a
  gcp_project: my-proj
{nets}outputs: [kubernetes, terraform]
"""
#: fix145: the search tries the parameters offloaded where memory sets the degree, which plans the H100 job on one
#: a3-megagpu-8g (56.4 h, $5,240 a run); the refusals below are of the job that refuses it.
NO_OFFLOAD = GKE_70B.replace("framework: fsdp2", "framework: fsdp2\n      offload_params: false")
NETS = "  gpu_networks:\n    gcp-a3-megagpu-8g:\n" + "".join(
    f"      - {{network: gpunic-{i}, subnetwork: gpunic-{i}}}\n" for i in range(1, 9)
)


def _refusal(path: Path, text: str) -> str:
    path.write_text(text)
    with pytest.raises(SpecgenError) as err:
        plan_file(str(path))
    return str(err.value)


def _planned(path: Path, text: str) -> dict[str, object]:
    path.write_text(text)
    (job,) = plan_file(str(path))[1].deployments
    return job.details


@pytest.mark.parametrize("count", [2, 4])
def test_owned_servers_without_a_fabric_are_not_told_to_list_more_of_them(tmp_path: Path, count: int) -> None:
    path = tmp_path / "w.yaml"
    said = _refusal(path, MIXTRAL.format(optimizer="", count=count, fabric=NO_FABRIC))
    # the 4-server layout over 25 Gb/s is not said as servers short (was "103.8 h needs 4 servers; 2 owned are free")
    assert "needs 4 servers" not in said and "list more owned servers" not in said
    assert "has 25 Gb/s between nodes (no GPU fabric, as hardware.inventory states)" in said
    advice = said[said.index("to unblock: ") :]
    assert advice.startswith("to unblock: for the network between servers: a GPU fabric NIC of 100 Gb/s or more on them")
    # one server fails on memory, not on time: the lighter job, not a later deadline, puts it within one server
    assert "or a layout within one server (a lighter job whose states one server holds: " in advice
    assert "within one server (a later deadline_hours)" not in advice
    # the suggestion that plans is said whole, right after the network's fix, ahead of the memory levers
    # acc107: $1,912/month, 17.06 h -> $1,917/month, 19.27 h (eager elementwise operators / NF4 0.5);
    # acc111 / acc117: -> $1,925/month, 23.35 h (eager kernel launches, grouped_mm routing passes and expert GEMM rate):
    # the same suggestion on the same server
    # acc113: $1,917/month, 19.27 h -> $1,918/month, 19.75 h (the eager loss's passes over Mixtral's fp32 logits, the
    # launch costs refitted): the same suggestion on the same server
    # session 42 merge, acc113 with acc117: $1,918/month, 19.75 h -> $1,925/month, 23.37 h: acc117's compute 17.5324 s a
    # step (was 14.4579 s in acc113's branch) + acc113's eager operators 2.2893 s (2.2667 s in acc117's) + optimizer
    # 0.0314 s = 19.8531 s, 23.35 h x 19.8531 / 19.8305 = 23.37 h; the same suggestion on the same server
    found = "; with optimizer: adamw-8bit set in the training of deployment mixft, the workload plans $1,925/month, "
    assert found + "mixft on 1 x dell-xe9680-hgx-h100-h200 (8 x h100-sxm5-80gb), 23.37 h a run; else " in advice
    assert "characters left out" not in said
    # and each way said plans: the optimizer on one owned server, the fabric NIC on the owned servers
    one = _planned(path, MIXTRAL.format(optimizer=EIGHT_BIT, count=count, fabric=NO_FABRIC))
    assert one["world_size"] == 8 and one["hours"] == 23.37  # acc107: 17.06 -> 19.27; acc113: 19.75; with acc117: 23.37
    wide = _planned(path, MIXTRAL.format(optimizer="", count=count, fabric=FABRIC))
    assert wide["hosts"] == 2 and "GPU fabric" in str(wide["inter_node_link"])


def test_the_owned_kinds_tail_does_not_repeat_the_reasons_said(tmp_path: Path) -> None:
    said = _refusal(tmp_path / "w.yaml", MIXTRAL.format(optimizer="", count=4, fabric=NO_FABRIC))
    reason = "selective activation checkpointing (searched) takes 415 h with its communication, past the 120 h deadline"
    assert said.count(reason) == 1  # was twice: in the reasons and again after "not usable by mixft:"
    assert said.endswith("owned and free (hardware.buy is false, so no more are bought; not usable by mixft: the reasons above)")


def test_a_lighter_job_over_the_primary_nic_is_said_so_and_ranked_below_the_gpu_nics(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    said = _refusal(path, NO_OFFLOAD.format(gpus="h100-sxm5-80gb", nets=""))
    advice = said[said.index("to unblock: ") :]
    assert advice.startswith("to unblock: for the network between the nodes: attach the GPU NICs the reasons name")
    # acc198: $4,263.59, 11.47 h and 19.46 s of compute (84%) before FSDP2's non-reentrant recompute skipped each
    # block's down projection
    fused = (
        "; short of that fix: with loss: fused set in the training of deployment sft70, the workload plans $0/month and "
        "$4,004.83 a training run, sft70 on 4 x gcp-a3-megagpu-8g (8 x h100-sxm5-80gb), 10.77 h a run, over the 200 Gb/s "
        "primary NIC: communication 16.44 s a step against 18.28 s of compute (90%)"
    )
    assert fused in advice and advice.index("kubernetes.gpu_networks") < advice.index(fused)
    # of the memory levers only the lighter method moves fewer bytes between the nodes; the others are not offered
    assert advice.endswith("; else LoRA/QLoRA (adapter gradients alone cross)")
    assert "offload_params" not in advice and "shorter sequence_length" not in advice and "characters left out" not in said
    # each plans: the GPU NICs (4 x a3-mega over them), LoRA (one node)
    nics = _planned(path, GKE_70B.format(gpus="h100-sxm5-80gb", nets=NETS))
    assert nics["hosts"] == 4 and "GPU NICs of the instance" in str(nics["inter_node_link"])
    lora = _planned(path, GKE_70B.format(gpus="h100-sxm5-80gb", nets="").replace("method: full", "method: lora"))
    assert lora["method"] == "lora"


def test_a_refusal_of_network_and_memory_reasons_leads_with_the_network(tmp_path: Path) -> None:
    # the L4 holds no layout (memory), the H100 instances are refused on the primary NIC (network): that fix plans it
    path = tmp_path / "w.yaml"
    said = _refusal(path, NO_OFFLOAD.format(gpus="h100-sxm5-80gb, l4-24gb", nets=""))
    advice = said[said.index("to unblock: ") :]
    assert advice.startswith("to unblock: for the network between the nodes: attach the GPU NICs the reasons name")
    assert advice.index("short of that fix: with loss: fused") < advice.index("; else allow a GPU with more memory")
    assert _planned(path, NO_OFFLOAD.format(gpus="h100-sxm5-80gb, l4-24gb", nets=NETS))["hosts"] == 4


def test_a_plan_over_a_front_end_is_said_with_its_link_and_share_of_compute(tmp_path: Path) -> None:
    from generator.planner.lighter_training import front_end_said

    # what the suggestion (and the training-fits-lighter finding) adds to a plan it names: the fused-loss job over the
    # primary NIC, nothing over the GPU NICs or within one node
    path = tmp_path / "w.yaml"
    fused = GKE_70B.replace("framework: fsdp2", "framework: fsdp2\n      loss: fused")
    path.write_text(fused.format(gpus="h100-sxm5-80gb", nets=""))
    assert front_end_said(plan_file(str(path))[1], 0) == (  # 19.46 s (84%) before acc198
        ", over the 200 Gb/s primary NIC: communication 16.44 s a step against 18.28 s of compute (90%)"
    )
    path.write_text(fused.format(gpus="h100-sxm5-80gb", nets=NETS))
    assert front_end_said(plan_file(str(path))[1], 0) == ""
    path.write_text(GKE_70B.format(gpus="h100-sxm5-80gb", nets="").replace("method: full", "method: lora"))
    assert front_end_said(plan_file(str(path))[1], 0) == ""
