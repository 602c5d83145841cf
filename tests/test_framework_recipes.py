"""A framework's recipe defaults (newuser25 item 3) and the "does NOT fit" advice naming only what is off (item 11).

torchtune's single-device full fine-tune (``recipes/configs/llama3_1/8B_full_single_device.yaml``) trains with
bitsandbytes' PagedAdamW8bit and ``optimizer_in_bwd: True``; its distributed recipe keeps AdamW over FSDP. The README
publishes 18.9 GiB for Llama 3.1 8B full on one RTX 4090 (the calibration row below); with one profile for both recipes
the estimate said 61.92 GiB, does NOT fit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.calculator.estimate import EstimateRequest, estimate
from generator.catalog import find_model
from generator.errors import InputError, SpecgenError
from generator.sizing.architecture import parse_architecture
from generator.sizing.constants import Constants
from generator.sizing.frameworks import AXOLOTL_FULL, TORCHTUNE_SINGLE_DEVICE_FULL, job_recipe
from generator.sizing.training import TrainingSetup, size_training
from generator.sizing.weights import Parallelism
from generator.units import GB, GIB
from tests.helpers import run_estimate

CALIBRATION = json.loads((Path(__file__).parent / "data" / "calibration.json").read_text())

#: The torchtune README row: Llama 3.1 8B full fine-tune on one RTX 4090, 18.9 GiB.
README_4090_FULL = next(
    r
    for r in CALIBRATION["training_memory"]
    if (r.get("framework"), r["model"], r["method"], r["gpus"], r["gpu"])
    == ("torchtune", "meta-llama/Llama-3.1-8B", "full", 1, "rtx-4090-24gb")
)

#: The row's job with nothing but the framework given: what its defaults must make of it.
DEFAULTS = EstimateRequest(
    model="meta-llama/Llama-3.1-8B",
    train="full",
    framework="torchtune",
    gpu="rtx-4090-24gb",
    seq_len=README_4090_FULL["seq_len"],
    micro_batch=README_4090_FULL["micro_batch"],
)


@pytest.mark.parametrize(
    ("framework", "method", "gpus", "recipe"),
    [
        ("torchtune", "full", 1, TORCHTUNE_SINGLE_DEVICE_FULL),
        ("torchtune", "full", 2, None),  # full_finetune_distributed: the profile's AdamW over FSDP
        ("torchtune", "lora", 1, None),  # lora_finetune_single_device: torch AdamW, no optimizer in backward
        ("torchtune", "qlora", 1, None),
        ("hf", "full", 1, None),
        ("fsdp2", "full", 1, None),
        (None, "full", 1, None),
        ("axolotl", "full", 1, AXOLOTL_FULL),  # its bf16 model, at any GPU count (newuser60 item 3)
        ("axolotl+liger", "full", 8, AXOLOTL_FULL),
        ("axolotl", "lora", 1, None),  # PEFT's fp32 adapters over the bf16 base: the profile's AdamW
    ],
)
def test_the_recipe_follows_the_framework_method_and_gpus(framework: str | None, method: str, gpus: int, recipe: Any) -> None:
    assert job_recipe(framework, method, gpus) == recipe


def test_torchtune_single_gpu_full_takes_its_recipe_defaults_and_fits_as_published() -> None:
    result = estimate(DEFAULTS)
    job = result["training"]
    assert (job["recipe"], job["optimizer"], job["optimizer_in_backward"], job["paged_optimizer"]) == (
        "full_finetune_single_device",
        "adamw-8bit-bf16",
        True,
        True,
    )
    assert job["offload_optimizer"] is False  # paged, not ZeRO-Offload: the gradients stay on the GPU
    total = result["memory"]["per_gpu"]["total"]
    # 19.64 GiB against the README's 18.9 GiB (was 61.92 GiB with AdamW bf16 states and whole gradients)
    assert total == pytest.approx(README_4090_FULL["measured_gb"] * GB, rel=0.15)
    assert result["capacity"]["fits"]
    # the paged 8-bit states (2 B a parameter) are in host RAM
    assert result["memory"]["per_gpu"]["optimizer"] == 0
    assert job["host_ram_bytes_per_gpu"] == pytest.approx(result["params"]["trainable"] * 2, rel=0.001)


def test_the_defaults_size_the_job_as_the_calibration_row_states_it() -> None:
    """The row names PagedAdamW8bit as host-offloaded 8-bit states with the step in backward: the defaults equal it."""
    row = README_4090_FULL
    stated = {key: row[key] for key in ("optimizer", "optimizer_in_backward", "offload_optimizer")}
    explicit = estimate(DEFAULTS._replace(**stated))
    assert estimate(DEFAULTS)["memory"]["per_gpu"]["total"] == explicit["memory"]["per_gpu"]["total"]


@pytest.mark.parametrize(
    ("override", "optimizer", "in_backward", "paged", "zero"),
    [
        # a regime given by name is not paged (torch AdamW, or bitsandbytes' AdamW8bit)
        ({"optimizer": "adamw-bf16"}, "adamw-bf16", True, False, 0),
        ({"optimizer": "adamw-8bit-bf16"}, "adamw-8bit-bf16", True, False, 0),
        ({"optimizer_in_backward": False}, "adamw-8bit-bf16", False, True, 0),
        # optimizer in backward takes no accumulation: the recipe's default gives way (a note says so)
        ({"accumulation": 4}, "adamw-8bit-bf16", False, True, 0),
        # ZeRO-Offload asked: the states are offloaded, not paged
        ({"offload_optimizer": True}, "adamw-8bit-bf16", True, False, 0),
        # two GPUs run full_finetune_distributed: AdamW bf16 over FSDP2, as before
        ({"gpus": 2, "gpu": "h100-sxm5-80gb"}, "adamw-bf16", False, False, 3),
    ],
)
def test_each_recipe_default_is_overridden_by_its_own_setting(
    override: dict[str, Any], optimizer: str, in_backward: bool, paged: bool, zero: int
) -> None:
    job = estimate(DEFAULTS._replace(**override))["training"]
    assert (job["optimizer"], job["optimizer_in_backward"], job["paged_optimizer"], job["zero_stage"]) == (
        optimizer,
        in_backward,
        paged,
        zero,
    )


def test_accumulating_says_why_the_recipe_steps_after_backward() -> None:
    notes = estimate(DEFAULTS._replace(accumulation=4))["notes"]
    assert any("optimizer_in_bwd: True), which takes no gradient accumulation: with 4 accumulation steps" in n for n in notes)


def test_the_text_names_the_recipe_and_no_optimizer_in_backward_turns_it_off() -> None:
    args = ["meta-llama/Llama-3.1-8B", "--train", "full", "--framework", "torchtune", "--gpu", "rtx-4090-24gb"]
    args += ["--seq-len", "2048", "--micro-batch", "2"]
    code, text = run_estimate(*args)
    assert code == 0
    assert (
        "training     full, adamw-8bit-bf16 (paged to host RAM), ZeRO-0, loss chunked, optimizer stepped in backward, "
        "checkpointing full (torchtune's full_finetune_single_device recipe defaults where not given)" in text
    )
    # newuser76 item 3: the paged states that do not all fit are timed in the step, no longer "not counted"
    assert "not counted: the paged optimizer states' PCIe copies" not in text and "paged optimizer states " in text
    _, off = run_estimate(*args, "--no-optimizer-in-backward", "--json")
    assert json.loads(off)["training"]["optimizer_in_backward"] is False


def test_optimizer_in_backward_is_said_off_the_recipe_and_refused_for_torchtune_lora(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """fuzz23 item 8: with --gpus 2 the memory counted the in-backward step but the training line did not say it; for
    LoRA, whose torchtune recipes have no optimizer_in_bwd, the flag was taken and changed nothing."""
    args = ["meta-llama/Llama-3.1-8B", "--framework", "torchtune", "--gpu", "h100-sxm5-80gb", "--optimizer-in-backward"]
    code, text = run_estimate(*args, "--train", "full", "--gpus", "2")
    said = ", loss chunked, optimizer stepped in backward, checkpointing full (torchtune's defaults where not given)"
    assert code == 0 and said in text
    code, _ = run_estimate(*args, "--train", "lora")
    assert code != 0 and "its LoRA and QLoRA recipes step the adapters' optimizer after backward" in capsys.readouterr().err


def test_paged_states_leave_the_gradients_on_the_gpu() -> None:
    """Paged: the optimizer steps on the GPU, so its gradients stay there (ZeRO-Offload moves them to the host)."""
    arch = parse_architecture(find_model("meta-llama/Llama-3.1-8B").config)
    setup = TrainingSetup(method="full", optimizer="adamw-8bit-bf16", framework="torchtune", optimizer_in_backward=False)
    paged = size_training(arch, setup._replace(paged_optimizer=True), Parallelism(), Constants(), nvlink=False)
    resident = size_training(arch, setup, Parallelism(), Constants(), nvlink=False)
    params = arch.params_total
    assert paged.per_gpu.gradients == resident.per_gpu.gradients == params * 2
    assert (paged.per_gpu.optimizer, resident.per_gpu.optimizer) == (0, params * 2)
    assert paged.host_ram_bytes_per_gpu - resident.host_ram_bytes_per_gpu == params * 2  # the 8-bit states, no fp32 grads


WORKLOAD = """\
version: 1
name: tune
deployments:
  - name: full8
    model: meta-llama/Llama-3.1-8B
    training:
      method: full
      framework: torchtune
      sequence_length: 2048
      micro_batch_size: 2
      dataset_tokens: 10000000
{extra}hardware:
  gpus: [{gpu}]
  provider: baremetal
