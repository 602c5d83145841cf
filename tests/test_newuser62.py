"""newuser62: vision-language models, embedders and rerankers, refusals (/work/wt/bugs/newuser62.md).

Configs are in ``tests/data/newuser62`` (sources in its SOURCES.md).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from generator import catalog
from generator.api import plan_file
from generator.errors import ArchitectureError, InputError
from generator.sizing.architecture import parse_architecture
from generator.workload import load_workload
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


def test_gemma3_image_tokens_must_be_a_whole_number() -> None:
    """mm_tokens_per_image, now read for the image-tokens finding, is refused as the tower's fields are."""
    gemma = json.loads(json.dumps(catalog.models()["google/gemma-3-27b-it"].config))
    gemma["mm_tokens_per_image"] = "256"
    with pytest.raises(ArchitectureError, match=r"config field 'mm_tokens_per_image' must be a whole number above 0"):
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
    assert (said.level, said.path) == ("info", "deployments[0].inference.avg_input_tokens")
    assert "avg_input_tokens and max_context_tokens must include each request's image tokens" in said.message
    assert "a 1024x1024 image is resized to 1036x1036 px, 1,369 tokens" in said.message
    assert "about 6.9 TFLOP for a 1024x1024 image: 2 x 631,975,680 parameters x 5,476 patches" in said.message
    assert "in neither the TTFT nor the replica's capacity" in said.message
    path.write_text(VLM.replace("cfg/config.json", "meta-llama/Llama-3.1-8B-Instruct"))  # a text model: no word
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


# --- item 5: an encoder reports no KV cache tokens ----------------------------------------------------------------

EMBED = """\
version: 1
name: emb
deployments:
  - name: m3
    model: BAAI/bge-m3
    inference: {task: embed, max_context_tokens: 8192, avg_input_tokens: 512, requests_per_second: 50, slo: {ttft_p95_ms: 200}}
hardware: {provider: aws, gpus: [l40s-48gb]}
outputs: [terraform, ansible, kubernetes]
kubernetes: {location: us-east-1}
"""


def test_an_encoder_holds_no_kv_cache_tokens(tmp_path: Path) -> None:
    """bge-m3 keeps no KV cache; before, spec.json said 2,097,152 KV tokens a replica (max_num_seqs 256 x 8,192)."""
    path = tmp_path / "w.yaml"
    path.write_text(EMBED)
    (deployment,) = plan_file(str(path))[1].deployments
    assert deployment.details["kv_cache_bytes_per_token"] == 0
    assert deployment.details["kv_cache_tokens_per_replica"] == 0


# --- item 6: refusals name the real layout --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "message"),
    [
        # before: "config lacks hidden_size, num_hidden_layers, num_attention_heads (a decoder-only ... expected)"
        pytest.param("t5", r"^cannot size model_type 't5': an encoder-decoder model \(is_encoder_decoder\)", id="t5"),
        pytest.param(
            "whisper", r"^cannot size model_type 'whisper': an encoder-decoder model .*Whisper \(speech to text\)", id="whisper"
        ),
        # before: "config lacks hidden_size ..." (llm_config), and "vision_config lacks or has a malformed field: int()
        # argument must be ... not 'list'" ([448, 448] as published)
        pytest.param("internvl3_8b", r"^cannot size model_type 'internvl_chat' \(InternVL\): its layout", id="internvl-chat"),
        pytest.param("internvl3_8b_hf", r"^cannot size model_type 'internvl' \(InternVL\): its layout", id="internvl-hf"),
    ],
)
def test_layouts_not_sized_are_named(name: str, message: str) -> None:
    with pytest.raises(ArchitectureError, match=message):
        parse_architecture(_config(name))


def test_bart_with_d_model_is_an_encoder_decoder() -> None:
    """facebook/bart-large's fields (https://huggingface.co/facebook/bart-large/blob/main/config.json)."""
    config = {"model_type": "bart", "d_model": 1024, "encoder_layers": 12, "decoder_layers": 12, "vocab_size": 50265}
    with pytest.raises(ArchitectureError, match=r"^cannot size model_type 'bart': an encoder-decoder model"):
        parse_architecture(config)


MLLAMA = """\
version: 1
name: ml
deployments:
  - name: v
    model: cfg/config.json
    inference: {engine: ENGINE, max_context_tokens: 8192, requests_per_second: 1}
hardware: {provider: aws, gpus: [h100-sxm5-80gb]}
"""


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_mllama_refusal_names_vllm_only_for_vllm(tmp_path: Path, engine: str) -> None:
    """SGLang still serves Llama 3.2 Vision (python/sglang/srt/models/mllama.py): its refusal is the layout alone."""
    from generator.sizing.architecture import MLLAMA_VLLM
    from tests.test_architecture_newuser32 import MLLAMA_11B

    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "config.json").write_text(json.dumps(MLLAMA_11B))
    path = tmp_path / "w.yaml"
    path.write_text(MLLAMA.replace("ENGINE", engine))
    with pytest.raises(ArchitectureError) as raised:
        plan_file(str(path))
    assert "cross-attention layers" in str(raised.value)
    assert (MLLAMA_VLLM in str(raised.value)) == (engine == "vllm")
    code, _ = run_estimate(str(tmp_path / "cfg" / "config.json"), "--engine", engine)
    assert code == 1


