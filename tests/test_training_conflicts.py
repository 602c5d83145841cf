"""Training settings that contradict each other are refused at their field, not sized as something else (newuser17 M3).

The estimate exits 2 naming the flag; a workload exits 1 with ``file:line:col: field: message``; the sizing core
refuses the same pairs for callers of the library.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.calculator.model_source import resolve_model
from generator.errors import InputError
from generator.sizing.constants import Constants
from generator.sizing.frameworks import resolved_regime
from generator.sizing.training import TrainingSetup, size_training
from generator.sizing.weights import Parallelism
from tests.helpers import call_cli, run_estimate

TRAINING = """\
version: 1
name: tune
deployments:
  - name: tune
    model: meta-llama/Llama-3.1-8B-Instruct
    training:
      method: {method}
      dataset_tokens: 100000000
{extra}hardware:
  provider: aws
"""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--train", "qlora", "--precision", "bf16"), "--precision: QLoRA trains adapters over a base quantized to 4 or 8"),
        (("--train", "qlora", "--precision", "fp16"), "over a fp16 base it is LoRA"),
        (("--train", "full", "--framework", "torchtune", "--zero", "0", "--gpus", "8"), "--zero: torchtune shards"),
        (("--train", "lora", "--framework", "fsdp2", "--zero", "1", "--gpus", "4"), "it has no ZeRO-1 path"),
        (("--train", "full", "--framework", "fsdp", "--zero", "0", "--gpus", "2", "--offload-optimizer"), "--zero: fsdp"),
        # data parallel from --ep as the estimate counts it (review 13 item 5)
        (("--train", "full", "--framework", "torchtune", "--zero", "1", "--ep", "2", "--model", "x"), "--zero: torchtune"),
        (
            ("--train", "full", "--framework", "hf", "--zero", "2", "--offload-optimizer", "--optimizer", "adamw-8bit"),
            "--optimizer: hf offloads the optimizer through DeepSpeed's ZeRO-Offload",
        ),
    ],
    ids=[
        "qlora-bf16",
        "qlora-fp16",
        "torchtune-zero0",
        "fsdp2-zero1",
        "fsdp-alias-zero0",
        "ep-without-gpus",
        "zero-offload-8bit",
    ],
)
def test_the_estimate_refuses_a_contradiction_at_its_flag(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    model = "llama-3.1-8b"
    if "--model" in args:  # expert parallelism needs an MoE model
        model, args = "Qwen/Qwen3-30B-A3B", args[: args.index("--model")]
    with pytest.raises(SystemExit) as done:
        run_estimate(model, *args)
    assert done.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "args",
    [
        ("--train", "qlora", "--precision", "int8"),  # 8-bit QLoRA (bitsandbytes load_in_8bit)
        ("--train", "qlora"),  # nf4
        ("--train", "full", "--framework", "torchtune", "--zero", "0"),  # one GPU: its single-device recipe
        ("--train", "full", "--framework", "torchtune", "--zero", "2", "--gpus", "8"),  # reshard_after_forward off
        ("--train", "full", "--framework", "torchtune", "--gpus", "8"),  # its default, full shard
        # a paged 8-bit optimizer at ZeRO-0 (torchtune's single-device full recipe): states in host RAM
        ("--train", "full", "--framework", "torchtune", "--optimizer", "adamw-8bit-bf16", "--offload-optimizer"),
        # ZeRO-Offload's own regime: DeepSpeed's CPU Adam (review77 item 11)
        ("--train", "full", "--framework", "deepspeed", "--zero", "2", "--optimizer", "adamw", "--offload-optimizer"),
    ],
    ids=["qlora-int8", "qlora-nf4", "torchtune-one-gpu", "torchtune-zero2", "torchtune-default", "paged-8bit", "zero-offload"],
)
def test_settings_that_agree_are_sized(capsys: pytest.CaptureFixture[str], args: tuple[str, ...]) -> None:
    code, out = run_estimate("llama-3.1-8b", *args)
    assert code == 0, capsys.readouterr().err
    assert "total" in out


@pytest.mark.parametrize(
    ("method", "extra", "where"),
    [
        ("full", "      lora_rank: 64\n", "9:18: deployments[0].training.lora_rank: lora_rank applies to method lora or qlora"),
        ("full", "      lora_dropout: 0.1\n", "9:21: deployments[0].training.lora_dropout: lora_dropout applies to method"),
        (
            "full",
            "      lora_target_modules: [q_proj]\n",
            "9:28: deployments[0].training.lora_target_modules: lora_target_modules applies to method",
        ),
        (
            "lora",
            "      framework: torchtune\n      zero_stage: 0\n",
            "10:19: deployments[0].training.zero_stage: torchtune shards data-parallel ranks with FSDP2",
        ),
        ("full", "      framework: fsdp2\n      zero_stage: 1\n", "10:19: deployments[0].training.zero_stage: fsdp2 shards"),
        # fuzz33 item 8: planned without a finding, whatever GPU count the planner would choose
        (
            "lora",
            "      framework: deepspeed\n      zero_stage: 0\n      offload_optimizer: true\n",
            "11:26: deployments[0].training.offload_optimizer: DeepSpeed's optimizer offload is ZeRO-Offload, which "
            "DeepSpeed runs at ZeRO stage 1, 2 or 3 (offload_optimizer is 'Valid for ZeRO stage 1, 2, 3')",
        ),
        # review77 item 11: sized with 8-bit states in host RAM, rendered with no optimizer block DeepSpeed would run
        (
            "full",
            "      framework: deepspeed\n      zero_stage: 3\n      offload_optimizer: true\n      optimizer: adamw-8bit\n",
            "12:18: deployments[0].training.optimizer: deepspeed offloads the optimizer through DeepSpeed's ZeRO-Offload, "
            "which steps it with DeepSpeed's CPU Adam (fp32 master weights and moments in host RAM: optimizer 'adamw'); "
            "it refuses the 'adamw-8bit' optimizer",
        ),
        (
            "full",
            "      framework: trl\n      zero_stage: 2\n      offload_optimizer: true\n      optimizer: sgd\n",
            "12:18: deployments[0].training.optimizer: trl offloads the optimizer through DeepSpeed's ZeRO-Offload",
        ),
    ],
    ids=[
        "rank-on-full",
        "dropout-on-full",
        "targets-on-full",
        "torchtune-zero0",
        "fsdp2-zero1",
        "deepspeed-zero0-offload",
        "zero-offload-8bit",
        "zero-offload-sgd",
    ],
)
def test_a_workload_is_refused_at_the_field_that_contradicts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], method: str, extra: str, where: str
) -> None:
    (tmp_path / "workload.yaml").write_text(TRAINING.format(method=method, extra=extra))
    assert call_cli(tmp_path, ("validate", "workload.yaml")) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"specgen: error: workload.yaml:{where}")


@pytest.mark.parametrize("gpus", ["1", "2"])
def test_deepspeed_refuses_optimizer_offload_at_zero_0_on_any_gpu_count(capsys: pytest.CaptureFixture[str], gpus: str) -> None:
    """fuzz33 item 8: on one GPU it was sized as offloaded (optimizer 0 GiB on the GPU), on two refused: DeepSpeed's
    offload_optimizer is 'Valid for ZeRO stage 1, 2, 3' (https://www.deepspeed.ai/docs/config-json/) whatever the count."""
    args = ("--train", "full", "--framework", "deepspeed", "--zero", "0", "--offload-optimizer", "--gpu", "h100-sxm5-80gb")
    code, out = run_estimate("llama-3.1-8b", *args, "--seq-len", "2048", "--gpus", gpus)
    assert (code, out) == (1, "")
    assert "at ZeRO stage 1, 2 or 3 (offload_optimizer is 'Valid for ZeRO stage 1, 2, 3')" in capsys.readouterr().err


HF_ZERO_OFFLOAD = (
    "{fw} offloads the optimizer through DeepSpeed's ZeRO-Offload, which DeepSpeed runs at ZeRO stage 1, 2 or 3 "
    "(offload_optimizer is 'Valid for ZeRO stage 1, 2, 3'), on one GPU as on several: give zero_stage 1-3 (--zero 1; "
    "on one GPU it holds the same memory)"
)


@pytest.mark.parametrize(
    ("framework", "zero", "expected"),
    [
        # newuser43 item 7: sized and labelled "ZeRO-0" on one GPU, refused over two; the HF Trainer's offload is DeepSpeed's
        (("--framework", "hf"), (), HF_ZERO_OFFLOAD.format(fw="hf")),
        (("--framework", "hf"), ("--zero", "0"), HF_ZERO_OFFLOAD.format(fw="hf")),
        (("--framework", "trl"), (), HF_ZERO_OFFLOAD.format(fw="trl")),
        ((), ("--zero", "0"), HF_ZERO_OFFLOAD.format(fw="hf")),
        (("--framework", "hf"), ("--zero", "1"), None),  # ZeRO-Offload at stage 1, one GPU
        (("--framework", "torchtune"), (), None),  # torchao's CPUOffloadOptimizer in the single-device recipe
    ],
    ids=["hf-default", "hf-zero0", "trl-default", "none-zero0", "hf-zero1", "torchtune"],
)
def test_optimizer_offload_at_zero_0_on_one_gpu(
    capsys: pytest.CaptureFixture[str], framework: tuple[str, ...], zero: tuple[str, ...], expected: str | None
) -> None:
    args = ("--train", "full", *framework, *zero, "--offload-optimizer", "--gpu", "rtx-4090-24gb", "--seq-len", "2048")
    code, out = run_estimate("llama-3.1-8b", *args)
    err = capsys.readouterr().err
    if expected is None:
        assert code == 0, err
        stage = "ZeRO-1" if zero else "ZeRO-0"
        assert f"  training     full, adamw{'-8bit-bf16' if not zero else ''}, {stage}," in out
        return
    assert (code, out) == (1, "")
    assert err.strip().endswith(f"error: {expected}")


def test_workload_optimizer_offload_at_zero_0_is_refused_at_its_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """newuser43 item 7: the workload agrees with the estimate (zero_stage 0 and offload_optimizer under hf)."""
    extra = "      framework: hf\n      zero_stage: 0\n      offload_optimizer: true\n"
    (tmp_path / "workload.yaml").write_text(TRAINING.format(method="full", extra=extra))
    assert call_cli(tmp_path, ("validate", "workload.yaml")) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    field = "deployments[0].training.offload_optimizer"
    assert line == f"specgen: error: workload.yaml:11:26: {field}: {HF_ZERO_OFFLOAD.format(fw='hf')}"


def test_a_workload_that_agrees_is_valid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    extra = "      framework: torchtune\n      zero_stage: 2\n      lora_rank: 32\n"
    (tmp_path / "workload.yaml").write_text(TRAINING.format(method="lora", extra=extra))
    assert call_cli(tmp_path, ("validate", "workload.yaml")) == 0, capsys.readouterr().err


def test_the_sizing_core_refuses_qlora_over_a_16_bit_base() -> None:
    arch = resolve_model("meta-llama/Llama-3.1-8B-Instruct").architecture
    with pytest.raises(InputError, match="it is LoRA"):
        size_training(arch, TrainingSetup(method="qlora", base_precision="bf16"), Parallelism(), Constants(), nvlink=False)


def test_unsloth_trains_with_8_bit_adamw_unless_told_otherwise() -> None:
    """newuser17 M2: Unsloth's quick start and notebooks pass optim="adamw_8bit"; 32-bit AdamW was assumed."""
    assert resolved_regime("unsloth", None, None, 1) == ("adamw-8bit", 0)
    assert resolved_regime("unsloth", "adamw", None, 1) == ("adamw", 0)
    assert resolved_regime("hf", None, None, 1) == ("adamw", 0)


PINNED = """\
version: 1
name: pins
deployments:
  - name: tune
    model: meta-llama/Llama-3.1-8B
    training: {method: full, dataset_tokens: 1000000000, framework: FRAMEWORK}
    parallelism: PIN
hardware: {gpus: [h100-sxm5-80gb], provider: baremetal}
"""


@pytest.mark.parametrize(
    ("framework", "pin", "where"),
    [
        ("fsdp2", "{pp: 2}", "7:23: deployments[0].parallelism.pp: pp 2: fsdp2 as specgen models it (PyTorch FSDP2"),
        ("hf", "{pp: 2}", "7:23: deployments[0].parallelism.pp: pp 2: hf as specgen models it (Hugging Face Trainer"),
        # DeepSpeed has a pipeline engine; its Trainer integration, which the profile is, runs none (fuzz15 item 7)
        (
            "deepspeed",
            "{pp: 2}",
            "7:23: deployments[0].parallelism.pp: pp 2: deepspeed as specgen models it (DeepSpeed ZeRO through the Hugging "
            "Face Trainer) runs no pipeline schedule",
        ),
        ("unsloth", "{tp: 2}", "7:23: deployments[0].parallelism.tp: tp 2: unsloth scales by data parallelism only"),
    ],
)
def test_a_pin_its_framework_cannot_run_is_refused_at_the_pin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], framework: str, pin: str, where: str
) -> None:
    """fuzz14 item 2: such a pin exited 3 ("no feasible plan", allow more GPU memory) at the model, not 1 at the pin."""
    (tmp_path / "workload.yaml").write_text(PINNED.replace("FRAMEWORK", framework).replace("PIN", pin))
    assert call_cli(tmp_path, ("validate", "workload.yaml")) == 1
    assert capsys.readouterr().err.startswith(f"specgen: error: workload.yaml:{where}")


