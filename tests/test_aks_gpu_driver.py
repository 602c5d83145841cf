"""newuser83 item 5: who installs the NVIDIA driver on AKS, said where the GPU Operator's values turn its own off.

The rendered AKS node pools keep AKS's driver (``gpu_driver = "Install"``, the AKSNodeClass's ``gpu.mode: Driver``) and
the GPU Operator's values set ``driver.enabled`` and ``toolkit.enabled`` false: NVIDIA's AKS page documents the operator
on AKS's preinstalled driver and toolkit, while Microsoft's page on the operator creates the pools with
``--gpu-driver none``. The values said neither, so a reader following Microsoft's page could not tell which way the tree
takes; the header now says it, on Azure alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from generator.api import render_file
from generator.render.gpu_stack import AKS_DRIVER_LINES

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
VALUES = "cluster/gpu-operator/values.yaml"


@pytest.fixture(scope="module")
def azure() -> dict[str, str]:
    return render_file(str(EXAMPLES / "chat-70b-fp8-azure.yaml"))


def test_the_aks_values_say_aks_installs_the_driver_and_the_tree_agrees(azure: dict[str, str]) -> None:
    text = azure[VALUES]
    head, body = text.split("---\n", 1)
    assert "\n".join(AKS_DRIVER_LINES) in head
    assert "https://learn.microsoft.com/azure/aks/nvidia-gpu-operator" in head and "--gpu-driver none" in head
    values = YAML(typ="safe").load(body)
    assert values["driver"]["enabled"] is False and values["toolkit"]["enabled"] is False  # what the header says
    pools = json.loads(azure["terraform/specgen.auto.tfvars.json"])["aks_node_pools"]
    assert pools and {p["gpu_driver"] for p in pools.values()} == {"Install"}
    classes = [YAML(typ="safe").load(t.split("---\n", 1)[1]) for k, t in azure.items() if "/aksnodeclass-" in k]
    assert classes and {c["spec"]["gpu"]["mode"] for c in classes} == {"Driver"}


def test_other_clouds_values_do_not_say_it() -> None:
    aws = render_file(str(EXAMPLES / "chat-70b-fp8-aws.yaml"))
    assert VALUES in aws and AKS_DRIVER_LINES[0] not in aws[VALUES]
