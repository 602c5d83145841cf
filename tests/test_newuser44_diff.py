"""newuser44 items 2, 9, 10 and 11: what the PR comment says of a changed service, an encoder, a fleet that stays
and a move to another provider.

- item 2: a changed service row had no bold ``changed:`` marker (a model swap, a rate bump), only training rows did;
  a service that only moved pools was listed with two identical cells.
- item 9: an encoder's row said "KV bf16" and "1,024.00 such sequences a replica" (its max_num_seqs): it keeps no KV
  cache.
- item 10: a model swap on the same GPUs read "1 workload file(s) change the fleet" with every total 0.
- item 11: aws -> gcp listed a pool of one name as "changed 2 → 2" under a banner saying none is resized in place.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from generator.fleet_diff import diff_plans, markdown_diff
from generator.pr_diff import markdown
from tests.helpers import VALID
from tests.helpers import specgen_in_process as specgen

POOL = "chat_h100_sxm5_80gb"


def _pool(name: str = POOL, nodes: int = 1, power_w: int = 8000, usd_per_hour: float = 55.04) -> dict[str, Any]:
    return {"name": name, "nodes": nodes, "power_w": power_w * nodes, "usd_per_hour": usd_per_hour * nodes,
            "node": {"gpu_id": "h100-sxm5-80gb", "gpus": 8, "platform_id": "aws-p5-48xlarge"}}  # fmt: skip


def _service(**top: Any) -> dict[str, Any]:
    """An 8B chat service as a spec.json holds it; ``details`` in ``top`` update its details."""
    details = {
        "requests_per_s": 2.0,
        "ttft_p95_s": 0.06,
        "tpot_s": 0.009,
        "slo_ttft_p95_ms": 2000,
        "slo_tpot_ms": 50,
        "context_tokens": 8192,
        "max_concurrency_per_replica": 51.85,
        "kv_cache_bytes_per_token": 131072,
        "max_num_seqs": 1024,
        "max_num_batched_tokens": 8192,
        "requests_per_s_per_replica_max": 24.3,
        **top.pop("details", {}),
    }
    dep = {"name": "small", "model_id": "meta-llama/Llama-3.1-8B-Instruct", "precision": "bf16", "tp": 1, "pp": 1,
           "replicas": 1, "gpus": 1, "pool": POOL, "kv_cache_precision": "bf16", "details": details}  # fmt: skip
    return dep | top


def _training(**top: Any) -> dict[str, Any]:
    details = {"method": "lora", "lora_rank": 16, "hours": 0.14, "usd_per_job": 15.99, "global_batch_size": 16,
               "micro_batch_size": 2, "gradient_accumulation_steps": 1, "data_parallel": 8, **top.pop("details", {})}  # fmt: skip
    dep = {"name": "small", "model_id": "meta-llama/Llama-3.1-8B-Instruct", "precision": "bf16", "tp": 1, "pp": 1,
           "replicas": 8, "gpus": 8, "pool": "lora_b200_sxm_180gb", "kv_cache_precision": None, "details": details}  # fmt: skip
    return dep | top


def _plan(*deps: dict[str, Any], provider: str = "aws", **extra: Any) -> dict[str, Any]:
    pools = [_pool(name) for name in sorted({d["pool"] for d in deps})]
    return {"provider": provider, "totals": {}, "pools": pools, "deployments": list(deps), **extra}


def _cells(text: str, name: str) -> tuple[str, str]:
    """The old and new cells of deployment ``name``'s row."""
    (row,) = [line for line in text.splitlines() if line.startswith(f"| `{name}` | ")]
    _, old, new = row.removesuffix(" |").split(" | ")
    return old, new


def _marker(cell: str) -> str:
    """A new cell's bold marker (without the stars), "" where it has none."""
    return cell[2:].split("**; ", 1)[0] if cell.startswith("**") else ""


# ---------------------------------------------------------------- item 2: the changed: marker of a service row