def test_a_pinned_pipeline_is_planned_where_the_model_also_fits_without_one(tmp_path: Path) -> None:
    """fuzz14 item 1: Megatron with pp: 2 on an 8B model exited 3, as pipeline layouts were tried only where nothing
    fitted without them; a pinned TP no server gives says so, with the hint for pins."""
    from generator.errors import InfeasibleError
    from generator.planner import plan_workload
    from generator.workload import load_workload

    path = tmp_path / "w.yaml"
    path.write_text(PINNED.replace("FRAMEWORK", "megatron").replace("PIN", "{pp: 2}"))
    (dep,) = plan_workload(load_workload(str(path))).deployments
    assert (dep.tp, dep.pp) == (1, 2)
    path.write_text(PINNED.replace("FRAMEWORK", "megatron").replace("PIN", "{tp: 16}"))
    with pytest.raises(InfeasibleError) as refused:
        plan_workload(load_workload(str(path)))
    assert "the pinned TP16 is not a tensor-parallel size of dgx-h100 (1, 2, 4, 8)" in str(refused.value)
    assert "to unblock: pin a TP x PP whose GPUs fit one server" in str(refused.value)


def test_a_lora_target_that_matches_no_layer_is_refused_beside_ones_that_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """fuzz14 item 5: ``v_porj`` beside ``q_proj`` was dropped without a word and the adapters counted q_proj's alone."""
    extra = "      lora_target_modules: [q_proj, v_porj]\n"
    (tmp_path / "workload.yaml").write_text(TRAINING.format(method="lora", extra=extra))
    assert call_cli(tmp_path, ("validate", "workload.yaml")) == 1
    err = capsys.readouterr().err
    assert err.startswith("specgen: error: workload.yaml:9:28: deployments[0].training.lora_target_modules: LoRA target")
    assert "['v_porj'] match no linear layer of this model (its layers: down_proj, embed_tokens, gate_proj, k_proj" in err


