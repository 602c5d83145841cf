"""speed101: ``place``'s fill check from running sums and its bisection give what the loops they replace gave.

``_fills_in_order`` stands for ``max(_fill_gpus(...)[0]) <= capacity`` (llama.cpp's layers filled over the GPUs in
order), and ``_fewest_moved`` for a loop that moves one more layer's experts (or one more whole layer) until the rest
fit. Both are checked against those loops on random sizes, and a placement against the loops' own result.
"""

from __future__ import annotations

import random

import pytest

from generator import catalog
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.offload import Machine, _fewest_moved, _fill_gpus, _fills_in_order, place
from generator.sizing.precision import weight_format

GIB = 2**30


def _filled(sizes: list[int], capacity: int, gpus: int) -> bool:
    return max(_fill_gpus([(str(i), size) for i, size in enumerate(sizes)], capacity, gpus)[0]) <= capacity


@pytest.mark.parametrize("seed", range(4))
def test_the_running_sums_fill_as_the_loop_does(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(3000):
        gpus, capacity = rng.randint(1, 4), rng.randint(1, 60)
        sizes = [rng.choice((0, rng.randint(0, 40))) for _ in range(rng.randint(0, 14))]
        assert _fills_in_order(sizes, capacity, gpus) == _filled(sizes, capacity, gpus), (sizes, capacity, gpus)


def _moved_as_the_loops(rng: random.Random) -> None:
    """One random model: experts from the last layer back, then layers from the first on (the LM head with the first)."""
    gpus, capacity, n = rng.randint(1, 4), rng.randint(5, 80), rng.randint(1, 12)
    whole = [rng.randint(0, 30) for _ in range(n)]
    experts = [rng.choice((0, rng.randint(0, size))) for size in whole]
    head = rng.randint(0, 20)
    held = [*whole, head]
    looped = n
    for i in reversed(range(n)):  # place()'s experts loop
        if _filled(held, capacity, gpus):
            looped = n - 1 - i
            break
        held[i] -= experts[i]

    def last(k: int) -> bool:
        return _fills_in_order([*whole[: n - k], *(whole[i] - experts[i] for i in range(n - k, n)), head], capacity, gpus)

    assert _fewest_moved(last, n) == looped
    held = [*whole, head]
    looped = n
    for i in range(n):  # place()'s layers loop
        if _filled(held, capacity, gpus):
            looped = i
            break
        held[i] = held[n] = 0

    def first(j: int) -> bool:
        return _fills_in_order([0] * j + whole[j:] + [head if j == 0 else 0], capacity, gpus)

    assert _fewest_moved(first, n) == looped


@pytest.mark.parametrize("seed", range(4))
def test_bisection_moves_what_the_loops_moved(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(2000):
        _moved_as_the_loops(rng)


@pytest.mark.parametrize(
    ("cache", "on_cpu", "experts_in_ram", "on_gpu1", "head", "gpu_bytes", "kv_gpu_bytes"),
    [(32_768, 0, 57, 74, "gpu:1", 58_731_915_264, 6_308_233_216), (549_700, 38, 56, 28, "cpu", 2_379_440_128, 63_043_993_600)],
)
def test_a_moe_model_split_over_two_gpus_is_placed_where_the_loops_placed_it(
    cache: int, on_cpu: int, experts_in_ram: int, on_gpu1: int, head: str, gpu_bytes: int, kv_gpu_bytes: int
) -> None:
    """Qwen3-235B q4_k_m on 2 x 32 GB: the figures the loops gave (main 00f842c4, before speed101), pinned."""
    arch = parse_architecture(catalog.models()["Qwen/Qwen3-235B-A22B"].config)
    machine = Machine(2, 32 * GIB, 1792, 210, 63, 192 * GIB, 16 * GIB, 0, 2000 * GIB, 7.0, 96, 16)
    placed = place(arch, weight_format("q4_k_m"), 16, cache, machine, Constants())
    devices = placed.layer_devices
    assert devices[:on_cpu] == ("cpu",) * on_cpu  # -ngl: the first layers on the CPU
    assert sum(d == "cpu" for d in devices) == on_cpu
    assert sum(d.endswith("+experts:cpu") for d in devices) == experts_in_ram
    assert sum(d.startswith("gpu:1") for d in devices) == on_gpu1
    assert (placed.lm_head_device, placed.gpu_bytes, placed.kv_gpu_bytes) == (head, gpu_bytes, kv_gpu_bytes)
