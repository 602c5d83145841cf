"""Checks of a workload's ``mirrors`` block beyond its schema, each located at the field it concerns.

The schema gives each field its shape (``host[:port][/path]``, a URL without credentials, an absolute path); this
refuses what a shape cannot say:

- a port outside 1-65535;
- a public registry, Helm repository or Hub as the mirror (an air-gapped site reaches none of them);
- a ``container_registry`` whose first part has no ``.`` or ``:`` and is not ``localhost``: an image reference reads
  such a name as a Docker Hub namespace (``mirror/nvidia/driver`` is ``docker.io/mirror/nvidia/driver``), so no pull
  would reach the mirror (distribution/reference ``splitDockerDomain``,
  https://github.com/distribution/reference/blob/main/normalize.go);
- ``huggingface_endpoint`` with ``huggingface_cache`` (offline, the endpoint is never asked);
- ``registry_ca_file`` or ``image_pull_secret`` without ``container_registry``, which they belong to.
"""

from __future__ import annotations

from generator.errors import InputError
from generator.workload.loader import Document
from generator.workload.models import Mirrors

#: Registries, Helm repositories and Hubs on the internet that are public by nature (a host is public when it is one of
#: these or under one). A cloud's per-project registry is not: Google's Artifact Registry (``<region>-docker.pkg.dev/
#: <project>/<repository>``) and Container Registry (``gcr.io/<project>``, ``eu.gcr.io``, ...), like AWS's private ECR
#: (``<account>.dkr.ecr.<region>.amazonaws.com``) and Azure's ACR (``<name>.azurecr.io``), are private registries a
#: site with no internet route reaches over the cloud's private access (review26 item 6: ``*.pkg.dev`` and ``gcr.io``
#: were refused as public); of Google's hosts only the old Kubernetes registry and the Docker Hub mirror are public.
PUBLIC_HOSTS = (
    "docker.io",
    "docker.com",
    "nvcr.io",
    "ghcr.io",
    "quay.io",
    "registry.k8s.io",
    "k8s.gcr.io",
    "mirror.gcr.io",
    "public.ecr.aws",
    "mcr.microsoft.com",
    "huggingface.co",
    "hf.co",
    "ngc.nvidia.com",
    "nvidia.github.io",
)


def is_public_host(host: str) -> bool:
    """Whether ``host`` (no port) is one of :data:`PUBLIC_HOSTS` or a name under one."""
    name = host.lower().rstrip(".")
    return any(name == public or name.endswith("." + public) for public in PUBLIC_HOSTS)


def registry_host(registry: str) -> str:
    """``host[:port]`` of a ``host[:port][/path]`` registry."""
    return registry.partition("/")[0]


def _port_problem(port: str) -> str | None:
    return None if port.isdigit() and 1 <= int(port) <= 65535 else f"port {port} is not in 1-65535"


def registry_problem(registry: str) -> str | None:
    """What is wrong with a schema-valid ``container_registry``; None when nothing is."""
    host, _, port = registry_host(registry).partition(":")
    if port and (problem := _port_problem(port)):
        return problem
    if is_public_host(host):
        return f"{host} is a public registry, which an air-gapped site does not reach: give the site's own mirror"
    if not port and "." not in host and host != "localhost":
        return (
            f"an image reference reads '{host}' as a Docker Hub namespace, not a registry (its first part names a "
            "registry only with a '.' or a ':port' in it, or as 'localhost'): give the registry's full name or its port"
        )
    return None


def url_problem(url: str, what: str) -> str | None:
    """What is wrong with a schema-valid URL of a mirror (``what``: what it serves); None when nothing is."""
    from urllib.parse import urlsplit  # imported where a mirror is given: most workloads give none

    parts = urlsplit(url)
    host, _, port = parts.netloc.partition(":")
    if port and (problem := _port_problem(port)):
        return problem
    if is_public_host(host):
        return f"{host} is the public {what}, which an air-gapped site does not reach: give the site's own mirror"
    return None


def mirror_errors(doc: Document, mirrors: Mirrors | None) -> list[InputError]:
    """Every problem of the workload's ``mirrors`` block, each at its field."""
    if mirrors is None:
        return []
    problems: list[tuple[str, str]] = []
    if mirrors.container_registry is not None and (problem := registry_problem(mirrors.container_registry)):
        problems.append(("container_registry", problem))
    for field, what in (("helm_repository", "Helm repository"), ("huggingface_endpoint", "Hugging Face Hub")):
        value = getattr(mirrors, field)
        if value is not None and (problem := url_problem(value, what)):
            problems.append((field, problem))
    if mirrors.huggingface_endpoint is not None and mirrors.huggingface_cache is not None:
        problems.append(
            (
                "huggingface_cache",
                "huggingface_cache reads models offline (HF_HUB_OFFLINE=1), so huggingface_endpoint would never be "
                "asked: give one of them",
            )
        )
    if mirrors.container_registry is None:
        for field in ("registry_ca_file", "image_pull_secret"):
            if getattr(mirrors, field) is not None:
                problems.append((field, f"{field} is for container_registry, which is not given: give it or drop {field}"))
    return [InputError(message, doc.locate(("mirrors", field))) for field, message in problems]
