"""EKS pools whose GPUs talk across nodes over EFA: the EFA device plugin rendered, the pods' EFA request named.

newuser76 item 1: a 64-GPU Llama 3.1 70B fine-tune on 8 x p5en.48xlarge was timed over 16 x 200 Gb/s EFA, but nothing
rendered or named the EFA Kubernetes device plugin, so the pods would get no EFA device and NCCL would run over TCP
(https://docs.aws.amazon.com/eks/latest/userguide/node-efa.html).
"""

from __future__ import annotations

import json
from pathlib import Path

from ruamel.yaml import YAML

from generator.api import render_files
from generator.catalog import software
from generator.planner import plan_workload
from generator.render import deployed, render_plan
from generator.render.efa_plugin import VALUES_PATH
from generator.render.eks import PATH as EKS_PATH
from generator.workload import load_workload

FT70 = """version: 1
name: ft70
deployments:
  - name: sft70
    model: meta-llama/Llama-3.1-70B-Instruct
    training:
      method: full
      framework: fsdp2
      sequence_length: 8192
      global_batch_size: 64
      dataset_tokens: 500000000
      epochs: 2
      deadline_hours: 72
      runs_per_month: 1
hardware:
  gpus: [h100-sxm5-80gb, h200-sxm-141gb]
  provider: aws
kubernetes:
  location: us-east-1
"""


def _render(tmp_path: Path, outputs: str) -> tuple[dict[str, str], dict[str, str]]:
    path = tmp_path / "ft70.yaml"
    path.write_text(FT70 + f"outputs: [{outputs}]\n")
    loaded = load_workload(str(path))
    plan = deployed(plan_workload(loaded), loaded.workload)
    return render_plan(plan, loaded.workload), {f.code: f.message for f in plan.findings}


def test_a_job_across_p5en_nodes_gets_the_efa_device_plugin_and_its_pods_request(tmp_path: Path) -> None:
    files, codes = _render(tmp_path, "kubernetes, terraform")
    (group,) = json.loads(files[EKS_PATH])["eks_managed_node_groups"].values()
    # acc198: p5.48xlarge (H100), not p5en.48xlarge (H200), since FSDP2's non-reentrant recompute skips each block's
    # down projection: the H100 pool is the cheaper plan; either talks across nodes over EFA
    assert (group["instance_types"], group["enable_efa_support"], group["desired_size"]) == (["p5.48xlarge"], True, 0)
    text = files[VALUES_PATH]
    record = software("aws-efa-k8s-device-plugin")
    assert f"--version {record['version']} -n kube-system -f values.yaml" in text
    assert "helm repo add eks https://aws.github.io/eks-charts" in text
    values = YAML(typ="safe", pure=True).load(text)
    assert values == {  # the chart's DaemonSet on the planned instance type only, tolerating the GPU pool's taint
        "supportedInstanceLabels": {"keys": ["node.kubernetes.io/instance-type"], "values": ["p5.48xlarge"]},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    }
    message = codes["eks-efa-device-plugin"]
    # p5.48xlarge: 32 EFA network cards (platforms.json; p5en.48xlarge's 16 before acc198), all of them a whole-node pod's
    assert "vpc.amazonaws.com/efa: 32 (p5.48xlarge's EFA interfaces) beside nvidia.com/gpu: 8" in message
    assert f"rendered at {VALUES_PATH}" in message and "hugepages-2Mi" in message
    # the node group's enable_efa_support makes its own self-referencing security group (terraform-aws-eks v21);
    # Karpenter's security groups are found by tag: the rule is the user's to give
    assert "enable_efa_support gives each group a security group" in message
    assert "karpenter.sh/discovery" in message and "efa-start-security" in message


def test_terraform_alone_names_the_plugin_it_does_not_render(tmp_path: Path) -> None:
    files, codes = _render(tmp_path, "terraform")
    assert VALUES_PATH not in files
    message = codes["eks-efa-device-plugin"]
    assert "install the EFA Kubernetes device plugin (Helm chart eks/aws-efa-k8s-device-plugin)" in message
    assert "karpenter.sh/discovery" not in message  # no EC2NodeClass rendered


def test_a_single_node_job_renders_no_efa_plugin(tmp_path: Path) -> None:
    """A LoRA job on one server: no GPU talks across nodes, no pod needs EFA, no plugin, no finding."""
    path = tmp_path / "small.yaml"
    small = FT70.replace("Llama-3.1-70B-Instruct", "Llama-3.1-8B-Instruct").replace("500000000", "5000000")
    path.write_text(
        small.replace("method: full", "method: lora").replace("global_batch_size: 64", "global_batch_size: 8")
        + "outputs: [kubernetes, terraform]\n"
    )
    loaded = load_workload(str(path))
    plan = deployed(plan_workload(loaded), loaded.workload)
    # fix121: p5.4xlarge -> p5.48xlarge. Both $1.69 a run (the p5 family is priced per GPU-hour); on one server each the
    # near tie goes to the shorter run (1.8 min at DP8 against 0.2 h at DP1), no longer to the lower power (1.3 kW)
    assert [(p.node.instance_type, p.nodes) for p in plan.pools] == [("p5.48xlarge", 1)]
    assert VALUES_PATH not in render_plan(plan, loaded.workload)
    assert "eks-efa-device-plugin" not in {f.code for f in plan.findings}


def test_two_workloads_in_one_cluster_share_one_plugin(tmp_path: Path) -> None:
    """The plugin is cluster-wide: one values file in the tree's shared cluster/, listing the EFA pools' instance types."""
    shared = FT70.replace("  location: us-east-1\n", "  location: us-east-1\n  cluster_name: shared\n")
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text(shared + "outputs: [kubernetes, terraform]\n")
    second.write_text(
        shared.replace("name: ft70", "name: ft70b").replace("name: sft70", "name: sft70b") + "outputs: [kubernetes]\n"
    )
    files = render_files([first, second])
    assert [path for path in files if "efa-device-plugin" in path] == [VALUES_PATH]
    values = YAML(typ="safe", pure=True).load(files[VALUES_PATH])
    assert values["supportedInstanceLabels"]["values"] == ["p5.48xlarge"]  # p5en.48xlarge before acc198
