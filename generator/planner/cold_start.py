"""How long a new node takes to have a replica's model: reading its files from local NVMe, or downloading them first.

newuser63 items 5 and 6. The node reads the checkpoint's files, not the weights as served: a 16-bit checkpoint quantized
online to FP8 is read at its 16-bit size. Bare metal reads them from its local NVMe at ``nvme_efficiency`` of the
drives' sequential rate (``model_load_s``). A cloud node has no drive rate in the catalog; what it is given instead is
the download of the files from object storage in its region over the network interface that reaches it, at
``object_storage_download_efficiency`` of that interface's rate (``model_download_s``). Neither counts the node's boot,
the engine image's pull, the engine's start (CUDA graphs, compilation) nor, on a cloud, the read after the download.
"""

from __future__ import annotations

from generator import catalog
from generator.catalog.gke_gpu_nics import primary_nic_gbps
from generator.catalog.records import PlatformSpec
from generator.named_tuple import NamedTuple
from generator.planner.plan import DeploymentPlan, Finding, NodeSpec, Pool
from generator.sizing.constants import Constants
from generator.units import GB, rough_seconds_text
from generator.workload.models import Workload

#: What a new node's time to serve leaves out, said wherever a cold-start figure is printed.
NOT_TIMED = "the node's boot, the engine image's pull and the engine's start (CUDA graphs, compilation) are not timed"


class Download(NamedTuple):
    """The checkpoint's download to a new cloud node: seconds, the interface's Gb/s and the words for it."""

    seconds: float
    gbps: float
    link: str


def model_load_seconds(files_bytes: int, node: NodeSpec, consts: Constants) -> float | None:
    """Cold start: reading the checkpoint's files from local NVMe at ``nvme_efficiency`` of the drives' sequential rate.

    ``files_bytes``: the files the node keeps (the checkpoint's own where the engine quantizes it as it loads it). A
    rack-scale system's hosts each read from their own drives: counted at one host's rate (the safe side). None where
    the node has no drive rate (a cloud instance).
    """
    if not node.nvme_read_gb_per_s:
        return None
    return files_bytes / (node.nvme_read_gb_per_s / node.hosts * consts.nvme_efficiency * GB)


def download_link(platform: PlatformSpec) -> tuple[float, str] | None:
    """Gb/s of the network interface a cloud node downloads from object storage over, and the words for it.

    Not a GPU NIC: an InfiniBand fabric (Azure ND) reaches no object storage, GKE's GPU NICs sit on networks of their
    own, and an AWS instance's primary interface is on one network card. None off the clouds or without a rate.
    """
    total = platform.network_gbps_total
    if platform.provider == "baremetal" or not total:
        return None
    fabric_gbps = 0.0
    if platform.fabric_nic_id and platform.fabric_nic_count:
        nic = catalog.nics()[platform.fabric_nic_id]
        fabric_gbps = nic.port_gbps * nic.ports * platform.fabric_nic_count
    if platform.provider == "azure" and platform.fabric_nic_id:
        front = platform.frontend_ethernet_gbps
        return (front, f"{front:g} Gb/s front-end Ethernet (the InfiniBand NICs reach no storage)") if front else None
    if platform.provider == "gcp" and fabric_gbps:
        primary = primary_nic_gbps(platform, fabric_gbps)
        return (primary, f"{primary:g} Gb/s primary gVNIC") if primary > 0 else None
    # AWS: an instance of several network cards has its primary interface, ENA, on card 0 ("For the primary network
    # interface (network card index 0, device index 0), create an ENA interface",
    # https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-acc-inst-types.html); the catalog lists one EFA NIC a card
    if platform.provider == "aws" and platform.fabric_nic_count > 1 and fabric_gbps >= total:
        card = total / platform.fabric_nic_count
        return card, f"{card:g} Gb/s of network card 0 (the primary ENA interface's card)"
    return total, f"{total:g} Gb/s instance network"


def model_download(files_bytes: int, platform: PlatformSpec, consts: Constants) -> Download | None:
    """The checkpoint's files downloaded from object storage in the region at the interface's rate times the constant."""
    link = download_link(platform)
    if link is None:
        return None
    gbps, words = link
    seconds = files_bytes * 8 / (gbps * 1e9 * consts.object_storage_download_efficiency)
    return Download(seconds, gbps, words)


def cold_start_findings(wl: Workload, pools: list[Pool], deployments: list[DeploymentPlan], consts: Constants) -> list[Finding]:
    """``cold-start-time`` (info): what a new cloud node needs before its replicas serve, and what is not timed.

    One a serving deployment on a cloud pool: the checkpoint's download (``model_download_s``), a floor at
    ``object_storage_download_efficiency`` 1, or, where the catalog gives no rate for the interface, that it is not
    timed either. Bare metal states its NVMe read as ``model_load_s``.
    """
    by_name = {pool.name: pool for pool in pools}
    index = {dep.name: i for i, dep in enumerate(wl.deployments)}
    out = []
    for dep in deployments:
        cloud = [by_name[name] for name in dep.pools if name in by_name and by_name[name].node.provider != "baremetal"]
        if dep.kind != "inference" or not cloud:
            continue
        files = dep.details.get("model_files_bytes")
        seconds, gbps = dep.details.get("model_download_s"), dep.details.get("model_download_gbps")
        size = f"its {files / 1e9:,.1f} GB checkpoint" if isinstance(files, int) else "its checkpoint"
        if isinstance(seconds, int | float) and isinstance(gbps, int | float):
            link = dep.details.get("model_download_link") or f"{gbps:g} Gb/s"
            share = consts.object_storage_download_efficiency
            floor = "at least " if share >= 1 else ""
            rate = (
                "1 is the interface's full rate, which a client nears only with many parallel streams; set it to what "
                "yours reaches"
                if share >= 1
                else f"{share:g} of the interface's rate"
            )
            timed = (
                f"downloading {size} from object storage in the region takes {floor}~{rough_seconds_text(seconds)} over {link} "
                f"(constants.object_storage_download_efficiency: {rate}); reading it into GPU memory after it, "
            )
        else:
            timed = f"the download of {size} is not timed (the catalog gives no rate for the interface that reaches storage); "
        out.append(
            Finding(
                "info",
                "cold-start-time",
                f"deployment {dep.name}: a new node of pool {cloud[0].name} (a scale-out, a replacement, a spot reclaim) "
                f"serves only once it has the model: {timed}{NOT_TIMED}",
                f"deployments[{index[dep.name]}]",
            )
        )
    return out
