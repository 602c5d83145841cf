"""Typed, frozen catalog records built from the JSON data files (units in every field name)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

from generator.named_tuple import NamedTuple
from generator.units import GB, MIB

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from fractions import Fraction
    from typing import Any


#: Scale-up links that join each pair of a board's GPUs directly (Infinity Fabric xGMI, Gaudi's RoCE ports).
MESH_INTERCONNECTS = ("infinity-fabric", "ethernet")


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _sources(rec: Mapping[str, Any]) -> tuple[str, ...]:
    src = rec.get("source") or ()
    return (src,) if isinstance(src, str) else tuple(str(s) for s in src)


#: Names of the scale-up links of ``gpus.json`` (``interconnect.kind``) as the plan prints them.
_LINK_NAMES = {
    "nvlink": "NVLink",
    "nvlink-bridge": "NVLink bridge",
    "infinity-fabric": "Infinity Fabric",
    "ethernet": "on-chip RoCE Ethernet",
}


#: The 16-bit formats that run at one tensor rate: a measured share of one stands in for the other.
_HALF_TWIN = {"bf16": "fp16", "fp16": "bf16"}


#: The extended resource each vendor's Kubernetes device plugin advertises (NVIDIA k8s-device-plugin, AMD ROCm
#: k8s-device-plugin, Intel Gaudi device plugin): what a GPU node is tainted and scheduled by.
DEVICE_RESOURCE = {"nvidia": "nvidia.com/gpu", "amd": "amd.com/gpu", "intel": "habana.ai/gaudi"}


class MigProfile(NamedTuple):
    """One MIG profile of a GPU, as the MIG user guide's Supported MIG Profiles table gives it (``mig_profiles.json``)."""

    name: str
    #: The instance's share of the GPU's memory: memory slices over the GPU's (8, or 4 on a GPU of 4 compute slices).
    #: Its memory bandwidth is the same share: each memory slice is its own memory controllers and DRAM.
    memory_fraction: Fraction
    #: The instance's share of the GPU's SMs: compute slices over the GPU's (7, or 4).
    sm_fraction: Fraction
    #: Instances of the profile one GPU holds.
    instances: int
    #: Memory of one instance as ``nvidia-smi mig -lgip`` reports it, GiB; None where no source gives it.
    memory_gib: float | None
    source: tuple[str, ...]


#: The tensor format whose measured share of its peak a narrower one without its own measurement takes first.
NEAREST_WIDER_FORMAT = {"fp4": "fp8"}


def share_fallbacks(compute: str) -> tuple[str, ...]:
    """The formats whose measured share of the peak ``compute`` takes, the first of them measured.

    Itself, the nearest wider tensor format (FP8 for FP4: the same tensor cores at twice the rate), then the 16-bit ones.
    """
    wider = NEAREST_WIDER_FORMAT.get(compute)
    return (compute, *((wider,) if wider else ()), "bf16", "fp16")


def normalising_format(compute: str, reference_shares: Mapping[str, float]) -> str | None:
    """The format whose reference share a measured ``compute`` share is expressed over.

    The first of :func:`share_fallbacks` the reference measured (FP4 over FP8 on an H100, which has no FP4 tensor rate).
    """
    return next((name for name in share_fallbacks(compute) if name in reference_shares), None)


