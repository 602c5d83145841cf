"""Comparing the ladders of one layout sized twice leaves the next batch's miss unworked (review77 item 7).

:class:`generator.planner.inference.CappedBinds` works its text out when first read (speed100: most layouts' never is).
``_Rungs`` is compared where caches hit; it used to compare its top point whole, the CappedBinds in it by their texts,
so every hit formed the next batch's points again for both. A CappedBinds here is one whose text cannot be worked out
(its sizing is not one): comparing that raises, so a comparison that reads it fails.
"""

from __future__ import annotations

from pathlib import Path

from generator.planner.inference import CappedBinds, OperatingPoint, _Rungs
from generator.planner.slo import effective_slo
from generator.sizing.constants import Constants
from generator.workload import load_workload
from generator.workload.models import InferenceDeployment
from tests.test_layout_memo_key import WORKLOAD


def _spec(tmp_path: Path):  # type: ignore[no-untyped-def]
    path = tmp_path / "w.yaml"
    fields = {"model": "meta-llama/Llama-3.1-8B-Instruct", "precision": "bf16", "rate": 2.0, "floor": 1, "utilization": 1.0}
    path.write_text(WORKLOAD.format(**fields), encoding="utf-8")
    dep = load_workload(str(path)).workload.deployments[0]
    assert isinstance(dep, InferenceDeployment)
    return effective_slo(dep.inference)[0]


def _unworkable() -> CappedBinds:
    return CappedBinds(("not a model", "not a shape", None, Constants()), 9)  # type: ignore[arg-type]


def test_an_unworkable_capped_binds_raises_when_read() -> None:  # the premise of the cases below
    try:
        _unworkable().text()
    except (TypeError, AttributeError, ValueError):
        return
    raise AssertionError("a CappedBinds of no sizing gave a text")


def test_ladders_of_one_layout_compare_equal_without_working_out_the_miss(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    model, shape = object(), ("shape",)
    sized = (model, shape, spec, Constants())
    first, second = _unworkable(), _unworkable()
    top = OperatingPoint(batch=8, requests_per_s=3.5, ttft_s=0.2, tpot_s=0.03)
    one = _Rungs(sized, top._replace(capped_binds=first), 64)  # type: ignore[arg-type]
    two = _Rungs(sized, top._replace(capped_binds=second), 64)  # type: ignore[arg-type]
    assert one == two and hash(one) == hash(two)
    assert not first.done and not second.done
    # and what they are keyed by still tells layouts apart: another top, another ladder
    three = _Rungs(sized, top._replace(batch=9, capped_binds=first), 64)  # type: ignore[arg-type]
    assert one != three
    assert not first.done


def _same(x: CappedBinds) -> CappedBinds:
    return x


def test_a_capped_binds_is_never_equal_to_none() -> None:
    done = CappedBinds(((), (), None, Constants()), 2)  # type: ignore[arg-type]
    done.done, done.written = True, None  # the next batch meets the SLOs: no text
    assert done != None  # noqa: E711 -- the comparison under test
    assert (done == None) is False  # noqa: E711
    assert done == _same(done)
    assert _unworkable() != None  # noqa: E711 -- and None is told apart without working the text out
    other = CappedBinds(((), (), None, Constants()), 3)  # type: ignore[arg-type]
    other.done, other.written = True, None
    assert done == other and hash(done) == hash(other)
    said = CappedBinds(((), (), None, Constants()), 3)  # type: ignore[arg-type]
    said.done, said.written = True, "TPOT 51 ms > 50 ms"
    assert said != done
