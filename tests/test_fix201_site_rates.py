"""fix201: per-site plans diffed as the chain's totals, and a site's own rate (``sites[].requests_per_second_scale``).

Before, ``specgen diff`` of the chain's pooled plan against its per-site one compared one site's plan ("28 -> 1
nodes"), and every site took the deployments' rates: a store in a busy mall was sized as a village store.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator import planner
from generator.api import plan_file, render_file
from generator.errors import InfeasibleError
from generator.planner.per_site import plan_per_site
from generator.workload import load_workload
from tests.helpers import run_specgen
from tests.test_newuser113_sites import BASE, _line, _write

BUSY = BASE.replace("hosts: [b-2, b-1]}", "hosts: [b-2, b-1], requests_per_second_scale: 3}")


def _spec(tmp_path: Path, name: str, text: str) -> Path:
    """The spec.json of workload ``text`` (written to ``name``)."""
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    spec = tmp_path / f"{name}.json"
    spec.write_text(render_file(str(path))["spec.json"], encoding="utf-8")
    return spec


def test_a_diff_of_pooled_against_per_site_compares_the_chain_and_says_the_sites(tmp_path: Path) -> None:
    pooled = _spec(tmp_path, "pooled", BASE.split("sites:\n", maxsplit=1)[0] + "outputs: [ansible]\n")
    sited = _spec(tmp_path, "sited", BASE)
    new = json.loads(sited.read_text())["plan"]
    done = run_specgen("diff", str(pooled), str(sited))
    assert done.returncode == 0, done.stderr
    nodes = json.loads(pooled.read_text())["plan"]["totals"]["nodes"]
    chain = new["sites"]["totals"]
    assert chain["nodes"] == 2 * new["totals"]["nodes"]  # one site's boxes times the sites
    assert f"| nodes | {nodes} | {chain['nodes']} | {chain['nodes'] - nodes:+d} |" in done.stdout
    assert f" | {chain['gpus']} | " in done.stdout
    assert "**Sites: one pooled fleet (no sites) → 2 sites (1 node(s), 2 GPU(s) a site).**" in done.stdout
    assert run_specgen("diff", str(pooled), str(sited)).stdout == done.stdout  # to the byte
    assert run_specgen("diff", "--exit-code", str(pooled), str(sited)).returncode == 6  # the fleet moved


def test_a_diff_says_a_changed_site_count_and_layout(tmp_path: Path) -> None:
    even, busy = _spec(tmp_path, "even", BASE), _spec(tmp_path, "busy", BUSY)
    done = run_specgen("diff", str(even), str(busy))
    assert done.returncode == 0, done.stderr
    said = "**Sites: 2 sites (1 node(s), 2 GPU(s) a site) → 2 sites (1 at x1: 1 node(s), 2 GPU(s) a site; 1 at x3: "
    assert said + "2 node(s), 4 GPU(s) a site).**" in done.stdout
    assert "| nodes | 2 | 3 | +1 |" in done.stdout and "| gpus | 4 | 6 | +2 |" in done.stdout
    same = run_specgen("diff", str(even), str(even))
    assert "**Sites:" not in same.stdout


def test_each_rate_scale_is_planned_once_and_the_chain_sums_them(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    three = BUSY.replace("count: 4", "count: 6").replace(
        "        - {name: b-2, ip_address: 10.2.0.2}\n",
        "        - {name: b-2, ip_address: 10.2.0.2}\n"
        "        - {name: c-1, ip_address: 10.3.0.1}\n        - {name: c-2, ip_address: 10.3.0.2}\n",
    )
    three = three.replace("outputs:", "  - {name: store-c, hosts: [c-1, c-2]}\noutputs:")
    loaded = load_workload(str(_write(tmp_path, text=three)))
    calls: list[Any] = []

    def counted(one: Any) -> Any:
        calls.append(one.workload.deployments[0].inference.requests_per_second)
        return planner._plan_workload(one)

    plan = plan_per_site(loaded, counted)
    assert calls == [0.8, pytest.approx(2.4)]  # store-a and store-c share a profile: planned once
    assert plan.sites is not None
    a, b = plan.sites.profiles
    assert (a["sites"], b["sites"]) == (["store-a", "store-c"], ["store-b"])
    assert plan.sites.totals["nodes"] == 2 * a["per_site"]["nodes"] + b["per_site"]["nodes"] == 4
    assert plan.sites.totals["gpus"] == 8
    (warned,) = [f for f in plan.findings if f.code == "per-site-layouts"]
    assert warned.path == "sites[1].requests_per_second_scale" and "chat 1 x TP2 on chat_l4_24gb" in warned.message


def test_the_spec_shows_each_rate_scale(tmp_path: Path) -> None:
    spec = render_file(str(_write(tmp_path, text=BUSY)))["SPEC.md"]
    assert "| x1 | 1 (`store-a`) | 2 | 1 | 0.55 kW | $31.32/month |" in spec
    assert "| x3 | 1 (`store-b`) | 4 | 2 | 1.10 kW |" in spec and "`chat` 1 x TP2 on `chat_l4_24gb`" in spec


def test_a_busy_site_whose_box_cannot_hold_its_rate_is_refused_at_its_scale(tmp_path: Path) -> None:
    text = BUSY.replace("count: 4", "count: 2")
    for gone in ("        - {name: a-2, ip_address: 10.1.0.2}\n", "        - {name: b-2, ip_address: 10.2.0.2}\n"):
        text = text.replace(gone, "")
    text = text.replace("[a-1, a-2]", "[a-1]").replace("[b-2, b-1]", "[b-1]")
    path = _write(tmp_path, text=text)
    with pytest.raises(InfeasibleError) as caught:
        plan_file(str(path))
    message = str(caught.value)
    assert message.startswith(f"{path}:{_line(path, '{name: store-b')}:")
    assert "sites[1].requests_per_second_scale: site 'store-b' (b-1) cannot hold its services at each " in message
    assert "per-site rate x 3 " in message and "at deployments[1].model: deployment 'embed'" in message
    done = run_specgen("plan", str(path))
    assert done.returncode == 3 and "Traceback" not in done.stderr and "store-b" in done.stderr
