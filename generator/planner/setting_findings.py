"""Warnings about settings that read the workload alone: unused for its provider, or ten times off their reference.

Light on imports: ``specgen validate`` says them without loading the planner's search.
"""

from __future__ import annotations

from generator import catalog
from generator.calculator.model_source import COMMIT, hub_source, parse_hub_id
from generator.catalog.gke_gpu_nics import pools_rendered
from generator.catalog.nvfp4_layout import nvfp4_layout_note
from generator.input_files import short
from generator.planner.plan import Finding
from generator.planner.pooling import vllm_hf_overrides
from generator.planner.residency_costs import residency_cost_findings
from generator.planner.tco import rented_at_given_rates
from generator.sizing.quantization import checkpoint_kv_cache_precision, checkpoint_kv_note
from generator.sizing.vision import encoder_compute_text, image_input_text
from generator.words import listed
from generator.workload.capacity_type import SPOT_SUFFIX
from generator.workload.image_tokens import image_tokens_per_request
from generator.workload.loader import format_path
from generator.workload.models import GpuSharing, Hardware, InferenceDeployment, ProvisioningSettings, Workload
from generator.workload.sharing import SHARING_OUTPUT, WHERE, deployment_sharing, sharing_field, sharing_text
from generator.workload.value_checks import given_in

TYPE_CHECKING = False  # typing is not imported at run time (validate's cold start)
if TYPE_CHECKING:
    from generator.workload import LoadedWorkload

#: Kubernetes settings that only GKE node pools read (``location`` is every cloud's region, bare metal's nothing).
GKE_SETTINGS = ("gcp_project", "gpu_networks", "reservations", "zone")


#: Cost constants whose sourced default a value ten times larger or smaller most likely mistypes (cents as dollars,
#: a monthly figure as an hourly one): said, not refused (newuser27 item 14).
COST_CONSTANTS = (
    "energy_usd_per_kwh",
    "pue",
    "colocation_usd_per_kw_month",
    # a server's part powers set its watts, so what it costs to run and which servers a rack and a budget take
    # (fuzz25 M8: nic_power_w 1e6, 40,000x its 25 W, moved the plan to a server whose NIC power the catalog has)
    "dimm_power_w",
    "nvme_power_w",
    "nic_power_w",
    "nvswitch_power_w",
)
#: How far from the reference (the sourced default, the catalog's list price) a cost input is said to be a likely slip.
IMPLAUSIBLE_FACTOR = 10.0
#: How far under the type's on-demand rate a ``<platform>@spot`` rate is said to be a likely slip, on every provider
#: (fix146 item 4): twice the deepest published spot discount, GCP's 91% off (11.1x;
#: https://cloud.google.com/compute/docs/instances/spot), AWS's and Azure's "up to 90%" (10x;
#: https://aws.amazon.com/ec2/spot/, https://azure.microsoft.com/en-us/products/virtual-machines/spot).
SPOT_FLOOR_FACTOR = 20.0


#: The factor from which :func:`times_text` keeps ``.3g``'s exponent (a figure off by far more than a unit slip).
DIGITS_BELOW = 1e6


def times_text(ratio: float) -> str:
    """A factor to three significant figures (``20.7``, ``186``), in whole digits from 1,000 to a million (``1,860``).

    ``.3g`` alone writes 1,860 as ``1.86e+03`` (review84: ``@spot: 0.001`` was "1.86e+03x under" its on-demand rate);
    factors past a million and under 0.0001 keep its exponent (``2.97e-300``), as the figures they compare do.
    """
    return f"{ratio:,.0f}" if 999.5 <= ratio < DIGITS_BELOW else f"{ratio:.3g}"


def _times_off(value: float, reference: float) -> float | None:
    """``value / reference`` where it is :data:`IMPLAUSIBLE_FACTOR` or more either way; None otherwise.

    0 is no unit slip (power included in the rent, no colocation: the README's own advice; fuzz24 item M3).
    """
    ratio = value / reference if reference > 0 and value > 0 else 1.0
    return ratio if ratio >= IMPLAUSIBLE_FACTOR or ratio <= 1 / IMPLAUSIBLE_FACTOR else None


def implausible_setting_findings(wl: Workload) -> list[Finding]:
    """Cost inputs ten times or more off their sourced reference: a constant's default, a type's catalog list price."""
    from generator.planner.price_region import pricing_region
    from generator.sizing.constants import Constants

    out = []
    default = Constants()
    for key in COST_CONSTANTS:
        value = wl.constants.get(key)
        if isinstance(value, int | float) and (ratio := _times_off(float(value), getattr(default, key))) is not None:
            out.append(
                Finding(
                    "warning",
                    "setting-implausible",
                    f"constants.{key} {value:g} is {times_text(ratio)}x the sourced default {getattr(default, key):g}: check the "
                    "value and its unit (specgen schema --constants gives each with its source)",
                    f"constants.{key}",
                )
            )
    out += _custom_drive_findings(wl)
    if not wl.prices:  # the catalog's prices are read only to check the workload's own (validate stays light)
        return out
    region = pricing_region(wl)
    listed = {(p.platform_id, p.region): p.usd for p in catalog.prices().values() if p.unit == "hour"}
    for platform_id, usd in sorted(wl.prices.items()):
        reference = listed.get((platform_id.lower(), region))
        if reference is not None and (ratio := _times_off(usd, reference)) is not None:
            out.append(
                Finding(
                    "warning",
                    "setting-implausible",
                    f"prices.{platform_id} {usd:g} is {times_text(ratio)}x the catalog's on-demand list price ${reference:,.2f} "
                    f"in {region}: prices are USD per node-hour (a monthly figure divides by 730)",
                    f"prices.{platform_id}",
                )
            )
    spot_listed = _spot_list_price_findings(wl, listed, region)
    below = _spot_below_on_demand_findings(wl, listed, region, {f.path for f in spot_listed})  # one warning a key
    return out + _spot_above_on_demand_findings(wl, listed, region) + spot_listed + below


