"""Where ``inference.cached_prompt_share`` (the share of each prompt the engine's prefix cache holds) can be sized.

The share is the user's measured prefix-cache hit rate (vLLM's ``vllm:prefix_cache_hits`` over
``vllm:prefix_cache_queries``): the planner prefills the new tail alone and keeps the whole prompt in the KV cache
(:meth:`generator.workload.models.InferenceSpec.prompt_tail`). It is refused, at the field, where the engine the plan
sizes would not reuse a prefix:

- a model whose layers keep a recurrent state (Qwen3-Next's Gated DeltaNet, Granite-4.0-H's Mamba-2): vLLM's
  ``HybridAttentionMambaModelConfig`` sets such a model up without prefix caching (a state is the whole prefix's,
  not a block of it: :mod:`generator.sizing.vllm_kv`), and SGLang is refused for them already;
- a pooling task (embed, score): one forward pass a request, and an encoder keeps no KV cache at all (vLLM's
  ``is_prefix_caching_supported`` is False for ``encoder_only`` models: :mod:`generator.sizing.encoder`);
- ``hardware.fixed``: llama.cpp's server reuses only the prefix the slot it picks held last (``cache_prompt``, on by
  default: the slot whose last prompt shares the longest prefix), and the plan for a machine of yours times every
  prompt whole through its offload model, so a share given there would be read by nothing.

A batch job takes the share as a service does: its requests often share an instruction or a document prefix
(vLLM's prefix caching docs name the long-document query), which the same cache reuses.
"""

from __future__ import annotations

from generator.calculator.model_source import ResolvedModel
from generator.errors import InputError
from generator.sizing.architecture import no_prefix_cache_reason
from generator.workload.loader import Document
from generator.workload.models import InferenceSpec


def cached_prompt_errors(
    doc: Document, i: int, spec: InferenceSpec, model: ResolvedModel | None, fixed: bool
) -> list[InputError]:
    """An error at deployment ``i``'s ``cached_prompt_share`` where its engine, model or task would not reuse a prefix.

    And at its ``prefix_routing: session`` under ``routing: free_place`` (newuser73 item 11): a router that keeps a
    session's turns on one replica does not send them to whichever replica has a place free, so the wait for a place
    is each replica's own queue (``routing: even``).
    """
    if spec.prefix_routing == "session" and spec.routing != "even":
        return [
            InputError(
                "prefix_routing session: a router that keeps a session's turns on the replica holding its prefix sends "
                "them there whatever the other replicas' load, so each replica has a queue of its own: set routing: "
                "even (routing free_place is a router that sends a request to any replica with a place free)",
                doc.locate(("deployments", i, "inference", "prefix_routing")),
            )
        ]
    if not spec.cached_prompt_share:
        return []
    why = None
    if spec.pooling:
        why = (
            f"a pooling service (task: {spec.task}) runs each request in one forward pass and keeps no prompt between "
            "requests (vLLM turns prefix caching off for encoders): a cached share means nothing for it; drop it"
        )
    elif model is not None and (uncached := no_prefix_cache_reason(model.name, model.architecture)) is not None:
        why = f"{uncached}: every prompt is prefilled whole; drop it"
    elif fixed:
        why = (
            "hardware.fixed is sized as llama.cpp's server, whose slots reuse only the prefix the slot held last "
            "(cache_prompt), and the plan times every prompt whole there: the share would be read by nothing; drop it"
        )
    if why is None:
        return []
    share = f"cached_prompt_share {spec.cached_prompt_share:g}"
    return [InputError(f"{share}: {why}", doc.locate(("deployments", i, "inference", "cached_prompt_share")))]
