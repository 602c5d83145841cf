"""A colo operator's bare-metal fleet: 8-GPU server power without a published maximum, Metal3 / Cluster API (newuser36).

* Item 1: the parts sum under-reads every published 8-GPU baseboard maximum in the catalog (DGX A100 6,500 W, DGX
  H100 / H200 10,200 W, DGX B200 14,300 W, DGX B300 ~14 kW, NVIDIA's pages, ``platforms.json``), so an XE9680 with
  8 x MI300X (no published figure found) is planned on its sum scaled by the largest ratio, with a warning, and racked
  on that: one per 18 kW rack, not two at 17.4 kW.
* Item 2: a pool's BareMetalHosts carry its pool, GPU and platform labels, and the ``cluster-api-templates`` finding
  names the Metal3MachineTemplate hostSelector that keeps a pool's Machines on its own hosts.
* Item 3: a MachineDeployment asking for more machines than the pool has BareMetalHosts is a warning.
* Item 5: bare-metal files rendered (or validated) together whose Cluster API cluster names differ are refused.
* Item 4: the DGX H100 / H200 carry their published front end (2 x dual-port QSFP112 ConnectX-7, NVIDIA DGX BasePOD
  RA), and a vendor's fixed system gets no default 25 GbE NIC the catalog does not list.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from generator import catalog
from generator.api import plan_file, render_file, render_files
from generator.errors import InputError
from generator.planner.nodes import POWER_SUMMED, baseboard_under_read, component_power_w
from generator.render import check_one_cluster
from generator.render.provisioning import HOSTS_SHORT
from generator.sizing.constants import Constants
from tests.conftest import SHARED, require_shared
from tests.helpers import specgen_in_process

MI300X_18KW = """\
version: 1
name: mi
deployments:
  - name: chat
    model: meta-llama/Llama-3.3-70B-Instruct
    inference: {precision: fp8, max_context_tokens: 8192, requests_per_second: 40}
hardware: {gpus: [mi300x-192gb], provider: baremetal, rack_power_kw: 18}
"""


@pytest.mark.parametrize(
    ("platform", "gpu", "published_w", "summed_w"),
    [
        # NVIDIA DGX pages (platforms.json sources); summed as the catalog lists each system's RAM, drives and NICs
        # (DGX H100 / H200: 8 x CX-7 OSFP fabric and 2 x dual-port CX-7 QSFP112 front end, the BasePOD RA)
        pytest.param("dgx-a100", "a100-sxm4-80gb", 6_500, 5_512, id="dgx-a100-1.179"),
        pytest.param("dgx-h100", "h100-sxm5-80gb", 10_200, 8_800, id="dgx-h100-1.159"),
        pytest.param("dgx-h200", "h200-sxm-141gb", 10_200, 8_800, id="dgx-h200-1.159"),
        pytest.param("dgx-b200", "b200-sxm-180gb", 14_300, 11_374, id="dgx-b200-1.257"),
        pytest.param("dgx-b300", "b300-sxm-270gb", 14_000, 12_077, id="dgx-b300-1.159"),
    ],
)
def test_every_published_8gpu_maximum_is_over_its_summed_parts(platform: str, gpu: str, published_w: int, summed_w: int) -> None:
    from generator.planner.nodes import _nics

    spec, card = catalog.platforms()[platform], catalog.gpus()[gpu]
    nics = _nics(spec, card, 8, False, [])
    summed = component_power_w(card, 8, spec, int(spec.ram_gib or 0), spec.nvme_count or 0, nics, Constants())
    assert (spec.max_power_w, summed) == (published_w, summed_w)
    under = baseboard_under_read(Constants())
    assert under is not None
    assert under.low <= published_w / summed_w <= under.high


def test_the_under_read_is_the_catalogs_range() -> None:
    under = baseboard_under_read(Constants())
    assert under is not None
    assert (under.high_id, under.low_id) == ("dgx-b200", "dgx-h100")
    assert under.high == pytest.approx(14_300 / 11_374)
    assert under.low == pytest.approx(10_200 / 8_800)  # DGX B300: 14,000 / 12,077 = 1.1592, just above


def test_an_mi300x_xe9680_is_planned_and_racked_on_its_scaled_sum(tmp_path: Path) -> None:
    path = tmp_path / "mi.yaml"
    path.write_text(MI300X_18KW)
    plan = plan_file(str(path))[1]
    (pool,) = plan.pools
    node = pool.node
    # 8,677 W summed (GPUs 6,000 W, 2 x Xeon 8480+ 700 W, 64 DIMMs, drive, NIC, + 10% fans, / 0.94) x 14,300 / 11,374
    assert (node.platform_id, node.gpus, pool.nodes, node.power_components_w, node.power_w) == (
        "dell-xe9680-mi300x",
        8,
        2,
        8_677,
        10_909,
    )
    assert node.power_basis == "sum of components x 1.257, the most a published 8-GPU maximum is over its parts (dgx-b200)"
    # two at 21.8 kW do not fit an 18 kW rack: one server per rack (before: both in rack-01 at 17.4 kW)
    assert [(r.nodes, r.power_w) for r in plan.racks] == [(1, 10_909), (1, 10_909)]
    (summed,) = {f.message for f in plan.findings if f.code == POWER_SUMMED}
    assert summed == (
        "dell-xe9680-mi300x with 8 x mi300x-192gb: no published system maximum in the catalog (its own, or an 8-GPU "
        "system with mi300x-192gb), and its parts sum to 8,677 W; the catalog's 8-GPU systems with a published maximum "
        "draw 1.159x (dgx-h100) to 1.257x (dgx-b200) their summed parts, so it is planned, racked and costed at 10,909 W: "
        "check the vendor's power calculator for this configuration before filling racks"
    )
    assert {f.level for f in plan.findings if f.code == POWER_SUMMED} == {"warning"}
    # 10,909 W x 0.94 = 10,254 W DC, over 3 of 6 x 3,200 W: the fault-tolerant PSUs keep it running, with a warning
    (brake,) = {f.message for f in plan.findings if f.code == "psu-power-brake"}
    assert "a DC load of 10,254 W" in brake and "keeps full speed with up to 2 PSU(s) lost" in brake


def test_a_borrowed_maximum_is_not_scaled(tmp_path: Path) -> None:
    # the same chassis with 8 x H100 keeps the DGX H100's published 10,200 W, and no power-summed warning
    path = tmp_path / "xe.yaml"
    path.write_text(MI300X_18KW.replace("gpus: [mi300x-192gb]", "gpus: [h100-sxm5-80gb], platforms: [dell-xe9680-hgx-h100-h200]"))
    plan = plan_file(str(path))[1]
    assert {(p.node.power_w, p.node.power_basis) for p in plan.pools} == {
        (10_200, "published maximum of dgx-h100 (same baseboard)")
    }
    assert not [f for f in plan.findings if f.code == POWER_SUMMED]


OWNED_TWO_POOLS = """\
version: 1
name: owned
deployments:
  - name: chat
    model: meta-llama/Llama-3.3-70B-Instruct
    pool: chat
    inference: {{precision: fp8, max_context_tokens: 32768, requests_per_second: {rps}}}
  - name: embed
    model: BAAI/bge-m3
    pool: embed
    inference: {{task: embed, precision: bf16, max_context_tokens: 8192, requests_per_second: 50}}
