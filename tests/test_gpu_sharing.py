"""GPU sharing (kubernetes.gpu_sharing): validated against the GPUs with file:line:col, rendered natively per provider.

MIG profile names and instance counts below are from NVIDIA's MIG user guide, Supported MIG Profiles
(https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from generator.api import plan_file, render_file
from generator.errors import InputError, MultipleInputError, SpecgenError
from generator.render.gpu_sharing import device_plugin_config, mig_instances
from generator.workload import load_workload
from generator.workload.models import GpuSharing
from tests.helpers import ansible_reader
from tests.test_iac_outputs import lint

HEAD = """\
version: 1
name: small
deployments:
  - name: assistant
    model: meta-llama/Llama-3.1-8B-Instruct
    inference:
      precision: fp8
      max_context_tokens: 8192
      avg_input_tokens: 800
      avg_output_tokens: 200
      requests_per_second: 2
hardware:
  provider: {provider}
{gpus}outputs: [terraform, ansible, kubernetes]
kubernetes:
{extra}  gpu_sharing:
"""


def workload_text(sharing: str, *, gpus: str | None = "a100-sxm4-80gb", provider: str = "baremetal", extra: str = "") -> str:
    gpu_line = f"  gpus: [{gpus}]\n" if gpus else ""
    return HEAD.format(provider=provider, gpus=gpu_line, extra=extra) + sharing


def one_gpu(text: str) -> str:
    """The workload with its replicas pinned to one GPU: only such pools are time-sliced or MPS-shared (a pod of
    several shared GPUs could get slices of one; newuser16 H1)."""
    return text.replace("    inference:\n", "    parallelism: {tp: 1}\n    inference:\n", 1)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "small.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def messages(exc: SpecgenError) -> list[str]:
    errors = exc.errors if isinstance(exc, MultipleInputError) else [exc]
    return [str(e) for e in errors]


# (sharing block, allowed GPUs, expected "file:line:col: field: message" fragment); line 14 holds `gpus: [...]`
REFUSED = [
    (
        "    strategy: mig\n    mig_profile: 1g.10gb\n",
        "l4-24gb",
        "small.yaml:14:10: hardware.gpus[0]: GPU 'l4-24gb' does not support MIG",
    ),
    (
        "    strategy: mig\n    mig_profile: 1g.5gb\n",
        "a100-sxm4-80gb",
        # fuzz32 item 12: at the profile, which is what is wrong, with the GPU's field named
        "small.yaml:19:18: kubernetes.gpu_sharing.mig_profile: MIG profile '1g.5gb' does not exist on GPU 'a100-sxm4-80gb' "
        "(it has 1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb); the GPU from hardware.gpus[0]",
    ),
    (
        # newuser69 item 8: refused only where no GPU allowed takes it (beside an H100 the RTX 4090 is left out)
        "    strategy: mig\n    mig_profile: 1g.10gb\n",
        "l4-24gb, rtx-4090-24gb",
        "small.yaml:14:19: hardware.gpus[1]: GPU 'rtx-4090-24gb' does not support MIG",
    ),
    (
        "    strategy: mig\n    mig_profile: 1g.12gb\n",
        "h20-96gb",
        "small.yaml:14:10: hardware.gpus[0]: GPU 'h20-96gb' supports MIG but the catalog has no MIG profile list for it",
    ),
    (
        "    strategy: mig\n",
        "a100-sxm4-80gb",
        "small.yaml:18:15: kubernetes.gpu_sharing.strategy: strategy mig needs mig_profile",
    ),
    (
        # newuser69 item 8: without hardware.gpus, refused where no GPU the catalog offers has the profile
        "    strategy: mig\n    mig_profile: 5g.50gb\n",
        None,
        "small.yaml:18:18: kubernetes.gpu_sharing.mig_profile: no GPU the catalog offers on baremetal has MIG profile '5g.50gb'",
    ),
    (
        "    strategy: mig\n    mig_profile: 1g.10gb\n    replicas_per_gpu: 2\n",
        "a100-sxm4-80gb",
        "small.yaml:20:23: kubernetes.gpu_sharing.replicas_per_gpu: replicas_per_gpu is for time-slicing and mps, not mig",
    ),
    (
        "    strategy: time-slicing\n",
        "a100-sxm4-80gb",
        "small.yaml:18:15: kubernetes.gpu_sharing.strategy: strategy time-slicing needs replicas_per_gpu",
    ),
    (
        "    strategy: mps\n    replicas_per_gpu: 4\n    mig_profile: 1g.10gb\n",
        "a100-sxm4-80gb",
        "small.yaml:20:18: kubernetes.gpu_sharing.mig_profile: mig_profile is for strategy mig, not mps",
    ),
    (
        "    strategy: mps\n    replicas_per_gpu: 4\n",
        "mi300x-192gb",
        "small.yaml:14:10: hardware.gpus[0]: GPU 'mi300x-192gb' is not an NVIDIA GPU",
    ),
    (
        "    strategy: time-slicing\n    replicas_per_gpu: 49\n",
        "l4-24gb",
        "small.yaml:19:23: kubernetes.gpu_sharing.replicas_per_gpu: 49 is out of range: must be <= 48",
    ),
    (
        "    strategy: time-slicing\n    replicas_per_gpu: 1\n",
        "l4-24gb",
        "small.yaml:19:23: kubernetes.gpu_sharing.replicas_per_gpu: 1 is out of range: must be >= 2",
    ),
    (
        "    strategy: mig\n    mig_profile: 1g.10GB\n",
        "a100-sxm4-80gb",
        "small.yaml:19:18: kubernetes.gpu_sharing.mig_profile: '1g.10GB' is written in lower case here: '1g.10gb'",
    ),
    (
        "    strategy: shared\n    replicas_per_gpu: 2\n",
        "l4-24gb",
        "small.yaml:18:15: kubernetes.gpu_sharing.strategy: 'shared' is not one of mig, mps, time-slicing",
    ),
    (
        "    strategy: mps\n    replicas_per_gpu: 2\n    memory: 10\n",
        "l4-24gb",
        "small.yaml:20:5: kubernetes.gpu_sharing.memory: unknown field 'memory'",
    ),
]


def test_sharing_a_fixed_machines_gpu_is_refused_at_the_field(tmp_path: Path) -> None:
    """fuzz17 item 10: a 17.1 GiB model passed in a 1g.10gb instance of a fixed machine, whose plan is one llama.cpp
    placement, and a MIG label was rendered where a warning said no sharing config is."""
    path = tmp_path / "fixed.yaml"
    path.write_text(
        "version: 1\nname: gs\ndeployments:\n  - name: chat\n    model: Qwen/Qwen3-8B\n    inference: {precision: bf16, "
        "max_context_tokens: 8192, requests_per_second: 0.01}\nhardware:\n  provider: baremetal\n  fixed: {gpu: "
        "h100-pcie-80gb, gpu_count: 1, ram_gib: 64}\nkubernetes:\n  gpu_sharing: {strategy: mig, mig_profile: 1g.10gb}\n"
    )
    with pytest.raises(InputError, match=r"fixed\.yaml:11:16: kubernetes\.gpu_sharing: not with hardware\.fixed"):
        load_workload(str(path))


@pytest.mark.parametrize(("sharing", "gpus", "expected"), REFUSED)
def test_refused_sharing_names_file_line_col(tmp_path: Path, sharing: str, gpus: str | None, expected: str) -> None:
    with pytest.raises((InputError, MultipleInputError)) as info:
        load_workload(str(write(tmp_path, workload_text(sharing, gpus=gpus))))
    assert any(expected in m for m in messages(info.value)), messages(info.value)


@pytest.mark.parametrize(
    ("sharing", "gpus"),
    [
        ("    strategy: time-slicing\n    replicas_per_gpu: 48\n", None),
        ("    strategy: mps\n    replicas_per_gpu: 2\n", "l4-24gb"),
        ("    strategy: mig\n    mig_profile: 1g.18gb\n", "h200-sxm-141gb"),
        ("    strategy: mig\n    mig_profile: 2g.48gb\n", "rtx-pro-6000-blackwell-96gb"),
    ],
)
def test_accepted_sharing(tmp_path: Path, sharing: str, gpus: str | None) -> None:
    loaded = load_workload(str(write(tmp_path, workload_text(sharing, gpus=gpus))))
    assert loaded.workload.kubernetes.gpu_sharing is not None


# (GPU, profile, instances per GPU) from the MIG user guide's tables
MIG_GUIDE = [
    ("a100-sxm4-40gb", "1g.5gb", 7),
    ("a100-sxm4-40gb", "1g.10gb", 4),
    ("a100-sxm4-40gb", "2g.10gb", 3),
    ("a100-sxm4-40gb", "3g.20gb", 2),
    ("a100-sxm4-40gb", "4g.20gb", 1),
    ("a100-sxm4-40gb", "7g.40gb", 1),
    ("a100-sxm4-80gb", "1g.20gb", 4),
    ("h100-sxm5-80gb", "1g.10gb", 7),
    ("h200-sxm-141gb", "1g.35gb", 4),
    ("h200-sxm-141gb", "3g.71gb", 2),
    ("b200-sxm-180gb", "2g.45gb", 3),
    ("rtx-pro-6000-blackwell-96gb", "1g.24gb", 4),
    ("rtx-pro-6000-blackwell-96gb", "2g.48gb", 2),
    ("rtx-pro-6000-blackwell-96gb", "4g.96gb", 1),
]


@pytest.mark.parametrize(("gpu", "profile", "count"), MIG_GUIDE)
def test_mig_instances_per_gpu_match_the_mig_user_guide(gpu: str, profile: str, count: int) -> None:
    assert mig_instances(gpu, profile) == count


def load(text: str) -> Any:
    return YAML(typ="safe", pure=True).load(text)


@pytest.mark.parametrize(
    ("sharing", "section"),
    [
        (GpuSharing(strategy="time-slicing", replicas_per_gpu=4), "timeSlicing"),
        (GpuSharing(strategy="mps", replicas_per_gpu=3), "mps"),
    ],
)
def test_device_plugin_config_shares_replicas(sharing: GpuSharing, section: str) -> None:
    config = load(device_plugin_config(sharing))
    assert config == {
        "version": "v1",
        "flags": {"migStrategy": "none"},
        "sharing": {
            section: {
                "resources": [{"name": "nvidia.com/gpu", "replicas": sharing.replicas_per_gpu}],
                # newuser16 H1: a pod asking for two slices could be handed two of one GPU (the plugin's README)
                **({"failRequestsGreaterThanOne": True} if section == "timeSlicing" else {}),
            }
        },
    }
    assert load(device_plugin_config(None)) == {"version": "v1", "flags": {"migStrategy": "none"}}


ONE_HOST, TWO_HOSTS = "requests_per_second: 2\n", "requests_per_second: 20\n"  # a single host joins no cluster


def test_time_slicing_on_bare_metal_goes_into_the_pools_device_plugin_key(tmp_path: Path) -> None:
    files = render_file(
        str(
            write(
                tmp_path,
                one_gpu(workload_text("    strategy: time-slicing\n    replicas_per_gpu: 4\n", gpus="a100-sxm4-80gb")).replace(
                    ONE_HOST,
                    ONE_HOST + "      min_replicas: 2\n",  # spread over two hosts: they join a cluster
                ),
            )
        )
    )
    config_map = load(files["cluster/gpu-operator/manifests/configmap-specgen-device-plugin.yaml"])
    pool_keys = [k for k in config_map["data"] if k != "default"]
    assert pool_keys
    for key in pool_keys:
        assert load(config_map["data"][key])["sharing"]["timeSlicing"]["resources"] == [{"name": "nvidia.com/gpu", "replicas": 4}]
    assert load(config_map["data"]["default"]) == {"version": "v1", "flags": {"migStrategy": "none"}}
    assert "gpu-sharing" in files["spec.json"]
    assert not lint(files)


def test_mig_on_aws_uses_the_mig_manager(tmp_path: Path) -> None:
    files = render_file(
        str(
            write(tmp_path, workload_text("    strategy: mig\n    mig_profile: 3g.40gb\n", gpus="h100-sxm5-80gb", provider="aws"))
        )
    )
    values = load(files["cluster/gpu-operator/values.yaml"])
    assert values["mig"] == {"strategy": "single"}
    assert values["migManager"] == {
        "enabled": True,
        "config": {"create": False, "name": "specgen-mig-parted", "default": "all-disabled"},
    }
    parted = load(load(files["cluster/gpu-operator/manifests/configmap-specgen-mig-parted.yaml"])["data"]["config.yaml"])
    assert parted["mig-configs"]["h100-sxm5-80gb-3g.40gb"] == [
        {"devices": "all", "mig-enabled": True, "mig-devices": {"3g.40gb": 2}}
    ]
    node_pools = [load(t) for p, t in files.items() if p.startswith("kubernetes/aws/nodepool-")]
    assert node_pools
    for pool in node_pools:
        assert pool["spec"]["template"]["metadata"]["labels"]["nvidia.com/mig.config"] == "h100-sxm5-80gb-3g.40gb"
    config_map = load(files["cluster/gpu-operator/manifests/configmap-specgen-device-plugin.yaml"])
    assert {load(t)["flags"]["migStrategy"] for k, t in config_map["data"].items() if k != "default"} == {"single"}
    assert not lint(files)
    from tests import test_oracles

    for path in ("configmap-specgen-mig-parted.yaml", "configmap-specgen-device-plugin.yaml"):
        assert not test_oracles.core_errors(load(files[f"cluster/gpu-operator/manifests/{path}"])), path


def test_mig_on_aks_without_terraform_says_karpenter_for_azure_has_no_mig_field(tmp_path: Path) -> None:
    """Without Terraform there is no AKS node pool to give a GPU instance profile: Karpenter and the MIG manager do it
    (tests/test_aks_mig.py: with Terraform, AKS's own MIG setting)."""
    text = workload_text("    strategy: mig\n    mig_profile: 3g.40gb\n", gpus="h100-sxm5-80gb", provider="azure")
    text = text.replace("outputs: [terraform, ansible, kubernetes]", "outputs: [ansible, kubernetes]")
    files = render_file(str(write(tmp_path, text)))
    assert "gpu-sharing-aks-mig" in files["SPEC.md"] and "gpuInstanceProfile" in files["SPEC.md"]
    classes = [load(t) for p, t in files.items() if p.startswith("kubernetes/azure/nodepool-")]
    assert classes and all(c["spec"]["template"]["metadata"]["labels"]["nvidia.com/mig.config"] for c in classes)
    from tests import test_oracles

    test_oracles.needs_crds()
    test_oracles.CURRENT_PROVIDER[0] = "azure"
    try:
        docs = [load(t) for p, t in files.items() if p.startswith("kubernetes/azure/") and "kustomization" not in p]
        problems = [e for doc in docs for e in test_oracles.crd_errors(doc)]
    finally:
        test_oracles.CURRENT_PROVIDER[0] = "baremetal"
    assert not problems, problems


def test_gke_time_sharing_renders_gpu_sharing_config(tmp_path: Path) -> None:
    gke = "  gcp_project: acme-inference\n  location: us-central1\n  zone: us-central1-a\n"
    text = one_gpu(
        workload_text("    strategy: time-slicing\n    replicas_per_gpu: 4\n", gpus="a100-sxm4-80gb", provider="gcp", extra=gke)
    )
    files = render_file(str(write(tmp_path, text)))
    pools = [load(t) for p, t in files.items() if p.startswith("kubernetes/gcp/containernodepool-")]
    assert pools
    for pool in pools:
        accelerator = pool["spec"]["nodeConfig"]["guestAccelerator"][0]
        assert accelerator["gpuSharingConfig"] == {"gpuSharingStrategy": "TIME_SHARING", "maxSharedClientsPerGpu": 4}
        assert "gpuPartitionSize" not in accelerator
    assert not [p for p in files if "mig-parted" in p]
    assert not lint(files)
    from tests import test_oracles

    test_oracles.needs_crds()
    test_oracles.CURRENT_PROVIDER[0] = "gcp"
    try:
        problems = [e for pool in pools for e in test_oracles.crd_errors(pool)]
    finally:
        test_oracles.CURRENT_PROVIDER[0] = "baremetal"
    assert not problems, problems


def test_a_single_host_is_told_that_no_sharing_config_is_rendered(tmp_path: Path) -> None:
    files = render_file(str(write(tmp_path, workload_text("    strategy: mps\n    replicas_per_gpu: 2\n"))))
    assert json.loads(files["spec.json"])["plan"]["pools"][0]["shares_per_gpu"] == 2
    assert not [p for p in files if p.startswith("cluster/")]
    assert "gpu-sharing-single-host" in files["spec.json"]


def test_no_sharing_findings_where_no_pool_shares(tmp_path: Path) -> None:
    """fuzz32 item 13: the 8B fp8 service does not fit half an L4 (12 GB), so its one host keeps a whole GPU; the plan
    said "GPU sharing configured" and told the user to partition that host's GPUs themselves."""
    files = render_file(str(write(tmp_path, workload_text("    strategy: mps\n    replicas_per_gpu: 2\n", gpus="l4-24gb"))))
    spec = json.loads(files["spec.json"])
    (pool,) = spec["plan"]["pools"]
    assert "shares_per_gpu" not in pool and "gpu_sharing" not in pool
    codes = {f["code"]: f["message"] for f in spec["plan"]["findings"]}
    assert "gpu-sharing-single-host" not in codes
    assert codes["gpu-sharing"] == (
        "GPU sharing asked (mps x2) but no pool shares its GPUs, so none is configured: every pool keeps whole GPUs "
        "(gpu-sharing-whole-gpus)"
    )
    assert codes["gpu-sharing-whole-gpus"].startswith(f"pool(s) {pool['name']} keep whole GPUs (no mps)")
    assert "gpu-share-too-small" in codes


def test_gke_pool_labels_agree_across_outputs() -> None:
    """GKE runs no GPU Operator, so no output carries its nvidia.com/device-plugin.config label (the plan has none)."""
    files = render_file(str(Path(__file__).resolve().parents[1] / "examples" / "small-models-gke-sharing.yaml"))
    expected = {
        "specgen.dev/gpu": "a100-sxm4-80gb",
        "specgen.dev/platform": "gcp-a2-ultragpu-1g",
        "specgen.dev/pool": "assistant-a100-sxm4-80gb",
    }
    pool = "assistant_a100_sxm4_80gb"
    (planned,) = json.loads(files["spec.json"])["plan"]["pools"]
    assert dict(planned["labels"]) == expected
    assert json.loads(files["terraform/specgen.auto.tfvars.json"])["gpu_pools"][pool]["labels"] == expected
    group = ansible_reader().load(files[f"ansible/group_vars/{pool}.yml"])
    assert group["specgen_kubernetes"]["node_labels"] == expected
    # the node pool's name adds its sharing: GKE cannot change it in place (newuser40 item 4)
    node_pool = load(files["kubernetes/gcp/containernodepool-assistant-a100-sxm4-80gb-mig-3g-40gb.yaml"])
    assert node_pool["spec"]["nodeConfig"]["labels"] == expected


@pytest.mark.parametrize(
    ("sharing", "gpu", "provider", "per_gpu"),
    [
        # time-slicing: each GPU advertised 4 times; MIG single strategy: 3g.40gb gives 2 instances per H100
        ("    strategy: time-slicing\n    replicas_per_gpu: 2\n", "l40s-48gb", "aws", 2),
        ("    strategy: mig\n    mig_profile: 3g.40gb\n", "h100-sxm5-80gb", "aws", 2),
        ("    strategy: mps\n    replicas_per_gpu: 3\n", "h100-sxm5-80gb", "azure", 3),
    ],
)
def test_a_karpenter_gpu_limit_counts_what_shared_nodes_advertise(
    tmp_path: Path, sharing: str, gpu: str, provider: str, per_gpu: int
) -> None:
    # Karpenter sums the registered nodes' advertised nvidia.com/gpu against the NodePool limit: counting physical
    # GPUs only, the first shared node would use up the limit and the plan's next node would never be launched
    files = render_file(str(write(tmp_path, one_gpu(workload_text(sharing, gpus=gpu, provider=provider)))))
    pools = {p["name"]: p for p in json.loads(files["spec.json"])["plan"]["pools"]}
    node_pools = [load(t) for p, t in files.items() if p.startswith(f"kubernetes/{provider}/nodepool-")]
    assert node_pools
    for node_pool in node_pools:
        pool = pools[node_pool["spec"]["template"]["metadata"]["labels"]["specgen.dev/pool"].replace("-", "_")]
        # a serving pool keeps one node for a replacement or a rollout's surge (newuser24 item 5), shared like the others
        nodes = pool["nodes"] + 1
        # and limits.nodes: a launching node counts its physical GPUs, so the GPU limit alone let a burst launch
        # per_gpu times the nodes (newuser40 item 1)
        assert node_pool["spec"]["limits"] == {
            "nvidia.com/gpu": str(nodes * pool["node"]["gpus"] * per_gpu),
            "nodes": str(nodes),
        }


@pytest.mark.parametrize(
    ("sharing", "needs", "usable", "kept_whole"),
    [
        # fp8 Llama-3.1-8B at 8,192 tokens needs 11.6 GiB to start; a 1g.10gb instance of an A100 80GB (no nvidia-smi
        # figure: 1/8 of its 80 GiB x 0.908, the lowest measured ratio, 9.08 GiB) gives vLLM 0.9 of it, 8.2 GiB;
        # time-slicing 48 ways, a 48th of 80 GiB (1.67), 0.9 of it 1.5
        ("    strategy: mig\n    mig_profile: 1g.10gb\n", "11.6", "8.2", True),
        ("    strategy: time-slicing\n    replicas_per_gpu: 48\n", "11.6", "1.5", True),
        # 2g.20gb: 18.16 GiB derived, 16.3 for vLLM: it fits and shares
        ("    strategy: mig\n    mig_profile: 2g.20gb\n", "", "", False),
    ],
)
def test_a_model_too_big_for_its_share_keeps_whole_gpus(
    tmp_path: Path, sharing: str, needs: str, usable: str, kept_whole: bool
) -> None:
    """newuser40 item 3: a replica that could not start in its share was rendered into one (a warning, exit 0); it now
    keeps whole GPUs in a pool without sharing, and the warning says why."""
    files = render_file(str(write(tmp_path, one_gpu(workload_text(sharing, gpus="a100-sxm4-80gb", provider="aws")))))
    spec = files["SPEC.md"]
    plan = json.loads(files["spec.json"])["plan"]
    (pool,) = plan["pools"]
    assert ("**warning** `gpu-share-too-small`" in spec) is kept_whole
    assert ("shares_per_gpu" not in pool) is kept_whole
    if kept_whole:
        assert f"needs {needs} GiB per GPU of {usable} GiB usable" in spec
        assert "keeps whole GPUs in pool" in spec
        node_pools = [load(t) for p, t in files.items() if p.startswith("kubernetes/aws/nodepool-")]
        # no MIG partition on its nodes: the model starts on a whole GPU
        assert all("nvidia.com/mig.config" not in n["spec"]["template"]["metadata"]["labels"] for n in node_pools)


@pytest.mark.parametrize(
    ("sharing", "fraction"),
    [
        # every time-sliced pod sees the whole GPU: vLLM's 0.9 of it is split over the 4 pods a GPU takes
        ("    strategy: time-slicing\n    replicas_per_gpu: 4\n", 0.225),
        # a MIG instance is a device of its own, and an MPS client's limit is its own: 0.9 of it
        ("    strategy: mig\n    mig_profile: 3g.40gb\n", 0.9),
        ("    strategy: mps\n    replicas_per_gpu: 2\n", 0.9),
    ],
)
def test_a_time_sliced_pod_is_given_its_share_of_the_gpu_memory(tmp_path: Path, sharing: str, fraction: float) -> None:
    """fuzz17 item 12: the engine settings kept vLLM's 0.9 of the whole GPU, so the second pod on a time-sliced GPU could
    not start."""
    files = render_file(str(write(tmp_path, one_gpu(workload_text(sharing, gpus="a100-sxm4-80gb", provider="aws")))))
    (group_vars,) = [text for path, text in files.items() if path.startswith("ansible/group_vars/")]
    (deployment,) = ansible_reader().load(group_vars)["specgen_deployments"]
    assert deployment["engine"]["gpu_memory_utilization"] == fraction


def test_a_pool_of_several_gpus_a_pod_keeps_whole_gpus(tmp_path: Path) -> None:
    """newuser16 H1: a TP8 pod on a time-sliced node could be handed eight slices of one GPU, and Karpenter's limit
    was multiplied by the slices; such a pool keeps whole GPUs, and the plan says which."""
    text = workload_text("    strategy: time-slicing\n    replicas_per_gpu: 4\n", gpus="a100-sxm4-80gb", provider="aws")
    files = render_file(str(write(tmp_path, text.replace("    inference:\n", "    parallelism: {tp: 8}\n    inference:\n", 1))))
    (pool,) = json.loads(files["spec.json"])["plan"]["pools"]
    (node_pool,) = [load(t) for p, t in files.items() if p.startswith("kubernetes/aws/nodepool-")]
    assert node_pool["spec"]["limits"] == {"nvidia.com/gpu": str((pool["nodes"] + 1) * pool["node"]["gpus"])}
    assert f"pool(s) {pool['name']} keep whole GPUs (no time-slicing)" in files["SPEC.md"]
    assert "**warning** `gpu-share-too-small`" not in files["SPEC.md"]
    # the device plugin is what hands out slices: the pool's key advertises whole GPUs
    plugin = load(files["cluster/gpu-operator/manifests/configmap-specgen-device-plugin.yaml"])
    assert load(plugin["data"][pool["name"].replace("_", "-")]) == {"flags": {"migStrategy": "none"}, "version": "v1"}


def test_a_training_pool_keeps_whole_gpus_under_mig(tmp_path: Path) -> None:
    """Review 13 item 3: a LoRA job's pool got migStrategy single and the MIG label, so each pod would be handed
    MIG slices without NVLink and with a fraction of the memory sized."""
    training = "    training: {method: lora, dataset_tokens: 1000000000, deadline_hours: 2}\n"  # on several nodes
    text = workload_text("    strategy: mig\n    mig_profile: 3g.40gb\n", gpus="a100-sxm4-80gb")
    text = text.replace("    inference:\n", training + "    inference:\n", 1)
    start = text.index("    inference:\n")
    text = text[:start] + text[text.index("hardware:") :]  # the training section replaces the inference one
    files = render_file(str(write(tmp_path, text)))
    (pool,) = json.loads(files["spec.json"])["plan"]["pools"]
    assert "nvidia.com/mig.config" not in pool["labels"]
    plugin = load(files["cluster/gpu-operator/manifests/configmap-specgen-device-plugin.yaml"])
    assert load(plugin["data"][pool["name"].replace("_", "-")])["flags"] == {"migStrategy": "none"}
    assert f"pool(s) {pool['name']} keep whole GPUs (no mig). In {pool['name']}, assistant: a training job" in files["SPEC.md"]


@pytest.mark.parametrize(("sharing", "tp"), [("", 1), ("    strategy: time-slicing\n    replicas_per_gpu: 4\n", 1)])
def test_shared_gpus_break_a_cost_tie_toward_one_gpu_pods(tmp_path: Path, sharing: str, tp: int) -> None:
    """fuzz14 item 6: 30 req/s of an 8B model cost one 4-GPU XE8640 as 1 x TP4 or as 2 x TP1. Unshared, 4 x TP1 fill
    it (newuser46 item 2; the TP4 layout won the tie before, with no idle GPU against 2); with time-slicing, only
    one-GPU pods can use the sharing, so they win it."""
    text = workload_text(sharing, gpus="h100-sxm5-80gb").replace("requests_per_second: 2", "requests_per_second: 30")
    if not sharing:
        text = text.replace("  gpu_sharing:\n", "  cluster_name: small\n")
    _, plan = plan_file(str(write(tmp_path, text)))
    (dep,) = plan.deployments
    assert (dep.tp, plan.pools[0].node.platform_id, plan.pools[0].nodes) == (tp, "dell-xe8640", 1)


def test_an_owned_platform_without_a_gpu_field_has_its_mig_profile_checked(tmp_path: Path) -> None:
    """fuzz15 item 2: an owned dgx-h100 (its GPU implied) passed validate with an A100 profile, then render failed with
    no file, line or field. fuzz32 item 12: said at the profile, the platform's field named."""
    text = workload_text("    strategy: mig\n    mig_profile: 1g.5gb\n", gpus=None)
    text = text.replace("  provider: baremetal\n", "  provider: baremetal\n  inventory:\n    - {platform: dgx-h100, count: 2}\n")
    with pytest.raises((InputError, MultipleInputError)) as info:
        load_workload(str(write(tmp_path, text)))
    # newuser69 item 8: refused where no GPU it may use has the profile (beside an A100 40GB, the owned H100s are left
    # out of the services under it: tests/test_newuser69_sharing.py)
    expected = (
        "small.yaml:20:18: kubernetes.gpu_sharing.mig_profile: MIG profile '1g.5gb' does not exist on GPU 'h100-sxm5-80gb' "
        "(it has 1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb); the GPU from hardware.inventory[0].platform"
    )
    (message,) = messages(info.value)
    assert message.endswith(f"/{expected}")


@pytest.mark.parametrize(("pin", "field"), [("{tp: 2}", "tp"), ("{pp: 2}", "pp"), ("{tp: 2, pp: 1}", "tp")])
def test_a_pinned_multi_gpu_replica_under_mig_keeps_whole_gpus(tmp_path: Path, pin: str, field: str) -> None:
    """A replica pinned to two GPUs under MIG is planned on whole GPUs in a pool left unpartitioned, as an unpinned one
    is (newuser40 item 5); it was refused at its pin (fuzz16 item 4), though MIG is a per-pool setting."""
    text = workload_text("    strategy: mig\n    mig_profile: 3g.40gb\n", gpus="h100-sxm5-80gb", provider="aws")
    text = text.replace("    inference:\n", f"    parallelism: {pin}\n    inference:\n", 1)
    path = write(tmp_path, text)
    load_workload(str(path))  # no error at the pin
    _, plan = plan_file(str(path))
    (dep,) = plan.deployments
    assert getattr(dep, field) == 2
    (pool,) = plan.pools
    assert pool.shares_per_gpu is None
    files = render_file(str(path))
    (rendered,) = json.loads(files["spec.json"])["plan"]["pools"]
    assert "nvidia.com/mig.config" not in rendered["labels"] and "gpu_sharing" not in rendered
    assert f"pool(s) {pool.name} keep whole GPUs (no mig)" in files["SPEC.md"]
    plugin = load(files["cluster/gpu-operator/manifests/configmap-specgen-device-plugin.yaml"])
    assert load(plugin["data"][pool.name.replace("_", "-")])["flags"] == {"migStrategy": "none"}


SHARING_COSTS_MORE = """\
version: 1
name: share-avg
deployments:
  - name: a
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {precision: fp8, max_context_tokens: 4096, requests_per_second: 40, average_requests_per_second: 2}
hardware: {provider: gcp, gpus: [h100-sxm5-80gb]}
kubernetes:
  gcp_project: acme-proj
  location: us-central1
  zone: us-central1-a
  gpu_sharing: {strategy: mig, mig_profile: 1g.20gb}
prices:
  gcp-a3-highgpu-1g: 5
"""


def test_whole_gpus_that_cost_less_are_said_to_cost_less(tmp_path: Path) -> None:
    """fuzz33 item 5: the replica fits its 1g.20gb instance (9 of them are the runner-up), but 2 whole GPUs cost less;
    the finding said a pod there "takes several GPUs, runs a training job, or does not fit its share"."""
    files = render_file(str(write(tmp_path, SHARING_COSTS_MORE)))
    spec = json.loads(files["spec.json"])
    codes = {f["code"]: f["message"] for f in spec["plan"]["findings"]}
    (pool,) = spec["plan"]["pools"]
    (dep,) = spec["plan"]["deployments"]
    shared = next(c for c in dep["runners_up"] if c.get("shares_per_gpu"))
    assert (dep["details"]["usd_per_month"], shared["usd_per_hour"] * 730) == (7300, 10950)
    assert codes["gpu-sharing-whole-gpus"] == (
        f"pool(s) {pool['name']} keep whole GPUs (no mig). In {pool['name']}, a: whole GPUs cost less: it adds "
        "$7,300/month and 2 GPUs to the fleet (fleet $7,300/month), against $10,950/month and 3 GPUs added by its best "
        f"layout with shares, a pool of its own: {shared['summary']} (fleet $10,950/month)"
    )
    assert "gpu-share-too-small" not in codes


REASONS = ("its replica takes", "a training job", "no layout of it fits its share", "whole GPUs cost less")


@pytest.mark.parametrize(
    ("edit", "sharing", "gpus", "reason"),
    [
        (
            lambda t: t.replace("    inference:\n", "    parallelism: {tp: 2, pp: 1}\n    inference:\n", 1),
            "    strategy: mig\n    mig_profile: 3g.40gb\n",
            "h100-sxm5-80gb",
            "assistant: its replica takes 2 GPUs (TP2), and shares could hand one pod slices of one GPU",
        ),
        (
            lambda t: t,
            "    strategy: mps\n    replicas_per_gpu: 2\n",
            "l4-24gb",
            "assistant: no layout of it fits its share (gpu-share-too-small)",
        ),
    ],
    ids=["tensor-parallel", "share-too-small"],
)
def test_a_whole_gpu_pool_gives_only_the_reason_that_applies(
    tmp_path: Path, edit: Any, sharing: str, gpus: str, reason: str
) -> None:
    """fuzz33 item 5: each deployment's own reason, none of the others."""
    files = render_file(str(write(tmp_path, edit(workload_text(sharing, gpus=gpus, provider="aws")))))
    codes = {f["code"]: f["message"] for f in json.loads(files["spec.json"])["plan"]["findings"]}
    message = codes["gpu-sharing-whole-gpus"]
    assert message.endswith(reason)
    assert [r for r in REASONS if r in message] == [next(r for r in REASONS if r in reason)]
