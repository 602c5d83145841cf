"""The model argument of a llama-server line the estimate prints (fix176 item 1: the lines had none).

llama-server takes the model as ``-m, --model FNAME`` (a local GGUF file: the first part of a split one, the rest
found beside it), or ``-hf, --hf-repo <user>/<model>[:quant]`` for a Hub repository of GGUF files
(https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md). The estimate reads a Hub model's
config.json and safetensors headers, a transformers checkpoint and never a GGUF repository, so ``-hf`` of it would
find no GGUF file: such a model, a catalog id or a local config.json is run as the GGUF file made of it
(convert_hf_to_gguf.py, then llama-quantize for a quantized type), named ``<name>-<TYPE>.gguf`` as the conversion
note names it.
"""

from __future__ import annotations

import os
import re

from generator.sizing.precision import WEIGHT_FORMATS

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from generator.calculator.model_source import ResolvedModel

#: The source of a model read from a local GGUF file (:func:`generator.calculator.gguf_file.resolve_gguf`).
LOCAL_GGUF = "local GGUF: "
#: The source of a model read from a local config.json or model folder (:mod:`generator.calculator.model_source`).
LOCAL_CONFIG = "local config: "

#: convert_hf_to_gguf.py's ``--outtype`` of a checkpoint's own 16- / 32-bit floats, as a GGUF file's name writes it.
FLOAT_FILE_TYPES = {"bf16": "BF16", "fp16": "F16", "fp32": "F32"}

#: What a file name keeps of a model's name (a Hub id's, a config's ``_name_or_path``): no path, no shell syntax.
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def gguf_file_name(model_name: str, precision: str) -> str:
    """The GGUF file of ``model_name`` at ``precision`` (a GGUF type, or bf16 / fp16 / fp32): ``<name>-<TYPE>.gguf``."""
    fmt = WEIGHT_FORMATS[precision]
    file_type = fmt.gguf or FLOAT_FILE_TYPES[precision]
    base = _UNSAFE.sub("-", model_name.rstrip("/").rsplit("/", 1)[-1]).strip("-.") or "model"
    return f"{base}-{file_type}.gguf"


def model_args(model: ResolvedModel, precision: str) -> list[str]:
    """llama-server's model words for ``model`` run at ``precision`` (the GGUF type the line's placement holds).

    A local GGUF file: ``-m`` and its path as given, ``~`` expanded (a quoted ``~`` is not a shell's); anything else:
    ``-m`` and the converted file :func:`gguf_file_name` names, of the Hub or catalog id's repository name, or of a
    local config's model name (its ``_name_or_path``, else its folder's).
    """
    if model.source.startswith(LOCAL_GGUF):
        return ["-m", os.path.expanduser(model.id)]
    named = model.name if model.source.startswith(LOCAL_CONFIG) else model.id
    return ["-m", gguf_file_name(named, precision)]
