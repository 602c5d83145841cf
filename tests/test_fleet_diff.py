"""``specgen diff`` and ``render --check`` tell a reviewer what a change does (newuser24 items 2, 3 and 8).

- item 2: a change that makes one workload file invalid or infeasible wrote an empty comment (exit 3), which the CI
  examples posted over the last one; the other files' changes were lost with it.
- item 3: the rate a service is asked and the share of its capacity were never shown; a rate change that kept the
  layout read "No change to the fleet."; a service moving to another GPU was no replacement; no $/month per pool.
- item 8: a model swap inside a pool of the same size showed no pool row and no memory picture.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from generator.cli import main
from generator.fleet_diff import diff_plans, drift_replacement_lines, markdown_diff, new_findings, pool_replacements
from generator.pr_diff import compare_with_base, markdown, unplanned_error
from tests.helpers import VALID
from tests.helpers import specgen_in_process as specgen

EXAMPLES = Path(__file__).parents[1] / "examples" / "ci"

# ---------------------------------------------------------------- synthetic plans (what a spec.json holds)


def _pool(
    name: str, gpu: str = "h100-sxm5-80gb", platform: str = "aws-p5-48xlarge", nodes: int = 1, **extra: Any
) -> dict[str, Any]:
    return {"name": name, "nodes": nodes, "power_w": 8000 * nodes, "usd_per_hour": 55.04 * nodes,
            "node": {"gpu_id": gpu, "gpus": 8, "platform_id": platform}, **extra}  # fmt: skip


def _dep(name: str, pool: str, rate: float | None = 15.0, per_replica: Any = 17.745, **extra: Any) -> dict[str, Any]:
    details: dict[str, Any] = {
        "max_num_seqs": 1024,
        "max_num_batched_tokens": 8192,
        "requests_per_s_per_replica_max": per_replica,
    }
    if rate is not None:
        details.update(requests_per_s=rate, ttft_p95_s=0.1774, tpot_s=0.03103)
    dep = {"name": name, "model_id": "meta-llama/Llama-3.3-70B-Instruct", "precision": "fp8", "tp": 8, "pp": 1,
           "replicas": 1, "gpus": 8, "pool": pool, "kv_cache_precision": "fp8", "details": details}  # fmt: skip
    dep.update(extra)
    return dep


def _fleet(pools: list[dict[str, Any]], deps: list[dict[str, Any]], provider: str = "aws") -> dict[str, Any]:
    return {"provider": provider, "totals": {}, "pools": pools, "deployments": deps}


def _one(pool: dict[str, Any] | None = None, **dep: Any) -> dict[str, Any]:
    """A fleet of one service ``chat`` in one pool ``chat`` (both as given)."""
    pool = pool or _pool("chat")
    return _fleet([pool], [_dep("chat", pool["name"], **dep)])


# ---------------------------------------------------------------- item 3: rate and share of capacity


@pytest.mark.parametrize(
    ("dep", "share"),
    [
        pytest.param({}, 0.8453, id="15-of-1x17.745"),
        pytest.param({"replicas": 4, "rate": 2.0, "per_replica": 0.5128}, 0.975, id="qwen3-coder-4x0.51"),
        pytest.param({"per_replica": "fast"}, None, id="a-spec-json-string-tells-no-share"),
        pytest.param({"per_replica": None}, None, id="no-figure"),
        # review22 item 7: an infinite share was a JSON traceback, a negative count a -119% share
        pytest.param({"per_replica": 1e-320}, None, id="a-capacity-no-plan-holds"),
        pytest.param({"replicas": -3}, None, id="negative-replicas"),
        pytest.param(
            {
                "rate": 24.0,
                "split": [
                    {"tp": 8, "pp": 1, "replicas": 2, "pool": "a", "requests_per_s_per_replica_max": 8.688},
                    {"tp": 8, "pp": 1, "replicas": 1, "pool": "b", "requests_per_s_per_replica_max": 9.248},
                ],
            },
            0.9208,
            id="split-even-routing-slowest-part-binds",
        ),
    ],
)
def test_a_service_row_carries_its_rate_and_its_share_of_capacity(dep: dict[str, Any], share: float | None) -> None:
    result = diff_plans(_fleet([], []), _one(**dep))
    (row,) = result["deployments"]
    assert row["new"]["load"]["requests_per_s"] == dep.get("rate", 15.0)
    assert row["new"]["load"]["capacity_share"] == share
    json.dumps(result, allow_nan=False)  # what --format json writes


def test_a_training_job_has_no_load() -> None:
    (row,) = diff_plans(_fleet([], []), _one(rate=None))["deployments"]
    assert "load" not in row["new"]


@pytest.mark.parametrize(
    ("old", "new", "shown"),
    [
        pytest.param(40.0, 4.0, ("40.00 req/s asked, 79% of capacity", "4.00 req/s asked, 8% of capacity"), id="40-to-4"),
        pytest.param(4.0, 40.0, ("4.00 req/s asked, 8% of capacity", "40.00 req/s asked, 79% of capacity"), id="4-to-40"),
    ],
)
def test_a_rate_change_that_keeps_the_layout_is_a_deployment_change(old: float, new: float, shown: tuple[str, str]) -> None:
    """newuser24 item 3: router 40 -> 4 req/s on its one replica (50.49 req/s) read "No change to the fleet.", while
    SPEC.md, the Ansible group vars and Terraform's gpu_pools changed (render --check reported the drift)."""
    result = diff_plans(_one(rate=old, per_replica=50.49), _one(rate=new, per_replica=50.49))
    assert result["pools"] == [] and [d["deployment"] for d in result["deployments"]] == ["chat"]
    text = markdown_diff(result)
    assert "No change to the fleet." not in text
    layout = "meta-llama/Llama-3.3-70B-Instruct fp8 TP8xPP1 x1 (8 GPUs)"
    assert f"| `chat` | {layout}; {shown[0]} (TTFT p95 177 ms, TPOT 31.0 ms" in text
    # newuser44 item 2: what moved, first in the new cell
    marker = f"**changed: rate asked {old:.2f} → {new:.2f} req/s**; "
    assert f"| {marker}meta-llama/Llama-3.3-70B-Instruct fp8 TP8xPP1 x1 (8 GPUs); {shown[1]} (" in text


def _with_slo(fleet: dict[str, Any], **slo: float) -> dict[str, Any]:
    fleet["deployments"][0]["details"].update({f"slo_{k}": v for k, v in slo.items()})
    return fleet


def test_a_tighter_slo_that_keeps_the_layout_is_a_deployment_change() -> None:
    """A reviewer must see a target the service is sized for change, even where the plan keeps its replicas."""
    old, new = _with_slo(_one(), ttft_p95_ms=1500, tpot_ms=50), _with_slo(_one(), ttft_p95_ms=1500, tpot_ms=35)
    result = diff_plans(old, new)
    assert [d["deployment"] for d in result["deployments"]] == ["chat"]
    text = markdown_diff(result)
    assert "; SLO TTFT p95 1,500 ms, TPOT 50 ms;" in text and "; SLO TTFT p95 1,500 ms, TPOT 35 ms;" in text


def test_a_pooling_row_says_its_request_latency_and_target() -> None:
    embed = _with_slo(_one(), latency_p95_ms=500)
    details = embed["deployments"][0]["details"]
    details.update(task="embed", latency_p95_s=0.3393, tpot_s=None)
    text = markdown_diff(diff_plans(_fleet([], []), embed))
    assert "(request latency p95 339 ms at that load); SLO request latency p95 500 ms;" in text


def test_the_same_plan_is_still_no_change() -> None:
    assert "No change to the fleet." in markdown_diff(diff_plans(_one(), _one()))


def _racked(*racks: dict[str, int]) -> dict[str, Any]:
    """A bare-metal fleet of one 2-node pool ``chat`` racked as given: {pool: nodes} a rack, 10.2 kW a node."""
    fleet = _one(_pool("chat", platform="dgx-h100", nodes=2))
    fleet["provider"] = "baremetal"
    fleet["racks"] = [
        {"id": f"rack-{i:02d}", "pools": [{"pool": p, "nodes": n, "hosts": []} for p, n in held.items()],
         "power_w": 10200 * sum(held.values())}
        for i, held in enumerate(racks, start=1)
    ]  # fmt: skip
    return fleet