"""


def _plan(tmp_path: Path, extra: str = "", gpu: str = "rtx-4090-24gb") -> Any:
    from generator.planner import plan_workload
    from generator.workload import load_workload

    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(extra=extra, gpu=gpu))
    return plan_workload(load_workload(str(path)))


def test_a_workload_on_one_gpu_plans_the_single_device_recipe(tmp_path: Path) -> None:
    """It had no feasible plan on 4090s (more towers and Ethernet would be needed); the recipe fits one GPU."""
    (deployment,) = _plan(tmp_path).deployments
    details = deployment.details
    assert (details["world_size"], details["optimizer"], details["optimizer_in_backward"], details["paged_optimizer"]) == (
        1,
        "adamw-8bit-bf16",
        True,
        True,
    )
    assert deployment.memory_per_gpu["total"] < 24 * GIB * 0.95
    assert any("full_finetune_single_device recipe: bitsandbytes.optim.PagedAdamW8bit" in r for r in deployment.reasons)


@pytest.mark.parametrize(
    ("fields", "optimizer", "in_backward", "paged"),
    [
        ({}, "adamw-8bit-bf16", True, True),
        ({"optimizer_in_backward": False}, "adamw-8bit-bf16", False, True),
        ({"optimizer": "adamw-bf16"}, "adamw-bf16", True, False),
        ({"offload_optimizer": True}, "adamw-8bit-bf16", True, False),
    ],
)
def test_a_workload_field_overrides_the_recipe_default(
    fields: dict[str, Any], optimizer: str, in_backward: bool, paged: bool
) -> None:
    from generator.planner.training import _setup
    from generator.workload.models import TrainingSpec

    spec = TrainingSpec(method="full", framework="torchtune", micro_batch_size=2, **fields)
    arch = parse_architecture(find_model("meta-llama/Llama-3.1-8B").config)
    setup = _setup(arch, spec, zero=3, dp=1, par=Parallelism())
    assert (setup.optimizer, setup.techniques()[2], setup.paged_optimizer) == (optimizer, in_backward, paged)
    # on two GPUs (DP or TP) the distributed recipe's: the profile's AdamW bf16, stepped after backward, not paged
    for dp, par in ((2, Parallelism()), (1, Parallelism(tp=2))):
        distributed = _setup(arch, spec._replace(**{"optimizer_in_backward": None, **fields}), zero=3, dp=dp, par=par)
        assert not distributed.paged_optimizer
        assert distributed.optimizer == fields.get("optimizer", "adamw-bf16")


# --- newuser25 item 11: the advice names only what is off, and what is on -----------------------------------------


def _note(*args: str) -> str:
    base = ["meta-llama/Llama-3.1-8B", "--gpu", "rtx-4090-24gb", "--seq-len", "2048", "--micro-batch", "2"]
    _, text = run_estimate(*base, *args, "--json")
    notes: list[str] = json.loads(text)["notes"]
    (note,) = [n for n in notes if "fits" in n and ("--micro-batch" in n or "micro-batch below" in n)]
    return note


@pytest.mark.parametrize(
    ("args", "offered", "not_offered", "on"),
    [
        # the report's reproducer: full checkpointing is the default and in effect
        (
            ("--train", "lora", "--framework", "hf", "--accumulation", "8"),
            ["--loss chunked or --activation-offload shrink the activations"],
            ["--gradient-checkpointing full"],
            "already on: full gradient checkpointing",
        ),
        # Unsloth offloads and chunks its loss by default (a full fine-tune goes through FastModel): no activation lever
        (
            ("--train", "full", "--framework", "unsloth"),
            ["--offload-optimizer"],
            ["--activation-offload", "--loss", "--gradient-checkpointing", "--optimizer adamw-8bit"],
            "already on: full gradient checkpointing, the chunked loss, activation offload, the 8-bit optimizer adamw-8bit",
        ),
        # nothing on: every lever, the optimizer in backward and an 8-bit optimizer among them
        (
            ("--train", "full", "--gradient-checkpointing", "none"),
            [
                "--gradient-checkpointing full, --loss chunked or --activation-offload shrink the activations",
                "shrink the model states (--optimizer-in-backward or --optimizer adamw-8bit)",
            ],
            ["already on"],
            None,
        ),
        # Megatron-LM has neither an optimizer in backward nor an 8-bit optimizer
        (
            ("--train", "full", "--framework", "megatron"),
            ["--offload-optimizer, --offload-params"],
            ["--optimizer-in-backward", "8bit"],
            "already on: full gradient checkpointing",
        ),
        # FSDP2's op-level selective checkpointing is a lever of its own (review40 item 11), before full
        (
            ("--train", "full", "--framework", "fsdp2", "--gradient-checkpointing", "none"),
            ["--gradient-checkpointing selective, --gradient-checkpointing full, --loss chunked"],
            ["already on"],
            None,
        ),
        # torchtune's recipe accumulating: its paged 8-bit states on, the step in backward offered with one micro-batch
        (
            ("--train", "full", "--framework", "torchtune", "--accumulation", "4"),
            ["--optimizer-in-backward with --accumulation 1", "offload them (--offload-params)"],
            ["--offload-optimizer", "--loss chunked"],
            "already on: full gradient checkpointing, the chunked loss, the 8-bit optimizer adamw-8bit-bf16, paged optimizer "
            "states",
        ),
    ],
)
def test_the_advice_offers_only_what_is_off(
    args: tuple[str, ...], offered: list[str], not_offered: list[str], on: str | None
) -> None:
    note = _note(*args)
    for text in offered:
        assert text in note
    for text in not_offered:
        assert text not in note
    if on is not None:
        assert note.endswith(on)


#: axolotl's examples/llama-3/fft-8b.yaml, listed "Single GPU @ 48GB" (the calibration row).
AXOLOTL_FFT_8B = next(r for r in CALIBRATION["training_memory"] if r.get("framework") == "axolotl")
AXOLOTL_JOB = EstimateRequest(
    model=AXOLOTL_FFT_8B["model"],
    train="full",
    framework="axolotl",
    gpu="a100-sxm4-80gb",
    seq_len=AXOLOTL_FFT_8B["seq_len"],
    micro_batch=AXOLOTL_FFT_8B["micro_batch"],
    accumulation=AXOLOTL_FFT_8B["accumulation_steps"],
    checkpointing="full",
)


def test_axolotl_through_deepspeed_zero_keeps_the_fp32_master_copy() -> None:
    """review40 item 1: a 70B at ZeRO-3 over 16 H100 was sized 44.3 GiB, "fits", as the bf16 model; DeepSpeed steps an
    fp32 copy of each partition (77.1 GiB under the deepspeed profile)."""
    assert job_recipe("axolotl", "full", 16, 3) is None and job_recipe("axolotl", "full", 16, 0) is AXOLOTL_FULL
    request = EstimateRequest(
        model="meta-llama/Llama-3.1-70B-Instruct", train="full", gpu="h100-sxm5-80gb", gpus=16, zero_stage=3
    )
    axolotl, deepspeed = (estimate(request._replace(framework=f)) for f in ("axolotl", "deepspeed"))
    assert axolotl["training"]["optimizer"] == "adamw"
    assert axolotl["memory"]["per_gpu"]["optimizer"] == deepspeed["memory"]["per_gpu"]["optimizer"]
    assert not axolotl["capacity"]["fits"]


def test_axolotls_bf16_model_refuses_a_regime_with_a_master_copy(tmp_path: Path) -> None:
    """review40 item 7: optimizer adamw-8bit under axolotl's full fine-tune was sized with an fp32 copy it never has."""
    with pytest.raises(InputError, match="no fp32 master copy: give one of adamw-bf16, adamw-8bit-bf16"):
        estimate(AXOLOTL_JOB._replace(optimizer="adamw-8bit"))
    from generator.workload import load_workload

    text = WORKLOAD.format(extra="", gpu="h100-sxm5-80gb").replace("framework: torchtune", "framework: axolotl")
    path = tmp_path / "w.yaml"
    path.write_text(text.replace("micro_batch_size: 2", "micro_batch_size: 2\n      optimizer: adamw-8bit"))
    with pytest.raises(SpecgenError, match=r"optimizer.*no fp32 master copy"):
        load_workload(str(path))


