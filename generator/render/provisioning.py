"""Bare-metal provisioning (``provisioning/``): MAAS allocations, Metal3 or Tinkerbell hosts, Cluster API MachineDeployments.

* MAAS: one ``maas_instance`` allocation per node as a typed Terraform variable and its values, for a root
  module that holds ``resource "maas_instance"`` with ``for_each = var.maas_instances`` (terraform-provider-maas
  v2.4 ``allocate_params`` and ``deploy_params``). Owned hosts the plan puts on a pool (named in the inventory)
  are allocated by hostname and hardware tags (no floor on RAM or cores their real machine could miss); other
  nodes by cores, memory and hardware tags (``gpu-<id>``, ``gpus-<n>``: tags the site gives its machines in MAAS).
* Metal3: a ``BareMetalHost`` for every inventory host the plan uses that gives its BMC address, BMC credentials
  secret and boot MAC; nothing is invented for hosts without them.
* Tinkerbell: a ``Hardware`` for every inventory host the plan uses that gives its boot MAC, address, netmask and boot
  disk (:mod:`generator.render.tinkerbell`).
* Cluster API: a ``MachineDeployment`` per pool, whose infrastructure template (Metal3's, or with Tinkerbell CAPT's)
  and bootstrap template are the site's to write (the ``cluster-api-templates`` finding says what they need).

A host rented from a provider (:mod:`generator.render.rented`) gets none of them: the site's MAAS, Ironic and
Tinkerbell cannot boot it, so it has no allocation, and a MachineDeployment counts the site's own hosts alone
(a pool rented whole has none).
"""

from __future__ import annotations

from typing import Any

from generator.catalog import gpus
from generator.errors import InputError
from generator.planner.placeholder_hosts import placeholder_names
from generator.planner.plan import Finding, Plan, Pool, sorted_findings
from generator.render.env import render_template, to_json
from generator.render.host_labels import host_labels, host_selector, labels_text
from generator.render.hosts import host_node, owned_hosts, rented_hosts, site_hosts
from generator.render.kube_objects import dns_name, kustomize_directory
from generator.render.kubeadm import join_labels
from generator.render.kubernetes import cluster_name
from generator.render.provisioned_hosts import no_host_message, provisioned_hosts
from generator.render.tinkerbell import affinity_text, render_tinkerbell, tinkerbell_hosts
from generator.words import listed
from generator.workload.models import METAL3_HOST_FIELDS, TINKERBELL_HOST_FIELDS, Workload

MIB_PER_GIB = 1024


def maas_min_memory_mib(installed_gib: int | None) -> int | None:
    """``min_memory`` for a build of ``installed_gib`` of DIMMs: all of it, in MiB; None (no floor) where unsourced.

    MAAS's machine ``memory`` (MiB) is the installed memory, not what the OS reports: commissioning's
    ``machine-resources`` is LXD's resources code (src/host-info/pkg/info/info.go,
    https://github.com/canonical/maas/blob/master/src/host-info/pkg/info/info.go), whose memory total counts the online
    blocks of /sys/devices/system/memory x their block size, not /proc/meminfo's MemTotal, "as the previously determined
    value reports the amount of available system memory minus the amount reserved for the kernel"
    (https://github.com/canonical/lxd/blob/main/lxd/resources/memory.go, the fix for MAAS under-reporting:
    https://github.com/canonical/lxd/issues/7362, https://github.com/canonical/lxd/pull/7366); the region stores
    ``int(total / 1024**2)`` (``_parse_memory`` in
    https://github.com/canonical/maas/blob/master/src/metadataserver/builtin_scripts/hooks.py). So a floor at the DIMM
    total matches the machine the build describes; a floor at MemTotal's would admit smaller builds.
    """
    return None if installed_gib is None else installed_gib * MIB_PER_GIB