def test_a_server_moving_to_another_rack_is_a_change() -> None:
    """newuser36 item 11: rack_power_kw 17.3 -> 40 put both servers in one rack; the diff said "No change"."""
    result = diff_plans(_racked({"chat": 1}, {"chat": 1}), _racked({"chat": 2}))
    assert result["pools"] == [] and result["deployments"] == []
    assert result["racks"] == [
        {"rack": "rack-01", "old": {"pools": {"chat": 1}, "power_w": 10200}, "new": {"pools": {"chat": 2}, "power_w": 20400}},
        {"rack": "rack-02", "old": {"pools": {"chat": 1}, "power_w": 10200}, "new": None},
    ]
    text = markdown_diff(result)
    assert "No change to the fleet." not in text
    assert "| `rack-01` | 1 x `chat` (10.2 kW) | 2 x `chat` (20.4 kW) |" in text
    assert "| `rack-02` | 1 x `chat` (10.2 kW) | - |" in text
    assert "The same pools and deployments, racked as above." in text
    # the same racks, or a side without a rack list (a spec.json from before it): nothing to say
    assert "racks" not in diff_plans(_racked({"chat": 2}), _racked({"chat": 2}))
    assert "racks" not in diff_plans(_one(_pool("chat", nodes=2)), _racked({"chat": 2}))


@pytest.mark.parametrize(
    ("racks", "said"),
    [
        ("a list", "'plan.racks' must be a list"),
        ([{"id": "r", "pools": []}], "'plan.racks[0]' has no 'power_w'"),
        ([{"id": "r", "pools": [{"pool": "p", "nodes": -1}], "power_w": 1}], "'plan.racks[0].pools[0].nodes' must be"),
    ],
)
def test_a_spec_json_with_bad_racks_is_refused_naming_the_field(tmp_path: Path, racks: Any, said: str) -> None:
    from generator.errors import InputError
    from generator.fleet_diff import load_plan_dict

    fleet = _racked({"chat": 2})
    fleet["racks"] = racks
    path = tmp_path / "spec.json"
    path.write_text(_spec(fleet))
    with pytest.raises(InputError, match=said.replace("[", r"\[").replace("]", r"\]")):
        load_plan_dict(str(path))


# ---------------------------------------------------------------- item 3: a service moving to other hardware


A100: dict[str, Any] = {"gpu": "a100-sxm4-40gb", "platform": "aws-p4d-24xlarge"}


@pytest.mark.parametrize(
    ("old", "new", "replaced"),
    [
        pytest.param(  # rate 15 -> 3: chat leaves p5/H100 for p4d/A100
            _one(_pool("chat_h100")), _one(_pool("chat_a100", **A100)),
            [(["chat_h100"], ["chat_a100"], ["chat"], "h100-sxm5-80gb")], id="service-moves-gpu",
        ),
        pytest.param(  # the same GPU on another instance type
            _one(_pool("chat_p5")), _one(_pool("chat_p5en", platform="aws-p5en-48xlarge")),
            [(["chat_p5"], ["chat_p5en"], ["chat"], "h100-sxm5-80gb")], id="service-moves-platform",
        ),
        pytest.param(_one(_pool("chat_h100")), _one(_pool("chat_h100", nodes=2)), [], id="resize"),
        pytest.param(
            _fleet([_pool("a")], [_dep("x", "a")]), _fleet([_pool("b", **A100)], [_dep("y", "b")]), [],
            id="one-service-removed-another-added",
        ),
        pytest.param(  # two services co-located in one pool, each to a pool of its own on A100s: one replacement
            _fleet([_pool("both")], [_dep("x", "both"), _dep("y", "both")]),
            _fleet([_pool("x_a100", **A100), _pool("y_a100", **A100)], [_dep("x", "x_a100"), _dep("y", "y_a100")]),
            [(["both"], ["x_a100", "y_a100"], ["x", "y"], "h100-sxm5-80gb")], id="co-located-services-split-up",
        ),
        pytest.param(  # a renamed pool on the same hardware stays one replacement (newuser23 item 3), not two
            _one(_pool("old_name")), _one(_pool("new_name")), [(["old_name"], ["new_name"], ["chat"], "h100-sxm5-80gb")],
            id="same-hardware-rename",
        ),
    ],
)  # fmt: skip
def test_a_service_moving_to_other_hardware_is_a_replacement(
    old: dict[str, Any], new: dict[str, Any], replaced: list[tuple[list[str], list[str], list[str], str]]
) -> None:
    got = pool_replacements(old, new)
    assert [([p["pool"] for p in r["removed"]], [p["pool"] for p in r["added"]], r["deployments"], r["was"]["gpu"])
            for r in got] == replaced  # fmt: skip
    assert diff_plans(old, new)["replacements"] == got


def test_a_move_says_the_hardware_before_and_who_moves() -> None:
    text = markdown_diff(diff_plans(_one(_pool("chat_h100")), _one(_pool("chat_a100", **A100))))
    assert "**Node pools replaced, not resized: 1 node(s) deleted and 1 created.**" in text
    assert (
        "- `chat_h100` (1 node) replaced by `chat_a100` (1 node), a100-sxm4-40gb on aws-p4d-24xlarge (was "
        "h100-sxm5-80gb on aws-p5-48xlarge; `chat` moves): applying it deletes 1 node and creates 1"
    ) in text
    # fuzz21 item 8: no pool: advice where the pool moved hardware; a kept name says so, not "replaced by" itself
    assert "set `pool:`" not in text
    kept = markdown_diff(diff_plans(_one(_pool("chat")), _one(_pool("chat", **A100))))
    assert "- `chat` (1 node) keeps its name on other hardware, a100-sxm4-40gb on aws-p4d-24xlarge (was" in kept


# ---------------------------------------------------------------- item 3: $/month per pool


@pytest.mark.parametrize(
    ("pool", "cell"),
    [
        pytest.param(_pool("p"), "- → 40,179.20", id="55.04-an-hour-x-730"),
        pytest.param(_pool("p", per_job=True), "- → -", id="rented-per-run"),
        pytest.param(_pool("p", usd_per_hour=None), "- → -", id="unpriced"),
        pytest.param(_pool("p", usd_per_hour="cheap"), "- → -", id="a-spec-json-string"),
    ],
)
def test_the_pool_table_has_a_cost_a_month(pool: dict[str, Any], cell: str) -> None:
    text = markdown_diff(diff_plans(_fleet([], []), _fleet([pool], [])))
    assert "| pool | status | GPU | nodes | GPUs | power W | $/month |" in text
    assert text.rstrip("\n").split("\n")[-1].endswith(f"| {cell} |")


# ---------------------------------------------------------------- item 8: what runs on a pool


@pytest.mark.parametrize(
    ("change", "status"),
    [
        pytest.param({"model_id": "Qwen/Qwen3-32B"}, "changed", id="model"),
        pytest.param({"precision": "bf16"}, "changed", id="precision"),
        pytest.param({"tp": 4, "replicas": 2}, "changed", id="layout"),
        pytest.param({"pp": 2}, "changed", id="pipeline"),
        pytest.param({"replicas": 2}, "changed", id="replicas"),
        pytest.param({}, None, id="nothing"),
    ],
)
def test_a_pool_changes_when_what_runs_on_it_changes(change: dict[str, Any], status: str | None) -> None:
    old = _fleet([_pool("coder")], [_dep("coder", "coder")])
    new = _fleet([_pool("coder")], [_dep("coder", "coder", **change)])
    result = diff_plans(old, new)
    assert [p["status"] for p in result["pools"]] == ([status] if status else [])
    text = markdown_diff(result)
    assert ("| `coder` | changed (what runs on it) | h100-sxm5-80gb | 1 → 1 | 8 → 8 |" in text) is bool(status)


# ---------------------------------------------------------------- items 2 and 8 through git: diff --base


def _git(cwd: Path, *args: str) -> None:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "PATH": "/usr/bin:/bin", "HOME": str(cwd)}  # fmt: skip
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


def _workload(name: str, rate: str = "2", slo: str = "") -> str:
    return VALID.replace("name: demo", f"name: {name}").replace("requests_per_second: 2", f"requests_per_second: {rate}{slo}")


INFEASIBLE = "\n      slo: {tpot_ms: 1}"  # an L40S decodes an 8B model at 6.8 ms a token at best (TP8)


