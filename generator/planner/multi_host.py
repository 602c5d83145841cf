"""A serving replica larger than one Linux host, and what running it takes.

A replica whose TP x PP exceeds one host's GPUs runs across hosts: two 8-GPU servers for a TP8 x PP2 replica,
or two compute trays of an NVIDIA GB200 NVL72 (one NVLink domain of 72 GPUs whose 18 trays of 4 GPUs are each
their own Linux host, platforms.json ``nodes``) for a TP8 one. :func:`hosts_per_replica` is the one rule for
whether it does; the finding, the deployment's Why and the Ansible group vars all follow it. What follows that a
single-host replica does not need:

- the serving engine is launched multi-node: vLLM over a Ray cluster or its multiprocessing backend across
  nodes (``--nnodes`` / ``--node-rank``), SGLang with ``--nnodes`` / ``--node-rank``; on Kubernetes one
  LeaderWorkerSet group per replica;
- on a system of several hosts in one NVLink domain only (multi-node NVLink: the rack-scale trays), NVLink
  between them maps GPU memory across hosts only through NVIDIA IMEX daemons, on Kubernetes set up per workload
  by a ComputeDomain of the NVIDIA DRA driver for GPUs. Neither is rendered.
"""

from __future__ import annotations

from math import ceil

from generator.catalog.records import PlatformSpec

#: Where each step is documented (pages a user can open).
VLLM_MULTI_NODE_URL = "https://docs.vllm.ai/en/stable/examples/online_serving/multi-node-serving/"
LEADER_WORKER_SET_URL = "https://docs.vllm.ai/en/latest/deployment/frameworks/lws.html"
IMEX_URL = "https://docs.nvidia.com/multi-node-nvlink-systems/imex-guide"
COMPUTE_DOMAIN_URL = "https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/dra-cds.html"
TORCHRUN_URL = "https://docs.pytorch.org/docs/stable/elastic/run.html"
#: Unsloth: "Unsloth currently supports multi-GPU setups through libraries like Accelerate and DeepSpeed ... the
#: process can be complex and requires manual setup" (its DDP guide launches on one machine).
UNSLOTH_MULTI_GPU_URL = "https://unsloth.ai/docs/basics/multi-gpu-training-with-unsloth"


def hosts_per_replica(gpus_per_host: int, replica_gpus: int) -> int:
    """Linux hosts one replica of ``replica_gpus`` (TP x PP) GPUs spans, at ``gpus_per_host`` GPUs each."""
    return max(1, ceil(replica_gpus / gpus_per_host))


def replica_hosts(platform: PlatformSpec, gpus_per_node: int, replica_gpus: int) -> int:
    """Linux hosts a replica spans on nodes of ``gpus_per_node`` GPUs of ``platform``, whose hosts share them evenly."""
    return hosts_per_replica(gpus_per_node // platform.hosts, replica_gpus)


def multi_host_note(platform: PlatformSpec, gpus_per_node: int, replica_gpus: int) -> str | None:
    """Why line for a replica wider than one host of ``platform``; None where it fits one host.

    ``gpus_per_node`` is the GPUs of one node (a whole rack-scale system); its hosts share them evenly.
    """
    per_host = gpus_per_node // platform.hosts
    hosts = replica_hosts(platform, gpus_per_node, replica_gpus)
    if hosts == 1:
        return None
    launch = (
        f"launch the engine multi-node (vLLM over Ray or multiprocessing across nodes, {VLLM_MULTI_NODE_URL}; "
        f"on Kubernetes one LeaderWorkerSet group of {hosts} pods per replica, {LEADER_WORKER_SET_URL})"
    )
    if platform.hosts == 1:
        machines = "servers" if platform.provider == "baremetal" else "instances"
        return (
            f"one replica ({replica_gpus} GPUs) spans {hosts} {platform.id} {machines} of {per_host} GPUs: {launch}; "
            "specgen renders none of it (Ansible group vars say hosts_per_replica)"
        )
    return (
        f"one replica ({replica_gpus} GPUs) spans {hosts} {platform.id} compute trays of {per_host} GPUs, each its own "
        f"Linux host: {launch}, and NVLink between trays needs NVIDIA IMEX on the hosts ({IMEX_URL}) or, on "
        f"Kubernetes, a ComputeDomain of the NVIDIA DRA driver for GPUs ({COMPUTE_DOMAIN_URL}); specgen renders "
        "neither (Ansible group vars say hosts_per_replica)"
    )


def job_hosts_text(world_gpus: int, hosts: int, framework: str | None) -> str:
    """What a training job over ``hosts`` Linux hosts takes to launch.

    newuser31 item 12: a DDP job over 4 one-GPU instances was planned without a word of it.
    """
    text = (
        f"the job's {world_gpus} GPUs span {hosts} hosts: launch it multi-node (torchrun --nnodes {hosts} with a "
        f"rendezvous endpoint, {TORCHRUN_URL}, or the framework's own multi-node launcher; on Kubernetes a Kubeflow "
        "PyTorchJob or a JobSet), which specgen does not render (Ansible group vars say hosts)"
    )
    if framework == "unsloth":
        text += (
            f"; Unsloth runs on several GPUs only through Accelerate or DeepSpeed, set up by hand ({UNSLOTH_MULTI_GPU_URL}): "
            "a layout on one host avoids it (pin the deployment's platform to a server or instance type holding its GPUs)"
        )
    return text
