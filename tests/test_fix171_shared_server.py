"""fix171: services sharing one server: host RAM of GPU shares, the refusal's shared server, bought hosts' GPUs.

- Host RAM in shares of GPUs (MIG / MPS / time-slicing): every pod is its own vLLM process with its own LoRA CPU
  caches, but a serving option counted them once a GPU (``shape.host_ram_bytes // par.gpus x gpus_per_node``) and a
  pool of co-located services once a GPU each takes (``ceil(pods / shares a GPU)``). tests/data/fix171/
  lora-mig-shares.yaml: two LoRA services (31.25 GiB of caches a pod), 5 pods each in MIG 1g.20gb shares (4 a GPU)
  of one 4-GPU H100 server: 2 + 2 GPUs x 31.25 = 125 GiB + 16 for the OS counted (256 GiB built, 16 x 16 GiB),
  10 pods x 31.25 = 312.5 GiB + 16 now (384 GiB, 16 x 24 GiB).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import pytest

from generator import catalog
from generator.api import plan_file
from generator.errors import InfeasibleError
from generator.planner import assemble, plan_workload
from generator.planner.colocated_ram import colocated_host_ram_bytes, summed_host_ram_bytes, workers_counted
from generator.planner.option import Option
from generator.render import render_plan
from generator.shared_host_text import shared_host_lines
from generator.sizing.gpu_share import gpu_share
from generator.workload import load_workload
from generator.workload.models import GpuSharing
from tests.helpers import ansible_reader

DATA = Path(__file__).parent / "data" / "fix171"
GIB = 2**30
POD_CACHE_BYTES = 100 * 335_544_320  # 100 adapters a pod x 32 layers x rank 64 x 81,920 x 2 B (test_lora_ram.py)

# every H100 MIG profile (the MIG user guide's table, mig_profiles.json) and MPS / time-slicing replicas a GPU
SHARINGS = [GpuSharing("mig", mig_profile=name) for name in catalog.mig_profiles()["h100-sxm5-80gb"]] + [
    GpuSharing(strategy, replicas_per_gpu=n) for strategy in ("mps", "time-slicing") for n in (2, 4, 8)
]


@pytest.mark.parametrize("sharing", SHARINGS, ids=lambda s: f"{s.strategy}-{s.mig_profile or s.replicas_per_gpu}")
@pytest.mark.parametrize("pods", [1, 3, 5, 9, 40])
def test_a_node_counts_each_pod_of_a_share(sharing: GpuSharing, pods: int) -> None:
    share = gpu_share(catalog.gpus()["h100-sxm5-80gb"], sharing)
    assert share is not None
    per_gpu = share.per_gpu
    # a lone option on one 4-GPU node: its pods there, at most 4 GPUs x its shares a GPU
    assert workers_counted(4, 1, pods, per_gpu) == min(pods, 4 * per_gpu)
    # spread over 2 nodes: the busiest holds ceil(pods / 2)
    assert workers_counted(4, 2, pods, per_gpu) == min(math.ceil(pods / 2), 4 * per_gpu)
    # two services' pods side by side on the node: each one's counted (was once a GPU they take)
    both = summed_host_ram_bytes([(POD_CACHE_BYTES, pods), (POD_CACHE_BYTES, pods)], 4 * per_gpu)
    assert both == POD_CACHE_BYTES * min(2 * pods, 4 * per_gpu)
    if per_gpu > 1 and pods > 1:  # the old count: each service's GPUs, ceil(pods / per_gpu)
        old = POD_CACHE_BYTES * min(4, 2 * math.ceil(pods / per_gpu))
        assert both > old


def test_whole_gpus_count_every_gpu_of_the_node() -> None:
    assert workers_counted(8, 1, 1, None) == 8 and workers_counted(4, 3, 12, None) == 4
    # costliest per worker first, up to the node's workers
    assert summed_host_ram_bytes([(1, 8), (5, 2), (3, 2)], 8) == 5 * 2 + 3 * 2 + 1 * 4


def _spied(monkeypatch: pytest.MonkeyPatch) -> dict[int | None, int]:
    """The host RAM of each pool of co-located services formed, by its shares a GPU (a plan forms others to compare)."""
    seen: dict[int | None, int] = {}
    real = colocated_host_ram_bytes

    def spy(members: Sequence[Option], node_gpus: int) -> int:
        seen[members[0].candidate.shares_per_gpu] = real(members, node_gpus)
        return seen[members[0].candidate.shares_per_gpu]

    monkeypatch.setattr(assemble, "colocated_host_ram_bytes", spy)
    return seen


@pytest.mark.parametrize(
    ("sharing", "pods", "ram_gib", "dimms"),
    [
        ({"strategy": "mig", "mig_profile": "1g.20gb"}, 5, 384, "16 x 24 GiB"),  # old: 256 GiB, 16 x 16
        ({"strategy": "mps", "replicas_per_gpu": 4}, 4, 384, "16 x 24 GiB"),  # old: 256 GiB, 16 x 16
    ],
)
def test_services_in_shares_of_one_server_each_keep_their_caches(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, sharing: dict[str, object], pods: int, ram_gib: int, dimms: str
) -> None:
    text = (DATA / "lora-mig-shares.yaml").read_text()
    if sharing["strategy"] == "mps":
        text = text.replace("strategy: mig", "strategy: mps").replace("mig_profile: 1g.20gb", "replicas_per_gpu: 4")
    path = tmp_path / "w.yaml"
    path.write_text(text)
    seen = _spied(monkeypatch)
    _, plan = plan_file(str(path))
    (pool,) = plan.pools
    assert pool.deployments == ("small", "helper") and (pool.node.gpus, pool.nodes, pool.shares_per_gpu) == (4, 1, 4)
    for d in plan.deployments:
        assert d.replicas == pods and d.details["lora"]["host_bytes_per_replica"] == POD_CACHE_BYTES
    # each pod's caches: 2 x pods of them (old: 2 x ceil(pods / 4) GPUs' worth)
    assert seen[4] == 2 * pods * POD_CACHE_BYTES
    assert pool.node.ram_gib == ram_gib and dimms in (pool.node.memory or "")


def test_a_refusal_says_a_shared_servers_gpus_not_that_it_is_free() -> None:
    """small (2 x TP1) and chat (1 x TP2) on the one owned DGX; big's TP8 replicas need whole servers.

    Before: "needs 3 servers; 1 owned are free" (the DGX half idle counted free). Now its GPUs, as Ansible's
    specgen_replicas lays them out on gpu-01 (tests/test_fix167_shared_server.py: chat 0-1, small 2 and 3).
    """
    with pytest.raises(InfeasibleError) as caught:
        plan_file(str(DATA / "shared-dgx-refused.yaml"))
    said = str(caught.value)
    assert (
        "3 x TP8 on 3 x dgx-h100 (8 x h100-sxm5-80gb) needs 3 servers; 0 owned are free, 1 shared ('chat' and 'small' "
        "share gpu-01: GPUs 0-1 'chat', 2-3 'small', 4-7 idle) and hardware.buy is false, so no more are bought"
    ) in said
    assert "1 owned are free" not in said


def test_the_refusal_lays_the_gpus_out_as_ansible_does(tmp_path: Path) -> None:
    """The same two services without big: the plan's Ansible specgen_replicas for gpu-01 are the refusal's GPUs."""
    text = (DATA / "shared-dgx-refused.yaml").read_text()
    path = tmp_path / "w.yaml"
    path.write_text(text[: text.index("  - name: big")] + text[text.index("hardware:") :])
    _, plan = plan_file(str(path))
    (pool,) = plan.pools
    lines = shared_host_lines(((h.host, h.deployment, h.gpus) for h in pool.host_gpus or ()), pool.node.gpus)
    assert lines == ["'chat' and 'small' share gpu-01: GPUs 0-1 'chat', 2-3 'small', 4-7 idle"]


def _example_hosts(files: dict[str, str]) -> dict[str, dict[str, object]]:
    """hosts.yml.example's hosts (the placeholders of the hosts a plan buys), as ansible's YAML loader reads them."""
    groups = ansible_reader().load(files["ansible/hosts.yml.example"].split("---\n", 1)[1])["all"]["children"]
    return {h: v or {} for members in groups.values() for h, v in ((members or {}).get("hosts") or {}).items()}


def test_bought_hosts_of_services_sharing_them_name_their_gpus() -> None:
    """fix167 named owned hosts only; a bought XE8640 that chat (TP2) and small (TP1) share now reads its GPUs too,
    under the name Ansible's hosts.yml.example gives it with the same specgen_replicas (the oracle)."""
    loaded = load_workload(str(Path(__file__).parent / "data" / "fix167" / "lora-beside-chat.yaml"))
    plan = plan_workload(loaded)
    (pool,) = plan.pools
    assert pool.owned_hosts == () and pool.nodes == 1
    files = render_plan(plan, loaded.workload)
    written = json.loads(files["spec.json"])["plan"]["pools"][0]["host_gpus"]
    host = "small-chat-h100-sxm5-80gb-01"
    assert written == [
        {"deployment": "chat", "gpus": [0, 1], "host": host, "replica": 1},
        {"deployment": "small", "gpus": [2], "host": host, "replica": 1},
    ]
    replicas = _example_hosts(files)[host]["specgen_replicas"]
    assert replicas == [{k: v for k, v in e.items() if k != "host"} for e in written]
    line = f"'chat' and 'small' share {host}: GPUs 0-1 'chat', 2 'small', 3 idle"
    assert f"- `small_chat_h100_sxm5_80gb` hosts: {line}\n" in files["SPEC.md"]


