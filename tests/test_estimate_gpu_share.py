"""``specgen estimate --mig PROFILE`` / ``--share N``: one replica sized in one pod's share of a GPU, as a plan under
``kubernetes.gpu_sharing`` sizes it (newuser40 item 2: the quick calculator could not say whether a model fits a
1g.20gb, nor how much KV cache is left there).

Facts: the H100 80GB ``nvidia-smi mig -lgip`` table (https://jbarrow.ai/field_notes/nvidia-mig/: 3g.40gb 39.50 GiB,
1g.10gb 9.75 GiB); the MIG user guide's fractions (https://docs.nvidia.com/datacenter/tesla/mig-user-guide/
supported-mig-profiles.html: 3g.40gb 3/7 of the SMs, 4/8 of the memory, 2 a GPU); Llama 3.1 8B's KV cache, 32 layers x
8 KV heads x 128 x 2 (K, V) x 2 B = 131,072 B a token in bf16, in vLLM blocks of 16 tokens.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.api import plan_file
from generator.calculator.estimate import EstimateRequest, estimate
from generator.catalog import gpus
from generator.errors import InputError
from generator.units import GIB, MIB
from tests.helpers import estimate_json, run_estimate

MODEL = ("meta-llama/Llama-3.1-8B-Instruct", "--precision", "fp8", "--context", "8192", "--gpu", "h100-sxm5-80gb")
RATES = ("--input-tokens", "800", "--output-tokens", "200")
TOKEN_BYTES = 32 * 8 * 128 * 2 * 2
BLOCK_TOKENS = 16


def by_hand(data: dict[str, Any], memory_bytes: float, utilization: float) -> None:
    """The KV pool is the share's memory x utilization less weights, activations and overhead; its tokens whole blocks."""
    mem, cap = data["memory"]["per_gpu"], data["capacity"]
    assert cap["gpu_memory_bytes"] == int(memory_bytes)
    assert cap["usable_bytes"] == int(memory_bytes * utilization)
    pool = int(memory_bytes * utilization) - mem["weights"] - mem["activations"] - mem["overhead"]
    assert cap["kv_cache_bytes"] == pool
    assert data["kv_cache"]["bytes_per_token"] == TOKEN_BYTES
    tokens = pool // (TOKEN_BYTES * BLOCK_TOKENS) * BLOCK_TOKENS
    assert cap["kv_cache_tokens"] == tokens
    assert cap["max_concurrency"] == round(tokens / 8192, 2)


@pytest.mark.parametrize("utilization", [None, 0.8])
def test_a_3g_40gb_instance_holds_its_39_5_gib_times_the_utilization_less_weights_and_runtime(utilization: float | None) -> None:
    given = ("--gpu-memory-utilization", str(utilization)) if utilization else ()
    data = estimate_json(*MODEL, "--mig", "3g.40gb", *given)
    by_hand(data, 39.50 * GIB, utilization or 0.9)
    # 0.9 x 39.50 = 35.55 GiB, less 8.46 GiB of FP8 weights and about 2.1 GiB of runtime: about 25 GiB of KV cache
    # (0.8 x 39.50 = 31.60 GiB: about 21 GiB)
    low = 24 if utilization is None else 20
    assert low * GIB < data["capacity"]["kv_cache_bytes"] < (low + 2) * GIB
    share = data["gpu_share"]
    assert (share["strategy"], share["mig_profile"], share["per_gpu"]) == ("mig", "3g.40gb", 2)
    assert (share["memory_bytes"], share["memory_basis"]) == (int(39.50 * GIB), "nvidia-smi mig -lgip")
    assert (share["sm_fraction"], share["bandwidth_fraction"]) == ("3/7", "1/2")
    assert share["pod_gpu_memory_utilization"] == (utilization or 0.9)  # a MIG instance is the memory vLLM sees
    whole = estimate_json(*MODEL, *given)
    assert "gpu_share" not in whole and whole["capacity"]["kv_cache_bytes"] > 2 * data["capacity"]["kv_cache_bytes"]


