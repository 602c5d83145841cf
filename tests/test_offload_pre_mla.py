"""DeepSeek's rows run on llama.cpp before its MLA timed with the attention that build ran (acc116).

llama.cpp ran DeepSeek-V2/V3's attention uncompressed until its MLA (https://github.com/ggml-org/llama.cpp/pull/12801,
April 2025): every head's key (``qk_nope_head_dim + qk_rope_head_dim`` = 192) and value (``v_head_dim`` = 128) cached,
f16, and the scores and values as multi-head attention. The calibration timed those rows (``pre_mla_build``) with the
product's MLA (the compressed latent cached, the absorbed form's scores and values: 3.4 times the FLOPs a cached
token), so at 500 tokens of context the CPU's attention took 95 ms of a token's 290 and the rows ran 21-23% slow. The
rows' own source (https://www.reddit.com/r/LocalLLaMA/comments/1iq6ngx/ktransformers_21_and_llamacpp_comparison_with/)
gives the memory the two EPYC 7773X runs took at -c 65536: 682 and 970 (GiB), the Q4_K_M and Q8_0 GGUFs' 376.65 and
664.29 GiB and 305.0 GiB of that uncompressed cache, where the latent's would be 4.3 GiB.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from generator.catalog import find_model
from generator.sizing.architecture import MLA, parse_architecture
from generator.sizing.offload import _layer_kv
from generator.sizing.performance import layer_attention_flops
from generator.sizing.precision import weight_format
from generator.sizing.weights import size_weights
from generator.units import GIB
from tests.conftest import REPO
from tests.conftest import calibration_report as _report

DEEPSEEK_V3 = "deepseek-ai/DeepSeek-V3"


def _rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads((REPO / "tests" / "data" / "calibration.json").read_text())["offload_decode"]
    return rows


def _archs() -> tuple[Any, Any]:
    config = find_model(DEEPSEEK_V3).config
    arch = parse_architecture(config)
    return arch, _report().without_mla(arch, config)


def test_the_uncompressed_cache_is_the_memory_the_source_reports() -> None:
    mla, naive = _archs()
    cache = sum(_layer_kv(naive, 16, 65536))
    assert cache == 65536 * 61 * 128 * (192 + 128) * 2
    assert cache / GIB == pytest.approx(305.0, abs=0.05)
    # the source's 682 and 970 GiB: the GGUF (llama-bench's 376.65 / 664.29 GiB) and this cache
    assert 376.65 + cache / GIB == pytest.approx(682, abs=0.5)
    assert 664.29 + cache / GIB == pytest.approx(970, abs=1.0)
    # 71 times the latent's (512 + 64 a token a layer)
    assert cache / sum(_layer_kv(mla, 16, 65536)) == pytest.approx(128 * 320 / 576)


def test_the_attention_is_multi_head_and_the_weights_do_not_change() -> None:
    mla, naive = _archs()
    assert mla.uses_mla and not naive.uses_mla
    layer_mla, layer_naive = mla.layers[0], naive.layers[0]
    assert layer_mla.attention == MLA
    # scores over the 192-wide keys, values over the 128-wide values, every head: 2 x 128 x 320 a cached token
    assert layer_attention_flops(naive, layer_naive, 1000) == 2 * 128 * (192 + 128) * 1000
    # the absorbed form's 2 x 128 x (576 + 512): 3.4 times as many
    assert layer_attention_flops(mla, layer_mla, 1000) / layer_attention_flops(naive, layer_naive, 1000) == pytest.approx(
        1088 / 320
    )
    fmt = weight_format("q4_k_m")
    assert size_weights(naive, fmt) == size_weights(mla, fmt)


@pytest.mark.parametrize(
    ("match", "measured", "as_mla", "as_ran"),
    [
        # EPYC 7773X, 500 tokens of context: the absorbed form's 95 ms of attention a token becomes 28 ms, and the
        # uncompressed cache's 2.5 GB is read (21 ms): -20.9% -> -6.0%, -22.7% -> -13.5%
        ({"precision": "q4_k_m", "cpu_as_reported": "AMD EPYC 7773X (64 cores, Zen3 V-Cache)"}, 4.36, 3.45, 4.10),
        ({"precision": "q8_0", "cpu_as_reported": "AMD EPYC 7773X (64 cores, Zen3 V-Cache)"}, 2.98, 2.30, 2.58),
        # Xeon 6980P at an empty context: no cached token, nothing moves (-21.2%: its memory, as ik_llama.cpp's row there)
        ({"precision": "q8_0", "memory_channels": 12}, 6.20, 4.88, 4.88),
        # two Xeon Gold 6454S (out of sample): -11.9% -> +9.9%
        ({"sockets": 2}, 4.51, 3.97, 4.96),
    ],
)
def test_each_pre_mla_row_is_timed_with_the_attention_it_ran(
    match: dict[str, Any], measured: float, as_mla: float, as_ran: float
) -> None:
    report = _report()
    row = next(
        r for r in _rows() if r.get("pre_mla_build") and "ram_gib" not in r and all(r.get(k) == v for k, v in match.items())
    )
    assert row["tokens_per_s"] == measured
    assert report.predict_offload_decode(row) == pytest.approx(as_ran, abs=0.005)
    assert report.predict_offload_decode({**row, "pre_mla_build": False}) == pytest.approx(as_mla, abs=0.005)


def test_rows_after_llama_cpps_mla_keep_the_compressed_cache() -> None:
    report = _report()
    row = next(
        r
        for r in _rows()
        if r["model"] == "deepseek-ai/DeepSeek-R1" and r["engine"] == "ik_llama.cpp" and r["sockets"] == 1 and "ram_gib" not in r
    )
    assert not row.get("pre_mla_build")
    arch = report._offload_setup(row, row["context_tokens"] + 1)[0]
    assert arch.uses_mla
