"""newuser22 items 4, 6, 8 and 10: parameter offload in a workload, QLoRA data-parallel only, precisions a GPU computes,
torchtune's LoRA module names."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from generator import catalog
from generator.api import render_file
from generator.calculator.estimate import EstimateRequest, estimate
from generator.errors import InfeasibleError, InputError
from generator.planner import plan_workload
from generator.sizing.architecture import parse_architecture
from generator.workload import load_workload
from tests.helpers import ansible_reader

LLAMA_70B = "meta-llama/Llama-3.3-70B-Instruct"
LLAMA_8B = "meta-llama/Llama-3.1-8B"

#: An owned 4 x RTX 3090 workstation (no NVLink bridge counted) and a 70B QLoRA job with no framework.
QUAD = """\
version: 1
name: quad3090
deployments:
  - name: tune70
    model: meta-llama/Llama-3.3-70B-Instruct
    training:
      method: qlora
      sequence_length: 4096
      dataset_tokens: 20000000
{training}      gradient_checkpointing: full
hardware:
  provider: baremetal
  gpus: [rtx-3090-24gb]
  max_nodes: 1
{inventory}"""

INVENTORY = """\
  inventory:
    - custom:
        name: quad
        kind: workstation
        gpu: {gpu}
        gpus_per_server: 4
        cpu: threadripper-pro-7975wx
        ram_gib: 256
        nvme_tb: 4
        nvme_drives: 2
        max_power_w: 2000
        rack_units: 4
      count: 1
