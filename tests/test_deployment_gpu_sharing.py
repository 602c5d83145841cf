"""A deployment's own ``gpu_sharing`` (newuser42 item 7): refused where the workload's would be, at the deployment's
field; deployments of different sharing in pools of their own, each with its one sharing config; and the warning where
sharing makes the fleet cost more than whole GPUs (gpu-sharing-costs-more), with both figures.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from ruamel.yaml import YAML

from generator.api import plan_file, render_file
from generator.errors import MultipleInputError, SpecgenError
from generator.planner.plan import Plan
from generator.planner.sharing_cost import _more
from generator.workload import load_workload
from generator.workload.models import Workload

VALIDATED = """\
version: 1
name: lab
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
{chat}    inference: {{precision: bf16, max_context_tokens: 8192, requests_per_second: 1}}
  - name: tune
    model: meta-llama/Llama-3.1-8B-Instruct
{tune}    training: {{method: lora, dataset_tokens: 100000000, epochs: 1, deadline_hours: 24}}
hardware:
  provider: baremetal
  gpus: [{gpus}]
outputs: [ansible, kubernetes]
{k8s}"""

TS4 = "{strategy: time-slicing, replicas_per_gpu: 4}"
MIG3 = "{strategy: mig, mig_profile: 3g.40gb}"

# (case, fields the text takes, "line:col: field: message")
REFUSED = [
    (
        "training-job",
        {"tune": f"    gpu_sharing: {TS4}\n"},
        "9:18: deployments[1].gpu_sharing: not for a training job: it is planned on whole GPUs with their links; remove "
        "gpu_sharing or give it strategy none",
    ),
    (
        "wider-replica",
        {"chat": "    parallelism: {tp: 2}\n    gpu_sharing: {strategy: mps, replicas_per_gpu: 2}\n"},
        "7:18: deployments[0].gpu_sharing: not with parallelism tp 2: a replica of several GPUs keeps whole GPUs (MIG "
        "instances have no P2P, and shares could hand one pod slices of one GPU); remove gpu_sharing or pin tp and pp 1",
    ),
    (
        "mig-on-a-gpu-without-mig",
        {"chat": f"    gpu_sharing: {MIG3}\n", "gpus": "l40s-48gb"},
        "6:29: deployments[0].gpu_sharing.strategy: GPU 'l40s-48gb' does not support MIG (deployments[0].gpu_sharing."
        "strategy mig); the GPU from hardware.gpus[0]",
    ),
    (
        "mig-on-its-platforms-gpu-without-mig",
        # of the GPUs named, only the L40S is on its platform (newuser44 item 5: one that has the profile would do)
        {"chat": f"    platform: dell-r760\n    gpu_sharing: {MIG3}\n", "gpus": "h100-sxm5-80gb, l40s-48gb"},
        "7:29: deployments[0].gpu_sharing.strategy: GPU 'l40s-48gb' does not support MIG (deployments[0].gpu_sharing."
        "strategy mig); the GPU from hardware.gpus[1]",
    ),
    (
        "mig-profile-the-gpu-lacks",
        {"chat": "    gpu_sharing: {strategy: mig, mig_profile: 3g.20gb}\n"},
        "6:47: deployments[0].gpu_sharing.mig_profile: MIG profile '3g.20gb' does not exist on GPU 'a100-sxm4-80gb' (it "
        "has 1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb); the GPU from hardware.gpus[0]",
    ),
    (
        "not-nvidia",
        {"chat": f"    gpu_sharing: {TS4}\n", "gpus": "mi300x-192gb"},
        "6:18: deployments[0].gpu_sharing: GPU 'mi300x-192gb' is not an NVIDIA GPU: deployments[0].gpu_sharing needs "
        "NVIDIA GPUs; the GPU from hardware.gpus[0]",
    ),
    (
        "none-with-replicas",
        {"chat": "    gpu_sharing: {strategy: none, replicas_per_gpu: 4}\n"},
        "6:53: deployments[0].gpu_sharing.replicas_per_gpu: replicas_per_gpu is not for strategy none (whole GPUs)",
    ),
    (
        "mig-without-profile",
        {"chat": "    gpu_sharing: {strategy: mig}\n"},
        "6:29: deployments[0].gpu_sharing.strategy: strategy mig needs mig_profile",
    ),
    (
        "time-slicing-without-replicas",
        {"chat": "    gpu_sharing: {strategy: time-slicing}\n"},
        "6:29: deployments[0].gpu_sharing.strategy: strategy time-slicing needs replicas_per_gpu",
    ),
    (
        "none-at-the-workload",
        {"k8s": "kubernetes:\n  gpu_sharing: {strategy: none}\n"},
        # fuzz35 item 9: said only "not one of"; where strategy none is taken, and how to have whole GPUs everywhere
        "15:27: kubernetes.gpu_sharing.strategy: 'none' is not one of mig, mps, time-slicing; strategy none is a "
        "deployment's own setting (deployments[].gpu_sharing: {strategy: none} keeps that deployment on whole GPUs "
        "where kubernetes.gpu_sharing shares the rest); for whole GPUs everywhere, leave kubernetes.gpu_sharing out",
    ),
    (
        "none-at-the-workload-capitalised",
        {"k8s": "kubernetes:\n  gpu_sharing: {strategy: None}\n"},
        "15:27: kubernetes.gpu_sharing.strategy: 'None' is not one of mig, mps, time-slicing; strategy none is a "
        "deployment's own setting (deployments[].gpu_sharing: {strategy: none} keeps that deployment on whole GPUs "
        "where kubernetes.gpu_sharing shares the rest); for whole GPUs everywhere, leave kubernetes.gpu_sharing out",
    ),
    (
        "misspelt-at-the-workload",  # another value keeps the spelling hint
        {"k8s": "kubernetes:\n  gpu_sharing: {strategy: time-slice, replicas_per_gpu: 2}\n"},
        "15:27: kubernetes.gpu_sharing.strategy: 'time-slice' is not one of mig, mps, time-slicing; did you mean 'time-slicing'?",
    ),
]


def write(tmp_path: Path, text: str, name: str = "lab.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def validated(fields: dict[str, str]) -> str:
    return VALIDATED.format(**({"chat": "", "tune": "", "gpus": "a100-sxm4-80gb", "k8s": ""} | fields))


@pytest.mark.parametrize(("fields", "expected"), [(f, e) for _, f, e in REFUSED], ids=[c for c, _, _ in REFUSED])
def test_a_deployments_sharing_is_refused_at_its_field(tmp_path: Path, fields: dict[str, str], expected: str) -> None:
    path = write(tmp_path, validated(fields))
    with pytest.raises(SpecgenError) as caught:
        load_workload(path)
    errors = caught.value.errors if isinstance(caught.value, MultipleInputError) else [caught.value]
    assert [str(e) for e in errors] == [f"{path}:{expected}"]


def test_strategy_none_is_whole_gpus_even_on_a_training_job(tmp_path: Path) -> None:
    """``strategy: none`` asks nothing to be shared: a training job may say it (it keeps whole GPUs anyway)."""
    text = validated({"tune": "    gpu_sharing: {strategy: none}\n", "k8s": f"kubernetes:\n  gpu_sharing: {TS4}\n"})
    wl = load_workload(write(tmp_path, text)).workload
    assert [d.gpu_sharing for d in wl.deployments] == [None, ("none", None, None)]


CHATS = """\
version: 1
name: research
deployments:
  - name: chat-a
    model: meta-llama/Llama-3.1-8B-Instruct
{a}    inference: {{precision: bf16, max_context_tokens: 8192, requests_per_second: 0.5}}
  - name: chat-b
    model: Qwen/Qwen2.5-7B-Instruct
{b}    inference: {{precision: bf16, max_context_tokens: 8192, requests_per_second: 0.5}}
hardware:
  provider: {provider}
  gpus: [{gpu}]
