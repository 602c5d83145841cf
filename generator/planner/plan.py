"""The planner's frozen result: pools of nodes, per-deployment sizing, findings and reasons.

Its records are named tuples (:mod:`generator.named_tuple`), not frozen dataclasses: each dataclass costs about
a millisecond to define at every cold start. ``spec.json`` writes each record as an object.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal

from generator.named_tuple import NamedTuple
from generator.sizing.serving_queue import SlotQueue, slot_rate
from generator.units import HOURS_PER_MONTH, figure_text
from generator.words import listed

Level = Literal["info", "warning", "error"]


class Finding(NamedTuple):
    """Something the user should know: a level, a stable code, a message and the workload path."""

    level: Level
    code: str
    message: str
    path: str = ""
    #: The pools whose figures the finding qualifies, for a reader that says so elsewhere than the message (the
    #: headline names ``spot-priced-on-demand``'s pools priced at an on-demand rate from it: review80 item 11, where it
    #: read them back out of the message); empty for most findings. Not written to ``spec.json``: the message names them.
    pools: tuple[str, ...] = ()


def layout_name(tp: int, pp: int, ep: int = 1) -> str:
    """A serving replica's layout as plans name it: ``TP4 PP2``, ``TP8 EP8``, ``TP1 EP8 (attention DP 8)``.

    EP above TP is attention data parallelism (newuser72 item 1): ``ep / tp`` groups of TP GPUs, each holding its own
    sequences, the routed experts spread over all ``ep`` GPUs of a stage.
    """
    text = f"TP{tp}" + (f" EP{ep}" if ep > 1 else "") + (f" PP{pp}" if pp > 1 else "")
    return text + (f" (attention DP {ep // tp})" if ep > tp else "")


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


def ram_text(ram_gib: int | None) -> str:
    """A node's RAM as the plan text says it: its GiB, or that no figure is sourced."""
    return "RAM unsourced" if ram_gib is None else f"{ram_gib} GiB RAM"


def nvme_text(nvme_tb: float | None, drives: int) -> str:
    """A node's local NVMe as the plan text says it: its TB, or its drives where no capacity is sourced."""
    return f"{drives} NVMe drives (capacity unsourced)" if nvme_tb is None else f"{nvme_tb} TB NVMe"


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
    #: None where no figure is sourced (a rack-scale system's soldered memory the catalog has none for)
    ram_gib: int | None
    #: None where the catalog counts the drives but sources no capacity (a GB300 NVL72 tray's E1.S drives)
    nvme_tb: float | None
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
    #: Linux hosts the node is made of: the compute trays of a rack-scale system, each with its own OS, CPUs,
    #: memory and drives (1 for every other server). The node's GPUs, CPU cores, RAM, drives and NICs are its
    #: totals, split evenly over its hosts; power, racks, cost and the NVLink domain stay the node's.
    hosts: int = 1
    #: The CPUs of one of those hosts where the node has several (an NVIDIA GB200 NVL72 compute tray: ``2x`` of
    #: its 36 Grace CPUs); None where the node is one host (``cpu`` is its CPUs).
    host_cpu: str | None = None


def nvme_drives_text(node: NodeSpec) -> str:
    """A node's NVMe data drives a host, as findings say them.

    A capacity the catalog sources without a drive count is said as such (newuser36 item 9: "0 NVMe data drive(s)"
    beside 3.0 TB of them).
    """
    if not node.nvme_drives and node.nvme_tb:
        return f"{node.nvme_tb / node.hosts:g} TB of NVMe data drives a host (how many drives: not in the catalog)"
    return f"{node.nvme_drives // node.hosts} NVMe data drive(s) a host"


