"""NVIDIA's NVFP4 checkpoint of Llama 3.3 70B is in the catalog (newuser110).

A platform engineer sizing Llama 3.3 70B at NVFP4 on Blackwell could only write ``precision: nvfp4`` beside the BF16
``meta-llama/Llama-3.3-70B-Instruct`` (warned ``precision-not-in-checkpoint``: vLLM loads the BF16 weights), and
``nvidia/Llama-3.3-70B-Instruct-FP4`` was an unknown model offline. Its ModelOpt ``hf_quant_config.json``
(quant_algo NVFP4, group_size 16, exclude_modules [lm_head]) sizes every linear layer of the decoder at 4 bits with
an E4M3 scale per 16 weights (4.5 bits) and one FP32 global scale per tensor; the embeddings and lm_head stay BF16.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import run_specgen

MODEL = "nvidia/Llama-3.3-70B-Instruct-FP4"
HIDDEN, VOCAB, LAYERS, FFN, KV_HEADS, HEAD_DIM = 8192, 128256, 80, 28672, 8, 128


def test_the_checkpoint_is_sized_at_4_5_bits_with_lm_head_and_embeddings_in_bf16() -> None:
    kv = KV_HEADS * HEAD_DIM
    linear = (2 * HIDDEN * HIDDEN + 2 * HIDDEN * kv + 3 * HIDDEN * FFN) * LAYERS  # q, o, k, v, gate, up, down
    global_scales = 7 * LAYERS * 4  # one FP32 weight_scale_2 a quantized tensor
    bf16 = (2 * VOCAB * HIDDEN + (2 * LAYERS + 1) * HIDDEN) * 2  # embed_tokens, lm_head, the RMSNorms
    said = run_specgen("estimate", MODEL, "--json")
    assert said.returncode == 0, said.stderr
    out = json.loads(said.stdout)
    assert out["precision"]["weights"] == "nvfp4"  # the checkpoint's own, with no --precision
    assert out["weights"]["bytes"] == linear * 9 // 16 + global_scales + bf16 == 42_709_043_392


WORKLOAD = """\
version: 1
name: q
deployments:
  - name: chat
    model: {model}
    inference: {{precision: nvfp4, max_context_tokens: 8192, requests_per_second: 1}}
hardware:
  gpus: [b200-sxm-180gb]
"""


def test_nvfp4_of_the_nvidia_checkpoint_is_served_as_stored(tmp_path: Path) -> None:
    """The BF16 base warns; NVIDIA's NVFP4 checkpoint is what vLLM serves at nvfp4, so nothing to warn."""
    for model, warned in (("meta-llama/Llama-3.3-70B-Instruct", True), (MODEL, False)):
        (tmp_path / "w.yaml").write_text(WORKLOAD.format(model=model))
        said = run_specgen("plan", "w.yaml", cwd=tmp_path)
        assert said.returncode == 0, said.stderr
        assert ("[precision-not-in-checkpoint]" in said.stderr) is warned, said.stderr
