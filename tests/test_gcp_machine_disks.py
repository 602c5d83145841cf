"""GCP machine types' disks and sizes as Compute Engine documents them (newuser79 items 4, 5, 6 and 7).

* item 4: G2's Local SSD is an option ("Max Local SSD supported"), not bundled: a g2-standard-48 pool gets no local SSDs
  (it had 4 x 375 GiB on an unsourced belief, billed on top of a plan that did not price them) but a boot disk sized for
  its files, as g2-standard-24 / -96 do; A3 Ultra's and A4's 32 bundled Local SSDs are sourced now;
* item 5: A3 Ultra, A4 and G4 take Hyperdisk Balanced alone as the boot disk, so their node pools say ``diskType`` /
  ``disk_type: hyperdisk-balanced`` (a field Config Connector's CRD and the google provider both have), and other
  machine types leave GKE's default;
* item 6: the 1-L4 sizes g2-standard-8/12/16/32 and the 16-GPU a2-megagpu-16g are in the catalog with the G2 / A2 tables'
  figures, the G2 ones priced;
* item 7: a cloud VM's summed power counts its vCPUs' share of the host CPU, so it grows with the VM.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from generator import catalog
from generator.api import render_file
from generator.planner import nodes
from generator.sizing.constants import Constants
from tests.conftest import SHARED, require_shared

ACC = "https://docs.cloud.google.com/compute/docs/accelerator-optimized-machines"

WORKLOAD = """\
version: 1
name: disks
deployments:
  - name: svc
    model: {model}
    inference:
      precision: {precision}
      max_context_tokens: 8192
      avg_input_tokens: 1000
      avg_output_tokens: 200
      requests_per_second: {rate}
hardware:
  provider: gcp
  platforms: [{platform}]
{prices}objective: cost
outputs: [terraform, kubernetes]
kubernetes:
  gcp_project: acme-ml-prod
  location: us-central1
  zone: us-central1-b