class GpuSpec(NamedTuple):
    """One accelerator model."""

    id: str
    name: str
    vendor: str
    memory_gb: float
    memory_usable_mib: int | None
    memory_bandwidth_gb_per_s: float
    dense_tflops: Mapping[str, float | None]
    tdp_w: float
    form_factor: str
    interconnect_kind: str
    interconnect_gb_per_s_bidir: float
    nvlink_domain_gpus: int
    pcie_gen: int
    pcie_lanes: int
    mig_max_instances: int | None
    cooling: str
    consumer: bool
    source: tuple[str, ...]
    unsourced_fields: tuple[str, ...] = ()
    #: Max-achievable dense GEMM rate per precision under sustained load, TFLOPS, as measured (vendor or published
    #: benchmark; where one is).
    max_achievable_tflops: Mapping[str, float] | None = None
    #: Sustained memory bandwidth a stream benchmark measured (BabelStream Triad), decimal GB/s; None: not measured.
    measured_memory_gb_per_s: float | None = None
    #: This GPU's measured share of its peak over the reference GPU's (:data:`REFERENCE_GPU_ID`), by precision: what the
    #: fitted efficiencies are scaled by (set by the catalog; absent where either share is unmeasured).
    tflops_vs_reference: Mapping[str, float] | None = None
    #: The same for memory bandwidth (1 where either is unmeasured).
    bandwidth_vs_reference: float = 1.0
    #: The reference GPU's measured stream bandwidth over its peak (set by the catalog; 1: not set): the same for
    #: :attr:`sustained_bandwidth_gb_per_s`.
    reference_bandwidth_share: float = 1.0
    #: Per-direction bandwidth NCCL / RCCL count on over the scale-up link (after protocol overheads), GB/s; None: not published.
    collective_gb_per_s: float | None = None
    #: All-reduce bus bandwidth the collective library's own test measured over the scale-up link (8 GPUs), GB/s, as
    #: ``(message bytes, GB/s)`` pairs by size; empty: not measured.
    measured_allreduce_busbw: tuple[tuple[int, float], ...] = ()
    #: A TP all-reduce's time over the modelled one, as ``(message bytes, factor)`` pairs: the reference GPU's measured
    #: share of its link figure over this GPU's, at sizes both measured (set by the catalog; empty: 1 at every size).
    allreduce_vs_reference: tuple[tuple[int, float], ...] = ()
    #: The GPU architecture as ``gpus.json`` names it (``ampere``, ``hopper``, ``cdna3``, ``gaudi3``, ...).
    architecture: str = ""
    #: ``tdp_w`` is a superchip module's power that covers its CPU and CPU memory too (GH200): add no CPU TDP for it.
    tdp_includes_host_cpu: bool = False
    #: Bidirectional GB/s of a GPU-to-CPU link that replaces PCIe (a superchip's NVLink-C2C to Grace); None: PCIe.
    host_link_gb_per_s_bidir: float | None = None
    #: GPUs software sees in one physical package (an MI250X OAM module's two GCDs); a machine holds whole packages.
    package_gpus: int = 1
    #: The measured GPU whose shares over the reference this unmeasured one is assumed to have (a GeForce card takes its
    #: class's: :func:`borrow_class_shares`); None: measured itself, or assumed to share the reference's.
    shares_assumed_from: str | None = None
    #: A measured sibling of the same architecture (``gpus.json`` ``measured_like``) whose stream-bandwidth share of its
    #: peak and collective share of its link this GPU takes where it has no measurement of its own
    #: (:func:`borrow_sibling_measurements`); None: its own, or the reference's.
    measured_like: str | None = None
    #: PCIe lanes the machine's CPU gives each GPU slot, by GPUs fitted, as ``(gpus, lanes)`` pairs (a desktop CPU's
    #: x16 split x8/x8 for two: :attr:`CpuSpec.gpu_slot_lanes`); empty: each GPU gets its own ``pcie_lanes``.
    slot_lanes: tuple[tuple[int, int], ...] = ()
    #: GPUs of the fully connected board this GPU sits on, each GPU's scale-up links split evenly among its peers (an
    #: 8-GPU OAM board of MI300X or Gaudi 3; an HGX 4-GPU board of H100, set by :meth:`PlatformSpec.fitted_gpu`);
    #: None: a switched fabric (NVSwitch), where a group of any size has each GPU's whole link.
    mesh_gpus: int | None = None
    #: Whether cards of this model reach each other's memory over PCIe (CUDA peer access, ``gpus.json`` ``pcie``
    #: ``peer_to_peer``); False: a collective over PCIe is staged through host memory (NCCL's SHM transport).
    pcie_peer_to_peer: bool = True
    #: Public serving runs compared with the throughput model on this GPU, by engine (``throughput_runs_compared``);
    #: empty: none, so a plan on it rests on the model alone.
    throughput_runs: Mapping[str, int] = {}
    #: CUDA's ``totalGlobalMem`` in MiB where it is below ``memory_usable_mib`` (nvidia-smi's total on newer drivers
    #: includes what the driver reserves; a process allocates from CUDA's total); None: the two agree.
    memory_cuda_mib: int | None = None
    #: The board's rated TDP where ``tdp_w`` is a power limit set below it (``hardware.gpu_power_limits``,
    #: :mod:`generator.planner.gpu_power_limit`); None: ``tdp_w`` is the rating (newuser115).
    rated_tdp_w: float | None = None

    @property
    def bridged(self) -> bool:
        """Whether the card's GPU-to-GPU link is an NVLink bridge (a PCIe card's optional part)."""
        return self.interconnect_kind == "nvlink-bridge"

    def as_fitted(self, bridge: bool) -> GpuSpec:
        """The card as a server holds it: its NVLink bridge only where ``bridge`` says one is fitted, else PCIe alone.

        Whether a PCIe card is bridged is a fact of the server, not of the card (``platforms.json`` ``gpu_bridge``).
        """
        if bridge or not self.bridged:
            return self
        return self._replace(
            interconnect_kind="none",
            interconnect_gb_per_s_bidir=0.0,
            nvlink_domain_gpus=1,
            collective_gb_per_s=None,
            mesh_gpus=None,
        )

    def link_name(self, fast: bool, gpus: int = 1) -> str:
        """The GPU-to-GPU link by name: the scale-up link (``fast``) or the PCIe generation.

        The PCIe width is named where a slot of a machine with ``gpus`` GPUs is narrower than the card.
        """
        if not fast:
            lanes = self.lanes_with(gpus)
            return f"PCIe Gen{self.pcie_gen}" + (f" x{lanes}" if lanes < self.pcie_lanes else "")
        return _LINK_NAMES.get(self.interconnect_kind, self.interconnect_kind)

    def lanes_with(self, gpus: int) -> int:
        """PCIe lanes each GPU has in a machine holding ``gpus`` of them: its own, or fewer where the slots split.

        The split is the CPU's (:attr:`slot_lanes`); past the GPU counts listed, the last one's.
        """
        listed = [lanes for count, lanes in self.slot_lanes if count >= gpus] or [lanes for _, lanes in self.slot_lanes[-1:]]
        return min([self.pcie_lanes, *listed[:1]])

    def in_slots(self, slot_lanes: tuple[tuple[int, int], ...]) -> GpuSpec:
        """The card in a machine whose CPU gives each GPU slot ``slot_lanes`` (:attr:`slot_lanes`)."""
        return self._replace(slot_lanes=slot_lanes) if slot_lanes != self.slot_lanes else self

    @classmethod
    def from_record(cls, rec: Mapping[str, Any]) -> GpuSpec:
        """Build from a ``gpus.json`` record."""
        ic = rec.get("interconnect") or {}
        pcie = rec.get("pcie") or {}
        usable = rec.get("memory_usable_mib")
        return cls(
            id=rec["id"],
            name=rec["name"],
            vendor=rec["vendor"],
            memory_gb=float(rec["memory_gb"]),
            memory_usable_mib=None if usable is None else int(usable),
            memory_bandwidth_gb_per_s=float(rec["memory_bandwidth_gb_per_s"]),
            dense_tflops={k: _opt_float(v) for k, v in dict(rec["dense_tflops"]).items()},
            tdp_w=float(rec["tdp_w"]),
            form_factor=rec["form_factor"],
            interconnect_kind=str(ic.get("kind", "none")),
            interconnect_gb_per_s_bidir=float(ic.get("bandwidth_gb_per_s_bidir") or 0),
            nvlink_domain_gpus=int(ic.get("domain_gpus") or 1),
            pcie_gen=int(pcie.get("gen") or 4),
            pcie_lanes=int(pcie.get("lanes") or 16),
            pcie_peer_to_peer=bool(pcie.get("peer_to_peer", True)),
            mig_max_instances=rec.get("mig_max_instances"),
            cooling=str(rec.get("cooling", "air")),
            consumer=bool(rec.get("consumer", False)),
            source=_sources(rec),
            unsourced_fields=tuple(rec.get("unsourced_fields") or ()),
            max_achievable_tflops={k: float(v) for k, v in dict(rec.get("max_achievable_tflops") or {}).items()} or None,
            measured_memory_gb_per_s=_opt_float(rec.get("measured_memory_gb_per_s")),
            collective_gb_per_s=_opt_float(ic.get("collective_gb_per_s")),
            measured_allreduce_busbw=tuple(
                sorted((int(size), float(gb)) for size, gb in dict(rec.get("measured_allreduce_busbw_gb_per_s") or {}).items())
            ),
            architecture=str(rec.get("architecture") or ""),
            tdp_includes_host_cpu=bool(rec.get("tdp_includes_host_cpu", False)),
            host_link_gb_per_s_bidir=_opt_float((rec.get("host_link") or {}).get("bandwidth_gb_per_s_bidir")),
            package_gpus=int(rec.get("package_gpus") or 1),
            # AMD's and Intel's scale-up links join every pair of the board's GPUs directly, no switch between them
            mesh_gpus=int(ic.get("domain_gpus") or 1) if ic.get("kind") in MESH_INTERCONNECTS else None,
            throughput_runs=dict((rec.get("throughput_runs_compared") or {}).get("runs_by_engine") or {}),
            memory_cuda_mib=None if rec.get("memory_cuda_mib") is None else int(rec["memory_cuda_mib"]),
            measured_like=str(rec["measured_like"]) if rec.get("measured_like") else None,
        )

    @property
    def device_resource(self) -> str:
        """The extended resource this GPU's device plugin advertises (``nvidia.com/gpu``, ``amd.com/gpu``, ...)."""
        return DEVICE_RESOURCE[self.vendor]

    @property
    def memory_bytes(self) -> int:
        """Memory a process can allocate: CUDA's total where the catalog has it, else the reported MiB, else memory_gb."""
        if self.memory_cuda_mib:
            return self.memory_cuda_mib * MIB
        if self.memory_usable_mib:
            return self.memory_usable_mib * MIB
        return int(self.memory_gb * GB)

    def tflops(self, compute: str) -> float | None:
        """Dense tensor TFLOPS for a compute precision, falling back to fp16 for bf16 on pre-Ampere parts."""
        value = self.dense_tflops.get(compute)
        if value is None and compute == "bf16":
            value = self.dense_tflops.get("fp16")
        return value

    @property
    def tensor_formats(self) -> frozenset[str]:
        """The formats this GPU has a tensor rate of (:meth:`sustained_tflops`): those it multiplies as stored."""
        return frozenset(name for name in (*self.dense_tflops, "bf16") if self.sustained_tflops(name))

    def unrated(self, compute: str) -> str | None:
        """Why this GPU cannot be timed in ``compute`` (its rate is not published: null in ``gpus.json``), else None."""
        if self.tflops(compute) is not None:
            return None
        why = " (attention runs at it, whatever the weight format)" if compute == "bf16" else ""
        return (
            f"{self.id} has no published dense {compute} tensor rate in the catalog{why}: its speed cannot be estimated; "
            "choose another GPU"
        )

    def sustained_tflops(self, compute: str) -> float | None:
        """The tensor rate the fitted efficiencies apply to: the peak, scaled by the measured share over the reference's.

        Datasheet peaks count the boost clock; under dense tensor load a GPU may run far slower (AMD measures MI300X
        GEMMs at a median 1.2 GHz against its 2.1 GHz boost; an H100 SXM reaches 0.80 of its peak). The efficiencies
        were fitted on the reference GPU, whose own share they absorb; an unmeasured GPU is assumed to share it.
        """
        peak = self.tflops(compute)
        if peak is None:
            return None
        scale = self.tflops_vs_reference or {}
        # a precision measured on neither side takes the nearest wider one's, then the 16-bit one's: the sustained clock
        # is most of a GPU's share (review 20 item 5: an L4 measured in BF16 alone ran FP8 at 3.3x its BF16 rate, not
        # the datasheet's 2x)
        for name in share_fallbacks(compute):
            if name in scale:
                return peak * scale[name]
        return peak

    def reference_share(self, compute: str) -> float:
        """The reference GPU's measured share of its peak that :meth:`sustained_tflops` normalised ``compute`` to; 1: none.

        What turns the rates normalised to the reference into the rates this GPU is modelled to reach
        (:meth:`physical_tflops`). The precision :meth:`sustained_tflops` took its scale from where it took one, else (an
        unmeasured GPU, assumed to share the reference's) the first of :func:`share_fallbacks` the reference measured
        (newuser50 item 8: FP4 took the reference's 16-bit share, 0.80, where its FP8 one, 0.71, is the nearer).
        The shares are the catalog's reference GPU's (:func:`generator.catalog.reference_tflops_shares`).
        """
        from generator.catalog import reference_tflops_shares  # the catalog imports this module

        shares = reference_tflops_shares()
        scale = self.tflops_vs_reference or {}
        taken = next((n for n in share_fallbacks(compute) if n in scale), compute)
        name = normalising_format(taken, shares)
        return shares[name] if name is not None else 1.0

    def physical_tflops(self, compute: str) -> float | None:
        """The dense GEMM rate this GPU is modelled to reach in ``compute``, TFLOPS, as output says it.

        Its measured max-achievable rate where it is measured; else its peak times the share it is assumed to have (its
        class card's, or the reference's). :meth:`sustained_tflops` is this over the reference's share: the rate the
        efficiencies fitted on the reference apply to, which can exceed the peak (an A100's 337.6 against its 312
        dense BF16: newuser42 item 9) and is never said as a rate of the GPU.
        """
        sustained = self.sustained_tflops(compute)
        return None if sustained is None else sustained * self.reference_share(compute)

    @property
    def sustained_bandwidth_gb_per_s(self) -> float:
        """Memory bandwidth the decode efficiency applies to: the peak, scaled by the measured share over the reference's."""
        return self.memory_bandwidth_gb_per_s * self.bandwidth_vs_reference

    @property
    def physical_bandwidth_gb_per_s(self) -> float:
        """The memory bandwidth this GPU is modelled to reach, as output says it, GB/s.

        Its stream measurement where measured, else its peak times the share assumed (its sibling's, or the
        reference's): :attr:`sustained_bandwidth_gb_per_s` times the reference's share.
        """
        return self.sustained_bandwidth_gb_per_s * self.reference_bandwidth_share

    def measured_share(self, compute: str) -> float | None:
        """Measured max-achievable GEMM rate over the peak in ``compute`` (bf16 and fp16 stand in for each other)."""
        measured = self.max_achievable_tflops or {}
        for name in (compute, _HALF_TWIN.get(compute, compute)):
            peak = self.tflops(name)
            if name in measured and peak:
                return measured[name] / peak
        return None

    def relative_to(self, reference: GpuSpec) -> GpuSpec:
        """The GPU with its measured shares expressed over ``reference``'s (the GPU the efficiencies were fitted on)."""
        scale = {}
        base_shares = {c: share for c in reference.dense_tflops if (share := reference.measured_share(c)) is not None}
        for compute in self.max_achievable_tflops or {}:
            # a format the reference lacks (FP4 on an H100) over the reference's nearest wider one: the rates fitted on
            # the reference's FP8 GEMMs then apply at this GPU's own measured FP4 share, not its FP8 one (acc142)
            own, name = self.measured_share(compute), normalising_format(compute, base_shares)
            if own and name is not None:
                scale[compute] = own / base_shares[name]
        bandwidth = 1.0
        if self.measured_memory_gb_per_s and reference.measured_memory_gb_per_s:
            own_bw = self.measured_memory_gb_per_s / self.memory_bandwidth_gb_per_s
            bandwidth = own_bw / (reference.measured_memory_gb_per_s / reference.memory_bandwidth_gb_per_s)
        return self._replace(
            tflops_vs_reference=scale or None,
            bandwidth_vs_reference=bandwidth,
            reference_bandwidth_share=(
                reference.measured_memory_gb_per_s / reference.memory_bandwidth_gb_per_s
                if reference.measured_memory_gb_per_s
                else 1.0
            ),
            allreduce_vs_reference=self._allreduce_over(reference),
        )

    @property
    def fast_link_gb_per_s(self) -> float:
        """Per-direction bandwidth an all-reduce is modelled at over the scale-up link (0 without one)."""
        return self.collective_gb_per_s or self.interconnect_gb_per_s_bidir / 2

    def _allreduce_over(self, reference: GpuSpec) -> tuple[tuple[int, float], ...]:
        """The all-reduce time factor by message size: ``reference``'s measured share of its link over this GPU's.

        The fitted all-reduce latency and the link figure hold the reference GPU's own collective efficiency (its
        library's test reaches 0.46 of its link figure at 8 MB, 1.26 at 1 GB); a GPU whose library reaches less of its
        link at a size takes that much longer there. Sizes measured on one side only are left out.
        """
        own_link, base_link = self.fast_link_gb_per_s, reference.fast_link_gb_per_s
        if not (own_link and base_link and self.measured_allreduce_busbw and reference.measured_allreduce_busbw):
            return ()
        base = dict(reference.measured_allreduce_busbw)
        factors = tuple(
            (size, (base[size] / base_link) / (gb / own_link)) for size, gb in self.measured_allreduce_busbw if size in base
        )
        return () if all(factor == 1.0 for _, factor in factors) else factors  # the reference itself: as modelled

    @property
    def boost_class(self) -> tuple[str, bool] | None:
        """The class of GPUs whose GEMMs run past the rated boost clock alike: a vendor's consumer cards; else None.

        A GeForce card sustains its tensor peak or more under GEMM load (RTX 3090 1.08, 4090 1.03, 5090 1.16 of the
        datasheet rate in one table); a datacenter part runs below it (H100 SXM 0.80, L40S 0.74, L4 0.59).
        """
        return (self.vendor, True) if self.consumer else None

    def tensor_rate_basis(self) -> str:
        """Where :meth:`sustained_tflops` takes its share of the peak from, in words for the output."""
        if self.shares_assumed_from:
            return f"assumed like {self.shares_assumed_from} (the nearest measured card of its class; unmeasured itself)"
        if self.tflops_vs_reference:
            return "measured"
        return "unmeasured: assumed to sustain the reference GPU's share of its peak"


