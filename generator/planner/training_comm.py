"""The links a training step's traffic crosses, and its communication per layout on nodes.

Per step, each GPU exchanges (ring collectives move ``2 (n - 1) / n`` of the data for an
all-reduce and ``(n - 1) / n`` for an all-gather or reduce-scatter over ``n`` ranks):

- data-parallel gradients: an all-reduce of the trainable gradients (bf16) once per step under
  ZeRO 0-1, a reduce-scatter after every micro-batch under ZeRO 2-3 (see :func:`dp_bytes_per_gpu`);
- ZeRO-3 parameters: an all-gather of the sharded weights in every micro-batch's forward pass and
  again in its backward pass (for LoRA / QLoRA that is the frozen base: the adapters are small, the
  base is not);
- tensor-parallel all-reduces and pipeline activations: :mod:`generator.sizing.training_step`.

TP stays inside a node's NVLink (or PCIe) domain. Pipeline stages and data-parallel ranks are
placed TP-group first, then stage, then replica, so a stage boundary crosses nodes only when one
replica spans nodes, and DP ranks share a node only when replicas are smaller than a node. A ring
collective crosses each node boundary once per ring and NCCL runs a ring per NIC, so a node's NICs
together carry one GPU's share once: the inter-node DP time is the bytes per GPU over the node's
total network bandwidth (the NCCL "bus bandwidth" model); stage-to-stage sends of all the node's
GPUs share its network.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from generator.catalog.records import GpuSpec, PlatformSpec
from generator.named_tuple import NamedTuple
from generator.planner.nodes import node_link
from generator.sizing.alltoall_split import alltoall_gbps, fewest_node_gpus
from generator.sizing.constants import Constants
from generator.sizing.frameworks import framework_profile
from generator.sizing.performance import accelerator_for, host_staged_text
from generator.sizing.precision import weight_format
from generator.sizing.training_moe import routed_total_params
from generator.sizing.training_step import DDP_BUCKET_BYTES, NO_DP, DpTraffic, StepLinks, StepTime
from generator.sizing.weights import size_weights

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from generator.sizing.architecture import Architecture
    from generator.sizing.training import TrainingSetup

#: Bytes per gradient or gathered weight element on the wire (bf16, the mixed-precision default).
WIRE_BYTES_PER_ELEMENT = 2


@dataclass(frozen=True)
class StepComm:
    """A training step placed on nodes: its time by term and the links each term crosses."""

    step: StepTime
    link: str
    tp_link: str
    stage_link: str
    #: The EP all-to-alls' link (:func:`ep_link_name`; empty without expert parallelism).
    ep_link: str = ""
    #: The data-parallel groups (one a TP rank of a stage) that share ``link`` between nodes, and each one's Gb/s (0, 0.0:
    #: the traffic crosses no node, or one group sends over the whole node).
    dp_share: tuple[int, float] = (0, 0.0)

    @property
    def dp_link_text(self) -> str:
        """``link`` with each data-parallel group's share of it where several share it (newuser51 item 2)."""
        groups, gbps = self.dp_share
        return f"{self.link}, shared by {groups} data-parallel groups ({gbps:,.0f} Gb/s each)" if groups else self.link

    @property
    def bytes_per_gpu(self) -> float:
        """Data-parallel / ZeRO bytes each GPU sends per step."""
        return self.step.dp_bytes

    @property
    def comm_s(self) -> float:
        """Inter-node communication time of one step."""
        return self.step.inter_node_s

    @property
    def compute_s(self) -> float:
        """Compute time of one step."""
        return self.step.compute_s

    @property
    def dominates(self) -> bool:
        """Inter-node communication takes longer than the step's compute."""
        return self.step.dominates


def shared_dp_gbps(links: StepLinks, tp: int, pp: int, gpus_per_node: int) -> tuple[int, float]:
    """The data-parallel groups sharing a node's network between nodes and each one's Gb/s, where several do; else none.

    One group a TP rank of a stage (:func:`links_between`'s placement, the pipeline outermost): where the traffic
    crosses nodes a stage spans whole nodes, so a node holds ``tp`` groups whatever ``pp``.
    """
    del pp  # the stages sit on nodes of their own where the groups cross nodes
    groups = min(tp, gpus_per_node)
    return (groups, links.dp_inter_gbps) if groups > 1 and links.dp_inter_gbps else (0, 0.0)


