"""hostile84: bad input to ``specgen diff`` and the Hub client, each refused with its file, line, field and exit code.

Item 1: a spec.json's shape errors (a field of the wrong type, a missing key, a list where an object belongs) named the
file and the field but no line; ``plan.findings``, a pool's ``deployments``, ``capex_usd`` and ``opex_usd_per_month``
and the totals' ``capex_usd`` / ``opex_usd_per_month`` were read without a check (capex "x" read "No change").
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generator.errors import InputError
from generator.fleet_diff import plan_from_spec
from generator.json_positions import locate, value_offsets
from tests.conftest import REPO
from tests.helpers import specgen_in_process as specgen
from tests.test_diff_base_spec import _git

GOOD = json.loads((REPO / "tests" / "golden" / "batch-jobs-gke" / "spec.json").read_text())
#: Stands for the value an error is placed at, in the oracle's copy of the file.
_MARK = "@@hostile84-here@@"

Step = str | int


def _at(data: Any, steps: tuple[Step, ...]) -> Any:
    for step in steps:
        data = data[step]
    return data


def _put(value: Any, *steps: Step) -> Callable[[dict[str, Any]], None]:
    def edit(spec: dict[str, Any]) -> None:
        _at(spec, steps[:-1])[steps[-1]] = value

    return edit


def _drop(*steps: Step) -> Callable[[dict[str, Any]], None]:
    def edit(spec: dict[str, Any]) -> None:
        del _at(spec, steps[:-1])[steps[-1]]

    return edit


def _where(spec: dict[str, Any], steps: tuple[Step, ...]) -> tuple[int, int]:
    """The oracle: line and column of the value at ``steps`` in ``json.dumps(spec, indent=2)``.

    That value is replaced by a marker string in a copy: what precedes it, and so its offset, is the same text.
    """
    marked = copy.deepcopy(spec)
    if steps:
        _at(marked, steps[:-1])[steps[-1]] = _MARK
    else:
        marked = _MARK  # type: ignore[assignment]
    text = json.dumps(marked, indent=2)
    at = text.index(json.dumps(_MARK))
    return text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)


P = ("plan",)
#: (edit of the whole spec.json, where the error is placed (steps), what it says after ``not a specgen spec.json: ``).
CASES: list[tuple[str, Callable[[dict[str, Any]], None], tuple[Step, ...], str]] = [
    # a field of the wrong type
    ("nodes-text", _put("x", *P, "pools", 0, "nodes"), (*P, "pools", 0, "nodes"), "'plan.pools[0].nodes' must be a number"),
    ("gpu-id-number", _put(5, *P, "pools", 1, "node", "gpu_id"), (*P, "pools", 1, "node", "gpu_id"),
     "'plan.pools[1].node.gpu_id' must be a string, got 5"),
    ("tp-zero", _put(0, *P, "deployments", 1, "tp"), (*P, "deployments", 1, "tp"),
     "'plan.deployments[1].tp' must be a whole number of at least 1, got 0"),
    ("provider-mars", _put("mars", *P, "provider"), (*P, "provider"), "'plan.provider' must be one of"),
    ("hours-text", _put("x", *P, "deployments", 0, "details", "hours_per_run"),
     (*P, "deployments", 0, "details", "hours_per_run"), "'plan.deployments[0].details.hours_per_run' must be a number"),
    ("echoed-list", _put([1], *P, "deployments", 0, "details", "max_num_seqs"),
     (*P, "deployments", 0, "details", "max_num_seqs"), "must be a number or a short text, got [1]"),
    ("owned-hosts-entry", _put(["a", 5], *P, "pools", 0, "owned_hosts"), (*P, "pools", 0, "owned_hosts", 1),
     "'plan.pools[0].owned_hosts[1]' must be a host name"),
    ("labels-number", _put(5, *P, "pools", 0, "labels"), (*P, "pools", 0, "labels"), "'plan.pools[0].labels' must be"),
    # a list where an object belongs, an object where a list belongs
    ("plan-list", _put([], *P), P, "'plan' must be an object, got a list"),
    ("totals-list", _put([1], *P, "totals"), (*P, "totals"), "'plan.totals' must be an object"),
    ("pools-object", _put({}, *P, "pools"), (*P, "pools"), "'plan.pools' must be a list"),
    ("node-list", _put([], *P, "pools", 0, "node"), (*P, "pools", 0, "node"), "'plan.pools[0].node' must be an object"),
    # a missing key: at the object that lacks it
    ("no-totals", _drop(*P, "totals"), P, "'plan' has no 'totals'"),
    ("no-gpu-id", _drop(*P, "pools", 0, "node", "gpu_id"), (*P, "pools", 0, "node"), "'plan.pools[0].node' has no 'gpu_id'"),
    ("no-details", _drop(*P, "deployments", 1, "details"), (*P, "deployments", 1), "'plan.deployments[1]' has no 'details'"),
    # what two fields say together
    ("pool-twice", lambda s: s["plan"]["pools"].append(copy.deepcopy(s["plan"]["pools"][0])), (*P, "pools", 2, "name"),
     "'plan.pools[2].name' 'summarize_h100_sxm5_80gb' is given twice"),
    ("totals-disagree", _put(99, *P, "totals", "nodes"), (*P, "totals", "nodes"),
     "'plan.totals.nodes' is 99, but the pools of 'plan.pools' add up to 2"),
    ("min-above-nodes", _put(5, *P, "pools", 0, "min_nodes"), (*P, "pools", 0, "min_nodes"),
     "'plan.pools[0].min_nodes' is 5, more than its 1 nodes"),
    # hostile84 item 1: read unchecked before
    ("findings-text", _put("abc", *P, "findings"), (*P, "findings"), "'plan.findings' must be a list, got 'abc'"),
    ("findings-null", _put(None, *P, "findings"), (*P, "findings"), "'plan.findings' must be a list, got None"),
    ("finding-number", _put([5], *P, "findings"), (*P, "findings", 0), "'plan.findings[0]' must be an object, got a number"),
    ("finding-level-5", _put(5, *P, "findings", 0, "level"), (*P, "findings", 0, "level"),
     "'plan.findings[0].level' must be a string, got 5"),
    ("finding-level-loud", _put("loud", *P, "findings", 1, "level"), (*P, "findings", 1, "level"),
     "'plan.findings[1].level' must be one of info, warning, error, got 'loud'"),
    ("finding-no-code", _drop(*P, "findings", 0, "code"), (*P, "findings", 0), "'plan.findings[0]' has no 'code'"),
    ("finding-path-number", _put(5, *P, "findings", 0, "path"), (*P, "findings", 0, "path"),
     "'plan.findings[0].path' must be a string, got 5"),
    ("finding-code-long", _put("c" * 500, *P, "findings", 0, "code"), (*P, "findings", 0, "code"),
     "'plan.findings[0].code' must be a number or a short text"),
    ("pool-deployments-text", _put("synth", *P, "pools", 1, "deployments"), (*P, "pools", 1, "deployments"),
     "'plan.pools[1].deployments' must be a list of deployment names, got 'synth'"),
    ("pool-deployments-unknown", _put(["synth", "ghost"], *P, "pools", 1, "deployments"),
     (*P, "pools", 1, "deployments", 1), "'plan.pools[1].deployments[1]' names 'ghost', which 'plan.deployments' does not"),
    ("pool-deployments-number", _put([7], *P, "pools", 1, "deployments"), (*P, "pools", 1, "deployments", 0),
     "'plan.pools[1].deployments[0]' names 7"),
    ("pool-opex-text", _put("x", *P, "pools", 0, "opex_usd_per_month"), (*P, "pools", 0, "opex_usd_per_month"),
     "'plan.pools[0].opex_usd_per_month' must be a number from 0 to 10^12, got 'x'"),
    ("pool-capex-negative", _put(-1, *P, "pools", 0, "capex_usd"), (*P, "pools", 0, "capex_usd"),
     "'plan.pools[0].capex_usd' must be a number from 0 to 10^12, got -1"),
    ("totals-opex-list", _put([1], *P, "totals", "opex_usd_per_month"), (*P, "totals", "opex_usd_per_month"),
     "'plan.totals.opex_usd_per_month' must be a number from 0 to 10^12, got [1]"),
    ("totals-capex-text", _put("x", *P, "totals", "capex_usd"), (*P, "totals", "capex_usd"),
     "'plan.totals.capex_usd' must be a number from 0 to 10^12, got 'x'"),
    ("totals-capex-bool", _put(True, *P, "totals", "capex_usd"), (*P, "totals", "capex_usd"),
     "'plan.totals.capex_usd' must be a number from 0 to 10^12, got True"),
    ("gpu-sharing-list", _put([1], *P, "pools", 0, "gpu_sharing"), (*P, "pools", 0, "gpu_sharing"),
     "'plan.pools[0].gpu_sharing' must be a text of 1 to 200 characters"),
    ("gpu-sharing-bool", _put(True, *P, "pools", 0, "gpu_sharing"), (*P, "pools", 0, "gpu_sharing"),
     "'plan.pools[0].gpu_sharing' must be a text of 1 to 200 characters"),
]  # fmt: skip


@pytest.mark.parametrize(("edit", "steps", "said"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_spec_json_shape_error_names_file_line_column_and_field(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    edit: Callable[[dict[str, Any]], None],
    steps: tuple[Step, ...],
    said: str,
) -> None:
    spec = copy.deepcopy(GOOD)
    edit(spec)
    (tmp_path / "old.json").write_text(json.dumps(GOOD, indent=2))
    (tmp_path / "new.json").write_text(json.dumps(spec, indent=2))
    line, column = _where(spec, steps)
    code, out, err = specgen(capsys, "diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"))
    assert (code, out) == (1, ""), err
    head = f"specgen: error: {tmp_path / 'new.json'}:{line}:{column}: not a specgen spec.json: "
    assert err.startswith(head) and said in err, err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    ("text", "place", "said"),
    [
        ('{"generator": "x"}', (1, 1), "not a specgen spec.json (no 'plan')"),
        ("[1, 2]", (1, 1), "not a specgen spec.json (no 'plan')"),
        ('\n\n  {"plan": 5}', (3, 12), "'plan' must be an object"),
        # a byte-order mark counts as a column on line 1, as every other error of a spec.json counts it
        ('\ufeff{"plan": {"totals": {}}}', (1, 11), "'plan' has no 'pools'"),
        ('{"plan":\n\t{"totals": {}, "pools": [], "deployments": []}}', (2, 13), "'plan.totals' has no 'gpus'"),
        # a key holding a dot, a bracket or a quote: the nearest enclosing value found is named
        (
            '{"plan": {"totals": {"gpus": 0, "nodes": 0, "racks": 0, "power_w": 0, "usd_per_month": null}, "pools": [],'
            ' "deployments": [{"name": "a", "model_id": null, "precision": null, "pool": null, "tp": 1, "pp": 1,'
            ' "replicas": 1, "gpus": 0, "details": {"inputs": {"a.b\'c": [[1]]}}}]}}',
            (1, 255),
            "details.inputs",
        ),
        # a lone surrogate escape is valid JSON; echoed, it stopped the diff with a UnicodeEncodeError traceback
        ('{"plan": [[[["\\udc00"]]]]}', (1, 14), "'plan[0][0][0][0]' holds an unpaired surrogate escape"),
        ('\ufeff{"plan": {"x": "\\ud83d"}}', (1, 17), "'plan.x' holds an unpaired surrogate escape"),
        ('{"plan": {"x\\udfff": 1}}', (1, 10), "'plan' holds an unpaired surrogate escape"),
        ("[" * 900 + '"\\ud800"' + "]" * 900, (1, 901), "holds an unpaired surrogate escape"),
    ],
    ids=["no-plan", "a-list", "indented", "bom", "tab", "odd-key", "surrogate", "surrogate-bom", "surrogate-key", "deep"],
)
def test_a_spec_json_shape_error_is_placed_in_any_layout(text: str, place: tuple[int, int], said: str) -> None:
    with pytest.raises(InputError) as caught:
        plan_from_spec(text, "s.json")
    assert caught.value.location is not None
    assert (caught.value.location.file, caught.value.location.line, caught.value.location.column) == ("s.json", *place)
    assert str(caught.value).startswith(f"s.json:{place[0]}:{place[1]}: ") and said in str(caught.value)


def test_value_offsets_finds_every_value_of_every_golden_spec_json() -> None:
    """Property: each path's offset is where ``json`` decodes that very value (every golden spec.json)."""
    decoder = json.JSONDecoder()
    for spec in sorted((REPO / "tests" / "golden").glob("**/spec.json")):
        text = spec.read_text()
        data = json.loads(text)
        offsets = value_offsets(text)
        paths = dict(_paths(data, "", ()))
        assert set(offsets) == set(paths), spec
        for path, steps in paths.items():
            assert decoder.raw_decode(text, offsets[path])[0] == _at(data, steps), (spec, path)


