"""Catalog session 31: Gemma 3 27B IT (text + SigLIP vision) and the RTX A6000 on the WRX90 workstation.

google/gemma-3-27b-it's config.json is catalogued as published: its ``text_config`` leaves out ``vocab_size`` and
``sliding_window_pattern``, which specgen's Gemma 3 defaults supply (Transformers' ``Gemma3TextConfig``: 262,208 and
6). newuser54: no catalog platform offered the RTX A6000 (``rtx-a6000-48gb``); the WRX90 workstation now takes it, so
an owned one can be planned.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator import catalog
from generator.planner import plan_workload
from generator.sizing.architecture import parse_architecture
from generator.workload import load_workload
from tests.conftest import catalog_json
from tests.helpers import run_estimate

GEMMA3_27B = "google/gemma-3-27b-it"

#: google/gemma-3-27b-it's parameters as its Hugging Face page gives them (https://huggingface.co/google/gemma-3-27b-it:
#: "Model size 27.4B params", from the repository's safetensors metadata, whose exact total is 27,432,406,640:
#: the language model, the SigLIP vision tower and the projector; the embedding is tied, so no separate LM head).
GEMMA3_27B_PARAMS = 27_432_406_640
GEMMA3_27B_CARD_PARAMS = 27.4e9


def _gemma3_27b() -> dict[str, Any]:
    record: dict[str, Any] = next(r for r in catalog_json("models")["models"] if r["id"] == GEMMA3_27B)
    return record


def test_gemma3_27b_is_catalogued_with_its_config_url() -> None:
    record = _gemma3_27b()
    assert record["source"] == "https://huggingface.co/google/gemma-3-27b-it/blob/main/config.json"
    assert record["research_notes"]
    assert "config_trimmed" not in record  # the published file whole, vision tower included


def test_gemma3_27b_config_adds_nothing_the_published_file_lacks() -> None:
    config = _gemma3_27b()["config"]
    assert isinstance(config, dict)
    assert config["architectures"] == ["Gemma3ForConditionalGeneration"]
    text = config["text_config"]
    assert {k: text[k] for k in ("hidden_size", "intermediate_size", "num_hidden_layers", "head_dim")} == {
        "hidden_size": 5376,
        "intermediate_size": 21504,
        "num_hidden_layers": 62,
        "head_dim": 128,
    }
    assert (text["num_attention_heads"], text["num_key_value_heads"], text["query_pre_attn_scalar"]) == (32, 16, 168)
    assert text["rope_scaling"] == {"factor": 8.0, "rope_type": "linear"}
    # left out of the published text_config: specgen's defaults stand in, nothing is written into the catalog
    for key in ("vocab_size", "sliding_window_pattern", "max_position_embeddings", "rope_theta"):
        assert key not in text
    vision = config["vision_config"]
    assert (vision["model_type"], vision["num_hidden_layers"], vision["hidden_size"]) == ("siglip_vision_model", 27, 1152)


@pytest.mark.parametrize(
    "published",
    [
        pytest.param(GEMMA3_27B_PARAMS, id="safetensors-total"),
        pytest.param(GEMMA3_27B_CARD_PARAMS, id="hub-page-27.4B"),
    ],
)
def test_gemma3_27b_parameters_match_the_published_count(published: float) -> None:
    arch = parse_architecture(catalog.models()[GEMMA3_27B].config)
    assert abs(arch.params_total - published) / published <= 0.005
    assert arch.vocab_size == 262_208  # Gemma3TextConfig's default: the published text_config has none
    assert arch.vision_params > 0  # the SigLIP tower and projector are counted, not dropped


def test_gemma3_27b_has_ten_global_layers_of_62_and_the_rest_slide_at_1024() -> None:
    arch = parse_architecture(catalog.models()[GEMMA3_27B].config)
    windows = [layer.window_tokens for layer in arch.layers]
    assert len(windows) == 62
    full = [i for i, w in enumerate(windows) if w is None]
    # every sixth layer is global (sliding_window_pattern 6): layers 6, 12, ..., 60 counted from one
    assert full == [5, 11, 17, 23, 29, 35, 41, 47, 53, 59]
    assert all(w == 1024 for i, w in enumerate(windows) if i not in full)


def test_gemma3_27b_is_listed_and_estimated() -> None:
    code, text = run_estimate(GEMMA3_27B, "--gpu", "h100-sxm5-80gb", "--context", "32768")
    assert code == 0
    assert "27,432,406,640 total" in text
    # KV: 10 global layers x 32,768 tokens + 52 sliding layers x 1,024, 16 KV heads x 128 x 2 (K, V) x 2 bytes
    assert "2.91 GiB for 1 x 32,768 tokens" in text
    assert (10 * 32_768 + 52 * 1_024) * 16 * 128 * 2 * 2 == 3_120_562_176


# ---------------------------------------------------------------- RTX A6000 on the WRX90 workstation

OWNED_A6000_QLORA = """\
version: 1
name: tune-8b-a6000
deployments:
  - name: tune
    model: meta-llama/Llama-3.1-8B
    training:
      method: qlora
      lora_rank: 16
      sequence_length: 8192
      global_batch_size: 64
      dataset_tokens: 100000000
      epochs: 1
      deadline_hours: 48
