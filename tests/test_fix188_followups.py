"""fix188: small correctness follow-ups.

1. A rack's and a fleet's heat are their own watts rounded once: the sum of their nodes' rounded figures drifted (a
   fleet of 15 x 1,773 W L40S servers said 90,750 BTU/h where 26,595 W are 90,746).
2. A service on a GPU without bf16 (T4, V100) caches its KV in float16, as vLLM runs it there (an AWQ / GPTQ model's
   activations too): it was labelled bf16 (the same two bytes a value).
3. An unknown ``rope_scaling`` type in a config.json is refused (vLLM's ``get_rope`` raises "Unknown RoPE scaling
   type"), named at its file, line and field: it stretched the context by its factor.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator import catalog
from generator.api import plan_file
from generator.planner.heat import heat_btu_per_h
from generator.sizing.context_limit import KNOWN_ROPE_TYPES
from tests.helpers import run_estimate

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_a_fleets_heat_is_its_watts_rounded_once() -> None:
    plan = plan_file(str(EXAMPLES / "rag-embed.yaml"))[1]
    nodes_summed = sum(p.node.heat_btu_per_h * p.nodes for p in plan.pools)
    assert plan.totals["heat_btu_per_h"] == heat_btu_per_h(plan.totals["power_w"])
    assert (plan.totals["power_w"], plan.totals["heat_btu_per_h"], nodes_summed) == (5319, 18149, 18150)


T4_AWQ = """\
version: 1
name: t4-awq
deployments:
  - name: chat
    model: {model}
    inference:
      precision: {precision}
      max_context_tokens: 8192
      avg_input_tokens: 1000
      avg_output_tokens: 200
      requests_per_second: 0.5
hardware:
  provider: aws
  gpus: [{gpu}]
objective: cost
"""


@pytest.mark.parametrize(
    ("gpu", "precision", "kv"),
    [
        pytest.param("t4-16gb", "int4", "fp16", id="awq-on-a-t4-caches-in-float16"),
        pytest.param("t4-16gb", "bf16", "fp16", id="bf16-weights-cast-on-a-t4"),
        pytest.param("l4-24gb", "int4", "bf16", id="awq-on-an-l4-keeps-bf16"),
    ],
)
def test_a_gpu_without_bf16_caches_in_float16(tmp_path: Path, gpu: str, precision: str, kv: str) -> None:
    path = tmp_path / "t4.yaml"
    path.write_text(T4_AWQ.format(model="meta-llama/Llama-3.1-8B-Instruct", precision=precision, gpu=gpu))
    plan = plan_file(str(path))[1]
    (dep,) = plan.deployments
    assert dep.kv_cache_precision == kv
    assert plan.pools[0].node.gpu_id == gpu
    # the same two bytes a value whatever the label: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 B = 131,072 B a token,
    # one 8,192-token sequence split over the tensor-parallel GPUs (bf16 weights take TP2 on a 16 GB T4)
    assert dep.memory_per_gpu["kv_cache"] * dep.tp == 8192 * 131_072


def _config(tmp_path: Path, rope: dict[str, Any]) -> str:
    config = dict(catalog.find_model("Qwen/Qwen2.5-7B-Instruct").config)  # 32,768 positions
    config["rope_scaling"] = rope
    path = tmp_path / "rope" / "config.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(config, indent=1))
    return str(path)


@pytest.mark.parametrize("field", ["rope_type", "type"])
def test_an_unknown_rope_type_is_refused_at_its_field(tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str) -> None:
    path = _config(tmp_path, {field: "made_up", "factor": 4})
    code, text = run_estimate(path, "--gpu", "h100-sxm5-80gb", "--context", "65536")
    err = capsys.readouterr().err
    assert (code, text) == (1, "")
    line = next(i for i, row in enumerate(Path(path).read_text().splitlines(), 1) if "made_up" in row)
    assert f"{path}:{line}:" in err
    assert f"config field 'rope_scaling.{field}' is an unknown RoPE scaling type, 'made_up'" in err
    assert "known types: default, linear, dynamic, yarn, longrope, llama3" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("kind", KNOWN_ROPE_TYPES)
def test_each_known_rope_type_is_taken(tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str) -> None:
    rope = {"rope_type": kind, "factor": 2.0, "original_max_position_embeddings": 32768}
    code, _ = run_estimate(_config(tmp_path, rope), "--gpu", "h100-sxm5-80gb", "--context", "8192")
    assert code == 0, capsys.readouterr().err


def test_qwen25_coder_32b_is_catalogued_from_its_config() -> None:
    """fix188 item 4: ``validate`` of Qwen/Qwen2.5-Coder-32B-Instruct exited 75 offline (not catalogued)."""
    coder = catalog.find_model("Qwen/Qwen2.5-Coder-32B-Instruct")
    assert coder.config == catalog.find_model("Qwen/Qwen2.5-32B-Instruct").config  # the same architecture keys
    assert "rope_scaling" not in coder.config  # the Hub file has none: the card's YaRN block is the user's to add
    assert catalog.find_model("qwen2.5-coder-32b-instruct").id == coder.id