def _paths(value: Any, path: str, steps: tuple[Step, ...]) -> Any:
    yield path, steps
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, f"{path}.{key}" if path else key, (*steps, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, f"{path}[{i}]", (*steps, i))


@pytest.mark.parametrize(
    ("text", "field", "place"),
    [
        ('{"a": "x\\"}]", "b": [1, {"c": null}]}', "b[1].c", (1, 31)),
        ('{"a": "x\\"}]", "b": [1, {"c": null}]}', "b[1].d", (1, 25)),  # missing: its object
        ('{"a": "x\\"}]", "b": [1, {"c": null}]}', "b[7]", (1, 21)),
        ("[[], {}, [[3]]]", "[2][0][0]", (1, 12)),
        ('{"k\\u00e9y": 1}', "kéy", (1, 14)),
        ("  7 ", "", (1, 3)),
    ],
)
def test_locate(text: str, field: str, place: tuple[int, int]) -> None:
    assert locate(text, field) == place


_DIGITS = "9" * 5000
_PAST = "a number of 5,000 digits is longer than the 4,300 digits a number may have"


@pytest.mark.parametrize(
    ("old", "new", "place", "field"),
    [
        ("requests_per_second: 2", f"requests_per_second: {_DIGITS}", (8, 28), "deployments[0].inference.requests_per_second"),
        ("requests_per_second: 2", f"requests_per_second: -{_DIGITS}", (8, 29), "deployments[0].inference.requests_per_second"),
        ("gpus: [l40s-48gb]", f"gpus: [l40s-48gb, {_DIGITS}]", (10, 21), "hardware.gpus[1]"),
        ("max_context_tokens: 8192", f"max_context_tokens: {{a: [1, {_DIGITS}]}}", (7, 35),
         "deployments[0].inference.max_context_tokens.a[1]"),
        ("version: 1", f"version: {_DIGITS}", (1, 10), "version"),
    ],
    ids=["value", "negative", "in-a-list", "nested-flow", "top-level"],
)  # fmt: skip
def test_a_number_past_the_digits_python_reads_names_its_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, place: tuple[int, int], field: str
) -> None:
    """Item 2: placed at its line and column, but no field named."""
    from tests.helpers import VALID

    assert old in VALID
    (tmp_path / "w.yaml").write_text(VALID.replace(old, new))
    code, out, err = specgen(capsys, "validate", str(tmp_path / "w.yaml"))
    assert (code, out) == (1, ""), err
    assert err == f"specgen: error: {tmp_path / 'w.yaml'}:{place[0]}:{place[1]}: {field}: {_PAST}\n"