def test_an_axolotl_full_fine_tune_trains_its_bf16_model_without_an_fp32_master_copy() -> None:
    """newuser60 item 3: sized as fp32-master AMP, 16 bytes a parameter (92.7 GiB for fft-8b.yaml with 8-bit AdamW)."""
    result = estimate(AXOLOTL_JOB)
    params = result["params"]["trainable"]
    per_gpu = result["memory"]["per_gpu"]
    assert (result["training"]["recipe"], result["training"]["optimizer"]) == ("bf16 full fine-tune", "adamw-bf16")
    assert (per_gpu["gradients"], per_gpu["optimizer"]) == (2 * params, 4 * params)  # bf16 gradients, bf16 moments
    assert "no fp32 master copy" in result["precision"]["training"]


def test_paged_adamw_8bit_puts_the_states_in_host_ram_and_fits_axolotls_48gb() -> None:
    """axolotl names paged_adamw_8bit: its 8-bit states (2 bytes a parameter) paged to host RAM. The README's 48GB card:
    51.35 GB against 51.54 (67.4 GB with the states on the GPU, 99.5 GB as fp32-master AMP before)."""
    paged = estimate(AXOLOTL_JOB._replace(optimizer="adamw-8bit-bf16", paged_optimizer=True))
    on_gpu = estimate(AXOLOTL_JOB._replace(optimizer="adamw-8bit-bf16"))
    params = paged["params"]["trainable"]
    assert paged["memory"]["per_gpu"]["optimizer"] == 0 and on_gpu["memory"]["per_gpu"]["optimizer"] == 2 * params
    assert paged["training"]["host_ram_bytes_per_gpu"] == 2 * params
    adamw = estimate(AXOLOTL_JOB._replace(framework="hf", optimizer="adamw-torch-amp", paged_optimizer=True))
    assert adamw["memory"]["per_gpu"]["optimizer"] == 0  # fp32 moments: bitsandbytes' PagedAdamW32bit (review40 item 9)
    assert paged["memory"]["per_gpu"]["total"] / GB == pytest.approx(AXOLOTL_FFT_8B["measured_gb"], rel=0.05)


