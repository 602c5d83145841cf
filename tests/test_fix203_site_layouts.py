"""fix203: a busier site (``sites[].requests_per_second_scale``) gets its own layout in the rendered files.

Before, a store at 3 x the rates was planned on its own (chat TP2 on one box, the embedder twice on the other) but
its Ansible host vars, Terraform and Kubernetes files were the first store's (chat and embed on one box), said only
by a ``per-site-layouts`` warning, and its own findings were dropped.
"""

from __future__ import annotations

import json
from pathlib import Path

from generator.api import render_file
from generator.cli import _select
from tests.test_fix201_site_rates import BUSY
from tests.test_newuser113_sites import _write
from tests.test_oracles import Rendered, ansible_group_problems, ansible_hostvar_problems, ansible_inventory, write_tree

#: Three stores, store-b at 3 x the rates; every output rendered.
THREE = (
    BUSY.replace("count: 4", "count: 6")
    .replace(
        "        - {name: b-2, ip_address: 10.2.0.2}\n",
        "        - {name: b-2, ip_address: 10.2.0.2}\n"
        "        - {name: c-1, ip_address: 10.3.0.1}\n        - {name: c-2, ip_address: 10.3.0.2}\n",
    )
    .replace("outputs: [ansible]", "  - {name: store-c, hosts: [c-1, c-2]}\noutputs: [terraform, ansible, kubernetes]")
)

#: The pool groups: store-a and store-c run chat and embed on one box each; store-b chat (TP2) on b-1, embed x2 on b-2.
POOL_GROUPS = """\
all:
  children:
    chat_embed_l4_24gb:
      hosts:
        a-1: null
        c-1: null
    chat_l4_24gb_x3:
      hosts:
        b-1: null
    embed_l4_24gb_x3:
      hosts:
        b-2: null
    free_nodes:
      hosts:
        a-2: null
        c-2: null
    gpu_nodes:
      children:
        chat_embed_l4_24gb: {}
        chat_l4_24gb_x3: {}
        embed_l4_24gb_x3: {}
"""

#: store-b's host vars: its own profile's GPUs and replicas (were a-1's: chat GPU 0, embed GPU 1, b-2 nothing).
STORE_B = """\
        site_store_b:
          hosts:
            b-1:
              ansible_host: !unsafe '10.2.0.1'
              specgen_replicas:
                - deployment: !unsafe 'chat'
                  gpus:
                    - 0
                    - 1
                  replica: 1
            b-2:
              ansible_host: !unsafe '10.2.0.2'
              specgen_replicas:
                - deployment: !unsafe 'embed'
                  gpus:
                    - 0
                  replica: 1
                - deployment: !unsafe 'embed'
                  gpus:
                    - 1
                  replica: 2
"""


def _render(tmp_path: Path) -> dict[str, str]:
    tmp_path.mkdir(exist_ok=True)
    return render_file(str(_write(tmp_path, text=THREE)))


def test_a_busier_site_has_its_own_pool_groups_host_vars_and_group_vars(tmp_path: Path) -> None:
    files = _render(tmp_path)
    inventory = files["ansible/inventory.yml"]
    assert POOL_GROUPS in inventory and STORE_B in inventory
    assert "c-1:\n              ansible_host: !unsafe '10.3.0.1'\n              specgen_replicas:\n" in inventory
    chat = files["ansible/group_vars/chat_l4_24gb_x3.yml"]
    assert "    tensor_parallel: 2\n" in chat and "    requests_per_s: 2.4\n" in chat  # not 2.4000000000000004
    assert "specgen_pool: !unsafe 'chat_l4_24gb_x3'" in chat
    assert "    replicas: 2\n" in files["ansible/group_vars/embed_l4_24gb_x3.yml"]
    assert "embed" in files["ansible/group_vars/chat_embed_l4_24gb.yml"]  # the x1 stores' pool, as before


