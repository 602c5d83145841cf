"""newuser89: an ML engineer new to specgen, fine-tuning and serving open models on owned and rented GPUs.

Item 1: a cloud training job's checkpoints were said to lie on "its nodes' local NVMe" on machine types that have none
(GCP a2 / g2 / g4: no local SSD), beside the same plan's ``cloud-block-storage`` finding that the files go on the boot
disk. The finding now names the disk the rendered node pool keeps the pod's files on: the local SSDs where GKE's
``ephemeralStorageLocalSsdConfig`` is rendered, else the boot disk (the rendered node pool is the oracle).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from generator.api import render_file

TRAINING_ON_GCP = """\
version: 1
name: ck-gcp
deployments:
  - name: tune
    model: Qwen/Qwen3-8B
    training:
      method: lora
      lora_rank: 16
      sequence_length: 2048
      global_batch_size: 16
      dataset_tokens: 20000000
hardware:
  provider: gcp
  gpus: [GPU]
kubernetes:
  location: us-central1-a
  gcp_project: acme-ml
"""


def _checkpoint_finding(spec: dict[str, object]) -> str:
    plan = spec["plan"]
    assert isinstance(plan, dict)
    (found,) = [f["message"] for f in plan["findings"] if f["code"] == "checkpoints-on-instance-store"]
    return str(found)


@pytest.mark.parametrize(
    ("gpu", "machine", "local_ssds"),
    [
        ("l4-24gb", "g2-standard-8", False),  # G2: no local SSD bundled (its files on the boot disk)
        ("h100-sxm5-80gb", "a3-highgpu-8g", True),  # A3: local SSDs, rendered as the node's ephemeral storage
    ],
)
def test_a_gke_jobs_checkpoints_are_said_on_the_disk_its_node_pool_keeps_them(
    tmp_path: Path, gpu: str, machine: str, local_ssds: bool
) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(TRAINING_ON_GCP.replace("GPU", gpu))
    files = render_file(str(path))
    (pool_file,) = [name for name in files if name.startswith("kubernetes/gcp/containernodepool-")]
    node_pool = YAML(typ="safe", pure=True).load(files[pool_file])
    assert node_pool["spec"]["nodeConfig"]["machineType"] == machine
    # the oracle: where GKE puts kubelet's and containerd's files (a pod's emptyDir, the job's checkpoints)
    assert ("ephemeralStorageLocalSsdConfig" in node_pool["spec"]["nodeConfig"]) is local_ssds
    said = _checkpoint_finding(json.loads(files["spec.json"]))
    where = "its nodes' local NVMe (" if local_ssds else "its nodes' boot disk ("
    assert said.startswith(f"deployment tune: its checkpoints are sized on {where}"), said
    if not local_ssds:  # the same plan's storage finding says the machine has none
        assert f"gcp-{machine} has no local NVMe (instance store)" in files["SPEC.md"]
        assert "local NVMe (2 kept" not in files["SPEC.md"]


# ---- items 2-5: the mistakes of a user who writes fine-tuning configs (axolotl, TRL) first

FINE_TUNE = """\
version: 1
name: tune
deployments:
  - name: sft
    model: Qwen/Qwen3-8B
    training:
      method: lora
      framework: trl
      lora_rank: 16
      sequence_length: 4096
      dataset_tokens: 50000000
      global_batch_size: 16
    capacity_type: on-demand
hardware:
  provider: aws
  max_budget_usd_per_month: 5000