def _spot_list_price_findings(wl: Workload, listed: dict[tuple[str, str | None], float], region: str | None) -> list[Finding]:
    """A ``<platform>@spot`` rate :data:`IMPLAUSIBLE_FACTOR` or more off the catalog's spot rate of the type there.

    hostile82 item 1: ``gcp-g2-standard-8@spot: 1.0e-300`` (or 0.0001, a slip of a unit or of digits) was taken without
    a word and priced the spot pool at $0/month, where the same figure as an on-demand rate is said against the list
    price. The catalog's published spot rates (review80 item 14, GCP's) are the reference, as the on-demand list price
    is the plain key's; GCP's spot discounts run 60-91% off on demand (https://cloud.google.com/compute/docs/instances/spot),
    a 4.4x spread, inside the factor. Types with no catalog spot rate (AWS, Azure) are checked only against on demand.
    A rate above the type's on-demand rate is left to :func:`_spot_above_on_demand_findings` (one warning a key).
    """
    if not any(key.endswith(SPOT_SUFFIX) for key in wl.prices):
        return []
    spot = {(p.platform_id, p.region): p.usd for p in catalog.spot_prices().values() if p.unit == "hour"}
    out = []
    for key, usd in sorted(wl.prices.items()):
        if not key.endswith(SPOT_SUFFIX):
            continue
        platform_id = key.removesuffix(SPOT_SUFFIX)
        on_demand = wl.prices.get(platform_id, listed.get((platform_id.lower(), region)))
        if on_demand is not None and usd > on_demand:
            continue
        reference = spot.get((platform_id.lower(), region))
        if reference is not None and (ratio := _times_off(usd, reference)) is not None:
            out.append(
                Finding(
                    "warning",
                    "setting-implausible",
                    f"prices.{key} {usd:g} is {times_text(ratio)}x the catalog's spot rate ${reference:,.2f} in {region}: spot "
                    "prices are USD per node-hour (a monthly figure divides by 730)",
                    f"prices.{key}",
                )
            )
    return out


def _spot_rates(
    wl: Workload, listed: dict[tuple[str, str | None], float], region: str | None
) -> list[tuple[str, float, float, str]]:
    """Each ``<platform>@spot`` rate given with its type's on-demand rate and where that is from (key, usd, rate, basis).

    The on-demand rate is the workload's ``prices.<platform>``, else the catalog's list price in ``region``; a type with
    neither is left out.
    """
    out = []
    for key, usd in sorted(wl.prices.items()):
        if not key.endswith(SPOT_SUFFIX):  # a spot rate's key (capacity_type.spot_key)
            continue
        platform_id = key.removesuffix(SPOT_SUFFIX)
        given = wl.prices.get(platform_id)
        on_demand = given if given is not None else listed.get((platform_id.lower(), region))
        if on_demand is None:
            continue
        listed_in = "the catalog's on-demand list price" + (f" in {region}" if region else "")
        out.append((key, usd, on_demand, f"prices.{platform_id}" if given is not None else listed_in))
    return out


def _spot_below_on_demand_findings(
    wl: Workload, listed: dict[tuple[str, str | None], float], region: str | None, said: set[str]
) -> list[Finding]:
    """A ``<platform>@spot`` rate more than :data:`SPOT_FLOOR_FACTOR` times under the type's on-demand rate.

    fix146 item 4: on AWS and Azure, whose spot rates the catalog does not hold, ``aws-p5-48xlarge@spot: 0.05`` (a
    figure off by digits, or a per-GPU rate) priced the spot pool at next to nothing without a word. One rule on every
    provider; a key :func:`_spot_list_price_findings` said (``said``, by path) against the catalog's spot rate is not
    said again.
    """
    out = []
    for key, usd, on_demand, basis in _spot_rates(wl, listed, region):
        if f"prices.{key}" in said or not 0 < usd * SPOT_FLOOR_FACTOR < on_demand:
            continue
        out.append(
            Finding(
                "warning",
                "setting-implausible",
                f"prices.{key} {usd:g} is {times_text(on_demand / usd)}x under the type's on-demand rate ${on_demand:,.2f} "
                f"({basis}), past the {SPOT_FLOOR_FACTOR:g}x that no cloud's spot discount reaches (AWS and Azure "
                "publish up to 90% off on demand, 10x; GCP 60-91%, 11.1x): check the value and its unit (USD per "
                "node-hour of the whole node, not a GPU's; a monthly figure divides by 730)",
                f"prices.{key}",
            )
        )
    return out


