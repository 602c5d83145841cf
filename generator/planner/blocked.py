"""Why the search dropped a layout: a record with a stable code, so the plan finds its reasons by code, not by wording."""

from __future__ import annotations

from generator.named_tuple import NamedTuple
from generator.planner.nodes import NO_GPU_FABRIC


class Blocked(NamedTuple):
    """One layout (or all layouts) of a GPU on a platform dropped, and why.

    ``code`` is a node-assembly finding's code where that is why (``psu-over-capacity``, ``ram-short``, ...),
    else one of the codes below.
    """

    gpu_id: str
    platform_id: str
    code: str
    why: str
    #: GPUs per node, nodes and owned servers free of the layout dropped (0: not recorded); set where servers
    #: are owned, so a reason can say that buying the rest is what is ruled out, not the owned servers.
    gpus_per_node: int = 0
    nodes: int = 0
    owned: int = 0
    #: Pipeline stages of a replica of the layout dropped (where ``nodes`` is recorded).
    pp: int = 1
    #: How far past its tightest latency target a layout that misses them at batch 1 is (a fraction); None otherwise.
    excess: float | None = None
    #: The latency targets that layout misses ("ttft", "tpot").
    missed: tuple[str, ...] = ()
    #: The layout dropped, as the plan names a layout (where ``nodes`` is recorded for owned servers too few).
    layout: str = ""
    #: The workload field whose value rules the layout out, where one owned group's statement does (the RAM it states,
    #: ``hardware.inventory[N].ram_gib``); (): none. A deployment all of whose kinds it rules out is refused there.
    field: tuple[str | int, ...] = ()
    #: What the layout dropped costs a month, where ``max_budget_usd_per_month`` dropped it (:data:`OVER_LIMIT`, priced):
    #: the figure a reason names against the budget (newuser79 item 3); None otherwise.
    usd_per_month: float | None = None
    #: Where a node's host RAM rules the layout out and LoRA adapters' CPU caches are what it holds beyond the OS: the
    #: bytes the node holds for them and the bytes they take on it (:mod:`generator.planner.lora_ram`); None otherwise.
    host_ram_room: tuple[int, int] | None = None
    #: Where GPU memory rules the layout out and fewer or smaller LoRA slots would fit it: the field (``max_loras``,
    #: ``max_rank``) and its figure (:mod:`generator.planner.lora_slots_fit`); None otherwise.
    lora_fit: tuple[tuple[int, int], ...] | None = None
    #: Where a 16-bit KV cache rules the layout out and an FP8 one fits it: the KV tokens a replica then holds and the
    #: layout's name (fix183 item 3); None otherwise.
    fp8_kv_fit: tuple[int, str] | None = None

    @property
    def text(self) -> str:
        """``"<gpu> on <platform>: why"``, as the infeasible message lists it."""
        return f"{self.gpu_id} on {self.platform_id}: {self.why}"

    @property
    def wider_than_owned(self) -> bool:
        """Whether this is a layout the link between servers rules out, over more owned servers than are free.

        The one rule (review78 item 6) for the refusal's network reason and ``specgen plan``'s "left free" reasons:
        such a layout is one of owned servers too few, not one the owned servers' own network rules out.
        """
        return self.code == NO_GPU_FABRIC and self.nodes > self.owned


#: The layout needs more nodes than one pool may have.
POOL_TOO_LARGE = "pool-too-large"
#: The layout needs more owned servers than are free, and more of them are not bought.
OWNED_SHORT = "owned-short"
#: The deployment's pins (``platform``, ``parallelism``) leave the layout out.
PINNED_OUT = "pinned-out"
#: The layout alone breaks a fleet limit (max_nodes, the monthly budget, the capex cap), or has no price to hold
#: against the budget or cap given.
OVER_LIMIT = "over-limit"
#: One node draws more than a rack delivers.
RACK_POWER = "rack-power"
#: One node is taller than a rack leaves once ``hardware.rack_units_reserved`` are kept.
RACK_HEIGHT = "rack-height"
#: No parallel layout of the model fits or meets the targets on this GPU.
NO_LAYOUT = "no-layout"
#: The engine does not serve the model's weight format on this GPU (no kernel for it there, or not as sized).
UNSERVED_FORMAT = "unserved-format"
#: vLLM's start-up check refuses the layout: one whole-context request's KV cache, as it charges it, is more than the
#: memory its batch limits leave (review36 item 6).
START_REFUSED = "start-refused"
#: A replica's GPUs neither fit in one server nor fill whole servers of the biggest size.
NO_PACKING = "no-packing"
#: A pinned degree the platform's servers do not give a replica.
PINNED_DEGREE = "pinned-degree"
#: A replica of one GPU is not feasible in one pod's share of it (``kubernetes.gpu_sharing``): it keeps whole GPUs.
SHARE_TOO_SMALL = "share-too-small"
#: The deployment's GPU sharing cannot run on this GPU (not NVIDIA's, no such MIG profile): its service is not planned
#: there (newuser44 items 5 and 12).
NOT_SHARED_HERE = "not-shared-here"
#: Training communication over the cloud network dominates the step.
COMMUNICATION_DOMINATES = "communication-dominates"
#: The training job, with its communication, ends past the deadline.
PAST_DEADLINE = "past-deadline"
#: Its runs a month take longer than a month on servers paid by the month.
RUNS_PAST_MONTH = "runs-past-month"
#: How a layout whose deadline needs more data-parallel replicas than the search tries says so.
DEADLINE_NEEDS = "deadline needs"
#: How a layout says the global batch's accumulation a rank runs does not fit at any micro-batch (newuser43 item 1).
NO_MICRO_BATCH = "no micro-batch of"
#: How a layout says the fewest data-parallel ranks that hold the job outnumber the global batch's sequences.
MORE_RANKS_THAN_BATCH = "more ranks than the global batch"
#: How a layout says the owned GPUs' data-parallel ranks do not split the global batch evenly (hostile78 item 6), and the
#: pattern the refusal's advice reads the nearest batches that split and fit by.
BATCH_NOT_SPLIT = "does not split evenly over"
BATCH_SPLITS_TEXT = "a global_batch_size of {values} splits over them and fits"
BATCH_SPLITS = r"a global_batch_size of ([\d,]+(?: or [\d,]+)?) splits over them and fits"
#: How a reason says the largest global batch the GPUs that hold the job take with the optimizer stepped in backward,
#: which takes no accumulation (newuser76 item 4), and the pattern the refusal's advice reads it by.
IN_BACKWARD_MOST_TEXT = "a global batch of at most {most} takes no accumulation"
IN_BACKWARD_MOST = r"a global batch of at most (\d+) takes no accumulation"
