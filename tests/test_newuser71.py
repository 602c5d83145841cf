"""newuser71: 2025-26 open-weight models from their config.json (/work/wt/bugs/newuser71.md).

Configs are in ``tests/data/newuser71`` (sources in its SOURCES.md).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from generator.errors import ArchitectureError, InputError
from generator.sizing.architecture import parse_architecture
from generator.workload import load_workload
from tests.conftest import REPO
from tests.helpers import run_specgen

DATA = REPO / "tests" / "data" / "newuser71"


def _config(name: str) -> dict[str, Any]:
    config: dict[str, Any] = json.loads((DATA / name / "config.json").read_text())
    return config


# --- item 4: Mistral 3's Pixtral tower counted with its own formula ----------------------------------------------


def test_mistral3_pixtral_tower_is_counted_exactly() -> None:
    """Text 23,572,403,200 + Pixtral encoder 403,305,472 (24 x (4 x 1024^2 + 3 x 1024 x 4096 + 2 x 1024) + conv 602,112
    + ln_pre 1,024) + Mistral3MultiModalProjector 35,652,608 (norm 1,024, merging_layer 4096 -> 1024 4,194,304,
    linear_1 1024 -> 5120 and linear_2 5120 -> 5120 bias-free 31,457,280): the card's "24B"
    (https://huggingface.co/mistralai/Mistral-Small-3.1-24B-Instruct-2503). Before: 23,892,952,064 (SigLIP formula)."""
    arch = parse_architecture(_config("mistralsmall31"))
    assert arch.params_total == 24_011_361_280
    assert arch.params_active == 23_572_403_200
    tower = arch.vision
    assert tower is not None and tower.exact and tower.kind == "Pixtral"
    assert (tower.params, tower.encoder_params) == (438_958_080, 403_305_472)
    # mistral_common ImageEncoder: ceil(1024 / 28) = 37 tokens a side, a break a row; 74 x 74 patches run
    assert (tower.image_tokens, tower.image_patches) == (37 * 38, 74 * 74)
    assert not any("approximately" in note for note in arch.notes)


def test_mistral3_projector_bias_is_read() -> None:
    config = _config("mistralsmall31")
    config["multimodal_projector_bias"] = True
    assert parse_architecture(config).params_total == 24_011_361_280 + 2 * 5120


# --- item 9: the image-token refusal names a rule ------------------------------------------------------------------


WORKLOAD = """version: 1
name: img
deployments:
  - name: svc
    model: cfg/config.json
    inference:
      precision: bf16
      max_context_tokens: 32768
      avg_input_tokens: 3000
      avg_output_tokens: 300
      images_per_request: 1
      requests_per_second: 5
hardware:
  gpus: [h100-sxm5-80gb]
  provider: baremetal
objective: cost
outputs: [terraform]
"""


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        pytest.param("mistralsmall31", "(Pixtral: one token per 28x28 px (2x2 patches merged) and one per row", id="mistral3"),
        pytest.param("scout", "(ViT: a tower specgen counts approximately, whose tokens an image it does not know)", id="llama4"),
    ],
)
def test_images_per_request_without_image_tokens_names_the_rule(tmp_path: Path, name: str, rule: str) -> None:
    """Before: "... for mistralsmall31 (ViT: ): give image_tokens" (the approximate tower had no rule)."""
    (tmp_path / "cfg").mkdir()
    shutil.copy(DATA / name / "config.json", tmp_path / "cfg" / "config.json")
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD)
    with pytest.raises(InputError) as refused:
        load_workload(path)
    assert rule in refused.value.message
    assert ": )" not in refused.value.message


# --- item 3: Gemma 3n refused for what it is ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ["gemma3n", "gemma3n_text"])
def test_gemma3n_is_refused_naming_its_layers_and_towers(name: str) -> None:
    """Before: "vision_config field 'intermediate_size' must be a whole number above 0, got 'None'" (a MobileNetV5 CNN
    has no ViT fields), and the text model as "a per-layer list ... as in Hunyuan-A13B"."""
    result = run_specgen("estimate", str(DATA / name / "config.json"), "--gpu", "l40s-48gb", "--context", "32768")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    text = result.stderr
    assert f"cannot size model_type '{name}' (Gemma 3n): specgen does not count its text layers (AltUp, LAuReL" in text
    assert "num_kv_shared_layers" in text
    assert "must be a whole number" not in text and "Hunyuan" not in text
    if name == "gemma3n":
        assert "vision tower (model_type 'gemma3n_vision', timm 'mobilenetv5_300m_enc': a CNN, not a ViT)" in text
        assert "audio tower (model_type 'gemma3n_audio')" in text