def test_hosts_laid_out_alike_in_a_row_are_said_once() -> None:
    """A pool of 15 bought hosts (capacity-400k) said in three lines, not fifteen."""
    entries = [(f"p-{n:02d}", "chat", (0, 1)) for n in range(1, 8)] + [("p-08", "chat", (0,)), ("p-08", "sum", (1,))]
    entries += [(f"p-{n:02d}", "sum", (0, 1)) for n in range(9, 16)] + [("p-16", "sum", (0, 1)), ("p-17", "sum", (0, 1))]
    assert shared_host_lines(entries, 2) == [
        "'chat' runs alone on p-01 to p-07 (7 hosts, each): GPUs 0-1 'chat'",
        "'chat' and 'sum' share p-08: GPUs 0 'chat', 1 'sum'",
        "'sum' runs alone on p-09 to p-17 (9 hosts, each): GPUs 0-1 'sum'",
    ]
    # two alike: each its own line, as before
    assert shared_host_lines([("a", "x", (0,)), ("b", "x", (0,))], 2) == [
        "'x' runs alone on a: GPUs 0 'x', 1 idle",
        "'x' runs alone on b: GPUs 0 'x', 1 idle",
    ]


def test_a_refusal_counts_the_gpus_of_several_shared_servers() -> None:
    """small (10 x TP1) and chat (1 x TP2) on two owned DGX: one full, one half idle (was "1 owned are free")."""
    with pytest.raises(InfeasibleError) as caught:
        plan_file(str(DATA / "two-dgx-refused.yaml"))
    said = str(caught.value)
    assert (
        "needs 3 servers; 0 owned are free, 1 shared ('small' 10, 'chat' 2 of their 16 GPUs taken, 4 idle) and "
        "hardware.buy is false"
    ) in said
