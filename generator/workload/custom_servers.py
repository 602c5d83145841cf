"""Checks of owned custom servers (``hardware.inventory[].custom``): catalog ids, names and consistency.

Every problem is located at the field that causes it (file:line:col).
"""

from __future__ import annotations

from generator import catalog
from generator.catalog.records import GpuSpec
from generator.errors import InputError
from generator.workload.loader import Document
from generator.workload.models import CustomServer, Workload
from generator.workload.nic_pairs import FabricRoom, Path, nic_pair_errors

#: Baseboard kinds a custom server may declare: the GPUs per server, form factor and GPU link each one holds
#: (an HGX board carries SXM GPUs on NVLink; an OAM baseboard carries OCP Accelerator Modules), as the planner's
#: ``server_kind`` infers them when no kind is given.
BOARD_KINDS: dict[str, tuple[int, str, str | None]] = {
    "hgx-4gpu": (4, "sxm", "nvlink"),
    "hgx-8gpu": (8, "sxm", "nvlink"),
    "oam-8gpu": (8, "oam", None),
}


def board_holds(kind: str, gpus_per_server: int, gpu: GpuSpec) -> bool:
    """Whether the baseboard ``kind`` holds ``gpus_per_server`` of ``gpu`` (count, form factor and link)."""
    count, form, link = BOARD_KINDS[kind]
    return gpus_per_server == count and gpu.form_factor == form and (link is None or gpu.interconnect_kind == link)


def inferred_board(gpus_per_server: int, gpu: GpuSpec) -> str | None:
    """The baseboard kind these GPUs sit on when a custom server names none, or None (a PCIe server)."""
    return next((kind for kind in BOARD_KINDS if board_holds(kind, gpus_per_server, gpu)), None)


def _kind_error(spec: CustomServer) -> str | None:
    """Why the declared baseboard kind contradicts the server's GPUs, or None where it matches (or none is declared)."""
    gpu = catalog.gpus().get(spec.gpu)
    if spec.kind not in BOARD_KINDS or gpu is None or board_holds(spec.kind, spec.gpus_per_server, gpu):
        return None
    count, form, link = BOARD_KINDS[spec.kind]
    holds = f"{count} {form.upper()} GPUs" + (" on NVLink" if link == "nvlink" else "")
    return (
        f"kind {spec.kind} holds exactly {holds}, but the server has {spec.gpus_per_server} x {spec.gpu} "
        f"({gpu.form_factor}, {gpu.interconnect_kind} link); give the kind that matches (pcie-server for PCIe cards) "
        "or leave it out"
    )


#: Form factors that are modules on a baseboard, not cards in a slot: the board kinds that hold each (``BOARD_KINDS``).
MODULE_BOARDS = {form: [k for k, (_, f, _) in BOARD_KINDS.items() if f == form] for form in ("sxm", "oam")}


def _boards_for(form_factor: str, gpus_per_server: int) -> list[str]:
    """The board kinds that hold ``gpus_per_server`` modules of ``form_factor``; every board of the form where none does."""
    boards = MODULE_BOARDS[form_factor]
    return [k for k in boards if BOARD_KINDS[k][0] == gpus_per_server] or boards


def _slot_kind_error(spec: CustomServer) -> str | None:
    """Why a ``pcie-server`` or ``workstation`` cannot hold the server's GPUs (SXM / OAM modules), else None (fuzz20 item 5).

    An SXM or OAM module has no PCIe edge connector: it sits on an HGX or OAM baseboard, whose NVLink the planner would
    count. The one tower built on such a board is NVIDIA's DGX Station A100 (four A100 SXM4 on NVLink), so a workstation
    takes SXM modules only as a full 4-GPU NVLink board.
    """
    gpu = catalog.gpus().get(spec.gpu)
    if spec.kind not in ("pcie-server", "workstation") or gpu is None or gpu.form_factor not in MODULE_BOARDS:
        return None
    if spec.kind == "workstation" and board_holds("hgx-4gpu", spec.gpus_per_server, gpu):
        return None
    boards = " or ".join(_boards_for(gpu.form_factor, spec.gpus_per_server))
    return (
        f"kind {spec.kind} holds PCIe cards, but {spec.gpu} is an {gpu.form_factor.upper()} module (it sits on a "
        f"baseboard, not in a PCIe slot): give kind {boards} for {spec.gpus_per_server} of them, or the PCIe card "
        "of the GPU if the server has PCIe slots"
    )


def _linked_by(gpu: GpuSpec) -> str:
    """How ``gpu``'s GPUs talk to each other without a bridge: PCIe alone, or the module's own scale-up link."""
    if gpu.interconnect_kind == "none":
        return "its cards talk over PCIe"
    return f"an {gpu.form_factor.upper()} module, linked by its baseboard's {gpu.link_name(fast=True)}"


def _bridge_error(spec: CustomServer) -> str | None:
    """Why ``gpu_bridge: true`` cannot apply to the server's GPUs (a card with no NVLink bridge connector), else None.

    fuzz20 item 6: the flag was dropped without a word for an RTX 4090, an L40S or SXM / OAM modules.
    """
    gpu = catalog.gpus().get(spec.gpu)
    if spec.gpu_bridge and spec.gpus_per_server < 2:  # fuzz21 item 9: a bridge joins two cards
        return f"an NVLink bridge joins two cards; with gpus_per_server {spec.gpus_per_server} there is none to join"
    if not spec.gpu_bridge or gpu is None or gpu.bridged:
        return None
    bridged = sorted(g.id for g in catalog.gpus().values() if g.bridged)
    return (
        f"{spec.gpu} takes no NVLink bridge ({_linked_by(gpu)}): leave gpu_bridge out; the cards that take one are "
        f"{', '.join(bridged)}"
    )


