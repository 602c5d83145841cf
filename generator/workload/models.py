"""Typed workload models, built from schema-valid data by :func:`generator.workload.build.build`.

Named tuples: immutable, typed, and cheap to define on every cold start (a dataclass costs about four times as
much to create). No ``from __future__ import annotations``: ``NamedTuple`` would turn every annotation string
into a compiled ``ForwardRef`` at import.

The YAML reader refuses non-finite numbers and the schema unknown keys and values of the wrong type before
these are built; the builder turns ints in float fields into floats, lists into tuples and nested mappings
into these models.
"""

from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal, TypeAlias

from generator.calculator.machine import FixedSpec
from generator.named_tuple import NamedTuple
from generator.sizing.electrical import DEFAULT_CONTINUOUS_LOAD_FRACTION, DEFAULT_POWER_FACTOR, whole_watts
from generator.sizing.serving_queue import prompt_tail

#: ``inference.routing`` (:data:`generator.sizing.serving_queue.ROUTINGS`, which the sizing spells out: typing is not
#: imported there at run time; tests/test_slot_routing.py checks the two alike); the builder reads it at run time.
Routing: TypeAlias = Literal["free_place", "even"]


class Slo(NamedTuple):
    """Latency targets."""

    ttft_p95_ms: float | None = None
    tpot_ms: float | None = None


class LoraAdapters(NamedTuple):
    """LoRA adapters served over the base model (vLLM / SGLang ``--enable-lora``; :mod:`generator.sizing.lora_serving`)."""

    adapters: int
    #: --max-lora-rank: every GPU slot is sized at it.
    max_rank: int
    #: The adapters' PEFT ``target_modules`` (their host size; SGLang's slots).
    target_modules: tuple[str, ...] = ("all-linear",)
    #: Adapters one batch uses at once (vLLM --max-loras, SGLang --max-loras-per-batch); None: the engine's default.
    max_loras: int | None = None
    #: Adapters kept loaded in host RAM (vLLM --max-cpu-loras, SGLang --max-loaded-loras); None: ``adapters``.
    max_cpu_loras: int | None = None


