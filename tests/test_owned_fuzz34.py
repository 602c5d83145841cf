"""fuzz34 items 1, 3 and 4: owned servers shared under ``buy: false``, used in part under ``max_racks``, and left idle
while a priced owned platform is bought.

Item 1: two 1-GPU services and one owned 8-GPU DGX H100 with ``buy: false`` exited 3 ("'a' holds 1 x dgx-h100"): the
passes that share servers ran only after a pass with each deployment on its own servers, which ``buy: false`` and one
owned server made impossible. Item 3: owning 2 or 4 DGX H100 under ``max_racks: 1`` (20 kW racks) gave a $591,000
all-bought fleet, owning 1 gave $197,000 (the owned DGX plus one bought XE8640): owned kinds were used whole or not at
all. Item 4: an owned DGX H100 priced above a new one's month under ``prices:`` left both owned servers free and
bought 3 (capex $810,000) with only an info line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.calculator.report import plan_text
from generator.errors import InfeasibleError
from generator.planner import plan_workload
from generator.planner.plan import Plan
from generator.render.markdown import render_markdown
from generator.sizing.constants import Constants
from generator.workload import load_workload

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

SERVICE = """\
  - name: {name}
    model: meta-llama/Llama-3.1-{size}-Instruct
    inference: {{precision: fp8, max_context_tokens: 8192, avg_input_tokens: 800, avg_output_tokens: 200, requests_per_second: 1}}
"""

BUY_FALSE = """\
version: 1
name: multi
deployments:
{deployments}hardware:
  provider: baremetal
  gpus: [h100-sxm5-80gb]
  inventory:
    - platform: dgx-h100
      count: {count}
      hosts: [{hosts}]
  buy: false
"""


def _plan(tmp_path: Path, text: str, name: str = "w.yaml") -> Plan:
    path = tmp_path / name
    path.write_text(text)
    return plan_workload(load_workload(str(path)))


def _buy_false(sizes: list[str], count: int) -> str:
    deployments = "".join(SERVICE.format(name=chr(ord("a") + k), size=s) for k, s in enumerate(sizes))
    hosts = ", ".join(f"{{name: dgx-0{k + 1}}}" for k in range(count))
    return BUY_FALSE.format(deployments=deployments, count=count, hosts=hosts)


@pytest.mark.parametrize(
    ("sizes", "count", "idle"),
    [
        (["8B", "8B"], 1, 6),  # fuzz34 n_bf2_noshare: refused before ("'a' holds 1 x dgx-h100")
        (["8B", "70B"], 1, 5),  # n_bf2_70: TP1 + TP2
        (["8B", "8B"], 2, 6),  # count: 2 planned them on one node already
    ],
)
def test_services_share_the_one_owned_server_under_buy_false(tmp_path: Path, sizes: list[str], count: int, idle: int) -> None:
    plan = _plan(tmp_path, _buy_false(sizes, count))
    t = plan.totals
    assert (t["gpus"], t["idle_gpus"], t["nodes"], t["capex_usd"]) == (8, idle, 1, 0)
    assert [(p.name, p.nodes, p.owned_nodes, p.owned_hosts) for p in plan.pools] == [("a_b_h100_sxm5_80gb", 1, 1, ("dgx-01",))]


def test_services_overflowing_the_owned_server_are_still_refused(tmp_path: Path) -> None:
    # 4 x TP2 70B would need 8 GPUs beside the 8B's one: more than the one owned server, and none are bought
    text = _buy_false(["8B", "70B"], 1).replace(
        "model: meta-llama/Llama-3.1-70B-Instruct\n    inference: {precision: fp8, max_context_tokens: 8192, "
        "avg_input_tokens: 800, avg_output_tokens: 200, requests_per_second: 1}",
        "model: meta-llama/Llama-3.1-70B-Instruct\n    inference: {precision: fp8, max_context_tokens: 8192, "
        "avg_input_tokens: 800, avg_output_tokens: 200, requests_per_second: 1, min_replicas: 4}",
    )
    with pytest.raises(InfeasibleError, match=r"hardware\.buy is false"):
        _plan(tmp_path, text)


RACK = """\
version: 1
name: rk
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-70B-Instruct
    inference: {{precision: fp8, max_context_tokens: 8192, requests_per_second: 40}}
hardware:
  provider: baremetal
  gpus: [h100-sxm5-80gb]
  rack_power_kw: 20
{caps}  inventory:
    - platform: dgx-h100
      count: {count}
