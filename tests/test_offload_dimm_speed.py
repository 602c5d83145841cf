"""newuser76 item 13: ZeRO-Offload's CPU optimizer step was timed at the CPU's one-DIMM rating while the plan built
the host with two DIMMs a channel, which run slower.

``specgen plan home-2x4090.yaml`` (Qwen3-8B full fine-tune, DeepSpeed ZeRO-3 + ``offload_optimizer``, an owned AM5
tower with 2 x RTX 4090) built "4 x 48 GiB DDR5-3600 UDIMM (2 per channel ...)" for its 138 GiB of host RAM and timed
the CPU step at the Ryzen 9 7950X's DDR5-5200 (83.2 GB/s): 3.928 s. The step now runs at the DIMMs the plan builds, and
where one DIMM a channel holds what the job keeps in host memory the build keeps them at their full speed rather than
adding a second a channel for the model files' page cache. Figures worked by hand below.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import catalog
from generator.planner import plan_workload
from generator.planner.bom import fill_channels
from generator.sizing.constants import Constants
from generator.workload import load_workload
from tests.helpers import estimate_json

CONSTS = Constants()
#: Qwen3-8B's parameters (its config.json, as the catalog counts them).
QWEN3_8B = 8_190_735_360
#: Mistral 7B v0.3's.
MISTRAL_7B = 7_248_023_552
#: DRAM bytes a CPU AdamW step moves per parameter with bf16 weights and gradients and 12 B of fp32 master copy and
#: moments: the gradient read (2), the weight and states read and written (2 x 14).
STEP_BYTES_PER_PARAM = 2 + 2 * (2 + 12)


def _read_gb_per_s(channels: int, mt_per_s: int) -> float:
    """A socket's DRAM as the CPU step streams it: channels x MT/s x 8 B at 95%, beside the 300 GB/s ceiling."""
    theoretical = channels * mt_per_s * 8 / 1000
    return 1 / (1 / (theoretical * CONSTS.ddr_bandwidth_efficiency) + 1 / CONSTS.cpu_weight_read_ceiling_gb_per_s)


#: 2 x 3,600 x 8 B = 57.6 GB/s, at 95% 54.72, with the ceiling 46.28 GB/s; 2 x 5,200 x 8 B = 83.2 GB/s -> 62.56 GB/s.
DDR5_3600 = _read_gb_per_s(2, 3600)
DDR5_5200 = _read_gb_per_s(2, 5200)


def _workload(tmp_path: Path, model: str, gpus: int, ram: str = "") -> Path:
    path = tmp_path / "w.yaml"
    path.write_text(
        "version: 1\nname: home\ndeployments:\n  - name: sft\n"
        f"    model: {model}\n"
        "    training: {method: full, framework: deepspeed, zero_stage: 3, offload_optimizer: true,\n"
        "               sequence_length: 4096, global_batch_size: 32, dataset_tokens: 20000000, epochs: 3}\n"
        "hardware:\n  provider: baremetal\n  buy: false\n  inventory:\n"
        f"    - {{platform: am5-desktop-tower, gpu: rtx-4090-24gb, gpus_per_server: {gpus}, count: 1{ram}}}\n"
    )
    return path


def test_the_cpu_step_runs_at_the_two_dimm_speed_the_plan_builds(tmp_path: Path) -> None:
    """Two GPUs hold 122.05 GiB of states + 16 GiB for the OS = 139 GiB: more than 2 x 64 GiB, so 4 DIMMs at DDR5-3600.

    Each of the 2 ranks steps its half of 8,190,735,360 parameters at 30 B: 245.72 GB through the host's DRAM at once,
    at 46.28 GB/s: 5.3096 s (it was 3.928 s at DDR5-5200's 62.56 GB/s).
    """
    plan = plan_workload(load_workload(str(_workload(tmp_path, "Qwen/Qwen3-8B", 2))))
    (pool,) = plan.pools
    assert pool.node.memory is not None
    assert pool.node.memory.startswith("4 x 48 GiB DDR5-3600 UDIMM (2 per channel")
    (dep,) = plan.deployments
    step = dep.details["step_time"]
    expected = 2 * (QWEN3_8B / 2) * STEP_BYTES_PER_PARAM / (DDR5_3600 * 1e9)
    assert expected == pytest.approx(5.3096, abs=1e-4)
    assert step["cpu_optimizer_step_s"] == pytest.approx(expected, abs=1e-4)
    assert any(f"CPU optimizer step {expected:.3f} s at {DDR5_3600:.1f} GB/s of host DRAM" in r for r in dep.reasons)


