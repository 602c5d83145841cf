"""newuser97: a platform engineer's EKS (Karpenter) chat service and owned 2 x DGX H100 code assistant and weekly QLoRA.

Item 1: without ``kubernetes.cluster_name`` the EC2NodeClasses select subnets and security groups tagged
``karpenter.sh/discovery: <workload name>``, and nothing said the cluster name was taken from the workload's ``name``:
a workload ``chat-eks`` for an existing cluster ``prod`` rendered NodePools that launch no node. Now an info,
``karpenter-cluster-name-assumed``, says so at ``kubernetes``.

Item 2: ``training-fits-idle-gpus`` offered a weekly Llama 3.1 8B QLoRA "DP1 ... on 1 h100-sxm5-80gb, 3.37 h a run"
on "the 4 GPU(s)" a DGX H100 has spare beside a Qwen2.5-32B service: the training search times the fewest GPUs a job
needs and the degrees that fill a whole server, so DP2 / DP4 on the 4 were never timed (a note said so); fix178: the
finding times every degree the idle GPUs hold, DP4 on the 4 at 0.84 h a run.

Item 3: the code assistant, written without ``avg_input_tokens`` / ``avg_output_tokens``, was sized for the schema's
1,000-token prompts and 200-token replies with nothing saying they were defaults; now ``request-lengths-default``
(info, at the deployment's ``inference``) names the lengths left out.

Item 4: ``few-cpu-cores`` said "64 wanted" of the p4d.24xlarge with nothing on where 64 comes from; it now names the
basis: 8 a GPU, ``constants.cpu_cores_per_gpu`` (a planning minimum), or the vendor's published minimum where higher.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from generator import catalog
from generator.cli import main
from generator.planner.host_minimums import wanted_cores_basis, wanted_cpu_cores
from generator.sizing.constants import with_overrides

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
    # item 2 (fix178): timed on the 4 spare GPUs, not on 1 (DP1, 3.37 h a run, 14.66 h of its 4.35 runs a month)
    assert "TP1 ZeRO-0 x DP4" in idle["message"] and "on 4 h100-sxm5-80gb on one node" in idle["message"]
    assert "0.84 h a run as the planner's training model times it there" in idle["message"]
    assert "its 4.35 runs a month take 3.67 h of the 730 h" in idle["message"]
    assert "timed on" not in idle["message"]  # the note on untimed degrees is gone with them


LENGTHS = """version: 1
name: lengths
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference:
      max_context_tokens: 8192
      requests_per_second: 2{chat}
  - name: embed
    model: BAAI/bge-m3
    inference:
      task: embed
      max_context_tokens: 8192
      requests_per_second: 20{embed}
hardware:
  provider: aws
  gpus: [l40s-48gb]
"""


@pytest.mark.parametrize(
    ("chat", "embed", "said"),
    [
        (
            "",
            "",
            {
                "deployments[0].inference": "deployment chat: avg_input_tokens and avg_output_tokens are not given, so it "
                "is sized for the schema's default 1,000-token prompts and 200-token replies: its replicas,",
                # a pooling service makes no output: its prompt length alone
                "deployments[1].inference": "deployment embed: avg_input_tokens is not given, so it is sized for the "
                "schema's default 1,000-token prompts: its replicas,",
            },
        ),
        (
            "\n      avg_input_tokens: 1000",  # the default's value, written: the user's own
            "\n      avg_input_tokens: 300",
            {
                "deployments[0].inference": "deployment chat: avg_output_tokens is not given, so it is sized for the "
                "schema's default 200-token replies: its replicas,",
            },
        ),
        ("\n      avg_input_tokens: 1000\n      avg_output_tokens: 200", "\n      avg_input_tokens: 300", {}),
    ],
)
def test_a_service_sized_at_the_default_request_lengths_is_told_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], chat: str, embed: str, said: dict[str, str]
) -> None:
    path = tmp_path / "lengths.yaml"
    path.write_text(LENGTHS.format(chat=chat, embed=embed), encoding="utf-8")
    found = {f["path"]: f for f in _findings(path, capsys) if f["code"] == "request-lengths-default"}
    assert sorted(found) == sorted(said)
    for at, start in said.items():
        assert found[at]["level"] == "info"
        assert found[at]["message"].startswith(start)
        assert found[at]["message"].endswith("give the service's own averages (from its request logs or a sample of its traffic)")


def test_the_onprem_code_assistant_is_told_its_lengths_are_defaults(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "onprem.yaml"
    path.write_text(ONPREM, encoding="utf-8")
    (finding,) = [f for f in _findings(path, capsys) if f["code"] == "request-lengths-default"]
    assert finding["path"] == "deployments[0].inference" and "deployment code:" in finding["message"]


NVIDIA_RA = "https://docs.nvidia.com/ai-enterprise/reference-architecture/latest/compute-node-hardware.html"


@pytest.mark.parametrize(
    ("platform_id", "gpu_id", "per_gpu", "basis"),
    [
        (
            "aws-p4d-24xlarge",
            "a100-sxm4-40gb",
            8,
            "8 a GPU, constants.cpu_cores_per_gpu: a planning minimum, not a published one",
        ),
        (
            "dell-xe7740",
            "h200-nvl-141gb",
            4,
            "7 a GPU, NVIDIA AI Enterprise reference architecture, H200 NVL PCIe Optimized 2-8-5's published minimum "
            f"({NVIDIA_RA})",
        ),
        ("dell-xe7740", "h200-nvl-141gb", 8, "8 a GPU, constants.cpu_cores_per_gpu: a planning minimum, not a published one"),
    ],
)
def test_the_cores_wanted_name_their_basis(platform_id: str, gpu_id: str, per_gpu: int, basis: str) -> None:
    platform, gpu = catalog.platforms()[platform_id], catalog.gpus()[gpu_id]
    consts = with_overrides({"cpu_cores_per_gpu": per_gpu})
    assert wanted_cores_basis(platform, gpu, consts) == basis
    assert wanted_cpu_cores(platform, gpu, 8, consts) == int(basis.split(" ", 1)[0]) * 8  # the figure it explains


def test_the_eks_plan_says_where_its_64_cores_come_from(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "chat-eks.yaml"
    path.write_text(EKS.format(named=""), encoding="utf-8")
    (note,) = [f["message"] for f in _findings(path, capsys) if f["code"] == "few-cpu-cores"]
    assert note.endswith(
        "for 8 GPUs; 64 wanted (8 a GPU, constants.cpu_cores_per_gpu: a planning minimum, not a published one; fixed by "
        "the instance type)"
    )
