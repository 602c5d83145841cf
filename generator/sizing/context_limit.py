"""The longest sequence a serving engine accepts for a model: vLLM's derived ``max_model_len``.

vLLM (``_get_and_verify_max_len``, https://github.com/vllm-project/vllm/blob/main/vllm/config/model.py) takes the
smallest of the config's length keys (``max_position_embeddings``, ``n_positions``, ``max_seq_len``, ``seq_length``,
``max_target_positions``, ``max_sequence_length``, ``max_seq_length``, ``seq_len``), or ``model_max_length`` where the config has
it (Command-R); then a ``rope_scaling`` block stretches it by its ``factor``, from
``original_max_position_embeddings`` for YaRN, except for the types whose ``max_position_embeddings`` is
already the stretched length (``llama3``, ``longrope``/``su``) and for Gemma 3. A longer ``max_model_len``
is refused unless ``VLLM_ALLOW_LONG_MAX_MODEL_LEN=1``; SGLang reads the same keys and refuses it unless
``SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from generator.errors import ArchitectureError
from generator.named_tuple import NamedTuple

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from typing import Any

#: Config keys holding a model's longest sequence; the smallest given wins.
LENGTH_KEYS = (
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "max_target_positions",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
)
#: Cap of the stretched length (a huge ``factor`` must not overflow): the config check's bound on max_position_embeddings.
_MOST_TOKENS = 1 << 31
#: The largest 32-bit float: llama-server parses ``--rope-scale`` with ``std::stof`` (common/arg.cpp), which refuses more.
FLOAT32_MAX = 3.4028234663852886e38
#: RoPE scaling types whose ``max_position_embeddings`` is already the scaled length.
_PRE_SCALED = ("su", "longrope", "llama3")
#: RoPE scaling types that scale by a ``factor``, which transformers' validators (``_validate_linear_scaling_rope_
#: parameters`` and the dynamic, yarn, longrope and llama3 ones in
#: https://github.com/huggingface/transformers/blob/main/src/transformers/modeling_rope_utils.py) check as
#: ``if factor is None or not isinstance(factor, float) or factor < 1.0``: "`rope_scaling`'s factor field must be a
#: float >= 1". A JSON integer (DeepSeek-V3's yarn ``factor: 40``) is taken as the number it is.
_FACTOR_TYPES = ("linear", "dynamic", "yarn", "longrope", "su", "llama3")
#: RoPE types an engine builds (fix188: an unknown one still stretched the context by its factor, where vLLM's
#: ``get_rope`` raises "Unknown RoPE scaling type"): vLLM's ``get_rope``
#: (https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/layers/rotary_embedding/__init__.py: default,
#: llama3, mllama4, linear, ntk, dynamic, xdrope, yarn, deepseek_yarn, deepseek_llama_scaling, longrope), which holds
#: transformers' ``ROPE_INIT_FUNCTIONS`` keys (linear, dynamic, yarn, longrope, llama3, in modeling_rope_utils.py), and
#: the legacy names the configs still carry that both rename as they load (``su`` for longrope, ``mrope`` for default).
KNOWN_ROPE_TYPES = (
    "default",
    "linear",
    "dynamic",
    "yarn",
    "longrope",
    "llama3",
    "ntk",
    "xdrope",
    "mllama4",
    "deepseek_yarn",
    "deepseek_llama_scaling",
    "su",
    "mrope",
)


def _length(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _factor(value: Any) -> float:
    number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else 1.0
    return float(number) if math.isfinite(number) and number > 0 else 1.0


def _rope_scaling(config: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The config's ``rope_scaling`` (or ``rope_parameters``); refused where its type or factor is malformed.

    fuzz25 L1: a linear ``factor`` of -4, 0 or "x" was read as no scaling at all, without a word.
    """
    key = "rope_scaling" if config.get("rope_scaling") else "rope_parameters"
    rope = config.get(key)
    if not rope:
        return None
    if not isinstance(rope, Mapping):
        raise ArchitectureError(
            f"config field '{key}' must be a mapping such as {{rope_type: yarn, factor: 4.0}}, got {str(rope)[:60]!r}"
        )
    kind = rope.get("rope_type", rope.get("type"))
    if kind is not None and not isinstance(kind, str):
        raise ArchitectureError(f"config field '{key}.rope_type' must be a RoPE type name such as yarn, got {str(kind)[:60]!r}")
    if kind is not None and kind not in KNOWN_ROPE_TYPES:
        field = "rope_type" if "rope_type" in rope else "type"
        raise ArchitectureError(
            f"config field '{key}.{field}' is an unknown RoPE scaling type, {kind[:60]!r}: vLLM (get_rope: 'Unknown "
            f"RoPE scaling type') and transformers refuse it, so the model would not start; known types: "
            f"{', '.join(KNOWN_ROPE_TYPES)}"
        )
    factor = rope.get("factor", 1.0)  # left out: no stretch, as before
    bad = isinstance(factor, bool) or not isinstance(factor, (int, float)) or not math.isfinite(factor) or factor < 1
    if kind in _FACTOR_TYPES and bad:
        raise ArchitectureError(
            f"config field '{key}.factor' must be a number >= 1 for rope_type {kind}, got {str(factor)[:60]!r}"
        )
    original = rope.get("original_max_position_embeddings")
    if original is not None and _length(original) is None:  # fix181: 0, -5, 1.5, true read as absent
        said = "true" if original is True else "false" if original is False else repr(original)[:60]
        raise ArchitectureError(
            f"config field '{key}.original_max_position_embeddings' must be a whole number of tokens above 0 (or null), "
            f"got {said}"
        )
    return rope


