"""hostile97: hostile ModelOpt / NVFP4 ``quantization_config`` objects in a local model directory's config.json.

1. ``kv_cache_quant_algo`` of another type than a string (8, ["FP8"], true, {...}) was read as "no FP8 cache" and the
   checkpoint sized with a 16-bit KV cache, where vLLM's ModelOpt configs refuse it ("kv_cache_quant_algo must be a
   string", vllm/model_executor/layers/quantization/modelopt.py ``from_config``). Now refused at its line.
2. A ``quant_algo`` that is missing, null or unknown, and a list of unquantized modules (``exclude_modules``,
   ``ignore`` ...) that is no list or holds no names, were refused naming the file but no line; now at the field's line
   and column.
3. An hf_quant_config-style ``quantization`` object holding a ``quant_method`` of its own ("gptq") was sized as GPTQ
   int4: the object is ModelOpt's whatever it holds.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator import catalog
from generator.sizing.quantization import parse_quantization_config
from tests.helpers import specgen_in_process

BASE = "meta-llama/Llama-3.3-70B-Instruct"
NVFP4 = {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16, "exclude_modules": ["lm_head"]}


def _model_dir(tmp_path: Path, quantization: Any) -> Path:
    config = {**catalog.models()[BASE].config, "quantization_config": quantization}
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(json.dumps(config, indent=1), encoding="utf-8")
    return tmp_path / "m"


REFUSED = [
    ({**NVFP4, "kv_cache_quant_algo": 8}, "quantization_config.kv_cache_quant_algo", "must be a string"),
    ({**NVFP4, "kv_cache_quant_algo": ["FP8"]}, "quantization_config.kv_cache_quant_algo", "must be a string"),
    ({**NVFP4, "kv_cache_quant_algo": True}, "quantization_config.kv_cache_quant_algo", "must be a string"),
    ({**NVFP4, "kv_cache_quant_algo": {"algo": "FP8"}}, "quantization_config.kv_cache_quant_algo", "must be a string"),
    ({"quant_method": "modelopt"}, "quantization_config.quant_algo", "is ''"),
    ({**NVFP4, "quant_algo": None}, "quantization_config.quant_algo", "is 'NONE'"),
    ({**NVFP4, "quant_algo": ["NVFP4"]}, "quantization_config.quant_algo", "modelopt quant_algo of that name"),
    ({**NVFP4, "exclude_modules": "lm_head"}, "quantization_config.exclude_modules", "must be a list of names"),
    ({**NVFP4, "exclude_modules": {"lm_head": 1}}, "quantization_config.exclude_modules", "must be a list of names"),
    ({**NVFP4, "exclude_modules": [], "ignore": "x"}, "quantization_config.ignore", "must be a list of names"),
    ({**NVFP4, "exclude_modules": [None]}, "quantization_config.exclude_modules", "must hold module names"),
    ({**NVFP4, "exclude_modules": ["lm_head", 1]}, "quantization_config.exclude_modules", "must hold module names"),
    ({**NVFP4, "exclude_modules": [["lm_head"]]}, "quantization_config.exclude_modules", "must hold module names"),
]


@pytest.mark.parametrize(("quantization", "field", "said"), REFUSED)
def test_a_hostile_modelopt_config_is_refused_at_its_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], quantization: dict[str, Any], field: str, said: str
) -> None:
    model = _model_dir(tmp_path, quantization)
    code, _, err = specgen_in_process(capsys, "estimate", str(model), "--precision", "nvfp4", "--gpu", "b200")
    assert code == 1 and "Traceback" not in err
    placed = rf"{re.escape(str(model / 'config.json'))}:\d+:\d+: config field '{re.escape(field)}'"
    assert re.search(placed, err), err
    assert said in err, err


@pytest.mark.parametrize(("kv", "fp8"), [("FP8", True), ("fp8", True), (None, False), ("NVFP4", False)])
def test_a_string_or_null_kv_cache_algo_is_read_as_before(kv: str | None, fp8: bool) -> None:
    quant = parse_quantization_config({**NVFP4, "kv_cache_quant_algo": kv})
    assert quant is not None and quant.precision == "nvfp4" and quant.kv_cache_fp8 is fp8


def test_a_quant_method_inside_the_modelopt_object_does_not_make_it_gptq() -> None:
    quant = parse_quantization_config({"quantization": {"quant_method": "gptq", "quant_algo": "NVFP4"}})
    assert quant is not None and quant.precision == "nvfp4"


LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 300),
    st.sampled_from([2**40, 0.5, float("inf")]),
    st.text(max_size=6),
    st.sampled_from(["NVFP4", "FP8", "fp8", "FP8_PB_WO", "lm_head", "*", "model.layers.0", "re:.*attn.*", "float"]),
)
VALUES = st.recursive(LEAVES, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3))
KEYS = st.sampled_from(
    ["quant_algo", "kv_cache_quant_algo", "exclude_modules", "ignore", "group_size", "bits", "sym", "weight_block_size"]
)
CONFIGS = st.builds(
    lambda method, rest: {"quant_method": method, **rest},
    st.sampled_from(["modelopt", "gptq", "awq", "fp8", "fbgemm_fp8", "bitsandbytes"]),
    st.dictionaries(KEYS, VALUES, max_size=5),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(CONFIGS, st.sampled_from([(), ("--precision", "nvfp4", "--gpu", "b200"), ("--gpu", "h100-sxm5-80gb")]))
def test_any_quantization_config_is_sized_or_refused_at_its_line(
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
    quantization: dict[str, Any],
    flags: tuple[str, ...],
) -> None:
    """Property (none existed for this path): any ModelOpt / GPTQ / AWQ / FP8 / bitsandbytes config of these keys is
    sized, or refused at a line of the config.json (300 draws each of this and a wider set found no other outcome)."""
    model = _model_dir(tmp_path_factory.mktemp("q"), quantization)
    code, _, err = specgen_in_process(capsys, "estimate", str(model), *flags)
    assert code in (0, 1, 3) and "Traceback" not in err, err
    if code == 1:
        assert re.search(rf"{re.escape(str(model / 'config.json'))}:\d+:\d+: ", err), err
