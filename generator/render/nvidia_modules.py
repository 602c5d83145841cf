"""What an NVIDIA pool's host driver install must choose by hardware: the kernel-module flavor, and NVLink Subnet Manager.

NVIDIA's driver installation guide, "Kernel Modules"
(https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/kernel-modules.html): since the 515 branch the
driver's kernel modules come in two flavors; the proprietary one "is required for older GPUs from the Maxwell, Pascal,
or Volta architectures" (the open modules are not compatible with them), and the open ones are "only for Turing and
newer architectures", the default and suggested install from the 560 branch on. NVIDIA's announcement of the switch
(https://developer.nvidia.com/blog/nvidia-transitions-fully-towards-open-source-gpu-kernel-modules/): Grace Hopper and
Blackwell "must use the open-source GPU kernel modules. The proprietary drivers are unsupported on these platforms."
One Ansible role installing one flavor for every pool breaks either a V100 pool or a Blackwell one (newuser57 item 5),
so each pool's group vars name theirs.

NVIDIA's Fabric Manager user guide (https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html,
"Systems Using Fourth Generation NVSwitches" and "What is NVLink Subnet Manager?"): DGX / HGX B200 and B300 and HGX B100
use fourth-generation NVSwitches, whose routing tables NVLink Subnet Manager (NVLSM) programs beside Fabric Manager; the
FM package needs the NVLSM package there, and an OFED or MOFED driver for the baseboard's CX7 bridge device.
"""

from __future__ import annotations

from typing import Literal

from generator.catalog.records import GpuSpec
from generator.planner.nodes import nvswitch_generation
from generator.planner.plan import NodeSpec

KernelModules = Literal["open", "proprietary"]

#: The kernel-module flavor each NVIDIA architecture of the catalog takes (the guide and announcement above): Volta's
#: only works with the proprietary modules; Turing to Hopper are recommended the open ones, which Grace Hopper and
#: Blackwell require.
KERNEL_MODULES: dict[str, KernelModules] = {
    "volta": "proprietary",
    "turing": "open",
    "ampere": "open",
    "ada-lovelace": "open",
    "hopper": "open",
    "blackwell": "open",
}
#: The first NVSwitch generation whose fabric NVLink Subnet Manager routes (the Fabric Manager guide above).
NVLSM_FIRST_NVSWITCH_GENERATION = 4


def kernel_modules(gpu: GpuSpec) -> KernelModules:
    """The driver kernel-module flavor an NVIDIA GPU's hosts install: ``proprietary`` for Volta, else ``open``."""
    return KERNEL_MODULES[gpu.architecture]


def needs_nvlink_subnet_manager(node: NodeSpec, gpu: GpuSpec) -> bool:
    """Whether the node's NVSwitch baseboard is of the fourth generation, whose fabric NVLSM routes beside FM."""
    generation = nvswitch_generation(gpu)
    return node.nvswitch and generation is not None and generation >= NVLSM_FIRST_NVSWITCH_GENERATION