def _spot_above_on_demand_findings(
    wl: Workload, listed: dict[tuple[str, str | None], float], region: str | None
) -> list[Finding]:
    """A ``<platform>@spot`` rate above the type's on-demand rate (the workload's, else the catalog's list price).

    hostile81 item 5: ``gcp-a3-highgpu-8g@spot: 500`` beside ``gcp-a3-highgpu-8g: 10`` was taken without a word, where
    no cloud bills spot capacity above on demand: EC2's default maximum Spot price is the On-Demand price
    (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/using-spot-instances.html), an AKS spot node pool's
    ``spot_max_price = -1`` (as specgen renders it) "indicates default price to be up-to on-demand"
    (https://learn.microsoft.com/en-us/dotnet/api/microsoft.azure.management.containerservice.models.managedclusteragentpoolprofileproperties.spotmaxprice),
    and GCP's Spot VMs are discounted from on-demand (https://cloud.google.com/compute/docs/instances/spot). A key or a
    figure is likely swapped. A rate far under on demand is :func:`_spot_below_on_demand_findings`'s.
    """
    out = []
    for key, usd, on_demand, basis in _spot_rates(wl, listed, region):
        if not usd > on_demand:
            continue
        out.append(
            Finding(
                "warning",
                "setting-implausible",
                f"prices.{key} {usd:g} is above the type's on-demand rate ${on_demand:,.2f} ({basis}), and no cloud "
                "bills spot capacity above on demand (EC2's default maximum Spot price is the On-Demand price, an Azure "
                "Spot VM at spot_max_price -1 pays at most a standard VM's price, GCP's Spot VMs are discounted from "
                "it): check the value, and that the two rates are not swapped",
                f"prices.{key}",
            )
        )
    return out


def _custom_drive_findings(wl: Workload) -> list[Finding]:
    """An owned custom server's NVMe per drive ten times or more the largest drive the catalog lists (GB as TB).

    newuser27 item 10: ``nvme_tb: 7680`` (7.68 TB typed in GB) planned a 4U box with 7.68 PB. Drives left uncounted
    are one (as the planner takes them).
    """
    customs = [(j, g.custom) for j, g in enumerate(wl.hardware.inventory) if g.custom is not None and g.custom.nvme_tb]
    if not customs:
        return []
    largest = max(catalog.drives().values(), key=lambda d: d.capacity_tb)
    out = []
    for j, spec in customs:
        per_drive = spec.nvme_tb / max(1, spec.nvme_drives)
        if per_drive > largest.capacity_tb and (ratio := _times_off(per_drive, largest.capacity_tb)) is not None:
            out.append(
                Finding(
                    "warning",
                    "setting-implausible",
                    f"{spec.platform_id}: nvme_tb {spec.nvme_tb:,g} is {per_drive:,g} TB a drive over "
                    f"{max(1, spec.nvme_drives)} drive(s), {times_text(ratio)}x the largest NVMe drive the catalog lists "
                    f"({largest.capacity_tb:g} TB, {largest.name}): nvme_tb is decimal TB of the whole server (a "
                    "figure in GB divides by 1,000)",
                    f"hardware.inventory[{j}].custom.nvme_tb",
                )
            )
    return out


