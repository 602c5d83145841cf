"""fix161: ``specgen estimate``'s LoRA serving options give the planner's figures for the same service.

The persona of tests/data/newuser92/lora-saas.yaml: Llama 3.1 8B bf16 on an H100 SXM under vLLM, 8,192-token context,
1,000 + 200-token requests, 40 adapters at rank 64 over the seven linear modules, 4 slots. Hand-derived (the module
docstring of tests/test_lora_serving.py): a slot is 32 layers x 64 x 81,920 x 2 B = 335,544,320 B (320 MiB), four
1,342,177,280 B (1,280 MiB); vLLM's float32 shrink buffer (3 slices, 8,192 tokens, rank 64) 6,291,456 B; so the KV pool
is 1,348,468,736 B smaller, 10,288 tokens of 131,072 B (424,768 -> 414,480 tokens; 51.85 -> 50.60 requests of 8,192);
host RAM 40 adapters x 335,544,320 B = 13,421,772,800 B (12.5 GiB) a TP1 replica.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.calculator.cli import main
from generator.calculator.estimate import EstimateRequest, estimate
from tests.conftest import REPO

HERE = Path(__file__).parent
WORKLOAD = HERE / "data" / "newuser92" / "lora-saas.yaml"
MODEL = "meta-llama/Llama-3.1-8B-Instruct"
TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
SLOT = 32 * 64 * 81_920 * 2
BUFFER = 3 * 8_192 * 64 * 4


@pytest.fixture(scope="module")
def planned() -> dict[str, Any]:
    from generator.api import plan_file

    _, plan = plan_file(str(WORKLOAD))
    (dep,) = plan.deployments
    assert dep.tp == 1 and dep.pp == 1
    return dep.details


def _request(batch: int, **lora: Any) -> EstimateRequest:
    settings: dict[str, Any] = {"lora_adapters": 40, "lora_max_rank": 64, "max_loras": 4, "lora_target_modules": TARGETS}
    return EstimateRequest(
        model=MODEL, gpu="h100-sxm5-80gb", context_tokens=8_192, input_tokens=1_000, output_tokens=200, batch=batch,
        **{**settings, **lora},
    )  # fmt: skip


@pytest.fixture(scope="module")
def estimated(planned: dict[str, Any]) -> dict[str, Any]:
    return estimate(_request(planned["batch_per_replica"]))


def test_the_lora_entry_is_the_plans(planned: dict[str, Any], estimated: dict[str, Any]) -> None:
    lora = estimated["lora"]
    assert {k: lora[k] for k in planned["lora"]} == planned["lora"]
    assert lora["slot_bytes_per_gpu"] == SLOT == 320 * 2**20
    assert lora["slots_bytes_per_gpu"] == 4 * SLOT == 1_280 * 2**20
    assert lora["shrink_buffer_bytes_per_gpu"] == BUFFER == 6_291_456
    assert lora["host_bytes_per_replica"] == 40 * SLOT == 13_421_772_800
    assert lora["kernels_per_pass"] == 32 * 4 * 2  # qkv, o, gate_up, down: shrink and expand each


def test_the_kv_pool_and_rates_are_the_plans(planned: dict[str, Any], estimated: dict[str, Any]) -> None:
    cap, thr = estimated["capacity"], estimated["throughput"]
    before = estimated["lora"]["without_adapters"]
    assert before["kv_cache_bytes"] - cap["kv_cache_bytes"] == 4 * SLOT + BUFFER == 1_348_468_736
    assert (
        (before["kv_cache_tokens"], cap["kv_cache_tokens"])
        == (424_768, 414_480)
        == (424_768, planned["kv_cache_tokens_per_replica"])
    )
    assert (before["max_concurrency"], cap["max_concurrency"]) == (51.85, 50.6) == (51.85, planned["max_concurrency_per_replica"])
    # the saturated rate with the kernels timed is the plan's (its replicas' ceiling), 4,207 -> 3,735 output tokens/s
    assert thr["max_output_tokens_per_s"] == planned["max_output_tokens_per_s_per_replica"] == 3_735.4
    assert round(before["throughput"]["max_output_tokens_per_s"]) == 4_207
    # at the plan's batch a replica (3): the TTFT p95 a plan checks, 88.7 ms, and the decode step the kernels lengthen
    assert round(thr["ttft_p95_alone_s"], 4) == planned["ttft_p95_s"] == 0.0887
    assert thr["tpot_s"] > before["throughput"]["tpot_s"]
    assert thr["decode_step_s"] - before["throughput"]["decode_step_s"] > 256 * 10e-6  # the kernels' fixed time at least


def test_the_text_says_slots_kv_host_and_rates(capsys: pytest.CaptureFixture[str]) -> None:
    args = [MODEL, "--gpu", "h100-sxm5-80gb", "--context", "8192", "--input-tokens", "1000", "--output-tokens", "200"]
    lora = ["--lora-adapters", "40", "--lora-max-rank", "64", "--max-loras", "4", "--lora-target-modules", ",".join(TARGETS)]
    assert main([*args, *lora]) == 0
    out = capsys.readouterr().out
    assert "  LoRA         4 adapter slots (--max-loras) at rank 64 over every linear layer (vLLM wraps them all) hold " in out
    assert "hold 1,280 MiB a GPU (320.0 MiB a slot)" in out
    assert "host RAM 12.5 GiB a replica for 40 adapters of 320.0 MiB each" in out
    assert "KV cache 51.85 -> 50.60 GiB a GPU, max concurrency 51.85 -> 50.60 at 8,192 tokens" in out
    assert "(256 a GPU each forward pass, timed in every step): 4,207 -> 3,735 output tokens/s at saturation" in out
    assert main([*args, *lora, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["lora"]["max_cpu_loras"] == 40


def test_sglang_slots_come_out_of_its_fraction() -> None:
    """SGLang's LoRAMemoryPool is allocated before its KV pool is sized: the pool loses exactly the slots."""
    result = estimate(_request(1, max_loras=4)._replace(engine="sglang"))
    before = result["lora"]["without_adapters"]
    assert before["kv_cache_bytes"] - result["capacity"]["kv_cache_bytes"] == 4 * SLOT
    assert "shrink_buffer_bytes_per_gpu" not in result["lora"]


