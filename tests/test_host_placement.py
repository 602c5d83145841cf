"""Which serving replicas each bare-metal host runs, on which GPUs (newuser36 item 6).

A pool's group vars give each service's pool-wide ``replicas``; a role starting services host by host (systemd or
podman, without a Kubernetes scheduler) read 8 chat replicas on each of two 8-GPU hosts the plan had packed as 4 + 4
beside a TP4 replica. Each host now carries ``specgen_replicas`` (:mod:`generator.planner.placement`).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from generator.planner import plan_workload
from generator.render import render_plan
from generator.render.hosts import host_node
from generator.render.site_groups import profile_members
from generator.workload import load_workload
from tests.helpers import ansible_reader

REPO = Path(__file__).resolve().parents[1]

SHARED = """\
version: 1
name: colo
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    platform: dell-xe9680-hgx-h100-h200
    parallelism: {tp: 1}
    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: RATE, min_replicas: MIN,
                slo: {ttft_p95_ms: 2000, tpot_ms: 50}}
  - name: moe
    model: Qwen/Qwen3-30B-A3B
    platform: dell-xe9680-hgx-h100-h200
    parallelism: {tp: 4}
    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 1, slo: {ttft_p95_ms: 2000, tpot_ms: 50}}
hardware: {provider: baremetal, gpus: [h100-sxm5-80gb]}
outputs: [ansible]
"""


def _hosts(text: str, tmp_path: Path) -> tuple[Any, dict[str, dict[str, Any]]]:
    path = tmp_path / "w.yaml"
    path.write_text(text)
    loaded = load_workload(str(path))
    plan = plan_workload(loaded)
    return plan, _inventory_hosts(render_plan(plan, loaded.workload))


def _inventory_hosts(files: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Each host of the rendered inventory and hosts.yml.example: its host vars and its group (``pool``)."""
    hosts: dict[str, dict[str, Any]] = {}
    for name in ("ansible/inventory.yml", "ansible/hosts.yml.example"):
        if name in files:
            groups = ansible_reader().load(files[name].split("---\n", 1)[1])["all"]["children"]
            given: dict[str, dict[str, Any]] = {}  # a per-site plan's host vars sit in its site's group, under sites
            _host_vars(groups, given)
            for group, members in groups.items():
                named = (members or {}).get("hosts") or {}
                hosts.update({h: {**given.get(h, {}), "pool": group} for h in named})
    return hosts


def _host_vars(groups: dict[str, Any], given: dict[str, dict[str, Any]]) -> None:
    """Every host's vars, wherever in the groups' tree they are given."""
    for members in groups.values():
        for host, values in ((members or {}).get("hosts") or {}).items():
            given.setdefault(host, {}).update(values or {})
        _host_vars((members or {}).get("children") or {}, given)


def test_a_shared_pool_packs_the_widest_replicas_first_on_aligned_gpus(tmp_path: Path) -> None:
    plan, hosts = _hosts(SHARED.replace("RATE", "200").replace("MIN", "1"), tmp_path)
    chat = next(d for d in plan.deployments if d.name == "chat")
    (pool,) = plan.pools
    assert pool.nodes == 2 and chat.replicas > 4  # both hosts hold chat replicas
    first, second = (hosts[h]["specgen_replicas"] for h in sorted(hosts))
    assert first[0] == {"deployment": "moe", "replica": 1, "gpus": [0, 1, 2, 3]}
    assert [r["gpus"] for r in first[1:]] == [[4], [5], [6], [7]]
    assert [r["gpus"] for r in second] == [[g] for g in range(chat.replicas - 4)]
    assert [r["replica"] for r in first[1:] + second] == list(range(1, chat.replicas + 1))


def test_a_service_with_min_replicas_is_placed_on_two_hosts(tmp_path: Path) -> None:
    """Two TP1 replicas planned on two nodes for min_replicas 2 (spread.py) went both to the first host with room."""
    plan, hosts = _hosts(SHARED.replace("RATE", "1").replace("MIN", "2"), tmp_path)
    chat = next(d for d in plan.deployments if d.name == "chat")
    assert chat.replicas == 2
    holding = [h for h, v in hosts.items() if any(r["deployment"] == "chat" for r in v["specgen_replicas"])]
    assert len(holding) == 2