class Pool(NamedTuple):
    """Identical nodes serving one or more deployments."""

    name: str
    node: NodeSpec
    nodes: int
    deployments: tuple[str, ...]
    #: Racks holding some node of the pool: racks are shared by the pools, so these do not add up to the fleet's
    #: (``Plan.racks`` lists them with what each holds).
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
    #: Rented for finite training jobs and costed per job: its nodes run only while a job does (scaled from zero).
    per_job: bool = False
    #: Bytes of files one node keeps on its disks: the model files of its deployments (a checkpoint quantized as it
    #: loads is kept in its own format), a training job's dataset and checkpoints (what its local NVMe is sized for).
    files_bytes: int = 0
    #: On bare metal, how servers rented from a provider (a catalog rental record, e.g. Lambda's) are billed: ``"hour"``
    #: or ``"month"``. They stand in the provider's datacentre: bought by no one, in no rack of the plan (newuser39
    #: item 3). None (left out of ``spec.json``): bought or owned, or a cloud's.
    rented: str | None = None
    #: Pods each GPU of the pool holds (MIG instances, time-slicing or MPS replicas), where its GPUs are shared
    #: (``kubernetes.gpu_sharing``); None (left out of ``spec.json``): whole GPUs.
    shares_per_gpu: int | None = None
    #: The GPU sharing its GPUs get as deployed (``mig 3g.40gb``, ``time-slicing x4``, ``mps x4``; None: whole GPUs),
    #: part of the pool's identity where the provider cannot change it in place (a GKE node pool's name, Karpenter drift).
    #: Both fields stay: neither follows from the other alone. The count does not say the strategy or MIG profile
    #: (``mps x4`` and ``time-slicing x4`` both hold 4), and the planner packs by the count before any render runs
    #: (the text is the render's, ``generator.render.gpu_sharing.apply_sharing``, which sets it from the workload's
    #: setting on exactly the pools with a count); ``spec.json`` writes both, so neither can become a property.
    gpu_sharing: str | None = None
    #: On a cloud, the fewest nodes the pool scales down to off-peak: those its services' replicas take at their
    #: ``average_requests_per_second`` (``nodes`` is the peak's); None (left out of ``spec.json``): a fixed size.
    min_nodes: int | None = None
    #: On a cloud (or servers rented by the hour), hours a month a pool holding only batch jobs runs: their runs' hours
    #: (:mod:`generator.planner.batch_job`), at most a month; it scales to zero nodes (``min_nodes`` 0) between runs and
    #: is paid for these hours. None (left out of ``spec.json``): it runs all month.
    busy_hours_per_month: float | None = None
    #: Parts of its owned catalog servers the plan assumed as for a purchase (``cpu``, ``ram``, ``nvme``, ``psu``,
    #: ``fabric``, ``frontend``), not read off the servers; None (left out of ``spec.json``): no owned catalog server.
    build_assumed: tuple[str, ...] | None = None
    #: ``"spot"``: its nodes are the cloud's spot capacity (``capacity_type: spot``); None (left out of ``spec.json``):
    #: on demand (or bought, owned).
    capacity_type: str | None = None
    #: On a cloud, the root / OS disk its rendered nodes ask for, in the provider's unit (an EKS node's root EBS
    #: volume in GiB, the AMI's 20 where the instance store holds its files; an AKS node pool's ``os_disk_size_gb``
    #: in GB; a GKE node pool's boot ``disk_size_gb``, 100 by default), set by the render
    #: (``generator.render.node_disk.with_root_disks``): no provider changes it on a node, so a change is every
    #: node created again (newuser74 item 12). None (left out of ``spec.json``): bare metal.
    root_disk_size: int | None = None
    #: On bare metal, where services share the pool's owned servers: each owned host's replicas and the GPUs (indices
    #: from 0) each takes there, as Ansible's ``specgen_replicas`` places them (fix167: two services on one server read
    #: as one server each). None (left out of ``spec.json``): one deployment, GPU shares, or no owned host.
    host_gpus: tuple[HostGpus, ...] | None = None

    @property
    def spot(self) -> bool:
        """Whether the pool's nodes are spot capacity, reclaimed by the cloud at short notice."""
        return self.capacity_type == "spot"

    @property
    def hosts(self) -> int:
        """Linux hosts in the pool: its nodes times each node's hosts (the compute trays of a rack-scale system)."""
        return self.nodes * self.node.hosts

    @property
    def runs_only(self) -> bool:
        """Whether its nodes run only while jobs do, from zero: training jobs rented per run, or batch jobs' runs."""
        return self.per_job or self.busy_hours_per_month is not None


#: What an owned pool's ``price_basis`` says where training jobs alone run on it and it is charged their runs' energy
#: (:class:`OwnedRuns`), after its server count: its ``usd_per_hour`` is that energy a month / 730 h, no node-hour price
#: (``specgen diff`` says the month moved, not a price; newuser89 left item 3).
RUNS_ENERGY_BASIS = "owned server(s) that training jobs alone run on: "

#: What a job on owned servers charged its runs' energy (:class:`OwnedRuns`) pays a month, and when: ``specgen diff``'s
#: training cell and ``training-fits-idle-gpus`` say it so (newuser96 item 2, fix170 item 1).
RUNS_ENERGY_PAID = "its runs' energy on owned servers"
PAID_AS_RUNS = "paid only as it runs"
#: How owned racked servers' colocation is paid, in :meth:`OwnedRuns.text` and where a month holds it (fix170 item 1).
PAID_WHETHER_RUN = "paid whether they run or not"


