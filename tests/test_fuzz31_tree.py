"""fuzz31 items 1, 3, 6, 11, 12 and 17: render trees mixed or stranded, and diff inputs taken loosely."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import specgen_in_process
from tests.test_cli_render import snapshot

#: One service on one RTX 5090 server (bare metal, no Kubernetes output when rendered alone): the report's base.yaml.
BASE = """\
version: 1
name: base
deployments:
  - name: chat
    model: meta-llama/Llama-3.1-8B-Instruct
    inference: {precision: bf16, max_context_tokens: 8192, requests_per_second: 5}
"""
OTHER = BASE.replace("name: base", "name: other").replace("- name: chat", "- name: talk")


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``tmp_path`` as the working directory, holding base.yaml and other.yaml."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "base.yaml").write_text(BASE)
    (tmp_path / "other.yaml").write_text(OTHER)
    return tmp_path


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code, out, err = specgen_in_process(capsys, *args)
    assert "Traceback" not in err
    return code, out, err


# --- item 1: a tree without spec.json took another workload's partial render --------------------------------------


@pytest.mark.parametrize("made", ["targets-without-spec", "spec-deleted"])
def test_target_refuses_another_plans_tree_without_spec_json(here: Path, capsys: pytest.CaptureFixture[str], made: str) -> None:
    """Terraform of workload 'other' beside Ansible (and SPEC.md) of 'base', exit 0."""
    if made == "targets-without-spec":
        assert _run(capsys, "render", "base.yaml", "-o", "tg", "--target", "terraform", "--target", "ansible")[0] == 0
    else:
        assert _run(capsys, "render", "base.yaml", "-o", "tg")[0] == 0
        (here / "tg" / "spec.json").unlink()
    before = snapshot(here / "tg")
    code, _, err = _run(capsys, "render", "other.yaml", "-o", "tg", "--target", "terraform")
    assert code == 1
    assert "tg: --target terraform: the tree holds no spec.json to name the plan it is of, and " in err
    assert "ansible/inventory.yml" in err and "not what this plan renders: another plan's (or edited)" in err
    assert err.strip().endswith("nothing was written")
    assert snapshot(here / "tg") == before
    # the same plan's outputs are what it renders: its own partial render goes on
    code, out, err = _run(capsys, "render", "base.yaml", "-o", "tg", "--target", "terraform")
    assert code == 0 and "wrote 3 files to tg" in out, err


def test_target_refuses_another_plans_workload_tree_without_spec_json(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same in a tree of several workloads: the tree of 'other' lost its spec.json, and a new 'other' came."""
    assert _run(capsys, "render", "base.yaml", "other.yaml", "-o", "m")[0] == 0
    (here / "m" / "other" / "spec.json").unlink()
    (here / "other.yaml").write_text(OTHER.replace("requests_per_second: 5", "requests_per_second: 40"))
    before = snapshot(here / "m")
    code, _, err = _run(capsys, "render", "base.yaml", "other.yaml", "-o", "m", "--target", "terraform")
    assert code == 1 and "the tree holds no other/spec.json to name the plan it is of" in err
    assert snapshot(here / "m") == before


# --- item 3: --prune from a tree of workloads to a flat one stranded the Terraform state --------------------------


def test_a_moved_tree_holding_terraform_state_is_refused(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "render", "base.yaml", "other.yaml", "-o", "m3")[0] == 0
    state = here / "m3" / "base" / "terraform" / "terraform.tfstate"
    state.write_text("STATE\n")
    (state.parent / ".terraform").mkdir()
    (state.parent / ".terraform" / "providers").write_text("x\n")
    before = snapshot(here / "m3")
    code, _, err = _run(capsys, "render", "base.yaml", "-o", "m3", "--prune")
    assert code == 1
    assert (
        "m3: files specgen did not write would stay behind in the tree of workload 'base', which moves from m3/base to "
        "m3 (one file renders a flat tree): m3/base/terraform/.terraform/, m3/base/terraform/terraform.tfstate; move "
        "m3/base/terraform/.terraform/ to m3/terraform/.terraform/, m3/base/terraform/terraform.tfstate to "
        "m3/terraform/terraform.tfstate first, or render every workload file of the tree together; nothing was written"
    ) in err
    assert "removed" not in err
    assert snapshot(here / "m3") == before
    # moved as told, the render goes on and says the tree moved (not "removed"); the state is beside its module
    shutil.rmtree(state.parent / ".terraform")
    state.rename(here / "m3" / "terraform" / "terraform.tfstate")
    code, _, err = _run(capsys, "render", "base.yaml", "-o", "m3", "--prune")
    assert code == 0, err
    assert "specgen: moved the tree of workload 'base' from m3/base to m3" in err
    assert "m3/terraform/terraform.tfstate stays beside the Terraform specgen writes there, now the flat module of " in err
    assert "specgen: removed the tree of workload 'other' (m3/other)" in err
    assert (here / "m3" / "terraform" / "terraform.tfstate").read_text() == "STATE\n"
    assert (here / "m3" / "terraform" / "variables.tf").is_file() and not (here / "m3" / "base").exists()


