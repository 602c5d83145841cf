"""An AMD pool's group vars carry AMD's MI300X tuning (newuser77 item 10): NUMA auto-balancing off on the hosts, and
each vLLM service's ROCm environment, with the AMD page each comes from beside it.

Before, an MI300X pool's vars had the amdgpu driver, the engine's args and ``governor: performance``, none of what
AMD's guides ask for; the throughput model's MI300X calibration includes AMD's own vLLM runs, made in AMD's images
with those set.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator.api import render_file
from generator.render.rocm_tuning import NUMA_SOURCE, VLLM_SOURCE, rocm_vllm_settings
from tests.helpers import ansible_reader

WORKLOAD = """\
version: 1
name: amd
deployments:
  - name: chat
    model: {model}
    inference: {{precision: {precision}, max_context_tokens: 8192, requests_per_second: 2}}
hardware:
  provider: baremetal
  gpus: [{gpu}]
outputs: [ansible]
"""

HOST = {
    "sysctl": {"kernel.numa_balancing": 0},
    "why": "NUMA auto-balancing off: otherwise the GPU might hang until the periodic balancing is finalized (AMD)",
    "source": NUMA_SOURCE,
}


def _group_vars(tmp_path: Path, model: str, gpu: str, precision: str = "bf16") -> dict[str, Any]:
    path = tmp_path / "amd.yaml"
    path.write_text(WORKLOAD.format(model=model, gpu=gpu, precision=precision))
    files = render_file(str(path))
    (name,) = [f for f in files if f.startswith("ansible/group_vars/")]
    loaded: dict[str, Any] = ansible_reader().load(files[name])
    return loaded


@pytest.mark.parametrize(
    ("model", "gpu", "env", "extra_args"),
    [
        pytest.param("meta-llama/Llama-3.1-8B-Instruct", "mi300x-192gb",
                     {"HIP_FORCE_DEV_KERNARG": "1", "VLLM_ROCM_USE_AITER": "1"}, [], id="llama-mi300x"),
        # MLA under AITER: "Must explicitly set --block-size 1 ... If you omit --block-size 1, vLLM will raise an error"
        pytest.param("deepseek-ai/DeepSeek-V2-Lite", "mi300x-192gb",
                     {"HIP_FORCE_DEV_KERNARG": "1", "VLLM_ROCM_USE_AITER": "1"}, ["--block-size", "1"], id="mla"),
        # gpt-oss: AITER unified attention, "Required for optimal performance"
        pytest.param("openai/gpt-oss-20b", "mi300x-192gb",
                     {"HIP_FORCE_DEV_KERNARG": "1", "VLLM_ROCM_USE_AITER": "1", "VLLM_ROCM_USE_AITER_MHA": "0",
                      "VLLM_ROCM_USE_AITER_UNIFIED_ATTENTION": "1"}, [], id="gpt-oss"),
    ],
)  # fmt: skip
def test_an_amd_pool_gets_amds_host_and_vllm_settings(
    tmp_path: Path, model: str, gpu: str, env: dict[str, str], extra_args: list[str]
) -> None:
    group_vars = _group_vars(tmp_path, model, gpu, "fp8" if model.startswith("openai/") else "bf16")
    assert group_vars["specgen_rocm_host"] == HOST
    (deployment,) = group_vars["specgen_deployments"]
    engine = deployment["engine"]
    assert (engine["env"], engine["env_source"]) == (env, VLLM_SOURCE)
    assert (engine["args"][-2:] == extra_args) if extra_args else "--block-size" not in engine["args"]


def test_an_nvidia_pool_gets_none_of_it(tmp_path: Path) -> None:
    group_vars = _group_vars(tmp_path, "meta-llama/Llama-3.1-8B-Instruct", "h100-sxm5-80gb")
    assert "specgen_rocm_host" not in group_vars
    assert "env" not in group_vars["specgen_deployments"][0]["engine"]


@pytest.mark.parametrize(
    ("architecture", "gpus", "mla", "sinks", "expected"),
    [
        ("cdna3", 1, False, False, ({"HIP_FORCE_DEV_KERNARG": "1", "VLLM_ROCM_USE_AITER": "1"}, [])),
        # RCCL channels: "Only beneficial for multi-GPU distributed workloads", given "on the Instinct MI300X"
        ("cdna3", 8, True, False, ({"HIP_FORCE_DEV_KERNARG": "1", "NCCL_MIN_NCHANNELS": "112", "VLLM_ROCM_USE_AITER": "1"},
                                   ["--block-size", "1"])),
        ("cdna4", 8, False, False, ({"HIP_FORCE_DEV_KERNARG": "1", "VLLM_ROCM_USE_AITER": "1"}, [])),
        # CDNA2 (MI250X): the guide's AITER kernels are for the MI300X and MI350 series (its hosts still get the sysctl)
        ("cdna2", 8, True, True, ({}, [])),
    ],
)  # fmt: skip
def test_the_settings_by_architecture_and_replica(
    architecture: str, gpus: int, mla: bool, sinks: bool, expected: tuple[dict[str, str], list[str]]
) -> None:
    assert rocm_vllm_settings(architecture, gpus, latent_attention=mla, attention_sinks=sinks) == expected


def test_latent_attention_is_the_layers_mla_not_a_kv_head_count_of_0() -> None:
    """review78 item 10: one MLA rule (``Architecture.uses_mla``) for vLLM's ``--block-size 1`` and ik_llama.cpp's -mla.

    The planner tested ``num_kv_heads == 0``; on every catalog model that is the MLA models (DeepSeek-V2/V3/R1), but an
    attention of 0 KV heads that is not MLA must not get the MLA kernels' settings.
    """
    from generator import catalog
    from generator.sizing.architecture import parse_architecture

    archs = {model_id: parse_architecture(m.config) for model_id, m in catalog.models().items()}
    assert {i for i, a in archs.items() if a.uses_mla} == {
        i for i, a in archs.items() if a.num_kv_heads == 0 and not a.encoder_only
    }
    assert archs["deepseek-ai/DeepSeek-V3"].uses_mla
    llama = archs["meta-llama/Llama-3.3-70B-Instruct"]
    assert not llama.uses_mla and not llama._replace(num_kv_heads=0).uses_mla
