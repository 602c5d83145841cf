"""A buy plan's runners-up: one line per offer, the other GPU kinds allowed before more chassis of one (newuser24 items 1, 7).

Four GPUs allowed for a 70B FP8 chat service at 15 req/s on bare metal (36-month amortisation): the choice is one
XE9680 with 8 x MI300X; three H200 chassis (Supermicro AS-8125GS-TNHR, Dell XE9680 HGX, DGX H200) cost the same
derived $12,699/month at the same 10.2 kW, so they are one offer, listed once with the others named; B200 and MI325X
each get a line of their own.
"""

from __future__ import annotations

from pathlib import Path

from generator.planner import plan_workload
from generator.planner.plan import Plan
from generator.workload import load_workload

BUY = """\
version: 1
name: buy
deployments:
  - name: chat
    model: meta-llama/Llama-3.3-70B-Instruct
    inference:
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 8192
      avg_input_tokens: 1000
      avg_output_tokens: 300
      requests_per_second: 15
      slo: {{ttft_p95_ms: 1500, tpot_ms: 50}}
hardware: {{provider: baremetal, gpus: [{gpus}]}}
constants: {{amortization_months: 36}}
"""
H200_CHASSIS = ["dell-xe9680-hgx-h100-h200", "dgx-h200", "supermicro-as-8125gs-tnhr"]


def _plan(tmp_path: Path, gpus: str) -> Plan:
    path = tmp_path / "w.yaml"
    path.write_text(BUY.format(gpus=gpus))
    return plan_workload(load_workload(str(path)))


def test_every_allowed_gpu_kind_has_a_runner_up_and_one_offer_is_one_line(tmp_path: Path) -> None:
    dep = _plan(tmp_path, "b200-sxm-180gb, h200-sxm-141gb, mi300x-192gb, mi325x-256gb").deployments[0]
    assert (dep.runners_up[0].gpu_id, dep.runners_up[0].platform_id) == ("mi325x-256gb", "dell-xe9680-mi300x")
    kinds = {c.gpu_id for c in dep.runners_up}
    assert {"b200-sxm-180gb", "h200-sxm-141gb", "mi325x-256gb"} <= kinds  # MI325X was ruled out by its PSUs before
    offers = [(c.gpu_id, c.gpus_per_node, c.nodes, c.gpus_bought, c.usd_per_hour, c.power_w) for c in dep.runners_up]
    assert len(offers) == len(set(offers))  # no offer twice on another chassis
    h200 = [c.platform_id for c in dep.runners_up if c.gpu_id == "h200-sxm-141gb"]
    assert len(h200) == 1
    others = ", ".join(p for p in H200_CHASSIS if p != h200[0])
    number = next(n for n, c in enumerate(dep.runners_up, 1) if c.gpu_id == "h200-sxm-141gb")
    assert f"the same GPUs, servers, price and power on other chassis: runner-up {number} also on {others}" in dep.reasons


def test_the_choices_twin_chassis_are_named_not_listed(tmp_path: Path) -> None:
    dep = _plan(tmp_path, "h200-sxm-141gb").deployments[0]
    assert dep.runners_up and all(c.nodes > 1 for c in dep.runners_up)  # other purchases, not the same server again
    (twins,) = [r for r in dep.reasons if r.startswith("the same GPUs, servers, price and power on other chassis")]
    chosen = next(r for r in dep.reasons if r.startswith("chosen by cost"))
    platform = next(p for p in H200_CHASSIS if f" on 1 x {p} " in chosen)
    # "the choice also on ..." or, where runners-up share the chassis (fuzz22 item 1), "the choice and runners-up ..."
    others = ", ".join(p for p in H200_CHASSIS if p != platform)
    assert twins.split(": ", 1)[1].startswith("the choice") and f"also on {others}" in twins.split(";")[0]


def test_an_allowed_gpu_without_any_layout_is_said(tmp_path: Path) -> None:
    # 70B FP8 on 24 GB consumer cards misses the SLOs in every layout a tower takes: before, the GPU vanished silently
    plan = _plan(tmp_path, "h200-sxm-141gb, rtx-4090-24gb")
    (missing,) = [f for f in plan.findings if f.code == "gpu-no-layout"]
    assert (missing.level, missing.path) == ("info", "hardware.gpus[=rtx-4090-24gb]")  # by value (fix191)
    assert missing.message.startswith("deployment chat: no layout on rtx-4090-24gb: rtx-4090-24gb on ")
    assert not [f for f in _plan(tmp_path, "h200-sxm-141gb, mi325x-256gb").findings if f.code == "gpu-no-layout"]
