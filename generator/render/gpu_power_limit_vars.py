"""``specgen_gpu_power_limit``: the board power limit a bare-metal pool's NVIDIA GPUs are set to (newuser115).

``hardware.gpu_power_limits`` gives it; the plan's node power, heat, racks, circuits and site power count the GPUs at
it, so the hosts must hold it. ``nvidia-smi -pl`` sets it (root); NVML's ``nvmlDeviceSetPowerManagementLimit``, which
it calls, says: "Limit is not persistent across reboots or driver unloads. Enable persistent mode to prevent driver
from unloading when no application is using the device" (:data:`NVML_SOURCE`): a role sets persistence mode and the
limit at every boot (a systemd oneshot), not once.

Kubernetes has no standard field for a GPU's power limit (the device plugin advertises GPUs; it sets no limit), so
the rendered manifests carry none: the plan's ``gpu-power-limit`` note says the hosts' Ansible sets it.
"""

from __future__ import annotations

from typing import Any

from generator.planner.gpu_power_limit import below_tdp

NVML_SOURCE = "https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceCommands.html"


def gpu_power_limit_vars(watts: float | None, rated_w: float) -> dict[str, Any]:
    """The group var of a pool whose GPUs are limited to ``watts`` (rated ``rated_w``); empty where none is set."""
    if not below_tdp(watts, rated_w):
        return {}
    return {
        "specgen_gpu_power_limit": {
            "watts": watts,
            "rated_w": rated_w,
            "commands": ["nvidia-smi -pm 1", f"nvidia-smi -pl {watts:g}"],
            "at_every_boot": True,
            "why": "the plan counts each GPU at this limit (power, heat, racks, site power); it is lost at a reboot",
            "source": NVML_SOURCE,
        }
    }