def served_context_tokens(config: Mapping[str, Any], model_type: str) -> int:
    """The longest sequence vLLM serves for this (text) config; 0 when the config says nothing."""
    lengths = [n for key in LENGTH_KEYS if (n := _length(config.get(key))) is not None]
    derived = _length(config.get("model_max_length")) or min(lengths, default=0)
    rope = _rope_scaling(config)
    if not derived or not isinstance(rope, Mapping) or "gemma3" in model_type:
        return derived
    kind = rope.get("rope_type", rope.get("type"))
    if kind in _PRE_SCALED:
        return derived
    if kind == "yarn":
        derived = _length(rope.get("original_max_position_embeddings")) or derived
    return int(min(derived * _factor(rope.get("factor", 1.0)), _MOST_TOKENS))


#: llama-server's RoPE-scaling options, by their names in a llama.cpp options mapping, and the flag of each
#: (common/arg.cpp: ``--rope-scaling {none,linear,yarn}``, ``--rope-scale N``, ``--yarn-orig-ctx N``; ik_llama.cpp's
#: common.cpp takes the same three), and the metadata override that lifts llama-server's cap (``--override-kv
#: KEY=TYPE:VALUE``, "types: int, float, bool, str"; :func:`context_length_override`).
ROPE_FLAGS = {
    "rope_scaling": "--rope-scaling",
    "rope_scale": "--rope-scale",
    "yarn_orig_ctx": "--yarn-orig-ctx",
    "override_kv": "--override-kv",
}
#: The engine whose server caps a slot at the GGUF's context_length, which :func:`context_length_override` lifts.
CAPPING_ENGINE = "llama.cpp"


def context_length_override(gguf_arch: str, tokens: int) -> str:
    """``--override-kv``'s value setting a GGUF's ``context_length`` (llama.cpp's ``n_ctx_train``) to ``tokens``.

    The key is ``LLM_KV_CONTEXT_LENGTH``, ``"%s.context_length"`` of the architecture's name (src/llama-arch.cpp), a
    uint32 that ``llama_model::load_hparams`` reads as ``hparams.n_ctx_train``: an ``int`` override. It is what
    llama-server caps a slot at. The RoPE keys (``%s.rope.scaling.type`` / ``.factor`` /
    ``.original_context_length``) are not overridden: the launch flags set the same parameters (a context's own
    ``rope_scaling_type``, ``rope_freq_scale`` and ``yarn_orig_ctx`` come before the file's), and overriding them to the
    flags' values would make the stretch the file's own, which PR #28030 does not re-adjust ``n_ctx_train`` for.
    """
    return f"{gguf_arch}.context_length=int:{tokens}"


