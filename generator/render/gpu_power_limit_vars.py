"""``specgen_gpu_power_limit``: the board power limit a bare-metal pool's GPUs are set to (newuser115; AMD's, fix204).

``hardware.gpu_power_limits`` gives it; the plan's node power, heat, racks, circuits and site power count the GPUs at
it, so the hosts must hold it. ``nvidia-smi -pl`` sets it (root); NVML's ``nvmlDeviceSetPowerManagementLimit``, which
it calls, says: "Limit is not persistent across reboots or driver unloads. Enable persistent mode to prevent driver
from unloading when no application is using the device" (``POWER_LIMIT_SOURCES["nvidia"]``): a role sets persistence mode and the
limit at every boot (a systemd oneshot), not once.

Kubernetes has no standard field for a GPU's power limit (the device plugin advertises GPUs; it sets no limit), so
the rendered manifests carry none: the plan's ``gpu-power-limit`` note says the hosts' Ansible sets it.
"""

from __future__ import annotations

from typing import Any

from generator.catalog.power_limit_tools import POWER_LIMIT_SOURCES, power_limit_commands
from generator.planner.gpu_power_limit import below_tdp

#: What a reboot does to the limit: NVML says it is lost; ROCm SMI's docs say nothing, so it is set each boot all the same.
_REBOOT = {"nvidia": "it is lost at a reboot", "amd": "its docs do not say it survives a reboot, so it is set at every boot"}


def gpu_power_limit_vars(watts: float | None, rated_w: float, vendor: str = "nvidia") -> dict[str, Any]:
    """The group var of a pool whose ``vendor`` GPUs are limited to ``watts`` (rated ``rated_w``); empty where none is set.

    fix204: an AMD GPU's limit is set with ``rocm-smi --setpoweroverdrive``; whether it holds across a reboot is not
    sourced, so it is set at every boot as NVIDIA's is.
    """
    if not below_tdp(watts, rated_w) or not (commands := power_limit_commands(vendor, watts)):
        return {}
    return {
        "specgen_gpu_power_limit": {
            "watts": watts,
            "rated_w": rated_w,
            "commands": commands,
            "at_every_boot": True,
            "why": "the plan counts each GPU at this limit (power, heat, racks, site power); " + _REBOOT[vendor],
            "source": POWER_LIMIT_SOURCES[vendor],
        }
    }