def borrow_sibling_measurements(gpus: Mapping[str, GpuSpec]) -> dict[str, GpuSpec]:
    """``gpus`` with each GPU that names a ``measured_like`` sibling given the sibling's measured shares it lacks.

    The sibling's stream bandwidth as a share of its peak, applied to this GPU's peak, and its all-reduce bus bandwidth
    as a share of its link figure, applied to this GPU's link. newuser37 item 3: the MI325X (CDNA3 like the MI300X,
    same xGMI links, same ROCm / RCCL) had no measurement and took the reference H100's shares (0.887 of peak
    bandwidth, NCCL's all-reduce), decoding 1.27x as fast as the MI300X for 1.13x its peak bandwidth.
    """
    out = dict(gpus)
    for gpu_id, gpu in gpus.items():
        if gpu.measured_like is None:
            continue
        donor = gpus[gpu.measured_like]
        if donor.architecture != gpu.architecture or donor.measured_like is not None:
            raise ValueError(f"{gpu_id}: measured_like must name a measured GPU of its own architecture")
        memory = gpu.measured_memory_gb_per_s
        if memory is None and donor.measured_memory_gb_per_s:
            memory = donor.measured_memory_gb_per_s / donor.memory_bandwidth_gb_per_s * gpu.memory_bandwidth_gb_per_s
        busbw = gpu.measured_allreduce_busbw
        own_link, donor_link = gpu.fast_link_gb_per_s, donor.fast_link_gb_per_s
        if not busbw and own_link and donor_link:
            busbw = tuple((size, gb * own_link / donor_link) for size, gb in donor.measured_allreduce_busbw)
        out[gpu_id] = gpu._replace(
            measured_memory_gb_per_s=memory,
            measured_allreduce_busbw=busbw,
            max_achievable_tflops=narrow_format_rates(gpu, donor),
        )
    return out