class InferenceSpec(NamedTuple):
    """How a model is served."""

    max_context_tokens: int
    precision: str | None = None
    allowed_precisions: tuple[str, ...] = ()
    kv_cache_precision: str = "bf16"
    min_context_tokens: int | None = None
    avg_input_tokens: int = 1000
    avg_output_tokens: int = 200
    #: 95th-percentile prompt length (a long-prompt tail); None: every prompt taken as ``avg_input_tokens`` long.
    p95_input_tokens: int | None = None
    requests_per_second: float = 1.0
    #: The average rate where the rate varies over the day (``requests_per_second`` its peak, the rate sized for): the
    #: cost per token is stated at it too, and on a cloud the serving pools scale down to the nodes it needs; None: not
    #: given (the rate is taken as sustained all month).
    average_requests_per_second: float | None = None
    #: A batch job's requests in one run, with ``deadline_hours`` (the hours a run may take): ``requests_per_second`` is
    #: then derived from them (:func:`generator.workload.load_document`); None: a service that runs all month.
    requests_per_run: int | None = None
    deadline_hours: float | None = None
    #: Runs a month of a batch job (``requests_per_run``); None: one.
    runs_per_month: float | None = None
    slo: Slo = Slo()
    service_class: Literal["interactive", "batch"] = "interactive"
    #: Serving engine whose KV accounting sizes the cache; SGLang's ``mem_fraction_static`` (None: its default).
    engine: Literal["vllm", "sglang"] = "vllm"
    mem_fraction_static: float | None = None
    #: Most sequences a replica runs at once (vLLM --max-num-seqs, SGLang --max-running-requests); None: the engine's
    #: default on the GPU (:func:`generator.sizing.engine_runtime.default_max_num_seqs`).
    max_num_seqs: int | None = None
    #: Tokens a forward pass runs (vLLM --max-num-batched-tokens): the prefill chunk and vLLM's profiling run; None:
    #: the engine's default on the GPU (:func:`generator.sizing.engine_runtime.default_max_num_batched_tokens`).
    max_num_batched_tokens: int | None = None
    #: Fewest replicas the service runs whatever its rate needs (2: it keeps serving while one replica's node is
    #: drained for an upgrade or repair, or fails).
    min_replicas: int = 1
    #: Nodes that may be down at once while the rate is still served within the SLOs (1: N+1); 0: none asked.
    nodes_down_tolerated: int = 0
    #: Share of its replicas' capacity within the SLOs the rate may use (0.8 plans 1.25x the capacity the rate needs).
    max_utilization: float = 1.0
    #: How requests reach the replicas, which sizes the wait for a place in their batch (review74 item 1): free_place, a
    #: router holding each request until a replica has a place free (one queue); even, each replica its own queue.
    routing: Routing = "free_place"
    #: What a request does: generate (prefill, then decode), or a pooling task (vLLM --runner pooling): embed, score.
    task: Literal["generate", "embed", "score"] = "generate"
    #: Images in a request, on average: their tokens are added to the prompt lengths (:mod:`generator.workload.image_tokens`).
    images_per_request: float = 0.0
    #: Tokens one image takes; None: the model's own where every image is resized to one size.
    image_tokens: int | None = None
    #: Share of each prompt's tokens the engine's prefix cache already holds (an agent's turns resending the earlier
    #: ones, a shared system prompt): only the rest is prefilled; the KV cache still holds the whole prompt. 0: none.
    cached_prompt_share: float = 0.0
    #: How a session's next turn reaches the replica whose prefix cache holds its earlier turns (newuser73 item 11):
    #: ``none``, a router blind to prefixes (any free place, a Service), which finds a session's own prefix on one of N
    #: replicas, so the plan warns with the share that leaves; ``session``, a session-affine or prefix-aware router
    #: (each session's turns on one replica: its requests queue there, so ``routing: even``); ``measured``, the share
    #: was measured on the deployment as routed. The sizing credits the share as given under all three.
    prefix_routing: Literal["none", "session", "measured"] = "none"
    #: LoRA adapters served over the model; None: none.
    lora: LoraAdapters | None = None
    #: OpenAI tool calling (``tool_choice: "auto"``): the engine's tool-call parser for the model's family is rendered
    #: (:mod:`generator.catalog.tool_parsers`); False: none (vLLM answers such requests with HTTP 400).
    tool_calling: bool = False
    #: The engine's ``--tool-call-parser`` name, ahead of the family table's (a model whose id hides its family: a
    #: local copy of Llama 3.1 under /models/my-llama); checked against the engine's registry; None: the table's.
    tool_call_parser: str | None = None

    @property
    def job(self) -> bool:
        """A batch job (``requests_per_run`` within ``deadline_hours``): it runs, then its replicas stop until the next run."""
        return self.requests_per_run is not None

    @property
    def pooling(self) -> bool:
        """A pooling service (embed, score): one forward pass over the input, no output tokens and no decode."""
        return self.task != "generate"

    def prompt_tail(self, prompt_tokens: int) -> tuple[int, int]:
        """(new tokens prefilled, tokens the prefix cache holds) of a ``prompt_tokens`` prompt (:func:`prompt_tail`)."""
        return prompt_tail(prompt_tokens, self.cached_prompt_share)


