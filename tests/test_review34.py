"""review34 (the node-cap search and the session's findings): items 1-6, 8, 13 and 14.

Item 1: a sharing pass counted a spread service's servers as full of its GPUs, and fleets with no cap grew dearer.
Items 2-3: the fleets put together under max_nodes ranked their groups by a floor that ignored the spread, and a cloud
training job (billed per run, no monthly floor) turned them off. Item 6: replicas in GPU shares with min_replicas 2 were
counted as spread where one node held them. Item 8: throughput-gap-elsewhere was said of a setup with runs of its own.
Item 13: the estimate's wide-TP advice left out the stages given. Item 14: a near typo of a larger model came before the
id a short suffix extends.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator import catalog
from generator.errors import UnknownIdError
from generator.planner import plan_workload
from generator.planner.plan import Plan
from generator.workload import load_workload
from tests.helpers import PYYAML, estimate_json
from tests.test_newuser48 import _four_services

FIVE_ON_BARE_METAL = """\
version: 1
name: r18
deployments:
- {name: d0, model: BAAI/bge-m3, inference: {max_context_tokens: 8192, avg_input_tokens: 800, requests_per_second: 300, task: embed, min_replicas: 2}}
- {name: d1, model: mistralai/Mistral-7B-Instruct-v0.3, inference: {max_context_tokens: 8192, avg_input_tokens: 1500, requests_per_second: 8, avg_output_tokens: 400}}
- {name: d2, model: meta-llama/Llama-3.2-3B-Instruct, inference: {max_context_tokens: 8192, avg_input_tokens: 800, requests_per_second: 20, avg_output_tokens: 200, min_replicas: 2}}
- {name: d3, model: mistralai/Mistral-7B-Instruct-v0.3, inference: {max_context_tokens: 8192, avg_input_tokens: 800, requests_per_second: 1, avg_output_tokens: 50, min_replicas: 2}}
- {name: d4, model: BAAI/bge-m3, inference: {max_context_tokens: 8192, avg_input_tokens: 300, requests_per_second: 100, task: embed, min_replicas: 2}}
hardware: {provider: baremetal}
objective: cost
"""  # noqa: E501

SHARED_GPUS = """\
version: 1
name: gcp-share
deployments:
- {name: assistant, model: meta-llama/Llama-3.1-8B-Instruct, inference: {max_context_tokens: 8192, avg_input_tokens: 800, avg_output_tokens: 200, requests_per_second: 2, min_replicas: 2}}
- {name: mini, model: meta-llama/Llama-3.2-3B-Instruct, inference: {max_context_tokens: 8192, avg_input_tokens: 500, avg_output_tokens: 200, requests_per_second: 3, min_replicas: 2}}
- {name: embed, model: BAAI/bge-m3, inference: {task: embed, max_context_tokens: 8192, avg_input_tokens: 512, requests_per_second: 50, min_replicas: 2, slo: {ttft_p95_ms: 300}}}
- {name: rerank, model: BAAI/bge-reranker-v2-m3, inference: {task: score, max_context_tokens: 1024, avg_input_tokens: 600, requests_per_second: 30, min_replicas: 2, slo: {ttft_p95_ms: 300}}}
hardware: {provider: gcp}
objective: cost
kubernetes:
  gcp_project: acme-inference
  location: us-central1
  zone: us-central1-a
  gpu_sharing: {strategy: time-slicing, replicas_per_gpu: 4}
