"""An AMD pool's GPU stack, which specgen does not render: what the plan says it needs, what Ansible installs (newuser21
item 9).

The pool is tainted amd.com/gpu=present:NoSchedule; the AMD device plugin's stock DaemonSet
(ROCm/k8s-device-plugin k8s-ds-amdgpu-dp.yaml) and Helm values tolerate only CriticalAddonsOnly, so the finding names
the toleration to add. A bare-metal pool's Ansible vars carry the amdgpu driver and ROCm as AMD's install guide gives
them for the hosts' Ubuntu series (ROCm 7.0.0: amdgpu-install 7.0.70000-1 under repo.radeon.com/amdgpu-install/7.0).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.api import plan_file, render_file
from tests.helpers import ansible_reader

WORKLOAD = """\
version: 1
name: amd
deployments:
  - name: gemma
    model: google/gemma-2-27b-it
    inference: {{precision: bf16, max_context_tokens: 8192, requests_per_second: 5}}
hardware:
  provider: {provider}
  gpus: [mi300x-192gb]
outputs: [{outputs}]
{extra}"""

TOLERATION = (
    "install it with a toleration for the pool's taint amd.com/gpu=present:NoSchedule ({key: amd.com/gpu, operator: "
    "Exists, effect: NoSchedule}; its stock DaemonSet and its Helm chart's tolerations value tolerate only "
    "CriticalAddonsOnly: https://github.com/ROCm/k8s-device-plugin/blob/037495778be99438cf9e4e99353cb85172a91ee9/"
    "k8s-ds-amdgpu-dp.yaml, https://github.com/ROCm/k8s-device-plugin/blob/0747facd8fc170e8f73f199fe55c28c817d3ea92/"
    "helm/amd-gpu/values.yaml), or it never runs on these nodes and the pool's pods stay pending; "
)
GUIDE = "https://github.com/ROCm/rocm-install-on-linux/blob/009eca53b5f4392a4769ca0581e9735f69f7de48/docs/install/quick-start.rst"


def _workload(tmp_path: Path, provider: str, outputs: str, extra: str = "") -> str:
    path = tmp_path / "amd.yaml"
    path.write_text(WORKLOAD.format(provider=provider, outputs=outputs, extra=extra))
    return str(path)


@pytest.mark.parametrize(
    ("provider", "outputs", "driver"),
    [
        pytest.param(
            "baremetal",
            "terraform, ansible, kubernetes",
            "Ansible installs the amdgpu driver and ROCm (group_vars specgen_amdgpu_driver)",
            id="baremetal-ansible",
        ),
        pytest.param(
            "baremetal",
            "kubernetes",
            f"the nodes also need the amdgpu driver and ROCm, which nothing rendered installs: install them as AMD's "
            f"guide says ({GUIDE})",
            id="baremetal-no-ansible",
        ),
        pytest.param(
            # newuser77 item 1: an AKS node runs AKS's node image, which no host install guide applies to ("use a node
            # image that has them" could not be followed); the AKSNodeClass CRD's gpu.mode None is for a GPU Operator
            "azure",
            "terraform, kubernetes",
            "the nodes also need the amdgpu driver, which nothing rendered installs (the AKS node pool's gpu_driver "
            "and the AKSNodeClass's gpu.mode are None): install AMD's GPU Operator, whose Kernel Module Management "
            "operator builds and loads the amdgpu driver on each node and which runs the device plugin and the node "
            "labeller (https://github.com/ROCm/gpu-operator/blob/21575c33014500c81d56c7b4379e60d006cd473d/docs/"
            "overview.md)",
            id="azure",
        ),
        pytest.param(
            "azure",
            "kubernetes",
            "the nodes also need the amdgpu driver, which nothing rendered installs (the AKSNodeClass's gpu.mode is "
            "None): install AMD's GPU Operator, whose Kernel Module Management operator builds and loads the amdgpu "
            "driver on each node and which runs the device plugin and the node labeller (https://github.com/ROCm/"
            "gpu-operator/blob/21575c33014500c81d56c7b4379e60d006cd473d/docs/overview.md)",
            id="azure-karpenter-alone",
        ),
    ],
)
def test_the_finding_names_the_toleration_and_the_driver(tmp_path: Path, provider: str, outputs: str, driver: str) -> None:
    findings = plan_file(_workload(tmp_path, provider, outputs))[1].findings
    (finding,) = [f for f in findings if f.code == "device-plugin-not-rendered"]
    assert finding.message == (
        "pool gemma_mi300x_192gb: its GPUs are advertised as amd.com/gpu by the AMD GPU device plugin, which specgen "
        "does not render (it renders NVIDIA's GPU stack only): " + TOLERATION + driver
    )


@pytest.mark.parametrize(
    ("extra", "release", "deb"),
    [
        pytest.param(
            "",
            "noble",
            "https://repo.radeon.com/amdgpu-install/7.0/ubuntu/noble/amdgpu-install_7.0.70000-1_all.deb",
            id="default-noble",
        ),
        pytest.param(
            "provisioning: {distro_series: jammy}\n",
            "jammy",
            "https://repo.radeon.com/amdgpu-install/7.0/ubuntu/jammy/amdgpu-install_7.0.70000-1_all.deb",
            id="jammy",
        ),
        pytest.param("provisioning: {distro_series: focal}\n", "focal", None, id="focal-not-in-the-guide"),
    ],
)
def test_a_bare_metal_amd_pool_gets_the_rocm_driver_vars(tmp_path: Path, extra: str, release: str, deb: str | None) -> None:
    files = render_file(_workload(tmp_path, "baremetal", "terraform, ansible, kubernetes", extra))
    group_vars = ansible_reader().load(files["ansible/group_vars/gemma_mi300x_192gb.yml"])
    assert group_vars["specgen_amdgpu_driver"] == {
        "install": deb is not None,  # review 17 item L4: a release the guide does not cover gets nothing installed
        "rocm_version": "7.0.0",
        "ubuntu_release": release,
        "amdgpu_install_deb": deb,
        "kernel_packages": ["linux-headers", "linux-modules-extra"],
        "driver_package": "amdgpu-dkms",
        "rocm_package": "rocm",
        "user_groups": ["render", "video"],
        "reboot_after_driver": True,
        "sources": [
            GUIDE,
            "https://github.com/ROCm/rocm-install-on-linux/blob/0078423c905112fc8de1afe7b8439ff429194266/docs/conf.py",
        ],
    }
    assert "specgen_nvidia_driver" not in group_vars
    (finding,) = [f for f in json.loads(files["spec.json"])["plan"]["findings"] if f["code"] == "device-plugin-not-rendered"]
    installs = "Ansible installs the amdgpu driver and ROCm" in finding["message"]
    assert installs is (deb is not None)


def test_a_cloud_amd_pool_gets_no_driver_vars(tmp_path: Path) -> None:
    files = render_file(_workload(tmp_path, "azure", "terraform, ansible, kubernetes"))
    (path,) = [p for p in files if p.startswith("ansible/group_vars/")]
    assert "specgen_amdgpu_driver" not in ansible_reader().load(files[path])


@pytest.mark.parametrize(("rate", "code"), [(5, "device-plugin-not-rendered"), (60, "amd-device-plugin")])
def test_one_host_without_a_cluster_is_told_not_warned(tmp_path: Path, rate: int, code: str) -> None:
    """fuzz18 item 10: one bare-metal host gets no Kubernetes output, so no pod waits on the plugin (a warning made
    --fail-on warning exit 5); a fleet of several hosts is a cluster, whose plugin the render now installs (newuser103
    item 2: it was a warning that specgen rendered none), so neither is a warning."""
    path = tmp_path / "amd.yaml"
    text = WORKLOAD.format(provider="baremetal", outputs="ansible, kubernetes", extra="")
    path.write_text(text.replace("requests_per_second: 5", f"requests_per_second: {rate}"))
    plan = plan_file(str(path))[1]
    (finding,) = [f for f in plan.findings if f.code in ("device-plugin-not-rendered", "amd-device-plugin")]
    assert (finding.code, finding.level) == (code, "info")
    assert (sum(p.hosts for p in plan.pools) == 1) is (code == "device-plugin-not-rendered")


AMD_VALUES = "cluster/amd-gpu/values.yaml"


def test_a_bare_metal_amd_cluster_gets_the_device_plugin_tolerating_its_taint(tmp_path: Path) -> None:
    """newuser103 item 2: a kubeadm cluster of MI300X nodes got no device plugin at all (only a warning), so every pod
    asking amd.com/gpu stayed Pending; the render now carries ROCm's amd-gpu chart values, its CriticalAddonsOnly
    toleration kept beside one for the taint the join file gives the nodes."""
    path = tmp_path / "amd.yaml"
    text = WORKLOAD.format(provider="baremetal", outputs="ansible, kubernetes", extra="")
    path.write_text(text.replace("requests_per_second: 5", "requests_per_second: 60"))
    files = render_file(str(path))
    assert not any(p.startswith("cluster/gpu-operator/") for p in files)  # no NVIDIA stack for AMD nodes
    values_text = files[AMD_VALUES]
    assert "#   helm upgrade --install amd-gpu amd-gpu \\\n#     --repo https://rocm.github.io/k8s-device-plugin/ \\\n" in (
        values_text
    )
    assert "#     --version 0.16.0 -n kube-system -f values.yaml\n" in values_text
    values = ansible_reader().load(values_text)
    assert values == {
        "tolerations": [
            {"key": "CriticalAddonsOnly", "operator": "Exists"},
            {"effect": "NoSchedule", "key": "amd.com/gpu", "operator": "Exists"},
        ]
    }
    (join,) = [p for p in files if p.startswith("kubeadm/join-")]
    assert "key: amd.com/gpu" in files[join]  # the taint the toleration answers


def _mirror_findings(path: str) -> list[dict[str, str]]:
    findings = json.loads(render_file(path)["spec.json"])["plan"]["findings"]
    return [f for f in findings if f["code"] == "mirrors-not-covered"]


def test_the_amd_device_plugin_pulls_from_the_site_mirror(tmp_path: Path) -> None:
    """An air-gapped site's registry, pull secret and chart repository reach the AMD plugin as the GPU Operator's."""
    mirrors = (
        "mirrors: {container_registry: reg.colo.example:5000/mirror, image_pull_secret: colo-registry, "
        "helm_repository: oci://reg.colo.example:5000/charts}\n"
    )
    path = tmp_path / "amd.yaml"
    text = WORKLOAD.format(provider="baremetal", outputs="ansible, kubernetes", extra=mirrors)
    path.write_text(text.replace("requests_per_second: 5", "requests_per_second: 60"))
    values_text = render_file(str(path))[AMD_VALUES]
    assert "#   kubectl -n kube-system create secret docker-registry colo-registry ...\n" in values_text
    assert "#     oci://reg.colo.example:5000/charts/amd-gpu \\\n" in values_text
    values = ansible_reader().load(values_text)
    assert values["dp"] == {"image": {"repository": "reg.colo.example:5000/mirror/rocm/k8s-device-plugin"}}
    assert values["imagePullSecrets"] == [{"name": "colo-registry"}]
    (finding,) = _mirror_findings(str(path))
    assert finding["message"].startswith("mirrors redirect the images and the AMD device plugin chart the rendered files name")
    assert "rocm.github.io" not in finding["message"]
    path.write_text(path.read_text().replace(", helm_repository: oci://reg.colo.example:5000/charts", ""))
    (finding,) = _mirror_findings(str(path))
    assert "ROCm's amd-gpu device plugin chart comes from https://rocm.github.io/k8s-device-plugin/" in finding["message"]


def test_a_single_amd_host_gets_no_device_plugin(tmp_path: Path) -> None:
    """One bare-metal host is its own cluster: no Kubernetes output, so no plugin values either."""
    files = render_file(_workload(tmp_path, "baremetal", "ansible, kubernetes"))
    assert AMD_VALUES not in files