@pytest.fixture
def pr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with workloads a and b committed; the working tree changes b's rate 2 -> 1 req/s."""
    (tmp_path / "a.yaml").write_text(_workload("a"))
    (tmp_path / "b.yaml").write_text(_workload("b"))
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "base")
    (tmp_path / "b.yaml").write_text(_workload("b", "1"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    ("a", "status", "code", "said"),
    [
        pytest.param(_workload("a", "2", INFEASIBLE), "infeasible", 3, "has no feasible plan", id="infeasible"),
        pytest.param(_workload("a", "'<b>|x'"), "invalid", 1, "expected number, got string '\\<b\\>\\|x'", id="invalid"),
    ],
)
def test_a_file_that_cannot_be_planned_is_explained_and_the_others_still_shown(
    pr: Path, capsys: pytest.CaptureFixture[str], a: str, status: str, code: int, said: str
) -> None:
    (pr / "a.yaml").write_text(a)
    got, md, err = specgen(capsys, "diff", "--base", "HEAD", "a.yaml", "b.yaml")
    assert got == code and "specgen: error: a.yaml:" in err  # the job fails, its log says why
    assert f"**1 workload file(s) cannot be planned as changed: `a.yaml` ({status}).**" in md
    assert f"### `a.yaml` ({status})" in md and said in md  # the error, escaped for Markdown
    assert "<b>" not in md
    assert "### `b.yaml` (changed)" in md and "1.00 req/s asked" in md  # the other file's change is still there
    assert md.index("### `a.yaml`") < md.index("### `b.yaml`")
    # newuser44 item 10: 2 -> 1 req/s keeps b's one replica: no GPU, node or dollar moves
    assert "1 workload file(s) change what runs (fleet unchanged); 0 unchanged; 1 cannot be planned." in md
    got, out, _ = specgen(capsys, "diff", "--base", "HEAD", "a.yaml", "b.yaml", "--format", "json")
    data = json.loads(out)
    assert got == code and [(f["file"], f["status"]) for f in data["files"]] == [("a.yaml", status), ("b.yaml", "changed")]
    assert data["files"][0]["diff"] is None and data["files"][0]["errors"][0].startswith("a.yaml:")
    # the totals are b's alone: a's fleet is neither removed nor kept
    assert data["totals"]["gpus"] == {"old": 1, "new": 1, "delta": 0}


def test_a_file_fixed_by_the_change_is_counted_as_added(pr: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (pr / "a.yaml").write_text(_workload("a", "2", INFEASIBLE))
    _git(pr, "commit", "-qam", "broken")
    (pr / "a.yaml").write_text(_workload("a"))
    result = compare_with_base("HEAD", ["a.yaml"])
    assert unplanned_error(result) is None
    (entry,) = result["files"]
    assert entry["status"] == "fixed" and "has no feasible plan" in entry["base_errors"][0]
    assert result["totals"]["gpus"] == {"old": 0, "new": 1, "delta": 1}
    assert "At the base it could not be planned; its fleet is counted as added." in markdown(result)


def test_a_model_swap_in_a_pool_shows_its_row_and_its_memory_picture(pr: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """newuser24 item 8: Qwen2.5-32B -> Qwen3-32B in coder's pool: the GPUs hold another model; the comment had
    no pool row and no Mermaid picture. The fence follows a blank line, not the last table row."""
    (pr / "b.yaml").write_text(_workload("b").replace("meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-7B-Instruct"))
    code, md, err = specgen(capsys, "diff", "--base", "HEAD", "b.yaml")
    assert code == 0, err
    assert "| changed (what runs on it) | l40s-48gb | 1 → 1 | 1 → 1 |" in md
    assert "|\n\n```mermaid\npie showData title chat on " in md


# ---------------------------------------------------------------- item 2: the CI examples


def test_the_sticky_comment_keeps_the_last_comment_when_the_body_is_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An existing empty file still passes hashFiles(...) != '': the comment was blanked to the marker."""
    spec = importlib.util.spec_from_file_location("sticky_comment", EXAMPLES / "sticky_comment.py")
    assert spec is not None and spec.loader is not None
    sticky_comment = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sticky_comment)
    calls: list[tuple[str, str]] = []

    def call(method: str, url: str, *_: Any) -> list[Any]:
        calls.append((method, url))
        return []

    monkeypatch.setattr(sticky_comment, "call", call)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    for name, value in (("GITHUB_REPOSITORY", "o/r"), ("PR_NUMBER", "1"), ("GITHUB_TOKEN", "t")):
        monkeypatch.setenv(name, value)
    body = tmp_path / "specgen-comment.md"
    for text, posted in (("", False), ("\n", False), ("## specgen: fleet change\n", True)):
        body.write_text(text)
        calls.clear()
        monkeypatch.setattr(sys, "argv", ["sticky_comment.py", str(body)])
        assert sticky_comment.main() == 0
        assert (("POST", "https://api.github.com/repos/o/r/issues/1/comments") in calls) is posted
    assert "the comment is left as it is" in capsys.readouterr().out


def test_the_sticky_comment_says_why_it_cannot_post_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """newuser82 item 6: a pull request from a fork gets a read-only GITHUB_TOKEN, and the comment's POST answered 403
    with a urllib traceback; it says what the token lacks and exits 1."""
    import urllib.error

    spec = importlib.util.spec_from_file_location("sticky_comment", EXAMPLES / "sticky_comment.py")
    assert spec is not None and spec.loader is not None
    sticky_comment = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sticky_comment)
    url = "https://api.github.com/repos/o/r/issues/1/comments"

    def call(method: str, *_: Any) -> list[Any]:
        if method == "POST":
            raise urllib.error.HTTPError(url, 403, "Forbidden", {}, None)  # type: ignore[arg-type]
        return []

    monkeypatch.setattr(sticky_comment, "call", call)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    for name, value in (("GITHUB_REPOSITORY", "o/r"), ("PR_NUMBER", "1"), ("GITHUB_TOKEN", "t")):
        monkeypatch.setenv(name, value)
    body = tmp_path / "specgen-comment.md"
    body.write_text("## specgen: fleet change\n")
    monkeypatch.setattr(sys, "argv", ["sticky_comment.py", str(body)])
    assert sticky_comment.main() == 1
    err = capsys.readouterr().err
    assert err.startswith(f"cannot post the comment: HTTP 403 Forbidden from {url}; ")
    assert "pull-requests: write" in err and "read-only GITHUB_TOKEN" in err and err.count("\n") == 1


def _after_script() -> list[str]:
    text = (EXAMPLES / "gitlab-ci.yml").read_text().split("after_script:\n", 1)[1].split("\n  artifacts:", 1)[0]
    return [line.strip().removeprefix("- ") for line in text.splitlines() if line.strip().startswith("- ")]


def test_the_gitlab_job_posts_the_note_when_the_diff_exits_non_zero(tmp_path: Path) -> None:
    """GitLab runs after_script with errexit: a diff exiting 3 stopped it before the note explaining it was posted."""
    stubs = (
        'specgen() { echo "## specgen: a.yaml is infeasible"; return 3; }\n'
        'python() { echo "posted: $(cat "$2")"; }\n'
        "ls() { echo workloads/a.yaml; }\n"
        "git() { :; }\n"
    )
    script = stubs + "\n".join(_after_script())
    done = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "posted: ## specgen: a.yaml is infeasible" in done.stdout


def test_the_github_workflow_posts_the_comment_after_a_failed_diff() -> None:
    text = (EXAMPLES / "github-actions.yml").read_text()
    step = text.split("- name: Sticky comment", 1)[1]
    assert "if: always() && hashFiles('specgen-comment.md') != ''" in step.split("\n")[1]


@pytest.mark.parametrize(
    ("step", "codes", "calls", "exit_code"),
    [
        pytest.param("Rendered output is current", [75, 75, 0], 3, 0, id="check-third-try"),
        pytest.param("Rendered output is current", [75, 75, 75, 0], 3, 75, id="check-three-tries-at-most"),
        pytest.param("Rendered output is current", [4], 1, 4, id="check-drift-not-retried"),
        pytest.param("Fleet change", [75, 0], 2, 0, id="diff-second-try"),
        pytest.param("Fleet change", [3], 1, 3, id="diff-infeasible-not-retried"),
        pytest.param("Fleet change", [75, 75, 75], 3, 75, id="diff-gives-up"),
    ],
)
def test_the_github_workflow_tries_a_hub_outage_again(
    tmp_path: Path, step: str, codes: list[int], calls: int, exit_code: int
) -> None:
    """fix146 item 5: exit 75 (the Hub out of reach) failed the GitHub job at once, where GitLab's ``retry`` tries
    again; each step that runs specgen tries three times in all, waits between tries, and passes any other exit on."""
    steps = YAML(typ="safe").load((EXAMPLES / "github-actions.yml").read_text())["jobs"]["specgen"]["steps"]
    run = next(s["run"] for s in steps if s.get("name") == step)
    stubs = (
        f"codes=({' '.join(map(str, codes))})\n"
        'specgen() { n=$(wc -l < calls); echo x >> calls; echo "comment $n"; return "${codes[$n]}"; }\n'
        'sleep() { echo "slept $1" >> slept; }\nls() { echo workloads/a.yaml; }\ngit() { :; }\n'
    )
    (tmp_path / "calls").write_text("")
    (tmp_path / "slept").write_text("")
    # GitHub runs a step's script with bash -e (https://docs.github.com/en/actions/reference/workflow-syntax-for-github-actions#jobsjob_idstepsshell)
    done = subprocess.run(["bash", "--noprofile", "--norc", "-e", "-c", stubs + run], cwd=tmp_path,
                          capture_output=True, text=True, check=False, env={"PATH": "/usr/bin:/bin", "BASE": "x"})  # fmt: skip
    assert (done.returncode, len((tmp_path / "calls").read_text().splitlines())) == (exit_code, calls), done.stderr
    assert (tmp_path / "slept").read_text().splitlines() == ["slept 30"] * (calls - 1)  # none after the last try
    if step == "Fleet change":  # the comment is the last try's alone
        assert (tmp_path / "specgen-comment.md").read_text() == f"comment {calls - 1}\n"


# ---------------------------------------------------------------- render --check: replaced pools


#: The totals every spec.json holds (fuzz31 item 17: a diff reads them, and refuses a spec.json without them); these
#: tests read pools and deployments, so both sides hold the same.
SPEC_TOTALS = {"gpus": 1, "nodes": 1, "racks": 0, "power_w": 1000, "usd_per_month": None}


def _spec(plan: dict[str, Any]) -> str:
    """A spec.json of ``plan`` with its totals its pools' sums, as the planner writes them (newuser75 item 4)."""
    pools = plan["pools"]
    rates = [p["usd_per_hour"] for p in pools if not p.get("per_job")]
    sums = {
        "gpus": sum(p["nodes"] * p["node"]["gpus"] for p in pools),
        "nodes": sum(p["nodes"] for p in pools),
        "power_w": sum(p["power_w"] for p in pools),
        "usd_per_month": round(sum(rate * 730 for rate in rates), 2) if pools and None not in rates else None,
    }
    return json.dumps({"plan": {**plan, "totals": {**SPEC_TOTALS, **sums, **plan["totals"]}}})


@pytest.mark.parametrize(
    ("committed", "lines"),
    [
        pytest.param(
            _spec(_one(_pool("chat_h100"))),
            ["specgen: w/spec.json: node pool replaced, not resized: 'chat_h100' (1 node) replaced by 'chat_a100' "
             "(1 node), a100-sxm4-40gb on aws-p4d-24xlarge (was h100-sxm5-80gb on aws-p5-48xlarge; 'chat' moves): "
             "applying it deletes 1 node and creates 1"],
            id="moved",
        ),
        pytest.param(_spec(_one(_pool("chat_a100", **A100), rate=3.1)), [], id="resized-only"),
        pytest.param("{not json", [], id="unreadable"),
        pytest.param(json.dumps({"plan": {"pools": "x"}}), [], id="not-a-plan"),
        pytest.param(  # a pool name holds none (newuser75 item 9: [a-z0-9_] as the planner names pools); a platform may
            _spec(_one(_pool("chat_h100", platform="a\nb::add-mask::x"))),
            ["specgen: w/spec.json: node pool replaced, not resized: 'chat_h100' (1 node) replaced by "
             "'chat_a100' (1 node), a100-sxm4-40gb on aws-p4d-24xlarge (was h100-sxm5-80gb on a\\nb::add-mask::x; "
             "'chat' moves): applying it deletes 1 node and creates 1"],
            id="a-line-break-stays-on-the-line",
        ),
        pytest.param(_spec(_one(_pool("a\nb::add-mask::x"))), [], id="a-pool-name-no-planner-writes"),
    ],
)  # fmt: skip
def test_render_check_names_each_replaced_pool(committed: str, lines: list[str]) -> None:
    rendered = _spec(_one(_pool("chat_a100", **A100), rate=3.0))
    assert drift_replacement_lines({"w/spec.json": committed}, {"w/spec.json": rendered}) == lines
    assert drift_replacement_lines({"w/SPEC.md": committed}, {"w/SPEC.md": rendered}) == []


def test_render_check_prints_the_replacement_after_the_patch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The committed tree's pool, renamed in its spec.json, is replaced by the one rendered now."""
    work = tmp_path / "w.yaml"
    work.write_text(VALID)
    out = tmp_path / "out"
    assert specgen(capsys, "render", str(work), "-o", str(out))[0] == 0
    spec = json.loads((out / "spec.json").read_text())
    (pool,) = spec["plan"]["pools"]
    name = pool["name"]
    pool["name"] = spec["plan"]["deployments"][0]["pool"] = "old_pool"
    for rack in spec["plan"]["racks"]:  # every place the pool is named, or the spec.json is not one (newuser75 item 4)
        for share in rack["pools"]:
            share["pool"] = "old_pool"
    (out / "spec.json").write_text(json.dumps(spec))
    code, text, err = specgen(capsys, "render", str(work), "-o", str(out), "--check")
    assert code == 4, err
    assert text.rstrip("\n").split("\n")[-1] == (
        f"specgen: spec.json: node pool replaced, not resized: 'old_pool' (1 node) replaced by '{name}' (1 node), "
        "l40s-48gb on dell-r760: 1 server leaves the pool and 1 join the new one (Ansible group, node labels and "
        "Terraform keys renamed; Kubernetes nodes drained and rejoined)"
    )
    assert os.path.exists(out / "spec.json")


@pytest.mark.parametrize(
    ("error", "line"),
    [
        pytest.param("a.yaml:5:12: no feasible plan", "a.yaml:5:12: no feasible plan", id="short"),
        pytest.param("x" * 2500, "x" * 1600 + "... (500 characters left out) ..." + "x" * 400, id="long-cut-once"),
        pytest.param("a\n::add-mask::b", "a\\n::add-mask::b", id="line-break-escaped"),
    ],
)
def test_the_job_log_prints_each_error_once_on_one_line(error: str, line: str) -> None:
    from generator.cli import _error_lines
    from generator.errors import InfeasibleError
    from generator.pr_diff import _unplanned

    failed = {"file": "a.yaml", "status": "infeasible", "errors": _unplanned(InfeasibleError(error)).lines}
    exc = unplanned_error({"files": [failed]})
    assert exc is not None and exc.exit_code == 3 and _error_lines(exc) == [line]
    section = markdown({"base": "HEAD", "totals": {}, "files": [failed]})
    assert section.count("characters left out") == line.count("characters left out")


def test_a_job_that_now_runs_after_another_and_a_service_now_embedding_are_changes() -> None:
    """review22 item 6: adding run_after (the job now waits 11.66 h) and generate -> embed left identical rows."""
    job = _one(rate=None)
    job["deployments"][0]["details"].update(hours=6.58, usd_per_job=361.91)
    chained = json.loads(json.dumps(job))
    chained["deployments"][0]["details"].update(runs_after="sft", starts_at_hours=11.66)
    (row,) = diff_plans(job, chained)["deployments"]
    assert "after sft, from 11.66 h of the sequence" in markdown_diff(diff_plans(job, chained))
    assert row["new"]["training"]["runs_after"] == "sft" and "runs_after" not in row["old"]["training"]
    embedding = _one()
    embedding["deployments"][0]["details"]["task"] = "embed"
    (row,) = diff_plans(_one(), embedding)["deployments"]
    assert row["new"]["task"] == "embed" and "task" not in row["old"]


def test_a_pool_rented_per_job_is_never_a_replacement() -> None:
    """review22 item 9: a chain's per-job pools renamed read "applying it deletes 3 nodes and creates 2"; they run no
    node between runs."""
    old = _one(_pool("sft_h100", per_job=True), rate=None)
    new = _one(_pool("sft_dpo_h100", per_job=True, nodes=2), rate=None)
    assert pool_replacements(old, new) == []
    assert pool_replacements(_one(_pool("sft_h100"), rate=None), _one(_pool("sft_dpo_h100"), rate=None))  # standing


# ---------------------------------------------------------------- newuser25 item 9: buy against rent


def _totals(**totals: Any) -> dict[str, Any]:
    return {"provider": "baremetal" if totals.get("capex_usd") else "gcp", "totals": totals, "pools": [], "deployments": []}


#: newuser30 item 4's bare-metal side of two training jobs (tune32 on an RTX 5090 tower, full8 on an L4 server)
TRAIN_BM = _totals(capex_usd=43669.0, opex_usd_per_month=867.31, usd_per_month=2080.34, training_usd_per_job=None)
#: ... and its Azure side: the jobs rented per run, 4 runs a month each ($118.09 + $75.22 a run), no standing server
TRAIN_AZ = _totals(
    capex_usd=None, opex_usd_per_month=0, usd_per_month=0, training_usd_per_job=193.31, training_usd_per_month=773.24
)
_CAVEAT = (
    " (the bought side's capex is its servers alone, without the top-of-rack and management switches, optics and "
    "cables, PDUs, installation and remote hands, support or warranty beyond what comes with each server, spares or "
    "the cost of capital (no discount rate), and is spread over amortization_months with no resale value)."
)


@pytest.mark.parametrize(
    ("old", "new", "expected", "line"),
    [
        # the user's office workstation ($66,318, $1,079/month to run) against GCP on-demand ($10,726/month):
        # 66,318 / (10,726.28 - 1,079) = 6.87 months
        pytest.param(
            _totals(capex_usd=66318.0, opex_usd_per_month=1079.0, usd_per_month=2921.46),
            _totals(capex_usd=None, opex_usd_per_month=10726.28, usd_per_month=10726.28),
            {"bought": "old", "break_even_months": 6.9, "rent_usd_per_month": 10726.28},
            "Buy (old) or rent (new): $66,318 up front and $1,079/month to run, against $10,726/month rented: buying "
            "has cost less after 6.9 months",
            id="services-only-pays-back",
        ),
        pytest.param(
            _totals(capex_usd=None, opex_usd_per_month=900.0, usd_per_month=900.0),
            _totals(capex_usd=50000.0, opex_usd_per_month=1200.0, usd_per_month=2588.89),
            {"bought": "new", "break_even_months": None},
            "Buy (new) or rent (old): $50,000 up front and $1,200/month to run, against $900/month rented: renting "
            "costs $300/month less than running the bought servers alone: buying never pays back",
            id="renting-costs-less-than-running",
        ),
        pytest.param(
            _totals(capex_usd=50000.0, opex_usd_per_month=900.0, usd_per_month=2288.89),
            _totals(capex_usd=None, opex_usd_per_month=900.0, usd_per_month=900.0),
            {"bought": "old", "break_even_months": None},
            "against $900/month rented: running the bought servers costs as much as the rent: buying never pays back",
            id="rent-equal-to-running",
        ),
        # newuser30 item 4: the cloud side's month is its runs alone ($0 of servers): the line was dropped
        pytest.param(
            TRAIN_BM,
            TRAIN_AZ,
            {"bought": "old", "break_even_months": None, "rent_usd_per_month": 773.24, "rent_services_usd_per_month": 0.0},
            "Buy (old) or rent (new): $43,669 up front and $867/month to run, against $773/month rented (its training "
            "jobs' runs a month, no servers rented by the month): renting costs $94/month less than running the bought "
            "servers alone: buying never pays back",
            id="runs-only-never-pays-back",
        ),
        pytest.param(
            TRAIN_AZ,
            TRAIN_BM,
            {"bought": "new", "rent_usd_per_month": 773.24},
            "Buy (new) or rent (old): $43,669 up front",
            id="runs-only-either-side",
        ),
        # runs a month that cost more than running the servers bought: 10,000 / (1,100 - 100) = 10 months
        pytest.param(
            _totals(capex_usd=10000.0, opex_usd_per_month=100.0, usd_per_month=377.78),
            _totals(capex_usd=None, usd_per_month=0, training_usd_per_job=275.0, training_usd_per_month=1100.0),
            {"break_even_months": 10.0, "rent_usd_per_month": 1100.0},
            "against $1,100/month rented (its training jobs' runs a month, no servers rented by the month): buying has "
            "cost less after 10 months",
            id="runs-only-pays-back",
        ),
        # newuser30 item 4 with the services: lab-nv.yaml against lab-az-nv.yaml; without the $773.24 of runs the
        # break-even read 1,120,737.39 / (247,616 - 12,366.13) = 4.76 -> 4.8 months; with them 4.75 -> 4.7
        pytest.param(
            _totals(capex_usd=1120737.39, opex_usd_per_month=12366.13, usd_per_month=43497.72, training_usd_per_job=None),
            _totals(
                capex_usd=None,
                opex_usd_per_month=247616.0,
                usd_per_month=247616.0,
                training_usd_per_job=193.31,
                training_usd_per_month=773.24,
            ),
            {"break_even_months": 4.7, "rent_usd_per_month": 248389.24, "rent_training_usd_per_month": 773.24},
            "against $248,389/month rented ($247,616 of servers by the month + $773 of training runs a month): buying "
            "has cost less after 4.7 months",
            id="services-and-runs",
        ),
        # rented jobs whose runs a month the workload does not give: the rent leaves them out, and says so
        pytest.param(
            _totals(capex_usd=40000.0, opex_usd_per_month=1000.0, usd_per_month=2111.11),
            _totals(capex_usd=None, usd_per_month=5000.0, training_usd_per_job=193.31),
            {"break_even_months": 10.0, "rent_usd_per_month": 5000.0, "rent_training_usd_per_job_uncounted": 193.31},
            "against $5,000/month rented, plus $193 a run of its training jobs (not counted: the workload gives no "
            "runs_per_month): buying has cost less after 10 months",
            id="runs-a-month-not-given",
        ),
        pytest.param(
            _totals(capex_usd=40000.0, opex_usd_per_month=1000.0, usd_per_month=2111.11),
            _totals(capex_usd=None, usd_per_month=5000.0, training_usd_per_job=None, unpriced_training_pools=["sft"]),
            {"break_even_months": 10.0, "rent_training_usd_per_job_uncounted": None},
            "against $5,000/month rented, plus its training jobs' runs (not counted: a job has no price or no "
            "runs_per_month): buying has cost less after 10 months",
            id="a-rented-job-unpriced",
        ),
        # nothing rented by the month and no runs a month: no month to set against the capex, so the runs a month from
        # which buying costs less (newuser108 item 1: it said nothing): 43,669 / 36 + 867.31 = 2,080.34 a month over
        # the amortisation, / 193.31 a run = 10.76 runs a month (more than one a month: no months between runs said)
        pytest.param(
            TRAIN_BM,
            _totals(capex_usd=None, usd_per_month=0, training_usd_per_job=193.31),
            {
                "break_even_months": None,
                "rent_usd_per_month": None,
                "runs_break_even": {
                    "rent_usd_per_run": 193.31,
                    "bought_usd_per_month_over_amortization": 2080.34,
                    "break_even_runs_per_month": 10.76,
                    "break_even_months_between_runs": None,
                },
            },
            "against $193 a run of its training jobs rented (no servers rented by the month): the rented side pays per "
            "run and the workload gives no runs_per_month, so it has no month to pay back against: over the 36-month "
            "amortisation the servers bought cost $2,080/month (capex / 36 + running), so buying costs less from "
            "10.76 runs a month at $193 a run rented",
            id="runs-without-a-month",
        ),
        # ... a job unpriced among them: no cost a run to set against it
        pytest.param(
            TRAIN_BM,
            _totals(capex_usd=None, usd_per_month=0, training_usd_per_job=193.31, unpriced_training_pools=["sft"]),
            None,
            None,
            id="runs-without-a-month-one-unpriced",
        ),
        pytest.param(
            _totals(capex_usd=None, usd_per_month=900.0),
            _totals(capex_usd=None, usd_per_month=800.0),
            None,
            None,
            id="two-clouds",
        ),
        pytest.param(
            _totals(capex_usd=1000.0, opex_usd_per_month=10.0, usd_per_month=40.0),
            _totals(capex_usd=2000.0, opex_usd_per_month=10.0, usd_per_month=70.0),
            None,
            None,
            id="both-bought",
        ),
        # a spec.json may hold anything: a running cost that is no figure tells no break-even
        pytest.param(
            _totals(capex_usd=10000.0, opex_usd_per_month="cheap", usd_per_month=377.78),
            TRAIN_AZ,
            None,
            None,
            id="running-cost-no-figure",
        ),
        pytest.param(
            _totals(capex_usd=10000.0, opex_usd_per_month=-5000.0, usd_per_month=377.78),
            TRAIN_AZ,
            None,
            None,
            id="negative-running-cost",
        ),
    ],
)
def test_a_bought_fleet_against_a_rented_one_says_when_buying_pays_back(
    old: dict[str, Any], new: dict[str, Any], expected: dict[str, Any] | None, line: str | None
) -> None:
    result = diff_plans(old, new)
    payback = result.get("buy_vs_rent")
    if expected is None:
        assert payback is None
        assert "Buy (" not in markdown_diff(result)
        return
    assert payback is not None and {k: payback[k] for k in expected} == expected
    assert {"capex_usd", "opex_usd_per_month"} <= set(result["totals"])  # what buying costs, beside the month
    json.dumps(result, allow_nan=False)
    text = markdown_diff(result)
    assert line is not None and line in text
    assert text.count(_CAVEAT) == 1


@pytest.mark.parametrize(
    ("old", "new", "row"),
    [
        # newuser30 item 4: the cloud's headline month read a bare 0 beside the bought fleet's $2,080.34
        pytest.param(TRAIN_BM, TRAIN_AZ, {"old": 2080.34, "new": 773.24, "delta": -1307.1}, id="bought-vs-runs"),
        pytest.param(
            _totals(capex_usd=None, usd_per_month=5000.0, training_usd_per_job=100.0, training_usd_per_month=400.0),
            _totals(capex_usd=None, usd_per_month=5000.0, training_usd_per_job=100.0),
            {"old": 5400.0, "new": None, "delta": None},
            id="runs-a-month-no-longer-given",
        ),
        pytest.param(
            TRAIN_BM,
            _totals(capex_usd=None, usd_per_month=5000.0, training_usd_per_job=100.0),
            None,
            id="no-runs-a-month-either-side",
        ),
    ],
)
def test_the_month_with_the_rented_runs_is_a_row(old: dict[str, Any], new: dict[str, Any], row: dict[str, Any] | None) -> None:
    totals = diff_plans(old, new)["totals"]
    assert totals.get("usd_per_month_with_runs") == row


# ---------------------------------------------------------------- newuser30 item 12: a run on servers paid by the month

#: full8 of newuser30's lab-bm.yaml: 6.66 h a run on the owned 4 x A100 server, $603.49/month to run it
_OWNED = {"hours": 6.66, "usd_per_job": 5.51, "capex_usd": 0, "opex_usd_per_month": 603.49, "usd_per_month": 603.49}


@pytest.mark.parametrize(
    ("details", "said", "unsaid"),
    [
        pytest.param(
            _OWNED, "6.66 h a run, on $603.49/month of owned servers' running cost, paid whatever runs", "$5.51", id="owned"
        ),
        # newuser30 item 12: its runs a month, where the workload gives them, read as the rented side's do
        pytest.param(
            {**_OWNED, "runs_per_month": 4.0},
            "6.66 h a run, on $603.49/month of owned servers' running cost, paid whatever runs, 4.00 runs a month",
            "$5.51",
            id="owned-runs-a-month",
        ),
        # its hours' share of a month of servers bought: 13.23 / 730 x $1,447.55 = $26.23 "a run"
        pytest.param(
            {"hours": 13.23, "usd_per_job": 26.23, "capex_usd": 37271, "opex_usd_per_month": 412.24, "usd_per_month": 1447.55},
            "13.23 h a run, on $1,447.55/month of servers bought, paid whatever runs",
            "$26.23",
            id="bought",
        ),
        # a reservation bills its whole term (newuser28 item 6): no capex, a month, no hourly rate
        pytest.param(
            {"hours": 5.0, "usd_per_job": 275.21, "capex_usd": None, "opex_usd_per_month": 40180.0, "usd_per_month": 40180.0},
            "5.00 h a run, on $40,180.00/month of servers rented by the month, paid whatever runs",
            "$275.21",
            id="reserved",
        ),
        # a job of a run_after sequence: its share of the sequence's servers (lab-bm-chain.yaml's full8)
        pytest.param(
            {**_OWNED, "usd_per_month": 233.87, "opex_usd_per_month": 233.87, "cost_share": "6.7 of the 17.2 h"},
            "6.66 h a run, on its share of $233.87/month of owned servers' running cost, paid whatever runs",
            "$5.51",
            id="share-of-a-sequence",
        ),
        # rented per run: the run's cost is real, and stays (lab-az.yaml's full8)
        pytest.param(
            {
                "hours": 1.27,
                "usd_per_job": 60.76,
                "capex_usd": None,
                "usd_per_hour": 47.84,
                "runs_per_month": 4.0,
                "usd_per_month_of_runs": 243.04,
            },
            "1.27 h a run, $60.76 a run, 4.00 runs a month",
            "/month",
            id="rented-per-run",
        ),
        # a spec.json may hold anything: a month that is no figure reads as before
        pytest.param({**_OWNED, "usd_per_month": "a lot"}, "6.66 h a run, $5.51 a run", "/month", id="month-no-figure"),
        pytest.param({**_OWNED, "usd_per_month": -603.49}, "6.66 h a run, $5.51 a run", "/month", id="negative-month"),
    ],
)
def test_a_run_on_servers_paid_by_the_month_says_their_month(details: dict[str, Any], said: str, unsaid: str) -> None:
    job = _one(rate=None)
    job["deployments"][0]["details"] = details
    result = diff_plans(_fleet([], []), job)
    text = markdown_diff(result)
    (row,) = [line for line in text.splitlines() if line.startswith("| `chat` |") and "h a run" in line]
    assert said in row and unsaid not in row
    assert result["deployments"][0]["new"]["training"]["usd_per_job"] == details["usd_per_job"]  # the JSON keeps it
    json.dumps(result, allow_nan=False)


def test_a_run_on_servers_paid_by_the_month_through_a_spec_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same from two spec.json files through the command: bought (old) against rented per run (new)."""
    job = _one(rate=None)
    job["deployments"][0]["details"] = _OWNED
    rented = _one(rate=None)
    rented["deployments"][0]["details"] = {"hours": 1.27, "usd_per_job": 60.76, "usd_per_hour": 47.84, "runs_per_month": 4}
    (tmp_path / "old.json").write_text(_spec(job))
    (tmp_path / "new.json").write_text(_spec(rented))
    with pytest.raises(SystemExit) as done:
        main(["diff", str(tmp_path / "old.json"), str(tmp_path / "new.json")])
    assert done.value.code in (0, None)
    out = capsys.readouterr().out
    assert "6.66 h a run, on $603.49/month of owned servers' running cost, paid whatever runs" in out
    assert "1.27 h a run, $60.76 a run, 4 runs a month" in out


# ---------------------------------------------------------------- fuzz22 item 5: model files at the revision

REFERENCE = Path(__file__).parent / "reference" / "configs"


def test_the_base_is_planned_from_the_model_files_at_the_revision(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A workload naming a local model directory: the working tree swaps its config.json from 8B to 70B; at the base
    the 8B one is read, so the diff shows the fleet growing (it read "unchanged", both sides from the working tree)."""
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "m").mkdir()
    (tmp_path / "w" / "m" / "config.json").write_text((REFERENCE / "llama-3.1-8b" / "config.json").read_text())
    (tmp_path / "w" / "w.yaml").write_text(VALID.replace("model: meta-llama/Llama-3.1-8B-Instruct", "model: ./m"))
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "base")
    (tmp_path / "w" / "m" / "config.json").write_text((REFERENCE / "llama-3.1-70b" / "config.json").read_text())
    monkeypatch.chdir(tmp_path)
    result = compare_with_base("HEAD", ["w/w.yaml"])
    (entry,) = result["files"]
    assert entry["status"] == "changed"
    gpus = entry["diff"]["totals"]["gpus"]
    assert gpus["new"] > gpus["old"]
    # the base, alone, plans as it did when committed (the 8B model): the same figure as a plan of the 8B file
    _git(tmp_path, "stash", "-q")
    from generator.api import plan_file

    assert gpus["old"] == plan_file("w/w.yaml")[1].to_dict()["totals"]["gpus"]


def _committed_model_repo(tmp_path: Path, model_dir: str, link: str | None = None) -> None:
    """A repository whose workload ``w/w.yaml`` names ``./m``: the 8B config at ``w/<model_dir>``, ``w/m`` a link to it."""
    (tmp_path / "w" / model_dir).mkdir(parents=True)
    (tmp_path / "w" / model_dir / "config.json").write_text((REFERENCE / "llama-3.1-8b" / "config.json").read_text())
    if link is not None:
        (tmp_path / "w" / "m").symlink_to(link)
    (tmp_path / "w" / "w.yaml").write_text(VALID.replace("model: meta-llama/Llama-3.1-8B-Instruct", "model: ./m"))
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "base")


