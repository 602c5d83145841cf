"""A capped point's next-batch miss (CappedBinds) is a value put off: equal points compare equal worked out or not.

:class:`generator.planner.inference.CappedBinds` works its text out when first read (speed100: most layouts' never
is). Review77 item 7: ``_Rungs`` is compared where caches hit, and it compared its top point whole, the CappedBinds in
it by their texts, so every hit formed the next batch's points again for both. fix111 keyed ``_Rungs`` on the top
without it (kept) but also made a CappedBinds never equal to None, so the point the batch search finds (its miss
``None``: the next batch meets the SLOs) no longer equalled the one bisection finds (no CappedBinds formed):
tests/test_batch_search.py failed on examples/mixed.yaml and the change was reverted. The rule tested here: a
CappedBinds equals the value it stands for (its text, None included) and another of equal text, and two formed from
one sizing at one batch are equal without either text worked out. A CappedBinds of no real sizing (:func:`_unworkable`)
raises when its text is worked out, so a comparison that reads it fails.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.calculator.model_source import ResolvedModel, default_precision
from generator.planner.inference import CappedBinds, OperatingPoint, _Rungs, best_point
from generator.planner.options import allowed_hardware
from generator.planner.slo import effective_slo
from generator.sizing.constants import Constants
from generator.sizing.distributed_runtime import nvlink_replica
from generator.sizing.memory import InferenceMemory, size_inference
from generator.sizing.performance import Accelerator, accelerator_for
from generator.sizing.precision import kv_cache_bits, weight_format
from generator.sizing.weights import Parallelism
from generator.workload import load_workload
from generator.workload.models import InferenceDeployment, InferenceSpec

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _coder_on_t4() -> tuple[ResolvedModel, tuple[Parallelism, InferenceMemory, int, Accelerator], InferenceSpec, Constants]:
    """examples/mixed.yaml's coder (Qwen3-30B-A3B fp8, TPOT 100 ms) on T4s at TP4: the layout test_batch_search failed on.

    Memory holds 40 sequences; the SLOs hold 47 (batch 48 takes 100.1 ms a token).
    """
    loaded = load_workload(str(EXAMPLES / "mixed.yaml"))
    dep = next(d for d in loaded.workload.deployments if d.name == "coder")
    assert isinstance(dep, InferenceDeployment)
    model = loaded.models[dep.name]
    spec, _ = effective_slo(dep.inference)
    fmt = weight_format(spec.precision or default_precision(model))
    kv_bits = kv_cache_bits(spec.kv_cache_precision)
    (hw,) = [h for h in allowed_hardware(loaded.workload) if h.gpu.id == "t4-16gb"][:1]
    par = Parallelism(4, 1)
    nvlink = nvlink_replica(hw.gpu.interconnect_kind, hw.gpu.nvlink_domain_gpus, par)
    consts = Constants()
    mem = size_inference(
        model.architecture, fmt, kv_bits, spec.max_context_tokens, 1, par, consts, hw.gpu.memory_bytes, nvlink=nvlink
    )
    shape = (par, mem, kv_bits, accelerator_for(hw.gpu, fmt.compute, 4))
    return model, shape, spec, consts


def _unworkable(batch: int = 9, sized: tuple[object, ...] | None = None) -> CappedBinds:
    return CappedBinds(sized or ("not a model", "not a shape", None, Constants()), batch)  # type: ignore[arg-type]


def _worked(text: str | None, batch: int = 3) -> CappedBinds:
    """A CappedBinds whose text is set: one per batch, as one sizing gives one text a batch."""
    binds = _unworkable(batch, ((), (), None, Constants()))
    binds.done, binds.written = True, text
    return binds


def test_an_unworkable_capped_binds_raises_when_read() -> None:  # the premise of the cases below
    with pytest.raises((TypeError, AttributeError, ValueError)):
        _unworkable().text()


def test_a_capped_point_equals_the_bisections_whether_or_not_its_miss_was_worked_out() -> None:
    """Batch 40 (memory's cap) meets the SLOs and so does 41: the miss is None, the point the one bisection finds."""
    model, shape, spec, consts = _coder_on_t4()
    found = best_point(model, shape, spec, 40, consts)
    assert found is not None and found.batch == 40
    assert isinstance(found.capped_binds, CappedBinds) and not found.capped_binds.done
    bare = found._replace(capped_binds=None)  # as bisection forms it (tests/test_batch_search.py)
    # one layout sized twice: equal, neither miss worked out (the ladders keyed without it, the misses of one sizing)
    again = best_point(model, shape, spec, 40, consts)
    assert again is not None and isinstance(again.capped_binds, CappedBinds)
    assert again.capped_binds is not found.capped_binds
    assert found == again
    assert not found.capped_binds.done and not again.capped_binds.done
    # against the bare value: the miss is worked out, and it is None (reverted fix111: a CappedBinds never equal to None)
    assert found == bare and bare == found
    assert found.capped_binds.done and found.capped_binds_text is None
    assert found.capped_binds == None  # noqa: E711 -- the comparison under test
    assert hash(found.capped_binds) == hash(None)
    assert found._replace(rungs=None) == bare._replace(rungs=None)
    assert hash(found._replace(rungs=None)) == hash(bare._replace(rungs=None))


def test_a_capped_point_whose_next_batch_misses_is_not_the_bare_one() -> None:
    """A cap of 47 where the SLOs hold 47: batch 48's miss is said, and the point is not one without it."""
    model, shape, spec, consts = _coder_on_t4()
    found = best_point(model, shape, spec, 47, consts)
    assert found is not None and found.batch == 47 and found.capped_binds is not None
    assert found != found._replace(capped_binds=None)
    text = found.capped_binds_text
    assert text is not None and "batch 48 would take 100.1 ms" in text
    assert found.capped_binds == _worked(text, batch=5)  # another CappedBinds of the same text
    assert found.capped_binds != _worked(text + " ", batch=5)
    assert found.capped_binds == text  # the value it stands for


def test_ladders_of_one_layout_compare_equal_without_working_out_the_miss(tmp_path: Path) -> None:
    """Review77 item 7: comparing two ladders (a cache hit) worked out both tops' misses."""
    _, _, spec, consts = _coder_on_t4()
    assert isinstance(spec, InferenceSpec)
    sized = (object(), ("shape",), spec, consts)
    first, second = _unworkable(), _unworkable()
    top = OperatingPoint(batch=8, requests_per_s=3.5, ttft_s=0.2, tpot_s=0.03)
    one = _Rungs(sized, top._replace(capped_binds=first), 64)  # type: ignore[arg-type]
    two = _Rungs(sized, top._replace(capped_binds=second), 64)  # type: ignore[arg-type]
    assert one == two and hash(one) == hash(two)
    assert not first.done and not second.done
    # what they are keyed by still tells layouts apart: another top, another ladder
    three = _Rungs(sized, top._replace(batch=9, capped_binds=first), 64)  # type: ignore[arg-type]
    assert one != three
    assert not first.done


def test_misses_of_one_sizing_at_one_batch_are_equal_unworked() -> None:
    sized = ("not a model", "not a shape", None, Constants())
    one, two = _unworkable(9, sized), _unworkable(9, sized)
    assert one == two and not one.done and not two.done
    assert one == one  # noqa: PLR0124 -- itself, unworked
    assert one != 3 and not one.done  # not a value it could stand for: unequal, unworked
    with pytest.raises((TypeError, AttributeError, ValueError)):  # another batch: the texts decide, worked out
        _ = one == _unworkable(10, sized)


def test_a_miss_compares_as_its_text() -> None:
    none, said = _worked(None), _worked("TPOT 51 ms > 50 ms", batch=5)
    assert none == None and said != None  # noqa: E711 -- the comparisons under test
    assert none == _worked(None, batch=4) and hash(none) == hash(_worked(None, batch=4)) == hash(None)
    assert said == "TPOT 51 ms > 50 ms" and said != none
    assert hash(said) == hash("TPOT 51 ms > 50 ms")
