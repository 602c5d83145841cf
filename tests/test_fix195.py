"""fix195: fix194's left-outs.

1. ``estimate --train`` without ``--gradient-checkpointing`` takes the plan's level (fix194); where full was taken
   because none does not fit or runs slower, the training line still said ``not megatron's default, none: turn it on,
   or give --gradient-checkpointing none``: advice that would not work. It now says why none was passed over (by how
   many GiB it does not fit, or how much slower it runs), from ``training.checkpointing_passed_over``, and offers
   only turning the level on.
2. A fixed machine's checklist row and the estimate's ``upgrade`` rows gave the prefill rate without its bound: both
   say the prompt with :func:`generator.calculator.prefill_bound.prompt_prefill_text`, as the plan's reasons do.
3. The estimate on a fixed machine places the model once per machine (the upgrade rows reuse nothing, as there is no
   second placement of the same machine to reuse).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import pytest

from generator.api import render_file
from generator.calculator.prefill_bound import prompt_figures, prompt_prefill_text
from generator.sizing import offload
from tests.conftest import REPO
from tests.helpers import estimate_json, run_estimate

# 1. Llama-3.1-70B on 64 H100s under Megatron at 8k tokens: none needs 21.01 GiB more than an H100 keeps usable
CPT_70B = ("meta-llama/Llama-3.1-70B-Instruct", "--train", "full", "--framework", "megatron", "--gpu", "h100-sxm5-80gb",
           "--gpus", "64", "--tp", "8", "--zero", "1", "--seq-len", "8192")  # fmt: skip
# with activation offload, none fits but its copies make it slower than full (fix194's case, under Megatron)
OFFLOADED = ("meta-llama/Llama-3.1-8B-Instruct", "--train", "full", "--framework", "megatron", "--zero", "1", "--gpu",
             "h100-sxm5-80gb", "--gpus", "8", "--seq-len", "8192", "--micro-batch", "1", "--activation-offload")  # fmt: skip


def _training_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("  training "))


def test_full_over_a_none_that_does_not_fit_says_by_how_much() -> None:
    code, text = run_estimate(*CPT_70B)
    assert code == 0, text
    line = _training_line(text)
    assert "checkpointing full (not megatron's default, none, which needs 21.01 GiB more than this GPU's usable memory: " \
        "turn it on)" in line  # fmt: skip
    assert "give --gradient-checkpointing none" not in text  # it would not fit
    data = estimate_json(*CPT_70B)
    (entry,) = [e for e in data["training"]["checkpointing_passed_over"] if e["level"] == "none"]
    none = estimate_json(*CPT_70B, "--gradient-checkpointing", "none")  # exit 3: does not fit
    assert not none["capacity"]["fits"]
    assert entry == {
        "level": "none",
        "fits": False,
        "over_bytes": none["memory"]["per_gpu"]["total"] - none["capacity"]["usable_bytes"],
    }


def test_full_over_a_slower_none_says_how_much_slower() -> None:
    code, text = run_estimate(*OFFLOADED)
    assert code == 0, text
    data = estimate_json(*OFFLOADED)
    none = estimate_json(*OFFLOADED, "--gradient-checkpointing", "none")
    assert none["capacity"]["fits"]
    rate_none = none["training_speed"]["tokens_per_second_per_gpu"]
    rate_full = data["training_speed"]["tokens_per_second_per_gpu"]
    slower = 1 - rate_none / rate_full
    assert slower == pytest.approx(0.429, abs=0.001)
    assert f"none, which fits but runs {slower:.1%} slower ({rate_none:,.0f} tokens/s a GPU): turn it on)" in (
        _training_line(text)
    )
    assert "give --gradient-checkpointing none" not in text


def test_a_given_full_keeps_the_advice_to_give_none() -> None:
    """Given by the user, full is not the estimate's choice: none may fit, and the line still offers it."""
    code, text = run_estimate(*OFFLOADED, "--gradient-checkpointing", "full")
    assert code == 0, text
    assert "(not megatron's default, none: turn it on, or give --gradient-checkpointing none)" in _training_line(text)
    assert "checkpointing_passed_over" not in estimate_json(*OFFLOADED, "--gradient-checkpointing", "full")["training"]


