"""fix199 items 2 and 3: a ModelOpt checkpoint's ``group_size`` and ``kv_cache_quant_algo`` read as vLLM reads them.

2. ``group_size`` was never checked: NVFP4 with 32-element (or 0, or "x") groups was sized as NVFP4. NVFP4 is one FP8
   E4M3 scale per 16 FP4 weights, and vLLM's ModelOpt loader int()s the field ("group_size must be an integer"):
   another NVFP4 block is refused at the field's line, an integer the FP8 algorithms ignore is taken.
3. ``kv_cache_quant_algo`` strings: vLLM lower-cases them and maps only "fp8" to an FP8 cache; any other it warns of
   and caches at the model's 16 bits (``get_kv_cache_quant_algo_string``, vllm/utils/torch_utils.py). specgen does the
   same (case variants of FP8 are FP8; "INT8", "NVFP4", "BANANA" are a 16-bit cache, not refused: vLLM serves them).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from generator.errors import ArchitectureError
from generator.sizing.quantization import parse_quantization_config
from tests.helpers import specgen_in_process
from tests.test_hostile97_quant_config import NVFP4, _model_dir

FP8 = {"quant_method": "modelopt", "quant_algo": "FP8", "exclude_modules": ["lm_head"]}


@pytest.mark.parametrize(
    ("quantization", "said"),
    [
        ({**NVFP4, "group_size": 32}, "is 32: NVFP4 scales blocks of 16"),
        ({**NVFP4, "group_size": 0}, "is 0: NVFP4 scales blocks of 16"),
        ({**NVFP4, "group_size": -16}, "is -16: NVFP4 scales blocks of 16"),
        ({**NVFP4, "group_size": "32"}, "is '32': NVFP4 scales blocks of 16"),
        ({**NVFP4, "group_size": True}, "is True: NVFP4 scales blocks of 16"),
        ({**NVFP4, "group_size": "x"}, "must be an integer"),
        ({**NVFP4, "group_size": [16]}, "must be an integer"),
        ({**FP8, "group_size": "x"}, "must be an integer"),
        ({**FP8, "group_size": {"n": 16}}, "must be an integer"),
    ],
)
def test_a_group_size_vllm_cannot_load_is_refused_at_its_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], quantization: dict[str, Any], said: str
) -> None:
    model = _model_dir(tmp_path, quantization)
    code, _, err = specgen_in_process(capsys, "estimate", str(model), "--gpu", "b200")
    assert code == 1 and "Traceback" not in err, err
    placed = rf"{re.escape(str(model / 'config.json'))}:\d+:\d+: config field 'quantization_config\.group_size'"
    assert re.search(placed, err), err
    assert said in err, err


@pytest.mark.parametrize(
    ("quantization", "precision"),
    [
        ({**NVFP4, "group_size": 16}, "nvfp4"),
        ({**NVFP4, "group_size": "16"}, "nvfp4"),  # vLLM's int("16")
        ({**NVFP4, "group_size": None}, "nvfp4"),  # vLLM's default 16
        ({key: v for key, v in NVFP4.items() if key != "group_size"}, "nvfp4"),
        ({**FP8, "group_size": 128}, "fp8"),  # the FP8 algorithms ignore it
        ({**FP8, "group_size": "0"}, "fp8"),
    ],
)
def test_a_group_size_vllm_loads_is_taken(quantization: dict[str, Any], precision: str) -> None:
    quant = parse_quantization_config(quantization)
    assert quant is not None and quant.precision == precision and quant.group_size is None


def test_the_hf_quant_config_object_is_checked_too() -> None:
    with pytest.raises(ArchitectureError, match="NVFP4 scales blocks of 16"):
        parse_quantization_config({"quantization": {"quant_algo": "NVFP4", "group_size": 32}})


@pytest.mark.parametrize(
    ("kv", "fp8"),
    [("FP8", True), ("fp8", True), ("Fp8", True), ("INT8", False), ("NVFP4", False), ("BANANA", False), ("", False),
     (" FP8", False), ("FP8_E4M3", False)],
)  # fmt: skip
def test_a_kv_cache_algo_string_is_read_as_vllm_reads_it(kv: str, fp8: bool) -> None:
    """vLLM: ``kv_algo.lower()`` in {"fp8"} is an FP8 cache, else "auto" (no strip: " FP8" is unknown to it)."""
    for algo in (NVFP4, FP8):
        quant = parse_quantization_config({**algo, "kv_cache_quant_algo": kv})
        assert quant is not None and quant.kv_cache_fp8 is fp8