@pytest.mark.parametrize(
    ("options", "code", "says"),
    [
        (["--lora-adapters", "40", "--lora-max-rank", "48"], 2, "--lora-max-rank 48: vLLM's --max-lora-rank takes"),
        (["--lora-adapters", "40", "--lora-max-rank", "48"], 2, "; set 64 (every slot"),
        (
            ["--lora-adapters", "40", "--lora-max-rank", "64", "--max-loras", "41"],
            2,
            "--max-loras 41 is more than --lora-adapters 40",
        ),
        (
            ["--lora-adapters", "40", "--lora-max-rank", "64", "--max-loras", "4", "--max-cpu-loras", "2"],
            2,
            "--max-cpu-loras 2 is below --max-loras 4: vLLM refuses to start (--max-cpu-loras must be at least --max-loras)",
        ),
        (["--lora-adapters", "40"], 2, "--lora-adapters needs --lora-max-rank"),
        (["--max-loras", "4"], 2, "--max-loras needs --lora-adapters"),
        (["--lora-adapters", "0", "--lora-max-rank", "8"], 2, "--lora-adapters must be a whole number from 1 to 100,000, got 0"),
        (["--lora-adapters", "8", "--lora-max-rank", "1024"], 2, "--lora-max-rank must be a whole number from 1 to 512"),
        (
            ["--lora-adapters", "8", "--lora-max-rank", "8", "--max-loras", "2000"],
            2,
            "--max-loras must be a whole number from 1 to 1,024",
        ),
        (["--lora-adapters", "8", "--lora-max-rank", "8", "--lora-target-modules", ",,"], 2, "takes 1 to 64 module names, got 0"),
        (
            ["--lora-adapters", "8", "--lora-max-rank", "8", "--lora-target-modules", "q_porj"],
            1,
            "--lora-target-modules q_porj: ",
        ),
        (["--lora-adapters", "8", "--lora-max-rank", "8", "--lora-target-modules", "lm_head"], 1, "buffers are not sized"),
        (["--lora-adapters", "8", "--lora-max-rank", "8", "--precision", "q4_k_m"], 1, "llama.cpp's server"),
        (["--lora-adapters", "8", "--lora-max-rank", "8", "--train", "lora"], 2, "--lora-adapters is an inference option"),
        (["--lora-adapters", "8", "--lora-max-rank", "8", "--ram-gib", "64"], 2, "--lora-adapters is not read when planning"),
        (["--lora-targets", "q_proj"], 2, "served adapters' are --lora-target-modules"),
        (["--lora-adapters", "1e3x", "--lora-max-rank", "8"], 2, "expected a whole number"),
    ],
)
def test_bad_options_exit_with_a_clear_error(
    capsys: pytest.CaptureFixture[str], options: list[str], code: int, says: str
) -> None:
    rc: int | str | None
    try:
        rc = main([MODEL, "--gpu", "h100-sxm5-80gb", *options])
    except SystemExit as exc:  # argparse's own refusals (exit 2)
        rc = exc.code
    err = capsys.readouterr().err
    assert rc == code, err
    assert says in err, err
    assert "Traceback" not in err