def maas_instances(plan: Plan, workload: Workload) -> dict[str, Any]:
    """``maas_instances``: node name -> allocate and deploy parameters."""
    settings = workload.provisioning
    instances: dict[str, Any] = {}
    for pool in plan.pools:
        node = host_node(pool.node)  # MAAS allocates Linux hosts: a rack-scale system's compute trays
        owned = set(pool.owned_hosts)  # the plan's allocation of the inventory's names
        rented = set(rented_hosts(pool, workload))  # the provider's servers: not in the site's MAAS
        for name in (*pool.owned_hosts, *placeholder_names(pool, workload)):
            if name in rented:
                continue
            # the machine's hardware, not its pool: allocate_params are ForceNew, and a pool's name follows the
            # deployments it holds, so a pool tag would release and redeploy a running host when co-location
            # changes (newuser16 H2)
            allocate: dict[str, Any] = {"tags": [f"gpu-{node.gpu_id}", f"gpus-{node.gpus}"]}
            if name in owned:
                # an owned host is that machine, whatever its RAM and cores: the plan's figures for it are its
                # catalog configuration, and a floor would hold the real machine to them
                allocate["hostname"] = name
            else:
                allocate["min_cpu_count"] = node.cpu_cores
                allocate["min_memory"] = maas_min_memory_mib(node.ram_gib)
            if settings.maas_pool:
                allocate["pool"] = settings.maas_pool
            if settings.maas_zone:
                allocate["zone"] = settings.maas_zone
            instances[name] = {
                "pool": pool.name,
                "allocate_params": allocate,
                "deploy_params": {"distro_series": settings.distro_series},
            }
    return instances


def described_hosts(pool: Pool, workload: Workload) -> list[str]:
    """The pool's inventory hosts a BareMetalHost is rendered for: those with BMC address, credentials and boot MAC."""
    return [host.name for host in provisioned_hosts("metal3", pool, workload)]


def bare_metal_hosts(plan: Plan, workload: Workload) -> list[dict[str, Any]]:
    """A BareMetalHost per fully described inventory host, in the site's namespace (:func:`namespace_findings`)."""
    namespace = workload.provisioning.namespace
    objects: list[dict[str, Any]] = []
    for pool in plan.pools:
        described = set(described_hosts(pool, workload))
        for host in owned_hosts(pool, workload):
            if host.name not in described:
                continue
            objects.append(
                {
                    "apiVersion": "metal3.io/v1alpha1",
                    "kind": "BareMetalHost",
                    "metadata": {"name": host.name, "namespace": namespace, "labels": host_labels(pool)},
                    "spec": {
                        "online": True,
                        "bootMACAddress": host.boot_mac_address,
                        "bmc": {"address": host.bmc_address, "credentialsName": host.bmc_credentials_secret},
                        "description": _host_description(pool),
                        # the disk the image goes to, where given: Ironic's own pick is the smallest disk of 4 GiB or
                        # more, an M.2 boot drive or a data NVMe alike on a GPU server (newuser57 item 14)
                        **({"rootDeviceHints": {"deviceName": host.boot_disk}} if host.boot_disk is not None else {}),
                    },
                }
            )
    if (message := no_host_message("metal3", plan, workload)) is not None:  # a plan not checked by plan_file
        raise InputError(f"provisioning.tools: {message}")
    return objects


def _host_description(pool: Pool) -> str:
    """What one host of the pool is: the server, or a compute tray of a rack-scale system, and its GPUs."""
    node = pool.node
    gpu = gpus()[node.gpu_id].name
    if node.hosts == 1:
        return f"{node.platform_name}, {node.gpus}x {gpu}"
    return f"compute tray of {node.platform_name}, {node.gpus // node.hosts}x {gpu}"


def infrastructure_template(workload: Workload) -> str:
    """The kind of machine template a MachineDeployment names: CAPT's where Tinkerbell registers the hosts, else CAPM3's."""
    return "TinkerbellMachineTemplate" if "tinkerbell" in workload.provisioning.tools else "Metal3MachineTemplate"


def site_pools(plan: Plan) -> list[Pool]:
    """The pools with hosts the site's provisioning boots: all but those rented whole from a provider."""
    return [pool for pool in plan.pools if site_hosts(pool)]


