"""newuser85: the model file a machine's NVMe must hold is the file's bytes, not the tiers' sum.

llama.cpp loads a tied embedding twice (the input in RAM, a copy as the output layer on the GPU), so the GPU and RAM
tiers together hold more than the file: Gemma 3 27B at q5_k_m on an RTX 4090 said "no free NVMe is given for the 19.81
GiB model file" for its 18.73 GiB file (the 1.08 GiB embedding counted twice), and 19 GiB of NVMe "did not fit" it.
"""

from __future__ import annotations

from tests.helpers import estimate_json, run_estimate

GEMMA = (
    "google/gemma-3-27b-it", "--gpu", "rtx-4090-24gb", "--precision", "q5_k_m", "--context", "32768", "--ram-gib", "64",
    "--cpu", "ryzen-9-7950x",
)  # fmt: skip


def test_the_file_said_is_the_models_weights() -> None:
    whole_gib = estimate_json(*GEMMA)["weights"]["bytes"] / 2**30  # the whole model's weights, 18.73 GiB
    code, text = run_estimate(*GEMMA)
    assert code == 0
    assert f"no free NVMe is given for the {whole_gib:.2f} GiB model file" in text
    assert "18.73 GiB model file" in text and "19.81 GiB model file" not in text


def test_an_nvme_that_holds_the_file_is_not_short() -> None:
    code, text = run_estimate(*GEMMA, "--nvme-gib", "19")
    assert code == 0
    assert "does not fit the" not in text
