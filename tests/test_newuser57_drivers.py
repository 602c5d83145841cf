"""newuser57 items 5 and 6: the host driver settings a bare-metal pool's Ansible vars carry, and the Ubuntu series.

Item 5: ``specgen_nvidia_driver`` names the kernel-module flavor by GPU architecture (NVIDIA's driver installation
guide, kernel-modules.html: the proprietary flavor "is required for older GPUs from the Maxwell, Pascal, or Volta
architectures", the open modules are "only for Turing and newer architectures"; NVIDIA's announcement: Grace Hopper and
Blackwell "must use the open-source GPU kernel modules"); Fabric Manager runs on NVSwitch baseboards only (eight V100
SXM2 are a DGX-1 hybrid cube mesh without NVSwitch), and fourth-generation NVSwitch boards (HGX B100 / B200 / B300)
also run NVLink Subnet Manager (Fabric Manager user guide, "Systems Using Fourth Generation NVSwitches").

Item 6: ``provisioning.distro_series`` is refused where it names no Ubuntu LTS series, and a series the rendered driver
stacks do not cover (NVIDIA R580 with CUDA 13.0, ROCm 7.0.0: noble and jammy) is a warning of its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator import catalog
from generator.api import plan_file, render_file
from generator.planner.nodes import has_nvswitch
from generator.render.nvidia_modules import KERNEL_MODULES
from tests.conftest import REPO
from tests.helpers import ansible_reader, edited_copy, load_errors, run_specgen

HEADER = """\
version: 1
name: drivers
deployments:
  - name: small
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 2}
"""
V100_SERVER = """\
    - custom:
        name: old-dgx1
        gpu: v100-sxm2-32gb
        gpus_per_server: 8
        kind: hgx-8gpu
        cpu_sockets: 2
        ram_gib: 512
        max_power_w: 3500
        rack_units: 3
      count: 1
"""
OWNED = """\
hardware:
  provider: baremetal
  buy: false
  inventory:
{inventory}outputs: [terraform, ansible, kubernetes]
{extra}"""


def _owned(tmp_path: Path, inventory: str, extra: str = "", header: str = HEADER) -> str:
    path = tmp_path / "w.yaml"
    path.write_text(header + OWNED.format(inventory=inventory, extra=extra), encoding="utf-8")
    return str(path)


def _catalog_server(platform: str, gpu: str) -> str:
    return f"    - platform: {platform}\n      gpu: {gpu}\n      count: 1\n"


def _driver_vars(files: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Each pool's ``specgen_nvidia_driver``, by pool group name."""
    out = {}
    for name, text in files.items():
        if name.startswith("ansible/group_vars/"):
            out[name.removeprefix("ansible/group_vars/").removesuffix(".yml")] = ansible_reader().load(text)[
                "specgen_nvidia_driver"
            ]
    return out


@pytest.mark.parametrize(
    ("inventory", "modules", "fabric_manager", "nvlsm"),
    [
        # newuser57's v100.yaml: eight V100 SXM2, a DGX-1 hybrid cube mesh: proprietary modules, no NVSwitch
        pytest.param(V100_SERVER, "proprietary", False, False, id="v100-sxm2-dgx1-class"),
        # DGX B200: Blackwell needs the open modules; its fourth-generation NVSwitches need FM and NVLSM
        pytest.param(_catalog_server("dgx-b200", "b200-sxm-180gb"), "open", True, True, id="dgx-b200"),
        # HGX H100: third-generation NVSwitch, Fabric Manager alone
        pytest.param(_catalog_server("dgx-h100", "h100-sxm5-80gb"), "open", True, False, id="dgx-h100"),
    ],
)
def test_the_driver_vars_say_the_flavor_and_the_fabric_services_by_hardware(
    tmp_path: Path, inventory: str, modules: str, fabric_manager: bool, nvlsm: bool
) -> None:
    (driver,) = _driver_vars(render_file(_owned(tmp_path, inventory))).values()
    assert driver["kernel_modules"] == modules
    assert driver["fabric_manager"] is fabric_manager
    assert driver.get("nvlink_subnet_manager", False) is nvlsm
    assert "nvlink_subnet_manager" not in driver or nvlsm  # rendered only where it applies


def test_one_inventory_of_volta_and_blackwell_keeps_each_pools_flavor_in_its_group_vars(tmp_path: Path) -> None:
    header = HEADER.replace("    inference: {precision: bf16", "    platform: old-dgx1\n    inference: {precision: bf16") + (
        "  - name: big\n"
        "    platform: dgx-b200\n"
        "    model: meta-llama/Llama-3.1-405B-Instruct\n"
        "    inference: {precision: fp8, max_context_tokens: 8192, requests_per_second: 1}\n"
    )
    inventory = V100_SERVER + _catalog_server("dgx-b200", "b200-sxm-180gb")
    drivers = _driver_vars(render_file(_owned(tmp_path, inventory, header=header)))
    by_flavor = {name: (d["kernel_modules"], d["fabric_manager"], d.get("nvlink_subnet_manager")) for name, d in drivers.items()}
    assert sorted(by_flavor.values(), key=str) == sorted([("proprietary", False, None), ("open", True, True)], key=str), by_flavor