def test_a_redirect_loop_on_the_safetensors_headers_is_out_of_reach(tmp_path: Path) -> None:
    """Item 3: through the real client against tests/hub_server.py, the config served and every ``.safetensors`` read
    redirected to itself: ``render --check`` exits 75 (a retry may pass) rather than 1, as for a 503 (fix143)."""
    from tests.hub_server import _handler, serve
    from tests.test_hub import make_hub
    from tests.test_hub import specgen as hub_specgen
    from tests.test_newuser82_exit_codes import _workload

    workload = _workload(tmp_path / "h.yaml", "acme/qwen-7b-chat")
    with serve(make_hub()) as hub:
        assert hub_specgen(hub, tmp_path / "home-ok", "render", str(workload), "-o", str(tmp_path / "out")).returncode == 0
    hub_data = make_hub()
    base = _handler(hub_data)

    class Looping(base):  # type: ignore[misc, valid-type]
        def _serve(self, body: bool) -> None:
            if self.path.split("?")[0].endswith(".safetensors"):
                self.send_response(302)
                self.send_header("Location", self.path)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            super()._serve(body)

    with serve(hub_data, Looping) as hub:
        checked = hub_specgen(hub, tmp_path / "home-loop", "render", str(workload), "-o", str(tmp_path / "out"), "--check")
    assert checked.returncode == 75 and "Traceback" not in checked.stderr, (checked.returncode, checked.stderr)
    assert "while reading the safetensors headers of acme/qwen-7b-chat@" in checked.stderr
    assert "TooManyRedirects" in checked.stderr and not checked.stdout.strip()