def test_a_job_longer_than_a_year_without_a_deadline_is_warned(tmp_path: Path) -> None:
    """fuzz14 item 7: a 454,000-year rented job planned with exit 0 and no word; a deadline plans the GPUs instead."""
    from generator.planner import plan_workload
    from generator.workload import load_workload

    path = tmp_path / "w.yaml"
    text = TRAINING.format(method="lora", extra="").replace("dataset_tokens: 100000000", "dataset_tokens: 100000000000000")
    path.write_text(text)
    plan = plan_workload(load_workload(str(path)))
    (finding,) = [f for f in plan.findings if f.code == "training-longer-than-a-year"]
    hours = plan.deployments[0].details["hours"]
    assert hours > 8760 and finding.message.startswith(f"deployment tune runs {hours:,.0f} h")
    path.write_text(text.replace("dataset_tokens:", "deadline_hours: 87600\n      dataset_tokens:"))
    assert not [f for f in plan_workload(load_workload(str(path))).findings if f.code == "training-longer-than-a-year"]


#: The hint for a job that does not offload its parameters yet (newuser22 item 4).
OFFLOAD = "parameter offload (offload_params: true)"


@pytest.mark.parametrize(
    ("method", "zero", "ways"),
    [
        # no stage set: every stage was tried, ZeRO-3 included (review 14 item 3)
        ("full", "", f"a GPU with more memory, LoRA/QLoRA, {OFFLOAD}, a shorter sequence_length"),
        ("lora", "", f"a GPU with more memory, QLoRA, {OFFLOAD}, a shorter sequence_length"),
        ("lora", "      zero_stage: 2\n", f"a GPU with more memory, ZeRO-3, QLoRA, {OFFLOAD}, a shorter sequence_length"),
        ("lora", "      zero_stage: 3\n", f"a GPU with more memory, QLoRA, {OFFLOAD}, a shorter sequence_length"),
        ("qlora", "      zero_stage: 3\n", f"a GPU with more memory, {OFFLOAD}, a shorter sequence_length"),
        ("qlora", "      offload_params: true\n", "a GPU with more memory, a shorter sequence_length"),
    ],
)
def test_the_unblock_hint_offers_only_what_the_job_does_not_do_yet(tmp_path: Path, method: str, zero: str, ways: str) -> None:
    """fuzz14 item 7: a LoRA job at ZeRO-3 that fitted nowhere was told to try ZeRO-3 or LoRA."""
    from generator.errors import InfeasibleError
    from generator.planner import plan_workload
    from generator.workload import load_workload

    path = tmp_path / "w.yaml"
    text = TRAINING.format(method=method, extra=zero + "      sequence_length: 4000000\n")
    path.write_text(text.replace("provider: aws", "provider: aws\n  gpus: [l4-24gb]"))
    with pytest.raises(InfeasibleError) as refused:
        plan_workload(load_workload(str(path)))
    # on a cloud, whose racks are the provider's, no rack power is offered (newuser43 item 1)
    cloud = ways.replace(", a shorter sequence_length", ", or a shorter sequence_length")
    assert str(refused.value).endswith(f"to unblock: allow {cloud}")
    path.write_text(path.read_text().replace("provider: aws", "provider: baremetal"))
    with pytest.raises(InfeasibleError) as refused:
        plan_workload(load_workload(str(path)))
    assert f"to unblock: allow {ways}, or more rack power / max_nodes" in str(refused.value)