class OwnedRuns(NamedTuple):
    """What a training layout all on owned servers (no ``prices:`` rate) is charged: its runs' energy, colocation beside.

    The servers are owned, so their price is sunk; of their running cost a job adds only its runs' energy, busy hours x
    full power x PUE (1 for an owned workstation not racked) x ``energy_usd_per_kwh``. The hours left free are charged
    nothing (off or idle: the catalog has no sourced idle power, and every fleet that owns the servers pays the same idle
    draw). The colocation of owned racked servers is paid whether they run or not: counted in the month, and in the
    fleets that leave them free (:func:`~generator.planner.idle_owned_usd_per_month`). fix89.
    """

    #: The runs a month charged: the job's ``runs_per_month`` (a ``run_after`` chain's), one where it gives none.
    runs: float
    #: Hours a run (a chain's: its jobs' hours summed).
    hours: float
    #: The servers' full power, all of them.
    kw: float
    pue: float
    usd_per_kwh: float
    #: Colocation of the servers a month (0: an owned workstation not racked).
    colocation_usd_per_month: float
    #: Whether the jobs give their ``runs_per_month``; where not, one run a month is charged, and said (not written).
    runs_given: bool = True
    #: A pool's jobs, where its charge is theirs (not written): each job's name, its runs a month charged (one where it
    #: gives none), its hours a run (its slices' checkpoint writes and reads in them) and whether it gives its runs.
    #: Jobs of different cadences: ``runs`` is 1 and ``hours`` their runs' hours summed, each said (fix150).
    cadences: tuple[tuple[str, float, float, bool], ...] = ()

    @property
    def busy_hours(self) -> float:
        """Hours a month the servers run the runs (at most the month)."""
        return min(self.runs * self.hours, HOURS_PER_MONTH)

    @property
    def energy_usd_per_month(self) -> float:
        """The runs' energy a month."""
        return self.kw * self.busy_hours * self.pue * self.usd_per_kwh

    @property
    def run_usd(self) -> float:
        """What one run adds: its energy."""
        return self.energy_usd_per_month / self.runs

    @property
    def usd_per_month(self) -> float:
        """The servers' month: the runs' energy and their colocation."""
        return self.energy_usd_per_month + self.colocation_usd_per_month

    def _hours_and_runs(self) -> tuple[str, str]:
        """The hours a run (a pool's jobs' runs summed where their cadences differ) and what follows the price."""
        assumed = [name for name, _, _, given in self.cadences if not given]
        if len({runs for _, runs, _, _ in self.cadences}) > 1:  # fix150: each job's runs a month x hours, summed
            terms = [
                f"{runs:g} x {hours:,.2f} h {name}" + ("" if given else " (one run assumed)")
                for name, runs, hours, given in self.cadences
            ]
            hours_text = f"({' + '.join(terms)} = {self.hours:,.1f} h)"
            runs_text = ""
        else:
            hours_text = f"{self.hours:,.1f} h"
            runs_text = f" x {self.runs:g} runs a month" if self.runs != 1 else ""
        # newuser84 item 3: a nightly job's month read one run's energy, the runs a month unsaid; fix150: whose
        if assumed:
            runs_text += f", one run a month assumed for {listed(assumed)}: training.runs_per_month not given"
        elif not self.runs_given:
            runs_text += ", one run a month: training.runs_per_month not given"
        return hours_text, runs_text

    def text(self) -> str:
        """``its runs' energy (1.4 h x 1.20 kW x PUE 1 x $0.13/kWh)``, with the runs a month and colocation where they apply."""
        hours, runs = self._hours_and_runs()
        text = f"its runs' energy ({hours} x {self.kw:,.2f} kW x PUE {self.pue:g} x ${self.usd_per_kwh:g}/kWh{runs})"
        if self.colocation_usd_per_month:
            text += (
                f"; the servers are owned, and their colocation ${self.colocation_usd_per_month:,.0f}/month is {PAID_WHETHER_RUN}"
            )
        else:
            text += "; the servers are owned"
        return text + ", their hours left free charged nothing (off or idle)"


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
    #: GPUs on the servers bought or rented (whole servers; those on owned servers are not bought).
    gpus_bought: int = 0
    idle_gpus: int = 0
    capex_usd: float | None = None
    opex_usd_per_month: float | None = None
    latency_s: float = 0.0
    owned_nodes: int = 0
    power_compared_w: int = 0
    #: A training job's wall-clock hours (it ends and is costed per run); None for a service.
    run_hours: float | None = None
    #: A batch job's layout billed by the hour: the hours a month its servers run (its runs', at most a month), its pool
    #: scaling to zero between runs (:mod:`generator.planner.batch_job`); a split over owned servers and servers rented
    #: by the hour: its parts' month over its price an hour, the hours of its whole price its month pays; None: they
    #: run all month.
    busy_hours_per_month: float | None = None
    #: Rented on a reservation the workload names (``kubernetes.reservations``): billed by the month, runs or not.
    reserved: bool = False
    #: On bare metal, a server rented from a provider (:attr:`Pool.rented`): ``"hour"`` or ``"month"``; None otherwise.
    rented: str | None = None
    #: On bare metal, a split of servers bought and servers rented from a provider: the GPUs of ``gpus_bought`` that are
    #: rented (review67 item 6). None (left out of ``spec.json``): all had as ``rented`` says.
    gpus_rented: int | None = None
    #: Replicas one GPU holds where each runs in a share of one (``kubernetes.gpu_sharing``); ``gpus`` is then the GPUs
    #: holding one or more, packed (spread over the nodes where ``min_replicas`` spreads them). None (left out of
    #: ``spec.json``): whole GPUs.
    shares_per_gpu: int | None = None
    #: A runner-up that alone breaks a limit of the whole fleet, as the plan says it (``hardware.max_racks: its 2
    #: servers alone need 2 racks of 20 kW, 1 allowed``): why a cheaper one was not chosen (fuzz34 item 3). None (left
    #: out of ``spec.json``): within them, or not a runner-up.
    over_limit: str | None = None
    #: A service's runner-up no better than the choice on any figure (more GPUs, a month and power at least its, no more
    #: requests a second within the SLOs), as the plan says it (newuser79 item 8). None (left out of ``spec.json``):
    #: better on one, or not compared.
    no_better: str | None = None
    #: A training layout all on owned servers (no ``prices:`` rate): charged its runs' energy and the servers'
    #: colocation (:class:`OwnedRuns`), its price an hour their month over 730 h. None (left out of ``spec.json``):
    #: charged as its servers are.
    owned_runs: OwnedRuns | None = None

    @property
    def usd_per_month(self) -> float | None:
        """What the layout costs a month: its price an hour over the hours it runs (a month, or a batch job's runs)."""
        if self.usd_per_hour is None:
            return None
        return self.usd_per_hour * (HOURS_PER_MONTH if self.busy_hours_per_month is None else self.busy_hours_per_month)