@pytest.mark.parametrize(
    ("old", "new", "marker"),
    [
        pytest.param(
            _service(),
            _service(model_id="Qwen/Qwen3-8B", details={"max_concurrency_per_replica": 45.29}),
            "changed: model meta-llama/Llama-3.1-8B-Instruct → Qwen/Qwen3-8B",
            id="model-swap",
        ),
        pytest.param(
            _service(tp=4, replicas=3, gpus=12),
            _service(tp=2, replicas=8, gpus=16, pool="chat_h200_sxm_141gb", details={"requests_per_s": 30.0}),
            "changed: TP 4 → 2, replicas 3 → 8, rate asked 2.00 → 30.00 req/s, pool chat_h100_sxm5_80gb → chat_h200_sxm_141gb",
            id="rate-bump-new-layout-and-pool",
        ),
        pytest.param(
            _service(),
            _service(pool="moe_h100_sxm5_80gb"),
            "moved to pool moe_h100_sxm5_80gb (from chat_h100_sxm5_80gb)",
            id="only-its-pool",
        ),
        pytest.param(
            _service(),
            _service(pool="small_l40s_48gb", details={"requests_per_s_per_replica_max": 4.39}),
            "moved to pool small_l40s_48gb (from chat_h100_sxm5_80gb); at the same settings at most 24.30 → 4.39 req/s a replica",
            id="its-pool-and-what-the-new-gpu-gives",
        ),
        pytest.param(
            _service(),
            _service(details={"slo_tpot_ms": 35, "slo_ttft_p95_ms": 1500}),
            "changed: SLO TTFT p95 2,000 → 1,500 ms, SLO TPOT 50 → 35 ms",
            id="slos",
        ),
        pytest.param(
            _service(),
            _service(precision="fp8", kv_cache_precision="fp8"),
            "changed: precision bf16 → fp8, KV bf16 → fp8",
            id="precision-and-kv-dtype",
        ),
        pytest.param(
            _service(),
            _service(details={"max_num_seqs": 256, "max_num_batched_tokens": 2048, "context_tokens": 32768}),
            "changed: max_model_len 8,192 → 32,768, max_num_seqs 1,024 → 256, max_num_batched_tokens 8,192 → 2,048",
            id="engine-settings",
        ),
        pytest.param(
            _service(),
            _service(details={"serving_engine": "sglang", "mem_fraction_static": 0.817}),
            "changed: engine vllm → sglang, mem_fraction_static - → 0.817",
            id="engine",
        ),
        pytest.param(
            _service(),
            _service(details={"task": "embed"}),
            "changed: task generate → embed",
            id="task",
        ),
        pytest.param(
            _service(),
            _service(details={"requests_per_s_per_replica_max": 23.54, "max_concurrency_per_replica": 45.29}),
            "changed at the same settings: at most 24.30 → 23.54 req/s a replica, max_model_len sequences a replica "
            "51.85 → 45.29",
            id="figures-alone-say-why-it-is-listed",
        ),
        # time-slicing: two replicas on one GPU; its GPUs are said where they are not TP x PP x replicas
        pytest.param(_service(), _service(replicas=2, gpus=2), "changed: replicas 1 → 2", id="gpus-implied"),
        pytest.param(_service(replicas=2, gpus=1), _service(replicas=2, gpus=2), "changed: GPUs 1 → 2", id="sharing-gone"),
        pytest.param(
            _training(),
            _training(
                replicas=4,
                gpus=4,
                pool="lora_rtx_pro_6000_blackwell_96gb",
                details={"data_parallel": 4, "global_batch_size": 8, "hours": 1.25, "usd_per_job": 22.48},
            ),
            "changed: global batch 16 → 8, DP 8 → 4, hours a run 0.14 → 1.25, $ a run 15.99 → 22.48, pool "
            "lora_b200_sxm_180gb → lora_rtx_pro_6000_blackwell_96gb",
            id="training-and-its-pool",
        ),
        pytest.param(
            _service(),
            _training(),
            "changed: service → training job, pool chat_h100_sxm5_80gb → lora_b200_sxm_180gb",
            id="a-service-becomes-a-training-job",
        ),
    ],
)
def test_a_changed_row_says_what_moved_first(old: dict[str, Any], new: dict[str, Any], marker: str) -> None:
    result = diff_plans(_plan(copy.deepcopy(old)), _plan(copy.deepcopy(new)))
    old_cell, new_cell = _cells(markdown_diff(result), "small")
    assert _marker(new_cell) == marker
    assert "**" not in old_cell