"""


def render(
    tmp_path: Path, platform: str, model: str = "Qwen/Qwen3-8B", precision: str = "bf16", rate: float = 1
) -> dict[str, str]:
    priced = catalog.platforms()[platform].not_on_demand is not None
    prices = f"prices:\n  {platform}: 50.0\n" if priced else ""
    path = tmp_path / "w.yaml"
    path.write_text(
        WORKLOAD.format(model=model, precision=precision, rate=rate, platform=platform, prices=prices), encoding="utf-8"
    )
    return render_file(str(path))


def node_config(files: dict[str, str]) -> dict[str, Any]:
    (text,) = [t for p, t in files.items() if p.startswith("kubernetes/gcp/containernodepool-")]
    config: dict[str, Any] = YAML(typ="safe", pure=True).load(text)["spec"]["nodeConfig"]
    return config


def tf_node_config(files: dict[str, str]) -> dict[str, Any]:
    (pool,) = json.loads(files["terraform/specgen.auto.tfvars.json"])["gke_node_pools"].values()
    config: dict[str, Any] = pool["node_config"]
    return config


# --- item 4: only bundled, sourced local SSDs ---------------------------------------------------------------------


@pytest.mark.parametrize("size", [4, 8, 12, 16, 24, 32, 48, 96])
def test_no_g2_size_has_local_ssd_attached(size: int) -> None:
    platform = catalog.platforms()[f"gcp-g2-standard-{size}"]
    assert platform.nvme_count == 0 and platform.nvme_total_tb is None
    assert not platform.unsourced_fields


def test_a_g2_standard_48_pool_gets_a_boot_disk_not_local_ssds(tmp_path: Path) -> None:
    files = render(tmp_path, "gcp-g2-standard-48", model="Qwen/Qwen3-30B-A3B", precision="fp8", rate=4)
    config, tf = node_config(files), tf_node_config(files)
    assert "ephemeralStorageLocalSsdConfig" not in config
    assert tf["ephemeral_storage_local_ssd_config"] is None
    assert config["diskSizeGb"] > 100  # GKE's 100 GB default does not hold its files
    assert "diskType" not in config and tf["disk_type"] is None  # G2 takes pd-balanced, GKE's default


@pytest.mark.parametrize("platform", ["gcp-a3-ultragpu-8g", "gcp-a4-highgpu-8g"])
def test_a3_ultra_and_a4_bundled_local_ssds_are_sourced(platform: str) -> None:
    spec = catalog.platforms()[platform]
    assert (spec.nvme_count, spec.nvme_total_tb) == (32, 12.88)  # 12,000 GiB = 32 x 375 GiB
    assert not [f for f in spec.unsourced_fields if f.startswith("nvme.")]
    assert ACC in spec.source


def test_every_gcp_local_ssd_count_is_sourced() -> None:
    """A GKE pool renders ``localSsdCount`` from ``nvme.count``: each is the disk table's (A2 Ultra 1-8, A3 High 2-16, A3
    Mega 16, A3 Ultra / A4 32), none a belief."""
    gcp = [p for p in catalog.platforms().values() if p.provider == "gcp"]
    assert {p.id: [f for f in p.unsourced_fields if f.startswith("nvme.")] for p in gcp if p.nvme_count} == {
        p.id: [] for p in gcp if p.nvme_count
    }
    assert all(ACC in p.source for p in gcp if p.nvme_count)


# --- item 5: Hyperdisk-only boot disks ------------------------------------------------------------------------------

HYPERDISK_ONLY = ["gcp-a3-ultragpu-8g", "gcp-a4-highgpu-8g", "gcp-g4-standard-48", "gcp-g4-standard-96",
                  "gcp-g4-standard-192", "gcp-g4-standard-384"]  # fmt: skip


def test_the_hyperdisk_only_machine_types_are_the_catalogs_a3_ultra_a4_and_g4() -> None:
    marked = {p.id for p in catalog.platforms().values() if p.boot_disk_type is not None}
    assert marked == set(HYPERDISK_ONLY)
    assert {catalog.platforms()[p].boot_disk_type for p in marked} == {"hyperdisk-balanced"}


@pytest.mark.parametrize(
    ("platform", "model", "precision"),
    [
        ("gcp-g4-standard-48", "Qwen/Qwen3-8B", "bf16"),
        ("gcp-a3-ultragpu-8g", "meta-llama/Llama-3.1-70B-Instruct", "fp8"),
        ("gcp-a4-highgpu-8g", "meta-llama/Llama-3.1-70B-Instruct", "fp8"),
    ],
)
def test_a_hyperdisk_only_pool_names_its_boot_disk_type(tmp_path: Path, platform: str, model: str, precision: str) -> None:
    files = render(tmp_path, platform, model=model, precision=precision)
    assert node_config(files)["diskType"] == "hyperdisk-balanced"
    assert tf_node_config(files)["disk_type"] == "hyperdisk-balanced"


def test_pools_elsewhere_keep_gkes_default_boot_disk_type(tmp_path: Path) -> None:
    files = render(tmp_path, "gcp-g2-standard-4", model="Qwen/Qwen3-8B", precision="fp8", rate=0.5)
    assert "diskType" not in node_config(files)
    assert tf_node_config(files)["disk_type"] is None


def test_disk_type_is_a_field_config_connector_and_the_google_provider_have() -> None:
    crds = SHARED / "crds" / "config-connector"
    require_shared(crds)
    crd = next(crds.glob("*containernodepools*"))
    node_config_schema = YAML(typ="safe", pure=True).load(crd.read_text(encoding="utf-8"))
    version = node_config_schema["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert "diskType" in version["properties"]["spec"]["properties"]["nodeConfig"]["properties"]
    doc = SHARED / "iac-reference" / "terraform" / "terraform-provider-google" / "container_cluster.html.markdown"
    require_shared(doc)
    docs = doc.read_text(encoding="utf-8")
    assert "* `disk_type` - (Optional) Type of the disk attached to each node" in docs


# --- item 6: the other G2 sizes and a2-megagpu-16g --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "vcpus", "ram", "gbps", "usd"),
    [(8, 8, 32, 16, 0.853624271), (12, 12, 48, 16, 1.000416287), (16, 16, 64, 32, 1.147208303), (32, 32, 128, 32, 1.734376367)],
)
def test_the_one_l4_g2_sizes_are_in_the_catalog(size: int, vcpus: int, ram: int, gbps: int, usd: float) -> None:
    spec = catalog.platforms()[f"gcp-g2-standard-{size}"]
    assert (spec.gpu_ids, spec.gpu_counts, spec.vcpus, spec.ram_gib, spec.network_gbps_total) == (
        ("l4-24gb",),
        (1,),
        vcpus,
        ram,
        gbps,
    )
    assert ACC in spec.source
    price = catalog.prices()[f"gcp-g2-standard-{size}-on-demand-us-central1"]
    assert price.usd == usd and price.source


def test_a2_megagpu_16g_is_in_the_catalog_and_priced() -> None:
    spec = catalog.platforms()["gcp-a2-megagpu-16g"]
    assert (spec.gpu_ids, spec.gpu_counts, spec.vcpus, spec.ram_gib) == (("a100-sxm4-40gb",), (16,), 96, 1360)
    assert catalog.prices()["gcp-a2-megagpu-16g-on-demand-us-central1"].usd == 55.739504


# --- item 7: a cloud VM's power grows with the VM ----------------------------------------------------------------------


def summed_w(platform: str) -> int:
    spec = catalog.platforms()[platform]
    gpu = catalog.find_gpu(spec.gpu_ids[0])
    return nodes.component_power_w(gpu, max(spec.gpu_counts), spec, int(spec.ram_gib or 0), 0, (), Constants())


def test_a_one_l4_vm_draws_about_its_gpu_not_a_whole_host() -> None:
    gpu = catalog.find_gpu("l4-24gb")
    assert summed_w("gcp-g2-standard-4") < 2 * gpu.tdp_w  # was 424 W: a whole CPU chosen for 8 wanted cores
    assert summed_w("gcp-g2-standard-4") > gpu.tdp_w


def test_a_larger_vm_of_a_series_draws_more() -> None:
    one_l4 = [summed_w(f"gcp-g2-standard-{n}") for n in (4, 8, 12, 16, 32)]
    assert one_l4 == sorted(one_l4) and len(set(one_l4)) == len(one_l4)
    by_gpus = [summed_w(f"gcp-g2-standard-{n}") for n in (4, 24, 48, 96)]
    assert by_gpus == sorted(by_gpus)
    gpu = catalog.find_gpu("l4-24gb")
    # -48 to -96 adds 4 L4s and 48 vCPUs: at least the 4 GPUs' board power more (was +191 W for 288 W of GPUs)
    assert summed_w("gcp-g2-standard-96") - summed_w("gcp-g2-standard-48") > 4 * gpu.tdp_w
