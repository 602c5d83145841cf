"""The plan finds its ruled-out reasons by each record's code, never by the wording of its text."""

from __future__ import annotations

from generator.planner.blocked import OWNED_SHORT, RACK_POWER, Blocked
from generator.planner.ruled_out import psu_ruled_out, why_left_free

GPU, BOX = "a40-48gb", "lab-a40"
PSU = Blocked(GPU, BOX, "psu-over-capacity", "lab-a40 with 4 x a40-48gb draws 2,500 W (sum of components), ...")
# wording that merely mentions the PSU phrase or "owned are free" does not make a record one of those kinds
LOOKALIKE = Blocked(GPU, BOX, RACK_POWER, "more than its PSUs deliver without redundancy; owned are free")
SHORT = Blocked(GPU, BOX, OWNED_SHORT, "1 x TP4 on 3 x lab-a40 (4 x a40-48gb) needs 3 servers; 2 owned are free and ...")
ELSEWHERE = Blocked(GPU, "dell-xe8640", "psu-over-capacity", "another platform")


def test_psu_reasons_are_the_psu_records_of_that_gpu_and_platform() -> None:
    assert psu_ruled_out(GPU, BOX, [LOOKALIKE, PSU, ELSEWHERE, PSU]) == [f"ruled out: {PSU.why}"]


def test_owned_short_is_given_only_when_nothing_else_rules_the_server_out() -> None:
    assert why_left_free(GPU, BOX, {"chat": [SHORT, LOOKALIKE]}) == f"chat: {LOOKALIKE.why}"
    assert why_left_free(GPU, BOX, {"chat": [SHORT], "tune": [ELSEWHERE]}) == f"chat: {SHORT.why}"
    assert why_left_free(GPU, BOX, {"chat": [SHORT, PSU]}, users={"chat"}) == ""


def test_text_names_gpu_and_platform() -> None:
    assert SHORT.text == f"a40-48gb on lab-a40: {SHORT.why}"


# a 2-server layout with 1 owned free, dropped because the server to buy is over its PSUs
OWNED_PSU = Blocked(GPU, BOX, "psu-over-capacity", PSU.why, gpus_per_node=4, nodes=2, owned=1)


def test_psu_reason_says_buying_more_is_ruled_out_where_owned_servers_are_used() -> None:
    assert psu_ruled_out(GPU, BOX, [OWNED_PSU, PSU]) == [
        f"buying more 4-GPU lab-a40 is ruled out: {PSU.why}",
        f"ruled out: {PSU.why}",
    ]
    # the chosen part runs on owned servers: even a record without owned ones is about buying more
    assert psu_ruled_out(GPU, BOX, [PSU, OWNED_PSU], on_owned=True) == [
        f"buying more lab-a40 is ruled out: {PSU.why}",
        f"buying more 4-GPU lab-a40 is ruled out: {PSU.why}",
    ]


def test_owned_server_left_free_names_the_servers_to_buy_as_over_their_psus() -> None:
    # of two layouts whose servers to buy run over their PSUs, the one buying fewest says it (newuser47 item 2: the
    # wider one, tried for the time between nodes, said the same of more servers)
    assert why_left_free(GPU, BOX, {"tune": [OWNED_PSU._replace(nodes=3), OWNED_PSU]}) == (
        f"tune: the layout needs 2 x 4-GPU lab-a40, 1 owned free; the 1 more to buy would run over their PSUs: {PSU.why}"
    )