class LlamaCppRope(NamedTuple):
    """llama.cpp's limit for a RoPE-scaled model: the GGUF's ``context_length`` and the flags that lift it (fix157)."""

    #: The GGUF's ``context_length`` (llama.cpp's ``n_ctx_train``): convert_hf_to_gguf.py writes the config's
    #: ``max_position_embeddings``, the length before the stretch.
    context_length: int
    #: The scaled length vLLM serves: ``original x factor`` for YaRN, ``max_position_embeddings x factor`` for linear.
    scaled_tokens: int
    #: llama-server's options for the stretch, ``(name, value)`` of :data:`ROPE_FLAGS`'s names (() where llama.cpp has
    #: no such scaling type: ``dynamic``); ``override_kv`` among them where the GGUF architecture is known.
    options: tuple[tuple[str, str | int | float], ...] = ()

    @property
    def flags(self) -> str:
        """The options as llama-server's flags (``--rope-scaling yarn --rope-scale 4 --yarn-orig-ctx 32768``).

        Each word shell-quoted, as the estimate's lines are (fix172 item 1).
        """
        import shlex

        return shlex.join(rope_args(dict(self.options)))


def rope_args(options: Mapping[str, Any]) -> list[str]:
    """llama-server's RoPE-scaling flags of a llama.cpp options mapping: those of :data:`ROPE_FLAGS` it holds.

    The one writer of these flags: the estimate's note, its llama-server lines and the plan's (Ansible ``args``).
    """
    return [arg for name, flag in ROPE_FLAGS.items() if name in options for arg in (flag, str(options[name]))]


def rope_options(rope: LlamaCppRope | None, request_tokens: int, engine: str = CAPPING_ENGINE) -> dict[str, Any]:
    """``engine``'s RoPE-scaling options for requests of ``request_tokens``.

    The stretch where they are past the GGUF's ``context_length``; none within it (the model runs unscaled, as
    trained), nor where no flag lifts the cap. ``--override-kv`` only for llama.cpp, whose server caps a slot at the
    context_length (ik_llama.cpp's caps none: :data:`IK_LLAMA_CPP_LONGER_UNCAPPED`).
    """
    if rope is None or request_tokens <= rope.context_length:
        return {}
    return {name: value for name, value in rope.options if engine == CAPPING_ENGINE or name != "override_kv"}


def _whole(number: float) -> int | float:
    """``4.0`` as 4, the way llama-server's flag and a YAML value read it; ``2.5`` as it is."""
    return int(number) if number.is_integer() else number


def llama_cpp_rope(config: Mapping[str, Any], model_type: str, gguf_arch: str | None = None) -> LlamaCppRope | None:
    """Where ``rope_scaling`` stretches the served limit past the config's length, llama.cpp's limit and flags.

    llama-server caps each slot at ``llama_model_n_ctx_train``, the GGUF's ``context_length`` ("the slot context ...
    exceeds the training context of the model - capping", tools/server/server-context.cpp). Launched with
    ``--rope-scaling yarn --rope-scale F --yarn-orig-ctx M`` (a scale other than the file's), ``llama_init_from_model``
    re-adjusts ``n_ctx_train`` to ``M x F`` ("custom YaRN scaling detected", ggml-org/llama.cpp PR #28030, fixing issue
    #17459); a build before it, or a GGUF that already carries the same scaling, needs
    ``--override-kv <arch>.context_length=int:N`` as well: among the options where ``gguf_arch`` (the GGUF's
    architecture name) is known, which lifts the cap on every build and either file.
    """
    scaled = served_context_tokens(config, model_type)
    trained = _length(config.get("max_position_embeddings"))
    if trained is None or scaled <= trained:
        return None
    rope = _rope_scaling(config) or {}
    kind = rope.get("rope_type", rope.get("type"))
    factor = _whole(_factor(rope.get("factor", 1.0)))
    key = "rope_scaling" if config.get("rope_scaling") else "rope_parameters"
    if kind in ("yarn", "linear") and factor > FLOAT32_MAX:  # hostile87: rendered as a flag llama-server refused
        raise ArchitectureError(
            f"config field '{key}.factor' is {factor:.3g}, more than llama-server's --rope-scale reads (a 32-bit "
            f"float, at most {FLOAT32_MAX:.4g}), and no context needs it: the served length is capped at "
            f"{_MOST_TOKENS:,} tokens"
        )
    options: tuple[tuple[str, str | int | float], ...] = ()
    if kind == "yarn":
        original = _length(rope.get("original_max_position_embeddings")) or trained
        if original >= _MOST_TOKENS:  # hostile87: llama-server reads --yarn-orig-ctx as a 32-bit int
            raise ArchitectureError(
                f"config field '{key}.original_max_position_embeddings' is {original:,}, more than llama-server's "
                f"--yarn-orig-ctx reads (a 32-bit int, at most {_MOST_TOKENS - 1:,})"
            )
        options = (("rope_scaling", "yarn"), ("rope_scale", factor), ("yarn_orig_ctx", original))
    elif kind == "linear":
        options = (("rope_scaling", "linear"), ("rope_scale", factor))
    if options and gguf_arch:
        options = (*options, ("override_kv", context_length_override(gguf_arch, scaled)))
    return LlamaCppRope(trained, scaled, options)