def _examples() -> list[str]:
    """The shipped bare-metal examples (a cloud's hosts come and go: no per-host vars, a dynamic inventory)."""
    return sorted(
        p.name for p in (REPO / "examples").glob("*.yaml") if load_workload(str(p)).workload.hardware.provider == "baremetal"
    )


@pytest.mark.parametrize("example", _examples())
def test_every_replica_is_placed_once_within_its_hosts_gpus(example: str) -> None:
    """A property over every shipped example: on bare metal, each serving replica of a pool is on its hosts once,
    each on GPUs of its own; a pool with a training job (or shared GPUs) is placed by its launcher, not here."""
    loaded = load_workload(str(REPO / "examples" / example))
    plan = plan_workload(loaded)
    hosts = _inventory_hosts(render_plan(plan, loaded.workload))
    # a per-site plan (sites:) runs its first profile's pools at each of that profile's sites (newuser113 / fix203)
    sites = len(profile_members(plan, 0)) or 1
    for pool in plan.pools:
        mine = {h: v for h, v in hosts.items() if v["pool"] == pool.name}
        assert len(mine) == pool.hosts * sites
        training = any(d.kind != "inference" and d.in_pool(pool.name) for d in plan.deployments)
        if training:
            assert not any("specgen_replicas" in v for v in mine.values())
            continue
        per_host = host_node(pool.node).gpus
        placed: Counter[tuple[str, int]] = Counter()
        for v in mine.values():
            gpus = [g for r in v["specgen_replicas"] for g in r["gpus"]]
            assert len(gpus) == len(set(gpus)) and all(0 <= g < per_host for g in gpus)
            placed.update((r["deployment"], r["replica"]) for r in v["specgen_replicas"])
        for d in plan.deployments:
            if (share := d.in_pool(pool.name)) is not None:
                tp, pp, replicas, _ = share
                span = -(-tp * pp // per_host)  # hosts a replica spans
                every = dict.fromkeys(range(1, replicas + 1), span * sites)
                assert {n: placed[(d.name, n)] for n in range(1, replicas + 1)} == every


GB200 = """\
version: 1
name: gb
deployments:
DEPLOYMENTS
hardware: {gpus: [gb200-186gb], provider: baremetal, cooling: liquid, rack_power_kw: 130}
outputs: [ansible]
"""


def _gb200(tmp_path: Path, deployments: str) -> tuple[Any, dict[str, dict[str, Any]]]:
    return _hosts(GB200.replace("DEPLOYMENTS", deployments), tmp_path)


def test_min_replicas_on_a_rack_scale_system_spreads_over_its_trays(tmp_path: Path) -> None:
    """fuzz29 item 2: min_replicas bought a second $3M NVL72 rack, which then stood empty; a tray is a host."""
    plan, hosts = _gb200(
        tmp_path,
        "  - name: small\n    model: meta-llama/Llama-3.1-8B-Instruct\n"
        "    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 50, min_replicas: 3,\n"
        "                slo: {ttft_p95_ms: 1000, tpot_ms: 30}}\n",
    )
    (pool,) = plan.pools
    assert pool.nodes == 1 and pool.hosts == 18
    holding = [h for h, v in hosts.items() if v.get("specgen_replicas")]
    # every tray holds replicas: the rack's 72 GPUs run one each, past the rate's need (newuser46 item 2)
    (small,) = plan.deployments
    assert (len(holding), small.replicas) == (18, 72) and small.details["replicas_past_rate"] > 0
    assert not [f for f in plan.findings if f.code == "replicas-not-spread"]


@pytest.mark.parametrize(("tp", "pp", "rate"), [(4, 4, 30), (2, 3, 240)])
def test_a_replica_on_rack_scale_systems_stays_in_one_system_and_trays_are_shared(
    tmp_path: Path, tp: int, pp: int, rate: int
) -> None:
    """fuzz29 items 3 and 4: a TP4 x PP4 replica ran on trays of two NVL72 racks; TP2 x PP3 replicas, 12 to an NVL72 as
    the planner counts them (GPU by GPU), took whole trays each and the pool got no placement at all."""
    model = "meta-llama/Llama-3.1-405B-Instruct" if tp * pp == 16 else "meta-llama/Llama-3.1-70B-Instruct"
    plan, hosts = _gb200(
        tmp_path,
        f"  - name: m\n    model: {model}\n    parallelism: {{tp: {tp}, pp: {pp}}}\n"
        f"    inference: {{precision: bf16, max_context_tokens: 8192, requests_per_second: {rate}}}\n",
    )
    (pool,) = plan.pools
    (dep,) = plan.deployments
    names = sorted(hosts)  # <pool>-01 ... in the inventory's order: 18 trays a system
    where: dict[int, set[int]] = {}  # replica -> systems its hosts are in
    gpus = 0
    for index, name in enumerate(names):
        for r in hosts[name]["specgen_replicas"]:
            where.setdefault(r["replica"], set()).add(index // 18)
            gpus += len(r["gpus"])
    assert sorted(where) == list(range(1, dep.replicas + 1))
    assert all(len(systems) == 1 for systems in where.values())
    assert gpus == dep.replicas * tp * pp
    assert pool.nodes == -(-dep.replicas // (72 // (tp * pp)))  # the planner's count, which the placement holds


def test_a_spread_the_pools_gpus_cannot_hold_is_not_the_fleet_chosen(tmp_path: Path) -> None:
    """fuzz29 item 1: two TP1 replicas (min_replicas 2) beside three TP4 ones on two 8-GPU servers: one server holds
    two TP4, so both TP1 share the other; the plan said "min_replicas spreads them" (then warned replicas-not-spread
    of the fleet it priced). A fleet that keeps them on two servers comes first (newuser48 item 1): pools apart."""
    text = (
        SHARED.replace("RATE", "1")
        .replace("MIN", "2")
        .replace(
            "requests_per_second: 1, slo: {ttft_p95_ms: 2000, tpot_ms: 50}}\nhardware",
            "requests_per_second: 1, min_replicas: 3, slo: {ttft_p95_ms: 2000, tpot_ms: 50}}\nhardware",
        )
    )
    plan, hosts = _hosts(text, tmp_path)
    assert not [f for f in plan.findings if f.code == "replicas-not-spread"]
    assert [(p.deployments, p.nodes) for p in plan.pools] == [(("chat",), 2), (("moe",), 2)]
    holding = [h for h, v in hosts.items() if any(r["deployment"] == "chat" for r in v["specgen_replicas"])]
    assert len(holding) == 2


def test_a_spread_is_repaired_by_moving_a_narrower_replica_of_another_service(tmp_path: Path) -> None:
    """review25 G: four TP2 replicas filled the one host with room and both TP1 replicas of a min_replicas 2 service
    shared the third, with a warning that no packing spread them; one TP2 replica moved frees a GPU for one of them."""
    plan, hosts = _hosts(
        "version: 1\nname: pack4\ndeployments:\n"
        "  - name: a\n    model: meta-llama/Llama-3.1-70B-Instruct\n    pool: shared\n    parallelism: {tp: 4}\n"
        "    inference: {precision: fp8, max_context_tokens: 8192, requests_per_second: 20}\n"
        "  - name: b\n    model: meta-llama/Llama-3.1-8B-Instruct\n    pool: shared\n    parallelism: {tp: 2}\n"
        "    inference: {max_context_tokens: 8192, requests_per_second: 120}\n"
        "  - name: c\n    model: meta-llama/Llama-3.1-8B-Instruct\n    pool: shared\n    parallelism: {tp: 1}\n"
        "    inference: {max_context_tokens: 8192, requests_per_second: 1, min_replicas: 2}\n"
        "hardware:\n  provider: baremetal\n  gpus: [h100-sxm5-80gb]\n  buy: false\n"
        "  inventory:\n    - {platform: dgx-h100, gpu: h100-sxm5-80gb, count: 4}\noutputs: [ansible]\n",
        tmp_path,
    )
    placed = {h: [(r["deployment"], r["gpus"]) for r in v.get("specgen_replicas", [])] for h, v in hosts.items()}
    assert sum(any(d == "c" for d, _ in on) for on in placed.values()) == 2
    assert not [f for f in plan.findings if f.code == "replicas-not-spread"]
    for on in placed.values():  # each on GPUs of its own, a TP2 replica on an aligned pair
        gpus = [g for _, gs in on for g in gs]
        assert len(gpus) == len(set(gpus))
        assert all(gs[0] % len(gs) == 0 for d, gs in on if d == "b")
