"""``provisioning.distro_series``: the Ubuntu series the hosts run, refused where it names no Ubuntu LTS release.

The series goes to MAAS as ``deploy_params.distro_series`` (terraform-provider-maas ``maas_instance``), and the rendered
Ansible driver stacks install from Ubuntu packages for it (an AMD pool's ``specgen_amdgpu_driver.ubuntu_release``).
A word that is no Ubuntu series (``windows``) was passed on unchecked (newuser57 item 6). An LTS series that the
rendered driver stacks do not cover (``focal``, ``bionic``) is valid: the planner warns of it by what is then not
installed (:mod:`generator.planner.driver_series`).
"""

from __future__ import annotations

from generator.errors import InputError
from generator.workload.loader import Document
from generator.workload.models import Workload

#: Ubuntu's LTS releases by series name, oldest first, with their versions (Ubuntu's list of releases,
#: https://documentation.ubuntu.com/project/release-team/list-of-releases/). MAAS deploys Ubuntu from its image stream
#: by series (https://canonical.com/maas/docs/about-images); its LTS images are the ones a server fleet runs, and the
#: only ones NVIDIA's and AMD's driver repositories are built for.
UBUNTU_LTS_SERIES = {"xenial": "16.04", "bionic": "18.04", "focal": "20.04", "jammy": "22.04", "noble": "24.04"}
FIELD = ("provisioning", "distro_series")


def distro_series_errors(doc: Document, wl: Workload) -> list[InputError]:
    """``provisioning.distro_series`` where it is no Ubuntu LTS series, located at the field."""
    series = wl.provisioning.distro_series
    if series in UBUNTU_LTS_SERIES:
        return []
    known = ", ".join(f"{name} ({version})" for name, version in UBUNTU_LTS_SERIES.items())
    return [
        InputError(
            f"'{series}' is not an Ubuntu LTS series: the hosts' Ubuntu release, which MAAS deploys and the rendered "
            f"driver stacks install packages for, is one of {known}",
            doc.locate(FIELD),
        )
    ]
