"""An NVLink bridge is a fact of the server, not the card (#8 review): sizing counts it only where the platform fits one.

Expected link figures: PCIe x16 per direction is 31.5 GB/s at Gen4 and 63 GB/s at Gen5 (PCIE_X16_GB_PER_S); the H100 NVL
bridge is the 247.2 GB/s per direction NCCL counts on (gpus.json ``collective_gb_per_s``), the A40 bridge 48 GB/s.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import catalog
from generator.calculator.estimate import EstimateRequest, estimate
from generator.planner import plan_workload
from generator.planner.options import Hardware, allowed_hardware, tensor_parallel_sizes
from generator.sizing.performance import accelerator_for
from generator.workload import load_workload
from tests.conftest import REPO, catalog_json
from tests.test_cloud_shapes import WORKLOAD

#: Every platform that holds a card taking an NVLink bridge, and what it says of the bridge (platforms.json).
BRIDGES = {
    "am5-desktop-tower": None,  # a dual RTX 3090 build: a bridge is an option the parts list leaves out
    "azure-standard-nc24ads-a100-v4": False,  # one GPU
    "azure-standard-nc40ads-h100-v5": False,  # one GPU
    "azure-standard-nc48ads-a100-v4": False,  # Microsoft: 'Nvidia PCIe A100 GPU', no NVLink named
    "azure-standard-nc80adis-h100-v5": True,  # Microsoft: 'NVIDIA NVLink Interconnect: Supported'
    "azure-standard-nc96ads-a100-v4": False,
    "dell-r760": None,
    "dell-r760xa": None,
    "dell-xe7740": None,
    "lga1700-desktop-tower": None,
    "wrx90-workstation": None,
}


def test_every_platform_with_a_bridge_capable_card_says_whether_it_is_bridged() -> None:
    bridge_cards = {g["id"] for g in catalog_json("gpus")["gpus"] if g["interconnect"]["kind"] == "nvlink-bridge"}
    records = {p["id"]: p for p in catalog_json("platforms")["platforms"] if bridge_cards & set(p["gpu_ids"])}
    assert {pid: rec["gpu_bridge"] for pid, rec in records.items()} == BRIDGES
    assert {pid: catalog.platforms()[pid].gpu_bridge for pid in BRIDGES} == BRIDGES


@pytest.mark.parametrize(
    ("platform", "gpu", "kind", "link_gb_per_s", "fast", "link_name", "tp_sizes"),
    [
        # the review's case: two A100 PCIe on NC48ads talk over PCIe Gen4, not a bridge
        ("azure-standard-nc48ads-a100-v4", "a100-pcie-80gb", "none", 31.5, False, "PCIe Gen4", [1, 2]),
        # without a bridge the TP group is no longer capped at the bridge's pair: TP4 over PCIe on the 4-GPU size
        ("azure-standard-nc96ads-a100-v4", "a100-pcie-80gb", "none", 31.5, False, "PCIe Gen4", [1, 2, 4]),
        ("azure-standard-nc80adis-h100-v5", "h100-nvl-94gb", "nvlink-bridge", 247.2, True, "NVLink bridge", [1, 2]),
        ("dell-r760xa", "h100-nvl-94gb", "none", 63.0, False, "PCIe Gen5", [1, 2, 4]),
        ("dell-xe7740", "h200-nvl-141gb", "none", 63.0, False, "PCIe Gen5", [1, 2, 4, 8]),
        # two GPUs share the AM5 CPU's 16 graphics lanes: x8 each (newuser25 item 12), Gen4 x8 = 15.75 GB/s
        ("am5-desktop-tower", "rtx-3090-24gb", "none", 15.75, False, "PCIe Gen4", [1, 2]),
        ("wrx90-workstation", "a40-48gb", "none", 31.5, False, "PCIe Gen4", [1, 2, 4]),
        # an SXM board is untouched: NVLink is part of it
        ("dgx-h100", "h100-sxm5-80gb", "nvlink", 370.8, True, "NVLink", [1, 2, 4, 8]),
    ],
)
def test_the_card_is_sized_as_its_platform_fits_it(
    platform: str, gpu: str, kind: str, link_gb_per_s: float, fast: bool, link_name: str, tp_sizes: list[int]
) -> None:
    spec = catalog.platforms()[platform]
    fitted = spec.fitted_gpu(catalog.gpus()[gpu])
    acc = accelerator_for(fitted, "bf16", 2)
    assert (fitted.interconnect_kind, acc.link_gb_per_s, acc.fast_link) == (kind, link_gb_per_s, fast)
    assert fitted.link_name(acc.fast_link) == link_name
    assert tensor_parallel_sizes(Hardware(spec, fitted), 64) == tp_sizes


def test_allowed_hardware_holds_the_fitted_card(tmp_path: Path) -> None:
    wl = load_workload(str(_workload(tmp_path, "azure", "a100-pcie-80gb", "meta-llama/Llama-3.1-8B-Instruct"))).workload
    kinds = {hw.platform.id: hw.gpu.interconnect_kind for hw in allowed_hardware(wl)}
    assert kinds == {
        "azure-standard-nc24ads-a100-v4": "none",
        "azure-standard-nc48ads-a100-v4": "none",
        "azure-standard-nc96ads-a100-v4": "none",
    }


@pytest.mark.parametrize(
    ("gpu", "tp", "noted"),
    [
        ("a100-pcie-80gb", 2, True),  # no server: the card's own bridge is kept, and the estimate says so
        ("a100-pcie-80gb", 1, False),
        ("a100-sxm4-80gb", 2, False),  # NVLink is on the board, nothing assumed
        ("l40s-48gb", 2, False),  # takes no bridge
    ],
)
def test_the_estimate_keeps_the_cards_bridge_and_says_so(gpu: str, tp: int, noted: bool) -> None:
    notes = estimate(EstimateRequest(model="meta-llama/Llama-3.1-8B-Instruct", gpu=gpu, tp=tp))["notes"]
    expected = (
        "TP2 is sized over the NVIDIA A100 PCIe 80GB's NVLink bridge, assumed fitted between the cards; "
        "a server without one joins them over PCIe Gen4"
    )
    assert (expected in notes) is noted


def _workload(
    tmp: Path, provider: str, gpu: str, model: str, precision: str = "bf16", rps: float = 1, platform: str | None = None
) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    path = tmp / f"{provider}-{gpu}-{platform}.yaml"
    platforms = f"  platforms: [{platform}]\n" if platform else ""
    path.write_text(WORKLOAD.format(provider=provider, gpu=gpu, model=model, precision=precision, rps=rps, platforms=platforms))
    return path


LLAMA_70B = "meta-llama/Llama-3.1-70B-Instruct"


@pytest.mark.parametrize(
    ("provider", "gpu", "precision", "platform", "reason"),
    [
        (
            "azure",
            "a100-pcie-80gb",
            "fp8",
            "azure-standard-nc48ads-a100-v4",
            "split over 2 GPUs (TP2), 31.5 GB/s per direction over PCIe Gen4; "
            "azure-standard-nc48ads-a100-v4 has no NVLink bridge between its NVIDIA A100 PCIe 80GB cards",
        ),
        (
            "azure",
            "h100-nvl-94gb",
            "bf16",  # at fp8 one GPU holds it, and the node's two run a replica each (newuser46 item 2)
            "azure-standard-nc80adis-h100-v5",
            "split over 2 GPUs (TP2), 247.2 GB/s per direction over NVLink bridge (what NCCL/RCCL count on; 300 GB/s peak)",
        ),
        (
            "baremetal",
            "h100-nvl-94gb",
            "bf16",
            "dell-r760xa",
            "split over 2 GPUs (TP2), 63 GB/s per direction over PCIe Gen5; "
            "no NVLink bridge counted: an option for dell-r760xa that the parts list leaves out",
        ),
    ],
)
def test_the_plan_says_which_link_a_split_model_uses(
    tmp_path: Path, provider: str, gpu: str, precision: str, platform: str, reason: str
) -> None:
    plan = plan_workload(load_workload(str(_workload(tmp_path, provider, gpu, LLAMA_70B, precision, 1, platform))))
    assert reason in plan.deployments[0].reasons


# without the bridge two TP2 replicas over PCIe (4.82 req/s each) now beat one TP4 (8.79) on the same server at the
# same cost: more capacity, and a replica restarts while the other serves (newuser24 item 4); the link says which
@pytest.mark.parametrize(("bridge", "tp", "link"), [(False, 2, "over PCIe"), (True, 2, "over NVLink bridge")])
def test_a_custom_server_declares_its_bridge(tmp_path: Path, bridge: bool, tp: int, link: str) -> None:
    text = (REPO / "examples" / "fleet-custom.yaml").read_text()
    if bridge:
        text = text.replace("        gpus_per_server: 4\n", "        gpus_per_server: 4\n        gpu_bridge: true\n")
    path = tmp_path / "fleet-custom.yaml"
    path.write_text(text)
    plan = plan_workload(load_workload(str(path)))
    (assistant,) = [d for d in plan.deployments if d.name == "assistant"]
    assert assistant.tp == tp  # the bridge makes TP2 fast enough (its replicas: as the SLOs and the rate say)
    assert any(r.startswith("split over 2 GPUs (TP2), ") and link in r for r in assistant.reasons), assistant.reasons


@pytest.mark.parametrize(
    ("gpu", "gpus", "noted"), [("rtx-3090-24gb", 2, True), ("rtx-3090-24gb", 1, False), ("l40s-48gb", 2, False)]
)
def test_a_training_estimate_says_the_bridge_it_assumes(gpu: str, gpus: int, noted: bool) -> None:
    """newuser68 item 9: two RTX 3090s trained over an NVLink bridge most GeForce pairs lack, without a word."""
    request = EstimateRequest(model="Qwen/Qwen3-8B", gpu=gpu, train="lora", gpus=gpus, seq_len=4096)
    notes = estimate(request)["notes"]
    said = [n for n in notes if "gradient and ZeRO traffic is sized over" in n]
    assert bool(said) is noted
    if noted:
        assert said[0].endswith("without one it crosses PCIe Gen4 (plan the machine as hardware.inventory with "
                                "custom.gpu_bridge: false to time that)")  # fmt: skip