"""  # noqa: E501

BIG8 = """\
version: 1
name: big8
deployments:
  - name: chat
    model: meta-llama/Llama-3.3-70B-Instruct
    inference: {precision: fp8, kv_cache_precision: fp8, max_context_tokens: 16384, avg_input_tokens: 1500, avg_output_tokens: 350, requests_per_second: 25, min_replicas: 2, slo: {ttft_p95_ms: 2000, tpot_ms: 40}}
  - name: autocomplete
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {max_context_tokens: 4096, avg_input_tokens: 800, avg_output_tokens: 40, requests_per_second: 60, min_replicas: 2, slo: {ttft_p95_ms: 200, tpot_ms: 20}}
  - name: embed
    model: BAAI/bge-m3
    inference: {task: embed, max_context_tokens: 8192, avg_input_tokens: 512, requests_per_second: 300, min_replicas: 2, slo: {ttft_p95_ms: 300}}
  - name: rerank
    model: BAAI/bge-reranker-v2-m3
    inference: {task: score, max_context_tokens: 1024, avg_input_tokens: 600, requests_per_second: 100, min_replicas: 2, slo: {ttft_p95_ms: 300}}
  - name: assistant
    model: Qwen/Qwen2.5-7B-Instruct
    inference: {max_context_tokens: 16384, avg_input_tokens: 1500, avg_output_tokens: 300, requests_per_second: 6, min_replicas: 2, slo: {ttft_p95_ms: 1000, tpot_ms: 40}}
  - name: coder
    model: Qwen/Qwen3-30B-A3B
    inference: {precision: fp8, max_context_tokens: 32768, avg_input_tokens: 4000, avg_output_tokens: 500, requests_per_second: 3}
  - name: mini
    model: meta-llama/Llama-3.2-3B-Instruct
    inference: {max_context_tokens: 8192, avg_input_tokens: 500, avg_output_tokens: 200, requests_per_second: 10, min_replicas: 2}
  - name: summarise
    model: mistralai/Mistral-7B-Instruct-v0.3
    inference: {max_context_tokens: 8192, avg_input_tokens: 3000, avg_output_tokens: 300, requests_per_second: 4}
hardware:
  provider: aws
  max_nodes: MAXN
objective: cost

"""  # noqa: E501

LORA_JOB = """\
  - name: ac-lora
    model: meta-llama/Llama-3.1-8B-Instruct
    training: {method: lora, lora_rank: 16, sequence_length: 4096, micro_batch_size: 2, dataset_tokens: 200000000,
               epochs: 1, deadline_hours: 24}
"""

SPOT_PRICES = (
    "prices: {aws-g4dn-12xlarge@spot: 1.6, aws-g4dn-xlarge@spot: 0.22, aws-g6-xlarge@spot: 0.35, "
    "aws-g6-12xlarge@spot: 2.0, aws-g6e-xlarge@spot: 0.8}\n"
)


def _plan(tmp_path: Path, text: str) -> Plan:
    path = tmp_path / "w.yaml"
    path.write_text(text, encoding="utf-8")
    return plan_workload(load_workload(str(path)))


def _kinds(plan: Plan) -> list[tuple[str, int, tuple[str, ...]]]:
    return [(p.node.platform_id, p.nodes, p.deployments) for p in plan.pools]


def test_a_fleet_without_a_cap_is_not_made_dearer_by_the_spread(tmp_path: Path) -> None:
    """Four services on 2 XE7740 with L4s beside the fifth on a workstation, $4,356 a month (not $5,221 on 3 WRX90)."""
    plan = _plan(tmp_path, FIVE_ON_BARE_METAL)
    assert round(plan.totals["usd_per_month"]) == 4356
    assert ("dell-xe7740", 2, ("d0", "d2", "d3", "d4")) in _kinds(plan)


def test_groups_under_the_cap_are_ranked_with_their_spread(tmp_path: Path) -> None:
    """Two spot g4dn.12xlarge for the spread embedder and reranker, the chat services on 2 p5en: $94,748 (a B200 pair,
    floored at one server where it takes two, won at $168,678).

    fix74: chat asks 23 req/s here, not 25: at 25 its six TP2 replicas on H200 (59 places each, a request holds one
    14.09 s) are 99.5% busy, 89% of requests wait for a place, p95 wait 23 s past the 1.5 s the 2 s TTFT target leaves
    (TTFT p95 492 ms at the most load), so chat takes a seventh, chat + autocomplete need 17 H200 and no longer fit 2
    p5en, and the B200 pair ($168,678, both its servers counted) is then the right fleet under the cap. At 23 (91.5%
    busy, 6.5% wait, p95 0.12 s) the p5en pair is planned again and this test still guards the spread's ranking."""
    text = _four_services(4).replace("requests_per_second: 25", "requests_per_second: 23", 1)
    text = text.replace("  - name: embed\n", "  - name: embed\n    capacity_type: spot\n")
    text = text.replace("  - name: rerank\n", "  - name: rerank\n    capacity_type: spot\n")
    plan = _plan(tmp_path, text.replace("hardware:\n", f"{SPOT_PRICES}hardware:\n"))
    assert round(plan.totals["usd_per_month"]) == 94748
    assert ("aws-p5en-48xlarge", 2, ("chat", "autocomplete")) in _kinds(plan)