def unused_setting_findings(wl: Workload) -> list[Finding]:
    """Settings nothing reads for the workload's provider.

    GKE cluster settings on another provider (a GKE workload copied to AWS), and prices of another provider's
    platforms (newuser18 item 6: a price pasted from another provider's copy).
    """
    provider = wl.hardware.provider
    gke = [
        Finding(
            "warning",
            "setting-unused",
            f"kubernetes.{key} is read only for GKE node pools (provider: gcp); with provider: {provider} it "
            "has no effect: remove it",
            f"kubernetes.{key}",
        )
        for key in GKE_SETTINGS
        if provider != "gcp" and getattr(wl.kubernetes, key) is not None
    ]
    if provider == "gcp" and wl.kubernetes.gpu_networks and not pools_rendered(wl.outputs):  # review32 item 3
        gke.append(
            Finding(
                "warning",
                "setting-unused",
                "kubernetes.gpu_networks attaches GPU NICs to the GKE node pools rendered, and outputs has neither "
                "kubernetes nor terraform: no pool attaches them, and traffic between nodes is timed over the primary "
                "NIC; add an output or remove it",
                "kubernetes.gpu_networks",
            )
        )
    if wl.kubernetes.karpenter_node_role is not None and (provider != "aws" or "kubernetes" not in wl.outputs):
        gke.append(  # newuser81 item 3: only the AWS EC2NodeClasses read it
            Finding(
                "warning",
                "setting-unused",
                "kubernetes.karpenter_node_role is the node role of the Karpenter EC2NodeClasses rendered on AWS "
                + (
                    f"(provider: aws); with provider: {provider} it has no effect: remove it"
                    if provider != "aws"
                    else "under kubernetes/aws/, and outputs has no kubernetes: add it, or remove the setting"
                ),
                "kubernetes.karpenter_node_role",
            )
        )
    if provider == "baremetal" and wl.kubernetes.location is not None:
        gke.append(
            Finding(
                "warning",
                "setting-unused",
                "kubernetes.location names a cloud region (GKE, EKS or AKS); with provider: baremetal it has no "
                "effect: remove it",
                "kubernetes.location",
            )
        )
    if provider != "baremetal" and wl.hardware.max_capex_usd is not None:  # nothing is bought (newuser30 item 8)
        gke.append(
            Finding(
                "warning",
                "setting-unused",
                f"hardware.max_capex_usd holds what servers bought cost up front; {provider} instances are rented, so "
                "nothing is bought and it has no effect: remove it, or hold the month with max_budget_usd_per_month",
                "hardware.max_capex_usd",
            )
        )
    if not wl.hardware.buy:  # the owned servers alone are planned on (newuser47 item 6)
        gke += [
            Finding(
                "warning",
                "setting-unused",
                f"hardware.{key} chooses what the plan buys or rents, and hardware.buy is false: the servers under "
                "hardware.inventory alone are planned on, whatever it lists: remove it, or let the plan buy (drop "
                "hardware.buy: false)",
                f"hardware.{key}",
            )
            for key in ("gpus", "platforms")
            if getattr(wl.hardware, key)
        ]
    if wl.hardware.fixed is not None:  # the machine is had: nothing is priced (fuzz15 item 11)
        unread = dict.fromkeys(wl.prices, ": hardware.fixed plans the machine given, which nothing prices")
    else:
        unread = {
            p: f" prices a platform of provider {other}; with provider: {provider} no plan can use it"
            for p in wl.prices
            if (other := _platform_provider(p.removesuffix(SPOT_SUFFIX))) is not None and other != provider
        }
        # a platform of the provider that hardware.platforms leaves out is as unread (fuzz17 item 13); an ``@spot`` rate
        # is its platform's (review30 item 6)
        listed = {p.lower() for p in wl.hardware.platforms or ()} | {g.platform_id for g in wl.hardware.inventory}
        unread.update(
            {
                p: " prices a platform hardware.platforms leaves out: no plan can use it"
                for p in wl.prices
                if wl.hardware.platforms
                and p not in unread
                and _platform_provider(base := p.removesuffix(SPOT_SUFFIX)) is not None
                and base.lower() not in listed
            }
        )
    prices = [
        Finding("warning", "setting-unused", f"prices.{p}{why}: remove it", f"prices.{p}") for p, why in sorted(unread.items())
    ]
    rented = _rented_rack_findings(wl) + _rented_outlet_findings(wl) + _racked_outlet_findings(wl)
    residency = residency_cost_findings(wl)  # newuser114: a Frankfurt colocation at US energy and rent
    return gke + prices + rented + _provisioning_findings(wl) + unrendered_sharing_findings(wl) + residency


def unrendered_sharing_findings(wl: Workload) -> list[Finding]:
    """A ``gpu-sharing-not-rendered`` warning at each GPU-sharing field, where the outputs leave out Kubernetes.

    Only with the Kubernetes output is GPU sharing configured (the NVIDIA device plugin's sharing config, the MIG
    manager's partitions, a GKE node pool's sharing); without it nothing would advertise the shares, so the plan keeps
    whole GPUs (:func:`~generator.workload.sharing.planned_sharing`). The setting was dropped without a word. One
    finding a field that asks a sharing (the workload's, each deployment's own), naming the services under it.
    """
    if SHARING_OUTPUT in wl.outputs:
        return []
    asked: dict[str, tuple[GpuSharing, list[str]]] = {}
    if wl.kubernetes.gpu_sharing is not None:
        asked[format_path(WHERE)] = (wl.kubernetes.gpu_sharing, [])
    for index, dep in enumerate(wl.deployments):
        sharing = deployment_sharing(wl, dep)
        if sharing is None:
            continue
        # a training job never shares: it keeps whole GPUs with kubernetes.gpu_sharing rendered too
        served = [dep.name] if isinstance(dep, InferenceDeployment) else []
        asked.setdefault(sharing_field(wl, index), (sharing, []))[1].extend(served)
    outputs = ", ".join(wl.outputs)
    out = []
    for field, (sharing, names) in asked.items():
        who = (
            f"{listed(names, 'and')} {'is' if len(names) == 1 else 'are'} planned on whole GPUs, each replica sized "
            "against a whole GPU"
            if names
            else "no service runs under it"
        )
        out.append(
            Finding(
                "warning",
                "gpu-sharing-not-rendered",
                f"GPU sharing ({sharing_text(sharing)}) is planned and configured only with the kubernetes output "
                f"({_sharing_config(wl, sharing)}), and the workload's outputs ({outputs}) leave it out: nothing would "
                f"share the GPUs, so {who}; add kubernetes to outputs to plan and render the sharing, or remove {field}",
                field,
            )
        )
    return out