# --- item 7: estimate says a decoder-only embedder is sized as a generating model ------------------------------


@pytest.mark.parametrize(
    ("model", "sign"),
    [
        pytest.param(str(DATA / "qwen3emb8b" / "config.json"), "its name 'qwen3emb8b'", id="qwen3-embedding-name"),
        pytest.param("gte", "is_causal: false", id="gte-qwen2-is-causal-false"),
        pytest.param("base-model", "architectures Qwen3Model", id="base-model-class"),
    ],
)
def test_estimate_notes_an_embedder(tmp_path: Path, model: str, sign: str) -> None:
    config = _config("qwen3emb8b")
    if model == "gte":
        config["is_causal"] = False
    if model == "base-model":
        config["architectures"] = ["Qwen3Model"]
    if not model.endswith(".json"):
        (tmp_path / "m").mkdir()
        (tmp_path / "m" / "config.json").write_text(json.dumps(config))
        model = str(tmp_path / "m" / "config.json")
    code, text = run_estimate(model, "--gpu", "h100-sxm5-80gb", "--context", "8192")
    assert code == 0
    assert f"looks like an embedding or reranking model ({sign}" in text
    assert "estimate it with --task embed or --task score (or plan it with task: embed" in text
    code, text = run_estimate("meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100-sxm5-80gb", "--context", "8192")
    assert code == 0 and "embedding or reranking" not in text  # a chat model: no word


# --- item 8: task: score on a causal LM is warned unless its overrides are rendered --------------------------

RERANK = """\
version: 1
name: rr
deployments:
  - name: qrr
    model: MODEL
    inference: {task: score, max_context_tokens: 8192, avg_input_tokens: 1200, requests_per_second: 5, slo: {ttft_p95_ms: 500}}
hardware: {provider: aws, gpus: [h100-sxm5-80gb]}
"""


def test_score_on_a_causal_lm_is_warned(tmp_path: Path) -> None:
    """A renamed Qwen3-Reranker folder: warned; a Qwen3-Reranker path gets its overrides rendered and a classifier
    (bge-reranker-v2-m3, XLMRobertaForSequenceClassification) its head: neither is warned."""
    warned = {}
    for folder in ("my-reranker", "Qwen3-Reranker-8B"):
        (tmp_path / folder).mkdir()
        shutil.copy(DATA / "qwen3rerank8b" / "config.json", tmp_path / folder / "config.json")
        path = tmp_path / "w.yaml"
        path.write_text(RERANK.replace("MODEL", f"{folder}/config.json"))
        warned[folder] = [f for f in plan_file(str(path))[1].findings if f.code == "score-head-unknown"]
    (said,) = warned["my-reranker"]
    assert said.level == "warning" and said.path == "deployments[0].model"
    assert "is a causal LM (Qwen3ForCausalLM) served for task: score" in said.message
    assert not warned["Qwen3-Reranker-8B"]
    path.write_text(RERANK.replace("MODEL", "BAAI/bge-reranker-v2-m3").replace("8192", "1024").replace("1200", "600"))
    assert not [f for f in plan_file(str(path))[1].findings if f.code == "score-head-unknown"]


# --- item 9: the SGLang pooling reason names no vLLM profiling ------------------------------------------------


def test_sglang_pooling_reason_does_not_name_vllm(tmp_path: Path) -> None:
    (tmp_path / "cfg").mkdir()
    shutil.copy(DATA / "qwen3emb8b" / "config.json", tmp_path / "cfg" / "config.json")
    path = tmp_path / "w.yaml"
    text = EMBED.replace("BAAI/bge-m3", "cfg/config.json").replace("task: embed,", "engine: sglang, task: embed,")
    path.write_text(text.replace("l40s-48gb", "h100-sxm5-80gb"))
    (deployment,) = plan_file(str(path))[1].deployments
    reasons = " ".join(deployment.reasons)
    assert "(no sampler rows: nothing is sampled)" in reasons
    assert "vLLM profiles the pooler" not in reasons


# --- item 3: vLLM splits the vision tower over its TP ranks ---------------------------------------------------