@pytest.mark.parametrize(
    ("model_dir", "link", "cwd", "path"),
    [
        # fuzz23 item 1: git archive read the top's paths against a subfolder, so the base's model was "not found"
        pytest.param("m", None, "w", "w.yaml", id="from-a-subfolder"),
        pytest.param("m", None, "w", "../w/w.yaml", id="from-a-subfolder-by-a-path-up"),
        # fuzz23 item 2: only the link was copied, not the directory it points to
        pytest.param("models/real", "models/real", ".", "w/w.yaml", id="model-directory-through-a-link"),
        pytest.param("models/real", "models/real", "w", "w.yaml", id="through-a-link-from-a-subfolder"),
    ],
)
def test_an_unchanged_workload_with_a_local_model_reads_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model_dir: str, link: str | None, cwd: str, path: str
) -> None:
    """Unchanged at HEAD, the file read "fixed" with its whole fleet counted as added (+GPUs, +$, exit 0)."""
    _committed_model_repo(tmp_path, model_dir, link)
    monkeypatch.chdir(tmp_path / cwd)
    (entry,) = compare_with_base("HEAD", [path])["files"]
    assert entry["status"] == "unchanged", entry
    assert "base_errors" not in entry


def test_a_change_of_provider_is_said_and_not_counted_as_replacements(tmp_path: Path) -> None:
    """newuser26 item 9: AWS -> Azure read "Node pools replaced, not resized: 1 node(s) deleted and 1 created"."""
    from generator.api import plan_file

    aws = VALID.replace("gpus: [l40s-48gb]", "provider: aws")
    (tmp_path / "aws.yaml").write_text(aws)
    (tmp_path / "azure.yaml").write_text(aws.replace("provider: aws", "provider: azure"))
    old, new = (plan_file(str(tmp_path / f"{p}.yaml"))[1].to_dict() for p in ("aws", "azure"))
    result = diff_plans(old, new)
    assert result["provider_change"] == {"old": "aws", "new": "azure"} and result["replacements"] == []
    text = markdown_diff(result)
    assert "**Provider changes: aws → azure.**" in text and "replaced, not resized" not in text
    assert "provider_change" not in diff_plans(old, old)


