"""newuser65 (offline and batch inference), items 4, 5, 10 and 12: what the work costs and what bounds it.

Item 5: a summarisation run (3,000 tokens in for 300 out) was priced per million output tokens only, and an embedding
service (no output tokens) at no price a token at all. Each figure is now beside its per million input tokens and, for a
generating service, per million tokens in and out, in the same variants (at the rate, at capacity, at the average, at
the average's floor).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.api import plan_as_deployed
from generator.fleet_diff import buy_vs_rent, buy_vs_rent_line
from generator.units import HOURS_PER_MONTH
from tests.helpers import estimate_json, run_estimate

SERVICE = """\
version: 1
name: t
deployments:
  - name: s
    model: MODEL
    inference:
TASK      max_context_tokens: 8192
      avg_input_tokens: 3000
OUTPUT      requests_per_second: 20
AVERAGE      service_class: batch
hardware:
  provider: aws
  gpus: [GPU]
kubernetes: {location: us-east-1}
"""


def _service(tmp_path: Path, *, pooling: bool, average: bool) -> Path:
    text = (
        SERVICE.replace("MODEL", "BAAI/bge-m3" if pooling else "meta-llama/Llama-3.1-8B-Instruct")
        .replace("TASK", "      task: embed\n" if pooling else "")
        .replace("OUTPUT", "" if pooling else "      avg_output_tokens: 300\n")
        .replace("AVERAGE", "      average_requests_per_second: 5\n" if average else "")
        .replace("GPU", "l4-24gb" if pooling else "h100-sxm5-80gb")
    )
    path = tmp_path / "w.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _millions(rps: float, tokens: int) -> float:
    return rps * tokens * 3600 * HOURS_PER_MONTH / 1e6


@pytest.mark.parametrize(
    ("pooling", "average", "kinds", "variants"),
    [
        (False, False, {"output_tokens": 300, "input_tokens": 3000, "tokens": 3300}, ("", "_at_capacity")),
        (
            False,
            True,
            {"output_tokens": 300, "input_tokens": 3000, "tokens": 3300},
            ("", "_at_capacity", "_at_average", "_at_average_floor"),
        ),
        (True, False, {"input_tokens": 3000}, ("", "_at_capacity")),  # item 5: a pooling service had none
        (True, True, {"input_tokens": 3000}, ("", "_at_capacity", "_at_average", "_at_average_floor")),
    ],
)
def test_cost_per_million_tokens_in_and_out(
    tmp_path: Path, pooling: bool, average: bool, kinds: dict[str, int], variants: tuple[str, ...]
) -> None:
    _, plan = plan_as_deployed(str(_service(tmp_path, pooling=pooling, average=average)))
    (dep,) = plan.deployments
    d = dep.details
    assert sorted(k for k in d if k.startswith("usd_per_million_")) == sorted(
        f"usd_per_million_{kind}{variant}" for kind in kinds for variant in variants
    )
    rates = {"": 20.0, "_at_average": 5.0, "_at_average_floor": 5.0}
    for kind, tokens in kinds.items():
        assert d[f"usd_per_million_{kind}"] == pytest.approx(d["usd_per_month"] / _millions(20, tokens), abs=1e-4)
        for variant in variants:  # one month over the tokens: the ratios are the tokens'
            month = d["usd_per_month_floor"] if variant == "_at_average_floor" else d["usd_per_month"]
            if variant in rates:
                expected = month / _millions(rates[variant], tokens)
                assert d[f"usd_per_million_{kind}{variant}"] == pytest.approx(expected, abs=1e-4)
    head = "output tokens" if not pooling else "input tokens"
    (line,) = [r for r in dep.reasons if r.startswith("costs ") and " per million " in r]
    assert f" per million {head} at " in line
    assert ("per million input tokens (3,000 a request) and" in line) is not pooling
    assert ("per million tokens in and out" in line) is not pooling
    if not pooling and not average:  # newuser72 item 8: the input figures are at the asked 20 req/s, not the sustained rate
        assert "at that rate" not in line and "); at 20 req/s, $" in line


@pytest.mark.parametrize(
    ("floor", "break_even", "within", "said"),
    [
        (None, None, None, None),  # a rented side that does not scale: the peak's month alone, as before
        (138618.24, None, None, None),  # a floor at the peak's month says nothing more
        (46206.08, 28.3, True, "buying has cost less after 28.3 months, within the 36-month amortisation, and"),
        (35000.0, 40.2, False, "buying does not pay back within the 36-month amortisation (it would after 40.2 months)"),
        (8000.0, None, False, "buying never pays back"),
    ],
)
def test_buy_vs_rent_against_the_rented_floor(
    floor: float | None, break_even: float | None, within: bool | None, said: str | None
) -> None:
    bought = {"totals": {"capex_usd": 1071000.0, "opex_usd_per_month": 8348.49}, "pools": []}
    rented: dict[str, object] = {"capex_usd": None, "usd_per_month": 138618.24}
    if floor is not None:
        rented["usd_per_month_floor"] = floor
    payback = buy_vs_rent({"totals": rented, "pools": []}, bought)
    assert payback is not None and payback["break_even_months"] == 8.2  # the peak's, as before
    line = buy_vs_rent_line(payback)
    if said is None or floor is None:
        assert "rent_usd_per_month_floor" not in payback and "at their floor" not in line
        return
    assert payback["rent_usd_per_month_floor"] == floor
    assert (payback["break_even_months_at_floor"], payback["within_amortization_at_floor"]) == (break_even, within)
    assert payback["rent_total_usd_over_amortization_at_floor"] == pytest.approx(36 * floor, abs=0.01)
    assert f"the rented side's pools autoscale: at their floor all month (${floor:,.0f}/month" in line
    assert said in line


LIMITS = """\
version: 1
name: l
deployments:
  - name: d
    model: meta-llama/Llama-3.1-8B-Instruct
    inference:
      service_class: batch
      max_context_tokens: 8192
      avg_input_tokens: 3000
      avg_output_tokens: 300