class DeploymentPart(NamedTuple):
    """The replicas of a split deployment on one server kind (each replica homogeneous inside itself)."""

    pool: str
    platform_id: str
    gpu_id: str
    tp: int
    pp: int
    replicas: int
    gpus: int
    servers: int
    owned_servers: int
    #: The share of the deployment's request rate routed here: requests are routed evenly over all replicas
    #: of both parts (nothing rendered weights them), so rate x this part's replicas / all replicas.
    requests_per_s: float
    #: rate / all replicas: what each replica of either part serves.
    requests_per_s_per_replica: float
    requests_per_s_per_replica_max: float
    batch_per_replica: int
    #: Most sequences a replica runs at once (the engine's --max-num-seqs the plan counts on).
    max_num_seqs: int
    #: Tokens a forward pass runs (vLLM --max-num-batched-tokens the plan counts on); None for SGLang.
    max_num_batched_tokens: int | None
    ttft_p95_s: float
    tpot_s: float
    #: Memory of one GPU of this part by kind (bytes), the model's weight bytes and the KV tokens one replica holds.
    memory_per_gpu: dict[str, int]
    weights_bytes: int
    kv_cache_tokens_per_replica: int
    #: SGLang's --mem-fraction-static the part is sized with (the one given, else SGLang's default for the memory it
    #: sees); None (left out of ``spec.json``): vLLM.
    mem_fraction_static: float | None = None
    #: The EP degree of a stage of this part's replicas (above ``tp``: attention data-parallel, newuser72 item 1);
    #: None (left out of ``spec.json``): no expert parallelism.
    expert_parallel: int | None = None


#: A batch job's run among a deployment's details (:mod:`generator.planner.batch_job`), as the Ansible group vars and
#: ``diff`` carry it.
BATCH_RUN_KEYS = ("requests_per_run", "deadline_hours", "runs_per_month", "hours_per_run")


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
    #: Replicas on two server kinds (owned ones first, the rest on another kind); empty: all on ``pool``.
    #: When split, ``replicas``, ``gpus`` and ``details`` are the whole deployment's (``details`` then holds no
    #: per-replica sizing: each part carries its own); ``pool``, ``tp``, ``pp`` and ``memory_per_gpu`` repeat
    #: the first part's (``split[0]``) for readers of one pool, and views show the parts instead.
    split: tuple[DeploymentPart, ...] = ()
    #: A service's places in the batch and a request's time in one (one layout's; None for a split service, a batch
    #: job, a pooling one): what its replicas sustain together within the SLOs (:func:`sustained_rate`). Not written
    #: to ``spec.json`` (its figures are the reason's slot-wait line and ``slot_wait_*``).
    slot_queue: SlotQueue | None = None
    #: A batch job's replicas on the node holding the most of them, and what the rest sustain with it down (req/s), as
    #: :func:`~generator.planner.batch_job.node_down_rps` counts the planned layout; what ``batch-job-on-spot`` says, as
    #: a spot job's near tie is settled by them (review81 item 6). None for a service or a training job. Not written to
    #: ``spec.json``.
    node_down: tuple[int, float] | None = None

    def sustained_rate(self, replicas: int | None = None) -> float:
        """Requests/s ``replicas`` of this service's (all by default) sustain within the SLOs, the wait for a place too.

        Each at ``requests_per_s_per_replica_max`` at most, together held to what keeps the p95 wait for a place in
        their batch within the TTFT target's slack (:func:`~generator.sizing.serving_queue.slot_rate`; m74a item 4).
        """
        count = self.replicas if replicas is None else replicas
        each = float(self.details.get("requests_per_s_per_replica_max") or 0.0)
        most = count * each
        return most if self.slot_queue is None else slot_rate(most, ((count, self.slot_queue),))

    @property
    def expert_parallel(self) -> int:
        """The EP degree of a stage (1: none); above ``tp`` the stage's attention runs data-parallel (newuser72 item 1)."""
        return int(self.details.get("expert_parallel") or 1)

    @property
    def stage_gpus(self) -> int:
        """GPUs one pipeline stage of a replica takes: its TP, or its EP where attention runs data-parallel."""
        return max(self.tp, self.expert_parallel)

    def expert_parallel_in(self, pool: str) -> int:
        """The EP degree of a stage of this deployment's replicas in ``pool`` (a split's part's; 1: none)."""
        if self.split:
            return next((p.expert_parallel or 1 for p in self.split if p.pool == pool), 1)
        return self.expert_parallel

    @property
    def pools(self) -> tuple[str, ...]:
        """The pools this deployment's replicas run in (two when it is split)."""
        return tuple(p.pool for p in self.split) or (self.pool,)

    @property
    def listed_reasons(self) -> tuple[str, ...]:
        """``reasons`` as a view that lists ``runners_up`` on their own shows them: the choice less its runner-up.

        The choice's reason ends with its runner-up (:func:`~generator.planner.choice_reasons._choice_reason`), which a
        view's runner-up lines or table list again with the same figures (newuser43 item 11: the plan text printed it
        twice); the plan's JSON keeps the reasons whole.
        """
        return tuple(_without_runner_up(r, self.runners_up) for r in self.reasons)

    def _serving_figure_in(self, pool: str, name: str) -> Any:
        """A service's figure ``name`` for its replicas in ``pool``: the part's when split, else the details'; None if none."""
        if self.split:
            return next((getattr(p, name) for p in self.split if p.pool == pool), None)
        return self.details.get(name) if pool == self.pool else None

    def requests_per_s_in(self, pool: str) -> float | None:
        """Requests/s this deployment's replicas in ``pool`` are sized for; None for a training job or no replicas there."""
        rate = self._serving_figure_in(pool, "requests_per_s")
        return None if rate is None else float(rate)

    def max_num_batched_tokens_in(self, pool: str) -> int | None:
        """The tokens a forward pass of this deployment's replicas in ``pool`` runs; None for a training job or SGLang."""
        tokens = self._serving_figure_in(pool, "max_num_batched_tokens")
        return None if tokens is None else int(tokens)

    def mem_fraction_static_in(self, pool: str) -> float | None:
        """SGLang's ``--mem-fraction-static`` this deployment's replicas in ``pool`` are sized with; None for vLLM."""
        fraction = self._serving_figure_in(pool, "mem_fraction_static")
        return None if fraction is None else float(fraction)

    def kv_cache_tokens_per_replica_in(self, pool: str) -> int | None:
        """The KV tokens one replica of this deployment in ``pool`` holds; None for a training job."""
        tokens = self._serving_figure_in(pool, "kv_cache_tokens_per_replica")
        return None if tokens is None else int(tokens)

    def max_num_seqs_in(self, pool: str) -> int | None:
        """The most sequences each of this deployment's replicas in ``pool`` runs at once; None for a training job."""
        running = self._serving_figure_in(pool, "max_num_seqs")
        return None if running is None else int(running)

    def in_pool(self, pool: str) -> tuple[int, int, int, int] | None:
        """(TP, PP, replicas, GPUs) of this deployment's replicas in ``pool``; None when it has none there."""
        if not self.split:
            return (self.tp, self.pp, self.replicas, self.gpus) if pool == self.pool else None
        return next(((p.tp, p.pp, p.replicas, p.gpus) for p in self.split if p.pool == pool), None)