"""


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "w.yaml"
    path.write_text(text)
    return str(path)


def _quad(tmp_path: Path, training: str = "", gpu: str = "rtx-3090-24gb", owned: bool = True) -> str:
    inventory = INVENTORY.format(gpu=gpu) if owned else ""
    return _write(tmp_path, QUAD.format(training=training, inventory=inventory))


# --- item 4: training.offload_params ------------------------------------------------------------------------------


def test_offload_params_is_a_described_workload_field() -> None:
    schema = json.loads((Path(__file__).parents[1] / "schemas" / "workload.schema.json").read_text())
    training = schema["properties"]["deployments"]["items"]["properties"]["training"]["properties"]
    assert training["offload_params"]["type"] == "boolean"
    assert "default" not in training["offload_params"]  # unset: the planner decides
    assert "--offload-params" in training["offload_params"]["description"]


def test_an_owned_box_too_small_without_parameter_offload_runs_the_job_with_it(tmp_path: Path) -> None:
    """Without offload ZeRO-3 needs more GPUs than the 4 owned; with it the job fits them, sized as the estimate sizes it."""
    plan = plan_workload(load_workload(_quad(tmp_path)))
    (dep,) = plan.deployments
    details = dep.details
    assert (dep.tp, dep.pp, details["zero_stage"], details["data_parallel"]) == (1, 1, 3, 4)
    assert details["offload_params"] is True
    assert (plan.totals["capex_usd"], plan.totals["inventory"][0]["used"]) == (0.0, 1)  # the owned box, nothing bought
    tried = "parameters offloaded to host RAM (offload_params left out: tried, as the owned GPUs hold the job only so) on 1"
    assert any(tried in r for r in dep.reasons)
    # the same rules and sizing as `estimate --offload-params --zero 3` (micro-batch 1, no accumulation here)
    assert details["gradient_accumulation_steps"] == 1
    est = estimate(
        EstimateRequest(model=LLAMA_70B, train="qlora", gpus=4, zero_stage=3, offload_params=True, seq_len=4096, micro_batch=1)
    )
    assert dep.memory_per_gpu == est["memory"]["per_gpu"]
    assert details["host_ram_bytes_per_gpu"] == est["training"]["host_ram_bytes_per_gpu"] == 8_557_035_520


def test_offload_params_true_is_sized_as_asked(tmp_path: Path) -> None:
    (dep,) = plan_workload(load_workload(_quad(tmp_path, "      offload_params: true\n"))).deployments
    assert (dep.details["offload_params"], dep.details["zero_stage"]) == (True, 3)
    text = "\n".join(dep.reasons)
    assert "parameters offloaded to host RAM on 1" in text and "left out" not in text


def test_offload_params_false_keeps_the_box_unused(tmp_path: Path) -> None:
    # RTX 3090s are not sold new (newuser30 item 11): the owned box is the only kind, and it is too small without offload
    # 5 quads since the allocator's reserve is counted (4 before, 2026-12-04 H200 entry of CALIBRATION.md); 3.3 h before
    # acc107 refitted nf4_dequant_bandwidth_efficiency 0.3 -> 0.5 (a QLoRA job naming no framework: no eager term)
    # 6 quads, 2.7 h since review80 item 1 sized the RTX 3090 at CUDA's 24,268 MiB (nvidia-smi's 24,576 before)
    # 2 quads, 9.6 h since fix145: ZeRO-3 fits only at DP21, so the activations offloaded are tried (DP6)
    # 7.8 h since acc135: a GeForce card's half-rate bf16 MMAs hide half the losses beside them (the same DP6, 2 quads)
    with pytest.raises(
        InfeasibleError,
        match=r"DP6, .*activation_offload: true \(left out: tried.* on 2 x quad \(4 x rtx-3090-24gb\), 7\.8 h needs 2 servers",
    ):
        plan_workload(load_workload(_quad(tmp_path, "      offload_params: false\n")))


def test_bought_servers_at_the_memory_edge_take_the_cheaper_offload(tmp_path: Path) -> None:
    """Bought L4s where ZeRO-3 alone fits only at DP709: the activations offloaded fit DP8 on one server (fix145).

    (It was 7 towers of 2 x RTX 3090, ZeRO-3 x DP14; the 3090 is no longer sold new, newuser30 item 11. DP 40 before the
    caching allocator's reserve was counted, 2026-12-04. DP 64 until fix135 sized the L4 at CUDA's 22,491 MiB, not
    nvidia-smi's 23,034: what ZeRO-3 cannot shard, 20.9 GiB a GPU with micro-batch 1's activations, sits at 95% of the
    card, so the sharded rest was spread over 712 ranks, 89 servers, until fix145 tried the levers that free it. With no
    deadline one server's GPUs are all the throughput asks; neither lever alone fits that, both at once fit one L4:
    acc127, 1 x dell-xe7740 DP8 activations offloaded ($37,271) -> 1 x dell-r760 with 1 L4, DP1, both offloaded,
    74.1 h, $16,144.)
    """
    text = QUAD.format(training="", inventory="").replace("  max_nodes: 1\n", "").replace("rtx-3090-24gb", "l4-24gb")
    (dep,) = plan_workload(load_workload(_write(tmp_path, text))).deployments
    got = (
        dep.details["offload_params"],
        dep.details["activation_offload"],
        dep.details["zero_stage"],
        dep.details["data_parallel"],
    )
    assert got == (True, True, 3, 1)


def test_offload_params_with_a_lower_zero_stage_is_refused_at_its_field(tmp_path: Path) -> None:
    path = _quad(tmp_path, "      zero_stage: 2\n      offload_params: true\n")
    with pytest.raises(InputError) as err:
        load_workload(path)
    assert str(err.value) == (
        f"{path}:11:23: deployments[0].training.offload_params: parameter offload is ZeRO stage 3 / FSDP full shard "
        "(DeepSpeed offload_param, FSDP CPU offload), not ZeRO-2: give zero_stage 3 (--zero 3) or leave the parameter offload out"
    )


def test_rendered_group_vars_carry_parameter_offload(tmp_path: Path) -> None:
    files = render_file(_quad(tmp_path))
    group_vars = ansible_reader().load(files["ansible/group_vars/tune70_rtx_3090_24gb.yml"])
    (job,) = group_vars["specgen_deployments"]
    assert (job["training"]["offload_params"], job["training"]["offload_optimizer"]) == (True, False)
    (planned,) = json.loads(files["spec.json"])["plan"]["deployments"]
    assert planned["details"]["offload_params"] is True


# --- item 6: QLoRA is data-parallel only, with or without a framework ---------------------------------------------

QLORA_DP_ONLY = (
    "QLoRA scales by data parallelism only: no QLoRA stack splits its 4-bit layers (PEFT's bitsandbytes NF4 layers "
    "under hf, trl, unsloth, axolotl, llama-factory and deepspeed, and torchtune's NF4 tensors are sharded by "
    "ZeRO-3 / FSDP, never tensor- or pipeline-parallel; megatron loads no 4-bit base)"
)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        pytest.param(
            {"tp": 2},
            f"--tp 2: {QLORA_DP_ONLY}; use --gpus for data-parallel ranks (--zero 3 shards the base over them), or train lora",
            id="tp-no-framework",
        ),
        pytest.param(
            {"pp": 2},
            f"--pp 2: {QLORA_DP_ONLY}; use --gpus for data-parallel ranks (--zero 3 shards the base over them), or train lora",
            id="pp-no-framework",
        ),
        pytest.param(
            {"tp": 2, "framework": "torchtune"},
            f"--tp 2: {QLORA_DP_ONLY}; use --gpus for data-parallel ranks (--zero 3 shards the base over them), or train lora",
            id="tp-torchtune",
        ),
        pytest.param(
            # the QLoRA reason first: hf's own advice pointed to megatron / torchtune, which refuse a split QLoRA too
            # (fuzz19 item 4)
            {"tp": 2, "framework": "hf"},
            f"--tp 2: {QLORA_DP_ONLY}; use --gpus for data-parallel ranks (--zero 3 shards the base over them), or train lora",
            id="tp-hf",
        ),
    ],
)
def test_estimate_refuses_a_split_qlora_layout(flags: dict[str, object], message: str) -> None:
    with pytest.raises(InputError) as err:
        estimate(EstimateRequest(model=LLAMA_70B, train="qlora", gpus=2, **flags))  # type: ignore[arg-type]
    assert str(err.value) == message


def test_lora_over_a_4_bit_base_is_qlora_by_another_name() -> None:
    with pytest.raises(InputError, match=f"^--tp 2: {re.escape(QLORA_DP_ONLY)}"):
        estimate(EstimateRequest(model=LLAMA_70B, train="lora", precision="nf4", tp=2, gpus=2))


def test_lora_without_a_framework_may_still_split() -> None:
    result = estimate(EstimateRequest(model=LLAMA_70B, train="lora", tp=2, gpus=2))
    assert result["parallelism"]["tp"] == 2


def test_a_pinned_qlora_tp_is_refused_at_its_field(tmp_path: Path) -> None:
    text = QUAD.format(training="", inventory="").replace("    training:\n", "    parallelism:\n      tp: 2\n    training:\n")
    path = _write(tmp_path, text)
    with pytest.raises(InputError) as err:
        load_workload(path)
    assert str(err.value) == (
        f"{path}:7:11: deployments[0].parallelism.tp: tp 2: {QLORA_DP_ONLY}; drop tp (data-parallel GPUs with "
        "zero_stage 3 shard the base), or train lora"
    )


def test_qlora_with_no_framework_is_planned_data_parallel(tmp_path: Path) -> None:
    (dep,) = plan_workload(load_workload(_quad(tmp_path))).deployments
    assert (dep.tp, dep.pp) == (1, 1)


# --- item 8: precisions a GPU computes ---------------------------------------------------------------------------


def test_torchtune_on_a_gpu_without_bf16_is_refused() -> None:
    with pytest.raises(InputError) as err:
        estimate(EstimateRequest(model="meta-llama/Llama-3.2-3B", train="full", framework="torchtune", gpu="v100-sxm2-32gb"))
    assert str(err.value) == (
        "--gpu v100-sxm2-32gb: v100-sxm2-32gb (compute capability 7.0) has no bf16: torchtune trains dtype bf16 or fp32 "
        "only, and raises RuntimeError for bf16 on it (it has no fp16 or mixed-precision training); its fp32 run holds "
        "4-byte weights, gradients, optimizer states and activations, which specgen does not size. Choose a GPU with "
        "bf16 (Ampere or newer), or a framework with fp16 mixed precision (hf, trl, axolotl, llama-factory, deepspeed, "
        "unsloth)"
    )


def test_pure_bf16_on_a_gpu_without_bf16_is_refused() -> None:
    with pytest.raises(InputError) as err:
        estimate(EstimateRequest(model="meta-llama/Llama-3.2-3B", train="full", optimizer="adamw-bf16", gpu="t4-16gb"))
    assert str(err.value) == (
        "--gpu t4-16gb: t4-16gb (compute capability 7.5) has no bf16, and adamw-bf16 trains pure bf16 with no fp32 "
        "master copy, which fp16 cannot stand in for: choose a mixed-precision optimizer (adamw, adamw-8bit, "
        "adamw-torch-amp, sgd or adafactor), which runs as fp16 with loss scaling in the same bytes, or a GPU with bf16 "
        "(Ampere or newer)"
    )


@pytest.mark.parametrize("method", ["full", "lora", "qlora"])
def test_mixed_precision_on_a_gpu_without_bf16_is_fp16_in_the_same_bytes(method: str) -> None:
    on_v100 = estimate(EstimateRequest(model="meta-llama/Llama-3.2-3B", train=method, framework="trl", gpu="v100-sxm2-32gb"))
    no_gpu = estimate(EstimateRequest(model="meta-llama/Llama-3.2-3B", train=method, framework="trl"))
    assert on_v100["memory"]["per_gpu"] == no_gpu["memory"]["per_gpu"]
    assert on_v100["precision"]["weights"] == {"full": "fp16", "lora": "fp16", "qlora": "nf4"}[method]
    assert on_v100["precision"]["training"].endswith(
        "; v100-sxm2-32gb (compute capability 7.0) has no bf16: sized as fp16 mixed precision with loss scaling, which "
        "holds the same bytes (the Hugging Face Trainer refuses bf16=True there: set fp16=True)"
    )


def test_a_plan_on_an_owned_gpu_without_bf16(tmp_path: Path) -> None:
    """torchtune is ruled out there with the estimate's reason; trl runs fp16 and says so."""
    text = QUAD.format(training="      framework: torchtune\n", inventory=INVENTORY.format(gpu="v100-sxm2-32gb"))
    text = text.replace(LLAMA_70B, "meta-llama/Llama-3.2-3B").replace("method: qlora", "method: lora")
    text = text.replace("  gpus: [rtx-3090-24gb]\n", "  gpus: [v100-sxm2-32gb]\n")
    with pytest.raises(InfeasibleError, match="torchtune trains dtype bf16 or fp32 only, and raises RuntimeError"):
        plan_workload(load_workload(_write(tmp_path, text)))
    (dep,) = plan_workload(load_workload(_write(tmp_path, text.replace("torchtune", "trl")))).deployments
    assert dep.precision == "fp16"
    assert "v100-sxm2-32gb (compute capability 7.0) has no bf16: sized as fp16 mixed precision" in "\n".join(dep.reasons)


