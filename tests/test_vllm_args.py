"""fix115 item 1: a vLLM service's group vars start vLLM as sized from ``args`` alone.

``max_model_len``, ``max_num_seqs``, ``max_num_batched_tokens`` and ``gpu_memory_utilization`` stood beside ``args`` as
keys only, and the layout as the entry's ``tensor_parallel`` / ``pipeline_parallel``; a role that passes ``args`` started
vLLM at its defaults (the model's whole context, its default batch, TP1), not the KV pool and batch the plan counts on.
Now ``args`` starts with vLLM's flags for them (https://docs.vllm.ai/en/stable/configuration/engine_args.html), each the
value of its key, which the plan's figures (spec.json) are.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from generator.api import render_file

REPO = Path(__file__).resolve().parent.parent

#: vLLM's flag of each setting, the entry key it is read from ("" : the deployment's own, else its engine's), and the
#: spec.json figure it must equal ("tp" / "pp": the deployment's, else its details').
FLAGS = (
    ("--tensor-parallel-size", "", "tensor_parallel", "tp"),
    ("--pipeline-parallel-size", "", "pipeline_parallel", "pp"),
    ("--max-model-len", "engine", "max_model_len", "context_tokens"),
    ("--max-num-seqs", "engine", "max_num_seqs", "max_num_seqs"),
    ("--max-num-batched-tokens", "engine", "max_num_batched_tokens", "max_num_batched_tokens"),
    ("--gpu-memory-utilization", "engine", "gpu_memory_utilization", None),
)


def _group_vars(files: dict[str, str]) -> dict[str, list[dict[str, Any]]]:
    """Each pool's ``specgen_deployments`` by group vars path."""
    return {
        name: YAML(typ="safe").load(text.replace("!unsafe ", ""))["specgen_deployments"]
        for name, text in files.items()
        if name.startswith("ansible/group_vars/")
    }


def _flag(args: list[str], flag: str) -> str:
    assert args.count(flag) == 1, f"{flag} once in {args}"
    return args[args.index(flag) + 1]


@pytest.mark.parametrize("stem", ["chat-70b", "rag-embed", "llama-405b-bf16", "small-models-gke-sharing", "mixed"])
def test_vllm_args_carry_the_settings_it_is_sized_at(stem: str) -> None:
    files = render_file(str(REPO / "examples" / f"{stem}.yaml"))
    plan = {d["name"]: d for d in json.loads(files["spec.json"])["plan"]["deployments"]}
    seen = 0
    for entries in _group_vars(files).values():
        for entry in entries:
            engine = entry.get("engine") or {}
            if engine.get("name") != "vllm":
                continue
            seen += 1
            args, dep = engine["args"], plan[entry["name"]]
            assert args[: 2 * len(FLAGS) : 2] == [flag for flag, *_ in FLAGS]  # first, in this order
            for flag, where, key, figure in FLAGS:
                value = (engine if where else entry)[key]
                assert _flag(args, flag) == str(value)  # the args are the keys: they cannot disagree
                if figure is not None and len(dep["split"]) == 0:  # one pool: the plan's own figure
                    assert value == (dep[figure] if figure in ("tp", "pp") else dep["details"][figure])
    assert seen


TIME_SLICED = """\
version: 1
name: lab
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    gpu_sharing: {strategy: time-slicing, replicas_per_gpu: 2}
    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 1}
hardware:
  provider: baremetal
  gpus: [a100-sxm4-80gb]
outputs: [ansible, kubernetes]
"""


def test_a_time_sliced_pods_share_of_the_gpu_is_its_gpu_memory_utilization_flag(tmp_path: Path) -> None:
    """On a time-sliced GPU each pod's ``--gpu-memory-utilization`` is its share, not vLLM's 0.9 of the whole GPU."""
    (path := tmp_path / "w.yaml").write_text(TIME_SLICED)
    ((entry,),) = _group_vars(render_file(str(path))).values()
    fraction = entry["engine"]["gpu_memory_utilization"]
    assert fraction == 0.45  # two pods a GPU: each half of vLLM's 0.9 (gpu_share.pod_memory_fraction)
    assert _flag(entry["engine"]["args"], "--gpu-memory-utilization") == str(fraction)


SGLANG = """\
version: 1
name: lab
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-70B-Instruct
    parallelism: {PARALLELISM}
    inference: {engine: sglang, precision: fp8, max_context_tokens: 8192, requests_per_second: 1}
hardware:
  provider: baremetal
  gpus: [h100-sxm5-80gb]
outputs: [ansible]
"""


@pytest.mark.parametrize(
    ("parallelism", "layout"),
    [("{tp: 2, pp: 1}", ["--tp-size", "2"]), ("{tp: 4, pp: 2}", ["--tp-size", "4", "--pp-size", "2"])],
)
def test_sglang_args_carry_its_layout(tmp_path: Path, parallelism: str, layout: list[str]) -> None:
    """An SGLang TP2 service's args had no ``--tp-size`` (its default 1): a role passing args started it on one GPU."""
    (path := tmp_path / "w.yaml").write_text(SGLANG.replace("{PARALLELISM}", parallelism))
    files = render_file(str(path))
    ((entry,),) = _group_vars(files).values()
    (dep,) = json.loads(files["spec.json"])["plan"]["deployments"]
    assert [dep["tp"], dep["pp"]] == [int(layout[1]), int(layout[3]) if len(layout) > 2 else 1]
    assert entry["engine"]["args"][: len(layout)] == layout
    assert entry["engine"]["args"].count("--tp-size") == 1
