"""A TP group on a fully connected board reaches only the links to its own GPUs (newuser30 item 1).

MI300X / MI325X and Gaudi 3 boards join every pair of their 8 GPUs directly (one xGMI link, three RoCE ports), and the
HGX H100 4-GPU board (Dell XE8640) its 4 without NVSwitch: a group of k GPUs crosses k - 1 of each GPU's n - 1 peer
links. RCCL counts 4 MI300X at "maxBw 48.0 totalBw 144.0" (https://github.com/ROCm/rccl/issues/1210): 3 of 7 links of
the 336 GB/s the catalog holds for 8. Every TP group was timed at the 8-GPU figure (TP4 2.3x, TP2 7x too fast), and
the lab's chat purchase rested on it. On an NVSwitch board (HGX 8, the clouds' 8-GPU instances) a group of any size
keeps the whole link.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import catalog
from generator.api import plan_file
from generator.sizing.performance import accelerator_for, peer_link_share


@pytest.mark.parametrize(
    ("group", "mesh", "share"),
    [
        (1, 8, 1.0),
        (2, 8, 1 / 7),
        (4, 8, 3 / 7),
        (8, 8, 1.0),
        (2, 4, 1 / 3),
        (4, 4, 1.0),
        (16, 8, 1.0),  # beyond the board: not a group inside it
        (2, None, 1.0),  # a switched fabric
        (4, None, 1.0),
    ],
)
def test_peer_link_share(group: int, mesh: int | None, share: float) -> None:
    assert peer_link_share(group, mesh) == pytest.approx(share, rel=1e-12)


@pytest.mark.parametrize(
    ("gpu_id", "platform_id", "tp", "link_gb_per_s"),
    [
        ("mi300x-192gb", "dell-xe9680-mi300x", 2, 48.0),  # RCCL: 48 GB/s a link and direction
        ("mi300x-192gb", "dell-xe9680-mi300x", 4, 144.0),  # RCCL issue 1210's totalBw for 4
        ("mi300x-192gb", "dell-xe9680-mi300x", 8, 336.0),
        ("mi325x-256gb", "dell-xe9680-mi300x", 4, 144.0),
        ("gaudi3-128gb", "dell-xe9680-gaudi3", 4, 225.0),  # 3 x 75 GB/s: 3 RoCE ports of 200 Gb/s to each peer
        ("h100-sxm5-80gb", "dell-xe8640", 2, 370.8 / 3),  # 6 of an H100's 18 NVLinks join it to each peer
        ("h100-sxm5-80gb", "dell-xe8640", 4, 370.8),
        ("h100-sxm5-80gb", "dgx-h100", 2, 370.8),  # NVSwitch: the whole link whatever the group
        ("h100-sxm5-80gb", "dgx-h100", 4, 370.8),
    ],
)
def test_a_tp_groups_link_is_its_share_of_the_board(gpu_id: str, platform_id: str, tp: int, link_gb_per_s: float) -> None:
    platform = catalog.platforms()[platform_id]
    gpu = platform.fitted_gpu(catalog.gpus()[gpu_id])
    acc = accelerator_for(gpu, "bf16", tp)
    assert acc.fast_link
    assert acc.link_gb_per_s == pytest.approx(link_gb_per_s, rel=1e-9)


def test_the_plan_says_what_a_group_reaches(tmp_path: Path) -> None:
    path = tmp_path / "mi300.yaml"
    path.write_text(
        "version: 1\nname: lab\ndeployments:\n  - name: chat\n    model: meta-llama/Llama-3.3-70B-Instruct\n"
        "    parallelism: {tp: 4, pp: 1}\n    inference: {precision: fp8, kv_cache_precision: fp8, max_context_tokens: "
        "16384, avg_input_tokens: 6000, avg_output_tokens: 400, requests_per_second: 1.8, slo: {ttft_p95_ms: 2000, "
        "tpot_ms: 50}}\nhardware:\n  provider: baremetal\n  gpus: [mi300x-192gb]\n  platforms: [dell-xe9680-mi300x]\n"
    )
    (dep,) = plan_file(str(path))[1].deployments
    (split,) = [r for r in dep.reasons if r.startswith("split over 4 GPUs (TP4)")]
    assert split.startswith("split over 4 GPUs (TP4), 144 GB/s per direction over Infinity Fabric (what NCCL/RCCL count on;")
    assert split.endswith(
        "the 8 GPUs of its board are linked pairwise, no switch between them, so a group of 4 reaches 3/7 of each GPU's links"
    )