hardware:
  provider: baremetal
  buy: false
  inventory:
    - {platform: wrx90-workstation, gpu: rtx-a6000-48gb, gpus_per_server: 2, count: 1}
"""


def test_the_wrx90_workstation_takes_the_rtx_a6000() -> None:
    platform = catalog.platforms()["wrx90-workstation"]
    assert "rtx-a6000-48gb" in platform.gpu_ids
    gpu = catalog.gpus()["rtx-a6000-48gb"]
    # a dual-slot 300 W blower card, as the RTX 6000 Ada the workstation already takes
    assert (gpu.tdp_w, gpu.memory_gb) == (300, 48)
    assert gpu.tdp_w == catalog.gpus()["rtx-6000-ada-48gb"].tdp_w


def test_an_owned_a6000_workstation_plans_a_qlora_job(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(OWNED_A6000_QLORA, encoding="utf-8")
    plan = plan_workload(load_workload(str(path)))
    (pool,) = plan.pools
    (tune,) = plan.deployments
    assert (pool.node.platform_id, pool.node.gpu_id, pool.node.gpus) == ("wrx90-workstation", "rtx-a6000-48gb", 2)
    assert (pool.nodes, pool.owned_nodes) == (1, 1)
    assert (tune.kind, tune.pool, tune.gpus) == ("training", pool.name, 2)


def test_a_bought_a6000_is_unpriced_and_ranked_after_the_priced_rtx_6000_ada(tmp_path: Path) -> None:
    """No purchase price of the A6000 is catalogued: a layout buying it buys the GPUs, servers and power of an RTX
    6000 Ada one (both 48 GB, 300 W), which is priced, so it is ranked after it and said so (not a fallback to power)."""
    text = OWNED_A6000_QLORA.replace("  buy: false\n  inventory:\n", "  gpus: [rtx-a6000-48gb, rtx-6000-ada-48gb]\n")
    text = text.replace("    - {platform: wrx90-workstation, gpu: rtx-a6000-48gb, gpus_per_server: 2, count: 1}\n", "")
    path = tmp_path / "w.yaml"
    path.write_text(text, encoding="utf-8")
    plan = plan_workload(load_workload(str(path)))
    (pool,) = plan.pools
    assert pool.node.gpu_id == "rtx-6000-ada-48gb"
    (dominated,) = [f.message for f in plan.findings if f.code == "unpriced-dominated"]
    assert "wrx90-workstation with rtx-a6000-48gb" in dominated
    assert not [f for f in plan.findings if f.code == "objective-fallback"]


def test_gemma3_text_configs_take_transformers_defaults_they_leave_out() -> None:
    """A Gemma 3 text config that leaves out head_dim, the head counts or max_position_embeddings is sized with
    Gemma3TextConfig's defaults (256, 8, 4, 131,072), not the hidden size over the heads (the 12B's 240)."""
    from generator.sizing.architecture import parse_architecture

    text = {"model_type": "gemma3_text", "hidden_size": 3840, "intermediate_size": 15360, "num_hidden_layers": 48,
            "num_attention_heads": 16, "num_key_value_heads": 8, "sliding_window": 1024}  # fmt: skip
    arch = parse_architecture({"architectures": ["Gemma3ForCausalLM"], **text})
    assert arch.max_position_embeddings == 131_072
    assert {layer.kv_elements_per_token for layer in arch.layers} == {2 * 8 * 256}
