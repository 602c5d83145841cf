"""A ``%YAML`` directive cannot change what a workload means (newuser75 item 2).

Under ``%YAML 1.1`` ruamel reads ``1:30`` as the base-60 number 90 and ``012`` as octal 10, where the same text
without the line is refused (editors and JSON Schema tools read YAML 1.2: the string "1:30", the number 12). Only
``%YAML 1.2`` is accepted; any other version is refused at the directive's line, never read by other rules.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.errors import InputError
from generator.workload.loader import parse_yaml
from tests.helpers import VALID, run_specgen

RATE = "requests_per_second: 2"


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        pytest.param(
            "%YAML 1.1\n---\n" + VALID.replace(RATE, "requests_per_second: 1:30"),
            "w.yaml:1:1: %YAML 1.1",
            "1:30 is read as the number 90",
            id="1.1-base-60",
        ),
        pytest.param(
            "%YAML 1.1\n---\n" + VALID.replace(RATE, "requests_per_second: 012"),
            "w.yaml:1:1: %YAML 1.1",
            "YAML 1.1's rules",
            id="1.1-octal",
        ),
        pytest.param("# head\n\n%YAML 1.1\n---\n" + VALID, "w.yaml:3:1: %YAML 1.1", "remove the line", id="1.1-after-comments"),
        pytest.param("%YAML 1.3\n---\n" + VALID, "w.yaml:1:1: %YAML 1.3", "specgen reads YAML 1.2, not 1.3", id="1.3"),
        pytest.param("%YAML 1.0\n---\n" + VALID, "w.yaml:1:1: %YAML 1.0", "specgen reads YAML 1.2, not 1.0", id="1.0"),
        pytest.param("%YAML 2.0\n---\n" + VALID, "w.yaml:1:1: %YAML 2.0", "specgen reads YAML 1.2, not 2.0", id="2.0"),
    ],
)
def test_a_yaml_directive_other_than_1_2_is_refused_at_its_line(text: str, where: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_yaml(text, "w.yaml")
    assert str(caught.value).startswith(where + ": ")
    assert message in str(caught.value)


def test_yaml_1_2_directive_reads_as_without_it() -> None:
    text = VALID.replace(RATE, "requests_per_second: 12")
    assert parse_yaml("%YAML 1.2\n---\n" + text, "w.yaml").data == parse_yaml(text, "w.yaml").data


def test_a_quoted_line_starting_with_a_percent_sign_is_not_a_directive() -> None:
    doc = parse_yaml('a: "x\n%YAML 1.1"\n', "w.yaml")
    assert doc.data == {"a": "x %YAML 1.1"}


def test_validate_refuses_a_yaml_1_1_workload_with_exit_1(tmp_path: Path) -> None:
    (tmp_path / "w.yaml").write_text("%YAML 1.1\n---\n" + VALID.replace(RATE, "requests_per_second: 1:30"))
    result = run_specgen("validate", "w.yaml", cwd=tmp_path)
    assert result.returncode == 1, result.stdout
    assert result.stderr.startswith("specgen: error: w.yaml:1:1: %YAML 1.1: ")
    assert "Traceback" not in result.stderr
