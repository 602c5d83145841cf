"""review35 (the training-step and node-cap changes of newuser51 / review34): items 2-5, 7 and 8.

Item 2: a ZeRO 0-1 gradient pass exposed beyond the busy time turned the host-link copies' exposure negative. Item 3:
``precision: fp16`` of Gemma took a T4 without a word. Item 4: aks-infiniband only with a Kubernetes output. Item 5: a
LoRA job's adapters were said sharded over its nodes. Item 7: the backward pass's share was two thirds whatever the
method. Item 8: "(1,600 Gb/s a GPU)" was a data-parallel group's share.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.api import plan_as_deployed
from generator.errors import InfeasibleError
from generator.planner.plan import Plan
from generator.planner.training_comm import StepComm
from generator.sizing.constants import Constants
from generator.sizing.training_step import DpTraffic, StepLayout, StepLinks, StepTime, training_step


def _plan(tmp_path: Path, text: str) -> Plan:
    path = tmp_path / "w.yaml"
    path.write_text(text, encoding="utf-8")
    return plan_as_deployed(str(path))[1]


def test_host_link_copies_are_never_less_than_none_exposed() -> None:
    step = StepTime(
        compute_s=4.0, tp_allreduce_s=0.0, pp_transfer_s=0.0, pp_bubble_s=0.0, dp_comm_s=2.0, dp_inter_node_s=2.0,
        tp_bytes=0.0, pp_bytes=0.0, dp_bytes=1.0, offload_link_s=0.5, dp_overlap_s=0.5,
    )  # fmt: skip
    assert step.dp_exposed_s == pytest.approx(1.5)
    assert step.offload_exposed_s == 0.0  # the copies hide behind the busy time the gradient pass leaves
    assert step.total_s == pytest.approx(4.0 + 1.5)


@pytest.mark.parametrize(("forward", "backward"), [(2.0, 2 / 3), (2.0 / 4 * 6, 1 / 2), (2.0 / 8 * 6, 3 / 4)])
def test_a_gradient_pass_hides_behind_the_backward_share_of_the_flops(forward: float, backward: float) -> None:
    """6 N a token (full): 2/3; 4 N (LoRA): 1/2; 8 N (full recomputation): 3/4 behind the forward's 2 N."""
    layout = StepLayout(1, 1, 2, 1, 4, 1000)
    links = StepLinks(tp_gbps=0.0, stage_gbps=0.0, dp_intra_gbps=8.0)
    step = training_step(
        layout, links, Constants(), hidden_size=1024, num_layers=2, flops_per_token=6.0, base_efficiency=1.0,
        dense_tflops=6e-9 * 4000, dp_traffic=DpTraffic(1.0, 1, once_after_backward=True), forward_flops_per_token=forward,
    )  # fmt: skip
    assert step.dp_overlap_s == pytest.approx(step.compute_s / 4 * backward)


GEMMA = """\
version: 1
name: g
deployments:
  - name: chat
    model: google/gemma-3-1b-it
    inference: {precision: fp16, max_context_tokens: 8192, avg_input_tokens: 1000, avg_output_tokens: 200,
                requests_per_second: 2}
hardware: {provider: aws}
"""


def test_a_model_vllm_refuses_in_float16_is_refused_at_fp16(tmp_path: Path) -> None:
    with pytest.raises(InfeasibleError) as err:
        _plan(tmp_path, GEMMA)
    assert "vLLM refuses gemma3_text in float16 (numerical instability): serve it in bf16" in str(err.value)


AZURE_JOB = """\
version: 1
name: az
deployments:
  - name: tune
    model: METHOD_MODEL
    training: {method: METHOD, framework: deepspeed, sequence_length: 8192, global_batch_size: 128,
               dataset_tokens: 2000000000, epochs: 2, deadline_hours: 48}
hardware:
  provider: azure
  gpus: [h100-sxm5-80gb]
outputs: [terraform]
"""


def test_infiniband_on_aks_is_said_with_terraform_alone(tmp_path: Path) -> None:
    plan = _plan(tmp_path, AZURE_JOB.replace("METHOD_MODEL", "Qwen/Qwen2.5-32B-Instruct").replace("METHOD", "full"))
    assert plan.pools[0].nodes > 1
    assert "aks-infiniband" in {f.code for f in plan.findings}


def test_a_lora_jobs_adapters_are_said_whole_not_sharded(tmp_path: Path) -> None:
    text = AZURE_JOB.replace("METHOD_MODEL", "meta-llama/Llama-3.1-70B-Instruct").replace("METHOD", "lora")
    plan = _plan(tmp_path, text)
    (said,) = [f for f in plan.findings if f.code == "checkpoints-on-instance-store"]
    (job,) = plan.deployments
    one = job.details["checkpoint_bytes_per_node"] / job.details["checkpoints_kept"]
    assert said.level == "info"
    assert f"(2 kept, {one / 1e9:,.2f} GB a checkpoint of the adapters)" in said.message
    assert "shard" not in said.message


def test_a_shared_node_network_is_said_as_each_groups_share() -> None:
    step = StepTime(1.0, 0.0, 0.0, 0.0, 0.1, 0.1, 0.0, 0.0, 1.0)
    comm = StepComm(step, "32 x 100 Gb/s GPU NICs of the instance", "", "", dp_share=(2, 1600.0))
    assert comm.dp_link_text == "32 x 100 Gb/s GPU NICs of the instance, shared by 2 data-parallel groups (1,600 Gb/s each)"
    assert StepComm(step, "8 x 400 Gb/s GPU fabric", "", "").dp_link_text == "8 x 400 Gb/s GPU fabric"
