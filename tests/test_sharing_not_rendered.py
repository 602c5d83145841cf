"""GPU sharing asked where the outputs leave out Kubernetes: planned on whole GPUs, and said (lo1 (a)).

Only the Kubernetes output configures GPU sharing (the NVIDIA device plugin's sharing config, the MIG manager's
partitions, a GKE node pool's sharing), so the planner sizes and packs shares only with it. Without it the plan kept
whole GPUs and ``kubernetes.gpu_sharing`` (or a deployment's own ``gpu_sharing``) went unused without a word: a
``gpu-sharing-not-rendered`` warning now stands at each such field, in ``plan``, ``validate`` and ``spec.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.api import plan_file
from generator.cli import main
from generator.findings import locate_findings
from generator.planner.setting_findings import unrendered_sharing_findings
from generator.render.spec import render_spec
from generator.workload import load_workload
from tests.test_gpu_sharing import workload_text

CODE = "gpu-sharing-not-rendered"

TWO = """\
version: 1
name: two
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference:
      precision: fp8
      max_context_tokens: 8192
      avg_input_tokens: 800
      avg_output_tokens: 200
      requests_per_second: 1
  - name: summarise
    model: meta-llama/Llama-3.1-8B-Instruct
    gpu_sharing:
      strategy: mig
      mig_profile: 3g.40gb
    inference:
      precision: fp8
      max_context_tokens: 8192
      avg_input_tokens: 800
      avg_output_tokens: 200
      requests_per_second: 1
hardware:
  provider: baremetal
  gpus: [h100-sxm5-80gb]
outputs: [{outputs}]
kubernetes:
  gpu_sharing:
    strategy: time-slicing
    replicas_per_gpu: 4
"""

MIG_SAID = (
    "GPU sharing (mig 3g.40gb) is planned and configured only with the kubernetes output (the GPU Operator's MIG "
    "manager, from the pool's nvidia.com/mig.config label), and the workload's outputs (ansible) leave it out: nothing "
    "would share the GPUs, so summarise is planned on whole GPUs, each replica sized against a whole GPU; add "
    "kubernetes to outputs to plan and render the sharing, or remove deployments[1].gpu_sharing"
)
SLICED_SAID = (
    "GPU sharing (time-slicing x4) is planned and configured only with the kubernetes output (the NVIDIA device "
    "plugin's sharing.timeSlicing config), and the workload's outputs (ansible) leave it out: nothing would share the "
    "GPUs, so chat is planned on whole GPUs, each replica sized against a whole GPU; add kubernetes to outputs to plan "
    "and render the sharing, or remove kubernetes.gpu_sharing"
)


def _write(tmp_path: Path, outputs: str) -> Path:
    path = tmp_path / "two.yaml"
    path.write_text(TWO.format(outputs=outputs), encoding="utf-8")
    return path


def test_without_kubernetes_each_sharing_field_is_warned_and_the_gpus_are_whole(tmp_path: Path) -> None:
    loaded, plan = plan_file(str(_write(tmp_path, "ansible")))
    said = [(f.level, f.path, f.message) for f in plan.findings if f.code == CODE]
    assert said == [("warning", "deployments[1].gpu_sharing", MIG_SAID), ("warning", "kubernetes.gpu_sharing", SLICED_SAID)]
    # at the fields, as a CI annotation marks them
    located = [where.rsplit("/", 1)[1] for _, code, _, where in locate_findings(loaded, plan.findings) if code == CODE]
    assert located == ["two.yaml:15:7", "two.yaml:29:5"]
    # the plan is the one on whole GPUs: both services on one pool, no share of a GPU
    assert [(p.name, p.shares_per_gpu, p.gpu_sharing) for p in plan.pools] == [("chat_summarise_h100_sxm5_80gb", None, None)]
    spec = json.loads(render_spec(plan)["spec.json"])
    assert [f["path"] for f in spec["plan"]["findings"] if f["code"] == CODE] == [
        "deployments[1].gpu_sharing",
        "kubernetes.gpu_sharing",
    ]


def test_with_kubernetes_the_sharing_is_planned_and_not_warned(tmp_path: Path) -> None:
    _, plan = plan_file(str(_write(tmp_path, "terraform, ansible, kubernetes")))
    assert not [f for f in plan.findings if f.code == CODE]
    assert sorted((p.name, p.shares_per_gpu) for p in plan.pools) == [
        ("chat_h100_sxm5_80gb", 4),
        ("summarise_h100_sxm5_80gb", 2),
    ]


def test_validate_says_it_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "ansible")
    with pytest.raises(SystemExit) as exited:
        main(["validate", str(path)])
    assert exited.value.code == 0  # a warning
    err = capsys.readouterr().err
    assert f"{path}:29:5: warning: {SLICED_SAID} [{CODE}]" in err
    assert f"{path}:15:7: warning: {MIG_SAID} [{CODE}]" in err


@pytest.mark.parametrize(
    ("provider", "gpu", "sharing", "config"),
    [
        ("baremetal", "a100-sxm4-80gb", "mps", "the NVIDIA device plugin's sharing.mps config"),
        ("aws", "h100-sxm5-80gb", "mig", "the GPU Operator's MIG manager, from the pool's nvidia.com/mig.config label"),
        (
            "azure",
            "a100-sxm4-80gb",
            "mig",
            "an AKS node pool's gpu_instance, with terraform, else the GPU Operator's MIG manager",
        ),
        ("gcp", "a100-sxm4-80gb", "mig", "a GKE node pool's gpuPartitionSize"),
        ("gcp", "a100-sxm4-80gb", "time-slicing", "a GKE node pool's gpuSharingConfig"),
    ],
)
def test_the_warning_names_what_would_configure_it(tmp_path: Path, provider: str, gpu: str, sharing: str, config: str) -> None:
    block = (
        "    strategy: mig\n    mig_profile: 3g.40gb\n"
        if sharing == "mig"
        else f"    strategy: {sharing}\n    replicas_per_gpu: 4\n"
    )
    text = workload_text(block, gpus=gpu, provider=provider).replace("[terraform, ansible, kubernetes]", "[terraform]")
    (tmp_path / "w.yaml").write_text(text, encoding="utf-8")
    (finding,) = unrendered_sharing_findings(load_workload(str(tmp_path / "w.yaml")).workload)
    label = "mig 3g.40gb" if sharing == "mig" else f"{sharing} x4"
    assert finding.message.startswith(
        f"GPU sharing ({label}) is planned and configured only with the kubernetes output ({config}), and the "
        "workload's outputs (terraform) leave it out"
    )