class TrainingSpec(NamedTuple):
    """How a model is trained or fine-tuned."""

    method: Literal["full", "lora", "qlora"]
    #: None: the framework's regime (torchtune: adamw-bf16; its one-GPU full fine-tune recipe's paged adamw-8bit-bf16),
    #: else adamw.
    optimizer: str | None = None
    zero_stage: int | None = None
    lora_rank: int = 16
    lora_dropout: float = 0.0
    lora_target_modules: tuple[str, ...] = ("all-linear",)
    sequence_length: int = 2048
    #: Sequences per rank and micro-step; None: not set (1, or the planner's choice under a global batch).
    micro_batch_size: int | None = None
    #: Sequences per optimizer step over all data-parallel ranks (Megatron-LM --global-batch-size,
    #: DeepSpeed train_batch_size); None: micro_batch_size per rank, no accumulation.
    global_batch_size: int | None = None
    #: None: searched, none / selective / full, as the planner searches the micro-batch (newuser35 item 6).
    gradient_checkpointing: Literal["none", "selective", "full"] | None = None
    flash_attention: bool = True
    offload_optimizer: bool = False
    #: Optimizer states in bitsandbytes' paged memory (its Paged* optimizers, axolotl's and TRL's ``paged_adamw_8bit``),
    #: sized in host RAM; None: its framework recipe's (torchtune's single-device full fine-tune pages its states).
    paged_optimizer: bool | None = None
    #: Parameters (LoRA: the frozen base) in host RAM at ZeRO-3; None: tried on owned servers where nothing fits without.
    offload_params: bool | None = None
    framework: str | None = None
    loss: Literal["standard", "chunked", "inplace", "fused"] | None = None
    activation_offload: bool | None = None
    optimizer_in_backward: bool | None = None
    fused_kernels: bool | None = None
    #: What the linear layers' GEMMs run in: bf16, or fp8 (Transformer Engine / torchao FP8 training, full training
    #: under a framework with :attr:`~generator.sizing.frameworks.FrameworkProfile.fp8_training`, on a GPU with FP8).
    compute_precision: Literal["bf16", "fp8"] = "bf16"
    dataset_tokens: int | None = None
    epochs: float = 1.0
    deadline_hours: float | None = None
    #: Runs a month of a job rented per run (a nightly fine-tune: 30), so the fleet's month counts them; None: not said.
    runs_per_month: float | None = None
    #: The training deployment this job runs after, on its servers (a chain: one pool, the jobs one after the other;
    #: every job's ``deadline_hours`` counts from the chain's start); None: the job has servers of its own.
    run_after: str | None = None

    @property
    def micro_batch_pinned(self) -> bool:
        """The workload sets ``micro_batch_size`` (otherwise the planner may choose it under a global batch)."""
        return self.micro_batch_size is not None

    @property
    def checkpointing(self) -> str:
        """The set activation checkpointing, else full (what the estimate and the sizing take where none is given)."""
        return self.gradient_checkpointing or "full"

    @property
    def micro_batch(self) -> int:
        """The set micro-batch, else one sequence."""
        return self.micro_batch_size if self.micro_batch_size is not None else 1


class ParallelismPin(NamedTuple):
    """Replica layout degrees a deployment pins (unset ones are searched)."""

    tp: int | None = None
    pp: int | None = None
    ep: int | None = None


class GpuSharing(NamedTuple):
    """Sharing of each GPU between pods: TP1 inference replicas sized on their share and packed.

    ``none`` (a deployment's own ``gpu_sharing`` only, refused by the schema at the workload's): whole GPUs.
    """

    strategy: Literal["time-slicing", "mps", "mig", "none"]
    replicas_per_gpu: int | None = None
    mig_profile: str | None = None


class InferenceDeployment(NamedTuple):
    """A model served online: its name, its model, how it is served, and optionally a platform and a replica layout."""

    name: str
    model: str
    inference: InferenceSpec
    platform: str | None = None
    parallelism: ParallelismPin | None = None
    pool: str | None = None
    #: This deployment's GPU sharing, over ``kubernetes.gpu_sharing`` (strategy ``none``: whole GPUs); None: the
    #: workload's (:func:`generator.workload.sharing.deployment_sharing`).
    gpu_sharing: GpuSharing | None = None
    #: The capacity its cloud nodes are rented as: ``spot`` pools are apart from on-demand ones (newuser44 item 3).
    capacity_type: Literal["on-demand", "spot"] = "on-demand"


class TrainingDeployment(NamedTuple):
    """A model trained or fine-tuned: its name, its model, how it is trained, and optionally a platform and a replica layout."""

    name: str
    model: str
    training: TrainingSpec
    platform: str | None = None
    parallelism: ParallelismPin | None = None
    pool: str | None = None
    #: This deployment's GPU sharing, over ``kubernetes.gpu_sharing`` (strategy ``none``: whole GPUs); None: the
    #: workload's (:func:`generator.workload.sharing.deployment_sharing`).
    gpu_sharing: GpuSharing | None = None
    #: The capacity its cloud nodes are rented as: ``spot`` pools are apart from on-demand ones (newuser44 item 3).
    capacity_type: Literal["on-demand", "spot"] = "on-demand"


