"""MAAS ``min_memory``: the build's DIMM total in MiB, as MAAS records a machine's memory (newuser84 item 5).

MAAS stores a machine's ``memory`` as ``int(total / 1024**2)`` MiB (``_parse_memory`` in
https://github.com/canonical/maas/blob/master/src/metadataserver/builtin_scripts/hooks.py), ``total`` from its
commissioning ``machine-resources`` binary, which is LXD's resources code
(https://github.com/canonical/maas/blob/master/src/host-info/pkg/info/info.go). LXD's memory total is the online
blocks of /sys/devices/system/memory x ``block_size_bytes``, replacing /proc/meminfo's MemTotal, which is the
installed memory less the kernel's reservation (https://github.com/canonical/lxd/issues/7362: a 64 GiB laptop read
62.47 GiB and MAAS under-reported it; fixed by https://github.com/canonical/lxd/pull/7366). The oracle below models
both readings: a floor at the DIMM total is met by the build under the block count, missed by a build one DIMM
short, and would be missed under MemTotal's reading (which MAAS no longer uses).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from generator.api import render_file
from generator.render.provisioning import maas_min_memory_mib

REPO = Path(__file__).resolve().parent.parent
GIB = 1024**3

#: x86 memory block sizes: 128 MiB, and 2 GiB on large-memory servers (the block size is read from sysfs)
BLOCK_BYTES = (128 * 1024**2, 2 * GIB)


def maas_memory_mib(installed_bytes: int, block_bytes: int) -> int:
    """What MAAS records: LXD's online memory blocks x block size (all of the DIMMs, whole blocks), in whole MiB."""
    blocks = installed_bytes // block_bytes
    return int(blocks * block_bytes / 1024**2)


def meminfo_mib(installed_bytes: int) -> int:
    """What MemTotal would give: the installed memory less the kernel's reservation (lxd#7362: 62.47 of 64 GiB)."""
    return int(installed_bytes * 62.47 / 64 / 1024**2)


def _allocations(path: Path) -> tuple[dict[str, dict[str, object]], dict[str, str]]:
    files = render_file(str(path))
    spec = json.loads(files["spec.json"])
    memory = {p["name"]: p["node"]["memory"] for p in spec["plan"]["pools"]}
    instances = json.loads(files["provisioning/maas/maas.auto.tfvars.json"])["maas_instances"]
    return instances, memory


@pytest.mark.parametrize("path", [REPO / "examples" / "chat-70b-maas.yaml", REPO / "tests/data/newuser84/nightly-tune.yaml"])
def test_min_memory_is_the_dimm_total_a_maas_machine_of_the_build_meets(path: Path) -> None:
    instances, memory = _allocations(path)
    floored = [i for i in instances.values() if "min_memory" in i["allocate_params"]]  # type: ignore[operator]
    assert floored  # bought or unnamed nodes: allocated by cores, memory and tags
    for instance in floored:
        allocate = instance["allocate_params"]
        assert isinstance(allocate, dict)
        # the pool's build: "24 x 96 GiB DDR5-4800 (...)"
        count, size = map(int, re.match(r"(\d+) x (\d+) GiB", memory[str(instance["pool"])]).groups())  # type: ignore[union-attr]
        installed = count * size * GIB
        assert allocate["min_memory"] == installed // 1024**2
        for block in BLOCK_BYTES:
            assert maas_memory_mib(installed, block) >= allocate["min_memory"]  # the build is allocated
            assert maas_memory_mib(installed - size * GIB, block) < allocate["min_memory"]  # one DIMM short is not
        assert meminfo_mib(installed) < allocate["min_memory"]  # MemTotal's reading would match no machine


@pytest.mark.parametrize(("gib", "mib"), [(None, None), (256, 262_144), (2048, 2_097_152), (2304, 2_359_296)])
def test_maas_min_memory_mib(gib: int | None, mib: int | None) -> None:
    assert maas_min_memory_mib(gib) == mib