def test_vllm_splits_the_vision_tower_over_tp() -> None:
    """Qwen2.5-VL-72B at TP4: 146,821,554,688 bytes in BF16, the tower's 704,573,696 parameters 1,409,147,392 of them.
    vLLM (mm_encoder_tp_mode "weights", its default) splits the tower with the rest: a quarter of the whole and the
    1,978,368 B of small tensors each rank keeps whole. SGLang keeps it whole on each GPU (37,764,227,584 for both
    engines before)."""
    model = str(DATA / "qwen25vl72b" / "config.json")
    per_gpu = {}
    for engine in ("vllm", "sglang"):
        args = (model, "--tp", "4", "--context", "32768", "--gpu", "h100-sxm5-80gb", "--engine", engine, "--json")
        code, text = run_estimate(*args)
        assert code == 0
        per_gpu[engine] = json.loads(text)["memory"]["per_gpu"]["weights"]
    assert per_gpu == {"vllm": 36_707_367_040, "sglang": 37_764_227_584}


# --- item 1 (the field): images_per_request adds the images' tokens ---------------------------------------------


def test_images_per_request_adds_the_image_tokens(tmp_path: Path) -> None:
    """One 1024x1024 image a request to Qwen2.5-VL-7B (1,369 tokens) beside 200 text tokens is planned as the report's
    1,569-token prompt: 3 x H100 at $15,067/month where the text alone took 3 x L40S at $4,076."""
    (tmp_path / "cfg").mkdir()
    shutil.copy(DATA / "qwen25vl7b" / "config.json", tmp_path / "cfg" / "config.json")
    path = tmp_path / "w.yaml"
    path.write_text(
        VLM.replace("avg_output_tokens: 150\n", "avg_output_tokens: 150\n      images_per_request: 1\n      image_tokens: 1369\n")
    )
    loaded, plan = plan_file(str(path))
    assert loaded.workload.deployments[0].inference.avg_input_tokens == 1_569  # type: ignore[union-attr]
    path.write_text(VLM.replace("avg_input_tokens: 200", "avg_input_tokens: 1569"))
    assert plan.totals == plan_file(str(path))[1].totals
    (said,) = [f for f in plan.findings if f.code == "image-tokens"]
    assert said.path == "deployments[0].inference.images_per_request"
    assert said.message.startswith(
        "the images of model 'cfg/config.json' take 1,369 tokens a request (images_per_request 1 x 1,369 tokens an "
        "image), added to avg_input_tokens (sized: 1,569)"
    )


@pytest.mark.parametrize(
    ("model", "fields", "expected"),
    [
        pytest.param("google/gemma-3-27b-it", "images_per_request: 2.5", None, id="gemma3-256-each"),  # 2.5 x 256 = 640 tokens
        pytest.param(
            "cfg/config.json",
            "images_per_request: 1",
            "images_per_request: the tokens one image takes depend on its size for",
            id="qwen-needs-image-tokens",
        ),
        pytest.param(
            "meta-llama/Llama-3.1-8B-Instruct",
            "images_per_request: 1",
            "images_per_request: Llama 3.1 8B Instruct has no vision tower specgen counts",
            id="text-model",
        ),
        pytest.param(
            "cfg/config.json", "image_tokens: 1369", "image_tokens: image_tokens is the tokens one image takes", id="alone"
        ),
        pytest.param(
            "cfg/config.json",
            "images_per_request: 24\n      image_tokens: 1369",
            "images_per_request: avg_input_tokens with the images' 32,856 tokens, and avg_output_tokens, 33,206 tokens in "
            "all, exceed",
            id="past-the-context",
        ),
    ],
)
def test_images_per_request_is_checked(tmp_path: Path, model: str, fields: str, expected: str | None) -> None:
    (tmp_path / "cfg").mkdir()
    shutil.copy(DATA / "qwen25vl7b" / "config.json", tmp_path / "cfg" / "config.json")
    path = tmp_path / "w.yaml"
    text = VLM.replace("cfg/config.json", model).replace("avg_output_tokens: 150\n", f"avg_output_tokens: 150\n      {fields}\n")
    path.write_text(text)
    if expected is None:
        loaded = load_workload(path)
        assert loaded.workload.deployments[0].inference.avg_input_tokens == 200 + 640  # type: ignore[union-attr]
        return
    with pytest.raises(InputError, match=re.escape(f"deployments[0].inference.{expected}")):
        load_workload(path)


def test_a_patch_larger_than_the_image_is_refused() -> None:
    """review40 item 13: patch_size 1000 over a 336 px image gave 0 tokens an image without a word."""
    config = json.loads((DATA / "llava15_7b" / "config.json").read_text())
    config["vision_config"] = {**config["vision_config"], "patch_size": 1000}
    with pytest.raises(ArchitectureError, match="'patch_size' \\(1,000\\) must be at most its 'image_size' \\(336\\)"):
        parse_architecture(config)
