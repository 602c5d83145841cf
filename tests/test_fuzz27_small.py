"""Small refusals of fuzz27 (LOW items): each an input the tool took without a word, or a library trap."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator import api
from tests.helpers import run_specgen

EXAMPLE = str(Path(__file__).resolve().parents[1] / "examples" / "chat-70b.yaml")


def test_an_empty_gitlab_report_path_is_refused(tmp_path: Path) -> None:
    """L7: ``--gitlab-report ""`` wrote no report and said nothing (rc 0)."""
    run = run_specgen("render", EXAMPLE, "-o", str(tmp_path / "out"), "--gitlab-report", "")
    assert run.returncode == 2 and "'--gitlab-report': is empty: name the report's file" in run.stderr
    assert not (tmp_path / "out").exists()


def test_more_sequences_than_tokens_a_pass_is_refused_by_the_estimate() -> None:
    """L3: the workload schema refuses it (vLLM does not start so); the estimate sized it."""
    run = run_specgen(
        "estimate", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100-sxm5-80gb", "--max-batched-tokens", "16",
        "--max-num-seqs", "64",
    )  # fmt: skip
    assert run.returncode == 2
    assert "--max-num-seqs 64 is more than --max-batched-tokens 16: vLLM refuses to start" in run.stderr


def test_an_nvidia_smi_csv_using_more_than_its_total_is_refused(tmp_path: Path) -> None:
    """L1: the table form was refused, the CSV form fitted 97,656,250 GiB used."""
    log = tmp_path / "smi.csv"
    log.write_text("index, name, memory.used [MiB], memory.total [MiB]\n0, H100, 99999999999 MiB, 0 MiB\n")
    run = run_specgen("calibrate", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100-sxm5-80gb", "--log", str(log))
    assert run.returncode == 1 and f"{log}:2: 99,999,999,999 MiB used of a 0 MiB GPU" in run.stderr


def test_render_files_refuses_one_path_given_as_a_string() -> None:
    """L8: a str was iterated character by character ("w: file not found")."""
    with pytest.raises(TypeError, match="render_files takes a list of workload paths"):
        api.render_files(EXAMPLE)


@pytest.mark.parametrize(("dtype", "read"), [("float128", None), ("torch.float16", "float16"), ("bfloat16", "bfloat16")])
def test_a_torch_dtype_no_checkpoint_is_stored_in_is_refused(dtype: str, read: str | None) -> None:
    """L4: ``torch_dtype: "float128"`` was sized as bf16 without a word."""
    import json

    from generator.errors import ArchitectureError
    from generator.sizing.architecture import parse_architecture

    config = json.loads((Path(__file__).parent / "data" / "hub" / "llama-3.1-8b.config.json").read_text())
    config["torch_dtype"] = dtype
    if read is None:
        with pytest.raises(ArchitectureError, match="config field 'torch_dtype' is 'float128', not a PyTorch dtype"):
            parse_architecture(config)
    else:
        assert parse_architecture(config).torch_dtype == read


def test_a_key_that_only_looks_like_a_known_one_is_shown_as_it_differs(tmp_path: Path) -> None:
    """L9: ``n\u0430me`` (a Cyrillic a) read "unknown field 'n\u0430me'; did you mean 'name'?" with the two looking alike."""
    path = tmp_path / "w.yaml"
    path.write_text("version: 1\nn\u0430me: fz\ndeployments: []\n", encoding="utf-8")
    run = run_specgen("validate", str(path))
    assert run.returncode == 1 and "unknown field 'n\\u0430me'; did you mean 'name'?" in run.stderr


def test_validate_refuses_one_file_given_twice_as_render_does_and_says_ok_of_no_file_an_error_names(
    tmp_path: Path,
) -> None:
    """L11: ``validate w.yaml hard.yaml`` (a hard link) said "ok" of both, then that their names clash; render said
    they are one file."""
    (tmp_path / "w.yaml").write_text(Path(EXAMPLE).read_text())
    (tmp_path / "hard.yaml").hardlink_to(tmp_path / "w.yaml")
    run = run_specgen("validate", "--together", "w.yaml", "hard.yaml", cwd=tmp_path)
    assert run.returncode == 1 and "w.yaml and hard.yaml are the same file; give each workload once" in run.stderr
    (tmp_path / "copy.yaml").write_text(Path(EXAMPLE).read_text())  # another file of the same workload name
    run = run_specgen("validate", "--together", "w.yaml", "copy.yaml", cwd=tmp_path)
    assert run.returncode == 1 and "is also the name of" in run.stderr and ": ok" not in run.stdout


@pytest.mark.parametrize("name", ["all", "ungrouped"])
def test_a_host_named_as_an_ansible_built_in_group_is_refused(tmp_path: Path, name: str) -> None:
    """L12: a host named all or ungrouped was rendered into the inventory, where Ansible reads the name as its group."""
    example = Path(EXAMPLE).parent / "fleet-existing.yaml"
    path = tmp_path / "w.yaml"
    path.write_text(example.read_text().replace("- name: dgx-01", f"- name: {name}", 1))
    run = run_specgen("validate", str(path))
    assert run.returncode == 1
    assert f"hosts[0].name: host name '{name}' is one of Ansible's built-in groups (all, ungrouped)" in run.stderr


def test_a_log_of_two_runs_is_refused_not_fitted_across_both(tmp_path: Path) -> None:
    """L2: a log appended after a restart with other settings was fitted across both runs, and the refusal quoted the
    figure that agreed."""
    log = tmp_path / "twice.log"
    log.write_text("INFO GPU KV cache size: 425,024 tokens\nINFO restarted\nINFO GPU KV cache size: 12 tokens\n")
    run = run_specgen("calibrate", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100-sxm5-80gb", "--log", str(log))
    assert run.returncode == 1
    assert f"{log} holds the KV cache sizes of 2 runs (line 1: 425,024; line 3: 12): give each run a log" in run.stderr


@pytest.mark.parametrize(
    ("ignore", "said"),
    [
        (["re:("], "quantization_config's unquantized module 0 're:(' is not a regular expression: missing )"),
        (["lm_head", "re:(?<=a+)b"], "unquantized module 1 're:(?<=a+)b' is not a regular expression"),
        (["re:(.*.*)*x$"], "repeats a group that repeats itself"),
        (["re:(\\w+\\.?)+$X"], "repeats a group that repeats itself"),
        ([f"re:x{i}" for i in range(300)], "hold more than 256 patterns (re: or globs); list the modules by name"),
    ],
)
def test_an_unquantized_module_list_that_cannot_be_matched_in_bounded_time_is_refused(ignore: list[str], said: str) -> None:
    """fuzz28 H2, H3: a bad regular expression was a traceback in every command; a nested repetition or 20,000
    patterns hung specgen (every pattern tried on every module name of every layer at every sizing)."""
    import json

    from generator.errors import ArchitectureError
    from generator.sizing.architecture import parse_architecture

    config = json.loads((Path(__file__).parent / "data" / "hub" / "llama-3.1-8b.config.json").read_text())
    config["quantization_config"] = {"quant_method": "fp8", "ignore": ignore}
    with pytest.raises(ArchitectureError, match=re.escape(said)):
        parse_architecture(config)


def test_a_long_list_of_module_names_is_matched_quickly() -> None:
    """Names listed whole (Llama 405B's 504 attention projections) are looked up, not tried one by one."""
    from generator.sizing.quantization import QuantizationConfig

    names = tuple(f"model.layers.{n}.self_attn.{m}" for n in range(126) for m in ("q_proj", "k_proj", "v_proj", "o_proj"))
    config = QuantizationConfig("fp8", keep_patterns=(*names, "lm_head", "re:.*router"))
    assert config.keeps("model.layers.125.self_attn.o_proj") and config.keeps("lm_head")
    assert config.keeps("model.layers.3.mlp.router") and not config.keeps("model.layers.3.mlp.down_proj")
    assert config.keeps("model.layers.7.self_attn") is False  # a parent is not kept by its children
