"""fix124: hostile79 items 1, 4, 12 and 13.

- Item 1: a prime ``global_batch_size`` on bought servers with a deadline bought a fleet sized to the batch (97: DP97 on
  104 L40S, capex $1,108,523, against 96's 6 GPUs, $99,476; 65,537: 65,544 GPUs, 33.7 MW), unsaid. A batch that splits
  over no degree well below the one planned now gets a warning naming the nearest batches that split and their fleets
  (each planned again here: the planner is the oracle); one past the planner's most data-parallel ranks is refused at
  the batch, naming the nearest batches that split over the ranks that hold the job.
- Item 4: ``hardware.fixed`` with two deployments: each refusal's owned twin held its deployment alone on the whole
  machine, and the twin's own plan then refused the second, pointing back to ``hardware.fixed``. The twin now holds
  every inference deployment, and an owned refusal where a replica fits the server (all taken) no longer names
  ``hardware.fixed``.
- Item 13: a ``hardware.fixed`` refusal offered the twin where it serves less than the llama.cpp figure refused.
- Item 12: ``estimate --train`` listed changes that train at "0 tokens/s a GPU".
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.api import plan_file
from generator.errors import InfeasibleError
from generator.planner.batch_split_hint import degree_gap, neighbours
from generator.planner.plan import Plan
from tests.helpers import estimate_json

QLORA = """\
version: 1
name: tune-8b
deployments:
  - name: tune
    model: meta-llama/Llama-3.1-8B
    training:
      method: qlora
      lora_rank: 16
      sequence_length: 8192
      global_batch_size: {batch}
      dataset_tokens: 2000000000
      epochs: 2
      deadline_hours: 48
hardware:
  gpus: [l40s-48gb, h100-sxm5-80gb, rtx-pro-6000-ws-96gb]
  provider: baremetal
  rack_power_kw: 17.3
"""


def _plan(tmp_path: Path, name: str, text: str) -> Plan:
    path = tmp_path / name
    path.write_text(text)
    return plan_file(str(path))[1]


@pytest.mark.parametrize(
    ("batch", "dp", "gap"),
    [
        (97, 97, (2, 96)),  # prime: DP1 or DP97
        (1021, 1021, (2, 1020)),
        (64, 8, None),  # DP4 below DP8: at most twice
        (96, 6, None),
        (98, 7, (3, 6)),  # 98 = 2 x 7 x 7: DP2 below DP7 (its replans plan no fleet on half the GPUs: no warning)
        (3, 3, None),  # DP3 against DP1 + 1: not wide
        (10, 1, None),
    ],
)
def test_the_degree_gap_is_the_divisors_arithmetic(batch: int, dp: int, gap: tuple[int, int] | None) -> None:
    assert degree_gap(batch, dp) == gap


def test_the_neighbours_are_the_nearest_batches_that_split_in_the_gap() -> None:
    assert neighbours(97, (2, 96)) == [96, 98]
    assert neighbours(1021, (2, 1020)) == [1020, 1022]
    assert neighbours(98, (3, 6)) == [96, 99]  # 96 = 3 x 32 (DP3 to DP6 split it), 99 = 3 x 33


def test_a_prime_batch_on_bought_servers_says_the_neighbouring_batches_and_their_fleets(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "q97.yaml", QLORA.format(batch=97))
    tune = plan.deployments[0]
    assert tune.details["data_parallel"] == 97  # the arithmetic is right: the plan itself is unchanged
    (warning,) = [f for f in plan.findings if f.code == "batch-sets-ranks"]
    assert warning.level == "warning"
    assert warning.path == "deployments[0].training.global_batch_size"
    assert warning.message.startswith(
        "deployment tune: its global batch of 97 sequences splits evenly over no data-parallel degree from DP2 to DP96 "
        "(every rank runs the same micro-batches a step), so the job takes DP97 on 97 GPUs and the workload plans "
        f"{plan.totals['gpus']} GPUs, capex ${plan.totals['capex_usd']:,.0f}"
    )
    assert plan.totals["gpus"] == 104  # 13 x 8 L40S, as hostile79 saw
    for batch in (96, 98):  # each neighbour named is what the planner plans at that batch
        other = _plan(tmp_path, f"q{batch}.yaml", QLORA.format(batch=batch))
        job = other.deployments[0]
        said = (
            f"at a global_batch_size of {batch} the job takes DP{job.details['data_parallel']} on "
            f"{job.details['world_size']} GPUs and the workload plans {other.totals['gpus']} GPUs, "
            f"capex ${other.totals['capex_usd']:,.0f}"
        )
        assert said in warning.message
        assert 2 * other.totals["gpus"] <= plan.totals["gpus"]
        assert not [f for f in other.findings if f.code == "batch-sets-ranks"]
    # by hand: 96 = DP6 x 16 on 3 x 2 RTX PRO 6000 workstations, hostile79's $99,476
    assert "at a global_batch_size of 96 the job takes DP6 on 6 GPUs and the workload plans 6 GPUs, capex $99,476" in (
        warning.message
    )


def test_a_batch_that_splits_near_the_ranks_needed_says_nothing(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "q64.yaml", QLORA.format(batch=64))
    assert not [f for f in plan.findings if f.code == "batch-sets-ranks"]


def test_a_batch_whose_next_divisor_is_past_the_planners_ranks_is_refused_with_the_batches_that_split(
    tmp_path: Path,
) -> None:
    path = tmp_path / "q65537.yaml"
    path.write_text(QLORA.format(batch=65537))
    with pytest.raises(InfeasibleError) as err:
        plan_file(str(path))  # it planned 65,544 GPUs on 8,193 nodes (33.7 MW)
    said = str(err.value)
    assert said.startswith(f"{path}:10:26: deployments[0].training.global_batch_size: ")
    assert (
        "l40s-48gb on dell-r760: TP1 ZeRO-3 x DP12: the global batch of 65,537 sequences does not split evenly over its "
        "12 data-parallel ranks (each runs the same micro-batches a step; the next degree that divides it, DP65537, "
        "takes 65,537 GPUs, more than the 4,096 data-parallel ranks the planner considers); a global_batch_size of "
        "65,532 or 65,544 splits over them and fits"
    ) in said
    advice = re.search(r"to unblock: for the global batch of 65,537: a global_batch_size of ([\d,]+) or ([\d,]+) ", said)
    assert advice is not None
    for value in advice.groups():  # each batch the advice names plans, on far fewer GPUs
        plan = _plan(tmp_path, f"q{value}.yaml", QLORA.format(batch=value.replace(",", "")))
        assert plan.totals["gpus"] <= 16


FIXED_TWO = """\
version: 1
name: fixed-two
deployments:
  - name: chat
    model: meta-llama/Llama-3.3-70B-Instruct
    inference: &chat
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 32768
      avg_input_tokens: 2000
      avg_output_tokens: 400
      requests_per_second: {rate}
      slo: {{ttft_p95_ms: 2000, tpot_ms: 50}}
  - name: chat2
    model: meta-llama/Llama-3.3-70B-Instruct
    inference: *chat