def test_a_busier_site_has_its_own_terraform_and_kubernetes_files(tmp_path: Path) -> None:
    files = _render(tmp_path)
    base = json.loads(files["terraform/specgen.auto.tfvars.json"])["gpu_pools"]
    busy = json.loads(files["site-profiles/x3/terraform/specgen.auto.tfvars.json"])["gpu_pools"]
    assert list(base) == ["chat_embed_l4_24gb"] and base["chat_embed_l4_24gb"]["requests_per_s"] == {"chat": 0.8, "embed": 2.0}
    assert sorted(busy) == ["chat_l4_24gb_x3", "embed_l4_24gb_x3"]
    assert busy["chat_l4_24gb_x3"]["requests_per_s"] == {"chat": 2.4}
    # store-a / store-c: one host, its own cluster (no join file); store-b: two boxes, a kubeadm join file each
    assert not [p for p in files if p.startswith(("kubeadm/", "cluster/"))]
    joins = sorted(p for p in files if p.startswith("site-profiles/x3/kubeadm/"))
    assert joins == ["site-profiles/x3/kubeadm/join-chat_l4_24gb_x3.yaml", "site-profiles/x3/kubeadm/join-embed_l4_24gb_x3.yaml"]
    assert "site-profiles/x3/cluster/gpu-operator/values.yaml" in files
    # --target terraform writes the busier sites' Terraform files too, and no Kubernetes file of theirs
    chosen = _select(files, ("terraform",))
    assert "site-profiles/x3/terraform/variables.tf" in chosen and "terraform/variables.tf" in chosen
    assert not [p for p in chosen if "kubeadm" in p or "cluster/" in p]


def test_the_busier_sites_findings_are_carried_and_no_layout_warning(tmp_path: Path) -> None:
    plan = json.loads(_render(tmp_path)["spec.json"])["plan"]
    codes = [(f["level"], f["code"]) for f in plan["findings"]]
    assert ("warning", "per-site-layouts") not in codes
    (said,) = [f for f in plan["findings"] if f["code"] == "per-site-layouts"]
    assert said["level"] == "info" and said["path"] == "sites[1].requests_per_second_scale"
    assert "chat 1 x TP2 on chat_l4_24gb_x3, embed 2 x TP1 on embed_l4_24gb_x3" in said["message"]
    assert "site-profiles/x3/" in said["message"]
    carried = [f for f in plan["findings"] if f["message"].startswith("at site(s) store-b (x3 the rates): ")]
    assert {f["code"] for f in carried} >= {"node-down-capacity"}
    assert any("both of its replicas run on one node" in f["message"] for f in carried)  # store-b's embed x2 on b-2
    # a finding the x1 plan says in the same words is said once, unprefixed
    messages = [f["message"] for f in plan["findings"]]
    assert len(messages) == len(set(messages))
    assert "inventory-free" in {f["code"] for f in plan["findings"] if f not in carried}


def test_renders_are_byte_identical(tmp_path: Path) -> None:
    assert _render(tmp_path / "a") == _render(tmp_path / "b")


def test_ansible_core_reads_each_sites_own_vars(tmp_path: Path) -> None:
    files = _render(tmp_path)
    out = Rendered(stem="three", files=files, spec=json.loads(files["spec.json"]))
    inventory = ansible_inventory(write_tree(files, tmp_path / "tree", "ansible/").parent)
    assert not ansible_group_problems(out, inventory)
    assert not ansible_hostvar_problems(out, inventory)
    hostvars = inventory.data["_meta"]["hostvars"]
    assert hostvars["b-1"]["specgen_pool"] == "chat_l4_24gb_x3" and hostvars["a-1"]["specgen_pool"] == "chat_embed_l4_24gb"
    assert [d["tensor_parallel"] for d in hostvars["b-1"]["specgen_deployments"]] == [2]
    # the oracle notices a busier site's hosts in the first site's group
    moved = inventory.data | {"chat_embed_l4_24gb": {"hosts": ["a-1", "b-1", "c-1"]}}
    assert ansible_group_problems(out, type(inventory)(data=moved, stderr=""))
