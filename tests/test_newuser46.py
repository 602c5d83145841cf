"""newuser46 (a serving fleet bought for colocation against renting): items 1, 3 and 5.

Item 1: a prompt-heavy service of a model with routed experts under vLLM / SGLang on Hopper is planned at the rate the
public runs of that setup measured (1.57-1.99x below the model), with the throughput-gap warning. Item 3: an impossible
TTFT is refused at ttft_p95_ms. Item 5: the host line says which RAM and CPU the catalog configures a server with.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.errors import InfeasibleError
from generator.planner import plan_workload
from generator.planner.plan import Plan
from generator.workload import load_workload


def _plan(tmp_path: Path, text: str) -> Plan:
    path = tmp_path / "w.yaml"
    path.write_text(text, encoding="utf-8")
    return plan_workload(load_workload(str(path)))


CHAT_TTFT_5_MS = """\
version: 1
name: chat70
deployments:
  - name: chat
    model: meta-llama/Llama-3.3-70B-Instruct
    inference:
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 16384
      avg_input_tokens: 1500
      avg_output_tokens: 350
      requests_per_second: 20
      slo:
        ttft_p95_ms: 5
        tpot_ms: 40
hardware:
  provider: baremetal
"""


def test_an_impossible_ttft_is_refused_at_ttft_where_the_closest_gpus_meet_tpot(tmp_path: Path) -> None:
    """newuser46 item 3: the refusal stood at tpot_ms (line 15) because an A40 missed TPOT by 6%, while the B200 met
    it at 8.8 ms against 40 and missed only TTFT (68 ms against 5).

    acc120: the A40 at its measured GDDR6 stream share (663 of 696 GB/s, 1.074x the H100's share on a step's
    bandwidth-bound part) takes its TP4 batch-1 step 42.5 -> 40.0 ms, within 40: the TPOT target here is 38 so that it
    still misses TPOT (by 5%) while the B200 meets it."""
    with pytest.raises(InfeasibleError) as refused:
        _plan(tmp_path, CHAT_TTFT_5_MS.replace("tpot_ms: 40", "tpot_ms: 38"))
    assert ":14:22: deployments[0].inference.slo.ttft_p95_ms: deployment 'chat'" in str(refused.value)
    assert "TPOT 40.0 ms against 38" in str(refused.value)  # the A40 that missed TPOT is still listed
    # the B200 (68 ms before acc138 gave it its measured GEMM rates)
    assert "TTFT p95 67 ms against 5, TPOT 8.8 ms within 38" in str(refused.value)


QWEN_235B = """\
version: 1
name: moe235
deployments:
  - name: qwen
    model: Qwen/Qwen3-235B-A22B
    inference: {{precision: fp8, kv_cache_precision: fp8, max_context_tokens: 32768, avg_input_tokens: {prompt},
      avg_output_tokens: {output}, requests_per_second: 4}}
