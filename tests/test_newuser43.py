"""newuser43: a fine-tuning persona's report (items 1, 10 and 11 here; item 8 in ``test_estimate_train_time``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.errors import InfeasibleError
from generator.planner import plan_workload
from generator.planner.plan import Plan
from generator.workload import load_workload

#: The report's ``c1.yaml``: a 32B full fine-tune at a fixed recipe batch of 64 on rented H100.
C1 = """\
version: 1
name: ft-cloud
deployments:
  - name: qwen-full
    model: Qwen/Qwen2.5-32B
    training:
      method: full
      framework: {framework}
      zero_stage: 3
      sequence_length: 4096
      global_batch_size: {batch}
      dataset_tokens: 500000000
      epochs: 1
      deadline_hours: 24
hardware:
  gpus: [h100-sxm5-80gb]
  provider: {provider}
outputs: [terraform, kubernetes]
"""


def _plan(tmp_path: Path, text: str) -> Plan:
    path = tmp_path / "c1.yaml"
    path.write_text(text, encoding="utf-8")
    return plan_workload(load_workload(str(path)))


@pytest.mark.parametrize(
    ("framework", "provider", "platform", "usd_per_job"),
    [
        ("deepspeed", "aws", "aws-p5-48xlarge", 570.35),
        ("fsdp2", "aws", "aws-p5-48xlarge", 570.35),
        ("deepspeed", "gcp", "gcp-a3-highgpu-8g", None),
    ],
)
def test_a_batch_whose_accumulation_breaks_the_smallest_dp_is_planned_wider(
    tmp_path: Path, framework: str, provider: str, platform: str, usd_per_job: float | None
) -> None:
    """Item 1: DP8 fits at one micro-batch a step, not at the batch's 8; only DP8 was tried and the job refused.

    DP16 over two 8-GPU servers splits the batch of 64 into 4 sequences a rank, which fit.
    """
    plan = _plan(tmp_path, C1.format(framework=framework, batch=64, provider=provider))
    (dep,) = plan.deployments
    (pool,) = plan.pools
    details = dep.details
    assert (pool.node.platform_id, pool.nodes) == (platform, 2)
    assert (details["world_size"], details["data_parallel"], details["zero_stage"]) == (16, 16, 3)
    assert (details["micro_batch_size"], details["gradient_accumulation_steps"], details["global_batch_size"]) == (2, 2, 64)
    assert details["gradient_checkpointing"] == "full"
    assert details["hours"] == 5.18
    if usd_per_job is not None:
        assert details["usd_per_job"] == usd_per_job
    assert dep.memory_per_gpu["total"] / 2**30 == pytest.approx(60.7, abs=0.05)
    # without the batch, DP8 (one micro-batch a step) is the smallest that fits: the batch is what widened it
    (alone,) = _plan(tmp_path, C1.format(framework=framework, batch=64, provider=provider).replace(
        "      global_batch_size: 64\n", "")).deployments  # fmt: skip
    assert alone.details["data_parallel"] == 8


def test_a_batch_smaller_than_the_ranks_that_hold_the_job_says_so_and_offers_no_rack_power(tmp_path: Path) -> None:
    """Item 1, the hint: a cloud was told to add "rack power", which it refuses; the batch was not named."""
    with pytest.raises(InfeasibleError) as refused:
        _plan(tmp_path, C1.format(framework="deepspeed", batch=4, provider="aws"))
    said = str(refused.value)
    assert "TP1 ZeRO-3: DP8 is more ranks than the global batch of 4 sequences" in said
    assert said.endswith(
        "to unblock: allow a GPU with more memory, LoRA/QLoRA, parameter offload (offload_params: true), or a shorter "
        "sequence_length; for the global batch of 4: a global_batch_size of at least one sequence for each of the "
        "data-parallel ranks said above (a multiple of them), or leave it out"
    )
    assert "rack power" not in said
    with pytest.raises(InfeasibleError) as refused:
        _plan(tmp_path, C1.format(framework="deepspeed", batch=4, provider="baremetal"))
    assert "a shorter sequence_length, or more rack power / max_nodes; for the global batch of 4: " in str(refused.value)


def test_an_accumulation_that_fits_at_no_width_asks_for_a_lower_batch(tmp_path: Path) -> None:
    """Item 1, the hint: where no micro-batch of a rank's accumulation fits at any width tried, a lower batch."""
    from generator.calculator.model_source import resolve_model
    from generator.planner import _unblock_hint
    from generator.planner.blocked import NO_LAYOUT, Blocked

    path = tmp_path / "c1.yaml"
    path.write_text(C1.format(framework="deepspeed", batch=64, provider="aws"), encoding="utf-8")
    dep = load_workload(str(path)).workload.deployments[0]
    why = "TP1 ZeRO-3 x DP8: no micro-batch of 1, 2, 4, 8 sequence(s) fits"
    blocked = [Blocked("h100-sxm5-80gb", "aws-p5-48xlarge", NO_LAYOUT, why)]
    hint = _unblock_hint(dep, resolve_model(dep.model), blocked, racks=False)
    assert hint.endswith(
        "or a shorter sequence_length; for the global batch of 64: a lower global_batch_size (fewer micro-batches a "
        "rank accumulates, whose gradients it holds across them), or leave it out"
    )