objective: cost
outputs: [{outputs}]
{k8s}"""
GKE = "kubernetes:\n  gcp_project: acme-inference\n  location: us-central1\n  zone: us-central1-a\n"


def chats(a: str = "", b: str = "", *, provider: str = "baremetal", gpu: str = "h100-pcie-80gb", k8s: str = "") -> str:
    outputs = "terraform, ansible, kubernetes" if provider != "baremetal" else "ansible, kubernetes"
    return CHATS.format(a=a, b=b, provider=provider, gpu=gpu, outputs=outputs, k8s=k8s)


def load(text: str) -> Any:
    return YAML(typ="safe").load(text)


def findings(files: dict[str, str]) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for f in json.loads(files["spec.json"])["plan"]["findings"]:
        out.setdefault(f["code"], []).append((f["path"], f["message"]))
    return out


def test_a_shared_deployment_beside_a_whole_one_on_bare_metal(tmp_path: Path) -> None:
    """chat-a in MIG 3g.40gb instances, chat-b on whole GPUs: two pools, each with its own device-plugin config and
    only chat-a's nodes partitioned; and the fleet costs more than on whole GPUs, which is said with both figures."""
    path = write(tmp_path, chats(a=f"    gpu_sharing: {MIG3}\n"))
    _, plan = plan_file(str(path))
    pools = {p.name: (p.deployments, p.shares_per_gpu, p.nodes, p.node.platform_id) for p in plan.pools}
    assert pools == {
        "chat_a_h100_pcie_80gb": (("chat-a",), 2, 1, "dell-r760"),
        "chat_b_h100_pcie_80gb": (("chat-b",), None, 1, "dell-r760"),
    }
    assert plan.totals["usd_per_month"] == 3168.37
    _, whole = plan_file(str(write(tmp_path, chats(), "whole.yaml")))
    assert (len(whole.pools), whole.totals["usd_per_month"]) == (1, 2529.38)  # both on one server's whole GPUs
    (said,) = [f for f in plan.findings if f.code == "gpu-sharing-costs-more"]
    assert (said.level, said.path) == ("warning", "deployments[0].gpu_sharing")
    assert said.message == (
        "GPU sharing makes this fleet cost more (+25%): $3,168/month with GPUs shared against $2,529/month on whole GPUs "
        "(the same deployments planned without gpu_sharing). chat-a runs in shares of GPUs, which fill GPUs and servers "
        "of their own (a pool has one sharing config) and take no idle GPU of a pool on whole GPUs; to plan it on whole "
        "GPUs, remove gpu_sharing or give it gpu_sharing strategy none"
    )

    files = render_file(str(path))
    plugin = load(files["cluster/gpu-operator/manifests/configmap-specgen-device-plugin.yaml"])["data"]
    assert load(plugin["chat-a-h100-pcie-80gb"]) == {"flags": {"migStrategy": "single"}, "version": "v1"}
    assert load(plugin["chat-b-h100-pcie-80gb"]) == {"flags": {"migStrategy": "none"}, "version": "v1"}
    parted = load(files["cluster/gpu-operator/manifests/configmap-specgen-mig-parted.yaml"])["data"]["config.yaml"]
    assert sorted(load(parted)["mig-configs"]) == ["all-disabled", "h100-pcie-80gb-3g.40gb"]
    joins = {p: t for p, t in files.items() if p.startswith("kubeadm/join-")}
    assert "nvidia.com/mig.config=h100-pcie-80gb-3g.40gb" in joins["kubeadm/join-chat_a_h100_pcie_80gb.yaml"]
    assert "nvidia.com/mig.config" not in joins["kubeadm/join-chat_b_h100_pcie_80gb.yaml"]
    spec = {p["name"]: p.get("gpu_sharing") for p in json.loads(files["spec.json"])["plan"]["pools"]}
    assert spec == {"chat_a_h100_pcie_80gb": "mig 3g.40gb", "chat_b_h100_pcie_80gb": None}
    said_all = findings(files)
    assert said_all["gpu-sharing"] == [
        (
            "deployments[0].gpu_sharing",
            "GPU sharing configured (MIG: every GPU split into 3g.40gb instances, each pod gets one instance) for "
            "chat-a; each replica of one GPU is sized against its share (memory; SMs and memory bandwidth: the MIG "
            "instance's slices, or 1/replicas_per_gpu each with every replica at full load) and the shares are packed "
            "onto GPUs; a replica that does not fit its share keeps whole GPUs (gpu-share-too-small)",
        )
    ]
    assert "gpu-sharing-whole-gpus" not in said_all  # chat-b asked for whole GPUs: nothing to explain


