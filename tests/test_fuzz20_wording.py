"""Framework names a workload and the estimate both take, a quoted number's error, a multi-file SPEC.md (fuzz20 10, 17)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.batch import output_files, render_many
from generator.paths import schema_path
from generator.sizing.frameworks import FRAMEWORK_ALIASES, FRAMEWORKS, framework_profile
from tests.helpers import estimate_json, load_errors

TRAIN = """\
version: 1
name: ty
deployments:
  - name: tune
    model: meta-llama/Llama-3.1-8B
    training:
      method: full
      framework: {framework}
      zero_stage: {zero}
      sequence_length: 4096
      dataset_tokens: 100000000
hardware:
  gpus: [h100-sxm5-80gb]
  provider: baremetal
"""


def errors_of(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "w.yaml"
    path.write_text(text, encoding="utf-8")
    return load_errors(path)


def test_a_quoted_number_gets_one_error_that_says_to_unquote_it(tmp_path: Path) -> None:
    errors = errors_of(tmp_path, TRAIN.format(framework="deepspeed", zero="'3'"))
    assert len(errors) == 1, errors
    assert errors[0].endswith("training.zero_stage: expected integer, got string '3'; write 3 without quotes")


def test_a_word_where_a_number_goes_gets_no_unquote_hint(tmp_path: Path) -> None:
    errors = errors_of(tmp_path, TRAIN.format(framework="deepspeed", zero="'x'"))
    assert len(errors) == 1 and "without quotes" not in errors[0]


def test_the_schema_takes_every_name_the_estimate_takes() -> None:
    with open(schema_path("workload"), encoding="utf-8") as fh:
        schema = json.load(fh)
    enum = next(node["enum"] for node in _walk(schema) if isinstance(node, dict) and "unsloth" in node.get("enum", []))
    assert sorted(enum) == sorted({*FRAMEWORKS, *FRAMEWORK_ALIASES})


def _walk(node: object) -> list[object]:
    out: list[object] = [node]
    if isinstance(node, dict):
        for value in node.values():
            out += _walk(value)
    elif isinstance(node, list):
        for value in node:
            out += _walk(value)
    return out


@pytest.mark.parametrize("alias", sorted(FRAMEWORK_ALIASES))
def test_a_workload_takes_the_estimates_framework_names(tmp_path: Path, alias: str) -> None:
    # the deepest stage the framework runs (Megatron-LM's distributed optimizer: ZeRO-1, newuser35 item 2)
    zero = max(framework_profile(alias).zero_stages or (3,))
    assert errors_of(tmp_path, TRAIN.format(framework=alias, zero=zero)) == []


@pytest.mark.parametrize(("alias", "name"), [("fsdp", "fsdp2"), ("peft", "hf"), ("MEGATRON-LM", "megatron")])
def test_the_estimate_says_whose_defaults_apply(alias: str, name: str) -> None:
    result = estimate_json("llama-3.1-8b", "--train", "full", "--framework", alias, "--gpus", "2", "--gpu", "h100-sxm5-80gb")
    assert result["training"]["framework"] == name


FIXED = """\
version: 1
name: {name}
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: q4_k_m, max_context_tokens: 8192, requests_per_second: 0.1}}
hardware:
  provider: baremetal
  fixed: {{gpu: rtx-4090-24gb, gpu_count: 1, ram_gib: 64, cpu: ryzen-9-7950x}}
"""


def test_a_single_host_rendered_with_others_is_said_to_join_their_cluster(tmp_path: Path) -> None:
    paths = []
    for name in ("one", "two"):
        path = tmp_path / f"{name}.yaml"
        path.write_text(FIXED.format(name=name), encoding="utf-8")
        paths.append(str(path))
    files = output_files(render_many(paths), single=False)
    assert any(p.startswith("one/kubeadm/join-") for p in files)
    spec = files["one/SPEC.md"]
    assert "kubernetes-single-host" not in spec and "no kubeadm join file" not in spec
    assert "`kubernetes-joins-cluster`" in spec and "its kubeadm join file is under kubeadm/" in spec
    assert "kubernetes-joins-cluster" in files["one/spec.json"]


def test_a_single_host_rendered_alone_is_its_own_cluster(tmp_path: Path) -> None:
    path = tmp_path / "one.yaml"
    path.write_text(FIXED.format(name="one"), encoding="utf-8")
    files = output_files(render_many([str(path)]), single=True)
    assert not any("kubeadm/join-" in p for p in files)
    assert "`kubernetes-single-host`" in files["SPEC.md"]
