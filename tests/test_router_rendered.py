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
        caps = caps if isinstance(caps, list) else [caps]
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
