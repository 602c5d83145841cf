"""Encoder-only models (BERT / RoBERTa / XLM-RoBERTa) served for task: embed / score (generator.sizing.encoder).

Parameter counts are exact against the Hub's figures (tests/data/encoders/SOURCES.md); the layers keep no KV cache and
attend bidirectionally; the request limit is the position table less RoBERTa's offset; a bge-m3 embedding service
plans one small GPU with its latency, weights and activations shown; generation with an encoder is refused at the field.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from generator.api import plan_file
from generator.errors import ArchitectureError
from generator.planner.pooling import pooling_flops_per_request
from generator.sizing.architecture import parse_architecture
from generator.sizing.kv_cache import size_kv_cache
from generator.sizing.performance import prefill_flops
from generator.sizing.precision import weight_format
from generator.sizing.weights import Parallelism, size_weights
from generator.workload.models import InferenceSpec
from tests.helpers import call_cli

ENCODERS = Path(__file__).parent / "data" / "encoders"


def _config(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ENCODERS / name / "config.json").read_text())
    return data


@pytest.mark.parametrize(
    ("name", "total", "served_tokens"),
    [
        # https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2 (BertModel, pooler kept)
        pytest.param("all-minilm-l6-v2", 22_713_216, 512, id="all-minilm-l6-v2"),
        # https://huggingface.co/BAAI/bge-large-en-v1.5 (bert-large geometry, pooler kept)
        pytest.param("bge-large-en-v1.5", 335_141_888, 512, id="bge-large-en-v1.5"),
        # https://huggingface.co/BAAI/bge-m3 (XLM-R large, 8,194 positions less the 2-position offset)
        pytest.param("bge-m3", 567_754_752, 8192, id="bge-m3"),
        # https://huggingface.co/BAAI/bge-reranker-v2-m3 (classification head in place of the pooler, 1 label)
        pytest.param("bge-reranker-v2-m3", 567_755_777, 8192, id="bge-reranker-v2-m3"),
    ],
)
def test_parameter_count_is_the_hubs(name: str, total: int, served_tokens: int) -> None:
    arch = parse_architecture(_config(name))
    assert arch.encoder_only
    assert arch.params_total == total
    assert arch.params_active == total
    assert arch.max_model_len == served_tokens


def test_counts_by_part() -> None:
    # bge-m3 by hand: the word table, 8,194 positions, one token type, the embedding LayerNorm; 24 layers of biased
    # Q/K/V/O, two LayerNorms, the 4,096-wide MLP with biases; the pooler
    arch = parse_architecture(_config("bge-m3"))
    hidden, inter = 1024, 4096
    layer = 4 * (hidden * hidden + hidden) + (hidden * inter + inter) + (inter * hidden + hidden) + 2 * 2 * hidden
    assert arch.layers[0].params == layer == 12_596_224
    assert arch.embedding_params == 250_002 * hidden
    assert arch.other_params == (8194 + 1) * hidden + 2 * hidden + hidden * hidden + hidden
    assert arch.lm_head_params == 0 and arch.logits_params == 0
    # the tables and the pooler are lookups / one token a request: the matmuls are the layers' and the embedding norm's
    assert arch.flop_params == 24 * layer + 2 * hidden


@pytest.mark.parametrize(
    ("head", "labels", "extra"),
    [
        # RoBERTa's classification head (a 1024x1024 dense, as large as the pooler it replaces, and the out_proj)
        pytest.param("XLMRobertaForSequenceClassification", 1, 1024 * 1 + 1, id="xlmr-1-label"),
        pytest.param("XLMRobertaForSequenceClassification", 3, 1024 * 3 + 3, id="xlmr-3-labels"),
        pytest.param("XLMRobertaModel", 1, 0, id="base-model-pooler"),
    ],
)
def test_heads(head: str, labels: int, extra: int) -> None:
    config = _config("bge-m3") | {"architectures": [head], "id2label": {str(i): f"LABEL_{i}" for i in range(labels)}}
    assert parse_architecture(config).params_total == 567_754_752 + extra


def test_bert_classifier_keeps_its_pooler() -> None:
    # BertForSequenceClassification: the pooler, then a hidden x num_labels classifier with a bias
    config = _config("all-minilm-l6-v2") | {"architectures": ["BertForSequenceClassification"], "id2label": {"0": "A", "1": "B"}}
    assert parse_architecture(config).params_total == 22_713_216 + 384 * 2 + 2


def test_padding_offset_does_not_change_counts() -> None:
    base = parse_architecture(_config("bge-m3"))
    moved = parse_architecture(_config("bge-m3") | {"pad_token_id": 0})
    assert moved.params_total == base.params_total
    assert (base.max_model_len, moved.max_model_len) == (8192, 8193)


def test_weights_bytes_and_no_kv_cache() -> None:
    arch = parse_architecture(_config("bge-m3"))
    for precision, bits in (("bf16", 16), ("fp32", 32)):
        weights = size_weights(arch, weight_format(precision), Parallelism())
        assert weights.total_bytes == 567_754_752 * bits // 8
    assert size_kv_cache(arch, 16, 8192, 1, Parallelism()).per_gpu_bytes == 0


def test_attention_is_bidirectional() -> None:
    # one forward pass: every token attends to all n tokens (a decoder's causal prefill to (n + 1) / 2 on average)
    arch = parse_architecture(_config("bge-large-en-v1.5"))
    tokens = 512
    attention = 24 * 4 * 16 * 64 * tokens * tokens
    assert prefill_flops(arch, tokens) == 2.0 * arch.flop_params * tokens + attention


def test_pooling_flops_take_no_lm_head_out() -> None:
    from generator.calculator.model_source import resolve_model

    model = resolve_model(str(ENCODERS / "bge-m3"))
    spec = InferenceSpec(max_context_tokens=8192, task="embed", avg_input_tokens=512, avg_output_tokens=0)
    assert pooling_flops_per_request(model, spec) == prefill_flops(model.architecture, 512)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        pytest.param(
            {"architectures": ["BertForMaskedLM"], "model_type": "bert", "hidden_size": 768, "num_hidden_layers": 12,
             "num_attention_heads": 12, "vocab_size": 30522},
            "cannot size 'BertForMaskedLM': of the encoder-only (BERT / RoBERTa) checkpoints specgen counts the base "
            "model (*Model, served for task: embed) and the sequence classifier (*ForSequenceClassification, task: score)",
            id="masked-lm-head",
        ),
        pytest.param(
            {"model_type": "deberta-v2", "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
             "vocab_size": 128100},
            "cannot size model_type 'deberta-v2': an encoder-decoder model or an encoder-only one outside the BERT / "
            "RoBERTa / XLM-RoBERTa family",
            id="deberta-refused",
        ),
        pytest.param(
            {"model_type": "t5", "is_encoder_decoder": True, "hidden_size": 512, "num_hidden_layers": 6,
             "num_attention_heads": 8, "vocab_size": 32128},
            "cannot size model_type 't5': an encoder-decoder model",
            id="encoder-decoder-refused",
        ),
        pytest.param(
            {"architectures": ["BertModel"], "model_type": "bert", "position_embedding_type": "relative_key",
             "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "vocab_size": 30522},
            "cannot size position_embedding_type 'relative_key': of BERT / RoBERTa encoders specgen counts the "
            "absolute (learned table) kind exactly",
            id="relative-positions",
        ),
    ],
)  # fmt: skip
def test_refused_layouts(config: dict[str, Any], message: str) -> None:
    with pytest.raises(ArchitectureError, match="^" + message.replace("(", r"\(").replace(")", r"\)").replace("*", r"\*")):
        parse_architecture(config)


WORKLOAD = """\
version: 1
name: rag
deployments:
  - name: embed
    model: ./bge-m3
    inference:
      task: {task}
      max_context_tokens: {context}
      avg_input_tokens: 512
      requests_per_second: 20