@pytest.mark.parametrize(
    ("gpu", "refused"),
    [
        pytest.param("rtx-3090-24gb", "rtx-3090-24gb is Ampere, compute capability 8.0 or 8.6", id="ampere"),
        pytest.param("t4-16gb", "t4-16gb is Turing, compute capability 7.5", id="turing"),
        pytest.param("rtx-4090-24gb", None, id="ada-8.9"),
        pytest.param("h100-sxm5-80gb", None, id="hopper"),
    ],
)
def test_lora_over_an_fp8_base_needs_compute_capability_8_9(gpu: str, refused: str | None) -> None:
    req = EstimateRequest(model=LLAMA_8B, train="lora", precision="fp8", gpu=gpu, framework="trl")
    if refused is None:
        assert estimate(req)["training"]["method_label"] == "LoRA over an fp8 base"
        return
    with pytest.raises(InputError) as err:
        estimate(req)
    assert str(err.value) == (
        f"--gpu {gpu}: LoRA over an FP8 base needs FP8 compute, compute capability 8.9 or higher (Ada, Hopper, "
        f"Blackwell); {refused}: Transformers dequantizes an FP8 checkpoint to bf16 there, so the base would hold "
        "bf16's bytes, not FP8's. Train lora over a bf16 base, or qlora (nf4), or choose a GPU with FP8"
    )


