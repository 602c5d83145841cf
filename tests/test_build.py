"""The model builder: schema-checked data becomes the typed workload models with the types they declare."""

from __future__ import annotations

import types
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

import pytest

from generator.calculator.machine import FixedSpec
from generator.errors import InputError, ShapeError
from generator.workload import load_document, load_workload
from generator.workload.build import build
from generator.workload.loader import read_yaml
from generator.workload.models import (
    CustomServer,
    InferenceDeployment,
    InferenceSpec,
    TrainingDeployment,
    TrainingSpec,
    Workload,
)
from tests.conftest import REPO

# the folders below examples/ only: a checkout under a folder named ci left every example out
EXAMPLES = sorted(
    p for p in (REPO / "examples").rglob("*.yaml") if not {"infeasible", "ci"} & set(p.relative_to(REPO / "examples").parts)
)
DEPLOYMENT = {"name": "chat", "model": "m"}


def test_models_built_directly_read_like_built_ones() -> None:
    """What the builder sets is what direct construction and ``_replace`` set: no hidden record of keys."""
    direct = TrainingSpec(method="lora", micro_batch_size=4)
    assert direct == build(TrainingSpec, {"method": "lora", "micro_batch_size": 4})
    assert direct.micro_batch_pinned and direct.micro_batch == 4
    assert TrainingSpec(method="lora")._replace(micro_batch_size=2).micro_batch_pinned
    assert TrainingSpec(method="lora").micro_batch == 1


def test_workloads_share_no_mutable_default() -> None:
    """Many workloads planned in one process cannot leak prices or constants into each other."""
    a = build(Workload, {"version": 1, "name": "a", "deployments": []})
    with pytest.raises(TypeError):
        a.prices["p"] = 1.0  # type: ignore[index]
    with pytest.raises(TypeError):
        a.constants["pue"] = 1.0  # type: ignore[index]


@pytest.mark.parametrize(
    ("cls", "data", "field", "expect"),
    [
        pytest.param(
            InferenceSpec, {"max_context_tokens": 8192, "requests_per_second": 2}, "requests_per_second", 2.0, id="int-to-float"
        ),
        pytest.param(InferenceSpec, {"max_context_tokens": 8192.0}, "max_context_tokens", 8192, id="integral-float-to-int"),
        pytest.param(
            InferenceSpec,
            {"max_context_tokens": 1, "allowed_precisions": ["fp8", "bf16"]},
            "allowed_precisions",
            ("fp8", "bf16"),
            id="list-to-tuple",
        ),
        pytest.param(InferenceSpec, {"max_context_tokens": 1, "slo": {"tpot_ms": 50}}, "slo", None, id="nested-model"),
        pytest.param(InferenceSpec, {"max_context_tokens": 1}, "engine", "vllm", id="default"),
        pytest.param(TrainingSpec, {"method": "lora"}, "micro_batch_pinned", False, id="micro-batch-defaulted"),
        pytest.param(
            TrainingSpec, {"method": "lora", "micro_batch_size": 1}, "micro_batch_pinned", True, id="micro-batch-set-to-default"
        ),
        pytest.param(
            Workload, {"$schema": "s.json", "version": 1, "name": "x", "deployments": []}, "schema_", "s.json", id="schema-alias"
        ),
        pytest.param(Workload, {"version": 1.0, "name": "x", "deployments": []}, "version", 1, id="literal-keeps-declared-value"),
        pytest.param(
            Workload, {"version": 1, "name": "x", "deployments": [], "prices": {"p": 3}}, "prices", {"p": 3.0}, id="dict-values"
        ),
    ],
)
def test_builder_reads_values_as_declared(cls: type, data: dict[str, Any], field: str, expect: Any) -> None:
    built: Any = build(cls, data)
    value = getattr(built, field)
    if expect is None:
        assert value.tpot_ms == 50.0 and type(value.tpot_ms) is float
    else:
        assert value == expect and type(value) is type(expect)


@pytest.mark.parametrize(
    ("section", "kind"),
    [
        pytest.param({"inference": {"max_context_tokens": 4096}}, InferenceDeployment, id="inference"),
        pytest.param({"training": {"method": "full"}}, TrainingDeployment, id="training"),
    ],
)
def test_deployment_kind_is_chosen_by_its_section(section: dict[str, Any], kind: type) -> None:
    wl = build(Workload, {"version": 1, "name": "x", "deployments": [{**DEPLOYMENT, **section}]})
    assert type(wl.deployments[0]) is kind


def test_fixed_machine_is_a_named_tuple_with_declared_types() -> None:
    spec = build(FixedSpec, {"gpu": "rtx-4090-24gb", "gpu_count": 2.0, "ram_gib": 64})
    assert spec == FixedSpec(gpu="rtx-4090-24gb", gpu_count=2, ram_gib=64.0)
    assert type(spec.gpu_count) is int and type(spec.ram_gib) is float


