"""A DeepSpeed training job's ``training/<job>/ds_config.json`` carries what its plan sized (newuser76 item 14)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from generator.api import render_file
from generator.planner.plan import DeploymentPlan
from generator.render.deepspeed_config import DEEPSPEED_DEFAULT_BUCKET_ELEMENTS, runs_deepspeed
from tests.helpers import call_cli

#: Two consumer GPUs on an owned desktop; the training block is each test's.
WORKLOAD = """version: 1
name: home-ft
deployments:
  - name: sft
    model: Qwen/Qwen3-8B
    training:
{training}
hardware:
  provider: baremetal
  buy: false
  inventory:
    - platform: am5-desktop-tower
      gpu: rtx-4090-24gb
      gpus_per_server: 2
      count: 1
outputs: [ansible]
"""
ZERO3_OFFLOAD = """      method: full
      framework: deepspeed
      zero_stage: 3
      offload_optimizer: true
      sequence_length: 4096
      global_batch_size: 32
      dataset_tokens: 20000000"""
ZERO2_LORA = """      method: lora
      framework: trl
      zero_stage: 2
      sequence_length: 2048
      global_batch_size: 32
      dataset_tokens: 20000000"""
CONFIG = "training/sft/ds_config.json"
GROUP_VARS = "ansible/group_vars/sft_rtx_4090_24gb.yml"

#: The keys of DeepSpeed's config reference (https://www.deepspeed.ai/docs/config-json/): "Batch Size Related
#: Parameters", "BFLOAT16 training options", "FP16 training options", "ZeRO Optimizations for FP16 Training",
#: "Optimizer offloading". The ``deepspeed`` package itself is not installed to validate against (it builds against
#: PyTorch); these are the names its ``DeepSpeedConfig`` / ``DeepSpeedZeroConfig`` read.
DOCUMENTED_TOP = {
    "train_batch_size",
    "train_micro_batch_size_per_gpu",
    "gradient_accumulation_steps",
    "bf16",
    "fp16",
    "optimizer",
    "zero_optimization",
}
DOCUMENTED_ZERO = {
    "stage",
    "allgather_bucket_size",
    "reduce_bucket_size",
    "stage3_prefetch_bucket_size",
    "offload_optimizer",
    "offload_param",
}
DOCUMENTED_OFFLOAD = {"device", "pin_memory"}


def _render(tmp_path: Path, training: str) -> tuple[dict[str, str], dict[str, Any]]:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(training=training), "utf-8")
    files = render_file(str(path))
    (deployment,) = json.loads(files["spec.json"])["plan"]["deployments"]
    return files, deployment


def _documented(config: dict[str, Any]) -> None:
    assert set(config) <= DOCUMENTED_TOP
    assert [set(config[half]) for half in ("bf16", "fp16") if half in config] == [{"enabled"}]
    assert set(config.get("optimizer", {})) <= {"type", "params"}
    zero = config["zero_optimization"]
    assert set(zero) <= DOCUMENTED_ZERO
    for key in ("offload_optimizer", "offload_param"):
        assert set(zero.get(key, {})) <= DOCUMENTED_OFFLOAD


def test_a_zero3_offload_job_gets_the_config_its_plan_sized(tmp_path: Path) -> None:
    files, d = _render(tmp_path, ZERO3_OFFLOAD)
    details = d["details"]
    config = json.loads(files[CONFIG])
    assert (details["zero_stage"], details["offload_optimizer"], details["offload_params"]) == (3, True, False)
    assert details["optimizer"] == "adamw"
    assert config == {
        "bf16": {"enabled": True},
        "gradient_accumulation_steps": details["gradient_accumulation_steps"],
        "train_batch_size": details["global_batch_size"],
        "train_micro_batch_size_per_gpu": details["micro_batch_size"],
        # DeepSpeed's CPU Adam, which ZeRO-Offload requires and the CPU optimizer step is timed as
        "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto", "weight_decay": "auto"}},
        "zero_optimization": {
            "stage": 3,
            "offload_optimizer": {"device": "cpu", "pin_memory": True},
            # the Trainer's h^2 and 0.9 h^2, the buckets ZeRO-3's collectives are timed with
            "reduce_bucket_size": "auto",
            "stage3_prefetch_bucket_size": "auto",
        },
    }
    assert (
        details["global_batch_size"]
        == details["micro_batch_size"] * details["gradient_accumulation_steps"] * details["data_parallel"]
    )
    # the gradient row the offload's bucket bounds: never more than DeepSpeed's default bucket of bf16 gradients
    assert d["memory_per_gpu"]["gradients"] <= DEEPSPEED_DEFAULT_BUCKET_ELEMENTS * 2
    _documented(config)
    # deterministic bytes: sorted keys, two-space indent, a newline at the end
    assert files[CONFIG] == json.dumps(config, indent=2, sort_keys=True) + "\n"
    assert f"deepspeed_config: !unsafe '{CONFIG}'" in files[GROUP_VARS]
    assert f"- DeepSpeed config: `{CONFIG}`" in files["SPEC.md"]


def test_a_zero2_job_gets_deepspeeds_default_buckets_written_out(tmp_path: Path) -> None:
    files, d = _render(tmp_path, ZERO2_LORA)
    details = d["details"]
    config = json.loads(files[CONFIG])
    assert (details["zero_stage"], details["offload_optimizer"]) == (2, False)
    assert config == {
        "bf16": {"enabled": True},
        "gradient_accumulation_steps": details["gradient_accumulation_steps"],
        "train_batch_size": details["global_batch_size"],
        "train_micro_batch_size_per_gpu": details["micro_batch_size"],
        "zero_optimization": {"stage": 2, "allgather_bucket_size": 500_000_000, "reduce_bucket_size": 500_000_000},
    }
    _documented(config)


def _job(framework: str | None, zero: int = 0, offload: bool = False, kind: str = "training") -> DeploymentPlan:
    details = {"framework": framework, "zero_stage": zero, "offload_optimizer": offload, "offload_params": False}
    return cast(DeploymentPlan, SimpleNamespace(kind=kind, details=details, name="job"))


@pytest.mark.parametrize(
    ("job", "runs"),
    [
        (_job("deepspeed"), True),  # DeepSpeed's engine at ZeRO-0 still reads its config
        (_job("hf", zero=3), True),
        (_job("axolotl", zero=2), True),
        (_job("llama-factory", offload=True), True),  # ZeRO-Offload is DeepSpeed's
        (_job("hf"), False),  # the Trainer at ZeRO-0 runs PyTorch DDP
        (_job("torchtune", zero=3), False),  # FSDP2
        (_job("fsdp2", zero=3), False),
        (_job("megatron", zero=1), False),  # its own distributed optimizer
        (_job(None, zero=3), False),  # no framework: the engine is the user's choice
        (_job("deepspeed", kind="inference"), False),
    ],
)
def test_which_jobs_get_a_deepspeed_config(job: DeploymentPlan, runs: bool) -> None:
    assert runs_deepspeed(job) is runs


#: A DeepSpeed job on T4s (compute capability 7.5, no bf16), full or on a 4-bit base; the training block is each case's.
T4_WORKLOAD = """version: 1
name: ds-t4
deployments:
  - name: sft
    model: meta-llama/Llama-3.2-1B
    training:
      method: {method}
      framework: {framework}
      zero_stage: 2
      sequence_length: 2048
      global_batch_size: 16
      dataset_tokens: 2000000
      epochs: 1
