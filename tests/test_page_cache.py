"""The page cache in front of a memory-mapped model file (newuser38 item 3).

specgen put a fixed set of layers' weights on NVMe and charged every token the routed experts it used there, as if the
page cache kept none of them; with mmap the kernel keeps the most used pages of every layer. The hit-rate function is
checked by hand, the cost against RAM (more RAM never slower) and uniform popularity (the old split's figure), the CLI
by what it says; the published runs are the NVMe group of ``tests/data/calibration.json``
(``benchmarks/calibration_report.py``; ``tests/test_calibration_memory.py`` holds the group to its target).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.catalog import find_model
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.offload import Machine, offload_cost, page_cache_bytes, place
from generator.sizing.page_cache import (
    expert_cache_hit_rate,
    expert_use_chances,
    paged_reads,
    routing_popularity_cv,
    step_hit_rate,
)
from generator.sizing.precision import weight_format
from generator.units import GIB
from tests.helpers import estimate_json, run_estimate

CONSTS = Constants()

#: newuser38 item 3's home rig: RTX 3090 Ti, 96 GB of dual-channel DDR5-6400, a Gen 5 NVMe (Crucial T700, 12.4 GB/s).
RIG = ("deepseek-ai/DeepSeek-R1", "--gpu", "rtx-3090-ti-24gb", "--ram-gib", "96", "--memory-channels", "2",
       "--ddr-mt-per-s", "6400", "--nvme-gib", "2000", "--nvme-read-gb-per-s", "12.4", "--pcie-gen", "4",
       "--precision", "q2_k", "--context", "8192", "--input-tokens", "500", "--output-tokens", "500")  # fmt: skip


@pytest.mark.parametrize("share", [0.0, 0.1, 0.25, 0.5, 0.9, 1.0])
def test_uniform_popularity_serves_the_share_of_the_experts_held(share: float) -> None:
    assert expert_cache_hit_rate(share, 0.0) == pytest.approx(share, abs=1e-12)


@pytest.mark.parametrize(
    ("share", "cv", "hit"),
    [
        # a CV of sqrt(e - 1) makes sigma^2 = ln(1 + e - 1) = 1: the top half of the experts serve Phi(0 + 1) = 0.841345
        (0.5, math.sqrt(math.e - 1), 0.841345),
        # and the top Phi(-1) = 15.8655% of them half the reads: Phi(-1 + 1) = 0.5
        (0.158655, math.sqrt(math.e - 1), 0.5),
        # DeepSeek-R1 on the 96 GB rig: 40% of the experts held at the derived CV 2.17: sigma = sqrt(ln 5.7089) =
        # 1.31986, Phi^-1(0.40) = -0.253347, Phi(1.066512) = 0.856904
        (0.40, 2.17, 0.856904),
        # the ends: nothing held serves nothing, everything held everything, whatever the skew
        (0.0, 2.17, 0.0),
        (1.0, 2.17, 1.0),
    ],
)
def test_skewed_popularity_by_hand(share: float, cv: float, hit: float) -> None:
    assert expert_cache_hit_rate(share, cv) == pytest.approx(hit, abs=2e-6)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(share=st.floats(0.001, 0.999), more=st.floats(0.0, 0.5), cv=st.floats(0.05, 6.0), wider=st.floats(0.0, 3.0))
def test_the_hit_rate_rises_with_the_share_held_and_with_the_skew(share: float, more: float, cv: float, wider: float) -> None:
    hit = expert_cache_hit_rate(share, cv)
    assert share < hit < 1.0  # a skewed popularity: the most popular experts serve more than their share
    assert expert_cache_hit_rate(min(share + more, 1.0), cv) >= hit
    assert expert_cache_hit_rate(share, cv + wider) >= hit


@pytest.mark.parametrize(
    ("experts", "top_k", "cv"),
    [(256, 8, 2.17), (128, 4, 2.17), (8, 2, math.sqrt(3.0)), (1, 1, 0.0)],  # Mixtral: 8 experts, top 2, at most sqrt(3)
)
def test_the_cv_is_capped_at_what_top_k_routing_allows(experts: int, top_k: int, cv: float) -> None:
    assert routing_popularity_cv(2.17, experts, top_k) == pytest.approx(cv)


def test_a_step_of_many_tokens_is_served_less_as_the_rare_experts_are_read_too() -> None:
    """Server slots decoding together read each expert once if any routes to it: the popular ones, held, are shared."""
    chances = expert_use_chances(256, 8, 2.17)
    assert sum(chances) == pytest.approx(8.0) and list(chances) == sorted(chances, reverse=True) and chances[0] < 1
    rates = [step_hit_rate(0.4, 2.17, 256, 8, tokens) for tokens in (1, 2, 8, 64, 512, 100_000)]
    assert rates[0] == expert_cache_hit_rate(0.4, 2.17)  # one token: the closed form
    assert rates == sorted(rates, reverse=True)
    assert rates[-1] == pytest.approx(0.4, abs=1e-6)  # every expert read: the cache serves the share it holds
    assert step_hit_rate(0.4, 0.0, 256, 8, 64) == pytest.approx(0.4)  # uniform popularity: the share, whatever the step


@pytest.mark.parametrize(
    ("cache", "nvme", "cached"),
    [
        # dense 10 kept first; the other 50 hold half the 100 of experts: uniform, half the 8 routed come from NVMe
        (60.0, 4.0, 14.0),
        # a cache short of the dense weights: 4 of them and all 8 routed read from NVMe
        (6.0, 12.0, 6.0),
        # everything held: nothing from NVMe
        (200.0, 0.0, 18.0),
    ],
)
def test_paged_reads_keep_the_dense_weights_first(cache: float, nvme: float, cached: float) -> None:
    reads = paged_reads(dense_bytes=10.0, expert_bytes=100.0, routed_bytes=8.0, cache_bytes=cache, popularity_cv=0.0)
    assert (reads.nvme_bytes, reads.cached_bytes) == pytest.approx((nvme, cached))
    assert reads.nvme_bytes + reads.cached_bytes == pytest.approx(18.0)  # every byte read is found somewhere


def _rig(ram_gib: float) -> Machine:
    return Machine(1, 24 * GIB, 1008.0, 160.0, 31.5, int(ram_gib * GIB), 8 * GIB, 0, 2000 * GIB, 12.4, 102.4, 16.0)


def test_more_ram_never_reads_more_from_nvme_nor_decodes_slower() -> None:
    arch = parse_architecture(find_model("deepseek-ai/DeepSeek-R1").config)
    fmt = weight_format("q2_k")
    speeds, reads, hits = [], [], []
    for ram in (64, 96, 128, 160, 192, 224, 256):
        machine = _rig(ram)
        placement = place(arch, fmt, 16, 8192, machine, CONSTS)
        cost = offload_cost(arch, fmt, 16, placement, machine, 500, CONSTS, 750)
        speeds.append(cost.decode_tokens_per_s)
        reads.append(cost.nvme_bytes_per_token)
        hits.append(cost.paged.hit_rate if cost.paged else 1.0)
    assert speeds == sorted(speeds) and reads == sorted(reads, reverse=True) and hits == sorted(hits)
    assert reads[0] > 0 and reads[-1] == 0  # 256 GiB hold the 226 GiB file: nothing left on NVMe


def test_server_slots_read_more_from_nvme_a_step_than_one_stream() -> None:
    arch = parse_architecture(find_model("deepseek-ai/DeepSeek-R1").config)
    fmt = weight_format("q2_k")
    machine = _rig(96)
    placement = place(arch, fmt, 16, 8192, machine, CONSTS)
    steps = [offload_cost(arch, fmt, 16, placement, machine, 500, CONSTS, 750, streams) for streams in (1, 4, 16)]
    reads = [step.nvme_bytes_per_token for step in steps]
    hits = [step.paged.hit_rate for step in steps if step.paged]
    assert reads == sorted(reads) and hits == sorted(hits, reverse=True) and len(hits) == 3


def test_uniform_popularity_reads_the_experts_not_held_at_their_share() -> None:
    """At a CV of 0 a token reads from NVMe the routed bytes times the share of the experts' bytes the cache lacks:
    the fixed split's figure, with the RAM left free counted as cache."""
    arch = parse_architecture(find_model("deepseek-ai/DeepSeek-R1").config)
    fmt = weight_format("q2_k")
    machine = _rig(96)
    placement = place(arch, fmt, 16, 8192, machine, CONSTS)
    cost = offload_cost(arch, fmt, 16, placement, machine, 500, CONSTS._replace(expert_popularity_cv=0.0), 750)
    assert cost.paged is not None and cost.paged.dense_nvme_bytes == 0  # only experts are off the GPU
    cache = page_cache_bytes(arch, fmt, placement)
    experts = placement.cpu_bytes - placement.embedding_bytes + placement.disk_bytes
    held = cache / experts
    assert cost.paged.hit_rate == pytest.approx(held)
    assert cost.nvme_bytes_per_token == pytest.approx(cost.paged.routed_bytes * (1 - held), abs=1)
    skewed = offload_cost(arch, fmt, 16, placement, machine, 500, CONSTS, 750)
    assert skewed.nvme_bytes_per_token < cost.nvme_bytes_per_token / 3  # 2.17: 86% served, not 40%


