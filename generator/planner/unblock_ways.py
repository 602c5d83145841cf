"""The ways a refusal's "to unblock" offers that a service's and a training job's share (:mod:`generator.planner.unblock`).

The network between nodes, the fields that set a service's replica count, owned servers where none is bought, and how
alternatives are said in turn ("A; else B; failing both, C").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator.planner.blocked import COMMUNICATION_DOMINATES, PAST_DEADLINE
from generator.planner.nodes import NO_GPU_FABRIC
from generator.workload.models import InferenceDeployment, TrainingDeployment

if TYPE_CHECKING:
    from generator.planner.blocked import Blocked

#: The field that attaches an instance's GPU NICs to networks (GKE a3's eight; a reason over the primary NIC names it).
GPU_NETWORKS_FIELD = "kubernetes.gpu_networks"

#: What a bare-metal workload's own racks add to a memory refusal's ways: its search's limits, which max_nodes sets.
MORE_SERVERS = ", or more rack power / max_nodes"


def count_fields(dep: InferenceDeployment | TrainingDeployment) -> list[str]:
    """The fields besides the rate that set a service's replica count, where the workload sets them (fuzz21 item 6)."""
    if not isinstance(dep, InferenceDeployment):
        return []
    spec = dep.inference
    return [
        *([f"a lower min_replicas (now {spec.min_replicas:,})"] if spec.min_replicas > 1 else []),
        *([f"a higher max_utilization (now {spec.max_utilization:g})"] if spec.max_utilization < 1 else []),
        *([f"a lower nodes_down_tolerated (now {k})"] if (k := spec.nodes_down_tolerated) else []),  # fz65 item 3
    ]


OWNED_MORE_MEMORY = (
    "or owned servers whose GPUs have more memory, listed under hardware.inventory (hardware.buy is false: none is bought)"
)

#: What unblocks a layout the link between servers rules out, which no memory or deadline lever changes (newuser47
#: item 2); :func:`network_hint` says what puts the job within one server.
NETWORK_HINT = (
    "for the network between servers: a GPU fabric NIC of 100 Gb/s or more on them (the owned group's fabric_nic / "
    "fabric_nic_count, or custom.fabric_nic), or a layout within one server"
)


def network_hint(dep: InferenceDeployment | TrainingDeployment, blocked: list[Blocked]) -> str:
    """:data:`NETWORK_HINT`, with what would put the deployment within one server.

    A later deadline only where a one-server layout is past it (newuser76 item 11: "a layout within one server (a
    later deadline_hours)" was said of Mixtral 8x7B full, whose states fit no one 8 x H100 server: a lighter job does).
    """
    if not isinstance(dep, TrainingDeployment):
        return NETWORK_HINT
    if any(b.code == PAST_DEADLINE and b.nodes == 1 for b in blocked):
        return f"{NETWORK_HINT} (a later deadline_hours)"
    job = dep.training
    lighter = {"full": ["LoRA / QLoRA"], "lora": ["QLoRA"], "qlora": []}[job.method]
    eight_bit = job.method == "full" and (job.optimizer or "adamw") in ("adamw", "adamw-torch-amp")
    lighter += ["optimizer: adamw-8bit"] if eight_bit else []
    lighter += ["offload_optimizer: true"] if job.offload_optimizer is not True else []
    return f"{NETWORK_HINT} (a lighter job whose states one server holds: {', '.join(lighter)})" if lighter else NETWORK_HINT


def in_turn(first: str, rest: str) -> str:
    """``first``, then ``rest`` where ``first`` does not apply: one "else", and "failing those" past it.

    ``rest`` may hold its own alternatives in turn ("A; else B"); fix117 left "...; else for the network ...; else
    allow ..." (two "else"s, the second reading as the first's alternative).
    """
    if not rest:
        return first
    parts = [first, *rest.split("; else ")]
    return parts[0] + "".join(
        f"; else {p}" if k == 1 else f"; {'failing both' if len(parts) == 3 else 'failing those'}, {p}"
        for k, p in enumerate(parts[1:], start=1)
    )


def network_lead(dep: InferenceDeployment | TrainingDeployment, blocked: list[Blocked]) -> str:
    """The fix of the network between nodes where it rules some layouts out, else ""."""
    ways = []
    dominated = [b for b in blocked if b.code == COMMUNICATION_DOMINATES]
    if dominated:
        nics = GPU_NETWORKS_FIELD in "".join(b.why for b in dominated)
        way = (
            f"attach the GPU NICs the reasons name ({GPU_NETWORKS_FIELD}: a VPC network for each GPU NIC of the "
            "instance), or allow an instance with a GPU fabric"
            if nics
            else "allow an instance or platform with a GPU fabric between nodes"
        )
        ways.append(f"for the network between the nodes: {way}, or fewer nodes (a GPU with more memory)")
    if any(b.code == NO_GPU_FABRIC for b in blocked):
        ways.append(network_hint(dep, blocked))
    return "; ".join(ways)


def led_by(lead: str, hint: str) -> str:
    """``hint`` ("to unblock: ...") with ``lead`` said first, its own ways after an "else"."""
    return f"to unblock: {lead}; else " + hint.removeprefix("to unblock: ")
