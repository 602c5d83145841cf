"""fix202 item 1: a checkpoint's ``kv_cache_scheme`` sets vLLM's default KV cache, as its ``kv_cache_quant_algo`` does.

vLLM caches a compressed-tensors checkpoint with a ``kv_cache_scheme`` in fp8 under ``--kv-cache-dtype auto``
(https://github.com/vllm-project/vllm/pull/30141) and refuses a scheme other than 8-bit float
(https://github.com/vllm-project/vllm/pull/45312); a ModelOpt config's scheme is read before its ``kv_cache_quant_algo``
(``get_kv_cache_quant_algo_string``, vllm/utils/torch_utils.py). specgen sized a 16-bit cache for both. SGLang caches
what ``--kv-cache-dtype`` says (https://github.com/sgl-project/sglang/pull/4743): unchanged.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from generator.sizing.quantization import checkpoint_kv_cache_precision, parse_quantization_config
from tests.helpers import specgen_in_process
from tests.test_hostile97_quant_config import _model_dir

FP8_KV = {"num_bits": 8, "type": "float", "strategy": "tensor", "dynamic": False, "symmetric": True}
CT = {
    "quant_method": "compressed-tensors",
    "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}},
    "ignore": ["lm_head"],
}
MODELOPT = {"quant_method": "modelopt", "quant_algo": "FP8", "exclude_modules": ["lm_head"]}


@pytest.mark.parametrize(
    ("quantization", "fp8"),
    [
        ({**CT, "kv_cache_scheme": FP8_KV}, True),
        ({**CT, "kv_cache_scheme": {"num_bits": 8, "type": "float"}}, True),  # any scheme: vLLM's Attention sets fp8
        ({**CT, "kv_cache_scheme": None}, False),
        (CT, False),
        ({**MODELOPT, "kv_cache_scheme": FP8_KV}, True),
        ({**MODELOPT, "kv_cache_scheme": {"num_bits": 8, "type": "float"}}, False),  # dynamic not false: auto
        ({**MODELOPT, "kv_cache_scheme": {**FP8_KV, "num_bits": 4}, "kv_cache_quant_algo": "FP8"}, False),  # read first
        ({**MODELOPT, "kv_cache_scheme": {}, "kv_cache_quant_algo": "FP8"}, True),  # empty: falls through (`or`)
    ],
)
def test_a_kv_cache_scheme_is_read_as_vllm_reads_it(quantization: dict[str, Any], fp8: bool) -> None:
    quant = parse_quantization_config(quantization)
    assert quant is not None and quant.kv_cache_fp8 is fp8
    assert checkpoint_kv_cache_precision(quant, None, "vllm") == ("fp8" if fp8 else None)
    assert checkpoint_kv_cache_precision(quant, None, "sglang") is None


def test_the_estimate_sizes_vllms_fp8_cache_of_a_compressed_tensors_checkpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = _model_dir(tmp_path, {**CT, "kv_cache_scheme": FP8_KV})
    per_token = {}
    for engine in ("vllm", "sglang"):
        code, out, err = specgen_in_process(capsys, "estimate", str(model), "--gpu", "b200", "--engine", engine, "--json")
        assert code == 0, err
        said = json.loads(out)
        per_token[engine] = said["kv_cache"]["bytes_per_token"]
        assert said["precision"]["kv_cache"] == ("fp8" if engine == "vllm" else "bf16"), engine
    assert per_token["vllm"] * 2 == per_token["sglang"]  # Llama-3.3-70B: 80 x 8 x 128 x 2 at 1 byte, at 2


@pytest.mark.parametrize(
    ("scheme", "field", "said"),
    [
        ({**FP8_KV, "num_bits": 4}, "kv_cache_scheme.num_bits", "is 4: vLLM caches"),
        ({**FP8_KV, "type": "int"}, "kv_cache_scheme.type", "is 'int': vLLM caches"),
        ({**FP8_KV, "num_bits": "8"}, "kv_cache_scheme.num_bits", "is '8': vLLM caches"),
        ({}, "kv_cache_scheme.num_bits", "is None: vLLM caches"),
        ("fp8", "kv_cache_scheme", "must be a mapping"),
        ([8], "kv_cache_scheme", "must be a mapping"),
    ],
)
def test_a_malformed_kv_cache_scheme_is_refused_at_its_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], scheme: Any, field: str, said: str
) -> None:
    model = _model_dir(tmp_path, {**CT, "kv_cache_scheme": scheme})
    code, _, err = specgen_in_process(capsys, "estimate", str(model), "--gpu", "h100-sxm5-80gb")
    assert code == 1 and "Traceback" not in err, err
    placed = rf"{re.escape(str(model / 'config.json'))}:\d+:\d+: config field 'quantization_config\.{re.escape(field)}'"
    assert re.search(placed, err), err
    assert said in err, err