def _said(*findings: Any) -> dict[str, Any]:
    plan = {"totals": {"gpus": 1}, "pools": [], "deployments": []}
    return {**plan, "findings": list(findings)}


def test_the_warnings_a_change_brings_are_listed() -> None:
    """newuser28 item 4: NEW's plan warned that what it sized is not what runs; the comment said "85% of capacity"."""
    kept = {"level": "warning", "code": "not-on-demand", "message": "old figures", "path": "hardware"}
    moved = {**kept, "message": "new figures"}  # the same warning with other figures: not new
    fresh = {"level": "warning", "code": "precision-not-in-checkpoint", "message": "*sized* at nvfp4", "path": "x[0]"}
    info = {"level": "info", "code": "global-batch-from-layout", "message": "m"}
    result = diff_plans(_said(kept), _said(moved, fresh, info, "junk", {"level": 1}))
    assert result["new_findings"] == [fresh]
    text = markdown_diff(result)
    assert "- **warning** `precision-not-in-checkpoint` (x\\[0\\]): \\*sized\\* at nvfp4" in text
    assert "new_findings" not in diff_plans(_said(fresh), _said(fresh))
    many = [{**fresh, "path": f"p{i}"} for i in range(30)]
    assert len(diff_plans(_said(), _said(*many))["new_findings"]) == 20