def test_a_removed_tree_holding_terraform_state_is_refused(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (here / "third.yaml").write_text(BASE.replace("name: base", "name: third").replace("- name: chat", "- name: coder"))
    assert _run(capsys, "render", "base.yaml", "other.yaml", "-o", "m")[0] == 0
    (here / "m" / "other" / "terraform" / "terraform.tfstate").write_text("{}\n")
    before = snapshot(here / "m")
    code, _, err = _run(capsys, "render", "base.yaml", "third.yaml", "-o", "m", "--prune")
    assert code == 1
    assert (
        "m: --prune removes the tree of workload 'other' (m/other), where files specgen did not write would stay: "
        "m/other/terraform/terraform.tfstate; if one is Terraform state, destroy the fleet it holds with it first"
    ) in err
    assert snapshot(here / "m") == before


def test_the_shared_layer_going_flat(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file of the user's in cluster/, which the flat tree has not, is refused; the root module's state in
    terraform/, which stays the Terraform root, is told its addresses change (module.<workload>)."""
    assert _run(capsys, "render", "base.yaml", "other.yaml", "-o", "m")[0] == 0
    (here / "m" / "cluster" / "mine.yaml").write_text("x: 1\n")
    (here / "m" / "terraform" / "terraform.tfstate").write_text("{}\n")
    before = snapshot(here / "m")
    code, _, err = _run(capsys, "render", "base.yaml", "-o", "m", "--prune")
    assert code == 1 and snapshot(here / "m") == before
    assert (
        "files specgen did not write would stay behind in the shared layer of the tree's workloads, which the flat tree "
        "of workload 'base' does not have: m/cluster/mine.yaml; move them out of the tree first"
    ) in err
    (here / "m" / "cluster" / "mine.yaml").unlink()
    code, _, err = _run(capsys, "render", "base.yaml", "-o", "m", "--prune")
    assert code == 0 and (here / "m" / "terraform" / "terraform.tfstate").read_text() == "{}\n"
    assert (
        "specgen: m/terraform/terraform.tfstate stays beside the Terraform specgen writes there, now the flat module of "
        "workload 'base': a state applied there in the old layout holds other addresses (with or without "
        "module.<workload>); terraform state mv them (or destroy what is no longer rendered) before applying"
    ) in err


def test_a_flat_tree_moving_into_a_tree_of_workloads_is_refused_with_the_users_files(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The Ansible inventory the user made beside the flat tree's would stay where no Ansible is rendered."""
    assert _run(capsys, "render", "base.yaml", "-o", "f")[0] == 0
    (here / "f" / "ansible" / "hosts.yml").write_text("all: {}\n")
    (here / "f" / "terraform" / "terraform.tfstate").write_text("{}\n")
    (here / "f" / "notes.md").write_text("the tree's root is the user's to keep notes in\n")
    before = snapshot(here / "f")
    code, _, err = _run(capsys, "render", "base.yaml", "other.yaml", "-o", "f")
    assert code == 1 and snapshot(here / "f") == before
    assert (
        "f: files specgen did not write would stay behind in the tree of workload 'base', which moves from f to f/base "
        "(several files render a tree of each workload): f/ansible/hosts.yml; move f/ansible/hosts.yml to "
        "f/base/ansible/hosts.yml first, or render 'base''s file alone; nothing was written"
    ) in err
    assert "notes.md" not in err
    (here / "f" / "ansible" / "hosts.yml").rename(here / "f" / "hosts.yml")
    code, _, err = _run(capsys, "render", "base.yaml", "other.yaml", "-o", "f")
    assert code == 0 and "specgen: moved the tree of workload 'base' from f to f/base" in err
    assert "f/terraform/terraform.tfstate stays beside the Terraform specgen writes there, now the root module " in err
    assert (here / "f" / "notes.md").is_file()


def test_a_user_file_in_a_tree_that_stays_is_no_move(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Re-rendering the same files (and a flat tree again) moves nothing: the state stays, nothing is said."""
    assert _run(capsys, "render", "base.yaml", "other.yaml", "-o", "m")[0] == 0
    (here / "m" / "base" / "terraform" / "terraform.tfstate").write_text("{}\n")
    (here / "m" / "terraform" / "terraform.tfstate").write_text("{}\n")
    code, _, err = _run(capsys, "render", "base.yaml", "other.yaml", "-o", "m")
    assert code == 0 and "moved" not in err and "removed" not in err
    assert _run(capsys, "render", "base.yaml", "-o", "f")[0] == 0
    (here / "f" / "terraform" / "terraform.tfstate").write_text("{}\n")
    assert _run(capsys, "render", "base.yaml", "-o", "f")[0] == 0


# --- item 6: diff --base of a directory blamed its parent ----------------------------------------------------------


def test_diff_base_of_a_directory_says_it_is_one(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = here / "repo"
    (repo / "sub").mkdir(parents=True)
    (repo / "a.yaml").write_text(BASE)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "a.yaml"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "a"], check=True)
    os.chdir(repo)
    for given in (".", "sub", str(repo)):
        code, out, err = _run(capsys, "diff", "--base", "HEAD", given)
        assert code == 1 and out == ""
        assert f"{given}: a directory; diff --base compares workload files or rendered spec.json files: give them " in err
        assert os.path.join(given, "*.yaml") in err
        assert "git repository" not in err


# --- item 11: diff took /dev/null, a FIFO or an empty file as an empty OLD -----------------------------------------


@pytest.mark.parametrize(
    ("old", "said"),
    [
        ("/dev/null", "/dev/null: file is a device; only regular files are read"),
        ("fifo", "fifo: file is a FIFO; only regular files are read"),
        ("empty.yaml", "empty.yaml:1:1: the file is empty"),
    ],
)
def test_diff_refuses_an_old_that_is_no_workload_file(
    here: Path, capsys: pytest.CaptureFixture[str], old: str, said: str
) -> None:
    os.mkfifo(here / "fifo")
    (here / "empty.yaml").write_text("")
    code, out, err = _run(capsys, "diff", old, "base.yaml")
    assert code == 1 and out == "" and said in err


def test_diff_still_counts_an_old_that_does_not_plan_as_a_fix(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (here / "broken.yaml").write_text(BASE.replace("version: 1", "version: 7"))
    code, out, _ = _run(capsys, "diff", "broken.yaml", "base.yaml")
    assert code == 0 and "OLD could not be planned; its fleet is counted as empty" in out


# --- item 12: --target kubernetes on a plan with no Kubernetes output ----------------------------------------------


@pytest.mark.parametrize("check", [(), ("--check",)], ids=["render", "check"])
def test_a_target_the_plan_renders_nothing_of_is_refused(
    here: Path, capsys: pytest.CaptureFixture[str], check: tuple[str, ...]
) -> None:
    code, out, err = _run(capsys, "render", "base.yaml", "-o", "tg", "--target", "kubernetes", *check)
    assert code == 1 and out == ""
    assert "tg: --target kubernetes: this plan renders no kubernetes output (no kubernetes/, kubeadm/, cluster/" in err
    assert err.strip().endswith("nothing was written") and not (here / "tg").exists()
    # a tree of two workloads has the cluster's shared layer: its Kubernetes output is rendered
    code, out, err = _run(capsys, "render", "base.yaml", "other.yaml", "-o", "m", "--target", "kubernetes", *check)
    assert code == (4 if check else 0), err


# --- item 17: a spec.json's totals without their figures, a provider that is no text ------------------------------


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda plan: plan.update(totals={}), "'plan.totals' has no 'gpus'"),
        (lambda plan: plan["totals"].pop("power_w"), "'plan.totals' has no 'power_w'"),
        (
            lambda plan: plan["totals"].update(nodes="1"),
            "'plan.totals.nodes' must be a number from 0 to 10^12, got '1'",
        ),
        (
            lambda plan: plan["totals"].update(gpus=None),
            "'plan.totals.gpus' must be a number from 0 to 10^12, got None",
        ),
        (lambda plan: plan.update(provider=5), "'plan.provider' must be a string, got 5"),
    ],
    ids=["totals-empty", "no-power", "nodes-text", "gpus-null", "provider-int"],
)
def test_diff_refuses_a_spec_json_missing_what_it_reads(
    here: Path, capsys: pytest.CaptureFixture[str], edit: object, said: str
) -> None:
    assert _run(capsys, "render", "base.yaml", "-o", "out")[0] == 0
    spec = json.loads((here / "out" / "spec.json").read_text())
    edit(spec["plan"])  # type: ignore[operator]
    (here / "new.json").write_text(json.dumps(spec))
    code, out, err = _run(capsys, "diff", "out/spec.json", "new.json")
    assert code == 1 and out == "" and said in err and "No change" not in err
    assert re.search(r"new\.json:1:\d+: not a specgen spec\.json: 'plan", err), err  # hostile84 item 1: located
    assert _run(capsys, "diff", "out/spec.json", "out/spec.json")[0] == 0  # the spec.json render writes is read
