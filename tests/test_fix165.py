"""fix165: LoRA slots' "no feasible plan" hint with the figure that fits, SGLang's default slots capped at the adapters,
GGUF float32 metadata read as the decimal written, and "1 GPU" (not "1 GPUs") in plan texts.

The LoRA workload is newuser92's lora-saas (Llama 3.1 8B, vLLM) pinned to TP1 PP1 on an L4 (19.8 GiB usable) at
8,192 tokens: over every linear module a slot is 32 x r x (sum of in + out widths) x 2 B, 2.5 GiB at rank 512 and
0.31 GiB at rank 64, beside 15 GiB of weights.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest

from generator.api import plan_file
from generator.calculator.gguf_header import float32_decimal
from generator.calculator.report import plan_text
from generator.errors import InfeasibleError
from generator.render.lora_args import lora_engine_vars
from generator.sizing.lora_serving import cpu_loras_problem, served_max_loras
from tests.helpers import edited_copy, estimate_json

WORKLOAD = Path(__file__).parent / "data" / "newuser92" / "lora-saas.yaml"
ON_L4_TP1 = (
    ("h100-sxm5-80gb", "l4-24gb"),
    (
        "    model: meta-llama/Llama-3.1-8B-Instruct\n",
        "    model: meta-llama/Llama-3.1-8B-Instruct\n    parallelism: {tp: 1, pp: 1}\n",
    ),
    ("max_rank: 64\n        max_loras: 4", "max_rank: RANK\n        max_loras: SLOTS\n        max_cpu_loras: 64"),
    ("adapters: 40", "adapters: 400"),
    ("target_modules: [q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj]", "target_modules: [all-linear]"),
)


def _l4(tmp_path: Path, rank: int, slots: int, name: str = "w.yaml") -> Path:
    path = edited_copy(WORKLOAD, tmp_path, *ON_L4_TP1, name=name)
    path.write_text(path.read_text().replace("RANK", str(rank)).replace("SLOTS", str(slots)))
    return path


def _refusal(path: Path) -> str:
    with pytest.raises(InfeasibleError) as caught:
        plan_file(str(path))
    return str(caught.value)


# --- item 1: the LoRA slots' hint ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rank", "slots", "said"),
    [
        # one slot at rank 64 fits: the most slots that fit at that rank (5 x 0.31 GiB beside the weights and one
        # sequence; 6 do not: the next test)
        (64, 64, "inference.lora (max_loras 64 at max_rank 64): max_loras 5 on l4-24gb, "),
        # one slot at rank 512 (2.5 GiB) is too many: the rank that fits at 64 slots, and at one slot
        (512, 64, "inference.lora (max_loras 64 at max_rank 512): max_rank 1 or max_loras 1 at max_rank 320 on l4-24gb"),
    ],
)
def test_the_refusal_names_the_lora_setting_that_fits(tmp_path: Path, rank: int, slots: int, said: str) -> None:
    text = _refusal(_l4(tmp_path, rank, slots))
    assert f"to unblock: {said}" in text
    assert "; else allow a GPU with more memory" in text  # the generic hints stay, after it


def test_the_max_loras_said_fits_and_one_more_does_not(tmp_path: Path) -> None:
    _, plan = plan_file(str(_l4(tmp_path, 64, 5)))
    assert plan.deployments[0].details["lora"]["max_loras"] == 5
    text = _refusal(_l4(tmp_path, 64, 6, name="six.yaml"))
    assert "max_loras 5 on l4-24gb" in text


def test_no_lora_hint_where_the_slots_are_not_what_fills_the_gpu(tmp_path: Path) -> None:
    """A context no L4 holds at any slots: the hint is the generic one alone."""
    path = _l4(tmp_path, 8, 1)
    path.write_text(path.read_text().replace("max_context_tokens: 8192", "max_context_tokens: 131072"))
    text = _refusal(path)
    assert "inference.lora (" not in text
    assert "to unblock: allow a GPU with more memory" in text


# --- item 2: the default slots -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("max_loras", "engine", "adapters", "served"),
    [
        (None, "sglang", 2, 2),  # SGLang's 8 slots capped at the 2 adapters (was 8, refused when said as 8)
        (None, "sglang", 40, 8),  # its default where the adapters are more
        (None, "vllm", 5, 1),  # vLLM's default of 1
        (3, "sglang", 40, 3),  # as given
    ],
)
def test_the_default_slots_are_capped_at_the_adapters(max_loras: int | None, engine: str, adapters: int, served: int) -> None:
    assert served_max_loras(max_loras, engine, adapters) == served


def test_sglang_with_two_adapters_is_sized_and_rendered_with_two_slots(tmp_path: Path) -> None:
    path = edited_copy(
        WORKLOAD, tmp_path, ("adapters: 40", "adapters: 2"), ("        max_loras: 4\n", ""),
        ("max_context_tokens: 8192", "max_context_tokens: 8192\n      engine: sglang"),
        ("target_modules: [q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj]", "target_modules: [q_proj, v_proj]"),
    )  # fmt: skip
    _, plan = plan_file(str(path))
    lora: dict[str, Any] = plan.deployments[0].details["lora"]
    assert lora["max_loras"] == 2
    assert lora["slots_bytes_per_gpu"] == 2 * lora["slot_bytes_per_gpu"]  # the memory was sized for 2
    _, args = lora_engine_vars(lora, "sglang")
    assert args[args.index("--max-loras-per-batch") + 1] == "2"  # and the command says 2
    # a host cache of both adapters is no longer refused as below the default's 8
    assert cpu_loras_problem("sglang", 2, None, 2) is None


# --- item 3: float32 metadata --------------------------------------------------------------------------------------


def _f32(value: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", value))[0])


@pytest.mark.parametrize(
    ("written", "read"),
    [
        (1.2, 1.2),  # was 1.2000000476837158
        (0.1, 0.1),
        (1e-5, 1e-5),
        (4.0, 4.0),
        (500000.0, 500000.0),
        (1 / 3, 0.33333334),
        (3.4028234663852886e38, 3.4028234663852886e38),  # the largest float32 stays (3.4028235e38 is past it)
    ],
)
def test_float32_is_read_as_its_shortest_decimal(written: float, read: float) -> None:
    got = float32_decimal(_f32(written))
    assert got == read
    assert _f32(got) == _f32(written)  # round-trips to the same float32


def test_a_gguf_rope_scale_of_1_2_renders_as_written(tmp_path: Path) -> None:
    from tests.test_fix163 import _gguf

    path = _gguf(tmp_path / "m.gguf", {"type": "linear", "factor": 1.2})
    command = estimate_json(str(path), "--context", "4800", "--ram-gib", "64")["cpu_only"]["command"]
    assert "--rope-scaling linear --rope-scale 1.2 " in command


# --- item 4: plural GPU counts -------------------------------------------------------------------------------------


def test_one_gpu_is_said_one_gpu(tmp_path: Path) -> None:
    path = edited_copy(WORKLOAD, tmp_path, ("hardware:\n", "hardware:\n  provider: aws\n  platforms: [aws-p5-4xlarge]\n"))
    _, plan = plan_file(str(path))
    text = plan_text(plan)
    assert text.startswith("lora-saas: 1 GPU on 1 node(s)")
    assert "1 GPUs" not in text