def _sharing_config(wl: Workload, sharing: GpuSharing) -> str:
    """What would configure ``sharing`` on the workload's provider, as :func:`unrendered_sharing_findings` names it."""
    if wl.hardware.provider == "gcp":
        return f"a GKE node pool's {'gpuPartitionSize' if sharing.strategy == 'mig' else 'gpuSharingConfig'}"
    if sharing.strategy == "mig" and wl.hardware.provider == "azure":
        return "an AKS node pool's gpu_instance, with terraform, else the GPU Operator's MIG manager"
    if sharing.strategy == "mig":
        return "the GPU Operator's MIG manager, from the pool's nvidia.com/mig.config label"
    return f"the NVIDIA device plugin's sharing.{'timeSlicing' if sharing.strategy == 'time-slicing' else 'mps'} config"


def all_rented_at_given_rates(wl: Workload) -> tuple[str, ...]:
    """The platforms ``hardware.platforms`` allows where every one is rented at the workload's ``prices:`` rate; else ().

    On bare metal a platform priced per hour under ``prices:`` that the workload owns none of is rented from a provider
    (:func:`~generator.planner.tco.rented_at_given_rates`): where every platform allowed is so, and nothing is owned or
    given (``hardware.fixed``), no server of the plan stands in a rack of the user's or is provisioned by them.
    """
    hw = wl.hardware
    if hw.provider != "baremetal" or hw.fixed is not None or hw.inventory or not hw.platforms:
        return ()
    platforms = tuple(sorted({p.lower() for p in hw.platforms}))
    return platforms if set(platforms) <= rented_at_given_rates(wl) else ()


def _rented_rack_findings(wl: Workload) -> list[Finding]:
    """Rack limits where every server the plan may use is rented, in a provider's rack (fuzz33 item 7).

    They were accepted without a word while no rack of the plan could hold a server (``0 rack(s)``), as a cloud's are
    refused. A field at its default is not told apart from one left out; ``rack_power_kw`` is said only where
    ``rack_circuits`` does not set it.
    """
    rented = all_rented_at_given_rates(wl)
    if not rented:
        return []
    hw, default = wl.hardware, Hardware._field_defaults["rack_power_kw"]
    given = {
        "rack_power_kw": hw.rack_circuits is None and hw.rack_power_kw != default,
        "rack_circuits": hw.rack_circuits is not None,
        "rack_units_reserved": hw.rack_units_reserved is not None,
        "max_racks": hw.max_racks is not None,
    }
    return [
        Finding(
            "warning",
            "setting-unused",
            f"hardware.{field} describes racks of your own; every platform hardware.platforms allows "
            f"({', '.join(rented)}) is priced per hour under prices: and none is owned (hardware.inventory), so each "
            "server is rented from a provider and stands in its racks, in no rack of this plan: it has no effect; "
            "remove it, or own or buy servers (hardware.inventory, or a platform not priced under prices:)",
            f"hardware.{field}",
        )
        for field, on in given.items()
        if on
    ]


def _rented_outlet_findings(wl: Workload) -> list[Finding]:
    """``hardware.wall_circuit`` where every server the plan may use is rented, in a provider's data centre (fix168).

    On a cloud it is refused (the rack fields too); on bare metal rented at ``prices:`` rates, as the rack fields are,
    it is said to have no effect: no machine of the plan stands on an outlet of the user's.
    """
    rented = all_rented_at_given_rates(wl)
    if not rented or wl.hardware.wall_circuit is None:
        return []
    message = (
        "hardware.wall_circuit describes the wall outlet a machine of your own stands on at home or in an office; every "
        f"platform hardware.platforms allows ({', '.join(rented)}) is priced per hour under prices: and none is owned "
        "(hardware.inventory), so each server is rented from a provider and stands in its data centre: it has no "
        "effect; remove it, or own or buy servers (hardware.inventory, or a platform not priced under prices:)"
    )
    return [Finding("warning", "setting-unused", message, "hardware.wall_circuit")]


#: Provisioning settings each read by some tools only: field -> (the tools that read it, what it is to them).
PROVISIONING_READERS = {
    "maas_pool": (("maas",), "the MAAS resource pool machines are allocated from"),
    "maas_zone": (("maas",), "the MAAS zone machines are allocated in"),
    "distro_series": (("maas",), "the Ubuntu series MAAS deploys"),
    "namespace": (("metal3", "capi"), "the namespace of the Metal3 BareMetalHosts and the Cluster API MachineDeployments"),
    "tinkerbell_namespace": (("tinkerbell",), "the namespace of the Tinkerbell Hardware"),
    "name_servers": (("tinkerbell",), "the DNS servers the Tinkerbell Hardware's DHCP gives the hosts"),
}
#: Host fields Tinkerbell's Hardware read (the boot MAC and the BMC are Metal3's too), the others' only for
#: :data:`ANSIBLE_HOST_FIELDS` where Ansible output is rendered and ``boot_disk`` where Metal3's BareMetalHosts are.
TINKERBELL_ONLY_HOST_FIELDS = ("ip_address", "netmask", "gateway", "boot_disk")
#: Host fields the Ansible inventory also reads: ``ip_address`` is the host's ``ansible_host`` (newuser42 item 5).
ANSIBLE_HOST_FIELDS = ("ip_address",)


