"""The layout search tries pipeline parallelism at every TP degree inside one node (fuzz22 item 1).

Before, PP > 1 was tried only at a server's largest TP degree, so TP2 PP4 inside one 8-GPU Dell XE7740 was never
formed: an embedding service was planned at $32,418/month on 24 two-GPU servers, and a 16,000-token chat service
at $10,664/month as TP4 PP6 over three servers, where pinning ``parallelism: {tp: 2, pp: 4}`` gave $20,945 and
$6,982. A pinned layout the search can form must never beat the unpinned cost objective.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.errors import InfeasibleError
from generator.planner import plan_workload
from generator.planner.early import PIPELINE_STAGES
from generator.planner.inference import pipeline_depths
from generator.planner.plan import Plan
from generator.workload import load_workload

#: fuzz22 item 1's embedding service (e3.yaml): 4,096-token inputs at 60 req/s, 500 ms p95.
EMBED = """\
version: 1
name: e
deployments:
  - name: emb
    model: mistralai/Mistral-7B-v0.1
    inference:
      task: embed
      max_context_tokens: 4096
      avg_input_tokens: 4096
      requests_per_second: 60
      slo: {{ttft_p95_ms: 500}}
{pin}hardware: {{gpus: [l40s-48gb]{platforms}}}
"""

#: fuzz22 item 1's generating service (gpp.yaml without its pin): 16,000-token prompts, 100-token answers.
CHAT = """\
version: 1
name: g
deployments:
  - name: chat
    model: Qwen/Qwen2.5-7B-Instruct
    inference:
      max_context_tokens: 32768
      avg_input_tokens: 16000
      avg_output_tokens: 100
      requests_per_second: 5
      slo: {{ttft_p95_ms: 1500, tpot_ms: 100}}
{pin}hardware: {{gpus: [l40s-48gb]{platforms}}}
"""

#: A small chat service and a small embedding service for the property (quick to plan).
SMALL = """\
version: 1
name: s
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{max_context_tokens: 8192, avg_input_tokens: 2000, avg_output_tokens: 200, requests_per_second: 4}}
{pin}hardware: {{gpus: [l40s-48gb]{platforms}}}
"""

SMALL_EMBED = """\
version: 1
name: se
deployments:
  - name: emb
    model: Qwen/Qwen2.5-7B-Instruct
    inference:
      task: embed
      max_context_tokens: 8192
      avg_input_tokens: 3000
      requests_per_second: 20
      slo: {{ttft_p95_ms: 400}}
{pin}hardware: {{gpus: [l40s-48gb]{platforms}}}
"""

XE7740 = ", platforms: [dell-xe7740]"


def _plan(tmp_path: Path, template: str, pin: tuple[int, int] | None = None, platforms: str = "") -> Plan:
    """``template`` planned with ``parallelism`` pinned to (tp, pp) where given."""
    text = f"    parallelism: {{tp: {pin[0]}, pp: {pin[1]}}}\n" if pin else ""
    path = tmp_path / f"w{'' if pin is None else f'-{pin[0]}-{pin[1]}'}.yaml"
    path.write_text(template.format(pin=text, platforms=platforms))
    return plan_workload(load_workload(str(path)))


def _usd_per_month(plan: Plan) -> float:
    cost = plan.totals["usd_per_month"]
    assert isinstance(cost, float)
    return cost


@pytest.mark.parametrize(
    ("tp", "sizes", "node_gpus", "layers", "pin_pp", "expected"),
    [
        # inside one 8-GPU node at every TP degree; across nodes only at the largest
        (1, (1, 2, 4, 8), 8, 32, None, (1, 2, 3, 4, 6, 8)),
        (2, (1, 2, 4, 8), 8, 32, None, (1, 2, 3, 4)),
        (4, (1, 2, 4, 8), 8, 32, None, (1, 2)),
        (8, (1, 2, 4, 8), 8, 32, None, (1, 2, 3, 4, 6, 8)),
        # 28 heads: TP4 is the XE7740's largest degree, so it pipelines across nodes too (gpp.yaml)
        (2, (1, 2, 4), 8, 28, None, (1, 2, 3, 4)),
        (4, (1, 2, 4), 8, 28, None, (1, 2, 3, 4, 6, 8)),
        # a 2-GPU server: TP1 PP2 in one node, TP2 at any depth over several
        (1, (1, 2), 2, 32, None, (1, 2)),
        (2, (1, 2), 2, 32, None, (1, 2, 3, 4, 6, 8)),
        # never more stages than layers
        (8, (1, 2, 4, 8), 8, 4, None, (1, 2, 3, 4)),
        # a pinned depth at any TP, as pinned
        (1, (1, 2, 4, 8), 8, 32, 6, (6,)),
        (2, (1, 2), 2, 32, 8, (8,)),
        (2, (1, 2), 2, 4, 8, ()),
        (2, (1, 2), 2, 1, 1, (1,)),
    ],
)
def test_pipeline_depths(
    tp: int, sizes: tuple[int, ...], node_gpus: int, layers: int, pin_pp: int | None, expected: tuple[int, ...]
) -> None:
    assert pipeline_depths(tp, (sizes, node_gpus), layers, pin_pp) == expected


@pytest.mark.parametrize("template", [EMBED, CHAT], ids=["embed", "generate"])
def test_unpinned_plan_beats_the_pinned_tp2_pp4_of_the_report(tmp_path: Path, template: str) -> None:
    """Before: embed $32,418 unpinned against $20,945 pinned; generate $10,664 against $6,982."""
    unpinned = _usd_per_month(_plan(tmp_path, template))
    pinned = _usd_per_month(_plan(tmp_path, template, (2, 4)))
    assert unpinned <= pinned


def test_unpinned_plan_on_one_xe7740_kind_beats_its_pinned_tp2_pp4(tmp_path: Path) -> None:
    """Before, on the XE7740 alone (e3x.yaml): 2 x TP8 PP6 on 12 servers, $42,655, twice the pinned TP2 PP4's $20,945."""
    unpinned = _plan(tmp_path, EMBED, platforms=XE7740)
    pinned = _plan(tmp_path, EMBED, (2, 4), XE7740)
    assert _usd_per_month(unpinned) <= _usd_per_month(pinned)
    dep = unpinned.deployments[0]
    assert dep.tp * dep.pp <= 8  # one server a replica: no pipeline over the network


#: Every (tp, pp) the search forms inside one 8-GPU XE7740 (TP degrees that divide the model's heads).
IN_NODE = [(tp, pp) for tp in (1, 2, 4, 8) for pp in PIPELINE_STAGES if tp * pp <= 8]


@pytest.mark.parametrize(("template", "heads"), [(SMALL, 32), (SMALL_EMBED, 28)], ids=["generate", "embed"])
def test_no_pinned_in_node_layout_beats_the_unpinned_cost(tmp_path: Path, template: str, heads: int) -> None:
    """The cost objective's plan is at most the cost of every layout the search can form, each pinned in turn."""
    unpinned = _usd_per_month(_plan(tmp_path, template, platforms=XE7740))
    beaten = []
    for pin in (p for p in IN_NODE if heads % p[0] == 0):  # TP must divide the attention heads
        try:
            pinned = _usd_per_month(_plan(tmp_path, template, pin, XE7740))
        except InfeasibleError:
            continue  # no plan at that layout (memory or latency): nothing to beat
        if pinned < unpinned - 0.01:
            beaten.append((pin, pinned))
    assert not beaten, f"unpinned ${unpinned:,.2f}/month beaten by pinned {beaten}"