def test_the_ranges_are_the_schemas() -> None:
    from generator.calculator.lora_estimate import OPTIONS
    from generator.calculator.target_limits import target_limits
    from generator.sizing.lora_serving import LORA_RANGES

    schema = json.loads((REPO / "schemas" / "workload.schema.json").read_text())
    lora = schema["properties"]["deployments"]["items"]["properties"]["inference"]["properties"]["lora"]["properties"]
    assert {k: (v["minimum"], v["maximum"]) for k, v in lora.items() if "minimum" in v} == LORA_RANGES
    targets = lora["target_modules"]
    assert (targets["minItems"], targets["maxItems"], targets["items"]["maxLength"]) == target_limits(OPTIONS["target_modules"])
    assert set(OPTIONS) == set(lora)


def test_each_lora_option_sets_its_request_field() -> None:
    """The option a refusal names (``OPTIONS``) is the parser's, and it fills the request field the sizing reads."""
    from generator.calculator.cli import build_parser, build_request
    from generator.calculator.estimate import LORA_REQUEST_FIELDS
    from generator.calculator.lora_estimate import OPTIONS

    given = {"adapters": "7", "max_rank": "16", "max_loras": "3", "max_cpu_loras": "5", "target_modules": "q_proj,v_proj"}
    parser = build_parser()
    argv = [MODEL, "--gpu", "h100-sxm5-80gb", *(part for field, value in given.items() for part in (OPTIONS[field], value))]
    req = build_request(parser, parser.parse_args(argv))
    assert {field: getattr(req, name) for field, name in LORA_REQUEST_FIELDS.items()} == {
        "adapters": 7,
        "max_rank": 16,
        "max_loras": 3,
        "max_cpu_loras": 5,
        "target_modules": ("q_proj", "v_proj"),
    }


def test_an_estimate_without_adapters_loads_none_of_their_code() -> None:
    """The options' module, the LoRA sizing and the workload's models load only where adapters are asked (cold start)."""
    from tests.test_cold_start import _loaded_after

    loaded = _loaded_after(["estimate", MODEL, "--gpu", "h100-sxm5-80gb", "--context", "8192", "--input-tokens", "1000"])
    assert not loaded & {"generator.calculator.lora_estimate", "generator.sizing.lora_serving", "generator.workload.models"}
    with_adapters = _loaded_after(["estimate", MODEL, "--gpu", "h100-sxm5-80gb", "--lora-adapters", "4", "--lora-max-rank", "8"])
    assert "generator.calculator.lora_estimate" in with_adapters


def _slot_warnings(result: dict[str, Any]) -> list[str]:
    return [note for note in result["notes"] if "distinct adapters on average" in note]


def test_the_estimate_says_the_slots_are_short_as_the_plan_does(estimated: dict[str, Any]) -> None:
    # fix191: lora-slots-short (newuser106) was the planner's alone; the estimate's batch is --batch, judged by the
    # planner's function (generator/planner/lora_slot_wait.py): 40 adapters, batch 40: 25.47 distinct, 26 slots
    assert _slot_warnings(estimated) == []  # the plan's batch of 3 needs 3 of the 4 slots
    [said] = _slot_warnings(estimate(_request(40, max_loras=8)))
    assert said.startswith("warning: a batch of 40 sequences (--batch), drawn from 40 adapters taken as equally used, ")
    assert "holds 25.5 distinct adapters on average, but --max-loras 8 lets a step hold 8" in said
    # 18 more slots of 320 MiB (rank 64 over every linear layer)
    assert "Set --max-loras to at least 26 (another 5,760 MiB a GPU out of the KV pool; " in said
    assert _slot_warnings(estimate(_request(40, max_loras=26))) == []
