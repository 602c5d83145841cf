"""fix161: a service whose nodes' RAM its LoRA adapters' CPU caches fill is refused at the field that sets the caches,
with the ``max_cpu_loras`` each node kind holds.

The newuser92 persona on AWS with 2,000 adapters at rank 256 over the seven linear modules of Llama 3.1 8B: an adapter
is 32 x 256 x 81,920 x 2 B = 1,342,177,280 B (1.25 GiB), and each GPU's engine worker keeps its own cache. A
p5.48xlarge (8 H100, 2,048 GiB) holds (2,048 - 16 GiB for the OS) / (8 x 1.25 GiB) = 203.2 adapters a worker beside
the OS: 203; a p5.4xlarge (1 H100, 256 GiB) (256 - 16) / 1.25 = 192.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.api import plan_file
from generator.errors import InfeasibleError
from tests.helpers import edited_copy

WORKLOAD = Path(__file__).parent / "data" / "newuser92" / "lora-saas.yaml"
ON_AWS = ("hardware:\n", "hardware:\n  provider: aws\n")
MANY = ("adapters: 40", "adapters: 2000")
RANK = ("max_rank: 64", "max_rank: 256")


def _refusal(path: Path) -> str:
    with pytest.raises(InfeasibleError) as caught:
        plan_file(str(path))
    return str(caught.value)


def test_the_refusal_stands_at_adapters_and_names_what_fits(tmp_path: Path) -> None:
    said = _refusal(edited_copy(WORKLOAD, tmp_path, ON_AWS, MANY, RANK))
    assert ":15:19: deployments[0].inference.lora.adapters: " in said  # max_cpu_loras unset: adapters sets it
    assert "aws-p5-48xlarge has 2048 GiB RAM; 20016 GiB needed" in said  # 16 + 8 x 2,000 x 1.25
    assert (
        "to unblock: lower inference.lora.max_cpu_loras to 203 or fewer (now 2,000, unset: every adapter; the adapters "
        "beyond it are read from disk again when asked for): the most each node's RAM holds beside the OS is 203 on "
        "aws-p5-48xlarge, 192 on aws-p5-4xlarge; or allow a platform with more RAM per GPU"
    ) in said
    assert "allow a GPU with more memory" not in said  # the generic memory hints are no help here


def test_the_figure_said_fits_and_one_more_does_not(tmp_path: Path) -> None:
    cached = ("max_loras: 4", "max_loras: 4\n        max_cpu_loras: 203")
    _, plan = plan_file(str(edited_copy(WORKLOAD, tmp_path, ON_AWS, MANY, RANK, cached)))
    assert plan.pools[0].node.platform_id == "aws-p5-48xlarge"
    assert plan.deployments[0].details["lora"]["host_bytes_per_replica"] == 203 * 1_342_177_280
    one_more = ("max_loras: 4", "max_loras: 4\n        max_cpu_loras: 204")
    said = _refusal(edited_copy(WORKLOAD, tmp_path, ON_AWS, MANY, RANK, one_more, name="more.yaml"))
    assert ":18:24: deployments[0].inference.lora.max_cpu_loras: " in said
    assert "lower inference.lora.max_cpu_loras to 203 or fewer (now 204; " in said


def test_slots_no_node_caches_are_said(tmp_path: Path) -> None:
    """max_loras above what fits: a lower max_cpu_loras cannot help, since the engines refuse it below max_loras."""
    slots = ("max_loras: 4", "max_loras: 250")
    said = _refusal(edited_copy(WORKLOAD, tmp_path, ON_AWS, MANY, RANK, slots))
    assert "no node allowed holds even max_loras' 250 adapters in each GPU's cache" in said
    assert "most that fit: 203 on aws-p5-48xlarge, 192 on aws-p5-4xlarge" in said


def test_a_bought_node_past_its_dimm_slots_is_refused(tmp_path: Path) -> None:
    """20,000 adapters at rank 256 in each of a 4-GPU dell-xe8640's workers: 100,016 GiB, where its 32 DIMM slots take
    8,192 GiB (32 x 256 GiB). Before fix161 the node was built with 8,192 GiB and planned without a word; now refused,
    with (8,192 - 16) / (4 x 1.25) = 1,635.2: 1,635 adapters a worker."""
    many = ("adapters: 40", "adapters: 20000")
    said = _refusal(edited_copy(WORKLOAD, tmp_path, many, RANK))
    assert ":14:19: deployments[0].inference.lora.adapters: " in said
    assert "dell-xe8640 takes at most 8192 GiB RAM in its CPUs' channels (32 x 256 GiB DDR5-4800" in said
    assert "100016 GiB needed: 16 GiB kept for the OS and its processes and the LoRA adapters' CPU caches" in said
    assert "lower inference.lora.max_cpu_loras to 1,635 or fewer (now 20,000, unset: every adapter;" in said
    cached = ("max_loras: 4", "max_loras: 4\n        max_cpu_loras: 1635")
    _, plan = plan_file(str(edited_copy(WORKLOAD, tmp_path, many, RANK, cached, name="fits.yaml")))
    node = plan.pools[0].node
    assert node.platform_id == "dell-xe8640" and node.gpus == 4
    assert node.ram_gib is not None and node.ram_gib * 2**30 >= 16 * 2**30 + 4 * 1_635 * 1_342_177_280


def test_the_hint_and_field_from_the_reasons_alone() -> None:
    """Table-driven over Blocked reasons: the field only where the caches rule out every layout, the figure per kind."""
    from generator.planner.blocked import Blocked
    from generator.planner.lora_ram import caches_rule_out_all, lora_ram_field, lora_ram_hint
    from generator.workload.models import InferenceDeployment, InferenceSpec, LoraAdapters

    gib = 2**30
    lora = LoraAdapters(adapters=100, max_rank=64, max_loras=4, max_cpu_loras=100)
    dep = InferenceDeployment("svc", "m", InferenceSpec(max_context_tokens=8_192, lora=lora))
    # a node with 100 GiB for the caches that take 400 GiB (100 adapters a worker): 25 fit; another 60 of 200: 30
    small = Blocked("g", "small", "ram-short", "", 4, 1, host_ram_room=(100 * gib, 400 * gib))
    big = Blocked("g", "big", "ram-exceeds-platform", "", 8, 1, host_ram_room=(60 * gib, 200 * gib))
    slow = Blocked("g", "other", "no-layout", "TP1: too slow")
    assert caches_rule_out_all([small, big]) and not caches_rule_out_all([small, slow]) and not caches_rule_out_all([])
    assert lora_ram_field(dep, 2, [small, big]) == ("deployments", 2, "inference", "lora", "max_cpu_loras")
    assert lora_ram_field(dep, 2, [small, slow]) is None
    hint = lora_ram_hint(dep, [small, slow])
    assert hint is not None and "lower inference.lora.max_cpu_loras to 25 or fewer (now 100;" in hint
    assert "is 30 on big, 25 on small;" in (lora_ram_hint(dep, [small, big]) or "")
    assert lora_ram_hint(dep, [slow]) is None
    unset = dep._replace(inference=dep.inference._replace(lora=lora._replace(max_cpu_loras=None)))
    field = lora_ram_field(unset, 0, [small])
    assert field is not None and field[-1] == "adapters"  # unset: adapters sets the caches