hardware:
  provider: aws
  gpus: [{gpu}]
"""


@pytest.mark.parametrize(
    ("method", "framework", "gpu", "half"),
    [
        ("full", "deepspeed", "t4-16gb", "fp16"),
        ("qlora", "trl", "t4-16gb", "fp16"),  # the base is nf4, the compute the GPU's half precision
        ("full", "deepspeed", "l4-24gb", "bf16"),
    ],
)
def test_the_config_computes_in_the_half_precision_the_plan_sized(
    tmp_path: Path, method: str, framework: str, gpu: str, half: str
) -> None:
    """review77 item 1: ``bf16.enabled: true`` on a T4 whose plan says fp16 (the Trainer, told fp16=True, refuses it)."""
    path = tmp_path / "w.yaml"
    path.write_text(T4_WORKLOAD.format(method=method, framework=framework, gpu=gpu), "utf-8")
    files = render_file(str(path))
    config = json.loads(files[CONFIG])
    (d,) = json.loads(files["spec.json"])["plan"]["deployments"]
    assert config[half] == {"enabled": True}
    assert ({"bf16", "fp16"} - {half}).isdisjoint(config)  # the other one not written
    if method == "full":
        assert d["precision"] == half  # the plan's own word, as the group vars print it
    _documented(config)


# ---------------------------------------------------------------- fix115 item 3: --target writes the file it names


def _tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` but the manifest, by relative path."""
    return {
        p.relative_to(root).as_posix(): p.read_text("utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != ".specgen-manifest"
    }


def _workload(tmp_path: Path, outputs: str) -> Path:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(training=ZERO3_OFFLOAD).replace("outputs: [ansible]", f"outputs: {outputs}"), "utf-8")
    return path