#: A deployment is built as the kind whose section (``inference`` or ``training``) it has.
Deployment: TypeAlias = InferenceDeployment | TrainingDeployment


class InventoryHost(NamedTuple):
    """One owned server as provisioning tools know it (BMC, boot NIC, address and disk only where given)."""

    name: str
    bmc_address: str | None = None
    bmc_credentials_secret: str | None = None
    boot_mac_address: str | None = None
    #: IPv4 address, netmask and gateway DHCP gives the boot NIC (Tinkerbell's Hardware ``dhcp.ip``).
    ip_address: str | None = None
    netmask: str | None = None
    gateway: str | None = None
    #: Device the OS is written to (Tinkerbell's Hardware ``disks``), e.g. ``/dev/nvme0n1``.
    boot_disk: str | None = None

    def missing(self, fields: tuple[str, ...]) -> tuple[str, ...]:
        """Those of ``fields`` the host does not give."""
        return tuple(field for field in fields if getattr(self, field) is None)


#: What a host gives for Metal3 to write its BareMetalHost: the BMC Ironic drives and the NIC it boots.
METAL3_HOST_FIELDS = ("bmc_address", "bmc_credentials_secret", "boot_mac_address")
#: What a host gives for Tinkerbell to write its Hardware: the NIC Smee answers by DHCP, the address it hands out,
#: and the disk the OS is written to (CAPT refuses a Hardware without its first interface's IP or a disk).
TINKERBELL_HOST_FIELDS = ("boot_mac_address", "ip_address", "netmask", "boot_disk")


class CustomServer(NamedTuple):
    """An owned server that is not in the catalog, described by its parts (catalog ids for GPU, CPU, NICs)."""

    gpu: str
    gpus_per_server: int
    ram_gib: int
    name: str | None = None
    cpu: str | None = None
    cpu_sockets: int = 1
    cpu_cores: int | None = None
    nvme_tb: float = 0.0
    nvme_drives: int = 0
    #: NICs and their counts per server; a count not given is None (:mod:`~generator.workload.nic_pairs`).
    fabric_nic: str | None = None
    fabric_nic_count: int | None = None
    frontend_nic: str | None = None
    frontend_nic_count: int | None = None
    max_power_w: int | None = None
    #: Its power supplies, where given (the 2N feed-loss check reads them): count, each one's rating, the M of N+M.
    psu_count: int | None = None
    psu_rating_w: int | None = None
    psu_redundant: int | None = None
    rack_units: int | None = None
    kind: Literal["pcie-server", "hgx-4gpu", "hgx-8gpu", "oam-8gpu", "workstation"] | None = None
    cooling: Literal["air", "liquid"] | None = None
    #: NVLink bridges join the GPUs (cards that take one); False: they talk over PCIe.
    gpu_bridge: bool = False

    @property
    def platform_id(self) -> str:
        """The id the plan knows these servers by: the given name, else one built from the GPUs."""
        return self.name or f"custom-{self.gpus_per_server}x-{self.gpu}"


class InventoryGroup(NamedTuple):
    """A group of identical servers the team already owns: a catalog platform or a custom server."""

    count: int  # type: ignore[assignment]  # the schema's name; shadows tuple.count, which nothing calls on a group
    platform: str | None = None
    custom: CustomServer | None = None
    hosts: tuple[InventoryHost, ...] = ()
    gpu: str | None = None
    #: A catalog platform's GPU fabric as owned (``fabric_nic_count`` 0 without a NIC: none); None: not stated, the
    #: planner assumes the build it would buy.
    fabric_nic: str | None = None
    fabric_nic_count: int | None = None
    #: A catalog platform's front-end NICs as owned; None: the catalog's (or the one the planner fits).
    frontend_nic: str | None = None
    frontend_nic_count: int | None = None
    #: A catalog platform's RAM as owned, GiB a server (newuser43 item 2); None: the build specgen would buy.
    ram_gib: int | None = None
    #: A catalog platform's GPUs a server as owned, one of its GPU counts (newuser47 item 1); None: its largest.
    gpus_per_server: int | None = None

    @property
    def platform_id(self) -> str:
        """The catalog platform id, or the custom server's id."""
        return self.custom.platform_id if self.custom is not None else str(self.platform)

    @property
    def fabric_stated(self) -> bool:
        """Whether a catalog platform's group says what GPU fabric its servers have (a NIC, or none)."""
        return self.fabric_nic is not None or self.fabric_nic_count is not None

    @property
    def nics_stated(self) -> bool:
        """Whether a catalog platform's group says any of its NICs (fabric or front end)."""
        return self.fabric_stated or self.frontend_nic is not None

    @property
    def build_stated(self) -> bool:
        """Whether a catalog platform's group says any part of its build: its NICs or its RAM."""
        return self.nics_stated or self.ram_gib is not None