@pytest.mark.parametrize(
    ("broken", "headline", "located"),
    [
        (("w.yaml", "infra/spec.json"),
         "**2 file(s) (1 workload file(s), 1 spec.json) could not be read or planned as changed: `w.yaml` (invalid), "
         "`infra/spec.json` (unreadable).** `specgen render` fails on the workload files too, and this check on all of them",
         ["w.yaml:8:28: deployments[0].inference.requests_per_second", "infra/spec.json:2:1: cannot read spec.json"]),
        (("infra/spec.json",),
         "**1 spec.json file(s) could not be read as changed: `infra/spec.json` (unreadable).** This check fails on them",
         ["infra/spec.json:2:1: cannot read spec.json"]),
        (("infra/spec.json+",),
         "**1 spec.json file(s) could not be read as changed: `infra/spec.json` (invalid).** This check fails on them",
         ["infra/spec.json:1:10: not a specgen spec.json: 'plan' must be an object, got a number"]),
        (("w.yaml",),
         "**1 workload file(s) cannot be planned as changed: `w.yaml` (invalid).** `specgen render` fails on them too, "
         "and so does this check", ["w.yaml:8:28: deployments[0].inference.requests_per_second"]),
    ],
    ids=["both", "spec-unreadable", "spec-no-plan", "workload"],
)  # fmt: skip
def test_diff_base_names_the_files_it_cannot_read_or_plan_by_what_they_are(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    broken: tuple[str, ...],
    headline: str,
    located: list[str],
) -> None:
    """Item 4: an unreadable spec.json beside an invalid workload file was one of "2 workload file(s)"."""
    from tests.helpers import VALID

    monkeypatch.chdir(tmp_path)
    (tmp_path / "w.yaml").write_text(VALID)
    assert specgen(capsys, "render", "w.yaml", "-o", "infra")[0] == 0
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "base")
    if "infra/spec.json+" in broken:  # JSON, but no plan
        (tmp_path / "infra" / "spec.json").write_text('{"plan": 5}')
    if "infra/spec.json" in broken:
        (tmp_path / "infra" / "spec.json").write_text('{"plan": \n')
    if "w.yaml" in broken:
        (tmp_path / "w.yaml").write_text(VALID.replace("requests_per_second: 2", "requests_per_second: -2"))
    code, md, err = specgen(capsys, "diff", "--base", "HEAD", "w.yaml", "infra/spec.json")
    assert code == 1 and "Traceback" not in err, err
    assert headline in md, md
    for said in located:
        assert f"specgen: error: {said}" in err, err


