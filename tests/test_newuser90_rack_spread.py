"""Servers that fit the same racks under air cooling's limit are spread over them, not stacked past it (newuser90).

Four owned 10.2 kW DGX H200 in a colocation cage of two 35 kW racks (``rack_power_kw: 35``, ``max_racks: 2``): the
plan packed them 3 + 1, rack-01 at 30.6 kW of air-cooled servers, and warned that air cooling removes about 30 kW
("packed to 30 kW a rack they take 2 racks against 2"), when 2 + 2 at 20.4 kW fits the same two racks. Where packing
to the air limit takes more racks (tests/golden/rack-density: 3 against 2) the racks stay packed to rack_power_kw and
the warning stays.
"""

from __future__ import annotations

from pathlib import Path

from generator.planner import plan_workload
from generator.planner.racks import AIR_COOLED_RACK_LIMIT_KW
from generator.workload import load_workload

WORKLOAD = """\
version: 1
name: colo-cage
deployments:
  - name: v3
    model: deepseek-ai/DeepSeek-V3
    inference:
      engine: sglang
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 65536
      avg_input_tokens: 4000
      avg_output_tokens: 800
      requests_per_second: 3
      slo: {{ttft_p95_ms: 3000, tpot_ms: 60}}
  - name: oss
    model: openai/gpt-oss-120b
    inference:
      precision: mxfp4
      max_context_tokens: 131072
      avg_input_tokens: 2000
      avg_output_tokens: 1500
      requests_per_second: 10
      slo: {{ttft_p95_ms: 1500, tpot_ms: 25}}
  - name: q32
    model: Qwen/Qwen3-32B
    inference:
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 32768
      avg_input_tokens: 1500
      avg_output_tokens: 500
      requests_per_second: 20
      slo: {{ttft_p95_ms: 1000, tpot_ms: 30}}
hardware:
  gpus: [h200-sxm-141gb]
  provider: baremetal
  rack_power_kw: {rack_kw}
  max_racks: 2
  inventory:
    - platform: dgx-h200
      count: 4
      hosts:
        - name: h200-01
        - name: h200-02
        - name: h200-03
        - name: h200-04
"""


def _plan(tmp_path: Path, rack_kw: int):  # type: ignore[no-untyped-def]
    path = tmp_path / "cage.yaml"
    path.write_text(WORKLOAD.format(rack_kw=rack_kw))
    return plan_workload(load_workload(str(path)))


def test_four_dgx_h200_spread_two_a_rack(tmp_path: Path) -> None:
    plan = _plan(tmp_path, 35)
    assert sum(p.nodes for p in plan.pools) == 4
    assert [rack.nodes for rack in plan.racks] == [2, 2]
    assert [rack.power_w for rack in plan.racks] == [20_400, 20_400]
    assert all(rack.power_w <= AIR_COOLED_RACK_LIMIT_KW * 1000 for rack in plan.racks)
    assert not [f for f in plan.findings if f.code == "rack-exceeds-air-cooling"]


def test_racks_within_air_limit_are_packed_as_before(tmp_path: Path) -> None:
    """At 25 kW a rack no rack passes the air limit: the packing is rack_power_kw's own (2 + 2 as well)."""
    plan = _plan(tmp_path, 25)
    assert [rack.power_w for rack in plan.racks] == [20_400, 20_400]