def narrow_format_rates(gpu: GpuSpec, donor: GpuSpec) -> Mapping[str, float] | None:
    """``gpu``'s measured GEMM rates, a narrow format it lacks (FP4) added at its ``donor`` sibling's share ratio.

    The donor's measured share of the narrow format over the nearest wider format's (FP8), applied to ``gpu``'s own
    measured wider share and its own narrow peak; only where both datasheets rate the narrow format at the same
    multiple of the wider (the same tensor datapath: the GB200's FP4 is twice its FP8 as the B200's is; the B300's
    Blackwell Ultra FP4 is three times). acc142: the B200 measures FP4 at 0.582 of its peak against FP8's 0.763
    (cuBLASLt, DeepGEMM PR #348; stas00's MAMF); the GB200, the same die at a higher power limit, measured in FP8
    alone, took FP8's share for FP4: 7,231 TFLOPS, 1.38x the B200's for 1.11x its peak.
    """
    rates = dict(gpu.max_achievable_tflops or {})
    for narrow, wider in NEAREST_WIDER_FORMAT.items():
        own, lent, lent_wider = gpu.measured_share(wider), donor.measured_share(narrow), donor.measured_share(wider)
        peaks = (gpu.tflops(narrow), gpu.tflops(wider), donor.tflops(narrow), donor.tflops(wider))
        if narrow in rates or not (own and lent and lent_wider) or not all(peaks):
            continue
        peak, peak_wider, donor_peak, donor_peak_wider = (p or 0.0 for p in peaks)
        if peak / peak_wider == donor_peak / donor_peak_wider:
            rates[narrow] = peak * own * lent / lent_wider
    return rates or None


def borrow_class_shares(gpus: Mapping[str, GpuSpec]) -> dict[str, GpuSpec]:
    """``gpus`` with each unmeasured GPU of a boost class given the shares of a measured GPU of that class.

    Otherwise an unmeasured GeForce card took the datacenter reference's share (0.80 of its peak) while its measured
    sibling took its own (the 4090 at 1.03), and a faster card was scored slower (newuser25 item 2: the 5090 at 209.5
    sustained TFLOPS against the 4090's 211.7). The sibling of the same architecture is taken where there is one, else
    the class's measured GPU of the lowest share; a measured GPU keeps its own.
    """
    measured = [g for g in gpus.values() if g.tflops_vs_reference and g.boost_class and not g.shares_assumed_from]
    out = dict(gpus)
    for gpu_id, gpu in gpus.items():
        if gpu.tflops_vs_reference or gpu.boost_class is None:
            continue
        kin = [g for g in measured if g.boost_class == gpu.boost_class]
        same = [g for g in kin if g.architecture == gpu.architecture] or kin
        if not same:
            continue
        donor = min(same, key=lambda g: (min((g.tflops_vs_reference or {}).values()), g.id))
        out[gpu_id] = gpu._replace(tflops_vs_reference=donor.tflops_vs_reference, shares_assumed_from=donor.id)
    return out


class ModelRecord(NamedTuple):
    """A catalog model: its Hugging Face id, names and verbatim ``config.json``."""

    id: str
    name: str
    family: str
    aliases: tuple[str, ...]
    config: Mapping[str, Any]
    source: tuple[str, ...]
    reference_params_total: int | None = None
    #: The publisher's own FP8 checkpoint, where its layout is not every linear layer in FP8: (its id, the precision
    #: that sizes it, its page).
    publisher_fp8: tuple[str, str, str] | None = None
    #: The catalog id of this model's NVFP4 checkpoint (NVIDIA's ModelOpt release), whose list of unquantized modules
    #: sizes ``precision: nvfp4`` asked of this model (fix196).
    nvfp4_checkpoint: str | None = None

    @classmethod
    def from_record(cls, rec: Mapping[str, Any]) -> ModelRecord:
        """Build from a ``models.json`` record."""
        config = rec["config"]
        if not isinstance(config, dict):
            raise TypeError("config must be an object")
        return cls(
            id=rec["id"],
            name=rec["name"],
            family=str(rec.get("family", "")),
            aliases=tuple(rec.get("aliases") or ()),
            config=config,
            source=_sources(rec),
            reference_params_total=rec.get("reference_params_total"),
            publisher_fp8=(fp8["id"], fp8["precision"], fp8["source"]) if (fp8 := rec.get("publisher_fp8")) else None,
            nvfp4_checkpoint=rec.get("nvfp4_checkpoint"),
        )


class CpuSpec(NamedTuple):
    """A server or desktop CPU."""

    id: str
    name: str
    cores: int
    tdp_w: float
    memory_channels: int
    ddr_mt_per_s: int
    pcie_lanes: int | None
    source: tuple[str, ...]
    ddr_generation: str = ""
    vendor: str = ""
    #: CPU time of one PyTorch eager call (``host_dispatch_source``), microseconds; None: not measured.
    host_dispatch_us: float | None = None
    #: Package socket (e.g. ``LGA4677``); "" where unknown.
    socket: str = ""
    #: Most sockets of one system the part runs in, from its vendor's spec page; None where none was found.
    max_sockets: int | None = None
    #: PCIe lanes the CPU gives each GPU slot, by GPUs fitted, as ``(gpus, lanes)`` pairs in ascending GPUs (Intel's
    #: "1x16+4, 2x8+4": ``((1, 16), (2, 8))``); empty: each GPU gets its own x16 (``cpus.json`` ``gpu_slot_lanes``).
    gpu_slot_lanes: tuple[tuple[int, int], ...] = ()
    #: ``udimm`` for a CPU that takes unbuffered DIMMs (a desktop's), else ``rdimm`` (``cpus.json`` ``dimm_type``).
    dimm_type: str = "rdimm"
    #: The DDR rate its vendor rates it for with two DIMMs in every channel, MT/s; None where no figure was found.
    ddr_mt_per_s_2dpc: int | None = None
    #: Hardware threads (SMT siblings included); None where not recorded.
    threads: int | None = None
    #: Performance cores of a hybrid part (Intel's P-cores beside its E-cores); None: every core is one.
    performance_cores: int | None = None
    #: Most power the package draws with every core loaded (Intel's Maximum Turbo Power, PL2), W; None: ``tdp_w``.
    max_power_w: float | None = None
    #: Whether its cores have a one-instruction 8-bit dot product (x86: AVX-VNNI or AVX512-VNNI; Arm: SDOT, FEAT_DotProd):
    #: ``cpus.json`` ``int8_vnni``, sourced in ``field_sources``; every catalog record says (review80 item 15), and one
    #: that did not would be counted without it, at ``cpu_core_gparams_per_s_without_vnni`` (the floor).
    int8_vnni: bool | None = None
    #: Whether the planner may pick it for a catalog bare-metal chassis (``choose_cpu``): false for a part catalogued
    #: for ``estimate --cpu`` alone (a workstation's, or a generation no catalog chassis is built with), so that adding
    #: it does not change which CPU a server is assumed to have (``cpus.json`` ``chassis_choice``, default true).
    chassis_choice: bool = True

    @classmethod
    def from_record(cls, rec: Mapping[str, Any]) -> CpuSpec:
        """Build from a ``cpus.json`` record."""
        return cls(
            id=rec["id"],
            name=rec["name"],
            cores=int(rec["cores"]),
            tdp_w=float(rec["tdp_w"]),
            memory_channels=int(rec["memory_channels"]),
            ddr_mt_per_s=int(rec["ddr_mt_per_s"]),
            pcie_lanes=rec.get("pcie_lanes"),
            source=_sources(rec),
            ddr_generation=str(rec.get("ddr_generation") or ""),
            vendor=str(rec.get("vendor") or ""),
            host_dispatch_us=_opt_float(rec.get("host_dispatch_us")),
            socket=str(rec.get("socket") or ""),
            max_sockets=None if rec.get("max_sockets") is None else int(rec["max_sockets"]),
            gpu_slot_lanes=tuple(sorted((int(n), int(lanes)) for n, lanes in dict(rec.get("gpu_slot_lanes") or {}).items())),
            dimm_type=str(rec.get("dimm_type") or "rdimm"),
            ddr_mt_per_s_2dpc=None if rec.get("ddr_mt_per_s_2dpc") is None else int(rec["ddr_mt_per_s_2dpc"]),
            threads=None if rec.get("threads") is None else int(rec["threads"]),
            performance_cores=None if rec.get("performance_cores") is None else int(rec["performance_cores"]),
            max_power_w=_opt_float(rec.get("max_power_w")),
            int8_vnni=None if rec.get("int8_vnni") is None else bool(rec["int8_vnni"]),
            chassis_choice=bool(rec.get("chassis_choice", True)),
        )

    @property
    def full_load_w(self) -> float:
        """The package's draw with every core loaded: its rated most (Intel's PL2), else its TDP."""
        return self.max_power_w or self.tdp_w

    @property
    def socket_threads(self) -> int:
        """Hardware threads of one socket: its ``threads``, else its cores where they are not recorded."""
        return self.threads or self.cores

    @property
    def llama_cpp_cores(self) -> int:
        """The cores llama.cpp's default threads run on, one thread a core: a hybrid part's P-cores, else every core.

        common.cpp ``cpu_get_num_math``: on a hybrid x86 CPU it counts the cores that are not efficiency cores
        ("efficiency cores harm lockstep threading") and skips their SMT siblings ("hyperthreading isn't useful for
        linear algebra"); elsewhere ``cpu_get_num_physical_cores``.
        """
        return self.performance_cores or self.cores

    @property
    def memory_bandwidth_gb_per_s(self) -> float:
        """Theoretical DRAM bandwidth of one socket."""
        return dram_bandwidth_gb_per_s(self.memory_channels, self.ddr_mt_per_s)


