"""``Plan.to_dict`` (spec.json's data) walks the plan once: it must equal what ``asdict`` then tuples-to-lists made.

The plan's records were frozen dataclasses; they are named tuples now, and ``spec.json`` keeps writing each as an object.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.api import plan_file
from generator.planner import plan as plan_module
from generator.planner.plan import (
    Candidate,
    Capacity,
    CapacityServed,
    DeploymentPart,
    DeploymentPlan,
    Finding,
    HostGpus,
    Nic,
    NodeSpec,
    OutletCircuit,
    OwnedRuns,
    Plan,
    Pool,
    RackCircuitLoad,
    RackPool,
    RackSpec,
    RackSupply,
    SitesSpec,
)
from tests.conftest import REPO

EXAMPLES = sorted(p for p in (REPO / "examples").glob("*.yaml"))


#: The plan's records: objects in spec.json, as ``asdict`` made them when they were dataclasses.
RECORDS = (
    Candidate, DeploymentPart, DeploymentPlan, Finding, Nic, NodeSpec, Plan, Pool, RackCircuitLoad, RackPool, RackSpec,
    RackSupply, Capacity, CapacityServed, OwnedRuns, OutletCircuit, HostGpus, SitesSpec,
)  # fmt: skip
#: Fields left out where None: a workload without ``hardware.rack_circuits`` keeps the spec.json it had before them.
LEFT_OUT = {
    (RackSpec, "circuit_load"), (Plan, "rack_supply"), (Pool, "rented"), (Candidate, "rented"), (Pool, "shares_per_gpu"),
    (Candidate, "shares_per_gpu"), (Pool, "gpu_sharing"), (Pool, "min_nodes"), (DeploymentPart, "mem_fraction_static"),
    (Pool, "build_assumed"), (Plan, "capacity"), (Candidate, "over_limit"), (Pool, "capacity_type"),
    (Pool, "busy_hours_per_month"), (Candidate, "busy_hours_per_month"), (Candidate, "gpus_rented"),
    (DeploymentPart, "expert_parallel"),  # fix75: a split part's EP, left out where None (plan._LEFT_OUT)
    (Candidate, "owned_runs"),  # fix89: a layout's runs' energy on owned servers
    (Pool, "root_disk_size"),  # fix97: a cloud node's root disk, as the render asks it
    (Candidate, "no_better"),  # fix122: a runner-up no better than the choice, left out where None
    (Plan, "wall_circuit"),  # fix168: hardware.wall_circuit, left out where the workload gives none
    (Pool, "host_gpus"),  # fix167: services sharing owned hosts, each replica's GPUs of a host
    (Plan, "sites"),  # newuser113: the sites: block, left out for one fleet behind one router
    (Plan, "data_residency"),  # fix200: kubernetes.data_residency, left out where the workload sets none
}  # fmt: skip
#: Fields spec.json never writes (plan._NOT_WRITTEN): a service's places in the batch, for its node-down figures (fix86);
#: a batch job's replicas with its busiest node down (fix143); the pools a finding qualifies, for the headline (fix133);
#: whether owned servers' jobs gave their runs a month, for the charge's text (newuser84).
NOT_WRITTEN = {
    (DeploymentPlan, "slot_queue"),
    (DeploymentPlan, "node_down"),
    (Finding, "pools"),
    (OwnedRuns, "runs_given"),
    (OwnedRuns, "cadences"),  # fix150: an owned pool's jobs' runs, said in its cost line
    (SitesSpec, "plans"),  # fix203: each site profile's own plan, for its rendered files
}


def _reference(value: Any) -> Any:
    """The earlier form: records as objects, then dict keys as text, tuples as lists, floats to 6 places."""
    if isinstance(value, RECORDS):
        return {
            name: _reference(v)
            for name, v in value._asdict().items()
            if (type(value), name) not in NOT_WRITTEN and (v is not None or (type(value), name) not in LEFT_OUT)
        }
    if isinstance(value, dict):
        return {str(k): _reference(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_reference(v) for v in value]
    if isinstance(value, float):
        return round(value, 6)
    return value


@pytest.mark.parametrize("path", [pytest.param(p, id=p.stem) for p in EXAMPLES])
def test_plan_to_dict_equals_asdict_then_plain(path: Path) -> None:
    _, plan = plan_file(str(path))
    expected = _reference(plan)
    got = plan.to_dict()
    assert got == expected
    assert list(got) == list(expected)  # same key order, so the same spec.json bytes before sorting too


def test_every_record_of_the_plan_module_is_written_as_an_object() -> None:
    defined = {
        v
        for v in vars(plan_module).values()
        if isinstance(v, type) and issubclass(v, tuple) and v.__module__ == plan_module.__name__
    }
    assert defined == set(RECORDS) == set(plan_module._RECORDS)  # a new record left out would be written as a bare list