@pytest.mark.parametrize(("framework", "refused"), [("unsloth", True), ("hf", True), ("megatron", False), ("deepspeed", False)])
def test_expert_parallelism_is_sized_only_for_a_framework_that_has_it(framework: str, refused: bool) -> None:
    """fuzz14 item 7: --ep 8 with unsloth was sized as Megatron's expert parallelism, while --tp 2 was refused."""
    from generator.calculator.estimate import EstimateRequest, estimate

    request = EstimateRequest(model="mistralai/Mixtral-8x7B-v0.1", train="lora", framework=framework, ep=8, gpus=8)
    if refused:
        with pytest.raises(InputError, match=f"--ep 8: {framework} keeps every expert on every rank"):
            estimate(request)
    else:
        assert estimate(request)["training"]["expert_parallel"] == 8


def test_lm_head_is_a_lora_target_sized_as_its_matrix() -> None:
    """Review 14 item 8: ``lm_head`` was refused as matching no linear layer; PEFT adapts it when named (its
    all-linear leaves it out). Llama 3.1 8B: rank 16 x (4,096 + 128,256) = 2,117,632 adapter parameters."""
    from generator.catalog import find_model
    from generator.sizing.architecture import parse_architecture
    from generator.sizing.training import lora_params

    arch = parse_architecture(find_model("meta-llama/Llama-3.1-8B-Instruct").config)
    with_head = lora_params(arch, 16, ("q_proj", "lm_head"))
    assert with_head - lora_params(arch, 16, ("q_proj",)) == 16 * (4096 + 128_256) == 2_117_632
    every = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
    assert lora_params(arch, 16, ("all-linear",)) == lora_params(arch, 16, every)  # no head in it


