"""Typed workload models: frozen dataclasses, built from schema-valid data by :func:`generator.workload.build.build`.

The YAML reader refuses non-finite numbers and the schema unknown keys and values of the wrong type before
these are built; the builder turns ints in float fields into floats, lists into tuples and nested mappings
into these models.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from generator.calculator.machine import FixedSpec
from generator.workload.build import KEY, SET_BY


@dataclass(frozen=True, slots=True, kw_only=True)
class Slo:
    """Latency targets."""

    ttft_p95_ms: float | None = None
    tpot_ms: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class InferenceSpec:
    """How a model is served."""

    precision: str | None = None
    allowed_precisions: tuple[str, ...] = ()
    kv_cache_precision: str = "bf16"
    max_context_tokens: int
    min_context_tokens: int | None = None
    avg_input_tokens: int = 1000
    avg_output_tokens: int = 200
    requests_per_second: float = 1.0
    slo: Slo = Slo()
    service_class: Literal["interactive", "batch"] = "interactive"
    #: Serving engine whose KV accounting sizes the cache; SGLang's ``mem_fraction_static`` (None: its default).
    engine: Literal["vllm", "sglang"] = "vllm"
    mem_fraction_static: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TrainingSpec:
    """How a model is trained or fine-tuned."""

    method: Literal["full", "lora", "qlora"]
    optimizer: str = "adamw"
    zero_stage: int | None = None
    lora_rank: int = 16
    lora_dropout: float = 0.0
    lora_target_modules: tuple[str, ...] = ("all-linear",)
    sequence_length: int = 2048
    micro_batch_size: int = 1
    #: Sequences per optimizer step over all data-parallel ranks (Megatron-LM --global-batch-size,
    #: DeepSpeed train_batch_size); None: micro_batch_size per rank, no accumulation.
    global_batch_size: int | None = None
    gradient_checkpointing: Literal["none", "selective", "full"] = "full"
    flash_attention: bool = True
    offload_optimizer: bool = False
    framework: str | None = None
    loss: Literal["standard", "chunked", "inplace", "fused"] | None = None
    activation_offload: bool | None = None
    optimizer_in_backward: bool | None = None
    fused_kernels: bool | None = None
    dataset_tokens: int | None = None
    epochs: float = 1.0
    deadline_hours: float | None = None

    #: The workload sets ``micro_batch_size`` (otherwise the planner may choose it under a global batch).
    micro_batch_pinned: bool = field(default=False, metadata={SET_BY: "micro_batch_size"})


@dataclass(frozen=True, slots=True, kw_only=True)
class ParallelismPin:
    """Replica layout degrees a deployment pins (unset ones are searched)."""

    tp: int | None = None
    pp: int | None = None
    ep: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class _Deployment:
    """What every deployment names: itself, its model, and optionally a platform and a replica layout."""

    name: str
    model: str
    platform: str | None = None
    parallelism: ParallelismPin | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class InferenceDeployment(_Deployment):
    """A model served online."""

    inference: InferenceSpec


@dataclass(frozen=True, slots=True, kw_only=True)
class TrainingDeployment(_Deployment):
    """A model trained or fine-tuned."""

    training: TrainingSpec


#: A deployment is built as the kind whose section (``inference`` or ``training``) it has.
Deployment: TypeAlias = InferenceDeployment | TrainingDeployment


@dataclass(frozen=True, slots=True, kw_only=True)
class InventoryHost:
    """One owned server as provisioning tools know it (BMC and boot MAC only where given)."""

    name: str
    bmc_address: str | None = None
    bmc_credentials_secret: str | None = None
    boot_mac_address: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CustomServer:
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
    fabric_nic: str | None = None
    fabric_nic_count: int = 0
    frontend_nic: str | None = None
    frontend_nic_count: int = 0
    max_power_w: int | None = None
    rack_units: int | None = None
    kind: Literal["pcie-server", "hgx-8gpu", "oam-8gpu", "workstation"] | None = None
    cooling: Literal["air", "liquid"] | None = None

    @property
    def platform_id(self) -> str:
        """The id the plan knows these servers by: the given name, else one built from the GPUs."""
        return self.name or f"custom-{self.gpus_per_server}x-{self.gpu}"


@dataclass(frozen=True, slots=True, kw_only=True)
class InventoryGroup:
    """A group of identical servers the team already owns: a catalog platform or a custom server."""

    count: int
    platform: str | None = None
    custom: CustomServer | None = None
    hosts: tuple[InventoryHost, ...] = ()
    gpu: str | None = None

    @property
    def platform_id(self) -> str:
        """The catalog platform id, or the custom server's id."""
        return self.custom.platform_id if self.custom is not None else str(self.platform)


@dataclass(frozen=True, slots=True, kw_only=True)
class Hardware:
    """Allowed hardware and site limits."""

    gpus: tuple[str, ...] | None = None
    platforms: tuple[str, ...] | None = None
    provider: Literal["baremetal", "aws", "gcp", "azure"] = "baremetal"
    rack_power_kw: float = 17.3
    cooling: Literal["air", "liquid"] = "air"
    max_nodes: int | None = None
    max_racks: int | None = None
    max_budget_usd_per_month: float | None = None
    fixed: FixedSpec | None = None
    inventory: tuple[InventoryGroup, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuSharing:
    """Sharing of each GPU between pods (deployment-time; the sizing counts whole GPUs)."""

    strategy: Literal["time-slicing", "mps", "mig"]
    replicas_per_gpu: int | None = None
    mig_profile: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class KubernetesSettings:
    """Rendered Kubernetes manifests."""

    flavor: Literal["baremetal"] = "baremetal"
    bootstrap_kubeconfig_path: str = "/etc/kubernetes/discovery/cluster-info.yaml"
    driver_version: str | None = None
    cluster_name: str | None = None
    location: str | None = None
    gcp_project: str | None = None
    gpu_sharing: GpuSharing | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ProvisioningSettings:
    """Bare-metal provisioning outputs."""

    tools: tuple[Literal["capi", "maas", "metal3"], ...] = ()
    maas_pool: str | None = None
    maas_zone: str | None = None
    distro_series: str = "noble"
    namespace: str = "metal3"


@dataclass(frozen=True, slots=True, kw_only=True)
class Workload:
    """A whole workload file."""

    schema_: str | None = field(default=None, metadata={KEY: "$schema"})
    version: Literal[1]
    name: str
    deployments: tuple[Deployment, ...]
    hardware: Hardware = Hardware()
    objective: Literal["cost", "gpus", "power"] = "cost"
    prices: dict[str, float] = field(default_factory=dict)
    constants: dict[str, float] = field(default_factory=dict)
    kubernetes: KubernetesSettings = KubernetesSettings()
    provisioning: ProvisioningSettings = ProvisioningSettings()
    outputs: tuple[Literal["terraform", "ansible", "kubernetes"], ...] = ("terraform", "ansible", "kubernetes")