class RackCircuits(NamedTuple):
    """The circuits a colocation contract feeds each rack with (``hardware.rack_circuits``): what its power is derived from.

    ``voltage_v`` is line-to-line on three phases; ``redundancy`` 2N splits the circuits into an A and a B side, either
    of which alone carries the rack. The defaults are :mod:`generator.sizing.electrical`'s, with their sources.
    """

    voltage_v: float
    phases: Literal[1, 3]
    breaker_a: float
    circuits: int
    redundancy: Literal["2N", "N+N", "none"]
    continuous_load_fraction: float = DEFAULT_CONTINUOUS_LOAD_FRACTION
    power_factor: float = DEFAULT_POWER_FACTOR


class WallCircuit(NamedTuple):
    """The branch circuit a machine at home or in an office is plugged into (``hardware.wall_circuit``).

    Where it is not given the advice assumes a US 120 V / 15 A circuit (:mod:`generator.planner.wall_circuit`); a
    European home's socket circuit is 230 V / 16 A. ``continuous_load_fraction`` is the share of the breaker a load of
    three hours or more may hold: the NEC's 80% unless the local rule says otherwise.
    """

    voltage_v: float
    breaker_a: float
    continuous_load_fraction: float = DEFAULT_CONTINUOUS_LOAD_FRACTION


class SitePower(NamedTuple):
    """The power contracted for the whole cage or room (``hardware.site_power``): what the fleet together may draw.

    ``continuous_fraction`` is the share of ``kw`` the provider's terms let a load hold continuously (0.8 where a
    contract follows the NEC's 80% rule for continuous loads); the planner keeps the fleet's wall power under
    ``kw`` x ``continuous_fraction`` (:mod:`generator.planner.site_power`).
    """

    kw: float
    continuous_fraction: float = DEFAULT_CONTINUOUS_LOAD_FRACTION

    @property
    def usable_w(self) -> int:
        """What the fleet may draw continuously, in whole watts."""
        return round(self.kw * 1000 * self.continuous_fraction)


class GpuPowerLimit(NamedTuple):
    """A board power limit set on every GPU of one model (``hardware.gpu_power_limits``: ``nvidia-smi -pl``)."""

    gpu: str
    watts: float