#: The totals of a fleet's pools that rest at 0 nodes between their jobs' runs (:attr:`Pool.runs_only`), where it has
#: any: counted in its GPUs, nodes and power, which its headline says (newuser69 item 9).
RUNS_ONLY_TOTALS = ("runs_only_gpus", "runs_only_nodes", "runs_only_power_w")


def runs_only_figures(resting: Iterable[tuple[int, int, int]]) -> dict[str, int]:
    """:data:`RUNS_ONLY_TOTALS` of resting pools given as (GPUs a node, nodes, watts): a plan's, or a spec.json's."""
    rows = list(resting)
    figures = (sum(g * n for g, n, _ in rows), sum(n for _, n, _ in rows), sum(w for _, _, w in rows))
    return dict(zip(RUNS_ONLY_TOTALS, figures, strict=True))


def runs_only_totals(pools: list[Pool]) -> dict[str, int]:
    """The GPUs, nodes and watts of ``pools`` that run only while their jobs do; nothing where none does."""
    resting = [(p.node.gpus, p.nodes, p.power_w) for p in pools if p.runs_only]
    return runs_only_figures(resting) if resting else {}


def runs_only_runs(pools: tuple[Pool, ...] | list[Pool]) -> str:
    """Whose runs a fleet's resting pools run for: ``training runs``, ``batch jobs' runs`` or both."""
    training = any(p.per_job for p in pools)
    batch = any(p.runs_only and not p.per_job for p in pools)
    return "training and batch jobs' runs" if training and batch else "training runs" if training else "batch jobs' runs"


def runs_only_nodes_text(totals: dict[str, Any], pools: tuple[Pool, ...] | list[Pool]) -> str:
    """`` (1 of them, with 1 GPU, only during training runs)`` after a fleet's nodes, or "" where none rests at 0.

    newuser69 item 9: "17 GPUs on 16 node(s), 14.4 kW" read as 16 VMs always on where one is up ~12 h a month.
    """
    nodes, gpus = totals.get("runs_only_nodes"), totals.get("runs_only_gpus")
    if not nodes:
        return ""
    if nodes == totals.get("nodes"):
        return f" (all of them only during {runs_only_runs(pools)})"
    return f" ({nodes:,} of them, with {gpus:,} GPU{'' if gpus == 1 else 's'}, only during {runs_only_runs(pools)})"


def runs_only_power_text(totals: dict[str, Any]) -> str:
    """`` (0.9 kW of it only during those runs)`` after a fleet's power, or "" where no pool rests at 0."""
    watts = totals.get("runs_only_power_w")
    if not totals.get("runs_only_nodes") or not watts:
        return ""
    return (
        " (all of it only during those runs)"
        if watts == totals.get("power_w")
        else f" ({watts / 1000:,.1f} kW of it only during those runs)"
    )


def _without_runner_up(reason: str, runners_up: tuple[Candidate, ...]) -> str:
    """``reason`` cut before the ``; runner-up <summary> (...)`` it ends with where that runner-up is listed."""
    for candidate in runners_up:
        cut = reason.find(f"; runner-up {candidate.summary} (")
        if cut >= 0:
            return reason[:cut]
    return reason


class HostGpus(NamedTuple):
    """One replica of a service on one owned host of a pool its services share, and the host's GPUs it takes."""

    host: str
    deployment: str
    #: The replica's number among the service's replicas in the pool, from 1.
    replica: int
    gpus: tuple[int, ...]


class RackPool(NamedTuple):
    """The nodes of one pool in one rack, and the names of those the workload names (``hardware.inventory[].hosts``)."""

    pool: str
    nodes: int
    #: Linux host names of the owned nodes placed in this rack (a rack-scale system's compute trays); the bought
    #: ones have none in the plan (the render's placeholders stand for them).
    hosts: tuple[str, ...] = ()


