"""The other frameworks whose load fits the host RAM a training job is refused for (newuser96, left item 2).

Frameworks load a checkpoint differently (:mod:`generator.sizing.checkpoint_load`): torchtune and a plain FSDP2 loop
build the whole bf16 checkpoint in host memory on one process before sharding it, where the Hugging Face Trainer family
(axolotl, trl, ...) quantizes a QLoRA base shard by shard as it loads, or has each rank read one shard at a time. A
70B QLoRA job under fsdp2 was refused a 128 GiB tower (148 GiB needed) that axolotl fits (52.8 GiB), and the refusal
named only more servers or more RAM. Where a node's RAM rules the job out, each other framework of the catalog the job
may run under (no setting of the job refuses it) is searched on the same servers as the job is (the search's own
options, sized by the same code), and those that fit are named with the host RAM a node of them needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from generator.planner.inventory import free_servers
from generator.planner.nodes import RAM_SHORT, ram_needed_gib
from generator.planner.options import allowed_hardware
from generator.sizing.frameworks import FRAMEWORKS, framework_profile
from generator.words import listed
from generator.workload.models import TrainingDeployment
from generator.workload.value_checks import spec_conflicts

if TYPE_CHECKING:
    from generator.calculator.model_source import ResolvedModel
    from generator.planner.blocked import Blocked
    from generator.sizing.constants import Constants
    from generator.workload.models import InferenceDeployment, Workload


def frameworks_fitting_ram(
    wl: Workload,
    dep: InferenceDeployment | TrainingDeployment,
    model: ResolvedModel,
    consts: Constants,
    blocked: list[Blocked],
) -> str:
    """``"; or another training.framework ..."`` naming the frameworks that fit the RAM ``blocked`` says is short; ''.

    Only for a job that names its framework, on the server kinds a ``ram-short`` reason rules out; the figure is the
    least host RAM (GiB, the OS reserve included) a node of the framework's layouts there needs.
    """
    if not isinstance(dep, TrainingDeployment) or dep.training.framework is None:
        return ""
    kinds = {(b.platform_id, b.gpu_id) for b in blocked if b.code == RAM_SHORT}
    hardware = [hw for hw in allowed_hardware(wl) if (hw.platform.id, hw.gpu.id) in kinds]
    if not hardware:
        return ""
    from generator.planner.training_candidates import training_options  # the search's: loaded with it

    own = framework_profile(dep.training.framework).name
    owned = free_servers(wl)  # as the search sized the job (owned servers of a kind let it try parameter offload)
    by_gib: dict[int, list[str]] = {}
    for name in FRAMEWORKS:
        spec = dep.training._replace(framework=name)
        if name == own or spec_conflicts(spec):
            continue
        options = training_options(wl, dep._replace(training=spec), model, consts, [], owned, hardware=hardware)
        if options:
            by_gib.setdefault(min(ram_needed_gib(o.needs, consts) for o in options), []).append(name)
    if not by_gib:
        return ""
    said = "; ".join(f"{listed(names)} ({gib:,} GiB of RAM a node at the least)" for gib, names in sorted(by_gib.items()))
    return f"; or another training.framework, whose load of the checkpoint and offload fit the same servers' RAM: {said}"
