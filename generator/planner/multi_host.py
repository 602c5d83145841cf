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

from math import ceil, gcd

from generator.catalog.records import PlatformSpec
from generator.sizing.frameworks import UNSLOTH_MULTI_GPU

#: Where each step is documented (pages a user can open).
VLLM_MULTI_NODE_URL = "https://docs.vllm.ai/en/stable/examples/online_serving/multi-node-serving/"
LEADER_WORKER_SET_URL = "https://docs.vllm.ai/en/latest/deployment/frameworks/lws.html"
IMEX_URL = "https://docs.nvidia.com/multi-node-nvlink-systems/imex-guide"
COMPUTE_DOMAIN_URL = "https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/dra-cds.html"
TORCHRUN_URL = "https://docs.pytorch.org/docs/stable/elastic/run.html"
#: vLLM's data parallelism over several nodes: one ``vllm serve`` a node, each with its ranks
#: (``--data-parallel-size-local``), the nodes after the first ``--headless`` with ``--data-parallel-start-rank``, all
#: with the first node's ``--data-parallel-address`` and ``--data-parallel-rpc-port``.
VLLM_DATA_PARALLEL_URL = "https://docs.vllm.ai/en/latest/serving/data_parallel_deployment.html"
#: vLLM's default ``--data-parallel-rpc-port`` (``ParallelConfig.data_parallel_rpc_port``, vllm/config/parallel.py).
VLLM_DP_RPC_PORT = 29550
#: SGLang's multi-node flags (``--nnodes``, ``--node-rank``, ``--dist-init-addr host:port``).
SGLANG_SERVER_ARGS_URL = "https://docs.sglang.ai/advanced_features/server_arguments.html"
#: The port the replica's first host takes SGLang's ``--dist-init-addr host:port`` on: SGLang has no default (its
#: ``dist_init_addr`` is None, and a multi-node launch asserts host:port); the port of SGLang's multi-node page
#: ("replace 172.16.4.52:20000 with your own node ip address and port of the first node").
SGLANG_DIST_INIT_PORT = 20000
SGLANG_MULTI_NODE_URL = "https://docs.sglang.io/references/multi_node_deployment/multi_node.html"
#: SGLang over LeaderWorkerSet on Kubernetes (its page for a replica of several hosts).
SGLANG_LWS_URL = "https://docs.sglang.io/references/multi_node_deployment/deploy_on_k8s.html"


def hosts_per_replica(gpus_per_host: int, replica_gpus: int) -> int:
    """Linux hosts one replica of ``replica_gpus`` (TP x PP) GPUs spans, at ``gpus_per_host`` GPUs each."""
    return max(1, ceil(replica_gpus / gpus_per_host))


