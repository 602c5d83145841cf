"""fix167: services co-located on one owned server: host RAM, how a refusal and the plan name the server, its GPUs.

- Host RAM: a pool of co-located services took its largest member's whole-node figure (each service's LoRA caches
  counted on every GPU of the node, ``_replica_option``). Now each service's per-GPU bytes on the GPUs it takes,
  summed, the OS reserve once (:mod:`generator.planner.colocated_ram`). A 1-GPU LoRA service (100 adapters of
  1.25 GiB a worker: 125 GiB) beside a TP2 70B chat on a 4-GPU XE8640: 16 + 4 x 125 = 516 GiB needed before (768 GiB
  built, 16 x 48 GiB), 16 + 125 = 141 GiB now (384 GiB built, 16 x 24 GiB, with the model files' page cache).
- A refusal named two services on one DGX as "'small' holds 1 x dgx-h100; 'chat' holds 1 x dgx-h100" (two servers);
  now "'small' and 'chat' share 1 x dgx-h100 ('small' 2, 'chat' 2 of its 8 GPUs)" (2 x TP1, 1 x TP2).
- spec.json's pool names each replica's GPUs of each owned host (``host_gpus``), the plan text and SPEC.md say them
  a line a host, and they are Ansible's ``specgen_replicas`` (the oracle: ansible's own YAML loader reads it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.api import plan_file
from generator.errors import InfeasibleError
from generator.planner import plan_workload
from generator.render import render_plan
from generator.shared_host_text import gpu_ranges, shared_host_lines
from generator.workload import load_workload
from tests.helpers import ansible_reader

DATA = Path(__file__).parent / "data" / "fix167"
GIB = 2**30
ADAPTER_BYTES = 1_342_177_280  # 32 layers x rank 256 x 81,920 x 2 B (tests/test_lora_ram.py)


def test_colocated_services_host_ram_is_each_ones_on_its_gpus() -> None:
    _, plan = plan_file(str(DATA / "lora-beside-chat.yaml"))
    (pool,) = plan.pools
    assert pool.deployments == ("small", "chat") and pool.node.gpus == 4
    small = next(d for d in plan.deployments if d.name == "small")
    assert (small.tp, small.pp, small.replicas) == (1, 1, 1)
    assert small.details["lora"]["host_bytes_per_replica"] == 100 * ADAPTER_BYTES
    # old: max(4 GPUs x 125 GiB, chat's 0) = 500 GiB + 16 for the OS -> 768 GiB (16 x 48 GiB DIMMs)
    assert pool.node.ram_gib == 384
    assert "16 x 24 GiB" in (pool.node.memory or "")


def test_a_refusal_says_two_services_share_one_server() -> None:
    with pytest.raises(InfeasibleError) as caught:
        plan_file(str(DATA / "third-refused.yaml"))
    said = str(caught.value)
    assert "deployment 'big'" in said
    assert said.endswith(
        "or place a deployment before it elsewhere: the owned dgx-h100 (1 server) is shared by deployments 'small' and 'chat' "
        "('small' 2, 'chat' 2 of its 8 GPUs)"
    )
    assert "holds 1 x dgx-h100" not in said


def _inventory(files: dict[str, str]) -> dict[str, dict[str, object]]:
    groups = ansible_reader().load(files["ansible/inventory.yml"].split("---\n", 1)[1])["all"]["children"]
    hosts: dict[str, dict[str, object]] = {}
    for members in groups.values():
        hosts.update({h: v or {} for h, v in ((members or {}).get("hosts") or {}).items()})
    return hosts


def test_spec_json_spec_md_and_ansible_name_each_services_gpus_of_the_host() -> None:
    loaded = load_workload(str(DATA / "two-services-one-dgx.yaml"))
    plan = plan_workload(loaded)
    (pool,) = plan.pools
    assert pool.owned_hosts == ("gpu-01",)
    files = render_plan(plan, loaded.workload)
    written = json.loads(files["spec.json"])["plan"]["pools"][0]["host_gpus"]
    assert written == [
        {"deployment": "chat", "gpus": [0, 1], "host": "gpu-01", "replica": 1},
        {"deployment": "small", "gpus": [2], "host": "gpu-01", "replica": 1},
        {"deployment": "small", "gpus": [3], "host": "gpu-01", "replica": 2},
    ]
    # the oracle: Ansible's per-host replica list, as ansible's YAML loader reads the inventory
    replicas = _inventory(files)["gpu-01"]["specgen_replicas"]
    assert replicas == [{k: v for k, v in e.items() if k != "host"} for e in written]
    line = "'chat' and 'small' share gpu-01: GPUs 0-1 'chat', 2-3 'small', 4-7 idle"
    assert f"- `small_chat_h100_sxm5_80gb` hosts: {line}\n" in files["SPEC.md"]


def test_a_pool_of_one_service_names_no_host_gpus(tmp_path: Path) -> None:
    # fix171: a bought pool of two services names its hosts' GPUs too (tests/test_fix171_shared_server.py); a
    # service alone on its servers: none
    text = (DATA / "lora-beside-chat.yaml").read_text()
    path = tmp_path / "alone.yaml"
    path.write_text(text[: text.index("  - name: chat")] + text[text.index("hardware:") :])
    _, plan = plan_file(str(path))
    assert plan.pools[0].deployments == ("small",) and plan.pools[0].host_gpus is None
    assert "host_gpus" not in plan.to_dict()["pools"][0]


@pytest.mark.parametrize(
    ("gpus", "said"),
    [([0], "0"), ([0, 1], "0-1"), ([3, 0, 1], "0-1, 3"), ([0, 2, 4, 5, 6], "0, 2, 4-6"), ([1, 1, 2], "1-2")],
)
def test_gpu_ranges(gpus: list[int], said: str) -> None:
    assert gpu_ranges(gpus) == said


def test_shared_host_lines_per_host_with_idle_gpus() -> None:
    entries = [("a", "x", (0, 1, 2, 3)), ("a", "y", (4,)), ("a", "y", (5,)), ("b", "x", (0, 1, 2, 3))]
    assert shared_host_lines(entries, 8) == [
        "'x' and 'y' share a: GPUs 0-3 'x', 4-5 'y', 6-7 idle",
        "'x' runs alone on b: GPUs 0-3 'x', 4-7 idle",
    ]
    assert shared_host_lines([("h", "x", (0, 1)), ("h", "y", (2, 3))], 4) == ["'x' and 'y' share h: GPUs 0-1 'x', 2-3 'y'"]