def test_a_cloud_training_job_does_not_turn_the_search_under_the_cap_off(tmp_path: Path) -> None:
    # fix74: chat at 23 req/s, not 25, for the reason test_groups_under_the_cap_are_ranked_with_their_spread gives (at 25
    # chat's seventh TP2 replica for the slot wait leaves chat + autocomplete off 2 p5en: $120,538 on 3 p5 + a B200 run)
    text = _four_services(5).replace("requests_per_second: 25", "requests_per_second: 23", 1)
    text = text.replace("hardware:\n", f"{LORA_JOB}hardware:\n")
    plan = _plan(tmp_path, text)
    assert plan.totals["nodes"] <= 5
    assert round(plan.totals["usd_per_month"]) == 98124
    assert ("aws-p5en-48xlarge", 2, ("chat", "autocomplete")) in _kinds(plan)


def test_a_higher_node_cap_never_plans_a_dearer_fleet(tmp_path: Path) -> None:
    """Items 4-5 (and review35 item 1): eight services under max_nodes 4, 6, 8 and 12. Raising the cap from 6 to 12 took
    the fleet from $128,446 a month on 5 nodes to $149,295 on 11: a pool's services apart are put together too, and
    under a cap a pass counts the servers min_replicas spreads a service over. Item 4: at a cap of 4 the fleet cost
    $160,717 where the five small services on 2 g6e.48xlarge beside chat, autocomplete and coder on 2 p5en.48xlarge
    cost $136,404: each set of a pool of up to eight services is a group too, and the covers are searched least floor
    first by branch and bound (the depth-first search stopped at 20,000 covers before it met them)."""
    months = []
    for cap in (4, 6, 8, 12):
        plan = _plan(tmp_path, BIG8.replace("MAXN", str(cap)))
        assert plan.totals["nodes"] <= cap
        months.append(plan.totals["usd_per_month"])
    assert months == sorted(months, reverse=True)
    # fix74 (the wait for a place in the batch): [124470, 113443, 108228, 106170] before. chat's six TP2 replicas on
    # H200 ran at 99.5% of their places (p95 wait 23 s, see test_groups_under_the_cap_are_ranked_with_their_spread), so
    # it takes a seventh and chat + autocomplete + coder no longer fit 2 p5en: under 4 every service goes on 4
    # p5.48xlarge ($160,717, the figure item 4 once found for a worse reason); the other caps' fleets rise with the
    # replicas the slot wait adds. A higher cap still never plans a dearer fleet.
    # fix90 (P(TTFT + wait > target) <= 5%, the places at the replicas' share): the cap of 12's fleet $119,632 ->
    # $116,264 on 12 nodes (replicas below their most run more places, so fewer are added for the wait); the order stands
    assert [round(m) for m in months] == [160717, 127256, 127017, 116264]


def test_fourteen_services_under_a_higher_cap_keep_the_fleet_a_lower_one_found(tmp_path: Path) -> None:
    """Item 5: BIG8 and six of its services again. A cap of 9 found $234,793 a month on 9 nodes and a cap of 11
    $277,236 on 6: eleven small services on 5 p4d.24xlarge, which no pass under 11 formed apart from the rest of its
    pool of fourteen. Sets that leave at most three of a larger pool's services out are groups too; the covers are
    bounded by the least floor that holds the deployments left (review36 item 1: under 14 the search ran out of steps
    before it met the 11-node fleet)."""
    # fix74: chat (and chat2) at 23 req/s, not 25 (at 25, the test below); before fix74: [223512, 222824, 222824, 219733]
    # at 25. m74f: [234519, 233831, 233383, 229816] at 23 before the search's node bound and the pool within the cap
    # (test below): under 11 the 10-node fleet of chat, autocomplete and chat2 on 2 p6-b200 beside nine small services on
    # 3 p4d ($230,264, the cap of 11's fleet at 25 too); under 14 and 16 chat and chat2 on 3 p5en.48xlarge, autocomplete
    # and autocomplete2 on 3 p5.4xlarge each, the nine on 3 p4d and rerank2 on 2 g4dn.xlarge: $217,608 on 14 nodes.
    doc = _fourteen(23)
    months = []
    for cap in (9, 11, 14, 16):
        doc["hardware"]["max_nodes"] = cap
        plan = _plan(tmp_path, json.dumps(doc))  # JSON is YAML
        assert plan.totals["nodes"] <= cap
        months.append(round(plan.totals["usd_per_month"]))
    # the property first, then the figures (acc201: acc191's slower dense replicas failed the pin below alone, with
    # [223512, 223512, 210856, 210856], and the name read as the property broken)
    assert months == sorted(months, reverse=True), months
    # fix90 (the new rule and the places at the share: fewer replicas added for the wait): $223,512 on 9 nodes under 9
    # and 11, $210,856 on 13 under 14 and 16 (were $234,519, $230,264, $217,608, $217,608); the order stands. acc101
    # (the routed experts' memory-bound kernels timed: the Qwen3-30B-A3B service's replicas sustain less): $229,496,
    # $228,808, $216,840, $216,840, the order standing. acc131 (dequant_expert_gemm_efficiency_ratio 0.3 -> 0.35: the
    # FP8 Qwen3-30B-A3B service's experts, dequantized on GPUs without FP8 tensor cores (A100), prefill faster):
    # $223,512, $223,512, $210,856, $210,856, the order standing. acc138 (the B200 at its measured GEMM rates,
    # stas00/ml-engineering's MAMF: FP8 0.763 of its peak against the H100's 0.709): under 9 and 11 the fleet is
    # $218,490 on 8 nodes (was $223,512 on 9); under 14 and 16 unchanged; the order standing
    assert months == [218490, 218490, 210856, 210856]  # review36 item 1: 14 took $256,976 before the bound