@pytest.mark.parametrize(
    ("train", "precision", "label"),
    [
        pytest.param("qlora", None, "qlora", id="qlora-nf4"),
        pytest.param("qlora", "int8", "LoRA over an int8 base", id="qlora-int8"),
        pytest.param("qlora", "fp8", "LoRA over an fp8 base", id="qlora-fp8"),
        pytest.param("lora", "int8", "LoRA over an int8 base", id="lora-int8"),
        pytest.param("lora", None, "lora", id="lora-bf16"),
    ],
)
def test_a_non_4_bit_quantized_base_is_labelled_lora_over_it(train: str, precision: str | None, label: str) -> None:
    result = estimate(EstimateRequest(model=LLAMA_8B, train=train, precision=precision, gpu="h100-sxm5-80gb"))
    assert result["training"]["method_label"] == label
    assert result["training"]["method"] == train


# --- item 10: torchtune's LoRA module names ----------------------------------------------------------------------

#: Llama 3.1 8B (hidden 4096, 8 KV heads x 128 = 1024, MLP 14336, vocabulary 128256, 32 layers) at rank 16:
#: q 16 x (4096 + 4096) = 131,072; v 16 x (4096 + 1024) = 81,920; o 131,072; gate, up and down 16 x (4096 + 14336)
#: = 294,912 each: 1,228,800 a layer, 39,321,600 over 32 layers.
TORCHTUNE_QV_O_MLP = 39_321_600
#: q in every layer (32 x 131,072 = 4,194,304) and the output projection 16 x (4096 + 128256) = 2,117,632.
TORCHTUNE_Q_OUTPUT = 6_311_936