"""


def _free_colocation(free: int) -> str:
    """fix147 (newuser84 item 4): the free DGXs' colocation, 10.2 kW each x $184/kW-month = $1,876.80 a server
    (1 free: $1,877; 3: $5,630; 7: $13,138; 9: $16,891; 19: $35,659; 24: $45,043)."""
    return (
        f"; the free ones' colocation, ${free * 10.2 * 184:,.0f} a month, is paid whether they run or not and the "
        "plan's monthly figure leaves it out"
    )


@pytest.mark.parametrize("count", [1, 2, 4])
@pytest.mark.parametrize("caps", ["  max_racks: 1\n", "  max_racks: 1\n  max_capex_usd: 300000\n"])
def test_owned_servers_used_in_part_under_max_racks(tmp_path: Path, count: int, caps: str) -> None:
    """fuzz34 rk / rk1 / rk2b / rk4: one owned DGX and one bought XE8640 fit the one 20 kW rack, whatever is owned."""
    plan = _plan(tmp_path, RACK.format(count=count, caps=caps))
    t = plan.totals
    assert (t["gpus"], t["nodes"], len(plan.racks), round(t["power_w"]), t["capex_usd"]) == (12, 2, 1, 14430, 197000)
    assert round(t["usd_per_month"]) == 9409
    assert sorted((p.node.platform_id, p.nodes, p.owned_nodes) for p in plan.pools) == [
        ("dell-xe8640", 1, 0),
        ("dgx-h100", 1, 1),
    ]
    free = [f.message for f in plan.findings if f.code == "inventory-free"]
    if count == 1:
        assert free == []
    else:
        assert free == [
            f"{count - 1} of {count} owned dgx-h100 server(s) (8 x h100-sxm5-80gb) left free; the fleets that used more "
            "of them were over hardware.max_racks, so the rest of the replicas are bought" + _free_colocation(count - 1)
        ]
    # the runner-up on the owned DGXs is worded as owned (nothing bought), not at the purchase price, and says the
    # limit it breaks alone, as the inventory-free finding does (lo1 (b))
    chat = plan.deployments[0]
    runners = [r for r in chat.reasons if "runner-up 8 x TP2 on 2 x dgx-h100" in r]
    if count >= 2:
        assert runners and runners[0].endswith(
            "; runner-up 8 x TP2 on 2 x dgx-h100 (8 x h100-sxm5-80gb) ($5,566/month, 0 GPUs bought, 0 idle, 20.4 kW; "
            f"over {TWO_RACKS})"
        )


#: What the runner-up on 2 DGX H100 of 10.2 kW each says under max_racks 1 of 20 kW racks.
TWO_RACKS = "hardware.max_racks: its 2 servers alone need 2 racks of 20 kW, 1 allowed"


@pytest.mark.parametrize(
    ("count", "caps", "expected"),
    [
        # the owned DGXs: $5,566 a month against the $9,409 chosen, over the one rack (fuzz34's left-out); the bought
        # runner-up on three DGXs ($15,848) is 3 x TP8 since fix74, not 3 x TP1 PP8 at the same price: two TP8 (20.35
        # req/s each) ran 2 x 408 = 816 places, a request 20.05 s, at 98.3% busy at 40 req/s (51% wait, p95 3.33 s past
        # the 1.73 s the 2 s TTFT target leaves), so TP8 takes a third replica and fills the same three servers
        (2, "  max_racks: 1\n", [("8 x TP2 on 2 x dgx-h100", TWO_RACKS), ("3 x TP8 on 3 x dgx-h100", "3 racks")]),
        # a bought runner-up over the racks says so too; one within them says nothing
        (4, "  max_racks: 1\n", [("8 x TP2 on 2 x dgx-h100", TWO_RACKS), ("3 x TP4 on 3 x dell-xe8640", None)]),
        # 2 DGXs and an XE8640 (24.6 kW): 3 servers in 2 racks (the DGXs' part is TP8 at the same price as the TP1 PP8
        # it was before fix85 sized a split by the wait for a place: 2 x 162 + 1 x 154 places, 0.0% wait at 40 req/s)
        (
            2,
            "  max_racks: 1\n  max_capex_usd: 300000\n",
            [("2 x TP8 on 2 x dgx-h100 (8 x h100-sxm5-80gb) + 1 x TP4 on 1 x dell-xe8640", "3 servers alone need 2 racks")],
        ),
        # no max_racks: nothing to break
        (2, "", [("2 x TP8 on 2 x dgx-h100 (8 x h100-sxm5-80gb) + 1 x TP4 on 1 x dell-xe8640", None)]),
    ],
)
def test_a_runner_up_over_max_racks_says_so(
    tmp_path: Path, count: int, caps: str, expected: list[tuple[str, str | None]]
) -> None:
    """lo1 (b): the runner-up on owned servers over max_racks, cheaper than the choice, did not say why it lost."""
    plan = _plan(tmp_path, RACK.format(count=count, caps=caps))
    (chat,) = plan.deployments
    runners = {c.summary: c.over_limit for c in chat.runners_up}
    for start, over in expected:
        (said,) = [v for k, v in runners.items() if k.startswith(start)]
        if over is None or over == TWO_RACKS:
            assert said == over
        else:  # a part of the text: the count of servers and racks
            assert said is not None and over in said
    text = plan_text(plan)
    spec = render_markdown(plan)["SPEC.md"]
    if count == 2 and caps == "  max_racks: 1\n":
        assert (
            "  runner-up: 8 x TP2 on 2 x dgx-h100 (8 x h100-sxm5-80gb) (0 GPUs bought, 16 used, 20.4 kW, $5,566/month; "
            f"over {TWO_RACKS})\n"
        ) in text
        assert f"| 8 x TP2 on 2 x dgx-h100 (8 x h100-sxm5-80gb) (over {TWO_RACKS}) | 16 | 2 | 20.4 kW |" in spec
        # spec.json carries it on the runner-up; a runner-up within the limits leaves the field out
        (runner,) = [r for r in plan.to_dict()["deployments"][0]["runners_up"] if r["summary"].startswith("8 x TP2 on 2")]
        assert runner["over_limit"] == TWO_RACKS
    if not caps:
        assert "; over hardware." not in text and "(over hardware." not in spec
        assert all("over_limit" not in r for r in plan.to_dict()["deployments"][0]["runners_up"])


def test_without_max_racks_the_owned_servers_hold_the_service(tmp_path: Path) -> None:
    plan = _plan(tmp_path, RACK.format(count=4, caps=""))
    t = plan.totals
    assert (t["gpus"], t["nodes"], t["capex_usd"], round(t["usd_per_month"])) == (16, 2, 0, 5566)


@pytest.mark.parametrize("rate", [20, 1000000])
def test_owned_servers_priced_above_a_new_ones_month_are_used_first(tmp_path: Path, rate: int) -> None:
    """fuzz34 item 4: fleet-existing.yaml with prices: {dgx-h100: 20} bought 3 DGX H100 ($810,000) beside the 2 owned.

    The rate is the owned servers' all-in cost, paid whether they run or not: fleets are compared with it counted for
    the owned servers they leave free, so the owned DGXs run chat and only assistant's DGX is bought, as unpriced.
    """
    text = (EXAMPLES / "fleet-existing.yaml").read_text() + f"prices:\n  dgx-h100: {rate}\n"
    plan = _plan(tmp_path, text)
    assert plan.totals["capex_usd"] == 270000
    assert round(plan.totals["usd_per_month"]) == {20: 40637, 1000000: 1460011437}[rate]
    assert sorted((p.name, p.nodes, p.owned_nodes) for p in plan.pools) == [
        ("assistant_h100_sxm5_80gb", 1, 0),
        ("chat_dell_xe8640_h100_sxm5_80gb", 1, 1),
        ("chat_dgx_h100_h100_sxm5_80gb", 2, 2),
    ]
    assert not [f for f in plan.findings if f.code in ("owned-idle-while-bought", "inventory-free")]
    # unpriced, the same fleet at the owned servers' running costs
    plain = _plan(tmp_path, (EXAMPLES / "fleet-existing.yaml").read_text(), "plain.yaml")
    assert (plain.totals["capex_usd"], round(plain.totals["usd_per_month"])) == (270000, 17003)


def test_idle_owned_servers_beside_bought_ones_of_their_kind_are_warned(tmp_path: Path) -> None:
    """Where a fleet still leaves owned servers free and buys their kind, a warning names them with the figures."""
    from generator.planner.assemble import _owned_idle_while_bought

    text = (EXAMPLES / "fleet-existing.yaml").read_text() + "prices:\n  dgx-h100: 20\n"
    path = tmp_path / "w.yaml"
    path.write_text(text)
    loaded = load_workload(str(path))
    plan = plan_workload(loaded)
    entry = {"owned": 2, "free": 2, "free_hosts": ["dgx-01", "dgx-02"]}
    bought = [p for p in plan.pools if p.name == "assistant_h100_sxm5_80gb"]
    warned = _owned_idle_while_bought(loaded.workload, ("dgx-h100", "h100-sxm5-80gb", 8), entry, bought, Constants())
    assert [(f.level, f.code, f.path) for f in warned] == [("warning", "owned-idle-while-bought", "hardware.inventory")]
    assert warned[0].message == (
        "2 of 2 owned dgx-h100 server(s) (8 x h100-sxm5-80gb) (dgx-01, dgx-02) are left free while the plan buys 1 "
        "more dgx-h100 ($270,000 capex) in pool(s) assistant_h100_sxm5_80gb: at prices: dgx-h100 $20.00/node-hour the "
        "free ones cost $29,200 a month that the plan's monthly figure leaves out (an all-in rate of servers you own is "
        "paid whether they run or not); check why the inventory-free finding says they are not used, or set "
        "hardware.buy: false"
    )
    # servers of the kind all owned: nothing to say
    owned_only = [p for p in plan.pools if p.name == "chat_dgx_h100_h100_sxm5_80gb"]
    assert _owned_idle_while_bought(loaded.workload, ("dgx-h100", "h100-sxm5-80gb", 8), entry, owned_only, Constants()) == []


def test_a_training_job_beside_a_service_on_the_one_owned_server_is_planned_there(tmp_path: Path) -> None:
    """fuzz34 item 1 (bt.yaml): the job was refused (a job never shared a server with a service); fix182: the 7 GPUs
    the service's rate leaves of the one owned server hold it, in the service's pool, nothing bought."""
    text = _buy_false(["8B"], 1)
    text = text.replace(
        "hardware:",
        "  - name: ft\n    model: meta-llama/Llama-3.1-8B-Instruct\n    training: {method: lora, dataset_tokens: 1000000, "
        "epochs: 1, sequence_length: 2048, deadline_hours: 24}\nhardware:",
    )
    plan = _plan(tmp_path, text)
    assert [(p.nodes, p.owned_nodes, p.deployments) for p in plan.pools] == [(1, 1, ("a", "ft"))]
    assert [d.gpus for d in plan.deployments] == [1, 7]
    assert [f.path for f in plan.findings if f.code == "training-beside-service"] == ["deployments[1]"]


@pytest.mark.parametrize("count", [2, 4])
@pytest.mark.parametrize("pin", ["dell-xe8640", "dgx-h100", "supermicro-as-8125gs-tnhr"])
def test_pinning_never_beats_the_search_under_max_racks(tmp_path: Path, count: int, pin: str) -> None:
    """Property-style: the fleet searched is never worse by the objective than one pinned to a platform."""
    text = RACK.format(count=count, caps="  max_racks: 1\n")
    searched = _plan(tmp_path, text)
    pinned_text = text.replace("    inference:", f"    platform: {pin}\n    inference:")
    try:
        pinned = _plan(tmp_path, pinned_text, "pinned.yaml")
    except InfeasibleError:
        return  # nothing within the caps on that platform alone
    assert searched.totals["usd_per_month"] <= pinned.totals["usd_per_month"] + 0.005


@pytest.mark.parametrize(
    ("count", "rps", "rack_kw", "racks", "dgx", "capex", "usd_per_month"),
    [
        (20, 40, 20, 1, 1, 197000, 9409),  # review28 item 5: the counts 19..12 tried only; $591,000 all bought before
        (10, 40, 20, 1, 1, 197000, 9409),  # the one count below the 8 tried one by one
        (13, 200, 40, 2, 6, 197000, 23323),  # 6 of 13 found one by one (12..5): the same fleet owning 30 below
        (30, 200, 40, 2, 6, 197000, 23323),  # bisected below 29..22: 6 planned, then 9, 8 and 7 over the racks
    ],
)
def test_many_owned_servers_used_in_part_under_max_racks(
    tmp_path: Path, count: int, rps: int, rack_kw: int, racks: int, dgx: int, capex: int, usd_per_month: int
) -> None:
    """review28 item 5: the most owned servers a fleet within the caps uses is found however many are owned."""
    text = (
        RACK.format(count=count, caps=f"  max_racks: {racks}\n")
        .replace("requests_per_second: 40", f"requests_per_second: {rps}")
        .replace("rack_power_kw: 20", f"rack_power_kw: {rack_kw}")
    )
    plan = _plan(tmp_path, text)
    t = plan.totals
    assert (len(plan.racks), t["capex_usd"], round(t["usd_per_month"])) == (racks, capex, usd_per_month)
    assert sorted((p.node.platform_id, p.nodes, p.owned_nodes) for p in plan.pools) == [
        ("dell-xe8640", 1, 0),
        ("dgx-h100", dgx, dgx),
    ]
    free = [f.message for f in plan.findings if f.code == "inventory-free"]
    assert free == [
        f"{count - dgx} of {count} owned dgx-h100 server(s) (8 x h100-sxm5-80gb) left free; the fleets that used more "
        "of them were over hardware.max_racks, so the rest of the replicas are bought" + _free_colocation(count - dgx)
    ]
