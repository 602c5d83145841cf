"""The planner's frozen result: pools of nodes, per-deployment sizing, findings and reasons.

Its records are named tuples (:mod:`generator.named_tuple`), not frozen dataclasses: each dataclass costs about
a millisecond to define at every cold start. ``spec.json`` writes each record as an object.
"""

from __future__ import annotations

from typing import Any, Literal

from generator.named_tuple import NamedTuple

Level = Literal["info", "warning", "error"]


class Finding(NamedTuple):
    """Something the user should know: a level, a stable code, a message and the workload path."""

    level: Level
    code: str
    message: str
    path: str = ""


def sorted_findings(findings: list[Finding]) -> tuple[Finding, ...]:
    """Findings without repeats, in a stable order (by path, code, message)."""
    return tuple(sorted(set(findings), key=lambda f: (f.path, f.code, f.message)))


class Nic(NamedTuple):
    """NICs of one kind in a node."""

    role: Literal["fabric", "frontend"]
    nic_id: str
    name: str
    count: int  # type: ignore[assignment]  # the field shadows tuple.count, as spec.json names it
    port_gbps: float
    protocol: str
    gpudirect_rdma: bool


class NodeSpec(NamedTuple):
    """One GPU server (or cloud instance) as the plan configures it."""

    platform_id: str
    platform_name: str
    kind: str
    provider: str
    instance_type: str | None
    gpu_id: str
    gpu_name: str
    gpus: int
    gpu_memory_gib: float
    cpu: str
    cpu_cores: int
    ram_gib: int
    nvme_tb: float
    nvme_drives: int
    nvme_read_gb_per_s: float
    nvme_write_gb_per_s: float
    nics: tuple[Nic, ...]
    power_w: int
    power_basis: str
    heat_btu_per_h: int
    cooling: str
    rack_units: int | None
    psu: str | None
    nvswitch: bool
    memory: str | None = None
    boot_drives: str | None = None
    power_components_w: int | None = None
    #: The published per-GPU RAM / CPU-core minimum and whether the build meets it, or that none applies.
    host_minimum: str | None = None


class Pool(NamedTuple):
    """Identical nodes serving one or more deployments."""

    name: str
    node: NodeSpec
    nodes: int
    deployments: tuple[str, ...]
    racks: int
    power_w: int
    usd_per_hour: float | None
    price_basis: str | None
    labels: tuple[tuple[str, str], ...]
    taints: tuple[tuple[str, str, str], ...]
    capex_usd: float | None = None
    opex_usd_per_month: float | None = None
    price_estimated: bool = False
    idle_gpus: int = 0
    owned_nodes: int = 0
    owned_hosts: tuple[str, ...] = ()


class Candidate(NamedTuple):
    """A feasible way to run one deployment, as ranked by the objective.

    Planning forms one per layout tried (tens of thousands per run). ``spec.json`` writes it as an object.
    """

    gpu_id: str
    platform_id: str
    gpus_per_node: int
    tp: int
    pp: int
    replicas: int
    gpus: int
    nodes: int
    usd_per_hour: float | None
    power_w: int
    summary: str
    gpus_bought: int = 0
    idle_gpus: int = 0
    capex_usd: float | None = None
    opex_usd_per_month: float | None = None
    latency_s: float = 0.0
    owned_nodes: int = 0
    power_compared_w: int = 0


class DeploymentPlan(NamedTuple):
    """How one deployment is sized and where it runs."""

    name: str
    kind: Literal["inference", "training"]
    model_id: str
    model_source: str
    params_total: int
    params_active: int
    precision: str
    kv_cache_precision: str | None
    tp: int
    pp: int
    replicas: int
    gpus: int
    pool: str
    memory_per_gpu: dict[str, int]
    details: dict[str, Any]
    reasons: tuple[str, ...]
    runners_up: tuple[Candidate, ...] = ()


class Plan(NamedTuple):
    """The whole resolved plan: the machine-readable source of truth (``spec.json``)."""

    workload: str
    objective: str
    provider: str
    deployments: tuple[DeploymentPlan, ...]
    pools: tuple[Pool, ...]
    totals: dict[str, Any]
    findings: tuple[Finding, ...]
    constants: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data (tuples become lists)."""
        data: dict[str, Any] = _plain(self)
        return data


def _plain(value: Any) -> Any:
    """Plain JSON-able data: records as objects (fields in order), dict keys as text, tuples as lists, floats to 6 places."""
    kind = type(value)
    if kind in _RECORDS:
        return {name: _plain(v) for name, v in zip(kind._fields, value, strict=True)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float):
        return round(value, 6)
    return value


#: The records ``spec.json`` writes as objects (other named tuples in the plan's data are lists).
_RECORDS: frozenset[Any] = frozenset({Finding, Nic, NodeSpec, Pool, Candidate, DeploymentPlan, Plan})