def test_a_tower_without_vit_fields_is_refused_as_not_a_vit() -> None:
    """Gemma 3n's MobileNetV5 beside another text model: named, not read as a malformed ViT field."""
    config = _config("mistralsmall31")
    config["vision_config"] = _config("gemma3n")["vision_config"]
    with pytest.raises(ArchitectureError) as refused:
        parse_architecture(config)
    message = refused.value.message
    assert "vision_config model_type 'gemma3n_vision', timm architecture 'mobilenetv5_300m_enc') is not a ViT" in message
    assert "must be a whole number" not in message


@pytest.mark.parametrize(
    ("name", "field"),
    [
        pytest.param("llava15_7b", "image_size", id="clip-image_size"),
        pytest.param("llava15_7b", "patch_size", id="clip-patch_size"),
        pytest.param("llava15_7b", "intermediate_size", id="clip-intermediate_size"),
        pytest.param("llava15_7b", "hidden_size", id="clip-hidden_size"),
        pytest.param("pixtral12b", "num_hidden_layers", id="pixtral-num_hidden_layers"),
    ],
)
def test_a_vit_missing_one_field_is_told_which(name: str, field: str) -> None:
    """review71 item 3: a CLIP tower without ``image_size`` was told it "is not a ViT (no image_size)" in a sentence that
    lists CLIP among the ViTs counted; before 9fa20473 the field was named. A tower with some of a ViT's layout fields is
    a ViT short of one: named at that field."""
    config: dict[str, Any] = json.loads((REPO / "tests" / "data" / "newuser62" / name / "config.json").read_text())
    del config["vision_config"][field]
    with pytest.raises(ArchitectureError) as refused:
        parse_architecture(config)
    message = refused.value.message
    assert message.startswith(f"vision_config field '{field}' is missing")
    assert "not a ViT" not in message


# --- item 2 (the refusal's wording): Mamba hybrids --------------------------------------------------------------


@pytest.mark.parametrize(("name", "model_type"), [("falconh1", "falcon_h1")])
def test_mamba_hybrid_refusal_says_mamba_is_not_sized(name: str, model_type: str) -> None:
    result = run_specgen("estimate", str(DATA / name / "config.json"), "--gpu", "h100-sxm5-80gb", "--context", "32768")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    text = result.stderr
    assert f"cannot size model_type '{model_type}': it is a Mamba / SSM (state-space) hybrid" in text
    assert "lacks" not in text


# --- item 6: attention parameters as the modeling code builds them ----------------------------------------------


@pytest.mark.parametrize(
    ("name", "total"),
    [
        # Glm4MoeAttention: q/k/v bias=attention_bias, o_proj bias=False; q_norm/k_norm over head_dim only where
        # use_qk_norm (GLM-4.5, not -Air). Before: 106,852,433,920 (+46 x 4,096) and 352,798,262,272 (+92 x 4,864)
        pytest.param("glm45air", 106_852_245_504, id="glm-4.5-air"),
        pytest.param("glm45", 352_797_814_784, id="glm-4.5"),
        # Olmo2Attention: q_norm over heads x head_dim, k_norm over kv heads x head_dim (32 x 128 each). Before:
        # 7,298,363,392 (2 x head_dim a layer)
        pytest.param("olmo2", 7_298_617_344, id="olmo-2-7b"),
        # MiniMaxM2Attention (Olmo2Attention's norms): 62 x (6,144 + 1,024) more. The routers' e_score_correction_bias
        # is a buffer (register_buffer), not a parameter, as DeepSeek-V3's is not counted. Before: 228,689,304,576
        pytest.param("minimaxm2", 228_689_748_992, id="minimax-m2"),
    ],
)
def test_attention_biases_and_qk_norms_follow_the_modeling_code(name: str, total: int) -> None:
    arch = parse_architecture(_config(name))
    assert arch.params_total == total
    assert not any("generic decoder" in note for note in arch.notes)


# --- item 2: Granite-4.0-H's Mamba-2 layers sized ------------------------------------------------------------------

