"""hostile96: hostile workload files against this session's new paths (fixed host name, owned NICs, batch hints, caches).

1. ``hardware.fixed.host_name: all`` (or ``ungrouped``) passed ``validate`` and was rendered as a host of that name,
   which Ansible reads as its built-in group ("Found both group and host with same name: all"); an inventory host of
   that name has been refused since fuzz27 L12. Now refused at the field's line; ``detect`` on a machine named so
   leaves host_name out (a comment) instead of writing a block that then fails ``validate``.
The rest hold what was found robust, so that it stays so: hostile ``hardware.fixed`` host names, addresses and numbers,
global batches of 1 and primes on owned servers, ``validate``'s unserved-precision warning against ``plan``'s, plans A,
B, A in one process against a fresh A, and the Markdown cutter's fence and size rules (property-based).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from generator import api
from generator.calculator.detect import _schema_pattern, fixed_block, host_name_facts
from generator.markdown_cut import _closes, _fence, cut_markdown
from tests.helpers import specgen_in_process

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
FIXED = EXAMPLES / "home-70b-offload.yaml"
LAB = EXAMPLES / "lab-h200-ib-pretrain.yaml"
CPU_LINE = "cpu: ryzen-9-7950x"
#: An error that names the file, its line and column and the field.
PLACED = r"^specgen: error: {file}:\d+:\d+: {field}"


def _fixed(tmp_path: Path, old: str, new: str) -> Path:
    text = FIXED.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "w.yaml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["all", "ungrouped"])
def test_a_fixed_host_named_as_an_ansible_group_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    """Item 1: it was rendered as ``hosts: {all: ...}`` under the pool's group."""
    path = _fixed(tmp_path, CPU_LINE, f"{CPU_LINE}\n    host_name: {name}")
    code, _, err = specgen_in_process(capsys, "validate", str(path))
    assert code == 1
    assert re.search(PLACED.format(file=re.escape(str(path)), field=r"hardware\.fixed\.host_name"), err, re.M), err
    assert f"host name '{name}' is one of Ansible's built-in groups" in err and "Traceback" not in err


@pytest.mark.parametrize("hostname", ["all", "ALL.lan", "ungrouped"])
def test_detect_leaves_out_a_host_name_ansible_reads_as_a_group(hostname: str) -> None:
    """Item 1: detect wrote ``host_name: all``, which the workload then refused."""
    facts = host_name_facts(hostname)
    assert "host_name" not in facts and "omitted_host_name" in facts
    assert "not all or ungrouped" in facts["omitted_host_name"].how


NAMES = st.one_of(st.text(max_size=80), st.text(alphabet="aZl9.-_ \n\t\r#:'\"\u212a\u0130\x85\u2028{}&*!|>%@`", max_size=40))


@settings(max_examples=400, deadline=None)
@given(NAMES)
def test_detect_writes_only_a_host_name_the_workload_takes(name: str) -> None:
    """Any host name: the block parses, holds at most host_name, one the schema and the fixed-host check take."""
    text = fixed_block(host_name_facts(name))
    fixed = (YAML(typ="safe").load(text) or {})["hardware"]["fixed"] or {}
    assert set(fixed) <= {"host_name"}
    if "host_name" in fixed:
        assert _schema_pattern("host_name").match(fixed["host_name"]) and fixed["host_name"] not in ("all", "ungrouped")
    assert all(line.startswith(("#", "hardware:", "  fixed:", "    host_name:")) for line in text.splitlines())


HOSTILE_FIXED = [
    ("host_name", CPU_LINE, f'{CPU_LINE}\n    host_name: "g\\u00e9pu"'),
    ("host_name", CPU_LINE, f'{CPU_LINE}\n    host_name: "gpu\\x00box"'),
    ("host_name", CPU_LINE, f'{CPU_LINE}\n    host_name: "gpubox\\n"'),
    ("host_name", CPU_LINE, f"{CPU_LINE}\n    host_name: {'a' * 64}"),
    ("host_name", CPU_LINE, f"{CPU_LINE}\n    host_name: [a]"),
    ("host_name", CPU_LINE, f'{CPU_LINE}\n    host_name: ""'),
    ("address", CPU_LINE, f"{CPU_LINE}\n    address: 10.0.0.1"),
    ("address", CPU_LINE, f"{CPU_LINE}\n    host_name: g\n    address: 10.0.0.300"),
    ("address", CPU_LINE, f'{CPU_LINE}\n    host_name: g\n    address: "fe80:::1"'),
    ("address", CPU_LINE, f'{CPU_LINE}\n    host_name: g\n    address: "\\uff11\\uff10.0.0.1"'),
    ("address", CPU_LINE, f'{CPU_LINE}\n    host_name: g\n    address: "10.0.0.1\\n"'),
    ("address", CPU_LINE, f"{CPU_LINE}\n    host_name: g\n    address: {'.'.join(['a' * 63] * 4)}"),
    ("gpu_count", "gpu_count: 1", "gpu_count: 0"),
    ("gpu_count", "gpu_count: 1", "gpu_count: .nan"),
    ("gpu_count", "gpu_count: 1", "gpu_count: 1e308"),
    ("ram_gib", "ram_gib: 64", "ram_gib: .inf"),
    ("nvme_read_gb_per_s", "nvme_read_gb_per_s: 7.0", "nvme_read_gb_per_s: 0"),
    ("pcie_lanes", "pcie_gen: 4", "pcie_gen: 4\n    pcie_lanes: 3"),
    ("reserved_ram_gib", "reserved_ram_gib: 12", "reserved_ram_gib: 64"),
]