LIMITS      requests_per_second: 50
hardware:
  provider: aws
  gpus: [h100-sxm5-80gb]
kubernetes: {location: us-east-1}
"""


@pytest.mark.parametrize(
    ("limits", "level", "field", "said"),
    [
        # item 10: 27.5 GiB of activations left a 27.9 GiB KV pool, a batch of 69 and 9 replicas for 8, unsaid
        (
            {"max_num_seqs": 65536, "max_num_batched_tokens": 65536},
            "warning",
            "max_num_seqs",
            (
                "activations take 27.5 GiB a GPU and the KV pool 27.9 GiB (3.5 and 51.9 GiB at the engine's defaults",
                "the KV cache holds 69 average requests of 3,300 tokens (128 at the defaults)",
                "A replica sustains 5.71 req/s against 6.33 at the defaults: 9 replica(s) for 50 req/s where 8 would do",
            ),
        ),
        ({"max_num_seqs": 2048}, "info", "max_num_seqs", ("the same 8 replica(s) for 50 req/s, with less headroom",)),
        ({}, None, None, ()),  # the defaults
        ({"max_num_seqs": 256}, None, None, ()),  # below the default: no activations taken from the KV pool
    ],
)
def test_engine_limits_that_cost_capacity_are_said(
    tmp_path: Path, limits: dict[str, int], level: str | None, field: str | None, said: tuple[str, ...]
) -> None:
    path = tmp_path / "l.yaml"
    path.write_text(LIMITS.replace("LIMITS", "".join(f"      {k}: {v}\n" for k, v in limits.items())), encoding="utf-8")
    _, plan = plan_as_deployed(str(path))
    found = [f for f in plan.findings if f.code == "engine-limits-cost-capacity"]
    assert [(f.level, f.path) for f in found] == ([(level, f"deployments[0].inference.{field}")] if level else [])
    for text in said:
        assert text in found[0].message


@pytest.mark.parametrize(
    ("gpu", "lines", "rate", "said"),
    [
        # item 8: the batch is the KV cache's, so dropping the SLOs bought nothing, and the lever went unnamed
        ("h100-sxm5-80gb", {}, 50, "the cache holds 257, the batch runs 257 and a replica sustains 8.15 req/s against 6.33: 7"),
        ("h100-sxm5-80gb", {}, 173.6, ": 22 replica(s) for 173.6 req/s where it needs 28"),
        ("h100-sxm5-80gb", {"kv_cache_precision": "fp8"}, 50, None),  # already fp8
        ("h100-sxm5-80gb", {}, 1, None),  # one replica either way: headroom alone
        ("h100-sxm5-80gb", {"service_class": "interactive", "slo": "{tpot_ms: 15}"}, 50, None),  # the SLO holds the batch
        ("a100-sxm4-80gb", {}, 50, None),  # no FP8 on Ampere
    ],
)
def test_kv_bound_batch_names_fp8_kv_cache(
    tmp_path: Path, gpu: str, lines: dict[str, str], rate: float, said: str | None
) -> None:
    text = LIMITS.replace("LIMITS", "".join(f"      {k}: {v}\n" for k, v in lines.items())).replace("h100-sxm5-80gb", gpu)
    text = text.replace("requests_per_second: 50", f"requests_per_second: {rate}")
    if "service_class" in lines:
        text = text.replace("      service_class: batch\n", "", 1)
    path = tmp_path / "k.yaml"
    path.write_text(text, encoding="utf-8")
    _, plan = plan_as_deployed(str(path))
    found = [f for f in plan.findings if f.code == "kv-cache-fp8"]
    assert [(f.level, f.path) for f in found] == ([("info", "deployments[0].inference.kv_cache_precision")] if said else [])
    if said:
        assert said in found[0].message
        assert "its batch is what its bf16 KV cache holds" in found[0].message


QUEUE = ("meta-llama/Llama-3.1-8B-Instruct", "--input-tokens", "3000", "--output-tokens", "300")


@pytest.mark.parametrize(
    ("args", "code", "said", "drain"),
    [
        (
            ("--gpu", "h100-sxm5-80gb", "--batch", "100000"),
            0,
            "runs 128 at a time, the rest queue: the KV pool holds 128 sequences of 3,300 tokens (batch 100,000 asked: "
            "99,872 wait for a place in it)",
            "  drain        100,000 requests in about 4.37 h at 6.35 req/s (128 at a time)",
        ),
        (("--gpu", "h100-sxm5-80gb", "--batch", "128"), 0, "fits: the KV pool holds 128 sequences", None),
        # not one whole-context sequence fits: still no fit, and no drain time
        (("--gpu", "l4-24gb", "--context", "131072", "--batch", "100"), 3, ": does NOT fit", None),
    ],
)
def test_an_estimate_batch_past_the_kv_pool_queues(args: tuple[str, ...], code: int, said: str, drain: str | None) -> None:
    got, text = run_estimate(*QUEUE, *args)
    assert got == code and said in text
    assert ("  drain " in text) is (drain is not None) and (drain is None or drain in text)
    data = estimate_json(*QUEUE, *args)
    queued = data["capacity"].get("average_batch", {}).get("queued")
    assert (queued, data["throughput"].get("drain_s")) == (
        # 6.3288 req/s before newuser73 item 17 (a sequence's own prefill counted in its TTFT and again in its decode)
        (99_872, pytest.approx(100_000 / 6.3543, rel=1e-3)) if drain else (None, None)
    )


POOLED = """\
version: 1
name: p
deployments:
  - name: d
    model: MODEL
    inference:
      task: TASK
      service_class: batch
      max_context_tokens: 8192
      avg_input_tokens: INPUT
      requests_per_second: 20