class RackSupply(NamedTuple):
    """The circuits each rack is fed with (``hardware.rack_circuits``) and what a rack may draw from them.

    ``usable_kw`` is what the racks are packed against (``RackSpec.rack_power_kw``): the ``serving_circuits`` (one
    side's with 2N, all of them without redundancy) each at ``circuit_usable_kva``, times the power factor.
    """

    voltage_v: float
    phases: int
    breaker_a: float
    circuits: int
    redundancy: str
    serving_circuits: int
    continuous_load_fraction: float
    #: Where the fraction comes from: as given, or the default and its rule.
    continuous_load_basis: str
    power_factor: float
    #: Where the power factor comes from: as given, or the default and its source.
    power_factor_basis: str
    #: The most one circuit may carry continuously, on each phase: its breaker times the continuous-load fraction.
    continuous_limit_a: float
    #: How a PSU is fed: "single-phase"; on three phases "line-to-neutral" (a 400/415/480 V supply's 230/240/277 V)
    #: or "line-to-line" (208 V), at ``outlet_voltage_v``.
    outlet_connection: str
    outlet_voltage_v: float
    #: One circuit at its breaker's rating, and at its continuous limit.
    circuit_kva: float
    circuit_usable_kva: float
    usable_kva: float
    usable_kw: float


class RackCircuitLoad(NamedTuple):
    """What one rack draws from its circuits (``Plan.rack_supply``): apparent power and its most loaded line's current.

    The line is the most loaded of any circuit, each server's PSUs plugged in one to an outlet as the packing placed
    them (:mod:`generator.sizing.psu_feeds`): shared with every circuit up, and at failover (2N) with the worse side
    carrying the rack alone. The percentages are of the breaker's rating.
    """

    apparent_power_kva: float
    phase_current_a: float
    breaker_percent: float
    #: None without redundancy: losing a circuit drops what it feeds, nothing fails over.
    failover_phase_current_a: float | None
    failover_breaker_percent: float | None


class RackSpec(NamedTuple):
    """One colocation rack of a bare-metal fleet as the planner packed it (``generator.planner.racks``).

    ``power_w`` and ``heat_btu_per_h`` are the nodes' planned figures (the fleet totals' basis: the racks of a fleet
    sum to them, save owned workstations, which stay in the office); ``rack_power_kw`` is the limit it was packed
    against, ``units`` the rack units its servers take of ``usable_units`` (42U less those reserved for switches).
    """

    id: str
    pools: tuple[RackPool, ...]
    nodes: int
    units: int
    usable_units: int
    power_w: int
    heat_btu_per_h: int
    rack_power_kw: float
    #: "air", "liquid" or "air+liquid": how its servers are cooled (the air-cooling limit applies to the air-cooled).
    cooling: str
    #: Its kVA and currents where the workload gives its circuits (``hardware.rack_circuits``); None (and left out of
    #: ``spec.json``) where it gives rack_power_kw.
    circuit_load: RackCircuitLoad | None = None


class CapacityServed(NamedTuple):
    """What one inference deployment serves at a capacity plan's scale (``objective: capacity``)."""

    name: str
    #: The workload's ``requests_per_second``, and the rate planned: it times the plan's factor.
    given_requests_per_second: float
    requests_per_second: float
    #: Prompt and output tokens a second at the rate planned (its requests times ``avg_input_tokens`` /
    #: ``avg_output_tokens``; a pooling service's output is none).
    input_tokens_per_second: float
    output_tokens_per_second: float
    #: The share of what each replica sustains within the SLOs it is planned to run at (``inference.max_utilization``):
    #: the factor is the scale at that load (newuser61 item 12: 16.5 x at 100%, with no word of it).
    max_utilization: float = 1.0
    #: How requests reach its replicas (``inference.routing``), which the rate it serves holds for (newuser74 item 3:
    #: 145 req/s behind a free_place router, 130 under routing even).
    routing: str = "free_place"


class Capacity(NamedTuple):
    """What ``hardware.max_capex_usd`` buys (``objective: capacity``, :mod:`generator.planner.capacity`).

    ``factor``: the largest common scale of the inference deployments' request rates found that a fleet within the cap
    serves; ``tried_factor``: the least scale found that none does (within ``resolution`` of ``factor``, relative), and
    ``bound_by`` the workload field that stopped it (``hardware.max_capex_usd``, or another limit that binds first).
    ``capex_usd`` is what the fleet's servers bought cost, ``usd_per_month`` and ``opex_usd_per_month`` its month
    (amortised capex + running costs, and the running costs alone), as in the plan's totals.
    """

    factor: float
    resolution: float
    tried_factor: float
    bound_by: str
    max_capex_usd: float
    capex_usd: float
    usd_per_month: float | None
    opex_usd_per_month: float | None
    served: tuple[CapacityServed, ...]


def capacity_bound(c: Capacity) -> Literal["cap", "owned", "limit", "top"]:
    """What bounded the factor found, as the plan text and SPEC.md say it (fuzz35 items 1 and 7).

    ``cap``: ``hardware.max_capex_usd`` (the cap buys the factor); ``owned``: the cap too, where the owned servers
    alone serve the factor and the cap buys no fleet that serves more; ``limit``: another field (``max_nodes``, the
    monthly budget, an SLO), with capex of the cap unspent; ``top``: the search's largest factor, the cap bounding none.
    """
    if c.bound_by.startswith("the search's largest"):
        return "top"
    if c.bound_by != "hardware.max_capex_usd":
        return "limit"
    return "cap" if c.capex_usd else "owned"


