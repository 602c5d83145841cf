"""fix192: newuser107's left-outs.

1. ``hardware.fixed`` took no host name or address: the Ansible inventory's host was a placeholder the user copied into
   hosts.yml. ``host_name`` / ``address`` name it there, as an owned server's ``name`` / ``ip_address`` (one path:
   ``generator.render.hosts.named_hosts`` / ``ansible_hosts``); bad values are refused at their field.
2. The estimate's prefill figure of an offloaded model said nothing of what bounds it (Qwen3-235B q2_k on 2 x RTX
   3090 at PCIe 4.0 x8: 323.57 prompt tokens/s): ``prefill_bound`` and ``prefill_seconds`` (JSON) and the speed line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.api import render_file
from generator.calculator.prefill_bound import prefill_bound_text
from generator.workload.fixed_host import address_problem
from tests.conftest import REPO
from tests.helpers import ansible_reader, edited_copy, estimate_json, load_errors, run_estimate

EXAMPLE = REPO / "examples" / "home-2x3090-moe.yaml"
MACHINE = "    gpu_count: 2\n"
POOL = "home_2x3090_rtx_3090_24gb"


def _named(tmp_path: Path, *lines: str) -> Path:
    return edited_copy(EXAMPLE, tmp_path, (MACHINE, MACHINE + "".join(f"    {line}\n" for line in lines)))


def _inventory(files: dict[str, str]) -> dict[str, object]:
    data: dict[str, object] = ansible_reader().load(files["ansible/inventory.yml"])
    return data


def test_fixed_host_name_and_address_are_the_inventory_host(tmp_path: Path) -> None:
    files = render_file(str(_named(tmp_path, "host_name: gpubox", "address: 192.168.1.20")))
    hosts = _inventory(files)["all"]["children"][POOL]["hosts"]  # type: ignore[index]
    assert list(hosts) == ["gpubox"]
    assert hosts["gpubox"]["ansible_host"] == "192.168.1.20"
    # the replica the plan places runs on it, as on a placeholder before
    assert hosts["gpubox"]["specgen_replicas"][0]["deployment"] == "qwen235"
    assert "ansible/hosts.yml.example" not in files  # nothing left to copy into hosts.yml
    assert json.loads(files["spec.json"])["plan"]["pools"][0]["owned_hosts"] == ["gpubox"]


def test_fixed_host_name_alone_and_a_dns_or_ipv6_address(tmp_path: Path) -> None:
    alone = render_file(str(_named(tmp_path, "host_name: gpubox")))
    assert "ansible_host" not in _inventory(alone)["all"]["children"][POOL]["hosts"]["gpubox"]  # type: ignore[index]
    for address in ("gpubox.lan", "fd00::20"):
        files = render_file(str(_named(tmp_path, "host_name: gpubox", f"address: '{address}'")))
        assert _inventory(files)["all"]["children"][POOL]["hosts"]["gpubox"]["ansible_host"] == address  # type: ignore[index]


def test_without_a_host_name_the_placeholder_stays(tmp_path: Path) -> None:
    files = render_file(str(EXAMPLE))
    assert "home-2x3090-rtx-3090-24gb-01" in files["ansible/hosts.yml.example"]
    assert "hosts" not in _inventory(files)["all"]["children"][POOL]  # type: ignore[index]


@pytest.mark.parametrize(
    ("lines", "field", "message"),
    [
        (("host_name: GPU_box",), "hardware.fixed.host_name", "does not match"),
        (("host_name: gpubox", "address: 10.0.0.300"), "hardware.fixed.address", "is not an IPv4 address"),
        (("host_name: gpubox", "address: 'fd00::zz'"), "hardware.fixed.address", "is not an IPv6 address"),
        (("host_name: gpubox", "address: 'bad..lan'"), "hardware.fixed.address", "neither an IP address nor a DNS"),
        (("host_name: gpubox", "address: 'a b'"), "hardware.fixed.address", "does not match"),
        (("address: 192.168.1.20",), "hardware.fixed.address", "give host_name"),
    ],
)
def test_bad_fixed_host_is_refused_at_its_field(tmp_path: Path, lines: tuple[str, ...], field: str, message: str) -> None:
    errors = load_errors(_named(tmp_path, *lines))
    assert len(errors) == 1
    # at the line of the field (the last of the lines added)
    assert f"w.yaml:{24 + len(lines)}:" in errors[0] and f"{field}:" in errors[0] and message in errors[0]


@pytest.mark.parametrize(
    ("address", "ok"),
    [("192.168.1.20", True), ("fd00::20", True), ("gpubox", True), ("gpubox.lan.", True), ("1.2.3", False),
     ("-a.lan", False), ("a" * 64 + ".lan", False), ("256.1.1.1", False)],
)  # fmt: skip
def test_address_problem(address: str, ok: bool) -> None:
    assert (address_problem(address) is None) is ok


ESTIMATE = (
    "Qwen/Qwen3-235B-A22B", "--precision", "q2_k", "--gpu", "rtx-3090-24gb", "--gpus", "2", "--cpu", "ryzen-9-5950x",
    "--ram-gib", "128", "--context", "16384", "--output-tokens", "500",
)  # fmt: skip


def test_estimate_says_the_pcie_copy_bounds_the_prefill() -> None:
    data = estimate_json(*ESTIMATE, "--input-tokens", "1500")["throughput"]
    parts = data["prefill_seconds"]
    assert data["prefill_bound"] == "pcie" and set(parts) == {"gpu-compute", "pcie"}
    assert parts["pcie"] > parts["gpu-compute"] > 0
    # the parts are the prefill: its rate is the prompt over their sum
    assert data["ttft_prompt_tokens"] / sum(parts.values()) == pytest.approx(data["prefill_tokens_per_s"], rel=2e-3)
    _, text = run_estimate(*ESTIMATE, "--input-tokens", "1500")
    assert f"at -ub 2048; pcie-bound: {parts['pcie']:,.2f} s copying the weights held in RAM to the GPUs over PCIe" in text


def test_a_prompt_too_short_to_copy_is_bound_by_the_cpu() -> None:
    """Under llama.cpp's 32-token batch the CUDA backend leaves the weights in RAM to the CPU (no copy)."""
    data = estimate_json(*ESTIMATE, "--input-tokens", "16")["throughput"]
    assert "pcie" not in data["prefill_seconds"]
    assert data["prefill_bound"] in {"cpu-cores", "ddr"}


