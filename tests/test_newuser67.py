"""newuser67 items 1, 4 and 5: vLLM, FlashAttention-2 and fp16 Gemma training planned on owned V100s, unsaid.

vLLM's installation page read "compute capability 7.0 or higher (e.g., V100, ...)" up to v0.14.0 and "7.5 or higher"
by v0.21.0: a current release does not start on Volta, and specgen renders no engine version.
"""

from __future__ import annotations

from pathlib import Path

from generator.api import plan_as_deployed
from generator.planner.engine_support import VLLM_TURING_FLOOR_DOCS, VLLM_VOLTA_DOCS

V100_CHAT = (Path(__file__).parent / "data" / "newuser67_v100_chat.yaml").read_text()


def test_vllm_on_volta_is_warned_with_the_releases_that_list_it(tmp_path: Path) -> None:
    path = tmp_path / "v100.yaml"
    path.write_text(V100_CHAT)
    plan = plan_as_deployed(str(path))[1]
    (said,) = [f for f in plan.findings if f.code == "engine-gpu-unsupported"]
    assert said.level == "warning" and said.path == "deployments[0]"
    assert VLLM_VOLTA_DOCS in said.message and VLLM_TURING_FLOOR_DOCS in said.message and "v0.14.0" in said.message


def test_a_turing_or_newer_gpu_is_not_warned(tmp_path: Path) -> None:
    path = tmp_path / "a100.yaml"
    path.write_text(V100_CHAT.replace("v100-sxm2-32gb", "a100-sxm4-80gb"))
    plan = plan_as_deployed(str(path))[1]
    assert not [f for f in plan.findings if f.code == "engine-gpu-unsupported"]


def test_a_job_on_volta_is_launched_without_flash_attention(tmp_path: Path) -> None:
    """Item 4: an axolotl job on V100 was rendered with flash_attention: true, which FlashAttention-2 refuses there."""
    from generator.api import render_file

    path = tmp_path / "train.yaml"
    path.write_text((Path(__file__).parent / "data" / "newuser67_v100_train.yaml").read_text())
    plan = plan_as_deployed(str(path))[1]
    for job in plan.deployments:
        assert job.details["flash_attention"] is False
        assert any(r.startswith("FlashAttention-2 runs on Ampere, Ada and Hopper") for r in job.reasons)
    (group_vars,) = [t for n, t in render_file(str(path)).items() if n.startswith("ansible/group_vars/ft_axolotl")]
    assert "flash_attention: false" in group_vars and "flash_attention: true" not in group_vars


def test_a_model_vllm_refuses_in_fp16_is_warned_when_it_trains_in_fp16(tmp_path: Path) -> None:
    """Item 5: Gemma 2 was refused for serving on V100 in fp16, but planned for an fp16 LoRA with no word."""
    tune = (Path(__file__).parent / "data" / "newuser67_v100_gemma_tune.yaml").read_text()
    said = {}
    for gpu in ("v100-sxm2-32gb", "a100-sxm4-80gb"):
        path = tmp_path / f"{gpu}.yaml"
        path.write_text(tune.replace("v100-sxm2-32gb", gpu))
        plan = plan_as_deployed(str(path))[1]
        said[gpu] = [f for f in plan.findings if f.code == "fp16-training-unstable"]
    (warning,) = said["v100-sxm2-32gb"]
    assert warning.level == "warning" and "gemma2" in warning.message and warning.path.endswith(".training")
    assert not said["a100-sxm4-80gb"]  # bf16 there
