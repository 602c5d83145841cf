"""fix121: note55's leftovers (fix117's two "else"s; the 2 x RTX 3090 tower's PCIe lanes; chained jobs' DIMMs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.api import plan_file
from generator.errors import SpecgenError
from generator.planner.unblock_ways import in_turn
from tests.test_fix117 import HOME_FT


def test_a_mixed_owned_and_bought_refusal_says_its_alternativesin_turn(tmp_path: Path) -> None:
    """Before: "...or leave it out; else for the network ...; else allow ..." (two "else"s; fix117's leftover)."""
    path = tmp_path / "w.yaml"
    path.write_text(HOME_FT.format(batch=7).replace("  buy: false\n", "  gpus: [rtx-4090-24gb]\n"))
    with pytest.raises(SpecgenError) as err:
        plan_file(str(path))
    advice = str(err.value)[str(err.value).index("to unblock: ") :]
    assert advice.count("else") == 1, advice
    assert advice.startswith(
        "to unblock: for the global batch of 7: a global_batch_size of 6 or 8 (a multiple of the data-parallel ranks "
        "said above, whose split fits), or leave it out; else for the network between the nodes: allow an instance or "
        "platform with a GPU fabric between nodes, or fewer nodes (a GPU with more memory); failing both, allow a GPU "
        "with more memory, LoRA/QLoRA, "
    ), advice


def test_alternativesin_turn() -> None:
    assert in_turn("a", "") == "a"
    assert in_turn("a", "b") == "a; else b"
    assert in_turn("a", "b; else c") == "a; else b; failing both, c"
    assert in_turn("a", "b; else c; else d") == "a; else b; failing those, c; failing those, d"


def test_the_estimates_assumed_3090_tower_has_the_planned_x8_slots() -> None:
    """Before: "over PCIe Gen4 x16 a GPU" (5.200 s of host-link copies) on the assumed AM5 tower with two RTX 3090s,
    where the plan of the same tower (golden finetune-8b-deepspeed-home) times x8 a GPU: AM5's 16 GPU lanes from the
    CPU split x8/x8 for two cards (cpus.json gpu_slot_lanes, sourced)."""
    from generator.sizing.constants import Constants
    from generator.sizing.performance import pcie_gb_per_s
    from tests.helpers import estimate_json

    data = estimate_json(
        "Qwen/Qwen3-8B", "--train", "full", "--framework", "deepspeed", "--zero", "3", "--offload-optimizer", "--gpu",
        "rtx-3090-24gb", "--gpus", "2", "--seq-len", "4096", "--micro-batch", "1", "--accumulation", "16",
    )  # fmt: skip
    speed = data["training_speed"]
    offload = speed["cpu_offload"]
    assert offload["host"].startswith("over PCIe Gen4 x8 a GPU and am5-desktop-tower's 1 x AMD Ryzen 9 7950X")
    # every byte over the GPU's x8 link at the planner's PCIe efficiency: 139.2 GB at 12.6 GB/s
    x8 = pcie_gb_per_s(4, 8) * Constants().pcie_efficiency
    assert speed["step_time"]["host_link_copies_s"] == pytest.approx(offload["host_link_gb_per_step"] / x8, rel=1e-3)
    # the plan's figures for the same job on the same tower (4090s, also PCIe Gen4): 10.401 s exposed + 0.650 s after
    assert speed["step_time"]["host_link_exposed_s"] == pytest.approx(0.650, abs=0.001)
    assert speed["step_time"]["host_link_copies_s"] == pytest.approx(10.401 + 0.650, abs=0.002)


def test_the_offload_host_text_names_the_servers_own_ram_where_it_set_two_dimms_a_channel() -> None:
    """review78 item 8: "two DIMMs a channel to hold the job's host RAM" was said where the server's RAM as built (or
    owned) set them, whatever the job holds. No catalog server shows it (checked: none as built runs two a channel), so
    the AM5 tower as owned with 192 GiB stands in: 4 x 48 GiB, DDR5-3600 whatever the job's RAM."""
    from generator import catalog
    from generator.calculator.training_time import offload_host_text
    from generator.planner.nodes import node_dram_mt_per_s
    from generator.sizing.constants import Constants

    tower, gpu = catalog.platforms()["am5-desktop-tower"], catalog.gpus()["rtx-3090-24gb"]
    cpu = catalog.cpus()[tower.cpu_id or ""]
    owned = tower._replace(ram_as_owned=True, ram_gib=192)
    mt = node_dram_mt_per_s(owned, cpu, gpu, 2, 0, Constants())  # no host RAM held by the job at all
    assert mt == 3600 < cpu.ddr_mt_per_s
    said = offload_host_text(gpu, 2, (owned, cpu, 1, mt))
    assert "DRAM at DDR5-3600, two DIMMs a channel to hold the server's 192 GiB as built (DDR5-5200 at one)" in said
    assert "the job's host RAM" not in said
    # a tower the plan builds: the job's RAM chose them (the estimate's assumed tower, test_offload_dimm_speed)
    built = offload_host_text(gpu, 2, (tower, cpu, 1, mt))
    assert "two DIMMs a channel to hold the job's host RAM (DDR5-5200 at one)" in built


#: A ZeRO-Offload job on a desktop tower the plan builds, then (run_after) one that holds more host RAM.
CHAIN = """version: 1
name: home-chain
deployments:
  - name: small
    model: google/gemma-3-1b-it
    training: {method: full, framework: deepspeed, zero_stage: 3, offload_optimizer: true, sequence_length: 4096,
               global_batch_size: 32, dataset_tokens: 20000000, epochs: 1}
  - name: big
    model: Qwen/Qwen3-8B
    training: {method: full, framework: deepspeed, zero_stage: 3, offload_optimizer: true, sequence_length: 4096,
               global_batch_size: 32, dataset_tokens: 20000000, epochs: 1, run_after: small}
hardware:
  provider: baremetal
  gpus: [rtx-4090-24gb]
  platforms: [am5-desktop-tower]
"""


def test_a_chained_job_is_timed_at_the_dimms_its_pool_is_built_with(tmp_path: Path) -> None:
    """review78 item 9: small's own 14.9 GiB would keep one DIMM a channel (DDR5-5200, its CPU step 0.479 s at 62.56
    GB/s), but the pool is built for big's 122 GiB: 4 x 48 GiB at DDR5-3600, two a channel. Its CPU AdamW step moves 30
    B a parameter (the bf16 gradient read, the bf16 weight and 12 B of fp32 states read and written) over Gemma 3 1B's
    999,885,952 parameters (ZeRO-3 over 2 GPUs: half each, both on one host's DRAM) at 46.28 GB/s: 0.648 s."""
    from generator.planner import plan_workload
    from generator.workload import load_workload
    from tests.test_offload_dimm_speed import DDR5_3600, STEP_BYTES_PER_PARAM

    path = tmp_path / "w.yaml"
    path.write_text(CHAIN)
    plan = plan_workload(load_workload(str(path)))
    (pool,) = plan.pools
    assert pool.node.ram_gib == 192 and "4 x 48 GiB DDR5-3600 UDIMM (2 per channel" in (pool.node.memory or "")
    small, big = plan.deployments
    expected = 2 * (999_885_952 / 2) * STEP_BYTES_PER_PARAM / (DDR5_3600 * 1e9)
    assert small.details["step_time"]["cpu_optimizer_step_s"] == pytest.approx(expected, abs=2e-4)
    assert big.details["step_time"]["cpu_optimizer_step_s"] == pytest.approx(5.3096, abs=1e-4)  # its own: unchanged
    assert small.details["finishes_at_hours"] == pytest.approx(small.details["hours"], abs=0.005)  # the chain timed so