@pytest.mark.parametrize(
    ("targets", "trainable"),
    [
        pytest.param(("q_proj", "v_proj", "output_proj", "w1", "w2", "w3"), TORCHTUNE_QV_O_MLP, id="torchtune-config"),
        pytest.param(("q_proj", "v_proj", "o_proj", "gate_proj", "down_proj", "up_proj"), TORCHTUNE_QV_O_MLP, id="hf-names"),
        pytest.param(("q_proj", "output"), TORCHTUNE_Q_OUTPUT, id="apply-lora-to-output"),
    ],
)
def test_torchtune_module_names_map_to_the_models(targets: tuple[str, ...], trainable: int) -> None:
    req = EstimateRequest(model=LLAMA_8B, train="qlora", framework="torchtune", gpu="rtx-4090-24gb", lora_targets=targets)
    assert estimate(req)["params"]["trainable"] == trainable


def test_torchtune_names_without_torchtune_say_whose_they_are() -> None:
    with pytest.raises(InputError) as err:
        estimate(EstimateRequest(model=LLAMA_8B, train="qlora", lora_targets=("q_proj", "output_proj", "w1")))
    assert str(err.value).endswith(
        "; output_proj, w1 are torchtune's names: set framework torchtune (--framework torchtune), or give this model's "
        "(o_proj for output_proj, gate_proj for w1)"
    )


def test_an_unknown_name_under_torchtune_lists_the_names_that_work() -> None:
    with pytest.raises(InputError) as err:
        estimate(EstimateRequest(model=LLAMA_8B, train="qlora", framework="torchtune", lora_targets=("wq",)))
    assert str(err.value).startswith("LoRA target modules ['wq'] match no linear layer of this model")
    assert str(err.value).endswith(
        "; under torchtune its own names work too: q_proj, k_proj, v_proj, output_proj (o_proj), w1 (gate_proj), "
        "w2 (down_proj), w3 (up_proj), output (lm_head)"
    )


