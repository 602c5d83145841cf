"""fix182: a training job planned on the GPUs an owned server's service leaves, where it would buy a server or be refused.

The lab of newuser94 with one owned DGX H100: a 70B FP8 service whose rate needs 2 of its 8 GPUs and a LoRA of an 8B
model. Before, the job bought a GH200 server of its own (buying allowed) or was refused (``buy: false``); now it runs on
4 of the 6 GPUs the service's rate leaves, in the service's pool, where its deadline, runs a month, host RAM and files
allow; where they do not (or the rate needs every GPU, or the job names a pool of its own) it is bought or refused as
before, with the reason.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from generator.errors import InfeasibleError
from generator.planner import plan_workload
from generator.planner.beside_training import _host_fits, free_by_node
from generator.sizing.constants import Constants
from generator.units import GIB
from generator.workload import load_workload
from tests.test_newuser94_beside_service import FULL_BY_DEADLINE, LAB, ONE_SERVER

BUY = (("  buy: false\n", ""),)
BUSY = (("requests_per_second: 1", "requests_per_second: 24"),)  # the rate needs all 8 GPUs
OWN_POOL = (("  - name: tune\n", "  - name: tune\n    pool: tuning\n"),)


def _plan_or_refusal(tmp_path: Path, edits: tuple[tuple[str, str], ...]) -> tuple[list[tuple[str, int, int]], str]:
    text = LAB
    for old, new in (*ONE_SERVER, *edits):
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "lab.yaml"
    path.write_text(text)
    try:
        plan = plan_workload(load_workload(str(path)))
    except InfeasibleError as exc:
        return [], str(exc)
    pools = [(p.name, p.nodes, p.owned_nodes) for p in plan.pools]
    return pools, " ".join(f.code for f in plan.findings)


@pytest.mark.parametrize(
    ("edits", "pools", "said"),
    [
        # the job fits the spare GPUs: placed there, nothing bought, bought or not allowed
        ((), [("chat_tune_h100_sxm5_80gb", 1, 1)], "training-beside-service"),
        (BUY, [("chat_tune_h100_sxm5_80gb", 1, 1)], "training-beside-service"),
        # the rate needs every GPU: refused with buy: false, a server of its own bought otherwise
        (BUSY, [], "'chat' needs all 8 GPUs it holds"),
        (BUSY + BUY, [("chat_h100_sxm5_80gb", 1, 1), ("tune_gh200_96gb", 1, 0)], ""),
        # a full fine-tune whose deadline needs more GPUs than the 6 spare: refused as before, with the rule
        (FULL_BY_DEADLINE, [], "none does here"),
        # a job naming a pool of its own keeps it (bought)
        (OWN_POOL + BUY, [("chat_h100_sxm5_80gb", 1, 1), ("tuning_gh200_96gb", 1, 0)], ""),
    ],
    ids=["fits", "fits-buy-allowed", "rate-needs-all", "rate-needs-all-buy", "deadline", "own-pool"],
)
def test_the_job_runs_beside_the_service_only_where_it_fits(
    tmp_path: Path, edits: tuple[tuple[str, str], ...], pools: list[tuple[str, int, int]], said: str
) -> None:
    got, text = _plan_or_refusal(tmp_path, edits)
    assert got == pools
    assert said in text


@pytest.mark.parametrize(
    ("replicas", "nodes", "gpus", "free"),
    [
        (1, 1, 2, [6]),  # one TP2 replica of an 8-GPU server
        (4, 1, 2, [0]),  # filled: none left
        (5, 2, 2, [0, 6]),  # packed server by server
        (1, 2, 2, [6, 8]),  # a whole server left
        (1, 1, 3, None),  # 3 GPUs do not divide 8: no whole replicas a server
    ],
)
def test_free_gpus_by_server(replicas: int, nodes: int, gpus: int, free: list[int] | None) -> None:
    opt = SimpleNamespace(
        candidate=SimpleNamespace(gpus_per_node=8, nodes=nodes), replica_shape=SimpleNamespace(par=SimpleNamespace(gpus=gpus))
    )
    assert free_by_node(opt, replicas) == free  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("ram_gib", "job_gib", "service_gib", "nvme_tb", "files_tb", "fits"),
    [
        (2048, 19, 0, 30.72, 0.1, True),
        (64, 19, 20, 30.72, 0.1, True),  # 16 + 19 + 20 = 55 GiB of 64
        (64, 19, 30, 30.72, 0.1, False),  # 65 GiB: the service's host RAM beside the job's is over
        (None, 19, 30, 30.72, 0.1, True),  # no RAM figure: not held against it
        (2048, 19, 0, 1.0, 1.5, False),  # the drives do not hold both's files
    ],
)
def test_the_server_holds_the_jobs_host_ram_and_files_beside_the_services(
    ram_gib: int | None, job_gib: int, service_gib: int, nvme_tb: float, files_tb: float, fits: bool
) -> None:
    def option(gib: int, tb: float) -> SimpleNamespace:
        needs = SimpleNamespace(host_ram_bytes=gib * GIB, files_bytes=int(tb * 1e12))
        return SimpleNamespace(needs=needs, node=SimpleNamespace(ram_gib=ram_gib, nvme_tb=nvme_tb))

    job = option(job_gib, files_tb / 2)
    assert _host_fits(job, [option(service_gib, files_tb / 2)], Constants()) is fits  # type: ignore[arg-type,list-item]
    # two services of half the host RAM each: the same sum
    halves = [option(service_gib // 2, files_tb / 4), option(service_gib - service_gib // 2, files_tb / 4)]
    assert _host_fits(job, halves, Constants()) is fits  # type: ignore[arg-type]


def test_newuser98s_monthly_lora_runs_on_the_idle_gpus_of_its_owned_dgx(tmp_path: Path) -> None:
    """newuser98 at 1 req/s of chat: four services fill 12 of the two owned DGX H100's 16 GPUs; the monthly LoRA (1.61 h)
    bought a $197,000 XE8640 of its own, $12,192/month. Now it runs on idle GPUs: capex $0, $5,566/month (on 4 of them
    until acc181's fixed 70 us a vLLM MoE layer slowed 'tools' (Qwen3-30B-A3B, 48 MoE layers), whose replicas now
    leave 2: 3.23 h a run)."""
    from tests.test_newuser98_colo_rag import PERSONA

    path = tmp_path / "rag.yaml"
    path.write_text(PERSONA.format(rate=1))
    plan = plan_workload(load_workload(str(path)))
    assert [(p.nodes, p.owned_nodes, p.deployments) for p in plan.pools] == [(2, 2, ("embed", "rerank", "chat", "tools", "tune"))]
    assert (plan.totals["capex_usd"], round(plan.totals["usd_per_month"])) == (0, 5566)
    found = [f.message for f in plan.findings if f.code == "training-beside-service"]
    assert len(found) == 1
    assert found[0].startswith("deployment tune: planned on 2 GPUs of one of its servers (dgx-01, dgx-02) in pool ")
    assert "its best layout on servers of its own buys 1 x dell-xe8640, $197,000 capex, $6,626 a month" in found[0]
