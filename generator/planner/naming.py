"""Pool names: canonical, injective, and short enough for every place they are used.

A pool name is an Ansible group name and a Terraform key (``[a-z0-9_]``), and, with ``-`` for ``_``,
a Kubernetes label value and the stem of host names ``<pool>-NNNNN`` (DNS labels: at most 63
characters) and of file names. A name longer than :data:`MAX_POOL_NAME` keeps its start and ends in
a hash of the whole; pools whose names would still be equal (deployments ``a`` + ``b`` beside a
deployment ``a-b``) each get a stable suffix hashed from their deployment names, so no pool is lost.

A deployment's ``pool`` field puts the pool's name in place of its deployments' names (``<pool>_<gpu>``), so the
name stays when deployments join or leave the pool; such a name is checked (:func:`named_pool_problem`), never
shortened (the names of its parts on other servers, which add their platform, are derived and shortened like any).
On GCP every pool name is shortened to GKE's 40 characters, on AWS to 36 for its EKS managed node group
(:func:`max_pool_name`): there the pool's name is the node pool's (node group's) name too.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Sequence

from generator.errors import InputError

#: Longest pool name: a host name ``<pool>-NNNNN`` (up to :data:`MAX_NODES_PER_POOL` nodes) stays within 63.
MAX_POOL_NAME = 52
#: Most nodes one pool may have (five digits in a host name).
MAX_NODES_PER_POOL = 10_000
_HASH_CHARS = 8


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:_HASH_CHARS]


def _hashed(name: str, hashed_text: str, max_chars: int) -> str:
    """``name``'s start and a hash of ``hashed_text``, in at most ``max_chars`` characters."""
    return f"{name[: max_chars - _HASH_CHARS - 1].rstrip('_')}_{_digest(hashed_text)}"


def _shorten(name: str, max_chars: int = MAX_POOL_NAME) -> str:
    return name if len(name) <= max_chars else _hashed(name, name, max_chars)


def full_pool_name(deployments: Sequence[str], gpu_id: str) -> str:
    """``<deployments>_<gpu>`` in ``[a-z0-9_]``, whatever its length."""
    return re.sub(r"[^a-z0-9_]", "_", "_".join([*deployments, gpu_id]).lower())


def pool_name(deployments: Sequence[str], gpu_id: str, max_chars: int = MAX_POOL_NAME) -> str:
    """``<deployments>_<gpu>`` in ``[a-z0-9_]``, at most ``max_chars`` characters (:func:`max_pool_name`)."""
    return _shorten(full_pool_name(deployments, gpu_id), max_chars)


#: GKE node pool names: at most 40 characters (as :data:`generator.render.gke.GKE_NODE_POOL_NAME_MAX`): every pool
#: name on GCP is shortened to it (:func:`max_pool_name`); one a deployment's ``pool`` field chose is refused instead.
GKE_POOL_NAME_MAX = 40

#: EKS managed node group names on AWS: terraform-aws-modules/eks v21 names a pool's node group with
#: ``node_group_name_prefix = "<name>-"`` (``use_name_prefix`` defaults to true, modules/eks-managed-node-group/main.tf,
#: https://github.com/terraform-aws-modules/terraform-aws-eks/blob/master/modules/eks-managed-node-group/main.tf), and the
#: AWS provider takes a prefix of at most 63 - 26 = 37 characters (the 26 are Terraform's unique suffix;
#: ``node_group_name_prefix``'s ``StringLenBetween(0, 63-id.UniqueIDSuffixLength)``,
#: https://github.com/hashicorp/terraform-provider-aws/blob/main/internal/service/eks/node_group.go): 36 and the ``-``
#: (newuser75 item 1). The prefix and its random suffix stay: they let ``create_before_destroy`` make a replacement
#: group (a pool switched to spot: ``capacity_type`` forces a new group) beside the old one.
EKS_POOL_NAME_MAX = 36


def max_pool_name(provider: str) -> int:
    """Longest pool name on ``provider``: GKE's node pool limit on GCP, EKS's node group prefix on AWS.

    There the pool's name is the node pool's (node group's) name. One rule shortens a name for every place it goes
    (fuzz22 item 13: a 52-character name was shortened again, with a second hash, to be a GKE node pool name that
    SPEC.md did not show), so spec.json, SPEC.md and the cloud show one name, stable across renders.
    """
    return {"gcp": GKE_POOL_NAME_MAX, "aws": EKS_POOL_NAME_MAX}.get(provider, MAX_POOL_NAME)


#: What :func:`max_pool_name` holds a name to, in words, per provider.
POOL_NAME_LIMIT_WHERE = {"gcp": "GKE node pool names", "aws": "EKS node group names"}


def named_pool_problem(name: str, provider: str) -> str | None:
    """Why a pool name chosen through a deployment's ``pool`` field cannot be used as it is; None when it can.

    The name is never shortened with a hash (that would be a name nobody chose): it must fit every place it goes,
    host names ``<pool>-NNNNN`` (:data:`MAX_POOL_NAME`), on GKE node pool names (:data:`GKE_POOL_NAME_MAX`) and on
    EKS node group names (:data:`EKS_POOL_NAME_MAX`).
    """
    limit, where = max_pool_name(provider), POOL_NAME_LIMIT_WHERE.get(provider, "pool names")
    if len(name) <= limit:
        return None
    return (
        f"the pool would be named {name.replace('_', '-')} ({len(name)} characters: the pool name, then its hardware), "
        f"more than the {limit} {where} may have: shorten the pool name by {len(name) - limit} or more"
    )


def unique_pool_names(pools: Sequence[tuple[Sequence[str], str]], max_chars: int = MAX_POOL_NAME) -> list[str]:
    """Names for pools given as (deployment names, GPU id): :func:`pool_name`, disambiguated where equal."""
    names = [pool_name(deps, gpu, max_chars) for deps, gpu in pools]
    taken = Counter(names)
    out = [
        _hashed(name, chr(0).join([*deps, gpu]), max_chars) if taken[name] > 1 else name
        for name, (deps, gpu) in zip(names, pools, strict=True)
    ]
    for name, count in Counter(out).items():
        if count > 1:
            owners = [", ".join(deps) for (deps, _), other in zip(pools, out, strict=True) if other == name]
            raise InputError(f"the pools of deployments {' and '.join(owners)} would share the name '{name}'; rename one")
    return out
