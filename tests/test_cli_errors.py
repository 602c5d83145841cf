"""Bad input: a clear file:line:col: path: message on stderr, an exit code, never a traceback or a partial tree."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.workload import ADDON_NAMESPACES, RESERVED_NAMESPACES, reserved_namespace
from tests.conftest import REPO
from tests.helpers import VALID, run_specgen

CASES = [
    pytest.param("version: 1\nname: demo\ndeployments: [\n", "workload.yaml:4:1: YAML syntax error", id="yaml-syntax"),
    pytest.param(
        VALID.replace("requests_per_second", "requests_per_secnd"),
        "workload.yaml:8:7: deployments[0].inference.requests_per_secnd: unknown field 'requests_per_secnd'; "
        "did you mean 'requests_per_second', 'requests_per_run', 'average_requests_per_second'?",
        id="unknown-key",
    ),
    pytest.param(
        VALID.replace("max_context_tokens: 8192", "max_context_tokens: lots"),
        "workload.yaml:7:27: deployments[0].inference.max_context_tokens: expected integer, got string 'lots'",
        id="wrong-type",
    ),
    pytest.param(
        VALID.replace("max_context_tokens: 8192", "max_context_tokens: 0"),
        "workload.yaml:7:27: deployments[0].inference.max_context_tokens: 0 is out of range: must be >= 1",
        id="out-of-range",
    ),
    pytest.param(  # fuzz29 item 5: a subnormal rate overflowed the cost per token (a traceback in plan --format json);
        # written as YAML 1.1 reads a float too (a point, a signed exponent): 1e-320 is text there (fuzz31 item 10)
        VALID.replace("requests_per_second: 2", "requests_per_second: 1.0e-320"),
        "workload.yaml:8:28: deployments[0].inference.requests_per_second: 1e-320 is out of range: must be >= 1e-06",
        id="rate-below-floor",
    ),
    pytest.param(
        VALID.replace("max_context_tokens: 8192", "max_context_tokens: 8192\n      precision: fp9"),
        "workload.yaml:8:18: deployments[0].inference.precision: 'fp9' is not one of",
        id="bad-enum",
    ),
    pytest.param(
        VALID.replace("Llama-3.1-8B-Instruct", "Llama-3.1-8B-Instruckt"),
        "workload.yaml:5:12: deployments[0].model: unknown model 'meta-llama/Llama-3.1-8B-Instruckt'; "
        "did you mean 'meta-llama/Llama-3.1-8B-Instruct'",
        id="unknown-model",
    ),
    pytest.param(
        VALID.replace("l40s-48gb", "l40-48gbx"),
        "workload.yaml:10:10: hardware.gpus[0]: unknown GPU 'l40-48gbx'; did you mean 'l40-48gb'",
        id="unknown-gpu",
    ),
    pytest.param(VALID + "name: again\n", 'workload.yaml:11:1: YAML syntax error: duplicate key "name"', id="duplicate-key"),
    pytest.param("", "workload.yaml:1:1: the file is empty", id="empty-file"),
    pytest.param("# only a comment\n", "workload.yaml:1:1: the file is empty", id="comment-only"),
    pytest.param("- 1\n- 2\n", "workload.yaml:1:1: the top level must be a mapping", id="top-level-list"),
    pytest.param(VALID.replace("version: 1", "version: 2"), "workload.yaml:1:10: version: must be 1, got 2", id="wrong-version"),
    pytest.param(
        VALID.replace("    inference:\n      max_context_tokens: 8192\n      requests_per_second: 2\n", ""),
        "workload.yaml:4:5: deployments[0]: needs an 'inference' or a 'training' section",
        id="no-section",
    ),
    pytest.param(
        VALID.replace("name: chat", "name: Chat_1"),
        "workload.yaml:4:11: deployments[0].name: 'Chat_1' does not match",
        id="bad-name",
    ),
    pytest.param(
        VALID.replace("model: meta-llama/Llama-3.1-8B-Instruct", "model: ./missing/config.json"),
        "workload.yaml:5:12: deployments[0].model: model config './missing/config.json' not found",
        id="missing-config",
    ),
    pytest.param(
        VALID.replace("name: demo", "name: demo\nfoo: !!python/object:os.system x"),
        "workload.yaml:3:6: foo: YAML tag '!!python/object:os.system' is not allowed",
        id="python-tag",
    ),
    pytest.param(  # fuzz21 item 11: a collection under a python tag was read as a plain list
        VALID.replace("name: demo", 'name: !!python/object/apply:os.system ["true"]'),
        "workload.yaml:2:7: name: YAML tag '!!python/object/apply:os.system' is not allowed",
        id="python-tag-on-a-list",
    ),
    pytest.param(  # and a core tag is what it says: !!str 5 is the text "5", refused as a name is
        VALID.replace("name: chat", "name: !!str Chat"),
        "workload.yaml:4:11: deployments[0].name: 'Chat' is written in lower case here: 'chat'",
        id="core-tag-str",
    ),
    pytest.param(  # fuzz22 item 12: YAML 1.1's 2_0 is 20 to ruamel, the text "2_0" to editors: a typo planned 20 replicas
        VALID.replace("requests_per_second: 2", "requests_per_second: 2_0"),
        "workload.yaml:8:28: deployments[0].inference.requests_per_second: a number written with digit separators is read "
        "as 20 by YAML 1.1 but as text by YAML 1.2",
        id="digit-separators",
    ),
    pytest.param(  # newuser26 item 7: "no aws platform offers an allowed GPU", exit 3, a hint about liquid cooling
        VALID.replace("hardware:\n", "hardware:\n  provider: aws\n  platforms: [azure-standard-nd96isr-h100-v5]\n"),
        "workload.yaml:11:15: hardware.platforms[0]: 'azure-standard-nd96isr-h100-v5' is a platform of provider azure; "
        "this workload's hardware.provider is aws",
        id="platform-of-another-provider",
    ),
    pytest.param(  # fuzz23 item 15: ruamel's AttributeError text, no line
        VALID.replace("hardware:\n", "hardware: &h\n  <<: *h\n"),
        "workload.yaml:10:7: YAML error: the alias *h refers to the mapping or list it is in",
        id="alias-inside-its-anchor",
    ),
    pytest.param(  # fuzz23 item 5: YAML 1.2 reads 10, PyYAML and Ansible (YAML 1.1) octal 8
        VALID.replace("requests_per_second: 2", "requests_per_second: 010"),
        "workload.yaml:8:28: deployments[0].inference.requests_per_second: a number written with a leading zero is read "
        "as 10 by YAML 1.2 but as octal 8 by YAML 1.1 (PyYAML, Ansible): write it in plain digits",
        id="leading-zero-octal",
    ),
    pytest.param(
        VALID.replace("requests_per_second: 2", "requests_per_second: 09"),
        "workload.yaml:8:28: deployments[0].inference.requests_per_second: a number written with a leading zero is read "
        "as 9 by YAML 1.2 but as text by YAML 1.1",
        id="leading-zero-not-octal",
    ),
    pytest.param(
        VALID.replace("requests_per_second: 2", "requests_per_second: 0o10"),
        "workload.yaml:8:28: deployments[0].inference.requests_per_second: a number written in octal is read as 8 by "
        "YAML 1.2 but as text by YAML 1.1",
        id="octal",
    ),
    pytest.param(
        VALID.replace("requests_per_second: 2", "requests_per_second: 0b10"),
        "workload.yaml:8:28: deployments[0].inference.requests_per_second: a number written in binary is read as 2",
        id="binary",
    ),
    pytest.param(  # newuser8 item 11: the pin got memory and precision advice at exit 3
        VALID.replace("    inference:", "    platform: aws-p5-48xlarge\n    inference:"),
        "workload.yaml:6:15: deployments[0].platform: 'aws-p5-48xlarge' is a platform of provider aws; this workload's "
        "hardware.provider is baremetal",
        id="pin-other-provider",
    ),
    pytest.param(
        VALID.replace("    inference:", "    platform: dgx-h100\n    inference:"),
        "workload.yaml:6:15: deployments[0].platform: 'dgx-h100' takes h100-sxm5-80gb, none of hardware.gpus (l40s-48gb)",
        id="pin-no-allowed-gpu",
    ),
    pytest.param(  # fuzz27 H3: os.path raised "embedded null byte" through validate, plan, render and diff
        VALID.replace("model: meta-llama/Llama-3.1-8B-Instruct", 'model: "./m\\0odel"', 1),
        "workload.yaml:5:12: deployments[0].model: the model './m\\x00odel' holds a NUL character",
        id="nul-in-model-path",
    ),
    pytest.param(
        VALID + "constants:\n  gpu_memory_utilisation: 0.8\n",
        "workload.yaml:12:3: constants.gpu_memory_utilisation: unknown constant 'gpu_memory_utilisation'",
        id="unknown-constant",
    ),
]


@pytest.mark.parametrize(("text", "message"), CASES)
def test_bad_workload_exits_1_with_location(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "workload.yaml").write_text(text)
    out = tmp_path / "infra"
    result = run_specgen("render", "workload.yaml", "-o", str(out), cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert message in result.stderr
    assert result.stderr.startswith("specgen: error: workload.yaml:")
    assert "Traceback" not in result.stderr
    assert not out.exists()


def test_validate_reports_every_error(tmp_path: Path) -> None:
    text = VALID.replace("max_context_tokens: 8192", "max_context_tokens: 0").replace("l40s-48gb", "nope") + "extra: 1\n"
    (tmp_path / "workload.yaml").write_text(text)
    result = run_specgen("validate", "workload.yaml", cwd=tmp_path)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 2  # schema errors come first; catalog checks run on a schema-valid file
    assert "max_context_tokens" in lines[0] and "extra" in lines[1]


def test_validate_reports_every_bad_file_and_every_good_one(tmp_path: Path) -> None:
    """newuser27 item 13: validate stopped at the first bad file; CI then learnt of one bad file a push."""
    (tmp_path / "good.yaml").write_text(VALID)
    (tmp_path / "bad.yaml").write_text(VALID.replace("l40s-48gb", "nope"))
    (tmp_path / "worse.yaml").write_text(VALID.replace("max_context_tokens: 8192", "max_context_tokens: 0"))
    result = run_specgen("validate", "bad.yaml", "good.yaml", "nope.yaml", "worse.yaml", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines() == ["good.yaml: ok"]
    lines = result.stderr.strip().splitlines()
    assert [line.split(":")[2].strip() for line in lines] == ["bad.yaml", "nope.yaml", "worse.yaml"]
    assert "nope.yaml: file not found" in lines[1]


def test_missing_file_exits_1(tmp_path: Path) -> None:
    result = run_specgen("validate", "nope.yaml", cwd=tmp_path)
    assert result.returncode == 1
    assert "nope.yaml: file not found" in result.stderr


def test_usage_error_exits_2() -> None:
    assert run_specgen("render").returncode == 2
    assert run_specgen("estimate", "llama-3.1-8b", "--tp", "x").returncode == 2


def test_infeasible_plan_exits_3_and_says_why(tmp_path: Path) -> None:
    text = VALID.replace("meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-405B-Instruct").replace("l40s-48gb", "l4-24gb")
    text += "  max_nodes: 2\n"
    (tmp_path / "workload.yaml").write_text(text)
    result = run_specgen("render", "workload.yaml", "-o", str(tmp_path / "infra"), cwd=tmp_path)
    assert result.returncode == 3
    assert "no feasible plan" in result.stderr and "to unblock" in result.stderr
    assert "max_nodes" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "infra").exists()


def test_one_bad_file_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(VALID)
    (tmp_path / "bad.yaml").write_text(VALID.replace("name: demo", "name: other").replace("l40s-48gb", "nope"))
    result = run_specgen("render", "good.yaml", "bad.yaml", "-o", str(tmp_path / "infra"), cwd=tmp_path)
    assert result.returncode == 1
    assert not (tmp_path / "infra").exists()


def test_estimate_unknown_model_exits_1() -> None:
    result = run_specgen("estimate", "llama-3.1-8bb")
    assert result.returncode == 1
    assert "did you mean" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        # fuzz21 item 12: the byte offset alone; now its line and column, as every other input error
        (VALID.replace("name: demo", "name: demo\n# caf\xe9").encode("latin-1"), "w.yaml:3:6: file is not UTF-8 text (byte 27)"),
        (VALID.encode("utf-16"), "w.yaml:1:1: file is not UTF-8 text (byte 0) (a UTF-16 file: save it as UTF-8)"),
        (None, "w.yaml: file is a directory; only regular files are read"),  # was click's usage error, exit 2
    ],
)
@pytest.mark.parametrize("command", ["validate", "plan", "render"])
def test_a_file_that_is_not_utf8_text_or_not_a_file_exits_1_located(
    tmp_path: Path, content: bytes | None, message: str, command: str
) -> None:
    path = tmp_path / "w.yaml"
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    result = run_specgen(command, "w.yaml", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (1, f"specgen: error: {message}\n")


def _patterns(node: object) -> list[str]:
    if isinstance(node, dict):
        own = [node["pattern"]] if isinstance(node.get("pattern"), str) else []
        return [*own, *(p for v in node.values() for p in _patterns(v))]
    return [p for v in node for p in _patterns(v)] if isinstance(node, list) else []


def test_every_schema_pattern_ends_with_the_newline_guard_that_errors_leave_out(tmp_path: Path) -> None:
    """fuzz23 item 9, newuser26 item 5: 19 patterns spelled the guard with a newline character, not the two characters
    the error text strips, so "does not match ^[a-z]+-[a-z]+[0-9]+(-[a-z])?$(?!\\n)" reached users."""
    from generator.workload.schema import NO_TRAILING_NEWLINE, workload_schema

    patterns = _patterns(workload_schema())
    assert len(patterns) > 20 and all(p.endswith(NO_TRAILING_NEWLINE) for p in patterns), patterns
    text = VALID + "kubernetes: {gcp_project: acme, location: US-CENTRAL1}\n"
    (tmp_path / "w.yaml").write_text(text.replace("l40s-48gb", "l4-24gb").replace("hardware:\n", "hardware:\n  provider: gcp\n"))
    result = run_specgen("validate", "w.yaml", cwd=tmp_path)
    assert result.returncode == 1
    assert "kubernetes.gcp_project: 'acme' does not match ^[a-z][-a-z0-9]{4,28}[a-z0-9]$ (" in result.stderr
    assert "(?!" not in result.stderr, result.stderr


def test_validate_says_the_warnings_that_read_the_workload_alone(tmp_path: Path) -> None:
    """fuzz24 item M4: a cost input 100x its sourced default passed validate silently; plan warned."""
    (tmp_path / "w.yaml").write_text(VALID + "constants: {energy_usd_per_kwh: 13}\n")
    result = run_specgen("validate", "w.yaml", cwd=tmp_path)
    assert result.returncode == 0 and result.stdout.strip() == "w.yaml: ok"
    assert "warning: constants.energy_usd_per_kwh 13 is 100x the sourced default 0.13" in result.stderr, result.stderr


def test_validate_exits_as_the_first_bad_file_in_path_order_as_render_does(tmp_path: Path) -> None:
    """review68 item 2: validate took the files in the order given (a shell glob's), render in path order, so
    `validate zz.yaml aa.yaml` exited 1 where `render zz.yaml aa.yaml` exits 3."""
    (tmp_path / "aa.yaml").write_text((REPO / "examples" / "infeasible" / "home-405b.yaml").read_text())  # exit 3
    (tmp_path / "zz.yaml").write_text(VALID.replace("l40s-48gb", "nope"))  # exit 1
    for order in (("zz.yaml", "aa.yaml"), ("aa.yaml", "zz.yaml")):
        validated = run_specgen("validate", *order, cwd=tmp_path)
        rendered = run_specgen("render", *order, "-o", "out", cwd=tmp_path)
        assert validated.returncode == rendered.returncode == 3, (validated.stderr, rendered.stderr)


@pytest.mark.parametrize(
    "name", ["kube-system", "kube-anything", "default", "cnrm-system", "gpu-operator", "karpenter", "gmp-system", "gke-managed-x"]
)
def test_a_workload_may_not_take_a_system_namespace(tmp_path: Path, name: str) -> None:
    """review68 item 4: a workload named cnrm-system rendered a Namespace of Config Connector's own, which
    `kubectl delete -k` of the tree would delete."""
    (tmp_path / "ns.yaml").write_text(VALID.replace("\nname: demo\n", f"\nname: {name}\n"))
    result = run_specgen("validate", "ns.yaml", cwd=tmp_path)
    assert result.returncode == 1
    assert f"name: '{name}' names the Kubernetes namespace the workload's objects go in" in result.stderr


def test_every_reserved_namespace_is_refused_and_add_ons_are_named() -> None:
    """newuser75 item 7: the namespaces of common add-ons (Config Sync, Gatekeeper, Istio, cert-manager, Calico)."""
    added = {
        "config-management-system", "config-management-monitoring", "gatekeeper-system", "istio-system",
        "aks-istio-system", "cert-manager", "tigera-operator", "calico-system",
    }  # fmt: skip
    assert added <= RESERVED_NAMESPACES and added == set(ADDON_NAMESPACES)
    for name in RESERVED_NAMESPACES:
        assert reserved_namespace(name), name
    assert "the namespace of Config Sync, a cluster add-on" in (reserved_namespace("config-management-system") or "")
    for name in ("chat", "istio", "cert-manager-x", "my-gatekeeper-system"):  # only the names themselves
        assert reserved_namespace(name) is None, name


def test_a_gcp_workload_named_like_config_sync_renders_nothing(tmp_path: Path) -> None:
    """newuser75 item 7: the GKE example named config-management-system wrote kubernetes/gcp/namespace-....yaml."""
    text = (REPO / "examples" / "chat-70b-fp8-gcp.yaml").read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("name: "))
    lines[at] = "name: config-management-system\n"
    (tmp_path / "w.yaml").write_text("".join(lines), encoding="utf-8")
    result = run_specgen("render", "w.yaml", "-o", "out", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert f"w.yaml:{at + 1}:7: name: 'config-management-system' names the Kubernetes namespace" in result.stderr
    assert not (tmp_path / "out").exists()
