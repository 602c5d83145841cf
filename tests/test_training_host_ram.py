"""Host RAM of a training node from its mechanism (weights read once, CPU offload), EFA on p6-b200, the RAM advice."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import catalog
from generator.calculator.model_source import resolve_model
from generator.planner import plan_workload
from generator.planner.blocked import NO_LAYOUT, Blocked
from generator.planner.options import Hardware
from generator.planner.training import training_shapes
from generator.planner.training_candidates import _training_needs
from generator.planner.unblock import unblock_hint
from generator.render.karpenter_aws import efa_cards
from generator.sizing.constants import Constants
from generator.workload import load_workload
from generator.workload.models import TrainingSpec

CONSTS = Constants()
LLAMA_70B = "meta-llama/Llama-3.1-70B-Instruct"
PARAMS_70B = 70_553_706_496  # models.json / config: every tensor of Llama 3.1 70B

WORKLOAD = """\
version: 1
name: ft70
deployments:
  - name: tune
    model: meta-llama/Llama-3.1-70B-Instruct
    training:
      method: full
      sequence_length: 4096
      dataset_tokens: 2000000000
      deadline_hours: 24
hardware:
  gpus: [b200-sxm-180gb]
  provider: {provider}
"""


@pytest.mark.parametrize(
    ("offload", "world", "host_bytes"),
    [
        # no offload: the bf16 weights read once through host memory, 2 bytes x 70,553,706,496 parameters
        pytest.param(False, 7, PARAMS_70B * 2, id="no-offload-weights-read-once"),
        # ZeRO-3 optimizer offload: the GPU keeps the bf16 weights and one reduce bucket of gradients, so one B200
        # holds it; fp32 master + 2 moments (12 B) + fp32 gradients (4 B) per parameter on its host:
        # 70,553,706,496 x 16 = 1,128,859,303,936 bytes
        pytest.param(True, 1, PARAMS_70B * 16, id="optimizer-offload-states-on-the-node"),
    ],
)
def test_training_host_ram_is_the_weights_read_once_or_the_offloaded_states(offload: bool, world: int, host_bytes: int) -> None:
    model = resolve_model(LLAMA_70B)
    hw = Hardware(catalog.platforms()["aws-p6-b200-48xlarge"], catalog.gpus()["b200-sxm-180gb"])
    spec = TrainingSpec(
        method="full", sequence_length=4096, zero_stage=3, offload_optimizer=offload, gradient_checkpointing="full"
    )
    shapes, _ = training_shapes(model, spec, hw, CONSTS)
    shape = next(s for s in shapes if s.par.tp == 1 and s.par.pp == 1)
    assert shape.world == world
    needs = _training_needs(model, shape, None, (8, 1), CONSTS)
    assert needs.host_ram_bytes == host_bytes
    assert needs.model_file_bytes == PARAMS_70B * 2


def test_full_fine_tune_of_70b_fits_the_fixed_2_tib_of_a_p6_b200_with_efa(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(provider="aws"))
    plan = plan_workload(load_workload(str(path)))
    pool = plan.pools[0]
    assert (pool.node.platform_id, pool.node.ram_gib) == ("aws-p6-b200-48xlarge", 2048)
    assert not [f for f in plan.findings if f.code.startswith("ram-")]
    fabric = [n for n in pool.node.nics if n.role == "fabric"]
    assert [(n.nic_id, n.count, n.port_gbps) for n in fabric] == [("aws-efa-400g", 8, 400)]
    assert efa_cards(pool) == 8  # one EFA interface per network card; the EKS node group gets enable_efa_support


def test_a_dgx_b200_keeps_its_published_2_tib_for_full_fine_tuning(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(provider="baremetal"))
    pool = plan_workload(load_workload(str(path))).pools[0]
    # the DGX B200 user guide: 2 TB, 4 TB optional; the workload needs 16 GiB OS + 131.4 GiB weights (+ page cache)
    assert (pool.node.platform_id, pool.node.ram_gib) == ("dgx-b200", 2048)


RAM_SHORT = Blocked(
    "b200-sxm-180gb", "aws-p6-b200-48xlarge", "ram-short", "aws-p6-b200-48xlarge has 2048 GiB RAM; 2881 GiB needed"
)
GPU_SHORT = Blocked("h100-sxm5-80gb", "aws-p5-48xlarge", NO_LAYOUT, "does not fit")


@pytest.mark.parametrize(
    ("blocked", "starts", "has_gpu_advice"),
    [
        pytest.param([RAM_SHORT], "to unblock: host RAM holds the checkpoint as it is loaded", False, id="only-ram"),
        pytest.param([GPU_SHORT, RAM_SHORT], "to unblock: allow a GPU with more memory", True, id="ram-and-gpu"),
        pytest.param([GPU_SHORT], "to unblock: allow a GPU with more memory", True, id="only-gpu"),
    ],
)
def test_training_advice_names_what_would_help_when_host_ram_is_short(
    tmp_path: Path, blocked: list[Blocked], starts: str, has_gpu_advice: bool
) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD.format(provider="aws"))
    loaded = load_workload(str(path))
    hint = unblock_hint(loaded.workload.deployments[0], loaded.models["tune"], blocked)
    assert hint.startswith(starts)
    assert ("allow a GPU with more memory" in hint) is has_gpu_advice
    ram_advice = "offload_optimizer, offload_params or activation_offload off" in hint and "fewer GPUs per node" in hint
    assert ram_advice is (RAM_SHORT in blocked)


@pytest.mark.parametrize(
    ("platform", "nic", "cards", "gbps"),
    [
        # AWS accelerated computing instance network specifications: total bandwidth, EFA, network cards
        pytest.param("aws-p4d-24xlarge", "aws-efa-100g", 4, 400, id="p4d"),
        pytest.param("aws-p5-48xlarge", "aws-efa-100g", 32, 3200, id="p5"),
        pytest.param("aws-p5en-48xlarge", "aws-efa-200g", 16, 3200, id="p5en"),
        pytest.param("aws-p6-b200-48xlarge", "aws-efa-400g", 8, 3200, id="p6-b200"),
        pytest.param("aws-g6e-48xlarge", "aws-efa-100g", 4, 400, id="g6e-48xlarge"),
        pytest.param("aws-g6e-12xlarge", "aws-efa-100g", 1, 100, id="g6e-12xlarge"),
        pytest.param("aws-g5-48xlarge", "aws-efa-100g", 1, 100, id="g5-48xlarge"),
    ],
)
def test_aws_efa_instances_list_one_efa_card_per_network_card(platform: str, nic: str, cards: int, gbps: int) -> None:
    spec = catalog.platforms()[platform]
    assert (spec.fabric_nic_id, spec.fabric_nic_count, spec.network_gbps_total) == (nic, cards, gbps)
    assert catalog.nics()[nic].port_gbps * cards == gbps