def test_prefill_bound_text() -> None:
    summary = {"prefill_bound": "gpu-compute", "prefill_seconds": {"pcie": 0.5, "gpu-compute": 1.25}}
    assert prefill_bound_text(summary) == (
        "gpu-compute-bound: 1.25 s GPU compute, 0.50 s copying the weights held in RAM to the GPUs over PCIe"
    )
    assert prefill_bound_text({}) == ""


def _batch_plan(tmp_path: Path, rate: str, *slo: str) -> dict[str, object]:
    """The home example as a batch service at ``rate`` req/s (``slo``: lines of an inference.slo)."""
    given = "".join(f"\n        {line}" for line in slo)
    extra = f"\n      service_class: batch{chr(10) + '      slo:' + given if slo else ''}"
    path = edited_copy(EXAMPLE, tmp_path, ("      requests_per_second: 0.005", f"      requests_per_second: {rate}{extra}"))
    return json.loads(render_file(str(path))["spec.json"])["plan"]  # type: ignore[no-any-return]


def _slot_waits(plan: dict[str, object]) -> list[str]:
    found = [f for f in plan["findings"] if f["code"] in {"slot-wait", "batch-slot-wait"}]  # type: ignore[attr-defined]
    assert all(f["code"] == "batch-slot-wait" and f["level"] == "info" for f in found)  # no target to miss: not warned
    return [f["message"] for f in found]


def test_a_batch_service_waiting_longer_than_its_requests_take_is_told(tmp_path: Path) -> None:
    """newuser107: 0.01 req/s at q4_k_m, a p95 wait of 101 min for a slot held 4.6 min, in the reasons alone."""
    plan = _batch_plan(tmp_path, "0.01")
    details = plan["deployments"][0]["details"]  # type: ignore[index]
    assert details["slot_wait_p95_s"] > details["request_s"] * 10
    (warned,) = _slot_waits(plan)
    assert "p95 wait 6,067 s (101.1 min), 21.9x the 277 s (4.6 min) each then holds one" in warned
    assert "no TTFT target holds the wait" in warned
    assert "Give inference.slo.ttft_p95_ms to hold it" in warned


def test_a_batch_service_whose_wait_is_short_or_held_is_not_told(tmp_path: Path) -> None:
    quiet = _batch_plan(tmp_path, "0.001")
    details = quiet["deployments"][0]["details"]  # type: ignore[index]
    assert details["slot_wait_p95_s"] <= details["request_s"] and not _slot_waits(quiet)
    # the advice holds: a TTFT target of 10 min takes more slots and holds the p95 wait within it
    held = _batch_plan(tmp_path, "0.01", "ttft_p95_ms: 600000")
    assert held["deployments"][0]["details"]["slot_wait_p95_s"] < 600 and not _slot_waits(held)  # type: ignore[index]
