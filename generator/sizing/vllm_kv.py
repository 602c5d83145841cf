"""vLLM's own KV-cache accounting (V1 engine): groups, blocks, and the token count its start-up log prints.

The mechanism, from ``vllm/v1/core/kv_cache_utils.py`` (v0.10-v0.11, ``_get_kv_cache_groups_uniform_page_size``,
``get_num_blocks``, ``get_max_concurrency_for_kv_cache_config``) and ``vllm/v1/kv_cache_interface.py``:

- Layers are bucketed by KV spec (full attention; sliding window of a given width). One bucket: a single
  group of every layer. Several (a hybrid model): ``group_size`` is the smallest bucket's layer count, or
  the largest when the largest is under 1.5x the smallest; each bucket is split into
  ``ceil(layers / group_size)`` groups, the last one padded to ``group_size`` layers.
- Page sizes are unified: every type's block holds the bytes of the largest type's ``block_size`` tokens
  (a type with fewer bytes per token gets more tokens per block; the log uses the smallest block size).
- All groups share ``group_size`` column tensors of ``num_blocks`` pages each, so
  ``num_blocks = available // (page_bytes * group_size)``: a sliding-window layer gets as many pages as a
  full-attention layer, and padding layers cost memory like real ones.
- The log prints ``GPU KV cache size: num_blocks // groups * block_size tokens``: the available memory
  over the bytes per token of every (padded) layer, windows not applied.
- ``Maximum concurrency for L tokens per request`` is ``num_blocks`` over the pages one request of
  ``max_model_len`` needs: full layers ``ceil(L / block)`` pages, sliding layers
  ``ceil(min(window - 1 + max_num_batched_tokens, L) / block) + 1``, summed over groups.

Linear-attention (Gated DeltaNet) layers are a third kind, ``state`` (``MambaSpec``), as
``HybridAttentionMambaModelConfig.verify_and_update_config`` sets it up without prefix caching: one page holds one
sequence's state, the attention block size is raised to the smallest multiple of 16 tokens whose page holds it
(``16 * ceil(state_page / (16 * attention bytes per token))``), and the state page is padded to the attention page.
A request takes one page per state group (the state's block size is ``max_model_len``), so the concurrency is
bounded by the state pages as well as by the full-attention pages; the log's block size is the smallest of the
groups', ``min(attention block, max_model_len)``.

Later vLLM (``_report_kv_cache_config`` after v0.12) prints ``max_concurrency * max_model_len`` instead;
``TOKENS_FROM_CONCURRENCY`` selects that form. Pure: no I/O.
"""

from __future__ import annotations

from generator.named_tuple import NamedTuple
from generator.sizing.architecture import Architecture, Layer
from generator.sizing.kv_cache import ceil_bytes, layer_elements_per_gpu
from generator.sizing.linear_attention import has_state, layer_state_bytes, state_bits
from generator.sizing.memo import memoized
from generator.sizing.weights import Parallelism, stage_layers

#: How the start-up log's token count is formed: vLLM <= 0.11 (blocks per group) or later (concurrency x length).
TOKENS_FROM_BLOCKS = "blocks"
TOKENS_FROM_CONCURRENCY = "concurrency"

#: vLLM uses the largest bucket as group size when it is under this multiple of the smallest
#: (kv_cache_utils._get_kv_cache_groups_uniform_page_size: ``max_num_layers < min_num_layers * 1.5``).
GROUP_SIZE_RATIO = 1.5

#: The layer kind of linear-attention layers: one page of recurrent state per sequence.
STATE = "state"

#: Attention block sizes are multiples of this when raised to hold a state page (FlashAttention's constraint,
#: ``kernel_block_alignment_size`` in ``HybridAttentionMambaModelConfig``).
STATE_BLOCK_ALIGNMENT = 16


class LayerTypeKv(NamedTuple):
    """One KV spec of the model on the fullest GPU: its layers, groups and the memory they hold."""

    #: ``full``, ``sliding:<window tokens>`` or ``state`` (linear attention; bytes per token 0).
    kind: str
    layers: int
    groups: int
    #: Layers added to fill its last group to ``group_size``.
    padding_layers: int
    #: Bytes of the pool this type's groups own (their share of the column tensors).
    pool_bytes: int
    #: KV bytes per token of one layer on one GPU.
    layer_bytes_per_token: int


class VllmKvCache(NamedTuple):
    """The KV pool vLLM builds on one GPU, and the two numbers its start-up log prints."""

    group_size: int
    groups: int
    #: Bytes of one block of one layer (``block_size`` tokens).
    page_bytes: int
    num_blocks: int
    #: "GPU KV cache size: N tokens".
    logged_tokens: int
    #: "Maximum concurrency for max_model_len tokens per request: X".
    max_concurrency: float
    by_layer_type: tuple[LayerTypeKv, ...]
    #: Requests of ``max_model_len`` tokens the blocks hold in steady decode: a sliding layer then keeps the blocks its
    #: window spans (one more where the window is not block-aligned), not the prefill's window plus a step's tokens.
    steady_concurrency: float = 0.0