def capacity_headline(c: Capacity, code: Callable[[str], str] = str, strong: Callable[[str], str] = str) -> str:
    """What the capex cap buys, one sentence: the plan text's ``capacity:`` line and SPEC.md's.

    ``code``: how a workload field is said (SPEC.md: a code span), ``strong``: the factor (SPEC.md: bold); review29
    item 6: the two were written apart, four branches each. The cap is credited with the factor only where it bound it
    (:func:`capacity_bound`; fuzz35 item 7: "$400,000 buys 3.406 x" where ``max_nodes`` stopped it with $308,069
    unspent).
    """
    month = "unpriced" if c.usd_per_month is None else f"${c.usd_per_month:,.0f}/month"
    opex = "" if c.opex_usd_per_month is None else f" (opex ${c.opex_usd_per_month:,.0f}/month)"
    bound = capacity_bound(c)
    cap = f"{code('max_capex_usd')} ${c.max_capex_usd:,.0f}"
    factor = f"{strong(f'{figure_text(c.factor)} x')} the request rates given"
    tried = f"{figure_text(float(f'{c.tried_factor:.4g}'))} x breaks"
    searched = f"searched to {c.resolution:.0%}"
    left = f"${c.max_capex_usd - c.capex_usd:,.0f}"
    who = f"the owned servers alone, within {cap}, serve" if not c.capex_usd else f"the fleet within {cap} serves"
    if bound == "cap":
        head, unspent = f"{cap} buys {factor} ({tried} {code(c.bound_by)}, {searched})", f"{left} left"
        if c.max_capex_usd - c.capex_usd > UNSPENT_SAID * c.max_capex_usd:  # newuser61 item 3: $29,356 of $60,000 left
            unspent += (
                ": each deployment's replicas run on one server kind, so servers of another kind or GPU count beside "
                "them, which might spend it, are not searched (a deployment split in two may take them)"
            )
    elif bound == "owned":
        more = f"{cap} buys no fleet that serves more ({tried} {code(c.bound_by)}, {searched})"
        head, unspent = f"the owned servers alone serve {factor}, and {more}", f"{left} left"
    elif bound == "limit":
        head = f"{who} {factor}, bound by {code(c.bound_by)} ({tried} it, {searched})"
        unspent = f"{left} of the cap unspent"
    else:
        head = f"{who} {factor}, the search's largest factor (the cap bounds none up to it)"
        unspent = f"{left} of the cap unspent"
    return f"{head}; capex ${c.capex_usd:,.0f} spent ({unspent}), {month}{opex}{_utilization_text(c, code)}"


def _utilization_text(c: Capacity, code: Callable[[str], str]) -> str:
    """The load each replica is planned at, which the factor is the scale at (newuser61 item 12); "" with no service."""
    shares = {s.max_utilization for s in c.served}
    field = code("inference.max_utilization")
    if not shares:
        return ""
    if len(shares) > 1:
        each = ", ".join(f"{s.name} {s.max_utilization:.0%}" for s in c.served)
        return f"; at up to each deployment's {field} of each replica's modelled capacity: {each}{_routing_text(c, code)}"
    (share,) = shares
    text = f"; at up to {share:.0%} of each replica's modelled capacity ({field} {share:g})"
    text += ": no headroom for bursts, a server down or the model's error" if share >= 1 else ""
    return text + _routing_text(c, code)


#: What each ``inference.routing`` is, as a capacity headline says the rates hold behind it, and what it adds.
ROUTING_SAID = {
    "free_place": (
        "a router that sends each request to any replica with a place free in its batch",
        "; a Kubernetes Service's even spread serves less: plan with routing even for it",
    ),
    "even": ("an even spread over the replicas, each its own queue, as a Kubernetes Service gives", ""),
}


def _routing_text(c: Capacity, code: Callable[[str], str]) -> str:
    """The routing the factor holds for (newuser74 item 3: a free_place router was assumed unsaid); "" with no service."""
    field = code("inference.routing")
    routings = {s.routing for s in c.served}
    if len(routings) > 1:
        each = ", ".join(f"{s.name} {s.routing}" for s in c.served)
        return f"; behind each deployment's {field}: {each}"
    if not routings:
        return ""
    (routing,) = routings
    said, more = ROUTING_SAID.get(routing, (routing, ""))
    return f"; behind {said} ({field} {routing}{more})"


#: The share of the capex cap left unspent past which the headline says why the next server kind is not mixed in.
UNSPENT_SAID = 0.2


def capacity_lines(c: Capacity, training: bool = False) -> list[str]:
    """What the capex cap buys, as the plan text says it (``training``: the workload has training jobs)."""
    lines = [f"capacity: {capacity_headline(c)}"]
    for s in c.served:
        lines.append(
            f"  {s.name}: {figure_text(s.requests_per_second)} req/s (given {figure_text(s.given_requests_per_second)}), "
            f"{s.input_tokens_per_second:,.0f} input + {s.output_tokens_per_second:,.0f} output tokens/s"
        )
    if training:
        lines.append("  training deployments: their jobs as given (not scaled)")
    return lines


class OutletCircuit(NamedTuple):
    """The wall circuit ``hardware.wall_circuit`` gives a machine at home or in an office, and what it carries (fix168).

    ``continuous_w``: what the circuit carries continuously at ``continuous_load_fraction`` of its breaker and the PSUs'
    power factor, the figure the wall-circuit advice compares a machine's draw with. Written in ``spec.json`` so
    ``specgen diff`` can say a changed circuit.
    """

    voltage_v: float
    breaker_a: float
    continuous_load_fraction: float
    continuous_w: int


