"""GKE reservations (newuser28 items 5 and 6): ``kubernetes.reservations`` names the Compute Engine reservation a
machine type's node pools consume.

H200 (a3-ultragpu-8g) and B200 (a4-highgpu-8g) are sold through reservations, Flex-start and Spot, not on demand: a
node pool without reservationAffinity gets no node, and a nightly job on a reservation pays its whole term, not its
hours (2 x 730 h x $84 = $122,640 a month, where per run it read $23k for 30 runs). The rendering is checked in
``test_gke_node_pool_fields.py`` (ContainerNodePool and Terraform alike, through real Terraform).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from generator.api import plan_file, render_file
from generator.errors import InputError, MultipleInputError
from generator.planner.setting_findings import unused_setting_findings
from generator.workload import load_workload

BASE = """\
version: 1
name: startup-ai
deployments:
  - name: chat
    model: Qwen/Qwen3-30B-A3B
    inference: {{precision: fp8, max_context_tokens: 16384, requests_per_second: 20}}
  - name: nightly
    model: meta-llama/Llama-3.1-70B-Instruct
    training: {{method: lora, lora_rank: 16, sequence_length: 4096, dataset_tokens: 100000000, deadline_hours: 6,
      runs_per_month: 30}}
hardware: {{provider: {provider}, gpus: [{gpu}]}}
prices: {{gcp-a3-ultragpu-8g: 84}}
kubernetes:
  location: us-central1
  zone: us-central1-b
  gcp_project: startup-ml
{reservations}"""


def _write(tmp_path: Path, reservations: str = "", gpu: str = "h200-sxm-141gb", provider: str = "gcp") -> Path:
    path = tmp_path / "w.yaml"
    text = BASE.format(reservations=reservations, gpu=gpu, provider=provider)
    path.write_text(text if provider == "gcp" else text.replace("prices: {gcp-a3-ultragpu-8g: 84}\n", ""))
    return path


RESERVED = "  reservations:\n    gcp-a3-ultragpu-8g: h200-res\n"


def _plan(path: Path) -> dict[str, Any]:
    plan: dict[str, Any] = plan_file(str(path))[1].to_dict()
    return plan


def test_a_job_on_a_reservation_is_billed_by_the_month(tmp_path: Path) -> None:
    plan = _plan(_write(tmp_path, RESERVED))
    assert {p["node"]["platform_id"] for p in plan["pools"]} == {"gcp-a3-ultragpu-8g"}
    assert not any(p.get("per_job") for p in plan["pools"])
    nodes = sum(p["nodes"] for p in plan["pools"])
    assert plan["totals"]["usd_per_month"] == pytest.approx(nodes * 730 * 84)
    assert plan["totals"]["training_usd_per_job"] is None
    codes = [f["code"] for f in plan["findings"]]
    assert "not-on-demand" not in codes
    said = [f["message"] for f in plan["findings"] if f["code"] == "reserved-capacity"]
    assert said and all(
        "its GKE node pools take their nodes from reservation h200-res alone (reservationAffinity "
        "SPECIFIC_RESERVATION), billed by the month whether a job runs or not" in m
        for m in said
    )


def test_without_a_reservation_the_run_cost_says_what_it_assumes(tmp_path: Path) -> None:
    plan = _plan(_write(tmp_path))
    assert plan["totals"]["training_usd_per_job"] is not None  # per run, as Flex-start or Spot bill
    warned = {f["path"]: f["message"] for f in plan["findings"] if f["code"] == "not-on-demand"}
    assert warned["deployments[1]"].endswith(
        "a training job's cost per run assumes capacity billed by the hour (Flex-start or Spot): a reservation bills "
        "its whole term, so name it under kubernetes.reservations to cost the pool by the month"
    )
    assert "assumes capacity billed by the hour" not in warned["deployments[0]"]  # a service is monthly anyway


def test_a_reservation_no_pool_uses_is_said(tmp_path: Path) -> None:
    files = render_file(str(_write(tmp_path, RESERVED, gpu="h100-sxm5-80gb")))
    findings = json.loads(files["spec.json"])["plan"]["findings"]
    (said,) = [f for f in findings if f["code"] == "reservation-unused"]
    assert said["path"] == "kubernetes.reservations.gcp-a3-ultragpu-8g"
    assert said["message"].startswith("kubernetes.reservations names h200-res for gcp-a3-ultragpu-8g, on which no pool runs")


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ("gcp-a3-ultragpu-9g: r", "unknown platform 'gcp-a3-ultragpu-9g'"),
        ("aws-p5-48xlarge: r", "'aws-p5-48xlarge' is a platform of provider aws; this workload's hardware.provider is gcp"),
        ("gcp-a3-ultragpu-8g: H200_Res", "does not match"),
        ("gcp-a3-ultragpu-8g: projects/p/reservations/r", "does not match"),  # a project id has 6 to 30 characters
        ("gcp-a3-ultragpu-8g: 'r\\n'", "does not match"),
    ],
)
def test_a_bad_reservation_entry_is_refused_at_its_line(tmp_path: Path, entry: str, said: str) -> None:
    path = _write(tmp_path, f"  reservations:\n    {entry}\n")
    with pytest.raises((InputError, MultipleInputError)) as refused:
        load_workload(str(path))
    assert re.search(r"w\.yaml:18:\d+", str(refused.value)), str(refused.value)
    assert said in str(refused.value)


@pytest.mark.parametrize(
    "name",
    ["h200-res", "projects/shared-cap/reservations/h200-res", "h200-res/reservationBlocks/block-1", "a"],
)
def test_reservation_names_gke_takes_are_accepted(tmp_path: Path, name: str) -> None:
    wl = load_workload(str(_write(tmp_path, f"  reservations:\n    gcp-a3-ultragpu-8g: {name}\n"))).workload
    assert wl.kubernetes.reservations == {"gcp-a3-ultragpu-8g": name}


def test_reservations_off_gke_are_unused(tmp_path: Path) -> None:
    text = _write(tmp_path, RESERVED, gpu="h100-sxm5-80gb", provider="aws").read_text()
    path = tmp_path / "aws.yaml"
    path.write_text(text.replace("  gcp_project: startup-ml\n", "").replace("  zone: us-central1-b\n", "")
                    .replace("location: us-central1", "location: us-east-1"))  # fmt: skip
    said = {f.path: f.message for f in unused_setting_findings(load_workload(str(path)).workload)}
    assert said["kubernetes.reservations"].startswith("kubernetes.reservations is read only for GKE node pools")
