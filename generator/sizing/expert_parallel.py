"""The rules of expert parallelism (EP) shared by the training sizing and the estimate.

Training carves its expert-parallel groups out of the data-parallel ranks (Megatron-Core
``expert_model_parallel_size``, DeepSpeed-MoE ``ep_size``); each expert keeps its tensor-parallel split
(Megatron-Core's ``expert_tensor_parallel_size`` defaults to ``tensor_model_parallel_size``).
"""

from __future__ import annotations

from generator.errors import InputError
from generator.sizing.architecture import Architecture
from generator.sizing.weights import Parallelism


def training_weight_layout(par: Parallelism, expert_parallel: int) -> Parallelism:
    """A training GPU's model-parallel weight shard: each layer split by TP, the routed experts by TP x EP."""
    return par if expert_parallel == 1 else Parallelism(par.tp, par.pp, par.tp * expert_parallel)


def check_expert_parallel_model(arch: Architecture, expert_parallel: int, model: str = "this model", advice: str = "") -> None:
    """EP above 1 spreads routed experts: a dense model has none, so it is refused (``advice`` ends the message)."""
    if expert_parallel > 1 and not arch.routed_experts[0]:
        raise InputError(
            f"expert parallelism (EP {expert_parallel}) spreads the routed experts of a mixture-of-experts model over GPUs; "
            f"{model} is a dense model (no routed experts){advice}"
        )


def check_ep_divides_data_parallel(expert_parallel: int, data_parallel: int, ep_name: str = "EP", dp_origin: str = "") -> None:
    """Training's EP groups are carved out of the data-parallel ranks: EP must divide the data-parallel size."""
    if data_parallel % expert_parallel:
        raise InputError(
            f"{ep_name} {expert_parallel} must divide the data-parallel size {data_parallel}{dp_origin}: "
            "training carves the expert-parallel groups out of the data-parallel ranks"
        )
