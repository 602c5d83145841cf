"""acc145: an EP all-to-all past one node sends its node's peers' share over the GPU link, the rest over the network.

NCCL's all-to-all is one send a peer in one group, each over its own transport (P2P over NVLink / PCIe inside a node,
NET between nodes: https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/usage/p2p.html,
https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html ``NCCL_P2P_DISABLE``), at once. The cases are by
hand: the link rates are the catalog's NVLink figures (``gpu_link``) and the node's NICs over its GPUs.
"""

from __future__ import annotations

import pytest

from generator import catalog
from generator.catalog import find_gpu
from generator.planner.training_comm import ep_link_name, links_between, step_links
from generator.sizing.alltoall_split import alltoall_gbps, fewest_node_gpus, node_peer_share
from generator.sizing.constants import with_overrides

#: NVLink Gb/s a GPU inside an 8-GPU B200 / H100 board and a GB200 NVL72 rack (the catalog's, 720 and 370.8 GB/s).
B200_NVLINK, H100_NVLINK, GB200_NVLINK = 5760.0, 2966.4, 5760.0


@pytest.mark.parametrize(
    ("ranks", "node_ranks", "share"),
    [
        (64, 8, 7 / 63),  # EP 64 over 8-GPU nodes: 7 of its 63 peers in the node
        (16, 8, 7 / 15),
        (8, 8, 1.0),  # EP 8 in one node: every peer there
        (64, 72, 1.0),  # EP 64 inside a 72-GPU NVL72 domain
        (8, 1, 0.0),  # one GPU a node: every peer over the network
        (1, 1, 1.0),  # no peers
        (12, 4, 3 / 11),  # the fewest of an uneven group on one node
    ],
)
def test_node_peer_share_by_hand(ranks: int, node_ranks: int, share: float) -> None:
    assert node_peer_share(ranks, node_ranks) == pytest.approx(share)


@pytest.mark.parametrize(
    ("ranks", "node_ranks", "link", "network", "gbps"),
    [
        # the network's 56/63 of the bytes at 400 Gb/s bound it (NVLink's 7/63 at 5,760 would allow 51,840)
        (64, 8, B200_NVLINK, 400.0, 400.0 * 63 / 56),
        (8, 8, B200_NVLINK, 400.0, B200_NVLINK),
        (8, 1, B200_NVLINK, 400.0, 400.0),
        # a link slower than its share of the network: the in-node share bounds it (3 of 7 peers at 100 Gb/s)
        (8, 4, 100.0, 1000.0, 100.0 * 7 / 3),
    ],
)
def test_alltoall_gbps_the_slower_share_bounds_it(ranks: int, node_ranks: int, link: float, network: float, gbps: float) -> None:
    assert alltoall_gbps(ranks, node_ranks, link, network) == pytest.approx(gbps)


