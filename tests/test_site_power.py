"""A colocation cage's power budget (``hardware.site_power``) and GPU power limits (``gpu_power_limits``): newuser115.

Refusals stand at their file, line and field; the planner keeps the fleet under the site's continuous power or says
by how much it is over and how many nodes of each pool fit; a limited GPU draws its limit in node power and runs its
tensor rates at the clock the limit allows (clock ~ power^(1/3)); Ansible sets the limit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import catalog
from generator.api import plan_file, render_file
from generator.errors import FleetLimitError, MultipleInputError, SpecgenError
from generator.planner.gpu_power_limit import clock_fraction, limited_gpu
from generator.planner.nodes import node_power_w
from generator.planner.plan import DeploymentPlan, Plan
from generator.sizing.constants import Constants
from generator.workload import load_workload
from tests.conftest import REPO

HEAD = """\
version: 1
name: cage
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 2}
hardware:
  provider: PROVIDER
  gpus: [h100-sxm5-80gb]
"""


def _write(tmp_path: Path, body: str, provider: str = "baremetal") -> str:
    path = tmp_path / "w.yaml"
    path.write_text(HEAD.replace("PROVIDER", provider) + body)
    return str(path)


def _errors(exc: SpecgenError) -> list[SpecgenError]:
    return exc.errors if isinstance(exc, MultipleInputError) else [exc]


# (body under hardware:, provider, line, field path, words of the message)
REFUSALS = [
    ("  gpu_power_limits:\n    - {gpu: h100-sxm5-80gb, watts: 800}\n", "baremetal", 11, "hardware.gpu_power_limits[0].watts",
     "above the 700 W TDP"),
    ("  gpu_power_limits:\n    - {gpu: h100-nope, watts: 500}\n", "baremetal", 11, "hardware.gpu_power_limits[0].gpu",
     "not a catalog GPU id"),
    ("  gpu_power_limits:\n    - {gpu: h100-sxm5-80gb, watts: 500}\n    - {gpu: h100-sxm5-80gb, watts: 550}\n",
     "baremetal", 12, "hardware.gpu_power_limits[1].gpu", "twice"),
    ("  site_power: {kw: 30}\n", "aws", 10, "hardware.site_power", "provider's data centre"),
    ("  gpu_power_limits:\n    - {gpu: h100-sxm5-80gb, watts: 500}\n", "aws", 11, "hardware.gpu_power_limits",
     "neither contract nor cap"),
    ("  fixed: {gpu: h100-sxm5-80gb, gpu_count: 8, ram_gib: 1024}\n  gpu_power_limits:\n"
     "    - {gpu: h100-sxm5-80gb, watts: 500}\n", "baremetal", 12, "hardware.gpu_power_limits", "hardware.fixed"),
    ("  site_power: {kw: 30, continuous_fraction: 1.5}\n", "baremetal", 10, "hardware.site_power.continuous_fraction",
     ""),
    ("  site_power: {continuous_fraction: 0.8}\n", "baremetal", 10, "hardware.site_power", "kw"),
]  # fmt: skip


@pytest.mark.parametrize(("body", "provider", "line", "field", "words"), REFUSALS, ids=[r[3] + "-" + r[1] for r in REFUSALS])
def test_refused_at_file_line_and_field(tmp_path: Path, body: str, provider: str, line: int, field: str, words: str) -> None:
    path = _write(tmp_path, body, provider)
    with pytest.raises(SpecgenError) as info:
        load_workload(path)
    errors = _errors(info.value)
    # the one error at the field (hardware.fixed beside hardware.gpus is refused at gpus too)
    (mine,) = [e for e in errors if e.location is not None and e.location.path == field]
    assert len(errors) == 1 or "fixed" in body, [str(e) for e in errors]
    where = mine.location
    assert where is not None and where.file == path and where.line == line, where
    assert words in str(mine)


def test_clock_fraction_is_the_cube_root_of_the_power_share() -> None:
    assert clock_fraction(700, 700) == 1.0
    assert clock_fraction(900, 700) == 1.0
    assert clock_fraction(350, 700) == pytest.approx(0.5 ** (1 / 3))  # 0.794
    assert clock_fraction(550, 700) == pytest.approx(0.9228, abs=1e-4)


def test_a_limited_gpu_draws_its_limit_and_computes_at_its_clock_but_keeps_its_bandwidth() -> None:
    h100 = catalog.gpus()["h100-sxm5-80gb"]
    limited = limited_gpu(h100, 550)
    share = clock_fraction(550, 700)
    assert (limited.tdp_w, limited.rated_tdp_w) == (550, 700)
    for compute in ("fp8", "bf16"):
        assert limited.dense_tflops[compute] == pytest.approx((h100.dense_tflops[compute] or 0) * share)
    assert limited.memory_bandwidth_gb_per_s == h100.memory_bandwidth_gb_per_s  # HBM keeps its clock
    assert limited_gpu(h100, None) is h100 and limited_gpu(h100, 700) is h100


def test_a_published_system_maximum_loses_the_limited_gpus_watts_at_the_wall() -> None:
    consts = Constants()
    dgx = catalog.platforms()["dgx-h100"]
    h100 = dgx.fitted_gpu(catalog.gpus()["h100-sxm5-80gb"])
    full = node_power_w(dgx, h100, 8, 2048, 8, (), consts)
    capped = node_power_w(dgx, limited_gpu(h100, 550), 8, 2048, 8, (), consts)
    saved = round(8 * 150 * (1 + consts.fan_power_fraction) / consts.psu_efficiency)
    assert full.watts == 10_200
    assert capped.watts == 10_200 - saved
    assert "limited to 550 W" in capped.basis


def _cage(tmp_path: Path, rate: float, limit: str = "", kw: float = 30) -> str:
    body = (REPO / "examples" / "colo-cage-power-budget.yaml").read_text()
    body = body.replace("requests_per_second: 30", f"requests_per_second: {rate:g}").replace("  max_racks: 2\n", "")
    body = body.replace("kw: 30,", f"kw: {kw:g},")
    if limit != "keep":
        body = body.replace("  gpu_power_limits:\n    - {gpu: h100-sxm5-80gb, watts: 550}\n", limit)
    path = tmp_path / "cage.yaml"
    path.write_text(body)
    return str(path)


def test_the_cage_example_fits_its_site_power_and_says_what_is_left() -> None:
    _, plan = plan_file(str(REPO / "examples" / "colo-cage-power-budget.yaml"))
    drawn = sum(p.power_w for p in plan.pools)
    (said,) = [f for f in plan.findings if f.code == "site-power"]
    assert drawn <= 24_000
    assert f"the fleet draws {drawn:,} W of the 24,000 W (30 kW x 0.8 continuous)" in said.message
    assert f"{24_000 - drawn:,} W are left" in said.message
    (limit,) = [f for f in plan.findings if f.code == "gpu-power-limit"]
    assert "92.3% of its clock" in limit.message and "Kubernetes has no standard field" in limit.message


def test_a_fleet_over_the_site_power_is_refused_at_its_field_with_the_figures(tmp_path: Path) -> None:
    path = _cage(tmp_path, 80, limit="keep")
    with pytest.raises(FleetLimitError) as info:
        plan_file(path)
    exc = info.value
    assert exc.limit == "site_power" and exc.needed > 24_000
    assert exc.location is not None and exc.location.path == "hardware.site_power" and exc.location.line == 40
    text = str(exc)
    assert f"the fleet draws {exc.needed:,.0f} W at full load, over the 24,000 W" in text
    assert f"by {exc.needed - 24_000:,.0f} W" in text
    assert "of them fit beside the other pools" in text


def test_the_power_limit_slows_prompt_passes_more_than_decode(tmp_path: Path) -> None:
    _, limited = plan_file(_cage(tmp_path, 30, limit="keep"))
    _, full = plan_file(_cage(tmp_path, 30))

    def chat(plan: Plan) -> DeploymentPlan:
        return next(d for d in plan.deployments if d.name == "chat")

    a, b = chat(limited), chat(full)
    assert (a.pool, a.tp, a.replicas) == (b.pool, b.tp, b.replicas)
    ttft = a.details["ttft_p95_s"] / b.details["ttft_p95_s"]
    tpot = a.details["tpot_s"] / b.details["tpot_s"]
    slower = 1 / clock_fraction(550, 700)  # 1.084: compute-bound work at the limit's clock
    # the prompt pass (compute-bound) slows by about the clock; a decode step (weights and KV read) by less
    assert 1.05 < ttft <= slower + 0.02, ttft
    assert 1.0 < tpot < ttft, (tpot, ttft)
    # an H100 node at 550 W draws (700 - 550) x 8 GPUs less, with its fans' and PSUs' share
    assert sum(p.power_w for p in full.pools) > sum(p.power_w for p in limited.pools)


def test_ansible_sets_the_limit_at_every_boot_and_nowhere_else_without_one() -> None:
    files = render_file(str(REPO / "examples" / "colo-cage-power-budget.yaml"))
    h100 = [text for name, text in files.items() if name.startswith("ansible/group_vars/") and "h100" in name]
    l40s = [text for name, text in files.items() if name.startswith("ansible/group_vars/") and "l40s" in name]
    assert h100 and all("nvidia-smi -pl 550" in t and "at_every_boot: true" in t for t in h100)
    assert l40s and not any("specgen_gpu_power_limit" in t for t in l40s)
    assert not any("power_limit" in text or "-pl " in text for name, text in files.items() if name.startswith("cluster/"))


def test_a_lower_limit_never_loses_a_fleet_a_higher_one_planned(tmp_path: Path) -> None:
    """At 60 req/s the cost search's fleet at 500 W a GPU was over the site (24,421 W), where 550 W planned 8 x XE8640.

    The search then runs again with each layout held within the site's power beside those chosen before it (as under
    max_racks), and finds the 8 servers, now drawing less.
    """
    limits = {}
    for watts in (550, 500):
        body = (REPO / "examples" / "colo-cage-power-budget.yaml").read_text()
        body = body.replace("requests_per_second: 30", "requests_per_second: 60").replace("watts: 550", f"watts: {watts}")
        path = tmp_path / f"cage{watts}.yaml"
        path.write_text(body)
        _, plan = plan_file(str(path))
        limits[watts] = (sum(p.power_w for p in plan.pools), sum(p.nodes for p in plan.pools))
    assert limits[500][0] < limits[550][0] <= 24_000
    assert limits[500][1] == limits[550][1]
