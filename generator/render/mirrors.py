"""An air-gapped site's mirrors (the workload's ``mirrors``) in the rendered files.

One convention throughout: the site's registry holds every image at its upstream path without the upstream
registry's host (``nvcr.io/nvidia/driver`` as ``<registry>/nvidia/driver``, ``docker.io/vllm/vllm-openai`` as
``<registry>/vllm/vllm-openai``), as copying the images with their paths leaves them. From it:

- the GPU Operator's Helm values name every component's repository on the mirror (the chart's image keys, from the
  catalog's ``nvidia-gpu-operator`` record), with the pull secret where the chart passes one on;
- an ``NVIDIADriver`` names its driver and driver-manager images there;
- the Ansible group vars give containerd one ``hosts.toml`` per upstream registry the stack pulls from, whose only
  server is the mirror (https://github.com/containerd/containerd/blob/main/docs/hosts.md: "If you wish to ensure
  *only* the mirror is utilised and the upstream not consulted, set the mirror as the ``server``"), so an image
  named by its public name anywhere (the kubelet's pause image, a role's engine image) is pulled from the mirror;
- the engines' and trainers' model downloads go to the Hub mirror (``HF_ENDPOINT``) or to a Hub cache on the hosts
  read offline (``HF_HUB_CACHE``, ``HF_HUB_OFFLINE=1``;
  https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables).
"""

from __future__ import annotations

from typing import Any

from generator.catalog import gpus, software
from generator.named_tuple import NamedTuple
from generator.planner.cluster_findings import AMD_DEVICE_PLUGIN_RECORD, own_cluster, renders_amd_plugin
from generator.planner.plan import Finding, Plan, sorted_findings
from generator.words import listed
from generator.workload.models import Mirrors, Workload

#: Where containerd looks for ``<registry>/hosts.toml`` once its CRI registry ``config_path`` names it (containerd 2.x:
#: ``[plugins."io.containerd.cri.v1.images".registry]``, 1.x: ``[plugins."io.containerd.grpc.v1.cri".registry]``).
CONTAINERD_CERTS_D = "/etc/containerd/certs.d"
#: Docker Hub, as an image reference without a registry means it (``vllm/vllm-openai`` is ``docker.io/vllm/...``).
DOCKER_HUB = "docker.io"
#: The kubelet's pause image and kubeadm's control-plane images (kube-proxy runs on every node) come from here.
KUBERNETES_REGISTRY = "registry.k8s.io"
#: Each serving engine's official image on Docker Hub, on NVIDIA GPUs: vLLM's ``vllm/vllm-openai``
#: (https://docs.vllm.ai/en/stable/deployment/docker.html "available on Docker Hub as vllm/vllm-openai") and SGLang's
#: ``lmsysorg/sglang`` (https://docs.sglang.io/docs/get-started/install.md "Docker Hub at lmsysorg/sglang"). specgen
#: pins no engine release: the tag is the one the site mirrored.
ENGINE_IMAGES = {"vllm": "vllm/vllm-openai", "sglang": "lmsysorg/sglang"}


class ClusterMirror(NamedTuple):
    """What the cluster's GPU stack pulls with: the registry, its pull secret and the chart's Helm repository."""

    registry: str | None
    pull_secret: str | None
    helm_repository: str | None


def cluster_mirror(mirrors: Mirrors | None) -> ClusterMirror | None:
    """The cluster-wide part of a workload's mirrors; None where it names none of it."""
    if mirrors is None:
        return None
    mirror = ClusterMirror(mirrors.container_registry, mirrors.image_pull_secret, mirrors.helm_repository)
    return mirror if any(mirror) else None


def split_registry(reference: str) -> tuple[str, str]:
    """(registry, path) of an image repository: the first part is a registry only with a '.' or ':' or as localhost.

    The rule of distribution/reference's ``splitDockerDomain``
    (https://github.com/distribution/reference/blob/main/normalize.go); a one-part Docker Hub name is ``library/``'s.
    """
    first, _, rest = reference.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return first, rest
    return DOCKER_HUB, reference if rest else f"library/{reference}"


def mirrored(reference: str, registry: str) -> str:
    """``reference`` (an image repository) on the site's ``registry``, at its upstream path."""
    return f"{registry}/{split_registry(reference)[1]}"


