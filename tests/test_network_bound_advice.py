"""A refusal every reason of which is the network between nodes leads its advice with the network (newuser76 item 9).

Llama 3.1 70B full on GKE a3 H100s with no ``kubernetes.gpu_networks``: every a3 layout runs over the 200 Gb/s primary
NIC and is refused "communication dominates"; the advice was "allow a GPU with more memory, LoRA/QLoRA, parameter
offload, or a shorter sequence_length", none of which moves a byte less, and not the eight GPU NICs the a3-mega has.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.api import plan_file
from generator.errors import SpecgenError

GKE_70B = """version: 1
name: gke70
deployments:
  - name: sft70
    model: meta-llama/Llama-3.1-70B-Instruct
    training:
      method: full
      framework: fsdp2
      sequence_length: 8192
      global_batch_size: 64
      dataset_tokens: 500000000
      epochs: 2
      deadline_hours: 72
      runs_per_month: 1
hardware:
  gpus: [h100-sxm5-80gb]
  provider: gcp
kubernetes:
  location: us-east4
  zone: us-east4-a
  gcp_project: my-proj
{nets}outputs: [kubernetes, terraform]
"""
#: newuser76's gke-70b-full-nets.yaml: the a3-mega's eight GPU NICs, each on a VPC network of its own.
NETS = "  gpu_networks:\n    gcp-a3-megagpu-8g:\n" + "".join(
    f"      - {{network: gpunic-{i}, subnetwork: gpunic-{i}}}\n" for i in range(1, 9)
)


def test_a_network_bound_refusal_names_the_gpu_nics_first_and_they_plan_it(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    # fix145: left to the search, FSDP's parameter offload plans it on one a3 node; the job here refuses the offload
    path.write_text(GKE_70B.format(nets="").replace("framework: fsdp2", "framework: fsdp2\n      offload_params: false"))
    with pytest.raises(SpecgenError) as err:
        plan_file(str(path))
    said = str(err.value)
    assert "communication dominates" in said
    advice = said[said.index("to unblock: ") :]
    assert advice.startswith(
        "to unblock: for the network between the nodes: attach the GPU NICs the reasons name (kubernetes.gpu_networks"
    )
    assert advice.index("kubernetes.gpu_networks") < advice.index("a GPU with more memory")
    # the field the advice names plans the job on the a3-mega's GPU NICs
    path.write_text(GKE_70B.format(nets=NETS))
    (job,) = plan_file(str(path))[1].deployments
    assert job.details["world_size"] == 32