@pytest.mark.parametrize(
    ("model", "targets", "params"),
    [
        # Mixtral's experts are w1 / w3 / w2 in Transformers: 32 layers x 8 experts x 16 x (4,096 + 14,336) x 3
        ("mistralai/Mixtral-8x7B-v0.1", ("w1", "w2", "w3"), 32 * 8 * 16 * (4096 + 14336) * 3),
        # its router is the linear layer gate: 32 x 16 x (4,096 + 8)
        ("mistralai/Mixtral-8x7B-v0.1", ("gate",), 32 * 16 * (4096 + 8)),
        # gpt-oss's experts are parameters of one module: all-linear adapts q, k, v and o only (PEFT's 7,962,624)
        ("openai/gpt-oss-20b", ("all-linear",), 7_962_624),
        # Phi-3 fuses qkv_proj and gate_up_proj: PEFT prints 25,165,824 trainable parameters at rank 16, all-linear
        ("microsoft/Phi-3-mini-4k-instruct", ("all-linear",), 25_165_824),
        ("microsoft/Phi-3-mini-4k-instruct", ("qkv_proj",), 32 * 16 * (3072 + 3 * 3072)),
    ],
)
def test_lora_targets_are_transformers_module_names(model: str, targets: tuple[str, ...], params: int) -> None:
    """fuzz15 item 4: Mixtral's w1, w2, w3 were refused and the error listed gate_proj / up_proj / down_proj, which
    PEFT matches to nothing there; gpt-oss's all-linear counted its experts' adapters (220,299,264, about 28x)."""
    from generator.catalog import find_model
    from generator.sizing.architecture import parse_architecture
    from generator.sizing.training import lora_params, lora_targets

    arch = parse_architecture(find_model(model).config)
    assert lora_params(arch, 16, targets) == params
    if model.startswith("mistralai"):
        with pytest.raises(InputError, match=r"\['gate_proj'\] match no linear layer .*w1, w2, w3"):
            lora_targets(arch, ("gate_proj",))


@pytest.mark.parametrize(
    ("method", "ending"),
    [("full", " or train adapters (--train lora / qlora)"), ("lora", " or quantize the base (--train qlora)"), ("qlora", "")],
)
def test_the_longest_sequence_hint_offers_only_a_lighter_method(method: str, ending: str) -> None:
    """fuzz15 item 10: a LoRA job that fitted no sequence was told to train adapters."""
    from tests.helpers import estimate_json

    data = estimate_json("meta-llama/Llama-3.1-70B-Instruct", "--train", method, "--gpu", "l4-24gb", "--max-seq-len")
    (note,) = [n for n in data["notes"] if n.startswith("no sequence fits")]
    assert note.endswith("--offload-params)" + ending)


def test_a_runner_up_at_more_hours_on_the_same_servers_is_not_called_tied(tmp_path: Path) -> None:
    """fuzz15 item 6: a torchtune job pinned at TP2 on a 4-GPU server kept TP2 ZeRO-3 x DP2 over TP2 ZeRO-0 x DP1, same
    GPU time per token but half the hours, and the reason said they were tied."""
    from generator.api import plan_file

    path = tmp_path / "t.yaml"
    path.write_text(PINNED.replace("FRAMEWORK", "torchtune").replace("PIN", "{tp: 2}"))
    (dep,) = plan_file(str(path))[1].deployments
    (runner,) = [r for r in dep.reasons if r.startswith("runner-up layout on the same servers")]
    assert "tied" not in runner
    assert runner.endswith(f"h against {dep.details['hours']:.1f} h")