def dram_bandwidth_gb_per_s(channels: int, mt_per_s: int) -> float:
    """Theoretical DRAM bandwidth: channels x transfers per second x 8 bytes per transfer."""
    return channels * mt_per_s * 8 / 1000


class NicSpec(NamedTuple):
    """A network adapter."""

    id: str
    name: str
    protocol: str
    ports: int
    port_gbps: float
    power_w: float | None
    gpudirect_rdma: bool
    source: tuple[str, ...]
    #: The card's PCIe generation and lanes (None: not recorded); what its ports may move to and from the host
    #: (newuser111: :mod:`generator.planner.nic_host_link`).
    pcie_gen: int | None = None
    pcie_lanes: int | None = None

    @classmethod
    def from_record(cls, rec: Mapping[str, Any]) -> NicSpec:
        """Build from a ``nics.json`` record."""
        return cls(
            id=rec["id"],
            name=rec["name"],
            protocol=rec["protocol"],
            ports=int(rec.get("ports") or 1),
            port_gbps=float(rec["port_gbps"]),
            power_w=_opt_float(rec.get("power_w")),
            gpudirect_rdma=bool(rec.get("gpudirect_rdma", False)),
            source=_sources(rec),
            pcie_gen=int(rec["pcie_gen"]) if rec.get("pcie_gen") else None,
            pcie_lanes=int(rec["pcie_lanes"]) if rec.get("pcie_lanes") else None,
        )


class DriveSpec(NamedTuple):
    """An NVMe drive."""

    id: str
    name: str
    capacity_tb: float
    seq_read_gb_per_s: float
    seq_write_gb_per_s: float
    power_w_active: float | None
    source: tuple[str, ...]

    @classmethod
    def from_record(cls, rec: Mapping[str, Any]) -> DriveSpec:
        """Build from a ``drives.json`` record."""
        return cls(
            id=rec["id"],
            name=rec["name"],
            capacity_tb=float(rec["capacity_tb"]),
            seq_read_gb_per_s=float(rec["seq_read_gb_per_s"]),
            seq_write_gb_per_s=float(rec["seq_write_gb_per_s"]),
            power_w_active=_opt_float(rec.get("power_w_active")),
            source=_sources(rec),
        )


