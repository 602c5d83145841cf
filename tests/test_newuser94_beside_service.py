"""newuser94: a lab's two owned 8 x H100 servers, a 70B FP8 service and an 8B fine-tune on the GPUs it leaves free.

What the planner does today, pinned: with two owned servers the job takes the one the service does not hold (a pool of
its own, its hosts apart from the service's, rendered so: its own kubeadm join labels, its own Ansible group with no
GPU list of the service's), and ``training-fits-idle-gpus`` says what the service's spare GPUs would hold; where the
service holds every owned server and nothing is bought, the job is refused at its model, and the refusal says the GPUs
the service's rate needs of those it holds and why no layout of the job fits the rest
(:mod:`generator.planner.beside_service`). fix182: where the job fits the GPUs the service's rate leaves of the one
owned server (within its deadline, its host RAM and files beside the service's), it is planned there, in the service's
pool, and nothing is bought for it (:mod:`generator.planner.beside_training`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.api import render_file
from generator.errors import InfeasibleError
from generator.planner import plan_workload
from generator.planner.plan import Plan
from generator.workload import load_workload
from tests.helpers import run_specgen

#: The persona's workload as README's training and owned-servers sections have them written.
LAB = """\
version: 1
name: lab
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-70B-Instruct
    inference:
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 8192
      avg_input_tokens: 1000
      avg_output_tokens: 300
      requests_per_second: 1
      slo: {ttft_p95_ms: 2000, tpot_ms: 60}
  - name: tune
    model: meta-llama/Llama-3.1-8B-Instruct
    training:
      method: lora
      sequence_length: 4096
      global_batch_size: 32
      dataset_tokens: 50000000
      epochs: 2
hardware:
  provider: baremetal
  buy: false
  inventory:
    - platform: dgx-h100
      count: 2
      hosts:
        - name: gpu-01
        - name: gpu-02
outputs: [terraform, ansible, kubernetes]
"""

#: The same lab with one of its servers only.
ONE_SERVER = (("count: 2", "count: 1"), ("        - name: gpu-02\n", ""))

#: A full fine-tune whose deadline needs more GPUs than the free server has.
FULL_BY_DEADLINE = (
    ("method: lora", "method: full"),
    ("dataset_tokens: 50000000", "dataset_tokens: 2000000000\n      deadline_hours: 8"),
)

RULE = (
    "a training job runs on those GPUs where a layout of it fits them within its deadline and runs a month, its host "
    "RAM and files beside the services', and they hold the servers alone (fix182): none does here"
)

#: What the refusal says of the rule since fix182 (before: "never with a service").
SHARES = (
    "; a training job shares servers only with the jobs it runs in turn with (run_after), and with services only on the "
    "GPUs their rates leave of owned servers (fix182): "
)

REFUSED_TAIL = (
    "or place a deployment before it elsewhere: the owned dgx-h100 (1 server) is taken by deployment 'chat'"
    + SHARES
    + "'chat' needs 2 of the 8 GPUs it holds of 1 "
    "owned dgx-h100 (8 x h100-sxm5-80gb) for its rate, 6 running replicas past it or idle; " + RULE
)


def _write(tmp_path: Path, *edits: tuple[str, str]) -> Path:
    text = LAB
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "lab.yaml"
    path.write_text(text)
    return path


def _plan(tmp_path: Path, *edits: tuple[str, str]) -> Plan:
    return plan_workload(load_workload(str(_write(tmp_path, *edits))))


def test_two_owned_servers_give_the_job_the_one_the_service_leaves(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    pools = {p.name: (p.nodes, p.owned_nodes, p.owned_hosts, p.deployments) for p in plan.pools}
    assert pools == {
        "chat_h100_sxm5_80gb": (1, 1, ("gpu-01",), ("chat",)),
        "tune_h100_sxm5_80gb": (1, 1, ("gpu-02",), ("tune",)),
    }
    chat, tune = plan.deployments
    # the service: 4 x TP2 fill its server, 1 of them for the rate, 3 on GPUs that would otherwise idle
    assert (chat.tp, chat.pp, chat.replicas, chat.details["replicas_past_rate"]) == (2, 1, 4, 3)
    # the job: TP1 x DP8 on the other server, 0.32 h a run
    assert (tune.tp, tune.pp, tune.replicas, round(tune.details["hours"], 2)) == (1, 1, 8, 0.32)
    found = [f for f in plan.findings if f.code == "training-fits-idle-gpus"]
    assert [f.path for f in found] == ["deployments[1]"]
    assert found[0].message.startswith(
        "deployment tune: a run fits the 6 GPU(s) of serving pool chat_h100_sxm5_80gb its rates do not need (of its 8 "
        "owned, 1 x 8-GPU dgx-h100; 6 GPU(s) running replicas past the rate's need (replicas_past_rate), whose place the "
        "job would take): TP1 ZeRO-0 x DP4"
    )
    # fix178: every degree the 6 idle GPUs hold is timed; the batch of 32 splits over DP1 / DP2 / DP4 of them, and
    # TP1 x DP4 (0.64 h a run) beats the TP4 x DP1 the search's own degrees gave (0.67 h)
    assert "on 4 h100-sxm5-80gb on one node, 47.9 GiB per GPU of 79.6 GiB, 0.64 h a run" in found[0].message


def test_the_render_keeps_the_job_and_the_service_on_servers_of_their_own(tmp_path: Path) -> None:
    from tests.test_iac_outputs import lint
    from tests.test_oracles import Rendered, ansible_group_problems, ansible_inventory, ansible_warnings, write_tree

    files = render_file(str(_write(tmp_path)))
    assert lint(files) == []
    spec = json.loads(files["spec.json"])
    assert [(p["name"], p["owned_hosts"], p["deployments"]) for p in spec["plan"]["pools"]] == [
        ("chat_h100_sxm5_80gb", ["gpu-01"], ["chat"]),
        ("tune_h100_sxm5_80gb", ["gpu-02"], ["tune"]),
    ]
    # each pool's nodes join with its own pool label, which the job's and the service's pods select
    assert "specgen.dev/pool=tune-h100-sxm5-80gb" in files["kubeadm/join-tune_h100_sxm5_80gb.yaml"]
    assert "specgen.dev/pool=chat-h100-sxm5-80gb" in files["kubeadm/join-chat_h100_sxm5_80gb.yaml"]
    write_tree(files, tmp_path / "tree", "ansible/")
    inventory = ansible_inventory(tmp_path / "tree")
    assert ansible_warnings(inventory) == []
    assert ansible_group_problems(Rendered(stem="lab", files=files, spec=spec), inventory) == []
    hosts = {group: sorted(inventory.data[group]["hosts"]) for group in ("chat_h100_sxm5_80gb", "tune_h100_sxm5_80gb")}
    assert hosts == {"chat_h100_sxm5_80gb": ["gpu-01"], "tune_h100_sxm5_80gb": ["gpu-02"]}


@pytest.mark.parametrize("edits", [(*ONE_SERVER, *FULL_BY_DEADLINE), FULL_BY_DEADLINE], ids=["one-server", "full-by-deadline"])
def test_a_job_the_free_servers_cannot_hold_is_refused_with_the_services_spare_gpus(
    tmp_path: Path, edits: tuple[tuple[str, str], ...]
) -> None:
    with pytest.raises(InfeasibleError) as err:
        _plan(tmp_path, *edits)
    assert str(err.value).endswith(REFUSED_TAIL)


def test_the_cli_refuses_it_at_the_jobs_model_with_exit_3(tmp_path: Path) -> None:
    path = _write(tmp_path, *ONE_SERVER, *FULL_BY_DEADLINE)  # fix182: the LoRA job alone now fits the spare GPUs
    done = run_specgen("plan", str(path))
    assert done.returncode == 3
    assert done.stdout == ""
    assert done.stderr.startswith(f"specgen: error: {path}:15:12: deployments[1].model: deployment 'tune' ")
    assert done.stderr.rstrip("\n").endswith(REFUSED_TAIL)
    assert "Traceback" not in done.stderr


def test_a_service_whose_rate_needs_every_gpu_it_holds_says_so(tmp_path: Path) -> None:
    with pytest.raises(InfeasibleError) as err:
        _plan(tmp_path, *ONE_SERVER, ("requests_per_second: 1", "requests_per_second: 24"))
    assert (SHARES + "'chat' needs all 8 GPUs it holds of 1 owned dgx-h100 (8 x h100-sxm5-80gb) for its rate; " + RULE) in str(
        err.value
    )


#: A second service the owned server holds beside the 70B one, listed first.
SMALL = """\
  - name: small
    model: meta-llama/Llama-3.1-8B-Instruct
    inference:
      precision: bf16
      max_context_tokens: 8192
      requests_per_second: 20
      slo: {ttft_p95_ms: 1000, tpot_ms: 40}
