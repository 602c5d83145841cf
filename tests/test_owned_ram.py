"""Owned catalog servers state their real RAM; an assumed build under a job that needs more is a warning (newuser43 item 2).

An owned AM5 desktop was planned with whatever RAM its work needed (64 GiB under a QLoRA job, 192 GiB under a full
fine-tune offloading 113 GiB of optimizer states), so a job that needs 129.5 GiB of host RAM "fitted" a box that
most likely has 64-128 GiB. ``hardware.inventory[].ram_gib`` now states the servers' RAM (it replaces the build, and a
job needing more is refused with the reason); unstated, the plan warns where the work needs more than the platform's
default build, naming the figure and the field.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.errors import InfeasibleError, InputError, MultipleInputError
from generator.planner import plan_workload
from generator.workload import load_workload

WORKSTATION = """\
version: 1
name: ws-full
deployments:
  - name: q7-full
    model: Qwen/Qwen2.5-7B-Instruct
    training:
      method: full
      framework: deepspeed
      zero_stage: 3
      offload_optimizer: true
      sequence_length: 2048
      dataset_tokens: 5000000
      epochs: 1
hardware:
  gpus: [rtx-4090-24gb]
  provider: baremetal
  buy: false
  inventory:
    - platform: am5-desktop-tower
      gpu: rtx-4090-24gb
      count: 1
{extra}      hosts:
        - name: ws-01
outputs: [ansible]
"""

ASSUMED = (
    "pool q7_full_rtx_4090_24gb: its work needs 129.5 GiB of host RAM a server (16 GiB kept for the OS and its "
    "processes and 113.48 GiB the deployments hold in host memory), more than the 64 GiB of am5-desktop-tower's "
    "default build; the 192 GiB planned is the build specgen would buy, not read from the servers you own: state their "
    "RAM under hardware.inventory[0].ram_gib, and the plan refuses the work where it does not fit"
)


def _write(tmp_path: Path, extra: str = "") -> str:
    path = tmp_path / "w.yaml"
    path.write_text(WORKSTATION.format(extra=extra))
    return str(path)


def test_unstated_ram_under_a_job_that_needs_more_than_the_default_build_is_a_warning(tmp_path: Path) -> None:
    plan = plan_workload(load_workload(_write(tmp_path)))
    (pool,) = plan.pools
    assert pool.node.ram_gib == 192  # the build specgen would buy, as before
    (warning,) = [f for f in plan.findings if f.code == "owned-ram-assumed"]
    assert (warning.level, warning.message, warning.path) == ("warning", ASSUMED, "hardware.inventory[0].ram_gib")
    assert pool.build_assumed == ("gpus", "cpu", "ram", "nvme", "psu", "frontend")


NEEDED = (
    "130 GiB needed: 16 GiB kept for the OS and its processes and 113.48 GiB the setup offloads to the CPU (optimizer "
    "states, parameters or saved activations of 1 GPU(s)), more than loading the checkpoint holds"
)


def test_stated_ram_too_small_for_the_job_is_refused_at_the_ram_saying_why(tmp_path: Path) -> None:
    """At the group's ram_gib, named with its index (it stood at the model and named hardware.inventory[].ram_gib)."""
    with pytest.raises(InfeasibleError) as refused:
        plan_workload(load_workload(_write(tmp_path, "      ram_gib: 64\n")))
    text = str(refused.value)
    assert refused.value.location is not None
    assert refused.value.location.path == "hardware.inventory[0].ram_gib"
    assert (refused.value.location.line, refused.value.location.column) == (22, 16)
    assert text.endswith(
        "/w.yaml:22:16: hardware.inventory[0].ram_gib: deployment 'q7-full' (Qwen/Qwen2.5-7B-Instruct) has no feasible "
        "plan: rtx-4090-24gb on am5-desktop-tower: am5-desktop-tower has 64 GiB RAM (as owned: "
        f"hardware.inventory[0].ram_gib); {NEEDED}; to unblock: list more owned servers under hardware.inventory, let the "
        "plan buy (drop hardware.buy: false), a lighter job (LoRA / QLoRA), offload_optimizer off where the GPUs hold "
        "those states, or servers with more RAM than hardware.inventory[0].ram_gib states; or another "
        "training.framework, whose load of the checkpoint and offload fit the same servers' RAM: torchtune (59 GiB of "
        "RAM a node at the least)"
    )  # no offload_params: true offered: more offloaded to the host is no way out of too little host RAM
    # fix173: torchtune's bf16 AdamW states, offloaded by its own optimizer offload, fit the 64 GiB stated