hardware: {{provider: baremetal, gpus: [h100-sxm5-80gb]}}
"""


def test_a_prompt_heavy_moe_service_on_hopper_is_warned_with_the_measured_range(tmp_path: Path) -> None:
    """Item 1: 8,000 prompt tokens for 400 generated, the shape GPUStack's vLLM runs of Qwen3-235B-A22B on H100
    measured at 1.57x (BF16 TP8) and 1.99x (FP8 TP4) below the model. The lab's dense H100 runs measured as far below
    where other labs' did not, so the plan counts on the model's rate and says why, with the utilisation that plans
    at the highest ratio."""
    plan = _plan(tmp_path, QWEN_235B.format(prompt=8000, output=400))
    (gap,) = [f for f in plan.findings if f.code == "throughput-gap"]
    # 1.09-1.27x before the lab's runs ended with the tail of their stated request count (acc186 / acc190 entries);
    # 1.07-1.20x before acc203's prompt steps (a whole prompt pass in a step of its own roofline)
    assert "for models with routed experts (not MLA) serving prompts of 10 or more tokens a generated token with " \
        "vllm on h100-sxm5-80gb, specgen's throughput model predicted 1.06-1.20x what 2 public runs" in gap.message  # fmt: skip
    assert re.search(r"the plan counts on the model's [\d.]+ a replica: the runs are one lab's, whose H100 runs of dense "
                     "models measured as far below", gap.message)  # fmt: skip
    # acc92: block FP8's GEMMs on Hopper timed at 0.4 of the FP8 rate: the FP8 run's ratio 1.99 -> 1.57, the plan's
    # utilisation at the highest 3.00 / 4.72 req/s. acc101 (the routed experts' memory-bound kernels timed): the runs'
    # ratios 1.30-1.57 -> 1.17-1.40, a replica 4.78 req/s, 3.41 at the highest ratio. acc181 (landed by acc183):
    # vLLM's fused-MoE layers take a fixed 70 us a step each, Qwen3-235B's 94 = 6.6 ms more a step: the runs' ratios
    # (recomputed) 1.17-1.40 -> 1.09-1.27, a replica 4.78 -> 4.29 req/s, 3.38 at the highest ratio: 0.71 -> 0.79.
    # acc186 / acc190 (the lab's runs end with their request count's tail): 1.09-1.27 -> 1.07-1.20: 0.79 -> 0.83
    assert gap.message.endswith("inference.max_utilization 0.83 plans at that ratio, or measure this setup")


@pytest.mark.parametrize(("prompt", "output"), [(2000, 500), (1000, 1000)])
def test_a_decode_heavier_moe_service_is_not_in_the_prompt_heavy_gap(tmp_path: Path, prompt: int, output: int) -> None:
    """TensorRT-LLM's runs of the model at 1,000 or fewer prompt tokens a generated token measured within -37% to +4%
    of it: no public run says the model over-predicts that shape, so no margin is taken."""
    plan = _plan(tmp_path, QWEN_235B.format(prompt=prompt, output=output))
    assert not [f for f in plan.findings if f.code == "throughput-gap"]


def test_the_host_line_says_the_ram_the_catalog_configures(tmp_path: Path) -> None:
    """Item 5: an XE9680 MI300X's 4 TiB is the catalog's configuration of it, not "sized from the workload"."""
    text = QWEN_235B.format(prompt=1500, output=350).replace("gpus: [h100-sxm5-80gb]", "gpus: [mi300x-192gb]")
    plan = _plan(tmp_path, text)
    (pool,) = plan.pools
    assert pool.node.host_minimum is not None
    assert pool.node.host_minimum.endswith("; RAM (4,096 GiB) and CPU as the catalog configures dell-xe9680-mi300x")


def test_a_replica_held_by_its_slo_says_how_its_batch_is_held(tmp_path: Path) -> None:
    """Item 7: the plan sized the replica at the batch TPOT binds at (36), while the group vars let vLLM admit 1,024:
    the plan says how the target is held."""
    path = tmp_path / "w.yaml"
    path.write_text(CHAT_TTFT_5_MS.replace("ttft_p95_ms: 5", "ttft_p95_ms: 1000"), encoding="utf-8")
    plan = plan_workload(load_workload(str(path)))
    (dep,) = plan.deployments
    (held,) = [r for r in dep.reasons if r.startswith("the SLOs hold at ")]
    assert re.fullmatch(
        r"the SLOs hold at (\d+) sequences a replica, and vLLM admits up to 1,024 \(--max-num-seqs\): a burst past the "
        r"planned rate runs a larger batch at a slower TPOT, so cap the router's concurrency at \1 a replica, or give "
        r"inference.max_num_seqs: \1 \(requests then wait to start\)",
        held,
    ), held
    # the batch the SLOs bind at, not the planned load's (16 replicas run where the rate needs 13: newuser46 item 2)
    sustains = next(r for r in dep.reasons if r.startswith("one replica sustains "))
    assert f"(batch {held.split()[4]}; TPOT 40 ms binds" in sustains
    assert dep.details["batch_per_replica"] < int(held.split()[4])


def test_the_runners_up_are_listed_in_the_ranking_order(tmp_path: Path) -> None:
    """Item 6: $18,207, $19,879, $25,399, $20,566 a month read as a ranking; the passes choose which are shown
    (another purchase, another GPU kind), the ranking their order."""
    gpus = "  gpus: [h100-sxm5-80gb, h200-sxm-141gb, b200-sxm-180gb, mi300x-192gb]\n"
    text = CHAT_TTFT_5_MS.replace("ttft_p95_ms: 5", "ttft_p95_ms: 1000").replace("baremetal\n", "baremetal\n" + gpus)
    path = tmp_path / "w.yaml"
    path.write_text(text, encoding="utf-8")
    (dep,) = plan_workload(load_workload(str(path))).deployments
    costs = [r.usd_per_hour or 0.0 for r in dep.runners_up]
    assert len(costs) == 4 and all(costs) and costs == sorted(costs)


def test_the_host_line_says_ram_an_owned_group_states_is_the_inventorys(tmp_path: Path) -> None:
    """review32 item 8: 1,024 GiB stated for owned DGX H100s read "as the catalog configures dgx-h100" (2,048 GiB)."""
    from tests.conftest import REPO

    text = (REPO / "examples" / "fleet-existing.yaml").read_text()
    owned = "    - platform: dgx-h100\n      count: 2\n"
    plan = _plan(tmp_path, text.replace(owned, owned + "      ram_gib: 1024\n"))
    lines = {p.node.host_minimum for p in plan.pools if p.node.platform_id == "dgx-h100"}
    assert lines == {
        "no published per-GPU RAM or CPU-core minimum for h100-sxm5-80gb on hgx-8gpu platforms; RAM (1,024 GiB) and CPU "
        "as hardware.inventory states for dgx-h100"
    }
