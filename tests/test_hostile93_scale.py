"""hostile93: valid-looking workloads of a scale that made ``plan`` run for minutes.

1. Each training deployment is sized over every server kind and layout the workload allows: about 5 s of CPU and
   20 MB on the test machine for a LoRA of Llama 3.1 8B on bare metal. 64 of them (the deployments' limit), as one
   ``run_after`` chain or side by side, ran ``plan`` past 5 minutes at 1.2 GB. Now a workload of more than 16 training
   jobs is refused at the 17th's ``training`` key, naming the limit and why, before anything is planned.
2. A model config.json's refused field was placed (line, column) through a map of every value of the file: 200,000
   ``layer_types`` entries (3.6 MB, under the 4 MiB read) took 3.6 s and 94 MB to refuse. Now only the named field's
   path is walked.
3. An inventory of 100 custom server kinds ran ``plan`` past 5 minutes for one 2 req/s service (every fleet ranked
   rebuilt every owned kind). Now 12.6 s, the same plan.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from generator.errors import InputError
from generator.workload.training_count import MAX_TRAINING_JOBS
from tests.helpers import load_errors


def _job(i: int, *, chained: bool) -> str:
    after = f"      run_after: job{i - 1}\n" if chained and i else ""
    return (
        f"  - name: job{i}\n    model: meta-llama/Llama-3.1-8B\n    training:\n      method: lora\n"
        f"      sequence_length: 4096\n      global_batch_size: 16\n      dataset_tokens: 100000000\n{after}"
    )


def _workload(tmp_path: Path, jobs: int, *, chained: bool = False) -> Path:
    body = "".join(_job(i, chained=chained) for i in range(jobs))
    path = tmp_path / "w.yaml"
    path.write_text(f"version: 1\nname: scale\ndeployments:\n{body}hardware:\n  provider: baremetal\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("chained", [False, True])
def test_more_training_jobs_than_the_limit_are_refused_at_the_first_past_it(tmp_path: Path, chained: bool) -> None:
    path = _workload(tmp_path, MAX_TRAINING_JOBS + 1, chained=chained)
    errors = load_errors(path)
    assert len(errors) == 1, errors
    line = 4 + 7 * MAX_TRAINING_JOBS + (MAX_TRAINING_JOBS - 1) * chained + 2  # its `training:` key
    assert errors[0].startswith(f"{path}:{line}:5: deployments[{MAX_TRAINING_JOBS}].training: "), errors[0]
    assert f"{MAX_TRAINING_JOBS + 1} training jobs, more than the {MAX_TRAINING_JOBS} allowed" in errors[0]
    assert "every server kind" in errors[0]


def test_training_jobs_up_to_the_limit_load(tmp_path: Path) -> None:
    assert MAX_TRAINING_JOBS == 16
    assert load_errors(_workload(tmp_path, MAX_TRAINING_JOBS, chained=True)) == []


def test_a_refused_config_field_is_placed_without_walking_every_value(tmp_path: Path, monkeypatch: Any) -> None:
    """2. A config.json of 200,000 ``layer_types`` (3.6 MB, under the 4 MiB read) took 3.6 s and 94 MB to refuse: the
    refusal's line and column came from a map of every value's place. Now the walk goes down the named field alone."""
    import generator.json_positions as positions
    from generator.calculator.model_source import config_architecture

    members = positions._members
    walked = []

    def counted(text: str, at: int) -> Iterator[tuple[positions.Step, int]]:
        for member in members(text, at):
            walked.append(member)
            yield member

    monkeypatch.setattr(positions, "_members", counted)
    config = {"model_type": "qwen3", "hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4,
              "num_key_value_heads": 2, "head_dim": 64, "num_hidden_layers": 8, "vocab_size": 512,
              "max_position_embeddings": 4096, "layer_types": ["full_attention"] * 200_000}  # fmt: skip
    text = json.dumps(config)
    with pytest.raises(InputError) as err:
        config_architecture(config, text, "config.json", None)
    assert str(err.value).startswith(f"config.json:1:{text.index('[') + 1}: config field 'layer_types' has 200,000")
    assert len(walked) < 20


def _owned_kinds(tmp_path: Path, kinds: int) -> Path:
    boxes = "".join(
        f"    - custom: {{name: box{i}, gpu: h100-sxm5-80gb, gpus_per_server: 8, cpu_cores: 64, cpu_sockets: 2,\n"
        f"               ram_gib: 2048, nvme_tb: 8, nvme_drives: 2, rack_units: 8}}\n      count: 1000\n"
        for i in range(kinds)
    )
    path = tmp_path / "owned.yaml"
    path.write_text(
        "version: 1\nname: owned\ndeployments:\n  - name: chat\n    model: meta-llama/Llama-3.1-8B\n    inference:\n"
        "      max_context_tokens: 8192\n      avg_input_tokens: 1000\n      avg_output_tokens: 200\n"
        f"      requests_per_second: 2\nhardware:\n  provider: baremetal\n  buy: false\n  inventory:\n{boxes}",
        encoding="utf-8",
    )
    return path


def test_owned_server_kinds_are_built_once_a_workload(tmp_path: Path, monkeypatch: Any) -> None:
    """3. An inventory of 100 custom server kinds (the groups' limit) ran ``plan`` past 5 minutes for one 2 req/s
    service: each fleet ranked rebuilt every owned kind's platform record (541,440 builds at 30 kinds, 14 s at 40).
    Now the kinds are built once a workload: the builds grow with the kinds, not with the fleets ranked."""
    from generator.api import plan_file
    from generator.planner.custom import inventory_server

    built = []

    def counted(group: Any) -> Any:
        built.append(group)
        return inventory_server(group)

    monkeypatch.setattr("generator.planner.inventory.inventory_server", counted)
    kinds = 12
    plan = plan_file(str(_owned_kinds(tmp_path, kinds)))[1]
    assert plan.pools
    assert len(built) <= 4 * kinds, len(built)