def test_each_kind_names_its_own_group_and_the_error_stands_at_the_first_kinds(tmp_path: Path) -> None:
    lga = "    - platform: lga1700-desktop-tower\n      gpu: rtx-4090-24gb\n      count: 1\n      ram_gib: 64\n"
    text = WORKSTATION.format(extra="      ram_gib: 64\n").replace("  inventory:\n", f"  inventory:\n{lga}")
    (tmp_path / "w.yaml").write_text(text)
    with pytest.raises(InfeasibleError) as refused:
        plan_workload(load_workload(str(tmp_path / "w.yaml")))
    said = str(refused.value)
    # the kinds in platform order: am5 (hardware.inventory[1]) first, where the error stands
    assert "/w.yaml:26:16: hardware.inventory[1].ram_gib: deployment 'q7-full'" in said
    assert (
        "has no feasible plan: rtx-4090-24gb on am5-desktop-tower: am5-desktop-tower has 64 GiB RAM (as owned: "
        f"hardware.inventory[1].ram_gib); {NEEDED}; rtx-4090-24gb on lga1700-desktop-tower: lga1700-desktop-tower has "
        f"64 GiB RAM (as owned: hardware.inventory[0].ram_gib); {NEEDED}; to unblock:"
    ) in said


def test_stated_ram_that_holds_the_job_is_the_build_and_not_assumed(tmp_path: Path) -> None:
    plan = plan_workload(load_workload(_write(tmp_path, "      ram_gib: 160\n")))
    (pool,) = plan.pools
    assert pool.node.ram_gib == 160  # as stated, not rounded to the 192 GiB build
    assert not [f for f in plan.findings if f.code in ("owned-ram-assumed", "ram-short")]
    # spec.json's build_assumed and the group vars' specgen_build_assumed drop the RAM
    assert pool.build_assumed == ("gpus", "cpu", "nvme", "psu", "frontend")
    (info,) = [f for f in plan.findings if f.code == "owned-build-assumed"]
    assert "GiB RAM" not in info.message


def test_a_job_within_the_default_build_is_not_warned(tmp_path: Path) -> None:
    text = WORKSTATION.format(extra="").replace("      method: full\n", "      method: qlora\n")
    text = text.replace("      framework: deepspeed\n      zero_stage: 3\n      offload_optimizer: true\n", "")
    (tmp_path / "w.yaml").write_text(text)
    plan = plan_workload(load_workload(str(tmp_path / "w.yaml")))
    assert not [f for f in plan.findings if f.code == "owned-ram-assumed"]


CUSTOM_TOO = """\
    - custom: {name: box, gpu: rtx-4090-24gb, gpus_per_server: 1, ram_gib: 64}
      count: 1
      ram_gib: 64
"""


@pytest.mark.parametrize(
    ("extra", "tail", "expected"),
    [
        ("      ram_gib: 0\n", "", "w.yaml:22:16: hardware.inventory[0].ram_gib: 0 is out of range: must be >= 1"),
        ("      ram_gib: 96.5\n", "", "w.yaml:22:16: hardware.inventory[0].ram_gib:"),
        (
            "      ram_gib: 256\n",
            "",
            "w.yaml:22:16: hardware.inventory[0].ram_gib: 256 GiB RAM: am5-desktop-tower servers take at most 192 GiB "
            "(the catalog's most; describe the server under custom: where yours has more)",
        ),
        (
            "",
            CUSTOM_TOO,
            "w.yaml:26:16: hardware.inventory[1].ram_gib: a custom server states its RAM under 'custom.ram_gib'",
        ),
        (
            "      ram_gib: 64\n",
            "    - platform: am5-desktop-tower\n      gpu: rtx-4090-24gb\n      count: 1\n      ram_gib: 128\n",
            "w.yaml:28:16: hardware.inventory[1].ram_gib: hardware.inventory[0] owns am5-desktop-tower servers with "
            "rtx-4090-24gb too and states their RAM otherwise: the plan builds one server kind one way, so give both "
            "groups the same ram_gib (or describe one under custom:)",
        ),
    ],
    ids=["zero", "fraction", "above-platform-most", "on-custom", "two-figures-one-kind"],
)
def test_a_bad_ram_statement_is_a_located_error(tmp_path: Path, extra: str, tail: str, expected: str) -> None:
    text = WORKSTATION.format(extra=extra).replace("outputs: [ansible]\n", f"{tail}outputs: [ansible]\n")
    (tmp_path / "w.yaml").write_text(text)
    with pytest.raises((InputError, MultipleInputError)) as refused:
        load_workload(str(tmp_path / "w.yaml"))
    assert expected in str(refused.value)