def test_a_deployment_added_before_others_brings_none_of_their_warnings() -> None:
    """newuser83 item 3: a chat service added second in the list moved the Mistral service's and the fine-tune's
    warnings from deployments[1] / deployments[3] to deployments[2] / deployments[4], and the diff listed all of them as
    new in NEW's plan; a deployment's fields are compared by its name."""

    def said(names: list[str], *findings: Any) -> dict[str, Any]:
        return {**_said(*findings), "deployments": [{"name": n} for n in names]}

    def warned(code: str, path: str) -> dict[str, str]:
        return {"level": "warning", "code": code, "message": "m", "path": path}

    old = said(["reasoning", "rag", "sft"], warned("model-config-only", "deployments[1].model"), warned("h", "deployments[2]"))
    new = said(
        ["reasoning", "chat", "rag", "sft"],
        warned("model-config-only", "deployments[2].model"),
        warned("h", "deployments[3]"),
        warned("model-config-only", "deployments[1].model"),  # the added service's own: new
        warned("h", "deployments[9]"),  # no such deployment: compared as written, and new
    )
    assert [f["path"] for f in new_findings(old, new)] == ["deployments[1].model", "deployments[9]"]
    # the same index naming another deployment is a new warning (rag removed: sft moves into its place)
    moved = said(["reasoning", "sft"], warned("model-config-only", "deployments[1].model"))
    assert [f["path"] for f in new_findings(old, moved)] == ["deployments[1].model"]