@pytest.mark.parametrize(
    ("rev", "shown"),
    [("nope", "'nope'"), ("a" * 5000, "'" + "a" * 200 + "'... (5,000 characters)"), ("--output=x", "'--output=x'")],
    ids=["plain", "long", "option"],
)
def test_a_base_that_is_no_commit_is_named_short_with_its_repository(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, rev: str, shown: str
) -> None:
    from tests.helpers import VALID

    monkeypatch.chdir(tmp_path)
    (tmp_path / "w.yaml").write_text(VALID)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "base")
    code, out, err = specgen(capsys, "diff", "--base", rev, "w.yaml")
    assert (code, out) == (1, "")
    assert err == f"specgen: error: --base {shown} is not a commit of the git repository '{tmp_path}'\n"
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("fmt", ["markdown", "json"])
def test_a_lone_surrogate_in_a_spec_json_is_refused_at_its_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    """hostile84: ``"\\ud800"`` is valid JSON; a model id holding it ended the diff in a UnicodeEncodeError traceback."""
    spec = copy.deepcopy(GOOD)
    spec["plan"]["deployments"][0]["model_id"] = "x\ud800y"
    spec["plan"]["deployments"][0]["replicas"] += 1
    (tmp_path / "new.json").write_text(json.dumps(spec, indent=2))  # ensure_ascii: written as the escape
    (tmp_path / "old.json").write_text(json.dumps(GOOD, indent=2))
    line, column = _where(spec, ("plan", "deployments", 0, "model_id"))
    code, out, err = specgen(capsys, "diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"), "--format", fmt)
    assert (code, out) == (1, "")
    assert err == (
        f"specgen: error: {tmp_path / 'new.json'}:{line}:{column}: cannot read spec.json: 'plan.deployments[0].model_id' "
        "holds an unpaired surrogate escape (\\ud800-\\udfff alone), which no UTF-8 text can hold (specgen writes none)\n"
    )


