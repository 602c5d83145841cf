"""fix154 item 3: a training job's host RAM reason gives the OS reserve, what the job holds beyond it, their sum, and
says ``host_ram_bytes_per_node`` is the part beyond the reserve.

newuser87: finetune-8b-qlora's ``host_ram_bytes_per_node: 10,000,000,000`` sat beside "16 GiB kept for the OS and its
processes + 4.66 GiB ... x 2 GPUs" with nothing saying the figure leaves the OS's 16 GiB out. Each node needs
16 GiB + 2 x 5 GB (one safetensors shard a GPU's process, memory-mapped) = 16 + 9.31 = 25.31 GiB.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.api import plan_file
from generator.planner.host_ram_reason import host_ram_reason
from generator.sizing.constants import Constants

REPO = Path(__file__).resolve().parent.parent
GIB = 2**30


@pytest.mark.parametrize(
    ("os_bytes", "beyond", "total", "part"),
    [
        (16 * GIB, 10_000_000_000, "25.31", "9.31"),
        (16 * GIB, 131_051_765_760, "138.05", "122.05"),
        (8 * GIB, 0, "8.00", "0.00"),
    ],
)
def test_the_reason_sums_the_reserve_and_what_is_held_beyond_it(os_bytes: int, beyond: int, total: str, part: str) -> None:
    text = host_ram_reason(os_bytes, beyond, "X")
    reserve = f"{os_bytes / GIB:g}"
    assert text == (
        f"host RAM per node: {reserve} GiB kept for the OS and its processes + X = {total} GiB; host_ram_bytes_per_node "
        f"({beyond:,} B, {part} GiB) is the part beyond the OS's {reserve} GiB"
    )
    assert float(total) == pytest.approx((os_bytes + beyond) / GIB, abs=0.005)


def test_finetune_8b_qlora_says_its_host_ram_figure_leaves_the_os_reserve_out() -> None:
    _, plan = plan_file(str(REPO / "examples" / "finetune-8b-qlora.yaml"))
    (job,) = [d for d in plan.deployments if d.kind == "training"]
    beyond = job.details["host_ram_bytes_per_node"]
    assert beyond == 10_000_000_000  # 2 GPUs x one 5 GB shard as it loads
    (reason,) = [r for r in job.reasons if r.startswith("host RAM per node:")]
    reserve = Constants().host_os_ram_bytes
    assert reserve == 16 * GIB
    summed = re.search(r"x 2 GPUs = ([\d.]+) GiB; host_ram_bytes_per_node \(10,000,000,000 B, 9\.31 GiB\)", reason)
    assert summed is not None, reason
    assert float(summed.group(1)) == pytest.approx((reserve + beyond) / GIB, abs=0.005) == 25.31
    assert "is the part beyond the OS's 16 GiB" in reason