def _psu_errors(spec: CustomServer, where: Path) -> list[tuple[Path, str]]:
    """The power supplies given: their count and rating together, fewer redundant than there are."""
    if (spec.psu_count is None) != (spec.psu_rating_w is None):
        given, missing = ("psu_count", "psu_rating_w") if spec.psu_count is not None else ("psu_rating_w", "psu_count")
        return [((*where, given), f"{given} without {missing}: give both, or neither (nothing then checks the feeds)")]
    if spec.psu_redundant is not None and (spec.psu_count is None or spec.psu_redundant >= spec.psu_count):
        count = "no psu_count" if spec.psu_count is None else f"psu_count {spec.psu_count}"
        return [((*where, "psu_redundant"), f"{spec.psu_redundant} redundant with {count}: at least one must run the server")]
    return []


def _part_errors(spec: CustomServer, where: Path) -> list[tuple[Path, str]]:
    """(field path, message) for every part id the catalog lacks and every count without its part.

    The NICs follow the rule an owned catalog platform's group's do (:func:`~generator.workload.nic_pairs.nic_pair_errors`).
    """
    out: list[tuple[Path, str]] = []
    if spec.gpu not in catalog.gpus():
        out.append(((*where, "gpu"), catalog.unknown_id_message("GPU", spec.gpu, catalog.gpus())))
    if spec.cpu is not None and spec.cpu not in catalog.cpus():
        out.append(((*where, "cpu"), catalog.unknown_id_message("CPU", spec.cpu, catalog.cpus())))
    if spec.cpu is not None and spec.cpu_cores is not None:
        out.append(((*where, "cpu_cores"), "give either 'cpu' (a catalog CPU) or 'cpu_cores', not both"))
    room = FabricRoom(spec.platform_id, 1 if spec.kind == "workstation" else spec.gpus_per_server, spec.kind == "workstation")
    out += nic_pair_errors(where, spec, room)
    gpu = catalog.gpus().get(spec.gpu)
    gpus_w = gpu.tdp_w * spec.gpus_per_server if gpu is not None else 0.0
    if gpu is not None and spec.max_power_w is not None and spec.max_power_w < gpus_w:
        out.append(
            (
                (*where, "max_power_w"),
                f"{spec.max_power_w:,} W is below what the GPUs alone draw at full load ({spec.gpus_per_server} x {spec.gpu} "
                f"at {gpu.tdp_w:,.0f} W TDP = {gpus_w:,.0f} W); give the server's wall power at full load (the plan "
                "sizes the GPUs at full power and does not model power caps)",
            )
        )
    out += _psu_errors(spec, where)
    if (why := _kind_error(spec) or _slot_kind_error(spec)) is not None:
        out.append(((*where, "kind"), why))
    if (why := _bridge_error(spec)) is not None:
        out.append(((*where, "gpu_bridge"), why))
    cpu = catalog.cpus().get(spec.cpu or "")
    if cpu is not None and cpu.max_sockets is not None and spec.cpu_sockets > cpu.max_sockets:
        # as hardware.fixed's warning (calculator.machine.sockets_beyond_cpu), refused here: the rack plan would count
        # the cores and power of sockets the server cannot have (fuzz21 item 9)
        out.append(
            (
                (*where, "cpu_sockets"),
                f"{spec.cpu_sockets} sockets: the {cpu.name} goes in systems of at most {cpu.max_sockets} "
                f"socket{'s' if cpu.max_sockets > 1 else ''} (its vendor's spec page)",
            )
        )
    if spec.nvme_drives and not spec.nvme_tb:
        out.append(((*where, "nvme_tb"), f"{spec.nvme_drives} NVMe drive(s) counted but no capacity (nvme_tb)"))
    if spec.platform_id in catalog.platforms():
        name_at = (*where, "name") if spec.name else where
        out.append((name_at, f"'{spec.platform_id}' is a catalog platform id: name the custom server otherwise"))
    return out


def custom_server_errors(doc: Document, wl: Workload) -> list[InputError]:
    """Every problem of the owned custom servers, located in the document."""
    found: list[tuple[Path, str]] = []
    seen: dict[str, CustomServer] = {}
    for j, group in enumerate(wl.hardware.inventory):
        at: Path = ("hardware", "inventory", j)
        if (group.platform is None) == (group.custom is None):
            found.append((at, "give either 'platform' (a catalog platform) or 'custom' (a server described by its parts)"))
        if group.custom is None:
            continue
        spec, where = group.custom, (*at, "custom")
        if wl.hardware.provider != "baremetal":
            found.append((where, "owned custom servers need provider: baremetal"))
        if group.gpu is not None:
            found.append(((*at, "gpu"), "a custom server names its GPU under 'custom.gpu'"))
        found += _part_errors(spec, where)
        before = seen.setdefault(spec.platform_id, spec)
        if before != spec:
            name_at = (*where, "name") if spec.name else where
            found.append((name_at, f"two different custom servers are both called '{spec.platform_id}': give each a 'name'"))
    return [InputError(message, doc.locate(path)) for path, message in found]
