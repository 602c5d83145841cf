"""newuser76 item 12 (fix107's leftover): ``specgen estimate`` sent a user to "a larger GPU" where a smaller micro-batch
with a chunked loss fits the GPU given.

``estimate google/gemma-3-1b-it --train full --framework hf --gpu rtx-4090-24gb --seq-len 8192 --micro-batch 4
--gradient-checkpointing full`` printed "no one change of its memory settings, method or up to 8 GPUs makes it fit (its
memory settings together: ... (32.47 GiB)): a larger GPU": the settings together were tried only at micro-batch 4, whose
fp32 logits alone are 4 x 8,192 x 262,144 x 4 B = 34.4 GB (Gemma 3's 262,144-token vocabulary). The settings are now
searched together with each smaller micro-batch, the accumulation raised to keep the 4 sequences a step, and the note
names those that fit.
"""

from __future__ import annotations

from tests.helpers import estimate_json

GEMMA = ("google/gemma-3-1b-it", "--train", "full", "--framework", "hf", "--gpu", "rtx-4090-24gb", "--seq-len", "8192",
         "--gradient-checkpointing", "full")  # fmt: skip
#: Gemma 3's vocabulary (its config.json) and the fp32 logits of a micro-batch of 4 at 8,192 tokens.
VOCAB = 262_144
LOGITS_4 = 4 * 8192 * VOCAB * 4


def test_a_smaller_micro_batch_with_the_settings_together_is_named_not_a_larger_gpu() -> None:
    result = estimate_json(*GEMMA, "--micro-batch", "4")
    assert result["capacity"]["fits"] is False
    assert result["capacity"]["usable_bytes"] < LOGITS_4  # 34.4 GB of fp32 logits alone: more than the card holds
    notes = " ".join(result["notes"])
    assert "a larger GPU" not in notes
    smaller = [c for c in result["capacity"]["fits_with"] if c["kind"] == "micro-batch"]
    assert [c["flags"] for c in smaller] == [
        # micro-batch 2 takes the chunked loss and ZeRO-Offload (DeepSpeed's CPU Adam: no 8-bit optimizer beside it) ...
        "--micro-batch 2 --accumulation 2 --loss chunked --zero 1 --offload-optimizer",
        # ... micro-batch 1 the chunked loss and an 8-bit optimizer: no step time spent on host copies
        "--micro-batch 1 --accumulation 4 --loss chunked --optimizer adamw-8bit",
    ]
    (note,) = [n for n in result["notes"] if n.startswith("it fits with ")]
    # the fastest first: the 8-bit optimizer's step costs nothing on the host
    assert note.startswith("it fits with --micro-batch 1 --accumulation 4 --loss chunked --optimizer adamw-8bit (")
    for change in smaller:  # each is the estimate of the job so changed, its 4 sequences a step kept
        again = estimate_json(*GEMMA, "--micro-batch", "4", *change["flags"].split())
        assert again["capacity"]["fits"] is True
        assert again["memory"]["per_gpu"]["total"] == change["per_gpu_bytes"]
        training = again["training_speed"]
        assert training["micro_batch_size"] * training["accumulation_steps"] == 4
        assert training["tokens_per_second_per_gpu"] == change["tokens_per_second_per_gpu"]


def test_micro_batch_one_with_a_chunked_loss_alone_does_not_fit_once_the_batch_is_kept() -> None:
    """The user's --micro-batch 1 --loss chunked (22.16 GiB) runs 1 sequence a step; accumulating 4 keeps the bf16
    gradients (1,999,771,904 B) resident beside each micro-batch: 24.02 GiB, over the 22.79 GiB usable. So the advice
    takes one more setting, and says which."""
    alone = estimate_json(*GEMMA, "--micro-batch", "1", "--loss", "chunked")
    kept = estimate_json(*GEMMA, "--micro-batch", "1", "--accumulation", "4", "--loss", "chunked")
    assert alone["capacity"]["fits"] is True and kept["capacity"]["fits"] is False
    grown = kept["memory"]["per_gpu"]["total"] - alone["memory"]["per_gpu"]["total"]
    assert grown == 1_999_771_904  # the gradients of Gemma 3 1B's 999,885,952 parameters in bf16


def test_a_micro_batch_that_fits_alone_ends_the_search() -> None:
    """Llama 3.2 3B LoRA at 8,000 tokens on a 4090, micro-batch 8: micro-batch 1 fits alone at accumulation 8, the
    search ends there; the larger ones are named with the fewest settings they take, none needing more than a larger
    one's. (8,192 tokens until fix135 sized the 4090 at CUDA's 24,210 MiB: there micro-batch 1 at accumulation 8 takes
    24,332,032,000 B, over 95% of it.)"""
    args = ("meta-llama/Llama-3.2-3B", "--train", "lora", "--gpu", "rtx-4090-24gb", "--seq-len", "8000", "--micro-batch", "8")
    result = estimate_json(*args)
    assert result["capacity"]["fits"] is False
    smaller = [c["flags"] for c in result["capacity"]["fits_with"] if c["kind"] == "micro-batch"]
    assert smaller == [
        "--micro-batch 4 --accumulation 2 --loss chunked --activation-offload --zero 3 --offload-params",
        "--micro-batch 2 --accumulation 4 --loss chunked",
        "--micro-batch 1 --accumulation 8",
    ]
    # the smaller micro-batch note sizes micro-batch 1 at the accumulation it names, as the change does
    (micro_note,) = [n for n in result["notes"] if n.startswith("--micro-batch 1 fits (")]
    (alone,) = [c for c in result["capacity"]["fits_with"] if c["flags"] == "--micro-batch 1 --accumulation 8"]
    assert micro_note.startswith(f"--micro-batch 1 fits ({alone['per_gpu_bytes'] / 2**30:.2f} GiB) (--accumulation 8 keeps")


def test_the_smaller_micro_batch_note_counts_the_gradients_its_accumulation_keeps() -> None:
    """With --loss chunked the old note said "--micro-batch 1 fits (22.16 GiB) (--accumulation 4 keeps 4 sequences a
    step)": at accumulation 4 it holds 24.02 GiB and does not fit; the note now says no micro-batch alone fits, and the
    advice names micro-batch 1 with an 8-bit optimizer."""
    result = estimate_json(*GEMMA, "--micro-batch", "4", "--loss", "chunked")
    assert not [n for n in result["notes"] if n.startswith("--micro-batch 1 fits")]
    assert any(n.startswith("no micro-batch below 4 fits either") for n in result["notes"])
    (note,) = [n for n in result["notes"] if n.startswith("it fits with ")]
    assert note.startswith("it fits with --micro-batch 1 --accumulation 4 --optimizer adamw-8bit (")


def test_where_nothing_fits_even_at_one_sequence_it_still_says_a_larger_gpu() -> None:
    result = estimate_json(
        "meta-llama/Llama-3.1-405B-Instruct", "--train", "qlora", "--gpu", "rtx-4090-24gb", "--micro-batch", "4"
    )
    assert not [c for c in result["capacity"]["fits_with"] if c["fits"]]
    assert "makes it fit" in " ".join(result["notes"]) and "a larger GPU" in " ".join(result["notes"])
