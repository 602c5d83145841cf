"""Pools whose GPU driver the rendered Ansible installs, on an Ubuntu series the driver's packages are not built for.

``provisioning.distro_series`` is the hosts' Ubuntu series: MAAS deploys it, and an AMD pool's Ansible vars install
the amdgpu driver and ROCm for it. A series the driver stack does not cover (``focal``) turned an AMD pool's install off
with no more than half a sentence inside an info about the device plugin, and an NVIDIA pool's went on unwarned
(newuser57 item 6): each is now a warning of its own, at the field, naming what will not be installed.
"""

from __future__ import annotations

from generator import catalog
from generator.planner.plan import Finding, Pool
from generator.workload.models import Workload
from generator.workload.ubuntu_series import UBUNTU_LTS_SERIES

#: The finding's code.
DRIVER_SERIES = "driver-series-unsupported"
#: AMD's ROCm install guide for Linux (the amdgpu kernel driver, then ROCm).
ROCM_INSTALL_GUIDE = (
    "https://github.com/ROCm/rocm-install-on-linux/blob/009eca53b5f4392a4769ca0581e9735f69f7de48/docs/install/quick-start.rst"
)
#: Ubuntu releases the guide covers for ROCm 7.0.0 (its build's ``ubuntu_version_numbers``: 24.04 and 22.04,
#: https://github.com/ROCm/rocm-install-on-linux/blob/0078423c905112fc8de1afe7b8439ff429194266/docs/conf.py).
ROCM_UBUNTU_RELEASES = ("noble", "jammy")
#: Ubuntu releases NVIDIA supports its R580 driver and CUDA 13.0 on: its driver installation guide's "Linux System
#: Requirements" list Ubuntu 24.04 LTS (``ubuntu2404``) and 22.04 LTS (``ubuntu2204``), the repositories its packages
#: come from, and CUDA 13.0 dropped Ubuntu 20.04 ("Deprecated or Dropped Operating Systems").
NVIDIA_UBUNTU_RELEASES = ("noble", "jammy")
NVIDIA_UBUNTU_SOURCES = (
    "https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/introduction.html",
    "https://docs.nvidia.com/cuda/archive/13.0.0/cuda-toolkit-release-notes/index.html",
)


def _release(series: str) -> str:
    """``focal (20.04)``: the series with its version."""
    return f"{series} ({UBUNTU_LTS_SERIES[series]})" if series in UBUNTU_LTS_SERIES else series


def _releases(names: tuple[str, ...]) -> str:
    return ", ".join(_release(name) for name in names)


def _nvidia_branch_covered(driver_override: str | None) -> bool:
    """Whether the driver the vars install is of the catalog's branch or later, which the series list is sourced for.

    An older branch pinned with ``kubernetes.driver_version`` (R535 on focal) is left to its own support matrix.
    """
    pinned = int(str(catalog.software("nvidia-driver")["branch"]))
    branch = driver_override.partition(".")[0] if driver_override else str(pinned)
    return not branch.isdigit() or int(branch) >= pinned


def driver_series_findings(wl: Workload, pools: list[Pool] | tuple[Pool, ...]) -> list[Finding]:
    """A warning per bare-metal pool whose Ansible driver install has no packages for ``provisioning.distro_series``.

    AMD: the vars read the series whatever the tools, and turn the install off (``specgen_amdgpu_driver.install:
    false``). NVIDIA: the series is the hosts' where MAAS deploys them (``maas`` in ``provisioning.tools``); the vars
    install the R580 driver, which NVIDIA supports on Ubuntu 24.04 and 22.04 only.
    """
    if wl.hardware.provider != "baremetal" or "ansible" not in wl.outputs:
        return []
    series = wl.provisioning.distro_series
    out = []
    for pool in pools:
        vendor = catalog.gpus()[pool.node.gpu_id].vendor
        if vendor == "amd" and series not in ROCM_UBUNTU_RELEASES:
            message = (
                f"pool {pool.name}: the hosts' Ubuntu {_release(series)} is not a release AMD's ROCm install guide "
                f"covers ({_releases(ROCM_UBUNTU_RELEASES)}), so Ansible installs no amdgpu driver and no ROCm there "
                "(specgen_amdgpu_driver.install: false) and the GPUs are left without a driver: set "
                f"provisioning.distro_series to one of those, or install both yourself ({ROCM_INSTALL_GUIDE})"
            )
        elif (
            vendor == "nvidia"
            and "maas" in wl.provisioning.tools
            and series not in NVIDIA_UBUNTU_RELEASES
            and _nvidia_branch_covered(wl.kubernetes.driver_version)
        ):
            driver = catalog.software("nvidia-driver")
            pinned = wl.kubernetes.driver_version  # (review38 item 7: a pinned 590 was said to be R580)
            named = f"{pinned} driver" if pinned else f"R{driver['branch']} driver with CUDA {driver['cuda_version']}"
            message = (
                f"pool {pool.name}: MAAS deploys Ubuntu {_release(series)}, where NVIDIA does not support the "
                f"{named} that Ansible installs "
                f"(specgen_nvidia_driver): NVIDIA lists {_releases(NVIDIA_UBUNTU_RELEASES)} only "
                f"({', '.join(NVIDIA_UBUNTU_SOURCES)}), so the driver's packages may not be found there and the GPUs "
                "be left without a driver: set provisioning.distro_series to one of those"
            )
        else:
            continue
        out.append(Finding("warning", DRIVER_SERIES, message, "provisioning.distro_series"))
    return out