def test_a_workload_under_torchtune_takes_its_names(tmp_path: Path) -> None:
    text = (
        "version: 1\nname: tt\ndeployments:\n  - name: tune\n    model: meta-llama/Llama-3.1-8B\n    training:\n"
        "      method: qlora\n      framework: torchtune\n"
        "      lora_target_modules: [q_proj, v_proj, output_proj, w1, w2, w3]\nhardware:\n  gpus: [rtx-4090-24gb]\n"
    )
    (dep,) = plan_workload(load_workload(_write(tmp_path, text))).deployments
    assert dep.details["trainable_params"] == TORCHTUNE_QV_O_MLP
    path = _write(tmp_path, text.replace("framework: torchtune", "framework: trl"))
    with pytest.raises(InputError) as err:
        load_workload(path)
    assert str(err.value).startswith(f"{path}:9:28: deployments[0].training.lora_target_modules: LoRA target modules")
    assert "output_proj, w1, w2, w3 are torchtune's names" in str(err.value)


def test_parameter_offload_left_out_is_not_chosen_beyond_the_owned_gpus(tmp_path: Path) -> None:
    """fuzz19 item 2: 70B full fine-tuning with one owned DGX H100 took offload on 16 GPUs ("the owned GPUs hold the
    job only so", false: it bought a second DGX) because the step leaves out offload's PCIe copies."""
    path = tmp_path / "w.yaml"
    path.write_text(
        "version: 1\nname: opowned\ndeployments:\n  - name: tune\n    model: meta-llama/Llama-3.1-70B-Instruct\n"
        "    training: {method: full, sequence_length: 4096, global_batch_size: 32, dataset_tokens: 100000000}\n"
        "hardware:\n  gpus: [h100-sxm5-80gb]\n  provider: baremetal\n  inventory: [{platform: dgx-h100, count: 1}]\n"
    )
    (dep,) = plan_workload(load_workload(str(path))).deployments
    assert dep.gpus > 8 and dep.details["offload_params"] is False


def test_the_estimate_takes_parameter_offload_at_the_frameworks_own_zero3() -> None:
    """fuzz19 item 7: torchtune shards at ZeRO-3 by default, yet --offload-params demanded --zero 3; the JSON now says
    what was offloaded."""
    from tests.helpers import estimate_json

    data = estimate_json("meta-llama/Llama-3.1-8B", "--train", "lora", "--framework", "torchtune", "--gpus", "2",
                         "--offload-params", "--gpu", "rtx-4090-24gb")  # fmt: skip
    training = data["training"]
    # FSDP's CPU offload takes the gradients and the optimizer states with the parameters (fuzz19 item 3)
    assert (training["zero_stage"], training["offload_params"], training["offload_optimizer"]) == (3, True, True)
    assert training["host_ram_bytes_per_gpu"] > 0


@pytest.mark.parametrize(("framework", "states_on_host"), [("fsdp2", True), ("deepspeed", False)])
def test_fsdp_parameter_offload_takes_the_gradients_and_states_along(framework: str, states_on_host: bool) -> None:
    """fuzz19 item 3: 70B full fine-tuning on 8 x H100 with FSDP2's CPU offload was sized 126 GiB a GPU ("does NOT
    fit") with 15.9 GiB of host RAM, its gradients and AdamW states left on the GPUs; FSDP moves them to the host with
    the parameters (DeepSpeed's offload_param does not: its offload_optimizer does)."""
    from tests.helpers import estimate_json

    data = estimate_json("meta-llama/Llama-3.1-70B-Instruct", "--train", "full", "--framework", framework,
                         "--gpu", "h100-sxm5-80gb", "--zero", "3", "--gpus", "8", "--offload-params")  # fmt: skip
    per_gpu = data["memory"]["per_gpu"]
    assert data["training"]["offload_optimizer"] is states_on_host
    assert (per_gpu["optimizer"] == 0) is states_on_host
    assert data["capacity"]["fits"] is states_on_host


