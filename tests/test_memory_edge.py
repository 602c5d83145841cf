"""A training job at the memory edge: the levers that free what ZeRO-3 does not shard, before hundreds of ranks (fix145).

A 70B QLoRA fine-tune at 4,096 tokens on bought L4 servers holds, at ZeRO-3, its saved activations (12.4 GiB), the
gathered layers and root unit (6.2 GiB) and the CUDA context (2.2 GiB) on every GPU whatever the data-parallel degree:
21.35 GiB at DP64, 498 MiB over the card's 20.87 GiB budget, so the smallest degree that fits was DP709 and the plan
bought 89 servers ($3,317,119) for a run its 336 h deadline needed one 8-GPU server for. The search now also sizes the
job with its saved activations or its parameters offloaded to host RAM where memory, not the throughput, sets the
degree, and the ranking takes the cheaper; where the chosen layout still spreads past 4 x what the throughput needs, a
warning says what the narrow layout misses and which setting fits it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.api import plan_file
from generator.errors import SpecgenError
from generator.planner.memory_edge import EDGE_SPREAD, edge_levers, lever_pair, spreads, throughput_dp
from generator.planner.plan import Plan
from generator.workload.models import TrainingSpec

WORKLOAD = """version: 1
name: edge
deployments:
  - name: tune
    model: {model}
    training:
      method: {method}
      sequence_length: {seq}
      dataset_tokens: 200000000
      epochs: 1
      deadline_hours: 336
{extra}hardware:
  gpus: [l4-24gb]
  provider: baremetal
{constants}"""

SEVENTY = "meta-llama/Llama-3.1-70B-Instruct"


def _plan(
    tmp_path: Path, extra: str = "", *, model: str = SEVENTY, method: str = "qlora", seq: int = 4096, margin: float | None = None
) -> Plan:
    constants = f"constants:\n  safety_margin_fraction: {margin}\n" if margin is not None else ""
    path = tmp_path / "w.yaml"
    lines = "".join(f"      {line}\n" for line in extra.split(";") if line)
    path.write_text(WORKLOAD.format(model=model, method=method, seq=seq, extra=lines, constants=constants))
    return plan_file(str(path))[1]


def _servers(plan: Plan) -> int:
    return sum(pool.nodes for pool in plan.pools)


def _spread_warnings(plan: Plan) -> list[str]:
    return [f.message for f in plan.findings if f.code == "training-memory-spread"]


def test_seventy_b_qlora_on_l4s_offloads_activations_on_one_server(tmp_path: Path) -> None:
    # before fix145: 89 x dell-xe7740 (8 x L4), ZeRO-3 x DP712, capex $3,317,119, 1.0 h a run; now one server
    # fix145: 1 x dell-xe7740 (8 x L4), DP8, activations offloaded, $37,271, 92.6 h. acc127: on the 4-GPU R760xa neither
    # lever alone fits the throughput's DP4 (activations offloaded fit at DP7), both at once do, and its $1,110 a month
    # beats the XE7740's $1,448: 1 x dell-r760xa, DP4, $27,271, 185.2 h of the 336 h deadline
    plan = _plan(tmp_path)
    (job,) = plan.deployments
    assert [(p.nodes, p.node.platform_id, p.node.gpus) for p in plan.pools] == [(1, "dell-r760xa", 4)]
    assert (job.details["data_parallel"], job.details["zero_stage"]) == (4, 3)
    assert job.details["activation_offload"] is True and job.details["offload_params"] is True
    assert plan.totals["capex_usd"] == pytest.approx(27_271)
    assert job.details["hours"] == pytest.approx(185.2, abs=0.05)
    assert not _spread_warnings(plan)
    said = " ".join(job.reasons)
    assert "activation_offload: true, offload_params: true (left out: tried, as ZeRO-3 without it fits only at DP709" in said


@pytest.mark.parametrize(
    ("extra", "servers", "dp", "offloads", "said"),
    [
        # the job refuses activation offload: its parameters offloaded fit at DP48 (ZeRO-3 alone at DP709)
        ("activation_offload: false", 6, 48, (False, True), ("with offload_params: true fits", "247 MiB over", "loss: fused")),
        # both refused: the wide layout is all there is, and the warning names the fused loss that fits DP8
        ("activation_offload: false;offload_params: false", 89, 712, (False, False), ("4,327 MiB over", "with loss: fused")),
        # a fused loss frees the logits: DP8 without any offload, nothing to warn of
        ("activation_offload: false;offload_params: false;loss: fused", 1, 8, (False, False), ()),
    ],
)
def test_at_the_edge(
    tmp_path: Path, extra: str, servers: int, dp: int, offloads: tuple[bool, bool], said: tuple[str, ...]
) -> None:
    plan = _plan(tmp_path, extra)
    (job,) = plan.deployments
    assert (_servers(plan), job.details["data_parallel"]) == (servers, dp)
    assert (job.details["activation_offload"], job.details["offload_params"]) == offloads
    warned = _spread_warnings(plan)
    assert len(warned) == (1 if said else 0)
    for words in said:
        assert words in warned[0]
    if said:
        assert f"{dp // 8} x the DP8 its throughput needs" in warned[0]


def _l40s(tmp_path: Path, extra: str = "") -> Plan:
    """The 70B QLoRA at 16,384 tokens on bought L40S servers."""
    path = tmp_path / "w.yaml"
    lines = "".join(f"      {line}\n" for line in extra.split(";") if line)
    text = WORKLOAD.format(model=SEVENTY, method="qlora", seq=16384, extra=lines, constants="")
    path.write_text(text.replace("l4-24gb", "l40s-48gb"))
    return plan_file(str(path))[1]


def test_zero3_fitting_at_no_degree_tries_the_levers(tmp_path: Path) -> None:
    """acc127: at 16,384 tokens ZeRO-3 holds 94.2 GiB a GPU of its 42.3 GiB whatever the degree (the saved activations
    and logits of one sequence), so the job was refused; the levers are tried there too now. The activations offloaded
    alone fit at DP46 (6 x dell-xe7740, DP48, $511,626); with the parameters offloaded too, DP4 on one server."""
    plan = _l40s(tmp_path)
    (job,) = plan.deployments
    assert [(p.nodes, p.node.platform_id, p.node.gpus) for p in plan.pools] == [(1, "dell-xe7740", 4)]
    assert (job.details["data_parallel"], job.details["activation_offload"], job.details["offload_params"]) == (4, True, True)
    assert plan.totals["capex_usd"] == pytest.approx(51_271)
    said = " ".join(job.reasons)
    assert "offload_params: true (left out: tried, as ZeRO-3 without it fits at no data-parallel degree)" in said
    # the job's own settings refuse both levers: refused, as before
    with pytest.raises(SpecgenError, match=r"TP1 ZeRO-3: needs 94\.2 GiB per GPU of 42\.3 GiB"):
        _l40s(tmp_path, "activation_offload: false;offload_params: false")


def test_below_the_edge_no_warning(tmp_path: Path) -> None:
    # 2,048 tokens: ZeRO-3 fits DP8 on one 8-GPU server; on a 4-GPU R760xa memory sets DP8 > 4, so the parameters
    # offloaded are tried there and the cheaper server is taken, under the 4 x spread: no warning
    plan = _plan(tmp_path, seq=2048)
    (job,) = plan.deployments
    assert [(p.nodes, p.node.platform_id) for p in plan.pools] == [(1, "dell-r760xa")]
    assert (job.details["data_parallel"], job.details["offload_params"]) == (4, True)
    assert not _spread_warnings(plan)


@pytest.mark.parametrize(
    ("extra", "model", "method"),
    [
        ("", SEVENTY, "qlora"),
        ("activation_offload: false", SEVENTY, "qlora"),
        ("activation_offload: false;offload_params: false", SEVENTY, "qlora"),
        ("", "meta-llama/Llama-3.1-8B", "full"),
    ],
)
def test_more_memory_never_plans_more_servers(tmp_path: Path, extra: str, model: str, method: str) -> None:
    """Less safety margin is more memory for the job: the servers planned never grow as it shrinks."""
    counts: list[int | None] = []
    for margin in (0.07, 0.05, 0.03, 0.01):
        try:
            counts.append(_servers(_plan(tmp_path, extra, model=model, method=method, margin=margin)))
        except SpecgenError:
            counts.append(None)  # refused: no plan, at least as bad as any count
    planned = [c for c in counts if c is not None]
    assert planned, counts
    first = counts.index(planned[0])
    assert None not in counts[first:], counts  # once planned, more memory plans too
    assert planned == sorted(planned, reverse=True), counts


def test_throughput_dp_and_spread() -> None:
    assert throughput_dp(3, 8, 1) == 8  # one node's worth of ranks at least
    assert throughput_dp(20, 8, 2) == 20
    assert throughput_dp(0, 1, 1) == 1
    assert not spreads(None, 8)
    assert not spreads(EDGE_SPREAD * 8, 8)
    assert spreads(EDGE_SPREAD * 8 + 1, 8)


def _spec(**fields: object) -> TrainingSpec:
    base = {"method": "qlora", "sequence_length": 4096, "dataset_tokens": 1, "lora_rank": 16}
    return TrainingSpec(**{**base, **fields})  # type: ignore[arg-type]


def test_edge_levers_leave_the_jobs_own_settings() -> None:
    assert [lever for lever, _ in edge_levers(_spec())] == ["activation_offload: true", "offload_params: true"]
    assert [lever for lever, _ in edge_levers(_spec(activation_offload=False))] == ["offload_params: true"]
    assert [lever for lever, _ in edge_levers(_spec(activation_offload=False, offload_params=False))] == []
    # tried only where full recomputation keeps no more than each layer's input (its copies timed since acc127)
    levers = edge_levers(_spec(gradient_checkpointing="selective"))
    assert "activation_offload: true" not in [lever for lever, _ in levers]


def test_the_lever_pair_only_where_the_job_may_take_both() -> None:
    pair = lever_pair(_spec())
    assert pair is not None and pair[0] == "activation_offload: true, offload_params: true"
    assert (pair[1].activation_offload, pair[1].offload_params) == (True, True)
    assert lever_pair(_spec(activation_offload=False)) is None
    assert lever_pair(_spec(offload_params=True)) is None  # the job's own setting: one lever left
