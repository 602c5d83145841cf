"""fuzz34 items 2 and 5: what ``diff`` compares of a service's engine.

Item 2: a deployment split over two server kinds (fleet-existing's ``chat``: one replica on the owned XE8640, four on the
owned DGXs) had its engine settings only in its parts, which the diff did not read: ``max_num_seqs: 128`` read
"No change to the fleet." (JSON ``"deployments": []``) while every rendered engine changed. Item 5: sglang -> vllm and
SGLang's ``mem_fraction_static`` 0.8 -> 0.7 showed only through the concurrency figures.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.fleet_diff import diff_plans
from tests.conftest import REPO
from tests.helpers import specgen_in_process as specgen
from tests.test_fuzz34_wording import SERVICE, SLICED


def _diff(capsys: Any, tmp_path: Path, old: str, new: str) -> tuple[dict[str, Any], str]:
    paths = []
    for name, text in (("old", old), ("new", new)):
        path = tmp_path / name / "w.yaml"
        path.parent.mkdir()
        path.write_text(text, encoding="utf-8")
        paths.append(str(path))
    code, out, err = specgen(capsys, "diff", *paths, "--format", "json")
    assert code == 0, err
    code, text, err = specgen(capsys, "diff", *paths)
    assert code == 0, err
    return json.loads(out), text


def test_a_split_service_s_engine_setting_is_a_change(capsys: Any, tmp_path: Path) -> None:
    old = (REPO / "examples" / "fleet-existing.yaml").read_text(encoding="utf-8")
    new = old.replace("      kv_cache_precision: fp8\n", "      kv_cache_precision: fp8\n      max_num_seqs: 128\n", 1)
    assert new != old
    result, text = _diff(capsys, tmp_path, old, new)
    (row,) = result["deployments"]
    assert row["deployment"] == "chat"
    assert [p["pool"] for p in row["new"]["parts"]] == ["chat_dell_xe8640_h100_sxm5_80gb", "chat_dgx_h100_h100_sxm5_80gb"]
    # both parts agree: one value each; the slower part's latency at the load is the service's
    assert (row["old"]["serving"]["max_num_seqs"], row["new"]["serving"]["max_num_seqs"]) == (1024, 128)
    assert row["new"]["serving"]["engine"] == "vllm"
    assert (row["new"]["load"]["ttft_p95_s"], row["new"]["load"]["tpot_s"]) == (0.3563, 0.04167)
    assert "No change to the fleet." not in text
    assert (
        "(TTFT p95 356 ms, TPOT 41.7 ms at that load); SLO TTFT p95 1,500 ms, TPOT 50 ms; vllm, KV fp8, max_model_len "
        "16,384, max_num_seqs 128, max_num_batched_tokens 8,192, at most 8.29 req/s a replica |"
    ) in text


def test_parts_that_differ_show_each_part_s_setting() -> None:
    part = {"tp": 4, "pp": 1, "replicas": 1, "pool": "a", "max_num_seqs": 1024, "max_num_batched_tokens": 8192}
    dep = {
        "name": "chat",
        "model_id": "m",
        "precision": "fp8",
        "tp": 4,
        "pp": 1,
        "replicas": 3,
        "gpus": 12,
        "pool": "a",
        "kv_cache_precision": "fp8",
        "details": {"requests_per_s": 10.0, "context_tokens": 8192},
    }
    old = {
        "deployments": [
            dep
            | {
                "split": [
                    part | {"requests_per_s_per_replica_max": 4.0, "ttft_p95_s": 0.3, "tpot_s": 0.04},
                    part | {"pool": "b", "replicas": 2, "requests_per_s_per_replica_max": 5.0, "ttft_p95_s": 0.2, "tpot_s": 0.05},
                ]
            }
        ],
        "pools": [],
        "totals": {},
    }
    new = json.loads(json.dumps(old))
    new["deployments"][0]["split"][1]["max_num_seqs"] = 512
    (row,) = diff_plans(old, new)["deployments"]
    assert row["old"]["serving"]["max_num_seqs"] == 1024
    assert row["new"]["serving"]["max_num_seqs"] == [1024, 512]
    assert row["new"]["serving"]["requests_per_s_per_replica_max"] == [4.0, 5.0]
    # 10 req/s over 3 replicas at the slower part's 4 req/s; the slower part's TTFT and TPOT
    assert row["new"]["load"] == row["old"]["load"]
    assert (row["new"]["load"]["capacity_share"], row["new"]["load"]["ttft_p95_s"], row["new"]["load"]["tpot_s"]) == (
        0.8333,
        0.3,
        0.05,
    )


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        # the engine itself (item 5): SGLang's fraction of the memory free at its start, then vLLM's batched-token budget;
        # fix126 (review79 item 3): SGLang's prompts run as forwards of their own, each reading the weights and paying
        # an iteration's overhead, 7.21 -> 7.11 req/s a replica (vLLM's, one forward with the decodes, unmoved)
        (
            "      engine: sglang\n",
            "",
            (
                "; sglang, KV bf16, max_model_len 8,192 (7.40 such sequences a replica), mem_fraction_static 0.817, "
                "max_num_seqs 2,048, at most 7.11 req/s a replica |",
                "; vllm, KV bf16, max_model_len 8,192 (7.33 such sequences a replica), max_num_seqs 256, "
                "max_num_batched_tokens 2,048, at most 7.21 req/s a replica |",
            ),
        ),
        # SGLang's fraction as rendered (three places)
        (
            "      engine: sglang\n      mem_fraction_static: 0.8\n",
            "      engine: sglang\n      mem_fraction_static: 0.7\n",
            ("mem_fraction_static 0.800, max_num_seqs 2,048", "mem_fraction_static 0.700, max_num_seqs 2,048"),
        ),
    ],
)
def test_the_engine_and_its_memory_fraction_are_said(
    capsys: Any, tmp_path: Path, old: str, new: str, said: tuple[str, str]
) -> None:
    old, new = (SERVICE.format(engine=engine, provider="aws", gpus="h100-sxm5-80gb", sharing=SLICED) for engine in (old, new))
    result, text = _diff(capsys, tmp_path, old, new)
    (row,) = result["deployments"]
    (line,) = [line for line in text.splitlines() if line.startswith("| `assistant` |")]
    old_cell, new_cell = line.split(" | ")[1:3]
    assert said[0].rstrip(" |") in old_cell
    assert said[1].rstrip(" |") in new_cell
    engines = [row[side]["serving"]["engine"] for side in ("old", "new")]
    assert engines == ["sglang", "sglang" if "sglang" in new else "vllm"]
