"""Workload values checked against each other, the model and the engine (bugs 3, 4, 9, 13 of the new-user test).

Each refused workload exits 1 with one located line ``file:line:col: field: message``; every weight format the
estimate accepts is a workload precision, and the plan sizes it as the estimate does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator import catalog
from generator.api import plan_file
from generator.calculator.cli import main as estimate_main
from generator.catalog import find_gpu
from generator.cli import main as cli_main
from generator.sizing.architecture import parse_architecture
from generator.sizing.context_limit import served_context_tokens
from generator.sizing.performance import accelerator_for
from generator.sizing.precision import KV_CACHE_BITS, WEIGHT_FORMAT_ALIASES, WEIGHT_FORMATS, weight_format
from generator.workload.loader import parse_yaml
from generator.workload.schema import validate_document
from tests.conftest import REPO
from tests.helpers import VALID, call_cli

FIXED = """\
version: 1
name: home
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference:
      max_context_tokens: 8192
hardware:
  fixed:
    gpu: rtx-4090-24gb
    gpu_count: 1
    ram_gib: 64
"""
RPS = "      requests_per_second: 2\n"
WINDOW = "      max_context_tokens: 8192\n"


def _sub(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new)


REFUSED = [
    pytest.param(
        _sub(VALID, RPS, RPS + "      avg_input_tokens: 8000\n"),
        # fuzz33 item 11: the default avg_output_tokens is said to be one, not quoted as the user's
        "workload.yaml:9:25: deployments[0].inference.avg_input_tokens: avg_input_tokens (8,000) + avg_output_tokens "
        "(default 200, not given) = 8,200 exceeds max_context_tokens (8,192): an average request would not fit its "
        "context window",
        id="prompt-longer-than-window",
    ),
    pytest.param(
        _sub(VALID, RPS, RPS + "      avg_output_tokens: 7500\n"),
        "workload.yaml:9:26: deployments[0].inference.avg_output_tokens: avg_input_tokens (default 1,000, not given) + "
        "avg_output_tokens (7,500) = 8,500 exceeds max_context_tokens (8,192): an average request would not fit its "
        "context window",
        id="output-given-input-default",
    ),
    pytest.param(
        _sub(VALID, WINDOW, "      max_context_tokens: 1000\n"),
        "workload.yaml:7:27: deployments[0].inference.max_context_tokens: avg_input_tokens (default 1,000, not given) + "
        "avg_output_tokens (default 200, not given) = 1,200 exceeds max_context_tokens (1,000): an average request "
        "would not fit its context window; give avg_input_tokens and avg_output_tokens",
        id="defaults-exceed-small-window",
    ),
    # fuzz33 item 11: an embedding service's window below the default prompt quoted "avg_input_tokens (1,000)" as given
    pytest.param(
        _sub(
            _sub(VALID, "meta-llama/Llama-3.1-8B-Instruct", "BAAI/bge-m3"),
            WINDOW,
            "      task: embed\n      max_context_tokens: 512\n",
        ),
        "workload.yaml:8:27: deployments[0].inference.max_context_tokens: avg_input_tokens (default 1,000, not given) "
        "exceeds max_context_tokens (512): an average request would not fit its context window; give avg_input_tokens",
        id="embed-default-prompt-exceeds-window",
    ),
    pytest.param(
        _sub(VALID, RPS, RPS + "      avg_input_tokens: 8000\n      avg_output_tokens: 300\n"),
        "workload.yaml:9:25: deployments[0].inference.avg_input_tokens: avg_input_tokens + avg_output_tokens (8,300) "
        "exceeds max_context_tokens (8,192): an average request would not fit its context window",
        id="both-given-exceed-window",
    ),
    pytest.param(
        _sub(VALID, WINDOW, "      max_context_tokens: 1000000\n"),
        "workload.yaml:7:27: deployments[0].inference.max_context_tokens: max_context_tokens 1,000,000 is more than "
        "the 131,072 tokens Llama 3.1 8B Instruct serves (the max_model_len vLLM derives from its config's "
        "max_position_embeddings and rope_scaling); vLLM and SGLang refuse a longer context; where the model card "
        "documents RoPE scaling beyond it (e.g. YaRN), give the model as a path to a config.json with that rope_scaling",
        id="window-beyond-model",
    ),
    pytest.param(
        _sub(VALID, RPS, RPS + "      allowed_precisions: [nvfp4, int4, fp4]\n"),
        "workload.yaml:9:41: deployments[0].inference.allowed_precisions[2]: 'fp4' and 'nvfp4' are the same format "
        "(nvfp4): list it once",
        id="alias-listed-twice",
    ),
    pytest.param(
        _sub(FIXED, "ram_gib: 64", "ram_gib: 8"),
        "workload.yaml:12:14: hardware.fixed.ram_gib: the default reserved_ram_gib 8 leaves none of ram_gib 8 for the "
        "model: the reservation (OS and engine) must be less than the machine's RAM",
        id="fixed-default-reserve-takes-all",
    ),
    pytest.param(
        _sub(FIXED, "ram_gib: 64", "ram_gib: 8\n    reserved_ram_gib: 12"),
        "workload.yaml:13:23: hardware.fixed.reserved_ram_gib: reserved_ram_gib 12 leaves none of ram_gib 8 for the "
        "model: the reservation (OS and engine) must be less than the machine's RAM",
        id="fixed-reserve-above-ram",
    ),
    # fuzz9 item 9: the estimate refused EP on a dense model, the workload planned it (2 of 4 GPUs idle)
    pytest.param(
        _sub(VALID, "    inference:\n", "    parallelism: {ep: 2}\n    inference:\n"),
        "workload.yaml:6:23: deployments[0].parallelism.ep: ep 2: expert parallelism spreads the routed experts of a "
        "mixture-of-experts model; meta-llama/Llama-3.1-8B-Instruct is a dense model (pin tp / pp instead)",
        id="ep-on-a-dense-model",
    ),
    # newuser9 item 5: passed validate, then plan said to allow a bigger GPU; newuser72 item 1: ep a multiple of tp is
    # attention data parallelism (ep / tp groups), planned (ACCEPTED); one that is not a multiple is refused
    pytest.param(
        _sub(
            VALID,
            "Llama-3.1-8B-Instruct\n    inference:\n",
            "Qwen3-30B-A3B\n    parallelism: {tp: 4, pp: 2, ep: 6}\n    inference:\n",
        ).replace("meta-llama/Qwen3", "Qwen/Qwen3"),
        "workload.yaml:6:37: deployments[0].parallelism.ep: ep 6 must be tp 4 (each pipeline stage spreads its experts "
        "over its tensor-parallel GPUs) or a multiple of it (attention data-parallel over ep / tp groups of tp GPUs: 4, "
        "8, 16, 32, ...), or be 1 for no expert parallelism",
        id="ep-not-a-multiple-of-tp",
    ),
    pytest.param(
        _sub(
            VALID, "Llama-3.1-8B-Instruct\n    inference:\n", "Qwen3-30B-A3B\n    parallelism: {tp: 8, ep: 4}\n    inference:\n"
        ).replace("meta-llama/Qwen3", "Qwen/Qwen3"),
        "workload.yaml:6:30: deployments[0].parallelism.ep: ep 4 must be tp 8 (each pipeline stage spreads its experts "
        "over its tensor-parallel GPUs) or a multiple of it (attention data-parallel over ep / tp groups of tp GPUs: 8, "
        "16, 32, 64, ...), or be 1 for no expert parallelism",
        id="ep-below-tp",
    ),
    # newuser9 item 8: vLLM and SGLang have no int8 cache (the estimate printed an SGLang log line SGLang cannot write)
    pytest.param(
        _sub(VALID, RPS, RPS + "      kv_cache_precision: int8\n"),
        "workload.yaml:9:27: deployments[0].inference.kv_cache_precision: kv_cache_precision int8: vLLM has no int8 KV "
        "cache (its cache dtypes are bf16 / fp16 and fp8); use fp8 (int8 is llama.cpp's q8_0 cache, for hardware.fixed)",
        id="int8-kv-on-vllm",
    ),
    # review 6 M4: a training job's ep forced its TP and no expert parallelism was sized
    pytest.param(
        _sub(
            VALID,
            "    inference:\n      max_context_tokens: 8192\n      requests_per_second: 2\n",
            "    parallelism: {ep: 4}\n    training: {method: lora}\n",
        ).replace("meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-30B-A3B"),
        "workload.yaml:6:23: deployments[0].parallelism.ep: ep 4: a training job's expert parallelism is not planned "
        "(specgen estimate --train --ep sizes it); drop ep",
        id="ep-on-a-training-job",
    ),
    # fuzz9 item 8: provider, allowed GPUs and owned servers beside an existing machine were dropped without a word
    pytest.param(
        _sub(FIXED, "hardware:\n", "hardware:\n  gpus: [h100-sxm5-80gb]\n"),
        "workload.yaml:9:9: hardware.gpus: gpus does not go with hardware.fixed (the machine is given there); drop one of them",
        id="fixed-with-allowed-gpus",
    ),
    # newuser10 item 4: a batch limit on an existing machine was dropped without a word (one stream is planned)
    pytest.param(
        _sub(FIXED, "max_context_tokens: 8192\n", "max_context_tokens: 8192\n      max_num_seqs: 4\n"),
        "workload.yaml:8:21: deployments[0].inference.max_num_seqs: max_num_seqs is a serving engine's setting; "
        "hardware.fixed is planned as one llama.cpp-style stream placed over GPU, RAM and NVMe: drop max_num_seqs or "
        "hardware.fixed",
        id="batch-limit-on-a-fixed-machine",
    ),
    pytest.param(
        _sub(FIXED, "max_context_tokens: 8192\n", "max_context_tokens: 8192\n      max_num_batched_tokens: 512\n"),
        "workload.yaml:8:31: deployments[0].inference.max_num_batched_tokens: max_num_batched_tokens is a serving "
        "engine's setting; hardware.fixed is planned as one llama.cpp-style stream placed over GPU, RAM and NVMe: drop "
        "max_num_batched_tokens or hardware.fixed",
        id="forward-pass-tokens-on-a-fixed-machine",
    ),
    pytest.param(
        _sub(FIXED, "hardware:\n", "hardware:\n  provider: aws\n"),
        "workload.yaml:9:13: hardware.provider: provider aws does not go with hardware.fixed: an existing machine is "
        "planned as bare metal",
        id="fixed-on-a-cloud",
    ),
    # hardware.buy (newuser22 item 2): false needs owned servers to plan on; an existing machine buys nothing anyway
    pytest.param(
        _sub(VALID, "hardware:\n", "hardware:\n  buy: false\n"),
        "workload.yaml:10:8: hardware.buy: buy: false leaves nothing to plan on: list the servers you own under "
        "hardware.inventory",
        id="buy-nothing-owning-nothing",
    ),
    pytest.param(
        # without kubernetes among the outputs: GKE's pools would need the cluster too (fuzz35 item 6)
        _sub(VALID, "hardware:\n", "hardware:\n  buy: false\n  provider: gcp\n") + "outputs: [terraform, ansible]\n",
        "workload.yaml:10:8: hardware.buy: buy: false leaves nothing to plan on: gcp instances are rented; plan servers "
        "you own as bare metal",
        id="buy-nothing-on-a-cloud",
    ),
    pytest.param(
        _sub(FIXED, "hardware:\n", "hardware:\n  buy: true\n"),
        "workload.yaml:9:8: hardware.buy: hardware.fixed plans the one machine given there and buys nothing; drop buy "
        "or hardware.fixed",
        id="buy-on-a-fixed-machine",
    ),
]


@pytest.mark.parametrize(("text", "expected"), REFUSED)
@pytest.mark.parametrize("command", ["validate", "plan"])
def test_refused_at_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, expected: str, command: str) -> None:
    (tmp_path / "workload.yaml").write_text(text)
    code = call_cli(tmp_path, (command, "workload.yaml"))
    err = capsys.readouterr().err
    assert code == 1, err
    assert err == f"specgen: error: {expected}\n"


ACCEPTED = [
    pytest.param(_sub(VALID, RPS, RPS + "      avg_input_tokens: 7992\n"), id="request-exactly-the-window"),
    pytest.param(_sub(VALID, WINDOW, "      max_context_tokens: 131072\n"), id="window-exactly-the-model"),
    pytest.param(_sub(FIXED, "ram_gib: 64", "ram_gib: 16\n    reserved_ram_gib: 12"), id="fixed-reserve-below-ram"),
    pytest.param(_sub(FIXED, "hardware:\n", "hardware:\n  buy: false\n"), id="fixed-machine-buys-nothing"),
    # newuser72 item 1: attention data parallelism with expert parallelism (vLLM --data-parallel-size 2
    # --enable-expert-parallel, SGLang --enable-dp-attention --dp-size 2), on both engines
    *(
        pytest.param(
            _sub(
                VALID,
                "Llama-3.1-8B-Instruct\n    inference:\n",
                f"Qwen3-30B-A3B\n    parallelism: {pin}\n    inference:\n      engine: {engine}\n",
            ).replace("meta-llama/Qwen3", "Qwen/Qwen3"),
            id=f"attention-dp-{engine}-{pin}",
        )
        for engine in ("vllm", "sglang")
        for pin in ("{tp: 2, pp: 2, ep: 4}", "{tp: 1, ep: 8}", "{ep: 8}")
    ),
]


@pytest.mark.parametrize("text", ACCEPTED)
def test_limits_are_inclusive(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> None:
    (tmp_path / "workload.yaml").write_text(text)
    assert call_cli(tmp_path, ("validate", "workload.yaml")) == 0, capsys.readouterr().err


# --- precisions: the schema's names are the engine's -----------------------------------------------------------


def _inference_properties() -> dict[str, Any]:
    schema = json.loads((REPO / "schemas" / "workload.schema.json").read_text(encoding="utf-8"))
    deployment = schema["properties"]["deployments"]["items"]
    return dict(deployment["properties"]["inference"]["properties"])


ENGINE_NAMES = [*WEIGHT_FORMATS, *WEIGHT_FORMAT_ALIASES]


def test_schema_precisions_are_the_engines_formats_and_aliases() -> None:
    props = _inference_properties()
    assert props["precision"]["enum"] == ENGINE_NAMES
    assert props["allowed_precisions"]["items"]["enum"] == ENGINE_NAMES
    assert props["allowed_precisions"]["maxItems"] == len(ENGINE_NAMES)
    assert sorted(props["kv_cache_precision"]["enum"]) == sorted(KV_CACHE_BITS)


@pytest.mark.parametrize("name", ENGINE_NAMES)
def test_every_engine_precision_is_a_valid_workload_precision(name: str) -> None:
    text = _sub(VALID, RPS, f"{RPS}      precision: {name}\n      allowed_precisions: [{name}]\n")
    validate_document(parse_yaml(text, "workload.yaml"))


# --- NVFP4 in the plan: the estimate's weights and rate ----------------------------------------------------------

NVFP4 = """\
version: 1
name: nv
deployments:
  - name: chat
    model: MODEL
    parallelism: {tp: TP, pp: 1}
    inference:
      precision: PRECISION
      max_context_tokens: 8192
      requests_per_second: 1
