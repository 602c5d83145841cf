"""fix197: three left-outs of review100, fix195 and newuser111.

- ``planned_checkpointing`` sized full twice where full was the answer (the fastest level that fits, no level fitting,
  or the framework's own level full): every ``estimate --train --gpu`` of a torchtune job cost two estimates.
- A ``Retry-After`` (or RateLimit ``t=``) of 400 digits read "asks to wait inf s"; huggingface_hub's own
  ``float(int)`` of a RateLimit reset that long raised OverflowError at once, which now and then won the race against
  the wait's own answer (a 429 message, exit 75), through the real client against a local server.
- A Megatron-LM job's host RAM counted the whole bf16 checkpoint built by one process (131.42 GiB for a 70B):
  Megatron loads its own distributed checkpoint, each rank its shards a tensor at a time.
"""

from __future__ import annotations

import math
import time
from typing import Any

import pytest

import generator.calculator.estimate as estimate_module
from generator.calculator import hub_wait
from generator.calculator.estimate import EstimateRequest, estimate
from generator.calculator.model_source import resolve_model
from generator.sizing.checkpoint_load import size_checkpoint_load, training_host_ram
from generator.sizing.constants import Constants
from generator.sizing.training import TrainingSetup
from generator.units import GIB
from tests.helpers import estimate_json
from tests.test_hostile95_hub import _rate_limit_handler, _server

LLAMA_8B = "meta-llama/Llama-3.1-8B-Instruct"
LLAMA_70B = "meta-llama/Llama-3.1-70B-Instruct"


def _sized_at_full(monkeypatch: pytest.MonkeyPatch, req: EstimateRequest) -> int:
    """How often ``estimate(req)`` sizes ``req``'s own job at full (given a level or not)."""
    same = req._replace(checkpointing="full", checkpointing_given=True)
    calls: list[EstimateRequest] = []
    sized = estimate_module._estimate

    def counted(one: EstimateRequest, *, advise: bool) -> dict[str, Any]:
        calls.append(one)
        return sized(one, advise=advise)

    monkeypatch.setattr(estimate_module, "_estimate", counted)
    estimate(req)
    return sum(one._replace(checkpointing_given=True) == same for one in calls)


@pytest.mark.parametrize(
    ("model", "framework", "gpu", "gpus"),
    [
        pytest.param(LLAMA_8B, "torchtune", "a100-sxm4-80gb", 1, id="torchtune-own-level-fits"),
        pytest.param(LLAMA_70B, "torchtune", "h100-sxm5-80gb", 8, id="torchtune-own-level-does-not-fit"),
        pytest.param(LLAMA_8B, None, "rtx-4090-24gb", 1, id="no-level-fits"),
    ],
)
def test_full_is_sized_once_where_it_is_the_answer(
    monkeypatch: pytest.MonkeyPatch, model: str, framework: str | None, gpu: str, gpus: int
) -> None:
    req = EstimateRequest(model=model, train="full", framework=framework, gpu=gpu, gpus=gpus, checkpointing_given=False)
    assert _sized_at_full(monkeypatch, req) == 1


def test_the_answer_at_full_is_the_one_sized_in_the_search() -> None:
    """The full answer keeps its advice where nothing fits, and the levels passed over (fix195)."""
    data = estimate_json(LLAMA_8B, "--train", "full", "--gpu", "rtx-4090-24gb")
    assert data["training"]["checkpointing"] == "full" and data["capacity"]["fits"] is False
    assert data["capacity"]["fits_with"]  # advised as before
    assert [p["level"] for p in data["training"]["checkpointing_passed_over"]] == ["none", "selective"]


@pytest.mark.parametrize(
    ("seconds", "said"),
    [(0.0, "0 s"), (3600.0, "3,600 s"), (86_400.0, "86,400 s"), (86_401.0, "more than a day"), (math.inf, "more than a day")],
)
def test_an_asked_wait_is_said_in_seconds_up_to_a_day(seconds: float, said: str) -> None:
    assert hub_wait.wait_text(seconds) == said


@pytest.mark.parametrize(
    ("header", "value"),
    [("Retry-After", "9" * 400), ("RateLimit", '"api";r=0;t=' + "9" * 400), ("Retry-After", "99999999")],
)
def test_a_very_long_asked_wait_reads_more_than_a_day(header: str, value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the real client against a local server; three times, as the client's OverflowError raced the wait."""
    import huggingface_hub
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)  # tests/conftest.py sets it
    for _ in range(3):
        with _server(_rate_limit_handler(header, value)) as url:
            began = time.monotonic()
            with pytest.raises(hub_wait.StalledError) as caught:
                hub_wait.bounded(
                    lambda: huggingface_hub.get_hf_file_metadata(f"{url}/fz/m/resolve/main/config.json", retry_on_errors=True), 8
                )
            assert time.monotonic() - began < 6  # at once, not after the 8 s wait
        assert caught.value.why == (
            "answered HTTP 429 (too many requests) once and asks to wait more than a day before the next request"
        )


#: Llama-3.1-70B's largest tensor: the 128,256 x 8,192 embedding (and LM head), bf16.
LLAMA_70B_EMBEDDING = 128_256 * 8_192 * 2


def test_megatron_loads_its_shards_a_tensor_at_a_time() -> None:
    arch = resolve_model(LLAMA_70B).architecture
    setup = TrainingSetup(method="full", zero_stage=1, data_parallel=4, framework="megatron")
    load = size_checkpoint_load(arch, setup, Constants())
    assert load.held_bytes == LLAMA_70B_EMBEDDING and load.per_process
    assert load.checkpoint_bytes > 130 * GIB  # the whole checkpoint, as the model files' cache sizes it
    held, text = training_host_ram(load, 0, 8)
    assert held == 8 * LLAMA_70B_EMBEDDING
    assert text.startswith("1.96 GiB a GPU's process holds loading its shards of the distributed (torch_dist)")


@pytest.mark.parametrize("framework", ["torchtune", "fsdp2", None])
def test_a_hugging_face_checkpoint_is_still_built_whole_once(framework: str | None) -> None:
    """torchtune, a plain FSDP2 loop and ZeRO-3 under the Trainer read the Hugging Face checkpoint whole, on one process."""
    arch = resolve_model(LLAMA_70B).architecture
    setup = TrainingSetup(method="full", zero_stage=3, data_parallel=8, framework=framework)
    load = size_checkpoint_load(arch, setup, Constants())
    assert load.held_bytes == load.checkpoint_bytes and not load.per_process


def test_the_megatron_estimate_says_the_sharded_load() -> None:
    data = estimate_json(
        LLAMA_70B, "--train", "full", "--framework", "megatron-lm", "--gpu", "h100-sxm5-80gb", "--gpus", "64", "--tp", "8",
        "--pp", "2",
    )  # fmt: skip
    assert data["training"]["host_ram_bytes_per_node"] == 8 * LLAMA_70B_EMBEDDING  # was 131.42 GiB, the whole model
    assert "loading its shards of the distributed (torch_dist) checkpoint" in data["training"]["host_ram_text"]