@pytest.mark.parametrize(
    ("targets", "params"),
    [
        # a dotted name matches the modules its path ends with: q_proj of every layer, 48 x 16 x (2,048 + 4,096)
        (("self_attn.q_proj",), 48 * 16 * (2048 + 4096)),
        # a full module name, one layer's
        (("model.layers.0.self_attn.q_proj",), 16 * (2048 + 4096)),
    ],
)
def test_lora_targets_match_as_peft_does(targets: tuple[str, ...], params: int) -> None:
    """fuzz16 item 8: self_attn.q_proj was refused, and q_proj beside all-linear counted every linear layer."""
    from generator.catalog import find_model
    from generator.sizing.architecture import parse_architecture
    from generator.sizing.training import lora_params

    arch = parse_architecture(find_model("Qwen/Qwen3-30B-A3B").config)
    assert lora_params(arch, 16, targets) == params
    with pytest.raises(InputError, match="'all-linear' is PEFT's target_modules value on its own"):
        lora_params(arch, 16, ("q_proj", "all-linear"))


@pytest.mark.parametrize(
    ("model", "targets", "params"),
    [
        # Qwen3-30B-A3B, rank 16: one expert's down_proj is 16 x (768 + 2,048) = 45,056; 48 layers of 128 experts
        ("Qwen/Qwen3-30B-A3B", ("down_proj",), 48 * 128 * 45_056),
        # the 0 is the expert (model.layers.N.mlp.experts.E.down_proj): expert 0 of every layer, not layer 0's 128
        ("Qwen/Qwen3-30B-A3B", ("mlp.experts.0.down_proj",), 48 * 45_056),
        ("Qwen/Qwen3-30B-A3B", ("experts.127.down_proj",), 48 * 45_056),
        ("Qwen/Qwen3-30B-A3B", ("experts.0.down_proj", "experts.1.down_proj"), 2 * 48 * 45_056),
        ("Qwen/Qwen3-30B-A3B", ("experts.0.down_proj", "down_proj"), 48 * 128 * 45_056),  # no expert twice
        # a full name is one module: layer 0's expert 3, layer 47's expert 0
        ("Qwen/Qwen3-30B-A3B", ("model.layers.0.mlp.experts.3.down_proj",), 45_056),
        ("Qwen/Qwen3-30B-A3B", ("model.layers.47.mlp.experts.0.down_proj",), 45_056),
        # Mixtral-8x7B: block_sparse_moe.experts.E.w1, one is 16 x (4,096 + 14,336) = 294,912; expert 0 of 32 layers
        ("mistralai/Mixtral-8x7B-v0.1", ("experts.0.w1",), 32 * 294_912),
        ("mistralai/Mixtral-8x7B-v0.1", ("block_sparse_moe.gate",), 32 * 16 * (4096 + 8)),
        # DeepSeek-V2-Lite: layer 0 dense (intermediate 10,944), 26 MoE layers of 64 experts (1,408 wide) and shared
        # experts 2 x 1,408 = 2,816 wide; hidden 2,048
        ("deepseek-ai/DeepSeek-V2-Lite", ("shared_experts.gate_proj",), 26 * 16 * (2048 + 2816)),  # 2,023,424
        ("deepseek-ai/DeepSeek-V2-Lite", ("mlp.gate_proj",), 16 * (2048 + 10_944)),  # layer 0's dense MLP only
        ("deepseek-ai/DeepSeek-V2-Lite", ("mlp.experts.0.gate_proj",), 26 * 16 * (2048 + 1408)),  # 1,437,696
        ("deepseek-ai/DeepSeek-V2-Lite", ("gate_proj",), 16 * (2048 + 10_944) + 26 * 64 * 16 * (2048 + 1408) + 2_023_424),
    ],
)
def test_a_dotted_lora_target_selects_the_modules_peft_does(model: str, targets: tuple[str, ...], params: int) -> None:
    """fuzz17 item 9: a dotted entry kept its last component and the last number in its path as the decoder layer,
    so shared_experts.gate_proj counted every gate_proj (94,243,840 on DeepSeek-V2-Lite against PEFT's 2,023,424) and
    mlp.experts.0.down_proj layer 0's 128 experts; experts.127.down_proj was refused."""
    from generator.catalog import find_model
    from generator.sizing.architecture import parse_architecture
    from generator.sizing.training import lora_params

    assert lora_params(parse_architecture(find_model(model).config), 16, targets) == params