"""


def _errors(tmp_path: Path, old: str, new: str) -> list[str]:
    from tests.helpers import load_errors

    assert old in FINE_TUNE
    path = tmp_path / "w.yaml"
    path.write_text(FINE_TUNE.replace(old, new, 1))
    return [error.removeprefix(f"{tmp_path}/") for error in load_errors(path)]


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        # item 2: a number with a scale or separators, as people say it, gets the digits to write
        (
            "sequence_length: 4096",
            "sequence_length: 4k",
            "w.yaml:10:24: deployments[0].training.sequence_length: expected integer, got string '4k'; write the number "
            "in full, digits only: 4000, or 4096 where a k is 1,024",
        ),
        (
            "dataset_tokens: 50000000",
            "dataset_tokens: 50M",
            "w.yaml:11:23: deployments[0].training.dataset_tokens: expected integer, got string '50M'; write the number "
            "in full, digits only: 50000000",
        ),
        (
            "max_budget_usd_per_month: 5000",
            'max_budget_usd_per_month: "$5,000"',
            "w.yaml:16:29: hardware.max_budget_usd_per_month: expected number, got string '$5,000'; write the number in "
            "full, digits only: 5000",
        ),
        (
            "max_budget_usd_per_month: 5000",
            "max_budget_usd_per_month: 5k",  # dollars: no 1,024
            "w.yaml:16:29: hardware.max_budget_usd_per_month: expected number, got string '5k'; write the number in "
            "full, digits only: 5000",
        ),
        # a quoted plain number keeps its own hint
        (
            "lora_rank: 16",
            'lora_rank: "16"',
            "w.yaml:9:18: deployments[0].training.lora_rank: expected integer, got string '16'; write 16 without quotes",
        ),
        # item 3: another cloud's word for spot capacity, and a method given as the framework
        (
            "capacity_type: on-demand",
            "capacity_type: preemptible",
            "w.yaml:13:20: deployments[0].capacity_type: 'preemptible' is not one of on-demand, spot; preemptible, "
            "capacity the cloud may reclaim, is capacity_type: spot here (AWS Spot Instances, GCP Spot VMs, Azure Spot "
            "Virtual Machines)",
        ),
        (
            "framework: trl",
            "framework: qlora",
            "w.yaml:8:18: deployments[0].training.framework: 'qlora' is not one of axolotl, axolotl+liger, deepspeed, "
            "fsdp, fsdp2, hf, hf-trainer, liger, llama-factory, llamafactory, megatron, megatron-lm, peft, torchtune, "
            "transformers, trl, trl+liger, unsloth; qlora is a training method (training.method: qlora); framework "
            "names the library that trains",
        ),
        # item 4: the Trainer's boolean, and the choices the field takes, as YAML writes them
        (
            "lora_rank: 16",
            "lora_rank: 16\n      gradient_checkpointing: true",
            "w.yaml:10:31: deployments[0].training.gradient_checkpointing: expected string, got boolean true; give one "
            "of none, selective, full",
        ),
        # item 5: a recipe's field specgen does not read, in the number form every recipe writes it in
        (
            "lora_rank: 16",
            "lora_rank: 16\n      learning_rate: 2e-4",
            "w.yaml:10:7: deployments[0].training.learning_rate: unknown field 'learning_rate', its value not read (a "
            "number written as 2e-4 is read as 0.0002 by YAML 1.2 but as text by YAML 1.1 (PyYAML, Ansible)); did you "
            "mean 'run_after'?",
        ),
    ],
)
def test_a_newcomers_mistakes_are_said_with_what_to_write(tmp_path: Path, old: str, new: str, said: str) -> None:
    assert _errors(tmp_path, old, new) == [said]


def test_a_number_form_under_a_known_field_is_still_refused_for_its_form(tmp_path: Path) -> None:
    (said,) = _errors(tmp_path, "lora_rank: 16", "lora_rank: 1_6")
    assert said == (
        "w.yaml:9:18: deployments[0].training.lora_rank: a number written with digit separators is read as 16 by YAML "
        "1.1 but as text by YAML 1.2 (editors, JSON Schema tools): write it in plain digits"
    )


# ---- item 6: an AMD pool's group vars hold the ROCm guides' URLs, longer than a line yamllint allows


AMD_SERVICE = """\
version: 1
name: amd-serve
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-70B-Instruct
    inference:
      precision: fp8
      max_context_tokens: 32768
      requests_per_second: 5
hardware:
  provider: baremetal
  gpus: [mi300x-192gb]
"""


def test_an_amd_pools_group_vars_are_yamllint_clean_and_read_back_by_ansible(tmp_path: Path) -> None:
    from generator.render.rocm_tuning import NUMA_SOURCE, VLLM_SOURCE
    from tests.test_iac_outputs import lint
    from tests.test_oracles import Rendered, ansible_group_problems, ansible_inventory, ansible_warnings, write_tree

    path = tmp_path / "w.yaml"
    path.write_text(AMD_SERVICE)
    files = render_file(str(path))
    assert lint(files) == []  # yamllint's default rules: 80 columns, a lone word excepted
    group_vars = files["ansible/group_vars/chat_mi300x_192gb.yml"]
    assert f"  source: !unsafe\n    '{NUMA_SOURCE}'\n" in group_vars  # the URL alone on its line, under its key
    # the real reader: ansible-inventory takes the tree as written, and every value is what the plan holds
    write_tree(files, tmp_path / "tree", "ansible/")
    inventory = ansible_inventory(tmp_path / "tree")
    assert ansible_warnings(inventory) == []
    rendered = Rendered(stem="amd", files=files, spec=json.loads(files["spec.json"]))
    assert ansible_group_problems(rendered, inventory) == []
    read = YAML(typ="safe", pure=True)
    read.constructor.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))
    values = read.load(group_vars)
    assert values["specgen_rocm_host"]["source"] == NUMA_SOURCE
    assert values["specgen_deployments"][0]["engine"]["env_source"] == VLLM_SOURCE


def test_a_long_word_moves_to_its_own_line_only_past_yamllints_limit() -> None:
    from generator.render.env import ansible_yaml

    short, long = "https://example.com/a", "https://example.com/" + "a" * 80
    assert ansible_yaml({"k": short}) == "k: !unsafe 'https://example.com/a'\n"
    assert ansible_yaml({"k": long, "l": [long], "m": [{"url": long}]}) == (
        f"k: !unsafe\n  '{long}'\nl:\n  - !unsafe\n    '{long}'\nm:\n  - url: !unsafe\n      '{long}'\n"
    )


# ---- item 7: a framework on an accelerator its kernels do not run on is told to change the one or the other


def test_a_framework_refused_on_the_only_gpu_allowed_is_not_told_of_memory_levers(tmp_path: Path) -> None:
    from tests.helpers import run_specgen

    path = tmp_path / "w.yaml"
    path.write_text(
        FINE_TUNE.replace("framework: trl", "framework: unsloth")
        .replace("    capacity_type: on-demand\n", "")
        .replace("provider: aws\n  max_budget_usd_per_month: 5000", "provider: baremetal\n  gpus: [gaudi3-128gb]")
    )
    done = run_specgen("plan", str(path))
    assert done.returncode == 3, done.stderr
    assert "unsloth does not run on gaudi3-128gb" in done.stderr
    assert done.stderr.rstrip().endswith(
        "; to unblock: allow a GPU unsloth runs on (hardware.gpus), or another training.framework"
    ), done.stderr
    assert "parameter offload" not in done.stderr and "more memory" not in done.stderr