hardware:
  provider: baremetal
  {machine}
outputs: [ansible]
"""
FIXED = "fixed: {gpu: h100-sxm5-80gb, gpu_count: 8, ram_gib: 2048, cpu_sockets: 2}"
TWIN = (
    "buy: false\n  inventory:\n    - count: 1\n      custom: {gpu: h100-sxm5-80gb, gpus_per_server: 8, ram_gib: 2048, "
    "cpu_sockets: 2}"
)


def test_two_deployments_on_a_fixed_machine_are_not_each_promised_the_whole_twin(tmp_path: Path) -> None:
    path = tmp_path / "two.yaml"
    path.write_text(FIXED_TWO.format(rate=10, machine=FIXED))
    with pytest.raises(InfeasibleError) as err:
        plan_file(str(path))
    said = str(err.value)
    # it said "describe this server under hardware.inventory with buy: false ...: 2 x TP4 vLLM replica(s) serve the 10
    # req/s asked", and that twin refuses the second deployment (pointing back to hardware.fixed)
    assert "hardware.inventory with hardware.buy: false" not in said
    assert said.endswith("lower requests_per_second, or plan bought hardware (without hardware.fixed)")
    twin = tmp_path / "two_owned.yaml"
    twin.write_text(FIXED_TWO.format(rate=10, machine=TWIN))
    with pytest.raises(InfeasibleError) as owned:
        plan_file(str(twin))  # the oracle: both at 10 req/s do not fit the server as owned inventory either
    # ... and its refusal no longer sends the user back to hardware.fixed: a replica fits the server, which 'chat' holds
    refused = str(owned.value)
    assert "2 x TP4 on 1 x custom-8x-h100-sxm5-80gb (8 x h100-sxm5-80gb) needs 1 server; 0 owned are free" in refused
    assert "hardware.fixed" not in refused
    assert refused.endswith(
        "or place a deployment before it elsewhere: the owned custom-8x-h100-sxm5-80gb (1 server) is taken by deployment 'chat'"
    )


def test_the_twin_named_for_two_deployments_is_the_one_their_owned_plan_makes(tmp_path: Path) -> None:
    # at 1 req/s each (0.5 until fix136: its slot search takes the fewest llama.cpp slots whose wait fits, and at 0.5
    # those meet the latency targets, so no twin is offered; at 1 llama.cpp's layer split misses them: slo-missed)
    # acc151: 0.3 req/s each: llama.cpp's whole-GPU prompt (fp16 GEMMs, fp16 copies, 1.7 ms a layer a pass) takes 2.47 s
    # a 2,000-token prompt, so 1 req/s is refused (0.405 at most); at 0.3 the layer split still misses the targets
    # acc156: kept at 0.3; with current builds' int8 MMQ prompt (llama_cpp_prompt.py) 1 req/s plans again (slo-missed)
    plan = _plan(tmp_path, "two_low.yaml", FIXED_TWO.format(rate=0.3, machine=FIXED))
    twin = _plan(tmp_path, "two_owned_low.yaml", FIXED_TWO.format(rate=0.3, machine=TWIN))
    said = sorted((f.path, f.message) for f in plan.findings if f.code == "fixed-serving-engines")
    assert [p for p, _ in said] == ["deployments[0]", "deployments[1]"]
    for (_, message), dep in zip(said, twin.deployments, strict=True):
        # it said 2 x TP4 each (8 GPUs each, 16 on an 8-GPU server); the owned plan runs 1 x TP2 each
        assert (dep.replicas, dep.tp) == (1, 2)
        assert (
            f"{dep.replicas} x TP{dep.tp} vLLM replica(s) serve the 0.3 req/s asked (up to "
            f"{round(dep.sustained_rate(), 2):g} within the SLOs), beside the file's other inference deployment at the "
            "rate it asks"
        ) in message


def test_a_twin_that_serves_less_than_the_refused_placement_is_not_offered(tmp_path: Path) -> None:
    text = FIXED_TWO.format(rate=10, machine="fixed: {gpu: rtx-4090-24gb, gpu_count: 8, ram_gib: 512}")
    path = tmp_path / "r4090.yaml"
    path.write_text(text.split("  - name: chat2")[0] + "hardware:" + text.split("hardware:")[1])
    with pytest.raises(InfeasibleError) as err:
        plan_file(str(path))
    said = str(err.value)
    # llama.cpp's prompt passes allow 0.24 a second (acc151: 0.411 before llama.cpp's whole-GPU prompt took its fp16
    # GEMMs, the quantized matrices' fp16 copies and 1.7 ms a layer a pass: 4.16 s a 2,000-token prompt); the twin's
    # 2 x TP4 serve 0.13 within the SLOs: it was offered; acc156: 0.632 (1.58 s a prompt): current builds' int8 MMQ
    # (0.23 of the 4090's dense int8 rate, no fp16 copy, 0.4 ms a layer a pass); acc180: 0.633, the last pass's 464
    # tokens taking their share of a 512-token pass's layer time (pass_layer_seconds); acc204: 0.643, the layer time
    # refitted 0.4 -> 0.32 ms (the product's passes run with flash attention on: no score matrix)
    assert "0.643 a second at most" in said
    assert "hardware.inventory with hardware.buy: false" not in said
    assert said.endswith("lower requests_per_second, or plan bought hardware (without hardware.fixed)")


def test_estimate_leaves_out_changes_that_train_at_no_token_a_second() -> None:
    result = estimate_json("meta-llama/Llama-3.1-8B", "--train", "full", "--gpu", "h100-sxm5-80gb", "--gpus", "1000000")
    (note,) = [n for n in result["notes"] if n.startswith("it fits with ")]
    # it listed --zero 3 (10.00 GiB, 0 tokens/s a GPU); fix194: ", 0 tokens/s", as "6,530 tokens/s" now ends so too
    assert ", 0 tokens/s a GPU" not in note
    stalled = [c for c in result["capacity"]["fits_with"] if (c["tokens_per_second_per_gpu"] or 1) < 0.5]
    assert {c["flags"] for c in stalled} == {"--zero 3", "--zero 3 --offload-params"}
    ahead = note.split(" (left out: ")[0]
    assert all(f"or {c['flags']} (" not in ahead and not ahead.startswith(f"it fits with {c['flags']} (") for c in stalled)
    assert note.endswith(
        "(left out: --zero 3, --zero 3 --offload-params, which fit but train at "
        + " and ".join(f"{c['tokens_per_second_per_gpu']:.2g}" for c in stalled)
        + " tokens/s a GPU)"
    )
