"""An AMD pool's driver stack on bare metal: the amdgpu kernel driver and ROCm, as AMD's install guide gives them.

AMD's quick-start guide for Ubuntu (its steps are the same across the stored versions read; the ROCm 7.0.0 build
of the guide, ``docs/conf.py``, lists Ubuntu 24.04 "noble" and 22.04 "jammy" and names the installer package):
register the repositories with the ``amdgpu-install`` package of the release, install the kernel headers and
``linux-modules-extra`` of the running kernel and ``amdgpu-dkms`` (the kernel driver), reboot, then install
``rocm`` and add the user to the ``render`` and ``video`` groups. Ansible installs it where it owns the host (bare
metal), as it installs an NVIDIA pool's driver (``specgen_nvidia_driver``).
"""

from __future__ import annotations

from typing import Any

from generator.planner.driver_series import ROCM_INSTALL_GUIDE, ROCM_UBUNTU_RELEASES

#: AMD's ROCm install guide for Linux (quick start) and the release numbers its build substitutes into it.
ROCM_INSTALL_SOURCES = (
    ROCM_INSTALL_GUIDE,
    "https://github.com/ROCm/rocm-install-on-linux/blob/0078423c905112fc8de1afe7b8439ff429194266/docs/conf.py",
)
ROCM_VERSION = "7.0.0"
#: ``amdgpu_version`` (the repo.radeon.com directory) and ``amdgpu_install_version`` (the package) of that release.
AMDGPU_INSTALL_DIRECTORY = "7.0"
AMDGPU_INSTALL_PACKAGE_VERSION = "7.0.70000-1"


def amdgpu_install_deb(ubuntu_release: str) -> str | None:
    """The ``amdgpu-install`` package that registers the ROCm repositories; None for a release the guide lacks."""
    if ubuntu_release not in ROCM_UBUNTU_RELEASES:
        return None
    return (
        f"https://repo.radeon.com/amdgpu-install/{AMDGPU_INSTALL_DIRECTORY}/ubuntu/{ubuntu_release}/"
        f"amdgpu-install_{AMDGPU_INSTALL_PACKAGE_VERSION}_all.deb"
    )


def amdgpu_driver_group_vars(ubuntu_release: str) -> dict[str, Any]:
    """What Ansible installs on a bare-metal AMD pool's hosts: the amdgpu driver and ROCm for their Ubuntu release.

    A release the ROCm guide does not cover gets nothing installed (``install: false``, review 17 item L4).
    """
    deb = amdgpu_install_deb(ubuntu_release)
    return {
        "install": deb is not None,
        "rocm_version": ROCM_VERSION,
        "ubuntu_release": ubuntu_release,
        "amdgpu_install_deb": deb,
        "kernel_packages": ["linux-headers", "linux-modules-extra"],  # of the running kernel
        "driver_package": "amdgpu-dkms",
        "rocm_package": "rocm",
        "user_groups": ["render", "video"],
        "reboot_after_driver": True,
        "sources": list(ROCM_INSTALL_SOURCES),
    }