class Hardware(NamedTuple):
    """Allowed hardware and site limits."""

    gpus: tuple[str, ...] | None = None
    platforms: tuple[str, ...] | None = None
    provider: Literal["baremetal", "aws", "gcp", "azure"] = "baremetal"
    #: Power a rack may draw; derived from ``rack_circuits`` where those are given (the loader sets it).
    rack_power_kw: float = 17.3
    #: The circuits each rack is fed with, or None: racks of ``rack_power_kw`` as given.
    rack_circuits: RackCircuits | None = None
    cooling: Literal["air", "liquid"] = "air"
    max_nodes: int | None = None
    max_racks: int | None = None
    #: Rack units kept free in every rack for switches and PDUs; None: the planner's sourced default.
    rack_units_reserved: int | None = None
    max_budget_usd_per_month: float | None = None
    #: Most paid up front for servers bought (bare metal); None: no cap.
    max_capex_usd: float | None = None
    fixed: FixedSpec | None = None
    inventory: tuple[InventoryGroup, ...] = ()
    #: False: nothing is bought or rented; deployments are placed on ``inventory`` alone (newuser22 item 2).
    buy: bool = True
    #: The outlet's circuit a workstation at home or in an office is fed from; None: a US 120 V / 15 A circuit. Given,
    #: it also says a bought workstation stands on such an outlet, not in a colocation rack (fix166).
    wall_circuit: WallCircuit | None = None
    #: The power contracted for the whole site (cage, room); None: no limit beyond the racks' (newuser115).
    site_power: SitePower | None = None
    #: Board power limits by GPU model (``nvidia-smi -pl``); empty: each GPU at its TDP (newuser115).
    gpu_power_limits: tuple[GpuPowerLimit, ...] = ()

    def gpu_power_limit_w(self, gpu_id: str) -> float | None:
        """The power limit set on ``gpu_id``'s boards, or None: its TDP."""
        return next((g.watts for g in self.gpu_power_limits if g.gpu == gpu_id), None)

    @property
    def rack_power_w(self) -> int:
        """What a rack may draw in whole watts, the figure every rack limit is compared with (:func:`whole_watts`)."""
        return whole_watts(self.rack_power_kw)

    @property
    def rack_power_field(self) -> str:
        """The field that sets what a rack may draw: ``rack_circuits`` where given, else ``rack_power_kw``."""
        return "rack_power_kw" if self.rack_circuits is None else "rack_circuits"


class GpuNetwork(NamedTuple):
    """The VPC network and subnetwork one GPU NIC of a GKE machine type attaches to (``kubernetes.gpu_networks``)."""

    network: str
    subnetwork: str


class KubernetesSettings(NamedTuple):
    """Rendered Kubernetes manifests."""

    flavor: Literal["baremetal"] = "baremetal"
    bootstrap_kubeconfig_path: str = "/etc/kubernetes/discovery/cluster-info.yaml"
    driver_version: str | None = None
    cluster_name: str | None = None
    #: AWS: the IAM role the Karpenter EC2NodeClasses give their nodes (``spec.role``); None: Karpenter's getting-started
    #: name, ``KarpenterNodeRole-<cluster>`` (newuser81 item 3: a cluster whose Karpenter came from terraform-aws-eks's
    #: karpenter module has ``Karpenter-<cluster>...``, and the rendered name was fixed).
    karpenter_node_role: str | None = None
    location: str | None = None
    gcp_project: str | None = None
    gpu_sharing: GpuSharing | None = None
    zone: str | None = None
    #: GKE: the Compute Engine reservation each machine type's node pools consume, by catalog platform id.
    reservations: Mapping[str, str] | None = None
    #: GKE: the networks each machine type's GPU NICs attach to, by catalog platform id, one a GPU NIC.
    gpu_networks: Mapping[str, tuple[GpuNetwork, ...]] | None = None
    #: ``eu``: a cloud cluster's ``location`` must be a region in the EU (:mod:`generator.workload.data_residency`).
    data_residency: Literal["eu"] | None = None


class ProvisioningSettings(NamedTuple):
    """Bare-metal provisioning outputs."""

    tools: tuple[Literal["capi", "maas", "metal3", "tinkerbell"], ...] = ()
    maas_pool: str | None = None
    maas_zone: str | None = None
    distro_series: str = "noble"
    namespace: str = "metal3"
    #: Namespace of the Tinkerbell Hardware: the one the Tinkerbell Helm chart installs into by default.
    tinkerbell_namespace: str = "tinkerbell"
    #: IPv4 DNS servers DHCP gives the owned hosts (Tinkerbell's Hardware ``interfaces[].dhcp.name_servers``).
    name_servers: tuple[str, ...] = ()


class Mirrors(NamedTuple):
    """An air-gapped site's own copies of what the rendered stack would otherwise pull from the internet."""

    #: ``host[:port][/path]`` of the registry holding every image at its upstream path (registry host left out).
    container_registry: str | None = None
    #: Path on the nodes of the CA bundle that signs the registry's certificate (containerd's ``hosts.toml`` ``ca``).
    registry_ca_file: str | None = None
    #: Kubernetes Secret (``kubernetes.io/dockerconfigjson``) the GPU Operator's pods pull with.
    image_pull_secret: str | None = None
    #: Helm chart repository serving the GPU Operator chart: an ``https://`` index or an ``oci://`` registry path.
    helm_repository: str | None = None
    #: A Hugging Face Hub mirror the engines download models from (``HF_ENDPOINT``).
    huggingface_endpoint: str | None = None
    #: Or a Hub cache on the hosts, filled beforehand, read offline (``HF_HUB_CACHE`` with ``HF_HUB_OFFLINE=1``).
    huggingface_cache: str | None = None


