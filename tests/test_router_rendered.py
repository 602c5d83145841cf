"""The router a service's replicas are sized behind, in what render writes (newuser73 item 14).

agent-gke's 4 replicas rest on ``4 replica(s) x 37 places = 148 (c)`` behind a router capped at 37 in flight a replica
(``slot-routing``), and the 37 and the routing were in prose alone: no role or Helm values could read them, no
``spec.json`` diff show them move. ``spec.json`` details now carry ``router`` (routing, ``max_in_flight_per_replica``,
places) and the Ansible group vars its routing and the cap of the pool's replicas.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from generator.api import render_file

EXAMPLES = Path(__file__).parents[1] / "examples"


@pytest.mark.parametrize("example", ["chat-70b", "chat-70b-fp8-gcp", "fleet-split"])
def test_the_router_is_rendered_as_the_slot_line_sizes_it(example: str) -> None:
    files = render_file(str(EXAMPLES / f"{example}.yaml"))
    spec = json.loads(files["spec.json"])["plan"]
    served = [d for d in spec["deployments"] if "router" in d["details"]]
    assert served
    for dep in served:
        router = dep["details"]["router"]
        caps = router["max_in_flight_per_replica"]
        assert isinstance(caps, list) and all(isinstance(cap, int) for cap in caps)  # one type (review76 item 14)
        parts = dep.get("split") or [{"pool": dep["pool"], "replicas": dep["replicas"]}]
        # the places, c, are the replicas x places the SPEC.md slot line multiplies out
        assert router["places"] == sum(p["replicas"] * cap for p, cap in zip(parts, caps, strict=True))
        line = f"= {router['places']:,} (c)"
        assert line in files["SPEC.md"]
        for part, cap in zip(parts, caps, strict=True):
            assert re.search(rf"{part['replicas']:,} replica\(s\) x {cap:,} places", files["SPEC.md"])
            group = YAML(typ="safe").load(files[f"ansible/group_vars/{part['pool']}.yml"].replace("!unsafe ", ""))
            (entry,) = [e for e in group["specgen_deployments"] if e["name"] == dep["name"]]
            assert entry["router"] == {"routing": router["routing"], "max_in_flight_per_replica": cap}


def test_even_routing_renders_no_router_cap(tmp_path: Path) -> None:
    """review76 item 14: under ``routing: even`` (a Kubernetes Service or round-robin balancer, "no router that holds
    requests") the group vars carried ``router.max_in_flight_per_replica: 73``, a cap nothing there applies; the engine's
    own limit is ``engine.max_num_seqs``. spec.json keeps the places each replica's queue is sized at, as a list."""
    text = (EXAMPLES / "chat-70b.yaml").read_text()
    text = text.replace("      requests_per_second: 12\n", "      requests_per_second: 12\n      routing: even\n")
    (path := tmp_path / "chat-even.yaml").write_text(text)
    files = render_file(str(path))
    (dep,) = json.loads(files["spec.json"])["plan"]["deployments"]
    router = dep["details"]["router"]
    assert router["routing"] == "even" and router["max_in_flight_per_replica"] == [router["places"] // dep["replicas"]]
    group = YAML(typ="safe").load(files[f"ansible/group_vars/{dep['pool']}.yml"].replace("!unsafe ", ""))
    (entry,) = group["specgen_deployments"]
    assert entry["router"] == {"routing": "even"}
    assert entry["engine"]["max_num_seqs"] >= router["max_in_flight_per_replica"][0]


def test_a_pool_with_no_part_of_the_service_has_no_cap() -> None:
    """review76 item 14: ``_cap_in`` zipped the parts and caps loosely and gave None (an Ansible ``null``) where no part
    was in the pool, or the caps were fewer than the parts; now that is an error in the plan, not a rendered null."""
    from generator.api import plan_file
    from generator.render.ansible import _cap_in

    (dep,) = [d for d in plan_file(str(EXAMPLES / "fleet-split.yaml"))[1].deployments if d.split]
    router = dep.details["router"]
    assert [_cap_in(dep, pool, router) for pool in dep.pools] == router["max_in_flight_per_replica"]
    with pytest.raises(AssertionError, match="one router cap for pool elsewhere"):
        _cap_in(dep, "elsewhere", router)
    with pytest.raises(ValueError, match="shorter"):  # fewer caps than parts
        _cap_in(dep, dep.pools[0], {**router, "max_in_flight_per_replica": router["max_in_flight_per_replica"][:1]})


@pytest.mark.parametrize(
    ("old_caps", "new_caps", "said"),
    [(37, [37], None), (37, [19], "places a replica 37 → 19"), ([156, 166], [166, 166], "places a replica 156 / 166 → 166")],
)
def test_diff_reads_a_cap_list_of_one_figure_as_the_figure(old_caps: Any, new_caps: list[int], said: str | None) -> None:
    """review76 item 14: spec.json's cap is a list now (one a part); a spec.json from before holds an int for one layout
    (and a split's parts alike). The diff reads both as one figure: no change where the figure is the same."""
    from generator.fleet_diff import diff_plans, row_changes

    def plan(caps: Any) -> dict[str, Any]:
        router = {"routing": "free_place", "max_in_flight_per_replica": caps, "places": 148}
        dep = {"name": "chat", "model_id": "m", "precision": "bf16", "tp": 1, "pp": 1, "replicas": 4, "gpus": 4,
               "pool": "p", "kv_cache_precision": "bf16", "details": {"requests_per_s": 2.0, "router": router}}  # fmt: skip
        return {"provider": "aws", "totals": {}, "pools": [], "deployments": [dep]}

    rows = diff_plans(plan(old_caps), plan(new_caps))["deployments"]
    if said is None:
        assert not rows
    else:
        (row,) = rows
        assert said in row_changes(row["old"], row["new"])