class PlatformSpec(NamedTuple):
    """A server platform or cloud instance type that holds GPUs."""

    id: str
    name: str
    kind: str
    provider: str
    instance_type: str | None
    gpu_ids: tuple[str, ...]
    gpu_counts: tuple[int, ...]
    cpu_id: str | None
    cpu_sockets: int
    vcpus: int | None
    ram_gib: float | None
    ram_max_gib: float | None
    nvme_drive_id: str | None
    #: The whole system's NVMe drives and capacity: ``platforms.json`` gives them per host ("per": "host" where a
    #: rack-scale system has several hosts), multiplied here by the hosts.
    nvme_count: int
    nvme_total_tb: float | None
    fabric_nic_id: str | None
    fabric_nic_count: int
    frontend_nic_id: str | None
    frontend_nic_count: int
    network_gbps_total: float | None
    psu_count: int | None
    psu_rating_w: float | None
    psu_redundant: int | None
    max_power_w: float | None
    rack_units: int | None
    cooling: str
    source: tuple[str, ...]
    unsourced_fields: tuple[str, ...] = ()
    cpu_vendor: str | None = None
    #: CPU socket the platform takes where it fixes the socket but not the model (the planner names a CPU of it).
    cpu_socket: str | None = None
    #: An owned server described in the workload (``hardware.inventory[].custom``): its parts are as
    #: given, never chosen or added by the planner, and no more of it can be bought.
    custom: bool = False
    #: A catalog platform whose NICs an owned group states (``hardware.inventory[].fabric_nic`` ...): the fabric is as
    #: stated, never one the planner fits (``fabric_nic_id`` None: it has none).
    nics_as_owned: bool = False
    #: A cloud machine type whose GPU NICs the rendered node pools attach (GKE: ``kubernetes.gpu_networks`` names their
    #: networks); a GKE pool's nodes otherwise have the primary NIC alone (:func:`~generator.planner.nodes.node_link`).
    gpu_nics_attached: bool = False
    #: A catalog platform whose RAM an owned group states (``hardware.inventory[].ram_gib``): ``ram_gib`` is as owned,
    #: never sized from the workload (newuser43 item 2).
    ram_as_owned: bool = False
    #: Whether NVLink bridges join its bridge-capable PCIe GPUs: True where a source says so; False or None
    #: (no source says, or an option the quote leaves out): they talk over PCIe.
    gpu_bridge: bool | None = None
    #: Linux hosts one system is made of: a rack-scale system's compute trays each run their own OS, with their own
    #: CPUs, memory and drives (``platforms.json`` ``nodes``); 1 for every other server.
    hosts: int = 1
    #: How a cloud instance type its provider does not rent on demand is sold instead (None: rented on demand).
    not_on_demand: str | None = None
    #: The most NVMe data drives one host takes, where a source publishes its bays (None: not in the catalog).
    max_nvme_drives: int | None = None
    #: Fault-tolerant PSU redundancy (Dell's FTR): every PSU carries the load, and on losing the redundant ones the
    #: server caps its GPUs' power instead of shutting down (``psu.fault_tolerant``).
    psu_fault_tolerant: bool = False
    #: PCIe lanes its CPU gives each GPU slot, by GPUs fitted (:attr:`CpuSpec.gpu_slot_lanes`, set by the catalog).
    gpu_slot_lanes: tuple[tuple[int, int], ...] = ()
    #: GPUs EC2 DescribeInstanceTypes reports for an AWS instance type where that differs from its GPUs (p5.4xlarge:
    #: 0), which tools sizing instance types from that API (Karpenter) go by; None: the API's count is its GPUs.
    ec2_api_gpus: int | None = None
    #: GPUs one NVLink domain of this platform joins where it differs from its GPU record's (``platforms.json``
    #: ``nvlink_domain``; newuser89 item 1: GCP a2-megagpu-16g's two HGX A100 8-GPU boards are joined through their
    #: NVSwitches, 16 GPUs where the A100 record's domain is a board's 8); None: the GPU record's.
    nvlink_domain_gpus: int | None = None
    #: A cloud instance whose vCPUs are physical cores (``platforms.json`` ``vcpus_physical``; newuser52 item 4: ND
    #: MI300X v5's 96 were counted as 48); else two vCPUs a core.
    vcpus_physical: bool = False
    #: An Azure VM size's vCPU quota family (``platforms.json`` ``quota_family``: its Resource SKUs ``family``, spaces
    #: removed, as ``az vm list-usage`` names the quota; fix154); None where the catalog gives none.
    quota_family: str | None = None
    #: Gb/s of the Ethernet a cloud instance has beside an InfiniBand fabric (``nics.frontend_ethernet_gbps``, Azure
    #: ND): the network that reaches storage and the internet; None where the catalog gives none.
    frontend_ethernet_gbps: float | None = None
    #: Whether ``max_power_w`` is an approximate consumption figure its source gives (NVIDIA's "~14 kW" for the DGX
    #: B300), not a nameplate maximum (``platforms.json`` ``max_power_approximate``; newuser64 item 4).
    max_power_approximate: bool = False
    #: The one boot disk type a cloud machine type takes (``platforms.json`` ``boot_disk``: GCP A3 Ultra, A4 and G4 take
    #: Hyperdisk Balanced only, not GKE's pd-balanced default; newuser79 item 5); None: the provider's default does.
    boot_disk_type: str | None = None

    @classmethod
    def from_record(cls, rec: Mapping[str, Any]) -> PlatformSpec:
        """Build from a ``platforms.json`` record."""
        cpu = rec.get("cpu") or {}
        nvme = rec.get("nvme") or {}
        nics = rec.get("nics") or {}
        fabric = nics.get("fabric") or {}
        front = nics.get("frontend") or {}
        psu = rec.get("psu") or {}
        hosts = int(rec.get("nodes") or 1)
        return cls(
            id=rec["id"],
            name=rec["name"],
            kind=rec["kind"],
            provider=rec["provider"],
            instance_type=rec.get("instance_type"),
            gpu_ids=tuple(rec["gpu_ids"]),
            gpu_counts=tuple(int(c) for c in rec["gpu_counts"]),
            cpu_id=cpu.get("id"),
            cpu_sockets=int(cpu.get("sockets") or 1),
            vcpus=rec.get("vcpus"),
            ram_gib=_opt_float(rec.get("ram_gib")),
            ram_max_gib=_opt_float(rec.get("ram_max_gib")),
            nvme_drive_id=nvme.get("drive_id"),
            nvme_count=int(nvme.get("count") or 0) * _nvme_hosts(nvme, hosts),
            nvme_total_tb=None if (tb := _opt_float(nvme.get("total_tb"))) is None else tb * _nvme_hosts(nvme, hosts),
            fabric_nic_id=fabric.get("nic_id"),
            fabric_nic_count=int(fabric.get("count") or 0),
            frontend_nic_id=front.get("nic_id"),
            frontend_nic_count=int(front.get("count") or 0),
            network_gbps_total=_opt_float(nics.get("network_gbps_total") or rec.get("network_gbps_total")),
            psu_count=psu.get("count"),
            psu_rating_w=_opt_float(psu.get("rating_w")),
            psu_redundant=psu.get("redundant"),
            psu_fault_tolerant=bool(psu.get("fault_tolerant", False)),
            max_power_w=_opt_float(rec.get("max_power_w")),
            max_power_approximate=bool(rec.get("max_power_approximate", False)),
            rack_units=rec.get("rack_units"),
            cooling=str(rec.get("cooling", "air")),
            source=_sources(rec),
            unsourced_fields=tuple(rec.get("unsourced_fields") or ()),
            cpu_vendor=cpu.get("vendor"),
            cpu_socket=cpu.get("socket"),
            gpu_bridge=rec.get("gpu_bridge"),
            hosts=hosts,
            not_on_demand=(rec.get("not_on_demand") or {}).get("sold_through"),
            max_nvme_drives=(rec.get("max_nvme_drives") or {}).get("count"),
            ec2_api_gpus=(rec.get("ec2_api_gpus") or {}).get("count"),
            nvlink_domain_gpus=(rec.get("nvlink_domain") or {}).get("gpus"),
            vcpus_physical=rec.get("vcpus_physical") is not None,
            quota_family=(rec.get("quota_family") or {}).get("name"),
            frontend_ethernet_gbps=_opt_float(nics.get("frontend_ethernet_gbps")),
            boot_disk_type=(rec.get("boot_disk") or {}).get("disk_type"),
        )

    @property
    def acquired(self) -> str:
        """How its servers are had: ``rented`` from a cloud, ``bought`` as bare metal."""
        return acquired(self.provider)

    def fitted_gpu(self, gpu: GpuSpec) -> GpuSpec:
        """``gpu`` as this platform holds it: bridged only where it says so, in slots as wide as its CPU gives them.

        Two GPUs in an AM5 tower get x8 each (newuser25 item 12). SXM GPUs on an HGX 4-GPU board are linked to each
        other directly, without NVSwitch (newuser30 item 1: a TP2 pair was timed at all 18 of an H100's NVLinks where 6
        join it to its peer).
        """
        fitted = gpu.as_fitted(self.gpu_bridge is True).in_slots(self.gpu_slot_lanes)
        if self.nvlink_domain_gpus is not None and fitted.interconnect_kind == "nvlink":
            fitted = fitted._replace(nvlink_domain_gpus=self.nvlink_domain_gpus)
        if self.kind == "hgx-4gpu" and fitted.interconnect_kind == "nvlink":
            return fitted._replace(mesh_gpus=max(self.gpu_counts))
        return fitted


def _nvme_hosts(nvme: Mapping[str, Any], hosts: int) -> int:
    """How many hosts carry the catalog's ``nvme`` figures, which are per host (one compute tray of a rack-scale system).

    A system of several hosts must say so (``"per": "host"``): a whole-system drive count would otherwise be
    multiplied by the hosts unnoticed.
    """
    if hosts > 1 and (nvme.get("count") or nvme.get("total_tb")) and nvme.get("per") != "host":
        raise ValueError(f'nvme of a system of {hosts} hosts needs "per": "host" (count and total_tb are per host)')
    return hosts


def acquired(provider: str) -> str:
    """How a provider's servers are had: ``rented`` from a cloud, ``bought`` as bare metal."""
    return "bought" if provider == "baremetal" else "rented"


class PriceRecord(NamedTuple):
    """A published price of a platform (hourly for cloud, monthly for dedicated servers)."""

    id: str
    platform_id: str
    unit: str
    usd: float
    source: tuple[str, ...]
    #: The cloud region the price is for (None: a dedicated server's, or not stated).
    region: str | None = None
    #: The GPU and GPU count the price is for, where the platform takes more than one (a bare-metal server rented or
    #: bought with one GPU of several): a price with a GPU prices that GPU alone (newuser39 item 4: Lambda's 8 x A100
    #: 40GB rent priced A100 80GB servers too). None: the platform's only configuration (a cloud instance type).
    gpu_id: str | None = None
    gpu_count: int | None = None
    #: The provider a bare-metal server priced by the hour or month is rented from (``Lambda``), where the user launches
    #: it; None for a cloud's price (its provider is its platform's) or a purchase.
    rented_from: str | None = None
    #: The date the price was read or published (None: its source gives none; review34 item 15).
    as_of: str | None = None
    #: Whether its source is a third party's table, not the provider's own page (``third_party_source``; newuser73
    #: items 2 and 12): no provider page stating the figure was found, and a plan renting at it says so.
    third_party: bool = False
    #: Whether it is the platform's spot rate (``"capacity_type": "spot"``), the price a spot pool of the type is rented
    #: at (:func:`generator.catalog.spot_prices`); else its on-demand (or monthly, or purchase) price.
    spot: bool = False
    #: Whether the figure has no source a user can open (``unsourced_fields`` holds ``usd``; src97: Azure's ND MI300X v5
    #: price was read only in third parties' tables whose repositories are not known): a plan renting at it says so.
    usd_unsourced: bool = False

    def prices(self, gpu_id: str, gpus: int) -> bool:
        """Whether this price is for ``gpus`` x ``gpu_id`` on its platform (a price naming no GPU is for any)."""
        return (self.gpu_id is None or self.gpu_id == gpu_id) and (self.gpu_count is None or self.gpu_count == gpus)

    @classmethod
    def from_record(cls, rec: Mapping[str, Any]) -> PriceRecord:
        """Build from a ``prices.json`` record."""
        return cls(
            id=rec["id"],
            platform_id=rec["platform_id"],
            unit=rec["unit"],
            usd=float(rec["usd"]),
            source=_sources(rec),
            region=rec.get("region"),
            gpu_id=rec.get("gpu_id"),
            gpu_count=int(rec["gpu_count"]) if "gpu_count" in rec else None,
            rented_from=rec.get("rented_from"),
            as_of=rec.get("as_of"),
            third_party=rec.get("third_party_source") is True,
            spot=rec.get("capacity_type") == "spot",
            usd_unsourced="usd" in (rec.get("unsourced_fields") or ()),
        )