# ---------------------------------------------------------------- newuser31: what a diff compares and says

#: newuser31's small AWS service with the Kubernetes outputs (Karpenter NodePools): L40S, or H100 on a p5.4xlarge.
AWS_K8S = VALID.replace("gpus: [l40s-48gb]", "provider: aws\n  gpus: [l40s-48gb]\noutputs: [kubernetes]")


@pytest.mark.parametrize(
    "args",
    [pytest.param(("old.yaml", "new.yaml"), id="two-workloads"), pytest.param(("--base", "HEAD", "w.yaml"), id="base")],
)
def test_both_sides_are_planned_as_deployed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> None:
    """newuser31 item 1: L40S -> H100 moves the pool to p5.4xlarge, which Karpenter cannot launch (the EC2 API says 0
    GPUs); plan and render warn (karpenter-api-gpu-count), the diff of the two workloads and the PR comment did not,
    since they planned without ``deployed`` (the diff of the two rendered spec.json did say it)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "old.yaml").write_text(AWS_K8S)
    (tmp_path / "w.yaml").write_text(AWS_K8S)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "base")
    # named in hardware.platforms: with Karpenter the only provisioner the planner otherwise leaves p5.4xlarge out
    # (newuser81 item 1)
    h100 = AWS_K8S.replace("gpus: [l40s-48gb]", "gpus: [h100-sxm5-80gb]\n  platforms: [aws-p5-4xlarge]")
    (tmp_path / "new.yaml").write_text(h100)
    (tmp_path / "w.yaml").write_text(h100)
    code, out, err = specgen(capsys, "diff", *args, "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    diff = data["files"][0]["diff"] if "files" in data else data
    assert [f["code"] for f in diff["new_findings"]] == ["karpenter-api-gpu-count"]
    _, md, _ = specgen(capsys, "diff", *args)
    assert "- **warning** `karpenter-api-gpu-count` (kubernetes): EC2 DescribeInstanceTypes reports" in md


def _gke(zone: str) -> str:
    return VALID.replace("gpus: [l40s-48gb]", "provider: gcp\n  gpus: [l4-24gb]") + (
        f"kubernetes: {{gcp_project: acme-ml, location: us-central1, zone: {zone}}}\n"
    )


def test_a_gke_zone_move_is_said_like_a_region_move(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """newuser31 item 14: us-central1-a -> us-central1-c moves every GPU pool's nodeLocations (GKE drains and creates
    each node there); the diff read "No change to the fleet."."""
    from generator.fleet_diff import load_plan_dict
    from generator.pr_diff import compare_two

    for name, zone in (("a", "us-central1-a"), ("c", "us-central1-c")):
        (tmp_path / f"{name}.yaml").write_text(_gke(zone))
    assert load_plan_dict(str(tmp_path / "a.yaml"))["zone"] == "us-central1-a"
    result = compare_two(str(tmp_path / "a.yaml"), str(tmp_path / "c.yaml"))
    assert result["zone_change"] == {"old": "us-central1-a", "new": "us-central1-c"}
    text = markdown_diff(result)
    assert (
        "**Zone changes: us-central1-a → us-central1-c.** The GPU node pools move to another zone of the cluster "
        "(`nodeLocations`): each of their nodes is drained, deleted and created again there, none kept in place; check "
        "that the zone offers each machine type planned.\n"
    ) in text
    assert "The same pools and deployments where they move to." in text and "No change to the fleet." not in text
    assert "zone_change" not in compare_two(str(tmp_path / "a.yaml"), str(tmp_path / "a.yaml"))
    # diff --base: the file changes (it reads "unchanged" where nothing but its zone moved)
    monkeypatch.chdir(tmp_path)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "a.yaml")
    _git(tmp_path, "commit", "-qm", "base")
    (tmp_path / "a.yaml").write_text(_gke("us-central1-c"))
    (entry,) = compare_with_base("HEAD", ["a.yaml"])["files"]
    assert entry["status"] == "changed" and "zone_change" in entry["diff"]


@pytest.mark.parametrize(
    ("zones", "said"),
    [
        pytest.param(("us-central1-a", "us-central1-a"), False, id="same-zone"),
        pytest.param((None, "us-central1-c"), False, id="a-spec-json-records-no-zone"),
        pytest.param(("us-central1-a", "us-central1-c"), True, id="moved"),
    ],
)
def test_a_zone_is_compared_where_both_sides_name_one(zones: tuple[str | None, str], said: bool) -> None:
    old, new = _one(), _one()
    for plan, zone in zip((old, new), zones, strict=True):
        plan.update(region="us-central1", **({"zone": zone} if zone else {}))
    assert ("zone_change" in diff_plans(old, new)) is said


def _context(fleet: dict[str, Any], tokens: int, fit: float) -> dict[str, Any]:
    fleet["deployments"][0]["details"].update(context_tokens=tokens, max_concurrency_per_replica=fit)
    return fleet


def test_a_context_change_alone_is_a_deployment_change() -> None:
    """newuser31 item 6: chat70's max_context_tokens 32,768 -> 131,072 (vLLM's max_model_len), 38.27 -> 9.57 requests of
    the whole context in a replica's KV cache: "No change to the fleet." and JSON ``"deployments": []``."""
    result = diff_plans(_context(_one(), 32768, 38.27), _context(_one(), 131072, 9.57))
    (row,) = result["deployments"]
    assert (row["old"]["max_model_len"], row["new"]["max_model_len"]) == (32768, 131072)
    assert row["new"]["serving"]["max_concurrency_at_max_model_len"] == 9.57
    text = markdown_diff(result)
    assert "No change to the fleet." not in text
    engine = "max_num_seqs 1,024, max_num_batched_tokens 8,192, at most 17.75 req/s a replica"
    assert f"; vllm, KV fp8, max_model_len 32,768 (38.27 such sequences a replica), {engine} |" in text
    assert f"; vllm, KV fp8, max_model_len 131,072 (9.57 such sequences a replica), {engine} |" in text


#: tune8b of newuser31's eks.yaml, as its spec.json holds it: QLoRA on Unsloth, 8 x 1 x 4 = 32 sequences a step.
_TUNE = {
    "hours": 11.61,
    "usd_per_job": 86.43,
    "usd_per_hour": 7.44,
    "runs_per_month": 4.0,
    "global_batch_size": 32,
    "method": "qlora",
    "framework": "unsloth",
    "optimizer": "adamw-8bit",
    "lora_rank": 16,
    "sequence_length": 4096,
    "micro_batch_size": 8,
    "gradient_accumulation_steps": 1,
    "data_parallel": 4,
    "zero_stage": 0,
}