@pytest.mark.parametrize(("strategy", "pod_utilization"), [(None, 0.225), ("time-slicing", 0.225), ("mps", 0.9)])
def test_a_quarter_of_a_shared_gpu_is_its_memory_over_four(strategy: str | None, pod_utilization: float) -> None:
    """Time-slicing and MPS size alike (1/4 of the memory, compute and bandwidth); a time-sliced pod sees the whole
    GPU, so vLLM is started at 0.9 / 4 of it (the render's setting)."""
    chosen = ("--share-strategy", strategy) if strategy else ()
    data = estimate_json(*MODEL, "--share", "4", *chosen)
    by_hand(data, gpus()["h100-sxm5-80gb"].memory_bytes // 4 // MIB * MIB, 0.9)  # a share is whole MiB
    share = data["gpu_share"]
    assert (share["strategy"], share["per_gpu"], share["sm_fraction"], share["bandwidth_fraction"]) == (
        strategy or "time-slicing",
        4,
        "1/4",
        "1/4",
    )
    assert share["pod_gpu_memory_utilization"] == pod_utilization


def test_a_share_runs_slower_than_the_whole_gpu() -> None:
    """Memory-bound decode at half the bandwidth (3g.40gb) and a quarter (x4): the batch-1 step is longer than the whole
    GPU's, and longer on the smaller share."""
    step = {
        name: estimate_json(*MODEL, *RATES, *extra)["throughput"]["decode_step_s"]
        for name, extra in (("whole", ()), ("mig", ("--mig", "3g.40gb")), ("quarter", ("--share", "4")))
    }
    assert step["whole"] < step["mig"] < step["quarter"]
    assert step["mig"] > 1.5 * step["whole"]  # weights read at half the bandwidth, fixed step costs beside them


WORKLOAD = """\
version: 1
name: shares
deployments:
  - name: llama8b
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: fp8, max_context_tokens: 8192, avg_input_tokens: 800, avg_output_tokens: 200,
      requests_per_second: 1, slo: {{ttft_p95_ms: 2000, tpot_ms: 60}}}}
hardware: {{provider: azure, gpus: [h100-sxm5-80gb]}}
objective: cost
outputs: [terraform, ansible, kubernetes]
kubernetes:
  location: eastus2
  gpu_sharing: {sharing}
"""


@pytest.mark.parametrize(
    ("sharing", "options"),
    [
        ("{strategy: mig, mig_profile: 3g.40gb}", ("--mig", "3g.40gb")),
        ("{strategy: time-slicing, replicas_per_gpu: 4}", ("--share", "4")),
        ("{strategy: mps, replicas_per_gpu: 2}", ("--share", "2", "--share-strategy", "mps")),
    ],
)
def test_the_estimate_and_the_plan_size_a_share_alike(sharing: str, options: tuple[str, ...], tmp_path: Path) -> None:
    """One implementation: the plan's replica in its share and the estimate in the same share hold the same memory,
    KV tokens and concurrency, and run at the same saturated rate with the same forward-pass tokens (the plan's rates
    were the whole GPU's while its memory was the share's)."""
    path = tmp_path / "shares.yaml"
    path.write_text(WORKLOAD.format(sharing=sharing), encoding="utf-8")
    _, plan = plan_file(str(path))
    (dep,) = plan.deployments
    assert "gpu_share" in dep.details
    data = estimate_json(*MODEL, *RATES, *options)
    memory = dict(dep.memory_per_gpu)
    assert memory.pop("kv_cache_pool") == data["capacity"]["kv_cache_bytes"]
    assert memory == data["memory"]["per_gpu"]
    assert dep.details["kv_cache_tokens_per_replica"] == data["capacity"]["kv_cache_tokens"]
    assert dep.details["max_concurrency_per_replica"] == data["capacity"]["max_concurrency"]
    assert dep.details["max_output_tokens_per_s_per_replica"] == round(data["throughput"]["max_output_tokens_per_s"], 1)
    assert dep.details["max_num_batched_tokens"] == data["constants"]["prefill_chunk_tokens"]
    assert dep.details["gpu_share"] == data["gpu_share"]["text"]
    assert not any("max_num_seqs" in reason and "default" in reason for reason in dep.reasons)


def test_the_text_says_the_share_and_the_pods_vllm_setting() -> None:
    code, text = run_estimate(*MODEL, "--share", "4")
    assert code == 0
    assert "  on one pod's share of h100-sxm5-80gb (" in text
    assert "  share        one of 4 time-slicing replicas of one h100-sxm5-80gb (4 a GPU)" in text
    assert "start vLLM with --gpu-memory-utilization 0.225" in text
    code, text = run_estimate(*MODEL, "--mig", "3g.40gb")
    assert code == 0
    assert "39.50 GiB; 35.55 GiB usable at vLLM's --gpu-memory-utilization 0.9): fits" in text
    assert "one 3g.40gb MIG instance of one h100-sxm5-80gb (2 a GPU): 39.50 GiB (nvidia-smi mig -lgip)" in text
    assert "--gpu-memory-utilization 0.9 (" not in text


def test_a_model_too_big_for_its_instance_does_not_fit_it() -> None:
    """8.46 GiB of weights and the runtime leave no KV cache in 0.9 x 9.75 GiB: exit 3, the breakdown printed."""
    code, text = run_estimate(*MODEL, "--mig", "1g.10gb")
    assert code == 3
    assert "(9.75 GiB; 8.77 GiB usable at vLLM's --gpu-memory-utilization 0.9): does NOT fit" in text
    assert "a larger share (--mig, a smaller --share)" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--gpu", "l4-24gb", "--mig", "1g.10gb"), "--mig 1g.10gb: GPU 'l4-24gb' does not support MIG"),
        (
            ("--gpu", "a100-sxm4-40gb", "--mig", "1g.20gb"),
            "--mig 1g.20gb: MIG profile '1g.20gb' does not exist on GPU 'a100-sxm4-40gb' (it has 1g.5gb, 1g.10gb,",
        ),
        (("--gpu", "mi300x-192gb", "--share", "2"), "--share 2: GPU 'mi300x-192gb' is not an NVIDIA GPU"),
        (("--gpu", "h100-sxm5-80gb", "--share", "1"), "--share must be a whole number from 2 to 48"),
        (("--gpu", "h100-sxm5-80gb", "--share", "49"), "--share must be a whole number from 2 to 48"),
    ],
)
def test_a_share_the_gpu_has_not_is_an_invalid_value(
    args: tuple[str, ...], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = run_estimate("meta-llama/Llama-3.1-8B-Instruct", *args)
    # a GPU without the share is invalid input; --share out of its range a usage error (newuser73 item 9)
    assert code == (2 if "must be a whole number" in message else 1)
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--gpu", "h100-sxm5-80gb", "--mig", "3g.40gb", "--share", "2"), "--mig and --share do not go together"),
        (
            (
                "--mig",
                "3g.40gb",
            ),
            "--mig 3g.40gb needs --gpu",
        ),
        (("--gpu", "h100-sxm5-80gb", "--mig", "3g.40gb", "--tp", "2"), "--mig 3g.40gb sizes a replica in one pod's share"),
        (("--gpu", "h100-sxm5-80gb", "--share", "4", "--pp", "2"), "--pp 2 makes a replica of several GPUs"),
        (("--gpu", "h100-sxm5-80gb", "--share-strategy", "mps"), "--share-strategy needs --share"),
        (("--gpu", "h100-sxm5-80gb", "--mig", "3g.40gb", "--train", "lora"), "--mig is an inference option"),
        (("--gpu", "h100-sxm5-80gb", "--share", "4", "--ram-gib", "64"), "--share is not read when planning placement"),
    ],
)
def test_options_a_share_does_not_go_with_are_a_usage_error(
    args: tuple[str, ...], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        run_estimate("meta-llama/Llama-3.1-8B-Instruct", *args)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"mig": "3g.40gb", "share": 2}, "--mig and --share do not go together"),
        ({"mig": "3g.40gb", "tp": 2}, "--tp 2 makes a replica of several GPUs"),
        ({"share": 4, "ep": 2}, "--ep 2 makes a replica of several GPUs"),
        ({"share": 4, "share_strategy": "vgpu"}, "--share-strategy must be one of time-slicing, mps"),
        ({"share": 4, "gpu": None}, "--share 4 needs --gpu"),
        ({"share": 4, "train": "lora"}, "a training job keeps whole GPUs"),
        ({"mig": "3g.40gb", "share_strategy": "mps"}, "--share-strategy is for --share"),
    ],
)
def test_callers_of_the_estimate_get_the_same_refusals(fields: dict[str, Any], message: str) -> None:
    request = EstimateRequest(model="meta-llama/Llama-3.1-8B-Instruct", gpu="h100-sxm5-80gb")._replace(**fields)
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        estimate(request)


def test_the_share_range_is_the_workload_schemas() -> None:
    from generator.calculator.estimate import SHARE_REPLICAS, SHARE_STRATEGIES
    from generator.workload.schema import workload_schema

    def find(node: Any) -> Any:
        if isinstance(node, dict):
            if "replicas_per_gpu" in node.get("properties", {}):
                return node
            for value in node.values():
                if (found := find(value)) is not None:
                    return found
        if isinstance(node, list):
            for value in node:
                if (found := find(value)) is not None:
                    return found
        return None

    # the workload's kubernetes.gpu_sharing (a deployment's own adds strategy none: whole GPUs, no share to size)
    sharing = find(workload_schema()["properties"]["kubernetes"])
    replicas = sharing["properties"]["replicas_per_gpu"]
    assert (replicas["minimum"], replicas["maximum"]) == SHARE_REPLICAS
    assert set(SHARE_STRATEGIES) == set(sharing["properties"]["strategy"]["enum"]) - {"mig"}