@pytest.mark.parametrize(("field", "old", "new"), HOSTILE_FIXED)
def test_hostile_fixed_fields_are_refused_at_their_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, old: str, new: str
) -> None:
    path = _fixed(tmp_path, old, new)
    code, _, err = specgen_in_process(capsys, "validate", str(path))
    assert code == 1 and "Traceback" not in err
    assert re.search(PLACED.format(file=re.escape(str(path)), field=rf"hardware\.fixed(\.{field})?"), err, re.M), err


def test_a_fixed_machine_with_no_gpu_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _fixed(tmp_path, "    gpu: rtx-4090-24gb\n    gpu_count: 1\n", "")
    code, _, err = specgen_in_process(capsys, "validate", str(path))
    assert code == 1 and "hardware.fixed: missing required field 'gpu'" in err and "Traceback" not in err


def _three_servers(batch: int) -> str:
    text = LAB.read_text(encoding="utf-8").replace("count: 4", "count: 3")
    text = text[: text.index("        - name: gpu04")] + text[text.index("provisioning:") :]
    return text.replace("global_batch_size: 256", f"global_batch_size: {batch}")


@pytest.mark.parametrize("batch", [1, 257, 7919])
def test_a_batch_of_one_or_a_prime_on_owned_servers_ends_in_a_placed_refusal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], batch: int
) -> None:
    """Three owned servers, a batch that splits over no count of their ranks: refused (exit 3) at the model's line."""
    path = tmp_path / "w.yaml"
    path.write_text(_three_servers(batch), encoding="utf-8")
    code, _, err = specgen_in_process(capsys, "plan", str(path))
    assert code == 3 and "Traceback" not in err
    assert re.search(PLACED.format(file=re.escape(str(path)), field=r"deployments\[0\]\.model"), err, re.M), err


def test_plans_in_one_process_do_not_leak_between_workloads() -> None:
    """A capacity plan, another workload's, then the first again: the same tree to the byte as the first time."""
    first = api.render_file(str(EXAMPLES / "capacity-400k.yaml"))
    api.render_file(str(LAB))
    assert api.render_file(str(EXAMPLES / "capacity-400k.yaml")) == first


def _outside_fences(head: str) -> bool:
    opened = ""
    for line in head.split("\n"):
        if opened:
            if _closes(line, opened):
                opened = ""
        elif fence := _fence(line):
            opened = fence[0]
    return not opened


LINES = st.one_of(
    st.sampled_from(["```", "````", "~~~", "~~~~", "``` py", "~~~ `x`", "``` a`b", "  ```", "\t~~~", "", " ", "| a |", "x"]),
    st.text(alphabet="`~ ab\t\r\u2028\x00", max_size=8),
)


@settings(max_examples=1500, deadline=None)
@given(st.lists(LINES, max_size=30), st.integers(min_value=-5, max_value=200), st.booleans())
def test_the_markdown_cut_ends_outside_a_fence_within_the_room(lines: list[str], room: int, newline: bool) -> None:
    text = "\n".join(lines) + ("\n" if newline else "")
    head, dropped = cut_markdown(text, room)
    if len(text) <= room:
        assert (head, dropped) == (text, 0)
        return
    assert len(head) <= max(room, 0) and text.startswith(head) and _outside_fences(head)
    assert head == "" or (head.endswith("\n") and head.strip())
    assert dropped == sum(1 for line in text[len(head) :].split("\n") if line.strip())


def test_a_huge_fenced_diff_is_cut_before_its_fence() -> None:
    """A fence opened near the head and never closed within the room: the head stops before it."""
    body = "intro\n\n```\n" + "x" * 80 + "\n" * 1 + ("y\n" * 200_000) + "```\nafter\n"
    head, dropped = cut_markdown(body, 65_000)
    assert head == "intro\n" and dropped == 200_004