def _kind(layer: Layer) -> str:
    if layer.state is not None:
        return STATE
    return "full" if layer.window_tokens is None else f"sliding:{layer.window_tokens}"


def _pages_per_request(kind: str, max_model_len: int, block_tokens: int, max_num_batched_tokens: int) -> int:
    """Pages one request of ``max_model_len`` tokens needs in one layer of ``kind`` (``max_memory_usage_bytes``)."""
    if kind == STATE:
        return 1
    if kind == "full":
        return -(-max_model_len // block_tokens)
    window = int(kind.split(":", 1)[1])
    tokens = min(window - 1 + max_num_batched_tokens, max_model_len)
    return -(-tokens // block_tokens) + 1


def steady_pages(kind: str, tokens: int, block_tokens: int) -> int:
    """Pages one request of ``tokens`` tokens holds in one layer of ``kind`` while it decodes.

    A sliding layer frees the blocks that left its window (``SlidingWindowManager.remove_skipped_blocks``).
    """
    if kind == STATE:
        return 1
    full = -(-tokens // block_tokens)
    if kind == "full":
        return full
    return min(full, -(-int(kind.split(":", 1)[1]) // block_tokens) + 1)


def vllm_kv_cache(
    arch: Architecture,
    kv_bits: int,
    available_bytes: int,
    max_model_len: int,
    par: Parallelism = Parallelism(),
    block_tokens: int = 16,
    max_num_batched_tokens: int = 8192,
    tokens_from: str = TOKENS_FROM_BLOCKS,
) -> VllmKvCache:
    """The KV pool vLLM builds for ``available_bytes`` of KV memory per GPU, on the stage that holds the fewest tokens.

    Every pipeline stage sizes its own pool and the engine runs at the smallest (``unify_kv_cache_configs``
    takes the fewest blocks): with sliding-window layers the binding stage is the one with the most
    full-attention bytes, not the one with the most layers. ``block_tokens`` is the block size of the type
    with the most bytes per token; the others scale up to the same page bytes, as vLLM's
    ``unify_kv_cache_spec_page_size`` does; with linear-attention layers it is raised to hold a state page.
    """
    bits = state_bits(arch) if has_state(arch) else 0
    pools = (
        _stage_kv_cache(
            [arch.layers[i] for i in stage],
            kv_bits,
            available_bytes,
            max_model_len,
            par,
            block_tokens,
            max_num_batched_tokens,
            tokens_from,
            bits,
        )
        for stage in stage_layers(arch.num_layers, par.pp, "vllm")
    )
    return min(pools, key=lambda pool: (pool.logged_tokens, pool.max_concurrency))


def _stage_kv_cache(
    stage: list[Layer],
    kv_bits: int,
    available_bytes: int,
    max_model_len: int,
    par: Parallelism,
    block_tokens: int,
    max_num_batched_tokens: int,
    tokens_from: str,
    state_bits: int = 0,
) -> VllmKvCache:
    buckets: dict[str, list[Layer]] = {}
    for layer in stage:
        buckets.setdefault(_kind(layer), []).append(layer)
    counts = [len(layers) for layers in buckets.values()]
    smallest, largest = min(counts), max(counts)
    group_size = largest if largest < smallest * GROUP_SIZE_RATIO else smallest
    layer_bytes = {
        kind: ceil_bytes(max(layer_elements_per_gpu(lay, par.tp) for lay in layers) * kv_bits)
        for kind, layers in buckets.items()
        if kind != STATE
    }
    log_block = block_tokens
    if STATE in buckets:
        block_tokens, page_bytes = _state_block(buckets[STATE], layer_bytes, par.tp, state_bits, block_tokens)
        log_block = min(block_tokens, max_model_len)  # the state's block size is max_model_len
    else:
        page_bytes = max(layer_bytes.values()) * block_tokens
    num_blocks = max(0, available_bytes // (page_bytes * group_size))
    groups_of = {kind: -(-len(layers) // group_size) for kind, layers in buckets.items()}
    groups = sum(groups_of.values())
    # unify_kv_cache_spec_page_size: a type with fewer bytes per token gets proportionally more tokens per block.
    block_of = {kind: page_bytes // per_token for kind, per_token in layer_bytes.items()}
    block_of[STATE] = max_model_len
    pages = sum(groups_of[k] * _pages_per_request(k, max_model_len, block_of[k], max_num_batched_tokens) for k in buckets)
    # get_max_concurrency_for_kv_cache_config: request bytes over one block of every group's layers.
    concurrency = num_blocks / pages if pages else 0.0
    steady = sum(groups_of[k] * steady_pages(k, max_model_len, block_of[k]) for k in buckets)
    by_blocks = num_blocks // groups * log_block
    logged = int(concurrency * max_model_len) if tokens_from == TOKENS_FROM_CONCURRENCY else by_blocks
    by_type = tuple(
        LayerTypeKv(
            kind=kind,
            layers=len(layers),
            groups=groups_of[kind],
            padding_layers=groups_of[kind] * group_size - len(layers),
            pool_bytes=groups_of[kind] * group_size * num_blocks * page_bytes // groups if groups else 0,
            layer_bytes_per_token=layer_bytes.get(kind, 0),
        )
        for kind, layers in sorted(buckets.items())
    )
    return VllmKvCache(
        group_size, groups, page_bytes, num_blocks, logged, concurrency, by_type, num_blocks / steady if steady else 0.0
    )


def _state_block(
    layers: list[Layer], layer_bytes: dict[str, int], tp: int, state_bits: int, block_tokens: int
) -> tuple[int, int]:
    """(attention block tokens, page bytes) once the attention page is raised to hold one sequence's state.

    ``HybridAttentionMambaModelConfig.verify_and_update_config`` without prefix caching: the smallest multiple of
    :data:`STATE_BLOCK_ALIGNMENT` tokens whose attention page holds the state page, unless the configured block
    is larger; the state page is then padded to the attention page. Without attention layers, the state page.
    """
    state_page = max(layer_state_bytes(layer, tp, state_bits) for layer in layers)
    per_token = max(layer_bytes.values(), default=0)
    if not per_token:
        return block_tokens, state_page
    align = STATE_BLOCK_ALIGNMENT
    block = max(block_tokens, align * -(-state_page // (align * per_token)))
    return block, block * per_token


def pool_groups(pool: VllmKvCache) -> tuple[tuple[str, int, int], ...]:
    """A hybrid pool's groups as :class:`~generator.sizing.memory.Capacity` counts sequences in it.

    Each layer type's groups and block size in tokens (page bytes over one token of its layers;
    a state group's page holds one sequence whatever its length): a sequence takes :func:`steady_pages` of each group.
    """
    return tuple(
        (t.kind, t.groups, pool.page_bytes // t.layer_bytes_per_token if t.layer_bytes_per_token else 1)
        for t in pool.by_layer_type
    )


@memoized
def _has_windows(arch: Architecture) -> bool:
    """Whether any layer keeps a sliding window."""
    return any(layer.window_tokens is not None for layer in arch.layers)


def start_shortfall_bytes(
    arch: Architecture,
    kv_bits: int,
    max_model_len: int,
    par: Parallelism,
    block_tokens: int,
    max_num_batched_tokens: int,
    available_bytes: int,
) -> int:
    """KV bytes vLLM's start-up check finds short of ``available_bytes`` for one ``max_model_len`` request (0: it starts).

    ``check_enough_kv_cache_memory`` charges a sliding layer its window plus a forward pass's tokens (:func:`request_kv_bytes`),
    not the window its blocks hold in decode (newuser55 item 2: Gemma 3 27B at 131,072 tokens on an H100 held 1.2
    requests in decode and needed 13.66 GiB to start where max_num_seqs 1024 left 12.12 GiB). Without sliding layers a
    pool that holds one whole-context request (a capacity of 1) passes it, so it is not sized (walking every layer of
    every layout cost a render of 200 workloads 1.7 s).
    """
    if not _has_windows(arch):
        return 0
    needed = request_kv_bytes(arch, kv_bits, max_model_len, par, block_tokens, max_num_batched_tokens)
    return max(0, needed - available_bytes)


def request_kv_bytes(
    arch: Architecture,
    kv_bits: int,
    max_model_len: int,
    par: Parallelism = Parallelism(),
    block_tokens: int = 16,
    max_num_batched_tokens: int = 8192,
) -> int:
    """KV bytes one request of ``max_model_len`` tokens needs on the stage that needs most, as vLLM checks it at start-up.

    ``check_enough_kv_cache_memory`` sums every layer's ``max_memory_usage_bytes`` (no group padding): a full
    layer ``ceil(L / block)`` pages, a sliding layer ``ceil(min(window - 1 + max_num_batched_tokens, L) / block) + 1``,
    each page ``block_tokens`` tokens of that layer's KV. vLLM refuses to start when this exceeds the available
    KV memory and prints it ("X GiB KV cache is needed"). With linear-attention layers every page is the raised
    attention page, and a state layer needs one.
    """
    state_page = 0
    if has_state(arch):
        pool = vllm_kv_cache(arch, kv_bits, 0, max_model_len, par, block_tokens, max_num_batched_tokens)
        state_page = pool.page_bytes
        block_tokens = pool.page_bytes // max(1, *(t.layer_bytes_per_token for t in pool.by_layer_type))

    def layer_bytes(layer: Layer) -> int:
        kind = _kind(layer)
        if kind == STATE:
            return state_page
        page = ceil_bytes(layer_elements_per_gpu(layer, par.tp) * kv_bits) * block_tokens
        return _pages_per_request(kind, max_model_len, block_tokens, max_num_batched_tokens) * page

    return max(sum(layer_bytes(arch.layers[i]) for i in stage) for stage in stage_layers(arch.num_layers, par.pp, "vllm"))
