"""Servers rented from a provider on bare metal: what the outputs render for them, and the ``rented-hosts`` finding.

The planner rents a bare-metal server the catalog prices only by a rental record (``prices.json``, e.g. Lambda's
on-demand GH200, whose ``rented_from`` names the provider), or one the workload prices at its own hourly rate under
``prices:`` (whose provider it does not name: :func:`pool_rent`): the provider's machine in its datacentre, in no
rack of the plan (:attr:`~generator.planner.plan.Pool.rented`, newuser39 item 3). The site's MAAS, Ironic (Metal3) and
Tinkerbell do not know it and cannot PXE-boot it: the provider provisions it and hands over SSH access to it. So:

* ``provisioning/``: nothing for its hosts: no ``maas_instance`` allocation, BareMetalHost, Hardware, nor a Cluster
  API MachineDeployment (which would ask CAPM3 or CAPT for machines they cannot make);
* Ansible: the pool keeps its group and group_vars (the roles reach a rented host over SSH as any other), with
  ``specgen_rented`` (the provider, the billing and the rate's source) in them; the group is a child of ``rented_nodes`` in
  ``inventory.yml``; its hosts are placeholders in ``hosts.yml.example`` that the user names and addresses
  (``ansible_host``) from the provider's console;
* kubeadm: the pool's join file, as every pool's; the route from the provider's network to the control plane is the
  user's to arrange;
* racks (SPEC.md, ``specgen_rack``, Terraform's ``racks``): none, as the planner racks it nowhere;
* Terraform: not in ``gpu_pools`` (what the site provisions: its ``node_count`` is the site's hosts, and a pool rented
  whole is left out), but in ``rented_gpu_pools`` with the provider, the billing and the placeholder host names, so a
  calling module sees them without a ``for_each`` over ``gpu_pools`` allocating them (:mod:`generator.render.terraform`).

``max_nodes`` and the plan's node and host counts include rented servers (the plan uses them all); the provisioning
counts (a MachineDeployment's replicas, the hosts it is short of) are of the site's own hosts alone
(:func:`~generator.render.hosts.site_hosts`). The ``rented-hosts`` finding says all this per pool.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from generator.planner.plan import Finding, Plan, Pool, sorted_findings
from generator.planner.tco import rented_at_given_rates, server_rent
from generator.render.hosts import rented_hosts
from generator.words import listed
from generator.workload.models import Workload

#: The finding on a bare-metal plan's rented servers.
RENTED_HOSTS = "rented-hosts"
#: The Ansible group whose children are the rented pools' groups.
RENTED_GROUP = "rented_nodes"
#: Who provisions servers rented at the workload's own ``prices:`` rate: the provider the user rents from, which the
#: workload does not name.
YOUR_PROVIDER = "your provider"
#: The planner's finding that a single host is its own cluster (``planner.cluster_findings.single_host_findings``): no kubeadm
#: join file is rendered.
SINGLE_HOST_CODE = "kubernetes-single-host"
#: What each provisioning tool would render for a host, by tool.
TOOL_OBJECTS = {
    "maas": "maas_instance allocation",
    "metal3": "BareMetalHost",
    "tinkerbell": "Hardware",
    "capi": "Cluster API MachineDeployment",
}
#: The site's systems that boot a machine, by tool (Cluster API drives one of them).
TOOL_SYSTEMS = {"maas": "MAAS", "metal3": "Ironic (Metal3)", "tinkerbell": "Tinkerbell"}


def rented_pools(plan: Plan) -> list[Pool]:
    """The pools of a bare-metal plan whose servers are rented from a provider."""
    return [pool for pool in plan.pools if pool.rented] if plan.provider == "baremetal" else []


class Rent(NamedTuple):
    """Where a rented pool's rate comes from, and who its servers are rented from as far as the data says."""

    #: The provider the catalog's rental record names (``rented_from``); None at the workload's own rate, which
    #: names none.
    provider: str | None
    #: The catalog rental record's id; None at the workload's own rate.
    price: str | None
    #: The record's source (where its rate is published), or the workload's ``prices:`` entry.
    source: str | None
    #: Who the text says provisions the servers: the provider, else "your provider" (the rate is the user's).
    who: str
    #: What the ``rented-hosts`` finding says of the rate after the provider.
    where: str


