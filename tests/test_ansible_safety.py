"""Ansible never evaluates Jinja that a workload or a file name carries (issue 13).

A model path such as ``./{{ lookup('pipe','touch PWNED') }}.json`` is a file a pull request may add.
The rendered group_vars hold it as data; a real ``ansible-playbook`` run that templates every
variable must print it verbatim and run nothing. A control run over the same files with the
``!unsafe`` tags removed shows the payload does execute there, so the test proves the marking works.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator import catalog
from tests.helpers import run_specgen

PAYLOADS = [
    pytest.param("./{{ lookup('pipe','touch PWNED') }}.json", id="lookup-pipe"),
    pytest.param("./{% for x in [1] %}{{ lookup('pipe','touch PWNED') }}{% endfor %}.json", id="for-block"),
    pytest.param("./{# c #}{{ lookup('pipe', 'touch PWNED') | default('') }}.json", id="comment-and-filter"),
]

PLAYBOOK = """\
- hosts: gpu_nodes
  gather_facts: false
  connection: local
  tasks:
    - name: template every variable the roles would read
      ansible.builtin.set_fact:
        seen: "{{ specgen_deployments | map(attribute='model') | list }}"
        pool: "{{ specgen_pool }}"
        labels: "{{ specgen_kubernetes.node_labels }}"
    - name: show them
      ansible.builtin.debug:
        msg: "MODEL={{ seen | first }}"
"""

WORKLOAD = """\
version: 1
name: demo
deployments:
  - name: chat
    model: "{model}"
    inference:
      max_context_tokens: 8192
hardware:
  gpus: [l40s-48gb]
"""


def _ansible_playbook() -> str:
    found = shutil.which("ansible-playbook") or str(Path(sys.executable).with_name("ansible-playbook"))
    if not os.path.exists(found):
        pytest.fail("ansible-playbook is not installed (it is in the test extra)")
    return found


def _play(tmp_path: Path, ansible_dir: Path) -> subprocess.CompletedProcess[str]:
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "ANSIBLE_LOCAL_TEMP": str(tmp_path / ".ansible-tmp"),
        "ANSIBLE_HOME": str(tmp_path / ".ansible"),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_PYTHON_INTERPRETER": sys.executable,
        "ANSIBLE_INVENTORY_UNPARSED_WARNING": "false",
    }
    # the placeholder hosts, copied to the user's own hosts.yml as the example file says
    shutil.copyfile(ansible_dir / "hosts.yml.example", ansible_dir / "hosts.yml")
    return subprocess.run(
        [_ansible_playbook(), "-i", str(ansible_dir / "inventory.yml"), "-i", str(ansible_dir / "hosts.yml"), "play.yml"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def _render(tmp_path: Path, model_ref: str) -> Path:
    config = dict(catalog.find_model("meta-llama/Llama-3.1-8B-Instruct").config)
    (tmp_path / model_ref.removeprefix("./")).write_text(json.dumps(config))
    (tmp_path / "workload.yaml").write_text(WORKLOAD.format(model=model_ref.replace('"', '\\"')))
    result = run_specgen("render", "workload.yaml", "-o", "out", "--target", "ansible", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return tmp_path / "out" / "ansible"


@pytest.mark.parametrize("model_ref", PAYLOADS)
def test_no_jinja_from_a_workload_is_evaluated(tmp_path: Path, model_ref: str) -> None:
    ansible_dir = _render(tmp_path, model_ref)
    group_vars = next((ansible_dir / "group_vars").iterdir()).read_text()
    assert "!unsafe" in group_vars
    result = _play(tmp_path, ansible_dir)
    assert result.returncode == 0, result.stdout + result.stderr
    assert not (tmp_path / "PWNED").exists(), "a command in the model path ran"
    assert f"MODEL={model_ref}" in result.stdout


@pytest.mark.parametrize("model_ref", PAYLOADS[:1])
def test_control_without_the_marking_the_payload_runs(tmp_path: Path, model_ref: str) -> None:
    """The oracle is sound: the same vars without ``!unsafe`` do execute the payload."""
    ansible_dir = _render(tmp_path, model_ref)
    for path in (ansible_dir / "group_vars").iterdir():
        path.write_text(path.read_text().replace("!unsafe ", ""))
    _play(tmp_path, ansible_dir)
    assert (tmp_path / "PWNED").exists()
