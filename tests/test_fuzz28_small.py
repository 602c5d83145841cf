"""Small refusals of fuzz28 (LOW items): settings and files taken loosely, or blamed on the wrong thing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.errors import ArchitectureError
from generator.sizing.architecture import parse_architecture
from tests.hub_server import serve
from tests.test_hub import make_hub, specgen
from tests.test_hub_hostile import _Endpoint

LLAMA = json.loads((Path(__file__).parent / "data" / "hub" / "llama-3.1-8b.config.json").read_text())


def test_the_shared_layers_are_no_workload_trees() -> None:
    """L1: a manifest listing cluster/.specgen-manifest made --prune say it removed workload 'cluster'."""
    from generator.batch import trees_in

    listed = ["a/.specgen-manifest", "cluster/.specgen-manifest", "terraform/.specgen-manifest", "a/spec.json"]
    assert trees_in(listed) == {"a"}


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"SPECGEN_HUB_TIMEOUT_S": "1e10"}, "SPECGEN_HUB_TIMEOUT_S '1e10' is not a number of seconds from 0 to"),
        ({"HF_ENDPOINT": " http://127.0.0.1:9"}, "HF_ENDPOINT ' http://127.0.0.1:9' is not an http(s) URL"),
        ({"HF_ENDPOINT": "http://127.0.0.1:9\n"}, "HF_ENDPOINT 'http://127.0.0.1:9\\n' is not an http(s) URL"),
    ],
)
def test_a_hub_setting_out_of_range_is_named(tmp_path: Path, env: dict[str, str], said: str) -> None:
    """L2: 1e10 s overflowed the wait and blamed the Hub; a space or newline pasted with the endpoint failed in the
    HTTP client without naming HF_ENDPOINT."""
    url = env.pop("HF_ENDPOINT", "http://127.0.0.1:9")
    run = specgen(_Endpoint(url), tmp_path, "estimate", "fz/tiny", "--from-hub", **env)  # type: ignore[arg-type]
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert said in run.stderr


def test_a_cached_tensor_table_naming_a_tensor_twice_is_damaged(tmp_path: Path) -> None:
    """L3: the duplicate-tensor check of the files was not the cache's."""
    with serve(make_hub()) as hub:
        assert specgen(hub, tmp_path, "estimate", "acme/qwen-7b-chat", "--json").returncode == 0
        (table,) = tmp_path.rglob("safetensors-tensors.json")
        rows = json.loads(table.read_text())
        table.write_text(json.dumps([*rows, rows[0]]))
        run = specgen(hub, tmp_path, "estimate", "acme/qwen-7b-chat", "--json", HF_HUB_OFFLINE="1")
    assert run.returncode == 0 and f"the cached tensor table {table} is damaged" in run.stdout + run.stderr


@pytest.mark.parametrize(
    ("quantization", "said"),
    [
        (
            {"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups": {"g": {"targets": ["Linear"],
             "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128, "symmetric": "false"}}}},
            "weights.symmetric must be true or false, got 'false'",
        ),
        ({"quant_method": "fp8", "ignore": [1, None]}, "must hold module names (strings)"),
    ],
)  # fmt: skip
def test_quantization_values_of_the_wrong_type_are_refused(quantization: dict[str, object], said: str) -> None:
    """L4: "symmetric": "false" read as symmetric; ignore: [1, null] read as names "1" and "None"."""
    with pytest.raises(ArchitectureError, match=said.replace("(", r"\(").replace(")", r"\)")):
        parse_architecture({**LLAMA, "quantization_config": quantization})


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"sliding_window": "4096"}, "sliding_window must be a whole number of tokens (or null), got '4096'"),
        ({"model_type": "qwen2", "sliding_window": 4096, "use_sliding_window": True, "max_window_layers": "abc"},
         "config field 'max_window_layers' must be a non-negative integer"),
    ],
)  # fmt: skip
def test_a_window_field_of_the_wrong_type_is_refused_naming_it(change: dict[str, object], said: str) -> None:
    """L5: a window given as a string was sized as full attention; max_window_layers "abc" named no field."""
    with pytest.raises(ArchitectureError, match=said.replace("(", r"\(").replace(")", r"\)")):
        parse_architecture({**LLAMA, **change})


def test_ernies_use_bias_and_a_qwen_vl_towers_figures_are_typed() -> None:
    """L5: ERNIE's use_bias "false" counted the biases; a Qwen2.5-VL tower of depth 1.5 was taken."""
    from tests.test_architecture_newuser32 import ERNIE_21B

    with pytest.raises(ArchitectureError, match="config field 'use_bias' must be true or false, got 'false'"):
        parse_architecture({**ERNIE_21B, "use_bias": "false"})
    qwen = json.loads((Path(__file__).parent / "data" / "hub" / "qwen2.5-7b.config.json").read_text())
    vision = {"depth": 1.5, "hidden_size": 1280, "intermediate_size": 3420, "out_hidden_size": 3584}
    with pytest.raises(ArchitectureError, match=r"vision_config field 'depth' must be a whole number above 0, got '1\.5'"):
        parse_architecture({**qwen, "model_type": "qwen2_5_vl", "vision_config": vision})


def test_render_files_takes_any_iterable_of_paths_and_refuses_none(tmp_path: Path) -> None:
    """L7: a generator gave an internal ValueError, a Path beside a str a TypeError, [] returned {} silently."""
    from generator import api

    examples = Path(__file__).resolve().parents[1] / "examples"
    as_list = api.render_files([str(examples / "chat-70b.yaml"), str(examples / "rag-embed.yaml")])
    assert api.render_files(p for p in (examples / "chat-70b.yaml", str(examples / "rag-embed.yaml"))) == as_list
    with pytest.raises(ValueError, match="render_files needs one workload path at least"):
        api.render_files([])


def test_validate_together_refuses_a_host_two_workloads_name(tmp_path: Path) -> None:
    """M1: validate --together said ok of two files naming the same owned host, which render refuses."""
    from tests.helpers import run_specgen

    fleet = (Path(__file__).resolve().parents[1] / "examples" / "fleet-custom.yaml").read_text()
    (tmp_path / "fc1.yaml").write_text(fleet)
    other = fleet.replace("- name: assistant", "- name: assistant2").replace("- name: chat", "- name: chat2")
    (tmp_path / "fc2.yaml").write_text(other.replace("name: fleet-custom", "name: fc-two", 1))
    run = run_specgen("validate", "--together", "fc1.yaml", "fc2.yaml", cwd=tmp_path)
    assert run.returncode == 1 and "fc2.yaml and fc1.yaml both have host 'lab-01'" in run.stderr
    # at the host's name in the second file met (by workload name: fc-two, then fleet-custom)
    line = fleet.splitlines().index("        - name: lab-01") + 1
    assert f"error: fc1.yaml:{line}:17: hardware.inventory[0].hosts[0].name: " in run.stderr
    assert run_specgen("validate", "fc1.yaml", "fc2.yaml", cwd=tmp_path).returncode == 0  # one by one: each valid