@pytest.mark.parametrize(
    ("cls", "data", "path", "message"),
    [
        pytest.param(
            InferenceSpec, {"max_context_tokens": 1, "colour": 1}, ("colour",), "unknown field 'colour'", id="unknown-key"
        ),
        pytest.param(InferenceSpec, {}, (), "missing required field 'max_context_tokens'", id="missing"),
        pytest.param(
            InferenceSpec, {"max_context_tokens": 1.5}, ("max_context_tokens",), "expected integer", id="fractional-int"
        ),
        pytest.param(InferenceSpec, {"max_context_tokens": True}, ("max_context_tokens",), "expected integer", id="bool-for-int"),
        pytest.param(
            InferenceSpec,
            {"max_context_tokens": 1, "requests_per_second": float("nan")},
            ("requests_per_second",),
            "not a finite number",
            id="nan",
        ),
        pytest.param(
            InferenceSpec,
            {"max_context_tokens": 1, "requests_per_second": float("inf")},
            ("requests_per_second",),
            "not a finite number",
            id="inf",
        ),
        pytest.param(
            InferenceSpec,
            {"max_context_tokens": 1, "engine": "tgi"},
            ("engine",),
            "'tgi' is not one of vllm, sglang",
            id="literal",
        ),
        pytest.param(InferenceSpec, {"max_context_tokens": 1, "slo": [1]}, ("slo",), "expected a mapping", id="model-from-list"),
        pytest.param(
            Workload,
            {"version": 1, "name": "x", "deployments": [], "constants": {"pue": 10**400}},
            ("constants", "pue"),
            "too large for a number",
            id="int-beyond-float",
        ),
        pytest.param(
            Workload,
            {"version": 1, "name": "x", "deployments": [DEPLOYMENT]},
            ("deployments", 0),
            "give exactly one of inference, training",
            id="no-section",
        ),
        pytest.param(
            Workload,
            {"version": 1, "name": "x", "deployments": [], "hardware": {"gpus": ["a", 3]}},
            ("hardware", "gpus", 1),
            "expected string",
            id="nested-path",
        ),
    ],
)
def test_builder_refusals_name_the_path(cls: type, data: dict[str, Any], path: tuple[str | int, ...], message: str) -> None:
    with pytest.raises(ShapeError) as caught:
        build(cls, data)
    assert caught.value.path == path
    assert message in caught.value.message


def test_a_refusal_past_the_schema_is_located(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Should the schema let a value through that the models refuse, the error still names file:line:col."""
    path = tmp_path / "w.yaml"
    text = (REPO / "examples" / "chat-70b.yaml").read_text(encoding="utf-8")
    path.write_text(text.replace("requests_per_second: ", "requests_per_second: x", 1), encoding="utf-8")
    monkeypatch.setattr("generator.workload.validate_document", lambda doc: None)
    line = 1 + text[: text.index("requests_per_second: ")].count("\n")
    with pytest.raises(InputError) as caught:
        load_document(read_yaml(str(path)), str(path))
    assert str(caught.value).startswith(f"{path}:{line}:")
    assert "requests_per_second: expected number, got string" in str(caught.value)


def _check_types(value: Any, hint: Any, where: str) -> None:
    """``value`` has exactly the runtime type ``hint`` declares (no int where a float is declared), at every depth."""
    origin = get_origin(hint)
    if origin is Union or origin is types.UnionType:
        members = [m for m in get_args(hint) if not (value is not None and m is type(None))]
        errors = []
        for member in members:
            try:
                _check_types(value, member, where)
                return
            except AssertionError as exc:
                errors.append(str(exc))
        raise AssertionError("; ".join(errors))
    if origin is Literal:
        assert value in get_args(hint), where
    elif origin is tuple:
        assert type(value) is tuple, where
        for i, item in enumerate(value):
            _check_types(item, get_args(hint)[0], f"{where}[{i}]")
    elif origin is dict:
        assert type(value) is dict, where
    elif origin is Mapping:
        assert type(value) in (dict, MappingProxyType), where
        assert all(type(item) is get_args(hint)[1] for item in value.values()), where
        for k, item in value.items():
            _check_types(item, get_args(hint)[1], f"{where}.{k}")
    elif hint is type(None):
        assert value is None, where
    elif hasattr(hint, "_fields"):
        assert type(value) is hint, f"{where}: {type(value).__name__} is not {hint.__name__}"
        for name, field_hint in get_type_hints(hint).items():
            _check_types(getattr(value, name), field_hint, f"{where}.{name}")
    else:
        assert type(value) is hint, f"{where}: {value!r} is not a {hint.__name__}"


@pytest.mark.parametrize("path", [pytest.param(p, id=p.stem) for p in EXAMPLES])
def test_shipped_examples_build_with_declared_types(path: Path) -> None:
    wl = load_workload(str(path)).workload
    _check_types(wl, Workload, "workload")


def test_custom_server_platform_id_survives_the_builder() -> None:
    spec = build(CustomServer, {"gpu": "a40-48gb", "gpus_per_server": 4, "ram_gib": 256})
    assert spec.platform_id == "custom-4x-a40-48gb" and spec.nvme_tb == 0.0
