"""``kubernetes.cluster_name`` held to the naming rule of the cluster it names, by provider (newuser81 item 2).

The schema takes what any provider's cluster may be named; each provider's rule is checked here, at the field:

- EKS: letters, digits, ``-`` and ``_``, starting with a letter or digit, at most 100 characters (CreateCluster's
  ``name``, https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateCluster.html): the name goes into the
  EC2NodeClasses' ``karpenter.sh/discovery`` tag selectors and their default node role ``KarpenterNodeRole-<name>``;
- AKS: the same characters, ending in a letter or digit, at most 63 (Microsoft.ContainerService/managedClusters'
  name rule, https://learn.microsoft.com/en-us/azure/azure-resource-manager/management/resource-name-rules);
- GKE: lower case letters, digits and ``-``, starting with a letter and ending in a letter or digit, at most 40
  (the GKE API's ``Cluster.name``, https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters;
  newuser100: 41 to 63 characters were taken, and the ContainerNodePools' clusterRef named a cluster GKE cannot hold);
- Cluster API (bare metal): the same characters, at most 63: a Kubernetes object's name (the Cluster API ``Cluster``).

Until 2026-12 every provider was held to the last rule, so an existing EKS cluster named ``ml_prod`` or ``MlProd``
could not be targeted.
"""

from __future__ import annotations

import re

from generator.errors import InputError
from generator.workload.loader import Document
from generator.workload.models import Workload

#: EKS CreateCluster ``name``: ``^[0-9A-Za-z][A-Za-z0-9\-_]*``, 1 to 100 characters.
EKS_NAME = re.compile(r"[0-9A-Za-z][A-Za-z0-9_-]{0,99}")
EKS_RULE = "letters, digits, '-' and '_', starting with a letter or digit, at most 100 characters (EKS)"
#: AKS managed cluster name: 1 to 63 alphanumerics, underscores and hyphens, starting and ending with an alphanumeric.
AKS_NAME = re.compile(r"[0-9A-Za-z]([A-Za-z0-9_-]{0,61}[0-9A-Za-z])?")
AKS_RULE = "letters, digits, '-' and '_', starting and ending with a letter or digit, at most 63 characters (AKS)"


def _lower_dns_name(most_chars: int) -> tuple[re.Pattern[str], str]:
    """Lower case letters, digits and '-', starting with a letter, ending in a letter or digit, <= ``most_chars``."""
    rule = (
        "lower-case letters, digits and '-', starting with a letter and ending in a letter or digit, "
        f"at most {most_chars} characters"
    )
    return re.compile(rf"[a-z]([a-z0-9-]{{0,{most_chars - 2}}}[a-z0-9])?"), rule


#: A Kubernetes object's name on bare metal (Cluster API), and any provider without a rule of its own: 63 characters.
DNS_NAME, DNS_RULE = _lower_dns_name(63)
#: GKE ``Cluster.name``: the same characters, at most 40.
GKE_NAME, GKE_RULE = _lower_dns_name(40)

RULES = {"aws": (EKS_NAME, EKS_RULE), "azure": (AKS_NAME, AKS_RULE), "gcp": (GKE_NAME, GKE_RULE)}
#: IAM role names are at most 64 characters (CreateRole's ``RoleName``,
#: https://docs.aws.amazon.com/IAM/latest/APIReference/API_CreateRole.html).
IAM_ROLE_MAX = 64
#: The EC2NodeClasses' default node role, ``KarpenterNodeRole-<cluster>`` (:func:`generator.render.karpenter_aws.node_role`).
DEFAULT_ROLE_PREFIX = "KarpenterNodeRole-"


def cluster_name_errors(doc: Document, wl: Workload) -> list[InputError]:
    """``kubernetes.cluster_name`` against its provider's naming rule, located at the field."""
    name = wl.kubernetes.cluster_name
    if name is None:
        return _default_gke_name_errors(doc, wl)
    provider = wl.hardware.provider
    pattern, rule = RULES.get(provider, (DNS_NAME, DNS_RULE))
    if pattern.fullmatch(name):
        return _role_errors(doc, wl, name)
    whose = {"aws": "an EKS cluster", "azure": "an AKS cluster", "gcp": "a GKE cluster"}.get(
        provider, "a Cluster API cluster (a Kubernetes object)"
    )
    return [InputError(f"'{name}' is no name of {whose}: {rule}", doc.locate(("kubernetes", "cluster_name")))]


def _default_gke_name_errors(doc: Document, wl: Workload) -> list[InputError]:
    """A GKE cluster named by default after a workload longer than GKE's 40 characters (the name takes 41)."""
    named = {"terraform", "kubernetes"} & set(wl.outputs)  # the outputs naming the cluster (gke_cluster, clusterRef)
    if wl.hardware.provider != "gcp" or not named or GKE_NAME.fullmatch(wl.name):
        return []
    return [
        InputError(
            f"'{wl.name}' ({len(wl.name)} characters) names the GKE cluster where kubernetes.cluster_name is not "
            f"given, and a GKE cluster's name is at most 40 characters: give kubernetes.cluster_name",
            doc.locate(("name",)),
        )
    ]


def _role_errors(doc: Document, wl: Workload, name: str) -> list[InputError]:
    """An EKS cluster name too long for the default node role the EC2NodeClasses would name (IAM: 64 characters)."""
    role = DEFAULT_ROLE_PREFIX + name
    if (
        wl.hardware.provider != "aws"
        or "kubernetes" not in wl.outputs
        or wl.kubernetes.karpenter_node_role is not None
        or len(role) <= IAM_ROLE_MAX
    ):
        return []
    return [
        InputError(
            f"the EC2NodeClasses' default node role {role} is {len(role)} characters, over the {IAM_ROLE_MAX} an IAM "
            "role name may have: give your Karpenter node role as kubernetes.karpenter_node_role",
            doc.locate(("kubernetes", "cluster_name")),
        )
    ]
