"""Training layouts as engineers make them: TP or ZeRO-3 where one GPU cannot hold the model, PP when TP is capped."""

from __future__ import annotations

import pytest

from generator import catalog
from generator.calculator.model_source import resolve_model
from generator.planner.options import Hardware
from generator.planner.training import layout_mfu, pipeline_sizes, training_shapes
from generator.sizing.constants import Constants
from generator.workload.models import TrainingSpec

CONSTS = Constants()


def _hw(platform: str, gpu: str = "h100-sxm5-80gb") -> Hardware:
    return Hardware(catalog.platforms()[platform], catalog.gpus()[gpu])


@pytest.mark.parametrize(
    ("model", "zero", "expect"),
    [
        pytest.param("meta-llama/Llama-3.1-70B-Instruct", None, "tp-or-zero3", id="70b-full-any-zero"),
        pytest.param("meta-llama/Llama-3.1-70B-Instruct", 0, "pp", id="70b-full-zero0-needs-pp-at-tp8"),
        pytest.param("meta-llama/Llama-3.1-8B", None, "tp1-fits", id="8b-full-fits-without-pp"),
    ],
)
def test_layouts_where_one_gpu_cannot_hold_the_model(model: str, zero: int | None, expect: str) -> None:
    spec = TrainingSpec(method="full", sequence_length=4096, zero_stage=zero)
    shapes, blocked = training_shapes(resolve_model(model), spec, _hw("dgx-h100"), CONSTS)
    assert shapes, blocked
    if expect == "tp-or-zero3":
        assert all(s.par.tp > 1 or s.setup.zero_stage == 3 for s in shapes)
        assert not any(s.par.pp > 1 for s in shapes)  # PP only when TP and ZeRO cannot hold it
    elif expect == "pp":
        assert all(s.par.tp == 8 and s.par.pp > 1 for s in shapes)  # TP capped by the 8-GPU NVLink domain
        assert all(s.memory.per_gpu.total <= s.hardware.gpu.memory_bytes for s in shapes)
        assert all("PP" in s.reason for s in shapes)
    else:
        assert any(s.par.tp == 1 and s.par.pp == 1 for s in shapes)


@pytest.mark.parametrize(("layers", "sizes"), [(80, [2, 4, 8, 16]), (126, [2]), (32, [2, 4, 8, 16]), (27, [])])
def test_pipeline_depths_divide_the_layers(layers: int, sizes: list[int]) -> None:
    assert pipeline_sizes(layers) == sizes


def test_more_microbatches_shrink_the_bubble() -> None:
    model = resolve_model("meta-llama/Llama-3.1-70B-Instruct")
    spec = TrainingSpec(method="full", sequence_length=4096)
    hw = _hw("dgx-h100")
    mfus = [layout_mfu(model, spec, hw, 8, CONSTS._replace(training_pipeline_microbatches=m), pp=8) for m in (1, 4, 16, 64)]
    assert mfus == sorted(mfus) and mfus[0] < mfus[-1]
    assert layout_mfu(model, spec, hw, 8, CONSTS, pp=1) > mfus[-1]


@pytest.mark.parametrize("deadline_hours", [300.0, 100.0, 25.0])
def test_a_tighter_deadline_takes_more_gpus(deadline_hours: float) -> None:
    model = resolve_model("meta-llama/Llama-3.1-8B")
    hw = _hw("dgx-h100")
    loose = TrainingSpec(method="full", sequence_length=4096, dataset_tokens=10**10, deadline_hours=deadline_hours, zero_stage=3)
    tight = loose._replace(deadline_hours=deadline_hours / 4)
    a = training_shapes(model, loose, hw, CONSTS)[0][0]
    b = training_shapes(model, tight, hw, CONSTS)[0][0]
    assert b.world > a.world
    assert a.hours is not None and b.hours is not None and b.hours < a.hours <= deadline_hours