@pytest.mark.parametrize(
    ("gpu_id", "nvswitch"),
    [
        pytest.param("v100-sxm2-32gb", False, id="v100-sxm2-hybrid-cube-mesh"),
        pytest.param("a100-sxm4-80gb", True, id="a100-2nd-gen"),
        pytest.param("h100-sxm5-80gb", True, id="h100-3rd-gen"),
        pytest.param("b200-sxm-180gb", True, id="b200-4th-gen"),
    ],
)
def test_only_an_nvswitch_generation_makes_eight_sxm_gpus_an_nvswitch_board(gpu_id: str, nvswitch: bool) -> None:
    platform = catalog.platforms()["dgx-b200"]  # an hgx-8gpu chassis: the GPU's generation decides
    assert has_nvswitch(platform, catalog.gpus()[gpu_id], 8) is nvswitch


def test_every_catalog_nvidia_architecture_has_a_kernel_module_flavor() -> None:
    nvidia = {g.architecture for g in catalog.gpus().values() if g.vendor == "nvidia"}
    assert nvidia <= set(KERNEL_MODULES), nvidia - set(KERNEL_MODULES)
    assert KERNEL_MODULES["volta"] == "proprietary"
    assert KERNEL_MODULES["blackwell"] == KERNEL_MODULES["hopper"] == "open"


# --- item 6: provisioning.distro_series ------------------------------------------------------------------------------

MAAS = REPO / "examples" / "chat-70b-maas.yaml"


@pytest.mark.parametrize("series", ["windows", "plucky", "ubuntu"])
def test_a_series_that_is_no_ubuntu_lts_release_is_refused_at_its_field(tmp_path: Path, series: str) -> None:
    path = edited_copy(MAAS, tmp_path, ("tools: [maas]", f"tools: [maas]\n  distro_series: {series}"))
    line = path.read_text(encoding="utf-8").splitlines().index(f"  distro_series: {series}") + 1
    result = run_specgen("validate", str(path))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert f"{path}:{line}:18: provisioning.distro_series: '{series}' is not an Ubuntu LTS series" in result.stderr


@pytest.mark.parametrize("series", ["noble", "jammy", "focal", "bionic"])
def test_an_ubuntu_lts_series_loads(tmp_path: Path, series: str) -> None:
    path = edited_copy(MAAS, tmp_path, ("tools: [maas]", f"tools: [maas]\n  distro_series: {series}"))
    assert load_errors(path) == []


def _series_findings(path: str) -> list[Any]:
    return [f for f in plan_file(path)[1].findings if f.code == "driver-series-unsupported"]


@pytest.mark.parametrize(
    ("series", "warned"),
    [
        pytest.param("bionic", True, id="bionic"),
        pytest.param("focal", True, id="focal-dropped-by-cuda-13"),
        pytest.param("jammy", False, id="jammy"),
        pytest.param("noble", False, id="noble"),
    ],
)
def test_maas_deploying_a_series_the_nvidia_driver_is_not_supported_on_is_warned(
    tmp_path: Path, series: str, warned: bool
) -> None:
    path = edited_copy(MAAS, tmp_path, ("tools: [maas]", f"tools: [maas]\n  distro_series: {series}"))
    findings = _series_findings(str(path))
    assert bool(findings) is warned
    for finding in findings:
        assert finding.level == "warning"
        assert finding.path == "provisioning.distro_series"
        assert f"MAAS deploys Ubuntu {series}" in finding.message
        assert "R580 driver with CUDA 13.0 that Ansible installs (specgen_nvidia_driver)" in finding.message


def test_an_older_driver_branch_pinned_is_left_to_its_own_support_matrix(tmp_path: Path) -> None:
    path = edited_copy(
        MAAS,
        tmp_path,
        ("tools: [maas]", "tools: [maas]\n  distro_series: focal"),
        ("outputs: [terraform", "kubernetes: {driver_version: '535.288.01'}\noutputs: [terraform"),
    )
    assert _series_findings(str(path)) == []


AMD = """\
version: 1
name: amd-maas
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-70B-Instruct
    inference: {{precision: fp8, max_context_tokens: 8192, requests_per_second: 5}}
hardware:
  provider: baremetal
  buy: false
  inventory:
    - platform: dell-xe9680-mi300x
      gpu: mi300x-192gb
      count: 1
      hosts: [{{name: mi-01, ip_address: 10.40.0.11}}]
provisioning:
  tools: [maas]
  distro_series: {series}
"""


def test_an_amd_pool_on_a_series_rocm_does_not_cover_is_a_warning_of_its_own(tmp_path: Path) -> None:
    """newuser57's amd.yaml: focal turned the amdgpu install off, said only inside an info about the device plugin."""
    path = tmp_path / "amd.yaml"
    path.write_text(AMD.format(series="focal"), encoding="utf-8")
    (finding,) = _series_findings(str(path))
    assert finding.level == "warning"
    assert finding.path == "provisioning.distro_series"
    assert finding.message.startswith(
        "pool chat_mi300x_192gb: the hosts' Ubuntu focal (20.04) is not a release AMD's ROCm install guide covers "
        "(noble (24.04), jammy (22.04)), so Ansible installs no amdgpu driver and no ROCm there "
        "(specgen_amdgpu_driver.install: false)"
    )
    group_vars = ansible_reader().load(render_file(str(path))["ansible/group_vars/chat_mi300x_192gb.yml"])
    assert group_vars["specgen_amdgpu_driver"]["install"] is False
    path.write_text(AMD.format(series="noble"), encoding="utf-8")
    assert _series_findings(str(path)) == []