def _set(values: dict[str, Any], dotted: str, key: str, value: Any) -> None:
    """``values[a][b]...[key] = value`` for ``dotted`` = ``a.b...``, creating the mappings on the way."""
    node = values
    for part in dotted.split("."):
        node = node.setdefault(part, {})
    node[key] = value


def gpu_operator_values(mirror: ClusterMirror) -> dict[str, Any]:
    """The GPU Operator chart values that point every image at the mirror, and name the pull secret where given.

    Every key of the chart holding an image repository gets the mirror's (no chart default stays on a public
    registry, enabled or not), node-feature-discovery (a sub-chart) included: its ``image.repository`` and its
    ``imagePullSecrets`` of ``{name: ...}`` (a pod's field); the operator's components take the secret's name.
    """
    record = software("nvidia-gpu-operator")
    values: dict[str, Any] = {}
    if mirror.registry is not None:
        for key, upstream in record["image_repositories"].items():
            _set(values, key, "repository", mirrored(str(upstream), mirror.registry))
    if mirror.pull_secret is not None:
        for key in record["image_pull_secret_keys"]:
            _set(values, str(key), "imagePullSecrets", [mirror.pull_secret])
        values.setdefault("node-feature-discovery", {})["imagePullSecrets"] = [{"name": mirror.pull_secret}]
    return values