hardware:
  gpus: [GPU]
"""


def _estimate(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    estimate_main([*args, "--context", "8192", "--json"])
    return dict(json.loads(capsys.readouterr().out))


@pytest.mark.parametrize(
    ("model", "gpu", "tp", "precision", "fits"),
    [
        pytest.param("meta-llama/Llama-3.3-70B-Instruct", "b200-sxm-180gb", 2, "nvfp4", True, id="b200-fp4-rate"),
        pytest.param("meta-llama/Llama-3.3-70B-Instruct", "rtx-pro-6000-blackwell-96gb", 1, "fp4", True, id="rtx-pro-alias"),
        pytest.param("meta-llama/Llama-3.3-70B-Instruct", "h100-sxm5-80gb", 2, "modelopt-fp4", True, id="h100-weight-only"),
        pytest.param("meta-llama/Llama-3.1-405B-Instruct", "h100-sxm5-80gb", 1, "nvfp4", False, id="h100-too-big"),
        pytest.param("meta-llama/Llama-3.1-8B-Instruct", "l40s-48gb", 1, "fbgemm-fp8", True, id="l40s-fp8-channel"),
    ],
)
def test_plan_sizes_a_precision_as_the_estimate_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], model: str, gpu: str, tp: int, precision: str, fits: bool
) -> None:
    text = NVFP4.replace("MODEL", model).replace("TP", str(tp)).replace("PRECISION", precision).replace("GPU", gpu)
    (tmp_path / "workload.yaml").write_text(text)
    code = call_cli(tmp_path, ("plan", "workload.yaml", "--format", "json"))
    out, err = capsys.readouterr()
    estimate = _estimate(capsys, model, "--gpu", gpu, "--tp", str(tp), "--precision", precision)
    assert estimate["capacity"]["fits"] is fits
    if not fits:
        assert code == 3, err
        assert "has no feasible plan" in err
        return
    assert code == 0, err
    dep = json.loads(out)["deployments"][0]
    assert dep["precision"] == estimate["precision"]["weights"] == weight_format(precision).name
    assert dep["memory_per_gpu"]["weights"] == estimate["weights"]["bytes_per_gpu"]
    assert dep["details"]["weights_bytes"] == estimate["weights"]["bytes"]


@pytest.mark.parametrize(
    ("gpu", "compute", "tflops"),
    [
        # acc142: the B200's FP4 at its measured FP4 share (cuBLASLt 5,239 of 9,000) over the H100's FP8 one (1,402.6 of
        # 1,979): 9,686 -> 7,392; the GB200's at its FP8 share (3,615.6 of 5,000) times the B200's FP4-over-FP8 share
        # (its measured_like sibling, the same die): 10,202.9 -> 7,786.3 (acc138: both at their FP8 shares)
        pytest.param("b200-sxm-180gb", "fp4", 9000 * (5239 / 9000) / (1402.6 / 1979), id="blackwell-w4a4"),
        pytest.param(
            "gb200-186gb",
            "fp4",
            10000 * (3615.6 / 5000) * (5239 / 9000) / (3432.5 / 4500) / (1402.6 / 1979),
            id="grace-blackwell-w4a4",
        ),
        # the Server Edition's measured FP4 share (NVFP4 1,629 of 2,000, NVIDIA/cutlass PR #3272) over the H100's FP8
        # share (acc147; before, its BF16 share 409.42 of 500 over the H100's BF16: 2,038.6)
        pytest.param("rtx-pro-6000-blackwell-96gb", "fp4", 2000 * (1629 / 2000) / (1402.6 / 1979), id="rtx-pro-w4a4"),
        pytest.param("h100-sxm5-80gb", "bf16", 989, id="hopper-marlin-w4a16"),
        # the A100's bf16 rate, scaled by its measured share over the H100's (271.2 of 312 against 794.5 of 989)
        pytest.param("a100-sxm4-80gb", "bf16", 271.2 * 989 / 794.5, id="ampere-marlin-w4a16"),
    ],
)
def test_nvfp4_runs_at_fp4_only_where_the_gpu_has_fp4(gpu: str, compute: str, tflops: float) -> None:
    """Without FP4 tensor cores the kernels dequantize: the bf16 rate, and no W4A4 GEMM efficiency discount."""
    acc = accelerator_for(find_gpu(gpu), weight_format("nvfp4").compute, 1)
    assert acc.compute == compute and acc.dense_tflops == pytest.approx(tflops)


# --- the model's limit: vLLM's derived max_model_len ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "model_type", "tokens"),
    [
        pytest.param({"max_position_embeddings": 32768}, "qwen2", 32768, id="max-position-embeddings"),
        pytest.param({"max_position_embeddings": 4096, "n_positions": 2048}, "gpt2", 2048, id="smallest-key-wins"),
        pytest.param({"max_position_embeddings": 8192, "model_max_length": 131072}, "cohere", 131072, id="model-max-length"),
        pytest.param(
            {
                "max_position_embeddings": 32768,
                "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
            },
            "qwen2",
            131072,
            id="yarn-from-original",
        ),
        pytest.param(
            {
                "max_position_embeddings": 163840,
                "rope_scaling": {"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096},
            },
            "deepseek_v3",
            163840,
            id="yarn-legacy-type-key",
        ),
        pytest.param(
            {"max_position_embeddings": 4096, "rope_scaling": {"type": "linear", "factor": 2.0}}, "llama", 8192, id="linear"
        ),
        pytest.param(
            {"max_position_embeddings": 4096, "rope_scaling": {"type": "dynamic", "factor": 2.5}}, "llama", 10240, id="dynamic"
        ),
        pytest.param(
            {"max_position_embeddings": 131072, "rope_scaling": {"rope_type": "llama3", "factor": 8.0}},
            "llama",
            131072,
            id="llama3-pre-scaled",
        ),
        pytest.param(
            {"max_position_embeddings": 131072, "rope_scaling": {"type": "longrope", "factor": 32.0}},
            "phi3",
            131072,
            id="longrope-pre-scaled",
        ),
        pytest.param(
            {"max_position_embeddings": 131072, "rope_scaling": {"rope_type": "linear", "factor": 8.0}},
            "gemma3_text",
            131072,
            id="gemma3",
        ),
        pytest.param(
            {"max_position_embeddings": 4096, "rope_scaling": {"type": "linear", "factor": 1e308}}, "llama", 2**31, id="capped"
        ),
        pytest.param({"hidden_size": 1}, "llama", 0, id="unknown"),
    ],
)
def test_served_context_is_vllms_derived_max_model_len(config: dict[str, Any], model_type: str, tokens: int) -> None:
    assert served_context_tokens(config, model_type) == tokens


def test_catalog_models_serve_their_max_position_embeddings() -> None:
    """Every catalog model's rope_scaling is pre-scaled or YaRN from an original that multiplies to the same length."""
    for model in catalog.models().values():
        arch = parse_architecture(model.config)
        offset = 2 if arch.model_type == "xlm-roberta" else 0  # positions start after XLM-R's padding index
        assert arch.max_model_len == arch.max_position_embeddings - offset, model.id