def test_lora_dropout_saves_the_input_of_the_adapted_experts_a_token_reaches() -> None:
    """fuzz17 item 9: experts.0.down_proj saved layer 0's input for all 8 experts a token is routed to; with expert 0
    alone adapted a token reaches at most one adapted expert per layer: 768 inputs x (2 + 1) bytes = 2,304."""
    from generator.catalog import find_model
    from generator.sizing.architecture import parse_architecture
    from generator.sizing.training import lora_dropout_bytes_per_token_per_layer

    arch = parse_architecture(find_model("Qwen/Qwen3-30B-A3B").config)
    assert lora_dropout_bytes_per_token_per_layer(arch, ("experts.0.down_proj",)) == 768 * 3
    assert lora_dropout_bytes_per_token_per_layer(arch, ("down_proj",)) == 8 * 768 * 3


@pytest.mark.parametrize(
    ("model", "entry", "why"),
    [
        # PEFT tests name == entry or name.endswith("." + entry): "..q_proj" ends no module's name
        ("meta-llama/Llama-3.1-8B", ".q_proj", "an empty component: PEFT looks for a module name ending in '..q_proj'"),
        ("meta-llama/Llama-3.1-8B", "q_proj.", "an empty component"),
        # the output layer is top-level lm_head in LlamaForCausalLM, not model.lm_head
        ("meta-llama/Llama-3.1-8B", "model.lm_head", "the output layer is top-level lm_head, under no parent module"),
        ("meta-llama/Llama-3.1-8B", "mlp.q_proj", "q_proj is model.layers.N.self_attn.q_proj (N 0-31)"),
        # PEFT compares strings: layer 03 is no module's
        ("meta-llama/Llama-3.1-8B", "layers.03.self_attn.q_proj", "q_proj is model.layers.N.self_attn.q_proj (N 0-31)"),
        ("meta-llama/Llama-3.1-8B", "model.layers.32.self_attn.q_proj", "q_proj is model.layers.N.self_attn.q_proj"),
        ("Qwen/Qwen3-30B-A3B", "experts.128.down_proj", "down_proj is model.layers.N.mlp.experts.E.down_proj (N 0-47, E 0-127)"),
        (
            "deepseek-ai/DeepSeek-V2-Lite",
            "model.layers.0.mlp.experts.0.gate_proj",
            "gate_proj is model.layers.N.mlp.gate_proj (N 0) or model.layers.N.mlp.experts.E.gate_proj (N 1-26, E 0-63) "
            "or model.layers.N.mlp.shared_experts.gate_proj (N 1-26)",
        ),
    ],
)
def test_a_lora_target_peft_matches_to_nothing_is_refused_with_why(model: str, entry: str, why: str) -> None:
    """fuzz17 items 9 and 13: .q_proj and model.lm_head counted as q_proj and lm_head, mlp.q_proj as q_proj; PEFT
    matches them to no module ("Target modules ... not found in the base model")."""
    from generator.catalog import find_model
    from generator.sizing.architecture import parse_architecture
    from generator.sizing.training import lora_targets

    arch = parse_architecture(find_model(model).config)
    with pytest.raises(InputError) as refused:
        lora_targets(arch, ("o_proj", entry))
    assert f"LoRA target modules ['{entry}'] match no linear layer of this model (its layers: " in str(refused.value)
    assert f"): '{entry}': {why}" in str(refused.value)


