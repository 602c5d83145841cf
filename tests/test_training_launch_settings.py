"""What a training job's launcher must be configured with reaches spec.json and the group vars (newuser23 item 10).

The memory and the step time are sized for a framework, a loss, activation offload, optimizer in backward, fused
kernels, FlashAttention and a LoRA job's rank, dropout and targets: a launcher configured otherwise would not fit the
memory sized. And a layout that splits layers, planned with no framework named, says which frameworks run it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.planner import plan_workload
from generator.render.ansible import render_ansible
from generator.sizing.frameworks import framework_profile, frameworks_running
from generator.workload import load_workload
from tests.helpers import ansible_reader

JOB = """\
version: 1
name: tune
deployments:
  - name: tune
    model: meta-llama/Llama-3.1-8B-Instruct
    training: {{method: lora, lora_rank: 32, lora_target_modules: [q_proj, v_proj], sequence_length: 4096{extra}}}
hardware:
  gpus: [h100-sxm5-80gb]
"""


def _training_vars(tmp_path: Path, extra: str) -> dict[str, Any]:
    path = tmp_path / "w.yaml"
    path.write_text(JOB.format(extra=extra))
    loaded = load_workload(str(path))
    plan = plan_workload(loaded)
    files = render_ansible(plan, loaded.workload)
    (group_vars,) = (ansible_reader().load(text) for name, text in files.items() if "group_vars" in name)
    (entry,) = group_vars["specgen_deployments"]
    return dict(entry["training"])


@pytest.mark.parametrize("framework", [None, "torchtune", "unsloth"])
def test_the_group_vars_carry_what_the_job_is_sized_with(tmp_path: Path, framework: str | None) -> None:
    extra = f", framework: {framework}" if framework else ""
    if framework == "torchtune":
        extra += ", optimizer: adamw-bf16"
    training = _training_vars(tmp_path, extra)
    profile = framework_profile(framework) if framework else None
    assert training.get("framework") == framework
    assert (training["lora_rank"], training["lora_dropout"], training["lora_target_modules"]) == (32, 0.0, ["q_proj", "v_proj"])
    # the framework's own defaults where the job sets none
    assert training["loss"] == (profile.loss if profile else "standard")
    assert training["fused_kernels"] is (profile.fused_kernels if profile else False)
    assert training["flash_attention"] is True and training["optimizer_in_backward"] is (
        profile.optimizer_in_backward if profile else False
    )


def test_a_full_fine_tune_carries_no_adapter_settings(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(
        JOB.format(extra="").replace("method: lora, lora_rank: 32, lora_target_modules: [q_proj, v_proj], ", "method: full, ")
    )
    (dep,) = plan_workload(load_workload(str(path))).deployments
    assert "lora_rank" not in dep.details and dep.details["loss"] == "standard"


SPLIT = """\
version: 1
name: tp
deployments:
  - name: tune
    model: meta-llama/Llama-3.3-70B-Instruct
    training: {{method: lora, sequence_length: 4096, dataset_tokens: 100000000{extra}}}
    parallelism: {{tp: 2}}
hardware:
  gpus: [h100-sxm5-80gb]
"""


@pytest.mark.parametrize(("extra", "said"), [("", True), (", framework: megatron", False)])
def test_a_split_layout_without_a_framework_names_those_that_run_it(tmp_path: Path, extra: str, said: bool) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(SPLIT.format(extra=extra))
    (dep,) = plan_workload(load_workload(str(path))).deployments
    note = [r for r in dep.reasons if r.startswith("no framework given")]
    assert note == (
        ["no framework given: TP2 x PP1 runs under torchtune or megatron only (the other frameworks split no layers); set "
         "training.framework to plan for the one you launch"] if said else []
    )  # fmt: skip


def test_the_frameworks_that_run_a_split() -> None:
    assert frameworks_running(1, 1, "lora")[:3] == ["hf", "trl", "trl+liger"]
    assert frameworks_running(2, 1, "lora") == ["torchtune", "megatron"]
    assert frameworks_running(2, 2, "full") == ["megatron"]
    assert frameworks_running(2, 1, "qlora") == []