@pytest.mark.parametrize(
    ("override", "refusal"),
    [
        ({"offload_optimizer": True, "zero_stage": 2, "gpus": 2}, "two mechanisms"),
        ({"framework": "hf", "optimizer": "sgd"}, "bitsandbytes pages AdamW's states"),
        ({"framework": "megatron", "optimizer": "adamw"}, "distributed optimizer"),
        # review40 item 5: FSDP's CPU offload steps the optimizer on the CPU
        ({"framework": "fsdp2", "optimizer": "adamw", "gpus": 2, "offload_params": True}, "FSDP's CPU offload"),
    ],
)
def test_a_paged_optimizer_is_refused_where_no_stack_runs_one(override: dict[str, Any], refusal: str) -> None:
    with pytest.raises(InputError, match=refusal):
        estimate(AXOLOTL_JOB._replace(paged_optimizer=True, **override))


def test_the_workload_field_is_refused_at_its_line_with_an_offloaded_optimizer(tmp_path: Path) -> None:
    from generator.workload import load_workload

    fields = "micro_batch_size: 2\n      zero_stage: 3\n      offload_optimizer: true\n      paged_optimizer: true"
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(extra="", gpu="h100-sxm5-80gb").replace("micro_batch_size: 2", fields))
    with pytest.raises(SpecgenError, match=r"paged_optimizer.*two mechanisms"):
        load_workload(str(path))