def test_a_pinned_training_pipeline_divides_the_layers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Review 14 item 11: pp 3 on a 32-layer model was planned (Megatron-LM splits layers evenly over stages)."""
    (tmp_path / "workload.yaml").write_text(PINNED.replace("FRAMEWORK", "megatron").replace("PIN", "{pp: 3}"))
    assert call_cli(tmp_path, ("validate", "workload.yaml")) == 1
    assert "deployments[0].parallelism.pp: pp 3 does not divide the model's 32 layers" in capsys.readouterr().err
    (tmp_path / "workload.yaml").write_text(PINNED.replace("FRAMEWORK", "megatron").replace("PIN", "{pp: 4}"))
    assert call_cli(tmp_path, ("validate", "workload.yaml")) == 0


def test_a_dataset_smaller_than_one_global_batch_is_warned(tmp_path: Path) -> None:
    """fuzz15 item 11: 1e9 tokens against a 16,777,216-sequence global batch planned a 62 h step and a "2.0 h" job."""
    from generator.api import plan_file

    path = tmp_path / "d.yaml"
    text = (
        "version: 1\nname: d\ndeployments:\n  - name: tune\n    model: meta-llama/Llama-3.2-1B\n"
        "    training: {method: full, dataset_tokens: 1000000000, global_batch_size: GBS}\n"
        "hardware: {provider: baremetal, gpus: [h100-sxm5-80gb]}\n"
    )
    path.write_text(text.replace("GBS", "16777216"))
    (said,) = [f.message for f in plan_file(str(path))[1].findings if f.code == "dataset-below-one-step"]
    assert "1,000,000,000 tokens to train (dataset_tokens x epochs) are less than one optimizer step's 34,359,738,368" in said
    path.write_text(text.replace("GBS", "64"))
    assert not [f for f in plan_file(str(path))[1].findings if f.code == "dataset-below-one-step"]


@pytest.mark.parametrize(("deadline", "later"), [(87600, False), (1000, True)])
def test_the_deadline_hint_offers_a_later_deadline_only_below_the_schema_maximum(
    tmp_path: Path, deadline: int, later: bool
) -> None:
    """fuzz15 item 11: a deadline at the schema's 87,600 h maximum was told to take a later one."""
    from generator.errors import InfeasibleError
    from generator.planner import plan_workload
    from generator.workload import load_workload

    path = tmp_path / "d.yaml"
    path.write_text(
        "version: 1\nname: d\ndeployments:\n  - name: tune\n    model: meta-llama/Llama-3.1-8B\n"
        f"    training: {{method: lora, dataset_tokens: 1000000000000000, epochs: 1000, deadline_hours: {deadline}}}\n"
        "hardware: {provider: aws}\n"
    )
    with pytest.raises(InfeasibleError) as refused:
        plan_workload(load_workload(str(path)))
    assert "for the deadline: " in str(refused.value)
    assert ("a later deadline_hours" in str(refused.value)) is later


def test_optimizer_in_backward_says_when_the_batch_sets_the_gpus(tmp_path: Path) -> None:
    """fuzz21 item 7: without accumulation 4,096 sequences at micro-batch 16 bought 256 H100s for a one-minute job,
    unsaid, and the plan printed it as "0.0 h"; with accumulation (or a batch one server holds) nothing is said."""
    from generator.api import plan_file

    path = tmp_path / "o.yaml"
    text = (
        "version: 1\nname: o\ndeployments:\n  - name: tune\n    model: meta-llama/Llama-3.1-8B\n"
        "    training: {method: full, framework: fsdp2, optimizer_in_backward: INB, sequence_length: 2048,\n"
        "               global_batch_size: 4096, dataset_tokens: 100000000}\n"
        "hardware: {provider: baremetal, gpus: [h100-sxm5-80gb]}\n"
    )
    path.write_text(text.replace("INB", "true"))
    plan = plan_file(str(path))[1]
    (dep,) = plan.deployments
    (said,) = [f for f in plan.findings if f.code == "batch-sets-the-gpus"]
    dp, micro = dep.details["data_parallel"], dep.details["micro_batch_size"]
    assert dp * micro == 4096 and dep.details["gradient_accumulation_steps"] == 1
    assert said.path == "deployments[0].training.optimizer_in_backward"
    assert f"global_batch_size 4,096 at micro-batch {micro} takes {dp:,} data-parallel ranks ({dep.gpus:,} GPUs)" in said.message
    assert not any(" take 0.0 h" in r for r in dep.reasons) and any(" s of steps / " in r for r in dep.reasons)
    path.write_text(text.replace("INB", "false"))
    plan = plan_file(str(path))[1]
    assert not [f for f in plan.findings if f.code == "batch-sets-the-gpus"] and plan.deployments[0].gpus < dp


def test_the_planner_labels_zero_offload_on_one_gpu_with_its_stage(tmp_path: Path) -> None:
    """newuser43 item 7: an unpinned stage with optimizer offload under hf is searched at 1-3 and, on one GPU, was
    labelled ZeRO-0 (group vars ``zero_stage: 0, offload_optimizer: true``, which DeepSpeed does not run)."""
    from generator.planner import plan_workload
    from generator.workload import load_workload

    (tmp_path / "w.yaml").write_text(
        "version: 1\nname: ws\ndeployments:\n  - name: q7\n    model: Qwen/Qwen2.5-7B-Instruct\n    training:\n"
        "      method: full\n      framework: hf\n      offload_optimizer: true\n      sequence_length: 2048\n"
        "      dataset_tokens: 5000000\n      epochs: 1\nhardware:\n  provider: baremetal\n  buy: false\n  inventory:\n"
        "    - custom: {name: homebox, kind: workstation, gpu: rtx-4090-24gb, gpus_per_server: 1, cpu: ryzen-9-7950x,"
        " ram_gib: 192, nvme_tb: 2, nvme_drives: 1}\n      count: 1\n"
    )
    (dep,) = plan_workload(load_workload(str(tmp_path / "w.yaml"))).deployments
    (runner_up,) = [r for r in dep.reasons if r.startswith("runner-up layout")]
    assert runner_up.startswith("runner-up layout on the same servers: TP1 ZeRO-1 x DP1, micro-batch 1 x 1")