#: ibm-granite/granite-4.0-h-small by hand from Transformers' modeling code (modular_granitemoehybrid.py, BambaMixer in
#: modeling_bamba.py, GraniteMoeSharedMLP / GraniteMoeMoE): hidden 4,096, 36 Mamba-2 and 4 attention layers.
#: Mamba-2: in_proj 4,096 x (8,192 + 8,448 + 128) = 68,681,728; conv1d 8,448 x 4 + 8,448 bias = 42,240; dt_bias, A_log,
#: D 3 x 128; gated norm 8,192; out_proj 8,192 x 4,096 = 33,554,432: 102,286,976 a layer.
#: Attention: q 4,096 x 4,096, k and v 4,096 x 1,024, o 4,096 x 4,096 = 41,943,040 a layer.
#: Every layer: 72 experts x (4,096 x 1,536 + 768 x 4,096) = 679,477,248, router 4,096 x 72 = 294,912, shared MLP
#: 4,096 x 3,072 + 1,536 x 4,096 = 18,874,368, two norms 8,192.
#: Tied embedding 100,352 x 4,096 = 411,041,792 and the final norm 4,096.
GRANITE_SMALL = 36 * 102_286_976 + 4 * 41_943_040 + 40 * (679_477_248 + 294_912 + 18_874_368 + 8_192) + 411_041_792 + 4_096


def _granite() -> Any:
    return parse_architecture(_config("granite4hsmall"))


def test_granite_4_h_parameters_are_the_modeling_codes() -> None:
    """The card (https://huggingface.co/ibm-granite/granite-4.0-h-small): "32B" total, "9B" active."""
    arch = _granite()
    assert arch.params_total == GRANITE_SMALL == 32_207_337_984
    assert arch.params_active == GRANITE_SMALL - 40 * (72 - 10) * (4_096 * 1_536 + 768 * 4_096)
    assert round(arch.params_total / 1e9) == 32 and round(arch.params_active / 1e9) == 9
    assert sum(layer.state is not None for layer in arch.layers) == 36
    assert not any("generic decoder" in note for note in arch.notes)


