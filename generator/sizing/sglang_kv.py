"""SGLang's KV-pool accounting (``--mem-fraction-static``), as an alternative to vLLM's.

From ``sglang/srt/model_executor/model_runner`` (``profile_max_num_token``):

- ``total`` is the free GPU memory measured once the distributed runtime is up, before the weights load;
  ``available`` is the free memory measured after they load.
- The pool gets ``rest = available - total x (1 - mem_fraction_static)``: everything the weights did not take,
  less a reserve for activations and CUDA graphs that is a fraction of ``total`` (not of what is left).
- Tokens: ``rest // cell``, one cell being a token's K and V in every layer of one rank
  (``kv_heads_per_rank x head_dim x layers x 2 x dtype bytes``; MLA: ``(kv_lora_rank + rope dim) x layers``).

Sliding-window layers are charged like full ones (SGLang's hybrid-SWA pool is a separate configurator).
Pure: no I/O.
"""

from __future__ import annotations

from typing import NamedTuple

from generator.sizing.architecture import Architecture
from generator.sizing.kv_cache import ceil_bytes, layer_elements_per_gpu
from generator.sizing.weights import Parallelism, stage_layers


class SglangKvPool(NamedTuple):
    """The pool SGLang sizes on one GPU and the token count its log prints."""

    #: ``available - total x (1 - mem_fraction_static)``, bytes (negative: SGLang refuses to start).
    rest_bytes: int
    #: Bytes of one token in every layer of this rank.
    cell_bytes: int
    #: "KV Cache is allocated. #tokens: N".
    tokens: int


def sglang_cell_bytes(arch: Architecture, kv_bits: int, par: Parallelism = Parallelism()) -> int:
    """One token's KV bytes on the fullest rank (whole KV heads per TP rank; MLA latent replicated)."""
    stage = max(stage_layers(arch.num_layers, par.pp), key=len)
    return ceil_bytes(sum(layer_elements_per_gpu(arch.layers[index], par.tp) for index in stage) * kv_bits)


def sglang_kv_pool(
    arch: Architecture,
    kv_bits: int,
    free_before_load_bytes: int,
    free_after_load_bytes: int,
    mem_fraction_static: float,
    par: Parallelism = Parallelism(),
) -> SglangKvPool:
    """SGLang's KV pool from the free memory before and after the weights load."""
    rest = int(free_after_load_bytes - free_before_load_bytes * (1 - mem_fraction_static))
    cell = sglang_cell_bytes(arch, kv_bits, par)
    return SglangKvPool(rest, cell, max(0, rest) // cell if cell else 0)