hardware:
  provider: aws
  gpus: [GPU]
kubernetes: {location: us-east-1}
"""


@pytest.mark.parametrize(
    ("model", "task", "gpu", "tokens", "rate"),
    [
        ("BAAI/bge-m3", "embed", "l4-24gb", 512, 141.77),  # item 11: the embed backfill's replica, as plan embed.yaml
        ("BAAI/bge-reranker-v2-m3", "score", "l4-24gb", 600, None),
        ("Qwen/Qwen3-8B", "embed", "l40s-48gb", 512, None),  # a decoder as an embedder: it keeps a KV pool
    ],
)
def test_estimate_task_sizes_a_pooling_replica_as_the_plan(
    tmp_path: Path, model: str, task: str, gpu: str, tokens: int, rate: float | None
) -> None:
    path = tmp_path / "p.yaml"
    text = POOLED.replace("MODEL", model).replace("TASK", task).replace("GPU", gpu).replace("INPUT", str(tokens))
    path.write_text(text, encoding="utf-8")
    _, plan = plan_as_deployed(str(path))
    (dep,) = plan.deployments
    args = (model, "--gpu", gpu, "--task", task, "--input-tokens", str(tokens), "--context", "8192", "--tp", str(dep.tp))
    data = estimate_json(*args)
    pooled = data["pooling"]
    assert pooled["requests_per_s"] == pytest.approx(dep.details["requests_per_s_per_replica_max"], abs=1e-3)
    assert pooled["input_tokens_per_s"] == dep.details["max_input_tokens_per_s_per_replica"]
    assert rate is None or pooled["requests_per_s"] == pytest.approx(rate, abs=0.01)
    code, out = run_estimate(*args)
    assert code == 0 and f"  throughput   {pooled['requests_per_s']:,.2f} requests/s, " in out


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        (("--pp", "2"), 3, "does NOT fit: TP1 PP2: vLLM runs an encoder without pipeline parallelism"),
        ((), 0, "task embed (vLLM --runner pooling)"),
    ],
)
def test_estimate_task_says_what_does_not_run(args: tuple[str, ...], code: int, said: str) -> None:
    got, text = run_estimate("BAAI/bge-m3", "--gpu", "l4-24gb", "--task", "embed", "--input-tokens", "512", *args)
    assert got == code and said in text


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        ((), 1, "estimate it with --task embed (or, as a sequence classifier, --task score) and --input-tokens"),
        (("--task", "embed", "--output-tokens", "3"), 2, "--output-tokens is not read with --task embed"),
        (("--task", "embed", "--engine", "sglang"), 2, "--engine is not read with --task embed"),
    ],
)
def test_an_encoder_estimate_names_task_and_its_options(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], code: int, said: str
) -> None:
    from generator.calculator.cli import main

    try:
        got = main(["BAAI/bge-m3", "--gpu", "l4-24gb", "--input-tokens", "512", *args])
    except SystemExit as exc:  # a usage error
        got = int(exc.code or 0)
    assert got == code and said in capsys.readouterr().err


BUDGET = """\
version: 1
name: b
deployments:
  - name: s
    model: meta-llama/Llama-3.1-8B-Instruct
    inference:
