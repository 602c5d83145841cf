"""Tinkerbell ``Hardware`` (``provisioning/tinkerbell/``): one per inventory host the plan uses that gives what it needs.

Tinkerbell (tinkerbell/tinkerbell v0.25, ``tinkerbell.org/v1alpha1``, its default CRD set) netboots a server its
Hardware lists: its DHCP server, Smee, answers the boot MAC with the address written there, and lets the server PXE
boot and run workflows (``netboot.allowPXE``, ``allowWorkflow``). Cluster API's Tinkerbell provider (CAPT) claims an
unclaimed Hardware that its TinkerbellMachineTemplate's ``hardwareAffinity`` selects, takes the node's address from
its first interface and writes the OS to its first disk, and refuses a Hardware without either
(tinkerbell/cluster-api-provider-tinkerbell ``controller/machine/hardware.go``).

So a host gives its boot MAC, address, netmask and boot disk (:data:`TINKERBELL_HOST_FIELDS`, the gateway where there
is one); a host of the plan without them gets no Hardware and a warning naming what it lacks. Nothing is invented: no
address, name server or architecture. A host with a BMC (address and credentials Secret) names a Rufio ``Machine``
(``bmc.tinkerbell.org``) of its own name in ``spec.bmcRef``; that Machine holds the BMC's connection options, which
only the site knows, and is not rendered (no CRD of it is pinned to check one against): a finding lists them.

The namespace is not rendered as an object either: the Tinkerbell install owns it, and ``kubectl delete -k`` of these
files must not take the Tinkerbell stack with it.
"""

from __future__ import annotations

from typing import Any

from generator.errors import InputError
from generator.planner.plan import Finding, Plan, Pool, sorted_findings
from generator.render.host_labels import host_labels, host_selector, labels_text
from generator.render.hosts import owned_hosts, site_hosts
from generator.render.kube_objects import dns_name, kustomize_directory
from generator.render.provisioned_hosts import no_host_message, provisioned_hosts
from generator.words import listed
from generator.workload.models import TINKERBELL_HOST_FIELDS, InventoryHost, Workload

#: The Rufio type a Hardware's ``spec.bmcRef`` names (tinkerbell/tinkerbell ``api/v1alpha1/bmc/machine.go``).
BMC_GROUP, BMC_KIND = "bmc.tinkerbell.org", "Machine"
#: The facility code CAPT's quick start gives every Hardware ("default is onprem", docs/capt/QUICK-START.md).
FACILITY_CODE = "onprem"
#: The warning on a host of the plan that gives too little for a Hardware.
UNDESCRIBED = "tinkerbell-host-undescribed"


def tinkerbell_hosts(pool: Pool, workload: Workload) -> list[InventoryHost]:
    """The pool's inventory hosts a Hardware is rendered for: those that give every one of TINKERBELL_HOST_FIELDS."""
    return provisioned_hosts("tinkerbell", pool, workload)


def hardware_objects(plan: Plan, workload: Workload) -> list[dict[str, Any]]:
    """A Hardware per fully described inventory host of the plan, pool by pool."""
    namespace = workload.provisioning.tinkerbell_namespace
    servers = workload.provisioning.name_servers
    objects = [_hardware(host, pool, namespace, servers) for pool in plan.pools for host in tinkerbell_hosts(pool, workload)]
    if (message := no_host_message("tinkerbell", plan, workload)) is not None:  # a plan plan_file did not check
        raise InputError(f"provisioning.tools: {message}")
    return objects


def _hardware(host: InventoryHost, pool: Pool, namespace: str, name_servers: tuple[str, ...]) -> dict[str, Any]:
    # given, by tinkerbell_hosts' rule
    assert host.boot_mac_address is not None
    assert host.ip_address is not None
    assert host.netmask is not None
    assert host.boot_disk is not None
    mac = host.boot_mac_address.lower()  # the CRD's pattern takes lower-case hex only
    ip = {"address": host.ip_address, "netmask": host.netmask}
    if host.gateway is not None:
        ip["gateway"] = host.gateway
    spec: dict[str, Any] = {
        "disks": [{"device": host.boot_disk}],
        "interfaces": [
            {
                # the resolvers HookOS and the installed OS pull images and reach the API server by name with
                # (newuser57 item 10: a lease without them)
                "dhcp": {
                    "hostname": host.name,
                    "ip": ip,
                    "mac": mac,
                    **({"name_servers": list(name_servers)} if name_servers else {}),
                },
                "netboot": {"allowPXE": True, "allowWorkflow": True},
            }
        ],
        "metadata": {
            "facility": {"facility_code": FACILITY_CODE},
            "instance": {"hostname": host.name, "id": mac},
        },
    }
    if host.bmc_address and host.bmc_credentials_secret:
        spec["bmcRef"] = {"apiGroup": BMC_GROUP, "kind": BMC_KIND, "name": host.name}
    return {
        "apiVersion": "tinkerbell.org/v1alpha1",
        "kind": "Hardware",
        "metadata": {"name": host.name, "namespace": namespace, "labels": host_labels(pool)},
        "spec": spec,
    }


