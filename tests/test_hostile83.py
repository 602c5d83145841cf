"""hostile83: hostile input against the features of session 43 (ASO agent pools, diff --base of spec.json, exit codes).

Each case is a finding of the hostile run (``/work/wt/bugs/hostile83.md``), held here so that it stays fixed.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any, cast

import pytest

from generator.api import plan_as_deployed, render_file
from generator.errors import InputError
from generator.fleet_diff import plan_from_spec
from tests.helpers import specgen_in_process as specgen

AKS = """\
version: 1
name: aks-chat
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {max_context_tokens: 8192, avg_input_tokens: 1000, avg_output_tokens: 200, requests_per_second: 4}
hardware:
  provider: azure
  gpus: [a100-sxm4-80gb]
kubernetes:
  location: eastus2
CLUSTER
outputs: OUTPUTS
"""


def _aks(tmp_path: Path, cluster: str | None, outputs: str = "[terraform, kubernetes]") -> Path:
    path = tmp_path / "w.yaml"
    line = f"  cluster_name: {cluster}" if cluster is not None else ""
    path.write_text(AKS.replace("CLUSTER", line).replace("OUTPUTS", outputs))
    return path


# An AKS cluster may be named with upper-case letters and '_' (Azure's rule), a Kubernetes object may not (RFC 1123):
# the ASO agent pools' owner.name names the ManagedCluster *object*, so such a name can own nothing.
@pytest.mark.parametrize(
    ("cluster", "outputs", "warned"),
    [
        ("my-aks", "[terraform, kubernetes]", False),
        ("a", "[kubernetes]", False),
        ("prod1", "[kubernetes]", False),
        ("My_AKS", "[terraform, kubernetes]", True),
        ("My_AKS", "[kubernetes]", True),
        ("A-B", "[kubernetes]", True),
        ("a_b", "[kubernetes]", True),
        ("My_AKS", "[terraform]", False),  # no ASO objects rendered: Terraform takes the AKS name
        (None, "[kubernetes]", False),  # the workload's name, a Kubernetes name by its schema
    ],
)
def test_aso_owner_that_no_object_can_be_named_is_warned(tmp_path: Path, cluster: str | None, outputs: str, warned: bool) -> None:
    path = _aks(tmp_path, cluster, outputs)
    _loaded, plan = plan_as_deployed(str(path))
    found = [f for f in plan.findings if f.code == "aso-owner-name"]
    assert bool(found) is warned
    if warned:
        (finding,) = found
        assert finding.level == "warning" and finding.path == "kubernetes.cluster_name"
        assert f"{cluster!r}" in finding.message and "ManagedCluster object" in finding.message
        files = render_file(str(path))
        owners = {
            m.group(1)
            for name, text in files.items()
            if name.startswith("kubernetes/azure-service-operator/managedclustersagentpool-")
            for m in [re.search(r"owner:\n    name: (\S+)", text)]
            if m
        }
        assert owners == {cluster}  # the warning names what the objects hold


def _spec(tmp_path: Path) -> dict[str, Any]:
    """The spec.json of the AKS workload above (rendered here, so it is this specgen's)."""
    files = render_file(str(_aks(tmp_path, "my-aks")))
    return cast(dict[str, Any], json.loads(files["spec.json"]))


# What diff reads of a pool's capacity, floor and root disk is refused at its field unless it is as the planner writes it:
# a capacity_type of 1 was said as a move "from on-demand to 1 capacity", a root disk of "x" or a floor above the pool's
# nodes counted as a change of the fleet (diff --exit-code 6) with nothing said.
@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("capacity_type", 1, "'plan.pools[0].capacity_type' must be spot or on-demand, got 1"),
        ("capacity_type", "Spot", "'plan.pools[0].capacity_type' must be spot or on-demand, got 'Spot'"),
        ("capacity_type", ["spot"], "'plan.pools[0].capacity_type' must be spot or on-demand"),
        ("root_disk_size", "x<b>", "'plan.pools[0].root_disk_size' must be a number from 0 to 10^12, got 'x<b>'"),
        ("root_disk_size", -128, "'plan.pools[0].root_disk_size' must be a number from 0 to 10^12, got -128"),
        ("min_nodes", "x", "'plan.pools[0].min_nodes' must be a number from 0 to 10^12, got 'x'"),
        ("min_nodes", True, "'plan.pools[0].min_nodes' must be a number from 0 to 10^12, got True"),
        ("min_nodes", 5, "'plan.pools[0].min_nodes' is 5, more than its 1 nodes"),
    ],
)
def test_spec_json_pool_capacity_fields_refused_at_the_field(tmp_path: Path, key: str, value: Any, said: str) -> None:
    spec = _spec(tmp_path)
    spec["plan"]["pools"][0][key] = value
    with pytest.raises(InputError) as caught:
        plan_from_spec(json.dumps(spec), "new.json")
    assert str(caught.value) == f"new.json: not a specgen spec.json: {said}" or said in str(caught.value)
    assert caught.value.exit_code == 1


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("capacity_type", "spot"),
        ("capacity_type", "on-demand"),
        ("capacity_type", None),
        ("min_nodes", 0),
        ("min_nodes", 1),
        ("root_disk_size", 256),
        ("root_disk_size", None),
    ],
)
def test_spec_json_pool_capacity_fields_as_written_are_read(tmp_path: Path, key: str, value: Any) -> None:
    spec = _spec(tmp_path)
    spec["plan"]["pools"][0][key] = value
    assert plan_from_spec(json.dumps(spec), "new.json")["pools"][0].get(key) == value


def _git(cwd: Path, *args: str) -> None:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "PATH": "/usr/bin:/bin", "HOME": str(cwd)}  # fmt: skip
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


# A committed file (workload or spec.json) replaced by a symbolic link that reaches no file read as the file deleted:
# its whole fleet "removed", diff --base --exit-code 6. Now it is refused, exit 1, naming the link and where it leads.
@pytest.mark.parametrize(
    ("committed", "target", "said"),
    [
        ("infra/spec.json", "nope.json", "a symbolic link to 'nope.json' that leads to no file"),
        ("infra/spec.json", "spec.json", "a symbolic link to 'spec.json' that leads into a loop of links"),
        ("w.yaml", "gone.yaml", "a symbolic link to 'gone.yaml' that leads to no file"),
        ("w.yaml", "w.yaml", "a symbolic link to 'w.yaml' that leads into a loop of links"),
    ],
)
def test_diff_base_refuses_a_broken_link_instead_of_reading_the_file_as_deleted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, committed: str, target: str, said: str
) -> None:
    monkeypatch.chdir(tmp_path)
    _aks(tmp_path, "my-aks")
    code, _, err = specgen(capsys, "render", "w.yaml", "-o", "infra")
    assert code == 0, err
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "base")
    (tmp_path / committed).unlink()
    (tmp_path / committed).symlink_to(target)
    for extra in ((), ("--exit-code",)):
        code, out, err = specgen(capsys, "diff", "--base", "HEAD", committed, *extra)
        assert code == 1 and out == ""
        advice = "give the file it stands for, or remove the link where the change deletes the file (git rm)"
        assert err == f"specgen: error: {committed}: {said}: {advice}\n"
    (tmp_path / committed).unlink()  # deleted for real, it is the fleet removed, as before
    code, _, err = specgen(capsys, "diff", "--base", "HEAD", committed, "--exit-code")
    assert code == 6, err
