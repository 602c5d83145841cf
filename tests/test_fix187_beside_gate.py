"""fix187: a job is planned beside a service only where no owned server left free holds it, and never on N+k replicas.

fix182b offered the beside fleet in every pass: a pass that withheld the lab's second owned server (free) ranked the
job beside the service on the first, sharing a server the plan does not size together
(tests/test_newuser94_beside_service.py). newuser100 item 6: ``training-fits-idle-gpus`` offered a service's N+1
replica's GPU to a QLoRA job "at $0".
"""

from __future__ import annotations

from fractions import Fraction
from types import SimpleNamespace

import pytest

from generator.planner.beside_training import buys, owned_holds, owned_left
from generator.planner.idle_training import _spare_replicas

DGX = ("dgx-h100", "h100-sxm5-80gb", 8)
A100 = ("supermicro-as-4124go-nart", "a100-sxm4-80gb", 8)


def _opt(kind: tuple[str, str, int], nodes: int, owned: int, gpus: int, *, shares: bool = False) -> SimpleNamespace:
    candidate = SimpleNamespace(nodes=nodes, owned_nodes=owned, gpus=gpus)
    opt = SimpleNamespace(server_kind=kind, candidate=candidate, shares_servers=shares, gpus_used=Fraction(gpus), beside=None)
    opt.pieces = (opt,)
    return opt


@pytest.mark.parametrize(
    ("chosen", "left"),
    [
        ([_opt(DGX, 1, 1, 8)], {DGX: 1, A100: 1}),  # a service alone on one of two DGX
        ([_opt(DGX, 2, 2, 16)], {DGX: 0, A100: 1}),
        # four services sharing the DGX, 12 GPUs each on one server: they fill 2 servers together (newuser98)
        ([_opt(DGX, 1, 1, 3, shares=True) for _ in range(4)], {DGX: 0, A100: 1}),
        ([_opt(DGX, 1, 1, 2, shares=True) for _ in range(2)], {DGX: 1, A100: 1}),
        ([_opt(A100, 2, 1, 16)], {DGX: 2, A100: 0}),  # one owned, one bought
    ],
)
def test_owned_left(chosen: list[SimpleNamespace], left: dict[tuple[str, str, int], int]) -> None:
    assert owned_left([(n, o, []) for n, o in enumerate(chosen)], {DGX: 2, A100: 1}) == left  # type: ignore[misc]


@pytest.mark.parametrize(
    ("job", "left", "holds"),
    [
        (_opt(DGX, 1, 1, 8), {DGX: 1}, True),  # a free owned DGX holds the job: not beside
        (_opt(DGX, 1, 1, 8), {DGX: 0}, False),
        (_opt(DGX, 2, 2, 16), {DGX: 1}, False),  # needs two, one free
        (_opt(DGX, 1, 0, 8), {DGX: 1}, False),  # a bought layout is no owned one
    ],
)
def test_owned_holds(job: SimpleNamespace, left: dict[tuple[str, str, int], int], holds: bool) -> None:
    assert owned_holds([job], left) is holds  # type: ignore[list-item]


def test_buys() -> None:
    assert buys(_opt(DGX, 1, 0, 8)) and buys(_opt(DGX, 2, 1, 16)) and not buys(_opt(DGX, 1, 1, 8))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("details", "spare"), [({"replicas_past_rate": 2}, 2), ({"replicas_past_rate": 1, "nodes_down_tolerated": 1}, 0), ({}, 0)]
)
def test_n_plus_k_replicas_are_not_spare(details: dict[str, int], spare: int) -> None:
    assert _spare_replicas(SimpleNamespace(details=details)) == spare  # type: ignore[arg-type]