class SitesSpec(NamedTuple):
    """Per-site planning (``sites:``): the plan is one site's, repeated at each site on its own hosts (newuser113).

    ``hosts``: each site's hosts in role order (the k-th host of every site runs what the first site's k-th runs);
    ``totals``: the whole chain's (each profile's site figures times its sites, summed); ``profiles``: each distinct
    site profile (``sites[].requests_per_second_scale``), planned once: its sites, one site's figures and layout (fix201).
    """

    names: tuple[str, ...]
    hosts: tuple[tuple[str, ...], ...]
    totals: dict[str, Any]
    profiles: tuple[dict[str, Any], ...] = ()
    #: Each profile's own plan (index-aligned with ``profiles``; the first is the plan itself): what each site's
    #: rendered files are made of (fix203). Not written to ``spec.json`` (``profiles`` says their layouts).
    plans: tuple[Any, ...] = ()


class Plan(NamedTuple):
    """The whole resolved plan: the machine-readable source of truth (``spec.json``)."""

    workload: str
    objective: str
    provider: str
    #: The cloud region the workload names (``kubernetes.location``; a GKE zone's region); None where it names none.
    region: str | None
    deployments: tuple[DeploymentPlan, ...]
    pools: tuple[Pool, ...]
    totals: dict[str, Any]
    findings: tuple[Finding, ...]
    constants: dict[str, Any]
    #: The colocation racks of a bare-metal fleet, in packing order; none for a cloud plan or hardware.fixed.
    racks: tuple[RackSpec, ...] = ()
    #: The circuits each rack is fed with, where the workload gives them (``hardware.rack_circuits``); None (and left
    #: out of ``spec.json``) where it gives rack_power_kw.
    rack_supply: RackSupply | None = None
    #: What the capex cap buys, under ``objective: capacity``; None (and left out of ``spec.json``) otherwise.
    capacity: Capacity | None = None
    #: The wall circuit the workload gives (``hardware.wall_circuit``); None (and left out of ``spec.json``) where it
    #: gives none and a US 120 V / 15 A circuit is assumed.
    wall_circuit: OutletCircuit | None = None
    #: Per-site planning (``sites:``); None (and left out of ``spec.json``) for one fleet behind one router.
    sites: SitesSpec | None = None
    #: ``kubernetes.data_residency`` (``eu``), recorded beside the region it holds (fix200); None (and left out of
    #: ``spec.json``) where the workload sets none.
    data_residency: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data (tuples become lists)."""
        data: dict[str, Any] = _plain(self)
        return data


def _plain(value: Any) -> Any:
    """Plain JSON-able data: records as objects (fields in order), dict keys as text, tuples as lists, floats to 6 places."""
    kind = type(value)
    if kind in _RECORDS:
        return {
            name: _plain(v)
            for name, v in zip(kind._fields, value, strict=True)
            if (v is not None or (kind, name) not in _LEFT_OUT_WHEN_NONE) and (kind, name) not in _NOT_WRITTEN
        }
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float):
        return round(value, 6)
    return value


#: The records ``spec.json`` writes as objects (other named tuples in the plan's data are lists).
_RECORDS: frozenset[Any] = frozenset(
    {
        Finding,
        Nic,
        NodeSpec,
        Pool,
        Candidate,
        DeploymentPart,
        DeploymentPlan,
        Plan,
        RackPool,
        RackSpec,
        RackSupply,
        RackCircuitLoad,
        OutletCircuit,
        Capacity,
        CapacityServed,
        OwnedRuns,
        HostGpus,
        SitesSpec,
    }
)
#: Fields ``spec.json`` leaves out where they are None: the circuits of a workload that gives rack_power_kw instead,
#: whose plan is as it was before circuits could be given.
#: A bare-metal pool or layout's ``rented`` is left out where None (bought or owned: every plan before servers could be
#: rented on bare metal), and so are a split layout's ``gpus_rented`` (its parts had one way), ``shares_per_gpu``
#: and a pool's ``gpu_sharing`` (whole GPUs: every plan without
#: kubernetes.gpu_sharing), and a pool's ``min_nodes`` (a fixed size: every plan without average_requests_per_second)
#: and ``busy_hours_per_month`` (a pool that runs all month: every plan without a batch job)
#: and ``build_assumed`` (no owned catalog server in it), and ``capacity_type`` (on demand: every plan without spot).
#: Fields ``spec.json`` never writes: the planner's own figures, said elsewhere in the plan.
_NOT_WRITTEN: frozenset[tuple[Any, str]] = frozenset(
    {
        (DeploymentPlan, "slot_queue"),
        (DeploymentPlan, "node_down"),
        (Finding, "pools"),
        (OwnedRuns, "runs_given"),
        (OwnedRuns, "cadences"),
        (SitesSpec, "plans"),
    }
)
_LEFT_OUT_WHEN_NONE: frozenset[tuple[Any, str]] = frozenset(
    {
        (DeploymentPart, "expert_parallel"),
        (RackSpec, "circuit_load"),
        (Plan, "rack_supply"),
        (Plan, "capacity"),
        (Plan, "wall_circuit"),
        (Plan, "sites"),
        (Plan, "data_residency"),
        (Pool, "rented"),
        (Candidate, "rented"),
        (Candidate, "gpus_rented"),
        (Candidate, "shares_per_gpu"),
        (Candidate, "over_limit"),
        (Candidate, "no_better"),
        (Candidate, "owned_runs"),
        (Candidate, "busy_hours_per_month"),
        (Pool, "shares_per_gpu"),
        (Pool, "gpu_sharing"),
        (Pool, "min_nodes"),
        (Pool, "busy_hours_per_month"),
        (DeploymentPart, "mem_fraction_static"),
        (Pool, "build_assumed"),
        (Pool, "capacity_type"),
        (Pool, "root_disk_size"),
        (Pool, "host_gpus"),
    }
)