def _unused_host_fields(wl: Workload) -> tuple[str, ...]:
    """The host fields no output of ``wl`` reads: Tinkerbell's alone, less the Ansible inventory's and Metal3's where rendered."""
    if "tinkerbell" in wl.provisioning.tools:
        return ()
    read: tuple[str, ...] = ANSIBLE_HOST_FIELDS if "ansible" in wl.outputs else ()
    read += ("boot_disk",) if "metal3" in wl.provisioning.tools else ()  # its BareMetalHost's rootDeviceHints
    return tuple(f for f in TINKERBELL_ONLY_HOST_FIELDS if f not in read)


def _provisioning_findings(wl: Workload) -> list[Finding]:
    """Provisioning settings that no tool of ``provisioning.tools`` reads (fuzz30 L5: they were dropped without a word).

    A setting at its default is not told apart from one left out, and says nothing either way.
    """
    settings, default = wl.provisioning, ProvisioningSettings()
    tools = f"tools [{', '.join(settings.tools)}]" if settings.tools else "no tools"
    out = [
        Finding(
            "warning",
            "setting-unused",
            f"provisioning.{field} is {what}, read only with provisioning.tools {' or '.join(readers)}; with {tools} "
            "it has no effect: remove it, or add the tool",
            f"provisioning.{field}",
        )
        for field, (readers, what) in PROVISIONING_READERS.items()
        if getattr(settings, field) != getattr(default, field) and not set(readers) & set(settings.tools)
    ]
    out += _maas_address_findings(wl)
    unused = _unused_host_fields(wl)
    hosts = [
        (f"hardware.inventory[{j}].hosts[{k}]", host.name, given)
        for j, group in enumerate(wl.hardware.inventory)
        for k, host in enumerate(group.hosts)
        if (given := [f for f in unused if getattr(host, f) is not None])
    ]
    if hosts:
        fields = [f for f in unused if any(f in given for _, _, given in hosts)]
        names = [name for _, name, _ in hosts]
        shown = ", ".join(names[:8]) + (f" and {len(names) - 8:,} more" if len(names) > 8 else "")
        # an ip_address said unused because Ansible output is not rendered either: name its other reader
        also = (
            " (and ip_address as the Ansible inventory's ansible_host, with outputs: ansible)" if "ip_address" in fields else ""
        )
        also += " (and boot_disk as a Metal3 BareMetalHost's root device hint, with metal3)" if "boot_disk" in fields else ""
        out.append(
            Finding(
                "warning",
                "setting-unused",
                f"{listed(fields)} of owned hosts ({shown}) are read only for Tinkerbell's Hardware "
                f"(provisioning.tools: tinkerbell){also}, which this workload does not render: they have no effect; "
                "remove them, or add tinkerbell",
                hosts[0][0],
            )
        )
    return out


def _maas_address_findings(wl: Workload) -> list[Finding]:
    """Owned hosts whose ``ip_address`` is Ansible's ``ansible_host`` while MAAS assigns the deployed address itself.

    newuser57 item 7: MAAS deploys a machine with an address of its own choosing (its interfaces' ``AUTO`` link mode)
    unless the machine's interface is given a static one in MAAS; ``maas_instance`` can set one (``network_interfaces``)
    only by the interface's name on each machine, which a workload does not give, so nothing rendered sets it.
    """
    if "maas" not in wl.provisioning.tools or "ansible" not in wl.outputs:
        return []
    given = [
        (f"hardware.inventory[{j}].hosts[{k}].ip_address", host.name, host.ip_address)
        for j, group in enumerate(wl.hardware.inventory)
        for k, host in enumerate(group.hosts)
        if host.ip_address is not None
    ]
    if not given:
        return []
    shown = ", ".join(f"{name} {address}" for _, name, address in given[:3]) + (
        f" and {len(given) - 3} more" if len(given) > 3 else ""
    )
    return [
        Finding(
            "warning",
            "maas-address-unset",
            f"the Ansible inventory reaches owned hosts at the ip_address given ({shown}), but MAAS deploys a machine "
            "with an address it picks unless its interface has a static one in MAAS, and nothing rendered sets one "
            "(maas_instance's network_interfaces needs each machine's interface name): give each machine's boot "
            "interface that address in MAAS (link mode static) before deploying, or correct hosts.yml after",
            given[0][0],
        )
    ]


def _pinned(model: str) -> bool:
    """Whether a Hub reference names a commit: a branch or tag moves as a repository's HEAD does (review24 L4)."""
    revision = (parse_hub_id(model) or ("", None))[1]
    return revision is not None and COMMIT.fullmatch(revision) is not None


def _causal_score_findings(loaded: LoadedWorkload, index: int) -> list[Finding]:
    """``score-head-unknown``: a causal LM served for ``task: score`` without the overrides that give it its scores.

    newuser62 item 8: ``--convert classify`` was rendered without a word for any ``*ForCausalLM`` checkpoint whose
    path is not a Qwen3-Reranker's, though vLLM then adds an untrained classification head (the README says so).
    """
    dep = loaded.workload.deployments[index]
    if not isinstance(dep, InferenceDeployment) or dep.inference.task != "score":
        return []
    causal = next((a for a in loaded.models[dep.name].architecture.architectures if a.endswith("ForCausalLM")), None)
    if causal is None or vllm_hf_overrides(dep.model, "score") is not None:
        return []
    message = (
        f"model {short(dep.model)} is a causal LM ({causal}) served for task: score: its checkpoint has an LM head, not "
        "a classifier, and the engine's classify conversion (vLLM --convert classify) adds an untrained head unless "
        "--hf-overrides builds one from token logits, as a reranker scoring by its yes / no logits needs "
        "(Qwen3-Reranker, bge-reranker-v2-gemma, mxbai-rerank-v2: see its model card), or a *ForSequenceClassification "
        "conversion of it (a -seq-cls checkpoint) is served instead; specgen renders the overrides only for a path "
        "naming a Qwen3-Reranker"
    )
    return [Finding("warning", "score-head-unknown", message, f"deployments[{index}].model")]