@pytest.mark.parametrize(("target", "own"), [("ansible", "ansible/group_vars/"), ("markdown", "SPEC.md")])
def test_a_target_that_names_the_ds_config_writes_it(tmp_path: Path, target: str, own: str) -> None:
    """``--target ansible`` wrote group vars naming ``training/sft/ds_config.json`` (``deepspeed_config``) without the
    file, which the full render alone wrote; SPEC.md (``--target markdown``) names it too. Each writes it now, the
    full render's bytes."""
    path = _workload(tmp_path, "[ansible, terraform]")
    assert call_cli(tmp_path, ("render", str(path), "-o", "full")) == 0
    assert call_cli(tmp_path, ("render", str(path), "-o", "one", "--target", target)) == 0
    full, one = _tree(tmp_path / "full"), _tree(tmp_path / "one")
    assert "training/sft/ds_config.json" in one and any(rel.startswith(own) for rel in one)
    assert one["training/sft/ds_config.json"] == full["training/sft/ds_config.json"]
    assert not any(rel.startswith(("terraform/", "spec.json")) for rel in one)
    named = "training/sft/ds_config.json"
    assert any(named in text for rel, text in one.items() if rel.startswith(own))  # the file it names is there
    assert "training/sft/ds_config.json" in (tmp_path / "one" / ".specgen-manifest").read_text("utf-8")  # owned


def test_another_target_neither_writes_nor_removes_it(tmp_path: Path) -> None:
    """``--target terraform`` names no ds_config: it leaves the one on disk as it is (another output's, kept)."""
    path = _workload(tmp_path, "[ansible, terraform]")
    assert call_cli(tmp_path, ("render", str(path), "-o", "out", "--target", "terraform")) == 0
    assert not (tmp_path / "out" / "training").exists()
    assert call_cli(tmp_path, ("render", str(path), "-o", "out")) == 0
    assert call_cli(tmp_path, ("render", str(path), "-o", "out", "--target", "terraform")) == 0
    assert (tmp_path / "out" / "training" / "sft" / "ds_config.json").is_file()


def test_a_target_of_no_output_of_its_own_is_still_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The ds_config alone is no Ansible output: a workload without ``ansible`` in its outputs is refused as before."""
    path = _workload(tmp_path, "[terraform]")
    assert call_cli(tmp_path, ("render", str(path), "-o", "out", "--target", "ansible")) != 0
    assert "--target ansible: this plan renders no ansible output" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
