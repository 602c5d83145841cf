"""One feasible way to run a deployment, as the candidate builders produce and the assembler consumes."""

from __future__ import annotations

from fractions import Fraction

from generator.catalog.cloud_gpu_stack import CLOUD_GPU_STACK
from generator.catalog.records import GpuSpec
from generator.named_tuple import NamedTuple
from generator.planner.inference import ReplicaShape
from generator.planner.nodes import NodeNeeds
from generator.planner.options import Hardware
from generator.planner.plan import Candidate, NodeSpec
from generator.sizing.serving_queue import SlotParts, slot_rate, slot_rate_bounds

TYPE_CHECKING = False  # the training modules load only for a training deployment
if TYPE_CHECKING:
    from generator.planner.inventory import ServerKey
    from generator.planner.training import TrainingShape
    from generator.planner.training_chain import Stretch
    from generator.planner.training_comm import StepComm


class Option(NamedTuple):
    """A ranked candidate with everything needed to build its pool (a named tuple: planning forms one per layout)."""

    candidate: Candidate
    hardware: Hardware
    node: NodeSpec
    needs: NodeNeeds
    shape: ReplicaShape | TrainingShape
    comm: StepComm | None = None
    #: A deployment split over two server kinds: its parts (owned servers first); ``candidate`` sums them and
    #: the other fields are the first part's. Empty: one part, this option itself.
    parts: tuple[Option, ...] = ()
    #: Training jobs run one after another on this option's servers (``training.run_after``): each job's own option,
    #: in the order they run; ``candidate`` is the chain's (its pool, hours summed). Empty: one deployment.
    sequence: tuple[Option, ...] = ()
    #: The same servers with as many replicas of the layout as they hold whole, where that is more than the rate needs:
    #: what runs where the deployment has its servers to itself (the GPUs are bought either way). None: no more fit,
    #: a split, or replicas in shares of GPUs.
    filled: Option | None = None
    #: A training job's ``runs_per_month`` (a ``run_after`` sequence's, one for all its jobs); None for a service, or
    #: where the job gives none. A job rented per run is ranked by its runs' month
    #: (:func:`~generator.planner.candidates.ranking_candidate`).
    runs_per_month: float | None = None
    #: A ``run_after`` sequence whose last, less frequent job runs straight through the gaps between the sequence's
    #: runs, pre-empted by each (its deadline shorter than its slices would take): when it starts and ends. None: no
    #: such job (each job runs in its turn, a less frequent one in slices).
    stretch: Stretch | None = None
    #: A ``run_after`` sequence's, for each job: seconds to write its checkpoint and to read it back (None: not timed,
    #: no drive rate), and the hours of such writes and reads it holds in a run of the sequence, beside its share of
    #: its run (a sliced job's at its slice's end and the next's start, a stretched one's share of its pre-emptions';
    #: 0 for a job run whole each time; fix140). Empty: not a sequence.
    checkpoint_pauses: tuple[tuple[float | None, float | None, float], ...] = ()
    #: A training job planned on the GPUs an owned server's service leaves over (fix182,
    #: :mod:`~generator.planner.beside_training`): that service's deployment index, whose pool it joins. None: servers
    #: of its own.
    beside: int | None = None

    @property
    def pieces(self) -> tuple[Option, ...]:
        """The homogeneous parts of this option (itself when it is not split)."""
        return self.parts or (self,)

    @property
    def server_kind(self) -> ServerKey:
        """(platform, GPU, GPUs per server) of the servers this option's (part's) replicas run on."""
        return (self.hardware.platform.id, self.hardware.gpu.id, self.candidate.gpus_per_node)

    @property
    def busy_kind(self) -> ServerKey:
        """The server kind whose GPUs in use this option's (part's) replicas count towards, as services share servers.

        Replicas in shares of GPUs (``gpu_sharing``) fill GPUs of their own: a node's GPUs are all shared one way or
        all whole (the pool's one device-plugin config or MIG partition), so they are counted apart, each sharing
        (:func:`shared_kind`) on its own.
        Spot capacity (``capacity_type: spot``) is counted apart too (:data:`SPOT_MARK`): a pool is one capacity type.
        """
        # :attr:`server_kind` inlined: the ranking of the passes that share servers asks it about a million times
        c, hw = self.candidate, self.hardware
        gpu = hw.gpu.id if not hw.spot else f"{hw.gpu.id}{SPOT_MARK}"  # spot nodes are a pool's of their own
        if not c.shares_per_gpu:
            return (hw.platform.id, gpu, c.gpus_per_node)
        return (hw.platform.id, shared_kind(gpu, self.sharing_key), c.gpus_per_node)

    @property
    def sharing_key(self) -> str:
        """How this option's (part's) replicas share their GPUs (``mig 3g.40gb``, ``mps 1/4``); "": whole GPUs.

        Deployments of different sharing never share a pool: a pool has one device-plugin config or MIG partition.
        """
        share = self.shape.share if self.candidate.shares_per_gpu and isinstance(self.shape, ReplicaShape) else None
        return "" if share is None else f"{share.strategy} {share.label}"

    @property
    def gpus_used(self) -> Fraction:
        """GPUs this option's (part's) replicas take: whole ones, or a share of one each (1/N of a GPU)."""
        c = self.candidate
        return Fraction(c.replicas, c.shares_per_gpu) if c.shares_per_gpu else Fraction(c.gpus)

    @property
    def gpu_id(self) -> str:
        """The GPU this option's (part's) replicas run on."""
        return self.hardware.gpu.id

    @property
    def shares_servers(self) -> bool:
        """Whether this (part's) replicas may run on servers another deployment runs on.

        Inference replicas that each divide a server's GPUs may (a pipeline inside one server too, review 12
        item 4), so that services fill a shared server GPU by GPU; a replica spanning servers, one that leaves GPUs
        of its servers over, and a training job take whole servers.
        """
        return isinstance(self.shape, ReplicaShape) and self.candidate.gpus_per_node % self.shape.par.gpus == 0

    @property
    def replica_shape(self) -> ReplicaShape:
        """The replica layout of an inference option (of its first part when split)."""
        shape = self.shape
        assert isinstance(shape, ReplicaShape), "a training option has no replica layout"
        return shape