@pytest.mark.parametrize(
    ("tp", "layer_elements"),
    [
        # vLLM mamba2_state_shape: conv (4 - 1) x (8,192 + 2 x 1 x 128) / tp, SSM 128 / tp x 64 x 128
        pytest.param(1, 3 * 8_448 + 128 * 64 * 128, id="tp1"),
        # review71 item 5: TP 2 and 4 pad the one group to 2 and 4 (2 x 2 x 128 and 2 x 4 x 128 B / C channels)
        pytest.param(2, 3 * ((8_192 + 2 * 2 * 128) // 2) + 64 * 64 * 128, id="tp2"),
        pytest.param(4, 3 * ((8_192 + 2 * 4 * 128) // 4) + 32 * 64 * 128, id="tp4"),
        # one group, TP 8: extra_groups_for_head_shards pads the groups to 8, each rank keeps B / C whole
        pytest.param(8, 3 * ((8_192 + 2 * 8 * 128) // 8) + 16 * 64 * 128, id="tp8"),
    ],
)
def test_granite_4_h_state_and_kv_are_vllms(tp: int, layer_elements: int) -> None:
    from generator.sizing.kv_cache import state_bytes, token_bytes_per_gpu
    from generator.sizing.weights import Parallelism

    arch = _granite()
    assert state_bytes(arch, tp, 1)[1] == (36 * layer_elements * 2,)  # bf16, the model dtype
    # KV only in the 4 attention layers: 4 x 2 x 8 x 128 x 2 B a token, the KV heads split over TP
    assert token_bytes_per_gpu(arch, 16, Parallelism(tp=tp)) == 4 * 2 * 8 * 128 * 2 // tp


def _granite_params_per_gpu(tp: int) -> int:
    """granite-4.0-h-small's parameters on one GPU at ``tp``, by hand from vLLM's MambaMixer2 and granitemoehybrid.py.

    Mamba-2 layer: ``in_proj``'s z, x and dt rows 4,096 x (2 x 8,192 + 128) split; its B / C rows (one group, 2 x 128)
    whole on every rank (the group padded to TP, each rank loading the one group); ``out_proj`` split; ``conv1d`` over
    (8,192 + 2 x padded groups x 128) / TP channels, 4 taps and a bias each; ``A``, ``D``, ``dt_bias`` 3 x 128 / TP; the
    gated norm 8,192 / TP. Attention: q, k, v, o split (8 KV heads). Every layer: experts and the shared MLP split, the
    router and the two norms whole. The tied embedding split by vocabulary, the final norm whole.
    """
    groups = 1 if tp == 1 else tp
    conv = (8_192 + 2 * groups * 128) // tp
    mamba = 4_096 * (2 * 8_192 + 128) // tp + 4_096 * 256 + 8_192 * 4_096 // tp + conv * 5 + 3 * 128 // tp + 8_192 // tp
    attention = (2 * 4_096 * 4_096 + 2 * 4_096 * 1_024) // tp
    every = (679_477_248 + 18_874_368) // tp + 4_096 * 72 + 2 * 4_096
    return 36 * mamba + 4 * attention + 40 * every + 100_352 * 4_096 // tp + 4_096


@pytest.mark.parametrize("tp", [1, 4, 8])
def test_granite_4_h_weights_per_gpu_are_vllms(tp: int) -> None:
    """review71 item 5: the one group's B / C rows were documented as whole on every rank but split 1/TP (8,076,260,352
    B a GPU at TP8, 66,060,288 short), and the mixer's conv1d / A / D / dt_bias / gated norm were held whole (3,120,768
    B over at TP8). TP8: 4,069,599,936 parameters, 8,139,199,872 B in bf16."""
    from generator.sizing.precision import weight_format
    from generator.sizing.weights import Parallelism, size_weights

    sizes = size_weights(_granite(), weight_format("bf16"), Parallelism(tp=tp))
    assert sizes.per_gpu_bytes == 2 * _granite_params_per_gpu(tp)
    assert sizes.total_bytes == 2 * GRANITE_SMALL
    if tp == 1:
        assert _granite_params_per_gpu(1) == GRANITE_SMALL
    if tp == 8:
        assert sizes.per_gpu_bytes == 8_139_199_872


def test_granite_4_h_estimate_holds_states_and_kv() -> None:
    """Before: refused ("lacks linear_num_key_heads, ..."). Per sequence 77,322,240 B of state (36 x 2,147,840)."""
    result = run_specgen(
        "estimate", str(DATA / "granite4hsmall" / "config.json"), "--gpu", "h100-sxm5-80gb", "--context", "131072",
        "--tp", "2", "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["params"]["total"] == GRANITE_SMALL
    groups = {row["kind"]: row["layers"] for row in data["capacity"]["vllm_log"]["by_layer_type"]}
    assert groups == {"full": 4, "state": 36}


@pytest.mark.parametrize(
    ("change", "tp", "problem"),
    [
        pytest.param(
            {"mamba_n_groups": 2}, 4, "Mamba-2 groups (2) must be divisible by the tensor parallel size (4)", id="groups"
        ),
        pytest.param({}, 3, "recurrent-state heads (128) must be divisible by the tensor parallel size (3)", id="heads"),
    ],
)
def test_granite_4_h_tp_vllm_refuses_is_refused(change: dict[str, int], tp: int, problem: str) -> None:
    from generator.sizing.loadability import loadability_problems
    from generator.sizing.precision import weight_format
    from generator.sizing.weights import Parallelism

    arch = parse_architecture({**_config("granite4hsmall"), **change})
    assert any(problem in said for said in loadability_problems(arch, weight_format("bf16"), Parallelism(tp=tp)))
    assert not [p for p in loadability_problems(arch, weight_format("bf16"), Parallelism(tp=2)) if "recurrent" in p]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param(
            {"mamba_d_head": 32}, "mamba_n_heads 128 x mamba_d_head 32 must equal mamba_expand 2 x hidden_size", id="width"
        ),
        pytest.param({"mamba_d_state": None}, "(Mamba-2 hybrid): config lacks mamba_d_state", id="missing"),
        pytest.param(
            {"layer_types": ["mamba"] * 39 + ["cross"]}, "layer_types entry 'cross' is not mamba or attention", id="kind"
        ),
    ],
)
def test_granite_4_h_config_problems_are_named(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ArchitectureError, match=re.escape(message)):
        parse_architecture({**_config("granite4hsmall"), **change})


def test_granite_4_h_without_experts_is_the_shared_mlp_alone() -> None:
    """num_local_experts 0 (the dense Granite-4.0-H sizes): each layer's MLP is the shared MLP only."""
    dense = parse_architecture({**_config("granite4hsmall"), "num_local_experts": 0, "num_experts_per_tok": 0})
    assert dense.params_total == GRANITE_SMALL - 40 * (679_477_248 + 294_912)
    assert dense.params_active == dense.params_total


# --- review71 items 4 and 12: Granite-4.0-H's shared MLP width and an attention-only layout ---------------------------


def _granite_without(*keys: str, **changes: Any) -> dict[str, Any]:
    config = {**_config("granite4hsmall"), **changes}
    for key in keys:
        del config[key]
    return config


@pytest.mark.parametrize(
    ("config", "said"),
    [
        pytest.param(_granite_without("shared_intermediate_size"), "missing", id="absent"),
        pytest.param(_granite_without(shared_intermediate_size=None), "null", id="null"),
    ],
)
def test_granite_without_its_shared_width_is_told_that_field(config: dict[str, Any], said: str) -> None:
    """review71 item 4: told "config field 'intermediate_size' is null" though it is 768 in the file."""
    assert config["intermediate_size"] == 768
    with pytest.raises(ArchitectureError) as refused:
        parse_architecture(config)
    message = refused.value.message
    assert message.startswith(f"config field 'shared_intermediate_size' is {said}, but Granite-4.0-H's shared MLP")
    assert "'intermediate_size'" not in message


def test_granite_shared_width_zero_is_no_shared_mlp() -> None:
    """review71 item 4: ``shared_intermediate_size: 0`` was refused as a null ``intermediate_size``; vLLM's
    granitemoehybrid.py builds no shared MLP at 0 (``shared_mlp = None``), so the layers keep the routed experts alone:
    40 x 18,874,368 fewer parameters. With no experts either the layers would have no feed-forward block: refused so."""
    arch = parse_architecture(_granite_without(shared_intermediate_size=0))
    assert arch.params_total == GRANITE_SMALL - 40 * (4_096 * 3_072 + 1_536 * 4_096) == 31_452_363_264
    assert not any(linear.name.startswith("shared_mlp.") for layer in arch.layers for linear in layer.linears)
    with pytest.raises(ArchitectureError, match=re.escape("'shared_intermediate_size' is 0 and num_local_experts is 0")):
        parse_architecture(_granite_without(shared_intermediate_size=0, num_local_experts=0, num_experts_per_tok=0))


#: Granite-4.0-H-small's Mamba-2 fields, which an attention-only layout does not use.
_GRANITE_MAMBA_KEYS = (
    "mamba_chunk_size", "mamba_conv_bias", "mamba_d_conv", "mamba_d_head", "mamba_d_state", "mamba_expand",
    "mamba_n_groups", "mamba_n_heads", "mamba_proj_bias",
)  # fmt: skip


def test_granite_attention_only_without_mamba_fields_is_sized() -> None:
    """review71 item 12: all ``attention`` layers, no ``mamba_*`` fields (Transformers builds it: no layer uses them),
    no experts and an 8,192-wide shared MLP was refused with "layer_types[0] is 'attention', not a layer type sized here
    (full_attention, sliding_attention, chunked_attention)". By hand: attention 41,943,040, shared MLP 4,096 x 16,384 +
    8,192 x 4,096 = 100,663,296 and two norms 8,192 a layer, x 40, plus the tied embedding and the final norm."""
    keys = tuple(key for key in _GRANITE_MAMBA_KEYS if key in _config("granite4hsmall"))
    assert {"mamba_n_heads", "mamba_d_state"} <= set(keys)
    config = _granite_without(
        *keys, layer_types=["attention"] * 40, num_local_experts=0, num_experts_per_tok=0, shared_intermediate_size=8_192
    )
    arch = parse_architecture(config)
    assert arch.params_total == 40 * (41_943_040 + 100_663_296 + 8_192) + 411_041_792 + 4_096 == 6_115_627_008
    assert all(layer.state is None and layer.kv_elements_per_token == 2 * 8 * 128 for layer in arch.layers)
    # with one mamba layer the Mamba-2 fields are needed, and named as this model's
    config["layer_types"] = ["mamba"] + ["attention"] * 39
    with pytest.raises(ArchitectureError) as refused:
        parse_architecture(config)
    message = refused.value.message
    assert "cannot size model_type 'granitemoehybrid' (Mamba-2 hybrid): config lacks mamba_n_heads" in message
    assert "its mamba layers' Mamba-2 mixers need them" in message and "full_attention" not in message


@pytest.mark.parametrize("flag", [True, False])
def test_minimax_m2_use_qk_norm_is_read_as_its_modeling_code(flag: bool) -> None:
    """review71 item 11f: ``use_qk_norm: false`` changed nothing, without a word. vLLM's minimax_m2.py builds
    ``q_norm`` (48 x 128) and ``k_norm`` (8 x 128) in every MiniMaxM2Attention whatever the flag, as Transformers'
    MiniMaxM2Attention (FlexOlmoAttention) does: counted with them either way, and the estimate says so where false."""
    arch = parse_architecture({**_config("minimaxm2"), "use_qk_norm": flag})
    assert arch.params_total == 228_689_748_992
    said = [note for note in arch.notes if note.startswith("use_qk_norm: false is not read by vLLM's minimax_m2.py")]
    assert len(said) == (0 if flag else 1)
    if not flag:
        assert "(7,168 parameters a layer)" in said[0]
    with pytest.raises(ArchitectureError, match="'use_qk_norm' must be true or false"):
        parse_architecture({**_config("minimaxm2"), "use_qk_norm": "false"})
