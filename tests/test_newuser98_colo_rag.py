"""newuser98: a mid-size company moving RAG (embedder, reranker, Llama 3.3 70B FP8, Qwen3-30B-A3B for tools, a monthly
LoRA of the 8B) onto a colocation rack of its own, with the 2 DGX H100 it owns, provisioned by Metal3 / Cluster API.
"""

from __future__ import annotations

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
