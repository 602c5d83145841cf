"""newuser98: a mid-size company moving RAG (embedder, reranker, Llama 3.3 70B FP8, Qwen3-30B-A3B for tools, a monthly
LoRA of the 8B) onto a colocation rack of its own, with the 2 DGX H100 it owns, provisioned by Metal3 / Cluster API.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import run_specgen

#: The persona's workload (its owned DGX described for Metal3), with the rack's kW as ``{rack_kw}``.
RAG_COLO = """\
version: 1
name: rag-colo
deployments:
  - name: embed
    model: BAAI/bge-m3
    inference:
      task: embed
      max_context_tokens: 8192
      avg_input_tokens: 400
      requests_per_second: 200
      slo: {{ttft_p95_ms: 200}}
  - name: chat
    model: meta-llama/Llama-3.3-70B-Instruct
    inference:
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 32768
      avg_input_tokens: 6000
      avg_output_tokens: 400
      requests_per_second: 15
      slo: {{ttft_p95_ms: 2000, tpot_ms: 50}}
hardware:
  gpus: [h100-sxm5-80gb]
  provider: baremetal
  rack_power_kw: {rack_kw}
  inventory:
    - platform: dgx-h100
      count: 2
      hosts:
        - name: dgx-01
          bmc_address: redfish://10.30.1.11/redfish/v1/Systems/1
          bmc_credentials_secret: dgx-01-bmc
          boot_mac_address: "b8:ca:3a:6e:30:01"
          ip_address: 10.30.0.21
        - name: dgx-02
          bmc_address: redfish://10.30.1.12/redfish/v1/Systems/1
          bmc_credentials_secret: dgx-02-bmc
          boot_mac_address: "b8:ca:3a:6e:30:02"
          ip_address: 10.30.0.22
outputs: [terraform, ansible, kubernetes]
provisioning:
  tools: [metal3, capi]
  namespace: rag-colo
"""

#: The whole persona: embedder, reranker, 70B chat, Qwen3-30B-A3B tools and a monthly LoRA, on 17 kW racks with the 2 DGX
#: H100 it owns (no provisioning tool), the chat at ``{rate}`` req/s.
PERSONA = """\
version: 1
name: rag-colo
deployments:
  - name: embed
    model: BAAI/bge-m3
    inference:
      task: embed
      max_context_tokens: 8192
      avg_input_tokens: 400
      requests_per_second: 200
      slo: {{ttft_p95_ms: 200}}
  - name: rerank
    model: BAAI/bge-reranker-v2-m3
    inference:
      task: score
      max_context_tokens: 1024
      avg_input_tokens: 600
      requests_per_second: 100
      slo: {{ttft_p95_ms: 300}}
  - name: chat
    model: meta-llama/Llama-3.3-70B-Instruct
    inference:
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 32768
      avg_input_tokens: 6000
      avg_output_tokens: 400
      requests_per_second: {rate}
      slo: {{ttft_p95_ms: 2000, tpot_ms: 50}}
  - name: tools
    model: Qwen/Qwen3-30B-A3B
    inference:
      precision: bf16
      max_context_tokens: 32768
      avg_input_tokens: 3000
      avg_output_tokens: 250
      requests_per_second: 20
      slo: {{ttft_p95_ms: 1500, tpot_ms: 30}}
  - name: tune
    model: meta-llama/Llama-3.1-8B-Instruct
    training:
      method: lora
      lora_rank: 16
      sequence_length: 8192
      global_batch_size: 64
      dataset_tokens: 200000000
      epochs: 1
      deadline_hours: 24
      runs_per_month: 1
hardware:
  gpus: [h100-sxm5-80gb, h200-sxm-141gb]
  provider: baremetal
  rack_power_kw: 17
  inventory:
    - platform: dgx-h100
      count: 2
      hosts:
        - name: dgx-01
          bmc_address: redfish://10.30.1.11/redfish/v1/Systems/1
          bmc_credentials_secret: dgx-01-bmc
          boot_mac_address: "b8:ca:3a:6e:30:01"
          ip_address: 10.30.0.21
          netmask: 255.255.255.0
          gateway: 10.30.0.1
          boot_disk: /dev/nvme0n1
        - name: dgx-02
          bmc_address: redfish://10.30.1.12/redfish/v1/Systems/1
          bmc_credentials_secret: dgx-02-bmc
          boot_mac_address: "b8:ca:3a:6e:30:02"
          ip_address: 10.30.0.22
          netmask: 255.255.255.0
          gateway: 10.30.0.1
          boot_disk: /dev/nvme0n1
