"""newuser92: serving LoRA adapters over one base model (``inference.lora``): slots, host RAM, flags, refusals.

Hand-computed figures for Llama 3.1 8B (hidden 4,096, intermediate 14,336, 8 KV heads of 128, 32 layers; its
config.json in the catalog). Per layer, ``in + out`` of each linear: q 4,096 + 4,096 = 8,192, k and v 4,096 + 1,024 =
5,120, o 8,192, gate and up 4,096 + 14,336 = 18,432, down 18,432: 81,920 for all seven, 26,624 for q/k/v/o. vLLM
allocates A ``(max_loras, 1, r, in)`` and B ``(max_loras, 1, out, r)`` per module slice in bf16 (vllm/lora/layers/
base_linear.py ``create_lora_weights``), so one slot is ``32 x r x 81,920 x 2`` bytes: 80 MiB at rank 16, 320 MiB at 64.
Under TP2 the column-parallel modules keep ``in + out / 2`` and the row-parallel ones (o, down) ``in / 2 + out``:
q 6,144, k and v 4,608, o 6,144, gate, up and down 11,264 each: 55,296 a layer.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.api import render_file
from generator.catalog import find_model
from generator.sizing.architecture import Architecture, parse_architecture
from generator.sizing.lora_serving import lora_serving, shrink_buffer_bytes
from tests.helpers import ansible_reader, edited_copy, load_errors

HERE = Path(__file__).parent
WORKLOAD = HERE / "data" / "newuser92" / "lora-saas.yaml"
QKVO = ("q_proj", "k_proj", "v_proj", "o_proj")
MLP = ("gate_proj", "up_proj", "down_proj")
MIB = 2**20


@pytest.fixture(scope="module")
def llama8b() -> Architecture:
    return parse_architecture(find_model("meta-llama/Llama-3.1-8B-Instruct").config)


@pytest.mark.parametrize(
    ("engine", "targets", "rank", "tp", "slot_bytes"),
    [
        ("vllm", QKVO + MLP, 16, 1, 32 * 16 * 81_920 * 2),  # 83,886,080 = 80 MiB
        ("vllm", QKVO + MLP, 64, 1, 32 * 64 * 81_920 * 2),  # 335,544,320 = 320 MiB
        ("vllm", QKVO, 16, 1, 32 * 16 * 81_920 * 2),  # vLLM wraps every linear, whatever the adapters target
        ("vllm", QKVO + MLP, 16, 2, 32 * 16 * 55_296 * 2),  # 56,623,104: TP2 splits B of column, A of row modules
        ("vllm", QKVO + MLP, 64, 2, 32 * 64 * 55_296 * 2),  # 226,492,416
        ("sglang", QKVO, 16, 1, 32 * 16 * 26_624 * 2),  # 27,262,976: SGLang's pool holds the targets only
        ("sglang", ("all-linear",), 64, 1, 32 * 64 * 81_920 * 2),
    ],
)
def test_slot_bytes_are_the_engines_stacked_buffers(
    llama8b: Architecture, engine: str, targets: tuple[str, ...], rank: int, tp: int, slot_bytes: int
) -> None:
    sizes = lora_serving(llama8b, engine=engine, targets=targets, max_rank=rank, max_loras=4, cpu_loras=40, tp=tp)
    assert sizes.slot_bytes_per_gpu == slot_bytes
    assert sizes.gpu_bytes == 4 * slot_bytes
    assert sizes.slot_read_bytes_per_step == 4 * slot_bytes


def test_round_figures_at_rank_16_and_64(llama8b: Architecture) -> None:
    at16 = lora_serving(llama8b, engine="vllm", targets=QKVO + MLP, max_rank=16, max_loras=1, cpu_loras=1, tp=1)
    at64 = lora_serving(llama8b, engine="vllm", targets=QKVO + MLP, max_rank=64, max_loras=4, cpu_loras=1, tp=1)
    assert at16.gpu_bytes == 80 * MIB
    assert at64.gpu_bytes == 1_280 * MIB


def test_host_copies_and_kernel_work(llama8b: Architecture) -> None:
    # an adapter of q/k/v/o at rank 16: 32 x 16 x 26,624 x 2 = 27,262,976 bytes; 40 in each of 2 TP workers
    sizes = lora_serving(llama8b, engine="vllm", targets=QKVO, max_rank=16, max_loras=4, cpu_loras=40, tp=2)
    assert sizes.adapter_bytes == 27_262_976
    assert sizes.host_bytes == 40 * 27_262_976 * 2
    # the kernels run every wrapped module at the slot's rank: 2 x 64 x (32 x 81,920) FLOPs a token
    at64 = lora_serving(llama8b, engine="vllm", targets=QKVO, max_rank=64, max_loras=1, cpu_loras=1, tp=1)
    assert at64.flops_per_token == 2 * 64 * 32 * 81_920 == 335_544_320
    # vLLM's float32 (slices, tokens, r) shrink buffer for qkv_proj at 8,192 tokens, rank 64
    assert shrink_buffer_bytes(8_192, 64) == 3 * 8_192 * 64 * 4 == 6_291_456


def test_the_kv_pool_gives_up_exactly_the_slots(llama8b: Architecture) -> None:
    """The slots are allocated before the pool is sized: it shrinks by the slots and the shrink buffer, no more."""
    from generator import catalog
    from generator.planner.inference import replica_memory
    from generator.sizing.constants import Constants
    from generator.sizing.precision import WEIGHT_FORMATS
    from generator.sizing.weights import Parallelism
    from generator.workload.models import InferenceSpec, LoraAdapters

    gpu = catalog.gpus()["h100-sxm5-80gb"]
    plain = InferenceSpec(max_context_tokens=8_192, max_num_seqs=256, max_num_batched_tokens=8_192)
    adapted = plain._replace(lora=LoraAdapters(adapters=40, max_rank=64, max_loras=4))
    fmt, consts, par = WEIGHT_FORMATS["bf16"], Constants(), Parallelism()
    before, _ = replica_memory(llama8b, plain, fmt, gpu, par, consts)
    after, _ = replica_memory(llama8b, adapted, fmt, gpu, par, consts)
    added = 4 * 335_544_320 + 6_291_456  # four rank-64 slots and the shrink buffer at 8,192 tokens
    assert after.per_gpu.overhead - before.per_gpu.overhead == added
    assert after.overhead_parts["lora_slots"] == 4 * 335_544_320
    assert before.capacity is not None and after.capacity is not None
    assert before.capacity.kv_available_bytes - after.capacity.kv_available_bytes == added
    assert after.capacity.kv_cache_tokens < before.capacity.kv_cache_tokens


def test_the_persona_workload_renders_the_flags_and_says_the_memory() -> None:
    from tests.test_iac_outputs import lint

    files = render_file(str(WORKLOAD))
    assert lint(files) == []  # yamllint at 80 columns
    group_vars = next(text for path, text in files.items() if path.startswith("ansible/group_vars/adapters_"))
    entry = ansible_reader().load(group_vars)["specgen_deployments"][0]
    args = entry["engine"]["args"]
    at = args.index("--enable-lora")
    assert args[at : at + 7] == ["--enable-lora", "--max-loras", "4", "--max-lora-rank", "64", "--max-cpu-loras", "40"]
    assert entry["engine"]["lora"] == {"max_loras": 4, "max_lora_rank": 64, "max_cpu_loras": 40}
    spec = files["SPEC.md"]
    assert "hold 1,280 MiB a GPU (320.0 MiB a slot)" in spec
    assert "host RAM 12.5 GiB a replica for 40 adapters of 320.0 MiB each" in spec
    # 4 x 335,544,320 B of slots read a step against Llama 3.1 8B's ~16.06 GB of bf16 weights: 8.36%
    assert "read up to 1,280 MiB of adapter slots a GPU each decode step" in spec
    assert "(8.4% beside the 15.0 GiB of weights a GPU reads a step)" in spec


def test_sglang_flags_name_the_target_modules_and_the_host_cache(tmp_path: Path) -> None:
    path = edited_copy(
        WORKLOAD,
        tmp_path,
        ("      max_context_tokens: 8192\n", "      max_context_tokens: 8192\n      engine: sglang\n"),
        ("        max_loras: 4\n", "        max_loras: 4\n        max_cpu_loras: 10\n"),
        ("[q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj]", "[all-linear]"),
    )
    files = render_file(str(path))
    group_vars = next(text for p, text in files.items() if p.startswith("ansible/group_vars/adapters_"))
    engine = ansible_reader().load(group_vars)["specgen_deployments"][0]["engine"]
    at = engine["args"].index("--enable-lora")
    assert engine["args"][at : at + 9] == [
        "--enable-lora", "--max-loras-per-batch", "4", "--max-lora-rank", "64", "--max-loaded-loras", "10",
        "--lora-target-modules", "all",
    ]  # fmt: skip
    assert engine["lora"] == {
        "max_loras_per_batch": 4,
        "max_lora_rank": 64,
        "lora_target_modules": ["all"],
        "max_loaded_loras": 10,
    }
    # SGLang's pool: every linear at rank 64 (all-linear), 4 slots: 1,280 MiB; 10 adapters of 320 MiB in host RAM
    assert "hold 1,280 MiB a GPU (320.0 MiB a slot)" in files["SPEC.md"]
    assert "host RAM 3.1 GiB a replica for 10 adapters" in files["SPEC.md"]
    errors = load_errors(edited_copy(path, tmp_path, ("max_cpu_loras: 10", "max_cpu_loras: 2"), name="low.yaml"))
    assert len(errors) == 1 and "SGLang refuses to start (--max-loaded-loras must be at least --max-loras-per-batch)" in errors[0]


@pytest.mark.parametrize(
    ("old", "new", "where", "says"),
    [
        ("max_rank: 64", "max_rank: 48", ":15:19: deployments[0].inference.lora.max_rank:", "set 64"),
        ("max_loras: 4", "max_loras: 41", ":16:20: deployments[0].inference.lora.max_loras:", "more than adapters 40"),
        (
            "max_loras: 4",
            "max_loras: 4\n        max_cpu_loras: 2",
            ":17:24: deployments[0].inference.lora.max_cpu_loras:",
            "below max_loras 4",
        ),
        ("[q_proj, k_proj", "[q_porj, k_proj", ":17:25: deployments[0].inference.lora.target_modules:", "q_porj"),
        ("[q_proj, k_proj", "[lm_head, k_proj", ":17:25: deployments[0].inference.lora.target_modules:", "not sized"),
        ("adapters: 40", "adapters: 0", ":14:19: deployments[0].inference.lora.adapters:", "must be >= 1"),
        ("max_rank: 64", "rank: 64", ":15:9: deployments[0].inference.lora.rank:", "did you mean 'max_rank'"),
    ],
)
def test_bad_lora_fields_are_refused_at_the_field(tmp_path: Path, old: str, new: str, where: str, says: str) -> None:
    path = edited_copy(WORKLOAD, tmp_path, (old, new))
    errors = load_errors(path)
    assert any(where in e and says in e for e in errors), errors
    assert len(errors) <= 2, errors  # a misnamed field: also the required one it lacks


def test_lora_is_refused_for_a_pooling_task(tmp_path: Path) -> None:
    path = edited_copy(
        WORKLOAD, tmp_path, ("      max_context_tokens: 8192\n", "      max_context_tokens: 8192\n      task: embed\n")
    )
    errors = load_errors(path)
    assert any("deployments[0].inference.lora: lora: a pooling service" in e for e in errors), errors


def test_lora_is_refused_on_a_fixed_machine(tmp_path: Path) -> None:
    """hardware.fixed is sized as llama.cpp's server, which serves no adapters from slots."""
    lora = "      lora:\n        adapters: 2\n        max_rank: 16\n"
    path = edited_copy(
        HERE.parent / "examples" / "home-70b-offload.yaml",
        tmp_path,
        ("      max_context_tokens: 8192\n", "      max_context_tokens: 8192\n" + lora),
    )
    errors = load_errors(path)
    assert len(errors) == 1 and "deployments[0].inference.lora: lora: hardware.fixed" in errors[0], errors


def test_the_nodes_ram_holds_every_workers_adapter_cache(tmp_path: Path) -> None:
    """400 adapters of 320 MiB (rank 64, all seven modules) in each of a node's 4 TP1 workers: 500 GiB beside the OS.

    With 40 the node is built with its 256 GiB default (4 x 12.5 GiB + 16 GiB for the OS fit); with 400 the planner
    builds it with more (768 GiB: the DIMMs holding 516 GiB and the weights' page cache).
    """
    from generator.api import plan_file

    _, few = plan_file(str(WORKLOAD))
    path = edited_copy(WORKLOAD, tmp_path, ("adapters: 40", "adapters: 400"))
    _, many = plan_file(str(path))
    (pool,) = many.pools
    assert few.pools[0].node.ram_gib == 256
    assert pool.node.gpus == 4 and many.deployments[0].replicas == 4 and many.deployments[0].tp == 1
    assert many.deployments[0].details["lora"]["host_bytes_per_replica"] == 400 * 335_544_320
    assert pool.node.ram_gib is not None and pool.node.ram_gib * 2**30 >= 4 * 400 * 335_544_320 + 16 * 2**30
