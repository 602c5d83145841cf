"""newuser62: vision-language models, embedders and rerankers, refusals (/work/wt/bugs/newuser62.md).

Configs are in ``tests/data/newuser62`` (sources in its SOURCES.md).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from generator import catalog
from generator.api import plan_file
from generator.errors import ArchitectureError
from generator.sizing.architecture import parse_architecture
from tests.conftest import REPO
from tests.helpers import run_estimate

DATA = REPO / "tests" / "data" / "newuser62"


def _config(name: str) -> dict[str, Any]:
    config: dict[str, Any] = json.loads((DATA / name / "config.json").read_text())
    return config


# --- item 2: LLaVA's CLIP and Pixtral towers counted exactly ----------------------------------------------------


@pytest.mark.parametrize(
    ("name", "total", "tower"),
    [
        # Pixtral encoder 403,489,792 (Mistral's card: "400M parameter vision encoder") + projector 1024->5120->5120
        # 31,467,520; the Hub's "12.7B params" (https://huggingface.co/mistral-community/pixtral-12b). Before: 12,560,319,488
        pytest.param("pixtral12b", 12_682_739_712, 434_957_312, id="pixtral-12b"),
        # CLIP ViT-L/14-336 303,507,456 + projector 1024->4096->4096 20,979,712; the Hub's "7.06B params"
        # (https://huggingface.co/llava-hf/llava-1.5-7b-hf). Before: 7,046,639,616
        pytest.param("llava15_7b", 7_063_427_072, 324_487_168, id="llava-1.5-7b"),
    ],
)
def test_llava_towers_are_counted_exactly(name: str, total: int, tower: int) -> None:
    arch = parse_architecture(_config(name))
    assert (arch.params_total, arch.vision_params) == (total, tower)
    assert arch.vision is not None and arch.vision.exact
    assert not arch.notes


def test_an_unknown_tower_is_noted_as_approximate() -> None:
    """A ViT tower under a projector not read here (Llama 4's) keeps the SigLIP formula, and says so."""
    config = json.loads((REPO / "tests" / "data" / "quantized" / "llama4-scout-17b-16e-instruct.config.json").read_text())
    arch = parse_architecture(config)
    assert arch.vision is not None and not arch.vision.exact
    assert any("counted approximately, with the SigLIP formula" in note for note in arch.notes)


def test_gemma3_siglip_stays_exact() -> None:
    arch = parse_architecture(catalog.models()["google/gemma-3-27b-it"].config)
    assert arch.params_total == 27_432_406_640
    assert arch.vision is not None and arch.vision.exact and arch.vision.image_tokens == 256


# --- item 9: the ViT path refuses what the Qwen-VL path refuses -------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        pytest.param("patch_size", True, id="patch-true"),  # before: taken as 1, Pixtral 13,629,083,648
        pytest.param("hidden_size", "1024", id="width-string"),
        pytest.param("image_size", 1024.7, id="image-float"),
        pytest.param("num_hidden_layers", 0, id="no-layers"),
    ],
)
def test_vision_fields_must_be_whole_numbers(field: str, value: object) -> None:
    for name in ("pixtral12b", "llava15_7b"):
        config = _config(name)
        config["vision_config"][field] = value
        with pytest.raises(ArchitectureError, match=rf"vision_config field '{field}' must be a whole number above 0"):
            parse_architecture(config)
    gemma = json.loads(json.dumps(catalog.models()["google/gemma-3-27b-it"].config))
    gemma["vision_config"][field] = value
    with pytest.raises(ArchitectureError, match=rf"vision_config field '{field}' must be a whole number above 0"):
        parse_architecture(gemma)


# --- item 1: image tokens and the encoder's compute are said ---------------------------------------------------

VLM = """\
version: 1
name: vlm
deployments:
  - name: vqa
    model: cfg/config.json
    inference:
      max_context_tokens: 32768
      avg_input_tokens: 200
      avg_output_tokens: 150
      requests_per_second: 40
      slo: {ttft_p95_ms: 1500, tpot_ms: 40}
hardware: {provider: aws, gpus: [h100-sxm5-80gb, l40s-48gb]}
objective: cost
outputs: [terraform, ansible, kubernetes]
kubernetes: {location: us-east-1}
"""


def test_a_vlm_plan_says_image_tokens_are_not_sized(tmp_path: Path) -> None:
    """Qwen2.5-VL-7B: 1,369 tokens a 1024x1024 image (37 x 37 after the 28 px resize), its 32 blocks and patch
    embedding over 5,476 patches 2 x 631,975,680 x 5,476 = 6.9 TFLOP. Before: no finding mentioned images."""
    (tmp_path / "cfg").mkdir()
    shutil.copy(DATA / "qwen25vl7b" / "config.json", tmp_path / "cfg" / "config.json")
    path = tmp_path / "w.yaml"
    path.write_text(VLM)
    (said,) = [f for f in plan_file(str(path))[1].findings if f.code == "image-tokens"]
    assert (said.level, said.path) == ("warning", "deployments[0].inference.avg_input_tokens")
    assert "avg_input_tokens and max_context_tokens must include each request's image tokens" in said.message
    assert "a 1024x1024 image is resized to 1036x1036 px, 1,369 tokens" in said.message
    assert "about 6.9 TFLOP for a 1024x1024 image: 2 x 631,975,680 parameters x 5,476 patches" in said.message
    assert "in neither the TTFT nor the replica's capacity" in said.message


def test_a_text_model_plan_says_nothing_of_images(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(VLM.replace("cfg/config.json", "meta-llama/Llama-3.1-8B-Instruct"))
    assert not [f for f in plan_file(str(path))[1].findings if f.code == "image-tokens"]


@pytest.mark.parametrize(
    ("model", "said"),
    [
        pytest.param("google/gemma-3-27b-it", "256 tokens an image whatever its size (mm_tokens_per_image", id="gemma3-256"),
        pytest.param(str(DATA / "llava15_7b" / "config.json"), "576 tokens an image whatever its size", id="llava-576"),
        pytest.param(str(DATA / "pixtral12b" / "config.json"), "4,160 for a 1024x1024 image", id="pixtral-4160"),
    ],
)
def test_estimate_notes_image_tokens(model: str, said: str) -> None:
    code, text = run_estimate(model, "--gpu", "h100-sxm5-80gb", "--context", "4096")
    assert code == 0
    assert "--input-tokens and --context must include each request's image tokens" in text
    assert said in text
