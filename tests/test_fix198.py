"""fix198: planning and output left-outs of the fifty-fifth session.

1. Named owned hosts the plan leaves free were in no Ansible group (``ansible-playbook -l`` could not reach them):
   they are the group ``free_nodes``, which the ``inventory-free`` finding names.
2. vLLM's KV cache follows a ModelOpt checkpoint's ``kv_cache_quant_algo: FP8`` (fix196) with no word in the plan:
   info ``kv-cache-fp8-from-checkpoint``.
3. ``aws-efa-400g`` (a cloud's virtual NIC) was accepted as an owned server's fabric: refused at its field.
4. A 70B job at a global batch of 1 was refused naming more ranks than sequences, with no batch that plans: the
   refusal names the nearest one that does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.api import plan_file, render_file
from generator.errors import InfeasibleError
from generator.planner.setting_findings import model_findings
from generator.workload import load_workload
from tests.helpers import load_errors
from tests.test_oracles import ansible_inventory

FREE = """\
version: 1
name: free-boxes
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference:
      precision: bf16
      max_context_tokens: 8192
      requests_per_second: 5
      slo: {ttft_p95_ms: 1000, tpot_ms: 40}
hardware:
  gpus: [h100-sxm5-80gb]
  provider: baremetal
  rack_power_kw: 40
  inventory:
    - platform: dgx-h100
      count: 3
      hosts:
        - name: dgx-01
        - name: dgx-02
          ip_address: 10.0.0.2
        - name: dgx-03
outputs: [ansible]
"""


def test_free_owned_hosts_are_an_ansible_group_the_finding_names(tmp_path: Path) -> None:
    (tmp_path / "w.yaml").write_text(FREE)
    files = render_file(str(tmp_path / "w.yaml"))
    work = tmp_path / "out"
    (work / "ansible").mkdir(parents=True)
    (work / "ansible" / "inventory.yml").write_text(files["ansible/inventory.yml"])
    listed = ansible_inventory(work)
    assert listed.data["free_nodes"]["hosts"] == ["dgx-02", "dgx-03"]
    assert "free_nodes" in listed.data["all"]["children"]
    assert "free_nodes" not in listed.data["gpu_nodes"].get("children", [])  # no pool's group vars: not configured
    assert listed.data["_meta"]["hostvars"]["dgx-02"]["ansible_host"] == "10.0.0.2"
    _, plan = plan_file(str(tmp_path / "w.yaml"))
    said = [f.message for f in plan.findings if f.code == "inventory-free"]
    assert len(said) == 1 and "left free: dgx-02, dgx-03 (Ansible group free_nodes)" in said[0], said


def test_no_free_group_where_every_owned_host_is_used(tmp_path: Path) -> None:
    one = FREE.replace("count: 3", "count: 1").split("        - name: dgx-02")[0]
    (tmp_path / "w.yaml").write_text(one + "outputs: [ansible]\n")
    assert "free_nodes" not in render_file(str(tmp_path / "w.yaml"))["ansible/inventory.yml"]


KV = """\
version: 1
name: q
deployments:
  - name: chat
    model: nvidia/Llama-3.3-70B-Instruct-FP4
    inference: {{precision: nvfp4, max_context_tokens: 8192, requests_per_second: 1{extra}}}
hardware:
  gpus: [b200-sxm-180gb]
"""


def test_a_kv_cache_the_checkpoint_made_fp8_is_said(tmp_path: Path) -> None:
    code = "kv-cache-fp8-from-checkpoint"
    for extra, said in (("", True), (", kv_cache_precision: fp8", False), (", kv_cache_precision: bf16", False)):
        (tmp_path / "w.yaml").write_text(KV.format(extra=extra))
        found = [f for f in model_findings(load_workload(tmp_path / "w.yaml")) if f.code == code]
        assert bool(found) == said, extra
    (tmp_path / "w.yaml").write_text(KV.format(extra=", engine: sglang"))  # SGLang's default not read: bf16, unsaid
    assert not [f for f in model_findings(load_workload(tmp_path / "w.yaml")) if f.code == code]
    (tmp_path / "w.yaml").write_text(KV.format(extra=""))
    _, plan = plan_file(str(tmp_path / "w.yaml"))
    (finding,) = [f for f in plan.findings if f.code == code]
    assert finding.level == "info" and finding.path == "deployments[0].model"
    assert "nvidia/Llama-3.3-70B-Instruct-FP4" in finding.message and "kv_cache_quant_algo FP8" in finding.message
    assert "half the KV bytes a token of a bf16 cache" in finding.message


EFA = """\
version: 1
name: efa-owned
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{max_context_tokens: 8192, requests_per_second: 2}}
hardware:
  gpus: [h100-sxm5-80gb]
  provider: baremetal
  inventory:
    - platform: dgx-h100
      count: 1
      {field}: {nic}
      {field}_count: 8
"""


@pytest.mark.parametrize(
    ("field", "nic"), [("fabric_nic", "aws-efa-400g"), ("frontend_nic", "aws-efa-100g"), ("fabric_nic", "gcp-gpu-nic-200g")]
)
def test_a_clouds_virtual_nic_on_an_owned_server_is_refused_at_its_field(tmp_path: Path, field: str, nic: str) -> None:
    (tmp_path / "w.yaml").write_text(EFA.format(field=field, nic=nic))
    (error,) = load_errors(tmp_path / "w.yaml")
    assert f"w.yaml:13:{9 + len(field)}: hardware.inventory[0].{field}: {field} {nic} is a cloud provider's" in error
    allowed = error.split("one of ")[1]
    assert "connectx-7-400gbe" in allowed and "aws-efa" not in allowed and "gcp-gpu-nic" not in allowed
    assert ("connectx-7-400g-ib" in allowed) == (field == "fabric_nic")  # an InfiniBand-only NIC is no front end


def test_a_real_owned_fabric_nic_still_loads(tmp_path: Path) -> None:
    (tmp_path / "w.yaml").write_text(EFA.format(field="fabric_nic", nic="connectx-7-400g-ib"))
    assert load_errors(tmp_path / "w.yaml") == []


BATCH_ONE = """\
version: 1
name: batch1
deployments:
  - name: pretrain
    model: meta-llama/Llama-3.1-70B-Instruct
    training:
      method: full
      framework: deepspeed
      sequence_length: 4096
      global_batch_size: {batch}
      dataset_tokens: 2000000000
      epochs: 1
      deadline_hours: 2000
hardware:
  gpus: [h100-sxm5-80gb]
"""


def test_a_batch_fewer_than_the_ranks_names_the_nearest_batch_that_plans(tmp_path: Path) -> None:
    (tmp_path / "w.yaml").write_text(BATCH_ONE.format(batch=1))
    with pytest.raises(InfeasibleError) as refused:
        plan_file(str(tmp_path / "w.yaml"))
    said = str(refused.value)
    assert "DP18 is more ranks than the global batch of 1 sequences" in said
    assert "with a global_batch_size of 18 in the training of deployment pretrain" in said, said
    assert "no platform" not in said
    (tmp_path / "w.yaml").write_text(BATCH_ONE.format(batch=18))  # the batch said plans
    _, plan = plan_file(str(tmp_path / "w.yaml"))
    assert plan.deployments[0].details["data_parallel"] == 18