def test_without_an_nvme_tier_nothing_is_paged_and_the_command_loads_the_weights() -> None:
    data = estimate_json(*RIG[:4], "256", *RIG[5:])
    assert data["offload"]["bytes"]["disk"] == 0 and "page_cache" not in data["offload"]
    assert data["runtime_settings"]["llama.cpp"].endswith("--no-mmap")
    assert "nvme-offload" not in {f["code"] for f in data["findings"]}


def test_the_warning_says_the_hit_rate_assumed_and_that_buffered_io_may_be_the_limit() -> None:
    code, out = run_estimate(*RIG)
    assert code == 0
    # review80 items 1-2 (no 5% margin beside the offloaded layers) keep one more MoE layer's experts on the GPU: 3.45 ->
    # 3.57 tokens/s, 129.23 -> 125.43 GiB on NVMe, 39 -> 40% cached serving 85 -> 86%, 0.97 -> 0.92 GiB a token paged,
    # 0.78 -> 0.80 with no page cache hits, 55 -> 54 MoE layers off the GPU (34 -> 33 on NVMe)
    assert "speed        3.57 tokens/s (nvme-bound, cpu-compute)" in out  # 3.52 before 110 GPU / CPU switches were
    # counted, accoff entry of 2026-12-04
    warning = next(line for line in out.splitlines() if "GiB of weights live on NVMe" in line)
    for said in (
        "125.43 GiB of weights live on NVMe, in the memory-mapped model file: the page cache, the 81.92 GiB of RAM",
        "the most used routed experts of every layer among them: 40% of the experts' bytes, assumed to serve 86% of a "
        "token's expert reads (popularity lognormal at expert_popularity_cv 2.17; 40% if every expert were used alike)",
        "0.92 GiB a token are paged in from NVMe, routed experts faulted in at random at 5.6 GB/s "
        "(nvme_paged_read_efficiency 0.45 of the drive's 12.4 GB/s)",
        "whose buffered I/O, not the drive, may be the limit (a 4-drive RAID0 gave no gain: "
        "https://github.com/ubergarm/r1-ktransformers-guide)",
        "0.80 tokens/s instead of 3.57",
    ):
        assert said in warning, warning
    decision = next(line for line in out.splitlines() if "routed experts of 54 MoE layer(s)" in line)
    assert "21 layers' worth in system RAM, 33 on NVMe" in decision
    assert "the page cache keeps the most used experts of every layer, not whole layers" in decision


def test_the_popularity_is_one_overridable_constant() -> None:
    uniform = estimate_json(*RIG, "--set", "expert_popularity_cv=0")
    skewed = estimate_json(*RIG)
    assert uniform["offload"]["page_cache"]["expert_hit_rate"] == uniform["offload"]["page_cache"]["expert_cached_share"]
    assert skewed["offload"]["page_cache"] == {
        "bytes": 87956672512,
        # 5976749923 / 0.3919 / 0.8521 / 1037568156 until review80 items 1-2 (one more MoE layer on the GPU)
        "cached_bytes_per_token": 5897758359,
        "expert_cached_share": 0.3991,
        "expert_hit_rate": 0.8564,
        "nvme_bytes_per_token": 989026664,
        "popularity_cv": 2.17,
    }
    assert uniform["throughput"]["decode_tokens_per_s"] < skewed["throughput"]["decode_tokens_per_s"]
    said = next(f["message"] for f in uniform["findings"] if f["code"] == "nvme-offload")
    # 39% until review80 items 1-2 (one more MoE layer's experts on the GPU)
    assert "assumed to serve 40% of a token's expert reads (popularity lognormal at expert_popularity_cv 0; 40%" in said
