"""newuser25 item 7: on a two-socket owned server the checklist predicted one NUMA node's RAM less the model (110.84 GiB)
for ``free -g``, which reads the whole machine (about 495 GiB of 768), and the 32 GiB reserve was split 16 + 16 over
the nodes without a word. The reserve is now kept whole on the model's node, and the checklist predicts what each
command reads: ``free -g`` the whole machine, ``numactl -H`` the model's node."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.api import plan_file
from generator.units import GIB
from tests.helpers import estimate_json

#: The user's machine: 2 x EPYC 9654, 768 GiB, 32 GiB reserved, 2 x RTX PRO 6000; the model offloads to RAM.
TWO_SOCKETS = """\
version: 1
name: colo-235b
deployments:
  - name: big
    model: Qwen/Qwen3-235B-A22B
    inference: {max_context_tokens: 32768, avg_input_tokens: 4000, avg_output_tokens: 800, requests_per_second: 0.005}
hardware:
  provider: baremetal
  fixed: {gpu: rtx-pro-6000-blackwell-96gb, gpu_count: 2, ram_gib: 768, reserved_ram_gib: 32, nvme_gib: 3000,
          nvme_read_gb_per_s: 12, cpu: epyc-9654, cpu_sockets: SOCKETS}
"""


def _rows(checklist: list[dict[str, str]]) -> dict[str, str]:
    return {row["item"]: row["predicted"] for row in checklist}


def _gib(n: float) -> float:
    return round(n / GIB, 2)


@pytest.mark.parametrize(("sockets", "node_gib"), [(2, 384), (1, 768)])
def test_the_checklist_predicts_what_free_reads_and_the_reserve_is_kept_whole(
    tmp_path: Path, sockets: int, node_gib: int
) -> None:
    path = tmp_path / "colo.yaml"
    path.write_text(TWO_SOCKETS.replace("SOCKETS", str(sockets)))
    plan = plan_file(str(path))[1]
    (dep,) = plan.deployments
    off: dict[str, Any] = dep.details["offload"]
    used = off["ram_used_bytes"]
    rows = _rows(dep.details["checklist"])
    # free -g reads the whole machine: 768 GiB less the model, not one node's 384 (110.84 GiB before the fix)
    assert rows["RAM left for the other services"] == f"{_gib(768 * GIB - used):g} GiB of 768 (less what the OS takes)"
    # the 32 GiB reserve counted whole on the model's node (16 GiB before the fix: 94.84 GiB free beyond it)
    assert off["ram_free_after_reserve_bytes"] == node_gib * GIB - 32 * GIB - used
    if sockets == 2:
        assert rows["RAM left on NUMA node 0 (the model's)"] == f"{_gib(384 * GIB - used):g} GiB of 384"
        (note,) = [f.message for f in plan.findings if f.code == "one-socket-bandwidth"]
        assert "the 32 GiB reserve (reserved_ram_gib) is kept whole on that node, not split over the 2 nodes" in note
    else:
        assert "RAM left on NUMA node 0 (the model's)" not in rows


def test_the_estimate_says_the_same_on_two_sockets() -> None:
    data = estimate_json("Qwen/Qwen3-235B-A22B", "--gpu", "rtx-pro-6000-blackwell-96gb", "--gpus", "2", "--ram-gib",
                         "768", "--reserved-ram-gib", "32", "--cpu", "epyc-9654", "--cpu-sockets", "2", "--context",
                         "32768", "--nvme-gib", "3000")  # fmt: skip
    used = data["offload"]["ram_used_bytes"]
    rows = _rows(data["checklist"])
    assert rows["RAM left for the other services"].startswith(f"{_gib(768 * GIB - used):g} GiB of 768")
    assert rows["RAM left on NUMA node 0 (the model's)"] == f"{_gib(384 * GIB - used):g} GiB of 384"
    assert data["offload"]["ram_free_after_reserve_bytes"] == 384 * GIB - 32 * GIB - used