def render_tinkerbell(plan: Plan, workload: Workload) -> dict[str, str]:
    """``provisioning/tinkerbell/``: the Hardware and a kustomization listing them."""
    return kustomize_directory("provisioning/tinkerbell", hardware_objects(plan, workload))


def undescribed_findings(plan: Plan, workload: Workload) -> list[Finding]:
    """A warning per inventory host of the plan that gives too little for a Hardware, naming what it lacks."""
    where = {
        host.name: f"hardware.inventory[{j}].hosts[{k}]"
        for j, group in enumerate(workload.hardware.inventory)
        for k, host in enumerate(group.hosts)
    }
    return [
        Finding(
            "warning",
            UNDESCRIBED,
            f"{host.name} (pool {dns_name(pool)}) gets no Tinkerbell Hardware: it gives no "
            f"{listed(host.missing(TINKERBELL_HOST_FIELDS), 'or')} (Smee answers DHCP only for a MAC a Hardware lists, "
            "with the address written there, and CAPT writes the OS to its first disk); specgen does not invent them",
            where[host.name],
        )
        for pool in plan.pools
        for host in owned_hosts(pool, workload)
        if host.missing(TINKERBELL_HOST_FIELDS)
    ]


def bmc_finding(plan: Plan, workload: Workload) -> Finding:
    """What the Rufio Machines named by the Hardware's ``bmcRef`` hold, and which Hardware have none."""
    namespace = workload.provisioning.tinkerbell_namespace
    hosts = [host for pool in plan.pools for host in tinkerbell_hosts(pool, workload)]
    with_bmc = [h for h in hosts if h.bmc_address and h.bmc_credentials_secret]
    without = [h.name for h in hosts if not (h.bmc_address and h.bmc_credentials_secret)]
    parts = []
    if with_bmc:
        machines = "; ".join(f"{h.name}: BMC {h.bmc_address}, Secret {h.bmc_credentials_secret}" for h in with_bmc)
        parts.append(
            f"each Hardware of a host with a BMC names a {BMC_GROUP} {BMC_KIND} of the host's name in namespace "
            f"{namespace} (spec.bmcRef), through which CAPT drives the server's power (it powers a deleted Machine's "
            "server off; its bootOptions boot one from the network or an ISO); it is not rendered: create each with "
            "spec.connection.host the BMC's address, its port and providerOptions, and authSecretRef the Secret with "
            f"the BMC's username and password: {machines}"
        )
    if without:
        parts.append(
            f"Hardware without a BMC (bmc_address and bmc_credentials_secret) get no bmcRef, and are booted from the "
            f"network by hand: {', '.join(without)}"
        )
    return Finding("info", "tinkerbell-bmc", "provisioning/tinkerbell: " + ". ".join(parts), "provisioning.tools")


def with_tinkerbell_findings(plan: Plan, workload: Workload) -> Plan:
    """The plan with the hosts that get no Hardware, and the BMC Machines the Hardware name (tinkerbell only)."""
    if "tinkerbell" not in workload.provisioning.tools or not plan.pools:
        return plan
    found = [*undescribed_findings(plan, workload)]
    if any(tinkerbell_hosts(pool, workload) for pool in plan.pools):
        found.append(bmc_finding(plan, workload))
    return plan._replace(findings=sorted_findings([*plan.findings, *found]))


def affinity_text(plan: Plan, workload: Workload) -> str:
    """The ``cluster-api-templates`` finding's words on each pool's TinkerbellMachineTemplate and the Hardware it selects."""
    # the pools with a MachineDeployment: not one rented whole from a provider (a Hardware is the site's server)
    selectors = "; ".join(f"{dns_name(pool)}: {labels_text(host_selector(pool))}" for pool in plan.pools if site_hosts(pool))
    return (
        "Each TinkerbellMachineTemplate names the site's OS image (spec.template.spec.imageLookupBaseRegistry, "
        "imageLookupOSDistro and imageLookupOSVersion, or a templateOverride) and needs "
        "spec.template.spec.hardwareAffinity.required[].labelSelector.matchLabels selecting its pool's Hardware, or CAPT "
        "claims any unclaimed Hardware, another pool's server included (the Hardware under provisioning/tinkerbell, in "
        f"namespace {workload.provisioning.tinkerbell_namespace}, carry these labels): {selectors}."
    )
