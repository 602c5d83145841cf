"""fix193: review98's bugs 1-2, newuser108's and fix192's left-outs.

1. The estimate's ``upgrade`` line named the workload field (``ram_gib 256 is more than ...``, ``give pcie_lanes``)
   where the user gave ``--ram-gib`` / ``--pcie-lanes``.
2. The larger ``--gpu-memory-utilization`` was offered only where the KV memory is short, not where the weights leave
   none at vLLM's 0.9 (Qwen2.5-72B int4 on 2 x RTX 3090: 19.31 GiB of weights a GPU; 0.95 starts it).
3. ``estimate --train --framework megatron`` assumed full checkpointing (9,118 GPU-hours for Llama-3.1-8B continued
   pre-training on 64 H100s) unsaid, where a plan sizes none for the same job (newuser108).
4. ``hosts.yml.example`` named only ``hardware.inventory[].hosts`` for a fixed machine's placeholder.
"""

from __future__ import annotations

from generator.api import render_file
from generator.calculator.machine import FixedSpec, gpus_beyond_cpu_slots
from tests.conftest import REPO
from tests.helpers import estimate_json, run_estimate

AM4 = ("Qwen/Qwen3-235B-A22B", "--precision", "q4_k_m", "--gpu", "rtx-3090-24gb", "--gpus", "2", "--context", "16384",
       "--input-tokens", "1000", "--output-tokens", "300", "--cpu", "ryzen-9-5950x", "--ram-gib", "128")  # fmt: skip


def test_upgrade_lines_name_the_estimates_options() -> None:
    gpu, ram = estimate_json(*AM4)["upgrades"]
    assert ram["why"].startswith("--ram-gib 256 is more than ")
    assert gpu["note"].endswith("give --pcie-lanes as the machine wires them")
    _, text = run_estimate(*AM4)
    assert "ram_gib 256" not in text and "give pcie_lanes" not in text


def test_the_workload_keeps_its_field_names() -> None:
    spec = FixedSpec(gpu="rtx-3090-24gb", gpu_count=3, ram_gib=128, cpu="ryzen-9-5950x")
    assert (gpus_beyond_cpu_slots(spec) or "").endswith("give pcie_lanes as the machine wires them")


QWEN_72B = ("Qwen/Qwen2.5-72B-Instruct", "--precision", "int4", "--gpu", "rtx-3090-24gb", "--tp", "2", "--context",
            "2048")  # fmt: skip


def test_a_larger_memory_fraction_is_offered_where_the_weights_leave_no_kv() -> None:
    cap = estimate_json(*QWEN_72B)["capacity"]
    assert not cap["vllm_log"]["starts"] and cap["kv_cache_bytes"] <= 0  # the weights leave none at 0.9
    higher = cap["vllm_log"]["utilization_starts"]
    assert higher["gpu_memory_utilization"] == 0.95
    at = estimate_json(*QWEN_72B, "--gpu-memory-utilization", "0.95")["capacity"]
    assert at["vllm_log"]["starts"] and at["kv_cache_tokens"] == higher["kv_cache_tokens"]
    _, text = run_estimate(*QWEN_72B)
    assert "leave none: --gpu-memory-utilization 0.95 (it starts, " in text
    assert "add GPUs" in text  # the other remedies stay


CPT_8B = ("meta-llama/Llama-3.1-8B", "--train", "full", "--framework", "megatron", "--gpu", "h100-sxm5-80gb", "--gpus",
          "64", "--tp", "2", "--zero", "1", "--seq-len", "8192", "--dataset-tokens", "200000000000")  # fmt: skip


def test_the_estimate_says_the_checkpointing_a_plan_would_size() -> None:
    """newuser108: full checkpointing assumed (9,118 GPU-hours) where the plan sizes none (the job fits without it).

    fix194: the estimate now takes the plan's level (fix193 said it beside full): 6,929 GPU-hours at none, 40.6% MFU.
    """
    result = estimate_json(*CPT_8B)
    speed = result["training_speed"]
    assert result["training"]["checkpointing"] == "none"
    assert result["training"]["checkpointing_chosen"] == ["none", "selective", "full"]  # the levels that fit
    none = estimate_json(*CPT_8B, "--gradient-checkpointing", "none")["training_speed"]
    full = estimate_json(*CPT_8B, "--gradient-checkpointing", "full")["training_speed"]
    assert speed["run"]["gpu_hours"] == none["run"]["gpu_hours"] < full["run"]["gpu_hours"] * 0.8
    assert speed["model_flops_utilization"] == none["model_flops_utilization"] > full["model_flops_utilization"]
    _, text = run_estimate(*CPT_8B)
    assert "checkpointing none: the fastest of the levels that fit this GPU (none, selective, full), as a plan" in text


def test_no_level_is_chosen_where_the_level_is_given() -> None:
    assert "checkpointing_chosen" not in estimate_json(*CPT_8B, "--gradient-checkpointing", "full")["training"]
    assert "checkpointing_chosen" not in estimate_json(*CPT_8B, "--gradient-checkpointing", "none")["training"]


def test_a_fixed_machines_placeholder_points_at_host_name() -> None:
    example = render_file(str(REPO / "examples" / "home-2x3090-moe.yaml"))["ansible/hosts.yml.example"]
    header = example.split("---\n", 1)[0]
    assert "# home_2x3090_rtx_3090_24gb: the hardware.fixed machine; or name it in the workload:" in header
    assert "hardware.fixed.host_name (and address, its ansible_host)" in header
    # a bought pool's placeholders keep the header as it was
    bought = render_file(str(REPO / "examples" / "pretrain-colo-h100.yaml")).get("ansible/hosts.yml.example", "")
    assert "hardware.fixed" not in bought
