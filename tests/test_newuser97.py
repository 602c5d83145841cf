"""newuser97: a platform engineer's EKS (Karpenter) chat service and owned 2 x DGX H100 code assistant and weekly QLoRA.

Item 1: without ``kubernetes.cluster_name`` the EC2NodeClasses select subnets and security groups tagged
``karpenter.sh/discovery: <workload name>``, and nothing said the cluster name was taken from the workload's ``name``:
a workload ``chat-eks`` for an existing cluster ``prod`` rendered NodePools that launch no node. Now an info,
``karpenter-cluster-name-assumed``, says so at ``kubernetes``.

Item 2: ``training-fits-idle-gpus`` offered a weekly Llama 3.1 8B QLoRA "DP1 ... on 1 h100-sxm5-80gb, 3.37 h a run"
on "the 4 GPU(s)" a DGX H100 has spare beside a Qwen2.5-32B service: the training search times the fewest GPUs a job
needs and the degrees that fill a whole server, so DP2 / DP4 on the 4 are never timed; the finding now says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from generator.cli import main
from generator.planner.idle_training import _untimed_note

EKS = """version: 1
name: chat-eks
deployments:
  - name: chat
    model: meta-llama/Llama-3.3-70B-Instruct
    inference:
      precision: fp8
      kv_cache_precision: fp8
      max_context_tokens: 8192
      avg_input_tokens: 1500
      avg_output_tokens: 350
      requests_per_second: 4
      slo: {{ttft_p95_ms: 2000, tpot_ms: 40}}
hardware:
  provider: aws
kubernetes:
  location: us-east-1{named}
outputs: [kubernetes]
"""

ONPREM = """version: 1
name: onprem
deployments:
  - name: code
    model: Qwen/Qwen2.5-32B-Instruct
    inference:
      precision: bf16
      max_context_tokens: 32768
      requests_per_second: 2
      slo: {ttft_p95_ms: 2000, tpot_ms: 50}
  - name: tune
    model: meta-llama/Llama-3.1-8B
    training:
      method: qlora
      lora_rank: 16
      sequence_length: 8192
      global_batch_size: 64
      dataset_tokens: 100000000
      epochs: 1
      runs_per_month: 4.35
hardware:
  provider: baremetal
  buy: false
  inventory:
    - platform: dgx-h100
      count: 2
      hosts:
        - name: gpu-01
        - name: gpu-02
outputs: [ansible, kubernetes]
"""


def _findings(path: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    with pytest.raises(SystemExit) as done:
        main(["plan", str(path), "--format", "json"])
    assert done.value.code == 0
    return cast(list[dict[str, Any]], json.loads(capsys.readouterr().out)["findings"])


@pytest.mark.parametrize(("named", "said"), [("", True), ("\n  cluster_name: prod", False)])
def test_the_eks_cluster_taken_from_the_workload_name_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], named: str, said: bool
) -> None:
    path = tmp_path / "chat-eks.yaml"
    path.write_text(EKS.format(named=named), encoding="utf-8")
    found = [f for f in _findings(path, capsys) if f["code"] == "karpenter-cluster-name-assumed"]
    if not said:
        assert found == []
        return
    (finding,) = found
    assert finding["level"] == "info" and finding["path"] == "kubernetes"
    assert "taken to be named after the workload, chat-eks" in finding["message"]
    assert "karpenter.sh/discovery: chat-eks" in finding["message"]
    assert finding["message"].endswith("set kubernetes.cluster_name to your EKS cluster's name")


def test_the_discovery_tag_said_is_the_one_rendered(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The finding names the tag the EC2NodeClass selects by (the render is the oracle)."""
    path = tmp_path / "chat-eks.yaml"
    path.write_text(EKS.format(named=""), encoding="utf-8")
    with pytest.raises(SystemExit) as done:
        main(["render", str(path), "-o", str(tmp_path / "out")])
    assert done.value.code == 0
    capsys.readouterr()
    (node_class,) = (tmp_path / "out" / "kubernetes" / "aws").glob("ec2nodeclass-*.yaml")
    assert "karpenter.sh/discovery: chat-eks" in node_class.read_text(encoding="utf-8")


def test_a_bare_metal_workload_gets_no_eks_cluster_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "onprem.yaml"
    path.write_text(ONPREM, encoding="utf-8")
    findings = _findings(path, capsys)
    assert not [f for f in findings if f["code"] == "karpenter-cluster-name-assumed"]
    (idle,) = [f for f in findings if f["code"] == "training-fits-idle-gpus"]
    # item 2: DP1 said on 4 spare GPUs, and why no layout over more of them is said
    assert "TP1 ZeRO-0 x DP1" in idle["message"] and "on 1 h100-sxm5-80gb on one node" in idle["message"]
    assert (
        "(timed on 1 of the 4 GPUs free on one node because the training search times the fewest GPUs its memory and "
        "deadline need and the degrees that fill a whole 8-GPU dgx-h100, none between: a run over more of them may "
        "take less)" in idle["message"]
    )


def _option(gpus: int, nodes: int = 1) -> Any:
    return SimpleNamespace(candidate=SimpleNamespace(gpus=gpus, nodes=nodes))


POOL = SimpleNamespace(node=SimpleNamespace(gpus=8, platform_id="dgx-h100"))


@pytest.mark.parametrize(
    ("gpus", "nodes", "idle", "timed", "noted"),
    [
        (1, 1, [4, 0], {1}, True),  # the case above
        (2, 1, [4, 0], {1, 2}, True),  # DP2 timed, DP4 not
        (1, 1, [4, 0], {1, 4}, False),  # DP4 timed and slower: nothing to add
        (4, 1, [4, 0], {1, 4}, False),  # the layout takes every free GPU of the node
        (1, 1, [1, 1], {1}, False),  # one GPU free a node
        (8, 2, [8, 8], {1}, False),  # whole idle nodes
    ],
)
def test_the_untimed_note_only_where_a_wider_layout_on_one_node_was_not_timed(
    gpus: int, nodes: int, idle: list[int], timed: set[int], noted: bool
) -> None:
    note = _untimed_note(_option(gpus, nodes), cast(Any, POOL), idle, timed)
    assert bool(note) is noted
    if noted:
        assert note.startswith(f" (timed on {gpus} of the {max(idle)} GPUs free on one node")
