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