def test_many_long_lora_target_names_are_said_briefly() -> None:
    """fuzz25 L7: 64 unknown names of 128 characters were quoted twice, whole, in a 2,045-character line."""
    from generator.sizing.training import lora_targets

    arch = parse_architecture(catalog.find_model("meta-llama/Llama-3.1-8B-Instruct").config)
    names = tuple(f"x{i:02d}" + "y" * 125 for i in range(64))
    with pytest.raises(InputError) as err:
        lora_targets(arch, names)
    said = str(err.value)
    assert said.startswith(f"LoRA target modules ['{names[0][:60]}...'") and "] and 61 more match no linear layer" in said
    assert names[0] not in said and len(said) < 1200


# --- newuser31 item 11: frameworks whose kernels a GPU does not run, and QLoRA's bitsandbytes off NVIDIA -------------

UNSLOTH_SOURCE = "https://github.com/unslothai/unsloth/blob/aca403f00e6e8f4babdaf339f94d8ad0656fc88c/README.md"
LIGER_SOURCE = "https://huggingface.co/kernels-community/liger-kernels/blob/main/README.md"


@pytest.mark.parametrize(
    ("framework", "runs_on"),
    [
        ("unsloth", f"Unsloth runs on NVIDIA, AMD and Intel GPUs and on CPUs ({UNSLOTH_SOURCE})"),
        ("trl+liger", f"Liger Kernel's Triton kernels are built for CUDA, ROCm and Intel XPU ({LIGER_SOURCE})"),
        ("axolotl+liger", f"Liger Kernel's Triton kernels are built for CUDA, ROCm and Intel XPU ({LIGER_SOURCE})"),
    ],
)
def test_a_framework_whose_kernels_gaudi_does_not_run_is_refused_there(framework: str, runs_on: str) -> None:
    with pytest.raises(InputError) as err:
        estimate(EstimateRequest(model=LLAMA_8B, train="qlora", framework=framework, gpu="gaudi3-128gb"))
    assert str(err.value) == (
        f"--gpu gaudi3-128gb: {framework} does not run on gaudi3-128gb: {runs_on}, not on Intel Gaudi's HPU; choose "
        "another GPU, or a framework that runs there (hf, trl or deepspeed through Optimum for Intel Gaudi)"
    )


BNB_NOTE = (
    "the NF4 base is bitsandbytes', which supports {gpu} from release {release} on "
    "(https://huggingface.co/docs/bitsandbytes/v{doc}/installation): install a bitsandbytes {release} or later built "
    "for it (serving engines do not run bitsandbytes there)"
)


@pytest.mark.parametrize(
    ("gpu", "framework", "method", "note"),
    [
        ("mi300x-192gb", "unsloth", "qlora", BNB_NOTE.format(gpu="mi300x-192gb", release="0.50", doc="0.50.0")),
        ("mi300x-192gb", None, "qlora", BNB_NOTE.format(gpu="mi300x-192gb", release="0.50", doc="0.50.0")),
        ("gaudi3-128gb", "trl", "qlora", BNB_NOTE.format(gpu="gaudi3-128gb", release="0.48", doc="0.48.1")),
        ("mi300x-192gb", "torchtune", "qlora", None),  # torchtune's NF4 is torchao's
        ("mi300x-192gb", "unsloth", "lora", None),
        ("h100-sxm5-80gb", "unsloth", "qlora", None),
    ],
)
def test_qlora_off_nvidia_names_the_bitsandbytes_release_that_supports_the_gpu(
    gpu: str, framework: str | None, method: str, note: str | None
) -> None:
    notes = estimate(EstimateRequest(model=LLAMA_8B, train=method, framework=framework, gpu=gpu))["notes"]
    assert [n for n in notes if "bitsandbytes" in n] == ([note] if note else [])