"""


@pytest.mark.parametrize("command", ["plan", "render"])
def test_owned_hosts_left_off_the_plan_say_why(tmp_path: Path, command: str) -> None:
    """A rack of 8 kW takes no 10.2 kW DGX H100: the metal3 refusal says that is why the described hosts are unused.

    Before, plan and render said only "the plan puts dgx-01 and dgx-02, which give them all, on no pool": the reason
    (each node over the rack's power) was in the inventory-free finding, which the refusal keeps from being printed.
    """
    path = tmp_path / "rag.yaml"
    path.write_text(RAG_COLO.format(rack_kw=8))
    args = ("plan", str(path)) if command == "plan" else ("render", str(path), "-o", str(tmp_path / "out"))
    result = run_specgen(*args)
    assert result.returncode == 1, result.stderr
    assert f"{path}:42:10: provisioning.tools: metal3 renders a BareMetalHost" in result.stderr
    assert "the plan puts dgx-01 and dgx-02, which give them all, on no pool" in result.stderr
    assert "a 10,200 W node exceeds the 8 kW rack power (hardware.rack_power_kw)" in result.stderr
    assert not (tmp_path / "out").exists()


def test_owned_hosts_used_at_17_kw(tmp_path: Path) -> None:
    """The same file at 17 kW racks (one DGX a rack) plans, its BareMetalHosts rendered for both owned hosts."""
    path = tmp_path / "rag.yaml"
    path.write_text(RAG_COLO.format(rack_kw=17))
    result = run_specgen("render", str(path), "-o", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    rendered = sorted(p.name for p in (tmp_path / "out" / "provisioning" / "metal3").iterdir())
    assert rendered == ["baremetalhost-dgx-01.yaml", "baremetalhost-dgx-02.yaml", "kustomization.yaml"]


def _racks_of_owned_hosts(tmp_path: Path, rate: str) -> dict[str, str]:
    """Each owned host's rack in the persona's plan with the chat at ``rate`` req/s."""
    path = tmp_path / f"rag-{rate}.yaml"
    path.write_text(PERSONA.format(rate=rate))
    result = run_specgen("plan", str(path), "--format", "json")
    assert result.returncode == 0, result.stderr
    racks = json.loads(result.stdout)["racks"]
    return {host: rack["id"] for rack in racks for pool in rack["pools"] for host in pool["hosts"]}


def test_owned_servers_keep_their_racks_when_a_bought_pool_is_added(tmp_path: Path) -> None:
    """The owned DGX H100 stand in their racks already: a higher rate that buys an H200 pool leaves them there.

    Before, racks were packed by power, height and then pool name, so the new ``chat_h200_sxm_141gb`` pool (10.2 kW,
    8U, as the DGX H100) sorted before the owned DGX's pool and took rack-01 and rack-02: ``diff`` then listed dgx-01
    and dgx-02 as de-racked, re-cabled and re-powered into rack-05 and rack-06, for a change that only adds servers.
    """
    assert _racks_of_owned_hosts(tmp_path, "15") == {"dgx-01": "rack-01", "dgx-02": "rack-02"}
    assert _racks_of_owned_hosts(tmp_path, "25") == {"dgx-01": "rack-01", "dgx-02": "rack-02"}


def test_validate_warns_of_owned_servers_no_rack_holds(tmp_path: Path) -> None:
    """validate says, at the inventory entry, that an owned 10.2 kW DGX H100 fits no 8 kW rack (exit 0: others fit).

    Before, validate said only "ok"; the plan then left both DGX free (its inventory-free finding), and with metal3 the
    refusal named no reason. The servers are owned, so the rack is the thing to check.
    """
    path = tmp_path / "rag.yaml"
    text = RAG_COLO.format(rack_kw=8)
    path.write_text(text)
    line = text.splitlines().index("    - platform: dgx-h100") + 1
    result = run_specgen("validate", str(path))
    assert result.returncode == 0, result.stderr
    assert (
        f"{path}:{line}:7: warning: owned dgx-h100 server(s) (dgx-01 and dgx-02) fit no rack of the workload's: even with its "
        "fewest GPUs and no parts added, a 10,200 W node exceeds the 8 kW rack power (hardware.rack_power_kw); the plan "
        "can use none of them: give the racks more power (hardware.rack_power_kw), or rack them elsewhere "
        "[owned-server-fits-no-rack]"
    ) in result.stderr
    path.write_text(RAG_COLO.format(rack_kw=17))
    assert "owned-server-fits-no-rack" not in run_specgen("validate", str(path)).stderr
