"""hostile98: hostile input against the fifty-sixth session's new paths (``sites``, ``kubernetes.data_residency``,
``hardware.site_power``, ``hardware.gpu_power_limits``): each bad file is refused at its field with a line, every
error says what is true of the value (no second error contradicting the first), and a refused render writes no
output directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator import catalog
from generator.errors import InputError, MultipleInputError
from generator.planner.gpu_power_limit import limited_gpu
from generator.planner.nodes import node_power_w
from generator.sizing.constants import Constants
from generator.workload import load_workload
from tests.helpers import run_specgen

CLOUD = """version: 1
name: eu
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: fp8, max_context_tokens: 8192, requests_per_second: 2}}
hardware:
  provider: {provider}
  gpus: [h100-sxm5-80gb, l4-24gb]
kubernetes:
  location: {location}
  data_residency: eu
outputs: [terraform, ansible]
"""

COLO = """version: 1
name: colo
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: fp8, max_context_tokens: 8192, requests_per_second: 2}}
hardware:
  provider: baremetal
  gpus: [h100-sxm5-80gb, l40s-48gb]
  gpu_power_limits:
    - {{gpu: {gpu}, watts: {watts}}}
outputs: [terraform, ansible]
"""


def _errors(tmp_path: Path, text: str) -> list[InputError]:
    path = tmp_path / "w.yaml"
    path.write_text(text)
    try:
        load_workload(str(path))
    except MultipleInputError as exc:
        return [e for e in exc.errors if isinstance(e, InputError)]
    except InputError as exc:
        return [exc]
    return []


# (provider, location as written, the one error's text). Before the fix each also got a second error at the same
# field calling the location "outside the EU" (WestEurope is westeurope, Amsterdam; EU-NORTH-1 is eu-north-1).
RESIDENCY = [
    ("azure", "WestEurope", "is written westeurope"),
    ("azure", "West Europe", "is written westeurope"),
    ("aws", "EU-NORTH-1", "is written eu-north-1"),
    ("gcp", "Europe-West4-a", "is written europe-west4-a"),
    ("gcp", "europe-west99-a", "is not a Google Cloud region"),
    ("aws", "eu-atlantis-1", "is not an AWS Region"),
]


@pytest.mark.parametrize(("provider", "location", "says"), RESIDENCY)
def test_misspelt_eu_location_is_not_called_outside_the_eu(tmp_path: Path, provider: str, location: str, says: str) -> None:
    errors = _errors(tmp_path, CLOUD.format(provider=provider, location=f"'{location}'"))
    at_location = [e for e in errors if e.location is not None and e.location.path == "kubernetes.location"]
    assert len(at_location) == 1, [e.message for e in errors]
    assert says in at_location[0].message
    assert at_location[0].location is not None and at_location[0].location.line == 11
    assert not any("outside the EU" in e.message for e in errors)


def test_non_eu_region_is_still_refused(tmp_path: Path) -> None:
    errors = _errors(tmp_path, CLOUD.format(provider="aws", location="us-east-1"))
    assert [e.location.path for e in errors if e.location] == ["kubernetes.location"]
    assert "is not an EU region" in errors[0].message


# (gpu, watts, field refused or None, text). A limit on a catalog GPU the plan may not use was silently ignored.
POWER_LIMITS = [
    ("a100-sxm4-80gb", 300, "hardware.gpu_power_limits[0].gpu", "not among hardware.gpus"),
    ("h100-sxm9", 550, "hardware.gpu_power_limits[0].gpu", "not a catalog GPU id"),
    ("h100-sxm5-80gb", 800, "hardware.gpu_power_limits[0].watts", "above the 700 W TDP"),
    ("h100-sxm5-80gb", 0, "hardware.gpu_power_limits[0].watts", "out of range"),
    ("h100-sxm5-80gb", -1, "hardware.gpu_power_limits[0].watts", "out of range"),
    ("h100-sxm5-80gb", ".nan", "hardware.gpu_power_limits[0].watts", "not a finite number"),
    ("l40s-48gb", 300, None, ""),
    ("h100-sxm5-80gb", 550.5, None, ""),
]


@pytest.mark.parametrize(("gpu", "watts", "field", "says"), POWER_LIMITS)
def test_gpu_power_limit_refused_at_field(tmp_path: Path, gpu: str, watts: object, field: str | None, says: str) -> None:
    errors = _errors(tmp_path, COLO.format(gpu=gpu, watts=watts))
    if field is None:
        assert errors == []
        return
    assert [e.location.path for e in errors if e.location] == [field], [e.message for e in errors]
    assert says in errors[0].message and errors[0].location is not None and errors[0].location.line == 11


def test_refused_render_leaves_no_directory(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(CLOUD.format(provider="azure", location="WestEurope"))
    out = tmp_path / "out"
    result = run_specgen("render", str(path), "-o", str(out))
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "w.yaml:11:" in result.stderr and "kubernetes.location" in result.stderr
    assert "outside the EU" not in result.stderr
    assert not out.exists()


NAME = st.text(alphabet=st.sampled_from("abz09-_ AÖé\u00a0."), min_size=0, max_size=45)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=NAME, second=NAME)
def test_site_names_property(tmp_path: Path, first: str, second: str) -> None:
    """Any two site names: the workload loads, or every error names a field under sites with its line (never a crash)."""
    text = f"""version: 1