@pytest.mark.parametrize(
    ("change", "said"),
    [
        pytest.param(
            {},
            "qlora rank 16, unsloth, adamw-8bit, 4,096-token sequences, micro-batch 8 x 1 accumulation x 4 DP",
            id="unsloth-qlora",
        ),
        # item 6: method lora, framework torchtune (FSDP: ZeRO-3) read as hours moving for no reason
        pytest.param(
            {"method": "lora", "framework": "torchtune", "optimizer": "adamw-bf16", "zero_stage": 3},
            "lora rank 16, torchtune, adamw-bf16, 4,096-token sequences, micro-batch 8 x 1 accumulation x 4 DP, ZeRO-3",
            id="torchtune-lora",
        ),
        pytest.param(
            {
                "method": "full",
                "lora_rank": None,
                "sequence_length": 8192,
                "micro_batch_size": 2,
                "gradient_accumulation_steps": 4,
                "zero_stage": 2,
            },
            "full, unsloth, adamw-8bit, 8,192-token sequences, micro-batch 2 x 4 accumulation x 4 DP, ZeRO-2",
            id="full-zero2",
        ),
        pytest.param({"framework": "trl"}, "qlora rank 16, trl, adamw-8bit, 4,096-token", id="framework-alone"),
        # review40 item 12: checkpointing and paged states, which alone move a job's fleet
        pytest.param(
            {"gradient_checkpointing": "selective", "paged_optimizer": True},
            "qlora rank 16, unsloth, adamw-8bit, 4,096-token sequences, micro-batch 8 x 1 accumulation x 4 DP, selective "
            "checkpointing, optimizer states paged",
            id="checkpointing-paged",
        ),
    ],
)
def test_a_training_row_says_how_the_job_trains(change: dict[str, Any], said: str) -> None:
    old, new = _one(rate=None), _one(rate=None)
    old["deployments"][0]["details"] = dict(_TUNE)
    new["deployments"][0]["details"] = {k: v for k, v in {**_TUNE, **change}.items() if v is not None}
    result = diff_plans(old, new)
    if not change:
        assert result["deployments"] == []
        result = diff_plans(_fleet([], []), new)
    (row,) = [line for line in markdown_diff(result).splitlines() if line.startswith("| `chat` |") and "h a run" in line]
    assert f"(8 GPUs); {said}" in row.split(" | ")[-1]
    assert row.endswith("; 11.61 h a run, $86.43 a run, 4.00 runs a month, a step of 32 sequences |")


_PRICE_REGION = "pool {} is priced at the us-east-1 on-demand rate of aws-p5-48xlarge; the cluster is in {}, whose GPU VM prices differ and are not in the catalog"  # noqa: E501


def _priced(region: str | None, elsewhere: bool = True, **totals: float) -> dict[str, Any]:
    """``_one()`` with a region and the planner's price-region finding on its pool where ``elsewhere``."""
    fleet = {**_one(), "region": region, "totals": {"usd_per_month": 40179.2, **totals}}
    found = {"level": "info", "code": "price-region", "message": _PRICE_REGION.format("chat", region)}
    return fleet | ({"findings": [found]} if elsewhere else {})


_NEW_ELSEWHERE = (
    "NEW's cost is at us-east-1 on-demand list prices for `chat`: its cluster is in eu-west-1, whose GPU VM prices are "
    "not in the catalog"
)


@pytest.mark.parametrize(
    ("old", "new", "delta", "said"),
    [
        # newuser31 item 8: us-east-1 -> eu-west-1 read "usd_per_month ... 0.00"
        pytest.param(
            _priced("us-east-1", False),
            _priced("eu-west-1"),
            None,
            f"{_NEW_ELSEWHERE}, so the change in cost is not known (`-`); give eu-west-1's rates under `prices:` to compare.",
            id="region-move",
        ),
        # both in eu-west-1 at us-east-1's rates (a rate change): a change at those prices, said
        pytest.param(
            _priced("eu-west-1"),
            _priced("eu-west-1", usd_per_month=80358.4),
            40179.2,
            f"{_NEW_ELSEWHERE}.\n\nBoth sides are priced at the same region's rates: the change in cost is at those prices.",
            id="same-region-both-elsewhere",
        ),
        # the PR gives eu-west-1's rate under prices: the old side's were us-east-1's
        pytest.param(
            _priced("eu-west-1"),
            _priced("eu-west-1", False, usd_per_month=45000.0),
            None,
            "OLD's and NEW's costs are at different regions' prices: the change in cost is not known (`-`).",
            id="prices-given-now",
        ),
        pytest.param(_fleet([], []), _priced("eu-west-1"), 40179.2, f"{_NEW_ELSEWHERE}.\n", id="added"),
        pytest.param(_priced("us-east-1", False), _priced("us-east-1", False), 0.0, None, id="priced-at-home"),
    ],
)
def test_a_cost_at_another_regions_list_prices_is_said(
    old: dict[str, Any], new: dict[str, Any], delta: float | None, said: str | None
) -> None:
    old.setdefault("totals", {}).setdefault("usd_per_month", 0.0)
    result = diff_plans(old, new)
    assert result["totals"]["usd_per_month"]["delta"] == delta
    text = markdown_diff(result)
    assert ("priced_elsewhere" in result) is bool(said)
    if said:
        assert said in text
    json.dumps(result, allow_nan=False)


def test_only_the_rows_a_pool_priced_elsewhere_counts_in_are_unknown() -> None:
    """A job rented per run priced elsewhere: its training rows are unknown, the month of priced-here servers is not."""
    old, new = _priced("us-east-1", False), _priced("eu-west-1")
    for plan in (old, new):
        plan["pools"][0]["per_job"] = True
        plan["totals"].update(training_usd_per_job=86.43, training_usd_per_month=345.72, usd_per_month=0.0)
    totals = diff_plans(old, new)["totals"]
    assert {key: row["delta"] for key, row in totals.items() if "usd" in key} == {
        "usd_per_month": 0.0,
        "training_usd_per_job": None,
        "training_usd_per_month": None,
        "usd_per_month_with_runs": None,
    }


def test_the_pr_headline_says_a_cost_change_not_known(pr: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """newuser31 item 8 through git: a's cluster moves us-east-1 -> eu-west-1; the headline's cost change reads `-`."""
    aws = _workload("a").replace("gpus: [l40s-48gb]", "provider: aws\n  gpus: [l40s-48gb]")
    (pr / "a.yaml").write_text(aws + "kubernetes: {location: us-east-1}\n")
    _git(pr, "commit", "-qam", "aws")
    (pr / "a.yaml").write_text(aws + "kubernetes: {location: eu-west-1}\n")
    # a alone: b is bare metal, another cluster, which diff refuses beside a as render does (newuser33 item 13)
    code, md, err = specgen(capsys, "diff", "--base", "HEAD", "a.yaml")
    assert code == 0, err
    # a's L40S ($1,358.53 at us-east-1's list price)
    assert "| **cost (USD/month)** | 1,358.53 | 1,358.53 | - |" in md
    assert (
        "The change in cost is not known (`-`): `a.yaml` prices pools at another region's on-demand list prices than "
        "their cluster's, which the catalog does not have (see below)."
    ) in md
    assert "NEW's cost is at us-east-1 on-demand list prices for `chat_l40s_48gb`: its cluster is in eu-west-1" in md


def test_the_diff_reads_the_price_region_finding_the_planner_writes(tmp_path: Path) -> None:
    """The diff knows a cost is at another region's prices from the planner's price-region finding: the two agree on
    its words (a pool in eu-west-1 priced at us-east-1's catalog rate)."""
    from generator.api import plan_file
    from generator.fleet_diff import _PRICED_AT

    path = tmp_path / "eu.yaml"
    path.write_text(
        "version: 1\nname: eu\ndeployments:\n  - name: chat\n    model: meta-llama/Llama-3.1-8B-Instruct\n"
        "    inference: {max_context_tokens: 8192, requests_per_second: 2}\n"
        "hardware: {provider: aws, gpus: [l40s-48gb]}\nkubernetes: {location: eu-west-1}\n"
    )
    _, plan = plan_file(str(path))
    (found,) = [f for f in plan.findings if f.code == "price-region"]
    match = _PRICED_AT.match(found.message)
    assert match is not None and (match[1], match[2]) == (plan.pools[0].name, "us-east-1")


def test_paging_the_optimizer_states_is_a_change_of_the_job() -> None:
    """review40 item 12: a workload paging its states read the same job in both rows."""
    old, new = _one(rate=None), _one(rate=None)
    old["deployments"][0]["details"] = {**_TUNE, "gradient_checkpointing": "none"}
    new["deployments"][0]["details"] = {**_TUNE, "gradient_checkpointing": "full", "paged_optimizer": True}
    said = markdown_diff(diff_plans(old, new))
    assert "checkpointing none → full" in said and "optimizer states paged off → on" in said