hardware:
  gpus: [h100-sxm5-80gb, l40s-48gb]
  provider: baremetal
  rack_power_kw: 17.3
  buy: {buy}
  inventory:
    - platform: dell-xe9680-hgx-h100-h200
      gpu: h100-sxm5-80gb
      count: 1
      hosts:
        - name: gpu-h01
          bmc_address: idrac-virtualmedia://10.0.0.11/redfish/v1/Systems/System.Embedded.1
          bmc_credentials_secret: gpu-h01-bmc
          boot_mac_address: "aa:bb:cc:00:00:01"
    - platform: dell-r760xa
      gpu: l40s-48gb
      count: 1
      hosts:
        - name: gpu-l01
          bmc_address: idrac-virtualmedia://10.0.0.21/redfish/v1/Systems/System.Embedded.1
          bmc_credentials_secret: gpu-l01-bmc
          boot_mac_address: "aa:bb:cc:00:00:02"
outputs: [kubernetes]
provisioning:
  tools: [metal3, capi]
"""


def _docs(files: dict[str, str], prefix: str) -> list[dict[str, Any]]:
    reader = YAML(typ="safe", pure=True)
    return [
        doc
        for path, text in files.items()
        if path.startswith(prefix) and not path.endswith("kustomization.yaml")
        for doc in reader.load_all(text)
        if isinstance(doc, dict) and doc.get("kind") != "Namespace"
    ]


def _render(tmp_path: Path, rps: int = 6, buy: str = "false") -> tuple[dict[str, str], dict[str, Any]]:
    path = tmp_path / "owned.yaml"
    path.write_text(OWNED_TWO_POOLS.format(rps=rps, buy=buy))
    files = render_file(str(path))
    import json

    return files, json.loads(files["spec.json"])


def test_each_pools_hosts_are_selected_by_its_own_template_only(tmp_path: Path) -> None:
    files, spec = _render(tmp_path)
    hosts = {d["metadata"]["name"]: d["metadata"]["labels"] for d in _docs(files, "provisioning/metal3/")}
    assert hosts == {
        "gpu-h01": {
            "specgen.dev/gpu": "h100-sxm5-80gb",
            "specgen.dev/platform": "dell-xe9680-hgx-h100-h200",
            "specgen.dev/pool": "chat-h100-sxm5-80gb",
        },
        "gpu-l01": {
            "specgen.dev/gpu": "l40s-48gb",
            "specgen.dev/platform": "dell-r760xa",
            "specgen.dev/pool": "embed-l40s-48gb",
        },
    }
    deployments = {d["metadata"]["name"] for d in _docs(files, "provisioning/cluster-api/")}
    assert deployments == {"chat-h100-sxm5-80gb", "embed-l40s-48gb"}
    (templates,) = [f["message"] for f in spec["plan"]["findings"] if f["code"] == "cluster-api-templates"]
    assert (
        "Each Metal3MachineTemplate needs the site's spec.template.spec.image (url, checksum) and userData, and "
        "spec.template.spec.hostSelector.matchLabels selecting its pool's BareMetalHosts, or CAPM3 claims any available "
        "BareMetalHost in the namespace, another pool's server included (the BareMetalHosts under provisioning/metal3 "
        "carry these labels): embed-l40s-48gb: specgen.dev/pool=embed-l40s-48gb; chat-h100-sxm5-80gb: "
        "specgen.dev/pool=chat-h100-sxm5-80gb." in templates
    )
    # each MachineDeployment's selector matches exactly the hosts of its pool (CAPM3 matchLabels: every pair present)
    for name in deployments:
        selector = {"specgen.dev/pool": name}
        chosen = [host for host, labels in hosts.items() if selector.items() <= labels.items()]
        assert len(chosen) == 1 and hosts[chosen[0]]["specgen.dev/pool"] == name
    assert not [f for f in spec["plan"]["findings"] if f["code"] == HOSTS_SHORT]


def test_bare_metal_hosts_validate_against_the_metal3_crd(tmp_path: Path) -> None:
    from tests.test_oracles import crd_errors

    require_shared(SHARED / "crds")
    files, _ = _render(tmp_path)
    docs = _docs(files, "provisioning/metal3/")
    assert docs and all(crd_errors(doc) == [] for doc in docs)


MIX = """\
version: 1
name: mix
deployments:
  - name: chat
    model: meta-llama/Llama-3.3-70B-Instruct
    inference: {precision: fp8, max_context_tokens: 8192, requests_per_second: 40}