class Site(NamedTuple):
    """One site of an edge fleet (``sites[]``): its name and the owned hosts that serve it alone."""

    name: str
    hosts: tuple[str, ...]
    #: This site's rates as a multiple of each inference deployment's ``requests_per_second`` (fix201: a store in a
    #: busy mall serves more than a village store); 1: the deployments' rates as given.
    requests_per_second_scale: float = 1.0


class Workload(NamedTuple):
    """A whole workload file."""

    version: Literal[1]
    name: str
    deployments: tuple[Deployment, ...]
    #: The document's ``$schema`` key.
    schema_: str | None = None
    hardware: Hardware = Hardware()
    #: ``capacity``: the largest common scale of the inference rates a fleet within ``hardware.max_capex_usd`` serves
    #: (:mod:`generator.planner.capacity`); the others are minimised at the rates given.
    objective: Literal["cost", "gpus", "power", "capacity"] = "cost"
    #: Read-only mappings: the empty default is one object shared by every workload that leaves the key out.
    prices: Mapping[str, float] = MappingProxyType({})
    #: USD to buy one server on bare metal, by platform id or ``<platform>/<gpu>x<count>`` (a vendor's quote).
    purchase_prices: Mapping[str, float] = MappingProxyType({})
    constants: Mapping[str, float] = MappingProxyType({})
    kubernetes: KubernetesSettings = KubernetesSettings()
    provisioning: ProvisioningSettings = ProvisioningSettings()
    #: None: the rendered files pull from the public registries, Helm repository and Hub (the output of today).
    mirrors: Mirrors | None = None
    outputs: tuple[Literal["terraform", "ansible", "kubernetes"], ...] = ("terraform", "ansible", "kubernetes")
    #: Per-site planning (:mod:`generator.workload.sites`): empty, one fleet behind one router (every plan before).
    sites: tuple[Site, ...] = ()

    @property
    def joins_cluster(self) -> bool:
        """The pools join a cluster this workload does not make alone: one it names, or the site's Cluster API cluster.

        ``kubernetes.cluster_name`` is the cluster the pools join, and with ``capi`` the MachineDeployments join the
        site's Cluster; either way even one host is never a cluster of its own (newuser57 item 2).
        """
        return self.kubernetes.cluster_name is not None or "capi" in self.provisioning.tools


def spec_fields(spec: object) -> dict[str, object]:
    """A deployment's ``inference`` or ``training`` fields as dotted names (``slo.ttft_p95_ms``) with their values.

    Nested settings (a named tuple) are named field by field; what ``spec.json`` records of the workload's inputs and
    ``diff`` compares (newuser73 item 5: a change of routing, max_utilization or p95_input_tokens had no stated cause).
    """
    out: dict[str, object] = {}
    for name in type(spec)._fields:  # type: ignore[attr-defined]
        value = getattr(spec, name)
        if hasattr(type(value), "_fields"):
            out.update({f"{name}.{k}": v for k, v in spec_fields(value).items()})
        else:
            out[name] = value
    return out


def given_fields(spec: object) -> dict[str, object]:
    """:func:`spec_fields` of ``spec`` that differ from the defaults of its kind (:func:`default_fields`)."""
    defaults = default_fields(type(spec))
    return {k: v for k, v in spec_fields(spec).items() if k not in defaults or defaults[k] != v}


def default_fields(kind: type) -> dict[str, object]:
    """The defaults of ``kind``'s fields as :func:`spec_fields` names them (a field with none is left out)."""
    out: dict[str, object] = {}
    for name, value in kind._field_defaults.items():  # type: ignore[attr-defined]
        if hasattr(type(value), "_fields"):
            out.update({f"{name}.{k}": v for k, v in default_fields(type(value)).items()})
        else:
            out[name] = value
    return out