def test_one_dimm_a_channel_is_kept_where_it_holds_what_the_job_keeps_in_host_memory(tmp_path: Path) -> None:
    """One GPU of Mistral 7B: 108.0 GiB of states + 16 GiB = 124 GiB fits 2 x 64 GiB at DDR5-5200; the 14.5 GB of model
    files would push it to 4 DIMMs at DDR5-3600 for page cache alone, which the CPU step would pay every step.

    7,248,023,552 x 30 B = 217.44 GB at 62.56 GB/s: 3.4759 s.
    """
    plan = plan_workload(load_workload(str(_workload(tmp_path, "mistralai/Mistral-7B-Instruct-v0.3", 1))))
    (pool,) = plan.pools
    assert pool.node.ram_gib == 128
    assert pool.node.memory is not None
    assert pool.node.memory.startswith("2 x 64 GiB DDR5-5200 UDIMM (1 per channel, 2 channels; DDR5-5200 kept for")
    assert "takes 2 a channel, at DDR5-3600" in pool.node.memory
    (dep,) = plan.deployments
    expected = MISTRAL_7B * STEP_BYTES_PER_PARAM / (DDR5_5200 * 1e9)
    assert dep.details["step_time"]["cpu_optimizer_step_s"] == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize(
    ("ram_gib", "read_gb_per_s"),
    [
        pytest.param(192, DDR5_3600, id="192-GiB-takes-two-a-channel"),  # 2 x 64 GiB cannot hold it
        pytest.param(128, DDR5_5200, id="128-GiB-one-a-channel"),  # the fewest DIMMs that hold it
    ],
)
def test_an_owned_towers_stated_ram_sets_the_speed(tmp_path: Path, ram_gib: int, read_gb_per_s: float) -> None:
    """RAM given under hardware.inventory is counted as a machine given by its RAM is: the fewest DIMMs that hold it."""
    path = _workload(tmp_path, "mistralai/Mistral-7B-Instruct-v0.3", 1, f", ram_gib: {ram_gib}")
    (dep,) = plan_workload(load_workload(str(path))).deployments
    expected = MISTRAL_7B * STEP_BYTES_PER_PARAM / (read_gb_per_s * 1e9)
    assert dep.details["step_time"]["cpu_optimizer_step_s"] == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize(
    ("cpu_id", "wanted", "keep", "text", "mt_per_s"),
    [
        # what the job keeps fits one a channel: kept at DDR5-5200, the page cache given up
        (
            "ryzen-9-7950x",
            138,
            124,
            "2 x 64 GiB DDR5-5200 UDIMM (1 per channel, 2 channels; DDR5-5200 kept for the CPU optimizer step, which "
            "streams host memory each step: the 138 GiB wanted to cache the model files too takes 2 a channel, at "
            "DDR5-3600)",
            5200,
        ),
        # it does not: two a channel, at their rating
        (
            "ryzen-9-7950x",
            150,
            139,
            "4 x 48 GiB DDR5-3600 UDIMM (2 per channel, 2 channels: the rating at 2 a channel, DDR5-5200 at 1)",
            3600,
        ),
        # one a channel holds all that is wanted: the smallest that do, as without the keep
        ("ryzen-9-7950x", 90, 80, "2 x 48 GiB DDR5-5200 UDIMM (1 per channel, 2 channels)", 5200),
        # a server CPU with no slower two-DIMM rating: unchanged
        (
            "epyc-9654",
            3200,
            100,
            "24 x 256 GiB DDR5-4800 (2 per channel, 12 channels; DDR5-4800 is the rating at 1 a channel, the catalog "
            "has none at 2)",
            4800,
        ),
    ],
)  # fmt: skip
def test_fill_channels_keeps_the_rate_for_what_must_be_held(
    cpu_id: str, wanted: int, keep: int, text: str, mt_per_s: int
) -> None:
    layout = fill_channels(catalog.cpus()[cpu_id], 1, wanted, 192 if cpu_id != "epyc-9654" else None, keep)
    assert (layout.text, layout.mt_per_s) == (text, mt_per_s)


def test_the_estimate_times_the_assumed_tower_at_the_dimms_its_host_ram_takes() -> None:
    """An RTX 3090 is assumed in the catalog's AM5 tower; 2 of them on Qwen3-8B hold 139 GiB: DDR5-3600, as the plan."""
    data = estimate_json(
        "Qwen/Qwen3-8B", "--train", "full", "--framework", "deepspeed", "--zero", "3", "--offload-optimizer", "--gpu",
        "rtx-3090-24gb", "--gpus", "2", "--seq-len", "4096", "--micro-batch", "1", "--accumulation", "16",
    )  # fmt: skip
    speed = data["training_speed"]
    expected = 2 * (QWEN3_8B / 2) * STEP_BYTES_PER_PARAM / (DDR5_3600 * 1e9)
    assert speed["step_time"]["cpu_optimizer_step_s"] == pytest.approx(expected, abs=1e-4)
    host = speed["cpu_offload"]["host"]
    assert "Ryzen 9 7950X (Raphael, Zen 4, desktop AM5) DRAM at DDR5-3600, two DIMMs a channel" in host
