"""The command that sets a GPU's board power limit, by vendor (``hardware.gpu_power_limits``; fix204).

The plan counts a limited GPU at its limit, so the hosts must be told to hold it: NVIDIA's with ``nvidia-smi -pl``,
AMD's with ROCm SMI's ``--setpoweroverdrive``. A vendor with no sourced command is refused at the field
(:mod:`generator.workload.power_limit_checks`), so the plan never counts a limit nothing sets.
"""

from __future__ import annotations

#: Where each vendor's limit command is documented (fix204: an AMD GPU under a limit got none rendered).
POWER_LIMIT_SOURCES = {
    "nvidia": "https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceCommands.html",
    # ROCm SMI's CLI help: "--setpoweroverdrive WATTS  Set the maximum GPU power using Power OverDrive in Watts"
    "amd": "https://rocm.docs.amd.com/projects/rocm_smi_lib/en/latest/python_usage.html",
}


#: The command that takes the limit in watts, by vendor (the plan's note names it).
LIMIT_TOOLS = {"nvidia": "nvidia-smi -pl", "amd": "rocm-smi --setpoweroverdrive"}


def power_limit_commands(vendor: str, watts: float) -> list[str]:
    """The root commands that set a ``vendor`` GPU's board limit to ``watts`` (empty: no sourced command)."""
    if vendor not in LIMIT_TOOLS:
        return []
    persistence = ["nvidia-smi -pm 1"] if vendor == "nvidia" else []  # NVML: else the driver unloads, the limit too
    return [*persistence, f"{LIMIT_TOOLS[vendor]} {watts:g}"]