hardware:
  gpus: [h100-sxm5-80gb]
  platforms: [dell-xe9680-hgx-h100-h200]
  provider: baremetal
  rack_power_kw: 17.3
  inventory:
    - platform: dell-xe9680-hgx-h100-h200
      gpu: h100-sxm5-80gb
      count: 1
      hosts:
        - name: gpu-h01
          bmc_address: idrac-virtualmedia://10.0.0.11/redfish/v1/Systems/System.Embedded.1
          bmc_credentials_secret: gpu-h01-bmc
          boot_mac_address: "aa:bb:cc:00:00:01"
outputs: [kubernetes]
provisioning:
  tools: [metal3, capi]
"""


@pytest.mark.parametrize(
    ("tools", "warned"),
    [
        pytest.param("[metal3, capi]", True, id="metal3-capi"),
        # without metal3 the site registers its BareMetalHosts itself: specgen cannot count them
        pytest.param("[capi]", False, id="capi-only"),
    ],
)
def test_a_machine_deployment_over_its_hosts_is_a_warning(tmp_path: Path, tools: str, warned: bool) -> None:
    # newuser36 item 3: 40 req/s of the 70B wants 2 XE9680s; one is owned and registered, the second is bought
    path = tmp_path / "mix.yaml"
    path.write_text(MIX.replace("tools: [metal3, capi]", f"tools: {tools}"))
    import json

    files = render_file(str(path))
    spec = json.loads(files["spec.json"])
    replicas = {d["metadata"]["name"]: d["spec"]["replicas"] for d in _docs(files, "provisioning/cluster-api/")}
    assert replicas == {"chat-h100-sxm5-80gb": 2}
    short = [f for f in spec["plan"]["findings"] if f["code"] == HOSTS_SHORT]
    if not warned:
        assert not short
        return
    assert [(f["level"], f["message"]) for f in short] == [
        (
            "warning",
            "chat-h100-sxm5-80gb: its MachineDeployment asks for 2 machine(s) and 1 BareMetalHost(s) rendered (gpu-h01): "
            "register the other 1 server(s) as BareMetalHosts labelled specgen.dev/gpu=h100-sxm5-80gb,"
            "specgen.dev/platform=dell-xe9680-hgx-h100-h200,specgen.dev/pool=chat-h100-sxm5-80gb (list them under "
            "hardware.inventory[].hosts with bmc_address, bmc_credentials_secret and boot_mac_address), or 1 "
            "Machine(s) wait in Provisioning for a host",
        )
    ]


CAPI = ("baremetal", "colo-a", None, None)


@pytest.mark.parametrize(
    ("clusters", "error"),
    [
        pytest.param(
            [("a.yaml", ("baremetal", "colo-a", None, None)), ("b.yaml", ("baremetal", "owned2", None, None))],
            "b.yaml: kubernetes.cluster_name: the cluster's name is owned2 here but colo-a in a.yaml",
            id="two-capi-names",
        ),
        # a file without Cluster API names no cluster (""): it neither conflicts nor hides the third file's name
        pytest.param(
            [("a.yaml", CAPI), ("b.yaml", ("baremetal", "", None, None)), ("c.yaml", ("baremetal", "c", None, None))],
            "c.yaml: kubernetes.cluster_name: the cluster's name is c here but colo-a in a.yaml",
            id="unnamed-between",
        ),
        pytest.param([("a.yaml", CAPI), ("b.yaml", ("baremetal", "", None, None)), ("c.yaml", CAPI)], None, id="one-name"),
    ],
)
def test_bare_metal_cluster_api_names_must_agree(clusters: list[Any], error: str | None) -> None:
    if error is None:
        check_one_cluster(clusters)
        return
    with pytest.raises(InputError) as caught:
        check_one_cluster(clusters)
    assert str(caught.value).startswith(error)


def test_validate_together_refuses_two_cluster_api_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = tmp_path / "a.yaml"
    first.write_text(OWNED_TWO_POOLS.format(rps=6, buy="false").replace("name: owned\n", "name: alpha\n", 1))
    second = tmp_path / "b.yaml"
    second.write_text(
        OWNED_TWO_POOLS.format(rps=6, buy="false")
        .replace("name: owned\n", "name: beta\n", 1)
        .replace("pool: chat\n", "pool: chat2\n")
        .replace("pool: embed\n", "pool: embed2\n")
        .replace("gpu-h01", "gpu-h02")
        .replace("gpu-l01", "gpu-l02")
    )
    code, _, err = specgen_in_process(capsys, "validate", "--together", str(first), str(second))
    assert code == 1
    # the second file's name (a default: the workload's name) stands at its name field
    assert f"{second}:2:7: name: the cluster's name is beta here but alpha in {first}" in err
    with pytest.raises(InputError, match="the cluster's name is beta here but alpha"):
        render_files([str(first), str(second)])


@pytest.mark.parametrize(
    ("platform", "gpu", "nics"),
    [
        # NVIDIA DGX BasePOD RA, core components: "Four OSFP ports serving eight single-port NVIDIA ConnectX-7 VPI, 2x
        # dual-port QSFP112 NVIDIA ConnectX-7 VPI, up to 400 Gb/s InfiniBand/Ethernet" (was: 1 x 25 GbE CX-6 Lx)
        pytest.param(
            "dgx-h100",
            "h100-sxm5-80gb",
            [("fabric", "connectx-7-400g-ib", 8, 400.0), ("frontend", "connectx-7-2p-400g", 2, 400.0)],
            id="dgx-h100",
        ),
        pytest.param(
            "dgx-h200",
            "h200-sxm-141gb",
            [("fabric", "connectx-7-400g-ib", 8, 400.0), ("frontend", "connectx-7-2p-400g", 2, 400.0)],
            id="dgx-h200",
        ),
        # DGX GB200 user guide, compute tray: 4 x CX-7 400G OSFP (cluster) and 2 x BlueField-3 (storage / management)
        pytest.param(
            "gb200-nvl72",
            "gb200-186gb",
            [("fabric", "connectx-7-400g-ib", 72, 400.0), ("frontend", "bluefield-3-dpu-2p-400g", 36, 400.0)],
            id="gb200-nvl72",
        ),
        # a fixed system whose front end the catalog does not give gets none invented
        pytest.param("dgx-a100", "a100-sxm4-80gb", [("fabric", "connectx-6-200g-hdr-ib", 8, 200.0)], id="dgx-a100"),
        # a chassis whose parts are chosen still gets the default front-end NIC
        pytest.param(
            "dell-xe9680-mi300x", "mi300x-192gb", [("frontend", "connectx-6-lx-2p-25gbe", 1, 25.0)], id="xe9680-configurable"
        ),
    ],
)
def test_fixed_systems_carry_their_published_nics_only(platform: str, gpu: str, nics: list[tuple[str, str, int, float]]) -> None:
    from generator.planner.nodes import _nics

    spec = catalog.platforms()[platform]
    found = _nics(spec, catalog.gpus()[gpu], max(spec.gpu_counts), False, [])
    assert [(n.role, n.nic_id, n.count, n.port_gbps) for n in found] == nics