def _checkpoint_kv_findings(loaded: LoadedWorkload, index: int) -> list[Finding]:
    """``kv-cache-fp8-from-checkpoint``: the KV cache the loader set to the FP8 the checkpoint states (fix198 item 2).

    fix196 sized and rendered it (``--kv-cache-dtype fp8``) with no word in the plan: the cache holds half the bytes a
    token of a 16-bit one, so twice the tokens, which the user did not ask for and may not want (FP8 KV's accuracy).
    """
    dep = loaded.workload.deployments[index]
    if not isinstance(dep, InferenceDeployment) or dep.inference.kv_cache_precision != "fp8":
        return []
    spec = dep.inference
    quant = loaded.models[dep.name].architecture.quantization
    if given_in(loaded.document, ("deployments", index, "inference", "kv_cache_precision")):
        return []
    if checkpoint_kv_cache_precision(quant, spec.precision, spec.engine) != "fp8":
        return []
    message = (
        f"deployment {dep.name}: model {short(dep.model)}: {checkpoint_kv_note(spec.engine)}; so its KV cache is sized "
        "and rendered in fp8 (--kv-cache-dtype fp8), 1 byte an element: half the KV bytes a token of a bf16 cache, "
        "about twice the tokens in the same memory; set inference.kv_cache_precision: bf16 for a 16-bit cache"
    )
    return [Finding("info", "kv-cache-fp8-from-checkpoint", message, f"deployments[{index}].model")]


def model_findings(loaded: LoadedWorkload) -> list[Finding]:
    """Deployments whose ``model`` sizes well but is not what an engine on the nodes can start from as rendered.

    ``model-config-only``: a config.json file sizes the model, but vLLM, SGLang and llama.cpp take a Hub id, a directory
    with the weights, or a GGUF file (newuser28 item 12). ``model-local-path``: a directory of the repository is
    rendered as the workload gives it, relative to the workload file, a path the nodes do not have (newuser33 item 15).
    ``model-unpinned``: a model read from the Hub at no revision is sized, and its commit recorded, as the Hub or the
    local Hub cache gives it at each run, so two runners render other bytes for one commit (newuser33 item 5).
    ``model-source-note``: what reading a Hub or local model noted (its files' bytes against its config's, weights
    sized from the config where the headers could not be read: a warning), which only ``estimate`` printed (newuser58
    item 4: a plan sized a checkpoint's weights 43% under its config without a word). ``publisher-checkpoint``: ``fp8``
    asked of a model whose publisher's FP8 checkpoint keeps layers in BF16 (newuser59 item 6). ``nvfp4-checkpoint-layout`` /
    ``nvfp4-layout-assumed``: which modules ``nvfp4`` keeps in BF16, a known checkpoint's list or the layout assumed (fix196).
    """
    out = []
    for i, dep in enumerate(loaded.workload.deployments):
        where = f"deployments[{i}].model"
        shown = short(dep.model)  # cut with "... (N characters)", never as if whole (newuser75 item 8)
        source = loaded.models[dep.name].source
        asked = dep.inference.precision if isinstance(dep, InferenceDeployment) else None
        if asked is not None and (publisher := catalog.publisher_fp8_note(loaded.models[dep.name].id, asked)):
            out.append(Finding("info", "publisher-checkpoint", publisher, f"deployments[{i}].inference.precision"))
        if asked is not None and (
            layout := nvfp4_layout_note(loaded.models[dep.name].id, loaded.models[dep.name].architecture, asked)
        ):
            out.append(Finding("info", layout[0], layout[1], f"deployments[{i}].inference.precision"))  # fix196
        out += _causal_score_findings(loaded, i)
        out += _checkpoint_kv_findings(loaded, i)
        tower = loaded.models[dep.name].architecture.vision
        if tower is not None and isinstance(dep, InferenceDeployment):  # newuser62 item 1: sized as text alone
            fields = "avg_input_tokens and max_context_tokens"
            how = " (or give images_per_request, and image_tokens where an image's count depends on its size)"
            message = image_input_text(tower, f"model {shown}", fields, how)
            if added := image_tokens_per_request(dep.inference, loaded.models[dep.name]):
                spec = dep.inference
                per_image = spec.image_tokens or tower.image_tokens
                images = f"images_per_request {spec.images_per_request:g} x {per_image:,} tokens an image"
                message = (
                    f"the images of model {shown} take {added:,} tokens a request ({images}), added to avg_input_tokens "
                    f"(sized: {spec.avg_input_tokens:,}): they take prefill and KV cache as text does; "
                    f"{encoder_compute_text(tower)}"
                )
            field = "images_per_request" if dep.inference.images_per_request else "avg_input_tokens"
            out.append(Finding("info", "image-tokens", message, f"deployments[{i}].inference.{field}"))
        if hub_source(source) is not None or source.startswith("local config: "):  # the catalog's are its curation's
            out += [
                Finding(
                    "warning" if "sized from the config" in note else "info", "model-source-note", f"model {shown}: {note}", where
                )
                for note in loaded.models[dep.name].architecture.notes
            ]
        if dep.model.lower().endswith(".json"):
            out.append(
                Finding(
                    "warning",
                    "model-config-only",
                    f"model {shown} is a config.json: it sizes the model, but the engine it is rendered for needs the "
                    "model's Hub id, a directory holding config.json and its weights, or a GGUF file; replace the rendered "
                    "model (group vars specgen_deployments) before serving, or give model: the directory",
                    where,
                )
            )
        elif source.startswith("local config: ") and not dep.model.startswith(("/", "~")):  # an absolute path may be
            # the nodes' too (a shared mount): rendered as given (review24 M3)
            out.append(
                Finding(
                    "warning",
                    "model-local-path",
                    f"model {shown} is a directory of this repository, rendered as the workload gives it (relative to "
                    "the workload file), a path the nodes do not have: put the directory on every node and replace the "
                    "rendered model (group vars specgen_deployments) with its path there, or give model: its Hub id",
                    where,
                )
            )
        elif (read := hub_source(source)) is not None and not _pinned(dep.model):
            repo, commit = read
            out.append(
                Finding(
                    "warning",
                    "model-unpinned",
                    f"model {shown} is read from the Hub at the commit its branch names now, {commit[:12]} this run: "
                    "another runner, or this one later, sizes and renders the commit its Hub cache or the Hub gives it "
                    f"(render --check then drifts with no change); pin it: model: hf:{repo}@{commit}",
                    where,
                )
            )
    return out