def machine_deployments(plan: Plan, workload: Workload) -> list[dict[str, Any]]:
    """A Cluster API ``MachineDeployment`` (v1beta2) per pool with site hosts, sized by the plan.

    Its replicas are the pool's hosts less those rented from a provider (:func:`~generator.render.hosts.site_hosts`),
    which no infrastructure provider of the site can make. It references a ``KubeadmConfigTemplate`` and a
    ``Metal3MachineTemplate`` (``TinkerbellMachineTemplate`` with tinkerbell) named after the pool, which hold the
    site's own image and kubeadm settings. They go into the site's namespace, which is not created here
    (:func:`namespace_findings`).
    """
    namespace = workload.provisioning.namespace
    infrastructure = infrastructure_template(workload)
    cluster = cluster_name(workload)
    objects: list[dict[str, Any]] = []
    for pool in site_pools(plan):
        selector = host_selector(pool)  # the Machines' labels: the hosts' selector names the same pool
        objects.append(
            {
                "apiVersion": "cluster.x-k8s.io/v1beta2",
                "kind": "MachineDeployment",
                "metadata": {"name": dns_name(pool), "namespace": namespace, "labels": dict(selector)},
                "spec": {
                    "clusterName": cluster,
                    "replicas": site_hosts(pool),
                    "selector": {"matchLabels": dict(selector)},
                    "template": {
                        "metadata": {"labels": dict(selector)},
                        "spec": {
                            "clusterName": cluster,
                            "bootstrap": {
                                "configRef": {
                                    "apiGroup": "bootstrap.cluster.x-k8s.io",
                                    "kind": "KubeadmConfigTemplate",
                                    "name": dns_name(pool),
                                }
                            },
                            "infrastructureRef": {
                                "apiGroup": "infrastructure.cluster.x-k8s.io",
                                "kind": infrastructure,
                                "name": dns_name(pool),
                            },
                        },
                    },
                },
            }
        )
    return objects


#: The finding that provisioning/cluster-api's namespace is the Tinkerbell install's, which it does not create.
SHARED_NAMESPACE = "cluster-api-namespace-shared"
#: The finding that ``provisioning.namespace`` holds the site's objects, so no kustomization of the tree creates it.
SITE_NAMESPACE = "provisioning-namespace-site"


def namespace_findings(plan: Plan, workload: Workload) -> list[Finding]:
    """Why no directory creates ``provisioning.namespace``, which the MachineDeployments or BareMetalHosts go into.

    newuser57 item 4: the namespace holds the site's objects, which specgen does not render: with ``capi`` the Cluster
    the MachineDeployments join, its control plane and the templates they name (a MachineDeployment lives in its
    Cluster's namespace), with ``metal3`` the BMC credentials Secrets the BareMetalHosts name (Ironic reads them in the
    host's namespace). A Namespace object in a kustomization made ``kubectl delete -k`` (or a GitOps prune) of it
    delete all of them, the Cluster and its every Machine included, and two workloads rendered into one tree both owned
    it. Where it is the Tinkerbell install's own namespace (fuzz30 item 7), that install owns it.
    """
    settings = workload.provisioning
    directories = [
        f"provisioning/{directory}"
        for tool, directory in (("metal3", "metal3"), ("capi", "cluster-api"))
        if tool in settings.tools and tool not in idle_pool_tools(plan, workload)
    ]
    if not directories:
        return []
    namespace = settings.namespace
    if "capi" in settings.tools and "tinkerbell" in settings.tools and namespace == settings.tinkerbell_namespace:
        why = (
            f"provisioning.namespace is provisioning.tinkerbell_namespace ({namespace}), the namespace the Tinkerbell "
            "install runs in and owns: provisioning/cluster-api renders no Namespace object for it, so that kubectl "
            "delete -k provisioning/cluster-api cannot delete the Tinkerbell stack and every Hardware with it; the "
            f"MachineDeployments go into {namespace} as it exists"
        )
        return [Finding("info", SHARED_NAMESPACE, why, "provisioning.namespace")]
    held = []
    if "provisioning/cluster-api" in directories:
        held.append(
            f"the Cluster {cluster_name(workload)} the MachineDeployments join, its control plane, and the "
            f"KubeadmConfigTemplates and {infrastructure_template(workload)}s they name"
        )
    if "metal3" in settings.tools:
        held.append("the BMC credentials Secrets the BareMetalHosts name")
    them = "it" if len(directories) == 1 else "them"
    why = (
        f"provisioning.namespace {namespace} holds the site's own objects, which specgen does not render "
        f"({'; '.join(held)}): {listed(directories)} render{'s' if len(directories) == 1 else ''} no Namespace object "
        f"for it, so that kubectl delete -k (or a GitOps prune) of {them} deletes only the objects listed there, never "
        f"the namespace and with it the site's objects and every Machine, nor another workload's objects in it; create "
        f"{namespace} before applying {them}"
    )
    return [Finding("info", SITE_NAMESPACE, why, "provisioning.namespace")]


