"""fuzz23 items 4 and 6: a named pool beside a deployment named like it; a deployment leaving a named pool in `diff`.

Item 4: ``pool: chat`` on one deployment and a deployment *named* ``chat`` (naming no pool) on the same GPU were told
apart by platform (``chat_aws_p5_48xlarge_8x_h100_sxm5_80gb`` and ``chat_aws_p5_48xlarge_h100_sxm5_80gb``, same
servers), and the finding said the first "keeps the name". Both would be ``chat_h100_sxm5_80gb``: the README refuses a
pool name another pool of the workload has, at the ``pool`` field; a name that says another deployment's name would
mislead whoever reads the node label, so neither is hashed.

Item 6: the named pool's first deployment (``small``, on g2-standard-4) left; its short name passed to ``big`` and
``big2``'s servers (g2-standard-96, pool ``..._07a57649`` before). The diff said "2 node(s) deleted and 4 created"
(6 are deleted: 2 g2-standard-4 and the removed pool's 4) and that ``big``, ``big2``, ``small`` "move" from
g2-standard-4, where big and big2 never ran.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.api import plan_file
from generator.errors import InputError
from generator.fleet_diff import diff_plans, markdown_diff, pool_replacements

_SMALL = (
    "model: llama-3.1-8b\n    inference: {max_context_tokens: 4096, avg_input_tokens: 500, avg_output_tokens: 100, "
    "requests_per_second: 0.2}\n"
)
_BIG = (
    "model: meta-llama/Llama-3.3-70B-Instruct\n    inference: {precision: fp8, max_context_tokens: 8192, "
    "avg_input_tokens: 1000, avg_output_tokens: 200, requests_per_second: 5}\n"
)


def _workload(third: str) -> str:
    return (
        "version: 1\nname: pn\ndeployments:\n"
        f"  - name: x\n    pool: chat\n    {_SMALL}"
        f"  - name: y\n    pool: other\n    {_SMALL}"
        f"{third}"
        "hardware: {provider: aws, gpus: [h100-sxm5-80gb]}\n"
    )


def _plan(tmp_path: Path, text: str) -> dict[str, Any]:
    path = tmp_path / "pn.yaml"
    path.write_text(text)
    return plan_file(str(path))[1].to_dict()


@pytest.mark.parametrize(
    ("third", "pools"),
    [
        pytest.param("", ["chat_h100_sxm5_80gb", "other_h100_sxm5_80gb"], id="named-pools-alone"),
        pytest.param(  # the deployment chat names a pool of its own: no pool is named chat_<gpu> but x's
            f"  - name: chat\n    pool: big\n    {_BIG}",
            ["big_h100_sxm5_80gb", "chat_h100_sxm5_80gb", "other_h100_sxm5_80gb"],
            id="deployment-chat-in-a-named-pool",
        ),
        pytest.param(  # a deployment named otherwise: its pool is named after it, x's keeps chat_<gpu>
            f"  - name: chat2\n    {_BIG}",
            ["chat2_h100_sxm5_80gb", "chat_h100_sxm5_80gb", "other_h100_sxm5_80gb"],
            id="deployment-named-otherwise",
        ),
    ],
)
def test_a_named_pool_is_named_pool_gpu(tmp_path: Path, third: str, pools: list[str]) -> None:
    plan = _plan(tmp_path, _workload(third))
    assert sorted(p["name"] for p in plan["pools"]) == pools
    assert not [f for f in plan["findings"] if f["code"] == "pool-other-servers"]


_LORA = "model: llama-3.1-8b\n    training: {method: lora, sequence_length: 2048, dataset_tokens: 10000000, epochs: 1}\n"


@pytest.mark.parametrize(
    "text",
    [
        # before: chat_aws_p5_48xlarge_8x_h100_sxm5_80gb and chat_aws_p5_48xlarge_h100_sxm5_80gb, exit 0
        pytest.param(_workload(f"  - name: chat\n    {_BIG}"), id="service-beside-named-pool"),
        # before: the job was kept apart as chat_aws_p5_48xlarge_h100_sxm5_80gb, "beside pool chat's other deployments"
        pytest.param(
            "version: 1\nname: pn\ndeployments:\n"
            f"  - name: x\n    pool: chat\n    {_LORA}"
            f"  - name: chat\n    {_SMALL}"
            "hardware: {provider: aws, gpus: [h100-sxm5-80gb]}\n",
            id="training-job-beside-named-pool",
        ),
    ],
)
def test_a_deployment_named_like_a_named_pool_is_refused_at_the_pool(tmp_path: Path, text: str) -> None:
    with pytest.raises(InputError) as caught:
        _plan(tmp_path, text)
    assert str(caught.value) == (
        f"{tmp_path / 'pn.yaml'}:5:11: deployments[0].pool: pool chat would be named chat-h100-sxm5-80gb, as the pool "
        "of deployment chat is: give one of them another pool name"
    )


# ---------------------------------------------------------------- item 6: a deployment leaving a named pool


def _pool(name: str, platform: str, nodes: int) -> dict[str, Any]:
    return {"name": name, "nodes": nodes, "power_w": 400 * nodes, "usd_per_hour": 1.0 * nodes,
            "node": {"gpu_id": "l4-24gb", "gpus": 8, "platform_id": platform}}  # fmt: skip


def _dep(name: str, pool: str) -> dict[str, Any]:
    return {"name": name, "model_id": "m", "precision": "fp8", "tp": 8, "pp": 1, "replicas": 1, "gpus": 8,
            "pool": pool, "details": {"named_pool": "serving-pool"}}  # fmt: skip


SHORT, LONG = "serving_pool_l4_24gb", "serving_pool_gcp_g2_st_07a57649"
G4, G96 = "gcp-g2-standard-4", "gcp-g2-standard-96"
#: p3.yaml of the report: small on 2 x g2-standard-4 keeps the short name, big and big2 on 4 x g2-standard-96.
BEFORE = {"provider": "gcp", "totals": {}, "pools": [_pool(SHORT, G4, 2), _pool(LONG, G96, 4)],
          "deployments": [_dep("small", SHORT), _dep("big", LONG), _dep("big2", LONG)]}  # fmt: skip


@pytest.mark.parametrize(
    ("after", "removed", "added", "deleted", "created", "moved"),
    [
        pytest.param(  # small leaves: big and big2's servers take the short name; both old pools' nodes go
            {"provider": "gcp", "totals": {}, "pools": [_pool(SHORT, G96, 4)],
             "deployments": [_dep("big", SHORT), _dep("big2", SHORT)]},
            [LONG, SHORT], [SHORT], 6, 4, [], id="first-deployment-leaves",
        ),
        pytest.param(  # small moves onto big's servers: it moves, big and big2 do not
            {"provider": "gcp", "totals": {}, "pools": [_pool(SHORT, G96, 5)],
             "deployments": [_dep("small", SHORT), _dep("big", SHORT), _dep("big2", SHORT)]},
            [LONG, SHORT], [SHORT], 6, 5, ["small"], id="first-deployment-joins-the-others",
        ),
        pytest.param(  # the short-named pool alone moves (big and big2 untouched): one entry, its own nodes
            {"provider": "gcp", "totals": {}, "pools": [_pool(SHORT, G96, 1), _pool(LONG, G96, 4)],
             "deployments": [_dep("small", SHORT), _dep("big", LONG), _dep("big2", LONG)]},
            [SHORT], [SHORT], 2, 1, ["small"], id="kept-name-moves-alone",
        ),
    ],
)  # fmt: skip
def test_a_pool_taking_a_removed_pools_services_counts_both(
    after: dict[str, Any], removed: list[str], added: list[str], deleted: int, created: int, moved: list[str]
) -> None:
    (entry,) = pool_replacements(BEFORE, after)
    assert [p["pool"] for p in entry["removed"]] == removed and [p["pool"] for p in entry["added"]] == added
    assert (entry["nodes_deleted"], entry["nodes_created"], entry["moved"]) == (deleted, created, moved)
    assert entry["was"]["platform"] == G4  # the kept name's hardware before
    text = markdown_diff(diff_plans(BEFORE, after))
    assert f"**Node pools replaced, not resized: {deleted} node(s) deleted and {created} created.**" in text


def test_the_leaving_deployment_text_names_no_one_moving() -> None:
    """Before: "`serving_pool_l4_24gb` (4 nodes) keeps its name on other hardware, ... (was l4-24gb on
    gcp-g2-standard-4; `big`, `big2`, `small` move): applying it deletes 2 nodes and creates 4"."""
    after = {"provider": "gcp", "totals": {}, "pools": [_pool(SHORT, G96, 4)],
             "deployments": [_dep("big", SHORT), _dep("big2", SHORT)]}  # fmt: skip
    text = markdown_diff(diff_plans(BEFORE, after))
    assert (
        f"- `{LONG}` (4 nodes), `{SHORT}` (2 nodes) replaced by `{SHORT}` (4 nodes), l4-24gb on {G96} (`{SHORT}` was "
        f"l4-24gb on {G4}): applying it deletes 6 nodes and creates 4"
    ) in text
    assert "or its first deployment in the file changed (it runs on other servers, left, or another came" in text


def test_a_deployment_coming_first_counts_the_pool_created_for_the_others() -> None:
    """p4 -> p3: small comes first in the file and takes the short name; big and big2 get a pool of their own.

    Before: "4 node(s) deleted and 2 created" (the 4 g2-standard-96 nodes of the new pool ``..._07a57649`` were left
    out) and `big`, `big2`, `small` "move".
    """
    before = {"provider": "gcp", "totals": {}, "pools": [_pool(SHORT, G96, 4)],
              "deployments": [_dep("big", SHORT), _dep("big2", SHORT)]}  # fmt: skip
    (entry,) = pool_replacements(before, BEFORE)
    assert [p["pool"] for p in entry["removed"]] == [SHORT] and [p["pool"] for p in entry["added"]] == [LONG, SHORT]
    assert (entry["nodes_deleted"], entry["nodes_created"], entry["moved"]) == (4, 6, [])
    assert (entry["platform"], entry["was"]["platform"]) == (G4, G96)  # the kept name's hardware after and before
    assert "**Node pools replaced, not resized: 4 node(s) deleted and 6 created.**" in markdown_diff(diff_plans(before, BEFORE))
