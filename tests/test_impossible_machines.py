"""fuzz18 item 7: a machine that cannot exist as given is planned with a warning at the field that says so.

More CPU sockets than the catalog CPU runs in (``max_sockets``, from its vendor's spec page: AMD's socket count "1P /
2P", Intel's Max CPU Configuration), and an MI250X count that is not whole packages (an OAM package is 2 GCDs, each a
GPU to ROCm: https://rocm.docs.amd.com/en/latest/conceptual/gpu-arch/mi250.html).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import catalog
from generator.api import plan_file
from tests.conftest import catalog_json
from tests.helpers import estimate_json

#: The catalog CPUs with a vendor-sourced socket count, and the vendor site each is sourced from.
MAX_SOCKETS = {
    "core-i5-12600k": (1, "https://www.intel.com/"),
    "core-i9-13900k": (1, "https://www.intel.com/"),
    "core-i9-14900k": (1, "https://www.intel.com/"),
    "epyc-7742": (2, "https://www.amd.com/"),
    "epyc-7773x": (2, "https://www.amd.com/"),
    "epyc-9354": (2, "https://www.amd.com/"),
    "epyc-9454": (2, "https://www.amd.com/"),
    "epyc-9654": (2, "https://www.amd.com/"),
    "xeon-6-6747p": (2, "https://www.intel.com/"),
    "xeon-6-6776p": (2, "https://www.intel.com/"),
    "xeon-6-6980p": (2, "https://www.intel.com/"),
    "xeon-gold-6138": (4, "https://www.intel.com/"),
    "xeon-gold-6454s": (2, "https://www.intel.com/"),
}


def test_max_sockets_come_from_the_vendors_spec_page_or_are_left_out_with_a_note() -> None:
    records = {r["id"]: r for r in catalog_json("cpus")["cpus"]}
    given = {i: (r["max_sockets"], r["field_sources"]["max_sockets"]) for i, r in records.items() if "max_sockets" in r}
    assert {i: n for i, (n, _) in given.items()} == {i: n for i, (n, _) in MAX_SOCKETS.items()}
    assert all(url.startswith(MAX_SOCKETS[i][1]) for i, (_, url) in given.items())
    for cpu_id in records.keys() - given.keys():
        assert any(note.startswith("max_sockets left out: ") for note in records[cpu_id]["research_notes"]), cpu_id


def test_no_catalog_platform_holds_more_sockets_than_its_cpu_runs_in() -> None:
    cpus = catalog.cpus()
    over = [
        p.id
        for p in catalog.platforms().values()
        if (cpu := cpus.get(p.cpu_id or "")) and cpu.max_sockets and p.cpu_sockets // p.hosts > cpu.max_sockets
    ]
    assert over == []


FIXED = """\
version: 1
name: t
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: bf16, max_context_tokens: 8192, requests_per_second: 0.1}}
hardware:
  provider: baremetal
  fixed:
    gpu: {gpu}
    gpu_count: {gpus}
    ram_gib: 256
{cpu}"""


@pytest.mark.parametrize(
    ("cpu", "sockets", "message"),
    [
        pytest.param(
            "epyc-9654", 8,
            "8 CPU sockets: the AMD EPYC 9654 (Genoa, Zen 4) goes in systems of at most 2 sockets (its vendor's spec "
            "page), and the machine's cores and power are counted for 8: give the sockets it has (`specgen detect` "
            "reads them)",
            id="genoa-8",
        ),
        pytest.param(
            "core-i9-14900k", 2,
            "2 CPU sockets: the Intel Core i9-14900K (Raptor Lake Refresh, desktop LGA1700) goes in systems of at most "
            "1 socket (its vendor's spec page), and the machine's cores and power are counted for 2: give the sockets "
            "it has (`specgen detect` reads them)",
            id="desktop-2",
        ),
        pytest.param("epyc-9654", 2, None, id="genoa-2"),
        # no vendor page found for its socket count: nothing said either way
        pytest.param("xeon-platinum-8480-plus", 8, None, id="unsourced-8"),
    ],
)  # fmt: skip
def test_more_sockets_than_the_cpu_runs_in_is_a_warning_at_cpu_sockets(
    tmp_path: Path, cpu: str, sockets: int, message: str | None
) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(FIXED.format(gpu="rtx-4090-24gb", gpus=1, cpu=f"    cpu: {cpu}\n    cpu_sockets: {sockets}\n"))
    found = [(f.level, f.path, f.message) for f in plan_file(str(path))[1].findings if f.code == "cpu-sockets-beyond-cpu"]
    assert found == ([] if message is None else [("warning", "hardware.fixed.cpu_sockets", message)])


@pytest.mark.parametrize(
    ("gpus", "message"),
    [
        pytest.param(
            3,
            "3 x mi250x-128gb: each is one of the 2 GPUs (GCDs) of a package, and 1.5 packages cannot be; give whole "
            "packages' GPUs (2 or 4)",
            id="three-gcds",
        ),
        pytest.param(
            1,
            "1 x mi250x-128gb: each is one of the 2 GPUs (GCDs) of a package, and 0.5 packages cannot be; give whole "
            "packages' GPUs (2)",
            id="one-gcd",
        ),
        pytest.param(4, None, id="two-packages"),
    ],
)
def test_an_mi250x_count_of_split_packages_is_a_warning_at_gpu_count(tmp_path: Path, gpus: int, message: str | None) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(FIXED.format(gpu="mi250x-128gb", gpus=gpus, cpu="    cpu: epyc-7742\n"))
    found = [(f.level, f.path, f.message) for f in plan_file(str(path))[1].findings if f.code == "gpu-count-splits-package"]
    assert found == ([] if message is None else [("warning", "hardware.fixed.gpu_count", message)])


def test_the_estimate_says_the_same() -> None:
    data = estimate_json("meta-llama/Llama-3.1-8B-Instruct", "--gpu", "mi250x-128gb", "--gpus", "3", "--ram-gib", "256",
                         "--cpu", "epyc-9654", "--cpu-sockets", "4", "--context", "8192")  # fmt: skip
    codes = [(f["level"], f["code"]) for f in data["findings"]]
    assert ("warning", "cpu-sockets-beyond-cpu") in codes and ("warning", "gpu-count-splits-package") in codes