"""


def test_two_services_and_the_job_share_the_one_server(tmp_path: Path) -> None:
    """fix182: before, the job was refused here ('small' and 'chat' need 4 of the 8 GPUs); now a pass that places the
    job beside 'chat' and then 'small' on the GPUs left plans all three on the one server (2 + 2 + 4 GPUs)."""
    plan = _plan(tmp_path, *ONE_SERVER, ("deployments:\n", "deployments:\n" + SMALL))
    assert [(p.name, p.nodes, p.deployments) for p in plan.pools] == [
        ("small_chat_tune_h100_sxm5_80gb", 1, ("small", "chat", "tune"))
    ]
    assert [d.gpus for d in plan.deployments] == [2, 2, 4]
    found = [f.message for f in plan.findings if f.code == "training-beside-service"]
    assert len(found) == 1 and found[0].startswith("deployment tune: planned on 4 GPUs of gpu-01 in pool ")


@pytest.mark.parametrize(
    ("servers", "services", "said"),
    [
        (1, [("chat", 2)], "'chat' needs 2 of the 8 GPUs it holds of 1 owned dgx-h100 (8 x h100-sxm5-80gb) for its "
         "rate, 6 running replicas past it or idle"),
        (1, [("chat", 8)], "'chat' needs all 8 GPUs it holds of 1 owned dgx-h100 (8 x h100-sxm5-80gb) for its rate"),
        (2, [("small", 2), ("chat", 4)], "'small' and 'chat' need 6 of the 16 GPUs they hold of 2 owned dgx-h100 (8 x "
         "h100-sxm5-80gb) for their rates ('small' 2, 'chat' 4), 10 running replicas past them or idle"),
        (2, [("small", 8), ("chat", 8)], "'small' and 'chat' need all 16 GPUs they hold of 2 owned dgx-h100 (8 x "
         "h100-sxm5-80gb) for their rates ('small' 8, 'chat' 8)"),
    ],
)  # fmt: skip
def test_a_kinds_clause_counts_the_services_need_of_the_servers_gpus(
    servers: int, services: list[tuple[str, int]], said: str
) -> None:
    """One service or several, some GPUs spare or none: the servers' GPUs are servers x GPUs a server."""
    from generator.planner.beside_service import _kind_clause

    assert _kind_clause(("dgx-h100", "h100-sxm5-80gb", 8), servers, services) == said
