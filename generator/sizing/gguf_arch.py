"""The GGUF architecture name (``general.architecture``, the prefix of every ``<arch>.*`` key) of a Hugging Face model.

convert_hf_to_gguf.py picks a model class by the config's ``architectures`` class and writes its ``model_arch``, whose
name is llama.cpp's ``LLM_ARCH_NAMES`` entry (https://github.com/ggml-org/llama.cpp/blob/master/convert_hf_to_gguf.py,
https://github.com/ggml-org/llama.cpp/blob/master/src/llama-arch.cpp):

- ``LlamaModel`` registers ``LlamaForCausalLM``, ``MistralForCausalLM`` and ``MixtralForCausalLM``:
  ``MODEL_ARCH.LLAMA``, ``"llama"`` (Mistral 7B and Mixtral run as llama);
- ``Qwen2Model`` / ``Qwen2MoeModel`` / ``Qwen3Model`` / ``Qwen3MoeModel`` / ``Qwen3NextModel``: ``"qwen2"``,
  ``"qwen2moe"``, ``"qwen3"``, ``"qwen3moe"``, ``"qwen3next"``;
- ``Phi3MiniModel`` (``Phi3ForCausalLM``): ``"phi3"``; ``Gemma2Model``: ``"gemma2"``; ``Gemma3Model``
  (``Gemma3ForCausalLM`` and ``Gemma3ForConditionalGeneration``'s text): ``"gemma3"``;
- ``DeepseekV2Model`` registers ``DeepseekV2ForCausalLM`` and ``DeepseekV3ForCausalLM``: ``"deepseek2"``;
- ``GptOssModel``: ``MODEL_ARCH.GPT_OSS``, ``LLM_ARCH_OPENAI_MOE``'s name ``"gpt-oss"``.

A model type not here (``mistral3``, whose GGUF is ``llama`` or ``mistral3`` by converter version) has no name: what
needs it says so in words rather than guess one.
"""

from __future__ import annotations

from collections.abc import Mapping

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from typing import Any

#: Hugging Face ``model_type`` -> GGUF ``general.architecture`` (see the module's sources).
GGUF_ARCHITECTURES = {
    "llama": "llama",
    "mistral": "llama",
    "mixtral": "llama",
    "qwen2": "qwen2",
    "qwen2_moe": "qwen2moe",
    "qwen3": "qwen3",
    "qwen3_moe": "qwen3moe",
    "qwen3_next": "qwen3next",
    "phi3": "phi3",
    "gemma2": "gemma2",
    "gemma3": "gemma3",
    "gemma3_text": "gemma3",
    "deepseek_v2": "deepseek2",
    "deepseek_v3": "deepseek2",
    "gpt_oss": "gpt-oss",
}
#: The config key a GGUF file's config carries its own ``general.architecture`` under (it is read, not mapped).
GGUF_ARCH_KEY = "general.architecture"
#: GGUF architectures whose model type maps to another name above: a file's own name is kept for them (a Mistral 3
#: text model converted as ``mistral3`` by newer converters, ``llama`` by older ones).
GGUF_ONLY_ARCHITECTURES = {"mistral3": "mistral"}


def gguf_architecture(config: Mapping[str, Any], model_type: str) -> str | None:
    """The GGUF architecture of a model: a GGUF file's own (``config[GGUF_ARCH_KEY]``), else its model type's, else None.

    A given name is kept only where it is the model type's (or a :data:`GGUF_ONLY_ARCHITECTURES` one of it): the GGUF
    reader writes a name it sizes, but a config.json may hold the key too (hostile88: ``"general.architecture": "evil
    $(touch x) x"`` was rendered into ``--override-kv``, unquoted on the estimate's llama.cpp line, and a name of
    another model's keys sets a context_length llama-server never reads).
    """
    own = GGUF_ARCHITECTURES.get(model_type)
    given = config.get(GGUF_ARCH_KEY)
    if isinstance(given, str) and GGUF_ONLY_ARCHITECTURES.get(given) == model_type:
        return given
    return own
