"""fix185: small follow-ups from new-user trials (newuser101, newuser98).

- Item 1: llama.cpp (``hardware.fixed``, or ``specgen estimate`` of a GGUF precision / ``--ram-gib``) caches in f16,
  its default ``-ctk f16 -ctv f16`` (the rendered ``cache_type``), where the plan and the estimate said "KV cache
  bf16". vLLM / SGLang keep ``auto``: the weights' 16-bit float.
- Item 2: a ``buy: false`` refusal read "'chat' holds 1 x dell-xe8640"; it now says the owned server is taken, and by
  which deployment.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.planner import plan_workload
from generator.workload import load_workload
from generator.workload.models import InferenceDeployment
from tests.helpers import estimate_json

HOME = Path(__file__).parent.parent / "examples" / "home-70b-offload.yaml"

CLOUD = """\
version: 1
name: cloud
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: {precision}, max_context_tokens: 8192, requests_per_second: 1}}
hardware:
  provider: aws
"""


def test_a_fixed_machine_plans_llama_cpps_f16_cache() -> None:
    loaded = load_workload(str(HOME))
    (dep,) = plan_workload(loaded).deployments
    options = dep.details["runtime_settings"]["llama.cpp_options"]
    # the label is what the rendered llama-server runs: -ctk f16 -ctv f16 (fp16 here, llama.cpp's f16)
    assert options["cache_type"] == "f16"
    assert dep.kv_cache_precision == "fp16"


def test_a_given_kv_cache_precision_on_a_fixed_machine_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(
        HOME.read_text().replace("      precision: q4_k_m\n", "      precision: q4_k_m\n      kv_cache_precision: int8\n")
    )
    (dep,) = plan_workload(load_workload(str(path))).deployments
    assert (dep.kv_cache_precision, dep.details["runtime_settings"]["llama.cpp_options"]["cache_type"]) == ("int8", "q8_0")


@pytest.mark.parametrize(("precision", "kv"), [("bf16", "bf16"), ("fp16", "fp16"), ("fp8", "bf16")])
def test_vllm_keeps_auto_the_weights_float(tmp_path: Path, precision: str, kv: str) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(CLOUD.format(precision=precision))
    (dep,) = load_workload(str(path)).workload.deployments
    assert isinstance(dep, InferenceDeployment) and dep.inference.kv_cache_precision == kv


@pytest.mark.parametrize(
    "args",
    [
        ("--gpu", "rtx-4090-24gb"),  # a GGUF precision without --engine: llama.cpp's file on the GPU
        ("--gpu", "rtx-4090-24gb", "--ram-gib", "64"),  # llama.cpp offloading to RAM
    ],
)
def test_the_estimate_labels_llama_cpps_cache_fp16(args: tuple[str, ...]) -> None:
    data = estimate_json("meta-llama/Llama-3.1-8B-Instruct", "--precision", "q4_k_m", *args)
    assert data["precision"]["kv_cache"] == "fp16"


def test_the_estimate_under_vllm_keeps_bf16() -> None:
    data = estimate_json("meta-llama/Llama-3.1-8B-Instruct", "--precision", "bf16", "--gpu", "h100-sxm5-80gb")
    assert data["precision"]["kv_cache"] == "bf16"


# fix185 item 2's two services on one owned server: tests/test_inventory_buying.py's
# test_buy_false_names_the_deployment_holding_the_owned_servers (the missing servers, the owned server taken and by
# which deployment, and no "holds 1 x").


THREE_3090 = """\
version: 1
name: box
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {{precision: q4_k_m, max_context_tokens: 8192, requests_per_second: 0.1}}
hardware:
  provider: baremetal
  wall_circuit: {{voltage_v: 120, breaker_a: 15}}
  fixed: {{gpu: rtx-3090-24gb, gpu_count: 3, ram_gib: 128{cpu}}}
"""


@pytest.mark.parametrize(
    ("cpu", "words"),
    [
        # before: 1,252 W without the CPU, under the circuit's 1,368 W: no warning, the i9-14900K assumed all the same
        (
            "",
            "with a CPU like Intel Core i9-14900K (Raptor Lake Refresh, desktop LGA1700) as its memory and cores are "
            "assumed (no CPU given; 1,252 W without one), draws up to 1,548 W at the wall",
        ),
        (", cpu: ryzen-9-7950x", "the machine draws up to 1,451 W at the wall"),  # newuser101's ~1.45 kW, as before
    ],
)
def test_three_rtx_3090s_on_a_120_v_15_a_circuit_are_warned(tmp_path: Path, cpu: str, words: str) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(THREE_3090.format(cpu=cpu))
    found = [f for f in plan_workload(load_workload(str(path))).findings if f.code == "wall-circuit"]
    assert len(found) == 1 and found[0].path == "hardware.fixed"
    assert words in found[0].message and "120 V / 15 A circuit hardware.wall_circuit gives" in found[0].message


def test_a_service_the_fleet_moved_says_so_and_its_own_choice() -> None:
    """Item 3: rag-embed's services share 2-GPU dell-r760 servers (fleet-one-gpu-kind); embed's line read "chosen by
    cost: 3 x TP1 on 2 x dell-r760", its own cost having chosen nothing there, and neither line said its own best."""
    plan = plan_workload(load_workload(str(Path(__file__).parent.parent / "examples" / "rag-embed.yaml")))
    assert any(f.code == "fleet-one-gpu-kind" for f in plan.findings)
    lines = {d.name: [r for r in d.reasons if r.startswith("chosen")] for d in plan.deployments}
    assert lines["embed"][0].startswith(
        "chosen for the fleet, on the servers the services share (on its own: 4 x TP1 on 2 x dell-r760 (2 x l40s-48gb), "
        "$2,670/month): 3 x TP1 on 2 x dell-r760"
    )
    assert lines["chat"][0].startswith(
        "chosen for the fleet, not as a pool of its own (on its own: 4 x TP1 on 1 x dell-xe7740 (4 x l40s-48gb), "
        "$2,099/month): 3 x TP1 on 2 x dell-r760"
    )
    assert all(not r.startswith("chosen by cost") for r in lines["embed"] + lines["chat"])
    assert (
        lines["embed"][-1]
        == lines["chat"][-1]
        == (
            "chosen for the fleet: the services together on 2-GPU dell-r760 servers with l40s-48gb cost less (fleet-one-gpu-kind)"
        )
    )


def test_a_service_whose_own_choice_the_fleet_keeps_still_says_chosen_by_cost() -> None:
    from generator.planner import _fleet_lead

    line = "chosen by cost: 2 x TP4 on 1 x dgx-h100 (8 x h100-sxm5-80gb), $9,000/month, 8 GPUs bought (0 idle)"
    alone = "2 x TP4 on 1 x dgx-h100 (8 x h100-sxm5-80gb), $9,000/month, 8 GPUs bought (0 idle)"
    assert _fleet_lead(line, "chosen by cost: ", alone) == line
    assert _fleet_lead(line, "chosen by cost: ", None) == line