def pool_rent(pool: Pool, workload: Workload) -> Rent:
    """Where a rented pool's rate comes from: the workload's ``prices:`` entry, else the catalog's rental record.

    A platform the workload rents at its own ``prices:`` rate (:func:`~generator.planner.tco.rented_at_given_rates`)
    is priced by that entry and no record (:func:`~generator.planner.tco.node_cost`), so no catalog provider is
    named, even where the catalog has a record for the server (Lambda's on-demand A100): the user chose the rate and
    the provider. Else the record :func:`~generator.planner.tco.server_rent` finds: its ``rented_from`` and source.
    """
    node = pool.node
    if node.platform_id in rented_at_given_rates(workload):
        entry = f"prices: {node.platform_id}"
        usd = workload.prices[node.platform_id]
        return Rent(
            None, None, f"workload {entry}", YOUR_PROVIDER, f", at the workload's rate ({entry}: {usd:g} USD per node-hour)"
        )
    rent = server_rent(node.platform_id, node.gpu_id, node.gpus)
    if rent is None:
        return Rent(None, None, None, "the provider", "")
    who = rent.rented_from or f"the provider of catalog price {rent.id}"
    return Rent(rent.rented_from, rent.id, rent.source[0], who, f", catalog price {rent.id}, {rent.source[0]}")


def rented_vars(pool: Pool, workload: Workload) -> dict[str, Any]:
    """``specgen_rented`` of a rented pool's group_vars: who provisions its hosts and how they are billed.

    ``from`` is null where the workload's own rate names no provider; ``source`` then is its ``prices:`` entry.
    """
    rent = pool_rent(pool, workload)
    return {
        "specgen_rented": {
            "from": rent.provider,
            "billed_by_the": pool.rented,
            "price": rent.price,
            "source": rent.source,
        }
    }


def example_header_lines(plan: Plan, workload: Workload) -> list[str]:
    """``hosts.yml.example``'s comment lines on the rented pools' placeholders: where the user gets their addresses."""
    lines: list[str] = []
    for pool in rented_pools(plan):
        names = rented_hosts(pool, workload)
        if not names:
            continue
        provider = pool_rent(pool, workload).who
        lines += [
            f"# {pool.name}: {len(names)} host(s) RENTED by the {pool.rented} from {provider}, not bought (in group "
            f"{RENTED_GROUP}, inventory.yml):",
            f"#   launch them at {provider}, then give each placeholder its instance's address from {provider}'s console",
            "#   as ansible_host (and ansible_user, the login it gives); no MAAS, Metal3 or Tinkerbell object is rendered",
        ]
    return lines


def rented_findings(plan: Plan, workload: Workload) -> list[Finding]:
    """The ``rented-hosts`` finding: each rented pool, its provider, and what the user does for its hosts."""
    pools = rented_pools(plan)
    if not pools:
        return []
    said = []
    for pool in pools:
        rent = pool_rent(pool, workload)
        said.append(
            f"{pool.name}: {pool.hosts} host(s) of {pool.node.gpus} x {pool.node.gpu_name}, rented by the {pool.rented} "
            f"from {rent.who}{rent.where}"
        )
    providers = sorted({pool_rent(pool, workload).who for pool in pools})
    at = listed(providers, "or")
    tools = workload.provisioning.tools
    parts = [
        f"{'; '.join(said)}. They are the provider's servers in its datacentre, in no rack of this plan, which {at} "
        "provisions and hands over by SSH: launch them there"
    ]
    systems = [TOOL_SYSTEMS[t] for t in tools if t in TOOL_SYSTEMS]
    if tools:
        objects = listed([TOOL_OBJECTS[t] for t in tools], "or")
        booted = f"the site's {listed(systems)} cannot PXE-boot them, so " if systems else ""
        parts.append(f"{booted}provisioning/ renders no {objects} for them")
    if "ansible" in workload.outputs:
        parts.append(
            f"copy their placeholders from ansible/hosts.yml.example (their pools are children of group {RENTED_GROUP} in "
            f"ansible/inventory.yml) into your hosts.yml, each "
            f"with ansible_host the instance's address from {at}'s console; their group_vars carry specgen_rented, "
            "and the instance runs the provider's image: check its OS and GPU driver against the group_vars before the "
            "roles change them"
        )
    if "kubernetes" in workload.outputs and not any(f.code == SINGLE_HOST_CODE for f in plan.findings):
        joins = listed([f"kubeadm/join-{pool.name}.yaml" for pool in pools])
        parts.append(
            f"they join the cluster with {joins} from the provider's network: the route to the control plane (the "
            "public internet or a VPN) and its firewall are yours to arrange"
        )
    return [Finding("info", RENTED_HOSTS, "; ".join(parts), "hardware.provider")]


def with_rented_findings(plan: Plan, workload: Workload) -> Plan:
    """The plan with the ``rented-hosts`` finding where a bare-metal plan rents servers from a provider."""
    found = rented_findings(plan, workload)
    return plan._replace(findings=sorted_findings([*plan.findings, *found])) if found else plan
