"""The GKE accelerator type each GPU machine type carries (a machine family's GPU model is fixed).

One fact for the planner (the GPU quota metric a GKE pool counts against, :mod:`generator.planner.vcpu_quota`) and
for the GKE rendering (a node pool's ``guestAccelerator``, :mod:`generator.render.gke`), kept in the catalog's layer
so the planner need not import a render module.
"""

from __future__ import annotations

from generator.errors import InputError

#: Accelerator type of each GPU machine family (machine types carry a fixed GPU model);
#: https://cloud.google.com/compute/docs/gpus and https://cloud.google.com/compute/docs/accelerator-optimized-machines
ACCELERATOR_BY_MACHINE_PREFIX = {
    "a2-highgpu-": "nvidia-tesla-a100",
    "a2-megagpu-": "nvidia-tesla-a100",
    "a2-ultragpu-": "nvidia-a100-80gb",
    "a3-highgpu-": "nvidia-h100-80gb",
    "a3-megagpu-": "nvidia-h100-mega-80gb",
    "a3-ultragpu-": "nvidia-h200-141gb",
    "a4-highgpu-": "nvidia-b200",
    "g2-standard-": "nvidia-l4",
    # accelerator-optimized-machines: 'G4 ... use NVIDIA RTX PRO 6000 Blackwell Server Edition GPUs (nvidia-rtx-pro-6000)'
    "g4-standard-": "nvidia-rtx-pro-6000",
}


def accelerator_type(machine_type: str) -> str:
    """The GKE accelerator type a machine type carries."""
    for prefix, accelerator in ACCELERATOR_BY_MACHINE_PREFIX.items():
        if machine_type.startswith(prefix):
            return accelerator
    raise InputError(f"no GKE accelerator type is known for machine type {machine_type!r}")