class PricedWith(NamedTuple):
    """The configuration a comparable system's price is for, as listed (None where the listing does not say)."""

    cpu: str | None
    cpu_count: int | None
    cpu_cores_each: int | None
    ram_gb: float | None
    includes: tuple[str, ...]

    @property
    def cpu_cores(self) -> int | None:
        """Cores of all its CPUs, where the listing gives both count and cores."""
        return self.cpu_count * self.cpu_cores_each if self.cpu_count and self.cpu_cores_each else None

    @classmethod
    def from_record(cls, rec: Mapping[str, Any]) -> PricedWith:
        """Build from a ``comparable.priced_with`` object."""
        count, cores, ram = rec["cpu_count"], rec["cpu_cores_each"], rec["ram_gb"]
        return cls(
            cpu=rec["cpu"],
            cpu_count=int(count) if count is not None else None,
            cpu_cores_each=int(cores) if cores is not None else None,
            ram_gb=float(ram) if ram is not None else None,
            includes=tuple(str(i) for i in rec["includes"]),
        )

    def text(self) -> str:
        """How the priced configuration is said in a plan."""
        if self.cpu is None and self.ram_gb is None:
            return "its CPU and RAM are not published"
        cpu = f"{self.cpu_count} x {self.cpu}" if self.cpu_count else str(self.cpu or "an unpublished CPU")
        cores = f", {self.cpu_cores} cores," if self.cpu_cores else ""
        ram = f"{self.ram_gb:g} GB RAM" if self.ram_gb is not None else "unpublished RAM"
        extras = f", with {' and '.join(self.includes)}" if self.includes else ""
        return f"priced with {cpu}{cores} and {ram}{extras}"


class Availability(NamedTuple):
    """Whether a purchased product is still sold new, and when its production ended, as its sources state them."""

    sold_new: bool
    #: Date of the latest source (YYYY-MM-DD, or YYYY-MM where it gives the month only).
    as_of: str
    #: What the sources state (shown in the plan and the catalog listing).
    says: str
    source: tuple[str, ...]
    #: When production ended, as reported (YYYY-MM[-DD]); None where no date is sourced.
    production_ended: str | None = None

    @classmethod
    def from_record(cls, rec: Mapping[str, Any]) -> Availability:
        """Build from a purchase record's ``availability`` object (a source is required)."""
        source = _sources(rec)
        if not source:
            raise ValueError("availability: needs a source")
        ended = rec.get("production_ended")
        return cls(
            sold_new=bool(rec["sold_new"]),
            as_of=str(rec["as_of"]),
            says=str(rec["says"]),
            source=source,
            production_ended=str(ended) if ended is not None else None,
        )

    def text(self) -> str:
        """How a plan and the catalog listing say it: what the sources state, the first of them and its date."""
        return f"{self.says}; {self.source[0]}, {self.as_of}"


class PurchaseRecord(NamedTuple):
    """A purchase price: a whole system, one GPU, or a host without its GPUs (``purchases.json``)."""

    id: str
    kind: str
    platform_id: str | None
    gpu_id: str | None
    gpu_count: int | None
    usd: float
    as_of: str
    basis: str
    range_end: str
    estimated: bool
    source: tuple[str, ...]
    stands_in: str | None = None  # a comparable-system estimate: which system's price stands in for this host
    priced_with: PricedWith | None = None  # a comparable-system estimate: the configuration that system is priced with
    #: Whether the product is still sold new (None: not recorded, taken as sold).
    availability: Availability | None = None
    #: Whether the price itself is a belief the catalog could not source (``unsourced_fields`` holds ``usd``).
    usd_unsourced: bool = False
    #: A host derived from another record's quote less parts (``derived_from``), as a plan says it: the quote, what was
    #: taken out, and that it is no quote for this chassis (newuser80 item 4). None: not derived from a quote.
    derived_from: str | None = None
    #: The id of the quote record ``derived_from`` names (None where not derived from one).
    derived_from_id: str | None = None

    @property
    def sold_new(self) -> bool:
        """Whether the price can still be paid for a new unit (False where the catalog sources that it cannot)."""
        return self.availability is None or self.availability.sold_new

    @classmethod
    def from_record(cls, rec: Mapping[str, Any]) -> PurchaseRecord:
        """Build from a ``purchases.json`` record (a comparable-system estimate must be an estimated host).

        A product whose production ended and that is still sold new must be priced from a figure dated on or after the
        end: its launch price is not what its remaining stock sells for (newuser29 item 12).
        """
        comparable = rec.get("comparable")
        if comparable and (rec["estimated"] is not True or rec["kind"] != "host"):
            raise ValueError(
                "comparable: a comparable-system estimate must have estimated: true and kind: host"
                f" (has estimated: {json.dumps(rec['estimated'])}, kind: {json.dumps(rec['kind'])})"
            )
        availability = Availability.from_record(rec["availability"]) if rec.get("availability") else None
        ended = availability.production_ended if availability else None
        if availability and availability.sold_new and ended and str(rec["as_of"])[: len(ended)] < ended:
            raise ValueError(
                f"as_of: the price is dated {rec['as_of']}, before production ended ({ended}): price the product from a"
                " figure dated after the end, or set availability.sold_new: false"
            )
        return cls(
            id=rec["id"],
            kind=rec["kind"],
            platform_id=rec.get("platform_id"),
            gpu_id=rec.get("gpu_id"),
            gpu_count=int(rec["gpu_count"]) if rec.get("gpu_count") is not None else None,
            usd=float(rec["usd"]),
            as_of=str(rec["as_of"]),
            basis=str(rec["basis"]),
            range_end=str(rec["range_end"]),
            estimated=bool(rec["estimated"]),
            source=_sources(rec),
            stands_in=_stands_in(comparable) if comparable else None,
            priced_with=PricedWith.from_record(comparable["priced_with"]) if comparable else None,
            availability=availability,
            usd_unsourced="usd" in (rec.get("unsourced_fields") or ()),
            derived_from=_derived_from(rec["derived_from"]) if rec.get("derived_from") else None,
            derived_from_id=str(rec["derived_from"]["record"]) if rec.get("derived_from") else None,
        )


def _derived_from(derived: Mapping[str, Any]) -> str:
    """How a host derived from a quote is said in a plan (newuser80 item 4: "not sourced" beside a cited quote).

    The figure is the quote less the parts it names: a derivation for another system, not this chassis' price, and
    one figure whatever RAM or CPUs the node is built with.
    """
    less = ", ".join(f"{p['quantity']} x {p['item']} at ${float(p['usd_each']):,.0f}" for p in derived["less"])
    return (
        f"derived from {derived['record']} ${float(derived['usd']):,.0f} less {less}: not a quote for this chassis, and"
        " the same whatever its RAM and CPUs"
    )


