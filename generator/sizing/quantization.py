"""A checkpoint's own ``quantization_config``: its format and which modules it leaves alone."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping

from generator.errors import ArchitectureError
from generator.named_tuple import NamedTuple

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from typing import Any


class QuantizationConfig(NamedTuple):
    """What a pre-quantized checkpoint says about itself.

    ``precision`` is one of the weight-format names in :mod:`generator.sizing.precision`.
    ``group_size`` overrides the format's scale group (0: one scale per output row; None: the
    format's default). ``keep_patterns`` are the modules left at 16 bit (``modules_to_not_convert``
    / ``ignore``): globs or module prefixes, or regular expressions written ``re:...`` (compressed-
    tensors), matched against names like ``model.layers.3.self_attn.q_proj`` or ``lm_head``.
    """

    precision: str
    group_size: int | None = None
    keep_patterns: tuple[str, ...] = ()

    def keeps(self, module_name: str) -> bool:
        """Whether ``module_name`` (or a parent of it) stays unquantized."""
        for pattern in self.keep_patterns:
            if pattern.startswith("re:"):
                if re.fullmatch(pattern[3:], module_name):
                    return True
            elif fnmatch.fnmatchcase(module_name, pattern) or fnmatch.fnmatchcase(module_name, pattern + ".*"):
                return True
        return False


def _group_size(cfg: Mapping[str, Any]) -> int | None:
    """The scale group of a config: -1 (GPTQ's per-channel) becomes 0, absent stays None."""
    value = cfg.get("group_size", cfg.get("q_group_size"))
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    return 0 if value < 0 else value


def parse_quantization_config(cfg: Any) -> QuantizationConfig | None:
    """Map a Hugging Face ``quantization_config`` onto a specgen weight format."""
    if cfg is None:
        return None
    if not isinstance(cfg, Mapping):
        raise ArchitectureError("quantization_config must be a mapping")
    if "quant_method" not in cfg and isinstance(cfg.get("quantization"), Mapping):
        cfg = {"quant_method": "modelopt", **cfg["quantization"]}  # ModelOpt's hf_quant_config.json
    method = str(cfg.get("quant_method", "")).lower()
    listed = (
        cfg.get("modules_to_not_convert") or cfg.get("ignore") or cfg.get("ignored_layers") or cfg.get("exclude_modules") or []
    )
    if not isinstance(listed, (list, tuple)):
        raise ArchitectureError("quantization_config's list of unquantized modules must be a list of names")
    keep = tuple(str(p) for p in listed)
    if method == "mxfp4":
        return QuantizationConfig("mxfp4", None, keep)
    if method == "fp8":
        block = cfg.get("weight_block_size")
        return QuantizationConfig("fp8-block" if block else "fp8", None, keep)
    if method in ("gptq", "awq"):
        bits = int(cfg.get("bits", cfg.get("w_bit", 4)))
        if bits not in (4, 8):
            raise ArchitectureError(f"{method} with {bits} bits is not supported (4 or 8)")
        return QuantizationConfig("int4" if bits == 4 else "int8-gptq", _group_size(cfg), keep)
    if method == "bitsandbytes":
        if cfg.get("load_in_4bit"):
            double = bool(cfg.get("bnb_4bit_use_double_quant", False))
            return QuantizationConfig("nf4" if double else "nf4-no-double-quant", None, keep or ("lm_head",))
        return QuantizationConfig("int8", None, keep or ("lm_head",))
    if method == "compressed-tensors":
        return _compressed_tensors(cfg, keep)
    if method == "fbgemm_fp8":
        # Meta's FP8 checkpoints: row-wise (per output channel) fp32 scales; the list names the BF16 layers
        return QuantizationConfig("fp8-channel", None, keep)
    if method == "modelopt":
        return _modelopt(cfg, keep)
    raise ArchitectureError(f"quantization_config.quant_method '{method}' is not supported")


def _modelopt(cfg: Mapping[str, Any], keep: tuple[str, ...]) -> QuantizationConfig:
    """TensorRT Model Optimizer checkpoints: ``quant_algo`` NVFP4, FP8 (per tensor) or FP8_PB_WO (block)."""
    algo = str(cfg.get("quant_algo", "")).upper()
    formats = {"NVFP4": "nvfp4", "FP8": "fp8", "FP8_PB_WO": "fp8-block", "FP8_PER_CHANNEL_PER_TOKEN": "fp8-channel"}
    if algo not in formats:
        raise ArchitectureError(f"modelopt quant_algo '{algo}' is not supported (one of {', '.join(sorted(formats))})")
    return QuantizationConfig(formats[algo], None, keep)


def _compressed_tensors(cfg: Mapping[str, Any], keep: tuple[str, ...]) -> QuantizationConfig:
    groups = cfg.get("config_groups") or {}
    for group in groups.values():
        weights = (group or {}).get("weights") or {}
        bits = weights.get("num_bits")
        kind = str(weights.get("type", "int"))
        if bits == 4 and kind == "float":
            return QuantizationConfig("nvfp4", None, keep)  # nvfp4-pack-quantized: E2M1, group 16, E4M3 scales
        if bits == 8 and kind == "float":
            strategy = str(weights.get("strategy", "tensor"))
            name = {"channel": "fp8-channel", "block": "fp8-block"}.get(strategy, "fp8")
            return QuantizationConfig(name, None, keep)
        if bits == 8:
            return QuantizationConfig("int8", None, keep)
        if bits == 4:
            return QuantizationConfig("int4", _group_size(weights), keep)
    raise ArchitectureError("compressed-tensors quantization_config has no 4- or 8-bit weight group")