def dp_bytes_per_gpu(
    trainable_params: int,
    weight_bytes_total: int,
    zero_stage: int,
    dp: int,
    accumulation: int = 1,
    *,
    grad_bytes: int = WIRE_BYTES_PER_ELEMENT,
) -> float:
    """Bytes each GPU sends per optimizer step for data parallelism over ``dp`` ranks.

    ZeRO 0-1 accumulate whole gradients locally and all-reduce once per step (ZeRO-1's
    reduce-scatter + all-gather moves the same bytes). ZeRO-2 keeps only its gradient shard, so it
    reduce-scatters after every micro-batch, then all-gathers the updated weights once. ZeRO-3 also
    all-gathers the weights in every micro-batch's forward and backward pass (DeepSpeed ZeRO paper,
    arXiv:1910.02054 section 7: 1.5x DP's volume per micro-batch).

    ``grad_bytes``: bytes of a gradient element on the wire, bf16 by default; Megatron-LM reduces its fp32 main
    gradients (4, :attr:`~generator.sizing.frameworks.FrameworkProfile.main_grad_bytes`): an fp32 all-reduce at ZeRO-0,
    and at ZeRO-1 (its distributed optimizer) an fp32 reduce-scatter and a bf16 all-gather of the updated parameters.
    """
    if dp <= 1:
        return 0.0
    share = (dp - 1) / dp
    grads = trainable_params * grad_bytes
    micro = max(1, accumulation)
    if zero_stage == 0:
        return 2 * share * grads  # all-reduce
    if zero_stage == 1:
        return share * grads + share * trainable_params * WIRE_BYTES_PER_ELEMENT  # reduce-scatter + weight all-gather
    if zero_stage == 2:
        return micro * share * grads + share * trainable_params * WIRE_BYTES_PER_ELEMENT  # + weight all-gather
    return micro * (share * grads + 2 * share * weight_bytes_total)  # per micro-batch: reduce-scatter + two all-gathers


#: DeepSpeed's default ``allgather_bucket_size`` (elements) of ZeRO-1/2's weight all-gather and ``reduce_bucket_size``
#: of their gradient reduction: "allgather_bucket_size ... 5e8", "reduce_bucket_size ... 5e8"
#: (https://www.deepspeed.ai/docs/config-json/, "ZeRO Optimizations for FP16 Training").
DEEPSPEED_BUCKET_ELEMENTS = 500_000_000
#: The Hugging Face Trainer's ``"auto"`` ZeRO-3 buckets over a model of hidden size ``h``: ``reduce_bucket_size`` h^2 and
#: ``stage3_prefetch_bucket_size`` 0.9 h^2 elements (transformers ``HfTrainerDeepSpeedConfig.trainer_config_finalize``,
#: https://github.com/huggingface/transformers/blob/main/src/transformers/integrations/deepspeed.py; its documented
#: ZeRO-3 configs set both to "auto", https://huggingface.co/docs/transformers/deepspeed).
ZERO3_PREFETCH_SHARE = 0.9
#: Megatron DDP's default bucket, elements: ``max(40000000, 1000000 * dp)`` "to ensure that chunks used in NCCL
#: ring-reduce implementations are large enough to remain bandwidth-bound rather than latency-bound"
#: (megatron/core/distributed/distributed_data_parallel.py, https://github.com/NVIDIA/Megatron-LM).
MEGATRON_BUCKET_MIN_ELEMENTS = 40_000_000
MEGATRON_BUCKET_ELEMENTS_PER_RANK = 1_000_000


class DpCalls(NamedTuple):
    """Collectives of one pass over a GPU's data-parallel traffic: over its gradients, and gathering its weights."""

    grads: int
    gather: int