def _platform_provider(platform_id: str) -> str | None:
    """The provider of a catalog platform; None for one the catalog lacks (a custom server: the workload's own)."""
    platform = catalog.platforms().get(platform_id)
    return platform.provider if platform is not None else None


def _racked_outlet_findings(wl: Workload) -> list[Finding]:
    """``hardware.wall_circuit`` where no server the plan may use stands on an outlet: every one racked (fix173).

    A wall circuit is read for a workstation alone, owned or bought (:func:`generator.planner.assemble`'s
    ``wall-circuit`` warnings), and for ``hardware.fixed``'s machine; a rack server stands in colocation, on its rack's
    own feeds (``rack_power_kw`` / ``rack_circuits``), and a platform rented at a ``prices:`` rate in a provider's data
    centre. Only where ``hardware.platforms`` names the platforms bought (or nothing is bought) is the set known without
    the search; every platform rented is :func:`_rented_outlet_findings`'s.
    """
    hw = wl.hardware
    if hw.provider != "baremetal" or hw.fixed is not None or hw.wall_circuit is None or all_rented_at_given_rates(wl):
        return []
    if hw.buy and not hw.platforms:
        return []  # every catalog platform of the GPUs allowed, workstations among them
    records = catalog.platforms()
    rented = rented_at_given_rates(wl)
    bought = sorted({p.lower() for p in hw.platforms or ()} if hw.buy else set())
    if any(p not in rented and p in records and records[p].kind == "workstation" for p in bought):
        return []
    owned = sorted({g.platform_id for g in hw.inventory})
    kinds = {
        g.platform_id: g.custom.kind if g.custom is not None else records[g.platform_id].kind
        for g in hw.inventory
        if g.custom is not None or g.platform_id in records
    }
    if any(kinds.get(p) == "workstation" for p in owned):
        return []
    racked = sorted({*(p for p in bought if p not in rented), *owned})
    hired = [p for p in bought if p in rented and p not in owned]
    workstations = sorted(p.id for p in records.values() if p.provider == "baremetal" and p.kind == "workstation")
    where = [
        *([f"{listed(racked)} {'is a rack server' if len(racked) == 1 else 'are rack servers'}, racked in colocation on the "
           "rack's own feeds (hardware.rack_power_kw or rack_circuits)"] if racked else []),
        *([f"{listed(hired)} {'is' if len(hired) == 1 else 'are'} rented from a provider (priced per hour under prices:), "
           "in its data centre"] if hired else []),
    ]  # fmt: skip
    message = (
        "hardware.wall_circuit describes the wall outlet a machine of your own stands on at home or in an office "
        "(a workstation); no server this plan may use stands on one: "
        + "; ".join(where)
        + f": it has no effect; remove it, or allow a workstation (hardware.platforms: {listed(workstations, 'or')}) or "
        "list an owned one (hardware.inventory)"
    )
    if owned:  # newuser112: a rack server of one's own may stand in a back office, on the shop's outlet
        message += (
            "; an owned server that stands on such an outlet (an office, no rack) is given as hardware.inventory[]."
            "custom with kind: workstation, its GPUs, RAM and max_power_w, and its draw is then held to this circuit"
        )
    return [Finding("warning", "setting-unused", message, "hardware.wall_circuit")]