#: Why a context past the GGUF's ``context_length`` of a ``dynamic``-scaled model is not lifted on llama.cpp.
LLAMA_CPP_NO_SUCH_ROPE = "llama.cpp has no such RoPE scaling type, its --rope-scaling taking none, linear or yarn"
#: What a GGUF already carrying the stretch, or a llama.cpp build before PR #28030, needs besides the flags.
LLAMA_CPP_OVERRIDE_KV = (
    "builds before ggml-org/llama.cpp PR #28030, or a GGUF converted with this rope_scaling, also need --override-kv "
    "<arch>.context_length=int:{tokens}"
)
#: Why a line carries the ``--override-kv`` of :func:`context_length_override` (the GGUF's architecture known).
LLAMA_CPP_OVERRIDE_KV_GIVEN = (
    "its --override-kv sets the GGUF's context_length, which llama-server caps a slot at, to {tokens:,}: for builds "
    "before ggml-org/llama.cpp PR #28030 and for a GGUF converted with this rope_scaling, whose cap the RoPE flags "
    "alone do not re-adjust"
)


def _override_phrase(rope: LlamaCppRope, engine: str = CAPPING_ENGINE) -> str:
    """What the parenthesis after the flags says of ``--override-kv``: why it is on the line, else what to add."""
    given = "override_kv" in rope_options(rope, rope.context_length + 1, engine)
    return (LLAMA_CPP_OVERRIDE_KV_GIVEN if given else LLAMA_CPP_OVERRIDE_KV).format(tokens=rope.scaled_tokens)


def _past_context_length(rope: LlamaCppRope, context_tokens: int, field: str, engine: str = "llama.cpp") -> str:
    """A context past the GGUF's ``context_length`` of a RoPE-scaled model, and where llama.cpp takes the stretch.

    ``engine``: llama-server caps each slot there; ik_llama.cpp's caps none (:data:`IK_LLAMA_CPP_LONGER_UNCAPPED`) and
    runs the positions past it unscaled.
    """
    capped = "where llama-server caps each slot" if engine == "llama.cpp" else f"past which {engine} runs unscaled"
    return (
        f"{field} {context_tokens:,} is past the GGUF's context_length {rope.context_length:,} (its training context, "
        f"n_ctx_train), {capped}; the {rope.scaled_tokens:,} tokens of the config's rope_scaling apply to {engine} "
        "only when given at launch"
    )


def llama_cpp_rope_note(rope: LlamaCppRope, context_tokens: int) -> str:
    """The note of a llama.cpp estimate whose ``--context`` is past the GGUF's ``context_length`` of a RoPE-scaled model."""
    capped = _past_context_length(rope, context_tokens, "--context")
    if not rope.flags:
        return f"{capped}: {LLAMA_CPP_NO_SUCH_ROPE}, so the slots stop at {rope.context_length:,}"
    return f"{capped}: start llama-server with {rope.flags} -c {context_tokens} ({_override_phrase(rope)})"


def llama_cpp_rope_planned(rope: LlamaCppRope, context_tokens: int, engine: str) -> str:
    """What a plan's ``engine`` line carries for requests of ``max_context_tokens`` past the GGUF's context_length."""
    capped = _past_context_length(rope, context_tokens, "max_context_tokens", engine)
    flags = " ".join(rope_args(rope_options(rope, context_tokens, engine)))
    return (
        f"{capped}: the {engine} line carries {flags}, which stretch it to {rope.scaled_tokens:,} "
        f"({_override_phrase(rope, engine)})"
    )


