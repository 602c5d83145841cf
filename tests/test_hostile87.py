"""hostile87: hostile input to the LoRA-serving block, llama.cpp's RoPE flags and node RAM, each refused at its place.

1. A node whose host RAM need is past what its chassis takes was planned with the capped DIMMs, as if they held it
   (100,000 adapters of rank 512 kept in host RAM: 250,000 GiB a replica on a node of 8,192 GiB, exit 0).
2. SGLang's ``--lora-target-modules`` takes a fixed set of names (argparse ``choices``); a PEFT name such as
   ``self_attn.q_proj`` validated and rendered a flag SGLang refuses to start with.
3. A config's ``rope_scaling.factor`` past a 32-bit float, or a YaRN ``original_max_position_embeddings`` past a 32-bit
   int, rendered ``--rope-scale`` / ``--yarn-orig-ctx`` values llama-server's ``std::stof`` / ``std::stoi`` refuse.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from generator.catalog import find_model
from tests.helpers import edited_copy, load_errors, specgen_in_process

HERE = Path(__file__).parent
LORA_SAAS = HERE / "data" / "newuser92" / "lora-saas.yaml"
ALL_SEVEN = "[q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj]"
SGLANG = ("      max_context_tokens: 8192\n", "      max_context_tokens: 8192\n      engine: sglang\n")


def test_a_host_ram_need_past_the_chassis_is_refused_not_planned_on_capped_dimms(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = edited_copy(LORA_SAAS, tmp_path, ("adapters: 40", "adapters: 100000"), ("max_rank: 64", "max_rank: 512"))
    code, out, err = specgen_in_process(capsys, "plan", str(path))
    assert code == 3, out
    # at the adapters' field (fix161: the caches are the node's only host need), not the deployment's model
    assert f"{path}:14:19: deployments[0].inference.lora.adapters: " in err
    # 100,000 x 2,560 MiB a worker, 4 GPUs: 1,000,000 GiB and the OS's 16 GiB, past the XE8640's 8,192 GiB
    assert "dell-xe8640 takes at most 8192 GiB RAM in its CPUs' channels (32 x 256 GiB DDR5-4800" in err
    assert (
        "1000016 GiB needed: 16 GiB kept for the OS and its processes and the "
        "LoRA adapters' CPU caches (inference.lora.max_cpu_loras, one in each engine worker)"
    ) in err
    assert "Traceback" not in err


def test_adapters_the_chassis_holds_still_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = specgen_in_process(capsys, "plan", str(LORA_SAAS))
    assert code == 0
    assert "256 GiB RAM" in out and "host RAM 12.5 GiB a replica for 40 adapters" in out


@pytest.mark.parametrize(
    ("targets", "refused", "hint"),
    [
        ("[self_attn.q_proj]", "self_attn.q_proj", " (as q_proj)"),
        ("[model.layers.0.self_attn.q_proj]", "model.layers.0.self_attn.q_proj", " (as q_proj)"),
        ("[q_proj, mlp.down_proj]", "mlp.down_proj", " (as down_proj)"),
        ("[q_proj, self_attn.q_proj, k_proj]", "self_attn.q_proj", " (as q_proj)"),
    ],
)
def test_sglang_targets_its_flag_does_not_take_are_refused_at_the_field(
    tmp_path: Path, targets: str, refused: str, hint: str
) -> None:
    path = edited_copy(LORA_SAAS, tmp_path, SGLANG, (ALL_SEVEN, targets))
    assert load_errors(path) == [
        f"{path}:18:25: deployments[0].inference.lora.target_modules: target_modules {refused}: SGLang's "
        "--lora-target-modules takes q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, qkv_proj, "
        f"gate_up_proj or all-linear, a module's last name, over every layer; give the modules so{hint}, or engine: vllm"
    ]


@pytest.mark.parametrize(
    ("engine", "targets"),
    [
        (SGLANG, "[q_proj]"),
        (SGLANG, "[all-linear]"),
        (SGLANG, ALL_SEVEN),
        (SGLANG, "[q_proj, q_proj]"),
        (("", ""), "[self_attn.q_proj]"),  # vLLM wraps every linear whatever the names: PEFT's are taken
    ],
)
def test_targets_the_engine_takes_load(tmp_path: Path, engine: tuple[str, str], targets: str) -> None:
    path = edited_copy(LORA_SAAS, tmp_path, engine, (ALL_SEVEN, targets))
    assert load_errors(path) == []


def _stretched_model(folder: Path, rope_scaling: dict[str, Any]) -> Path:
    config = dict(find_model("meta-llama/Llama-3.1-8B-Instruct").config)
    config.update(max_position_embeddings=32768, rope_scaling=rope_scaling)
    (folder / ".git").mkdir(exist_ok=True)
    model = folder / "m"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(config, indent=1), encoding="utf-8")
    return model


@pytest.mark.parametrize(
    ("rope_scaling", "message"),
    [
        pytest.param(
            {"rope_type": "yarn", "factor": 1e39, "original_max_position_embeddings": 32768},
            "config field 'rope_scaling.factor' is 1e+39, more than llama-server's --rope-scale reads (a 32-bit float, "
            "at most 3.403e+38), and no context needs it: the served length is capped at 2,147,483,648 tokens",
            id="yarn-factor-past-float32",
        ),
        pytest.param(
            {"rope_type": "linear", "factor": 1e300},
            "config field 'rope_scaling.factor' is 1e+300, more than llama-server's --rope-scale reads",
            id="linear-factor-1e300",
        ),
        pytest.param(
            {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2**31},
            "config field 'rope_scaling.original_max_position_embeddings' is 2,147,483,648, more than llama-server's "
            "--yarn-orig-ctx reads (a 32-bit int, at most 2,147,483,647)",
            id="yarn-original-2^31",
        ),
        pytest.param(
            {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2**40},
            "config field 'rope_scaling.original_max_position_embeddings' is 1,099,511,627,776",
            id="yarn-original-2^40",
        ),
    ],
)
def test_rope_values_llama_server_cannot_parse_are_refused_at_the_config_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rope_scaling: dict[str, Any], message: str, monkeypatch: Any
) -> None:
    _stretched_model(tmp_path, rope_scaling)
    monkeypatch.chdir(tmp_path)
    code, _, err = specgen_in_process(capsys, "estimate", "./m", "--context", "65536", "--gpu", "rtx-4090-24gb")
    assert code != 0
    field = message.split("'")[1].rsplit(".", 1)[-1]
    text = (tmp_path / "m" / "config.json").read_text(encoding="utf-8")
    line = next(i for i, row in enumerate(text.splitlines(), 1) if f'"{field}"' in row)  # the oracle: its line
    assert f"./m/config.json:{line}:" in err, err
    assert message in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("rope_scaling", "flags"),
    [
        (
            {"rope_type": "yarn", "factor": 3e38, "original_max_position_embeddings": 32768},
            "--rope-scaling yarn --rope-scale 300000000000000012135895401846682943488 --yarn-orig-ctx 32768"
            " --override-kv llama.context_length=int:2147483648",
        ),
        (
            {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2**31 - 1},
            "--rope-scaling yarn --rope-scale 4 --yarn-orig-ctx 2147483647 --override-kv llama.context_length=int:2147483648",
        ),
    ],
)
def test_rope_values_within_llama_servers_types_are_still_rendered(
    tmp_path: Path, rope_scaling: dict[str, Any], flags: str
) -> None:
    from generator.sizing.architecture import parse_architecture

    config = dict(find_model("meta-llama/Llama-3.1-8B-Instruct").config)
    config.update(max_position_embeddings=32768, rope_scaling=rope_scaling)
    rope = parse_architecture(config).llama_cpp_rope
    assert rope is not None and rope.flags == flags


@pytest.mark.parametrize(
    ("target", "named"),
    [
        ("q_prој", "'о' (U+043E CYRILLIC SMALL LETTER O), 'ј' (U+0458 CYRILLIC SMALL LETTER JE)"),
        ("q_proj\u200b", "'\\u200b' (U+200B ZERO WIDTH SPACE)"),
    ],
)
def test_a_lora_target_holding_a_look_alike_character_names_it(tmp_path: Path, target: str, named: str) -> None:
    path = edited_copy(LORA_SAAS, tmp_path, (ALL_SEVEN, f'["{target}"]'))
    (error,) = load_errors(path)
    assert error.startswith(f"{path}:17:25: deployments[0].inference.lora.target_modules: LoRA target modules")
    assert f"no linear module is called {target} (it holds {named}, outside ASCII" in error


@pytest.mark.parametrize(
    ("old", "new", "place", "message"),
    [
        pytest.param(
            "name: lora-saas",
            "name: 2024-01-01",
            "4:7: name",
            "YAML reads this value as a date, which no field takes: quote it where it is text ('...')",
            id="date",
        ),
        pytest.param(
            "name: lora-saas",
            "name: 2024-01-01T10:00:00Z",
            "4:7: name",
            "YAML reads this value as a timestamp, which no field takes: quote it where it is text ('...')",
            id="timestamp",
        ),
        pytest.param(
            ALL_SEVEN,
            "!!set {q_proj: null}",
            "17:25: deployments[0].inference.lora.target_modules",
            "a YAML set (!!set, or '? ' keys) is not read: write a list ([a, b])",
            id="set",
        ),
        pytest.param(
            ALL_SEVEN,
            "!!binary aGVsbG8=",
            "17:25: deployments[0].inference.lora.target_modules",
            "YAML binary data (!!binary) is not read: give the value as text",
            id="binary",
        ),
        pytest.param(
            ALL_SEVEN,
            "!!pairs [{q_proj: 1}]",
            "17:25: deployments[0].inference.lora.target_modules",
            "a YAML list of pairs (!!pairs) is not read: write a mapping or a list",
            id="pairs",
        ),
    ],
)
def test_yaml_kinds_no_field_takes_are_named_as_yaml_names_them(
    tmp_path: Path, old: str, new: str, place: str, message: str
) -> None:
    path = edited_copy(LORA_SAAS, tmp_path, (old, new))
    assert load_errors(path) == [f"{path}:{place}: {message}"]


def test_llama_cpps_longer_context_refusal_names_the_workload_field_too(tmp_path: Path) -> None:
    home = Path(__file__).parent.parent / "examples" / "home-70b-offload.yaml"
    path = edited_copy(home, tmp_path, ("max_context_tokens: 8192", "max_context_tokens: 131073"))
    (error,) = load_errors(path)
    assert error.startswith(f"{path}:11:27: deployments[0].inference.max_context_tokens: max_context_tokens 131,073")
    assert error.endswith("lower the context (--context, a workload's max_context_tokens) to the limit")


def _unlist(out: Path, rel: str) -> None:
    manifest = out / ".specgen-manifest"
    manifest.write_text("".join(f"{line}\n" for line in manifest.read_text().splitlines() if line != rel))


@pytest.mark.parametrize(
    ("tamper", "why"),
    [
        pytest.param(
            lambda out: ((out / "SPEC.md").unlink(), (out / "SPEC.md").mkdir()),
            "it is a directory, where specgen writes a file",
            id="directory-at-an-owned-file",
        ),
        pytest.param(
            lambda out: _unlist(out, "SPEC.md"),
            "specgen did not write it (it is not in .specgen-manifest)",
            id="a-file-specgen-did-not-write",
        ),
    ],
)
def test_render_check_refuses_what_the_render_refuses_not_stale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tamper: Any, why: str
) -> None:
    out = tmp_path / "out"
    workload = str(LORA_SAAS)
    assert specgen_in_process(capsys, "render", workload, "-o", str(out))[0] == 0
    tamper(out)
    check = specgen_in_process(capsys, "render", workload, "-o", str(out), "--check")
    render = specgen_in_process(capsys, "render", workload, "-o", str(out))
    refusal = f"specgen: error: refusing to overwrite {out}/SPEC.md: {why}; move it away and render again\n"
    assert check == (1, "", refusal)  # was 4, "stale", and a patch from /dev/null
    assert render == check


def test_render_check_still_says_a_replaced_symlink_is_stale(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert specgen_in_process(capsys, "render", str(LORA_SAAS), "-o", str(out))[0] == 0
    (out / "SPEC.md").unlink()
    (out / "SPEC.md").symlink_to("spec.json")  # the render writes a file in its place: stale, not refused
    code, _, err = specgen_in_process(capsys, "render", str(LORA_SAAS), "-o", str(out), "--check")
    assert code == 4 and "rendered output is stale in" in err and "(SPEC.md)" in err