def _stands_in(comparable: Mapping[str, Any]) -> str:
    """How a comparable-system estimate is said in a plan: the system, its price, what was taken out, what it is priced with."""
    less = ", ".join(f"{p['quantity']} x {p['item']} at ${float(p['usd_each']):,.0f}" for p in comparable["less"])
    priced_with = PricedWith.from_record(comparable["priced_with"]).text()
    return (
        f"from a comparable system, not this chassis: {comparable['system']} ${float(comparable['usd']):,.0f}"
        f" less {less}; {priced_with}"
    )


class ThroughputGap(NamedTuple):
    """A serving setup whose measured throughput the model is known to over-predict (``throughput_gaps.json``)."""

    id: str
    description: str
    engines: tuple[str, ...]
    gpu_architectures: tuple[str, ...]
    #: An attention kind the model must have layers of (``mla``); None: any model.
    attention: str | None
    #: Lowest and highest prediction / measurement over the runs (the lowest may be at or below 1: some runs measured
    #: as much as the model or more).
    predicted_over_measured: tuple[float, float]
    runs: int
    source: tuple[str, ...]
    #: The runs' models, precision, layout, GPUs and engines (the setups matched may be wider).
    measured_on: str = ""
    #: The model must have routed experts.
    routed_experts: bool = False
    #: Catalog ids of the runs' models, and their weights' precisions: a service of another is extrapolated to.
    measured_models: tuple[str, ...] = ()
    measured_precisions: tuple[str, ...] = ()
    #: The serving formats the gap is of (empty: any): such a gap is matched before one of any format.
    precisions: tuple[str, ...] = ()
    #: The services' prompt tokens per output token the gap is of: at least the first (None: any), below the second.
    input_per_output: tuple[float | None, float | None] = (None, None)
    #: The sequences a replica runs at once the gap is of: at least the first (None: any), below the second (review25
    #: C: MI300X runs at batch 1-32 measured the model's rate, those at 128 and more 1.22-1.60x below it).
    batch: tuple[int | None, int | None] = (None, None)
    #: The engines the runs measured, where the gap takes services of more (``engines``): those take it by extrapolation.
    measured_engines: tuple[str, ...] = ()
    #: Serving formats the gap does not take: their own runs of the setup measured the model's rate or more (gpt-oss's
    #: MXFP4 on MI300X since the model dequantizes its experts in the GEMMs' main loop, CALIBRATION.md w4a16 entry).
    except_precisions: tuple[str, ...] = ()
    #: The gap takes only replicas whose TP group (2 or more GPUs) all-reduces over PCIe, no fast link joining it
    #: (review29 item 3: TensorRT-LLM's L40S runs at TP4 and TP8 measured 1.28-1.79x below the model, TP1 ones near it).
    tp_over_pcie: bool = False
    #: Why the plan counts on the model's rate though every run measured less (empty: it counts on the rate over the
    #: lowest ratio): the runs' host is not named and other hosts' runs of the setup fit the model (review29 item 3).
    model_rate_because: str = ""
    #: The gap takes only replicas whose attention is data-parallel (an expert-parallel stage wider than its TP group,
    #: each TP group its own sequences: TensorRT-LLM's DEP layouts). acc106: TensorRT-LLM's DEP8 runs of
    #: Qwen3-235B-A22B on H100 measured 1.33-1.45x below the model, and no record could match the layout.
    attention_dp: bool = False

    @classmethod
    def from_record(cls, rec: Mapping[str, Any]) -> ThroughputGap:
        """Build from a ``throughput_gaps.json`` record."""
        low, high = (float(x) for x in rec["predicted_over_measured"])
        if not 0 < low <= high or high <= 1:
            raise ValueError("predicted_over_measured must be an increasing pair of positive ratios, the highest above 1")
        input_per_output = _half_open(rec, "input_per_output", float)
        batch = _half_open(rec, "batch", int)
        engines = tuple(str(e) for e in rec["engines"])
        measured_engines = tuple(str(e) for e in rec.get("measured_engines", ()))
        if not set(measured_engines) <= set(engines):
            raise ValueError("measured_engines must be among engines")
        return cls(
            id=rec["id"],
            description=str(rec["description"]),
            engines=engines,
            gpu_architectures=tuple(str(a) for a in rec["gpu_architectures"]),
            attention=str(rec["attention"]) if rec.get("attention") else None,
            predicted_over_measured=(low, high),
            runs=int(rec["runs"]),
            source=_sources(rec),
            measured_on=str(rec["measured_on"]),
            routed_experts=bool(rec.get("routed_experts", False)),
            measured_models=tuple(str(m) for m in rec.get("measured_models", ())),
            measured_precisions=tuple(str(m) for m in rec.get("measured_precisions", ())),
            precisions=tuple(str(m) for m in rec.get("precisions", ())),
            input_per_output=input_per_output,
            batch=batch,
            measured_engines=measured_engines,
            except_precisions=tuple(str(m) for m in rec.get("except_precisions", ())),
            tp_over_pcie=bool(rec.get("tp_over_pcie", False)),
            model_rate_because=str(rec.get("model_rate_because", "")),
            attention_dp=bool(rec.get("attention_dp", False)),
        )

    @property
    def margin(self) -> float:
        """What a plan divides a replica's modelled rate by: the lowest ratio, or 1 (the least all runs agree on).

        Where some run measured the model's rate or more, the lowest ratio is at or below 1 (newuser34 item 3); a gap
        whose record says why the plan counts on the model's rate (``model_rate_because``) takes 1.
        """
        return 1.0 if self.model_rate_because else max(1.0, self.predicted_over_measured[0])

    def covers_shape(self, input_tokens: float, output_tokens: float) -> bool:
        """Whether a service of ``input_tokens`` a prompt and ``output_tokens`` generated is of the gap's shape."""
        return _within(input_tokens / max(output_tokens, 1), self.input_per_output)

    def covers_batch(self, batch: float) -> bool:
        """Whether a replica running ``batch`` sequences at once is of the gap's batch range."""
        return _within(batch, self.batch)

    def covers_layout(self, attention_dp: int) -> bool:
        """Whether a replica of ``attention_dp`` data-parallel attention groups a stage (1: none) is of the gap's layout."""
        return not self.attention_dp or attention_dp > 1


def _half_open(rec: Mapping[str, Any], name: str, kind: Callable[[Any], Any]) -> tuple[Any, Any]:
    """A record's ``min_<name>`` (at least) and ``max_<name>`` (below) as ``kind``, each None where not given."""
    least, below = rec.get(f"min_{name}"), rec.get(f"max_{name}")
    if least is not None and below is not None and not least < below:
        raise ValueError(f"min_{name} must be below max_{name}")
    return (None if least is None else kind(least), None if below is None else kind(below))


def _within(value: float, bounds: tuple[float | None, float | None]) -> bool:
    """Whether ``value`` lies in the half-open range ``[least, below)`` (an end of None: open)."""
    least, below = bounds
    return (least is None or value >= least) and (below is None or value < below)


class HostMinimum(NamedTuple):
    """A published minimum of host RAM and CPU cores per GPU, for some GPUs in some platform kinds."""

    id: str
    configuration: str
    gpu_ids: tuple[str, ...]
    platform_kinds: tuple[str, ...]
    ram_gib_per_gpu: int | None
    cpu_cores_per_gpu: int | None
    source: tuple[str, ...]

    @classmethod
    def from_record(cls, rec: Mapping[str, Any]) -> HostMinimum:
        """Build from a ``host_minimums.json`` record."""
        ram, cores = rec["ram_gib_per_gpu"], rec["cpu_cores_per_gpu"]
        return cls(
            id=rec["id"],
            configuration=str(rec["configuration"]),
            gpu_ids=tuple(str(g) for g in rec["gpu_ids"]),
            platform_kinds=tuple(str(k) for k in rec["platform_kinds"]),
            ram_gib_per_gpu=int(ram) if ram is not None else None,
            cpu_cores_per_gpu=int(cores) if cores is not None else None,
            source=_sources(rec),
        )