def replica_hosts(platform: PlatformSpec, gpus_per_node: int, replica_gpus: int) -> int:
    """Linux hosts a replica spans on nodes of ``gpus_per_node`` GPUs of ``platform``, whose hosts share them evenly."""
    return hosts_per_replica(gpus_per_node // platform.hosts, replica_gpus)


def data_parallel_host_args(engine: str, tp: int, ep: int, pp: int, gpus_per_host: int) -> tuple[tuple[str, ...], ...]:
    """Each host's own engine flags, first host first, for an attention-DP replica over several hosts (review72 item 9).

    Beside the replica's flags (``--data-parallel-size`` / ``--enable-expert-parallel``, SGLang's ``--tp-size``,
    ``--enable-dp-attention``, ``--dp-size``), every host passes its own: vLLM runs one ``vllm serve`` a host with its
    ranks (``--data-parallel-size-local``; the hosts after the first ``--headless``, from ``--data-parallel-start-rank``)
    and the RPC port (:data:`VLLM_DATA_PARALLEL_URL`); SGLang ``--nnodes`` and ``--node-rank``
    (:data:`SGLANG_SERVER_ARGS_URL`). Each host also names the replica's first host (vLLM ``--data-parallel-address``,
    SGLang ``--dist-init-addr host:port``), which only the inventory knows. Empty where one host holds the replica,
    attention is not data-parallel, or a pipeline splits each rank over hosts (not rendered: Ray / LeaderWorkerSet).
    """
    dp = ep // tp
    hosts = hosts_per_replica(gpus_per_host, ep * pp)
    if dp <= 1 or hosts <= 1 or pp > 1 or dp % hosts:
        return ()
    local = dp // hosts
    if engine == "sglang":
        return tuple(("--nnodes", str(hosts), "--node-rank", str(i)) for i in range(hosts))
    if engine != "vllm":
        return ()
    return tuple(
        (
            *(("--headless",) if i else ()),
            "--data-parallel-size-local",
            str(local),
            *(("--data-parallel-start-rank", str(i * local)) if i else ()),
            "--data-parallel-rpc-port",
            str(VLLM_DP_RPC_PORT),
        )
        for i in range(hosts)
    )


#: The flag each host of a multi-host attention-DP replica names its replica's first host with, by engine.
DATA_PARALLEL_ADDRESS_FLAG = {"vllm": "--data-parallel-address", "sglang": "--dist-init-addr"}


def data_parallel_launch_text(engine: str, host_args: tuple[tuple[str, ...], ...]) -> str:
    """How each host of an attention-DP replica is started (:func:`data_parallel_host_args`), for the finding."""
    flag = DATA_PARALLEL_ADDRESS_FLAG[engine]
    each = "; ".join(f"host {i + 1}: {' '.join(args)}" for i, args in enumerate(host_args))
    if engine == "sglang":
        return (
            f"start SGLang on each host of a replica with the replica's flags and its own ({each}), each with {flag} "
            f"<the replica's first host>:{SGLANG_DIST_INIT_PORT} (host:port; SGLang has no default port, "
            f"{SGLANG_MULTI_NODE_URL}, {SGLANG_SERVER_ARGS_URL})"
        )
    return (
        f"start one vllm serve on each host of a replica (vLLM's multi-node data parallelism, {VLLM_DATA_PARALLEL_URL}) "
        f"with the replica's --data-parallel-size and --enable-expert-parallel and its own flags ({each}), each with "
        f"{flag} <the replica's first host>; the API server runs on the first"
    )


def multi_node_launch_text(engine: str, hosts: int) -> str:
    """How a TP / PP replica over ``hosts`` Linux hosts is launched, in ``engine``'s own terms.

    newuser90: an SGLang replica of TP8 x PP2 over two servers was told to launch as vLLM does (over Ray, with vLLM's
    pages); SGLang takes ``--nnodes`` / ``--node-rank`` / ``--dist-init-addr`` on each host instead.
    """
    if engine == "sglang":
        ranks = ", ".join(str(rank) for rank in range(hosts))
        return (
            f"launch the engine multi-node (SGLang on each host with --nnodes {hosts}, its own --node-rank ({ranks}) "
            f"and --dist-init-addr <the replica's first host>:{SGLANG_DIST_INIT_PORT}, {SGLANG_MULTI_NODE_URL}; "
            f"on Kubernetes one LeaderWorkerSet group of {hosts} pods per replica, {SGLANG_LWS_URL})"
        )
    return (
        f"launch the engine multi-node (vLLM over Ray or multiprocessing across nodes, {VLLM_MULTI_NODE_URL}; "
        f"on Kubernetes one LeaderWorkerSet group of {hosts} pods per replica, {LEADER_WORKER_SET_URL})"
    )


def multi_host_note(
    platform: PlatformSpec,
    gpus_per_node: int,
    replica_gpus: int,
    host_args: tuple[tuple[str, ...], ...] = (),
    engine: str = "vllm",
) -> str | None:
    """Why line for a replica wider than one host of ``platform``; None where it fits one host.

    ``gpus_per_node`` is the GPUs of one node (a whole rack-scale system); its hosts share them evenly. ``host_args``:
    an attention-DP replica's own flags a host (:func:`data_parallel_host_args`), which the Ansible group vars carry.
    """
    per_host = gpus_per_node // platform.hosts
    hosts = replica_hosts(platform, gpus_per_node, replica_gpus)
    if hosts == 1:
        return None
    launch = multi_node_launch_text(engine, hosts)
    if host_args and platform.hosts == 1:
        lws = SGLANG_LWS_URL if engine == "sglang" else LEADER_WORKER_SET_URL
        machines = "servers" if platform.provider == "baremetal" else "instances"
        return (
            f"one replica ({replica_gpus} GPUs) spans {hosts} {platform.id} {machines} of {per_host} GPUs: "
            f"{data_parallel_launch_text(engine, host_args)}; on Kubernetes one LeaderWorkerSet group of {hosts} pods "
            f"per replica ({lws}); the Ansible group vars carry each host's flags "
            "(engine.data_parallel_hosts), the first host's address is the role's to fill, the launch is not rendered"
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


#: Bytes a token carries from one pipeline stage to the next: vLLM's decoder models send the hidden state and the
#: residual, both hidden_size wide, in the activations' 16-bit dtype (vllm/model_executor/models/llama.py,
#: ``LlamaModel.forward``: ``IntermediateTensors({"hidden_states": hidden_states, "residual": residual})`` on every
#: rank but the last of the pipeline group).
STAGE_HOP_TENSORS = 2
STAGE_HOP_BYTES_PER_VALUE = 2


def every_hop_leaves_host(platform: PlatformSpec, gpus_per_node: int, tp: int, pp: int) -> bool:
    """Whether each host of a TP x PP replica holds one stage, so that every hop between stages crosses the network."""
    return (
        platform.hosts == 1 and replica_hosts(platform, gpus_per_node, tp * pp) > 1 and gpus_per_node // platform.hosts < 2 * tp
    )


def stage_hop_text(
    platform: PlatformSpec,
    gpus_per_node: int,
    tp: int,
    pp: int,
    hidden_size: int,
    network: tuple[float, str],
    engine: str = "vllm",
) -> str | None:
    """What a pipeline's hops between hosts cross, at what rate; None where every stage of a replica shares one host.

    ``network``: Gb/s one host sends to the others and what carries it (:func:`generator.planner.nodes.node_link`).
    The sizing times no hop between stages (only the TP and EP collectives), so the text says so, with what one token
    carries. newuser61 item 14: TP1 x PP2 on two one-GPU p5.4xlarge instances was said to run over NVLink.
    """
    hosts = replica_hosts(platform, gpus_per_node, tp * pp)
    if hosts == 1 or platform.hosts > 1:  # a rack-scale system's trays share one NVLink domain
        return None
    machines = "servers" if platform.provider == "baremetal" else "instances"
    gbps, carrier = network
    per_token = STAGE_HOP_TENSORS * hidden_size * STAGE_HOP_BYTES_PER_VALUE
    per_host = gpus_per_node // platform.hosts
    if tp > per_host:  # a stage wider than a server (a pinned EP): each stage on several of them (review72 item 1)
        crossing = (
            f"each stage on {ceil(tp / per_host)} of its {hosts} {platform.id} {machines}: every hop between stages "
            "crosses their network"
        )
    elif every_hop_leaves_host(platform, gpus_per_node, tp, pp):
        crossing = f"one stage on each of its {hosts} {platform.id} {machines}: every hop between stages crosses their network"
    else:
        crossing = f"the pipeline's hops between its {hosts} {machines} cross their network"
    rate = f"{gbps:,g} Gb/s ({carrier})" if gbps else f"({carrier}, of no published rate)"
    timing = f", {per_token * 8 / (gbps * 1e3):.2g} us a token at that rate" if gbps else ""
    sender = "SGLang" if engine == "sglang" else "vLLM"  # both send the two tensors (SGLang: PPProxyTensors)
    return (
        f"{crossing}, {rate}, not NVLink; the model times no hop: one carries {per_token:,} bytes a token ({sender} sends the "
        f"hidden state and the residual, 16-bit){timing}"
    )


def expert_exchange_text(platform: PlatformSpec, gpus_per_node: int, ep: int, network: tuple[float, str]) -> str | None:
    """What the expert all-to-all of a stage of ``ep`` GPUs wider than one server crosses; None where it stays on one.

    review72 item 1: ``{tp: 1, ep: 16}`` on two 8-GPU servers was said to be "one stage on each of its 2 servers" and
    timed at NVLink rate. The sizing times the share of each GPU's exchange bound for other servers over a GPU's share
    of the node's network (:func:`generator.planner.inference.expert_network`), the rest over the GPU link, at once.
    """
    if platform.hosts > 1 or ep <= gpus_per_node:
        return None
    machines = "servers" if platform.provider == "baremetal" else "instances"
    local = gcd(ep, gpus_per_node)
    gbps, carrier = network
    rate = (
        f"{gbps:,g} Gb/s ({carrier}), {gbps / gpus_per_node / 8:g} GB/s a GPU" if gbps else f"({carrier}, of no published rate)"
    )
    peers = (
        f"all {ep - 1} of each GPU's peers are on other {machines}, so all of"
        if local == 1
        else f"{ep - local} of each GPU's {ep - 1} peers are on other {machines}, so that share of"
    )
    return (
        f"each stage's {ep} GPUs span {ceil(ep / gpus_per_node)} {platform.id} {machines} of {gpus_per_node}: {peers} "
        f"every MoE layer's expert dispatch and combine crosses their network, {rate}, not NVLink, and is timed at that rate"
    )


def unsloth_one_host_text(world_gpus: int, zero_stage: int) -> str:
    """What an Unsloth job planned over several GPUs of one host takes to launch (newuser96 item 1).

    A job over several hosts says it in :func:`job_hosts_text`; one over 2 GPUs of one host (2 x RTX 4090, ZeRO-3) said
    nothing, and its render carries no DeepSpeed config (Unsloth is not among the frameworks it is written for).
    """
    zero = f"ZeRO-{zero_stage} " if zero_stage else ""
    return (
        f"the plan runs it {zero}over {world_gpus} GPUs, but {UNSLOTH_MULTI_GPU}, and specgen renders neither launcher's "
        "config for it; "
        "a framework that runs ZeRO through DeepSpeed (axolotl, trl) gets its ds_config.json rendered, or pin the job "
        "to one GPU"
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
            f"; {UNSLOTH_MULTI_GPU}: "
            "a layout on one host avoids it (pin the deployment's platform to a server or instance type holding its GPUs)"
        )
    return text