#: The warning on a MachineDeployment that asks for more machines than hosts (BareMetalHosts, Hardware) are rendered for.
HOSTS_SHORT = "cluster-api-hosts-short"


def hosts_short(plan: Plan, workload: Workload) -> list[Finding]:
    """A warning per pool whose MachineDeployment asks for more machines than it has hosts rendered (newuser36 item 3).

    CAPM3 gives each Machine an available BareMetalHost its template selects, CAPT an unclaimed Hardware; with fewer,
    the rest stay Provisioning. Only where specgen renders the hosts (``metal3`` or ``tinkerbell`` beside ``capi``):
    otherwise the site registers them.
    """
    tools = workload.provisioning.tools
    if "capi" not in tools or not {"metal3", "tinkerbell"} & set(tools):
        return []
    tinkerbell = "tinkerbell" in tools
    # the host object, as counted and as plural, and what an inventory host gives to get one
    one, many = ("Hardware", "Hardware") if tinkerbell else ("BareMetalHost(s)", "BareMetalHosts")
    fields = TINKERBELL_HOST_FIELDS if tinkerbell else METAL3_HOST_FIELDS
    found: list[Finding] = []
    for pool in site_pools(plan):
        hosts = [h.name for h in tinkerbell_hosts(pool, workload)] if tinkerbell else described_hosts(pool, workload)
        wanted = site_hosts(pool)
        if len(hosts) >= wanted:
            continue
        rendered = f"{len(hosts)} {one} rendered ({', '.join(hosts)})" if hosts else f"no {one.removesuffix('(s)')} rendered"
        missing = wanted - len(hosts)
        found.append(
            Finding(
                "warning",
                HOSTS_SHORT,
                f"{dns_name(pool)}: its MachineDeployment asks for {wanted} machine(s) and {rendered}: register the "
                f"other {missing} server(s) as {many} labelled {labels_text(host_labels(pool))} (list them "
                f"under hardware.inventory[].hosts with {listed(fields)}), or "
                f"{missing} Machine(s) wait in Provisioning for a host",
                "provisioning.tools",
            )
        )
    return found


def with_cluster_api_findings(plan: Plan, workload: Workload) -> Plan:
    """The plan with what its Cluster API MachineDeployments need that specgen does not render (newuser11 item 5).

    And the namespace they (or the BareMetalHosts) go into, which the site creates (:func:`namespace_findings`).
    """
    pools = site_pools(plan)  # a pool rented whole from a provider has no MachineDeployment (rented-hosts says so)
    if "capi" not in workload.provisioning.tools or not pools:
        found = namespace_findings(plan, workload)
        return plan._replace(findings=sorted_findings([*plan.findings, *found])) if found else plan
    carried = "; ".join(
        f"{dns_name(pool)}: node-labels {join_labels(pool, plan.racks)}, taints "
        + ",".join(f"{k}={v}:{e}" for k, v, e in pool.taints)
        for pool in pools
    )
    message = (
        "provisioning/cluster-api: each MachineDeployment names a KubeadmConfigTemplate and a "
        f"{infrastructure_template(workload)} of its own name in namespace {workload.provisioning.namespace}, which "
        "hold the site's OS image and kubeadm settings and are not rendered; without them no Machine is created. "
        + (affinity_text(plan, workload) if "tinkerbell" in workload.provisioning.tools else _host_selector_text(plan, workload))
        + " Each KubeadmConfigTemplate's joinConfiguration.nodeRegistration must carry its pool's node labels "
        "(kubeletExtraArgs node-labels) and taints, or the nodes miss the device-plugin config label and the GPU taint: "
        f"{carried}"
    )
    findings = [*plan.findings, Finding("info", "cluster-api-templates", message, "provisioning.tools")]
    return plan._replace(findings=sorted_findings([*findings, *hosts_short(plan, workload), *namespace_findings(plan, workload)]))