def dp_calls(
    kind: str, zero_stage: int, dp: int, trainable_params: int, gathered_params: int, num_layers: int, hidden_size: int
) -> DpCalls:
    """How a GPU's data-parallel traffic is cut into collectives under its framework's ``kind`` (newuser35 item 3).

    ``trainable_params`` and ``gathered_params`` (the weights ZeRO-3 gathers: the whole model, or a LoRA job's frozen
    base with its adapters) are the GPU's model-parallel share.

    - torch DDP (ZeRO-0 outside Megatron-LM): one all-reduce per ``bucket_cap_mb`` of bf16 gradients
      (:data:`~generator.sizing.training_step.DDP_BUCKET_BYTES`);
    - ``fsdp`` (FSDP2 ``fully_shard`` per decoder layer, torchtune, a plain FSDP2 loop): "fully_shard groups parameters
      together for a single all-gather" (https://docs.pytorch.org/docs/stable/distributed.fsdp.fully_shard.html), so
      each unit, the decoder layers and the root (embeddings, final norm, LM head), takes one all-gather a pass and one
      reduce-scatter: 3 x (layers + 1) a ZeRO-3 micro-batch, whatever the bytes;
    - ``deepspeed`` (DeepSpeed ZeRO under the Hugging Face Trainer family, or no framework named): ZeRO-3 reduces in
      ``reduce_bucket_size`` buckets and prefetches in ``stage3_prefetch_bucket_size`` ones, the Trainer's "auto"
      h^2 and 0.9 h^2 elements, at least one gather per layer (parameters are fetched by module); ZeRO-1/2 by DeepSpeed's
      5e8-element buckets;
    - ``megatron`` (Megatron-LM's DDP over its contiguous grad buffer): buckets of max(4e7, 1e6 x dp) elements.
    """
    if kind == "megatron":
        bucket = max(MEGATRON_BUCKET_MIN_ELEMENTS, MEGATRON_BUCKET_ELEMENTS_PER_RANK * dp)
        calls = max(1, math.ceil(trainable_params / bucket))
        return DpCalls(calls, calls)
    if zero_stage == 0 or kind not in ("fsdp", "deepspeed"):
        buckets = max(1, math.ceil(trainable_params * WIRE_BYTES_PER_ELEMENT / DDP_BUCKET_BYTES))
        return DpCalls(buckets, buckets)
    if kind == "fsdp":
        units = num_layers + 1
        return DpCalls(units, units)
    if zero_stage < 3:
        return DpCalls(
            max(1, math.ceil(trainable_params / DEEPSPEED_BUCKET_ELEMENTS)),
            max(1, math.ceil(trainable_params / DEEPSPEED_BUCKET_ELEMENTS)),
        )
    square = hidden_size * hidden_size
    gathers = max(num_layers, math.ceil(gathered_params / (ZERO3_PREFETCH_SHARE * square)))
    return DpCalls(max(1, math.ceil(trainable_params / square)), gathers)


def job_dp_traffic(
    arch: Architecture, setup: TrainingSetup, trainable_params: int, model_parallel: int, accumulation: int
) -> DpTraffic:
    """What data parallelism moves for a job split over ``model_parallel`` GPUs a replica (:func:`dp_traffic`).

    Each GPU's share of the trainable parameters and of the base weights in the job's own format; the gradients in
    the framework's own precision on the wire, and cut into its framework's collectives (:func:`dp_calls`).
    """
    fmt = weight_format(setup.base_precision_name)
    weights = size_weights(arch, fmt).total_bytes // model_parallel
    profile = framework_profile(setup.framework) if setup.framework else None
    grad_bytes = (profile.main_grad_bytes if profile else None) or WIRE_BYTES_PER_ELEMENT
    kind = profile.dp_collectives if profile else "deepspeed"
    gathered = arch.params_total // model_parallel
    trainable = trainable_params // model_parallel
    calls = dp_calls(kind, setup.zero_stage, setup.data_parallel, trainable, gathered, arch.num_layers, arch.hidden_size)
    return dp_traffic(
        trainable, weights, setup.zero_stage, setup.data_parallel, accumulation, grad_bytes=grad_bytes, calls=calls, kind=kind
    )