def sustained_rps(opt: Option, served: bool = False) -> float:
    """Requests per second an option's replicas sustain together within the SLOs; 0 for a training job.

    Each replica at most at its planned rate (``served``: at its most, not a batch job's share of its deadline,
    :attr:`~generator.planner.inference.ReplicaShape.served_requests_per_s`); a split option's requests are routed
    evenly over all its replicas, so its slowest replica's rate times them all. Together, no more than keeps the p95
    wait for a place in their batch (a split's, both parts' places) within what the TTFT p95 target leaves
    (:func:`~generator.sizing.serving_queue.slot_rate`, the rule the count is sized by; m74a item 4: 2 x 5.68 req/s was
    said "within the SLOs" where the wait for a place passes the target past 10.54).
    """
    return slot_rate(replicas_rps(opt, served), slot_parts(opt))


def sustained_rps_bounds(opt: Option) -> tuple[float, float]:
    """Where :func:`sustained_rps` lies without its search: a rate surely held, and the replicas' with every place taken."""
    return slot_rate_bounds(replicas_rps(opt), slot_parts(opt))


def replicas_rps(opt: Option, served: bool = False) -> float:
    """What an option's replicas serve with every place in their batch taken: :func:`sustained_rps` less the wait."""

    def rate(shape: ReplicaShape) -> float:
        return shape.served_requests_per_s if served else shape.planned_requests_per_s

    if not opt.parts:  # one part (the common case, ranked for every pass): its replicas at their rate
        shape = opt.shape
        return opt.candidate.replicas * rate(shape) if isinstance(shape, ReplicaShape) else 0.0
    rates = [(part.candidate.replicas, rate(part.shape)) for part in opt.pieces if isinstance(part.shape, ReplicaShape)]
    return sum(n for n, _ in rates) * min((r for _, r in rates), default=0.0)


def slot_parts(opt: Option) -> SlotParts:
    """The replicas and places of each part of ``opt`` one router fills (:data:`SlotParts`); none where a part has none.

    A batch job or a pooling service has no places to wait for (:attr:`~generator.planner.inference.ReplicaShape.slot_queue`
    None): its rate is its replicas' alone. A replica below one sequence in flight has them (review74 item 3).
    """
    parts = [(p.candidate.replicas, p.shape.slot_queue) for p in opt.pieces if isinstance(p.shape, ReplicaShape)]
    return tuple((n, q) for n, q in parts if q is not None) if all(q is not None for _, q in parts) else ()


#: What :attr:`Option.busy_kind` adds to a GPU id for spot capacity, whose nodes no on-demand replica shares.
SPOT_MARK = "@spot"

#: What :func:`shared_kind` adds to a GPU id: a server kind's GPUs in shares are counted apart from its whole ones.
SHARED_MARK = "+shared"


def shared_kind(gpu_id: str, sharing_key: str) -> str:
    """The GPU part of the server kind that replicas in ``sharing_key`` shares of ``gpu_id`` count their GPUs under."""
    return f"{gpu_id}{SHARED_MARK} {sharing_key}"


def is_shared_of(gpu_field: str, gpu_id: str) -> bool:
    """Whether ``gpu_field``, a server kind's GPU part, counts shares of ``gpu_id`` (built by :func:`shared_kind`)."""
    return gpu_field.startswith(f"{gpu_id}{SHARED_MARK} ")


def pool_labels(name: str, gpu: GpuSpec, platform_id: str, provider: str) -> tuple[tuple[str, str], ...]:
    """Kubernetes node labels of a pool; NVIDIA pools also select their device-plugin configuration.

    Except where the cloud runs the GPU stack (:data:`CLOUD_GPU_STACK`: GKE): its node image installs the driver
    and device plugin and no GPU Operator runs to read the label, so the pool, its Terraform, Ansible and
    ContainerNodePool carry none.
    """
    labels: tuple[tuple[str, str], ...] = (
        ("specgen.dev/gpu", gpu.id),
        ("specgen.dev/platform", platform_id),
        ("specgen.dev/pool", name.replace("_", "-")),
    )
    if gpu.vendor == "nvidia" and provider not in CLOUD_GPU_STACK:
        labels = (("nvidia.com/device-plugin.config", name.replace("_", "-")), *labels)
    return labels