def llama_cpp_unscaled_limit(rope: LlamaCppRope | None, served_tokens: int) -> int:
    """The longest request llama.cpp serves of a model vLLM serves ``served_tokens`` of.

    The GGUF's context_length where the config's RoPE scaling is a type llama.cpp lacks (``dynamic``), else
    ``served_tokens``.
    """
    return rope.context_length if rope is not None and not rope.options else served_tokens


def llama_cpp_unscaled_phrase(model_name: str, rope: LlamaCppRope) -> str:
    """How a workload's error names the limit of :func:`llama_cpp_unscaled_limit` where it is the GGUF's."""
    return (
        f"the {rope.context_length:,} tokens of {model_name}'s GGUF context_length (its training context; the "
        f"{rope.scaled_tokens:,} of its config's rope_scaling are vLLM's: {LLAMA_CPP_NO_SUCH_ROPE})"
    )


#: Why a serving context above the limit is refused, and the way out a model card may document (newuser24 item 10:
#: Qwen2.5 serves 128k with YaRN factor 4 added to its config, which the served limit then reads).
LONGER_REFUSED = (
    "vLLM and SGLang refuse a longer context; where the model card documents RoPE scaling beyond it (e.g. YaRN), give "
    "the model as a path to a config.json with that rope_scaling"
)
#: What llama-server does with a -c past the model's training context (fix152: the llama.cpp estimates said vLLM's
#: refusal): llama_context warns "n_ctx_seq > n_ctx_train -- possible training context overflow" and the server caps each
#: slot at n_ctx_train, the GGUF's context_length (tools/server/server-context.cpp, "the slot context (%d) exceeds the
#: training context of the model (%d) - capping").
LLAMA_CPP_LONGER_CAPPED = (
    "llama-server starts with a longer -c but caps each slot at the model's training context (the GGUF's "
    'context_length, logging "the slot context ... exceeds the training context of the model - capping": '
    "https://github.com/ggml-org/llama.cpp/blob/master/tools/server/server-context.cpp), so a request longer than it "
    "is not served; lower the context (--context, a workload's max_context_tokens) to the limit"
)
#: What ik_llama.cpp's server does with a -c past the model's training context (fix153): it splits -c over its -np slots
#: and caps none at the training context (examples/server/server-context.cpp, ``server_context::init``: ``n_ctx_slot =
#: n_ctx / params_base.n_parallel``, with no check against ``llama_model_n_ctx_train``), so it serves positions the model
#: was not trained on.
IK_LLAMA_CPP_LONGER_UNCAPPED = (
    "ik_llama.cpp starts with a longer -c and does not cap its slots at the model's training context (each slot gets -c "
    "over -np: https://github.com/ikawrakow/ik_llama.cpp/blob/main/examples/server/server-context.cpp), so it serves "
    "positions past the ones the model was trained on, where its output is not to be trusted without RoPE scaling; "
    "lower the context to the limit, or give the model as a path to a config.json with the rope_scaling its card "
    "documents"
)


def longer_context_wording(engine: str) -> str:
    """What ``engine`` does with a context past the model's served limit, and the way out.

    ``engine``: ``llama.cpp`` (llama-server caps each slot), ``ik_llama.cpp`` (caps none), else a serving engine's
    (vLLM and SGLang refuse to start).
    """
    return {"llama.cpp": LLAMA_CPP_LONGER_CAPPED, "ik_llama.cpp": IK_LLAMA_CPP_LONGER_UNCAPPED}.get(engine, LONGER_REFUSED)


#: What a sequence longer than the served limit means for training: the model must be told to stretch its positions.
CONTEXT_EXTENSION = (
    "training on longer sequences is context extension: configure RoPE scaling (rope_scaling in the model's config, "
    "e.g. YaRN or linear) so the positions beyond it are interpolated"
)


def served_limit_phrase(model_name: str, limit_tokens: int) -> str:
    """How every message names a model's served limit: "the 8,192 tokens <model> serves (the max_model_len ...)"."""
    return (
        f"the {limit_tokens:,} tokens {model_name} serves "
        "(the max_model_len vLLM derives from its config's max_position_embeddings and rope_scaling)"
    )