def _fourteen(chat_rate: int) -> Any:
    doc = PYYAML.safe_load(BIG8.replace("requests_per_second: 25,", f"requests_per_second: {chat_rate},", 1).replace("MAXN", "9"))
    doc["deployments"] += [{**dep, "name": f"{dep['name']}2"} for dep in doc["deployments"][:6]]
    return doc


def test_fourteen_services_with_the_chat_at_25_keep_the_fleet_a_lower_cap_found(tmp_path: Path) -> None:
    """fix74b item 6 (m74f): at 25 req/s the caps of 9, 11, 14 and 16 planned $234,519, $230,264, $233,383 and $236,562.

    Under 11 no layout of chat fits the p4d.24xlarge pool (it takes 12 of them), so the pass that holds the services to
    the A100 40GB leaves chat on its own H100s, and the nine small services' pool on 3 p4d, which the 10-node fleet joins,
    is a set of a pool of twelve that leaves three out. Under 14 chat and chat2 join that pass's pool (12 p4d each), and
    the sets leaving three of fourteen out no longer reach the nine: a larger pool's sets are now also taken of those of
    its options the cap can hold together (the most nodes alone left out first). Under 16 the covers' search ran out of
    its 200,000 steps among the many 13-16 node covers before it met the 10-node one: it now bounds a cover by the nodes
    the deployments left need too (1,646 steps), and keeps the least covers within each count of nodes below the cap,
    so a higher cap also assembles those a lower one would. Now $234,519, $230,264 (10 nodes, both), and $227,099 on 16.
    """
    doc = _fourteen(25)
    months = []
    for cap in (9, 11, 14, 16):
        doc["hardware"]["max_nodes"] = cap
        plan = _plan(tmp_path, json.dumps(doc))
        assert plan.totals["nodes"] <= cap
        months.append(round(plan.totals["usd_per_month"]))
    assert months == sorted(months, reverse=True)
    # fix90 (the new rule and the places at the share): $223,512 on 9 nodes under every cap (were $234,519, $230,264,
    # $230,264, $227,099): a lower cap's fleet is now the best under the higher ones too. acc101 (the routed experts'
    # memory-bound kernels timed, the Qwen3-30B-A3B service): $229,496 under 9 and 11, $228,805 under 14 and 16, each
    # higher cap's fleet at most a lower one's. acc102 (the L40S's TP all-reduce staged through host memory: its TP2
    # layouts slower, TP1 ones sharing pools): $228,805 -> $226,168 under 14 and 16
    # acc131 (dequant_expert_gemm_efficiency_ratio 0.3 -> 0.35, the FP8 Qwen3-30B-A3B service's experts dequantized on
    # A100s): $223,512 under every cap, as after fix90
    assert months == [223512, 223512, 223512, 223512]


def test_replicas_in_gpu_shares_are_spread_over_two_nodes(tmp_path: Path) -> None:
    """min_replicas 2 on time-sliced L4s: the embedder's and reranker's shares take two nodes, not one GPU of one."""
    plan = _plan(tmp_path, SHARED_GPUS)
    assert not [
        f
        for f in plan.findings
        if f.code == "replicas-not-spread" or (f.code == "node-down-capacity" and "on one node:" in f.message)
    ]
    (pool,) = [p for p in plan.pools if "embed" in p.deployments]
    assert pool.nodes >= 2


