"""The ``hardware.fixed`` machine under the serving engines: the same server planned as owned inventory.

``hardware.fixed`` places a model for llama.cpp (offload to RAM and NVMe where VRAM is short), whose layer split
runs one GPU at a time. Where the GPUs hold the model, the same server described as owned servers
(``hardware.inventory`` with ``hardware.buy: false``) is planned with vLLM / SGLang replicas at tensor parallelism, by the
throughput model every other plan uses: newuser77 item 11, 8 x MI300X refused 10 req/s of Llama 3.3 70B under
llama.cpp (1.71 a second at most) and told to buy servers, where 8 x TP1 vLLM replicas on it serve 12.2. This module
plans that twin, holding the file's inference deployments together, so a fixed plan and its refusals can say what
the server does that way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator.errors import SpecgenError
from generator.named_tuple import NamedTuple
from generator.units import figure_text
from generator.workload.models import CustomServer, InferenceDeployment, InventoryGroup

if TYPE_CHECKING:
    from generator.planner.plan import DeploymentPlan
    from generator.workload import LoadedWorkload

#: Where the twin is described: what a user writes for it.
AS_OWNED = "hardware.inventory with hardware.buy: false"  # buy is hardware's, not an inventory entry's (fix162)

#: The rate the twin is planned at where it cannot make the one asked: its layout at the least load, then filled.
LOW_RATE = 0.01

#: A rack so large that the twin's one server always fits it: a fixed machine has no rack limit to check.
_NO_RACK_LIMIT_KW = 1e6


class EngineServing(NamedTuple):
    """Deployment ``index`` on the fixed machine's twin: its layout and the rate it serves within the SLOs."""

    engine: str
    tp: int
    pp: int
    replicas: int
    #: Requests/s the replicas sustain within the SLOs together (:meth:`DeploymentPlan.sustained_rate`).
    sustained_rps: float
    #: Whether they make the rate asked (else the layout is the one planned at a lower rate, filling the machine).
    meets_rate: bool
    #: The file's other inference deployments the twin holds beside this one, each at the rate it asks.
    others: int = 0

    def text(self, rate: float) -> str:
        """``8 x TP1 vLLM replicas serve the 10 req/s asked (up to 11.62 within the SLOs)``; ``rate``: the one asked.

        With the file's other deployments on the twin too, ``..., beside its other deployment at the rate it asks``.
        """
        layout = f"TP{self.tp}" + (f" PP{self.pp}" if self.pp > 1 else "")
        name = {"vllm": "vLLM", "sglang": "SGLang"}.get(self.engine, self.engine)
        most = figure_text(round(self.sustained_rps, 2))
        replicas = f"{self.replicas} x {layout} {name} replica(s)"
        beside = (
            ""
            if not self.others
            else f", beside the file's other {self.others} inference deployment(s) at the rates they ask"
            if self.others > 1
            else ", beside the file's other inference deployment at the rate it asks"
        )
        if self.meets_rate:
            return f"{replicas} serve the {figure_text(rate)} req/s asked (up to {most} within the SLOs){beside}"
        return f"{replicas} serve {most} req/s within the SLOs{beside}"


def owned_twin(loaded: LoadedWorkload, index: int, rate: float | None = None) -> LoadedWorkload:
    """The fixed machine described as one owned custom server, holding every inference deployment of the file.

    Deployment ``index`` at ``rate`` where given, the others at the rates they ask. hostile79 item 4: the twin was
    planned with ``index`` alone, so with two deployments each refusal promised both the whole machine, and the owned
    plan it advised then refused the second and pointed back to ``hardware.fixed``.
    """
    wl = loaded.workload
    fixed = wl.hardware.fixed
    assert fixed is not None
    dep = wl.deployments[index]
    assert isinstance(dep, InferenceDeployment)
    if rate is not None:
        dep = dep._replace(inference=dep.inference._replace(requests_per_second=rate, average_requests_per_second=None))
    deps = tuple(
        dep if k == index else d for k, d in enumerate(wl.deployments) if k == index or isinstance(d, InferenceDeployment)
    )
    server = CustomServer(
        gpu=fixed.gpu,
        gpus_per_server=fixed.gpu_count,
        ram_gib=int(fixed.ram_gib),
        cpu=fixed.cpu,
        cpu_sockets=fixed.cpu_sockets,
        nvme_tb=fixed.nvme_gib * 2**30 / 1e12,
        nvme_drives=1 if fixed.nvme_gib else 0,
    )
    hardware = wl.hardware._replace(
        fixed=None,
        inventory=(InventoryGroup(count=1, custom=server),),
        buy=False,
        gpus=(fixed.gpu,),
        platforms=None,
        rack_power_kw=_NO_RACK_LIMIT_KW,
        rack_circuits=None,
        max_nodes=None,
        max_racks=None,
    )
    workload = wl._replace(deployments=deps, hardware=hardware)
    return loaded._replace(workload=workload, models={d.name: loaded.models[d.name] for d in deps})


def _planned(loaded: LoadedWorkload, name: str) -> tuple[DeploymentPlan, int] | None:
    """The twin's deployment ``name`` as the planner plans it and the GPUs its others take, or None where it refuses."""
    from generator.planner import plan_workload  # the search loads here: validate's refusals reach this module

    try:
        plan = plan_workload(loaded)
    except SpecgenError:
        return None
    found = [d for d in plan.deployments if d.name == name and d.kind == "inference" and not d.split]
    others = sum(d.gpus for d in plan.deployments if d.name != name)
    return (found[0], others) if found else None


def serving_engines(loaded: LoadedWorkload, index: int) -> EngineServing | None:
    """What the fixed machine serves of deployment ``index`` under vLLM / SGLang, or None where they cannot run it.

    The twin holds the file's other inference deployments at the rates they ask (:func:`owned_twin`). At the rate
    asked where the twin makes it; else planned at a small rate, its layout filled over the GPUs the others leave
    (``free // (tp x pp)`` replicas), the rate those sustain. None where the others leave it no replica.
    """
    wl = loaded.workload
    fixed = wl.hardware.fixed
    dep = wl.deployments[index]
    if fixed is None or not isinstance(dep, InferenceDeployment):
        return None
    engine = dep.inference.engine
    others = sum(1 for k, d in enumerate(wl.deployments) if k != index and isinstance(d, InferenceDeployment))
    asked = _planned(owned_twin(loaded, index), dep.name)
    if asked is not None:
        mine = asked[0]
        return EngineServing(engine, mine.tp, mine.pp, mine.replicas, mine.sustained_rate(), True, others)
    planned = _planned(owned_twin(loaded, index, LOW_RATE), dep.name)
    if planned is None:
        return None
    low, taken = planned
    replicas = (fixed.gpu_count - taken) // max(1, low.stage_gpus * low.pp)
    if replicas < 1:
        return None
    return EngineServing(engine, low.tp, low.pp, replicas, low.sustained_rate(replicas), False, others)