hardware:
  provider: aws
"""


def _workload(tmp_path: Path, task: str = "embed", context: int = 8192) -> Path:
    shutil.copytree(ENCODERS / "bge-m3", tmp_path / "bge-m3")
    path = tmp_path / "workload.yaml"
    path.write_text(WORKLOAD.format(task=task, context=context))
    return path


def test_bge_m3_embedding_service_plans_one_small_gpu(tmp_path: Path) -> None:
    (dep,) = plan_file(str(_workload(tmp_path)))[1].deployments
    assert dep.details["task"] == "embed"
    # no H100 for a 568M-parameter encoder: one 24 GB (or smaller) card
    assert dep.pool.endswith(("a10g_24gb", "l4_24gb", "t4_16gb")), dep.pool
    assert (dep.tp, dep.pp, dep.replicas, dep.gpus) == (1, 1, 1, 1)
    assert dep.params_total == 567_754_752
    latency_s = dep.details["latency_p95_s"]
    assert 0.005 < latency_s < 0.2, latency_s  # one 512-token pass, a few tens of ms on an A10G
    memory = dep.memory_per_gpu
    assert memory["weights"] == 567_754_752 * 2  # bf16
    assert memory["kv_cache"] == 0 and memory["kv_cache_pool"] == 0
    # a whole 8,192-token request in one pass (no chunked prefill for an encoder): activations of 8,192 tokens
    assert 0 < memory["activations"] < 2**30
    # vLLM without chunked prefill refuses max_num_batched_tokens below max_model_len: the rendered budget is a request's
    assert dep.details["max_num_batched_tokens"] == 8192
    text = " ".join(dep.reasons)
    assert "keeps no KV cache" in text and "8,192-token request" in text and "request latency p95" in text


def test_generation_with_an_encoder_is_refused_at_the_task(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _workload(tmp_path, task="generate")
    assert call_cli(tmp_path, ("validate", "workload.yaml")) == 1
    assert capsys.readouterr().err == (
        "specgen: error: workload.yaml:7:13: deployments[0].inference.task: task: generate needs a model that generates "
        "tokens, and bge-m3 is an encoder-only (xlm-roberta) model with no LM head: it embeds (task: embed) or, as a "
        "sequence classifier, scores (task: score)\n"
    )


def test_a_request_past_the_position_table_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _workload(tmp_path, context=8194)
    assert call_cli(tmp_path, ("validate", "workload.yaml")) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        "specgen: error: workload.yaml:8:27: deployments[0].inference.max_context_tokens: max_context_tokens 8,194 is "
        "more than the 8,192 tokens bge-m3 serves"
    ), err
    assert "learned position table" in err


def test_estimate_refuses_to_size_generation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(ENCODERS / "bge-m3", tmp_path / "bge-m3")
    assert call_cli(tmp_path, ("estimate", "./bge-m3")) == 1
    assert "encoder-only (xlm-roberta) model with no LM head" in capsys.readouterr().err


def test_reranker_by_catalog_id_plans_a_score_service(tmp_path: Path) -> None:
    path = tmp_path / "workload.yaml"
    text = WORKLOAD.format(task="score", context=1024).replace("./bge-m3", "BAAI/bge-reranker-v2-m3")
    path.write_text(text)
    (dep,) = plan_file(str(path))[1].deployments
    assert (dep.details["task"], dep.params_total, dep.gpus) == ("score", 567_755_777, 1)
    assert dep.memory_per_gpu["kv_cache"] == 0


def test_training_an_encoder_is_refused_at_the_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(ENCODERS / "bge-m3", tmp_path / "bge-m3")
    (tmp_path / "workload.yaml").write_text(
        "version: 1\nname: tune\ndeployments:\n  - name: tune\n    model: ./bge-m3\n    training:\n      method: full\n"
        "      sequence_length: 512\n      global_batch_size: 64\n      dataset_tokens: 1000000000\n"
        "hardware:\n  provider: aws\n"
    )
    assert call_cli(tmp_path, ("validate", "workload.yaml")) == 1
    assert capsys.readouterr().err == (
        "specgen: error: workload.yaml:5:12: deployments[0].model: bge-m3 is an encoder-only (xlm-roberta) model: "
        "specgen sizes it for serving (task: embed / score), not for training, whose memory and time it counts for "
        "language models (causal attention, a vocabulary's logits)\n"
    )


def test_pipeline_stages_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # vLLM's BERT / RoBERTa models do not implement SupportsPP: a pinned PP2 has no layout
    path = _workload(tmp_path)
    path.write_text(path.read_text().replace("    model: ./bge-m3\n", "    model: ./bge-m3\n    parallelism: {tp: 1, pp: 2}\n"))
    assert call_cli(tmp_path, ("plan", "workload.yaml")) == 3
    assert "TP1 PP2: vLLM runs an encoder without pipeline parallelism" in capsys.readouterr().err


def test_a_pass_carries_the_engine_iteration_time(tmp_path: Path) -> None:
    """A pooling pass is one engine iteration: scheduling and kernel launches beside the forward (decode_step_overhead_s).
    Without it all-MiniLM-L6-v2 (22.7M parameters) read a 0 ms p95 and about 13,000 req/s on one A10G."""
    from generator.sizing.constants import Constants

    path = tmp_path / "workload.yaml"
    path.write_text(WORKLOAD.replace("./bge-m3", "sentence-transformers/all-MiniLM-L6-v2").format(task="embed", context=512))
    (dep,) = plan_file(str(path))[1].deployments
    assert dep.details["latency_p95_s"] >= Constants().decode_step_overhead_s
