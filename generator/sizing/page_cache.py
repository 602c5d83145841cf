"""The page cache in front of a memory-mapped model file: which weights it keeps, and what a token reads past it.

llama.cpp memory-maps the model file (its default, and specgen's command where weights live beyond RAM; ktransformers
and ik_llama.cpp do the same). The weights held off the GPUs are then pages of that file, and the RAM they may take (RAM
less the reserve, the runtime, a staging layer and the KV cache kept there) is the kernel's page cache: it keeps the
pages read most and drops the rest. A token reads every dense weight of the layers the CPU runs, so those stay first;
of the routed experts, the cache keeps the most popular of every layer, and a token reads from NVMe only the experts
it routes to that are not kept (a step of several server slots, each expert once if any routes to it).

Expert popularity: lognormal across experts, with the coefficient of variation the expert-parallel model already
derives (``Constants.expert_popularity_cv``, 2.17 for DeepSeek-R1 from TensorRT-LLM's measured imbalance; one constant,
overridable, the same for every model and row). Why lognormal: it is positive and right-skewed (a few hot experts, a
long tail of rarely used ones, as measured routing loads are), it is fixed by its CV alone (the one moment the project
derives, so no second parameter is invented), and the share of the uses its most popular fraction ``c`` draws is closed
form, ``Phi(Phi^-1(c) + sigma)`` with ``sigma^2 = ln(1 + CV^2)`` (its Lorenz curve), which a test checks by hand. At a
CV of 0 (every expert alike) the cache serves exactly the share of the experts it holds.

Limits: the kernel's two LRU lists approximate "the most used pages"; they keep less of a
skewed set than an oracle would, and a token's missed experts are page faults at random offsets served through buffered
I/O (the kernel's read-around of 128-256 KiB a fault, within an expert's MiB-scale slice of each tensor), which reach
less than the drive's sequential rate: ``nvme_paged_read_efficiency``, fitted with the CV held (the two are not
separable on the published runs). Dense weights the cache cannot hold are read in order every token, at
``nvme_efficiency``.
"""

from __future__ import annotations

import functools
import math

from generator.named_tuple import NamedTuple


def routing_popularity_cv(popularity_cv: float, experts: int, top_k: int) -> float:
    """The popularity CV top-k routing over ``experts`` allows: at most ``sqrt(experts / top_k - 1)``.

    A token's ``top_k`` choices are distinct experts, so no expert is used by more than every token; the largest spread
    is the same ``top_k`` experts every token (as :func:`generator.sizing.performance.busiest_expert_rank_load` caps it).
    """
    if experts <= 0 or top_k <= 0:
        return 0.0
    return min(popularity_cv, math.sqrt(max(experts / top_k - 1.0, 0.0)))


def expert_cache_hit_rate(cached_share: float, popularity_cv: float) -> float:
    """Share of a token's routed-expert reads served by a cache holding the most popular ``cached_share`` of the experts.

    Popularity lognormal with coefficient of variation ``popularity_cv``: ``sigma^2 = ln(1 + cv^2)``, and the most
    popular fraction ``c`` of a lognormal population holds ``Phi(Phi^-1(c) + sigma)`` of its total. ``cv`` 0 gives ``c``;
    the hit rate rises with the share held and with the skew.
    """
    if cached_share <= 0.0:
        return 0.0
    if cached_share >= 1.0:
        return 1.0
    from statistics import NormalDist  # here: only a plan with weights on NVMe asks, and an estimate starts without it

    normal = NormalDist()
    sigma = math.sqrt(math.log1p(popularity_cv**2))
    return normal.cdf(normal.inv_cdf(cached_share) + sigma)


@functools.lru_cache(maxsize=256)
def expert_use_chances(experts: int, top_k: int, popularity_cv: float) -> tuple[float, ...]:
    """Each expert's chance that a token routes to it, most popular first: ``top_k`` times its lognormal share.

    Expert ``j`` of ``experts`` holds the popularity between the ``j / experts`` and ``(j + 1) / experts`` points of
    the curve :func:`expert_cache_hit_rate` follows; the chances sum to ``top_k`` (a token's choices), none above 1.
    """
    return tuple(
        min(
            1.0,
            top_k * (expert_cache_hit_rate((j + 1) / experts, popularity_cv) - expert_cache_hit_rate(j / experts, popularity_cv)),
        )
        for j in range(experts)
    )


def step_hit_rate(cached_share: float, popularity_cv: float, experts: int, top_k: int, tokens: float) -> float:
    """Share of the distinct routed-expert reads of a step over ``tokens`` tokens that the page cache serves.

    One token: :func:`expert_cache_hit_rate`. Several (llama.cpp's server slots decoding together) read each expert
    once if any of them routes to it, ``1 - (1 - p)^tokens`` at chance ``p`` (:func:`expert_use_chances`): the
    popular experts, held, are shared, so the rarely used ones take a larger part of the reads, and at many tokens,
    every expert read, the cache serves the share of the experts it holds.
    """
    if tokens <= 1 or experts <= 0 or not 0.0 < cached_share < 1.0:
        return expert_cache_hit_rate(cached_share, popularity_cv)
    touched = [1.0 - (1.0 - p) ** tokens for p in expert_use_chances(experts, top_k, popularity_cv)]
    held = cached_share * experts
    whole = int(held)
    cached = sum(touched[:whole]) + (touched[whole] * (held - whole) if whole < experts else 0.0)
    total = sum(touched)
    return cached / total if total > 0 else cached_share


class PagedReads(NamedTuple):
    """What a decode step reads of the memory-mapped weights held off the GPUs, split by where it finds them."""

    #: Bytes read from NVMe (page faults).
    nvme_bytes: float
    #: Bytes read from the page cache (RAM).
    cached_bytes: float
    #: Share of the routed experts' bytes the page cache holds.
    expert_cached_share: float
    #: Share of the step's routed-expert reads the page cache serves.
    hit_rate: float
    #: The step's routed-expert bytes (0: no routed experts held off the GPUs) and the popularity CV assumed.
    routed_bytes: float = 0.0
    popularity_cv: float = 0.0
    #: The dense weights among ``nvme_bytes``: read in order every step, not faulted in at random as experts are.
    dense_nvme_bytes: float = 0.0


def paged_reads(
    dense_bytes: float,
    expert_bytes: float,
    routed_bytes: float,
    cache_bytes: float,
    popularity_cv: float,
    routing: tuple[int, int] = (0, 0),
    tokens: float = 1.0,
) -> PagedReads:
    """Where a step finds the memory-mapped weights it reads: the page cache of ``cache_bytes``, or NVMe.

    ``dense_bytes``: weights the step reads whatever the routing (the dense tensors of the layers the CPU runs), kept
    first; ``expert_bytes``: the routed experts held off the GPUs, of which the step reads ``routed_bytes`` (its
    expected share); the rest of the cache holds the most popular experts (:func:`expert_cache_hit_rate`). A step of
    several ``tokens`` (server slots) over ``routing`` (experts, top_k) misses in the proportion :func:`step_hit_rate`
    gives.
    """
    cache = max(cache_bytes, 0.0)
    dense_cached = min(dense_bytes, cache)
    share = min(1.0, (cache - dense_cached) / expert_bytes) if expert_bytes > 0 else 0.0
    hit = step_hit_rate(share, popularity_cv, routing[0], routing[1], tokens)
    dense_missed = dense_bytes - dense_cached
    return PagedReads(
        dense_missed + (1.0 - hit) * routed_bytes, dense_cached + hit * routed_bytes, share, hit, routed_bytes,
        popularity_cv, dense_missed,
    )  # fmt: skip