def test_a_plan_leaves_out_gaudi_for_unsloth_and_says_what_qlora_needs_on_amd(tmp_path: Path) -> None:
    text = QUAD.format(training="      framework: unsloth\n", inventory="").replace(LLAMA_70B, LLAMA_8B)
    text = text.replace("  gpus: [rtx-3090-24gb]\n", "  gpus: [gaudi3-128gb]\n")
    with pytest.raises(InfeasibleError, match="unsloth does not run on gaudi3-128gb"):
        plan_workload(load_workload(_write(tmp_path, text)))
    (dep,) = plan_workload(load_workload(_write(tmp_path, text.replace("gaudi3-128gb", "mi300x-192gb")))).deployments
    assert BNB_NOTE.format(gpu="mi300x-192gb", release="0.50", doc="0.50.0") in dep.reasons


#: A weekly 8B QLoRA job on AWS ({framework}: a framework field; {hardware}: the GPU list and the rest of the section).
WEEKLY_TUNE = """\
version: 1
name: tune
deployments:
  - name: tune8b
    model: meta-llama/Llama-3.1-8B
    training: {{method: qlora,{framework} lora_rank: 16, sequence_length: 4096, global_batch_size: 32,
               dataset_tokens: 200000000, epochs: 2, deadline_hours: 12, runs_per_month: 4}}
hardware: {{provider: aws, gpus: {hardware}
kubernetes: {{location: us-east-1}}
{extra}"""


def test_a_job_over_several_hosts_says_how_it_is_launched(tmp_path: Path) -> None:
    """newuser31 item 12: a DDP job over 4 one-GPU instances was planned with no word of its multi-node launch; the
    group vars say the hosts, and Unsloth's own multi-GPU route is named."""
    text = WEEKLY_TUNE.format(framework=" framework: unsloth,", hardware="[l40s-48gb]}", extra="")
    plan = plan_workload(load_workload(_write(tmp_path, text)))
    (dep,) = plan.deployments
    hosts, world = dep.details.get("hosts", 1), dep.details["world_size"]
    assert hosts > 1
    (finding,) = [f for f in plan.findings if f.code == "job-spans-hosts"]
    assert finding.level == "warning" and finding.path == "deployments[0]"
    assert finding.message.startswith(
        f"deployment tune8b: the job's {world} GPUs span {hosts} hosts: launch it multi-node (torchrun --nnodes {hosts}"
    )
    assert "Unsloth runs on several GPUs only through Accelerate or DeepSpeed" in finding.message
    files = render_file(_write(tmp_path, text))
    (group_vars,) = [text for name, text in files.items() if name.startswith("ansible/group_vars/")]
    assert f"hosts: {hosts}\n" in group_vars


def test_a_job_run_at_a_rate_the_workload_gives_says_what_a_commitment_would_cost(tmp_path: Path) -> None:
    """newuser31 item 9: a savings-plan rate under prices: costed a weekly job's runs as if paid only while it runs."""
    text = WEEKLY_TUNE.format(
        framework="", hardware="[h100-sxm5-80gb], platforms: [aws-p5-48xlarge]}", extra="prices: {aws-p5-48xlarge: 35.0}\n"
    )
    plan = plan_workload(load_workload(_write(tmp_path, text)))
    (dep,) = plan.deployments
    (pool,) = plan.pools
    (finding,) = [f for f in plan.findings if f.code == "run-at-given-rate"]
    assert finding.level == "info" and finding.path == "prices.aws-p5-48xlarge"
    hours, job = dep.details["hours"], dep.details["usd_per_job"]
    assert finding.message == (
        f"deployment tune8b: its runs are costed at prices.aws-p5-48xlarge, $35.00 a node-hour, {hours:,.2f} h a run "
        f"(${job:,.2f}), paid only while it runs; a commitment's rate (a savings plan, reserved instances) is paid "
        "whether the job runs or not, and hours beyond the committed ones bill on demand: where this rate is one, its "
        f"pool costs ${35 * pool.nodes * 730:,.0f} a month, or give the rate the job's hours are billed at"
    )