def test_a_row_the_same_on_both_sides_is_not_listed() -> None:
    result = diff_plans(_plan(_service()), _plan(_service()))
    assert result["deployments"] == []
    assert "| `small` |" not in markdown_diff(result)


# ---------------------------------------------------------------- item 9: an encoder keeps no KV cache


def _embed(kv_bytes: int | None) -> dict[str, Any]:
    details: dict[str, Any] = {"task": "embed", "latency_p95_s": 0.005, "slo_latency_p95_ms": 500, "ttft_p95_s": None,
               "tpot_s": None, "max_concurrency_per_replica": 1024.0, "requests_per_s": 50.0,
               "requests_per_s_per_replica_max": 1343.6}  # fmt: skip
    if kv_bytes is not None:
        details["kv_cache_bytes_per_token"] = kv_bytes
    dep = _service(model_id="BAAI/bge-m3", details=details)
    for key in ("slo_ttft_p95_ms", "slo_tpot_ms"):
        del dep["details"][key]
    return dep


@pytest.mark.parametrize(
    ("kv_bytes", "engine"),
    [
        pytest.param(0, "vllm, no KV cache (encoder), max_model_len 8,192, max_num_seqs 1,024", id="encoder"),
        # a decoder-based embedding model keeps one; a spec.json from before the figure reads as it did
        pytest.param(
            131072,
            "vllm, KV bf16, max_model_len 8,192 (1,024.00 such sequences a replica), max_num_seqs 1,024",
            id="decoder-embedding",
        ),
        pytest.param(
            None,
            "vllm, KV bf16, max_model_len 8,192 (1,024.00 such sequences a replica), max_num_seqs 1,024",
            id="older-spec-json",
        ),
    ],
)
def test_an_encoder_row_says_it_keeps_no_kv_cache(kv_bytes: int | None, engine: str) -> None:
    result = diff_plans(_plan(), _plan(_embed(kv_bytes)))
    _, new = _cells(markdown_diff(result), "small")
    assert new == (
        "BAAI/bge-m3 bf16 embed TP1xPP1 x1 (1 GPU); 50.00 req/s asked, 4% of capacity (request latency p95 5 ms at "
        f"that load); SLO request latency p95 500 ms; {engine}, max_num_batched_tokens 8,192, at most 1,343.60 req/s "
        "a replica"
    )
    serving = result["deployments"][0]["new"]["serving"]
    assert (serving.get("no_kv_cache"), serving["kv_cache_precision"]) == (("encoder", None) if kv_bytes == 0 else (None, "bf16"))


# ---------------------------------------------------------------- item 11: another provider's pools


RESIZED_ROW = (
    "| `chat_h100_sxm5_80gb` | changed (nodes 2 → 3, resized in place) | h100-sxm5-80gb | 2 → 3 | 16 → 24 | "
    "16,722 → 25,083 | 80,358.40 → 120,537.60 |"
)


def _priced(plan: dict[str, Any], power_w: int, usd_per_hour: float, nodes: int = 2) -> dict[str, Any]:
    plan["pools"] = [_pool(POOL, nodes=nodes, power_w=power_w, usd_per_hour=usd_per_hour)]
    return plan