def _host_selector_text(plan: Plan, workload: Workload) -> str:
    """The ``cluster-api-templates`` finding's words on each pool's Metal3MachineTemplate and the hosts it selects."""
    selectors = "; ".join(f"{dns_name(pool)}: {labels_text(host_selector(pool))}" for pool in site_pools(plan))
    labelled = (
        "the BareMetalHosts under provisioning/metal3 carry these labels"
        if "metal3" in workload.provisioning.tools
        else "label each pool's BareMetalHosts so"
    )
    return (
        "Each Metal3MachineTemplate needs the site's spec.template.spec.image (url, checksum) and userData, and "
        "spec.template.spec.hostSelector.matchLabels selecting its pool's BareMetalHosts, or CAPM3 claims any available "
        f"BareMetalHost in the namespace, another pool's server included ({labelled}): {selectors}."
    )


#: The provisioning tools that render for the pools, not for inventory hosts described (Metal3's, Tinkerbell's).
POOL_TOOLS = ("maas", "capi")


def idle_pool_tools(plan: Plan, workload: Workload) -> list[str]:
    """The pool tools of ``provisioning.tools`` with no host of the plan to provision: every pool is rented whole.

    fuzz33 item 9: ``{"maas_instances": {}}`` and a Cluster API kustomization holding only its namespace were written
    for a fleet rented from a provider, without a word. Such a tool renders nothing (as a tool renders nothing where it
    is not named) and :func:`with_unprovisioned_findings` says so.
    """
    if plan.provider != "baremetal" or site_pools(plan):
        return []
    return [tool for tool in POOL_TOOLS if tool in workload.provisioning.tools]


def with_unprovisioned_findings(plan: Plan, workload: Workload) -> Plan:
    """The plan with ``setting-unused`` at ``provisioning.tools`` where a pool tool has nothing to provision."""
    idle = idle_pool_tools(plan, workload)
    if not idle:
        return plan
    said = {"maas": "maas (no maas_instance allocation)", "capi": "capi (no Cluster API MachineDeployment)"}
    message = (
        f"provisioning.tools {listed([said[t] for t in idle])}: every server of this plan is rented from a provider, "
        "which provisions it and hands it over by SSH (rented-hosts), so the site has nothing to provision and "
        f"provisioning/ renders nothing for {'it' if len(idle) == 1 else 'them'}: remove "
        f"{'it' if len(idle) == 1 else 'them'}, or own or buy servers"
    )
    finding = Finding("warning", "setting-unused", message, "provisioning.tools")
    return plan._replace(findings=sorted_findings([*plan.findings, finding]))


def render_provisioning(plan: Plan, workload: Workload) -> dict[str, str]:
    """``provisioning/maas/``, ``provisioning/metal3/`` or ``provisioning/tinkerbell/``, and/or ``provisioning/cluster-api/``."""
    tools = workload.provisioning.tools
    if not tools:
        return {}
    if plan.provider != "baremetal":
        raise InputError(f"provisioning.tools: {', '.join(tools)} provision bare metal, but hardware.provider is {plan.provider}")
    tools = tuple(t for t in tools if t not in idle_pool_tools(plan, workload))  # nothing to provision (fuzz33 item 9)
    files: dict[str, str] = {}
    if "maas" in tools:
        files["provisioning/maas/variables.tf"] = render_template("terraform/maas.tf.j2", workload=plan.workload)
        instances = maas_instances(plan, workload)
        tags = sorted({tag for instance in instances.values() for tag in instance["allocate_params"]["tags"]})
        files["provisioning/maas/maas.auto.tfvars.json"] = to_json({"maas_instances": instances, "maas_tags": tags}) + "\n"
    if "metal3" in tools:
        files.update(kustomize_directory("provisioning/metal3", bare_metal_hosts(plan, workload)))
    if "tinkerbell" in tools:
        files.update(render_tinkerbell(plan, workload))
    if "capi" in tools:
        files.update(kustomize_directory("provisioning/cluster-api", machine_deployments(plan, workload)))
    return files
