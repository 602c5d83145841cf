"""Top-level ``x-`` keys hold YAML anchors and are not read (newuser73 item 13).

The docker-compose convention, ``x-common: &common {...}`` merged with ``<<: *common`` into each deployment, was refused
as ``unknown field 'x-common'``, exit 1, while an anchor on a field that is read worked. The schema now allows top-level
``x-`` keys (``patternProperties``) and the loader drops them, so the file plans as its expanded twin does; an ``x-``
key anywhere else, and any other unknown key, is still refused at its line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.api import plan_file
from generator.errors import InputError, MultipleInputError

COMMON = "  precision: bf16\n  max_context_tokens: 8192\n  avg_input_tokens: 1000\n  avg_output_tokens: 200\n"
ANCHORED = (
    "version: 1\nname: anchored\nx-common: &common\n" + COMMON + "x-note: a reviewer's remark\n"
    "deployments:\n"
    "  - name: chat\n    model: meta-llama/Llama-3.1-8B-Instruct\n    inference:\n      <<: *common\n"
    "      requests_per_second: 5\n"
    "  - name: chat2\n    model: meta-llama/Llama-3.1-8B-Instruct\n    inference:\n      <<: *common\n"
    "      requests_per_second: 7\n"
    "hardware:\n  provider: baremetal\n  gpus: [l40s-48gb]\n"
)
EXPANDED = (
    "version: 1\nname: anchored\ndeployments:\n"
    "  - name: chat\n    model: meta-llama/Llama-3.1-8B-Instruct\n    inference:\n"
    + COMMON.replace("  ", "      ", 1).replace("\n  ", "\n      ")
    + "      requests_per_second: 5\n"
    "  - name: chat2\n    model: meta-llama/Llama-3.1-8B-Instruct\n    inference:\n"
    + COMMON.replace("  ", "      ", 1).replace("\n  ", "\n      ")
    + "      requests_per_second: 7\n"
    "hardware:\n  provider: baremetal\n  gpus: [l40s-48gb]\n"
)


def test_an_anchor_holder_plans_as_the_expanded_file(tmp_path: Path) -> None:
    anchored, expanded = tmp_path / "anchored.yaml", tmp_path / "expanded.yaml"
    anchored.write_text(ANCHORED)
    expanded.write_text(EXPANDED)
    assert plan_file(str(anchored))[1].to_dict() == plan_file(str(expanded))[1].to_dict()


@pytest.mark.parametrize(
    ("text", "line", "field"),
    [
        # an x- key below the top is a field of that mapping: unknown
        (ANCHORED.replace("    inference:\n      <<: *common\n      requests_per_second: 5\n",
                          "    x-mine: 1\n    inference:\n      <<: *common\n      requests_per_second: 5\n"), 12,
         "deployments[0].x-mine"),
        (ANCHORED.replace("x-note:", "note:"), 8, "note"),  # not an extension key
    ],
)  # fmt: skip
def test_other_unknown_keys_are_refused_at_their_line(tmp_path: Path, text: str, line: int, field: str) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(text)
    with pytest.raises((InputError, MultipleInputError)) as refused:
        plan_file(str(path))
    assert f"{path}:{line}:" in str(refused.value) and "unknown field" in str(refused.value)
    assert f"{field}: unknown field" in str(refused.value)