ALLOWED      max_context_tokens: 8192
      avg_input_tokens: 1000
      avg_output_tokens: 200
      requests_per_second: 20
hardware:
  provider: aws
  gpus: [l4-24gb, l40s-48gb]
  max_budget_usd_per_month: BUDGET
kubernetes: {location: us-east-1}
"""


@pytest.mark.parametrize(
    ("allowed", "budget", "said"),
    [
        # item 6: the error called bf16's $5,434 the cheapest while fp8, allowed, took $4,076
        (True, 5000, "is 3 x TP1 on 3 x aws-g6e-xlarge (1 x l40s-48gb) at $4,076 a month, within the limits (the layouts"),
        (True, 3000, "is 3 x TP1 on 3 x aws-g6e-xlarge (1 x l40s-48gb) at $4,076 a month (the layouts above are bf16's"),
        (False, 5000, None),  # no precision allowed beside the one planned
    ],
)
def test_the_budget_error_names_a_cheaper_allowed_precision(tmp_path: Path, allowed: bool, budget: int, said: str | None) -> None:
    from generator.errors import InfeasibleError

    path = tmp_path / "b.yaml"
    given = "      allowed_precisions: [fp8, bf16]\n" if allowed else ""
    path.write_text(BUDGET.replace("ALLOWED", given).replace("BUDGET", str(budget)), encoding="utf-8")
    with pytest.raises(InfeasibleError) as caught:
        plan_as_deployed(str(path))
    message = str(caught.value)
    assert "the cheapest priced layout costs $5,434 a month" in message
    assert ("the cheapest at fp8, in allowed_precisions" in message) is (said is not None)
    assert said is None or (said in message and "set precision: fp8 to plan it" in message)