# 2. The checklist and the upgrade rows say the prompt as the plan's reasons do.
def _deployment(name: str) -> dict[str, Any]:
    plan = json.loads(render_file(str(REPO / "examples" / f"{name}.yaml"))["spec.json"])["plan"]
    return plan["deployments"][0]  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", ["home-2x3090-moe", "home-quantize-instead"])
def test_the_checklist_says_the_prompt_as_the_reasons_do(name: str) -> None:
    dep = _deployment(name)
    details = dep["details"]
    row = next(r for r in details["checklist"] if r["item"] == "time to first token")
    said = prompt_prefill_text(details)
    assert row["predicted"].endswith(f" s for {said}")
    assert "-bound: " in said
    reason = next(r for r in dep["reasons"] if r.startswith("decode "))
    assert f"for {said}; cold start" in reason


BOX = ("Qwen/Qwen3-235B-A22B", "--precision", "q2_k", "--gpu", "rtx-3090-24gb", "--gpus", "2", "--cpu", "ryzen-9-5950x",
       "--ram-gib", "128", "--ddr-mt-per-s", "3200", "--context", "16384", "--input-tokens", "1500",
       "--output-tokens", "500")  # fmt: skip


def test_the_upgrade_rows_say_the_prefill_bound() -> None:
    data = estimate_json(*BOX)
    (gpu,) = [row for row in data["upgrades"] if row["change"].startswith("one more GPU")]
    assert gpu["prefill_bound"] == "pcie" and gpu["prefill_seconds"] == {"gpu-compute": 1.304, "pcie": 3.748}
    assert gpu["ttft_prompt_tokens"] == 1500 and gpu["ubatch_tokens"] == 512
    _, text = run_estimate(*BOX)
    line = next(line for line in text.splitlines() if "upgrade      one more GPU" in line)
    assert "TTFT 4.74 -> 5.10 s for 1,500 prompt tokens (prefill 296.90 tokens/s at -ub 512; pcie-bound: 3.75 s " \
        "copying the weights held in RAM to the GPUs over PCIe, 1.30 s GPU compute), at q2_k" in line  # fmt: skip
    assert f"for {prompt_prefill_text(gpu)}, at" in line
    # the machine's own figures, by the same function: the estimate's throughput keys
    now = data["throughput"]
    assert prompt_prefill_text(now) in text


def test_prompt_figures_are_the_estimates_keys() -> None:
    data = estimate_json(*BOX)
    now = data["throughput"]
    keys = ("ttft_prompt_tokens", "prefill_tokens_per_s", "ubatch_tokens", "prefill_bound", "prefill_seconds")
    row = next(r for r in data["checklist"] if r["item"] == "time to first token")
    assert row["predicted"].endswith(f" s for {prompt_prefill_text({k: now[k] for k in keys})}")
    assert re.search(r"\(prefill 323\.57 tokens/s at -ub 2048; pcie-bound: ", row["predicted"])
    assert callable(prompt_figures)


# 3. One placement per machine: the answer's, then each changed machine's.
def test_each_machine_is_placed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    placed: Counter[tuple[int, int]] = Counter()
    original = offload.plan_offload

    def counted(*args: Any, **kwargs: Any) -> Any:
        machine = args[5]
        placed[(machine.gpus, machine.ram_bytes)] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(offload, "plan_offload", counted)
    code, _ = run_estimate(*BOX, "--ram-gib", "64")  # the last --ram-gib given: twice it fits the CPU's slots
    assert code == 0
    assert placed == Counter({(2, 64 * 2**30): 1, (3, 64 * 2**30): 1, (2, 128 * 2**30): 1})