def test_render_check_over_a_tree_whose_workload_name_holds_a_lone_surrogate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """hostile84: the flat tree's workload name, read from its spec.json to say a move, ended --check in a traceback."""
    from tests.helpers import VALID

    monkeypatch.chdir(tmp_path)
    (tmp_path / "w.yaml").write_text(VALID)
    assert specgen(capsys, "render", "w.yaml", "-o", "out")[0] == 0
    spec = json.loads((tmp_path / "out" / "spec.json").read_text())
    spec["plan"]["workload"] = "x\ud800"
    (tmp_path / "out" / "spec.json").write_text(json.dumps(spec, indent=2))
    code, out, err = specgen(capsys, "render", "w.yaml", "-o", "out", "--check")
    assert code == 4 and "Traceback" not in err, err
    verdict = "specgen: rendered output is stale in out (spec.json); run `specgen render w.yaml -o out` and commit the result"
    assert err.splitlines()[-1] == verdict
    assert '-    "workload": "x\\ud800"' in out  # the committed text, as written (an ASCII escape)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("w.yaml", "./w.yaml"), "w.yaml and ./w.yaml are the same file; give each workload once"),
        (("infra/spec.json", "infra//spec.json"),
         "infra/spec.json and infra//spec.json are the same file; give each spec.json once"),
    ],
    ids=["workload", "spec-json"],
)  # fmt: skip
def test_a_file_given_twice_to_diff_base_is_named_as_what_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], said: str
) -> None:
    from tests.helpers import VALID

    monkeypatch.chdir(tmp_path)
    (tmp_path / "w.yaml").write_text(VALID)
    assert specgen(capsys, "render", "w.yaml", "-o", "infra")[0] == 0
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "base")
    code, out, err = specgen(capsys, "diff", "--base", "HEAD", *args)
    assert (code, out, err) == (1, "", f"specgen: error: {said}\n")