@pytest.mark.parametrize(
    ("gpu", "gpus_per_node", "nodes", "node_gbps", "tp", "ep", "gbps", "crosses"),
    [
        # EP 64 over 8-GPU B200 nodes (8 x 400 Gb/s): 56 of 63 peers' bytes at a GPU's 400 Gb/s; all of them before
        pytest.param("b200-sxm-180gb", 8, 8, 3200.0, 1, 64, 400.0 * 63 / 56, True, id="ep64-over-8-gpu-nodes"),
        # EP 8 inside one node: all of it over NVLink
        pytest.param("b200-sxm-180gb", 8, 8, 3200.0, 1, 8, B200_NVLINK, False, id="ep8-one-node"),
        # GB200 NVL72: the rack is one 72-GPU node, EP 64 all on its scale-up NVLink
        pytest.param("gb200-186gb", 72, 4, 28800.0, 1, 64, GB200_NVLINK, False, id="ep64-nvl72"),
        # TP 2 x EP 16 = 32 GPUs over 8-GPU nodes: 4 ranks a node, 3 of 15 peers in it
        pytest.param("h100-sxm5-80gb", 8, 8, 3200.0, 2, 16, 400.0 * 15 / 12, True, id="tp2-ep16"),
        # 12-GPU groups on 8-GPU nodes: some group holds 4 GPUs of a node, 3 of 11 peers
        pytest.param("h100-sxm5-80gb", 8, 3, 3200.0, 1, 12, 400.0 * 11 / 8, True, id="ep12-uneven"),
    ],
)
def test_ep_links_split_the_all_to_all(
    gpu: str, gpus_per_node: int, nodes: int, node_gbps: float, tp: int, ep: int, gbps: float, crosses: bool
) -> None:
    world = gpus_per_node * nodes
    links = links_between(find_gpu(gpu), gpus_per_node, nodes, node_gbps, tp, 1, world // tp, with_overrides({}), 1, ep)
    assert links.ep_gbps == pytest.approx(gbps)
    assert links.ep_crosses_nodes is crosses


def test_ep_link_names_both_links() -> None:
    """The estimate names the network for the other nodes' peers and NVLink for its own node's."""
    gpu = find_gpu("b200-sxm-180gb")
    links = links_between(gpu, 8, 8, 3200.0, 1, 1, 64, with_overrides({}), 1, 64)
    assert ep_link_name(gpu, links, 8, "8 x 400 Gb/s GPU fabric", 64) == (
        "8 x 400 Gb/s GPU fabric for 56 of 63 peers, NVLink 720 GB/s per GPU for the 7 in its node"
    )


def test_planner_keeps_an_nvl72_racks_ep_group_on_nvlink() -> None:
    """The planner's GB200 NVL72 platform is one 72-GPU node: an EP 64 group's all-to-alls never reach its NICs."""
    platform = catalog.platforms()["gb200-nvl72"]
    gpu = find_gpu("gb200-186gb")
    links, *_, ep_name = step_links(platform, gpu, 72, 2, True, 1, 1, 144, with_overrides({}), 1, 64)
    assert (links.ep_gbps, links.ep_crosses_nodes) == (GB200_NVLINK, False)
    assert ep_name == "NVLink 720 GB/s per GPU"


def test_split_lies_between_all_network_and_all_link() -> None:
    """Over a grid: where the GPU link is the faster, the split sends no slower than all over the network (what was
    timed before) and no faster than all over the link; the more of a group a node holds, the faster it sends."""
    for ranks in (2, 4, 8, 12, 16, 32, 64, 128, 256):
        previous = 0.0
        for node_ranks in (1, 2, 4, 8, 16, 32, 64, 72):
            gbps = alltoall_gbps(ranks, node_ranks, B200_NVLINK, 400.0)
            assert 400.0 <= gbps <= B200_NVLINK
            assert gbps >= previous
            previous = gbps


@pytest.mark.parametrize("gpus_per_node", [1, 2, 4, 8, 9, 12, 16, 72])
def test_fewest_node_gpus_is_the_smallest_piece_of_consecutive_groups(gpus_per_node: int) -> None:
    """review89: the fewest of a group's GPUs one node holds, against the groups laid out one after another.

    The oracle enumerates the groups of ``group`` consecutive GPUs over enough nodes that every offset of a group's
    start within a node occurs, and takes the smallest piece a node holds of any of them.
    """
    # groups a node's GPUs divide into, or wider than a node: a smaller group that does not divide the node straddles
    # two (3 of 8: GPUs 6-8), which the model counts inside one (review89's report: left open)
    for group in (g for g in range(1, 3 * gpus_per_node + 5) if g > gpus_per_node or gpus_per_node % g == 0):
        gpus = group * gpus_per_node  # every start offset (mod the node) that occurs at all occurs within this span
        pieces = [
            sum(1 for gpu in range(start, start + group) if gpu // gpus_per_node == node)
            for start in range(0, gpus, group)
            for node in {gpu // gpus_per_node for gpu in range(start, start + group)}
        ]
        assert fewest_node_gpus(group, gpus_per_node) == min(pieces), (group, gpus_per_node)