name: edge
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: fp8, max_context_tokens: 8192, requests_per_second: 0.5}}
hardware:
  provider: baremetal
  buy: false
  inventory:
    - custom: {{name: box, kind: workstation, gpu: l4-24gb, gpus_per_server: 2, cpu_cores: 16, ram_gib: 64,
               nvme_tb: 1.92, max_power_w: 550}}
      count: 2
      hosts: [{{name: a-1, ip_address: 10.0.0.1}}, {{name: a-2, ip_address: 10.0.0.2}}]
sites:
  - {{name: {json.dumps(first)}, hosts: [a-1]}}
  - {{name: {json.dumps(second)}, hosts: [a-2]}}
"""
    errors = _errors(tmp_path, text)
    for error in errors:
        assert error.location is not None and error.location.line is not None
        assert error.location.path.startswith("sites["), (error.location.path, error.message)
    valid = all(n and n[0] in "az09" and set(n) <= set("abz09-") and len(n) <= 41 for n in (first, second))
    assert (errors == []) == (valid and first != second), [e.message for e in errors]


EDGE = """version: 1
name: edge
deployments:
  - name: {deployment}
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: fp8, max_context_tokens: 8192, requests_per_second: 0.5}}
hardware:
  provider: baremetal
  buy: false
  inventory:
    - custom: {{name: box, kind: workstation, gpu: l4-24gb, gpus_per_server: 2, cpu_cores: 16, ram_gib: 64,
               nvme_tb: 1.92, max_power_w: 550}}
      count: 2
      hosts: [{{name: a-1, ip_address: 10.0.0.1}}, {{name: a-2, ip_address: 10.0.0.2}}]
sites:
  - {{name: {first}, hosts: [a-1]}}
  - {{name: b, hosts: [a-2]}}
outputs: [ansible]
"""

# (deployment, first site's name, field, text, exit code). Site 'l4-24gb' beside a deployment 'site' on L4s: both
# Ansible groups were site_l4_24gb, so the "site" group held every store's box (rendered, exit 0, before the fix).
SITES = [
    ("site", "l4-24gb", "sites[0].name", "the name of a pool's group", 1),
    ("chat", "b", "sites[1].name", "used twice", 1),
    ("chat", "''", "sites[0].name", "does not match", 1),
    ("chat", "störe", "sites[0].name", "outside ASCII", 1),
    ("chat", "l4-24gb", None, "", 0),
]


@pytest.mark.parametrize(("deployment", "first", "field", "says", "code"), SITES)
def test_sites_refused_at_field_without_output(
    tmp_path: Path, deployment: str, first: str, field: str | None, says: str, code: int
) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(EDGE.format(deployment=deployment, first=first), encoding="utf-8")
    out = tmp_path / "out"
    result = run_specgen("render", str(path), "-o", str(out))
    assert result.returncode == code and "Traceback" not in result.stderr, result.stderr
    if field is None:
        again = run_specgen("render", str(path), "-o", str(tmp_path / "again"))
        assert again.returncode == 0
        for written in sorted(out.rglob("*")):  # deterministic to the byte
            if written.is_file():
                assert written.read_bytes() == (tmp_path / "again" / written.relative_to(out)).read_bytes()
        return
    assert f"w.yaml:{16 if field == 'sites[0].name' else 17}:" in result.stderr and field in result.stderr
    assert says in result.stderr
    assert not out.exists()


# (a DGX H100's maximum as published / given, W; the boards' limit, W; its wall power, W). A limit lowers the
# maximum by the boards' saved watts, but to the parts' sum at the limit at most (1,905 W at 1 W a board here) and
# never above the maximum: before the fix a maximum of 1,800 W at 1 W a board came out at -4,744 W (a custom box's
# max_power_w of 150 W with two L4s at 1 W: "$-1/month, -0.0 kW").
NODE_POWER = [
    (10_200, 550, 8_796),
    (10_200, 1, 3_656),
    (3_000, 1, 1_905),
    (1_800, 1, 1_800),
]


@pytest.mark.parametrize(("maximum_w", "limit_w", "wall_w"), NODE_POWER)
def test_power_limit_never_drives_node_power_below_its_parts(maximum_w: int, limit_w: int, wall_w: int) -> None:
    consts = Constants()
    dgx = catalog.platforms()["dgx-h100"]._replace(max_power_w=maximum_w)
    h100 = dgx.fitted_gpu(catalog.gpus()["h100-sxm5-80gb"])
    power = node_power_w(dgx, limited_gpu(h100, limit_w), 8, 2048, 8, (), consts)
    assert power.watts == wall_w and power.dc_load_w > 0
    assert (f"(-{maximum_w - wall_w:,} W)" in power.basis) == (wall_w < maximum_w)
