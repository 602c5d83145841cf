"""What a fleet's assembly forms again and again, formed once per plan: details, nodes, racks, GeForce findings.

perf13: ``objective: capacity`` built 692 whole fleets in one plan, and each fleet formed every service's details and
reasons and every pool's node afresh (1,384 calls of :func:`~generator.planner.inference_details._serving_details`,
125 distinct; 1,314 of :func:`~generator.planner.nodes.assemble_node`): the passes choose the same options and pools
again; and a search under ``hardware.max_racks`` packs the same choices into racks pass after pass. All three are
functions of their inputs and the catalog's tables alone. The records among the inputs (the workload, deployment,
options, platform, GPU and constants) are keyed by identity and held by the entry (their ids cannot be reused while
it lives), the rest by value; and the caches are emptied as each plan starts (:func:`forget`), so a catalog table
replaced between plans is read afresh.

The plan mutates the details, reasons and findings lists it is given (costs, shares, reasons appended), so each caller
gets its own: the details copied with every dict and list in them (a LoRA or router detail is a dict of its own), the
reasons a fresh list, the node's findings appended to the caller's list as forming it appended them. The split parts,
the node and the findings are named tuples.
"""

from __future__ import annotations

from generator.planner import candidates
from generator.planner.geforce_findings import _geforce_left_out_findings
from generator.planner.inference_details import _serving_details
from generator.planner.nodes import assemble_node
from generator.planner.pool_groups import racks_needed as _racks_needed
from generator.planner.step_cache import kept

TYPE_CHECKING = False  # typing is not imported at run time (the estimate's cold start)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from generator.catalog.records import GpuSpec, PlatformSpec
    from generator.planner.nodes import NodeNeeds
    from generator.planner.option import Option
    from generator.planner.plan import DeploymentPart, Finding, NodeSpec
    from generator.sizing.constants import Constants
    from generator.workload import LoadedWorkload
    from generator.workload.models import InferenceDeployment, Workload

#: Entries a cache holds before it starts over (within one plan: a capacity search forms about 130 details).
MAX_ENTRIES = 2_000
#: The same for the racks of choices (an entry is its key and the options it holds; ``examples/colo-mi300x-rocm.yaml``
#: asks 5,800 times, 3,458 of them distinct).
MAX_RACKS = 10_000

_DETAILS: dict[object, tuple[tuple[object, ...], tuple[dict[str, Any], list[str], tuple[DeploymentPart, ...]]]] = {}
_NODES: dict[object, tuple[tuple[object, ...], tuple[NodeSpec, tuple[Finding, ...]]]] = {}
_RACKS: dict[object, tuple[tuple[object, ...], int]] = {}
_GEFORCE: dict[object, tuple[tuple[object, ...], list[Finding]]] = {}


def forget() -> None:
    """Empty the caches: a plan starts (the catalog's tables may have been replaced since the last)."""
    _DETAILS.clear()
    _NODES.clear()
    _RACKS.clear()
    _GEFORCE.clear()
    candidates._READ.clear()


def serving_details(
    loaded: LoadedWorkload, dep: InferenceDeployment, opt: Option, pools: list[str], consts: Constants
) -> tuple[dict[str, Any], list[str], tuple[DeploymentPart, ...]]:
    """:func:`~generator.planner.inference_details._serving_details`, formed once per input, a copy to each caller."""
    key = (id(loaded), id(dep), id(opt), tuple(pools), id(consts))
    details, reasons, parts = kept(
        _DETAILS,
        key,
        (loaded, dep, opt, consts),
        lambda: _serving_details(loaded, dep, opt, pools, consts),
        MAX_ENTRIES,
    )
    return _copied(details), list(reasons), parts


def node(
    platform: PlatformSpec,
    gpu: GpuSpec,
    gpus: int,
    needs: NodeNeeds,
    consts: Constants,
    findings: list[Finding],
    owned: bool,
) -> NodeSpec:
    """:func:`~generator.planner.nodes.assemble_node`, formed once per input; its findings appended to ``findings``."""

    def form() -> tuple[NodeSpec, tuple[Finding, ...]]:
        said: list[Finding] = []
        return assemble_node(platform, gpu, gpus, needs, consts, said, owned), tuple(said)

    key = (id(platform), id(gpu), gpus, needs, id(consts), owned)
    built, said = kept(_NODES, key, (platform, gpu, consts), form, MAX_ENTRIES)
    findings += said
    return built


def racks_needed(wl: Workload, chosen: Sequence[tuple[int, Option]]) -> int:
    """:func:`~generator.planner.pool_groups.racks_needed`, formed once per workload and options chosen (in order).

    A search under ``hardware.max_racks`` asks it of each layout beside the choices before it, pass after pass, of the
    same options (perf13: 5,800 calls in ``examples/colo-mi300x-rocm.yaml``).
    """
    key = (id(wl), *((index, id(opt)) for index, opt in chosen))
    return kept(_RACKS, key, (wl, *(opt for _, opt in chosen)), lambda: _racks_needed(wl, chosen), MAX_RACKS)


def geforce_left_out_findings(wl: Workload, consts: Constants) -> list[Finding]:
    """:func:`~generator.planner.geforce_findings._geforce_left_out_findings` once per workload (a fresh list each call).

    Of the workload alone, not the fleet; every fleet assembled walked the catalog's platforms for it (perf13).
    """
    said = kept(_GEFORCE, (id(wl), id(consts)), (wl, consts), lambda: _geforce_left_out_findings(wl, consts))
    return list(said)


def _copied(value: Any) -> Any:
    """``value`` with every dict and list in it copied (the rest, numbers, strings and tuples, cannot change)."""
    if type(value) is dict:
        return {k: _copied(v) for k, v in value.items()}
    if type(value) is list:
        return [_copied(v) for v in value]
    return value