@pytest.mark.parametrize(
    ("old", "new", "rows"),
    [
        pytest.param(
            _priced(_plan(_service()), 8361, 55.04),
            _priced(_plan(_service(), provider="gcp"), 7753, 88.49),
            [
                "| `chat_h100_sxm5_80gb` | removed (aws) | h100-sxm5-80gb | 2 → 0 | 16 → 0 | 16,722 → 0 | 80,358.40 → - |",
                "| `chat_h100_sxm5_80gb` | added (gcp) | h100-sxm5-80gb | 0 → 2 | 0 → 16 | 0 → 15,506 | - → 129,195.40 |",
            ],
            id="aws-to-gcp",
        ),
        pytest.param(
            _priced(_plan(_service(), region="us-east-1"), 8361, 55.04),
            _priced(_plan(_service(), region="us-west-2"), 8361, 60.0),
            [
                "| `chat_h100_sxm5_80gb` | removed (us-east-1) | h100-sxm5-80gb | 2 → 0 | 16 → 0 | 16,722 → 0 | 80,358.40 → - |",
                "| `chat_h100_sxm5_80gb` | added (us-west-2) | h100-sxm5-80gb | 0 → 2 | 0 → 16 | 0 → 16,722 | - → 87,600.00 |",
            ],
            id="region-named-on-both-sides",
        ),
        # in place: a region unset on one side may be the same region; the same provider resizes its pool
        pytest.param(
            _priced(_plan(_service(), region="us-east-1"), 8361, 55.04),
            _priced(_plan(_service()), 8361, 55.04, nodes=3),
            [RESIZED_ROW],
            id="region-unset-on-one-side",
        ),
        pytest.param(
            _priced(_plan(_service()), 8361, 55.04),
            _priced(_plan(_service()), 8361, 55.04, nodes=3),
            [RESIZED_ROW],
            id="same-provider",
        ),
    ],
)  # fmt: skip
def test_a_pool_on_another_providers_cluster_is_removed_and_added(
    old: dict[str, Any], new: dict[str, Any], rows: list[str]
) -> None:
    result = diff_plans(old, new)
    text = markdown_diff(result)
    assert [line for line in text.splitlines() if line.startswith(f"| `{POOL}` |")] == rows
    assert [p["status"] for p in result["pools"]] == [row.split(" | ")[1].split(" ")[0] for row in rows]


# ---------------------------------------------------------------- item 10: a change of what runs, the fleet unchanged


def _file(name: str, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    return {"file": name, "status": "changed", "diff": diff_plans(old, new), "memory": []}


SWAP = _file("swap.yaml", _plan(_service()), _plan(_service(model_id="Qwen/Qwen3-8B")))
RATE = _file("rate.yaml", _plan(_service()), _plan(_service(details={"requests_per_s": 4.0})))
RESIZED = _file("resized.yaml", _plan(_service()), _priced(_plan(_service()), 8000, 55.04, nodes=2))
MOVED = _file("moved.yaml", _plan(_service()), _plan(_service(), provider="gcp"))
SAME = {"file": "same.yaml", "status": "unchanged", "diff": diff_plans(_plan(_service()), _plan(_service())), "memory": []}


@pytest.mark.parametrize(
    ("files", "count"),
    [
        pytest.param([SWAP], "1 workload file(s) change what runs (fleet unchanged); 0 unchanged.", id="model-swap"),
        pytest.param([RATE, SAME], "1 workload file(s) change what runs (fleet unchanged); 1 unchanged.", id="rate"),
        pytest.param([RESIZED], "1 workload file(s) change the fleet; 0 unchanged.", id="resized"),
        pytest.param([MOVED], "1 workload file(s) change the fleet; 0 unchanged.", id="another-provider"),
        pytest.param(
            [RESIZED, SWAP, RATE],
            "1 workload file(s) change the fleet; 2 file(s) change what runs (fleet unchanged); 0 unchanged.",
            id="both",
        ),
        pytest.param([SAME], "0 workload file(s) change the fleet; 1 unchanged.", id="nothing"),
    ],
)
def test_the_count_tells_a_fleet_change_from_a_change_of_what_runs(files: list[dict[str, Any]], count: str) -> None:
    body = markdown({"base": "HEAD", "totals": {}, "files": files})
    (line,) = [line for line in body.splitlines() if line.endswith("unchanged.")]
    assert line == count


def test_a_model_swap_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The report's swap, planned: the same L40S, no pool row, the marker on the row."""
    (tmp_path / "old.yaml").write_text(VALID, encoding="utf-8")
    (tmp_path / "new.yaml").write_text(VALID.replace("meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-8B"), encoding="utf-8")
    code, out, _ = specgen(capsys, "diff", str(tmp_path / "old.yaml"), str(tmp_path / "new.yaml"))
    assert code == 0
    _, new = _cells(out, "chat")
    # the router's cap moves with the model (newuser73 item 14: the places a replica a maxconn is set to); acc120: 118 ->
    # 113 (114 -> 109 before), both models' batch at the TPOT larger on the L40S at the L40's GDDR6 stream share
    assert new.startswith(
        "**changed: model meta-llama/Llama-3.1-8B-Instruct → Qwen/Qwen3-8B, places a replica 118 → 113**; Qwen/Qwen3-8B bf16 "
    )