def test_a_yarn_stretched_local_model_serves_its_longer_context(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = dict(catalog.find_model("meta-llama/Llama-3.1-8B-Instruct").config)
    config.update(
        max_position_embeddings=32768,
        rope_scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
    )
    (tmp_path / ".git").mkdir()
    (tmp_path / "model.json").write_text(json.dumps(config))
    text = _sub(VALID, "meta-llama/Llama-3.1-8B-Instruct", "./model.json")
    (tmp_path / "workload.yaml").write_text(_sub(text, WINDOW, "      max_context_tokens: 131072\n"))
    assert call_cli(tmp_path, ("validate", "workload.yaml")) == 0, capsys.readouterr().err
    (tmp_path / "workload.yaml").write_text(_sub(text, WINDOW, "      max_context_tokens: 131073\n"))
    assert call_cli(tmp_path, ("validate", "workload.yaml")) == 1
    assert "is more than the 131,072 tokens" in capsys.readouterr().err


PINNED = """\
version: 1
name: w
deployments:
  - name: chat
    model: mistralai/Mixtral-8x7B-Instruct-v0.1
    parallelism: {pin}
    inference: {{max_context_tokens: 4096, requests_per_second: 5}}
hardware:
  gpus: [h100-sxm5-80gb]
  provider: baremetal
"""


@pytest.mark.parametrize(
    ("pin", "message"),
    [
        ("{ep: 3, tp: 3}", "parallelism.tp: mistralai/Mixtral-8x7B-Instruct-v0.1 does not split so: attention heads (32)"),
        ("{ep: 16, tp: 16}", "parallelism.ep: mistralai/Mixtral-8x7B-Instruct-v0.1 does not split so: routed experts (8)"),
        ("{tp: 2, pp: 48}", "parallelism.pp: pp 48 is more than the model's 32 layers"),
        ("{tp: 8, ep: 8}", None),
    ],
)
def test_a_pinned_layout_the_model_does_not_split_into_is_invalid_at_its_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], pin: str, message: str | None
) -> None:
    """fuzz12 item 3: validate passed it, and plan exited 3 advising a GPU with more memory."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "w.yaml").write_text(PINNED.format(pin=pin))
    code = call_cli(tmp_path, ("validate", "w.yaml"))
    err = capsys.readouterr().err
    assert (code, message is None or message in err) == ((0, True) if message is None else (1, True)), err


@pytest.mark.parametrize(("pin", "gpus"), [("{tp: 2, pp: 2}", 4), ("{tp: 1, pp: 8}", 8)])
def test_a_pinned_layout_is_planned_as_pinned(tmp_path: Path, pin: str, gpus: int) -> None:
    """fuzz13 item 4: a pinned PP was tried only at the platform's largest TP, so tp 2 / pp 2 passed validate and the
    plan said "no feasible layout ... allow a GPU with more memory"."""
    path = tmp_path / "w.yaml"
    path.write_text(PINNED.format(pin=pin).replace("mistralai/Mixtral-8x7B-Instruct-v0.1", "meta-llama/Llama-3.1-8B-Instruct"))
    (dep,) = plan_file(str(path))[1].deployments
    assert (dep.tp * dep.pp, dep.gpus // dep.replicas) == (gpus, gpus)


@pytest.mark.parametrize(
    ("pin", "size", "gpus", "idle"), [("{tp: 1, pp: 3}", 3, 6, 2), ("{tp: 1, pp: 5}", 5, 5, 3), ("{tp: 2, pp: 3}", 6, 6, 2)]
)
def test_a_pinned_replica_that_does_not_divide_a_server_runs_in_it_with_the_rest_idle(
    tmp_path: Path, pin: str, size: int, gpus: int, idle: int
) -> None:
    """review 12 item 3: a 3-, 5- or 6-GPU replica was never placed on 8-GPU servers ("no platform of this provider
    offers an allowed GPU"); it runs in one, the rest of the server idle (as many replicas as fit it: two of 3 GPUs,
    newuser46 item 2)."""
    path = tmp_path / "w.yaml"
    text = PINNED.format(pin=pin).replace("mistralai/Mixtral-8x7B-Instruct-v0.1", "meta-llama/Llama-3.1-8B-Instruct")
    path.write_text(text.replace("h100-sxm5-80gb", "h200-sxm-141gb"))
    plan = plan_file(str(path))[1]
    (dep,) = plan.deployments
    assert (dep.tp * dep.pp, dep.gpus, plan.totals["idle_gpus"]) == (size, gpus, idle)
    assert f"not co-located: each replica ({size} GPUs) leaves {8 % size} GPU(s) of a 8-GPU" in "\n".join(dep.reasons)


def test_a_pinned_replica_that_neither_fits_nor_fills_servers_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "w.yaml"
    text = PINNED.format(pin="{tp: 4, pp: 3}").replace("mistralai/Mixtral-8x7B-Instruct-v0.1", "meta-llama/Llama-3.1-8B-Instruct")
    path.write_text(text.replace("h100-sxm5-80gb", "h200-sxm-141gb"))
    with pytest.raises(SystemExit) as done:
        cli_main(["plan", str(path)])
    err = capsys.readouterr().err
    assert done.value.code == 3, err
    assert "TP4 PP3 (12 GPUs a replica) neither fits one dgx-h200 server (8 GPUs) nor fills whole servers of 8" in err
    assert "to unblock: pin a TP x PP whose GPUs fit one server" in err and "more memory" not in err
    assert "no platform of this provider offers" not in err


def test_an_attention_dp_replica_that_neither_fits_nor_fills_servers_is_named_as_such(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """review72 item 6 (does_not_pack): a TP1 EP4 PP3 replica (12 GPUs) was named by its stage width as "TP4 PP3"."""
    path = tmp_path / "w.yaml"
    path.write_text(PINNED.format(pin="{tp: 1, ep: 4, pp: 3}").replace("h100-sxm5-80gb", "h200-sxm-141gb"))
    with pytest.raises(SystemExit) as done:
        cli_main(["plan", str(path)])
    err = capsys.readouterr().err
    assert done.value.code == 3, err
    assert "TP1 EP4 PP3 (attention DP 4) (12 GPUs a replica) neither fits one dgx-h200 server (8 GPUs)" in err


def test_a_pipeline_replica_inside_one_server_shares_it(tmp_path: Path) -> None:
    """review 12 item 4: a TP1 x PP2 replica was taken as spanning servers, never co-located (2 servers, not 1)."""
    path = tmp_path / "w.yaml"
    one = PINNED.format(pin="{tp: 1, pp: 2}").replace("mistralai/Mixtral-8x7B-Instruct-v0.1", "meta-llama/Llama-3.1-8B-Instruct")
    deployments, hardware = one.split("hardware:\n")
    other = deployments.split("  - name: chat\n")[1].replace("    parallelism: {tp: 1, pp: 2}\n", "")
    path.write_text(f"{deployments}  - name: other\n{other}hardware:\n{hardware}".replace("h100-sxm5-80gb", "h200-sxm-141gb"))
    plan = plan_file(str(path))[1]
    assert (plan.deployments[0].tp, plan.deployments[0].pp) == (1, 2)
    assert plan.totals["nodes"] == 1
    assert any(r.startswith("co-located with other") for r in plan.deployments[0].reasons)