def merge_values(base: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``overlay``'s keys set into it, mappings merged key by key (as Helm merges values files)."""
    out = dict(base)
    for key, value in overlay.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge_values(out[key], value)
        else:
            out[key] = value
    return out


def driver_images(mirror: ClusterMirror | None) -> dict[str, Any]:
    """An ``NVIDIADriver``'s image fields: the driver's repository and, mirrored, its manager and the pull secret.

    The chart's own NVIDIADriver takes the whole ``driver.manager`` (repository, image, version) from its values
    (``templates/nvidiadriver.yaml``); one specgen writes names the release's manager on the mirror likewise.
    """
    record = software("nvidia-gpu-operator")
    upstream = str(record["image_repositories"]["driver"])
    if mirror is None or mirror.registry is None:
        fields: dict[str, Any] = {"repository": upstream}
    else:
        manager = record["driver_manager"]
        fields = {
            "repository": mirrored(upstream, mirror.registry),
            "manager": {
                "repository": mirrored(str(manager["repository"]), mirror.registry),
                "image": str(manager["image"]),
                "version": str(manager["version"]),
            },
        }
    if mirror is not None and mirror.pull_secret is not None:
        fields["imagePullSecrets"] = [mirror.pull_secret]
    return fields


def helm_install_lines(mirror: ClusterMirror | None, namespace: str) -> list[str]:
    """The GPU Operator values file's ``helm upgrade --install`` command, as comment lines (:func:`chart_install_lines`).

    Without a site repository the chart comes from a repository added as ``nvidia``.
    """
    record = software("nvidia-gpu-operator")
    chart = str(record["helm_chart"])
    return chart_install_lines(mirror, namespace, chart, str(record["version"]), [f"nvidia/{chart}"])


def chart_install_lines(
    mirror: ClusterMirror | None, namespace: str, chart: str, version: str, default_sources: list[str]
) -> list[str]:
    """A values file's ``helm upgrade --install`` command for ``chart``, as comment lines: from the site's repository.

    Where the images need a pull secret, creating it comes first (its flags are the registry's credentials).

    An ``oci://`` repository holds the chart as ``<path>/<chart>``; an ``https://`` one is an index helm reads with
    ``--repo`` (no ``helm repo add`` needed); without one the chart comes from ``default_sources`` (the command's
    arguments after the release name).
    """
    repository = mirror.helm_repository if mirror is not None else None
    if repository is None:
        sources = default_sources
    elif repository.startswith("oci://"):
        sources = ["", f"{repository.rstrip('/')}/{chart}"]
    else:
        sources = [chart, f"--repo {repository}"]
    lines = []
    if mirror is not None and mirror.pull_secret is not None:  # the registry's credentials: the site's, never in git
        lines.append(f"#   kubectl -n {namespace} create secret docker-registry {mirror.pull_secret} ...")
    lines.append(f"#   helm upgrade --install {chart} {sources[0]}".rstrip() + " \\")
    lines += [f"#     {source} \\" for source in sources[1:]]  # a line of its own: a URL is long
    return [*lines, f"#     --version {version} -n {namespace} -f values.yaml"]


def _host_entry(registry: str, server: str, *, override_path: bool, ca_file: str | None) -> dict[str, Any]:
    """One registry's ``hosts.toml`` as fields: its only server, trusted to pull and resolve, no upstream fallback."""
    entry: dict[str, Any] = {
        "registry": registry,
        "path": f"{CONTAINERD_CERTS_D}/{registry}/hosts.toml",
        "server": server,
        "capabilities": ["pull", "resolve"],
        "override_path": override_path,  # true: the registry's API root is the server's path (/v2/<path>), not /v2
    }
    if ca_file is not None:
        entry["ca"] = ca_file
    return entry


def upstream_registries() -> list[str]:
    """Every registry the rendered stack pulls from by default: the GPU Operator chart's, the engines', Kubernetes'."""
    chart = software("nvidia-gpu-operator")["image_repositories"].values()
    images = [*map(str, chart), *ENGINE_IMAGES.values()]
    return sorted({split_registry(image)[0] for image in images} | {KUBERNETES_REGISTRY})


def containerd_hosts(registry: str, ca_file: str | None) -> list[dict[str, Any]]:
    """One ``hosts.toml`` per upstream registry, each pulling from the mirror only; the mirror's own where a CA signs it.

    Each entry is a file a role writes at ``path``: ``server``, ``capabilities``, ``override_path`` and ``ca`` are its
    root-level keys, which containerd applies to the server (``core/remotes/docker/config/hosts.go``
    ``parseHostsFile``). A mirror with a path is the server ``https://<host>/v2/<path>`` with ``override_path``
    (containerd appends ``/v2`` to a server's path otherwise, ``parseHostConfig``); a host with a port is the
    directory ``<host>:<port>`` (hosts.md "Port Handling in Registry Host").
    """
    host, _, path = registry.partition("/")
    server = f"https://{host}/v2/{path}" if path else f"https://{host}"
    entries = [_host_entry(upstream, server, override_path=bool(path), ca_file=ca_file) for upstream in upstream_registries()]
    if ca_file is not None:  # the images the Helm values name on the mirror itself: trust its CA there too
        entries.append(_host_entry(host, f"https://{host}", override_path=False, ca_file=ca_file))
    return sorted(entries, key=lambda entry: str(entry["registry"]))


def model_hub_env(mirrors: Mirrors) -> dict[str, str]:
    """The environment an engine or trainer reads models with: the Hub mirror, or the Hub cache offline."""
    if mirrors.huggingface_cache is not None:
        return {"HF_HUB_CACHE": mirrors.huggingface_cache, "HF_HUB_OFFLINE": "1"}
    if mirrors.huggingface_endpoint is not None:
        return {"HF_ENDPOINT": mirrors.huggingface_endpoint}
    return {}


def mirror_group_vars(mirrors: Mirrors, *, host_managed: bool = True) -> dict[str, Any]:
    """``specgen_mirrors``: what a role configuring a pool's hosts needs to pull nothing from the internet.

    ``host_managed``: the site's roles configure the hosts' containerd (not on GKE, which builds and runs its nodes).
    """
    out: dict[str, Any] = {}
    if mirrors.container_registry is not None:
        out["container_registry"] = mirrors.container_registry
    if mirrors.container_registry is not None and host_managed:
        out["containerd"] = {
            "config_path": CONTAINERD_CERTS_D,
            "hosts": containerd_hosts(mirrors.container_registry, mirrors.registry_ca_file),
        }
    if mirrors.image_pull_secret is not None:
        out["image_pull_secret"] = mirrors.image_pull_secret
    if env := model_hub_env(mirrors):
        out["model_hub_env"] = env
    return out


def engine_image(engine: str, vendor: str, mirrors: Mirrors | None) -> str | None:
    """The engine's image repository on the mirror (no tag: specgen pins no engine release); None where none is known."""
    if mirrors is None or mirrors.container_registry is None or vendor != "nvidia" or engine not in ENGINE_IMAGES:
        return None
    return mirrored(ENGINE_IMAGES[engine], mirrors.container_registry)


#: The finding that lists what an air-gapped site's mirrors leave to it.
NOT_COVERED = "mirrors-not-covered"


def not_covered(plan: Plan, workload: Workload, mirrors: Mirrors) -> list[str]:
    """What the rendered stack still fetches from outside the site, though ``mirrors`` is given (empty: nothing)."""
    kube = "kubernetes" in workload.outputs
    bare = plan.provider == "baremetal"
    vendors = {gpus()[pool.node.gpu_id].vendor for pool in plan.pools}
    gaps = []
    if mirrors.container_registry is None:
        gaps.append("container images come from their public registries (set container_registry)")
    if kube and mirrors.helm_repository is None and "nvidia" in vendors:
        gaps.append("the GPU Operator chart comes from a Helm repository added as 'nvidia' (set helm_repository)")
    if amd_plugin_rendered(plan, workload) and mirrors.helm_repository is None:  # newuser103
        chart = software(AMD_DEVICE_PLUGIN_RECORD)
        gaps.append(
            f"ROCm's {chart['helm_chart']} device plugin chart comes from {chart['helm_repository']} (set helm_repository)"
        )
    if mirrors.huggingface_endpoint is None and mirrors.huggingface_cache is None:
        gaps.append("models download from the Hugging Face Hub (set huggingface_endpoint or huggingface_cache)")
    if bare and "ansible" in workload.outputs and "nvidia" in vendors:
        gaps.append(
            "the NVIDIA driver and fabric manager packages Ansible installs (specgen_nvidia_driver) come from the hosts' "
            "package sources: point apt at the site's mirror of the repositories the role installs them from"
        )
    elif bare and kube and "nvidia" in vendors:
        gaps.append(
            "the GPU Operator's driver container downloads OS packages as it starts: give it the site's package mirror "
            "(driver.repoConfig.configMapName) or use precompiled driver images"
        )
    if bare and "amd" in vendors and "ansible" in workload.outputs:
        gaps.append(
            "an AMD pool's amdgpu-install package (specgen_amdgpu_driver.amdgpu_install_deb) and the ROCm repositories "
            "it registers are AMD's: mirror them and point the hosts at the copies"
        )
    if bare and kube:
        gaps.append(
            "the control plane's kubeadm ClusterConfiguration, not rendered, needs imageRepository on the mirror "
            "(kube-proxy and CoreDNS images; the nodes' containerd hosts.toml files redirect these pulls too)"
        )
    if bare and "capi" in workload.provisioning.tools:
        gaps.append("Cluster API's machine templates, the site's to write, name the OS image: keep it on the site's servers")
    return gaps


def amd_plugin_rendered(plan: Plan, workload: Workload) -> bool:
    """Whether the tree installs ROCm's AMD device plugin: a bare-metal cluster (not one host alone) with AMD pools."""
    return (
        "kubernetes" in workload.outputs
        and any(renders_amd_plugin(p) for p in plan.pools)
        and not own_cluster(workload, plan.pools)
    )


def redirected(plan: Plan, workload: Workload, mirrors: Mirrors) -> list[str]:
    """What of the rendered files' pulls ``mirrors`` send to the site (review26 item 10: all three were said of any)."""
    vendors = {gpus()[pool.node.gpu_id].vendor for pool in plan.pools}
    out = []
    if mirrors.container_registry is not None:
        out.append("the images")
    if mirrors.helm_repository is not None and "kubernetes" in workload.outputs and "nvidia" in vendors:
        out.append("the GPU Operator chart")
    if mirrors.helm_repository is not None and amd_plugin_rendered(plan, workload):
        out.append("the AMD device plugin chart")
    if mirrors.huggingface_endpoint is not None:
        out.append("the model downloads")
    elif mirrors.huggingface_cache is not None:
        out.append("the model loads (read offline from the hosts' Hub cache)")
    return out


def with_mirror_findings(plan: Plan, workload: Workload) -> Plan:
    """The plan with what the workload's ``mirrors`` leave to the site (``mirrors-not-covered``), where it gives them.

    It opens with what they do redirect, as given (:func:`redirected`), then lists what they do not (:func:`not_covered`).
    """
    if workload.mirrors is None or not (gaps := not_covered(plan, workload, workload.mirrors)):
        return plan
    done = redirected(plan, workload, workload.mirrors)
    head = f"mirrors redirect {listed(done)} the rendered files name; the site still provides: " if done else ""
    message = (head or "the site provides: ") + "; ".join(gaps)
    return plan._replace(findings=sorted_findings([*plan.findings, Finding("info", NOT_COVERED, message, "mirrors")]))