def job_dp_traffic_split(
    arch: Architecture, setup: TrainingSetup, trainable_params: int, model_parallel: int, accumulation: int
) -> tuple[DpTraffic, DpTraffic]:
    """(dense, routed experts): what data parallelism moves for a job, the experts apart under expert parallelism.

    A full training job with EP above 1 (every parameter trains): each GPU holds ``1 / ep`` of the routed experts
    (:func:`generator.sizing.expert_parallel.training_weight_layout`) and reduces their gradients over the
    expert-data-parallel group, ``dp / ep`` ranks (Megatron-Core's ``expert_data_parallel`` group), and the other
    parameters' over all ``dp`` ranks (:attr:`StepLinks.expert_dp_gbps` times the experts'). Any other job:
    :func:`job_dp_traffic` and no expert traffic (an adapter job's trainable parameters are not the experts').
    """
    whole = job_dp_traffic(arch, setup, trainable_params, model_parallel, accumulation)
    ep = setup.expert_parallel
    routed = routed_total_params(arch)
    if ep <= 1 or not routed or setup.method != "full" or setup.data_parallel <= 1:
        return whole, NO_DP
    fmt = weight_format(setup.base_precision_name)
    share = routed / max(1, arch.params_total)
    weights = size_weights(arch, fmt).total_bytes
    profile = framework_profile(setup.framework) if setup.framework else None
    grad_bytes = (profile.main_grad_bytes if profile else None) or WIRE_BYTES_PER_ELEMENT
    kind = profile.dp_collectives if profile else "deepspeed"
    zero, dp, layers, hidden = setup.zero_stage, setup.data_parallel, arch.num_layers, arch.hidden_size
    dense = (arch.params_total - routed) // model_parallel
    dense_weights = round(weights * (1 - share)) // model_parallel
    experts = routed // (model_parallel * ep)
    expert_weights = round(weights * share) // (model_parallel * ep)
    return (
        dp_traffic(dense, dense_weights, zero, dp, accumulation, grad_bytes=grad_bytes,
                   calls=dp_calls(kind, zero, dp, dense, dense, layers, hidden), kind=kind),
        dp_traffic(experts, expert_weights, zero, dp // ep, accumulation, grad_bytes=grad_bytes,
                   calls=dp_calls(kind, zero, dp // ep, experts, experts, layers, hidden), kind=kind),
    )  # fmt: skip


def dp_traffic(
    trainable_params: int,
    weight_bytes_total: int,
    zero_stage: int,
    dp: int,
    accumulation: int = 1,
    *,
    grad_bytes: int = WIRE_BYTES_PER_ELEMENT,
    calls: DpCalls | None = None,
    kind: str = "ddp",
) -> DpTraffic:
    """Data-parallel bytes per GPU (:func:`dp_bytes_per_gpu`) and the collectives that carry them.

    ``calls`` (:func:`dp_calls`): the collectives of one pass over the gradients and of one weight gather; by default
    torch DDP's buckets of :data:`DDP_BUCKET_BYTES` of bf16 gradients for both. One gradient pass under ZeRO 0-1 (an
    all-reduce, or its reduce-scatter + all-gather, timed as one); a gradient pass per micro-batch plus one weight
    gather under ZeRO-2; a gradient pass and two weight gathers per micro-batch under ZeRO-3.

    ``kind``: the framework's collectives (:func:`dp_calls`). Under ``deepspeed`` at ZeRO-1/2 the traffic is in series
    with the compute (:attr:`DpTraffic.in_series`): DeepSpeed overlaps those stages' gradient reduction only with
    ``overlap_comm`` true, false by default there ("overlap_comm ... default: false",
    https://www.deepspeed.ai/docs/config-json/; ZeRO-3 defaults it true, ``DeepSpeedZeroConfig.overlap_comm_valid``),
    and the rendered ds_config.json (:mod:`generator.render.deepspeed_config`) leaves it unset: without it
    ``average_tensor`` reduces each bucket on the current (compute) stream, inside the backward hook that filled it
    (``deepspeed/runtime/zero/stage_1_and_2.py``, https://github.com/deepspeedai/DeepSpeed), and the updated weights'
    all-gather follows the optimizer step. torch DDP (ZeRO-0), FSDP and Megatron's buckets overlap the backward pass.
    """
    if dp <= 1:
        return NO_DP
    if calls is None:
        buckets = math.ceil(trainable_params * WIRE_BYTES_PER_ELEMENT / DDP_BUCKET_BYTES)
        calls = DpCalls(buckets, buckets)
    micro = max(1, accumulation)
    if zero_stage < 2:
        count = calls.grads
    elif zero_stage == 2:
        count = micro * calls.grads + calls.gather
    else:
        count = micro * (calls.grads + 2 * calls.gather)
    sent = dp_bytes_per_gpu(trainable_params, weight_bytes_total, zero_stage, dp, accumulation, grad_bytes=grad_bytes)
    in_series = kind == "deepspeed" and zero_stage in (1, 2)
    return DpTraffic(sent, count, once_after_backward=zero_stage < 2, in_series=in_series)


def gpu_link(gpu: GpuSpec, group: int) -> tuple[float, str]:
    """Gb/s per GPU inside a node for a group of ``group`` GPUs: NVLink / Infinity Fabric, else PCIe.

    Over PCIe between GPUs without peer-to-peer (:attr:`GpuSpec.pcie_peer_to_peer` False) the name says the share of the
    PCIe rate the traffic staged through host memory is timed at (:func:`host_staged_text`).
    """
    acc = accelerator_for(gpu, "bf16", group)
    name = f"{gpu.link_name(acc.fast_link)} {acc.link_gb_per_s:g} GB/s per GPU"
    if group > 1 and acc.host_staged:
        name += f" ({host_staged_text(acc, gpu.name)})"
    return acc.link_gb_per_s * 8, name


def gpu_link_latency_s(gpu: GpuSpec, group: int, consts: Constants) -> float:
    """Fixed seconds of one collective over the GPU link of ``group`` GPUs (NVLink / Infinity Fabric, else PCIe).

    Across nodes a collective also crosses this link at each end, so this is a lower bound there.
    """
    fast = accelerator_for(gpu, "bf16", group).fast_link
    return consts.allreduce_latency_nvlink_s if fast else consts.allreduce_latency_pcie_s


def step_links(
    platform: PlatformSpec,
    gpu: GpuSpec,
    gpus_per_node: int,
    nodes: int,
    fabric: bool,
    tp: int,
    pp: int,
    dp: int,
    consts: Constants,
    zero_stage: int,
    ep: int = 1,
) -> tuple[StepLinks, str, str, str, str]:
    """The links of a (TP, PP, DP, EP) job on ``nodes`` nodes of ``gpus_per_node``: (links, DP, TP, stage, EP link names)."""
    node_gbps, node_name = node_link(platform, gpu, gpus_per_node, fabric)
    links = links_between(gpu, gpus_per_node, nodes, node_gbps, tp, pp, dp, consts, zero_stage, ep)
    tp_name = gpu_link(gpu, tp)[1]
    stage_name = node_name if links.stages_cross_nodes else gpu_link(gpu, _stage_link_group(tp, pp, dp, gpus_per_node))[1]
    crosses = links.dp_inter_gbps > 0
    intra_name = gpu_link(gpu, gpus_per_node)[1]
    dp_name = node_name if crosses else (f"{intra_name} inside one node" if links.dp_intra_gbps else "none (one replica)")
    ep_name = ep_link_name(gpu, links, fewest_node_gpus(ep * tp, gpus_per_node), node_name, ep, tp)
    return links, dp_name, tp_name, stage_name, ep_name


def ep_link_name(gpu: GpuSpec, links: StepLinks, group: int, node_name: str, ep: int = 1, tp: int = 1) -> str:
    """What the EP all-to-alls cross, as :func:`links_between` chose (``links.ep_crosses_nodes``).

    Inside one node the GPU link of the ``group`` GPUs of a node they span; past one, ``node_name`` with the peers it
    carries and the ones on the node's GPU link (:func:`~generator.sizing.alltoall_split.node_peer_share`): ``ep`` ranks
    of ``tp`` GPUs, ``group`` GPUs a node.
    """
    if not links.ep_crosses_nodes:
        return gpu_link(gpu, group)[1]
    node_ranks = max(1, group // tp)
    if node_ranks <= 1 or ep <= node_ranks:
        return node_name
    return f"{node_name} for {ep - node_ranks} of {ep - 1} peers, {gpu_link(gpu, group)[1]} for the {node_ranks - 1} in its node"


def dp_collective_latency_s(gpu: GpuSpec, gpus_per_node: int, ranks_per_node: int, dp_nodes: int, zero_stage: int,
                            consts: Constants) -> float:  # fmt: skip
    """Fixed seconds of one data-parallel collective whose ranks sit ``ranks_per_node`` to a node on ``dp_nodes`` nodes.

    Inside one node the fitted collective latency (:func:`gpu_link_latency_s`). Across nodes NCCL's own tuning model
    (src/graph/tuning.cc; the constants' docs): reduce-scatters and all-gathers (ZeRO 2-3) run as rings, so each
    further node adds a network step and a link step per further rank of it, and the latency grows with the nodes
    (newuser28 item 1: 94 nodes were timed as one); all-reduces (ZeRO 0-1) run as trees, two network hops per level
    of log2(nodes).
    """
    one_node = gpu_link_latency_s(gpu, gpus_per_node, consts)
    if dp_nodes <= 1:
        return one_node
    if zero_stage < 2:
        return one_node + 2 * (dp_nodes.bit_length() - 1) * consts.tree_net_step_latency_s
    node_steps = (ranks_per_node - 1) * consts.ring_link_step_latency_s + consts.ring_net_step_latency_s
    return one_node + (dp_nodes - 1) * node_steps


def _stage_link_group(tp: int, pp: int, dp: int, gpus_per_node: int) -> int:
    """The GPUs whose node link a PP send inside one node is timed over.

    The job's GPUs on the node, the stages ``tp x dp`` apart among them (:func:`links_between`); without a pipeline (no
    sends) the TP group's, as before.
    """
    return min(tp * pp * dp if pp > 1 else tp, gpus_per_node)


def links_between(
    gpu: GpuSpec,
    gpus_per_node: int,
    nodes: int,
    node_gbps: float,
    tp: int,
    pp: int,
    dp: int,
    consts: Constants,
    zero_stage: int = 0,
    ep: int = 1,
) -> StepLinks:
    """Gb/s per GPU and per-collective latency of each term of a (TP, PP, DP) step.

    Every term sees one placement of the ranks, Megatron-Core's default order ``tp-cp-ep-dp-pp`` (torchtitan's mesh and
    DeepSpeed's pipe-data topology also put the pipeline outermost): a stage is ``tp x dp`` consecutive GPUs, its
    data-parallel ranks ``tp`` apart inside it, and a GPU's next stage ``tp x dp`` ranks on, so past one node the PP
    sends cross the fabric (review79 item 4: the stages were timed side by side in a replica while the EP groups filled
    the node inside a stage, both over NVLink at once).
    Nodes hold ``gpus_per_node`` GPUs and send ``node_gbps`` each; ``zero_stage`` says which collectives carry the
    data-parallel traffic (:func:`dp_collective_latency_s`). ``ep``: an MoE step's EP degree, its groups ``ep`` TP
    groups side by side inside one pipeline stage (``ep x tp`` consecutive GPUs: Megatron-Core's default rank order
    ``tp-cp-ep-dp-pp`` puts the pipeline outermost, so an EP group never spans stages; ``order`` in
    megatron/core/parallel_state.py ``initialize_model_parallel``): past one node each all-to-all sends its bytes for
    the peers of the GPU's own node over the node's GPU link and the others' over a GPU's share of the node's network,
    the slower bounding it (:func:`~generator.sizing.alltoall_split.alltoall_gbps`; an NVL72 rack is one 72-GPU node),
    else all of them over the node's GPU link (review 28 item 1; acc110: the group
    was ``ep x tp x pp`` GPUs, which put a PP 4 x EP 64 job's all-to-alls on a GB200 NVL72's racks' network and an
    H100 PP 4 x EP 8 job's on InfiniBand, where Megatron keeps both inside the NVLink domain).

    The routed experts' gradients are reduced over the expert-data-parallel group instead (Megatron-Core's
    ``expert_data_parallel`` group, ``world / (ep x tp x pp)`` ranks with ETP = TP, Megatron-Core's default): one rank
    of each EP group of a stage, so its ranks sit one EP group's span apart. Like the data-parallel ranks one replica apart
    (``inter_gbps``), a GPU's share of the node's network is the node's over the groups sharing it, ``node_gbps /
    min(span, gpus_per_node)``: an EP group that fills a node leaves each rank its own NIC, where a dense gradient's ring
    spreads over all of a node's
    (:attr:`StepLinks.expert_dp_gbps`).
    """
    tp_gbps = gpu_link(gpu, tp)[0]
    # one placement for every term (review79 item 4): Megatron-Core's rank order tp-cp-ep-dp-pp, the pipeline
    # outermost, so a stage is ``tp x dp`` consecutive GPUs (the EP groups inside it) and a GPU's PP neighbour sits
    # that many ranks on; past one node some stage's sends cross the fabric, and the pipeline runs at that hop's pace
    world = tp * pp * dp
    stages_cross = pp > 1 and nodes > 1 and world > gpus_per_node
    stage_group = _stage_link_group(tp, pp, dp, gpus_per_node)
    stage_gbps = node_gbps / gpus_per_node if stages_cross else gpu_link(gpu, stage_group)[0]
    # a data-parallel group's ranks sit ``tp`` apart inside a stage: up to ``gpus_per_node / tp`` of them a node
    dp_per_node = max(1, min(dp, gpus_per_node // tp))
    intra_gbps = gpu_link(gpu, gpus_per_node)[0] if dp > 1 and dp_per_node > 1 else 0.0
    # each TP rank of a stage has a data-parallel group of its own, and the groups on a node share its network: a GPU's
    # share is the node's over the groups (newuser51 item 2: TP8 timed each GPU's bytes over all 3,200 Gb/s of a p5, 8x
    # its 400 Gb/s); at TP1 one group holds a node's GPUs and sends the whole node's
    inter_gbps = node_gbps / min(tp, gpus_per_node) if nodes > 1 and dp > dp_per_node else 0.0
    dp_nodes = -(-dp // dp_per_node) if inter_gbps else 1
    dp_latency_s = dp_collective_latency_s(gpu, gpus_per_node, dp_per_node, dp_nodes, zero_stage, consts)
    ep_group = ep * tp
    ep_crosses = nodes > 1 and ep_group > gpus_per_node
    # the all-to-all's peers on a GPU's own node over its GPU link, the others over its share of the node's network,
    # both at once (acc145: all of it was timed over the network, 56 of 63 peers' bytes for EP 64 on 8-GPU nodes)
    ep_node = fewest_node_gpus(ep_group, gpus_per_node)
    ep_link_gbps = gpu_link(gpu, ep_node)[0]
    if ep_crosses:
        ep_link_gbps = alltoall_gbps(ep, max(1, ep_node // tp), ep_link_gbps, node_gbps / gpus_per_node)
    # the expert-data-parallel group: one rank an EP group, ``ep_group`` GPUs apart
    expert_dp = dp // ep if ep > 1 else 0
    ranks_per_node = max(1, gpus_per_node // ep_group)
    expert_dp_crosses = nodes > 1 and expert_dp > ranks_per_node
    if expert_dp <= 1:
        expert_dp_gbps, expert_dp_latency_s = 0.0, 0.0
    elif expert_dp_crosses:
        expert_dp_gbps = node_gbps / min(ep_group, gpus_per_node)
        expert_dp_nodes = -(-expert_dp // ranks_per_node)
        expert_dp_latency_s = dp_collective_latency_s(
            gpu, gpus_per_node, min(expert_dp, ranks_per_node), expert_dp_nodes, zero_stage, consts
        )
    else:
        expert_dp_gbps = gpu_link(gpu, gpus_per_node)[0]
        expert_dp_latency_s = gpu_link_latency_s(gpu, gpus_per_node, consts)
    return StepLinks(
        tp_gbps,
        stage_gbps,
        intra_gbps,
        inter_gbps,
        stages_cross_nodes=stages_cross,
        tp_latency_s=gpu_link_latency_s(gpu, tp, consts),
        stage_latency_s=gpu_link_latency_s(gpu, stage_group, consts),
        dp_latency_s=dp_latency_s,
        ep_gbps=ep_link_gbps,
        ep_latency_s=dp_latency_s if ep_crosses else gpu_link_latency_s(gpu, ep_node, consts),
        ep_crosses_nodes=ep_crosses,
        expert_dp_gbps=expert_dp_gbps,
        expert_dp_latency_s=expert_dp_latency_s,
        expert_dp_crosses_nodes=expert_dp_crosses,
    )
