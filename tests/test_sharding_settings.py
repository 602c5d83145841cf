"""Settings a sharded training plan relies on, named where it uses them (newuser76 item 7).

DeepSpeed ZeRO-3 on a Transformers MoE needs its MoE blocks marked leaf modules
(``deepspeed.utils.set_z3_leaf_modules``, https://deepspeed.readthedocs.io/en/latest/zero3.html); a QLoRA job whose
bitsandbytes 4-bit base is sharded needs ``bnb_4bit_quant_storage`` in the float dtype
(https://huggingface.co/docs/peft/accelerate/fsdp). Neither was named by the plan or the rendered group vars.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from generator.api import render_file
from generator.planner import plan_workload
from generator.workload import load_workload

MIXTRAL = """version: 1
name: bm-mixtral
deployments:
  - name: mixft
    model: mistralai/Mixtral-8x7B-v0.1
    training:
      method: full
      framework: FRAMEWORK
      sequence_length: 4096
      global_batch_size: 128
      dataset_tokens: 2000000000
      epochs: 1
      deadline_hours: 120
hardware:
  provider: baremetal
  buy: false
  inventory:
    - platform: dell-xe9680-hgx-h100-h200
      gpu: h100-sxm5-80gb
      count: 2
outputs: [ansible]
"""

QLORA = """version: 1
name: q70
deployments:
  - name: q70
    model: meta-llama/Llama-3.3-70B-Instruct
    training:
      method: qlora
      framework: axolotl
      lora_rank: 32
      sequence_length: 4096
      global_batch_size: 32
      dataset_tokens: 100000000
      epochs: 2
      deadline_hours: 48
      runs_per_month: 1
hardware:
  gpus: [l40s-48gb, a100-sxm4-80gb, h100-sxm5-80gb, l4-24gb]
  provider: aws
kubernetes:
  location: us-east-1
outputs: [kubernetes, terraform]
"""


def _plan(tmp_path: Path, text: str) -> tuple[dict[str, Any], list[str]]:
    path = tmp_path / "w.yaml"
    path.write_text(text)
    loaded = load_workload(str(path))
    dep = plan_workload(loaded).deployments[0]
    return dict(dep.details), list(dep.reasons)


def test_deepspeed_zero3_on_mixtral_names_its_leaf_modules_in_the_reasons_and_group_vars(tmp_path: Path) -> None:
    details, reasons = _plan(tmp_path, MIXTRAL.replace("FRAMEWORK", "deepspeed"))
    assert (details["zero_stage"], details["data_parallel"]) == (3, 16)
    assert details["z3_leaf_modules"] == ["MixtralSparseMoeBlock"]
    (said,) = [r for r in reasons if "set_z3_leaf_modules" in r]
    assert "deepspeed.utils.set_z3_leaf_modules(model, [MixtralSparseMoeBlock])" in said
    assert "https://deepspeed.readthedocs.io/en/latest/zero3.html" in said
    path = tmp_path / "w.yaml"
    files = render_file(str(path))
    (group_vars,) = [text for name, text in files.items() if name.startswith("ansible/group_vars/mixft")]
    assert "z3_leaf_modules" in group_vars and "MixtralSparseMoeBlock" in group_vars
    assert YAML(typ="safe", pure=True).load(group_vars.replace("!unsafe ", "")) is not None


def test_fsdp2_shards_no_leaf_modules(tmp_path: Path) -> None:
    """FSDP2 gathers its fully_shard units whole and traces no module order: nothing to set."""
    details, reasons = _plan(tmp_path, MIXTRAL.replace("FRAMEWORK", "fsdp2"))
    assert "z3_leaf_modules" not in details and not any("set_z3_leaf_modules" in r for r in reasons)


def test_sharded_qlora_names_bnb_4bit_quant_storage(tmp_path: Path) -> None:
    details, reasons = _plan(tmp_path, QLORA)
    assert (details["method"], details["zero_stage"], details["data_parallel"]) == ("qlora", 3, 8)
    assert details["bnb_4bit_quant_storage"] == "bfloat16"
    (said,) = [r for r in reasons if "bnb_4bit_quant_storage" in r]
    assert "BitsAndBytesConfig(bnb_4bit_quant_storage=torch.bfloat16)" in said
    assert "https://huggingface.co/docs/peft/accelerate/fsdp" in said
    assert "z3_leaf_modules" not in details  # a dense model


def test_single_gpu_qlora_shards_nothing(tmp_path: Path) -> None:
    text = QLORA.replace("Llama-3.3-70B-Instruct", "Llama-3.1-8B-Instruct").replace(
        "global_batch_size: 32", "global_batch_size: 4"
    )
    details, _ = _plan(tmp_path, text.replace("100000000", "1000000"))
    assert details["data_parallel"] == 1 and "bnb_4bit_quant_storage" not in details
