"""The finding that a cloud's Terraform node pools and Karpenter's NodePools are alternatives (AWS and Azure).

Both size every pool on whole GPUs in full; Karpenter's ``limits`` count only the nodes it launched, so with both
applied a pending GPU pod (a rollout's surge, a second job) gets a Karpenter node beside the Terraform one (newuser16
M3). One text for both clouds (review29 item 12: ``azure-node-provisioners`` had copied ``aws-node-provisioners``).
"""

from __future__ import annotations

from generator.planner.plan import Finding


def node_provisioners_finding(code: str, terraform: str, karpenter: str, pools: str, node: str, extra: str = "") -> Finding:
    """An info ``code`` at ``hardware.provider``: ``terraform`` and ``karpenter`` each provision ``pools`` in full.

    ``terraform`` / ``karpenter``: the files and what each makes; ``pools``: ``every pool``, ``pool(s) a, b``; ``node``:
    what Terraform's kind of pool is called (``node group``, ``node pool``); ``extra``: a clause after the text (its
    leading ``; `` included).
    """
    return Finding(
        "info",
        code,
        f"{terraform} and {karpenter} each provision {pools} in full: apply one of them, not both; with both, a pending "
        f"GPU pod makes Karpenter launch a node beside the {node}'s, since a NodePool's limits count only the nodes "
        f"Karpenter launched{extra}",
        "hardware.provider",
    )