def test_two_sharings_are_never_packed_into_one_pool(tmp_path: Path) -> None:
    """MIG for chat-a, time-slicing x4 for chat-b on 8-GPU A100 servers: a pool (and server) each, each device-plugin
    config its own; twice the whole-GPU fleet's cost, said."""
    text = chats(a=f"    gpu_sharing: {MIG3}\n", b=f"    gpu_sharing: {TS4}\n", gpu="a100-sxm4-80gb")
    files = render_file(str(write(tmp_path, text)))
    pools = {p["name"]: (p["shares_per_gpu"], p.get("gpu_sharing")) for p in json.loads(files["spec.json"])["plan"]["pools"]}
    assert pools == {"chat_a_a100_sxm4_80gb": (2, "mig 3g.40gb"), "chat_b_a100_sxm4_80gb": (4, "time-slicing x4")}
    plugin = load(files["cluster/gpu-operator/manifests/configmap-specgen-device-plugin.yaml"])["data"]
    assert load(plugin["chat-a-a100-sxm4-80gb"]) == {"flags": {"migStrategy": "single"}, "version": "v1"}
    assert load(plugin["chat-b-a100-sxm4-80gb"]) == {
        "flags": {"migStrategy": "none"},
        "sharing": {
            "timeSlicing": {"failRequestsGreaterThanOne": True, "resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}
        },
        "version": "v1",
    }
    said = findings(files)
    assert [p for p, _ in said["gpu-sharing"]] == ["deployments[0].gpu_sharing", "deployments[1].gpu_sharing"]
    ((path, message),) = said["gpu-sharing-costs-more"]
    # two fields ask and no kubernetes.gpu_sharing is in the file: the first one's (review28 item 2)
    assert path == "deployments[0].gpu_sharing"
    assert message.startswith(
        "GPU sharing makes this fleet cost more (+100%): $14,491/month with GPUs shared against $7,246/month on whole GPUs"
    )


def test_strategy_none_keeps_a_deployment_off_the_workloads_sharing_on_gke(tmp_path: Path) -> None:
    """Workload-level MIG with chat-b's ``strategy: none`` plans as chat-a's own MIG does: a GKE node pool partitioned
    for chat-a, one of whole GPUs for chat-b; no costs-more warning where sharing costs the same."""
    by_workload = chats(b="    gpu_sharing: {strategy: none}\n", provider="gcp", gpu="a100-sxm4-80gb", k8s=GKE)
    by_workload += f"  gpu_sharing: {MIG3}\n"
    by_deployment = chats(a=f"    gpu_sharing: {MIG3}\n", provider="gcp", gpu="a100-sxm4-80gb", k8s=GKE)
    plans = [plan_file(str(write(tmp_path, t, f"{i}.yaml")))[1] for i, t in enumerate((by_workload, by_deployment))]
    pools = [sorted((p.name, p.shares_per_gpu, p.node.platform_id, p.usd_per_hour) for p in plan.pools) for plan in plans]
    assert pools[0] == pools[1]
    assert [p[:3] for p in pools[0]] == [
        ("chat_a_a100_sxm4_80gb", 2, "gcp-a2-ultragpu-1g"),
        ("chat_b_a100_sxm4_80gb", None, "gcp-a2-ultragpu-1g"),
    ]
    assert [plan.totals["usd_per_month"] for plan in plans] == [7400.44, 7400.44]
    files = render_file(str(tmp_path / "0.yaml"))
    accelerators = {
        pool["metadata"]["name"]: pool["spec"]["nodeConfig"]["guestAccelerator"][0]
        for pool in (load(t) for p, t in files.items() if p.startswith("kubernetes/gcp/containernodepool-"))
    }
    shared = {name: a.get("gpuPartitionSize") for name, a in accelerators.items()}
    assert sorted(shared.values(), key=str) == ["3g.40gb", None]
    assert all("gpuSharingConfig" not in a for a in accelerators.values())
    said = findings(files)
    assert said["gpu-sharing"][0][0] == "kubernetes.gpu_sharing"
    assert "for chat-a;" in said["gpu-sharing"][0][1]
    assert "gpu-sharing-costs-more" not in said


def _fleet(usd: float, training: float = 0.0, free: int = 0) -> Plan:
    """A fleet's totals as the fleet ranking reads them: one 8-GPU server of 10 kW, ``free`` owned DGX H100 left free."""
    node = SimpleNamespace(power_components_w=10_000.0, power_w=10_200.0, gpus=8)
    totals = {
        "usd_per_month": usd,
        "training_usd_per_month": training,
        "training_usd_per_job": 0.0,
        "gpus": 8,
        "idle_gpus": 0,
        "nodes": 1,
        "power_w": 10_200.0,
        "inventory": [{"platform": "dgx-h100", "free": free}],
    }
    return cast("Plan", SimpleNamespace(totals=totals, pools=[SimpleNamespace(nodes=1, owned_nodes=0, node=node)]))


@pytest.mark.parametrize(
    ("shared", "whole", "said"),
    [
        # the month alone: as before
        (_fleet(3168.0), _fleet(2529.0), ("cost more (+25%)", "")),
        (_fleet(2529.0), _fleet(3168.0), None),
        # rented training runs a month: $1,000 + $500 against $1,100 ranks worse (before: $1,000 <= $1,100, silent)
        (
            _fleet(1000.0, training=500.0),
            _fleet(1100.0),
            (
                "cost more (+36%)",
                " (as ranked: $1,500 against $1,100 a month with rented training runs and owned servers left free)",
            ),
        ),
        # the whole-GPU fleet leaves an owned DGX H100 free at $1/h ($730 a month): $1,200 against $1,730 ranks
        # better (before: $1,200 > $1,000 warned)
        (_fleet(1200.0), _fleet(1000.0, free=1), None),
    ],
)
def test_costs_more_compares_as_the_fleet_ranking(shared: Plan, whole: Plan, said: tuple[str, str] | None) -> None:
    """review28 item 2: the warning compares the figure the fleet search ranked the fleets by, not the month alone."""
    wl = cast("Workload", SimpleNamespace(hardware=SimpleNamespace(provider="baremetal"), prices={"dgx-h100": 1.0}))
    assert _more(shared, whole, "cost", wl) == said


AKS_K8S = "kubernetes:\n  location: eastus2\n"


@pytest.mark.parametrize(
    ("gpu", "sharing", "azure"),
    [
        ("a100-sxm4-80gb", MIG3, False),
        ("a100-sxm4-80gb", "{strategy: mig, mig_profile: 3g.20gb}", False),  # a profile the GPU lacks
        ("h100-sxm5-80gb", "{strategy: mig, mig_profile: 1g.20gb}", False),  # the MIG manager makes it
        ("h100-sxm5-80gb", "{strategy: mig, mig_profile: 1g.20gb}", True),  # AKS's GPU instance profiles do not
        ("h100-sxm5-80gb", MIG3, True),
        ("l40s-48gb", MIG3, False),  # no MIG
        ("l40s-48gb", TS4, False),
        ("mi300x-192gb", TS4, False),  # not NVIDIA
        ("mi300x-192gb", MIG3, False),
    ],
)
def test_the_load_and_the_planner_decide_a_gpus_sharing_by_one_rule(tmp_path: Path, gpu: str, sharing: str, azure: bool) -> None:
    """review29 item 5: the load's check of a deployment's gpu_sharing and the planner's NOT_SHARED_HERE each had a copy
    of the per-GPU rule; the load refuses it where ``share_problem`` (the planner's) finds a problem, with its text."""
    from generator.workload.models import GpuSharing
    from generator.workload.sharing import share_problem

    text = validated({"chat": f"    gpu_sharing: {sharing}\n", "gpus": gpu})
    if azure:
        text = text.replace("provider: baremetal", "provider: azure").replace("[ansible, kubernetes]", "[kubernetes, terraform]")
        text += AKS_K8S
    parsed = YAML(typ="safe").load(text)["deployments"][0]["gpu_sharing"]
    field = "deployments[0].gpu_sharing"
    problem = share_problem(gpu, GpuSharing(**parsed), field, aks=azure)
    try:
        load_workload(write(tmp_path, text))
    except SpecgenError as caught:
        errors = caught.errors if isinstance(caught, MultipleInputError) else [caught]
        said = [str(e) for e in errors]
        assert problem is not None and [s for s in said if problem in s], said
    else:
        assert problem is None
