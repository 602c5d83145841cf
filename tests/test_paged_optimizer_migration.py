"""A paged optimizer's states cycle through the GPU every step once they do not all fit (newuser76 item 3, acc125).

torchtune's single-device full fine-tune pages bitsandbytes' PagedAdamW8bit states (2 bytes a parameter) to host RAM.
Llama 3.1 8B on one RTX 4090: 8,030,261,248 x 2 B = 16.06 GB of states against the card's 25.39 GB (CUDA's 24,210 MiB,
the whole card: unified memory is evicted only when it runs out, not at the plan's 5 % margin), of which the step's own
memory takes 19.14 GB: the states do not all fit, and as the driver evicts the 2 MB chunk populated longest ago while
backward visits the parameters in the same order every step, every state is evicted before it is needed again: all
16.06 GB come in and go out each step. At PCIe Gen4 x16's 31.5 GB/s x 0.8 (pcie_efficiency) = 25.2 GB/s, one direction
(each block's copy in beside the next block's eviction): 16.06 / 25.2 = 0.637 s, in series with the 1.258 s of compute.
Before acc125: only the 11.09 GB beyond the plan's margin, in then out, 0.880 s.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any, cast

import pytest

from generator.catalog import find_gpu
from generator.catalog.records import GpuSpec
from generator.sizing.constants import Constants
from generator.sizing.training import TrainingMemory
from generator.sizing.training_offload import HostOffload, OffloadBytes, paged_migration_bytes
from tests.conftest import calibration_report
from tests.helpers import run_estimate

ARGS = ["meta-llama/Llama-3.1-8B", "--train", "full", "--framework", "torchtune", "--gpu", "rtx-4090-24gb"]
ARGS += ["--seq-len", "2048"]
PAGED = 8_030_261_248 * 2  # PagedAdamW8bit: two 8-bit moments a parameter


def test_every_paged_state_is_timed_through_the_host_link_once_they_do_not_all_fit() -> None:
    code, out = run_estimate(*ARGS, "--json")
    assert code == 0
    result = json.loads(out)
    link = 31.5 * Constants().pcie_efficiency  # the 4090's PCIe Gen4 x16, per direction
    assert result["training"]["host_ram_bytes_per_gpu"] == PAGED
    card = find_gpu("rtx-4090-24gb").memory_bytes
    assert card == 24_210 * 2**20  # the whole card, not capacity.usable_bytes (its 95 %)
    held = result["memory"]["per_gpu"]["total"]
    assert held + PAGED > card  # 19.14 + 16.06 GB on 25.39 GB: the states do not all fit
    step = result["training_speed"]["step_time"]
    assert step["paged_optimizer_migration_s"] == pytest.approx(PAGED / (link * 1e9), abs=1e-4)  # 0.637 s
    # acc104: the GPU's own optimizer step in series, 8.03B parameters of 8-bit AdamW over bf16 weights (2 + 2 x (2 + 2)
    # = 10 bytes each) at the 4090's 1,008 GB/s
    assert step["optimizer_step_s"] == pytest.approx(8_030_261_248 * 10 / 1008e9, abs=1e-4)
    parts = step["compute_s"] + step["paged_optimizer_migration_s"] + step["optimizer_step_s"]
    assert step["total_s"] == pytest.approx(parts, abs=1e-3)
    # 1.258 s before the migration was counted, 2.110 s before the optimizer step (acc104), 2.190 s at 24,564 MiB,
    # 2.218 s with 11.09 GB in then out (acc125: every state, one direction's time, at the whole card), 1.975 s before
    # the GeForce card's half-rate MMAs hid half the losses beside them (acc135: compute 1.258 -> 0.987 s)
    assert step["total_s"] == pytest.approx(1.704, abs=1e-3)
    summary = result["training_speed"]["step_summary"]
    assert "paged optimizer states 0.637 s (16.1 GB per GPU: the states do not all fit" in summary


def test_states_that_fit_on_the_card_move_nothing_and_states_that_do_not_all_move() -> None:
    gpu = _gpu(16e9)
    assert paged_migration_bytes(_memory(total=10e9, paged=4e9), gpu) == 0.0  # 6 GB free holds the 4 GB of states
    assert paged_migration_bytes(_memory(total=12e9, paged=4e9), gpu) == 0.0  # exactly the card
    assert paged_migration_bytes(_memory(total=14e9, paged=4e9), gpu) == pytest.approx(4e9)  # 2 GB short: all cycle
    assert paged_migration_bytes(_memory(total=17e9, paged=4e9), gpu) == pytest.approx(4e9)
    assert paged_migration_bytes(_memory(total=17e9, paged=0.0), gpu) == 0.0  # no paged optimizer
    host = HostOffload(bytes=OffloadBytes(paged_bytes=2e9), link_gb_per_s=25.0)
    assert host.paged_s == pytest.approx(0.08)  # 2 GB at 25 GB/s: in beside out, on the link's two directions


@pytest.mark.parametrize("gpu", ["rtx-4090-24gb", "rtx-a6000-48gb"])
def test_the_calibration_report_times_the_planners_migration(gpu: str) -> None:
    """The report's torchtune single-device full rows time what the estimate plans for the same job (acc125: the
    report had timed none); their LoRA rows page nothing."""
    report = calibration_report()
    rows = [r for r in report.json.loads(report.DATA.read_text())["training_throughput"] if _torchtune_on(r, gpu)]
    by_method = {r["method"]: r for r in rows}
    consts = report.with_overrides({})
    full, lora = by_method["full"], by_method["lora"]
    arch = report.parse_architecture(report.find_model(full["model"]).config)
    host = report.finetune_offload(full, arch, find_gpu(gpu), consts)
    job = ["--seq-len", str(full["seq_len"]), "--micro-batch", str(full["micro_batch"])]
    job += ["--gradient-checkpointing", full["checkpointing"]]
    code, out = run_estimate(*ARGS[:-3], gpu, *job, "--json")
    assert code == 0
    planned = json.loads(out)["training_speed"]["step_time"]["paged_optimizer_migration_s"]
    assert host.bytes.paged_bytes == PAGED
    assert host.paged_s == pytest.approx(planned, abs=1e-4)
    assert report.finetune_offload(lora, arch, find_gpu(gpu), consts).paged_s == 0.0


def _torchtune_on(row: dict[str, Any], gpu: str) -> bool:
    return bool(row.get("framework") == "torchtune" and row["gpu"] == gpu and row["gpus"] == 1)


def _memory(total: float, paged: float) -> TrainingMemory:
    """A memory record with only what :func:`paged_migration_bytes` reads."""
    return cast(TrainingMemory, SimpleNamespace(paged_state_bytes=paged, per_gpu=SimpleNamespace(total=total)))


def _gpu(memory_bytes: float) -> GpuSpec:
    """A GPU record with only what :func:`paged_migration_bytes` reads."""
    return cast(GpuSpec, SimpleNamespace(memory_bytes=memory_bytes))