def test_no_gap_elsewhere_where_the_setups_own_runs_were_compared(tmp_path: Path) -> None:
    """DeepSeek-R1 in NVFP4 with SGLang on B200 has runs of its own in the calibration (3.0% median): the Hopper FP8
    gap is not said of it."""
    text = (
        "version: 1\nname: r1\ndeployments:\n  - name: r1\n    model: deepseek-ai/DeepSeek-R1\n    inference: {engine: sglang, "
        "precision: nvfp4, kv_cache_precision: fp8, max_context_tokens: 4096, avg_input_tokens: 1000, avg_output_tokens: "
        "1000, requests_per_second: 1, slo: {ttft_p95_ms: 5000, tpot_ms: 50}}\nhardware: {provider: baremetal, gpus: "
        "[b200-sxm-180gb]}\n"
    )
    assert "throughput-gap-elsewhere" not in {f.code for f in _plan(tmp_path, text).findings}


def test_the_wide_tp_advice_keeps_the_stages_given() -> None:
    notes = estimate_json(
        "meta-llama/Llama-3.1-405B-Instruct", "--gpu", "b200-sxm-180gb", "--tp", "16", "--pp", "2", "--precision", "fp8",
        "--context", "4096",
    )["notes"]  # fmt: skip
    assert any("a plan lays such a replica out as --tp 8 --pp 4," in n for n in notes)


@pytest.mark.parametrize(
    ("typed", "first"),
    [
        ("Qwen/Qwen2.5-7B-Instruct-AWQ", "Qwen/Qwen2.5-7B-Instruct"),
        ("meta-llama/Llama-3.1-8B-Instruckt", "meta-llama/Llama-3.1-8B-Instruct"),
    ],
)
def test_the_likest_id_is_offered_first(typed: str, first: str) -> None:
    with pytest.raises(UnknownIdError) as err:
        catalog.find_model(typed)
    assert f"did you mean '{first}'" in str(err.value)


def test_an_undated_list_price_says_so(tmp_path: Path) -> None:
    """Item 15: the Azure T4 prices' source gives no date (as_of null), and the plan quoted them like dated ones."""
    text = (
        "version: 1\nname: azt4\ndeployments:\n  - name: embed\n    model: BAAI/bge-m3\n    inference: {task: embed, "
        "max_context_tokens: 8192, avg_input_tokens: 512, requests_per_second: 50}\nhardware: {provider: azure}\n"
        "objective: cost\nkubernetes: {location: eastus, cluster_name: c}\n"
    )
    from generator.render.list_prices import list_price_finding

    undated = list_price_finding(_plan(tmp_path, text))
    assert undated is not None and "azure-standard-nc4as-t4-v3 $0.53/h (its source gives no date)" in undated.message
    dated = list_price_finding(_plan(tmp_path, BIG8.replace("MAXN", "8")))
    assert dated is not None and "gives no date" not in dated.message
    # newuser83 item 4: a dated price says its date (the ND H200 v5's eastus2 list price, read 2026-10-07)
    h200 = catalog.prices()["azure-standard-nd96isr-h200-v5-payg-eastus2"]
    assert h200.as_of == "2026-10-07"
    on_h200 = text.replace("hardware: {provider: azure}", "hardware: {provider: azure, gpus: [h200-sxm-141gb]}")
    listed = list_price_finding(_plan(tmp_path, on_h200.replace("location: eastus,", "location: eastus2,")))
    assert listed is not None and f"{h200.platform_id} ${h200.usd:,.2f}/h as of {h200.as_of}" in listed.message


@pytest.mark.parametrize("cap", [None, 8, 16])
def test_a_gpus_objective_puts_pools_together_whatever_the_cap(tmp_path: Path, cap: int | None) -> None:
    """review37 item 1: under gpus the pools put together held 17 GPUs within 3-14 nodes, where a cap of 16 took 21
    and no cap 24 (the search ran only where a pass broke the cap)."""
    text = BIG8.replace("objective: cost", "objective: gpus")
    text = text.replace("  max_nodes: MAXN\n", "") if cap is None else text.replace("MAXN", str(cap))
    assert _plan(tmp_path, text).totals["gpus"] == 17
